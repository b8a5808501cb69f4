// SPDX-License-Identifier: Apache-2.0
/*
 * nft: the gateway namespace's nftables ruleset (include/cordon/net.h).
 *
 * Everything that changes the ruleset is one batch (nft-batch.c): the
 * whole table at creation, every insertion of DNS-attested addresses,
 * every address the host gains while the sandbox runs, the deletion.
 * Reading goes through GET requests and dumps.
 *
 * Refreshing an element's timeout. Before Linux 6.12 re-adding an
 * element that is already in a set leaves its old expiry in place, so
 * an address the DNS proxy attests again would still expire on the old
 * TTL. cordon_nft_allow therefore replaces each element within one
 * batch: DESTROYSETELEM (Linux 6.3: a delete that ignores a missing
 * element) and then NEWSETELEM with the new timeout. Because both are
 * in one transaction, an element being replaced is never absent for a
 * packet, and the set's size limit counts it once. Kernels before 6.3
 * refuse the unknown message type (EINVAL); the first time that happens
 * the socket switches to asking the kernel which elements exist (one
 * GETSETELEM each) and sends DELSETELEM only for those, retrying when an
 * element expires between the question and the commit. The new timeout
 * replaces the old one whether it is longer or shorter: the latest DNS
 * answer decides.
 */
#include <string.h>

#include "nft-internal.h"

int cordon_nft_create(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
		      struct cordon_error *err)
{
	nft_batch_begin(nft);
	if (nft_build_ruleset(nft, cfg, err) < 0)
		return -1;
	return nft_batch_commit(nft, "create", err);
}

int cordon_nft_delete(struct cordon_nft *nft, struct cordon_error *err)
{
	_cleanup_nft_table_ struct nftnl_table *t = nft_must(nftnl_table_alloc());
	struct nlmsghdr *nlh;

	nft_batch_begin(nft);
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, CORDON_NFT_TABLE);
	nlh = nft_batch_msg(nft, NFT_MSG_DELTABLE, 0, "table inet " CORDON_NFT_TABLE);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nft_batch_next(nft, nlh);
	return nft_batch_commit(nft, "delete", err);
}

/* --- allow ------------------------------------------------------------ */

static int addr_cmp(const void *a, const void *b)
{
	const struct cordon_addr *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->u.bytes, y->u.bytes, x->family == AF_INET ? 4 : 16);
}

/* Sorted, without duplicates: a DELSETELEM twice for one element fails. */
static struct cordon_addr *addrs_unique(const struct cordon_addr *addrs, size_t n, size_t *out_n)
{
	struct cordon_addr *v = cordon_xmalloc(n * sizeof(*v));
	size_t k = 0;

	memcpy(v, addrs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), addr_cmp);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || addr_cmp(&v[k - 1], &v[i]) != 0)
			v[k++] = v[i];
	*out_n = k;
	return v;
}

static void build_replace(struct cordon_nft *nft, uint16_t delete_type,
			  const struct cordon_addr *addrs, size_t n, const bool *absent,
			  uint32_t timeout_ms)
{
	static const int families[] = { AF_INET, AF_INET6 };

	nft_batch_begin(nft);
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		nft_build_allow_elems(nft, delete_type, families[f], addrs, n, absent, 0);
		nft_build_allow_elems(nft, NFT_MSG_NEWSETELEM, families[f], addrs, n, NULL,
				      timeout_ms);
	}
}

/* Linux 6.3 and later: DESTROYSETELEM + NEWSETELEM, no questions asked. */
static int allow_destroy(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
			 uint32_t timeout_ms, struct cordon_error *err)
{
	const struct nft_msg *failed;

	build_replace(nft, NFT_MSG_DESTROYSETELEM, addrs, n, NULL, timeout_ms);
	if (nft_batch_commit(nft, "allow", err) == 0) {
		nft->destroy = NFT_DESTROY_YES;
		return 0;
	}
	failed = nft_batch_failed(nft);
	if (nft->destroy == NFT_DESTROY_UNKNOWN && failed &&
	    failed->type == NFT_MSG_DESTROYSETELEM &&
	    (failed->error == EINVAL || failed->error == EOPNOTSUPP)) {
		nft->destroy = NFT_DESTROY_NO;
		return 1; /* take the other way */
	}
	return -1;
}

