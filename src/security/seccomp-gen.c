// SPDX-License-Identifier: Apache-2.0
/*
 * Build-time generator of the default seccomp profile: libseccomp builds
 * the filter once, here, and the runtime only hands the kernel the
 * resulting cBPF (no filter compilation on the sandbox start-up path).
 *
 * Usage: cordon-seccomp-gen OUTPUT.c
 *
 * The profile is two parts, built as two libseccomp filters:
 *   allowlist: default EPERM; clone without namespace flags; clone3 and
 *      openat2 ENOSYS (their flags live in memory seccomp cannot read;
 *      libc falls back to clone and openat); personality(0) and the query
 *      form only. Any architecture but x86_64 (i386 via int 0x80, x32)
 *      kills the process. The argument-checked syscalls are handed to...
 *   argument checks: default allow; TIOCSTI/TIOCLINUX ioctls, netlink
 *      sockets other than NETLINK_ROUTE, socket families outside the
 *      allowed few (EAFNOSUPPORT), and every mode argument carrying
 *      S_ISUID or S_ISGID (chmod, fchmod, fchmodat, fchmodat2, creat,
 *      mknod, mknodat, and open/openat when they create) answer an error.
 * libseccomp cannot express "ioctl, except these commands" inside a
 * default-deny filter (an unconditional rule overrides the conditional
 * ones), so the second part exists. It used to be a second, stacked
 * program; every program costs the kernel an allocation, a JIT image and
 * an action-cache pass at each sandbox start, so the two are spliced into
 * one here: the allowlist's verdict for the argument-checked syscalls is
 * a marker return, replaced by a jump to the argument checks appended
 * after it. The generator then checks, with a small cBPF interpreter,
 * that the spliced program answers exactly as the two stacked programs
 * would.
 *
 * A third program, the mode guard, holds only the mode-bit checks and
 * openat2's ENOSYS, for all three x86 ABIs and allowing everything else:
 * the runtime installs it under --seccomp unconfined or a
 * --seccomp-profile when the sandbox has a host-backed writable tree, so
 * that no profile choice lets the workload leave a setuid or setgid file
 * on the host (docs/security.md, "Setuid files on the host").
 *
 * A fourth, the DNS proxy's, confines cordon's own parser of the
 * workload's bytes in its process (see dnsproxy below).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/security.h"

/* Allowed outright (the argument-checked ones: see argument_checked). */
static const char *const allowed[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk",
	"cachestat", "capget", "capset", "chdir", "chown", "chroot", "clock_getres",
	"clock_gettime", "clock_nanosleep", "close", "close_range", "connect",
	"copy_file_range", "dup", "dup2", "dup3", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait", "eventfd", "eventfd2",
	"execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2", "fadvise64",
	"fallocate", "fchdir", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr",
	"flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs",
	"fsync", "ftruncate", "futex", "futex_waitv", "get_mempolicy", "get_robust_list",
	"get_thread_area", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
	"geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp",
	"getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
	"getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
	"gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents",
	"io_pgetevents", "io_setup", "io_submit", "ioprio_get", "ioprio_set", "kill",
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
	"lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack", "mbind",
	"membarrier", "memfd_create", "mincore", "mkdir", "mkdirat", "mlock", "mlock2",
	"mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
	"mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", "msgctl", "msgget",
	"msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap", "nanosleep",
	"newfstatat", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
	"pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64",
	"preadv", "preadv2", "prlimit64", "pselect6", "pwrite64", "pwritev", "pwritev2",
	"read", "readahead", "readlink", "readlinkat", "readv", "recvfrom", "recvmmsg",
	"recvmsg", "remap_file_pages", "removexattr", "rename", "renameat", "renameat2",
	"restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
	"rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getaffinity", "sched_getattr", "sched_getparam",
	"sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
	"sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp",
	"select", "semctl", "semget", "semop", "semtimedop", "sendfile", "sendmmsg",
	"sendmsg", "sendto", "set_mempolicy", "set_robust_list", "set_thread_area",
	"set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups", "setitimer",
	"setpgid", "setpriority", "setregid", "setresgid", "setresuid", "setreuid",
	"setrlimit", "setsid", "setsockopt", "setuid", "setxattr", "shmat", "shmctl",
	"shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "splice",
	"stat", "statfs", "statx", "symlink", "symlinkat", "sync", "sync_file_range",
	"syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
	"timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create",
	"timerfd_gettime", "timerfd_settime", "times", "tkill", "truncate", "umask",
	"uname", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork", "vmsplice",
	"wait4", "waitid", "write", "writev",
};

