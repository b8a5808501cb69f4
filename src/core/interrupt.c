// SPDX-License-Identifier: Apache-2.0
/*
 * Waits that a signal ends. A command that acts on a container (state,
 * kill, exec, ...) may wait for the container's lock, its monitor, its
 * init or its freezer; whoever runs it (a person at ^C, a launcher's
 * timeout) must be able to end it, and it must then let go of what it
 * holds and say why.
 *
 * Armed, SIGINT, SIGTERM and SIGHUP stay blocked except inside a wait
 * (ppoll with a mask that lets them in), and a handler notes them. A
 * signal that comes while the command works is pending until its next
 * wait, which then returns at once: none is lost between a check and a
 * blocking call. flock(2) takes no signal mask, so a lock is waited for
 * by a child that blocks in flock on the same open file description
 * (the lock is the description's, so it stays ours when the child
 * exits) while we wait for the child.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon/core.h"

static const int interrupt_signals[] = { SIGINT, SIGTERM, SIGHUP };

static volatile sig_atomic_t interrupted_by;
static bool armed;

static void note_signal(int sig)
{
	if (!interrupted_by)
		interrupted_by = sig;
}

void cordon_interrupt_arm(void)
{
	struct sigaction sa = { .sa_handler = note_signal }; /* no SA_RESTART */
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(interrupt_signals); i++)
		sigaddset(&set, interrupt_signals[i]);
	sigfillset(&sa.sa_mask);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(interrupt_signals); i++) {
		struct sigaction old;

		/* A signal the caller ignores (a background job's SIGINT) stays ignored. */
		if (sigaction(interrupt_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(interrupt_signals[i], &sa, NULL);
	}
	armed = true;
}

int cordon_interrupted(void)
{
	return interrupted_by;
}

/* Our mask with the interrupting signals let in: what a wait runs with. */
static void wait_mask(sigset_t *mask)
{
	sigprocmask(SIG_BLOCK, NULL, mask);
	for (size_t i = 0; i < ARRAY_SIZE(interrupt_signals); i++)
		sigdelset(mask, interrupt_signals[i]);
}

int cordon_wait_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	uint64_t deadline =
		cordon_now_mono_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
	sigset_t mask;

	if (armed)
		wait_mask(&mask);
	for (;;) {
		struct timespec ts, *tsp = NULL;
		int r;

		if (interrupted_by)
			return -EINTR;
		if (timeout_ms >= 0) {
			uint64_t now = cordon_now_mono_us(),
				 left = now < deadline ? deadline - now : 0;

			ts.tv_sec = (time_t)(left / 1000000);
			ts.tv_nsec = (long)(left % 1000000) * 1000;
			tsp = &ts;
		}
		r = ppoll(fds, n, tsp, armed ? &mask : NULL);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -errno;
	}
}

int cordon_wait_ms(int ms)
{
	int r = cordon_wait_poll(NULL, 0, ms);

	return r < 0 ? r : 0;
}

/* In the child of cordon_wait_flock: the lock, then its errno (0) on the pipe. */
static _Noreturn void flock_child(int fd, int op, int report, pid_t parent)
{
	int r, e;

	/* Our end is the parent's: if it dies (SIGKILL), we must not take the lock later. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	do
		r = flock(fd, op);
	while (r < 0 && errno == EINTR);
	e = r < 0 ? errno : 0;
	if (write(report, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(1);
	_exit(0);
}

int cordon_wait_flock(int fd, int op)
{
	struct pollfd p = { .events = POLLIN };
	pid_t parent = getpid(), child;
	int pipefd[2], e = EIO, r;

	if (flock(fd, op | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	if (!armed) {
		do
			r = flock(fd, op);
		while (r < 0 && errno == EINTR);
		return r < 0 ? -errno : 0;
	}
	if (interrupted_by)
		return -EINTR;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		e = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return -e;
	}
	if (child == 0) {
		close(pipefd[0]);
		flock_child(fd, op, pipefd[1], parent);
	}
	close(pipefd[1]);
	p.fd = pipefd[0];
	r = cordon_wait_poll(&p, 1, -1);
	if (r < 0) {
		/*
		 * It may have taken the lock just now: then the lock is on our
		 * description, and goes when the caller closes fd.
		 */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		close(pipefd[0]);
		return r;
	}
	if (read(pipefd[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = EIO;
	close(pipefd[0]);
	waitpid(child, NULL, 0);
	return -e;
}

int cordon_interrupt_error(struct cordon_error *err, const char *fmt, ...)
{
	int sig = interrupted_by;
	const char *name = sig ? sigabbrev_np(sig) : NULL;
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_STATE, 0, "%s: interrupted by SIG%s", what,
				name ? name : "?");
}
