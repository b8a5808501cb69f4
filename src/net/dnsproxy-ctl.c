// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS proxy's channel to the supervisor (include/cordon/net.h, "The
 * DNS proxy's channel"): both ends of it. The proxy's end is its
 * process's whole loop, cordon_dnsproxy_serve; the supervisor's end is
 * the check of every message it reads and the re-vetting of every admit,
 * so that a proxy taken over by the workload it serves can at worst
 * admit public addresses for its own sandbox.
 */
#include "dnsproxy-internal.h"

/* --- the supervisor's end --------------------------------------------------- */

static bool zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

static bool addr_ok(const struct cordon_dnsctl_addr *a)
{
	size_t len;

	if (a->family == AF_INET)
		len = 4;
	else if (a->family == AF_INET6)
		len = 16;
	else
		return false;
	return a->why < CORDON_VET_COUNT && zero(a->bytes + len, sizeof(a->bytes) - len);
}

/* n used entries, each well formed; the rest all zero. */
static bool addrs_ok(const struct cordon_dnsctl_addr *v, size_t cap, size_t n)
{
	if (n > cap)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!addr_ok(&v[i]))
			return false;
	return zero(v + n, (cap - n) * sizeof(*v));
}

/*
 * NUL-terminated, printable ASCII from lowest (0x21: without spaces, the
 * proxy escapes the rest; 0x20 for a reason in words), zero after.
 */
static bool name_ok(const char *name, size_t cap, bool empty_ok, unsigned char lowest)
{
	size_t len = strnlen(name, cap);

	if (len == cap || (len == 0 && !empty_ok))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < lowest || (unsigned char)name[i] > 0x7e)
			return false;
	return zero(name + len, cap - len);
}

/* The fields a type of message carries: every other byte of it is zero. */
enum carried {
	CARRIES_TOKEN = 1 << 0,
	CARRIES_TTL = 1 << 1,
	CARRIES_QTYPE = 1 << 2,
	CARRIES_ALLOWED = 1 << 3,
	CARRIES_RCODE = 1 << 4,
	CARRIES_ADDRS = 1 << 5,	  /* n_addrs, addrs */
	CARRIES_REFUSED = 1 << 6, /* n_refused, refused */
	CARRIES_NAME = 1 << 7,
	CARRIES_STATS = 1 << 8,
	CARRIES_ERROR = 1 << 9,
};

static bool carries_only(const struct cordon_dnsctl_msg *m, unsigned carried)
{
	struct cordon_dnsctl_msg rest;

	memcpy(&rest, m, sizeof(rest));
	rest.type = 0;
	if (carried & CARRIES_TOKEN)
		rest.token = 0;
	if (carried & CARRIES_TTL)
		rest.ttl_s = 0;
	if (carried & CARRIES_QTYPE)
		rest.qtype = 0;
	if (carried & CARRIES_ALLOWED)
		rest.allowed = 0;
	if (carried & CARRIES_RCODE)
		rest.rcode = 0;
	if (carried & CARRIES_ADDRS) {
		rest.n_addrs = 0;
		memset(rest.addrs, 0, sizeof(rest.addrs));
	}
	if (carried & CARRIES_REFUSED) {
		rest.n_refused = 0;
		memset(rest.refused, 0, sizeof(rest.refused));
	}
	if (carried & CARRIES_NAME)
		memset(rest.name, 0, sizeof(rest.name));
	if (carried & CARRIES_STATS)
		memset(&rest.stats, 0, sizeof(rest.stats));
	if (carried & CARRIES_ERROR)
		rest.error = 0;
	return zero(&rest, sizeof(rest));
}

