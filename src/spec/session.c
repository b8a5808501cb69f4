// SPDX-License-Identifier: Apache-2.0
/*
 * A session's process confinement, kept in its state directory
 * (process.json) at create and read by every `cordon exec` into it: the
 * ids, environment, working directory, capabilities, rlimits and the
 * compiled seccomp program of the session's own spec. An exec gets what
 * the session was created with, not what files or the caller's
 * environment say now: the filter is kept as the instructions that were
 * compiled, never compiled again from a profile file that may have changed.
 */
#include <string.h>
#include <linux/filter.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/spec.h"

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(yajl_gen g, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static const char *seccomp_name(enum cordon_seccomp_mode mode)
{
	return mode == CORDON_SECCOMP_PROFILE	 ? "profile" :
	       mode == CORDON_SECCOMP_UNCONFINED ? "unconfined" :
						   "default";
}

static void place(yajl_gen g, const char *kind, const char *path, const struct cordon_path_id *id)
{
	if (!id->valid)
		return;
	yajl_gen_map_open(g);
	key(g, "kind");
	str(g, kind);
	key(g, "path");
	str(g, path);
	key(g, "dev");
	yajl_gen_integer(g, (long long)id->dev);
	key(g, "ino");
	yajl_gen_integer(g, (long long)id->ino);
	yajl_gen_map_close(g);
}

char *cordon_spec_session_json(const struct cordon_spec *spec)
{
	const struct cordon_security *sec = &spec->security;
	yajl_gen g = yajl_gen_alloc(NULL);

	yajl_gen_map_open(g);
	key(g, "uid");
	yajl_gen_integer(g, spec->uid);
	key(g, "gid");
	yajl_gen_integer(g, spec->gid);
	key(g, "cwd");
	str(g, spec->cwd ? spec->cwd : "/");
	key(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; spec->env && spec->env[i]; i++)
		str(g, spec->env[i]);
	yajl_gen_array_close(g);
	key(g, "caps");
	yajl_gen_integer(g, (long long)sec->caps);
	key(g, "rlimits");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < sec->rlimits.n; i++) {
		const struct cordon_rlimit *r = &sec->rlimits.entry[i];

		yajl_gen_array_open(g);
		yajl_gen_integer(g, r->resource);
		/* RLIM_INFINITY does not fit a JSON integer: -1. */
		yajl_gen_integer(g, r->limit.rlim_cur == RLIM_INFINITY ? -1 :
									(long long)r->limit.rlim_cur);
		yajl_gen_integer(g, r->limit.rlim_max == RLIM_INFINITY ? -1 :
									(long long)r->limit.rlim_max);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "seccomp");
	str(g, seccomp_name(sec->seccomp));
	key(g, "mode_guard");
	yajl_gen_bool(g, sec->mode_guard);
	/* The program itself, hex: what the workload got is what every exec gets. */
	key(g, "filter");
	{
		size_t n = sec->n_filters ? sec->filters[0].len * sizeof(struct sock_filter) : 0;
		const unsigned char *p = n ? sec->filters[0].insns : NULL;
		char *hex = cordon_xmalloc(2 * n + 1);

		for (size_t i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", p[i]);
		hex[2 * n] = '\0';
		str(g, hex);
		free(hex);
	}
	/* The host places the workload writes (cordon exec's output-path check). */
	key(g, "places");
	yajl_gen_array_open(g);
	if (spec->workspace)
		place(g, "workspace", spec->workspace, &spec->workspace_id);
	for (size_t i = 0; i < spec->n_binds; i++)
		if (spec->binds[i].writable)
			place(g, "bind", spec->binds[i].source, &spec->binds[i].source_id);
	if (!spec->overlay && spec->rootfs)
		place(g, "rootfs", spec->rootfs, &spec->rootfs_id);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return cordon_json_gen_take(g);
}

static int bad(const char *id, const char *what, struct cordon_error *err)
{
	return cordon_error_set(err, CORDON_E_STATE, 0, "session %s: process.json: %s", id, what);
}

static int get_u32(yajl_val tree, const char *k, uint32_t *out)
{
	const char *path[] = { k, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_number);

	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 ||
	    YAJL_GET_INTEGER(v) > (long long)UINT32_MAX)
		return -1;
	*out = (uint32_t)YAJL_GET_INTEGER(v);
	return 0;
}

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int load_filter(struct cordon_security *sec, const char *hex)
{
	size_t n = strlen(hex) / 2;
	unsigned char *insns;

	if (strlen(hex) % 2 || n % sizeof(struct sock_filter) ||
	    n / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -1;
	if (n == 0)
		return 0;
	insns = cordon_xmalloc(n);
	for (size_t i = 0; i < n; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(insns);
			return -1;
		}
		insns[i] = (unsigned char)(hi << 4 | lo);
	}
	cordon_seccomp_adopt(sec, insns, n / sizeof(struct sock_filter));
	return 0;
}

