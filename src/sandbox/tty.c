// SPDX-License-Identifier: Apache-2.0
/*
 * Terminals (process.terminal, `cordon exec --tty`): a pty of the
 * container's own devpts instance, its master handed to the caller over
 * --console-socket (SCM_RIGHTS, as runc does), its slave the process's
 * stdio and controlling terminal.
 *
 * The pty is made inside the container's mount namespace, after the
 * pivot: a pts of the host's devpts would name a host device in the
 * container (and count against the host's pty limit), and the container
 * could not reopen it through its own /dev/pts.
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>

#include "sandbox-internal.h"

/* What runc writes next to the fd: the master's name. Receivers ignore it. */
#define CONSOLE_NAME "/dev/ptmx"

int sandbox_pty_open(const struct cordon_spec *spec, int *master_out, int *slave_out,
		     struct cordon_error *err)
{
	/*
	 * /dev/ptmx is a symlink in a directory the container's root may
	 * write to: open pts/ptmx itself, no symlink followed, non-blocking
	 * (a fifo planted there must not hang us), and check it is the ptmx
	 * of a devpts before using it. /dev/pts is a mount point the
	 * container cannot move or cover (it holds no CAP_SYS_ADMIN over
	 * the mount namespace).
	 */
	struct open_how how = {
		.flags = O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int master = -1;
	struct statfs sfs;
	struct stat st;
	int unlock = 0, slave;

	master = cordon_openat2(AT_FDCWD, "/dev/pts/ptmx", &how, sizeof(how));
	if (master < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"terminal: opening the container's /dev/pts/ptmx");
	if (fstatfs(master, &sfs) < 0 || sfs.f_type != DEVPTS_SUPER_MAGIC ||
	    fstat(master, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 ||
	    minor(st.st_rdev) != 2)
		return cordon_error_set(err, CORDON_E_SECURITY, 0,
					"terminal: /dev/pts/ptmx is not a devpts ptmx");
	if (fcntl(master, F_SETFL, O_RDWR) < 0 || ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"terminal: unlocking the pty");
	/* The peer by fd, never by a /dev/pts/N path the container could race. */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"terminal: opening the pty's peer");
	if (spec->oci && spec->oci->has_console_size) {
		struct winsize ws = { .ws_row = spec->oci->console_height,
				      .ws_col = spec->oci->console_width };

		if (ioctl(slave, TIOCSWINSZ, &ws) < 0) {
			close(slave);
			return cordon_error_set(err, CORDON_E_INTERNAL, errno,
						"terminal: consoleSize");
		}
	}
	*slave_out = slave;
	*master_out = TAKE_FD(master);
	return 0;
}

int sandbox_pty_send(int console_fd, int master, struct cordon_error *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	char name[] = CONSOLE_NAME;
	struct iovec iov = { .iov_base = name, .iov_len = sizeof(name) - 1 };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *c;
	ssize_t w;

	memset(&control, 0, sizeof(control));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &master, sizeof(int));
	do
		w = sendmsg(console_fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno,
					"--console-socket: sending the terminal");
	return 0;
}

int sandbox_pty_attach(int slave, struct cordon_error *err)
{
	/* The caller's session is its own (setsid): the pty becomes its controlling terminal. */
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"terminal: making it the controlling terminal");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno,
						"terminal: as stdio");
	if (slave > 2)
		close(slave);
	return 0;
}

int cordon_console_connect(const char *path, struct cordon_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cordon_error_set(err, CORDON_E_PATH, ENAMETOOLONG, "--console-socket %s",
					path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "--console-socket %s", path);
	return TAKE_FD(fd);
}

/*
 * process.terminal: a pty of the container's devpts (we are inside its
 * root now), the slave owned by the workload's user, the master sent to
 * the console socket and closed here. The slave stays with us until the
 * release hands it to the workload.
 */
int sandbox_terminal_create(const struct child_ctx *ctx, int *slave, struct cordon_error *err)
{
	int master, r;

	if (sandbox_pty_open(ctx->spec, &master, slave, err) < 0)
		return -1;
	if (fchown(*slave, ctx->spec->uid, (gid_t)-1) < 0) {
		close(master);
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"terminal: giving the pty to uid %u", ctx->spec->uid);
	}
	r = sandbox_pty_send(ctx->console_fd, master, err);
	close(master);
	close(ctx->console_fd);
	return r;
}
