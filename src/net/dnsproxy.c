// SPDX-License-Identifier: Apache-2.0
/*
 * The per-sandbox DNS proxy. The workload's only resolver: a name the
 * allowlist does not match gets NXDOMAIN and never leaves the sandbox; a
 * matching one is forwarded upstream, the answer's addresses on the
 * question's CNAME chain are vetted, the accepted ones inserted into the
 * gateway's allow sets (before the reply leaves, so the first connect
 * finds them), and the reply returns with everything else removed.
 *
 * Single-threaded, non-blocking, driven by the supervisor's epoll loop:
 * the proxy registers its fds with epoll tags and the caller hands events
 * back (cordon_dnsproxy_handle) and runs deadlines (cordon_dnsproxy_tick).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "cordon/net.h"

#define DNS_UDP_MAX 4096  /* what we read from upstream over UDP (EDNS sizes) */
#define DNS_TCP_MAX 65535
#define CLIENT_UDP_MAX 512 /* without EDNS a client accepts 512 bytes */
#define MAX_TCP_CLIENTS 16
#define TCP_CLIENT_IDLE_MS 10000
/*
 * Upstream queries over UDP share a few unconnected sockets per address
 * family instead of one socket per query (four syscalls less each): the
 * kernel gives each its own random port, and an answer must match the
 * transaction's random id, its upstream's address and its question.
 */
#define UDP_POOL 4

enum tag_kind {
	TAG_UDP_LISTEN,
	TAG_TCP_LISTEN,
	TAG_TCP_CLIENT,
	TAG_UPSTREAM,     /* a TCP upstream connection of one transaction */
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
	uint8_t *out; /* pending length-prefixed reply */
	size_t out_len, out_off;
	uint64_t deadline_ms;
	unsigned pending; /* queries of this client in flight */
	bool closed;
};

struct udp_socket {
	struct tag tag;
	int fd;
	int family;
};

struct txn {
	struct tag tag;
	struct txn *next;
	int fd;               /* upstream TCP socket, or -1 */
	struct udp_socket *udp; /* the pool socket of a UDP attempt */
	bool tcp;
	size_t upstream;      /* index into cfg.upstreams */
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
};

struct cordon_dnsproxy {
	struct cordon_dnsproxy_config cfg;
	const struct cordon_cidr *cidrs;
	size_t n_cidrs;
	struct tag udp_tag, tcp_tag;
	int udp_fd, tcp_fd, epfd;
	struct udp_socket pool[UDP_POOL * 2];
	unsigned pool_next;
	struct txn *txns;
	unsigned inflight;
	struct tcp_client *clients[MAX_TCP_CLIENTS];
	double tokens;
	uint64_t tokens_at_ms;
	struct cordon_dnsproxy_stats stats;
	struct cordon_dns_msg *msg; /* scratch, large */
};

static socklen_t sockaddr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The transaction steps call each other: a timeout retries, a TC answer resends. */
static int txn_send(struct cordon_dnsproxy *p, struct txn *t);
static void txn_retry(struct cordon_dnsproxy *p, struct txn *t, const char *note);
static void txn_complete(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len);

static uint64_t now_ms(void)
{
	return cordon_now_mono_us() / 1000;
}

static void emit(struct cordon_dnsproxy *p, const struct cordon_dns_question *q, bool allowed,
		 const struct cordon_addr *added, size_t n_added, const struct cordon_addr *refused,
		 const enum cordon_vet *why, size_t n_refused, int rcode, const char *note)
{
	struct cordon_dns_event ev = {
		.name = q ? q->name : "",
		.qtype = q ? q->qtype : 0,
		.allowed = allowed,
		.added = added,
		.n_added = n_added,
		.refused = refused,
		.refused_why = why,
		.n_refused = n_refused,
		.rcode = rcode,
		.note = note,
	};

	if (p->cfg.event)
		p->cfg.event(p->cfg.opaque, &ev);
}

/* --- replies to clients -------------------------------------------------- */

static void tcp_client_close(struct cordon_dnsproxy *p, struct tcp_client *c)
{
	if (c->pending) {
		/* answers still owed: close when they are done or abandoned */
		c->closed = true;
		return;
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i] == c)
			p->clients[i] = NULL;
	if (p->epfd >= 0)
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	free(c);
}

static void tcp_client_flush(struct cordon_dnsproxy *p, struct tcp_client *c)
{
	while (c->out && c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return; /* EPOLLOUT will bring us back */
			c->closed = true;
			break;
		}
		c->out_off += (size_t)w;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->closed && !c->pending)
		tcp_client_close(p, c);
}

