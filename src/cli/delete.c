// SPDX-License-Identifier: Apache-2.0
/* `cordon delete [--force] ID | --regex RE`: remove containers and what they hold. */
#include <regex.h>
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"
#include "cordon/state.h"

static const char delete_usage[] =
	"Usage: cordon delete [--force] ID\n"
	"       cordon delete [--force] --regex RE\n"
	"\n"
	"Remove container ID: its cgroups and its state. A running container is\n"
	"refused unless --force, which kills it first (SIGKILL).\n"
	"\n"
	"  -f, --force     delete a running container too\n"
	"  -r, --regex RE  every container whose ID RE (POSIX extended) matches,\n"
	"                  anywhere in it, as crun's delete --regex\n"
	"  -h, --help      this text\n";

enum { D_FORCE, D_REGEX, D_HELP };

static const struct cli_flag delete_flags[] = {
	{ "force", D_FORCE, false, 'f' },
	{ "regex", D_REGEX, true, 'r' },
	{ "help", D_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct delete_args {
	bool force, help;
	const char *regex;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct delete_args *a = ctx;

	(void)err;
	if (id == D_FORCE)
		a->force = true;
	else if (id == D_REGEX)
		a->regex = value;
	else
		a->help = true;
	return 0;
}

/*
 * Every container of the root whose id RE matches, each deleted as
 * `delete ID` would; one that fails does not stop the others, and the
 * command then fails with the first one's error, counted (one line).
 */
static int delete_matching(const char *re, bool force)
{
	struct cordon_error err = { 0 }, first = { 0 };
	_cleanup_close_ int root_fd = cordon_state_root_open(cli_global.root, NULL, &err);
	_cleanup_strv_ char **ids = NULL;
	size_t matched = 0, failed = 0;
	regex_t rx;
	int r;

	r = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);
	if (r != 0) {
		char why[128];

		regerror(r, &rx, why, sizeof(why));
		cordon_error_set(&err, CORDON_E_USAGE, 0, "--regex %s: %s", re, why);
		return cli_fail(&err);
	}
	if (root_fd < 0) {
		regfree(&rx);
		return cli_fail(&err);
	}
	ids = cordon_state_ids(root_fd);
	for (char **id = ids; *id && !cordon_interrupted(); id++) {
		if (regexec(&rx, *id, 0, NULL, 0) != 0)
			continue;
		matched++;
		memset(&err, 0, sizeof(err));
		if (cordon_container_delete(cli_global.root, *id, force, &err) < 0 && !failed++)
			first = err;
	}
	regfree(&rx);
	if (!failed)
		return 0;
	if (failed > 1)
		cordon_error_wrap(&first, "delete --regex %s: %zu of %zu not deleted, the first", re,
				  failed, matched);
	return cli_fail(&first);
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
	if (a.regex && n_pos == 0)
		return delete_matching(a.regex, a.force);
	if (n_pos != 1 || a.regex) {
		cordon_error_set(&err, CORDON_E_USAGE, 0,
				 a.regex ? "--regex RE takes no container ID" :
					   "a container ID is required");
		return cli_fail(&err);
	}
	if (cordon_container_delete(cli_global.root, pos[0], a.force, &err) < 0)
		return cli_fail(&err);
	return 0;
}
