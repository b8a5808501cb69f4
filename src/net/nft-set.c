// SPDX-License-Identifier: Apache-2.0
/*
 * Addresses and intervals as set elements, and back.
 *
 * An interval set holds ranges as pairs of elements: the first address
 * of the range, and one past its last address flagged INTERVAL_END. A
 * range that runs to the top of the address space has no end element.
 * When the lowest range does not start at 0.0.0.0 (or ::), an end
 * element at 0 comes first and closes the "gap" below it, as nft writes
 * interval sets (older kernels' rbtree lookups expect it; current ones
 * do not mind it). The kernel refuses overlapping ranges, so ranges are
 * merged here first: an allowlist may well name 10.0.0.0/8 and 10.1.2.3.
 * Reading back pairs the elements again and skips the gap.
 */
#include <arpa/inet.h>
#include <string.h>

#include "nft-internal.h"

typedef unsigned __int128 u128;

static unsigned family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static u128 family_max(int family)
{
	return family == AF_INET ? (u128)UINT32_MAX : ~(u128)0;
}

static size_t family_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static u128 bytes_to_u128(const uint8_t *b, size_t len)
{
	u128 v = 0;

	for (size_t i = 0; i < len; i++)
		v = v << 8 | b[i];
	return v;
}

static void u128_to_addr(u128 v, int family, struct cordon_addr *out)
{
	size_t len = family_len(family);

	memset(out, 0, sizeof(*out));
	out->family = family;
	for (size_t i = len; i-- > 0; v >>= 8)
		out->u.bytes[i] = (uint8_t)v;
}

/* Mask of the host part of a prefix (all ones for /0). */
static u128 host_mask(unsigned prefix, int family)
{
	unsigned host = family_bits(family) - prefix;

	return host >= 128 ? ~(u128)0 : (((u128)1 << host) - 1);
}

static int range_cmp(const void *a, const void *b)
{
	const struct nft_range *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

size_t nft_ranges_from_cidrs(const struct cordon_cidr *cidrs, size_t n, int family,
			     struct nft_range *out)
{
	size_t len = family_len(family), k = 0, merged = 0;

	for (size_t i = 0; i < n; i++) {
		u128 mask;

		if (cidrs[i].addr.family != family)
			continue;
		mask = host_mask(cidrs[i].prefix, family);
		out[k].first = bytes_to_u128(cidrs[i].addr.u.bytes, len) & ~mask;
		out[k].last = out[k].first | mask;
		k++;
	}
	if (k == 0)
		return 0;
	qsort(out, k, sizeof(*out), range_cmp);
	for (size_t i = 1; i < k; i++) {
		struct nft_range *cur = &out[merged];

		/* Overlapping or adjacent (once cur reaches the top, all are). */
		if (cur->last == family_max(family) || out[i].first <= cur->last + 1) {
			if (out[i].last > cur->last)
				cur->last = out[i].last;
		} else {
			out[++merged] = out[i];
		}
	}
	return merged + 1;
}

static unsigned u128_ctz(u128 v)
{
	uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);

	return lo ? (unsigned)__builtin_ctzll(lo) : 64 + (unsigned)__builtin_ctzll(hi);
}

size_t nft_range_to_cidrs(const struct nft_range *r, int family, struct cordon_cidr *out,
			  size_t cap)
{
	unsigned bits = family_bits(family);
	u128 s = r->first;
	size_t k = 0;

	for (;;) {
		unsigned host = s == 0 ? bits : u128_ctz(s);
		u128 mask;

		if (host > bits)
			host = bits;
		/* The largest aligned block at s that ends inside the range. */
		for (;; host--) {
			mask = host >= 128 ? ~(u128)0 : (((u128)1 << host) - 1);
			if (host == 0 || s + mask <= r->last)
				break;
		}
		if (k < cap) {
			u128_to_addr(s, family, &out[k].addr);
			out[k].prefix = bits - host;
		}
		k++;
		if (s + mask >= r->last)
			return k;
		s += mask + 1;
	}
}