/* Before Linux 6.3: DELSETELEM for the elements the kernel says exist. */
static int allow_lookup(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
			uint32_t timeout_ms, struct cordon_error *err)
{
	_cleanup_free_ bool *absent = cordon_xcalloc(n, sizeof(*absent));
	const struct nft_msg *failed;

	for (int attempt = 0;; attempt++) {
		for (size_t i = 0; i < n; i++) {
			bool exists;

			if (nft_elem_exists(nft, &addrs[i], &exists, err) < 0)
				return -1;
			absent[i] = !exists;
		}
		build_replace(nft, NFT_MSG_DELSETELEM, addrs, n, absent, timeout_ms);
		if (nft_batch_commit(nft, "allow", err) == 0)
			return 0;
		/* An element expired between the question and the commit. */
		failed = nft_batch_failed(nft);
		if (!failed || failed->type != NFT_MSG_DELSETELEM || failed->error != ENOENT ||
		    attempt == 2)
			return -1;
	}
}

int cordon_nft_allow(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
		     uint32_t timeout_ms, struct cordon_error *err)
{
	_cleanup_free_ struct cordon_addr *unique = NULL;
	int ret;

	if (n == 0)
		return 0;
	if (timeout_ms == 0)
		/* An element without a timeout would stay forever. */
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: allow: a timeout is required");
	for (size_t i = 0; i < n; i++)
		if (addrs[i].family != AF_INET && addrs[i].family != AF_INET6)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: allow: address %zu has family %d", i,
						addrs[i].family);
	if (n > 1) {
		unique = addrs_unique(addrs, n, &n);
		addrs = unique;
	}

	if (nft->destroy != NFT_DESTROY_NO) {
		ret = allow_destroy(nft, addrs, n, timeout_ms, err);
		if (ret <= 0)
			return ret;
	}
	return allow_lookup(nft, addrs, n, timeout_ms, err);
}

/* --- block ------------------------------------------------------------ */

int cordon_nft_block(struct cordon_nft *nft, const struct cordon_addr *addrs, size_t n,
		     struct cordon_error *err)
{
	static const int families[] = { AF_INET, AF_INET6 };
	_cleanup_free_ struct cordon_addr *unique = NULL;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (addrs[i].family != AF_INET && addrs[i].family != AF_INET6)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: block: address %zu has family %d", i,
						addrs[i].family);
	if (n > 1) {
		unique = addrs_unique(addrs, n, &n);
		addrs = unique;
	}
	nft_batch_begin(nft);
	for (size_t f = 0; f < ARRAY_SIZE(families); f++)
		nft_build_block_elems(nft, families[f], addrs, n);
	return nft_batch_commit(nft, "block", err);
}

/* --- a new policy ---------------------------------------------------- */

static void build_intervals(struct cordon_nft *nft, const char *set, int family,
			    const struct cordon_cidr *cidrs, size_t n)
{
	_cleanup_free_ struct nft_range *ranges = cordon_xcalloc(n ? n : 1, sizeof(*ranges));

	nft_build_flush(nft, set);
	nft_build_intervals(nft, set, family, ranges,
			    nft_ranges_from_cidrs(cidrs, n, family, ranges));
}

int cordon_nft_replace_policy(struct cordon_nft *nft, const struct cordon_nft_policy *p,
			      struct cordon_error *err)
{
	static const int families[] = { AF_INET, AF_INET6 };

	for (size_t i = 0; i < p->n_allow; i++)
		if (p->allow[i].family != AF_INET && p->allow[i].family != AF_INET6)
			return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
						"nft: policy: address %zu has family %d", i,
						p->allow[i].family);
	if (p->n_allow > CORDON_NFT_SET_MAX)
		return cordon_error_set(err, CORDON_E_NET_POLICY, E2BIG,
					"nft: policy: %zu addresses to keep", p->n_allow);
	nft_batch_begin(nft);
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		int family = families[f];

		build_intervals(nft, family == AF_INET ? "static4" : "static6", family, p->statics,
				p->n_static);
		build_intervals(nft, family == AF_INET ? "blocked4" : "blocked6", family,
				p->blocked, p->n_blocked);
		nft_build_flush(nft, family == AF_INET ? "allow4" : "allow6");
		nft_build_allow_timed(nft, family, p->allow, p->allow_ms, p->n_allow);
	}
	return nft_batch_commit(nft, "policy", err);
}

/* --- reading ---------------------------------------------------------- */

static int elem_key_cmp(const void *a, const void *b)
{
	const struct nft_elem *x = a, *y = b;

	return addr_cmp(&x->key, &y->key);
}

static int counter_cb(const struct nlmsghdr *nlh, void *data)
{
	_cleanup_nft_obj_ struct nftnl_obj *o = nft_must(nftnl_obj_alloc());
	struct cordon_nft_counters *out = data;

	if (nftnl_obj_nlmsg_parse(nlh, o) < 0) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	out->dropped_packets = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS);
	out->dropped_bytes = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_BYTES);
	return MNL_CB_OK;
}

