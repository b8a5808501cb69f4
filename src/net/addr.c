// SPDX-License-Identifier: Apache-2.0
/*
 * Addresses, CIDRs and the vetting table: which addresses a DNS answer may
 * put into the gateway's allow sets, and (the same table) which ranges the
 * gateway drops before any allow rule.
 *
 * The table is a list of refused ranges, each with a reason. An address
 * takes the reason of the most specific (longest-prefix) range holding it,
 * so 169.254.169.254 is METADATA although it is also link-local. IPv6 gets
 * the IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 (both
 * prefixes), 6to4 and Teredo server forms of every refused IPv4 range as
 * EMBEDDED ranges, generated from the IPv4 list so the two can never drift
 * apart; forms whose IPv4 address sits behind varying bits (local-use
 * NAT64 under any operator prefix, the Teredo client) are read out of the
 * address and vetted as IPv4.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>

#include "cordon/net.h"

/* --- parsing and formatting ------------------------------------------ */

int cordon_addr_parse(const char *s, struct cordon_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return -EINVAL;
	/*
	 * inet_pton is the strict parser we want: IPv4 only as four decimal
	 * octets without leading zeros (no "0x7f.1", "127.1" or "0177.0.0.1",
	 * which inet_aton would take), IPv6 without a zone index.
	 */
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, &out->u.v6) != 1)
			return -EINVAL;
		out->family = AF_INET6;
	} else {
		if (inet_pton(AF_INET, s, &out->u.v4) != 1)
			return -EINVAL;
		out->family = AF_INET;
	}
	return 0;
}

static unsigned addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static bool addr_bit(const struct cordon_addr *a, unsigned i)
{
	return (a->u.bytes[i / 8] >> (7 - i % 8)) & 1;
}

static void addr_flip_bit(struct cordon_addr *a, unsigned i)
{
	a->u.bytes[i / 8] ^= (uint8_t)(0x80 >> (i % 8));
}

/* Zero every bit from prefix on; returns whether any was set. */
static bool addr_mask(struct cordon_addr *a, unsigned prefix)
{
	unsigned nbytes = addr_bits(a->family) / 8;
	bool had = false;

	for (unsigned i = 0; i < nbytes; i++) {
		uint8_t keep;

		if (prefix >= 8 * (i + 1))
			continue;
		keep = prefix <= 8 * i ? 0 : (uint8_t)(0xff << (8 - (prefix - 8 * i)));
		if (a->u.bytes[i] & ~keep)
			had = true;
		a->u.bytes[i] &= keep;
	}
	return had;
}

/*
 * "ADDR/PREFIX", or a bare address as a /32 or /128. out->addr always
 * holds the network address. A CIDR with host bits set ("10.0.0.1/8") is
 * reported through *host_bits_set so that the caller can name the network
 * it probably meant; with host_bits_set NULL it is refused (-EINVAL), so a
 * caller that does not look can never widen a range by accident.
 */
