// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon inspect ID`: a sandbox's effective posture as JSON, read-only
 * (docs/architecture.md, "inspect"). What its state records; what the
 * kernel says of its process (ids and their maps, the five capability
 * sets, no_new_privs, seccomp, the mounts it sees); its cgroups' limits
 * and usage; and, from its supervisor (MONITOR_NET_INFO), the network
 * policy in force with what it admitted. Nothing secret is in any of
 * these: no environment, no command line.
 *
 * Every string that comes from inside the sandbox (mount points,
 * sources) is written with its non-printable bytes as \xHH, so that the
 * output is valid JSON and plain ASCII whatever the workload named.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/security.h"
#include "sandbox-internal.h"

#define INSPECT_FILE_MAX (1u << 20)

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

/* A string as printable ASCII: every other byte (and the backslash) as \xHH. */
static void safe(yajl_gen g, const char *s, size_t len)
{
	_cleanup_free_ char *out = cordon_xmalloc(len * 4 + 1);
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
	}
	yajl_gen_string(g, (const unsigned char *)out, o);
}

static void str(yajl_gen g, const char *s)
{
	safe(g, s, strlen(s));
}

/* A file of /proc/PID or of a cgroup, whole (bounded), NUL-terminated; NULL if unreadable. */
static char *read_at(int dir, const char *name)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct cordon_error err = { 0 };
	char *text = NULL;
	size_t len = 0;

	if (fd < 0 || cordon_input_read_fd(fd, INSPECT_FILE_MAX, CORDON_E_STATE, name, &text,
					   &len, &err) < 0)
		return NULL;
	return text;
}

