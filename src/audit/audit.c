// SPDX-License-Identifier: Apache-2.0
/*
 * The audit log's file: opened before anything of the sandbox exists,
 * recorded in the state directory for later commands, appended to one
 * whole line per write(2), under a size cap (include/cordon/audit.h,
 * docs/audit.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "audit-internal.h"

#define RECORD_TEMP_PREFIX ".cordon-audit-"
#define KEEP_TEMP_PREFIX ".cordon-audit-keep-"

static void gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

static void tree_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

/* --- flags ----------------------------------------------------------------- */

/* As --log is opened (cordon_append_open), failures are the log's: CORDON_E_AUDIT. */
static int append_open(const char *path, enum cordon_append_mode mode, int *unnamed_dir,
		       char **unnamed_name, struct cordon_error *err)
{
	int fd = cordon_append_open_mode(path, "--audit", mode, unnamed_dir, unnamed_name, err);

	if (fd < 0)
		err->code = CORDON_E_AUDIT;
	return fd;
}

static void unnamed_forget(struct cordon_spec *spec)
{
	cordon_closep(&spec->audit.unnamed_dir);
	free(spec->audit.unnamed_name);
	spec->audit.unnamed_name = NULL;
}

int cordon_audit_flag_file(struct cordon_spec *spec, const char *value, struct cordon_error *err)
{
	_cleanup_free_ char *abs = NULL;
	int fd;

	spec->audit.env_read = true;
	/* An earlier --audit's file, if it had none, goes with its fd. */
	unnamed_forget(spec);
	cordon_closep(&spec->audit.fd);
	free(spec->audit.path);
	spec->audit.path = NULL;
	if (strcmp(value, "none") == 0) {
		spec->audit.off = true;
		spec->audit.on = false;
		return 0;
	}
	/* Later commands open it again from their own directory: the record keeps it absolute. */
	if (value[0] == '/') {
		abs = cordon_xstrdup(value);
	} else {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return cordon_error_set(err, CORDON_E_AUDIT, errno, "--audit %s", value);
		abs = cordon_xasprintf("%s/%s", cwd, value);
	}
	fd = append_open(abs, CORDON_APPEND_UNNAMED, &spec->audit.unnamed_dir,
			 &spec->audit.unnamed_name, err);
	if (fd < 0)
		return -1;
	spec->audit.fd = fd;
	spec->audit.path = TAKE_PTR(abs);
	spec->audit.off = false;
	spec->audit.on = true;
	return 0;
}

int cordon_audit_flag_redact(struct cordon_spec *spec, const char *value, struct cordon_error *err)
{
	regex_t re;
	int r;

	if (spec->audit.n_redact >= CORDON_AUDIT_REDACT_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--audit-redact: at most %d rules",
					CORDON_AUDIT_REDACT_MAX);
	if (!*value)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--audit-redact: empty pattern");
	r = regcomp(&re, value, REG_EXTENDED);
	if (r != 0) {
		char why[128];

		regerror(r, &re, why, sizeof(why));
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--audit-redact '%s': not a POSIX extended regular "
					"expression: %s",
					value, why);
	}
	regfree(&re);
	cordon_strv_push(&spec->audit.redact, &spec->audit.n_redact, value);
	return 0;
}

int cordon_audit_flag_max(struct cordon_spec *spec, const char *value, struct cordon_error *err)
{
	uint64_t v;

	/* At most 64 MiB: a state directory's log is read whole when it is kept. */
	if (cordon_parse_u64(value, &v) < 0 || v < CORDON_AUDIT_MAX_MIN || v > CORDON_AUDIT_MAX_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--audit-max: expected bytes from %u to %u, got '%s'",
					CORDON_AUDIT_MAX_MIN, CORDON_AUDIT_MAX_MAX, value);
	spec->audit.max_bytes = v;
	return 0;
}

int cordon_audit_flag_dir(struct cordon_spec *spec, const char *value, struct cordon_error *err)
{
	if (value[0] != '/')
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--audit-dir %s: must be an absolute path", value);
	free(spec->audit.dir);
	spec->audit.dir = cordon_xstrdup(value);
	return 0;
}

