// SPDX-License-Identifier: Apache-2.0
/* --rlimit parsing and the defaults every sandbox gets. */
#include <string.h>
#include <strings.h>

#include "cordon/security.h"

/* Documented in docs/security.md; changing one is a user-visible change. */
#define DEFAULT_NOFILE_SOFT 1024
#define DEFAULT_NOFILE_HARD 4096
#define DEFAULT_NPROC 1024
/*
 * The rlimit-backed ucounts a sandbox shares with its owner on the host
 * (docs/security.md, "Per-user kernel limits"): an eighth of the caller's
 * own hard limit, at most these (also when the caller's is unlimited).
 */
#define DEFAULT_UCOUNT_SHARE 8
#define DEFAULT_SIGPENDING_CAP 16384
#define DEFAULT_MSGQUEUE_CAP (1024 * 1024)

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

/* An eighth of the caller's own hard limit of resource, at most cap. */
static rlim_t ucount_share(int resource, rlim_t cap)
{
	struct rlimit cur;
	rlim_t v;

	if (getrlimit(resource, &cur) < 0 || cur.rlim_max == RLIM_INFINITY)
		return cap;
	v = cur.rlim_max / DEFAULT_UCOUNT_SHARE;
	return v < cap ? v : cap;
}

void cordon_rlimits_default(struct cordon_rlimits *r)
{
	rlim_t v;

	memset(r, 0, sizeof(*r));
	rlimit_set(r, RLIMIT_CORE, 0, 0);
	rlimit_set_clamped(r, RLIMIT_NOFILE, DEFAULT_NOFILE_SOFT, DEFAULT_NOFILE_HARD);
	rlimit_set_clamped(r, RLIMIT_NPROC, DEFAULT_NPROC, DEFAULT_NPROC);
	v = ucount_share(RLIMIT_SIGPENDING, DEFAULT_SIGPENDING_CAP);
	rlimit_set(r, RLIMIT_SIGPENDING, v, v);
	v = ucount_share(RLIMIT_MSGQUEUE, DEFAULT_MSGQUEUE_CAP);
	rlimit_set(r, RLIMIT_MSGQUEUE, v, v);
}

/*
 * The kernel counts pending queued signals and message-queue bytes per
 * user namespace and uid, and charges each to every ancestor namespace
 * too (kernel/ucount.c). At a process's own level the bound is its
 * rlimit; at each ancestor's, the bound is the soft limit the creator of
 * the child namespace had when it made it (create_user_ns keeps it as
 * the namespace's rlimit_max). Lowering ours right before we create the
 * workload's namespace therefore bounds everything the workload's
 * namespace holds together, whatever uids inside hold it, at our level
 * and so on the host; the workload cannot change that value afterwards,
 * and it cannot make another namespace.
 *
 * Our own signals are not hurt: kill, tgkill and pidfd_send_signal
 * (SI_USER, as the supervisor's relay sends them) and the kernel's own
 * (SIGCHLD) override the rlimit; only sigqueue'd and other negative
 * si_code signals count against it, and the init sends itself none. The
 * init never opens a message queue.
 */
static const int bounded_ucounts[] = { RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE };

int cordon_rlimits_bound_sandbox(const struct cordon_rlimits *r, struct cordon_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(bounded_ucounts); i++) {
		int resource = bounded_ucounts[i];
		rlim_t bound = resource == RLIMIT_SIGPENDING
				       ? ucount_share(resource, DEFAULT_SIGPENDING_CAP)
				       : ucount_share(resource, DEFAULT_MSGQUEUE_CAP);
		struct rlimit cur;

		for (size_t k = 0; k < r->n; k++)
			if (r->entry[k].resource == resource)
				bound = r->entry[k].limit.rlim_max;
		if (getrlimit(resource, &cur) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno, "reading rlimit %s",
						cordon_rlimit_name(resource));
		/* Lowered only (RLIM_INFINITY is the largest rlim_t). */
		if (bound < cur.rlim_max)
			cur.rlim_max = bound;
		if (cur.rlim_max < cur.rlim_cur)
			cur.rlim_cur = cur.rlim_max;
		if (setrlimit(resource, &cur) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno,
						"lowering the sandbox's rlimit %s",
						cordon_rlimit_name(resource));
	}
	return 0;
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
