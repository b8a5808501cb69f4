// SPDX-License-Identifier: Apache-2.0
/*
 * bench-dnsproxy: queries per second and added latency of the DNS proxy
 * against a local upstream stub, compared with asking the stub directly.
 * Everything runs in a private network namespace (and user namespace when
 * not root): no packet leaves this process tree's own loopback.
 *
 *   bench-dnsproxy [QUERIES]     (default 20000)
 *
 * The stub answers every A query with one public address (under
 * cold.test a new one per query, so that every answer needs an admit);
 * two proxies (allowlist *.bench.test, *.cold.test) serve it: one with its admits answered at once
 * in its own process (the shape before the proxy ran apart), and one as
 * cordon runs it: cordon_dnsproxy_serve in a process of its own, whose
 * admits a supervisor process checks, re-vets and inserts into a real
 * nft allow set. This process is the client: sequential queries for the
 * latency, then a window of 64 in flight for throughput. The proxy
 * process runs under cordon's seccomp filter for it, its UDP listener at
 * the fd cordon gives it; each row also says how many admits the
 * supervisor was asked for (a counter, not a time).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cordon/net.h"
#include "cordon/security.h"

#define STUB_PORT 5300
#define PROXY_PORT 5353
#define WINDOW 64

/* ADMIT messages the supervisor has read: shared with it (a page mapped before the fork). */
static unsigned *admits;

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

/*
 * Answer = query + one A record pointing back at the question name:
 * 93.184.216.34 for every name, but under cold.test an address of its
 * own for each query (from its id), which the sets never hold yet.
 */
static _Noreturn void stub(void)
{
	int fd = udp_bound("127.0.0.1", STUB_PORT, false);
	/* clang-format off */
	static const uint8_t warm[] = {
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 1, 0x2c, 0, 4, 93, 184, 216, 34
	};
	/* clang-format on */

	for (;;) {
		uint8_t rr[sizeof(warm)], buf[512 + sizeof(warm)];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, 512, 0, (struct sockaddr *)&from, &fl);

		if (n < 12)
			continue;
		memcpy(rr, warm, sizeof(rr));
		if (memmem(buf + 12, (size_t)n - 12, "\4cold\4test", 11)) {
			rr[14] = buf[0];
			rr[15] = buf[1];
		}
		buf[2] |= 0x80; /* QR */
		buf[3] = 0x80;	/* RA, NOERROR */
		buf[6] = 0;
		buf[7] = 1; /* ancount */
		memcpy(buf + n, rr, sizeof(rr));
		sendto(fd, buf, (size_t)n + sizeof(rr), 0, (struct sockaddr *)&from, fl);
	}
}

/* In one process (the shape before the proxy had its own): every admit answered at once. */
static struct cordon_dnsproxy *inproc;

static int admit_at_once(void *opaque, const struct cordon_dns_admit *req)
{
	enum cordon_vet ok[CORDON_DNS_ADMIT_MAX] = { 0 };

	(void)opaque;
	__atomic_fetch_add(admits, 1, __ATOMIC_RELAXED);
	cordon_dnsproxy_admitted(inproc, req->token, 0, ok, req->n);
	return 0;
}

static struct cordon_addr client;

static void proxy_config(struct cordon_dnsproxy_config *cfg, struct sockaddr_storage *up,
			 struct cordon_allowlist **al)
{
	struct cordon_error err = { 0 };
	struct sockaddr_in *u = (struct sockaddr_in *)up;

