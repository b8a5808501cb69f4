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
};

/*
 * Consume the option at argv[*i] ("--name value" or "--name=value", and
 * "-h" for help), advancing *i. Unknown flags and missing values are
 * CORDON_E_USAGE errors that name the flag.
 */
int cli_flag_next(const struct cli_flag *flags, int argc, char **argv, int *i, int *id,
		  const char **value, struct cordon_error *err);

int cli_run_parse(int argc, char **argv, struct cordon_spec *spec, bool *help,
		  struct cordon_error *err);
int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);

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