/*
 * The allowlist's verdict for syscalls whose arguments the second part
 * checks. SCMP_ACT_TRACE is used nowhere else in the profile, so a return
 * of this value can only be one of these verdicts.
 */
#define SPLICE_MARK 0x5c0d
#define SPLICE_RET (SECCOMP_RET_TRACE | SPLICE_MARK)
static const char *const argument_checked[] = {
	"ioctl",     "socket", "socketpair", "chmod",	"fchmod", "fchmodat",
	"fchmodat2", "creat",  "mknod",	     "mknodat", "open",	  "openat",
};

/*
 * Where each syscall that sets a file's mode takes it, and (for the two
 * that create only with O_CREAT or O_TMPFILE) its flags; -1: none. The
 * kernel reads mode as a umode_t and flags as an int, so the masks below
 * test low bits only and the high halves of the registers cannot hide a
 * bit from the check.
 */
static const struct mode_syscall {
	const char *name;
	int mode_arg, flags_arg;
} mode_syscalls[] = {
	{ "chmod", 1, -1 },	{ "fchmod", 1, -1 }, { "fchmodat", 2, -1 },
	{ "fchmodat2", 2, -1 }, { "creat", 1, -1 },  { "mknod", 1, -1 },
	{ "mknodat", 2, -1 },	{ "open", 2, 1 },    { "openat", 3, 2 },
};

/* O_TMPFILE without the O_DIRECTORY it includes: the bit that creates. */
#define TMPFILE_BIT (O_TMPFILE & ~O_DIRECTORY)

/*
 * socket(2) families the workload may open; every other answers
 * EAFNOSUPPORT, as from a kernel without the family. AF_PACKET needs
 * CAP_NET_RAW over the sandbox's own network namespace (--cap-add
 * NET_RAW: tcpdump, arping, DHCP clients). Refused, among others:
 * AF_VSOCK (the host's vsock port space is not namespaced), AF_ALG,
 * AF_XDP, AF_KEY, AF_BLUETOOTH, AF_CAN, AF_TIPC, AF_RDS (docs/security.md).
 * The list must stay sorted and end with its largest family.
 */
static const int socket_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET };

#define NS_FLAGS                                                                          \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |       \
	 CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

static _Noreturn void die(const char *what, int r)
{
	fprintf(stderr, "cordon-seccomp-gen: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

static void check(const char *what, int r)
{
	if (r < 0)
		die(what, r);
}

static scmp_filter_ctx allowlist(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));

	if (!ctx)
		die("seccomp_init", ENOMEM);
	check("badarch", seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	/*
	 * A binary tree over the syscall number instead of a linear chain:
	 * fewer instructions run per system call, and far fewer when the
	 * kernel emulates the program for every syscall number to fill its
	 * action cache as the filter is installed.
	 */
	check("optimize", seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2));
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* newer than this libseccomp: stays denied */
		check(allowed[i], seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0));
	}
	for (size_t i = 0; i < sizeof(argument_checked) / sizeof(argument_checked[0]); i++) {
		int nr = seccomp_syscall_resolve_name(argument_checked[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* newer than this libseccomp: stays denied */
		check(argument_checked[i],
		      seccomp_rule_add(ctx, SCMP_ACT_TRACE(SPLICE_MARK), nr, 0));
	}
	check("clone", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0)));
	check("clone3", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0));
	check("openat2", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0));
	check("personality", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0)));
	check("personality query",
	      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0xffffffffu)));
	return ctx;
}

/*
 * EPERM for a mode with S_ISUID or S_ISGID (open and openat: when they
 * create). libseccomp has no "any of these bits" test, so each bit is a
 * rule of its own, and for open and openat each creating flag too.
 */
