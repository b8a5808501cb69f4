// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS proxy against an in-process upstream stub over real sockets.
 * Addresses in answers are public ones that are never contacted (the
 * vetting table refuses the documentation ranges). Every test runs in a
 * network namespace of its own (a new user namespace
 * too when not root), so nothing leaves the process's private loopback.
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "cordon/net.h"
#include "unit.h"

/*
 * getrandom, counted: this program's own definition, which the
 * library's call binds to (it is linked in statically); the kernel's
 * generator behind it.
 */
static unsigned getrandom_calls;

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
	getrandom_calls++;
	return syscall(SYS_getrandom, buf, len, flags);
}

/* --- a private network ----------------------------------------------------- */

static void private_network(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s;

	if (unshare(CLONE_NEWNET) < 0) {
		char map[64];
		uid_t uid = getuid();
		gid_t gid = getgid();
		int fd;

		ck_assert_int_eq(unshare(CLONE_NEWUSER | CLONE_NEWNET), 0);
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			ck_assert_int_eq(write(fd, "deny", 4), 4);
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", uid);
		ck_assert_int_eq(
			cordon_write_file_at(AT_FDCWD, "/proc/self/uid_map", map, strlen(map)), 0);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		ck_assert_int_eq(
			cordon_write_file_at(AT_FDCWD, "/proc/self/gid_map", map, strlen(map)), 0);
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
	close(s);
}

static int bound_socket(int type, const char *ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	inet_pton(AF_INET, ip, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		ck_assert_int_eq(listen(fd, 8), 0);
	return fd;
}

/* --- DNS messages by hand ----------------------------------------------------- */

struct msgbuf {
	uint8_t b[4096];
	size_t n;
};

static void put8(struct msgbuf *m, uint8_t v)
{
	m->b[m->n++] = v;
}

static void put16(struct msgbuf *m, uint16_t v)
{
	put8(m, (uint8_t)(v >> 8));
	put8(m, (uint8_t)v);
}

static void put32(struct msgbuf *m, uint32_t v)
{
	put16(m, (uint16_t)(v >> 16));
	put16(m, (uint16_t)v);
}

static void put_name(struct msgbuf *m, const char *name)
{
	while (*name) {
		const char *dot = strchrnul(name, '.');

		put8(m, (uint8_t)(dot - name));
		memcpy(m->b + m->n, name, (size_t)(dot - name));
		m->n += (size_t)(dot - name);
		name = *dot ? dot + 1 : dot;
	}
	put8(m, 0);
}

static void header(struct msgbuf *m, uint16_t id, uint16_t flags, uint16_t an)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, 1);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
}

static void query_msg(struct msgbuf *m, uint16_t id, const char *name, uint16_t type)
{
	header(m, id, 0x0100, 0);
	put_name(m, name);
	put16(m, type);
	put16(m, 1);
}

static void rr_a(struct msgbuf *m, const char *owner, const char *ip, uint32_t ttl)
{
	struct in_addr a;

	inet_pton(AF_INET, ip, &a);
	put_name(m, owner);
	put16(m, CORDON_DNS_TYPE_A);
	put16(m, 1);
	put32(m, ttl);
	put16(m, 4);
	memcpy(m->b + m->n, &a, 4);
	m->n += 4;
}

static void rr_cname(struct msgbuf *m, const char *owner, const char *target, uint32_t ttl)
{
	struct msgbuf t = { .n = 0 };

	put_name(m, owner);
	put16(m, CORDON_DNS_TYPE_CNAME);
	put16(m, 1);
	put32(m, ttl);
	put_name(&t, target);
	put16(m, (uint16_t)t.n);
	memcpy(m->b + m->n, t.b, t.n);
	m->n += t.n;
}

/* --- the upstream stub ----------------------------------------------------------- */

struct stub {
	int udp, tcp;
	int conn; /* the accepted TCP connection, or -1 */
	uint8_t in[4098];
	size_t got;
	unsigned queries; /* over UDP and TCP */
	unsigned tcp_queries;
	char last_name[256];
	uint8_t last_query[4096]; /* the last query as it arrived, whole */
	size_t last_query_len;
};

/* The zone: answers by question name. */
static size_t stub_answer(struct stub *st, const uint8_t *q, size_t qlen, bool over_tcp,
			  struct msgbuf *out)
{
	struct cordon_dns_msg *m = cordon_xmalloc(sizeof(*m));
	uint16_t id = (uint16_t)(q[0] << 8 | q[1]);
	const char *name;
	size_t r = 0;

	if (qlen <= sizeof(st->last_query)) {
		memcpy(st->last_query, q, qlen);
		st->last_query_len = qlen;
	}
	if (cordon_dns_parse_question(q, qlen, m) < 0)
		goto out;
	name = m->question.name;
	snprintf(st->last_name, sizeof(st->last_name), "%s", name);
	st->queries++;
	if (strcmp(name, "allowed.test") == 0) {
		header(out, id, 0x8180, 1);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.7", 300);
	} else if (strcmp(name, "long.allowed.test") == 0) {
		header(out, id, 0x8180, 1);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.11", 86400);
	} else if (strcmp(name, "ttl0.allowed.test") == 0) {
		header(out, id, 0x8180, 1);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.9", 0);
	} else if (strcmp(name, "rebind.allowed.test") == 0) {
		header(out, id, 0x8180, 3);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "169.254.169.254", 60);
		rr_a(out, name, "127.0.0.1", 60);
		rr_a(out, name, "93.184.216.8", 60);
	} else if (strcmp(name, "cdn.allowed.test") == 0) {
		header(out, id, 0x8180, 3);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_cname(out, name, "edge.cdnnet.test", 60);
		rr_a(out, "edge.cdnnet.test", "93.184.216.20", 60);
		rr_a(out, "unrelated.test", "93.184.216.99", 60);
	} else if (name[0] == 'n' && strcmp(name + 1 + strspn(name + 1, "0123456789"),
					       ".allowed.test") == 0) {
		/* nNNN.allowed.test: many names, one address. */
		header(out, id, 0x8180, 1);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.50", 300);
	} else if (strcmp(name, "huge.allowed.test") == 0) {
		/* over 512 bytes once filtered, over UDP too: three TXT strings of 200 */
		header(out, id, 0x8180, 2);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.40", 60);
		put_name(out, name), put16(out, 16), put16(out, 1), put32(out, 60), put16(out, 600);
		for (int i = 0; i < 3; i++) {
			put8(out, 199);
			memset(out->b + out->n, 'x', 199);
			out->n += 199;
		}
	} else if (strcmp(name, "big.allowed.test") == 0 && !over_tcp) {
		header(out, id, 0x8380, 0); /* TC */
		put_name(out, name), put16(out, 1), put16(out, 1);
	} else if (strcmp(name, "big.allowed.test") == 0) {
		header(out, id, 0x8180, 1);
		put_name(out, name), put16(out, 1), put16(out, 1);
		rr_a(out, name, "93.184.216.30", 60);
	} else {
		header(out, id, 0x8183, 0);
		put_name(out, name), put16(out, 1), put16(out, 1);
	}
	r = out->n;
