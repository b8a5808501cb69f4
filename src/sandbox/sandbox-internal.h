/* SPDX-License-Identifier: Apache-2.0 */
/* The supervisor ⇄ sandbox-init protocol and the child entry point. */
#ifndef CORDON_SANDBOX_INTERNAL_H
#define CORDON_SANDBOX_INTERNAL_H

#include <termios.h>
#include <yajl/yajl_gen.h>

#include "cordon/audit.h"
#include "cordon/fs.h"
#include "cordon/nethelper.h"
#include "cordon/sandbox.h"
#include "cordon/state.h"
#include "cordon/userns.h"

/* Messages on the SOCK_SEQPACKET sync socket, one datagram each. */
enum sync_type {
	SYNC_GO = 1,	   /* supervisor → init: maps written, fds attached */
	SYNC_SETUP_FAILED, /* init → supervisor: error before exec (exit 125) */
	SYNC_EXEC_FAILED,  /* init → supervisor: execve failed (exit 126/127) */
	SYNC_EXITED,	   /* init → supervisor: the workload's wait status */
	SYNC_NET,	   /* init → supervisor: the gateway's fds, SYNC_NET_FD_* */
	SYNC_UPLINK,	   /* supervisor → init: struct sync_uplink in text */
	SYNC_CREATED,	 /* init → supervisor: set up, the workload (host pid in status) waits */
	SYNC_START,	 /* supervisor → init: release the workload */
	SYNC_RUNNING,	 /* init → supervisor: the workload's execve succeeded */
	SYNC_MOUNT_TREE, /* supervisor → init, before GO: mounts[status]'s idmapped tree (fd) */
	SYNC_SIGNAL,	 /* supervisor → init: signal status came from the caller's terminal */
	SYNC_TREE_EMPTY, /* exec's reaper → cordon exec: it has no child left (exec-tree.c) */
};

struct sync_msg {
	uint32_t type;
	int32_t status;  /* SYNC_EXITED: wait status; SYNC_EXEC_FAILED: exit code */
	int32_t errnum;
	uint32_t code;   /* enum cordon_code */
	char text[768]; /* as struct cordon_error.msg */
};

/* SYNC_NET's fds, in this order: G, the netfilter socket, our user namespace, the DNS listeners. */
enum {
	SYNC_NET_FD_NETNS,
	SYNC_NET_FD_NFT,
	SYNC_NET_FD_USERNS,
	SYNC_NET_FD_UDP, /* CORDON_GW_DNS_SOCKETS of them */
	SYNC_NET_FD_TCP = SYNC_NET_FD_UDP + CORDON_GW_DNS_SOCKETS, /* as many */
	SYNC_NET_FDS = SYNC_NET_FD_TCP + CORDON_GW_DNS_SOCKETS,
};

/* SYNC_UPLINK's payload: how the gateway's uplink must be finished. */
struct sync_uplink {
	bool veth;                             /* else pasta: wait for its tap */
	bool ipv6;                             /* pasta: the host routes IPv6, so will the tap */
	struct cordon_nethelper_result helper; /* veth: the gateway side to configure */
};

/* Everything the init process needs; it runs in a copy of the supervisor. */
struct child_ctx {
	const struct cordon_spec *spec;
	const struct cordon_idplan *plan; /* the sandbox's maps (for the nested ns) */
	bool userns;                      /* setup runs in a new user namespace */
	bool rootful;                     /* host root, or root of a user namespace: becomes U1's root */
	bool fostered;                    /* a child of the supervisor's parent (CLONE_PARENT) */
	int sync_fd;
	int stdin_fd;  /* a pipe's read end the supervisor fills from the caller's terminal, else -1 */
	int stdout_fd; /* pipe write ends when output is counted or a terminal, else -1 */
	int stderr_fd;
	int console_fd;   /* process.terminal: the connected --console-socket, else -1 */
	/*
	 * The host's /dev/null, the init's stdio once the workload has its
	 * own: opened by the supervisor before the clone, since a config's
	 * device rules (which may deny c 1:3) apply to the init from the
	 * moment it is in the container's cgroups.
	 */
	int null_fd;
	/* A session: the sealed idle program its workload executes (session.c), else -1. */
	int idle_fd;
};

