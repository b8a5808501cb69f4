/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net: cordon's network containment engine (docs/network.md).
 *
 *   allowlist  IPs, CIDRs, exact hostnames and single-label wildcards,
 *              normalised and validated before anything is created;
 *              hostnames matched through a trie on reversed labels
 *   addr       the vetting table: which addresses DNS may attest
 *   dns        a bounded DNS wire-format parser and editor
 *   dnsproxy   the per-sandbox DNS proxy (one epoll loop, UDP and TCP)
 *   nft        the gateway's nftables ruleset, built with libnftnl and
 *              committed as one batch through libmnl
 */
#ifndef CORDON_NET_H
#define CORDON_NET_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon/core.h"

/* ---------------------------------------------------------------------- */
/* Addresses                                                               */
/* ---------------------------------------------------------------------- */

struct cordon_addr {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
		uint8_t bytes[16];
	} u;
};

struct cordon_cidr {
	struct cordon_addr addr; /* network address (host bits zero) */
	unsigned prefix;         /* 0-32 or 0-128 */
};

/* Parse "a.b.c.d", "::1", "10.0.0.0/8", "fd00::/8". 0 or -EINVAL. */
int cordon_addr_parse(const char *s, struct cordon_addr *out);
int cordon_cidr_parse(const char *s, struct cordon_cidr *out, bool *host_bits_set);
bool cordon_cidr_contains(const struct cordon_cidr *c, const struct cordon_addr *a);
/* inner lies inside outer, or equals it. */
bool cordon_cidr_within(const struct cordon_cidr *inner, const struct cordon_cidr *outer);
/*
 * r without hole (hole strictly inside r): the disjoint CIDRs that cover
 * the rest of r, one per prefix length between them (at most 128).
 */
size_t cordon_cidr_split_around(const struct cordon_cidr *r, const struct cordon_cidr *hole,
				struct cordon_cidr out[128]);
/* Text form; buf of INET6_ADDRSTRLEN + 4 (for "/NNN") is enough. */
void cordon_addr_format(const struct cordon_addr *a, char *buf, size_t len);
void cordon_cidr_format(const struct cordon_cidr *c, char *buf, size_t len);

/* Why the vetting table refuses an address (CORDON_VET_OK when it does not). */
enum cordon_vet {
	CORDON_VET_OK = 0,
	CORDON_VET_UNSPECIFIED,
	CORDON_VET_LOOPBACK,
	CORDON_VET_LINK_LOCAL,
	CORDON_VET_METADATA,
	CORDON_VET_PRIVATE,   /* RFC 1918, ULA fc00::/7 */
	CORDON_VET_CGNAT,     /* 100.64.0.0/10 */
	CORDON_VET_MULTICAST,
	CORDON_VET_BROADCAST,
	CORDON_VET_THIS_NETWORK, /* 0.0.0.0/8 */
	CORDON_VET_RESERVED,     /* 240.0.0.0/4 */
	CORDON_VET_BENCHMARK,    /* 198.18.0.0/15 */
	CORDON_VET_DOCUMENTATION,
	CORDON_VET_EMBEDDED,     /* IPv4-mapped/compatible, NAT64, 6to4 of a refused IPv4 */
	/*
	 * Refused by the supervisor when it re-vets an admit of the DNS
	 * proxy's: an address the gateway blocks (the host's own, its
	 * gateways, the uplink), or any address for a name the allowlist
	 * does not match.
	 */
	CORDON_VET_BLOCKED,
	CORDON_VET_NAME,
	CORDON_VET_COUNT,
};

/* Stable short name for audit rows ("loopback", "metadata", ...). */
const char *cordon_vet_name(enum cordon_vet v);

/*
 * The one decision: may an address attested by DNS enter the allow sets?
 * Refused unless a CIDR entry of the allowlist covers it explicitly
 * (allowed may be NULL). A test-only override (see docs/network.md) can
 * turn one range "public" for the private test lab.
 */
enum cordon_vet cordon_addr_vet(const struct cordon_addr *a, const struct cordon_cidr *allowed,
				size_t n_allowed);

/*
 * The IPv4 addresses an IPv6 address carries in the forms the table
 * knows (mapped, compatible, SIIT, both NAT64 prefixes, 6to4, Teredo's
 * server and its inverted client): into out, how many (none for IPv4).
 */
size_t cordon_addr_embedded4(const struct cordon_addr *a, struct cordon_addr out[8]);

/* The table itself: every refused range, sorted and disjoint. */
size_t cordon_vet_table(int family, const struct cordon_cidr **ranges);
/*
 * The same without the embedded IPv4 forms: what the gateway's blocked
 * sets hold. The gateway checks each embedded form of an IPv6
 * destination against blocked4 by rule instead, so every form of every
 * blocked IPv4 address (the host's own among them) is blocked.
 */