out:
	free(m);
	return r;
}

static void stub_udp(struct stub *st)
{
	uint8_t buf[4096];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(st->udp, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
	struct msgbuf out;
	size_t len;

	if (n <= 0)
		return;
	len = stub_answer(st, buf, (size_t)n, false, &out);
	if (len)
		sendto(st->udp, out.b, len, 0, (struct sockaddr *)&from, fl);
}

/* The connection is driven by the same loop as the proxy: never block. */
static void stub_tcp_accept(struct stub *st, int epfd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &st->conn };

	st->conn = accept4(st->tcp, NULL, NULL, SOCK_NONBLOCK);
	st->got = 0;
	if (st->conn >= 0)
		epoll_ctl(epfd, EPOLL_CTL_ADD, st->conn, &ev);
}

static void stub_tcp_read(struct stub *st)
{
	ssize_t n = read(st->conn, st->in + st->got, sizeof(st->in) - st->got);
	struct msgbuf out;
	size_t len;

	if (n > 0)
		st->got += (size_t)n;
	if (st->got < 2 || st->got < 2 + (size_t)(st->in[0] << 8 | st->in[1]))
		return;
	st->tcp_queries++;
	len = stub_answer(st, st->in + 2, st->got - 2, true, &out);
	if (len) {
		uint8_t l[2] = { (uint8_t)(len >> 8), (uint8_t)len };

		ck_assert_int_eq(write(st->conn, l, 2), 2);
		ck_assert_int_eq(write(st->conn, out.b, len), (ssize_t)len);
	}
	close(st->conn);
	st->conn = -1;
}

/* --- the harness -------------------------------------------------------------------- */

struct inserted {
	struct cordon_addr addr[64];
	uint32_t timeout_ms[64];
	size_t n;
	unsigned calls;
	bool client_had_reply_at_insert;
	int fail;
	bool deferred;	     /* the test answers the admit itself */
	uint32_t last_token; /* of the last admit */
};

struct harness {
	struct stub stub;
	struct cordon_allowlist *al;
	struct cordon_dnsproxy *proxy;
	struct inserted ins;
	int epfd, client;
	struct sockaddr_storage upstream;
	struct cordon_addr clients[2]; /* the proxy's; 127.0.0.1 when none is set */
	size_t n_clients;
};

/*
 * The supervisor's part, in process: record the admit, and answer it at
 * once (every address admitted) unless the test answers it itself.
 */
static int record_admit(void *opaque, const struct cordon_dns_admit *req)
{
	struct harness *h = opaque;
	enum cordon_vet ok[CORDON_DNS_ADMIT_MAX] = { 0 };
	uint8_t probe;

	if (h->ins.fail)
		return h->ins.fail;
	h->ins.calls++;
	h->ins.last_token = req->token;
	/* The reply must not have left before the insert. */
	if (recv(h->client, &probe, 1, MSG_DONTWAIT | MSG_PEEK) >= 0)
		h->ins.client_had_reply_at_insert = true;
	for (size_t i = 0; i < req->n && h->ins.n < 64; i++) {
		h->ins.addr[h->ins.n] = req->addrs[i];
		h->ins.timeout_ms[h->ins.n++] = req->ttl_s * 1000;
	}
	if (!h->ins.deferred)
		cordon_dnsproxy_admitted(h->proxy, req->token, 0, ok, req->n);
	return 0;
}

/*
 * The proxy on the given listeners, its upstream the stub (or nothing),
 * and h->client a UDP socket connected to client_to. Call after
 * private_network.
 */
static void harness_start(struct harness *h, uint32_t qps, bool upstream_alive, const int *udp,
			  size_t n_udp, const int *tcp, size_t n_tcp,
			  const struct sockaddr_storage *client_to)
{
	struct cordon_error err = { 0 };
	struct cordon_dnsproxy_config cfg = { 0 };
	struct sockaddr_in *up = (struct sockaddr_in *)&h->upstream;
	struct epoll_event ev = { .events = EPOLLIN };

	h->stub.udp = upstream_alive ? bound_socket(SOCK_DGRAM, "127.0.0.1", 5300) : -1;
	h->stub.tcp = upstream_alive ? bound_socket(SOCK_STREAM, "127.0.0.1", 5300) : -1;
	up->sin_family = AF_INET;
	up->sin_port = htons(5300);
	inet_pton(AF_INET, "127.0.0.1", &up->sin_addr);
	h->al = cordon_allowlist_new();
	ck_assert_int_eq(cordon_allowlist_add(h->al, "allowed.test,*.allowed.test", false, &err),
			 0);
	cfg.allowlist = h->al;
	cfg.upstreams = &h->upstream;
	cfg.n_upstreams = 1;
	cfg.upstream_timeout_ms = 300;
	cfg.qps = qps;
	cfg.admit = record_admit;
	cfg.opaque = h;
	if (!h->n_clients)
		ck_assert_int_eq(cordon_addr_parse("127.0.0.1", &h->clients[h->n_clients++]), 0);
	cfg.clients = h->clients;
	cfg.n_clients = h->n_clients;
	h->proxy = cordon_dnsproxy_new(&cfg, udp, n_udp, tcp, n_tcp, &err);
	ck_assert_msg(h->proxy != NULL, "%s", err.msg);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_eq(cordon_dnsproxy_attach(h->proxy, h->epfd, &err), 0);
	if (upstream_alive) {
		ev.data.ptr = &h->stub.udp;
		epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->stub.udp, &ev);
		ev.data.ptr = &h->stub.tcp;
		epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->stub.tcp, &ev);
	}
	h->client = socket(client_to->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(h->client, 0);
	ck_assert_int_eq(connect(h->client, (const struct sockaddr *)client_to,
				 client_to->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
								   sizeof(struct sockaddr_in6)),
			 0);
}

