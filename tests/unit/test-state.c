// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/state: the sweep of state directories whose
 * supervisor is gone; the files of a state directory, written so that
 * nothing planted at their names receives the bytes, read only as the
 * regular files cordon wrote, and an entry, a private directory of ours
 * removed with whatever it holds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* An entry whose supervisor is gone, recorded with HOST and BOOT, created AGE_MS ago. */
static void entry_recorded(const char *id, const char *host, const char *boot, uint64_t age_ms,
			   uint64_t lifetime_ms)
{
	char rel[128], text[512];

	snprintf(rel, sizeof(rel), "%s/state.json", id);
	snprintf(text, sizeof(text),
		 "{\"status\": \"running\", \"kind\": \"session\", \"owner_pid\": 0, "
		 "\"host\": \"%s\", \"boot_id\": \"%s\", \"created_ms\": %llu, "
		 "\"max_lifetime_ms\": %llu}",
		 host, boot, (unsigned long long)(cordon_now_wall_ms() - age_ms),
		 (unsigned long long)lifetime_ms);
	free(unit_write(root, rel, text));
}

static unsigned reported[4];

static void count_report(void *ctx, const char *id, enum cordon_sweep_action action,
			 const char *why)
{
	(void)ctx;
	(void)id;
	ck_assert(why && *why);
	reported[action]++;
}

/*
 * Another host's entries only age out (never by their pids, which are that
 * host's); an earlier boot's go; --dry-run reports the same and acts on
 * nothing.
 */
START_TEST(sweep_other_host_ages_out_only)
{
	_cleanup_free_ char *host = cordon_state_host_name(), *boot = cordon_state_boot_id();
	struct cordon_sweep_opts opts = { .budget = 16, .dry_run = true, .report = count_report };
	_cleanup_close_ int fd = -1;

	entry_recorded("far-young", "elsewhere.example", boot, 1000, 3600 * 1000);
	entry_recorded("far-old", "elsewhere.example", boot, 7200 * 1000, 3600 * 1000);
	entry_recorded("far-nocap", "elsewhere.example", boot, 7200 * 1000, 0);
	entry_recorded("here-old-boot", host, "00000000-0000-0000-0000-000000000000", 1000, 0);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	memset(reported, 0, sizeof(reported));
	ck_assert_int_eq(cordon_state_sweep_report(fd, &opts), 2);
	ck_assert_uint_eq(reported[CORDON_SWEEP_FORGET], 2);
	ck_assert(entry_exists("far-old") && entry_exists("here-old-boot"));
	opts.dry_run = false;
	ck_assert_int_eq(cordon_state_sweep_report(fd, &opts), 2);
	ck_assert(!entry_exists("far-old") && !entry_exists("here-old-boot"));
	ck_assert(entry_exists("far-young") && entry_exists("far-nocap"));
}
END_TEST

/* --- the files of a state directory ------------------------------------ */

#define VICTIM_TEXT "the victim's own content\n"

/* The files cases: a scratch dir holding the state root and a victim file. */
static char *files_tmp, *files_root, *victim;

static void files_setup(void)
{
	char path[PATH_MAX];

	files_tmp = unit_tmpdir();
	victim = unit_write(files_tmp, "victim", VICTIM_TEXT);
	snprintf(path, sizeof(path), "%s/root", files_tmp);
	files_root = strdup(path);
}

static void files_teardown(void)
{
	unit_rm_rf(files_tmp);
	free(files_tmp);
	free(files_root);
	free(victim);
}

/* A claimed id "s1" under the root, as cordon run makes it (state.json: creating). */
static void state_new(struct cordon_state *st)
{
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	cordon_spec_init(&spec);
	spec.id = strdup("s1");
	spec.rootfs = strdup("/");
	ck_assert_msg(cordon_state_create(st, files_root, &spec, true, &err) == 0, "%s", err.msg);
	cordon_spec_free(&spec);
}

/* ROOT/s1/NAME */
static char *entry_path(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/s1%s%s", files_root, *name ? "/" : "", name);
	return strdup(path);
}

static void plant_symlink(const char *name)
{
	_cleanup_free_ char *p = entry_path(name);

	unlink(p);
	ck_assert_msg(symlink(victim, p) == 0, "symlink %s: %s", p, strerror(errno));
}

static void plant_hardlink(const char *name)
{
	_cleanup_free_ char *p = entry_path(name);

	unlink(p);
	ck_assert_msg(link(victim, p) == 0, "link %s: %s", p, strerror(errno));
}

