// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS proxy's channel to the supervisor: the supervisor's check of
 * every message (a proxy taken over by the workload sends what it
 * likes), its re-vetting of admits, and the proxy process's loop over a
 * real socketpair, served by a stub upstream in a private network
 * namespace (a new user namespace too when not root).
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cordon/net.h"
#include "cordon/security.h"
#include "unit.h"

static struct cordon_addr addr(const char *s)
{
	struct cordon_addr a;

	ck_assert_int_eq(cordon_addr_parse(s, &a), 0);
	return a;
}

static void admit_msg(struct cordon_dnsctl_msg *m, const char *name, const char *const *addrs,
		      size_t n)
{
	memset(m, 0, sizeof(*m));
	m->type = CORDON_DNSCTL_ADMIT;
	m->token = 7;
	m->ttl_s = 300;
	m->qtype = CORDON_DNS_TYPE_A;
	m->n_addrs = (uint8_t)n;
	snprintf(m->name, sizeof(m->name), "%s", name);
	for (size_t i = 0; i < n; i++) {
		struct cordon_addr a = addr(addrs[i]);

		cordon_dnsctl_addr_put(&a, CORDON_VET_OK, &m->addrs[i]);
	}
}

static bool passes(const struct cordon_dnsctl_msg *m)
{
	const char *why = NULL;
	return cordon_dnsctl_check(m, sizeof(*m), &why) == 0;
}