void nft_format_key(const void *key, size_t len, char *buf, size_t size)
{
	if (len != 4 && len != 16) {
		snprintf(buf, size, "(%zu-byte key)", len);
		return;
	}
	if (!inet_ntop(len == 4 ? AF_INET : AF_INET6, key, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

/*
 * Elements gathered into messages of at most NFT_ELEMS_PER_MSG: each
 * message is named after its first element for error reports.
 */
struct elem_writer {
	struct cordon_nft *nft;
	uint16_t type; /* NFT_MSG_NEWSETELEM, DELSETELEM, DESTROYSETELEM */
	const char *set;
	int family;
	struct nftnl_set *holder;
	size_t count;
	char first[INET6_ADDRSTRLEN];
};

static struct nftnl_set *elems_holder(const char *set)
{
	struct nftnl_set *s = nft_must(nftnl_set_alloc());

	nftnl_set_set_str(s, NFTNL_SET_TABLE, CORDON_NFT_TABLE);
	nftnl_set_set_str(s, NFTNL_SET_NAME, set);
	return s;
}

static void writer_flush(struct elem_writer *w)
{
	const char *verb = w->type == NFT_MSG_NEWSETELEM ? "add to" : "delete from";
	struct nlmsghdr *nlh;
	char what[128];

	if (w->count == 0)
		return;
	if (w->count == 1)
		snprintf(what, sizeof(what), "%s set %s: %s", verb, w->set, w->first);
	else
		snprintf(what, sizeof(what), "%s set %s: %zu elements from %s", verb, w->set,
			 w->count, w->first);
	/* Without NLM_F_EXCL an element that already exists is not an error. */
	nlh = nft_batch_msg(w->nft, w->type, w->type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0, "%s",
			    what);
	nftnl_set_elems_nlmsg_build_payload(nlh, w->holder);
	nft_batch_next(w->nft, nlh);
	nftnl_set_free(w->holder);
	w->holder = elems_holder(w->set);
	w->count = 0;
}

static void writer_add(struct elem_writer *w, u128 key, uint32_t flags, uint64_t timeout_ms)
{
	struct nftnl_set_elem *e = nft_must(nftnl_set_elem_alloc());
	size_t len = family_len(w->family);
	struct cordon_addr a;

	u128_to_addr(key, w->family, &a);
	if (w->count == 0)
		nft_format_key(a.u.bytes, len, w->first, sizeof(w->first));
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, a.u.bytes, (uint32_t)len);
	if (flags)
		nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, flags);
	if (timeout_ms)
		nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, timeout_ms);
	nftnl_set_elem_add(w->holder, e);
	/* A range's start and end may land in two messages: still one batch. */
	if (++w->count == NFT_ELEMS_PER_MSG)
		writer_flush(w);
}

static void writer_done(struct elem_writer *w)
{
	writer_flush(w);
	nftnl_set_free(w->holder);
	w->holder = NULL;
}

void nft_build_intervals(struct cordon_nft *nft, const char *set, int family,
			 const struct nft_range *ranges, size_t n)
{
	struct elem_writer w = { nft, NFT_MSG_NEWSETELEM, set, family, elems_holder(set) };

	if (n > 0 && ranges[0].first != 0)
		writer_add(&w, 0, NFT_SET_ELEM_INTERVAL_END, 0);
	for (size_t i = 0; i < n; i++) {
		writer_add(&w, ranges[i].first, 0, 0);
		if (ranges[i].last != family_max(family))
			writer_add(&w, ranges[i].last + 1, NFT_SET_ELEM_INTERVAL_END, 0);
	}
	writer_done(&w);
}

/*
 * One address as a range of its own: its start, and the end element one
 * past it (none at the top of the address space). The caller sends only
 * addresses no range of the set covers, so the new range overlaps none;
 * it may touch one, an end element and a start element on one key, which
 * the kernel takes as two neighbouring ranges.
 */
