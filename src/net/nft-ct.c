// SPDX-License-Identifier: Apache-2.0
/*
 * Cutting the gateway's flows that a new policy no longer allows
 * (cordon_nft_ct_cut, include/cordon/net.h).
 *
 * The forward chain looks at a flow's first packet only; what follows is
 * accepted as "established". So when a live update takes an address out
 * of the allowlist, its open connections must go from conntrack as well:
 * their next packet is then a new flow the ruleset judges, and drops.
 * The netfilter socket the ruleset is written through speaks ctnetlink
 * too (both are nfnetlink subsystems), in the gateway's namespace: one
 * dump of the table, then one delete per flow the caller refuses.
 */
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <string.h>

#include "nft-internal.h"

/* A flow to delete: its original tuple, as the dump gave it, and its zone. */
struct ct_flow {
	uint8_t tuple[256];
	uint16_t tuple_len;
	uint8_t family; /* the kernel reads the tuple by the message's family */
	bool has_zone;
	uint16_t zone; /* network order, as it came */
};

struct ct_dump {
	bool (*keep)(const struct cordon_addr *src, const struct cordon_addr *dst, void *opaque);
	void *opaque;
	struct ct_flow *v;
	size_t n, cap;
};

static struct nlmsghdr *ct_msg(struct cordon_nft *nft, uint16_t type, uint16_t flags,
			       uint8_t family)
{
	struct nlmsghdr *nlh = nft_request_msg(nft, 0, flags);
	struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);

	nlh->nlmsg_type = (uint16_t)((NFNL_SUBSYS_CTNETLINK << 8) | type);
	nfg->nfgen_family = family;
	return nlh;
}

/* The source and destination of an original tuple's CTA_TUPLE_IP. */
static bool tuple_addrs(const struct nlattr *tuple, struct cordon_addr *src,
			struct cordon_addr *dst)
{
	const struct nlattr *ip = NULL, *a;

	mnl_attr_for_each_nested(a, tuple)
		if (mnl_attr_get_type(a) == CTA_TUPLE_IP)
			ip = a;
	if (!ip)
		return false;
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	mnl_attr_for_each_nested(a, ip) {
		uint16_t type = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);
		struct cordon_addr *to = type == CTA_IP_V4_SRC || type == CTA_IP_V6_SRC ? src : dst;
		int family = type == CTA_IP_V4_SRC || type == CTA_IP_V4_DST ? AF_INET : AF_INET6;

		if (type != CTA_IP_V4_SRC && type != CTA_IP_V4_DST && type != CTA_IP_V6_SRC &&
		    type != CTA_IP_V6_DST)
			continue;
		if (len != (family == AF_INET ? 4 : 16))
			return false;
		to->family = family;
		memcpy(to->u.bytes, mnl_attr_get_payload(a), len);
	}
	return src->family && dst->family == src->family;
}

static int ct_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ct_dump *d = data;
	const struct nlattr *a, *tuple = NULL, *zone = NULL;
	struct cordon_addr src, dst;
	struct ct_flow *f;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_ORIG)
			tuple = a;
		else if (mnl_attr_get_type(a) == CTA_ZONE &&
			 mnl_attr_get_payload_len(a) == sizeof(uint16_t))
			zone = a;
	}
	/* A flow of neither family (none in the gateway) is not ours to judge. */
	if (!tuple || !tuple_addrs(tuple, &src, &dst) || d->keep(&src, &dst, d->opaque))
		return MNL_CB_OK;
	if (mnl_attr_get_payload_len(tuple) > sizeof(f->tuple)) {
		errno = EMSGSIZE;
		return MNL_CB_ERROR;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->v = cordon_xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	f = &d->v[d->n++];
	memset(f, 0, sizeof(*f));
	f->family = (uint8_t)dst.family;
	f->tuple_len = mnl_attr_get_payload_len(tuple);
	memcpy(f->tuple, mnl_attr_get_payload(tuple), f->tuple_len);
	if (zone) {
		f->has_zone = true;
		memcpy(&f->zone, mnl_attr_get_payload(zone), sizeof(f->zone));
	}
	return MNL_CB_OK;
}

static int ack_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

int cordon_nft_ct_cut(struct cordon_nft *nft,
		      bool (*keep)(const struct cordon_addr *src, const struct cordon_addr *dst,
				   void *opaque),
		      void *opaque, size_t *cut, struct cordon_error *err)
{
	struct ct_dump d = { .keep = keep, .opaque = opaque };
	int ret = 0;

	*cut = 0;
	/* The whole table first: no request may go out while a dump is being read. */
	if (nft_request(nft, ct_msg(nft, IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC), ct_dump_cb, &d,
			"reading the gateway's flows", err) < 0) {
		free(d.v);
		return -1;
	}
	for (size_t i = 0; i < d.n && ret == 0; i++) {
		struct nlmsghdr *nlh = ct_msg(nft, IPCTNL_MSG_CT_DELETE, 0, d.v[i].family);
		struct nlattr *nest = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
		struct cordon_error one = { 0 };

		memcpy(mnl_nlmsg_get_payload_tail(nlh), d.v[i].tuple, d.v[i].tuple_len);
		nlh->nlmsg_len += MNL_ALIGN(d.v[i].tuple_len);
		mnl_attr_nest_end(nlh, nest);
		if (d.v[i].has_zone)
			mnl_attr_put(nlh, CTA_ZONE, sizeof(d.v[i].zone), &d.v[i].zone);
		if (nft_request(nft, nlh, ack_cb, NULL, "cutting a flow", &one) == 0)
			++*cut;
		else if (one.errnum != ENOENT) /* ended since the dump: nothing to cut */
			ret = cordon_error_set(err, one.code, one.errnum, "%s", one.msg);
	}
	free(d.v);
	return ret;
}
