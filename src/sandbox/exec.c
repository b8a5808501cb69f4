// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon exec`: a new process in a created or running container.
 *
 * The process joins what the container's own process (the workload)
 * lives in, and gets what confines it:
 *
 *   cordon exec (host)
 *     read state.json and the config.json kept at create (shared lock)
 *     spec: the config's process, or --process FILE, plus the flags
 *     pidfd of the workload (start time checked), its user namespace U2
 *     and U2's parent U1 (the sandbox's); the cgroup.procs of the
 *     container's cgroups opened (a frozen one refused)
 *     the lock released: nothing below waits with it held
 *     fork ──► joiner (host pid namespace, non-dumpable, parent-death signal)
 *                close every fd it does not need
 *                setns U1: capabilities over the namespaces U1 owns
 *                setns(pidfd, mnt|pid|uts|ipc|cgroup|net): root and cwd
 *                  become the container's root; no host path stays
 *                setns(pidfd, user): U2, the workload's nested namespace
 *                clone(CLONE_PARENT) ──► process (pid namespace of the container,
 *                report its pid, exit        a child of cordon exec)
 *                                          rlimits, bounding set (as the workload)
 *                                          groups, gid, uid
 *                                          --tty: pty of the container's devpts,
 *                                            master to --console-socket
 *                                          capabilities, no_new_privs
 *                                          cwd, resolved in the root (as the user)
 *                                          close-on-exec all fds but 0-2 and
 *                                            --preserve-fds
 *                                          writes itself into the container's
 *                                            cgroups (the fds cordon exec opened)
 *                                          seccomp, execve
 *     report pipe: EOF = execve succeeded
 *     --detach: return the pid; else relay signals, wait, exit with its status
 *
 * Why U1 first: the mount, pid, uts, ipc and cgroup namespaces are owned
 * by U1 and the network namespace by U2, a child of U1. A process in U2
 * holds no capability over U1's namespaces, so it could not join them
 * afterwards; one in U1 holds every capability over both. Rootless, the
 * caller owns U1, so it may join it with no privilege on the host.
 *
 * Why the cgroups last: the container's cgroup2 directory is delegated
 * to it, so it can freeze any cgroup of its tree (cgroup.freeze) and move
 * its processes between them. Nothing of cordon exec enters them before
 * the process is set up: the process writes itself in through fds
 * opened by cordon exec on the host (the kernel checks the migration
 * against the opener's credentials and cgroup namespace), just before
 * its seccomp filter and execve. No wait of cordon exec holds the
 * container's lock, so a process the container stops or freezes holds
 * up cordon exec alone, until the container (or the process) is killed;
 * kill, delete, state and pause go on (docs/security.md).
 */
#include <fcntl.h>
#include <linux/openat2.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sandbox-internal.h"

/* What the container sees of the joiner and the process before its execve. */
#define EXEC_TITLE "cordon-exec"

/* cgroup v1 hierarchies and the cgroup2 one: more than enough. */
#define EXEC_MAX_CGROUPS 16

#define JOIN_NS \
	(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP | CLONE_NEWNET)

struct exec_ctx {
	struct cordon_spec *spec; /* the process amends its own copy (--user NAME) */
	const struct cordon_exec_opts *opts;
	int pidfd;	     /* the workload's */
	int outer_userns;    /* U1, or -1 when it is ours (--userns host) */
	bool deny_setgroups; /* setgroups(2) is denied in U2 */
	/* Each of the container's cgroups: its cgroup.procs, and where that is
	 * closed to processes (a cgroup2 one with controllers enabled below it),
	 * that of the cgroup the workload was moved to; -1 where none. */
	int cg_procs[EXEC_MAX_CGROUPS];
	int cg_alt[EXEC_MAX_CGROUPS];
	size_t n_cg;
	int report_fd; /* the write end, in the children */
	/* Supervised (exec-tree.c): the process is the child of a reaper of its own. */
	struct exec_tree *tree;
};

static _Noreturn void exec_fail_err(int report_fd, const struct cordon_error *err)
{
	confine_fail(report_fd, CORDON_EXIT_FAILURE, err->code, err->errnum, "%s", err->msg);
}

/*
 * The cgroup sub below the container's cgroup dir (exec --cgroup): made
 * by the container itself (its cgroup2 directory is delegated to it), so
 * resolved beneath dir without a symlink or another mount. -1 (errno).
 */
static int open_sub_cgroup(const char *dir, const char *sub)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	_cleanup_close_ int top = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	while (*sub == '/')
		sub++;
	if (top < 0)
		return -1;
	return cordon_openat2(top, *sub ? sub : ".", &how, sizeof(how));
}

/* Is the cgroup (a directory fd) frozen, or a cgroup2 one frozen by an ancestor? */
static bool cgroup_frozen_at(int dir)
{
	_cleanup_free_ char *text = NULL;

	if (cordon_read_file_at(dir, "cgroup.events", &text, NULL) == 0)
		return strstr(text, "frozen 1") != NULL;
	if (cordon_read_file_at(dir, "freezer.state", &text, NULL) == 0)
		return strncmp(text, "THAWED", 6) != 0;
	return false;
}

