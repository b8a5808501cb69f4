// SPDX-License-Identifier: Apache-2.0
/*
 * Host paths, resolved once and component by component into an O_PATH
 * fd, so that every check runs on the object that is then used.
 *
 * The kernel's own walk would follow a symlink wherever it points; this
 * one opens one component at a time (openat2 with RESOLVE_NO_SYMLINKS and
 * RESOLVE_NO_MAGICLINKS), reads each symlink itself, and refuses, as
 * systemd's chase() does with CHASE_SAFE, a step by which a directory or
 * symlink of another unprivileged user leads somewhere that user does not
 * own: a symlink such a user planted can otherwise make host root mount
 * /etc or / where that user's directory was checked (docs/security.md,
 * "Host paths").
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cordon/core.h"

#define PATH_LINKS_MAX CORDON_PATH_LINKS_MAX

/* Root and the caller gain nothing from their own links. */
static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Does a relative symlink target stay below the directory that holds it? */
static bool target_stays_below(const char *target)
{
	const char *p = target;

	if (target[0] == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		while (*p == '/')
			p++;
	}
	return true;
}

/* Where PATH starts: "/", or dir_fd (AT_FDCWD: the working directory). */
static int open_start(int dir_fd, const char *path, struct stat *st)
{
	int fd = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) :
				  openat(dir_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, st) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* A directory others can add names to: sticky (/tmp) or writable by everyone. */
static bool dir_shared(const struct stat *dir)
{
	return (dir->st_mode & (S_ISVTX | S_IWOTH)) != 0;
}

int cordon_path_check_names(const struct stat *dir, const struct stat *file, const char *what,
			    const char *path, const char *comp, struct cordon_error *err)
{
	if (S_ISDIR(file->st_mode) || S_ISLNK(file->st_mode) || file->st_nlink <= 1)
		return 0;
	/*
	 * A second name of another user's making for a file it does not own
	 * (a hard link, where fs.protected_hardlinks allows it): refused like
	 * the symlinks of cordon_path_open.
	 */
	if (!owner_trusted(dir->st_uid) && file->st_uid != dir->st_uid)
		return cordon_error_set(
			err, CORDON_E_PATH, 0,
			"%s %s: '%s' is a hard link to a file of uid %u in a "
			"directory owned by uid %u (an unsafe ownership transition, "
			"docs/security.md)",
			what, path, comp, (unsigned)file->st_uid, (unsigned)dir->st_uid);
	/*
	 * In a directory that everyone can add names to (a trusted owner's
	 * sticky /tmp), any user may have made this name, and a second name
	 * may be of any file, the caller's own and root's among them (with
	 * fs.protected_hardlinks=0, /etc/shadow): whoever owns the file, it
	 * is refused.
	 */
	if (dir_shared(dir))
		return cordon_error_set(
			err, CORDON_E_PATH, 0,
			"%s %s: '%s' has %lu names and lies in a directory everyone "
			"can add names to (a hard link anyone could have made: "
			"refused, docs/security.md)",
			what, path, comp, (unsigned long)file->st_nlink);
	return 0;
}

int cordon_path_check_planted(const struct stat *dir, const struct stat *file, const char *what,
			      const char *path, const char *comp, struct cordon_error *err)
{
	if (!dir_shared(dir))
		return 0;
	/*
	 * fs.protected_regular's rule, which the kernel applies only to an
	 * open with O_CREAT: a file of a third user may have been put at the
	 * name for cordon to write into, where that user reads and rewrites
	 * it.
	 */
	if (file->st_uid != geteuid() && file->st_uid != dir->st_uid)
		return cordon_error_set(err, CORDON_E_PATH, 0,
					"%s %s: '%s' belongs to uid %u, neither the caller nor "
					"the directory's owner (uid %u), in a directory others "
					"can add names to (a file anyone could have put there: "
					"refused, docs/security.md)",
					what, path, comp, (unsigned)file->st_uid,
					(unsigned)dir->st_uid);
	/*
	 * And one of the caller's own that others may read or write: a user
	 * who can write the directory it was made in could have moved it
	 * here (a rename keeps its owner and its one name) to read what is
	 * written into it. The group bits are an ACL's mask too.
	 */
	if (file->st_mode & 077)
		return cordon_error_set(err, CORDON_E_PATH, 0,
					"%s %s: '%s' is open to others (mode %04o) in a directory "
					"others can add names to (anyone who could move it there "
					"reads what is written: refused; remove it, and cordon "
					"makes a new one, 0600, or choose a directory of your "
					"own, docs/security.md)",
					what, path, comp, (unsigned)(file->st_mode & 07777));
	return 0;
}