/* The supervisor's side of allowlisted egress (egress/, its files in egress/egress.h). */
#define ADMITTED_NAMES 4
struct egress_name;

struct sandbox_net {
	const struct cordon_spec *spec;
	struct cordon_result *result;
	struct cordon_audit *audit; /* DNS events go here (NULL: none) */
	/* The last admit's question: its EVENT, which follows, is not written twice. */
	char last_admit_name[256]; /* as cordon_dnsctl_msg.name */
	uint16_t last_admit_qtype;
	struct cordon_nft *nft;           /* a netfilter socket in the gateway namespace */
	bool uses_userns;                 /* the sandbox has a user namespace (not --userns host) */
	uint32_t ttl_floor_s;             /* the DNS TTL floor (0: the default) */
	/* The DNS proxy's process (egress/proxy.c); none with --dns none. */
	pid_t proxy_pid;
	int proxy_pidfd, proxy_ctl;       /* -1 when none */
	int proxy_sockets;                /* its upstream sockets' channel, -1 when none */
	uint64_t sockets_window_us;       /* its socket requests' bucket: last refill */
	unsigned sockets_in_window;       /* and what it holds (egress/proxy.c) */
	uint64_t admits_window_us;        /* and its admits' */
	unsigned admits_in_window;
	/*
	 * Until when the addresses we admitted stay in the allow sets (ms,
	 * monotonic): a table by address, grown as needed up to what the
	 * sets can hold (egress/proxy.c).
	 */
	struct admitted_until {
		struct cordon_addr addr;
		uint64_t until_ms;
		/* The names it was admitted for, newest first (egress/admitted.c). */
		struct egress_name *names[ADMITTED_NAMES];
	} *admitted;
	size_t cap_admitted;
	struct egress_name **name_buckets; /* the names, interned */
	size_t n_buckets, n_names;
	/*
	 * The allowlist in force: the spec's, or since a live update
	 * result->net.allowlist; and what the blocked sets hold besides the
	 * vetting table (the host's addresses, gained ones too, its gateways,
	 * the uplink), to make them anew for a new allowlist.
	 */
	const struct cordon_allowlist *allowlist;
	struct cordon_addr *extra;
	size_t n_extra;
	bool policy_pending;   /* a POLICY went to the proxy, its answer not yet in */
	int32_t policy_error;  /* the answer's */
	uid_t proxy_uid;                  /* its ids inside the sandbox's user namespace */
	gid_t proxy_gid;
	bool proxy_setgroups;
	bool proxy_ready;                 /* its READY came */
	struct cordon_dnsproxy_stats proxy_stats;
	bool proxy_stats_known;
	bool uplink_veth;
	struct cordon_nethelper_result uplink; /* veth */
	struct sync_uplink release;       /* what SYNC_UPLINK says, once the gateway is up */
	bool released;                    /* SYNC_UPLINK went to the init */
	pid_t pasta;
	int pasta_pidfd, pasta_err;
	int addr_watch;                   /* rtnetlink: the host's new addresses, or -1 */
	struct cordon_cidr *blocked;      /* what blocked4/blocked6 hold now */
	size_t n_blocked;
	/* Dropped packets by destination, read at the end (egress.c), for the audit. */
	struct cordon_nft_drop *drops;
	size_t n_drops;
};

void sandbox_net_init(struct sandbox_net *n, const struct cordon_spec *spec,
		      struct cordon_result *result);
/*
 * SYNC_NET came with its fds (each taken, also on failure): start the
 * DNS proxy, give G its uplink, commit its ruleset; what SYNC_UPLINK
 * will say is kept in release. 0, or -1 (err set).
 */
int sandbox_net_gateway(struct sandbox_net *n, const struct cordon_idplan *plan,
			int fds[SYNC_NET_FDS], struct cordon_error *err);
