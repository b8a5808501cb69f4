// SPDX-License-Identifier: Apache-2.0
/*
 * Validation against the host filesystem, before anything is created:
 * every path the user named exists and has the right type, --user names
 * resolve in the rootfs, and the workload's environment is complete.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cordon/audit.h"
#include "cordon/spec.h"

const char *cordon_default_rootfs(void)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	/* Run from the build tree: use the rootfs the build made beside it. */
	if (n > 0) {
		size_t blen = strlen(CORDON_BUILD_DIR);

		exe[n] = '\0';
		if ((size_t)n > blen && strncmp(exe, CORDON_BUILD_DIR, blen) == 0 &&
		    exe[blen] == '/')
			return CORDON_BUILD_ROOTFS;
	}
	return CORDON_INSTALL_ROOTFS;
}

/*
 * Open a host path once (cordon_path_open: no unsafe ownership
 * transition), check it on the fd and record what was checked: the
 * mounts made later refuse any other object. *out becomes the fd's name,
 * the canonical path, for messages and for re-opening in the init's
 * mount namespace. want_dir: a directory; otherwise any type.
 */
static int resolve_host_path(const char *flag, const char *path, enum cordon_code code,
			     bool want_dir, char **out, struct cordon_path_id *id,
			     struct cordon_error *err)
{
	_cleanup_close_ int fd = cordon_path_open(path, flag, code, err);
	char link[CORDON_FD_PATH_MAX], name[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return cordon_error_set(err, code, errno, "%s %s", flag, path);
	if (want_dir && !S_ISDIR(st.st_mode))
		return cordon_error_set(err, code, ENOTDIR, "%s %s", flag, path);
	n = readlink(cordon_fd_path(fd, link), name, sizeof(name) - 1);
	if (n <= 0 || (size_t)n >= sizeof(name) - 1 || name[0] != '/')
		return cordon_error_set(err, code, n < 0 ? errno : ENAMETOOLONG, "%s %s: its name",
					flag, path);
	name[n] = '\0';
	cordon_path_id_of(&st, id);
	free(*out);
	*out = cordon_xstrdup(name);
	return 0;
}

static int resolve_dir(const char *flag, const char *path, enum cordon_code code, char **out,
		       struct cordon_path_id *id, struct cordon_error *err)
{
	return resolve_host_path(flag, path, code, true, out, id, err);
}

/* Is this checked directory the host's "/"? By the object, not the name. */
static bool is_host_root(const struct cordon_path_id *id)
{
	struct stat st;

	return stat("/", &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/*
 * Open a file of the rootfs for reading. The image is not trusted, nor
 * is a running container that may rewrite its own root: the file is
 * looked up in the rootfs that was checked (cordon_path_reopen refuses
 * another object at its name), never out of it (RESOLVE_IN_ROOT), never
 * through a symlink as its last component, and it is looked at through
 * an O_PATH fd before anything opens it: only a regular file is opened
 * for reading. A fifo would block the reader or hand it a writer's
 * endless stream, and the mere open of a device can act (a tape rewinds,
 * a watchdog starts), as host root when the sandbox is rootful.
 */
static int root_file_open(int root, const char *path, const char *what, struct cordon_error *err)
{
	/*
	 * A symlink is followed, inside the root: images keep /etc/passwd
	 * elsewhere (runc and crun follow it too), and what it names is the
	 * image's file or none, never the host's.
	 */
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int at = -1;
	char link[CORDON_FD_PATH_MAX];
	struct stat st, opened;
	int fd;

	at = cordon_openat2(root, path, &how, sizeof(how));
	if (at < 0 || fstat(at, &st) < 0)
		return cordon_error_set(err, CORDON_E_USAGE, errno, "%s", what);
	if (!S_ISREG(st.st_mode))
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: not a regular file", what);
	/* The object looked at, opened through its fd; O_NONBLOCK: a lease never holds us. */
	fd = open(cordon_fd_path(at, link), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_USAGE, errno, "%s", what);
	/*
	 * And it is that object: inside a sandbox (exec's --user NAME) /proc is
	 * the sandbox's, which could make /proc/self/fd name something else.
	 */
	if (fstat(fd, &opened) < 0 || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) {
		close(fd);
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: changed while it was opened",
					what);
	}
	return fd;
}

/*
 * Look NAME (or a number) up in a passwd/group style file of the rootfs.
 * Returns 1 when found (id and, for passwd, gid and home filled), 0 when
 * not, -1 with *err filled when the file cannot be read. The file is a
 * bounded regular file (rootfs_open, cordon_input_read_fd) or it is
 * refused.
 */
/*
 * An id field of the image's file: decimal digits only, below 2^32 - 1
 * ((uid_t)-1 means "no change" to the kernel). strtoul took "-1", "abc"
 * (as 0: root) and 4294967296 (0 once cast to uid_t) alike.
 */
static bool parse_id(const char *text, unsigned long *id)
{
	uint64_t v;

	if (cordon_parse_u64(text, &v) < 0 || v >= 65536 * 65536ULL - 1)
		return false;
	*id = (unsigned long)v;
	return true;
}

static int lookup_at(int root, const char *root_name, const char *file, const char *name,
		     bool by_id, unsigned long id_wanted, unsigned long *id, unsigned long *gid,
		     char **home, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *what = cordon_xasprintf("%s%s", root_name, file);
	_cleanup_close_ int fd = root_file_open(root, file, what, err);
	char *next = NULL;

	if (fd < 0)
		return -1;
	if (cordon_input_read_fd(fd, CORDON_INPUT_TEXT_MAX, CORDON_E_USAGE, what, &text, NULL,
				 err) < 0)
		return -1;
	for (char *line = text; line; line = next) {
		char *fields[7] = { 0 }, *p = line;
		size_t n = 0;
		unsigned long lid = 0;
		bool id_ok;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		/* strsep keeps empty fields (e.g. an empty password). */
		while (n < ARRAY_SIZE(fields) && (fields[n] = strsep(&p, ":")))
			n++;
		if (n < 3)
			continue;
		id_ok = parse_id(fields[2], &lid);
		if (by_id ? !id_ok || lid != id_wanted : strcmp(fields[0], name) != 0)
			continue;
		/* The image's word is not taken for an id it does not spell (never root by
		 * default). */
		if (!id_ok)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"%s: the entry of '%s' has no valid id", what,
						name);
		if (gid && n >= 4 && !parse_id(fields[3], gid))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"%s: the entry of id %lu has no valid group id",
						what, lid);
		if (gid && n < 4)
			*gid = lid; /* no group field: gid = uid, as for an unknown uid */
		*id = lid;
		if (home && n >= 6 && fields[5][0] == '/')
			*home = cordon_xstrdup(fields[5]);
		return 1;
	}
	return 0;
}