int cordon_audit_flag_env(struct cordon_spec *spec, struct cordon_error *err)
{
	const char *file = getenv("CORDON_AUDIT"), *dir = getenv("CORDON_AUDIT_DIR");

	if (!spec->audit.env_read && file && *file) {
		struct cordon_error inner = { 0 };

		if (cordon_audit_flag_file(spec, file, &inner) < 0)
			return cordon_error_set(err, inner.code, inner.errnum, "CORDON_AUDIT: %s",
						inner.msg);
	}
	spec->audit.env_read = true;
	if (!spec->audit.dir && dir && *dir) {
		struct cordon_error inner = { 0 };

		if (cordon_audit_flag_dir(spec, dir, &inner) < 0)
			return cordon_error_set(err, inner.code, inner.errnum,
						"CORDON_AUDIT_DIR: %s", inner.msg);
	}
	return 0;
}

/* --- opening --------------------------------------------------------------- */

/*
 * Where a state directory's log is kept at the end: --audit-dir, else
 * /var/log/cordon/audit for host root, else $XDG_STATE_HOME/cordon/audit
 * (~/.local/state/cordon/audit). NULL: nowhere to keep it.
 */
static char *default_keep_dir(void)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (cordon_host_root())
		return cordon_xstrdup("/var/log/cordon/audit");
	if (state && state[0] == '/')
		return cordon_xasprintf("%s/cordon/audit", state);
	if (home && home[0] == '/')
		return cordon_xasprintf("%s/.local/state/cordon/audit", home);
	return NULL;
}

static int record_write(const struct cordon_audit *a, int state_dir_fd, const char *path,
			const struct stat *st, const char *keep_dir, char *const *redact,
			size_t n_redact, struct cordon_error *err)
{
	_cleanup_(gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int r;

	yajl_gen_map_open(g);
	audit_key(g, "path");
	if (path)
		yajl_gen_string(g, (const unsigned char *)path, strlen(path));
	else
		yajl_gen_null(g);
	audit_kint(g, "dev", (long long)st->st_dev);
	audit_kint(g, "ino", (long long)st->st_ino);
	audit_kint(g, "base", (long long)a->base);
	audit_kint(g, "max", (long long)a->max);
	audit_key(g, "keep_dir");
	if (keep_dir)
		yajl_gen_string(g, (const unsigned char *)keep_dir, strlen(keep_dir));
	else
		yajl_gen_null(g);
	audit_kint(g, "created_ms", (long long)cordon_now_wall_ms());
	audit_key(g, "redact");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n_redact; i++)
		yajl_gen_string(g, (const unsigned char *)redact[i], strlen(redact[i]));
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	r = cordon_file_replace_at(state_dir_fd, CORDON_AUDIT_RECORD, RECORD_TEMP_PREFIX, buf, len,
				   0600, 0);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, -r, "audit: recording it in the state");
	return 0;
}

static struct cordon_audit *audit_new(const char *id, int fd, uint64_t base, uint64_t max)
{
	struct cordon_audit *a = cordon_xcalloc(1, sizeof(*a));

	a->fd = fd;
	a->drops_fd = -1;
	a->id = cordon_xstrdup(id ? id : "");
	a->base = base;
	a->max = max ? max : CORDON_AUDIT_MAX_DEFAULT;
	a->dns_tokens[0] = CORDON_AUDIT_DNS_PER_S;
	a->dns_tokens[1] = CORDON_AUDIT_ADMITS_PER_S;
	a->dns_refill_us[0] = a->dns_refill_us[1] = cordon_now_mono_us();
	return a;
}

/*
 * --audit FILE where the workload can write (cordon_spec_writable_place, or below one of
 * them): it could rewrite, truncate or forge its own log. Refused. The
 * file and each directory from its own up to / are compared by device
 * and inode with what the sandbox gets writable; a file with a second
 * name is refused too, for that name may be anywhere, the workspace
 * included, and no walk up from this one finds it.
 */