static void reply(struct cordon_dnsproxy *p, const struct sockaddr_storage *to, socklen_t to_len,
		  struct tcp_client *tc, const uint8_t *buf, size_t len)
{
	if (!tc) {
		sendto(p->udp_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to,
		       to_len);
		return;
	}
	if (tc->out) /* one reply at a time per connection; drop what cannot queue */
		return;
	tc->out = cordon_xmalloc(len + 2);
	tc->out[0] = (uint8_t)(len >> 8);
	tc->out[1] = (uint8_t)len;
	memcpy(tc->out + 2, buf, len);
	tc->out_len = len + 2;
	tc->out_off = 0;
	tcp_client_flush(p, tc);
}

static void reply_error(struct cordon_dnsproxy *p, const uint8_t *query, size_t qlen,
			const struct sockaddr_storage *to, socklen_t to_len, struct tcp_client *tc,
			int rcode)
{
	uint8_t out[CLIENT_UDP_MAX];
	ssize_t n = cordon_dns_build_error(query, qlen, rcode, out, sizeof(out));

	if (n > 0)
		reply(p, to, to_len, tc, out, (size_t)n);
}

/* --- upstream transactions ----------------------------------------------- */

static void txn_free(struct cordon_dnsproxy *p, struct txn *t)
{
	for (struct txn **pp = &p->txns; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (t->fd >= 0) {
		if (p->epfd >= 0)
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		close(t->fd);
	}
	if (t->tcp_client) {
		t->tcp_client->pending--;
		if (t->tcp_client->closed && !t->tcp_client->pending && !t->tcp_client->out)
			tcp_client_close(p, t->tcp_client);
	}
	p->inflight--;
	free(t->buf);
	free(t->query);
	free(t);
}

static void txn_fail(struct cordon_dnsproxy *p, struct txn *t, const char *note)
{
	p->stats.servfail++;
	/* The stored query carries the upstream id: the client gets its own back. */
	t->query[0] = (uint8_t)(t->client_id >> 8);
	t->query[1] = (uint8_t)t->client_id;
	reply_error(p, t->query, t->query_len, &t->client, t->client_len, t->tcp_client,
		    CORDON_DNS_RCODE_SERVFAIL);
	emit(p, &t->q, true, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_SERVFAIL, note);
	txn_free(p, t);
}

static int upstream_socket(struct cordon_dnsproxy *p, struct txn *t)
{
	const struct sockaddr_storage *ss = &p->cfg.upstreams[t->upstream];
	socklen_t len = sockaddr_len(ss);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = &t->tag };
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (p->epfd >= 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	t->fd = fd;
	return 0;
}

static struct udp_socket *pool_socket(struct cordon_dnsproxy *p, int family)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t base = family == AF_INET6 ? UDP_POOL : 0;
	struct udp_socket *u = &p->pool[base + (p->pool_next++ % UDP_POOL)];

	if (u->fd > 0)
		return u;
	u->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		u->fd = 0;
		return NULL;
	}
	u->family = family;
	u->tag = (struct tag){ TAG_UPSTREAM_UDP, u };
	ev.data.ptr = &u->tag;
	if (p->epfd >= 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, u->fd, &ev) < 0) {
		close(u->fd);
		u->fd = 0;
		return NULL;
	}
	return u;
}

