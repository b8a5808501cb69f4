/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the config.json parser's files: the parse context and typed
 * accessors over a yajl tree. Every accessor names the JSON path of the
 * value in its error ("process.user.uid: expected integer").
 */
#ifndef CORDON_SPEC_OCI_INTERNAL_H
#define CORDON_SPEC_OCI_INTERNAL_H

#include <yajl/yajl_tree.h>

#include "cordon/spec.h"

/* Longest JSON path in a message; longer ones are cut, never overflowed. */
#define OCI_PATH_MAX 256

struct oci_parse {
	struct cordon_spec *spec;
	struct cordon_oci *oci;
	const char *bundle;
	struct cordon_error *err;
};

/* obj[key], or NULL when obj is no object, key is absent or its value null. */
yajl_val oci_get(yajl_val obj, const char *key);
/* snprintf into a path buffer of OCI_PATH_MAX bytes. */
void oci_path(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int oci_error(struct cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int oci_want_object(yajl_val v, const char *path, struct cordon_error *err);
int oci_want_array(yajl_val v, const char *path, struct cordon_error *err);
/* A string, copied into *out (an earlier value is freed). */
int oci_string(yajl_val v, const char *path, char **out, struct cordon_error *err);
/* A string, borrowed from the tree. */
int oci_string_ref(yajl_val v, const char *path, const char **out, struct cordon_error *err);
int oci_bool(yajl_val v, const char *path, bool *out, struct cordon_error *err);
/* An integer in [min, max]; a fraction or a number out of range is refused. */
int oci_int(yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out,
	    struct cordon_error *err);
/* An unsigned 64-bit integer (yajl keeps those above INT64_MAX as text only). */
int oci_u64(yajl_val v, const char *path, uint64_t *out, struct cordon_error *err);
int oci_u32(yajl_val v, const char *path, uint32_t max, uint32_t *out, struct cordon_error *err);
/* An array of strings into a NULL-terminated vector (n may be NULL). */
int oci_strv(yajl_val v, const char *path, char ***out, size_t *n, struct cordon_error *err);
/* An object of string values into key, value, ... pairs. */
int oci_string_map(yajl_val v, const char *path, char ***out, size_t *n, struct cordon_error *err);
/* An absolute path inside the container, normalised ("//" and "/./" gone, no ".."). */
int oci_container_path(yajl_val v, const char *path, char **out, struct cordon_error *err);
/* An array of uidMappings/gidMappings ranges: non-empty, no overflow, no overlap. */
int oci_idmaps(yajl_val v, const char *path, struct cordon_oci_idmap **out, size_t *n,
	       struct cordon_error *err);

/* Record a field that is accepted but not applied. */
void oci_warn(struct cordon_oci *oci, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int oci_parse_process(struct oci_parse *p, yajl_val process);
int oci_parse_mounts(struct oci_parse *p, yajl_val mounts);
int oci_parse_linux(struct oci_parse *p, yajl_val linux_obj);
int oci_parse_resources(struct oci_parse *p, yajl_val resources);
/* run.cordon.net.allow, run.cordon.dns.upstream, run.cordon.dns → spec->net (oci-net.c). */
int oci_parse_net_annotations(struct oci_parse *p);
/* The value of annotation key, or NULL. */
const char *oci_annotation(const struct cordon_oci *oci, const char *key);

/* Name tables shared by the parser and the generator. */
extern const char *const oci_ns_names[CORDON_OCI_NS_COUNT];
extern const char *const oci_hook_names[CORDON_OCI_HOOK_COUNT];
/* OCI capability name ("CAP_CHOWN") of bit n, or NULL past the last known. */
const char *oci_cap_name(int n);
int oci_cap_from_name(const char *name);

/* Mount options cordon understands, for the features document. */
const char *oci_mount_option_name(size_t i);

#endif
