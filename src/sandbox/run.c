// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor: creates the sandbox, drives its setup, then runs one
 * epoll loop over the init's pidfd, a signalfd, a timerfd and (when output
 * is counted) the workload's stdout/stderr pipes.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "cordon/state.h"
#include "sandbox-internal.h"

/*
 * The network namespace is not among them: the workload creates its own,
 * together with its nested user namespace, so that it is owned there and
 * capabilities granted with --cap-add (NET_RAW, NET_BIND_SERVICE) work in
 * it. See child.c. Nor is the cgroup namespace: the init creates it once
 * it is in the sandbox's cgroups, so that it is rooted there.
 */
#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC)

static int block_signals(sigset_t *old, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGPIPE);
	sigaddset(set, SIGTSTP);
	/* The caller's terminal (relay.c): resumed, resized; read in the background: EIO. */
	sigaddset(set, SIGCONT);
	sigaddset(set, SIGWINCH);
	sigaddset(set, SIGTTIN);
	for (size_t i = 0; i < sandbox_n_forwarded_signals; i++)
		sigaddset(set, sandbox_forwarded_signals[i]);
	return sigprocmask(SIG_BLOCK, set, old);
}

/* Our fds are tagged with the address of the field holding them; the DNS proxy tags its own. */
static int epoll_add(int epfd, int *fd, struct cordon_error *err)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = fd };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, *fd, &ev) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_ctl");
	return 0;
}

static int arm_timer(int timerfd, uint64_t ms)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(ms % 1000) * 1000000 },
	};

	if (ms == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(timerfd, 0, &its, NULL);
}

static void kill_init(struct supervisor *sv)
{
	if (sv->pidfd >= 0 && !sv->child_done)
		cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

/* Our end of the init's pty: its output joins stdout's relay, our input goes to it. */
static bool pty_start(struct supervisor *sv)
{
	struct cordon_error *err = &sv->result->error;

	if (relay_pty_start(&sv->relay, &sv->out[0].fd, err) < 0)
		return false;
	if (epoll_add(sv->epfd, &sv->out[0].fd, err) < 0)
		return false;
	relay_attach(&sv->relay, sv->epfd);
	return true;
}

/* --- the handshake with the init (architecture.md, "The handshake") ------------ */

/* The run fails for err's reason (unless it already failed) and the init is ended. */
static void fail_run(struct supervisor *sv, const struct cordon_error *err)
{
	struct cordon_result *res = sv->result;

	if (!res->failed)
		res->error = *err;
	res->failed = true;
	res->exit_code = CORDON_EXIT_FAILURE;
	kill_init(sv);
}

/* The gateway's fds the loop watches: the uplink's pasta, the host's addresses, the proxy. */
static int watch_gateway(struct supervisor *sv, struct cordon_error *err)
{
	struct sandbox_net *n = &sv->net;

	if (n->pasta_pidfd >= 0 && epoll_add(sv->epfd, &n->pasta_pidfd, err) < 0)
		return -1;
	if (n->addr_watch >= 0 && epoll_add(sv->epfd, &n->addr_watch, err) < 0)
		return -1;
	if (n->proxy_ctl >= 0 && (epoll_add(sv->epfd, &n->proxy_ctl, err) < 0 ||
				  epoll_add(sv->epfd, &n->proxy_sockets, err) < 0 ||
				  epoll_add(sv->epfd, &n->proxy_pidfd, err) < 0))
		return -1;
	return 0;
}

/*
 * SYNC_NET: the gateway is ours to finish (egress/egress.c): the proxy, the uplink,
 * the ruleset. SYNC_UPLINK goes once the proxy is READY (handle_proxy),
 * at once without one.
 */
static void on_gateway(struct supervisor *sv, const struct sync_msg *msg, int *fds)
{
	struct cordon_error err = { 0 };

	cordon_trace("gateway-recv");
	if (sandbox_net_gateway(&sv->net, sv->plan, fds, &err) < 0 ||
	    /* The proxy works for the sandbox: its limits hold it too. */
	    (sv->net.proxy_pid > 0 &&
	     cordon_cgroup_attach(&sv->cgroup, sv->net.proxy_pid, &err) < 0) ||
	    watch_gateway(sv, &err) < 0 ||
	    (sv->net.proxy_ctl < 0 && sandbox_net_release(&sv->net, sv->sync_fd, &err) < 0))
		fail_run(sv, &err);
}

static void on_created(struct supervisor *sv, const struct sync_msg *msg, int *fds)
{
	struct cordon_result *res = sv->result;

	if (sv->created)
		return;
	cordon_trace("created-recv");
	/* -t: the pty is ready before the workload is released (its size, raw mode). */
	if (sv->relay.console >= 0 && !pty_start(sv)) {
		res->failed = true;
		res->exit_code = CORDON_EXIT_FAILURE;
		kill_init(sv);
		return;
	}
	if (lifecycle_created(sv, (pid_t)msg->status, &res->error) < 0) {
		/* Not recorded, so not startable: end it, the error stands. */
		res->failed = true;
		res->exit_code = CORDON_EXIT_FAILURE;
		kill_init(sv);
	}
}

static void on_running(struct supervisor *sv, const struct sync_msg *msg, int *fds)
{
	cordon_trace("running-recv");
	lifecycle_running(sv);
}

static void on_exited(struct supervisor *sv, const struct sync_msg *msg, int *fds)
{
	cordon_trace("exited-recv");
	sv->have_exit = true;
	sv->workload_status = msg->status;
}

/* The init's own failure is the run's reason, whatever the supervisor saw since. */
static void on_failed(struct supervisor *sv, const struct sync_msg *msg, int *fds)
{
	struct cordon_result *res = sv->result;

	res->failed = true;
	res->exit_code = msg->type == SYNC_EXEC_FAILED ? msg->status : CORDON_EXIT_FAILURE;
	cordon_error_set(&res->error,
			 msg->code < CORDON_CODE_COUNT ? (enum cordon_code)msg->code :
							 CORDON_E_INTERNAL,
			 msg->errnum, "%s", msg->text);
}

/*
 * What the init may send, with exactly how many fds, and what the
 * supervisor does with it: its half of the handshake, in the order the
 * messages come. Anything else breaks the protocol and ends the run.
 */
static const struct init_message {
	enum sync_type type;
	size_t n_fds;
	void (*handle)(struct supervisor *sv, const struct sync_msg *msg, int *fds);
} init_messages[] = {
	{ SYNC_NET, SYNC_NET_FDS, on_gateway }, { SYNC_CREATED, 0, on_created },
	{ SYNC_RUNNING, 0, on_running },	{ SYNC_EXITED, 0, on_exited },
	{ SYNC_SETUP_FAILED, 0, on_failed },	{ SYNC_EXEC_FAILED, 0, on_failed },
};

static void drain_sync(struct supervisor *sv)
{
	for (;;) {
		struct sync_msg msg;
		int fds[SYNC_NET_FDS];
		size_t n_fds = ARRAY_SIZE(fds);
		const struct init_message *row = NULL;
		ssize_t r = sync_recv_nowait(sv->sync_fd, &msg, fds, &n_fds);

		if (r == 0 || r == -EAGAIN || r == -EINTR)
			return;
		for (size_t i = 0; r > 0 && i < ARRAY_SIZE(init_messages); i++)
			if (init_messages[i].type == msg.type)
				row = &init_messages[i];
		if (!row || row->n_fds != n_fds ||
		    (row->type == SYNC_NET && !sv->spec->net.enabled)) {
			struct cordon_error err = { 0 };

			for (size_t i = 0; i < n_fds; i++)
				close(fds[i]);
			cordon_error_set(
				&err, CORDON_E_INTERNAL, r < 0 ? (int)-r : EPROTO,
				"the sandbox init broke the protocol (message %u, %zu fds)",
				r > 0 ? msg.type : 0, n_fds);
			fail_run(sv, &err);
			if (r < 0)
				return;
			continue;
		}
		row->handle(sv, &msg, fds);
	}
}

/*
 * Output the supervisor relays never holds its loop: a reader that stops
 * reading (a pipe to a pager left at its prompt, a terminal stopped with
 * ^S) would otherwise keep it in write(), and --timeout, signals to
 * relay and the DNS proxy's admits would wait too. What dest does not
 * take at once is kept, the pipe is left unread (the workload then waits
 * on its full pipe, as it would writing to the reader directly) and dest
 * is watched for room. Once timed out, output is passed on only where
 * there is room at once, and the rest dropped.
 */

/* Write what dest takes now: a pipe or terminal with room takes a chunk of 4096 whole. */
static size_t write_now(struct output *o, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len && !o->dest_gone) {
		struct pollfd p = { .fd = o->dest, .events = POLLOUT };
		size_t chunk = len - done < 4096 ? len - done : 4096;
		ssize_t w;

		if (poll(&p, 1, 0) < 0 && errno == EINTR)
			continue;
		if (p.revents & (POLLERR | POLLNVAL)) {
			o->dest_gone = true;
			break;
		}
		if (!(p.revents & (POLLOUT | POLLHUP)))
			break;
		w = o->dest_is_socket ?
			    send(o->dest, buf + done, chunk, MSG_DONTWAIT | MSG_NOSIGNAL) :
			    write(o->dest, buf + done, chunk);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			o->dest_gone = true; /* EPIPE and the like: nobody reads any more */
			break;
		}
		done += (size_t)w;
	}
	return o->dest_gone ? len : done;
}

