// SPDX-License-Identifier: Apache-2.0
/*
 * config.json "mounts": each entry becomes a struct cordon_oci_mount with
 * its options split into mount flags, propagation, and the filesystem's
 * own data string. Only the filesystems a container needs are accepted;
 * an option cordon does not know is an error rather than a surprise at
 * mount time.
 */
#include <string.h>
#include <sys/mount.h>

#include "oci-internal.h"

enum opt_kind {
	OPT_SET,   /* sets a flag */
	OPT_CLEAR, /* clears a flag */
	OPT_PROPAGATION,
	OPT_BIND,
	OPT_RBIND,
	OPT_RRO,
	OPT_RRW,
	OPT_IDMAP,
	OPT_RIDMAP,
	OPT_TMPCOPYUP,
};

static const struct {
	const char *name;
	enum opt_kind kind;
	unsigned long flag;
} options[] = {
	{ "ro", OPT_SET, MS_RDONLY },
	{ "rw", OPT_CLEAR, MS_RDONLY },
	{ "nosuid", OPT_SET, MS_NOSUID },
	{ "suid", OPT_CLEAR, MS_NOSUID },
	{ "nodev", OPT_SET, MS_NODEV },
	{ "dev", OPT_CLEAR, MS_NODEV },
	{ "noexec", OPT_SET, MS_NOEXEC },
	{ "exec", OPT_CLEAR, MS_NOEXEC },
	{ "sync", OPT_SET, MS_SYNCHRONOUS },
	{ "async", OPT_CLEAR, MS_SYNCHRONOUS },
	{ "dirsync", OPT_SET, MS_DIRSYNC },
	{ "noatime", OPT_SET, MS_NOATIME },
	{ "atime", OPT_CLEAR, MS_NOATIME },
	{ "nodiratime", OPT_SET, MS_NODIRATIME },
	{ "diratime", OPT_CLEAR, MS_NODIRATIME },
	{ "relatime", OPT_SET, MS_RELATIME },
	{ "norelatime", OPT_CLEAR, MS_RELATIME },
	{ "strictatime", OPT_SET, MS_STRICTATIME },
	{ "nostrictatime", OPT_CLEAR, MS_STRICTATIME },
	{ "lazytime", OPT_SET, MS_LAZYTIME },
	{ "nolazytime", OPT_CLEAR, MS_LAZYTIME },
	{ "silent", OPT_SET, MS_SILENT },
	{ "loud", OPT_CLEAR, MS_SILENT },
	{ "private", OPT_PROPAGATION, MS_PRIVATE },
	{ "rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC },
	{ "shared", OPT_PROPAGATION, MS_SHARED },
	{ "rshared", OPT_PROPAGATION, MS_SHARED | MS_REC },
	{ "slave", OPT_PROPAGATION, MS_SLAVE },
	{ "rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC },
	{ "unbindable", OPT_PROPAGATION, MS_UNBINDABLE },
	{ "runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC },
	{ "bind", OPT_BIND, 0 },
	{ "rbind", OPT_RBIND, 0 },
	{ "rro", OPT_RRO, 0 },
	{ "rrw", OPT_RRW, 0 },
	{ "idmap", OPT_IDMAP, 0 },
	{ "ridmap", OPT_RIDMAP, 0 },
	{ "tmpcopyup", OPT_TMPCOPYUP, 0 },
};

const char *oci_mount_option_name(size_t i)
{
	return i < ARRAY_SIZE(options) ? options[i].name : NULL;
}

/* The data options each filesystem takes ("key" or "key=value"). */
static const char *const tmpfs_keys[] = { "size",      "mode",	    "uid",    "gid",
					  "nr_inodes", "nr_blocks", "huge",   "mpol",
					  "inode32",   "inode64",   "noswap", NULL };
static const char *const devpts_keys[] = { "newinstance", "ptmxmode", "mode", "uid",
					   "gid",	  "max",      NULL };
static const char *const proc_keys[] = { "hidepid", "subset", "gid", NULL };
static const char *const no_keys[] = { NULL };

static const struct {
	const char *type;
	enum cordon_oci_mount_kind kind;
	const char *const *keys;
} fstypes[] = {
	{ "proc", CORDON_OCI_MOUNT_PROC, proc_keys },
	{ "sysfs", CORDON_OCI_MOUNT_SYSFS, no_keys },
	{ "tmpfs", CORDON_OCI_MOUNT_TMPFS, tmpfs_keys },
	{ "devpts", CORDON_OCI_MOUNT_DEVPTS, devpts_keys },
	{ "mqueue", CORDON_OCI_MOUNT_MQUEUE, no_keys },
	{ "cgroup", CORDON_OCI_MOUNT_CGROUP, no_keys },
	{ "cgroup2", CORDON_OCI_MOUNT_CGROUP, no_keys },
};

/*
 * What a bind mount takes besides its flags: any filesystem's options,
 * which mount(2) ignores for a bind, and so does cordon (runc passes
 * them on; engines write mode= and size= on binds).
 */
static const char *const bind_keys[] = { "size",    "mode",    "uid",	      "gid",
					 "nr_inodes", "nr_blocks", "huge",     "mpol",
					 "inode32", "inode64", "noswap",   "newinstance",
					 "ptmxmode", "max",	"hidepid", "subset",
					 NULL };

static bool data_key_known(const char *const *keys, const char *opt)
{
	size_t klen = strcspn(opt, "=");

	for (; *keys; keys++)
		if (strlen(*keys) == klen && strncmp(*keys, opt, klen) == 0)
			return true;
	return false;
}

static void data_append(char **data, const char *opt)
{
	char *joined = *data ? cordon_xasprintf("%s,%s", *data, opt) : cordon_xstrdup(opt);

	free(*data);
	*data = joined;
}

static int apply_options(struct oci_parse *p, struct cordon_oci_mount *m, const char *path,
			 const char *const *keys, bool *bind)
{
	for (size_t i = 0; m->options && m->options[i]; i++) {
		const char *opt = m->options[i];
		char op[OCI_PATH_MAX];
		size_t k;

		oci_path(op, "%s.options[%zu]", path, i);
		/* One option per entry: a comma would smuggle in more. */
		if (!*opt || strchr(opt, ','))
			return oci_error(p->err, "%s: '%s' is not one mount option", op, opt);
		for (k = 0; k < ARRAY_SIZE(options); k++)
			if (strcmp(options[k].name, opt) == 0)
				break;
		if (k == ARRAY_SIZE(options)) {
			if (!keys || !data_key_known(keys, opt))
				return oci_error(p->err, "%s: unknown option '%s' for %s", op, opt,
						 m->type ? m->type : "a bind mount");
			data_append(&m->data, opt);
			continue;
		}
		switch (options[k].kind) {
		case OPT_SET:
			m->flags |= options[k].flag;
			m->clear &= ~options[k].flag;
			break;
		case OPT_CLEAR:
			m->flags &= ~options[k].flag;
			m->clear |= options[k].flag;
			break;
		case OPT_PROPAGATION:
			m->propagation = options[k].flag;
			break;
		case OPT_RBIND:
			m->recursive = true;
			/* fall through */
		case OPT_BIND:
			*bind = true;
			break;
		case OPT_RRO:
			m->recursive_ro = true;
			break;
		case OPT_RRW:
			m->recursive_ro = false;
			break;
		case OPT_RIDMAP:
			m->idmap_recursive = true;
			/* fall through */
		case OPT_IDMAP:
			m->idmap = true;
			break;
		case OPT_TMPCOPYUP:
			oci_warn(p->oci, "%s: tmpcopyup is not applied (the tmpfs starts empty)",
				 op);
			break;
		}
	}
	return 0;
}

static int parse_kind(struct oci_parse *p, struct cordon_oci_mount *m, const char *path,
		      const char *const **keys)
{
	*keys = NULL;
	if (!m->type || strcmp(m->type, "none") == 0 || strcmp(m->type, "bind") == 0) {
		m->kind = CORDON_OCI_MOUNT_BIND;
		return 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(fstypes); k++) {
		if (strcmp(fstypes[k].type, m->type) == 0) {
			m->kind = fstypes[k].kind;
			*keys = fstypes[k].keys;
			return 0;
		}
	}
	return oci_error(p->err, "%s.type: '%s' is not supported", path, m->type);
}

static int parse_mount(struct oci_parse *p, yajl_val v, const char *path,
		       struct cordon_oci_mount *m)
{
	const char *const *keys;
	char f[OCI_PATH_MAX];
	bool bind = false;
	yajl_val x;

	if (oci_want_object(v, path, p->err) < 0)
		return -1;
	oci_path(f, "%s.destination", path);
	if (!(x = oci_get(v, "destination")))
		return oci_error(p->err, "%s: required", f);
	if (oci_container_path(x, f, &m->destination, p->err) < 0)
		return -1;
	if (strcmp(m->destination, "/") == 0)
		return oci_error(p->err, "%s: cannot mount over / (that is root.path)", f);
	oci_path(f, "%s.type", path);
	if ((x = oci_get(v, "type")) && oci_string(x, f, &m->type, p->err) < 0)
		return -1;
	oci_path(f, "%s.source", path);
	if ((x = oci_get(v, "source")) && oci_string(x, f, &m->source, p->err) < 0)
		return -1;
	oci_path(f, "%s.options", path);
	if ((x = oci_get(v, "options")) && oci_strv(x, f, &m->options, NULL, p->err) < 0)
		return -1;
	if (parse_kind(p, m, path, &keys) < 0)
		return -1;
	if (apply_options(p, m, path, m->kind == CORDON_OCI_MOUNT_BIND ? bind_keys : keys, &bind) <
	    0)
		return -1;
	/* A bind option makes it a bind whatever the type says (as runc and crun do). */
	if (bind)
		m->kind = CORDON_OCI_MOUNT_BIND;
	/* Filesystem options on a bind: ignored, as mount(2) ignores them. */
	if (m->kind == CORDON_OCI_MOUNT_BIND)
		free(TAKE_PTR(m->data));
	if (m->kind == CORDON_OCI_MOUNT_BIND && !bind && m->type && strcmp(m->type, "bind") != 0)
		return oci_error(p->err, "%s.type: '%s' needs a bind or rbind option", path,
				 m->type);
	if (m->kind == CORDON_OCI_MOUNT_BIND && !m->type && !bind)
		return oci_error(p->err, "%s.type: required unless options has bind or rbind",
				 path);
	if (m->kind == CORDON_OCI_MOUNT_BIND) {
		oci_path(f, "%s.source", path);
		if (!m->source || !*m->source)
			return oci_error(p->err, "%s: required for a bind mount", f);
		/* Relative bind sources are relative to the bundle, like root.path. */
		if (m->source[0] != '/') {
			char *abs = cordon_xasprintf("%s/%s", p->bundle, m->source);

			free(m->source);
			m->source = abs;
		}
	}
	return 0;
}

static int parse_mount_idmaps(struct oci_parse *p, yajl_val v, const char *path,
			      struct cordon_oci_mount *m)
{
	yajl_val u = oci_get(v, "uidMappings"), g = oci_get(v, "gidMappings");
	char f[OCI_PATH_MAX];

	if (!u && !g)
		return 0;
	oci_path(f, "%s.uidMappings", path);
	if (!u)
		return oci_error(p->err, "%s: required with gidMappings", f);
	if (oci_idmaps(u, f, &m->uid_map, &m->n_uid_map, p->err) < 0)
		return -1;
	oci_path(f, "%s.gidMappings", path);
	if (!g)
		return oci_error(p->err, "%s: required with uidMappings", f);
	if (oci_idmaps(g, f, &m->gid_map, &m->n_gid_map, p->err) < 0)
		return -1;
	if (m->kind != CORDON_OCI_MOUNT_BIND)
		return oci_error(p->err, "%s.uidMappings: only bind mounts can be idmapped", path);
	if (!m->n_uid_map || !m->n_gid_map)
		return oci_error(
			p->err, "%s.uidMappings: an idmapped mount needs at least one range", path);
	m->idmap = true;
	return 0;
}

bool cordon_oci_mount_provided(const struct cordon_oci_mount *m)
{
	static const char *const provided[] = { "/proc", "/dev", "/dev/pts", "/dev/mqueue" };

	for (size_t i = 0; i < ARRAY_SIZE(provided); i++)
		if (strcmp(m->destination, provided[i]) == 0)
			return true;
	return false;
}

/*
 * What cordon refuses to mount even when asked: anything below its /proc
 * (a mount there would uncover what the masks hide, the way of
 * CVE-2019-16884 and CVE-2019-19921), and proc or devpts anywhere but
 * their own place (a second proc would carry no masks).
 */
static int check_destination(struct oci_parse *p, const struct cordon_oci_mount *m,
			     const char *path)
{
	if (cordon_oci_mount_provided(m))
		return 0;
	if (strncmp(m->destination, "/proc/", 6) == 0)
		return oci_error(p->err,
				 "%s.destination: %s: nothing may be mounted below /proc (its "
				 "masked paths would be uncovered)",
				 path, m->destination);
	if (m->kind == CORDON_OCI_MOUNT_PROC || m->kind == CORDON_OCI_MOUNT_DEVPTS)
		return oci_error(p->err, "%s.type: %s is mounted at %s only", path, m->type,
				 m->kind == CORDON_OCI_MOUNT_PROC ? "/proc" : "/dev/pts");
	return 0;
}

int oci_parse_mounts(struct oci_parse *p, yajl_val mounts)
{
	struct cordon_oci *oci = p->oci;

	if (!mounts)
		return 0;
	if (oci_want_array(mounts, "mounts", p->err) < 0)
		return -1;
	oci->mounts = cordon_xcalloc(mounts->u.array.len + 1, sizeof(*oci->mounts));
	for (size_t i = 0; i < mounts->u.array.len; i++) {
		yajl_val v = mounts->u.array.values[i];
		struct cordon_oci_mount *m = &oci->mounts[i];
		char path[OCI_PATH_MAX];

		oci->n_mounts++; /* counted first: freed with the rest on error */
		oci_path(path, "mounts[%zu]", i);
		if (parse_mount(p, v, path, m) < 0 || parse_mount_idmaps(p, v, path, m) < 0 ||
		    check_destination(p, m, path) < 0)
			return -1;
		if (m->idmap && m->kind != CORDON_OCI_MOUNT_BIND)
			return oci_error(p->err, "%s.options: idmap applies to bind mounts only",
					 path);
	}
	return 0;
}