static int check_not_shared(const struct cordon_spec *spec, int fd, struct cordon_error *err)
{
	_cleanup_free_ char *name = NULL;
	const char *place, *what;
	struct stat st;
	int dir;

	if (fstat(fd, &st) < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, errno, "--audit %s", spec->audit.path);
	if (st.st_nlink > 1)
		return cordon_error_set(err, CORDON_E_AUDIT, 0,
					"--audit %s: the file has %ju names (a hard link could be "
					"where the workload writes: refused)",
					spec->audit.path, (uintmax_t)st.st_nlink);
	if (cordon_spec_writable_place(spec, st.st_dev, st.st_ino, &what))
		goto shared;
	/* A file --audit made is named in the directory held since the flag: that one. */
	if (spec->audit.unnamed_dir >= 0) {
		dir = fcntl(spec->audit.unnamed_dir, F_DUPFD_CLOEXEC, 3);
		if (dir < 0)
			return cordon_error_set(err, CORDON_E_AUDIT, errno, "--audit %s",
						spec->audit.path);
	} else {
		dir = cordon_output_dir_open(spec->audit.path, "--audit", CORDON_E_AUDIT, &name,
					     err);
		if (dir < 0)
			return -1;
	}
	if (cordon_spec_writable_above(spec, dir, &place, &what) < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, errno, "--audit %s",
					spec->audit.path);
	if (!place)
		return 0;
shared:
	return cordon_error_set(err, CORDON_E_AUDIT, 0,
				"--audit %s: inside the workspace or a writable bind, mount or "
				"rootfs, where the workload could rewrite its own log (refused)",
				spec->audit.path);
}

/*
 * The audit directory (--audit-dir, CORDON_AUDIT_DIR, the default) where
 * the workload can write: host root walks it by name at the end, rm and
 * sweep (cordon_audit_keep), so a directory the workload swapped for a
 * symlink would move that write anywhere, and the logs kept there are
 * other sandboxes'. Refused, as --audit FILE is: the directory, or the
 * nearest one above it that exists, and each above that up to /.
 */
int cordon_audit_check_keep(const struct cordon_spec *spec, struct cordon_error *err)
{
	_cleanup_free_ char *keep = NULL, *path = NULL;
	const char *place, *what;
	int dir;

	if (spec->audit.off || (spec->oci && !spec->audit.on) || spec->audit.fd >= 0)
		return 0;
	keep = spec->audit.dir ? cordon_xstrdup(spec->audit.dir) : default_keep_dir();
	if (!keep)
		return 0;
	path = cordon_xstrdup(keep);
	for (;;) {
		char *slash;

		dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir >= 0)
			break;
		slash = strrchr(path, '/');
		if (!slash)
			return 0;
		if (slash == path) {
			dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dir < 0)
				return cordon_error_set(err, CORDON_E_AUDIT, errno, "audit: /");
			break;
		}
		*slash = '\0';
	}
	if (cordon_spec_writable_above(spec, dir, &place, &what) < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, errno, "the audit directory %s",
					keep);
	if (!place)
		return 0;
	return cordon_error_set(err, CORDON_E_AUDIT, 0,
				"%s %s holds the audit directory %s, where the workload could "
				"rewrite kept logs or redirect host root's write: choose "
				"another place or --audit-dir",
				what, place, keep);
}

/* The state directory's count of lines later commands dropped (CORDON_AUDIT_DROPS). */
static int drops_open(struct cordon_audit *a, int state_dir_fd, struct cordon_error *err)
{
	struct stat st;

	a->drops_fd = openat(state_dir_fd, CORDON_AUDIT_DROPS,
			     O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
				     O_CLOEXEC,
			     0600);
	if (a->drops_fd < 0 || fstat(a->drops_fd, &st) < 0 || !S_ISREG(st.st_mode))
		return cordon_error_set(err, CORDON_E_AUDIT, a->drops_fd < 0 ? errno : EINVAL,
					"audit: opening %s in the state directory",
					CORDON_AUDIT_DROPS);
	return 0;
}

/*
 * The log's start: its record in the state directory (which later
 * commands check the file against) and the create event.
 */
