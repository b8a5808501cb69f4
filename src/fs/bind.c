// SPDX-License-Identifier: Apache-2.0
/* /workspace and --bind mounts, and the supervisor's idmapped trees. */
#include <fcntl.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/stat.h>

#include "cordon/userns.h"
#include "fs-internal.h"

/*
 * A detached clone of a host path with everything mounted below it: in a
 * user namespace the kernel refuses a non-recursive bind of a tree whose
 * submounts are locked (that would uncover what they hide). The path is
 * opened again the safe way and must be the object checked at validation
 * (the fd of that check belongs to another mount namespace here, or the
 * init closed it); the clone is made from that fd, never by name.
 */
static int clone_checked(const char *path, const struct cordon_path_id *id, bool recursive,
			 const char *what, struct cordon_error *err)
{
	_cleanup_close_ int fd = cordon_path_reopen(path, id, what, err);
	int tree;

	if (fd < 0)
		return -1;
	tree = cordon_open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
						(recursive ? AT_RECURSIVE : 0));
	/* A bind of a tree with locked submounts (user namespace) takes them along. */
	if (tree < 0 && errno == EINVAL && !recursive)
		tree = cordon_open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE |
							OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s %s", what, path);
	return tree;
}

int cordon_fs_bind_source(const struct cordon_oci_mount *m, struct cordon_error *err)
{
	return clone_checked(m->source, &m->source_id, m->recursive, "source", err);
}

int fs_clone_checked(const char *path, const struct cordon_path_id *id, bool recursive,
		     const char *what, struct cordon_error *err)
{
	return clone_checked(path, id, recursive, what, err);
}

static int clone_tree(const char *path, const struct cordon_path_id *id, const char *what,
		      struct cordon_error *err)
{
	return clone_checked(path, id, true, what, err);
}

static int bind_one(int root, const char *source, const struct cordon_path_id *id,
		    const char *destination, bool writable, int prepared,
		    struct cordon_error *err)
{
	_cleanup_close_ int tree = prepared, target = -1;
	unsigned long long attrs = MOUNT_ATTR_NOSUID;

	/* Device nodes keep working only when the user bound them by name. */
	if (!S_ISCHR(id->mode) && !S_ISBLK(id->mode))
		attrs |= MOUNT_ATTR_NODEV;
	if (!writable)
		attrs |= MOUNT_ATTR_RDONLY;
	target = fs_mountpoint(root, destination, S_ISDIR(id->mode) ? MOUNTPOINT_DIR
								   : MOUNTPOINT_FILE,
			       false, err);
	if (target < 0)
		return cordon_error_wrap(err, "bind %s:%s", source, destination);
	if (tree < 0) {
		tree = clone_tree(source, id, "bind", err);
		if (tree < 0)
			return -1;
	}
	if (fs_setattr_recursive(tree, attrs, destination, err) < 0 ||
	    fs_move_tree(tree, target, destination, err) < 0)
		return -1;
	return 0;
}

int fs_setup_binds(int root, const struct cordon_spec *spec, const struct cordon_fs_host *host,
		   struct cordon_error *err)
{
	if (spec->workspace) {
		int prepared = host->workspace_tree >= 0 ? dup(host->workspace_tree) : -1;

		if (bind_one(root, spec->workspace, &spec->workspace_id, "/workspace", true,
			     prepared, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < spec->n_binds; i++) {
		const struct cordon_bind *b = &spec->binds[i];

		if (bind_one(root, b->source, &b->source_id, b->destination, b->writable, -1,
			     err) < 0)
			return -1;
	}
	return 0;
}

bool cordon_fs_idmappable(const char *path, const struct cordon_path_id *id)
{
	/* The filesystems engines keep container roots on that cannot be idmapped (6.x). */
	static const unsigned long no_idmap[] = {
		0x794c7630, /* overlayfs: podman's, containerd's and buildah's overlay storage */
		0x65735546, /* fuse (fuse-overlayfs) */
		0x6969,	    /* nfs */
		0xfe534d42, /* smb2 */
		0xff534d42, /* cifs */
		0x01021997, /* 9p */
	};
	struct cordon_error ignored;
	_cleanup_close_ int fd = cordon_path_reopen(path, id, "rootfs", &ignored);
	struct statfs st;

	/*
	 * Asked of the directory checked: a name swapped meanwhile would
	 * otherwise choose the id plan. Unknown: idmappable (cordon's own
	 * range), and the mount's own re-open then fails closed.
	 */
	if (fd < 0 || fstatfs(fd, &st) < 0)
		return true; /* as before: tried, with the plain clone as fallback */
	for (size_t i = 0; i < ARRAY_SIZE(no_idmap); i++)
		if ((unsigned long)st.f_type == no_idmap[i])
			return false;
	return true;
}

/* The name of a filesystem that cannot be idmapped on some kernels, for messages. */
static const char *fs_name(unsigned long type)
{
	switch (type) {
	case 0x01021994:
		return "tmpfs (idmapped since Linux 6.3)";
	case 0x794c7630:
		return "overlayfs";
	case 0x65735546:
		return "fuse";
	case 0x6969:
		return "nfs";
	case 0xfe534d42:
	case 0xff534d42:
		return "smb";
	case 0x01021997:
		return "9p";
	default:
		return NULL;
	}
}

/*
 * Clone path and idmap the clone through userns_fd. Where the filesystem
 * cannot be idmapped, the rootfs gets the plain clone (PLAIN_OK: it is
 * read-only and its files show as nobody inside, which reading and running
 * them does not need); the workspace fails closed, since its point is that
 * what the workload writes there belongs to the directory's owner, and a
 * plain bind would make it unwritable or give the files the sandbox's ids.
 */
static int idmapped_tree(const char *path, const struct cordon_path_id *id, int userns_fd,
			 const char *what, bool plain_ok, struct cordon_error *err)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_IDMAP,
		.userns_fd = (uint64_t)userns_fd,
	};
	_cleanup_close_ int tree = clone_tree(path, id, what, err);
	struct statfs st;
	const char *name;