/* Send SYNC_UPLINK: the init finishes its side and releases the workload. */
int sandbox_net_release(struct sandbox_net *n, int sync_fd, struct cordon_error *err);
/* Is name in the report already? */
bool sandbox_net_report_has(struct sandbox_net *n, const char *name);
/* A DNS decision into the report: each address admitted (why OK) or refused. */
void sandbox_net_report(struct sandbox_net *n, const char *name, bool allowed,
			const struct cordon_addr *addrs, size_t n_addrs, const enum cordon_vet *why);

/*
 * egress/proxy.c: the DNS proxy's process and our end of its channel. The
 * ids it will run as (plan NULL: --userns host); start it on the DNS
 * sockets, in G; serve its messages (readable channel: 1 when its READY
 * just came, else 0, or -1 with err set when the sandbox must end); did
 * it die; stop it (its counters into proxy_stats first).
 */
void sandbox_net_proxy_ids(struct sandbox_net *n, const struct cordon_idplan *plan);
int sandbox_net_proxy_start(struct sandbox_net *n, const int dns[SYNC_NET_FDS - SYNC_NET_FD_UDP],
			    int userns, int gw_ns, struct cordon_error *err);
int sandbox_net_proxy_io(struct sandbox_net *n, struct cordon_error *err);
/* Its socket requests (readable channel): 0, or -1 (err set) when the sandbox must end. */
int sandbox_net_proxy_sockets(struct sandbox_net *n, struct cordon_error *err);
bool sandbox_net_proxy_died(struct sandbox_net *n, struct cordon_error *err);
void sandbox_net_proxy_stop(struct sandbox_net *n);
/*
 * The host's address events are readable: block each address it gained
 * that the blocked sets do not cover yet. 0, or -1 (err set) when an
 * address may be left open (lost events, a failed update): the caller
 * ends the sandbox.
 */
int sandbox_net_watch(struct sandbox_net *n, struct cordon_error *err);
/*
 * egress/update.c: a live update of the allowlist (edits: "+VALUE" and
 * "-VALUE" lines, cordon_allowlist_edit). 0: in force, its fingerprint
 * in result->net; -1 (err set): refused, nothing changed; -2 (err set):
 * in force in the gateway but not everywhere (a cut or the proxy
 * failed): the caller ends the sandbox.
 */
int sandbox_net_update(struct sandbox_net *n, const char *edits, size_t len,
		       struct cordon_error *err);
/* pasta exited: fills err with its last words. */
bool sandbox_net_uplink_died(struct sandbox_net *n, struct cordon_error *err);
/*
 * Counters and statistics into the result; pasta killed (first, so that
 * its exit overlaps the rest of the teardown); close everything else.
 */
void sandbox_net_finish(struct sandbox_net *n);
/* pasta's exit waited for: the last step of a run's teardown, before it returns. */
void sandbox_net_reap(struct sandbox_net *n);

/*
 * egress/egress.c, in the init: prepare the gateway namespace just entered and
 * hand it to the supervisor (SYNC_NET); later, finish the uplink as
 * SYNC_UPLINK says. 0 or -1.
 */
int sandbox_gateway_start(const struct child_ctx *ctx, struct cordon_error *err);
int sandbox_gateway_finish(const struct child_ctx *ctx, struct cordon_error *err);

/* egress/json.c: inside an open map, the keys of the "network" object. */
/* The policy: the spec's, or al (a live update's) when not NULL. */
void sandbox_json_net_policy(yajl_gen g, const struct cordon_spec *spec,
			     const struct cordon_allowlist *al);
void sandbox_json_net_outcome(yajl_gen g, const struct cordon_net_report *rep);
/*
 * The policy in force and its live state, for `cordon inspect`: the
 * allowlist and fingerprint, the admitted addresses with their names and
 * what is left of their TTL, the blocked ranges, the drop counters.
 */
void sandbox_json_net_live(yajl_gen g, struct sandbox_net *n);

struct output {
	int fd;   /* read end, -1 when closed */
	int dest; /* STDOUT_FILENO or STDERR_FILENO */
	uint64_t *bytes;
	/*
	 * Read, not yet taken by dest: while there is any, the pipe is not
	 * read (the workload waits, as on a full pipe) and dest is watched
	 * for room; the loop goes on serving everything else.
	 */
	char *pending;
	size_t pending_len, pending_off;
	bool dest_is_socket; /* written with MSG_DONTWAIT */
	bool dest_gone;      /* the reader went away: output is counted, not written */
};

