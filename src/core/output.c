// SPDX-License-Identifier: Apache-2.0
/*
 * Files cordon writes into a directory where a name may have been planted
 * before the write: --result-json's directory, which the workload may
 * share, --pid-file's, often a shared one, and the state directory
 * (docs/security.md). Whatever sits at a
 * name -- a symlink, a hard link to some other file, a fifo, a file of
 * the same name -- never receives the bytes:
 *   - the directory is an fd, opened once and checked by the caller, so
 *     a directory renamed or replaced by a symlink does not move the write;
 *   - the file is made new, never opened by name: O_TMPFILE (no name at
 *     all) linked under a random name, else O_CREAT|O_EXCL|O_NOFOLLOW
 *     under a random name; neither follows a planted symlink nor reuses a
 *     planted file;
 *   - it gets its name by renameat(), which replaces the directory entry
 *     itself: a symlink at the final name is replaced, its target
 *     untouched (a directory there makes it fail).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/core.h"

#define TEMP_TRIES 8

/* PREFIX and 64 random bits: a name nobody can plant ahead. */
static int temp_name(const char *prefix, char *out, size_t size)
{
	uint64_t bits;

	if (getrandom(&bits, sizeof(bits), 0) != (ssize_t)sizeof(bits))
		return -EIO;
	if ((size_t)snprintf(out, size, "%s%016" PRIx64, prefix, bits) >= size)
		return -ENAMETOOLONG;
	return 0;
}

static int write_body(int fd, const void *data, size_t len, unsigned flags)
{
	int r = cordon_write_all(fd, data, len);

	if (r == 0 && (flags & CORDON_REPLACE_SYNC) && fsync(fd) < 0)
		r = -errno;
	return r;
}

/* The written O_TMPFILE file under a fresh random name in dir_fd. */
static int link_anonymous(int dir_fd, int fd, const char *prefix, char *tmp, size_t size)
{
	char proc[CORDON_FD_PATH_MAX];

	cordon_fd_path(fd, proc);
	for (int tries = 0; tries < TEMP_TRIES; tries++) {
		int r = temp_name(prefix, tmp, size);

		if (r < 0)
			return r;
		/* linkat never follows newpath: an existing name is EEXIST. */
		if (linkat(AT_FDCWD, proc, dir_fd, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Filesystems without O_TMPFILE: a new file under a fresh random name. */
static int create_named(int dir_fd, const char *prefix, mode_t mode, char *tmp, size_t size)
{
	for (int tries = 0; tries < TEMP_TRIES; tries++) {
		int r = temp_name(prefix, tmp, size), fd;

		if (r < 0)
			return r;
		fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The body into a new file of dir_fd, named tmp on success. */
static int write_temp(int dir_fd, const char *prefix, const void *data, size_t len, mode_t mode,
		      unsigned flags, char *tmp, size_t size)
{
	_cleanup_close_ int fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	int r;

	if (fd >= 0) {
		r = write_body(fd, data, len, flags);
		return r < 0 ? r : link_anonymous(dir_fd, fd, prefix, tmp, size);
	}
	/* EISDIR: a kernel older than O_TMPFILE; EOPNOTSUPP: the filesystem lacks it. */
	if (errno != EOPNOTSUPP && errno != EISDIR)
		return -errno;
	fd = create_named(dir_fd, prefix, mode, tmp, size);
	if (fd < 0)
		return fd;
	r = write_body(fd, data, len, flags);
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	return r;
}

/*
 * CORDON_REPLACE_EXCHANGE: NAME and tmp swapped, then the old file (now
 * at tmp) unlinked. 1 when NAME did not exist or the filesystem cannot
 * exchange: the caller renames.
 */
static int exchange(int dir_fd, const char *tmp, const char *name)
{
	if (renameat2(dir_fd, tmp, dir_fd, name, RENAME_EXCHANGE) < 0)
		return errno == ENOENT || errno == EINVAL || errno == ENOSYS ? 1 : -errno;
	if (unlinkat(dir_fd, tmp, 0) < 0)
		return -errno;
	return 0;
}

int cordon_file_replace_at(int dir_fd, const char *name, const char *temp_prefix, const void *data,
			   size_t len, mode_t mode, unsigned flags)
{
	char tmp[NAME_MAX + 1];
	int r = write_temp(dir_fd, temp_prefix, data, len, mode, flags, tmp, sizeof(tmp));

	if (r < 0)
		return r;
	if (flags & CORDON_REPLACE_EXCHANGE) {
		r = exchange(dir_fd, tmp, name);
		if (r <= 0)
			return r;
	}
	if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
		r = -errno;
		unlinkat(dir_fd, tmp, 0);
		return r;
	}
	return 0;
}

int cordon_output_dir_open(const char *path, const char *what, enum cordon_code code, char **name,
			   struct cordon_error *err)
{
	return cordon_output_dir_open_links(path, what, code, name, NULL, err);
}

int cordon_output_dir_open_links(const char *path, const char *what, enum cordon_code code,
				 char **name, struct cordon_path_links *links,
				 struct cordon_error *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dir_fd = -1;
	struct stat st;

	if (!*path)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: empty path", what);
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s %s: does not end in a file name", what, path);
	if (!slash)
		dir = cordon_xstrdup(".");
	else
		dir = cordon_xasprintf("%.*s", slash == path ? 1 : (int)(slash - path), path);
	{
		_cleanup_free_ char *label = cordon_xasprintf("%s: directory", what);

		/* By the host-path walk: host root's write follows no other user's link. */
		dir_fd = cordon_path_open_links(dir, label, code, links, err);
	}
	if (dir_fd < 0)
		return -1;
	if (fstat(dir_fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return cordon_error_set(err, code, ENOTDIR, "%s %s: directory %s", what, path, dir);
	*name = cordon_xstrdup(base);
	return TAKE_FD(dir_fd);
}

#define PID_FILE_TEMP_PREFIX ".cordon-pid-"

int cordon_pid_file_open(struct cordon_pid_file *pf, const char *path, struct cordon_error *err)
{
	pf->dir_fd = cordon_output_dir_open_links(path, "--pid-file", CORDON_E_PATH, &pf->name,
						  &pf->links, err);
	if (pf->dir_fd < 0)
		return -1;
	pf->path = cordon_xstrdup(path);
	return 0;
}

int cordon_pid_file_write(const struct cordon_pid_file *pf, pid_t pid, struct cordon_error *err)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%d", (int)pid), r;

	/* A new file renamed over the name: a reader sees no file or the whole pid. */
	r = cordon_file_replace_at(pf->dir_fd, pf->name, PID_FILE_TEMP_PREFIX, text, (size_t)n,
				   0644, 0);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_PATH, -r, "--pid-file %s", pf->path);
	return 0;
}

void cordon_pid_file_close(struct cordon_pid_file *pf)
{
	cordon_closep(&pf->dir_fd);
	cordon_path_links_close(&pf->links);
	free(pf->name);
	free(pf->path);
	pf->name = pf->path = NULL;
}