/* The value of "Key:\t..." in /proc/PID/status, or NULL. */
static const char *status_field(const char *status, const char *k, char *buf, size_t cap)
{
	size_t klen = strlen(k);

	for (const char *line = status; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, k, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;
			size_t n;

			v += strspn(v, " \t");
			n = nl ? (size_t)(nl - v) : strlen(v);
			snprintf(buf, cap, "%.*s", (int)n, v);
			return buf;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static void caps(yajl_gen g, const char *k, const char *status)
{
	char buf[64], name[32];
	uint64_t set;

	if (!status_field(status, k, buf, sizeof(buf)) || sscanf(buf, "%" SCNx64, &set) != 1)
		return;
	key(g, k);
	yajl_gen_array_open(g);
	for (int cap = 0; cap < 64; cap++)
		if (set & (1ULL << cap))
			str(g, cordon_cap_name(cap, name, sizeof(name)));
	yajl_gen_array_close(g);
}

/* Uid/Gid of status: real, effective, saved and filesystem ids, as the host sees them. */
static void ids(yajl_gen g, const char *k, const char *status, const char *field)
{
	unsigned long long v[4];
	char buf[128];

	if (!status_field(status, field, buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return;
	key(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < 4; i++)
		yajl_gen_integer(g, (long long)v[i]);
	yajl_gen_array_close(g);
}

/* "0 100000 65536" lines as [inside, outside, count] triples. */
static void id_map(yajl_gen g, const char *k, const char *text)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (const char *line = text; line && *line;) {
		unsigned long long in, out, count;

		if (sscanf(line, "%llu %llu %llu", &in, &out, &count) == 3) {
			yajl_gen_array_open(g);
			yajl_gen_integer(g, (long long)in);
			yajl_gen_integer(g, (long long)out);
			yajl_gen_integer(g, (long long)count);
			yajl_gen_array_close(g);
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	yajl_gen_array_close(g);
}

/* mountinfo: mount point, filesystem type, source, options, per mount. */
static void mounts(yajl_gen g, const char *text)
{
	key(g, "mounts");
	yajl_gen_array_open(g);
	for (char *line = (char *)text; line && *line;) {
		char *nl = strchr(line, '\n'), *f[10] = { NULL }, *save = NULL, *dash;
		int n = 0;

		if (nl)
			*nl = '\0';
		dash = strstr(line, " - ");
		if (dash) {
			*dash = '\0';
			for (char *w = strtok_r(line, " ", &save); w && n < 6; w = strtok_r(NULL, " ", &save))
				f[n++] = w;
			save = NULL;
			for (char *w = strtok_r(dash + 3, " ", &save); w && n < 9;
			     w = strtok_r(NULL, " ", &save))
				f[n++] = w;
		}
		if (n >= 8) {
			yajl_gen_map_open(g);
			key(g, "target");
			str(g, f[4]);
			key(g, "type");
			str(g, f[6]);
			key(g, "source");
			str(g, f[7]);
			key(g, "options");
			str(g, f[5]);
			yajl_gen_map_close(g);
		}
		line = nl ? nl + 1 : NULL;
	}
	yajl_gen_array_close(g);
}

/* What the kernel says of the sandbox's process, read while it is the one recorded. */
static void process(yajl_gen g, const struct cordon_state_info *info)
{
	_cleanup_close_ int pidfd = cordon_pidfd_verified(info->pid, info->pid_start), dir = -1;
	_cleanup_free_ char *status = NULL, *uid_map = NULL, *gid_map = NULL, *mountinfo = NULL;
	char path[32], buf[128];

	if (pidfd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d", (int)info->pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	status = read_at(dir, "status");
	uid_map = read_at(dir, "uid_map");
	gid_map = read_at(dir, "gid_map");
	mountinfo = read_at(dir, "mountinfo");
	/* Still the same process: what was read is its. */
	if (!status || cordon_pidfd_send_signal(pidfd, 0) < 0)
		return;
	key(g, "process");
	yajl_gen_map_open(g);
	key(g, "pid");
	yajl_gen_integer(g, info->pid);
	ids(g, "uids", status, "Uid");
	ids(g, "gids", status, "Gid");
	if (uid_map)
		id_map(g, "uid_map", uid_map);
	if (gid_map)
		id_map(g, "gid_map", gid_map);
	key(g, "capabilities");
	yajl_gen_map_open(g);
	caps(g, "CapEff", status);
	caps(g, "CapPrm", status);
	caps(g, "CapInh", status);
	caps(g, "CapBnd", status);
	caps(g, "CapAmb", status);
	yajl_gen_map_close(g);
	key(g, "no_new_privs");
	yajl_gen_bool(g, status_field(status, "NoNewPrivs", buf, sizeof(buf)) &&
				 strcmp(buf, "1") == 0);
	key(g, "seccomp");
	str(g, !status_field(status, "Seccomp", buf, sizeof(buf)) ? "unknown" :
	       strcmp(buf, "2") == 0				    ? "filter" :
	       strcmp(buf, "1") == 0				    ? "strict" :
								      "disabled");
	if (mountinfo)
		mounts(g, mountinfo);
	yajl_gen_map_close(g);
}

/* Each recorded cgroup with the limits and usage its files show. */
static void cgroups(yajl_gen g, const struct cordon_state *state)
{
	static const char *const files[] = {
		"memory.max",	   "memory.current",	"memory.peak",	 "memory.swap.max",
		"pids.max",	   "pids.current",	"pids.peak",	 "cpu.max",
		"cpu.weight",	   "memory.limit_in_bytes", "memory.usage_in_bytes",
		"memory.max_usage_in_bytes", "cpu.cfs_quota_us", "cpu.shares", "cpuacct.usage",
	};
	size_t n = 0;
	char **dirs = cordon_state_cgroup_dirs(state, &n);

	key(g, "cgroups");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int dir = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		_cleanup_free_ char *stat = NULL;

		if (dir < 0)
			continue;
		yajl_gen_map_open(g);
		key(g, "path");
		str(g, dirs[i]);
		for (size_t k = 0; k < ARRAY_SIZE(files); k++) {
			_cleanup_free_ char *v = read_at(dir, files[k]);

			if (!v)
				continue;
			v[strcspn(v, "\n")] = '\0';
			key(g, files[k]);
			str(g, v);
		}
		stat = read_at(dir, "cpu.stat");
		if (stat) {
			const char *u = strstr(stat, "usage_usec ");

			if (u) {
				key(g, "cpu_usage_us");
				yajl_gen_integer(g, strtoll(u + 11, NULL, 10));
			}
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	cordon_strv_free(dirs);
}

/* A parsed JSON value written again (the supervisor's: a few levels deep). */
static void gen_value(yajl_gen g, yajl_val v, int depth)
{
	if (depth > 8 || !v) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_INTEGER(v)) {
		yajl_gen_integer(g, YAJL_GET_INTEGER(v));
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_double(g, YAJL_GET_DOUBLE(v));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < YAJL_GET_OBJECT(v)->len; i++) {
			str(g, YAJL_GET_OBJECT(v)->keys[i]);
			gen_value(g, YAJL_GET_OBJECT(v)->values[i], depth + 1);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < YAJL_GET_ARRAY(v)->len; i++)
			gen_value(g, YAJL_GET_ARRAY(v)->values[i], depth + 1);
		yajl_gen_array_close(g);
	} else {
		yajl_gen_null(g);
	}
}

/* The supervisor's word on the network, embedded as it came (its own JSON, re-generated). */
static int network(yajl_gen g, const struct cordon_state *state, struct cordon_error *err)
{
	_cleanup_close_ int fd = -1, memfd = memfd_create("cordon-inspect", MFD_CLOEXEC |
									 MFD_ALLOW_SEALING);
	_cleanup_free_ char *text = NULL;
	uint32_t req = MONITOR_NET_INFO;
	struct monitor_reply rep;
	yajl_val tree;
	size_t len = 0;
	int r;

	if (memfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "inspect: memfd");
	fd = sandbox_monitor_reach(state, err);
	if (fd < 0)
		return -1;
	r = cordon_send_fds(fd, &req, sizeof(req), &memfd, 1, 0);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_STATE, -r, "container %s: reaching its monitor",
					state->id);
	r = sandbox_monitor_answer(fd, &rep);
	if (sandbox_monitor_reply_error(state->id, r, &rep, "answer", err) < 0)
		return -1;
	if (lseek(memfd, 0, SEEK_SET) < 0 ||
	    cordon_input_read_fd(memfd, INSPECT_FILE_MAX, CORDON_E_STATE, "the network's state",
				 &text, &len, err) < 0)
		return -1;
	tree = yajl_tree_parse(text, NULL, 0);
	if (!tree || !YAJL_IS_OBJECT(tree)) {
		yajl_tree_free(tree);
		return cordon_error_set(err, CORDON_E_STATE, 0,
					"container %s: its monitor's answer is not JSON", state->id);
	}
	key(g, "network");
	gen_value(g, tree, 0);
	yajl_tree_free(tree);
	return 0;
}

char *cordon_container_inspect(const char *root, const char *id, struct cordon_error *err)
{
	const struct cordon_state_info *info;
	struct cordon_state state;
	enum cordon_status status;
	yajl_gen g;

	if (cordon_state_open(&state, root, id, false, err) < 0)
		return NULL;
	info = &state.info;
	status = cordon_state_status(info);
	g = yajl_gen_alloc(NULL);
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	sandbox_json_state_open(g, &state, status);
	key(g, "net_fingerprint");
	str(g, info->net_fingerprint);
	if (status == CORDON_STATUS_CREATED || status == CORDON_STATUS_RUNNING ||
	    status == CORDON_STATUS_PAUSED) {
		process(g, info);
		cgroups(g, &state);
		if (network(g, &state, err) < 0) {
			yajl_gen_free(g);
			cordon_state_close(&state);
			return NULL;
		}
	}
	yajl_gen_map_close(g);
	cordon_state_close(&state);
	return cordon_json_gen_take(g);
}
