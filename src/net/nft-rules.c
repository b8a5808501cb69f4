// SPDX-License-Identifier: Apache-2.0
/*
 * The ruleset of a gateway namespace, as nft would print it:
 *
 *   table inet cordon {
 *     counter dropped { }
 *     set allow4   { type ipv4_addr; flags timeout; size N; }
 *     set allow6   { type ipv6_addr; flags timeout; size N; }
 *     set static4  { type ipv4_addr; flags interval; elements = { ... } }
 *     set static6  { type ipv6_addr; flags interval; ... }
 *     set blocked4 { type ipv4_addr; flags interval; ... }
 *     set blocked6 { type ipv6_addr; flags interval; ... }
 *     set dropped4 { type ipv4_addr; flags dynamic; size 1024; }
 *     set dropped6 { type ipv6_addr; flags dynamic; size 1024; }
 *
 *     chain prerouting { type filter hook prerouting priority raw; policy accept;
 *       ip6 daddr ff02::/16 meta l4proto icmpv6 accept
 *       iif != "lo" fib saddr . iif oif missing counter name dropped drop
 *       iifname W ip6 saddr fe80::/10 accept
 *       iifname W ip saddr != WORKLOAD4 counter name dropped drop   (and ip6)
 *     }
 *     chain input { type filter hook input priority 0; policy drop;
 *       iif "lo" accept
 *       ct state established,related accept
 *       icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
 *       iifname W ip saddr WORKLOAD4 ip daddr PROXY4 udp dport 53 accept   (and tcp, ip6)
 *     }
 *     chain forward { type filter hook forward priority 0; policy drop;
 *       ct state established,related accept
 *       iifname W ip daddr @blocked4 add @dropped4 { ip daddr counter }  (and ip6)
 *       iifname W ip daddr @blocked4 counter name dropped drop    (and ip6)
 *       iifname W ip6 daddr ::ffff:0:0/96 ip6 daddr[96:32] @blocked4
 *         counter name dropped drop        (and each embedded form, see below)
 *       iifname W ct state new ct count over MAX_FLOWS counter name dropped drop
 *       iifname W ip daddr @static4 accept                        (and ip6)
 *       iifname W ip daddr @allow4 accept                         (and ip6)
 *       iifname W meta nfproto ipv4 add @dropped4 { ip daddr counter }  (and ip6)
 *       counter name dropped drop
 *     }
 *     chain output { type filter hook output priority 0; policy drop;
 *       oif "lo" accept
 *       oifname W ip daddr WORKLOAD4 udp sport 53 accept     (and tcp, ip6; not with dns_closed)
 *       oifname W ip daddr WORKLOAD4 meta l4proto icmp accept                (and icmpv6)
 *       icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
 *       icmpv6 type { mld-listener-report, mld-listener-done, mld2-listener-report }
 *         ip6 daddr ff02::/16 accept
 *       oifname U ip daddr UPSTREAM udp dport PORT accept    (and tcp; each upstream)
 *       counter name dropped drop
 *     }
 *     chain postrouting { type nat hook postrouting priority srcnat; policy accept;
 *       oifname U masquerade                     (only with cfg->masquerade)
 *     }
 *   }
 *
 * Why these choices:
 * - The accept rules of forward match only what enters from the workload:
 *   nothing from the uplink side may open a connection inwards.
 * - Blocked ranges come first, so no allowlist entry or DNS answer can
 *   open them; the caller leaves out of cfg->blocked what it wants
 *   reachable (an explicitly allowlisted private CIDR).
 * - One named counter object, "dropped", is fed by every drop but the
 *   input chain's (blocked, embedded forms, the final rules of forward
 *   and output, reverse path): cordon_nft_read_counters reads it by name
 *   with no rule handle to track. What the workload sends to the
 *   gateway itself and input drops is not counted.
 * - The workload's drops by destination (blocked, and the final drop of
 *   forward) are counted per address in dropped4/dropped6, up to 1024
 *   addresses (cordon_nft_read_drops, for the audit log), by rules of
 *   their own in front of the drops: a full set ends the recording
 *   rule (the kernel's NFT_BREAK), never the drop. The embedded forms'
 *   and the flow cap's drops are in the total only.
 * - Reverse-path filtering (prerouting) comes before conntrack: a forged
 *   source never gets as far as a reply, a forward or an ICMP error. On
 *   the workload's link the source must be the workload's own address
 *   (link-local aside): the reverse-path check alone takes any address
 *   of its IPv6 /64.
 * - Port 53 takes the workload's own addresses only, and what the gateway
 *   sends itself goes only to them (the proxy's replies, ICMP errors
 *   about their own packets), to neighbour discovery, and through the
 *   uplink only as DNS to the upstreams cfg->dns_upstreams names, for a
 *   proxy that asks from the gateway. cordon's proxy asks through the
 *   supervisor's sockets in the host's namespace and names none: nothing
 *   of the gateway's own leaves by the uplink at all.
 * - Embedded IPv4 forms of IPv6 destinations are checked against
 *   blocked4 by rule rather than listed in blocked6: every form of every
 *   blocked IPv4 address, including those cordon_nft_block adds while
 *   the sandbox runs, with no element per form.
 * - Neighbour solicitations and advertisements are accepted on input:
 *   without them IPv6 on the workload link (and the DNS proxy's IPv6
 *   address) cannot work under policy drop. ARP is not filtered by inet.
 * - The nat chain exists only with masquerade: a nat hook costs the
 *   nf_nat module and per-packet work for nothing otherwise.
 */
