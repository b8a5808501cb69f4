// SPDX-License-Identifier: Apache-2.0
/*
 * The host's side of every rootful uplink (cordon-nethelper installs it,
 * man/cordon-nethelper.8), as nft would print it:
 *
 *   table inet cordon-host {
 *     comment "cordon-nethelper host table, version 2"
 *     chain input { type filter hook input priority filter; policy accept;
 *       iifgroup 0xc0d0 ct state established,related accept
 *       iifgroup 0xc0d0 drop
 *     }
 *     chain forward { type filter hook forward priority filter; policy accept;
 *       iifgroup 0xc0d0 oifgroup 0xc0d0 drop
 *       iifgroup 0xc0d0 fib saddr . iif oif missing drop
 *       iifgroup 0xc0d0 ct state invalid drop
 *       ct state established,related accept
 *       iifgroup 0xc0d0 meta nfproto ipv4 ct label set 127 accept
 *       iifgroup 0xc0d0 drop
 *       oifgroup 0xc0d0 drop
 *     }
 *     chain postrouting { type nat hook postrouting priority srcnat; policy accept;
 *       ct label 127 masquerade
 *     }
 *   }
 *
 * Why these choices:
 * - Every rule names the cordon link group, and every policy is accept:
 *   the table changes nothing for the host's other traffic. (An accept
 *   here does not override a drop in the host's own tables; see the man
 *   page.)
 * - Traffic to the host itself never reaches forward: input is where
 *   "not to local destinations" is enforced. Only replies to what the host
 *   itself opened come in.
 * - Two cordon links never talk, in either direction, whatever the
 *   conntrack state; nothing new enters a cordon link from elsewhere.
 * - The source check (strict reverse path) comes before the established
 *   rule, so a sandbox cannot write into another sandbox's connections by
 *   borrowing its address.
 * - Only IPv4 leaves: the uplink is IPv4 (up0 has no global IPv6), and an
 *   IPv6 address a sandbox root might add there must not be forwarded by a
 *   host that routes IPv6.
 * - postrouting cannot see the input interface, so forward marks the
 *   connection: conntrack label bit 127, not the packet mark, which policy
 *   routing, Kubernetes, WireGuard and others already use. Matching the
 *   pool's addresses would tie the static table to one request's pool.
 *   nat runs for a connection's first packet only, which forward has
 *   labelled by then.
 */
#include <string.h>
#include <time.h>

#include "cordon/nethelper.h"
#include "nft-internal.h"

#define LOCK_TABLE "cordon-nethelper-lock"
#define HOST_TABLE CORDON_NETHELPER_HOST_TABLE
#define LABEL_BIT 127
#define PRIORITY_FILTER 0
#define PRIORITY_SRCNAT 100 /* NF_IP_PRI_NAT_SRC, nft's "srcnat" */
#define LOCK_RETRY_MS 20
/*
 * The table's comment, which says which version of it is installed: a
 * table without it, or with another, is replaced. Change it with the
 * rules.
 */
#define HOST_TABLE_VERSION "cordon-nethelper host table, version 2"

/* --- the lock ----------------------------------------------------------- */

int cordon_nft_host_lock(struct cordon_nft *nft, unsigned timeout_ms, struct cordon_error *err)
{
	uint64_t deadline = cordon_now_mono_us() + timeout_ms * 1000ull;

	for (;;) {
		const struct timespec pause = { 0, LOCK_RETRY_MS * 1000000L };
		const struct nft_msg *failed;

		nft_batch_begin(nft);
		/* Owned: the kernel deletes the table when this socket closes,
		 * so a helper that dies cannot leave the lock held. */
		nft_put_table(nft, LOCK_TABLE, NFT_TABLE_F_OWNER, NULL);
		if (nft_batch_commit(nft, "lock", err) == 0)
			return 0;
		/* Held: EEXIST, or EPERM for a table another socket owns. */
		failed = nft_batch_failed(nft);
		if (!failed || (failed->error != EEXIST && failed->error != EPERM))
			return -1;
		if (cordon_now_mono_us() >= deadline)
			return cordon_error_set(
				err, CORDON_E_NET_POLICY, 0,
				"lock: another cordon-nethelper has held table inet " LOCK_TABLE
				" for %u ms",
				timeout_ms);
		nanosleep(&pause, NULL);
	}
}

/* --- expressions -------------------------------------------------------- */

static void iifgroup(struct nftnl_rule *r)
{
	uint32_t group = CORDON_NETHELPER_GROUP;

	nft_match_meta(r, NFT_META_IIFGROUP, &group, sizeof(group));
}

static void oifgroup(struct nftnl_rule *r)
{
	uint32_t group = CORDON_NETHELPER_GROUP;

	nft_match_meta(r, NFT_META_OIFGROUP, &group, sizeof(group));
}

static void nfproto_ipv4(struct nftnl_rule *r)
{
	uint8_t proto = NFPROTO_IPV4;

	nft_match_meta(r, NFT_META_NFPROTO, &proto, sizeof(proto));
}

/* The label register: 128 bits as four host-order words, bit n in word n / 32. */
static void label_bits(uint32_t words[4])
{
	memset(words, 0, 4 * sizeof(uint32_t));
	words[LABEL_BIT / 32] = 1u << (LABEL_BIT % 32);
}

static void ct_label_set(struct nftnl_rule *r)
{
	uint32_t words[4];
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("immediate"));

	label_bits(words);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, words, sizeof(words));
	nftnl_rule_add_expr(r, e);
	/* The kernel ORs the bits in: other labels of the connection stay. */
	e = nft_must(nftnl_expr_alloc("ct"));
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_LABELS);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void ct_label_match(struct nftnl_rule *r)
{
	uint32_t words[4];

	label_bits(words);
	nft_load_ct(r, NFT_CT_LABELS);
	nft_match_bits(r, words, sizeof(words));
}

