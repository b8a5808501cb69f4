// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/state.h"

#define STATE_FILE "state.json"
#define CGROUPS_FILE "cgroups"
#define SWEEP_BUDGET 16

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
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &start) != 1)
		return 0;
	return start;
}

static int ensure_dir(const char *path, struct cordon_error *err)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return cordon_error_set(err, CORDON_E_STATE, errno, "creating %s", path);
	if (lstat(path, &st) < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "%s", path);
	/* Someone else's directory (or a symlink) in /tmp must not be trusted. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"%s is not a private directory owned by uid %u", path,
					geteuid());
	return 0;
}

int cordon_state_root_open(const char *override, char **path_out, struct cordon_error *err)
{
	_cleanup_free_ char *path = NULL;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int fd;

	if (override)
		path = cordon_xstrdup(override);
	else if (geteuid() == 0)
		path = cordon_xstrdup("/run/cordon");
	else if (xdg && xdg[0] == '/' && access(xdg, W_OK) == 0)
		path = cordon_xasprintf("%s/cordon", xdg);
	else
		path = cordon_xasprintf("/tmp/cordon-%u", geteuid());
	if (ensure_dir(path, err) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "opening %s", path);
	if (path_out)
		*path_out = TAKE_PTR(path);
	return fd;
}

static int write_state_json(int dirfd, const struct cordon_spec *spec, struct cordon_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	pid_t pid = getpid();
	char host[256] = "";
	int r;

	gethostname(host, sizeof(host) - 1);
	yajl_gen_map_open(g);
#define KEY(k) yajl_gen_string(g, (const unsigned char *)(k), strlen(k))
#define STR(v) yajl_gen_string(g, (const unsigned char *)(v), strlen(v))
	KEY("ociVersion");
	STR("1.2.0");
	KEY("id");
	STR(spec->id);
	KEY("status");
	STR("running");
	KEY("bundle");
	STR(spec->rootfs);
	KEY("owner_pid");
	yajl_gen_integer(g, pid);
	KEY("owner_start_time");
	yajl_gen_integer(g, (long long)cordon_proc_start_time(pid));
	KEY("host");
	STR(host);
	KEY("created_ms");
	yajl_gen_integer(g, (long long)cordon_now_wall_ms());
#undef KEY
#undef STR
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	{
		_cleanup_close_ int fd =
			openat(dirfd, STATE_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		r = fd < 0 ? -errno : cordon_write_all(fd, buf, len);
	}
	yajl_gen_free(g);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "writing state of %s", spec->id);
	return 0;
}

int cordon_state_create(struct cordon_state *state, const struct cordon_spec *spec,
			struct cordon_error *err)
{
	_cleanup_close_ int dir = -1;

	memset(state, 0, sizeof(*state));
	state->root_fd = cordon_state_root_open(NULL, NULL, err);
	if (state->root_fd < 0)
		return -1;
	/* Bounded: a start-up never pays for more than a few stale entries. */
	cordon_state_sweep(state->root_fd, SWEEP_BUDGET);
	snprintf(state->id, sizeof(state->id), "%s", spec->id);
	if (mkdirat(state->root_fd, spec->id, 0700) < 0) {
		int e = errno;

		cordon_closep(&state->root_fd);
		if (e == EEXIST)
			return cordon_error_set(err, CORDON_E_STATE, 0,
						"--name %s: a sandbox with this id exists", spec->id);
		return cordon_error_set(err, CORDON_E_STATE, e, "creating state for %s", spec->id);
	}
	state->created = true;
	dir = openat(state->root_fd, spec->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || write_state_json(dir, spec, err) < 0) {
		if (dir < 0)
			cordon_error_set(err, CORDON_E_STATE, errno, "opening state of %s", spec->id);
		cordon_state_remove(state);
		return -1;
	}
	return 0;
}