	if (tree < 0)
		return -2;
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0) {
		int e = errno;

		/*
		 * EINVAL: this filesystem cannot be idmapped (NFS, tmpfs before
		 * 6.3, an overlay on some kernels): hand over the plain clone.
		 * Made here, by the host's root, it also reaches trees the
		 * sandbox's root could not enter (an engine's 0700 storage
		 * directories).
		 */
		if ((e == EINVAL || e == EOPNOTSUPP) && plain_ok)
			return TAKE_FD(tree);
		if (e != EINVAL && e != EOPNOTSUPP)
			return cordon_error_set(err, CORDON_E_MOUNT, e, "idmapping %s %s", what,
						path),
			       -2;
		name = fstatfs(tree, &st) == 0 ? fs_name((unsigned long)st.f_type) : NULL;
		return cordon_error_set(
			       err, CORDON_E_MOUNT, e,
			       "%s %s: this kernel cannot idmap its filesystem%s%s%s (or one "
			       "mounted below it), so files the workload writes there would "
			       "not be the directory owner's; use a directory on another "
			       "filesystem, or --no-workspace",
			       what, path, name ? " (" : "", name ? name : "", name ? ")" : ""),
		       -2;
	}
	return TAKE_FD(tree);
}

int cordon_fs_idmapped_mount(const struct cordon_oci_mount *m, int sandbox_userns,
			     struct cordon_error *err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	_cleanup_close_ int own = -1, tree = -1;

	/* The mount's own maps (a user namespace made for them), else the sandbox's. */
	if (m->n_uid_map) {
		struct cordon_idmap u = { .n = m->n_uid_map }, g = { .n = m->n_gid_map };

		if (m->n_uid_map > CORDON_IDMAP_MAX_EXTENTS || m->n_gid_map > CORDON_IDMAP_MAX_EXTENTS)
			return cordon_error_set(err, CORDON_E_MOUNT, 0, "at most %d ranges",
						CORDON_IDMAP_MAX_EXTENTS);
		for (size_t i = 0; i < m->n_uid_map; i++)
			u.extent[i] = (struct cordon_idmap_extent){ m->uid_map[i].container_id,
								    m->uid_map[i].host_id,
								    m->uid_map[i].size };
		for (size_t i = 0; i < m->n_gid_map; i++)
			g.extent[i] = (struct cordon_idmap_extent){ m->gid_map[i].container_id,
								    m->gid_map[i].host_id,
								    m->gid_map[i].size };
		own = cordon_userns_open(&u, &g, err);
		if (own < 0)
			return -1;
	}
	attr.userns_fd = (uint64_t)(own >= 0 ? own : sandbox_userns);
	tree = clone_checked(m->source, &m->source_id, m->recursive, "source", err);
	if (tree < 0)
		return -1;
	/* Asked for, so no fallback: a filesystem that cannot be idmapped fails. */
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH | (m->idmap_recursive ? AT_RECURSIVE : 0),
				 &attr, sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "idmapping %s", m->source);
	return TAKE_FD(tree);
}

int cordon_fs_prepare_host(const struct cordon_spec *spec, int userns_fd, int ws_userns_fd,
			   struct cordon_fs_host *host, struct cordon_error *err)
{
	int fd;

	/* The launcher's own id maps: its rootfs is owned by them already. */
	if (spec->oci && spec->oci->n_uid_map && cordon_host_root()) {
		fd = clone_tree(spec->rootfs, &spec->rootfs_id, "rootfs", err);
		if (fd < 0)
			return -1;
		host->rootfs_tree = fd;
	} else if (userns_fd >= 0) {
		fd = idmapped_tree(spec->rootfs, &spec->rootfs_id, userns_fd, "rootfs", true, err);
		if (fd == -2)
			return -1;
		host->rootfs_tree = fd;
	}
	if (spec->workspace && ws_userns_fd >= 0) {
		fd = idmapped_tree(spec->workspace, &spec->workspace_id, ws_userns_fd,
				   "--workspace", false, err);
		if (fd == -2)
			return -1;
		host->workspace_tree = fd;
	}
	return 0;
}