size_t cordon_vet_table_native(int family, const struct cordon_cidr **ranges);
/* The cloud metadata entries of the table (both families). */
size_t cordon_vet_metadata(const struct cordon_cidr **out);

/* ---------------------------------------------------------------------- */
/* Allowlist                                                               */
/* ---------------------------------------------------------------------- */

enum cordon_allow_kind {
	CORDON_ALLOW_ADDR,     /* a single address (stored as a /32 or /128 CIDR) */
	CORDON_ALLOW_CIDR,
	CORDON_ALLOW_HOST,     /* exact hostname */
	CORDON_ALLOW_WILDCARD, /* "*.example.org": one label below example.org */
};

struct cordon_allow_entry {
	enum cordon_allow_kind kind;
	char *text;              /* normalised form */
	struct cordon_cidr cidr; /* ADDR and CIDR */
};

struct cordon_allowlist; /* opaque: entries plus the hostname trie */

struct cordon_allowlist *cordon_allowlist_new(void);
void cordon_allowlist_free(struct cordon_allowlist *al);

/*
 * Add one --net-allow value (comma-separated entries allowed). Every entry
 * is validated; an error names the entry. allow_any permits 0.0.0.0/0 and
 * ::/0 (--net-allow-any).
 */
int cordon_allowlist_add(struct cordon_allowlist *al, const char *value, bool allow_any,
			 struct cordon_error *err);
/* One entry per line, '#' comments, blank lines ignored. */
int cordon_allowlist_add_file(struct cordon_allowlist *al, const char *path, bool allow_any,
			      struct cordon_error *err);

/*
 * A live update's list: a copy of al with edits applied, one a line:
 * "+VALUE" adds what --net-allow VALUE would, "-VALUE" removes entries
 * (in any spelling that normalises to one al holds; one it does not hold
 * is an error). Everything is checked before the copy is made; an error
 * names the line or the entry. The result may be empty.
 */
struct cordon_allowlist *cordon_allowlist_edit(const struct cordon_allowlist *al, const char *edits,
					       size_t len, bool allow_any, struct cordon_error *err);
/* Hostname match (case-insensitive, trailing dot ignored). O(labels). */
bool cordon_allowlist_match_name(const struct cordon_allowlist *al, const char *name);
/* Address listed literally or inside a listed CIDR. */
bool cordon_allowlist_match_addr(const struct cordon_allowlist *al, const struct cordon_addr *a);

size_t cordon_allowlist_count(const struct cordon_allowlist *al);
const struct cordon_allow_entry *cordon_allowlist_entry(const struct cordon_allowlist *al, size_t i);
/* CIDR and address entries, for cordon_addr_vet's explicit cover and the nft static sets. */
size_t cordon_allowlist_cidrs(const struct cordon_allowlist *al, const struct cordon_cidr **out);
/* SHA-256 hex over the normalised, sorted, deduplicated entries, '\n'-joined. */
void cordon_allowlist_fingerprint(const struct cordon_allowlist *al, char out[65]);

/* ---------------------------------------------------------------------- */
/* DNS wire format                                                         */
/* ---------------------------------------------------------------------- */

#define CORDON_DNS_NAME_MAX 255 /* presentation form incl. NUL, without trailing dot */
#define CORDON_DNS_MAX_RECORDS 256

#define CORDON_DNS_CLASS_IN 1

enum {
	CORDON_DNS_TYPE_A = 1,
	CORDON_DNS_TYPE_CNAME = 5,
	CORDON_DNS_TYPE_AAAA = 28,
	CORDON_DNS_TYPE_OPT = 41,
	CORDON_DNS_TYPE_SVCB = 64,
	CORDON_DNS_TYPE_HTTPS = 65,
};

enum {
	CORDON_DNS_RCODE_NOERROR = 0,
	CORDON_DNS_RCODE_FORMERR = 1,
	CORDON_DNS_RCODE_SERVFAIL = 2,
	CORDON_DNS_RCODE_NXDOMAIN = 3,
	CORDON_DNS_RCODE_NOTIMP = 4,
	CORDON_DNS_RCODE_REFUSED = 5,
};

struct cordon_dns_question {
	char name[CORDON_DNS_NAME_MAX]; /* lower case, no trailing dot */
	uint16_t qtype;
	uint16_t qclass;
};

/* One resource record of a parsed message (answer, authority or additional). */
struct cordon_dns_rr {
	char name[CORDON_DNS_NAME_MAX];
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;
	uint16_t section;   /* 1 answer, 2 authority, 3 additional */
	size_t offset;      /* of the record in the message */
	size_t length;      /* of the whole record */
	size_t rdata_offset;
	uint16_t rdlength;
	char target[CORDON_DNS_NAME_MAX]; /* CNAME target, decompressed */
	struct cordon_addr addr;          /* A / AAAA */
};