static int udp_send(struct cordon_dnsproxy *p, struct txn *t)
{
	const struct sockaddr_storage *ss = &p->cfg.upstreams[t->upstream];
	struct udp_socket *u = pool_socket(p, ss->ss_family);

	if (!u)
		return -EMFILE;
	if (sendto(u->fd, t->query, t->query_len, MSG_NOSIGNAL, (const struct sockaddr *)ss,
		   sockaddr_len(ss)) < 0)
		return -errno;
	t->udp = u;
	t->sent = true;
	return 0;
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	{
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
}

/* Answers on a pool socket: find the transaction by id and source. */
static void pool_readable(struct cordon_dnsproxy *p, struct udp_socket *u)
{
	for (int i = 0; i < 64; i++) {
		uint8_t buf[DNS_UDP_MAX];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(u->fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		uint16_t id;
		struct txn *t;

		if (n < 0)
			return;
		if (n < 12)
			continue;
		id = (uint16_t)(buf[0] << 8 | buf[1]);
		for (t = p->txns; t; t = t->next)
			if (t->udp == u && t->upstream_id == id &&
			    same_addr(&from, &p->cfg.upstreams[t->upstream]))
				break;
		if (!t)
			continue; /* not ours: late, duplicate or spoofed */
		if (buf[2] & 0x02) { /* TC: the whole answer over TCP */
			p->stats.tcp_retries++;
			t->tcp = true;
			t->attempts = 0;
			if (txn_send(p, t) < 0)
				txn_retry(p, t, "upstream TCP failed");
			continue;
		}
		txn_complete(p, t, buf, (size_t)n);
	}
}

/* (Re)send the query to the current upstream, over UDP or TCP. */
static int txn_send(struct cordon_dnsproxy *p, struct txn *t)
{
	int r;

	if (t->fd >= 0) {
		if (p->epfd >= 0)
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		close(t->fd);
		t->fd = -1;
	}
	t->attempts++;
	t->deadline_ms = now_ms() + p->cfg.upstream_timeout_ms;
	t->udp = NULL;
	if (!t->tcp)
		return udp_send(p, t);
	r = upstream_socket(p, t);
	if (r < 0)
		return r;
	if (t->tcp) {
		free(t->buf);
		t->buf = cordon_xmalloc(2 + DNS_TCP_MAX);
		t->buf[0] = (uint8_t)(t->query_len >> 8);
		t->buf[1] = (uint8_t)t->query_len;
		memcpy(t->buf + 2, t->query, t->query_len);
		t->buf_len = t->query_len + 2;
		t->buf_off = 0;
		t->sent = false;
		return 0; /* written when the connect completes (EPOLLOUT) */
	}
	return 0;
}

/* Next upstream, or fail; a timeout or error moves on until each was tried twice. */
static void txn_retry(struct cordon_dnsproxy *p, struct txn *t, const char *note)
{
	while (t->attempts < 2 * p->cfg.n_upstreams) {
		t->upstream = (t->upstream + 1) % p->cfg.n_upstreams;
		if (txn_send(p, t) == 0)
			return;
	}
	txn_fail(p, t, note);
}

static uint32_t clamp_ttl(const struct cordon_dnsproxy *p, uint32_t ttl)
{
	if (ttl < p->cfg.ttl_floor_s)
		return p->cfg.ttl_floor_s;
	if (ttl > p->cfg.ttl_ceiling_s)
		return p->cfg.ttl_ceiling_s;
	return ttl;
}

/* The answer is in hand: vet, insert, filter, return it. */
static void txn_complete(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len)
{
	struct cordon_dns_msg *m = p->msg;
	size_t idx[CORDON_DNS_MAX_RECORDS], n_chain;
	bool keep[CORDON_DNS_MAX_RECORDS];
	struct cordon_addr added[CORDON_DNS_MAX_RECORDS], refused[CORDON_DNS_MAX_RECORDS];
	enum cordon_vet why[CORDON_DNS_MAX_RECORDS];
	size_t n_added = 0, n_refused = 0;
	uint32_t min_ttl = UINT32_MAX;
	bool want_addrs = t->q.qtype == CORDON_DNS_TYPE_A || t->q.qtype == CORDON_DNS_TYPE_AAAA;
	ssize_t out_len;

	if (cordon_dns_parse(buf, len, m) < 0 || !(m->flags & 0x8000) ||
	    strcmp(m->question.name, t->q.name) != 0 || m->question.qtype != t->q.qtype) {
		txn_fail(p, t, "malformed upstream answer");
		return;
	}
	/* Everything that is not an address passes; addresses only on the chain, vetted. */
	for (size_t i = 0; i < m->n_rr; i++)
		keep[i] = m->rr[i].type != CORDON_DNS_TYPE_A && m->rr[i].type != CORDON_DNS_TYPE_AAAA;
	n_chain = want_addrs ? cordon_dns_chain_addrs(m, idx, ARRAY_SIZE(idx)) : 0;
	for (size_t k = 0; k < n_chain; k++) {
		const struct cordon_dns_rr *rr = &m->rr[idx[k]];
		enum cordon_vet v = cordon_addr_vet(&rr->addr, p->cidrs, p->n_cidrs);

		if ((rr->type == CORDON_DNS_TYPE_A) != (t->q.qtype == CORDON_DNS_TYPE_A))
			continue; /* an AAAA in an A answer (or back) is not what was asked */
		if (v != CORDON_VET_OK) {
			refused[n_refused] = rr->addr;
			why[n_refused++] = v;
			p->stats.addrs_refused++;
			continue;
		}
		if (n_added >= p->cfg.max_addrs_per_reply) {
			p->stats.addr_cap_hits++;
			continue;
		}
		keep[idx[k]] = true;
		added[n_added++] = rr->addr;
		if (rr->ttl < min_ttl)
			min_ttl = rr->ttl;
	}
	if (n_added) {
		uint32_t ttl = clamp_ttl(p, min_ttl);
		int r = p->cfg.insert ? p->cfg.insert(p->cfg.opaque, added, n_added, ttl * 1000) : 0;

		if (r < 0) {
			/* A full set (the kernel enforces its size) is counted apart. */
			bool full = r == -ENOSPC || r == -E2BIG || r == -ENFILE;

			if (full)
				p->stats.set_full++;
			txn_fail(p, t, full ? "allow set full" : "inserting into the allow sets failed");
			return;
		}
		p->stats.addrs_inserted += n_added;
	}
	out_len = cordon_dns_filter(buf, len, m, keep);
	if (out_len < 0) {
		txn_fail(p, t, "rewriting the answer failed");
		return;
	}
	/* The client's id back; a UDP client gets at most 512 bytes, else TC. */
	buf[0] = (uint8_t)(t->client_id >> 8);
	buf[1] = (uint8_t)t->client_id;
	if (!t->tcp_client && (size_t)out_len > CLIENT_UDP_MAX) {
		out_len = cordon_dns_build_error(t->query, t->query_len, CORDON_DNS_RCODE_NOERROR, buf,
						 len);
		if (out_len > 0)
			cordon_dns_set_tc(buf, (size_t)out_len, true);
	}
	if (out_len > 0)
		reply(p, &t->client, t->client_len, t->tcp_client, buf, (size_t)out_len);
	emit(p, &t->q, true, added, n_added, refused, why, n_refused, buf[3] & 0x0f, NULL);
	txn_free(p, t);
}

static void upstream_readable(struct cordon_dnsproxy *p, struct txn *t, uint32_t events)
{
	if (!t->sent && (events & EPOLLOUT)) {
		ssize_t w = send(t->fd, t->buf + t->buf_off, t->buf_len - t->buf_off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno != EAGAIN)
				txn_retry(p, t, "upstream TCP failed");
			return;
		}
		t->buf_off += (size_t)w;
		if (t->buf_off == t->buf_len) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &t->tag };

			t->sent = true;
			t->buf_len = t->buf_off = 0;
			if (p->epfd >= 0)
				epoll_ctl(p->epfd, EPOLL_CTL_MOD, t->fd, &ev);
		}
		return;
	}
	if (!t->sent)
		return;
	for (;;) {
		ssize_t n = recv(t->fd, t->buf + t->buf_len, 2 + DNS_TCP_MAX - t->buf_len, MSG_DONTWAIT);
		size_t want;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				txn_retry(p, t, "upstream TCP failed");
			return;
		}
		if (n == 0) {
			txn_retry(p, t, "upstream closed the connection");
			return;
		}
		t->buf_len += (size_t)n;
		if (t->buf_len < 2)
			continue;
		want = (size_t)(t->buf[0] << 8 | t->buf[1]);
		if (t->buf_len < 2 + want)
			continue;
		if (want < 12 || (uint16_t)(t->buf[2] << 8 | t->buf[3]) != t->upstream_id) {
			txn_retry(p, t, "bad upstream TCP answer");
			return;
		}
		txn_complete(p, t, t->buf + 2, want);
		return;
	}
}

