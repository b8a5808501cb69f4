// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/core: the error type, strict parsers, strv, file
 * helpers, the bounded input reader and the JSON depth scan.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "cordon/core.h"
#include "unit.h"

/* --- errors ---------------------------------------------------------- */

START_TEST(error_set_fills_fields)
{
	struct cordon_error err = { 0 };

	ck_assert_int_eq(cordon_error_set(&err, CORDON_E_PATH, ENOENT, "--bind %s", "/x"), -1);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_str_eq(err.msg, "--bind /x");
}
END_TEST

START_TEST(error_set_truncates_long_message)
{
	struct cordon_error err = { 0 };
	char big[2000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cordon_error_set(&err, CORDON_E_INTERNAL, 0, "%s", big);
	ck_assert_uint_eq(strlen(err.msg), sizeof(err.msg) - 1);
}
END_TEST

START_TEST(error_wrap_prefixes_context)
{
	struct cordon_error err = { 0 };

	cordon_error_set(&err, CORDON_E_NET_POLICY, EPERM, "commit");
	ck_assert_int_eq(cordon_error_wrap(&err, "nft"), -1);
	ck_assert_int_eq(cordon_error_wrap(&err, "net: %s", "gateway"), -1);
	ck_assert_str_eq(err.msg, "net: gateway: nft: commit");
	/* Wrapping adds context; it never changes the code or the errno. */
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, EPERM);
}
END_TEST

START_TEST(error_wrap_long_context_stays_terminated)
{
	struct cordon_error err = { 0 };
	char big[1000];

	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cordon_error_set(&err, CORDON_E_MOUNT, 0, "inner");
	cordon_error_wrap(&err, "%s", big);
	ck_assert_uint_lt(strlen(err.msg), sizeof(err.msg));
	ck_assert_int_eq(err.msg[0], 'y');
}
END_TEST

START_TEST(error_message_appends_strerror)
{
	struct cordon_error err = { 0 };
	char buf[256], want[256];

	cordon_error_set(&err, CORDON_E_ROOTFS, ENOENT, "rootfs /nope");
	cordon_error_message(&err, buf, sizeof(buf));
	snprintf(want, sizeof(want), "rootfs /nope: %s", strerror(ENOENT));
	ck_assert_str_eq(buf, want);

	cordon_error_set(&err, CORDON_E_USAGE, 0, "no command given");
	cordon_error_message(&err, buf, sizeof(buf));
	ck_assert_str_eq(buf, "no command given");

	/* A short buffer is truncated, never overrun. */
	cordon_error_message(&err, buf, 5);
	ck_assert_str_eq(buf, "no c");
}
END_TEST

START_TEST(error_print_one_line_with_code)
{
	struct cordon_error err = { 0 };
	struct unit_capture cap;
	char want[256];
	char *out;

	cordon_error_set(&err, CORDON_E_PATH, ENOTDIR, "--workspace /a");
	unit_capture_start(&cap);
	cordon_error_print(&err);
	out = unit_capture_end(&cap);
	snprintf(want, sizeof(want), "cordon: CORDON_E_PATH: --workspace /a: %s\n",
		 strerror(ENOTDIR));
	ck_assert_str_eq(out, want);
	free(out);
}
END_TEST

START_TEST(error_print_flattens_newlines)
{
	struct cordon_error err = { 0 };
	struct unit_capture cap;
	char *out, *nl;

	cordon_error_set(&err, CORDON_E_SPEC, 0, "line one\nline two\r\nthree");
	cordon_error_wrap(&err, "ctx\nmore");
	unit_capture_start(&cap);
	cordon_error_print(&err);
	out = unit_capture_end(&cap);
	nl = strchr(out, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_msg(nl[1] == '\0', "more than one line printed: '%s'", out);
	ck_assert_ptr_null(strchr(out, '\r'));
	ck_assert_str_eq(out, "cordon: CORDON_E_SPEC: ctx more: line one line two  three\n");
	free(out);
}
END_TEST

START_TEST(code_names_are_stable)
{
	/* These strings are an interface (scripts match them); never rename. */
	static const struct {
		enum cordon_code code;
		int value;
		const char *name;
	} table[] = {
		{ CORDON_OK, 0, "CORDON_OK" },
		{ CORDON_E_USAGE, 1, "CORDON_E_USAGE" },
		{ CORDON_E_ROOTFS, 2, "CORDON_E_ROOTFS" },
		{ CORDON_E_PATH, 3, "CORDON_E_PATH" },
		{ CORDON_E_USERNS, 4, "CORDON_E_USERNS" },
		{ CORDON_E_NAMESPACE, 5, "CORDON_E_NAMESPACE" },
		{ CORDON_E_MOUNT, 6, "CORDON_E_MOUNT" },
		{ CORDON_E_STATE, 7, "CORDON_E_STATE" },
		{ CORDON_E_RESULT, 8, "CORDON_E_RESULT" },
		{ CORDON_E_EXEC, 9, "CORDON_E_EXEC" },
		{ CORDON_E_INTERNAL, 10, "CORDON_E_INTERNAL" },
		{ CORDON_E_SECURITY, 11, "CORDON_E_SECURITY" },
		{ CORDON_E_CGROUP, 12, "CORDON_E_CGROUP" },
		{ CORDON_E_NET_POLICY, 13, "CORDON_E_NET_POLICY" },
		{ CORDON_E_SPEC, 14, "CORDON_E_SPEC" },
		{ CORDON_E_HOOK, 15, "CORDON_E_HOOK" },
		{ CORDON_E_AUDIT, 16, "CORDON_E_AUDIT" },
	};

	ck_assert_int_eq(ARRAY_SIZE(table), CORDON_CODE_COUNT);
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		ck_assert_int_eq(table[i].code, table[i].value);
		ck_assert_str_eq(cordon_code_name(table[i].code), table[i].name);
	}
}
END_TEST

