// SPDX-License-Identifier: Apache-2.0
/* A sandbox's cgroups: create, limit, attach, read outcomes, remove. */
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"

int cordon_cpus_to_quota(const char *cpus, uint64_t *quota, uint64_t *period)
{
	uint64_t ms;

	/* Same grammar as seconds: digits with an optional fraction, 3 places. */
	if (cordon_parse_seconds_ms(cpus, &ms) < 0 || ms == 0 || ms > 1024 * 1000)
		return -EINVAL;
	*period = CORDON_CPU_PERIOD_US;
	*quota = ms * CORDON_CPU_PERIOD_US / 1000;
	if (*quota < 1000) /* the kernel's minimum quota is 1 ms */
		*quota = 1000;
	return 0;
}

int cordon_swap_only(const struct cordon_limits *l, uint64_t *swap, struct cordon_error *err)
{
	if (!l->memory_swap) {
		*swap = l->memory; /* Docker: swap as large as the memory limit */
		return 0;
	}
	if (!l->memory)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--memory-swap needs --memory");
	if (l->memory_swap < l->memory)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--memory-swap is memory plus swap: it cannot be below --memory");
	*swap = l->memory_swap - l->memory;
	return 0;
}

int cgroup_write(const char *dir, const char *file, const char *value, struct cordon_error *err);
int cgroup_write_u64(const char *dir, const char *file, uint64_t v, struct cordon_error *err);

static int write_value(const char *dir, const char *file, const char *value,
		       struct cordon_error *err)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file);
	int r = cordon_write_file_at(AT_FDCWD, path, value, strlen(value));

	if (r < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, -r, "writing %s to %s", value, path);
	return 0;
}

static int write_u64(const char *dir, const char *file, uint64_t v, struct cordon_error *err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return write_value(dir, file, buf, err);
}

int cgroup_write(const char *dir, const char *file, const char *value, struct cordon_error *err)
{
	return write_value(dir, file, value, err);
}

int cgroup_write_u64(const char *dir, const char *file, uint64_t v, struct cordon_error *err)
{
	return write_u64(dir, file, v, err);
}

static bool file_exists(const char *dir, const char *file)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file);

	return access(path, F_OK) == 0;
}

/* The hierarchy that carries ctrl, or -1. v1 wins on hybrid layouts. */
static int hier_for(const struct cordon_cgroup_layout *layout, unsigned ctrl)
{
	for (size_t i = 0; i < layout->n; i++)
		if (!layout->hier[i].v2 && (layout->hier[i].ctrls & ctrl))
			return (int)i;
	for (size_t i = 0; i < layout->n; i++)
		if (layout->hier[i].v2 && (layout->hier[i].ctrls & ctrl))
			return (int)i;
	/* cgroup.freeze is in every v2 cgroup but the root: no controller to enable. */
	for (size_t i = 0; (ctrl == CORDON_CTRL_FREEZER || ctrl == CORDON_CTRL_UNIFIED) && i < layout->n;
	     i++)
		if (layout->hier[i].v2)
			return (int)i;
	return -1;
}

static const char *ctrl_name(unsigned ctrl)
{
	switch (ctrl) {
	case CORDON_CTRL_MEMORY:
		return "memory";
	case CORDON_CTRL_CPU:
		return "cpu";
	case CORDON_CTRL_CPUACCT:
		return "cpuacct";
	case CORDON_CTRL_FREEZER:
		return "freezer";
	default:
		return "pids";
	}
}

static int limits_v1(const char *dir, unsigned ctrls, const struct cordon_limits *l,
		     struct cordon_error *err)
{
	if ((ctrls & CORDON_CTRL_MEMORY) && l->memory) {
		uint64_t swap;

		if (write_u64(dir, "memory.limit_in_bytes", l->memory, err) < 0)
			return -1;
		if (cordon_swap_only(l, &swap, err) < 0)
			return -1;
		if (file_exists(dir, "memory.memsw.limit_in_bytes")) {
			if (write_u64(dir, "memory.memsw.limit_in_bytes", l->memory + swap, err) < 0)
				return -1;
		} else if (l->memory_swap && swap == 0) {
			/* Not enforceable here; best-effort callers see limits_enforced false. */
			return cordon_error_set(err, CORDON_E_CGROUP, 0,
						"--memory-swap: this kernel has no swap accounting "
						"(memory.memsw.*; boot with swapaccount=1)");
		}
	}
	if ((ctrls & CORDON_CTRL_CPU) && l->cpu_quota) {
		if (write_u64(dir, "cpu.cfs_period_us", l->cpu_period, err) < 0 ||
		    write_u64(dir, "cpu.cfs_quota_us", l->cpu_quota, err) < 0)
			return -1;
	}
	if ((ctrls & CORDON_CTRL_PIDS) && l->pids && write_u64(dir, "pids.max", l->pids, err) < 0)
		return -1;
	return 0;
}

