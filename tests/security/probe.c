// SPDX-License-Identifier: Apache-2.0
/*
 * sec-probe: attempts one hostile or privileged action per argument and
 * prints what the kernel answered, so the security tests can assert on
 * exact errno values that busybox cannot show.
 *
 * Usage: sec-probe ACTION[:ARG[:ARG]]...
 *
 * Each action prints one line "ACTION=RESULT", where RESULT is "ok" (or
 * "ok VALUE" where a value is interesting) or the errno's name (EPERM,
 * ENOSYS, ...). Actions that the seccomp filter is expected to kill the
 * process for (int80, x32) print "reached" first and flush, so a caller
 * can tell "killed by the call" from "killed before it". Exit status 0
 * unless an action was misused (2).
 *
 * Actions: keyctl add_key request_key userfaultfd io_uring_setup bpf
 * perf_event_open ptrace:PID traceme process_vm_readv:PID
 * tiocsti[:FD[:CMD]] tiocsti-pty tioclinux[:FD] tcsets[:FD] tiocsctty[:FD]
 * clone:NS clone3
 * unshare:NS setns:PATH netlink:PROTO personality:VALUE raw
 * mount[:TARGET[:FSTYPE]] umount[:TARGET] name_to_handle_at
 * open_by_handle_at kexec_load init_module finit_module delete_module
 * chroot[:DIR] chroot-escape:PATH open-write:PATH open-read:PATH
 * mkdir:PATH mknod:PATH chown:PATH:UID setuid:UID ids fds abstract:NAME
 * tcp:PORT bind:PORT int80[:NR] x32[:NR] dns-reset:HOST:PORT:NAME:COUNT
 * inotify-init inotify-count[:WAIT] inotify-watches forks:MAX
 * sigqueue-one sigqueue-count[:WAIT] sigqueue-uids:K[:WAIT] mq-one
 * mq-count[:WAIT] udp-freebind:SRC,DST,PORT,TAG,COUNT,MS leader-exits
 * unix-req:PATH:REQ;
 * NS is none, newuser, newns,
 * newnet, newpid, newuts, newipc, newcgroup or newtime. Numbers may be
 * hex and use all 64 bits (passed to the kernel through syscall()).
 *
 * inotify-count opens inotify instances until one fails and prints the
 * errno and how many it got ("EMFILE 16"); with WAIT it then holds them
 * until the file WAIT exists (a test's synchronisation, no timing).
 * inotify-watches adds watches to one instance, each on a new file in
 * /tmp, until one fails ("ENOSPC 5").
 *
 * sigqueue-count blocks SIGRTMIN and queues it to itself until sigqueue
 * fails ("EAGAIN 2048"); sigqueue-uids:K does so in K children in turn,
 * child i as uid and gid 1000+i, all held, and prints the errno of the
 * last and the sum ("EAGAIN 2048 2048+0+0"). mq-count creates POSIX
 * message queues of 10 messages of 1024 bytes until one fails ("EMFILE
 * 9"). With WAIT each holds what it got until the file WAIT exists.
 * sigqueue-one and mq-one queue one signal, make (and remove) one queue.
 *
 * Modes (MODE as a number, 04755 or 0x100004755; the file-creating ones
 * make PATH): chmod:PATH:MODE fchmod:PATH:MODE fchmodat:PATH:MODE
 * fchmodat2:PATH:MODE creat:PATH:MODE open-creat:PATH:MODE
 * openat-creat:PATH:MODE openat2-creat:PATH:MODE tmpfile:DIR:MODE (an
 * O_TMPFILE linked in as DIR/tmpfile) mknod-reg:PATH:MODE
 * mknodat-reg:PATH:MODE; setcap:PATH (a security.capability granting
 * CAP_DAC_OVERRIDE). Sockets: socket:FAMILY[:TYPE] socketpair:FAMILY.
 *
 * Raw packets (the workload needs --cap-add NET_RAW):
 * send-raw:PROTO,SRC,DST,SPORT,DPORT,TTL,COUNT[,PAYLOAD] sends COUNT
 * IPv4 or IPv6 packets whose headers it writes itself, so the source is
 * any address at all. PROTO is udp or syn (a TCP SYN); TTL the TTL or
 * hop limit; PAYLOAD "dns=NAME" (an A query for NAME, RD set) or
 * "text=BYTES". Fields are separated by commas: IPv6 addresses hold
 * colons. Prints "ok N" or the errno of the first send that failed.
 * dns-junk:PROTO,SERVER,NAME,PAD sends one A query for NAME to SERVER
 * port 53 over udp or tcp, with all a client can add around its
 * question: AD and CD set, an additional TXT record of PAD bytes
 * ("junk-" then x's), an OPT with DO and a cookie option, and "trailjunk"
 * after the last record. Prints "ok rcode=N" with the answer's rcode, or
 * "timeout" or the errno.
 *
 * Linked statically so it runs in the busybox rootfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mqueue.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <dirent.h>
#include <termios.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static const char *cur; /* the action being run, for output */

static void result_errno(int e)
{
	const char *name = strerrorname_np(e);

	if (name)
		printf("%s=%s\n", cur, name);
	else
		printf("%s=E%d\n", cur, e);
}

/* Print the outcome of a call that returns -1/errno on failure. */
static void report(long r)
{
	if (r < 0)
		result_errno(errno);
	else
		printf("%s=ok\n", cur);
}

static void report_value(long r)
{
	if (r < 0)
		result_errno(errno);
	else
		printf("%s=ok %ld\n", cur, r);
}

/* A file descriptor result: ok, and the fd is closed again. */
static void report_fd(long fd)
{
	report(fd);
	if (fd >= 0)
		close((int)fd);
}

static long num(const char *s, long dflt)
{
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	/* Unsigned, so that 64-bit masks like 0xffffffff00005412 parse. */
	v = (long)strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "sec-probe: %s: bad number '%s'\n", cur, s);
		exit(2);
	}
	return v;
}