int cordon_state_record_cgroups(struct cordon_state *state, const char *const *dirs, size_t n,
				struct cordon_error *err)
{
	_cleanup_close_ int dir = -1, fd = -1;
	int r = 0;

	if (n == 0)
		return 0;
	dir = openat(state->root_fd, state->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir >= 0)
		fd = openat(dir, CGROUPS_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "recording cgroups of %s",
					state->id);
	for (size_t i = 0; i < n && r == 0; i++) {
		r = cordon_write_all(fd, dirs[i], strlen(dirs[i]));
		if (r == 0)
			r = cordon_write_all(fd, "\n", 1);
	}
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "recording cgroups of %s", state->id);
	return 0;
}

/* A dead sandbox's cgroups: only directories cordon itself names so. */
static void remove_cgroups(int dir)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;

	if (cordon_read_file_at(dir, CGROUPS_FILE, &text, NULL) < 0)
		return;
	for (char *p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		const char *base = strrchr(p, '/');

		if (strncmp(p, "/sys/fs/cgroup/", 15) != 0 || strstr(p, "/../") || !base ||
		    strncmp(base, "/cordon-", 8) != 0)
			continue;
		for (int i = 0; i < 50 && rmdir(p) < 0 && errno == EBUSY; i++)
			usleep(2000);
	}
}

static void remove_entry(int root_fd, const char *id)
{
	_cleanup_close_ int dir = openat(root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dir >= 0) {
		unlinkat(dir, CGROUPS_FILE, 0);
		unlinkat(dir, STATE_FILE, 0);
	}
	unlinkat(root_fd, id, AT_REMOVEDIR);
}

void cordon_state_remove(struct cordon_state *state)
{
	if (state->created)
		remove_entry(state->root_fd, state->id);
	state->created = false;
	cordon_closep(&state->root_fd);
}

/* True when the state names a live owner (same pid, same start time). */
static bool owner_alive(int root_fd, const char *id)
{
	_cleanup_close_ int dir = openat(root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	const char *pid_path[] = { "owner_pid", NULL };
	const char *start_path[] = { "owner_start_time", NULL };
	yajl_val tree, pid_v, start_v;
	bool alive = true; /* when in doubt, leave it */
	struct stat st;

	if (dir < 0)
		return true;
	if (cordon_read_file_at(dir, STATE_FILE, &buf, NULL) < 0) {
		/* A directory without state: an owner between mkdir and write, or one
		 * that died right there. Only an old one is reaped. */
		if (fstat(dir, &st) == 0 && st.st_mtime + 60 < time(NULL))
			return false;
		return true;
	}
	tree = yajl_tree_parse(buf, NULL, 0);
	if (!tree)
		return true;
	pid_v = yajl_tree_get(tree, pid_path, yajl_t_number);
	start_v = yajl_tree_get(tree, start_path, yajl_t_number);
	if (pid_v && start_v && YAJL_IS_INTEGER(pid_v) && YAJL_IS_INTEGER(start_v)) {
		long long pid = YAJL_GET_INTEGER(pid_v);
		uint64_t start = cordon_proc_start_time((pid_t)pid);

		alive = start != 0 && start == (uint64_t)YAJL_GET_INTEGER(start_v);
	}
	yajl_tree_free(tree);
	return alive;
}

int cordon_state_sweep(int root_fd, unsigned budget)
{
	_cleanup_close_ int fd = dup(root_fd);
	DIR *d;
	struct dirent *de;
	int removed = 0;

	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d)
		return 0;
	fd = -1;
	while (budget > 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !cordon_id_valid(de->d_name))
			continue;
		budget--;
		if (owner_alive(root_fd, de->d_name))
			continue;
		{
			_cleanup_close_ int dir = openat(root_fd, de->d_name,
							 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (dir >= 0)
				remove_cgroups(dir);
		}
		remove_entry(root_fd, de->d_name);
		removed++;
	}
	closedir(d);
	return removed;
}
