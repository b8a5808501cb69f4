// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI commands that act on a live container through its cgroups
 * (docs/oci.md): pause and resume (the freezer), update (limits), ps
 * (the processes). Each holds the state directory's lock, as start,
 * kill and delete do. "paused" is never written to state.json: it is
 * what the freezer says, so a container thawed by hand is running again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox-internal.h"

/* The container's cgroups, as its supervisor recorded them. */
static void open_cgroups(const struct cordon_state *state, struct cordon_cgroup *cg)
{
	size_t n;
	_cleanup_strv_ char **dirs = cordon_state_cgroup_dirs(state, &n);

	cordon_cgroup_open((const char *const *)dirs, n, cg);
}

enum cordon_status container_status(const struct cordon_state *state)
{
	enum cordon_status status = cordon_state_status(&state->info);
	struct cordon_cgroup cg;

	if ((status != CORDON_STATUS_CREATED && status != CORDON_STATUS_RUNNING) ||
	    state->dir_fd < 0)
		return status;
	open_cgroups(state, &cg);
	if (cordon_cgroup_frozen(&cg) == 1)
		status = CORDON_STATUS_PAUSED;
	cordon_cgroup_close(&cg);
	return status;
}

void container_thaw(const struct cordon_state *state)
{
	struct cordon_cgroup cg;
	struct cordon_error ignored = { 0 };

	open_cgroups(state, &cg);
	cordon_cgroup_freeze(&cg, false, &ignored);
	cordon_cgroup_close(&cg);
}

static int wrong_status(const struct cordon_state *state, enum cordon_status status,
			const char *what, struct cordon_error *err)
{
	return cordon_error_set(err, CORDON_E_STATE, 0, "container %s is %s: %s", state->id,
				cordon_status_name(status), what);
}

int cordon_container_pause(const char *root, const char *id, bool pause, struct cordon_error *err)
{
	struct cordon_state state;
	struct cordon_cgroup cg;
	enum cordon_status status;
	int r;

	if (cordon_state_open(&state, root, id, true, err) < 0)
		return -1;
	status = container_status(&state);
	if (pause && status != CORDON_STATUS_RUNNING && status != CORDON_STATUS_CREATED)
		r = wrong_status(&state, status, "only a running or created container can be paused",
				 err);
	else if (!pause && status != CORDON_STATUS_PAUSED)
		r = wrong_status(&state, status, "only a paused container can be resumed", err);
	else {
		open_cgroups(&state, &cg);
		r = cordon_cgroup_freeze(&cg, pause, err);
		cordon_cgroup_close(&cg);
		if (r < 0)
			cordon_error_wrap(err, "container %s", id);
	}
	cordon_state_close(&state);
	return r;
}

int cordon_container_update(const char *root, const char *id, const struct cordon_resources *res,
			    struct cordon_error *err)
{
	struct cordon_state state;
	struct cordon_cgroup cg;
	enum cordon_status status;
	int r;

	if (cordon_state_open(&state, root, id, true, err) < 0)
		return -1;
	status = container_status(&state);
	if (status == CORDON_STATUS_STOPPED || status == CORDON_STATUS_CREATING) {
		r = wrong_status(&state, status, "no cgroup to update", err);
	} else {
		open_cgroups(&state, &cg);
		r = cordon_cgroup_update(&cg, res, err);
		cordon_cgroup_close(&cg);
		if (r < 0)
			cordon_error_wrap(err, "container %s", id);
	}
	cordon_state_close(&state);
	return r;
}

/*
 * Without a cgroup (rootless on cgroup v1 and hybrid): the processes in
 * the pid namespace of ref. The workload is the reference, as the init
 * is not dumpable and a rootless caller may not look at its namespaces.
 */
static size_t pidns_members(pid_t ref, uint64_t ref_start, pid_t **pids)
{
	char path[64];
	struct stat want, st;
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", ref);
	if (stat(path, &want) < 0 || cordon_proc_start_time(ref) != ref_start)
		return 0;
	d = opendir("/proc");
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		uint64_t v;

		if (cordon_parse_u64(de->d_name, &v) < 0 || v == 0 || v > INT32_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)v);
		if (stat(path, &st) < 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino)
			continue;
		*pids = cordon_xrealloc(*pids, (n + 1) * sizeof(**pids));
		(*pids)[n++] = (pid_t)v;
	}
	closedir(d);
	return n;
}

/*
 * The container's pid namespace, read off its workload (else its init)
 * while a pidfd pins it: what marks its processes. 0, or -ESRCH when
 * neither lives.
 */
static int container_pidns(const struct cordon_state_info *info, struct stat *ns)
{
	const pid_t pids[] = { info->pid, info->init_pid };
	const uint64_t starts[] = { info->pid_start, info->init_start };

	for (size_t i = 0; i < ARRAY_SIZE(pids); i++) {
		_cleanup_close_ int fd = cordon_pidfd_verified(pids[i], starts[i]);
		char path[64];

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pids[i]);
		/* Still the pinned process after the stat: the namespace was its own. */
		if (stat(path, ns) == 0 && cordon_pidfd_send_signal(fd, 0) == 0)
			return 0;
	}
	return -ESRCH;
}

