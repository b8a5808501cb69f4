// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon sweep [--dry-run]`: remove what is provably left of sandboxes
 * (cordon_state_sweep_report), one line for each with the reason.
 */
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "cordon/state.h"

static const char sweep_usage[] =
	"Usage: cordon sweep [--dry-run]\n"
	"\n"
	"Remove the remains of sandboxes that are provably orphaned: on this host,\n"
	"those whose supervisor died (their cgroups and state), and sessions whose\n"
	"owner process is gone (pid and start time) or that outlived their\n"
	"lifetime cap (ended); recorded on another host, those older than their\n"
	"lifetime cap (their state). Nothing else is touched.\n"
	"\n"
	"  -n, --dry-run  say what would be removed and why, remove nothing\n"
	"  -h, --help     this text\n";

enum { S_DRY_RUN, S_HELP };

static const struct cli_flag sweep_flags[] = {
	{ "dry-run", S_DRY_RUN, false, 'n' },
	{ "help", S_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct sweep_args {
	bool dry_run, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct sweep_args *a = ctx;

	(void)value;
	(void)err;
	if (id == S_DRY_RUN)
		a->dry_run = true;
	else
		a->help = true;
	return 0;
}

static void report(void *ctx, const char *id, enum cordon_sweep_action action, const char *why)
{
	const bool dry_run = *(const bool *)ctx;
	const char *what = action == CORDON_SWEEP_KEEP	? "kept" :
			   action == CORDON_SWEEP_STOP	? (dry_run ? "would end" : "ended") :
			   action == CORDON_SWEEP_FORGET ? (dry_run ? "would forget" : "forgot") :
							   (dry_run ? "would remove" : "removed");

	printf("%s %s: %s\n", what, id, why);
}

int cli_sweep(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct sweep_args a = { 0 };
	_cleanup_close_ int root = -1;
	struct cordon_sweep_opts opts = { .budget = UINT_MAX, .wait = true, .report = report };
	const char *pos[1];
	int n_pos, removed;

	if (cli_parse_args(sweep_flags, S_HELP, argc, argv, apply, &a, pos, 0, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(sweep_usage, stdout);
		return 0;
	}
	root = cordon_state_root_open(cli_global.root, NULL, &err);
	if (root < 0)
		return cli_fail(&err);
	opts.dry_run = a.dry_run;
	opts.ctx = &a.dry_run;
	removed = cordon_state_sweep_report(root, &opts);
	printf("%s %d\n", a.dry_run ? "would remove" : "removed", removed);
	return 0;
}
