// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/spec: flag value parsers, lexical checks, and
 * cordon_spec_finalize against a fixture rootfs in a temporary directory.
 */
#include <dirent.h>
#include <string.h>

#include "cordon/spec.h"
#include "unit.h"

static bool error_mentions(const struct cordon_error *err, const char *word)
{
	return strstr(err->msg, word) != NULL;
}

#define ck_assert_error(err, want_code, word)                                              \
	do {                                                                               \
		ck_assert_msg((err).code == (want_code), "code %s, want %s (msg '%s')",    \
			      cordon_code_name((err).code), cordon_code_name(want_code),   \
			      (err).msg);                                                  \
		ck_assert_msg(error_mentions(&(err), (word)),                              \
			      "message '%s' does not name '%s'", (err).msg, (word));       \
	} while (0)

/* --- --bind ------------------------------------------------------------ */

static void bind_free(struct cordon_bind *b)
{
	free(b->source);
	free(b->destination);
	memset(b, 0, sizeof(*b));
}

START_TEST(bind_good_shapes)
{
	static const struct {
		const char *in, *src, *dst;
		bool writable;
	} good[] = {
		{ "/a:/b", "/a", "/b", false },
		{ "/a:/b:ro", "/a", "/b", false },
		{ "/a:/b:rw", "/a", "/b", true },
		{ "rel/dir:/mnt/x", "rel/dir", "/mnt/x", false },
		{ "/a:/b//c/./d/", "/a", "/b/c/d", false },
		{ "/a:/procfs", "/a", "/procfs", false },
		{ "/a:/mnt/proc:rw", "/a", "/mnt/proc", true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct cordon_error err = { 0 };
		struct cordon_bind b = { 0 };
		const char *in = good[i].in;

		ck_assert_msg(cordon_spec_parse_bind(in, &b, &err) == 0, "'%s' refused: %s", in,
			      err.msg);
		ck_assert_str_eq(b.source, good[i].src);
		ck_assert_str_eq(b.destination, good[i].dst);
		ck_assert_msg(b.writable == good[i].writable, "'%s': writable=%d", in, b.writable);
		bind_free(&b);
	}
}
END_TEST

START_TEST(bind_bad_shapes)
{
	static const char *const bad[] = {
		"/a",           /* no colon */
		"",             /* empty */
		":/b",          /* empty source */
		"/a:",          /* empty destination */
		"/a:b",         /* relative destination */
		"/a:./b",       /* relative destination */
		"/a:/b:xx",     /* bad mode */
		"/a:/b:RW",     /* modes are lower case */
		"/a:/b:",       /* empty mode */
		"/a:/b:rw:ro",  /* trailing junk */
		"/a:/b/../c",   /* '..' */
		"/a:/..",       /* '..' */
		"/a:/",         /* over / */
		"/a://",        /* over / */
		"/a:/./",       /* over / */
		"/a:/proc",     /* over /proc */
		"/a:/proc/",    /* over /proc */
		"/a://proc",    /* over /proc */
		"/a:/./proc",   /* over /proc */
		"/a:/proc/sys", /* below /proc */
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_error err = { 0 };
		struct cordon_bind b = { 0 };

		ck_assert_msg(cordon_spec_parse_bind(bad[i], &b, &err) < 0, "'%s' accepted: %s:%s",
			      bad[i], b.source, b.destination);
		ck_assert_error(err, CORDON_E_USAGE, "--bind");
		/* A refused value leaves nothing allocated behind. */
		ck_assert_ptr_null(b.source);
		ck_assert_ptr_null(b.destination);
	}
}
END_TEST

START_TEST(bind_bad_mode_named)
{
	struct cordon_error err = { 0 };
	struct cordon_bind b = { 0 };

	ck_assert_int_lt(cordon_spec_parse_bind("/a:/b:rx", &b, &err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "rx");
}
END_TEST

/* --- --user ------------------------------------------------------------ */

START_TEST(user_values)
{
	static const char *const good[] = { "0", "1000", "1000:1000", "alice", "alice:staff",
					    "a-b_c.d", "1000:staff" };
	static const char *const bad[] = { "", ":1", "1:", "a:b:c", "a b", "a;b", "a/b", "$(x)" };

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct cordon_error err = { 0 };
		char *user = NULL;

		ck_assert_msg(cordon_spec_parse_user(good[i], &user, &err) == 0, "'%s': %s", good[i],
			      err.msg);
		ck_assert_str_eq(user, good[i]);
		/* A second value replaces the first. */
		ck_assert_int_eq(cordon_spec_parse_user("42", &user, &err), 0);
		ck_assert_str_eq(user, "42");
		free(user);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_error err = { 0 };
		char *user = NULL;

		ck_assert_msg(cordon_spec_parse_user(bad[i], &user, &err) < 0, "'%s' accepted",
			      bad[i]);
		ck_assert_error(err, CORDON_E_USAGE, "--user");
		ck_assert_ptr_null(user);
	}
}
END_TEST

/* --- environment ------------------------------------------------------- */

static const char *env_get(const struct cordon_spec *spec, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < spec->n_env; i++)
		if (strncmp(spec->env[i], key, klen) == 0 && spec->env[i][klen] == '=')
			return spec->env[i] + klen + 1;
	return NULL;
}

