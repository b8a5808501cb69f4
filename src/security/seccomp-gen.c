// SPDX-License-Identifier: Apache-2.0
/*
 * Build-time generator of the default seccomp profile: libseccomp builds
 * the filters once, here, and the runtime only hands the kernel the
 * resulting cBPF (no filter compilation on the sandbox start-up path).
 *
 * Usage: cordon-seccomp-gen OUTPUT.c
 *
 * Two stacked filters (the kernel applies the most restrictive answer of
 * all installed filters):
 *   0: the allowlist; default EPERM; clone without namespace flags;
 *      clone3 ENOSYS (libc falls back to clone); personality(0) and the
 *      query form only. Any architecture but x86_64 (i386 via int 0x80,
 *      x32) kills the process.
 *   1: default allow; argument checks libseccomp cannot merge into the
 *      allowlist's rule for the same syscall: TIOCSTI/TIOCLINUX ioctls,
 *      netlink sockets other than NETLINK_ROUTE.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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
	"io_pgetevents", "io_setup", "io_submit", "ioctl", "ioprio_get", "ioprio_set", "kill",
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
	"socket", "socketpair", "splice", "stat", "statfs", "statx", "symlink", "symlinkat",
	"sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
	"timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime",
	"timerfd_create", "timerfd_gettime", "timerfd_settime", "times", "tkill", "truncate",
	"umask", "uname", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork",
	"vmsplice", "wait4", "waitid", "write", "writev",
};

#define NS_FLAGS                                                                          \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |       \
	 CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME)

static void die(const char *what, int r)
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
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* newer than this libseccomp: stays denied */
		check(allowed[i], seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0));
	}
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

static void emit(FILE *out, const char *name, scmp_filter_ctx ctx)
{
	char path[] = "/tmp/cordon-seccomp-XXXXXX";
	int fd = mkstemp(path);
	struct sock_filter insn;
	size_t n = 0;
	FILE *in;

	if (fd < 0)
		die("mkstemp", errno);
	unlink(path);
	check("seccomp_export_bpf", seccomp_export_bpf(ctx, fd));
	in = fdopen(fd, "rb");
	if (!in)
		die("fdopen", errno);
	rewind(in);
	fprintf(out, "static const struct sock_filter %s[] = {\n", name);
	while (fread(&insn, sizeof(insn), 1, in) == 1) {
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08x },\n", insn.code, insn.jt, insn.jf, insn.k);
		n++;
	}
	fprintf(out, "};\n\n");
	fclose(in);
	if (n == 0)
		die("empty filter", EINVAL);
}

int main(int argc, char **argv)
{
	scmp_filter_ctx f0, f1;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: cordon-seccomp-gen OUTPUT.c\n");
		return 2;
	}
	f0 = allowlist();
	f1 = argument_checks();
	out = fopen(argv[1], "w");
	if (!out)
		die(argv[1], errno);
	fprintf(out, "/* Generated by cordon-seccomp-gen from src/security/seccomp-gen.c. */\n"
		     "#include <linux/filter.h>\n#include \"cordon/security.h\"\n\n");
	emit(out, "filter_allowlist", f0);
	emit(out, "filter_arguments", f1);
	fprintf(out,
		"static const struct cordon_bpf default_filters[] = {\n"
		"\t{ filter_allowlist, sizeof(filter_allowlist) / sizeof(filter_allowlist[0]) },\n"
		"\t{ filter_arguments, sizeof(filter_arguments) / sizeof(filter_arguments[0]) },\n"
		"};\n\n"
		"size_t cordon_seccomp_default(const struct cordon_bpf **filters)\n{\n"
		"\t*filters = default_filters;\n\treturn 2;\n}\n");
	if (fclose(out) != 0)
		die(argv[1], errno);
	seccomp_release(f0);
	seccomp_release(f1);
	return 0;
}