/* --- queries --------------------------------------------------------------- */

static bool take_token(struct cordon_dnsproxy *p)
{
	uint64_t now = now_ms();

	if (!p->cfg.qps)
		return true;
	p->tokens += (double)(now - p->tokens_at_ms) * p->cfg.qps / 1000.0;
	if (p->tokens > p->cfg.qps)
		p->tokens = p->cfg.qps;
	p->tokens_at_ms = now;
	if (p->tokens < 1.0)
		return false;
	p->tokens -= 1.0;
	return true;
}

static void query(struct cordon_dnsproxy *p, const uint8_t *buf, size_t len,
		  const struct sockaddr_storage *from, socklen_t from_len, struct tcp_client *tc)
{
	struct cordon_dns_msg *m = p->msg;
	struct txn *t;
	uint16_t rid;

	if (len < 12 || (buf[2] & 0x80))
		return; /* too short to answer, or a response: drop */
	p->stats.queries++;
	if (!take_token(p)) {
		p->stats.rate_limited++;
		reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_REFUSED);
		emit(p, NULL, false, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_REFUSED, "rate limited");
		return;
	}
	if (((buf[2] >> 3) & 0x0f) != 0) { /* opcode other than QUERY */
		reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_NOTIMP);
		return;
	}
	if (cordon_dns_parse_question(buf, len, m) < 0) {
		reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_FORMERR);
		return;
	}
	if (!cordon_allowlist_match_name(p->cfg.allowlist, m->question.name)) {
		p->stats.denied++;
		reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_NXDOMAIN);
		emit(p, &m->question, false, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_NXDOMAIN, NULL);
		return;
	}
	p->stats.allowed++;
	if (p->inflight >= p->cfg.max_inflight || len > DNS_TCP_MAX) {
		p->stats.inflight_limited++;
		reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_SERVFAIL);
		emit(p, &m->question, true, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_SERVFAIL,
		     "too many queries in flight");
		return;
	}
	t = cordon_xcalloc(1, sizeof(*t));
	t->tag = (struct tag){ TAG_UPSTREAM, t };
	t->fd = -1;
	t->q = m->question;
	t->client_id = (uint16_t)(buf[0] << 8 | buf[1]);
	/* A fresh id upstream: the workload cannot predict what we wait for. */
	for (bool taken = true; taken;) {
		if (getrandom(&rid, sizeof(rid), GRND_NONBLOCK) != sizeof(rid))
			rid = (uint16_t)cordon_now_mono_us();
		taken = false;
		for (struct txn *o = p->txns; o; o = o->next)
			taken = taken || o->upstream_id == rid;
	}
	t->upstream_id = rid;
	t->query = cordon_xmalloc(len);
	memcpy(t->query, buf, len);
	t->query[0] = (uint8_t)(rid >> 8);
	t->query[1] = (uint8_t)rid;
	t->query_len = len;
	if (from) {
		memcpy(&t->client, from, sizeof(*from));
		t->client_len = from_len;
	}
	t->tcp_client = tc;
	if (tc)
		tc->pending++;
	t->next = p->txns;
	p->txns = t;
	p->inflight++;
	p->stats.forwarded++;
	t->upstream = 0;
	if (txn_send(p, t) < 0)
		txn_retry(p, t, "upstream unreachable");
}