static int audit_begin_log(struct cordon_audit *a, const struct cordon_spec *spec,
			   int state_dir_fd, const char *keep, struct cordon_error *err)
{
	const char *log = spec->audit.fd >= 0 ? spec->audit.path : CORDON_AUDIT_FILE;
	struct stat st;

	if (fstat(a->fd, &st) < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, errno, "audit: %s", log);
	if (!S_ISREG(st.st_mode))
		return cordon_error_set(err, CORDON_E_AUDIT, 0, "audit: %s: not a regular file", log);
	a->base = (uint64_t)st.st_size;
	if (record_write(a, state_dir_fd, spec->audit.fd >= 0 ? spec->audit.path : NULL, &st, keep,
			 spec->audit.redact, spec->audit.n_redact, err) < 0)
		return -1;
	return cordon_audit_create(a, spec, err);
}

/*
 * A file --audit made has no name until the sandbox begins, when its
 * first event is in it: a command refused before, even by a failure to
 * record or write the log, leaves nothing. A file of the name made
 * meanwhile (another command's log) is the log then, checked as the
 * flag's was, and begun again.
 */
static int audit_name(struct cordon_audit *a, const struct cordon_spec *spec, int state_dir_fd,
		      struct cordon_error *err)
{
	int r = cordon_append_name(&a->fd, spec->audit.unnamed_dir, spec->audit.unnamed_name,
				   spec->audit.path, "--audit", err);

	if (r < 0) {
		err->code = CORDON_E_AUDIT;
		return -1;
	}
	/* The flag's fd, held for the sandbox's life, is this file too (not "(deleted)"). */
	(void)dup3(a->fd, spec->audit.fd, O_CLOEXEC);
	if (r == 0)
		return 0;
	if (check_not_shared(spec, a->fd, err) < 0)
		return -1;
	return audit_begin_log(a, spec, state_dir_fd, NULL, err);
}

struct cordon_audit *cordon_audit_start(const struct cordon_spec *spec, int state_dir_fd,
					struct cordon_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *keep = NULL;
	struct cordon_audit *a;

	/* An OCI container's log is asked for; a native sandbox has one unless turned off. */
	if (spec->audit.off || (spec->oci && !spec->audit.on))
		return NULL;
	if (spec->audit.fd >= 0) {
		if (check_not_shared(spec, spec->audit.fd, err) < 0)
			return NULL;
		fd = fcntl(spec->audit.fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			cordon_error_set(err, CORDON_E_AUDIT, errno, "--audit %s", spec->audit.path);
			return NULL;
		}
	} else {
		fd = openat(state_dir_fd, CORDON_AUDIT_FILE,
			    O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			cordon_error_set(err, CORDON_E_AUDIT, errno,
					 "audit: making %s in the state directory",
					 CORDON_AUDIT_FILE);
			return NULL;
		}
		keep = spec->audit.dir ? cordon_xstrdup(spec->audit.dir) : default_keep_dir();
	}
	a = audit_new(spec->id, TAKE_FD(fd), 0, spec->audit.max_bytes);
	if (audit_rules_compile(a, spec->audit.redact, spec->audit.n_redact, err) < 0 ||
	    drops_open(a, state_dir_fd, err) < 0 ||
	    audit_begin_log(a, spec, state_dir_fd, keep, err) < 0 ||
	    (spec->audit.fd >= 0 && spec->audit.unnamed_dir >= 0 &&
	     audit_name(a, spec, state_dir_fd, err) < 0)) {
		cordon_audit_close(a);
		return NULL;
	}
	return a;
}

static const char *record_str(yajl_val tree, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_string);

	return v ? YAJL_GET_STRING(v) : NULL;
}

static bool record_u64(yajl_val tree, const char *key, uint64_t *out)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_number);

	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
		return false;
	*out = (uint64_t)YAJL_GET_INTEGER(v);
	return true;
}

