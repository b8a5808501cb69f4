// SPDX-License-Identifier: Apache-2.0
/*
 * The confinement of a process of the sandbox, written once: the
 * workload that run and create start (the init's clone, child.c) and
 * each process of cordon exec (the joiner's clone, exec.c) go through
 * the same ordered list of steps, from a process that holds every
 * capability of its user namespace to one that runs its program under
 * the sandbox's ids, capabilities, no_new_privs and seccomp filter.
 *
 *   step          workload                          exec'd process
 *   ────────────  ────────────────────────────────  ─────────────────────────────
 *   session       a process group (a session with   a session of its own
 *                 a terminal) in the init's
 *   inherited     the init's fds closed             (the joiner closed cordon
 *                                                   exec's before it joined)
 *   namespaces    its own network namespace,        (entered by the joiner:
 *                 user.max_user_namespaces = 0,     U1, mount, pid, uts, ipc,
 *                 the report of its host pid, lo    cgroup, net, then U2)
 *   rlimits       rlimits, bounding set, ambient set cleared
 *   signals       default dispositions, nothing blocked
 *   fds           close-on-exec every fd but 0-2 and --preserve-fds
 *   release       wait for the init (root built,    -
 *                 id maps written)
 *   network       eth0 to the gateway, sysctls      -
 *   ids           groups, gid, uid, umask; not dumpable until execve
 *   terminal      the pty the init made             a pty it makes, as its user
 *   capabilities  the exact sets, ambient raised, no_new_privs
 *   cwd           resolved inside the root, as the process's user
 *   cgroup        (placed by the init and   writes itself into the
 *                 the supervisor)           container's cgroups (docs above
 *                                           exec.c)
 *   seccomp       the filter, last: setup itself is never filtered
 *   exec          execve (PATH of its own environment); a session's
 *                 workload: the idle program
 *
 * The order is the security argument: rlimits and the bounding set
 * while every capability of the namespace is still held (dropping needs
 * CAP_SETPCAP); groups before gid before uid (after setresuid the right
 * to change them is gone); the exact capability sets after the ids (a
 * uid change clears them); the cwd inside the new root and as the
 * process's user; seccomp last, so that nothing runs unfiltered after it.
 * A failure is reported over the report pipe (struct confine_report) and
 * ends the process: 125, or 126/127 when execve failed.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "sandbox-internal.h"

_Noreturn void confine_fail(int report_fd, int exit_code, enum cordon_code code, int errnum,
			    const char *fmt, ...)
{
	struct confine_report rep = { .exit_code = exit_code, .errnum = errnum, .code = code };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep.text, sizeof(rep.text), fmt, ap);
	va_end(ap);
	cordon_write_all(report_fd, &rep, sizeof(rep));
	_exit(exit_code);
}

static bool is_workload(const struct confine *c)
{
	return c->kind == CONFINE_WORKLOAD;
}

/* A network namespace of the workload's own (not one a config joins, nor the runtime's). */
static bool own_network(const struct confine *c)
{
	return !cordon_spec_ns_not_new(c->spec, CORDON_OCI_NS_NETWORK);
}

/*
 * The workload: a process group of its own inside the init's session, so
 * that kill(0) reaches only what it starts and the terminal's signals the
 * supervisor relays reach all of it (not orphaned: its parent, the init,
 * is of the same session, so a stop works); with a terminal, a session of
 * its own, whose controlling terminal the pty becomes. An exec'd process:
 * a session of its own, neither cordon exec's process group nor its
 * session (kill(0) would reach the caller's shell, /dev/tty its
 * terminal); a fresh pid, never a group leader, so it cannot fail.
 */
static int step_session(struct confine *c, struct cordon_error *err)
{
	int r = is_workload(c) && c->console_fd < 0 ? setpgid(0, 0) : setsid();

	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"a process group of the workload's own");
	return 0;
}

/*
 * The init's fds (host paths it opened to build the root, the sync
 * socket) are not the workload's: gone before any path is walked. The
 * joiner did the same for an exec'd process before it joined.
 */
static int step_inherited(struct confine *c, struct cordon_error *err)
{
	int keep[] = { c->ready_fd, c->report_fd, c->exec_fd, cordon_trace_fd };
	int r;

	if (!is_workload(c))
		return 0;
	r = cordon_close_fds_except(3 + (int)c->preserve_fds, keep, ARRAY_SIZE(keep));
	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -r, "closing the init's fds");
	return 0;
}

/*
 * The workload's user namespace is the last one in this sandbox: its own
 * limit is 0, so nothing below it can be created (ENOSPC). Seccomp refuses
 * CLONE_NEWUSER as well; this holds even under --seccomp unconfined, a
 * permissive profile or --userns host. The value is per user namespace
 * and must be written from inside ours, through the host's /proc while it
 * is still the visible one (the sandbox's /proc/sys is read-only): init
 * does not pivot into the new root before we report it written. Our id
 * maps need not exist yet: the sysctl asks for CAP_SYS_RESOURCE in our
 * namespace, which its creator holds from the start.
 */
