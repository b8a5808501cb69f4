// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI lifecycle commands (docs/oci.md): create forks the monitor;
 * start, state, kill and delete act on a container through its state
 * directory, each holding the directory's lock, so that commands on one
 * id are serialized.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "sandbox-internal.h"

/* How long delete waits for a killed container's monitor to finish. */
#define MONITOR_EXIT_WAIT_MS 10000
/* How long delete waits for a killed container's init to end before it gives up. */
#define INIT_EXIT_WAIT_MS 10000

/* Before the sandbox exists: why the monitor cannot go on, for the waiting create. */
static _Noreturn void monitor_fail(int notify_fd, int errnum, const char *what)
{
	struct sync_msg msg = { .type = SYNC_SETUP_FAILED,
				.code = CORDON_E_INTERNAL,
				.errnum = errnum };

	snprintf(msg.text, sizeof(msg.text), "the monitor: %s", what);
	cordon_write_all(notify_fd, &msg, sizeof(msg));
	_exit(CORDON_EXIT_FAILURE);
}

/*
 * A copy of our fd (close-on-exec, at or above first), -1 when the caller
 * left it closed. One that is close-on-exec is cordon's own, never the
 * caller's (an exec keeps no such fd): never the container's (main opens
 * 0-2 first, so this is a second guard).
 */
static int keep_aside(int notify_fd, int fd, int first)
{
	int flags = fcntl(fd, F_GETFD), copy;

	if (flags < 0 && errno == EBADF)
		return -1;
	if (flags < 0)
		monitor_fail(notify_fd, errno, "keeping the caller's stdio for the container");
	if (flags & FD_CLOEXEC)
		monitor_fail(notify_fd, 0, "a stdio fd of the caller's is one of cordon's own");
	copy = fcntl(fd, F_DUPFD_CLOEXEC, first);
	if (copy < 0)
		monitor_fail(notify_fd, errno, "keeping the caller's stdio for the container");
	return copy;
}

/* The monitor: a detached process of this binary that supervises one container. */
static _Noreturn void monitor_main(const struct cordon_spec *spec, const char *root, int notify_fd,
				   int console_fd)
{
	int stdio[3] = { -1, -1, -1 }, hook_stdio[2] = { -1, -1 };
	/*
	 * A session (native create) starts at once, has no stdio of the
	 * caller's and no hooks, is the monitor's own child and leaves
	 * nothing behind when it ends; a bundle's container waits for start,
	 * is its caller's child (a launcher reaps it) and stays until delete.
	 */
	const bool session = spec->session;
	const struct cordon_sandbox_opts opts = {
		.state_root = root,
		.wait_start = !session,
		.kept = !session,
		.foster_init = !session,
		.notify_fd = notify_fd,
		.console_fd = console_fd,
		.container_stdio = session ? NULL : stdio,
		.hook_stdio = session ? NULL : hook_stdio,
	};
	int first = 3 + (int)spec->preserve_fds, null, r;
	struct cordon_result result;
	int code;

	/* Its own session: the caller's terminal and process group are not its. */
	setsid();
	/*
	 * Nothing of the caller's stays with the monitor for the container's
	 * life: a caller that reads our output to its end (`$(cordon create
	 * ...)`, `run --detach`) must see it end when create returns. The
	 * container's stdio (the caller's, as runc passes it on; with a
	 * terminal, the pty) goes to the init, the create-time hooks write
	 * to the caller's stdout and stderr until create returns, and the
	 * caller's --preserve-fds go to the init; ours is /dev/null, and
	 * every other fd the caller had is closed.
	 */
	for (int fd = 0; fd < 3 && !session; fd++)
		if (console_fd < 0)
			stdio[fd] = keep_aside(notify_fd, fd, first);
	if (!session) {
		hook_stdio[0] = keep_aside(notify_fd, STDOUT_FILENO, first);
		hook_stdio[1] = keep_aside(notify_fd, STDERR_FILENO, first);
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		monitor_fail(notify_fd, errno, "opening /dev/null");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(null, fd) < 0)
			monitor_fail(notify_fd, errno, "its stdio to /dev/null");
	close(null);
	{
		/*
		 * The audit log's --audit fd too: the monitor writes the
		 * container's events (and names the file, made without one).
		 */
		int keep[] = { notify_fd,     console_fd,    stdio[0],	      stdio[1],
			       stdio[2],      hook_stdio[0], hook_stdio[1], cordon_log_fd(),
			       spec->audit.fd, spec->audit.unnamed_dir };

		r = cordon_close_fds_except(first, keep, ARRAY_SIZE(keep));
		if (r < 0)
			monitor_fail(notify_fd, -r, "closing the caller's fds");
	}
	/* Never pin the caller's working directory (paths in spec are absolute). */
	if (chdir("/") < 0)
		monitor_fail(notify_fd, errno, "chdir /");
	cordon_log_detach_stderr();
	code = cordon_sandbox_run_opts(spec, &opts, &result);
	/* Failures before "created" went to `cordon create`; later ones are the exit status. */
	cordon_result_free(&result);
	_exit(code);
}

