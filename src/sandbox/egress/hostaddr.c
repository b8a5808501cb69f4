// SPDX-License-Identifier: Apache-2.0
/*
 * Everything the gateway blocks besides the vetting table: the host's
 * own addresses (read when the ruleset is made, then as the host gains
 * more, from an rtnetlink watch opened before the read), its default
 * gateways and the uplink's host end; and G's ruleset committed through
 * the netfilter socket the init handed over (docs/network.md, "Wiring",
 * step 4).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "egress.h"

/* --- what the blocked sets hold besides the vetting table ----------------- */

/*
 * A growing list: the host may hold any number of addresses, and one
 * left out would be one the sandbox could reach, so nothing is capped
 * and dropped here.
 */
struct addr_list {
	struct cordon_addr *v;
	size_t n, cap;
};

static void addr_list_free(struct addr_list *l)
{
	free(l->v);
	*l = (struct addr_list){ 0 };
}

static void push_extra(struct addr_list *l, const struct cordon_addr *a)
{
	if (!a->family)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = cordon_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = *a;
}

/*
 * Every address of the host's own links: nothing in a sandbox may reach
 * the host. A list we could not read whole is no list to block by.
 */
static int host_addresses(struct addr_list *l, struct cordon_error *err)
{
	struct ifaddrs *ifa = NULL;

	if (getifaddrs(&ifa) < 0)
		return egress_fail(err, errno, "cannot list the host's addresses to block them");
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		struct cordon_addr a = { 0 };

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			a.family = AF_INET;
			a.u.v4 = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			a.family = AF_INET6;
			a.u.v6 = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		} else {
			continue;
		}
		push_extra(l, &a);
	}
	freeifaddrs(ifa);
	return 0;
}

/*
 * The host's default gateways: pasta gives G the same one, and with
 * host loopback mapping off it leads to the real router, which is no
 * destination a sandbox has business with. Without IPv4 routes there is
 * no way to know them, so that is a failure; a kernel without IPv6 has
 * no IPv6 route table and no IPv6 gateway.
 */
static int host_gateways(struct addr_list *l, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = cordon_read_file_at(AT_FDCWD, "/proc/net/route", &text, NULL);
	if (r < 0)
		return egress_fail(err, -r, "cannot read the host's routes to block its gateways");
	for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		char ifname[32];
		unsigned dst, gw, flags;

		if (sscanf(line + 1, "%31s %x %x %x", ifname, &dst, &gw, &flags) == 4 && dst == 0 &&
		    gw != 0) {
			struct cordon_addr a = { .family = AF_INET };

			a.u.v4.s_addr = gw; /* the kernel prints it in network order */
			push_extra(l, &a);
		}
	}
	free(TAKE_PTR(text));
	r = cordon_read_file_at(AT_FDCWD, "/proc/net/ipv6_route", &text, NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return egress_fail(err, -r,
				   "cannot read the host's IPv6 routes to block its gateways");
	for (char *line = text; line && *line;) {
		char dst[33], gw[33];
		unsigned plen;
		char *next = strchr(line, '\n');

		if (sscanf(line, "%32s %x %*s %*s %32s", dst, &plen, gw) == 3 && plen == 0 &&
		    strspn(gw, "0") != 32) {
			struct cordon_addr a = { .family = AF_INET6 };

			for (int k = 0; k < 16; k++) {
				unsigned byte;

				sscanf(gw + 2 * k, "%2x", &byte);
				a.u.bytes[k] = (uint8_t)byte;
			}
			push_extra(l, &a);
		}
		line = next ? next + 1 : NULL;
	}
	return 0;
}

/* pasta copies the host's routes: an IPv6 default route here means one on its tap. */
bool egress_host_routes_ipv6(void)
{
	struct addr_list l = { 0 };
	struct cordon_error err = { 0 };
	bool v6 = false;

	if (host_gateways(&l, &err) == 0)
		for (size_t i = 0; i < l.n && !v6; i++)
			v6 = l.v[i].family == AF_INET6;
	addr_list_free(&l);
	return v6;
}