/*
 * The cgroup2 directory below dir (the container's) that the workload
 * is in now, when it is not dir itself: its "0::" line of
 * /proc/PID/cgroup is a path from the cgroup2 root, dir one from the
 * filesystem's root; the part of it below the container's own is
 * resolved beneath dir. -1 when there is none (or it is dir).
 */
static int workload_cgroup(const char *dir, pid_t pid)
{
	_cleanup_free_ char *text = NULL;
	char path[64], *line, *nl;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return -1;
	line = strstr(text, "0::/");
	if (!line || (line != text && line[-1] != '\n'))
		return -1;
	line += 3;
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	/* The longest tail of dir that starts the workload's path: the container's cgroup. */
	for (const char *t = dir; (t = strchr(t, '/')); t++) {
		size_t n = strlen(t);

		if (strncmp(line, t, n) == 0 && line[n] == '/' && line[n + 1])
			return open_sub_cgroup(dir, line + n);
		if (strcmp(line, t) == 0)
			return -1;
	}
	return -1;
}

/* dir's cgroup.procs, opened for writing; the process writes itself there later. */
static int open_procs(int dir)
{
	return openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
}

/*
 * What the process will join: in each of the container's cgroups, with
 * sub (--cgroup) that cgroup below the container's where the container
 * made it (its cgroup2 one: a v1 hierarchy, not delegated, has it only
 * when made by hand), else the container's own, and the workload's
 * cgroup below it as the way in where the container's is closed (EBUSY).
 * sub must exist somewhere. A frozen target is refused now: a process
 * cannot join one and run (as a paused container is refused).
 */
static int open_cgroups(struct exec_ctx *x, char **dirs, pid_t workload,
			struct cordon_error *err)
{
	const char *sub = x->opts->cgroup;
	bool found = false;

	for (char **d = dirs; *d; d++) {
		_cleanup_close_ int fd = sub ? open_sub_cgroup(*d, sub) : -1, alt = -1;
		const char *where = fd >= 0 ? sub : "";

		if (sub && fd < 0 && errno != ENOENT)
			return cordon_error_set(err, CORDON_E_CGROUP, errno, "--cgroup %s in %s",
						sub, *d);
		found = found || fd >= 0;
		if (fd < 0)
			fd = open(*d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, errno, "opening %s", *d);
		if (x->n_cg == EXEC_MAX_CGROUPS)
			return cordon_error_set(err, CORDON_E_CGROUP, E2BIG,
						"the container's cgroups");
		if (!sub)
			alt = workload_cgroup(*d, workload);
		if (cgroup_frozen_at(fd) || (alt >= 0 && cgroup_frozen_at(alt)))
			return cordon_error_set(err, CORDON_E_STATE, 0,
						"container %s: cgroup %s%s%s is frozen: cannot "
						"exec in it",
						x->spec->id, *d, *where ? "/" : "", where);
		x->cg_procs[x->n_cg] = open_procs(fd);
		if (x->cg_procs[x->n_cg] < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, errno, "opening %s%s%s",
						*d, *where ? "/" : "", where);
		x->cg_alt[x->n_cg] = alt >= 0 ? open_procs(alt) : -1;
		x->n_cg++;
	}
	if (sub && !found)
		return cordon_error_set(err, CORDON_E_CGROUP, ENOENT,
					"--cgroup %s: no such cgroup below the container's", sub);
	return 0;
}

/* The process itself, in every namespace of the container: the one confinement sequence. */
/*
 * --user NAME[:GROUP]: looked up by the process itself, inside the
 * sandbox (its root, its user namespace, before its ids change), as runc
 * and crun do: the files are the sandbox's and may be anything it made
 * them (a link, a fifo, a huge file), so they are read with no more than
 * the sandbox's own privilege over them and by the rules of run's --user
 * (cordon_user_resolve_at). HOME becomes the entry's unless --env set it.
 */
static int exec_user_by_name(struct cordon_spec *spec, const struct cordon_exec_opts *opts,
			     struct cordon_error *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *home = NULL, *kv = NULL;
	uid_t uid;
	gid_t gid;

	if (root < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "the sandbox's root");
	if (cordon_user_resolve_at(root, "the sandbox's root ", opts->user_name, &uid, &gid,
				   &home, err) < 0)
		return -1;
	spec->uid = uid;
	spec->gid = gid;
	for (char **e = opts->env; e && *e; e++)
		if (strncmp(*e, "HOME=", 5) == 0)
			return 0;
	if (!home)
		home = cordon_xstrdup(uid == 0 ? "/root" : "/");
	kv = cordon_xasprintf("HOME=%s", home);
	free(spec->home);
	spec->home = TAKE_PTR(home);
	return cordon_spec_add_env(spec, kv, err);
}

