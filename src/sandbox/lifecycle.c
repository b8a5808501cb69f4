// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's side of the OCI lifecycle: creating → created →
 * running → stopped, recorded in the state directory as it happens.
 *
 * `cordon run` passes through every state without waiting. The monitor
 * of `cordon create` tells the waiting create command once the sandbox
 * is created, then holds the workload (blocked before execve) until a
 * `cordon start` connects to its control socket, and answers that start
 * once execve succeeded or failed.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "sandbox-internal.h"

/* The control socket in the container's state directory, bound through the fd. */
static int listen_control(struct supervisor *sv, struct cordon_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &sv->listen_fd };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "control socket");
	/* Through /proc/self/fd: a long --root never overflows sun_path. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", sv->state->dir_fd,
		 CORDON_STATE_MONITOR_SOCKET);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0)
		return cordon_error_set(err, CORDON_E_STATE, errno, "control socket of %s",
					sv->state->id);
	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_ctl");
	for (size_t i = 0; i < MONITOR_CLIENTS; i++)
		sv->clients[i] = -1;
	sv->listen_fd = TAKE_FD(fd);
	return 0;
}

static void send_start(struct supervisor *sv)
{
	struct sync_msg go = { .type = SYNC_START };

	sv->start_sent = true;
	sync_send(sv->sync_fd, &go, NULL, 0);
	cordon_trace("start-sent");
}

/* The stdout and stderr of a caller that is answered (or gone): not ours to hold. */
static void hook_out_close(struct supervisor *sv)
{
	cordon_closep(&sv->hook_out[0]);
	cordon_closep(&sv->hook_out[1]);
}

/* The hooks of one kind with the state document in this status (0 without any). */
static int run_hooks(struct supervisor *sv, enum cordon_oci_hook_kind kind,
		     enum cordon_status status, struct cordon_error *err)
{
	_cleanup_free_ char *doc = NULL;

	if (!sv->spec->oci || !sv->spec->oci->n_hooks[kind])
		return 0;
	doc = sandbox_state_json(sv->state, status);
	return sandbox_hooks_run(sv->spec, kind, doc, sv->state->info.pid, sv->hook_out, err);
}

/*
 * prestart and createRuntime in our namespaces, createContainer in the
 * container's: its process and namespaces exist and its root is built,
 * but it is not recorded created yet, so a failure ends it as any setup
 * failure does. From here poststop runs at the end, whatever happens.
 */
static int create_hooks(struct supervisor *sv, struct cordon_error *err)
{
	static const enum cordon_oci_hook_kind kinds[] = {
		CORDON_OCI_HOOK_PRESTART,
		CORDON_OCI_HOOK_CREATE_RUNTIME,
		CORDON_OCI_HOOK_CREATE_CONTAINER,
	};

	sv->hooks_started = sv->spec->oci != NULL;
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (run_hooks(sv, kinds[i], CORDON_STATUS_CREATING, err) < 0)
			return -1;
	return 0;
}

/* startContainer (in the container, before the workload is released), then the release. */
static int start_container(struct supervisor *sv, struct cordon_error *err)
{
	/* Whatever the hooks say, there is no second start. */
	sv->start_sent = true;
	if (run_hooks(sv, CORDON_OCI_HOOK_START_CONTAINER, CORDON_STATUS_CREATED, err) < 0)
		return -1;
	send_start(sv);
	return 0;
}