START_TEST(code_name_out_of_range)
{
	ck_assert_str_eq(cordon_code_name(CORDON_CODE_COUNT), "CORDON_E_INTERNAL");
	ck_assert_str_eq(cordon_code_name((enum cordon_code)1000), "CORDON_E_INTERNAL");
	ck_assert_str_eq(cordon_code_name((enum cordon_code)-1), "CORDON_E_INTERNAL");
}
END_TEST

START_TEST(warn_is_one_prefixed_line)
{
	struct unit_capture cap;
	char *out;

	unit_capture_start(&cap);
	cordon_warn("no %s here", "subuid");
	out = unit_capture_end(&cap);
	ck_assert_str_eq(out, "cordon: warning: no subuid here\n");
	free(out);
}
END_TEST

/*
 * --log FILE --log-format json (containerd's shim): every message a JSON
 * line in the file, only errors also on stderr; what JSON cannot carry
 * raw is escaped, bytes that are not UTF-8 become U+FFFD.
 */
START_TEST(log_file_json_lines)
{
	struct cordon_error err = { 0 };
	struct unit_capture cap;
	const char *want =
		"{\"level\":\"warning\",\"msg\":\"q\\\" b\\\\ t\\u0009 x\\ufffd "
		"y\\ufffd z\\ufffd\\ufffd\\ufffd \xc3\xa9 \xf0\x9f\x99\x82\",\"time\":\"";
	char *dir = unit_tmpdir(), *path, *text = NULL, *out, *nl;

	path = cordon_xasprintf("%s/log.json", dir);
	ck_assert_int_eq(cordon_log_configure(path, CORDON_LOG_JSON, true, &err), 0);
	unit_capture_start(&cap);
	cordon_warn("q\" b\\ t\t x\xff y\xc3 z\xed\xa0\x80 \xc3\xa9 \xf0\x9f\x99\x82");
	cordon_debug("step %d", 1);
	cordon_error_set(&err, CORDON_E_STATE, 0, "container x does not exist");
	cordon_error_print(&err);
	out = unit_capture_end(&cap);
	ck_assert_str_eq(out, "cordon: CORDON_E_STATE: container x does not exist\n");
	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, path, &text, NULL), 0);

	nl = strchr(text, '\n');
	ck_assert_ptr_nonnull(nl);
	*nl = '\0';
	ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "warning line: %s", text);
	ck_assert_msg(nl[-1] == '}' && nl[-2] == '"' && nl[-3] == 'Z', "warning line: %s", text);
	ck_assert_ptr_nonnull(
		strstr(nl + 1, "{\"level\":\"debug\",\"msg\":\"step 1\",\"time\":\""));
	ck_assert_ptr_nonnull(strstr(nl + 1, "{\"level\":\"error\",\"msg\":\"CORDON_E_STATE: "
					     "container x does not exist\",\"time\":\""));
	free(out);
	free(text);
	free(path);
	unit_rm_rf(dir);
	free(dir);
}
END_TEST

/* --- strict number parsing ----------------------------------------- */