static size_t env_count(const struct cordon_spec *spec, const char *key)
{
	size_t klen = strlen(key), n = 0;

	for (size_t i = 0; i < spec->n_env; i++)
		if (strncmp(spec->env[i], key, klen) == 0 && spec->env[i][klen] == '=')
			n++;
	return n;
}

START_TEST(env_add_and_replace)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "A=1", &err), 0);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "AB=2", &err), 0);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "A=3", &err), 0);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "EMPTY=", &err), 0);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "EQ=a=b", &err), 0);
	ck_assert_uint_eq(spec.n_env, 4);
	ck_assert_ptr_null(spec.env[spec.n_env]);
	ck_assert_str_eq(env_get(&spec, "A"), "3");
	ck_assert_str_eq(env_get(&spec, "AB"), "2");
	ck_assert_str_eq(env_get(&spec, "EMPTY"), "");
	ck_assert_str_eq(env_get(&spec, "EQ"), "a=b");
	ck_assert_uint_eq(env_count(&spec, "A"), 1);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(env_add_rejects)
{
	static const char *const bad[] = { "A", "=x", "", "=" };
	struct cordon_spec spec;

	cordon_spec_init(&spec);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_error err = { 0 };

		ck_assert_msg(cordon_spec_add_env(&spec, bad[i], &err) < 0, "'%s' accepted", bad[i]);
		ck_assert_error(err, CORDON_E_USAGE, "--env");
	}
	ck_assert_uint_eq(spec.n_env, 0);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(env_pass)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	setenv("CORDON_UNIT_PASS", "from host", 1);
	unsetenv("CORDON_UNIT_UNSET");
	ck_assert_int_eq(cordon_spec_add_env(&spec, "CORDON_UNIT_PASS=flag", &err), 0);
	ck_assert_int_eq(cordon_spec_pass_env(&spec, "CORDON_UNIT_PASS", &err), 0);
	ck_assert_int_eq(cordon_spec_pass_env(&spec, "CORDON_UNIT_UNSET", &err), 0);
	ck_assert_uint_eq(spec.n_env, 1);
	ck_assert_str_eq(env_get(&spec, "CORDON_UNIT_PASS"), "from host");
	ck_assert_ptr_null(env_get(&spec, "CORDON_UNIT_UNSET"));

	ck_assert_int_lt(cordon_spec_pass_env(&spec, "A=B", &err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--env-pass");
	ck_assert_int_lt(cordon_spec_pass_env(&spec, "", &err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--env-pass");
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(env_default_never_overrides)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	ck_assert_int_eq(cordon_spec_add_env(&spec, "PATH=/mine", &err), 0);
	cordon_spec_env_default(&spec, "PATH=/default");
	cordon_spec_env_default(&spec, "PATHX=1");
	cordon_spec_env_default(&spec, "PATHX=2");
	ck_assert_uint_eq(spec.n_env, 2);
	ck_assert_str_eq(env_get(&spec, "PATH"), "/mine");
	ck_assert_str_eq(env_get(&spec, "PATHX"), "1");
	cordon_spec_free(&spec);
}
END_TEST

/* --- lexical checks ---------------------------------------------------- */

START_TEST(id_valid)
{
	static const char *const good[] = { "a", "A", "0", "abc_def.ghi-1", "a..", "a-", "Z9_" };
	static const char *const bad[] = { "", "-a", "_a", ".a", "a/b", "a b", "a:b", "a\n",
					   "é", "a*", "../x" };
	char max[CORDON_ID_MAX + 2];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		ck_assert_msg(cordon_id_valid(good[i]), "'%s' refused", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(!cordon_id_valid(bad[i]), "'%s' accepted", bad[i]);
	ck_assert(!cordon_id_valid(NULL));

	memset(max, 'a', CORDON_ID_MAX);
	max[CORDON_ID_MAX] = '\0';
	ck_assert(cordon_id_valid(max));
	max[CORDON_ID_MAX] = 'a';
	max[CORDON_ID_MAX + 1] = '\0';
	ck_assert(!cordon_id_valid(max));
}
END_TEST

START_TEST(id_generate)
{
	_cleanup_free_ char *a = cordon_id_generate(), *b = cordon_id_generate();

	ck_assert_uint_eq(strlen(a), 12);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 12);
	ck_assert(cordon_id_valid(a));
	ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(hostname_valid)
{
	static const char *const good[] = { "cordon", "a", "a.b.c", "a-b", "a1", "1a", "A-Z.9" };
	static const char *const bad[] = { "", "-a", "a-", "a..b", ".a", "a.", "a_b", "a b",
					   "a.-b", "a-.b", "a/b", "é" };
	char label[80], name[100];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		ck_assert_msg(cordon_hostname_valid(good[i]), "'%s' refused", good[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(!cordon_hostname_valid(bad[i]), "'%s' accepted", bad[i]);
	ck_assert(!cordon_hostname_valid(NULL));

	/* A label holds 63 characters at most. */
	memset(label, 'a', 63);
	label[63] = '\0';
	ck_assert(cordon_hostname_valid(label));
	label[63] = 'a';
	label[64] = '\0';
	ck_assert(!cordon_hostname_valid(label));

	/* The whole name fits the kernel's 64-byte UTS field. */
	memset(name, 'b', 64);
	name[30] = '.';
	name[64] = '\0';
	ck_assert(cordon_hostname_valid(name));
	name[64] = 'b';
	name[65] = '\0';
	ck_assert(!cordon_hostname_valid(name));
}
END_TEST

START_TEST(path_normalize)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/", "/" },           { "//", "/" },         { "/./", "/" },
		{ "/.", "/" },          { "/a", "/a" },        { "/a/", "/a" },
		{ "/a//b/./c/", "/a/b/c" }, { "/a/.", "/a" },  { "/a/..b", "/a/..b" },
		{ "/.../x", "/.../x" }, { "/a/.b/", "/a/.b" }, { "///x///y", "/x/y" },
	};
	static const char *const bad[] = { "", "a", "./a", "a/b", "/..", "/a/..", "/a/../b",
					   "/a/./../b", "../a" };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *out = cordon_path_normalize(cases[i].in);

		ck_assert_msg(out != NULL, "'%s' refused", cases[i].in);
		ck_assert_msg(strcmp(out, cases[i].out) == 0, "'%s' -> '%s', want '%s'", cases[i].in,
			      out, cases[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		_cleanup_free_ char *out = cordon_path_normalize(bad[i]);

		ck_assert_msg(out == NULL, "'%s' accepted as '%s'", bad[i], out);
	}
	ck_assert_ptr_null(cordon_path_normalize(NULL));
}
END_TEST

START_TEST(default_rootfs_absolute)
{
	const char *p = cordon_default_rootfs();

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p[0], '/');
}
END_TEST

/* --- finalize against a fixture rootfs --------------------------------- */

static char *tmp;     /* the temporary directory */
static char *rootfs;  /* tmp/rootfs */
static char *oldcwd;
static struct cordon_spec spec;

static const char passwd[] =
	"root:x:0:0:root:/root:/bin/sh\n"
	"short:x\n"
	"alice:x:1000:1001:Alice:/home/alice:/bin/sh\n"
	"bob:x:1002:1003::relative:/bin/sh\n"
	"nohome:x:1004:1004\n"
	"\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n";
static const char group[] =
	"root:x:0:\n"
	"garbage\n"
	"staff:x:50:alice\n"
	"users:x:100:\n";

static void finalize_setup(void)
{
	tmp = unit_tmpdir();
	free(unit_write(tmp, "rootfs/etc/passwd", passwd));
	free(unit_write(tmp, "rootfs/etc/group", group));
	free(unit_write(tmp, "rootfs/bin/sh", "#!fake\n"));
	free(unit_write(tmp, "file", "not a directory\n"));
	unit_mkdirs(tmp, "ws");
	rootfs = cordon_xasprintf("%s/rootfs", tmp);
	oldcwd = getcwd(NULL, 0);
	ck_assert_int_eq(chdir(tmp), 0);

	cordon_spec_init(&spec);
	spec.rootfs = cordon_xstrdup(rootfs);
	spec.argv = cordon_xcalloc(2, sizeof(char *));
	spec.argv[0] = cordon_xstrdup("true");
	unsetenv("TERM");
}

static void finalize_teardown(void)
{
	cordon_spec_free(&spec);
	if (oldcwd && chdir(oldcwd) < 0)
		perror("chdir");
	free(oldcwd);
	unit_rm_rf(tmp);
	free(tmp);
	free(rootfs);
}

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value ? cordon_xstrdup(value) : NULL;
}

static int finalize(struct cordon_error *err)
{
	memset(err, 0, sizeof(*err));
	return cordon_spec_finalize(&spec, err);
}

static void finalize_ok(void)
{
	struct cordon_error err;

	ck_assert_msg(finalize(&err) == 0, "finalize failed: %s: %s", cordon_code_name(err.code),
		      err.msg);
}

START_TEST(finalize_defaults)
{
	finalize_ok();
	ck_assert_str_eq(spec.rootfs, rootfs);
	ck_assert_ptr_nonnull(spec.id);
	ck_assert(cordon_id_valid(spec.id));
	ck_assert_str_eq(spec.hostname, CORDON_DEFAULT_HOSTNAME);
	/* The current directory (the fixture's tmp) is the default workspace. */
	ck_assert_ptr_nonnull(spec.workspace);
	ck_assert_str_eq(spec.workspace, tmp);
	ck_assert_str_eq(spec.cwd, "/workspace");
	ck_assert_uint_eq(spec.uid, 0);
	ck_assert_uint_eq(spec.gid, 0);
	ck_assert_str_eq(spec.home, "/root");
	ck_assert_uint_eq(spec.tmpfs_size_mb, CORDON_TMPFS_DEFAULT_MB);
	ck_assert_uint_eq(spec.kill_after_ms, CORDON_KILL_AFTER_DEFAULT_MS);
}
END_TEST

START_TEST(finalize_base_env)
{
	finalize_ok();
	/* Exactly the fixed set, nothing from the host. */
	ck_assert_uint_eq(spec.n_env, 5);
	ck_assert_ptr_null(spec.env[5]);
	ck_assert_str_eq(env_get(&spec, "PATH"), CORDON_DEFAULT_PATH);
	ck_assert_str_eq(env_get(&spec, "PATH"),
			 "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	ck_assert_str_eq(env_get(&spec, "HOME"), "/root");
	ck_assert_str_eq(env_get(&spec, "TERM"), "xterm");
	ck_assert_str_eq(env_get(&spec, "HOSTNAME"), "cordon");
	ck_assert_str_eq(env_get(&spec, "container"), "cordon");
}
END_TEST

START_TEST(finalize_term_from_host)
{
	setenv("TERM", "vt100", 1);
	finalize_ok();
	ck_assert_str_eq(env_get(&spec, "TERM"), "vt100");
}
END_TEST

START_TEST(finalize_empty_term_is_xterm)
{
	setenv("TERM", "", 1);
	finalize_ok();
	ck_assert_str_eq(env_get(&spec, "TERM"), "xterm");
}
END_TEST

START_TEST(finalize_env_overrides_defaults)
{
	struct cordon_error err = { 0 };
	static const char *const mine[] = { "PATH=/x", "HOME=/h", "TERM=dumb", "HOSTNAME=h",
					    "container=other", "FOO=bar" };

	setenv("TERM", "vt100", 1);
	for (size_t i = 0; i < ARRAY_SIZE(mine); i++)
		ck_assert_int_eq(cordon_spec_add_env(&spec, mine[i], &err), 0);
	finalize_ok();
	ck_assert_uint_eq(spec.n_env, 6);
	ck_assert_str_eq(env_get(&spec, "PATH"), "/x");
	ck_assert_str_eq(env_get(&spec, "HOME"), "/h");
	ck_assert_str_eq(env_get(&spec, "TERM"), "dumb");
	ck_assert_str_eq(env_get(&spec, "HOSTNAME"), "h");
	ck_assert_str_eq(env_get(&spec, "container"), "other");
	ck_assert_str_eq(env_get(&spec, "FOO"), "bar");
	for (size_t i = 0; i < ARRAY_SIZE(mine); i++) {
		char key[32];

		snprintf(key, sizeof(key), "%.*s", (int)strcspn(mine[i], "="), mine[i]);
		ck_assert_uint_eq(env_count(&spec, key), 1);
	}
}
END_TEST

START_TEST(finalize_env_pass_kept)
{
	struct cordon_error err = { 0 };

	setenv("CORDON_UNIT_PASS", "v", 1);
	setenv("CORDON_UNIT_SECRET", "s", 1);
	ck_assert_int_eq(cordon_spec_pass_env(&spec, "CORDON_UNIT_PASS", &err), 0);
	finalize_ok();
	ck_assert_uint_eq(spec.n_env, 6);
	ck_assert_str_eq(env_get(&spec, "CORDON_UNIT_PASS"), "v");
	ck_assert_ptr_null(env_get(&spec, "CORDON_UNIT_SECRET"));
}
END_TEST

START_TEST(finalize_hostname_in_env)
{
	set_str(&spec.hostname, "foo");
	finalize_ok();
	ck_assert_str_eq(env_get(&spec, "HOSTNAME"), "foo");
}
END_TEST

START_TEST(finalize_missing_rootfs)
{
	struct cordon_error err;
	_cleanup_free_ char *missing = cordon_xasprintf("%s/no-such-rootfs", tmp);

	set_str(&spec.rootfs, missing);
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_ROOTFS, "no-such-rootfs");
	ck_assert_int_eq(err.errnum, ENOENT);
}
END_TEST

START_TEST(finalize_rootfs_is_file)
{
	struct cordon_error err;
	_cleanup_free_ char *file = cordon_xasprintf("%s/file", tmp);

	set_str(&spec.rootfs, file);
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_ROOTFS, file);
	ck_assert_int_eq(err.errnum, ENOTDIR);
}
END_TEST

START_TEST(finalize_rootfs_host_root)
{
	struct cordon_error err;

	set_str(&spec.rootfs, "/");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_int_eq(err.code, CORDON_E_ROOTFS);
	/* Spelled differently, still the host's /. */
	set_str(&spec.rootfs, "/usr/..");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_int_eq(err.code, CORDON_E_ROOTFS);
}
END_TEST

START_TEST(finalize_rootfs_relative_resolved)
{
	set_str(&spec.rootfs, "./rootfs/../rootfs");
	finalize_ok();
	ck_assert_str_eq(spec.rootfs, rootfs);
}
END_TEST

START_TEST(finalize_needs_command)
{
	struct cordon_error err;

	cordon_strv_free(spec.argv);
	spec.argv = NULL;
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);

	spec.argv = cordon_xcalloc(2, sizeof(char *));
	spec.argv[0] = cordon_xstrdup("");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
}
END_TEST

START_TEST(finalize_bad_id)
{
	struct cordon_error err;

	set_str(&spec.id, "../etc");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--name");
}
END_TEST

START_TEST(finalize_keeps_given_id)
{
	set_str(&spec.id, "my-box.1");
	finalize_ok();
	ck_assert_str_eq(spec.id, "my-box.1");
}
END_TEST

START_TEST(finalize_no_workspace)
{
	spec.no_workspace = true;
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	ck_assert_str_eq(spec.cwd, "/");
}
END_TEST

START_TEST(finalize_no_workspace_wins_over_workspace)
{
	set_str(&spec.workspace, "ws");
	spec.no_workspace = true;
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	ck_assert_str_eq(spec.cwd, "/");
}
END_TEST

START_TEST(finalize_default_workspace_never_root_or_home)
{
	_cleanup_free_ char *home = cordon_xasprintf("%s/home", tmp);
	_cleanup_free_ char *below = cordon_xasprintf("%s/home/project", tmp);

	unit_mkdirs(tmp, "home/project");
	setenv("HOME", home, 1);

	/* "/" is never mounted unless named. */
	ck_assert_int_eq(chdir("/"), 0);
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	ck_assert_str_eq(spec.cwd, "/");

	/* Nor $HOME itself, nor a directory above it. */
	cordon_spec_free(&spec);
	cordon_spec_init(&spec);
	spec.rootfs = cordon_xstrdup(rootfs);
	spec.argv = cordon_xcalloc(2, sizeof(char *));
	spec.argv[0] = cordon_xstrdup("true");
	ck_assert_int_eq(chdir(home), 0);
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	free(TAKE_PTR(spec.cwd));
	ck_assert_int_eq(chdir(tmp), 0);
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	ck_assert_str_eq(spec.cwd, "/");

	/* A directory below $HOME is fine. */
	free(TAKE_PTR(spec.cwd));
	ck_assert_int_eq(chdir(below), 0);
	finalize_ok();
	ck_assert_ptr_nonnull(spec.workspace);
	ck_assert_str_eq(spec.workspace, below);
	ck_assert_str_eq(spec.cwd, "/workspace");

	/* Named explicitly, the home directory is allowed. */
	free(TAKE_PTR(spec.cwd));
	set_str(&spec.workspace, home);
	finalize_ok();
	ck_assert_str_eq(spec.workspace, home);
}
END_TEST

START_TEST(finalize_workspace_relative)
{
	_cleanup_free_ char *want = cordon_xasprintf("%s/ws", tmp);

	set_str(&spec.workspace, "ws");
	finalize_ok();
	ck_assert_str_eq(spec.workspace, want);
	ck_assert_str_eq(spec.cwd, "/workspace");
}
END_TEST

START_TEST(finalize_workspace_relative_missing)
{
	struct cordon_error err;

	set_str(&spec.workspace, "does-not-exist");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_PATH, "--workspace");
	ck_assert_error(err, CORDON_E_PATH, "does-not-exist");
	ck_assert_int_eq(err.errnum, ENOENT);
}
END_TEST