static void set_place(char **path, struct cordon_path_id *id, const char *p, long long dev,
		      long long ino)
{
	free(*path);
	*path = cordon_xstrdup(p);
	memset(id, 0, sizeof(*id));
	id->dev = (dev_t)dev;
	id->ino = (ino_t)ino;
	id->valid = true;
}

/*
 * The places back into the spec's workspace, binds and rootfs, with the
 * ids they had at create (an exec mounts nothing: they only name what
 * the workload writes). A file without them (an older cordon's) has
 * none, and v NULL is fine.
 */
static int load_places(struct cordon_spec *spec, yajl_val v)
{
	const char *kind_path[] = { "kind", NULL }, *path_path[] = { "path", NULL };
	const char *dev_path[] = { "dev", NULL }, *ino_path[] = { "ino", NULL };

	if (!v)
		return 0;
	if (!YAJL_IS_ARRAY(v) || YAJL_GET_ARRAY(v)->len > 4096)
		return -1;
	for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(v)->values[i];
		yajl_val k = yajl_tree_get(e, kind_path, yajl_t_string);
		yajl_val p = yajl_tree_get(e, path_path, yajl_t_string);
		yajl_val d = yajl_tree_get(e, dev_path, yajl_t_number);
		yajl_val n = yajl_tree_get(e, ino_path, yajl_t_number);
		const char *kind = k ? YAJL_GET_STRING(k) : "";
		struct cordon_bind *b;

		if (!p || !d || !n || !YAJL_IS_INTEGER(d) || !YAJL_IS_INTEGER(n) ||
		    YAJL_GET_STRING(p)[0] != '/')
			return -1;
		if (strcmp(kind, "workspace") == 0) {
			set_place(&spec->workspace, &spec->workspace_id, YAJL_GET_STRING(p),
				  YAJL_GET_INTEGER(d), YAJL_GET_INTEGER(n));
		} else if (strcmp(kind, "rootfs") == 0) {
			spec->overlay = false;
			set_place(&spec->rootfs, &spec->rootfs_id, YAJL_GET_STRING(p),
				  YAJL_GET_INTEGER(d), YAJL_GET_INTEGER(n));
		} else if (strcmp(kind, "bind") == 0) {
			spec->binds = cordon_xrealloc(spec->binds,
						      (spec->n_binds + 1) * sizeof(*spec->binds));
			b = &spec->binds[spec->n_binds++];
			memset(b, 0, sizeof(*b));
			b->writable = true;
			b->destination = cordon_xstrdup("/");
			set_place(&b->source, &b->source_id, YAJL_GET_STRING(p),
				  YAJL_GET_INTEGER(d), YAJL_GET_INTEGER(n));
		} else {
			return -1;
		}
	}
	return 0;
}

static int load_rlimits(struct cordon_rlimits *r, yajl_val v)
{
	r->n = 0;
	if (!v || !YAJL_IS_ARRAY(v) || YAJL_GET_ARRAY(v)->len > CORDON_RLIMIT_MAX)
		return -1;
	for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(v)->values[i];
		long long x[3];

		if (!YAJL_IS_ARRAY(e) || YAJL_GET_ARRAY(e)->len != 3)
			return -1;
		for (size_t k = 0; k < 3; k++) {
			yajl_val n = YAJL_GET_ARRAY(e)->values[k];

			if (!YAJL_IS_INTEGER(n) || YAJL_GET_INTEGER(n) < -1)
				return -1;
			x[k] = YAJL_GET_INTEGER(n);
		}
		if (x[0] < 0 || x[0] >= RLIM_NLIMITS)
			return -1;
		r->entry[r->n].resource = (int)x[0];
		r->entry[r->n].limit.rlim_cur = x[1] < 0 ? RLIM_INFINITY : (rlim_t)x[1];
		r->entry[r->n].limit.rlim_max = x[2] < 0 ? RLIM_INFINITY : (rlim_t)x[2];
		r->n++;
	}
	return 0;
}

