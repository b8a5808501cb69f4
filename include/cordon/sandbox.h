/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox: one sandbox's lifecycle, from a validated spec to an exit
 * status: create the namespaces, drive the child through setup, supervise
 * the workload (signals, timeout, output), and tear everything down.
 */
#ifndef CORDON_SANDBOX_H
#define CORDON_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cgroup.h"
#include "cordon/core.h"
#include "cordon/net.h"
#include "cordon/spec.h"

#define CORDON_NET_REPORT_NAMES_MAX 1024

struct cordon_net_addr {
	struct cordon_addr addr;
	enum cordon_vet why; /* refused: the vetting reason */
};

struct cordon_net_addr_list {
	struct cordon_net_addr v[16];
	size_t n;
};

/* One name the workload asked the DNS proxy about. */
struct cordon_net_name {
	char name[CORDON_DNS_NAME_MAX];
	bool allowed, denied;
	struct cordon_net_addr_list added;   /* inserted into the allow sets */
	struct cordon_net_addr_list refused; /* removed from answers by vetting */
};

struct cordon_allowlist;

/* The applied network policy and what happened under it (--result-json). */
struct cordon_net_report {
	bool enabled;
	const struct cordon_spec *spec; /* the policy (owned by the caller) */
	/* The allowlist in force since a live update (owned), NULL: the spec's. */
	struct cordon_allowlist *allowlist;
	char fingerprint[65]; /* of the allowlist in force */
	char uplink_host[INET6_ADDRSTRLEN];    /* veth: the host end's address */
	char uplink_gateway[INET6_ADDRSTRLEN]; /* veth: the gateway end's */
	struct cordon_net_name *names;
	size_t n_names;
	bool names_truncated;
	bool dropped_known;
	uint64_t dropped_packets, dropped_bytes;
	bool dns_known;
	struct cordon_dnsproxy_stats dns;
};

struct cordon_result {
	int exit_code;   /* what cordon exits with */
	int signal;      /* signal that ended the workload, 0 if none */
	bool timed_out;
	uint64_t duration_ms;
	bool output_counted; /* stdout/stderr went through cordon's pipes */
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	bool output_truncated;
	struct cordon_cgroup_stats cgroup; /* limits_enforced, oom_killed, peaks */
	struct cordon_net_report net;
	bool failed;     /* cordon itself failed (exit 125/126/127) */
	struct cordon_error error;
};

/* Free what a result holds (the network report's names). */
void cordon_result_free(struct cordon_result *result);

/* How a supervisor runs its sandbox: `cordon run`, `run --bundle`, or create's monitor. */
struct cordon_sandbox_opts {
	const char *state_root; /* --root, or NULL: the caller's default */
	bool wait_start; /* hold the workload before execve until `cordon start` */
	bool kept;       /* the state stays ("stopped") after the end, until `cordon delete` */
	/*
	 * The init is started as a child of our parent (CLONE_PARENT), not
	 * ours: a caller that waits for the container process (conmon, the
	 * containerd shim: subreapers that reap the --pid-file's process)
	 * gets it, and its exit status is the workload's.
	 */
	bool foster_init;
	int notify_fd;   /* told "created" (a sync message with the pid) or why not; -1 */
	int console_fd;  /* process.terminal: the connected --console-socket (the
			  * supervisor closes it once the init has it), else -1 */
	/*
	 * A foreground supervisor at the caller's terminal (`cordon run`,
	 * `run --bundle`): a stdin, stdout or stderr that is a terminal is
	 * relayed through a pipe, never handed to the sandbox. The monitor of
	 * `cordon create` passes its stdio on as runc does (a launcher's).
	 */
	bool relay_terminal;
	/*
	 * The monitor, whose own stdio is /dev/null: the container's stdin,
	 * stdout and stderr (the caller's; -1 where it had none), which the
	 * supervisor closes once the init has them; and where the
	 * create-time hooks write (the caller's stdout and stderr, -1: none),
	 * closed once the container is created. NULL: our own stdio is both.
	 */
	int *container_stdio;
	int *hook_stdio;
	/*
	 * run --bundle in the foreground: written with the init's pid once it
	 * is created (its directory opened by the caller), or NULL.
	 */
	const struct cordon_pid_file *pid_file;
};

/* Run the sandbox to completion. Fills *result; returns the exit status. */
int cordon_sandbox_run(const struct cordon_spec *spec, struct cordon_result *result);
/*
 * Before anything of the sandbox exists: when ids the sandbox would map
 * could change the cordon binary, re-execute from a sealed copy (the
 * validation runs again there). 0, or -1 with err set.
 */
int cordon_sandbox_seal_self(const struct cordon_spec *spec, struct cordon_error *err);
int cordon_sandbox_run_opts(const struct cordon_spec *spec, const struct cordon_sandbox_opts *opts,
			    struct cordon_result *result);

