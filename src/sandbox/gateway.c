// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox init's side of allowlisted egress (docs/network.md,
 * "Wiring"); the supervisor's side is net.c. Runs in the init, in the
 * gateway namespace it has just created.
 */
#include <fcntl.h>
#include <string.h>

#include "cordon/nethelper.h"
#include "sandbox-internal.h"

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
		return cordon_error_set(err, CORDON_E_NET_POLICY, 0, "the supervisor gave no uplink");
	memcpy(&up, msg.text, sizeof(up));
	if (up.veth)
		return cordon_nethelper_configure_gateway(&up.helper, err);
	/* pasta configures its tap itself, from its own process: wait for it. */
	return cordon_link_wait_configured(CORDON_GW_UPLINK_IF, up.ipv6, UPLINK_WAIT_MS, err);
}