/* A start that failed before the release: the container ends, stopped, with the reason. */
static void start_failed(struct supervisor *sv, const struct cordon_error *why)
{
	struct cordon_result *res = sv->result;

	res->failed = true;
	res->exit_code = CORDON_EXIT_FAILURE;
	res->error = *why;
	if (!sv->child_done)
		cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

/* poststop, once the container is gone: failures are warnings, as with runc. */
static void poststop_hooks(struct supervisor *sv)
{
	struct cordon_error err = { 0 };

	if (sv->hooks_started &&
	    run_hooks(sv, CORDON_OCI_HOOK_POSTSTOP, CORDON_STATUS_STOPPED, &err) < 0)
		cordon_warn("%s", err.msg);
}

/* Tell the waiting `cordon create` (once): created (with the init's pid) or why not. */
static void notify_creator(struct supervisor *sv, const struct cordon_error *failure)
{
	struct sync_msg msg = { .type = SYNC_CREATED, .status = (int32_t)sv->state->info.init_pid };

	if (sv->notify_fd < 0)
		return;
	if (failure) {
		msg.type = SYNC_SETUP_FAILED;
		msg.code = failure->code;
		msg.errnum = failure->errnum;
		snprintf(msg.text, sizeof(msg.text), "%s", failure->msg);
	}
	cordon_write_all(sv->notify_fd, &msg, sizeof(msg));
	cordon_closep(&sv->notify_fd);
	/* create returns: nothing of its stdio stays with us. */
	hook_out_close(sv);
}

/*
 * Answer `cordon start`: the failure, or success with an optional
 * warning (a failed poststart hook) for it to print.
 */
static void reply(int *client, const struct cordon_error *failure, const char *warning)
{
	struct monitor_reply rep = { .code = CORDON_OK };

	if (*client < 0)
		return;
	if (failure) {
		rep.code = failure->code;
		rep.errnum = failure->errnum;
		snprintf(rep.msg, sizeof(rep.msg), "%s", failure->msg);
	} else if (warning) {
		snprintf(rep.msg, sizeof(rep.msg), "%s", warning);
	}
	send(*client, &rep, sizeof(rep), MSG_NOSIGNAL);
	cordon_closep(client);
}

int lifecycle_created(struct supervisor *sv, pid_t workload, struct cordon_error *err)
{
	struct cordon_state_info *info = &sv->state->info;

	/*
	 * A plain `cordon run` (no config, session, hooks, start command, pid
	 * file or creator to tell): nothing waits for "created" but the record, so
	 * the workload is released first and recorded after, and the state
	 * file's write (milliseconds where the state root is a journaling
	 * filesystem: docs/benchmarks.md) leaves the start's critical path.
	 * Its pids and start times are read before: exact, whatever it does.
	 */
	bool release_first = !sv->spec->oci && !sv->spec->session && !sv->opts->wait_start &&
			     !sv->opts->pid_file && sv->notify_fd < 0;

	info->status = CORDON_STATUS_CREATED;
	info->pid = workload;
	info->pid_start = cordon_proc_start_time(workload);
	info->init_pid = sv->child;
	info->init_start = cordon_proc_start_time(sv->child);
	if (release_first)
		send_start(sv);
	if (create_hooks(sv, err) < 0)
		return -1;
	/*
	 * Every sandbox answers on it: start, a live update of its policy; a
	 * session's execs, and sweep.
	 */
	if (listen_control(sv, err) < 0)
		return -1;
	if (sv->spec->session && session_start(sv, err) < 0)
		return -1;
	if (sv->spec->net.enabled)
		memcpy(info->net_fingerprint, sv->result->net.fingerprint,
		       sizeof(info->net_fingerprint));
	/* Before "created" is visible: an exec must find what to confine its process by. */
	if (sv->spec->oci && sv->spec->oci->config_text &&
	    cordon_state_save_config(sv->state, sv->spec->oci->config_text,
				     sv->spec->oci->config_len, err) < 0)
		return -1;
	if (sv->spec->session) {
		_cleanup_free_ char *process = cordon_spec_session_json(sv->spec);

		if (cordon_state_save_process(sv->state, process, strlen(process), err) < 0)
			return -1;
	}
	if (cordon_state_save(sv->state, err) < 0)
		return -1;
	/* Before it is started, as runc's foreground run writes it: the container's pid 1. */
	if (sv->opts->pid_file && cordon_pid_file_write(sv->opts->pid_file, sv->child, err) < 0)
		return -1;
	sv->created = true;
	/* From here commands on this id may proceed: it is created. */
	cordon_state_unlock(sv->state);
	/* A session's create returns once its idle program runs (lifecycle_running). */
	if (!sv->spec->session)
		notify_creator(sv, NULL);
	if (!sv->opts->wait_start && !release_first)
		return start_container(sv, err);
	return 0;
}

void lifecycle_running(struct supervisor *sv)
{
	struct cordon_error err = { 0 };
	struct cordon_error hook = { 0 };

	sv->state->info.status = CORDON_STATUS_RUNNING;
	if (cordon_state_save(sv->state, &err) < 0)
		cordon_error_print(&err);
	/* Before start returns; a failure is a warning, given by `cordon start` when there is one.
	 */
	if (run_hooks(sv, CORDON_OCI_HOOK_POSTSTART, CORDON_STATUS_RUNNING, &hook) < 0 &&
	    sv->start_client < 0)
		cordon_warn("%s", hook.msg);
	reply(&sv->start_client, NULL, hook.code ? hook.msg : NULL);
	hook_out_close(sv);
	notify_creator(sv, NULL);
}

/*
 * One request and, with MONITOR_START, the caller's stdout and stderr
 * for the start-time hooks (into out; -1 where none came). The number
 * of bytes, or -1 (errno).
 */
static ssize_t recv_request(int fd, uint32_t *req, int out[2])
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = req, .iov_len = sizeof(*req) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	out[0] = out[1] = -1;
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (i < 2 && out[i] < 0)
				out[i] = got;
			else
				close(got);
		}
	}
	/* Cut short: what came is closed, the request refused. */
	if (mh.msg_flags & MSG_CTRUNC) {
		cordon_closep(&out[0]);
		cordon_closep(&out[1]);
		*req = 0;
	}
	return n;
}

