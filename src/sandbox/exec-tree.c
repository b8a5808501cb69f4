// SPDX-License-Identifier: Apache-2.0
/*
 * A supervised `cordon exec` (--timeout, --kill-after, --output-max,
 * --result-json): one command in a live sandbox with cordon run's
 * outcome (exit status, 124 on timeout, output cap, result JSON), ended
 * with every process it started and nothing else of the sandbox's.
 *
 *   cordon exec (host)
 *     socketpair ──► joiner (exec.c) ──► reaper (container's pid namespace,
 *                                          U1, child subreaper, no capability)
 *                                          └─► the process (the one confinement
 *                                              sequence, U2), and all it starts
 *     SYNC_CREATED + the process's pidfd ◄── reaper
 *     loop: signals (relayed to the process), the timer, the output pipes,
 *           SYNC_EXITED (its wait status) from the reaper
 *     timeout: SIGTERM (and SIGCONT) to every process below the reaper;
 *              after --kill-after, SIGKILL to every one, again, until none
 *              is left
 *     close the socket: the reaper exits
 *
 * The tree is found from the host: the host's /proc, which nothing in the
 * sandbox can mount over or hide from, gives every process's parent; what
 * hangs below the reaper is the command's, since an orphan goes to the
 * reaper (a subreaper), never above it. A pid is signalled through a
 * pidfd opened after the scan, and only when that process still has the
 * parent the scan saw, or the reaper (its parent ended meanwhile, as one
 * signalled just before it does: only the tree's processes are the
 * reaper's children), and lives in the container's pid namespace (or one
 * below it): a pid reused meanwhile is not signalled. Why a reaper and not
 * a cgroup per exec: docs/architecture.md, "exec's process tree".
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "sandbox-internal.h"

/* How many rounds of SIGKILL before the tree is given up on (a process in D state). */
#define TREE_KILL_ROUNDS 200
/* How long a round waits for what it killed to go. */
#define TREE_KILL_WAIT_MS 50
/* How long the reaper has, once the tree is killed, to report the command's status. */
#define REAPER_REPORT_MS 10000

struct exec_out {
	int fd;	  /* our read end, -1 when closed */
	int dest; /* STDOUT_FILENO, STDERR_FILENO */
	uint64_t *bytes;
	bool dest_gone; /* the reader went away: counted, not written */
};

struct exec_sv {
	const struct cordon_exec_opts *opts;
	struct cordon_result *res;
	pid_t reaper;	   /* host pid, our child */
	int reaper_pidfd;
	int sock;	   /* ours of the reaper's socketpair */
	int cmd_pidfd;	   /* the process, from SYNC_CREATED */
	struct stat pidns; /* the container's pid namespace (SYNC_CREATED's second fd) */
	bool have_pidns;
	int sigfd, timerfd, epfd;
	struct exec_out out[2];
	uint64_t forwarded;
	bool cmd_done, reaper_gone;
	bool tree_empty; /* the reaper has no child left, or the SIGKILL rounds ended */
	bool report_overdue; /* killed, and the reaper has not reported within REAPER_REPORT_MS */
	int cmd_status;
	/* The processes the timeout's SIGTERM went to, sorted: each gets one. */
	pid_t *termed;
	size_t n_termed;
};

/* --- the tree, from the host's /proc --------------------------------------- */

struct proc_link {
	pid_t pid, ppid;
};

/*
 * pid's parent, from /proc/PID/stat. 0, or -1. Its state letter says
 * nothing of whether it has ended: a process whose main thread has exited
 * reads "Z" while its other threads run; its pidfd tells (has_exited).
 */
static int proc_parent(pid_t pid, pid_t *ppid)
{
	char path[32], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold anything, ')' too: the state follows the last one. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", ppid) != 1)
		return -1;
	return 0;
}

