// SPDX-License-Identifier: Apache-2.0
/*
 * config.json "linux.resources" → struct cordon_resources (the cgroup
 * module's OCI API). Memory, cpu and pids also go into spec->limits, so
 * the cgroup is created with them as for `cordon run --memory ...`.
 * Controllers cordon does not manage are checked for shape and noted as
 * not applied.
 */
#include <string.h>

#include "oci-internal.h"

static int parse_device_rule(struct oci_parse *p, yajl_val d, const char *path,
			     struct cordon_device_rule *rule)
{
	char f[OCI_PATH_MAX];
	const char *s;
	yajl_val v;

	memset(rule, 0, sizeof(*rule));
	if (oci_want_object(d, path, p->err) < 0)
		return -1;
	oci_path(f, "%s.allow", path);
	if (!(v = oci_get(d, "allow")))
		return oci_error(p->err, "%s: required", f);
	if (oci_bool(v, f, &rule->allow, p->err) < 0)
		return -1;
	rule->type = 'a';
	oci_path(f, "%s.type", path);
	if ((v = oci_get(d, "type"))) {
		if (oci_string_ref(v, f, &s, p->err) < 0)
			return -1;
		if (strlen(s) != 1 || !strchr("acb", s[0]))
			return oci_error(p->err, "%s: '%s' is not a, c or b", f, s);
		rule->type = s[0];
	}
	rule->major = rule->minor = -1; /* absent: any */
	oci_path(f, "%s.major", path);
	if ((v = oci_get(d, "major")) && oci_int(v, f, -1, UINT32_MAX, &rule->major, p->err) < 0)
		return -1;
	oci_path(f, "%s.minor", path);
	if ((v = oci_get(d, "minor")) && oci_int(v, f, -1, UINT32_MAX, &rule->minor, p->err) < 0)
		return -1;
	if (rule->type == 'a')
		rule->major = rule->minor = -1;
	strcpy(rule->access, "rwm");
	oci_path(f, "%s.access", path);
	if ((v = oci_get(d, "access"))) {
		if (oci_string_ref(v, f, &s, p->err) < 0)
			return -1;
		if (strlen(s) > 3 || strspn(s, "rwm") != strlen(s) ||
		    (strchr(s, 'r') != strrchr(s, 'r')) || (strchr(s, 'w') != strrchr(s, 'w')) ||
		    (strchr(s, 'm') != strrchr(s, 'm')))
			return oci_error(p->err, "%s: '%s' is not a set of r, w and m", f, s);
		if (*s)
			memcpy(rule->access, s, strlen(s) + 1);
	}
	return 0;
}

static int parse_devices(struct oci_parse *p, yajl_val list, struct cordon_resources *res)
{
	if (!list)
		return 0;
	if (oci_want_array(list, "linux.resources.devices", p->err) < 0)
		return -1;
	res->devices = cordon_xcalloc(list->u.array.len + 1, sizeof(*res->devices));
	for (size_t i = 0; i < list->u.array.len; i++) {
		char path[OCI_PATH_MAX];

		oci_path(path, "linux.resources.devices[%zu]", i);
		if (parse_device_rule(p, list->u.array.values[i], path, &res->devices[i]) < 0)
			return -1;
		res->n_devices++;
	}
	return 0;
}

/* A cpuset list: "0-3,8,10-11". */
static int parse_cpuset(yajl_val v, const char *path, char **out, struct cordon_error *err)
{
	const char *s;

	if (oci_string_ref(v, path, &s, err) < 0)
		return -1;
	for (const char *c = s; *c;) {
		unsigned long a, b;
		char *end;

		if (*c < '0' || *c > '9')
			goto bad;
		a = strtoul(c, &end, 10);
		b = a;
		c = end;
		if (*c == '-') {
			if (c[1] < '0' || c[1] > '9')
				goto bad;
			b = strtoul(c + 1, &end, 10);
			c = end;
		}
		if (b < a || b > 65535)
			goto bad;
		if (*c == ',' && c[1])
			c++;
		else if (*c)
			goto bad;
	}
	free(*out);
	*out = *s ? cordon_xstrdup(s) : NULL;
	return 0;
bad:
	return oci_error(err, "%s: '%s' is not a list like 0-3,8", path, s);
}

static void note(struct oci_parse *p, yajl_val obj, const char *base, const char *const *keys)
{
	for (; *keys; keys++)
		if (oci_get(obj, *keys))
			oci_warn(p->oci, "%s.%s: not applied", base, *keys);
}

