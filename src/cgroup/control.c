// SPDX-License-Identifier: Apache-2.0
/*
 * A live sandbox's cgroups, from a command other than its supervisor:
 * freeze and thaw (cordon pause, resume), change limits (cordon update).
 * The directories come from the sandbox's state; what each one carries
 * is read off the files the kernel made in it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "cgroup-internal.h"

/* How long a freeze may take before it is undone and reported. */
#define FREEZE_WAIT_MS 5000
#define FREEZE_POLL_MS 2

static bool has_file(const char *dir, const char *file)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file);

	return access(path, F_OK) == 0;
}

/* The first line of DIR/FILE (malloc'd), or NULL. */
static char *read_line(const char *dir, const char *file)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/%s", dir, file);
	char *text = NULL;

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

void cordon_cgroup_open(const char *const *dirs, size_t n, struct cordon_cgroup *cg)
{
	memset(cg, 0, sizeof(*cg));
	cg->v2_fd = -1;
	cg->device_prog_fd = -1;
	cg->enforced = true;
	for (size_t i = 0; i < n && cg->n < CORDON_CGROUP_MAX_HIER; i++) {
		const char *d = dirs[i];
		/* Only a v2 cgroup has cgroup.controllers. */
		bool v2 = has_file(d, "cgroup.controllers");
		unsigned c = 0;

		if (has_file(d, v2 ? "memory.max" : "memory.limit_in_bytes"))
			c |= CORDON_CTRL_MEMORY;
		if (has_file(d, v2 ? "cpu.max" : "cpu.cfs_quota_us"))
			c |= CORDON_CTRL_CPU;
		if (has_file(d, "pids.max"))
			c |= CORDON_CTRL_PIDS;
		if (has_file(d, v2 ? "cgroup.freeze" : "freezer.state"))
			c |= CORDON_CTRL_FREEZER;
		cg->dir[cg->n] = cordon_xstrdup(d);
		cg->ctrls[cg->n] = c;
		cg->v2[cg->n] = v2;
		cg->n++;
	}
}

void cordon_cgroup_close(struct cordon_cgroup *cg)
{
	for (size_t i = 0; i < cg->n; i++)
		free(TAKE_PTR(cg->dir[i]));
	cg->n = 0;
	cordon_closep(&cg->v2_fd);
	cordon_closep(&cg->device_prog_fd);
}

/* The directory carrying ctrl; a v1 freezer wins over v2's cgroup.freeze. */
static int dir_with(const struct cordon_cgroup *cg, unsigned ctrl)
{
	for (size_t i = 0; i < cg->n; i++)
		if (!cg->v2[i] && (cg->ctrls[i] & ctrl))
			return (int)i;
	for (size_t i = 0; i < cg->n; i++)
		if (cg->v2[i] && (cg->ctrls[i] & ctrl))
			return (int)i;
	return -1;
}

int cordon_cgroup_frozen(const struct cordon_cgroup *cg)
{
	int i = dir_with(cg, CORDON_CTRL_FREEZER);
	_cleanup_free_ char *v = NULL;

	if (i < 0)
		return -1;
	v = read_line(cg->dir[i], cg->v2[i] ? "cgroup.freeze" : "freezer.state");
	if (!v)
		return -1;
	return strcmp(v, cg->v2[i] ? "1" : "FROZEN") == 0;
}

/* v2: cgroup.events says "frozen 1" once every process is. */
static bool v2_events_frozen(const char *dir)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/cgroup.events", dir), *text = NULL;

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return false;
	return strstr(text, "frozen 1") != NULL;
}