/* Every thread of the pidfd's process has exited (a zombie, or gone): the pidfd reads ready. */
static bool has_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* Every process of the host with its parent (malloc'd). */
static size_t proc_links(struct proc_link **out)
{
	struct proc_link *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct proc_link l;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		l.pid = (pid_t)pid;
		if (proc_parent(l.pid, &l.ppid) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = cordon_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = l;
	}
	closedir(d);
	*out = v;
	return n;
}

/* pid lives in the container's pid namespace or one below it (its own was made in there). */
static bool in_container_pidns(const struct exec_sv *sv, pid_t pid)
{
	char path[40];
	int fd, up;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (int depth = 0; fd >= 0 && depth < 33; depth++) {
		struct stat st;

		if (fstat(fd, &st) < 0)
			break;
		if (st.st_dev == sv->pidns.st_dev && st.st_ino == sv->pidns.st_ino) {
			close(fd);
			return true;
		}
		/* EPERM at the top, the host's: not below the container's. */
		up = ioctl(fd, NS_GET_PARENT);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return false;
}

static int by_ppid(const void *a, const void *b)
{
	const struct proc_link *x = a, *y = b;

	return (x->ppid > y->ppid) - (x->ppid < y->ppid);
}

/* The first of l (sorted by parent) whose parent is ppid, or n. */
static size_t first_child(const struct proc_link *l, size_t n, pid_t ppid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l[mid].ppid < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Signal every live process below the reaper, once. Returns how many were
 * signalled; with pidfds, their pidfds (the caller closes them). The
 * descent is a walk over the links sorted by parent, O(n log n) in the
 * host's processes however deep the command makes its tree: cordon exec
 * runs outside the sandbox's cgroup, and a chain of processes must not
 * make it spin.
 */
static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static size_t tree_signal(struct exec_sv *sv, int sig, int **pidfds)
{
	size_t termed_before = sv->n_termed;
	struct proc_link *l;
	size_t n = proc_links(&l), sent = 0, head = 0, tail = 0;
	pid_t *queue = cordon_xmalloc((n + 1) * sizeof(*queue));

	if (pidfds)
		*pidfds = NULL;
	qsort(l, n, sizeof(*l), by_ppid);
	queue[tail++] = sv->reaper;
	/* Each process has one parent: it is queued at most once, and the queue holds n + 1. */
	while (head < tail) {
		pid_t parent = queue[head++];

		for (size_t i = first_child(l, n, parent); i < n && l[i].ppid == parent; i++) {
			pid_t ppid;
			int fd;

			if (tail <= n)
				queue[tail++] = l[i].pid;
			if (sig == SIGTERM && sv->n_termed &&
			    bsearch(&l[i].pid, sv->termed, termed_before, sizeof(pid_t), by_pid))
				continue;
			fd = cordon_pidfd_open(l[i].pid);
			if (fd < 0)
				continue;
			/*
			 * The pidfd holds the process the checks see: the scan's, or another.
			 * Orphaned since the scan (its parent, signalled first, ended), it is
			 * the reaper's: the timeout's SIGTERM missed such a child.
			 */
			if (has_exited(fd) || proc_parent(l[i].pid, &ppid) < 0 ||
			    (ppid != parent && ppid != sv->reaper) ||
			    !in_container_pidns(sv, l[i].pid) ||
			    cordon_pidfd_send_signal(fd, sig) < 0) {
				close(fd);
				continue;
			}
			if (sig == SIGTERM) {
				sv->termed = cordon_xrealloc(sv->termed,
							     (sv->n_termed + 1) * sizeof(pid_t));
				sv->termed[sv->n_termed++] = l[i].pid;
			}
			if (pidfds) {
				*pidfds = cordon_xrealloc(*pidfds, (sent + 1) * sizeof(int));
				(*pidfds)[sent] = fd;
			} else {
				close(fd);
			}
			sent++;
		}
	}
	free(queue);
	free(l);
	if (sv->n_termed > termed_before)
		qsort(sv->termed, sv->n_termed, sizeof(pid_t), by_pid);
	return sent;
}

/*
 * SIGKILL to the whole tree until nothing is left of it: what a killed
 * process had started goes to the reaper and is found by the next scan,
 * and a process with a SIGKILL pending forks no more. False when a round
 * limit was reached with processes still there (stuck in the kernel).
 */
static bool tree_kill(struct exec_sv *sv)
{
	for (int round = 0; round < TREE_KILL_ROUNDS; round++) {
		int *fds;
		size_t n = tree_signal(sv, SIGKILL, &fds);

		if (n == 0)
			return true;
		for (size_t i = 0; i < n; i++) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };

			/* Readable once it has exited. */
			while (poll(&p, 1, TREE_KILL_WAIT_MS) < 0 && errno == EINTR)
				;
			close(fds[i]);
		}
		free(fds);
	}
	return false;
}

/* --- the loop ---------------------------------------------------------------- */

static int arm_timer(int fd, uint64_t ms)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(ms % 1000) * 1000000 },
	};

	if (ms == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(fd, 0, &its, NULL);
}

static int watch(struct exec_sv *sv, int *fd, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = fd };

	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, *fd, &ev) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_ctl");
	return 0;
}

