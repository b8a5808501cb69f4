// SPDX-License-Identifier: Apache-2.0
/*
 * Typed access to a config.json tree. The runtime-spec leaves unknown
 * fields to be ignored, and Go's encoder writes an unset optional field as
 * null, so null reads as absent; any other wrong type is an error that
 * names the path of the value.
 */
#include <stdarg.h>
#include <string.h>

#include "oci-internal.h"

yajl_val oci_get(yajl_val obj, const char *key)
{
	if (!obj || !YAJL_IS_OBJECT(obj))
		return NULL;
	/* Not yajl_tree_get: it walks paths, and a key may contain anything. */
	for (size_t i = 0; i < obj->u.object.len; i++) {
		if (strcmp(obj->u.object.keys[i], key) == 0) {
			yajl_val v = obj->u.object.values[i];

			return v && !YAJL_IS_NULL(v) ? v : NULL;
		}
	}
	return NULL;
}

void oci_path(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, OCI_PATH_MAX, fmt, ap);
	va_end(ap);
}

int oci_error(struct cordon_error *err, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_SPEC, 0, "%s", msg);
}

int oci_want_object(yajl_val v, const char *path, struct cordon_error *err)
{
	if (!v || !YAJL_IS_OBJECT(v))
		return oci_error(err, "%s: expected object", path);
	return 0;
}

int oci_want_array(yajl_val v, const char *path, struct cordon_error *err)
{
	if (!v || !YAJL_IS_ARRAY(v))
		return oci_error(err, "%s: expected array", path);
	return 0;
}

int oci_string_ref(yajl_val v, const char *path, const char **out, struct cordon_error *err)
{
	if (!v || !YAJL_IS_STRING(v))
		return oci_error(err, "%s: expected string", path);
	*out = v->u.string;
	return 0;
}

int oci_string(yajl_val v, const char *path, char **out, struct cordon_error *err)
{
	const char *s;

	if (oci_string_ref(v, path, &s, err) < 0)
		return -1;
	free(*out);
	*out = cordon_xstrdup(s);
	return 0;
}

int oci_bool(yajl_val v, const char *path, bool *out, struct cordon_error *err)
{
	if (!v || !(YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)))
		return oci_error(err, "%s: expected boolean", path);
	*out = YAJL_IS_TRUE(v);
	return 0;
}

int oci_int(yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out,
	    struct cordon_error *err)
{
	long long n;

	if (!v || !YAJL_IS_NUMBER(v))
		return oci_error(err, "%s: expected integer", path);
	/* yajl keeps a number that does not fit a long long only as a double. */
	if (!YAJL_IS_INTEGER(v)) {
		const char *text = v->u.number.r;

		if (text && strpbrk(text, ".eE"))
			return oci_error(err, "%s: expected integer, got %s", path, text);
		return oci_error(err, "%s: %s out of range (%" PRId64 "..%" PRId64 ")", path,
				 text ? text : "value", min, max);
	}
	n = YAJL_GET_INTEGER(v);
	if (n < min || n > max)
		return oci_error(err, "%s: %lld out of range (%" PRId64 "..%" PRId64 ")", path, n,
				 min, max);
	*out = n;
	return 0;
}

int oci_u64(yajl_val v, const char *path, uint64_t *out, struct cordon_error *err)
{
	const char *text;

	if (!v || !YAJL_IS_NUMBER(v))
		return oci_error(err, "%s: expected integer", path);
	if (YAJL_IS_INTEGER(v)) {
		if (YAJL_GET_INTEGER(v) < 0)
			return oci_error(err, "%s: %lld out of range (0..%" PRIu64 ")", path,
					 YAJL_GET_INTEGER(v), UINT64_MAX);
		*out = (uint64_t)YAJL_GET_INTEGER(v);
		return 0;
	}
	text = v->u.number.r;
	if (!text || strpbrk(text, ".eE"))
		return oci_error(err, "%s: expected integer, got %s", path, text ? text : "?");
	if (text[0] == '-' || cordon_parse_u64(text, out) < 0)
		return oci_error(err, "%s: %s out of range (0..%" PRIu64 ")", path, text,
				 UINT64_MAX);
	return 0;
}

int oci_u32(yajl_val v, const char *path, uint32_t max, uint32_t *out, struct cordon_error *err)
{
	int64_t n;

	if (oci_int(v, path, 0, max, &n, err) < 0)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

int oci_strv(yajl_val v, const char *path, char ***out, size_t *n, struct cordon_error *err)
{
	_cleanup_strv_ char **vec = NULL;
	size_t count = 0;

	if (oci_want_array(v, path, err) < 0)
		return -1;
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val s = v->u.array.values[i];

		if (!s || !YAJL_IS_STRING(s))
			return oci_error(err, "%s[%zu]: expected string", path, i);
		cordon_strv_push(&vec, &count, s->u.string);
	}
	if (!vec)
		vec = cordon_xcalloc(1, sizeof(*vec)); /* [] is an empty list, not absent */
	cordon_strv_free(*out);
	*out = TAKE_PTR(vec);
	if (n)
		*n = count;
	return 0;
}

