// SPDX-License-Identifier: Apache-2.0
/* The OCI linux.resources object on a sandbox's cgroups. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-internal.h"

uint64_t cordon_shares_to_weight(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	/* [2, 262144] onto [1, 10000], as the kernel documents for cgroup v2. */
	return 1 + ((shares - 2) * 9999) / 262142;
}

void cordon_resources_to_limits(const struct cordon_resources *res, struct cordon_limits *l)
{
	if (res->memory_limit > 0)
		l->memory = (uint64_t)res->memory_limit;
	if (res->memory_swap > 0)
		l->memory_swap = (uint64_t)res->memory_swap;
	if (res->cpu_quota > 0) {
		l->cpu_quota = (uint64_t)res->cpu_quota;
		l->cpu_period = res->cpu_period ? res->cpu_period : CORDON_CPU_PERIOD_US;
	}
	if (res->pids_limit > 0) {
		l->pids = (uint64_t)res->pids_limit;
		l->pids_default = false;
	}
}

static int hier_with(const struct cordon_cgroup_layout *layout, unsigned ctrl, bool want_v2)
{
	for (size_t i = 0; i < layout->n; i++)
		if (layout->hier[i].v2 == want_v2 && (layout->hier[i].ctrls & ctrl))
			return (int)i;
	return -1;
}

int cgroup_dir_for(const struct cordon_cgroup_layout *layout, size_t h,
		   const struct cordon_cgroup_place *place, unsigned ctrl, struct cordon_cgroup *cg,
		   const char **dir, struct cordon_error *err)
{
	const struct cordon_cgroup_hier *hi = &layout->hier[h];
	size_t ml = strlen(hi->mount);
	char *made;
	bool taken;

	/* The sandbox's directories are all below their hierarchy's mount: one per mount. */
	for (size_t i = 0; i < cg->n; i++) {
		if (strncmp(cg->dir[i], hi->mount, ml) != 0 || cg->dir[i][ml] != '/')
			continue;
		/* v2: one directory for every controller; the new one is enabled on the way. */
		if (hi->v2 && cgroup_make_dir(hi, place, ctrl, true, &made, &taken, err) < 0)
			return -1;
		if (hi->v2)
			free(made);
		cg->ctrls[i] |= ctrl;
		*dir = cg->dir[i];
		return (int)i;
	}
	if (cg->n == CORDON_CGROUP_MAX_HIER)
		return cordon_error_set(err, CORDON_E_CGROUP, E2BIG, "too many hierarchies");
	if (cgroup_make_dir(hi, place, ctrl, false, &made, &taken, err) < 0)
		return -1;
	cg->dir[cg->n] = made;
	cg->v2[cg->n] = hi->v2;
	cg->ctrls[cg->n] = ctrl;
	*dir = cg->dir[cg->n];
	return (int)cg->n++;
}

/* Given cpus and mems; a new v1 cpuset already has its parent's (cgroup_make_dir). */
static int cpuset_write(const char *dir, const struct cordon_resources *res, struct cordon_error *err)
{
	if (res->cpus && *res->cpus && cgroup_write(dir, "cpuset.cpus", res->cpus, err) < 0)
		return -1;
	if (res->mems && *res->mems && cgroup_write(dir, "cpuset.mems", res->mems, err) < 0)
		return -1;
	return 0;
}

/* Whether controller (the name before the key's dot) is in dir's cgroup.controllers. */
static bool controller_available(const char *dir, const char *key)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/cgroup.controllers", dir), *text = NULL;
	size_t len = (size_t)(strchr(key, '.') - key);

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return false;
	for (char *w = text; *w;) {
		size_t n = strcspn(w, " \n");

		if (n == len && strncmp(w, key, len) == 0)
			return true;
		w += n;
		w += strspn(w, " \n");
	}
	return false;
}

/*
 * linux.resources.unified: each file of the container's cgroup2 directory
 * written as given (the parser checked the names). A file the kernel does
 * not have is an error naming it, with the reason when its controller is
 * not available there.
 */
static int apply_unified(const struct cordon_cgroup_layout *layout,
			 const struct cordon_cgroup_place *place, const struct cordon_resources *res,
			 struct cordon_cgroup *cg, struct cordon_error *err)
{
	const char *dir;
	int h = -1;

	for (size_t k = 0; k < layout->n && h < 0; k++)
		if (layout->hier[k].v2)
			h = (int)k;
	if (h < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"linux.resources.unified: needs cgroup v2 (this host has none)");
	if (cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_UNIFIED, cg, &dir, err) < 0)
		return cordon_error_wrap(err, "linux.resources.unified");
	for (size_t i = 0; i < res->n_unified; i++) {
		const char *key = res->unified[2 * i], *value = res->unified[2 * i + 1];
		_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, key);
		int r = cordon_write_file_at(AT_FDCWD, path, value, strlen(value));

		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r,
						"linux.resources.unified.%s = '%s'%s", key, value,
						controller_available(dir, key)
							? ""
							: " (its controller is not available in the "
							  "container's cgroup)");
	}
	return 0;
}

int cordon_cgroup_apply_resources(const struct cordon_cgroup_layout *layout,
				  const struct cordon_cgroup_place *place,
				  const struct cordon_resources *res, struct cordon_cgroup *cg,
				  struct cordon_error *err)
{
	bool v1;
	const char *dir;
	int h, i;