static void unwatch(struct exec_sv *sv, int fd)
{
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void on_timer(struct exec_sv *sv);

/*
 * Write all of buf to dest, in what dest takes without waiting (a pipe or
 * terminal with room takes 4096 bytes whole), the command waiting on its
 * full pipe meanwhile, as it would on the reader itself. A reader that
 * stops reading (a pager at its prompt, a terminal stopped with ^S) must
 * not hold the timeout: while dest has no room the timer is served, and
 * once timed out the rest is dropped. A reader that is gone makes the rest
 * counted only.
 */
static void out_write(struct exec_sv *sv, struct exec_out *o, const char *buf, size_t len)
{
	while (len && !o->dest_gone && !sv->res->timed_out) {
		struct pollfd p[2] = { { .fd = o->dest, .events = POLLOUT },
				       { .fd = sv->timerfd, .events = POLLIN } };
		size_t chunk = len < 4096 ? len : 4096;
		ssize_t w;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			o->dest_gone = true;
			break;
		}
		if (p[1].revents & POLLIN)
			on_timer(sv);
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			o->dest_gone = true;
			break;
		}
		if (!(p[0].revents & (POLLOUT | POLLHUP)))
			continue;
		w = write(o->dest, buf, chunk);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			o->dest_gone = true;
			break;
		}
		buf += w;
		len -= (size_t)w;
	}
}

/* One read of o's pipe: counted, passed on up to --output-max. False at its end or when empty. */
static bool out_forward(struct exec_sv *sv, struct exec_out *o)
{
	char buf[65536];
	ssize_t r = read(o->fd, buf, sizeof(buf));

	if (r < 0 && errno == EINTR)
		return true;
	if (r < 0 && errno == EAGAIN)
		return false;
	if (r <= 0) {
		unwatch(sv, o->fd);
		cordon_closep(&o->fd);
		return false;
	}
	*o->bytes += (uint64_t)r;
	if (sv->opts->output_capped && (uint64_t)r > sv->opts->output_max - sv->forwarded) {
		uint64_t room = sv->opts->output_max - sv->forwarded;

		if (!sv->res->output_truncated) {
			sv->res->output_truncated = true;
			out_write(sv, o, buf, (size_t)room);
			sv->forwarded += room;
			fprintf(stderr, "cordon: output truncated at %" PRIu64 " bytes\n",
				sv->opts->output_max);
		}
		return true;
	}
	out_write(sv, o, buf, (size_t)r);
	sv->forwarded += (uint64_t)r;
	return true;
}

/* What o's pipe holds now, passed on: at most that much is read (and the last read's rest). */
static void out_drain(struct exec_sv *sv, struct exec_out *o)
{
	uint64_t start;
	int held = 0;

	if (o->fd < 0 || ioctl(o->fd, FIONREAD, &held) < 0)
		return;
	start = *o->bytes;
	while (o->fd >= 0 && *o->bytes - start < (uint64_t)held && out_forward(sv, o))
		;
}

/* The timeout's SIGTERM (and SIGCONT: a stopped process goes on to end) to what has had none. */
static void tree_term(struct exec_sv *sv)
{
	tree_signal(sv, SIGTERM, NULL);
	tree_signal(sv, SIGCONT, NULL);
}

/*
 * The timer: at --timeout, SIGTERM to the whole tree and the timer armed
 * for --kill-after; then SIGKILL rounds until nothing is left. The exit of
 * the command in between does not end the wait: what it started and what
 * ignores SIGTERM is still there (SYNC_TREE_EMPTY says when it is not).
 * Once the tree is killed the reaper's report of the command's status is
 * due at once; the timer bounds the wait for it, so that no state of the
 * sandbox's processes keeps cordon exec waiting.
 */
static void on_timer(struct exec_sv *sv)
{
	uint64_t ticks;

	if (read(sv->timerfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		return;
	if (sv->tree_empty) {
		if (sv->res->timed_out && !sv->cmd_done)
			sv->report_overdue = true;
		return;
	}
	if (!sv->res->timed_out) {
		/* Ended in time: what it left running is the sandbox's. */
		if (sv->cmd_done)
			return;
		sv->res->timed_out = true;
		tree_term(sv);
		arm_timer(sv->timerfd, sv->opts->kill_after_ms);
		return;
	}
	if (!tree_kill(sv))
		cordon_warn("exec in %s: processes of the command did not end after %d rounds of "
			    "SIGKILL",
			    sv->opts->id, TREE_KILL_ROUNDS);
	sv->tree_empty = true;
	if (sv->cmd_done)
		unwatch(sv, sv->timerfd);
	else
		arm_timer(sv->timerfd, REAPER_REPORT_MS);
}

/* A signal for us goes to the process, as cordon_container_exec_wait relays it. */
static void on_signal(struct exec_sv *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGCHLD || sig == SIGTSTP || sv->cmd_pidfd < 0 || sv->cmd_done)
			continue;
		cordon_pidfd_send_signal(sv->cmd_pidfd, sig);
		/* A process that stopped itself would hold the request to end it forever. */
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			cordon_pidfd_send_signal(sv->cmd_pidfd, SIGCONT);
	}
}