static void add_mode_rules(scmp_filter_ctx ctx)
{
	static const uint64_t bits[] = { S_ISUID, S_ISGID };
	static const uint64_t creating[] = { O_CREAT, TMPFILE_BIT };

	for (size_t i = 0; i < sizeof(mode_syscalls) / sizeof(mode_syscalls[0]); i++) {
		const struct mode_syscall *m = &mode_syscalls[i];
		int nr = seccomp_syscall_resolve_name(m->name);

		if (nr == __NR_SCMP_ERROR)
			continue; /* unknown here: the allowlist denies it */
		for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
			struct scmp_arg_cmp mode = SCMP_CMP((unsigned)m->mode_arg,
							    SCMP_CMP_MASKED_EQ, bits[b], bits[b]);

			if (m->flags_arg < 0) {
				check(m->name,
				      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, mode));
				continue;
			}
			for (size_t c = 0; c < sizeof(creating) / sizeof(creating[0]); c++)
				check(m->name, seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
								SCMP_CMP((unsigned)m->flags_arg,
									 SCMP_CMP_MASKED_EQ,
									 creating[c], creating[c]),
								mode));
		}
	}
}

static bool family_allowed(int family)
{
	for (size_t i = 0; i < sizeof(socket_families) / sizeof(socket_families[0]); i++)
		if (socket_families[i] == family)
			return true;
	return false;
}

/*
 * socket: the families of socket_families and no other. libseccomp allows
 * one comparison per argument in a rule, so "none of these" is one rule
 * per refused family below the largest allowed one, and one for all
 * values above it (a family with high bits set is refused too: the
 * kernel would read an int, but no libc passes one).
 */
static void add_socket_rules(scmp_filter_ctx ctx)
{
	const int largest =
		socket_families[sizeof(socket_families) / sizeof(socket_families[0]) - 1];

	for (int family = 0; family < largest; family++)
		if (!family_allowed(family))
			check("socket family",
			      seccomp_rule_add(
				      ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint64_t)family)));
	check("socket families",
	      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			       SCMP_A0(SCMP_CMP_GT, (uint64_t)largest)));
	check("netlink", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
					  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_NETLINK),
					  SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE)));
	/* A socket pair is local by nature: AF_UNIX only. */
	check("socketpair",
	      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
			       SCMP_A0(SCMP_CMP_NE, AF_UNIX)));
}

static scmp_filter_ctx argument_checks(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx)
		die("seccomp_init", ENOMEM);
	check("badarch", seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	/* A tree here too: openat, the hottest of these, is checked on every call. */
	check("optimize", seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2));
	/* ioctl's cmd is an unsigned int: compare the low 32 bits only. */
	check("TIOCSTI", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)));
	check("TIOCLINUX", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)));
	add_socket_rules(ctx);
	add_mode_rules(ctx);
	return ctx;
}

/*
 * The mode guard: the mode-bit checks and openat2's ENOSYS on x86_64, x32
 * and i386 alike (a profile may allow any of them), everything else
 * allowed. With the three ABIs in the filter no x86 syscall is of a bad
 * architecture; ALLOW for one keeps the guard from narrowing anything but
 * the modes.
 */
static scmp_filter_ctx mode_guard(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx)
		die("seccomp_init", ENOMEM);
	check("badarch", seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW));
	check("x32", seccomp_arch_add(ctx, SCMP_ARCH_X32));
	check("x86", seccomp_arch_add(ctx, SCMP_ARCH_X86));
	check("optimize", seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2));
	add_mode_rules(ctx);
	check("openat2", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0));
	return ctx;
}

/*
 * The DNS proxy's own process (docs/security.md, "The DNS proxy's
 * process"): it parses the workload's bytes, so everything but its
 * socket, epoll and memory calls kills it, and the supervisor, which
 * watches it, ends the sandbox. No socket of its own (the supervisor
 * makes its upstream sockets), no address but on its listeners, no
 * executable memory; no file, process, mount or namespace call at all.
 */
static const char *const dnsproxy_allowed[] = {
	"accept4", "brk", "clock_gettime", "epoll_create1", "epoll_ctl", "epoll_pwait",
	"epoll_wait", "exit", "exit_group", "getpeername", "getrandom", "getsockname",
	"gettimeofday", "madvise", "munmap", "recvfrom", "recvmsg", "restart_syscall",
	"rt_sigreturn",
};

