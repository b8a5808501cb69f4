/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fs: the sandbox's filesystem. The supervisor prepares what needs host
 * privileges (idmapped mounts, rootful only); the sandbox's init process
 * builds the tree inside its own mount namespace and pivots into it.
 *
 * Every path inside the rootfs is resolved with openat2(RESOLVE_IN_ROOT),
 * and mounts are made onto those fds, so a symlink in a hostile rootfs
 * can never point a mount at the host.
 */
#ifndef CORDON_FS_H
#define CORDON_FS_H

#include <stdbool.h>

#include "cordon/core.h"
#include "cordon/spec.h"

/* Detached mounts made by the supervisor, moved into place by the child. */
struct cordon_fs_host {
	int rootfs_tree;    /* idmapped clone of the rootfs, or -1 */
	/*
	 * The rootfs directory, opened by the init while it still had the
	 * host's root ids (before it becomes the sandbox's root): the mount
	 * target for rootfs_tree, reachable even below directories only the
	 * host's root may enter (an engine's 0700 storage). -1: the init
	 * re-opens it itself (cordon_path_reopen, the directory checked).
	 */
	int rootfs_dir;
	int workspace_tree; /* idmapped clone of the workspace, or -1 */
	/*
	 * config.json mounts with a host source (bind sources, the host's
	 * /sys for a sysfs entry), cloned by cordon_fs_open_sources: one per
	 * entry of spec->oci->mounts, -1 where there is none; then, rootful,
	 * one per entry of spec->oci->devices, the node the supervisor made
	 * (cordon_fs_device_node).
	 */
	int *mount_trees;
	size_t n_mount_trees;
};

struct cordon_fs_options {
	bool tty_gid_mapped; /* gid 5 exists in the sandbox: devpts gets gid=5 */
	bool in_userns;      /* setup runs in a user namespace (overlay: userxattr) */
	const char *resolv_conf; /* bound read-only over /etc/resolv.conf, or NULL */
	bool ipc_joined;         /* the IPC namespace is a joined one: no mqueue mount */
};

/* /proc paths (relative) hidden and made read-only in every sandbox. */
extern const char *const cordon_fs_masked_paths[];
extern const char *const cordon_fs_readonly_paths[];

/*
 * False when path is on a filesystem that cannot be idmapped (an
 * overlay, fuse, network filesystems): the supervisor's idmapped clone
 * would fall back to a plain one, whose files the sandbox's ids do not own.
 */
bool cordon_fs_idmappable(const char *path, const struct cordon_path_id *id);

/*
 * Supervisor side, host root only: a detached clone of an OCI bind mount's
 * source, idmapped through the mount's own uidMappings/gidMappings or
 * else the sandbox's user namespace (sandbox_userns). Returns the tree's
 * fd, or -1.
 */
int cordon_fs_idmapped_mount(const struct cordon_oci_mount *m, int sandbox_userns,
			     struct cordon_error *err);

/*
 * Supervisor side, host root only, entered in the sandbox's mount
 * namespace: a detached clone of an OCI bind mount's source (the object
 * checked at validation). Returns the tree's fd, or -1.
 */
int cordon_fs_bind_source(const struct cordon_oci_mount *m, struct cordon_error *err);

/*
 * Supervisor side, host root only: the node of a linux.devices entry
 * (c, b or u), owned by host_uid:host_gid, with its fileMode (0666 when
 * none), as a detached read-only, nosuid, noexec bind of it. Returns the
 * tree's fd, or -1.
 */
int cordon_fs_device_node(const struct cordon_oci_device *d, uid_t host_uid, gid_t host_gid,
			  struct cordon_error *err);

void cordon_fs_host_init(struct cordon_fs_host *host);
void cordon_fs_host_close(struct cordon_fs_host *host);

/*
 * Supervisor side, rootful only: clone the rootfs (and the workspace) as
 * detached mounts idmapped to the sandbox's user namespace, so files keep
 * their owners inside (root's files are the sandbox root's) and files
 * the workload writes to the workspace belong to the directory's owner.
 * userns_fd is the sandbox's user namespace; ws_userns_fd maps the
 * workspace owner to the workload (or -1 to skip the workspace).
 * A filesystem that cannot be idmapped falls back to a plain bind.
 */
int cordon_fs_prepare_host(const struct cordon_spec *spec, int userns_fd, int ws_userns_fd,
			   struct cordon_fs_host *host, struct cordon_error *err);

/*
 * Init side, in the new mount namespace while it still has the host's
 * ids (rootful: before it becomes the sandbox's root), so that a source
 * below a directory only the host's root may enter (an engine's 0700
 * storage) is reachable; rootless, what the caller can read. Clones the
 * host sources of config.json's mounts as detached trees into
 * host->mount_trees. A source that cannot be cloned is a CORDON_E_MOUNT
 * error naming "mounts[N] DESTINATION". Nothing to do without spec->oci.
 */
/* host->mount_trees for n mounts, all -1, unless it exists already. */
void cordon_fs_host_mount_trees(struct cordon_fs_host *host, size_t n);
int cordon_fs_open_sources(const struct cordon_spec *spec, struct cordon_fs_host *host,
			   struct cordon_error *err);

/*
 * Child side, inside the new mount namespace with full capabilities over
 * it: build the root, API filesystems, workspace and binds, config.json's
 * mounts, masked and read-only paths, and make the root read-only (unless
 * --overlay or a config.json's root.readonly false). Returns an O_PATH fd of the new root
 * (the caller closes it), or -1. The host's tree is still visible.
 */
int cordon_fs_build(const struct cordon_spec *spec, const struct cordon_fs_host *host,
		    const struct cordon_fs_options *opts, struct cordon_error *err);
/*
 * pivot_root into what cordon_fs_build returned and detach the host's
 * tree. On return every process of the mount namespace whose root and
 * cwd were the old root has the sandbox's "/" as both.
 */
int cordon_fs_enter(int root, struct cordon_error *err);

#endif