#include <linux/netfilter/nf_conntrack_common.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <string.h>
#include <ctype.h>

#include "nft-internal.h"

/* nft's datatype numbers, which nft list uses to print the keys. */
#define NFT_DATATYPE_IPV4_ADDR 7
#define NFT_DATATYPE_IPV6_ADDR 8

#define LOOPBACK_IFINDEX 1 /* lo is index 1 in every network namespace */
#define DNS_PORT 53
#define PRIORITY_SRCNAT 100 /* NF_IP_PRI_NAT_SRC, nft's "srcnat" */
#define PRIORITY_RAW -300   /* NF_IP_PRI_RAW, nft's "raw": before conntrack */

enum set_id {
	SET_ALLOW4 = 1,
	SET_ALLOW6,
	SET_STATIC4,
	SET_STATIC6,
	SET_BLOCKED4,
	SET_BLOCKED6,
	SET_DROPPED4,
	SET_DROPPED6,
};

static const struct set_def {
	const char *name;
	enum set_id id;
	int family;
	uint32_t flags;
} set_defs[] = {
	{ "allow4", SET_ALLOW4, AF_INET, NFT_SET_TIMEOUT },
	{ "allow6", SET_ALLOW6, AF_INET6, NFT_SET_TIMEOUT },
	{ "static4", SET_STATIC4, AF_INET, NFT_SET_INTERVAL },
	{ "static6", SET_STATIC6, AF_INET6, NFT_SET_INTERVAL },
	{ "blocked4", SET_BLOCKED4, AF_INET, NFT_SET_INTERVAL },
	{ "blocked6", SET_BLOCKED6, AF_INET6, NFT_SET_INTERVAL },
	{ "dropped4", SET_DROPPED4, AF_INET, NFT_SET_EVAL },
	{ "dropped6", SET_DROPPED6, AF_INET6, NFT_SET_EVAL },
};

/* --- config ----------------------------------------------------------- */

/* What the kernel's dev_valid_name() accepts. */
static bool ifname_valid(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len >= IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return false;
	return true;
}

static int check_cidrs(const struct cordon_cidr *c, size_t n, const char *field,
		       struct cordon_error *err)
{
	if (n > 0 && !c)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: %s: %zu entries but no array", field, n);
	for (size_t i = 0; i < n; i++) {
		unsigned max = c[i].addr.family == AF_INET ? 32 : 128;

		if (c[i].addr.family != AF_INET && c[i].addr.family != AF_INET6)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: %s[%zu]: address family %d", field, i,
						c[i].addr.family);
		if (c[i].prefix > max)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: %s[%zu]: prefix /%u", field, i, c[i].prefix);
	}
	return 0;
}