struct cordon_dns_msg {
	uint16_t id;
	uint16_t flags;
	uint16_t qdcount, ancount, nscount, arcount;
	struct cordon_dns_question question; /* the first (and only accepted) one */
	struct cordon_dns_rr rr[CORDON_DNS_MAX_RECORDS];
	size_t n_rr;
};

/*
 * Parse a whole message. Bounded: every length checked, compression
 * pointers must point backwards and are followed at most 32 times per
 * name, names at most 255 bytes, no recursion. -EINVAL / -EMSGSIZE.
 */
int cordon_dns_parse(const uint8_t *buf, size_t len, struct cordon_dns_msg *msg);
/* Only the header and the first question (for queries). */
int cordon_dns_parse_question(const uint8_t *buf, size_t len, struct cordon_dns_msg *msg);

/*
 * The query cordon sends upstream for a client's query, made of its parsed
 * question only: id, the RD bit of the client's flags and nothing else of
 * them, one question (the name as parsed: lower case, uncompressed; its
 * type and class), and when the client sent an OPT record, an OPT of
 * cordon's own (UDP payload 1232, version 0, no flags, no options).
 * Nothing else the client wrote is carried: no other records, options or
 * trailing bytes. Returns the length (at most CORDON_DNS_QUERY_MAX) or
 * -errno (-EINVAL: no single question to rebuild from).
 */
#define CORDON_DNS_QUERY_MAX (12 + 255 + 4 + 11)
ssize_t cordon_dns_rebuild_query(const uint8_t *query, size_t qlen, uint16_t id, uint8_t *out,
				 size_t cap);

/* A reply with rcode that echoes the query's id and question. Returns length or -errno. */
ssize_t cordon_dns_build_error(const uint8_t *query, size_t qlen, int rcode, uint8_t *out,
			       size_t cap);

/*
 * The A/AAAA records whose owner is the question name or a name on its
 * CNAME chain (followed from the question name, at most 16 links, loops
 * refused). Fills idx with indexes into msg->rr. Returns the count.
 */
size_t cordon_dns_chain_addrs(const struct cordon_dns_msg *msg, size_t *idx, size_t cap);

/*
 * Rewrite a reply in place: keep only the records for which keep[i] is
 * true (indexes into msg->rr; records not listed in msg->rr such as OPT
 * are kept), drop HTTPS and SVCB records whole, and fix the counts.
 * Returns the new length or -errno.
 */
ssize_t cordon_dns_filter(uint8_t *buf, size_t len, const struct cordon_dns_msg *msg,
			  const bool *keep);

/* Set or clear the TC bit. */
void cordon_dns_set_tc(uint8_t *buf, size_t len, bool tc);

/* ---------------------------------------------------------------------- */
/* The netlink libraries, loaded only when a sandbox has a network         */
/* ---------------------------------------------------------------------- */

/*
 * cordon is not linked against libmnl, libnftnl, libnl-3 and
 * libnl-route-3: a start without --net-allow uses none of them and does
 * not pay for loading them (docs/benchmarks.md). cordon_netlib_load
 * dlopens the group(s) LIBS names, each library by its absolute path in
 * the system's library directory, fixed at build time (never a path the
 * environment or the caller chooses), and fills the tables the network
 * engine calls through (src/net/netlib.h). Idempotent; call it in the
 * host's mount namespace before any nft, link or gateway function, and
 * before cloning the processes that use them (they inherit the
 * mappings: a process inside a sandbox's root must never load them). A
 * missing or unusable library: CORDON_E_NET_POLICY naming it.
 */
#define CORDON_NETLIB_NFT 0x1u  /* libmnl, libnftnl: rulesets, conntrack cut */
#define CORDON_NETLIB_LINK 0x2u /* libnl-3, libnl-route-3: links, addresses, routes */
#define CORDON_NETLIB_ALL (CORDON_NETLIB_NFT | CORDON_NETLIB_LINK)

int cordon_netlib_load(unsigned libs, struct cordon_error *err);

/* ---------------------------------------------------------------------- */
/* nftables ruleset of a gateway namespace                                 */
/* ---------------------------------------------------------------------- */

#define CORDON_NFT_TABLE "cordon"
#define CORDON_NFT_SET_MAX 65536
/* The workload's flows tracked at once: --net-max-flows, its default and bounds. */
#define CORDON_NET_FLOWS_DEFAULT 16384
#define CORDON_NET_FLOWS_MIN 16
#define CORDON_NET_FLOWS_MAX 1048576

struct cordon_nft; /* a netfilter netlink socket plus batch state */

/* Upstream resolvers the gateway's own DNS may go to, at most. */
#define CORDON_NFT_DNS_UPSTREAMS_MAX 16