/* lookup_at in the spec's rootfs (the directory that was checked, reopened). */
static int rootfs_lookup(const struct cordon_spec *spec, const char *file, const char *name,
			 bool by_id, unsigned long id_wanted, unsigned long *id, unsigned long *gid,
			 char **home, struct cordon_error *err)
{
	_cleanup_close_ int root = cordon_path_reopen(spec->rootfs, &spec->rootfs_id, "rootfs", err);

	if (root < 0)
		return -1;
	return lookup_at(root, spec->rootfs, file, name, by_id, id_wanted, id, gid, home, err);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int cordon_user_resolve_at(int root, const char *root_name, const char *spec_user,
			   uid_t *uid_out, gid_t *gid_out, char **home_out, struct cordon_error *err)
{
	_cleanup_free_ char *user = cordon_xstrdup(spec_user), *home = NULL;
	char *group;
	unsigned long uid = 0, gid = 0, id;
	struct cordon_error ignored;
	bool gid_known = false;
	uint64_t v;
	int r;

	group = strchr(user, ':');
	if (group)
		*group++ = '\0';

	if (all_digits(user)) {
		if (cordon_parse_u64(user, &v) < 0 || v >= 65536 * 65536ULL - 1)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--user: uid %s out of range", user);
		uid = (unsigned long)v;
		/* The name is not needed: an unreadable passwd only leaves gid = uid. */
		r = lookup_at(root, root_name, "/etc/passwd", NULL, true, uid, &id, &gid, &home,
			      &ignored);
		gid_known = r == 1;
		if (!gid_known)
			gid = uid;
	} else {
		r = lookup_at(root, root_name, "/etc/passwd", user, false, 0, &uid, &gid, &home,
			      err);
		if (r < 0)
			return cordon_error_wrap(err, "--user: no user '%s'", user);
		if (r == 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--user: no user '%s' in %s/etc/passwd", user,
						root_name);
	}
	if (group) {
		if (all_digits(group)) {
			if (cordon_parse_u64(group, &v) < 0 || v >= 65536 * 65536ULL - 1)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--user: gid %s out of range", group);
			gid = (unsigned long)v;
		} else {
			r = lookup_at(root, root_name, "/etc/group", group, false, 0, &gid, NULL,
				      NULL, err);
			if (r < 0)
				return cordon_error_wrap(err, "--user: no group '%s'", group);
			if (r == 0)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--user: no group '%s' in %s/etc/group",
							group, root_name);
		}
	}
	*uid_out = (uid_t)uid;
	*gid_out = (gid_t)gid;
	*home_out = TAKE_PTR(home);
	return 0;
}