/*
 * The OCI lifecycle (docs/oci.md). cordon_container_create forks a
 * monitor (this binary, detached with setsid) that supervises the
 * sandbox and returns once the container is created: its init waits for
 * cordon_container_start. *pid is the host pid of the container's pid 1,
 * the sandbox init: a child of the caller once create returns, which
 * exits with the workload's status.
 */
int cordon_container_create(const struct cordon_spec *spec, const char *root, int console_fd,
			    pid_t *pid, struct cordon_error *err);
int cordon_container_start(const char *root, const char *id, struct cordon_error *err);
/*
 * A live update of sandbox id's allowlist (`cordon update --net-allow`,
 * docs/network.md): edits are "+VALUE" and "-VALUE" lines
 * (cordon_allowlist_edit), applied by its supervisor at once. 0 with the
 * new policy's fingerprint, or -1 (err set; CORDON_E_USAGE: the edits
 * were refused and nothing changed).
 */
/*
 * `cordon inspect`: sandbox id's effective posture as JSON (malloc'd):
 * its state, its process's ids, maps, capabilities, no_new_privs,
 * seccomp and mounts, its cgroups' limits and usage, and its
 * supervisor's account of the network policy in force. Read-only.
 */
char *cordon_container_inspect(const char *root, const char *id, struct cordon_error *err);
int cordon_container_net_update(const char *root, const char *id, const char *edits, size_t len,
				char fingerprint[65], struct cordon_error *err);
/* The OCI state document (malloc'd JSON). */
char *cordon_container_state(const char *root, const char *id, struct cordon_error *err);
/* Signal the container process (all: every process of the container). */
int cordon_container_kill(const char *root, const char *id, int sig, bool all,
			  struct cordon_error *err);
/* Remove a stopped (or created) container; force: a running one too. */
int cordon_container_delete(const char *root, const char *id, bool force,
			    struct cordon_error *err);
/*
 * Freeze (pause) a created or running container's cgroup, or thaw a
 * paused one; state then says "paused". CORDON_E_CGROUP without a
 * freezer cgroup (rootless on cgroup v1 and hybrid).
 */
int cordon_container_pause(const char *root, const char *id, bool pause, struct cordon_error *err);
/* Change the limits of a live container (cordon_cgroup_update). */
int cordon_container_update(const char *root, const char *id, const struct cordon_resources *res,
			    struct cordon_error *err);
/*
 * Host pids of the container's processes, sorted (malloc'd): its cgroup's
 * members (cordon's init among them), or without a cgroup those of its
 * pid namespace that the caller may see.
 */
int cordon_container_ps(const char *root, const char *id, pid_t **pids, size_t *n,
			struct cordon_error *err);

/* Connect to a --console-socket (a unix stream socket path, the caller's). */
int cordon_console_connect(const char *path, struct cordon_error *err);

/* `cordon exec` (docs/oci.md): a new process in a created or running container. */
struct cordon_exec_opts {
	const char *root;          /* --root, or NULL */
	const char *id;
	char **argv;               /* CMD ARGS; NULL with process_json */
	const char *process_json;  /* --process FILE's text, or NULL */
	size_t process_len;
	char **env;                /* --env K=V, NULL-terminated, or NULL */
	const char *cwd;           /* --cwd, or NULL */
	bool has_user, has_gid;    /* --user UID[:GID] */
	/*
	 * --user NAME[:GROUP] (a part not numeric): looked up by the process
	 * itself in the sandbox's root, once it is inside (exec.c), or NULL.
	 */
	const char *user_name;
	uid_t uid;
	gid_t gid;
	cordon_capset caps;        /* --cap (added to the process's sets) */
	bool no_new_privs;         /* --no-new-privs: set whatever the process says */
	bool tty;                  /* --tty */
	int console_fd;            /* connected --console-socket, or -1 */
	bool detach;               /* return once execve succeeded */
	unsigned preserve_fds;     /* fds 3..3+N-1 pass into the process */
	const char *cgroup;        /* --cgroup: a cgroup below the container's, or NULL */
	/* --expect-fingerprint: refused unless the network policy in force is this one */
	const char *expect_fingerprint;
	/*
	 * cordon_container_exec_supervised: the command's own timeout and
	 * output, as cordon run's (docs/architecture.md, "exec's process tree").
	 */
	uint64_t timeout_ms;       /* --timeout, 0: none */
	uint64_t kill_after_ms;    /* --kill-after: SIGTERM to SIGKILL of the whole tree */
	bool output_capped;        /* --output-max */
	uint64_t output_max;
	bool count_output;         /* stdout and stderr through cordon's pipes, counted */
	/*
	 * Where the walks to --pid-file's and --result-json's directories
	 * followed links or '..' (NULL: none): refused when one lies in a
	 * place of the sandbox's own (its workload may have made it).
	 */
	const struct cordon_path_links *output_links[2];
	bool *outputs_unchecked; /* cleared once they passed: until then nothing is written there */
};

