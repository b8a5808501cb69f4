// SPDX-License-Identifier: Apache-2.0
/* `cordon pause ID`, `cordon resume ID`: freeze and thaw a container. */
#include "cli.h"
#include "cordon/sandbox.h"

static const char pause_usage[] =
	"Usage: cordon pause ID\n"
	"\n"
	"Freeze every process of container ID (its freezer cgroup); its state\n"
	"says paused until `cordon resume ID`.\n";

static const char resume_usage[] =
	"Usage: cordon resume ID\n"
	"\n"
	"Thaw the processes of paused container ID.\n";

static const struct cli_flag pause_flags[] = {
	{ "help", 0, false, 0 },
	{ NULL, 0, false, 0 },
};

static int pause_or_resume(int argc, char **argv, bool pause)
{
	struct cordon_error err = { 0 };
	const char *pos[1];
	bool help = false;
	int n_pos;

	if (cli_parse_args(pause_flags, 0, argc, argv, cli_apply_help, &help, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (help) {
		fputs(pause ? pause_usage : resume_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (cordon_container_pause(cli_global.root, pos[0], pause, &err) < 0)
		return cli_fail(&err);
	return 0;
}

int cli_pause(int argc, char **argv)
{
	return pause_or_resume(argc, argv, true);
}

int cli_resume(int argc, char **argv)
{
	return pause_or_resume(argc, argv, false);
}