static int limits_v2(const char *dir, unsigned ctrls, const struct cordon_limits *l,
		     struct cordon_error *err)
{
	char buf[64];

	if ((ctrls & CORDON_CTRL_MEMORY) && l->memory) {
		uint64_t swap;

		if (write_u64(dir, "memory.max", l->memory, err) < 0 ||
		    cordon_swap_only(l, &swap, err) < 0)
			return -1;
		if (file_exists(dir, "memory.swap.max") &&
		    write_u64(dir, "memory.swap.max", swap, err) < 0)
			return -1;
	}
	if ((ctrls & CORDON_CTRL_CPU) && l->cpu_quota) {
		snprintf(buf, sizeof(buf), "%llu %llu", (unsigned long long)l->cpu_quota,
			 (unsigned long long)l->cpu_period);
		if (write_value(dir, "cpu.max", buf, err) < 0)
			return -1;
	}
	if ((ctrls & CORDON_CTRL_PIDS) && l->pids && write_u64(dir, "pids.max", l->pids, err) < 0)
		return -1;
	return 0;
}

static bool requested(unsigned ctrl, const struct cordon_limits *l)
{
	switch (ctrl) {
	case CORDON_CTRL_MEMORY:
		return l->memory || l->memory_swap;
	case CORDON_CTRL_CPU:
		return l->cpu_quota;
	case CORDON_CTRL_PIDS:
		return l->pids && !l->pids_default;
	default:
		return false;
	}
}

/*
 * Rootless on a systemd machine, from a v2 cgroup that is not the caller's
 * (a login's session-N.scope is root's): systemd delegates
 * user@UID.service to the user, and running there is the way out. The
 * advice, or NULL where that is not the case (root, another layout, a
 * caller already in that subtree).
 */
static char *systemd_advice(const struct cordon_cgroup_hier *hi)
{
	uid_t uid = getuid();
	_cleanup_free_ char *rel = NULL, *path = NULL;
	size_t n;
	struct stat st;

	if (uid == 0 || !hi->v2)
		return NULL;
	rel = cordon_xasprintf("/user.slice/user-%u.slice/user@%u.service", (unsigned)uid,
			       (unsigned)uid);
	path = cordon_xasprintf("%s%s", hi->mount, rel);
	n = strlen(rel);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
	    (strncmp(hi->path, rel, n) == 0 && (hi->path[n] == '\0' || hi->path[n] == '/')))
		return NULL;
	return cordon_xasprintf("your cgroup is not delegated to you, systemd's %s is: mkdir "
				"%s/cordon.slice, then systemd-run --user --scope -p Delegate=yes "
				"cordon run --cgroup-parent %s/cordon.slice ...; ",
				rel, path, rel);
}

/* WAY_OUT: why already says what to do (a v2 cgroup with processes), which
 * "run as root" would not help. ADVICE: what to do instead of the usual
 * (NULL for none). */
static int cannot_enforce(const struct cordon_limits *l, unsigned wanted_required, const char *why,
			  bool way_out, const char *advice, struct cordon_error *err)
{
	if (!wanted_required || l->best_effort)
		return 0;
	if (way_out)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"cannot enforce the requested limits: %s, or pass --limits "
					"best-effort",
					why);
	if (advice)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"cannot enforce the requested limits: %s (%sor pass --limits "
					"best-effort)",
					why, advice);
	return cordon_error_set(err, CORDON_E_CGROUP, 0,
				"cannot enforce the requested limits: %s (run as root, use a "
				"delegated cgroup v2 subtree, or pass --limits best-effort)",
				why);
}