/* relay.c: the caller's terminal, which never enters the sandbox. */
struct relay {
	int in;		/* what input is read from: a non-blocking open of fd 0's terminal, or fd 0; -1 */
	int to;		/* where it goes: the sandbox's stdin pipe, or the pty master (a dup); -1 */
	int master;	/* -t: the pty master (struct output's fd: it is closed there), else -1 */
	int console;	/* -t: our end of the init's console socket until the master came, else -1 */
	int epfd;
	char buf[4096]; /* read, not yet written */
	size_t len, off;
	bool watching_in, watching_to;
	bool paused;  /* in the background: until SIGCONT */
	bool in_done; /* the input ended */
	bool raw;     /* the caller's modes are in saved, and changed */
	bool was_raw; /* raw before a stop */
	struct termios saved;
};
void relay_init(struct relay *r);
/* Before clone: a pipe for the sandbox's stdin (its read end to *sandbox_end). */
int relay_stdin_open(struct relay *r, int *sandbox_end, struct cordon_error *err);
/* Before clone, -t: the init's console socket (its end to *init_end). */
int relay_console_open(struct relay *r, int *init_end, struct cordon_error *err);
/* Into the supervisor's epoll loop (tags: &r->in, &r->to). */
void relay_attach(struct relay *r, int epfd);
/*
 * -t, at SYNC_CREATED (before the workload is released): the master, the
 * window size, raw mode; *out_fd the master, for the output relay.
 */
int relay_pty_start(struct relay *r, int *out_fd, struct cordon_error *err);
void relay_input(struct relay *r);        /* r->in is readable */
void relay_output_ready(struct relay *r); /* r->to is writable */
void relay_winch(struct relay *r);        /* SIGWINCH: the caller's size to the pty */
void relay_suspend(struct relay *r);      /* before we stop: the caller's modes back */
void relay_resume(struct relay *r);       /* SIGCONT: raw again, read again */
/* The loop's epoll timeout given its own: bounded while paused, to look again. */
int relay_timeout_ms(const struct relay *r, int timeout);
void relay_tick(struct relay *r); /* each loop iteration: paused, but foreground again? */
/* The caller's modes back, every fd closed. */
void relay_close(struct relay *r);

/* One sandbox's supervisor (run.c), whether `cordon run` or the monitor of `cordon create`. */
#define MONITOR_CLIENTS 8
/* Execs a session counts at once; one more is refused (cordon exec fails, 125). */
#define SESSION_EXECS_MAX 256

struct supervisor {
	const struct cordon_spec *spec;
	const struct cordon_sandbox_opts *opts;
	struct cordon_result *result;
	struct cordon_state *state;
	struct cordon_cgroup cgroup;
	const struct cordon_idplan *plan; /* the sandbox's maps; NULL with --userns host */
	int pidfd;
	int sigfd;
	int timerfd;
	int sync_fd;
	int epfd;
	pid_t child;
	bool child_done;
	int child_status;    /* waitid status of the init process */
	bool have_exit;      /* SYNC_EXITED arrived */
	int workload_status; /* its wait status */
	bool term_sent;
	uint64_t forwarded;  /* bytes of output passed on */
	struct output out[2];
	struct relay relay;     /* the caller's terminal (relay.c) */
	struct sandbox_net net; /* with an allowlist */
	struct cordon_audit *audit; /* the audit log, or NULL (off) */

	/* The lifecycle (lifecycle.c). */
	bool created;        /* SYNC_CREATED arrived and was recorded */
	bool start_sent;     /* SYNC_START went to the init (or its start failed) */
	bool hooks_started;  /* the create-time hooks ran: poststop runs at the end */
	int notify_fd;       /* create: the waiting `cordon create`, until told */
	/*
	 * Where hooks write, -1: our own stdout, stderr. The monitor's are
	 * /dev/null: the create-time hooks get `cordon create`'s until it is
	 * told, the start-time ones those `cordon start` sent with its request.
	 */
	int hook_out[2];
	int listen_fd;       /* create: the control socket `cordon start` connects to */
	int start_client;    /* the `cordon start` waiting for the outcome, or -1 */
	/*
	 * create: connections that have not sent their request yet, -1 free.
	 * Read when they are readable, never waited for: a client that says
	 * nothing holds a slot until a newer one takes it.
	 */
	int clients[MONITOR_CLIENTS];
	unsigned clients_next;

