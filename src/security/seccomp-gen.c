// SPDX-License-Identifier: Apache-2.0
/*
 * Build-time generator of the default seccomp profile: libseccomp builds
 * the filter once, here, and the runtime only hands the kernel the
 * resulting cBPF (no filter compilation on the sandbox start-up path).
 *
 * Usage: cordon-seccomp-gen OUTPUT.c
 *
 * The profile is two parts, built as two libseccomp filters:
 *   allowlist: default EPERM; clone without namespace flags; clone3
 *      ENOSYS (libc falls back to clone); personality(0) and the query
 *      form only. Any architecture but x86_64 (i386 via int 0x80, x32)
 *      kills the process. ioctl and socket are handed to...
 *   argument checks: default allow; TIOCSTI/TIOCLINUX ioctls and netlink
 *      sockets other than NETLINK_ROUTE answer EPERM.
 * libseccomp cannot express "ioctl, except these commands" inside a
 * default-deny filter (an unconditional rule overrides the conditional
 * ones), so the second part exists. It used to be a second, stacked
 * program; every program costs the kernel an allocation, a JIT image and
 * an action-cache pass at each sandbox start, so the two are spliced into
 * one here: the allowlist's verdict for ioctl and socket is a marker
 * return, replaced by a jump to the argument checks appended after it.
 * The generator then checks, with a small cBPF interpreter, that the
 * spliced program answers exactly as the two stacked programs would.
 */
#include <errno.h>
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
#include <sys/socket.h>
#include <unistd.h>

/* Allowed outright (ioctl and socket: see argument_checked). */
static const char *const allowed[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind", "brk",
	"cachestat", "capget", "capset", "chdir", "chmod", "chown", "chroot", "clock_getres",
	"clock_gettime", "clock_nanosleep", "close", "close_range", "connect",
	"copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait", "eventfd", "eventfd2",
	"execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2", "fadvise64",
	"fallocate", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl",
	"fdatasync", "fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr",
	"fstat", "fstatfs", "fsync", "ftruncate", "futex", "futex_waitv", "get_mempolicy",
	"get_robust_list", "get_thread_area", "getcpu", "getcwd", "getdents", "getdents64",
	"getegid", "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid",
	"getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid", "getresuid",
	"getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
	"gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy", "io_getevents",
	"io_pgetevents", "io_setup", "io_submit", "ioprio_get", "ioprio_set", "kill",
	"landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown",
	"lgetxattr", "link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
	"lseek", "lsetxattr", "lstat", "madvise", "map_shadow_stack", "mbind", "membarrier",
	"memfd_create", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2",
	"mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
	"mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap", "msgctl", "msgget", "msgrcv",
	"msgsnd", "msync", "munlock", "munlockall", "munmap", "nanosleep", "newfstatat", "open",
	"openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
	"pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64",
	"preadv", "preadv2", "prlimit64", "pselect6", "pwrite64", "pwritev", "pwritev2", "read",
	"readahead", "readlink", "readlinkat", "readv", "recvfrom", "recvmmsg", "recvmsg",
	"remap_file_pages", "removexattr", "rename", "renameat", "renameat2", "restart_syscall",
	"rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo",
	"sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity",
	"sched_getattr", "sched_getparam", "sched_getscheduler", "sched_rr_get_interval",
	"sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler",
	"sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop",
	"sendfile", "sendmmsg", "sendmsg", "sendto", "set_mempolicy", "set_robust_list",
	"set_thread_area", "set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups",
	"setitimer", "setpgid", "setpriority", "setregid", "setresgid", "setresuid",
	"setreuid", "setrlimit", "setsid", "setsockopt", "setuid", "setxattr", "shmat",
	"shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4",
	"socketpair", "splice", "stat", "statfs", "statx", "symlink", "symlinkat",
	"sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
	"timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime",
	"timerfd_create", "timerfd_gettime", "timerfd_settime", "times", "tkill", "truncate",
	"umask", "uname", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork",
	"vmsplice", "wait4", "waitid", "write", "writev",
};

/*
 * The allowlist's verdict for syscalls whose arguments the second part
 * checks. SCMP_ACT_TRACE is used nowhere else in the profile, so a return
 * of this value can only be one of these verdicts.
 */
