// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon doctor`: can this host give the confinement cordon promises?
 * Every check tries the real thing where it can (a user namespace, a
 * network namespace with an nftables table and a veth, a cgroup, the
 * system calls cordon uses) in a child process that is gone afterwards,
 * and says in words what a missing piece means for cordon and what to
 * do about it. Nothing is left on the host.
 *
 * failed:   a default `cordon run` cannot work here.
 * degraded: an optional part will fail closed when asked for (a limit,
 *           egress), or will work with less (a single-id map).
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "cordon/state.h"
#include "cordon/userns.h"
#include "sandbox-internal.h"

static struct cordon_doctor_check *add(struct cordon_doctor *d, const char *key, const char *title)
{
	struct cordon_doctor_check *c = &d->check[d->n++];

	memset(c, 0, sizeof(*c));
	c->key = key;
	c->title = title;
	return c;
}

static void say(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, cap, fmt, ap);
	va_end(ap);
}

#define DETAIL(c, ...) say((c)->detail, sizeof((c)->detail), __VA_ARGS__)
#define CONSEQUENCE(c, ...) say((c)->consequence, sizeof((c)->consequence), __VA_ARGS__)
#define FIX(c, ...) say((c)->fix, sizeof((c)->fix), __VA_ARGS__)

/*
 * Run fn in a child (its namespaces and failures stay there): 0 when it
 * exited 0, else the errno it exited with (or EIO: killed).
 */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return errno;
	if (pid == 0) {
		int r = fn(arg);

		_exit(r < 0 ? (-r & 0xff) : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status))
		return EIO;
	return WEXITSTATUS(status);
}

static long read_number(const char *path)
{
	_cleanup_free_ char *text = NULL;
	uint64_t v;

	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0 ||
	    cordon_parse_u64_prefix(text, &v) < 0)
		return -1;
	return (long)v;
}

/* --- user namespaces ------------------------------------------------------------ */

static int try_userns(void *arg)
{
	(void)arg;
	return unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
}

static void check_userns(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "userns", "user namespaces");
	long max = read_number("/proc/sys/user/max_user_namespaces");
	int r = in_child(try_userns, NULL);

	if (r == 0) {
		DETAIL(c, "a user namespace can be made (user.max_user_namespaces %ld)", max);
		return;
	}
	c->status = CORDON_DOCTOR_FAILED;
	DETAIL(c, "unshare(CLONE_NEWUSER): %s (user.max_user_namespaces %ld)", strerror(r), max);
	CONSEQUENCE(c, "no sandbox can start: every sandbox has a user namespace of its own "
		       "(rootful too, unless --userns host)");
	FIX(c, "as root: sysctl -w user.max_user_namespaces=15000 (and, where the kernel has it, "
	       "kernel.unprivileged_userns_clone=1)");
}

/* --- subordinate ids --------------------------------------------------------------- */

static bool program_setid_or_capable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0 || !(st.st_mode & S_IXOTH))
		return false;
	return (st.st_mode & (S_ISUID | S_ISGID)) ||
	       getxattr(path, "security.capability", NULL, 0) > 0;
}

static void check_subids(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "subids", "subordinate ids");
	struct passwd *pw = getpwuid(getuid());
	const char *name = pw ? pw->pw_name : NULL;
	struct cordon_subid u = { 0 }, g = { 0 };
	int ru, rg;
	bool helpers;

	if (cordon_host_root()) {
		DETAIL(c,
		       "not needed: root maps a range of its own (/etc/subuid's \"cordon\" entry, "
		       "else a fixed high range)");
		return;
	}
	ru = cordon_subid_lookup("/etc/subuid", name, (uint32_t)getuid(), &u);
	rg = cordon_subid_lookup("/etc/subgid", name, (uint32_t)getgid(), &g);
	helpers = program_setid_or_capable("/usr/bin/newuidmap") &&
		  program_setid_or_capable("/usr/bin/newgidmap");
	if (ru > 0 && rg > 0 && u.count >= CORDON_SUBID_WANTED && g.count >= CORDON_SUBID_WANTED &&
	    helpers) {
		DETAIL(c, "%s: uids %u-%u, gids %u-%u; newuidmap and newgidmap usable",
		       name ? name : "you", u.start, u.start + u.count - 1, g.start,
		       g.start + g.count - 1);
		return;
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	if (!helpers)
		DETAIL(c,
		       "newuidmap or newgidmap missing, or without its setuid bit or capabilities");
	else if (ru <= 0 || rg <= 0)
		DETAIL(c, "no entry for %s (uid %u) in %s", name ? name : "you", (unsigned)getuid(),
		       ru <= 0 ? "/etc/subuid" : "/etc/subgid");
	else
		DETAIL(c, "fewer than %u ids in /etc/subuid or /etc/subgid", CORDON_SUBID_WANTED);
	CONSEQUENCE(c,
		    "sandboxes map only your own id: the workload is that one id, setgroups is "
		    "denied, files of other owners show as nobody, and the DNS proxy runs as you");
	FIX(c,
	    "as root: apt-get install uidmap; usermod --add-subuids 100000-165535 "
	    "--add-subgids 100000-165535 %s",
	    name ? name : "USER");
}

