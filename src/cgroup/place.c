// SPDX-License-Identifier: Apache-2.0
/*
 * Where a sandbox's cgroup goes in a hierarchy, and making it there:
 * cordon-ID below the caller's cgroup (or --cgroup-parent), or an OCI
 * linux.cgroupsPath with its missing parents. The walk goes down by
 * directory fd from the hierarchy's mount, one component at a time.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-internal.h"

/* Append the components of s to *out ("/a/b") and count them; false on "..". */
static bool append_components(char **out, const char *s, size_t *count)
{
	_cleanup_free_ char *copy = cordon_xstrdup(s);
	char *save = NULL;

	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		char *joined;

		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0)
			return false;
		joined = cordon_xasprintf("%s/%s", *out, c);
		free(*out);
		*out = joined;
		(*count)++;
	}
	return true;
}

char *cordon_cgroup_place_path(const struct cordon_cgroup_place *place, const char *caller,
			       size_t *start)
{
	_cleanup_free_ char *out = cordon_xstrdup(""), *leaf = NULL;
	const char *base, *rest;
	size_t n = 0;

	if (place->path && *place->path) {
		base = place->path[0] == '/' ? "/" : caller;
		rest = place->path;
	} else {
		base = place->parent ? place->parent : caller;
		rest = leaf = cordon_xasprintf("cordon-%s", place->id);
	}
	if (!append_components(&out, base, &n))
		return NULL;
	*start = n;
	/* Nothing below the base: the sandbox would take the caller's (or the root) cgroup. */
	if (!append_components(&out, rest, &n) || n == *start)
		return NULL;
	return TAKE_PTR(out);
}

char *cordon_cgroup_place_base(const struct cordon_cgroup_place *place, const char *caller)
{
	_cleanup_free_ char *full = NULL;
	size_t start, n = 0;
	char *p;

	full = cordon_cgroup_place_path(place, caller, &start);
	if (!full)
		return NULL;
	/* full is "/c1/c2/...": the base ends before the slash of component start + 1. */
	for (p = full; *p && n <= start; p++)
		if (*p == '/' && n++ == start)
			break;
	*p = '\0';
	return cordon_xstrdup(*full ? full : "/");
}

static bool has_word(const char *list, const char *word)
{
	_cleanup_free_ char *copy = cordon_xstrdup(list ? list : "");
	char *save = NULL;

	for (char *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		if (strcmp(w, word) == 0)
			return true;
	return false;
}

/* v2: the controllers must be enabled in a parent's subtree_control before its children have them.
 */
static int v2_enable_at(int fd, const char *path, unsigned ctrls, struct cordon_error *err)
{
	static const struct {
		unsigned bits;
		const char *name;
	} names[] = {
		{ CORDON_CTRL_MEMORY, "memory" },
		{ CORDON_CTRL_CPU | CORDON_CTRL_CPUACCT, "cpu" },
		{ CORDON_CTRL_PIDS, "pids" },
		{ CORDON_CTRL_CPUSET, "cpuset" },
	};
	_cleanup_free_ char *now = NULL;
	char buf[64] = "";
	int r;

	if (cordon_read_file_at(fd, "cgroup.subtree_control", &now, NULL) < 0)
		now = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if ((ctrls & names[i].bits) && !has_word(now, names[i].name))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "+%s ",
				 names[i].name);
	if (!*buf)
		return 0;
	r = cordon_write_file_at(fd, "cgroup.subtree_control", buf, strlen(buf));
	if (r == -EBUSY)
		return cordon_error_set(
			err, CORDON_E_CGROUP, EBUSY,
			"%s has processes of its own (cgroup v2 forbids controllers "
			"there); place the sandbox below a cgroup without processes "
			"(--cgroup-parent, linux.cgroupsPath)",
			path);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, -r,
					"writing %sto %s/cgroup.subtree_control", buf, path);
	return 0;
}