/* --- the host's addresses as they come and go ------------------------------ */

/*
 * An rtnetlink socket in the namespace whose addresses are blocked (ours),
 * subscribed to its IPv4 and IPv6 address events. It is opened before
 * the addresses are first read, so that an address added between the
 * read and the end of the run is either in the list or in the socket.
 * A large receive buffer: lost events (ENOBUFS) end the sandbox.
 */
static int watch_open(struct sandbox_net *n, struct cordon_error *err)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
	};
	int fd, size = 1 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd < 0)
		return egress_fail(err, errno, "cannot watch the host's addresses (rtnetlink)");
	/* FORCE past rmem_max where we may (root); otherwise as much as allowed. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return egress_fail(err, errno,
				   "cannot watch the host's addresses (rtnetlink bind)");
	}
	n->addr_watch = fd;
	return 0;
}

static bool blocked_covers(const struct sandbox_net *n, const struct cordon_addr *a)
{
	struct cordon_cidr c = { .addr = *a, .prefix = a->family == AF_INET ? 32 : 128 };

	for (size_t i = 0; i < n->n_blocked; i++)
		if (cordon_cidr_within(&c, &n->blocked[i]))
			return true;
	return false;
}

/* The host's address of an RTM_NEWADDR (as getifaddrs takes it: IFA_LOCAL, else IFA_ADDRESS). */
static bool newaddr_parse(const struct nlmsghdr *h, struct cordon_addr *out)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	const void *local = NULL, *address = NULL;
	size_t len = 0;
	int rest;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return false;
	if (ifa->ifa_family == AF_INET)
		len = 4;
	else if (ifa->ifa_family == AF_INET6)
		len = 16;
	else
		return false;
	rest = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifa)));
	for (const struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, rest);
	     rta = RTA_NEXT(rta, rest)) {
		if (RTA_PAYLOAD(rta) != len)
			continue;
		if (rta->rta_type == IFA_LOCAL)
			local = RTA_DATA(rta);
		else if (rta->rta_type == IFA_ADDRESS)
			address = RTA_DATA(rta);
	}
	if (!local)
		local = address;
	if (!local)
		return false;
	memset(out, 0, sizeof(*out));
	out->family = ifa->ifa_family;
	memcpy(out->u.bytes, local, len);
	return true;
}

/* Block what one datagram of events adds; 0 or -1 (err set). */
static int watch_datagram(struct sandbox_net *n, const void *buf, size_t len,
			  struct cordon_error *err)
{
	_cleanup_(addr_list_free) struct addr_list fresh = { 0 };
	int rest = (int)len;

	/* NLMSG_OK, with the signs compared explicitly (clang -Wsign-compare). */
	for (const struct nlmsghdr *h = buf;
	     rest >= (int)sizeof(*h) && h->nlmsg_len >= sizeof(*h) &&
	     h->nlmsg_len <= (unsigned int)rest;
	     h = NLMSG_NEXT(h, rest)) {
		struct cordon_addr a;
		bool again = false;

		if (h->nlmsg_type != RTM_NEWADDR || !newaddr_parse(h, &a) || blocked_covers(n, &a))
			continue;
		/* An address twice in one datagram is one range, not two. */
		for (size_t i = 0; i < fresh.n && !again; i++)
			again = memcmp(&fresh.v[i], &a, sizeof(a)) == 0;
		if (!again)
			push_extra(&fresh, &a);
	}
	if (fresh.n == 0)
		return 0;
	if (cordon_nft_block(n->nft, fresh.v, fresh.n, err) < 0) {
		char a[INET6_ADDRSTRLEN];

		cordon_addr_format(&fresh.v[0], a, sizeof(a));
		return cordon_error_wrap(err,
					 "network: the host gained %s, which cannot be blocked", a);
	}
	n->extra = cordon_xrealloc(n->extra, (n->n_extra + fresh.n) * sizeof(*n->extra));
	memcpy(n->extra + n->n_extra, fresh.v, fresh.n * sizeof(*n->extra));
	n->n_extra += fresh.n;
	n->blocked = cordon_xrealloc(n->blocked, (n->n_blocked + fresh.n) * sizeof(*n->blocked));
	for (size_t i = 0; i < fresh.n; i++)
		n->blocked[n->n_blocked++] = (struct cordon_cidr){
			.addr = fresh.v[i],
			.prefix = fresh.v[i].family == AF_INET ? 32 : 128,
		};
	return 0;
}

