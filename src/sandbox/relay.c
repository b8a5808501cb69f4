// SPDX-License-Identifier: Apache-2.0
/*
 * The caller's terminal, on the supervisor's side. It never enters the
 * sandbox: a terminal is a device the workload could write escape
 * sequences to past --output-max, change the modes of, or (where the
 * kernel allows TIOCSTI) type into.
 *
 * Without -t, a stdout or stderr that is a terminal becomes a pipe whose
 * output the supervisor passes on (run.c, forward_output), and a stdin
 * that is one becomes a pipe the supervisor fills from it. With -t the
 * sandbox has a pty of its own, made by the init in its devpts and sent
 * back over a socketpair (its console socket): the supervisor puts the
 * caller's terminal in raw mode, passes keystrokes to the master and
 * the master's output to stdout, and gives the master the caller's
 * window size, at the start and at each SIGWINCH. The caller's modes
 * are restored on every way out (and around a stop).
 *
 * Input is read only while we are in the terminal's foreground process
 * group: in the background a read would stop us (SIGTTIN) or fail, and
 * the keystrokes are the shell's. Relaying pauses there and resumes at
 * SIGCONT (fg or bg of a stopped job) or when a look every 100 ms finds
 * us in the foreground (fg of a running job sends no signal). Reads
 * never block the event loop: the terminal is opened again, non-blocking, for our own
 * reads (the caller's open file is shared with its shell, and must stay
 * blocking); where that open is refused (a terminal another user owns),
 * a read asks for no more than FIONREAD says is there.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>

#include "sandbox-internal.h"

/* How often a paused relay asks whether it is in the foreground again. */
#define RELAY_RECHECK_MS 100

void relay_init(struct relay *r)
{
	memset(r, 0, sizeof(*r));
	r->in = r->to = r->master = r->console = r->epfd = -1;
}

/*
 * Our own open file of the terminal at fd 0, non-blocking; or fd 0 itself.
 * Never for a pty master: opening its path makes a new pty.
 */
static void open_input(struct relay *r)
{
	struct stat a, b;
	int ptn, fd;

	r->in = STDIN_FILENO;
	if (ioctl(STDIN_FILENO, TIOCGPTN, &ptn) == 0)
		return;
	fd = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(STDIN_FILENO, &a) < 0 || fstat(fd, &b) < 0 || a.st_rdev != b.st_rdev ||
	    !isatty(fd)) {
		close(fd);
		return;
	}
	r->in = fd;
}

int relay_stdin_open(struct relay *r, int *sandbox_end, struct cordon_error *err)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
		close(p[0]);
		close(p[1]);
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	}
	open_input(r);
	r->to = p[1];
	*sandbox_end = p[0];
	return 0;
}

int relay_console_open(struct relay *r, int *init_end, struct cordon_error *err)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "socketpair");
	r->console = sp[0];
	*init_end = sp[1];
	return 0;
}

static void watch(struct relay *r, int *fd, uint32_t events, bool *on, bool want)
{
	struct epoll_event ev = { .events = events, .data.ptr = fd };

	if (*fd < 0 || r->epfd < 0 || *on == want)
		return;
	if (epoll_ctl(r->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, *fd, &ev) == 0)
		*on = want;
}

/* Watch what there is to watch now: input when the buffer is empty, output when it is not. */
static void rewatch(struct relay *r)
{
	bool input = r->to >= 0 && r->len == 0 && !r->paused && !r->in_done;

	watch(r, &r->in, EPOLLIN, &r->watching_in, input);
	watch(r, &r->to, EPOLLOUT, &r->watching_to, r->to >= 0 && r->len > 0);
}

void relay_attach(struct relay *r, int epfd)
{
	r->epfd = epfd;
	rewatch(r);
}

static void end_input(struct relay *r)
{
	watch(r, &r->in, EPOLLIN, &r->watching_in, false);
	watch(r, &r->to, EPOLLOUT, &r->watching_to, false);
	cordon_closep(&r->to);
	r->len = r->off = 0;
}

/* The terminal's foreground group is ours (or it is not our controlling terminal). */
static bool in_foreground(int fd)
{
	pid_t pg = tcgetpgrp(fd);

	return pg < 0 ? errno == ENOTTY : pg == getpgrp();
}

static void flush_out(struct relay *r)
{
	while (r->len > r->off) {
		ssize_t w = write(r->to, r->buf + r->off, r->len - r->off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0) {
			/* The sandbox closed its stdin, or is gone. */
			r->in_done = true;
			end_input(r);
			return;
		}
		r->off += (size_t)w;
	}
	if (r->off == r->len)
		r->len = r->off = 0;
	rewatch(r);
}

