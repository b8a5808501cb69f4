// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/cgroup.h"
#include "cordon/state.h"
#include "state-internal.h"

#define CGROUPS_FILE "cgroups"
/* The temp names of cordon_file_replace_at: a '.' first, never an id. */
#define STATE_TEMP_PREFIX ".cordon-state-"
#define SWEEP_BUDGET 16
/* How often a connect tries again while the monitor's backlog is full. */
#define MONITOR_CONNECT_RETRY_MS 20

uint64_t cordon_proc_start_time(pid_t pid)
{
	_cleanup_free_ char *buf = NULL;
	char path[64], *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (cordon_read_file_at(AT_FDCWD, path, &buf, NULL) < 0)
		return 0;
	/* comm may contain spaces and parentheses: fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* after ") " comes field 3 (state); an exited, unreaped owner is gone too */
	if (p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	/* start time is field 22 */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &start) != 1)
		return 0;
	return start;
}

char *cordon_state_host_name(void)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	return cordon_xstrdup(host);
}

char *cordon_state_boot_id(void)
{
	_cleanup_free_ char *text = NULL;

	if (cordon_read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", &text, NULL) < 0)
		return cordon_xstrdup("");
	text[strcspn(text, "\n")] = '\0';
	return TAKE_PTR(text);
}

/*
 * A directory of ours, checked on the fd that is then used: a directory
 * (not a symlink to one), owned by us, writable by nobody else. Someone
 * else's directory (or a symlink) in /tmp must not be trusted, nor an
 * entry a planted name could redirect.
 */
static int private_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* The directory NAME of dir_fd (AT_FDCWD: a path), opened without following a link and checked. */
int state_open_private_dir(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = private_dir(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/*
 * The state root, made where missing with its missing parents (0700, as
 * runc's MkdirAll makes them: containerd's shim passes
 * /run/containerd/runc/NAMESPACE, or a --runc-root of its user, and
 * expects the runtime to create it). Its parent by the host-path walk,
 * which makes what is missing: a link of another user's on the way (a
 * --root in /tmp) is refused, never followed into directories made
 * elsewhere or a root listed that is not ours. The root itself is not a
 * symlink, and is checked on its fd: ours, writable by nobody else.
 */
static int ensure_dir(const char *path, struct cordon_error *err)
{
	_cleanup_free_ char *parent = cordon_xstrdup(path), *base = NULL;
	_cleanup_close_ int at = -1;
	size_t n = strlen(parent);
	char *slash;
	int fd;

	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = '\0';
	slash = strrchr(parent, '/');
	base = cordon_xstrdup(slash ? slash + 1 : parent);
	if (!slash)
		strcpy(parent, ".");
	else if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	/* "/", "dir/.": no name of its own to make, the walk's end is the root. */
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(base);
		base = cordon_xstrdup(".");
		free(parent);
		parent = cordon_xstrdup(path);
	}
	at = cordon_path_mkdirs(parent, 0700, "state root", CORDON_E_STATE, err);
	if (at < 0)
		return -1;
	if (strcmp(base, ".") != 0 && mkdirat(at, base, 0700) < 0 && errno != EEXIST)
		return cordon_error_set(err, CORDON_E_STATE, errno, "creating %s", path);
	fd = state_open_private_dir(at, base);
	if (fd == -EPERM || fd == -ENOTDIR || fd == -ELOOP)
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"%s is not a private directory owned by uid %u", path,
					geteuid());
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, -fd, "opening %s", path);
	return fd;
}

/* The state root: --root, else the caller's default (malloc'd). */
static char *root_path(const char *override)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (override)
		return cordon_xstrdup(override);
	if (cordon_host_root())
		return cordon_xstrdup("/run/cordon");
	if (xdg && xdg[0] == '/' && access(xdg, W_OK) == 0)
		return cordon_xasprintf("%s/cordon", xdg);
	return cordon_xasprintf("/tmp/cordon-%u", geteuid());
}

int cordon_state_root_open(const char *override, char **path_out, struct cordon_error *err)
{
	_cleanup_free_ char *path = root_path(override);
	int fd;

	fd = ensure_dir(path, err);
	if (fd < 0)
		return -1;
	if (path_out)
		*path_out = TAKE_PTR(path);
	return fd;
}

const char *cordon_status_name(enum cordon_status status)
{
	switch (status) {
	case CORDON_STATUS_CREATING:
		return "creating";
	case CORDON_STATUS_CREATED:
		return "created";
	case CORDON_STATUS_RUNNING:
		return "running";
	case CORDON_STATUS_PAUSED:
		return "paused";
	case CORDON_STATUS_STOPPED:
		break;
	}
	return "stopped";
}

