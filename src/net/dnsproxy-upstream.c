// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS proxy's upstream side: one transaction per forwarded query, sent
 * with a fresh id over a shared UDP socket pool (TCP when the answer is
 * truncated), retried across upstreams, and completed by vetting the
 * answer's addresses, inserting the accepted ones before the reply leaves,
 * and returning the rewritten reply to the client.
 */
#include "dnsproxy-internal.h"

static void dp_txn_complete(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len);

/* --- upstream transactions ----------------------------------------------- */

void dp_txn_free(struct cordon_dnsproxy *p, struct txn *t)
{
	if (t->dead)
		return;
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
			dp_tcp_client_close(p, t->tcp_client);
	}
	p->inflight--;
	/* Callers up the stack still read the transaction: freed at the tick. */
	t->dead = true;
	t->next = p->dead_txns;
	p->dead_txns = t;
}

void dp_txn_fail(struct cordon_dnsproxy *p, struct txn *t, const char *note)
{
	p->stats.servfail++;
	/* The stored query carries the upstream id: the client gets its own back. */
	t->query[0] = (uint8_t)(t->client_id >> 8);
	t->query[1] = (uint8_t)t->client_id;
	dp_reply_error(p, t->query, t->query_len, &t->client, t->client_len, t->tcp_client,
		       CORDON_DNS_RCODE_SERVFAIL);
	dp_emit(p, &t->q, true, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_SERVFAIL, note);
	dp_txn_free(p, t);
}

/* A socket to upstream i: from the provider (the supervisor), or made here. */
static int new_upstream_socket(struct cordon_dnsproxy *p, size_t i, int type)
{
	const struct sockaddr_storage *ss = &p->cfg.upstreams[i];
	int fd;

	if (p->cfg.upstream_socket)
		return p->cfg.upstream_socket(p->cfg.opaque, i, type);
	fd = socket(ss->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)ss, dp_sockaddr_len(ss)) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int upstream_socket(struct cordon_dnsproxy *p, struct txn *t)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = &t->tag };
	int fd = new_upstream_socket(p, t->upstream, SOCK_STREAM);

	if (fd < 0)
		return fd;
	if (p->epfd >= 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	t->fd = fd;
	return 0;
}

static bool pool_busy(const struct cordon_dnsproxy *p, const struct udp_socket *u)
{
	for (const struct txn *t = p->txns; t; t = t->next)
		if (t->udp == u)
			return true;
	return false;
}

static void pool_close(struct cordon_dnsproxy *p, struct udp_socket *u)
{
	if (p->epfd >= 0)
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, u->fd, NULL);
	close(u->fd);
	u->fd = 0;
}

/*
 * One of upstream i's pool sockets, in turn. A socket that has carried
 * UDP_REUSE queries and has none in flight is replaced: a port that
 * stays open long is one an off-path spoofer has time to find.
 */
static struct udp_socket *pool_socket(struct cordon_dnsproxy *p, size_t i)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct udp_socket *u = &p->pool[i][p->pool_next++ % UDP_POOL];
	int fd;

	if (u->fd > 0 && u->sent >= UDP_REUSE && !pool_busy(p, u))
		pool_close(p, u);
	if (u->fd > 0)
		return u;
	fd = new_upstream_socket(p, i, SOCK_DGRAM);
	if (fd < 0)
		return NULL;
	*u = (struct udp_socket){ .tag = { TAG_UPSTREAM_UDP, u }, .fd = fd, .upstream = i };
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
	struct udp_socket *u = pool_socket(p, t->upstream);

	if (!u)
		return -EMFILE;
	/* Connected: no address here (the proxy's filter allows none on these sockets). */
	if (send(u->fd, t->query, t->query_len, MSG_NOSIGNAL) < 0)
		return -errno;
	u->sent++;
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
void dp_pool_readable(struct cordon_dnsproxy *p, struct udp_socket *u)
{
	for (int i = 0; i < 64; i++) {
		uint8_t buf[DNS_UDP_MAX];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(u->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);
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
			continue;    /* not ours: late, duplicate or spoofed */
		if (buf[2] & 0x02) { /* TC: the whole answer over TCP */
			p->stats.tcp_retries++;
			t->tcp = true;
			t->attempts = 0;
			if (dp_txn_send(p, t) < 0)
				dp_txn_retry(p, t, "upstream TCP failed");
			continue;
		}
		dp_txn_complete(p, t, buf, (size_t)n);
	}
}

