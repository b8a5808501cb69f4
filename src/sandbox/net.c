// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's side of allowlisted egress (docs/network.md, "Wiring").
 *
 * The init has made the gateway namespace G and the link to the workload,
 * and handed over (SYNC_NET) G itself, a netfilter socket and the DNS
 * proxy's sockets, all living in G. From the host side we then, as the
 * supervisor's loop brings us each step (architecture.md, "The
 * handshake"),
 *   1. start the DNS proxy, a process of its own in G (netproxy.c), on the
 *      listeners the init made (UDP and TCP on the gateway's IPv4 and
 *      IPv6 address): it confines itself meanwhile;
 *   2. give G its uplink: cordon-nethelper (veth) or pasta, both of which
 *      need the host's side of things;
 *   3. commit G's ruleset through the netfilter socket (the allow sets
 *      start empty: only listed CIDRs pass until DNS attests more);
 *   4. once the proxy is READY (at once with --dns none), tell the init
 *      how to finish the uplink (SYNC_UPLINK); it then releases the
 *      workload.
 * While the sandbox runs, the addresses the host gains are added to G's
 * blocked sets as they appear (sandbox_net_watch).
 * Every failure before the workload runs is exit 125; the caller kills
 * the sandbox, and G, with its links, dies with it.
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

#include "sandbox-internal.h"