static void harness_up(struct harness *h, uint32_t qps, bool upstream_alive)
{
	struct sockaddr_storage to = { 0 };
	struct sockaddr_in *px = (struct sockaddr_in *)&to;
	int udp, tcp, sndbuf = 4096;

	memset(h, 0, sizeof(*h));
	h->stub.conn = -1;
	private_network();
	/* Accepted clients inherit a small send buffer: a slow reader fills it soon. */
	tcp = bound_socket(SOCK_STREAM, "127.0.0.2", 5353);
	ck_assert_int_eq(setsockopt(tcp, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	udp = bound_socket(SOCK_DGRAM, "127.0.0.2", 5353);
	px->sin_family = AF_INET;
	px->sin_port = htons(5353);
	inet_pton(AF_INET, "127.0.0.2", &px->sin_addr);
	harness_start(h, qps, upstream_alive, &udp, 1, &tcp, 1, &to);
}

static void harness_down(struct harness *h)
{
	cordon_dnsproxy_free(h->proxy);
	cordon_allowlist_free(h->al);
	close(h->epfd);
	close(h->client);
	if (h->stub.udp >= 0)
		close(h->stub.udp);
	if (h->stub.tcp >= 0)
		close(h->stub.tcp);
}

static void send_query(struct harness *h, const char *name, uint16_t type)
{
	struct msgbuf q;

	query_msg(&q, 0x4242, name, type);
	ck_assert_int_eq(send(h->client, q.b, q.n, 0), (ssize_t)q.n);
}

/* Drive everything until the client has its reply (its length) or ms passed (-1). */
static ssize_t wait_reply(struct harness *h, unsigned ms, struct cordon_dns_msg *out)
{
	uint8_t buf[4096];
	uint64_t deadline = cordon_now_mono_us() / 1000 + ms;

	do {
		struct epoll_event evs[8];
		int t = cordon_dnsproxy_timeout_ms(h->proxy);
		int n = epoll_wait(h->epfd, evs, 8, t < 0 || t > 20 ? 20 : t);
		ssize_t got;

		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &h->stub.udp)
				stub_udp(&h->stub);
			else if (evs[i].data.ptr == &h->stub.tcp)
				stub_tcp_accept(&h->stub, h->epfd);
			else if (evs[i].data.ptr == &h->stub.conn)
				stub_tcp_read(&h->stub);
			else
				cordon_dnsproxy_handle(h->proxy, evs[i].data.ptr, evs[i].events);
		}
		cordon_dnsproxy_tick(h->proxy);
		got = recv(h->client, buf, sizeof(buf), MSG_DONTWAIT);
		if (got > 0) {
			ck_assert_int_eq(buf[0] << 8 | buf[1], 0x4242);
			ck_assert_int_eq(cordon_dns_parse(buf, (size_t)got, out), 0);
			return got;
		}
	} while (cordon_now_mono_us() / 1000 < deadline);
	return -1;
}

/* Send the query q (its id 0x4242), drive everything until the client has its reply. */
static ssize_t ask_raw(struct harness *h, const struct msgbuf *q, struct cordon_dns_msg *out)
{
	ck_assert_int_eq(send(h->client, q->b, q->n, 0), (ssize_t)q->n);
	return wait_reply(h, 3000, out);
}

/* Send a query, drive everything until the client has its reply; returns its length. */
static ssize_t ask(struct harness *h, const char *name, uint16_t type, struct cordon_dns_msg *out)
{
	send_query(h, name, type);
	return wait_reply(h, 3000, out);
}

static int rcode(const struct cordon_dns_msg *m)
{
	return m->flags & 0x000f;
}

static size_t count_type(const struct cordon_dns_msg *m, uint16_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n_rr; i++)
		n += m->rr[i].type == type;
	return n;
}

static struct cordon_dns_msg *reply_msg(void)
{
	return cordon_xcalloc(1, sizeof(struct cordon_dns_msg));
}

START_TEST(allowed_forwarded_and_inserted_before_reply)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	char ip[64];

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	ck_assert_uint_eq(h.stub.queries, 1);
	ck_assert_uint_eq(h.ins.n, 1);
	cordon_addr_format(&h.ins.addr[0], ip, sizeof(ip));
	ck_assert_str_eq(ip, "93.184.216.7");
	ck_assert_uint_eq(h.ins.timeout_ms[0], 300 * 1000);
	ck_assert(!h.ins.client_had_reply_at_insert);
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(denied_nxdomain_without_upstream)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "denied.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NXDOMAIN);
	ck_assert_str_eq(m->question.name, "denied.test");
	ck_assert_uint_eq(h.stub.queries, 0);
	ck_assert_uint_eq(h.ins.calls, 0);
	/* the apex of a wildcard is not covered by it */
	ck_assert_int_gt(ask(&h, "b.c.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NXDOMAIN);
	ck_assert_uint_eq(h.stub.queries, 0);
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(upstream_down_servfail)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, false);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_SERVFAIL);
	ck_assert_uint_eq(h.ins.calls, 0);
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(truncated_retries_over_tcp)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "big.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	ck_assert_uint_eq(h.stub.tcp_queries, 1);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.tcp_retries, 1);
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * An answer too large for a UDP client becomes an empty TC reply with the
 * client's own id (it carried the upstream query's id, so the client
 * dropped it and never retried over TCP; found by fuzz-dnsproxy). Over
 * TCP the whole answer comes.
 */
START_TEST(too_large_for_udp_is_tc_with_the_client_id)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, true);
	/* wait_reply checks the id */
	ck_assert_int_gt(ask(&h, "huge.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert(m->flags & 0x0200);
	ck_assert_uint_eq(m->n_rr, 0);
	ck_assert_str_eq(m->question.name, "huge.allowed.test");
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(rebinding_stripped_not_inserted)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	char ip[64];

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "rebind.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	cordon_addr_format(&m->rr[0].addr, ip, sizeof(ip));
	ck_assert_str_eq(ip, "93.184.216.8");
	ck_assert_uint_eq(h.ins.n, 1);
	cordon_addr_format(&h.ins.addr[0], ip, sizeof(ip));
	ck_assert_str_eq(ip, "93.184.216.8");
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(ttl_zero_gets_the_floor)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "ttl0.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(h.ins.n, 1);
	ck_assert_uint_eq(h.ins.timeout_ms[0], CORDON_DNS_TTL_FLOOR_S * 1000);
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(cname_chain_only)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	char ip[64];

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "cdn.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_CNAME), 1);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	ck_assert_uint_eq(h.ins.n, 1);
	cordon_addr_format(&h.ins.addr[0], ip, sizeof(ip));
	ck_assert_str_eq(ip, "93.184.216.20");
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(rate_limited)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;
	int refused = 0;

	harness_up(&h, 3, true);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_gt(ask(&h, "denied.test", CORDON_DNS_TYPE_A, m), 0);
		refused += rcode(m) == CORDON_DNS_RCODE_REFUSED;
	}
	ck_assert_int_ge(refused, 2);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.rate_limited, (uint64_t)refused);
	harness_down(&h);
	free(m);
}
END_TEST

