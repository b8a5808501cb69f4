// SPDX-License-Identifier: Apache-2.0
/* cordon: the binary is a dispatcher; each command lives in its own file. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli.h"
#include "cordon/sandbox.h"
#include "cordon/security.h"

static const char usage[] =
	"Usage: cordon [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
	"\n"
	"Commands:\n"
	"  run       run a command in a disposable sandbox (or a bundle: run --bundle DIR ID)\n"
	"  create    create a session: a sandbox that stays up for exec (or, with\n"
	"            --bundle, a container from an OCI bundle; it waits for start)\n"
	"  start     start a created container\n"
	"  exec      run a process in a session or a container\n"
	"  state     print a container's OCI state\n"
	"  kill      send a signal to a container\n"
	"  delete    remove a session, or a stopped container (alias: rm)\n"
	"  list      list sessions and containers (--label K=V filters)\n"
	"  ps        list a container's processes\n"
	"  pause     freeze a container's processes\n"
	"  resume    thaw a paused container\n"
	"  update    change a container's resource limits\n"
	"  sweep     remove the remains of sandboxes whose supervisor died\n"
	"  doctor    check what this host can give cordon, before anything runs\n"
	"  spec      write a default OCI config.json into a bundle\n"
	"  features  print the OCI runtime features document\n"
	"  help      this text\n"
	"\n"
	"Global options:\n"
	"  --root DIR                 state root (default /run/cordon as root,\n"
	"                             $XDG_RUNTIME_DIR/cordon otherwise)\n"
	"  --log FILE                 also write errors and warnings to FILE\n"
	"  --log-format text|json     format of the log (json: one object per line)\n"
	"  --debug                    debug messages\n"
	"  --rootless auto|true|false runc's flag: accepted; cordon tells rootless\n"
	"                             from its own uid (see cordon(1))\n"
	"  --systemd-cgroup           refused: cordon manages cgroupfs only\n"
	"  --version                  print the version\n"
	"\n"
	"See cordon(1) and cordon-run(1).\n";

enum global_flag {
	G_ROOT,
	G_LOG,
	G_LOG_FORMAT,
	G_DEBUG,
	G_ROOTLESS,
	G_SYSTEMD_CGROUP,
	G_HELP,
	G_VERSION
};

static const struct cli_flag global_flags[] = {
	{ "root", G_ROOT, true, 0 },
	{ "log", G_LOG, true, 0 },
	{ "log-format", G_LOG_FORMAT, true, 0 },
	{ "debug", G_DEBUG, false, 0 },
	{ "rootless", G_ROOTLESS, true, 0 },
	{ "systemd-cgroup", G_SYSTEMD_CGROUP, false, 0 },
	{ "help", G_HELP, false, 0 },
	{ "version", G_VERSION, false, 'v' },
	{ NULL, 0, false, 0 },
};

/*
 * interruptible: a command on an existing container, whose every wait
 * (its lock, its monitor, its init, a freeze) SIGINT, SIGTERM and SIGHUP
 * end (cordon_interrupt_arm). run and create are supervisors with their
 * own signal handling.
 */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool interruptible;
} commands[] = {
	{ "run", cli_run, false },	{ "create", cli_create, false },
	{ "start", cli_start, true },	{ "state", cli_state, true },
	{ "kill", cli_kill, true },	{ "delete", cli_delete, true },
	{ "list", cli_list, true },	{ "exec", cli_exec, true },
	{ "sweep", cli_sweep, false },	{ "doctor", cli_doctor, false },
	{ "spec", cli_spec, false },	{ "features", cli_features, false },
	{ "ps", cli_ps, true },		{ "pause", cli_pause, true },
	{ "resume", cli_resume, true }, { "update", cli_update, true },
	{ "inspect", cli_inspect, true },
	{ "rm", cli_delete, true },
};

/* A relative --root is made absolute: the monitor leaves the caller's directory. */
static char *absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;

	if (path[0] == '/')
		return cordon_xstrdup(path);
	cwd = getcwd(NULL, 0);
	return cwd ? cordon_xasprintf("%s/%s", cwd, path) : cordon_xstrdup(path);
}

/* Global flags up to the command; returns the command's index, or -1 (err), or argc. */
static int parse_global(int argc, char **argv, bool *help, bool *version, struct cordon_error *err)
{
	const char *log = NULL, *format = "text";
	bool debug = false, systemd_cgroup = false;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		const char *value;
		int id;

		if (cli_flag_next(global_flags, argc, argv, &i, &id, &value, err) < 0)
			return -1;
		switch (id) {
		case G_ROOT:
			if (!*value)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--root: empty path");
			free((char *)cli_global.root);
			cli_global.root = absolute(value);
			break;
		case G_LOG:
			log = value;
			break;
		case G_LOG_FORMAT:
			format = value;
			break;
		case G_DEBUG:
			debug = true;
			break;
		case G_ROOTLESS:
			/*
			 * runc: true/auto ignore cgroups the caller cannot create
			 * unless a limit is asked for, which is what cordon does for
			 * every caller; false changes nothing for root, and cordon
			 * never acts as root for a caller that is not.
			 */
			if (strcmp(value, "auto") != 0 && strcmp(value, "true") != 0 &&
			    strcmp(value, "false") != 0)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--rootless: expected auto, true or false, "
							"got '%s'",
							value);
			break;
		case G_SYSTEMD_CGROUP:
			systemd_cgroup = true;
			break;
		case G_HELP:
			*help = true;
			break;
		case G_VERSION:
			*version = true;
			break;
		}
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--log-format: expected text or json, got '%s'", format);
	cli_global.debug = debug;
	if (cordon_log_configure(log,
				 strcmp(format, "json") == 0 ? CORDON_LOG_JSON : CORDON_LOG_TEXT,
				 debug, err) < 0)
		return -1;
	/* After the log: a launcher that logs to --log finds the reason there. */
	if (systemd_cgroup)
		return cordon_error_set(
			err, CORDON_E_CGROUP, 0,
			"--systemd-cgroup: systemd cgroup manager is not supported: "
			"use cgroupfs");
	return i;
}