/* The state directory's record, parsed; NULL with err clear when there is none. */
static yajl_val record_read(int state_dir_fd, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	yajl_val tree = NULL;
	size_t len;
	int r = cordon_input_read(state_dir_fd, CORDON_AUDIT_RECORD, 64 * 1024, CORDON_E_AUDIT,
				  "audit record", &text, &len, err);

	if (r < 0) {
		if (err->errnum == ENOENT)
			memset(err, 0, sizeof(*err));
		return NULL;
	}
	if (cordon_json_parse(text, len, CORDON_E_AUDIT, &tree, err) < 0)
		return NULL;
	if (!YAJL_IS_OBJECT(tree)) {
		yajl_tree_free(tree);
		cordon_error_set(err, CORDON_E_AUDIT, 0, "audit record: not an object");
		return NULL;
	}
	return tree;
}

struct cordon_audit *cordon_audit_open_state(int state_dir_fd, const char *id,
					     struct cordon_error *err)
{
	_cleanup_(tree_freep) yajl_val tree = record_read(state_dir_fd, err);
	_cleanup_close_ int fd = -1;
	_cleanup_strv_ char **redact = NULL;
	size_t n_redact = 0;
	uint64_t dev, ino, base, max;
	const char *path;
	struct cordon_audit *a;
	struct stat st;

	if (!tree)
		return NULL;
	path = record_str(tree, "path");
	if (!record_u64(tree, "dev", &dev) || !record_u64(tree, "ino", &ino) ||
	    !record_u64(tree, "base", &base) || !record_u64(tree, "max", &max)) {
		cordon_error_set(err, CORDON_E_AUDIT, 0, "audit record: a field is missing");
		return NULL;
	}
	{
		const char *key[] = { "redact", NULL };
		yajl_val v = yajl_tree_get(tree, key, yajl_t_array);

		for (size_t i = 0; v && i < YAJL_GET_ARRAY(v)->len; i++) {
			yajl_val s = YAJL_GET_ARRAY(v)->values[i];

			if (!YAJL_IS_STRING(s) || n_redact >= CORDON_AUDIT_REDACT_MAX) {
				cordon_error_set(err, CORDON_E_AUDIT, 0,
						 "audit record: a bad redaction rule");
				return NULL;
			}
			cordon_strv_push(&redact, &n_redact, YAJL_GET_STRING(s));
		}
	}
	/* Never made here: a log that is gone is not the one the sandbox began with. */
	if (path)
		fd = append_open(path, CORDON_APPEND_EXISTING, NULL, NULL, err);
	else
		fd = openat(state_dir_fd, CORDON_AUDIT_FILE,
			    O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && path && err->errnum == ENOENT) {
		cordon_error_set(err, CORDON_E_AUDIT, 0,
				 "audit: %s is no longer the file the sandbox began with (gone)",
				 path);
		return NULL;
	}
	if (fd < 0) {
		if (!path)
			cordon_error_set(err, CORDON_E_AUDIT, errno, "audit: opening %s",
					 CORDON_AUDIT_FILE);
		return NULL;
	}
	/* The very file the sandbox began with: one moved in its place is not written. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino) {
		cordon_error_set(err, CORDON_E_AUDIT, 0,
				 "audit: %s is no longer the file the sandbox began with",
				 path ? path : CORDON_AUDIT_FILE);
		return NULL;
	}
	/* A name added since (a hard link) may be where the workload writes (check_not_shared). */
	if (st.st_nlink > 1) {
		cordon_error_set(err, CORDON_E_AUDIT, 0,
				 "audit: %s has %ju names since the sandbox began (a hard link "
				 "could be where the workload writes: refused)",
				 path ? path : CORDON_AUDIT_FILE, (uintmax_t)st.st_nlink);
		return NULL;
	}
	a = audit_new(id, -1, base, max);
	if (audit_rules_compile(a, redact, n_redact, err) < 0 ||
	    drops_open(a, state_dir_fd, err) < 0) {
		cordon_audit_close(a);
		return NULL;
	}
	/* Not the supervisor: what this command drops is told by the cleanup, whoever writes it. */
	a->drops_shared = true;
	a->fd = TAKE_FD(fd);
	return a;
}

