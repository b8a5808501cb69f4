// SPDX-License-Identifier: Apache-2.0
/*
 * openat2's scoped walk (RESOLVE_IN_ROOT, RESOLVE_BENEATH) done one name
 * at a time, for when the kernel's own keeps failing.
 *
 * The kernel fails a scoped walk through ".." with EAGAIN whenever any
 * rename or mount happened anywhere on the host meanwhile, since it can
 * then not prove that the walk stayed inside. cordon_openat2 tries again,
 * but on a host where something renames all the time (other sandboxes
 * starting, a build tree, a hostile user's loop) every try can fail. This
 * walk never hands ".." to the kernel: it keeps the directories it went
 * through and goes back up its own list, opens each name alone below the
 * directory it is in (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), and reads
 * each symlink itself, with the caller's semantics:
 *
 *  - ".." at the root stays there (IN_ROOT) or fails EXDEV (BENEATH);
 *  - an absolute path or link starts again at the root (IN_ROOT) or fails
 *    EXDEV (BENEATH);
 *  - RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV hold
 *    at every step; at most 40 links are followed (ELOOP);
 *  - the directory the result was opened in must, after the open, still
 *    be below the root (EXDEV otherwise): a directory moved out of the
 *    root while the walk was in it is not followed out. The kernel checks
 *    the result itself, before the open; so this walk opens for reading
 *    only (O_PATH or O_RDONLY, never O_CREAT or O_TRUNC: cordon_openat2
 *    does not fall back for those), and an open has acted on nothing.
 *
 * Where it answers otherwise than the kernel, it refuses: a directory
 * deeper than 4096 levels or more than the fd limit allows, one below a
 * mount over the root (EXDEV, EMFILE). As root it finds what the kernel
 * finds; a caller without search permission on a directory it leaves by
 * ".." is not refused (the kernel would be): it reaches nothing it could
 * not reach before.
 *
 * A magic link (/proc/PID/fd/N, exe, cwd, root, ns/...) cannot be told
 * from a plain one by its mode, so a procfs link whose text is absolute or
 * has a ':' (every magic link's does: "/path", "pipe:[N]", "mnt:[N]") is
 * refused as the kernel refuses a magic link in a scoped walk: ELOOP under
 * RESOLVE_NO_MAGICLINKS, EXDEV otherwise. /proc/self and /proc/mounts
 * ("1234", "self/mounts") are followed. A link's text is only ever
 * resolved inside the root again, so even a misjudged one cannot lead out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cordon/core.h"

#define SCOPED_LINKS_MAX 40
#define SCOPED_DEPTH_MAX 4096

/* Where the walk is: the directories opened below the root, in order. */
struct scoped_walk {
	int root;
	int *dirs;
	size_t n, cap;
};

static int walk_here(const struct scoped_walk *w)
{
	return w->n ? w->dirs[w->n - 1] : w->root;
}

static void walk_push(struct scoped_walk *w, int fd)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->dirs = cordon_xrealloc(w->dirs, w->cap * sizeof(*w->dirs));
	}
	w->dirs[w->n++] = fd;
}

static void walk_up(struct scoped_walk *w)
{
	close(w->dirs[--w->n]);
}

static void walk_free(struct scoped_walk *w)
{
	while (w->n)
		walk_up(w);
	free(w->dirs);
}

static int openat2_once(int dirfd, const char *name, uint64_t flags, uint64_t mode,
			uint64_t resolve)
{
	struct open_how how = { .flags = flags, .mode = mode, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/* A directory's identity: device, inode and the mount it was reached in. */
static bool same_dir(const struct statx *a, const struct statx *b)
{
	return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor &&
	       a->stx_ino == b->stx_ino && a->stx_mnt_id == b->stx_mnt_id;
}

static int dir_statx(int fd, struct statx *stx)
{
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, stx) < 0)
		return -1;
	return stx->stx_mask & STATX_MNT_ID ? 0 : -1;
}

/* Is DIR (still) below ROOT? Walks up by ".." to ROOT or to our own "/". */
static bool below_root(int root, int dir)
{
	struct statx rst, st, up_st;
	int cur, up;

	if (dir_statx(root, &rst) < 0 || dir_statx(dir, &st) < 0)
		return false;
	cur = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; cur >= 0 && i < SCOPED_DEPTH_MAX; i++) {
		if (same_dir(&st, &rst)) {
			close(cur);
			return true;
		}
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
		if (cur < 0 || dir_statx(cur, &up_st) < 0)
			break;
		/* Our own "/" is its own parent: ROOT was not on the way. */
		if (same_dir(&up_st, &st))
			break;
		st = up_st;
	}
	if (cur >= 0)
		close(cur);
	return false;
}