/*
 * close: its UDP listeners cannot be closed (EPERM), since a socket
 * handed over later would take their fd number, and with it sendto with
 * an address. close takes an int: the kernel reads the low 32 bits only,
 * so every rule compares those alone (a 64-bit comparison let
 * close(0x100000004) through as "above 5" and closed fd 4). The rules
 * are disjoint, aligned blocks below CORDON_DNSPROXY_NOFILE, each a
 * masked equality; anything at or above it, which no fd of its can be,
 * kills it with everything else not allowed.
 */
static void add_dnsproxy_close_rules(scmp_filter_ctx ctx)
{
	_Static_assert((CORDON_DNSPROXY_NOFILE & (CORDON_DNSPROXY_NOFILE - 1)) == 0,
		       "CORDON_DNSPROXY_NOFILE must be a power of two");
	_Static_assert(CORDON_DNSPROXY_FD_UDP == 4 && CORDON_DNSPROXY_N_UDP == 2,
		       "the blocks below assume the listeners are fds 4 and 5");
	static const struct {
		uint32_t first, size; /* a block of fds, size a power of two, aligned */
		bool allow;
	} blocks[] = {
		{ 0, 4, true }, { 4, 2, false }, { 6, 2, true },
	};
	uint32_t first;

	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		check("close", seccomp_rule_add(ctx, blocks[i].allow ? SCMP_ACT_ALLOW :
								       SCMP_ACT_ERRNO(EPERM),
						SCMP_SYS(close), 1,
						SCMP_A0(SCMP_CMP_MASKED_EQ,
							0xffffffffu & ~(blocks[i].size - 1),
							blocks[i].first)));
	for (first = 8; first < CORDON_DNSPROXY_NOFILE; first *= 2)
		check("close", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 1,
						SCMP_A0(SCMP_CMP_MASKED_EQ,
							0xffffffffu & ~(first - 1), first)));
}

static scmp_filter_ctx dnsproxy(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);

	if (!ctx)
		die("seccomp_init", ENOMEM);
	check("badarch", seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	for (size_t i = 0; i < sizeof(dnsproxy_allowed) / sizeof(dnsproxy_allowed[0]); i++)
		check(dnsproxy_allowed[i],
		      seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
				       seccomp_syscall_resolve_name(dnsproxy_allowed[i]), 0));
	/*
	 * No socket of its own, and no connect: its upstream sockets come
	 * from the supervisor, connected. sendto names an address only on
	 * its UDP listeners (replies to the workload, in G); everywhere else
	 * the address is NULL: a connected socket cannot be pointed elsewhere.
	 */
	check("sendto", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1,
					 SCMP_A4(SCMP_CMP_EQ, 0)));
	for (int fd = CORDON_DNSPROXY_FD_UDP;
	     fd < CORDON_DNSPROXY_FD_UDP + CORDON_DNSPROXY_N_UDP; fd++)
		check("sendto listener",
		      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendto), 1,
				       SCMP_A0(SCMP_CMP_EQ, (uint64_t)fd)));
	add_dnsproxy_close_rules(ctx);
	/* malloc's memory, never executable. */
	check("mmap", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)));
	check("mprotect", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
					   SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)));
	check("mremap", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mremap), 0));
	return ctx;
}

/* A program as libseccomp exported it. */
struct program {
	struct sock_filter insn[BPF_MAXINSNS];
	size_t len;
};

static void export(scmp_filter_ctx ctx, struct program *p)
{
	char path[] = "/tmp/cordon-seccomp-XXXXXX";
	int fd = mkstemp(path);
	FILE *in;

	if (fd < 0)
		die("mkstemp", errno);
	unlink(path);
	check("seccomp_export_bpf", seccomp_export_bpf(ctx, fd));
	in = fdopen(fd, "rb");
	if (!in)
		die("fdopen", errno);
	rewind(in);
	p->len = fread(p->insn, sizeof(p->insn[0]), BPF_MAXINSNS, in);
	if (p->len == 0 || !feof(in))
		die("exported filter empty or too long", EINVAL);
	fclose(in);
}

/*
 * allowlist + checks: every "return SPLICE_RET" of the allowlist becomes
 * an unconditional jump to the checks' first instruction. The checks are
 * a whole program (they load arch and nr themselves) and use no scratch
 * memory, so entering them from the allowlist is the same as running them
 * on their own.
 */
static void splice_programs(const struct program *allow, const struct program *checks,
			    struct program *out)
{
	size_t marks = 0;