	/* A session (session.c). */
	int session_timer;	   /* the lifetime cap and the idle timeout, -1 without */
	uint64_t session_start_ms; /* monotonic */
	uint64_t idle_since_ms;	   /* when the last exec ended (or the session started) */
	bool session_ending;	   /* ended by a limit or a request: the init is killed */
	/* Connections of the `cordon exec`s running now (MONITOR_EXEC), -1 free. */
	int execs[SESSION_EXECS_MAX];
	size_t n_execs;
	bool session_untracked; /* an exec beyond the table ran: never idle */
	/*
	 * The drops the last denied event counted (a session's: one at each
	 * exec's end tells what was dropped since, audit.c).
	 */
	struct cordon_nft_drop *drops_seen;
	size_t n_drops_seen;
	uint64_t dropped_packets_seen, dropped_bytes_seen;
};

/*
 * audit.c: the supervisor's audit events. Opened and the create event
 * written once the state directory exists, before anything else of the
 * sandbox; at the end, the workload's exec event (a run's), the dropped
 * packets, the cleanup, and the state directory's log kept.
 */
int sandbox_audit_begin(struct supervisor *sv, struct cordon_error *err);
void sandbox_audit_end(struct supervisor *sv);
/*
 * A session's exec ended (its connection to the monitor closed): the
 * denied event of what the gateway dropped since the last one. A failed
 * write ends the session, as at the end of a run it fails the run;
 * counters that cannot be read give no event, as there.
 */
void sandbox_audit_exec_end(struct supervisor *sv);

/*
 * Requests on the monitor's control socket and their answer. START:
 * release a created container (cordon start). NET_UPDATE: below. EXEC: a
 * `cordon exec` runs in the session until this connection closes
 * (answered, kept open). STOP: end the session (cordon sweep, its owner
 * gone; answered).
 */
enum monitor_request {
	MONITOR_START = CORDON_MONITOR_START,
	/* A live update of the allowlist: its edits in a memfd; the answer's msg the fingerprint. */
	MONITOR_NET_UPDATE = CORDON_MONITOR_NET_UPDATE,
	/* The network's live state for inspect: JSON written into the memfd sent along. */
	MONITOR_NET_INFO = CORDON_MONITOR_NET_INFO,
	MONITOR_EXEC = CORDON_MONITOR_EXEC,
	MONITOR_STOP = CORDON_MONITOR_STOP,
};

struct monitor_reply {
	uint32_t code; /* CORDON_OK or the error's code */
	int32_t errnum;
	char msg[768];
};

/*
 * container.c, the client's end: connect to the monitor of a sandbox
 * whose state is open (its socket checked to be its own; the fd, or -1
 * with err set); wait for its answer (0, -EPIPE when it ended without
 * one, -EINTR, -errno); an answer that is an error into err (0 or -1).
 */
int sandbox_monitor_reach(const struct cordon_state *state, struct cordon_error *err);
/*
 * A sandbox's record as list --format json gives it (the OCI state and
 * what cordon keeps besides: kind, labels, owner, lifetimes), its map
 * left open for more.
 */
void sandbox_json_state_open(yajl_gen g, const struct cordon_state *state,
			     enum cordon_status status);
int sandbox_monitor_answer(int fd, struct monitor_reply *rep);
int sandbox_monitor_reply_error(const char *id, int r, struct monitor_reply *rep,
				const char *what, struct cordon_error *err);

/*
 * prepare.c. The id plan of the sandbox's user namespace: the config's
 * maps, the identity map (host root, a writable root that cannot be
 * idmapped), or cordon's own (cordon_userns_plan).
 */
