// SPDX-License-Identifier: Apache-2.0
/*
 * Flag values → struct cordon_spec, and the lexical checks shared with the
 * OCI config parser. Nothing here touches the filesystem; see finalize.c.
 */
#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <unistd.h>

#include "cordon/spec.h"

void cordon_spec_init(struct cordon_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->tmpfs_size_mb = CORDON_TMPFS_DEFAULT_MB;
	spec->kill_after_ms = CORDON_KILL_AFTER_DEFAULT_MS;
	spec->userns = CORDON_USERNS_AUTO;
	cordon_rlimits_default(&spec->security.rlimits);
	spec->security.seccomp = CORDON_SECCOMP_DEFAULT;
	spec->result_dir_fd = -1;
	spec->audit.fd = -1;
	spec->audit.unnamed_dir = -1;
	cordon_user_limits_init(&spec->user_limits);
}

void cordon_spec_free(struct cordon_spec *spec)
{
	free(spec->id);
	free(spec->rootfs);
	cordon_strv_free(spec->argv);
	cordon_strv_free(spec->env);
	free(spec->hostname);
	free(spec->cwd);
	free(spec->workspace);
	for (size_t i = 0; i < spec->n_binds; i++) {
		free(spec->binds[i].source);
		free(spec->binds[i].destination);
	}
	free(spec->binds);
	free(spec->user);
	free(spec->home);
	free(spec->result_json);
	free(spec->result_name);
	cordon_closep(&spec->result_dir_fd);
	cordon_path_links_close(&spec->result_links);
	free(spec->audit.path);
	cordon_closep(&spec->audit.fd);
	cordon_closep(&spec->audit.unnamed_dir);
	free(spec->audit.unnamed_name);
	free(spec->audit.dir);
	cordon_strv_free(spec->audit.redact);
	free(spec->seccomp_profile);
	free(spec->cgroup_parent);
	cordon_seccomp_profile_free(&spec->security);
	cordon_strv_free(spec->net.allow);
	cordon_strv_free(spec->net.allow_files);
	cordon_strv_free(spec->net.upstream_text);
	free(spec->net.pool);
	cordon_allowlist_free(spec->net.allowlist);
	free(spec->net.helper_path);
	free(spec->net.pasta_path);
	cordon_strv_free(spec->labels);
	cordon_oci_free(spec->oci);
	memset(spec, 0, sizeof(*spec));
	spec->result_dir_fd = -1; /* a second free closes nothing */
}

bool cordon_id_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n == 0 || n > CORDON_ID_MAX || !isalnum((unsigned char)id[0]))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)id[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return false;
	}
	return true;
}

/*
 * Labels are written into state.json and printed by `cordon list`: a key
 * of a fixed alphabet, a value of printable bytes, both bounded, so that
 * no label can make a state file or a listing large or ambiguous.
 */
bool cordon_label_key_valid(const char *key)
{
	size_t n = key ? strlen(key) : 0;

	/* Letters or digits at both ends, as Kubernetes asks of its label names. */
	if (n == 0 || n > CORDON_LABEL_KEY_MAX || !isalnum((unsigned char)key[0]) ||
	    !isalnum((unsigned char)key[n - 1]))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)key[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-' && c != '/')
			return false;
	}
	return true;
}

bool cordon_label_value_valid(const char *value)
{
	size_t n = strlen(value);

	if (n > CORDON_LABEL_VALUE_MAX)
		return false;
	/*
	 * Well-formed UTF-8 (state.json must parse back), never a control
	 * character (a newline, an escape: list prints it).
	 */
	for (size_t i = 0; i < n;) {
		const unsigned char *p = (const unsigned char *)value + i;
		size_t len = *p < 0x80 ? 1 : cordon_utf8_sequence(p);

		if (len == 0 || *p < 0x20 || *p == 0x7f)
			return false;
		i += len;
	}
	return true;
}

