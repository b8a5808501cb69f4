// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon update [OPTIONS] ID`: change the cgroup limits of a live
 * container, with runc's flag spellings. The values are checked here,
 * as a config.json's would be, before anything is written.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"

static const char update_usage[] =
	"Usage: cordon update [OPTIONS] ID\n"
	"\n"
	"Change the resource limits, or the network allowlist, of sandbox ID\n"
	"(created, running or paused). The flags win over --resources. A change\n"
	"of the allowlist is applied at once and whole, and prints the new\n"
	"policy's fingerprint (for cordon exec --expect-fingerprint).\n"
	"\n"
	"  -r, --resources FILE   a linux.resources JSON object (\"-\": stdin)\n"
	"  --memory BYTES         memory limit (suffix k, m, g; -1: unlimited)\n"
	"  --memory-swap BYTES    memory plus swap (-1: unlimited swap)\n"
	"  --cpu-quota US         CPU time per period (-1: none; at least 1000)\n"
	"  --cpu-period US        the period (1000..1000000)\n"
	"  --cpu-share N          relative weight (2..262144; also --cpu-shares)\n"
	"  --pids-limit N         maximum number of processes (-1: unlimited)\n"
	"  --net-allow ENTRY      allow ENTRY (as cordon run --net-allow) from now on\n"
	"  --net-deny ENTRY       remove ENTRY from the allowlist; its connections are cut\n"
	"  --net-allow-file FILE  allow every entry of FILE (one a line, # comments)\n"
	"  -h, --help             this text\n"
	"\n"
	"runc's --blkio-weight, --cpuset-cpus, --cpuset-mems, --cpu-rt-period,\n"
	"--cpu-rt-runtime, --kernel-memory, --kernel-memory-tcp,\n"
	"--memory-reservation, --l3-cache-schema and --mem-bw-schema are refused.\n";

enum {
	U_RESOURCES,
	U_MEMORY,
	U_MEMORY_SWAP,
	U_CPU_QUOTA,
	U_CPU_PERIOD,
	U_CPU_SHARE,
	U_PIDS_LIMIT,
	U_UNSUPPORTED,
	U_NET_ALLOW,
	U_NET_DENY,
	U_NET_ALLOW_FILE,
	U_HELP,
};

static const struct cli_flag update_flags[] = {
	{ "resources", U_RESOURCES, true, 'r' },
	{ "memory", U_MEMORY, true, 0 },
	{ "memory-swap", U_MEMORY_SWAP, true, 0 },
	{ "cpu-quota", U_CPU_QUOTA, true, 0 },
	{ "cpu-period", U_CPU_PERIOD, true, 0 },
	{ "cpu-share", U_CPU_SHARE, true, 0 },
	{ "cpu-shares", U_CPU_SHARE, true, 0 },
	{ "pids-limit", U_PIDS_LIMIT, true, 0 },
	{ "blkio-weight", U_UNSUPPORTED, true, 0 },
	{ "cpuset-cpus", U_UNSUPPORTED, true, 0 },
	{ "cpuset-mems", U_UNSUPPORTED, true, 0 },
	{ "cpu-rt-period", U_UNSUPPORTED, true, 0 },
	{ "cpu-rt-runtime", U_UNSUPPORTED, true, 0 },
	{ "kernel-memory", U_UNSUPPORTED, true, 0 },
	{ "kernel-memory-tcp", U_UNSUPPORTED, true, 0 },
	{ "memory-reservation", U_UNSUPPORTED, true, 0 },
	{ "l3-cache-schema", U_UNSUPPORTED, true, 0 },
	{ "mem-bw-schema", U_UNSUPPORTED, true, 0 },
	{ "net-allow", U_NET_ALLOW, true, 0 },
	{ "net-deny", U_NET_DENY, true, 0 },
	{ "net-allow-file", U_NET_ALLOW_FILE, true, 0 },
	{ "help", U_HELP, false, 0 },
	{ NULL, 0, false, 0 },
};

struct update_args {
	const char *resources;
	/* The allowlist's changes: "+VALUE" and "-VALUE" lines, in order given. */
	char *edits;
	size_t edits_len;
	struct cordon_resources flags; /* 0: not given */
	bool help;
};