struct cordon_nft_config {
	const char *workload_if;       /* the gateway's interface towards the workload */
	const char *uplink_if;         /* towards the outside, or NULL */
	struct cordon_addr proxy4;     /* the DNS proxy's address on the workload link */
	struct cordon_addr proxy6;     /* family 0 when absent */
	/*
	 * The workload's own addresses on its link (family 0 when absent):
	 * the only sources the proxy's port 53 takes, and the only
	 * destinations of what the gateway itself sends on that link.
	 */
	struct cordon_addr workload4;
	struct cordon_addr workload6;
	/*
	 * The only destinations of what the gateway itself sends through the
	 * uplink: DNS (UDP and TCP to each one's port) to these resolvers.
	 */
	const struct sockaddr_storage *dns_upstreams;
	size_t n_dns_upstreams;
	bool masquerade;               /* postrouting masquerade on the uplink */
	const struct cordon_cidr *static_allow; /* CIDR and literal entries */
	size_t n_static;
	const struct cordon_cidr *blocked;      /* vetting table + uplink and host addresses */
	size_t n_blocked;
	uint32_t set_size;             /* max elements of allow4/allow6 */
	bool dns_closed;               /* --dns none: no port 53 */
	/* Flows from the workload conntrack may track at once (1..CORDON_NET_FLOWS_MAX). */
	uint32_t max_flows;
};

struct cordon_nft_counters {
	uint64_t dropped_packets;
	uint64_t dropped_bytes;
};

/* Destinations the workload's drops are counted by, at most (sets dropped4, dropped6). */
#define CORDON_NFT_DROPPED_MAX 1024

struct cordon_nft_drop {
	struct cordon_addr addr;
	uint64_t packets, bytes;
};

/* Open a netfilter socket in the current network namespace. */
struct cordon_nft *cordon_nft_open(struct cordon_error *err);
/*
 * Adopt a bound netfilter socket opened elsewhere (by the sandbox init, in
 * the gateway namespace): the socket keeps its namespace. Takes fd.
 */
struct cordon_nft *cordon_nft_open_fd(int fd, struct cordon_error *err);
/* The socket's fd (still owned by nft), e.g. to pass it on. */
int cordon_nft_fd(const struct cordon_nft *nft);
void cordon_nft_close(struct cordon_nft *nft);

/* Create table inet cordon with its sets and chains, in one atomic batch. */
int cordon_nft_create(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
		      struct cordon_error *err);
/* Add addresses to allow4/allow6 with a timeout (ms), one batch for all of them. */
int cordon_nft_allow(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
		     uint32_t timeout_ms, struct cordon_error *err);
/*
 * Add addresses to blocked4/blocked6, each as a range of its own, one
 * batch for all of them (an address the host gained while the sandbox
 * runs). The caller leaves out addresses a blocked range already covers:
 * the kernel refuses an overlapping range.
 */
int cordon_nft_block(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
		     struct cordon_error *err);
/*
 * A live update of the policy: static4/6, blocked4/6 and allow4/6
 * emptied and filled anew in one transaction, so that no packet meets a
 * mix of the two policies. allow[i] stays for allow_ms[i] more (what the
 * DNS answer that admitted it still promises; unique addresses).
 */
struct cordon_nft_policy {
	const struct cordon_cidr *statics; /* CIDR and literal entries */
	size_t n_static;
	const struct cordon_cidr *blocked;
	size_t n_blocked;
	const struct cordon_addr *allow;
	const uint32_t *allow_ms;
	size_t n_allow;
};
int cordon_nft_replace_policy(struct cordon_nft *nft, const struct cordon_nft_policy *p,
			      struct cordon_error *err);
/*
 * The flows conntrack tracks in the socket's namespace that keep (by
 * their original source and destination) refuses are deleted: their
 * next packet is a new flow, which the ruleset judges. *cut counts them.
 */
int cordon_nft_ct_cut(struct cordon_nft *nft,
		      bool (*keep)(const struct cordon_addr *src, const struct cordon_addr *dst,
				   void *opaque),
		      void *opaque, size_t *cut, struct cordon_error *err);
int cordon_nft_read_counters(struct cordon_nft *nft, struct cordon_nft_counters *out,
			     struct cordon_error *err);
/*
 * The workload's dropped packets by destination (blocked, and not
 * allowed), both families, most packets first (malloc'd, *n of them; at
 * most CORDON_NFT_DROPPED_MAX addresses are told apart, the total is
 * cordon_nft_read_counters's).
 */
int cordon_nft_read_drops(struct cordon_nft *nft, struct cordon_nft_drop **out, size_t *n,
			  struct cordon_error *err);
/*
 * Elements currently in a set (allow4, allow6, static4, ...), for tests and reports,
 * sorted; of an interval set, the first address of each range. *n is the count,
 * of which at most cap were written.
 */
int cordon_nft_list_set(struct cordon_nft *nft, const char *set, struct cordon_addr *out,
			size_t cap, size_t *n, struct cordon_error *err);
/* The same as CIDRs: a merged range comes back as the fewest CIDRs covering it. */
int cordon_nft_list_ranges(struct cordon_nft *nft, const char *set, struct cordon_cidr *out,
			   size_t cap, size_t *n, struct cordon_error *err);
