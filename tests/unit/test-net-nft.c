// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/net/nft*.c against the real kernel: every test runs
 * in a network namespace of its own (unshare(CLONE_NEWNET) in the
 * checked fixture, so in the forked test process), never in the host's.
 * The ruleset is read back through netlink with libnftnl and, when the
 * nft binary is installed, with `nft -j list ruleset` as a second reader.
 * Without root (or without nf_tables) the whole program is skipped.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "cordon/net.h"
#include "../../src/net/nft-internal.h"
#include "unit.h"

static struct cordon_nft *nft;

static void netns_setup(void)
{
	struct cordon_error err = { 0 };

	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	nft = cordon_nft_open(&err);
	ck_assert_msg(nft != NULL, "cordon_nft_open: %s", err.msg);
}

static void netns_teardown(void)
{
	cordon_nft_close(nft);
	nft = NULL;
}

/* --- fixtures ---------------------------------------------------------- */

static struct cordon_addr addr(const char *s)
{
	struct cordon_addr a = { 0 };

	a.family = strchr(s, ':') ? AF_INET6 : AF_INET;
	ck_assert_msg(inet_pton(a.family, s, a.u.bytes) == 1, "bad test address %s", s);
	return a;
}

static struct cordon_cidr cidr(const char *s)
{
	char buf[64];
	char *slash;
	struct cordon_cidr c;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	c.addr = addr(buf);
	c.prefix = (unsigned)atoi(slash + 1);
	return c;
}

static void format_cidr(const struct cordon_cidr *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(c->addr.family, c->addr.u.bytes, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, c->prefix);
}

/* Overlaps and duplicates on purpose: the module merges them. */
static const char *const static_text[] = {
	"10.0.0.0/8", "192.0.2.1/32", "10.1.2.3/32", "2001:db8::/32", "2001:db8:ffff::1/128",
};
static const char *const blocked_text[] = {
	"0.0.0.0/8",   "169.254.0.0/16", "169.254.169.254/32",
	"240.0.0.0/4", "fe80::/10",	 "fd00:ec2::254/128",
};

struct test_config {
	struct cordon_nft_config cfg;
	struct cordon_cidr static_allow[ARRAY_SIZE(static_text)];
	struct cordon_cidr blocked[ARRAY_SIZE(blocked_text)];
	union {
		struct sockaddr_storage upstream_ss;
		struct sockaddr_in upstream;
	};
};

static void config_init(struct test_config *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < ARRAY_SIZE(static_text); i++)
		t->static_allow[i] = cidr(static_text[i]);
	for (size_t i = 0; i < ARRAY_SIZE(blocked_text); i++)
		t->blocked[i] = cidr(blocked_text[i]);
	t->cfg.workload_if = "gw0";
	t->cfg.uplink_if = "up0";
	t->cfg.proxy4 = addr("10.200.0.1");
	t->cfg.proxy6 = addr("fd00:200::1");
	t->cfg.workload4 = addr("10.200.0.2");
	t->cfg.workload6 = addr("fd00:200::2");
	t->upstream.sin_family = AF_INET;
	t->upstream.sin_port = htons(53);
	inet_pton(AF_INET, "198.51.100.53", &t->upstream.sin_addr);
	t->cfg.dns_upstreams = (const struct sockaddr_storage *)&t->upstream_ss;
	t->cfg.n_dns_upstreams = 1;
	t->cfg.masquerade = true;
	t->cfg.static_allow = t->static_allow;
	t->cfg.n_static = ARRAY_SIZE(static_text);
	t->cfg.blocked = t->blocked;
	t->cfg.n_blocked = ARRAY_SIZE(blocked_text);
	t->cfg.set_size = 1024;
	t->cfg.max_flows = 4096;
}

static void create_or_fail(const struct cordon_nft_config *cfg)
{
	struct cordon_error err = { 0 };
	char msg[1024];

	if (cordon_nft_create(nft, cfg, &err) < 0) {
		cordon_error_message(&err, msg, sizeof(msg));
		ck_abort_msg("cordon_nft_create: %s", msg);
	}
}

static void allow_or_fail(const char *const *text, size_t n, uint32_t timeout_ms)
{
	struct cordon_addr a[16];
	struct cordon_error err = { 0 };
	char msg[1024];

	ck_assert_uint_le(n, ARRAY_SIZE(a));
	for (size_t i = 0; i < n; i++)
		a[i] = addr(text[i]);
	if (cordon_nft_allow(nft, a, n, timeout_ms, &err) < 0) {
		cordon_error_message(&err, msg, sizeof(msg));
		ck_abort_msg("cordon_nft_allow: %s", msg);
	}
}

/* A set's contents as one string: "10.0.0.0/8 192.0.2.1/32". */
static void ranges_text(const char *set, char *buf, size_t len)
{
	struct cordon_cidr out[64];
	struct cordon_error err = { 0 };
	size_t n, pos = 0;

	ck_assert_msg(cordon_nft_list_ranges(nft, set, out, ARRAY_SIZE(out), &n, &err) == 0,
		      "list_ranges %s: %s", set, err.msg);
	ck_assert_uint_le(n, ARRAY_SIZE(out));
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char c[64];

		format_cidr(&out[i], c, sizeof(c));
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? " " : "", c);
	}
}

static void set_text(const char *set, char *buf, size_t len)
{
	struct cordon_addr out[64];
	struct cordon_error err = { 0 };
	size_t n, pos = 0;

	ck_assert_msg(cordon_nft_list_set(nft, set, out, ARRAY_SIZE(out), &n, &err) == 0,
		      "list_set %s: %s", set, err.msg);
	ck_assert_uint_le(n, ARRAY_SIZE(out));
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(out[i].family, out[i].u.bytes, a, sizeof(a));
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? " " : "", a);
	}
}

#define assert_set(set, want)                                                                     \
	do {                                                                                      \
		char _got[2048];                                                                  \
		set_text(set, _got, sizeof(_got));                                                \
		ck_assert_msg(!strcmp(_got, want), "set %s is '%s', want '%s'", set, _got, want); \
	} while (0)

#define assert_ranges(set, want)                                                              \
	do {                                                                                  \
		char _got[2048];                                                              \
		ranges_text(set, _got, sizeof(_got));                                         \
		ck_assert_msg(!strcmp(_got, want), "set %s holds '%s', want '%s'", set, _got, \
			      want);                                                          \
	} while (0)

static uint64_t now_ms(void)
{
	return cordon_now_mono_us() / 1000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* --- independent readers (libnftnl dumps) ------------------------------- */

struct chain_info {
	char name[32], type[16];
	uint32_t hook, policy;
	int32_t prio;
};

struct chains {
	struct chain_info v[16];
	size_t n;
};

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct chains *c = data;
	struct nftnl_chain *ch = nftnl_chain_alloc();
	struct chain_info *out;

	ck_assert_int_eq(nftnl_chain_nlmsg_parse(nlh, ch), 0);
	ck_assert_uint_lt(c->n, ARRAY_SIZE(c->v));
	out = &c->v[c->n++];
	snprintf(out->name, sizeof(out->name), "%s", nftnl_chain_get_str(ch, NFTNL_CHAIN_NAME));
	snprintf(out->type, sizeof(out->type), "%s",
		 nftnl_chain_is_set(ch, NFTNL_CHAIN_TYPE) ?
			 nftnl_chain_get_str(ch, NFTNL_CHAIN_TYPE) :
			 "");
	out->hook = nftnl_chain_get_u32(ch, NFTNL_CHAIN_HOOKNUM);
	out->prio = nftnl_chain_get_s32(ch, NFTNL_CHAIN_PRIO);
	out->policy = nftnl_chain_get_u32(ch, NFTNL_CHAIN_POLICY);
	nftnl_chain_free(ch);
	return MNL_CB_OK;
}

static void read_chains(struct chains *c)
{
	struct cordon_error err = { 0 };
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETCHAIN, NLM_F_DUMP);

	c->n = 0;
	ck_assert_msg(nft_request(nft, nlh, chain_cb, c, "dump chains", &err) == 0, "%s", err.msg);
}

static const struct chain_info *find_chain(const struct chains *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

struct set_info {
	char name[32];
	uint32_t flags, key_len, key_type, size;
};

struct sets {
	struct set_info v[16];
	size_t n;
};

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sets *s = data;
	struct nftnl_set *set = nftnl_set_alloc();
	struct set_info *out;

	ck_assert_int_eq(nftnl_set_nlmsg_parse(nlh, set), 0);
	ck_assert_uint_lt(s->n, ARRAY_SIZE(s->v));
	out = &s->v[s->n++];
	snprintf(out->name, sizeof(out->name), "%s", nftnl_set_get_str(set, NFTNL_SET_NAME));
	out->flags = nftnl_set_get_u32(set, NFTNL_SET_FLAGS);
	out->key_len = nftnl_set_get_u32(set, NFTNL_SET_KEY_LEN);
	out->key_type = nftnl_set_get_u32(set, NFTNL_SET_KEY_TYPE);
	out->size = nftnl_set_is_set(set, NFTNL_SET_DESC_SIZE) ?
			    nftnl_set_get_u32(set, NFTNL_SET_DESC_SIZE) :
			    0;
	nftnl_set_free(set);
	return MNL_CB_OK;
}

static void read_sets(struct sets *s)
{
	struct cordon_error err = { 0 };
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETSET, NLM_F_DUMP);

	s->n = 0;
	ck_assert_msg(nft_request(nft, nlh, set_cb, s, "dump sets", &err) == 0, "%s", err.msg);
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(size_t *)data)++;
	return MNL_CB_OK;
}

/* How many objects of one kind (tables, chains, sets, rules, objects) exist. */
static size_t count_objects(uint16_t type)
{
	struct cordon_error err = { 0 };
	struct nlmsghdr *nlh = nft_request_msg(nft, type, NLM_F_DUMP);
	size_t n = 0;

	ck_assert_msg(nft_request(nft, nlh, count_cb, &n, "dump", &err) == 0, "%s", err.msg);
	return n;
}

/*
 * A rule rendered back from its expressions, close to nft's syntax:
 * "iifname gw0 nfproto ipv6 ip6 daddr @allow6 accept". Enough to tell
 * every rule of the ruleset apart and to see each match is where the
 * rule needs it.
 */
struct render {
	char out[512];
	size_t pos;
	char loaded[16]; /* what the last load put in the register */
};

static void emit(struct render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct render *r, const char *fmt, ...)
{
	va_list ap;

	if (r->pos && r->pos < sizeof(r->out))
		r->out[r->pos++] = ' ';
	va_start(ap, fmt);
	r->pos += (size_t)vsnprintf(r->out + r->pos, sizeof(r->out) - r->pos, fmt, ap);
	va_end(ap);
	ck_assert_uint_lt(r->pos, sizeof(r->out));
}