/* A new v1 cpuset is empty and refuses tasks: it starts with its parent's cpus and mems. */
static int cpuset_inherit(int parent_fd, int fd, const char *path, struct cordon_error *err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *v = NULL;
		int r = cordon_read_file_at(parent_fd, files[i], &v, NULL);

		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r,
						"reading %s of the parent of %s", files[i], path);
		v[strcspn(v, "\n")] = '\0';
		r = cordon_write_file_at(fd, files[i], v, strlen(v));
		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r, "writing %s to %s/%s", v,
						path, files[i]);
	}
	return 0;
}

/* An existing cgroup is taken over only when nothing lives in or below it. */
static bool in_use(int fd, const char *path, struct cordon_error *err)
{
	_cleanup_free_ char *procs = NULL;
	_cleanup_close_ int dfd = -1;
	size_t n = 0;
	DIR *d;
	struct dirent *de;
	bool children = false;

	if (cordon_read_file_at(fd, "cgroup.procs", &procs, NULL) == 0)
		for (char *p = procs; *p; p++)
			n += *p == '\n';
	if (n) {
		cordon_error_set(err, CORDON_E_CGROUP, EBUSY,
				 "cgroup %s is in use: %zu process(es) in it (another container?)",
				 path, n);
		return true;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d)
		return false;
	dfd = -1;
	while (!children && (de = readdir(d)))
		children = de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
			   strcmp(de->d_name, "..") != 0;
	closedir(d);
	if (children)
		cordon_error_set(err, CORDON_E_CGROUP, EBUSY,
				 "cgroup %s is in use: it has child cgroups (the parent of other "
				 "containers?)",
				 path);
	return children;
}

int cgroup_make_dir(const struct cordon_cgroup_hier *hi, const struct cordon_cgroup_place *place,
		    unsigned v2_ctrls, bool ours, char **dir, bool *taken, struct cordon_error *err)
{
	bool given = place->path && *place->path;
	size_t start, level = 0;
	_cleanup_free_ char *rel = cordon_cgroup_place_path(place, hi->path, &start);
	_cleanup_free_ char *path = cordon_xstrdup(hi->mount);
	_cleanup_close_ int fd = -1;
	char *save = NULL;

	*taken = false;
	if (!rel)
		return cordon_error_set(err, CORDON_E_CGROUP, EINVAL,
					"cgroup path '%s': a path below the %s without '..'",
					given	      ? place->path :
					place->parent ? place->parent :
							place->id,
					given && place->path[0] != '/' ? "caller's cgroup" :
									 "root");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, errno, "opening %s", path);
	for (char *c = strtok_r(rel, "/", &save); c; c = strtok_r(NULL, "/", &save), level++) {
		/* rel is normalized: no "//", no trailing "/" */
		bool below = level >= start, last = *save == '\0', made = false;
		_cleanup_close_ int next = -1;
		char *sub;

		if (below && hi->v2 && v2_ctrls && v2_enable_at(fd, path, v2_ctrls, err) < 0)
			return -1;
		sub = cordon_xasprintf("%s/%s", path, c);
		free(path);
		path = sub;
		if (below && !(last && ours)) {
			if (mkdirat(fd, c, 0755) == 0)
				made = true;
			else if (errno != EEXIST)
				return cordon_error_set(err, CORDON_E_CGROUP, errno, "creating %s",
							path);
			else if (last && !given) {
				/* cordon's own name: another sandbox of this id (another --root),
				 * or a crash's */
				*taken = true;
				return cordon_error_set(err, CORDON_E_CGROUP, EEXIST, "cgroup %s",
							path);
			}
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			cordon_error_set(err, CORDON_E_CGROUP, errno, "opening %s", path);
			goto undo;
		}
		if (made && !hi->v2 && (hi->ctrls & CORDON_CTRL_CPUSET) &&
		    cpuset_inherit(fd, next, path, err) < 0)
			goto undo;
		if (last && below && !made && !ours && in_use(next, path, err)) {
			*taken = true;
			return -1;
		}
		cordon_closep(&fd);
		fd = TAKE_FD(next);
		continue;
undo:
		/* A leaf that cannot be used is not left behind; parents stay, as they would
		 * anyway. */
		if (made && last)
			unlinkat(fd, c, AT_REMOVEDIR);
		return -1;
	}
	*dir = TAKE_PTR(path);
	return 0;
}
