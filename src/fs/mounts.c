// SPDX-License-Identifier: Apache-2.0
/*
 * config.json "mounts" (docs/oci.md, "Mounts"). The init clones the host
 * sources first, while it still has the host's ids
 * (cordon_fs_open_sources); fs_setup_oci_mounts then applies the entries
 * in the order listed, after cordon's own API filesystems. Each becomes a
 * detached mount (a clone of its source, or a new filesystem from
 * fsopen), gets its attributes while detached, and is attached onto its
 * destination opened with openat2(RESOLVE_IN_ROOT): a symlink in the
 * rootfs cannot point it at the host, and a destination below an earlier
 * entry (a bind below a tmpfs at /run) resolves through that mount.
 */
#include <fcntl.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "fs-internal.h"

/* The failure of entry i, whatever step it came from, is a mount error naming it. */
static int mount_failed(struct cordon_error *err, size_t i, const struct cordon_oci_mount *m)
{
	err->code = CORDON_E_MOUNT;
	return cordon_error_wrap(err, "mounts[%zu] %s", i, m->destination);
}

/* A detached clone of a host path, or -1 (errno set). */
static int clone_source(const char *path, bool recursive)
{
	unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
	int tree = cordon_open_tree(AT_FDCWD, path, flags | (recursive ? AT_RECURSIVE : 0));

	/*
	 * In a user namespace the kernel refuses a plain bind of a tree with
	 * mounts below it: they are locked, and the bind would uncover what
	 * they hide. Such a bind takes them along, as rbind would.
	 */
	if (tree < 0 && errno == EINVAL && !recursive)
		tree = cordon_open_tree(AT_FDCWD, path, flags | AT_RECURSIVE);
	return tree;
}

void cordon_fs_host_mount_trees(struct cordon_fs_host *host, size_t n)
{
	if (host->mount_trees)
		return;
	host->mount_trees = cordon_xcalloc(n ? n : 1, sizeof(*host->mount_trees));
	host->n_mount_trees = n;
	for (size_t i = 0; i < n; i++)
		host->mount_trees[i] = -1;
}

int cordon_fs_open_sources(const struct cordon_spec *spec, struct cordon_fs_host *host,
			   struct cordon_error *err)
{
	const struct cordon_oci *oci = spec->oci;

	if (!oci || !oci->n_mounts)
		return 0;
	cordon_fs_host_mount_trees(host, oci->n_mounts);
	for (size_t i = 0; i < oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &oci->mounts[i];
		const char *source;
		bool recursive;

		/* Provided by cordon, or made by the supervisor already (idmapped). */
		if (cordon_oci_mount_provided(m) || host->mount_trees[i] >= 0)
			continue;
		/* A joined IPC namespace is not the sandbox's to mount (fs_setup_dev). */
		if (m->kind == CORDON_OCI_MOUNT_MQUEUE && oci->ns_path[CORDON_OCI_NS_IPC])
			continue;
		if (m->kind == CORDON_OCI_MOUNT_BIND) {
			/* The source checked at validation, and no other object. */
			host->mount_trees[i] = fs_clone_checked(m->source, &m->source_id,
								m->recursive, "source", err);
			if (host->mount_trees[i] < 0)
				return cordon_error_wrap(err, "mounts[%zu] %s", i, m->destination);
			continue;
		} else if (m->kind == CORDON_OCI_MOUNT_SYSFS) {
			/*
			 * A new sysfs needs the network namespace to be ours, and the
			 * init's is the host's (or the gateway's, never the workload's):
			 * the host's /sys, read-only, as runc and crun do in a user
			 * namespace.
			 */
			source = "/sys";
			recursive = true;
		} else {
			continue;
		}
		host->mount_trees[i] = clone_source(source, recursive);
		if (host->mount_trees[i] < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno,
						"mounts[%zu] %s: source %s", i, m->destination,
						source);
	}
	return 0;
}

/*
 * The attributes the options set (MOUNT_ATTR_*). Only what they set: an
 * option that clears one (rw, exec) leaves the source mount's own, which
 * in a user namespace could not be cleared anyway when the host locked it.
 */