static void render_value(struct render *r, const uint8_t *d, uint32_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!strcmp(r->loaded, "iifname") || !strcmp(r->loaded, "oifname"))
		emit(r, "%.*s", (int)len, (const char *)d);
	else if (!strcmp(r->loaded, "nfproto"))
		emit(r, "%s", d[0] == NFPROTO_IPV4 ? "ipv4" : d[0] == NFPROTO_IPV6 ? "ipv6" : "?");
	else if (!strcmp(r->loaded, "l4proto"))
		emit(r, "%s",
		     d[0] == IPPROTO_UDP    ? "udp" :
		     d[0] == IPPROTO_TCP    ? "tcp" :
		     d[0] == IPPROTO_ICMPV6 ? "icmpv6" :
		     d[0] == IPPROTO_ICMP   ? "icmp" :
					      "?");
	else if (!strcmp(r->loaded, "addr") && (len == 4 || len == 16))
		emit(r, "%s", inet_ntop(len == 4 ? AF_INET : AF_INET6, d, a, sizeof(a)));
	else if ((!strcmp(r->loaded, "iif") || !strcmp(r->loaded, "oif")) && len == 4)
		emit(r, "%u", *(const uint32_t *)d);
	else if (!strcmp(r->loaded, "port") && len == 2)
		emit(r, "%u", (unsigned)(d[0] << 8 | d[1]));
	else if (!strcmp(r->loaded, "bytes")) {
		char hex[2 * 16 + 3] = "0x";

		for (uint32_t i = 0; i < len && i < 16; i++)
			snprintf(hex + 2 + 2 * i, 3, "%02x", d[i]);
		emit(r, "%s", hex);
	} else if (len == 4)
		emit(r, "0x%x", *(const uint32_t *)d);
	else if (len == 1)
		emit(r, "%u", d[0]);
	else
		emit(r, "(%u bytes)", len);
}

static int render_expr(struct nftnl_expr *e, void *data)
{
	struct render *r = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	const uint8_t *d;
	uint32_t len;

	if (!strcmp(name, "meta")) {
		static const struct {
			uint32_t key;
			const char *name;
		} keys[] = {
			{ NFT_META_IIF, "iif" },	 { NFT_META_IIFNAME, "iifname" },
			{ NFT_META_OIF, "oif" },	 { NFT_META_OIFNAME, "oifname" },
			{ NFT_META_NFPROTO, "nfproto" }, { NFT_META_L4PROTO, "l4proto" },
		};
		uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

		snprintf(r->loaded, sizeof(r->loaded), "meta%u", key);
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (keys[i].key == key)
				snprintf(r->loaded, sizeof(r->loaded), "%s", keys[i].name);
		emit(r, "%s", r->loaded);
	} else if (!strcmp(name, "payload")) {
		uint32_t base = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE);
		uint32_t off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);

		len = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN);
		snprintf(r->loaded, sizeof(r->loaded), "addr");
		if (base == NFT_PAYLOAD_NETWORK_HEADER && off == 16 && len == 4)
			emit(r, "ip daddr");
		else if (base == NFT_PAYLOAD_NETWORK_HEADER && off == 12 && len == 4)
			emit(r, "ip saddr");
		else if (base == NFT_PAYLOAD_NETWORK_HEADER && off == 24 && len == 16)
			emit(r, "ip6 daddr");
		else if (base == NFT_PAYLOAD_NETWORK_HEADER && off == 8 && len == 16)
			emit(r, "ip6 saddr");
		else if (base == NFT_PAYLOAD_NETWORK_HEADER && off >= 8 && off + len <= 24) {
			/* part of an IPv6 source: bytes from..to */
			emit(r, "ip6 saddr[%u-%u]", off - 8, off - 8 + len - 1);
			snprintf(r->loaded, sizeof(r->loaded), "bytes");
		} else if (base == NFT_PAYLOAD_NETWORK_HEADER && off >= 24 && off + len <= 40) {
			/* part of an IPv6 destination: bytes from..to */
			emit(r, "ip6 daddr[%u-%u]", off - 24, off - 24 + len - 1);
			snprintf(r->loaded, sizeof(r->loaded), "bytes");
		} else if (base == NFT_PAYLOAD_TRANSPORT_HEADER && off == 2 && len == 2) {
			emit(r, "th dport");
			snprintf(r->loaded, sizeof(r->loaded), "port");
		} else if (base == NFT_PAYLOAD_TRANSPORT_HEADER && off == 0 && len == 2) {
			emit(r, "th sport");
			snprintf(r->loaded, sizeof(r->loaded), "port");
		} else if (base == NFT_PAYLOAD_TRANSPORT_HEADER && off == 0 && len == 1) {
			emit(r, "icmpv6 type");
			snprintf(r->loaded, sizeof(r->loaded), "type");
		} else {
			emit(r, "payload(%u,%u,%u)", base, off, len);
			snprintf(r->loaded, sizeof(r->loaded), "bytes");
		}
	} else if (!strcmp(name, "ct")) {
		emit(r, "ct %s",
		     nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY) == NFT_CT_STATE ? "state" : "?");
		snprintf(r->loaded, sizeof(r->loaded), "ct");
	} else if (!strcmp(name, "bitwise")) {
		const uint8_t *x = nftnl_expr_get(e, NFTNL_EXPR_BITWISE_XOR, &len);
		bool xor = false;

		for (uint32_t i = 0; i < len; i++)
			xor |= x[i] != 0;
		d = xor? x : nftnl_expr_get(e, NFTNL_EXPR_BITWISE_MASK, &len);
		emit(r, "%s", xor? "^" : "&");
		render_value(r, d, len);
	} else if (!strcmp(name, "fib")) {
		uint32_t flags = nftnl_expr_get_u32(e, NFTNL_EXPR_FIB_FLAGS);

		emit(r, "fib%s%s oif%s", flags & NFTA_FIB_F_SADDR ? " saddr" : "",
		     flags & NFTA_FIB_F_IIF ? " . iif" : "",
		     flags & NFTA_FIB_F_PRESENT ? " present" : "");
		snprintf(r->loaded, sizeof(r->loaded), "fib");
	} else if (!strcmp(name, "cmp")) {
		uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP);

		if (op != NFT_CMP_EQ)
			emit(r, "%s", op == NFT_CMP_NEQ ? "!=" : op == NFT_CMP_GTE ? ">=" :
							       op == NFT_CMP_LTE ? "<=" : "op?");
		d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);
		render_value(r, d, len);
	} else if (!strcmp(name, "range")) {
		const uint8_t *to;
		uint32_t to_len;

		d = nftnl_expr_get(e, NFTNL_EXPR_RANGE_FROM_DATA, &len);
		to = nftnl_expr_get(e, NFTNL_EXPR_RANGE_TO_DATA, &to_len);
		ck_assert_uint_eq(len, 1);
		ck_assert_uint_eq(to_len, 1);
		emit(r, "%u-%u", d[0], to[0]);
	} else if (!strcmp(name, "lookup")) {
		emit(r, "@%s", nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET));
	} else if (!strcmp(name, "objref")) {
		emit(r, "counter name %s", nftnl_expr_get_str(e, NFTNL_EXPR_OBJREF_IMM_NAME));
	} else if (!strcmp(name, "dynset")) {
		ck_assert_uint_eq(nftnl_expr_get_u32(e, NFTNL_EXPR_DYNSET_OP), NFT_DYNSET_OP_ADD);
		emit(r, "add @%s", nftnl_expr_get_str(e, NFTNL_EXPR_DYNSET_SET_NAME));
	} else if (!strcmp(name, "immediate")) {
		int v = (int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

		emit(r, "%s", v == NF_ACCEPT ? "accept" : v == NF_DROP ? "drop" : "verdict?");
	} else if (!strcmp(name, "connlimit")) {
		emit(r, "ct count%s %u",
		     nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS) & NFT_CONNLIMIT_F_INV ?
			     " over" :
			     "",
		     nftnl_expr_get_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT));
	} else if (!strcmp(name, "masq")) {
		emit(r, "masquerade");
	} else {
		emit(r, "%s?", name);
	}
	return 0;
}

struct rules {
	char v[24][512];
	size_t n;
};

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rules *rs = data;
	struct nftnl_rule *rule = nftnl_rule_alloc();
	struct render r = { 0 };

	ck_assert_int_eq(nftnl_rule_nlmsg_parse(nlh, rule), 0);
	nftnl_expr_foreach(rule, render_expr, &r);
	ck_assert_uint_lt(rs->n, ARRAY_SIZE(rs->v));
	snprintf(rs->v[rs->n++], sizeof(rs->v[0]), "%s", r.out);
	nftnl_rule_free(rule);
	return MNL_CB_OK;
}

static void read_rules(const char *chain, struct rules *rs)
{
	struct cordon_error err = { 0 };
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETRULE, NLM_F_DUMP);

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, CORDON_NFT_TABLE);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	rs->n = 0;
	ck_assert_msg(nft_request(nft, nlh, rule_cb, rs, "dump rules", &err) == 0, "%s", err.msg);
}

static void assert_rules(const char *chain, const char *const *want, size_t n)
{
	struct rules rs;

	read_rules(chain, &rs);
	for (size_t i = 0; i < rs.n && i < n; i++)
		ck_assert_msg(!strcmp(rs.v[i], want[i]),
			      "chain %s rule %zu is\n  '%s'\nwant\n  '%s'", chain, i, rs.v[i],
			      want[i]);
	ck_assert_msg(rs.n == n, "chain %s has %zu rules, want %zu", chain, rs.n, n);
}

/* --- the ruleset -------------------------------------------------------- */

static const char *const prerouting_rules[] = {
	"nfproto ipv6 ip6 daddr[0-1] 0xff02 l4proto icmpv6 accept",
	"iif != 1 fib saddr . iif oif present 0x0 counter name dropped drop",
	"iifname gw0 nfproto ipv6 ip6 saddr[0-1] >= 0xfe80 <= 0xfebf accept",
	"iifname gw0 nfproto ipv4 ip saddr != 10.200.0.2 counter name dropped drop",
	"iifname gw0 nfproto ipv6 ip6 saddr != fd00:200::2 counter name dropped drop",
};

static const char *const input_rules[] = {
	"iif 1 accept",
	"ct state & 0x6 != 0x0 accept",
	"nfproto ipv6 l4proto icmpv6 icmpv6 type 135-136 accept",
	"iifname gw0 nfproto ipv4 ip saddr 10.200.0.2 ip daddr 10.200.0.1 l4proto udp th dport 53 accept",
	"iifname gw0 nfproto ipv4 ip saddr 10.200.0.2 ip daddr 10.200.0.1 l4proto tcp th dport 53 accept",
	"iifname gw0 nfproto ipv6 ip6 saddr fd00:200::2 ip6 daddr fd00:200::1 l4proto udp th dport 53 accept",
	"iifname gw0 nfproto ipv6 ip6 saddr fd00:200::2 ip6 daddr fd00:200::1 l4proto tcp th dport 53 accept",
};

/* Each IPv6 form of an IPv4 address: the prefix, then the address looked up in blocked4. */
#define EMBEDDED_RULE(prefix, at)                                   \
	"iifname gw0 nfproto ipv6 ip6 daddr" prefix " ip6 daddr" at \
	" @blocked4 counter name dropped drop"

