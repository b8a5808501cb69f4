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
#include "dnsproxy-internal.h"

socklen_t dp_sockaddr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

uint64_t dp_now_ms(void)
{
	return cordon_now_mono_us() / 1000;
}

void dp_emit(struct cordon_dnsproxy *p, const struct cordon_dns_question *q, bool allowed,
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

void dp_tcp_client_close(struct cordon_dnsproxy *p, struct tcp_client *c)
{
	if (c->dead)
		return;
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
	c->fd = -1;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	/* Not freed here: whoever called us may still hold it (see dead). */
	c->dead = true;
	c->next_dead = p->dead_clients;
	p->dead_clients = c;
}

static void tcp_client_flush(struct cordon_dnsproxy *p, struct tcp_client *c)
{
	if (c->dead)
		return;
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
		dp_tcp_client_close(p, c);
}

void dp_reply(struct cordon_dnsproxy *p, const struct sockaddr_storage *to, socklen_t to_len,
	      struct tcp_client *tc, const uint8_t *buf, size_t len)
{
	size_t queued;
	uint8_t *out;

	if (!tc) {
		/* The listener of the client's family: the query came in on it. */
		for (size_t i = 0; i < p->n_udp; i++)
			if (p->udp[i].family == to->ss_family)
				sendto(p->udp[i].fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL,
				       (const struct sockaddr *)to, to_len);
		return;
	}
	if (tc->dead)
		return;
	/* Pipelined queries each get their answer, queued behind what is unsent. */
	queued = tc->out ? tc->out_len - tc->out_off : 0;
	if (queued + len + 2 > TCP_CLIENT_OUT_MAX) {
		/* A client that never reads its answers loses the connection. */
		free(tc->out);
		tc->out = NULL;
		tc->out_len = tc->out_off = 0;
		dp_tcp_client_close(p, tc);
		return;
	}
	out = cordon_xmalloc(queued + len + 2);
	if (queued)
		memcpy(out, tc->out + tc->out_off, queued);
	out[queued] = (uint8_t)(len >> 8);
	out[queued + 1] = (uint8_t)len;
	memcpy(out + queued + 2, buf, len);
	free(tc->out);
	tc->out = out;
	tc->out_len = queued + len + 2;
	tc->out_off = 0;
	tcp_client_flush(p, tc);
}

void dp_reply_error(struct cordon_dnsproxy *p, const uint8_t *query, size_t qlen,
		    const struct sockaddr_storage *to, socklen_t to_len, struct tcp_client *tc,
		    int rcode)
{
	uint8_t out[CLIENT_UDP_MAX];
	ssize_t n = cordon_dns_build_error(query, qlen, rcode, out, sizeof(out));

	if (n > 0)
		dp_reply(p, to, to_len, tc, out, (size_t)n);
}

/* --- queries --------------------------------------------------------------- */

/*
 * A fresh random id for an upstream query: from the kernel's generator,
 * fetched RANDOM_IDS at a time (a getrandom call a query was one system
 * call in nine of the proxy's). What is left of the batch lives only in
 * the proxy's memory, which the workload cannot read without owning the
 * proxy, and then it sends what it likes anyway.
 */
static uint16_t random_id(struct cordon_dnsproxy *p)
{
	if (p->n_random == 0) {
		if (getrandom(p->random, sizeof(p->random), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(p->random))
			return (uint16_t)cordon_now_mono_us();
		p->n_random = RANDOM_IDS;
	}
	return p->random[--p->n_random];
}

static bool take_token(struct cordon_dnsproxy *p)
{
	uint64_t now = dp_now_ms();

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
	uint8_t up[CORDON_DNS_QUERY_MAX];
	ssize_t up_len;
	struct txn *t;
	uint16_t rid;

	if (len < 12 || (buf[2] & 0x80))
		return; /* too short to answer, or a response: drop */
	p->stats.queries++;
	if (!take_token(p)) {
		p->stats.rate_limited++;
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_REFUSED);
		dp_emit(p, NULL, false, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_REFUSED,
			"rate limited");
		return;
	}
	if (((buf[2] >> 3) & 0x0f) != 0) { /* opcode other than QUERY */
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_NOTIMP);
		return;
	}
	if (cordon_dns_parse_question(buf, len, m) < 0) {
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_FORMERR);
		return;
	}
	/* Class IN only: another class is sixteen more bits the upstream would see. */
	if (m->question.qclass != CORDON_DNS_CLASS_IN) {
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_NOTIMP);
		return;
	}
	if (!cordon_allowlist_match_name(p->cfg.allowlist, m->question.name)) {
		p->stats.denied++;
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_NXDOMAIN);
		dp_emit(p, &m->question, false, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_NXDOMAIN,
			NULL);
		return;
	}
	p->stats.allowed++;
	if (p->inflight >= p->cfg.max_inflight || len > DNS_TCP_MAX) {
		p->stats.inflight_limited++;
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_SERVFAIL);
		dp_emit(p, &m->question, true, NULL, 0, NULL, NULL, 0, CORDON_DNS_RCODE_SERVFAIL,
			"too many queries in flight");
		return;
	}
	/*
	 * What goes upstream is cordon's own query for the parsed question,
	 * never the client's message: its other records, EDNS options and
	 * trailing bytes (up to 64 KiB over TCP) would reach the upstream
	 * resolver as a channel out of the sandbox.
	 */
	up_len = cordon_dns_rebuild_query(buf, len, 0, up, sizeof(up));
	if (up_len < 0) {
		dp_reply_error(p, buf, len, from, from_len, tc, CORDON_DNS_RCODE_FORMERR);
		return;
	}
	t = cordon_xcalloc(1, sizeof(*t));
	t->tag = (struct tag){ TAG_UPSTREAM, t };
	t->fd = -1;
	t->q = m->question;
	t->client_id = (uint16_t)(buf[0] << 8 | buf[1]);
	/* A fresh id upstream: the workload cannot predict what we wait for. */
	for (bool taken = true; taken;) {
		rid = random_id(p);
		taken = false;
		for (struct txn *o = p->txns; o; o = o->next)
			taken = taken || o->upstream_id == rid;
	}
	t->upstream_id = rid;
	t->query = cordon_xmalloc((size_t)up_len);
	memcpy(t->query, up, (size_t)up_len);
	t->query[0] = (uint8_t)(rid >> 8);
	t->query[1] = (uint8_t)rid;
	t->query_len = (size_t)up_len;
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
	if (dp_txn_send(p, t) < 0)
		dp_txn_retry(p, t, "upstream unreachable");
}