static int parse_memory(struct oci_parse *p, yajl_val m, struct cordon_resources *res)
{
	static const char *const unapplied[] = { "kernel", "kernelTCP", "useHierarchy",
						 "checkBeforeUpdate", NULL };
	static const char *const base = "linux.resources.memory";
	yajl_val v;

	if (!m)
		return 0;
	if (oci_want_object(m, base, p->err) < 0)
		return -1;
	/* -1 is "unlimited", the same as unset. */
	if ((v = oci_get(m, "limit")) && oci_int(v, "linux.resources.memory.limit", -1, INT64_MAX,
						 &res->memory_limit, p->err) < 0)
		return -1;
	if ((v = oci_get(m, "reservation")) &&
	    oci_int(v, "linux.resources.memory.reservation", -1, INT64_MAX,
		    &res->memory_reservation, p->err) < 0)
		return -1;
	if ((v = oci_get(m, "swap")) &&
	    oci_int(v, "linux.resources.memory.swap", -1, INT64_MAX, &res->memory_swap, p->err) < 0)
		return -1;
	/* swap is memory + swap: it can only be above the memory limit. */
	if (res->memory_swap > 0 && res->memory_limit > 0 && res->memory_swap < res->memory_limit)
		return oci_error(p->err,
				 "linux.resources.memory.swap: %" PRId64
				 " is below memory.limit %" PRId64 " (swap counts memory + swap)",
				 res->memory_swap, res->memory_limit);
	if (res->memory_swap > 0 && res->memory_limit <= 0)
		return oci_error(p->err, "linux.resources.memory.swap: needs memory.limit");
	/* Applied (cgroup/resources.c): where the kernel has no knob, an error, not a warning. */
	if ((v = oci_get(m, "swappiness"))) {
		int64_t n;

		if (oci_int(v, "linux.resources.memory.swappiness", 0, 100, &n, p->err) < 0)
			return -1;
		res->has_swappiness = true;
		res->memory_swappiness = (uint64_t)n;
	}
	if ((v = oci_get(m, "disableOOMKiller")) &&
	    oci_bool(v, "linux.resources.memory.disableOOMKiller", &res->disable_oom_killer,
		     p->err) < 0)
		return -1;
	for (const char *const *k = unapplied; *k; k++) {
		yajl_val x = oci_get(m, *k);
		char path[OCI_PATH_MAX];
		bool b;
		int64_t n;

		if (!x)
			continue;
		oci_path(path, "%s.%s", base, *k);
		if (YAJL_IS_TRUE(x) || YAJL_IS_FALSE(x) ?
			    oci_bool(x, path, &b, p->err) < 0 :
			    oci_int(x, path, -1, INT64_MAX, &n, p->err) < 0)
			return -1;
	}
	note(p, m, base, unapplied);
	return 0;
}

static int parse_cpu(struct oci_parse *p, yajl_val c, struct cordon_resources *res)
{
	static const char *const unapplied[] = { "burst", "realtimeRuntime", "realtimePeriod",
						 "idle", NULL };
	uint64_t u;
	yajl_val v;

	if (!c)
		return 0;
	if (oci_want_object(c, "linux.resources.cpu", p->err) < 0)
		return -1;
	if ((v = oci_get(c, "shares"))) {
		if (oci_u64(v, "linux.resources.cpu.shares", &u, p->err) < 0)
			return -1;
		/* The kernel's cpu.shares range; 0 is unset. */
		if (u != 0 && (u < 2 || u > 262144))
			return oci_error(p->err,
					 "linux.resources.cpu.shares: %" PRIu64
					 " out of range (2..262144)",
					 u);
		res->cpu_shares = u;
	}
	if ((v = oci_get(c, "quota"))) {
		if (oci_int(v, "linux.resources.cpu.quota", -1, INT64_MAX, &res->cpu_quota,
			    p->err) < 0)
			return -1;
		if (res->cpu_quota > 0 && res->cpu_quota < 1000)
			return oci_error(p->err,
					 "linux.resources.cpu.quota: %" PRId64
					 " below the kernel's minimum of 1000 µs",
					 res->cpu_quota);
		if (res->cpu_quota == 0)
			return oci_error(p->err, "linux.resources.cpu.quota: 0 (use -1 for none)");
	}
	if ((v = oci_get(c, "period"))) {
		if (oci_u64(v, "linux.resources.cpu.period", &u, p->err) < 0)
			return -1;
		if (u != 0 && (u < 1000 || u > 1000000))
			return oci_error(p->err,
					 "linux.resources.cpu.period: %" PRIu64
					 " out of range (1000..1000000 µs)",
					 u);
		res->cpu_period = u;
	}
	if ((v = oci_get(c, "cpus")) &&
	    parse_cpuset(v, "linux.resources.cpu.cpus", &res->cpus, p->err) < 0)
		return -1;
	if ((v = oci_get(c, "mems")) &&
	    parse_cpuset(v, "linux.resources.cpu.mems", &res->mems, p->err) < 0)
		return -1;
	for (const char *const *k = unapplied; *k; k++) {
		char path[OCI_PATH_MAX];
		int64_t n;

		if (!(v = oci_get(c, *k)))
			continue;
		oci_path(path, "linux.resources.cpu.%s", *k);
		if (oci_int(v, path, INT64_MIN, INT64_MAX, &n, p->err) < 0)
			return -1;
	}
	note(p, c, "linux.resources.cpu", unapplied);
	return 0;
}

