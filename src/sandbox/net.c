// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's side of allowlisted egress (docs/network.md, "Wiring").
 *
 * The init has made the gateway namespace G and the link to the workload,
 * and handed over (SYNC_NET) G itself, a netfilter socket and the DNS
 * proxy's sockets, all living in G. From the host side we then
 *   1. give G its uplink: cordon-nethelper (veth) or pasta, both of which
 *      need the host's side of things;
 *   2. commit G's ruleset through the netfilter socket (the allow sets
 *      start empty: only listed CIDRs pass until DNS attests more);
 *   3. start the DNS proxy (it asks upstream from the host's namespace);
 *   4. tell the init how to finish the uplink (SYNC_UPLINK); it then
 *      releases the workload.
 * Every failure before the workload runs is exit 125; the caller kills
 * the sandbox, and G, with its links, dies with it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "sandbox-internal.h"

#define NET_HANDOVER_TIMEOUT_MS 30000

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

/* The proxy's decisions, for --result-json. */
static void on_dns_event(void *opaque, const struct cordon_dns_event *ev)
{
	struct sandbox_net *n = opaque;
	struct cordon_net_name *name;

	if (!ev->name || !*ev->name)
		return;
	name = report_name(&n->result->net, ev->name);
	if (!name)
		return;
	if (ev->allowed)
		name->allowed = true;
	else
		name->denied = true;
	for (size_t i = 0; i < ev->n_added; i++)
		report_addr(&name->added, &ev->added[i], CORDON_VET_OK);
	for (size_t i = 0; i < ev->n_refused; i++)
		report_addr(&name->refused, &ev->refused[i], ev->refused_why[i]);
}

static int on_dns_insert(void *opaque, const struct cordon_addr *addrs, size_t n,
			 uint32_t timeout_ms)
{
	struct sandbox_net *net = opaque;
	struct cordon_error err = { 0 };

	if (cordon_nft_allow(net->nft, addrs, n, timeout_ms, &err) < 0)
		return err.errnum ? -err.errnum : -EIO;
	return 0;
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
	for (const char *const *o = (const char *const[]){ "-t", "-u", "-T", "-U", NULL }; *o; o++) {
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

/* --- the handover ------------------------------------------------------------ */

/* Wait for SYNC_NET and its five fds; anything else is the init's failure, passed on. */
static int receive_gateway(struct sandbox_net *n, int sync_fd, struct sync_msg *other,
			   int fds[5], struct cordon_error *err)
{
	struct pollfd p = { .fd = sync_fd, .events = POLLIN };
	size_t n_fds = 5;
	ssize_t r;

	r = poll(&p, 1, NET_HANDOVER_TIMEOUT_MS);
	if (r == 0)
		return fail(err, ETIMEDOUT, "the sandbox did not hand over its gateway");
	r = sync_recv(sync_fd, other, fds, &n_fds);
	if (r <= 0)
		return 1; /* the init died: the supervise loop finds out why */
	if (other->type != SYNC_NET) {
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		return 1;
	}
	if (n_fds != 5) {
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		return fail(err, EPROTO, "the gateway handover carried %zu fds", n_fds);
	}
	return 0;
}

static int commit_ruleset(struct sandbox_net *n, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	struct cordon_gateway_addrs gw;
	_cleanup_(addr_list_free) struct addr_list extra = { 0 };
	_cleanup_free_ struct cordon_cidr *blocked = NULL;
	const struct cordon_cidr *statics;
	size_t n_blocked, n_static;
	struct cordon_nft_config cfg;

	cordon_gateway_addrs(&gw);
	if (n->uplink_veth)
		push_extra(&extra, &n->uplink.host_addr);
	if (!net->allow_host_loopback && host_gateways(&extra, err) < 0)
		return -1;
	if (host_addresses(&extra, err) < 0)
		return -1;
	n_blocked = cordon_gateway_blocked(net->allowlist, extra.v, extra.n, &blocked);
	n_static = cordon_allowlist_cidrs(net->allowlist, &statics);
	cfg = (struct cordon_nft_config){
		.workload_if = CORDON_GW_IF,
		.uplink_if = CORDON_GW_UPLINK_IF,
		.proxy4 = gw.gw4,
		.proxy6 = gw.gw6,
		.masquerade = true,
		.static_allow = statics,
		.n_static = n_static,
		.blocked = blocked,
		.n_blocked = n_blocked,
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

	return s && cordon_parse_u64(s, &v) == 0 && v > 0 && v <= CORDON_DNS_TTL_FLOOR_S
		       ? (uint32_t)v
		       : 0;
}
#else
static uint32_t ttl_floor_s(void)
{
	return 0; /* the proxy's default, CORDON_DNS_TTL_FLOOR_S */
}
#endif

static int start_proxy(struct sandbox_net *n, int udp, int tcp, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	struct cordon_dnsproxy_config cfg = {
		.allowlist = net->allowlist,
		.upstreams = net->upstreams,
		.n_upstreams = net->n_upstreams,
		.qps = 200,
		.ttl_floor_s = ttl_floor_s(),
		.insert = on_dns_insert,
		.event = on_dns_event,
		.opaque = n,
	};

	n->proxy = cordon_dnsproxy_new(&cfg, udp, tcp, err);
	if (!n->proxy)
		return cordon_error_wrap(err, "network");
	return 0;
}

int sandbox_net_setup(struct sandbox_net *n, pid_t init_pid, int sync_fd, struct sync_msg *other,
		      struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	struct sync_msg up = { .type = SYNC_UPLINK };
	struct sync_uplink payload = { 0 };
	int fds[5] = { -1, -1, -1, -1, -1 }, r;
	_cleanup_close_ int gw_ns = -1, udp = -1, tcp = -1, userns = -1;

	other->type = 0;
	r = receive_gateway(n, sync_fd, other, fds, err);
	if (r != 0)
		return r;
	gw_ns = fds[0];
	udp = fds[2];
	tcp = fds[3];
	userns = fds[4];
	n->nft = cordon_nft_open_fd(fds[1], err);
	if (!n->nft) {
		close(fds[1]);
		return cordon_error_wrap(err, "network");
	}

	if (net->backend == CORDON_NET_BACKEND_VETH) {
		n->uplink_veth = true;
		if (cordon_nethelper_run(net->helper_path, n->spec->id, gw_ns, net->pool, &n->uplink,
					 err) < 0)
			return cordon_error_wrap(err, "network: uplink");
		payload.veth = true;
		payload.helper = n->uplink;
	} else {
		if (pasta_start(n, userns, gw_ns, err) < 0)
			return -1;
		payload.ipv6 = host_routes_ipv6();
	}
	if (commit_ruleset(n, err) < 0)
		return -1;
	if (net->dns_none) {
		cordon_closep(&udp);
		cordon_closep(&tcp);
	} else if (start_proxy(n, TAKE_FD(udp), TAKE_FD(tcp), err) < 0) {
		return -1;
	}
	memcpy(up.text, &payload, sizeof(payload));
	r = sync_send(sync_fd, &up, NULL, 0);
	if (r < 0)
		return fail(err, -r, "releasing the gateway");
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
	if (n->proxy) {
		cordon_dnsproxy_stats(n->proxy, &rep->dns);
		rep->dns_known = true;
	}
	if (n->uplink_veth) {
		cordon_addr_format(&n->uplink.host_addr, rep->uplink_host, sizeof(rep->uplink_host));
		cordon_addr_format(&n->uplink.gateway_addr, rep->uplink_gateway,
				   sizeof(rep->uplink_gateway));
	}
	pasta_stop(n);
	cordon_dnsproxy_free(TAKE_PTR(n->proxy));
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
	result->net.enabled = spec->net.enabled;
	result->net.spec = spec;
	if (spec->net.enabled)
		cordon_allowlist_fingerprint(spec->net.allowlist, result->net.fingerprint);
}