void relay_input(struct relay *r)
{
	size_t want = sizeof(r->buf);
	ssize_t n;
	int avail;

	if (r->to < 0 || r->len)
		return;
	if (!in_foreground(r->in)) {
		r->paused = true;
		rewatch(r);
		return;
	}
	/* A blocking fd 0: never ask for more than is there (nothing: an EOF is pending). */
	if (r->in == STDIN_FILENO && ioctl(r->in, FIONREAD, &avail) == 0) {
		if (avail <= 0)
			want = 1;
		else if ((size_t)avail < want)
			want = (size_t)avail;
	}
	n = read(r->in, r->buf, want);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n < 0 && errno == EIO) {
		/* In the background after all (SIGTTIN is blocked), or hung up. */
		r->paused = true;
		rewatch(r);
		return;
	}
	if (n <= 0) {
		/* End of input (^D): the sandbox reads its end. A pty gets no EOF this way. */
		r->in_done = true;
		if (r->master < 0)
			end_input(r);
		else
			rewatch(r);
		return;
	}
	r->len = (size_t)n;
	r->off = 0;
	flush_out(r);
}

void relay_output_ready(struct relay *r)
{
	flush_out(r);
}

static int set_raw(struct relay *r)
{
	struct termios raw = r->saved;

	cfmakeraw(&raw);
	/* In the background this stops us (SIGTTOU) until fg: till then the terminal is the
	 * shell's. */
	while (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
		if (errno != EINTR)
			return -1;
	r->raw = true;
	return 0;
}

void relay_winch(struct relay *r)
{
	struct winsize ws;

	if (r->master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(r->master, TIOCSWINSZ, &ws);
}

/* The master the init sent over the console socket (SCM_RIGHTS, as to a --console-socket). */
static int recv_master(int sock, struct cordon_error *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	char name[64];
	struct iovec iov = { .iov_base = name, .iov_len = sizeof(name) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *c;
	struct stat st;
	int fd = -1, ptn;
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	/* More than the one fd we asked for: the kernel dropped the rest, refuse. */
	if (fd >= 0 && (mh.msg_flags & MSG_CTRUNC)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, n < 0 ? errno : 0,
					"-t: the sandbox's terminal did not arrive");
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 ||
	    ioctl(fd, TIOCGPTN, &ptn) < 0) {
		close(fd);
		return cordon_error_set(err, CORDON_E_INTERNAL, 0,
					"-t: what the sandbox sent is not a pty master");
	}
	return fd;
}

int relay_pty_start(struct relay *r, int *out_fd, struct cordon_error *err)
{
	int master = recv_master(r->console, err);

	cordon_closep(&r->console);
	if (master < 0)
		return -1;
	r->master = master;
	relay_winch(r);
	if (fcntl(master, F_SETFL, O_RDWR | O_NONBLOCK) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "-t: the pty");
	/* One file, two fds: epoll watches each direction under its own. */
	r->to = fcntl(master, F_DUPFD_CLOEXEC, 3);
	if (r->to < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "-t: the pty");
	*out_fd = master;
	open_input(r);
	if (tcgetattr(STDIN_FILENO, &r->saved) < 0 || set_raw(r) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"-t: putting the terminal in raw mode");
	rewatch(r);
	return 0;
}

static void relay_restore(struct relay *r)
{
	if (!r->raw)
		return;
	while (tcsetattr(STDIN_FILENO, TCSADRAIN, &r->saved) < 0 && errno == EINTR)
		;
	r->raw = false;
}

void relay_suspend(struct relay *r)
{
	r->was_raw = r->raw;
	relay_restore(r);
}

void relay_resume(struct relay *r)
{
	if (r->was_raw && !r->raw)
		set_raw(r);
	r->was_raw = false;
	if (r->master >= 0)
		relay_winch(r);
	r->paused = false;
	rewatch(r);
}

int relay_timeout_ms(const struct relay *r, int timeout)
{
	/* fg of a job that was never stopped sends no SIGCONT: look again now and then. */
	if (!r->paused || r->to < 0)
		return timeout;
	return timeout < 0 || timeout > RELAY_RECHECK_MS ? RELAY_RECHECK_MS : timeout;
}

void relay_tick(struct relay *r)
{
	if (r->paused && r->to >= 0 && in_foreground(r->in)) {
		r->paused = false;
		rewatch(r);
	}
}

void relay_close(struct relay *r)
{
	relay_restore(r);
	if (r->in != STDIN_FILENO)
		cordon_closep(&r->in);
	r->in = -1;
	cordon_closep(&r->to);
	cordon_closep(&r->console);
	/* The master itself is the output fd's (struct output), closed with it. */
	r->master = -1;
}