/*
 * Before cordon exec does anything another run could not repeat (connect
 * a console socket, read stdin): re-execute from a sealed copy when the
 * container's ids could write the cordon binary (security/self.c). 0 also
 * when there is no such container: cordon_container_exec says so.
 */
int cordon_container_exec_seal(const struct cordon_exec_opts *opts, struct cordon_error *err);
/*
 * Start a process in the container: it joins the workload's namespaces
 * and cgroups and gets the container's confinement (docs/oci.md, "exec").
 * Returns 0 once its execve succeeded, *pid its host pid (a child of the
 * caller). -1 on failure: err set, *status 125, or 126/127 when execve
 * failed. Without detach, the forwarded signals stay blocked for
 * cordon_container_exec_wait.
 */
int cordon_container_exec(const struct cordon_exec_opts *opts, pid_t *pid, int *status,
			  struct cordon_error *err);
/* Relay INT, TERM, HUP, QUIT, USR1, USR2 to it until it ends; its status (128+N for signal N). */
int cordon_container_exec_wait(pid_t pid);
/*
 * A command with cordon run's outcome: started below a reaper of its own
 * in the container, its whole process tree ended at --timeout (SIGTERM,
 * then SIGKILL after --kill-after), its output counted and capped. Fills
 * *result (cordon run's fields; cpu_usage_us the command's own CPU time
 * with its waited-for children's, the other cgroup fields not measured);
 * returns the exit status: the command's, 128+N, 124, or
 * 125/126/127 with result->failed.
 */
int cordon_container_exec_supervised(const struct cordon_exec_opts *opts,
				     struct cordon_result *result);

/*
 * The audit log of a sandbox (include/cordon/audit.h), for a command that
 * acts on it (exec, update): opened again as its state directory records,
 * the same file, rules and cap. NULL with err clear when it has none;
 * NULL with err set (CORDON_E_AUDIT) when it cannot be opened: the
 * command then fails closed, before it changes anything.
 */
struct cordon_audit;
struct cordon_audit *cordon_container_audit_open(const char *root, const char *id,
						 struct cordon_error *err);

/* Warn (cordon_warn) about each field of the bundle's config that is not applied. */
void cordon_container_warn_unapplied(const struct cordon_spec *spec);
/*
 * Every sandbox under the root (run, session, container): a table, ids
 * only (quiet) or a JSON array (each state with its kind, labels and
 * owner). labels: n pairs of key and value (NULL: the key at all), every
 * one of which a sandbox must have to be listed.
 */
int cordon_container_list(const char *root, bool json, bool quiet, const char *const *labels,
			  size_t n_labels, struct cordon_error *err);

/*
 * --print-profile: the confinement a sandbox of this spec would get, as
 * one JSON object on stdout (ids, namespaces, capabilities, seccomp
 * digest, rlimits, masked paths), without creating anything.
 */
int cordon_sandbox_print_profile(const struct cordon_spec *spec, struct cordon_error *err);

/*
 * Write --result-json: a new file in spec->result_dir_fd (the directory
 * opened when the flag was read), renamed onto spec->result_name.
 */
int cordon_result_write(const struct cordon_spec *spec, const struct cordon_result *result,
			struct cordon_error *err);
/* Where a result goes: its directory (opened when the flag was read), the name in it. */
struct cordon_result_target {
	int dir_fd;
	const char *name;
	const char *path; /* as given, for messages */
};
int cordon_result_write_to(const struct cordon_result_target *to, const char *id,
			   const struct cordon_result *result, struct cordon_error *err);

/* --- cordon doctor ------------------------------------------------------ */

enum cordon_doctor_status {
	CORDON_DOCTOR_OK,
	CORDON_DOCTOR_DEGRADED, /* an optional part fails closed when asked for, or works with less */
	CORDON_DOCTOR_FAILED,   /* a default `cordon run` cannot work here */
};

struct cordon_doctor_check {
	const char *key;   /* stable: "userns", "subids", "kernel", "cgroups", ... */
	const char *title; /* for people */
	enum cordon_doctor_status status;
	char detail[320];      /* what was found */
	char consequence[320]; /* what it means for cordon, when not ok */
	char fix[320];         /* what to do about it */
};

#define CORDON_DOCTOR_MAX 16

struct cordon_doctor {
	bool rootful;
	uid_t uid;
	struct cordon_doctor_check check[CORDON_DOCTOR_MAX];
	size_t n;
	unsigned failed, degraded;
};

/*
 * Can this host give the confinement cordon promises (docs/security.md)?
 * Each check tries the real thing in a child process where it can; the
 * state root as --root names it (NULL: the caller's default).
 */
void cordon_doctor_run(struct cordon_doctor *d, const char *state_root);
const char *cordon_doctor_status_name(enum cordon_doctor_status s);

/*
 * The DNS proxy's process: cordon's binary run afresh by a supervisor,
 * as "cordon-dnsproxy", with its fds in place (main calls this before
 * anything else). Exits; returns only when it was not started so.
 */
int cordon_dnsproxy_main(void);

#endif
