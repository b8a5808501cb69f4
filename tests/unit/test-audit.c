// SPDX-License-Identifier: Apache-2.0
/* The audit log's redaction, its strings, its cap (src/audit/, docs/audit.md). */
#include <yajl/yajl_tree.h>

#include "cordon/audit.h"
#include "unit.h"

static char *dir;
static int dir_fd = -1;
static struct cordon_spec spec;
static struct cordon_audit *audit;

static void setup(void)
{
	struct cordon_error err = { 0 };

	dir = unit_tmpdir();
	dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dir_fd, 0);
	cordon_spec_init(&spec);
	spec.id = strdup("t1");
	spec.audit.dir = strdup(dir); /* never the host's audit directory */
	spec.audit.max_bytes = 8192;
	ck_assert_int_eq(cordon_audit_flag_redact(&spec, "corp-[0-9]{4}", &err), 0);
	audit = cordon_audit_start(&spec, dir_fd, &err);
	ck_assert_msg(audit != NULL, "%s", err.msg);
}

static void teardown(void)
{
	cordon_audit_close(audit);
	cordon_spec_free(&spec);
	close(dir_fd);
	unit_rm_rf(dir);
	free(dir);
}

/* The log's lines (malloc'd text), and how many. */
static char *log_text(size_t *lines)
{
	char *text = NULL, path[PATH_MAX];
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, CORDON_AUDIT_FILE);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(getdelim(&text, &len, '\0', f), 0);
	fclose(f);
	*lines = 0;
	for (char *p = text; *p; p++)
		*lines += *p == '\n';
	return text;
}

START_TEST(default_rules_hide_tokens)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "AKIAABCDEFGHIJKLMNOP", "[REDACTED]" },
		{ "x=ghp_abcdefghijklmnopqrstuvwxyz0123456789!", "x=[REDACTED]!" },
		{ "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz", "[REDACTED]" },
		{ "xoxb-123-abc", "[REDACTED]" },
		{ "Authorization: Bearer abc.def", "Authorization: [REDACTED]" },
		{ "PASSWORD=hunter2&x=1", "[REDACTED]&x=1" },
		{ "api_key: k1", "[REDACTED]" },
		{ "https://u:p4ss@example.org/", "https[REDACTED]example.org/" },
		{ "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n", "[REDACTED]" },
		{ "id=corp-1234 ok", "id=[REDACTED] ok" }, /* --audit-redact */
		{ "plain words stay", "plain words stay" },
		{ "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = cordon_audit_redact(audit, cases[i].in);

		ck_assert_msg(strcmp(got, cases[i].out) == 0, "'%s': got '%s', want '%s'",
			      cases[i].in, got, cases[i].out);
		free(got);
	}
}
END_TEST

/*
 * A rule that matches the empty string at a word's end ('$', '[0-9]*$'):
 * the word's bytes, its matches hidden, and nothing read past its NUL
 * (the ASan build reads past a strdup'd word's end otherwise).
 */
START_TEST(empty_match_at_end_stays_in_the_word)
{
	static const struct {
		const char *rule, *in, *out;
	} cases[] = {
		{ "$", "hello-world", "hello-world" },
		{ "[0-9]*$", "hello-world", "hello-world" },
		{ "[0-9]*$", "abc123", "abc[REDACTED]" },
		{ "x*", "axbx", "a[REDACTED]b[REDACTED]" },
		{ "[0-9]*$", "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cordon_error err = { 0 };
		struct cordon_spec s;
		struct cordon_audit *a;
		char *d = unit_tmpdir(), *word, *got;
		int fd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);

		ck_assert_int_ge(fd, 0);
		cordon_spec_init(&s);
		s.id = strdup("t2");
		s.audit.dir = strdup(d);
		ck_assert_int_eq(cordon_audit_flag_redact(&s, cases[i].rule, &err), 0);
		a = cordon_audit_start(&s, fd, &err);
		ck_assert_msg(a != NULL, "%s", err.msg);
		word = strdup(cases[i].in); /* exactly its bytes on the heap */
		got = cordon_audit_redact(a, word);
		ck_assert_msg(strcmp(got, cases[i].out) == 0, "'%s' by '%s': got '%s', want '%s'",
			      cases[i].in, cases[i].rule, got, cases[i].out);
		free(got);
		free(word);
		cordon_audit_close(a);
		cordon_spec_free(&s);
		close(fd);
		unit_rm_rf(d);
		free(d);
	}
}
END_TEST