void nft_build_block_elems(struct cordon_nft *nft, int family, const struct cordon_addr *addrs,
			   size_t n)
{
	const char *set = family == AF_INET ? "blocked4" : "blocked6";
	struct elem_writer w = { nft, NFT_MSG_NEWSETELEM, set, family, elems_holder(set) };
	size_t len = family_len(family);

	for (size_t i = 0; i < n; i++) {
		u128 key;

		if (addrs[i].family != family)
			continue;
		key = bytes_to_u128(addrs[i].u.bytes, len);
		writer_add(&w, key, 0, 0);
		if (key != family_max(family))
			writer_add(&w, key + 1, NFT_SET_ELEM_INTERVAL_END, 0);
	}
	writer_done(&w);
}

void nft_build_allow_elems(struct cordon_nft *nft, uint16_t type, int family,
			   const struct cordon_addr *addrs, size_t n, const bool *skip,
			   uint32_t timeout_ms)
{
	const char *set = family == AF_INET ? "allow4" : "allow6";
	struct elem_writer w = { nft, type, set, family, elems_holder(set) };
	size_t len = family_len(family);

	for (size_t i = 0; i < n; i++) {
		if (addrs[i].family != family || (skip && skip[i]))
			continue;
		writer_add(&w, bytes_to_u128(addrs[i].u.bytes, len), 0,
			   type == NFT_MSG_NEWSETELEM ? timeout_ms : 0);
	}
	writer_done(&w);
}

/* DELSETELEM naming no element: the whole set, emptied within the batch. */
void nft_build_flush(struct cordon_nft *nft, const char *set)
{
	_cleanup_nft_set_ struct nftnl_set *s = elems_holder(set);
	struct nlmsghdr *nlh = nft_batch_msg(nft, NFT_MSG_DELSETELEM, 0, "flush set %s", set);

	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nft_batch_next(nft, nlh);
}

void nft_build_allow_timed(struct cordon_nft *nft, int family, const struct cordon_addr *addrs,
			   const uint32_t *timeout_ms, size_t n)
{
	const char *set = family == AF_INET ? "allow4" : "allow6";
	struct elem_writer w = { nft, NFT_MSG_NEWSETELEM, set, family, elems_holder(set) };
	size_t len = family_len(family);

	for (size_t i = 0; i < n; i++)
		if (addrs[i].family == family)
			writer_add(&w, bytes_to_u128(addrs[i].u.bytes, len), 0,
				   timeout_ms[i] ? timeout_ms[i] : 1);
	writer_done(&w);
}

/* --- reading back ----------------------------------------------------- */

struct elems_acc {
	struct nft_elem *v;
	size_t n, cap;
};

/* An element's counter, the one stateful expression dropped4 and dropped6 give theirs. */
static int elem_counter_cb(struct nftnl_expr *e, void *data)
{
	struct nft_elem *out = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	if (name && strcmp(name, "counter") == 0) {
		out->packets = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
		out->bytes = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_BYTES);
	}
	return 0;
}

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct elems_acc *acc = data;
	_cleanup_nft_set_ struct nftnl_set *s = nft_must(nftnl_set_alloc());
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;

	if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	it = nft_must(nftnl_set_elems_iter_create(s));
	/* _next() returns the current element, then moves on. */
	while ((e = nftnl_set_elems_iter_next(it))) {
		struct nft_elem *out;
		const void *key;
		uint32_t len = 0;

		key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
		if (!key || (len != 4 && len != 16))
			continue;
		if (acc->n == acc->cap) {
			acc->cap = acc->cap ? acc->cap * 2 : 64;
			acc->v = cordon_xrealloc(acc->v, acc->cap * sizeof(*acc->v));
		}
		out = &acc->v[acc->n++];
		memset(out, 0, sizeof(*out));
		out->key.family = len == 4 ? AF_INET : AF_INET6;
		memcpy(out->key.u.bytes, key, len);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS))
			out->interval_end = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) &
					    NFT_SET_ELEM_INTERVAL_END;
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
			out->timeout_ms = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
			out->expires_ms = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
		nftnl_set_elem_expr_foreach(e, elem_counter_cb, out);
	}
	nftnl_set_elems_iter_destroy(it);
	return MNL_CB_OK;
}