int cordon_dnsctl_check(const void *buf, size_t len, const char **why)
{
	const struct cordon_dnsctl_msg *m = buf;

	if (len != sizeof(*m)) {
		*why = "a message of the wrong size";
		return -1;
	}
	if (m->pad[0] || m->pad[1]) {
		*why = "padding not zero";
		return -1;
	}
	switch (m->type) {
	case CORDON_DNSCTL_READY:
		if (!carries_only(m, 0)) {
			*why = "READY carries data";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_ADMIT:
		if (m->n_addrs == 0 || !addrs_ok(m->addrs, ARRAY_SIZE(m->addrs), m->n_addrs) ||
		    m->n_refused || !zero(m->refused, sizeof(m->refused))) {
			*why = "ADMIT with bad addresses";
			return -1;
		}
		for (size_t i = 0; i < m->n_addrs; i++) {
			if (m->addrs[i].why != CORDON_VET_OK) {
				*why = "ADMIT with a verdict";
				return -1;
			}
		}
		if (!name_ok(m->name, sizeof(m->name), false, 0x21)) {
			*why = "ADMIT with a bad name";
			return -1;
		}
		if (!carries_only(m, CARRIES_TOKEN | CARRIES_TTL | CARRIES_QTYPE | CARRIES_ADDRS |
					     CARRIES_NAME)) {
			*why = "ADMIT with a field it does not carry";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_EVENT:
		if (!addrs_ok(m->addrs, ARRAY_SIZE(m->addrs), m->n_addrs) ||
		    !addrs_ok(m->refused, ARRAY_SIZE(m->refused), m->n_refused)) {
			*why = "EVENT with bad addresses";
			return -1;
		}
		for (size_t i = 0; i < m->n_refused; i++) {
			if (m->refused[i].why == CORDON_VET_OK) {
				*why = "EVENT refusing an address without a reason";
				return -1;
			}
		}
		if (m->allowed > 1 || m->rcode > 15 ||
		    !name_ok(m->name, sizeof(m->name), true, 0x21)) {
			*why = "EVENT with a bad field";
			return -1;
		}
		if (!carries_only(m, CARRIES_QTYPE | CARRIES_ALLOWED | CARRIES_RCODE |
					     CARRIES_ADDRS | CARRIES_REFUSED | CARRIES_NAME)) {
			*why = "EVENT with a field it does not carry";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_STATS:
		if (!carries_only(m, CARRIES_STATS)) {
			*why = "STATS with a field it does not carry";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_SOCKET:
		if (m->token >= CORDON_DNSPROXY_MAX_UPSTREAMS ||
		    (m->qtype != SOCK_DGRAM && m->qtype != SOCK_STREAM) ||
		    !carries_only(m, CARRIES_TOKEN | CARRIES_QTYPE)) {
			*why = "SOCKET with a bad field";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_POLICY:
		/* Its answer: the update's length back, and 0 or a negative errno. */
		if (m->error > 0 || m->error < -4095 || !carries_only(m, CARRIES_TOKEN | CARRIES_ERROR)) {
			*why = "POLICY with a bad field";
			return -1;
		}
		return 0;
	case CORDON_DNSCTL_FAILED:
		/* Its reason reaches the caller's terminal: words, nothing a terminal acts on. */
		if (!name_ok(m->name, sizeof(m->name), true, 0x20) ||
		    !carries_only(m, CARRIES_NAME)) {
			*why = "FAILED with a bad reason";
			return -1;
		}
		return 0;
	default:
		*why = "an unknown message type";
		return -1;
	}
}

int cordon_dnsctl_check_datagram(const void *buf, size_t len, const char **why)
{
	const struct cordon_dnsctl_msg *m = buf;
	size_t n = len / sizeof(*m);

	if (n == 0 || len % sizeof(*m) != 0 || n > CORDON_DNSCTL_EVENTS_MAX) {
		*why = "a message of the wrong size";
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (cordon_dnsctl_check(&m[i], sizeof(*m), why) < 0)
			return -1;
		if (n > 1 && m[i].type != CORDON_DNSCTL_EVENT) {
			*why = "a message other than EVENT among several";
			return -1;
		}
	}
	return (int)n;
}

void cordon_dnsctl_addr_get(const struct cordon_dnsctl_addr *in, struct cordon_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = in->family == AF_INET6 ? AF_INET6 : AF_INET;
	memcpy(out->u.bytes, in->bytes, out->family == AF_INET6 ? 16 : 4);
}

void cordon_dnsctl_addr_put(const struct cordon_addr *in, enum cordon_vet why,
			    struct cordon_dnsctl_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = (uint8_t)in->family;
	out->why = (uint8_t)why;
	memcpy(out->bytes, in->u.bytes, in->family == AF_INET6 ? 16 : 4);
}

size_t cordon_dnsctl_vet_admit(const struct cordon_allowlist *al, const struct cordon_cidr *blocked,
			       size_t n_blocked, const char *name, const struct cordon_addr *addrs,
			       size_t n, enum cordon_vet *why)
{
	const struct cordon_cidr *cidrs;
	size_t n_cidrs = cordon_allowlist_cidrs(al, &cidrs), admitted = 0;
	bool listed = cordon_allowlist_match_name(al, name);

	for (size_t i = 0; i < n; i++) {
		struct cordon_cidr one = {
			.addr = addrs[i],
			.prefix = addrs[i].family == AF_INET ? 32 : 128,
		};

		struct cordon_addr v4[8];
		size_t n_v4 = cordon_addr_embedded4(&addrs[i], v4);

		why[i] = listed ? cordon_addr_vet(&addrs[i], cidrs, n_cidrs) : CORDON_VET_NAME;
		for (size_t k = 0; why[i] == CORDON_VET_OK && k < n_blocked; k++)
			if (cordon_cidr_within(&one, &blocked[k]))
				why[i] = CORDON_VET_BLOCKED;
		/* An IPv6 form of a blocked IPv4 address (::ffff:<the host's>) is blocked too. */
		for (size_t e = 0; why[i] == CORDON_VET_OK && e < n_v4; e++)
			for (size_t k = 0; k < n_blocked; k++)
				if (cordon_cidr_contains(&blocked[k], &v4[e]))
					why[i] = CORDON_VET_BLOCKED;
		admitted += why[i] == CORDON_VET_OK;
	}
	return admitted;
}

/* --- the proxy's end ---------------------------------------------------------- */

/*
 * The question's name for a message: the bytes the report can carry as
 * they are, every other byte (a space, a control character, a byte of
 * eight bits, the escape itself) as \DDD, cut where it no longer fits.
 */
static void put_name(char *dst, size_t cap, const char *name)
{
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		bool plain = *s > 0x20 && *s < 0x7f && *s != '\\';
		size_t need = plain ? 1 : 4;

		if (o + need >= cap)
			break;
		if (plain)
			dst[o++] = (char)*s;
		else
			o += (size_t)snprintf(dst + o, cap - o, "\\%03u", *s);
	}
	dst[o] = '\0';
}

/* n messages in one datagram (n > 1: EVENTs only). */
static int ctl_send_n(int ctl, const struct cordon_dnsctl_msg *m, size_t n)
{
	ssize_t w;

	do
		w = send(ctl, m, n * sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return w == (ssize_t)(n * sizeof(*m)) ? 0 : -EIO;
}

static int ctl_send(int ctl, const struct cordon_dnsctl_msg *m)
{
	return ctl_send_n(ctl, m, 1);
}

/*
 * The EVENTs gathered, in one datagram: at the end of each turn of the
 * loop, when CORDON_DNSCTL_EVENTS_MAX are waiting, and before any other
 * message, so that the supervisor reads everything in the order it
 * happened. Best effort, as each EVENT was: a full channel loses them.
 */
static void serve_flush(struct dp_serve *s)
{
	if (s->n_events)
		ctl_send_n(s->ctl, s->events, s->n_events);
	s->n_events = 0;
}

/* Every other message of the proxy's goes out through here, after the EVENTs before it. */
static int serve_send(struct dp_serve *s, const struct cordon_dnsctl_msg *m)
{
	serve_flush(s);
	return ctl_send(s->ctl, m);
}

#ifdef CORDON_TEST_LAB
/*
 * Test-only, compiled in only with -DCORDON_TEST_LAB (the lab build,
 * docs/network.md "Testing"): CORDON_LAB_DNS_FORGE_ADMIT, addresses
 * separated by commas, which the proxy adds to every admit it sends, as
 * a proxy taken over by the workload would. The supervisor must refuse
 * them. Read from the environment copied at fork: no system call.
 */
static void lab_forge(struct cordon_dnsctl_msg *m)
{
	const char *list = getenv("CORDON_LAB_DNS_FORGE_ADMIT");
	char one[INET6_ADDRSTRLEN];

	while (list && *list && m->n_addrs < CORDON_DNS_ADMIT_MAX) {
		size_t len = strcspn(list, ",");
		struct cordon_addr a;

		if (len < sizeof(one)) {
			memcpy(one, list, len);
			one[len] = '\0';
			if (cordon_addr_parse(one, &a) == 0)
				cordon_dnsctl_addr_put(&a, CORDON_VET_OK, &m->addrs[m->n_addrs++]);
		}
		list += len + (list[len] == ',');
	}
}
#else
static void lab_forge(struct cordon_dnsctl_msg *m)
{
	(void)m; /* production builds ignore the variable */
}
#endif

static int serve_admit(void *opaque, const struct cordon_dns_admit *req)
{
	struct dp_serve *s = opaque;
	struct cordon_dnsctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_ADMIT;
	m.token = req->token;
	m.ttl_s = req->ttl_s;
	m.qtype = req->qtype;
	m.n_addrs = (uint8_t)(req->n < CORDON_DNS_ADMIT_MAX ? req->n : CORDON_DNS_ADMIT_MAX);
	put_name(m.name, sizeof(m.name), req->name);
	for (size_t i = 0; i < m.n_addrs; i++)
		cordon_dnsctl_addr_put(&req->addrs[i], CORDON_VET_OK, &m.addrs[i]);
	lab_forge(&m);
	return serve_send(s, &m);
}

/*
 * A socket from the supervisor: ask, and wait for the answer (bounded:
 * the supervisor answers at once, or is gone). The answer carries the
 * socket or an error.
 */
static int serve_upstream_socket(void *opaque, size_t upstream, int type)
{
	struct dp_serve *s = opaque;
	struct cordon_dnsctl_msg m;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct epoll_event ev;
	int fd = -1, r;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_SOCKET;
	m.token = (uint32_t)upstream;
	m.qtype = (uint16_t)type;
	r = ctl_send(s->sockets, &m);
	if (r < 0)
		return r;
	do
		r = epoll_wait(s->sockets_ep, &ev, 1, 2000);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return r < 0 ? -errno : -ETIMEDOUT;
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof(control.buf);
	do
		n = recvmsg(s->sockets, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(m) || m.type != CORDON_DNSCTL_SOCKET || m.error > 0 ||
	    (fd < 0) == (m.error == 0)) {
		if (fd >= 0)
			close(fd);
		return n == 0 ? -EPIPE : m.error < 0 ? m.error : -EPROTO;
	}
	return fd;
}

/* For the report only: gathered, and sent with the others of this turn (serve_flush). */
static void serve_event(void *opaque, const struct cordon_dns_event *ev)
{
	struct dp_serve *s = opaque;
	struct cordon_dnsctl_msg *m = &s->events[s->n_events++];

	memset(m, 0, sizeof(*m));
	m->type = CORDON_DNSCTL_EVENT;
	m->qtype = ev->qtype;
	m->allowed = ev->allowed;
	m->rcode = (uint8_t)(ev->rcode & 0x0f);
	put_name(m->name, sizeof(m->name), ev->name ? ev->name : "");
	m->n_addrs =
		(uint8_t)(ev->n_added < CORDON_DNS_ADMIT_MAX ? ev->n_added : CORDON_DNS_ADMIT_MAX);
	for (size_t i = 0; i < m->n_addrs; i++)
		cordon_dnsctl_addr_put(&ev->added[i], CORDON_VET_OK, &m->addrs[i]);
	m->n_refused = (uint8_t)(ev->n_refused < CORDON_DNS_ADMIT_MAX ? ev->n_refused :
									 CORDON_DNS_ADMIT_MAX);
	for (size_t i = 0; i < m->n_refused; i++)
		cordon_dnsctl_addr_put(&ev->refused[i], ev->refused_why[i], &m->refused[i]);
	if (s->n_events == CORDON_DNSCTL_EVENTS_MAX)
		serve_flush(s);
}

/*
 * What the supervisor says. It is trusted, but a verdict is still read
 * only within its bounds. 0 to go on, 1 when it hung up, -1 on an error.
 */
/*
 * POLICY: the new allowlist, from the sealed memfd the supervisor sent
 * (len bytes, one entry a line, each already validated there). The proxy
 * may not read a file: the memfd is mapped. 0, or -errno (the policy
 * stays as it was; the supervisor ends the sandbox).
 */
static int serve_policy(struct dp_serve *s, int fd, uint32_t len)
{
	struct cordon_allowlist *al;
	struct cordon_error err = { 0 };
	char *text, *save = NULL;
	void *map = NULL;

	if (fd < 0 || len > CORDON_DNSCTL_POLICY_MAX)
		return -EINVAL;
	if (len) {
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			return -errno;
	}
	text = cordon_xmalloc((size_t)len + 1);
	if (len)
		memcpy(text, map, len);
	text[len] = '\0';
	if (map)
		munmap(map, len);
	al = cordon_allowlist_new();
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (cordon_allowlist_add(al, line, true, &err) < 0) {
			cordon_allowlist_free(al);
			free(text);
			return -EINVAL;
		}
	}
	free(text);
	cordon_dnsproxy_set_allowlist(s->p, al);
	cordon_allowlist_free(s->allowlist);
	s->allowlist = al;
	return 0;
}

/* One message and at most one fd with it (-1 when none came; any more are closed). */
static ssize_t ctl_recv(int ctl, struct cordon_dnsctl_msg *m, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	/* MSG_TRUNC: the whole length, so that a longer message is not taken as one. */
	ssize_t r = recvmsg(ctl, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (r < 0)
		return r;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return r;
}

static int serve_ctl(struct dp_serve *s)
{
	for (;;) {
		struct cordon_dnsctl_msg m;
		enum cordon_vet v[CORDON_DNS_ADMIT_MAX];
		int fd;
		ssize_t r = ctl_recv(s->ctl, &m, &fd);

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		/* A hang-up with our messages unread reads as a reset. */
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
		if (r < 0)
			return -1;
		if (r != (ssize_t)sizeof(m)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (m.type == CORDON_DNSCTL_POLICY) {
			uint32_t len = m.token;

			memset(&m, 0, sizeof(m));
			m.type = CORDON_DNSCTL_POLICY;
			m.token = len;
			m.error = serve_policy(s, fd, len);
			serve_send(s, &m);
		} else if (m.type == CORDON_DNSCTL_ADMITTED) {
			size_t n =
				m.n_addrs < CORDON_DNS_ADMIT_MAX ? m.n_addrs : CORDON_DNS_ADMIT_MAX;

			for (size_t i = 0; i < n; i++)
				v[i] = m.addrs[i].why < CORDON_VET_COUNT ?
					       (enum cordon_vet)m.addrs[i].why :
					       CORDON_VET_BLOCKED;
			cordon_dnsproxy_admitted(s->p, m.token, m.error > 0 ? -EIO : m.error, v, n);
		} else if (m.type == CORDON_DNSCTL_STATS) {
			memset(&m, 0, sizeof(m));
			m.type = CORDON_DNSCTL_STATS;
			cordon_dnsproxy_stats(s->p, &m.stats);
			serve_send(s, &m);
		}
		if (fd >= 0)
			close(fd);
	}
}

int dp_serve_start(struct dp_serve *s, const struct cordon_dnsproxy_config *cfg, const int *udp_fds,
		   size_t n_udp, const int *tcp_fds, size_t n_tcp, int ctl,
		   struct cordon_error *err)
{
	struct cordon_dnsproxy_config own = *cfg;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

	*s = (struct dp_serve){ .ctl = ctl, .epfd = -1, .sockets = -1, .sockets_ep = -1 };
	s->events = cordon_xcalloc(CORDON_DNSCTL_EVENTS_MAX, sizeof(*s->events));
	own.admit = serve_admit;
	own.event = serve_event;
	own.opaque = s;
	s->p = cordon_dnsproxy_new(&own, udp_fds, n_udp, tcp_fds, n_tcp, err);
	if (!s->p)
		return -1;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, ctl, &ev) < 0) {
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy: epoll");
		dp_serve_stop(s);
		return -1;
	}
	if (cordon_dnsproxy_attach(s->p, s->epfd, err) < 0) {
		dp_serve_stop(s);
		return -1;
	}
	return 0;
}

int dp_serve_dispatch(struct dp_serve *s, const struct epoll_event *evs, int n)
{
	int r = 0;

	for (int i = 0; i < n && r == 0; i++) {
		if (evs[i].data.ptr == s)
			r = serve_ctl(s);
		else
			cordon_dnsproxy_handle(s->p, evs[i].data.ptr, evs[i].events);
	}
	cordon_dnsproxy_tick(s->p);
	serve_flush(s);
	return r;
}

int dp_serve_sockets(struct dp_serve *s, int sockets, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	s->sockets_ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->sockets_ep < 0 || epoll_ctl(s->sockets_ep, EPOLL_CTL_ADD, sockets, &ev) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy: epoll");
	s->sockets = sockets;
	s->p->cfg.upstream_socket = serve_upstream_socket;
	return 0;
}

void dp_serve_stop(struct dp_serve *s)
{
	cordon_dnsproxy_free(s->p);
	s->p = NULL;
	cordon_allowlist_free(s->allowlist);
	s->allowlist = NULL;
	free(s->events);
	s->events = NULL;
	s->n_events = 0;
	cordon_closep(&s->epfd);
	cordon_closep(&s->sockets_ep);
}

int cordon_dnsproxy_serve(const struct cordon_dnsproxy_config *cfg, const int *udp_fds,
			  size_t n_udp, const int *tcp_fds, size_t n_tcp, int ctl, int sockets,
			  struct cordon_error *err)
{
	struct dp_serve s;
	struct cordon_dnsctl_msg ready;
	int r = 0;

	if (dp_serve_start(&s, cfg, udp_fds, n_udp, tcp_fds, n_tcp, ctl, err) < 0)
		return -1;
	if (sockets >= 0 && dp_serve_sockets(&s, sockets, err) < 0) {
		dp_serve_stop(&s);
		return -1;
	}
	memset(&ready, 0, sizeof(ready));
	ready.type = CORDON_DNSCTL_READY;
	if (ctl_send(ctl, &ready) < 0) {
		dp_serve_stop(&s);
		return 0; /* nobody to serve for */
	}
	while (r == 0) {
		struct epoll_event evs[32];
		int n = epoll_wait(s.epfd, evs, ARRAY_SIZE(evs), cordon_dnsproxy_timeout_ms(s.p));

		if (n < 0 && errno != EINTR) {
			r = cordon_error_set(err, CORDON_E_NET_POLICY, errno,
					     "DNS proxy: epoll_wait");
			break;
		}
		r = dp_serve_dispatch(&s, evs, n < 0 ? 0 : n);
	}
	dp_serve_stop(&s);
	if (r < 0 && !err->code)
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy: its channel");
	return r < 0 ? -1 : 0;
}