/* Hostile bytes: one line, valid JSON, the strings back as well-formed UTF-8. */
START_TEST(exec_line_is_one_valid_object)
{
	const char *argv[] = { "a\"b\\c\n{\"event\":\"create\"}", "\xff\xfe", "\x01\x1b[31m",
			       "--token", "t0psecret", NULL };
	struct cordon_error err = { 0 };
	char *text, *exec_line, why[256];
	size_t lines;
	yajl_val tree, v;
	const char *p_argv[] = { "argv", NULL }, *p_event[] = { "event", NULL };
	const char *p_label[] = { "labels", "k\xef\xbf\xbd", NULL };
	const char *keys[] = { "k\xff" }, *values[] = { "v\"\n" };

	/* Labels are the caller's bytes, keys as much as values. */
	cordon_audit_set_labels(audit, keys, values, 1);

	ck_assert_int_eq(cordon_audit_exec(audit,
					   &(struct cordon_audit_exec){ .argv = argv,
									.exit_code = 3 },
					   &err),
			 0);
	text = log_text(&lines);
	/* The create event cordon_audit_start wrote, then the exec's. */
	ck_assert_uint_eq(lines, 2);
	ck_assert_ptr_null(strstr(text, "t0psecret"));
	exec_line = strchr(text, '\n') + 1;
	tree = yajl_tree_parse(exec_line, why, sizeof(why));
	ck_assert_msg(tree != NULL, "%s: %s", why, exec_line);
	ck_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(tree, p_event, yajl_t_string)), "exec");
	v = yajl_tree_get(tree, p_argv, yajl_t_array);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(YAJL_GET_ARRAY(v)->len, 5);
	ck_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(v)->values[0]), argv[0]);
	ck_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(v)->values[1]), "\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(YAJL_GET_STRING(YAJL_GET_ARRAY(v)->values[4]), "[REDACTED]");
	v = yajl_tree_get(tree, p_label, yajl_t_string);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(YAJL_GET_STRING(v), "v\"\n");
	yajl_tree_free(tree);
	free(text);
}
END_TEST

/* Past its share a line is dropped whole and counted; the cleanup keeps its reserve. */
START_TEST(cap_drops_whole_lines)
{
	struct cordon_error err = { 0 };
	uint64_t capped, rate;
	size_t lines;
	char *text;

	for (int i = 0; i < 200; i++)
		cordon_audit_dns(audit, &(struct cordon_audit_dns){ .name = "flood.example",
								     .qtype = 1 });
	ck_assert_int_eq(cordon_audit_cleanup(audit, NULL, 0, NULL, &err), 0);
	cordon_audit_dropped(audit, &capped, &rate);
	ck_assert_uint_gt(capped + rate, 0);
	text = log_text(&lines);
	ck_assert_uint_le(strlen(text), 8192);
	ck_assert_ptr_nonnull(strstr(text, "\"event\":\"cleanup\""));
	ck_assert(text[strlen(text) - 1] == '\n');
	free(text);
}
END_TEST

/* The number of lines of text holding needle. */
static size_t lines_with(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *hit = strstr(l, needle);

		n += hit && (!end || hit < end);
	}
	return n;
}

/* The cleanup line's dropped.cap. */
static long long cleanup_cap(const char *text)
{
	const char *c = strstr(text, "\"event\":\"cleanup\""), *d;

	ck_assert_ptr_nonnull(c);
	d = strstr(c, "\"dropped\":{\"cap\":");
	ck_assert_ptr_nonnull(d);
	return atoll(d + strlen("\"dropped\":{\"cap\":"));
}

