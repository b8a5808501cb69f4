// SPDX-License-Identifier: Apache-2.0
/* `cordon run`: flags → struct cordon_spec → cordon_sandbox_run. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cordon/audit.h"
#include "cordon/sandbox.h"
#include "cordon/state.h"

static const char run_usage[] =
	"Usage: cordon run [OPTIONS] [ROOTFS] [--] CMD [ARG...]\n"
	"\n"
	"Run CMD in a disposable sandbox on ROOTFS (default: the built-in rootfs).\n"
	"\n"
	"  --name ID                 sandbox id (default: random)\n"
	"  --user USER[:GROUP]       workload uid/gid (numbers or rootfs names)\n"
	"  --userns auto|host        host: rootful only, no user namespace\n"
	"  --overlay                 writable layer on tmpfs, discarded at exit\n"
	"  --tmpfs-size MB           size of /tmp (default 256, minimum 64)\n"
	"  --workspace DIR           bind DIR read-write at /workspace\n"
	"                            (default: the current directory, unless it is\n"
	"                            /, your home directory or above it)\n"
	"  --no-workspace            no /workspace at all\n"
	"  --bind SRC:DST[:ro|:rw]   bind a host path (read-only unless :rw)\n"
	"  --hostname NAME           host name (default cordon)\n"
	"  --cwd DIR                 working directory inside\n"
	"  --env K=V                 set a variable\n"
	"  --env-pass NAME           pass a host variable\n"
	"  --timeout S               SIGTERM after S seconds, exit 124\n"
	"  --kill-after S            SIGKILL S seconds after SIGTERM (default 5)\n"
	"  -t, --tty                 a terminal of the sandbox's own (stdin must be one)\n"
	"  --output-max BYTES        cap stdout+stderr\n"
	"  --result-json FILE        write the outcome as JSON\n"
	"  --cap-add CAP[,CAP]       grant a capability from the safe set\n"
	"  --cap-drop CAP[,CAP]      remove one (ALL for every one)\n"
	"  --rlimit NAME=SOFT[:HARD] set a resource limit (core, nofile, nproc, ...)\n"
	"  --user-limit NAME=N       a limit of the sandbox's user namespace\n"
	"                            (max_inotify_instances, max_inotify_watches, ...)\n"
	"  --seccomp default|unconfined\n"
	"  --seccomp-profile FILE    an OCI seccomp profile instead of the default\n"
	"  --print-profile           print the effective confinement as JSON, run nothing\n"
	"  --memory MB               memory limit (cgroups)\n"
	"  --memory-swap MB          memory plus swap (equal to --memory: no swap)\n"
	"  --cpus N                  CPU time, e.g. 0.5 or 2\n"
	"  --pids N                  process limit (default 512 where cgroups are usable)\n"
	"  --cgroup-parent PATH      create the sandbox's cgroups below PATH\n"
	"  --limits strict|best-effort  run even where limits cannot be enforced\n"
	"  --net-allow ENTRY[,ENTRY] allow egress to an IP, CIDR, host name or\n"
	"                            *.domain (repeatable); without it: only lo\n"
	"  --net-allow-file FILE     allowlist entries, one per line\n"
	"  --net-allow-any           permit 0.0.0.0/0 and ::/0 as entries\n"
	"  --dns-upstream ADDR[:PORT]  resolver the DNS proxy asks (repeatable;\n"
	"                            default: the host's resolv.conf)\n"
	"  --dns proxy|none          none: no resolver, port 53 closed\n"
	"  --net-backend veth|pasta  uplink (default: veth as root, pasta rootless)\n"
	"  --net-pool CIDR           veth: the pool of host /30s (default 10.231.0.0/16)\n"
	"  --net-max-flows N         connections and UDP flows open at once\n"
	"                            (default 16384)\n"
	"  --allow-host-loopback     pasta: let the sandbox reach the host's\n"
	"                            loopback services (development only)\n"
	"  --audit FILE|none         the audit log (JSON Lines; default: audit.jsonl\n"
	"                            in the state directory; env CORDON_AUDIT)\n"
	"  --audit-dir DIR           where that default log is kept at the end\n"
	"                            (env CORDON_AUDIT_DIR)\n"
	"  --audit-redact REGEX      hide matches in logged command lines (repeatable)\n"
	"  --audit-max BYTES         the log's size cap (default 8 MiB)\n"
	"  -h, --help                this text\n"
	"\n"
	"Exit: the command's status, 128+N for signal N, 124 timeout, 125 cordon\n"
	"error, 126 cannot execute, 127 not found. See cordon-run(1).\n";

enum run_flag {
	F_NAME,
	F_USER,
	F_USERNS,
	F_OVERLAY,
	F_TMPFS_SIZE,
	F_WORKSPACE,
	F_NO_WORKSPACE,
	F_BIND,
	F_HOSTNAME,
	F_CWD,
	F_ENV,
	F_ENV_PASS,
	F_TIMEOUT,
	F_KILL_AFTER,
	F_TTY,
	F_OUTPUT_MAX,
	F_RESULT_JSON,
	F_CAP_ADD,
	F_CAP_DROP,
	F_RLIMIT,
	F_USER_LIMIT,
	F_SECCOMP,
	F_SECCOMP_PROFILE,
	F_PRINT_PROFILE,
	F_MEMORY,
	F_MEMORY_SWAP,
	F_CPUS,
	F_PIDS,
	F_CGROUP_PARENT,
	F_LIMITS,
	F_NET_ALLOW,
	F_NET_ALLOW_FILE,
	F_NET_ALLOW_ANY,
	F_DNS_UPSTREAM,
	F_DNS,
	F_NET_BACKEND,
	F_NET_POOL,
	F_NET_MAX_FLOWS,
	F_ALLOW_HOST_LOOPBACK,
	F_AUDIT,
	F_AUDIT_DIR,
	F_AUDIT_REDACT,
	F_AUDIT_MAX,
	/* A session's own (cordon create ROOTFS). */
	F_LABEL,
	F_IDLE_TIMEOUT,
	F_MAX_LIFETIME,
	F_OWNER,
	F_HELP,
};