const char *cordon_state_kind_name(enum cordon_state_kind kind)
{
	switch (kind) {
	case CORDON_KIND_SESSION:
		return "session";
	case CORDON_KIND_OCI:
		return "oci";
	case CORDON_KIND_RUN:
		break;
	}
	return "run";
}

void cordon_state_info_free(struct cordon_state_info *info)
{
	free(info->bundle);
	free(info->host);
	free(info->boot_id);
	free(info->version);
	cordon_strv_free(info->labels);
	cordon_strv_free(info->annotations);
	memset(info, 0, sizeof(*info));
}

int cordon_pidfd_verified(pid_t pid, uint64_t start_time)
{
	int fd;

	if (pid <= 0)
		return -ESRCH;
	fd = cordon_pidfd_open(pid);
	if (fd < 0)
		return -errno;
	/* Checked after the pidfd pins the process: a recycled pid is refused. */
	if (cordon_proc_start_time(pid) != start_time) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

static void gen_key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void gen_str(yajl_gen g, const char *k, const char *v)
{
	gen_key(g, k);
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void gen_int(yajl_gen g, const char *k, long long v)
{
	gen_key(g, k);
	yajl_gen_integer(g, v);
}

static char *state_json(const char *id, const struct cordon_state_info *info)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	yajl_gen_map_open(g);
	gen_str(g, "ociVersion", CORDON_OCI_VERSION);
	gen_str(g, "id", id);
	gen_str(g, "status", cordon_status_name(info->status));
	gen_int(g, "pid", info->pid);
	gen_str(g, "bundle", info->bundle ? info->bundle : "");
	gen_key(g, "annotations");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < info->n_annotations; i++)
		gen_str(g, info->annotations[2 * i], info->annotations[2 * i + 1]);
	yajl_gen_map_close(g);
	gen_key(g, "kept");
	yajl_gen_bool(g, info->kept);
	gen_int(g, "pid_start_time", (long long)info->pid_start);
	gen_int(g, "init_pid", info->init_pid);
	gen_int(g, "init_start_time", (long long)info->init_start);
	gen_int(g, "owner_pid", info->owner_pid);
	gen_int(g, "owner_start_time", (long long)info->owner_start);
	gen_str(g, "kind", cordon_state_kind_name(info->kind));
	gen_int(g, "creator_pid", info->creator_pid);
	gen_int(g, "creator_start_time", (long long)info->creator_start);
	gen_str(g, "host", info->host ? info->host : "");
	gen_str(g, "boot_id", info->boot_id ? info->boot_id : "");
	gen_str(g, "version", info->version ? info->version : "");
	gen_key(g, "labels");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < info->n_labels; i++)
		gen_str(g, info->labels[2 * i], info->labels[2 * i + 1]);
	yajl_gen_map_close(g);
	gen_int(g, "max_lifetime_ms", (long long)info->max_lifetime_ms);
	gen_int(g, "idle_timeout_ms", (long long)info->idle_timeout_ms);
	gen_int(g, "created_ms", (long long)info->created_ms);
	if (info->net_fingerprint[0])
		gen_str(g, "net_fingerprint", info->net_fingerprint);
	if (info->has_exit)
		gen_int(g, "exit_status", info->exit_status);
	yajl_gen_map_close(g);
	return cordon_json_gen_take(g);
}

/*
 * Every file of the state directory is written whole, as a new file
 * that takes its name (cordon_file_replace_at): a symlink or a hard link
 * planted at the name or a temp name never receives the bytes. The old
 * file is swapped out and unlinked rather than renamed over: the
 * directory is the caller's alone, and on an ext4 /run a rename over
 * state.json wrote it out at once, for milliseconds of the start and a
 * wait at the removal (docs/benchmarks.md).
 */
static int state_write(int dir_fd, const char *name, const void *data, size_t len)
{
	return cordon_file_replace_at(dir_fd, name, STATE_TEMP_PREFIX, data, len, 0600,
				      CORDON_REPLACE_EXCHANGE);
}

/*
 * And read only as what cordon wrote: a regular file (never through a
 * symlink, never a fifo that blocks), bounded. 0 or -errno.
 */