int cordon_cgroup_freeze(const struct cordon_cgroup *cg, bool frozen, struct cordon_error *err)
{
	int i = dir_with(cg, CORDON_CTRL_FREEZER);
	const char *dir, *file, *value;

	if (i < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"the container has no freezer cgroup (rootless on cgroup "
					"v1 or hybrid: no cgroup is delegated)");
	dir = cg->dir[i];
	file = cg->v2[i] ? "cgroup.freeze" : "freezer.state";
	value = cg->v2[i] ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
	if (cgroup_write(dir, file, value, err) < 0)
		return -1;
	if (!frozen)
		return 0;
	/*
	 * v1 says FREEZING until every task stopped; a task that forks
	 * meanwhile can leave it there, so the request is repeated, as
	 * runc does. v2 reports completion in cgroup.events.
	 */
	for (int t = 0; t < FREEZE_WAIT_MS / FREEZE_POLL_MS; t++) {
		_cleanup_free_ char *state = NULL;

		if (cg->v2[i]) {
			if (v2_events_frozen(dir))
				return 0;
		} else {
			state = read_line(dir, file);
			if (state && strcmp(state, "FROZEN") == 0)
				return 0;
			if (cgroup_write(dir, file, "FROZEN", err) < 0)
				break;
		}
		/* A signal to the command (pause, kill --all) ends the wait. */
		if (cordon_wait_ms(FREEZE_POLL_MS) < 0) {
			cordon_interrupt_error(err, "freezing %s", dir);
			break;
		}
	}
	/* Not frozen in time: never leave it half frozen. */
	cgroup_write(dir, file, cg->v2[i] ? "0" : "THAWED", &(struct cordon_error){ 0 });
	if (err->code == CORDON_OK)
		cordon_error_set(err, CORDON_E_CGROUP, ETIMEDOUT, "freezing %s", dir);
	return -1;
}

static int need_dir(const struct cordon_cgroup *cg, unsigned ctrl, const char *what,
		    struct cordon_error *err)
{
	int i = dir_with(cg, ctrl);

	if (i < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"%s: the container has no %s cgroup (rootless on cgroup v1 "
					"or hybrid: no cgroup is delegated)",
					what,
					ctrl == CORDON_CTRL_MEMORY ? "memory" :
					ctrl == CORDON_CTRL_CPU	   ? "cpu" :
								     "pids");
	return i;
}

/* v1: -1 is unlimited; v2: "max". */
static void limit_text(int64_t v, bool v2, char *buf, size_t len)
{
	if (v < 0)
		snprintf(buf, len, "%s", v2 ? "max" : "-1");
	else
		snprintf(buf, len, "%" PRId64, v);
}

/*
 * v1 keeps memory.limit_in_bytes <= memory.memsw.limit_in_bytes at every
 * step: raising both writes memsw first, lowering both memory first.
 */
static int memory_v1(const char *dir, const struct cordon_resources *res, struct cordon_error *err)
{
	bool memsw = has_file(dir, "memory.memsw.limit_in_bytes");
	char mem[32], swap[32];
	struct cordon_error first = { 0 };

	limit_text(res->memory_limit, false, mem, sizeof(mem));
	limit_text(res->memory_swap, false, swap, sizeof(swap));
	if (res->memory_swap && !memsw)
		return cordon_error_set(err, CORDON_E_CGROUP, 0,
					"--memory-swap: this kernel has no swap accounting "
					"(memory.memsw.*; boot with swapaccount=1)");
	if (!res->memory_swap) {
		/* Unlimited memory with limited memory + swap is refused: lift both, as runc. */
		if (res->memory_limit < 0 && memsw &&
		    cgroup_write(dir, "memory.memsw.limit_in_bytes", "-1", err) < 0)
			return -1;
		if (cgroup_write(dir, "memory.limit_in_bytes", mem, err) < 0)
			return err->errnum == EINVAL && memsw ?
				       cordon_error_set(err, CORDON_E_CGROUP, EINVAL,
							"memory %s: above the limit of memory + "
							"swap (give the swap limit too)",
							mem) :
				       -1;
		return 0;
	}
	if (!res->memory_limit)
		return cgroup_write(dir, "memory.memsw.limit_in_bytes", swap, err);
	if (cgroup_write(dir, "memory.limit_in_bytes", mem, &first) == 0)
		return cgroup_write(dir, "memory.memsw.limit_in_bytes", swap, err);
	if (cgroup_write(dir, "memory.memsw.limit_in_bytes", swap, err) < 0)
		return -1;
	return cgroup_write(dir, "memory.limit_in_bytes", mem, err);
}