/*
 * Is the source one of the workload's addresses? Compared as the socket
 * saw it: an IPv4-mapped IPv6 source is an IPv6 address, never the IPv4
 * one it names, and no listener is dual-stack.
 */
static bool from_client(const struct cordon_dnsproxy *p, const struct sockaddr_storage *ss,
			socklen_t len)
{
	const void *bytes;
	size_t n;

	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		bytes = &((const struct sockaddr_in *)ss)->sin_addr;
		n = 4;
	} else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		bytes = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		n = 16;
	} else {
		return false;
	}
	for (size_t i = 0; i < p->cfg.n_clients; i++)
		if (p->client_addrs[i].family == ss->ss_family &&
		    memcmp(p->client_addrs[i].u.bytes, bytes, n) == 0)
			return true;
	return false;
}

static void udp_readable(struct cordon_dnsproxy *p, struct listener *l)
{
	for (int i = 0; i < 64; i++) {
		uint8_t buf[DNS_UDP_MAX];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(l->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &from_len);

		if (n < 0)
			return;
		/* Never answered: a reply would go wherever the source says. */
		if (!from_client(p, &from, from_len)) {
			p->stats.foreign++;
			continue;
		}
		query(p, buf, (size_t)n, &from, from_len, NULL);
	}
}

static void tcp_accept(struct cordon_dnsproxy *p, struct listener *l)
{
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		int fd = accept4(l->fd, (struct sockaddr *)&peer, &peer_len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct tcp_client *c;
		struct epoll_event ev;
		size_t slot;

		if (fd < 0)
			return;
		if (!from_client(p, &peer, peer_len)) {
			p->stats.foreign++;
			close(fd);
			continue;
		}
		for (slot = 0; slot < MAX_TCP_CLIENTS && p->clients[slot]; slot++)
			;
		if (slot == MAX_TCP_CLIENTS) {
			close(fd); /* bounded: a client may not hold more */
			continue;
		}
		c = cordon_xcalloc(1, sizeof(*c));
		c->tag = (struct tag){ TAG_TCP_CLIENT, c };
		c->fd = fd;
		c->deadline_ms = dp_now_ms() + TCP_CLIENT_IDLE_MS;
		ev = (struct epoll_event){ .events = EPOLLIN | EPOLLOUT | EPOLLET,
					   .data.ptr = &c->tag };
		if (p->epfd >= 0 && epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		p->clients[slot] = c;
	}
}

/* Read and answer what the client sent; stops once the client is dead or closing. */
static void tcp_client_read(struct cordon_dnsproxy *p, struct tcp_client *c)
{
	while (!c->dead && !c->closed) {
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		size_t want;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				dp_tcp_client_close(p, c);
			return;
		}
		if (n == 0) {
			dp_tcp_client_close(p, c);
			return;
		}
		c->in_len += (size_t)n;
		c->deadline_ms = dp_now_ms() + TCP_CLIENT_IDLE_MS;
		/* query() may answer at once, and a failed send closes the client. */
		while (!c->dead && !c->closed && c->in_len >= 2) {
			want = (size_t)(c->in[0] << 8 | c->in[1]);
			if (c->in_len < 2 + want)
				break;
			query(p, c->in + 2, want, NULL, 0, c);
			memmove(c->in, c->in + 2 + want, c->in_len - 2 - want);
			c->in_len -= 2 + want;
		}
	}
}