int state_read(int dir_fd, const char *name, size_t max, char **out, size_t *out_len)
{
	_cleanup_close_ int at = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), fd = -1;
	struct cordon_error err = { 0 };
	char link[CORDON_FD_PATH_MAX];
	struct stat st;

	/*
	 * Looked at through an O_PATH fd, which opens nothing: a fifo, a
	 * device or a socket planted at the name is refused without an open
	 * (a device's open can act by itself), and only a regular file is
	 * opened, through that fd.
	 */
	if (at < 0)
		return -errno;
	if (fstat(at, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = open(cordon_fd_path(at, link), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (cordon_input_read_fd(fd, max, CORDON_E_STATE, name, out, out_len, &err) < 0)
		return err.errnum ? -err.errnum : -EINVAL;
	return 0;
}

static int write_state(int dirfd, const char *id, const struct cordon_state_info *info,
		       struct cordon_error *err)
{
	_cleanup_free_ char *json = state_json(id, info);
	int r = state_write(dirfd, STATE_FILE, json, strlen(json));

	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "writing state of %s", id);
	return 0;
}

static long long get_int(yajl_val tree, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_number);

	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

/* A string field, "" when absent; bounded like any name (a host name, a boot id). */
static const char *get_str(yajl_val tree, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_string);
	const char *s = v ? YAJL_GET_STRING(v) : NULL;

	return s && strlen(s) < 256 ? s : "";
}

int state_parse(const char *id, const char *text, struct cordon_state_info *info,
		struct cordon_error *err)
{
	const char *status_path[] = { "status", NULL }, *bundle_path[] = { "bundle", NULL };
	const char *ann_path[] = { "annotations", NULL }, *kept_path[] = { "kept", NULL };
	const char *exit_path[] = { "exit_status", NULL }, *labels_path[] = { "labels", NULL };
	const char *fp_path[] = { "net_fingerprint", NULL };
	yajl_val tree = yajl_tree_parse(text, NULL, 0), v;
	const char *st;

	memset(info, 0, sizeof(*info));
	if (!tree || !YAJL_IS_OBJECT(tree)) {
		yajl_tree_free(tree);
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"container %s: state.json is corrupt", id);
	}
	v = yajl_tree_get(tree, status_path, yajl_t_string);
	st = v ? YAJL_GET_STRING(v) : "";
	info->status = strcmp(st, "creating") == 0 ? CORDON_STATUS_CREATING :
		       strcmp(st, "created") == 0  ? CORDON_STATUS_CREATED :
		       strcmp(st, "running") == 0  ? CORDON_STATUS_RUNNING :
						     CORDON_STATUS_STOPPED;
	v = yajl_tree_get(tree, kept_path, yajl_t_true);
	info->kept = v != NULL;
	info->pid = (pid_t)get_int(tree, "pid");
	info->pid_start = (uint64_t)get_int(tree, "pid_start_time");
	info->init_pid = (pid_t)get_int(tree, "init_pid");
	info->init_start = (uint64_t)get_int(tree, "init_start_time");
	info->owner_pid = (pid_t)get_int(tree, "owner_pid");
	info->owner_start = (uint64_t)get_int(tree, "owner_start_time");
	info->created_ms = (uint64_t)get_int(tree, "created_ms");
	v = yajl_tree_get(tree, exit_path, yajl_t_number);
	if (v && YAJL_IS_INTEGER(v)) {
		info->has_exit = true;
		info->exit_status = (int)YAJL_GET_INTEGER(v);
	}
	v = yajl_tree_get(tree, bundle_path, yajl_t_string);
	info->bundle = cordon_xstrdup(v ? YAJL_GET_STRING(v) : "");
	v = yajl_tree_get(tree, fp_path, yajl_t_string);
	if (v) {
		const char *fp = YAJL_GET_STRING(v);

		if (fp && strnlen(fp, sizeof(info->net_fingerprint)) < sizeof(info->net_fingerprint))
			memcpy(info->net_fingerprint, fp, strlen(fp) + 1);
	}
	info->kind = strcmp(get_str(tree, "kind"), "session") == 0 ? CORDON_KIND_SESSION :
		     strcmp(get_str(tree, "kind"), "oci") == 0	   ? CORDON_KIND_OCI :
								     CORDON_KIND_RUN;
	info->creator_pid = (pid_t)get_int(tree, "creator_pid");
	info->creator_start = (uint64_t)get_int(tree, "creator_start_time");
	info->host = cordon_xstrdup(get_str(tree, "host"));
	info->boot_id = cordon_xstrdup(get_str(tree, "boot_id"));
	info->version = cordon_xstrdup(get_str(tree, "version"));
	info->max_lifetime_ms = (uint64_t)get_int(tree, "max_lifetime_ms");
	info->idle_timeout_ms = (uint64_t)get_int(tree, "idle_timeout_ms");
	v = yajl_tree_get(tree, labels_path, yajl_t_object);
	/* What another writer of the root put there is held to what create accepts. */
	for (size_t i = 0, n = 0; v && i < YAJL_GET_OBJECT(v)->len && i < CORDON_LABELS_MAX; i++) {
		yajl_val val = YAJL_GET_OBJECT(v)->values[i];
		const char *k = YAJL_GET_OBJECT(v)->keys[i];
		const char *value = YAJL_IS_STRING(val) ? YAJL_GET_STRING(val) : NULL;

		if (!value || !cordon_label_key_valid(k) || !cordon_label_value_valid(value))
			continue;
		cordon_strv_push(&info->labels, &n, k);
		cordon_strv_push(&info->labels, &n, value);
		info->n_labels++;
	}
	v = yajl_tree_get(tree, ann_path, yajl_t_object);
	for (size_t i = 0, n = 0; v && i < YAJL_GET_OBJECT(v)->len; i++) {
		yajl_val val = YAJL_GET_OBJECT(v)->values[i];

		if (!YAJL_IS_STRING(val))
			continue;
		cordon_strv_push(&info->annotations, &n, YAJL_GET_OBJECT(v)->keys[i]);
		cordon_strv_push(&info->annotations, &n, YAJL_GET_STRING(val));
		info->n_annotations++;
	}
	yajl_tree_free(tree);
	return 0;
}

