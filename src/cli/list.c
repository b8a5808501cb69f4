// SPDX-License-Identifier: Apache-2.0
/* `cordon list`: the containers under the state root. */
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"

static const char list_usage[] =
	"Usage: cordon list [--format table|json] [--quiet]\n"
	"\n"
	"  -f, --format table|json  a table (default) or a JSON array of states\n"
	"  -q, --quiet              ids only\n"
	"  -h, --help               this text\n";

enum { L_FORMAT, L_QUIET, L_HELP };

static const struct cli_flag list_flags[] = {
	{ "format", L_FORMAT, true, 'f' },
	{ "quiet", L_QUIET, false, 'q' },
	{ "help", L_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct list_args {
	bool json, quiet, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct list_args *a = ctx;

	switch (id) {
	case L_FORMAT:
		if (strcmp(value, "json") != 0 && strcmp(value, "table") != 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--format: expected table or json, got '%s'",
						value);
		a->json = strcmp(value, "json") == 0;
		break;
	case L_QUIET:
		a->quiet = true;
		break;
	default:
		a->help = true;
	}
	return 0;
}

int cli_list(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct list_args a = { 0 };
	const char *pos[1];
	int n_pos;

	if (cli_parse_args(list_flags, L_HELP, argc, argv, apply, &a, pos, 0, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(list_usage, stdout);
		return 0;
	}
	if (cordon_container_list(cli_global.root, a.json, a.quiet, &err) < 0)
		return cli_fail(&err);
	return 0;
}