/* Stop reading o's pipe and wait for room in dest; or, where dest cannot be watched, write on. */
static void output_wait(struct supervisor *sv, struct output *o)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = &o->dest };

	if (epoll_ctl(sv->epfd, EPOLL_CTL_ADD, o->dest, &ev) == 0) {
		ev = (struct epoll_event){ .events = 0, .data.ptr = &o->fd };
		epoll_ctl(sv->epfd, EPOLL_CTL_MOD, o->fd, &ev);
		return;
	}
	/* A regular file (EPERM): a write to it does not wait on a reader. */
	while (o->pending_off < o->pending_len) {
		ssize_t w = write(o->dest, o->pending + o->pending_off,
				  o->pending_len - o->pending_off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		o->pending_off += (size_t)w;
	}
	free(o->pending);
	o->pending = NULL;
	o->pending_len = o->pending_off = 0;
}

static void output_push(struct supervisor *sv, struct output *o, const char *buf, size_t len)
{
	size_t done = write_now(o, buf, len);

	/* Timed out: what has no room now is dropped. */
	if (done == len || sv->result->timed_out)
		return;
	o->pending = cordon_xmalloc(len - done);
	memcpy(o->pending, buf + done, len - done);
	o->pending_len = len - done;
	o->pending_off = 0;
	output_wait(sv, o);
}

/* Room in dest: what is kept first; once all of it is out, the pipe is read again. */
static void output_ready(struct supervisor *sv, struct output *o)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &o->fd };

	if (!o->pending)
		return;
	o->pending_off +=
		write_now(o, o->pending + o->pending_off, o->pending_len - o->pending_off);
	if (o->pending_off < o->pending_len && !sv->result->timed_out)
		return;
	free(o->pending);
	o->pending = NULL;
	o->pending_len = o->pending_off = 0;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, o->dest, NULL);
	if (o->fd >= 0)
		epoll_ctl(sv->epfd, EPOLL_CTL_MOD, o->fd, &ev);
}

