/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state: one directory per sandbox under the state root (/run/cordon as
 * root; $XDG_RUNTIME_DIR/cordon or /tmp/cordon-UID rootless; --root DIR
 * overrides), holding state.json: the OCI state (status, the container
 * process's pid, bundle, annotations) plus the supervisor's pid and start
 * time, so that `cordon sweep` and every later run can tell a live
 * sandbox from the remains of a supervisor that was killed.
 *
 * The directory itself is the id claim (mkdir) and the lock: commands on
 * one id (start, state, kill, delete) hold flock(2) on it, and state.json
 * is replaced atomically (rename), so a reader never sees half of it.
 */
#ifndef CORDON_STATE_H
#define CORDON_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "cordon/core.h"
#include "cordon/spec.h"

/* The monitor's control socket in a container's directory (cordon start, exec, sweep). */
#define CORDON_STATE_MONITOR_SOCKET "monitor.sock"
/* Present while a live update of the network policy is asked for and not yet applied. */
#define CORDON_STATE_NET_UPDATE "net-update"
/* Its requests (a uint32_t each): see src/sandbox/sandbox-internal.h. */
#define CORDON_MONITOR_START 1
#define CORDON_MONITOR_NET_UPDATE 2
#define CORDON_MONITOR_NET_INFO 3
#define CORDON_MONITOR_EXEC 4
#define CORDON_MONITOR_STOP 5
/* The bundle's config.json as it was at create: what `cordon exec` confines by. */
#define CORDON_STATE_CONFIG "config.json"
/* A session's process confinement at create: what `cordon exec` confines by. */
#define CORDON_STATE_PROCESS "process.json"

enum cordon_status {
	CORDON_STATUS_CREATING,
	CORDON_STATUS_CREATED,
	CORDON_STATUS_RUNNING,
	CORDON_STATUS_STOPPED,
	/*
	 * Never written to state.json: a created or running container whose
	 * freezer cgroup is frozen (cordon pause) is reported paused.
	 */
	CORDON_STATUS_PAUSED,
};

const char *cordon_status_name(enum cordon_status status);

/* What made the sandbox: one state layout serves the three. */
enum cordon_state_kind {
	CORDON_KIND_RUN,     /* `cordon run ROOTFS -- CMD` */
	CORDON_KIND_SESSION, /* `cordon create ROOTFS`: idle, for `cordon exec` */
	CORDON_KIND_OCI,     /* a bundle's container (create --bundle, run --bundle) */
};

const char *cordon_state_kind_name(enum cordon_state_kind kind);

/* What state.json says. */
struct cordon_state_info {
	enum cordon_status status; /* as last written; see cordon_state_status */
	enum cordon_state_kind kind;
	bool kept;        /* created by `cordon create`: stays (stopped) until `cordon delete` */
	pid_t pid;        /* the container process (the workload), 0 before created */
	uint64_t pid_start;
	pid_t init_pid;   /* the sandbox's init (pid 1 inside) */
	uint64_t init_start;
	pid_t owner_pid;  /* the supervisor: `cordon run` or the monitor */
	uint64_t owner_start;
	char *bundle;     /* the bundle directory (absolute), or the rootfs for `cordon run` */
	char **annotations; /* key, value, ... NULL-terminated */
	size_t n_annotations;
	uint64_t created_ms; /* wall clock */
	char net_fingerprint[65]; /* the allowlist's in force ("" without one): exec --expect-fingerprint */
	/*
	 * Ownership (cordon sweep): the process that asked for the sandbox
	 * (create's caller; run itself) with its start time, and where: the
	 * host name and the boot (a pid and start time mean nothing on
	 * another host, nor after a reboot of this one).
	 */
	pid_t creator_pid;
	uint64_t creator_start;
	char *host;
	char *boot_id;
	char *version;    /* the cordon that made it */
	char **labels;    /* key, value, ... NULL-terminated (validated on read too) */
	size_t n_labels;
	uint64_t max_lifetime_ms; /* 0: none */
	uint64_t idle_timeout_ms; /* 0: none */
	bool has_exit;
	int exit_status;  /* stopped: the workload's status as `cordon run` exits (128+N) */
};

void cordon_state_info_free(struct cordon_state_info *info);

struct cordon_state {
	int root_fd; /* the state root directory */
	int dir_fd;  /* the sandbox's directory (flock'd while locked), or -1 */
	char id[CORDON_ID_MAX + 1];
	bool created; /* this process made the directory (and removes it on failure) */
	struct cordon_state_info info;
};

/* The state root (created 0700 if missing, owner checked). override: --root. */
int cordon_state_root_open(const char *override, char **path_out, struct cordon_error *err);

/*
 * Claim spec->id under the root (override: --root, or NULL): fails with
 * CORDON_E_STATE when the id is in use. The directory is returned locked
 * (cordon_state_unlock once the sandbox is created) with state.json
 * saying "creating", owned by the calling process.
 */
int cordon_state_create(struct cordon_state *state, const char *root, const struct cordon_spec *spec,
			bool kept, struct cordon_error *err);
/* Rewrite state.json from state->info (atomically). */
int cordon_state_save(struct cordon_state *state, struct cordon_error *err);
void cordon_state_unlock(struct cordon_state *state);
/* Remove the directory (its cgroups file is not acted on) and close. */
void cordon_state_remove(struct cordon_state *state);
/*
 * Before any is made: where the sandbox's cgroups may be (every
 * hierarchy's leaf not there yet, cordon_cgroup_layout_leaves), so that a
 * supervisor killed while it makes them leaves them to the sweep or to
 * delete. A planned directory is only ever removed, by rmdir alone (it
 * had no child before the clone): never killed in, paused, updated or
 * listed. A directory is one line: none may hold a newline.
 */
int cordon_state_plan_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
			      struct cordon_error *err);