START_TEST(finalize_workspace_is_file)
{
	struct cordon_error err;

	set_str(&spec.workspace, "file");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_PATH, "--workspace");
	ck_assert_int_eq(err.errnum, ENOTDIR);
}
END_TEST

static void add_bind(const char *value)
{
	struct cordon_error err = { 0 };

	spec.binds = cordon_xrealloc(spec.binds, (spec.n_binds + 1) * sizeof(*spec.binds));
	memset(&spec.binds[spec.n_binds], 0, sizeof(*spec.binds));
	ck_assert_msg(cordon_spec_parse_bind(value, &spec.binds[spec.n_binds], &err) == 0,
		      "%s: %s", value, err.msg);
	spec.n_binds++;
}

START_TEST(finalize_bind_source_resolved)
{
	_cleanup_free_ char *want = cordon_xasprintf("%s/ws", tmp);

	add_bind("./ws/:/data:rw");
	finalize_ok();
	ck_assert_str_eq(spec.binds[0].source, want);
	ck_assert_str_eq(spec.binds[0].destination, "/data");
	ck_assert(spec.binds[0].writable);
}
END_TEST

START_TEST(finalize_bind_source_missing)
{
	struct cordon_error err;

	add_bind("no-such-src:/data");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_PATH, "--bind");
	ck_assert_error(err, CORDON_E_PATH, "no-such-src");
}
END_TEST