/*
 * How much of argv[k] the debug line shows: all of it, but the value of
 * an --env K=V (run, exec) or -e K=V (exec), which may be a secret the
 * log's readers need not see; nothing is hidden after "--" (the
 * workload's own command line).
 */
static size_t shown(char **argv, int k, bool *workload)
{
	const char *a = argv[k], *prev = k ? argv[k - 1] : "", *eq;
	size_t skip;

	if (*workload)
		return strlen(a);
	if (strcmp(a, "--") == 0) {
		*workload = true;
		return 2;
	}
	if (strcmp(prev, "--env") == 0 || strcmp(prev, "-e") == 0)
		skip = 0;
	else if (strncmp(a, "--env=", 6) == 0)
		skip = 6;
	else if (strncmp(a, "-e", 2) == 0 && a[2])
		skip = 2;
	else
		return strlen(a);
	eq = strchr(a + skip, '=');
	return eq ? (size_t)(eq - a) + 1 : strlen(a);
}

/* --debug: the command as given (a launcher's log then shows what it asked). */
static void debug_command_line(int argc, char **argv)
{
	char line[900];
	size_t n = 0;
	bool workload = false;

	if (!cli_global.debug)
		return;
	line[0] = '\0';
	for (int k = 0; k < argc && n + 1 < sizeof(line); k++) {
		size_t len = shown(argv, k, &workload);
		int w = snprintf(line + n, sizeof(line) - n, "%s%.*s%s", k ? " " : "", (int)len,
				 argv[k], len < strlen(argv[k]) ? "***" : "");

		if (w < 0)
			break;
		n += (size_t)w;
	}
	cordon_debug("command: %s", line);
}

/*
 * fds 0, 1 and 2 open before cordon opens anything: a launcher that
 * starts it with one of them closed would have cordon's next file (host
 * root's --log, the trace, an audit log) take that number, and what
 * holds a number of 0-2 is passed on as a container's stdio, where its
 * workload would write into it. One left closed is /dev/null, the null
 * device and nothing else, as the caller's stdio (not close-on-exec). A
 * directory or an O_PATH fd there is refused: a sandbox's stdio, it
 * would be a handle on the host's tree outside its root.
 */
static int stdio_open(struct cordon_error *err)
{
	for (int fd = 0; fd < 3; fd++) {
		int flags = fcntl(fd, F_GETFL), null;
		struct stat st;

		if (flags >= 0) {
			if ((flags & O_PATH) || (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)))
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"fd %d is %s: a sandbox's stdio would be a "
							"handle on the host's tree (refused)",
							fd, flags & O_PATH ? "an O_PATH fd" :
									     "a directory");
			continue;
		}
		if (errno != EBADF)
			return cordon_error_set(err, CORDON_E_USAGE, errno, "fd %d", fd);
		/* The lowest free number: this one, every lower one being open. */
		null = open("/dev/null", O_RDWR | O_NOCTTY);
		if (null < 0)
			return cordon_error_set(err, CORDON_E_USAGE, errno,
						"fd %d was closed and /dev/null cannot stand in for it",
						fd);
		if (null != fd || fstat(null, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != makedev(1, 3)) {
			close(null);
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"fd %d was closed and /dev/null is not the null "
						"device to stand in for it (refused)",
						fd);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	bool help = false, version = false;
	const char *cmd;
	int i;

	/* The DNS proxy's fresh image (src/sandbox/egress/proxy.c): nothing else of main. */
	if (argc == 1 && strcmp(argv[0], "cordon-dnsproxy") == 0)
		return cordon_dnsproxy_main();
	if (stdio_open(&err) < 0)
		return cli_fail(&err);
	cordon_self_init(argv);
	i = parse_global(argc, argv, &help, &version, &err);

	if (i < 0)
		return cli_fail(&err);
	/* CORDON_TRACE: after the log, so that a bad one is logged (docs/benchmarks.md). */
	if (cordon_trace_open(&err) < 0)
		return cli_fail(&err);
	cordon_trace("main");
	cmd = i < argc ? argv[i] : NULL;
	if (version || (cmd && strcmp(cmd, "version") == 0)) {
		/* runc's and crun's shape: launchers read "spec:" (docker info does). */
		printf("cordon version %s\nspec: %s\n", CORDON_VERSION, CORDON_OCI_VERSION);
		return 0;
	}
	if (help || (cmd && strcmp(cmd, "help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (!cmd) {
		fputs(usage, stderr);
		return CORDON_EXIT_FAILURE;
	}
	for (size_t k = 0; k < ARRAY_SIZE(commands); k++) {
		int code;

		if (strcmp(cmd, commands[k].name) != 0)
			continue;
		debug_command_line(argc - i, argv + i);
		if (commands[k].interruptible)
			cordon_interrupt_arm();
		code = commands[k].fn(argc - i - 1, argv + i + 1);
		cordon_debug("%s: exit status %d", cmd, code);
		return code;
	}
	cordon_error_set(&err, CORDON_E_USAGE, 0, "unknown command '%s' (see cordon help)", cmd);
	return cli_fail(&err);
}