/* --- cgroups ------------------------------------------------------------------------ */

static bool can_make_cgroup(const char *dir)
{
	char probe[4096];

	snprintf(probe, sizeof(probe), "%s/cordon-doctor-%d", dir, getpid());
	if (mkdir(probe, 0755) < 0)
		return false;
	rmdir(probe);
	return true;
}

static void check_cgroups(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "cgroups", "cgroups");
	struct cordon_cgroup_layout layout;
	struct cordon_error err = { 0 };
	const struct cordon_cgroup_hier *v2 = NULL, *pids = NULL;
	char dir[4096];

	if (cordon_cgroup_detect(&layout, &err) < 0) {
		c->status = cordon_host_root() ? CORDON_DOCTOR_FAILED : CORDON_DOCTOR_DEGRADED;
		DETAIL(c, "%s", err.msg);
		CONSEQUENCE(c, "--memory, --pids and --cpus fail closed (exit 125) unless "
			       "--limits best-effort; no default pids limit");
		FIX(c, "mount cgroup2 at /sys/fs/cgroup (or the v1 controllers)");
		return;
	}
	for (size_t i = 0; i < layout.n; i++) {
		if (layout.hier[i].v2)
			v2 = &layout.hier[i];
		if (layout.hier[i].ctrls & CORDON_CTRL_PIDS)
			pids = &layout.hier[i];
	}
	if (cordon_host_root()) {
		bool ok = pids != NULL;

		if (ok) {
			snprintf(dir, sizeof(dir), "%s%s", pids->mount,
				 strcmp(pids->path, "/") ? pids->path : "");
			ok = can_make_cgroup(dir);
		}
		if (ok) {
			DETAIL(c, "%s layout; root can make cgroups (pids at %s)",
			       cordon_cgroup_kind_name(layout.kind), pids->mount);
		} else {
			c->status = CORDON_DOCTOR_FAILED;
			DETAIL(c, "%s layout; no pids controller, or a cgroup cannot be made there",
			       cordon_cgroup_kind_name(layout.kind));
			CONSEQUENCE(
				c,
				"a rootful run sets a pids limit by default and fails without it");
			FIX(c, "mount the pids controller (cgroup v1) or enable it in cgroup2");
		}
		cordon_cgroup_layout_free(&layout);
		return;
	}
	/* Rootless: only a delegated cgroup2 subtree of our own can take limits. */
	if (v2) {
		_cleanup_free_ char *ctrls = NULL;

		snprintf(dir, sizeof(dir), "%s%s/cgroup.controllers", v2->mount,
			 strcmp(v2->path, "/") ? v2->path : "");
		cordon_read_file_at(AT_FDCWD, dir, &ctrls, NULL);
		snprintf(dir, sizeof(dir), "%s%s", v2->mount,
			 strcmp(v2->path, "/") ? v2->path : "");
		if (layout.kind == CORDON_CGROUP_V2 && ctrls && strstr(ctrls, "memory") &&
		    strstr(ctrls, "pids") && can_make_cgroup(dir)) {
			DETAIL(c, "cgroup v2, a delegated subtree at %s (%.*s)", dir,
			       (int)strcspn(ctrls, "\n"), ctrls);
			cordon_cgroup_layout_free(&layout);
			return;
		}
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	DETAIL(c, "%s layout; no cgroup v2 subtree delegated to you",
	       cordon_cgroup_kind_name(layout.kind));
	CONSEQUENCE(c, "rootless --memory, --pids and --cpus will fail closed (exit 125) unless "
		       "--limits best-effort: there is no delegated cgroup v2 subtree (the default "
		       "pids limit is skipped)");
	FIX(c, "on a cgroup v2 host, run inside a delegated unit: systemd-run --user --scope "
	       "-p Delegate=yes cordon run ...");
	cordon_cgroup_layout_free(&layout);
}