static const struct cli_flag run_flags[] = {
	{ "name", F_NAME, true },
	{ "user", F_USER, true },
	{ "userns", F_USERNS, true },
	{ "overlay", F_OVERLAY, false },
	{ "tmpfs-size", F_TMPFS_SIZE, true },
	{ "workspace", F_WORKSPACE, true },
	{ "no-workspace", F_NO_WORKSPACE, false },
	{ "bind", F_BIND, true },
	{ "hostname", F_HOSTNAME, true },
	{ "cwd", F_CWD, true },
	{ "env", F_ENV, true },
	{ "env-pass", F_ENV_PASS, true },
	{ "timeout", F_TIMEOUT, true },
	{ "kill-after", F_KILL_AFTER, true },
	{ "tty", F_TTY, false, 't' },
	{ "output-max", F_OUTPUT_MAX, true },
	{ "result-json", F_RESULT_JSON, true },
	{ "cap-add", F_CAP_ADD, true },
	{ "cap-drop", F_CAP_DROP, true },
	{ "rlimit", F_RLIMIT, true },
	{ "user-limit", F_USER_LIMIT, true },
	{ "seccomp", F_SECCOMP, true },
	{ "seccomp-profile", F_SECCOMP_PROFILE, true },
	{ "print-profile", F_PRINT_PROFILE, false },
	{ "memory", F_MEMORY, true },
	{ "memory-swap", F_MEMORY_SWAP, true },
	{ "cpus", F_CPUS, true },
	{ "pids", F_PIDS, true },
	{ "cgroup-parent", F_CGROUP_PARENT, true },
	{ "limits", F_LIMITS, true },
	{ "net-allow", F_NET_ALLOW, true },
	{ "net-allow-file", F_NET_ALLOW_FILE, true },
	{ "net-allow-any", F_NET_ALLOW_ANY, false },
	{ "dns-upstream", F_DNS_UPSTREAM, true },
	{ "dns", F_DNS, true },
	{ "net-backend", F_NET_BACKEND, true },
	{ "net-pool", F_NET_POOL, true },
	{ "net-max-flows", F_NET_MAX_FLOWS, true },
	{ "allow-host-loopback", F_ALLOW_HOST_LOOPBACK, false },
	{ "audit", F_AUDIT, true },
	{ "audit-dir", F_AUDIT_DIR, true },
	{ "audit-redact", F_AUDIT_REDACT, true },
	{ "audit-max", F_AUDIT_MAX, true },
	{ "label", F_LABEL, true },
	{ "idle-timeout", F_IDLE_TIMEOUT, true },
	{ "max-lifetime", F_MAX_LIFETIME, true },
	{ "owner", F_OWNER, true },
	{ "help", F_HELP, false },
	{ NULL, 0, false },
};