START_TEST(insert_failure_is_servfail)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, true);
	h.ins.fail = -ENOSPC;
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_SERVFAIL);
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * A TCP client that sends a query for a denied name and resets before the
 * proxy reads it: the proxy answers at once, the send fails on the reset
 * socket and closes the client while the read loop still holds it (it
 * then moved the rest of the input inside the freed client). Every
 * connection is reset before the proxy runs, so each one takes that path.
 */
static int tcp_query_then_reset(const char *name)
{
	struct sockaddr_in px = { .sin_family = AF_INET, .sin_port = htons(5353) };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct msgbuf q;
	uint8_t buf[sizeof(q.b) + 2];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	inet_pton(AF_INET, "127.0.0.2", &px.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&px, sizeof(px)), 0);
	query_msg(&q, 0x4242, name, CORDON_DNS_TYPE_A);
	buf[0] = (uint8_t)(q.n >> 8);
	buf[1] = (uint8_t)q.n;
	memcpy(buf + 2, q.b, q.n);
	/* The query twice: the second is what the loop went on to parse. */
	ck_assert_int_eq(send(fd, buf, q.n + 2, 0), (ssize_t)(q.n + 2));
	ck_assert_int_eq(send(fd, buf, q.n + 2, 0), (ssize_t)(q.n + 2));
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	return close(fd);
}

/* Run the proxy's events until it has counted DENIED denials (or 3 s). */
static void drive_until_denied(struct harness *h, uint64_t denied)
{
	uint64_t deadline = cordon_now_mono_us() / 1000 + 3000;
	struct cordon_dnsproxy_stats st;

	for (;;) {
		struct epoll_event evs[8];
		int n;

		cordon_dnsproxy_stats(h->proxy, &st);
		if (st.denied >= denied || cordon_now_mono_us() / 1000 >= deadline)
			break;
		n = epoll_wait(h->epfd, evs, 8, 50);
		for (int i = 0; i < n; i++)
			if (evs[i].data.ptr != &h->stub.udp && evs[i].data.ptr != &h->stub.tcp)
				cordon_dnsproxy_handle(h->proxy, evs[i].data.ptr, evs[i].events);
		cordon_dnsproxy_tick(h->proxy);
	}
	ck_assert_uint_ge(st.denied, denied);
}

START_TEST(tcp_client_reset_after_denied_query)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;

	harness_up(&h, 0, true);
	for (uint64_t i = 1; i <= 40; i++) {
		ck_assert_int_eq(tcp_query_then_reset("denied.test"), 0);
		/* One denial per connection: the second query is never answered. */
		drive_until_denied(&h, i);
	}
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.denied, 40);
	/* The proxy still serves, and no client slot is held by the dead ones. */
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	harness_down(&h);
	free(m);
}
END_TEST

static int tcp_client_connect(int rcvbuf)
{
	struct sockaddr_in px = { .sin_family = AF_INET, .sin_port = htons(5353) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	if (rcvbuf)
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	inet_pton(AF_INET, "127.0.0.2", &px.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&px, sizeof(px)), 0);
	return fd;
}

/* Handle one round of the proxy's events (the stub's are left alone). */
static void drive_proxy_once(struct harness *h, int wait_ms)
{
	struct epoll_event evs[16];
	int n = epoll_wait(h->epfd, evs, 16, wait_ms);

	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr != &h->stub.udp && evs[i].data.ptr != &h->stub.tcp)
			cordon_dnsproxy_handle(h->proxy, evs[i].data.ptr, evs[i].events);
	cordon_dnsproxy_tick(h->proxy);
}

/*
 * Pipelined queries on one connection whose peer reads slowly: every query
 * gets its answer, in order. A reply that found the previous one still
 * unsent was dropped, so a client saw answers go missing.
 */