/*
 * One epoll event of a client. Whatever closes the client on the way (a
 * failed send in a flush, a reset, the end of the stream) marks it dead
 * and leaves the memory to the tick; each step checks the mark first.
 */
static void tcp_client_io(struct cordon_dnsproxy *p, struct tcp_client *c, uint32_t events)
{
	if (events & EPOLLOUT)
		tcp_client_flush(p, c);
	if (!c->dead && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		tcp_client_read(p, c);
}

/* The end of a loop iteration: no event of its batch can name these any more. */
static void release_dead(struct cordon_dnsproxy *p)
{
	while (p->dead_clients) {
		struct tcp_client *c = p->dead_clients;

		p->dead_clients = c->next_dead;
		free(c);
	}
	while (p->dead_txns) {
		struct txn *t = p->dead_txns;

		p->dead_txns = t->next;
		free(t->buf);
		free(t->query);
		free(t->answer);
		free(t);
	}
}

/* --- the public face ---------------------------------------------------------- */

/* Take the listeners of one kind; 0, or -1 (err set) for a socket we cannot use. */
static int take_listeners(struct listener *ls, size_t *n_out, const int *fds, size_t n,
			  enum tag_kind kind, const char *what, struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		ls[i] = (struct listener){ .tag = { kind, &ls[i] }, .fd = fds[i] };
		*n_out = i + 1;
		if (fds[i] < 0 || getsockname(fds[i], (struct sockaddr *)&ss, &len) < 0)
			return cordon_error_set(err, CORDON_E_NET_POLICY,
						fds[i] < 0 ? EBADF : errno,
						"DNS proxy: %s socket %zu", what, i);
		ls[i].family = ss.ss_family;
		for (size_t k = 0; kind == TAG_UDP_LISTEN && k < i; k++)
			if (ls[k].family == ls[i].family)
				return cordon_error_set(
					err, CORDON_E_NET_POLICY, EINVAL,
					"DNS proxy: two UDP sockets of one address family");
	}
	return 0;
}