int nft_config_check(const struct cordon_nft_config *cfg, struct cordon_error *err)
{
	if (!ifname_valid(cfg->workload_if))
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: workload interface name '%s' is not valid",
					cfg->workload_if ? cfg->workload_if : "(null)");
	if (cfg->uplink_if && !ifname_valid(cfg->uplink_if))
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: uplink interface name '%s' is not valid",
					cfg->uplink_if);
	if (cfg->masquerade && !cfg->uplink_if)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: masquerade needs an uplink interface");
	if (cfg->proxy4.family != 0 && cfg->proxy4.family != AF_INET)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: proxy4 is not an IPv4 address");
	if (cfg->proxy6.family != 0 && cfg->proxy6.family != AF_INET6)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: proxy6 is not an IPv6 address");
	if (!cfg->dns_closed && !cfg->proxy4.family && !cfg->proxy6.family)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: DNS is open but the proxy has no address");
	if (cfg->workload4.family != 0 && cfg->workload4.family != AF_INET)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: workload4 is not an IPv4 address");
	if (cfg->workload6.family != 0 && cfg->workload6.family != AF_INET6)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: workload6 is not an IPv6 address");
	/* Port 53 takes only the workload's own address: without one, from no one. */
	if (!cfg->dns_closed && ((cfg->proxy4.family && !cfg->workload4.family) ||
				 (cfg->proxy6.family && !cfg->workload6.family)))
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: DNS is open but the workload has no address");
	if (cfg->n_dns_upstreams > CORDON_NFT_DNS_UPSTREAMS_MAX ||
	    (cfg->n_dns_upstreams && !cfg->dns_upstreams))
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: %zu DNS upstreams (at most %d)", cfg->n_dns_upstreams,
					CORDON_NFT_DNS_UPSTREAMS_MAX);
	for (size_t i = 0; i < cfg->n_dns_upstreams; i++) {
		const struct sockaddr_storage *u = &cfg->dns_upstreams[i];

		if ((u->ss_family != AF_INET && u->ss_family != AF_INET6) ||
		    (u->ss_family == AF_INET ? ((const struct sockaddr_in *)u)->sin_port :
					       ((const struct sockaddr_in6 *)u)->sin6_port) == 0)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: DNS upstream %zu is not an address and port",
						i);
	}
	if (cfg->set_size == 0 || cfg->set_size > CORDON_NFT_SET_MAX)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: set size %u is not in 1..%u", cfg->set_size,
					CORDON_NFT_SET_MAX);
	if (cfg->max_flows < CORDON_NET_FLOWS_MIN || cfg->max_flows > CORDON_NET_FLOWS_MAX)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: max_flows %u is not in %u..%u", cfg->max_flows,
					CORDON_NET_FLOWS_MIN, CORDON_NET_FLOWS_MAX);
	if (check_cidrs(cfg->static_allow, cfg->n_static, "static_allow", err) < 0 ||
	    check_cidrs(cfg->blocked, cfg->n_blocked, "blocked", err) < 0)
		return -1;
	return 0;
}

/* --- expressions ------------------------------------------------------ */

/* iifname / oifname: the whole IFNAMSIZ field, NUL padded, an exact match. */
static void match_ifname(struct nftnl_rule *r, uint32_t key, const char *name)
{
	char buf[IFNAMSIZ] = { 0 };

	memcpy(buf, name, strlen(name));
	nft_match_meta(r, key, buf, sizeof(buf));
}

static void match_iif_loopback(struct nftnl_rule *r)
{
	uint32_t index = LOOPBACK_IFINDEX;

	nft_match_meta(r, NFT_META_IIF, &index, sizeof(index));
}

/* In an inet table every network-header match needs its family first. */
static void match_nfproto(struct nftnl_rule *r, int family)
{
	uint8_t proto = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;

	nft_match_meta(r, NFT_META_NFPROTO, &proto, sizeof(proto));
}

static void match_l4proto(struct nftnl_rule *r, uint8_t proto)
{
	nft_match_meta(r, NFT_META_L4PROTO, &proto, sizeof(proto));
}

static void load_daddr(struct nftnl_rule *r, int family)
{
	if (family == AF_INET)
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
	else
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, 16);
}

static void load_saddr(struct nftnl_rule *r, int family)
{
	if (family == AF_INET)
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 12, 4);
	else
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16);
}

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* ip saddr / daddr == a, with the family match first. */
static void match_addr(struct nftnl_rule *r, const struct cordon_addr *a, bool source)
{
	match_nfproto(r, a->family);
	if (source)
		load_saddr(r, a->family);
	else
		load_daddr(r, a->family);
	nft_cmp(r, NFT_CMP_EQ, a->u.bytes, (uint32_t)addr_len(a->family));
}

/* th sport / dport == port (network order), any transport with ports. */
static void match_port(struct nftnl_rule *r, uint16_t port_be, bool source)
{
	nft_load_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, source ? 0 : 2, sizeof(port_be));
	nft_cmp(r, NFT_CMP_EQ, &port_be, sizeof(port_be));
}

