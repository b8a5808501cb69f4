// SPDX-License-Identifier: Apache-2.0
/*
 * Inside the sandbox. The init process (pid 1 of the new pid namespace)
 * starts the workload in a nested user namespace, builds the filesystem
 * while the workload does its own first steps, releases it, and stays
 * behind as a minimal init: it relays signals, reaps orphans and reports
 * the workload's status to the supervisor.
 *
 * Everything here runs in a copy of the supervisor's memory (clone
 * without CLONE_VM), single-threaded, and ends in _exit or execve.
 */
#include <fcntl.h>
#include <sched.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cordon/security.h"
#include "sandbox-internal.h"

/* The init's command line, all the workload sees of it in /proc/1/cmdline. */
#define INIT_TITLE "cordon-init"

static _Noreturn void setup_failed(const struct child_ctx *ctx, const struct cordon_error *err)
{
	struct sync_msg msg = { .type = SYNC_SETUP_FAILED,
				.code = err->code,
				.errnum = err->errnum };

	snprintf(msg.text, sizeof(msg.text), "%s", err->msg);
	sync_send(ctx->sync_fd, &msg, NULL, 0);
	_exit(CORDON_EXIT_FAILURE);
}

/*
 * Rootful: the clone still carries host uid 0, which the sandbox's
 * namespace does not map; become its root so that files created during
 * setup (mount points, /dev nodes) have an owner inside.
 */
static int become_root(struct cordon_error *err)
{
	if (setresgid(0, 0, 0) < 0 || setgroups(0, NULL) < 0 || setresuid(0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno,
					"becoming root of the sandbox's user namespace");
	/*
	 * The id change made us non-dumpable, which would make our /proc
	 * files (and the workload's, cloned from us) owned by host root:
	 * unwritable from in here. Dumpable again until the workload exists.
	 */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "PR_SET_DUMPABLE");
	return 0;
}