static _Noreturn void exec_process(const struct exec_ctx *x)
{
	struct confine c = {
		.kind = CONFINE_EXEC,
		.spec = x->spec,
		.report_fd = x->report_fd,
		.deny_setgroups = x->deny_setgroups,
		.console_fd = x->opts->console_fd,
		.preserve_fds = x->opts->preserve_fds,
		.ready_fd = -1,
		.exec_fd = -1,
		.tty = -1,
		.cgroup_procs = x->cg_procs,
		.cgroup_alt = x->cg_alt,
		.n_cgroups = x->n_cg,
	};

	cordon_trace_process("exec-process");
	if (x->opts->user_name) {
		struct cordon_error err = { 0 };

		if (exec_user_by_name(x->spec, x->opts, &err) < 0)
			exec_fail_err(x->report_fd, &err);
	}
	sandbox_confine_exec(&c);
}

int sandbox_join_container(const struct cordon_spec *spec, int pidfd, int outer_userns,
			   struct cordon_error *err)
{
	int joined = (cordon_spec_ns_path(spec, CORDON_OCI_NS_NETWORK) ? CLONE_NEWNET : 0) |
		     (cordon_spec_ns_path(spec, CORDON_OCI_NS_IPC) ? CLONE_NEWIPC : 0) |
		     (cordon_spec_ns_path(spec, CORDON_OCI_NS_UTS) ? CLONE_NEWUTS : 0);
	/* The runtime's, shared (not listed): we are in them already. */
	int shared = (cordon_spec_ns_shared(spec, CORDON_OCI_NS_NETWORK) ? CLONE_NEWNET : 0) |
		     (cordon_spec_ns_shared(spec, CORDON_OCI_NS_IPC) ? CLONE_NEWIPC : 0) |
		     (cordon_spec_ns_shared(spec, CORDON_OCI_NS_UTS) ? CLONE_NEWUTS : 0);

	/* Joined by the config's path (a pod's): not U1's, entered with our privileges. */
	if (joined && setns(pidfd, joined) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"joining the container's namespaces of the config");
	if (outer_userns >= 0 && setns(outer_userns, CLONE_NEWUSER) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"joining the sandbox's user namespace");
	/* The mount namespace sets our root and cwd to the container's root. */
	if (setns(pidfd, JOIN_NS & ~(joined | shared)) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"joining the container's namespaces");
	return 0;
}

int sandbox_outer_userns(int inner, int *outer, struct cordon_error *err)
{
	_cleanup_close_ int self = -1, fd = ioctl(inner, NS_GET_PARENT);
	struct stat a, b;

	*outer = -1;
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"the sandbox's user namespace");
	self = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	if (self < 0 || fstat(self, &a) < 0 || fstat(fd, &b) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "our user namespace");
	/* --userns host: the workload's namespace hangs below ours; nothing to join first. */
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		*outer = TAKE_FD(fd);
	return 0;
}

/*
 * The reaper of a supervised exec (docs/architecture.md, "exec's process
 * tree"): the process's parent in the container's pid namespace, and a
 * child subreaper, so every process the command starts stays below it
 * whatever it does (a double fork, setsid, a daemon's detach): an orphan
 * goes to the nearest subreaper among its ancestors, and no process
 * leaves the tree any other way. cordon exec finds and ends the tree from
 * the host, through the host's /proc (exec-tree.c). The reaper stays in
 * U1 with the ids it came with and drops every capability: rootful it
 * is host uid 0, which U2 does not map, so nothing in the container may
 * signal it. It sends the process's pidfd (SYNC_CREATED) and its wait
 * status (SYNC_EXITED), reaps what is handed to it, and exits when cordon
 * exec closes its end of the socket (or dies).
 */
