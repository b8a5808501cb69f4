// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's internal link: the veth between the workload's network
 * namespace (W) and its gateway namespace (G), the addresses on both
 * ends, and the DNS proxy's sockets in G (docs/network.md, "Wiring").
 *
 * These run inside the sandbox, in the process that owns the namespace
 * in question: the init for G, the workload (before it drops its
 * capabilities) for W. Each works on the calling thread's namespace.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "netlib.h"

void cordon_gateway_addrs(struct cordon_gateway_addrs *out)
{
	bool host_bits;

	memset(out, 0, sizeof(*out));
	/* Compile-time constants: a parse failure is a build mistake. */
	if (cordon_addr_parse(CORDON_GW_ADDR4, &out->gw4) < 0 ||
	    cordon_addr_parse(CORDON_GW_WORKLOAD4, &out->workload4) < 0 ||
	    cordon_addr_parse(CORDON_GW_ADDR6, &out->gw6) < 0 ||
	    cordon_addr_parse(CORDON_GW_WORKLOAD6, &out->workload6) < 0 ||
	    cordon_cidr_parse(CORDON_GW_NET4, &out->net4, &host_bits) < 0 ||
	    cordon_cidr_parse(CORDON_GW_NET6, &out->net6, &host_bits) < 0)
		abort();
}

int cordon_gateway_check_allowlist(const struct cordon_allowlist *al, struct cordon_error *err)
{
	struct cordon_gateway_addrs gw;

	cordon_gateway_addrs(&gw);
	for (size_t i = 0; i < cordon_allowlist_count(al); i++) {
		const struct cordon_allow_entry *e = cordon_allowlist_entry(al, i);

		if (e->kind != CORDON_ALLOW_ADDR && e->kind != CORDON_ALLOW_CIDR)
			continue;
		/* A wider entry (10.0.0.0/8, 0.0.0.0/0) is fine: the link is never forwarded to. */
		if (cordon_cidr_within(&e->cidr, &gw.net4) || cordon_cidr_within(&e->cidr, &gw.net6))
			return cordon_error_set(
				err, CORDON_E_NET_POLICY, 0,
				"allowlist entry '%s' lies in the sandbox's internal link (%s, %s)",
				e->text, CORDON_GW_NET4, CORDON_GW_NET6);
	}
	return 0;
}

/* A sysctl of the calling thread's network namespace (/proc/sys/net follows it). */
static int net_sysctl(const char *path, struct cordon_error *err)
{
	int r = cordon_write_file_at(AT_FDCWD, path, "1", 1);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, -r, "writing %s", path);
	return 0;
}

int cordon_gateway_prepare(struct cordon_error *err)
{
	struct cordon_link *l = cordon_link_open(err);
	int r;

	if (!l)
		return cordon_error_wrap(err, "gateway");
	r = cordon_link_up(l, "lo", err);
	cordon_link_close(l);
	/* Forwarding exists only in this namespace: the host's setting is not touched. */
	if (r == 0)
		r = net_sysctl("/proc/sys/net/ipv4/ip_forward", err);
	if (r == 0)
		r = net_sysctl("/proc/sys/net/ipv6/conf/all/forwarding", err);
	/*
	 * Strict reverse-path filtering on every link, before gw0 and up0
	 * exist (the larger of "all" and a link's own value counts): a
	 * packet from the workload with a forged source is dropped before
	 * the gateway routes it or answers it. A new namespace starts with
	 * the host's IPv4 values (net.core.devconf_inherit_init_net), and
	 * 0, loose or off, is common there. IPv6 has no such sysctl: the
	 * ruleset's prerouting chain does it for both families.
	 */
	if (r == 0)
		r = net_sysctl("/proc/sys/net/ipv4/conf/all/rp_filter", err);
	if (r == 0)
		r = net_sysctl("/proc/sys/net/ipv4/conf/default/rp_filter", err);
	if (r < 0)
		return cordon_error_wrap(err, "gateway");
	return 0;
}

int cordon_gateway_link(pid_t workload_pid, struct cordon_error *err)
{
	struct cordon_gateway_addrs gw;
	struct cordon_link *l;
	int r;

	cordon_gateway_addrs(&gw);
	l = cordon_link_open(err);
	if (!l)
		return cordon_error_wrap(err, "gateway");
	r = cordon_link_veth_to_pid(l, CORDON_GW_IF, CORDON_GW_WORKLOAD_IF, workload_pid, err);
	if (r == 0)
		r = cordon_link_addr(l, CORDON_GW_IF, &gw.gw4, CORDON_GW_PREFIX4, err);
	if (r == 0)
		r = cordon_link_addr(l, CORDON_GW_IF, &gw.gw6, CORDON_GW_PREFIX6, err);
	if (r == 0)
		r = cordon_link_up(l, CORDON_GW_IF, err);
	cordon_link_close(l);
	if (r < 0)
		return cordon_error_wrap(err, "gateway");
	return 0;
}

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78 /* Linux 4.15; not in every libc's headers */
#endif

/*
 * One listener of the proxy on port 53 of the gateway's own address a:
 * bound to that address, never to the wildcard, and an IPv6 socket is
 * IPv6 only. A dual-stack [::]:53 socket took IPv4 queries as
 * IPv4-mapped sources and answered an IPv6 packet from ::ffff:X as IPv4,
 * to X, wherever X was. The address is not on gw0 yet (the link is made
 * once the workload has its namespace): FREEBIND lets the bind come
 * first, and the socket receives once the address is there.
 */