START_TEST(finalize_bind_at_workspace_replaces_default)
{
	_cleanup_free_ char *ws = cordon_xasprintf("%s/ws", tmp);

	/* Without --workspace, a bind at /workspace replaces the default one. */
	add_bind("ws:/workspace:rw");
	finalize_ok();
	ck_assert_ptr_null(spec.workspace);
	ck_assert_uint_eq(spec.n_binds, 1);
	ck_assert_str_eq(spec.binds[0].source, ws);
	ck_assert_str_eq(spec.binds[0].destination, "/workspace");
}
END_TEST

START_TEST(finalize_bind_over_workspace)
{
	struct cordon_error err;

	set_str(&spec.workspace, "ws");
	add_bind("ws:/workspace");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "/workspace");
}
END_TEST

START_TEST(finalize_cwd)
{
	struct cordon_error err;

	set_str(&spec.cwd, "/x//y/./");
	finalize_ok();
	ck_assert_str_eq(spec.cwd, "/x/y");

	set_str(&spec.cwd, "relative");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--cwd");
	set_str(&spec.cwd, "/a/../b");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--cwd");
}
END_TEST

START_TEST(finalize_cgroup_parent)
{
	struct cordon_error err;

	set_str(&spec.cgroup_parent, "/ci//jobs/");
	finalize_ok();
	ck_assert_str_eq(spec.cgroup_parent, "/ci/jobs");
	/* A newline would split the state's list of cgroups into a second line. */
	set_str(&spec.cgroup_parent, "/a\n/sys/fs/cgroup/pids/b");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "control characters");
	set_str(&spec.cgroup_parent, "/a/../b");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--cgroup-parent");
}
END_TEST

