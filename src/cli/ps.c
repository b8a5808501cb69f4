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

/* The length of a valid UTF-8 sequence at s (at most n bytes) that is no C1 control, else 0. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	uint32_t cp;

	if (!len || len > n || s[0] > 0xf4)
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong, surrogates, past U+10FFFF, and U+0080..U+009F (a terminal's CSI among them). */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return len;
}

/*
 * The workload's bytes as one line of text for a launcher's view: control
 * bytes (a newline would forge a line of the table, ESC a terminal
 * sequence), C1 controls, bytes that are no UTF-8 and the backslash are
 * escaped (\n, \t, \r, \\, else \xHH); the rest is kept.
 */
static char *escaped(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	char *out = cordon_xmalloc(len * 4 + 1), *o = out;

	for (size_t i = 0; i < len;) {
		size_t k = s[i] >= 0x80 ? utf8_printable(s + i, len - i) : 0;

		if (k) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if (s[i] == '\\' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			*o++ = '\\';
			*o++ = s[i] == '\n' ? 'n' : s[i] == '\t' ? 't' : s[i] == '\r' ? 'r' : '\\';
		} else if (s[i] < 0x20 || s[i] >= 0x7f) {
			o += sprintf(o, "\\x%02x", s[i]);
		} else {
			*o++ = (char)s[i];
		}
		i++;
	}
	*o = '\0';
	return out;
}

/* The command line of pid (NULs as spaces), else [comm], else "?"; escaped. */
static char *command_of(pid_t pid)
{
	_cleanup_free_ char *path = cordon_xasprintf("/proc/%d/cmdline", pid);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (cordon_read_file_at(AT_FDCWD, path, &text, &len) == 0 && len > 0) {
		/* NULs between the arguments are spaces; the last one ends it. */
		if (text[len - 1] == '\0')
			len--;
		for (size_t i = 0; i < len; i++)
			if (text[i] == '\0')
				text[i] = ' ';
		return escaped(text, len);
	}
	free(TAKE_PTR(text));
	free(path);
	path = cordon_xasprintf("/proc/%d/comm", pid);
	if (cordon_read_file_at(AT_FDCWD, path, &text, &len) == 0) {
		_cleanup_free_ char *comm = NULL;

		/* comm ends with the kernel's newline; one inside is the workload's. */
		if (len > 0 && text[len - 1] == '\n')
			len--;
		comm = escaped(text, len);
		return cordon_xasprintf("[%s]", comm);
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
