// SPDX-License-Identifier: Apache-2.0
/* `cordon run` argument parsing: the forms, the flag spellings, the errors. */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "unit.h"

static int parse(struct cordon_spec *spec, bool *help, struct cordon_error *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, err);
	for (char *a; (a = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	cordon_spec_init(spec);
	memset(err, 0, sizeof(*err));
	return cli_run_parse(argc, argv, spec, help, err);
}

START_TEST(rootfs_then_command)
{
	struct cordon_spec s;
	struct cordon_error err;
	bool help;

	ck_assert_int_eq(parse(&s, &help, &err, "/r", "sh", "-c", "echo --x", NULL), 0);
	ck_assert_str_eq(s.rootfs, "/r");
	ck_assert_str_eq(s.argv[0], "sh");
	/* options stop at ROOTFS: the workload's own flags stay its own */
	ck_assert_str_eq(s.argv[1], "-c");
	ck_assert_str_eq(s.argv[2], "echo --x");
	ck_assert_ptr_null(s.argv[3]);
	cordon_spec_free(&s);

	ck_assert_int_eq(parse(&s, &help, &err, "/r", "--", "--version", NULL), 0);
	ck_assert_str_eq(s.rootfs, "/r");
	ck_assert_str_eq(s.argv[0], "--version");
	cordon_spec_free(&s);
}
END_TEST

START_TEST(no_rootfs_after_double_dash)
{
	struct cordon_spec s;
	struct cordon_error err;
	bool help;

	ck_assert_int_eq(parse(&s, &help, &err, "--hostname", "h", "--", "true", NULL), 0);
	ck_assert_ptr_null(s.rootfs);
	ck_assert_str_eq(s.hostname, "h");
	ck_assert_str_eq(s.argv[0], "true");
	cordon_spec_free(&s);
}
END_TEST

START_TEST(both_flag_spellings)
{
	struct cordon_spec s;
	struct cordon_error err;
	bool help;

	ck_assert_int_eq(parse(&s, &help, &err, "--timeout=1.5", "--kill-after", "2", "--pids=7",
			       "--memory", "64", "--cap-add=NET_RAW,chown", "--", "true", NULL),
			 0);
	ck_assert_uint_eq(s.timeout_ms, 1500);
	ck_assert_uint_eq(s.kill_after_ms, 2000);
	ck_assert_uint_eq(s.limits.pids, 7);
	ck_assert_uint_eq(s.limits.memory, 64ULL << 20);
	ck_assert_uint_eq(s.cap_add, (1ULL << 13) | (1ULL << 0)); /* NET_RAW, CHOWN */
	cordon_spec_free(&s);
}
END_TEST

START_TEST(help_stops_parsing)
{
	struct cordon_spec s;
	struct cordon_error err;
	bool help;

	ck_assert_int_eq(parse(&s, &help, &err, "-h", "--bogus", NULL), 0);
	ck_assert(help);
	cordon_spec_free(&s);
}
END_TEST

START_TEST(errors_name_the_flag)
{
	static const struct {
		const char *args[4];
		const char *in_message;
	} cases[] = {
		{ { "--bogus", "/r", "true" }, "--bogus" },
		{ { "--timeout" }, "--timeout needs a value" },
		{ { "--overlay=yes", "/r", "true" }, "--overlay takes no value" },
		{ { "--timeout", "soon", "/r" }, "--timeout" },
		{ { "--userns", "nope", "/r" }, "--userns" },
		{ { "--limits", "maybe", "/r" }, "--limits" },
		{ { "--seccomp", "off", "/r" }, "--seccomp" },
		{ { "--cpus", "0", "/r" }, "--cpus" },
		{ { "/r" }, "no command" },
		{ { "-x", "/r", "true" }, "'-x'" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cordon_spec s;
		struct cordon_error err;
		bool help;
		const char *const *a = cases[i].args;

		ck_assert_int_lt(parse(&s, &help, &err, a[0], a[1], a[2], a[3], NULL), 0);
		ck_assert_int_eq(err.code, CORDON_E_USAGE);
		ck_assert_msg(strstr(err.msg, cases[i].in_message), "case %zu: '%s' lacks '%s'", i,
			      err.msg, cases[i].in_message);
		cordon_spec_free(&s);
	}
}
END_TEST

START_TEST(print_profile_needs_no_command)
{
	struct cordon_spec s;
	struct cordon_error err;
	bool help;

	ck_assert_int_eq(parse(&s, &help, &err, "--print-profile", "/r", NULL), 0);
	ck_assert(s.print_profile);
	ck_assert_ptr_null(s.argv);
	cordon_spec_free(&s);
}
END_TEST

/* --result-json: its directory opened and its name split off when the flag is read. */
START_TEST(result_json_target)
{
	char dir[] = "/tmp/cordon-unit-result.XXXXXX";
	_cleanup_free_ char *path = NULL, *link = NULL, *slash = NULL;
	struct cordon_spec s;
	struct cordon_error err;
	struct stat a, b;
	bool help;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	path = cordon_xasprintf("%s/run.json", dir);
	link = cordon_xasprintf("%s/link.json", dir);
	slash = cordon_xasprintf("%s/", dir);
	ck_assert_int_eq(symlink("/nonexistent", link), 0);

	ck_assert_int_eq(parse(&s, &help, &err, "--result-json", path, "/r", "true", NULL), 0);
	ck_assert_str_eq(s.result_json, path);
	ck_assert_str_eq(s.result_name, "run.json");
	ck_assert_int_ge(s.result_dir_fd, 0);
	ck_assert_int_eq(fstat(s.result_dir_fd, &a), 0);
	ck_assert_int_eq(stat(dir, &b), 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	cordon_spec_free(&s);
	ck_assert_int_eq(s.result_dir_fd, -1);

	/* Given twice: the second wins (its directory, the cwd, is the one held). */
	ck_assert_int_eq(parse(&s, &help, &err, "--result-json", path, "--result-json", "x.json",
			       "/r", "true", NULL),
			 0);
	ck_assert_str_eq(s.result_name, "x.json");
	ck_assert_int_eq(fstat(s.result_dir_fd, &a), 0);
	ck_assert_int_eq(stat(".", &b), 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	cordon_spec_free(&s);

	ck_assert_int_lt(parse(&s, &help, &err, "--result-json", link, "/r", "true", NULL), 0);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	ck_assert_msg(strstr(err.msg, "link.json") && strstr(err.msg, "symbolic link"), "%s",
		      err.msg);
	ck_assert_ptr_null(s.result_json);
	cordon_spec_free(&s);

	ck_assert_int_lt(parse(&s, &help, &err, "--result-json", dir, "/r", "true", NULL), 0);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	cordon_spec_free(&s);

	ck_assert_int_lt(parse(&s, &help, &err, "--result-json", slash, "/r", "true", NULL), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_msg(strstr(err.msg, "file name"), "%s", err.msg);
	cordon_spec_free(&s);

	unlink(link);
	rmdir(dir);
}
END_TEST

/* --- cordon spec --------------------------------------------------------- */

static int spec_parse(struct cli_spec_args *a, struct cordon_error *err, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, err);
	for (char *x; (x = va_arg(ap, char *)) && argc < 15;)
		argv[argc++] = x;
	va_end(ap);
	argv[argc] = NULL;
	memset(err, 0, sizeof(*err));
	return cli_spec_parse(argc, argv, a, err);
}

START_TEST(spec_args)
{
	struct cli_spec_args a;
	struct cordon_error err;

	ck_assert_int_eq(spec_parse(&a, &err, NULL), 0);
	ck_assert_str_eq(a.bundle, ".");
	ck_assert(!a.rootless && !a.help);
	ck_assert_int_eq(spec_parse(&a, &err, "--rootless", "-b", "/x", NULL), 0);
	ck_assert(a.rootless);
	ck_assert_str_eq(a.bundle, "/x");
	ck_assert_int_eq(spec_parse(&a, &err, "--bundle=/y", NULL), 0);
	ck_assert_str_eq(a.bundle, "/y");
	ck_assert_int_eq(spec_parse(&a, &err, "--bundle", "/z", "-h", NULL), 0);
	ck_assert(a.help);
}
END_TEST

START_TEST(spec_args_errors)
{
	struct cli_spec_args a;
	struct cordon_error err;

	ck_assert_int_lt(spec_parse(&a, &err, "-b", NULL), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_int_lt(spec_parse(&a, &err, "--bundle", NULL), 0);
	ck_assert_msg(strstr(err.msg, "--bundle"), "%s", err.msg);
	ck_assert_int_lt(spec_parse(&a, &err, "--bundle=", NULL), 0);
	ck_assert_msg(strstr(err.msg, "empty"), "%s", err.msg);
	ck_assert_int_lt(spec_parse(&a, &err, "--rootless=yes", NULL), 0);
	ck_assert_int_lt(spec_parse(&a, &err, "extra", NULL), 0);
	ck_assert_msg(strstr(err.msg, "extra"), "%s", err.msg);
}
END_TEST

START_TEST(signal_names)
{
	static const struct {
		const char *text;
		int sig;
	} ok[] = {
		{ "TERM", SIGTERM }, { "SIGTERM", SIGTERM }, { "sigkill", SIGKILL }, { "hup", SIGHUP },
		{ "9", 9 },	     { "USR1", SIGUSR1 },	{ "SIGWINCH", SIGWINCH },
		{ "RTMIN", 0 },      { "RTMIN+2", 2 },	{ "SIGRTMAX-1", -1 },
	};
	static const char *const bad[] = { "FOO", "0", "65", "SIG", "", "TERM2", "RTMIN-1", "-9" };
	struct cordon_error err;
	int sig;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		int want = ok[i].sig;

		if (strstr(ok[i].text, "RTMIN"))
			want = SIGRTMIN + ok[i].sig;
		else if (strstr(ok[i].text, "RTMAX"))
			want = SIGRTMAX + ok[i].sig;
		ck_assert_msg(cli_signal_parse(ok[i].text, &sig, &err) == 0, "%s refused", ok[i].text);
		ck_assert_int_eq(sig, want);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ck_assert_msg(cli_signal_parse(bad[i], &sig, &err) < 0, "'%s' accepted", bad[i]);
		ck_assert_int_eq(err.code, CORDON_E_USAGE);
	}
}
END_TEST

enum { T_ALL, T_BUNDLE, T_HELP };

static const struct cli_flag oci_flags[] = {
	{ "all", T_ALL, false, 'a' },
	{ "bundle", T_BUNDLE, true, 'b' },
	{ "help", T_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct seen {
	bool all, help;
	const char *bundle;
};

static int record(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct seen *s = ctx;

	(void)err;
	if (id == T_ALL)
		s->all = true;
	else if (id == T_BUNDLE)
		s->bundle = value;
	else
		s->help = true;
	return 0;
}

START_TEST(oci_args)
{
	char *argv1[] = { "-b", "/b", "id", "-a", NULL };
	char *argv2[] = { "--bundle=/c", "--", "-id-", NULL };
	char *argv3[] = { "id", "x", "y", NULL };
	char *argv4[] = { "-b", NULL };
	char *argv5[] = { "-z", "id", NULL };
	const char *pos[2];
	struct cordon_error err;
	struct seen s = { 0 };
	int n;

	ck_assert_int_eq(cli_parse_args(oci_flags, T_HELP, 4, argv1, record, &s, pos, 2, &n, &err), 0);
	ck_assert(s.all);
	ck_assert_str_eq(s.bundle, "/b");
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(pos[0], "id");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(cli_parse_args(oci_flags, T_HELP, 3, argv2, record, &s, pos, 2, &n, &err), 0);
	ck_assert_str_eq(s.bundle, "/c");
	ck_assert_str_eq(pos[0], "-id-");
	ck_assert_int_lt(cli_parse_args(oci_flags, T_HELP, 3, argv3, record, &s, pos, 2, &n, &err), 0);
	ck_assert(strstr(err.msg, "'y'"));
	ck_assert_int_lt(cli_parse_args(oci_flags, T_HELP, 1, argv4, record, &s, pos, 2, &n, &err), 0);
	ck_assert(strstr(err.msg, "-b needs a value"));
	ck_assert_int_lt(cli_parse_args(oci_flags, T_HELP, 2, argv5, record, &s, pos, 2, &n, &err), 0);
	ck_assert(strstr(err.msg, "-z"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("run");

	tcase_add_test(tc, rootfs_then_command);
	tcase_add_test(tc, no_rootfs_after_double_dash);
	tcase_add_test(tc, both_flag_spellings);
	tcase_add_test(tc, help_stops_parsing);
	tcase_add_test(tc, errors_name_the_flag);
	tcase_add_test(tc, print_profile_needs_no_command);
	tcase_add_test(tc, result_json_target);
	suite_add_tcase(s, tc);

	tc = tcase_create("spec");
	tcase_add_test(tc, spec_args);
	tcase_add_test(tc, spec_args_errors);
	tcase_add_test(tc, signal_names);
	tcase_add_test(tc, oci_args);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