int cordon_container_create(const struct cordon_spec *spec, const char *root, int console_fd,
			    pid_t *pid, struct cordon_error *err)
{
	_cleanup_close_ int rd = -1, wr = -1;
	struct sync_msg msg;
	int p[2];
	pid_t monitor;
	ssize_t r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	rd = p[0];
	wr = p[1];
	fflush(stdout);
	fflush(stderr);
	monitor = fork();
	if (monitor < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "forking the monitor");
	if (monitor == 0) {
		close(rd);
		monitor_main(spec, root, wr, console_fd);
	}
	cordon_closep(&wr);
	do
		r = read(rd, &msg, sizeof(msg));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(msg)) {
		int status = 0;

		waitpid(monitor, &status, 0);
		return cordon_error_set(err, CORDON_E_INTERNAL, 0,
					"the monitor ended before the container was created "
					"(status %d)",
					WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	msg.text[sizeof(msg.text) - 1] = '\0';
	if (msg.type != SYNC_CREATED) {
		/* Reap it: it removed what it made and exits now. */
		waitpid(monitor, NULL, 0);
		return cordon_error_set(err,
					msg.code < CORDON_CODE_COUNT ? (enum cordon_code)msg.code :
								       CORDON_E_INTERNAL,
					msg.errnum, "%s", msg.text);
	}
	*pid = (pid_t)msg.status;
	return 0;
}

static int not_in_status(const struct cordon_state *state, enum cordon_status status,
			 const char *what, struct cordon_error *err)
{
	return cordon_error_set(err, CORDON_E_STATE, 0, "container %s is %s: %s", state->id,
				cordon_status_name(status), what);
}

/*
 * The request, with our stdout and stderr when both are open: the
 * start-time hooks write there, as runc's (the monitor's own stdio is
 * /dev/null).
 */
static int send_start_request(int fd, uint32_t req)
{
	static const int out[2] = { STDOUT_FILENO, STDERR_FILENO };
	bool both = fcntl(STDOUT_FILENO, F_GETFD) >= 0 && fcntl(STDERR_FILENO, F_GETFD) >= 0;
	int r = cordon_send_fds(fd, &req, sizeof(req), out, both ? 2 : 0, 0);

	errno = -r;
	return r < 0 ? -1 : 0;
}

/* The monitor's answer to start: 0, -EPIPE when it ended without one, -EINTR, -errno. */
int sandbox_monitor_answer(int fd, struct monitor_reply *rep)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = cordon_wait_poll(&p, 1, -1);
	ssize_t n;

	if (r < 0)
		return r;
	n = recv(fd, rep, sizeof(*rep), MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*rep) ? 0 : -EPIPE;
}

/*
 * Connect to the monitor of a sandbox whose state is open, its listener
 * checked to be the recorded supervisor (cordon_state_monitor_connect:
 * a link planted at monitor.sock reaches no other). The connected socket,
 * or -1 (err set).
 */
int sandbox_monitor_reach(const struct cordon_state *state, struct cordon_error *err)
{
	int fd = cordon_state_monitor_connect(state->dir_fd, &state->info, true);

	if (fd == -EPERM)
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"container %s: %s is not its monitor's socket (another "
					"container's, linked there?): refused",
					state->id, CORDON_STATE_MONITOR_SOCKET);
	if (fd == -EINTR)
		return cordon_interrupt_error(err, "container %s: reaching its monitor", state->id);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, -fd, "container %s: reaching its monitor",
					state->id);
	return fd;
}

/* The monitor's answer, as an error when it is one: 0 or -1 (err set). */
int sandbox_monitor_reply_error(const char *id, int r, struct monitor_reply *rep,
				const char *what, struct cordon_error *err)
{
	if (r == -EINTR)
		return cordon_interrupt_error(err, "container %s: waiting for its monitor to %s",
					      id, what);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, r == -EPIPE ? 0 : -r,
					"container %s: the monitor ended without an answer", id);
	rep->msg[sizeof(rep->msg) - 1] = '\0';
	if (rep->code != CORDON_OK)
		return cordon_error_set(err,
					rep->code < CORDON_CODE_COUNT ? (enum cordon_code)rep->code :
									CORDON_E_INTERNAL,
					rep->errnum, "%s", rep->msg);
	return 0;
}