/* l4proto icmpv6, icmpv6 type from..to. */
static void match_icmpv6_types(struct nftnl_rule *r, uint8_t from, uint8_t to)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("range"));

	match_nfproto(r, AF_INET6);
	match_l4proto(r, IPPROTO_ICMPV6);
	nft_load_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_RANGE_OP, NFT_RANGE_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_FROM_DATA, &from, sizeof(from));
	nftnl_expr_set(e, NFTNL_EXPR_RANGE_TO_DATA, &to, sizeof(to));
	nftnl_rule_add_expr(r, e);
}

static const struct set_def *set_by_id(enum set_id id)
{
	return &set_defs[id - 1];
}

/* --- objects ---------------------------------------------------------- */

static void put_counter(struct cordon_nft *nft, const char *name)
{
	_cleanup_nft_obj_ struct nftnl_obj *o = nft_must(nftnl_obj_alloc());
	struct nlmsghdr *nlh;

	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, CORDON_NFT_TABLE);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nlh = nft_batch_msg(nft, NFT_MSG_NEWOBJ, NLM_F_CREATE | NLM_F_EXCL, "counter %s", name);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	nft_batch_next(nft, nlh);
}

static void put_set(struct cordon_nft *nft, const struct set_def *def, uint32_t size)
{
	_cleanup_nft_set_ struct nftnl_set *s = nft_must(nftnl_set_alloc());
	struct nlmsghdr *nlh;

	nftnl_set_set_str(s, NFTNL_SET_TABLE, CORDON_NFT_TABLE);
	nftnl_set_set_str(s, NFTNL_SET_NAME, def->name);
	nftnl_set_set_u32(s, NFTNL_SET_ID, def->id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, def->flags);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE,
			  def->family == AF_INET ? NFT_DATATYPE_IPV4_ADDR : NFT_DATATYPE_IPV6_ADDR);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, def->family == AF_INET ? 4 : 16);
	if (size)
		nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, size);
	nlh = nft_batch_msg(nft, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL, "set %s", def->name);
	nftnl_set_nlmsg_build_payload(nlh, s);
	nft_batch_next(nft, nlh);
}

/* Every rule of this file is in table inet cordon. */
static struct nftnl_rule *rule_new(const char *chain)
{
	return nft_rule_new(CORDON_NFT_TABLE, chain);
}

static void put_accept_established(struct cordon_nft *nft, const char *chain)
{
	struct nftnl_rule *r = rule_new(chain);

	nft_match_ct_established(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "ct state established,related accept");
}

/* --- chains ----------------------------------------------------------- */

/* iifname W ip saddr WORKLOAD ip daddr PROXY l4proto udp/tcp th dport 53 accept */
static void put_dns_rule(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
			 const struct cordon_addr *client, const struct cordon_addr *proxy,
			 uint8_t l4proto)
{
	struct nftnl_rule *r = rule_new("input");
	char what[128], from[INET6_ADDRSTRLEN], to[INET6_ADDRSTRLEN];

	match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
	match_addr(r, client, true);
	load_daddr(r, proxy->family);
	nft_cmp(r, NFT_CMP_EQ, proxy->u.bytes, (uint32_t)addr_len(proxy->family));
	match_l4proto(r, l4proto);
	match_port(r, htons(DNS_PORT), false);
	nft_verdict(r, NF_ACCEPT);
	nft_format_key(client->u.bytes, addr_len(client->family), from, sizeof(from));
	nft_format_key(proxy->u.bytes, addr_len(proxy->family), to, sizeof(to));
	snprintf(what, sizeof(what), "DNS %s to %s/%s accept", from, to,
		 l4proto == IPPROTO_UDP ? "udp" : "tcp");
	nft_put_rule(nft, r, what);
}

static void put_input(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	struct nftnl_rule *r;

	nft_put_chain(nft, CORDON_NFT_TABLE, "input", "filter", NF_INET_LOCAL_IN, 0, NF_DROP);

	/* The gateway talks to itself over lo (the proxy's own sockets). */
	r = rule_new("input");
	match_iif_loopback(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "iif lo accept");

	/* The rest of what the workload's TCP connections to the proxy, and their errors, carry. */
	put_accept_established(nft, "input");

	r = rule_new("input");
	match_icmpv6_types(r, ND_NEIGHBOR_SOLICIT, ND_NEIGHBOR_ADVERT);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "icmpv6 neighbour discovery accept");

	if (cfg->dns_closed)
		return;
	if (cfg->proxy4.family == AF_INET) {
		put_dns_rule(nft, cfg, &cfg->workload4, &cfg->proxy4, IPPROTO_UDP);
		put_dns_rule(nft, cfg, &cfg->workload4, &cfg->proxy4, IPPROTO_TCP);
	}
	if (cfg->proxy6.family == AF_INET6) {
		put_dns_rule(nft, cfg, &cfg->workload6, &cfg->proxy6, IPPROTO_UDP);
		put_dns_rule(nft, cfg, &cfg->workload6, &cfg->proxy6, IPPROTO_TCP);
	}
}

