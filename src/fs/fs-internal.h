/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the files of src/fs/; not part of the public API. */
#ifndef CORDON_FS_INTERNAL_H
#define CORDON_FS_INTERNAL_H

#include "cordon/fs.h"

enum mountpoint_kind {
	MOUNTPOINT_DIR,
	MOUNTPOINT_FILE,
};

/*
 * Open path (absolute, inside root) as an O_PATH fd, creating it (and its
 * parents, as directories) when missing. Resolution never leaves root;
 * with strict, any symlink on the way is refused (used for the API
 * filesystems: a rootfs whose /proc is a symlink is refused, not followed).
 */
int fs_mountpoint(int root, const char *path, enum mountpoint_kind kind, bool strict,
		  struct cordon_error *err);
/* The same for a config's mount: a dangling symlink is created through, inside root. */
int fs_mountpoint_through(int root, const char *path, enum mountpoint_kind kind,
			  struct cordon_error *err);

/*
 * A directory at path (absolute, inside root, symlinks followed inside
 * it), made with its missing parents (0755) where there is none. 0 or -1.
 */
int fs_mkdir_in_root(int root, const char *path, struct cordon_error *err);

/*
 * Open path (absolute, inside root, symlinks followed inside it) as an
 * O_PATH fd; -2 (no error) when it does not exist, -1 on error.
 */
int fs_open_existing(int root, const char *path, struct cordon_error *err);

/* linux.devices: host nodes bound at their paths, FIFOs made (api.c). */
int fs_setup_devices(int root, const struct cordon_oci *oci, const struct cordon_fs_host *host,
		     struct cordon_error *err);

/* Reopen a mountpoint after something was mounted on it (its new root). */
int fs_reopen(int root, const char *path, struct cordon_error *err);

/* mount(2) onto an fd target, through /proc/self/fd. */
int fs_mount_at(const char *source, int target, const char *fstype, unsigned long flags,
		const char *data, const char *what, struct cordon_error *err);

/* Attach a detached mount (open_tree/fsmount) on an fd target. */
int fs_move_tree(int tree, int target, const char *what, struct cordon_error *err);
/*
 * A detached clone (recursive or not) of a host path that must still be
 * the object ID checked at validation; made from the fd, never by name.
 */
int fs_clone_checked(const char *path, const struct cordon_path_id *id, bool recursive,
		     const char *what, struct cordon_error *err);

/* Set attributes (MOUNT_ATTR_*) on the mount whose root fd is given. */
int fs_setattr(int mount_root, unsigned long long set, const char *what,
	       struct cordon_error *err);
/* The same on the mount and every mount below it. */
int fs_setattr_recursive(int mount_root, unsigned long long set, const char *what,
			 struct cordon_error *err);

/*
 * Hide target (what names it in errors): a directory behind an empty
 * read-only tmpfs, anything else behind /dev/null.
 */
int fs_mask(int target, const char *what, struct cordon_error *err);
/* Make target and everything mounted below it read-only (a bind onto itself). */
int fs_make_readonly(int target, const char *what, struct cordon_error *err);

/*
 * cordon's own /proc and /dev. With a config (oci), each mount takes the
 * source of the config's entry at its place, and /dev has shm and mqueue
 * only where the config lists them.
 */
int fs_setup_proc(int root, const struct cordon_oci *oci, struct cordon_error *err);
int fs_setup_dev(int root, const struct cordon_oci *oci, const struct cordon_fs_options *opts,
		 struct cordon_error *err);
/* A config's /dev/pts or /dev/mqueue at destination, cordon's own mounts there; else nothing. */
int fs_setup_oci_dev(int root, const struct cordon_oci *oci, const char *destination,
		     const struct cordon_fs_options *opts, struct cordon_error *err);
int fs_setup_tmp(int root, uint64_t size_mb, struct cordon_error *err);
int fs_setup_resolv(int root, const char *content, struct cordon_error *err);
/* mounts.c: config.json's mounts, in order (cordon_fs_open_sources made the host's trees). */
int fs_setup_oci_mounts(int root, const struct cordon_oci *oci, const struct cordon_fs_host *host,
			const struct cordon_fs_options *opts, struct cordon_error *err);
/* A config.json mount at destination. */
bool fs_oci_mounts_at(const struct cordon_oci *oci, const char *destination);
/* The source of the config's (last) entry at destination, else dflt. */
const char *fs_oci_source(const struct cordon_oci *oci, const char *destination,
			  const char *dflt);
/* paths.c: linux.maskedPaths and linux.readonlyPaths. */
int fs_setup_oci_paths(int root, const struct cordon_oci *oci, struct cordon_error *err);
int fs_setup_binds(int root, const struct cordon_spec *spec, const struct cordon_fs_host *host,
		   struct cordon_error *err);

#endif
