// SPDX-License-Identifier: Apache-2.0
/*
 * The request: everything cordon-nethelper accepts from its caller.
 *
 * The caller is whoever created the socket on stdin (SO_PEERCRED), and it
 * must also be whoever ran us (the real uid): a socket inherited from a
 * more privileged process does not lend its privilege. The JSON goes
 * through yajl's event parser rather than yajl_tree, which would accept
 * comments and hide a "\u0000" inside a string: here every key, type and
 * value is checked as it arrives, and the first surprise refuses the
 * whole request.
 */
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

#include "helper.h"

/* More fds than this in one message truncate the control data: refused. */
#define REQUEST_FDS_MAX 8

static int refuse(struct cordon_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct cordon_error *err, int errnum, const char *fmt, ...)
{
	char msg[sizeof(err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_NET_POLICY, errnum, "request: %s", msg);
}

/* --- the socket ------------------------------------------------------- */

static int socket_caller(int fd, uid_t *caller, struct cordon_error *err)
{
	int domain = 0, type = 0;
	struct ucred cred;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX)
		return refuse(err, 0, "stdin is not a unix socket (see cordon-nethelper(8))");
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM)
		return refuse(err, 0, "stdin is not a unix stream socket");
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return refuse(err, errno, "SO_PEERCRED of stdin");
	if (cred.uid != getuid())
		return refuse(err, 0,
			      "the socket on stdin was made by uid %u, not by the caller (uid %u)",
			      (unsigned)cred.uid, (unsigned)getuid());
	*caller = cred.uid;
	return 0;
}

/* Keep the first fd of the request; close any other and note it. */
static void take_fds(struct msghdr *mh, int *kept, size_t *count)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		int *fds;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, &fds[i], sizeof(fd));
			if (*count == 0)
				*kept = fd;
			else
				close(fd);
			(*count)++;
		}
	}
}

int request_read(int fd, struct helper_request *req, struct cordon_error *err)
{
	char buf[HELPER_REQUEST_MAX + 1];
	union {
		char space[CMSG_SPACE(REQUEST_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} control;
	uint64_t deadline = cordon_now_mono_us() + HELPER_REQUEST_TIMEOUT_MS * 1000ull;
	_cleanup_close_ int netns_fd = -1;
	size_t len = 0, n_fds = 0;
	bool truncated = false;
	uid_t caller = (uid_t)-1;

	if (socket_caller(fd, &caller, err) < 0)
		return -1;
	for (;;) {
		struct iovec iov = { buf + len, sizeof(buf) - len };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = control.space,
			.msg_controllen = sizeof(control.space),
		};
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = cordon_now_mono_us();
		ssize_t r;

		if (now >= deadline)
			return refuse(err, ETIMEDOUT,
				      "no end of request within %u s (close the writing side)",
				      HELPER_REQUEST_TIMEOUT_MS / 1000);
		r = poll(&p, 1, (int)((deadline - now) / 1000) + 1);
		if (r < 0 && errno != EINTR)
			return refuse(err, errno, "poll stdin");
		if (r <= 0)
			continue;
		r = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return refuse(err, errno, "reading stdin");
		take_fds(&mh, &netns_fd, &n_fds);
		if (mh.msg_flags & MSG_CTRUNC)
			truncated = true;
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > HELPER_REQUEST_MAX)
			return refuse(err, EMSGSIZE, "larger than %d bytes", HELPER_REQUEST_MAX);
	}
	if (truncated || n_fds > 1)
		return refuse(err, 0, "%s file descriptors came with it; exactly one is accepted",
			      truncated ? "too many" : "several");
	if (request_parse(buf, len, caller == 0, req, err) < 0)
		return -1;
	req->caller = caller;
	req->netns_fd = TAKE_FD(netns_fd);
	return 0;
}

/* --- the JSON ----------------------------------------------------------- */

enum request_key { KEY_NONE, KEY_ID, KEY_POOL };

struct parse_state {
	struct cordon_error *err;
	int depth;
	enum request_key pending; /* the key whose value comes next */
	bool seen_id, seen_pool;
	char id[CORDON_NETHELPER_ID_MAX + 1];
	char pool[sizeof("255.255.255.255/32")];
	bool failed;
};

