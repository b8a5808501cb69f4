/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DNS proxy's parts: dnsproxy.c serves clients (UDP, TCP, limits,
 * the public API); dnsproxy-upstream.c runs the upstream transactions
 * (UDP socket pool, TCP fallback, vetting, insertion, the rewritten reply).
 */
#ifndef CORDON_DNSPROXY_INTERNAL_H
#define CORDON_DNSPROXY_INTERNAL_H

#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "cordon/net.h"

#define DNS_UDP_MAX 4096 /* what we read from upstream over UDP (EDNS sizes) */
#define DNS_TCP_MAX 65535
#define CLIENT_UDP_MAX 512 /* without EDNS a client accepts 512 bytes */
#define MAX_TCP_CLIENTS 16
#define TCP_CLIENT_IDLE_MS 10000
/* Replies queued for one TCP client that does not read: past this it is closed. */
#define TCP_CLIENT_OUT_MAX (256 * 1024)
/*
 * Upstream queries over UDP share a few unconnected sockets per address
 * family instead of one socket per query (four syscalls less each): the
 * kernel gives each its own random port, and an answer must match the
 * transaction's random id, its upstream's address and its question.
 */
#define UDP_POOL 4
/*
 * A pool socket is connected to one upstream, so only that upstream can
 * answer on it; it is replaced (a new random port) after this many
 * queries, once nothing waits on it.
 */
#define UDP_REUSE 128
/*
 * Addresses known to be in the allow sets for a name, and until when: an
 * answer whose addresses all stay there for at least half of its TTL
 * goes out without asking the supervisor again (its address TTLs cut to
 * what is left). Open addressing, a few probes; when an entry's probes
 * find nothing free or ended the table doubles, up to ADMITTED_MAX
 * entries (4 MiB), and only there does the soonest to expire give way:
 * a fixed 512 slots, cycled through by a workload with more (name,
 * address) pairs than that, gave way on every answer, and every query
 * became an admit, a round trip to the supervisor and an nft insert.
 */
/* Upstream query ids fetched from the kernel at once (dnsproxy.c, random_id). */
#define RANDOM_IDS 64
#define ADMITTED_FIRST 512
#define ADMITTED_MAX (2 * (size_t)CORDON_NFT_SET_MAX)
#define ADMITTED_PROBES 8

enum tag_kind {
	TAG_UDP_LISTEN,
	TAG_TCP_LISTEN,
	TAG_TCP_CLIENT,
	TAG_UPSTREAM,	  /* a TCP upstream connection of one transaction */
	TAG_UPSTREAM_UDP, /* a shared UDP socket of the pool */
};

struct tag {
	enum tag_kind kind;
	void *obj;
};

struct tcp_client {
	struct tag tag;
	int fd;
	uint8_t in[2 + DNS_TCP_MAX];
	size_t in_len;
	uint8_t *out; /* length-prefixed replies not yet sent, in order */
	size_t out_len, out_off;
	uint64_t deadline_ms;
	unsigned pending; /* queries of this client in flight */
	bool closed;
	/*
	 * Closed for good: its fd is gone and it is off epoll and out of
	 * clients[], but the memory stays until cordon_dnsproxy_tick ends the
	 * loop iteration (an event of the same epoll_wait batch, or a caller
	 * up the stack, may still hold it). Every call that can close checks it.
	 */
	bool dead;
	struct tcp_client *next_dead;
};

struct udp_socket {
	struct tag tag;
	int fd;	   /* 0: none yet */
	size_t upstream; /* the upstream it is connected to */
	unsigned sent;	 /* queries sent on it */
};

/* A listening socket of the proxy's, UDP or TCP, and its address family. */
struct listener {
	struct tag tag;
	int fd;
	int family;
};

struct txn {
	struct tag tag;
	struct txn *next;	/* in p->txns while live, in p->dead_txns once freed */
	bool dead;		/* unlinked and done; the memory goes at the tick */
	int fd;			/* upstream TCP socket, or -1 */
	struct udp_socket *udp; /* the pool socket of a UDP attempt */
	bool tcp;
	size_t upstream; /* index into cfg.upstreams */
	unsigned attempts;
	uint64_t deadline_ms;
	/* the client */
	struct sockaddr_storage client;
	socklen_t client_len;
	struct tcp_client *tcp_client; /* NULL for UDP clients */
	uint16_t client_id;
	uint16_t upstream_id;
	uint8_t *query; /* as sized: a transaction is allocated per query */
	size_t query_len;
	/* TCP upstream I/O */
	uint8_t *buf;
	size_t buf_len, buf_off;
	bool sent;
	struct cordon_dns_question q;
	/*
	 * Waiting for the answer to its admit (cordon_dnsproxy_admitted):
	 * the upstream's answer is kept, its upstream socket is gone, and
	 * the deadline is the admit's.
	 */
	bool admitting;
	uint32_t admit_token;
	uint32_t admit_ttl_s; /* what was asked for */
	uint64_t admit_at_ms; /* when: the sets hold the addresses until at least this + TTL */
	uint8_t *answer;
	size_t answer_len;
};