START_TEST(check_accepts_well_formed)
{
	struct cordon_dnsctl_msg m;
	static const char *const two[] = { "93.184.216.7", "2606:2800:220:1::7" };

	admit_msg(&m, "allowed.test", two, 2);
	ck_assert(passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_READY;
	ck_assert(passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_EVENT;
	snprintf(m.name, sizeof(m.name), "denied.test");
	ck_assert(passes(&m));
	memset(m.name, 0, sizeof(m.name)); /* a rate-limited query has no name */
	ck_assert(passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_STATS;
	m.stats.queries = 12;
	ck_assert(passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_POLICY;
	m.token = 4096;
	ck_assert(passes(&m));
	m.error = -EINVAL;
	ck_assert(passes(&m));
}
END_TEST

/* Everything a hostile proxy could send wrong is refused before it is read. */
START_TEST(check_refuses_every_violation)
{
	static const char *const one[] = { "93.184.216.7" };
	struct cordon_dnsctl_msg m;
	const char *why = NULL;

	admit_msg(&m, "allowed.test", one, 1);
	ck_assert_int_lt(cordon_dnsctl_check(&m, sizeof(m) - 1, &why), 0);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_lt(cordon_dnsctl_check(&m, 0, &why), 0);

	m.type = 0;
	ck_assert(!passes(&m));
	m.type = CORDON_DNSCTL_ADMITTED; /* ours to send, not the proxy's */
	ck_assert(!passes(&m));
	m.type = 99;
	ck_assert(!passes(&m));

	/* POLICY's answer: the length and an errno, nothing else. */
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_POLICY;
	m.error = 1;
	ck_assert(!passes(&m));
	m.error = -5000;
	ck_assert(!passes(&m));
	m.error = 0;
	snprintf(m.name, sizeof(m.name), "x");
	ck_assert(!passes(&m));
	memset(m.name, 0, sizeof(m.name));
	m.n_addrs = 1;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);

	admit_msg(&m, "allowed.test", one, 1);
	m.n_addrs = CORDON_DNS_ADMIT_MAX + 1;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.n_addrs = 0;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.addrs[0].family = AF_UNIX;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.addrs[0].bytes[4] = 1; /* past an IPv4 address */
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.addrs[1].bytes[0] = 1; /* past the count */
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.addrs[0].why = CORDON_VET_METADATA; /* an admit carries no verdict */
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.addrs[0].why = CORDON_VET_COUNT;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.pad[1] = 1;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.n_refused = 1;
	ck_assert(!passes(&m));

	admit_msg(&m, "allowed.test", one, 1);
	memset(m.name, 'a', sizeof(m.name)); /* no end */
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed test", one, 1);
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed\x01.test", one, 1);
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.name[sizeof(m.name) - 1] = 'x'; /* bytes after the end */
	m.name[sizeof(m.name) - 2] = '\0';
	ck_assert(!passes(&m));
	admit_msg(&m, "", one, 1);
	ck_assert(!passes(&m));

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_EVENT;
	m.n_refused = 1;
	{
		struct cordon_addr a = addr("169.254.169.254");

		cordon_dnsctl_addr_put(&a, CORDON_VET_OK,
				       &m.refused[0]); /* refused without a reason */
	}
	ck_assert(!passes(&m));
	m.refused[0].why = CORDON_VET_METADATA;
	ck_assert(passes(&m));
	m.allowed = 2;
	ck_assert(!passes(&m));
	m.allowed = 1;
	m.rcode = 16;
	ck_assert(!passes(&m));

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_READY;
	m.token = 1;
	ck_assert(!passes(&m));

	/* A field the type does not carry is zero (found by fuzz-dnsctl). */
	admit_msg(&m, "allowed.test", one, 1);
	m.error = -1;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.stats.queries = 1;
	ck_assert(!passes(&m));
	admit_msg(&m, "allowed.test", one, 1);
	m.rcode = 3;
	ck_assert(!passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_EVENT;
	m.token = 9;
	ck_assert(!passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_EVENT;
	m.ttl_s = 60;
	ck_assert(!passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_STATS;
	snprintf(m.name, sizeof(m.name), "x");
	ck_assert(!passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_STATS;
	m.n_addrs = 1;
	ck_assert(!passes(&m));

	/* FAILED's reason reaches the terminal: printable, and nothing else in the message. */
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_FAILED;
	snprintf(m.name, sizeof(m.name), "DNS proxy: \x1b]0;owned\x07");
	ck_assert(!passes(&m));
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_FAILED;
	snprintf(m.name, sizeof(m.name), "DNS proxy: epoll: Bad file descriptor");
	ck_assert(passes(&m));
	m.name[sizeof(m.name) - 1] = 'x'; /* bytes after the end */
	ck_assert(!passes(&m));
	m.name[sizeof(m.name) - 1] = '\0';
	m.token = 1;
	ck_assert(!passes(&m));
}
END_TEST

/*
 * The supervisor's re-vetting: metadata, link-local and loopback stay
 * refused whatever the proxy says; an address the gateway blocks (the
 * host's own) is refused; a name off the allowlist gets nothing.
 */
/*
 * A datagram: one message of any type the proxy sends, or up to
 * CORDON_DNSCTL_EVENTS_MAX EVENTs together; nothing else travels with
 * EVENTs (an ADMIT among them is refused), and every one is checked.
 */
START_TEST(check_datagram_events_only_together)
{
	static const char *const one[] = { "93.184.216.7" };
	struct cordon_dnsctl_msg d[CORDON_DNSCTL_EVENTS_MAX + 1];
	const char *why = NULL;

	memset(d, 0, sizeof(d));
	for (size_t i = 0; i < ARRAY_SIZE(d); i++) {
		d[i].type = CORDON_DNSCTL_EVENT;
		snprintf(d[i].name, sizeof(d[i].name), "n%zu.test", i);
	}
	for (size_t n = 1; n <= CORDON_DNSCTL_EVENTS_MAX; n++)
		ck_assert_int_eq(cordon_dnsctl_check_datagram(d, n * sizeof(d[0]), &why), (int)n);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, sizeof(d), &why), -1);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 0, &why), -1);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]) - 1, &why), -1);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]) + 1, &why), -1);
	/* One bad EVENT spoils the datagram. */
	d[2].rcode = 16;
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 3 * sizeof(d[0]), &why), -1);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]), &why), 2);
	d[2].rcode = 0;
	/* An ADMIT goes alone: not after EVENTs, not before them. */
	admit_msg(&d[1], "allowed.test", one, 1);
	ck_assert_int_eq(cordon_dnsctl_check_datagram(&d[1], sizeof(d[0]), &why), 1);
	why = NULL;
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]), &why), -1);
	ck_assert_str_eq(why, "a message other than EVENT among several");
	ck_assert_int_eq(cordon_dnsctl_check_datagram(&d[1], 2 * sizeof(d[0]), &why), -1);
	/* STATS and READY alone too. */
	memset(&d[1], 0, sizeof(d[1]));
	d[1].type = CORDON_DNSCTL_STATS;
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]), &why), -1);
	d[1].type = CORDON_DNSCTL_READY;
	ck_assert_int_eq(cordon_dnsctl_check_datagram(d, 2 * sizeof(d[0]), &why), -1);
}
END_TEST