static void forward_output(struct supervisor *sv, struct output *o)
{
	char buf[65536];
	ssize_t r;

	if (o->pending)
		return; /* not read while dest has no room */
	r = read(o->fd, buf, sizeof(buf));
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		epoll_ctl(sv->epfd, EPOLL_CTL_DEL, o->fd, NULL);
		cordon_closep(&o->fd);
		return;
	}
	*o->bytes += (uint64_t)r;
	if (sv->spec->output_capped) {
		uint64_t room = sv->spec->output_max - sv->forwarded;

		if ((uint64_t)r > room) {
			if (!sv->result->output_truncated) {
				sv->result->output_truncated = true;
				if (room)
					output_push(sv, o, buf, (size_t)room);
				sv->forwarded += room;
				fprintf(stderr, "cordon: output truncated at %" PRIu64 " bytes\n",
					sv->spec->output_max);
			}
			return;
		}
	}
	output_push(sv, o, buf, (size_t)r);
	sv->forwarded += (uint64_t)r;
}

/* Timed out: what is kept goes where there is room now, the rest is dropped. */
static void outputs_give_up(struct supervisor *sv)
{
	for (int i = 0; i < 2; i++)
		output_ready(sv, &sv->out[i]);
}

/* A terminal's signal, for the init to relay to the workload's process group. */
static void send_terminal_signal(struct supervisor *sv, int sig)
{
	struct sync_msg msg = { .type = SYNC_SIGNAL, .status = sig };

	if (!sv->child_done)
		sync_send(sv->sync_fd, &msg, NULL, 0);
}

/*
 * The sandbox is a session of its own: what the caller's terminal sends
 * its foreground group (^C, ^\, ^Z: SI_KERNEL) reaches only us, and
 * goes on to the workload's process group. Other signals go to the
 * init, which relays them to the workload itself.
 */
static void handle_signal(struct supervisor *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD || si.ssi_signo == SIGPIPE || si.ssi_signo == SIGTTIN)
			continue;
		if (si.ssi_signo == SIGWINCH) {
			relay_winch(&sv->relay);
		} else if (si.ssi_signo == SIGCONT) {
			relay_resume(&sv->relay);
		} else if (si.ssi_signo == SIGTSTP) {
			/* The sandbox stops while we are stopped, and goes on when we do. */
			send_terminal_signal(sv, SIGTSTP);
			relay_suspend(&sv->relay);
			sandbox_stop_self();
			relay_resume(&sv->relay);
			send_terminal_signal(sv, SIGCONT);
		} else if (si.ssi_code == SI_KERNEL) {
			send_terminal_signal(sv, (int)si.ssi_signo);
		} else if (!sv->child_done) {
			cordon_pidfd_send_signal(sv->pidfd, (int)si.ssi_signo);
		}
	}
}

static void handle_timer(struct supervisor *sv)
{
	uint64_t ticks;

	if (read(sv->timerfd, &ticks, sizeof(ticks)) != sizeof(ticks) || sv->child_done)
		return;
	sv->result->timed_out = true;
	outputs_give_up(sv);
	if (!sv->term_sent) {
		/* The init relays SIGTERM; SIGKILL of pid 1 ends the whole namespace. */
		sv->term_sent = true;
		cordon_pidfd_send_signal(sv->pidfd, SIGTERM);
		arm_timer(sv->timerfd, sv->spec->kill_after_ms);
	} else {
		cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
	}
}

/*
 * Has the init exited (block: wait until it has)? Its wait status goes to
 * sv->child_status. A fostered init is not our child: its parent reaps it,
 * and all we can know is that it ended (its pidfd is readable); without a
 * report it was killed, and SIGKILL is the only signal that kills it.
 */
static bool reap_init(struct supervisor *sv, bool block)
{
	siginfo_t si = { 0 };

	if (sv->opts->foster_init) {
		struct pollfd p = { .fd = sv->pidfd, .events = POLLIN };

		while (poll(&p, 1, block ? -1 : 0) < 0 && errno == EINTR)
			;
		if (!(p.revents & POLLIN))
			return false;
		sv->child_status = SIGKILL;
		return true;
	}
	while (waitid(P_PIDFD, (id_t)sv->pidfd, &si, WEXITED | (block ? 0 : WNOHANG)) < 0)
		if (errno != EINTR)
			return false;
	if (si.si_pid == 0)
		return false;
	sv->child_status =
		si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : (si.si_status & 0x7f);
	return true;
}

/* Setup failed: the init must be gone before anything it uses is removed. */
static void end_init(struct supervisor *sv)
{
	if (sv->pidfd < 0 || sv->child_done)
		return;
	cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
	reap_init(sv, true);
	sv->child_done = true;
}

static void handle_child_exit(struct supervisor *sv)
{
	if (!reap_init(sv, false))
		return;
	cordon_trace("reap");
	sv->child_done = true;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->pidfd, NULL);
	if (sv->timerfd >= 0)
		epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->timerfd, NULL);
	drain_sync(sv);
}

/* The uplink's pasta is gone: egress can no longer be what was asked for. End the sandbox. */
static void handle_uplink_exit(struct supervisor *sv)
{
	struct cordon_result *res = sv->result;

	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->net.pasta_pidfd, NULL);
	if (sv->child_done || !sandbox_net_uplink_died(&sv->net, &res->error))
		return;
	res->failed = true;
	res->exit_code = CORDON_EXIT_FAILURE;
	cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

