// SPDX-License-Identifier: Apache-2.0
/*
 * The caller's side of cordon-nethelper (include/cordon/nethelper.h).
 *
 * posix_spawn rather than fork: the supervisor may have threads, and the
 * child does nothing but exec. The helper gets one unix stream socket as
 * stdin and stdout (SO_PEERCRED on it names us), a pipe as stderr, an
 * empty environment and no other fd. Both outputs are drained together
 * under one deadline, so neither a full pipe nor a stuck helper can hang
 * the supervisor.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/nethelper.h"

#define NETHELPER_TIMEOUT_MS 30000
#define NETHELPER_OUTPUT_MAX 4096

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

static void yajl_tree_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

static int fail(struct cordon_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct cordon_error *err, int errnum, const char *fmt, ...)
{
	char msg[sizeof(err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_NET_POLICY, errnum, "nethelper: %s", msg);
}

static char *request_json(const char *id, const char *pool, size_t *len)
{
	_cleanup_(yajl_gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	char *out;

	if (!g)
		return NULL;
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"id", 2);
	yajl_gen_string(g, (const unsigned char *)id, strlen(id));
	if (pool) {
		yajl_gen_string(g, (const unsigned char *)"pool", 4);
		yajl_gen_string(g, (const unsigned char *)pool, strlen(pool));
	}
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, len);
	out = cordon_xmalloc(*len + 2);
	memcpy(out, buf, *len);
	out[(*len)++] = '\n';
	out[*len] = '\0';
	return out;
}

static int send_request(int sock, const char *req, size_t len, int netns_fd)
{
	union {
		char space[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control = { 0 };
	struct iovec iov = { (void *)req, len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.space,
		.msg_controllen = sizeof(control.space),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	ssize_t w;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &netns_fd, sizeof(int));
	do
		w = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	/* A request of a few hundred bytes goes in one piece; the rest, if
	 * any, without the fd. */
	if ((size_t)w < len && cordon_write_all(sock, req + w, len - (size_t)w) < 0)
		return -errno;
	return shutdown(sock, SHUT_WR) < 0 ? -errno : 0;
}

struct output {
	int fd;
	char buf[NETHELPER_OUTPUT_MAX + 1];
	size_t len;
};

/* Read both outputs to EOF; false if the deadline passed first. */
static bool drain(struct output *out, struct output *errout)
{
	uint64_t deadline = cordon_now_mono_us() + NETHELPER_TIMEOUT_MS * 1000ull;
	struct output *o[2] = { out, errout };

	while (out->fd >= 0 || errout->fd >= 0) {
		struct pollfd p[2];
		uint64_t now = cordon_now_mono_us();
		int r;

		if (now >= deadline)
			return false;
		for (int i = 0; i < 2; i++)
			p[i] = (struct pollfd){ .fd = o[i]->fd, .events = POLLIN };
		r = poll(p, 2, (int)((deadline - now) / 1000) + 1);
		if (r < 0 && errno != EINTR)
			return false;
		for (int i = 0; i < 2 && r > 0; i++) {
			char scratch[512];
			ssize_t n;

			if (o[i]->fd < 0 || !p[i].revents)
				continue;
			if (o[i]->len < NETHELPER_OUTPUT_MAX)
				n = read(o[i]->fd, o[i]->buf + o[i]->len,
					 NETHELPER_OUTPUT_MAX - o[i]->len);
			else
				n = read(o[i]->fd, scratch,
					 sizeof(scratch)); /* past the cap: dropped */
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(o[i]->fd);
				o[i]->fd = -1;
			} else if (o[i]->len < NETHELPER_OUTPUT_MAX) {
				o[i]->len += (size_t)n;
			}
		}
	}
	out->buf[out->len] = '\0';
	errout->buf[errout->len] = '\0';
	return true;
}

/* "cordon-nethelper: CODE: message" -> "message"; anything else as it is. */
static const char *error_text(char *line)
{
	static const char prefix[] = "cordon-nethelper: ";
	char *nl = strchr(line, '\n'), *p;

	if (nl)
		*nl = '\0';
	if (strncmp(line, prefix, sizeof(prefix) - 1) != 0)
		return line;
	p = line + sizeof(prefix) - 1;
	if (!strncmp(p, "CORDON_", 7) && strstr(p, ": "))
		p = strstr(p, ": ") + 2;
	return p;
}

static const char *reply_str(yajl_val tree, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(tree, path, yajl_t_string);

	return v ? YAJL_GET_STRING(v) : NULL;
}

static int parse_reply(const char *text, struct cordon_nethelper_result *out,
		       struct cordon_error *err)
{
	const char *prefix_path[] = { "prefix", NULL },
		   *fwd_path[] = { "enabled_ip_forward", NULL };
	_cleanup_(yajl_tree_freep) yajl_val tree = yajl_tree_parse(text, NULL, 0);
	const char *host_if, *host, *gateway;
	yajl_val prefix, fwd;

