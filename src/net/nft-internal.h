/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside src/net/nft*.c: the socket and batch state behind struct
 * cordon_nft, and the builders the public functions in nft.c are made of.
 *
 *   nft-batch.c  socket, batch buffer, commit with one ack per message,
 *                kernel errors mapped to the object that failed; requests
 *   nft-build.c  tables, chains, rules and expressions, for any table
 *                (the helper's host table is built of them too)
 *   nft-rules.c  table, counter, sets, chains and rules of the ruleset
 *   nft-set.c    addresses and intervals as set elements, and back
 *
 * Tests include this header too: they build a batch by hand to prove
 * that a failure late in a batch leaves nothing behind.
 */
#ifndef CORDON_NET_NFT_INTERNAL_H
#define CORDON_NET_NFT_INTERNAL_H

/* glibc's netinet/in.h (through net.h) must come before linux/in.h. */
#include "cordon/net.h"

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

/* libmnl and libnftnl, called through the table cordon_netlib_load fills. */
#include "netlib.h"

/*
 * NFT_MSG_DESTROYSETELEM (Linux 6.3): DELSETELEM that ignores a missing
 * element. Debian 12's kernel headers (6.1) predate it; the number is ABI.
 */
#ifndef NFT_MSG_DESTROYSETELEM
#define NFT_MSG_DESTROYSETELEM 30
#endif

/* The counter object every counted drop of the gateway's chains feeds. */
#define NFT_COUNTER_DROPPED "dropped"

/* Elements per NEWSETELEM message: the element list is one netlink
 * attribute, whose length is 16 bits; 256 IPv6 elements with a timeout
 * stay far below 64 KiB. */
#define NFT_ELEMS_PER_MSG 256

/* Room reserved before a message is built: libnftnl does not bound its
 * writes, so every message must fit the reserve (the largest is an
 * element message, see NFT_ELEMS_PER_MSG). */
#define NFT_MSG_RESERVE (72 * 1024)

/* What one message of a batch was, to name it when the kernel refuses it. */
struct nft_msg {
	uint32_t offset; /* of its nlmsghdr in the batch buffer */
	uint16_t type;	 /* NFT_MSG_* */
	bool acked;
	int error;	     /* 0 or the kernel's positive errno */
	uint32_t bad_attr;   /* NLMSGERR_ATTR_OFFS from the extended ack, 0 if none */
	char kernel_msg[96]; /* NLMSGERR_ATTR_MSG, "" if none */
	char what[128];	     /* "table inet cordon", "add to set allow4: 192.0.2.1", ... */
};

enum nft_destroy_support {
	NFT_DESTROY_UNKNOWN = 0, /* not tried yet */
	NFT_DESTROY_YES,
	NFT_DESTROY_NO, /* kernel before 6.3 */
};

struct cordon_nft {
	struct mnl_socket *sock;
	uint32_t portid;
	uint32_t seq;

	/* The batch being built: nlmsghdrs back to back, one sendmsg. */
	char *buf;
	size_t len, cap;
	uint32_t first_seq;   /* of the BATCH_BEGIN */
	struct nft_msg *msgs; /* one per message between BEGIN and END */
	size_t n_msgs, cap_msgs;

	int sndbuf, rcvbuf; /* what the socket was last grown to */
	enum nft_destroy_support destroy;

	char *rx; /* receive buffer, NFT_RX_SIZE */
};

/* A dump message of 32 KiB is the kernel's largest; twice that for slack. */
#define NFT_RX_SIZE (64 * 1024)

/* --- nft-batch.c ----------------------------------------------------- */

void __attribute__((noreturn)) nft_out_of_memory(void);
/* libnftnl allocators return NULL only when out of memory. */
#define nft_must(p)                          \
	({                                   \
		__typeof__(p) _q = (p);      \
		if (!_q)                     \
			nft_out_of_memory(); \
		_q;                          \
	})

void nft_batch_begin(struct cordon_nft *nft);
/*
 * Start the next message of the batch: room for NFT_MSG_RESERVE bytes, a
 * header with NLM_F_ACK added to flags and the next sequence number, and
 * a name for error reports (printf-style). Returns the header to fill;
 * nft_batch_next() then counts what was written.
 */
struct nlmsghdr *nft_batch_msg(struct cordon_nft *nft, uint16_t type, uint16_t flags,
			       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void nft_batch_next(struct cordon_nft *nft, struct nlmsghdr *nlh);
/*
 * End the batch, send it in one sendmsg and check one ack per message.
 * On failure *err names the first message the kernel refused (and the
 * element, when the kernel points at one), with the kernel's errno;
 * nothing of the batch was applied. op prefixes the message ("create").
 */
int nft_batch_commit(struct cordon_nft *nft, const char *op, struct cordon_error *err);
/* The first refused message of the last commit, or NULL. */
const struct nft_msg *nft_batch_failed(const struct cordon_nft *nft);

/*
 * One request outside a batch (GET*, with NLM_F_DUMP or not): cb sees
 * every reply message; returns 0, or -1 with *err filled (errno from the
 * kernel, e.g. ENOENT for a missing table or set).
 */
int nft_request(struct cordon_nft *nft, struct nlmsghdr *nlh, mnl_cb_t cb, void *data,
		const char *what, struct cordon_error *err);
/* A header for nft_request in nft->buf (overwrites any batch). */
struct nlmsghdr *nft_request_msg(struct cordon_nft *nft, uint16_t type, uint16_t flags);

/* --- nft-build.c ----------------------------------------------------- */

/*
 * Shared by the gateway's ruleset and the host table (nft-host.c), which
 * cordon-nethelper links with nft-batch.c: libnftnl, libmnl and core
 * only, no libnl.
 * Every message goes to the open batch, with CREATE | EXCL for objects.
 */

/*
 * NEWTABLE inet name; flags (NFT_TABLE_F_*) are sent only when not 0, a
 * comment (nft's table comment, in the table's user data) when not NULL.
 */
void nft_put_table(struct cordon_nft *nft, const char *name, uint32_t flags, const char *comment);
/* A base chain of table: type "filter" or "nat", hook NF_INET_*, policy NF_ACCEPT or NF_DROP. */
void nft_put_chain(struct cordon_nft *nft, const char *table, const char *name, const char *type,
		   uint32_t hook, int32_t prio, uint32_t policy);
/* An empty rule for a chain of table, to fill with the expressions below. */
struct nftnl_rule *nft_rule_new(const char *table, const char *chain);
/* Append rule r (freed) to its chain; what names it in errors. */
void nft_put_rule(struct cordon_nft *nft, struct nftnl_rule *r, const char *what);

/* Loads: meta key, len bytes of a header at offset, ct key; into register 1. */
void nft_load_meta(struct nftnl_rule *r, uint32_t key);
void nft_load_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len);
void nft_load_ct(struct nftnl_rule *r, uint32_t key);
/* Register 1 against len bytes of data (NFT_CMP_EQ, ...). */
void nft_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len);
/* meta key == value. */
void nft_match_meta(struct nftnl_rule *r, uint32_t key, const void *value, uint32_t len);
/* (register 1 & mask) != 0, of len bytes (at most 16). */
void nft_match_bits(struct nftnl_rule *r, const void *mask, uint32_t len);
/* ct state established,related. */
void nft_match_ct_established(struct nftnl_rule *r);
/* ct state invalid: a packet conntrack could not place (an ICMP error about nothing it tracks). */
void nft_match_ct_invalid(struct nftnl_rule *r);
/*
 * ct count over limit: the connections this expression has seen that
 * conntrack still tracks, this one included, are more than limit.
 */