static unsigned long clone_flags(const char *s)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} names[] = {
		{ "none", 0 },
		{ "newuser", CLONE_NEWUSER },
		{ "newns", CLONE_NEWNS },
		{ "newnet", CLONE_NEWNET },
		{ "newpid", CLONE_NEWPID },
		{ "newuts", CLONE_NEWUTS },
		{ "newipc", CLONE_NEWIPC },
		{ "newcgroup", CLONE_NEWCGROUP },
		{ "newtime", 0x00000080 /* CLONE_NEWTIME */ },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (s && strcmp(s, names[i].name) == 0)
			return names[i].flag;
	fprintf(stderr, "sec-probe: %s: unknown namespace '%s'\n", cur, s ? s : "");
	exit(2);
}

/* clone(2) with FLAGS; the child exits at once. */
static void do_clone(unsigned long flags)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0, NULL, NULL, 0);

	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	report(r);
}

/* struct clone_args of <linux/sched.h>, whose macros clash with glibc's. */
struct probe_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void do_clone3(void)
{
	struct probe_clone_args args;
	long r;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	r = syscall(__NR_clone3, &args, sizeof(args));
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	report(r);
}

static void do_ioctl_sti(int fd, unsigned long cmd)
{
	char c = 'x';

	/* Through syscall(): glibc must not narrow the request to 32 bits. */
	report(syscall(SYS_ioctl, fd, cmd, &c));
}

/*
 * TIOCSTI on a terminal that is the caller's controlling terminal: the
 * case the kernel itself allows, so only the seccomp filter stops it.
 */