int cordon_spec_from_session(struct cordon_spec *spec, const char *id, const char *text,
			     size_t len, struct cordon_error *err)
{
	const char *cwd_path[] = { "cwd", NULL }, *env_path[] = { "env", NULL };
	const char *caps_path[] = { "caps", NULL }, *rl_path[] = { "rlimits", NULL };
	const char *sc_path[] = { "seccomp", NULL }, *filter_path[] = { "filter", NULL };
	const char *guard_path[] = { "mode_guard", NULL }, *places_path[] = { "places", NULL };
	struct cordon_security *sec = &spec->security;
	yajl_val tree = NULL, v;
	uint32_t uid, gid;
	const char *mode;
	size_t n = 0;
	int r = -1;

	if (cordon_json_parse(text, len, CORDON_E_STATE, &tree, err) < 0)
		return cordon_error_wrap(err, "session %s: process.json", id);
	if (!YAJL_IS_OBJECT(tree) || get_u32(tree, "uid", &uid) < 0 ||
	    get_u32(tree, "gid", &gid) < 0) {
		bad(id, "uid, gid", err);
		goto out;
	}
	spec->uid = uid;
	spec->gid = gid;
	v = yajl_tree_get(tree, cwd_path, yajl_t_string);
	free(spec->cwd);
	mode = v ? YAJL_GET_STRING(v) : NULL;
	spec->cwd = mode && mode[0] == '/' ? cordon_path_normalize(mode) : NULL;
	if (!spec->cwd) {
		bad(id, "cwd", err);
		goto out;
	}
	v = yajl_tree_get(tree, env_path, yajl_t_array);
	cordon_strv_free(TAKE_PTR(spec->env));
	spec->n_env = 0;
	for (size_t i = 0; v && i < YAJL_GET_ARRAY(v)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(v)->values[i];
		const char *kv = YAJL_IS_STRING(e) ? YAJL_GET_STRING(e) : NULL;

		if (!kv || !strchr(kv, '=')) {
			bad(id, "env", err);
			goto out;
		}
		cordon_strv_push(&spec->env, &n, kv);
		spec->n_env++;
	}
	v = yajl_tree_get(tree, caps_path, yajl_t_number);
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0) {
		bad(id, "caps", err);
		goto out;
	}
	sec->caps = (cordon_capset)YAJL_GET_INTEGER(v);
	/* What create could grant, and no more, whoever wrote the file. */
	if (sec->caps & ~cordon_cap_safe_set()) {
		bad(id, "caps beyond the safe set", err);
		goto out;
	}
	if (load_rlimits(&sec->rlimits, yajl_tree_get(tree, rl_path, yajl_t_array)) < 0) {
		bad(id, "rlimits", err);
		goto out;
	}
	v = yajl_tree_get(tree, sc_path, yajl_t_string);
	mode = v ? YAJL_GET_STRING(v) : NULL;
	if (!mode)
		mode = "";
	if (strcmp(mode, "default") == 0)
		sec->seccomp = CORDON_SECCOMP_DEFAULT;
	else if (strcmp(mode, "profile") == 0)
		sec->seccomp = CORDON_SECCOMP_PROFILE;
	else if (strcmp(mode, "unconfined") == 0)
		sec->seccomp = CORDON_SECCOMP_UNCONFINED;
	else {
		bad(id, "seccomp", err);
		goto out;
	}
	sec->mode_guard = yajl_tree_get(tree, guard_path, yajl_t_true) != NULL;
	v = yajl_tree_get(tree, filter_path, yajl_t_string);
	mode = v ? YAJL_GET_STRING(v) : NULL;
	if (!mode || load_filter(sec, mode) < 0 ||
	    (sec->seccomp != CORDON_SECCOMP_UNCONFINED && sec->n_filters != 1)) {
		/* A filtered session's exec never runs unfiltered: no program, no exec. */
		bad(id, "seccomp filter", err);
		goto out;
	}
	if (load_places(spec, yajl_tree_get(tree, places_path, yajl_t_array)) < 0) {
		bad(id, "places", err);
		goto out;
	}
	spec->session = true;
	r = 0;
out:
	yajl_tree_free(tree);
	return r;
}