static _Noreturn void exec_reaper(struct exec_ctx *x)
{
	struct clone_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
	struct exec_tree *t = x->tree;
	struct sync_msg msg = { .type = SYNC_CREATED };
	struct cordon_error err = { 0 };
	int cmd_pidfd = -1, sigfd;
	sigset_t chld;
	pid_t cmd;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_INTERNAL, errno,
			     "making the process's reaper");
	/* Blocked since cordon exec forked: none is lost. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_INTERNAL, errno,
			     "the reaper's signalfd");
	args.pidfd = (uint64_t)(uintptr_t)&cmd_pidfd;
	cmd = cordon_clone3(&args, sizeof(args));
	if (cmd < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_NAMESPACE, errno,
			     "starting the process in the container");
	if (cmd == 0) {
		close(sigfd);
		close(t->reaper_sock);
		close(t->null_fd);
		if (setns(x->pidfd, CLONE_NEWUSER) < 0)
			confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_NAMESPACE, errno,
				     "joining the workload's user namespace");
		close(x->pidfd);
		exec_process(x);
	}
	/* Nothing of the process's stays here: its pipes, terminal and fds end with it. */
	for (size_t i = 0; i < x->n_cg; i++) {
		close(x->cg_procs[i]);
		if (x->cg_alt[i] >= 0)
			close(x->cg_alt[i]);
	}
	close(x->report_fd);
	close(x->pidfd);
	if (x->opts->console_fd >= 0)
		close(x->opts->console_fd);
	if (x->opts->preserve_fds)
		close_range(3, 2 + x->opts->preserve_fds, 0);
	for (int fd = 0; fd < 3; fd++)
		dup2(t->null_fd, fd);
	close(t->null_fd);
	/* It only waits from here. */
	if (cordon_caps_keep_only(0, &err) < 0)
		_exit(CORDON_EXIT_FAILURE);
	/* With our pid namespace, the container's: cordon exec signals nothing outside it. */
	{
		int fds[2] = { cmd_pidfd, open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC) };

		if (fds[1] < 0 || sync_send(t->reaper_sock, &msg, fds, 2) < 0) {
			kill(cmd, SIGKILL);
			_exit(CORDON_EXIT_FAILURE);
		}
		close(fds[0]);
		close(fds[1]);
	}
	for (bool cmd_reaped = false, empty = false;;) {
		struct pollfd p[2] = { { .fd = t->reaper_sock, .events = POLLIN },
				       { .fd = sigfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		struct rusage ru;
		int st;
		pid_t w;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			_exit(CORDON_EXIT_FAILURE);
		while (read(sigfd, &si, sizeof(si)) > 0)
			;
		while ((w = wait4(-1, &st, WNOHANG, &ru)) > 0) {
			if (w != cmd)
				continue;
			cmd_reaped = true;
			/* Its CPU time with that of the children it waited for, in microseconds. */
			msg = (struct sync_msg){ .type = SYNC_EXITED, .status = st };
			snprintf(msg.text, sizeof(msg.text), "%llu",
				 (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
						 1000000ULL +
					 (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec));
			sync_send(t->reaper_sock, &msg, NULL, 0);
		}
		/*
		 * No child: the tree is empty for good, since a live process below
		 * us keeps a live chain of parents up to one of our children.
		 */
		if (w < 0 && errno == ECHILD && cmd_reaped && !empty) {
			empty = true;
			msg = (struct sync_msg){ .type = SYNC_TREE_EMPTY };
			sync_send(t->reaper_sock, &msg, NULL, 0);
		}
		/* cordon exec is done with the tree (or gone): what is left goes to the init. */
		if (p[0].revents)
			_exit(0);
	}
}

/* The joiner: into the container's cgroups and namespaces, then the process. */
static _Noreturn void exec_join(struct exec_ctx *x)
{
	struct exec_tree *t = x->tree;
	int keep[7 + 2 * EXEC_MAX_CGROUPS] = { x->report_fd,
					       x->pidfd,
					       x->outer_userns,
					       x->opts->console_fd,
					       t ? t->reaper_sock : -1,
					       t ? t->null_fd : -1,
					       cordon_trace_fd };
	size_t n_keep = 7;
	struct clone_args args = { .flags = CLONE_PARENT };
	struct cordon_error err = { 0 };
	struct confine_report rep = { .code = CORDON_OK };
	pid_t pid;
	int r;

	/*
	 * Nothing in the container may read or trace us while we hold what
	 * we hold (mm->user_ns stays the host's: only host privilege could),
	 * and we end with cordon exec.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_SECURITY, errno,
			     "the joiner's PR_SET_DUMPABLE, PR_SET_PDEATHSIG");
	/* Counted output: the process's stdout and stderr are our pipes (exec-tree.c). */
	if (t && t->out_wr[0] >= 0 &&
	    (dup2(t->out_wr[0], STDOUT_FILENO) < 0 || dup2(t->out_wr[1], STDERR_FILENO) < 0))
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_INTERNAL, errno,
			     "the process's output pipes");
	/* The caller's fds (but --preserve-fds) and ours never enter the container. */
	for (size_t i = 0; i < x->n_cg; i++) {
		keep[n_keep++] = x->cg_procs[i];
		if (x->cg_alt[i] >= 0)
			keep[n_keep++] = x->cg_alt[i];
	}
	r = cordon_close_fds_except(3 + (int)x->opts->preserve_fds, keep, n_keep);
	if (r < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_INTERNAL, -r,
			     "closing cordon exec's fds");
	/* What the container sees of us and the process in /proc/PID/cmdline. */
	r = cordon_proc_title_hide(EXEC_TITLE);
	if (r < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_SECURITY, -r,
			     "hiding cordon exec's command line");

	cordon_trace_process("joiner");
	cordon_trace("joiner-start");
	if (sandbox_join_container(x->spec, x->pidfd, x->outer_userns, &err) < 0)
		exec_fail_err(x->report_fd, &err);
	if (x->outer_userns >= 0)
		close(x->outer_userns);
	/* Supervised: the reaper stays in U1, its child joins U2 (sandbox_exec_reaper). */
	if (t) {
		pid = cordon_clone3(&args, sizeof(args));
		if (pid < 0)
			confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_NAMESPACE, errno,
				     "starting the process's reaper in the container");
		if (pid == 0)
			exec_reaper(x);
		rep.pid = pid;
		cordon_write_all(x->report_fd, &rep, sizeof(rep));
		_exit(0);
	}
	if (setns(x->pidfd, CLONE_NEWUSER) < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_NAMESPACE, errno,
			     "joining the workload's user namespace");
	close(x->pidfd);
	cordon_trace("namespaces-joined");

	/* A pid namespace applies to children: the process is one, but cordon exec's. */
	pid = cordon_clone3(&args, sizeof(args));
	if (pid < 0)
		confine_fail(x->report_fd, CORDON_EXIT_FAILURE, CORDON_E_NAMESPACE, errno,
			     "starting the process in the container");
	if (pid == 0)
		exec_process(x);
	rep.pid = pid;
	cordon_write_all(x->report_fd, &rep, sizeof(rep));
	_exit(0);
}

