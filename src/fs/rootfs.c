// SPDX-License-Identifier: Apache-2.0
/* The sandbox root: attach, optional overlay, API filesystems, pivot_root. */
#include <fcntl.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "fs-internal.h"

void cordon_fs_host_init(struct cordon_fs_host *host)
{
	host->rootfs_tree = -1;
	host->rootfs_dir = -1;
	host->workspace_tree = -1;
	host->mount_trees = NULL;
	host->n_mount_trees = 0;
}

void cordon_fs_host_close(struct cordon_fs_host *host)
{
	cordon_closep(&host->rootfs_tree);
	cordon_closep(&host->rootfs_dir);
	cordon_closep(&host->workspace_tree);
	for (size_t i = 0; i < host->n_mount_trees; i++)
		cordon_closep(&host->mount_trees[i]);
	free(host->mount_trees);
	cordon_fs_host_init(host);
}

/*
 * Cover the rootfs directory with a mount of it (the future "/"); returns
 * an fd of that mount's root. The supervisor's clone (rootful) goes onto
 * the directory the init opened; else the init clones the directory
 * itself. Either way the directory is the one checked at validation
 * (cordon_path_reopen), and the mount is made from its fd, never by name.
 */
static int attach_root(const struct cordon_spec *spec, const struct cordon_fs_host *host,
		       struct cordon_error *err)
{
	_cleanup_close_ int dir = -1, tree = -1;
	int root;

