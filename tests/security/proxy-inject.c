// SPDX-License-Identifier: Apache-2.0
/*
 * proxy-inject (tests/e2e/net-takeover.sh): play a workload that took
 * over its DNS proxy. Run as host root (CAP_SYS_PTRACE), it stops the live
 * cordon-dnsproxy with ptrace and makes it execute system calls, each
 * through the proxy's own seccomp filter (an injected call enters the
 * kernel as the proxy's), exactly as code running in the proxy would.
 *
 *   proxy-inject PID escape-udp ADDR4 PORT TOKEN [COUNT]
 *       SOCKET request for upstream 0 (UDP), close(0x100000000 | 4),
 *       recvmsg of the socket onto fd 4, sendto(4, TOKEN, ADDR4:PORT):
 *       a datagram from the supervisor's (host's) namespace to an
 *       address that is no upstream. COUNT datagrams (default 3).
 *   proxy-inject PID admit-flood NAME SECONDS RATE
 *       RATE ADMITs a second for SECONDS, each with 16 new public IPv6
 *       addresses (2a0b:N::M) for NAME, TTL 30: what the supervisor keeps
 *       of them. Prints how many were sent.
 *   proxy-inject PID event-forge DENIED ADDR4 COUNT
 *       EVENTs the supervisor writes into the audit log (docs/audit.md):
 *       DENIED said allowed, with ADDR4 (never admitted) as given out; a
 *       name of JSON's own characters ("quote", backslash, braces, a
 *       forged '"event":"create"'); then COUNT more as fast as the
 *       channel takes them. Prints how many were sent.
 *   proxy-inject PID batch-admit NAME ADDR4
 *       One datagram of two messages: an EVENT, then an ADMIT of ADDR4
 *       for NAME, as if among the EVENTs a turn of the loop sends
 *       together. The supervisor must refuse the datagram whole (only
 *       EVENTs travel together) and end the sandbox. Prints 1 if sent.
 *
 * Exit 0 when every injected call returned what it should; 3 when the
 * filter refused (EPERM) the close; 4 when the proxy died.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon/net.h"

static pid_t pid;
static struct user_regs_struct saved;
static uint64_t sysinsn, scratch;

static void die(const char *what)
{
	fprintf(stderr, "proxy-inject: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void poke(uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };

	if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		/* Fall back to ptrace words. */
		for (size_t o = 0; o < len; o += 8) {
			uint64_t w = 0;

			errno = 0;
			w = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, addr + o, 0);
			if (errno)
				die("peek");
			memcpy(&w, (const char *)buf + o, len - o < 8 ? len - o : 8);
			if (ptrace(PTRACE_POKEDATA, pid, addr + o, w) < 0)
				die("poke");
		}
	}
}

static void peek(uint64_t addr, void *buf, size_t len)
{
	for (size_t o = 0; o < len; o += 8) {
		uint64_t w;

		errno = 0;
		w = (uint64_t)ptrace(PTRACE_PEEKDATA, pid, addr + o, 0);
		if (errno)
			die("peek");
		memcpy((char *)buf + o, &w, len - o < 8 ? len - o : 8);
	}
}

static long sys(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		uint64_t a5)
{
	struct user_regs_struct r = saved;
	int status;

	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rip = sysinsn;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = a4;
	r.r9 = a5;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 || ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0)
		die("singlestep");
	if (waitpid(pid, &status, __WALL) != pid)
		die("waitpid");
	if (!WIFSTOPPED(status)) {
		fprintf(stderr, "proxy-inject: the proxy ended (status %#x) at syscall %ld\n",
			status, nr);
		exit(4);
	}
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		die("getregs");
	return (long)r.rax;
}

static void attach(void)
{
	int status;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0)
		die("seize");
	for (int tries = 0; tries < 100; tries++) {
		uint64_t w;

		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &status, __WALL) != pid)
			die("interrupt");
		if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0)
			die("getregs");
		errno = 0;
		w = (uint64_t)ptrace(PTRACE_PEEKTEXT, pid, saved.rip - 2, 0);
		if (!errno && (w & 0xffff) == 0x050f) {
			sysinsn = saved.rip - 2;
			scratch = ((saved.rsp - 0x8000) & ~(uint64_t)0xfff);
			return;
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
		usleep(1000);
	}
	fprintf(stderr, "proxy-inject: never caught the proxy in a system call\n");
	exit(2);
}