static int not_in_state(const char *id, enum cordon_status status, struct cordon_error *err)
{
	return cordon_error_set(err, CORDON_E_STATE, 0, "container %s is %s: cannot exec in it", id,
				cordon_status_name(status));
}

/* --cwd DIR: absolute, normalised, not in /proc. */
static int exec_cwd(struct cordon_spec *spec, const char *cwd, struct cordon_error *err)
{
	char *norm = cwd[0] == '/' ? cordon_path_normalize(cwd) : NULL;

	if (!norm)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--cwd %s: must be absolute, without '..'", cwd);
	free(spec->cwd);
	spec->cwd = norm;
	if (cordon_cwd_in_proc(norm))
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--cwd %s: must not be inside /proc",
					norm);
	return 0;
}

/* What exec's flags amend in either kind of spec: --env, --cwd, --user. */
static int exec_amend(struct cordon_spec *spec, const struct cordon_exec_opts *opts,
		      struct cordon_error *err)
{
	for (char **e = opts->env; e && *e; e++)
		if (cordon_spec_add_env(spec, *e, err) < 0)
			return -1;
	if (opts->cwd && exec_cwd(spec, opts->cwd, err) < 0)
		return -1;
	if (opts->has_user) {
		spec->uid = opts->uid;
		if (opts->has_gid)
			spec->gid = opts->gid;
	}
	return 0;
}

/*
 * A session's process: the confinement its create kept (process.json),
 * with the command and what the flags amend. --cap is held to the safe
 * set, as run's --cap-add.
 */
static int exec_session_spec(const struct cordon_state *state,
			     const struct cordon_exec_opts *opts, struct cordon_spec *spec,
			     struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	cordon_capset refused = opts->caps & ~cordon_cap_safe_set();
	size_t len = 0, n = 0;

	if (cordon_state_read_process(state, &text, &len, err) < 0 ||
	    cordon_spec_from_session(spec, state->id, text, len, err) < 0)
		return -1;
	free(spec->id);
	spec->id = cordon_xstrdup(state->id);
	if (opts->process_json)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--process: a session's exec takes a command");
	for (char **a = opts->argv; a && *a; a++)
		cordon_strv_push(&spec->argv, &n, *a);
	if (!spec->argv || !spec->argv[0][0])
		return cordon_error_set(err, CORDON_E_USAGE, 0, "a command is required");
	if (exec_amend(spec, opts, err) < 0)
		return -1;
	if (refused) {
		char name[32];

		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--cap %s: refused, not in the safe set (docs/security.md)",
					cordon_cap_name(__builtin_ctzll(refused), name, sizeof(name)));
	}
	spec->security.caps |= opts->caps;
	if (opts->tty && opts->console_fd < 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "a terminal (--tty) needs --console-socket");
	if (!opts->tty && opts->console_fd >= 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--console-socket: only with a terminal (--tty)");
	return 0;
}

/* The process's spec: the config of create, its process replaced or amended. */
static int exec_spec(const struct cordon_state *state, const struct cordon_exec_opts *opts,
		     struct cordon_spec *spec, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	struct cordon_oci *oci;
	size_t len = 0;

	if (state->info.kind == CORDON_KIND_SESSION)
		return exec_session_spec(state, opts, spec, err);
	if (cordon_state_read_config(state, &text, &len, err) < 0)
		return -1;
	if (cordon_spec_from_oci(spec, state->info.bundle, text, len, err) < 0)
		return cordon_error_wrap(err, "container %s: its config", state->id);
	oci = spec->oci;
	free(spec->id);
	spec->id = cordon_xstrdup(state->id);
	if (opts->process_json) {
		if (cordon_spec_process_from_json(spec, opts->process_json, opts->process_len,
						  err) < 0)
			return cordon_error_wrap(err, "--process");
		oci->terminal = oci->terminal || opts->tty;
	} else {
		size_t n = 0;

		cordon_strv_free(TAKE_PTR(spec->argv));
		for (char **a = opts->argv; a && *a; a++)
			cordon_strv_push(&spec->argv, &n, *a);
		if (!spec->argv || !spec->argv[0][0])
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"a command is required (or --process FILE)");
		oci->terminal = opts->tty;
	}
	if (exec_amend(spec, opts, err) < 0)
		return -1;
	/*
	 * Added to the bounding, permitted and effective sets, as runc does;
	 * finalize holds them to the config's policy (the safe set under the
	 * network annotations).
	 */
	oci->caps.bounding |= opts->caps;
	oci->caps.permitted |= opts->caps;
	oci->caps.effective |= opts->caps;
	spec->security.caps |= opts->caps;
	spec->security.permitted |= opts->caps;
	spec->security.effective |= opts->caps;
	if (opts->no_new_privs)
		spec->security.new_privs_allowed = false;
	if (oci->terminal && opts->console_fd < 0)
		return cordon_error_set(
			err, CORDON_E_USAGE, 0,
			"a terminal (--tty, process.terminal) needs --console-socket");
	if (!oci->terminal && opts->console_fd >= 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--console-socket: only with a terminal (--tty)");
	return cordon_spec_finalize(spec, err);
}