static void do_sti_pty(void)
{
	int m, p[2];
	pid_t pid;
	int status, e = 0;

	m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || pipe(p) < 0) {
		printf("%s=setup-failed %s\n", cur, strerrorname_np(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		char c = 'x';
		int s;

		close(p[0]);
		if (setsid() < 0 || (s = open(ptsname(m), O_RDWR)) < 0)
			e = -errno; /* negative: setup, not the ioctl */
		else if (syscall(SYS_ioctl, s, (unsigned long)TIOCSTI, &c) < 0)
			e = errno;
		if (write(p[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &e, sizeof(e)) != sizeof(e)) {
		printf("%s=setup-failed\n", cur);
		close(p[0]);
		close(m);
		return;
	}
	close(p[0]);
	waitpid(pid, &status, 0);
	if (e < 0)
		printf("%s=setup-failed %s\n", cur, strerrorname_np(-e));
	else if (e)
		result_errno(e);
	else
		printf("%s=ok\n", cur);
	close(m);
}

static void do_bpf(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	report_fd(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
}

static void do_perf(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	report_fd(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static void do_io_uring(void)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	report_fd(syscall(SYS_io_uring_setup, 1, &p));
}

static void do_ptrace(pid_t pid)
{
	long r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);

	if (r == 0) {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	}
	report(r);
}

static void do_traceme(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		/* The child reports through its exit status: 0 ok, else errno. */
		_exit(ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		printf("%s=setup-failed\n", cur);
		return;
	}
	if (WEXITSTATUS(status))
		result_errno(WEXITSTATUS(status));
	else
		printf("%s=ok\n", cur);
}

static void do_vm_readv(pid_t pid)
{
	char buf[8], there[8];
	struct iovec local = { buf, sizeof(buf) }, remote = { there, sizeof(there) };

	report(syscall(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0));
}

static void do_handle(bool open_it)
{
	struct {
		struct file_handle fh;
		unsigned char data[128];
	} h;
	int mount_id;

	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.data);
	if (!open_it) {
		report(syscall(SYS_name_to_handle_at, AT_FDCWD, "/", &h.fh, &mount_id, 0));
		return;
	}
	/* A made-up handle: the call must be refused before it is looked at. */
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1;
	report_fd(syscall(SYS_open_by_handle_at, AT_FDCWD, &h.fh, O_RDONLY));
}

/* Every open descriptor but the one reading /proc/self/fd. */
static void do_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char line[4096] = "";
	size_t len = 0;

	if (!d) {
		result_errno(errno);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", len ? "," : "",
					e->d_name);
		if (len >= sizeof(line))
			break;
	}
	closedir(d);
	printf("%s=%s\n", cur, line);
}

static void do_abstract(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || !name) {
		report(-1);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s", name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	report(connect(fd, (struct sockaddr *)&sa, len));
	close(fd);
}

static void do_tcp(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		report(-1);
		return;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	report(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
}

/*
 * udp-flows:ADDR:PORT:N: one datagram to each of ports PORT..PORT+N-1 of
 * the IPv4 address ADDR, from one socket: N flows for conntrack, no
 * capability needed. Prints how many the kernel took.
 */
static void do_udp_flows(const char *addr, long port, long n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long sent = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || !addr || inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || port < 1 || n < 1 ||
	    port + n > 65536) {
		fprintf(stderr, "sec-probe: udp-flows:ADDR:PORT:N\n");
		exit(2);
	}
	for (long i = 0; i < n; i++) {
		sa.sin_port = htons((uint16_t)(port + i));
		if (sendto(fd, "flow", 4, 0, (struct sockaddr *)&sa, sizeof(sa)) == 4)
			sent++;
	}
	close(fd);
	printf("%s=%ld\n", cur, sent);
}

/*
 * The classic chroot escape: keep an fd of the current root, chroot into
 * a subdirectory, fchdir back out and climb. Prints whether PATH (a path
 * that exists only on the host) is visible from where the climb ends.
 */
static void do_chroot_escape(const char *path)
{
	int root = open("/", O_RDONLY | O_DIRECTORY);
	struct stat st;

	mkdir("/tmp/cordon-jail", 0755);
	if (root < 0 || chroot("/tmp/cordon-jail") < 0) {
		report(-1);
		return;
	}
	if (fchdir(root) < 0) {
		report(-1);
		return;
	}
	for (int i = 0; i < 256; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0) {
		report(-1);
		return;
	}
	printf("%s=%s\n", cur, path && stat(path, &st) == 0 ? "escaped" : "contained");
	close(root);
}

/* bind(2) a TCP socket to 127.0.0.1:PORT (privileged below 1024). */
static void do_bind(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		report(-1);
		return;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	report(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
}

/*
 * COUNT TCP connections to the resolver at HOST:PORT, each sending one
 * length-prefixed A query for NAME and then resetting (SO_LINGER {1, 0}
 * and close: an RST, not a FIN) without reading the answer. Prints
 * "ok N" (N connections made and reset) or the errno of the first
 * connection that failed.
 */
static void do_dns_reset(const char *host, int port, const char *name, long count)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	uint8_t q[2 + 12 + 256 + 4] = { 0 };
	size_t n = 2;
	long done = 0;

	if (!host || inet_pton(AF_INET, host, &sa.sin_addr) != 1 || !name || !*name ||
	    strlen(name) > 253) {
		fprintf(stderr, "sec-probe: %s: want HOST:PORT:NAME:COUNT\n", cur);
		exit(2);
	}
	/* id 0x1234, RD, one question */
	memcpy(q + n, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	n += 12;
	for (const char *l = name; *l;) {
		size_t len = strcspn(l, ".");

		if (len == 0 || len > 63) {
			fprintf(stderr, "sec-probe: %s: bad name '%s'\n", cur, name);
			exit(2);
		}
		q[n++] = (uint8_t)len;
		memcpy(q + n, l, len);
		n += len;
		l += len;
		if (*l == '.')
			l++;
	}
	memcpy(q + n, "\x00\x00\x01\x00\x01", 5); /* root, type A, class IN */
	n += 5;
	q[0] = (uint8_t)((n - 2) >> 8);
	q[1] = (uint8_t)(n - 2);
	for (; done < count; done++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    send(fd, q, n, MSG_NOSIGNAL) != (ssize_t)n ||
		    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			result_errno(e);
			return;
		}
		close(fd);
	}
	printf("%s=ok %ld\n", cur, done);
}

/* --- raw packets ------------------------------------------------------ */

static void put16be(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The Internet checksum over a pseudo header (addresses, protocol, length) and l4. */
static unsigned l4_checksum(int family, const uint8_t *src, const uint8_t *dst, uint8_t proto,
			    const uint8_t *l4, size_t len)
{
	size_t alen = family == AF_INET ? 4 : 16;
	uint32_t sum = (uint32_t)len + proto;

	for (size_t i = 0; i < alen; i += 2)
		sum += (uint32_t)(src[i] << 8 | src[i + 1]) + (uint32_t)(dst[i] << 8 | dst[i + 1]);
	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(l4[i] << 8 | (i + 1 < len ? l4[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return sum ? sum : 0xffff;
}

/* An A query for name (RD set), as a client writes it; its length, 0 for a bad name. */
static size_t dns_query(const char *name, uint8_t *q, size_t cap)
{
	size_t n = 12;

	if (cap < 12 + 256 + 4)
		return 0;
	memcpy(q, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
	for (const char *l = name; *l;) {
		size_t len = strcspn(l, ".");

		if (len == 0 || len > 63 || n + 1 + len > 12 + 255)
			return 0;
		q[n++] = (uint8_t)len;
		memcpy(q + n, l, len);
		n += len;
		l += len;
		if (*l == '.')
			l++;
	}
	memcpy(q + n, "\x00\x00\x01\x00\x01", 5);
	return n + 5;
}

/*
 * udp-freebind:SRC,DST,PORT,TAG,COUNT,MS: COUNT datagrams "TAG N" to
 * DST:PORT, one every MS milliseconds, from SRC bound with IP(V6)_FREEBIND
 * (no capability needed: SRC need not be one of ours). Each one sent is
 * printed "TAG N", so a caller counts what went out.
 */
static void do_udp_freebind(const char *spec)
{
	char buf[512], *f[6] = { NULL }, *save = NULL, msg[64];
	struct sockaddr_storage from = { 0 }, to = { 0 };
	socklen_t len;
	int family, fd, one = 1;
	long port, count, ms;
	size_t n_f = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && n_f < 6; t = strtok_r(NULL, ",", &save))
		f[n_f++] = t;
	if (n_f < 6)
		goto usage;
	family = strchr(f[0], ':') ? AF_INET6 : AF_INET;
	port = num(f[2], -1);
	count = num(f[4], -1);
	ms = num(f[5], -1);
	if (port <= 0 || port > 65535 || count < 0 || ms < 0)
		goto usage;
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&from, *b = (struct sockaddr_in6 *)&to;

		a->sin6_family = b->sin6_family = AF_INET6;
		b->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, f[0], &a->sin6_addr) != 1 ||
		    inet_pton(AF_INET6, f[1], &b->sin6_addr) != 1)
			goto usage;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&from, *b = (struct sockaddr_in *)&to;

		a->sin_family = b->sin_family = AF_INET;
		b->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, f[0], &a->sin_addr) != 1 ||
		    inet_pton(AF_INET, f[1], &b->sin_addr) != 1)
			goto usage;
		len = sizeof(*a);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    (family == AF_INET6 ?
		     setsockopt(fd, IPPROTO_IPV6, 78 /* IPV6_FREEBIND */, &one, sizeof(one)) :
		     setsockopt(fd, IPPROTO_IP, 15 /* IP_FREEBIND */, &one, sizeof(one))) < 0 ||
	    bind(fd, (struct sockaddr *)&from, len) < 0 ||
	    connect(fd, (struct sockaddr *)&to, len) < 0) {
		report(-1);
		return;
	}
	for (long i = 1; i <= count; i++) {
		int n = snprintf(msg, sizeof(msg), "%s %ld\n", f[3], i);

		if (send(fd, msg, (size_t)n, 0) == n)
			printf("%s %ld\n", f[3], i);
		else
			printf("%s send %s\n", f[3], strerror(errno));
		usleep((useconds_t)ms * 1000);
	}
	close(fd);
	return;
usage:
	fprintf(stderr, "sec-probe: udp-freebind:SRC,DST,PORT,TAG,COUNT,MS\n");
	exit(2);
}

