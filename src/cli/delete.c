// SPDX-License-Identifier: Apache-2.0
/* `cordon delete [--force] ID`: remove a container and what it holds. */
#include "cli.h"
#include "cordon/sandbox.h"

static const char delete_usage[] =
	"Usage: cordon delete [--force] ID\n"
	"\n"
	"Remove container ID: its cgroups and its state. A running container is\n"
	"refused unless --force, which kills it first (SIGKILL).\n"
	"\n"
	"  -f, --force  delete a running container too\n"
	"  -h, --help   this text\n";

enum { D_FORCE, D_HELP };

static const struct cli_flag delete_flags[] = {
	{ "force", D_FORCE, false, 'f' },
	{ "help", D_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct delete_args {
	bool force, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct delete_args *a = ctx;

	(void)value;
	(void)err;
	if (id == D_FORCE)
		a->force = true;
	else
		a->help = true;
	return 0;
}

int cli_delete(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct delete_args a = { 0 };
	const char *pos[1];
	int n_pos;

	if (cli_parse_args(delete_flags, D_HELP, argc, argv, apply, &a, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(delete_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (cordon_container_delete(cli_global.root, pos[0], a.force, &err) < 0)
		return cli_fail(&err);
	return 0;
}