/* The audit's policy event of an update: its edits as given, the new fingerprint. */
static int audit_policy(struct supervisor *sv, const char *edits, size_t len,
			struct cordon_error *err)
{
	_cleanup_free_ char *copy = NULL;
	_cleanup_free_ const char **added = NULL, **removed = NULL;
	size_t n_added = 0, n_removed = 0;
	char *save = NULL;

	if (!sv->audit)
		return 0;
	copy = cordon_xasprintf("%.*s", (int)len, edits);
	added = cordon_xcalloc(len + 1, sizeof(*added));
	removed = cordon_xcalloc(len + 1, sizeof(*removed));
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '+')
			added[n_added++] = line + 1;
		else if (line[0] == '-')
			removed[n_removed++] = line + 1;
	}
	return cordon_audit_policy(sv->audit, added, n_added, removed, n_removed,
				   sv->result->net.fingerprint, err);
}

/*
 * The update, with state.json's fingerprint "updating" while it is
 * applied: the client holds the state lock until it is answered, but it
 * may be gone before that (killed, interrupted), and an exec that
 * expects a fingerprint must then find neither the old one, no longer
 * sure to be in force, nor the new one, not yet. Refused, the old one
 * is back; in force, the new one; left half applied (the sandbox ends),
 * "updating" stays, which no exec expects.
 */
static int net_update_marked(struct supervisor *sv, const char *text, size_t size,
			     struct cordon_error *err)
{
	struct cordon_state_info *info = &sv->state->info;
	struct cordon_error save_err = { 0 };
	char old[sizeof(info->net_fingerprint)];
	int r;

	memcpy(old, info->net_fingerprint, sizeof(old));
	snprintf(info->net_fingerprint, sizeof(info->net_fingerprint), "updating");
	if (cordon_state_save(sv->state, err) < 0) {
		memcpy(info->net_fingerprint, old, sizeof(old));
		return -1;
	}
	r = sandbox_net_update(&sv->net, text, size, err);
	if (r == -1)
		memcpy(info->net_fingerprint, old, sizeof(old));
	else if (r == 0)
		memcpy(info->net_fingerprint, sv->result->net.fingerprint, sizeof(old));
	if (r != -2 && cordon_state_save(sv->state, &save_err) < 0) {
		/* A fingerprint that cannot be recorded is a policy no exec can rely on. */
		*err = save_err;
		return -2;
	}
	return r;
}

/*
 * MONITOR_NET_UPDATE: the edits in a file the client sent (a sealed
 * memfd), applied (egress/update.c), the answer the new fingerprint. Only
 * root or the sandbox's own user may ask (the socket's directory is
 * theirs alone; checked again here). A policy left half applied ends the
 * sandbox, as a failure of the gateway does.
 */