START_TEST(tcp_pipelined_replies_all_delivered)
{
	enum { N = 3000 };
	struct harness h;
	struct msgbuf q;
	static uint8_t in[N * 64], out[N * 64];
	size_t out_len = 0, out_off = 0, in_len = 0, got = 0;
	uint64_t deadline = cordon_now_mono_us() / 1000 + 8000;
	uint16_t expect = 0;
	int fd;

	harness_up(&h, 0, true);
	fd = tcp_client_connect(4096);
	for (uint16_t i = 0; i < N; i++) {
		query_msg(&q, i, "denied.test", CORDON_DNS_TYPE_A);
		out[out_len++] = (uint8_t)(q.n >> 8);
		out[out_len++] = (uint8_t)q.n;
		memcpy(out + out_len, q.b, q.n);
		out_len += q.n;
	}
	while (got < N && cordon_now_mono_us() / 1000 < deadline) {
		ssize_t n;

		if (out_off < out_len) {
			n = send(fd, out + out_off, out_len - out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				out_off += (size_t)n;
		}
		drive_proxy_once(&h, 5);
		/* Read a little at a time, after the proxy has queued more. */
		n = recv(fd, in + in_len, 512, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			in_len += (size_t)n;
		while (in_len >= 2 && in_len >= 2 + (size_t)(in[0] << 8 | in[1])) {
			size_t len = (size_t)(in[0] << 8 | in[1]);

			ck_assert_uint_ge(len, 12);
			ck_assert_int_eq(in[2] << 8 | in[3], expect);
			ck_assert_int_eq(in[5] & 0x0f, CORDON_DNS_RCODE_NXDOMAIN);
			expect++;
			got++;
			memmove(in, in + 2 + len, in_len - 2 - len);
			in_len -= 2 + len;
		}
	}
	ck_assert_uint_eq(got, N);
	close(fd);
	harness_down(&h);
}
END_TEST

/*
 * An upstream answer and the client's reset in one epoll batch, the answer
 * first: completing it closes the client (the send fails, nothing is owed
 * any more), and the batch then hands over the client's own event. The tag
 * of that event named freed memory, which the proxy read.
 */
START_TEST(client_closed_earlier_in_the_batch)
{
	struct harness h;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;
	uint8_t buf[sizeof(((struct msgbuf *)0)->b) + 2];
	uint64_t deadline = cordon_now_mono_us() / 1000 + 3000;
	struct msgbuf q;
	int fd;

	harness_up(&h, 0, true);
	fd = tcp_client_connect(0);
	query_msg(&q, 0x4242, "allowed.test", CORDON_DNS_TYPE_A);
	buf[0] = (uint8_t)(q.n >> 8);
	buf[1] = (uint8_t)q.n;
	memcpy(buf + 2, q.b, q.n);
	ck_assert_int_eq(send(fd, buf, q.n + 2, 0), (ssize_t)(q.n + 2));
	do {
		drive_proxy_once(&h, 20);
		cordon_dnsproxy_stats(h.proxy, &st);
	} while (st.forwarded < 1 && cordon_now_mono_us() / 1000 < deadline);
	ck_assert_uint_eq(st.forwarded, 1);
	/* The answer reaches the proxy's pool socket, then the reset its client socket. */
	stub_udp(&h.stub);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(fd);
	drive_proxy_once(&h, 100);
	drive_proxy_once(&h, 0);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.addrs_inserted, 1);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	harness_down(&h);
	free(m);
}
END_TEST

/* --- what goes upstream ---------------------------------------------------------- */

/* The stub's last query is cordon's rebuilt form of q: byte for byte but the id. */
static void assert_upstream_rebuilt(const struct harness *h, const uint8_t *q, size_t qlen)
{
	uint8_t want[CORDON_DNS_QUERY_MAX];
	ssize_t n;

	ck_assert_uint_ge(h->stub.last_query_len, 12);
	n = cordon_dns_rebuild_query(q, qlen,
				     (uint16_t)(h->stub.last_query[0] << 8 | h->stub.last_query[1]),
				     want, sizeof(want));
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(h->stub.last_query_len, (size_t)n);
	ck_assert_msg(memcmp(h->stub.last_query, want, (size_t)n) == 0,
		      "the upstream got other bytes than the rebuilt query");
}

/*
 * The client's whole message used to go upstream: extra records, EDNS
 * options, trailing bytes, up to 64 KiB over TCP, a channel to the
 * upstream resolver. Only the rebuilt question goes now, and the client
 * gets its own id back.
 */
START_TEST(upstream_gets_the_question_only)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	struct msgbuf q;
	static uint8_t big[2 + 65535];
	size_t n = 0, at;
	int fd;
	struct sockaddr_in px = { .sin_family = AF_INET, .sin_port = htons(5353) };
	uint64_t deadline;

	harness_up(&h, 0, true);
	/* UDP: an A record and a TXT of the client's, an OPT with options, trailing bytes. */
	header(&q, 0x4242, 0x0130, 1);
	put_name(&q, "Allowed.TEST");
	put16(&q, CORDON_DNS_TYPE_A);
	put16(&q, 1);
	q.b[11] = 3; /* arcount */
	rr_a(&q, "x.allowed.test", "93.184.216.1", 60);
	put_name(&q, "covert.allowed.test");
	put16(&q, 16);
	put16(&q, 1);
	put32(&q, 60);
	put16(&q, 13);
	put8(&q, 12);
	memcpy(q.b + q.n, "secret bytes", 12);
	q.n += 12;
	put8(&q, 0);
	put16(&q, CORDON_DNS_TYPE_OPT);
	put16(&q, 4096);
	put32(&q, 0x8000);
	put16(&q, 12);
	put16(&q, 10);
	put16(&q, 8);
	memcpy(q.b + q.n, "cookie!!", 8);
	q.n += 8;
	memcpy(q.b + q.n, "trailing", 8);
	q.n += 8;
	ck_assert_int_gt(ask_raw(&h, &q, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(h.stub.queries, 1);
	assert_upstream_rebuilt(&h, q.b, q.n);
	ck_assert_uint_eq(h.stub.last_query_len, 12 + 14 + 4 + 11);

	/* TCP: a 60 KiB query, of which the upstream sees the question. */
	header(&q, 0x4343, 0x0100, 1);
	put_name(&q, "allowed.test");
	put16(&q, CORDON_DNS_TYPE_A);
	put16(&q, 1);
	at = 2;
	memcpy(big + at, q.b, q.n);
	at += q.n;
	while (at < 2 + 60000)
		big[at++] = 0xa5;
	big[0] = (uint8_t)((at - 2) >> 8);
	big[1] = (uint8_t)(at - 2);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "127.0.0.2", &px.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&px, sizeof(px)), 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	deadline = cordon_now_mono_us() / 1000 + 5000;
	while (h.stub.queries < 2 && cordon_now_mono_us() / 1000 < deadline) {
		struct epoll_event evs[8];
		int k = epoll_wait(h.epfd, evs, 8, 20);
		ssize_t w;

		if (n < at && (w = send(fd, big + n, at - n, MSG_NOSIGNAL)) > 0)
			n += (size_t)w;
		for (int i = 0; i < k; i++) {
			if (evs[i].data.ptr == &h.stub.udp)
				stub_udp(&h.stub);
			else if (evs[i].data.ptr == &h.stub.tcp)
				stub_tcp_accept(&h.stub, h.epfd);
			else if (evs[i].data.ptr == &h.stub.conn)
				stub_tcp_read(&h.stub);
			else
				cordon_dnsproxy_handle(h.proxy, evs[i].data.ptr, evs[i].events);
		}
		cordon_dnsproxy_tick(h.proxy);
	}
	ck_assert_uint_eq(h.stub.queries, 2);
	assert_upstream_rebuilt(&h, big + 2, at - 2);
	ck_assert_uint_eq(h.stub.last_query_len, 12 + 14 + 4);
	close(fd);

	/* Another class than IN: NOTIMP, nothing upstream. */
	query_msg(&q, 0x4242, "allowed.test", CORDON_DNS_TYPE_A);
	q.b[q.n - 1] = 3; /* CHAOS */
	ck_assert_int_gt(ask_raw(&h, &q, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOTIMP);
	ck_assert_uint_eq(h.stub.queries, 2);
	harness_down(&h);
	free(m);
}
END_TEST

/* --- the gateway's listeners ------------------------------------------------------ */

static void sockaddr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(sin->sin_port));
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	}
}

static void assert_bound(int fd, int type, const char *want)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int v, listening = 0;
	socklen_t vl = sizeof(v);
	char got[96];

	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	sockaddr_text(&ss, got, sizeof(got));
	ck_assert_msg(!strcmp(got, want), "listener bound to %s, want %s", got, want);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vl), 0);
	ck_assert_int_eq(v, type);
	if (ss.ss_family == AF_INET6) {
		vl = sizeof(v);
		ck_assert_int_eq(getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v, &vl), 0);
		ck_assert_msg(v == 1, "the IPv6 listener %s is dual-stack", got);
	}
	vl = sizeof(listening);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &vl), 0);
	ck_assert_int_eq(listening, type == SOCK_STREAM);
}

