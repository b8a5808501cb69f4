/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allowlisted egress inside the sandbox module: what its files share
 * beyond sandbox-internal.h (which holds what the rest of the sandbox
 * calls: struct sandbox_net and the sandbox_net_* functions).
 *
 *   egress.c    both halves of the handshake: the init's in G, the
 *               supervisor's from the host; init and finish
 *   uplink.c    pasta, started and watched
 *   nethelper.c the client of cordon-nethelper (the rootful veth)
 *   hostaddr.c  what the gateway blocks (the host's addresses, watched;
 *               its gateways) and G's ruleset
 *   proxy.c     the DNS proxy's process and the supervisor's end of its
 *               channel
 *   report.c    the names and addresses for --result-json
 *   json.c      the "network" object of --print-profile and the result
 */
#ifndef CORDON_SANDBOX_EGRESS_H
#define CORDON_SANDBOX_EGRESS_H

#include "../sandbox-internal.h"

/* CORDON_E_NET_POLICY, "network: " and the message; returns -1. */
int egress_fail(struct cordon_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * admitted.c: the addresses admitted into the allow sets and their
 * names. Until when a stays in the sets (0: not known, or ended); is a
 * known with a name (ended or not: an update's cut spares its flows);
 * record an admit of a for name; a new policy's verdict on every entry
 * (apply: names it refuses dropped, entries left without one freed),
 * the live ones kept written to keep/keep_ms (room for
 * egress_admitted_live of them), their count; free it all.
 */
uint64_t egress_admitted_until(const struct sandbox_net *n, const struct cordon_addr *a,
			       uint64_t now_ms);
bool egress_admitted_known(const struct sandbox_net *n, const struct cordon_addr *a);
void egress_admitted_put(struct sandbox_net *n, const struct cordon_addr *a, const char *name,
			 uint64_t until_ms, uint64_t now_ms);
size_t egress_admitted_revet(struct sandbox_net *n, const struct cordon_allowlist *al,
			     const struct cordon_cidr *blocked, size_t n_blocked, bool apply,
			     uint64_t now_ms, struct cordon_addr *keep, uint32_t *keep_ms);
size_t egress_admitted_live(const struct sandbox_net *n, uint64_t now_ms);
void egress_admitted_free(struct sandbox_net *n);
const char *egress_name_text(const struct egress_name *name);

/* proxy.c: tell the proxy a new allowlist, and wait for its answer. */
int egress_proxy_policy(struct sandbox_net *n, const struct cordon_allowlist *al,
			struct cordon_error *err);

/* uplink.c */
int egress_pasta_start(struct sandbox_net *n, int userns, int gw_ns, struct cordon_error *err);
/* SIGKILL, at once; its exit is waited for later (sandbox_net_reap). */
void egress_pasta_kill(struct sandbox_net *n);

/* hostaddr.c: does the host route IPv6 (pasta's tap will then too); G's ruleset. */
bool egress_host_routes_ipv6(void);
int egress_commit_ruleset(struct sandbox_net *n, struct cordon_error *err);

#endif