static int limit_user_namespaces(struct cordon_error *err)
{
	int r = cordon_write_file_at(AT_FDCWD, "/proc/sys/user/max_user_namespaces", "0", 1);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, -r,
					"limiting user namespaces (user.max_user_namespaces)");
	return 0;
}

static int loopback_up(struct cordon_error *err)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "reading lo flags");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "bringing lo up");
	return 0;
}

/*
 * The workload's namespaces; an exec'd process is in the sandbox's
 * already (the joiner entered them before it was cloned).
 */
static int step_namespaces(struct confine *c, struct cordon_error *err)
{
	const struct cordon_spec *spec = c->spec;
	struct confine_report done = { .code = CORDON_OK };
	char buf[24];
	ssize_t n;

	if (!is_workload(c))
		return 0;
	/*
	 * Our own network namespace, owned by our user namespace so that
	 * granted network capabilities apply to it; what confines the network
	 * (a bounding set without NET_ADMIN, and the gateway namespace behind
	 * eth0) does not depend on who owns it. Created here rather than
	 * in the clone, so that this process, not init, pays for it while init
	 * builds the filesystem; and first, so that it is done before init
	 * detaches the old root (measured: that umount took 0.4-0.5 ms instead
	 * of 0.15-0.2 when the two overlapped) and exists when we report:
	 * whatever comes to plumb it (a gateway link) can rely on the report.
	 */
	if (own_network(c) && unshare(CLONE_NEWNET) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"creating the workload's network namespace");
	if (limit_user_namespaces(err) < 0)
		return -1;
	/*
	 * Without a sandbox namespace (--userns host) init's is the host's,
	 * whose limits are not ours to change: ours bound each of our uids
	 * instead (docs/security.md). Else init limits the sandbox's.
	 */
	if (!c->userns && cordon_user_limits_write(&spec->user_limits, err) < 0)
		return -1;
	/*
	 * Our network namespace's sysctls (a joined one is the supervisor's to
	 * set): opened while the host's /proc is ours, written once our maps exist.
	 */
	if (sandbox_sysctls_open(spec, own_network(c) ? SYSCTL_NS(CORDON_OCI_NS_NETWORK) : 0,
				 &c->net_sysctls, err) < 0)
		return -1;
	/*
	 * Our pid as the host knows it (for the OCI state), read while the
	 * host's /proc is still the visible one: its /proc/self names us by it.
	 */
	n = readlink("/proc/self", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	done.pid = (int32_t)strtol(buf, NULL, 10);
	/* Tell init the host's /proc is no longer needed: it may pivot. */
	cordon_trace("report");
	if (cordon_write_all(c->report_fd, &done, sizeof(done)) < 0)
		_exit(CORDON_EXIT_FAILURE);
	/* Only lo, and it starts down. A joined namespace is set up by whoever made it. */
	if (own_network(c) && loopback_up(err) < 0)
		return -1;
	return 0;
}

static int step_rlimits(struct confine *c, struct cordon_error *err)
{
	return cordon_security_before_ids(&c->spec->security, err);
}

/* A fresh process: default dispositions, nothing blocked. */
static int step_signals(struct confine *c, struct cordon_error *err)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return 0;
}

/*
 * No fd but 0-2 and the caller's --preserve-fds survives execve (the
 * report pipe is close-on-exec already, and above those).
 */
static int step_fds(struct confine *c, struct cordon_error *err)
{
	for (unsigned fd = 3; fd < 3 + c->preserve_fds; fd++)
		if (fcntl((int)fd, F_SETFD, 0) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno,
						"--preserve-fds: fd %u", fd);
	if (close_range(3 + c->preserve_fds, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "close_range");
	return 0;
}

/*
 * The workload waits until init has built the root, pivoted us into it
 * and written our id maps. With process.terminal, the release carries
 * the slave of the container's pty.
 */
static int step_release(struct confine *c, struct cordon_error *err)
{
	struct sync_msg release;
	size_t n_fds = 1;

	if (!is_workload(c))
		return 0;
	if (sync_recv(c->ready_fd, &release, &c->tty, &n_fds) <= 0 || release.type != SYNC_START)
		_exit(CORDON_EXIT_FAILURE);
	if (n_fds != 1)
		c->tty = -1;
	close(c->ready_fd);
	c->ready_fd = -1;
	return 0;
}

/*
 * With an allowlist, eth0 (made by init after our report) leads to the
 * gateway. We own this namespace and still hold CAP_NET_ADMIN in it (the
 * bounding set limits only what an exec could gain): configured before
 * the ids change takes it away, as are its sysctls.
 */
static int step_network(struct confine *c, struct cordon_error *err)
{
	if (!is_workload(c))
		return 0;
	if (c->spec->net.enabled && cordon_gateway_workload_link(err) < 0)
		return -1;
	return sandbox_sysctls_write(&c->net_sysctls, SYSCTL_NS(CORDON_OCI_NS_NETWORK), err);
}

/*
 * Groups, gid, uid. Not dumpable from here to execve (which makes the
 * process dumpable again): what it holds until then is a copy of
 * cordon's memory, and nothing in the sandbox may read it.
 */
static int step_ids(struct confine *c, struct cordon_error *err)
{
	if (sandbox_set_ids(c->spec, c->deny_setgroups, err) < 0)
		return -1;
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "PR_SET_DUMPABLE");
	return 0;
}