static int set_string(char **dst, const char *value)
{
	free(*dst);
	*dst = cordon_xstrdup(value);
	return 0;
}

static int parse_seconds(const char *flag, const char *value, uint64_t *ms,
			 struct cordon_error *err)
{
	if (cordon_parse_seconds_ms(value, ms) < 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--%s: expected seconds (e.g. 10 or 1.5), got '%s'", flag,
					value);
	return 0;
}

/*
 * --result-json is written at the end by the supervisor, host root when
 * rootful, often into the workspace the workload shares (the README's
 * `run.json` in the default one). Its directory is opened now, before the
 * sandbox exists, and the file is made relative to that fd: a directory the
 * workload renames or replaces by a symlink meanwhile changes nothing
 * (src/sandbox/result.c). A name that already is a symlink or anything but
 * a regular file is refused: it may have been planted by an earlier run.
 * `cordon exec --result-json` opens its target the same way.
 */
int cli_result_target_open(const char *path, int *dir_fd_out, char **name_out,
			   struct cordon_path_links *links, struct cordon_error *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir_fd = cordon_output_dir_open_links(path, "--result-json",
								  CORDON_E_USAGE, &name, links, err);
	struct stat st;

	if (dir_fd < 0)
		return -1;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode))
			return cordon_error_set(
				err, CORDON_E_PATH, 0,
				"--result-json %s: is %s, not a regular file (refused)", path,
				S_ISLNK(st.st_mode) ? "a symbolic link" :
				S_ISDIR(st.st_mode) ? "a directory" :
						      "a special file");
	} else if (errno != ENOENT) {
		return cordon_error_set(err, CORDON_E_PATH, errno, "--result-json %s", path);
	}
	*dir_fd_out = TAKE_FD(dir_fd);
	*name_out = TAKE_PTR(name);
	return 0;
}

static int result_target_open(struct cordon_spec *spec, const char *path, struct cordon_error *err)
{
	_cleanup_free_ char *name = NULL;
	struct cordon_path_links links = { .n = 0 };
	int dir_fd;

	/* The earlier --result-json's links stay with its fd until this one is taken. */
	if (cli_result_target_open(path, &dir_fd, &name, &links, err) < 0) {
		cordon_path_links_close(&links);
		return -1;
	}
	cordon_path_links_close(&spec->result_links);
	spec->result_links = links;
	cordon_closep(&spec->result_dir_fd);
	spec->result_dir_fd = dir_fd;
	set_string(&spec->result_name, name);
	return set_string(&spec->result_json, path);
}

/* A session's limit: seconds above 0, at most a year (a larger one is a typo, not a cap). */
static int parse_lifetime(const char *flag, const char *value, uint64_t *ms,
			  struct cordon_error *err)
{
	if (parse_seconds(flag, value, ms, err) < 0)
		return -1;
	if (*ms == 0 || *ms > CORDON_SESSION_LIFETIME_MAX_MS)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--%s %s: expected seconds above 0, at most %llu", flag,
					value, CORDON_SESSION_LIFETIME_MAX_MS / 1000);
	return 0;
}

/*
 * --owner PID: the process whose end ends the session (cordon sweep),
 * instead of create's parent (a wrapper such as sudo or timeout, which
 * exits with create); its start time is read now. none: no owner, the
 * lifetime cap alone ends a forgotten session.
 */