/* The directory fd, kept (a copy) in *kept when there is one. 0 or -1 (errno). */
static int keep_dir(struct cordon_path_links *kept, int fd)
{
	if (!kept)
		return 0;
	if (kept->n >= CORDON_PATH_LINKS_MAX) {
		errno = ELOOP;
		return -1;
	}
	kept->fd[kept->n] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (kept->fd[kept->n] < 0)
		return -1;
	kept->n++;
	return 0;
}

/*
 * The walk of cordon_path_open; with mkdir_mode, a missing component is
 * made as a directory (mode mkdir_mode) in the directory walked to, then
 * walked into like any other.
 */
static int path_walk(int dir_fd, const char *path, const char *what, enum cordon_code code,
		     mode_t mkdir_mode, struct cordon_path_links *kept, struct cordon_error *err)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *todo = NULL;
	_cleanup_close_ int fd = -1;
	unsigned links = 0;
	struct stat st;
	char *p;

	if (!path || !*path)
		return cordon_error_set(err, code, 0, "%s: empty path", what);
	todo = cordon_xstrdup(path);
	fd = open_start(dir_fd, path, &st);
	if (fd < 0)
		return cordon_error_set(err, code, errno, "%s %s", what, path);
	for (p = todo;;) {
		_cleanup_close_ int next = -1;
		struct stat nst;
		bool dir_only;
		char *comp;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		n = strcspn(p, "/");
		p += n;
		/* "name/" at the end, as for the kernel: a directory. */
		dir_only = false;
		if (*p) {
			*p++ = '\0';
			dir_only = !p[strspn(p, "/")];
		}
		if (strcmp(comp, ".") == 0)
			continue;
		if (!S_ISDIR(st.st_mode))
			return cordon_error_set(err, code, ENOTDIR, "%s %s", what, path);
		next = cordon_openat2(fd, comp, &how, sizeof(how));
		/* A name made meanwhile (EEXIST) is opened and checked as any other. */
		if (next < 0 && errno == ENOENT && mkdir_mode && strcmp(comp, "..") != 0 &&
		    (mkdirat(fd, comp, mkdir_mode) == 0 || errno == EEXIST))
			next = cordon_openat2(fd, comp, &how, sizeof(how));
		if (next < 0 || fstat(next, &nst) < 0)
			return cordon_error_set(err, code, errno, "%s %s", what, path);
		/*
		 * Where '..' led depends on where the directory left now is: the
		 * one reached is kept, as a link's is (a place's own root cannot
		 * be moved by its workload: '..' from it reaches outside).
		 */
		if (strcmp(comp, "..") == 0 && keep_dir(kept, next) < 0)
			return cordon_error_set(err, code, errno, "%s %s", what, path);
		/* "..": out of a directory of another user's into one it does not own. */
		if (strcmp(comp, "..") == 0 && !owner_trusted(st.st_uid) && nst.st_uid != st.st_uid)
			return cordon_error_set(
				err, CORDON_E_PATH, 0,
				"%s %s: '..' leaves a directory owned by uid %u for "
				"one owned by uid %u (an unsafe ownership transition, "
				"docs/security.md)",
				what, path, (unsigned)st.st_uid, (unsigned)nst.st_uid);
		if (dir_only && !S_ISDIR(nst.st_mode) && !S_ISLNK(nst.st_mode))
			return cordon_error_set(err, code, ENOTDIR, "%s %s", what, path);
		/* A hard link that another user may have made (see there). */
		if (cordon_path_check_names(&st, &nst, what, path, comp, err) < 0)
			return -1;
		/*
		 * A symlink another user owns is followed only in a directory
		 * of that same user: in root's sticky /tmp or a shared
		 * directory, "below the link's directory" is everyone's.
		 */
		if (S_ISLNK(nst.st_mode) && !owner_trusted(nst.st_uid) && nst.st_uid != st.st_uid)
			return cordon_error_set(
				err, CORDON_E_PATH, 0,
				"%s %s: '%s' is a symlink of uid %u in a directory owned by uid "
				"%u (an unsafe ownership transition, docs/security.md)",
				what, path, comp, (unsigned)nst.st_uid, (unsigned)st.st_uid);
		if (S_ISLNK(nst.st_mode)) {
			char target[PATH_MAX];
			ssize_t len = readlinkat(next, "", target, sizeof(target) - 1);
			uid_t by = !owner_trusted(st.st_uid) ? st.st_uid : nst.st_uid;
			char *rest;

			if (len < 0)
				return cordon_error_set(err, code, errno, "%s %s", what, path);
			if ((size_t)len >= sizeof(target) - 1)
				return cordon_error_set(err, code, ENAMETOOLONG, "%s %s", what,
							path);
			if (++links > PATH_LINKS_MAX)
				return cordon_error_set(err, code, ELOOP, "%s %s", what, path);
			target[len] = '\0';
			if (keep_dir(kept, fd) < 0)
				return cordon_error_set(err, code, errno, "%s %s", what, path);
			/*
			 * A symlink that another user owns, or that lies in a
			 * directory another user owns, is followed only while it
			 * stays below that directory: anything else (an absolute
			 * target, a '..') is where such a user could aim a path
			 * that host root then opens.
			 */
			if (!owner_trusted(by) && !target_stays_below(target))
				return cordon_error_set(
					err, CORDON_E_PATH, 0,
					"%s %s: '%s' is a symlink (to %s) of uid %u that leads out of "
					"its directory (an unsafe ownership transition, "
					"docs/security.md)",
					what, path, comp, target, (unsigned)by);
			rest = *p || dir_only ? cordon_xasprintf("%s/%s", target, p) :
						cordon_xstrdup(target);
			free(todo);
			todo = rest;
			p = todo;
			if (target[0] == '/') {
				cordon_closep(&fd);
				fd = open_start(AT_FDCWD, "/", &st);
				if (fd < 0)
					return cordon_error_set(err, code, errno, "%s %s", what,
								path);
			}
			continue;
		}
		cordon_closep(&fd);
		fd = TAKE_FD(next);
		st = nst;
	}
	return TAKE_FD(fd);
}

