// SPDX-License-Identifier: Apache-2.0
/*
 * A live update of a running sandbox's allowlist (`cordon update
 * --net-allow/--net-deny`, docs/network.md "Changing the policy of a
 * running sandbox"), in this order:
 *
 *   1. the new list: the edits applied to the list in force, checked as
 *      --net-allow is (nothing changes if one is refused);
 *   2. the blocked ranges made anew for it (an allowed private CIDR
 *      opens its range; a removed one closes it again);
 *   3. every admitted address re-vetted with the names it was admitted
 *      for: it stays while one of them is still allowed;
 *   4. one nft transaction: static, blocked and allow sets replaced;
 *   5. the gateway's flows the new policy does not allow cut from
 *      conntrack, so that an open connection ends at its next packet;
 *   6. the proxy told, and its answer waited for.
 * Until step 4 commits nothing has changed and the update is refused
 * with its reason. A failure after it (a cut or a proxy that does not
 * follow) would leave a policy half applied: the caller ends the
 * sandbox.
 */
#include <string.h>

#include "egress.h"

struct cut {
	const struct sandbox_net *n;
	const struct cordon_allowlist *al;
	struct cordon_gateway_addrs gw;
};

static bool blocked_by(const struct cordon_cidr *blocked, size_t n, const struct cordon_addr *a)
{
	struct cordon_addr v4[8];
	size_t n4 = cordon_addr_embedded4(a, v4);

	for (size_t i = 0; i < n; i++) {
		if (cordon_cidr_contains(&blocked[i], a))
			return true;
		for (size_t k = 0; k < n4; k++)
			if (cordon_cidr_contains(&blocked[i], &v4[k]))
				return true;
	}
	return false;
}

static bool same(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET ? 4 : 16) == 0;
}

/*
 * A flow survives the update if the new policy allows its destination:
 * not blocked, and listed, or admitted (even if its DNS answer has
 * ended: the connection outlived it) for a name still allowed. Flows to
 * the gateway itself (DNS to the proxy) always stay. Whatever its source:
 * only the workload's own address gets past prerouting, but a flow is
 * judged by where it goes, not by who claims to send it.
 */
static bool flow_keep(const struct cordon_addr *src, const struct cordon_addr *dst, void *opaque)
{
	const struct cut *c = opaque;

	(void)src;
	if (same(dst, &c->gw.gw4) || same(dst, &c->gw.gw6))
		return true;
	if (blocked_by(c->n->blocked, c->n->n_blocked, dst))
		return false;
	return cordon_allowlist_match_addr(c->al, dst) || egress_admitted_known(c->n, dst);
}

/* The allowlist's text as the proxy gets it (POLICY): each entry and a newline. */
static size_t policy_text_len(const struct cordon_allowlist *al)
{
	size_t len = 0;

	for (size_t i = 0; i < cordon_allowlist_count(al); i++)
		len += strlen(cordon_allowlist_entry(al, i)->text) + 1;
	return len;
}

static int check_list(const struct sandbox_net *n, const struct cordon_allowlist *al,
		      struct cordon_error *err)
{
	if (cordon_gateway_check_allowlist(al, err) < 0)
		return -1;
	if (!n->spec->net.dns_none)
		return 0;
	for (size_t i = 0; i < cordon_allowlist_count(al); i++) {
		const struct cordon_allow_entry *e = cordon_allowlist_entry(al, i);

		if (e->kind == CORDON_ALLOW_HOST || e->kind == CORDON_ALLOW_WILDCARD)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"allow %s: the sandbox has no DNS (--dns none)",
						e->text);
	}
	return 0;
}

int sandbox_net_update(struct sandbox_net *n, const char *edits, size_t len,
		       struct cordon_error *err)
{
	struct cordon_allowlist *al;
	struct cordon_cidr *blocked = NULL;
	const struct cordon_cidr *statics;
	struct cordon_addr *keep;
	uint32_t *keep_ms;
	uint64_t now_ms = cordon_now_mono_us() / 1000;
	size_t n_blocked, n_keep, n_static, live = egress_admitted_live(n, now_ms), cut = 0;
	struct cordon_nft_policy pol;
	struct cut c = { .n = n };
	int r;

	if (!n->nft)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"the sandbox has no network policy to change (it was "
					"started without --net-allow)");
	al = cordon_allowlist_edit(n->allowlist, edits, len, n->spec->net.allow_any, err);
	if (!al)
		return -1;
	if (check_list(n, al, err) < 0) {
		cordon_allowlist_free(al);
		return -1;
	}
	if (policy_text_len(al) > CORDON_DNSCTL_POLICY_MAX) {
		cordon_error_set(err, CORDON_E_USAGE, E2BIG,
				 "the allowlist would be %zu bytes, more than the DNS proxy takes (%u)",
				 policy_text_len(al), CORDON_DNSCTL_POLICY_MAX);
		cordon_allowlist_free(al);
		return -1;
	}
	n_blocked = cordon_gateway_blocked(al, n->extra, n->n_extra, &blocked);
	keep = cordon_xcalloc(live ? live : 1, sizeof(*keep));
	keep_ms = cordon_xcalloc(live ? live : 1, sizeof(*keep_ms));
	n_keep = egress_admitted_revet(n, al, blocked, n_blocked, false, now_ms, keep, keep_ms);
	/* Not in the initializer: the order its expressions are evaluated in is unspecified. */
	n_static = cordon_allowlist_cidrs(al, &statics);
	pol = (struct cordon_nft_policy){
		.n_static = n_static,
		.statics = statics,
		.blocked = blocked,
		.n_blocked = n_blocked,
		.allow = keep,
		.allow_ms = keep_ms,
		.n_allow = n_keep,
	};
	r = cordon_nft_replace_policy(n->nft, &pol, err);
	free(keep);
	free(keep_ms);
	if (r < 0) {
		free(blocked);
		cordon_allowlist_free(al);
		return cordon_error_wrap(err, "network: the new policy");
	}
	/* Committed: from here the new policy is the one in force. */
	egress_admitted_revet(n, al, blocked, n_blocked, true, now_ms, NULL, NULL);
	free(n->blocked);
	n->blocked = blocked;
	n->n_blocked = n_blocked;
	cordon_allowlist_free(n->result->net.allowlist);
	n->result->net.allowlist = al;
	n->allowlist = al;
	cordon_allowlist_fingerprint(al, n->result->net.fingerprint);
	c.al = al;
	cordon_gateway_addrs(&c.gw);
	if (cordon_nft_ct_cut(n->nft, flow_keep, &c, &cut, err) < 0) {
		cordon_error_wrap(err, "network: the new policy is in force, but the "
				       "connections it forbids could not be cut");
		return -2;
	}
	cordon_debug("network: policy %s in force; %zu connections cut",
		     n->result->net.fingerprint, cut);
	return egress_proxy_policy(n, al, err) < 0 ? -2 : 0;
}