int cordon_nft_delete(struct cordon_nft *nft, struct cordon_error *err);

/*
 * The host's side of every rootful uplink (nft-host.c; cordon-nethelper
 * runs these with CAP_NET_ADMIN on the host). The lock between
 * concurrent helpers: a table owned by this socket (NFT_TABLE_F_OWNER),
 * so the kernel drops it however the process exits; waits up to
 * timeout_ms for another holder. Then the static table inet
 * cordon-host, made unless it exists in this version (an older one is
 * replaced in one batch; *created says whether it was written).
 */
int cordon_nft_host_lock(struct cordon_nft *nft, unsigned timeout_ms, struct cordon_error *err);
int cordon_nft_host_install(struct cordon_nft *nft, bool *created, struct cordon_error *err);

/* ---------------------------------------------------------------------- */
/* Links (libnl-route-3), in the calling thread's network namespace        */
/* ---------------------------------------------------------------------- */

struct cordon_link;

struct cordon_link *cordon_link_open(struct cordon_error *err);
void cordon_link_close(struct cordon_link *l);
/* A veth pair; the peer goes into peer_netns_fd (-1: stays here); group 0: none. */
int cordon_link_veth(struct cordon_link *l, const char *name, const char *peer_name,
		     int peer_netns_fd, uint32_t group, struct cordon_error *err);
/* The same, the peer born in the network namespace of peer_pid (a pid of our pid namespace). */
int cordon_link_veth_to_pid(struct cordon_link *l, const char *name, const char *peer_name,
			    pid_t peer_pid, struct cordon_error *err);
int cordon_link_up(struct cordon_link *l, const char *name, struct cordon_error *err);
int cordon_link_addr(struct cordon_link *l, const char *name, const struct cordon_addr *a,
		     unsigned prefix, struct cordon_error *err);
int cordon_link_default_route(struct cordon_link *l, const char *name, const struct cordon_addr *gw,
			      struct cordon_error *err);

/* ---------------------------------------------------------------------- */
/* DNS proxy                                                               */
/* ---------------------------------------------------------------------- */

#define CORDON_DNS_TTL_FLOOR_S 30
#define CORDON_DNS_TTL_CEILING_S 3600

struct cordon_dnsproxy;

/* One decision, for the audit layer. */
struct cordon_dns_event {
	const char *name;
	uint16_t qtype;
	bool allowed;
	const struct cordon_addr *added;   /* inserted into the allow sets */
	size_t n_added;
	const struct cordon_addr *refused; /* dropped from the reply by vetting */
	const enum cordon_vet *refused_why;
	size_t n_refused;
	int rcode; /* what the client got */
	const char *note; /* "rate limited", "upstream timeout", ... or NULL */
};

/* Client addresses a proxy answers, at most. */
#define CORDON_DNSPROXY_MAX_CLIENTS 4

/*
 * A request to let addresses into the allow sets, made when an answer
 * carries vetted addresses: the answer waits until the request is
 * answered through cordon_dnsproxy_admitted (which may happen inside the
 * admit callback itself), so that the first connect finds them.
 */
struct cordon_dns_admit {
	uint32_t token; /* to give back to cordon_dnsproxy_admitted */
	const char *name;
	uint16_t qtype;
	const struct cordon_addr *addrs;
	size_t n;
	uint32_t ttl_s; /* the lowest record TTL, clamped to the proxy's floor and ceiling */
};

#define CORDON_DNS_ADMIT_MAX 16 /* addresses in one admit, the cap of max_addrs_per_reply */

struct cordon_dnsproxy_config {
	const struct cordon_allowlist *allowlist;
	const struct sockaddr_storage *upstreams;
	size_t n_upstreams;
	/*
	 * The only sources answered (the workload's addresses, copied): a
	 * UDP query from any other address, IPv4-mapped forms included, is
	 * dropped unanswered, a TCP connection from one closed unread.
	 */
	const struct cordon_addr *clients;
	size_t n_clients;
	uint32_t upstream_timeout_ms;  /* per attempt */
	uint32_t admit_timeout_ms;     /* an admit not answered by then: SERVFAIL */
	uint32_t ttl_floor_s, ttl_ceiling_s;
	uint32_t max_inflight;
	uint32_t qps;                  /* token bucket rate; burst = qps */
	uint32_t max_addrs_per_reply;  /* at most CORDON_DNS_ADMIT_MAX */
	/*
	 * Ask for req's addresses to be admitted: 0 when asked (the answer
	 * comes through cordon_dnsproxy_admitted), or -errno at once (the
	 * client then gets SERVFAIL).
	 */
	int (*admit)(void *opaque, const struct cordon_dns_admit *req);
	/*
	 * A socket to upstreams[upstream], non-blocking and close-on-exec:
	 * type SOCK_DGRAM connected to it, or SOCK_STREAM with its connect
	 * begun. An fd, or -errno. The proxy's process gets them from the
	 * supervisor, which makes them in its own network namespace (the
	 * proxy itself may make no socket); NULL: the proxy makes them.
	 */
	int (*upstream_socket)(void *opaque, size_t upstream, int type);
	void (*event)(void *opaque, const struct cordon_dns_event *ev);
	void *opaque;
};