/*
 * The host gained addresses: into the blocked sets. If one may stay open
 * (lost events, a failed update), the policy no longer holds: end the
 * sandbox (exit 125, CORDON_E_NET_POLICY). After the init is gone there
 * is nothing left to protect, and the socket is closed.
 */
static void handle_host_addresses(struct supervisor *sv)
{
	struct cordon_result *res = sv->result;

	if (sv->net.addr_watch < 0)
		return;
	if (!sv->child_done && sandbox_net_watch(&sv->net, &res->error) == 0)
		return;
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->net.addr_watch, NULL);
	cordon_closep(&sv->net.addr_watch);
	if (sv->child_done)
		return;
	res->failed = true;
	res->exit_code = CORDON_EXIT_FAILURE;
	cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

/*
 * The DNS proxy's process spoke, or died. What it asks is served; if it
 * broke its protocol, hung up or died, the workload's DNS is no longer
 * what was asked for: end the sandbox (exit 125, CORDON_E_NET_POLICY).
 */
enum proxy_event { PROXY_SPOKE, PROXY_ASKED_SOCKET, PROXY_DIED };

static void handle_proxy(struct supervisor *sv, enum proxy_event what)
{
	struct cordon_result *res = sv->result;
	struct cordon_error err = { 0 };

	if (sv->net.proxy_ctl < 0)
		return;
	if (what == PROXY_SPOKE) {
		int r = sandbox_net_proxy_io(&sv->net, &err);

		/* READY: the gateway is complete, the init may finish its side. */
		if (r > 0 && !sv->net.released) {
			cordon_trace("proxy-ready");
			if (sandbox_net_release(&sv->net, sv->sync_fd, &err) < 0)
				r = -1;
		}
		if (r >= 0)
			return;
	} else if (what == PROXY_ASKED_SOCKET) {
		if (sandbox_net_proxy_sockets(&sv->net, &err) == 0)
			return;
	} else if (!sandbox_net_proxy_died(&sv->net, &err)) {
		return;
	}
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->net.proxy_ctl, NULL);
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->net.proxy_sockets, NULL);
	epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->net.proxy_pidfd, NULL);
	sandbox_net_proxy_stop(&sv->net);
	if (sv->child_done || res->failed)
		return;
	res->error = err;
	res->failed = true;
	res->exit_code = CORDON_EXIT_FAILURE;
	cordon_pidfd_send_signal(sv->pidfd, SIGKILL);
}

static int supervise(struct supervisor *sv, struct cordon_error *err)
{
	while (!sv->child_done || sv->out[0].fd >= 0 || sv->out[1].fd >= 0) {
		struct epoll_event evs[16];
		int n = epoll_wait(sv->epfd, evs, ARRAY_SIZE(evs),
				   relay_timeout_ms(&sv->relay, -1));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &sv->pidfd)
				handle_child_exit(sv);
			else if (tag == &sv->sigfd)
				handle_signal(sv);
			else if (tag == &sv->timerfd)
				handle_timer(sv);
			else if (tag == &sv->sync_fd) {
				drain_sync(sv);
				/* The init closed its end (it exited): stop watching. */
				if (evs[i].events & (EPOLLHUP | EPOLLERR))
					epoll_ctl(sv->epfd, EPOLL_CTL_DEL, sv->sync_fd, NULL);
			} else if (tag == &sv->out[0].fd)
				forward_output(sv, &sv->out[0]);
			else if (tag == &sv->out[1].fd)
				forward_output(sv, &sv->out[1]);
			else if (tag == &sv->out[0].dest)
				output_ready(sv, &sv->out[0]);
			else if (tag == &sv->out[1].dest)
				output_ready(sv, &sv->out[1]);
			else if (tag == &sv->relay.in)
				relay_input(&sv->relay);
			else if (tag == &sv->relay.to)
				relay_output_ready(&sv->relay);
			else if (tag == &sv->net.pasta_pidfd)
				handle_uplink_exit(sv);
			else if (tag == &sv->net.addr_watch)
				handle_host_addresses(sv);
			else if (tag == &sv->net.proxy_ctl)
				handle_proxy(sv, PROXY_SPOKE);
			else if (tag == &sv->net.proxy_sockets)
				handle_proxy(sv, PROXY_ASKED_SOCKET);
			else if (tag == &sv->net.proxy_pidfd)
				handle_proxy(sv, PROXY_DIED);
			else
				lifecycle_dispatch(sv, tag);
		}
		relay_tick(&sv->relay);
	}
	return 0;
}

static void compute_exit(struct supervisor *sv)
{
	struct cordon_result *res = sv->result;
	int status;

	if (res->failed && !sv->have_exit)
		return; /* exit_code set from the failure message */
	status = sv->have_exit ? sv->workload_status : sv->child_status;
	if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	} else {
		res->exit_code = WEXITSTATUS(status);
	}
	if (!sv->have_exit && !res->failed && !res->timed_out) {
		/* The init died without a report: only a kill from outside does that. */
		res->failed = res->exit_code == CORDON_EXIT_FAILURE;
		if (res->failed)
			cordon_error_set(&res->error, CORDON_E_INTERNAL, 0,
					 "the sandbox init exited before reporting");
	}
	if (res->timed_out)
		res->exit_code = CORDON_EXIT_TIMEOUT;
}

/*
 * The config's idmapped mounts: only host root may idmap a host
 * filesystem, so the supervisor makes each and hands it to the init
 * (SYNC_MOUNT_TREE, one a message), which mounts it in its place.
 */