static int memory_v2(const char *dir, const struct cordon_resources *res, struct cordon_error *err)
{
	char buf[32];

	if (res->memory_limit) {
		limit_text(res->memory_limit, true, buf, sizeof(buf));
		if (cgroup_write(dir, "memory.max", buf, err) < 0)
			return -1;
	}
	if (res->memory_swap) {
		/* v2 limits swap alone: memory + swap minus the memory limit. */
		if (res->memory_swap < 0)
			snprintf(buf, sizeof(buf), "max");
		else if (res->memory_limit > 0)
			snprintf(buf, sizeof(buf), "%" PRId64,
				 res->memory_swap - res->memory_limit);
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--memory-swap needs --memory on cgroup v2");
		if (cgroup_write(dir, "memory.swap.max", buf, err) < 0)
			return -1;
	}
	return 0;
}

static int cpu_v1(const char *dir, const struct cordon_resources *res, struct cordon_error *err)
{
	char buf[32];

	if (res->cpu_period && cgroup_write_u64(dir, "cpu.cfs_period_us", res->cpu_period, err) < 0)
		return -1;
	if (res->cpu_quota) {
		limit_text(res->cpu_quota, false, buf, sizeof(buf));
		if (cgroup_write(dir, "cpu.cfs_quota_us", buf, err) < 0)
			return -1;
	}
	if (res->cpu_shares && cgroup_write_u64(dir, "cpu.shares", res->cpu_shares, err) < 0)
		return -1;
	return 0;
}

static int cpu_v2(const char *dir, const struct cordon_resources *res, struct cordon_error *err)
{
	char buf[64], quota[32];

	if (res->cpu_quota || res->cpu_period) {
		_cleanup_free_ char *now = read_line(dir, "cpu.max");
		uint64_t period = res->cpu_period;

		/* cpu.max is "QUOTA PERIOD": keep the half not asked for. */
		if (res->cpu_quota) {
			limit_text(res->cpu_quota, true, quota, sizeof(quota));
		} else {
			snprintf(quota, sizeof(quota), "%s", now ? now : "max");
			quota[strcspn(quota, " ")] = '\0';
		}
		if (!period && (!now || !strchr(now, ' ') ||
				cordon_parse_u64(strchr(now, ' ') + 1, &period) < 0))
			period = CORDON_CPU_PERIOD_US;
		snprintf(buf, sizeof(buf), "%s %" PRIu64, quota, period);
		if (cgroup_write(dir, "cpu.max", buf, err) < 0)
			return -1;
	}
	if (res->cpu_shares &&
	    cgroup_write_u64(dir, "cpu.weight", cordon_shares_to_weight(res->cpu_shares), err) < 0)
		return -1;
	return 0;
}

int cordon_cgroup_update(const struct cordon_cgroup *cg, const struct cordon_resources *res,
			 struct cordon_error *err)
{
	int i;

	if ((res->cpus && *res->cpus) || (res->mems && *res->mems) || res->n_devices ||
	    res->memory_reservation > 0 || res->has_swappiness || res->disable_oom_killer ||
	    res->n_unified)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"update: only memory limit and swap, cpu shares, quota "
					"and period, and the pids limit can be changed");
	if (res->memory_limit || res->memory_swap) {
		if ((i = need_dir(cg, CORDON_CTRL_MEMORY, "memory", err)) < 0 ||
		    (cg->v2[i] ? memory_v2 : memory_v1)(cg->dir[i], res, err) < 0)
			return -1;
	}
	if (res->cpu_quota || res->cpu_period || res->cpu_shares) {
		if ((i = need_dir(cg, CORDON_CTRL_CPU, "cpu", err)) < 0 ||
		    (cg->v2[i] ? cpu_v2 : cpu_v1)(cg->dir[i], res, err) < 0)
			return -1;
	}
	if (res->pids_limit) {
		char buf[32];

		if ((i = need_dir(cg, CORDON_CTRL_PIDS, "pids", err)) < 0)
			return -1;
		snprintf(buf, sizeof(buf), "%" PRId64, res->pids_limit);
		if (cgroup_write(cg->dir[i], "pids.max", res->pids_limit < 0 ? "max" : buf, err) < 0)
			return -1;
	}
	return 0;
}