/* --- the kernel's interfaces --------------------------------------------------------- */

/* A call made to fail on its arguments: ENOSYS means the kernel lacks it. */
static bool has_syscall(long nr, long a, long b, long c)
{
	return syscall(nr, a, b, c, 0, 0) >= 0 || errno != ENOSYS;
}

static void check_kernel(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "kernel", "kernel features");
	static const struct {
		const char *name;
		long nr, a, b, c;
	} calls[] = {
		{ "clone3", SYS_clone3, 0, 0, 0 },
		{ "openat2", SYS_openat2, -1, 0, 0 },
		{ "open_tree", SYS_open_tree, -1, 0, ~0L },
		{ "move_mount", SYS_move_mount, -1, 0, -1 },
		{ "mount_setattr", SYS_mount_setattr, -1, 0, ~0L },
		{ "fsopen", SYS_fsopen, 0, ~0L, 0 },
		{ "close_range", SYS_close_range, ~0L, 1, 0 },
		{ "pidfd_open", SYS_pidfd_open, 0, ~0L, 0 },
		{ "pidfd_send_signal", SYS_pidfd_send_signal, -1, 0, 0 },
	};
	char missing[256] = "";
	_cleanup_free_ char *actions = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(calls); i++)
		if (!has_syscall(calls[i].nr, calls[i].a, calls[i].b, calls[i].c))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s%s", *missing ? ", " : "", calls[i].name);
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 ||
	    cordon_read_file_at(AT_FDCWD, "/proc/sys/kernel/seccomp/actions_avail", &actions,
				NULL) < 0 ||
	    !strstr(actions, "kill_process") || !strstr(actions, "errno"))
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
			 *missing ? ", " : "", "seccomp filters");
	if (!*missing) {
		DETAIL(c,
		       "clone3, openat2, the mount API, close_range, pidfds and seccomp filters");
		return;
	}
	c->status = CORDON_DOCTOR_FAILED;
	DETAIL(c, "missing: %s", missing);
	CONSEQUENCE(c, "no sandbox can start: cordon sets up every sandbox with these and has no "
		       "fallback that would confine less");
	FIX(c, "a kernel of 5.12 or later (Debian 12's 6.1 has them all)");
}

/* --- idmapped mounts --------------------------------------------------------------- */

struct idmap_probe {
	const char *path;
	int userns;
};