START_TEST(vet_admit_refuses_what_the_gateway_blocks)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_cidr *blocked;
	struct cordon_addr host = addr("203.0.113.77"), gw = addr("93.184.216.1");
	const struct cordon_addr extra[] = { host, gw };
	const struct cordon_addr asked[] = {
		addr("169.254.169.254"),
		addr("127.0.0.1"),
		addr("93.184.216.7"),
		addr("93.184.216.1"),
		addr("10.8.0.9"),
		addr("10.9.0.1"),
		addr("::ffff:169.254.169.254"),
		addr("fe80::1"),
		addr("2606:2800:220:1::7"),
		addr("::ffff:93.184.216.1"),
		addr("2002:5db8:d801::1"),
		addr("64:ff9b::5db8:d801"),
	};
	enum cordon_vet why[ARRAY_SIZE(asked)];
	size_t n_blocked;

	ck_assert_int_eq(cordon_allowlist_add(al, "allowed.test,10.8.0.0/16", false, &err), 0);
	n_blocked = cordon_gateway_blocked(al, extra, ARRAY_SIZE(extra), &blocked);
	ck_assert_uint_eq(cordon_dnsctl_vet_admit(al, blocked, n_blocked, "allowed.test", asked,
						  ARRAY_SIZE(asked), why),
			  3);
	ck_assert_int_eq(why[0], CORDON_VET_METADATA);
	ck_assert_int_eq(why[1], CORDON_VET_LOOPBACK);
	ck_assert_int_eq(why[2], CORDON_VET_OK);
	ck_assert_int_eq(why[3], CORDON_VET_BLOCKED); /* the host's own */
	ck_assert_int_eq(why[4], CORDON_VET_OK);      /* inside a listed CIDR */
	ck_assert_int_eq(why[5], CORDON_VET_PRIVATE);
	ck_assert_int_eq(why[6], CORDON_VET_EMBEDDED);
	ck_assert_int_eq(why[7], CORDON_VET_LINK_LOCAL);
	ck_assert_int_eq(why[8], CORDON_VET_OK);
	/* A blocked address (the host gateway) in its IPv6 forms: mapped, 6to4, NAT64. */
	ck_assert_int_eq(why[9], CORDON_VET_BLOCKED);
	ck_assert_int_eq(why[10], CORDON_VET_BLOCKED);
	ck_assert_int_eq(why[11], CORDON_VET_BLOCKED);
	/* A name the allowlist does not match admits nothing at all. */
	ck_assert_uint_eq(cordon_dnsctl_vet_admit(al, blocked, n_blocked, "denied.test", asked,
						  ARRAY_SIZE(asked), why),
			  0);
	for (size_t i = 0; i < ARRAY_SIZE(asked); i++)
		ck_assert_int_eq(why[i], CORDON_VET_NAME);
	free(blocked);
	cordon_allowlist_free(al);
}
END_TEST

/* --- the proxy process's loop --------------------------------------------------- */