	if (allow->len + checks->len > BPF_MAXINSNS)
		die("spliced filter too long", E2BIG);
	memcpy(out->insn, allow->insn, allow->len * sizeof(allow->insn[0]));
	memcpy(out->insn + allow->len, checks->insn, checks->len * sizeof(checks->insn[0]));
	out->len = allow->len + checks->len;
	for (size_t i = 0; i < allow->len; i++) {
		struct sock_filter *f = &out->insn[i];

		if (f->code == (BPF_RET | BPF_K) && f->k == SPLICE_RET) {
			*f = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
							  (uint32_t)(allow->len - i - 1), 0, 0);
			marks++;
		}
	}
	for (size_t i = 0; i < checks->len; i++)
		if (BPF_CLASS(checks->insn[i].code) == BPF_ST ||
		    BPF_CLASS(checks->insn[i].code) == BPF_STX)
			die("argument checks use scratch memory", EINVAL);
	if (marks == 0)
		die("no argument-checked syscall in the allowlist", EINVAL);
}

/*
 * Just enough of a cBPF interpreter to run what libseccomp emits (loads
 * of seccomp_data words, ALU on the accumulator, jumps, returns), for the
 * self-check below. Anything else fails the build.
 */
static uint32_t run(const struct program *p, const struct seccomp_data *d)
{
	uint32_t a = 0, words[sizeof(*d) / 4];

	memcpy(words, d, sizeof(words));
	for (size_t pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insn[pc];
		uint32_t src = f->k;
		bool cond;

		if (BPF_CLASS(f->code) != BPF_RET && BPF_CLASS(f->code) != BPF_LD &&
		    BPF_SRC(f->code) != BPF_K)
			die("interpreter: unexpected X operand", EINVAL);
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code != (BPF_LD | BPF_W | BPF_ABS) || f->k % 4 || f->k >= sizeof(*d))
				die("interpreter: unexpected load", EINVAL);
			a = words[f->k / 4];
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_AND:
				a &= src;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			default:
				die("interpreter: unexpected ALU op", EINVAL);
			}
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				break;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				cond = a == src;
				break;
			case BPF_JGT:
				cond = a > src;
				break;
			case BPF_JGE:
				cond = a >= src;
				break;
			case BPF_JSET:
				cond = (a & src) != 0;
				break;
			default:
				die("interpreter: unexpected jump", EINVAL);
			}
			pc += cond ? f->jt : f->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		default:
			die("interpreter: unexpected instruction", EINVAL);
		}
	}
	die("interpreter: ran off the end", EINVAL);
}

/* What the kernel answers for stacked programs: the most restrictive action. */
static uint32_t stacked(uint32_t first, uint32_t second)
{
	if (first == SPLICE_RET)
		first = SECCOMP_RET_ALLOW;
	return (int32_t)(first & SECCOMP_RET_ACTION_FULL) <=
			       (int32_t)(second & SECCOMP_RET_ACTION_FULL) ?
		       first :
		       second;
}

/*
 * The argument values the self-checks try: 0, every constant a program
 * compares against and its neighbours, high halves set, and for the masks
 * (the mode bits, the creating flags) each mask, its complement, and the
 * union of all of them with and without ordinary permission bits, so that
 * "one of several bits set" is tried with each bit and with both.
 */
#define MAX_VALUES 256

struct values {
	uint64_t v[MAX_VALUES];
	size_t n;
};

static void value_add(struct values *vs, uint64_t v)
{
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i] == v)
			return;
	if (vs->n == MAX_VALUES)
		die("self-check: too many argument values", E2BIG);
	vs->v[vs->n++] = v;
}

static void values_of(const struct program *p, struct values *vs)
{
	uint64_t masks = 0;

	value_add(vs, 0);
	for (size_t i = 0; i < p->len; i++) {
		const struct sock_filter *f = &p->insn[i];
		uint64_t k = f->k;

		if (BPF_CLASS(f->code) == BPF_ALU && BPF_OP(f->code) == BPF_AND) {
			if (k == 0xffffffffu)
				continue; /* the low-32-bit compares: their JEQ values cover them */
			masks |= k;
			value_add(vs, k);
			value_add(vs, ~k & 0xffffffffu);
			value_add(vs, k | 0755);
			continue;
		}
		if (BPF_CLASS(f->code) != BPF_JMP || BPF_OP(f->code) == BPF_JA)
			continue;
		value_add(vs, k);
		value_add(vs, k + 1);
		value_add(vs, k - 1);
		value_add(vs, k | 1ULL << 32);
		value_add(vs, k | 0xffffffff00000000ULL);
	}
	value_add(vs, masks);
	value_add(vs, masks | 0755);
	value_add(vs, masks | 1ULL << 32);
}