static int send_idmapped_mounts(const struct cordon_spec *spec, int userns, int sync_fd,
				struct cordon_error *err)
{
	for (size_t i = 0; spec->oci && i < spec->oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &spec->oci->mounts[i];
		struct sync_msg msg = { .type = SYNC_MOUNT_TREE, .status = (int32_t)i };
		_cleanup_close_ int tree = -1;
		int r;

		if (!m->idmap || m->kind != CORDON_OCI_MOUNT_BIND)
			continue;
		tree = cordon_fs_idmapped_mount(m, userns, err);
		if (tree < 0)
			return cordon_error_wrap(err, "mounts[%zu] %s", i, m->destination);
		r = sync_send(sync_fd, &msg, &tree, 1);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, -r, "starting the sandbox");
	}
	return 0;
}

/*
 * The config's other bind sources, cloned by host root (so that a source
 * below a directory only its capabilities may enter is reachable: a
 * root-owned 0000 parent, an engine's storage) inside the init's mount
 * namespace (so that the clone is made of the copies the kernel locked
 * for the sandbox's user namespace: the host mount's read-only, nosuid,
 * nodev, noexec and atime flags and its submounts stay out of the
 * sandbox's reach, as they do for a clone the init makes itself). The
 * init has not touched that namespace yet: it waits for GO. Each tree is
 * sent as mounts[i]; the init attaches it in its turn.
 */
static int send_bind_sources(const struct cordon_spec *spec, pid_t child, int sync_fd,
			     struct cordon_error *err)
{
	_cleanup_close_ int own = -1, theirs = -1, cwd = -1, root = -1;
	char path[64];
	int r = 0;

	if (!spec->oci)
		return 0;
	for (size_t i = 0; i < spec->oci->n_mounts; i++)
		if (spec->oci->mounts[i].kind == CORDON_OCI_MOUNT_BIND &&
		    !spec->oci->mounts[i].idmap)
			r = 1;
	if (!r)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)child);
	own = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	theirs = open(path, O_RDONLY | O_CLOEXEC);
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (own < 0 || theirs < 0 || cwd < 0 || root < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"the sandbox's mount namespace");
	if (setns(theirs, CLONE_NEWNS) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"entering the sandbox's mount namespace");
	r = 0;
	for (size_t i = 0; r == 0 && i < spec->oci->n_mounts; i++) {
		const struct cordon_oci_mount *m = &spec->oci->mounts[i];
		struct sync_msg msg = { .type = SYNC_MOUNT_TREE, .status = (int32_t)i };
		_cleanup_close_ int tree = -1;

		if (m->kind != CORDON_OCI_MOUNT_BIND || m->idmap)
			continue;
		tree = cordon_fs_bind_source(m, err);
		if (tree < 0) {
			r = cordon_error_wrap(err, "mounts[%zu] %s", i, m->destination);
			break;
		}
		r = sync_send(sync_fd, &msg, &tree, 1);
		if (r < 0)
			r = cordon_error_set(err, CORDON_E_INTERNAL, -r, "starting the sandbox");
	}
	/* Back where we were: our namespace, our root, our working directory. */
	if (setns(own, CLONE_NEWNS) < 0 || fchdir(root) < 0 || chroot(".") < 0 || fchdir(cwd) < 0) {
		/* Nothing of ours may go on from the sandbox's namespace. */
		cordon_error_set(err, CORDON_E_NAMESPACE, errno,
				 "returning from the sandbox's mount namespace");
		cordon_error_print(err);
		_exit(CORDON_EXIT_FAILURE);
	}
	return r;
}

/*
 * The config's device nodes (c, b, u): no node can be made in the
 * sandbox's user namespace, so host root makes each as the config says,
 * owned by the host ids of its uid and gid, and hands it over as
 * mounts[n_mounts + i] (the init attaches it at its path).
 */
static int send_device_nodes(const struct cordon_spec *spec, const struct cordon_idplan *plan,
			     int sync_fd, struct cordon_error *err)
{
	for (size_t i = 0; spec->oci && i < spec->oci->n_devices; i++) {
		const struct cordon_oci_device *d = &spec->oci->devices[i];
		struct sync_msg msg = { .type = SYNC_MOUNT_TREE,
					.status = (int32_t)(spec->oci->n_mounts + i) };
		int64_t ku = cordon_idmap_to_outside(&plan->uid, d->has_uid ? d->uid : 0);
		int64_t kg = cordon_idmap_to_outside(&plan->gid, d->has_gid ? d->gid : 0);
		_cleanup_close_ int tree = -1;
		int r;

		if (d->type == 'p')
			continue;
		if (ku < 0 || kg < 0)
			return cordon_error_set(
				err, CORDON_E_USERNS, 0,
				"linux.devices[%zu] %s: its uid or gid is not mapped", i, d->path);
		tree = cordon_fs_device_node(d, (uid_t)ku, (gid_t)kg, err);
		if (tree < 0)
			return cordon_error_wrap(err, "linux.devices[%zu] %s", i, d->path);
		r = sync_send(sync_fd, &msg, &tree, 1);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, -r, "starting the sandbox");
	}
	return 0;
}

/* Rootful: the idmapped trees need the sandbox's user namespace, so they come after clone. */
static int prepare_host_mounts(const struct cordon_spec *spec, const struct cordon_idplan *plan,
			       pid_t child, int sync_fd, struct cordon_fs_host *host,
			       struct cordon_error *err)
{
	_cleanup_close_ int userns = -1, ws_userns = -1;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", child);
	userns = open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno, "opening %s", path);
	if (spec->workspace) {
		struct cordon_idmap u = { .n = 1 }, g = { .n = 1 };
		int64_t ku = cordon_idmap_to_outside(&plan->uid, spec->uid);
		int64_t kg = cordon_idmap_to_outside(&plan->gid, spec->gid);

		/*
		 * The directory's owner on disk is the workload inside: the
		 * owner of the directory checked, never of what the name holds now.
		 */
		u.extent[0] =
			(struct cordon_idmap_extent){ spec->workspace_id.uid, (uint32_t)ku, 1 };
		g.extent[0] =
			(struct cordon_idmap_extent){ spec->workspace_id.gid, (uint32_t)kg, 1 };
		ws_userns = cordon_userns_open_async(&u, &g, err);
		if (ws_userns < 0)
			return cordon_error_wrap(err, "--workspace idmap");
	}
	if (send_idmapped_mounts(spec, userns, sync_fd, err) < 0 ||
	    send_bind_sources(spec, child, sync_fd, err) < 0 ||
	    send_device_nodes(spec, plan, sync_fd, err) < 0)
		return -1;
	return cordon_fs_prepare_host(spec, userns, ws_userns, host, err);
}

