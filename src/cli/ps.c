// SPDX-License-Identifier: Apache-2.0
/* `cordon ps [--format table|json] ID`: the processes of a container. */
#include <fcntl.h>
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"

static const char ps_usage[] =
	"Usage: cordon ps [--format table|json] ID\n"
	"\n"
	"List the processes of container ID (host pids): the members of its\n"
	"cgroup, cordon's init among them; rootless without a cgroup, those of\n"
	"its pid namespace.\n"
	"\n"
	"  -f, --format table|json  a table of PID and command (default), or a\n"
	"                           JSON array of pids (as runc ps --format json)\n"
	"  -h, --help               this text\n";

enum { P_FORMAT, P_HELP };

static const struct cli_flag ps_flags[] = {
	{ "format", P_FORMAT, true, 'f' },
	{ "help", P_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct ps_args {
	bool json, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct ps_args *a = ctx;

	if (id == P_HELP) {
		a->help = true;
		return 0;
	}
	if (strcmp(value, "json") != 0 && strcmp(value, "table") != 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--format: expected table or json, got '%s'", value);
	a->json = strcmp(value, "json") == 0;
	return 0;
}

/* The command line of pid (NULs as spaces), else [comm], else "?". */
static char *command_of(pid_t pid)
{
	_cleanup_free_ char *path = cordon_xasprintf("/proc/%d/cmdline", pid);
	char *text = NULL;
	size_t len = 0;

	if (cordon_read_file_at(AT_FDCWD, path, &text, &len) == 0 && len > 0) {
		for (size_t i = 0; i + 1 < len; i++)
			if (text[i] == '\0')
				text[i] = ' ';
		return text;
	}
	free(text);
	free(path);
	path = cordon_xasprintf("/proc/%d/comm", pid);
	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) == 0) {
		char *out;

		text[strcspn(text, "\n")] = '\0';
		out = cordon_xasprintf("[%s]", text);
		free(text);
		return out;
	}
	return cordon_xstrdup("?");
}

int cli_ps(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct ps_args a = { 0 };
	_cleanup_free_ pid_t *pids = NULL;
	const char *pos[1];
	size_t n;
	int n_pos;

	if (cli_parse_args(ps_flags, P_HELP, argc, argv, apply, &a, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(ps_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (cordon_container_ps(cli_global.root, pos[0], &pids, &n, &err) < 0)
		return cli_fail(&err);
	if (a.json) {
		putchar('[');
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		puts("]");
		return 0;
	}
	printf("%-8s %s\n", "PID", "CMD");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *cmd = command_of(pids[i]);

		printf("%-8d %s\n", (int)pids[i], cmd);
	}
	return 0;
}