static void net_update(struct supervisor *sv, int client, int edits)
{
	struct cordon_error err = { 0 };
	_cleanup_free_ char *text = NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	size_t size = 0;
	struct stat st;
	int r = -1;

	if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid()))
		cordon_error_set(&err, CORDON_E_USAGE, EPERM, "container %s: update refused",
				 sv->state->id);
	else if (edits < 0 || fstat(edits, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
		 lseek(edits, 0, SEEK_SET) < 0)
		cordon_error_set(&err, CORDON_E_USAGE, EINVAL,
				 "container %s: an update without its changes", sv->state->id);
	else if (cordon_input_read_fd(edits, CORDON_DNSCTL_POLICY_MAX, CORDON_E_USAGE,
				      "the allowlist changes", &text, &size, &err) == 0) {
		r = sv->child_done ? -1 : net_update_marked(sv, text, size, &err);
		if (sv->child_done)
			cordon_error_set(&err, CORDON_E_STATE, 0, "container %s: it has ended",
					 sv->state->id);
		if (r == 0 && audit_policy(sv, text, size, &err) < 0)
			r = -2;
		if (r == -2) {
			struct cordon_result *res = sv->result;

			res->failed = true;
			res->exit_code = CORDON_EXIT_FAILURE;
			res->error = err;
			cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
		}
		if (r == 0) {
			cordon_closep(&edits);
			cordon_state_mark(sv->state, CORDON_STATE_NET_UPDATE, false);
			reply(&client, NULL, sv->result->net.fingerprint);
			return;
		}
	}
	cordon_closep(&edits);
	/* Refused, nothing changed: an exec may rely on the fingerprint again. */
	if (r != -2)
		cordon_state_mark(sv->state, CORDON_STATE_NET_UPDATE, false);
	reply(&client, &err, NULL);
}

/* Made by memfd_create with MFD_ALLOW_SEALING, and sealing still allowed (net_info). */
static bool unsealed_memfd(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && !(seals & F_SEAL_SEAL);
}

/*
 * MONITOR_NET_INFO: the network's live state as JSON, written into the
 * memfd the client sent, made with MFD_ALLOW_SEALING and not sealed
 * against sealing: F_GET_SEALS fails on anything not of shmem, and every
 * other shmem file (a tmpfs file, a memfd made without the flag) has
 * F_SEAL_SEAL from its creation, for good. A root supervisor thus
 * writes only into a file that exists nowhere but in the client's fds
 * (and the write goes through the client's own fd, opened for writing).
 */
static void net_info(struct supervisor *sv, int client, int out)
{
	struct cordon_error err = { 0 };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const unsigned char *buf;
	size_t size;
	yajl_gen g;

	if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid()) || out < 0 || !unsealed_memfd(out)) {
		cordon_error_set(&err, CORDON_E_USAGE, EPERM, "container %s: refused",
				 sv->state->id);
		cordon_closep(&out);
		reply(&client, &err, NULL);
		return;
	}
	g = yajl_gen_alloc(NULL);
	yajl_gen_map_open(g);
	if (sv->spec->net.enabled && sv->net.nft) {
		sandbox_json_net_live(g, &sv->net);
	} else {
		yajl_gen_string(g, (const unsigned char *)"mode", 4);
		yajl_gen_string(g, (const unsigned char *)"none", 4);
	}
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &size);
	if (ftruncate(out, 0) < 0 || pwrite(out, buf, size, 0) != (ssize_t)size)
		cordon_error_set(&err, CORDON_E_INTERNAL, errno, "container %s: writing its state",
				 sv->state->id);
	yajl_gen_free(g);
	cordon_closep(&out);
	reply(&client, err.code ? &err : NULL, NULL);
}

/*
 * A session's request: EXEC (answered, the connection kept until the
 * exec ends) or STOP (answered, then the session ends). An exec into a
 * session that is ending is refused.
 */