static void do_send_raw(const char *spec)
{
	char buf[512], *f[8] = { NULL }, *save = NULL;
	uint8_t pkt[1500] = { 0 }, src[16], dst[16], payload[600];
	size_t n_f = 0, plen = 0, hlen, l4len;
	int family, fd;
	long sport, dport, ttl, count, done = 0;
	bool syn;
	struct sockaddr_storage to = { 0 };
	socklen_t to_len;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && n_f < 8; t = strtok_r(NULL, ",", &save))
		f[n_f++] = t;
	if (n_f < 7 || (strcmp(f[0], "udp") && strcmp(f[0], "syn")))
		goto usage;
	syn = !strcmp(f[0], "syn");
	family = strchr(f[1], ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, f[1], src) != 1 || inet_pton(family, f[2], dst) != 1)
		goto usage;
	sport = num(f[3], -1);
	dport = num(f[4], -1);
	ttl = num(f[5], -1);
	count = num(f[6], -1);
	if (sport < 0 || sport > 65535 || dport < 0 || dport > 65535 || ttl < 0 || ttl > 255 ||
	    count < 0)
		goto usage;
	if (n_f == 8 && !strncmp(f[7], "dns=", 4)) {
		plen = dns_query(f[7] + 4, payload, sizeof(payload));
		if (plen == 0)
			goto usage;
	} else if (n_f == 8 && !strncmp(f[7], "text=", 5)) {
		plen = strlen(f[7] + 5);
		memcpy(payload, f[7] + 5, plen);
	} else if (n_f == 8) {
		goto usage;
	}

	hlen = family == AF_INET ? 20 : 40;
	l4len = (syn ? 20 : 8) + plen;
	{
		uint8_t *l4 = pkt + hlen;

		put16be(l4, (unsigned)sport);
		put16be(l4 + 2, (unsigned)dport);
		if (syn) {
			l4[4] = 0x5e; /* a sequence number */
			l4[12] = 5 << 4;
			l4[13] = 0x02; /* SYN */
			put16be(l4 + 14, 64240);
		} else {
			put16be(l4 + 4, (unsigned)l4len);
		}
		memcpy(l4 + (syn ? 20 : 8), payload, plen);
		put16be(l4 + (syn ? 16 : 6),
			l4_checksum(family, src, dst, syn ? IPPROTO_TCP : IPPROTO_UDP, l4, l4len));
	}
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&to;

		pkt[0] = 0x45;
		put16be(pkt + 2, (unsigned)(hlen + l4len));
		pkt[8] = (uint8_t)ttl;
		pkt[9] = syn ? IPPROTO_TCP : IPPROTO_UDP;
		memcpy(pkt + 12, src, 4);
		memcpy(pkt + 16, dst, 4);
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, dst, 4);
		to_len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&to;

		pkt[0] = 0x60;
		put16be(pkt + 4, (unsigned)l4len);
		pkt[6] = syn ? IPPROTO_TCP : IPPROTO_UDP;
		pkt[7] = (uint8_t)ttl;
		memcpy(pkt + 8, src, 16);
		memcpy(pkt + 24, dst, 16);
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, dst, 16);
		to_len = sizeof(*sin6);
	}
	/* IPPROTO_RAW: the header is ours (IPv4: the kernel fills in id and checksum). */
	fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd < 0) {
		result_errno(errno);
		return;
	}
	for (; done < count; done++) {
		if (sendto(fd, pkt, hlen + l4len, 0, (struct sockaddr *)&to, to_len) < 0) {
			int e = errno;

			close(fd);
			result_errno(e);
			return;
		}
	}
	close(fd);
	printf("%s=ok %ld\n", cur, done);
	return;
usage:
	fprintf(stderr, "sec-probe: %s: want PROTO,SRC,DST,SPORT,DPORT,TTL,COUNT[,PAYLOAD]\n", cur);
	exit(2);
}