struct cordon_dnsproxy {
	struct cordon_dnsproxy_config cfg; /* cfg.clients points at client_addrs[] */
	struct cordon_addr client_addrs[CORDON_DNSPROXY_MAX_CLIENTS];
	const struct cordon_cidr *cidrs;
	size_t n_cidrs;
	struct listener udp[CORDON_DNSPROXY_MAX_LISTENERS], tcp[CORDON_DNSPROXY_MAX_LISTENERS];
	size_t n_udp, n_tcp;
	int epfd;
	struct udp_socket pool[CORDON_DNSPROXY_MAX_UPSTREAMS][UDP_POOL];
	unsigned pool_next;
	struct txn *txns;
	unsigned inflight;
	uint32_t admit_next; /* the last admit token given out */
	struct admitted {
		struct cordon_addr addr;
		uint32_t name;	   /* the hash of the name it was admitted for */
		uint64_t until_ms; /* 0: a free slot */
	} *admitted;		   /* cap_admitted entries, a power of two */
	size_t cap_admitted;
	struct tcp_client *clients[MAX_TCP_CLIENTS];
	/* Closed objects whose memory is released at the end of the loop iteration. */
	struct tcp_client *dead_clients;
	struct txn *dead_txns;
	uint16_t random[RANDOM_IDS]; /* from getrandom; the first n_random not used yet */
	size_t n_random;
	double tokens;
	uint64_t tokens_at_ms;
	struct cordon_dnsproxy_stats stats;
	struct cordon_dns_msg *msg; /* scratch, large */
};

socklen_t dp_sockaddr_len(const struct sockaddr_storage *ss);
uint64_t dp_now_ms(void);
void dp_emit(struct cordon_dnsproxy *p, const struct cordon_dns_question *q, bool allowed,
	     const struct cordon_addr *added, size_t n_added, const struct cordon_addr *refused,
	     const enum cordon_vet *why, size_t n_refused, int rcode, const char *note);
void dp_reply(struct cordon_dnsproxy *p, const struct sockaddr_storage *to, socklen_t to_len,
	      struct tcp_client *tc, const uint8_t *buf, size_t len);
void dp_reply_error(struct cordon_dnsproxy *p, const uint8_t *query, size_t qlen,
		    const struct sockaddr_storage *to, socklen_t to_len, struct tcp_client *tc,
		    int rcode);
void dp_tcp_client_close(struct cordon_dnsproxy *p, struct tcp_client *c);

/* Upstream transactions (dnsproxy-upstream.c). */
int dp_txn_send(struct cordon_dnsproxy *p, struct txn *t);
void dp_txn_retry(struct cordon_dnsproxy *p, struct txn *t, const char *note);
void dp_txn_free(struct cordon_dnsproxy *p, struct txn *t);
void dp_pool_readable(struct cordon_dnsproxy *p, struct udp_socket *u);
void dp_upstream_readable(struct cordon_dnsproxy *p, struct txn *t, uint32_t events);
void dp_txn_admitted(struct cordon_dnsproxy *p, struct txn *t, int error,
		     const enum cordon_vet *verdicts, size_t n);
void dp_txn_fail(struct cordon_dnsproxy *p, struct txn *t, const char *note);

/*
 * The proxy process's loop (dnsproxy-ctl.c) in the pieces that
 * cordon_dnsproxy_serve strings together, so that the stream fuzzer
 * (tests/fuzz/fuzz-dnsproxy.c) drives the very same code one epoll batch
 * at a time. s is the admit and event callbacks' opaque and ctl's epoll
 * tag: it stays where it is until dp_serve_stop.
 */
struct dp_serve {
	struct cordon_dnsproxy *p;
	struct cordon_allowlist *allowlist; /* the last POLICY's, ours to free */
	int ctl;
	int epfd;	/* the proxy's fds and ctl */
	int sockets;	/* the channel upstream sockets come by, or -1 */
	int sockets_ep; /* an epoll of sockets alone: one answer is waited for */
	/* EVENTs not sent yet: CORDON_DNSCTL_EVENTS_MAX of room, sent together (serve_flush). */
	struct cordon_dnsctl_msg *events;
	size_t n_events;
};

/* A proxy on the listeners whose admits and events go to ctl; 0, or -1 (err set). */
int dp_serve_start(struct dp_serve *s, const struct cordon_dnsproxy_config *cfg, const int *udp_fds,
		   size_t n_udp, const int *tcp_fds, size_t n_tcp, int ctl,
		   struct cordon_error *err);
/*
 * One epoll_wait batch handled in order, then the tick: 0 to go on, 1
 * once the supervisor hung up ctl, -1 on an error reading it.
 */
int dp_serve_dispatch(struct dp_serve *s, const struct epoll_event *evs, int n);
/* Upstream sockets asked for over sockets from now on; 0, or -1 (err set). */
int dp_serve_sockets(struct dp_serve *s, int sockets, struct cordon_error *err);
/* Frees the proxy and closes the epoll fds; ctl and sockets stay the caller's. */
void dp_serve_stop(struct dp_serve *s);

#endif