int cordon_container_start(const char *root, const char *id, struct cordon_error *err)
{
	struct cordon_state state;
	struct monitor_reply rep;
	_cleanup_close_ int fd = -1;
	enum cordon_status status;
	int r;

	if (cordon_state_open(&state, root, id, true, err) < 0)
		return -1;
	status = container_status(&state);
	if (status != CORDON_STATUS_CREATED) {
		not_in_status(&state, status, "only a created container can be started", err);
		cordon_state_close(&state);
		return -1;
	}
	fd = sandbox_monitor_reach(&state, err);
	if (fd >= 0 && send_start_request(fd, MONITOR_START) < 0)
		cordon_error_set(err, CORDON_E_STATE, errno, "container %s: reaching its monitor",
				 id);
	if (fd < 0 || err->code) {
		cordon_state_close(&state);
		return -1;
	}
	/*
	 * Not under the lock: the answer comes once the container's process
	 * reached its execve, which the container can hold up (an exec'd
	 * process of it stops it); kill, state and delete go on meanwhile.
	 * The monitor takes one start and refuses any other ("already
	 * started").
	 */
	cordon_state_close(&state);
	r = sandbox_monitor_answer(fd, &rep);
	if (sandbox_monitor_reply_error(id, r, &rep, "start it (the start goes on)", err) < 0)
		return -1;
	/* Started; a poststart hook that failed is a warning (runtime-spec, as runc). */
	if (rep.msg[0])
		cordon_warn("%s", rep.msg);
	return 0;
}

int cordon_container_net_update(const char *root, const char *id, const char *edits, size_t len,
				char fingerprint[65], struct cordon_error *err)
{
	struct cordon_state state;
	struct monitor_reply rep;
	_cleanup_close_ int fd = -1, memfd = cordon_memfd_sealed("cordon-update", edits, len);
	uint32_t req = MONITOR_NET_UPDATE;
	enum cordon_status status;
	int r;

	if (memfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -memfd, "update: memfd");
	/* Exclusive: one update at a time, and an exec that checks the fingerprint waits. */
	if (cordon_state_open(&state, root, id, true, err) < 0)
		return -1;
	status = container_status(&state);
	if (status != CORDON_STATUS_CREATED && status != CORDON_STATUS_RUNNING &&
	    status != CORDON_STATUS_PAUSED) {
		not_in_status(&state, status, "only a live sandbox's policy can change", err);
		cordon_state_close(&state);
		return -1;
	}
	/*
	 * Marked before it is asked, under the lock: an exec expecting a
	 * fingerprint refuses until the supervisor has applied the update
	 * (or refused it) and removed the mark, even if we are gone by then.
	 */
	r = cordon_state_mark(&state, CORDON_STATE_NET_UPDATE, true);
	if (r < 0)
		cordon_error_set(err, CORDON_E_STATE, -r, "container %s: marking an update", id);
	else
		fd = sandbox_monitor_reach(&state, err);
	if (fd >= 0 && (r = cordon_send_fds(fd, &req, sizeof(req), &memfd, 1, 0)) < 0)
		cordon_error_set(err, CORDON_E_STATE, -r, "container %s: reaching its monitor", id);
	if (fd < 0 || err->code) {
		cordon_state_mark(&state, CORDON_STATE_NET_UPDATE, false);
		cordon_state_close(&state);
		return -1;
	}
	r = sandbox_monitor_answer(fd, &rep);
	cordon_state_close(&state);
	if (sandbox_monitor_reply_error(id, r, &rep,
					"apply the update (applied if it had taken it: compare the "
					"fingerprint in cordon inspect)",
					err) < 0)
		return -1;
	snprintf(fingerprint, 65, "%.64s", rep.msg);
	return 0;
}

static void gen_string(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void rfc3339(uint64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char base[32];

	gmtime_r(&t, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", base, (unsigned)(ms % 1000));
}

/*
 * The OCI state object (runtime-spec "Query State"), plus runc's
 * "created", with the status given: what `cordon state` prints and what
 * a hook reads on its stdin.
 */
static void gen_state_open(yajl_gen g, const struct cordon_state *state,
			   enum cordon_status status)
{
	const struct cordon_state_info *info = &state->info;
	char created[48];

	yajl_gen_map_open(g);
	gen_string(g, "ociVersion");
	gen_string(g, CORDON_OCI_VERSION);
	gen_string(g, "id");
	gen_string(g, state->id);
	gen_string(g, "status");
	gen_string(g, cordon_status_name(status));
	/*
	 * The container's pid 1, the sandbox init: what --pid-file says and
	 * the process whose exit is the container's. A stopped container has
	 * no process: runc says 0 as well.
	 */
	gen_string(g, "pid");
	yajl_gen_integer(g, status == CORDON_STATUS_STOPPED ? 0 : info->init_pid);
	gen_string(g, "bundle");
	gen_string(g, info->bundle ? info->bundle : "");
	gen_string(g, "annotations");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < info->n_annotations; i++) {
		gen_string(g, info->annotations[2 * i]);
		gen_string(g, info->annotations[2 * i + 1]);
	}
	yajl_gen_map_close(g);
	rfc3339(info->created_ms, created, sizeof(created));
	gen_string(g, "created");
	gen_string(g, created);
	/* cordon's addition: how the container process ended, once it has. */
	if (status == CORDON_STATUS_STOPPED && info->has_exit) {
		gen_string(g, "exitStatus");
		yajl_gen_integer(g, info->exit_status);
	}
}

static void gen_state(yajl_gen g, const struct cordon_state *state, enum cordon_status status)
{
	gen_state_open(g, state, status);
	yajl_gen_map_close(g);
}


char *sandbox_state_json(const struct cordon_state *state, enum cordon_status status)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	gen_state(g, state, status);
	return cordon_json_gen_take(g);
}