static int resolve_user(struct cordon_spec *spec, struct cordon_error *err)
{
	_cleanup_close_ int root = -1;
	char *home = NULL;
	uid_t uid;
	gid_t gid;

	if (!spec->user) {
		spec->uid = 0;
		spec->gid = 0;
		free(spec->home);
		spec->home = cordon_xstrdup("/root");
		return 0;
	}
	root = cordon_path_reopen(spec->rootfs, &spec->rootfs_id, "rootfs", err);
	if (root < 0 ||
	    cordon_user_resolve_at(root, spec->rootfs, spec->user, &uid, &gid, &home, err) < 0)
		return -1;
	spec->uid = uid;
	spec->gid = gid;
	free(spec->home);
	spec->home = home ? home : cordon_xstrdup(uid == 0 ? "/root" : "/");
	return 0;
}

/*
 * Is the directory the caller's home directory, or one of its ancestors?
 * Compared by object: each home is walked up by ".." to "/".
 */
static bool is_home_or_above(const struct stat *dir)
{
	const char *homes[2] = { getenv("HOME"), NULL };
	struct passwd *pw = getpwuid(getuid());

	if (pw)
		homes[1] = pw->pw_dir;
	for (size_t i = 0; i < ARRAY_SIZE(homes); i++) {
		_cleanup_close_ int fd = -1;

		if (!homes[i] || !*homes[i])
			continue;
		fd = open(homes[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		for (unsigned depth = 0; fd >= 0 && depth < PATH_MAX / 2; depth++) {
			struct stat st, up;
			int parent;

			if (fstat(fd, &st) < 0)
				break;
			if (st.st_dev == dir->st_dev && st.st_ino == dir->st_ino)
				return true;
			parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (parent < 0 || fstat(parent, &up) < 0 ||
			    (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
				if (parent >= 0)
					close(parent);
				break; /* "/" reached */
			}
			close(fd);
			fd = parent;
		}
	}
	return false;
}

/*
 * Without --workspace, the caller's current directory is the workspace,
 * as a job's files usually sit there -- except "/", the home directory or
 * any directory above it, which are never mounted unless named. Checked
 * on the directory itself ("."), never on a name.
 */
static int default_workspace(struct cordon_spec *spec, struct cordon_error *err)
{
	_cleanup_close_ int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char link[CORDON_FD_PATH_MAX], name[PATH_MAX];
	struct cordon_path_id id;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 0; /* no current directory to offer: none */
	cordon_path_id_of(&st, &id);
	if (is_host_root(&id) || is_home_or_above(&st))
		return 0;
	n = readlink(cordon_fd_path(fd, link), name, sizeof(name) - 1);
	if (n <= 0 || (size_t)n >= sizeof(name) - 1 || name[0] != '/')
		return cordon_error_set(err, CORDON_E_PATH, n < 0 ? errno : ENAMETOOLONG,
					"the current directory (the default workspace): its name");
	name[n] = '\0';
	spec->workspace = cordon_xstrdup(name);
	spec->workspace_id = id;
	return 0;
}

static int resolve_limits(struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_limits *l = &spec->limits;
	uint64_t swap;

	if (cordon_swap_only(l, &swap, err) < 0)
		return -1;
	if (!l->pids) {
		l->pids = CORDON_PIDS_DEFAULT;
		l->pids_default = true;
	}
	if (spec->cgroup_parent) {
		char *norm = cordon_has_control(spec->cgroup_parent) ?
				     NULL :
				     cordon_path_normalize(spec->cgroup_parent);

		if (!norm)
			return cordon_error_set(
				err, CORDON_E_USAGE, 0,
				"--cgroup-parent '%s': an absolute path without '..' or control "
				"characters",
				spec->cgroup_parent);
		free(spec->cgroup_parent);
		spec->cgroup_parent = norm;
	}
	return 0;
}

/* The workspace or a :rw bind: host files the workload can create or chmod. */
static bool writes_host_tree(const struct cordon_spec *spec)
{
	if (spec->workspace)
		return true;
	for (size_t i = 0; i < spec->n_binds; i++)
		if (spec->binds[i].writable)
			return true;
	return false;
}

static int resolve_security(struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_security *sec = &spec->security;
	cordon_capset refused = spec->cap_add & ~cordon_cap_safe_set();

	if (refused & 1ULL << CAP_SETFCAP)
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"--cap-add SETFCAP: refused, a file capability written in the "
			"workspace or a :rw bind could be honoured on the host "
			"(docs/security.md)");
	if (refused) {
		char name[32];

		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"--cap-add %s: refused, it would widen the kernel surface the "
			"workload reaches (safe set: docs/security.md)",
			cordon_cap_name(__builtin_ctzll(refused), name, sizeof(name)));
	}
	sec->caps = spec->cap_add & ~spec->cap_drop;
	/*
	 * The default profile refuses setuid and setgid modes; with another
	 * (or none), the guard still does wherever the workload writes a
	 * host-backed tree (docs/security.md, "Setuid files on the host").
	 */
	sec->mode_guard = sec->seccomp != CORDON_SECCOMP_DEFAULT && writes_host_tree(spec);
	if (sec->seccomp == CORDON_SECCOMP_PROFILE)
		return cordon_seccomp_profile_load(spec->seccomp_profile, sec, err);
	if (sec->seccomp == CORDON_SECCOMP_DEFAULT)
		sec->n_filters = cordon_seccomp_default(&sec->filters);
	return 0;
}

/* HOME from the rootfs's passwd entry of the uid, when the config sets none (as runc). */
static void oci_default_home(struct cordon_spec *spec)
{
	_cleanup_free_ char *home = NULL, *kv = NULL;
	struct cordon_error ignored;
	unsigned long id, gid;

	for (size_t i = 0; i < spec->n_env; i++) {
		if (strncmp(spec->env[i], "HOME=", 5) == 0) {
			free(spec->home);
			spec->home = cordon_xstrdup(spec->env[i] + 5);
			return;
		}
	}
	if (rootfs_lookup(spec, "/etc/passwd", NULL, true, spec->uid, &id, &gid, &home, &ignored) !=
		    1 ||
	    !home)
		home = cordon_xstrdup("/");
	kv = cordon_xasprintf("HOME=%s", home);
	cordon_spec_env_default(spec, kv);
	free(spec->home);
	spec->home = TAKE_PTR(home);
}

/*
 * The capabilities of an OCI config are the launcher's to choose (runc and
 * crun apply them): inside cordon's user namespaces each acts only on what
 * the container's own namespaces own. Under cordon's network annotations
 * the container is held to `cordon run`'s policy instead (the safe set,
 * and SETFCAP): its egress policy is cordon's promise, whose argument
 * includes a bounding set without NET_ADMIN (docs/security.md).
 */
static int oci_check_caps(const struct cordon_spec *spec, const struct cordon_oci_caps *caps,
			  struct cordon_error *err)
{
	const struct {
		const char *name;
		cordon_capset set;
	} sets[] = {
		{ "bounding", caps->bounding },	  { "effective", caps->effective },
		{ "permitted", caps->permitted }, { "inheritable", caps->inheritable },
		{ "ambient", caps->ambient },
	};
	cordon_capset safe = cordon_cap_oci_set();

	if (!spec->net.n_allow)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		cordon_capset refused = sets[i].set & ~safe;
		char name[32];

		if (refused)
			return cordon_error_set(
				err, CORDON_E_SPEC, 0,
				"process.capabilities.%s: CAP_%s is refused with "
				"annotations.run.cordon.net.allow, it would widen the kernel surface "
				"the workload reaches (safe set: docs/security.md)",
				sets[i].name,
				cordon_cap_name(__builtin_ctzll(refused), name, sizeof(name)));
	}
	return 0;
}