int sandbox_net_watch(struct sandbox_net *n, struct cordon_error *err)
{
	/* Address events are small; one that does not fit is one we cannot read. */
	_cleanup_free_ char *buf = cordon_xmalloc(65536);

	for (;;) {
		struct sockaddr_nl from = { 0 };
		socklen_t from_len = sizeof(from);
		ssize_t r = recvfrom(n->addr_watch, buf, 65536, MSG_TRUNC, (struct sockaddr *)&from,
				     &from_len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r < 0 && errno == ENOBUFS)
			return egress_fail(err, ENOBUFS,
					   "events of the host's new addresses were lost: %s",
					   "an address it gained may be open");
		if (r < 0)
			return egress_fail(err, errno, "cannot read the host's address events");
		if (r > 65536)
			return egress_fail(err, EMSGSIZE,
					   "an event of the host's addresses was too long");
		/* Only the kernel speaks for the host's addresses. */
		if (from.nl_pid != 0)
			continue;
		if (watch_datagram(n, buf, (size_t)r, err) < 0)
			return -1;
	}
}

/* --- the ruleset --------------------------------------------------------------- */

int egress_commit_ruleset(struct sandbox_net *n, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	struct cordon_gateway_addrs gw;
	_cleanup_(addr_list_free) struct addr_list extra = { 0 };
	const struct cordon_cidr *statics;
	size_t n_static;
	struct cordon_nft_config cfg;

	cordon_gateway_addrs(&gw);
	if (n->uplink_veth)
		push_extra(&extra, &n->uplink.host_addr);
	if (!net->allow_host_loopback && host_gateways(&extra, err) < 0)
		return -1;
	if (watch_open(n, err) < 0 || host_addresses(&extra, err) < 0)
		return -1;
	n->n_blocked = cordon_gateway_blocked(net->allowlist, extra.v, extra.n, &n->blocked);
	n_static = cordon_allowlist_cidrs(net->allowlist, &statics);
	/* Kept: a live update makes the blocked sets anew from them. */
	n->extra = cordon_xmalloc((extra.n ? extra.n : 1) * sizeof(*n->extra));
	memcpy(n->extra, extra.v, extra.n * sizeof(*n->extra));
	n->n_extra = extra.n;
	cfg = (struct cordon_nft_config){
		.workload_if = CORDON_GW_IF,
		.uplink_if = CORDON_GW_UPLINK_IF,
		.proxy4 = gw.gw4,
		.proxy6 = gw.gw6,
		.workload4 = gw.workload4,
		.workload6 = gw.workload6,
		/*
		 * None: the proxy's upstream sockets are ours, made in the
		 * host's namespace, so nothing of G's own goes out by the
		 * uplink, and nothing may.
		 */
		.dns_upstreams = NULL,
		.n_dns_upstreams = 0,
		.masquerade = true,
		.static_allow = statics,
		.n_static = n_static,
		.blocked = n->blocked,
		.n_blocked = n->n_blocked,
		.set_size = CORDON_NFT_SET_MAX,
		.max_flows = net->max_flows,
		.dns_closed = net->dns_none,
	};
	if (cordon_nft_create(n->nft, &cfg, err) < 0)
		return cordon_error_wrap(err, "network: gateway ruleset");
	return 0;
}