int oci_string_map(yajl_val v, const char *path, char ***out, size_t *n, struct cordon_error *err)
{
	_cleanup_strv_ char **vec = NULL;
	size_t count = 0;

	if (oci_want_object(v, path, err) < 0)
		return -1;
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *key = v->u.object.keys[i];
		yajl_val s = v->u.object.values[i];

		if (!*key)
			return oci_error(err, "%s: empty key", path);
		if (!s || !YAJL_IS_STRING(s))
			return oci_error(err, "%s.%s: expected string", path, key);
		for (size_t k = 0; k < count; k += 2)
			if (strcmp(vec[k], key) == 0)
				return oci_error(err, "%s.%s: duplicate key", path, key);
		cordon_strv_push(&vec, &count, key);
		cordon_strv_push(&vec, &count, s->u.string);
	}
	cordon_strv_free(*out);
	*out = TAKE_PTR(vec);
	*n = count / 2;
	return 0;
}

int oci_container_path(yajl_val v, const char *path, char **out, struct cordon_error *err)
{
	const char *s;
	char *norm;

	if (oci_string_ref(v, path, &s, err) < 0)
		return -1;
	if (s[0] != '/')
		return oci_error(err, "%s: must be absolute, got '%s'", path, s);
	norm = cordon_path_normalize(s);
	if (!norm)
		return oci_error(err, "%s: may not contain '..', got '%s'", path, s);
	free(*out);
	*out = norm;
	return 0;
}

static bool ranges_overlap(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
	return (uint64_t)a < (uint64_t)b + blen && (uint64_t)b < (uint64_t)a + alen;
}

int oci_idmaps(yajl_val v, const char *path, struct cordon_oci_idmap **out, size_t *n,
	       struct cordon_error *err)
{
	_cleanup_free_ struct cordon_oci_idmap *maps = NULL;
	size_t count;

	if (oci_want_array(v, path, err) < 0)
		return -1;
	count = v->u.array.len;
	if (count > CORDON_OCI_IDMAP_MAX)
		return oci_error(err, "%s: %zu ranges, the kernel takes at most %d", path, count,
				 CORDON_OCI_IDMAP_MAX);
	maps = cordon_xcalloc(count ? count : 1, sizeof(*maps));
	for (size_t i = 0; i < count; i++) {
		yajl_val m = v->u.array.values[i];
		struct cordon_oci_idmap *e = &maps[i];
		char p[OCI_PATH_MAX], f[OCI_PATH_MAX];

		oci_path(p, "%s[%zu]", path, i);
		if (oci_want_object(m, p, err) < 0)
			return -1;
		oci_path(f, "%s.containerID", p);
		if (oci_u32(oci_get(m, "containerID"), f, UINT32_MAX - 1, &e->container_id, err) <
		    0)
			return -1;
		oci_path(f, "%s.hostID", p);
		if (oci_u32(oci_get(m, "hostID"), f, UINT32_MAX - 1, &e->host_id, err) < 0)
			return -1;
		oci_path(f, "%s.size", p);
		if (oci_u32(oci_get(m, "size"), f, UINT32_MAX, &e->size, err) < 0)
			return -1;
		if (e->size == 0)
			return oci_error(err, "%s: must be at least 1", f);
		/* uid 4294967295 is (uid_t)-1, never mappable. */
		if ((uint64_t)e->container_id + e->size > UINT32_MAX ||
		    (uint64_t)e->host_id + e->size > UINT32_MAX)
			return oci_error(err, "%s: the range goes past id 4294967294", p);
		for (size_t j = 0; j < i; j++) {
			if (ranges_overlap(maps[j].container_id, maps[j].size, e->container_id,
					   e->size))
				return oci_error(err, "%s: containerID range overlaps %s[%zu]", p,
						 path, j);
			if (ranges_overlap(maps[j].host_id, maps[j].size, e->host_id, e->size))
				return oci_error(err, "%s: hostID range overlaps %s[%zu]", p, path,
						 j);
		}
	}
	free(*out);
	*out = TAKE_PTR(maps);
	*n = count;
	return 0;
}

void oci_warn(struct cordon_oci *oci, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	if (!line)
		abort(); /* like cordon_xasprintf: allocation failure is not recoverable */
	cordon_strv_push(&oci->warnings, &oci->n_warnings, line);
}