/* -1, or a positive decimal with an optional binary suffix k, m, g (memory only). */
static int parse_limit(const char *flag, const char *value, bool suffix, int64_t *out,
		       struct cordon_error *err)
{
	_cleanup_free_ char *digits = cordon_xstrdup(value);
	size_t len = strlen(digits);
	uint64_t v, mult = 1;

	if (strcmp(value, "-1") == 0) {
		*out = -1;
		return 0;
	}
	if (suffix && len > 1) {
		char c = digits[len - 1];

		mult = c == 'k' || c == 'K' ? 1ULL << 10 :
		       c == 'm' || c == 'M' ? 1ULL << 20 :
		       c == 'g' || c == 'G' ? 1ULL << 30 :
					      1;
		if (mult > 1)
			digits[len - 1] = '\0';
	}
	if (cordon_parse_u64(digits, &v) < 0 || v == 0 || v > (uint64_t)INT64_MAX / mult)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--%s: expected a positive number%s or -1, got '%s'", flag,
					suffix ? " (with k, m or g)" : "", value);
	*out = (int64_t)(v * mult);
	return 0;
}

/* One change of the allowlist: a value on one line (the supervisor parses it). */
static int add_edit(struct update_args *a, char op, const char *value, size_t len,
		    struct cordon_error *err)
{
	if (len == 0 || memchr(value, '\n', len) || memchr(value, '\0', len))
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--net-%s: an empty or multi-line value",
					op == '+' ? "allow" : "deny");
	a->edits = cordon_xrealloc(a->edits, a->edits_len + len + 3);
	a->edits[a->edits_len++] = op;
	memcpy(a->edits + a->edits_len, value, len);
	a->edits_len += len;
	a->edits[a->edits_len++] = '\n';
	a->edits[a->edits_len] = '\0';
	return 0;
}

/* --net-allow-file: each entry of FILE allowed (its format: cordon run --net-allow-file's). */
static int add_file(struct update_args *a, const char *path, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *what = cordon_xasprintf("--net-allow-file %s", path);
	size_t size = 0;

	if (cordon_input_read_path(path, CORDON_INPUT_TEXT_MAX, CORDON_E_NET_POLICY, what, &text,
				   &size, err) < 0)
		return -1;
	for (char *line = text, *end = text + size; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line)), *next = nl ? nl + 1 : end;
		char *hash = memchr(line, '#', (size_t)((nl ? nl : end) - line));
		char *stop = hash ? hash : nl ? nl : end;

		while (line < stop && (*line == ' ' || *line == '\t'))
			line++;
		while (stop > line && (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\r'))
			stop--;
		if (stop > line && add_edit(a, '+', line, (size_t)(stop - line), err) < 0)
			return cordon_error_wrap(err, "%s", what);
		line = next;
	}
	return 0;
}

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct update_args *a = ctx;
	struct cordon_resources *r = &a->flags;
	int64_t v;

	switch (id) {
	case U_RESOURCES:
		if (!*value)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--resources: empty path");
		a->resources = value;
		return 0;
	case U_MEMORY:
		return parse_limit("memory", value, true, &r->memory_limit, err);
	case U_MEMORY_SWAP:
		return parse_limit("memory-swap", value, true, &r->memory_swap, err);
	case U_CPU_QUOTA:
		if (parse_limit("cpu-quota", value, false, &v, err) < 0)
			return -1;
		if (v > 0 && v < 1000)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--cpu-quota: %" PRId64
						" is below the kernel's minimum of 1000 µs",
						v);
		r->cpu_quota = v;
		return 0;
	case U_CPU_PERIOD:
		if (parse_limit("cpu-period", value, false, &v, err) < 0)
			return -1;
		if (v < 1000 || v > 1000000)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--cpu-period: %s out of range (1000..1000000 µs)",
						value);
		r->cpu_period = (uint64_t)v;
		return 0;
	case U_CPU_SHARE:
		if (parse_limit("cpu-share", value, false, &v, err) < 0)
			return -1;
		if (v < 2 || v > 262144)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--cpu-share: %s out of range (2..262144)", value);
		r->cpu_shares = (uint64_t)v;
		return 0;
	case U_PIDS_LIMIT:
		return parse_limit("pids-limit", value, false, &r->pids_limit, err);
	case U_NET_ALLOW:
	case U_NET_DENY:
		return add_edit(a, id == U_NET_ALLOW ? '+' : '-', value, strlen(value), err);
	case U_NET_ALLOW_FILE:
		return add_file(a, value, err);
	case U_UNSUPPORTED:
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"update: only --memory, --memory-swap, --cpu-quota, "
					"--cpu-period, --cpu-share and --pids-limit are supported");
	default:
		a->help = true;
		return 0;
	}
}

