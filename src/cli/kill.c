// SPDX-License-Identifier: Apache-2.0
/* `cordon kill [--all] ID [SIGNAL]`: signal a container's process. */
#include <ctype.h>
#include <signal.h>
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"

static const char kill_usage[] =
	"Usage: cordon kill [--all] ID [SIGNAL]\n"
	"\n"
	"Send SIGNAL (default TERM) to the process of container ID. SIGNAL is a\n"
	"name with or without SIG (TERM, SIGKILL, RTMIN+1) or a number.\n"
	"\n"
	"  -a, --all   every process of the container\n"
	"  -h, --help  this text\n";

enum { K_ALL, K_HELP };

static const struct cli_flag kill_flags[] = {
	{ "all", K_ALL, false, 'a' },
	{ "help", K_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct kill_args {
	bool all, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct kill_args *a = ctx;

	(void)value;
	(void)err;
	if (id == K_ALL)
		a->all = true;
	else
		a->help = true;
	return 0;
}

/* RTMIN, RTMIN+N, RTMAX, RTMAX-N. */
static int parse_realtime(const char *name, int *sig)
{
	uint64_t n = 0;
	int base, dir;

	if (strncmp(name, "RTMIN", 5) == 0) {
		base = SIGRTMIN;
		dir = 1;
	} else if (strncmp(name, "RTMAX", 5) == 0) {
		base = SIGRTMAX;
		dir = -1;
	} else {
		return -1;
	}
	name += 5;
	if (*name) {
		if (*name != (dir > 0 ? '+' : '-') || cordon_parse_u64(name + 1, &n) < 0)
			return -1;
	}
	*sig = base + dir * (int)n;
	return *sig >= SIGRTMIN && *sig <= SIGRTMAX ? 0 : -1;
}

int cli_signal_parse(const char *text, int *sig, struct cordon_error *err)
{
	char name[32];
	uint64_t n;
	size_t i;

	if (cordon_parse_u64(text, &n) == 0) {
		if (n == 0 || n >= (uint64_t)NSIG)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "signal %s: out of range",
						text);
		*sig = (int)n;
		return 0;
	}
	for (i = 0; text[i] && i + 1 < sizeof(name); i++)
		name[i] = (char)toupper((unsigned char)text[i]);
	name[i] = '\0';
	{
		const char *bare = name;

		if (name[0] == 'S' && name[1] == 'I' && name[2] == 'G')
			bare += 3;

		if (!text[i] && *bare) {
			for (int s = 1; s < SIGRTMIN; s++) {
				const char *abbrev = sigabbrev_np(s);

				if (abbrev && strcmp(abbrev, bare) == 0) {
					*sig = s;
					return 0;
				}
			}
			if (parse_realtime(bare, sig) == 0)
				return 0;
		}
	}
	return cordon_error_set(err, CORDON_E_USAGE, 0, "unknown signal '%s'", text);
}

int cli_kill(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct kill_args a = { 0 };
	const char *pos[2];
	int n_pos, sig = SIGTERM;

	if (cli_parse_args(kill_flags, K_HELP, argc, argv, apply, &a, pos, 2, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(kill_usage, stdout);
		return 0;
	}
	if (n_pos < 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (n_pos == 2 && cli_signal_parse(pos[1], &sig, &err) < 0)
		return cli_fail(&err);
	if (cordon_container_kill(cli_global.root, pos[0], sig, a.all, &err) < 0)
		return cli_fail(&err);
	return 0;
}