static void do_dns_junk(const char *spec)
{
	char buf[512], *f[4] = { NULL }, *save = NULL;
	static uint8_t q[2 + 65535];
	uint8_t a[4096];
	size_t n_f = 0, n, pad;
	struct sockaddr_storage to = { 0 };
	socklen_t to_len;
	bool tcp;
	int fd;
	ssize_t got = -1;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t && n_f < 4; t = strtok_r(NULL, ",", &save))
		f[n_f++] = t;
	if (n_f != 4 || (strcmp(f[0], "udp") && strcmp(f[0], "tcp")))
		goto usage;
	tcp = !strcmp(f[0], "tcp");
	pad = (size_t)num(f[3], 0);
	if (strchr(f[1], ':')) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&to;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(53);
		if (inet_pton(AF_INET6, f[1], &sin6->sin6_addr) != 1)
			goto usage;
		to_len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&to;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(53);
		if (inet_pton(AF_INET, f[1], &sin->sin_addr) != 1)
			goto usage;
		to_len = sizeof(*sin);
	}
	n = dns_query(f[2], q + 2, 12 + 256 + 4);
	if (n == 0 || pad > (tcp ? 60000u : 1000u) || pad < 5)
		goto usage;
	q[2 + 3] |= 0x30; /* AD, CD */
	q[2 + 11] = 2;	  /* arcount: the TXT and the OPT */
	/* TXT owned by the question's name (a pointer to it), PAD bytes in strings of 255 at most.
	 */
	{
		uint8_t *p = q + 2 + n;
		size_t rd = pad + (pad + 254) / 255, left = pad;

		memcpy(p, "\xc0\x0c\x00\x10\x00\x01\x00\x00\x00\x3c", 10);
		put16be(p + 10, (unsigned)rd);
		p += 12;
		for (size_t k = 0; left; k++) {
			size_t chunk = left > 255 ? 255 : left;

			*p++ = (uint8_t)chunk;
			memset(p, 'x', chunk);
			if (k == 0)
				memcpy(p, "junk-", 5);
			p += chunk;
			left -= chunk;
		}
		/* OPT: payload 4096, DO, a cookie (code 10) of 8 bytes. */
		memcpy(p, "\x00\x00\x29\x10\x00\x00\x00\x80\x00\x00\x0c\x00\x0a\x00\x08", 15);
		p += 15;
		memcpy(p, "cookie!!trailjunk", 17);
		p += 17;
		n = (size_t)(p - (q + 2));
	}
	put16be(q, (unsigned)n);
	fd = socket(to.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 3, 0 },
				 sizeof(struct timeval)) < 0) {
		result_errno(errno);
		return;
	}
	if (connect(fd, (struct sockaddr *)&to, to_len) < 0 ||
	    send(fd, tcp ? q : q + 2, tcp ? n + 2 : n, MSG_NOSIGNAL) < 0) {
		result_errno(errno);
		close(fd);
		return;
	}
	if (!tcp) {
		got = recv(fd, a, sizeof(a), 0);
	} else {
		size_t have = 0;

		/* The length, then as much of the answer as its header. */
		while (have < 2 + 12) {
			ssize_t r = recv(fd, a + have, sizeof(a) - have, 0);

			if (r <= 0)
				break;
			have += (size_t)r;
		}
		if (have >= 2 + 12) {
			memmove(a, a + 2, have - 2);
			got = (ssize_t)(have - 2);
		}
	}
	close(fd);
	if (got < 12)
		printf("%s=%s\n", cur, got < 0 && errno == EAGAIN ? "timeout" : "short");
	else
		printf("%s=ok rcode=%d\n", cur, a[3] & 0x0f);
	return;
usage:
	fprintf(stderr, "sec-probe: %s: want udp|tcp,SERVER,NAME,PAD (5 to 1000, tcp 60000)\n",
		cur);
	exit(2);
}

/*
 * The tasks already charged to this process's RLIMIT_NPROC: the kernel
 * counts per real uid per user namespace (ucounts), so those of /proc's
 * processes whose real uid is ours and whose user namespace is ours, each
 * with all its threads; zombies too (the charge goes at reaping). A
 * process whose namespace link we may not read (cordon's init: not
 * dumpable, of the parent namespace, though its uid maps to ours) is not
 * counted: a test that expects an exact count sees it if that was wrong.
 * -1 when /proc cannot be read.
 */
static long nproc_charged(void)
{
	struct stat self_ns, ns;
	DIR *d = opendir("/proc");
	struct dirent *e;
	long tasks = 0;

	if (!d || stat("/proc/self/ns/user", &self_ns) < 0) {
		if (d)
			closedir(d);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[300], line[256];
		long ruid = -1, threads = 0;
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* gone meanwhile */
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "Uid:", 4) == 0)
				ruid = strtol(line + 4, NULL, 10);
			else if (strncmp(line, "Threads:", 8) == 0)
				threads = strtol(line + 8, NULL, 10);
		}
		fclose(f);
		if (ruid != (long)getuid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/user", e->d_name);
		if (stat(path, &ns) == 0 && ns.st_dev == self_ns.st_dev && ns.st_ino == self_ns.st_ino)
			tasks += threads;
	}
	closedir(d);
	return tasks;
}

/*
 * Fork children that stay (each blocks reading a pipe) until a fork
 * fails or MAX of them run; then let them all go and reap them. Prints
 * "N+K ERRNO": N children made, K tasks already charged to our RLIMIT_NPROC
 * before the first fork (this one among them, see nproc_charged), and the
 * errno of the fork that failed, or "none" when MAX children ran. Under a
 * process limit L that holds, N+K is L and the errno EAGAIN, whatever the
 * timing: the children never exit while the probe counts.
 */
static void do_forks(long max)
{
	long made = 0, before = nproc_charged();
	int hold[2], err = 0;

	if (max < 1) {
		fprintf(stderr, "sec-probe: %s: want MAX >= 1\n", cur);
		exit(2);
	}
	if (before < 0) {
		printf("%s=unknown-charge\n", cur);
		return;
	}
	if (pipe2(hold, O_CLOEXEC) < 0) {
		result_errno(errno);
		return;
	}
	fflush(stdout);
	for (; made < max; made++) {
		pid_t pid = fork();

		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			char c;

			close(hold[1]);
			/* EOF when the parent closes its end (or dies). */
			while (read(hold[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(hold[1]);
	close(hold[0]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (err)
		printf("%s=%ld+%ld %s\n", cur, made, before, strerrorname_np(err));
	else
		printf("%s=%ld+%ld none\n", cur, made, before);
}

static void do_ids(void)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;

	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	printf("%s=%u,%u,%u:%u,%u,%u\n", cur, r, e, s, gr, ge, gs);
}

/*
 * int 0x80 (the i386 entry) with eax = NR and harmless arguments. A
 * filter that checks the architecture kills the process here.
 */
static void do_int80(long nr)
{
	long ret;

	printf("%s=reached\n", cur);
	fflush(stdout);
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(0), "c"(0), "d"(0) : "memory");
	if (ret < 0 && ret > -4096)
		printf("%s=returned %s\n", cur, strerrorname_np((int)-ret));
	else
		printf("%s=returned %ld\n", cur, ret);
}

static void do_x32(long nr)
{
	long ret;

	printf("%s=reached\n", cur);
	fflush(stdout);
	ret = syscall(nr | __X32_SYSCALL_BIT, 0, 0, 0);
	if (ret < 0)
		printf("%s=returned %s\n", cur, strerrorname_np(errno));
	else
		printf("%s=returned %ld\n", cur, ret);
}

static void do_inotify_count(const char *wait_path)
{
	long n = 0;
	int e;

	while (inotify_init1(IN_CLOEXEC) >= 0)
		n++;
	e = errno;
	printf("%s=%s %ld\n", cur, strerrorname_np(e), n);
	fflush(stdout);
	/* Held (the fds stay open) until the caller says so. */
	while (wait_path && access(wait_path, F_OK) < 0)
		usleep(10000);
}

static void hold_until(const char *wait_path)
{
	while (wait_path && access(wait_path, F_OK) < 0)
		usleep(10000);
}

/* SIGRTMIN queued to ourselves (blocked) until sigqueue fails; errno out. */
static long queue_rt_signals(int *e)
{
	sigset_t set;
	long n = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
		*e = errno;
		return 0;
	}
	while (sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 1 }) == 0)
		n++;
	*e = errno;
	return n;
}

