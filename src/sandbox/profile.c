// SPDX-License-Identifier: Apache-2.0
/* --print-profile: what a sandbox of this spec gets, for launchers to audit. */
#include <string.h>
#include <yajl/yajl_gen.h>

#include "cordon/fs.h"
#include "cordon/sandbox.h"
#include "cordon/security.h"
#include "cordon/userns.h"
#include "sandbox-internal.h"

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(yajl_gen g, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void str_list(yajl_gen g, const char *k, const char *const *v)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (; *v; v++)
		str(g, *v);
	yajl_gen_array_close(g);
}

static void idmap(yajl_gen g, const char *k, const struct cordon_idmap *m)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < m->n; i++) {
		yajl_gen_array_open(g);
		yajl_gen_integer(g, m->extent[i].inside);
		yajl_gen_integer(g, m->extent[i].outside);
		yajl_gen_integer(g, m->extent[i].count);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
}

static void capset(yajl_gen g, const char *k, cordon_capset set)
{
	char name[32];

	key(g, k);
	yajl_gen_array_open(g);
	for (int cap = 0; cap < 64; cap++)
		if (set & (1ULL << cap))
			str(g, cordon_cap_name(cap, name, sizeof(name)));
	yajl_gen_array_close(g);
}

static void rlimit_value(yajl_gen g, rlim_t v)
{
	if (v == RLIM_INFINITY)
		str(g, "unlimited");
	else
		yajl_gen_integer(g, (long long)v);
}

static void limit(yajl_gen g, const char *k, uint64_t v)
{
	key(g, k);
	if (v)
		yajl_gen_integer(g, (long long)v);
	else
		yajl_gen_null(g);
}

/*
 * The namespace limits: each one's value, the caller's own and whether it
 * was asked for; null for a limit this kernel lacks. Written in the
 * sandbox's namespace, or the workload's under --userns host.
 */
static void user_limits(yajl_gen g, const struct cordon_spec *spec)
{
	const struct cordon_user_limits *l = &spec->user_limits;

	key(g, "user_limits");
	yajl_gen_map_open(g);
	key(g, "namespace");
	str(g, spec->userns == CORDON_USERNS_HOST ? "workload" : "sandbox");
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++) {
		key(g, cordon_user_limit_name(i));
		yajl_gen_map_open(g);
		key(g, "limit");
		if (l->value[i] >= 0)
			yajl_gen_integer(g, l->value[i]);
		else
			yajl_gen_null(g);
		key(g, "caller");
		if (l->host[i] >= 0)
			yajl_gen_integer(g, l->host[i]);
		else
			yajl_gen_null(g);
		key(g, "given");
		yajl_gen_bool(g, (l->given >> i) & 1);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static int cgroup_layout(yajl_gen g, const struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_cgroup_layout layout;
	const struct cordon_limits *l = &spec->limits;

	if (cordon_cgroup_detect(&layout, err) < 0)
		return -1;
	key(g, "cgroups");
	yajl_gen_map_open(g);
	key(g, "layout");
	str(g, cordon_cgroup_kind_name(layout.kind));
	key(g, "hierarchies");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < layout.n; i++) {
		yajl_gen_map_open(g);
		key(g, "version");
		yajl_gen_integer(g, layout.hier[i].v2 ? 2 : 1);
		key(g, "mount");
		str(g, layout.hier[i].mount);
		key(g, "path");
		str(g, layout.hier[i].path);
		key(g, "controllers");
		str(g, layout.hier[i].ctrl_names);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "parent");
	if (spec->cgroup_parent)
		str(g, spec->cgroup_parent);
	else
		yajl_gen_null(g);
	key(g, "limits");
	yajl_gen_map_open(g);
	limit(g, "memory_bytes", l->memory);
	limit(g, "memory_swap_bytes", l->memory_swap);
	limit(g, "cpu_quota_us", l->cpu_quota);
	limit(g, "cpu_period_us", l->cpu_quota ? l->cpu_period : 0);
	limit(g, "pids", l->pids);
	key(g, "pids_is_default");
	yajl_gen_bool(g, l->pids_default);
	key(g, "mode");
	str(g, l->best_effort ? "best-effort" : "strict");
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	cordon_cgroup_layout_free(&layout);
	return 0;
}

