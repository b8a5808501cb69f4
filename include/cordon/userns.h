/* SPDX-License-Identifier: Apache-2.0 */
/*
 * userns: which ids a sandbox maps, and writing those maps.
 *
 * Three cases (docs/architecture.md, "Users"):
 *  - rootless, single id: the caller's uid/gid become the workload's
 *    uid/gid; nothing else is mapped; setgroups is denied.
 *  - rootless with /etc/subuid and /etc/subgid entries and newuidmap/
 *    newgidmap: the caller still becomes the workload's id, and the
 *    subordinate range fills every other id from 0 up.
 *  - rootful: 65536 ids from /etc/subuid's "cordon" entry, else from the
 *    fixed range CORDON_ROOTFUL_UID_BASE; sandbox id N is host id base+N.
 */
#ifndef CORDON_USERNS_H
#define CORDON_USERNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/core.h"

#define CORDON_IDMAP_MAX_EXTENTS 8
#define CORDON_SUBID_WANTED 65536u

struct cordon_idmap_extent {
	uint32_t inside;  /* first id inside the namespace */
	uint32_t outside; /* first id in the parent namespace */
	uint32_t count;
};

struct cordon_idmap {
	struct cordon_idmap_extent extent[CORDON_IDMAP_MAX_EXTENTS];
	size_t n;
};

struct cordon_subid {
	uint32_t start;
	uint32_t count;
};

struct cordon_idplan {
	struct cordon_idmap uid;
	struct cordon_idmap gid;
	bool use_helpers;    /* write through newuidmap/newgidmap */
	bool deny_setgroups; /* single-id rootless maps need setgroups "deny" */
};

/*
 * Find the caller's entry in a subuid/subgid file (by name or number).
 * Returns 1 and fills *out with the first entry of at least 65536 ids (or
 * else the largest), 0 when there is none, negative errno on read errors
 * other than a missing file.
 */
int cordon_subid_lookup(const char *path, const char *name, uint32_t id,
			struct cordon_subid *out);

/* The rootless map: caller → target, the optional range fills the rest. */
void cordon_idmap_rootless(uint32_t host_id, uint32_t target, const struct cordon_subid *sub,
			   struct cordon_idmap *out);
/* The rootful map: [0, count) → [base, base+count). */
void cordon_idmap_range(uint32_t base, uint32_t count, struct cordon_idmap *out);
/* The same ids inside and outside: the nested namespace's map. */
void cordon_idmap_identity_of(const struct cordon_idmap *outer, struct cordon_idmap *out);
/* Host (parent-side) id of inside id `id`, or -1 when unmapped. */
int64_t cordon_idmap_to_outside(const struct cordon_idmap *map, uint32_t id);

/* "inside outside count\n" lines, as /proc/PID/uid_map takes them. */
size_t cordon_idmap_format(const struct cordon_idmap *map, char *buf, size_t len);

/*
 * Decide the plan for the calling user and a workload id (uid, gid).
 * Fails with CORDON_E_USERNS when the workload id cannot be mapped.
 */
int cordon_userns_plan(uid_t target_uid, gid_t target_gid, struct cordon_idplan *plan,
		       struct cordon_error *err);

/* Write a plan's maps for process pid (from its parent namespace). */
int cordon_userns_write(pid_t pid, const struct cordon_idplan *plan, struct cordon_error *err);

/* Write maps directly (the caller holds CAP_SETUID/CAP_SETGID over pid's ns). */
int cordon_userns_write_direct(pid_t pid, const struct cordon_idmap *uid,
			       const struct cordon_idmap *gid, bool deny_setgroups,
			       struct cordon_error *err);

/*
 * A new user namespace with the given maps, as an fd (for idmapped
 * mounts). Costs one short-lived child process.
 */
int cordon_userns_open(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
		       struct cordon_error *err);
/*
 * The same, without waiting for the child to end: its exit (a wake-up,
 * an exit, a reap: up to milliseconds on a loaded machine) leaves the
 * caller's critical path. cordon_userns_reap() waits for it; so does the
 * next open of either kind (they share the child's stack).
 */
int cordon_userns_open_async(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
			     struct cordon_error *err);
void cordon_userns_reap(void);

/* --- the sandbox's namespace limits (/proc/sys/user) ---------------------- */

/*
 * The kernel's per-user-namespace counts ("ucounts"): a count charged in
 * a namespace is charged as well, up to the initial namespace, to each
 * ancestor's entry for the uid that owns the child. Everything the
 * sandbox creates is therefore charged to its owner on the host (host
 * root, or the caller), whose own limit (128 inotify instances by
 * default) the sandbox could exhaust. A limit written in the sandbox's
 * own namespace bounds what all of it together may hold (docs/security.md).
 * max_user_namespaces is not among them: the workload's is 0, always.
 */
enum cordon_user_limit {
	CORDON_USER_LIMIT_INOTIFY_INSTANCES,
	CORDON_USER_LIMIT_INOTIFY_WATCHES,
	CORDON_USER_LIMIT_FANOTIFY_GROUPS,
	CORDON_USER_LIMIT_FANOTIFY_MARKS,
	CORDON_USER_LIMIT_IPC_NAMESPACES,
	CORDON_USER_LIMIT_MNT_NAMESPACES,
	CORDON_USER_LIMIT_NET_NAMESPACES,
	CORDON_USER_LIMIT_PID_NAMESPACES,
	CORDON_USER_LIMIT_UTS_NAMESPACES,
	CORDON_USER_LIMIT_CGROUP_NAMESPACES,
	CORDON_USER_LIMIT_TIME_NAMESPACES,
	CORDON_USER_LIMIT_COUNT
};

struct cordon_user_limits {
	int64_t value[CORDON_USER_LIMIT_COUNT]; /* written; -1: not (no such limit here) */
	int64_t host[CORDON_USER_LIMIT_COUNT];	/* the caller's namespace's, -1 when absent */
	uint32_t given; /* bit i: value[i] was asked for (--user-limit, linux.sysctl) */
};

/* The sysctl's name in /proc/sys/user ("max_inotify_instances"). */
const char *cordon_user_limit_name(enum cordon_user_limit limit);
/* The limit called name, or -1 when cordon does not set one of that name. */
int cordon_user_limit_from_name(const char *name);
void cordon_user_limits_init(struct cordon_user_limits *limits);
/*
 * Ask for value (a decimal integer, 0..INT_MAX) of limit name; a limit
 * asked for twice is refused. Errors are CORDON_E_USAGE and name both.
 */
int cordon_user_limit_set(struct cordon_user_limits *limits, const char *name, const char *value,
			  struct cordon_error *err);
/* --user-limit NAME=N. */
int cordon_user_limit_parse(const char *arg, struct cordon_user_limits *limits,
			    struct cordon_error *err);
/*
 * Read the caller's own limits and settle every value: a given one must
 * exist on this kernel and not exceed the caller's (error code `code`);
 * the rest get cordon's default, the smaller of a fixed cap and an eighth
 * of the caller's.
 */
int cordon_user_limits_resolve(struct cordon_user_limits *limits, enum cordon_code code,
			       struct cordon_error *err);
/*
 * Write the settled values into the calling process's own user namespace
 * (the /proc/sys/user that any procfs shows it); needs CAP_SYS_RESOURCE there.
 */
int cordon_user_limits_write(const struct cordon_user_limits *limits, struct cordon_error *err);

#endif