/* Once made: the sandbox's cgroup directories (none: the file goes), replacing the plan. */
int cordon_state_record_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
				struct cordon_error *err);

/*
 * A command on an existing id: open and lock it (exclusive, or shared for
 * readers) and read state.json. CORDON_E_STATE "container ID does not
 * exist" when there is none.
 */
int cordon_state_open(struct cordon_state *state, const char *root, const char *id, bool exclusive,
		      struct cordon_error *err);

/*
 * Whether anything is recorded under ID (its directory, with or without a
 * state.json); true when that cannot be told, or ID is not a valid id.
 */
bool cordon_state_exists(const char *root, const char *id);
void cordon_state_close(struct cordon_state *state);
/*
 * The status as it is now: "created" or "running" whose supervisor is
 * gone, or whose container process has exited, is "stopped" --
 * once its init is gone too: while the init lives (its start time
 * checked) the status is the one recorded.
 */
enum cordon_status cordon_state_status(const struct cordon_state_info *info);
/*
 * A container recorded created or running that is stopped now (its
 * process and its init gone) while its supervisor lives: the supervisor
 * is about to record the end (stopped, the exit status). Wait for that record (or the supervisor's
 * exit) up to timeout_ms and take it into state->info. A supervisor that is gone records nothing:
 * nothing to wait for. 0, or -EINTR when a signal ended the wait (cordon_interrupt_arm).
 */
int cordon_state_settle(struct cordon_state *state, int timeout_ms);
/* Remove a dead sandbox's cgroups (those state recorded) and its directory. */
void cordon_state_destroy(struct cordon_state *state);
/* The sandbox's recorded cgroup directories (malloc'd, NULL-terminated; *n set). */
char **cordon_state_cgroup_dirs(const struct cordon_state *state, size_t *n);
/* Those still only planned: its supervisor died while it made them (the same form). */
char **cordon_state_cgroup_planned(const struct cordon_state *state, size_t *n);
/* A file of the state directory that holds the pid of who wrote it (on) or removed: a mark. 0 or -errno. */
int cordon_state_mark(const struct cordon_state *state, const char *name, bool on);
bool cordon_state_marked(const struct cordon_state *state, const char *name);
/* The pid that left a mark, or -errno (none, or not one cordon wrote). */
pid_t cordon_state_mark_owner(const struct cordon_state *state, const char *name);
/* Keep (0600) and read back the config.json a container was created from. */
int cordon_state_save_config(struct cordon_state *state, const char *text, size_t len,
			     struct cordon_error *err);
int cordon_state_read_config(const struct cordon_state *state, char **text, size_t *len,
			     struct cordon_error *err);
/* A session's process confinement (cordon_spec_session_json), for cordon exec. */
int cordon_state_save_process(struct cordon_state *state, const char *text, size_t len,
			      struct cordon_error *err);
int cordon_state_read_process(const struct cordon_state *state, char **text, size_t *len,
			      struct cordon_error *err);
/* Host pids of the processes in the sandbox's recorded cgroups (malloc'd); 0 when none. */
size_t cordon_state_cgroup_pids(const struct cordon_state *state, pid_t **pids);
/* The ids under the root, sorted (malloc'd, NULL-terminated). */
char **cordon_state_ids(int root_fd);

/*
 * cordon sweep (docs/architecture.md, "Ownership and sweep"): what is
 * provably orphaned goes, nothing else. REMOVE: a sandbox of this host
 * whose supervisor and init are gone (pid and start time checked): its
 * cgroups and directory. FORGET: one recorded on another host past its
 * lifetime cap, or before this host's last boot: its directory only.
 * STOP: a live session whose owner is gone or that outlived its cap: its
 * monitor is asked to end it (and removes it). Live sandboxes of live
 * owners, containers of `cordon create --bundle`, and entries that cannot
 * be read for sure are never touched. At most `budget` entries are acted
 * on; returns how many. report (may be NULL) hears of each with why.
 */
enum cordon_sweep_action {
	CORDON_SWEEP_KEEP,
	CORDON_SWEEP_REMOVE,
	CORDON_SWEEP_FORGET,
	CORDON_SWEEP_STOP,
};

typedef void (*cordon_sweep_fn)(void *ctx, const char *id, enum cordon_sweep_action action,
				const char *why);

struct cordon_sweep_opts {
	unsigned budget;
	bool dry_run;	   /* judge and report, act on nothing */
	bool wait;	   /* STOP: wait (bounded) for the monitor to be gone */
	cordon_sweep_fn report;
	void *ctx;
};

int cordon_state_sweep_report(int root_fd, const struct cordon_sweep_opts *opts);
/* The bounded sweep at the start of every run and create: never waits, never fails it. */
int cordon_state_sweep(int root_fd, unsigned budget);

/*
 * A connected (non-blocking, close-on-exec) socket to the sandbox's
 * monitor, whose listener is checked to be the recorded supervisor
 * (SO_PEERCRED, its start time): a link planted at monitor.sock reaches
 * no other process. wait: retry while its backlog is full (interruptible).
 * The fd, or -errno: -EPERM another's listener, -EAGAIN full (not wait).
 */
int cordon_state_monitor_connect(int dir_fd, const struct cordon_state_info *info, bool wait);

/* This host's name, and this boot's id (/proc/sys/kernel/random/boot_id), malloc'd. */
char *cordon_state_host_name(void);
char *cordon_state_boot_id(void);

/* Start time of a process in clock ticks since boot (field 22 of stat), 0 if gone. */
uint64_t cordon_proc_start_time(pid_t pid);
/* A pidfd for pid, only if it is still the process that started at start_time. */
int cordon_pidfd_verified(pid_t pid, uint64_t start_time);

#endif