char *cordon_container_state(const char *root, const char *id, struct cordon_error *err)
{
	struct cordon_state state;
	yajl_gen g;

	if (cordon_state_open(&state, root, id, false, err) < 0)
		return NULL;
	/* Its process has ended: the exit status comes with the monitor's record. */
	if (cordon_state_settle(&state, MONITOR_EXIT_WAIT_MS) < 0) {
		cordon_interrupt_error(err, "container %s: waiting for its monitor's record", id);
		cordon_state_close(&state);
		return NULL;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	gen_state(g, &state, container_status(&state));
	cordon_state_close(&state);
	return cordon_json_gen_take(g);
}

static int signal_process(pid_t pid, uint64_t start, int sig)
{
	int fd = cordon_pidfd_verified(pid, start), r;

	if (fd < 0)
		return fd;
	r = cordon_pidfd_send_signal(fd, sig) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int cordon_container_kill(const char *root, const char *id, int sig, bool all,
			  struct cordon_error *err)
{
	struct cordon_state state;
	enum cordon_status status;
	int r;

	if (cordon_state_open(&state, root, id, true, err) < 0)
		return -1;
	status = container_status(&state);
	/* A paused container takes signals too: they act when it is resumed (KILL on v2 at once).
	 */
	/*
	 * "container not running" and "no such process" are what containerd's
	 * shim looks for in a failed kill (as runc words it) to report the
	 * process finished rather than an unknown error.
	 */
	if (status != CORDON_STATUS_CREATED && status != CORDON_STATUS_RUNNING &&
	    status != CORDON_STATUS_PAUSED) {
		not_in_status(&state, status, "container not running, no such process to signal",
			      err);
		cordon_state_close(&state);
		return -1;
	}
	if (all) {
		r = container_signal_all(&state, sig, err);
		cordon_state_close(&state);
		return r;
	}
	r = signal_process(state.info.pid, state.info.pid_start, sig);
	cordon_state_close(&state);
	if (r == -ESRCH)
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"container %s: its process has ended: container not "
					"running, no such process to signal",
					id);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "container %s: signal %d", id,
					sig);
	return 0;
}

/*
 * After the init's SIGKILL: the supervisor finishes (cgroups, state) and
 * exits. 0, or -EINTR when a signal ended the wait.
 */
static int wait_owner_exit(const struct cordon_state_info *info)
{
	_cleanup_close_ int fd = cordon_pidfd_verified(info->owner_pid, info->owner_start);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	if (fd < 0)
		return 0;
	r = cordon_wait_poll(&p, 1, MONITOR_EXIT_WAIT_MS);
	if (r != 0)
		return r == -EINTR ? r : 0;
	/* A monitor that hangs is ours to end: the container is gone already. */
	cordon_pidfd_send_signal(fd, SIGKILL);
	r = cordon_wait_poll(&p, 1, 1000);
	return r == -EINTR ? r : 0;
}