static int parse_fail(struct parse_state *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int parse_fail(struct parse_state *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!s->failed)
		refuse(s->err, 0, "%s", msg);
	s->failed = true;
	return 0; /* stop yajl */
}

static const char *key_name(enum request_key k)
{
	return k == KEY_ID ? "id" : "pool";
}

static int on_other(void *ctx)
{
	struct parse_state *s = ctx;

	if (s->depth != 1 || s->pending == KEY_NONE)
		return parse_fail(s, "not one JSON object of strings");
	return parse_fail(s, "\"%s\" is not a string", key_name(s->pending));
}

static int on_bool(void *ctx, int v)
{
	(void)v;
	return on_other(ctx);
}

static int on_number(void *ctx, const char *v, size_t len)
{
	(void)v;
	(void)len;
	return on_other(ctx);
}

static int on_string(void *ctx, const unsigned char *v, size_t len)
{
	struct parse_state *s = ctx;
	char *dst;
	size_t cap;

	if (s->depth != 1 || s->pending == KEY_NONE)
		return on_other(ctx);
	dst = s->pending == KEY_ID ? s->id : s->pool;
	cap = s->pending == KEY_ID ? sizeof(s->id) : sizeof(s->pool);
	if (len >= cap)
		return parse_fail(s, "\"%s\" is too long", key_name(s->pending));
	if (memchr(v, '\0', len))
		return parse_fail(s, "\"%s\" contains a NUL character", key_name(s->pending));
	memcpy(dst, v, len);
	dst[len] = '\0';
	s->pending = KEY_NONE;
	return 1;
}

static int on_start_map(void *ctx)
{
	struct parse_state *s = ctx;

	if (s->depth != 0)
		return on_other(ctx);
	s->depth++;
	return 1;
}

static int on_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct parse_state *s = ctx;
	enum request_key key = KEY_NONE;
	bool *seen;

	if (len == 2 && !memcmp(k, "id", 2))
		key = KEY_ID;
	else if (len == 4 && !memcmp(k, "pool", 4))
		key = KEY_POOL;
	if (key == KEY_NONE)
		return parse_fail(s, "unknown key (only \"id\" and \"pool\" are accepted)");
	seen = key == KEY_ID ? &s->seen_id : &s->seen_pool;
	if (*seen)
		return parse_fail(s, "\"%s\" is given twice", key_name(key));
	*seen = true;
	s->pending = key;
	return 1;
}

static int on_end_map(void *ctx)
{
	struct parse_state *s = ctx;

	s->depth--;
	return 1;
}