static int parse_owner(struct cordon_spec *spec, const char *value, struct cordon_error *err)
{
	uint64_t v;

	if (strcmp(value, "none") == 0) {
		spec->creator_pid = -1;
		spec->creator_start = 0;
		return 0;
	}
	if (cordon_parse_u64(value, &v) < 0 || v == 0 || v > INT32_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--owner: expected a pid or none, got '%s'", value);
	spec->creator_pid = (pid_t)v;
	spec->creator_start = cordon_proc_start_time(spec->creator_pid);
	if (!spec->creator_start)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--owner %s: no such process",
					value);
	return 0;
}

/* NAME[,NAME...] into a capability mask. */
static int parse_caps(const char *flag, const char *value, cordon_capset *set,
		      struct cordon_error *err)
{
	_cleanup_free_ char *copy = cordon_xstrdup(value);
	char *save = NULL;

	if (!*value || value[strspn(value, ",")] == '\0')
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: no capability named", flag);
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		cordon_capset one;

		if (cordon_cap_parse(flag, name, &one, err) < 0)
			return -1;
		*set |= one;
	}
	return 0;
}

static int apply_flag(struct cordon_spec *spec, int id, const char *value,
		      struct cordon_error *err)
{
	uint64_t v;

	switch (id) {
	case F_NAME:
		return set_string(&spec->id, value);
	case F_USER:
		return cordon_spec_parse_user(value, &spec->user, err);
	case F_USERNS:
		if (strcmp(value, "auto") == 0)
			spec->userns = CORDON_USERNS_AUTO;
		else if (strcmp(value, "host") == 0)
			spec->userns = CORDON_USERNS_HOST;
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--userns: expected auto or host, got '%s'", value);
		return 0;
	case F_OVERLAY:
		spec->overlay = true;
		return 0;
	case F_TMPFS_SIZE:
		if (cordon_parse_u64(value, &v) < 0 || v > (1u << 20))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--tmpfs-size: expected megabytes, got '%s'", value);
		spec->tmpfs_size_mb = v;
		return 0;
	case F_WORKSPACE:
		spec->no_workspace = false;
		return set_string(&spec->workspace, value);
	case F_NO_WORKSPACE:
		spec->no_workspace = true;
		return 0;
	case F_BIND:
		spec->binds = cordon_xrealloc(spec->binds, (spec->n_binds + 1) * sizeof(*spec->binds));
		memset(&spec->binds[spec->n_binds], 0, sizeof(*spec->binds));
		if (cordon_spec_parse_bind(value, &spec->binds[spec->n_binds], err) < 0)
			return -1;
		spec->n_binds++;
		return 0;
	case F_HOSTNAME:
		return set_string(&spec->hostname, value);
	case F_CWD:
		return set_string(&spec->cwd, value);
	case F_ENV:
		return cordon_spec_add_env(spec, value, err);
	case F_ENV_PASS:
		return cordon_spec_pass_env(spec, value, err);
	case F_TIMEOUT:
		if (parse_seconds("timeout", value, &spec->timeout_ms, err) < 0)
			return -1;
		if (spec->timeout_ms == 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--timeout: must be above 0");
		return 0;
	case F_KILL_AFTER:
		return parse_seconds("kill-after", value, &spec->kill_after_ms, err);
	case F_TTY:
		spec->tty = true;
		return 0;
	case F_OUTPUT_MAX:
		if (cordon_parse_u64(value, &v) < 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--output-max: expected bytes, got '%s'", value);
		spec->output_capped = true;
		spec->output_max = v;
		return 0;
	case F_CAP_ADD:
		return parse_caps("--cap-add", value, &spec->cap_add, err);
	case F_CAP_DROP:
		return parse_caps("--cap-drop", value, &spec->cap_drop, err);
	case F_RLIMIT:
		return cordon_rlimit_parse(value, &spec->security.rlimits, err);
	case F_USER_LIMIT:
		return cordon_user_limit_parse(value, &spec->user_limits, err);
	case F_SECCOMP:
		if (spec->seccomp_profile)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--seccomp and --seccomp-profile exclude each other");
		if (strcmp(value, "default") == 0)
			spec->security.seccomp = CORDON_SECCOMP_DEFAULT;
		else if (strcmp(value, "unconfined") == 0)
			spec->security.seccomp = CORDON_SECCOMP_UNCONFINED;
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--seccomp: expected default or unconfined, got '%s'",
						value);
		spec->seccomp_mode_given = true;
		return 0;
	case F_SECCOMP_PROFILE:
		if (spec->security.seccomp == CORDON_SECCOMP_UNCONFINED || spec->seccomp_mode_given)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--seccomp and --seccomp-profile exclude each other");
		spec->security.seccomp = CORDON_SECCOMP_PROFILE;
		return set_string(&spec->seccomp_profile, value);
	case F_PRINT_PROFILE:
		spec->print_profile = true;
		return 0;
	case F_MEMORY:
	case F_MEMORY_SWAP:
		if (cordon_parse_u64(value, &v) < 0 || v == 0 || v > (1ULL << 40))
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--%s: expected megabytes, got '%s'",
						id == F_MEMORY ? "memory" : "memory-swap", value);
		*(id == F_MEMORY ? &spec->limits.memory : &spec->limits.memory_swap) = v << 20;
		return 0;
	case F_CPUS:
		if (cordon_cpus_to_quota(value, &spec->limits.cpu_quota, &spec->limits.cpu_period) < 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--cpus: expected a number of CPUs like 0.5 or 2, got '%s'",
						value);
		return 0;
	case F_PIDS:
		if (cordon_parse_u64(value, &v) < 0 || v == 0 || v > (1u << 22))
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--pids: expected a positive count, got '%s'", value);
		spec->limits.pids = v;
		spec->limits.pids_default = false;
		return 0;
	case F_CGROUP_PARENT:
		return set_string(&spec->cgroup_parent, value);
	case F_LIMITS:
		if (strcmp(value, "strict") == 0)
			spec->limits.best_effort = false;
		else if (strcmp(value, "best-effort") == 0)
			spec->limits.best_effort = true;
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--limits: expected strict or best-effort, got '%s'", value);
		return 0;
	case F_NET_ALLOW:
		cordon_strv_push(&spec->net.allow, &spec->net.n_allow, value);
		return 0;
	case F_NET_ALLOW_FILE:
		cordon_strv_push(&spec->net.allow_files, &spec->net.n_allow_files, value);
		return 0;
	case F_NET_ALLOW_ANY:
		spec->net.allow_any = true;
		return 0;
	case F_DNS_UPSTREAM:
		cordon_strv_push(&spec->net.upstream_text, &spec->net.n_upstream_text, value);
		return 0;
	case F_DNS:
		spec->net.dns_given = true;
		if (strcmp(value, "proxy") == 0)
			spec->net.dns_none = false;
		else if (strcmp(value, "none") == 0)
			spec->net.dns_none = true;
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--dns: expected proxy or none, got '%s'", value);
		return 0;
	case F_NET_BACKEND:
		if (strcmp(value, "veth") == 0)
			spec->net.backend = CORDON_NET_BACKEND_VETH;
		else if (strcmp(value, "pasta") == 0)
			spec->net.backend = CORDON_NET_BACKEND_PASTA;
		else
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--net-backend: expected veth or pasta, got '%s'",
						value);
		return 0;
	case F_NET_POOL:
		return set_string(&spec->net.pool, value);
	case F_NET_MAX_FLOWS:
		if (cordon_parse_u64(value, &v) < 0 || v < CORDON_NET_FLOWS_MIN ||
		    v > CORDON_NET_FLOWS_MAX)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--net-max-flows: expected a count from %u to %u, "
						"got '%s'",
						CORDON_NET_FLOWS_MIN, CORDON_NET_FLOWS_MAX, value);
		spec->net.max_flows = (uint32_t)v;
		return 0;
	case F_ALLOW_HOST_LOOPBACK:
		spec->net.allow_host_loopback = true;
		return 0;
	case F_RESULT_JSON:
		return result_target_open(spec, value, err);
	case F_AUDIT:
		return cordon_audit_flag_file(spec, value, err);
	case F_AUDIT_DIR:
		return cordon_audit_flag_dir(spec, value, err);
	case F_AUDIT_REDACT:
		return cordon_audit_flag_redact(spec, value, err);
	case F_AUDIT_MAX:
		return cordon_audit_flag_max(spec, value, err);
	case F_LABEL:
		return cordon_spec_add_label(spec, "--label", value, err);
	case F_OWNER:
		return parse_owner(spec, value, err);
	case F_IDLE_TIMEOUT:
	case F_MAX_LIFETIME:
		return parse_lifetime(id == F_IDLE_TIMEOUT ? "idle-timeout" : "max-lifetime", value,
				      id == F_IDLE_TIMEOUT ? &spec->idle_timeout_ms :
							     &spec->max_lifetime_ms,
				      err);
	}
	return cordon_error_set(err, CORDON_E_INTERNAL, 0, "unhandled flag");
}