void nft_match_ct_count_over(struct nftnl_rule *r, uint32_t limit);
/*
 * fib saddr . iif oif missing: no route back to the packet's source
 * through the interface it came in on (strict reverse-path filtering).
 */
void nft_match_no_route_back(struct nftnl_rule *r);
/* Register 1 ^= x, of len bytes (at most 16). */
void nft_xor(struct nftnl_rule *r, const void *x, uint32_t len);
/* Register 1 in set (set_id: its NFTNL_SET_ID, for a set of the same batch). */
void nft_lookup(struct nftnl_rule *r, const char *set, uint32_t set_id);
/*
 * add @SET { <register 1> counter }: register 1 (an address) into the
 * dynamic set SET, whose element counts what passes here. A full set
 * ends the rule (NFT_BREAK): put it in a rule of its own that decides
 * nothing, never in front of a verdict.
 */
void nft_record(struct nftnl_rule *r, const char *set, uint32_t set_id);
/* counter name COUNTER: feed the named counter object. */
void nft_count(struct nftnl_rule *r, const char *counter);
/* accept, drop, ...: NF_ACCEPT, NF_DROP. */
void nft_verdict(struct nftnl_rule *r, int v);

/* --- nft-rules.c ----------------------------------------------------- */

/* Check a config before anything is sent (EINVAL naming the field). */
int nft_config_check(const struct cordon_nft_config *cfg, struct cordon_error *err);
/* Append the messages that create table inet cordon to the open batch. */
int nft_build_ruleset(struct cordon_nft *nft, const struct cordon_nft_config *cfg,
		      struct cordon_error *err);