/* Is pid a member of the cgroup dir (its cgroup.procs)? */
static bool cgroup_lists(const char *dir, pid_t pid)
{
	_cleanup_free_ char *procs = NULL, *path = cordon_xasprintf("%s/cgroup.procs", dir);
	char *save = NULL;
	uint64_t v;

	if (cordon_read_file_at(AT_FDCWD, path, &procs, NULL) < 0)
		return false;
	for (char *p = strtok_r(procs, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
		if (cordon_parse_u64(p, &v) == 0 && v == (uint64_t)pid)
			return true;
	return false;
}

/* Is pid, by its /proc/PID/cgroup, in a v1 freezer cgroup (hierarchy at mount) not thawed? */
static bool in_frozen_freezer(pid_t pid, const char *mount)
{
	_cleanup_free_ char *text = NULL, *path = cordon_xasprintf("/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *state = NULL, *file = NULL;
	char *save = NULL;

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return false;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *c = strchr(l, ':'), *rel = c ? strchr(c + 1, ':') : NULL;

		if (!rel || strncmp(c + 1, "freezer:", 8) != 0 || strstr(rel, "/.."))
			continue;
		file = cordon_xasprintf("%s%s/freezer.state", mount, rel + 1);
		if (cordon_read_file_at(AT_FDCWD, file, &state, NULL) < 0)
			return false;
		return strncmp(state, "THAWED", 6) != 0;
	}
	return false;
}

/*
 * cgroup v1: a process of the container frozen in a freezer cgroup that
 * is not the container's (one its caller made and froze) takes no
 * SIGKILL until it is thawed, and a pid namespace's init does not finish
 * dying while one of its processes is frozen. The container's processes
 * belong in its own freezer cgroup, which is thawed: moved back there,
 * each is thawed (the kernel makes a task entering a cgroup take its
 * state), and nothing of the caller's cgroup is touched. The init (its
 * start time checked) and the members of the container's other cgroups
 * are moved, each only while it is still listed there and frozen.
 *
 * A pid is a number: the process it named may end and the number go to
 * another (a host process) between the look and the write. So a pid is
 * written only while it names the process looked at: its start time,
 * read when it was found, is the same just before the write, and its
 * pidfd still names a live process after it (then it held the number
 * throughout). A frozen process cannot end, which narrows that to a
 * thaw by its freezer's owner at that moment; a process that ended
 * meanwhile is said, and its number's new owner left where it was put.
 */
static void reclaim_frozen(const struct cordon_state *state)
{
	const struct cordon_state_info *info = &state->info;
	size_t n_dirs, n;
	_cleanup_strv_ char **dirs = cordon_state_cgroup_dirs(state, &n_dirs);
	_cleanup_free_ pid_t *pids = NULL;
	_cleanup_free_ char *procs = NULL, *mount = NULL;
	const char *freezer = NULL;

	for (size_t i = 0; i < n_dirs && !freezer; i++) {
		_cleanup_free_ char *f = cordon_xasprintf("%s/freezer.state", dirs[i]);

		if (access(f, F_OK) == 0)
			freezer = dirs[i];
	}
	if (!freezer)
		return;
	/* The hierarchy's mount: what /proc/PID/cgroup's paths start from. */
	{
		struct cordon_cgroup_layout layout;
		struct cordon_error ignored = { 0 };

		if (cordon_cgroup_detect(&layout, &ignored) < 0)
			return;
		for (size_t i = 0; i < layout.n && !mount; i++)
			if (!layout.hier[i].v2 && (layout.hier[i].ctrls & CORDON_CTRL_FREEZER))
				mount = cordon_xstrdup(layout.hier[i].mount);
		cordon_cgroup_layout_free(&layout);
		if (!mount)
			return;
	}
	procs = cordon_xasprintf("%s/cgroup.procs", freezer);
	n = cordon_state_cgroup_pids(state, &pids);
	for (size_t i = 0; i <= n; i++) {
		pid_t pid = i < n ? pids[i] : info->init_pid;
		_cleanup_close_ int fd = -1;
		uint64_t start = 0;
		char text[16];
		bool ours = false;

		if (pid <= 0 || cgroup_lists(freezer, pid))
			continue;
		if (i == n) {
			start = info->init_start;
			fd = cordon_pidfd_verified(pid, start);
			ours = fd >= 0;
		} else {
			fd = cordon_pidfd_open(pid);
			start = cordon_proc_start_time(pid);
			for (size_t k = 0; fd >= 0 && start && k < n_dirs && !ours; k++)
				ours = cgroup_lists(dirs[k], pid);
		}
		if (!ours || !in_frozen_freezer(pid, mount))
			continue;
		snprintf(text, sizeof(text), "%d", (int)pid);
		if (cordon_proc_start_time(pid) != start || cordon_pidfd_send_signal(fd, 0) < 0)
			continue;
		cordon_write_file_at(AT_FDCWD, procs, text, strlen(text));
		if (cordon_pidfd_send_signal(fd, 0) < 0)
			cordon_warn("container %s: its process %d ended as it was moved back "
				    "to its freezer cgroup; another process may have its pid now",
				    state->id, (int)pid);
	}
}

/*
 * End a container that is not stopped: thawed (ours, and any process of
 * it frozen elsewhere), its init killed (which ends its pid namespace),
 * every process of its cgroups killed; then wait for the init to be
 * gone. -1 (err set) when it is not: the caller keeps the state, so that
 * a later delete can try again, and never reports the container gone.
 */
static int kill_container(struct cordon_state *state, enum cordon_status status,
			  struct cordon_error *err)
{
	const struct cordon_state_info *info = &state->info;
	_cleanup_close_ int pidfd = cordon_pidfd_verified(info->init_pid, info->init_start);
	_cleanup_strv_ char **dirs = NULL;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	size_t n;
	int r;

	/* A frozen init dies of its SIGKILL only once thawed (cgroup v1), as runc does it. */
	if (status == CORDON_STATUS_PAUSED)
		container_thaw(state);
	reclaim_frozen(state);
	if (pidfd >= 0)
		cordon_pidfd_send_signal(pidfd, SIGKILL);
	/* Whatever else is in its cgroups: exec'd processes, a hook's, what was moved there. */
	dirs = cordon_state_cgroup_dirs(state, &n);
	for (size_t i = 0; i < n; i++)
		cordon_cgroup_kill_tree(dirs[i]);
	if (pidfd < 0)
		return 0; /* gone already */
	r = cordon_wait_poll(&p, 1, INIT_EXIT_WAIT_MS);
	if (r == 1)
		return 0;
	if (r == -EINTR)
		return cordon_interrupt_error(err,
					      "container %s: waiting for its init to end (killed; "
					      "the container is kept)",
					      state->id);
	return cordon_error_set(err, CORDON_E_STATE, 0,
				"container %s: its init (pid %d) is still alive %d s after SIGKILL "
				"(frozen by another cgroup, or in an uninterruptible wait?); the "
				"container is kept: delete it again once it can end",
				state->id, (int)info->init_pid, INIT_EXIT_WAIT_MS / 1000);
}

/*
 * The container's cgroups, which must be empty now: a tree that still
 * holds a process after the container was killed is reported, and its
 * record stays with the state. One of a container that was stopped
 * already (its pid namespace is gone) holds no process of its: what is
 * there is someone else's, and is left alone.
 */
static int remove_container_cgroups(struct cordon_state *state, bool killed,
				    struct cordon_error *err)
{
	size_t n;
	_cleanup_strv_ char **dirs = cordon_state_cgroup_dirs(state, &n);

	for (size_t i = 0; i < n; i++) {
		int r = cordon_cgroup_remove_tree(dirs[i], false);

		if (r == -EBUSY && killed)
			return cordon_error_set(err, CORDON_E_CGROUP, EBUSY,
						"container %s: cgroup %s still holds processes "
						"after the container was killed; the container is "
						"kept: delete it again",
						state->id, dirs[i]);
	}
	/* Its monitor died while it made them: what it made is empty, with nothing below. */
	cordon_strv_free(dirs);
	dirs = cordon_state_cgroup_planned(state, &n);
	for (size_t i = 0; i < n; i++)
		cordon_cgroup_remove_empty(dirs[i]);
	return 0;
}

/*
 * The kept config's poststop hooks and the state document they read,
 * taken before the state directory goes (*doc stays NULL when there are
 * none). A config that no longer parses runs none, with a warning.
 */
static void poststop_prepare(const struct cordon_state *state, struct cordon_spec *spec, char **doc)
{
	_cleanup_free_ char *text = NULL;
	struct cordon_error err = { 0 };
	size_t len = 0;

	if (cordon_state_read_config(state, &text, &len, &err) < 0)
		return; /* not a bundle's container, or nothing kept */
	/* Most configs have none: no need to parse (and compile seccomp) for nothing. */
	if (!strstr(text, "\"poststop\""))
		return;
	if (cordon_spec_from_oci(spec, state->info.bundle, text, len, &err) < 0) {
		cordon_warn("container %s: poststop hooks not run: %s", state->id, err.msg);
		return;
	}
	if (spec->oci->n_hooks[CORDON_OCI_HOOK_POSTSTOP])
		*doc = sandbox_state_json(state, CORDON_STATUS_STOPPED);
}

struct cordon_audit *cordon_container_audit_open(const char *root, const char *id,
						 struct cordon_error *err)
{
	struct cordon_state state;
	struct cordon_audit *a;

	memset(err, 0, sizeof(*err));
	if (cordon_state_open(&state, root, id, false, err) < 0)
		return NULL;
	a = cordon_audit_open_state(state.dir_fd, id, err);
	cordon_state_close(&state);
	return a;
}

/*
 * The log's cleanup event, and a state directory's log kept in the audit
 * directory, before the state goes. Never in the way of the delete: a
 * sandbox must always be removable; a failure is a warning.
 */
static void delete_audit(struct cordon_state *state, bool killed)
{
	static const char *const removed[] = { "processes", "cgroups", "state" };
	struct cordon_error err = { 0 };
	struct cordon_audit *a = cordon_audit_open_state(state->dir_fd, state->id, &err);

	if (a) {
		if (cordon_audit_cleanup(a, removed + !killed, ARRAY_SIZE(removed) - !killed,
					 NULL, &err) < 0)
			cordon_warn("%s", err.msg);
		cordon_audit_close(a);
	} else if (err.code) {
		cordon_warn("%s", err.msg);
	}
	memset(&err, 0, sizeof(err));
	if (cordon_audit_keep(state->dir_fd, state->id, &err) < 0)
		cordon_warn("%s (the log is lost with the state)", err.msg);
}

int cordon_container_delete(const char *root, const char *id, bool force, struct cordon_error *err)
{
	struct cordon_state state;
	enum cordon_status status;
	_cleanup_free_ char *doc = NULL;
	struct cordon_error hook = { 0 };
	struct cordon_spec spec;
	int r = 0;

	cordon_spec_init(&spec);
	if (cordon_state_open(&state, root, id, true, err) < 0) {
		/*
		 * runc: deleting with --force what is already gone succeeds
		 * (containerd's shim cleans up with `delete --force` after the
		 * container's own delete).
		 */
		if (force && !cordon_state_exists(root, id))
			return 0;
		return -1;
	}
	status = container_status(&state);
	/* A session is always running: `cordon rm` is how it ends. */
	if ((status == CORDON_STATUS_RUNNING || status == CORDON_STATUS_PAUSED) && !force &&
	    state.info.kind != CORDON_KIND_SESSION) {
		not_in_status(&state, status, "stop it first, or delete --force", err);
		cordon_state_close(&state);
		return -1;
	}
	/* Never reported gone while anything of it still runs. */
	if (status != CORDON_STATUS_STOPPED && kill_container(&state, status, err) < 0) {
		cordon_state_close(&state);
		return -1;
	}
	if (wait_owner_exit(&state.info) < 0) {
		/* Killed, not removed: the state stays for another delete. */
		cordon_interrupt_error(err, "container %s: waiting for its monitor to finish", id);
		cordon_state_close(&state);
		return -1;
	}
	if (remove_container_cgroups(&state, status != CORDON_STATUS_STOPPED, err) < 0) {
		cordon_state_close(&state);
		return -1;
	}
	poststop_prepare(&state, &spec, &doc);
	delete_audit(&state, status != CORDON_STATUS_STOPPED);
	cordon_state_destroy(&state);
	/* After the container is gone, before delete returns; failures are warnings. */
	if (doc && sandbox_hooks_run(&spec, CORDON_OCI_HOOK_POSTSTOP, doc, 0, NULL, &hook) < 0) {
		/* A signal ended the wait for a hook: that is delete's failure, said once. */
		if (cordon_interrupted())
			r = cordon_error_set(err, CORDON_E_STATE, 0, "container %s deleted, but %s",
					     id, hook.msg);
		else
			cordon_warn("%s", hook.msg);
	}
	cordon_spec_free(&spec);
	return r;
}

/* Has the sandbox every label asked for (value NULL: the key, whatever its value)? */
static bool labels_match(const struct cordon_state_info *info, const char *const *labels,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool found = false;

		for (size_t k = 0; k < info->n_labels && !found; k++)
			found = strcmp(info->labels[2 * k], labels[2 * i]) == 0 &&
				(!labels[2 * i + 1] ||
				 strcmp(info->labels[2 * k + 1], labels[2 * i + 1]) == 0);
		if (!found)
			return false;
	}
	return true;
}

/* list --format json: the OCI state, and what cordon records of the sandbox besides. */
static void gen_list_entry(yajl_gen g, const struct cordon_state *state, enum cordon_status status)
{
	sandbox_json_state_open(g, state, status);
	yajl_gen_map_close(g);
}

void sandbox_json_state_open(yajl_gen g, const struct cordon_state *state,
			     enum cordon_status status)
{
	const struct cordon_state_info *info = &state->info;

	gen_state_open(g, state, status);
	gen_string(g, "kind");
	gen_string(g, cordon_state_kind_name(info->kind));
	gen_string(g, "labels");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < info->n_labels; i++) {
		gen_string(g, info->labels[2 * i]);
		gen_string(g, info->labels[2 * i + 1]);
	}
	yajl_gen_map_close(g);
	gen_string(g, "owner");
	yajl_gen_map_open(g);
	gen_string(g, "pid");
	yajl_gen_integer(g, info->creator_pid);
	gen_string(g, "start_time");
	yajl_gen_integer(g, (long long)info->creator_start);
	gen_string(g, "host");
	gen_string(g, info->host);
	yajl_gen_map_close(g);
	gen_string(g, "supervisor_pid");
	yajl_gen_integer(g, info->owner_pid);
	gen_string(g, "version");
	gen_string(g, info->version);
	gen_string(g, "max_lifetime_s");
	yajl_gen_integer(g, (long long)(info->max_lifetime_ms / 1000));
	gen_string(g, "idle_timeout_s");
	yajl_gen_integer(g, (long long)(info->idle_timeout_ms / 1000));
}

