// SPDX-License-Identifier: Apache-2.0
/* Safe resolution of paths inside the new root, and mounting onto fds. */
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "fs-internal.h"

static int open_in_root(int root, const char *path, int flags, bool strict)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
			   (strict ? RESOLVE_NO_SYMLINKS : 0),
	};

	/* openat2 wants a relative path under RESOLVE_IN_ROOT semantics anyway. */
	while (*path == '/')
		path++;
	return cordon_openat2(root, *path ? path : ".", &how, sizeof(how));
}

static int describe_open_error(int e, const char *path, struct cordon_error *err)
{
	if (e == ELOOP)
		return cordon_error_set(err, CORDON_E_ROOTFS, 0,
					"rootfs %s is a symlink; refusing to mount over it", path);
	if (e == ENOTDIR)
		return cordon_error_set(err, CORDON_E_ROOTFS, 0,
					"rootfs %s: a path component is not a directory", path);
	return cordon_error_set(err, CORDON_E_ROOTFS, e, "rootfs %s", path);
}

/* Split "/a/b/c" into its parent "/a/b" and base "c" (parent "/" at the top). */
static char *split_parent(const char *path, const char **base)
{
	const char *last = strrchr(path, '/');

	if (!last) {
		*base = path;
		return cordon_xstrdup("/");
	}
	*base = last + 1;
	return last == path ? cordon_xstrdup("/") : strndup(path, (size_t)(last - path));
}

/* Open parent directory of path inside root, creating missing ones (mkdir -p). */
static int open_parent(int root, const char *path, bool strict, const char **base,
		       struct cordon_error *err)
{
	_cleanup_free_ char *dir = split_parent(path, base);
	int fd;

	if (!dir)
		return cordon_error_set(err, CORDON_E_INTERNAL, ENOMEM, "resolving %s", path);
	fd = open_in_root(root, dir, O_PATH | O_DIRECTORY, strict);
	if (fd >= 0 || errno != ENOENT) {
		if (fd < 0)
			return describe_open_error(errno, dir, err);
		return fd;
	}
	{
		const char *dbase;
		_cleanup_close_ int grand = open_parent(root, dir, strict, &dbase, err);

		if (grand < 0)
			return -1;
		/* An O_PATH fd is a valid dirfd for mkdirat. */
		if (mkdirat(grand, dbase, 0755) < 0 && errno != EEXIST)
			return cordon_error_set(err, CORDON_E_ROOTFS, errno,
						"creating mount point %s", dir);
	}
	fd = open_in_root(root, dir, O_PATH | O_DIRECTORY, strict);
	if (fd < 0)
		return describe_open_error(errno, dir, err);
	return fd;
}

/*
 * The path a dangling symlink at parent/base leads to, inside the root:
 * an absolute target is the root's, a relative one starts at the link's
 * directory (dir). NULL when base is no symlink.
 */