static int lock_dir(int dir, bool exclusive, const char *id, struct cordon_error *err)
{
	/* Held by another command on it: a signal to ours ends the wait (interrupt.c). */
	int r = cordon_wait_flock(dir, exclusive ? LOCK_EX : LOCK_SH);

	if (r == -EINTR)
		return cordon_interrupt_error(err, "container %s: waiting for its lock", id);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "locking container %s", id);
	return 0;
}

/*
 * Connect a non-blocking socket to the monitor: a monitor busy in a hook
 * accepts no one, and a full backlog would block connect(2) with our
 * signals blocked. So it is tried again (wait) until it goes through or
 * an interrupt ends the wait. 0, -EAGAIN (not wait), -EINTR or -errno.
 */
static int monitor_connect(int fd, const struct sockaddr_un *sa, bool wait)
{
	for (;;) {
		int r;

		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return 0;
		if (errno != EAGAIN || !wait)
			return -errno;
		r = cordon_wait_ms(MONITOR_CONNECT_RETRY_MS);
		if (r < 0)
			return r;
	}
}

/*
 * Is the listener at the other end of fd this sandbox's monitor? A
 * socket is reached by its inode, and a hard link planted at monitor.sock
 * names another sandbox's socket as well as a symlink would: the
 * listener's pid (SO_PEERCRED, the process that called listen) must be
 * the recorded supervisor, which is checked to be the process of the
 * recorded start time, and still alive once the peer was looked at (so
 * that its pid was not given to another meanwhile). 0 or -errno (-EPERM:
 * another's).
 */
static int monitor_is_owner(int fd, const struct cordon_state_info *info)
{
	_cleanup_close_ int owner = cordon_pidfd_verified(info->owner_pid, info->owner_start);
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (owner < 0)
		return owner;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.pid != info->owner_pid)
		return -EPERM;
	if (cordon_pidfd_send_signal(owner, 0) < 0)
		return -errno;
	return 0;
}