static void do_sigqueue_one(void)
{
	int e;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 1 }) == 0) {
		printf("%s=ok\n", cur);
		return;
	}
	e = errno;
	result_errno(e);
}

static void do_sigqueue_count(const char *wait_path)
{
	int e;
	long n = queue_rt_signals(&e);

	printf("%s=%s %ld\n", cur, strerrorname_np(e), n);
	fflush(stdout);
	hold_until(wait_path);
}

/*
 * K children in turn, child i as uid 1000+i, each queueing until the
 * kernel refuses and then holding its signals (blocked on the hold
 * pipe) until we finish: what one sandbox holds across uids.
 */
static void do_sigqueue_uids(long k, const char *wait_path)
{
	int hold[2], e = 0;
	long sum = 0;
	char parts[512] = "";
	pid_t pids[16];

	if (k < 1 || k > (long)(sizeof(pids) / sizeof(pids[0]))) {
		fprintf(stderr, "sec-probe: %s: want 1 <= K <= 16\n", cur);
		exit(2);
	}
	if (pipe2(hold, O_CLOEXEC) < 0) {
		result_errno(errno);
		return;
	}
	fflush(stdout);
	for (long i = 0; i < k; i++) {
		int rep[2];
		long got[2] = { 0, 0 };

		if (pipe2(rep, O_CLOEXEC) < 0) {
			result_errno(errno);
			return;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			result_errno(errno);
			return;
		}
		if (pids[i] == 0) {
			uid_t id = (uid_t)(1000 + i);
			char c;
			int ce = 0;

			close(hold[1]);
			close(rep[0]);
			if (setresgid(id, id, id) < 0 || setresuid(id, id, id) < 0) {
				got[0] = -1;
				got[1] = errno;
			} else {
				got[0] = queue_rt_signals(&ce);
				got[1] = ce;
			}
			if (write(rep[1], got, sizeof(got)) != (ssize_t)sizeof(got))
				_exit(1);
			while (read(hold[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(rep[1]);
		if (read(rep[0], got, sizeof(got)) != (ssize_t)sizeof(got)) {
			printf("%s=child-lost\n", cur);
			return;
		}
		close(rep[0]);
		if (got[0] < 0) {
			printf("%s=setuid-%s\n", cur, strerrorname_np((int)got[1]));
			return;
		}
		sum += got[0];
		e = (int)got[1];
		snprintf(parts + strlen(parts), sizeof(parts) - strlen(parts), "%s%ld",
			 i ? "+" : "", got[0]);
	}
	printf("%s=%s %ld %s\n", cur, strerrorname_np(e), sum, parts);
	fflush(stdout);
	hold_until(wait_path);
	close(hold[1]);
	for (long i = 0; i < k; i++)
		waitpid(pids[i], NULL, 0);
}

#define MQ_PROBE_MSGS 10
#define MQ_PROBE_SIZE 1024

static void do_mq_one(void)
{
	struct mq_attr attr = { .mq_maxmsg = MQ_PROBE_MSGS, .mq_msgsize = MQ_PROBE_SIZE };
	char name[64];
	mqd_t q;

	snprintf(name, sizeof(name), "/sec-probe-one-%d", (int)getpid());
	q = mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr);
	if (q == (mqd_t)-1) {
		result_errno(errno);
		return;
	}
	mq_unlink(name);
	mq_close(q);
	printf("%s=ok\n", cur);
}

static void do_mq_count(const char *wait_path)
{
	struct mq_attr attr = { .mq_maxmsg = MQ_PROBE_MSGS, .mq_msgsize = MQ_PROBE_SIZE };
	char name[64];
	long n = 0;
	int e;

	for (;; n++) {
		snprintf(name, sizeof(name), "/sec-probe-%d-%ld", (int)getpid(), n);
		if (mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr) == (mqd_t)-1)
			break;
	}
	e = errno;
	printf("%s=%s %ld\n", cur, strerrorname_np(e), n);
	fflush(stdout);
	hold_until(wait_path);
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "/sec-probe-%d-%ld", (int)getpid(), i);
		mq_unlink(name);
	}
}

static void do_inotify_watches(void)
{
	int fd = inotify_init1(IN_CLOEXEC);
	long n = 0;
	char path[64];

	if (fd < 0) {
		result_errno(errno);
		return;
	}
	for (;;) {
		int f;

		snprintf(path, sizeof(path), "/tmp/sec-probe-watch-%ld", n);
		f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (f < 0) {
			printf("%s=open-%s %ld\n", cur, strerrorname_np(errno), n);
			break;
		}
		close(f);
		if (inotify_add_watch(fd, path, IN_MODIFY) < 0) {
			printf("%s=%s %ld\n", cur, strerrorname_np(errno), n);
			break;
		}
		n++;
	}
	for (long i = 0; i <= n; i++) {
		snprintf(path, sizeof(path), "/tmp/sec-probe-watch-%ld", i);
		unlink(path);
	}
	close(fd);
}

