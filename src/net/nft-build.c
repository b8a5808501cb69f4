// SPDX-License-Identifier: Apache-2.0
/*
 * The libnftnl builders both of cordon's tables are made of: the gateway
 * ruleset (nft-rules.c, table inet cordon) and cordon-nethelper's static
 * host table (nft-host.c, table inet cordon-host). They differ
 * only in what is a parameter here: the table, a chain's policy, a
 * table's flags.
 *
 * Only libnftnl, libmnl and nft-batch.c are used: cordon-nethelper links
 * this object and must not pull in libnl (see src/meson.build).
 *
 * Every load writes register 1 and every match reads it, so a rule is a
 * sequence of load-then-compare pairs, then a verdict.
 */
#include <linux/netfilter/nf_conntrack_common.h>

#include "nft-internal.h"

/* --- objects ---------------------------------------------------------- */

void nft_put_table(struct cordon_nft *nft, const char *name, uint32_t flags, const char *comment)
{
	_cleanup_nft_table_ struct nftnl_table *t = nft_must(nftnl_table_alloc());
	struct nlmsghdr *nlh;

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, name);
	/* An unset attribute is left out of the message: no flags, no
	 * NFTA_TABLE_FLAGS (only the helper's lock table has any). */
	if (flags)
		nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, flags);
	/* As nft writes a table's comment, so that nft list shows it. */
	if (comment) {
		struct nftnl_udata_buf *ud = nft_must(nftnl_udata_buf_alloc(256));

		if (!nftnl_udata_put_strz(ud, NFTNL_UDATA_TABLE_COMMENT, comment))
			nft_out_of_memory();
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
				     nftnl_udata_buf_len(ud));
		nftnl_udata_buf_free(ud);
	}
	/* EXCL: a table already there means someone else's ruleset, or a
	 * second create; neither is silently merged into. */
	nlh = nft_batch_msg(nft, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, "table inet %s",
			    name);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nft_batch_next(nft, nlh);
}

void nft_put_chain(struct cordon_nft *nft, const char *table, const char *name, const char *type,
		   uint32_t hook, int32_t prio, uint32_t policy)
{
	_cleanup_nft_chain_ struct nftnl_chain *c = nft_must(nftnl_chain_alloc());
	struct nlmsghdr *nlh;

	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, type);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
	nlh = nft_batch_msg(nft, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL, "chain %s", name);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	nft_batch_next(nft, nlh);
}

struct nftnl_rule *nft_rule_new(const char *table, const char *chain)
{
	struct nftnl_rule *r = nft_must(nftnl_rule_alloc());

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	return r;
}

void nft_put_rule(struct cordon_nft *nft, struct nftnl_rule *r, const char *what)
{
	struct nlmsghdr *nlh;

	nlh = nft_batch_msg(nft, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND, "chain %s: rule %s",
			    nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), what);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nft_batch_next(nft, nlh);
	nftnl_rule_free(r);
}

/* --- expressions ------------------------------------------------------ */

void nft_load_meta(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("meta"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

void nft_load_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("payload"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

void nft_load_ct(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("ct"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

void nft_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("cmp"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r, e);
}

void nft_match_meta(struct nftnl_rule *r, uint32_t key, const void *value, uint32_t len)
{
	nft_load_meta(r, key);
	nft_cmp(r, NFT_CMP_EQ, value, len);
}

void nft_match_bits(struct nftnl_rule *r, const void *mask, uint32_t len)
{
	/* The widest register value a caller masks: ct labels, 128 bits. */
	static const uint8_t zero[16];
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("bitwise"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
	nftnl_rule_add_expr(r, e);
	nft_cmp(r, NFT_CMP_NEQ, zero, len);
}

void nft_match_ct_established(struct nftnl_rule *r)
{
	uint32_t mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);

	nft_load_ct(r, NFT_CT_STATE);
	nft_match_bits(r, &mask, sizeof(mask));
}

void nft_match_ct_invalid(struct nftnl_rule *r)
{
	uint32_t mask = NF_CT_STATE_INVALID_BIT;

	nft_load_ct(r, NFT_CT_STATE);
	nft_match_bits(r, &mask, sizeof(mask));
}

void nft_match_ct_count_over(struct nftnl_rule *r, uint32_t limit)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("connlimit"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_COUNT, limit);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);
	nftnl_rule_add_expr(r, e);
}

void nft_match_no_route_back(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("fib"));
	uint32_t absent = 0;

	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS,
			   NFTA_FIB_F_SADDR | NFTA_FIB_F_IIF | NFTA_FIB_F_PRESENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_OIF);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	/* PRESENT stores one byte and clears the rest of the register. */
	nft_cmp(r, NFT_CMP_EQ, &absent, sizeof(absent));
}

void nft_xor(struct nftnl_rule *r, const void *x, uint32_t len)
{
	static const uint8_t ones[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("bitwise"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, ones, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, x, len);
	nftnl_rule_add_expr(r, e);
}

void nft_lookup(struct nftnl_rule *r, const char *set, uint32_t set_id)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("lookup"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
	nftnl_rule_add_expr(r, e);
}

void nft_record(struct nftnl_rule *r, const char *set, uint32_t set_id)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("dynset"));
	/* Owned by the dynset expression from here. */
	struct nftnl_expr *counter = nft_must(nftnl_expr_alloc("counter"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, set_id);
	nftnl_expr_set(e, NFTNL_EXPR_DYNSET_EXPR, counter, 0);
	nftnl_rule_add_expr(r, e);
}

void nft_count(struct nftnl_rule *r, const char *counter)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("objref"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, counter);
	nftnl_rule_add_expr(r, e);
}

void nft_verdict(struct nftnl_rule *r, int v)
{
	struct nftnl_expr *e = nft_must(nftnl_expr_alloc("immediate"));

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)v);
	nftnl_rule_add_expr(r, e);
}