int cordon_state_monitor_connect(int dir_fd, const struct cordon_state_info *info, bool wait)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int sock = -1, fd = -1;
	struct stat st;
	int r;

	/*
	 * The socket the monitor made, never what a link planted at its name
	 * points to (another sandbox's monitor): looked at through an O_PATH
	 * fd, reached through that fd, and its listener checked to be our
	 * monitor before anything is asked (a hard link is the socket).
	 */
	sock = openat(dir_fd, CORDON_STATE_MONITOR_SOCKET, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (sock < 0)
		return -errno;
	if (fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	r = monitor_connect(fd, &sa, wait);
	if (r == 0)
		r = monitor_is_owner(fd, info);
	return r < 0 ? r : TAKE_FD(fd);
}

/*
 * The state root where the sandbox's workload writes or sees (its
 * workspace, a bind, read-only too, or below one): refused. Every
 * sandbox's state and monitor socket is below it; a unix socket is
 * connected to through a read-only mount as well; rootful, the idmapped
 * workspace makes the workload owner of root's files there; rootless,
 * and with --userns host, the workload has the uid its supervisors trust
 * (cordon update of its own policy). The caller's default root is looked
 * at too when --root names another: its sandboxes are as near.
 */
static int root_seen(int fd, const char *path, const struct cordon_spec *spec,
		     struct cordon_error *err)
{
	const char *place, *what;
	int dir = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (dir < 0 || cordon_spec_seen_above(spec, dir, &place, &what) < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "the state root %s", path);
	if (!place)
		return 0;
	return cordon_error_set(err, CORDON_E_PATH, 0,
				"%s %s holds the state root %s, where the workload could reach "
				"every sandbox's state: choose another directory or --root",
				what, place, path);
}

static int root_not_shared(int root_fd, const char *root_path_, const struct cordon_spec *spec,
			   struct cordon_error *err)
{
	_cleanup_free_ char *def = root_path(NULL);
	_cleanup_close_ int def_fd = -1;

	if (root_seen(root_fd, root_path_, spec, err) < 0)
		return -1;
	if (strcmp(def, root_path_) == 0)
		return 0;
	def_fd = open(def, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return def_fd < 0 ? 0 : root_seen(def_fd, def, spec, err);
}

int cordon_state_create(struct cordon_state *state, const char *root,
			const struct cordon_spec *spec, bool kept, struct cordon_error *err)
{
	_cleanup_free_ char *root_path = NULL;
	struct cordon_state_info *info = &state->info;
	pid_t pid = getpid();

	memset(state, 0, sizeof(*state));
	state->dir_fd = -1;
	state->root_fd = cordon_state_root_open(root, &root_path, err);
	if (state->root_fd < 0 || root_not_shared(state->root_fd, root_path, spec, err) < 0) {
		cordon_closep(&state->root_fd);
		return -1;
	}
	/* Bounded: a start-up never pays for more than a few stale entries. */
	cordon_state_sweep(state->root_fd, SWEEP_BUDGET);
	cordon_trace("sweep");
	snprintf(state->id, sizeof(state->id), "%s", spec->id);
	if (mkdirat(state->root_fd, spec->id, 0700) < 0) {
		int e = errno;

		cordon_closep(&state->root_fd);
		if (e == EEXIST)
			return cordon_error_set(err, CORDON_E_STATE, 0,
						"%s %s: a sandbox with this id exists",
						spec->oci ? "container" : "--name", spec->id);
		return cordon_error_set(err, CORDON_E_STATE, e, "creating state for %s", spec->id);
	}
	state->created = true;
	state->dir_fd = state_open_private_dir(state->root_fd, spec->id);
	if (state->dir_fd < 0) {
		cordon_error_set(err, CORDON_E_STATE, -state->dir_fd, "opening state of %s",
				 spec->id);
		cordon_state_remove(state);
		return -1;
	}
	/* Taken before state.json exists: a command on this id waits for "created". */
	if (lock_dir(state->dir_fd, true, spec->id, err) < 0) {
		cordon_state_remove(state);
		return -1;
	}
	info->status = CORDON_STATUS_CREATING;
	info->kept = kept;
	info->owner_pid = pid;
	info->owner_start = cordon_proc_start_time(pid);
	info->created_ms = cordon_now_wall_ms();
	info->kind = spec->oci ? CORDON_KIND_OCI : spec->session ? CORDON_KIND_SESSION :
								  CORDON_KIND_RUN;
	/* Asked by create's caller (or --owner; -1: none, 0 recorded), run: itself. */
	info->creator_pid = spec->creator_pid > 0 ? spec->creator_pid : 0;
	info->creator_start = spec->creator_pid > 0 ? spec->creator_start : 0;
	if (!spec->creator_pid) {
		info->creator_pid = pid;
		info->creator_start = info->owner_start;
	}
	info->host = cordon_state_host_name();
	info->boot_id = cordon_state_boot_id();
	info->version = cordon_xstrdup(CORDON_VERSION);
	info->max_lifetime_ms = spec->max_lifetime_ms;
	info->idle_timeout_ms = spec->idle_timeout_ms;
	for (size_t i = 0, n = 0; i < 2 * spec->n_labels; i++)
		cordon_strv_push(&info->labels, &n, spec->labels[i]);
	info->n_labels = spec->n_labels;
	if (spec->oci) {
		info->bundle = cordon_xstrdup(spec->oci->bundle);
		size_t n = 0;

		for (size_t i = 0; i < 2 * spec->oci->n_annotations; i++)
			cordon_strv_push(&info->annotations, &n, spec->oci->annotations[i]);
		info->n_annotations = spec->oci->n_annotations;
	} else {
		info->bundle = cordon_xstrdup(spec->rootfs);
	}
	if (cordon_state_save(state, err) < 0) {
		cordon_state_remove(state);
		return -1;
	}
	return 0;
}

int cordon_state_save(struct cordon_state *state, struct cordon_error *err)
{
	return write_state(state->dir_fd, state->id, &state->info, err);
}

void cordon_state_unlock(struct cordon_state *state)
{
	/* Explicitly: the sandbox's init holds a copy of this open file. */
	if (state->dir_fd >= 0)
		flock(state->dir_fd, LOCK_UN);
}

int cordon_state_open(struct cordon_state *state, const char *root, const char *id, bool exclusive,
		      struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r;

	memset(state, 0, sizeof(*state));
	state->dir_fd = -1;
	if (!cordon_id_valid(id))
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"container id '%s': an id is [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", id);
	state->root_fd = cordon_state_root_open(root, NULL, err);
	if (state->root_fd < 0)
		return -1;
	snprintf(state->id, sizeof(state->id), "%s", id);
	state->dir_fd = state_open_private_dir(state->root_fd, id);
	if (state->dir_fd < 0) {
		int e = -state->dir_fd;

		cordon_state_close(state);
		if (e == ENOENT)
			return cordon_error_set(err, CORDON_E_STATE, 0,
						"container %s does not exist", id);
		return cordon_error_set(err, CORDON_E_STATE, e, "opening state of %s", id);
	}
	if (lock_dir(state->dir_fd, exclusive, id, err) < 0) {
		cordon_state_close(state);
		return -1;
	}
	r = state_read(state->dir_fd, STATE_FILE, CORDON_INPUT_JSON_MAX, &text, NULL);
	if (r < 0) {
		cordon_state_close(state);
		/* Removed while we waited for the lock: it is gone. */
		if (r == -ENOENT)
			return cordon_error_set(err, CORDON_E_STATE, 0,
						"container %s does not exist", id);
		return cordon_error_set(err, CORDON_E_STATE, -r, "reading state of %s", id);
	}
	if (state_parse(id, text, &state->info, err) < 0) {
		cordon_state_close(state);
		return -1;
	}
	return 0;
}

bool cordon_state_exists(const char *root, const char *id)
{
	struct cordon_error ignored = { 0 };
	_cleanup_close_ int root_fd = -1;
	struct stat st;

	if (!cordon_id_valid(id))
		return true;
	root_fd = cordon_state_root_open(root, NULL, &ignored);
	if (root_fd < 0)
		return true;
	return fstatat(root_fd, id, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

void cordon_state_close(struct cordon_state *state)
{
	cordon_closep(&state->dir_fd); /* releases the lock */
	cordon_closep(&state->root_fd);
	cordon_state_info_free(&state->info);
}

bool state_process_alive(pid_t pid, uint64_t start)
{
	return pid > 0 && start != 0 && cordon_proc_start_time(pid) == start;
}

enum cordon_status cordon_state_status(const struct cordon_state_info *info)
{
	if (info->status == CORDON_STATUS_STOPPED)
		return CORDON_STATUS_STOPPED;
	/*
	 * While the init lives, the container's processes may too: an init
	 * whose workload exited finishes its own exit only once every process
	 * of its pid namespace is gone (one frozen in a freezer cgroup holds it
	 * there for good). Such a container is not stopped, whatever became of
	 * its workload or its supervisor; `delete --force` ends it.
	 */
	if (state_process_alive(info->init_pid, info->init_start))
		return info->status;
	if (!state_process_alive(info->owner_pid, info->owner_start))
		return CORDON_STATUS_STOPPED;
	/* The container process is its life: created waits in it, running is it. */
	if ((info->status == CORDON_STATUS_RUNNING || info->status == CORDON_STATUS_CREATED) &&
	    !state_process_alive(info->pid, info->pid_start))
		return CORDON_STATUS_STOPPED;
	return info->status;
}

/* state.json again, if it says more than info: 1 replaced, 0 not, -errno. */
static int reread_stopped(struct cordon_state *state)
{
	_cleanup_free_ char *text = NULL;
	struct cordon_state_info info;
	struct cordon_error ignored = { 0 };
	int r = state_read(state->dir_fd, STATE_FILE, CORDON_INPUT_JSON_MAX, &text, NULL);

	if (r < 0)
		return r;
	if (state_parse(state->id, text, &info, &ignored) < 0)
		return -EINVAL;
	if (info.status != CORDON_STATUS_STOPPED) {
		cordon_state_info_free(&info);
		return 0;
	}
	cordon_state_info_free(&state->info);
	state->info = info;
	return 1;
}

int cordon_state_settle(struct cordon_state *state, int timeout_ms)
{
	const struct cordon_state_info *info = &state->info;
	_cleanup_close_ int owner = -1, watch = -1;
	char path[CORDON_FD_PATH_MAX];
	struct pollfd p[2];
	int r;

	if ((info->status != CORDON_STATUS_CREATED && info->status != CORDON_STATUS_RUNNING) ||
	    cordon_state_status(info) != CORDON_STATUS_STOPPED)
		return 0;
	/* A dead supervisor records nothing more: stopped, without an exit status. */
	owner = cordon_pidfd_verified(info->owner_pid, info->owner_start);
	if (owner < 0)
		return 0;
	/* Watched before it is read again: a rename in between is not missed. */
	watch = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (watch < 0 ||
	    inotify_add_watch(watch, cordon_fd_path(state->dir_fd, path), IN_MOVED_TO) < 0)
		return 0;
	p[0] = (struct pollfd){ .fd = owner, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = watch, .events = POLLIN };
	for (uint64_t end = cordon_now_mono_us() + (uint64_t)timeout_ms * 1000;;) {
		uint64_t now = cordon_now_mono_us();
		char buf[4096];

		if (reread_stopped(state) != 0 || now >= end)
			return 0;
		r = cordon_wait_poll(p, 2, (int)((end - now + 999) / 1000));
		if (r <= 0)
			return r;
		while (read(watch, buf, sizeof(buf)) > 0)
			;
		/* Gone: what it recorded is all there is. */
		if (p[0].revents) {
			reread_stopped(state);
			return 0;
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cordon_state_ids(int root_fd)
{
	_cleanup_close_ int fd = dup(root_fd);
	char **ids = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if (fd >= 0 && (d = fdopendir(fd))) {
		fd = -1;
		rewinddir(d);
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && cordon_id_valid(de->d_name))
				cordon_strv_push(&ids, &n, de->d_name);
		closedir(d);
	}
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_str);
	if (!ids)
		ids = cordon_xcalloc(1, sizeof(*ids));
	return ids;
}

/*
 * The cgroups file: a line a directory, "?DIR" one the sandbox may have
 * made (its plan, written before it makes any, see cordon_state_plan_cgroups).
 */
static int write_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
			 bool planned, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r;

	if (n == 0) {
		/* What the plan said is gone: the sandbox has none. */
		if (unlinkat(state->dir_fd, CGROUPS_FILE, 0) < 0 && errno != ENOENT)
			return cordon_error_set(err, CORDON_E_STATE, errno,
						"recording cgroups of %s", state->id);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(dirs[i]);

		if (!k || strchr(dirs[i], '\n') || dirs[i][0] == '?')
			return cordon_error_set(err, CORDON_E_STATE, EINVAL,
						"recording cgroups of %s: '%s' is not a line", state->id,
						dirs[i]);
		text = cordon_xrealloc(text, len + planned + k + 1);
		if (planned)
			text[len] = '?';
		memcpy(text + len + planned, dirs[i], k);
		len += planned + k;
		text[len++] = '\n';
	}
	r = state_write(state->dir_fd, CGROUPS_FILE, text, len);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "recording cgroups of %s",
					state->id);
	return 0;
}

int cordon_state_plan_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
			      struct cordon_error *err)
{
	return write_cgroups(state, dirs, n, true, err);
}

int cordon_state_record_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
				struct cordon_error *err)
{
	return write_cgroups(state, dirs, n, false, err);
}

