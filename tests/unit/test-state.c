// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/state: the sweep of state directories whose
 * supervisor is gone.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "cordon/state.h"
#include "unit.h"

static char *root;

static void state_setup(void)
{
	root = unit_tmpdir();
}

static void state_teardown(void)
{
	unit_rm_rf(root);
	free(root);
}

/* An entry whose supervisor is this test process: alive. */
static void entry_live(const char *id)
{
	char rel[128], text[256];

	snprintf(rel, sizeof(rel), "%s/state.json", id);
	snprintf(text, sizeof(text),
		 "{\"status\": \"running\", \"owner_pid\": %d, \"owner_start_time\": %llu}",
		 (int)getpid(), (unsigned long long)cordon_proc_start_time(getpid()));
	free(unit_write(root, rel, text));
}

/* A container of `cordon create`: stays until `cordon delete`, whatever its owner. */
static void entry_kept(const char *id)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "%s/state.json", id);
	free(unit_write(root, rel, "{\"status\": \"stopped\", \"kept\": true, \"owner_pid\": 0}"));
}

/* A `cordon run` whose supervisor is gone (no owner at all). */
static void entry_dead(const char *id)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "%s/state.json", id);
	free(unit_write(root, rel, "{\"status\": \"running\", \"owner_pid\": 0}"));
}

static bool entry_exists(const char *id)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, id);
	return stat(path, &st) == 0;
}

/*
 * The budget bounds what a sweep removes, not what it reads: 200 live
 * entries (and kept ones) read first must not use it up. Counting what it
 * looked at, a budget of 1 removed a dead entry only if readdir happened
 * to list it first.
 */
START_TEST(sweep_budget_counts_removals)
{
	_cleanup_close_ int fd = -1;
	char id[32];

	for (int i = 0; i < 200; i++) {
		snprintf(id, sizeof(id), "live-%d", i);
		if (i % 4 == 0)
			entry_kept(id);
		else
			entry_live(id);
	}
	entry_dead("dead-a");
	entry_dead("dead-b");
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);

	ck_assert_int_eq(cordon_state_sweep(fd, 1), 1);
	ck_assert_msg(entry_exists("dead-a") != entry_exists("dead-b"),
		      "a budget of 1 removes exactly one of the two dead entries");
	ck_assert_int_eq(cordon_state_sweep(fd, 1), 1);
	ck_assert(!entry_exists("dead-a") && !entry_exists("dead-b"));
	ck_assert_int_eq(cordon_state_sweep(fd, 16), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(id, sizeof(id), "live-%d", i);
		ck_assert_msg(entry_exists(id), "%s was removed", id);
	}
}
END_TEST

/* A locked entry is a command's (or a create's) at work: never removed. */
START_TEST(sweep_skips_locked_entries)
{
	_cleanup_close_ int fd = -1, dir = -1;
	char path[PATH_MAX];

	entry_dead("dead-locked");
	entry_dead("dead-free");
	snprintf(path, sizeof(path), "%s/dead-locked", root);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dir, 0);
	ck_assert_int_eq(flock(dir, LOCK_SH), 0);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cordon_state_sweep(fd, 16), 1);
	ck_assert(entry_exists("dead-locked"));
	ck_assert(!entry_exists("dead-free"));
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("sweep");

	tcase_add_checked_fixture(tc, state_setup, state_teardown);
	tcase_add_test(tc, sweep_budget_counts_removals);
	tcase_add_test(tc, sweep_skips_locked_entries);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(state_suite());
}