static bool is_argument_checked(int nr)
{
	for (size_t i = 0; i < sizeof(argument_checked) / sizeof(argument_checked[0]); i++)
		if (nr == seccomp_syscall_resolve_name(argument_checked[i]))
			return true;
	return false;
}

/*
 * Arguments for the pair (x, y) in one of three placements: x as argument
 * 0, 1 or 2 and y in every other slot. That puts each checked syscall's
 * two compared arguments (socket 0 and 2, open 1 and 2, openat 2 and 3)
 * at every pair of values; the one-argument checks see every value.
 */
static void place(struct seccomp_data *d, int placement, uint64_t x, uint64_t y)
{
	for (int i = 0; i < 6; i++)
		d->args[i] = y;
	d->args[placement] = x;
}

/*
 * The spliced program must answer exactly as the allowlist and the
 * checks stacked: every syscall number (and the x32 and -1 forms) on
 * three architectures, with argument values around every constant the
 * programs compare against, high halves set and clear.
 */
static void self_check(const struct program *allow, const struct program *checks,
		       const struct program *spliced)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 0 };
	struct values vs = { .n = 0 };
	struct seccomp_data d;
	unsigned long cases = 0;

	values_of(checks, &vs);
	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++) {
		for (int64_t nr = -1; nr < 1024 + 0x40000000; nr++) {
			bool all;

			if (nr == 1024)
				nr = 0x40000000; /* the x32 numbers */
			/* Other ABIs are killed before any argument is looked at. */
			all = a == 0 && is_argument_checked((int)nr);
			memset(&d, 0, sizeof(d));
			d.arch = arches[a];
			d.nr = (int)nr;
			for (int placement = 0; placement < 3; placement++) {
				for (size_t v = 0; v < vs.n * vs.n; v++) {
					uint32_t want, got;

					place(&d, placement, vs.v[v % vs.n], vs.v[v / vs.n]);
					want = stacked(run(allow, &d), run(checks, &d));
					got = run(spliced, &d);
					if (want != got) {
						fprintf(stderr,
							"cordon-seccomp-gen: self-check: arch %#x nr %d: "
							"stacked %#x, spliced %#x\n",
							d.arch, d.nr, want, got);
						exit(1);
					}
					cases++;
					if (!all && v >= vs.n)
						break; /* arguments matter for the checked ones only
							*/
				}
			}
		}
	}
	if (cases == 0)
		die("self-check ran nothing", EINVAL);
}

/* The name of syscall nr of arch (a libseccomp token), NULL when it has none. */
static char *syscall_name(uint32_t arch, int nr)
{
	return seccomp_syscall_resolve_num_arch(arch, nr);
}

static bool is_guarded(const char *name)
{
	if (strcmp(name, "openat2") == 0)
		return true;
	for (size_t i = 0; i < sizeof(mode_syscalls) / sizeof(mode_syscalls[0]); i++)
		if (strcmp(name, mode_syscalls[i].name) == 0)
			return true;
	return false;
}

/*
 * The guard must answer, on each of the three ABIs, for the syscalls it
 * guards exactly what the default profile answers for the x86_64 syscall
 * of that name, and allow every other syscall: it is those checks and
 * nothing more, wherever a profile lets a call through.
 */