static void private_network(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s;

	if (unshare(CLONE_NEWNET) < 0) {
		char map[64];
		uid_t uid = getuid();
		gid_t gid = getgid();

		ck_assert_int_eq(unshare(CLONE_NEWUSER | CLONE_NEWNET), 0);
		cordon_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", 4);
		snprintf(map, sizeof(map), "0 %u 1", uid);
		ck_assert_int_eq(
			cordon_write_file_at(AT_FDCWD, "/proc/self/uid_map", map, strlen(map)), 0);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		ck_assert_int_eq(
			cordon_write_file_at(AT_FDCWD, "/proc/self/gid_map", map, strlen(map)), 0);
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
	close(s);
}

static int udp(const char *ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	inet_pton(AF_INET, ip, &sa.sin_addr);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* A query for NAME (A, id 0x4242) in buf; its length. */
static size_t query(uint8_t *buf, const char *name)
{
	size_t n = 12;

	memset(buf, 0, 12);
	buf[0] = 0x42, buf[1] = 0x42, buf[2] = 0x01, buf[5] = 1;
	for (const char *p = name; *p;) {
		const char *dot = strchrnul(p, '.');

		buf[n++] = (uint8_t)(dot - p);
		memcpy(buf + n, p, (size_t)(dot - p));
		n += (size_t)(dot - p);
		p = *dot ? dot + 1 : dot;
	}
	buf[n++] = 0;
	buf[n++] = 0, buf[n++] = 1, buf[n++] = 0, buf[n++] = 1;
	return n;
}

/* The stub: any query gets one A record, 93.184.216.7, TTL 300. */
static void stub_answer(int fd)
{
	static const uint8_t rr[] = {
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 0x2c, 0, 4, 93, 184, 216, 7
	};
	uint8_t buf[600];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, buf, 512, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

	if (n < 12)
		return;
	buf[2] |= 0x80, buf[3] = 0x80, buf[7] = 1;
	memcpy(buf + n, rr, sizeof(rr));
	sendto(fd, buf, (size_t)n + sizeof(rr), 0, (struct sockaddr *)&from, fl);
}

/* The next message from the proxy, checked (the stub answering meanwhile). */
/*
 * The supervisor's socket channel, played here when a test sets it: every
 * request must be a well-formed SOCKET for upstream 0, and gets a UDP
 * socket connected to the stub (or a TCP one, its connect begun).
 */
static int sockets_fd = -1;
static unsigned sockets_given;

static void give_socket(void)
{
	struct cordon_dnsctl_msg m;
	const char *why = NULL;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(5300) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t r = recv(sockets_fd, &m, sizeof(m), MSG_TRUNC);
	int fd;

	ck_assert_int_eq(r, (ssize_t)sizeof(m));
	ck_assert_msg(cordon_dnsctl_check(&m, (size_t)r, &why) == 0, "%s", why);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_SOCKET);
	ck_assert_uint_eq(m.token, 0);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	fd = socket(AF_INET, m.qtype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0)
		ck_assert_int_eq(errno, EINPROGRESS);
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_SOCKET;
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof(control.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ck_assert_int_eq(sendmsg(sockets_fd, &mh, 0), (ssize_t)sizeof(m));
	close(fd);
	sockets_given++;
}

/* poll fd and the stub (answering it) and the socket channel (serving it): fd ready? */
static bool wait_for(int fd, int stub)
{
	struct pollfd p[3] = { { .fd = fd, .events = POLLIN },
			       { .fd = stub, .events = POLLIN },
			       { .fd = sockets_fd, .events = POLLIN } };

	ck_assert_int_ge(poll(p, 3, 20), 0);
	if (p[2].revents & POLLIN)
		give_socket();
	if (p[1].revents & POLLIN)
		stub_answer(stub);
	return p[0].revents & POLLIN;
}

/* The messages of the last datagram not yet taken by next_msg, and the datagrams read. */
static struct cordon_dnsctl_msg pending[CORDON_DNSCTL_EVENTS_MAX];
static size_t n_pending, next_pending;
static unsigned datagrams;

/* The next message from the proxy, checked as the supervisor does (the stub answering meanwhile). */
static void next_msg(int ctl, int stub, struct cordon_dnsctl_msg *m)
{
	for (int i = 0; next_pending == n_pending && i < 300; i++) {
		const char *why = NULL;
		ssize_t r;
		int n;

		if (!wait_for(ctl, stub))
			continue;
		r = recv(ctl, pending, sizeof(pending), MSG_TRUNC);
		n = cordon_dnsctl_check_datagram(pending, (size_t)r, &why);
		ck_assert_msg(n > 0, "%s", why);
		n_pending = (size_t)n;
		next_pending = 0;
		datagrams++;
	}
	if (next_pending == n_pending)
		ck_abort_msg("no message from the proxy");
	*m = pending[next_pending++];
}

static ssize_t client_reply(int client, int stub, uint8_t *buf, size_t cap)
{
	for (int i = 0; i < 300; i++)
		if (wait_for(client, stub))
			return recv(client, buf, cap, 0);
	return -1;
}

/*
 * The proxy's process loop in a child, against a supervisor played here:
 * an allowlist of allowed.test, the stub as its one upstream, a UDP
 * listener on 127.0.0.2:5353 and a client connected to it; READY read.
 * With sockets, its upstream sockets come over a socket channel
 * (give_socket); without, it makes them itself.
 */
struct served {
	int ctl, stub, client;
	pid_t pid;
	struct cordon_allowlist *al;
};

static void serve_up(struct served *s, bool sockets)
{
	struct cordon_error err = { 0 };
	struct sockaddr_storage up = { 0 };
	struct sockaddr_in *u = (struct sockaddr_in *)&up, px = { .sin_family = AF_INET };
	struct cordon_dnsproxy_config cfg = { 0 };
	struct cordon_dnsctl_msg m;
	struct cordon_addr source;
	int sp[2], ss[2] = { -1, -1 };

	private_network();
	n_pending = next_pending = 0;
	datagrams = 0;
	s->al = cordon_allowlist_new();
	ck_assert_int_eq(cordon_allowlist_add(s->al, "allowed.test", false, &err), 0);
	u->sin_family = AF_INET;
	u->sin_port = htons(5300);
	inet_pton(AF_INET, "127.0.0.1", &u->sin_addr);
	cfg.allowlist = s->al;
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	source = addr("127.0.0.1");
	cfg.clients = &source;
	cfg.n_clients = 1;
	s->stub = udp("127.0.0.1", 5300);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	if (sockets)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ss), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		int fd = udp("127.0.0.2", 5353);

		close(sp[0]);
		if (ss[0] >= 0)
			close(ss[0]);
		_exit(cordon_dnsproxy_serve(&cfg, &fd, 1, NULL, 0, sp[1], ss[1], &err) == 0 ? 0 :
											      3);
	}
	close(sp[1]);
	if (ss[1] >= 0)
		close(ss[1]);
	s->ctl = sp[0];
	sockets_fd = ss[0];
	next_msg(s->ctl, s->stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_READY);
	s->client = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	px.sin_port = htons(5353);
	inet_pton(AF_INET, "127.0.0.2", &px.sin_addr);
	ck_assert_int_eq(connect(s->client, (struct sockaddr *)&px, sizeof(px)), 0);
}

/* Hang up: the proxy ends, with status 0. */
static void serve_down(struct served *s)
{
	int status;

	close(s->ctl);
	if (sockets_fd >= 0)
		close(sockets_fd);
	sockets_fd = -1;
	ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(s->client);
	close(s->stub);
	cordon_allowlist_free(s->al);
}

/*
 * The proxy's process loop against a supervisor played here: READY
 * first; an allowed answer waits for its ADMIT's verdict, and the address
 * refused there is gone from the reply; EVENTs for the report; STATS on
 * request; a hang-up ends it. The lab build's forged-admit variable
 * means nothing to this build.
 */
