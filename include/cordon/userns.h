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

#endif
