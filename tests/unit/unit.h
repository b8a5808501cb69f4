/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared scaffolding of the unit tests: a runner that speaks clean TAP to
 * meson, temporary directories with fixture files, and stderr capture.
 * Everything is static; each test program includes this once.
 */
#ifndef CORDON_TESTS_UNIT_H
#define CORDON_TESTS_UNIT_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Run the suite. Under meson (CK_TAP_LOG_FILE_NAME set), check's own
 * "Running suite(s)" and summary lines would be unknown TAP syntax, so the
 * runner is silenced and each failure is repeated afterwards as a TAP
 * comment carrying file:line, and the TAP stream is the verdict (exit 0,
 * so that meson reports FAIL with the failed cases rather than ERROR).
 * Run by hand, check prints as usual and the exit status says it.
 */
/*
 * Under CI (CI=true, as root, every tool and test user set up by
 * contrib/test.sh), a precondition that is missing is a failure, never a
 * skip: a skip there would hide what CI exists to run.
 */
static inline bool unit_ci(void)
{
	const char *ci = getenv("CI");

	return ci && strcmp(ci, "true") == 0;
}

static inline int unit_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	bool tap = getenv("CK_TAP_LOG_FILE_NAME") != NULL && !getenv("CK_VERBOSITY");
	int failed;

	srunner_run_all(sr, tap ? CK_SILENT : CK_ENV);
	failed = srunner_ntests_failed(sr);
	if (tap && failed > 0) {
		TestResult **results = srunner_failures(sr);

		for (int i = 0; i < failed; i++)
			printf("# %s:%d: %s: %s\n", tr_lfile(results[i]), tr_lno(results[i]),
			       tr_tcname(results[i]), tr_msg(results[i]));
		free(results);
	}
	fflush(stdout);
	srunner_free(sr);
	return failed == 0 || tap ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* --- temporary directories ------------------------------------------ */

static inline char *unit_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	char *dir;

	snprintf(tmpl, sizeof(tmpl), "%s/cordon-unit.XXXXXX", base && *base ? base : "/tmp");
	dir = mkdtemp(tmpl);
	ck_assert_msg(dir != NULL, "mkdtemp %s: %s", tmpl, strerror(errno));
	dir = realpath(dir, NULL);
	ck_assert_ptr_nonnull(dir);
	return dir;
}

static inline int unit_rm_entry(const char *path, const struct stat *st, int type,
				struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path);
	return unlink(path);
}

static inline void unit_rm_rf(const char *dir)
{
	if (dir)
		nftw(dir, unit_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p of a path below dir. */
static inline void unit_mkdirs(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		ck_abort_msg("path too long: %s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			ck_abort_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		ck_abort_msg("mkdir %s: %s", path, strerror(errno));
}

/* Write a fixture file below dir (parents created); returns its path. */
static inline char *unit_write(const char *dir, const char *rel, const char *content)
{
	char path[PATH_MAX];
	char *slash;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		ck_abort_msg("path too long: %s/%s", dir, rel);
	slash = strrchr(rel, '/');
	if (slash) {
		char parent[PATH_MAX];

		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - rel), rel);
		unit_mkdirs(dir, parent);
	}
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
	fputs(content, f);
	ck_assert_int_eq(fclose(f), 0);
	return strdup(path);
}

/* --- stderr capture ------------------------------------------------- */

struct unit_capture {
	int saved;
	FILE *file;
};

static inline void unit_capture_start(struct unit_capture *c)
{
	fflush(stderr);
	c->file = tmpfile();
	ck_assert_ptr_nonnull(c->file);
	c->saved = dup(STDERR_FILENO);
	ck_assert_int_ge(c->saved, 0);
	ck_assert_int_ge(dup2(fileno(c->file), STDERR_FILENO), 0);
}

/* Stop capturing; returns what was written to stderr (malloc'd). */
static inline char *unit_capture_end(struct unit_capture *c)
{
	char *buf;
	off_t n;

	fflush(stderr);
	ck_assert_int_ge(dup2(c->saved, STDERR_FILENO), 0);
	close(c->saved);
	/* Written through fd 2, not through the FILE: ask the fd. */
	n = lseek(fileno(c->file), 0, SEEK_END);
	ck_assert_int_ge(n, 0);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fileno(c->file), buf, (size_t)n, 0), n);
	fclose(c->file);
	return buf;
}

#endif