static int label_split(const char *flag, const char *text, bool need_value, char **key,
		       char **value, struct cordon_error *err)
{
	_cleanup_free_ char *k = cordon_xstrdup(text);
	char *eq = strchr(k, '=');

	if (eq)
		*eq = '\0';
	/* Echoed only when it cannot break the one line of the message. */
	if (!cordon_label_key_valid(k))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s '%s': a key is 1 to %d of [A-Za-z0-9._/-], a letter or "
					"digit first and last",
					flag, cordon_label_value_valid(text) ? text : "(not printable)",
					CORDON_LABEL_KEY_MAX);
	if (!eq && need_value)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s '%s': expected KEY=VALUE", flag,
					text);
	if (eq && !cordon_label_value_valid(eq + 1))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s %s: a value is at most %d bytes of UTF-8, without "
					"control characters",
					flag, k, CORDON_LABEL_VALUE_MAX);
	*value = eq ? cordon_xstrdup(eq + 1) : NULL;
	*key = TAKE_PTR(k);
	return 0;
}

int cordon_spec_add_label(struct cordon_spec *spec, const char *flag, const char *kv,
			  struct cordon_error *err)
{
	_cleanup_free_ char *key = NULL, *value = NULL;
	size_t n = 2 * spec->n_labels;

	if (label_split(flag, kv, true, &key, &value, err) < 0)
		return -1;
	for (size_t i = 0; i < spec->n_labels; i++)
		if (strcmp(spec->labels[2 * i], key) == 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "%s %s: given twice", flag,
						key);
	if (spec->n_labels >= CORDON_LABELS_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: at most %d labels", flag,
					CORDON_LABELS_MAX);
	cordon_strv_push(&spec->labels, &n, key);
	cordon_strv_push(&spec->labels, &n, value);
	spec->n_labels++;
	return 0;
}

int cordon_label_filter_parse(const char *text, char **key, char **value,
			      struct cordon_error *err)
{
	return label_split("--label", text, false, key, value, err);
}

bool cordon_hostname_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0, label = 0;

	/* RFC 1123 labels, and the kernel's 64-byte UTS limit. */
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.') {
			if (label == 0 || name[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!isalnum(c) && c != '-')
			return false;
		if (c == '-' && label == 0)
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && name[n - 1] != '-';
}

bool cordon_cwd_in_proc(const char *norm)
{
	return strncmp(norm, "/proc", 5) == 0 && (norm[5] == '\0' || norm[5] == '/');
}

bool cordon_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

char *cordon_path_normalize(const char *path)
{
	char *out, *o;
	const char *p = path;

	if (!path || path[0] != '/')
		return NULL;
	out = o = cordon_xmalloc(strlen(path) + 2);
	while (*p) {
		const char *start, *end;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		end = strchrnul(p, '/');
		len = (size_t)(end - start);
		p = end;
		if (len == 1 && start[0] == '.')
			continue;
		if (len == 2 && start[0] == '.' && start[1] == '.') {
			free(out);
			return NULL;
		}
		*o++ = '/';
		memcpy(o, start, len);
		o += len;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

int cordon_spec_parse_user(const char *value, char **user, struct cordon_error *err)
{
	const char *colon = strchr(value, ':');
	size_t ulen = colon ? (size_t)(colon - value) : strlen(value);

	if (ulen == 0 || (colon && !colon[1]) || (colon && strchr(colon + 1, ':')))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--user: expected USER[:GROUP] (names or numbers), got '%s'",
					value);
	for (const char *p = value; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != ':')
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--user: invalid character in '%s'", value);
	}
	free(*user);
	*user = cordon_xstrdup(value);
	return 0;
}

int cordon_spec_parse_bind(const char *value, struct cordon_bind *bind,
			   struct cordon_error *err)
{
	_cleanup_free_ char *copy = cordon_xstrdup(value);
	char *src = copy, *dst, *mode;
	bool writable = false;

