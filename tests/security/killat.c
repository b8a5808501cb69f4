// SPDX-License-Identifier: Apache-2.0
/*
 * sec-killat: SIGKILL a command at one exact step, for the tests of what
 * a supervisor killed mid-way leaves behind (the sweep must find it).
 *
 *   sec-killat NAME[:K] CMD [ARG...]
 *
 * Runs CMD under ptrace, following its forks, and SIGKILLs the process
 * whose K-th (default first) mkdir or mkdirat of a directory named NAME
 * (the path's last component), or write to a file so named (the fd's
 * path), has just succeeded, before it runs another instruction.
 * Prints "killed PID" and exits 0; when CMD ends without such a call,
 * prints "no mkdir of or write to NAME" and exits 3; 2 on misuse or a ptrace error.
 * Every other process of CMD goes on, untraced, once this one exits (an
 * execve under way included: PTRACE_O_TRACEEXEC, or it would die of a
 * SIGTRAP). Meant for one process making the directory at a time; a
 * SIGSTOP the command sends itself is not passed on.
 */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPTIONS                                                                                   \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | \
	 PTRACE_O_TRACEEXEC)

/* The last component of the path a mkdir at its entry named (or a write's fd), from the tracee. */
static int named(pid_t pid, const struct __ptrace_syscall_info *in, const char *name)
{
	char path[PATH_MAX];
	unsigned long long addr;
	struct iovec local = { path, sizeof(path) - 1 }, remote;
	const char *last;
	ssize_t n;

	if (in->entry.nr == SYS_write) {
		char fd[64];

		snprintf(fd, sizeof(fd), "/proc/%d/fd/%llu", (int)pid,
			 (unsigned long long)in->entry.args[0]);
		n = readlink(fd, path, sizeof(path) - 1);
		if (n <= 0)
			return 0;
		path[n] = '\0';
		last = strrchr(path, '/');
		return strcmp(last ? last + 1 : path, name) == 0;
	}
#ifdef SYS_mkdir
	if (in->entry.nr == SYS_mkdir)
		addr = in->entry.args[0];
	else
#endif
		if (in->entry.nr == SYS_mkdirat)
		addr = in->entry.args[1];
	else
		return 0;
	remote = (struct iovec){ (void *)(uintptr_t)addr, sizeof(path) - 1 };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	last = strrchr(path, '/');
	return strcmp(last ? last + 1 : path, name) == 0;
}

/* The tracees born whose first stop is still to come. */
struct born {
	pid_t pid[256];
	size_t n;
};

/*
 * add: note pid (when a fork event names it; if its stop came first, it
 * is seen now and not kept). Otherwise: was pid waited for as new? The
 * answer takes it off, or marks its stop seen for the event to come.
 */
static bool note(struct born *b, pid_t pid, bool add)
{
	static pid_t early[256];
	static size_t n_early;

	for (size_t i = 0; i < (add ? n_early : b->n); i++) {
		pid_t *list = add ? early : b->pid;

		if (list[i] == pid) {
			list[i] = list[--*(add ? &n_early : &b->n)];
			return true;
		}
	}
	if (add && b->n < 256)
		b->pid[b->n++] = pid;
	else if (!add && n_early < 256)
		early[n_early++] = pid;
	return false;
}

int main(int argc, char **argv)
{
	struct born born = { .n = 0 };
	struct __ptrace_syscall_info info;
	pid_t child, pid, victim = 0, hit = 0;
	char *name, *colon;
	int status, k = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: sec-killat NAME[:K] CMD [ARG...]\n");
		return 2;
	}
	name = argv[1];
	colon = strrchr(name, ':');
	if (colon) {
		*colon = '\0';
		k = atoi(colon + 1);
	}
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		raise(SIGSTOP);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SETOPTIONS, child, NULL, OPTIONS) < 0 ||
	    ptrace(PTRACE_SYSCALL, child, NULL, NULL) < 0) {
		perror("sec-killat: ptrace");
		return 2;
	}
	/* hit: the tracee whose system call under way is a mkdir of NAME (one at a time). */
	while (!victim) {
		int sig = 0, event;

		pid = waitpid(-1, &status, __WALL);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break; /* every tracee is gone */
		if (WIFEXITED(status) || WIFSIGNALED(status))
			continue;
		event = status >> 16;
		if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) <= 0)
				info.op = PTRACE_SYSCALL_INFO_NONE;
			if (info.op == PTRACE_SYSCALL_INFO_ENTRY && named(pid, &info, name))
				hit = pid;
			else if (info.op == PTRACE_SYSCALL_INFO_EXIT && hit == pid &&
				 info.exit.rval >= 0 && --k <= 0)
				victim = pid;
			else if (hit == pid)
				hit = 0;
		} else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
			   event == PTRACE_EVENT_CLONE) {
			unsigned long child_pid = 0;

			/* A new tracee, stopped until its first stop is seen: noted. */
			if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &child_pid) == 0)
				note(&born, (pid_t)child_pid, true);
		} else if (event == 0 && WSTOPSIG(status) == SIGSTOP) {
			note(&born, pid, false); /* a new tracee's first stop: not passed on */
		} else if (event == 0 && WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status); /* a signal for the tracee: delivered */
		}
		if (!victim)
			ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig);
	}
	if (!victim) {
		printf("no mkdir of or write to %s\n", name);
		return 3;
	}
	/* Still stopped after its call: it runs nothing more. */
	kill(victim, SIGKILL);
	/*
	 * A new tracee whose first stop is not seen yet would take it after we
	 * are gone and stay stopped for good (holding, say, the caller's
	 * pipe): its stop is waited for and it is let go.
	 */
	for (size_t i = 0; i < born.n; i++) {
		if (born.pid[i] == victim || waitpid(born.pid[i], &status, __WALL) != born.pid[i] ||
		    !WIFSTOPPED(status))
			continue;
		ptrace(PTRACE_DETACH, born.pid[i], NULL, NULL);
	}
	printf("killed %d\n", (int)victim);
	return 0;
}
