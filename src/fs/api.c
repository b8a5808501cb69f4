// SPDX-License-Identifier: Apache-2.0
/* The API filesystems of a sandbox: a fresh /proc, a minimal /dev, /tmp. */
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fs-internal.h"

/* The only host devices a sandbox sees (bind mounts: mknod needs init-ns caps). */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

static const struct {
	const char *target;
	const char *name;
} dev_links[] = {
	{ "/proc/self/fd", "fd" },
	{ "/proc/self/fd/0", "stdin" },
	{ "/proc/self/fd/1", "stdout" },
	{ "/proc/self/fd/2", "stderr" },
	{ "pts/ptmx", "ptmx" },
};

/* The OCI defaults: hidden (files behind /dev/null, directories behind an empty tmpfs)... */
const char *const cordon_fs_masked_paths[] = {
	"acpi", "asound", "kcore", "keys", "latency_stats", "sched_debug",
	"scsi", "timer_list", "timer_stats", NULL,
};
/* ...and read-only. */
const char *const cordon_fs_readonly_paths[] = { "bus", "fs", "irq", "sys", "sysrq-trigger", NULL };

static int open_in_proc(int proc, const char *name, int flags)
{
	/* Fresh procfs, but never follow a link while masking it. */
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};

	return cordon_openat2(proc, name, &how, sizeof(how));
}

int fs_mask(int target, const char *what, struct cordon_error *err)
{
	struct stat st;

	if (fstat(target, &st) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "masking %s", what);
	if (S_ISDIR(st.st_mode))
		return fs_mount_at("tmpfs", target, "tmpfs",
				   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0555",
				   what, err);
	/* The host's null, still visible: the init has not pivoted yet. */
	return fs_mount_at("/dev/null", target, NULL, MS_BIND, NULL, what, err);
}

int fs_make_readonly(int target, const char *what, struct cordon_error *err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int tree = cordon_open_tree(
		target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);

	if (tree < 0 ||
	    cordon_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "making %s read-only", what);
	return fs_move_tree(tree, target, what, err);
}

static int proc_mask(int proc, const char *name, struct cordon_error *err)
{
	_cleanup_close_ int target = open_in_proc(proc, name, O_PATH);
	char what[64];

	snprintf(what, sizeof(what), "/proc/%s", name);
	if (target < 0) {
		if (errno == ENOENT)
			return 0; /* not on this kernel */
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "masking %s", what);
	}
	return fs_mask(target, what, err);
}

static int proc_readonly(int proc, const char *name, struct cordon_error *err)
{
	_cleanup_close_ int target = open_in_proc(proc, name, O_PATH);
	char what[64];

	snprintf(what, sizeof(what), "/proc/%s", name);
	if (target < 0)
		return errno == ENOENT ? 0 :
					 cordon_error_set(err, CORDON_E_MOUNT, errno,
							  "making %s read-only", what);
	return fs_make_readonly(target, what, err);
}

int fs_setup_proc(int root, const struct cordon_oci *oci, struct cordon_error *err)
{
	_cleanup_close_ int target = fs_mountpoint(root, "/proc", MOUNTPOINT_DIR, true, err);
	_cleanup_close_ int proc = -1;

	if (target < 0)
		return -1;
	/*
	 * Mounted before the old root is detached: the kernel lets a user
	 * namespace mount proc only while a fully visible proc exists in its
	 * mount namespace.
	 */
	if (fs_mount_at(fs_oci_source(oci, "/proc", "proc"), target, "proc",
			MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, "/proc", err) < 0)
		return -1;
	proc = fs_reopen(root, "/proc", err);
	if (proc < 0)
		return -1;
	for (size_t i = 0; cordon_fs_masked_paths[i]; i++)
		if (proc_mask(proc, cordon_fs_masked_paths[i], err) < 0)
			return -1;
	for (size_t i = 0; cordon_fs_readonly_paths[i]; i++)
		if (proc_readonly(proc, cordon_fs_readonly_paths[i], err) < 0)
			return -1;
	return 0;
}