/*
 * An argv far past a line's 64 KiB (70 words of 1000 bytes; 300 words of
 * 1024 control bytes, each \u00XX in JSON) is cut, never dropped: one
 * line, argv_truncated, argc and the digest of the whole.
 */
START_TEST(exec_argv_cut_not_dropped)
{
	static const struct {
		size_t words, len;
		char byte;
	} cases[] = { { 70, 1000, 'A' }, { 300, 1024, '\x01' }, { 3, 2000, 'b' } };

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct cordon_error err = { 0 };
		struct cordon_spec s;
		struct cordon_audit *a;
		struct cordon_sha256 digest;
		char *d = unit_tmpdir(), **argv = calloc(cases[c].words + 1, sizeof(char *));
		char *text, *saved = dir, why[256], hex[65];
		int fd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
		uint8_t sum[32];
		size_t lines;
		yajl_val tree, v;
		const char *p_argv[] = { "argv", NULL }, *p_trunc[] = { "argv_truncated", NULL };
		const char *p_argc[] = { "argc", NULL }, *p_sha[] = { "argv_sha256", NULL };
		const char *exec_line;

		cordon_spec_init(&s);
		s.id = strdup("t3");
		s.audit.dir = strdup(d);
		s.audit.max_bytes = 1 << 20;
		a = cordon_audit_start(&s, fd, &err);
		ck_assert_msg(a != NULL, "%s", err.msg);
		cordon_sha256_init(&digest);
		for (size_t i = 0; i < cases[c].words; i++) {
			argv[i] = malloc(cases[c].len + 1);
			memset(argv[i], cases[c].byte, cases[c].len);
			argv[i][cases[c].len] = '\0';
			cordon_sha256_update(&digest, argv[i], cases[c].len + 1);
		}
		cordon_sha256_final(&digest, sum);
		cordon_hex(sum, sizeof(sum), hex);
		ck_assert_int_eq(cordon_audit_exec(a,
						   &(struct cordon_audit_exec){
							   .argv = (const char *const *)argv,
							   .exit_code = 0 },
						   &err),
				 0);
		dir = d;
		text = log_text(&lines);
		dir = saved;
		/* The create event cordon_audit_start wrote, then the exec's. */
		ck_assert_uint_eq(lines, 2);
		exec_line = strchr(text, '\n') + 1;
		ck_assert_uint_lt(strlen(exec_line), 64 * 1024);
		tree = yajl_tree_parse(exec_line, why, sizeof(why));
		ck_assert_msg(tree != NULL, "%s", why);
		v = yajl_tree_get(tree, p_argv, yajl_t_array);
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_gt(YAJL_GET_ARRAY(v)->len, 0);
		ck_assert(YAJL_IS_TRUE(yajl_tree_get(tree, p_trunc, yajl_t_true)));
		ck_assert_int_eq(YAJL_GET_INTEGER(yajl_tree_get(tree, p_argc, yajl_t_number)),
				 (long long)cases[c].words);
		ck_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(tree, p_sha, yajl_t_string)), hex);
		yajl_tree_free(tree);
		free(text);
		for (size_t i = 0; i < cases[c].words; i++)
			free(argv[i]);
		free(argv);
		cordon_audit_close(a);
		cordon_spec_free(&s);
		close(fd);
		unit_rm_rf(d);
		free(d);
	}
}
END_TEST

/*
 * A session exec's denied event (per_exec) is the workload's to size and
 * to repeat: it stops at the workload's three quarters of the cap, and
 * the callers' exec events keep the rest (up to the reserves) in full. A
 * run's one denied event is the callers'.
 */
