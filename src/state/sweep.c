// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <poll.h>
#include <stdarg.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "cordon/audit.h"
#include "cordon/state.h"
#include "state-internal.h"

/* How long `cordon sweep` waits for a session's monitor it asked to end it. */
#define SWEEP_STOP_WAIT_MS 10000

/* What sweep does with an entry, and why (cordon_sweep_fn). */
struct verdict {
	enum cordon_sweep_action action;
	char why[192];
	pid_t owner_pid; /* CORDON_SWEEP_STOP: its supervisor, to wait for */
	uint64_t owner_start;
	bool own_cgroups_only; /* REMOVE: only cgroups named cordon-ID (run, session) */
	bool keep_audit;       /* its log goes to the audit directory (its end was this host's) */
};

static void verdict(struct verdict *v, enum cordon_sweep_action action, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void verdict(struct verdict *v, enum cordon_sweep_action action, const char *fmt, ...)
{
	va_list ap;

	v->action = action;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

/*
 * What is provably left of a sandbox, read from its state: nothing is
 * removed on a guess. An entry recorded on another host (a shared state
 * root) ages out only: its pids are that host's. One of an earlier boot
 * of this host has no process left. Here, a sandbox whose supervisor and
 * init are gone (pid and start time: a recycled pid is another process)
 * left its cgroups and directory; a live session whose owner is gone, or
 * that outlived its lifetime cap, is asked to end (its monitor removes
 * it). Live sandboxes of live owners, and containers of `cordon create
 * --bundle` (their launcher deletes them), stay. So does what cannot be
 * read for sure.
 */
static void judge(int dir, const char *host, const char *boot, uint64_t now, struct verdict *v)
{
	_cleanup_free_ char *buf = NULL;
	struct cordon_state_info info;
	struct cordon_error err;
	struct stat st;
	bool expired, live = false;

	memset(v, 0, sizeof(*v));
	if (state_read(dir, STATE_FILE, CORDON_INPUT_JSON_MAX, &buf, NULL) < 0) {
		/* A directory without state: an owner between mkdir and write, or one
		 * that died right there. Only an old one is reaped. */
		if (fstat(dir, &st) == 0 && st.st_mtime + 60 < time(NULL))
			verdict(v, CORDON_SWEEP_REMOVE, "no state, made over a minute ago");
		return;
	}
	if (state_parse("", buf, &info, &err) < 0)
		return;
	v->own_cgroups_only = info.kind != CORDON_KIND_OCI;
	expired = info.max_lifetime_ms && info.created_ms &&
		  info.created_ms + info.max_lifetime_ms < now;
	if (info.host[0] && strcmp(info.host, host) != 0) {
		if (expired)
			verdict(v, CORDON_SWEEP_FORGET,
				"recorded on host %s, older than its lifetime cap", info.host);
	} else if (info.boot_id[0] && boot[0] && strcmp(info.boot_id, boot) != 0) {
		verdict(v, CORDON_SWEEP_FORGET, "recorded before this host's last boot");
		v->keep_audit = true;
	} else if (!state_process_alive(info.owner_pid, info.owner_start) &&
		   !state_process_alive(info.init_pid, info.init_start)) {
		live = false;
		if (!info.kept)
			verdict(v, CORDON_SWEEP_REMOVE, "its supervisor (pid %d) is gone",
				(int)info.owner_pid);
		v->keep_audit = true;
	} else {
		live = true;
	}
	if (v->action == CORDON_SWEEP_KEEP && live && info.kind == CORDON_KIND_SESSION) {
		/* creator_pid 0: created with --owner none, its lifetime alone ends it. */
		if (info.creator_pid && !state_process_alive(info.creator_pid, info.creator_start))
			verdict(v, CORDON_SWEEP_STOP, "its owner (pid %d) is gone",
				(int)info.creator_pid);
		else if (expired)
			verdict(v, CORDON_SWEEP_STOP, "older than its lifetime cap");
		v->owner_pid = info.owner_pid;
		v->owner_start = info.owner_start;
	}
	cordon_state_info_free(&info);
}

/*
 * The log of a sandbox whose supervisor died (or an earlier boot's), as
 * `cordon rm` keeps it: a cleanup event saying why, then the state
 * directory's audit.jsonl copied into the audit directory its record names
 * (a --audit FILE is the caller's already). Never in the way of the sweep.
 */
static void sweep_audit(int dir, const char *id, const char *why, bool cgroups)
{
	static const char *const removed[] = { "cgroups", "state" };
	struct cordon_error err = { 0 };
	struct cordon_audit *a = cordon_audit_open_state(dir, id, &err);

	if (a) {
		cordon_audit_cleanup(a, removed + !cgroups, ARRAY_SIZE(removed) - !cgroups, why,
				     &err);
		cordon_audit_close(a);
	}
	memset(&err, 0, sizeof(err));
	if (cordon_audit_keep(dir, id, &err) < 0)
		cordon_debug("sweep: %s: %s (the log is lost with the state)", id, err.msg);
}

/*
 * Ask a live session's monitor to end it: only through its control
 * socket, whose listener must be the recorded supervisor, never by a
 * signal to a pid a state file names (a forged one could name any
 * process). wait: until the monitor is gone (bounded); else at once.
 */
static int stop_session(int dir, const struct verdict *v, bool wait)
{
	struct cordon_state_info info = { .owner_pid = v->owner_pid,
					  .owner_start = v->owner_start };
	_cleanup_close_ int fd = cordon_state_monitor_connect(dir, &info, false), owner = -1;
	uint32_t req = CORDON_MONITOR_STOP;
	struct pollfd p;

	if (fd < 0)
		return fd;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(req))
		return -errno;
	if (!wait)
		return 0;
	owner = cordon_pidfd_verified(v->owner_pid, v->owner_start);
	p = (struct pollfd){ .fd = owner, .events = POLLIN };
	if (owner >= 0 && cordon_wait_poll(&p, 1, SWEEP_STOP_WAIT_MS) <= 0)
		return -ETIMEDOUT;
	return 0;
}

int cordon_state_sweep_report(int root_fd, const struct cordon_sweep_opts *opts)
{
	_cleanup_close_ int fd = dup(root_fd);
	_cleanup_free_ char *host = cordon_state_host_name(), *boot = cordon_state_boot_id();
	uint64_t now = cordon_now_wall_ms();
	DIR *d;
	struct dirent *de;
	unsigned removed = 0;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d)
		return 0;
	fd = -1;
	/* The dup shares root_fd's offset: a sweep before this one read it to the end. */
	rewinddir(d);
	/* The budget counts removals: live entries read past cost nothing of it. */
	while (removed < opts->budget && (de = readdir(d))) {
		_cleanup_close_ int dir = -1;
		struct verdict v;
		int r = 0;

		if (de->d_name[0] == '.' || !cordon_id_valid(de->d_name))
			continue;
		/* Ours only, never through a link: what else is in the root is not read. */
		dir = state_open_private_dir(root_fd, de->d_name);
		/* A locked entry is being created or worked on by a command: not ours. */
		if (dir < 0 || flock(dir, LOCK_EX | LOCK_NB) < 0)
			continue;
		judge(dir, host, boot, now, &v);
		if (v.action == CORDON_SWEEP_KEEP)
			continue;
		if (!opts->dry_run) {
			if (v.action == CORDON_SWEEP_STOP)
				r = stop_session(dir, &v, opts->wait);
			/*
			 * Another host's cgroups, or an earlier boot's, are not this one's. A
			 * recorded cordon-ID that still holds a process is this sandbox's
			 * (an init cloned before its pid was recorded, for the moment it
			 * takes to end) or one the user moved there: the entry stays, with
			 * its list, for a later sweep.
			 */
			if (v.action == CORDON_SWEEP_REMOVE &&
			    state_remove_cgroups(dir, v.own_cgroups_only ? de->d_name : NULL) == -EBUSY &&
			    v.own_cgroups_only) {
				verdict(&v, CORDON_SWEEP_KEEP,
					"its supervisor is gone but a process is still in its cgroups: "
					"left for a later sweep (cordon rm %s ends the entry)",
					de->d_name);
				/* Its log meanwhile where logs are kept: a state root on tmpfs
				 * goes at reboot or logout (the removal copies it again). */
				if (v.keep_audit)
					(void)cordon_audit_keep(dir, de->d_name,
								&(struct cordon_error){ 0 });
				if (opts->report)
					opts->report(opts->ctx, de->d_name, v.action, v.why);
				continue;
			}
			if (v.keep_audit && v.action != CORDON_SWEEP_STOP)
				sweep_audit(dir, de->d_name, v.why, v.action == CORDON_SWEEP_REMOVE);
			if (v.action != CORDON_SWEEP_STOP)
				state_remove_entry(root_fd, de->d_name);
		}
		if (r < 0)
			snprintf(v.why + strlen(v.why), sizeof(v.why) - strlen(v.why),
				 "; its monitor could not be asked to end it: %s", strerror(-r));
		if (opts->report)
			opts->report(opts->ctx, de->d_name, r < 0 ? CORDON_SWEEP_KEEP : v.action,
				     v.why);
		if (r == 0)
			removed++;
	}
	closedir(d);
	return (int)removed;
}

int cordon_state_sweep(int root_fd, unsigned budget)
{
	const struct cordon_sweep_opts opts = { .budget = budget };

	return cordon_state_sweep_report(root_fd, &opts);
}