/* --- nft-set.c ------------------------------------------------------- */

/* An inclusive range of addresses of one family, as integers. */
struct nft_range {
	unsigned __int128 first, last;
};

/*
 * CIDRs of one family to sorted, merged (overlapping or adjacent ranges
 * joined) ranges; out has room for n. Returns the count.
 */
size_t nft_ranges_from_cidrs(const struct cordon_cidr *cidrs, size_t n, int family,
			     struct nft_range *out);
/* The fewest CIDRs covering [first, last] exactly; returns how many (≤ cap written). */
size_t nft_range_to_cidrs(const struct nft_range *r, int family, struct cordon_cidr *out,
			  size_t cap);

/* Append NEWSETELEM messages filling an interval set with ranges. */
void nft_build_intervals(struct cordon_nft *nft, const char *set, int family,
			 const struct nft_range *ranges, size_t n);
/* Empty set within the batch (DELSETELEM with no element list). */
void nft_build_flush(struct cordon_nft *nft, const char *set);
/* Addresses of one family into its allow set, each with its own timeout (ms, at least 1). */
void nft_build_allow_timed(struct cordon_nft *nft, int family, const struct cordon_addr *addrs,
			   const uint32_t *timeout_ms, size_t n);
/*
 * Append messages for addresses of one family to its allow set: type is
 * NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM or NFT_MSG_DESTROYSETELEM;
 * timeout_ms is used for NEWSETELEM only. Only addresses whose family
 * matches are taken; only those whose skip[i] is false (skip may be NULL).
 */
void nft_build_allow_elems(struct cordon_nft *nft, uint16_t type, int family,
			   const struct cordon_addr *addrs, size_t n, const bool *skip,
			   uint32_t timeout_ms);

/*
 * Append NEWSETELEM messages adding each address of one family to its
 * blocked set as a range of one address; none may lie in a range the set
 * holds.
 */
void nft_build_block_elems(struct cordon_nft *nft, int family, const struct cordon_addr *addrs,
			   size_t n);

/* One element as read back from the kernel. */
struct nft_elem {
	struct cordon_addr key;
	bool interval_end;
	uint64_t timeout_ms, expires_ms; /* 0 when the element has none */
	uint64_t packets, bytes;         /* its counter (dropped4, dropped6), else 0 */
};

/* Every element of a set (GETSETELEM dump); *out is malloc'd. */
int nft_read_elems(struct cordon_nft *nft, const char *set, struct nft_elem **out, size_t *n,
		   struct cordon_error *err);
/* NFTNL_SET_FLAGS of a set (NFT_SET_INTERVAL, NFT_SET_TIMEOUT, ...). */
int nft_read_set_flags(struct cordon_nft *nft, const char *set, uint32_t *flags,
		       struct cordon_error *err);
/* Whether an address is in its allow set now (one GETSETELEM, no dump). */
int nft_elem_exists(struct cordon_nft *nft, const struct cordon_addr *a, bool *exists,
		    struct cordon_error *err);
/* Pair an interval set's start and end elements into ranges (sorted). */
size_t nft_elems_to_ranges(struct nft_elem *elems, size_t n, struct nft_range *out);

/* "192.0.2.1" / "2001:db8::1" of a key of len 4 or 16 bytes. */
void nft_format_key(const void *key, size_t len, char *buf, size_t size);

/* --- cleanup of libnftnl objects -------------------------------------- */

static inline void nft_table_freep(struct nftnl_table **p)
{
	if (*p)
		nftnl_table_free(*p);
}
static inline void nft_chain_freep(struct nftnl_chain **p)
{
	if (*p)
		nftnl_chain_free(*p);
}
static inline void nft_rule_freep(struct nftnl_rule **p)
{
	if (*p)
		nftnl_rule_free(*p);
}
static inline void nft_set_freep(struct nftnl_set **p)
{
	if (*p)
		nftnl_set_free(*p);
}
static inline void nft_obj_freep(struct nftnl_obj **p)
{
	if (*p)
		nftnl_obj_free(*p);
}
#define _cleanup_nft_table_ _cleanup_(nft_table_freep)
#define _cleanup_nft_chain_ _cleanup_(nft_chain_freep)
#define _cleanup_nft_rule_ _cleanup_(nft_rule_freep)
#define _cleanup_nft_set_ _cleanup_(nft_set_freep)
#define _cleanup_nft_obj_ _cleanup_(nft_obj_freep)

#endif