static void self_check_guard(const struct program *guard, const struct program *spliced)
{
	static const struct {
		uint32_t audit, token;
		int base;
	} abis[] = {
		{ AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, 0 },
		{ AUDIT_ARCH_X86_64, SCMP_ARCH_X32, 0x40000000 },
		{ AUDIT_ARCH_I386, SCMP_ARCH_X86, 0 },
	};
	struct values vs = { .n = 0 };
	unsigned long guarded = 0;

	values_of(guard, &vs);
	for (size_t a = 0; a < sizeof(abis) / sizeof(abis[0]); a++) {
		for (int nr = abis[a].base; nr < abis[a].base + 1024; nr++) {
			char *name = syscall_name(abis[a].token, nr);
			int native =
				name && is_guarded(name) ? seccomp_syscall_resolve_name(name) : -1;
			struct seccomp_data d = { .nr = nr, .arch = abis[a].audit };

			free(name);
			guarded += native >= 0;
			for (int placement = 0; placement < 3; placement++) {
				for (size_t v = 0; v < vs.n * vs.n; v++) {
					struct seccomp_data x86_64;
					uint32_t want = SECCOMP_RET_ALLOW, got;

					place(&d, placement, vs.v[v % vs.n], vs.v[v / vs.n]);
					if (abis[a].audit == AUDIT_ARCH_I386)
						for (int i = 0; i < 6; i++)
							d.args[i] &=
								0xffffffffu; /* 32-bit registers */
					if (native >= 0) {
						x86_64 = d;
						x86_64.arch = AUDIT_ARCH_X86_64;
						x86_64.nr = native;
						want = run(spliced, &x86_64);
					}
					got = run(guard, &d);
					if (want != got) {
						fprintf(stderr,
							"cordon-seccomp-gen: guard self-check: arch %#x nr "
							"%d: want %#x, guard %#x\n",
							d.arch, d.nr, want, got);
						exit(1);
					}
					if (native < 0 && v >= vs.n)
						break;
				}
			}
		}
	}
	/* 10 syscalls (the mode ones and openat2) on each of three ABIs. */
	if (guarded != 3 * (sizeof(mode_syscalls) / sizeof(mode_syscalls[0]) + 1))
		die("guard self-check: a guarded syscall is missing on some ABI", EINVAL);
}

static void emit(FILE *out, const char *name, const struct program *p)
{
	fprintf(out, "static const struct sock_filter %s[] = {\n", name);
	for (size_t i = 0; i < p->len; i++)
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08x },\n", p->insn[i].code, p->insn[i].jt,
			p->insn[i].jf, p->insn[i].k);
	fprintf(out, "};\n\n");
}

int main(int argc, char **argv)
{
	static struct program allow, checks, spliced, guard, proxy;
	scmp_filter_ctx f0, f1, f2, f3;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: cordon-seccomp-gen OUTPUT.c\n");
		return 2;
	}
	f0 = allowlist();
	f1 = argument_checks();
	f2 = mode_guard();
	f3 = dnsproxy();
	export(f0, &allow);
	export(f3, &proxy);
	export(f1, &checks);
	export(f2, &guard);
	splice_programs(&allow, &checks, &spliced);
	self_check(&allow, &checks, &spliced);
	self_check_guard(&guard, &spliced);
	out = fopen(argv[1], "w");
	if (!out)
		die(argv[1], errno);
	fprintf(out, "/* Generated by cordon-seccomp-gen from src/security/seccomp-gen.c. */\n"
		     "#include <linux/filter.h>\n#include \"cordon/security.h\"\n\n");
	emit(out, "filter_default", &spliced);
	emit(out, "filter_mode_guard", &guard);
	emit(out, "filter_dnsproxy", &proxy);
	fprintf(out,
		"static const struct cordon_bpf default_filters[] = {\n"
		"\t{ filter_default, sizeof(filter_default) / sizeof(filter_default[0]) },\n"
		"};\n\n"
		"static const struct cordon_bpf mode_guard_filter = {\n"
		"\tfilter_mode_guard, sizeof(filter_mode_guard) / sizeof(filter_mode_guard[0])\n"
		"};\n\n"
		"size_t cordon_seccomp_default(const struct cordon_bpf **filters)\n{\n"
		"\t*filters = default_filters;\n\treturn 1;\n}\n\n"
		"const struct cordon_bpf *cordon_seccomp_mode_guard(void)\n{\n"
		"\treturn &mode_guard_filter;\n}\n\n"
		"static const struct cordon_bpf dnsproxy_filter = {\n"
		"\tfilter_dnsproxy, sizeof(filter_dnsproxy) / sizeof(filter_dnsproxy[0])\n"
		"};\n\n"
		"const struct cordon_bpf *cordon_seccomp_dnsproxy(void)\n{\n"
		"\treturn &dnsproxy_filter;\n}\n");
	if (fclose(out) != 0)
		die(argv[1], errno);
	seccomp_release(f0);
	seccomp_release(f1);
	seccomp_release(f2);
	seccomp_release(f3);
	return 0;
}