static void detach(void)
{
	ptrace(PTRACE_SETREGS, pid, 0, &saved);
	ptrace(PTRACE_DETACH, pid, 0, 0);
}

enum { FD_CTL = 3, FD_UDP = 4, FD_SOCKETS = 8 };

static int escape_udp(const char *addr, const char *port, const char *token, int count)
{
	struct cordon_dnsctl_msg m;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	uint64_t msg_at = scratch, to_at = scratch + 0x1000, tok_at = scratch + 0x1100,
		 mh_at = scratch + 0x1200, iov_at = scratch + 0x1300, ctl_at = scratch + 0x1400;
	struct msghdr mh = { 0 };
	struct iovec iov = { (void *)msg_at, sizeof(m) };
	long r;
	int fd;

	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		return 2;
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_SOCKET;
	m.token = 0;
	m.qtype = SOCK_DGRAM;
	poke(msg_at, &m, sizeof(m));
	poke(to_at, &to, sizeof(to));
	poke(tok_at, token, strlen(token));
	r = sys(SYS_sendto, FD_SOCKETS, msg_at, sizeof(m), MSG_DONTWAIT, 0, 0);
	fprintf(stderr, "proxy-inject: SOCKET request: %ld\n", r);
	if (r != (long)sizeof(m))
		return 5;
	usleep(300000); /* the supervisor answers in its next pass */
	r = sys(SYS_close, 0x100000000ULL | FD_UDP, 0, 0, 0, 0, 0);
	fprintf(stderr, "proxy-inject: close(0x100000004): %ld\n", r);
	if (r == -EPERM)
		return 3;
	if (r != 0)
		return 5;
	mh.msg_iov = (void *)iov_at;
	mh.msg_iovlen = 1;
	mh.msg_control = (void *)ctl_at;
	mh.msg_controllen = CMSG_SPACE(sizeof(int));
	poke(iov_at, &iov, sizeof(iov));
	poke(mh_at, &mh, sizeof(mh));
	r = sys(SYS_recvmsg, FD_SOCKETS, mh_at, MSG_DONTWAIT, 0, 0, 0);
	fprintf(stderr, "proxy-inject: recvmsg: %ld\n", r);
	if (r != (long)sizeof(m))
		return 5;
	{
		char cbuf[CMSG_SPACE(sizeof(int))];

		peek(ctl_at, cbuf, sizeof(cbuf));
		memcpy(&fd, CMSG_DATA((struct cmsghdr *)cbuf), sizeof(int));
	}
	fprintf(stderr, "proxy-inject: the upstream socket is fd %d\n", fd);
	if (fd != FD_UDP)
		return 5;
	for (int i = 0; i < count; i++) {
		r = sys(SYS_sendto, FD_UDP, tok_at, strlen(token), 0, to_at, sizeof(to));
		fprintf(stderr, "proxy-inject: sendto(4, %s:%s): %ld\n", addr, port, r);
		if (r != (long)strlen(token))
			return 5;
	}
	return 0;
}

static int admit_flood(const char *name, int seconds, int rate)
{
	struct cordon_dnsctl_msg m;
	uint64_t msg_at = scratch;
	struct timespec start, now;
	long sent = 0, n = 0;

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_ADMIT;
	m.ttl_s = 30;
	m.qtype = 28;
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.n_addrs = CORDON_DNS_ADMIT_MAX;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		double t;

		clock_gettime(CLOCK_MONOTONIC, &now);
		t = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
		if (t >= seconds)
			break;
		if (sent >= (long)(t * rate)) {
			usleep(500);
			continue;
		}
		m.token = (uint32_t)(0x40000000u + sent);
		for (int i = 0; i < CORDON_DNS_ADMIT_MAX; i++, n++) {
			uint8_t b[16] = { 0x2a, 0x0b };

			b[4] = (uint8_t)(n >> 24);
			b[5] = (uint8_t)(n >> 16);
			b[6] = (uint8_t)(n >> 8);
			b[7] = (uint8_t)n;
			b[15] = 1;
			memset(&m.addrs[i], 0, sizeof(m.addrs[i]));
			m.addrs[i].family = AF_INET6;
			memcpy(m.addrs[i].bytes, b, 16);
		}
		poke(msg_at, &m, sizeof(m));
		if (sys(SYS_sendto, FD_CTL, msg_at, sizeof(m), MSG_DONTWAIT, 0, 0) ==
		    (long)sizeof(m))
			sent++;
		/* Drain the verdicts so that the channel never fills. */
		while (sys(SYS_recvfrom, FD_CTL, scratch + 0x2000, sizeof(m), MSG_DONTWAIT, 0, 0) >
		       0)
			;
	}
	printf("%ld\n", sent);
	return 0;
}

