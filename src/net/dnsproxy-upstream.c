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

static void txn_fail(struct cordon_dnsproxy *p, struct txn *t, const char *note)
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

static int upstream_socket(struct cordon_dnsproxy *p, struct txn *t)
{
	const struct sockaddr_storage *ss = &p->cfg.upstreams[t->upstream];
	socklen_t len = dp_sockaddr_len(ss);
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
		   dp_sockaddr_len(ss)) < 0)
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
static void dp_txn_complete(struct cordon_dnsproxy *p, struct txn *t, uint8_t *buf, size_t len)
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
		keep[i] =
			m->rr[i].type != CORDON_DNS_TYPE_A && m->rr[i].type != CORDON_DNS_TYPE_AAAA;
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
		int r = p->cfg.insert ? p->cfg.insert(p->cfg.opaque, added, n_added, ttl * 1000) :
					0;

		if (r < 0) {
			/* A full set (the kernel enforces its size) is counted apart. */
			bool full = r == -ENOSPC || r == -E2BIG || r == -ENFILE;

			if (full)
				p->stats.set_full++;
			txn_fail(p, t,
				 full ? "allow set full" : "inserting into the allow sets failed");
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
		out_len = cordon_dns_build_error(t->query, t->query_len, CORDON_DNS_RCODE_NOERROR,
						 buf, len);
		if (out_len > 0)
			cordon_dns_set_tc(buf, (size_t)out_len, true);
	}
	if (out_len > 0)
		dp_reply(p, &t->client, t->client_len, t->tcp_client, buf, (size_t)out_len);
	dp_emit(p, &t->q, true, added, n_added, refused, why, n_refused, buf[3] & 0x0f, NULL);
	dp_txn_free(p, t);
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