/*
 * Bind the host's device node at host onto target: the node checked (a
 * device, and want's type and number when given) is the one bound, by
 * fd. Read-only, nosuid, noexec: reading and writing the device are not
 * touched, but its inode on the host is, and the sandbox's root may own
 * it (the identity id map): no chmod or chown through the bind.
 */
static int bind_device(const char *host, int target, const struct cordon_oci_device *want,
		       const char *what, struct cordon_error *err)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
	};
	_cleanup_close_ int node = open(host, O_PATH | O_CLOEXEC), tree = -1;
	struct stat st;

	if (node < 0 || fstat(node, &st) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s: the host's node", what);
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return cordon_error_set(err, CORDON_E_MOUNT, 0, "%s: the host's %s is not a device",
					what, host);
	if (want && ((want->type == 'b') != !!S_ISBLK(st.st_mode) ||
		     (int64_t)major(st.st_rdev) != want->major ||
		     (int64_t)minor(st.st_rdev) != want->minor))
		return cordon_error_set(err, CORDON_E_MOUNT, 0,
					"%s: the host's %s is not %c %" PRId64 ":%" PRId64
					" (a device is bound from the host, never made)",
					what, host, want->type, want->major, want->minor);
	tree = cordon_open_tree(node, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0 || cordon_mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 ||
	    cordon_move_mount(tree, "", target, "",
			      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s: binding the host's %s",
					what, host);
	return 0;
}

static int dev_bind_node(int dev, const char *name, struct cordon_error *err)
{
	_cleanup_close_ int f = openat(dev, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
	char host[32];

	if (f < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "creating /dev/%s", name);
	snprintf(host, sizeof(host), "/dev/%s", name);
	return bind_device(host, f, NULL, host, err);
}

static int dev_mount_sub(int dev, const char *name, mode_t mode, const char *source,
			 const char *fstype, unsigned long flags, const char *data,
			 struct cordon_error *err)
{
	_cleanup_close_ int target = -1;
	char what[32];

	snprintf(what, sizeof(what), "/dev/%s", name);
	if (mkdirat(dev, name, mode) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "creating %s", what);
	target = openat(dev, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (target < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "opening %s", what);
	return fs_mount_at(source, target, fstype, flags, data, what, err);
}

/* The sandbox's /dev (its tmpfs, once mounted), as a directory fd. */
static int open_dev_dir(int root, struct cordon_error *err)
{
	_cleanup_close_ int reopened = fs_reopen(root, "/dev", err);
	char buf[CORDON_FD_PATH_MAX];
	int dev;

	if (reopened < 0)
		return -1;
	dev = open(cordon_fd_path(reopened, buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dev < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "opening /dev");
	return dev;
}

static int mount_devpts(int dev, const struct cordon_oci *oci, const struct cordon_fs_options *opts,
			struct cordon_error *err)
{
	return dev_mount_sub(dev, "pts", 0755, fs_oci_source(oci, "/dev/pts", "devpts"), "devpts",
			     MS_NOSUID | MS_NOEXEC,
			     opts->tty_gid_mapped ? "newinstance,ptmxmode=0666,mode=0620,gid=5"
						  : "newinstance,ptmxmode=0666,mode=0620",
			     err);
}

/*
 * POSIX queues of the sandbox's IPC namespace. One joined by path (a
 * pod's) belongs to another user namespace: mounting its queues needs a
 * privilege the sandbox does not have, so /dev/mqueue stays empty.
 */
static int mount_mqueue(int dev, const struct cordon_oci *oci, const struct cordon_fs_options *opts,
			struct cordon_error *err)
{
	if (opts->ipc_joined)
		return 0;
	return dev_mount_sub(dev, "mqueue", 0755, fs_oci_source(oci, "/dev/mqueue", "mqueue"),
			     "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, err);
}

int fs_setup_dev(int root, const struct cordon_oci *oci, const struct cordon_fs_options *opts,
		 struct cordon_error *err)
{
	_cleanup_close_ int target = fs_mountpoint(root, "/dev", MOUNTPOINT_DIR, true, err);
	_cleanup_close_ int dev = -1;

	if (target < 0)
		return -1;
	if (fs_mount_at(fs_oci_source(oci, "/dev", "tmpfs"), target, "tmpfs", MS_NOSUID | MS_NOEXEC,
			"mode=755,size=64k", "/dev", err) < 0)
		return -1;
	/* target still names the covered directory; open the new tmpfs. */
	dev = open_dev_dir(root, err);
	if (dev < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(dev_nodes); i++)
		if (dev_bind_node(dev, dev_nodes[i], err) < 0)
			return -1;
	/*
	 * A config's /dev/pts and /dev/mqueue are mounted at their place in
	 * its order (fs_setup_oci_dev), its /dev/shm as any of its entries;
	 * /dev/ptmx is a default device of every container, so /dev/pts is
	 * there even when a config leaves it out.
	 */
	if ((!oci || !fs_oci_mounts_at(oci, "/dev/pts")) && mount_devpts(dev, oci, opts, err) < 0)
		return -1;
	if (!oci && (dev_mount_sub(dev, "shm", 01777, "tmpfs", "tmpfs",
				   MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=65536k", err) < 0 ||
		     mount_mqueue(dev, oci, opts, err) < 0))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
		if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0)
			return cordon_error_set(err, CORDON_E_MOUNT, errno, "creating /dev/%s",
						dev_links[i].name);
	return 0;
}

int fs_setup_oci_dev(int root, const struct cordon_oci *oci, const char *destination,
		     const struct cordon_fs_options *opts, struct cordon_error *err)
{
	_cleanup_close_ int dev = -1;
	bool pts = strcmp(destination, "/dev/pts") == 0;

	if (!pts && strcmp(destination, "/dev/mqueue") != 0)
		return 0;
	dev = open_dev_dir(root, err);
	if (dev < 0)
		return -1;
	return pts ? mount_devpts(dev, oci, opts, err) : mount_mqueue(dev, oci, opts, err);
}

int fs_setup_tmp(int root, uint64_t size_mb, struct cordon_error *err)
{
	_cleanup_close_ int target = fs_mountpoint(root, "/tmp", MOUNTPOINT_DIR, true, err);
	char data[64];

	if (target < 0)
		return -1;
	snprintf(data, sizeof(data), "mode=1777,size=%llum", (unsigned long long)size_mb);
	return fs_mount_at("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, data,
			   "/tmp", err);
}

/*
 * /etc/resolv.conf naming the gateway's DNS proxy, read-only. The file is
 * written on the sandbox's /dev tmpfs (a filesystem of this mount
 * namespace, so it can be bound), bound over the rootfs's resolv.conf,
 * and its name removed again: only the read-only bind reaches it.
 */
int fs_setup_resolv(int root, const char *content, struct cordon_error *err)
{
	static const char name[] = ".cordon-resolv.conf";
	_cleanup_close_ int devdir = fs_reopen(root, "/dev", err), dev = -1, f = -1, target = -1;
	_cleanup_close_ int mounted = -1;
	char buf[CORDON_FD_PATH_MAX];
	int r;

	if (devdir < 0)
		return -1;
	dev = open(cordon_fd_path(devdir, buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dev < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "opening /dev");
	f = openat(dev, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (f < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "creating resolv.conf");
	r = cordon_write_all(f, content, strlen(content));
	if (r < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, -r, "writing resolv.conf");
	target = fs_mountpoint(root, "/etc/resolv.conf", MOUNTPOINT_FILE, false, err);
	if (target < 0)
		return cordon_error_wrap(err, "/etc/resolv.conf");
	if (fs_mount_at(cordon_fd_path(f, buf), target, NULL, MS_BIND, NULL, "/etc/resolv.conf",
			err) < 0)
		return -1;
	/* As fs_mountpoint did, through a symlink inside the root (into /run, often). */
	mounted = fs_open_existing(root, "/etc/resolv.conf", err);
	if (mounted == -2)
		return cordon_error_set(err, CORDON_E_MOUNT, ENOENT, "/etc/resolv.conf");
	if (mounted < 0 ||
	    fs_setattr(mounted,
		       MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
		       "/etc/resolv.conf", err) < 0)
		return -1;
	if (unlinkat(dev, name, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "removing /dev/%s", name);
	return 0;
}

/*
 * Supervisor side, host root: the node of a linux.devices entry, made on
 * a tmpfs of its own (mounted nowhere: a detached mount of the host's
 * user namespace, so the node works there, which one made in the
 * sandbox's could not), with the config's mode and the host ids of its
 * owner; handed over as a detached bind of that one node, read-only,
 * nosuid and noexec (the device reads and writes; its inode cannot be
 * changed through it).
 */
int cordon_fs_device_node(const struct cordon_oci_device *d, uid_t host_uid, gid_t host_gid,
			  struct cordon_error *err)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
	};
	_cleanup_close_ int fsfd = cordon_fsopen("tmpfs", FSOPEN_CLOEXEC), mnt = -1;
	mode_t mode = d->has_mode ? (mode_t)d->file_mode : 0666;
	int tree;

	if (fsfd < 0 || cordon_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    cordon_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "a tmpfs for the device node");
	mnt = cordon_fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "a tmpfs for the device node");
	/* mknod applies the umask: the mode is set again after. */
	if (mknodat(mnt, "node", (d->type == 'b' ? S_IFBLK : S_IFCHR) | (mode & 0777),
		    makedev((unsigned)d->major, (unsigned)d->minor)) < 0 ||
	    fchownat(mnt, "node", host_uid, host_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(mnt, "node", mode, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "making the device node");
	tree = cordon_open_tree(mnt, "node", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "binding the device node");
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0) {
		cordon_error_set(err, CORDON_E_MOUNT, errno, "binding the device node");
		close(tree);
		return -1;
	}
	return tree;
}

/* A FIFO with the config's mode (not the umask's) and owner (ids of the sandbox's namespace). */
static int make_fifo(int root, const struct cordon_oci_device *d, const char *what,
		     struct cordon_error *err)
{
	_cleanup_free_ char *dir = cordon_xstrdup(d->path);
	char *slash = strrchr(dir, '/');
	_cleanup_close_ int target = -1;
	mode_t mode = d->has_mode ? (mode_t)d->file_mode : 0666;

	*slash = '\0';
	target = fs_mountpoint(root, dir[0] ? dir : "/", MOUNTPOINT_DIR, false, err);
	if (target < 0)
		return cordon_error_wrap(err, "%s", what);
	if (mknodat(target, slash + 1, S_IFIFO | (mode & 0777), 0) < 0 && errno != EEXIST)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s: making the fifo", what);
	if (fchmodat(target, slash + 1, mode, 0) < 0 ||
	    ((d->has_uid || d->has_gid) &&
	     fchownat(target, slash + 1, d->has_uid ? (uid_t)d->uid : (uid_t)-1,
		      d->has_gid ? (gid_t)d->gid : (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0))
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "%s: the fifo's mode and owner",
					what);
	return 0;
}

/*
 * linux.devices. Rootful, each node was made by the supervisor as the
 * config says (cordon_fs_device_node) and is attached here. No device
 * node can be made in a user namespace: rootless, each is the host's
 * node of the same path, bound (as runc does in one), and it must be the
 * device the config names; its mode and owner stay the host's. A FIFO is
 * made here, with the config's mode and owner.
 */
int fs_setup_devices(int root, const struct cordon_oci *oci, const struct cordon_fs_host *host,
		     struct cordon_error *err)
{
	for (size_t i = 0; oci && i < oci->n_devices; i++) {
		const struct cordon_oci_device *d = &oci->devices[i];
		size_t k = oci->n_mounts + i;
		int made = k < host->n_mount_trees ? host->mount_trees[k] : -1;
		_cleanup_close_ int target = -1;
		char what[PATH_MAX + 32];

		snprintf(what, sizeof(what), "linux.devices[%zu] %s", i, d->path);
		if (d->type == 'p') {
			if (make_fifo(root, d, what, err) < 0)
				return -1;
			continue;
		}
		target = fs_mountpoint(root, d->path, MOUNTPOINT_FILE, false, err);
		if (target < 0)
			return cordon_error_wrap(err, "%s", what);
		if (made >= 0) {
			if (fs_move_tree(made, target, what, err) < 0)
				return -1;
			continue;
		}
		if (bind_device(d->path, target, d, what, err) < 0)
			return -1;
	}
	return 0;
}
