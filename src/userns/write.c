// SPDX-License-Identifier: Apache-2.0
/* Choosing a sandbox's id plan and writing it into a new user namespace. */
#include <fcntl.h>
#include <linux/sched.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "config.h"
#include "cordon/userns.h"

#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"
#define SUBUID_FILE "/etc/subuid"
#define SUBGID_FILE "/etc/subgid"

extern char **environ;

static int plan_rootful(uid_t target_uid, gid_t target_gid, struct cordon_idplan *plan,
			struct cordon_error *err)
{
	struct cordon_subid u = { CORDON_ROOTFUL_UID_BASE, CORDON_ROOTFUL_UID_COUNT };
	struct cordon_subid g = u;
	int r;

	/* An operator may give cordon its own range, as for any other user. */
	r = cordon_subid_lookup(SUBUID_FILE, "cordon", UINT32_MAX, &u);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "reading %s", SUBUID_FILE);
	r = cordon_subid_lookup(SUBGID_FILE, "cordon", UINT32_MAX, &g);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "reading %s", SUBGID_FILE);
	if (target_uid >= u.count || target_gid >= g.count)
		return cordon_error_set(err, CORDON_E_USERNS, 0,
					"--user %u:%u: outside the sandbox's id range 0-%u",
					target_uid, target_gid, u.count < g.count ? u.count - 1 : g.count - 1);
	cordon_idmap_range(u.start, u.count, &plan->uid);
	cordon_idmap_range(g.start, g.count, &plan->gid);
	return 0;
}

/* Every id of our own namespace, as itself: its root is ours, its files keep their owners. */
static int identity_of_own(const char *file, uint32_t target, struct cordon_idmap *map,
			   struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int used, r;
	unsigned long in, out, count;

	r = cordon_read_file_at(AT_FDCWD, file, &text, &len);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "reading %s", file);
	map->n = 0;
	for (const char *p = text; sscanf(p, "%lu %lu %lu%n", &in, &out, &count, &used) == 3;
	     p += used) {
		if (map->n == CORDON_IDMAP_MAX_EXTENTS || in > UINT32_MAX || count > UINT32_MAX - in)
			break;
		map->extent[map->n++] = (struct cordon_idmap_extent){ (uint32_t)in, (uint32_t)in,
								      (uint32_t)count };
	}
	if (cordon_idmap_to_outside(map, target) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, 0,
					"id %u is not mapped in cordon's own user namespace (%s)",
					target, file);
	return 0;
}

int cordon_userns_plan(uid_t target_uid, gid_t target_gid, struct cordon_idplan *plan,
		       struct cordon_error *err)
{
	struct cordon_subid su = { 0 }, sg = { 0 };
	uid_t uid = getuid();
	gid_t gid = getgid();
	bool ranges = false;

	memset(plan, 0, sizeof(*plan));
	if (cordon_host_root())
		return plan_rootful(target_uid, target_gid, plan, err);
	/* Root of a user namespace maps its own ids directly: no helper, no subordinate range. */
	if (cordon_userns_root()) {
		if (identity_of_own("/proc/self/uid_map", target_uid, &plan->uid, err) < 0 ||
		    identity_of_own("/proc/self/gid_map", target_gid, &plan->gid, err) < 0)
			return -1;
		return 0;
	}

	/* Full ranges only when both files have an entry and both helpers exist. */
	if (access(NEWUIDMAP, X_OK) == 0 && access(NEWGIDMAP, X_OK) == 0) {
		struct passwd *pw = getpwuid(uid);
		const char *name = pw ? pw->pw_name : NULL;

		ranges = cordon_subid_lookup(SUBUID_FILE, name, uid, &su) == 1 &&
			 cordon_subid_lookup(SUBGID_FILE, name, uid, &sg) == 1;
	}
	cordon_idmap_rootless(uid, target_uid, ranges ? &su : NULL, &plan->uid);
	cordon_idmap_rootless(gid, target_gid, ranges ? &sg : NULL, &plan->gid);
	plan->use_helpers = ranges;
	plan->deny_setgroups = !ranges;
	return 0;
}

int cordon_userns_write_direct(pid_t pid, const struct cordon_idmap *uid,
			       const struct cordon_idmap *gid, bool deny_setgroups,
			       struct cordon_error *err)
{
	char path[64], buf[512];
	size_t n;
	int r;

	if (deny_setgroups) {
		snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
		r = cordon_write_file_at(AT_FDCWD, path, "deny", 4);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_USERNS, -r, "writing %s", path);
	}
	n = cordon_idmap_format(uid, buf, sizeof(buf));
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	r = cordon_write_file_at(AT_FDCWD, path, buf, n);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "writing %s", path);
	n = cordon_idmap_format(gid, buf, sizeof(buf));
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	r = cordon_write_file_at(AT_FDCWD, path, buf, n);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "writing %s", path);
	return 0;
}