/* (Re)send the query to the current upstream, over UDP or TCP. */
int dp_txn_send(struct cordon_dnsproxy *p, struct txn *t)
{
	int r;

	if (t->fd >= 0) {
		if (p->epfd >= 0)
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		close(t->fd);
		t->fd = -1;
	}
	t->attempts++;
	t->deadline_ms = dp_now_ms() + p->cfg.upstream_timeout_ms;
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
void dp_txn_retry(struct cordon_dnsproxy *p, struct txn *t, const char *note)
{
	while (t->attempts < 2 * p->cfg.n_upstreams) {
		t->upstream = (t->upstream + 1) % p->cfg.n_upstreams;
		if (dp_txn_send(p, t) == 0)
			return;
	}
	dp_txn_fail(p, t, note);
}

static uint32_t clamp_ttl(const struct cordon_dnsproxy *p, uint32_t ttl)
{
	if (ttl < p->cfg.ttl_floor_s)
		return p->cfg.ttl_floor_s;
	if (ttl > p->cfg.ttl_ceiling_s)
		return p->cfg.ttl_ceiling_s;
	return ttl;
}

/*
 * What the proxy makes of an answer: the records that stay, the vetted
 * addresses it asks to admit (with their records), the ones it refused,
 * and the lowest TTL of the admitted. Large: one per call, on the stack.
 */
struct verdict {
	bool keep[CORDON_DNS_MAX_RECORDS];
	struct cordon_addr added[CORDON_DNS_ADMIT_MAX];
	size_t added_rr[CORDON_DNS_ADMIT_MAX];
	size_t n_added;
	struct cordon_addr refused[CORDON_DNS_MAX_RECORDS];
	enum cordon_vet why[CORDON_DNS_MAX_RECORDS];
	size_t n_refused;
	uint32_t min_ttl;
};

/*
 * Parse and vet an answer into v (p->msg holds the parse, for the
 * filter). Deterministic: an answer examined again after its admit gives
 * the same addresses in the same order. count: the first time only.
 */
static int examine(struct cordon_dnsproxy *p, const struct txn *t, const uint8_t *buf, size_t len,
		   struct verdict *v, bool count)
{
	struct cordon_dns_msg *m = p->msg;
	size_t idx[CORDON_DNS_MAX_RECORDS], n_chain;
	bool want_addrs = t->q.qtype == CORDON_DNS_TYPE_A || t->q.qtype == CORDON_DNS_TYPE_AAAA;

	if (cordon_dns_parse(buf, len, m) < 0 || !(m->flags & 0x8000) ||
	    strcmp(m->question.name, t->q.name) != 0 || m->question.qtype != t->q.qtype)
		return -1;
	v->n_added = v->n_refused = 0;
	v->min_ttl = UINT32_MAX;
	/* Everything that is not an address passes; addresses only on the chain, vetted. */
	for (size_t i = 0; i < m->n_rr; i++)
		v->keep[i] =
			m->rr[i].type != CORDON_DNS_TYPE_A && m->rr[i].type != CORDON_DNS_TYPE_AAAA;
	n_chain = want_addrs ? cordon_dns_chain_addrs(m, idx, ARRAY_SIZE(idx)) : 0;
	for (size_t k = 0; k < n_chain; k++) {
		const struct cordon_dns_rr *rr = &m->rr[idx[k]];
		enum cordon_vet why = cordon_addr_vet(&rr->addr, p->cidrs, p->n_cidrs);

		if ((rr->type == CORDON_DNS_TYPE_A) != (t->q.qtype == CORDON_DNS_TYPE_A))
			continue; /* an AAAA in an A answer (or back) is not what was asked */
		if (why != CORDON_VET_OK) {
			v->refused[v->n_refused] = rr->addr;
			v->why[v->n_refused++] = why;
			if (count)
				p->stats.addrs_refused++;
			continue;
		}
		if (v->n_added >= p->cfg.max_addrs_per_reply) {
			if (count)
				p->stats.addr_cap_hits++;
			continue;
		}
		v->keep[idx[k]] = true;
		v->added_rr[v->n_added] = idx[k];
		v->added[v->n_added++] = rr->addr;
		if (rr->ttl < v->min_ttl)
			v->min_ttl = rr->ttl;
	}
	return 0;
}

/* --- what the allow sets hold ----------------------------------------------- */

/* FNV-1a of a question's name: what the cache pairs each address with. */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

static size_t admitted_hash(const struct cordon_addr *a, uint32_t name)
{
	uint32_t h = name; /* FNV-1a, on from the name's */

	h = (h ^ (uint32_t)a->family) * 16777619u;
	for (size_t i = 0; i < (a->family == AF_INET6 ? 16u : 4u); i++)
		h = (h ^ a->u.bytes[i]) * 16777619u;
	return h;
}

static bool same_address(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET6 ? 16 : 4) == 0;
}