	dst = strchr(src, ':');
	if (!dst || dst == src)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--bind: expected SRC:DST[:ro|:rw], got '%s'", value);
	*dst++ = '\0';
	mode = strchr(dst, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "rw") == 0)
			writable = true;
		else if (strcmp(mode, "ro") != 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--bind '%s': mode must be ro or rw, got '%s'",
						value, mode);
	}
	if (dst[0] != '/')
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--bind '%s': destination must be an absolute path", value);
	bind->destination = cordon_path_normalize(dst);
	if (!bind->destination)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--bind '%s': destination may not contain '..'", value);
	if (strcmp(bind->destination, "/") == 0 || strcmp(bind->destination, "/proc") == 0 ||
	    strncmp(bind->destination, "/proc/", 6) == 0) {
		free(TAKE_PTR(bind->destination));
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--bind '%s': cannot bind over / or /proc", value);
	}
	bind->source = cordon_xstrdup(src);
	bind->writable = writable;
	return 0;
}

static bool env_name_valid(const char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '=' || name[i] == '\0')
			return false;
	return true;
}

/* Set KEY=VALUE, replacing an earlier entry with the same key. */
static void env_set(struct cordon_spec *spec, const char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < spec->n_env; i++) {
		if (strncmp(spec->env[i], kv, klen) == 0 && spec->env[i][klen] == '=') {
			free(spec->env[i]);
			spec->env[i] = cordon_xstrdup(kv);
			return;
		}
	}
	cordon_strv_push(&spec->env, &spec->n_env, kv);
}

int cordon_spec_add_env(struct cordon_spec *spec, const char *kv, struct cordon_error *err)
{
	const char *eq = strchr(kv, '=');

	if (!eq || !env_name_valid(kv, (size_t)(eq - kv)))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--env: expected NAME=VALUE, got '%s'", kv);
	env_set(spec, kv);
	return 0;
}

int cordon_spec_pass_env(struct cordon_spec *spec, const char *name, struct cordon_error *err)
{
	const char *value;
	_cleanup_free_ char *kv = NULL;

	if (!env_name_valid(name, strlen(name)))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--env-pass: invalid variable name '%s'", name);
	value = getenv(name);
	if (!value)
		return 0; /* like `docker run -e NAME`: unset on the host, unset inside */
	kv = cordon_xasprintf("%s=%s", name, value);
	env_set(spec, kv);
	return 0;
}

/*
 * The base environment goes in front of the user's entries, and only where
 * the user did not set the same name: --env wins over defaults.
 */
void cordon_spec_env_default(struct cordon_spec *spec, const char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < spec->n_env; i++)
		if (strncmp(spec->env[i], kv, klen) == 0 && spec->env[i][klen] == '=')
			return;
	cordon_strv_push(&spec->env, &spec->n_env, kv);
}

char *cordon_id_generate(void)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[6];
	char *id = cordon_xmalloc(2 * sizeof(raw) + 1);

	if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
		uint64_t t = cordon_now_mono_us() ^ ((uint64_t)getpid() << 32);

		memcpy(raw, &t, sizeof(raw));
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		id[2 * i] = hex[raw[i] >> 4];
		id[2 * i + 1] = hex[raw[i] & 15];
	}
	id[2 * sizeof(raw)] = '\0';
	return id;
}

static bool same_id(const struct cordon_path_id *id, dev_t dev, ino_t ino)
{
	return id->valid && id->dev == dev && id->ino == ino;
}

/*
 * Is (dev, ino) a host directory or file the workload may write below:
 * the workspace, a writable --bind's source (a read-only one is
 * read-only all through: MOUNT_ATTR_RDONLY on the whole tree), the
 * rootfs, an OCI bind mount's source unless "rro"? The rootfs and OCI
 * binds are cloned with their submounts (a bind without rbind too, when
 * a user namespace locks them), and the rootfs's read-only, "ro" and
 * root.readonly are the top mount's alone: a host mount below stays
 * writable (and root.readonly false makes all of it so). --overlay's
 * writes go to a tmpfs, never to the rootfs. With seen_too, a place the
 * workload only sees counts as well (read-only binds and mounts, the
 * rootfs under --overlay): a unix socket below one can still be
 * connected to, and its files read.
 */
