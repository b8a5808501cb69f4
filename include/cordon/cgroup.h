/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup: resource limits on every layout users have -- pure cgroup v2,
 * legacy v1, and hybrid (v1 controllers plus cgroup2 at
 * /sys/fs/cgroup/unified). The layout is detected once per start; each
 * sandbox gets its own directory in every hierarchy it uses (cordon-ID
 * below the caller's cgroup, or an OCI linux.cgroupsPath), created before
 * the workload runs and removed after.
 */
#ifndef CORDON_CGROUP_H
#define CORDON_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/core.h"

#define CORDON_CGROUP_MAX_HIER 16
#define CORDON_PIDS_DEFAULT 512
#define CORDON_CPU_PERIOD_US 100000

enum cordon_cgroup_kind {
	CORDON_CGROUP_NONE,   /* nothing mounted at /sys/fs/cgroup */
	CORDON_CGROUP_V1,     /* controllers in v1 hierarchies only */
	CORDON_CGROUP_V2,     /* /sys/fs/cgroup is cgroup2 */
	CORDON_CGROUP_HYBRID, /* v1 controllers + cgroup2 at /sys/fs/cgroup/unified */
};

/* Controllers cordon uses (bit flags). */
enum {
	CORDON_CTRL_MEMORY = 1 << 0,
	CORDON_CTRL_CPU = 1 << 1,
	CORDON_CTRL_CPUACCT = 1 << 2,
	CORDON_CTRL_PIDS = 1 << 3,
	CORDON_CTRL_CPUSET = 1 << 4,
	CORDON_CTRL_DEVICES = 1 << 5,
	/* v1's freezer hierarchy, or any v2 cgroup (cgroup.freeze, 5.2+) */
	CORDON_CTRL_FREEZER = 1 << 6,
	/*
	 * Not a controller: a directory in the cgroup2 hierarchy even when it
	 * carries none (hybrid layouts), so that cgroup2 tools and the
	 * unified /proc/PID/cgroup line show the sandbox, as runc does.
	 */
	CORDON_CTRL_UNIFIED = 1 << 7,
};

/*
 * Controllers wanted in cordon_cgroup_create without a limit: the
 * outcomes of --result-json, and everything an OCI container may later
 * be paused, updated or listed through (cordon pause, update, ps).
 */
#define CORDON_CGROUP_WANT_STATS \
	(CORDON_CTRL_MEMORY | CORDON_CTRL_CPU | CORDON_CTRL_CPUACCT | CORDON_CTRL_PIDS)
#define CORDON_CGROUP_WANT_OCI \
	(CORDON_CGROUP_WANT_STATS | CORDON_CTRL_FREEZER | CORDON_CTRL_UNIFIED)

/*
 * Where a sandbox's cgroup goes in each hierarchy. With path (an OCI
 * linux.cgroupsPath in runc's cgroupfs form): an absolute path is taken
 * from each hierarchy's root, a relative one from the caller's cgroup
 * there; missing parents are made (and left at the end, as runc leaves
 * them); an existing empty cgroup there is taken over, one holding
 * processes or child cgroups is refused. Without path: cordon-ID below
 * parent (--cgroup-parent, from each root) or below the caller's cgroup;
 * that one may not exist yet.
 */
struct cordon_cgroup_place {
	const char *id;
	const char *parent;
	const char *path;
};

/*
 * The place's path from a hierarchy's root ("/a/b"), given the caller's
 * cgroup in it (pure; unit tested). "//" and "/./" are collapsed.
 * *start: how many leading components are the base (the root, the
 * parent or the caller's cgroup), which cordon does not create. NULL for
 * a ".." component or a path that is the hierarchy's root itself.
 */
char *cordon_cgroup_place_path(const struct cordon_cgroup_place *place, const char *caller,
			       size_t *start);
/*
 * The base of the place's path (its first *start components: the root,
 * --cgroup-parent or the caller's cgroup), "/" for the root; NULL where
 * cordon_cgroup_place_path refuses the place. Pure; unit tested.
 */
char *cordon_cgroup_place_base(const struct cordon_cgroup_place *place, const char *caller);

struct cordon_cgroup_hier {
	char *mount;      /* where it is mounted */
	char *path;       /* the caller's cgroup in it (from /proc/self/cgroup) */
	unsigned ctrls;   /* CORDON_CTRL_* it carries */
	char *ctrl_names; /* as the kernel lists them ("cpu,cpuacct", or v2's) */
	char *ctrl_from;  /* v2: the cgroup whose cgroup.controllers gave ctrls */
	bool v2;
};

struct cordon_cgroup_layout {
	enum cordon_cgroup_kind kind;
	struct cordon_cgroup_hier hier[CORDON_CGROUP_MAX_HIER];
	size_t n;
};

/* Resource requests; 0 = not requested. */
struct cordon_limits {
	uint64_t memory;      /* bytes */
	uint64_t memory_swap; /* bytes, memory + swap, as Docker defines it */
	uint64_t cpu_quota;   /* µs per period */
	uint64_t cpu_period;  /* µs */
	uint64_t pids;
	bool pids_default;    /* pids is the default, not a request */
	bool best_effort;     /* --limits best-effort */
};

/* Outcomes for --result-json; *_known false when the kernel does not say. */
struct cordon_cgroup_stats {
	bool enforced;
	bool oom_killed;
	bool memory_peak_known, cpu_usage_known, pids_peak_known;
	uint64_t memory_peak;
	uint64_t cpu_usage_us;
	uint64_t pids_peak;
};

struct cordon_cgroup {
	char *dir[CORDON_CGROUP_MAX_HIER]; /* created directory per hierarchy, or NULL */
	unsigned ctrls[CORDON_CGROUP_MAX_HIER];
	bool v2[CORDON_CGROUP_MAX_HIER];
	size_t n;
	bool enforced;
	int v2_fd; /* directory fd of the v2 cgroup (for CLONE_INTO_CGROUP), or -1 */
	int device_prog_fd; /* the attached v2 device program, or -1 */
};

/* One OCI linux.resources.devices rule; -1 major/minor = any. */
struct cordon_device_rule {
	bool allow;
	char type;       /* 'a' (all), 'c' or 'b' */
	int64_t major;
	int64_t minor;
	char access[4];  /* subset of "rwm" */
};

/*
 * The OCI linux.resources object (runtime-spec 1.2), as far as cordon
 * applies it. 0 / NULL means "not set" (OCI's absent field); memory_swap
 * is memory + swap as in the OCI spec.
 */
struct cordon_resources {
	int64_t memory_limit;
	int64_t memory_reservation;
	int64_t memory_swap;
	uint64_t cpu_shares;
	int64_t cpu_quota;
	uint64_t cpu_period;
	char *cpus; /* cpuset.cpus, e.g. "0-1" */
	char *mems; /* cpuset.mems */
	int64_t pids_limit;
	struct cordon_device_rule *devices;
	size_t n_devices;
	bool has_swappiness;
	uint64_t memory_swappiness; /* v1 memory.swappiness, 0..100 (v2 has none) */
	bool disable_oom_killer;    /* v1 memory.oom_control 1 (v2 has none) */
	char **unified;             /* cgroup v2 files: name, value, ... (CONTROLLER.KEY) */
	size_t n_unified;           /* pairs */
};

/* v1 cpu.shares → v2 cpu.weight (the kernel's documented mapping). */
uint64_t cordon_shares_to_weight(uint64_t shares);
/* Parse "c 1:3 rwm" style rules (also used for tests): type major:minor access. */
int cordon_device_rule_parse(const char *text, bool allow, struct cordon_device_rule *rule,
			     struct cordon_error *err);
/*
 * A container's device rules: the config's, then an allow rule for each
 * device of cordon's /dev (null, zero, full, random, urandom, tty, ptmx,
 * the ptys) so that a deny-all config leaves the container working, as
 * runc and crun append theirs. A device the config denies by name (a
 * deny rule with its type, major and minor) is not allowed again: the
 * config's rules decide for it alone. Pure; malloc'd, *n_out set.
 */
struct cordon_device_rule *cordon_device_rules_container(const struct cordon_device_rule *rules,
							  size_t n, size_t *n_out);

/*
 * The OCI create path: memory, swap, cpu and pids go through
 * cordon_cgroup_create (via cordon_resources_to_limits); this adds the
 * rest to the sandbox's cgroups, making a hierarchy's directory where
 * it has none yet: memory reservation (v1 memory.soft_limit_in_bytes,
 * v2 memory.low), swappiness and disableOOMKiller (v1 memory.swappiness
 * and memory.oom_control; cgroup v2 has neither: an error when set),
 * linux.resources.unified (each file written in the container's cgroup2
 * directory as given), cpu shares (v1 cpu.shares, v2 cpu.weight), cpuset
 * cpus/mems, and device rules as given (v1 devices.allow/deny; v2 a
 * BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup). Each
 * value needs its controller (CORDON_E_CGROUP otherwise).
 */
void cordon_resources_to_limits(const struct cordon_resources *res, struct cordon_limits *l);
int cordon_cgroup_apply_resources(const struct cordon_cgroup_layout *layout,
				  const struct cordon_cgroup_place *place,
				  const struct cordon_resources *res, struct cordon_cgroup *cg,
				  struct cordon_error *err);
/*
 * A container's linux.resources at create: cordon_cgroup_apply_resources
 * with the device rules of cordon_device_rules_container. Rootless, a
 * device rule that cannot be applied (no devices cgroup or BPF program
 * may be made) is skipped with a warning, as runc skips it: the
 * container's /dev holds only cordon's devices and its user namespace
 * cannot make others.
 */
int cordon_cgroup_apply_container(const struct cordon_cgroup_layout *layout,
				  const struct cordon_cgroup_place *place,
				  const struct cordon_resources *res, struct cordon_cgroup *cg,
				  struct cordon_error *err);

/*
 * Parse the layout from the text of /proc/self/mountinfo and
 * /proc/self/cgroup (pure: unit tested on fixtures). kind is decided by
 * the caller from statfs, or by cordon_cgroup_detect.
 */
int cordon_cgroup_layout_parse(const char *mountinfo, const char *self_cgroup,
			       struct cordon_cgroup_layout *layout, struct cordon_error *err);
/*
 * statfs of /sys/fs/cgroup and /sys/fs/cgroup/unified, then the parse; a
 * v2 hierarchy's controllers are those of the caller's cgroup.
 */
int cordon_cgroup_detect(struct cordon_cgroup_layout *layout, struct cordon_error *err);
/*
 * A v2 hierarchy's controllers are read again from the cgroup the sandbox's
 * is made below (cordon_cgroup_place_base: --cgroup-parent, the root for
 * an absolute linux.cgroupsPath, else the caller's cgroup), which decides
 * what it can have. A base that cannot be read keeps the caller's: making
 * the cgroup there fails and says why.
 */
void cordon_cgroup_layout_place(struct cordon_cgroup_layout *layout,
				const struct cordon_cgroup_place *place);
/*
 * Where the sandbox's cgroup is in each hierarchy of the layout, whether
 * or not it will have one there, when nothing is there yet
 * (NULL-terminated, *n of them): what a run records before it makes any,
 * so that a crash while it makes them leaves nothing the sweep cannot
 * find. A place cordon_cgroup_place_path refuses gives none.
 */
char **cordon_cgroup_layout_leaves(const struct cordon_cgroup_layout *layout,
				   const struct cordon_cgroup_place *place, size_t *n);
void cordon_cgroup_layout_free(struct cordon_cgroup_layout *layout);
const char *cordon_cgroup_kind_name(enum cordon_cgroup_kind kind);

/* "0.5" → quota 50000 µs per 100000 µs period. */
int cordon_cpus_to_quota(const char *cpus, uint64_t *quota, uint64_t *period);
/*
 * Docker's swap semantics: memory_swap is memory + swap; equal to memory
 * means no swap; unset means swap = memory (twice the memory in total).
 * Returns the swap-only amount for cgroup v2's memory.swap.max.
 */
int cordon_swap_only(const struct cordon_limits *l, uint64_t *swap, struct cordon_error *err);

/*
 * Create the sandbox's cgroups at place for the requested limits and
 * write them. want: controllers (CORDON_CGROUP_WANT_*) whose cgroup is
 * made even without a limit, where the caller may make one. A limit that
 * cannot be enforced fails with CORDON_E_CGROUP unless best_effort, in
 * which case cg->enforced is false. A cgroup in use (see
 * cordon_cgroup_place) always fails with CORDON_E_CGROUP.
 */
int cordon_cgroup_create(const struct cordon_cgroup_layout *layout,
			 const struct cordon_cgroup_place *place, const struct cordon_limits *limits,
			 unsigned want, struct cordon_cgroup *cg, struct cordon_error *err);
/*
 * Delegate the sandbox's cgroup2 directory to uid:gid (the container's
 * root): the directory, cgroup.procs, cgroup.threads and
 * cgroup.subtree_control, as the kernel documents delegation. Inside its
 * cgroup namespace the container may then make cgroups below its own and
 * move its processes between them; the limits of its own cgroup stay
 * root's. 0 or -1 (CORDON_E_CGROUP).
 */
int cordon_cgroup_delegate(const struct cordon_cgroup *cg, uid_t uid, gid_t gid,
			   struct cordon_error *err);
/* Move pid into every cgroup of the sandbox. */
int cordon_cgroup_attach(const struct cordon_cgroup *cg, pid_t pid, struct cordon_error *err);
void cordon_cgroup_stats(const struct cordon_cgroup *cg, struct cordon_cgroup_stats *st);
/* Remove the directories and every cgroup below them (see cordon_cgroup_remove_tree, with
 * kill). Idempotent. */
void cordon_cgroup_destroy(struct cordon_cgroup *cg);
/*
 * Remove dir, a sandbox's cgroup, and every cgroup below it (the workload
 * may have made some), depth-first, by fd: no symlink is followed and
 * nothing outside dir's cgroup filesystem is touched. With kill, the
 * processes still in the tree are killed (cgroup.kill on v2, SIGKILL to
 * each member on v1) and the removal retried, boundedly; without (a sweep
 * of a dead sandbox's directories, which may be in use by someone else
 * by now), a tree that holds a process is left alone: -EBUSY. -EINVAL
 * when dir is not a cgroup or is a hierarchy's root. 0 when it is gone.
 */
int cordon_cgroup_remove_tree(const char *dir, bool kill);
/*
 * rmdir of dir alone, when it is a cgroup below a hierarchy's root: what a
 * plan names (cordon_state_plan_cgroups) had no child before the clone.
 * 0 when it is gone, -errno (-EBUSY: a process or a child in it).
 */
int cordon_cgroup_remove_empty(const char *dir);
/*
 * SIGKILL every process in dir's tree, as remove_tree's kill does
 * (cgroup.kill on v2; on v1 each member, a frozen cgroup thawed), without
 * removing anything. 0 (also when dir is gone) or -errno.
 */
int cordon_cgroup_kill_tree(const char *dir);
/*
 * The pids of every process in dir's tree (the cgroups a container made
 * below its own too), appended to the n in *pids (realloc'd) without
 * repeating one; returns the new count. Not thread-safe.
 */
size_t cordon_cgroup_tree_pids(const char *dir, pid_t **pids, size_t n);

/*
 * A live sandbox's cgroups, from another process (cordon pause, resume,
 * update, ps; src/cgroup/control.c). cordon_cgroup_open takes the
 * directories its state recorded and tells each one's controllers from
 * the files the kernel put in it, so no layout detection is needed;
 * cordon_cgroup_close frees the handle and leaves the directories.
 */
void cordon_cgroup_open(const char *const *dirs, size_t n, struct cordon_cgroup *cg);
void cordon_cgroup_close(struct cordon_cgroup *cg);
/*
 * Freeze (v1 freezer.state FROZEN, v2 cgroup.freeze 1) and wait until
 * every process is frozen, or thaw. CORDON_E_CGROUP when the sandbox has
 * no freezer (rootless on cgroup v1 and hybrid: nothing is delegated).
 * A freeze not done within 5 s, or whose wait a signal ended
 * (cordon_interrupt_arm: CORDON_E_STATE), is undone.
 */
int cordon_cgroup_freeze(const struct cordon_cgroup *cg, bool frozen, struct cordon_error *err);
/* 1 frozen, 0 not, -1 no freezer. */
int cordon_cgroup_frozen(const struct cordon_cgroup *cg);
/*
 * Change the limits of a live sandbox: memory.limit and .swap (memory +
 * swap; -1 unlimited), cpu.shares, .quota (-1 none) and .period,
 * pids.limit (-1 unlimited); 0 leaves a value as it is. Every value
 * asked for needs its controller's cgroup (CORDON_E_CGROUP otherwise).
 * cpus, mems, reservation and device rules are refused.
 */
int cordon_cgroup_update(const struct cordon_cgroup *cg, const struct cordon_resources *res,
			 struct cordon_error *err);

#endif
