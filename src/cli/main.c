// SPDX-License-Identifier: Apache-2.0
/* cordon: the binary is a dispatcher; each command lives in its own file. */
#include <string.h>

#include "cli.h"

static const char usage[] =
	"Usage: cordon COMMAND [OPTIONS]\n"
	"\n"
	"Commands:\n"
	"  run       run a command in a disposable sandbox\n"
	"  sweep     remove the remains of sandboxes whose supervisor died\n"
	"  spec      write a default OCI config.json into a bundle\n"
	"  features  print the OCI runtime features document\n"
	"  help      this text\n"
	"\n"
	"  --version print the version\n"
	"\n"
	"See cordon(1) and cordon-run(1).\n";

int main(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		fputs(usage, stderr);
		return CORDON_EXIT_FAILURE;
	}
	if (strcmp(cmd, "run") == 0)
		return cli_run(argc - 2, argv + 2);
	if (strcmp(cmd, "sweep") == 0)
		return cli_sweep(argc - 2, argv + 2);
	if (strcmp(cmd, "spec") == 0)
		return cli_spec(argc - 2, argv + 2);
	if (strcmp(cmd, "features") == 0)
		return cli_features(argc - 2, argv + 2);
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("cordon version %s\n", CORDON_VERSION);
		return 0;
	}
	cordon_error_set(&err, CORDON_E_USAGE, 0, "unknown command '%s' (see cordon help)", cmd);
	cordon_error_print(&err);
	return CORDON_EXIT_FAILURE;
}