static int on_start_array(void *ctx)
{
	return on_other(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_other,
	.yajl_boolean = on_bool,
	.yajl_number = on_number, /* takes precedence over integer/double */
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_map_key,
	.yajl_end_map = on_end_map,
	.yajl_start_array = on_start_array,
};

static void yajl_freep(yajl_handle *h)
{
	if (*h)
		yajl_free(*h);
}

/* [A-Za-z0-9][A-Za-z0-9_.-]{0,63}: the runtime's own id grammar. */
static bool id_valid(const char *id)
{
	size_t len = strlen(id);

	if (len == 0 || len > CORDON_NETHELPER_ID_MAX ||
	    !strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", id[0]))
		return false;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
	       len;
}

static bool cidr_within(const struct cordon_cidr *inner, const char *outer_text)
{
	struct cordon_cidr outer;

	if (cordon_cidr_parse(outer_text, &outer, NULL) < 0)
		return false;
	return inner->prefix >= outer.prefix && cordon_cidr_contains(&outer, &inner->addr);
}

/*
 * The pool becomes connected routes on the host, which take precedence
 * over any less specific route: a public range would let a sandbox
 * capture the host's traffic to it. Only RFC 1918 space, and for a
 * caller other than root only the administrator's default pool.
 */
static int pool_check(const char *text, bool caller_is_root, struct cordon_cidr *out,
		      struct cordon_error *err)
{
	static const char *const private_ranges[] = { "10.0.0.0/8", "172.16.0.0/12",
						      "192.168.0.0/16" };
	bool host_bits = false, is_private = false;

	if (cordon_cidr_parse(text, out, &host_bits) < 0 || out->addr.family != AF_INET)
		return refuse(err, 0, "pool \"%s\" is not an IPv4 CIDR", text);
	if (host_bits)
		return refuse(err, 0, "pool \"%s\" has host bits set", text);
	if (out->prefix < 16 || out->prefix > 28)
		return refuse(err, 0, "pool \"%s\": the prefix must be /16 to /28", text);
	for (size_t i = 0; i < ARRAY_SIZE(private_ranges); i++)
		is_private = is_private || cidr_within(out, private_ranges[i]);
	if (!is_private)
		return refuse(err, 0, "pool \"%s\" is not inside 10/8, 172.16/12 or 192.168/16",
			      text);
	if (!caller_is_root && !cidr_within(out, CORDON_NETHELPER_DEFAULT_POOL))
		return refuse(err, EPERM, "pool \"%s\": only root may choose a pool outside %s",
			      text, CORDON_NETHELPER_DEFAULT_POOL);
	return 0;
}

int request_parse(const char *buf, size_t len, bool caller_is_root, struct helper_request *req,
		  struct cordon_error *err)
{
	struct parse_state s = { .err = err };
	_cleanup_(yajl_freep) yajl_handle h = yajl_alloc(&callbacks, NULL, &s);
	yajl_status st;

	if (!h)
		return cordon_error_set(err, CORDON_E_INTERNAL, ENOMEM, "request: yajl");
	/* The defaults are the strict ones: no comments, UTF-8 validated, one
	 * value and nothing after it. */
	st = yajl_parse(h, (const unsigned char *)buf, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (s.failed)
		return -1;
	if (st != yajl_status_ok) {
		unsigned char *why = yajl_get_error(h, 0, NULL, 0);
		char text[160];

		/* Not verbose: the verbose form quotes the input over lines. */
		snprintf(text, sizeof(text), "%s", why ? (const char *)why : "");
		text[strcspn(text, "\n")] = '\0';
		if (why)
			yajl_free_error(h, why);
		return refuse(err, 0, "not one well-formed JSON object (%s)", text);
	}
	if (!s.seen_id)
		return refuse(err, 0, "\"id\" is missing");
	if (!id_valid(s.id))
		return refuse(err, 0, "id \"%s\" does not match [A-Za-z0-9][A-Za-z0-9_.-]{0,63}",
			      s.id);
	if (pool_check(s.seen_pool ? s.pool : CORDON_NETHELPER_DEFAULT_POOL, caller_is_root,
		       &req->pool, err) < 0)
		return -1;
	memcpy(req->id, s.id, sizeof(req->id));
	return 0;
}

/* --- the namespace ------------------------------------------------------ */

int request_check_netns(const struct helper_request *req, struct cordon_error *err)
{
	_cleanup_close_ int userns = -1;
	struct stat ns, ours;
	uid_t owner;
	int type;

	if (req->netns_fd < 0)
		return refuse(err, 0, "no network namespace fd came with it (SCM_RIGHTS)");
	type = ioctl(req->netns_fd, NS_GET_NSTYPE);
	if (type < 0)
		return refuse(err, errno == ENOTTY ? 0 : errno,
			      "the fd that came with it is not a namespace");
	if (type != CLONE_NEWNET)
		return refuse(
			err, 0,
			"the fd that came with it is a namespace, but not a network namespace");
	if (fstat(req->netns_fd, &ns) < 0 || stat("/proc/self/ns/net", &ours) < 0)
		return refuse(err, errno, "stat of the network namespaces");
	if (ns.st_dev == ours.st_dev && ns.st_ino == ours.st_ino)
		return refuse(err, 0,
			      "the gateway namespace is the helper's own network namespace");
	if (req->caller == 0)
		return 0;
	/* The veth's kernel path checks no capability over the peer's
	 * namespace on every kernel: this is the check that keeps a user from
	 * planting a link in somebody else's namespace. */
	userns = ioctl(req->netns_fd, NS_GET_USERNS);
	if (userns < 0)
		return refuse(err, errno, "the owner of the gateway namespace");
	if (ioctl(userns, NS_GET_OWNER_UID, &owner) < 0)
		return refuse(err, errno, "the owner of the gateway namespace's user namespace");
	if (owner != req->caller)
		return refuse(
			err, EPERM,
			"the gateway namespace belongs to a user namespace of uid %u, not the caller's (uid %u)",
			(unsigned)owner, (unsigned)req->caller);
	return 0;
}