void cordon_audit_close(struct cordon_audit *a)
{
	if (!a)
		return;
	cordon_closep(&a->fd);
	cordon_closep(&a->drops_fd);
	free(a->id);
	for (size_t i = 0; i < a->n_labels; i++) {
		free(a->label_keys[i]);
		free(a->label_values[i]);
	}
	free(a->label_keys);
	free(a->label_values);
	audit_rules_free(a);
	free(a);
}

void cordon_audit_set_labels(struct cordon_audit *a, const char *const *keys,
			     const char *const *values, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_labels; i++) {
		free(a->label_keys[i]);
		free(a->label_values[i]);
	}
	free(a->label_keys);
	free(a->label_values);
	a->label_keys = cordon_xcalloc(n ? n : 1, sizeof(char *));
	a->label_values = cordon_xcalloc(n ? n : 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		a->label_keys[i] = cordon_xstrdup(keys[i]);
		a->label_values[i] = cordon_xstrdup(values[i]);
	}
	a->n_labels = n;
}

void cordon_audit_dropped(const struct cordon_audit *a, uint64_t *capped, uint64_t *dns_rate)
{
	*capped = a ? a->dropped_cap : 0;
	*dns_rate = a ? a->dropped_dns : 0;
}

/* --- keeping the state directory's log ------------------------------------- */

int cordon_audit_keep(int state_dir_fd, const char *id, struct cordon_error *err)
{
	_cleanup_(tree_freep) yajl_val tree = record_read(state_dir_fd, err);
	_cleanup_free_ char *text = NULL, *name = NULL;
	_cleanup_close_ int dir = -1;
	const char *keep;
	uint64_t max = 0, created = 0;
	size_t len;
	int r;

	if (!tree)
		return err->code ? -1 : 0;
	keep = record_str(tree, "keep_dir");
	/* --audit FILE is the caller's already; a log nobody can keep stays with the state. */
	if (record_str(tree, "path") || !keep)
		return 0;
	record_u64(tree, "max", &max);
	record_u64(tree, "created_ms", &created);
	r = cordon_input_read(state_dir_fd, CORDON_AUDIT_FILE, max + AUDIT_LINE_MAX * 16,
			      CORDON_E_AUDIT, "audit log", &text, &len, err);
	if (r < 0)
		return err->errnum == ENOENT ? (memset(err, 0, sizeof(*err)), 0) : -1;
	dir = cordon_path_mkdirs(keep, 0700, "--audit-dir", CORDON_E_AUDIT, err);
	if (dir < 0)
		return -1;
	name = cordon_xasprintf("%s-%" PRIu64 ".jsonl", id, created);
	/* No fsync: it would cost every run a disk flush; the copy is whole or absent (rename). */
	r = cordon_file_replace_at(dir, name, KEEP_TEMP_PREFIX, text, len, 0600, 0);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, -r, "--audit-dir %s: writing %s", keep,
					name);
	return 0;
}

/* --- lines ------------------------------------------------------------------ */

void audit_key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

char *audit_clean(const char *s, bool *was_cut)
{
	_cleanup_free_ char *cut = NULL;
	size_t len = strlen(s);

	*was_cut = len > AUDIT_STRING_MAX;
	if (*was_cut) {
		cut = cordon_xmalloc(AUDIT_STRING_MAX + 1);
		memcpy(cut, s, AUDIT_STRING_MAX);
		cut[AUDIT_STRING_MAX] = '\0';
		s = cut;
	}
	return cordon_utf8_sanitize(s);
}

size_t audit_json_len(const char *s)
{
	size_t n = 2;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += *p == '"' || *p == '\\' || *p == '/' ? 2 : *p < 0x20 || *p == 0x7f ? 6 : 1;
	return n;
}

void audit_str(yajl_gen g, const char *s)
{
	bool cut;
	_cleanup_free_ char *clean = audit_clean(s, &cut);

	yajl_gen_string(g, (const unsigned char *)clean, strlen(clean));
}

void audit_kstr(yajl_gen g, const char *k, const char *s)
{
	audit_key(g, k);
	if (s)
		audit_str(g, s);
	else
		yajl_gen_null(g);
}