START_TEST(exec_denied_in_workload_share)
{
	const char *argv[] = { "owner-command", NULL };
	struct cordon_nft_drop d[CORDON_AUDIT_DROPS_MAX];
	struct cordon_error err = { 0 };
	struct cordon_spec s;
	struct cordon_audit *a;
	char *d_dir = unit_tmpdir(), *saved = dir, *text, *last_denied;
	int fd = open(d_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t lines, end;

	memset(d, 0, sizeof(d));
	for (size_t i = 0; i < CORDON_AUDIT_DROPS_MAX; i++) {
		d[i].addr.family = AF_INET;
		memcpy(d[i].addr.u.bytes, (uint8_t[]){ 198, 51, 100, (uint8_t)i }, 4);
		d[i].packets = 1000 + i;
		d[i].bytes = 60000 + i;
	}
	cordon_spec_init(&s);
	s.id = strdup("t4");
	s.audit.dir = strdup(d_dir);
	s.audit.max_bytes = 128 * 1024;
	a = cordon_audit_start(&s, fd, &err);
	ck_assert_msg(a != NULL, "%s", err.msg);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(cordon_audit_denied(a, d, CORDON_AUDIT_DROPS_MAX, 64000, 3840000,
						     true, &err),
				 0);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(cordon_audit_exec(a,
						   &(struct cordon_audit_exec){ .argv = argv,
										.exit_code = 0 },
						   &err),
				 0);
	dir = d_dir;
	text = log_text(&lines);
	dir = saved;
	last_denied = strstr(text, "\"event\":\"denied\"");
	ck_assert_ptr_nonnull(last_denied);
	for (char *p = last_denied; (p = strstr(p + 1, "\"event\":\"denied\"")); )
		last_denied = p;
	end = (size_t)(strchr(last_denied, '\n') - text) + 1;
	ck_assert_uint_le(end, 96 * 1024);
	ck_assert_uint_eq(lines_with(text, "\"owner-command\""), 10);
	free(text);
	/* The run's own: the callers' share, past the workload's. */
	ck_assert_int_eq(cordon_audit_denied(a, d, 4, 4000, 240000, false, &err), 0);
	dir = d_dir;
	text = log_text(&lines);
	dir = saved;
	ck_assert_uint_gt(strlen(text), 96 * 1024);
	ck_assert_ptr_nonnull(strstr(text + end, "\"event\":\"denied\""));
	free(text);
	cordon_audit_close(a);
	cordon_spec_free(&s);
	close(fd);
	unit_rm_rf(d_dir);
	free(d_dir);
}
END_TEST

/*
 * At the cap every exec leaves a trace: its record, a minimal record in
 * the reserve made for them, or a count in the cleanup; the drops of a
 * later command (cordon exec, its own writer) are in the supervisor's
 * cleanup too.
 */
START_TEST(cap_every_exec_leaves_a_trace)
{
	struct cordon_error err = { 0 };
	struct cordon_audit *later = cordon_audit_open_state(dir_fd, "t1", &err);
	size_t lines, full, minimal;
	char *text, word[32];

	ck_assert_msg(later != NULL, "%s", err.msg);
	for (int i = 0; i < 60; i++) {
		const char *argv[] = { "true", word, NULL };

		snprintf(word, sizeof(word), "command-%d", i);
		ck_assert_int_eq(cordon_audit_exec(i % 2 ? later : audit,
						   &(struct cordon_audit_exec){ .argv = argv },
						   &err),
				 0);
	}
	cordon_audit_close(later);
	ck_assert_int_eq(cordon_audit_cleanup(audit, NULL, 0, NULL, &err), 0);
	text = log_text(&lines);
	ck_assert_uint_le(strlen(text), 8192);
	full = lines_with(text, "\"argv\":[\"true\"");
	minimal = lines_with(text, "\"argv\":[],\"argv_truncated\":true,\"argc\":2,");
	ck_assert_uint_gt(full, 0);
	ck_assert_uint_gt(minimal, 0);
	ck_assert_uint_eq(full + minimal + (size_t)cleanup_cap(text), 60);
	free(text);
}
END_TEST

static Suite *audit_suite(void)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("audit");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, default_rules_hide_tokens);
	tcase_add_test(tc, empty_match_at_end_stays_in_the_word);
	tcase_add_test(tc, exec_line_is_one_valid_object);
	tcase_add_test(tc, cap_drops_whole_lines);
	tcase_add_test(tc, exec_argv_cut_not_dropped);
	tcase_add_test(tc, cap_every_exec_leaves_a_trace);
	tcase_add_test(tc, exec_denied_in_workload_share);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(audit_suite());
}