/* fchmod(2) through an fd of PATH. */
static void do_fchmod(const char *path, unsigned long mode)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("%s=open-%s\n", cur, strerrorname_np(errno));
		return;
	}
	report(syscall(SYS_fchmod, fd, mode));
	close(fd);
}

/* An unnamed file in DIR with MODE, linked in as DIR/tmpfile. */
static void do_tmpfile(const char *dir, unsigned long mode)
{
	char fdpath[64], path[4096];
	long fd = syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);

	if (fd < 0) {
		report(-1);
		return;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%ld", fd);
	snprintf(path, sizeof(path), "%s/tmpfile", dir);
	report(linkat(AT_FDCWD, fdpath, AT_FDCWD, path, AT_SYMLINK_FOLLOW));
	close((int)fd);
}

static void do_openat2_creat(const char *path, unsigned long mode)
{
	struct open_how how = { .flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = mode };

	report_fd(syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)));
}

/* A v2 file capability: CAP_DAC_OVERRIDE permitted and effective. */
static void do_setcap(const char *path)
{
	struct vfs_cap_data cap = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_DAC_OVERRIDE } },
	};

	report(setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0));
}

static void do_socketpair(long family)
{
	int sv[2];

	if (syscall(SYS_socketpair, family, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		report(-1);
		return;
	}
	report(0);
	close(sv[0]);
	close(sv[1]);
}

/*
 * unix-req:PATH:REQ: connect to the SOCK_SEQPACKET socket PATH, send the
 * 32-bit REQ (a cordon monitor request) and wait for an answer: "ok N"
 * (its length), or the errno of the step that failed ("EOF" when the
 * other end closed without one).
 */
static void do_unix_req(const char *path, const char *req_text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint32_t req = (uint32_t)strtoul(req_text ? req_text : "0", NULL, 0);
	char buf[4096];
	ssize_t n;
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sec-probe: unix-req:PATH:REQ\n");
		exit(2);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		report(-1);
		return;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		report(-1);
	else if (n == 0)
		printf("unix-req=EOF\n");
	else
		printf("unix-req=ok %zd\n", n);
	close(fd);
}

/*
 * leader-exits: the main thread ends (pthread_exit) while a second thread
 * lives on, SIGTERM ignored. /proc/PID/stat then reads "Z" for a process
 * that is still running: what ends it must not take it for a zombie.
 */
static void *leader_worker(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void do_leader_exits(void)
{
	pthread_t t;

	signal(SIGTERM, SIG_IGN);
	if (pthread_create(&t, NULL, leader_worker, NULL) != 0) {
		printf("leader-exits=EAGAIN\n");
		return;
	}
	printf("leader-exits=ok\n");
	fflush(stdout);
	pthread_exit(NULL);
}

static void run(char *spec)
{
	char *arg[4] = { NULL }, *p;
	char *a1, *a2;

	cur = spec;
	/* Split a copy of "name:arg1:...:arg4"; cur keeps the full spec for output. */
	spec = strdup(spec);
	p = spec;
	for (size_t i = 0; i < 4 && (p = strchr(p, ':')); i++) {
		*p++ = '\0';
		arg[i] = p;
	}
	a1 = arg[0];
	a2 = arg[1];
#define IS(n) (strcmp(spec, n) == 0)
	if (IS("keyctl"))
		report_value(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1));
	else if (IS("add_key"))
		report_value(syscall(SYS_add_key, "user", "cordon-probe", "x", 1,
				     KEY_SPEC_SESSION_KEYRING));
	else if (IS("request_key"))
		report_value(syscall(SYS_request_key, "user", "cordon-probe", NULL, 0));
	else if (IS("userfaultfd"))
		report_fd(syscall(SYS_userfaultfd, O_CLOEXEC));
	else if (IS("io_uring_setup"))
		do_io_uring();
	else if (IS("bpf"))
		do_bpf();
	else if (IS("perf_event_open"))
		do_perf();
	else if (IS("ptrace"))
		do_ptrace((pid_t)num(a1, 1));
	else if (IS("traceme"))
		do_traceme();
	else if (IS("process_vm_readv"))
		do_vm_readv((pid_t)num(a1, 1));
	else if (IS("tiocsti"))
		do_ioctl_sti((int)num(a1, 0), (unsigned long)num(a2, TIOCSTI));
	else if (IS("tiocsti-pty"))
		do_sti_pty();
	else if (IS("tcsets")) {
		/* Setting the modes it has: proof that it could set any. */
		struct termios t;
		int fd = (int)num(a1, 0);

		report(tcgetattr(fd, &t) < 0 ? -1 : tcsetattr(fd, TCSANOW, &t));
	} else if (IS("tiocsctty"))
		/* Take the terminal as controlling terminal, stealing it (arg 1). */
		report(ioctl((int)num(a1, 0), TIOCSCTTY, 1));
	else if (IS("tioclinux")) {
		char sub = 0;

		report(syscall(SYS_ioctl, (int)num(a1, 0), (unsigned long)TIOCLINUX, &sub));
	} else if (IS("clone"))
		do_clone(clone_flags(a1));
	else if (IS("clone3"))
		do_clone3();
	else if (IS("unshare"))
		report(syscall(SYS_unshare, clone_flags(a1)));
	else if (IS("setns")) {
		int fd = open(a1 ? a1 : "/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			printf("%s=open-%s\n", cur, strerrorname_np(errno));
		} else {
			report(syscall(SYS_setns, fd, 0));
			close(fd);
		}
	} else if (IS("netlink"))
		/* syscall(), so that bits above the int reach the filter. */
		report_fd(syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
				  (unsigned long)num(a1, NETLINK_ROUTE)));
	else if (IS("personality"))
		report_value(syscall(SYS_personality, (unsigned long)num(a1, 0)));
	else if (IS("raw"))
		report_fd(socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
	else if (IS("mount"))
		report(mount("none", a1 ? a1 : "/tmp", a2 ? a2 : "tmpfs", 0, NULL));
	else if (IS("umount"))
		report(umount2(a1 ? a1 : "/proc", MNT_DETACH));
	else if (IS("name_to_handle_at"))
		do_handle(false);
	else if (IS("open_by_handle_at"))
		do_handle(true);
	else if (IS("kexec_load"))
		report(syscall(SYS_kexec_load, 0, 0, NULL, 0));
	else if (IS("init_module"))
		report(syscall(SYS_init_module, "", 0, ""));
	else if (IS("finit_module"))
		report(syscall(SYS_finit_module, 0, "", 0));
	else if (IS("delete_module"))
		report(syscall(SYS_delete_module, "cordon_probe", O_NONBLOCK));
	else if (IS("chroot"))
		report(chroot(a1 ? a1 : "/"));
	else if (IS("open-write"))
		report_fd(open(a1 ? a1 : "", O_WRONLY | O_CLOEXEC));
	else if (IS("open-read"))
		report_fd(open(a1 ? a1 : "", O_RDONLY | O_CLOEXEC));
	else if (IS("mkdir"))
		report(mkdir(a1 ? a1 : "", 0755));
	else if (IS("mknod"))
		report(mknod(a1 ? a1 : "", S_IFCHR | 0600, makedev(1, 3)));
	else if (IS("chown"))
		report(chown(a1 ? a1 : "", (uid_t)num(a2, 0), (gid_t)-1));
	else if (IS("setuid"))
		report(setuid((uid_t)num(a1, 0)));
	else if (IS("ids"))
		do_ids();
	else if (IS("fds"))
		do_fds();
	else if (IS("abstract"))
		do_abstract(a1);
	else if (IS("chroot-escape"))
		do_chroot_escape(a1);
	else if (IS("bind"))
		do_bind((int)num(a1, 80));
	else if (IS("tcp"))
		do_tcp((int)num(a1, 1));
	else if (IS("udp-flows"))
		do_udp_flows(a1, num(a2, 0), num(arg[2], 0));
	else if (IS("chmod"))
		report(syscall(SYS_chmod, a1 ? a1 : "", (unsigned long)num(a2, 0)));
	else if (IS("fchmod"))
		do_fchmod(a1 ? a1 : "", (unsigned long)num(a2, 0));
	else if (IS("fchmodat"))
		report(syscall(SYS_fchmodat, AT_FDCWD, a1 ? a1 : "", (unsigned long)num(a2, 0)));
	else if (IS("fchmodat2"))
		report(syscall(__NR_fchmodat2, AT_FDCWD, a1 ? a1 : "", (unsigned long)num(a2, 0),
			       0));
	else if (IS("creat"))
		report_fd(syscall(SYS_creat, a1 ? a1 : "", (unsigned long)num(a2, 0)));
	else if (IS("open-creat"))
		report_fd(syscall(SYS_open, a1 ? a1 : "", O_CREAT | O_WRONLY | O_CLOEXEC,
				  (unsigned long)num(a2, 0)));
	else if (IS("openat-creat"))
		report_fd(syscall(SYS_openat, AT_FDCWD, a1 ? a1 : "",
				  O_CREAT | O_WRONLY | O_CLOEXEC, (unsigned long)num(a2, 0)));
	else if (IS("openat2-creat"))
		do_openat2_creat(a1 ? a1 : "", (unsigned long)num(a2, 0));
	else if (IS("tmpfile"))
		do_tmpfile(a1 ? a1 : "", (unsigned long)num(a2, 0));
	else if (IS("mknod-reg"))
		report(syscall(SYS_mknod, a1 ? a1 : "", S_IFREG | (unsigned long)num(a2, 0), 0));
	else if (IS("mknodat-reg"))
		report(syscall(SYS_mknodat, AT_FDCWD, a1 ? a1 : "",
			       S_IFREG | (unsigned long)num(a2, 0), 0));
	else if (IS("setcap"))
		do_setcap(a1 ? a1 : "");
	else if (IS("socket"))
		report_fd(syscall(SYS_socket, (unsigned long)num(a1, AF_INET),
				  (unsigned long)num(a2, SOCK_STREAM) | SOCK_CLOEXEC, 0));
	else if (IS("socketpair"))
		do_socketpair(num(a1, AF_UNIX));
	else if (IS("int80"))
		do_int80(num(a1, 20 /* i386 getpid */));
	else if (IS("x32"))
		do_x32(num(a1, 39 /* getpid */));
	else if (!strncmp(cur, "udp-freebind:", 13))
		do_udp_freebind(cur + 13);
	else if (!strncmp(cur, "send-raw:", 9))
		do_send_raw(cur + 9);
	else if (!strncmp(cur, "dns-junk:", 9))
		do_dns_junk(cur + 9);
	else if (IS("dns-reset"))
		do_dns_reset(a1, (int)num(a2, 53), arg[2], num(arg[3], 1));
	else if (IS("inotify-init"))
		report_fd(inotify_init1(IN_CLOEXEC));
	else if (IS("inotify-count"))
		do_inotify_count(a1);
	else if (IS("inotify-watches"))
		do_inotify_watches();
	else if (IS("forks"))
		do_forks(num(a1, 0));
	else if (IS("sigqueue-one"))
		do_sigqueue_one();
	else if (IS("sigqueue-count"))
		do_sigqueue_count(a1);
	else if (IS("sigqueue-uids"))
		do_sigqueue_uids(num(a1, 0), a2);
	else if (IS("mq-one"))
		do_mq_one();
	else if (IS("mq-count"))
		do_mq_count(a1);
	else if (IS("leader-exits"))
		do_leader_exits();
	else if (IS("unix-req"))
		do_unix_req(a1, a2);
	else {
		fprintf(stderr, "sec-probe: unknown action '%s'\n", spec);
		exit(2);
	}
#undef IS
	fflush(stdout);
	free(spec);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: sec-probe ACTION[:ARG[:ARG]]...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		run(argv[i]);
	return 0;
}