START_TEST(finalize_bad_hostname)
{
	struct cordon_error err;

	set_str(&spec.hostname, "bad_host");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--hostname");
}
END_TEST

START_TEST(finalize_tmpfs_minimum)
{
	struct cordon_error err;

	spec.tmpfs_size_mb = CORDON_TMPFS_MIN_MB - 1;
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--tmpfs-size");
	spec.tmpfs_size_mb = 10;
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "--tmpfs-size");
	spec.tmpfs_size_mb = 0;
	ck_assert_int_lt(finalize(&err), 0);
	spec.tmpfs_size_mb = CORDON_TMPFS_MIN_MB;
	finalize_ok();
}
END_TEST

START_TEST(finalize_userns_host)
{
	struct cordon_error err;

	spec.userns = CORDON_USERNS_HOST;
	if (geteuid() == 0) {
		finalize_ok();
	} else {
		ck_assert_int_lt(finalize(&err), 0);
		ck_assert_error(err, CORDON_E_USAGE, "--userns");
	}
}
END_TEST

/* --user: names and numbers against the fixture etc/passwd and etc/group. */
START_TEST(finalize_user_lookups)
{
	static const struct {
		const char *user;
		uid_t uid;
		gid_t gid;
		const char *home;
	} cases[] = {
		{ "alice", 1000, 1001, "/home/alice" },
		{ "1000", 1000, 1001, "/home/alice" }, /* number found: passwd gid */
		{ "4242", 4242, 4242, "/" },           /* number not found: gid = uid */
		{ "alice:staff", 1000, 50, "/home/alice" },
		{ "alice:77", 1000, 77, "/home/alice" },
		{ "1000:1000", 1000, 1000, "/home/alice" },
		{ "4242:users", 4242, 100, "/" },
		{ "root", 0, 0, "/root" },
		{ "0", 0, 0, "/root" },
		{ "bob", 1002, 1003, "/" },   /* a relative home is not a home */
		{ "nohome", 1004, 1004, "/" }, /* a short line still resolves */
		{ "nobody", 65534, 65534, "/nonexistent" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cordon_error err = { 0 };
		char home_kv[64];

		cordon_spec_free(&spec);
		cordon_spec_init(&spec);
		spec.rootfs = cordon_xstrdup(rootfs);
		spec.argv = cordon_xcalloc(2, sizeof(char *));
		spec.argv[0] = cordon_xstrdup("true");
		ck_assert_int_eq(cordon_spec_parse_user(cases[i].user, &spec.user, &err), 0);
		ck_assert_msg(cordon_spec_finalize(&spec, &err) == 0, "--user %s: %s",
			      cases[i].user, err.msg);
		ck_assert_msg(spec.uid == cases[i].uid && spec.gid == cases[i].gid,
			      "--user %s: uid %u gid %u, want %u %u", cases[i].user,
			      (unsigned)spec.uid, (unsigned)spec.gid, (unsigned)cases[i].uid,
			      (unsigned)cases[i].gid);
		ck_assert_msg(strcmp(spec.home, cases[i].home) == 0, "--user %s: home %s, want %s",
			      cases[i].user, spec.home, cases[i].home);
		snprintf(home_kv, sizeof(home_kv), "%s", env_get(&spec, "HOME"));
		ck_assert_str_eq(home_kv, cases[i].home);
	}
}
END_TEST

START_TEST(finalize_user_unknown)
{
	static const struct {
		const char *user, *named;
	} cases[] = {
		{ "nosuch", "nosuch" },
		{ "alic", "alic" },       /* prefixes do not match */
		{ "alice2", "alice2" },
		{ "short", "short" },     /* malformed line, no uid field */
		{ "alice:nogroup", "nogroup" },
		{ "4294967295", "--user" }, /* (uid_t)-1 is never a valid id */
		{ "1:4294967295", "--user" },
		{ "99999999999999999999", "--user" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cordon_error err = { 0 };

		set_str(&spec.user, cases[i].user);
		ck_assert_msg(finalize(&err) < 0, "--user %s accepted", cases[i].user);
		ck_assert_error(err, CORDON_E_USAGE, cases[i].named);
	}
}
END_TEST

START_TEST(finalize_user_passwd_symlink_stays_in_rootfs)
{
	struct cordon_error err;
	_cleanup_free_ char *link = cordon_xasprintf("%s/etc/passwd", rootfs);

	/*
	 * A hostile rootfs points etc/passwd at a file outside it. The lookup
	 * resolves inside the rootfs (where the target does not exist), so the
	 * outside file's user is never found.
	 */
	free(unit_write(tmp, "outside-passwd", "eve:x:4000:4000::/home/eve:/bin/sh\n"));
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(symlink("../../../../../../../../outside-passwd", link), 0);
	set_str(&spec.user, "eve");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "eve");

	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(symlink("/outside-passwd", link), 0);
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "eve");
}
END_TEST