/* SYNC_CREATED (the process's pidfd, the container's pid namespace), SYNC_EXITED. */
static void on_reaper(struct exec_sv *sv)
{
	for (;;) {
		struct sync_msg msg;
		int fds[2] = { -1, -1 };
		size_t n_fds = ARRAY_SIZE(fds);
		ssize_t r = sync_recv_nowait(sv->sock, &msg, fds, &n_fds);

		if (r == -EAGAIN || r == -EINTR)
			return;
		if (r <= 0) {
			unwatch(sv, sv->sock);
			sv->reaper_gone = true;
			return;
		}
		if (msg.type == SYNC_CREATED && n_fds == 2 && sv->cmd_pidfd < 0) {
			sv->cmd_pidfd = fds[0];
			sv->have_pidns = fstat(fds[1], &sv->pidns) == 0;
			close(fds[1]);
			continue;
		}
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		if (msg.type == SYNC_EXITED && !sv->cmd_done) {
			char *end;

			sv->cmd_done = true;
			sv->cmd_status = msg.status;
			msg.text[sizeof(msg.text) - 1] = '\0';
			sv->res->cgroup.cpu_usage_us = strtoull(msg.text, &end, 10);
			sv->res->cgroup.cpu_usage_known = end != msg.text && !*end;
			/* Started while the first SIGTERM's scan ran: it gets its own. */
			if (sv->res->timed_out && !sv->tree_empty)
				tree_term(sv);
		}
		if (msg.type == SYNC_TREE_EMPTY)
			sv->tree_empty = true;
	}
}

static int supervise(struct exec_sv *sv, struct cordon_error *err)
{
	if (watch(sv, &sv->sock, err) < 0 || watch(sv, &sv->sigfd, err) < 0 ||
	    watch(sv, &sv->reaper_pidfd, err) < 0)
		return -1;
	if (sv->opts->timeout_ms && (arm_timer(sv->timerfd, sv->opts->timeout_ms) < 0 ||
				     watch(sv, &sv->timerfd, err) < 0))
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "timerfd");
	for (int i = 0; i < 2; i++)
		if (sv->out[i].fd >= 0 && watch(sv, &sv->out[i].fd, err) < 0)
			return -1;
	/* Timed out: until nothing of the command is left (or the reaper is gone). */
	while (!sv->reaper_gone && !sv->report_overdue &&
	       !(sv->cmd_done && (!sv->res->timed_out || sv->tree_empty))) {
		struct epoll_event evs[8];
		int n = epoll_wait(sv->epfd, evs, ARRAY_SIZE(evs), -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_wait");
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &sv->sock)
				on_reaper(sv);
			else if (tag == &sv->sigfd)
				on_signal(sv);
			else if (tag == &sv->timerfd)
				on_timer(sv);
			else if (tag == &sv->out[0].fd)
				out_forward(sv, &sv->out[0]);
			else if (tag == &sv->out[1].fd)
				out_forward(sv, &sv->out[1]);
			else if (tag == &sv->reaper_pidfd) {
				/* What it sent before it went comes first. */
				on_reaper(sv);
				sv->reaper_gone = true;
			}
		}
	}
	/*
	 * The process has exited: what it wrote is in the pipes. What is in
	 * them now is passed on, and no more: a process it left running (not
	 * timed out) keeps running in the sandbox, and its later output is
	 * not ours, nor may its writing keep us here.
	 */
	for (int i = 0; i < 2; i++)
		out_drain(sv, &sv->out[i]);
	if (sv->report_overdue)
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"exec in %s: the command's processes were killed, and its "
					"reaper did not report its status within %d s",
					sv->opts->id, REAPER_REPORT_MS / 1000);
	/* Killed: the sandbox ended under it (its pid namespace goes with its init), or
	 * something inside that may signal it did (rootless: architecture.md). */
	if (!sv->cmd_done)
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"exec in %s: the process's reaper ended before it reported "
					"the process's status (the sandbox ended, or was killed "
					"from inside)",
					sv->opts->id);
	return 0;
}

