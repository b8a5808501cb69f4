// SPDX-License-Identifier: Apache-2.0
/*
 * Removing a sandbox's cgroup: the directory cordon made and everything
 * below it. A workload with a writable cgroup mount (an OCI "cgroup"
 * mount under a config that maps host root) can make child cgroups and
 * put processes in them, and rmdir of a cgroup with children fails with
 * EBUSY. So the tree goes depth-first, by directory fd, never following a
 * symlink or leaving the cgroup filesystem; what still holds processes is
 * killed first (where the caller owns the tree), and the removal is
 * retried a bounded number of times.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#include "cgroup-internal.h"

#define REMOVE_TRIES 50 /* × 2 ms: a memory cgroup can take a moment to go offline */
/*
 * One directory fd is open per level on the way down. Far deeper than any
 * real use (systemd in a container nests four or five levels); a tree
 * deeper than this is left and reported.
 */
#define TREE_DEPTH_MAX 256

static bool on_cgroupfs(int fd, bool *v2)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return false;
	*v2 = (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC;
	return *v2 || (unsigned long)sfs.f_type == CGROUP_SUPER_MAGIC;
}

/* The child cgroup NAME of the cgroup dir: no symlink, no other mount. */
static int open_child(int dir, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};

	return cordon_openat2(dir, name, &how, sizeof(how));
}

/* The names of dir's child cgroups (its subdirectories). */
static char **child_names(int dir, size_t *n)
{
	int fd = dup(dir);
	char **names = cordon_xcalloc(1, sizeof(*names));
	struct dirent *de;
	DIR *d;

	*n = 0;
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		cordon_closep(&fd);
		return names;
	}
	rewinddir(d); /* the dup shares the offset of earlier listings */
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			cordon_strv_push(&names, n, de->d_name);
	closedir(d);
	return names;
}

/*
 * Call fn on dir and on every cgroup below it, children first. Stops at
 * the first negative return and passes it up; a child that cannot be
 * opened (gone meanwhile: fine) is skipped.
 */
static int walk(int dir, unsigned depth, int (*fn)(int parent, const char *name, int dir),
		int parent, const char *name)
{
	size_t n;
	_cleanup_strv_ char **names = child_names(dir, &n);

	if (depth >= TREE_DEPTH_MAX)
		return -ELOOP;
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int child = open_child(dir, names[i]);
		int r;

		if (child < 0)
			continue;
		r = walk(child, depth + 1, fn, dir, names[i]);
		if (r < 0)
			return r;
	}
	return fn(parent, name, dir);
}