int cordon_sandbox_print_profile(const struct cordon_spec *spec, struct cordon_error *err)
{
	static const char *const namespaces[] = { "user", "mnt", "pid", "net", "uts", "ipc",
						  "cgroup", NULL };
	const struct cordon_security *sec = &spec->security;
	struct cordon_idplan plan = { 0 };
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	char digest[65];
	size_t len;
	int r = 0;

	if (spec->userns != CORDON_USERNS_HOST &&
	    cordon_userns_plan(spec->uid, spec->gid, &plan, err) < 0) {
		yajl_gen_free(g);
		return -1;
	}
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_map_open(g);
	key(g, "rootfs");
	str(g, spec->rootfs);
	key(g, "uid");
	yajl_gen_integer(g, spec->uid);
	key(g, "gid");
	yajl_gen_integer(g, spec->gid);

	key(g, "user_namespace");
	yajl_gen_map_open(g);
	key(g, "mode");
	str(g, spec->userns == CORDON_USERNS_HOST ? "host" : "auto");
	idmap(g, "uid_map", &plan.uid);
	idmap(g, "gid_map", &plan.gid);
	key(g, "helpers");
	yajl_gen_bool(g, plan.use_helpers);
	key(g, "workload");
	str(g, "nested"); /* a user namespace of its own, below the sandbox's */
	yajl_gen_map_close(g);

	str_list(g, "namespaces", spec->userns == CORDON_USERNS_HOST ? namespaces + 1 : namespaces);

	key(g, "capabilities");
	yajl_gen_map_open(g);
	capset(g, "bounding", sec->caps);
	capset(g, "effective", spec->uid == 0 ? sec->caps : 0);
	capset(g, "permitted", spec->uid == 0 ? sec->caps : 0);
	capset(g, "inheritable", 0);
	capset(g, "ambient", 0);
	yajl_gen_map_close(g);
	key(g, "no_new_privs");
	yajl_gen_bool(g, 1);

	key(g, "seccomp");
	yajl_gen_map_open(g);
	key(g, "mode");
	str(g, sec->seccomp == CORDON_SECCOMP_DEFAULT	 ? "default"
	       : sec->seccomp == CORDON_SECCOMP_PROFILE ? "profile"
							 : "unconfined");
	if (sec->seccomp != CORDON_SECCOMP_UNCONFINED) {
		size_t insns = 0;

		for (size_t i = 0; i < sec->n_filters; i++)
			insns += sec->filters[i].len;
		cordon_seccomp_digest(sec->filters, sec->n_filters, digest);
		key(g, "sha256");
		str(g, digest);
		key(g, "filters");
		yajl_gen_integer(g, (long long)sec->n_filters);
		key(g, "instructions");
		yajl_gen_integer(g, (long long)insns);
	}
	/* Installed before the filters above (docs/security.md). */
	key(g, "mode_guard");
	if (sec->mode_guard) {
		const struct cordon_bpf *guard = cordon_seccomp_mode_guard();

		yajl_gen_map_open(g);
		cordon_seccomp_digest(guard, 1, digest);
		key(g, "sha256");
		str(g, digest);
		key(g, "instructions");
		yajl_gen_integer(g, (long long)guard->len);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_bool(g, 0);
	}
	if (spec->seccomp_profile) {
		key(g, "profile");
		str(g, spec->seccomp_profile);
	}
	yajl_gen_map_close(g);

	key(g, "rlimits");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < sec->rlimits.n; i++) {
		key(g, cordon_rlimit_name(sec->rlimits.entry[i].resource));
		yajl_gen_array_open(g);
		rlimit_value(g, sec->rlimits.entry[i].limit.rlim_cur);
		rlimit_value(g, sec->rlimits.entry[i].limit.rlim_max);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);

	user_limits(g, spec);

	key(g, "proc");
	yajl_gen_map_open(g);
	str_list(g, "masked_paths", cordon_fs_masked_paths);
	str_list(g, "readonly_paths", cordon_fs_readonly_paths);
	yajl_gen_map_close(g);

	if (cgroup_layout(g, spec, err) < 0) {
		yajl_gen_free(g);
		return -1;
	}

	key(g, "root_readonly");
	yajl_gen_bool(g, !spec->overlay);
	key(g, "network");
	yajl_gen_map_open(g);
	sandbox_json_net_policy(g, spec, NULL);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);

	yajl_gen_get_buf(g, &buf, &len);
	if (cordon_write_all(STDOUT_FILENO, buf, len) < 0)
		r = cordon_error_set(err, CORDON_E_INTERNAL, errno, "writing the profile");
	yajl_gen_free(g);
	return r;
}