static int try_idmap(void *arg)
{
	const struct idmap_probe *p = arg;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)p->userns };
	int tree = cordon_open_tree(AT_FDCWD, p->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (tree < 0)
		return -errno;
	if (cordon_mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

static void check_idmap(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "idmap", "idmapped mounts");
	struct cordon_idmap map = { .n = 1, .extent = { { 0, 2147418112u, 65536 } } };
	struct cordon_error err = { 0 };
	struct idmap_probe p = { .path = cordon_default_rootfs() };
	struct statfs fs;
	int r;

	if (!cordon_host_root()) {
		DETAIL(c, "not used rootless: the workload's files are yours already");
		return;
	}
	p.userns = cordon_userns_open(&map, &map, &err);
	if (p.userns < 0) {
		c->status = CORDON_DOCTOR_DEGRADED;
		DETAIL(c, "%s", err.msg);
		return;
	}
	r = in_child(try_idmap, &p);
	close(p.userns);
	if (r == ENOENT) {
		DETAIL(c, "no default rootfs at %s to try", p.path);
		return;
	}
	if (r == 0) {
		DETAIL(c, "the default rootfs's filesystem (%s) can be idmapped", p.path);
		return;
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	DETAIL(c, "%s: %s%s", p.path, strerror(r),
	       statfs(p.path, &fs) == 0 && fs.f_type == 0x01021994 ? " (tmpfs)" : "");
	CONSEQUENCE(c, "a rootfs or workspace on this filesystem is bound without idmapping: files "
		       "the sandbox's root creates belong to a high host id, and host root's files "
		       "show as nobody inside");
	FIX(c, "keep rootfs and workspace on a filesystem that supports idmapped mounts (ext4, "
	       "xfs, btrfs, tmpfs since 6.3)");
}

/* --- egress ------------------------------------------------------------------------- */

/* A network namespace (and user namespace, rootless) with an nft table and a veth pair. */
static int try_network(void *arg)
{
	struct cordon_error err = { 0 };
	struct cordon_gateway_addrs gw;
	struct cordon_nft_config cfg = {
		.workload_if = CORDON_GW_IF,
		.uplink_if = CORDON_GW_UPLINK_IF,
		.masquerade = true,
		.set_size = CORDON_NFT_SET_MAX,
		.max_flows = CORDON_NET_FLOWS_DEFAULT,
	};
	struct cordon_cidr *blocked = NULL;
	struct cordon_nft *nft;
	struct cordon_link *l;
	int which = *(int *)arg;

	if (unshare(CLONE_NEWNET | (cordon_host_root() ? 0 : CLONE_NEWUSER)) < 0)
		return -errno;
	if (which == 0) {
		/* The gateway's own ruleset, as a sandbox gets it: sets, intervals, masquerade. */
		cordon_gateway_addrs(&gw);
		cfg.proxy4 = gw.gw4;
		cfg.proxy6 = gw.gw6;
		cfg.n_blocked = cordon_gateway_blocked(NULL, NULL, 0, &blocked);
		cfg.blocked = blocked;
		nft = cordon_nft_open(&err);
		if (!nft || cordon_nft_create(nft, &cfg, &err) < 0)
			return -(err.errnum ? err.errnum : EIO);
		cordon_nft_close(nft);
		return 0;
	}
	l = cordon_link_open(&err);
	if (!l || cordon_link_veth(l, "cordon-d0", "cordon-d1", -1, 0, &err) < 0)
		return -(err.errnum ? err.errnum : EIO);
	cordon_link_close(l);
	return 0;
}

static void check_nft(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "nftables", "nftables and veth");
	struct cordon_error err = { 0 };
	int nft = 0, veth = 1, r, rv;

	if (cordon_netlib_load(CORDON_NETLIB_ALL, &err) < 0) {
		c->status = CORDON_DOCTOR_DEGRADED;
		DETAIL(c, "%s", err.msg);
		CONSEQUENCE(c, "--net-allow fails closed (exit 125, CORDON_E_NET_POLICY); without "
			       "--net-allow, nothing leaves a sandbox anyway");
		FIX(c, "install the netlink libraries cordon was built with (libmnl, libnftnl, "
		       "libnl-3, libnl-route-3)");
		return;
	}
	r = in_child(try_network, &nft);
	rv = in_child(try_network, &veth);
	if (r == 0 && rv == 0) {
		DETAIL(c, "an nftables ruleset and a veth pair can be made in a network namespace");
		return;
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	DETAIL(c, "%s: %s", r ? "nftables" : "veth", strerror(r ? r : rv));
	CONSEQUENCE(c, "--net-allow fails closed (exit 125): the gateway's ruleset or its links "
		       "cannot be made (without --net-allow, nothing leaves a sandbox anyway)");
	FIX(c, "as root: modprobe %s", r ? "nf_tables" : "veth");
}

/* CAP_NET_ADMIN in a file's permitted set, effective bit on (security.capability, v2 or v3). */
static bool file_has_net_admin(const char *path)
{
	struct vfs_ns_cap_data cap;
	ssize_t n = getxattr(path, "security.capability", &cap, sizeof(cap));

	if (n < (ssize_t)XATTR_CAPS_SZ_2)
		return false;
	return (cap.magic_etc & VFS_CAP_FLAGS_EFFECTIVE) &&
	       (cap.data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted & CAP_TO_MASK(CAP_NET_ADMIN));
}

static void check_nethelper(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "nethelper", "cordon-nethelper (veth uplink)");
	const char *path = cordon_nethelper_program();

	if (access(path, X_OK) < 0) {
		c->status = CORDON_DOCTOR_DEGRADED;
		DETAIL(c, "%s: %s", path, strerror(errno));
		CONSEQUENCE(c, cordon_host_root() ?
				       "--net-allow as root (the veth backend) fails closed; "
				       "--net-backend pasta still works" :
				       "--net-backend veth is not available to you (the default, "
				       "pasta, is used)");
		FIX(c, "install cordon-nethelper into $libexecdir/cordon, or set CORDON_NETHELPER");
		return;
	}
	if (cordon_host_root()) {
		DETAIL(c, "%s (run as root)", path);
		return;
	}
	if (file_has_net_admin(path)) {
		DETAIL(c, "%s has the file capability cap_net_admin+ep", path);
		return;
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	DETAIL(c, "%s has no CAP_NET_ADMIN file capability", path);
	CONSEQUENCE(c, "--net-backend veth is not available to you (the default, pasta, is used)");
	FIX(c, "as root: setcap cap_net_admin+ep %s", path);
}

static void check_pasta(struct cordon_doctor *d)
{
	struct cordon_doctor_check *c = add(d, "pasta", "pasta (rootless uplink)");
	const char *env = getenv("CORDON_PASTA");
	const char *path = env && *env ? env : "/usr/bin/pasta";
	bool tun = access("/dev/net/tun", R_OK | W_OK) == 0;
	int tun_errno = errno;

	if (access(path, X_OK) == 0 && tun) {
		DETAIL(c, "%s, /dev/net/tun usable", path);
		return;
	}
	c->status = CORDON_DOCTOR_DEGRADED;
	if (access(path, X_OK) < 0)
		DETAIL(c, "%s: %s", path, strerror(errno));
	else
		DETAIL(c, "/dev/net/tun is not usable by uid %u: %s", (unsigned)getuid(),
		       strerror(tun_errno));
	CONSEQUENCE(c, cordon_host_root() ? "--net-backend pasta is not available (the default "
					    "for root, veth, is not affected)" :
					    "rootless --net-allow fails closed (exit 125)");
	FIX(c, "as root: apt-get install passt; chmod 0666 /dev/net/tun (Debian's default mode)");
}

/* --- the state directory --------------------------------------------------------------- */

static void check_state(struct cordon_doctor *d, const char *root)
{
	struct cordon_doctor_check *c = add(d, "state", "state directory");
	struct cordon_error err = { 0 };
	_cleanup_free_ char *path = NULL;
	int fd = cordon_state_root_open(root, &path, &err);

	if (fd >= 0) {
		close(fd);
		DETAIL(c, "%s", path);
		return;
	}
	c->status = CORDON_DOCTOR_FAILED;
	DETAIL(c, "%s", err.msg);
	CONSEQUENCE(c, "no sandbox can start: its state directory is where it claims its id");
	FIX(c, "give --root a directory of your own, or fix the one named");
}

void cordon_doctor_run(struct cordon_doctor *d, const char *state_root)
{
	memset(d, 0, sizeof(*d));
	d->rootful = cordon_host_root();
	d->uid = getuid();
	check_userns(d);
	check_subids(d);
	check_kernel(d);
	check_cgroups(d);
	check_idmap(d);
	check_nft(d);
	check_nethelper(d);
	check_pasta(d);
	check_state(d, state_root);
	for (size_t i = 0; i < d->n; i++) {
		if (d->check[i].status == CORDON_DOCTOR_FAILED)
			d->failed++;
		else if (d->check[i].status == CORDON_DOCTOR_DEGRADED)
			d->degraded++;
	}
}

const char *cordon_doctor_status_name(enum cordon_doctor_status s)
{
	switch (s) {
	case CORDON_DOCTOR_OK:
		return "ok";
	case CORDON_DOCTOR_DEGRADED:
		return "degraded";
	default:
		return "failed";
	}
}
