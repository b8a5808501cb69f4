// SPDX-License-Identifier: Apache-2.0
/*
 * rtnetlink in the helper's own (the host's) network namespace, through
 * libmnl: one request at a time, each acknowledged. See helper.h for why
 * this is not libnl.
 */
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <net/if.h>
#include <string.h>

#include "helper.h"

/* Dump replies come in messages of up to 32 KiB. */
#define HOSTLINK_BUFFER (64 * 1024)

struct hostlink {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;
	char buf[HOSTLINK_BUFFER];
};

struct hostlink *hostlink_open(struct cordon_error *err)
{
	struct hostlink *h = cordon_xcalloc(1, sizeof(*h));

	h->sock = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!h->sock || mnl_socket_bind(h->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		cordon_error_set(err, CORDON_E_NET_POLICY, errno, "rtnetlink socket");
		hostlink_close(h);
		return NULL;
	}
	h->portid = mnl_socket_get_portid(h->sock);
	h->seq = (uint32_t)cordon_now_mono_us();
	return h;
}

void hostlink_close(struct hostlink *h)
{
	if (!h)
		return;
	if (h->sock)
		mnl_socket_close(h->sock);
	free(h);
}

static struct nlmsghdr *message(struct hostlink *h, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(h->buf);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++h->seq;
	return nlh;
}

/* Send nlh; run cb on every reply until the ack (or the end of a dump). */
static int transact(struct hostlink *h, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
		    const char *what, struct cordon_error *err)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t r;
	int ret = MNL_CB_OK; /* "continue" below tests it */

	/* NLM_F_DUMP is two bits, one of which is NLM_F_EXCL. */
	if ((nlh->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(h->sock, nlh, nlh->nlmsg_len) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "%s: send", what);
	do {
		r = mnl_socket_recvfrom(h->sock, h->buf, sizeof(h->buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "%s: receive",
						what);
		ret = mnl_cb_run(h->buf, (size_t)r, seq, h->portid, cb, data);
	} while (ret > MNL_CB_STOP);
	if (ret < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "%s", what);
	return 0;
}

/* --- addresses ---------------------------------------------------------- */

struct networks {
	struct cordon_cidr *v;
	size_t n, cap;
};

static void networks_push(struct networks *nets, const struct nlattr *attr, unsigned prefix)
{
	struct cordon_cidr *c;
	uint32_t a, mask;

	if (mnl_attr_get_payload_len(attr) != 4 || prefix > 32)
		return;
	if (nets->n == nets->cap) {
		nets->cap = nets->cap ? nets->cap * 2 : 16;
		nets->v = cordon_xrealloc(nets->v, nets->cap * sizeof(*nets->v));
	}
	memcpy(&a, mnl_attr_get_payload(attr), 4);
	mask = prefix ? htonl(~0u << (32 - prefix)) : 0;
	c = &nets->v[nets->n++];
	memset(c, 0, sizeof(*c));
	c->addr.family = AF_INET;
	c->addr.u.v4.s_addr = a & mask;
	c->prefix = prefix;
}

static int address_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWADDR || ifa->ifa_family != AF_INET)
		return MNL_CB_OK;
	/* IFA_LOCAL is the address itself; IFA_ADDRESS the peer's on a
	 * point-to-point link (else the same): both networks are taken. */
	mnl_attr_for_each (attr, nlh, sizeof(*ifa)) {
		uint16_t type = mnl_attr_get_type(attr);

		if (type == IFA_LOCAL || type == IFA_ADDRESS)
			networks_push(data, attr, ifa->ifa_prefixlen);
	}
	return MNL_CB_OK;
}

int hostlink_ipv4_networks(struct hostlink *h, struct cordon_cidr **out, size_t *n,
			   struct cordon_error *err)
{
	struct nlmsghdr *nlh = message(h, RTM_GETADDR, NLM_F_DUMP);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	struct networks nets = { 0 };

	ifa->ifa_family = AF_INET;
	if (transact(h, nlh, address_cb, &nets, "listing the host's addresses", err) < 0) {
		free(nets.v);
		return -1;
	}
	*out = nets.v;
	*n = nets.n;
	return 0;
}

/* --- links -------------------------------------------------------------- */

int hostlink_create_veth(struct hostlink *h, const char *name, uint32_t group,
			 const char *peer_name, int peer_netns_fd, int *ifindex,
			 struct cordon_error *err)
{
	struct nlmsghdr *nlh = message(h, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	struct nlattr *linkinfo, *data, *peer;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	unsigned index;

	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_GROUP, group);
	linkinfo = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	/* The peer is born in the gateway namespace: it never exists here,
	 * not even for a moment, so no host process can grab it. */
	peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer_name);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)peer_netns_fd);
	mnl_attr_nest_end(nlh, peer);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, linkinfo);
	if (transact(h, nlh, NULL, NULL, "creating the veth", err) < 0) {
		if (err->errnum == EEXIST)
			return cordon_error_wrap(
				err,
				"%s or %s in the gateway namespace exists already "
				"(a sandbox of that id, or an id of the same hash)",
				name, peer_name);
		return cordon_error_wrap(err, "%s", name);
	}
	/* Under the helpers' lock, and nobody else names links cdr-*. */
	index = if_nametoindex(name);
	if (index == 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "%s: index", name);
	*ifindex = (int)index;
	return 0;
}

int hostlink_add_ipv4(struct hostlink *h, int ifindex, const struct cordon_addr *a, unsigned prefix,
		      struct cordon_error *err)
{
	struct nlmsghdr *nlh = message(h, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	uint32_t mask = prefix ? htonl(~0u << (32 - prefix)) : 0;
	uint32_t brd = a->u.v4.s_addr | ~mask;

	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (uint8_t)prefix;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)ifindex;
	mnl_attr_put(nlh, IFA_LOCAL, 4, &a->u.v4);
	mnl_attr_put(nlh, IFA_ADDRESS, 4, &a->u.v4);
	mnl_attr_put(nlh, IFA_BROADCAST, 4, &brd);
	return transact(h, nlh, NULL, NULL, "adding the host address", err);
}

int hostlink_set_up(struct hostlink *h, int ifindex, struct cordon_error *err)
{
	struct nlmsghdr *nlh = message(h, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	return transact(h, nlh, NULL, NULL, "bringing the host end up", err);
}

int hostlink_delete(struct hostlink *h, int ifindex, struct cordon_error *err)
{
	struct nlmsghdr *nlh = message(h, RTM_DELLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return transact(h, nlh, NULL, NULL, "deleting the veth", err);
}