int cordon_nft_read_counters(struct cordon_nft *nft, struct cordon_nft_counters *out,
			     struct cordon_error *err)
{
	_cleanup_nft_obj_ struct nftnl_obj *o = nft_must(nftnl_obj_alloc());
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETOBJ, 0);

	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, CORDON_NFT_TABLE);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, NFT_COUNTER_DROPPED);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	memset(out, 0, sizeof(*out));
	return nft_request(nft, nlh, counter_cb, out, "read counter " NFT_COUNTER_DROPPED, err);
}

static int drop_order(const void *a, const void *b)
{
	const struct cordon_nft_drop *x = a, *y = b;

	return x->packets != y->packets ? (x->packets < y->packets ? 1 : -1) :
	       x->bytes != y->bytes	? (x->bytes < y->bytes ? 1 : -1) :
					  0;
}

int cordon_nft_read_drops(struct cordon_nft *nft, struct cordon_nft_drop **out, size_t *n,
			  struct cordon_error *err)
{
	static const char *const sets[] = { "dropped4", "dropped6" };
	struct cordon_nft_drop *v = NULL;
	size_t k = 0;

	for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
		_cleanup_free_ struct nft_elem *elems = NULL;
		size_t count;

		if (nft_read_elems(nft, sets[s], &elems, &count, err) < 0) {
			free(v);
			return -1;
		}
		v = cordon_xrealloc(v, (k + count + 1) * sizeof(*v));
		for (size_t i = 0; i < count; i++) {
			v[k].addr = elems[i].key;
			v[k].packets = elems[i].packets;
			v[k].bytes = elems[i].bytes;
			k++;
		}
	}
	if (k)
		qsort(v, k, sizeof(*v), drop_order);
	*out = v;
	*n = k;
	return 0;
}

static int check_set_name(const char *set, struct cordon_error *err)
{
	if (!set || !set[0] || strlen(set) >= NFT_SET_MAXNAMELEN)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL,
					"nft: '%s' is not a set name", set ? set : "(null)");
	return 0;
}

int cordon_nft_list_set(struct cordon_nft *nft, const char *set, struct cordon_addr *out,
			size_t cap, size_t *n, struct cordon_error *err)
{
	_cleanup_free_ struct nft_elem *elems = NULL;
	size_t count, k = 0;

	if (check_set_name(set, err) < 0 || nft_read_elems(nft, set, &elems, &count, err) < 0)
		return -1;
	if (count) /* qsort wants a non-NULL array even for none */
		qsort(elems, count, sizeof(*elems), elem_key_cmp);
	/* Interval sets: the start of each range; their end elements are not
	 * addresses in the set. */
	for (size_t i = 0; i < count; i++) {
		if (elems[i].interval_end)
			continue;
		if (k < cap)
			out[k] = elems[i].key;
		k++;
	}
	*n = k;
	return 0;
}

int cordon_nft_list_ranges(struct cordon_nft *nft, const char *set, struct cordon_cidr *out,
			   size_t cap, size_t *n, struct cordon_error *err)
{
	_cleanup_free_ struct nft_elem *elems = NULL;
	_cleanup_free_ struct nft_range *ranges = NULL;
	size_t count, n_ranges, k = 0;
	uint32_t flags;

	if (check_set_name(set, err) < 0 || nft_read_set_flags(nft, set, &flags, err) < 0 ||
	    nft_read_elems(nft, set, &elems, &count, err) < 0)
		return -1;
	if (!(flags & NFT_SET_INTERVAL)) {
		/* Each element of a plain set is a single address. */
		if (count) /* qsort wants a non-NULL array even for none */
			qsort(elems, count, sizeof(*elems), elem_key_cmp);
		for (size_t i = 0; i < count; i++, k++)
			if (k < cap)
				out[k] = (struct cordon_cidr){
					elems[i].key, elems[i].key.family == AF_INET ? 32 : 128
				};
		*n = k;
		return 0;
	}
	ranges = cordon_xcalloc(count ? count : 1, sizeof(*ranges));
	n_ranges = count ? nft_elems_to_ranges(elems, count, ranges) : 0;
	for (size_t i = 0; i < n_ranges; i++)
		k += nft_range_to_cidrs(&ranges[i], elems[0].key.family, k < cap ? out + k : NULL,
					k < cap ? cap - k : 0);
	*n = k;
	return 0;
}