static void udp_readable(struct cordon_dnsproxy *p)
{
	for (int i = 0; i < 64; i++) {
		uint8_t buf[DNS_UDP_MAX];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(p->udp_fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
				     &from_len);

		if (n < 0)
			return;
		query(p, buf, (size_t)n, &from, from_len, NULL);
	}
}

static void tcp_accept(struct cordon_dnsproxy *p)
{
	for (;;) {
		int fd = accept4(p->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct tcp_client *c;
		struct epoll_event ev;
		size_t slot;

		if (fd < 0)
			return;
		for (slot = 0; slot < MAX_TCP_CLIENTS && p->clients[slot]; slot++)
			;
		if (slot == MAX_TCP_CLIENTS) {
			close(fd); /* bounded: a client may not hold more */
			continue;
		}
		c = cordon_xcalloc(1, sizeof(*c));
		c->tag = (struct tag){ TAG_TCP_CLIENT, c };
		c->fd = fd;
		c->deadline_ms = now_ms() + TCP_CLIENT_IDLE_MS;
		ev = (struct epoll_event){ .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = &c->tag };
		if (p->epfd >= 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		p->clients[slot] = c;
	}
}

static void tcp_client_io(struct cordon_dnsproxy *p, struct tcp_client *c, uint32_t events)
{
	if (events & EPOLLOUT)
		tcp_client_flush(p, c);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		size_t want;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				tcp_client_close(p, c);
			return;
		}
		if (n == 0) {
			tcp_client_close(p, c);
			return;
		}
		c->in_len += (size_t)n;
		c->deadline_ms = now_ms() + TCP_CLIENT_IDLE_MS;
		while (c->in_len >= 2) {
			want = (size_t)(c->in[0] << 8 | c->in[1]);
			if (c->in_len < 2 + want)
				break;
			query(p, c->in + 2, want, NULL, 0, c);
			memmove(c->in, c->in + 2 + want, c->in_len - 2 - want);
			c->in_len -= 2 + want;
		}
	}
}

/* --- the public face ---------------------------------------------------------- */

