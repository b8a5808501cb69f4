// SPDX-License-Identifier: Apache-2.0
/* `cordon list`: the containers under the state root. */
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"

static const char list_usage[] =
	"Usage: cordon list [--label K=V|K]... [--format table|json] [--quiet]\n"
	"\n"
	"  -l, --label K=V|K        only sandboxes with label K of value V (or with\n"
	"                           label K); repeated, every one must match\n"
	"  -f, --format table|json  a table (default) or a JSON array of states, each\n"
	"                           with its kind, labels and owner\n"
	"  -q, --quiet              ids only\n"
	"  -h, --help               this text\n";

enum { L_FORMAT, L_QUIET, L_LABEL, L_HELP };

static const struct cli_flag list_flags[] = {
	{ "format", L_FORMAT, true, 'f' },
	{ "quiet", L_QUIET, false, 'q' },
	{ "label", L_LABEL, true, 'l' },
	{ "help", L_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct list_args {
	bool json, quiet, help;
	char **labels; /* key, value (NULL: any), ... */
	size_t n_labels;
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
	case L_LABEL: {
		char *key, *val;

		if (a->n_labels >= CORDON_LABELS_MAX)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--label: at most %d",
						CORDON_LABELS_MAX);
		if (cordon_label_filter_parse(value, &key, &val, err) < 0)
			return -1;
		a->labels = cordon_xrealloc(a->labels, (a->n_labels + 1) * 2 * sizeof(char *));
		a->labels[2 * a->n_labels] = key;
		a->labels[2 * a->n_labels + 1] = val;
		a->n_labels++;
		break;
	}
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

	int code = 0;

	if (cli_parse_args(list_flags, L_HELP, argc, argv, apply, &a, pos, 0, &n_pos, &err) < 0)
		code = cli_fail(&err);
	else if (a.help)
		fputs(list_usage, stdout);
	else if (cordon_container_list(cli_global.root, a.json, a.quiet,
				       (const char *const *)a.labels, a.n_labels, &err) < 0)
		code = cli_fail(&err);
	for (size_t i = 0; i < 2 * a.n_labels; i++)
		free(a.labels[i]);
	free(a.labels);
	return code;
}