static int event_forge(const char *denied, const char *addr4, int count)
{
	static const char *const hostile[] = {
		"a\"b\\c}{x.allowed.test",
		"\",\"event\":\"create\",\"x\":\"",
	};
	struct cordon_dnsctl_msg m;
	uint64_t msg_at = scratch;
	long sent = 0;

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_EVENT;
	m.qtype = 1;
	m.allowed = 1;
	m.rcode = 0;
	snprintf(m.name, sizeof(m.name), "%s", denied);
	m.n_addrs = 1;
	m.addrs[0].family = AF_INET;
	if (inet_pton(AF_INET, addr4, m.addrs[0].bytes) != 1)
		return 2;
	poke(msg_at, &m, sizeof(m));
	sent += sys(SYS_sendto, FD_CTL, msg_at, sizeof(m), MSG_DONTWAIT, 0, 0) == (long)sizeof(m);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		memset(m.name, 0, sizeof(m.name));
		snprintf(m.name, sizeof(m.name), "%s", hostile[i]);
		m.n_addrs = 0;
		memset(m.addrs, 0, sizeof(m.addrs));
		poke(msg_at, &m, sizeof(m));
		sent += sys(SYS_sendto, FD_CTL, msg_at, sizeof(m), MSG_DONTWAIT, 0, 0) ==
			(long)sizeof(m);
	}
	for (int i = 0; i < count; i++) {
		memset(m.name, 0, sizeof(m.name));
		snprintf(m.name, sizeof(m.name), "flood%d.%s", i, denied);
		m.allowed = 0;
		poke(msg_at, &m, sizeof(m));
		if (sys(SYS_sendto, FD_CTL, msg_at, sizeof(m), MSG_DONTWAIT, 0, 0) ==
		    (long)sizeof(m))
			sent++;
		else
			usleep(200);
	}
	printf("%ld\n", sent);
	return 0;
}

static int batch_admit(const char *name, const char *addr4)
{
	struct cordon_dnsctl_msg m[2];

	memset(m, 0, sizeof(m));
	m[0].type = CORDON_DNSCTL_EVENT;
	m[0].qtype = 1;
	m[0].rcode = 3;
	snprintf(m[0].name, sizeof(m[0].name), "denied.%s", name);
	m[1].type = CORDON_DNSCTL_ADMIT;
	m[1].token = 0x7fffffff;
	m[1].ttl_s = 300;
	m[1].qtype = 1;
	m[1].n_addrs = 1;
	snprintf(m[1].name, sizeof(m[1].name), "%s", name);
	m[1].addrs[0].family = AF_INET;
	if (inet_pton(AF_INET, addr4, m[1].addrs[0].bytes) != 1)
		return 2;
	poke(scratch, m, sizeof(m));
	printf("%d\n", sys(SYS_sendto, FD_CTL, scratch, sizeof(m), MSG_DONTWAIT, 0, 0) ==
				(long)sizeof(m));
	return 0;
}

int main(int argc, char **argv)
{
	int r = 2;

	if (argc < 3)
		return 2;
	pid = atoi(argv[1]);
	attach();
	if (strcmp(argv[2], "escape-udp") == 0 && argc >= 6)
		r = escape_udp(argv[3], argv[4], argv[5], argc > 6 ? atoi(argv[6]) : 3);
	else if (strcmp(argv[2], "admit-flood") == 0 && argc == 6)
		r = admit_flood(argv[3], atoi(argv[4]), atoi(argv[5]));
	else if (strcmp(argv[2], "event-forge") == 0 && argc == 6)
		r = event_forge(argv[3], argv[4], atoi(argv[5]));
	else if (strcmp(argv[2], "batch-admit") == 0 && argc == 5)
		r = batch_admit(argv[3], argv[4]);
	detach();
	return r;
}