START_TEST(parse_u64_accepts_plain_decimal)
{
	uint64_t v = 99;

	ck_assert_int_eq(cordon_parse_u64("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(cordon_parse_u64("42", &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(cordon_parse_u64("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(parse_u64_rejects)
{
	static const char *const bad[] = {
		"-1", " 1", "1 ", "1x", "", "+1", "0x10", "1.5", "١", "\t1", "1\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t v = 7;
		int r = cordon_parse_u64(bad[i], &v);

		ck_assert_msg(r < 0, "cordon_parse_u64(\"%s\") accepted it as %llu", bad[i],
			      (unsigned long long)v);
		ck_assert_msg(r == -EINVAL, "cordon_parse_u64(\"%s\") = %d, want -EINVAL", bad[i], r);
	}
	ck_assert_int_lt(cordon_parse_u64(NULL, &(uint64_t){ 0 }), 0);
}
END_TEST

START_TEST(parse_u64_overflow)
{
	uint64_t v = 7;

	ck_assert_int_eq(cordon_parse_u64("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(cordon_parse_u64("99999999999999999999999", &v), -ERANGE);
}
END_TEST

START_TEST(parse_seconds_ms_values)
{
	static const struct {
		const char *in;
		uint64_t ms;
	} good[] = {
		{ "1", 1000 }, { "0.5", 500 }, { "1.25", 1250 }, { "0", 0 },
		{ "2.001", 2001 }, { "10", 10000 }, { "0.05", 50 }, { "3.000", 3000 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		uint64_t ms = 1;

		ck_assert_msg(cordon_parse_seconds_ms(good[i].in, &ms) == 0,
			      "cordon_parse_seconds_ms(\"%s\") failed", good[i].in);
		ck_assert_msg(ms == good[i].ms, "cordon_parse_seconds_ms(\"%s\") = %llu, want %llu",
			      good[i].in, (unsigned long long)ms, (unsigned long long)good[i].ms);
	}
}
END_TEST

START_TEST(parse_seconds_ms_rejects)
{
	static const char *const bad[] = {
		"1.", ".5", "a", "", "-1", " 1", "1.x", "1.5s", "1..5", "1.-5", "+1", ".",
		"18446744073709551615", "99999999999999999999999",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t ms = 7;

		ck_assert_msg(cordon_parse_seconds_ms(bad[i], &ms) < 0,
			      "cordon_parse_seconds_ms(\"%s\") accepted it as %llu ms", bad[i],
			      (unsigned long long)ms);
	}
	ck_assert_int_lt(cordon_parse_seconds_ms(NULL, &(uint64_t){ 0 }), 0);
}
END_TEST

/* --- strv ------------------------------------------------------------ */

START_TEST(strv_push_copies_and_terminates)
{
	char **v = NULL;
	size_t n = 0;
	char word[8] = "alpha";

	cordon_strv_push(&v, &n, word);
	strcpy(word, "beta");
	cordon_strv_push(&v, &n, word);
	cordon_strv_push(&v, &n, "");
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0], "alpha");
	ck_assert_str_eq(v[1], "beta");
	ck_assert_str_eq(v[2], "");
	ck_assert_ptr_null(v[3]);
	cordon_strv_free(v);
}
END_TEST

START_TEST(strv_free_null_and_cleanup)
{
	cordon_strv_free(NULL);
	{
		_cleanup_strv_ char **v = NULL;
		size_t n = 0;

		for (int i = 0; i < 100; i++)
			cordon_strv_push(&v, &n, "x");
		ck_assert_uint_eq(n, 100);
		ck_assert_ptr_null(v[100]);
	}
	{
		_cleanup_strv_ char **empty = NULL;

		(void)empty;
	}
}
END_TEST

/* --- memory and ownership helpers ---------------------------------- */

START_TEST(take_ptr_and_fd)
{
	char *p = cordon_xstrdup("x");
	char *q = TAKE_PTR(p);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int g;

	ck_assert_ptr_null(p);
	ck_assert_str_eq(q, "x");
	free(q);
	ck_assert_int_ge(fd, 0);
	g = TAKE_FD(fd);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_ge(g, 0);
	{
		_cleanup_close_ int h = g;

		(void)h;
	}
	/* The cleanup closed it. */
	ck_assert_int_eq(fcntl(g, F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

START_TEST(xasprintf_formats)
{
	_cleanup_free_ char *s = cordon_xasprintf("%s=%d", "N", 42);

	ck_assert_str_eq(s, "N=42");
}
END_TEST

START_TEST(clocks_move_forward)
{
	uint64_t a = cordon_now_mono_us(), b = cordon_now_mono_us();
	uint64_t wall = cordon_now_wall_ms();
	uint64_t now = (uint64_t)time(NULL) * 1000u;

	ck_assert_uint_ge(b, a);
	ck_assert_uint_gt(a, 0);
	ck_assert_uint_ge(wall + 2000, now);
	ck_assert_uint_le(wall, now + 2000);
}
END_TEST

/* --- file helpers ---------------------------------------------------- */

static char *tmp;
static int tmpfd = -1;

static void files_setup(void)
{
	tmp = unit_tmpdir();
	tmpfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tmpfd, 0);
}

static void files_teardown(void)
{
	close(tmpfd);
	unit_rm_rf(tmp);
	free(tmp);
}

START_TEST(write_then_read_file_at)
{
	_cleanup_free_ char *path = unit_write(tmp, "f", "");
	_cleanup_free_ char *data = NULL;
	size_t len = 99;

	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(cordon_write_file_at(tmpfd, "f", "hello\n", 6), 0);
	ck_assert_int_eq(cordon_read_file_at(tmpfd, "f", &data, &len), 0);
	ck_assert_uint_eq(len, 6);
	ck_assert_str_eq(data, "hello\n");
}
END_TEST

START_TEST(write_file_at_does_not_create)
{
	struct stat st;

	/* It is meant for files like uid_map that exist; no O_CREAT. */
	ck_assert_int_eq(cordon_write_file_at(tmpfd, "missing", "x", 1), -ENOENT);
	ck_assert_int_eq(fstatat(tmpfd, "missing", &st, 0), -1);
}
END_TEST

START_TEST(write_file_at_absolute_path)
{
	_cleanup_free_ char *path = unit_write(tmp, "abs", "");
	_cleanup_free_ char *data = NULL;

	ck_assert_int_eq(cordon_write_file_at(AT_FDCWD, path, "0 1000 1\n", 9), 0);
	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, path, &data, NULL), 0);
	ck_assert_str_eq(data, "0 1000 1\n");
}
END_TEST

START_TEST(read_file_at_empty_missing_and_dir)
{
	_cleanup_free_ char *path = unit_write(tmp, "empty", "");
	_cleanup_free_ char *data = NULL, *none = NULL;
	size_t len = 99;

	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(cordon_read_file_at(tmpfd, "empty", &data, &len), 0);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(data, "");
	ck_assert_int_eq(cordon_read_file_at(tmpfd, "nope", &none, &len), -ENOENT);
	ck_assert_ptr_null(none);
	unit_mkdirs(tmp, "sub");
	ck_assert_int_eq(cordon_read_file_at(tmpfd, "sub", &none, &len), -EISDIR);
	ck_assert_ptr_null(none);
}
END_TEST

START_TEST(read_file_at_large)
{
	const size_t size = 300000;
	_cleanup_free_ char *want = malloc(size + 1);
	_cleanup_free_ char *path = NULL, *data = NULL;
	size_t len = 0;

	for (size_t i = 0; i < size; i++)
		want[i] = (char)('a' + i % 26);
	want[size] = '\0';
	path = unit_write(tmp, "big", want);
	ck_assert_int_eq(cordon_read_file_at(tmpfd, "big", &data, &len), 0);
	ck_assert_uint_eq(len, size);
	ck_assert_int_eq(data[size], '\0');
	ck_assert_int_eq(memcmp(data, want, size), 0);
}
END_TEST

START_TEST(read_file_at_proc)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;

	/* procfs files report size 0: reading must not trust st_size. */
	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, "/proc/self/status", &data, &len), 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_ptr_nonnull(strstr(data, "Pid:"));
}
END_TEST

START_TEST(write_all_regular_file_and_bad_fd)
{
	const size_t size = 200000;
	_cleanup_free_ char *buf = malloc(size);
	_cleanup_free_ char *path = NULL, *data = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	memset(buf, 'z', size);
	path = unit_write(tmp, "all", "");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cordon_write_all(fd, buf, size), 0);
	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, path, &data, &len), 0);
	ck_assert_uint_eq(len, size);
	ck_assert_int_eq(cordon_write_all(-1, "x", 1), -EBADF);
	ck_assert_int_eq(cordon_write_all(fd, "", 0), 0);
}
END_TEST

/* --- input files ------------------------------------------------------ */