/*
 * --pid-file and --result-json are written by this command on the host
 * (as host root when rootful): a link or '..' their walk followed in the
 * sandbox's own places refuses them (cordon_spec_links_check). Until
 * this passed, the result is not written at all (opts->outputs_unchecked
 * stays set), not even a refusal's: an exec that fails before, on a
 * sandbox its workload ended, would write through the link.
 */
static int exec_outputs_safe(const struct cordon_spec *spec, const struct cordon_exec_opts *opts,
			     struct cordon_error *err)
{
	if (cordon_spec_links_check(spec, opts->output_links[0], "--pid-file", err) < 0 ||
	    cordon_spec_links_check(spec, opts->output_links[1], "--result-json", err) < 0)
		return -1;
	if (opts->outputs_unchecked)
		*opts->outputs_unchecked = false;
	return 0;
}

/* What the process joins: the workload (by pidfd) and the namespaces around it. */
static int exec_target(const struct cordon_state *state, struct exec_ctx *x,
		       struct cordon_error *err)
{
	const struct cordon_state_info *info = &state->info;
	_cleanup_close_ int inner = -1;
	_cleanup_free_ char *setgroups_text = NULL;
	_cleanup_strv_ char **dirs = NULL;
	size_t n_dirs;
	char path[64];

	x->pidfd = cordon_pidfd_verified(info->pid, info->pid_start);
	if (x->pidfd < 0)
		return not_in_state(state->id, CORDON_STATUS_STOPPED, err);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)info->pid);
	inner = open(path, O_RDONLY | O_CLOEXEC);
	if (inner < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "opening %s", path);
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)info->pid);
	if (cordon_read_file_at(AT_FDCWD, path, &setgroups_text, NULL) == 0)
		x->deny_setgroups = strncmp(setgroups_text, "deny", 4) == 0;
	/* Still the process the pidfd names: the pid was not reused under us. */
	if (cordon_pidfd_send_signal(x->pidfd, 0) < 0)
		return not_in_state(state->id, CORDON_STATUS_STOPPED, err);
	if (sandbox_outer_userns(inner, &x->outer_userns, err) < 0)
		return -1;
	dirs = cordon_state_cgroup_dirs(state, &n_dirs);
	return open_cgroups(x, dirs, info->pid, err);
}

int cordon_container_exec_seal(const struct cordon_exec_opts *opts, struct cordon_error *err)
{
	struct cordon_state state;
	enum cordon_status st;
	int pidfd, r = 0;

	if (cordon_state_open(&state, opts->root, opts->id, false, err) < 0) {
		if (cordon_interrupted())
			return -1;
		memset(err, 0, sizeof(*err));
		return 0;
	}
	st = cordon_state_status(&state.info);
	pidfd = st == CORDON_STATUS_CREATED || st == CORDON_STATUS_RUNNING ?
			cordon_pidfd_verified(state.info.pid, state.info.pid_start) :
			-1;
	/* The process will be a cordon process inside until its execve: see self.c. */
	if (pidfd >= 0) {
		r = cordon_self_seal_for(state.info.pid, pidfd, err);
		close(pidfd);
	}
	cordon_state_close(&state);
	return r;
}

/* One report from the joiner or the process, or EOF (0); a signal ends the wait (-EINTR). */
static ssize_t report_read(int fd, struct confine_report *rep)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = cordon_wait_poll(&p, 1, -1);
	ssize_t n;

	if (r < 0)
		return r;
	do
		n = read(fd, rep, sizeof(*rep));
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* The joiner's end (it exits once it has reported); a signal ends the wait (-EINTR). */
static int joiner_reap(pid_t joiner, int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int r = pidfd >= 0 ? cordon_wait_poll(&p, 1, -1) : 0;

	if (r < 0)
		return r;
	waitpid(joiner, NULL, 0);
	return 0;
}

/*
 * A signal ended a wait of the spawn: nothing of it may go on. Neither is
 * waited for: one in a frozen cgroup (v1 holds a SIGKILL until the thaw)
 * would hold us; their parent's exit hands them to a reaper.
 */
static int spawn_interrupted(const struct exec_ctx *x, pid_t joiner, pid_t pid, const char *what,
			     struct cordon_error *err)
{
	kill(joiner, SIGKILL);
	if (pid > 0)
		kill(pid, SIGKILL);
	return cordon_interrupt_error(err, "container %s: %s", x->spec->id, what);
}

/*
 * The report pipe's EOF: execve succeeded, unless the process died before
 * it (a SIGKILL from inside the container): then it never ran, and
 * returning its pid would say it does.
 */
