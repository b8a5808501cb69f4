// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's namespace limits: /proc/sys/user/max_* of its user
 * namespace (U1), written by its init once cordon's own namespaces exist.
 *
 * A new user namespace starts with every limit at INT_MAX; what bounds it
 * is only its ancestors' limit for its owner. The kernel charges each
 * inotify instance, watch, fanotify group or mark and namespace to
 * (namespace, euid) and then to (parent, owner of the namespace) all the
 * way up: every uid of the sandbox is charged, in the end, to its owner
 * on the host. One sandbox could take all of host root's 128 inotify
 * instances (rootful) or the caller's (rootless). The entry of U1's owner
 * in U1 gathers all of the workload's nested namespace (U2), so U1's
 * limit bounds the workload's total.
 *
 * The default is the smaller of a fixed cap and an eighth of the caller's
 * own limit (its namespace's, which is the host's unless cordon runs in a
 * container): seven sandboxes at their limits still leave the owner an
 * eighth of its own, and a caller that sees INT_MAX (an unlimited parent
 * namespace) still gets bounded sandboxes. Namespaces: the workload can
 * create none (seccomp; no capability over the namespaces U1 owns; a
 * user namespace limit of 0), so their cap of 16 only bounds what runs in
 * U1 (hooks) and leaves headroom over cordon's own (at most three).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cordon/userns.h"

#define HOST_SHARE 8 /* the default: at most 1/HOST_SHARE of the caller's own limit */

static const struct {
	const char *name;
	int64_t cap; /* the default at most */
} limit_table[CORDON_USER_LIMIT_COUNT] = {
	[CORDON_USER_LIMIT_INOTIFY_INSTANCES] = { "max_inotify_instances", 128 },
	[CORDON_USER_LIMIT_INOTIFY_WATCHES] = { "max_inotify_watches", 65536 },
	[CORDON_USER_LIMIT_FANOTIFY_GROUPS] = { "max_fanotify_groups", 128 },
	[CORDON_USER_LIMIT_FANOTIFY_MARKS] = { "max_fanotify_marks", 65536 },
	[CORDON_USER_LIMIT_IPC_NAMESPACES] = { "max_ipc_namespaces", 16 },
	[CORDON_USER_LIMIT_MNT_NAMESPACES] = { "max_mnt_namespaces", 16 },
	[CORDON_USER_LIMIT_NET_NAMESPACES] = { "max_net_namespaces", 16 },
	[CORDON_USER_LIMIT_PID_NAMESPACES] = { "max_pid_namespaces", 16 },
	[CORDON_USER_LIMIT_UTS_NAMESPACES] = { "max_uts_namespaces", 16 },
	[CORDON_USER_LIMIT_CGROUP_NAMESPACES] = { "max_cgroup_namespaces", 16 },
	[CORDON_USER_LIMIT_TIME_NAMESPACES] = { "max_time_namespaces", 16 },
};

const char *cordon_user_limit_name(enum cordon_user_limit limit)
{
	return limit < CORDON_USER_LIMIT_COUNT ? limit_table[limit].name : NULL;
}

int cordon_user_limit_from_name(const char *name)
{
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++)
		if (strcmp(limit_table[i].name, name) == 0)
			return i;
	return -1;
}

void cordon_user_limits_init(struct cordon_user_limits *limits)
{
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++) {
		limits->value[i] = -1;
		limits->host[i] = -1;
	}
	limits->given = 0;
}

int cordon_user_limit_set(struct cordon_user_limits *limits, const char *name, const char *value,
			  struct cordon_error *err)
{
	int i = cordon_user_limit_from_name(name);
	uint64_t v;

	if (i < 0)
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"'%s': not a limit cordon sets (max_inotify_instances, max_inotify_watches, "
			"max_fanotify_groups, max_fanotify_marks, max_{ipc,mnt,net,pid,uts,cgroup,"
			"time}_namespaces)",
			name);
	if (cordon_parse_u64(value, &v) < 0 || v > INT_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"%s: expected a number 0..%d, got '%s'", name, INT_MAX,
					value);
	if (limits->given & (1u << i))
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: given twice", name);
	limits->given |= 1u << i;
	limits->value[i] = (int64_t)v;
	return 0;
}

int cordon_user_limit_parse(const char *arg, struct cordon_user_limits *limits,
			    struct cordon_error *err)
{
	const char *eq = strchr(arg, '=');
	char name[64];

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name))
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--user-limit '%s': expected NAME=N", arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	if (cordon_user_limit_set(limits, name, eq + 1, err) < 0)
		return cordon_error_wrap(err, "--user-limit");
	return 0;
}

/* The caller's own value of a limit, -1 when this kernel has none; -errno else. */
static int64_t read_own(int dirfd, const char *name)
{
	char buf[32];
	uint64_t v;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -1 : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (cordon_parse_u64(buf, &v) < 0 || v > INT_MAX)
		return -EINVAL;
	return (int64_t)v;
}

int cordon_user_limits_resolve(struct cordon_user_limits *limits, enum cordon_code code,
			       struct cordon_error *err)
{
	_cleanup_close_ int dir = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno,
					"reading the user namespace limits (/proc/sys/user)");
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++) {
		const char *name = limit_table[i].name;
		int64_t own = read_own(dir, name);
		bool given = limits->given & (1u << i);

		if (own < -1)
			return cordon_error_set(err, CORDON_E_SECURITY, (int)-own,
						"reading /proc/sys/user/%s", name);
		limits->host[i] = own;
		if (own < 0 && given)
			return cordon_error_set(err, code, 0,
						"user.%s: this kernel has no such limit", name);
		if (own < 0) {
			limits->value[i] = -1;
		} else if (given && limits->value[i] > own) {
			return cordon_error_set(err, code, 0,
						"user.%s=%" PRId64
						": above the caller's own %" PRId64,
						name, limits->value[i], own);
		} else if (!given) {
			limits->value[i] = own / HOST_SHARE < limit_table[i].cap ?
						   own / HOST_SHARE :
						   limit_table[i].cap;
		}
	}
	return 0;
}

int cordon_user_limits_write(const struct cordon_user_limits *limits, struct cordon_error *err)
{
	_cleanup_close_ int dir = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno,
					"limiting the sandbox's namespace (/proc/sys/user)");
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++) {
		char buf[24];
		int len, r;

		if (limits->value[i] < 0)
			continue;
		len = snprintf(buf, sizeof(buf), "%" PRId64, limits->value[i]);
		r = cordon_write_file_at(dir, limit_table[i].name, buf, (size_t)len);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, -r,
						"limiting the sandbox's namespace (user.%s = %s)",
						limit_table[i].name, buf);
	}
	return 0;
}