static const char *host_place(const struct cordon_spec *spec, dev_t dev, ino_t ino,
			      bool seen_too, const char **what)
{
	*what = NULL;
	if (spec->workspace && same_id(&spec->workspace_id, dev, ino))
		return *what = "the workspace", spec->workspace;
	for (size_t i = 0; i < spec->n_binds; i++)
		if ((seen_too || spec->binds[i].writable) &&
		    same_id(&spec->binds[i].source_id, dev, ino))
			return *what = spec->binds[i].writable ? "the writable --bind" : "the --bind",
			       spec->binds[i].source;
	if ((seen_too || !spec->overlay) && same_id(&spec->rootfs_id, dev, ino))
		return *what = seen_too ? "the rootfs" : "the rootfs (writable without --overlay)",
		       spec->rootfs;
	if (!spec->oci)
		return NULL;
	for (size_t i = 0; i < spec->oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &spec->oci->mounts[i];

		if (m->kind == CORDON_OCI_MOUNT_BIND && (seen_too || !m->recursive_ro) &&
		    same_id(&m->source_id, dev, ino))
			return *what = seen_too ? "the mount" : "the writable mount", m->source;
	}
	return NULL;
}

const char *cordon_spec_writable_place(const struct cordon_spec *spec, dev_t dev, ino_t ino,
				       const char **what)
{
	return host_place(spec, dev, ino, false, what);
}

/*
 * The directory dir_fd (taken) and each one above it up to /: the first
 * that host_place finds (*place, *what), else *place NULL. -1: errno.
 */
static int place_above(const struct cordon_spec *spec, int dir_fd, bool seen_too,
		       const char **place, const char **what)
{
	_cleanup_close_ int dir = dir_fd;

	*place = NULL;
	for (int depth = 0; depth < 4096; depth++) {
		struct stat st, up_st;
		int up;

		if (fstat(dir, &st) < 0)
			return -1;
		*place = host_place(spec, st.st_dev, st.st_ino, seen_too, what);
		if (*place)
			return 0;
		up = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0)
			return -1;
		if (fstat(up, &up_st) == 0 && up_st.st_dev == st.st_dev &&
		    up_st.st_ino == st.st_ino) {
			close(up);
			return 0; /* the root */
		}
		close(dir);
		dir = up;
	}
	/* Deeper than that: not known to be outside every place. */
	errno = ELOOP;
	return -1;
}

int cordon_spec_writable_above(const struct cordon_spec *spec, int dir_fd, const char **place,
			       const char **what)
{
	return place_above(spec, dir_fd, false, place, what);
}

int cordon_spec_seen_above(const struct cordon_spec *spec, int dir_fd, const char **place,
			   const char **what)
{
	return place_above(spec, dir_fd, true, place, what);
}

int cordon_spec_links_check(const struct cordon_spec *spec, const struct cordon_path_links *links,
			    const char *flag, struct cordon_error *err)
{
	for (size_t k = 0; links && k < links->n; k++) {
		const char *place, *what;
		int dir = fcntl(links->fd[k], F_DUPFD_CLOEXEC, 3);

		if (dir < 0 || cordon_spec_writable_above(spec, dir, &place, &what) < 0)
			return cordon_error_set(err, CORDON_E_PATH, errno,
						"%s: a directory its path goes through cannot be "
						"looked at (refused)",
						flag);
		if (place)
			return cordon_error_set(
				err, CORDON_E_PATH, 0,
				"%s: its path goes through a symlink or '..' in %s %s of "
				"%s %s, which the workload may have made or moved: refused "
				"(name the directory itself)",
				flag, what, place, spec->oci ? "container" : "sandbox",
				spec->id ? spec->id : "");
	}
	return 0;
}