/*
 * The proxy's listeners in the gateway: one IPv4 and one IPv6-only socket
 * per protocol, each on the gateway's own address, made before the
 * address exists. A dual-stack [::]:53 socket answered an IPv6 query from
 * an IPv4-mapped source as IPv4, to wherever that source named.
 */
/*
 * A proxy on cordon_gateway_dns_sockets, the gateway's addresses on lo
 * (the packets never leave it), those addresses its clients, and
 * h->client a UDP socket connected to the IPv4 listener.
 */
static void gateway_harness(struct harness *h, struct cordon_gateway_addrs *gw)
{
	struct cordon_error err = { 0 };
	struct cordon_link *l;
	struct sockaddr_storage to = { 0 };
	struct sockaddr_in *to4 = (struct sockaddr_in *)&to;
	int udp[CORDON_GW_DNS_SOCKETS], tcp[CORDON_GW_DNS_SOCKETS];

	memset(h, 0, sizeof(*h));
	h->stub.conn = -1;
	private_network();
	cordon_gateway_addrs(gw);
	ck_assert_msg(cordon_gateway_dns_sockets(udp, tcp, &err) == 0, "%s", err.msg);
	assert_bound(udp[0], SOCK_DGRAM, CORDON_GW_ADDR4 ":53");
	assert_bound(tcp[0], SOCK_STREAM, CORDON_GW_ADDR4 ":53");
	assert_bound(udp[1], SOCK_DGRAM, "[" CORDON_GW_ADDR6 "]:53");
	assert_bound(tcp[1], SOCK_STREAM, "[" CORDON_GW_ADDR6 "]:53");

	/* The addresses come later (gw0 is made after the sockets). */
	l = cordon_link_open(&err);
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(cordon_link_addr(l, "lo", &gw->gw4, 32, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_link_addr(l, "lo", &gw->gw6, 128, &err) == 0, "%s", err.msg);
	cordon_link_close(l);
	/*
	 * Even without duplicate address detection, packets to a new IPv6
	 * address may be lost until the kernel's address work has run (its
	 * local route comes then): wait until a datagram to it arrives.
	 */
	{
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
					   .sin6_port = htons(5399),
					   .sin6_addr = gw->gw6.u.v6 };
		int rx = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int tx = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int i;

		ck_assert_int_eq(setsockopt(rx, IPPROTO_IPV6, 78 /* IPV6_FREEBIND */, &(int){ 1 },
					    sizeof(int)),
				 0);
		ck_assert_int_eq(bind(rx, (struct sockaddr *)&sa, sizeof(sa)), 0);
		for (i = 0; i < 250; i++) {
			struct pollfd pf = { .fd = rx, .events = POLLIN };

			sendto(tx, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa));
			if (poll(&pf, 1, 20) == 1)
				break;
		}
		ck_assert_msg(i < 250, "nothing sent to %s arrived", CORDON_GW_ADDR6);
		close(rx);
		close(tx);
	}
	to4->sin_family = AF_INET;
	to4->sin_port = htons(53);
	to4->sin_addr = gw->gw4.u.v4;
	h->clients[0] = gw->gw4;
	h->clients[1] = gw->gw6;
	h->n_clients = 2;
	harness_start(h, 0, true, udp, CORDON_GW_DNS_SOCKETS, tcp, CORDON_GW_DNS_SOCKETS, &to);
}

/* h->client, now connected to the IPv6 listener. */
static void client_to_ipv6(struct harness *h, const struct cordon_gateway_addrs *gw)
{
	struct sockaddr_in6 to6 = { .sin6_family = AF_INET6,
				    .sin6_port = htons(53),
				    .sin6_addr = gw->gw6.u.v6 };

	close(h->client);
	h->client = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(h->client, (struct sockaddr *)&to6, sizeof(to6)), 0);
}

/*
 * The proxy's listeners in the gateway: one IPv4 and one IPv6-only socket
 * per protocol, each on the gateway's own address, made before the
 * address exists. A dual-stack [::]:53 socket answered an IPv6 query from
 * an IPv4-mapped source as IPv4, to wherever that source named.
 */