static const char *const forward_rules[] = {
	"ct state & 0x6 != 0x0 accept",
	"iifname gw0 nfproto ipv4 ip daddr @blocked4 ip daddr add @dropped4",
	"iifname gw0 nfproto ipv4 ip daddr @blocked4 counter name dropped drop",
	"iifname gw0 nfproto ipv6 ip6 daddr @blocked6 ip6 daddr add @dropped6",
	"iifname gw0 nfproto ipv6 ip6 daddr @blocked6 counter name dropped drop",
	EMBEDDED_RULE("[0-11] 0x00000000000000000000ffff", "[12-15]"), /* mapped */
	EMBEDDED_RULE("[0-11] 0x000000000000000000000000", "[12-15]"), /* compatible */
	EMBEDDED_RULE("[0-11] 0x0000000000000000ffff0000", "[12-15]"), /* translated */
	EMBEDDED_RULE("[0-11] 0x0064ff9b0000000000000000", "[12-15]"), /* NAT64 */
	EMBEDDED_RULE("[0-5] 0x0064ff9b0001", "[12-15]"),	       /* local-use NAT64 */
	EMBEDDED_RULE("[0-1] 0x2002", "[2-5]"),			       /* 6to4 */
	EMBEDDED_RULE("[0-3] 0x20010000", "[4-7]"),		       /* Teredo server */
	EMBEDDED_RULE("[0-3] 0x20010000", "[12-15] ^ 0xffffffff"),     /* Teredo client */
	"iifname gw0 ct state & 0x8 != 0x0 ct count over 4096 counter name dropped drop",
	"iifname gw0 nfproto ipv4 ip daddr @static4 accept",
	"iifname gw0 nfproto ipv6 ip6 daddr @static6 accept",
	"iifname gw0 nfproto ipv4 ip daddr @allow4 accept",
	"iifname gw0 nfproto ipv6 ip6 daddr @allow6 accept",
	"iifname gw0 nfproto ipv4 ip daddr add @dropped4",
	"iifname gw0 nfproto ipv6 ip6 daddr add @dropped6",
	"counter name dropped drop",
};

#define OUTPUT_ND                                                                 \
	"nfproto ipv6 l4proto icmpv6 icmpv6 type 135-136 accept",                 \
		"nfproto ipv6 l4proto icmpv6 icmpv6 type 131-132 ip6 daddr[0-1] " \
		"0xff02 accept",                                                  \
		"nfproto ipv6 l4proto icmpv6 icmpv6 type 143-143 ip6 daddr[0-1] " \
		"0xff02 accept"

static const char *const output_rules[] = {
	"oif 1 accept",
	"oifname gw0 nfproto ipv4 ip daddr 10.200.0.2 l4proto udp th sport 53 accept",
	"oifname gw0 nfproto ipv4 ip daddr 10.200.0.2 l4proto tcp th sport 53 accept",
	"oifname gw0 nfproto ipv4 ip daddr 10.200.0.2 l4proto icmp accept",
	"oifname gw0 nfproto ipv6 ip6 daddr fd00:200::2 l4proto udp th sport 53 accept",
	"oifname gw0 nfproto ipv6 ip6 daddr fd00:200::2 l4proto tcp th sport 53 accept",
	"oifname gw0 nfproto ipv6 ip6 daddr fd00:200::2 l4proto icmpv6 accept",
	OUTPUT_ND,
	"oifname up0 nfproto ipv4 ip daddr 198.51.100.53 l4proto udp th dport 53 accept",
	"oifname up0 nfproto ipv4 ip daddr 198.51.100.53 l4proto tcp th dport 53 accept",
	"counter name dropped drop",
};

static const char *const postrouting_rules[] = {
	"oifname up0 masquerade",
};

START_TEST(create_reads_back)
{
	struct test_config t;
	struct chains chains;
	struct sets sets;
	const struct chain_info *c;
	struct cordon_nft_counters counters = { 1, 1 };
	struct cordon_error err = { 0 };

	config_init(&t);
	create_or_fail(&t.cfg);

	ck_assert_uint_eq(count_objects(NFT_MSG_GETTABLE), 1);

	read_chains(&chains);
	ck_assert_uint_eq(chains.n, 5);
	c = find_chain(&chains, "prerouting");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->type, "filter");
	ck_assert_uint_eq(c->hook, NF_INET_PRE_ROUTING);
	ck_assert_int_eq(c->prio, -300);
	ck_assert_uint_eq(c->policy, NF_ACCEPT);
	c = find_chain(&chains, "output");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->type, "filter");
	ck_assert_uint_eq(c->hook, NF_INET_LOCAL_OUT);
	ck_assert_int_eq(c->prio, 0);
	ck_assert_uint_eq(c->policy, NF_DROP);
	c = find_chain(&chains, "input");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->type, "filter");
	ck_assert_uint_eq(c->hook, NF_INET_LOCAL_IN);
	ck_assert_int_eq(c->prio, 0);
	ck_assert_uint_eq(c->policy, NF_DROP);
	c = find_chain(&chains, "forward");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->type, "filter");
	ck_assert_uint_eq(c->hook, NF_INET_FORWARD);
	ck_assert_int_eq(c->prio, 0);
	ck_assert_uint_eq(c->policy, NF_DROP);
	c = find_chain(&chains, "postrouting");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->type, "nat");
	ck_assert_uint_eq(c->hook, NF_INET_POST_ROUTING);
	ck_assert_int_eq(c->prio, 100);
	ck_assert_uint_eq(c->policy, NF_ACCEPT);

	assert_rules("prerouting", prerouting_rules, ARRAY_SIZE(prerouting_rules));
	assert_rules("input", input_rules, ARRAY_SIZE(input_rules));
	assert_rules("forward", forward_rules, ARRAY_SIZE(forward_rules));
	assert_rules("output", output_rules, ARRAY_SIZE(output_rules));
	assert_rules("postrouting", postrouting_rules, ARRAY_SIZE(postrouting_rules));

	read_sets(&sets);
	ck_assert_uint_eq(sets.n, 8);
	for (size_t i = 0; i < sets.n; i++) {
		const struct set_info *s = &sets.v[i];
		bool v6 = s->name[strlen(s->name) - 1] == '6';

		ck_assert_uint_eq(s->key_len, v6 ? 16 : 4);
		ck_assert_uint_eq(s->key_type, v6 ? 8 : 7); /* nft's ipv6_addr, ipv4_addr */
		if (!strncmp(s->name, "allow", 5)) {
			ck_assert_uint_eq(s->flags, NFT_SET_TIMEOUT);
			ck_assert_uint_eq(s->size, 1024);
		} else if (!strncmp(s->name, "dropped", 7)) {
			/* Drops by destination, for the audit: made by the rules, bounded. */
			ck_assert_uint_eq(s->flags, NFT_SET_EVAL);
			ck_assert_uint_eq(s->size, CORDON_NFT_DROPPED_MAX);
		} else {
			ck_assert_msg(!strncmp(s->name, "static", 6) ||
					      !strncmp(s->name, "blocked", 7),
				      "unexpected set %s", s->name);
			ck_assert_uint_eq(s->flags, NFT_SET_INTERVAL);
		}
	}

	/* Merged: 10.1.2.3 lies inside 10.0.0.0/8, and so on. */
	assert_ranges("static4", "10.0.0.0/8 192.0.2.1/32");
	assert_ranges("static6", "2001:db8::/32");
	assert_ranges("blocked4", "0.0.0.0/8 169.254.0.0/16 240.0.0.0/4");
	assert_ranges("blocked6", "fd00:ec2::254/128 fe80::/10");
	assert_ranges("allow4", "");
	assert_ranges("allow6", "");
	assert_set("static4", "10.0.0.0 192.0.2.1");
	assert_set("blocked4", "0.0.0.0 169.254.0.0 240.0.0.0");

	ck_assert_int_eq(cordon_nft_read_counters(nft, &counters, &err), 0);
	ck_assert_uint_eq(counters.dropped_packets, 0);
	ck_assert_uint_eq(counters.dropped_bytes, 0);
}
END_TEST

/* The raw elements of an interval set: the gap, the starts and the ends. */
START_TEST(interval_elements_raw)
{
	struct test_config t;
	struct nft_elem *e = NULL;
	struct cordon_error err = { 0 };
	size_t n;
	char a[INET6_ADDRSTRLEN];

	config_init(&t);
	create_or_fail(&t.cfg);

	/* static4: gap at 0.0.0.0, [10.0.0.0, 11.0.0.0), [192.0.2.1, 192.0.2.2) */
	ck_assert_int_eq(nft_read_elems(nft, "static4", &e, &n, &err), 0);
	nft_elems_to_ranges(e, n, (struct nft_range[8]){ 0 }); /* sorts e */
	{
		static const struct {
			const char *key;
			bool end;
		} want[] = { { "0.0.0.0", true },
			     { "10.0.0.0", false },
			     { "11.0.0.0", true },
			     { "192.0.2.1", false },
			     { "192.0.2.2", true } };

		ck_assert_uint_eq(n, ARRAY_SIZE(want));
		for (size_t i = 0; i < n; i++) {
			inet_ntop(AF_INET, e[i].key.u.bytes, a, sizeof(a));
			ck_assert_msg(!strcmp(a, want[i].key) && e[i].interval_end == want[i].end,
				      "element %zu: %s%s, want %s%s", i, a,
				      e[i].interval_end ? " (end)" : "", want[i].key,
				      want[i].end ? " (end)" : "");
		}
	}
	free(e);

	/* blocked4 starts at 0.0.0.0 (no gap) and runs to the top (no last end). */
	ck_assert_int_eq(nft_read_elems(nft, "blocked4", &e, &n, &err), 0);
	nft_elems_to_ranges(e, n, (struct nft_range[8]){ 0 });
	ck_assert_uint_eq(n, 5);
	inet_ntop(AF_INET, e[0].key.u.bytes, a, sizeof(a));
	ck_assert_str_eq(a, "0.0.0.0");
	ck_assert(!e[0].interval_end);
	inet_ntop(AF_INET, e[4].key.u.bytes, a, sizeof(a));
	ck_assert_str_eq(a, "240.0.0.0");
	ck_assert(!e[4].interval_end);
	free(e);
}
END_TEST

START_TEST(create_full_ranges_and_many_entries)
{
	struct test_config t;
	struct cordon_cidr many[2002];
	struct cordon_cidr out[2100];
	struct cordon_error err = { 0 };
	size_t n;

	config_init(&t);
	/* 2000 single addresses two apart: many element messages in one batch. */
	for (size_t i = 0; i < 2000; i++) {
		many[i].addr.family = AF_INET;
		many[i].addr.u.v4.s_addr =
			htonl(0xc6336400u + (uint32_t)(2 * i)); /* 198.51.100.0 */
		many[i].prefix = 32;
	}
	many[2000] = cidr("::/0");
	many[2001] = cidr("0.0.0.0/0");
	t.cfg.static_allow = many;
	t.cfg.n_static = 2001; /* static4: the 2000; static6: all of it */
	t.cfg.blocked = &many[2001];
	t.cfg.n_blocked = 1;
	create_or_fail(&t.cfg);

	ck_assert_int_eq(cordon_nft_list_ranges(nft, "static4", out, ARRAY_SIZE(out), &n, &err), 0);
	ck_assert_uint_eq(n, 2000);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(out[i].prefix, 32);
		ck_assert_uint_eq(ntohl(out[i].addr.u.v4.s_addr), 0xc6336400u + 2 * i);
	}
	assert_ranges("static6", "::/0");
	assert_ranges("blocked4", "0.0.0.0/0");
	assert_ranges("blocked6", "");
}
END_TEST