	if (host->rootfs_dir >= 0) {
		dir = fcntl(host->rootfs_dir, F_DUPFD_CLOEXEC, 3);
		if (dir < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "rootfs");
	} else {
		dir = cordon_path_reopen(spec->rootfs, &spec->rootfs_id, "rootfs", err);
		if (dir < 0)
			return -1;
	}
	if (host->rootfs_tree >= 0) {
		tree = fcntl(host->rootfs_tree, F_DUPFD_CLOEXEC, 3);
		if (tree < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "rootfs");
	} else {
		/* Recursive: a user namespace may not bind a tree without its locked submounts. */
		tree = cordon_open_tree(dir, "", AT_EMPTY_PATH | OPEN_TREE_CLONE |
							 OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (tree < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "binding rootfs %s",
						spec->rootfs);
	}
	if (cordon_move_mount(tree, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
	    0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "attaching the rootfs %s",
					spec->rootfs);
	/* The clone's fd is the root of the mount now attached. */
	root = TAKE_FD(tree);
	return root;
}

/*
 * A writable layer on a private tmpfs over the rootfs (the mount whose
 * root is *root); gone with the namespace. *root becomes the overlay's.
 */
static int attach_overlay(int *root, const struct cordon_fs_options *opts,
			  struct cordon_error *err)
{
	_cleanup_close_ int fsfd = -1, upper = -1, ovl_fs = -1, ovl = -1;
	char data[CORDON_FD_PATH_MAX * 2 + 32];
	struct stat st;

	if (fstat(*root, &st) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: the rootfs");
	fsfd = cordon_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0 || cordon_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    cordon_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: creating tmpfs");
	upper = cordon_fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (upper < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: mounting tmpfs");
	/* The overlay's root takes the upper dir's mode: copy the rootfs's. */
	if (mkdirat(upper, "upper", st.st_mode & 07777) < 0 || mkdirat(upper, "work", 0700) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: upper layer");
	if (fchmodat(upper, "upper", st.st_mode & 07777, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: upper layer mode");
	/*
	 * Linux before 6.15 takes an overlay's layers only from mounts of the
	 * caller's mount namespace (clone_private_mount: EINVAL for the
	 * detached tmpfs). Attach it for the moment, over the rootfs: the lower
	 * layer is named by its fd, which a mount on top does not hide. Once
	 * the overlay holds its own copy of it, it is detached again.
	 */
	if (cordon_move_mount(upper, "", *root, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
	    0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: attaching tmpfs");
	/* fd paths keep user-chosen characters (',' ':') out of the options. */
	ovl_fs = cordon_fsopen("overlay", FSOPEN_CLOEXEC);
	snprintf(data, sizeof(data), "/proc/self/fd/%d", *root);
	if (ovl_fs < 0 || cordon_fsconfig(ovl_fs, FSCONFIG_SET_STRING, "lowerdir", data, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: lower layer");
	snprintf(data, sizeof(data), "/proc/self/fd/%d/upper", upper);
	if (cordon_fsconfig(ovl_fs, FSCONFIG_SET_STRING, "upperdir", data, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: upper layer");
	snprintf(data, sizeof(data), "/proc/self/fd/%d/work", upper);
	if (cordon_fsconfig(ovl_fs, FSCONFIG_SET_STRING, "workdir", data, 0) < 0 ||
	    (opts->in_userns && cordon_fsconfig(ovl_fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0) ||
	    cordon_fsconfig(ovl_fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: creating the overlay");
	ovl = cordon_fsmount(ovl_fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (ovl < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: mounting the overlay");
	snprintf(data, sizeof(data), "/proc/self/fd/%d", upper);
	if (umount2(data, MNT_DETACH) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: detaching tmpfs");
	if (cordon_move_mount(ovl, "", *root, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
	    0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "--overlay: attaching the overlay");
	close(*root);
	*root = TAKE_FD(ovl);
	return 0;
}

static int enter_root(int root, struct cordon_error *err)
{
	/*
	 * pivot_root(".", ".") stacks the old root on top of the new one;
	 * detaching "." then drops the whole host tree from this namespace
	 * without needing a directory for it inside the rootfs.
	 */
	if (fchdir(root) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "entering the new root");
	if (cordon_pivot_root(".", ".") < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "detaching the old root");
	if (chdir("/") < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "chdir /");
	return 0;
}

int cordon_fs_build(const struct cordon_spec *spec, const struct cordon_fs_host *host,
		    const struct cordon_fs_options *opts, struct cordon_error *err)
{
	_cleanup_close_ int root = -1;
	unsigned long long root_attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	/* Nothing mounted from here on may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "making / a slave mount");
	root = attach_root(spec, host, err);
	if (root < 0)
		return -1;
	if (spec->overlay && attach_overlay(&root, opts, err) < 0)
		return -1;

	/*
	 * proc first: it must be mounted while the host's proc is still
	 * visible. A config.json's mounts come after cordon's own (one may lie
	 * in /dev); a config gets no /tmp or /dev/shm but its own; the gateway's
	 * resolv.conf after them, so that the config's cannot hide it; masked
	 * and read-only paths last, as they may lie on any mount.
	 */
	if (fs_setup_proc(root, spec->oci, err) < 0 ||
	    fs_setup_dev(root, spec->oci, opts, err) < 0 ||
	    (!spec->oci && fs_setup_tmp(root, spec->tmpfs_size_mb, err) < 0) ||
	    fs_setup_binds(root, spec, host, err) < 0 ||
	    fs_setup_oci_mounts(root, spec->oci, host, opts, err) < 0 ||
	    fs_setup_devices(root, spec->oci, host, err) < 0 ||
	    (opts->resolv_conf && fs_setup_resolv(root, opts->resolv_conf, err) < 0) ||
	    fs_setup_oci_paths(root, spec->oci, err) < 0)
		return -1;
	/*
	 * A config's process.cwd that the image lacks is made, as runc and
	 * crun do: through the mounts above (it may lie on one), inside the
	 * root, before the root is made read-only. The process still enters
	 * it itself, as its user, with the checks of sandbox_enter_cwd.
	 */
	if (spec->oci && spec->cwd && fs_mkdir_in_root(root, spec->cwd, err) < 0)
		return cordon_error_wrap(err, "process.cwd %s", spec->cwd);

	/*
	 * Read-only last: mount points were created above through this very
	 * mount. Only the root mount itself: /tmp, /dev and rw binds stay rw.
	 * nodev holds for the rootfs in every mode: a device node in an
	 * untrusted image must not be usable. So does nosuid, but for a
	 * config whose process.noNewPrivileges is false: its image's setuid
	 * programs (su, sudo) are meant to work, as with runc; what they gain
	 * is capabilities of the container's own user namespace, within its
	 * bounding set. A bundle whose root.readonly is false gets its rootfs
	 * writable, as runc does.
	 */
	if (spec->oci && spec->security.new_privs_allowed)
		root_attrs &= ~(unsigned long long)MOUNT_ATTR_NOSUID;
	if (!spec->overlay && (!spec->oci || spec->oci->root_readonly))
		root_attrs |= MOUNT_ATTR_RDONLY;
	if (fs_setattr(root, root_attrs, "rootfs", err) < 0)
		return -1;
	return TAKE_FD(root);
}

int cordon_fs_enter(int root, struct cordon_error *err)
{
	return enter_root(root, err);
}