/*
 * iifname W [<daddr> @match] add @droppedN { daddr counter }: the
 * destination of a drop that follows, counted by address. Decides
 * nothing: with the set full it ends here, and the drop rule after it
 * still drops.
 */
static void put_drop_record(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
			    int family, const struct set_def *match)
{
	const struct set_def *rec = set_by_id(family == AF_INET ? SET_DROPPED4 : SET_DROPPED6);
	struct nftnl_rule *r = rule_new("forward");
	char what[96];

	match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
	match_nfproto(r, family);
	if (match) {
		load_daddr(r, family);
		nft_lookup(r, match->name, match->id);
	}
	load_daddr(r, family);
	nft_record(r, rec->name, rec->id);
	snprintf(what, sizeof(what), "%s%s add @%s", match ? "daddr @" : "",
		 match ? match->name : "", rec->name);
	nft_put_rule(nft, r, what);
}

/* iifname W <daddr> @set, then drop (counted) or accept. */
static void put_set_rule(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
			 enum set_id id, int v)
{
	const struct set_def *set = set_by_id(id);
	struct nftnl_rule *r;
	char what[96];

	if (v == NF_DROP)
		put_drop_record(nft, cfg, set->family, set);
	r = rule_new("forward");

	match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
	match_nfproto(r, set->family);
	load_daddr(r, set->family);
	nft_lookup(r, set->name, set->id);
	if (v == NF_DROP)
		nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, v);
	snprintf(what, sizeof(what), "daddr @%s %s", set->name, v == NF_DROP ? "drop" : "accept");
	nft_put_rule(nft, r, what);
}

/*
 * Where an IPv6 destination carries an IPv4 address (addr.c's embeddings
 * and decodings): its first len bytes are prefix, and the IPv4 address is
 * the four bytes at `at`, inverted when `inverted`. Each such destination
 * whose IPv4 address is in blocked4 is dropped, so every form of every
 * blocked IPv4 address is, the host's own and those it gains later
 * included, without a range per form in blocked6.
 */
static const struct embedded_form {
	const char *what;
	uint8_t prefix[12];
	uint8_t len, at;
	bool inverted;
} embedded_forms[] = {
	{ "::ffff:0:0/96", { [10] = 0xff, [11] = 0xff }, 12, 12, false },
	{ "::/96", { 0 }, 12, 12, false },
	{ "::ffff:0:0:0/96", { [8] = 0xff, [9] = 0xff }, 12, 12, false },
	{ "64:ff9b::/96", { 0x00, 0x64, 0xff, 0x9b }, 12, 12, false },
	/* The /96 position under any prefix an operator chose in 64:ff9b:1::/48. */
	{ "64:ff9b:1::/48", { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 6, 12, false },
	{ "2002::/16", { 0x20, 0x02 }, 2, 2, false },
	{ "2001::/32 server", { 0x20, 0x01, 0x00, 0x00 }, 4, 4, false },
	{ "2001::/32 client", { 0x20, 0x01, 0x00, 0x00 }, 4, 12, true },
};

static void put_embedded_rule(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
			      const struct embedded_form *f)
{
	static const uint8_t invert[4] = { 0xff, 0xff, 0xff, 0xff };
	const struct set_def *blocked4 = set_by_id(SET_BLOCKED4);
	struct nftnl_rule *r = rule_new("forward");
	char what[96];

	match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
	match_nfproto(r, AF_INET6);
	nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, f->len);
	nft_cmp(r, NFT_CMP_EQ, f->prefix, f->len);
	nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24u + f->at, 4);
	if (f->inverted)
		nft_xor(r, invert, sizeof(invert));
	nft_lookup(r, blocked4->name, blocked4->id);
	nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, NF_DROP);
	snprintf(what, sizeof(what), "ip6 daddr %s carrying @blocked4 drop", f->what);
	nft_put_rule(nft, r, what);
}