static bool cidr_covers(const struct cordon_cidr *outer, const struct cordon_cidr *inner)
{
	unsigned bits = outer->addr.family == AF_INET ? 32 : 128;

	if (outer->addr.family != inner->addr.family || outer->prefix > inner->prefix ||
	    inner->prefix > bits)
		return false;
	for (unsigned i = 0; i < outer->prefix; i++) {
		unsigned byte = i / 8, bit = 7 - i % 8;

		if (((outer->addr.u.bytes[byte] ^ inner->addr.u.bytes[byte]) >> bit) & 1)
			return false;
	}
	return true;
}

/* What the supervisor will pass: the real vetting table as blocked ranges. */
START_TEST(create_with_the_vetting_table)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct test_config t;
	struct cordon_cidr *blocked, out[512];
	const struct cordon_cidr *vet[2];
	struct cordon_error err = { 0 };
	size_t n_vet[2], n;

	n_vet[0] = cordon_vet_table(AF_INET, &vet[0]);
	n_vet[1] = cordon_vet_table(AF_INET6, &vet[1]);
	ck_assert_uint_gt(n_vet[0], 0);
	ck_assert_uint_gt(n_vet[1], 0);
	blocked = calloc(n_vet[0] + n_vet[1], sizeof(*blocked));
	ck_assert_ptr_nonnull(blocked);
	memcpy(blocked, vet[0], n_vet[0] * sizeof(*blocked));
	memcpy(blocked + n_vet[0], vet[1], n_vet[1] * sizeof(*blocked));
	config_init(&t);
	t.cfg.blocked = blocked;
	t.cfg.n_blocked = n_vet[0] + n_vet[1];
	create_or_fail(&t.cfg);

	/* Every range of the table is inside what the kernel holds. */
	for (size_t f = 0; f < 2; f++) {
		const char *set = families[f] == AF_INET ? "blocked4" : "blocked6";

		ck_assert_int_eq(cordon_nft_list_ranges(nft, set, out, ARRAY_SIZE(out), &n, &err),
				 0);
		ck_assert_uint_le(n, ARRAY_SIZE(out));
		for (size_t i = 0; i < n_vet[f]; i++) {
			bool covered = false;
			char c[64];

			for (size_t j = 0; j < n && !covered; j++)
				covered = cidr_covers(&out[j], &vet[f][i]);
			format_cidr(&vet[f][i], c, sizeof(c));
			ck_assert_msg(covered, "%s is not in %s", c, set);
		}
	}
	free(blocked);
}
END_TEST

START_TEST(create_without_masquerade_and_dns)
{
	struct test_config t;
	struct chains chains;
	static const char *const want[] = {
		"iif 1 accept",
		"ct state & 0x6 != 0x0 accept",
		"nfproto ipv6 l4proto icmpv6 icmpv6 type 135-136 accept",
	};
	/* No DNS either way, nothing through the uplink: ICMP to the workload, ND. */
	static const char *const want_output[] = {
		"oif 1 accept",
		"oifname gw0 nfproto ipv4 ip daddr 10.200.0.2 l4proto icmp accept",
		"oifname gw0 nfproto ipv6 ip6 daddr fd00:200::2 l4proto icmpv6 accept",
		OUTPUT_ND,
		"counter name dropped drop",
	};

	config_init(&t);
	t.cfg.masquerade = false;
	t.cfg.uplink_if = NULL;
	t.cfg.dns_closed = true;
	t.cfg.proxy4.family = 0;
	t.cfg.proxy6.family = 0;
	t.cfg.n_static = 0;
	t.cfg.n_blocked = 0;
	create_or_fail(&t.cfg);

	read_chains(&chains);
	ck_assert_uint_eq(chains.n, 4);
	ck_assert_ptr_null(find_chain(&chains, "postrouting"));
	assert_rules("input", want, ARRAY_SIZE(want));
	assert_rules("forward", forward_rules, ARRAY_SIZE(forward_rules));
	assert_rules("output", want_output, ARRAY_SIZE(want_output));
	assert_ranges("static4", "");
	assert_ranges("blocked6", "");
}
END_TEST

START_TEST(create_ipv4_proxy_only)
{
	struct test_config t;

	config_init(&t);
	t.cfg.proxy6.family = 0;
	create_or_fail(&t.cfg);
	assert_rules("input", input_rules, 5);
}
END_TEST

/* `nft -j list ruleset` in this namespace, when nft is installed. */
static char *nft_json(void)
{
	int fds[2];
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int status;

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execlp("nft", "nft", "-j", "list", "ruleset", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		r = read(fds[0], buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fds[0]);
	buf[len] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		free(buf);
		return NULL;
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nft -j list ruleset failed");
	return buf;
}

static const char *json_str(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };

	return YAJL_GET_STRING(yajl_tree_get(obj, path, yajl_t_string));
}

static yajl_val json_get(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(obj, path, yajl_t_any);
}

START_TEST(nft_binary_reads_the_same)
{
	struct test_config t;
	_cleanup_free_ char *json = NULL;
	char errbuf[256];
	const char *path[] = { "nftables", NULL };
	yajl_val root, items;
	unsigned seen_chains = 0, seen_sets = 0, rules[5] = { 0 };
	bool static4_ok = false;

	config_init(&t);
	create_or_fail(&t.cfg);
	json = nft_json();
	if (!json) {
		printf("# nft not installed: second reader not run\n");
		fflush(stdout);
		return;
	}
	root = yajl_tree_parse(json, errbuf, sizeof(errbuf));
	ck_assert_msg(root != NULL, "nft -j output: %s", errbuf);
	items = yajl_tree_get(root, path, yajl_t_array);
	ck_assert_ptr_nonnull(items);
	for (size_t i = 0; i < items->u.array.len; i++) {
		yajl_val it = items->u.array.values[i];
		yajl_val chain = json_get(it, "chain"), set = json_get(it, "set");
		yajl_val rule = json_get(it, "rule"), table = json_get(it, "table");

		if (table) {
			ck_assert_str_eq(json_str(table, "family"), "inet");
			ck_assert_str_eq(json_str(table, "name"), "cordon");
		} else if (chain) {
			const char *name = json_str(chain, "name"), *hook = json_str(chain, "hook");

			seen_chains++;
			ck_assert_str_eq(json_str(chain, "table"), "cordon");
			if (!strcmp(name, "input") || !strcmp(name, "forward") ||
			    !strcmp(name, "output")) {
				ck_assert_str_eq(hook, name);
				ck_assert_str_eq(json_str(chain, "type"), "filter");
				ck_assert_str_eq(json_str(chain, "policy"), "drop");
			} else if (!strcmp(name, "prerouting")) {
				ck_assert_str_eq(hook, name);
				ck_assert_str_eq(json_str(chain, "type"), "filter");
				ck_assert_str_eq(json_str(chain, "policy"), "accept");
			} else {
				ck_assert_str_eq(name, "postrouting");
				ck_assert_str_eq(hook, "postrouting");
				ck_assert_str_eq(json_str(chain, "type"), "nat");
			}
		} else if (set) {
			const char *name = json_str(set, "name");
			yajl_val elem = json_get(set, "elem");

			seen_sets++;
			ck_assert_str_eq(json_str(set, "type"),
					 name[strlen(name) - 1] == '6' ? "ipv6_addr" : "ipv4_addr");
			if (!strcmp(name, "static4")) {
				/* [ {"prefix": {"addr": "10.0.0.0", "len": 8}}, "192.0.2.1" ] */
				yajl_val p, plen;

				ck_assert(YAJL_IS_ARRAY(elem));
				ck_assert_uint_eq(elem->u.array.len, 2);
				p = json_get(elem->u.array.values[0], "prefix");
				ck_assert_ptr_nonnull(p);
				ck_assert_str_eq(json_str(p, "addr"), "10.0.0.0");
				plen = json_get(p, "len");
				ck_assert(YAJL_IS_INTEGER(plen));
				ck_assert_int_eq(YAJL_GET_INTEGER(plen), 8);
				ck_assert_str_eq(YAJL_GET_STRING(elem->u.array.values[1]),
						 "192.0.2.1");
				static4_ok = true;
			}
			if (!strcmp(name, "allow4")) {
				yajl_val size = json_get(set, "size");

				ck_assert(YAJL_IS_INTEGER(size));
				ck_assert_int_eq(YAJL_GET_INTEGER(size), 1024);
			}
		} else if (rule) {
			const char *ch = json_str(rule, "chain");

			rules[!strcmp(ch, "input")	 ? 0 :
			      !strcmp(ch, "forward")	 ? 1 :
			      !strcmp(ch, "postrouting") ? 2 :
			      !strcmp(ch, "prerouting")	 ? 3 :
							   4]++;
		}
	}
	yajl_tree_free(root);
	ck_assert_uint_eq(seen_chains, 5);
	ck_assert_uint_eq(seen_sets, 8);
	ck_assert(static4_ok);
	ck_assert_uint_eq(rules[0], ARRAY_SIZE(input_rules));
	ck_assert_uint_eq(rules[1], ARRAY_SIZE(forward_rules));
	ck_assert_uint_eq(rules[2], ARRAY_SIZE(postrouting_rules));
	ck_assert_uint_eq(rules[3], ARRAY_SIZE(prerouting_rules));
	ck_assert_uint_eq(rules[4], ARRAY_SIZE(output_rules));
}
END_TEST

/* --- failures ------------------------------------------------------------- */

static void assert_nothing_left(void)
{
	ck_assert_uint_eq(count_objects(NFT_MSG_GETTABLE), 0);
	ck_assert_uint_eq(count_objects(NFT_MSG_GETCHAIN), 0);
	ck_assert_uint_eq(count_objects(NFT_MSG_GETSET), 0);
	ck_assert_uint_eq(count_objects(NFT_MSG_GETOBJ), 0);
}

START_TEST(create_rejects_bad_config)
{
	static const char *const bad_names[] = { "",   "gw0/1",		  "a:b", "sp ace", ".",
						 "..", "sixteen-chars-xx" };
	struct test_config t;
	struct cordon_error err;

	for (size_t i = 0; i < ARRAY_SIZE(bad_names); i++) {
		config_init(&t);
		t.cfg.workload_if = bad_names[i];
		memset(&err, 0, sizeof(err));
		ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
		ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
		ck_assert_int_eq(err.errnum, EINVAL);
		ck_assert_msg(strstr(err.msg, "interface name"), "%s", err.msg);
	}

	config_init(&t);
	t.cfg.uplink_if = NULL; /* masquerade stays on */
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);

	config_init(&t);
	t.cfg.set_size = 0;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);
	t.cfg.set_size = CORDON_NFT_SET_MAX + 1;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);

	config_init(&t);
	t.cfg.max_flows = 0;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "max_flows"), "%s", err.msg);
	t.cfg.max_flows = CORDON_NET_FLOWS_MAX + 1;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);

	config_init(&t);
	t.cfg.proxy4 = addr("::1");
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);

	config_init(&t);
	t.static_allow[1].prefix = 33;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "static_allow[1]"), "%s", err.msg);

	/* DNS open with no workload address to take it from: refused, not open to all. */
	config_init(&t);
	t.cfg.workload6.family = 0;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "the workload has no address"), "%s", err.msg);
	config_init(&t);
	t.cfg.workload4 = addr("fd00::2");
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);

	config_init(&t);
	t.upstream.sin_port = 0;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "DNS upstream 0"), "%s", err.msg);
	config_init(&t);
	t.cfg.n_dns_upstreams = CORDON_NFT_DNS_UPSTREAMS_MAX + 1;
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);

	assert_nothing_left();
}
END_TEST