START_TEST(input_read_regular)
{
	_cleanup_free_ char *path = unit_write(tmp, "in", "{\"a\": 1}\n");
	_cleanup_free_ char *data = NULL;
	struct cordon_error err = { 0 };
	size_t len = 0;

	ck_assert_int_eq(cordon_input_read(tmpfd, "in", 64, CORDON_E_SPEC, "in", &data, &len, &err),
			 0);
	ck_assert_uint_eq(len, 9);
	ck_assert_str_eq(data, "{\"a\": 1}\n");
	free(TAKE_PTR(data));
	/* Exactly the cap is still accepted. */
	ck_assert_int_eq(
		cordon_input_read(AT_FDCWD, path, 9, CORDON_E_SPEC, "in", &data, NULL, &err), 0);
	ck_assert_str_eq(data, "{\"a\": 1}\n");
}
END_TEST

START_TEST(input_read_fifo_refused_at_once)
{
	_cleanup_free_ char *fifo = cordon_xasprintf("%s/fifo", tmp);
	_cleanup_free_ char *data = NULL;
	struct cordon_error err = { 0 };

	/* No writer ever comes: a blocking open would hang past the test's timeout. */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_lt(cordon_input_read(AT_FDCWD, fifo, 1024, CORDON_E_NET_POLICY, "--x fifo",
					   &data, NULL, &err),
			 0);
	ck_assert_ptr_null(data);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, 0);
	ck_assert_str_eq(err.msg, "--x fifo: not a regular file");
}
END_TEST

START_TEST(input_read_devices_and_dirs_refused)
{
	static const char *const paths[] = { "/dev/zero", "/dev/null", "/dev/urandom", "/" };
	struct cordon_error err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		_cleanup_free_ char *data = NULL;

		ck_assert_int_lt(cordon_input_read(AT_FDCWD, paths[i], 1024, CORDON_E_SPEC,
						   paths[i], &data, NULL, &err),
				 0);
		ck_assert_ptr_null(data);
		ck_assert_msg(strstr(err.msg, "not a regular file") && strstr(err.msg, paths[i]),
			      "%s", err.msg);
	}
}
END_TEST

START_TEST(input_read_oversize_refused)
{
	_cleanup_free_ char *path = unit_write(tmp, "big", "0123456789");
	_cleanup_free_ char *data = NULL;
	struct cordon_error err = { 0 };

	ck_assert_ptr_nonnull(path);
	ck_assert_int_lt(
		cordon_input_read(tmpfd, "big", 9, CORDON_E_SPEC, "big", &data, NULL, &err), 0);
	ck_assert_ptr_null(data);
	ck_assert_str_eq(err.msg, "big: larger than 9 bytes");
}
END_TEST

START_TEST(input_read_counts_what_it_reads)
{
	_cleanup_free_ char *data = NULL;
	struct cordon_error err = { 0 };
	size_t len = 0;

	/*
	 * A procfs file is regular and says size 0, as a file that grows
	 * after the fstat would: the cap holds on the bytes read.
	 */
	ck_assert_int_lt(cordon_input_read(AT_FDCWD, "/proc/self/status", 16, CORDON_E_SPEC,
					   "status", &data, NULL, &err),
			 0);
	ck_assert_str_eq(err.msg, "status: larger than 16 bytes");
	ck_assert_int_eq(cordon_input_read(AT_FDCWD, "/proc/self/status", 1 << 20, CORDON_E_SPEC,
					   "status", &data, &len, &err),
			 0);
	ck_assert_uint_gt(len, 16);
	ck_assert_ptr_nonnull(strstr(data, "Pid:"));
}
END_TEST

START_TEST(input_read_missing_and_fd)
{
	_cleanup_free_ char *path = unit_write(tmp, "f", "abc");
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	struct cordon_error err = { 0 };

	ck_assert_int_lt(
		cordon_input_read(tmpfd, "nope", 9, CORDON_E_PATH, "--x nope", &data, NULL, &err),
		0);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_str_eq(err.msg, "--x nope");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cordon_input_read_fd(fd, 9, CORDON_E_PATH, "f", &data, NULL, &err), 0);
	ck_assert_str_eq(data, "abc");
	/* The fd stays the caller's. */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
}
END_TEST

/* Entries of tmp whose name starts with PREFIX. */
static int count_prefixed(const char *prefix)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/*
 * CORDON_REPLACE_EXCHANGE (the state directory): the old file is swapped
 * out and unlinked, not renamed over (ext4 writes a file renamed over
 * another out at once): the name holds the new bytes, a reader of the
 * old file keeps the old ones, no temp name is left, and a symlink at
 * the name is removed, its target untouched.
 */