int sandbox_id_plan(const struct cordon_spec *spec, struct cordon_idplan *plan,
		    struct cordon_error *err);

/* What the supervisor enters for the init's clone to inherit, and leaves after it. */
struct sandbox_around {
	int own_ns[3];	     /* our network, IPC, UTS namespaces to return to, or -1 */
	int joined;	     /* CLONE_NEW* of the namespaces the config joins */
	char oom_saved[16]; /* our oom_score_adj before the config's, or "" */
};
int sandbox_clone_enter(const struct cordon_spec *spec, struct sandbox_around *a,
			struct cordon_error *err);
void sandbox_clone_leave(struct sandbox_around *a);

/* SYNC_CREATED: record it in the state, tell `cordon create`, start unless asked to wait. */
int lifecycle_created(struct supervisor *sv, pid_t workload, struct cordon_error *err);
/* SYNC_RUNNING: record it, answer `cordon start`. */
void lifecycle_running(struct supervisor *sv);
/* The control socket is readable: one request. */
/* The control socket and its clients: true if tag was one of them (and it was handled). */
bool lifecycle_dispatch(struct supervisor *sv, void *tag);
/* Connections waiting in a slot for their request (a session counts them as execs). */
size_t lifecycle_clients_pending(const struct supervisor *sv);
/* Every connection and request already there taken now (the idle timeout's last look). */
void lifecycle_take_pending(struct supervisor *sv);
/* The end, however it came: state stopped (or removed), waiting callers answered. */
void lifecycle_finish(struct supervisor *sv);

/*
 * session.c. The idle program (a sealed memfd, close-on-exec) that a
 * session's workload executes; -1 (err set) where there is none.
 */
int sandbox_session_program(struct cordon_error *err);
/* Once the loop exists: the timer of the lifetime cap and the idle timeout. */
int session_start(struct supervisor *sv, struct cordon_error *err);
/* End the session (why: for the log): the init is killed, the rest follows. */
void session_end(struct supervisor *sv, const char *why);
/* A `cordon exec` began (its connection fd, taken): 0, or -errno (too many). */
int session_exec_begin(struct supervisor *sv, int fd);
/* The idle clock looked at again (a connection to the monitor came or went). */
void session_rearm(struct supervisor *sv);
/* The session's timer and exec connections: true if tag was one of them. */
bool session_dispatch(struct supervisor *sv, void *tag);
void session_finish(struct supervisor *sv);

/* The status now: cordon_state_status, or paused when its freezer cgroup is frozen (ops.c). */
enum cordon_status container_status(const struct cordon_state *state);
/* Thaw a paused container's cgroup (errors ignored: delete --force). */
void container_thaw(const struct cordon_state *state);
/*
 * kill --all (ops.c): sig to every process of the container and to no
 * other, never by a pid alone: SIGKILL to the init and its cgroups
 * (cgroup.kill, or by pidfd); any other frozen in place, each process
 * pinned by a pidfd and checked to be in the container's pid namespace. Fails (CORDON_E_STATE, or the
 * freezer's CORDON_E_CGROUP) when nothing could be signalled.
 */
int container_signal_all(const struct cordon_state *state, int sig, struct cordon_error *err);
/* The OCI state document with this status, on one line (malloc'd): what hooks read. */
char *sandbox_state_json(const struct cordon_state *state, enum cordon_status status);

/*
 * exec.c, shared with the hooks. U1, the sandbox's user namespace, as
 * the parent of the workload's (inner, an fd of it): *outer, or -1 when
 * U1 is our own (--userns host).
 */
int sandbox_outer_userns(int inner, int *outer, struct cordon_error *err);
/*
 * Enter the container's namespaces through its workload's pidfd: those
 * the config joins by path (with our own privileges), U1 (outer_userns,
 * unless -1), then mount, pid (for children), uts, ipc, cgroup and net.
 * Not the workload's nested user namespace. Root and cwd become the
 * container's root.
 */
int sandbox_join_container(const struct cordon_spec *spec, int pidfd, int outer_userns,
			   struct cordon_error *err);