int cordon_container_list(const char *root, bool json, bool quiet, const char *const *labels,
			  size_t n_labels, struct cordon_error *err)
{
	_cleanup_close_ int root_fd = cordon_state_root_open(root, NULL, err);
	_cleanup_strv_ char **ids = NULL;
	yajl_gen g = NULL;

	if (root_fd < 0)
		return -1;
	ids = cordon_state_ids(root_fd);
	if (json) {
		g = yajl_gen_alloc(NULL);
		yajl_gen_array_open(g);
	} else if (!quiet) {
		printf("%-24s %-8s %-10s %-40s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED");
	}
	for (char **id = ids; *id; id++) {
		struct cordon_state state;
		struct cordon_error ignored;
		enum cordon_status status;
		char created[48];

		/* Gone meanwhile, or someone else's: not listed. */
		if (cordon_state_open(&state, root, *id, false, &ignored) < 0) {
			if (!cordon_interrupted())
				continue;
			*err = ignored;
			if (g)
				yajl_gen_free(g);
			return -1;
		}
		if (cordon_state_settle(&state, MONITOR_EXIT_WAIT_MS) < 0) {
			cordon_interrupt_error(
				err, "container %s: waiting for its monitor's record", *id);
			cordon_state_close(&state);
			if (g)
				yajl_gen_free(g);
			return -1;
		}
		status = container_status(&state);
		rfc3339(state.info.created_ms, created, sizeof(created));
		if (!labels_match(&state.info, labels, n_labels)) {
			cordon_state_close(&state);
			continue;
		}
		if (json)
			gen_list_entry(g, &state, status);
		else if (quiet)
			printf("%s\n", state.id);
		else
			printf("%-24s %-8d %-10s %-40s %s\n", state.id,
			       status == CORDON_STATUS_STOPPED ? 0 : (int)state.info.init_pid,
			       cordon_status_name(status), state.info.bundle, created);
		cordon_state_close(&state);
	}
	if (json) {
		_cleanup_free_ char *text = NULL;

		yajl_gen_array_close(g);
		text = cordon_json_gen_take(g);
		printf("%s\n", text);
	}
	return 0;
}