static int fail(struct cordon_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct cordon_error *err, int errnum, const char *fmt, ...)
{
	char msg[sizeof(err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_NET_POLICY, errnum, "network: %s", msg);
}

/* --- the report ------------------------------------------------------------ */

static struct cordon_net_name *report_name(struct cordon_net_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (strcmp(r->names[i].name, name) == 0)
			return &r->names[i];
	if (r->n_names >= CORDON_NET_REPORT_NAMES_MAX) {
		r->names_truncated = true;
		return NULL;
	}
	r->names = cordon_xrealloc(r->names, (r->n_names + 1) * sizeof(*r->names));
	memset(&r->names[r->n_names], 0, sizeof(*r->names));
	snprintf(r->names[r->n_names].name, sizeof(r->names[0].name), "%s", name);
	return &r->names[r->n_names++];
}

static void report_addr(struct cordon_net_addr_list *l, const struct cordon_addr *a,
			enum cordon_vet why)
{
	for (size_t i = 0; i < l->n; i++)
		if (memcmp(&l->v[i].addr, a, sizeof(*a)) == 0)
			return;
	if (l->n < ARRAY_SIZE(l->v))
		l->v[l->n++] = (struct cordon_net_addr){ *a, why };
}

bool sandbox_net_report_has(struct sandbox_net *n, const char *name)
{
	const struct cordon_net_report *r = &n->result->net;

	for (size_t i = 0; i < r->n_names; i++)
		if (strcmp(r->names[i].name, name) == 0)
			return true;
	return false;
}

void sandbox_net_report(struct sandbox_net *n, const char *name, bool allowed,
			const struct cordon_addr *addrs, size_t n_addrs, const enum cordon_vet *why)
{
	struct cordon_net_name *entry;

	if (!name || !*name)
		return;
	entry = report_name(&n->result->net, name);
	if (!entry)
		return;
	if (allowed)
		entry->allowed = true;
	else
		entry->denied = true;
	for (size_t i = 0; i < n_addrs; i++) {
		if (why[i] == CORDON_VET_OK)
			report_addr(&entry->added, &addrs[i], CORDON_VET_OK);
		else
			report_addr(&entry->refused, &addrs[i], why[i]);
	}
}

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
		return fail(err, errno, "cannot list the host's addresses to block them");
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
		return fail(err, -r, "cannot read the host's routes to block its gateways");
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
		return fail(err, -r, "cannot read the host's IPv6 routes to block its gateways");
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
static bool host_routes_ipv6(void)
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

/* --- uplinks ----------------------------------------------------------------- */

/*
 * pasta joins G (and, to hold CAP_NET_ADMIN there, the sandbox's user
 * namespace), both opened by paths to fds we give it, creates its tap up0 in it, copies
 * the host's addresses and routes onto it (--config-net) and carries
 * G's traffic out through ordinary sockets of ours. No port is
 * forwarded in either direction; DHCP and router advertisements are off
 * (the tap is configured directly; neighbour discovery stays, G needs it
 * to find its IPv6 gateway); without --allow-host-loopback the gateway
 * address is not mapped to the host's loopback. It dies with us: a
 * parent-death signal, and we kill it at the end.
 */
static int pasta_start(struct sandbox_net *n, int userns, int gw_ns, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	const char *argv[32];
	size_t a = 0;
	int ep[2];
	pid_t pid;

	argv[a++] = net->pasta_path;
	argv[a++] = "--foreground";
	argv[a++] = "--quiet";
	argv[a++] = "--config-net";
	argv[a++] = "--ns-ifname";
	argv[a++] = CORDON_GW_UPLINK_IF;
	for (const char *const *o = (const char *const[]){ "-t", "-u", "-T", "-U", NULL }; *o;
	     o++) {
		argv[a++] = *o;
		argv[a++] = "none";
	}
	argv[a++] = "--no-dhcp";
	argv[a++] = "--no-dhcpv6";
	argv[a++] = "--no-ra";
	if (!net->allow_host_loopback)
		argv[a++] = "--no-map-gw";
	/* As root, pasta would become nobody before it joins the namespaces, and fail. */
	if (geteuid() == 0) {
		argv[a++] = "--runas";
		argv[a++] = "0";
	}
	argv[a++] = "--userns";
	argv[a++] = "/proc/self/fd/3";
	argv[a++] = "--netns";
	argv[a++] = "/proc/self/fd/4";
	argv[a] = NULL;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return fail(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		close(ep[0]);
		close(ep[1]);
		return fail(err, errno, "fork");
	}
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(127);
		/* A ^C at the caller's terminal is for the workload (relayed), not the uplink. */
		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Above every fd we hold, then into place: no dup2 clobbers a source. */
		int u = fcntl(userns, F_DUPFD, 100), g = fcntl(gw_ns, F_DUPFD, 100);

		if (devnull < 0 || u < 0 || g < 0 || dup2(devnull, STDIN_FILENO) < 0 ||
		    dup2(devnull, STDOUT_FILENO) < 0 || dup2(ep[1], STDERR_FILENO) < 0 ||
		    dup2(u, 3) < 0 || dup2(g, 4) < 0)
			_exit(127);
		close_range(5, ~0U, 0);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	close(ep[1]);
	n->pasta = pid;
	n->pasta_err = ep[0];
	n->pasta_pidfd = cordon_pidfd_open(pid);
	if (n->pasta_pidfd < 0)
		return fail(err, errno, "pidfd of pasta");
	return 0;
}

/* pasta's last words, for an error message. */
static void pasta_stderr(struct sandbox_net *n, char *buf, size_t cap)
{
	ssize_t r;
	char *nl;

	buf[0] = '\0';
	if (n->pasta_err < 0 || fcntl(n->pasta_err, F_SETFL, O_NONBLOCK) < 0)
		return;
	r = read(n->pasta_err, buf, cap - 1);
	buf[r > 0 ? r : 0] = '\0';
	while ((nl = strrchr(buf, '\n')) && nl[1] == '\0')
		*nl = '\0';
	if ((nl = strrchr(buf, '\n')))
		memmove(buf, nl + 1, strlen(nl + 1) + 1);
}

static void pasta_stop(struct sandbox_net *n)
{
	if (n->pasta_pidfd >= 0) {
		cordon_pidfd_send_signal(n->pasta_pidfd, SIGKILL);
		waitid(P_PIDFD, (id_t)n->pasta_pidfd, &(siginfo_t){ 0 }, WEXITED);
		cordon_closep(&n->pasta_pidfd);
	} else if (n->pasta > 0) {
		kill(n->pasta, SIGKILL);
		waitpid(n->pasta, NULL, 0);
	}
	n->pasta = 0;
	cordon_closep(&n->pasta_err);
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
		return fail(err, errno, "cannot watch the host's addresses (rtnetlink)");
	/* FORCE past rmem_max where we may (root); otherwise as much as allowed. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return fail(err, errno, "cannot watch the host's addresses (rtnetlink bind)");
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
			return fail(err, ENOBUFS,
				    "events of the host's new addresses were lost: %s",
				    "an address it gained may be open");
		if (r < 0)
			return fail(err, errno, "cannot read the host's address events");
		if (r > 65536)
			return fail(err, EMSGSIZE, "an event of the host's addresses was too long");
		/* Only the kernel speaks for the host's addresses. */
		if (from.nl_pid != 0)
			continue;
		if (watch_datagram(n, buf, (size_t)r, err) < 0)
			return -1;
	}
}

/* --- the ruleset --------------------------------------------------------------- */

static int commit_ruleset(struct sandbox_net *n, struct cordon_error *err)
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
		.dns_closed = net->dns_none,
	};
	if (cordon_nft_create(n->nft, &cfg, err) < 0)
		return cordon_error_wrap(err, "network: gateway ruleset");
	return 0;
}

#ifdef CORDON_TEST_LAB
/*
 * Test-only, compiled in only with -DCORDON_TEST_LAB (the lab build,
 * docs/network.md): CORDON_LAB_DNS_TTL_FLOOR (seconds) lowers the TTL
 * floor, so that a test can watch an address expire in seconds.
 */
static uint32_t ttl_floor_s(void)
{
	const char *s = getenv("CORDON_LAB_DNS_TTL_FLOOR");
	uint64_t v;

	return s && cordon_parse_u64(s, &v) == 0 && v > 0 && v <= CORDON_DNS_TTL_FLOOR_S ?
		       (uint32_t)v :
		       0;
}
#else
static uint32_t ttl_floor_s(void)
{
	return 0; /* the proxy's default, CORDON_DNS_TTL_FLOOR_S */
}
#endif

