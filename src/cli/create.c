// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon create --bundle DIR ID` and `cordon run --bundle DIR ID`: an OCI
 * bundle's config.json → struct cordon_spec → a detached monitor (create)
 * or a foreground supervisor (run).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cordon/audit.h"
#include "cordon/sandbox.h"
#include "cordon/state.h"

static const char create_usage[] =
	"Usage: cordon create [OPTIONS] ID\n"
	"\n"
	"Create container ID from an OCI bundle. It is set up and waits, its\n"
	"process stopped before execve, until `cordon start ID`. Its stdio is\n"
	"this command's.\n"
	"\n"
	"  -b, --bundle DIR         the bundle (default: the current directory)\n"
	"  --pid-file FILE          write the container process's pid to FILE\n"
	"  --console-socket SOCKET  with process.terminal: send the pty's master to\n"
	"                           this unix socket (SCM_RIGHTS)\n"
	"  --preserve-fds N         pass fds 3..3+N-1 on to the container process\n"
	"  -h, --help               this text\n";

static const char run_bundle_usage[] =
	"Usage: cordon run --bundle DIR [OPTIONS] ID\n"
	"\n"
	"Create and start container ID from an OCI bundle, wait for it, remove\n"
	"it, and exit with its status (128+N for signal N).\n"
	"\n"
	"  -b, --bundle DIR         the bundle\n"
	"  -d, --detach             create and start, do not wait\n"
	"  --keep                   keep the container (stopped) after it exits, until\n"
	"                           `cordon delete ID`\n"
	"  --pid-file FILE          write the container process's pid to FILE\n"
	"  --console-socket SOCKET  with process.terminal: send the pty's master to\n"
	"                           this unix socket (SCM_RIGHTS)\n"
	"  --preserve-fds N         pass fds 3..3+N-1 on to the container process\n"
	"  -h, --help               this text\n";

enum bundle_flag {
	B_BUNDLE,
	B_PID_FILE,
	B_CONSOLE_SOCKET,
	B_DETACH,
	B_KEEP,
	B_NO_PIVOT,
	B_NO_KEYRING,
	B_PRESERVE_FDS,
	B_HELP
};