int cordon_cidr_parse(const char *s, struct cordon_cidr *out, bool *host_bits_set)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash;
	unsigned prefix = 0;
	bool had;

	memset(out, 0, sizeof(*out));
	if (host_bits_set)
		*host_bits_set = false;
	if (!s)
		return -EINVAL;
	slash = strchr(s, '/');
	if (!slash) {
		if (cordon_addr_parse(s, &out->addr) < 0)
			return -EINVAL;
		out->prefix = addr_bits(out->addr.family);
		return 0;
	}
	if ((size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (cordon_addr_parse(addr, &out->addr) < 0)
		return -EINVAL;

	/* Strict decimal: 1-3 digits, no sign, no leading zero, no spaces. */
	const char *p = slash + 1;
	size_t ndigits = strspn(p, "0123456789");

	if (ndigits == 0 || ndigits > 3 || p[ndigits] != '\0' || (ndigits > 1 && p[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < ndigits; i++)
		prefix = prefix * 10 + (unsigned)(p[i] - '0');
	if (prefix > addr_bits(out->addr.family))
		return -EINVAL;
	out->prefix = prefix;

	had = addr_mask(&out->addr, prefix);
	if (had && !host_bits_set)
		return -EINVAL;
	if (host_bits_set)
		*host_bits_set = had;
	return 0;
}

bool cordon_cidr_contains(const struct cordon_cidr *c, const struct cordon_addr *a)
{
	unsigned full, rest;

	if (c->addr.family != a->family || (a->family != AF_INET && a->family != AF_INET6))
		return false;
	if (c->prefix > addr_bits(a->family))
		return false;
	full = c->prefix / 8;
	rest = c->prefix % 8;
	if (memcmp(c->addr.u.bytes, a->u.bytes, full) != 0)
		return false;
	if (rest) {
		uint8_t m = (uint8_t)(0xff << (8 - rest));

		if ((c->addr.u.bytes[full] & m) != (a->u.bytes[full] & m))
			return false;
	}
	return true;
}

void cordon_addr_format(const struct cordon_addr *a, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	if (len == 0)
		return;
	if ((a->family != AF_INET && a->family != AF_INET6) ||
	    !inet_ntop(a->family, a->u.bytes, tmp, sizeof(tmp)))
		snprintf(tmp, sizeof(tmp), "invalid");
	snprintf(buf, len, "%s", tmp);
}

void cordon_cidr_format(const struct cordon_cidr *c, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	cordon_addr_format(&c->addr, tmp, sizeof(tmp));
	snprintf(buf, len, "%s/%u", tmp, c->prefix);
}

/* --- the vetting table ------------------------------------------------- */

static const char *const vet_names[CORDON_VET_COUNT] = {
	[CORDON_VET_OK] = "ok",
	[CORDON_VET_UNSPECIFIED] = "unspecified",
	[CORDON_VET_LOOPBACK] = "loopback",
	[CORDON_VET_LINK_LOCAL] = "link-local",
	[CORDON_VET_METADATA] = "metadata",
	[CORDON_VET_PRIVATE] = "private",
	[CORDON_VET_CGNAT] = "cgnat",
	[CORDON_VET_MULTICAST] = "multicast",
	[CORDON_VET_BROADCAST] = "broadcast",
	[CORDON_VET_THIS_NETWORK] = "this-network",
	[CORDON_VET_RESERVED] = "reserved",
	[CORDON_VET_BENCHMARK] = "benchmark",
	[CORDON_VET_DOCUMENTATION] = "documentation",
	[CORDON_VET_EMBEDDED] = "embedded",
	[CORDON_VET_BLOCKED] = "blocked",
	[CORDON_VET_NAME] = "name-not-allowed",
};

const char *cordon_vet_name(enum cordon_vet v)
{
	if ((unsigned)v >= CORDON_VET_COUNT || !vet_names[v])
		return "unknown";
	return vet_names[v];
}

struct vet_range {
	const char *text;
	enum cordon_vet why;
};

static const struct vet_range base4[] = {
	{ "0.0.0.0/8", CORDON_VET_THIS_NETWORK },
	{ "0.0.0.0/32", CORDON_VET_UNSPECIFIED },
	{ "10.0.0.0/8", CORDON_VET_PRIVATE },
	{ "100.64.0.0/10", CORDON_VET_CGNAT },
	{ "100.100.100.200/32", CORDON_VET_METADATA }, /* Alibaba Cloud */
	{ "127.0.0.0/8", CORDON_VET_LOOPBACK },
	{ "168.63.129.16/32", CORDON_VET_METADATA }, /* Azure wire server (a public address) */
	{ "169.254.0.0/16", CORDON_VET_LINK_LOCAL },
	{ "169.254.169.253/32", CORDON_VET_METADATA }, /* AWS VPC resolver */
	{ "169.254.169.254/32", CORDON_VET_METADATA }, /* AWS, GCP, Azure, OpenStack, ... */
	{ "169.254.170.2/32", CORDON_VET_METADATA },   /* AWS ECS task credentials */
	{ "172.16.0.0/12", CORDON_VET_PRIVATE },
	/* IETF protocol assignments (RFC 6890): no reason of its own, so RESERVED. */
	{ "192.0.0.0/24", CORDON_VET_RESERVED },
	{ "192.0.0.192/32", CORDON_VET_METADATA }, /* Oracle Cloud */
	{ "192.0.2.0/24", CORDON_VET_DOCUMENTATION },
	{ "192.168.0.0/16", CORDON_VET_PRIVATE },
	{ "198.18.0.0/15", CORDON_VET_BENCHMARK },
	{ "198.51.100.0/24", CORDON_VET_DOCUMENTATION },
	{ "203.0.113.0/24", CORDON_VET_DOCUMENTATION },
	{ "224.0.0.0/4", CORDON_VET_MULTICAST },
	{ "240.0.0.0/4", CORDON_VET_RESERVED },
	{ "255.255.255.255/32", CORDON_VET_BROADCAST },
};

static const struct vet_range base6[] = {
	{ "::/128", CORDON_VET_UNSPECIFIED },
	{ "::1/128", CORDON_VET_LOOPBACK },
	/*
	 * Local-use IPv4/IPv6 translation (RFC 8215), not globally reachable:
	 * where an IPv4 address sits in it depends on the prefix length its
	 * operator chose (RFC 6052: /48, /56, /64 or /96), which the address
	 * does not tell. Refused whole; under a prefix listed explicitly the
	 * /96 position is still checked (see decodings).
	 */
	{ "64:ff9b:1::/48", CORDON_VET_PRIVATE },
	{ "2001:db8::/32", CORDON_VET_DOCUMENTATION }, /* RFC 3849 */
	{ "fc00::/7", CORDON_VET_PRIVATE },	       /* unique local (RFC 4193) */
	{ "fd00:ec2::254/128", CORDON_VET_METADATA },  /* AWS IMDS over IPv6 */
	{ "fe80::/10", CORDON_VET_LINK_LOCAL },
	{ "fec0::/10", CORDON_VET_PRIVATE }, /* site-local (deprecated, RFC 3879) */
	{ "ff00::/8", CORDON_VET_MULTICAST },
};

/*
 * Where IPv6 carries an IPv4 address at a fixed place: the IPv4 bits
 * start at bit `shift` of the IPv6 address, right below the prefix given
 * here. These become ranges of the table (each refused IPv4 range in each
 * form).
 */
static const struct {
	const char *prefix;
	unsigned shift;
} embeddings[] = {
	{ "::ffff:0:0/96", 96 },   /* IPv4-mapped */
	{ "::/96", 96 },	   /* IPv4-compatible (deprecated, still parsed by stacks) */
	{ "::ffff:0:0:0/96", 96 }, /* IPv4-translated (SIIT, RFC 2765) */
	{ "64:ff9b::/96", 96 },	   /* NAT64 well-known prefix (RFC 6052) */
	{ "64:ff9b:1::/96", 96 },  /* local-use NAT64 (RFC 8215), its first /96 */
	{ "2002::/16", 16 },	   /* 6to4: the IPv4 address in bits 16-47 */
	{ "2001::/32", 32 },	   /* Teredo (RFC 4380): the server, bits 32-63 */
};

/*
 * Where IPv6 carries an IPv4 address behind bits that vary, so that no
 * fixed range holds its forms: the IPv4 address is read out of the
 * address itself (the last 32 bits, inverted when `inverted`) and vetted.
 * The gateway's forward chain checks the same places against blocked4
 * (nft-rules.c).
 */
static const struct {
	const char *prefix;
	bool inverted;
} decodings[] = {
	/* Local-use NAT64: a /96 of its operator's choosing (bits 48-95). */
	{ "64:ff9b:1::/48", false },
	/* Teredo: the client's address, inverted, behind flags and port (bits 64-95). */
	{ "2001::/32", true },
};

struct vet_entry {
	struct cordon_cidr cidr;
	enum cordon_vet why;
};

struct vet_list {
	struct vet_entry *v;
	size_t n, cap;
};

static struct vet_list vet_full[2];	/* with reasons, nested ranges kept */
static struct cordon_cidr vet_meta[16]; /* the METADATA entries of both families */
static size_t vet_n_meta;
static struct cordon_cidr *vet_blocked[2]; /* disjoint and sorted */
static size_t vet_n_blocked[2];
static struct cordon_cidr *vet_native[2]; /* the same without the embedded forms, for nft */
static size_t vet_n_native[2];
static pthread_once_t vet_once = PTHREAD_ONCE_INIT;

static int family_index(int family)
{
	return family == AF_INET ? 0 : 1;
}

static void vet_list_push(struct vet_list *l, const struct cordon_cidr *c, enum cordon_vet why)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = cordon_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].cidr = *c;
	l->v[l->n].why = why;
	l->n++;
}

static void vet_list_push_text(struct vet_list *l, const char *text, enum cordon_vet why)
{
	struct cordon_cidr c;

	/* The table is a constant of this file; a typo in it is a bug. */
	if (cordon_cidr_parse(text, &c, NULL) < 0)
		abort();
	vet_list_push(l, &c, why);
}

bool cordon_cidr_within(const struct cordon_cidr *inner, const struct cordon_cidr *outer)
{
	return inner->addr.family == outer->addr.family && inner->prefix >= outer->prefix &&
	       cordon_cidr_contains(outer, &inner->addr);
}

size_t cordon_cidr_split_around(const struct cordon_cidr *r, const struct cordon_cidr *hole,
				struct cordon_cidr out[128])
{
	size_t n = 0;

	/* The sibling of hole's ancestor at each prefix length below r's. */
	for (unsigned p = r->prefix; p < hole->prefix; p++) {
		struct cordon_cidr piece = { .addr = hole->addr, .prefix = p + 1 };

		addr_flip_bit(&piece.addr, p);
		addr_mask(&piece.addr, p + 1);
		out[n++] = piece;
	}
	return n;
}

static void vet_add_embedded(struct vet_list *v6, const struct vet_list *v4)
{
	for (size_t k = 0; k < ARRAY_SIZE(embeddings); k++) {
		struct cordon_cidr base;

		if (cordon_cidr_parse(embeddings[k].prefix, &base, NULL) < 0)
			abort();
		for (size_t i = 0; i < v4->n; i++) {
			struct cordon_cidr c = base;
			unsigned shift = embeddings[k].shift;

			for (unsigned b = 0; b < v4->v[i].cidr.prefix; b++)
				if (addr_bit(&v4->v[i].cidr.addr, b))
					addr_flip_bit(&c.addr, shift + b);
			c.prefix = shift + v4->v[i].cidr.prefix;
			vet_list_push(v6, &c, CORDON_VET_EMBEDDED);
		}
	}
}

static int cidr_order(const void *pa, const void *pb)
{
	const struct cordon_cidr *a = pa, *b = pb;
	int r = memcmp(a->addr.u.bytes, b->addr.u.bytes, addr_bits(a->addr.family) / 8);

	if (r)
		return r;
	return (a->prefix > b->prefix) - (a->prefix < b->prefix);
}

/*
 * Sorted, and every range inside another one dropped: what an nft interval
 * set accepts. With embedded false, the embedded IPv4 forms are left out.
 */
static size_t vet_build_blocked(int idx, bool embedded, struct cordon_cidr **out)
{
	const struct vet_list *l = &vet_full[idx];
	struct cordon_cidr *all = cordon_xcalloc(l->n ? l->n : 1, sizeof(*all));
	size_t n = 0, k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (embedded || l->v[i].why != CORDON_VET_EMBEDDED)
			all[k++] = l->v[i].cidr;
	qsort(all, k, sizeof(*all), cidr_order);
	for (size_t i = 0; i < k; i++) {
		if (n > 0 && cordon_cidr_within(&all[i], &all[n - 1]))
			continue;
		all[n++] = all[i];
	}
	*out = all;
	return n;
}

#ifdef CORDON_TEST_LAB
/*
 * Test-only override, compiled in only with -DCORDON_TEST_LAB (never in a
 * release build): the private network lab (tests/lab/) gives its fake
 * "internet" addresses from a refused range such as 198.18.0.0/15, and
 * CORDON_LAB_PUBLIC_CIDR names that one range. It is cut out of the table
 * before anything else uses it, so cordon_addr_vet treats it as public and
 * cordon_vet_table leaves it out, IPv4 embedded forms included. Read once
 * per process. Without the define the variable is ignored.
 */
static bool lab_public_cidr(struct cordon_cidr *out)
{
	const char *s = getenv("CORDON_LAB_PUBLIC_CIDR");
	bool host_bits;

	if (!s || !*s)
		return false;
	if (cordon_cidr_parse(s, out, &host_bits) < 0 || host_bits) {
		cordon_warn("CORDON_LAB_PUBLIC_CIDR '%s' is not a network CIDR; ignored", s);
		return false;
	}
	return true;
}

/*
 * Remove the range `hole` from every entry of l: an entry inside the hole
 * goes, an entry holding the hole is replaced by the (prefix difference)
 * CIDRs that cover the rest of it, keeping its reason.
 */
static void vet_list_subtract(struct vet_list *l, const struct cordon_cidr *hole)
{
	struct vet_list out = { 0 };

	for (size_t i = 0; i < l->n; i++) {
		const struct vet_entry *e = &l->v[i];

		struct cordon_cidr pieces[128];
		size_t n;

		if (cordon_cidr_within(&e->cidr, hole))
			continue;
		if (!cordon_cidr_within(hole, &e->cidr)) {
			vet_list_push(&out, &e->cidr, e->why);
			continue;
		}
		n = cordon_cidr_split_around(&e->cidr, hole, pieces);
		for (size_t k = 0; k < n; k++)
			vet_list_push(&out, &pieces[k], e->why);
	}
	free(l->v);
	*l = out;
}
#endif

static void vet_init(void)
{
	struct vet_list *v4 = &vet_full[0], *v6 = &vet_full[1];

	for (size_t i = 0; i < ARRAY_SIZE(base4); i++)
		vet_list_push_text(v4, base4[i].text, base4[i].why);
	for (size_t i = 0; i < ARRAY_SIZE(base6); i++)
		vet_list_push_text(v6, base6[i].text, base6[i].why);
#ifdef CORDON_TEST_LAB
	struct cordon_cidr lab;
	bool lab_set = lab_public_cidr(&lab);

	/* An IPv4 hole is cut before the embedded forms are derived, so they lose it too. */
	if (lab_set && lab.addr.family == AF_INET)
		vet_list_subtract(v4, &lab);
	vet_add_embedded(v6, v4);
	if (lab_set && lab.addr.family == AF_INET6)
		vet_list_subtract(v6, &lab);
#else
	vet_add_embedded(v6, v4);
#endif
	for (int f = 0; f < 2; f++) {
		vet_n_blocked[f] = vet_build_blocked(f, true, &vet_blocked[f]);
		vet_n_native[f] = vet_build_blocked(f, false, &vet_native[f]);
	}
	for (int f = 0; f < 2; f++)
		for (size_t i = 0; i < vet_full[f].n; i++)
			if (vet_full[f].v[i].why == CORDON_VET_METADATA &&
			    vet_n_meta < ARRAY_SIZE(vet_meta))
				vet_meta[vet_n_meta++] = vet_full[f].v[i].cidr;
}

size_t cordon_vet_metadata(const struct cordon_cidr **out)
{
	pthread_once(&vet_once, vet_init);
	*out = vet_meta;
	return vet_n_meta;
}

/* The most specific entry of l holding a, or NULL. */
static const struct vet_entry *vet_lookup(const struct vet_list *l, const struct cordon_addr *a)
{
	const struct vet_entry *best = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (cordon_cidr_contains(&l->v[i].cidr, a) &&
		    (!best || l->v[i].cidr.prefix > best->cidr.prefix))
			best = &l->v[i];
	return best;
}

/*
 * The forms of decodings[] that a holds: if the IPv4 address read out of
 * it is refused, a refused range of prefix 96 + that IPv4 range's (the
 * bits of a up to the last one the IPv4 range fixes), when it is more
 * specific than *best_prefix.
 */
static void vet_decoded(const struct cordon_addr *a, unsigned *best_prefix,
			enum cordon_vet *best_why)
{
	for (size_t k = 0; k < ARRAY_SIZE(decodings); k++) {
		struct cordon_cidr form;
		struct cordon_addr v4 = { .family = AF_INET };
		const struct vet_entry *e;

		if (cordon_cidr_parse(decodings[k].prefix, &form, NULL) < 0)
			abort();
		if (!cordon_cidr_contains(&form, a))
			continue;
		memcpy(v4.u.bytes, a->u.bytes + 12, 4);
		if (decodings[k].inverted)
			for (int i = 0; i < 4; i++)
				v4.u.bytes[i] ^= 0xff;
		e = vet_lookup(&vet_full[0], &v4);
		if (e && 96 + e->cidr.prefix > *best_prefix) {
			*best_prefix = 96 + e->cidr.prefix;
			*best_why = CORDON_VET_EMBEDDED;
		}
	}
}

size_t cordon_addr_embedded4(const struct cordon_addr *a, struct cordon_addr out[8])
{
	size_t n = 0;

	if (a->family != AF_INET6)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(embeddings); k++) {
		struct cordon_cidr form;

		if (cordon_cidr_parse(embeddings[k].prefix, &form, NULL) < 0)
			abort();
		if (!cordon_cidr_contains(&form, a))
			continue;
		out[n] = (struct cordon_addr){ .family = AF_INET };
		memcpy(out[n++].u.bytes, a->u.bytes + embeddings[k].shift / 8, 4);
	}
	for (size_t k = 0; k < ARRAY_SIZE(decodings); k++) {
		struct cordon_cidr form;

		if (cordon_cidr_parse(decodings[k].prefix, &form, NULL) < 0)
			abort();
		if (!cordon_cidr_contains(&form, a))
			continue;
		out[n] = (struct cordon_addr){ .family = AF_INET };
		memcpy(out[n].u.bytes, a->u.bytes + 12, 4);
		if (decodings[k].inverted)
			for (int i = 0; i < 4; i++)
				out[n].u.bytes[i] ^= 0xff;
		n++;
	}
	return n;
}

