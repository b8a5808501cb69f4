// SPDX-License-Identifier: Apache-2.0
/*
 * bench-nft: the gateway ruleset's netlink costs (not a test; root).
 *
 *   build/tests/bench/bench-nft [ROUNDS]   (default 50)
 *
 * Runs in a network namespace of its own (unshare(CLONE_NEWNET) first:
 * the host's ruleset is never touched). Times, each as the median of
 * ROUNDS after one warm-up (module loading):
 *
 *   create   cordon_nft_create of a full ruleset: the real vetting table
 *            as blocked ranges (as a sandbox gets it: without the
 *            embedded forms, which are rules), a few static CIDRs, both
 *            DNS proxies, two upstreams, masquerade. Target 2 ms.
 *   delete   cordon_nft_delete of it.
 *
 * Creation is measured twice. "cold": no other namespace on the machine
 * has netfilter hooks, so every create turns the kernel's hook static
 * keys on (code patching, costly in a VM) and every delete turns them
 * off again. "warm": a second namespace (a child holding the same
 * ruleset) keeps the keys on, as any host with a firewall, conntrack or
 * another running sandbox does; the measured namespace still registers
 * all of its own hooks and conntrack on each create.
 *   insert   cordon_nft_allow of one new address (a batch of one), of an
 *            address already in the set (a refresh), and of 100 new
 *            addresses in one batch (per element). Target 100 µs each.
 *
 * The figures are printed; the exit status does not depend on them.
 * Without root it prints why and exits 77.
 */
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cordon/net.h"

#define TARGET_CREATE_US 2000.0
#define TARGET_INSERT_US 100.0
#define BATCH 100

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double median, p90, min, max;
};

static struct stats summarize(double *v, size_t n)
{
	struct stats s;

	qsort(v, n, sizeof(*v), cmp_double);
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p90 = v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

static void report(const char *what, struct stats s, double target)
{
	printf("%-28s %9.1f %9.1f %9.1f %9.1f", what, s.median, s.p90, s.min, s.max);
	if (target > 0)
		printf("   target %6.0f: %s", target, s.median <= target ? "met" : "NOT met");
	printf("\n");
}

static void die(const char *what, const struct cordon_error *err)
{
	fprintf(stderr, "bench-nft: %s: ", what);
	cordon_error_print(err);
	exit(1);
}

/* 11.0.0.0 onwards, one address per index. */
static struct cordon_addr nth_addr(uint32_t i)
{
	struct cordon_addr a = { .family = AF_INET };