static void close_fds(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

struct cordon_dnsproxy *cordon_dnsproxy_new(const struct cordon_dnsproxy_config *cfg,
					    const int *udp_fds, size_t n_udp, const int *tcp_fds,
					    size_t n_tcp, struct cordon_error *err)
{
	struct cordon_dnsproxy *p;

	if (!cfg->allowlist || cfg->n_upstreams == 0 || !cfg->upstreams ||
	    cfg->n_upstreams > CORDON_DNSPROXY_MAX_UPSTREAMS) {
		cordon_error_set(err, CORDON_E_NET_POLICY, 0,
				 "DNS proxy: no allowlist, or no upstream or more than %d",
				 CORDON_DNSPROXY_MAX_UPSTREAMS);
		close_fds(udp_fds, n_udp);
		close_fds(tcp_fds, n_tcp);
		return NULL;
	}
	if (!cfg->clients || cfg->n_clients == 0 || cfg->n_clients > CORDON_DNSPROXY_MAX_CLIENTS) {
		cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
				 "DNS proxy: %zu client addresses (1 to %d)", cfg->n_clients,
				 CORDON_DNSPROXY_MAX_CLIENTS);
		close_fds(udp_fds, n_udp);
		close_fds(tcp_fds, n_tcp);
		return NULL;
	}
	if (n_udp > CORDON_DNSPROXY_MAX_LISTENERS || n_tcp > CORDON_DNSPROXY_MAX_LISTENERS) {
		cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
				 "DNS proxy: more than %d listening sockets of a kind",
				 CORDON_DNSPROXY_MAX_LISTENERS);
		close_fds(udp_fds, n_udp);
		close_fds(tcp_fds, n_tcp);
		return NULL;
	}
	p = cordon_xcalloc(1, sizeof(*p));
	p->epfd = -1;
	if (take_listeners(p->udp, &p->n_udp, udp_fds, n_udp, TAG_UDP_LISTEN, "UDP", err) < 0 ||
	    take_listeners(p->tcp, &p->n_tcp, tcp_fds, n_tcp, TAG_TCP_LISTEN, "TCP", err) < 0) {
		/* Ours now, taken or not. */
		close_fds(udp_fds, n_udp);
		close_fds(tcp_fds, n_tcp);
		free(p);
		return NULL;
	}
	p->cfg = *cfg;
	memcpy(p->client_addrs, cfg->clients, cfg->n_clients * sizeof(*cfg->clients));
	p->cfg.clients = p->client_addrs;
	if (!p->cfg.upstream_timeout_ms)
		p->cfg.upstream_timeout_ms = 2000;
	if (!p->cfg.ttl_floor_s)
		p->cfg.ttl_floor_s = CORDON_DNS_TTL_FLOOR_S;
	if (!p->cfg.ttl_ceiling_s)
		p->cfg.ttl_ceiling_s = CORDON_DNS_TTL_CEILING_S;
	if (!p->cfg.max_inflight)
		p->cfg.max_inflight = 64;
	if (!p->cfg.admit_timeout_ms)
		p->cfg.admit_timeout_ms = 2000;
	if (!p->cfg.max_addrs_per_reply || p->cfg.max_addrs_per_reply > CORDON_DNS_ADMIT_MAX)
		p->cfg.max_addrs_per_reply = CORDON_DNS_ADMIT_MAX;
	p->tokens = p->cfg.qps;
	p->tokens_at_ms = dp_now_ms();
	p->n_cidrs = cordon_allowlist_cidrs(cfg->allowlist, &p->cidrs);
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
		dp_txn_free(p, t);
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
		if (p->clients[i]) {
			p->clients[i]->pending = 0;
			dp_tcp_client_close(p, p->clients[i]);
		}
	}
	release_dead(p);
	for (size_t i = 0; i < ARRAY_SIZE(p->pool); i++)
		for (size_t k = 0; k < UDP_POOL; k++)
			if (p->pool[i][k].fd > 0)
				close(p->pool[i][k].fd);
	for (size_t i = 0; i < p->n_udp; i++)
		close(p->udp[i].fd);
	for (size_t i = 0; i < p->n_tcp; i++)
		close(p->tcp[i].fd);
	free(p->admitted);
	free(p->msg);
	free(p);
}