/*
 * iifname W ct state new ct count over N drop (counted): a flow the
 * workload opens is tracked in G and, through the veth uplink's
 * masquerade, in the host's namespace, whose table is one for everything
 * there. Without a cap a workload fills it with one datagram per port
 * pair (262,144 entries in ten seconds), and the host and every other
 * sandbox lose new connections the kernel cannot evict. Placed after the
 * blocked drops: only flows that would pass are counted.
 */
static void put_flow_limit(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	uint32_t state = NF_CT_STATE_BIT(IP_CT_NEW);
	struct nftnl_rule *r = rule_new("forward");
	char what[96];

	match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
	nft_load_ct(r, NFT_CT_STATE);
	nft_match_bits(r, &state, sizeof(state));
	nft_match_ct_count_over(r, cfg->max_flows);
	nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, NF_DROP);
	snprintf(what, sizeof(what), "ct state new ct count over %u drop", cfg->max_flows);
	nft_put_rule(nft, r, what);
}

static void put_forward(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	struct nftnl_rule *r;

	nft_put_chain(nft, CORDON_NFT_TABLE, "forward", "filter", NF_INET_FORWARD, 0, NF_DROP);
	put_accept_established(nft, "forward");
	put_set_rule(nft, cfg, SET_BLOCKED4, NF_DROP);
	put_set_rule(nft, cfg, SET_BLOCKED6, NF_DROP);
	for (size_t i = 0; i < ARRAY_SIZE(embedded_forms); i++)
		put_embedded_rule(nft, cfg, &embedded_forms[i]);
	put_flow_limit(nft, cfg);
	put_set_rule(nft, cfg, SET_STATIC4, NF_ACCEPT);
	put_set_rule(nft, cfg, SET_STATIC6, NF_ACCEPT);
	put_set_rule(nft, cfg, SET_ALLOW4, NF_ACCEPT);
	put_set_rule(nft, cfg, SET_ALLOW6, NF_ACCEPT);

	put_drop_record(nft, cfg, AF_INET, NULL);
	put_drop_record(nft, cfg, AF_INET6, NULL);
	/* The policy would drop too, but uncounted. */
	r = rule_new("forward");
	nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "counter dropped drop");
}

/*
 * Strict reverse-path filtering, both families (IPv4 has the rp_filter
 * sysctl too, cordon_gateway_prepare; IPv6 has none): a packet whose
 * source does not route back through the interface it came in on is
 * dropped, and counted, before conntrack sees it.
 */
static void put_prerouting(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	static const uint8_t link_scope[2] = { 0xff, 0x02 };
	struct nftnl_rule *r;
	uint32_t lo = LOOPBACK_IFINDEX;

	nft_put_chain(nft, CORDON_NFT_TABLE, "prerouting", "filter", NF_INET_PRE_ROUTING,
		      PRIORITY_RAW, NF_ACCEPT);
	/*
	 * Link-scoped ICMPv6 (listener reports, neighbour discovery) passes
	 * to the input chain unchecked: a link sends it while its addresses
	 * are still tentative, from :: or from a link-local address this end
	 * has no route back to yet, so the check would count a drop nobody
	 * caused, on a timing race. It is never forwarded; input takes
	 * neighbour discovery only and drops the rest uncounted, and what the
	 * gateway would answer to a forged source is output's to refuse.
	 */
	r = rule_new("prerouting");
	match_nfproto(r, AF_INET6);
	nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, sizeof(link_scope));
	nft_cmp(r, NFT_CMP_EQ, link_scope, sizeof(link_scope));
	match_l4proto(r, IPPROTO_ICMPV6);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "ip6 daddr ff02::/16 meta l4proto icmpv6 accept");

	r = rule_new("prerouting");
	nft_load_meta(r, NFT_META_IIF);
	nft_cmp(r, NFT_CMP_NEQ, &lo, sizeof(lo));
	nft_match_no_route_back(r);
	nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "iif != lo fib saddr . iif oif missing drop");

	/*
	 * From the workload's link, only its own address. The reverse-path
	 * check takes any source its link's prefix routes back to, and
	 * IPv6's is a /64: a workload may send from any address of it
	 * (IPV6_FREEBIND needs no privilege), and a flow from one the
	 * gateway does not know as the workload's own is neither the one
	 * the proxy answers nor one a live update's cut can judge by its
	 * source. Link-local sources (neighbour discovery, never forwarded)
	 * pass to input, which takes neighbour discovery only.
	 */
	if (cfg->workload6.family) {
		static const uint8_t ll_first[2] = { 0xfe, 0x80 }, ll_last[2] = { 0xfe, 0xbf };

		r = rule_new("prerouting");
		match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
		match_nfproto(r, AF_INET6);
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 8, sizeof(ll_first));
		nft_cmp(r, NFT_CMP_GTE, ll_first, sizeof(ll_first));
		nft_cmp(r, NFT_CMP_LTE, ll_last, sizeof(ll_last));
		nft_verdict(r, NF_ACCEPT);
		nft_put_rule(nft, r, "iifname W ip6 saddr fe80::/10 accept");
	}
	for (size_t i = 0; i < 2; i++) {
		const struct cordon_addr *w = i ? &cfg->workload6 : &cfg->workload4;

		if (!w->family)
			continue;
		r = rule_new("prerouting");
		match_ifname(r, NFT_META_IIFNAME, cfg->workload_if);
		match_nfproto(r, w->family);
		load_saddr(r, w->family);
		nft_cmp(r, NFT_CMP_NEQ, w->u.bytes, (uint32_t)addr_len(w->family));
		nft_count(r, NFT_COUNTER_DROPPED);
		nft_verdict(r, NF_DROP);
		nft_put_rule(nft, r, i ? "iifname W ip6 saddr != WORKLOAD6 drop" :
					 "iifname W ip saddr != WORKLOAD4 drop");
	}
}