static char *link_target_path(int parent, const char *base, const char *path)
{
	_cleanup_free_ char *dir = NULL;
	const char *ignored;
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstatat(parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
		return NULL;
	n = readlinkat(parent, base, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	if (target[0] == '/')
		return cordon_xstrdup(target);
	dir = split_parent(path, &ignored);
	return dir ? cordon_xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, target) : NULL;
}

/* Is fd on a procfs (the sandbox's /proc, reached through a symlink or not)? */
static bool on_procfs(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && (unsigned long)sfs.f_type == PROC_SUPER_MAGIC;
}

/*
 * A symlink at a mount point is followed (inside root, so it cannot lead
 * out): images often have /etc/resolv.conf or /etc/hosts as a link into
 * /run. A dangling one is not created through, unless depth is 0 or more
 * (a config's mounts): what it names is then made inside the root, as
 * runc and crun do (at most 40 links deep). Never under strict, which
 * follows no symlink at all.
 */
static int mountpoint_at(int root, const char *path, enum mountpoint_kind kind, bool strict,
			 int depth, struct cordon_error *err)
{
	int flags = O_PATH | (kind == MOUNTPOINT_DIR ? O_DIRECTORY : 0);
	_cleanup_close_ int parent = -1;
	const char *base;
	struct stat st;
	int fd;

	fd = open_in_root(root, path, flags, strict);
	if (fd < 0 && errno != ENOENT)
		return describe_open_error(errno, path, err);
	if (fd < 0) {
		parent = open_parent(root, path, strict, &base, err);
		if (parent < 0)
			return -1;
		if (!strict && depth >= 0) {
			_cleanup_free_ char *next = link_target_path(parent, base, path);

			if (next && depth >= 40)
				return describe_open_error(ELOOP, path, err);
			if (next)
				return mountpoint_at(root, next, kind, strict, depth + 1, err);
		}
		if (kind == MOUNTPOINT_DIR) {
			if (mkdirat(parent, base, 0755) < 0 && errno != EEXIST)
				return cordon_error_set(err, CORDON_E_ROOTFS, errno,
							"creating mount point %s", path);
		} else {
			_cleanup_close_ int f = openat(parent, base,
						       O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW |
							       O_CLOEXEC,
						       0644);

			if (f < 0 && errno != EEXIST)
				return cordon_error_set(err, CORDON_E_ROOTFS, errno,
							"creating mount point %s", path);
		}
		fd = open_in_root(root, path, flags, strict);
		if (fd < 0)
			return describe_open_error(errno, path, err);
	}
	if (kind == MOUNTPOINT_FILE && (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))) {
		close(fd);
		return cordon_error_set(err, CORDON_E_PATH, 0,
					"mount point %s is a directory, the source is not", path);
	}
	/*
	 * Never a mount over procfs: a target the image's symlinks lead into
	 * /proc (/etc/x -> /proc/self) would cover what the kernel shows
	 * there (an attr, a sysctl, a mountinfo) with what the config gives.
	 * The proc mount itself is made on the root's /proc directory.
	 */
	if (on_procfs(fd)) {
		close(fd);
		return cordon_error_set(err, CORDON_E_MOUNT, 0,
					"mount point %s resolves into /proc (procfs): refused",
					path);
	}
	return fd;
}

int fs_mountpoint(int root, const char *path, enum mountpoint_kind kind, bool strict,
		  struct cordon_error *err)
{
	return mountpoint_at(root, path, kind, strict, -1, err);
}

int fs_mountpoint_through(int root, const char *path, enum mountpoint_kind kind,
			  struct cordon_error *err)
{
	return mountpoint_at(root, path, kind, false, 0, err);
}

int fs_mkdir_in_root(int root, const char *path, struct cordon_error *err)
{
	_cleanup_close_ int fd = open_in_root(root, path, O_PATH | O_DIRECTORY, false);
	_cleanup_close_ int parent = -1;
	const char *base;

	if (fd >= 0)
		return 0;
	if (errno != ENOENT)
		return describe_open_error(errno, path, err);
	parent = open_parent(root, path, false, &base, err);
	if (parent < 0)
		return -1;
	if (mkdirat(parent, base, 0755) < 0 && errno != EEXIST)
		return cordon_error_set(err, CORDON_E_ROOTFS, errno, "creating %s", path);
	return 0;
}

int fs_open_existing(int root, const char *path, struct cordon_error *err)
{
	int fd = open_in_root(root, path, O_PATH, false);

	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return -2;
	if (fd < 0)
		return describe_open_error(errno, path, err);
	return fd;
}

int fs_reopen(int root, const char *path, struct cordon_error *err)
{
	int fd = open_in_root(root, path, O_PATH, true);

	if (fd < 0)
		return describe_open_error(errno, path, err);
	return fd;
}

int fs_mount_at(const char *source, int target, const char *fstype, unsigned long flags,
		const char *data, const char *what, struct cordon_error *err)
{
	char buf[CORDON_FD_PATH_MAX];

	if (mount(source, cordon_fd_path(target, buf), fstype, flags, data) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "mounting %s", what);
	return 0;
}

int fs_move_tree(int tree, int target, const char *what, struct cordon_error *err)
{
	if (cordon_move_mount(tree, "", target, "",
			      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "attaching %s", what);
	return 0;
}

static int setattr_flags(int mount_root, unsigned long long set, unsigned flags, const char *what,
			 struct cordon_error *err)
{
	struct mount_attr attr = { .attr_set = set };

	if (cordon_mount_setattr(mount_root, "", AT_EMPTY_PATH | flags, &attr, sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "setting attributes of %s",
					what);
	return 0;
}

int fs_setattr(int mount_root, unsigned long long set, const char *what,
	       struct cordon_error *err)
{
	return setattr_flags(mount_root, set, 0, what, err);
}

int fs_setattr_recursive(int mount_root, unsigned long long set, const char *what,
			 struct cordon_error *err)
{
	return setattr_flags(mount_root, set, AT_RECURSIVE, what, err);
}