static struct mount_attr option_attrs(const struct cordon_oci_mount *m)
{
	static const struct {
		unsigned long ms;
		unsigned long long attr;
	} map[] = {
		{ MS_RDONLY, MOUNT_ATTR_RDONLY },	  { MS_NOSUID, MOUNT_ATTR_NOSUID },
		{ MS_NODEV, MOUNT_ATTR_NODEV },		  { MS_NOEXEC, MOUNT_ATTR_NOEXEC },
		{ MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
	};
	struct mount_attr attr = { 0 };

	for (size_t k = 0; k < ARRAY_SIZE(map); k++)
		if (m->flags & map[k].ms)
			attr.attr_set |= map[k].attr;
	return attr;
}

/* The atime setting the options name (one of three), or none: attr_clr 0. */
static struct mount_attr atime_attrs(const struct cordon_oci_mount *m)
{
	struct mount_attr attr = { 0 };

	if (m->flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME)) {
		attr.attr_clr = MOUNT_ATTR__ATIME;
		if (m->flags & MS_NOATIME)
			attr.attr_set = MOUNT_ATTR_NOATIME;
		else if (m->flags & MS_STRICTATIME)
			attr.attr_set = MOUNT_ATTR_STRICTATIME;
		else
			attr.attr_set = MOUNT_ATTR_RELATIME;
	}
	return attr;
}

/* option_attrs of a bind: nodiratime goes with the atime options (set_bind_atime). */
static struct mount_attr bind_attrs(const struct cordon_oci_mount *m)
{
	struct mount_attr attr = option_attrs(m);

	attr.attr_set &= ~(unsigned long long)MOUNT_ATTR_NODIRATIME;
	return attr;
}

static int setattr(int tree, struct mount_attr attr, bool recursive, struct cordon_error *err)
{
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
				 sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "setting mount attributes");
	return 0;
}

/*
 * A copy of a tree cloned early (a bind's source while the init had the
 * host's ids, the host's /sys), made now: a mount's place in mountinfo is
 * its creation (Linux 6.8 and later list a namespace's mounts in that
 * order), and the config's order is the one to show. Kernels that cannot
 * clone a detached tree (before 6.15) list mounts in attach order anyway:
 * the tree itself is used there, as is a tree the supervisor made.
 */
static int fresh_copy(int tree)
{
	int copy = cordon_open_tree(tree, "",
				    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);

	return copy >= 0 ? copy : -1;
}

/* Attach a detached mount onto the destination, then give it its propagation. */
static int attach(int root, int tree, const struct cordon_oci_mount *m, enum mountpoint_kind kind,
		  struct cordon_error *err)
{
	_cleanup_close_ int target = fs_mountpoint_through(root, m->destination, kind, err);
	struct mount_attr attr = { .propagation = m->propagation & ~(unsigned long)MS_REC };

	if (target < 0 || fs_move_tree(tree, target, "the mount", err) < 0)
		return -1;
	/* Attached first: the tree's fd is now the root of the mount in place. */
	if (m->propagation &&
	    cordon_mount_setattr(tree, "",
				 AT_EMPTY_PATH | (m->propagation & MS_REC ? AT_RECURSIVE : 0),
				 &attr, sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "setting its propagation");
	return 0;
}

/*
 * The atime setting of a bind: the kernel locks a host mount's (made in
 * the host's namespace) against a less privileged one, and refuses any
 * other setting there (EPERM); the source's own setting stays then, as
 * it would under runc in a user namespace.
 */
static int set_bind_atime(int tree, const struct cordon_oci_mount *m, struct cordon_error *err)
{
	struct mount_attr attr = atime_attrs(m);

	/* nodiratime is of the same lock (MNT_ATIME_MASK). */
	if (m->flags & MS_NODIRATIME)
		attr.attr_set |= MOUNT_ATTR_NODIRATIME;
	if (!attr.attr_set && !attr.attr_clr)
		return 0;
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 &&
	    errno != EPERM)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "setting its atime option");
	return 0;
}