int cordon_dnsproxy_attach(struct cordon_dnsproxy *p, int epfd, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	p->epfd = epfd;
	for (size_t i = 0; i < p->n_udp + p->n_tcp; i++) {
		struct listener *l = i < p->n_udp ? &p->udp[i] : &p->tcp[i - p->n_udp];

		ev.data.ptr = &l->tag;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, l->fd, &ev) < 0)
			return cordon_error_set(err, CORDON_E_NET_POLICY, errno,
						"DNS proxy: epoll");
	}
	return 0;
}

int cordon_dnsproxy_handle(struct cordon_dnsproxy *p, void *tagp, uint32_t events)
{
	struct tag *tag = tagp;

	for (size_t i = 0; i < p->n_udp; i++) {
		if (tag == &p->udp[i].tag) {
			udp_readable(p, &p->udp[i]);
			return 1;
		}
	}
	for (size_t i = 0; i < p->n_tcp; i++) {
		if (tag == &p->tcp[i].tag) {
			tcp_accept(p, &p->tcp[i]);
			return 1;
		}
	}
	/*
	 * The tag is compared, never read, until it is known to be live: a
	 * stale one (its object closed earlier in this batch) matches nothing.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(p->pool); i++) {
		for (size_t k = 0; k < UDP_POOL; k++) {
			if (tag == &p->pool[i][k].tag) {
				if (p->pool[i][k].fd > 0)
					dp_pool_readable(p, &p->pool[i][k]);
				return 1;
			}
		}
	}
	for (struct txn *t = p->txns; t; t = t->next) {
		if (tag == &t->tag) {
			if (!t->admitting) /* its socket is closed: a stale event */
				dp_upstream_readable(p, t, events);
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
	uint64_t now = dp_now_ms(), next = UINT64_MAX;

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
	uint64_t now = dp_now_ms();
	struct txn *t = p->txns;

	while (t) {
		struct txn *next = t->next;

		if (t->dead || t->deadline_ms > now)
			;
		else if (t->admitting)
			dp_txn_admitted(p, t, -ETIMEDOUT, NULL, 0);
		else
			dp_txn_retry(p, t, "upstream timeout");
		t = next;
	}
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i] && p->clients[i]->deadline_ms <= now && !p->clients[i]->pending)
			dp_tcp_client_close(p, p->clients[i]);
	release_dead(p);
}

void cordon_dnsproxy_stats(const struct cordon_dnsproxy *p, struct cordon_dnsproxy_stats *out)
{
	*out = p->stats;
}

void cordon_dnsproxy_set_allowlist(struct cordon_dnsproxy *p, const struct cordon_allowlist *al)
{
	p->cfg.allowlist = al;
	p->n_cidrs = cordon_allowlist_cidrs(al, &p->cidrs);
	/* What the sets held was the old policy's: every address is asked for again. */
	if (p->cap_admitted)
		memset(p->admitted, 0, p->cap_admitted * sizeof(*p->admitted));
}

void cordon_dnsproxy_admitted(struct cordon_dnsproxy *p, uint32_t token, int error,
			      const enum cordon_vet *verdicts, size_t n)
{
	for (struct txn *t = p->txns; t; t = t->next) {
		if (t->admitting && t->admit_token == token) {
			dp_txn_admitted(p, t, error, verdicts, n);
			return;
		}
	}
}