#define SPLICE_MARK 0x5c0d
#define SPLICE_RET (SECCOMP_RET_TRACE | SPLICE_MARK)
static const char *const argument_checked[] = { "ioctl", "socket" };

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
	for (size_t i = 0; i < sizeof(argument_checked) / sizeof(argument_checked[0]); i++)
		check(argument_checked[i],
		      seccomp_rule_add(ctx, SCMP_ACT_TRACE(SPLICE_MARK),
				       seccomp_syscall_resolve_name(argument_checked[i]), 0));
	check("clone", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0)));
	check("clone3", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0));
	check("personality", seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
					      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0)));
	check("personality query",
	      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, 0xffffffffu)));
	return ctx;
}

static scmp_filter_ctx argument_checks(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx)
		die("seccomp_init", ENOMEM);
	check("badarch", seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS));
	/* ioctl's cmd is an unsigned int: compare the low 32 bits only. */
	check("TIOCSTI", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)));
	check("TIOCLINUX", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)));
	check("netlink", seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
					  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_NETLINK),
					  SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE)));
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
static void splice(const struct program *allow, const struct program *checks, struct program *out)
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
 * The spliced program must answer exactly as the allowlist and the
 * checks stacked: every syscall number (and the x32 and -1 forms) on
 * three architectures, with argument values around every constant the
 * programs compare against, high halves set and clear.
 */
static void self_check(const struct program *allow, const struct program *checks,
		       const struct program *spliced)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, 0 };
	uint64_t values[64];
	size_t n_values = 0;
	struct seccomp_data d;
	unsigned long cases = 0;

	values[n_values++] = 0;
	for (size_t i = 0; i < checks->len && n_values + 6 < sizeof(values) / sizeof(values[0]);
	     i++) {
		uint64_t k = checks->insn[i].k;

		if (BPF_CLASS(checks->insn[i].code) != BPF_JMP ||
		    BPF_OP(checks->insn[i].code) == BPF_JA)
			continue;
		values[n_values++] = k;
		values[n_values++] = k + 1;
		values[n_values++] = k - 1;
		values[n_values++] = k | 1ULL << 32;
		values[n_values++] = k | 0xffffffff00000000ULL;
	}
	for (size_t a = 0; a < sizeof(arches) / sizeof(arches[0]); a++) {
		for (int64_t nr = -1; nr < 1024 + 0x40000000; nr++) {
			if (nr == 1024)
				nr = 0x40000000; /* the x32 numbers */
			memset(&d, 0, sizeof(d));
			d.arch = arches[a];
			d.nr = (int)nr;
			for (size_t v = 0; v < n_values * n_values; v++) {
				uint32_t want, got;

				/* socket compares args 0 and 2, ioctl arg 1: every pair. */
				d.args[0] = values[v % n_values];
				d.args[1] = d.args[2] = values[v / n_values];
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
				if (nr != SCMP_SYS(ioctl) && nr != SCMP_SYS(socket) &&
				    v >= n_values)
					break; /* arguments matter for these two only... */
			}
		}
	}
	if (cases == 0)
		die("self-check ran nothing", EINVAL);
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
	static struct program allow, checks, spliced;
	scmp_filter_ctx f0, f1;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: cordon-seccomp-gen OUTPUT.c\n");
		return 2;
	}
	f0 = allowlist();
	f1 = argument_checks();
	export(f0, &allow);
	export(f1, &checks);
	splice(&allow, &checks, &spliced);
	self_check(&allow, &checks, &spliced);
	out = fopen(argv[1], "w");
	if (!out)
		die(argv[1], errno);
	fprintf(out, "/* Generated by cordon-seccomp-gen from src/security/seccomp-gen.c. */\n"
		     "#include <linux/filter.h>\n#include \"cordon/security.h\"\n\n");
	emit(out, "filter_default", &spliced);
	fprintf(out, "static const struct cordon_bpf default_filters[] = {\n"
		     "\t{ filter_default, sizeof(filter_default) / sizeof(filter_default[0]) },\n"
		     "};\n\n"
		     "size_t cordon_seccomp_default(const struct cordon_bpf **filters)\n{\n"
		     "\t*filters = default_filters;\n\treturn 1;\n}\n");
	if (fclose(out) != 0)
		die(argv[1], errno);
	seccomp_release(f0);
	seccomp_release(f1);
	return 0;
}