/* ICMPv6 types of MLD reports (RFC 2710: report and done; RFC 3810: v2 report). */
static const uint8_t mld_reports[][2] = {
	{ MLD_LISTENER_REPORT, MLD_LISTENER_REDUCTION },
	{ 143, 143 },
};

/* oifname IF ip daddr A [l4proto P] [th sport/dport PORT] accept */
static void put_output_accept(struct cordon_nft *nft, const char *ifname,
			      const struct cordon_addr *daddr, uint8_t l4proto, uint16_t port_be,
			      bool source_port, const char *what)
{
	struct nftnl_rule *r = rule_new("output");

	match_ifname(r, NFT_META_OIFNAME, ifname);
	match_addr(r, daddr, false);
	match_l4proto(r, l4proto);
	if (port_be)
		match_port(r, port_be, source_port);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, what);
}

/*
 * What the gateway itself sends. Only: its loopback; on the workload link,
 * to the workload's own addresses, the proxy's DNS replies and ICMP (the
 * errors a router owes its sender: unreachable, too big, time exceeded);
 * neighbour discovery; through the uplink, DNS to the configured
 * upstreams the caller names (none, from cordon: its proxy asks through
 * sockets in the host's namespace).
 * Everything else is dropped and counted, above all what the gateway
 * would send for a packet whose source the workload forged: a reply of
 * the proxy, an ICMP error (time exceeded for a TTL of 1, carrying the
 * workload's bytes) going to that source. No "ct state established"
 * accept: every flow the gateway has is matched by what it is.
 */