/* The filesystem cordon makes at a destination it provides (cordon_oci_mount_provided). */
static enum cordon_oci_mount_kind provided_kind(const char *dest)
{
	if (strcmp(dest, "/proc") == 0)
		return CORDON_OCI_MOUNT_PROC;
	if (strcmp(dest, "/dev/pts") == 0)
		return CORDON_OCI_MOUNT_DEVPTS;
	if (strcmp(dest, "/dev/mqueue") == 0)
		return CORDON_OCI_MOUNT_MQUEUE;
	return CORDON_OCI_MOUNT_TMPFS; /* /dev */
}

/*
 * Entries cordon does not apply as given: another filesystem than
 * cordon's at a destination it provides, and idmapped binds.
 */
static void warn_mounts(const struct cordon_oci *oci)
{
	for (size_t i = 0; i < oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &oci->mounts[i];

		if (cordon_oci_mount_provided(m) && m->kind != provided_kind(m->destination))
			cordon_warn("mounts[%zu] %s: not mounted (cordon's own %s is used)", i,
				    m->destination, m->destination);
	}
}

/* The atime setting an option names (MS_*), or a mount has (statvfs's ST_*). */
static const char *atime_name(unsigned long flags, bool statvfs_flags)
{
	if (flags & (statvfs_flags ? ST_NOATIME : MS_NOATIME))
		return "noatime";
	if (flags & (statvfs_flags ? ST_RELATIME : MS_RELATIME))
		return "relatime";
	return "strictatime";
}

