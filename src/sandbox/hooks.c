// SPDX-License-Identifier: Apache-2.0
/*
 * The config's hooks (runtime-spec "POSIX-platform Hooks", docs/oci.md
 * "Hooks"). A hook is a child process: argv the hook's args (or its
 * path alone), envp its env (without one: ours for a hook on the host,
 * none in the container), stdin the container's state document, stdout
 * and stderr ours (or the caller's the supervisor holds). Where it runs:
 *
 *   prestart, createRuntime, poststart, poststop
 *       the runtime's namespaces: a child of ours, execve(path)
 *   createContainer
 *       a helper copies path here (it names a host file) into a sealed
 *       memfd, enters the container's namespaces through its workload
 *       (U1 first when we are not root), clones the hook as a child of
 *       ours (CLONE_PARENT, so that it is in the container's pid
 *       namespace) and exits; the hook execs the copy it inherited
 *       (execveat AT_EMPTY_PATH: not close-on-exec, so that a #!
 *       script's interpreter can open /dev/fd/N, which the container's
 *       /proc resolves; the host file itself is never within reach)
 *   startContainer
 *       the same, but path is looked up in the container's root
 *
 * A report pipe (close-on-exec) says why a hook could not be started;
 * EOF means it runs. A hook past its timeout is killed (SIGKILL) and
 * counts as failed.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "sandbox-internal.h"

/* Over the report pipe: the hook's host pid (from the helper), or why it could not run. */
struct hook_report {
	int32_t pid;
	int32_t errnum; /* 0: no failure */
	char step[160];
};

/* One hook to run. */
/* What the container sees of a hook's helper, and of the hook before its execve. */
#define HOOK_TITLE "cordon-hook"

struct hook_job {
	const struct cordon_spec *spec;
	enum cordon_oci_hook_kind kind;
	const struct cordon_oci_hook *hook;
	int stdin_fd;	  /* the state document */
	const int *out;	  /* stdout, stderr (-1: ours), or NULL */
	int report_fd;	  /* the pipe's write end, in the children */
	int pidfd;	  /* container hooks: the workload's, to join through */
	int outer_userns; /* container hooks: U1 to enter first, or -1 */
};

static bool in_container(enum cordon_oci_hook_kind kind)
{
	return kind == CORDON_OCI_HOOK_CREATE_CONTAINER || kind == CORDON_OCI_HOOK_START_CONTAINER;
}

static _Noreturn void report_fail(int report_fd, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static _Noreturn void report_fail(int report_fd, int errnum, const char *fmt, ...)
{
	struct hook_report rep = { .errnum = errnum ? errnum : EIO };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep.step, sizeof(rep.step), fmt, ap);
	va_end(ap);
	cordon_write_all(report_fd, &rep, sizeof(rep));
	_exit(CORDON_EXIT_FAILURE);
}

/* The state on a sealed-size memory file: a hook may read it at its own pace. */
static int state_stdin(const char *state, struct cordon_error *err)
{
	_cleanup_close_ int fd = memfd_create("cordon-state", MFD_CLOEXEC);
	int r;

	if (fd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "memfd_create");
	r = cordon_write_all(fd, state, strlen(state));
	if (r < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, r < 0 ? -r : errno,
					"writing the state for a hook");
	return TAKE_FD(fd);
}

/*
 * In the hook process, before execve: the supervisor's blocked signals
 * and handlers are not the hook's, nor are its fds (but keep_fd).
 */
static void hook_prepare(const struct hook_job *j, int keep_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	/*
	 * Not in the caller's process group or session (a container hook
	 * may run the container's code: its interpreter, its loader). A
	 * fresh pid: it cannot fail.
	 */
	setsid();
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(j->stdin_fd, STDIN_FILENO) < 0)
		report_fail(j->report_fd, errno, "stdin");
	for (int i = 0; j->out && i < 2; i++)
		if (j->out[i] >= 0 && dup2(j->out[i], STDOUT_FILENO + i) < 0)
			report_fail(j->report_fd, errno, i ? "stderr" : "stdout");
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		report_fail(j->report_fd, errno, "close_range");
	if (keep_fd >= 0 && fcntl(keep_fd, F_SETFD, 0) < 0)
		report_fail(j->report_fd, errno, "fcntl");
}

static char *const *hook_argv(const struct cordon_oci_hook *h, char *fallback[2])
{
	if (h->args && h->args[0])
		return h->args;
	fallback[0] = h->path;
	fallback[1] = NULL;
	return fallback;
}

