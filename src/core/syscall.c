// SPDX-License-Identifier: Apache-2.0
/*
 * Raw syscalls. glibc 2.36 (Debian 12) has no clone3 or openat2 wrapper,
 * and its <sys/mount.h> clashes with <linux/mount.h>, so the mount API is
 * called directly too.
 */
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include "cordon/core.h"

pid_t cordon_clone3(struct clone_args *args, size_t size)
{
	return (pid_t)syscall(SYS_clone3, args, size);
}

int cordon_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	return (int)syscall(SYS_openat2, dirfd, path, how, size);
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