static int process_execed(pid_t pid, struct cordon_error *err)
{
	int r = cordon_proc_execed(pid), st = 0;

	if (r == 1)
		return 0;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -r,
					"whether the process reached execve");
	if (WIFSIGNALED(st))
		return cordon_error_set(
			err, CORDON_E_STATE, 0,
			"the process was killed by signal %d (%s) before its execve", WTERMSIG(st),
			strsignal(WTERMSIG(st)));
	return cordon_error_set(err, CORDON_E_STATE, 0,
				"the process exited with status %d before its execve",
				WEXITSTATUS(st));
}

/* Fork the joiner; returns the process's pid once execve succeeded, or -1. */
static pid_t exec_spawn(struct exec_ctx *x, int *status, struct cordon_error *err)
{
	_cleanup_close_ int rd = -1, joiner_fd = -1;
	struct confine_report rep;
	int p[2];
	pid_t joiner, pid;
	ssize_t r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
	fflush(stdout);
	fflush(stderr);
	joiner = fork();
	if (joiner < 0) {
		close(p[0]);
		close(p[1]);
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "fork");
	}
	if (joiner == 0) {
		close(p[0]);
		x->report_fd = p[1];
		exec_join(x);
	}
	close(p[1]);
	rd = p[0];
	/* Our child, not reaped: the pid is its own. */
	joiner_fd = cordon_pidfd_open(joiner);
	/*
	 * Nothing here holds the container's lock: a process the container
	 * stops or freezes before its execve holds up this command alone,
	 * until it or the container is killed, or a signal to us.
	 */
	r = report_read(rd, &rep);
	if (r == -EINTR)
		return spawn_interrupted(x, joiner, 0, "waiting for the process to join it", err);
	if (joiner_reap(joiner, joiner_fd) < 0)
		return spawn_interrupted(x, joiner, r == (ssize_t)sizeof(rep) ? rep.pid : 0,
					 "waiting for the process to join it", err);
	if (r != (ssize_t)sizeof(rep))
		return cordon_error_set(err, CORDON_E_INTERNAL, 0,
					"the process ended before it was started");
	pid = rep.pid;
	if (rep.code == CORDON_OK) {
		/* EOF: execve succeeded (the pipe is close-on-exec), or it died first; else why
		 * not. */
		r = report_read(rd, &rep);
		if (r == -EINTR)
			return spawn_interrupted(x, joiner, pid, "waiting for the process's execve",
						 err);
		/* Supervised: pid is the reaper, which never execs; the process did, or its
		 * death is the status the reaper reports. */
		if (r == 0 && x->tree)
			return pid;
		if (r == 0)
			return process_execed(pid, err) < 0 ? -1 : pid;
		/* A reaper waits for our word: its process failed, it goes. */
		if (x->tree)
			kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (r != (ssize_t)sizeof(rep))
		return cordon_error_set(err, CORDON_E_INTERNAL, 0, "the process's report was cut");
	rep.text[sizeof(rep.text) - 1] = '\0';
	*status = rep.exit_code;
	return cordon_error_set(
		err, rep.code < CORDON_CODE_COUNT ? (enum cordon_code)rep.code : CORDON_E_INTERNAL,
		rep.errnum, "%s", rep.text);
}

void sandbox_exec_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTSTP);
	for (size_t i = 0; i < sandbox_n_forwarded_signals; i++)
		sigaddset(set, sandbox_forwarded_signals[i]);
}

int cordon_container_exec_wait(pid_t pid)
{
	sigset_t set;

	sandbox_exec_signals(&set);
	for (;;) {
		siginfo_t si;
		int st, sig;

		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		sig = sigwaitinfo(&set, &si);
		if (sig <= 0 || sig == SIGCHLD)
			continue;
		if (sig == SIGTSTP) {
			/*
			 * Its group leads a session of its own, orphaned: the
			 * kernel would discard a SIGTSTP. Stopped while we are,
			 * continued when we are.
			 */
			sandbox_relay_terminal_signal(pid, SIGTSTP, true);
			sandbox_stop_self();
			sandbox_relay_terminal_signal(pid, SIGCONT, true);
		} else if (si.si_code == SI_KERNEL) {
			/* From our terminal: its whole process group would have had it. */
			sandbox_relay_terminal_signal(pid, sig, true);
		} else {
			kill(pid, sig);
			/* A process that stopped itself would hold the request to end it forever.
			 */
			if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
				kill(pid, SIGCONT);
		}
	}
}

/*
 * A session counts its running execs (its idle timeout waits while one
 * runs): this connection to its monitor says one runs, until it closes.
 * Kept, close-on-exec, for as long as cordon exec lives (the joiner closes
 * it); a detached exec lets go of it once its process runs.
 *
 * One way: the request is sent, not waited for (the round trip waited for
 * the monitor to be scheduled, 0.3-13 ms of an exec's 40-60 at load 10).
 * What makes that safe is on the monitor's side: a connection is in its
 * backlog once connect returns, the request in its queue once send does,
 * and before the idle timeout ends a session the monitor takes every
 * pending connection and request, counting a connection that has not
 * spoken yet as an exec (session.c). A session that is ending answers
 * with a refusal, read only when the spawn fails (the process then dies
 * with the session), to say why.
 */
