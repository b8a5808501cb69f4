// SPDX-License-Identifier: Apache-2.0
/*
 * bench-allowlist: hostname matches per second on one core (not a test).
 *
 *   build/tests/bench/bench-allowlist [MILLION_MATCHES]   (default 20)
 *
 * Builds an allowlist of 10,000 entries (6,000 exact names, 4,000
 * single-label wildcards, spread over a few hundred domains so the trie
 * has shared prefixes and fan-out), then times cordon_allowlist_match_name
 * over prepared query names: hits (exact names and one label below a
 * wildcard base), misses (a label too many, wildcard apexes, look-alikes,
 * unknown domains), and both mixed. The target is 5 million matches per
 * second; the figure is printed, the exit status does not depend on it.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cordon/net.h"

#define N_EXACT 6000
#define N_WILDCARD 4000
#define N_QUERIES 8192 /* per kind; a power of two */
#define TARGET 5e6

static const char *const tlds[] = { "com", "org", "net", "io", "dev", "example", "co.uk" };
static const char *const words[] = { "registry", "api", "cdn",	"files",   "static", "mirror",
				     "download", "pkg", "repo", "objects", "auth",   "index" };

static char *domain(unsigned i)
{
	return cordon_xasprintf("project%u.%s", i % 500, tlds[i % ARRAY_SIZE(tlds)]);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

struct rate {
	double wall; /* matches per second of elapsed time */
	double cpu;  /* per second of this thread's CPU time: what one core does on a busy host */
};

/* Rates over names[] for n matches; *hits counts the true answers. */
static struct rate run(const struct cordon_allowlist *al, char **names, size_t n, size_t *hits)
{
	size_t h = 0;
	double w0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	struct rate r;

	for (size_t i = 0; i < n; i++)
		h += cordon_allowlist_match_name(al, names[i & (N_QUERIES - 1)]);
	r.cpu = (double)n / (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0);
	r.wall = (double)n / (now_s() - w0);
	*hits = h;
	return r;
}

int main(int argc, char **argv)
{
	struct cordon_allowlist *al = cordon_allowlist_new();
	static char *hit[N_QUERIES], *miss[N_QUERIES], *mixed[N_QUERIES];
	struct cordon_error err = { 0 };
	size_t n = 20 * 1000 * 1000, count;
	struct rate rate_hit, rate_miss, rate_mixed;
	double t0;
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (argc > 1)
		n = (size_t)(strtod(argv[1], NULL) * 1e6);
	if (n == 0)
		n = 1;
	/* One core: stay where we are so the figure is not a migration average. */
	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}

	t0 = now_s();
	for (unsigned i = 0; i < N_EXACT + N_WILDCARD; i++) {
		_cleanup_free_ char *d = domain(i);
		_cleanup_free_ char *e =
			i < N_EXACT ?
				cordon_xasprintf("%s%u.%s", words[i % ARRAY_SIZE(words)], i, d) :
				cordon_xasprintf("*.%s%u.%s", words[i % ARRAY_SIZE(words)], i, d);

		if (cordon_allowlist_add(al, e, false, &err) < 0) {
			cordon_error_print(&err);
			return 1;
		}
	}
	count = cordon_allowlist_count(al);
	printf("allowlist: %zu entries built in %.1f ms\n", count, (now_s() - t0) * 1e3);

	for (unsigned q = 0; q < N_QUERIES; q++) {
		unsigned i = (q * 7919u) % (N_EXACT + N_WILDCARD);
		_cleanup_free_ char *d = domain(i);
		const char *w = words[i % ARRAY_SIZE(words)];

		if (i < N_EXACT)
			hit[q] = cordon_xasprintf("%s%u.%s", w, i, d);
		else
			hit[q] = cordon_xasprintf("node%u.%s%u.%s", q, w, i, d);
		switch (q % 4) {
		case 0: /* one label too many below an exact name, two below a wildcard base */
			miss[q] =
				cordon_xasprintf("%ssub.%s%u.%s", i < N_EXACT ? "" : "a.", w, i, d);
			break;
		case 1: /* the apex of a wildcard, or an exact name's parent */
			miss[q] = cordon_xasprintf("%s%u.%s", w, i < N_EXACT ? i + N_EXACT : i, d);
			break;
		case 2: /* a look-alike of a listed name */
			miss[q] = cordon_xasprintf("fake-%s%u.%s", w, i, d);
			break;
		default: /* a domain nobody listed */
			miss[q] = cordon_xasprintf("www.unlisted%u.%s", q,
						   tlds[q % ARRAY_SIZE(tlds)]);
			break;
		}
		mixed[q] = q % 2 ? hit[q] : miss[q];
	}

	size_t hits;

	run(al, hit, n / 10, &hits); /* warm-up */
	rate_hit = run(al, hit, n, &hits);
	if (hits != n) {
		fprintf(stderr, "bench-allowlist: %zu of %zu hits matched\n", hits, n);
		return 1;
	}
	rate_miss = run(al, miss, n, &hits);
	if (hits != 0) {
		fprintf(stderr, "bench-allowlist: %zu misses matched\n", hits);
		return 1;
	}
	rate_mixed = run(al, mixed, n, &hits);

	printf("                    wall        cpu   (M matches/s, one core)\n");
	printf("hits:   %10.2f %10.2f\n", rate_hit.wall / 1e6, rate_hit.cpu / 1e6);
	printf("misses: %10.2f %10.2f\n", rate_miss.wall / 1e6, rate_miss.cpu / 1e6);
	printf("mixed:  %10.2f %10.2f\n", rate_mixed.wall / 1e6, rate_mixed.cpu / 1e6);
	printf("target: %10.2f: %s\n", TARGET / 1e6,
	       rate_hit.wall >= TARGET && rate_miss.wall >= TARGET ? "met" : "NOT met (wall)");

	for (unsigned q = 0; q < N_QUERIES; q++) {
		free(hit[q]);
		free(miss[q]);
	}
	cordon_allowlist_free(al);
	return 0;
}