struct cordon_dnsproxy *cordon_dnsproxy_new(const struct cordon_dnsproxy_config *cfg,
					    int udp_fd, int tcp_fd, struct cordon_error *err)
{
	struct cordon_dnsproxy *p;

	if (!cfg->allowlist || (cfg->n_upstreams == 0) || !cfg->upstreams) {
		cordon_error_set(err, CORDON_E_NET_POLICY, 0, "DNS proxy: no allowlist or upstream");
		return NULL;
	}
	p = cordon_xcalloc(1, sizeof(*p));
	p->cfg = *cfg;
	if (!p->cfg.upstream_timeout_ms)
		p->cfg.upstream_timeout_ms = 2000;
	if (!p->cfg.ttl_floor_s)
		p->cfg.ttl_floor_s = CORDON_DNS_TTL_FLOOR_S;
	if (!p->cfg.ttl_ceiling_s)
		p->cfg.ttl_ceiling_s = CORDON_DNS_TTL_CEILING_S;
	if (!p->cfg.max_inflight)
		p->cfg.max_inflight = 64;
	if (!p->cfg.max_addrs_per_reply)
		p->cfg.max_addrs_per_reply = 16;
	p->tokens = p->cfg.qps;
	p->tokens_at_ms = now_ms();
	p->n_cidrs = cordon_allowlist_cidrs(cfg->allowlist, &p->cidrs);
	p->udp_fd = udp_fd;
	p->tcp_fd = tcp_fd;
	p->epfd = -1;
	p->udp_tag = (struct tag){ TAG_UDP_LISTEN, p };
	p->tcp_tag = (struct tag){ TAG_TCP_LISTEN, p };
	p->msg = cordon_xmalloc(sizeof(*p->msg));
	return p;
}

void cordon_dnsproxy_free(struct cordon_dnsproxy *p)
{
	if (!p)
		return;
	while (p->txns) {
		struct txn *t = p->txns;

		t->tcp_client = NULL; /* the clients go below */
		txn_free(p, t);
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
		if (p->clients[i]) {
			p->clients[i]->pending = 0;
			tcp_client_close(p, p->clients[i]);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(p->pool); i++)
		if (p->pool[i].fd > 0)
			close(p->pool[i].fd);
	if (p->udp_fd >= 0)
		close(p->udp_fd);
	if (p->tcp_fd >= 0)
		close(p->tcp_fd);
	free(p->msg);
	free(p);
}

int cordon_dnsproxy_attach(struct cordon_dnsproxy *p, int epfd, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	p->epfd = epfd;
	ev.data.ptr = &p->udp_tag;
	if (p->udp_fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, p->udp_fd, &ev) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy: epoll");
	ev.data.ptr = &p->tcp_tag;
	if (p->tcp_fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, p->tcp_fd, &ev) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy: epoll");
	return 0;
}

int cordon_dnsproxy_handle(struct cordon_dnsproxy *p, void *tagp, uint32_t events)
{
	struct tag *tag = tagp;

	if (tag == &p->udp_tag) {
		udp_readable(p);
		return 1;
	}
	if (tag == &p->tcp_tag) {
		tcp_accept(p);
		return 1;
	}
	if (tag->kind == TAG_UPSTREAM_UDP && tag->obj >= (void *)p->pool &&
	    tag->obj < (void *)(p->pool + ARRAY_SIZE(p->pool))) {
		pool_readable(p, tag->obj);
		return 1;
	}
	for (struct txn *t = p->txns; t; t = t->next) {
		if (tag == &t->tag) {
			upstream_readable(p, t, events);
			return 1;
		}
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
		if (p->clients[i] && tag == &p->clients[i]->tag) {
			tcp_client_io(p, p->clients[i], events);
			return 1;
		}
	}
	return 0;
}

int cordon_dnsproxy_timeout_ms(const struct cordon_dnsproxy *p)
{
	uint64_t now = now_ms(), next = UINT64_MAX;

	for (const struct txn *t = p->txns; t; t = t->next)
		if (t->deadline_ms < next)
			next = t->deadline_ms;
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i] && p->clients[i]->deadline_ms < next)
			next = p->clients[i]->deadline_ms;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

void cordon_dnsproxy_tick(struct cordon_dnsproxy *p)
{
	uint64_t now = now_ms();
	struct txn *t = p->txns;

	while (t) {
		struct txn *next = t->next;

		if (t->deadline_ms <= now)
			txn_retry(p, t, "upstream timeout");
		t = next;
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i] && p->clients[i]->deadline_ms <= now && !p->clients[i]->pending)
			tcp_client_close(p, p->clients[i]);
}

void cordon_dnsproxy_stats(const struct cordon_dnsproxy *p, struct cordon_dnsproxy_stats *out)
{
	*out = p->stats;
}