/* Maps, host mounts, then GO: everything the child waits for before setup. */
static int release_child(const struct cordon_spec *spec, const struct cordon_idplan *plan,
			 bool userns, pid_t child, int sync_fd, struct cordon_error *err)
{
	struct sync_msg go = { .type = SYNC_GO };
	struct cordon_fs_host host;
	int fds[2];
	size_t n = 0;
	int r;

	cordon_fs_host_init(&host);
	if (userns) {
		if (cordon_userns_write(child, plan, err) < 0)
			return -1;
		cordon_trace("idmap");
		if (cordon_host_root() &&
		    prepare_host_mounts(spec, plan, child, sync_fd, &host, err) < 0) {
			cordon_userns_reap();
			return -1;
		}
		if (cordon_host_root())
			cordon_trace("host-mounts");
	}
	if (host.rootfs_tree >= 0) {
		fds[n++] = host.rootfs_tree;
		go.status |= 1;
	}
	if (host.workspace_tree >= 0) {
		fds[n++] = host.workspace_tree;
		go.status |= 2;
	}
	r = sync_send(sync_fd, &go, fds, n);
	cordon_trace("go");
	cordon_fs_host_close(&host);
	/* The workspace's namespace holder, off the init's path now that it has GO. */
	cordon_userns_reap();
	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -r, "starting the sandbox");
	return 0;
}