int cordon_cgroup_create(const struct cordon_cgroup_layout *layout,
			 const struct cordon_cgroup_place *place, const struct cordon_limits *limits,
			 unsigned want_ctrls, struct cordon_cgroup *cg, struct cordon_error *err)
{
	static const unsigned all[] = { CORDON_CTRL_MEMORY, CORDON_CTRL_CPU,
					CORDON_CTRL_CPUACCT, CORDON_CTRL_PIDS,
					CORDON_CTRL_FREEZER, CORDON_CTRL_UNIFIED };
	unsigned per_hier[CORDON_CGROUP_MAX_HIER] = { 0 }, required[CORDON_CGROUP_MAX_HIER] = { 0 };
	unsigned missing = 0;

	memset(cg, 0, sizeof(*cg));
	cg->v2_fd = -1;
	cg->device_prog_fd = -1;
	cg->enforced = true;
	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		unsigned c = all[i];
		bool req = requested(c, limits);
		bool want = req || (want_ctrls & c) || (c == CORDON_CTRL_PIDS && limits->pids);
		int h;

		if (!want)
			continue;
		h = hier_for(layout, c);
		if (h < 0) {
			if (req)
				missing |= c;
			continue;
		}
		per_hier[h] |= c;
		if (req)
			required[h] |= c;
	}
	if (missing) {
		const struct cordon_cgroup_hier *v2 = NULL;
		char why[sizeof(err->msg) / 2];

		/* On v2, where it is missing: the cgroup the sandbox's goes below. */
		for (size_t h = 0; h < layout->n; h++)
			if (layout->hier[h].v2 && layout->hier[h].ctrl_from)
				v2 = &layout->hier[h];
		snprintf(why, sizeof(why), "no %s controller available%s%s%s",
			 ctrl_name(missing & -missing), v2 ? " (not in cgroup.controllers of " : "",
			 v2 ? v2->ctrl_from : "", v2 ? ")" : "");
		if (cannot_enforce(limits, missing, why, false, NULL, err) < 0)
			return -1;
		cg->enforced = false;
	}

	for (size_t h = 0; h < layout->n; h++) {
		char *dir = NULL;
		bool taken;

		if (!per_hier[h])
			continue;
		if (cgroup_make_dir(&layout->hier[h], place, per_hier[h], false, &dir, &taken, err) < 0) {
			/* A cgroup in use is never shared, whatever was asked. */
			if (taken)
				goto fail;
			if (required[h]) {
				char why[sizeof(err->msg) + 64];
				_cleanup_free_ char *advice = NULL;
				bool busy = layout->hier[h].v2 && err->errnum == EBUSY;

				/* EBUSY: the message says it (and what to do) in words. */
				snprintf(why, sizeof(why), "%s%s%s", err->msg,
					 err->errnum && !busy ? ": " : "",
					 err->errnum && !busy ? strerror(err->errnum) : "");
				if (err->errnum == EACCES || err->errnum == EPERM)
					advice = systemd_advice(&layout->hier[h]);
				if (cannot_enforce(limits, required[h], why, busy, advice, err) < 0)
					goto fail;
				cg->enforced = false;
			}
			*err = (struct cordon_error){ 0 };
			continue;
		}
		cg->dir[cg->n] = dir;
		cg->ctrls[cg->n] = per_hier[h];
		cg->v2[cg->n] = layout->hier[h].v2;
		cg->n++;
		if ((layout->hier[h].v2 ? limits_v2 : limits_v1)(dir, per_hier[h], limits, err) < 0) {
			if (required[h] && !limits->best_effort)
				goto fail;
			if (required[h])
				cg->enforced = false;
		}
	}
	return 0;
fail:
	cordon_cgroup_destroy(cg);
	return -1;
}

/* The bounds of a delegated cgroup2 tree: cgroups below the container's, and their depth. */
#define DELEGATED_DESCENDANTS "1024"
#define DELEGATED_DEPTH "32"

int cordon_cgroup_delegate(const struct cordon_cgroup *cg, uid_t uid, gid_t gid,
			   struct cordon_error *err)
{
	/* The kernel's delegation (cgroup-v2.rst, "Delegation Containment"): these and no more. */
	static const char *const files[] = { "cgroup.procs", "cgroup.threads",
					     "cgroup.subtree_control" };