/*
 * A spec from a config.json: the config says exactly what the workload
 * gets (environment, ids, capabilities, seccomp), so this checks the
 * capabilities against cordon's policy and the host side -- the root and
 * bind sources -- and fills what cordon never leaves open: an id, a host
 * name, the pids limit.
 */
static int finalize_oci(struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_oci *oci = spec->oci;
	struct cordon_security *sec = &spec->security;
	int r;

	if (!spec->argv || !spec->argv[0] || !spec->argv[0][0])
		return cordon_error_set(err, CORDON_E_SPEC, 0, "process.args: empty");
	if (!spec->id)
		spec->id = cordon_id_generate();
	if (!cordon_id_valid(spec->id))
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"container id '%s': an id is [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", spec->id);
	r = resolve_dir("root.path", spec->rootfs, CORDON_E_ROOTFS, &spec->rootfs, &spec->rootfs_id,
			err);
	if (r < 0)
		return r;
	if (is_host_root(&spec->rootfs_id))
		return cordon_error_set(err, CORDON_E_ROOTFS, 0,
					"root.path: the host's / cannot be a sandbox root");
	free(TAKE_PTR(spec->workspace));
	r = oci_check_caps(spec, &oci->caps, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < oci->n_mounts; i++) {
		struct cordon_oci_mount *m = &oci->mounts[i];
		char what[48];

		/*
		 * Only host root may idmap a host filesystem (the supervisor
		 * makes those mounts). A plain bind instead would hand the files
		 * out with other owners than asked: refused, not degraded.
		 */
		if (m->idmap && !cordon_host_root())
			return cordon_error_set(
				err, CORDON_E_SPEC, 0,
				"mounts[%zu] %s: an idmapped mount needs host root (only it "
				"may idmap a host filesystem)",
				i, m->destination);
		if (m->kind != CORDON_OCI_MOUNT_BIND)
			continue;
		snprintf(what, sizeof(what), "mounts[%zu].source", i);
		r = resolve_host_path(what, m->source, CORDON_E_PATH, false, &m->source,
				      &m->source_id, err);
		if (r < 0)
			return r;
	}
	/* A new UTS namespace starts with the host's name: never show it. */
	if (!spec->hostname)
		spec->hostname = cordon_xstrdup(CORDON_DEFAULT_HOSTNAME);
	if (sec->seccomp == CORDON_SECCOMP_DEFAULT && !sec->filters)
		sec->n_filters = cordon_seccomp_default(&sec->filters);
	r = resolve_limits(spec, err);
	if (r < 0)
		return r;
	if (cordon_user_limits_resolve(&spec->user_limits, CORDON_E_SPEC, err) < 0)
		return err->code == CORDON_E_SPEC ? cordon_error_wrap(err, "linux.sysctl") : -1;
	/* The annotations' network policy (oci-net.c): the backend, the default upstreams. */
	if (spec->net.n_allow && cordon_spec_finalize_net(spec, err) < 0)
		return cordon_error_wrap(err, "annotations.run.cordon.net.allow");
	if (cordon_audit_check_keep(spec, err) < 0)
		return -1;
	oci_default_home(spec);
	return 0;
}