/*
 * bind, rbind: a fresh copy of the source's clone. nodev over the whole
 * tree unless the source is a device node or the options say dev (no
 * device cgroup may be there to stop a host device node in a bound
 * directory; docs/oci.md); nosuid, as every other attribute, where the
 * options say so, on its top mount (as a bind remount does), rro on all
 * of it.
 */
static int apply_bind(int root, const struct cordon_oci_mount *m, int early,
		      struct cordon_error *err)
{
	struct mount_attr policy = { 0 };
	_cleanup_close_ int copy = -1;
	int tree = early;
	struct stat st;

	if (tree < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, 0, "its source was not opened");
	if (fstat(tree, &st) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "source %s", m->source);
	copy = fresh_copy(tree);
	if (copy >= 0)
		tree = copy;
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode) && !(m->clear & MS_NODEV))
		policy.attr_set |= MOUNT_ATTR_NODEV;
	if (setattr(tree, policy, true, err) < 0 || setattr(tree, bind_attrs(m), false, err) < 0 ||
	    set_bind_atime(tree, m, err) < 0)
		return -1;
	if (m->recursive_ro &&
	    setattr(tree, (struct mount_attr){ .attr_set = MOUNT_ATTR_RDONLY }, true, err) < 0)
		return -1;
	return attach(root, tree, m, S_ISDIR(st.st_mode) ? MOUNTPOINT_DIR : MOUNTPOINT_FILE, err);
}

/* sysfs: the host's /sys, read-only all through, whatever the options say of rw. */
static int apply_sysfs(int root, const struct cordon_oci_mount *m, int early,
		       struct cordon_error *err)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					     MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
	_cleanup_close_ int copy = -1;
	int tree = early;

	if (tree < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, 0,
					"the host's /sys was not opened");
	copy = fresh_copy(tree);
	if (copy >= 0)
		tree = copy;
	if (setattr(tree, ro, true, err) < 0 || setattr(tree, bind_attrs(m), false, err) < 0 ||
	    set_bind_atime(tree, m, err) < 0)
		return -1;
	return attach(root, tree, m, MOUNTPOINT_DIR, err);
}

/* The filesystem options (validated by the parser: "key" or "key=value", comma-separated). */
static int configure_data(int fsfd, const char *data, struct cordon_error *err)
{
	_cleanup_free_ char *copy = data ? cordon_xstrdup(data) : NULL;
	char *save = NULL;

	for (char *opt = copy ? strtok_r(copy, ",", &save) : NULL; opt;
	     opt = strtok_r(NULL, ",", &save)) {
		char *value = strchr(opt, '=');
		int r;

		if (value)
			*value++ = '\0';
		r = value ? cordon_fsconfig(fsfd, FSCONFIG_SET_STRING, opt, value, 0) :
			    cordon_fsconfig(fsfd, FSCONFIG_SET_FLAG, opt, NULL, 0);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "option %s%s%s", opt,
						value ? "=" : "", value ? value : "");
	}
	return 0;
}

/* The superblock flags among the options, which a new filesystem takes as flags. */
static int configure_sb_flags(int fsfd, unsigned long flags, struct cordon_error *err)
{
	static const struct {
		unsigned long ms;
		const char *name;
	} map[] = { { MS_SYNCHRONOUS, "sync" },
		    { MS_DIRSYNC, "dirsync" },
		    { MS_LAZYTIME, "lazytime" } };

	for (size_t k = 0; k < ARRAY_SIZE(map); k++)
		if ((flags & map[k].ms) &&
		    cordon_fsconfig(fsfd, FSCONFIG_SET_FLAG, map[k].name, NULL, 0) < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "option %s",
						map[k].name);
	return 0;
}

/*
 * tmpfs, mqueue, cgroup: a new filesystem of this sandbox (the IPC and
 * cgroup namespaces are the sandbox's own), with the entry's source as
 * its name in mountinfo and the options' attributes, as mount(2) would
 * give them (a filesystem made in a user namespace never honours device
 * nodes, dev or not). "cgroup" is mounted as cgroup2, rooted at the
 * sandbox's cgroup.
 */
