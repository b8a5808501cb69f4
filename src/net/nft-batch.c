// SPDX-License-Identifier: Apache-2.0
/*
 * The netfilter socket and the one batch every change goes through.
 *
 * A batch is BATCH_BEGIN, the messages, BATCH_END, sent in a single
 * sendmsg: nf_tables applies all of it or none of it. Every message asks
 * for an ack (NLM_F_ACK), so a commit is checked message by message and a
 * refusal names the object it was about. The kernel processes the whole
 * batch inside our sendmsg, so by the time sendmsg returns every ack is
 * already queued on the socket: reading until EAGAIN collects all of
 * them without a timeout.
 */
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "nft-internal.h"

/* An ack is a small skb, but the receive buffer counts its whole
 * footprint: budget this much per expected ack. */
#define NFT_ACK_FOOTPRINT 2048

void nft_out_of_memory(void)
{
	static const char msg[] = "cordon: CORDON_E_INTERNAL: out of memory\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(CORDON_EXIT_FAILURE);
}

/* The socket's options and our state; takes nft->sock, bound. */
static struct cordon_nft *nft_init(struct cordon_nft *nft)
{
	int one = 1;

	nft->portid = mnl_socket_get_portid(nft->sock);
	/*
	 * Errors without the refused message echoed back (CAP_ACK: a refused
	 * element list would come back whole), but with the kernel's pointer
	 * to the attribute it refused (EXT_ACK), which names the element.
	 * Both are best effort: old kernels simply send less.
	 */
	(void)mnl_socket_setsockopt(nft->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(nft->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	nft->seq = (uint32_t)cordon_now_mono_us();
	nft->rx = cordon_xmalloc(NFT_RX_SIZE);
	return nft;
}

struct cordon_nft *cordon_nft_open(struct cordon_error *err)
{
	struct cordon_nft *nft;

	if (netlib_ready(CORDON_NETLIB_NFT, "nft", err) < 0)
		return NULL;
	nft = cordon_xcalloc(1, sizeof(*nft));
	nft->sock = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nft->sock) {
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: netfilter socket");
		cordon_nft_close(nft);
		return NULL;
	}
	if (mnl_socket_bind(nft->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: bind netfilter socket");
		cordon_nft_close(nft);
		return NULL;
	}
	return nft_init(nft);
}

struct cordon_nft *cordon_nft_open_fd(int fd, struct cordon_error *err)
{
	struct cordon_nft *nft;

	if (netlib_ready(CORDON_NETLIB_NFT, "nft", err) < 0)
		return NULL;
	nft = cordon_xcalloc(1, sizeof(*nft));
	nft->sock = mnl_socket_fdopen(fd);
	if (!nft->sock) {
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: netfilter socket fd %d", fd);
		free(nft);
		return NULL;
	}
	return nft_init(nft);
}

int cordon_nft_fd(const struct cordon_nft *nft)
{
	return mnl_socket_get_fd(nft->sock);
}

void cordon_nft_close(struct cordon_nft *nft)
{
	if (!nft)
		return;
	if (nft->sock)
		mnl_socket_close(nft->sock);
	free(nft->buf);
	free(nft->msgs);
	free(nft->rx);
	free(nft);
}

/*
 * Room for at least need more bytes at buf + len. Everything past len is
 * kept zeroed: libmnl (1.0.4) leaves attribute padding as it finds it,
 * and the kernel would get whatever was there. Zeroing what the last
 * batch used, rather than the whole reserve, keeps small batches cheap.
 */
static void batch_reserve(struct cordon_nft *nft, size_t need)
{
	if (nft->cap - nft->len < need) {
		size_t cap = nft->cap ? nft->cap : 4 * NFT_MSG_RESERVE;

		while (cap - nft->len < need)
			cap *= 2;
		nft->buf = cordon_xrealloc(nft->buf, cap);
		memset(nft->buf + nft->cap, 0, cap - nft->cap);
		nft->cap = cap;
	}
}

static void batch_reset(struct cordon_nft *nft)
{
	if (nft->len)
		memset(nft->buf, 0, nft->len);
	nft->len = 0;
	nft->n_msgs = 0;
}

void nft_batch_begin(struct cordon_nft *nft)
{
	struct nlmsghdr *nlh;

	batch_reset(nft);
	batch_reserve(nft, MNL_NLMSG_HDRLEN * 4);
	nft->first_seq = nft->seq;
	nlh = nftnl_batch_begin(nft->buf, nft->seq++);
	nft->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

struct nlmsghdr *nft_batch_msg(struct cordon_nft *nft, uint16_t type, uint16_t flags,
			       const char *fmt, ...)
{
	struct nft_msg *m;
	va_list ap;

	if (nft->n_msgs == nft->cap_msgs) {
		nft->cap_msgs = nft->cap_msgs ? nft->cap_msgs * 2 : 32;
		nft->msgs = cordon_xrealloc(nft->msgs, nft->cap_msgs * sizeof(*nft->msgs));
	}
	m = &nft->msgs[nft->n_msgs++];
	memset(m, 0, sizeof(*m));
	m->offset = (uint32_t)nft->len;
	m->type = type;
	va_start(ap, fmt);
	vsnprintf(m->what, sizeof(m->what), fmt, ap);
	va_end(ap);

	batch_reserve(nft, NFT_MSG_RESERVE);
	/* Every message of the batch is for table inet cordon. */
	return nftnl_nlmsg_build_hdr(nft->buf + nft->len, type, NFPROTO_INET, flags | NLM_F_ACK,
				     nft->seq++);
}

void nft_batch_next(struct cordon_nft *nft, struct nlmsghdr *nlh)
{
	/* Past the reserve libnftnl has already written over the heap. */
	if (nlh->nlmsg_len > NFT_MSG_RESERVE)
		abort();
	nft->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

/* Grow a socket buffer to at least want bytes; FORCE lifts rmem_max and
 * wmem_max when we may (CAP_NET_ADMIN over the netns), else the plain
 * option does what the sysctl allows and a too large batch fails loudly. */
static void socket_buffer_grow(struct cordon_nft *nft, int force_opt, int opt, int *have,
			       size_t want)
{
	int v = want > INT32_MAX / 2 ? INT32_MAX / 2 : (int)want;
	int fd = mnl_socket_get_fd(nft->sock);

	if (*have >= v)
		return;
	/* SOL_SOCKET: mnl_socket_setsockopt() would set SOL_NETLINK options. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
	*have = v;
}

static struct nft_msg *msg_by_seq(struct cordon_nft *nft, uint32_t seq)
{
	uint32_t i = seq - (nft->first_seq + 1);

	return i < nft->n_msgs ? &nft->msgs[i] : NULL;
}

struct ack_attrs {
	uint32_t offs;
	const char *msg;
};

static int ack_attr_cb(const struct nlattr *attr, void *data)
{
	struct ack_attrs *a = data;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			a->msg = mnl_attr_get_str(attr);
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			a->offs = mnl_attr_get_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

/* Record one NLMSG_ERROR (an ack when error is 0). Returns false if it is
 * about no message of ours, which the caller counts as a batch error. */
static bool record_ack(struct cordon_nft *nft, const struct nlmsghdr *nlh, int *batch_error)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct ack_attrs attrs = { 0 };
	struct nft_msg *m;
	size_t head;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return false;
	/* Refusals of the batch as a whole point at BATCH_BEGIN or END. */
	if (e->msg.nlmsg_seq == nft->first_seq || e->msg.nlmsg_seq == nft->seq - 1) {
		if (e->error)
			*batch_error = -e->error;
		return true;
	}
	m = msg_by_seq(nft, e->msg.nlmsg_seq);
	if (!m)
		return false;
	m->acked = true;
	m->error = -e->error;
	if (e->error && (nlh->nlmsg_flags & NLM_F_ACK_TLVS)) {
		head = sizeof(*e);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			head += e->msg.nlmsg_len - sizeof(e->msg);
		if (head < mnl_nlmsg_get_payload_len(nlh))
			mnl_attr_parse_payload((const char *)e + head,
					       mnl_nlmsg_get_payload_len(nlh) - head, ack_attr_cb,
					       &attrs);
		m->bad_attr = attrs.offs;
		if (attrs.msg)
			snprintf(m->kernel_msg, sizeof(m->kernel_msg), "%s", attrs.msg);
	}
	return true;
}

/*
 * When the kernel points into an element list, the element it refused:
 * its key, found in our own copy of the message.
 */
static void describe_bad_element(const struct cordon_nft *nft, const struct nft_msg *m, char *buf,
				 size_t size)
{
	const struct nlmsghdr *nlh = (const void *)(nft->buf + m->offset);
	const struct nlattr *elem, *key, *value;

	buf[0] = '\0';
	if (m->type != NFT_MSG_NEWSETELEM && m->type != NFT_MSG_DELSETELEM &&
	    m->type != NFT_MSG_DESTROYSETELEM)
		return;
	if (m->bad_attr < MNL_NLMSG_HDRLEN + sizeof(struct nfgenmsg) ||
	    m->bad_attr + sizeof(struct nlattr) > nlh->nlmsg_len)
		return;
	/* The list's entries are numbered 1, 2, ... by libnftnl rather than
	 * typed NFTA_LIST_ELEM; the kernel ignores the type. */
	elem = (const void *)((const char *)nlh + m->bad_attr);
	if (m->bad_attr + mnl_attr_get_len(elem) > nlh->nlmsg_len)
		return;
	mnl_attr_for_each_nested (key, elem) {
		if (mnl_attr_get_type(key) != NFTA_SET_ELEM_KEY)
			continue;
		mnl_attr_for_each_nested (value, key) {
			if (mnl_attr_get_type(value) != NFTA_DATA_VALUE)
				continue;
			nft_format_key(mnl_attr_get_payload(value), mnl_attr_get_payload_len(value),
				       buf, size);
			return;
		}
	}
}

/* Hints for the errnos whose strerror misleads here. */
static const char *errno_hint(const struct nft_msg *m)
{
	switch (m->error) {
	case ENFILE:
		return m->type == NFT_MSG_NEWSETELEM ? "set is full" : NULL;
	case EEXIST:
		return m->type == NFT_MSG_NEWTABLE ? "table already exists" : NULL;
	case ENOENT:
		return m->type == NFT_MSG_NEWSETELEM || m->type == NFT_MSG_DELSETELEM ?
			       "no such table, set or element" :
			       NULL;
	case EOPNOTSUPP:
		return "not supported by this kernel";
	default:
		return NULL;
	}
}

const struct nft_msg *nft_batch_failed(const struct cordon_nft *nft)
{
	for (size_t i = 0; i < nft->n_msgs; i++)
		if (nft->msgs[i].error)
			return &nft->msgs[i];
	return NULL;
}

static int fail_message(struct cordon_nft *nft, const struct nft_msg *m, const char *op,
			struct cordon_error *err)
{
	char elem[INET6_ADDRSTRLEN + 16], detail[256];
	const char *hint = errno_hint(m);
	int pos = 0;

	describe_bad_element(nft, m, elem, sizeof(elem));
	detail[0] = '\0';
	if (elem[0])
		pos += snprintf(detail + pos, sizeof(detail) - pos, ": element %s", elem);
	if (m->kernel_msg[0] && pos < (int)sizeof(detail))
		pos += snprintf(detail + pos, sizeof(detail) - pos, ": %s", m->kernel_msg);
	if (hint && pos < (int)sizeof(detail))
		snprintf(detail + pos, sizeof(detail) - pos, " (%s)", hint);
	return cordon_error_set(err, CORDON_E_NET_POLICY, m->error, "nft: %s: %s%s", op, m->what,
				detail);
}

int nft_batch_commit(struct cordon_nft *nft, const char *op, struct cordon_error *err)
{
	int fd = mnl_socket_get_fd(nft->sock);
	struct nlmsghdr *end;
	int batch_error = 0;
	bool stray = false;
	ssize_t r;

	batch_reserve(nft, MNL_NLMSG_HDRLEN * 4);
	end = nftnl_batch_end(nft->buf + nft->len, nft->seq++);
	nft->len += NLMSG_ALIGN(end->nlmsg_len);

	/* A netlink message larger than the send buffer is refused outright. */
	socket_buffer_grow(nft, SO_SNDBUFFORCE, SO_SNDBUF, &nft->sndbuf, nft->len + 4096);
	socket_buffer_grow(nft, SO_RCVBUFFORCE, SO_RCVBUF, &nft->rcvbuf,
			   (nft->n_msgs + 1) * NFT_ACK_FOOTPRINT);

	do
		r = send(fd, nft->buf, nft->len, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno,
					"nft: %s: send batch of %zu bytes", op, nft->len);

	for (;;) {
		struct iovec iov = { nft->rx, NFT_RX_SIZE };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		const struct nlmsghdr *nlh;
		int left;

		r = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r < 0)
			/* ENOBUFS: acks were lost, so what happened is unknown. */
			return cordon_error_set(err, CORDON_E_INTERNAL, errno,
						"nft: %s: reading acks", op);
		left = (int)r;
		for (nlh = (const void *)nft->rx; mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_pid != nft->portid ||
			    !record_ack(nft, nlh, &batch_error))
				stray = true;
		}
	}

	for (size_t i = 0; i < nft->n_msgs; i++)
		if (nft->msgs[i].error)
			return fail_message(nft, &nft->msgs[i], op, err);
	if (batch_error)
		return cordon_error_set(err, CORDON_E_NET_POLICY, batch_error,
					"nft: %s: batch refused", op);
	for (size_t i = 0; i < nft->n_msgs; i++)
		if (!nft->msgs[i].acked)
			return cordon_error_set(err, CORDON_E_INTERNAL, EPROTO,
						"nft: %s: %s: no ack from the kernel%s", op,
						nft->msgs[i].what,
						stray ? " (unexpected replies)" : "");
	return 0;
}

struct nlmsghdr *nft_request_msg(struct cordon_nft *nft, uint16_t type, uint16_t flags)
{
	batch_reset(nft);
	batch_reserve(nft, NFT_MSG_RESERVE);
	return nftnl_nlmsg_build_hdr(nft->buf, type, NFPROTO_INET, flags, nft->seq++);
}

/* After a failed request: what the kernel still has for us (the rest of
 * a dump, continued as we read) would otherwise answer the next one. */
static void drain(struct cordon_nft *nft)
{
	int fd = mnl_socket_get_fd(nft->sock);

	while (recv(fd, nft->rx, NFT_RX_SIZE, MSG_DONTWAIT) >= 0 || errno == EINTR)
		;
}

int nft_request(struct cordon_nft *nft, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
		const char *what, struct cordon_error *err)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t r;
	int ret;

	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	/* Built in buf by nft_request_msg: the next reset clears it. */
	if ((char *)nlh == nft->buf)
		nft->len = NLMSG_ALIGN(nlh->nlmsg_len);
	if (mnl_socket_sendto(nft->sock, nlh, nlh->nlmsg_len) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: %s: send", what);
	for (;;) {
		r = mnl_socket_recvfrom(nft->sock, nft->rx, NFT_RX_SIZE);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: %s: receive", what);
			drain(nft);
			return -1;
		}
		ret = mnl_cb_run(nft->rx, (size_t)r, seq, nft->portid, cb, data);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0) {
			/* EINTR here is NLM_F_DUMP_INTR: the ruleset changed mid-dump. */
			cordon_error_set(err, CORDON_E_NET_POLICY, errno, "nft: %s", what);
			drain(nft);
			return -1;
		}
	}
}