	if (!tree || !YAJL_IS_OBJECT(tree))
		return fail(err, 0, "the reply is not a JSON object");
	host_if = reply_str(tree, "host_if");
	host = reply_str(tree, "host_addr");
	gateway = reply_str(tree, "gateway_addr");
	prefix = yajl_tree_get(tree, prefix_path, yajl_t_number);
	fwd = yajl_tree_get(tree, fwd_path, yajl_t_any);
	if (!host_if || strlen(host_if) >= sizeof(out->host_if) || strncmp(host_if, "cdr-", 4) ||
	    !host || cordon_addr_parse(host, &out->host_addr) < 0 ||
	    out->host_addr.family != AF_INET || !gateway ||
	    cordon_addr_parse(gateway, &out->gateway_addr) < 0 ||
	    out->gateway_addr.family != AF_INET || !prefix || !YAJL_IS_INTEGER(prefix) ||
	    YAJL_GET_INTEGER(prefix) != 30 || !fwd || !(YAJL_IS_TRUE(fwd) || YAJL_IS_FALSE(fwd)))
		return fail(err, 0, "unexpected reply: %.200s", text);
	snprintf(out->host_if, sizeof(out->host_if), "%s", host_if);
	snprintf(out->gateway_if, sizeof(out->gateway_if), "%s", CORDON_NETHELPER_GATEWAY_IF);
	out->prefix = 30;
	out->enabled_ip_forward = YAJL_IS_TRUE(fwd);
	return 0;
}

static int spawn(const char *path, int sock, int errpipe, pid_t *pid)
{
	char *const argv[] = { (char *)"cordon-nethelper", NULL };
	char *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	int r;

	sigemptyset(&none);
	sigemptyset(&defaults);
	/* Ignored signals survive exec: give the helper the defaults. */
	for (int sig = 1; sig < SIGRTMIN; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaddset(&defaults, sig);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, sock, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, sock, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, errpipe, STDERR_FILENO);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return -r;
}

int cordon_nethelper_run(const char *helper_path, const char *id, int gateway_netns_fd,
			 const char *pool, struct cordon_nethelper_result *out,
			 struct cordon_error *err)
{
	_cleanup_free_ char *req = NULL;
	_cleanup_close_ int child_sock = -1, child_err = -1;
	struct output reply = { .fd = -1 }, errout = { .fd = -1 };
	int sv[2], ep[2], status = 0, r;
	bool finished;
	size_t len;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (!helper_path || !id || gateway_netns_fd < 0)
		return fail(err, EINVAL, "helper path, id and gateway namespace fd are required");
	req = request_json(id, pool, &len);
	if (!req)
		return fail(err, ENOMEM, "request");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fail(err, errno, "socketpair");
	reply.fd = sv[0];
	child_sock = sv[1];
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(reply.fd);
		return fail(err, errno, "pipe");
	}
	errout.fd = ep[0];
	child_err = ep[1];

	r = spawn(helper_path, child_sock, child_err, &pid);
	/* Our copies of the child's ends go now, or EOF would never come. */
	cordon_closep(&child_sock);
	cordon_closep(&child_err);
	if (r < 0) {
		close(reply.fd);
		close(errout.fd);
		return fail(err, -r, "cannot run %s", helper_path);
	}
	/* A helper that refuses early closes its end: EPIPE, then its stderr says why. */
	(void)send_request(reply.fd, req, len, gateway_netns_fd);
	finished = drain(&reply, &errout);
	if (!finished) {
		kill(pid, SIGKILL);
		if (reply.fd >= 0)
			close(reply.fd);
		if (errout.fd >= 0)
			close(errout.fd);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return fail(err, errno, "waiting for %s", helper_path);
	if (!finished)
		return fail(err, ETIMEDOUT, "%s gave no answer within %d s", helper_path,
			    NETHELPER_TIMEOUT_MS / 1000);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return parse_reply(reply.buf, out, err);
	if (errout.len > 0)
		return fail(err, 0, "%s", error_text(errout.buf));
	if (WIFSIGNALED(status))
		return fail(err, 0, "%s was killed by signal %d", helper_path, WTERMSIG(status));
	return fail(err, 0, "%s exited with status %d and no message", helper_path,
		    WEXITSTATUS(status));
}

int cordon_nethelper_configure_gateway(const struct cordon_nethelper_result *r,
				       struct cordon_error *err)
{
	struct cordon_link *l = cordon_link_open(err);
	int ret;

	if (!l)
		return cordon_error_wrap(err, "nethelper: gateway side");
	/* Up before the route: the kernel refuses a gateway on a down link. */
	ret = cordon_link_addr(l, r->gateway_if, &r->gateway_addr, r->prefix, err);
	if (ret == 0)
		ret = cordon_link_up(l, r->gateway_if, err);
	if (ret == 0)
		ret = cordon_link_default_route(l, r->gateway_if, &r->host_addr, err);
	cordon_link_close(l);
	if (ret < 0)
		return cordon_error_wrap(err, "nethelper: gateway side");
	return 0;
}
