// SPDX-License-Identifier: Apache-2.0
/*
 * bench-dnsproxy: queries per second and added latency of the DNS proxy
 * against a local upstream stub, compared with asking the stub directly.
 * Everything runs in a private network namespace (and user namespace when
 * not root): no packet leaves this process tree's own loopback.
 *
 *   bench-dnsproxy [QUERIES]     (default 20000)
 *
 * Three processes: the stub (answers every A query with one address), the
 * proxy (cordon_dnsproxy in its own epoll loop, allowlist *.bench.test,
 * an insert callback that accepts), and this one, the client: sequential
 * queries for the latency, then a window of 64 in flight for throughput.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cordon/net.h"

#define STUB_PORT 5300
#define PROXY_PORT 5353
#define WINDOW 64

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void private_network(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s;

	if (unshare(CLONE_NEWNET) < 0) {
		char map[64];

		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			die("unshare");
		cordon_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", 4);
		snprintf(map, sizeof(map), "0 %u 1", getuid());
		cordon_write_file_at(AT_FDCWD, "/proc/self/uid_map", map, strlen(map));
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		die("lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		die("lo up");
	close(s);
}

static int udp_bound(const char *ip, uint16_t port, bool nonblock)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | (nonblock ? SOCK_NONBLOCK : 0), 0);

	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	return fd;
}

/* Answer = query + one A record pointing back at the question name. */
static _Noreturn void stub(void)
{
	int fd = udp_bound("127.0.0.1", STUB_PORT, false);
	static const uint8_t rr[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 0x2c, 0, 4, 93, 184, 216, 34 };

	for (;;) {
		uint8_t buf[512 + sizeof(rr)];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, 512, 0, (struct sockaddr *)&from, &fl);

		if (n < 12)
			continue;
		buf[2] |= 0x80; /* QR */
		buf[3] = 0x80;  /* RA, NOERROR */
		buf[6] = 0;
		buf[7] = 1; /* ancount */
		memcpy(buf + n, rr, sizeof(rr));
		sendto(fd, buf, (size_t)n + sizeof(rr), 0, (struct sockaddr *)&from, fl);
	}
}

static int accept_insert(void *opaque, const struct cordon_addr *a, size_t n, uint32_t t)
{
	(void)opaque, (void)a, (void)n, (void)t;
	return 0;
}

static _Noreturn void proxy(void)
{
	struct cordon_error err = { 0 };
	struct sockaddr_storage up = { 0 };
	struct sockaddr_in *u = (struct sockaddr_in *)&up;
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_dnsproxy_config cfg = { 0 };
	struct cordon_dnsproxy *p;
	int epfd = epoll_create1(0), udp;
	struct cordon_addr client;

	/* The load generator's source: loopback's own address. */
	cordon_addr_parse("127.0.0.1", &client);

	u->sin_family = AF_INET;
	u->sin_port = htons(STUB_PORT);
	inet_pton(AF_INET, "127.0.0.1", &u->sin_addr);
	if (cordon_allowlist_add(al, "*.bench.test", false, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	cfg.allowlist = al;
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	cfg.max_inflight = 4 * WINDOW;
	cfg.insert = accept_insert;
	cfg.clients = &client;
	cfg.n_clients = 1;
	udp = udp_bound("127.0.0.2", PROXY_PORT, true);
	p = cordon_dnsproxy_new(&cfg, &udp, 1, NULL, 0, &err);
	if (!p || cordon_dnsproxy_attach(p, epfd, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(epfd, evs, 64, cordon_dnsproxy_timeout_ms(p));

		for (int i = 0; i < n; i++)
			cordon_dnsproxy_handle(p, evs[i].data.ptr, evs[i].events);
		cordon_dnsproxy_tick(p);
	}
}

static size_t make_query(uint8_t *q, uint16_t id, unsigned i, const char *zone)
{
	char label[16];
	size_t n = 12, l;

	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	q[2] = 0x01; /* RD */
	q[5] = 1;    /* qdcount */
	l = (size_t)snprintf(label, sizeof(label), "h%u", i % 1000);
	q[n++] = (uint8_t)l;
	memcpy(q + n, label, l);
	n += l;
	for (const char *z = zone; *z;) {
		const char *dot = strchrnul(z, '.');

		q[n++] = (uint8_t)(dot - z);
		memcpy(q + n, z, (size_t)(dot - z));
		n += (size_t)(dot - z);
		z = *dot ? dot + 1 : dot;
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1; /* A */
	q[n++] = 0, q[n++] = 1; /* IN */
	return n;
}

static int connected(const char *ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval tv = { 1, 0 };

	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sequential round trips: median latency in µs. */
static double latency(const char *ip, uint16_t port, const char *zone, unsigned n)
{
	int fd = connected(ip, port);
	uint64_t *t = calloc(n, sizeof(*t));
	uint8_t q[300], r[600];
	double med;

	for (unsigned i = 0; i < n; i++) {
		size_t ql = make_query(q, (uint16_t)i, i, zone);
		uint64_t t0 = cordon_now_mono_us();

		if (send(fd, q, ql, 0) < 0 || recv(fd, r, sizeof(r), 0) < 12)
			die("round trip");
		t[i] = cordon_now_mono_us() - t0;
	}
	qsort(t, n, sizeof(*t), cmp_u64);
	med = (double)t[n / 2];
	free(t);
	close(fd);
	return med;
}

/* WINDOW queries in flight: answers per second. */
static double throughput(const char *ip, uint16_t port, const char *zone, unsigned n)
{
	int fd = connected(ip, port);
	uint8_t q[300], r[600];
	unsigned sent = 0, got = 0;
	uint64_t t0 = cordon_now_mono_us();

	while (got < n) {
		while (sent < n && sent - got < WINDOW) {
			size_t ql = make_query(q, (uint16_t)sent, sent, zone);

			if (send(fd, q, ql, 0) < 0)
				die("send");
			sent++;
		}
		if (recv(fd, r, sizeof(r), 0) < 12) {
			fprintf(stderr, "bench-dnsproxy: lost answers (%u of %u)\n", got, n);
			break;
		}
		got++;
	}
	close(fd);
	return got / ((double)(cordon_now_mono_us() - t0) / 1e6);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
	pid_t s, p;
	double direct, via, denied;

	if (n < 100)
		n = 100;
	private_network();
	s = fork();
	if (s == 0)
		stub();
	p = fork();
	if (p == 0)
		proxy();
	usleep(100000);

	direct = latency("127.0.0.1", STUB_PORT, "bench.test", n / 4);
	via = latency("127.0.0.2", PROXY_PORT, "bench.test", n / 4);
	denied = latency("127.0.0.2", PROXY_PORT, "other.test", n / 4);
	printf("median latency: stub direct %.0f us, through the proxy %.0f us "
	       "(added %.0f us), denied name %.0f us\n",
	       direct, via, via - direct, denied);
	printf("throughput (%d in flight, %u queries): stub direct %.0f q/s, "
	       "through the proxy %.0f q/s, denied names %.0f q/s\n",
	       WINDOW, n, throughput("127.0.0.1", STUB_PORT, "bench.test", n),
	       throughput("127.0.0.2", PROXY_PORT, "bench.test", n),
	       throughput("127.0.0.2", PROXY_PORT, "other.test", n));
	kill(s, SIGKILL);
	kill(p, SIGKILL);
	waitpid(s, NULL, 0);
	waitpid(p, NULL, 0);
	return 0;
}
