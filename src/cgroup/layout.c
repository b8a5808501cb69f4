// SPDX-License-Identifier: Apache-2.0
/* Which cgroup hierarchies exist, what they carry, and where we are in them. */
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/statfs.h>

#include "cordon/cgroup.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_UNIFIED "/sys/fs/cgroup/unified"

const char *cordon_cgroup_kind_name(enum cordon_cgroup_kind kind)
{
	switch (kind) {
	case CORDON_CGROUP_V1:
		return "v1";
	case CORDON_CGROUP_V2:
		return "v2";
	case CORDON_CGROUP_HYBRID:
		return "hybrid";
	default:
		return "none";
	}
}

void cordon_cgroup_layout_free(struct cordon_cgroup_layout *layout)
{
	for (size_t i = 0; i < layout->n; i++) {
		free(layout->hier[i].mount);
		free(layout->hier[i].path);
		free(layout->hier[i].ctrl_names);
		free(layout->hier[i].ctrl_from);
	}
	memset(layout, 0, sizeof(*layout));
}

static unsigned ctrl_bits(const char *list)
{
	_cleanup_free_ char *copy = cordon_xstrdup(list);
	char *save = NULL;
	unsigned bits = 0;

	for (char *c = strtok_r(copy, ", \n", &save); c; c = strtok_r(NULL, ", \n", &save)) {
		if (strcmp(c, "memory") == 0)
			bits |= CORDON_CTRL_MEMORY;
		else if (strcmp(c, "cpu") == 0)
			bits |= CORDON_CTRL_CPU;
		else if (strcmp(c, "cpuacct") == 0)
			bits |= CORDON_CTRL_CPUACCT;
		else if (strcmp(c, "pids") == 0)
			bits |= CORDON_CTRL_PIDS;
		else if (strcmp(c, "cpuset") == 0)
			bits |= CORDON_CTRL_CPUSET;
		else if (strcmp(c, "devices") == 0)
			bits |= CORDON_CTRL_DEVICES;
		else if (strcmp(c, "freezer") == 0)
			bits |= CORDON_CTRL_FREEZER;
	}
	return bits;
}

/* True when every name of the comma list `want` is among the options `opts`. */
static bool options_have_all(const char *opts, const char *want)
{
	_cleanup_free_ char *copy = cordon_xstrdup(want);
	char *save = NULL;

	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(w);
		const char *p = opts;
		bool found = false;

		while ((p = strstr(p, w))) {
			if ((p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == ' ')) {
				found = true;
				break;
			}
			p += n;
		}
		if (!found)
			return false;
	}
	return true;
}

struct mount_entry {
	char *root, *point, *fstype, *super;
};

/* Split one mountinfo line in place; false if it is not well formed. */
static bool mountinfo_split(char *line, struct mount_entry *m)
{
	char *f[6], *save = NULL, *dash;
	size_t n = 0;

	dash = strstr(line, " - ");
	if (!dash)
		return false;
	*dash = '\0';
	for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	if (n < 5)
		return false;
	m->root = f[3];
	m->point = f[4];
	save = NULL;
	m->fstype = strtok_r(dash + 3, " ", &save);
	(void)strtok_r(NULL, " ", &save); /* source */
	m->super = strtok_r(NULL, " \n", &save);
	return m->fstype && m->super;
}

/* The cgroup of the caller inside a hierarchy mounted with root mroot. */
static char *relative_path(const char *self, const char *mroot)
{
	size_t n = strlen(mroot);

	if (strcmp(mroot, "/") != 0 && strncmp(self, mroot, n) == 0 &&
	    (self[n] == '/' || self[n] == '\0'))
		return cordon_xstrdup(self[n] ? self + n : "/");
	return cordon_xstrdup(self);
}

/*
 * mountinfo lists mounts in the order they were made: a mount is out of
 * sight when a later one sits on its mount point or on a directory above it.
 */
static bool hidden_by_later_mount(const char *point, const char *later)
{
	_cleanup_free_ char *copy = later ? cordon_xstrdup(later) : NULL;
	char *save = NULL;

	if (!copy)
		return false;
	for (char *ml = strtok_r(copy, "\n", &save); ml; ml = strtok_r(NULL, "\n", &save)) {
		struct mount_entry m;
		size_t n;

		if (!mountinfo_split(ml, &m))
			continue;
		n = strlen(m.point);
		if (strcmp(m.point, point) == 0 ||
		    (strncmp(point, m.point, n) == 0 && point[n] == '/'))
			return true;
	}
	return false;
}

int cordon_cgroup_layout_parse(const char *mountinfo, const char *self_cgroup,
			       struct cordon_cgroup_layout *layout, struct cordon_error *err)
{
	_cleanup_free_ char *cg = cordon_xstrdup(self_cgroup);
	char *save = NULL;