	a.u.v4.s_addr = htonl(0x0b000000u + i);
	return a;
}

/* A child in a namespace of its own holding the ruleset until killed. */
static pid_t keeper_start(const struct cordon_nft_config *cfg)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds) < 0) {
		perror("bench-nft: pipe");
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		struct cordon_error err = { 0 };
		struct cordon_nft *nft;

		close(fds[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || unshare(CLONE_NEWNET) < 0)
			_exit(1);
		nft = cordon_nft_open(&err);
		if (!nft || cordon_nft_create(nft, cfg, &err) < 0)
			die("keeper", &err);
		if (write(fds[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1) {
		fprintf(stderr, "bench-nft: keeper did not start\n");
		exit(1);
	}
	close(fds[0]);
	return pid;
}

static void measure_create(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
			   size_t rounds, double *create_us, double *delete_us)
{
	struct cordon_error err = { 0 };

	for (size_t r = 0; r < rounds; r++) {
		double t0 = now_us();

		if (cordon_nft_create(nft, cfg, &err) < 0)
			die("create", &err);
		create_us[r] = now_us() - t0;
		t0 = now_us();
		if (cordon_nft_delete(nft, &err) < 0)
			die("delete", &err);
		delete_us[r] = now_us() - t0;
	}
}

int main(int argc, char **argv)
{
	static const char *const static_text[] = { "192.0.2.0/24", "198.51.100.7", "203.0.113.0/25",
						   "2001:db8::/32", "2001:db8:1::7" };
	size_t rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 50;
	const struct cordon_cidr *vet4, *vet6;
	struct cordon_cidr *blocked, static_allow[ARRAY_SIZE(static_text)];
	struct cordon_nft_config cfg = { 0 };
	struct sockaddr_storage upstreams[2] = { 0 };
	struct cordon_error err = { 0 };
	struct cordon_addr batch[BATCH];
	struct cordon_nft *nft;
	double *create_us, *delete_us, *one_us, *refresh_us, *batch_us;
	double *cold_create_us, *cold_delete_us;
	int status;
	pid_t keeper;
	size_t n4, n6;
	uint32_t next = 0;
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (rounds < 1)
		rounds = 1;
	if (geteuid() != 0) {
		fprintf(stderr, "bench-nft: needs root (a network namespace of its own)\n");
		return 77;
	}
	/* cordon loads the netfilter libraries only for a sandbox with --net-allow. */
	if (cordon_netlib_load(CORDON_NETLIB_NFT, &err) < 0) {
		cordon_error_print(&err);
		return 1;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		perror("bench-nft: unshare(CLONE_NEWNET)");
		return 77;
	}
	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}

	/* What a sandbox's blocked sets hold, less the host's own addresses. */
	n4 = cordon_vet_table_native(AF_INET, &vet4);
	n6 = cordon_vet_table_native(AF_INET6, &vet6);
	blocked = cordon_xcalloc(n4 + n6, sizeof(*blocked));
	memcpy(blocked, vet4, n4 * sizeof(*blocked));
	memcpy(blocked + n4, vet6, n6 * sizeof(*blocked));
	for (size_t i = 0; i < ARRAY_SIZE(static_text); i++) {
		char buf[64];
		char *slash;

		snprintf(buf, sizeof(buf), "%s", static_text[i]);
		slash = strchr(buf, '/');
		if (slash)
			*slash = '\0';
		static_allow[i].addr.family = strchr(buf, ':') ? AF_INET6 : AF_INET;
		inet_pton(static_allow[i].addr.family, buf, static_allow[i].addr.u.bytes);
		static_allow[i].prefix = slash ? (unsigned)atoi(slash + 1) :
					 static_allow[i].addr.family == AF_INET ? 32 :
										  128;
	}
	cfg.workload_if = "gw0";
	cfg.uplink_if = "up0";
	cfg.proxy4.family = AF_INET;
	inet_pton(AF_INET, "10.200.0.1", &cfg.proxy4.u.v4);
	cfg.proxy6.family = AF_INET6;
	inet_pton(AF_INET6, "fd00:200::1", &cfg.proxy6.u.v6);
	cfg.workload4.family = AF_INET;
	inet_pton(AF_INET, "10.200.0.2", &cfg.workload4.u.v4);
	cfg.workload6.family = AF_INET6;
	inet_pton(AF_INET6, "fd00:200::2", &cfg.workload6.u.v6);
	/* Two upstream resolvers, as a resolv.conf often has. */
	for (size_t i = 0; i < ARRAY_SIZE(upstreams); i++) {
		struct sockaddr_in *u = (struct sockaddr_in *)&upstreams[i];

		u->sin_family = AF_INET;
		u->sin_port = htons(53);
		u->sin_addr.s_addr = htonl(0xc6336401u + (uint32_t)i); /* 198.51.100.1, .2 */
	}
	cfg.dns_upstreams = upstreams;
	cfg.n_dns_upstreams = ARRAY_SIZE(upstreams);
	cfg.masquerade = true;
	cfg.static_allow = static_allow;
	cfg.n_static = ARRAY_SIZE(static_text);
	cfg.blocked = blocked;
	cfg.n_blocked = n4 + n6;
	cfg.set_size = CORDON_NFT_SET_MAX;
	cfg.max_flows = CORDON_NET_FLOWS_DEFAULT;

	nft = cordon_nft_open(&err);
	if (!nft)
		die("open", &err);
	create_us = cordon_xcalloc(rounds, sizeof(double));
	delete_us = cordon_xcalloc(rounds, sizeof(double));
	cold_create_us = cordon_xcalloc(rounds, sizeof(double));
	cold_delete_us = cordon_xcalloc(rounds, sizeof(double));
	one_us = cordon_xcalloc(rounds * 10, sizeof(double));
	refresh_us = cordon_xcalloc(rounds * 10, sizeof(double));
	batch_us = cordon_xcalloc(rounds, sizeof(double));

	/* Warm-up: the first commit loads nf_tables' modules. */
	if (cordon_nft_create(nft, &cfg, &err) < 0 || cordon_nft_delete(nft, &err) < 0)
		die("warm-up", &err);

	measure_create(nft, &cfg, rounds, cold_create_us, cold_delete_us);
	keeper = keeper_start(&cfg);
	measure_create(nft, &cfg, rounds, create_us, delete_us);

	if (cordon_nft_create(nft, &cfg, &err) < 0)
		die("create", &err);
	for (size_t r = 0; r < rounds * 10; r++) {
		struct cordon_addr a = nth_addr(next++);
		double t0 = now_us();

		if (cordon_nft_allow(nft, &a, 1, 60000, &err) < 0)
			die("allow one", &err);
		one_us[r] = now_us() - t0;
		t0 = now_us();
		if (cordon_nft_allow(nft, &a, 1, 90000, &err) < 0)
			die("refresh one", &err);
		refresh_us[r] = now_us() - t0;
	}
	for (size_t r = 0; r < rounds; r++) {
		double t0;

		for (size_t i = 0; i < BATCH; i++)
			batch[i] = nth_addr(next++);
		t0 = now_us();
		if (cordon_nft_allow(nft, batch, BATCH, 60000, &err) < 0)
			die("allow batch", &err);
		batch_us[r] = (now_us() - t0) / BATCH;
	}
	if (cordon_nft_delete(nft, &err) < 0)
		die("delete", &err);
	cordon_nft_close(nft);
	kill(keeper, SIGTERM);
	waitpid(keeper, &status, 0);

	printf("bench-nft: %zu rounds; ruleset with %zu blocked, %zu static entries\n", rounds,
	       n4 + n6, ARRAY_SIZE(static_text));
	printf("%-28s %9s %9s %9s %9s   (µs)\n", "", "median", "p90", "min", "max");
	report("create ruleset (cold)", summarize(cold_create_us, rounds), 0);
	report("delete ruleset (cold)", summarize(cold_delete_us, rounds), 0);
	report("create ruleset (warm)", summarize(create_us, rounds), TARGET_CREATE_US);
	report("delete ruleset (warm)", summarize(delete_us, rounds), 0);
	report("insert 1 (batch of 1)", summarize(one_us, rounds * 10), TARGET_INSERT_US);
	report("refresh 1 (batch of 1)", summarize(refresh_us, rounds * 10), TARGET_INSERT_US);
	report("insert 100, per element", summarize(batch_us, rounds), TARGET_INSERT_US);

	free(cold_create_us);
	free(cold_delete_us);
	free(create_us);
	free(delete_us);
	free(one_us);
	free(refresh_us);
	free(batch_us);
	free(blocked);
	return 0;
}