/* FILE, or stdin for "-". */
static int read_resources(const char *path, struct cordon_resources *res, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (strcmp(path, "-") == 0) {
		size_t cap = 0;
		ssize_t n;

		do {
			if (len + 4096 > cap)
				text = cordon_xrealloc(text, cap += 65536);
			if (cap > CORDON_OCI_CONFIG_MAX)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--resources -: too large");
			n = read(STDIN_FILENO, text + len, cap - len - 1);
			if (n > 0)
				len += (size_t)n;
		} while (n > 0 || (n < 0 && errno == EINTR));
		if (n < 0)
			return cordon_error_set(err, CORDON_E_USAGE, errno, "--resources -");
	} else {
		_cleanup_free_ char *what = cordon_xasprintf("--resources %s", path);

		/* By the host-path walk (another user's link is not followed), a regular file. */
		if (cordon_input_read_path(path, CORDON_INPUT_JSON_MAX, CORDON_E_PATH, what, &text,
					   &len, err) < 0)
			return -1;
	}
	if (cordon_oci_resources_parse(text ? text : "", len, res, err) < 0)
		return cordon_error_wrap(err, "--resources %s", path);
	return 0;
}

/* The flags over the file's values. */
static void merge(struct cordon_resources *res, const struct cordon_resources *f)
{
	if (f->memory_limit)
		res->memory_limit = f->memory_limit;
	if (f->memory_swap)
		res->memory_swap = f->memory_swap;
	if (f->cpu_quota)
		res->cpu_quota = f->cpu_quota;
	if (f->cpu_period)
		res->cpu_period = f->cpu_period;
	if (f->cpu_shares)
		res->cpu_shares = f->cpu_shares;
	if (f->pids_limit)
		res->pids_limit = f->pids_limit;
}

int cli_update(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct update_args a = { 0 };
	struct cordon_resources res = { 0 };
	const char *pos[1];
	int n_pos, code = 0;

	if (cli_parse_args(update_flags, U_HELP, argc, argv, apply, &a, pos, 1, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		fputs(update_usage, stdout);
		return 0;
	}
	if (n_pos != 1) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "a container ID is required");
		return cli_fail(&err);
	}
	if (a.edits) {
		char fp[65];

		if (a.resources || memcmp(&a.flags, &res, sizeof(res)) != 0)
			cordon_error_set(&err, CORDON_E_USAGE, 0,
					 "update: the allowlist and the limits change in two "
					 "commands");
		else if (cordon_container_net_update(cli_global.root, pos[0], a.edits,
						     a.edits_len, fp, &err) == 0)
			printf("%s\n", fp);
		free(a.edits);
		return err.code ? cli_fail(&err) : 0;
	}
	if (a.resources && read_resources(a.resources, &res, &err) < 0)
		return cli_fail(&err);
	merge(&res, &a.flags);
	if (res.memory_swap > 0 && res.memory_limit > 0 && res.memory_swap < res.memory_limit)
		cordon_error_set(&err, CORDON_E_USAGE, 0,
				 "--memory-swap is memory plus swap: it cannot be below --memory");
	else if (!res.memory_limit && !res.memory_swap && !res.cpu_quota && !res.cpu_period &&
		 !res.cpu_shares && !res.pids_limit && !res.cpus && !res.mems && !res.n_devices &&
		 res.memory_reservation <= 0 && !res.has_swappiness && !res.disable_oom_killer &&
		 !res.n_unified)
		cordon_error_set(&err, CORDON_E_USAGE, 0, "update: nothing to change");
	if (err.code == CORDON_OK &&
	    cordon_container_update(cli_global.root, pos[0], &res, &err) == 0)
		code = 0;
	else
		code = cli_fail(&err);
	cordon_resources_free(&res);
	return code;
}