static void session_request(struct supervisor *sv, uint32_t req, int fd)
{
	struct monitor_reply rep = { .code = CORDON_OK };
	struct cordon_error err = { 0 };
	int r;

	if (req == MONITOR_STOP) {
		reply(&fd, NULL, NULL);
		session_end(sv, "cordon sweep asked (its owner is gone, or its lifetime passed)");
		return;
	}
	if (sv->session_ending || sv->child_done) {
		cordon_error_set(&err, CORDON_E_STATE, 0, "session %s is ending", sv->state->id);
		reply(&fd, &err, NULL);
		return;
	}
	/*
	 * The exec does not wait for the answer (exec.c): it runs whatever is
	 * said here. One beyond the table is not refused but cannot be seen to
	 * end: the idle timeout is off for good (the lifetime cap holds).
	 */
	r = session_exec_begin(sv, fd);
	if (r < 0) {
		if (!sv->session_untracked)
			cordon_debug("session %s: more than %d execs at once: its idle timeout is "
				     "off from now on",
				     sv->state->id, SESSION_EXECS_MAX);
		sv->session_untracked = true;
		reply(&fd, NULL, NULL);
		return;
	}
	send(fd, &rep, sizeof(rep), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A client's request, read once it is there (the socket is SOCK_SEQPACKET). */
static void client_request(struct supervisor *sv, int *slot)
{
	struct cordon_error err = { 0 };
	uint32_t req = 0;
	int out[2];
	ssize_t n = recv_request(*slot, &req, out);
	int fd;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return; /* not yet: the loop brings us back */
	/* Out of the table before anything that can close it (the loop's lifetime rule). */
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, *slot, NULL);
	fd = *slot;
	*slot = -1;
	if (n == (ssize_t)sizeof(req) && req == MONITOR_NET_INFO) {
		cordon_closep(&out[1]);
		net_info(sv, fd, out[0]);
		return;
	}
	if (n == (ssize_t)sizeof(req) && req == MONITOR_NET_UPDATE) {
		cordon_closep(&out[1]);
		net_update(sv, fd, out[0]);
		return;
	}
	if (n == (ssize_t)sizeof(req) && (req == MONITOR_EXEC || req == MONITOR_STOP) &&
	    sv->spec->session) {
		cordon_closep(&out[0]);
		cordon_closep(&out[1]);
		session_request(sv, req, fd);
		return;
	}
	if (n != (ssize_t)sizeof(req) || req != MONITOR_START) {
		cordon_closep(&out[0]);
		cordon_closep(&out[1]);
		cordon_error_set(&err, CORDON_E_USAGE, 0, "unknown request to the monitor");
		reply(&fd, &err, NULL);
		return;
	}
	if (sv->start_sent || sv->start_client >= 0 || sv->child_done) {
		cordon_closep(&out[0]);
		cordon_closep(&out[1]);
		cordon_error_set(&err, CORDON_E_STATE, 0, "container %s: already started",
				 sv->state->id);
		reply(&fd, &err, NULL);
		return;
	}
	sv->start_client = fd;
	/* startContainer and poststart write where `cordon start`'s output goes, as runc's. */
	hook_out_close(sv);
	sv->hook_out[0] = out[0];
	sv->hook_out[1] = out[1];
	if (start_container(sv, &err) < 0) {
		reply(&sv->start_client, &err, NULL);
		hook_out_close(sv);
		start_failed(sv, &err);
	}
}

static void client_drop(struct supervisor *sv, int *slot)
{
	if (*slot < 0)
		return;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, *slot, NULL);
	cordon_closep(slot);
}

/*
 * The oldest connection gives way to a new one. Its reading side shut
 * first: a request already sent is taken (an exec does not wait to be
 * answered: it must not be dropped unread), one sent after fails at the
 * sender (EPIPE), so no request is ever lost unseen.
 */
static void client_evict(struct supervisor *sv, int *slot)
{
	char c;

	if (*slot < 0)
		return;
	shutdown(*slot, SHUT_RD);
	if (recv(*slot, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
		client_request(sv, slot);
	client_drop(sv, slot);
}

enum peer {
	PEER_ALLOWED,
	PEER_REFUSED,
	PEER_GONE, /* of a trusted uid, but gone before it was looked at */
};

/*
 * Only host root and the supervisor's own user may speak to it. The state
 * directory's mode says the same, but a directory is only as private as
 * what holds it: a workspace that contains the state root lets a rootful
 * sandbox's workload (its files are host root's there, through the
 * idmapped mount) reach every monitor socket below it.
 */
static enum peer peer_allowed(int fd, pid_t *pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[40];
	struct stat ours, theirs;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid()) || cred.pid <= 0)
		return PEER_REFUSED;
	/*
	 * And in the supervisor's own pid namespace, as every cordon command
	 * is: a workload that has the trusted uid (rootless, --userns host)
	 * lives in a sandbox's. A peer gone already cannot be looked at, and
	 * is refused too.
	 */
	*pid = cred.pid;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)cred.pid);
	if (stat(path, &theirs) < 0)
		return errno == ENOENT ? PEER_GONE : PEER_REFUSED;
	return stat("/proc/self/ns/pid", &ours) == 0 && ours.st_dev == theirs.st_dev &&
			       ours.st_ino == theirs.st_ino ?
		       PEER_ALLOWED :
		       PEER_REFUSED;
}

/*
 * A refused peer that was gone may have been an update's client, killed
 * after it marked the update and before we looked (its request is then
 * never read). If the mark is that process's, nothing will remove it but
 * us, and until then every exec that expects a fingerprint is refused:
 * the requests already waiting in the slots are taken first (an update
 * among them is applied and clears the mark as usual), then the mark.
 * Its pid is the kernel's word (SO_PEERCRED) and the process is gone, so
 * no live client's mark is ever touched.
 */