/*
 * hooks.c: the config's hooks of one kind, in order, each with state (the
 * state document) on its stdin; createContainer and startContainer in
 * the namespaces of the container whose process is workload. prestart,
 * createRuntime, createContainer, startContainer: the first failure
 * stops the rest, -1 with CORDON_E_HOOK naming it. poststart, poststop:
 * every hook runs; -1 when any failed, err naming each (a warning for
 * the caller to give). out: the hooks' stdout and stderr (NULL or -1:
 * ours).
 */
int sandbox_hooks_run(const struct cordon_spec *spec, enum cordon_oci_hook_kind kind,
		      const char *state, pid_t workload, const int out[2], struct cordon_error *err);

/* The sandbox's pid 1: setup, spawn the workload, reap, report. */
_Noreturn void sandbox_child(const struct child_ctx *ctx);

/*
 * tty.c. A pty of the devpts mounted at /dev/pts of the current root (the
 * container's): master and slave, close-on-exec, consoleSize applied.
 */
int sandbox_pty_open(const struct cordon_spec *spec, int *master, int *slave,
		     struct cordon_error *err);
/* The master to the --console-socket, as runc sends it. */
int sandbox_pty_send(int console_fd, int master, struct cordon_error *err);
/*
 * The init's side with process.terminal: a pty in the container, the
 * slave given to the process's uid (for its release), the master sent
 * to the --console-socket (then closed, as the socket).
 */
int sandbox_terminal_create(const struct child_ctx *ctx, int *slave, struct cordon_error *err);
/*
 * The slave as controlling terminal and as fds 0-2 (then closed). The
 * caller is a session leader without one (it called setsid).
 */
int sandbox_pty_attach(int slave, struct cordon_error *err);

/*
 * child.c: execve argv with envp, searching the PATH of envp (not ours).
 * Returns the exit code for the failure (127 not found, 126 not
 * executable), errno in *errnum.
 */
/*
 * The process's ids, as the last step before its capabilities: the
 * config's additionalGids (none unless given; left alone where setgroups
 * is denied: a rootless single-id map), gid, uid, and its umask.
 */
int sandbox_set_ids(const struct cordon_spec *spec, bool deny_setgroups, struct cordon_error *err);

/*
 * Enter CWD, resolved inside the current root: never through a magic link,
 * and never to a directory outside the root.
 */
int sandbox_enter_cwd(const char *cwd, struct cordon_error *err);

int sandbox_exec_search(char *const argv[], char *const envp[], int *errnum);
/*
 * Whether sandbox_exec_search would find an executable argv[0], checked
 * in the current root without running it: 0, or the exit code as above.
 * A name relative to a directory (the workload's cwd) counts as found.
 */
int sandbox_exec_probe(char *const argv[], char *const envp[], int *errnum);

int sync_send(int fd, const struct sync_msg *msg, const int *fds, size_t n_fds);
/* Receive one message; fds (up to *n_fds) are returned through fds. 0 on EOF. */
ssize_t sync_recv(int fd, struct sync_msg *msg, int *fds, size_t *n_fds);
/* The same without waiting: -EAGAIN when nothing is there. */
ssize_t sync_recv_nowait(int fd, struct sync_msg *msg, int *fds, size_t *n_fds);

/*
 * sysctl.c: write the config's sysctls of the namespaces in the mask
 * (1 << enum cordon_oci_ns), as the namespaces of the caller see them.
 */
int sandbox_sysctls(const struct cordon_spec *spec, unsigned int namespaces,
		    struct cordon_error *err);
/* The same in two steps: open the files now, write them later (then closed). */
struct sandbox_sysctls {
	const struct cordon_spec *spec;
	int *fd; /* per linux.sysctl entry, -1 when not opened */
	size_t n;
};
int sandbox_sysctls_open(const struct cordon_spec *spec, unsigned int namespaces,
			 struct sandbox_sysctls *s, struct cordon_error *err);
int sandbox_sysctls_write(struct sandbox_sysctls *s, unsigned int namespaces,
			  struct cordon_error *err);
void sandbox_sysctls_close(struct sandbox_sysctls *s);
#define SYSCTL_NS(type) (1u << (type))

