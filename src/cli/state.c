// SPDX-License-Identifier: Apache-2.0
/* `cordon state ID`: the OCI state document on stdout. */
#include "cli.h"
#include "cordon/sandbox.h"

static const char state_usage[] =
	"Usage: cordon state ID\n"
	"\n"
	"Print the OCI state of container ID as JSON: ociVersion, id, status\n"
	"(creating, created, running, stopped), pid, bundle, annotations,\n"
	"created, and exitStatus once stopped.\n";

static const struct cli_flag state_flags[] = {
	{ "help", 0, false, 0 },
	{ NULL, 0, false, 0 },
};

int cli_state(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	_cleanup_free_ char *json = NULL;
	const char *pos[1];
	bool help = false;
	int n_pos;

	if (cli_parse_args(state_flags, 0, argc, argv, cli_apply_help, &help, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (help) {
		fputs(state_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	json = cordon_container_state(cli_global.root, pos[0], &err);
	if (!json)
		return cli_fail(&err);
	printf("%s\n", json);
	return 0;
}