int cordon_path_open(const char *path, const char *what, enum cordon_code code,
		     struct cordon_error *err)
{
	return path_walk(AT_FDCWD, path, what, code, 0, NULL, err);
}

int cordon_path_open_links(const char *path, const char *what, enum cordon_code code,
			   struct cordon_path_links *links, struct cordon_error *err)
{
	return path_walk(AT_FDCWD, path, what, code, 0, links, err);
}

void cordon_path_links_close(struct cordon_path_links *links)
{
	for (size_t i = 0; i < links->n; i++)
		cordon_closep(&links->fd[i]);
	links->n = 0;
}

int cordon_path_open_at(int dir_fd, const char *path, const char *what, enum cordon_code code,
			struct cordon_error *err)
{
	return path_walk(dir_fd, path, what, code, 0, NULL, err);
}

int cordon_path_mkdirs(const char *path, mode_t mode, const char *what, enum cordon_code code,
		       struct cordon_error *err)
{
	return path_walk(AT_FDCWD, path, what, code, mode, NULL, err);
}

void cordon_path_id_of(const struct stat *st, struct cordon_path_id *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->mode = st->st_mode;
	id->uid = st->st_uid;
	id->gid = st->st_gid;
	id->valid = true;
}

int cordon_path_reopen(const char *path, const struct cordon_path_id *id, const char *what,
		       struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!id->valid)
		return cordon_error_set(err, CORDON_E_INTERNAL, 0, "%s %s: never checked", what,
					path);
	fd = cordon_path_open(path, what, CORDON_E_PATH, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "%s %s", what, path);
	if (st.st_dev != id->dev || st.st_ino != id->ino)
		return cordon_error_set(err, CORDON_E_PATH, 0,
					"%s %s: no longer the object that was checked (replaced "
					"while the sandbox was set up)",
					what, path);
	return TAKE_FD(fd);
}

int cordon_input_read_path(const char *path, size_t max, enum cordon_code code, const char *what,
			   char **out, size_t *out_len, struct cordon_error *err)
{
	return cordon_input_read_path_at(AT_FDCWD, path, max, code, what, out, out_len, err);
}

int cordon_input_read_path_at(int dir_fd, const char *path, size_t max, enum cordon_code code,
			      const char *what, char **out, size_t *out_len,
			      struct cordon_error *err)
{
	_cleanup_close_ int at = cordon_path_open_at(dir_fd, path, what, code, err), fd = -1;
	char link[CORDON_FD_PATH_MAX];
	struct stat st;

	if (at < 0)
		return -1;
	/* Only a regular file is opened for reading (a fifo, a device: never). */
	if (fstat(at, &st) < 0)
		return cordon_error_set(err, code, errno, "%s", what);
	if (!S_ISREG(st.st_mode))
		return cordon_error_set(err, code, 0, "%s: not a regular file", what);
	/* The object walked to, opened for reading through its fd (not the name). */
	fd = open(cordon_fd_path(at, link), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return cordon_error_set(err, code, errno, "%s", what);
	return cordon_input_read_fd(fd, max, code, what, out, out_len, err);
}