/*
 * prestart, createRuntime, poststart, poststop: a child of ours, where we
 * are. Without an env of its own the hook gets ours (runc and crun pass
 * the runtime's environment: PATH, XDG_RUNTIME_DIR); with one, exactly
 * that one.
 */
static pid_t spawn_here(struct hook_job *j, int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	char *argv0[2];
	pid_t pid = cordon_clone3(&args, sizeof(args));

	if (pid != 0) {
		int e = errno;

		cordon_closep(&j->report_fd);
		return pid < 0 ? -e : pid;
	}
	hook_prepare(j, -1);
	execve(j->hook->path, hook_argv(j->hook, argv0), j->hook->env ? j->hook->env : environ);
	report_fail(j->report_fd, errno, "execve");
}

/* The hook, in the container's namespaces: execs exec_fd (createContainer) or the path there. */
static _Noreturn void container_hook(const struct hook_job *j, int exec_fd)
{
	static char *const no_env[] = { NULL };
	char *const *envp = j->hook->env ? j->hook->env : no_env;
	char *argv0[2];

	hook_prepare(j, exec_fd);
	if (exec_fd >= 0)
		execveat(exec_fd, "", hook_argv(j->hook, argv0), envp, AT_EMPTY_PATH);
	else
		execve(j->hook->path, hook_argv(j->hook, argv0), envp);
	/* The file is the host's, but its interpreter or dynamic loader is the container's. */
	if (exec_fd >= 0 && errno == ENOENT)
		report_fail(j->report_fd, errno,
			    "execveat (its #! interpreter or ELF loader is looked up in the "
			    "container's root)");
	report_fail(j->report_fd, errno, exec_fd >= 0 ? "execveat" : "execve in the container");
}

/* The helper: open, join, clone the hook as our parent's child, report its pid. */
static _Noreturn void container_helper(const struct hook_job *j)
{
	struct clone_args args = { .flags = CLONE_PARENT };
	struct hook_report rep = { 0 };
	struct cordon_error err = { 0 };
	int keep[] = { j->report_fd,
		       j->stdin_fd,
		       j->pidfd,
		       j->outer_userns,
		       j->out ? j->out[0] : -1,
		       j->out ? j->out[1] : -1 };
	int exec_fd = -1, r;
	pid_t pid;

	/* Nothing in the container may read or trace us while we hold what we hold. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		report_fail(j->report_fd, errno, "PR_SET_DUMPABLE, PR_SET_PDEATHSIG");
	/*
	 * The supervisor's fds never enter the container: a path the hook's
	 * execve walks there could lead through /proc/self/fd back out.
	 */
	r = cordon_close_fds_except(3, keep, ARRAY_SIZE(keep));
	if (r < 0)
		report_fail(j->report_fd, -r, "closing the supervisor's fds");
	r = cordon_proc_title_hide(HOOK_TITLE);
	if (r < 0)
		report_fail(j->report_fd, -r, "hiding the supervisor's command line");
	/*
	 * createContainer's path names a host file: read before we leave the
	 * host's root, into a sealed copy. The hook runs the copy, never the
	 * file: its fd stays open across execve (a #! interpreter opens
	 * /dev/fd/N), and a loader or interpreter of the container's that
	 * reopened the host file through /proc/self/fd or /proc/self/exe
	 * could write it wherever the container's ids reach its owner.
	 */
	if (j->kind == CORDON_OCI_HOOK_CREATE_CONTAINER) {
		_cleanup_close_ int file = open(j->hook->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		if (file < 0)
			report_fail(j->report_fd, errno, "open (to copy it into the container)");
		exec_fd = cordon_sealed_copy(file, "cordon-hook", false, MFD_CLOEXEC);
		if (exec_fd < 0)
			report_fail(j->report_fd, -exec_fd,
				    "a sealed copy (the path must be a regular file)");
	}
	if (sandbox_join_container(j->spec, j->pidfd, j->outer_userns, &err) < 0)
		report_fail(j->report_fd, err.errnum, "%s", err.msg);
	/* A pid namespace applies to children: the hook is one, and ours (the supervisor's). */
	pid = cordon_clone3(&args, sizeof(args));
	if (pid < 0)
		report_fail(j->report_fd, errno, "clone");
	if (pid == 0)
		container_hook(j, exec_fd);
	rep.pid = pid;
	cordon_write_all(j->report_fd, &rep, sizeof(rep));
	_exit(0);
}

/*
 * Every report until EOF (the helper gone, the hook exec'd or dead): the
 * hook's pid from the helper, and the first failure of either. They
 * may come in any order: the hook can fail before the helper writes.
 */
static void read_reports(int rd, pid_t *pid, struct hook_report *fail)
{
	for (;;) {
		struct hook_report m;
		ssize_t r = read(rd, &m, sizeof(m));

		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(m))
			return;
		if (m.errnum && !fail->errnum)
			*fail = m;
		else if (!m.errnum && m.pid > 0)
			*pid = m.pid;
	}
}

