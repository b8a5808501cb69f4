// SPDX-License-Identifier: Apache-2.0
/* The sync socket: fixed-size messages, optionally carrying fds. */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox-internal.h"

#define SYNC_MAX_FDS SYNC_NET_FDS /* the most any message carries */

const int sandbox_forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
const size_t sandbox_n_forwarded_signals = ARRAY_SIZE(sandbox_forwarded_signals);

void sandbox_relay_terminal_signal(pid_t pid, int sig, bool stop_as_sigstop)
{
	if (sig == SIGTSTP && stop_as_sigstop)
		sig = SIGSTOP;
	if (kill(-pid, sig) < 0 && errno == ESRCH)
		kill(pid, sig);
}

void sandbox_stop_self(void)
{
	sigset_t tstp, old;

	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, &old);
	/* Delivered before kill returns: we stop here until SIGCONT. */
	kill(getpid(), SIGTSTP);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

int sync_send(int fd, const struct sync_msg *msg, const int *fds, size_t n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SYNC_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t w;

	if (n_fds > SYNC_MAX_FDS)
		return -EINVAL;
	if (n_fds) {
		struct cmsghdr *c;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	do
		w = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == sizeof(*msg) ? 0 : -EIO;
}

static ssize_t recv_with(int fd, struct sync_msg *msg, int *fds, size_t *n_fds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SYNC_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	size_t got = 0;
	ssize_t r;

	do
		r = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && n_fds && got < *n_fds)
				fds[got++] = f;
			else
				close(f);
		}
	}
	if (n_fds)
		*n_fds = got;
	if (r == 0)
		return 0;
	if ((size_t)r != sizeof(*msg))
		return -EPROTO;
	msg->text[sizeof(msg->text) - 1] = '\0';
	return r;
}

ssize_t sync_recv(int fd, struct sync_msg *msg, int *fds, size_t *n_fds)
{
	return recv_with(fd, msg, fds, n_fds, 0);
}

ssize_t sync_recv_nowait(int fd, struct sync_msg *msg, int *fds, size_t *n_fds)
{
	return recv_with(fd, msg, fds, n_fds, MSG_DONTWAIT);
}