/*
 * How long a stays in the allow sets from now, as far as we know (ms; 0:
 * not known), for this name: the supervisor records which names each
 * address was admitted for, and a live update keeps an address only
 * while one of them is still allowed, so a name is never answered on the
 * strength of another's admit.
 */
static uint64_t admitted_left(const struct cordon_dnsproxy *p, const struct cordon_addr *a,
			      uint32_t name, uint64_t now)
{
	size_t h = admitted_hash(a, name);

	for (size_t k = 0; k < ADMITTED_PROBES && p->cap_admitted; k++) {
		const struct admitted *e = &p->admitted[(h + k) & (p->cap_admitted - 1)];

		if (e->until_ms > now && e->name == name && same_address(&e->addr, a))
			return e->until_ms - now;
	}
	return 0;
}

/*
 * Where (a, name) goes in table: its own entry, else the first free or
 * ended one among its probes, else the one that ends first (*evicts).
 */
static size_t admitted_slot(const struct admitted *table, size_t cap, const struct cordon_addr *a,
			    uint32_t name, uint64_t now, bool *evicts)
{
	size_t h = admitted_hash(a, name), victim = h & (cap - 1), free_at = cap;

	for (size_t k = 0; k < ADMITTED_PROBES; k++) {
		size_t i = (h + k) & (cap - 1);

		if (table[i].until_ms <= now) {
			if (free_at == cap)
				free_at = i;
			continue;
		}
		if (table[i].name == name && same_address(&table[i].addr, a)) {
			*evicts = false;
			return i;
		}
		if (table[i].until_ms < table[victim].until_ms)
			victim = i;
	}
	*evicts = free_at == cap;
	return free_at == cap ? victim : free_at;
}

/* Double the table (the first: ADMITTED_FIRST), keeping what has not ended. */
static void admitted_grow(struct cordon_dnsproxy *p, uint64_t now)
{
	size_t cap = p->cap_admitted ? p->cap_admitted * 2 : ADMITTED_FIRST;
	struct admitted *table = cordon_xcalloc(cap, sizeof(*table));
	bool evicts;

	for (size_t i = 0; i < p->cap_admitted; i++) {
		const struct admitted *e = &p->admitted[i];

		if (e->until_ms > now)
			table[admitted_slot(table, cap, &e->addr, e->name, now, &evicts)] = *e;
	}
	free(p->admitted);
	p->admitted = table;
	p->cap_admitted = cap;
}