static const struct cli_flag create_flags[] = {
	{ "bundle", B_BUNDLE, true, 'b' },
	{ "pid-file", B_PID_FILE, true, 0 },
	{ "console-socket", B_CONSOLE_SOCKET, true, 0 },
	/* runc's; cordon never pivots otherwise nor shares a keyring: accepted, no effect. */
	{ "no-pivot", B_NO_PIVOT, false, 0 },
	{ "no-new-keyring", B_NO_KEYRING, false, 0 },
	{ "preserve-fds", B_PRESERVE_FDS, true, 0 },
	{ "help", B_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

static const struct cli_flag run_bundle_flags[] = {
	{ "bundle", B_BUNDLE, true, 'b' },
	{ "pid-file", B_PID_FILE, true, 0 },
	{ "console-socket", B_CONSOLE_SOCKET, true, 0 },
	{ "detach", B_DETACH, false, 'd' },
	{ "keep", B_KEEP, false, 0 },
	{ "no-pivot", B_NO_PIVOT, false, 0 },
	{ "no-new-keyring", B_NO_KEYRING, false, 0 },
	{ "preserve-fds", B_PRESERVE_FDS, true, 0 },
	{ "help", B_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

/* The fds 3..3+N-1 must be the caller's: open, and not ours (ours are all close-on-exec). */
int cli_parse_preserve_fds(const char *value, unsigned *n, struct cordon_error *err)
{
	uint64_t v;

	if (cordon_parse_u64(value, &v) < 0 || v > 1024)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--preserve-fds '%s': expected 0..1024", value);
	for (unsigned fd = 3; fd < 3 + v; fd++) {
		int flags = fcntl((int)fd, F_GETFD);

		if (flags < 0 || (flags & FD_CLOEXEC))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--preserve-fds %s: fd %u is not one the caller "
						"passed",
						value, fd);
	}
	*n = (unsigned)v;
	return 0;
}

static int apply_bundle_flag(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct cli_bundle_args *args = ctx;

	switch (id) {
	case B_BUNDLE:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--bundle: empty path");
		args->bundle = value;
		break;
	case B_PID_FILE:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--pid-file: empty path");
		args->pid_file = value;
		break;
	case B_CONSOLE_SOCKET:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--console-socket: empty path");
		args->console_socket = value;
		break;
	case B_DETACH:
		args->detach = true;
		break;
	case B_KEEP:
		args->keep = true;
		break;
	case B_PRESERVE_FDS:
		return cli_parse_preserve_fds(value, &args->preserve_fds, err);
	case B_HELP:
		args->help = true;
		break;
	}
	return 0;
}

static int parse_bundle_args(const struct cli_flag *flags, int argc, char **argv,
			     struct cli_bundle_args *args, struct cordon_error *err)
{
	const char *pos[1];
	int n_pos, r;

	memset(args, 0, sizeof(*args));
	args->bundle = ".";
	r = cli_parse_args(flags, B_HELP, argc, argv, apply_bundle_flag, args, pos, 1, &n_pos, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (n_pos != 1)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "a container ID is required");
	args->id = pos[0];
	return 0;
}

int cli_bundle_load(const struct cli_bundle_args *args, struct cordon_spec *spec,
		    struct cordon_error *err)
{
	char *bundle = realpath(args->bundle, NULL);

	if (!bundle)
		return cordon_error_set(err, CORDON_E_PATH, errno, "--bundle %s", args->bundle);
	if (!cordon_id_valid(args->id)) {
		free(bundle);
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"container id '%s': an id is [A-Za-z0-9][A-Za-z0-9_.-]{0,63}", args->id);
	}
	if (cordon_spec_from_bundle(spec, bundle, err) < 0) {
		free(bundle);
		return -1;
	}
	/* The state records the bundle as an absolute path, whatever was typed. */
	free(spec->oci->bundle);
	spec->oci->bundle = bundle;
	free(spec->id);
	spec->id = cordon_xstrdup(args->id);
	spec->preserve_fds = args->preserve_fds;
	/* Recorded in its state: the launcher that asked for it (cordon list, sweep). */
	spec->creator_pid = getppid();
	spec->creator_start = cordon_proc_start_time(spec->creator_pid);
	/* As runc: a terminal goes to a console socket, and a console socket needs one. */
	if (spec->oci->terminal && !args->console_socket)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"process.terminal: true needs --console-socket (cordon "
					"does not relay a terminal itself)");
	if (!spec->oci->terminal && args->console_socket)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--console-socket: only with process.terminal true");
	/* An OCI container's audit log only when asked (CORDON_AUDIT), opened before anything. */
	if (cordon_audit_flag_env(spec, err) < 0)
		return -1;
	return cordon_spec_finalize(spec, err);
}

/*
 * Create. The --pid-file's directory is opened first, before anything
 * exists (a missing one, or one reached through another user's link, is
 * refused then); on a failure to write it the container must not stay
 * behind.
 */
static int create(const struct cli_bundle_args *args, struct cordon_spec *spec,
		  struct cordon_error *err)
{
	_cleanup_(cordon_pid_file_close) struct cordon_pid_file pid_file = { .dir_fd = -1 };
	int console = -1, r;
	pid_t pid;

	if (cordon_sandbox_seal_self(spec, err) < 0)
		return -1;
	cordon_container_warn_unapplied(spec);
	/* Not through a link the bundle's workload could have left in its rootfs or mounts. */
	if (args->pid_file && (cordon_pid_file_open(&pid_file, args->pid_file, err) < 0 ||
			       cordon_spec_links_check(spec, &pid_file.links, "--pid-file", err) < 0))
		return -1;
	if (args->console_socket) {
		console = cordon_console_connect(args->console_socket, err);
		if (console < 0)
			return -1;
	}
	r = cordon_container_create(spec, cli_global.root, console, &pid, err);
	cordon_closep(&console);
	if (r < 0)
		return -1;
	cordon_debug("container %s created: pid %d, bundle %s", spec->id, (int)pid,
		     args->bundle ? args->bundle : ".");
	if (args->pid_file && cordon_pid_file_write(&pid_file, pid, err) < 0) {
		struct cordon_error ignored;

		cordon_container_delete(cli_global.root, spec->id, true, &ignored);
		return -1;
	}
	return 0;
}

int cli_create(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct cli_bundle_args args;
	struct cordon_spec spec;
	int code = 0;

	/* Without --bundle: cordon's own form, a session (session.c). */
	if (!cli_wants_bundle(argc, argv))
		return cli_create_session(argc, argv);
	cordon_spec_init(&spec);
	if (parse_bundle_args(create_flags, argc, argv, &args, &err) < 0)
		code = cli_fail(&err);
	else if (args.help)
		fputs(create_usage, stdout);
	else if (cli_bundle_load(&args, &spec, &err) < 0 || create(&args, &spec, &err) < 0)
		code = cli_fail(&err);
	cordon_spec_free(&spec);
	return code;
}

/* Foreground: the same supervisor as `cordon run`, with the container's state. */
static int run_foreground(const struct cli_bundle_args *args, struct cordon_spec *spec)
{
	/* --keep: the state stays, stopped, until `cordon delete` (runc's run --keep). */
	struct cordon_sandbox_opts opts = { .state_root = cli_global.root,
					    .kept = args->keep,
					    .notify_fd = -1,
					    .console_fd = -1,
					    .relay_terminal = true };
	_cleanup_(cordon_pid_file_close) struct cordon_pid_file pid_file = { .dir_fd = -1 };
	struct cordon_error err = { 0 };
	struct cordon_result result;
	int code;

	if (cordon_sandbox_seal_self(spec, &err) < 0)
		return cli_fail(&err);
	cordon_container_warn_unapplied(spec);
	/* Its directory now, before anything exists: written once created. */
	if (args->pid_file) {
		if (cordon_pid_file_open(&pid_file, args->pid_file, &err) < 0 ||
		    cordon_spec_links_check(spec, &pid_file.links, "--pid-file", &err) < 0)
			return cli_fail(&err);
		opts.pid_file = &pid_file;
	}
	/* The supervisor closes it once the init has it. */
	if (args->console_socket) {
		opts.console_fd = cordon_console_connect(args->console_socket, &err);
		if (opts.console_fd < 0)
			return cli_fail(&err);
	}
	fflush(stdout);
	code = cordon_sandbox_run_opts(spec, &opts, &result);
	if (result.failed)
		cordon_error_print(&result.error);
	cordon_result_free(&result);
	return code;
}

int cli_run_bundle(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct cli_bundle_args args;
	struct cordon_spec spec;
	int code = 0;

	cordon_spec_init(&spec);
	if (parse_bundle_args(run_bundle_flags, argc, argv, &args, &err) < 0) {
		code = cli_fail(&err);
	} else if (args.help) {
		fputs(run_bundle_usage, stdout);
	} else if (cli_bundle_load(&args, &spec, &err) < 0) {
		code = cli_fail(&err);
	} else if (args.detach) {
		if (create(&args, &spec, &err) < 0 ||
		    cordon_container_start(cli_global.root, spec.id, &err) < 0)
			code = cli_fail(&err);
	} else {
		code = run_foreground(&args, &spec);
	}
	cordon_spec_free(&spec);
	return code;
}