struct cordon_dnsproxy_stats {
	uint64_t queries, allowed, denied, forwarded, servfail, tcp_retries;
	uint64_t rate_limited, inflight_limited, addr_cap_hits, set_full;
	uint64_t addrs_inserted, addrs_refused;
	uint64_t foreign; /* datagrams and connections not from a client address, dropped */
};

/* Listening sockets of one kind (UDP, TCP) a proxy serves, at most. */
#define CORDON_DNSPROXY_MAX_LISTENERS 4
#define CORDON_DNSPROXY_MAX_UPSTREAMS 8

/*
 * A proxy serving the given sockets: n_udp UDP and n_tcp listening TCP
 * sockets, each already bound, non-blocking, and at most one UDP socket
 * per address family (a reply leaves through the UDP socket of the
 * client's family). It takes ownership of every fd, also when it fails.
 * Its fds are driven by the caller's epoll loop through
 * cordon_dnsproxy_attach / cordon_dnsproxy_handle, so the supervisor runs
 * it in its own single loop.
 */
struct cordon_dnsproxy *cordon_dnsproxy_new(const struct cordon_dnsproxy_config *cfg,
					    const int *udp_fds, size_t n_udp, const int *tcp_fds,
					    size_t n_tcp, struct cordon_error *err);
void cordon_dnsproxy_free(struct cordon_dnsproxy *p);
/* Register every fd the proxy wants watched into epfd (data.ptr = p's own tags). */
int cordon_dnsproxy_attach(struct cordon_dnsproxy *p, int epfd, struct cordon_error *err);
/* Handle one epoll event whose data.ptr the proxy registered; returns 1 if it was ours. */
int cordon_dnsproxy_handle(struct cordon_dnsproxy *p, void *tag, uint32_t events);
/* Milliseconds until the proxy's next deadline (-1 none). */
int cordon_dnsproxy_timeout_ms(const struct cordon_dnsproxy *p);
/*
 * Run the deadlines and release what was closed: call once at the end of
 * every loop iteration, after the whole epoll_wait batch was handled (an
 * object closed by one event stays allocated until then, so a later event
 * of the batch naming it is simply not ours).
 */
void cordon_dnsproxy_tick(struct cordon_dnsproxy *p);
void cordon_dnsproxy_stats(const struct cordon_dnsproxy *p, struct cordon_dnsproxy_stats *out);
/*
 * The answer to admit request token: error 0 and a verdict per address
 * of the request (CORDON_VET_OK: in the allow sets now; anything else:
 * refused, and removed from the reply), or error -errno (nothing was
 * admitted; the client gets SERVFAIL; -ENOSPC, -E2BIG and -ENFILE, what
 * the kernel answers for a full set, count as "set full"). A token that
 * no transaction waits for any more is ignored.
 */
void cordon_dnsproxy_admitted(struct cordon_dnsproxy *p, uint32_t token, int error,
			      const enum cordon_vet *verdicts, size_t n);
/*
 * A new allowlist (a live update; al must outlive its use): names are
 * judged by it from the next query on, and the proxy forgets what it
 * knew of the allow sets, whose addresses the supervisor has re-vetted,
 * so that every answer's addresses are asked for again.
 */
void cordon_dnsproxy_set_allowlist(struct cordon_dnsproxy *p, const struct cordon_allowlist *al);

/* ---------------------------------------------------------------------- */
/* The DNS proxy's channel to the supervisor                               */
/* ---------------------------------------------------------------------- */