static bool supervisor_gone(int sync_fd)
{
	struct pollfd p = { .fd = sync_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/*
 * The workload: the one confinement sequence (confine.c). Everything that
 * needs neither its id maps nor the new root runs first, while init builds
 * the filesystem on the other side of the pipe; then it waits for init's
 * release, drops to its ids, enters its cwd and execs.
 */
static _Noreturn void workload_main(const struct child_ctx *ctx, int ready_fd, int report_fd)
{
	struct confine c = {
		.kind = CONFINE_WORKLOAD,
		.spec = ctx->spec,
		.report_fd = report_fd,
		.deny_setgroups = ctx->plan->deny_setgroups,
		.userns = ctx->userns,
		.console_fd = ctx->console_fd,
		.preserve_fds = ctx->spec->preserve_fds,
		.ready_fd = ready_fd,
		.exec_fd = ctx->idle_fd,
		.tty = -1,
	};

	sandbox_confine_exec(&c);
}

static _Noreturn void report_workload_failure(const struct child_ctx *ctx, pid_t workload,
					      struct confine_report *rep);

/*
 * Started before the filesystem is built (it needs the host's /proc once,
 * see limit_user_namespaces, and does its own setup in parallel with
 * init's); released once over *release_fd, when its root and id maps
 * are ready.
 */
static pid_t workload_spawn(const struct child_ctx *ctx, int *report_fd, int *release_fd,
			    struct cordon_error *err)
{
	/*
	 * The workload gets a user namespace of its own, nested below the
	 * sandbox's: root there holds no capability over the mount, UTS, IPC,
	 * pid and cgroup namespaces that the sandbox's namespace owns.
	 */
	struct clone_args args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	int ready[2], report[2];
	pid_t pid;

	/* A socket, not a pipe: the release may carry the terminal. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ready) < 0 ||
	    pipe2(report, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	pid = cordon_clone3(&args, sizeof(args));
	if (pid < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"creating the workload's user namespace");
	if (pid == 0) {
		cordon_trace_process("workload");
		cordon_trace("workload-start");
		close(ready[1]);
		close(report[0]);
		close(ctx->sync_fd);
		if (ctx->console_fd >= 0)
			close(ctx->console_fd);
		workload_main(ctx, ready[0], report[1]);
	}
	close(ready[0]);
	close(report[1]);
	*release_fd = ready[1];
	*report_fd = report[0];
	return pid;
}

/*
 * The workload's id maps, written through the sandbox's own /proc (the
 * pid is the one this pid namespace knows). Identity maps of the
 * sandbox's ids: the nesting takes capabilities away, not ids.
 */
static int workload_write_maps(const struct child_ctx *ctx, pid_t workload,
			       struct cordon_error *err)
{
	struct cordon_idmap uid, gid;

	if (ctx->userns) {
		cordon_idmap_identity_of(&ctx->plan->uid, &uid);
		cordon_idmap_identity_of(&ctx->plan->gid, &gid);
	} else {
		cordon_idmap_range(0, UINT32_MAX, &uid);
		cordon_idmap_range(0, UINT32_MAX, &gid);
	}
	if (cordon_userns_write_direct(workload, &uid, &gid, false, err) < 0)
		return cordon_error_wrap(err, "workload user namespace");
	return 0;
}

/*
 * Wait for the workload's report that it no longer needs the host's /proc;
 * returns its host pid.
 */
static pid_t wait_workload_ready(const struct child_ctx *ctx, pid_t workload, int report_fd)
{
	struct cordon_error err = { 0 };
	struct confine_report rep;
	ssize_t r = read(report_fd, &rep, sizeof(rep));

	if (r == (ssize_t)sizeof(rep) && rep.code != CORDON_OK)
		report_workload_failure(ctx, workload, &rep);
	if (r != (ssize_t)sizeof(rep)) {
		cordon_error_set(&err, CORDON_E_INTERNAL, r < 0 ? errno : 0,
				 "the workload vanished");
		setup_failed(ctx, &err);
	}
	return rep.pid;
}

/*
 * Move into the workload's network namespace. The container's pid that
 * launchers see is ours, and some plumb the network through it: buildah
 * runs CNI (or slirp4netns, rootless) in /proc/PID/ns/net of the pid file's
 * process, as it would with runc's init. Left in the host's namespace, we
 * would hand them the host's, and CNI would add the container's eth0 and
 * address there. Its namespace belongs to the workload's user namespace,
 * a child of ours, over which we hold every capability.
 */
static int join_workload_network(pid_t workload, struct cordon_error *err)
{
	_cleanup_close_ int pidfd = cordon_pidfd_open(workload);

	if (pidfd < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"opening the workload's pidfd");
	if (setns(pidfd, CLONE_NEWNET) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"joining the workload's network namespace");
	return 0;
}

/* The workload could not reach execve: pass its reason on and end. */
static _Noreturn void report_workload_failure(const struct child_ctx *ctx, pid_t workload,
					      struct confine_report *rep)
{
	struct sync_msg fail = {
		.type = rep->code == CORDON_E_EXEC ? SYNC_EXEC_FAILED : SYNC_SETUP_FAILED,
		.status = rep->exit_code,
		.errnum = rep->errnum,
		.code = rep->code,
	};

	rep->text[sizeof(rep->text) - 1] = '\0';
	snprintf(fail.text, sizeof(fail.text), "%s", rep->text);
	sync_send(ctx->sync_fd, &fail, NULL, 0);
	waitpid(workload, NULL, 0);
	_exit(rep->exit_code);
}

/* The workload is gone: report its status, and exit with it (as the container process would). */
static _Noreturn void report_exit(const struct child_ctx *ctx, int status)
{
	struct sync_msg msg = { .type = SYNC_EXITED, .status = status };

	sync_send(ctx->sync_fd, &msg, NULL, 0);
	/* Our exit takes every other process in the namespace with it. */
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/*
 * SYNC_SIGNAL: a signal the caller's terminal sent the supervisor. It
 * would have reached every process of the terminal's foreground group;
 * the workload's group is the nearest thing in here.
 */
static void relay_supervisor_signal(const struct child_ctx *ctx, pid_t workload,
				    const struct sync_msg *msg)
{
	/* With a terminal the workload leads a session of its own: its group is orphaned. */
	if (msg->type == SYNC_SIGNAL && msg->status > 0 && msg->status < NSIG)
		sandbox_relay_terminal_signal(workload, msg->status, ctx->console_fd >= 0);
}

/*
 * Relay signals and reap until the workload is gone; report its status.
 * The supervisor's end of the sync socket hanging up means it is gone:
 * so is the sandbox (its policy and cleanup went with it). That is the
 * only tie when we are not its child (struct child_ctx.fostered).
 */
static _Noreturn void init_loop(const struct child_ctx *ctx, pid_t workload, sigset_t *set)
{
	struct pollfd p[2] = { { .fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK),
				 .events = POLLIN },
			       { .fd = ctx->sync_fd, .events = POLLIN } };

	if (p[0].fd < 0)
		_exit(CORDON_EXIT_FAILURE);
	for (;;) {
		struct signalfd_siginfo si;
		int status;
		pid_t pid;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents) {
			struct sync_msg msg;
			ssize_t r = recv(ctx->sync_fd, &msg, sizeof(msg), MSG_DONTWAIT);

			if (r == 0 || (p[1].revents & (POLLHUP | POLLERR)))
				_exit(CORDON_EXIT_FAILURE);
			if (r == (ssize_t)sizeof(msg))
				relay_supervisor_signal(ctx, workload, &msg);
		}
		while (read(p[0].fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			/* We are in a session of our own: nothing comes from a terminal. */
			if (si.ssi_signo != SIGCHLD && si.ssi_code != SI_KERNEL)
				kill(workload, (int)si.ssi_signo);
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (pid == workload)
				report_exit(ctx, status);
	}
}

/*
 * Announce "created" and wait for SYNC_START. Returns false when the
 * workload died first (killed while created: its report pipe hangs up);
 * the init loop then reaps it and reports its status. A supervisor that
 * is gone ends the sandbox.
 */
static bool wait_for_start(const struct child_ctx *ctx, pid_t workload, pid_t workload_host_pid,
			   int report_fd)
{
	struct sync_msg msg = { .type = SYNC_CREATED, .status = workload_host_pid };
	struct pollfd p[2] = { { .fd = ctx->sync_fd, .events = POLLIN },
			       { .fd = report_fd, .events = POLLIN } };

	if (sync_send(ctx->sync_fd, &msg, NULL, 0) < 0)
		_exit(CORDON_EXIT_FAILURE);
	cordon_trace("created-sent");
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(CORDON_EXIT_FAILURE);
		}
		if (p[0].revents) {
			size_t n_fds = 0;

			if (sync_recv(ctx->sync_fd, &msg, NULL, &n_fds) <= 0)
				_exit(CORDON_EXIT_FAILURE);
			if (msg.type == SYNC_START)
				return true;
			relay_supervisor_signal(ctx, workload, &msg);
			continue;
		}
		if (p[1].revents) {
			/* A failed setup step of the workload's own, or its death while created. */
			struct confine_report rep;

			if (read(report_fd, &rep, sizeof(rep)) == (ssize_t)sizeof(rep))
				report_workload_failure(ctx, workload, &rep);
			return false;
		}
	}
}

/* A setup step failed once the workload exists: it goes first, then the reason. */
static _Noreturn void init_failed(const struct child_ctx *ctx, pid_t workload,
				  const struct cordon_error *err)
{
	kill(workload, SIGKILL);
	setup_failed(ctx, err);
}

/*
 * The workload was cloned with the container's stdio and the caller's
 * --preserve-fds: from here they are its, not ours. Ours is /dev/null,
 * so that a caller reading the container's output to its end (`$(cordon
 * create ...)`, `run --detach`) waits for the workload's copies only.
 */
static int let_go_of_stdio(const struct child_ctx *ctx, int null_fd, struct cordon_error *err)
{
	const int theirs[] = { ctx->stdin_fd, ctx->stdout_fd, ctx->stderr_fd };

	for (int fd = 0; fd < 3; fd++)
		if (dup2(null_fd, fd) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno,
						"the init's stdio to /dev/null");
	close(null_fd);
	for (size_t i = 0; i < ARRAY_SIZE(theirs); i++)
		if (theirs[i] >= 0)
			close(theirs[i]);
	if (ctx->spec->preserve_fds && close_range(3, 2 + ctx->spec->preserve_fds, 0) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno,
					"closing the --preserve-fds in the init");
	return 0;
}

/*
 * What the init holds while the container lives: exactly keep (and 0-2,
 * /dev/null), and of its capabilities only CAP_KILL, to relay signals to
 * the workload (whose user namespace is a child of ours). Everything it
 * built the root with, its namespaces' fds, any host path, any right
 * over the mounts, ids and namespaces of the sandbox is gone, so that a
 * process that could reach the init (none can: it is not dumpable) would
 * find nothing to use. No execve follows, no_new_privs all the same.
 */
static int init_confine(const int *keep, size_t n, struct cordon_error *err)
{
	int r = cordon_close_fds_except(3, keep, n);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -r, "closing the init's fds");
	if (cordon_caps_keep_only(1ULL << CAP_KILL, err) < 0)
		return cordon_error_wrap(err, "the init's capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "the init's no_new_privs");
	return 0;
}

_Noreturn void sandbox_child(const struct child_ctx *ctx)
{
	struct cordon_fs_options fs_opts = { .in_userns = ctx->userns };
	struct cordon_fs_host host;
	struct cordon_error err = { 0 };
	struct confine_report rep;
	struct sync_msg msg;
	int fds[2] = { -1, -1 };
	size_t n_fds = 2;
	int report_fd = -1, release_fd = -1, root, tty_slave = -1;
	bool net = ctx->spec->net.enabled;
	sigset_t set;
	pid_t workload, workload_host_pid;
	ssize_t r;

	/*
	 * A session of our own, before anything of the sandbox exists: no
	 * process in here shares the caller's process group (kill(0) from
	 * inside reached the caller's shell, its jobs and, rootless, the
	 * supervisor) or its session (whose controlling terminal /dev/tty
	 * opens). We are a fresh pid, so never a group leader: it cannot fail.
	 */
	setsid();

	/*
	 * The init never execs, so close-on-exec protects nothing: every fd
	 * of the supervisor's (its state directory, its namespaces, files
	 * it validated) goes now, before anything of the sandbox exists.
	 */
	{
		int keep[] = { ctx->sync_fd, ctx->console_fd, ctx->stdin_fd, ctx->stdout_fd,
			       ctx->stderr_fd, ctx->null_fd, ctx->idle_fd, cordon_trace_fd };

		r = cordon_close_fds_except(3 + ctx->spec->preserve_fds, keep, ARRAY_SIZE(keep));
		if (r < 0) {
			cordon_error_set(&err, CORDON_E_INTERNAL, (int)-r,
					 "closing the supervisor's fds");
			setup_failed(ctx, &err);
		}
	}
	/* /proc/1/cmdline would show the supervisor's: --env values, host paths. */
	r = cordon_proc_title_hide(INIT_TITLE);
	if (r < 0) {
		cordon_error_set(&err, CORDON_E_SECURITY, (int)-r,
				 "hiding the supervisor's command line");
		setup_failed(ctx, &err);
	}

	/* The supervisor's idmapped mounts come first, one a message, then GO. */
	cordon_fs_host_init(&host);
	for (;;) {
		n_fds = ARRAY_SIZE(fds);
		r = sync_recv(ctx->sync_fd, &msg, fds, &n_fds);
		if (r <= 0 || (msg.type != SYNC_GO && msg.type != SYNC_MOUNT_TREE))
			_exit(CORDON_EXIT_FAILURE); /* the supervisor is gone or failed */
		if (msg.type == SYNC_GO) {
			cordon_trace("go-recv");
			break;
		}
		/* mounts[status], or (rootful) the node of devices[status - n_mounts]. */
		if (n_fds != 1 || !ctx->spec->oci || msg.status < 0 ||
		    (size_t)msg.status >= ctx->spec->oci->n_mounts + ctx->spec->oci->n_devices)
			_exit(CORDON_EXIT_FAILURE);
		cordon_fs_host_mount_trees(&host,
					   ctx->spec->oci->n_mounts + ctx->spec->oci->n_devices);
		host.mount_trees[msg.status] = fds[0];
	}
	/*
	 * Still with the host's root ids: the rootfs directory may lie below
	 * directories only they may enter (a container engine's storage).
	 * Opened here, in our own mount namespace, it is the target for the
	 * supervisor's clone of it (cordon_fs_build).
	 */
	if (ctx->userns && ctx->rootful && (msg.status & 1)) {
		host.rootfs_dir = cordon_path_reopen(ctx->spec->rootfs, &ctx->spec->rootfs_id,
						     "rootfs", &err);
		if (host.rootfs_dir < 0)
			setup_failed(ctx, &err);
	}
	/* The config's bind sources, for the same reason (volumes in that storage). */
	if (cordon_fs_open_sources(ctx->spec, &host, &err) < 0)
		setup_failed(ctx, &err);
	if (ctx->userns && ctx->rootful && become_root(&err) < 0)
		setup_failed(ctx, &err);

	/*
	 * A sandbox never outlives its supervisor. Set after the id change
	 * (a credential change clears it), then check the supervisor did not
	 * die before it took effect. A fostered init's parent is not the
	 * supervisor: the sync socket's hangup is its tie (init_loop).
	 */
	if (!ctx->fostered && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		cordon_error_set(&err, CORDON_E_INTERNAL, errno, "PR_SET_PDEATHSIG");
		setup_failed(ctx, &err);
	}
	if (supervisor_gone(ctx->sync_fd))
		_exit(CORDON_EXIT_FAILURE);
	if (n_fds >= 1)
		host.rootfs_tree = msg.status & 1 ? fds[0] : -1;
	if (n_fds >= 1 && (msg.status & 2))
		host.workspace_tree = fds[n_fds - 1];

	/*
	 * The workload's stdio, before it exists: the relay's pipes (the
	 * caller's terminal is never among its fds), or the monitor's
	 * container stdio (its own is /dev/null).
	 */
	{
		const int theirs[] = { ctx->stdin_fd, ctx->stdout_fd, ctx->stderr_fd };

		for (int fd = 0; fd < 3; fd++) {
			if (theirs[fd] >= 0 && dup2(theirs[fd], fd) < 0) {
				cordon_error_set(&err, CORDON_E_INTERNAL, errno,
						 "redirecting stdio");
				setup_failed(ctx, &err);
			}
		}
	}

	/* Now that we sit in the sandbox's cgroups, a cgroup namespace rooted there. */
	if (unshare(CLONE_NEWCGROUP) < 0) {
		cordon_error_set(&err, CORDON_E_NAMESPACE, errno, "creating the cgroup namespace");
		setup_failed(ctx, &err);
	}
	/*
	 * With an allowlist, we move into a new network namespace, G, owned
	 * by the sandbox's user namespace: the gateway. The workload's own
	 * namespace is created below ours (by its own unshare, in its nested
	 * user namespace), so it can neither enter G nor change its rules.
	 */
	if (net) {
		if (unshare(CLONE_NEWNET) < 0) {
			cordon_error_set(&err, CORDON_E_NAMESPACE, errno,
					 "creating the gateway network namespace");
			setup_failed(ctx, &err);
		}
		if (sandbox_gateway_start(ctx, &err) < 0)
			setup_failed(ctx, &err);
	}
	cordon_trace("namespaces");
	/*
	 * The workload's user namespace keeps our soft RLIMIT_SIGPENDING and
	 * RLIMIT_MSGQUEUE as the bound of all it holds together at our level,
	 * and so on the host (cordon_rlimits_bound_sandbox).
	 */
	if (cordon_rlimits_bound_sandbox(&ctx->spec->security.rlimits, &err) < 0)
		setup_failed(ctx, &err);
	workload = workload_spawn(ctx, &report_fd, &release_fd, &err);
	if (workload < 0)
		setup_failed(ctx, &err);
	cordon_trace("workload-clone");
	if (let_go_of_stdio(ctx, ctx->null_fd, &err) < 0)
		init_failed(ctx, workload, &err);
	/* The IPC sysctls of the sandbox's own namespace, while the host's /proc is ours. */
	if (!cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_IPC) &&
	    sandbox_sysctls(ctx->spec, SYSCTL_NS(CORDON_OCI_NS_IPC), &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	/*
	 * Keep the workload out of /proc/1 (mem, fds, environ). Only now: a
	 * non-dumpable init would hand its state to the workload's clone, and
	 * the workload's /proc files (uid_map) would no longer be writable.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) < 0) {
		cordon_error_set(&err, CORDON_E_SECURITY, errno, "PR_SET_DUMPABLE");
		init_failed(ctx, workload, &err);
	}

	fs_opts.ipc_joined = cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_IPC);
	fs_opts.tty_gid_mapped = !ctx->userns || cordon_idmap_to_outside(&ctx->plan->gid, 5) >= 0;
	if (net)
		fs_opts.resolv_conf = ctx->spec->net.dns_none ?
					      "# cordon: --dns none, no resolver\n" :
					      "nameserver " CORDON_GW_ADDR4
					      "\nnameserver " CORDON_GW_ADDR6 "\n";
	root = cordon_fs_build(ctx->spec, &host, &fs_opts, &err);
	if (root < 0)
		setup_failed(ctx, &err);
	cordon_trace("mounts");
	cordon_fs_host_close(&host);
	/* The pivot takes the host's /proc away: the workload must be done with it. */
	workload_host_pid = wait_workload_ready(ctx, workload, report_fd);
	cordon_trace("report-recv");
	/*
	 * The sandbox's namespace limits, which bound everything below it
	 * together (cordon_user_limits_write). Only now: cordon's own
	 * namespaces exist (the workload's network namespace, said by its
	 * report) and the mount API's anonymous trees are gone, so no limit,
	 * however low, can refuse them. Before the pivot: the sandbox's
	 * /proc/sys is read-only, the host's /proc shows ours all the same.
	 */
	if (ctx->userns && cordon_user_limits_write(&ctx->spec->user_limits, &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	/* Its report also says its network namespace exists: link it to ours. */
	if (net && cordon_gateway_link(workload, &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	cordon_trace(net ? "gateway-link" : "user-limits");
	if (cordon_fs_enter(root, &err) < 0)
		setup_failed(ctx, &err);
	close(root);
	cordon_trace("pivot");
	/* A joined UTS namespace (a pod's) has its owner's name. */
	if (!cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_UTS) &&
	    sethostname(ctx->spec->hostname, strlen(ctx->spec->hostname)) < 0) {
		cordon_error_set(&err, CORDON_E_NAMESPACE, errno, "sethostname");
		setup_failed(ctx, &err);
	}
	{
		const char *domain = ctx->spec->oci ? ctx->spec->oci->domainname : NULL;

		if (domain && *domain && !cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_UTS) &&
		    setdomainname(domain, strlen(domain)) < 0) {
			cordon_error_set(&err, CORDON_E_NAMESPACE, errno, "domainname %s", domain);
			setup_failed(ctx, &err);
		}
	}
	if (!cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_UTS) &&
	    sandbox_sysctls(ctx->spec, SYSCTL_NS(CORDON_OCI_NS_UTS), &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	if (workload_write_maps(ctx, workload, &err) < 0) {
		/* Its /proc files go with it: a workload that failed first says why. */
		struct pollfd p = { .fd = report_fd, .events = POLLIN };

		if (poll(&p, 1, 0) > 0 &&
		    read(report_fd, &rep, sizeof(rep)) == (ssize_t)sizeof(rep))
			report_workload_failure(ctx, workload, &rep);
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	cordon_trace("workload-idmap");
	if (net && sandbox_gateway_finish(ctx, &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	if (net)
		cordon_trace("gateway-finish");
	/*
	 * Before "created", when launchers start to look at our namespaces.
	 * With an allowlist the network is cordon's own: we stay in the
	 * gateway namespace, whose lifetime this change would otherwise
	 * leave to the sockets and helpers that point into it. A namespace
	 * joined by path we share with the workload already (and may not
	 * enter again: its owner is not ours).
	 */
	if (!net && !cordon_spec_ns_not_new(ctx->spec, CORDON_OCI_NS_NETWORK) &&
	    join_workload_network(workload, &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	/*
	 * The terminal exists when "created" is announced, as runc's does:
	 * the console socket's reader has the master before start.
	 */
	if (ctx->console_fd >= 0 && sandbox_terminal_create(ctx, &tty_slave, &err) < 0) {
		kill(workload, SIGKILL);
		setup_failed(ctx, &err);
	}
	/*
	 * A program that is not there fails now, not at start: a launcher
	 * learns it from create, as from runc (podman maps it to 127/126).
	 */
	rep.exit_code = ctx->idle_fd >= 0 ? 0 :
					  sandbox_exec_probe(ctx->spec->argv, ctx->spec->env, &rep.errnum);
	if (rep.exit_code) {
		rep.code = CORDON_E_EXEC;
		snprintf(rep.text, sizeof(rep.text), "%s", ctx->spec->argv[0]);
		kill(workload, SIGKILL);
		report_workload_failure(ctx, workload, &rep);
	}
	cordon_trace("exec-probe");
	/* Nothing but what the rest needs, before the workload may run (the release). */
	{
		int keep[] = { ctx->sync_fd, report_fd, release_fd, tty_slave, cordon_trace_fd };

		if (init_confine(keep, ARRAY_SIZE(keep), &err) < 0)
			init_failed(ctx, workload, &err);
	}
	cordon_trace("init-confine");
	/* Created: the supervisor records it and says when (at once, or at `cordon start`). */
	if (wait_for_start(ctx, workload, workload_host_pid, report_fd)) {
		struct sync_msg go = { .type = SYNC_START };

		cordon_trace("start-recv");
		/* A workload that already failed reports why below; the send just fails. */
		sync_send(release_fd, &go, &tty_slave, tty_slave >= 0 ? 1 : 0);
		cordon_trace("release");
		close(release_fd);
		if (tty_slave >= 0)
			close(tty_slave);

		/* EOF: execve succeeded (the report pipe is close-on-exec), or it died first. */
		r = read(report_fd, &rep, sizeof(rep));
		close(report_fd);
		if (r == (ssize_t)sizeof(rep))
			report_workload_failure(ctx, workload, &rep);
		/*
		 * Killed before its execve (a signal from the caller, or one
		 * that was pending), it never ran: not running, whatever the
		 * EOF says. The loop below reaps it and reports how it ended.
		 * Not knowing is not running either: it is ended.
		 */
		r = cordon_proc_execed(workload);
		if (r == 1) {
			cordon_trace("execed");
			msg = (struct sync_msg){ .type = SYNC_RUNNING };
			sync_send(ctx->sync_fd, &msg, NULL, 0);
		} else if (r < 0) {
			kill(workload, SIGKILL);
		}
	}
	/* The workload is on its own (or gone): the sync socket is all we keep. */
	{
		int r2 = cordon_close_fds_except(3, &ctx->sync_fd, 1);

		if (r2 < 0) {
			cordon_error_set(&err, CORDON_E_INTERNAL, -r2, "closing the init's fds");
			init_failed(ctx, workload, &err);
		}
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sandbox_n_forwarded_signals; i++)
		sigaddset(&set, sandbox_forwarded_signals[i]);
	init_loop(ctx, workload, &set);
}