/* --- objects ------------------------------------------------------------ */

/* Every policy is accept: the table changes nothing for the host's other traffic. */
static void put_chain(struct cordon_nft *nft, const char *name, const char *type, uint32_t hook,
		      int32_t prio)
{
	nft_put_chain(nft, HOST_TABLE, name, type, hook, prio, NF_ACCEPT);
}

/* Every rule of this file is in table inet cordon-host. */
static struct nftnl_rule *rule_new(const char *chain)
{
	return nft_rule_new(HOST_TABLE, chain);
}

static void put_input(struct cordon_nft *nft)
{
	struct nftnl_rule *r;

	put_chain(nft, "input", "filter", NF_INET_LOCAL_IN, PRIORITY_FILTER);
	r = rule_new("input");
	iifgroup(r);
	nft_match_ct_established(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "iifgroup ct state established,related accept");
	r = rule_new("input");
	iifgroup(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iifgroup drop");
}

static void put_forward(struct cordon_nft *nft)
{
	struct nftnl_rule *r;

	put_chain(nft, "forward", "filter", NF_INET_FORWARD, PRIORITY_FILTER);
	r = rule_new("forward");
	iifgroup(r);
	oifgroup(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iifgroup oifgroup drop");

	r = rule_new("forward");
	iifgroup(r);
	nft_match_no_route_back(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iifgroup fib saddr . iif oif missing drop");

	/*
	 * What conntrack cannot place, above all an ICMP error about a
	 * connection it does not know (a gateway's time exceeded for a
	 * packet with a forged source): without this it fell through to the
	 * accept below, unlabelled, so it also left unmasqueraded.
	 */
	r = rule_new("forward");
	iifgroup(r);
	nft_match_ct_invalid(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iifgroup ct state invalid drop");

	r = rule_new("forward");
	nft_match_ct_established(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "ct state established,related accept");

	r = rule_new("forward");
	iifgroup(r);
	nfproto_ipv4(r);
	ct_label_set(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "iifgroup ipv4 ct label set accept");

	r = rule_new("forward");
	iifgroup(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iifgroup drop");

	r = rule_new("forward");
	oifgroup(r);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "oifgroup drop");
}

static void put_postrouting(struct cordon_nft *nft)
{
	struct nftnl_rule *r;

	put_chain(nft, "postrouting", "nat", NF_INET_POST_ROUTING, PRIORITY_SRCNAT);
	r = rule_new("postrouting");
	ct_label_match(r);
	nftnl_rule_add_expr(r, nft_must(nftnl_expr_alloc("masq")));
	nft_put_rule(nft, r, "ct label masquerade");
}

static int comment_cb(const struct nftnl_udata *attr, void *data)
{
	const char **comment = data;
	uint8_t len = nftnl_udata_len(attr);
	const char *value = nftnl_udata_get(attr);

	/* nft's own check: a NUL-terminated string filling the attribute. */
	if (nftnl_udata_type(attr) == NFTNL_UDATA_TABLE_COMMENT && len > 0 &&
	    value[len - 1] == '\0' && strlen(value) == (size_t)len - 1)
		*comment = value;
	return 0;
}

/* Is the installed table this version (its comment HOST_TABLE_VERSION)? */
static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	bool *current = data;
	_cleanup_nft_table_ struct nftnl_table *t = nft_must(nftnl_table_alloc());
	const char *comment = NULL;
	const void *ud;
	uint32_t len = 0;

	if (nftnl_table_nlmsg_parse(nlh, t) < 0)
		return MNL_CB_ERROR;
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	if (ud && len)
		nftnl_udata_parse(ud, len, comment_cb, &comment);
	*current = comment && strcmp(comment, HOST_TABLE_VERSION) == 0;
	return MNL_CB_OK;
}

int cordon_nft_host_install(struct cordon_nft *nft, bool *created, struct cordon_error *err)
{
	_cleanup_nft_table_ struct nftnl_table *t = nft_must(nftnl_table_alloc());
	struct nlmsghdr *nlh;
	bool current = false, exists;

	/* Its presence in this version is the whole check. */
	nlh = nft_request_msg(nft, NFT_MSG_GETTABLE, 0);
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, HOST_TABLE);
	nftnl_table_nlmsg_build_payload(nlh, t);
	*created = false;
	exists = nft_request(nft, nlh, table_cb, &current, "table inet " HOST_TABLE, err) == 0;
	if (exists && current)
		return 0;
	if (!exists && err->errnum != ENOENT)
		return -1;

	/*
	 * Made, or an older version replaced, in one batch: no packet ever
	 * sees the host without the table or with half of it. Connections
	 * keep their conntrack labels, so masquerading goes on.
	 */
	nft_batch_begin(nft);
	if (exists) {
		nlh = nft_batch_msg(nft, NFT_MSG_DELTABLE, 0, "table inet %s (an older version)",
				    HOST_TABLE);
		nftnl_table_nlmsg_build_payload(nlh, t);
		nft_batch_next(nft, nlh);
	}
	nft_put_table(nft, HOST_TABLE, 0, HOST_TABLE_VERSION);
	put_input(nft);
	put_forward(nft);
	put_postrouting(nft);
	if (nft_batch_commit(nft, exists ? "replace" : "install", err) < 0)
		return -1;
	*created = true;
	return 0;
}