/* Where o's output goes, and whether a send there can be told not to wait. */
static void output_dest(struct output *o, int dest, uint64_t *bytes)
{
	struct stat st;

	o->dest = dest;
	o->bytes = bytes;
	o->dest_is_socket = fstat(dest, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int open_output_pipes(struct supervisor *sv, int wr[2], struct cordon_error *err)
{
	for (int i = 0; i < 2; i++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "pipe");
		sv->out[i].fd = p[0];
		wr[i] = p[1];
	}
	output_dest(&sv->out[0], STDOUT_FILENO, &sv->result->stdout_bytes);
	output_dest(&sv->out[1], STDERR_FILENO, &sv->result->stderr_bytes);
	return 0;
}

/* Before clone: a limit that cannot be set fails the run before anything executes. */
static int create_cgroups(struct supervisor *sv, struct cordon_error *err)
{
	const struct cordon_spec *spec = sv->spec;
	const struct cordon_cgroup_place place = {
		.id = spec->id,
		.parent = spec->cgroup_parent,
		.path = spec->oci ? spec->oci->cgroups_path : NULL,
	};
	struct cordon_cgroup_layout layout;
	int r;

	if (cordon_cgroup_detect(&layout, err) < 0)
		return -1;
	/* v2: what the sandbox's cgroup can have is what its parent has, not the caller. */
	cordon_cgroup_layout_place(&layout, &place);
	/* Where they will be, before one is made: a kill meanwhile leaves them to the sweep. */
	{
		size_t n;
		_cleanup_strv_ char **leaves = cordon_cgroup_layout_leaves(&layout, &place, &n);

		if (cordon_state_plan_cgroups(sv->state, (const char *const *)leaves, n, err) < 0) {
			cordon_cgroup_layout_free(&layout);
			return -1;
		}
	}
	/* An OCI container gets every cgroup it may be paused or updated through later. */
	r = cordon_cgroup_create(&layout, &place, &spec->limits,
				 (spec->result_json ? CORDON_CGROUP_WANT_STATS : 0) |
					 (spec->oci ? CORDON_CGROUP_WANT_OCI : 0),
				 &sv->cgroup, err);
	/* The rest of linux.resources: shares, cpuset, reservation, device rules. */
	if (r == 0 && spec->oci)
		r = cordon_cgroup_apply_container(&layout, &place, &spec->oci->resources,
						  &sv->cgroup, err);
	cordon_cgroup_layout_free(&layout);
	/* Recorded even on failure: a directory made before it is removed with the rest. */
	if (cordon_state_record_cgroups(sv->state, (const char *const *)sv->cgroup.dir,
					sv->cgroup.n,
					r < 0 ? &(struct cordon_error){ 0 } : err) < 0 ||
	    r < 0) {
		cordon_cgroup_destroy(&sv->cgroup);
		return -1;
	}
	return 0;
}

static int run(struct supervisor *sv, struct cordon_error *err)
{
	const struct cordon_spec *spec = sv->spec;
	bool userns = spec->userns != CORDON_USERNS_HOST;
	bool counted = spec->output_capped || spec->result_json;
	struct cordon_idplan plan;
	struct clone_args args = { 0 };
	struct child_ctx ctx = {
		.spec = spec,
		.plan = &plan,
		.userns = userns,
		/* Root of a user namespace may map ids other than its own too: it becomes U1's
		   root. */
		.rootful = cordon_host_root() || cordon_userns_root(),
		.fostered = sv->opts->foster_init,
		.idle_fd = -1,
	};
	/* Only a terminal uses it: a caller that left it 0 never sends its stdin away. */
	bool terminal = spec->oci && spec->oci->terminal && sv->opts->console_fd >= 0;
	/* The caller's terminal never enters the sandbox (relay.c); -t: a pty of its own. */
	bool relay = sv->opts->relay_terminal && !terminal && !spec->tty;
	bool relay_out = relay && (isatty(STDOUT_FILENO) || isatty(STDERR_FILENO));
	_cleanup_close_ int child_sync = -1, stdin_rd = -1, console = -1, null_fd = -1, idle = -1;
	int sp[2], wr[2] = { -1, -1 };
	struct sandbox_around around;
	sigset_t set, old;
	pid_t pid;

	memset(&plan, 0, sizeof(plan));
	if (userns && sandbox_id_plan(spec, &plan, err) < 0)
		return -1;
	cordon_trace("idplan");
	/* The proxy's ids come from it, at SYNC_NET, while this frame lasts (the loop). */
	sv->plan = userns ? &plan : NULL;
	if (create_cgroups(sv, err) < 0)
		return -1;
	cordon_trace("cgroup-create");
	/*
	 * An OCI container's root may make cgroups of its own below its
	 * cgroup (systemd in a container, a workload that manages its
	 * children): host root delegates the cgroup2 directory to it, as the
	 * kernel documents delegation. Rootless, the caller's own cgroup is
	 * the container's already where it has one.
	 */
	if (spec->oci && userns && cordon_host_root()) {
		int64_t ku = cordon_idmap_to_outside(&plan.uid, 0);
		int64_t kg = cordon_idmap_to_outside(&plan.gid, 0);

		if (ku >= 0 && kg >= 0 &&
		    cordon_cgroup_delegate(&sv->cgroup, (uid_t)ku, (gid_t)kg, err) < 0)
			return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "socketpair");
	sv->sync_fd = sp[0];
	child_sync = sp[1];
	if ((counted || relay_out) && open_output_pipes(sv, wr, err) < 0)
		return -1;
	if (relay && isatty(STDIN_FILENO) && relay_stdin_open(&sv->relay, &stdin_rd, err) < 0)
		return -1;
	if (spec->tty) {
		if (relay_console_open(&sv->relay, &console, err) < 0)
			return -1;
		output_dest(&sv->out[0], STDOUT_FILENO, &sv->result->stdout_bytes);
	}
	sv->result->output_counted = counted || relay_out || spec->tty;

	if (block_signals(&old, &set) < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "sigprocmask");
	sv->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sv->sigfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "signalfd");

	/* The init's stdio once the workload has its own (opened before any device rule is its). */
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "opening /dev/null");
	ctx.null_fd = null_fd;
	/* A session's workload: the idle program (session.c). */
	if (spec->session) {
		idle = sandbox_session_program(err);
		if (idle < 0)
			return -1;
		ctx.idle_fd = idle;
	}
	ctx.console_fd = terminal ? sv->opts->console_fd : console;
	ctx.stdin_fd = stdin_rd;
	ctx.sync_fd = child_sync;
	ctx.stdout_fd = wr[0];
	ctx.stderr_fd = wr[1];
	/* The monitor: the container's stdio is the caller's, kept aside; ours is /dev/null. */
	if (sv->opts->container_stdio) {
		const int *io = sv->opts->container_stdio;

		ctx.stdin_fd = io[0];
		ctx.stdout_fd = wr[0] >= 0 ? wr[0] : io[1];
		ctx.stderr_fd = wr[1] >= 0 ? wr[1] : io[2];
	}
	if (sandbox_clone_enter(spec, &around, err) < 0) {
		cordon_closep(&wr[0]);
		cordon_closep(&wr[1]);
		return -1;
	}
	args.flags = (NS_FLAGS & ~(uint64_t)around.joined) | CLONE_PIDFD |
		     (userns ? CLONE_NEWUSER : 0) | (sv->opts->foster_init ? CLONE_PARENT : 0);
	args.pidfd = (uint64_t)(uintptr_t)&sv->pidfd;
	/* With CLONE_PARENT the kernel takes our own exit signal (and refuses another). */
	args.exit_signal = sv->opts->foster_init ? 0 : SIGCHLD;
	pid = cordon_clone3(&args, sizeof(args));
	if (pid != 0) {
		int e = errno;

		sandbox_clone_leave(&around);
		errno = e;
	}
	if (pid < 0) {
		int e = errno;

		cordon_closep(&wr[0]);
		cordon_closep(&wr[1]);
		if (e == ENOSPC || e == EUSERS)
			return cordon_error_set(err, CORDON_E_NAMESPACE, e,
						"creating namespaces (user.max_user_namespaces?)");
		return cordon_error_set(err, CORDON_E_NAMESPACE, e, "creating namespaces");
	}
	if (pid == 0) {
		cordon_trace_process("init");
		cordon_trace("init-start");
		close(sp[0]);
		sandbox_child(&ctx);
	}
	cordon_trace("clone");
	sv->child = pid;
	cordon_closep(&child_sync);
	/* The init sends the terminal; nothing of it stays with the supervisor. */
	if (terminal)
		close(sv->opts->console_fd);
	cordon_closep(&console);
	cordon_closep(&stdin_rd);
	cordon_closep(&null_fd);
	cordon_closep(&idle);
	/*
	 * The monitor holds nothing of its caller's past this point: the
	 * container's stdio and --preserve-fds are the init's to pass on.
	 */
	if (sv->opts->container_stdio) {
		for (int i = 0; i < 3; i++)
			cordon_closep(&sv->opts->container_stdio[i]);
		if (spec->preserve_fds && close_range(3, 2 + spec->preserve_fds, 0) < 0) {
			cordon_closep(&wr[0]);
			cordon_closep(&wr[1]);
			cordon_error_set(err, CORDON_E_INTERNAL, errno,
					 "closing the --preserve-fds");
			end_init(sv);
			return -1;
		}
	}
	if (cordon_cgroup_attach(&sv->cgroup, pid, err) < 0) {
		cordon_closep(&wr[0]);
		cordon_closep(&wr[1]);
		end_init(sv);
		return -1;
	}
	cordon_closep(&wr[0]);
	cordon_closep(&wr[1]);
	cordon_trace("cgroup-attach");

	if (release_child(spec, &plan, userns, pid, sv->sync_fd, err) < 0) {
		end_init(sv);
		return -1;
	}
	sv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sv->epfd < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "epoll_create1");
	if (spec->timeout_ms) {
		sv->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (sv->timerfd < 0 || arm_timer(sv->timerfd, spec->timeout_ms) < 0 ||
		    epoll_add(sv->epfd, &sv->timerfd, err) < 0)
			return cordon_error_set(err, CORDON_E_INTERNAL, errno, "timerfd");
	}
	if (epoll_add(sv->epfd, &sv->pidfd, err) < 0 || epoll_add(sv->epfd, &sv->sigfd, err) < 0 ||
	    epoll_add(sv->epfd, &sv->sync_fd, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++)
		if (sv->out[i].fd >= 0 && epoll_add(sv->epfd, &sv->out[i].fd, err) < 0)
			return -1;
	relay_attach(&sv->relay, sv->epfd);
	if (supervise(sv, err) < 0)
		return -1;
	cordon_trace("supervise");
	compute_exit(sv);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int cordon_sandbox_run(const struct cordon_spec *spec, struct cordon_result *result)
{
	const struct cordon_sandbox_opts opts = { .notify_fd = -1, .console_fd = -1 };

	return cordon_sandbox_run_opts(spec, &opts, result);
}

int cordon_sandbox_run_opts(const struct cordon_spec *spec, const struct cordon_sandbox_opts *opts,
			    struct cordon_result *result)
{
	struct supervisor sv = {
		.spec = spec,
		.opts = opts,
		.result = result,
		.pidfd = -1,
		.sigfd = -1,
		.timerfd = -1,
		.sync_fd = -1,
		.epfd = -1,
		.out = { { .fd = -1 }, { .fd = -1 } },
		.notify_fd = opts->notify_fd,
		.listen_fd = -1,
		.start_client = -1,
		.hook_out = { -1, -1 },
		.session_timer = -1,
	};
	struct cordon_state state = { .root_fd = -1, .dir_fd = -1 };
	uint64_t t0 = cordon_now_mono_us();
	int r;

	memset(result, 0, sizeof(*result));
	for (size_t i = 0; i < SESSION_EXECS_MAX; i++)
		sv.execs[i] = -1;
	/* Ours from here: closed once `cordon create` is told. */
	if (opts->hook_stdio) {
		sv.hook_out[0] = TAKE_FD(opts->hook_stdio[0]);
		sv.hook_out[1] = TAKE_FD(opts->hook_stdio[1]);
	}
	relay_init(&sv.relay);
	sandbox_net_init(&sv.net, spec, result);
	sv.state = &state;
	sv.cgroup.v2_fd = -1;
	/*
	 * The netlink libraries, only for a network (a default-deny start
	 * maps none of them), here in the host's mount namespace and before
	 * the init's clone, which inherits them; nothing exists yet if they
	 * cannot be loaded.
	 */
	r = 0;
	if (spec->net.enabled) {
		r = cordon_netlib_load(CORDON_NETLIB_ALL, &result->error);
		cordon_trace("netlib");
	}
	if (r == 0)
		r = cordon_state_create(&state, opts->state_root, spec, opts->kept, &result->error);
	cordon_trace("state");
	/* The log first: nothing of the sandbox exists that it does not tell of. */
	if (r == 0)
		r = sandbox_audit_begin(&sv, &result->error);
	if (r == 0) {
		r = run(&sv, &result->error);
		if (r < 0)
			end_init(&sv);
		/* The caller's terminal as it was, before anything is said on it. */
		relay_close(&sv.relay);
		/* Every process is gone (the pid namespace died with its init). */
		sandbox_net_finish(&sv.net);
		if (spec->net.enabled)
			cordon_trace("net-finish");
		cordon_cgroup_stats(&sv.cgroup, &result->cgroup);
		cordon_cgroup_destroy(&sv.cgroup);
		cordon_trace("cgroup-destroy");
	}
	if (r < 0) {
		result->failed = true;
		result->exit_code = CORDON_EXIT_FAILURE;
	}
	result->duration_ms = (cordon_now_mono_us() - t0 + 500) / 1000;
	sandbox_audit_end(&sv);
	/* The state (stopped, or gone) and whoever waits for the outcome. */
	lifecycle_finish(&sv);
	cordon_trace("state-remove");
	/* pasta, killed in sandbox_net_finish, has had the teardown's time to die. */
	sandbox_net_reap(&sv.net);
	if (spec->net.enabled)
		cordon_trace("uplink-reap");
	cordon_closep(&sv.notify_fd);
	cordon_closep(&sv.pidfd);
	cordon_closep(&sv.sigfd);
	cordon_closep(&sv.timerfd);
	cordon_closep(&sv.sync_fd);
	cordon_closep(&sv.epfd);
	cordon_closep(&sv.out[0].fd);
	cordon_closep(&sv.out[1].fd);
	free(sv.out[0].pending);
	free(sv.out[1].pending);
	result->duration_ms = (cordon_now_mono_us() - t0 + 500) / 1000;
	return result->exit_code;
}