static int session_hold = -1;

static int session_register(const struct cordon_state *state, struct cordon_error *err)
{
	uint32_t req = MONITOR_EXEC;
	int fd;

	fd = cordon_state_monitor_connect(state->dir_fd, &state->info, true);
	if (fd == -EINTR)
		return cordon_interrupt_error(err, "session %s: reaching its monitor", state->id);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, -fd, "session %s: reaching its monitor",
					state->id);
	/* EPIPE: the monitor let the connection go unread (never a request it took). */
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		int e = errno;

		close(fd);
		return cordon_error_set(err, CORDON_E_STATE, e,
					"session %s: its monitor did not take the exec (ending?)",
					state->id);
	}
	cordon_closep(&session_hold);
	session_hold = fd;
	return 0;
}

/* The spawn failed: a session that refused the exec (it is ending) says so instead. */
static void session_refusal(struct cordon_error *err)
{
	struct monitor_reply rep;
	struct pollfd p = { .fd = session_hold, .events = POLLIN };

	if (session_hold < 0 || poll(&p, 1, 0) != 1 ||
	    recv(session_hold, &rep, sizeof(rep), MSG_DONTWAIT) != (ssize_t)sizeof(rep) ||
	    rep.code == CORDON_OK)
		return;
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	memset(err, 0, sizeof(*err));
	cordon_error_set(err, CORDON_E_STATE, rep.errnum, "%s", rep.msg);
}

int sandbox_exec_start(const struct cordon_exec_opts *opts, struct exec_tree *tree, pid_t *pid_out,
		       int *status, struct cordon_error *err)
{
	struct exec_ctx x = {
		.opts = opts, .pidfd = -1, .outer_userns = -1, .report_fd = -1, .tree = tree
	};
	struct cordon_state state;
	struct cordon_spec spec;
	enum cordon_status st;
	sigset_t set, old;
	pid_t pid = -1;
	int r = -1;

	*status = CORDON_EXIT_FAILURE;
	cordon_spec_init(&spec);
	x.spec = &spec;
	/*
	 * Shared, and only while the container is looked at: the process's
	 * spawn waits on what the container controls (docs/security.md), and
	 * the pidfd and the fds opened meanwhile name what was looked at.
	 */
	if (cordon_state_open(&state, opts->root, opts->id, false, err) < 0) {
		cordon_spec_free(&spec);
		return -1;
	}
	/*
	 * Paused is refused, as crun does: the joiner would freeze on joining
	 * the frozen cgroup, holding the lock that resume needs.
	 */
	cordon_trace("exec-state");
	st = container_status(&state);
	/* Blocked before the process exists, so that none meant for it is lost. */
	sandbox_exec_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (st != CORDON_STATUS_CREATED && st != CORDON_STATUS_RUNNING)
		not_in_state(opts->id, st, err);
	else if (opts->expect_fingerprint && cordon_state_marked(&state, CORDON_STATE_NET_UPDATE))
		cordon_error_set(err, CORDON_E_NET_POLICY, 0,
				 "container %s: an update of its network policy is being applied: "
				 "refused",
				 opts->id);
	else if (opts->expect_fingerprint &&
		 strcmp(opts->expect_fingerprint, state.info.net_fingerprint) != 0)
		/* Checked under the lock a live update takes: the policy is this one until it runs. */
		cordon_error_set(err, CORDON_E_NET_POLICY, 0,
				 "container %s: its network policy is %s, not %s: refused", opts->id,
				 state.info.net_fingerprint[0] ? state.info.net_fingerprint : "none",
				 opts->expect_fingerprint);
	else if (exec_spec(&state, opts, &spec, err) == 0 && exec_outputs_safe(&spec, opts, err) == 0 &&
		 exec_target(&state, &x, err) == 0 &&
		 (state.info.kind != CORDON_KIND_SESSION || session_register(&state, err) == 0)) {
		cordon_trace("exec-spec");
		cordon_state_close(&state);
		pid = exec_spawn(&x, status, err);
		cordon_trace("exec-spawned");
		if (pid <= 0)
			session_refusal(err);
	}
	if (pid <= 0 || opts->detach)
		cordon_closep(&session_hold);
	cordon_state_close(&state);
	cordon_closep(&x.pidfd);
	cordon_closep(&x.outer_userns);
	for (size_t i = 0; i < x.n_cg; i++) {
		cordon_closep(&x.cg_procs[i]);
		cordon_closep(&x.cg_alt[i]);
	}
	cordon_spec_free(&spec);
	if (pid > 0) {
		*pid_out = pid;
		*status = 0;
		r = 0;
	}
	/* Waiting for it: the signals stay blocked for cordon_container_exec_wait. */
	if (r < 0 || opts->detach)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

int cordon_container_exec(const struct cordon_exec_opts *opts, pid_t *pid_out, int *status,
			  struct cordon_error *err)
{
	return sandbox_exec_start(opts, NULL, pid_out, status, err);
}
