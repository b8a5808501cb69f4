// SPDX-License-Identifier: Apache-2.0
/* --rlimit parsing and the defaults every sandbox gets. */
#include <string.h>
#include <strings.h>

#include "cordon/security.h"

/* Documented in docs/security.md; changing one is a user-visible change. */
#define DEFAULT_NOFILE_SOFT 1024
#define DEFAULT_NOFILE_HARD 4096
#define DEFAULT_NPROC 1024

static const struct {
	const char *name;
	int resource;
} names[] = {
	{ "as", RLIMIT_AS },	       { "core", RLIMIT_CORE },
	{ "cpu", RLIMIT_CPU },	       { "data", RLIMIT_DATA },
	{ "fsize", RLIMIT_FSIZE },     { "locks", RLIMIT_LOCKS },
	{ "memlock", RLIMIT_MEMLOCK }, { "msgqueue", RLIMIT_MSGQUEUE },
	{ "nice", RLIMIT_NICE },       { "nofile", RLIMIT_NOFILE },
	{ "nproc", RLIMIT_NPROC },     { "rss", RLIMIT_RSS },
	{ "rtprio", RLIMIT_RTPRIO },   { "rttime", RLIMIT_RTTIME },
	{ "sigpending", RLIMIT_SIGPENDING }, { "stack", RLIMIT_STACK },
};

const char *cordon_rlimit_name(int resource)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].resource == resource)
			return names[i].name;
	return "?";
}

int cordon_rlimit_from_name(const char *name)
{
	if (strncasecmp(name, "RLIMIT_", 7) == 0)
		name += 7;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcasecmp(names[i].name, name) == 0)
			return names[i].resource;
	return -1;
}

static void rlimit_set(struct cordon_rlimits *r, int resource, rlim_t soft, rlim_t hard)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->entry[i].resource == resource) {
			r->entry[i].limit = (struct rlimit){ soft, hard };
			return;
		}
	}
	if (r->n < CORDON_RLIMIT_MAX)
		r->entry[r->n++] = (struct cordon_rlimit){ resource, { soft, hard } };
}

/*
 * rlimits are not namespaced: raising a hard limit needs CAP_SYS_RESOURCE
 * on the host, which the workload never has. Defaults are therefore
 * clamped to the caller's own hard limits.
 */
static void rlimit_set_clamped(struct cordon_rlimits *r, int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit cur;

	if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
		if (hard == RLIM_INFINITY || hard > cur.rlim_max)
			hard = cur.rlim_max;
		if (soft == RLIM_INFINITY || soft > hard)
			soft = hard;
	}
	rlimit_set(r, resource, soft, hard);
}

bool cordon_rlimit_raise_own(int resource, rlim_t hard)
{
	struct rlimit cur;

	if (getrlimit(resource, &cur) < 0)
		return false;
	if (cur.rlim_max == RLIM_INFINITY || (hard != RLIM_INFINITY && hard <= cur.rlim_max))
		return true;
	cur.rlim_max = hard;
	return setrlimit(resource, &cur) == 0;
}

void cordon_rlimits_default(struct cordon_rlimits *r)
{
	memset(r, 0, sizeof(*r));
	rlimit_set(r, RLIMIT_CORE, 0, 0);
	rlimit_set_clamped(r, RLIMIT_NOFILE, DEFAULT_NOFILE_SOFT, DEFAULT_NOFILE_HARD);
	rlimit_set_clamped(r, RLIMIT_NPROC, DEFAULT_NPROC, DEFAULT_NPROC);
}

static int parse_limit(const char *s, rlim_t *out)
{
	uint64_t v;

	if (strcmp(s, "unlimited") == 0 || strcmp(s, "infinity") == 0) {
		*out = RLIM_INFINITY;
		return 0;
	}
	if (cordon_parse_u64(s, &v) < 0 || v >= RLIM_INFINITY)
		return -1;
	*out = (rlim_t)v;
	return 0;
}

int cordon_rlimit_parse(const char *value, struct cordon_rlimits *r, struct cordon_error *err)
{
	_cleanup_free_ char *copy = cordon_xstrdup(value);
	char *name = copy, *soft, *hard;
	rlim_t s, h;

	soft = strchr(copy, '=');
	if (!soft)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--rlimit: expected NAME=SOFT[:HARD], got '%s'", value);
	*soft++ = '\0';
	hard = strchr(soft, ':');
	if (hard)
		*hard++ = '\0';
	if (strncasecmp(name, "RLIMIT_", 7) == 0)
		name += 7;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strcasecmp(names[i].name, name) != 0)
			continue;
		if (parse_limit(soft, &s) < 0 || (hard && parse_limit(hard, &h) < 0))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--rlimit %s: limits are numbers or 'unlimited'",
						value);
		if (!hard)
			h = s;
		if (s > h)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--rlimit %s: soft limit above the hard limit", value);
		{
			struct rlimit cur;

			if (getrlimit(names[i].resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
			    (h == RLIM_INFINITY || h > cur.rlim_max))
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--rlimit %s: above the caller's hard limit %llu "
							"(a sandbox cannot raise it)",
							value, (unsigned long long)cur.rlim_max);
		}
		rlimit_set(r, names[i].resource, s, h);
		return 0;
	}
	return cordon_error_set(err, CORDON_E_USAGE, 0, "--rlimit: unknown resource '%s'", name);
}