void audit_kint(yajl_gen g, const char *k, long long v)
{
	audit_key(g, k);
	yajl_gen_integer(g, v);
}

void audit_kbool(yajl_gen g, const char *k, bool v)
{
	audit_key(g, k);
	yajl_gen_bool(g, v);
}

/* RFC 3339, UTC, milliseconds. */
static void time_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

yajl_gen audit_begin(const struct cordon_audit *a, const char *event)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	char when[48];

	time_now(when, sizeof(when));
	yajl_gen_map_open(g);
	audit_kstr(g, "time", when);
	audit_kstr(g, "event", event);
	audit_kstr(g, "id", a->id);
	audit_key(g, "labels");
	yajl_gen_map_open(g);
	/* A key is the caller's bytes as much as a value: made well-formed UTF-8 too. */
	for (size_t i = 0; i < a->n_labels; i++) {
		audit_str(g, a->label_keys[i]);
		audit_str(g, a->label_values[i]);
	}
	yajl_gen_map_close(g);
	return g;
}

int audit_count_drop(struct cordon_audit *a, struct cordon_error *err)
{
	ssize_t w;

	if (!a->drops_shared || a->drops_fd < 0) {
		a->dropped_cap++;
		return 0;
	}
	/* One byte a line, O_APPEND: concurrent commands count without a lock. */
	do
		w = write(a->drops_fd, "c", 1);
	while (w < 0 && errno == EINTR);
	if (w != 1)
		return cordon_error_set(err, CORDON_E_AUDIT, w < 0 ? errno : EIO,
					"audit: counting a dropped line in %s", CORDON_AUDIT_DROPS);
	a->dropped_cap++;
	return 0;
}

uint64_t audit_drops(const struct cordon_audit *a)
{
	struct stat st;
	uint64_t n = a->drops_shared ? 0 : a->dropped_cap;

	/* A later command's own drops are in the file already. */
	if (a->drops_fd >= 0 && fstat(a->drops_fd, &st) == 0 && st.st_size > 0)
		n += (uint64_t)st.st_size;
	return n;
}

int audit_end_try(struct cordon_audit *a, yajl_gen g, enum audit_class class,
		  struct cordon_error *err)
{
	/* Freed on every way out, whoever holds it: ours from here. */
	_cleanup_(gen_freep) yajl_gen owned __attribute__((unused)) = g;
	const unsigned char *buf;
	_cleanup_free_ char *line = NULL;
	uint64_t share, used, last, minimal;
	size_t len;
	struct stat st;
	ssize_t w;

	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || len + 1 > AUDIT_LINE_MAX)
		return 1;
	/* At the cap's end the cleanup's reserve; before it the exec minimal records'. */
	last = a->max / 8 < AUDIT_RESERVE ? a->max / 8 : AUDIT_RESERVE;
	minimal = a->max / 8 < AUDIT_RESERVE_MINIMAL ? a->max / 8 : AUDIT_RESERVE_MINIMAL;
	share = class == AUDIT_WORKLOAD ? a->max / 4 * 3 :
		class == AUDIT_CALLER	? a->max - last - minimal :
		class == AUDIT_MINIMAL	? a->max - last :
					  a->max;
	if (fstat(a->fd, &st) < 0)
		return cordon_error_set(err, CORDON_E_AUDIT, errno, "audit: writing");
	used = (uint64_t)st.st_size > a->base ? (uint64_t)st.st_size - a->base : 0;
	if (used + len + 1 > share)
		return 1;
	line = cordon_xmalloc(len + 1);
	memcpy(line, buf, len);
	line[len] = '\n';
	/* One write, O_APPEND: whole lines, whoever else appends. */
	do
		w = write(a->fd, line, len + 1);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)(len + 1))
		return cordon_error_set(err, CORDON_E_AUDIT, w < 0 ? errno : EIO, "audit: writing");
	return 0;
}

int audit_end(struct cordon_audit *a, yajl_gen g, enum audit_class class,
	      struct cordon_error *err)
{
	int r = audit_end_try(a, g, class, err);

	return r == 1 ? audit_count_drop(a, err) : r;
}