	memset(up, 0, sizeof(*up));
	u->sin_family = AF_INET;
	u->sin_port = htons(STUB_PORT);
	inet_pton(AF_INET, "127.0.0.1", &u->sin_addr);
	*al = cordon_allowlist_new();
	if (cordon_allowlist_add(*al, "*.bench.test,*.cold.test", false, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->allowlist = *al;
	cfg->upstreams = up;
	cfg->n_upstreams = 1;
	cfg->max_inflight = 4 * WINDOW;
	/* The load generator's source: loopback's own address. */
	cordon_addr_parse("127.0.0.1", &client);
	cfg->clients = &client;
	cfg->n_clients = 1;
}

static _Noreturn void proxy_inproc(void)
{
	struct cordon_error err = { 0 };
	struct sockaddr_storage up;
	struct cordon_allowlist *al;
	struct cordon_dnsproxy_config cfg;
	int epfd = epoll_create1(0), udp = udp_bound("127.0.0.2", PROXY_PORT, true);

	proxy_config(&cfg, &up, &al);
	cfg.admit = admit_at_once;
	inproc = cordon_dnsproxy_new(&cfg, &udp, 1, NULL, 0, &err);
	if (!inproc || cordon_dnsproxy_attach(inproc, epfd, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(epfd, evs, 64, cordon_dnsproxy_timeout_ms(inproc));

		for (int i = 0; i < n; i++)
			cordon_dnsproxy_handle(inproc, evs[i].data.ptr, evs[i].events);
		cordon_dnsproxy_tick(inproc);
	}
}

/* As cordon runs it: the proxy's own process loop, its admits and sockets over socketpairs. */
static _Noreturn void proxy_process(int ctl, int sockets)
{
	struct cordon_error err = { 0 };
	struct sockaddr_storage up;
	struct cordon_allowlist *al;
	struct cordon_dnsproxy_config cfg;
	int udp;

	/* The listener where cordon puts it (its filter allows sendto with an address there). */
	ctl = fcntl(ctl, F_DUPFD_CLOEXEC, 16);
	sockets = fcntl(sockets, F_DUPFD_CLOEXEC, 16);
	if (ctl < 0 || sockets < 0)
		die("dup");
	for (int fd = 3; fd < 16; fd++)
		close(fd);
	udp = udp_bound("127.0.0.3", PROXY_PORT, true);
	if (udp != CORDON_DNSPROXY_FD_UDP) {
		if (dup2(udp, CORDON_DNSPROXY_FD_UDP) < 0)
			die("dup2");
		close(udp);
		udp = CORDON_DNSPROXY_FD_UDP;
	}
	proxy_config(&cfg, &up, &al);
	/* Built before the filter, as cordon's proxy does (qsort asks the kernel for memory). */
	cordon_vet_table(AF_INET, &(const struct cordon_cidr *){ NULL });
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    cordon_seccomp_install(cordon_seccomp_dnsproxy(), 1, &err) < 0 ||
	    cordon_dnsproxy_serve(&cfg, &udp, 1, NULL, 0, ctl, sockets, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	exit(0);
}

/* A socket the proxy asked for: connected to the stub, handed over. */
static void give_socket(int sockets)
{
	struct cordon_dnsctl_msg m;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(STUB_PORT) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	const char *bad;
	ssize_t r = recv(sockets, &m, sizeof(m), MSG_TRUNC);
	int fd;

	if (r <= 0)
		exit(0);
	if (cordon_dnsctl_check(&m, (size_t)r, &bad) < 0 || m.type != CORDON_DNSCTL_SOCKET) {
		fprintf(stderr, "bench-dnsproxy: the proxy's socket request: %s\n", bad);
		exit(1);
	}
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	fd = socket(AF_INET, m.qtype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 && errno != EINPROGRESS))
		die("upstream socket");
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_SOCKET;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	sendmsg(sockets, &mh, MSG_NOSIGNAL);
	close(fd);
}

/*
 * The supervisor's end, as cordon's: every message checked, every
 * address re-vetted against the vetting table, then inserted into a real
 * allow set of a gateway ruleset in this namespace; the proxy's upstream
 * sockets made here and handed over.
 */
static _Noreturn void supervisor(int ctl, int sockets)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_cidr *blocked;
	size_t n_blocked;
	struct cordon_nft *nft = cordon_nft_open(&err);
	struct cordon_nft_config nc = {
		.workload_if = "bench0",
		.set_size = 65536,
		.max_flows = CORDON_NET_FLOWS_DEFAULT,
	};

	if (!nft || cordon_allowlist_add(al, "*.bench.test,*.cold.test", false, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	cordon_addr_parse("127.0.0.3", &nc.proxy4);
	/* The ruleset takes port 53 from the workload's address only: it needs one. */
	cordon_addr_parse("127.0.0.4", &nc.workload4);
	n_blocked = cordon_gateway_blocked(al, NULL, 0, &blocked);
	nc.blocked = blocked;
	nc.n_blocked = n_blocked;
	if (cordon_nft_create(nft, &nc, &err) < 0) {
		cordon_error_print(&err);
		exit(1);
	}
	for (;;) {
		struct cordon_dnsctl_msg d[CORDON_DNSCTL_EVENTS_MAX], reply;
		const struct cordon_dnsctl_msg *m = d;
		struct cordon_addr addrs[CORDON_DNS_ADMIT_MAX], ok[CORDON_DNS_ADMIT_MAX];
		enum cordon_vet why[CORDON_DNS_ADMIT_MAX];
		const char *bad;
		size_t n_ok = 0;
		struct pollfd pf[2] = { { .fd = ctl, .events = POLLIN },
					{ .fd = sockets, .events = POLLIN } };
		ssize_t r;

		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[1].revents & POLLIN)
			give_socket(sockets);
		if (!(pf[0].revents & (POLLIN | POLLHUP)))
			continue;
		r = recv(ctl, d, sizeof(d), MSG_TRUNC);
		if (r <= 0)
			exit(0);
		/* One message, or several EVENTs (for the report: nothing to do here). */
		if (cordon_dnsctl_check_datagram(d, (size_t)r, &bad) < 0) {
			fprintf(stderr, "bench-dnsproxy: the proxy %s\n", bad);
			exit(1);
		}
		if (m->type != CORDON_DNSCTL_ADMIT)
			continue;
		__atomic_fetch_add(admits, 1, __ATOMIC_RELAXED);
		for (size_t i = 0; i < m->n_addrs; i++)
			cordon_dnsctl_addr_get(&m->addrs[i], &addrs[i]);
		cordon_dnsctl_vet_admit(al, blocked, n_blocked, m->name, addrs, m->n_addrs, why);
		memset(&reply, 0, sizeof(reply));
		reply.type = CORDON_DNSCTL_ADMITTED;
		reply.token = m->token;
		reply.n_addrs = m->n_addrs;
		for (size_t i = 0; i < m->n_addrs; i++) {
			if (why[i] == CORDON_VET_OK)
				ok[n_ok++] = addrs[i];
			cordon_dnsctl_addr_put(&addrs[i], why[i], &reply.addrs[i]);
		}
		if (n_ok && cordon_nft_allow(nft, ok, n_ok, m->ttl_s * 1000, &err) < 0)
			reply.error = -EIO;
		send(ctl, &reply, sizeof(reply), MSG_NOSIGNAL);
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
	/* A thousand names again and again; under cold.test each name once. */
	l = (size_t)snprintf(label, sizeof(label), "h%u", strcmp(zone, "cold.test") ? i % 1000 : i);
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

/*
 * A process's CPU time (ns) and how often it was put on a CPU, from
 * /proc/PID/schedstat: what a query costs each process, whatever else
 * the machine runs (times on it are not).
 */
struct cpu {
	unsigned long long ns, slices;
};

static struct cpu cpu_of(pid_t pid)
{
	struct cpu c = { 0, 0 };
	char path[64];
	FILE *f;

	if (pid <= 0)
		return c;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%llu %*u %llu", &c.ns, &c.slices) != 2)
			c.ns = c.slices = 0;
		fclose(f);
	}
	return c;
}

/* The admits the supervisor read since the last call. */
static unsigned admits_since(void)
{
	static unsigned last;
	unsigned now = __atomic_load_n(admits, __ATOMIC_RELAXED), d = now - last;

	last = now;
	return d;
}

static void report(const char *what, const char *ip, unsigned n, double direct, pid_t proxy,
		   pid_t super)
{
	double via, cold, denied, tput, tput_cold, tput_denied;
	unsigned a_via, a_tput;
	struct cpu p0, s0, p1, s1;

	admits_since();
	via = latency(ip, PROXY_PORT, "bench.test", n / 4);
	a_via = admits_since();
	cold = latency(ip, PROXY_PORT, "cold.test", n / 4);
	denied = latency(ip, PROXY_PORT, "other.test", n / 4);
	admits_since();
	p0 = cpu_of(proxy);
	s0 = cpu_of(super);
	tput = throughput(ip, PROXY_PORT, "bench.test", n);
	p1 = cpu_of(proxy);
	s1 = cpu_of(super);
	a_tput = admits_since();
	tput_cold = throughput(ip, PROXY_PORT, "cold.test", n);
	tput_denied = throughput(ip, PROXY_PORT, "other.test", n);
	printf("%s:\n  median latency: through the proxy %.0f us (added %.0f us), "
	       "a new address each %.0f us (added %.0f us), denied name %.0f us\n",
	       what, via, via - direct, cold, cold - direct, denied);
	printf("  throughput (%d in flight, %u queries): allowed %.0f q/s, a new address each "
	       "%.0f q/s, denied %.0f q/s\n",
	       WINDOW, n, tput, tput_cold, tput_denied);
	/* A thousand names, each admitted once: the latency round's first thousand queries. */
	printf("  admits asked of the supervisor, allowed names: %u of %u queries (latency), "
	       "%u of %u (throughput)\n",
	       a_via, n / 4, a_tput, n);
	printf("  CPU per allowed query (throughput): proxy %.1f us, supervisor %.1f us; "
	       "times on a CPU per 100 queries: proxy %.1f, supervisor %.1f\n",
	       (double)(p1.ns - p0.ns) / 1000.0 / n, (double)(s1.ns - s0.ns) / 1000.0 / n,
	       100.0 * (double)(p1.slices - p0.slices) / n,
	       100.0 * (double)(s1.slices - s0.slices) / n);
}

/* A child that dies with this process: a client that gives up leaves nothing running. */
static pid_t spawn(void)
{
	pid_t pid = fork();

	if (pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		die("PR_SET_PDEATHSIG");
	return pid;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
	pid_t kids[4];
	int sp[2], ss[2];
	double direct;

	if (n < 100)
		n = 100;
	/* The supervisor's ruleset and inserts: cordon loads these only with --net-allow. */
	{
		struct cordon_error err = { 0 };

		if (cordon_netlib_load(CORDON_NETLIB_NFT, &err) < 0) {
			cordon_error_print(&err);
			return 1;
		}
	}
	private_network();
	admits = mmap(NULL, sizeof(*admits), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (admits == MAP_FAILED)
		die("mmap");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, ss) < 0)
		die("socketpair");
	if ((kids[0] = spawn()) == 0)
		stub();
	if ((kids[1] = spawn()) == 0)
		proxy_inproc();
	if ((kids[2] = spawn()) == 0) {
		close(sp[0]);
		close(ss[0]);
		proxy_process(sp[1], ss[1]);
	}
	if ((kids[3] = spawn()) == 0) {
		close(sp[1]);
		close(ss[1]);
		supervisor(sp[0], ss[0]);
	}
	close(sp[0]);
	close(sp[1]);
	close(ss[0]);
	close(ss[1]);
	usleep(200000);

	direct = latency("127.0.0.1", STUB_PORT, "bench.test", n / 4);
	printf("stub direct: median latency %.0f us, throughput %.0f q/s (%d in flight)\n", direct,
	       throughput("127.0.0.1", STUB_PORT, "bench.test", n), WINDOW);
	report("proxy and admits in one process (admits answered at once)", "127.0.0.2", n, direct,
	       kids[1], 0);
	report("proxy in its own process, admits re-vetted by the supervisor and inserted into "
	       "the nft allow set",
	       "127.0.0.3", n, direct, kids[2], kids[3]);
	for (size_t i = 0; i < ARRAY_SIZE(kids); i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	return 0;
}