START_TEST(create_twice_fails_and_keeps_the_first)
{
	struct test_config t;
	struct cordon_error err = { 0 };

	config_init(&t);
	create_or_fail(&t.cfg);
	t.static_allow[1] = cidr("203.0.113.0/24");
	ck_assert_int_lt(cordon_nft_create(nft, &t.cfg, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, EEXIST);
	ck_assert_msg(strstr(err.msg, "table inet cordon"), "%s", err.msg);
	assert_ranges("static4", "10.0.0.0/8 192.0.2.1/32");
}
END_TEST

/*
 * A batch the kernel refuses near its end: the whole ruleset, then one
 * element too many for allow4. Nothing of it may remain.
 */
START_TEST(failed_batch_leaves_nothing)
{
	static const char *const text[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3" };
	struct cordon_addr a[3];
	struct test_config t;
	struct cordon_error err = { 0 };

	for (size_t i = 0; i < 3; i++)
		a[i] = addr(text[i]);
	config_init(&t);
	t.cfg.set_size = 2;
	nft_batch_begin(nft);
	ck_assert_int_eq(nft_build_ruleset(nft, &t.cfg, &err), 0);
	nft_build_allow_elems(nft, NFT_MSG_NEWSETELEM, AF_INET, a, 3, NULL, 60000);
	ck_assert_int_lt(nft_batch_commit(nft, "create", &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, ENFILE);
	/* The message names the set, and the element the kernel pointed at. */
	ck_assert_msg(strstr(err.msg, "allow4") && strstr(err.msg, "element 192.0.2.3") &&
			      strstr(err.msg, "set is full"),
		      "%s", err.msg);
	assert_nothing_left();
}
END_TEST

START_TEST(allow_beyond_set_size_is_atomic)
{
	static const char *const three[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3" };
	static const char *const two_more[] = { "192.0.2.4", "192.0.2.5" };
	struct cordon_addr a[2];
	struct test_config t;
	struct cordon_error err = { 0 };

	config_init(&t);
	t.cfg.set_size = 4;
	create_or_fail(&t.cfg);
	allow_or_fail(three, 3, 60000);
	a[0] = addr(two_more[0]);
	a[1] = addr(two_more[1]);
	ck_assert_int_lt(cordon_nft_allow(nft, a, 2, 60000, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, ENFILE);
	ck_assert_msg(strstr(err.msg, "allow4"), "%s", err.msg);
	/* Neither of the two went in, not even the one that would have fit. */
	assert_set("allow4", "192.0.2.1 192.0.2.2 192.0.2.3");

	/* Refreshing elements of a full set replaces them in place. */
	allow_or_fail(three, 3, 90000);
	allow_or_fail(two_more, 1, 60000);
	assert_set("allow4", "192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4");
	allow_or_fail((const char *const[]){ "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4" },
		      4, 90000);
	assert_set("allow4", "192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4");
}
END_TEST

START_TEST(allow_rejects_bad_input)
{
	struct test_config t;
	struct cordon_addr a[2] = { addr("192.0.2.1"), { 0 } };
	struct cordon_error err = { 0 };

	config_init(&t);
	create_or_fail(&t.cfg);
	ck_assert_int_lt(cordon_nft_allow(nft, a, 1, 0, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);
	ck_assert_int_lt(cordon_nft_allow(nft, a, 2, 1000, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);
	ck_assert_msg(strstr(err.msg, "address 1"), "%s", err.msg);
	ck_assert_int_eq(cordon_nft_allow(nft, a, 0, 1000, &err), 0);
	assert_set("allow4", "");
}
END_TEST

START_TEST(allow_without_table_fails)
{
	struct cordon_addr a = addr("192.0.2.1");
	struct cordon_error err = { 0 };
	struct cordon_nft_counters c;

	ck_assert_int_lt(cordon_nft_allow(nft, &a, 1, 1000, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_int_lt(cordon_nft_read_counters(nft, &c, &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_int_lt(cordon_nft_delete(nft, &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_int_lt(cordon_nft_list_set(nft, "allow4", NULL, 0, (size_t[1]){ 0 }, &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);
}
END_TEST

/* --- timeouts -------------------------------------------------------------- */

static const struct nft_elem *find_elem(const struct nft_elem *e, size_t n, const char *text)
{
	struct cordon_addr a = addr(text);

	for (size_t i = 0; i < n; i++)
		if (e[i].key.family == a.family &&
		    !memcmp(e[i].key.u.bytes, a.u.bytes, a.family == AF_INET ? 4 : 16))
			return &e[i];
	return NULL;
}

/* The element's remaining lifetime in ms, or -1 when it is gone. */
static int64_t expires_in(const char *set, const char *text, uint64_t *timeout)
{
	struct nft_elem *e = NULL;
	const struct nft_elem *x;
	struct cordon_error err = { 0 };
	size_t n;
	int64_t left = -1;

	ck_assert_msg(nft_read_elems(nft, set, &e, &n, &err) == 0, "%s", err.msg);
	x = find_elem(e, n, text);
	if (x) {
		left = (int64_t)x->expires_ms;
		if (timeout)
			*timeout = x->timeout_ms;
	}
	free(e);
	return left;
}

/* Poll until the element is gone; returns when (ms since start), or -1. */
static int64_t wait_gone(const char *set, const char *text, uint64_t start, unsigned max_ms)
{
	while (now_ms() - start < max_ms) {
		if (expires_in(set, text, NULL) < 0)
			return (int64_t)(now_ms() - start);
		sleep_ms(50);
	}
	return -1;
}

START_TEST(allow_expires)
{
	static const char *const text[] = { "192.0.2.10", "2001:db8::10" };
	struct test_config t;
	uint64_t start, timeout = 0;
	int64_t gone4, gone6;

	config_init(&t);
	create_or_fail(&t.cfg);
	start = now_ms();
	allow_or_fail(text, 2, 2000);
	assert_set("allow4", "192.0.2.10");
	assert_set("allow6", "2001:db8::10");
	ck_assert_int_gt(expires_in("allow4", "192.0.2.10", &timeout), 1000);
	ck_assert_uint_eq(timeout, 2000);

	gone4 = wait_gone("allow4", "192.0.2.10", start, 4000);
	gone6 = wait_gone("allow6", "2001:db8::10", start, 4000);
	ck_assert_msg(gone4 >= 1800, "allow4 element gone after %" PRId64 " ms", gone4);
	ck_assert_msg(gone6 >= 1800, "allow6 element gone after %" PRId64 " ms", gone6);
	assert_set("allow4", "");
	assert_set("allow6", "");
}
END_TEST

static void check_refresh_extends(void)
{
	static const char *const text[] = { "192.0.2.20", "2001:db8::20" };
	struct test_config t;
	uint64_t start, timeout = 0;
	int64_t left, gone;

	config_init(&t);
	create_or_fail(&t.cfg);
	start = now_ms();
	allow_or_fail(text, 2, 2000);
	sleep_ms(1200);
	left = expires_in("allow4", text[0], NULL);
	ck_assert_msg(left >= 0 && left <= 900, "before the refresh %" PRId64 " ms left", left);

	allow_or_fail(text, 2, 3000);
	left = expires_in("allow4", text[0], &timeout);
	ck_assert_uint_eq(timeout, 3000);
	ck_assert_msg(left > 2500, "after the refresh %" PRId64 " ms left", left);
	left = expires_in("allow6", text[1], &timeout);
	ck_assert_uint_eq(timeout, 3000);
	ck_assert_msg(left > 2500, "after the refresh %" PRId64 " ms left (allow6)", left);

	/* Past the first expiry the element is still there... */
	sleep_ms(1300);
	ck_assert_int_gt(expires_in("allow4", text[0], NULL), 0);
	/* ...and goes on the new timeout's schedule: about 1200 + 3000 ms. */
	gone = wait_gone("allow4", text[0], start, 6000);
	ck_assert_msg(gone >= 4000, "refreshed element gone after %" PRId64 " ms", gone);
}

START_TEST(allow_refresh_extends_timeout)
{
	check_refresh_extends();
	ck_assert_int_eq(nft->destroy, NFT_DESTROY_YES);
}
END_TEST

/* The way for kernels before 6.3, on this one: ask, then DELSETELEM. */
START_TEST(allow_refresh_extends_timeout_without_destroy)
{
	size_t deletes = 0;

	nft->destroy = NFT_DESTROY_NO;
	check_refresh_extends();
	ck_assert_int_eq(nft->destroy, NFT_DESTROY_NO);
	/* A batch replaces only what the kernel says exists. */
	allow_or_fail((const char *const[]){ "192.0.2.40" }, 1, 60000);
	allow_or_fail((const char *const[]){ "192.0.2.40", "192.0.2.41" }, 2, 60000);
	for (size_t i = 0; i < nft->n_msgs; i++) {
		ck_assert_int_ne(nft->msgs[i].type, NFT_MSG_DESTROYSETELEM);
		if (nft->msgs[i].type == NFT_MSG_DELSETELEM) {
			ck_assert_msg(strstr(nft->msgs[i].what, "192.0.2.40") &&
					      !strstr(nft->msgs[i].what, "elements"),
				      "%s", nft->msgs[i].what);
			deletes++;
		}
	}
	ck_assert_uint_eq(deletes, 1);
}
END_TEST

/*
 * What the refresh relies on, on this kernel: message 30 is
 * DESTROYSETELEM (deletes, and ignores a missing element), and a message
 * type the kernel does not know fails with the errno the fallback keys on.
 */
START_TEST(destroy_setelem_semantics)
{
	static const char *const text[] = { "192.0.2.30" };
	struct cordon_addr a[2] = { addr("192.0.2.30"), addr("192.0.2.31") };
	struct test_config t;
	struct cordon_error err = { 0 };
	struct nlmsghdr *nlh;

	config_init(&t);
	create_or_fail(&t.cfg);
	allow_or_fail(text, 1, 60000);
	nft_batch_begin(nft);
	nft_build_allow_elems(nft, NFT_MSG_DESTROYSETELEM, AF_INET, a, 2, NULL, 0);
	ck_assert_msg(nft_batch_commit(nft, "destroy", &err) == 0, "%s", err.msg);
	assert_set("allow4", "");

	nft_batch_begin(nft);
	nft_build_allow_elems(nft, NFT_MSG_DELSETELEM, AF_INET, a, 1, NULL, 0);
	ck_assert_int_lt(nft_batch_commit(nft, "delete", &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);

	nft_batch_begin(nft);
	nlh = nft_batch_msg(nft, 0xfe, 0, "message type 0xfe");
	nft_batch_next(nft, nlh);
	ck_assert_int_lt(nft_batch_commit(nft, "unknown", &err), 0);
	ck_assert_msg(err.errnum == EINVAL || err.errnum == EOPNOTSUPP, "errno %d", err.errnum);
}
END_TEST

/* The largest set: 65536 elements in one call, then one too many. */
START_TEST(allow_fills_the_largest_set)
{
	struct test_config t;
	struct cordon_addr *a = calloc(CORDON_NFT_SET_MAX + 1, sizeof(*a));
	struct cordon_error err = { 0 };
	struct nft_elem *e = NULL;
	size_t n;

	ck_assert_ptr_nonnull(a);
	config_init(&t);
	t.cfg.set_size = CORDON_NFT_SET_MAX;
	create_or_fail(&t.cfg);
	for (uint32_t i = 0; i <= CORDON_NFT_SET_MAX; i++) {
		a[i].family = AF_INET;
		a[i].u.v4.s_addr = htonl(0x0b000000u + i); /* 11.0.0.0 on */
	}
	ck_assert_msg(cordon_nft_allow(nft, a, CORDON_NFT_SET_MAX, 60000, &err) == 0, "%s: %s",
		      err.msg, strerror(err.errnum));
	ck_assert_int_eq(nft_read_elems(nft, "allow4", &e, &n, &err), 0);
	free(e);
	ck_assert_uint_eq(n, CORDON_NFT_SET_MAX);
	ck_assert_int_lt(cordon_nft_allow(nft, &a[CORDON_NFT_SET_MAX], 1, 60000, &err), 0);
	ck_assert_int_eq(err.errnum, ENFILE);
	ck_assert_msg(strstr(err.msg, "11.1.0.0"), "%s", err.msg);
	/* Refreshing all of a full set in one batch still works. */
	ck_assert_msg(cordon_nft_allow(nft, a, CORDON_NFT_SET_MAX, 90000, &err) == 0, "%s",
		      err.msg);
	free(a);
}
END_TEST

START_TEST(allow_duplicates_and_mixed_families)
{
	static const char *const text[] = { "2001:db8::1", "192.0.2.7", "192.0.2.7", "2001:db8::1",
					    "192.0.2.6" };
	struct test_config t;

	config_init(&t);
	create_or_fail(&t.cfg);
	allow_or_fail(text, ARRAY_SIZE(text), 10000);
	allow_or_fail(text, ARRAY_SIZE(text), 10000);
	assert_set("allow4", "192.0.2.6 192.0.2.7");
	assert_set("allow6", "2001:db8::1");
	nft->destroy = NFT_DESTROY_NO;
	allow_or_fail(text, ARRAY_SIZE(text), 10000);
	assert_set("allow4", "192.0.2.6 192.0.2.7");
}
END_TEST

/*
 * Addresses the host gains during a run: each a range of its own in the
 * blocked sets, beside the ranges there, touching them on either side.
 */
START_TEST(block_adds_single_addresses)
{
	static const char *const text[] = {
		"10.77.1.1",	"1.0.0.0",     "169.253.255.255",
		"10.77.1.1",	"2001:db8::5", "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"fe80::1:0:0:0"
	};
	struct cordon_addr a[ARRAY_SIZE(text)];
	struct cordon_error err = { 0 };
	struct test_config t;
	char msg[1024];

	config_init(&t);
	create_or_fail(&t.cfg);
	for (size_t i = 0; i < ARRAY_SIZE(text); i++)
		a[i] = addr(text[i]);
	/* fe80::1:0:0:0 lies in fe80::/10: the caller never sends it, the kernel refuses it. */
	ck_assert_int_lt(cordon_nft_block(nft, a, ARRAY_SIZE(text), &err), 0);
	assert_ranges("blocked4", "0.0.0.0/8 169.254.0.0/16 240.0.0.0/4");
	if (cordon_nft_block(nft, a, ARRAY_SIZE(text) - 1, &err) < 0) {
		cordon_error_message(&err, msg, sizeof(msg));
		ck_abort_msg("cordon_nft_block: %s", msg);
	}
	assert_ranges(
		"blocked4",
		"0.0.0.0/8 1.0.0.0/32 10.77.1.1/32 169.253.255.255/32 169.254.0.0/16 240.0.0.0/4");
	assert_ranges(
		"blocked6",
		"2001:db8::5/128 fd00:ec2::254/128 fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128 fe80::/10");
	a[0].family = AF_UNIX;
	ck_assert_int_lt(cordon_nft_block(nft, a, 1, &err), 0);
	ck_assert_int_eq(err.errnum, EINVAL);
	ck_assert_int_eq(cordon_nft_block(nft, a, 0, &err), 0);
}
END_TEST

START_TEST(delete_leaves_nothing)
{
	static const char *const text[] = { "192.0.2.1" };
	struct test_config t;
	struct cordon_error err = { 0 };

	config_init(&t);
	create_or_fail(&t.cfg);
	allow_or_fail(text, 1, 60000);
	ck_assert_int_eq(cordon_nft_delete(nft, &err), 0);
	assert_nothing_left();
	ck_assert_int_lt(cordon_nft_delete(nft, &err), 0);
	ck_assert_int_eq(err.errnum, ENOENT);
	/* And the table can be made again. */
	create_or_fail(&t.cfg);
	assert_ranges("static4", "10.0.0.0/8 192.0.2.1/32");
}
END_TEST

/* --- interval arithmetic (no kernel) --------------------------------------- */

static void assert_split(const char *first, const char *last, const char *want)
{
	struct cordon_addr a = addr(first), b = addr(last);
	struct cordon_cidr out[300];
	struct nft_range r = { 0, 0 };
	char got[4096] = "";
	size_t n, pos = 0;

	for (size_t i = 0; i < (a.family == AF_INET ? 4u : 16u); i++) {
		r.first = r.first << 8 | a.u.bytes[i];
		r.last = r.last << 8 | b.u.bytes[i];
	}
	n = nft_range_to_cidrs(&r, a.family, out, ARRAY_SIZE(out));
	ck_assert_uint_le(n, ARRAY_SIZE(out));
	for (size_t i = 0; i < n; i++) {
		char c[64];

		format_cidr(&out[i], c, sizeof(c));
		pos += (size_t)snprintf(got + pos, sizeof(got) - pos, "%s%s", i ? " " : "", c);
	}
	ck_assert_msg(!strcmp(got, want), "%s-%s is '%s', want '%s'", first, last, got, want);
}

START_TEST(range_arithmetic)
{
	struct cordon_cidr in[6];
	struct nft_range r[6];
	size_t n;

	assert_split("10.0.0.1", "10.0.0.6", "10.0.0.1/32 10.0.0.2/31 10.0.0.4/31 10.0.0.6/32");
	assert_split("0.0.0.0", "255.255.255.255", "0.0.0.0/0");
	assert_split("255.255.255.255", "255.255.255.255", "255.255.255.255/32");
	assert_split("128.0.0.0", "255.255.255.255", "128.0.0.0/1");
	assert_split("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::/0");
	assert_split("::1", "::2", "::1/128 ::2/128");
	assert_split("8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "8000::/1");

	/* Adjacent, nested, duplicate and disjoint; other families ignored. */
	in[0] = cidr("10.128.0.0/9");
	in[1] = cidr("10.0.0.0/9");
	in[2] = cidr("10.1.2.3/32");
	in[3] = cidr("2001:db8::/32");
	in[4] = cidr("192.0.2.1/24"); /* host bits: the /24 is meant */
	in[5] = cidr("10.0.0.0/9");
	n = nft_ranges_from_cidrs(in, 6, AF_INET, r);
	ck_assert_uint_eq(n, 2);
	ck_assert(r[0].first == 0x0a000000 && r[0].last == 0x0affffff);
	ck_assert(r[1].first == 0xc0000200 && r[1].last == 0xc00002ff);

	in[0] = cidr("255.255.255.255/32");
	in[1] = cidr("255.0.0.0/8");
	n = nft_ranges_from_cidrs(in, 2, AF_INET, r);
	ck_assert_uint_eq(n, 1);
	ck_assert(r[0].first == 0xff000000 && r[0].last == 0xffffffff);
}
END_TEST

/* --- traffic through a gateway ---------------------------------------------- */

/*
 * Three namespaces: this test's own is the gateway G; two children hold
 * the workload W and the "outside" O. W--G and G--O are veth pairs.
 * O owns the destination addresses and counts what arrives. Nothing
 * leaves these namespaces.
 *
 *   W wl0 10.200.0.2/30, fd00:200::2/64 ── gw0 10.200.0.1, fd00:200::1  G
 *   G up0 198.51.100.1/24 ── op0 198.51.100.7, 198.51.100.9             O
 */

enum agent_op { AGENT_SEND, AGENT_COUNT };

struct agent_cmd {
	enum agent_op op;
	char dst[INET6_ADDRSTRLEN];
	char src[INET6_ADDRSTRLEN]; /* a source of the sender's choosing, or "" */
	uint16_t port;
	uint8_t count;
};

struct agent_reply {
	uint32_t received;
	char last_source[INET6_ADDRSTRLEN];
};

static int run_ip(const char *const *argv)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execvp("ip", (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#define IP(...)                                                                     \
	do {                                                                        \
		const char *const _argv[] = { "ip", __VA_ARGS__, NULL };            \
		int _rc = run_ip(_argv);                                            \
		ck_assert_msg(_rc == 0, "ip %s %s %s: exit %d", _argv[1], _argv[2], \
			      _argv[3] ? _argv[3] : "", _rc);                       \
	} while (0)

static bool have_ip(void)
{
	const char *const argv[] = { "ip", "-V", NULL };

	return run_ip(argv) == 0;
}

static socklen_t sockaddr_of(const char *ip, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!strchr(ip, ':')) {
		struct sockaddr_in *sin = (void *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		ck_assert_int_eq(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		ck_assert_int_eq(inet_pton(AF_INET6, ip, &sin6->sin6_addr), 1);
		return sizeof(*sin6);
	}
}

static void agent_configure(bool outside)
{
	IP("link", "set", "lo", "up");
	if (outside) {
		IP("addr", "add", "198.51.100.7/24", "dev", "op0");
		IP("addr", "add", "198.51.100.9/24", "dev", "op0");
		IP("link", "set", "op0", "up");
		return;
	}
	IP("addr", "add", "10.200.0.2/30", "dev", "wl0");
	IP("-6", "addr", "add", "fd00:200::2/64", "dev", "wl0", "nodad");
	IP("link", "set", "wl0", "up");
	IP("route", "add", "default", "via", "10.200.0.1");
	IP("-6", "route", "add", "default", "via", "fd00:200::1");
}

/* A child in a network namespace of its own, driven over two pipes. */
static void __attribute__((noreturn)) agent_main(bool outside, int cmd_fd, int ack_fd)
{
	struct agent_reply reply = { 0 };
	struct agent_cmd cmd;
	int sink = -1;
	char ok = 'k';

	if (unshare(CLONE_NEWNET) < 0 || write(ack_fd, &ok, 1) != 1)
		_exit(1);
	/* Wait for the veth end to arrive, then address it. */
	if (read(cmd_fd, &ok, 1) != 1)
		_exit(1);
	agent_configure(outside);
	if (outside) {
		struct sockaddr_storage ss;
		socklen_t len = sockaddr_of("0.0.0.0", 9, &ss);

		sink = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (sink < 0 || bind(sink, (struct sockaddr *)&ss, len) < 0)
			_exit(1);
	}
	if (write(ack_fd, &ok, 1) != 1)
		_exit(1);

	while (read(cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd)) {
		struct sockaddr_storage ss;
		socklen_t len;
		int fd;

		if (cmd.op == AGENT_COUNT) {
			struct sockaddr_in from;
			socklen_t flen = sizeof(from);
			char buf[64];

			while (sink >= 0 && recvfrom(sink, buf, sizeof(buf), 0,
						     (struct sockaddr *)&from, &flen) >= 0) {
				reply.received++;
				inet_ntop(AF_INET, &from.sin_addr, reply.last_source,
					  sizeof(reply.last_source));
				flen = sizeof(from);
			}
			if (write(ack_fd, &reply, sizeof(reply)) != sizeof(reply))
				_exit(1);
			continue;
		}
		len = sockaddr_of(cmd.dst, cmd.port, &ss);
		fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (cmd.src[0]) {
			/* Any address at all as the source: what a forged one looks like. */
			struct sockaddr_storage from;
			socklen_t from_len = sockaddr_of(cmd.src, 0, &from);

			if (setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &(int){ 1 }, sizeof(int)) <
				    0 ||
			    bind(fd, (struct sockaddr *)&from, from_len) < 0)
				_exit(1);
		}
		for (unsigned i = 0; i < cmd.count; i++)
			if (sendto(fd, "cordon-test", 11, 0, (struct sockaddr *)&ss, len) != 11)
				_exit(1);
		close(fd);
		if (write(ack_fd, &ok, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

struct agent {
	pid_t pid;
	int cmd_fd, ack_fd;
};

static void agent_start(struct agent *a, bool outside)
{
	int cmd[2], ack[2];
	char ok;

	ck_assert_int_eq(pipe2(cmd, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(ack, O_CLOEXEC), 0);
	a->pid = fork();
	ck_assert_int_ge(a->pid, 0);
	if (a->pid == 0) {
		/* Our own copies of the parent's ends would hide its EOF. */
		close(cmd[1]);
		close(ack[0]);
		agent_main(outside, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	a->cmd_fd = cmd[1];
	a->ack_fd = ack[0];
	ck_assert_int_eq(read(a->ack_fd, &ok, 1), 1); /* it has its namespace */
}

static void agent_configure_now(struct agent *a)
{
	char ok = 'k';

	ck_assert_int_eq(write(a->cmd_fd, &ok, 1), 1);
	ck_assert_int_eq(read(a->ack_fd, &ok, 1), 1);
}

static void agent_stop(struct agent *a)
{
	int status;

	close(a->cmd_fd);
	close(a->ack_fd);
	waitpid(a->pid, &status, 0);
}

/* W sends count datagrams to dst:port. */
/* W sends count datagrams to dst:port from src (NULL: its own address). */
static void agent_send_from(struct agent *a, const char *src, const char *dst, uint16_t port,
			    uint8_t count)
{
	struct agent_cmd cmd = { .op = AGENT_SEND, .port = port, .count = count };
	char ack;

	snprintf(cmd.dst, sizeof(cmd.dst), "%s", dst);
	snprintf(cmd.src, sizeof(cmd.src), "%s", src ? src : "");
	ck_assert_int_eq(write(a->cmd_fd, &cmd, sizeof(cmd)), sizeof(cmd));
	ck_assert_int_eq(read(a->ack_fd, &ack, 1), 1);
}

static void agent_send(struct agent *a, const char *dst, uint16_t port, uint8_t count)
{
	struct agent_cmd cmd = { .op = AGENT_SEND, .port = port, .count = count };
	char ack;

	snprintf(cmd.dst, sizeof(cmd.dst), "%s", dst);
	ck_assert_int_eq(write(a->cmd_fd, &cmd, sizeof(cmd)), sizeof(cmd));
	ck_assert_int_eq(read(a->ack_fd, &ack, 1), 1);
}

static struct agent_reply agent_count(struct agent *a)
{
	struct agent_cmd cmd = { .op = AGENT_COUNT };
	struct agent_reply reply;

	ck_assert_int_eq(write(a->cmd_fd, &cmd, sizeof(cmd)), sizeof(cmd));
	ck_assert_int_eq(read(a->ack_fd, &reply, sizeof(reply)), sizeof(reply));
	return reply;
}

struct lab {
	struct agent workload, outside;
};

/* A sysctl of this test's own namespace (the fixture unshared it), to "1". */
static void sysctl_on(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, "1", 1), 1);
	close(fd);
}

static void lab_up(struct lab *lab)
{
	char pid[16];

	agent_start(&lab->workload, false);
	agent_start(&lab->outside, true);
	/*
	 * A router, as the gateway is (cordon_gateway_prepare), before its
	 * links come up: no router solicitations of its own on them.
	 */
	sysctl_on("/proc/sys/net/ipv4/ip_forward");
	sysctl_on("/proc/sys/net/ipv6/conf/all/forwarding");
	sysctl_on("/proc/sys/net/ipv6/conf/default/forwarding");

	snprintf(pid, sizeof(pid), "%d", (int)lab->workload.pid);
	IP("link", "add", "gw0", "type", "veth", "peer", "name", "wl0", "netns", pid);
	snprintf(pid, sizeof(pid), "%d", (int)lab->outside.pid);
	IP("link", "add", "up0", "type", "veth", "peer", "name", "op0", "netns", pid);
	IP("link", "set", "lo", "up");
	IP("addr", "add", "10.200.0.1/30", "dev", "gw0");
	IP("-6", "addr", "add", "fd00:200::1/64", "dev", "gw0", "nodad");
	IP("link", "set", "gw0", "up");
	IP("addr", "add", "198.51.100.1/24", "dev", "up0");
	IP("link", "set", "up0", "up");

	agent_configure_now(&lab->workload);
	agent_configure_now(&lab->outside);
}

static void lab_down(struct lab *lab)
{
	/* The outside agent was forked holding the workload's pipe ends: it
	 * goes first, or the workload would never read end-of-file. */
	agent_stop(&lab->outside);
	agent_stop(&lab->workload);
}

static int udp_listen(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t len = sockaddr_of(ip, port, &ss);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_msg(bind(fd, (struct sockaddr *)&ss, len) == 0, "bind %s:%u: %s", ip, port,
		      strerror(errno));
	return fd;
}

static bool udp_received(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char buf[64];

	if (poll(&p, 1, timeout_ms) != 1)
		return false;
	return recv(fd, buf, sizeof(buf), 0) > 0;
}

static uint64_t dropped_packets(void)
{
	struct cordon_nft_counters c;
	struct cordon_error err = { 0 };

	ck_assert_msg(cordon_nft_read_counters(nft, &c, &err) == 0, "%s", err.msg);
	return c.dropped_packets;
}

/* Wait for the counter to reach want (packets cross the veth asynchronously). */
static void assert_dropped(uint64_t want)
{
	uint64_t start = now_ms(), got;

	while ((got = dropped_packets()) < want && now_ms() - start < 2000)
		sleep_ms(20);
	sleep_ms(50);
	got = dropped_packets();
	ck_assert_msg(got == want, "dropped %" PRIu64 " packets, want %" PRIu64, got, want);
}

/* Wait until O has received want datagrams in all; returns O's last view. */
static struct agent_reply assert_arrived(struct lab *lab, uint32_t want)
{
	uint64_t start = now_ms();
	struct agent_reply r;

	while ((r = agent_count(&lab->outside)).received < want && now_ms() - start < 3000)
		sleep_ms(20);
	sleep_ms(50);
	r = agent_count(&lab->outside);
	ck_assert_msg(r.received == want, "outside received %u datagrams, want %u", r.received,
		      want);
	return r;
}

START_TEST(traffic_follows_the_policy)
{
	static const char *const allowed[] = { "198.51.100.7", "198.51.100.9" };
	struct test_config t;
	struct agent_reply seen;
	struct lab lab;
	int dns4, dns6, other, local;

	if (!have_ip()) {
		printf("# ip (iproute2) not installed: traffic test not run\n");
		fflush(stdout);
		return;
	}
	lab_up(&lab);
	config_init(&t);
	t.blocked[0] = cidr("198.51.100.9/32");
	t.cfg.n_blocked = 1;
	t.cfg.n_static = 0;
	t.upstream.sin_port = htons(9);
	inet_pton(AF_INET, "198.51.100.7", &t.upstream.sin_addr);
	create_or_fail(&t.cfg);

	/* Input: DNS to the proxy's addresses, over IPv4 and IPv6 (which
	 * needs neighbour discovery through policy drop); nothing else. */
	dns4 = udp_listen("10.200.0.1", 53);
	dns6 = udp_listen("fd00:200::1", 53);
	other = udp_listen("10.200.0.1", 5353);
	agent_send(&lab.workload, "10.200.0.1", 53, 1);
	ck_assert_msg(udp_received(dns4, 3000), "DNS over IPv4 did not reach the proxy");
	agent_send(&lab.workload, "fd00:200::1", 53, 1);
	ck_assert_msg(udp_received(dns6, 3000), "DNS over IPv6 did not reach the proxy");
	agent_send(&lab.workload, "10.200.0.1", 5353, 1);
	ck_assert_msg(!udp_received(other, 300), "port 5353 on the gateway is reachable");
	/* The gateway's own loopback. */
	local = udp_listen("127.0.0.1", 5353);
	{
		struct sockaddr_storage ss;
		socklen_t len = sockaddr_of("127.0.0.1", 5353, &ss);
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		ck_assert_int_eq(sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len), 1);
		close(fd);
	}
	ck_assert_msg(udp_received(local, 1000), "loopback in the gateway is filtered");
	ck_assert_uint_eq(dropped_packets(), 0); /* input drops are not counted */

	/* Forward: an unknown destination is dropped, and counted. */
	agent_send(&lab.workload, "198.51.100.7", 9, 3);
	assert_dropped(3);
	assert_arrived(&lab, 0);

	/* Attested by "DNS": forwarded, masqueraded, not counted. */
	allow_or_fail(allowed, 2, 60000);
	agent_send(&lab.workload, "198.51.100.7", 9, 2);
	seen = assert_arrived(&lab, 2);
	ck_assert_str_eq(seen.last_source, "198.51.100.1");
	assert_dropped(3);

	/* Blocked beats allowed. */
	agent_send(&lab.workload, "198.51.100.9", 9, 1);
	assert_dropped(4);
	assert_arrived(&lab, 2);

	/*
	 * A forged source, to an allowed destination and to the proxy: no
	 * route back through gw0, dropped (and counted) before anything
	 * else sees it.
	 */
	agent_send_from(&lab.workload, "198.51.100.200", "198.51.100.7", 9, 2);
	assert_dropped(6);
	assert_arrived(&lab, 2);
	agent_send_from(&lab.workload, "10.9.9.9", "10.200.0.1", 53, 1);
	ck_assert_msg(!udp_received(dns4, 300), "the proxy got a forged source");
	assert_dropped(7);

	/*
	 * What the gateway sends itself: through the uplink only DNS to the
	 * configured upstream (here 198.51.100.7:9), nothing else.
	 */
	{
		struct sockaddr_storage ss;
		socklen_t len = sockaddr_of("198.51.100.9", 9, &ss);
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		ck_assert_int_lt(sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len), 0);
		ck_assert_int_eq(errno, EPERM);
		assert_dropped(8);
		len = sockaddr_of("198.51.100.7", 9, &ss);
		ck_assert_int_eq(sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len), 1);
		close(fd);
		seen = assert_arrived(&lab, 3);
		ck_assert_str_eq(seen.last_source, "198.51.100.1");
		assert_dropped(8);
	}

	close(dns4);
	close(dns6);
	close(other);
	close(local);
	lab_down(&lab);
}
END_TEST

/* --- a live policy update ------------------------------------------------- */

static void replace_or_fail(const struct cordon_nft_policy *pol)
{
	struct cordon_error err = { 0 };
	char msg[1024];

	if (cordon_nft_replace_policy(nft, pol, &err) < 0) {
		cordon_error_message(&err, msg, sizeof(msg));
		ck_abort_msg("cordon_nft_replace_policy: %s", msg);
	}
}

/*
 * static, blocked and allow sets, both families, replaced in one
 * transaction: what was there is gone, the kept addresses keep their own
 * timeouts, and a refused batch (an unknown family) changes nothing.
 */
START_TEST(policy_replaces_every_set)
{
	static const char *const first[] = { "192.0.2.1", "192.0.2.2", "2001:db8::1" };
	struct test_config t;
	struct cordon_cidr statics[] = { cidr("203.0.113.0/24"), cidr("2001:db8:1::/48") };
	struct cordon_cidr blocked[] = { cidr("10.0.0.0/8"), cidr("fe80::/10") };
	struct cordon_addr keep[] = { addr("192.0.2.2"), addr("2001:db8::1") };
	uint32_t keep_ms[] = { 60000, 300 };
	struct cordon_nft_policy pol = {
		.statics = statics,
		.n_static = ARRAY_SIZE(statics),
		.blocked = blocked,
		.n_blocked = ARRAY_SIZE(blocked),
		.allow = keep,
		.allow_ms = keep_ms,
		.n_allow = ARRAY_SIZE(keep),
	};
	struct cordon_addr bad = { .family = AF_UNIX };
	struct cordon_error err = { 0 };
	uint64_t start;

	config_init(&t);
	create_or_fail(&t.cfg);
	allow_or_fail(first, ARRAY_SIZE(first), 60000);
	assert_set("allow4", "192.0.2.1 192.0.2.2");

	replace_or_fail(&pol);
	assert_ranges("static4", "203.0.113.0/24");
	assert_ranges("static6", "2001:db8:1::/48");
	assert_ranges("blocked4", "10.0.0.0/8");
	assert_ranges("blocked6", "fe80::/10");
	assert_set("allow4", "192.0.2.2");
	assert_set("allow6", "2001:db8::1");

	/* Each address its own timeout: the short one ends, the long one stays. */
	start = now_ms();
	for (;;) {
		struct cordon_addr out[4];
		size_t n;

		ck_assert(cordon_nft_list_set(nft, "allow6", out, 4, &n, &err) == 0);
		if (n == 0)
			break;
		ck_assert_msg(now_ms() - start < 5000, "allow6's 300 ms element never ended");
		sleep_ms(50);
	}
	assert_set("allow4", "192.0.2.2");

	/* Nothing of a refused batch applies. */
	pol.allow = &bad;
	pol.n_allow = 1;
	pol.n_static = 0;
	ck_assert_int_lt(cordon_nft_replace_policy(nft, &pol, &err), 0);
	assert_ranges("static4", "203.0.113.0/24");
	assert_set("allow4", "192.0.2.2");

	/* An empty policy empties the sets. */
	memset(&pol, 0, sizeof(pol));
	replace_or_fail(&pol);
	assert_ranges("static4", "");
	assert_ranges("blocked4", "");
	assert_set("allow4", "");
}
END_TEST

struct cut_seen {
	const char *refuse; /* a destination to cut, or NULL */
	unsigned seen;      /* flows from the workload's address */
};

static bool cut_keep(const struct cordon_addr *src, const struct cordon_addr *dst, void *opaque)
{
	struct cut_seen *c = opaque;
	struct cordon_addr w = addr("10.200.0.2");
	char text[INET6_ADDRSTRLEN];

	if (src->family != AF_INET || memcmp(src->u.bytes, w.u.bytes, 4) != 0)
		return true;
	c->seen++;
	inet_ntop(dst->family, dst->u.bytes, text, sizeof(text));
	return !c->refuse || strcmp(text, c->refuse) != 0;
}

static unsigned flows_from_workload(void)
{
	struct cut_seen c = { 0 };
	struct cordon_error err = { 0 };
	size_t cut;

	ck_assert_msg(cordon_nft_ct_cut(nft, cut_keep, &c, &cut, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(cut, 0);
	return c.seen;
}

/* The workload's flows in conntrack, as keep sees them; those it refuses are deleted. */
START_TEST(policy_cuts_flows)
{
	static const char *const allowed[] = { "198.51.100.7", "198.51.100.9" };
	struct test_config t;
	struct cut_seen c = { .refuse = "198.51.100.9" };
	struct cordon_error err = { 0 };
	struct lab lab;
	size_t cut;

	if (!have_ip()) {
		printf("# ip (iproute2) not installed: flow test not run\n");
		fflush(stdout);
		return;
	}
	lab_up(&lab);
	config_init(&t);
	t.cfg.n_blocked = 0;
	t.cfg.n_static = 0;
	create_or_fail(&t.cfg);
	allow_or_fail(allowed, 2, 60000);
	agent_send(&lab.workload, "198.51.100.7", 9, 1);
	agent_send(&lab.workload, "198.51.100.9", 9, 1);
	assert_arrived(&lab, 2);
	ck_assert_uint_eq(flows_from_workload(), 2);

	ck_assert_msg(cordon_nft_ct_cut(nft, cut_keep, &c, &cut, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.seen, 2);
	ck_assert_uint_eq(cut, 1);
	ck_assert_uint_eq(flows_from_workload(), 1);
	lab_down(&lab);
}
END_TEST

/* --- runner ---------------------------------------------------------------- */

static Suite *nft_suite(void)
{
	Suite *s = suite_create("net-nft");
	TCase *tc;

	tc = tcase_create("ruleset");
	tcase_add_checked_fixture(tc, netns_setup, netns_teardown);
	tcase_add_test(tc, create_reads_back);
	tcase_add_test(tc, interval_elements_raw);
	tcase_add_test(tc, create_full_ranges_and_many_entries);
	tcase_add_test(tc, create_with_the_vetting_table);
	tcase_add_test(tc, create_without_masquerade_and_dns);
	tcase_add_test(tc, create_ipv4_proxy_only);
	tcase_add_test(tc, nft_binary_reads_the_same);
	tcase_add_test(tc, create_rejects_bad_config);
	tcase_add_test(tc, create_twice_fails_and_keeps_the_first);
	tcase_add_test(tc, failed_batch_leaves_nothing);
	tcase_add_test(tc, delete_leaves_nothing);
	suite_add_tcase(s, tc);

	tc = tcase_create("allow");
	/* Timeouts run in real time: the refresh tests take about 5 s each. */
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, netns_setup, netns_teardown);
	tcase_add_test(tc, allow_beyond_set_size_is_atomic);
	tcase_add_test(tc, allow_rejects_bad_input);
	tcase_add_test(tc, allow_without_table_fails);
	tcase_add_test(tc, allow_expires);
	tcase_add_test(tc, allow_refresh_extends_timeout);
	tcase_add_test(tc, allow_refresh_extends_timeout_without_destroy);
	tcase_add_test(tc, allow_duplicates_and_mixed_families);
	tcase_add_test(tc, destroy_setelem_semantics);
	tcase_add_test(tc, allow_fills_the_largest_set);
	tcase_add_test(tc, block_adds_single_addresses);
	tcase_add_test(tc, policy_replaces_every_set);
	suite_add_tcase(s, tc);

	tc = tcase_create("ranges");
	tcase_add_test(tc, range_arithmetic);
	suite_add_tcase(s, tc);

	tc = tcase_create("traffic");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, netns_setup, netns_teardown);
	tcase_add_test(tc, traffic_follows_the_policy);
	tcase_add_test(tc, policy_cuts_flows);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * Can this process make a network namespace and talk nf_tables in it?
 * Asked in a child, so that this process stays where it is. Returns
 * NULL, or why not.
 */
static const char *probe(char *why, size_t len)
{
	int fds[2];
	pid_t pid;
	ssize_t n;
	int status;

	if (geteuid() != 0) {
		snprintf(why, len, "needs root to create network namespaces (euid %u)",
			 (unsigned)geteuid());
		return why;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return why;
	}
	pid = fork();
	if (pid == 0) {
		struct cordon_error err = { 0 };
		struct cordon_nft *probe_nft;
		struct nlmsghdr *nlh;

		if (unshare(CLONE_NEWNET) < 0) {
			dprintf(fds[1], "unshare(CLONE_NEWNET): %s", strerror(errno));
			_exit(1);
		}
		probe_nft = cordon_nft_open(&err);
		if (!probe_nft) {
			dprintf(fds[1], "%s: %s", err.msg, strerror(err.errnum));
			_exit(1);
		}
		nlh = nft_request_msg(probe_nft, NFT_MSG_GETTABLE, NLM_F_DUMP);
		if (nft_request(probe_nft, nlh, NULL, NULL, "list tables", &err) < 0) {
			dprintf(fds[1], "nf_tables unavailable: %s: %s", err.msg,
				strerror(err.errnum));
			_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], why, len - 1);
	close(fds[0]);
	why[n > 0 ? n : 0] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return why[0] ? why : "the namespace probe failed";
	return NULL;
}

int main(void)
{
	struct cordon_error err = { 0 };
	char why[256];
	const char *skip;

	/* The engine calls the netlink libraries through tables: filled as cordon fills them. */
	if (cordon_netlib_load(CORDON_NETLIB_ALL, &err) < 0) {
		printf("Bail out! %s\n", err.msg);
		return EXIT_FAILURE;
	}
	skip = probe(why, sizeof(why));

	/* nf_tables in a network namespace of our own: under CI, a failure if absent. */
	if (skip && unit_ci()) {
		printf("Bail out! %s (CI=true: a missing precondition is a failure)\n", skip);
		return EXIT_FAILURE;
	}
	if (skip) {
		/* TAP: a plan of nothing, with the reason meson shows as SKIP. */
		printf("1..0 # SKIP %s\n", skip);
		return EXIT_SUCCESS;
	}
	return unit_run(nft_suite());
}