	layout->n = 0;
	for (char *line = strtok_r(cg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *mi = cordon_xstrdup(mountinfo);
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *msave = NULL;
		const char *ctrls, *path;
		bool v2;

		if (!c1 || !c2 || layout->n == CORDON_CGROUP_MAX_HIER)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		ctrls = c1 + 1;
		path = c2 + 1;
		v2 = strcmp(line, "0") == 0 && *ctrls == '\0';
		if (!v2 && (*ctrls == '\0' || strncmp(ctrls, "name=", 5) == 0))
			continue; /* named hierarchies (systemd) carry no controller; malformed */
		for (char *ml = strtok_r(mi, "\n", &msave); ml; ml = strtok_r(NULL, "\n", &msave)) {
			struct mount_entry m;
			struct cordon_cgroup_hier *h;
			char *rest = msave;

			if (!mountinfo_split(ml, &m))
				continue;
			if (v2 ? strcmp(m.fstype, "cgroup2") != 0
			       : strcmp(m.fstype, "cgroup") != 0 || !options_have_all(m.super, ctrls))
				continue;
			if (hidden_by_later_mount(m.point, rest))
				continue; /* e.g. cgroup2 mounted over /sys/fs/cgroup afterwards */
			h = &layout->hier[layout->n++];
			h->mount = cordon_xstrdup(m.point);
			h->path = relative_path(path, m.root);
			h->v2 = v2;
			h->ctrl_names = cordon_xstrdup(v2 ? "" : ctrls);
			h->ctrls = v2 ? 0 : ctrl_bits(ctrls);
			break;
		}
	}
	(void)err;
	return 0;
}

/* v2 controllers available in the cgroup AT (cgroup.controllers of it); false if unread. */
static bool v2_controllers(struct cordon_cgroup_hier *h, const char *at)
{
	_cleanup_free_ char *file = cordon_xasprintf("%s%s/cgroup.controllers", h->mount,
						     strcmp(at, "/") == 0 ? "" : at);
	_cleanup_free_ char *text = NULL;

	if (cordon_read_file_at(AT_FDCWD, file, &text, NULL) < 0)
		return false;
	text[strcspn(text, "\n")] = '\0';
	free(h->ctrl_names);
	h->ctrl_names = cordon_xstrdup(text);
	free(h->ctrl_from);
	h->ctrl_from = cordon_xstrdup(at);
	h->ctrls = ctrl_bits(text);
	/* v2's "cpu" controller accounts usage too (cpu.stat usage_usec). */
	if (h->ctrls & CORDON_CTRL_CPU)
		h->ctrls |= CORDON_CTRL_CPUACCT;
	return true;
}

void cordon_cgroup_layout_place(struct cordon_cgroup_layout *layout,
				const struct cordon_cgroup_place *place)
{
	for (size_t i = 0; i < layout->n; i++) {
		struct cordon_cgroup_hier *h = &layout->hier[i];
		_cleanup_free_ char *base = NULL;

		if (!h->v2)
			continue;
		base = cordon_cgroup_place_base(place, h->path);
		if (base && (!h->ctrl_from || strcmp(base, h->ctrl_from) != 0))
			(void)v2_controllers(h, base);
	}
}

char **cordon_cgroup_layout_leaves(const struct cordon_cgroup_layout *layout,
				   const struct cordon_cgroup_place *place, size_t *n)
{
	char **dirs = cordon_xcalloc(layout->n + 1, sizeof(*dirs));

	*n = 0;
	for (size_t i = 0; i < layout->n; i++) {
		size_t start;
		_cleanup_free_ char *rel =
			cordon_cgroup_place_path(place, layout->hier[i].path, &start);

		char *dir = rel ? cordon_xasprintf("%s%s", layout->hier[i].mount, rel) : NULL;

		/* One there already is not cordon's to remove: create refuses it or takes it
		 * over, and then the record names it. */
		if (dir && faccessat(AT_FDCWD, dir, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			dirs[(*n)++] = dir;
		else
			free(dir);
	}
	return dirs;
}

int cordon_cgroup_detect(struct cordon_cgroup_layout *layout, struct cordon_error *err)
{
	_cleanup_free_ char *mountinfo = NULL, *self = NULL;
	struct statfs sfs;
	int r;

	memset(layout, 0, sizeof(*layout));
	if (statfs(CGROUP_ROOT, &sfs) < 0) {
		layout->kind = CORDON_CGROUP_NONE;
		return 0;
	}
	if ((unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC)
		layout->kind = CORDON_CGROUP_V2;
	else if (statfs(CGROUP_UNIFIED, &sfs) == 0 && (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC)
		layout->kind = CORDON_CGROUP_HYBRID;
	else if ((unsigned long)sfs.f_type == TMPFS_MAGIC)
		layout->kind = CORDON_CGROUP_V1;
	else
		layout->kind = CORDON_CGROUP_NONE;
	if (layout->kind == CORDON_CGROUP_NONE)
		return 0;
	r = cordon_read_file_at(AT_FDCWD, "/proc/self/mountinfo", &mountinfo, NULL);
	if (r == 0)
		r = cordon_read_file_at(AT_FDCWD, "/proc/self/cgroup", &self, NULL);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, -r, "reading the cgroup layout");
	r = cordon_cgroup_layout_parse(mountinfo, self, layout, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < layout->n; i++)
		if (layout->hier[i].v2)
			(void)v2_controllers(&layout->hier[i], layout->hier[i].path);
	return 0;
}