static void admitted_put(struct cordon_dnsproxy *p, const struct cordon_addr *a, uint32_t name,
			 uint64_t until)
{
	uint64_t now = dp_now_ms();
	struct admitted *e;
	bool evicts = false;

	if (until <= now)
		return;
	if (!p->cap_admitted)
		admitted_grow(p, now);
	for (;;) {
		e = &p->admitted[admitted_slot(p->admitted, p->cap_admitted, a, name, now,
					       &evicts)];
		if (!evicts || p->cap_admitted >= ADMITTED_MAX)
			break;
		admitted_grow(p, now);
	}
	e->addr = *a;
	e->name = name;
	e->until_ms = until;
}

/* The kept address records' TTLs, cut to cap_s: no client keeps them longer than the sets do. */
static void cap_ttls(uint8_t *buf, const struct cordon_dns_msg *m, const struct verdict *v,
		     uint32_t cap_s)
{
	for (size_t i = 0; i < v->n_added; i++) {
		const struct cordon_dns_rr *rr = &m->rr[v->added_rr[i]];
		uint8_t *ttl = buf + rr->rdata_offset - 6;

		if (rr->ttl > cap_s) {
			ttl[0] = (uint8_t)(cap_s >> 24);
			ttl[1] = (uint8_t)(cap_s >> 16);
			ttl[2] = (uint8_t)(cap_s >> 8);
			ttl[3] = (uint8_t)cap_s;
		}
	}
}

/*
 * The rewritten answer, with the client's id and its address TTLs at
 * most cap_s, to the client (examined just before); the end.
 */
static void answer_client(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len,
			  const struct verdict *v, uint32_t cap_s)
{
	ssize_t out_len;

	cap_ttls(buf, p->msg, v, cap_s);
	out_len = cordon_dns_filter(buf, len, p->msg, v->keep);

	if (out_len < 0) {
		dp_txn_fail(p, t, "rewriting the answer failed");
		return;
	}
	/* A UDP client gets at most 512 bytes, else an empty reply with TC. */
	if (!t->tcp_client && (size_t)out_len > CLIENT_UDP_MAX) {
		out_len = cordon_dns_build_error(t->query, t->query_len, CORDON_DNS_RCODE_NOERROR,
						 buf, len);
		if (out_len > 0)
			cordon_dns_set_tc(buf, (size_t)out_len, true);
	}
	/* The client's id back (t->query holds the upstream's). */
	if (out_len > 0) {
		buf[0] = (uint8_t)(t->client_id >> 8);
		buf[1] = (uint8_t)t->client_id;
	}
	if (out_len > 0)
		dp_reply(p, &t->client, t->client_len, t->tcp_client, buf, (size_t)out_len);
	dp_emit(p, &t->q, true, v->added, v->n_added, v->refused, v->why, v->n_refused,
		buf[3] & 0x0f, NULL);
	dp_txn_free(p, t);
}

/* No more upstream traffic for t: its TCP connection closed, its pool socket forgotten. */
static void txn_quiet(struct cordon_dnsproxy *p, struct txn *t)
{
	if (t->fd >= 0) {
		if (p->epfd >= 0)
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, t->fd, NULL);
		close(t->fd);
		t->fd = -1;
	}
	t->udp = NULL;
}

/*
 * The answer is in hand: vet it, and either return it at once (nothing
 * to admit) or ask for its addresses to be admitted and keep it until
 * they are: the client must not connect before the sets hold them.
 */