START_TEST(replace_exchange_swaps_and_unlinks)
{
	_cleanup_free_ char *target = unit_write(tmp, "target", "keep");
	_cleanup_close_ int old = -1, dir = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *data = NULL;
	struct stat st;
	char buf[8] = { 0 };

	ck_assert_int_ge(dir, 0);
	/* No file yet: a plain rename. */
	ck_assert_int_eq(cordon_file_replace_at(dir, "f", ".t-", "one", 3, 0600,
						CORDON_REPLACE_EXCHANGE), 0);
	old = openat(dir, "f", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(old, 0);
	ck_assert_int_eq(cordon_file_replace_at(dir, "f", ".t-", "two", 3, 0600,
						CORDON_REPLACE_EXCHANGE), 0);
	ck_assert_int_eq(cordon_read_file_at(dir, "f", &data, NULL), 0);
	ck_assert_str_eq(data, "two");
	ck_assert_int_eq(pread(old, buf, sizeof(buf) - 1, 0), 3);
	ck_assert_str_eq(buf, "one");
	ck_assert_int_eq(fstat(old, &st), 0);
	ck_assert_int_eq(st.st_nlink, 0);
	ck_assert_int_eq(count_prefixed(".t-"), 0);

	ck_assert_int_eq(symlinkat(target, dir, "l"), 0);
	ck_assert_int_eq(cordon_file_replace_at(dir, "l", ".t-", "new", 3, 0600,
						CORDON_REPLACE_EXCHANGE), 0);
	ck_assert_int_eq(fstatat(dir, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISREG(st.st_mode));
	free(TAKE_PTR(data));
	ck_assert_int_eq(cordon_read_file_at(dir, "target", &data, NULL), 0);
	ck_assert_str_eq(data, "keep");
	ck_assert_int_eq(count_prefixed(".t-"), 0);
}
END_TEST

/* --- host paths: the safe walk ------------------------------------------ */

START_TEST(path_open_follows_own_links)
{
	_cleanup_free_ char *f = unit_write(tmp, "f", "abc");
	_cleanup_free_ char *abs = cordon_xasprintf("%s/abs", tmp);
	_cleanup_free_ char *rel = cordon_xasprintf("%s/sub/../rel", tmp);
	_cleanup_free_ char *sub = cordon_xasprintf("%s/sub", tmp);
	_cleanup_close_ int a = -1, b = -1;
	struct cordon_error err = { 0 };
	struct stat sa, sf;

	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(symlinkat(f, tmpfd, "abs"), 0);
	ck_assert_int_eq(symlinkat("sub/../f", tmpfd, "rel"), 0);
	/* The caller's own links: absolute and with '..', both followed. */
	a = cordon_path_open(abs, "--x", CORDON_E_PATH, &err);
	ck_assert_int_ge(a, 0);
	b = cordon_path_open(rel, "--x", CORDON_E_PATH, &err);
	ck_assert_int_ge(b, 0);
	ck_assert_int_eq(fstat(a, &sa), 0);
	ck_assert_int_eq(stat(f, &sf), 0);
	ck_assert(sa.st_ino == sf.st_ino && sa.st_dev == sf.st_dev);
	ck_assert_int_eq(fstat(b, &sa), 0);
	ck_assert(sa.st_ino == sf.st_ino);
	/* O_PATH: the fd reads nothing itself. */
	ck_assert_int_eq(fcntl(a, F_GETFL) & O_PATH, O_PATH);
}
END_TEST

START_TEST(path_open_errors)
{
	_cleanup_free_ char *f = unit_write(tmp, "f", "abc");
	_cleanup_free_ char *through = cordon_xasprintf("%s/f/x", tmp);
	_cleanup_free_ char *loop = cordon_xasprintf("%s/loop", tmp);
	_cleanup_free_ char *missing = cordon_xasprintf("%s/nope", tmp);
	struct cordon_error err = { 0 };

	ck_assert_int_lt(cordon_path_open(through, "--x", CORDON_E_ROOTFS, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_ROOTFS);
	ck_assert_int_eq(err.errnum, ENOTDIR);
	/* "name/" must be a directory, also through a link. */
	{
		_cleanup_free_ char *slash = cordon_xasprintf("%s/", f);
		_cleanup_free_ char *lslash = cordon_xasprintf("%s/lf/", tmp);
		_cleanup_free_ char *l = cordon_xasprintf("%s/lf", tmp);
		_cleanup_close_ int ok = -1;

		ck_assert_int_eq(symlinkat("f", tmpfd, "lf"), 0);
		ck_assert_int_lt(cordon_path_open(slash, "--x", CORDON_E_PATH, &err), 0);
		ck_assert_int_eq(err.errnum, ENOTDIR);
		ck_assert_int_lt(cordon_path_open(lslash, "--x", CORDON_E_PATH, &err), 0);
		ck_assert_int_eq(err.errnum, ENOTDIR);
		ok = cordon_path_open(l, "--x", CORDON_E_PATH, &err);
		ck_assert_int_ge(ok, 0);
	}
	ck_assert_int_eq(symlinkat("loop", tmpfd, "loop"), 0);
	ck_assert_int_lt(cordon_path_open(loop, "--x", CORDON_E_PATH, &err), 0);
	ck_assert_int_eq(err.errnum, ELOOP);
	ck_assert_int_lt(cordon_path_open(missing, "--x", CORDON_E_PATH, &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_int_lt(cordon_path_open("", "--x", CORDON_E_PATH, &err), 0);
}
END_TEST

START_TEST(path_reopen_refuses_another_object)
{
	_cleanup_free_ char *a = cordon_xasprintf("%s/a", tmp);
	_cleanup_free_ char *b = cordon_xasprintf("%s/b", tmp);
	_cleanup_close_ int fd = -1, again = -1;
	struct cordon_error err = { 0 };
	struct cordon_path_id id = { 0 };
	struct stat st;

	ck_assert_int_eq(mkdir(a, 0755), 0);
	ck_assert_int_eq(mkdir(b, 0755), 0);
	ck_assert_int_lt(cordon_path_reopen(a, &id, "--x", &err), 0); /* never checked */
	fd = cordon_path_open(a, "--x", CORDON_E_PATH, &err);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	cordon_path_id_of(&st, &id);
	again = cordon_path_reopen(a, &id, "--x", &err);
	ck_assert_int_ge(again, 0);
	/* The name now holds another directory: refused, not followed. */
	ck_assert_int_eq(renameat2(tmpfd, "a", tmpfd, "b", RENAME_EXCHANGE), 0);
	ck_assert_int_lt(cordon_path_reopen(a, &id, "--x", &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	ck_assert_ptr_nonnull(strstr(err.msg, "no longer the object"));
}
END_TEST

/* --- JSON depth --------------------------------------------------------- */

static size_t depth_of(const char *text, size_t stop)
{
	size_t depth = 12345;

	ck_assert_int_eq(cordon_json_depth(text, strlen(text), stop, &depth), 0);
	return depth;
}

/* "[[...]]" n deep, with `inner` in the middle. */
static char *nested(size_t n, const char *inner)
{
	size_t m = strlen(inner);
	char *s = cordon_xmalloc(2 * n + m + 1);

	memset(s, '[', n);
	memcpy(s + n, inner, m);
	memset(s + n + m, ']', n);
	s[2 * n + m] = '\0';
	return s;
}

START_TEST(json_depth_counts_containers)
{
	ck_assert_uint_eq(depth_of("", 64), 0);
	ck_assert_uint_eq(depth_of("7", 64), 0);
	ck_assert_uint_eq(depth_of("\"x\"", 64), 0);
	ck_assert_uint_eq(depth_of("{}", 64), 1);
	ck_assert_uint_eq(depth_of("[]", 64), 1);
	ck_assert_uint_eq(depth_of("{\"a\": [1, {\"b\": []}], \"c\": {}}", 64), 4);
	/* Siblings do not add up: the deepest path counts. */
	ck_assert_uint_eq(depth_of("[[1], [2], [[3]]]", 64), 3);
}
END_TEST

START_TEST(json_depth_skips_strings)
{
	ck_assert_uint_eq(depth_of("{\"[[[{{{\": \"]]]}}}[[[\"}", 64), 1);
	/* An escaped quote does not end the string; an escaped backslash does not escape it. */
	ck_assert_uint_eq(depth_of("[\"\\\"[[[\"]", 64), 1);
	ck_assert_uint_eq(depth_of("[\"\\\\\", [[]]]", 64), 3);
	ck_assert_uint_eq(depth_of("[\"\\u005b\\n[\"]", 64), 1);
	/* A string left open hides the rest: the parser will refuse it. */
	ck_assert_uint_eq(depth_of("[\"[[[[", 64), 1);
}
END_TEST

START_TEST(json_depth_refuses_comments)
{
	/* yajl_tree_parse skips comments: a quote in one must not hide what follows. */
	static const char *const bad[] = {
		"{/* \" */ \"a\": [[[]]] /* \" */}",
		"[// \"\n[[]]]",
		"/",
		"[1]/",
	};
	size_t depth;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(cordon_json_depth(bad[i], strlen(bad[i]), 64, &depth) == -EINVAL, "%s",
			      bad[i]);
	/* In a string a slash is only a character. */
	ck_assert_uint_eq(depth_of("{\"path\": \"/a/*b*/\", \"u\": \"\\/\"}", 64), 1);
}
END_TEST

START_TEST(json_depth_limit)
{
	_cleanup_free_ char *at = nested(64, "{\"k\": \"[\"}");
	_cleanup_free_ char *over = nested(65, "1");
	_cleanup_free_ char *mixed = NULL;

	ck_assert_uint_eq(depth_of(at, 65), 65);
	ck_assert_uint_eq(depth_of(at, 64), 65); /* stop + 1: beyond the limit */
	ck_assert_uint_eq(depth_of(over, 64), 65);
	ck_assert_uint_eq(depth_of(over, 65), 65);
	free(TAKE_PTR(at));
	at = nested(64, "");
	ck_assert_uint_eq(depth_of(at, 64), 64);
	/* Closers first never go below zero nor hide later depth. */
	ck_assert_uint_eq(depth_of("]]]]}}[[", 64), 2);
	mixed = cordon_xasprintf("{\"a\": %s}", at);
	ck_assert_uint_eq(depth_of(mixed, 64), 65);
}
END_TEST

START_TEST(json_depth_stops_early)
{
	const size_t n = 2000000;
	_cleanup_free_ char *deep = nested(n, "");

	size_t depth = 0;

	ck_assert_int_eq(cordon_json_depth(deep, 2 * n, 64, &depth), 0);
	ck_assert_uint_eq(depth, 65);
	ck_assert_int_eq(cordon_json_depth(deep, 2 * n, SIZE_MAX - 1, &depth), 0);
	ck_assert_uint_eq(depth, n);
}
END_TEST

START_TEST(json_parse_bounds)
{
	_cleanup_free_ char *at = nested(CORDON_JSON_DEPTH_MAX, "");
	_cleanup_free_ char *over = nested(CORDON_JSON_DEPTH_MAX + 1, "");
	_cleanup_free_ char *huge = nested(1000000, "");
	struct cordon_error err = { 0 };
	yajl_val tree = NULL;

	ck_assert_int_eq(cordon_json_parse(at, strlen(at), CORDON_E_SPEC, &tree, &err), 0);
	ck_assert(YAJL_IS_ARRAY(tree));
	yajl_tree_free(TAKE_PTR(tree));
	ck_assert_int_lt(cordon_json_parse(over, strlen(over), CORDON_E_SPEC, &tree, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_SPEC);
	ck_assert_str_eq(err.msg, "nested deeper than 64 levels");
	ck_assert_int_lt(cordon_json_parse(huge, strlen(huge), CORDON_E_SPEC, &tree, &err), 0);
	ck_assert_str_eq(err.msg, "nested deeper than 64 levels");
	ck_assert_int_lt(cordon_json_parse("{\"a\":\0}", 7, CORDON_E_USAGE, &tree, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_str_eq(err.msg, "contains a NUL byte");
	ck_assert_int_lt(cordon_json_parse("{} // x", 7, CORDON_E_SPEC, &tree, &err), 0);
	ck_assert_str_eq(err.msg, "a '/' outside a string (JSON has no comments)");
	ck_assert_int_lt(cordon_json_parse("{\"a\" 1}", 7, CORDON_E_SPEC, &tree, &err), 0);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	ck_assert_ptr_null(tree);
	/* The text need not be NUL-terminated. */
	ck_assert_int_eq(cordon_json_parse("{\"a\": 1}xyz", 8, CORDON_E_SPEC, &tree, &err), 0);
	ck_assert(YAJL_IS_OBJECT(tree));
	yajl_tree_free(tree);
}
END_TEST

/* --- openat2 ----------------------------------------------------------- */

/*
 * A walk through ".." under RESOLVE_IN_ROOT fails with EAGAIN whenever
 * anything on the host is renamed meanwhile; cordon_openat2 tries again,
 * so a rootfs whose /etc/passwd is a symlink through ".." opens while
 * other sandboxes start. A child renames in a loop beside 20,000 opens:
 * every open must succeed (without the retry some fail on two cores).
 */
START_TEST(openat2_in_root_survives_renames)
{
	_cleanup_free_ char *dir = unit_tmpdir();
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root, failed = 0, again = 0;
	pid_t renamer;

	unit_mkdirs(dir, "d");
	free(unit_write(dir, "f", "x"));
	free(unit_write(dir, "r1", ""));
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root, 0);
	renamer = fork();
	ck_assert_int_ge(renamer, 0);
	if (renamer == 0) {
		for (;;) {
			renameat(root, "r1", root, "r2");
			renameat(root, "r2", root, "r1");
		}
	}
	for (int i = 0; i < 20000; i++) {
		int fd = cordon_openat2(root, "d/../f", &how, sizeof(how));

		if (fd < 0) {
			failed++;
			again += errno == EAGAIN;
		} else {
			close(fd);
		}
	}
	kill(renamer, SIGKILL);
	waitpid(renamer, NULL, 0);
	close(root);
	unit_rm_rf(dir);
	ck_assert_msg(failed == 0, "%d of 20000 opens failed (%d with EAGAIN)", failed, again);
}
END_TEST

/*
 * The walk cordon_openat2 falls back to must answer as the kernel's own:
 * for every path of a tree with links of each kind (absolute, relative,
 * out through "..", to a directory, chained, dangling, a loop), and under
 * every flag and resolve mode cordon uses, the same object or the same
 * errno. Also /proc from "/": magic links refused, /proc/self followed.
 */
static void scoped_same(int root, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };
	int kfd, kerr, wfd, werr;
	struct stat kst, wst;

	/*
	 * The kernel's EAGAIN is not an answer: any rename on the machine
	 * during a walk through '..' gives it (cordon_openat2 retries too).
	 */
	for (int tries = 0;; tries++) {
		kfd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		kerr = errno;
		if (kfd >= 0 || kerr != EAGAIN || tries == 10000)
			break;
	}
	wfd = cordon_openat2_walk(root, path, &how);
	werr = errno;
	if (kfd < 0 || wfd < 0)
		ck_assert_msg(kfd < 0 && wfd < 0 && kerr == werr,
			      "%s (flags %#llx resolve %#llx): kernel %s, walk %s", path,
			      (unsigned long long)flags, (unsigned long long)resolve,
			      kfd < 0 ? strerror(kerr) : "opens", wfd < 0 ? strerror(werr) : "opens");
	else
		ck_assert_msg(fstat(kfd, &kst) == 0 && fstat(wfd, &wst) == 0 &&
				      kst.st_dev == wst.st_dev && kst.st_ino == wst.st_ino,
			      "%s (flags %#llx resolve %#llx): another object", path,
			      (unsigned long long)flags, (unsigned long long)resolve);
	if (kfd >= 0)
		close(kfd);
	if (wfd >= 0)
		close(wfd);
}

START_TEST(openat2_walk_as_the_kernel)
{
	static const char *const links[][2] = {
		{ "abs", "/d/g" },	{ "rel", "d/g" },     { "up", "../../../f" },
		{ "dl", "d" },		{ "el", "d/e" },      { "loop", "loop" },
		{ "dang", "nowhere" },	{ "dangdir", "no/x" }, { "c1", "c2" },
		{ "c2", "el/../e" },	{ "d/e/top", "/" },   { "d/e/back", "../../f" },
		{ "slash", "d/" },	{ "absup", "/../d/../../f" },
	};
	static const char *const paths[] = {
		"", ".", "..", "/", "f", "d", "d/", "d/g", "d/g/", "d/g/x", "d/../f", "../f",
		"../../d/e/../g", "/f", "/d/../../f", "f/", "abs", "abs/", "rel", "up", "dl",
		"dl/", "dl/g", "dl/../f", "dl/e/..", "el/../g", "el/..", "loop", "loop/x",
		"dang", "dangdir", "c1", "c1/../g", "c1/..", "d/e/top", "d/e/top/f",
		"d/e/back", "d/e/back/", "slash", "slash/g", "absup", "nothing", "nothing/x",
		"d//e///..//g", "./d/./e/./../g", "long", "long/", "el/", "el//", "c1/", "dang/",
		"loop/", "d/e/top/",
	};
	static const uint64_t flags[] = {
		O_PATH, O_PATH | O_NOFOLLOW, O_RDONLY, O_RDONLY | O_DIRECTORY,
		O_PATH | O_DIRECTORY, O_RDONLY | O_NOFOLLOW,
	};
	static const uint64_t resolves[] = {
		RESOLVE_IN_ROOT,
		RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		RESOLVE_BENEATH,
		RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
		RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS,
		RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		RESOLVE_IN_ROOT | RESOLVE_NO_XDEV,
	};
	static const char *const proc_paths[] = {
		"proc/self/status", "proc/self/exe", "proc/self/cwd/", "proc/self/root/etc",
		"proc/mounts", "proc/self/fd/0", "proc/self/ns/mnt", "proc/thread-self/status",
	};
	_cleanup_free_ char *dir = unit_tmpdir();
	int root, slash;

	unit_mkdirs(dir, "d/e");
	free(unit_write(dir, "f", "x"));
	free(unit_write(dir, "d/g", "y"));
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root, 0);
	for (size_t i = 0; i < ARRAY_SIZE(links); i++)
		ck_assert_int_eq(symlinkat(links[i][1], root, links[i][0]), 0);
	{
		/* The longest text a link can have: PATH_MAX - 1 bytes. */
		char longest[PATH_MAX];

		for (size_t i = 0; i + 2 < sizeof(longest) - 1; i += 2)
			memcpy(longest + i, "./", 2);
		memcpy(longest + sizeof(longest) - 2, "f", 2);
		ck_assert_int_eq(strlen(longest), PATH_MAX - 1);
		ck_assert_int_eq(symlinkat(longest, root, "long"), 0);
	}
	for (size_t r = 0; r < ARRAY_SIZE(resolves); r++)
		for (size_t f = 0; f < ARRAY_SIZE(flags); f++)
			for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
				scoped_same(root, paths[i], flags[f], resolves[r]);
	slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(slash, 0);
	for (size_t r = 0; r < ARRAY_SIZE(resolves); r++)
		for (size_t i = 0; i < ARRAY_SIZE(proc_paths); i++)
			scoped_same(slash, proc_paths[i], O_PATH, resolves[r]);
	close(slash);
	close(root);
	unit_rm_rf(dir);
}
END_TEST

/*
 * The fallback itself never meets the kernel's EAGAIN: beside a renamer,
 * every walk through 100 ".." (as a rootfs's link chain may be) opens.
 */
START_TEST(openat2_walk_survives_renames)
{
	_cleanup_free_ char *dir = unit_tmpdir();
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *dots = cordon_xstrdup("");
	int root, failed = 0, first = 0;
	pid_t renamer;

	for (int i = 0; i < 100; i++) {
		char *more = cordon_xasprintf("%sd/../", dots);

		free(dots);
		dots = more;
	}
	unit_mkdirs(dir, "d");
	free(unit_write(dir, "f", "x"));
	free(unit_write(dir, "r1", ""));
	root = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root, 0);
	{
		_cleanup_free_ char *target = cordon_xasprintf("%sf", dots);

		ck_assert_int_eq(symlinkat(target, root, "l"), 0);
	}
	renamer = fork();
	ck_assert_int_ge(renamer, 0);
	if (renamer == 0) {
		for (;;) {
			renameat(root, "r1", root, "r2");
			renameat(root, "r2", root, "r1");
		}
	}
	for (int i = 0; i < 2000; i++) {
		int fd = cordon_openat2_walk(root, i % 2 ? "l" : "d/../l", &how);

		if (fd < 0) {
			if (!failed++)
				first = errno;
		} else {
			close(fd);
		}
	}
	kill(renamer, SIGKILL);
	waitpid(renamer, NULL, 0);
	close(root);
	unit_rm_rf(dir);
	ck_assert_msg(failed == 0, "%d of 2000 walks failed (the first: %s)", failed,
		      strerror(first));
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("core");
	TCase *tc;

	tc = tcase_create("openat2");
	/* A fixed count of opens beside a renamer: seconds on a loaded machine, more under ASan. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, openat2_in_root_survives_renames);
	tcase_add_test(tc, openat2_walk_as_the_kernel);
	tcase_add_test(tc, openat2_walk_survives_renames);
	suite_add_tcase(s, tc);

	tc = tcase_create("error");
	tcase_add_test(tc, error_set_fills_fields);
	tcase_add_test(tc, error_set_truncates_long_message);
	tcase_add_test(tc, error_wrap_prefixes_context);
	tcase_add_test(tc, error_wrap_long_context_stays_terminated);
	tcase_add_test(tc, error_message_appends_strerror);
	tcase_add_test(tc, error_print_one_line_with_code);
	tcase_add_test(tc, error_print_flattens_newlines);
	tcase_add_test(tc, code_names_are_stable);
	tcase_add_test(tc, code_name_out_of_range);
	tcase_add_test(tc, warn_is_one_prefixed_line);
	tcase_add_test(tc, log_file_json_lines);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse");
	tcase_add_test(tc, parse_u64_accepts_plain_decimal);
	tcase_add_test(tc, parse_u64_rejects);
	tcase_add_test(tc, parse_u64_overflow);
	tcase_add_test(tc, parse_seconds_ms_values);
	tcase_add_test(tc, parse_seconds_ms_rejects);
	suite_add_tcase(s, tc);

	tc = tcase_create("memory");
	tcase_add_test(tc, strv_push_copies_and_terminates);
	tcase_add_test(tc, strv_free_null_and_cleanup);
	tcase_add_test(tc, take_ptr_and_fd);
	tcase_add_test(tc, xasprintf_formats);
	tcase_add_test(tc, clocks_move_forward);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, files_setup, files_teardown);
	tcase_add_test(tc, write_then_read_file_at);
	tcase_add_test(tc, write_file_at_does_not_create);
	tcase_add_test(tc, write_file_at_absolute_path);
	tcase_add_test(tc, read_file_at_empty_missing_and_dir);
	tcase_add_test(tc, read_file_at_large);
	tcase_add_test(tc, read_file_at_proc);
	tcase_add_test(tc, write_all_regular_file_and_bad_fd);
	tcase_add_test(tc, replace_exchange_swaps_and_unlinks);
	suite_add_tcase(s, tc);

	tc = tcase_create("input");
	tcase_add_checked_fixture(tc, files_setup, files_teardown);
	tcase_add_test(tc, input_read_regular);
	tcase_add_test(tc, input_read_fifo_refused_at_once);
	tcase_add_test(tc, input_read_devices_and_dirs_refused);
	tcase_add_test(tc, input_read_oversize_refused);
	tcase_add_test(tc, input_read_counts_what_it_reads);
	tcase_add_test(tc, input_read_missing_and_fd);
	suite_add_tcase(s, tc);

	tc = tcase_create("path");
	tcase_add_checked_fixture(tc, files_setup, files_teardown);
	tcase_add_test(tc, path_open_follows_own_links);
	tcase_add_test(tc, path_open_errors);
	tcase_add_test(tc, path_reopen_refuses_another_object);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_add_test(tc, json_depth_counts_containers);
	tcase_add_test(tc, json_depth_skips_strings);
	tcase_add_test(tc, json_depth_refuses_comments);
	tcase_add_test(tc, json_depth_limit);
	tcase_add_test(tc, json_depth_stops_early);
	tcase_add_test(tc, json_parse_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(core_suite());
}