/* A magic link, as far as its text tells (see the top of the file). */
static bool magic_link(int link, const char *target)
{
	struct statfs sfs;

	if (fstatfs(link, &sfs) < 0)
		return true;
	return sfs.f_type == PROC_SUPER_MAGIC && (target[0] == '/' || strchr(target, ':'));
}

int cordon_openat2_walk(int dirfd, const char *path, const struct open_how *how)
{
	bool in_root = how->resolve & RESOLVE_IN_ROOT;
	bool no_links = how->resolve & RESOLVE_NO_SYMLINKS;
	uint64_t step = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			(how->resolve & RESOLVE_NO_XDEV);
	struct scoped_walk w = { .root = dirfd };
	_cleanup_free_ char *todo = cordon_xstrdup(path);
	unsigned links = 0;
	char *p = todo;
	int fd = -1, e = 0;

	if (!*p || (*p == '/' && !in_root)) {
		e = *p ? EXDEV : ENOENT;
		goto out;
	}
	for (;;) {
		_cleanup_close_ int next = -1;
		char target[PATH_MAX + 1];
		struct stat st;
		ssize_t len;
		char *comp;
		bool last, dir_only;

		while (*p == '/')
			p++;
		/* Ended on "." or "..": open the directory the walk is in as asked. */
		if (!*p) {
			fd = openat2_once(walk_here(&w), ".", how->flags, how->mode, step);
			e = fd < 0 ? errno : 0;
			break;
		}
		comp = p;
		p += strcspn(p, "/");
		/* "name/" ends the path too, asking for a directory (and to follow a link). */
		dir_only = *p && !p[strspn(p, "/")];
		last = !*p || dir_only;
		if (*p)
			*p++ = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			if (w.n) {
				walk_up(&w);
			} else if (!in_root) {
				e = EXDEV;
				break;
			}
			continue;
		}
		if (last) {
			uint64_t flags = dir_only ? (how->flags & ~(uint64_t)O_NOFOLLOW) | O_DIRECTORY :
						    how->flags;

			fd = openat2_once(walk_here(&w), comp, flags, how->mode, step);
			/* ELOOP here: the name is a link (NO_SYMLINKS), unless asked not to follow. */
			if (fd >= 0 || errno != ELOOP || no_links ||
			    ((how->flags & O_NOFOLLOW) && !dir_only)) {
				e = fd < 0 ? errno : 0;
				break;
			}
		}
		next = openat2_once(walk_here(&w), comp, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, step);
		if (next < 0 || fstat(next, &st) < 0) {
			e = errno;
			break;
		}
		if (S_ISDIR(st.st_mode) && !last) {
			walk_push(&w, TAKE_FD(next));
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			/* A last name that stopped being a link meanwhile: open it again. */
			if (last && ++links <= SCOPED_LINKS_MAX) {
				if (dir_only)
					comp[strlen(comp)] = '/';
				p = comp;
				continue;
			}
			e = last ? ELOOP : ENOTDIR;
			break;
		}
		if (no_links || ++links > SCOPED_LINKS_MAX) {
			e = ELOOP;
			break;
		}
		len = readlinkat(next, "", target, PATH_MAX);
		if (len < 0 || len >= PATH_MAX) {
			e = len < 0 ? errno : ENAMETOOLONG;
			break;
		}
		target[len] = '\0';
		if (magic_link(next, target)) {
			e = how->resolve & RESOLVE_NO_MAGICLINKS ? ELOOP : EXDEV;
			break;
		}
		if (target[0] == '/') {
			if (!in_root) {
				e = EXDEV;
				break;
			}
			while (w.n)
				walk_up(&w);
		}
		{
			char *rest = dir_only ? cordon_xasprintf("%s/", target) :
				     last     ? cordon_xstrdup(target) :
						cordon_xasprintf("%s/%s", target, p);

			free(todo);
			todo = rest;
			p = todo;
		}
	}
	if (fd >= 0 && w.n && !below_root(dirfd, walk_here(&w))) {
		close(fd);
		fd = -1;
		e = EXDEV;
	}
out:
	walk_free(&w);
	if (fd < 0)
		errno = e;
	return fd;
}