static void close_listeners(int (*fds)[SYNC_NET_FDS - SYNC_NET_FD_UDP])
{
	for (size_t i = 0; i < ARRAY_SIZE(*fds); i++)
		cordon_closep(&(*fds)[i]);
}

int sandbox_net_gateway(struct sandbox_net *n, const struct cordon_idplan *plan,
			int fds[SYNC_NET_FDS], struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	_cleanup_close_ int gw_ns = fds[SYNC_NET_FD_NETNS], userns = fds[SYNC_NET_FD_USERNS];
	/* The DNS listeners, until the proxy has its own copies. */
	_cleanup_(close_listeners) int dns[SYNC_NET_FDS - SYNC_NET_FD_UDP];

	memcpy(dns, fds + SYNC_NET_FD_UDP, sizeof(dns));
	n->nft = cordon_nft_open_fd(fds[SYNC_NET_FD_NFT], err);
	if (!n->nft) {
		close(fds[SYNC_NET_FD_NFT]);
		return cordon_error_wrap(err, "network");
	}
	/* The proxy confines itself while the uplink is made; it serves once released. */
	if (!net->dns_none) {
		sandbox_net_proxy_ids(n, plan);
		if (sandbox_net_proxy_start(n, dns, userns, gw_ns, err) < 0)
			return -1;
	}
	n->release = (struct sync_uplink){ 0 };
	if (net->backend == CORDON_NET_BACKEND_VETH) {
		n->uplink_veth = true;
		if (cordon_nethelper_run(net->helper_path, n->spec->id, gw_ns, net->pool,
					 &n->uplink, err) < 0)
			return cordon_error_wrap(err, "network: uplink");
		n->release.veth = true;
		n->release.helper = n->uplink;
	} else {
		if (pasta_start(n, userns, gw_ns, err) < 0)
			return -1;
		n->release.ipv6 = host_routes_ipv6();
	}
	return commit_ruleset(n, err);
}

int sandbox_net_release(struct sandbox_net *n, int sync_fd, struct cordon_error *err)
{
	struct sync_msg up = { .type = SYNC_UPLINK };
	int r;

	memcpy(up.text, &n->release, sizeof(n->release));
	r = sync_send(sync_fd, &up, NULL, 0);
	if (r < 0)
		return fail(err, -r, "releasing the gateway");
	n->released = true;
	return 0;
}

/*
 * For pasta: its tap is configured once the init has seen it (the init
 * waits for that before it releases the workload). If pasta died first,
 * say why rather than "the sandbox init exited".
 */
bool sandbox_net_uplink_died(struct sandbox_net *n, struct cordon_error *err)
{
	char last[256];
	siginfo_t si = { 0 };

	if (n->pasta_pidfd < 0 ||
	    waitid(P_PIDFD, (id_t)n->pasta_pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid == 0)
		return false;
	pasta_stderr(n, last, sizeof(last));
	fail(err, 0, "pasta exited (status %d)%s%s", si.si_status, last[0] ? ": " : "", last);
	return true;
}

void sandbox_net_finish(struct sandbox_net *n)
{
	struct cordon_error err = { 0 };
	struct cordon_net_report *rep = &n->result->net;
	struct cordon_nft_counters counters;

	if (n->nft && cordon_nft_read_counters(n->nft, &counters, &err) == 0) {
		rep->dropped_known = true;
		rep->dropped_packets = counters.dropped_packets;
		rep->dropped_bytes = counters.dropped_bytes;
	}
	sandbox_net_proxy_stop(n);
	if (n->proxy_stats_known) {
		rep->dns = n->proxy_stats;
		rep->dns_known = true;
	}
	if (n->uplink_veth) {
		cordon_addr_format(&n->uplink.host_addr, rep->uplink_host,
				   sizeof(rep->uplink_host));
		cordon_addr_format(&n->uplink.gateway_addr, rep->uplink_gateway,
				   sizeof(rep->uplink_gateway));
	}
	pasta_stop(n);
	cordon_closep(&n->addr_watch);
	free(TAKE_PTR(n->blocked));
	free(TAKE_PTR(n->admitted));
	n->n_admitted = n->cap_admitted = 0;
	n->n_blocked = 0;
	cordon_nft_close(TAKE_PTR(n->nft));
}

void sandbox_net_init(struct sandbox_net *n, const struct cordon_spec *spec,
		      struct cordon_result *result)
{
	memset(n, 0, sizeof(*n));
	n->spec = spec;
	n->result = result;
	n->pasta_pidfd = -1;
	n->pasta_err = -1;
	n->addr_watch = -1;
	n->proxy_pidfd = -1;
	n->proxy_ctl = -1;
	n->proxy_sockets = -1;
	n->uses_userns = spec->userns != CORDON_USERNS_HOST;
	n->ttl_floor_s = ttl_floor_s();
	result->net.enabled = spec->net.enabled;
	result->net.spec = spec;
	if (spec->net.enabled)
		cordon_allowlist_fingerprint(spec->net.allowlist, result->net.fingerprint);
}