static pid_t spawn_helper(const char *helper, pid_t pid, const struct cordon_idmap *map,
			  struct cordon_error *err)
{
	char args[2 + 3 * CORDON_IDMAP_MAX_EXTENTS][16];
	char *argv[3 + 3 * CORDON_IDMAP_MAX_EXTENTS] = { (char *)helper };
	size_t a = 0;
	pid_t child;
	int r;

	snprintf(args[a], sizeof(args[a]), "%d", pid);
	argv[1 + a] = args[a];
	a++;
	for (size_t i = 0; i < map->n; i++) {
		uint32_t v[3] = { map->extent[i].inside, map->extent[i].outside,
				  map->extent[i].count };

		for (size_t j = 0; j < 3; j++, a++) {
			snprintf(args[a], sizeof(args[a]), "%u", v[j]);
			argv[1 + a] = args[a];
		}
	}
	argv[1 + a] = NULL;
	r = posix_spawn(&child, helper, NULL, NULL, argv, environ);
	if (r != 0) {
		cordon_error_set(err, CORDON_E_USERNS, r, "starting %s", helper);
		return -1;
	}
	return child;
}

static int wait_helper(const char *helper, pid_t child, struct cordon_error *err)
{
	int status;

	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return cordon_error_set(err, CORDON_E_USERNS, errno, "waiting for %s",
						helper);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cordon_error_set(err, CORDON_E_USERNS, 0,
					"%s failed (status %d): check the caller's entries in %s and %s",
					helper, status, SUBUID_FILE, SUBGID_FILE);
	return 0;
}

int cordon_userns_write(pid_t pid, const struct cordon_idplan *plan, struct cordon_error *err)
{
	pid_t u, g;
	int r1, r2;

	if (!plan->use_helpers)
		return cordon_userns_write_direct(pid, &plan->uid, &plan->gid, plan->deny_setgroups,
						  err);
	/* Both setuid helpers run at once: they touch different files. */
	u = spawn_helper(NEWUIDMAP, pid, &plan->uid, err);
	if (u < 0)
		return -1;
	g = spawn_helper(NEWGIDMAP, pid, &plan->gid, err);
	if (g < 0) {
		struct cordon_error ignored;

		wait_helper(NEWUIDMAP, u, &ignored);
		return -1;
	}
	r1 = wait_helper(NEWUIDMAP, u, err);
	if (r1 < 0) {
		struct cordon_error ignored;

		wait_helper(NEWGIDMAP, g, &ignored);
		return r1;
	}
	r2 = wait_helper(NEWGIDMAP, g, err);
	return r2;
}

/*
 * The child only holds the namespace open until the parent has its fd. It
 * shares our memory (CLONE_VM): no page tables are copied, which on some
 * virtual machines is most of a fork's cost. It runs on its own small
 * stack and makes nothing but raw system calls.
 */
static int hold_namespace(void *arg)
{
	const int *hold = arg;
	char c;

	/* Our copy of the write end would keep the pipe from ever reaching EOF. */
	syscall(SYS_close, hold[1]);
	(void)!syscall(SYS_read, hold[0], &c, 1);
	syscall(SYS_exit, 0);
	return 0;
}

/* A holder told to exit and not reaped yet (cordon_userns_open_async): at most one. */
static pid_t unreaped;

void cordon_userns_reap(void)
{
	int status;

	if (unreaped <= 0)
		return;
	while (waitpid(unreaped, &status, 0) < 0 && errno == EINTR)
		;
	unreaped = 0;
}

int cordon_userns_open_async(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
			     struct cordon_error *err)
{
	static char stack[16384] __attribute__((aligned(16)));
	int hold[2], fd = -1;
	char path[64];
	pid_t child;

	/* The last holder ran on the same stack: it must be gone first. */
	cordon_userns_reap();
	if (pipe2(hold, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno, "pipe");
	child = clone(hold_namespace, stack + sizeof(stack), CLONE_VM | CLONE_NEWUSER | SIGCHLD,
		      hold);
	if (child < 0) {
		close(hold[0]);
		close(hold[1]);
		return cordon_error_set(err, CORDON_E_USERNS, errno, "creating a user namespace");
	}
	if (cordon_userns_write_direct(child, uid, gid, false, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", child);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cordon_error_set(err, CORDON_E_USERNS, errno, "opening %s", path);
	}
	/* Told to exit (EOF); reaped by the next open or cordon_userns_reap. */
	close(hold[1]);
	close(hold[0]);
	unreaped = child;
	return fd;
}

int cordon_userns_open(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
		       struct cordon_error *err)
{
	int fd = cordon_userns_open_async(uid, gid, err);

	cordon_userns_reap();
	return fd;
}