static void exec_outcome(struct exec_sv *sv)
{
	struct cordon_result *res = sv->res;
	int st = sv->cmd_status;

	if (WIFSIGNALED(st)) {
		res->signal = WTERMSIG(st);
		res->exit_code = 128 + res->signal;
	} else {
		res->exit_code = WEXITSTATUS(st);
	}
	if (res->timed_out)
		res->exit_code = CORDON_EXIT_TIMEOUT;
}

static int open_pipes(struct exec_sv *sv, struct exec_tree *t, struct cordon_error *err)
{
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
		sv->out[i].fd = p[0];
		t->out_wr[i] = p[1];
		if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	}
	sv->out[0].dest = STDOUT_FILENO;
	sv->out[1].dest = STDERR_FILENO;
	sv->out[0].bytes = &sv->res->stdout_bytes;
	sv->out[1].bytes = &sv->res->stderr_bytes;
	sv->res->output_counted = true;
	return 0;
}

static int exec_supervised(struct exec_sv *sv, struct exec_tree *t, struct cordon_error *err)
{
	int sp[2], status = CORDON_EXIT_FAILURE;
	sigset_t set, pipe_set;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "socketpair");
	sv->sock = sp[0];
	t->reaper_sock = sp[1];
	t->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (t->null_fd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "opening /dev/null");
	if (sv->opts->count_output && open_pipes(sv, t, err) < 0)
		return -1;
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	sv->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sv->epfd < 0 || sv->timerfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll, timerfd");
	/* Blocked from here until the end (sandbox_exec_start leaves them so). */
	sandbox_exec_signals(&set);
	sv->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sv->sigfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "signalfd");
	/*
	 * A reader that went away (`| head`) is an EPIPE, not our end: the
	 * command would go on without its timeout. The process's mask is reset
	 * by its confinement (step_signals).
	 */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, NULL);
	if (sandbox_exec_start(sv->opts, t, &sv->reaper, &status, err) < 0) {
		sv->res->exit_code = status;
		return -1;
	}
	cordon_closep(&t->reaper_sock);
	cordon_closep(&t->out_wr[0]);
	cordon_closep(&t->out_wr[1]);
	/* Our child, not reaped: the pid is its own. */
	sv->reaper_pidfd = cordon_pidfd_open(sv->reaper);
	if (sv->reaper_pidfd < 0) {
		kill(sv->reaper, SIGKILL);
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "the reaper's pidfd");
	}
	if (supervise(sv, err) < 0)
		return -1;
	exec_outcome(sv);
	return 0;
}

int cordon_container_exec_supervised(const struct cordon_exec_opts *opts,
				     struct cordon_result *res)
{
	struct exec_tree t = { .reaper_sock = -1, .null_fd = -1, .out_wr = { -1, -1 } };
	struct exec_sv sv = {
		.opts = opts,
		.res = res,
		.reaper_pidfd = -1,
		.sock = -1,
		.cmd_pidfd = -1,
		.sigfd = -1,
		.timerfd = -1,
		.epfd = -1,
		.out = { { .fd = -1 }, { .fd = -1 } },
	};
	uint64_t t0 = cordon_now_mono_us();
	sigset_t set;

	memset(res, 0, sizeof(*res));
	if (exec_supervised(&sv, &t, &res->error) < 0) {
		res->failed = true;
		if (res->exit_code < CORDON_EXIT_FAILURE)
			res->exit_code = CORDON_EXIT_FAILURE;
		/* Nothing of the command goes on unsupervised. */
		if (sv.reaper > 0 && sv.have_pidns)
			tree_kill(&sv);
	}
	/* The reaper exits at our end's close; what the command left goes to the init. */
	cordon_closep(&sv.sock);
	if (sv.reaper > 0)
		waitpid(sv.reaper, NULL, 0);
	cordon_closep(&t.reaper_sock);
	cordon_closep(&t.null_fd);
	cordon_closep(&t.out_wr[0]);
	cordon_closep(&t.out_wr[1]);
	cordon_closep(&sv.out[0].fd);
	cordon_closep(&sv.out[1].fd);
	cordon_closep(&sv.reaper_pidfd);
	cordon_closep(&sv.cmd_pidfd);
	cordon_closep(&sv.sigfd);
	cordon_closep(&sv.timerfd);
	cordon_closep(&sv.epfd);
	free(sv.termed);
	sandbox_exec_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	res->duration_ms = (cordon_now_mono_us() - t0 + 500) / 1000;
	return res->exit_code;
}
