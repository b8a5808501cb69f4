// SPDX-License-Identifier: Apache-2.0
/* Links, addresses and routes through libnl-route-3, in the caller's netns. */
#include <net/if.h>
#include <string.h>

#include "netlib.h"

struct cordon_link {
	struct nl_sock *sk;
};

static void nl_addrp(struct nl_addr **a)
{
	if (*a)
		nl_addr_put(*a);
}

static void rtnl_linkp(struct rtnl_link **l)
{
	if (*l)
		rtnl_link_put(*l);
}

/* libnl's codes are negative NLE_*; its text is what a user can act on. */
static int nl_fail(struct cordon_error *err, int nlerr, const char *what, const char *name)
{
	return cordon_error_set(err, CORDON_E_NET_POLICY, 0, "%s %s: %s", what, name,
				nl_geterror(nlerr));
}

struct cordon_link *cordon_link_open(struct cordon_error *err)
{
	struct cordon_link *l;
	int r;

	if (netlib_ready(CORDON_NETLIB_LINK, "netlink", err) < 0)
		return NULL;
	l = cordon_xcalloc(1, sizeof(*l));
	l->sk = nl_socket_alloc();
	if (!l->sk) {
		free(l);
		cordon_error_set(err, CORDON_E_NET_POLICY, ENOMEM, "netlink socket");
		return NULL;
	}
	r = nl_connect(l->sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_fail(err, r, "netlink", "connect");
		nl_socket_free(l->sk);
		free(l);
		return NULL;
	}
	return l;
}

void cordon_link_close(struct cordon_link *l)
{
	if (!l)
		return;
	nl_socket_free(l->sk);
	free(l);
}

/* A veth pair; the peer goes into the namespace of peer_netns_fd or of peer_pid, if given. */
static int veth_add(struct cordon_link *l, const char *name, const char *peer_name,
		    int peer_netns_fd, pid_t peer_pid, uint32_t group, struct cordon_error *err)
{
	_cleanup_(rtnl_linkp) struct rtnl_link *veth = rtnl_link_veth_alloc();
	struct rtnl_link *peer;
	int r;

	if (!veth)
		return cordon_error_set(err, CORDON_E_NET_POLICY, ENOMEM, "veth");
	rtnl_link_set_name(veth, name);
	if (group)
		rtnl_link_set_group(veth, group);
	peer = rtnl_link_veth_get_peer(veth);
	rtnl_link_set_name(peer, peer_name);
	if (peer_netns_fd >= 0)
		rtnl_link_set_ns_fd(peer, peer_netns_fd);
	else if (peer_pid > 0)
		rtnl_link_set_ns_pid(peer, peer_pid);
	rtnl_link_put(peer);
	r = rtnl_link_add(l->sk, veth, NLM_F_CREATE | NLM_F_EXCL);
	if (r < 0)
		return nl_fail(err, r, "creating veth", name);
	return 0;
}

int cordon_link_veth(struct cordon_link *l, const char *name, const char *peer_name,
		     int peer_netns_fd, uint32_t group, struct cordon_error *err)
{
	return veth_add(l, name, peer_name, peer_netns_fd, 0, group, err);
}

int cordon_link_veth_to_pid(struct cordon_link *l, const char *name, const char *peer_name,
			    pid_t peer_pid, struct cordon_error *err)
{
	return veth_add(l, name, peer_name, -1, peer_pid, 0, err);
}

static int ifindex_of(struct cordon_link *l, const char *name, struct cordon_error *err)
{
	_cleanup_(rtnl_linkp) struct rtnl_link *link = NULL;
	int r = rtnl_link_get_kernel(l->sk, 0, name, &link);

	if (r < 0)
		return nl_fail(err, r, "finding link", name);
	return rtnl_link_get_ifindex(link);
}

int cordon_link_up(struct cordon_link *l, const char *name, struct cordon_error *err)
{
	_cleanup_(rtnl_linkp) struct rtnl_link *link = NULL, *change = rtnl_link_alloc();
	int r = rtnl_link_get_kernel(l->sk, 0, name, &link);

	if (r < 0)
		return nl_fail(err, r, "finding link", name);
	if (!change)
		return cordon_error_set(err, CORDON_E_NET_POLICY, ENOMEM, "link change");
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(l->sk, link, change, 0);
	if (r < 0)
		return nl_fail(err, r, "bringing up", name);
	return 0;
}

static int to_nl_addr(const struct cordon_addr *a, unsigned prefix, struct nl_addr **out)
{
	struct nl_addr *n = nl_addr_build(a->family, a->u.bytes, a->family == AF_INET ? 4 : 16);

	if (!n)
		return -NLE_NOMEM;
	nl_addr_set_prefixlen(n, (int)prefix);
	*out = n;
	return 0;
}

int cordon_link_addr(struct cordon_link *l, const char *name, const struct cordon_addr *a,
		     unsigned prefix, struct cordon_error *err)
{
	_cleanup_(nl_addrp) struct nl_addr *local = NULL;
	struct rtnl_addr *addr;
	int ifindex = ifindex_of(l, name, err), r;

	if (ifindex < 0)
		return -1;
	addr = rtnl_addr_alloc();
	if (!addr || to_nl_addr(a, prefix, &local) < 0) {
		if (addr)
			rtnl_addr_put(addr);
		return cordon_error_set(err, CORDON_E_NET_POLICY, ENOMEM, "address");
	}
	rtnl_addr_set_ifindex(addr, ifindex);
	rtnl_addr_set_local(addr, local);
	/* IPv6: usable at once, no duplicate address detection on a private /64. */
	if (a->family == AF_INET6)
		rtnl_addr_set_flags(addr, IFA_F_NODAD);
	r = rtnl_addr_add(l->sk, addr, 0);
	rtnl_addr_put(addr);
	if (r < 0)
		return nl_fail(err, r, "adding an address to", name);
	return 0;
}

int cordon_link_default_route(struct cordon_link *l, const char *name, const struct cordon_addr *gw,
			      struct cordon_error *err)
{
	_cleanup_(nl_addrp) struct nl_addr *dst = NULL, *via = NULL;
	struct rtnl_route *route;
	struct rtnl_nexthop *nh;
	static const struct cordon_addr any4 = { .family = AF_INET }, any6 = { .family = AF_INET6 };
	int ifindex = ifindex_of(l, name, err), r;

	if (ifindex < 0)
		return -1;
	route = rtnl_route_alloc();
	nh = rtnl_route_nh_alloc();
	if (!route || !nh || to_nl_addr(gw->family == AF_INET ? &any4 : &any6, 0, &dst) < 0 ||
	    to_nl_addr(gw, gw->family == AF_INET ? 32 : 128, &via) < 0) {
		if (route)
			rtnl_route_put(route);
		if (nh)
			rtnl_route_nh_free(nh);
		return cordon_error_set(err, CORDON_E_NET_POLICY, ENOMEM, "route");
	}
	rtnl_route_set_family(route, (uint8_t)gw->family);
	rtnl_route_set_dst(route, dst);
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(route, nh); /* the route owns nh from here */
	r = rtnl_route_add(l->sk, route, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_route_put(route);
	if (r < 0)
		return nl_fail(err, r, "default route via", name);
	return 0;
}