enum cordon_vet cordon_addr_vet(const struct cordon_addr *a, const struct cordon_cidr *allowed,
				size_t n_allowed)
{
	const struct vet_entry *best;
	unsigned best_prefix = 0;
	enum cordon_vet why = CORDON_VET_OK;

	/* Fail closed on something that is not an address at all. */
	if (a->family != AF_INET && a->family != AF_INET6)
		return CORDON_VET_UNSPECIFIED;
	pthread_once(&vet_once, vet_init);
	best = vet_lookup(&vet_full[family_index(a->family)], a);
	if (best) {
		best_prefix = best->cidr.prefix;
		why = best->why;
	}
	if (a->family == AF_INET6)
		vet_decoded(a, &best_prefix, &why);
	if (why == CORDON_VET_OK)
		return CORDON_VET_OK;

	/*
	 * An explicit cover is an allowlisted CIDR that holds the address and
	 * lies inside the refused range the address fell in: listing
	 * 10.0.0.0/8 or 10.1.0.0/16 opens 10.1.2.3; 0.0.0.0/0
	 * (--net-allow-any) opens nothing the table refuses, and 169.254/16
	 * opens link-local but not 169.254.169.254, which must be listed
	 * itself.
	 */
	for (size_t i = 0; allowed && i < n_allowed; i++)
		if (allowed[i].prefix >= best_prefix && cordon_cidr_contains(&allowed[i], a))
			return CORDON_VET_OK;
	return why;
}

/* Sorted and disjoint: ranges nested in a wider refused range are left out. */
size_t cordon_vet_table(int family, const struct cordon_cidr **ranges)
{
	int idx;

	if (family != AF_INET && family != AF_INET6) {
		*ranges = NULL;
		return 0;
	}
	pthread_once(&vet_once, vet_init);
	idx = family_index(family);
	*ranges = vet_blocked[idx];
	return vet_n_blocked[idx];
}

size_t cordon_vet_table_native(int family, const struct cordon_cidr **ranges)
{
	int idx;

	if (family != AF_INET && family != AF_INET6) {
		*ranges = NULL;
		return 0;
	}
	pthread_once(&vet_once, vet_init);
	idx = family_index(family);
	*ranges = vet_native[idx];
	return vet_n_native[idx];
}