static int apply_new_fs(int root, const struct cordon_oci_mount *m, const char *fstype,
			struct cordon_error *err)
{
	_cleanup_close_ int fsfd = cordon_fsopen(fstype, FSOPEN_CLOEXEC), tree = -1;
	struct mount_attr attr = option_attrs(m), atime = atime_attrs(m);

	if (fsfd < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "opening a new %s", fstype);
	if (m->source && *m->source &&
	    cordon_fsconfig(fsfd, FSCONFIG_SET_STRING, "source", m->source, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s: source %s", fstype,
					m->source);
	if (configure_data(fsfd, m->data, err) < 0 || configure_sb_flags(fsfd, m->flags, err) < 0)
		return cordon_error_wrap(err, "%s", fstype);
	if (cordon_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "creating the %s", fstype);
	tree = cordon_fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned int)(attr.attr_set | atime.attr_set));
	if (tree < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "mounting the %s", fstype);
	return attach(root, tree, m, MOUNTPOINT_DIR, err);
}

static int apply_one(int root, const struct cordon_oci_mount *m, int tree, struct cordon_error *err)
{
	switch (m->kind) {
	case CORDON_OCI_MOUNT_BIND:
		return apply_bind(root, m, tree, err);
	case CORDON_OCI_MOUNT_SYSFS:
		return apply_sysfs(root, m, tree, err);
	case CORDON_OCI_MOUNT_TMPFS:
		return apply_new_fs(root, m, "tmpfs", err);
	case CORDON_OCI_MOUNT_MQUEUE:
		return apply_new_fs(root, m, "mqueue", err);
	case CORDON_OCI_MOUNT_CGROUP:
		return apply_new_fs(root, m, "cgroup2", err);
	case CORDON_OCI_MOUNT_PROC:
	case CORDON_OCI_MOUNT_DEVPTS:
		break;
	}
	/* The parser accepts these at /proc and /dev/pts only, which are cordon's. */
	return cordon_error_set(err, CORDON_E_INTERNAL, 0, "type %s is not mounted here",
				m->type ? m->type : "?");
}

int fs_setup_oci_mounts(int root, const struct cordon_oci *oci, const struct cordon_fs_host *host,
			const struct cordon_fs_options *opts, struct cordon_error *err)
{
	bool done_pts = false, done_mqueue = false;

	for (size_t i = 0; oci && i < oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &oci->mounts[i];
		int tree = i < host->n_mount_trees ? host->mount_trees[i] : -1;

		/* cordon's own, in the config's place (the first entry there; /proc and /dev came first). */
		if (cordon_oci_mount_provided(m)) {
			bool *done = strcmp(m->destination, "/dev/pts") == 0	   ? &done_pts
				     : strcmp(m->destination, "/dev/mqueue") == 0 ? &done_mqueue
										  : NULL;

			if (done && !*done && fs_setup_oci_dev(root, oci, m->destination, opts, err) < 0)
				return mount_failed(err, i, m);
			if (done)
				*done = true;
			continue;
		}
		if (apply_one(root, m, tree, err) < 0)
			return mount_failed(err, i, m);
	}
	return 0;
}

const char *fs_oci_source(const struct cordon_oci *oci, const char *destination,
			  const char *dflt)
{
	const char *source = dflt;

	for (size_t i = 0; oci && i < oci->n_mounts; i++)
		if (strcmp(oci->mounts[i].destination, destination) == 0 && oci->mounts[i].source &&
		    *oci->mounts[i].source)
			source = oci->mounts[i].source;
	return source;
}

bool fs_oci_mounts_at(const struct cordon_oci *oci, const char *destination)
{
	for (size_t i = 0; oci && i < oci->n_mounts; i++)
		if (strcmp(oci->mounts[i].destination, destination) == 0)
			return true;
	return false;
}
