/* SPDX-License-Identifier: Apache-2.0 */
/* The command line: one file per command, a shared long-option parser. */
#ifndef CORDON_CLI_H
#define CORDON_CLI_H

#include <stdbool.h>

#include "cordon/core.h"
#include "cordon/spec.h"

struct cli_flag {
	const char *name; /* without the leading "--" */
	int id;
	bool takes_value;
	char short_name; /* runc's one-letter spelling ("-b DIR"), or 0 */
};

/*
 * Consume the option at argv[*i] ("--name value" or "--name=value", a
 * short "-b value" where the table has one, and "-h" for help), advancing
 * *i. Unknown flags and missing values are CORDON_E_USAGE errors that name
 * the flag.
 */
int cli_flag_next(const struct cli_flag *flags, int argc, char **argv, int *i, int *id,
		  const char **value, struct cordon_error *err);

/*
 * The global flags (before the command): --root, --log, --log-format,
 * --debug, and runc's --rootless (checked, see docs/oci.md) and
 * --systemd-cgroup (refused: cordon manages cgroupfs only).
 */
struct cli_global {
	const char *root; /* absolute, or NULL: the caller's default state root */
	bool debug;
};
extern struct cli_global cli_global;

/*
 * The OCI commands' arguments: flags anywhere before "--", up to `max`
 * positional arguments into pos (n_pos set). A flag's id and value go to
 * apply; help sets *help.
 */
typedef int (*cli_apply_fn)(void *ctx, int id, const char *value, struct cordon_error *err);
int cli_parse_args(const struct cli_flag *flags, int help_id, int argc, char **argv,
		   cli_apply_fn apply, void *ctx, const char **pos, int max, int *n_pos,
		   struct cordon_error *err);
/* An apply for commands whose only flag is --help: sets *(bool *)ctx. */
int cli_apply_help(void *ctx, int id, const char *value, struct cordon_error *err);
/* Print the error (and log it) and return CORDON_EXIT_FAILURE. */
int cli_fail(const struct cordon_error *err);

/* `create`, `run --bundle`: the bundle's spec, validated, with the id. */
struct cli_bundle_args {
	const char *bundle;
	const char *pid_file;
	const char *console_socket;
	bool detach;
	bool keep; /* run --keep */
	bool help;
	unsigned preserve_fds; /* --preserve-fds N */
	const char *id;
};
/* --preserve-fds N: fds 3..3+N-1 must be open and not close-on-exec (the caller's). */
int cli_parse_preserve_fds(const char *value, unsigned *n, struct cordon_error *err);
int cli_bundle_load(const struct cli_bundle_args *args, struct cordon_spec *spec,
		    struct cordon_error *err);
/*
 * --result-json PATH: its directory opened now (the host-path walk), the
 * name in it checked (absent, or a regular file). 0, or -1 with err set.
 */
int cli_result_target_open(const char *path, int *dir_fd, char **name,
			   struct cordon_path_links *links, struct cordon_error *err);
/* SIGNAL as a name (TERM, SIGTERM, RTMIN+2) or a number. */
int cli_signal_parse(const char *text, int *sig, struct cordon_error *err);

int cli_create(int argc, char **argv);
int cli_start(int argc, char **argv);
int cli_exec(int argc, char **argv);
int cli_state(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_kill(int argc, char **argv);
int cli_delete(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_ps(int argc, char **argv);
int cli_pause(int argc, char **argv);
int cli_resume(int argc, char **argv);
int cli_update(int argc, char **argv);
/* `cordon run --bundle DIR ID`: argv as given to run. */
int cli_run_bundle(int argc, char **argv);

int cli_run_parse(int argc, char **argv, struct cordon_spec *spec, bool *help,
		  struct cordon_error *err);
/* `cordon create`'s native form: run's options but the command's, --label,
 * --idle-timeout, --max-lifetime, [ROOTFS], no command. */
int cli_session_parse(int argc, char **argv, struct cordon_spec *spec, bool *help,
		      struct cordon_error *err);
/* --bundle (-b) among the options: the OCI form of run and create. */
bool cli_wants_bundle(int argc, char **argv);
/* `cordon create [OPTIONS] [ROOTFS]`: a session (session.c). */
int cli_create_session(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_doctor(int argc, char **argv);

/* `cordon spec` arguments; bundle points into argv (or "."). */
struct cli_spec_args {
	const char *bundle;
	bool rootless;
	bool help;
};

int cli_spec_parse(int argc, char **argv, struct cli_spec_args *args, struct cordon_error *err);
int cli_spec(int argc, char **argv);
int cli_features(int argc, char **argv);

#endif