static void assert_victim_intact(void)
{
	_cleanup_free_ char *text = NULL;
	struct stat st;

	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, victim, &text, NULL), 0);
	ck_assert_str_eq(text, VICTIM_TEXT);
	ck_assert_int_eq(lstat(victim, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode), "the victim is no longer a regular file");
}

/* NAME in the entry is a file of its own (not the victim) holding WANT (or starting with it). */
static void assert_own_file(const char *name, const char *want, bool prefix)
{
	_cleanup_free_ char *p = entry_path(name), *text = NULL;
	struct stat st;

	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode) && st.st_nlink == 1,
		      "%s: mode %o, %ju links: not a file of its own", name, st.st_mode,
		      (uintmax_t)st.st_nlink);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, p, &text, NULL), 0);
	if (prefix)
		ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "%s: '%s'", name, text);
	else
		ck_assert_str_eq(text, want);
}

START_TEST(writes_replace_planted_names)
{
	const char *dirs[] = { "/sys/fs/cgroup/a", "/sys/fs/cgroup/b" };
	struct cordon_error err = { 0 };
	struct cordon_state st;

	state_new(&st);
	/* Symlinks and hard links to the victim at every name cordon writes. */
	plant_symlink("cgroups");
	plant_hardlink("config.json");
	plant_hardlink("state.json.tmp"); /* the fixed temp name cordon once used */
	plant_symlink("state.json");
	ck_assert_msg(cordon_state_record_cgroups(&st, dirs, 2, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_state_save_config(&st, "{\"a\": 1}", 8, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_state_save(&st, &err) == 0, "%s", err.msg);
	assert_victim_intact();
	assert_own_file("cgroups", "/sys/fs/cgroup/a\n/sys/fs/cgroup/b\n", false);
	assert_own_file("config.json", "{\"a\": 1}", false);
	assert_own_file("state.json", "{\"ociVersion\"", true);

	/* Hard links at the final names too: replaced, the victim untouched. */
	plant_hardlink("cgroups");
	plant_hardlink("state.json");
	ck_assert_msg(cordon_state_record_cgroups(&st, dirs, 1, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_state_save(&st, &err) == 0, "%s", err.msg);
	assert_victim_intact();
	assert_own_file("cgroups", "/sys/fs/cgroup/a\n", false);
	cordon_state_remove(&st);
}
END_TEST

/* The plan is removable only: never among the directories a command acts in; what was made replaces it. */
START_TEST(planned_cgroups_apart)
{
	const char *plan[] = { "/sys/fs/cgroup/pids/cordon-x", "/sys/fs/cgroup/memory/cordon-x" };
	struct cordon_error err = { 0 };
	struct cordon_state st;
	size_t n;
	char **dirs;

	state_new(&st);
	ck_assert_msg(cordon_state_plan_cgroups(&st, plan, 2, &err) == 0, "%s", err.msg);
	assert_own_file("cgroups", "?/sys/fs/cgroup/pids/cordon-x\n?/sys/fs/cgroup/memory/cordon-x\n",
			false);
	dirs = cordon_state_cgroup_dirs(&st, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(dirs[0]);
	cordon_strv_free(dirs);
	dirs = cordon_state_cgroup_planned(&st, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(dirs[0], plan[0]);
	ck_assert_str_eq(dirs[1], plan[1]);
	cordon_strv_free(dirs);

	ck_assert_msg(cordon_state_record_cgroups(&st, plan, 1, &err) == 0, "%s", err.msg);
	dirs = cordon_state_cgroup_planned(&st, &n);
	ck_assert_uint_eq(n, 0);
	cordon_strv_free(dirs);
	dirs = cordon_state_cgroup_dirs(&st, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(dirs[0], plan[0]);
	cordon_strv_free(dirs);

	/* A directory is one line: a newline in one is refused, nothing written. */
	{
		const char *split[] = { "/sys/fs/cgroup/pids/a\n/sys/fs/cgroup/pids/b" };

		ck_assert_int_lt(cordon_state_plan_cgroups(&st, split, 1, &err), 0);
		ck_assert_int_eq(err.code, CORDON_E_STATE);
		assert_own_file("cgroups", "/sys/fs/cgroup/pids/cordon-x\n", false);
		err = (struct cordon_error){ 0 };
	}

	/* None made: the plan goes with the file. */
	ck_assert_msg(cordon_state_plan_cgroups(&st, plan, 2, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_state_record_cgroups(&st, NULL, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(faccessat(st.dir_fd, "cgroups", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(errno, ENOENT);
	cordon_state_remove(&st);
}
END_TEST

START_TEST(state_json_read_only_as_written)
{
	struct cordon_error err = { 0 };
	struct cordon_state st, again;
	_cleanup_free_ char *p = NULL;
	char elsewhere[PATH_MAX];

	state_new(&st);
	cordon_state_unlock(&st);
	p = entry_path("state.json");
	/* A fifo: refused at once (the old reader waited for a writer forever). */
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(cordon_state_open(&again, files_root, "s1", false, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
	/* A symlink to a state.json elsewhere: not followed. */
	unlink(p);
	ck_assert_int_eq(cordon_state_save(&st, &err), 0);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere.json", files_tmp);
	ck_assert_int_eq(rename(p, elsewhere), 0);
	ck_assert_int_eq(symlink(elsewhere, p), 0);
	ck_assert_int_eq(cordon_state_open(&again, files_root, "s1", false, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
	/* The real one reads. */
	unlink(p);
	ck_assert_int_eq(cordon_state_save(&st, &err), 0);
	ck_assert_msg(cordon_state_open(&again, files_root, "s1", false, &err) == 0, "%s", err.msg);
	cordon_state_close(&again);
	cordon_state_remove(&st);
}
END_TEST

START_TEST(entry_must_be_private)
{
	struct cordon_error err = { 0 };
	struct cordon_state st, again;
	_cleanup_free_ char *p = NULL;
	char other[PATH_MAX];

	state_new(&st);
	cordon_state_unlock(&st);
	p = entry_path("");
	/* Writable by others: anyone could plant in it. */
	ck_assert_int_eq(chmod(p, 0777), 0);
	ck_assert_int_eq(cordon_state_open(&again, files_root, "s1", false, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
	ck_assert_int_eq(chmod(p, 0700), 0);
	ck_assert_msg(cordon_state_open(&again, files_root, "s1", false, &err) == 0, "%s", err.msg);
	cordon_state_close(&again);
	/* A symlink to a directory of state elsewhere: not followed. */
	snprintf(other, sizeof(other), "%s/other", files_tmp);
	ck_assert_int_eq(rename(p, other), 0);
	ck_assert_int_eq(symlink(other, p), 0);
	ck_assert_int_eq(cordon_state_open(&again, files_root, "s1", false, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(rename(other, p), 0);
	cordon_state_remove(&st);
}
END_TEST

START_TEST(remove_takes_everything_and_follows_nothing)
{
	_cleanup_free_ char *p = NULL, *junk = NULL;
	struct cordon_state st;
	struct stat sb;

	state_new(&st);
	/* A temp name a crash left, something planted, a link to the victim. */
	p = entry_path(".cordon-state-0123456789abcdef");
	close(open(p, O_WRONLY | O_CREAT | O_EXCL, 0600));
	junk = entry_path("junk");
	close(open(junk, O_WRONLY | O_CREAT | O_EXCL, 0600));
	plant_symlink("cgroups");
	plant_hardlink("config.json");
	cordon_state_remove(&st);
	free(p);
	p = entry_path("");
	ck_assert_msg(lstat(p, &sb) < 0 && errno == ENOENT, "the entry %s remains", p);
	assert_victim_intact();
}
END_TEST

START_TEST(root_must_be_private)
{
	struct cordon_error err = { 0 };
	char other[PATH_MAX];
	int fd;

	fd = cordon_state_root_open(files_root, NULL, &err);
	ck_assert_msg(fd >= 0, "%s", err.msg);
	close(fd);
	ck_assert_int_eq(chmod(files_root, 0777), 0);
	ck_assert_int_eq(cordon_state_root_open(files_root, NULL, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
	ck_assert_int_eq(chmod(files_root, 0700), 0);
	snprintf(other, sizeof(other), "%s/other", files_tmp);
	ck_assert_int_eq(rename(files_root, other), 0);
	ck_assert_int_eq(symlink(other, files_root), 0);
	ck_assert_int_eq(cordon_state_root_open(files_root, NULL, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_STATE);
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("sweep");

	tcase_add_checked_fixture(tc, state_setup, state_teardown);
	tcase_add_test(tc, sweep_budget_counts_removals);
	tcase_add_test(tc, sweep_skips_locked_entries);
	tcase_add_test(tc, sweep_other_host_ages_out_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, files_setup, files_teardown);
	tcase_add_test(tc, writes_replace_planted_names);
	tcase_add_test(tc, planned_cgroups_apart);
	tcase_add_test(tc, state_json_read_only_as_written);
	tcase_add_test(tc, entry_must_be_private);
	tcase_add_test(tc, remove_takes_everything_and_follows_nothing);
	tcase_add_test(tc, root_must_be_private);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(state_suite());
}