START_TEST(serve_speaks_the_protocol)
{
	struct served s;
	struct cordon_dnsctl_msg m;
	struct cordon_dns_msg *reply = cordon_xcalloc(1, sizeof(*reply));
	uint8_t buf[600];
	size_t len;

	setenv("CORDON_LAB_DNS_FORGE_ADMIT", "169.254.169.254", 1);
	serve_up(&s, true);
	unsetenv("CORDON_LAB_DNS_FORGE_ADMIT");
	len = query(buf, "allowed.test");
	ck_assert_int_eq(send(s.client, buf, len, 0), (ssize_t)len);
	next_msg(s.ctl, s.stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);
	ck_assert_str_eq(m.name, "allowed.test");
	ck_assert_uint_eq(m.n_addrs, 1); /* nothing forged in this build */
	ck_assert_uint_eq(m.ttl_s, 300);
	{
		struct cordon_addr a;
		char text[64];

		cordon_dnsctl_addr_get(&m.addrs[0], &a);
		cordon_addr_format(&a, text, sizeof(text));
		ck_assert_str_eq(text, "93.184.216.7");
	}
	/* Nothing for the client until the verdict. */
	ck_assert_int_eq(recv(s.client, buf, sizeof(buf), MSG_DONTWAIT), -1);
	m.type = CORDON_DNSCTL_ADMITTED;
	m.addrs[0].why = CORDON_VET_BLOCKED;
	ck_assert_int_eq(send(s.ctl, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	ck_assert_int_gt(client_reply(s.client, s.stub, buf, sizeof(buf)), 0);
	next_msg(s.ctl, s.stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(m.allowed);
	ck_assert_uint_eq(m.n_addrs, 0);
	ck_assert_uint_eq(m.n_refused, 1);
	ck_assert_uint_eq(m.refused[0].why, CORDON_VET_BLOCKED);

	len = query(buf, "denied.test");
	ck_assert_int_eq(send(s.client, buf, len, 0), (ssize_t)len);
	ck_assert_int_gt(client_reply(s.client, s.stub, buf, sizeof(buf)), 0);
	next_msg(s.ctl, s.stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(!m.allowed);
	ck_assert_str_eq(m.name, "denied.test");

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_STATS;
	ck_assert_int_eq(send(s.ctl, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	next_msg(s.ctl, s.stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_STATS);
	ck_assert_uint_eq(m.stats.queries, 2);
	ck_assert_uint_eq(m.stats.denied, 1);
	ck_assert_uint_eq(m.stats.addrs_refused, 1);
	/* Its upstream socket came from us: one for the one upstream, kept for both queries. */
	ck_assert_uint_eq(sockets_given, 1);

	serve_down(&s);
	free(reply);
}
END_TEST

/*
 * The EVENTs of one turn of the proxy's loop travel together: queries
 * that were all waiting when it woke (it was stopped while they were
 * sent) are answered in one turn, and their EVENTs come in one datagram,
 * in order, where each came in one of its own (a wakeup and two system
 * calls of the supervisor's per query). Past CORDON_DNSCTL_EVENTS_MAX, a
 * datagram is full and the next begins.
 */
START_TEST(serve_sends_a_turns_events_together)
{
	struct served s;
	struct cordon_dnsctl_msg m;
	uint8_t buf[600];
	const unsigned n = CORDON_DNSCTL_EVENTS_MAX + 3;

	serve_up(&s, true);
	ck_assert_int_eq(kill(s.pid, SIGSTOP), 0);
	for (unsigned i = 0; i < n; i++) {
		char name[32];
		size_t len;

		snprintf(name, sizeof(name), "denied%u.test", i);
		len = query(buf, name);
		ck_assert_int_eq(send(s.client, buf, len, 0), (ssize_t)len);
	}
	ck_assert_int_eq(kill(s.pid, SIGCONT), 0);
	for (unsigned i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "denied%u.test", i);
		next_msg(s.ctl, s.stub, &m);
		ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
		ck_assert_str_eq(m.name, name);
		ck_assert(!m.allowed);
	}
	/* READY, then a full datagram and the rest. */
	ck_assert_uint_eq(datagrams, 3);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_gt(client_reply(s.client, s.stub, buf, sizeof(buf)), 0);
	serve_down(&s);
}
END_TEST

/* POLICY with text in a sealed memfd (NULL: no fd at all); the proxy's answer's error. */
static int32_t send_policy(int ctl, int stub, const char *text)
{
	struct cordon_dnsctl_msg m;
	size_t len = text ? strlen(text) : 0;
	int fd = text ? cordon_memfd_sealed("policy", text, len) : -1;

	ck_assert(!text || fd >= 0);
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_POLICY;
	m.token = (uint32_t)len;
	ck_assert_int_eq(cordon_send_fds(ctl, &m, sizeof(m), &fd, fd >= 0, 0), 0);
	if (fd >= 0)
		close(fd);
	next_msg(ctl, stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_POLICY);
	ck_assert_uint_eq(m.token, len);
	return m.error;
}

/* Ask for name; the proxy's next message (an ADMIT, answered OK, or the EVENT of a denial). */
static void ask(int ctl, int stub, int client, const char *name, struct cordon_dnsctl_msg *m)
{
	uint8_t buf[600];
	size_t len = query(buf, name);

	ck_assert_int_eq(send(client, buf, len, 0), (ssize_t)len);
	next_msg(ctl, stub, m);
	if (m->type == CORDON_DNSCTL_ADMIT) {
		struct cordon_dnsctl_msg ok = *m;

		ok.type = CORDON_DNSCTL_ADMITTED;
		ck_assert_int_eq(send(ctl, &ok, sizeof(ok), 0), (ssize_t)sizeof(ok));
	}
	ck_assert_int_gt(client_reply(client, stub, buf, sizeof(buf)), 0);
	if (m->type == CORDON_DNSCTL_ADMIT) {
		struct cordon_dnsctl_msg ev;

		next_msg(ctl, stub, &ev);
		ck_assert_uint_eq(ev.type, CORDON_DNSCTL_EVENT);
	}
}

/*
 * A live update: POLICY's allowlist judges the next query, what the proxy
 * knew of the allow sets is forgotten (an address it had admitted is
 * asked for again), a policy that does not parse, or comes without its
 * memfd, is refused and changes nothing.
 */
START_TEST(serve_takes_a_new_policy)
{
	struct served s;
	struct cordon_dnsctl_msg m;

	serve_up(&s, true);

	ask(s.ctl, s.stub, s.client, "allowed.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);
	/* In the sets for long enough: answered without asking. */
	ask(s.ctl, s.stub, s.client, "allowed.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(m.allowed);

	ck_assert_int_eq(send_policy(s.ctl, s.stub, "allowed.test\nother.test\n"), 0);
	/* Asked for again: the supervisor re-vetted the sets under the new policy. */
	ask(s.ctl, s.stub, s.client, "allowed.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);
	/* Another name for the same address is asked for too: the supervisor keeps both. */
	ask(s.ctl, s.stub, s.client, "other.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);
	ck_assert_str_eq(m.name, "other.test");

	ck_assert_int_eq(send_policy(s.ctl, s.stub, "other.test\n"), 0);
	ask(s.ctl, s.stub, s.client, "allowed.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(!m.allowed);

	/* Refused, and nothing changes: allowed.test stays denied, other.test allowed. */
	ck_assert_int_eq(send_policy(s.ctl, s.stub, "allowed.test\nnot an entry!\n"), -EINVAL);
	ck_assert_int_eq(send_policy(s.ctl, s.stub, NULL), -EINVAL);
	ask(s.ctl, s.stub, s.client, "allowed.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(!m.allowed);
	ask(s.ctl, s.stub, s.client, "other.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);

	/* An empty allowlist: every name denied. */
	ck_assert_int_eq(send_policy(s.ctl, s.stub, ""), 0);
	ask(s.ctl, s.stub, s.client, "other.test", &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_EVENT);
	ck_assert(!m.allowed);

	serve_down(&s);
}
END_TEST

/*
 * A message from the supervisor longer than a message is not one: the
 * proxy ignores it whole (it read the first bytes of it as a verdict;
 * found by fuzz-dnsproxy).
 */
START_TEST(serve_ignores_a_message_too_long)
{
	struct served s;
	struct cordon_dnsctl_msg m;
	struct cordon_dns_msg *reply = cordon_xcalloc(1, sizeof(*reply));
	uint8_t buf[600], longer[sizeof(m) + 8] = { 0 };
	ssize_t got;
	size_t len;

	serve_up(&s, false);
	len = query(buf, "allowed.test");
	ck_assert_int_eq(send(s.client, buf, len, 0), (ssize_t)len);
	next_msg(s.ctl, s.stub, &m);
	ck_assert_uint_eq(m.type, CORDON_DNSCTL_ADMIT);

	/* Admitted, in a message eight bytes too long: not a verdict. */
	m.type = CORDON_DNSCTL_ADMITTED;
	memcpy(longer, &m, sizeof(m));
	ck_assert_int_eq(send(s.ctl, longer, sizeof(longer), 0), (ssize_t)sizeof(longer));
	/* Refused, in a message of the right size: the verdict. */
	m.addrs[0].why = CORDON_VET_BLOCKED;
	ck_assert_int_eq(send(s.ctl, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	got = client_reply(s.client, s.stub, buf, sizeof(buf));
	ck_assert_int_gt(got, 0);
	ck_assert_int_eq(cordon_dns_parse(buf, (size_t)got, reply), 0);
	ck_assert_uint_eq(reply->n_rr, 0);

	serve_down(&s);
	free(reply);
}
END_TEST

/*
 * A supervisor that hangs up without reading what the proxy sent (READY
 * here: the kernel then reports ECONNRESET rather than the end) ends the
 * loop as any hang-up does, not as an error (found by fuzz-dnsproxy).
 */
START_TEST(serve_ends_on_hangup_with_unread_messages)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct sockaddr_storage up = { 0 };
	struct sockaddr_in *u = (struct sockaddr_in *)&up;
	struct cordon_dnsproxy_config cfg = { 0 };
	struct cordon_addr source;
	struct pollfd p;
	int sp[2], status;
	pid_t pid;

	private_network();
	ck_assert_int_eq(cordon_allowlist_add(al, "allowed.test", false, &err), 0);
	u->sin_family = AF_INET;
	u->sin_port = htons(5300);
	inet_pton(AF_INET, "127.0.0.1", &u->sin_addr);
	cfg.allowlist = al;
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	source = addr("127.0.0.1");
	cfg.clients = &source;
	cfg.n_clients = 1;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = udp("127.0.0.2", 5353);

		close(sp[0]);
		_exit(cordon_dnsproxy_serve(&cfg, &fd, 1, NULL, 0, sp[1], -1, &err) == 0 ? 0 : 3);
	}
	close(sp[1]);
	/* READY is there, and stays unread. */
	p = (struct pollfd){ .fd = sp[0], .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 10000), 1);
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	cordon_allowlist_free(al);
}
END_TEST

/*
 * What the proxy's filter lets through, and what ends it: in a child, one
 * call each. Sockets made before the filter stand in for the listeners
 * (at the proxy's fd numbers) and for an upstream socket (connected).
 */
static int under_filter(int call)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct cordon_error err = { 0 };
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
		/* Where the proxy has them: a listener at fd 4, an upstream socket elsewhere. */
		int up = fcntl(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), F_DUPFD_CLOEXEC, 50);
		int lst = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		long r = 0;

		to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (up < 0 || lst < 0 || dup2(lst, CORDON_DNSPROXY_FD_UDP) < 0 ||
		    connect(up, (struct sockaddr *)&to, sizeof(to)) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    cordon_seccomp_install(cordon_seccomp_dnsproxy(), 1, &err) < 0)
			_exit(99);
		switch (call) {
		case 0: /* a connected socket: no address */
			r = sendto(up, "x", 1, MSG_DONTWAIT, NULL, 0);
			break;
		case 1: /* a listener answers whoever asked */
			r = sendto(CORDON_DNSPROXY_FD_UDP, "x", 1, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to));
			break;
		case 2: /* an upstream socket pointed elsewhere */
			r = sendto(up, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
			break;
		case 3:
			r = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			break;
		case 4:
			r = connect(up, (struct sockaddr *)&to, sizeof(to));
			break;
		case 5:
			r = open("/etc/hostname", O_RDONLY);
			break;
		case 6:
			r = (long)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			break;
		case 7:
			r = (long)mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			break;
		case 8:
			r = socket(AF_UNIX, SOCK_STREAM, 0);
			break;
		case 9: {
			struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to) };

			r = sendmsg(up, &mh, MSG_DONTWAIT);
			break;
		}
		case 10:
			r = getpid();
			break;
		case 11: /* a listener's fd stays the listener's: it cannot be freed for another */
			r = close(CORDON_DNSPROXY_FD_UDP);
			break;
		case 12:
			r = close(up);
			break;
		/*
		 * close takes an int: bits above the low 32 must neither let a
		 * listener be closed nor refuse another fd.
		 */
		case 13:
			r = syscall(SYS_close, 0x100000000UL | CORDON_DNSPROXY_FD_UDP);
			break;
		case 14:
			r = syscall(SYS_close, 0xffffffff00000000UL | (CORDON_DNSPROXY_FD_UDP + 1));
			break;
		case 15:
			r = syscall(SYS_close, 0x8000000000000000UL | (unsigned long)up);
			break;
		case 16: /* the highest fd it can have: not open here (EBADF) */
			r = close(CORDON_DNSPROXY_NOFILE - 1);
			break;
		case 17: /* above its RLIMIT_NOFILE: no fd of its; a proxy gone wrong */
			r = close(CORDON_DNSPROXY_NOFILE);
			break;
		}
		syscall(SYS_exit_group, r >= 0 ? 0 : errno == EPERM ? 3 : 2);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return -WTERMSIG(status);
	return WEXITSTATUS(status);
}

START_TEST(proxy_filter_allows_its_calls_only)
{
	private_network();
	ck_assert_int_eq(under_filter(0), 0);
	ck_assert_int_eq(under_filter(1), 0);
	ck_assert_int_eq(under_filter(7), 0);
	/* No address on any socket but a listener, and no socket or connect of its own. */
	ck_assert_int_eq(under_filter(2), -SIGSYS);
	ck_assert_int_eq(under_filter(3), -SIGSYS);
	ck_assert_int_eq(under_filter(4), -SIGSYS);
	ck_assert_int_eq(under_filter(5), -SIGSYS);
	ck_assert_int_eq(under_filter(6), -SIGSYS);
	ck_assert_int_eq(under_filter(8), -SIGSYS);
	ck_assert_int_eq(under_filter(9), -SIGSYS);
	ck_assert_int_eq(under_filter(10), -SIGSYS);
	ck_assert_int_eq(under_filter(11), 3);
	ck_assert_int_eq(under_filter(12), 0);
	ck_assert_int_eq(under_filter(13), 3);
	ck_assert_int_eq(under_filter(14), 3);
	ck_assert_int_eq(under_filter(15), 0);
	ck_assert_int_eq(under_filter(16), 2);
	ck_assert_int_eq(under_filter(17), -SIGSYS);
}
END_TEST

/*
 * The whole escape a 64-bit comparison on close's fd once allowed: a
 * taken-over proxy closes its listener as close(0x100000004), asks for
 * an upstream socket (made by the supervisor in the host's namespace,
 * connected), gets it at fd 4, and sendto with an address, allowed on a
 * listener's fd, sends it anywhere. The listener must stay put.
 */
START_TEST(proxy_filter_keeps_its_listeners)
{
	int sp[2], elsewhere, status;
	struct sockaddr_in to = { .sin_family = AF_INET };
	socklen_t len = sizeof(to);
	char buf[16];
	pid_t pid;

	private_network();
	elsewhere = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(elsewhere, (struct sockaddr *)&to, sizeof(to)), 0);
	ck_assert_int_eq(getsockname(elsewhere, (struct sockaddr *)&to, &len), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct cordon_error err = { 0 };
		struct sockaddr_in upstream = { .sin_family = AF_INET, .sin_port = htons(53) };
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		char one = 'x';
		struct iovec iov = { .iov_base = &one, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int up = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int lst = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int got;
		long r;

		upstream.sin_addr.s_addr = htonl(0x7f000002);
		if (up < 0 || lst < 0 ||
		    connect(up, (struct sockaddr *)&upstream, sizeof(upstream)) < 0)
			_exit(99);
		for (int fd = 0; fd < CORDON_DNSPROXY_FD_UDP; fd++)
			if (fcntl(fd, F_GETFD) < 0 && dup2(sp[1], fd) < 0)
				_exit(99);
		for (int i = 0; i < CORDON_DNSPROXY_N_UDP; i++)
			if (dup2(lst, CORDON_DNSPROXY_FD_UDP + i) < 0)
				_exit(99);
		close(lst);
		/* The supervisor's answer to a SOCKET request, already queued. */
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &up, sizeof(int));
		if (sendmsg(sp[0], &mh, 0) != 1)
			_exit(99);
		close(up);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    cordon_seccomp_install(cordon_seccomp_dnsproxy(), 1, &err) < 0)
			_exit(99);
		if (syscall(SYS_close, 0x100000000UL | CORDON_DNSPROXY_FD_UDP) < 0)
			syscall(SYS_exit_group, 10); /* held */
		mh.msg_controllen = sizeof(control.buf);
		if (recvmsg(sp[1], &mh, 0) != 1)
			syscall(SYS_exit_group, 11);
		memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(got));
		r = sendto(got, "escaped", 7, 0, (struct sockaddr *)&to, sizeof(to));
		syscall(SYS_exit_group, r == 7 ? 0 : 13);
	}
	close(sp[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(!WIFSIGNALED(status), "killed by signal %d", WTERMSIG(status));
	ck_assert_msg(recv(elsewhere, buf, sizeof(buf), MSG_DONTWAIT) < 0,
		      "an upstream socket at a listener's fd sent to an address it is not "
		      "connected to");
	ck_assert_int_eq(WEXITSTATUS(status), 10);
	close(sp[0]);
	close(elsewhere);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dnsctl");
	TCase *tc = tcase_create("channel");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, check_accepts_well_formed);
	tcase_add_test(tc, check_refuses_every_violation);
	tcase_add_test(tc, check_datagram_events_only_together);
	tcase_add_test(tc, vet_admit_refuses_what_the_gateway_blocks);
	tcase_add_test(tc, serve_speaks_the_protocol);
	tcase_add_test(tc, serve_takes_a_new_policy);
	tcase_add_test(tc, serve_sends_a_turns_events_together);
	tcase_add_test(tc, serve_ends_on_hangup_with_unread_messages);
	tcase_add_test(tc, serve_ignores_a_message_too_long);
	tcase_add_test(tc, proxy_filter_allows_its_calls_only);
	tcase_add_test(tc, proxy_filter_keeps_its_listeners);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