static void gone_peer(struct supervisor *sv, pid_t pid)
{
	if (cordon_state_mark_owner(sv->state, CORDON_STATE_NET_UPDATE) != pid)
		return;
	for (size_t i = 0; i < MONITOR_CLIENTS; i++)
		if (sv->clients[i] >= 0)
			client_request(sv, &sv->clients[i]);
	if (cordon_state_mark_owner(sv->state, CORDON_STATE_NET_UPDATE) == pid)
		cordon_state_mark(sv->state, CORDON_STATE_NET_UPDATE, false);
}

/*
 * New connections wait in a slot for their request; none is read here, so
 * a client that connects and says nothing stalls nothing (it held the whole
 * loop for a second each before). A connection of anyone else is closed
 * at once: it takes no slot, and a session's idle clock never counts it.
 */
static void accept_clients(struct supervisor *sv)
{
	for (;;) {
		int fd = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct epoll_event ev = { .events = EPOLLIN };
		enum peer peer;
		pid_t pid = 0;
		int *slot;

		if (fd < 0)
			return;
		peer = peer_allowed(fd, &pid);
		if (peer != PEER_ALLOWED) {
			close(fd);
			if (peer == PEER_GONE)
				gone_peer(sv, pid);
			continue;
		}
		slot = &sv->clients[sv->clients_next++ % MONITOR_CLIENTS];
		client_evict(sv, slot);
		ev.data.ptr = slot;
		if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		*slot = fd;
	}
}

size_t lifecycle_clients_pending(const struct supervisor *sv)
{
	size_t n = 0;

	for (size_t i = 0; sv->listen_fd >= 0 && i < MONITOR_CLIENTS; i++)
		n += sv->clients[i] >= 0;
	return n;
}

void lifecycle_take_pending(struct supervisor *sv)
{
	if (sv->listen_fd < 0)
		return;
	accept_clients(sv);
	for (size_t i = 0; i < MONITOR_CLIENTS; i++)
		if (sv->clients[i] >= 0)
			client_request(sv, &sv->clients[i]);
}

bool lifecycle_dispatch(struct supervisor *sv, void *tag)
{
	bool ours = false;

	if (session_dispatch(sv, tag))
		return true;
	if (sv->listen_fd < 0)
		return false;
	if (tag == &sv->listen_fd) {
		accept_clients(sv);
		ours = true;
	}
	for (size_t i = 0; !ours && i < MONITOR_CLIENTS; i++) {
		if (tag == &sv->clients[i]) {
			if (sv->clients[i] >= 0)
				client_request(sv, &sv->clients[i]);
			ours = true;
		}
	}
	/* A connection came or went: a session's idle clock counts it (session.c). */
	if (ours)
		session_rearm(sv);
	return ours;
}

void lifecycle_finish(struct supervisor *sv)
{
	struct cordon_result *res = sv->result;
	struct cordon_state *state = sv->state;
	struct cordon_error ended = { 0 };
	const struct cordon_error *why = &res->error;

	if (!res->failed) {
		cordon_error_set(&ended, CORDON_E_STATE, 0,
				 "container %s: exited with status %d before it was started",
				 state->id, res->exit_code);
		why = &ended;
	}
	/* A container that stays (create's) gets its poststop at `cordon delete`. */
	if (!sv->created || !state->info.kept)
		poststop_hooks(sv);
	notify_creator(sv, why);
	reply(&sv->start_client, why, NULL);
	hook_out_close(sv);
	session_finish(sv);
	if (sv->listen_fd >= 0) {
		for (size_t i = 0; i < MONITOR_CLIENTS; i++)
			client_drop(sv, &sv->clients[i]);
		cordon_closep(&sv->listen_fd);
		if (state->dir_fd >= 0)
			unlinkat(state->dir_fd, CORDON_STATE_MONITOR_SOCKET, 0);
	}
	if (state->root_fd < 0)
		return; /* the id was never claimed */
	if (!sv->created || !state->info.kept) {
		cordon_state_remove(state);
		return;
	}
	state->info.status = CORDON_STATUS_STOPPED;
	state->info.has_exit = true;
	state->info.exit_status = res->exit_code;
	if (cordon_state_save(state, &ended) < 0)
		cordon_error_print(&ended);
	cordon_state_close(state);
}