static int dns_socket(const struct cordon_addr *a, int type, struct cordon_error *err)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd, on = 1;
	char text[INET6_ADDRSTRLEN];

	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(53);
		sin->sin_addr = a->u.v4;
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(53);
		sin6->sin6_addr = a->u.v6;
		len = sizeof(*sin6);
	}
	cordon_addr_format(a, text, sizeof(text));
	fd = socket(a->family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "DNS proxy socket");
	if ((a->family == AF_INET6 &&
	     (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) < 0 ||
	      setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &on, sizeof(on)) < 0)) ||
	    (a->family == AF_INET &&
	     setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &on, sizeof(on)) < 0) ||
	    (type == SOCK_STREAM &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0)) {
		int e = errno;

		close(fd);
		return cordon_error_set(
			err, CORDON_E_NET_POLICY, e, "DNS proxy socket on %s%s%s:53",
			a->family == AF_INET6 ? "[" : "", text, a->family == AF_INET6 ? "]" : "");
	}
	return fd;
}

int cordon_gateway_dns_sockets(int udp[CORDON_GW_DNS_SOCKETS], int tcp[CORDON_GW_DNS_SOCKETS],
			       struct cordon_error *err)
{
	struct cordon_gateway_addrs gw;
	const struct cordon_addr *addrs[CORDON_GW_DNS_SOCKETS];

	cordon_gateway_addrs(&gw);
	addrs[0] = &gw.gw4;
	addrs[1] = &gw.gw6;
	for (size_t i = 0; i < CORDON_GW_DNS_SOCKETS; i++)
		udp[i] = tcp[i] = -1;
	for (size_t i = 0; i < CORDON_GW_DNS_SOCKETS; i++) {
		udp[i] = dns_socket(addrs[i], SOCK_DGRAM, err);
		if (udp[i] >= 0)
			tcp[i] = dns_socket(addrs[i], SOCK_STREAM, err);
		if (udp[i] < 0 || tcp[i] < 0) {
			for (size_t k = 0; k <= i; k++) {
				cordon_closep(&udp[k]);
				cordon_closep(&tcp[k]);
			}
			return -1;
		}
	}
	return 0;
}

int cordon_gateway_workload_link(struct cordon_error *err)
{
	struct cordon_gateway_addrs gw;
	struct cordon_link *l;
	int r;

	cordon_gateway_addrs(&gw);
	l = cordon_link_open(err);
	if (!l)
		return cordon_error_wrap(err, "workload link");
	r = cordon_link_addr(l, CORDON_GW_WORKLOAD_IF, &gw.workload4, CORDON_GW_PREFIX4, err);
	if (r == 0)
		r = cordon_link_addr(l, CORDON_GW_WORKLOAD_IF, &gw.workload6, CORDON_GW_PREFIX6, err);
	/* Up before the routes: the kernel refuses a gateway on a down link. */
	if (r == 0)
		r = cordon_link_up(l, CORDON_GW_WORKLOAD_IF, err);
	if (r == 0)
		r = cordon_link_default_route(l, CORDON_GW_WORKLOAD_IF, &gw.gw4, err);
	if (r == 0)
		r = cordon_link_default_route(l, CORDON_GW_WORKLOAD_IF, &gw.gw6, err);
	cordon_link_close(l);
	if (r < 0)
		return cordon_error_wrap(err, "workload link");
	return 0;
}

static bool has_default_route(struct nl_sock *sk, int family)
{
	struct nl_cache *routes = NULL;
	bool found = false;

	if (rtnl_route_alloc_cache(sk, family, 0, &routes) < 0)
		return false;
	for (struct nl_object *o = nl_cache_get_first(routes); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *rt = (struct rtnl_route *)o;
		struct nl_addr *dst = rtnl_route_get_dst(rt);

		if (rtnl_route_get_table(rt) == RT_TABLE_MAIN && dst && nl_addr_get_prefixlen(dst) == 0)
			found = true;
	}
	nl_cache_free(routes);
	return found;
}

/* ifname is up with an IPv4 address, and the default routes asked for exist. */
static bool uplink_ready(struct nl_sock *sk, const char *ifname, bool ipv6)
{
	struct ifaddrs *ifa = NULL;
	bool addr = false;

	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
			if (strcmp(i->ifa_name, ifname) == 0 && (i->ifa_flags & IFF_UP) &&
			    i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
				addr = true;
		freeifaddrs(ifa);
	}
	return addr && has_default_route(sk, AF_INET) && (!ipv6 || has_default_route(sk, AF_INET6));
}

int cordon_link_wait_configured(const char *ifname, bool ipv6, unsigned timeout_ms,
				struct cordon_error *err)
{
	uint64_t deadline = cordon_now_mono_us() + (uint64_t)timeout_ms * 1000;
	struct nl_sock *sk;
	bool ready = false;

	if (netlib_ready(CORDON_NETLIB_LINK, "netlink", err) < 0)
		return -1;
	sk = nl_socket_alloc();
	if (!sk || nl_connect(sk, NETLINK_ROUTE) < 0) {
		if (sk)
			nl_socket_free(sk);
		return cordon_error_set(err, CORDON_E_NET_POLICY, 0, "netlink socket");
	}
	for (;;) {
		const struct timespec pause = { 0, 2 * 1000 * 1000 };

		ready = uplink_ready(sk, ifname, ipv6);
		if (ready || cordon_now_mono_us() >= deadline)
			break;
		nanosleep(&pause, NULL);
	}
	nl_socket_free(sk);
	if (!ready)
		return cordon_error_set(err, CORDON_E_NET_POLICY, ETIMEDOUT,
					"uplink %s was not configured within %u ms", ifname,
					timeout_ms);
	return 0;
}