START_TEST(finalize_user_without_passwd)
{
	struct cordon_error err;
	_cleanup_free_ char *path = cordon_xasprintf("%s/etc/passwd", rootfs);

	ck_assert_int_eq(unlink(path), 0);
	set_str(&spec.user, "alice");
	ck_assert_int_lt(finalize(&err), 0);
	ck_assert_error(err, CORDON_E_USAGE, "alice");
	/* Numbers need no passwd file. */
	set_str(&spec.user, "1234:1234");
	finalize_ok();
	ck_assert_uint_eq(spec.uid, 1234);
	ck_assert_uint_eq(spec.gid, 1234);
	ck_assert_str_eq(spec.home, "/");
}
END_TEST

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

START_TEST(finalize_creates_nothing)
{
	size_t top = count_entries(tmp), root = count_entries(rootfs);
	_cleanup_free_ char *ws = cordon_xasprintf("%s/ws", tmp);

	set_str(&spec.workspace, "ws");
	add_bind("ws:/data");
	finalize_ok();
	ck_assert_uint_eq(count_entries(tmp), top);
	ck_assert_uint_eq(count_entries(rootfs), root);
	ck_assert_uint_eq(count_entries(ws), 2);
}
END_TEST

static Suite *spec_suite(void)
{
	Suite *s = suite_create("spec");
	TCase *tc;

	tc = tcase_create("flags");
	tcase_add_test(tc, bind_good_shapes);
	tcase_add_test(tc, bind_bad_shapes);
	tcase_add_test(tc, bind_bad_mode_named);
	tcase_add_test(tc, user_values);
	tcase_add_test(tc, env_add_and_replace);
	tcase_add_test(tc, env_add_rejects);
	tcase_add_test(tc, env_pass);
	tcase_add_test(tc, env_default_never_overrides);
	suite_add_tcase(s, tc);

	tc = tcase_create("lexical");
	tcase_add_test(tc, id_valid);
	tcase_add_test(tc, id_generate);
	tcase_add_test(tc, hostname_valid);
	tcase_add_test(tc, path_normalize);
	tcase_add_test(tc, default_rootfs_absolute);
	suite_add_tcase(s, tc);

	tc = tcase_create("finalize");
	tcase_add_checked_fixture(tc, finalize_setup, finalize_teardown);
	tcase_add_test(tc, finalize_defaults);
	tcase_add_test(tc, finalize_base_env);
	tcase_add_test(tc, finalize_term_from_host);
	tcase_add_test(tc, finalize_empty_term_is_xterm);
	tcase_add_test(tc, finalize_env_overrides_defaults);
	tcase_add_test(tc, finalize_env_pass_kept);
	tcase_add_test(tc, finalize_hostname_in_env);
	tcase_add_test(tc, finalize_missing_rootfs);
	tcase_add_test(tc, finalize_rootfs_is_file);
	tcase_add_test(tc, finalize_rootfs_host_root);
	tcase_add_test(tc, finalize_rootfs_relative_resolved);
	tcase_add_test(tc, finalize_needs_command);
	tcase_add_test(tc, finalize_bad_id);
	tcase_add_test(tc, finalize_keeps_given_id);
	tcase_add_test(tc, finalize_no_workspace);
	tcase_add_test(tc, finalize_no_workspace_wins_over_workspace);
	tcase_add_test(tc, finalize_default_workspace_never_root_or_home);
	tcase_add_test(tc, finalize_workspace_relative);
	tcase_add_test(tc, finalize_workspace_relative_missing);
	tcase_add_test(tc, finalize_workspace_is_file);
	tcase_add_test(tc, finalize_bind_source_resolved);
	tcase_add_test(tc, finalize_bind_source_missing);
	tcase_add_test(tc, finalize_bind_at_workspace_replaces_default);
	tcase_add_test(tc, finalize_bind_over_workspace);
	tcase_add_test(tc, finalize_cwd);
	tcase_add_test(tc, finalize_cgroup_parent);
	tcase_add_test(tc, finalize_bad_hostname);
	tcase_add_test(tc, finalize_tmpfs_minimum);
	tcase_add_test(tc, finalize_userns_host);
	tcase_add_test(tc, finalize_user_lookups);
	tcase_add_test(tc, finalize_user_unknown);
	tcase_add_test(tc, finalize_user_passwd_symlink_stays_in_rootfs);
	tcase_add_test(tc, finalize_user_without_passwd);
	tcase_add_test(tc, finalize_creates_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(spec_suite());
}