/*
 * createContainer, startContainer: the hook is a child of ours (so its
 * pid cannot be reused before we reap it), its pid from the helper's
 * report. Returns 0 when there is none (why in *fail).
 */
static pid_t spawn_in_container(struct hook_job *j, int report_rd, int *pidfd,
				struct hook_report *fail)
{
	pid_t helper = fork(), pid = 0;

	if (helper == 0)
		container_helper(j);
	/* Ours closed: a helper that dies without a word is EOF, not a hang. */
	cordon_closep(&j->report_fd);
	if (helper < 0)
		return -errno;
	read_reports(report_rd, &pid, fail);
	waitpid(helper, NULL, 0);
	if (pid == 0) {
		if (!fail->errnum)
			return -EIO;
		return 0;
	}
	*pidfd = cordon_pidfd_open(pid);
	if (*pidfd < 0) {
		int e = errno;

		waitpid(pid, NULL, 0);
		return -e;
	}
	return pid;
}

enum hook_end { HOOK_ENDED, HOOK_TIMED_OUT, HOOK_INTERRUPTED };

/*
 * Until it ends, or timeout_s (0: none) passes, or a signal ends the wait
 * of a command (cordon delete's poststop hooks): then SIGKILL. Its wait
 * status in *status; enum hook_end, or -errno.
 */
static int hook_wait(int pidfd, uint32_t timeout_s, int *status)
{
	uint64_t deadline = cordon_now_mono_us() + (uint64_t)timeout_s * 1000000;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	enum hook_end end = HOOK_ENDED;
	siginfo_t si = { 0 };

	for (;;) {
		uint64_t now = cordon_now_mono_us();
		int64_t left_ms = now >= deadline ? 0 : (int64_t)((deadline - now + 999) / 1000);
		int wait_ms = left_ms > INT32_MAX ? INT32_MAX : (int)left_ms;
		int n = cordon_wait_poll(&p, 1, timeout_s ? wait_ms : -1);

		if (n > 0)
			break;
		if (n == 0 && left_ms > INT32_MAX)
			continue;
		if (n < 0 && n != -EINTR)
			return n;
		end = n == 0 ? HOOK_TIMED_OUT : HOOK_INTERRUPTED;
		cordon_pidfd_send_signal(pidfd, SIGKILL);
		break;
	}
	while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return -errno;
	*status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status & 0x7f;
	return end;
}

/* Why a hook that ran failed, or 0. */
static int hook_outcome(const char *name, int status, int end, uint32_t timeout_s,
			struct cordon_error *err)
{
	if (end == HOOK_TIMED_OUT)
		return cordon_error_set(err, CORDON_E_HOOK, 0, "%s: timed out after %u s (killed)",
					name, timeout_s);
	if (end == HOOK_INTERRUPTED)
		return cordon_interrupt_error(err, "%s: waiting for it (killed)", name);
	if (WIFSIGNALED(status))
		return cordon_error_set(err, CORDON_E_HOOK, 0, "%s: killed by signal %d (%s)", name,
					WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status))
		return cordon_error_set(err, CORDON_E_HOOK, 0, "%s: exited with status %d", name,
					WEXITSTATUS(status));
	return 0;
}

