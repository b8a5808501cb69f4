// SPDX-License-Identifier: Apache-2.0
/*
 * Allowlisted egress, both halves side by side (docs/network.md,
 * "Wiring"; architecture.md, "The handshake"): what the init does in the
 * gateway namespace G it makes, and what the supervisor does from the
 * host for it. The rest of the wiring is beside this file: the uplink
 * (uplink.c, nethelper.c), what the gateway blocks and its ruleset
 * (hostaddr.c), the DNS proxy's process (proxy.c), the report
 * (report.c).
 *
 * The supervisor's side. The init has made G and the link to the
 * workload, and handed over (SYNC_NET) G itself, a netfilter socket and
 * the DNS proxy's sockets, all living in G. From the host side we then,
 * as the supervisor's loop brings us each step,
 *   1. start the DNS proxy, a process of its own in G (proxy.c), on the
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

#include "cordon/nethelper.h"
#include "egress.h"

int egress_fail(struct cordon_error *err, int errnum, const char *fmt, ...)
{
	char msg[sizeof(err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cordon_error_set(err, CORDON_E_NET_POLICY, errnum, "network: %s", msg);
}

/* --- the init's side, in G ------------------------------------------------------ */

/* How long the init waits for pasta to configure the uplink. */
#define UPLINK_WAIT_MS 10000

/*
 * We have just entered the gateway namespace G (see sandbox_child), with
 * the host's /proc still visible: lo up, forwarding on (in G only), the
 * DNS proxy's sockets and a netfilter socket. Then hand the supervisor
 * what it serves or configures from outside: G and our user namespace
 * (for the uplink), the netfilter socket (the ruleset, then the allow
 * sets) and the DNS sockets (UDP and TCP on the gateway's IPv4 and IPv6
 * address). Sockets keep the namespace they were made
 * in. Sent before the filesystem is built, so that the uplink (a helper
 * or pasta) is set up while we mount.
 */
int sandbox_gateway_start(const struct child_ctx *ctx, struct cordon_error *err)
{
	struct sync_msg msg = { .type = SYNC_NET };
	_cleanup_close_ int gw_ns = -1, userns = -1;
	int udp[CORDON_GW_DNS_SOCKETS] = { -1, -1 }, tcp[CORDON_GW_DNS_SOCKETS] = { -1, -1 };
	struct cordon_nft *nft;
	int fds[SYNC_NET_FDS], r;

	if (cordon_gateway_prepare(err) < 0 || cordon_gateway_dns_sockets(udp, tcp, err) < 0)
		return -1;
	cordon_trace("gateway-prepare");
	gw_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	/* Ours to give: a rootless supervisor cannot open it (we share its mm's user namespace). */
	userns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	nft = gw_ns >= 0 && userns >= 0 ? cordon_nft_open(err) : NULL;
	if (gw_ns < 0 || userns < 0 || !nft) {
		for (size_t i = 0; i < CORDON_GW_DNS_SOCKETS; i++) {
			cordon_closep(&udp[i]);
			cordon_closep(&tcp[i]);
		}
		if (gw_ns < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
						"opening the gateway namespace");
		if (userns < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
						"opening the user namespace");
		return cordon_error_wrap(err, "gateway");
	}
	fds[SYNC_NET_FD_NETNS] = gw_ns;
	fds[SYNC_NET_FD_NFT] = cordon_nft_fd(nft);
	fds[SYNC_NET_FD_USERNS] = userns;
	for (size_t i = 0; i < CORDON_GW_DNS_SOCKETS; i++) {
		fds[SYNC_NET_FD_UDP + i] = udp[i];
		fds[SYNC_NET_FD_TCP + i] = tcp[i];
	}
	r = sync_send(ctx->sync_fd, &msg, fds, SYNC_NET_FDS);
	cordon_trace("gateway-sent");
	cordon_nft_close(nft);
	for (size_t i = 0; i < CORDON_GW_DNS_SOCKETS; i++) {
		close(udp[i]);
		close(tcp[i]);
	}
	if (r < 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, -r, "handing the gateway over");
	return 0;
}

/* The supervisor has the uplink and the rules in place: finish our side of it. */
int sandbox_gateway_finish(const struct child_ctx *ctx, struct cordon_error *err)
{
	struct sync_msg msg;
	struct sync_uplink up;
	size_t n_fds = 0;
	ssize_t r = sync_recv(ctx->sync_fd, &msg, NULL, &n_fds);

	if (r <= 0 || msg.type != SYNC_UPLINK)
		return cordon_error_set(err, CORDON_E_NET_POLICY, 0,
					"the supervisor gave no uplink");
	cordon_trace("uplink-recv");
	memcpy(&up, msg.text, sizeof(up));
	if (up.veth)
		return cordon_nethelper_configure_gateway(&up.helper, err);
	/* pasta configures its tap itself, from its own process: wait for it. */
	return cordon_link_wait_configured(CORDON_GW_UPLINK_IF, up.ipv6, UPLINK_WAIT_MS, err);
}

/* --- the supervisor's side --------------------------------------------------------- */

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
		cordon_trace("proxy-start");
	}
	n->release = (struct sync_uplink){ 0 };
	if (net->backend == CORDON_NET_BACKEND_VETH) {
		n->uplink_veth = true;
		if (cordon_nethelper_run(net->helper_path, n->spec->id, gw_ns, net->pool,
					 &n->uplink, err) < 0)
			return cordon_error_wrap(err, "network: uplink");
		n->release.veth = true;
		n->release.helper = n->uplink;
		cordon_trace("nethelper");
	} else {
		if (egress_pasta_start(n, userns, gw_ns, err) < 0)
			return -1;
		n->release.ipv6 = egress_host_routes_ipv6();
		cordon_trace("pasta-start");
	}
	if (egress_commit_ruleset(n, err) < 0)
		return -1;
	cordon_trace("nft-commit");
	return 0;
}

int sandbox_net_release(struct sandbox_net *n, int sync_fd, struct cordon_error *err)
{
	struct sync_msg up = { .type = SYNC_UPLINK };
	int r;

	memcpy(up.text, &n->release, sizeof(n->release));
	r = sync_send(sync_fd, &up, NULL, 0);
	if (r < 0)
		return egress_fail(err, -r, "releasing the gateway");
	cordon_trace("uplink-sent");
	n->released = true;
	return 0;
}

void sandbox_net_finish(struct sandbox_net *n)
{
	struct cordon_error err = { 0 };
	struct cordon_net_report *rep = &n->result->net;
	struct cordon_nft_counters counters;

	egress_pasta_kill(n);
	if (n->nft && cordon_nft_read_counters(n->nft, &counters, &err) == 0) {
		rep->dropped_known = true;
		rep->dropped_packets = counters.dropped_packets;
		rep->dropped_bytes = counters.dropped_bytes;
		/* By destination, for the audit's denied event (sandbox/audit.c frees them). */
		if (n->audit && cordon_nft_read_drops(n->nft, &n->drops, &n->n_drops, &err) < 0)
			n->n_drops = 0;
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
	cordon_closep(&n->addr_watch);
	free(TAKE_PTR(n->blocked));
	egress_admitted_free(n);
	free(TAKE_PTR(n->extra));
	n->n_extra = 0;
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
	n->allowlist = spec->net.allowlist;
	if (spec->net.enabled)
		cordon_allowlist_fingerprint(spec->net.allowlist, result->net.fingerprint);
}