	for (size_t i = 0; i < cg->n; i++) {
		_cleanup_close_ int dir = -1;
		int r;

		if (!cg->v2[i] || !cg->dir[i])
			continue;
		dir = open(cg->dir[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, errno, "delegating %s",
						cg->dir[i]);
		/*
		 * What the container may make stays bounded, in files it does
		 * not own: every cgroup is kernel memory, which a cgroup2
		 * hierarchy without a memory controller (hybrid) charges to
		 * nobody. systemd in a container nests a few levels and makes
		 * tens of cgroups.
		 */
		r = cordon_write_file_at(dir, "cgroup.max.descendants", DELEGATED_DESCENDANTS,
					 strlen(DELEGATED_DESCENDANTS));
		if (r == 0)
			r = cordon_write_file_at(dir, "cgroup.max.depth", DELEGATED_DEPTH,
						 strlen(DELEGATED_DEPTH));
		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r,
						"bounding %s before delegating it", cg->dir[i]);
		if (fchown(dir, uid, gid) < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, errno, "delegating %s",
						cg->dir[i]);
		for (size_t k = 0; k < ARRAY_SIZE(files); k++)
			if (fchownat(dir, files[k], uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				return cordon_error_set(err, CORDON_E_CGROUP, errno,
							"delegating %s/%s", cg->dir[i], files[k]);
	}
	return 0;
}

int cordon_cgroup_attach(const struct cordon_cgroup *cg, pid_t pid, struct cordon_error *err)
{
	for (size_t i = 0; i < cg->n; i++)
		if (write_u64(cg->dir[i], "cgroup.procs", (uint64_t)pid, err) < 0)
			return -1;
	return 0;
}

/* "key value" lines (memory.events, memory.oom_control, cpu.stat). */
static bool read_keyed(const char *dir, const char *file, const char *key, uint64_t *out)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file), *text = NULL;
	size_t klen = strlen(key);

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return false;
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return cordon_parse_u64_prefix(line + klen + 1, out) == 0;
	return false;
}

static bool read_single(const char *dir, const char *file, uint64_t *out)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file), *text = NULL;

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return false;
	return cordon_parse_u64_prefix(text, out) == 0;
}

void cordon_cgroup_stats(const struct cordon_cgroup *cg, struct cordon_cgroup_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->enforced = cg->enforced;
	for (size_t i = 0; i < cg->n; i++) {
		const char *d = cg->dir[i];
		uint64_t v;

		if (cg->ctrls[i] & CORDON_CTRL_MEMORY) {
			if (cg->v2[i]) {
				if (read_keyed(d, "memory.events", "oom_kill", &v) && v)
					st->oom_killed = true;
				st->memory_peak_known = read_single(d, "memory.peak", &st->memory_peak);
			} else {
				if (read_keyed(d, "memory.oom_control", "oom_kill", &v) && v)
					st->oom_killed = true;
				st->memory_peak_known =
					read_single(d, "memory.max_usage_in_bytes", &st->memory_peak);
			}
		}
		if (cg->ctrls[i] & CORDON_CTRL_CPUACCT) {
			if (cg->v2[i]) {
				st->cpu_usage_known = read_keyed(d, "cpu.stat", "usage_usec", &st->cpu_usage_us);
			} else if (read_single(d, "cpuacct.usage", &v)) {
				st->cpu_usage_known = true;
				st->cpu_usage_us = v / 1000;
			}
		}
		if (cg->ctrls[i] & CORDON_CTRL_PIDS)
			st->pids_peak_known = read_single(d, "pids.peak", &st->pids_peak);
	}
}

void cordon_cgroup_destroy(struct cordon_cgroup *cg)
{
	for (size_t i = 0; i < cg->n; i++) {
		int r = cordon_cgroup_remove_tree(cg->dir[i], true);

		if (r == -ELOOP)
			cordon_warn("could not remove cgroup %s: its tree is too deep", cg->dir[i]);
		else if (r < 0)
			cordon_warn("could not remove cgroup %s: %s", cg->dir[i], strerror(-r));
		free(cg->dir[i]);
		cg->dir[i] = NULL;
	}
	cg->n = 0;
	cordon_closep(&cg->v2_fd);
	cordon_closep(&cg->device_prog_fd);
}
