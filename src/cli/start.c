// SPDX-License-Identifier: Apache-2.0
/* `cordon start ID`: release a created container's process. */
#include "cli.h"
#include "cordon/sandbox.h"

static const char start_usage[] = "Usage: cordon start ID\n"
				  "\n"
				  "Start the process of created container ID. Returns once it has\n"
				  "started (execve succeeded), or with the reason it could not.\n";

static const struct cli_flag start_flags[] = {
	{ "help", 0, false, 0 },
	{ NULL, 0, false, 0 },
};

int cli_start(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	const char *pos[1];
	bool help = false;
	int n_pos;

	if (cli_parse_args(start_flags, 0, argc, argv, cli_apply_help, &help, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (help) {
		fputs(start_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (cordon_container_start(cli_global.root, pos[0], &err) < 0)
		return cli_fail(&err);
	return 0;
}
