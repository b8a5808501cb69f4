// SPDX-License-Identifier: Apache-2.0
/*
 * Raw syscalls. glibc 2.36 (Debian 12) has no clone3 or openat2 wrapper,
 * and its <sys/mount.h> clashes with <linux/mount.h>, so the mount API is
 * called directly too.
 */
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "cordon/core.h"

pid_t cordon_clone3(struct clone_args *args, size_t size)
{
	return (pid_t)syscall(SYS_clone3, args, size);
}

/*
 * Under RESOLVE_IN_ROOT or RESOLVE_BENEATH the kernel fails a walk through
 * ".." with EAGAIN when any rename or mount anywhere on the host happened
 * during it, since it can then not prove the walk stayed inside; it asks
 * the caller to try again. On a busy host (other sandboxes starting) that
 * is common, so try again a few times; where something renames all the
 * time, every try can fail: then the same walk is done one name at a time
 * (src/core/scoped.c), which hands the kernel no "..", for an open that
 * reads only (it checks where it ended after the open).
 */
#define OPENAT2_TRIES 16

int cordon_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	bool scoped = how->resolve & (RESOLVE_IN_ROOT | RESOLVE_BENEATH);
	int fd, tries = 0;

	do
		fd = (int)syscall(SYS_openat2, dirfd, path, how, size);
	while (fd < 0 && errno == EAGAIN && scoped && !(how->resolve & RESOLVE_CACHED) &&
	       ++tries < OPENAT2_TRIES);
	if (fd < 0 && errno == EAGAIN && scoped && !(how->resolve & RESOLVE_CACHED) &&
	    (how->flags & O_ACCMODE) == O_RDONLY &&
	    !(how->flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY))))
		fd = cordon_openat2_walk(dirfd, path, how);
	return fd;
}

int cordon_open_tree(int dirfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dirfd, path, flags);
}

int cordon_move_mount(int from_dirfd, const char *from_path, int to_dirfd,
		      const char *to_path, unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

int cordon_mount_setattr(int dirfd, const char *path, unsigned int flags,
			 struct mount_attr *attr, size_t size)
{
	return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, size);
}

int cordon_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

int cordon_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int cordon_fsopen(const char *fsname, unsigned int flags)
{
	return (int)syscall(SYS_fsopen, fsname, flags);
}

int cordon_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

int cordon_fsmount(int fd, unsigned int flags, unsigned int attr_flags)
{
	return (int)syscall(SYS_fsmount, fd, flags, attr_flags);
}

const char *cordon_fd_path(int fd, char buf[CORDON_FD_PATH_MAX])
{
	snprintf(buf, CORDON_FD_PATH_MAX, "/proc/self/fd/%d", fd);
	return buf;
}

int cordon_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}