static int parse_pids(struct oci_parse *p, yajl_val v, struct cordon_resources *res)
{
	int64_t n;

	if (!v)
		return 0;
	if (oci_want_object(v, "linux.resources.pids", p->err) < 0)
		return -1;
	if (!oci_get(v, "limit"))
		return oci_error(p->err, "linux.resources.pids.limit: required");
	if (oci_int(oci_get(v, "limit"), "linux.resources.pids.limit", -1, INT64_MAX, &n, p->err) <
	    0)
		return -1;
	res->pids_limit = n > 0 ? n : 0; /* 0 and -1: no limit */
	return 0;
}

/*
 * unified: cgroup v2 files of the container's own cgroup, CONTROLLER.KEY
 * (a single name, so none can lead out of the directory). cgroup.* files
 * are cordon's (procs, subtree_control, kill, freeze): refused.
 */
static int parse_unified(struct oci_parse *p, yajl_val v, struct cordon_resources *res)
{
	if (!v)
		return 0;
	if (oci_string_map(v, "linux.resources.unified", &res->unified, &res->n_unified, p->err) <
	    0)
		return -1;
	for (size_t i = 0; i < res->n_unified; i++) {
		const char *key = res->unified[2 * i], *dot = strchr(key, '.');
		bool ok = dot && dot != key && dot[1] &&
			  strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789_.-") == strlen(key);

		if (!ok)
			return oci_error(p->err,
					 "linux.resources.unified: '%s' is not a cgroup v2 file name "
					 "(CONTROLLER.KEY)",
					 key);
		if (strncmp(key, "cgroup.", 7) == 0)
			return oci_error(p->err,
					 "linux.resources.unified: %s: the cgroup's core files are "
					 "cordon's to manage",
					 key);
	}
	return 0;
}

int oci_parse_resources(struct oci_parse *p, yajl_val r)
{
	static const struct {
		const char *key;
		bool array;
	} unapplied[] = {
		{ "blockIO", false }, { "hugepageLimits", true }, { "network", false },
		{ "rdma", false },
	};
	struct cordon_resources *res = &p->oci->resources;

	if (!r)
		return 0;
	if (oci_want_object(r, "linux.resources", p->err) < 0)
		return -1;
	p->oci->has_resources = true;
	if (parse_devices(p, oci_get(r, "devices"), res) < 0 ||
	    parse_memory(p, oci_get(r, "memory"), res) < 0 ||
	    parse_cpu(p, oci_get(r, "cpu"), res) < 0 || parse_pids(p, oci_get(r, "pids"), res) < 0 ||
	    parse_unified(p, oci_get(r, "unified"), res) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(unapplied); i++) {
		yajl_val v = oci_get(r, unapplied[i].key);
		char path[OCI_PATH_MAX];

		if (!v)
			continue;
		oci_path(path, "linux.resources.%s", unapplied[i].key);
		if ((unapplied[i].array ? oci_want_array(v, path, p->err) :
					  oci_want_object(v, path, p->err)) < 0)
			return -1;
		/* An empty object or list asks for nothing. */
		if (unapplied[i].array ? v->u.array.len > 0 : v->u.object.len > 0)
			oci_warn(p->oci, "%s: not applied", path);
	}
	cordon_resources_to_limits(res, &p->spec->limits);
	return 0;
}

void cordon_resources_free(struct cordon_resources *res)
{
	cordon_strv_free(TAKE_PTR(res->unified));
	res->n_unified = 0;
	free(TAKE_PTR(res->cpus));
	free(TAKE_PTR(res->mems));
	free(TAKE_PTR(res->devices));
	res->n_devices = 0;
}

int cordon_oci_resources_parse(const char *json, size_t len, struct cordon_resources *res,
			       struct cordon_error *err)
{
	struct cordon_spec spec;
	struct cordon_oci oci = { 0 };
	struct oci_parse p = { .spec = &spec, .oci = &oci, .bundle = "", .err = err };
	yajl_val tree, pids;
	int64_t n;
	int r;

	memset(res, 0, sizeof(*res));
	if (cordon_json_parse(json, len, CORDON_E_SPEC, &tree, err) < 0)
		return cordon_error_wrap(err, "resources");
	memset(&spec, 0, sizeof(spec));
	r = oci_parse_resources(&p, tree);
	/* In a config.json -1 is the same as unset; for an update it lifts the limit. */
	pids = oci_get(oci_get(tree, "pids"), "limit");
	if (r == 0 && pids && oci_int(pids, "linux.resources.pids.limit", -1, INT64_MAX, &n, err) == 0 &&
	    n == -1)
		oci.resources.pids_limit = -1;
	yajl_tree_free(tree);
	cordon_strv_free(oci.warnings);
	*res = oci.resources;
	if (r < 0)
		cordon_resources_free(res);
	return r;
}