/*
 * The terminal signal sig, relayed to the process group of pid (a
 * process of the container, which leads it): a stop becomes SIGSTOP
 * when stop_as_sigstop (an orphaned group, where the kernel discards
 * SIGTSTP). Falls back to pid alone when the group is gone.
 */
void sandbox_relay_terminal_signal(pid_t pid, int sig, bool stop_as_sigstop);
/*
 * A terminal stop (SIGTSTP) was relayed: stop ourselves as the terminal
 * asked (the kernel discards it when our own group is orphaned) and
 * return once continued.
 */
void sandbox_stop_self(void);

/* Signals the supervisor forwards and the init process relays. */
extern const int sandbox_forwarded_signals[];
extern const size_t sandbox_n_forwarded_signals;

/*
 * What a process of the sandbox (the workload, an exec'd process) and the
 * one that started it tell each other over its report pipe: the workload's
 * first report (pid: its host pid, code CORDON_OK), the joiner's (pid: the
 * exec'd process's), or why it could not reach execve. EOF on the
 * close-on-exec pipe: execve succeeded (or the process died first).
 */
struct confine_report {
	int32_t pid;
	int32_t exit_code;
	int32_t errnum;
	uint32_t code; /* CORDON_OK, or why it failed */
	char text[512];
};

/* The command line of a session's idle workload (session.c). */
#define CORDON_SESSION_TITLE "cordon-session"

/* confine.c: the one confinement sequence of a process of the sandbox. */
enum confine_kind {
	CONFINE_WORKLOAD, /* run and create's workload, the init's clone */
	CONFINE_EXEC,	  /* cordon exec's process, the joiner's clone */
};

struct confine {
	enum confine_kind kind;
	const struct cordon_spec *spec;
	int report_fd;	       /* struct confine_report, close-on-exec */
	bool deny_setgroups;   /* setgroups(2) is denied in its user namespace */
	bool userns;	       /* workload: the sandbox has a user namespace of its own */
	int console_fd;	       /* a terminal: the workload's is made by the init (and comes
				* with the release), an exec'd process makes its own and sends
				* the master here; -1 */
	unsigned preserve_fds; /* fds 3..3+N-1 pass into the program */
	int ready_fd;	       /* workload: the init's release (SYNC_START), -1 */
	int exec_fd;	       /* workload of a session: the idle program to execveat, -1 */
	/* exec'd process: the cgroup.procs it writes itself into (cordon exec opened them),
	 * and for each the one it uses where that is closed to processes (EBUSY), or -1. */
	const int *cgroup_procs;
	const int *cgroup_alt;
	size_t n_cgroups;
	/* Filled on the way. */
	int tty; /* the pty slave to attach, -1 */
	struct sandbox_sysctls net_sysctls;
};

/*
 * Every step of confine.c in order, then execve: never returns. A failure
 * goes over report_fd and ends the process (confine_fail).
 */
_Noreturn void sandbox_confine_exec(struct confine *c);
/*
 * exec-tree.c: a supervised cordon exec (--timeout, --output-max,
 * --result-json): the process is started by a reaper of its own in the
 * container (exec.c, exec_reaper), which keeps the whole tree below it.
 */
struct exec_tree {
	int reaper_sock; /* the reaper's end of the socketpair (SYNC_CREATED, SYNC_EXITED) */
	int null_fd;	 /* the host's /dev/null: the reaper's stdio */
	int out_wr[2];	 /* counted output: the write ends of stdout's and stderr's pipes, or -1 */
};
/*
 * cordon_container_exec with a tree (NULL: none): *pid_out is then the
 * reaper's host pid, returned once the process's execve succeeded.
 */
/* The signals cordon exec relays (and SIGCHLD, SIGTSTP), blocked while it waits. */
void sandbox_exec_signals(sigset_t *set);
int sandbox_exec_start(const struct cordon_exec_opts *opts, struct exec_tree *tree, pid_t *pid_out,
		       int *status, struct cordon_error *err);

/* Report why the process cannot go on (a struct confine_report) and _exit(exit_code). */
_Noreturn void confine_fail(int report_fd, int exit_code, enum cordon_code code, int errnum,
			    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