/*
 * sig to pid if it is a process of the container: pinned by a pidfd
 * first, then found in the container's pid namespace, then signalled
 * through the pidfd. Should the pid have been reused in between, the
 * pidfd names the process that is gone (ESRCH), never the new one. 1
 * signalled, 0 not the container's (or gone, or not ours to look at:
 * cordon's own before execve, not dumpable), -errno.
 */
static int signal_member(pid_t pid, const struct stat *ns, int sig)
{
	_cleanup_close_ int fd = cordon_pidfd_open(pid);
	char path[64];
	struct stat st;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &st) < 0 || st.st_dev != ns->st_dev || st.st_ino != ns->st_ino)
		return 0;
	if (cordon_pidfd_send_signal(fd, sig) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 1;
}

/* sig to each process of the container but its init (which relays): -ESRCH when none. */
static int signal_members(const struct cordon_state *state, int sig)
{
	const struct cordon_state_info *info = &state->info;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n_dirs, n;
	/* Only its count is read here (clang: unused variable). */
	_cleanup_strv_ char **dirs __attribute__((unused)) =
		cordon_state_cgroup_dirs(state, &n_dirs);
	struct stat ns;
	int r = container_pidns(info, &ns), sent = 0;

	if (r < 0)
		return r;
	n = n_dirs ? cordon_state_cgroup_pids(state, &pids) :
		     pidns_members(info->pid, info->pid_start, &pids);
	for (size_t i = 0; i < n; i++) {
		int one;

		if (pids[i] == info->init_pid)
			continue;
		one = signal_member(pids[i], &ns, sig);
		if (one < 0 && r == 0)
			r = one;
		sent += one > 0;
	}
	if (r < 0)
		return r;
	return sent ? 0 : -ESRCH;
}

/*
 * SIGKILL: to the init, which ends its pid namespace, and to every
 * process of its cgroups at once (cordon_cgroup_kill_tree: cgroup.kill
 * on v2, else each member by a pidfd taken while it is listed there, a
 * frozen v1 cgroup thawed so that it dies now, as runc thaws it).
 */
static int kill_all(const struct cordon_state *state, struct cordon_error *err)
{
	const struct cordon_state_info *info = &state->info;
	size_t n;
	_cleanup_strv_ char **dirs = cordon_state_cgroup_dirs(state, &n);
	_cleanup_close_ int fd = cordon_pidfd_verified(info->init_pid, info->init_start);
	int r = fd < 0 ? fd : cordon_pidfd_send_signal(fd, SIGKILL) < 0 ? -errno : 0;

	for (size_t i = 0; i < n; i++) {
		int k = cordon_cgroup_kill_tree(dirs[i]);

		if (k < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -k,
						"container %s: kill --all: the processes of %s",
						state->id, dirs[i]);
	}
	if (r == -ESRCH && n == 0)
		return wrong_status(state, CORDON_STATUS_STOPPED,
				    "container not running, no such process to signal", err);
	if (r < 0 && r != -ESRCH)
		return cordon_error_set(err, CORDON_E_STATE, -r, "container %s: signal %d",
					state->id, SIGKILL);
	return 0;
}

int container_signal_all(const struct cordon_state *state, int sig, struct cordon_error *err)
{
	struct cordon_cgroup cg;
	struct cordon_error thaw = { 0 };
	bool froze = false;
	int r;

	if (sig == SIGKILL)
		return kill_all(state, err);
	/*
	 * Frozen while it is read and signalled: no process forks past the
	 * list or exits under it. A paused one stays as it is (the signals
	 * act when it is resumed); without a freezer (rootless on v1 and
	 * hybrid), the pidfds alone keep a reused pid from being signalled.
	 */
	open_cgroups(state, &cg);
	if (cordon_cgroup_frozen(&cg) == 0) {
		if (cordon_cgroup_freeze(&cg, true, err) < 0) {
			cordon_cgroup_close(&cg);
			return cordon_error_wrap(err, "container %s: kill --all", state->id);
		}
		froze = true;
	}
	r = signal_members(state, sig);
	if (froze && cordon_cgroup_freeze(&cg, false, &thaw) < 0 && r == 0) {
		cordon_cgroup_close(&cg);
		*err = thaw;
		return cordon_error_wrap(err, "container %s: kill --all: thawing it again",
					 state->id);
	}
	cordon_cgroup_close(&cg);
	if (r == -ESRCH)
		return wrong_status(state, CORDON_STATUS_STOPPED,
				    "container not running, no such process to signal", err);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "container %s: signal %d",
					state->id, sig);
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int cordon_container_ps(const char *root, const char *id, pid_t **pids, size_t *n,
			struct cordon_error *err)
{
	struct cordon_state state;
	enum cordon_status status;
	size_t n_dirs;
	_cleanup_strv_ char **dirs = NULL;

	*pids = NULL;
	*n = 0;
	if (cordon_state_open(&state, root, id, false, err) < 0)
		return -1;
	status = container_status(&state);
	if (status == CORDON_STATUS_STOPPED) {
		wrong_status(&state, status, "no process to list", err);
		cordon_state_close(&state);
		return -1;
	}
	dirs = cordon_state_cgroup_dirs(&state, &n_dirs);
	if (n_dirs)
		*n = cordon_state_cgroup_pids(&state, pids);
	else
		*n = pidns_members(state.info.pid, state.info.pid_start, pids);
	cordon_state_close(&state);
	if (*n)
		qsort(*pids, *n, sizeof(**pids), cmp_pid);
	return 0;
}
