// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon exec [OPTIONS] ID CMD [ARGS...]` and `cordon exec --process FILE
 * [OPTIONS] ID`: a new process in a created or running container, with
 * runc's flags. Options come before ID: what follows it is the command's.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "cli.h"
#include "cordon/audit.h"
#include "cordon/sandbox.h"

static const char exec_usage[] =
	"Usage: cordon exec [OPTIONS] ID [--] CMD [ARGS...]\n"
	"       cordon exec [OPTIONS] --process FILE ID\n"
	"\n"
	"Run a process in sandbox ID (created or running): it joins the\n"
	"sandbox's namespaces and cgroups with the sandbox's capabilities,\n"
	"rlimits, no_new_privs and seccomp filter. Without --detach, waits and\n"
	"exits with its status (128+N for signal N). Commands may run\n"
	"concurrently.\n"
	"\n"
	"  --timeout S              SIGTERM to the command and every process it\n"
	"                           started after S seconds, exit 124\n"
	"  --kill-after S           SIGKILL of all of them S seconds after SIGTERM\n"
	"                           (default 5)\n"
	"  --output-max BYTES       cap the command's stdout+stderr\n"
	"  --result-json FILE       write the outcome as JSON (cordon run's fields)\n"
	"  --expect-fingerprint FP  run only if the network policy in force is FP\n"
	"                           (cordon update prints it; exit 125 otherwise)\n"
	"  -p, --process FILE       an OCI process JSON (args, env, cwd, user, ...)\n"
	"  -t, --tty                a terminal: the pty's master goes to --console-socket\n"
	"  --console-socket SOCKET  the unix socket that receives the master (SCM_RIGHTS)\n"
	"  -d, --detach             return once the process runs\n"
	"  --pid-file FILE          write the process's host pid to FILE\n"
	"  --cwd DIR                working directory inside the container\n"
	"  -e, --env K=V            set a variable (repeatable; added to the config's)\n"
	"  -u, --user USER[:GROUP]  ids or names (of the sandbox's /etc/passwd, group)\n"
	"  -c, --cap CAP            add a capability (repeatable; the config's policy)\n"
	"  --no-new-privs           set no_new_privs whatever the process says\n"
	"  --preserve-fds N         pass fds 3..3+N-1 on to the process\n"
	"  --cgroup PATH            run it in PATH, a cgroup the container made below\n"
	"                           its own (cgroup2)\n"
	"  -h, --help               this text\n";

enum exec_flag {
	X_PROCESS,
	X_TTY,
	X_CONSOLE_SOCKET,
	X_DETACH,
	X_PID_FILE,
	X_CWD,
	X_ENV,
	X_USER,
	X_CAP,
	X_PRESERVE_FDS,
	X_NO_NEW_PRIVS,
	X_CGROUP,
	X_TIMEOUT,
	X_KILL_AFTER,
	X_OUTPUT_MAX,
	X_RESULT_JSON,
	X_EXPECT_FINGERPRINT,
	X_HELP,
};

static const struct cli_flag exec_flags[] = {
	{ "process", X_PROCESS, true, 'p' },
	{ "tty", X_TTY, false, 't' },
	{ "console-socket", X_CONSOLE_SOCKET, true, 0 },
	{ "detach", X_DETACH, false, 'd' },
	{ "pid-file", X_PID_FILE, true, 0 },
	{ "cwd", X_CWD, true, 0 },
	{ "env", X_ENV, true, 'e' },
	{ "user", X_USER, true, 'u' },
	{ "cap", X_CAP, true, 'c' },
	{ "preserve-fds", X_PRESERVE_FDS, true, 0 },
	/* no_new_privs for this process, whatever its config says. */
	{ "no-new-privs", X_NO_NEW_PRIVS, false, 0 },
	{ "cgroup", X_CGROUP, true, 0 },
	{ "timeout", X_TIMEOUT, true, 0 },
	{ "kill-after", X_KILL_AFTER, true, 0 },
	{ "output-max", X_OUTPUT_MAX, true, 0 },
	{ "result-json", X_RESULT_JSON, true, 0 },
	{ "expect-fingerprint", X_EXPECT_FINGERPRINT, true, 0 },
	{ "help", X_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct exec_args {
	struct cordon_exec_opts opts;
	const char *process_file;
	const char *console_socket;
	const char *pid_file;
	char **env;
	size_t n_env;
	bool help;
	/* --timeout, --kill-after, --output-max, --result-json: cordon_container_exec_supervised */
	bool supervised;
	const char *supervised_by; /* the first of them given, for a refusal */
	bool conflict;             /* refused as a usage conflict: no result written */
	struct cordon_result_target result;
	char *result_name;
	struct cordon_path_links result_links; /* the walk to --result-json's directory */
	bool unchecked; /* result_links not yet checked against the sandbox: no result written */
};

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* A name of the sandbox's passwd or group file: no control byte, no '/'. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '/')
			return false;
	return true;
}

static int parse_user(const char *value, struct cordon_exec_opts *opts, struct cordon_error *err)
{
	_cleanup_free_ char *copy = cordon_xstrdup(value);
	char *colon = strchr(copy, ':');
	uint64_t uid, gid = 0;

	if (colon)
		*colon = '\0';
	/* A name (either part): the process looks it up inside the sandbox (exec.c). */
	if (!all_digits(copy) || (colon && !all_digits(colon + 1))) {
		if (!*copy || (colon && !colon[1]) || strlen(value) > 256 || !printable(value))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--user '%s': expected UID[:GID] or NAME[:GROUP]",
						value);
		opts->user_name = value;
		opts->has_user = false;
		return 0;
	}
	/* 4294967295 is (uid_t)-1, never an id. */
	if (cordon_parse_u64(copy, &uid) < 0 || uid >= UINT32_MAX ||
	    (colon && (cordon_parse_u64(colon + 1, &gid) < 0 || gid >= UINT32_MAX)))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--user '%s': expected UID[:GID], numeric", value);
	opts->has_user = true;
	opts->user_name = NULL;
	opts->uid = (uid_t)uid;
	opts->has_gid = colon != NULL;
	opts->gid = (gid_t)gid;
	return 0;
}

/*
 * Any capability the kernel knows; what the container may have is the
 * config's policy, checked with the rest of the process (finalize). A name
 * cordon does not know is not granted, with a warning, as the config's.
 */
static int parse_cap(const char *value, cordon_capset *caps)
{
	struct cordon_error ignored = { 0 };
	cordon_capset one;

	if (cordon_cap_parse("--cap", value, &one, &ignored) < 0) {
		cordon_warn("--cap %s: unknown capability, not granted", value);
		return 0;
	}
	*caps |= one;
	return 0;
}

static void supervise(struct exec_args *a, const char *flag)
{
	if (!a->supervised)
		a->supervised_by = flag;
	a->supervised = true;
}

/*
 * The supervised flags wait for the command and take its output through
 * cordon (counted, capped, in the result): refused with what returns at
 * once or hands the output elsewhere, before anything is opened or run.
 */
static int supervised_conflict(const struct exec_args *a, struct cordon_error *err)
{
	const char *other = NULL, *why = "cordon returns once the process runs";

	if (a->pid_file)
		other = "--pid-file";
	if (a->opts.detach)
		other = "--detach";
	if (a->opts.tty) {
		other = "-t/--tty";
		why = "a terminal's output goes to --console-socket, not through cordon";
	}
	if (!a->supervised || !other)
		return 0;
	return cordon_error_set(err, CORDON_E_USAGE, 0,
				"%s: not with %s (%s; --timeout, --kill-after, --output-max and "
				"--result-json wait for the command and take its output)",
				a->supervised_by, other, why);
}

/*
 * --process FILE's "terminal": true turns a terminal on as -t does: the
 * same refusal, once the file is read (a file that does not parse is
 * left to the process's own reading, which says why).
 */
static int process_tty_conflict(struct exec_args *a, const char *text, size_t len,
				struct cordon_error *err)
{
	const char *path[] = { "terminal", NULL };
	struct cordon_error ignored = { 0 };
	yajl_val tree = NULL;
	bool tty;

	if (!a->supervised || cordon_json_parse(text, len, CORDON_E_USAGE, &tree, &ignored) < 0)
		return 0;
	tty = YAJL_IS_OBJECT(tree) && yajl_tree_get(tree, path, yajl_t_true);
	yajl_tree_free(tree);
	if (!tty)
		return 0;
	a->conflict = true; /* as -t's refusal, at parsing: no result file */
	return cordon_error_set(err, CORDON_E_USAGE, 0,
				"%s: not with --process %s's \"terminal\": true (a terminal's "
				"output goes to --console-socket, not through cordon; --timeout, "
				"--kill-after, --output-max and --result-json wait for the command "
				"and take its output)",
				a->supervised_by, a->process_file);
}

static int apply_flag(struct exec_args *a, int id, const char *value, struct cordon_error *err)
{
	switch (id) {
	case X_PROCESS:
		a->process_file = value;
		break;
	case X_TTY:
		a->opts.tty = true;
		break;
	case X_CONSOLE_SOCKET:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--console-socket: empty path");
		a->console_socket = value;
		break;
	case X_DETACH:
		a->opts.detach = true;
		break;
	case X_PID_FILE:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--pid-file: empty path");
		a->pid_file = value;
		break;
	case X_CWD:
		a->opts.cwd = value;
		break;
	case X_ENV:
		if (!strchr(value, '=') || value[0] == '=')
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--env '%s': expected NAME=VALUE", value);
		cordon_strv_push(&a->env, &a->n_env, value);
		break;
	case X_USER:
		return parse_user(value, &a->opts, err);
	case X_CAP:
		return parse_cap(value, &a->opts.caps);
	case X_NO_NEW_PRIVS:
		a->opts.no_new_privs = true;
		break;
	case X_PRESERVE_FDS:
		return cli_parse_preserve_fds(value, &a->opts.preserve_fds, err);
	case X_CGROUP:
		/* runc's controller:path form (cgroup v1 only) is not taken. */
		if (!*value || strchr(value, ':'))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--cgroup '%s': expected a cgroup path below the "
						"container's",
						value);
		a->opts.cgroup = value;
		break;
	case X_TIMEOUT:
		supervise(a, "--timeout");
		if (cordon_parse_seconds_ms(value, &a->opts.timeout_ms) < 0 || !a->opts.timeout_ms)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--timeout: expected seconds above 0 (e.g. 10 or "
						"1.5), got '%s'",
						value);
		break;
	case X_KILL_AFTER:
		supervise(a, "--kill-after");
		if (cordon_parse_seconds_ms(value, &a->opts.kill_after_ms) < 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--kill-after: expected seconds (e.g. 10 or 1.5), "
						"got '%s'",
						value);
		break;
	case X_OUTPUT_MAX:
		supervise(a, "--output-max");
		if (cordon_parse_u64(value, &a->opts.output_max) < 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--output-max: expected bytes, got '%s'", value);
		a->opts.output_capped = true;
		a->opts.count_output = true;
		break;
	case X_RESULT_JSON:
		supervise(a, "--result-json");
		a->opts.count_output = true;
		if (a->result.dir_fd >= 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--result-json: given twice");
		a->result.path = value;
		if (cli_result_target_open(value, &a->result.dir_fd, &a->result_name,
					   &a->result_links, err) < 0)
			return -1;
		a->unchecked = a->result_links.n > 0;
		return 0;
	case X_EXPECT_FINGERPRINT:
		if (strlen(value) != 64 || strspn(value, "0123456789abcdef") != 64)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--expect-fingerprint: expected 64 hex digits "
						"(as cordon update prints), got '%s'",
						value);
		a->opts.expect_fingerprint = value;
		break;
	case X_HELP:
		a->help = true;
		break;
	}
	return 0;
}

/* Options, then ID, then (unless --process) the command, taken as it is. */
static int parse_exec_args(int argc, char **argv, struct exec_args *a, struct cordon_error *err)
{
	int i = 0;

	while (i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--") != 0) {
		const char *value;
		int id;

		if (cli_flag_next(exec_flags, argc, argv, &i, &id, &value, err) < 0 ||
		    apply_flag(a, id, value, err) < 0)
			return -1;
		if (a->help)
			return 0;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "a container ID is required");
	a->opts.id = argv[i++];
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (a->process_file && i < argc)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"unexpected argument '%s' (the command is in --process)",
					argv[i]);
	if (!a->process_file && i >= argc)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"a command is required (or --process FILE)");
	a->opts.argv = argv + i;
	return supervised_conflict(a, err);
}

static void audit_closep(struct cordon_audit **a)
{
	cordon_audit_close(*a);
}

/*
 * The command's exec event: from its result when cordon supervised it,
 * else its status and duration (its output was not cordon's to count). A
 * write that fails is printed and fails the command.
 */
static int exec_audit(struct cordon_audit *audit, const struct exec_args *a,
		      const struct cordon_result *res, int status, uint64_t t0, const char *error)
{
	struct cordon_audit_exec ex = {
		.argv = (const char *const *)a->opts.argv,
		.exit_code = status,
		.duration_ms = (cordon_now_mono_us() - t0 + 500) / 1000,
		.error = error,
	};
	struct cordon_error err = { 0 };

	if (!audit)
		return 0;
	if (res) {
		ex.exit_code = res->exit_code;
		ex.signal = res->signal;
		ex.timed_out = res->timed_out;
		ex.duration_ms = res->duration_ms;
		ex.output_counted = res->output_counted;
		ex.stdout_bytes = res->stdout_bytes;
		ex.stderr_bytes = res->stderr_bytes;
		ex.truncated = res->output_truncated;
		ex.error = res->failed ? res->error.msg : NULL;
	}
	if (cordon_audit_exec(audit, &ex, &err) < 0) {
		cordon_error_print(&err);
		return -1;
	}
	return 0;
}

/*
 * One command with cordon run's outcome. The errors are printed here (the
 * result is written either way): returns the exit status, >= 0.
 */
static int exec_supervised(struct exec_args *a, struct cordon_audit *audit,
			   struct cordon_error *err)
{
	struct cordon_result res;
	int code;

	code = cordon_container_exec_supervised(&a->opts, &res);
	if (res.failed)
		cordon_error_print(&res.error);
	a->result.name = a->result_name;
	if (a->result.dir_fd >= 0 && !a->conflict && !a->unchecked &&
	    cordon_result_write_to(&a->result, a->opts.id, &res, err) < 0) {
		cordon_error_print(err);
		code = CORDON_EXIT_FAILURE;
	}
	if (exec_audit(audit, a, &res, code, 0, NULL) < 0)
		code = CORDON_EXIT_FAILURE;
	cordon_result_free(&res);
	return code;
}

static int exec(struct exec_args *a, struct cordon_error *err)
{
	_cleanup_(audit_closep) struct cordon_audit *audit = NULL;
	uint64_t t0;
	_cleanup_(cordon_pid_file_close) struct cordon_pid_file pid_file = { .dir_fd = -1 };
	_cleanup_free_ char *process = NULL;
	size_t len = 0;
	pid_t pid;
	int status, r;

	a->opts.root = cli_global.root;
	a->opts.env = a->env;
	a->opts.console_fd = -1;
	if (!cordon_id_valid(a->opts.id))
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"container id '%s': an id is [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", a->opts.id);
	if (cordon_container_exec_seal(&a->opts, err) < 0)
		return -1;
	cordon_trace("exec-sealed");
	/* Its directory before the process exists (a bad one: nothing to undo). */
	if (a->pid_file && cordon_pid_file_open(&pid_file, a->pid_file, err) < 0)
		return -1;
	a->opts.output_links[0] = &pid_file.links;
	a->opts.output_links[1] = &a->result_links;
	a->opts.outputs_unchecked = &a->unchecked;
	if (a->process_file) {
		_cleanup_free_ char *what = cordon_xasprintf("--process %s", a->process_file);

		/* By the host-path walk (another user's link is not followed), a regular file. */
		if (cordon_input_read_path(a->process_file, CORDON_INPUT_JSON_MAX, CORDON_E_PATH,
					   what, &process, &len, err) < 0)
			return -1;
		if (process_tty_conflict(a, process, len, err) < 0)
			return -1;
		a->opts.process_json = process;
		a->opts.process_len = len;
	}
	if (a->console_socket) {
		a->opts.console_fd = cordon_console_connect(a->console_socket, err);
		if (a->opts.console_fd < 0)
			return -1;
	}
	/* The log before the process: a log that cannot be written runs nothing. */
	audit = cordon_container_audit_open(a->opts.root, a->opts.id, err);
	if (!audit && err->code)
		return -1;
	if (a->supervised)
		return exec_supervised(a, audit, err);
	t0 = cordon_now_mono_us();
	r = cordon_container_exec(&a->opts, &pid, &status, err);
	cordon_closep(&a->opts.console_fd);
	if (r < 0) {
		exec_audit(audit, a, NULL, status, t0, err->msg);
		return status == CORDON_EXIT_FAILURE ? -1 : -status;
	}
	cordon_debug("exec in %s: pid %d%s", a->opts.id, (int)pid,
		     a->opts.detach ? ", detached" : "");
	if (a->pid_file && cordon_pid_file_write(&pid_file, pid, err) < 0) {
		/* Not left running unrecorded. */
		kill(pid, SIGKILL);
		return -1;
	}
	if (a->opts.detach)
		return 0;
	status = cordon_container_exec_wait(pid);
	/* Printed there; the command's status gives way to cordon's failure. */
	return exec_audit(audit, a, NULL, status, t0, NULL) < 0 ? CORDON_EXIT_FAILURE : status;
}

int cli_exec(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct exec_args a = { .opts.kill_after_ms = CORDON_KILL_AFTER_DEFAULT_MS,
			       .result.dir_fd = -1 };
	int code = 0, r;

	if (parse_exec_args(argc, argv, &a, &err) < 0) {
		code = cli_fail(&err);
	} else if (a.help) {
		fputs(exec_usage, stdout);
	} else {
		r = exec(&a, &err);
		if (r == -1 && a.result.dir_fd >= 0 && !a.conflict && !a.unchecked) {
			/* Refused before the command started: the result says why. */
			struct cordon_result res = { .failed = true,
						     .exit_code = CORDON_EXIT_FAILURE,
						     .error = err };
			struct cordon_error werr = { 0 };

			a.result.name = a.result_name;
			if (cordon_result_write_to(&a.result, a.opts.id ? a.opts.id : "", &res,
						   &werr) < 0)
				cordon_error_print(&werr);
		}
		if (r == -1)
			code = cli_fail(&err);
		else if (r < 0) {
			/* execve failed: 126 or 127, with cordon's line. */
			cordon_error_print(&err);
			code = -r;
		} else {
			code = r;
		}
	}
	cordon_strv_free(a.env);
	cordon_closep(&a.result.dir_fd);
	cordon_path_links_close(&a.result_links);
	free(a.result_name);
	return code;
}