/* rmdir of a cgroup from its parent; the top (parent -1) is left to the caller. */
static int remove_one(int parent, const char *name, int dir)
{
	(void)dir;
	if (parent < 0 || unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}

static bool listed(int dir, pid_t pid)
{
	_cleanup_free_ char *procs = NULL;
	char *save = NULL;
	uint64_t v;

	if (cordon_read_file_at(dir, "cgroup.procs", &procs, NULL) < 0)
		return false;
	for (char *p = strtok_r(procs, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		if (cordon_parse_u64(p, &v) == 0 && v == (uint64_t)pid)
			return true;
	return false;
}

/*
 * SIGKILL every process of one cgroup, by pidfd: a pid is signalled only
 * if it is still listed once its pidfd is open, so a pid that exited and
 * was reused by a process elsewhere is never hit.
 */
static int kill_members(int parent, const char *name, int dir)
{
	_cleanup_free_ char *procs = NULL;
	char *save = NULL;

	(void)parent, (void)name;
	if (cordon_read_file_at(dir, "cgroup.procs", &procs, NULL) < 0)
		return 0;
	for (char *p = strtok_r(procs, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		_cleanup_close_ int pidfd = -1;
		uint64_t v;

		if (cordon_parse_u64(p, &v) < 0 || v == 0 || v > INT32_MAX)
			continue;
		pidfd = cordon_pidfd_open((pid_t)v);
		if (pidfd >= 0 && listed(dir, (pid_t)v))
			cordon_pidfd_send_signal(pidfd, SIGKILL);
	}
	/* v1: a frozen task takes its SIGKILL only once thawed. */
	if (faccessat(dir, "freezer.state", F_OK, 0) == 0)
		cordon_write_file_at(dir, "freezer.state", "THAWED", 6);
	return 0;
}

static int count_members(int parent, const char *name, int dir)
{
	_cleanup_free_ char *procs = NULL;

	(void)parent, (void)name;
	if (cordon_read_file_at(dir, "cgroup.procs", &procs, NULL) < 0)
		return 0;
	return procs[strspn(procs, "\n")] ? -EBUSY : 0;
}

/* Every process in the tree: cgroup.kill on v2 (5.14+) at once, else one by one. */
static void kill_tree(int top, bool v2)
{
	if (v2 && cordon_write_file_at(top, "cgroup.kill", "1", 1) == 0)
		return;
	walk(top, 0, kill_members, -1, NULL);
}

/* dir opened, if it is a cgroup below a hierarchy's root; -errno otherwise. */
static int open_tree_top(const char *dir, bool *v2)
{
	_cleanup_close_ int top = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat self, up;

	if (top < 0)
		return -errno;
	/* Only a cgroup, and never a hierarchy's root (its ".." is another mount). */
	if (!on_cgroupfs(top, v2) || fstat(top, &self) < 0 || fstatat(top, "..", &up, 0) < 0 ||
	    up.st_dev != self.st_dev)
		return -EINVAL;
	return TAKE_FD(top);
}

/* The members collected by cordon_cgroup_tree_pids (walk's callbacks take no context). */
static struct {
	pid_t *pids;
	size_t n;
} members;

static int collect_members(int parent, const char *name, int dir)
{
	_cleanup_free_ char *procs = NULL;
	char *save = NULL;

	(void)parent, (void)name;
	if (cordon_read_file_at(dir, "cgroup.procs", &procs, NULL) < 0)
		return 0;
	for (char *p = strtok_r(procs, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		uint64_t v;
		bool seen = false;

		if (cordon_parse_u64(p, &v) < 0 || v == 0 || v > INT32_MAX)
			continue;
		for (size_t i = 0; i < members.n && !seen; i++)
			seen = members.pids[i] == (pid_t)v;
		if (seen)
			continue;
		members.pids = cordon_xrealloc(members.pids, (members.n + 1) * sizeof(pid_t));
		members.pids[members.n++] = (pid_t)v;
	}
	return 0;
}

size_t cordon_cgroup_tree_pids(const char *dir, pid_t **pids, size_t n)
{
	bool v2;
	_cleanup_close_ int top = open_tree_top(dir, &v2);

	members.pids = *pids;
	members.n = n;
	if (top >= 0)
		walk(top, 0, collect_members, -1, NULL);
	*pids = members.pids;
	members.pids = NULL;
	return members.n;
}

int cordon_cgroup_kill_tree(const char *dir)
{
	bool v2;
	_cleanup_close_ int top = open_tree_top(dir, &v2);

	if (top < 0)
		return top == -ENOENT ? 0 : top;
	kill_tree(top, v2);
	return 0;
}

int cordon_cgroup_remove_empty(const char *dir)
{
	bool v2;
	_cleanup_close_ int top = open_tree_top(dir, &v2);

	if (top < 0)
		return top == -ENOENT ? 0 : top;
	return rmdir(dir) == 0 || errno == ENOENT ? 0 : -errno;
}

int cordon_cgroup_remove_tree(const char *dir, bool kill)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	bool v2;
	_cleanup_close_ int top = open_tree_top(dir, &v2);
	int r = 0;

	if (top < 0)
		return top == -ENOENT ? 0 : top;
	/* Without kill (a sweep): a tree with a process in it is in use, perhaps by another. */
	if (!kill && (r = walk(top, 0, count_members, -1, NULL)) < 0)
		return r;
	for (int i = 0; i < REMOVE_TRIES; i++) {
		r = walk(top, 0, remove_one, -1, NULL);
		if (r == 0 && rmdir(dir) == 0)
			return 0;
		if (r == 0)
			r = errno == ENOENT ? 0 : -errno;
		if (r != -EBUSY)
			return r;
		if (kill)
			kill_tree(top, v2);
		nanosleep(&pause, NULL);
	}
	return r;
}