/*
 * The workload's pty came with its release (the init made it, owned by
 * the workload's uid); an exec'd process makes its own now, as its user,
 * so that the pts is its own, and sends the master to the console socket.
 */
static int step_terminal(struct confine *c, struct cordon_error *err)
{
	int master;

	if (!is_workload(c) && c->console_fd >= 0) {
		if (sandbox_pty_open(c->spec, &master, &c->tty, err) < 0 ||
		    sandbox_pty_send(c->console_fd, master, err) < 0)
			return -1;
		close(master);
		close(c->console_fd);
		c->console_fd = -1;
	}
	if (c->tty < 0)
		return 0;
	return sandbox_pty_attach(c->tty, err);
}

static int step_capabilities(struct confine *c, struct cordon_error *err)
{
	return cordon_security_after_ids(&c->spec->security, c->spec->uid == 0, err);
}

/* Resolved in the sandbox's root, as the process's user: never a host path. */
static int step_cwd(struct confine *c, struct cordon_error *err)
{
	return sandbox_enter_cwd(c->spec->cwd, err);
}

/*
 * The exec'd process enters the container's cgroups only now, set up:
 * before, the container (which may freeze the cgroups delegated to it)
 * could hold it, or its joiner, half-made. Through fds opened on the
 * host, whose opener the kernel checks; "0" is the writer. A cgroup
 * closed to processes (EBUSY: the container enabled controllers below
 * it and moved its processes down) is entered where the workload is.
 */
static int step_cgroup(struct confine *c, struct cordon_error *err)
{
	for (size_t i = 0; i < c->n_cgroups; i++) {
		int r = cordon_write_all(c->cgroup_procs[i], "0", 1);

		if (r == -EBUSY && c->cgroup_alt[i] >= 0)
			r = cordon_write_all(c->cgroup_alt[i], "0", 1);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r,
						"joining the container's cgroups");
		close(c->cgroup_procs[i]);
		if (c->cgroup_alt[i] >= 0)
			close(c->cgroup_alt[i]);
	}
	return 0;
}

static int step_seccomp(struct confine *c, struct cordon_error *err)
{
	return cordon_security_seccomp(&c->spec->security, c->spec->uid == 0, err);
}

/* The ordered list; each step is a no-op where the table above says "-". */
static const struct confine_step {
	const char *name;
	int (*run)(struct confine *c, struct cordon_error *err);
	const char *trace; /* its phase in CORDON_TRACE */
} steps[] = {
	{ "session", step_session, "session" },
	{ "inherited fds", step_inherited, "inherited-fds" },
	{ "namespaces", step_namespaces, "netns-lo" },
	{ "rlimits", step_rlimits, "rlimits" },
	{ "signals", step_signals, "signals" },
	{ "fds", step_fds, "fds" },
	{ "release", step_release, "release-recv" },
	{ "network", step_network, "network" },
	{ "ids", step_ids, "ids" },
	{ "terminal", step_terminal, "terminal" },
	{ "capabilities", step_capabilities, "capabilities" },
	{ "cwd", step_cwd, "cwd" },
	{ "cgroup", step_cgroup, "cgroup" },
	{ "seccomp", step_seccomp, "seccomp" },
};

_Noreturn void sandbox_confine_exec(struct confine *c)
{
	static char *const idle_argv[] = { CORDON_SESSION_TITLE, NULL };
	static char *const no_env[] = { NULL };
	struct cordon_error err = { 0 };
	int errnum, code;

	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (steps[i].run(c, &err) < 0)
			confine_fail(c->report_fd, CORDON_EXIT_FAILURE, err.code, err.errnum, "%s",
				     err.msg);
		cordon_trace(steps[i].trace);
	}
	/*
	 * A session's workload holds the sandbox's namespaces for cordon
	 * exec: the idle program (session.c), a sealed copy of cordon's own,
	 * with no argument and no environment, so that nothing of cordon's
	 * memory stays in the sandbox.
	 */
	if (c->exec_fd >= 0) {
		execveat(c->exec_fd, "", idle_argv, no_env, AT_EMPTY_PATH);
		confine_fail(c->report_fd, CORDON_EXIT_CANNOT_EXEC, CORDON_E_EXEC, errno,
			     "the session's idle program");
	}
	cordon_trace("execve");
	code = sandbox_exec_search(c->spec->argv, c->spec->env, &errnum);
	confine_fail(c->report_fd, code, CORDON_E_EXEC, errnum, "%s", c->spec->argv[0]);
}