/*
 * Which flags a form takes: a session's own only in create; the
 * command's own (its timeout, output, terminal, result) only in run,
 * since a session has no command (cordon exec has them per command).
 */
static int flag_allowed(int id, bool session, const char *arg, struct cordon_error *err)
{
	bool session_only = id == F_LABEL || id == F_IDLE_TIMEOUT || id == F_MAX_LIFETIME ||
			    id == F_OWNER;
	bool command_only = id == F_TIMEOUT || id == F_KILL_AFTER || id == F_TTY ||
			    id == F_OUTPUT_MAX || id == F_RESULT_JSON || id == F_PRINT_PROFILE;

	if (session_only && !session)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s: only for a session (cordon create)", arg);
	if (command_only && session)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s: a session has no command of its own; give it to "
					"cordon exec",
					arg);
	return 0;
}

static int parse_options(int argc, char **argv, struct cordon_spec *spec, bool *help,
			 bool session, struct cordon_error *err)
{
	int i = 0;

	*help = false;
	while (i < argc) {
		const char *value = NULL, *arg = argv[i];
		int id, r;

		if (strcmp(argv[i], "--") == 0 || argv[i][0] != '-' || argv[i][1] == '\0')
			break;
		r = cli_flag_next(run_flags, argc, argv, &i, &id, &value, err);
		if (r < 0)
			return -1;
		if (id == F_HELP) {
			*help = true;
			return i;
		}
		if (flag_allowed(id, session, arg, err) < 0 ||
		    apply_flag(spec, id, value, err) < 0)
			return -1;
	}
	return i;
}