/*
 * A bind's atime options meet the host mount of its source, whose atime
 * setting the kernel locks for the sandbox's user namespace: where they
 * ask for another, the source's stays (fs/mounts.c). Said here, where
 * the container is created, rather than failed.
 */
static void warn_atime(const struct cordon_oci *oci)
{
	for (size_t i = 0; i < oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &oci->mounts[i];
		unsigned long want = m->flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME);
		struct statvfs sv;

		/* An idmapped bind is host root's clone, unlocked: its options apply. */
		if (m->kind != CORDON_OCI_MOUNT_BIND || m->idmap || statvfs(m->source, &sv) < 0)
			continue;
		if (want && strcmp(atime_name(want, false), atime_name(sv.f_flag, true)) != 0)
			cordon_warn(
				"mounts[%zu] %s: %s not applied: the host's mount of the source "
				"is %s, which the kernel keeps for a container",
				i, m->destination, atime_name(want, false),
				atime_name(sv.f_flag, true));
		if ((m->flags & MS_NODIRATIME) && !(sv.f_flag & ST_NODIRATIME))
			cordon_warn(
				"mounts[%zu] %s: nodiratime not applied: the host's mount of "
				"the source has diratime, which the kernel keeps for a container",
				i, m->destination);
	}
}

void cordon_container_warn_unapplied(const struct cordon_spec *spec)
{
	const struct cordon_oci *oci = spec->oci;

	for (size_t i = 0; i < oci->n_warnings; i++)
		cordon_warn("%s", oci->warnings[i]);
	warn_mounts(oci);
	warn_atime(oci);
	if (oci->n_additional_gids && !cordon_host_root() && !cordon_userns_root())
		cordon_warn("process.user.additionalGids: applied only where setgroups is allowed "
			    "(a subordinate id range), else none");
}