int nft_read_elems(struct cordon_nft *nft, const char *set, struct nft_elem **out, size_t *n,
		   struct cordon_error *err)
{
	struct elems_acc acc = { 0 };
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "list set %s", set);
	/* A dump interrupted by a concurrent change is simply taken again. */
	for (int attempt = 0;; attempt++) {
		_cleanup_nft_set_ struct nftnl_set *s = elems_holder(set);
		struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETSETELEM, NLM_F_DUMP);

		nftnl_set_elems_nlmsg_build_payload(nlh, s);
		acc.n = 0;
		ret = nft_request(nft, nlh, elems_cb, &acc, what, err);
		if (ret == 0 || err->errnum != EINTR || attempt == 3)
			break;
	}
	if (ret < 0) {
		free(acc.v);
		return ret;
	}
	*out = acc.v;
	*n = acc.n;
	return 0;
}

static int elem_cmp(const void *a, const void *b)
{
	const struct nft_elem *x = a, *y = b;
	int c = memcmp(x->key.u.bytes, y->key.u.bytes, x->key.family == AF_INET ? 4 : 16);

	if (c)
		return c;
	/* An end closes the range before the start that opens the next. */
	return (int)y->interval_end - (int)x->interval_end;
}

size_t nft_elems_to_ranges(struct nft_elem *elems, size_t n, struct nft_range *out)
{
	size_t k = 0;
	bool open = false;
	u128 start = 0;
	int family;

	if (n == 0)
		return 0;
	family = elems[0].key.family;
	qsort(elems, n, sizeof(*elems), elem_cmp);
	for (size_t i = 0; i < n; i++) {
		u128 key = bytes_to_u128(elems[i].key.u.bytes, family_len(family));

		if (!elems[i].interval_end) {
			if (open && key > start) { /* two starts: the first ends here */
				out[k].first = start;
				out[k++].last = key - 1;
			}
			open = true;
			start = key;
		} else if (open) {
			out[k].first = start;
			out[k++].last = key - 1;
			open = false;
		}
		/* An end with nothing open is the gap element below the first range. */
	}
	if (open) {
		out[k].first = start;
		out[k++].last = family_max(family);
	}
	return k;
}

static int set_flags_cb(const struct nlmsghdr *nlh, void *data)
{
	_cleanup_nft_set_ struct nftnl_set *s = nft_must(nftnl_set_alloc());

	if (nftnl_set_nlmsg_parse(nlh, s) < 0) {
		errno = EPROTO;
		return MNL_CB_ERROR;
	}
	*(uint32_t *)data = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
	return MNL_CB_OK;
}

int nft_read_set_flags(struct cordon_nft *nft, const char *set, uint32_t *flags,
		       struct cordon_error *err)
{
	_cleanup_nft_set_ struct nftnl_set *s = elems_holder(set);
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETSET, 0);
	char what[96];

	snprintf(what, sizeof(what), "get set %s", set);
	nftnl_set_nlmsg_build_payload(nlh, s);
	*flags = 0;
	return nft_request(nft, nlh, set_flags_cb, flags, what, err);
}

int nft_elem_exists(struct cordon_nft *nft, const struct cordon_addr *a, bool *exists,
		    struct cordon_error *err)
{
	const char *set = a->family == AF_INET ? "allow4" : "allow6";
	_cleanup_nft_set_ struct nftnl_set *s = elems_holder(set);
	struct nftnl_set_elem *e = nft_must(nftnl_set_elem_alloc());
	struct nlmsghdr *nlh = nft_request_msg(nft, NFT_MSG_GETSETELEM, 0);
	char what[96], addr[INET6_ADDRSTRLEN];
	int ret;

	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, a->u.bytes, (uint32_t)family_len(a->family));
	nftnl_set_elem_add(s, e);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nft_format_key(a->u.bytes, family_len(a->family), addr, sizeof(addr));
	snprintf(what, sizeof(what), "get element %s of set %s", addr, set);
	ret = nft_request(nft, nlh, NULL, NULL, what, err);
	*exists = ret == 0;
	if (ret < 0 && err->errnum == ENOENT)
		return 0;
	return ret;
}