int cli_session_parse(int argc, char **argv, struct cordon_spec *spec, bool *help,
		      struct cordon_error *err)
{
	int i = parse_options(argc, argv, spec, help, true, err);

	if (i < 0 || *help)
		return i < 0 ? -1 : 0;
	if (i < argc && strcmp(argv[i], "--") != 0)
		spec->rootfs = cordon_xstrdup(argv[i++]);
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i < argc)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"'%s': a session takes no command (cordon create [OPTIONS] "
					"[ROOTFS]; then cordon exec ID -- CMD)",
					argv[i]);
	spec->session = true;
	if (!spec->max_lifetime_ms)
		spec->max_lifetime_ms = CORDON_SESSION_LIFETIME_DEFAULT_MS;
	/* As run: the flags win over the environment (CORDON_AUDIT_DIR was not read). */
	return cordon_audit_flag_env(spec, err);
}

/* Parse `run`'s arguments into spec: options, [ROOTFS], [--], CMD... */
int cli_run_parse(int argc, char **argv, struct cordon_spec *spec, bool *help,
		  struct cordon_error *err)
{
	int i = parse_options(argc, argv, spec, help, false, err);

	if (i < 0 || *help)
		return i < 0 ? -1 : 0;
	if (i < argc && strcmp(argv[i], "--") == 0) {
		i++; /* no ROOTFS: the built-in one */
	} else if (i < argc) {
		spec->rootfs = cordon_xstrdup(argv[i++]);
		if (i < argc && strcmp(argv[i], "--") == 0)
			i++;
	}
	if (i >= argc && spec->print_profile)
		return 0;
	/* The flags win over the environment; the file is open before anything exists. */
	if (cordon_audit_flag_env(spec, err) < 0)
		return -1;
	/* -t relays the caller's terminal: there must be one to relay (and to read keys from). */
	if (spec->tty && !spec->print_profile && !isatty(STDIN_FILENO))
		return cordon_error_set(err, CORDON_E_USAGE, errno,
					"-t/--tty: stdin is not a terminal");
	if (i >= argc)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"no command given (cordon run [OPTIONS] [ROOTFS] [--] CMD)");
	{
		size_t n = 0;

		for (; i < argc; i++)
			cordon_strv_push(&spec->argv, &n, argv[i]);
	}
	return 0;
}