static void put_output(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	struct nftnl_rule *r;
	uint32_t lo = LOOPBACK_IFINDEX;
	const struct cordon_addr *workload[] = { &cfg->workload4, &cfg->workload6 };

	nft_put_chain(nft, CORDON_NFT_TABLE, "output", "filter", NF_INET_LOCAL_OUT, 0, NF_DROP);
	r = rule_new("output");
	nft_match_meta(r, NFT_META_OIF, &lo, sizeof(lo));
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "oif lo accept");

	for (size_t i = 0; i < ARRAY_SIZE(workload); i++) {
		const struct cordon_addr *w = workload[i];

		if (!w->family)
			continue;
		if (!cfg->dns_closed) {
			put_output_accept(nft, cfg->workload_if, w, IPPROTO_UDP, htons(DNS_PORT),
					  true, "DNS reply to the workload (udp) accept");
			put_output_accept(nft, cfg->workload_if, w, IPPROTO_TCP, htons(DNS_PORT),
					  true, "DNS reply to the workload (tcp) accept");
		}
		put_output_accept(nft, cfg->workload_if, w,
				  w->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, 0, false,
				  "ICMP to the workload accept");
	}

	r = rule_new("output");
	match_icmpv6_types(r, ND_NEIGHBOR_SOLICIT, ND_NEIGHBOR_ADVERT);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "icmpv6 neighbour discovery accept");
	/*
	 * Multicast listener reports, link-scoped: the kernel sends them for
	 * the solicited-node groups of every address it adds, which
	 * neighbour discovery needs; nothing to count as a leak.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(mld_reports); i++) {
		static const uint8_t link_scope[2] = { 0xff, 0x02 };

		r = rule_new("output");
		match_icmpv6_types(r, mld_reports[i][0], mld_reports[i][1]);
		nft_load_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 24, sizeof(link_scope));
		nft_cmp(r, NFT_CMP_EQ, link_scope, sizeof(link_scope));
		nft_verdict(r, NF_ACCEPT);
		nft_put_rule(nft, r, "icmpv6 multicast listener report to ff02::/16 accept");
	}

	for (size_t i = 0; cfg->uplink_if && !cfg->dns_closed && i < cfg->n_dns_upstreams; i++) {
		const struct sockaddr_storage *u = &cfg->dns_upstreams[i];
		struct cordon_addr a = { .family = u->ss_family };
		uint16_t port;

		if (u->ss_family == AF_INET) {
			a.u.v4 = ((const struct sockaddr_in *)u)->sin_addr;
			port = ((const struct sockaddr_in *)u)->sin_port;
		} else {
			a.u.v6 = ((const struct sockaddr_in6 *)u)->sin6_addr;
			port = ((const struct sockaddr_in6 *)u)->sin6_port;
		}
		put_output_accept(nft, cfg->uplink_if, &a, IPPROTO_UDP, port, false,
				  "DNS to an upstream (udp) accept");
		put_output_accept(nft, cfg->uplink_if, &a, IPPROTO_TCP, port, false,
				  "DNS to an upstream (tcp) accept");
	}

	r = rule_new("output");
	nft_count(r, NFT_COUNTER_DROPPED);
	nft_verdict(r, NF_DROP);
	nft_put_rule(nft, r, "counter dropped drop");
}

static void put_postrouting(struct cordon_nft *nft, const struct cordon_nft_config *cfg)
{
	struct nftnl_rule *r;

	nft_put_chain(nft, CORDON_NFT_TABLE, "postrouting", "nat", NF_INET_POST_ROUTING,
		      PRIORITY_SRCNAT, NF_ACCEPT);
	r = rule_new("postrouting");
	match_ifname(r, NFT_META_OIFNAME, cfg->uplink_if);
	nftnl_rule_add_expr(r, nft_must(nftnl_expr_alloc("masq")));
	nft_put_rule(nft, r, "oifname masquerade");
}

/* Interval sets take their elements from CIDR lists of both families. */
static void put_intervals(struct cordon_nft *nft, enum set_id id, const struct cordon_cidr *cidrs,
			  size_t n)
{
	const struct set_def *set = set_by_id(id);
	_cleanup_free_ struct nft_range *ranges = cordon_xcalloc(n ? n : 1, sizeof(*ranges));
	size_t k = nft_ranges_from_cidrs(cidrs, n, set->family, ranges);

	nft_build_intervals(nft, set->name, set->family, ranges, k);
}

int nft_build_ruleset(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
		      struct cordon_error *err)
{
	if (nft_config_check(cfg, err) < 0)
		return -1;

	/* Order matters within the batch: what a message names must come first. */
	nft_put_table(nft, CORDON_NFT_TABLE, 0, NULL);
	put_counter(nft, NFT_COUNTER_DROPPED);
	for (size_t i = 0; i < ARRAY_SIZE(set_defs); i++)
		put_set(nft, &set_defs[i],
			set_defs[i].flags & NFT_SET_TIMEOUT ? cfg->set_size :
			set_defs[i].flags & NFT_SET_EVAL    ? CORDON_NFT_DROPPED_MAX :
							      0);
	put_intervals(nft, SET_STATIC4, cfg->static_allow, cfg->n_static);
	put_intervals(nft, SET_STATIC6, cfg->static_allow, cfg->n_static);
	put_intervals(nft, SET_BLOCKED4, cfg->blocked, cfg->n_blocked);
	put_intervals(nft, SET_BLOCKED6, cfg->blocked, cfg->n_blocked);
	put_prerouting(nft, cfg);
	put_input(nft, cfg);
	put_forward(nft, cfg);
	put_output(nft, cfg);
	if (cfg->masquerade)
		put_postrouting(nft, cfg);
	return 0;
}