START_TEST(gateway_listeners_one_per_family)
{
	struct harness h;
	struct cordon_gateway_addrs gw;
	struct cordon_dns_msg *m = reply_msg();

	gateway_harness(&h, &gw);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_int_gt(ask(&h, "denied.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NXDOMAIN);
	/* Over IPv6: the answer leaves through the IPv6 listener. */
	client_to_ipv6(&h, &gw);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(h.stub.queries, 2);
	harness_down(&h);
	free(m);
}
END_TEST

/* The Internet checksum of an IPv6 pseudo header and an upper-layer packet. */
static uint16_t checksum6(const struct in6_addr *src, const struct in6_addr *dst, uint8_t proto,
			  const uint8_t *l4, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < 16; i += 2)
		sum += (uint32_t)(src->s6_addr[i] << 8 | src->s6_addr[i + 1]) +
		       (uint32_t)(dst->s6_addr[i] << 8 | dst->s6_addr[i + 1]);
	sum += (uint32_t)len + proto;
	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(l4[i] << 8 | (i + 1 < len ? l4[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return sum ? (uint16_t)sum : 0xffff;
}

/* One IPv6 UDP datagram with any source, through a raw socket. */
static void send_raw_udp6(const char *src, const struct in6_addr *dst, uint16_t sport,
			  uint16_t dport, const uint8_t *payload, size_t len)
{
	uint8_t pkt[40 + 8 + 512] = { 0 };
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = *dst };
	struct in6_addr s;
	size_t ulen = 8 + len;
	uint16_t sum;
	int fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_le(len, 512);
	ck_assert_int_eq(inet_pton(AF_INET6, src, &s), 1);
	pkt[0] = 0x60;
	pkt[4] = (uint8_t)(ulen >> 8);
	pkt[5] = (uint8_t)ulen;
	pkt[6] = IPPROTO_UDP;
	pkt[7] = 64;
	memcpy(pkt + 8, &s, 16);
	memcpy(pkt + 24, dst, 16);
	pkt[40] = (uint8_t)(sport >> 8);
	pkt[41] = (uint8_t)sport;
	pkt[42] = (uint8_t)(dport >> 8);
	pkt[43] = (uint8_t)dport;
	pkt[44] = (uint8_t)(ulen >> 8);
	pkt[45] = (uint8_t)ulen;
	memcpy(pkt + 48, payload, len);
	sum = checksum6(&s, dst, IPPROTO_UDP, pkt + 40, ulen);
	pkt[46] = (uint8_t)(sum >> 8);
	pkt[47] = (uint8_t)sum;
	ck_assert_int_eq(sendto(fd, pkt, 40 + ulen, 0, (struct sockaddr *)&sa, sizeof(sa)),
			 (ssize_t)(40 + ulen));
	close(fd);
}

/* Drive the proxy until it has counted want foreign sources (at most 3 s). */
static void wait_foreign(struct harness *h, uint64_t want)
{
	uint64_t deadline = cordon_now_mono_us() / 1000 + 3000;
	struct cordon_dnsproxy_stats st;

	for (;;) {
		drive_proxy_once(h, 20);
		cordon_dnsproxy_stats(h->proxy, &st);
		if (st.foreign >= want || cordon_now_mono_us() / 1000 > deadline)
			break;
	}
	ck_assert_msg(st.foreign == want, "%" PRIu64 " foreign sources counted, want %" PRIu64,
		      st.foreign, want);
}

/*
 * Only the workload's own addresses are answered. A query from any other
 * source is dropped unanswered: a reply goes wherever the source says,
 * and a workload with NET_RAW can say anything (a denied server, the
 * metadata address, ::ffff:X). A TCP connection from one is closed.
 */
START_TEST(foreign_sources_never_answered)
{
	struct harness h;
	struct cordon_gateway_addrs gw;
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;
	struct msgbuf q;
	struct sockaddr_in other = { .sin_family = AF_INET, .sin_port = htons(9999) };
	struct sockaddr_in gw53 = { .sin_family = AF_INET, .sin_port = htons(53) };
	uint8_t buf[512];
	int fd, mapped;

	gateway_harness(&h, &gw);
	gw53.sin_addr = gw.gw4.u.v4;
	inet_pton(AF_INET, "127.0.0.1", &other.sin_addr);
	query_msg(&q, 0x5151, "allowed.test", CORDON_DNS_TYPE_A);

	/* UDP from 127.0.0.1, which is not a client. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&other, sizeof(other)), 0);
	ck_assert_int_eq(sendto(fd, q.b, q.n, 0, (struct sockaddr *)&gw53, sizeof(gw53)),
			 (ssize_t)q.n);
	wait_foreign(&h, 1);
	ck_assert_int_lt(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);

	/* TCP from 127.0.0.1: closed before a byte is read. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	other.sin_port = 0;
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&other, sizeof(other)), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&gw53, sizeof(gw53)), 0);
	wait_foreign(&h, 2);
	ck_assert_int_le(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);

	/*
	 * An IPv6 query from ::ffff:<the client's IPv4 address>: an IPv6
	 * source, not the client; the old dual-stack socket answered it as
	 * IPv4, to 10.254.254.1:9999.
	 */
	mapped = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	other.sin_addr = gw.gw4.u.v4;
	other.sin_port = htons(9999);
	ck_assert_int_eq(bind(mapped, (struct sockaddr *)&other, sizeof(other)), 0);
	send_raw_udp6("::ffff:" CORDON_GW_ADDR4, &gw.gw6.u.v6, 9999, 53, q.b, q.n);
	wait_foreign(&h, 3);
	ck_assert_int_lt(recv(mapped, buf, sizeof(buf), 0), 0);
	close(mapped);

	/* Nothing of it went upstream; the clients are still served. */
	ck_assert_uint_eq(h.stub.queries, 0);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	client_to_ipv6(&h, &gw);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.queries, 2);
	ck_assert_uint_eq(st.foreign, 3);
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * The answer waits for its admit: nothing reaches the client until the
 * supervisor (here the test) says the address is in the sets.
 */
START_TEST(admit_answer_waits_for_the_verdict)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	const enum cordon_vet ok[] = { CORDON_VET_OK };

	harness_up(&h, 0, true);
	h.ins.deferred = true;
	send_query(&h, "allowed.test", CORDON_DNS_TYPE_A);
	ck_assert_int_lt(wait_reply(&h, 300, m), 0);
	ck_assert_uint_eq(h.ins.calls, 1);
	/* A token nobody waits for changes nothing. */
	cordon_dnsproxy_admitted(h.proxy, h.ins.last_token + 1000, 0, ok, 1);
	ck_assert_int_lt(wait_reply(&h, 100, m), 0);
	cordon_dnsproxy_admitted(h.proxy, h.ins.last_token, 0, ok, 1);
	ck_assert_int_gt(wait_reply(&h, 3000, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	/* Answered: the same token again is stale. */
	cordon_dnsproxy_admitted(h.proxy, h.ins.last_token, 0, ok, 1);
	harness_down(&h);
	free(m);
}
END_TEST

/* Two UDP listeners of one family (which would a reply leave by?), or a bad fd: refused, all
 * closed. */
START_TEST(listeners_refused_and_closed)
{
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_dnsproxy_config cfg = { 0 };
	struct cordon_error err = { 0 };
	struct sockaddr_storage up = { .ss_family = AF_INET };
	struct cordon_addr client;
	int udp[2], tcp[1];

	private_network();
	ck_assert_int_eq(cordon_allowlist_add(al, "allowed.test", false, &err), 0);
	cfg.allowlist = al;
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	cfg.clients = &client;
	cfg.n_clients = 1;
	ck_assert_int_eq(cordon_addr_parse("127.0.0.1", &client), 0);
	udp[0] = bound_socket(SOCK_DGRAM, "127.0.0.2", 5353);
	udp[1] = bound_socket(SOCK_DGRAM, "127.0.0.3", 5353);
	tcp[0] = bound_socket(SOCK_STREAM, "127.0.0.2", 5353);
	ck_assert_ptr_null(cordon_dnsproxy_new(&cfg, udp, 2, tcp, 1, &err));
	ck_assert_msg(strstr(err.msg, "two UDP sockets of one address family"), "%s", err.msg);
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(fcntl(udp[i], F_GETFD), -1);
	ck_assert_int_eq(fcntl(tcp[0], F_GETFD), -1);

	udp[0] = bound_socket(SOCK_DGRAM, "127.0.0.2", 5353);
	udp[1] = -1;
	ck_assert_ptr_null(cordon_dnsproxy_new(&cfg, udp, 2, NULL, 0, &err));
	ck_assert_int_eq(fcntl(udp[0], F_GETFD), -1);
	cordon_allowlist_free(al);
}
END_TEST

/* An address the supervisor refuses leaves the reply, whatever the proxy thought of it. */
START_TEST(admit_refused_address_leaves_the_reply)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	const enum cordon_vet blocked[] = { CORDON_VET_BLOCKED };
	struct cordon_dnsproxy_stats st;

	harness_up(&h, 0, true);
	h.ins.deferred = true;
	send_query(&h, "rebind.allowed.test", CORDON_DNS_TYPE_A);
	ck_assert_int_lt(wait_reply(&h, 200, m), 0);
	ck_assert_uint_eq(h.ins.n, 1); /* the proxy vetted the other two away itself */
	cordon_dnsproxy_admitted(h.proxy, h.ins.last_token, 0, blocked, 1);
	ck_assert_int_gt(wait_reply(&h, 3000, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_NOERROR);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 0);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.addrs_refused, 3);
	ck_assert_uint_eq(st.addrs_inserted, 0);
	/* Not admitted, so asked again next time. */
	send_query(&h, "rebind.allowed.test", CORDON_DNS_TYPE_A);
	ck_assert_int_lt(wait_reply(&h, 200, m), 0);
	ck_assert_uint_eq(h.ins.calls, 2);
	harness_down(&h);
	free(m);
}
END_TEST

/* An admit nobody answers: SERVFAIL once the admit's time is up, and the client is told. */
START_TEST(admit_unanswered_is_servfail)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	struct cordon_dnsproxy_stats st;

	harness_up(&h, 0, true);
	h.ins.deferred = true;
	send_query(&h, "allowed.test", CORDON_DNS_TYPE_A);
	/* The default admit timeout is 2 s. */
	ck_assert_int_gt(wait_reply(&h, 5000, m), 0);
	ck_assert_int_eq(rcode(m), CORDON_DNS_RCODE_SERVFAIL);
	cordon_dnsproxy_stats(h.proxy, &st);
	ck_assert_uint_eq(st.servfail, 1);
	/* Its late verdict finds nobody. */
	cordon_dnsproxy_admitted(h.proxy, h.ins.last_token, 0, NULL, 0);
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * An address the sets hold for at least half the TTL is not asked for
 * again, and the client hears no more TTL than the sets have left; a
 * record TTL above the ceiling reaches the client cut to it.
 */
START_TEST(admitted_addresses_known_and_ttls_cut)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();

	harness_up(&h, 0, true);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(h.ins.calls, 1);
	ck_assert_uint_eq(m->rr[0].ttl, 300);
	ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(h.ins.calls, 1);
	ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
	ck_assert_uint_le(m->rr[0].ttl, 300);
	ck_assert_uint_ge(m->rr[0].ttl, 295);
	ck_assert_int_gt(ask(&h, "long.allowed.test", CORDON_DNS_TYPE_A, m), 0);
	ck_assert_uint_eq(h.ins.calls, 2);
	ck_assert_uint_eq(h.ins.timeout_ms[1], CORDON_DNS_TTL_CEILING_S * 1000);
	ck_assert_uint_eq(m->rr[0].ttl, CORDON_DNS_TTL_CEILING_S);
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * Every (name, address) admitted is kept while the sets hold it: a
 * workload that cycles through more names than the table's first size
 * (512) asks the supervisor once per name, not once per query (the
 * table gave way to each new name, and a thousand names in turn were a
 * thousand admits every round).
 */
START_TEST(admitted_many_names_asked_once)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	char name[64];

	harness_up(&h, 0, true);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 1500; i++) {
			snprintf(name, sizeof(name), "n%d.allowed.test", i);
			ck_assert_int_gt(ask(&h, name, CORDON_DNS_TYPE_A, m), 0);
			ck_assert_uint_eq(count_type(m, CORDON_DNS_TYPE_A), 1);
		}
		ck_assert_uint_eq(h.stub.queries, 1500 * (unsigned)(round + 1));
		ck_assert_uint_eq(h.ins.calls, 1500);
	}
	harness_down(&h);
	free(m);
}
END_TEST