/* Does this flag (without its value) take a value in either form of run? */
static bool takes_value(const char *arg)
{
	static const char *const bundle_flags[] = { "--pid-file", "--console-socket" };

	if (strncmp(arg, "--", 2) != 0 || strchr(arg, '='))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(bundle_flags); i++)
		if (strcmp(arg, bundle_flags[i]) == 0)
			return true;
	for (const struct cli_flag *f = run_flags; f->name; f++)
		if (f->takes_value && strcmp(f->name, arg + 2) == 0)
			return true;
	return false;
}

/*
 * `cordon run --bundle DIR ID` (or -b) is the OCI command, and so is
 * `cordon create --bundle DIR ID`; anything else is cordon's own.
 */
bool cli_wants_bundle(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-b") == 0 || strcmp(a, "--bundle") == 0 ||
		    strncmp(a, "--bundle=", 9) == 0)
			return true;
		/* The first word that is not an option: ROOTFS or CMD, options end. */
		if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
			return false;
		if (takes_value(a))
			i++;
	}
	return false;
}

int cli_run(int argc, char **argv)
{
	struct cordon_spec spec;
	struct cordon_result result = { 0 };
	struct cordon_error err = { 0 };
	bool help;
	int code;

	if (cli_wants_bundle(argc, argv))
		return cli_run_bundle(argc, argv);
	cordon_spec_init(&spec);
	code = cli_run_parse(argc, argv, &spec, &help, &err);
	cordon_trace("parse");
	if (code < 0 || (!help && cordon_spec_finalize(&spec, &err) < 0)) {
		cordon_error_print(&err);
		/* Not through a link or '..' finalize did not get to check (result_links). */
		if (spec.result_json && spec.result_links.n == 0) {
			result.failed = true;
			result.exit_code = CORDON_EXIT_FAILURE;
			result.error = err;
			cordon_result_write(&spec, &result, &err);
		}
		cordon_spec_free(&spec);
		return CORDON_EXIT_FAILURE;
	}
	if (help) {
		fputs(run_usage, stdout);
		cordon_spec_free(&spec);
		return 0;
	}
	if (spec.print_profile) {
		code = cordon_sandbox_print_profile(&spec, &err) < 0 ? CORDON_EXIT_FAILURE : 0;
		if (code)
			cordon_error_print(&err);
		cordon_spec_free(&spec);
		return code;
	}
	if (cordon_sandbox_seal_self(&spec, &err) < 0) {
		cordon_error_print(&err);
		cordon_spec_free(&spec);
		return CORDON_EXIT_FAILURE;
	}
	cordon_trace("finalize");
	if (spec.security.seccomp == CORDON_SECCOMP_UNCONFINED)
		cordon_warn("--seccomp unconfined: the workload runs without a syscall filter");
	if (spec.net.enabled && spec.net.allow_host_loopback)
		cordon_warn("--allow-host-loopback: the sandbox can reach services on the host's "
			    "loopback (development only)");
	fflush(stdout);
	code = cordon_sandbox_run_opts(&spec,
				       &(struct cordon_sandbox_opts){ .state_root = cli_global.root,
								      .notify_fd = -1,
								      .console_fd = -1,
								      .relay_terminal = true },
				       &result);
	if (result.failed)
		cordon_error_print(&result.error);
	if (spec.result_json && cordon_result_write(&spec, &result, &err) < 0) {
		cordon_error_print(&err);
		code = CORDON_EXIT_FAILURE;
	}
	cordon_trace("result");
	cordon_result_free(&result);
	cordon_spec_free(&spec);
	cordon_trace("exit");
	return code;
}
