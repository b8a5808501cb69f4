/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state: one directory per running sandbox under the state root
 * (/run/cordon as root; $XDG_RUNTIME_DIR/cordon or /tmp/cordon-UID
 * rootless), holding state.json with the owner's pid and start time so
 * that `cordon sweep` and every later run can tell a live sandbox from
 * the remains of a supervisor that was killed.
 */
#ifndef CORDON_STATE_H
#define CORDON_STATE_H

#include "cordon/core.h"
#include "cordon/spec.h"

struct cordon_state {
	int root_fd; /* the state root directory */
	char id[CORDON_ID_MAX + 1];
	bool created;
};

/* The state root for this caller (created 0700 if missing, owner checked). */
int cordon_state_root_open(const char *override, char **path_out, struct cordon_error *err);

/* Claim spec->id: fails with CORDON_E_STATE when the id is in use. */
int cordon_state_create(struct cordon_state *state, const struct cordon_spec *spec,
			struct cordon_error *err);
void cordon_state_remove(struct cordon_state *state);
/* Record the sandbox's cgroup directories, for a sweep after a crash. */
int cordon_state_record_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
				struct cordon_error *err);

/*
 * Remove the state of sandboxes whose owner is gone (pid and start time
 * checked), at most `budget` of them. Live sandboxes are never touched.
 * Returns the number removed.
 */
int cordon_state_sweep(int root_fd, unsigned budget);

/* Start time of a process in clock ticks since boot (field 22 of stat), 0 if gone. */
uint64_t cordon_proc_start_time(pid_t pid);

#endif