int cordon_spec_finalize(struct cordon_spec *spec, struct cordon_error *err)
{
	_cleanup_free_ char *hostname_kv = NULL, *home_kv = NULL, *term_kv = NULL;
	const char *term;
	int r;

	if (spec->oci)
		return finalize_oci(spec, err);
	/* A session has none: its workload is the idle program, commands come with exec. */
	if (spec->session && spec->argv)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"a session takes no command: give it to cordon exec");
	if ((!spec->argv || !spec->argv[0] || !spec->argv[0][0]) && !spec->print_profile &&
	    !spec->session)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "no command given");
	if (!spec->id)
		spec->id = cordon_id_generate();
	if (!cordon_id_valid(spec->id))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--name '%s': an id is [A-Za-z0-9][A-Za-z0-9_.-]{0,63}",
					spec->id);

	r = resolve_dir("rootfs", spec->rootfs ? spec->rootfs : cordon_default_rootfs(),
			CORDON_E_ROOTFS, &spec->rootfs, &spec->rootfs_id, err);
	if (r < 0)
		return r;
	if (is_host_root(&spec->rootfs_id))
		return cordon_error_set(err, CORDON_E_ROOTFS, 0,
					"rootfs: the host's / cannot be a sandbox root");

	if (spec->no_workspace) {
		free(TAKE_PTR(spec->workspace));
	} else if (!spec->workspace) {
		r = default_workspace(spec, err);
		if (r < 0)
			return r;
		for (size_t i = 0; spec->workspace && i < spec->n_binds; i++)
			if (strcmp(spec->binds[i].destination, "/workspace") == 0)
				free(TAKE_PTR(spec->workspace)); /* the user bound it explicitly */
	}
	if (spec->workspace && !spec->workspace_id.valid) {
		r = resolve_dir("--workspace", spec->workspace, CORDON_E_PATH, &spec->workspace,
				&spec->workspace_id, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < spec->n_binds; i++) {
		struct cordon_bind *b = &spec->binds[i];
		_cleanup_free_ char *what =
			cordon_xasprintf("--bind %s:%s: source", b->source, b->destination);

		r = resolve_host_path(what, b->source, CORDON_E_PATH, false, &b->source,
				      &b->source_id, err);
		if (r < 0)
			return r;
		if (spec->workspace && (strcmp(b->destination, "/workspace") == 0))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--bind %s:%s: /workspace is taken by --workspace",
						b->source, b->destination);
	}
	if (spec->cwd) {
		char *norm = cordon_path_normalize(spec->cwd);

		/* A config's errors name its field, the command line's its flag. */
		const char *what = spec->oci ? "process.cwd" : "--cwd";

		if (!norm)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"%s '%s': must be an absolute path without '..'",
						what, spec->cwd);
		free(spec->cwd);
		spec->cwd = norm;
		if (cordon_cwd_in_proc(norm))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"%s '%s': must not be inside /proc", what, norm);
	} else {
		spec->cwd = cordon_xstrdup(spec->workspace ? "/workspace" : "/");
	}
	if (!spec->hostname)
		spec->hostname = cordon_xstrdup(CORDON_DEFAULT_HOSTNAME);
	if (!cordon_hostname_valid(spec->hostname))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--hostname '%s': not a valid host name", spec->hostname);
	if (spec->tmpfs_size_mb < CORDON_TMPFS_MIN_MB)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--tmpfs-size %" PRIu64 ": the minimum is %d MB",
					spec->tmpfs_size_mb, CORDON_TMPFS_MIN_MB);
	if (spec->userns == CORDON_USERNS_HOST && geteuid() != 0)
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"--userns host: only root may run without a user namespace");

	r = resolve_user(spec, err);
	if (r < 0)
		return r;
	r = resolve_security(spec, err);
	if (r < 0)
		return r;
	r = resolve_limits(spec, err);
	if (r < 0)
		return r;
	if (cordon_user_limits_resolve(&spec->user_limits, CORDON_E_USAGE, err) < 0)
		return err->code == CORDON_E_USAGE ? cordon_error_wrap(err, "--user-limit") : -1;
	if (cordon_audit_check_keep(spec, err) < 0)
		return -1;
	/*
	 * --result-json through the workspace (or a writable bind): a link
	 * or a moved directory an earlier run's workload left there. Until
	 * this passed the links stay kept, and nothing is written there.
	 */
	if (cordon_spec_links_check(spec, &spec->result_links, "--result-json", err) < 0)
		return -1;
	cordon_path_links_close(&spec->result_links);
	r = cordon_spec_finalize_net(spec, err);
	if (r < 0)
		return r;

	cordon_spec_env_default(spec, "PATH=" CORDON_DEFAULT_PATH);
	home_kv = cordon_xasprintf("HOME=%s", spec->home);
	cordon_spec_env_default(spec, home_kv);
	term = getenv("TERM");
	term_kv = cordon_xasprintf("TERM=%s", term && *term ? term : "xterm");
	cordon_spec_env_default(spec, term_kv);
	hostname_kv = cordon_xasprintf("HOSTNAME=%s", spec->hostname);
	cordon_spec_env_default(spec, hostname_kv);
	cordon_spec_env_default(spec, "container=cordon");
	return 0;
}