/*
 * Upstream query ids come from the kernel's generator a batch at a time,
 * not a call a query: 200 forwarded queries, at most 12 calls (a call a
 * query was 200), and the ids still differ (random ones may repeat, so
 * only nearly all of them must).
 */
START_TEST(upstream_ids_fetched_in_batches)
{
	struct harness h;
	struct cordon_dns_msg *m = reply_msg();
	uint16_t ids[200];
	size_t distinct = 0;

	harness_up(&h, 0, true);
	getrandom_calls = 0;
	for (int i = 0; i < 200; i++) {
		ck_assert_int_gt(ask(&h, "allowed.test", CORDON_DNS_TYPE_A, m), 0);
		ids[i] = (uint16_t)(h.stub.last_query[0] << 8 | h.stub.last_query[1]);
	}
	ck_assert_uint_eq(h.stub.queries, 200);
	ck_assert_uint_le(getrandom_calls, 200 / 16);
	for (int i = 0; i < 200; i++) {
		bool seen = false;

		for (int k = 0; k < i && !seen; k++)
			seen = ids[k] == ids[i];
		distinct += !seen;
	}
	ck_assert_uint_ge(distinct, 190);
	harness_down(&h);
	free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dnsproxy");
	TCase *tc = tcase_create("proxy");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, allowed_forwarded_and_inserted_before_reply);
	tcase_add_test(tc, denied_nxdomain_without_upstream);
	tcase_add_test(tc, upstream_down_servfail);
	tcase_add_test(tc, truncated_retries_over_tcp);
	tcase_add_test(tc, too_large_for_udp_is_tc_with_the_client_id);
	tcase_add_test(tc, rebinding_stripped_not_inserted);
	tcase_add_test(tc, ttl_zero_gets_the_floor);
	tcase_add_test(tc, cname_chain_only);
	tcase_add_test(tc, rate_limited);
	tcase_add_test(tc, insert_failure_is_servfail);
	tcase_add_test(tc, tcp_client_reset_after_denied_query);
	tcase_add_test(tc, tcp_pipelined_replies_all_delivered);
	tcase_add_test(tc, client_closed_earlier_in_the_batch);
	tcase_add_test(tc, upstream_gets_the_question_only);
	tcase_add_test(tc, gateway_listeners_one_per_family);
	tcase_add_test(tc, foreign_sources_never_answered);
	tcase_add_test(tc, listeners_refused_and_closed);
	tcase_add_test(tc, admit_answer_waits_for_the_verdict);
	tcase_add_test(tc, admit_refused_address_leaves_the_reply);
	tcase_add_test(tc, admit_unanswered_is_servfail);
	tcase_add_test(tc, admitted_addresses_known_and_ttls_cut);
	tcase_add_test(tc, admitted_many_names_asked_once);
	tcase_add_test(tc, upstream_ids_fetched_in_batches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct cordon_error err = { 0 };

	/* The engine calls the netlink libraries through tables: filled as cordon fills them. */
	if (cordon_netlib_load(CORDON_NETLIB_ALL, &err) < 0) {
		printf("Bail out! %s\n", err.msg);
		return EXIT_FAILURE;
	}
	return unit_run(suite());
}
