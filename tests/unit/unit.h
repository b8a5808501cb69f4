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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * Skips, of the two kinds tests/e2e/skip.sh describes:
 *   UNIT_SKIP_LAYOUT(fmt, ...)   this host's layout cannot run the case
 *                                (a pure v2 host has no v1 devices
 *                                hierarchy): a skip everywhere;
 *   UNIT_SKIP_OR_FAIL(fmt, ...)  a missing precondition (root, the test
 *                                user, a controller): a skip by hand, a
 *                                failure under CI.
 * Either returns from the case. check knows no skip, so the case (a
 * child, with CK_FORK) records "NAME _I REASON" in a file unit_run made,
 * and unit_run marks that case's TAP line "# SKIP REASON": a skipped case
 * is never reported as a pass. Loop tests are numbered from 0.
 */
static int unit_skip_fd = -1;

static inline void unit_skip_record(const char *func, int i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void unit_skip_record(const char *func, int i, const char *fmt, ...)
{
	char reason[512], line[768];
	size_t flen = strlen(func);
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	for (char *p = reason; *p; p++)
		if (*p == '\n')
			*p = ' ';
	/* START_TEST(name) defines name_fn. */
	if (flen > 3 && strcmp(func + flen - 3, "_fn") == 0)
		flen -= 3;
	n = snprintf(line, sizeof(line), "%.*s %d %s\n", (int)flen, func, i, reason);
	if (unit_skip_fd >= 0 && n > 0)
		(void)!write(unit_skip_fd, line,
			     (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	if (unit_skip_fd < 0)
		printf("# SKIP %s", line);
}

#define UNIT_SKIP_LAYOUT(...)                                \
	do {                                                 \
		unit_skip_record(__func__, _i, __VA_ARGS__); \
		return;                                      \
	} while (0)

#define UNIT_SKIP_OR_FAIL(...)                                                                 \
	do {                                                                                   \
		if (unit_ci())                                                                 \
			ck_abort_msg(                                                          \
				"CI=true, a missing precondition is a failure: " __VA_ARGS__); \
		unit_skip_record(__func__, _i, __VA_ARGS__);                                   \
		return;                                                                        \
	} while (0)

struct unit_skip {
	char name[128];
	int i;
	char reason[512];
};

/* The records the cases wrote to fd. */
static inline struct unit_skip *unit_skips_read(int fd, size_t *n)
{
	struct unit_skip *v = NULL;
	char line[768];
	FILE *f;

	*n = 0;
	lseek(fd, 0, SEEK_SET);
	f = fdopen(dup(fd), "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		struct unit_skip s = { 0 };
		int off = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%127s %d %n", s.name, &s.i, &off) < 2)
			continue;
		snprintf(s.reason, sizeof(s.reason), "%s", line + off);
		v = realloc(v, (*n + 1) * sizeof(*v));
		if (!v)
			abort();
		v[(*n)++] = s;
	}
	fclose(f);
	return v;
}

/*
 * check's TAP line of a passed case, "ok N - FILE:TCASE:NAME: Passed",
 * or "ok N - FILE:TCASE:NAME # SKIP REASON" when the case skipped; K is how many lines of
 * the same NAME came before (the loop index).
 */
static inline void unit_tap_line(const char *line, const struct unit_skip *skips, size_t n,
				 char (*seen)[128], int *seen_count, size_t *n_seen)
{
	const char *end = strstr(line, ": Passed");
	const char *name;
	size_t len, k;
	int count = 0;

	if (strncmp(line, "ok ", 3) != 0 || !end) {
		fputs(line, stdout);
		return;
	}
	for (name = end; name > line && name[-1] != ':'; name--)
		;
	len = (size_t)(end - name);
	for (k = 0; k < *n_seen; k++)
		if (strlen(seen[k]) == len && strncmp(seen[k], name, len) == 0)
			break;
	if (k == *n_seen && k < 4096 && len < 128) {
		snprintf(seen[k], 128, "%.*s", (int)len, name);
		seen_count[k] = 0;
		(*n_seen)++;
	}
	if (k < *n_seen)
		count = seen_count[k]++;
	for (size_t j = 0; j < n; j++) {
		if (strlen(skips[j].name) == len && strncmp(skips[j].name, name, len) == 0 &&
		    skips[j].i == count) {
			printf("%.*s # SKIP %s\n", (int)(end - line), line, skips[j].reason);
			return;
		}
	}
	fputs(line, stdout);
}

/*
 * Run the suite. Under meson (CK_TAP_LOG_FILE_NAME set), check's own
 * "Running suite(s)" and summary lines would be unknown TAP syntax, so the
 * runner is silenced, check's TAP goes to a file that is then copied to
 * stdout with the skipped cases marked, and each failure is repeated
 * afterwards as a TAP comment carrying file:line; the TAP stream is the
 * verdict (exit 0, so that meson reports FAIL with the failed cases
 * rather than ERROR). Run by hand, check prints as usual, the skips are
 * listed after it, and the exit status says it.
 */
static inline int unit_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	bool tap = getenv("CK_TAP_LOG_FILE_NAME") != NULL && !getenv("CK_VERBOSITY");
	char skips_path[] = "/tmp/cordon-unit-skips.XXXXXX";
	char tap_path[] = "/tmp/cordon-unit-tap.XXXXXX";
	struct unit_skip *skips;
	size_t n_skips = 0;
	int failed, tap_fd = -1;

	unit_skip_fd = mkstemp(skips_path);
	if (unit_skip_fd < 0)
		abort();
	unlink(skips_path);
	if (tap) {
		tap_fd = mkstemp(tap_path);
		if (tap_fd < 0)
			abort();
		unsetenv("CK_TAP_LOG_FILE_NAME");
		srunner_set_tap(sr, tap_path);
	}
	srunner_run_all(sr, tap ? CK_SILENT : CK_ENV);
	failed = srunner_ntests_failed(sr);
	skips = unit_skips_read(unit_skip_fd, &n_skips);
	if (tap) {
		static char seen[4096][128];
		static int seen_count[4096];
		size_t n_seen = 0;
		char line[4096];
		FILE *f = fdopen(tap_fd, "r");

		unlink(tap_path);
		if (!f)
			abort();
		while (fgets(line, sizeof(line), f))
			unit_tap_line(line, skips, n_skips, seen, seen_count, &n_seen);
		fclose(f);
	} else {
		for (size_t j = 0; j < n_skips; j++)
			printf("SKIP %s (%d): %s\n", skips[j].name, skips[j].i, skips[j].reason);
	}
	if (tap && failed > 0) {
		TestResult **results = srunner_failures(sr);

		for (int i = 0; i < failed; i++)
			printf("# %s:%d: %s: %s\n", tr_lfile(results[i]), tr_lno(results[i]),
			       tr_tcname(results[i]), tr_msg(results[i]));
		free(results);
	}
	free(skips);
	close(unit_skip_fd);
	unit_skip_fd = -1;
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

static inline int unit_rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
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