/*
 * The proxy parses the workload's bytes, so it runs as a process of its
 * own without privilege (docs/security.md, "The trusted computing
 * base"); what it may not do itself it asks the supervisor for, over a
 * SOCK_SEQPACKET socketpair, fixed-size messages, one per datagram but
 * for EVENTs (below):
 *
 *   READY     proxy → supervisor  serving
 *   ADMIT     proxy → supervisor  name, qtype, addresses, TTL, token: let
 *                                 them into the allow sets
 *   ADMITTED  supervisor → proxy  token, error or a verdict per address
 *   EVENT     proxy → supervisor  a decision (name, allowed, refused
 *                                 addresses), for the run's report
 *   STATS     supervisor → proxy  asks; proxy → supervisor: its counters
 *   FAILED    proxy → supervisor  it could not start (the reason in name)
 *   SOCKET    proxy → supervisor  a socket to upstream `token` of type
 *                                 `qtype` (SOCK_DGRAM or SOCK_STREAM);
 *                                 the answer, on the same channel of its
 *                                 own, carries it (SCM_RIGHTS) or `error`
 *   POLICY    supervisor → proxy  a live update: the new allowlist, one
 *                                 entry a line, in a sealed memfd
 *                                 (SCM_RIGHTS) of `token` bytes; proxy →
 *                                 supervisor: applied (`error` 0) or not
 *
 * EVENTs are for the report only, one per answered query: the proxy
 * gathers them and sends up to CORDON_DNSCTL_EVENTS_MAX in one datagram,
 * back to back, at the end of each turn of its loop, and before any
 * other message it sends (an ADMIT never overtakes the EVENT of an
 * earlier answer). One datagram per query was a wakeup and two system
 * calls of the supervisor's for each (8 to 13 us of its CPU a query).
 *
 * SOCKET has a channel of its own: the proxy waits for its answer (a
 * socket is asked for rarely: its pool's, a TCP retry), while ADMITs are
 * answered in any order. The supervisor makes every upstream socket in
 * its own network namespace, never G: nothing the workload sends into G
 * can reach one, and the proxy, which may make no socket at all, can
 * talk only to the configured upstreams.
 *
 * The supervisor trusts none of it: every message is checked field by
 * field (cordon_dnsctl_check) and every address re-vetted
 * (cordon_dnsctl_vet_admit) before it enters a set.
 */
enum cordon_dnsctl_type {
	CORDON_DNSCTL_READY = 1,
	CORDON_DNSCTL_ADMIT,
	CORDON_DNSCTL_ADMITTED,
	CORDON_DNSCTL_EVENT,
	CORDON_DNSCTL_STATS,
	CORDON_DNSCTL_FAILED,
	CORDON_DNSCTL_SOCKET,
	CORDON_DNSCTL_POLICY,
};

/* The most EVENTs in one datagram (any other message goes alone). */
#define CORDON_DNSCTL_EVENTS_MAX 8

/* The largest allowlist text a POLICY carries. */
#define CORDON_DNSCTL_POLICY_MAX (16u << 20)

struct cordon_dnsctl_addr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t why;    /* enum cordon_vet: ADMITTED's verdict, EVENT's reason */
	uint8_t bytes[16];
};

struct cordon_dnsctl_msg {
	uint32_t type;
	uint32_t token; /* ADMIT, ADMITTED; SOCKET: the upstream; POLICY: the text's length */
	uint32_t ttl_s; /* ADMIT */
	int32_t error;  /* ADMITTED, SOCKET, POLICY's answer: 0 or -errno */
	uint16_t qtype; /* ADMIT, EVENT */
	uint8_t allowed; /* EVENT: the name is on the allowlist */
	uint8_t rcode;	 /* EVENT: what the client got */
	uint8_t n_addrs; /* ADMIT: to admit; ADMITTED: verdicts; EVENT: admitted */
	uint8_t n_refused; /* EVENT: refused by the proxy's vetting */
	uint8_t pad[2];
	char name[256]; /* ADMIT, EVENT: the question's name; FAILED: the reason */
	struct cordon_dnsctl_addr addrs[CORDON_DNS_ADMIT_MAX];
	struct cordon_dnsctl_addr refused[CORDON_DNS_ADMIT_MAX];
	struct cordon_dnsproxy_stats stats; /* STATS, from the proxy */
};

/*
 * A message from the proxy, before anything reads it: exactly one
 * message long, a type the proxy may send, counts in bounds, every
 * address of a known family with a known reason, every byte past a
 * count or a family's length zero, every field the type does not carry
 * zero, the name NUL-terminated and made of printable characters (a
 * FAILED reason may hold spaces). 0, or -1 with *why naming the
 * violation.
 */
int cordon_dnsctl_check(const void *buf, size_t len, const char **why);
/*
 * A datagram from the proxy, as it came (len: its whole length, as
 * MSG_TRUNC reports it): one message of any type the proxy may send, or
 * 2 to CORDON_DNSCTL_EVENTS_MAX EVENTs back to back, each passing
 * cordon_dnsctl_check. How many messages, or -1 with *why naming the
 * violation. buf is aligned as a struct cordon_dnsctl_msg.
 */
int cordon_dnsctl_check_datagram(const void *buf, size_t len, const char **why);
void cordon_dnsctl_addr_get(const struct cordon_dnsctl_addr *in, struct cordon_addr *out);
void cordon_dnsctl_addr_put(const struct cordon_addr *in, enum cordon_vet why,
			    struct cordon_dnsctl_addr *out);
/*
 * The supervisor's verdict on an admit, whatever the proxy decided: the
 * name must be one the allowlist matches (else every address is refused,
 * CORDON_VET_NAME), and each address must pass the vetting table with
 * the allowlist's CIDRs and lie outside every blocked range (blocked:
 * what the gateway's blocked sets hold: the table's ranges, the host's
 * own addresses and gateways, the uplink; CORDON_VET_BLOCKED). Fills
 * why[i] and returns how many were admitted.
 */