	/* memory.reservation: v1 soft limit, v2 memory.low */
	if (res->memory_reservation > 0) {
		v1 = (h = hier_with(layout, CORDON_CTRL_MEMORY, false)) >= 0;
		if (!v1 && (h = hier_with(layout, CORDON_CTRL_MEMORY, true)) < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, 0,
						"linux.resources.memory.reservation: no memory controller");
		if ((i = cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_MEMORY, cg, &dir, err)) < 0 ||
		    cgroup_write_u64(dir, v1 ? "memory.soft_limit_in_bytes" : "memory.low",
				     (uint64_t)res->memory_reservation, err) < 0)
			return cordon_error_wrap(err, "linux.resources.memory.reservation");
	}
	/* Knobs of v1's memory controller alone: set on v2, the config asks for what cannot be. */
	if (res->has_swappiness || res->disable_oom_killer) {
		const char *what = res->has_swappiness ? "linux.resources.memory.swappiness"
						       : "linux.resources.memory.disableOOMKiller";

		if ((h = hier_with(layout, CORDON_CTRL_MEMORY, false)) < 0)
			return cordon_error_set(
				err, CORDON_E_CGROUP, 0,
				"%s: needs a cgroup v1 memory controller (cgroup v2 has no such knob)",
				what);
		if ((i = cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_MEMORY, cg, &dir, err)) <
			    0 ||
		    (res->has_swappiness &&
		     cgroup_write_u64(dir, "memory.swappiness", res->memory_swappiness, err) < 0) ||
		    (res->disable_oom_killer && cgroup_write(dir, "memory.oom_control", "1", err) < 0))
			return cordon_error_wrap(err, "%s", what);
	}
	if (res->n_unified && apply_unified(layout, place, res, cg, err) < 0)
		return -1;
	if (res->cpu_shares) {
		v1 = (h = hier_with(layout, CORDON_CTRL_CPU, false)) >= 0;
		if (!v1 && (h = hier_with(layout, CORDON_CTRL_CPU, true)) < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, 0,
						"linux.resources.cpu.shares: no cpu controller");
		if ((i = cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_CPU, cg, &dir, err)) < 0 ||
		    cgroup_write_u64(dir, v1 ? "cpu.shares" : "cpu.weight",
				     v1 ? res->cpu_shares : cordon_shares_to_weight(res->cpu_shares),
				     err) < 0)
			return cordon_error_wrap(err, "linux.resources.cpu.shares");
	}
	if ((res->cpus && *res->cpus) || (res->mems && *res->mems)) {
		v1 = (h = hier_with(layout, CORDON_CTRL_CPUSET, false)) >= 0;
		if (!v1 && (h = hier_with(layout, CORDON_CTRL_CPUSET, true)) < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, 0,
						"linux.resources.cpu.cpus/mems: no cpuset controller");
		if ((i = cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_CPUSET, cg, &dir, err)) < 0 ||
		    cpuset_write(dir, res, err) < 0)
			return cordon_error_wrap(err, "linux.resources.cpu.cpus/mems");
	}
	if (res->n_devices) {
		v1 = (h = hier_with(layout, CORDON_CTRL_DEVICES, false)) >= 0;
		/* v2: any cgroup2 hierarchy takes a device program */
		for (size_t k = 0; !v1 && k < layout->n && h < 0; k++)
			if (layout->hier[k].v2)
				h = (int)k;
		if (h < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, 0,
						"linux.resources.devices: no devices controller and no cgroup2");
		if ((i = cgroup_dir_for(layout, (size_t)h, place, CORDON_CTRL_DEVICES, cg, &dir,
					err)) < 0 ||
		    (v1 ? cgroup_devices_v1(dir, res->devices, res->n_devices, err) < 0
			: cgroup_devices_v2(dir, res->devices, res->n_devices, &cg->device_prog_fd,
					    err) < 0))
			return cordon_error_wrap(err, "linux.resources.devices");
	}
	return 0;
}

int cordon_cgroup_apply_container(const struct cordon_cgroup_layout *layout,
				  const struct cordon_cgroup_place *place,
				  const struct cordon_resources *res, struct cordon_cgroup *cg,
				  struct cordon_error *err)
{
	struct cordon_resources rest = *res, devices = { 0 };
	_cleanup_free_ struct cordon_device_rule *rules = NULL;
	int e;

	rest.devices = NULL;
	rest.n_devices = 0;
	if (cordon_cgroup_apply_resources(layout, place, &rest, cg, err) < 0)
		return -1;
	if (!res->n_devices)
		return 0;
	rules = cordon_device_rules_container(res->devices, res->n_devices, &devices.n_devices);
	devices.devices = rules;
	if (cordon_cgroup_apply_resources(layout, place, &devices, cg, err) == 0)
		return 0;
	/*
	 * Rootless no devices cgroup can be made on v1 and hybrid, and no
	 * device program loaded on v2; runc skips the rules then. What they
	 * would guard is moot: the container's /dev has only cordon's
	 * devices, and its user namespace can make no others.
	 */
	e = err->errnum;
	if (cordon_host_root() || (e != EACCES && e != EPERM && e != EROFS))
		return -1;
	cordon_warn("linux.resources.devices: not applied (rootless: %s: %s)", err->msg, strerror(e));
	*err = (struct cordon_error){ 0 };
	return 0;
}