static void dp_txn_complete(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len)
{
	struct verdict v;
	struct cordon_dns_admit req;
	uint64_t now = dp_now_ms(), left = UINT64_MAX;
	uint32_t ttl;
	int r;

	if (examine(p, t, buf, len, &v, true) < 0) {
		dp_txn_fail(p, t, "malformed upstream answer");
		return;
	}
	if (v.n_added == 0 || !p->cfg.admit) {
		answer_client(p, t, buf, len, &v, UINT32_MAX);
		return;
	}
	ttl = clamp_ttl(p, v.min_ttl);
	for (size_t i = 0; i < v.n_added; i++) {
		uint64_t l = admitted_left(p, &v.added[i], name_hash(t->q.name), now);

		if (l < left)
			left = l;
	}
	/* In the sets for long enough already: the client hears no more than is left. */
	if (left >= (uint64_t)ttl * 500 && left >= 1000) {
		p->stats.addrs_inserted += v.n_added;
		answer_client(p, t, buf, len, &v, (uint32_t)(left / 1000));
		return;
	}
	txn_quiet(p, t);
	t->answer = cordon_xmalloc(len);
	memcpy(t->answer, buf, len);
	t->answer_len = len;
	t->admitting = true;
	t->admit_token = ++p->admit_next;
	t->admit_ttl_s = ttl;
	t->admit_at_ms = now;
	t->deadline_ms = now + p->cfg.admit_timeout_ms;
	req = (struct cordon_dns_admit){
		.token = t->admit_token,
		.name = t->q.name,
		.qtype = t->q.qtype,
		.addrs = v.added,
		.n = v.n_added,
		.ttl_s = ttl,
	};
	r = p->cfg.admit(p->cfg.opaque, &req);
	/* The answer may have come inside the call, and ended t: test before touching it. */
	if (r < 0 && !t->dead && t->admitting)
		dp_txn_admitted(p, t, r, NULL, 0);
}

void dp_txn_admitted(struct cordon_dnsproxy *p, struct txn *t, int error,
		     const enum cordon_vet *verdicts, size_t n)
{
	struct verdict v;
	size_t kept = 0;

	t->admitting = false;
	if (error < 0) {
		/* A full set (the kernel enforces its size) is counted apart. */
		bool full = error == -ENOSPC || error == -E2BIG || error == -ENFILE;

		if (full)
			p->stats.set_full++;
		dp_txn_fail(p, t, full ? "allow set full" : "admitting the addresses failed");
		return;
	}
	if (examine(p, t, t->answer, t->answer_len, &v, false) < 0) {
		dp_txn_fail(p, t, "malformed upstream answer");
		return;
	}
	/* What was refused leaves the reply; an address without a verdict was not admitted. */
	for (size_t i = 0; i < v.n_added; i++) {
		enum cordon_vet why = verdicts && i < n ? verdicts[i] : CORDON_VET_BLOCKED;

		if (why == CORDON_VET_OK) {
			admitted_put(p, &v.added[i], name_hash(t->q.name),
				     t->admit_at_ms + (uint64_t)t->admit_ttl_s * 1000);
			v.added[kept] = v.added[i];
			v.added_rr[kept++] = v.added_rr[i];
			continue;
		}
		v.keep[v.added_rr[i]] = false;
		v.refused[v.n_refused] = v.added[i];
		v.why[v.n_refused++] = why;
		p->stats.addrs_refused++;
	}
	v.n_added = kept;
	p->stats.addrs_inserted += kept;
	answer_client(p, t, t->answer, t->answer_len, &v, t->admit_ttl_s);
}

void dp_upstream_readable(struct cordon_dnsproxy *p, struct txn *t, uint32_t events)
{
	if (!t->sent && (events & EPOLLOUT)) {
		ssize_t w = send(t->fd, t->buf + t->buf_off, t->buf_len - t->buf_off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno != EAGAIN)
				dp_txn_retry(p, t, "upstream TCP failed");
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
		ssize_t n = recv(t->fd, t->buf + t->buf_len, 2 + DNS_TCP_MAX - t->buf_len,
				 MSG_DONTWAIT);
		size_t want;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				dp_txn_retry(p, t, "upstream TCP failed");
			return;
		}
		if (n == 0) {
			dp_txn_retry(p, t, "upstream closed the connection");
			return;
		}
		t->buf_len += (size_t)n;
		if (t->buf_len < 2)
			continue;
		want = (size_t)(t->buf[0] << 8 | t->buf[1]);
		if (t->buf_len < 2 + want)
			continue;
		if (want < 12 || (uint16_t)(t->buf[2] << 8 | t->buf[3]) != t->upstream_id) {
			dp_txn_retry(p, t, "bad upstream TCP answer");
			return;
		}
		dp_txn_complete(p, t, t->buf + 2, want);
		return;
	}
}
