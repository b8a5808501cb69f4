// SPDX-License-Identifier: Apache-2.0
/* `cordon inspect ID`: a sandbox's effective posture as JSON on stdout. */
#include "cli.h"
#include "cordon/sandbox.h"

static const char inspect_usage[] =
	"Usage: cordon inspect ID\n"
	"\n"
	"Print the effective posture of sandbox ID as JSON: its state, owner and\n"
	"rootfs; its process's ids and id maps, capability sets, no_new_privs,\n"
	"seccomp mode and mounts; its cgroups' limits and usage; and the network\n"
	"policy in force (allowlist, fingerprint, admitted addresses with the\n"
	"names they were admitted for and their remaining TTL, blocked ranges,\n"
	"drop counters). Read-only; no environment or command line is shown.\n";

static const struct cli_flag inspect_flags[] = {
	{ "help", 0, false, 0 },
	{ NULL, 0, false, 0 },
};

int cli_inspect(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	_cleanup_free_ char *json = NULL;
	const char *pos[1];
	bool help = false;
	int n_pos;

	if (cli_parse_args(inspect_flags, 0, argc, argv, cli_apply_help, &help, pos, 1, &n_pos,
			   &err) < 0)
		return cli_fail(&err);
	if (help) {
		fputs(inspect_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a sandbox ID is required");
		return cli_fail(&err);
	}
	json = cordon_container_inspect(cli_global.root, pos[0], &err);
	if (!json)
		return cli_fail(&err);
	printf("%s\n", json);
	return 0;
}