size_t cordon_dnsctl_vet_admit(const struct cordon_allowlist *al, const struct cordon_cidr *blocked,
			       size_t n_blocked, const char *name, const struct cordon_addr *addrs,
			       size_t n, enum cordon_vet *why);
/*
 * The proxy process's loop: a proxy on the listeners (cfg's admit,
 * event, upstream_socket and opaque are its own), its admits and events
 * sent over ctl, the supervisor's answers read from it; its upstream
 * sockets asked for over sockets (-1: it makes them itself). Sends READY first. Returns 0
 * once the supervisor hangs up ctl, or -1 (err set) when it cannot
 * serve. Calls nothing a seccomp filter of a few socket, epoll and
 * memory calls would refuse (security.md, "The DNS proxy's process").
 */
int cordon_dnsproxy_serve(const struct cordon_dnsproxy_config *cfg, const int *udp_fds,
			  size_t n_udp, const int *tcp_fds, size_t n_tcp, int ctl, int sockets,
			  struct cordon_error *err);

/* ---------------------------------------------------------------------- */
/* The sandbox's internal link (workload netns W <-> gateway netns G)      */
/* ---------------------------------------------------------------------- */

/*
 * The same addresses in every sandbox: each gateway namespace is a world
 * of its own, so they never meet. Allowlist entries that overlap them are
 * refused (cordon_gateway_check_allowlist).
 */
#define CORDON_GW_NET4 "10.254.254.0/30"
#define CORDON_GW_ADDR4 "10.254.254.1"   /* gateway side: route and resolver */
#define CORDON_GW_WORKLOAD4 "10.254.254.2"
#define CORDON_GW_PREFIX4 30
#define CORDON_GW_NET6 "fd63:6f72:646f:6e::/64" /* ULA; "cordon" in hex */
#define CORDON_GW_ADDR6 "fd63:6f72:646f:6e::1"
#define CORDON_GW_WORKLOAD6 "fd63:6f72:646f:6e::2"
#define CORDON_GW_PREFIX6 64
#define CORDON_GW_IF "gw0"       /* in G, towards the workload */
#define CORDON_GW_WORKLOAD_IF "eth0" /* in W */
#define CORDON_GW_UPLINK_IF "up0"    /* in G, towards the outside (veth or pasta's tap) */

struct cordon_gateway_addrs {
	struct cordon_addr gw4, workload4, gw6, workload6;
	struct cordon_cidr net4, net6;
};

/* The constants above, parsed. */
void cordon_gateway_addrs(struct cordon_gateway_addrs *out);

/* An allowlist address or CIDR overlapping the internal link is an error naming it. */
int cordon_gateway_check_allowlist(const struct cordon_allowlist *al, struct cordon_error *err);

/*
 * Gateway side, run by the sandbox init right after it entered G (a new
 * network namespace it owns), while the host's /proc is still visible
 * (the sysctls go through it): lo up, forwarding and strict reverse-path
 * filtering (IPv4's rp_filter) on, in G only.
 */
int cordon_gateway_prepare(struct cordon_error *err);
/*
 * The veth gw0 <-> eth0, eth0 born in the network namespace of the
 * workload (workload_pid, as the init's pid namespace knows it), and
 * gw0's addresses, up.
 */
int cordon_gateway_link(pid_t workload_pid, struct cordon_error *err);

/*
 * The DNS proxy's listening sockets in G, UDP and TCP on port 53 of the
 * gateway's own addresses: [0] IPv4 on CORDON_GW_ADDR4, [1] IPv6 on
 * CORDON_GW_ADDR6, IPv6 only (never a dual-stack socket that would take
 * and answer IPv4 as an IPv4-mapped IPv6 source). Made before gw0 and its
 * addresses exist (IP_FREEBIND).
 */
#define CORDON_GW_DNS_SOCKETS 2
int cordon_gateway_dns_sockets(int udp[CORDON_GW_DNS_SOCKETS], int tcp[CORDON_GW_DNS_SOCKETS],
			       struct cordon_error *err);

/* Workload side, inside W before capabilities are dropped: eth0 up, addresses, default routes. */
int cordon_gateway_workload_link(struct cordon_error *err);

/*
 * The gateway's blocked sets (both families, one array the caller frees):
 * the vetting table less what CIDR entries inside refused ranges open,
 * the metadata addresses unless listed exactly, and the extra addresses
 * (uplink and host) as /32 and /128.
 */
size_t cordon_gateway_blocked(const struct cordon_allowlist *al, const struct cordon_addr *extra,
			      size_t n_extra, struct cordon_cidr **out);

/*
 * Wait (at most timeout_ms) until ifname is up with an IPv4 address and an
 * IPv4 default route exists, and an IPv6 one too if ipv6 (pasta's tap).
 */
int cordon_link_wait_configured(const char *ifname, bool ipv6, unsigned timeout_ms,
				struct cordon_error *err);

#endif