/* A file the sandbox's commands read back (config.json, process.json): kept 0600. */
static int keep_file(struct cordon_state *state, const char *name, const char *text, size_t len,
		     struct cordon_error *err)
{
	int r = state_write(state->dir_fd, name, text, len);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "keeping %s of %s", name,
					state->id);
	return 0;
}

static int read_kept(const struct cordon_state *state, const char *name, char **text, size_t *len,
		     struct cordon_error *err)
{
	int r = state_read(state->dir_fd, name, CORDON_INPUT_JSON_MAX, text, len);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r,
					"container %s: no %s kept (not made by create?)",
					state->id, strcmp(name, CORDON_STATE_CONFIG) == 0 ? "config" :
											    name);
	return 0;
}

/* A mark holds the pid of who left it (cordon_state_mark_owner). */
int cordon_state_mark(const struct cordon_state *state, const char *name, bool on)
{
	char pid[24];
	int n;

	if (on) {
		n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		return state_write(state->dir_fd, name, pid, (size_t)n);
	}
	if (unlinkat(state->dir_fd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

pid_t cordon_state_mark_owner(const struct cordon_state *state, const char *name)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	char *end;
	long pid;
	int r = state_read(state->dir_fd, name, 32, &text, &len);

	if (r < 0)
		return r;
	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno || end == text || *end != '\n' || pid <= 0 || pid > INT_MAX)
		return -EINVAL;
	return (pid_t)pid;
}

bool cordon_state_marked(const struct cordon_state *state, const char *name)
{
	struct stat st;

	return fstatat(state->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int cordon_state_save_config(struct cordon_state *state, const char *text, size_t len,
			     struct cordon_error *err)
{
	return keep_file(state, CORDON_STATE_CONFIG, text, len, err);
}

int cordon_state_read_config(const struct cordon_state *state, char **text, size_t *len,
			     struct cordon_error *err)
{
	return read_kept(state, CORDON_STATE_CONFIG, text, len, err);
}

int cordon_state_save_process(struct cordon_state *state, const char *text, size_t len,
			      struct cordon_error *err)
{
	return keep_file(state, CORDON_STATE_PROCESS, text, len, err);
}

int cordon_state_read_process(const struct cordon_state *state, char **text, size_t *len,
			      struct cordon_error *err)
{
	return read_kept(state, CORDON_STATE_PROCESS, text, len, err);
}

/*
 * A dead sandbox's cgroups: the leaves it recorded (cordon-ID, or the
 * config's linux.cgroupsPath, whatever its name) with the cgroups its
 * workload made below them, never a parent; only below /sys/fs/cgroup and
 * without "..". A tree that still holds a process is left alone (-EBUSY).
 * id: only leaves named cordon-ID (a sweep of a run's or a session's
 * remains).
 */
int state_remove_cgroups(int dir, const char *id)
{
	_cleanup_free_ char *text = NULL, *leaf = id ? cordon_xasprintf("/cordon-%s", id) : NULL;
	char *save = NULL;
	int busy = 0;

	if (state_read(dir, CGROUPS_FILE, CORDON_INPUT_TEXT_MAX, &text, NULL) < 0)
		return 0;
	for (char *p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		bool planned = *p == '?';
		size_t len;
		int r;

		p += planned;
		len = strlen(p);
		if (strncmp(p, "/sys/fs/cgroup/", 15) != 0 || strstr(p, "/../") ||
		    strstr(p, "/./") || p[len - 1] == '/' ||
		    (len >= 3 && strcmp(p + len - 3, "/..") == 0))
			continue;
		/* Sweep of a run or session: only what cordon names so, never another cgroup. */
		if (leaf && (len < strlen(leaf) || strcmp(p + len - strlen(leaf), leaf) != 0))
			continue;
		/* Planned: made before the clone, if at all, so with nothing below it. */
		r = planned ? cordon_cgroup_remove_empty(p) : cordon_cgroup_remove_tree(p, false);
		/* A plan is replaced by the list before the init is cloned: a process in a planned
		 * directory is someone else's, and keeps nothing. */
		if (r == -EBUSY && !planned)
			busy = r;
	}
	return busy;
}

/* The cgroups file's directories: those the sandbox has, or (planned) those it may have made. */
static char **cgroup_lines(const struct cordon_state *state, bool planned, size_t *n)
{
	_cleanup_free_ char *text = NULL;
	char **dirs = NULL, *save = NULL;

	*n = 0;
	if (state_read(state->dir_fd, CGROUPS_FILE, CORDON_INPUT_TEXT_MAX, &text, NULL) == 0)
		for (char *p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
			if ((*p == '?') == planned)
				cordon_strv_push(&dirs, n, p + planned);
	if (!dirs)
		dirs = cordon_xcalloc(1, sizeof(*dirs));
	return dirs;
}

char **cordon_state_cgroup_dirs(const struct cordon_state *state, size_t *n)
{
	return cgroup_lines(state, false, n);
}

char **cordon_state_cgroup_planned(const struct cordon_state *state, size_t *n)
{
	return cgroup_lines(state, true, n);
}

size_t cordon_state_cgroup_pids(const struct cordon_state *state, pid_t **pids)
{
	size_t n_dirs, n = 0;
	_cleanup_strv_ char **dirs = cordon_state_cgroup_dirs(state, &n_dirs);

	*pids = NULL;
	/* Each tree whole: a container may have made cgroups below its own (delegated). */
	for (size_t i = 0; i < n_dirs; i++)
		n = cordon_cgroup_tree_pids(dirs[i], pids, n);
	return n;
}

/*
 * Every name in the entry (what cordon wrote, a temp name a crash left,
 * anything planted: unlinkat never follows a link), then the entry.
 */
void state_remove_entry(int root_fd, const char *id)
{
	int fd = openat(root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *de;

		if (!d) {
			close(fd);
		} else {
			while ((de = readdir(d)))
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
					unlinkat(dirfd(d), de->d_name, 0);
			closedir(d);
		}
	}
	unlinkat(root_fd, id, AT_REMOVEDIR);
}

void cordon_state_remove(struct cordon_state *state)
{
	if (state->created)
		state_remove_entry(state->root_fd, state->id);
	state->created = false;
	cordon_state_close(state);
}

void cordon_state_destroy(struct cordon_state *state)
{
	if (state->dir_fd >= 0)
		state_remove_cgroups(state->dir_fd, NULL);
	state_remove_entry(state->root_fd, state->id);
	cordon_state_close(state);
}