/* Spawn (here or in the container), learn whether it runs, wait for it. */
static int hook_run_one(struct hook_job *j, const char *name, struct cordon_error *err)
{
	struct hook_report rep = { 0 };
	_cleanup_close_ int rd = -1, pidfd = -1;
	int p[2], status = 0, end;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "%s: pipe", name);
	rd = p[0];
	j->report_fd = p[1];
	fflush(stdout);
	fflush(stderr);
	pid = in_container(j->kind) ? spawn_in_container(j, rd, &pidfd, &rep) :
				      spawn_here(j, &pidfd);
	if (pid < 0)
		return cordon_error_set(err, CORDON_E_HOOK, (int)-pid, "%s: starting it", name);
	/* EOF: execve succeeded (the pipe is close-on-exec); else why not. */
	if (!in_container(j->kind))
		read_reports(rd, &pid, &rep);
	if (rep.errnum) {
		rep.step[sizeof(rep.step) - 1] = '\0';
		/* Reaped, also in the container: its pid namespace's end waits for that. */
		if (pidfd >= 0)
			while (waitid(P_PIDFD, (id_t)pidfd, &(siginfo_t){ 0 }, WEXITED) < 0 &&
			       errno == EINTR)
				;
		return cordon_error_set(err, CORDON_E_HOOK, rep.errnum, "%s: %s", name, rep.step);
	}
	end = hook_wait(pidfd, j->hook->timeout_s, &status);
	if (end < 0)
		return cordon_error_set(err, CORDON_E_HOOK, -end, "%s: waiting for it", name);
	return hook_outcome(name, status, end, j->hook->timeout_s, err);
}

/* The workload's pidfd and, when we are not root (rootless), U1 to enter first. */
static int container_target(struct hook_job *j, pid_t workload, struct cordon_error *err)
{
	_cleanup_close_ int inner = -1;
	char path[64];

	j->pidfd = cordon_pidfd_open(workload);
	if (j->pidfd < 0)
		return cordon_error_set(err, CORDON_E_HOOK, errno,
					"the container's process %d is gone", (int)workload);
	/*
	 * Always through the sandbox's user namespace, U1, even as host root:
	 * the hook's interpreter, loader and libraries (or, for startContainer,
	 * the hook itself) come from the container's root, which is not
	 * trusted, so it runs with the sandbox root's privileges, never the host's.
	 */
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)workload);
	inner = open(path, O_RDONLY | O_CLOEXEC);
	if (inner < 0)
		return cordon_error_set(err, CORDON_E_HOOK, errno, "opening %s", path);
	return sandbox_outer_userns(inner, &j->outer_userns, err);
}

/* Append one more failure of a kind whose failures are only warnings. */
static void add_failure(struct cordon_error *all, const struct cordon_error *one, int n)
{
	char text[sizeof(one->msg)];
	size_t len;

	cordon_error_message(one, text, sizeof(text));
	if (n == 0) {
		cordon_error_set(all, CORDON_E_HOOK, 0, "%s", text);
		return;
	}
	len = strlen(all->msg);
	snprintf(all->msg + len, sizeof(all->msg) - len, "; %s", text);
}

int sandbox_hooks_run(const struct cordon_spec *spec, enum cordon_oci_hook_kind kind,
		      const char *state, pid_t workload, const int out[2], struct cordon_error *err)
{
	const struct cordon_oci *oci = spec->oci;
	bool fatal = kind != CORDON_OCI_HOOK_POSTSTART && kind != CORDON_OCI_HOOK_POSTSTOP;
	struct hook_job j = {
		.spec = spec, .kind = kind, .out = out, .pidfd = -1, .outer_userns = -1
	};
	int failed = 0, r = 0;

	if (!oci || !oci->n_hooks[kind])
		return 0;
	if (in_container(kind) && container_target(&j, workload, err) < 0)
		r = cordon_error_wrap(err, "hooks.%s", cordon_oci_hook_name(kind));
	/* Once a signal ended a command's wait for one, the others are not started. */
	for (size_t i = 0; r == 0 && i < oci->n_hooks[kind] && !cordon_interrupted(); i++) {
		struct cordon_error one = { 0 };
		_cleanup_free_ char *name = NULL;

		j.hook = &oci->hooks[kind][i];
		name = cordon_xasprintf("hooks.%s[%zu] %s", cordon_oci_hook_name(kind), i,
					j.hook->path);
		cordon_debug("running %s", name);
		j.stdin_fd = state_stdin(state, &one);
		if (j.stdin_fd >= 0) {
			hook_run_one(&j, name, &one);
			cordon_closep(&j.stdin_fd);
		}
		if (one.code == CORDON_OK)
			continue;
		if (fatal) {
			*err = one;
			r = -1;
		} else {
			add_failure(err, &one, failed++);
		}
	}
	cordon_closep(&j.pidfd);
	cordon_closep(&j.outer_userns);
	return r < 0 || failed ? -1 : 0;
}
