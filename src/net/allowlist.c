// SPDX-License-Identifier: Apache-2.0
/*
 * The allowlist: --net-allow values and allowlist files become validated,
 * normalised entries, and hostnames go into a trie on reversed labels
 * ("registry.npmjs.org" is the path org -> npmjs -> registry), so a match
 * costs one lookup per label of the queried name, whatever the list size.
 *
 * Grammar (docs/network.md): an IPv4 or IPv6 address, a CIDR, an exact
 * hostname, or "*.example.org" for exactly one label below example.org.
 * Choices worth knowing:
 *   - A CIDR with host bits set ("10.0.0.1/8") is refused, naming the
 *     network it probably means: silently widening it would allow more
 *     than the user read on the command line.
 *   - "10.0.0.1/32" is the address 10.0.0.1 (kind ADDR), so it merges with
 *     a literal "10.0.0.1".
 *   - A wildcard whose base is a single label ("*.com") is refused: it
 *     would open a whole top-level domain.
 *   - A name whose last label is all digits is not a hostname (RFC 1123
 *     2.1): "1.2.3.4" is an address entry, "1.2.3" is refused.
 *   - Each call (one value, one file) is all or nothing: if any entry is
 *     bad, nothing of that call is added.
 */
#include <fcntl.h>
#include <string.h>

#include "cordon/net.h"

#define NAME_MAX_LEN 253
#define LABEL_MAX_LEN 63
/* Longest raw entry looked at; anything longer is refused as too long. */
#define ENTRY_MAX_LEN 1024

enum {
	NODE_EXACT = 1 << 0,	/* the path from the root is a listed name */
	NODE_WILDCARD = 1 << 1, /* "*." followed by this name is listed */
};

/*
 * The trie. A node is a record in one byte pool, [flags][length][label],
 * and its offset in the pool is its id; the root is the empty record at 0.
 * Children are found through one open-addressing table keyed by (parent,
 * label): a slot carries the key's hash and the parent, so a probe that
 * misses never leaves the table, and a hit touches one pool record to
 * compare the label itself (a hash match alone is never trusted).
 */
struct trie_slot {
	uint32_t hash;
	uint32_t parent;
	uint32_t node; /* 0 = empty: the root is nobody's child */
};

struct cordon_allowlist {
	struct cordon_allow_entry *entries;
	size_t n_entries, cap_entries;
	struct cordon_cidr *cidrs; /* ADDR and CIDR entries, in entry order */
	size_t n_cidrs, cap_cidrs;

	uint8_t *pool;
	size_t pool_len, pool_cap;
	struct trie_slot *slots;
	size_t n_slots; /* a power of two, at most half full */
	size_t n_nodes; /* not counting the root */

	/* Entry texts for merging duplicates: entry index + 1, 0 = empty. */
	uint32_t *text_slots;
	size_t n_text_slots;
};

#define NODE_FLAGS(al, id) ((al)->pool[(id)])
#define NODE_LEN(al, id) ((al)->pool[(id) + 1])
#define NODE_LABEL(al, id) ((const char *)(al)->pool + (id) + 2)

/* --- hashing ------------------------------------------------------------- */

static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The first byte in memory as the lowest byte, whatever the machine. */
static inline uint64_t load64le(const char *p)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(load64(p));
#else
	return load64(p);
#endif
}

/*
 * A label's hash, eight bytes at a time. It does not depend on the parent,
 * so the hashes of a name's labels are independent of one another and of
 * the lookups (the CPU overlaps them); slot_hash folds the parent in.
 * s must stay readable up to the next multiple of 8 bytes past len: both
 * callers hash inside a zero-padded copy of the name.
 */
static inline uint64_t label_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		h = (h ^ load64le(s + i)) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	if (i < len)
		h ^= load64le(s + i) & ((1ULL << (8 * (len - i))) - 1);
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 32;
	return h;
}

static inline uint32_t slot_hash(uint64_t lh, uint32_t parent)
{
	uint64_t x = (lh ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL)) * 0xd6e8feb86659fd93ULL;

	return (uint32_t)(x >> 32);
}

/* Only to merge duplicate entry texts: not on any hot path. */
static uint32_t text_hash(const char *s)
{
	uint32_t h = 2166136261U;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619U;
	}
	return h ^ (h >> 15);
}

static inline bool label_eq(const char *a, const char *b, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8)
		if (load64(a + i) != load64(b + i))
			return false;
	for (; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* --- the trie ------------------------------------------------------------ */

static inline uint32_t trie_find(const struct cordon_allowlist *al, uint32_t parent,
				 const char *label, size_t len, uint64_t lh)
{
	uint32_t h = slot_hash(lh, parent);
	size_t mask = al->n_slots - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const struct trie_slot *slot = &al->slots[i];

		if (slot->node == 0)
			return 0;
		if (slot->hash == h && slot->parent == parent && NODE_LEN(al, slot->node) == len &&
		    label_eq(NODE_LABEL(al, slot->node), label, len))
			return slot->node;
	}
}

static void trie_slot_put(struct trie_slot *slots, size_t n_slots, const struct trie_slot *s)
{
	size_t mask = n_slots - 1;
	size_t i = s->hash & mask;

	while (slots[i].node != 0)
		i = (i + 1) & mask;
	slots[i] = *s;
}

static void trie_grow(struct cordon_allowlist *al)
{
	size_t n = al->n_slots * 2;
	struct trie_slot *slots = cordon_xcalloc(n, sizeof(*slots));

	for (size_t i = 0; i < al->n_slots; i++)
		if (al->slots[i].node)
			trie_slot_put(slots, n, &al->slots[i]);
	free(al->slots);
	al->slots = slots;
	al->n_slots = n;
}

static uint32_t trie_add_child(struct cordon_allowlist *al, uint32_t parent, const char *label,
			       size_t len, uint64_t lh)
{
	struct trie_slot slot = { .hash = slot_hash(lh, parent), .parent = parent };

	/* Offsets are 32-bit: four gigabytes of labels is not a list a human wrote. */
	if (al->pool_len + 2 + len > UINT32_MAX)
		abort();
	if (2 * (al->n_nodes + 1) > al->n_slots)
		trie_grow(al);
	while (al->pool_len + 2 + len > al->pool_cap) {
		al->pool_cap *= 2;
		al->pool = cordon_xrealloc(al->pool, al->pool_cap);
	}
	slot.node = (uint32_t)al->pool_len;
	al->pool[al->pool_len] = 0;
	al->pool[al->pool_len + 1] = (uint8_t)len;
	memcpy(al->pool + al->pool_len + 2, label, len);
	al->pool_len += 2 + len;
	al->n_nodes++;
	trie_slot_put(al->slots, al->n_slots, &slot);
	return slot.node;
}

/* Insert a validated, lower-case name (labels of 1-63 bytes) and mark its node. */
static void trie_insert(struct cordon_allowlist *al, const char *text, uint8_t flag)
{
	char name[NAME_MAX_LEN + 9] = { 0 }; /* zero-padded for label_hash */
	size_t end = strlen(text);
	uint32_t node = 0;

	if (end > NAME_MAX_LEN)
		abort(); /* validated before: a bug */
	memcpy(name, text, end);
	while (end > 0) {
		size_t start = end;
		uint64_t lh;
		uint32_t child;

		while (start > 0 && name[start - 1] != '.')
			start--;
		lh = label_hash(name + start, end - start);
		child = trie_find(al, node, name + start, end - start, lh);
		if (!child)
			child = trie_add_child(al, node, name + start, end - start, lh);
		node = child;
		end = start > 0 ? start - 1 : 0;
	}
	NODE_FLAGS(al, node) |= flag;
}

/* What a wildcard stands for: one label of letters, digits, '-' or '_' (SRV-style). */
static bool wildcard_label_ok(const char *s, size_t len)
{
	if (len == 0 || len > LABEL_MAX_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/*
 * Eight bytes at a time (SWAR): ASCII upper case to lower case, leaving
 * every other byte alone, and a mask with 0x80 in each byte that is a dot.
 * Both are exact: no byte's arithmetic carries into its neighbour.
 */
static inline uint64_t swar_lower(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t low7 = w & ~high;
	uint64_t ge_a = low7 + (0x80 - 'A') * ones; /* bit 7 set where the byte >= 'A' */
	uint64_t gt_z = low7 + (0x80 - 'Z' - 1) * ones;
	uint64_t upper = ge_a & ~gt_z & ~w & high;

	return w | (upper >> 2); /* 0x80 >> 2 is the case bit 0x20 */
}

static inline uint64_t swar_dots(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t x = w ^ ('.' * ones);

	return ~(((x & ~high) + ~high) | x) & high;
}

bool cordon_allowlist_match_name(const struct cordon_allowlist *al, const char *name)
{
	/* Room for 253 bytes rounded up to whole words. */
	char buf[NAME_MAX_LEN + 11] __attribute__((aligned(8)));
	uint8_t starts[NAME_MAX_LEN / 2 + 2];
	size_t len, n_labels = 0, label_start = 0;
	uint32_t node = 0;

	if (!al || !name)
		return false;
	len = strnlen(name, NAME_MAX_LEN + 2);
	if (len > 0 && name[len - 1] == '.')
		len--; /* one trailing dot; "pypi.org.." keeps an empty label and fails */
	if (len == 0 || len > NAME_MAX_LEN)
		return false;
	memcpy(buf, name, len);
	memset(buf + len, 0, 8);

	/* A lower-case copy, and where each label starts; empty or over-long labels never match. */
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = swar_lower(load64(buf + i));
		uint64_t dots = swar_dots(w);

		memcpy(buf + i, &w, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		dots = __builtin_bswap64(dots);
#endif
		while (dots) {
			size_t pos = i + (size_t)__builtin_ctzll(dots) / 8;

			if (pos == label_start || pos - label_start > LABEL_MAX_LEN)
				return false;
			starts[n_labels++] = (uint8_t)label_start;
			label_start = pos + 1;
			dots &= dots - 1;
		}
	}
	if (len == label_start || len - label_start > LABEL_MAX_LEN)
		return false;
	starts[n_labels++] = (uint8_t)label_start;

	/* From the rightmost label: org, npmjs, registry. */
	for (size_t k = n_labels; k-- > 0;) {
		const char *label = buf + starts[k];
		size_t label_len = (k + 1 < n_labels ? (size_t)starts[k + 1] - 1 : len) - starts[k];
		uint32_t child;

		if (k == 0 && (NODE_FLAGS(al, node) & NODE_WILDCARD) &&
		    wildcard_label_ok(label, label_len))
			return true;
		child = trie_find(al, node, label, label_len, label_hash(label, label_len));
		if (!child)
			return false;
		node = child;
	}
	return (NODE_FLAGS(al, node) & NODE_EXACT) != 0;
}

/* --- entries ------------------------------------------------------------- */

struct cordon_allowlist *cordon_allowlist_new(void)
{
	struct cordon_allowlist *al = cordon_xcalloc(1, sizeof(*al));

	al->pool_cap = 1024;
	al->pool = cordon_xcalloc(1, al->pool_cap);
	al->pool_len = 2; /* the root: no flags, empty label */
	al->n_slots = 128;
	al->slots = cordon_xcalloc(al->n_slots, sizeof(*al->slots));
	al->n_text_slots = 64;
	al->text_slots = cordon_xcalloc(al->n_text_slots, sizeof(*al->text_slots));
	return al;
}

void cordon_allowlist_free(struct cordon_allowlist *al)
{
	if (!al)
		return;
	for (size_t i = 0; i < al->n_entries; i++)
		free(al->entries[i].text);
	free(al->entries);
	free(al->cidrs);
	free(al->pool);
	free(al->slots);
	free(al->text_slots);
	free(al);
}

static bool text_known(const struct cordon_allowlist *al, const char *text)
{
	size_t mask = al->n_text_slots - 1;

	for (size_t i = text_hash(text) & mask; al->text_slots[i]; i = (i + 1) & mask)
		if (strcmp(al->entries[al->text_slots[i] - 1].text, text) == 0)
			return true;
	return false;
}

static void text_slot_put(uint32_t *slots, size_t n_slots, const char *text, uint32_t value)
{
	size_t mask = n_slots - 1;
	size_t i = text_hash(text) & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = value;
}

/* Take ownership of e->text; merges a duplicate. Never fails. */
static void allowlist_commit(struct cordon_allowlist *al, struct cordon_allow_entry *e)
{
	if (text_known(al, e->text)) {
		free(e->text);
		e->text = NULL;
		return;
	}
	if (2 * (al->n_entries + 1) > al->n_text_slots) {
		size_t n = al->n_text_slots * 2;
		uint32_t *slots = cordon_xcalloc(n, sizeof(*slots));

		for (size_t i = 0; i < al->n_entries; i++)
			text_slot_put(slots, n, al->entries[i].text, (uint32_t)(i + 1));
		free(al->text_slots);
		al->text_slots = slots;
		al->n_text_slots = n;
	}
	if (al->n_entries == al->cap_entries) {
		al->cap_entries = al->cap_entries ? 2 * al->cap_entries : 16;
		al->entries = cordon_xrealloc(al->entries, al->cap_entries * sizeof(*al->entries));
	}
	switch (e->kind) {
	case CORDON_ALLOW_ADDR:
	case CORDON_ALLOW_CIDR:
		if (al->n_cidrs == al->cap_cidrs) {
			al->cap_cidrs = al->cap_cidrs ? 2 * al->cap_cidrs : 16;
			al->cidrs = cordon_xrealloc(al->cidrs, al->cap_cidrs * sizeof(*al->cidrs));
		}
		al->cidrs[al->n_cidrs++] = e->cidr;
		break;
	case CORDON_ALLOW_HOST:
		trie_insert(al, e->text, NODE_EXACT);
		break;
	case CORDON_ALLOW_WILDCARD:
		trie_insert(al, e->text + 2, NODE_WILDCARD);
		break;
	}
	al->entries[al->n_entries] = *e;
	text_slot_put(al->text_slots, al->n_text_slots, e->text, (uint32_t)(al->n_entries + 1));
	al->n_entries++;
	e->text = NULL;
}

/* Entries parsed and validated but not yet in the list: one call's worth. */
struct pending {
	struct cordon_allow_entry *v;
	size_t n, cap;
};

static void pending_clear(struct pending *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].text);
	free(p->v);
	*p = (struct pending){ 0 };
}

static void pending_push(struct pending *p, const struct cordon_allow_entry *e)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 8;
		p->v = cordon_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = *e;
}

static void pending_commit(struct cordon_allowlist *al, struct pending *p)
{
	for (size_t i = 0; i < p->n; i++)
		allowlist_commit(al, &p->v[i]);
	p->n = 0;
	pending_clear(p);
}

/* --- validation ---------------------------------------------------------- */

static int entry_error(struct cordon_error *err, const char *raw, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int entry_error(struct cordon_error *err, const char *raw, size_t len, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* Name the entry as the user wrote it, cut short if it is very long. */
	return cordon_error_set(err, CORDON_E_NET_POLICY, 0, "allowlist entry '%.*s%s': %s",
				(int)(len > 200 ? 200 : len), raw, len > 200 ? "..." : "", why);
}

static int parse_address(const char *raw, size_t raw_len, const char *s, bool allow_any,
			 struct cordon_allow_entry *out, struct cordon_error *err)
{
	char text[INET6_ADDRSTRLEN + 8];
	bool host_bits;
	unsigned full;

	if (cordon_cidr_parse(s, &out->cidr, &host_bits) < 0) {
		const char *colon = strchr(s, ':');

		if (strstr(s, "://"))
			return entry_error(err, raw, raw_len, "a URL; list the hostname alone");
		/* IPv6 has at least two colons; one colon is "host:port". */
		if (colon && !strchr(colon + 1, ':'))
			return entry_error(err, raw, raw_len,
					   "a port is not part of an entry; list the host alone");
		return entry_error(err, raw, raw_len, "not a valid %s",
				   strchr(s, '/') ? "CIDR" : "IP address");
	}
	if (host_bits) {
		cordon_cidr_format(&out->cidr, text, sizeof(text));
		return entry_error(err, raw, raw_len, "host bits set; the network is %s", text);
	}
	if (out->cidr.prefix == 0 && !allow_any)
		return entry_error(err, raw, raw_len,
				   "allows every address; --net-allow-any is required for that");
	full = out->cidr.addr.family == AF_INET ? 32 : 128;
	if (out->cidr.prefix == full) {
		out->kind = CORDON_ALLOW_ADDR;
		cordon_addr_format(&out->cidr.addr, text, sizeof(text));
	} else {
		out->kind = CORDON_ALLOW_CIDR;
		cordon_cidr_format(&out->cidr, text, sizeof(text));
	}
	out->text = cordon_xstrdup(text);
	return 0;
}

/* RFC 1123 labels of a lower-case name without a wildcard: 0 or an error. */
static int check_labels(const char *raw, size_t raw_len, const char *name, size_t *n_labels,
			struct cordon_error *err)
{
	const char *p = name;

	*n_labels = 0;
	for (;;) {
		size_t len = strcspn(p, ".");
		bool all_digits = len > 0;

		if (len == 0)
			return entry_error(err, raw, raw_len, "empty label");
		if (len > LABEL_MAX_LEN)
			return entry_error(err, raw, raw_len, "label '%.*s' longer than %d bytes",
					   (int)len, p, LABEL_MAX_LEN);
		for (size_t i = 0; i < len; i++) {
			char c = p[i];

			if (c >= '0' && c <= '9')
				continue;
			all_digits = false;
			if ((c >= 'a' && c <= 'z') || c == '-')
				continue;
			if (c == '_')
				return entry_error(
					err, raw, raw_len,
					"underscore in a hostname (letters, digits and '-' only)");
			if (c == '*')
				return entry_error(
					err, raw, raw_len,
					"'*' may only be the whole leftmost label, once ('*.example.org')");
			if (c >= 0x20 && c < 0x7f)
				return entry_error(err, raw, raw_len, "invalid character '%c'", c);
			return entry_error(err, raw, raw_len, "invalid character 0x%02x",
					   (unsigned char)c);
		}
		if (p[0] == '-' || p[len - 1] == '-')
			return entry_error(err, raw, raw_len,
					   "label '%.*s' starts or ends with '-'", (int)len, p);
		(*n_labels)++;
		if (p[len] == '\0') {
			if (all_digits)
				return entry_error(
					err, raw, raw_len,
					"the last label is all digits: neither a hostname nor an IPv4 address");
			return 0;
		}
		p += len + 1;
	}
}

/* One entry, already trimmed: validated and normalised into *out. */
static int parse_entry(const char *raw, size_t raw_len, bool allow_any,
		       struct cordon_allow_entry *out, struct cordon_error *err)
{
	char buf[ENTRY_MAX_LEN + 1];
	size_t len = raw_len, n_labels;
	bool wildcard;
	const char *base;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < raw_len; i++)
		if ((unsigned char)raw[i] >= 0x80)
			return entry_error(
				err, raw, raw_len,
				"not ASCII; write an internationalised name in its xn-- (punycode) form");
	if (len > ENTRY_MAX_LEN)
		return entry_error(err, raw, raw_len, "longer than %d bytes", NAME_MAX_LEN);
	for (size_t i = 0; i < len; i++)
		buf[i] = (raw[i] >= 'A' && raw[i] <= 'Z') ? (char)(raw[i] - 'A' + 'a') : raw[i];
	buf[len] = '\0';

	/* A hostname never holds ':' or '/': those are addresses and CIDRs. */
	if (strpbrk(buf, ":/"))
		return parse_address(raw, raw_len, buf, allow_any, out, err);

	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
	if (len == 0)
		return entry_error(err, raw, raw_len, "empty name");
	if (strspn(buf, "0123456789.") == len && strpbrk(buf, "0123456789")) {
		/* "1.2.3.4" in a name position is an address; "1.2.3" is nothing. */
		if (strchr(buf, '.') && cordon_addr_parse(buf, &out->cidr.addr) == 0)
			return parse_address(raw, raw_len, buf, allow_any, out, err);
		return entry_error(err, raw, raw_len, "not a valid IPv4 address");
	}
	if (strcmp(buf, "*") == 0)
		return entry_error(
			err, raw, raw_len,
			"a bare '*' would allow every name; use '*.example.org' for one label below a domain");
	if (len > NAME_MAX_LEN)
		return entry_error(err, raw, raw_len, "name longer than %d bytes", NAME_MAX_LEN);

	wildcard = buf[0] == '*' && buf[1] == '.';
	base = wildcard ? buf + 2 : buf;
	if (check_labels(raw, raw_len, base, &n_labels, err) < 0)
		return -1;
	if (wildcard && n_labels < 2)
		return entry_error(
			err, raw, raw_len,
			"a wildcard needs a base of at least two labels ('*.example.%s'): '*.%s' would allow a whole top-level domain",
			base, base);
	out->kind = wildcard ? CORDON_ALLOW_WILDCARD : CORDON_ALLOW_HOST;
	out->text = cordon_xstrdup(buf);
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Split one value at commas; every piece must be an entry. */
static int parse_value(const char *value, size_t value_len, bool allow_any, struct pending *p,
		       struct cordon_error *err)
{
	const char *end = value + value_len;
	const char *s = value;

	for (;;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *stop = comma ? comma : end;
		const char *a = s, *b = stop;
		struct cordon_allow_entry e;

		while (a < b && is_blank(*a))
			a++;
		while (b > a && is_blank(b[-1]))
			b--;
		if (a == b)
			return cordon_error_set(err, CORDON_E_NET_POLICY, 0,
						"allowlist value '%.*s': empty entry",
						(int)(value_len > 200 ? 200 : value_len), value);
		if (parse_entry(a, (size_t)(b - a), allow_any, &e, err) < 0)
			return -1;
		pending_push(p, &e);
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

int cordon_allowlist_add(struct cordon_allowlist *al, const char *value, bool allow_any,
			 struct cordon_error *err)
{
	struct pending p = { 0 };

	if (!value)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EINVAL, "allowlist value missing");
	if (parse_value(value, strlen(value), allow_any, &p, err) < 0) {
		pending_clear(&p);
		return -1;
	}
	pending_commit(al, &p);
	return 0;
}

int cordon_allowlist_add_file(struct cordon_allowlist *al, const char *path, bool allow_any,
			      struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *what = cordon_xasprintf("allowlist file %s", path);
	struct pending p = { 0 };
	size_t size = 0, lineno = 0;

	/* A fifo would block the reader and /dev/zero never ends: a bounded regular file. */
	if (cordon_input_read_path(path, CORDON_INPUT_TEXT_MAX, CORDON_E_NET_POLICY, what, &text,
				   &size, err) < 0)
		return -1;
	for (const char *line = text, *end = text + size; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *next = nl ? nl + 1 : end;
		size_t len = (size_t)(next - line), i = 0;
		const char *hash;

		lineno++;
		if (memchr(line, '\0', len)) {
			pending_clear(&p);
			return cordon_error_set(err, CORDON_E_NET_POLICY, 0,
						"%s:%zu: NUL byte in an allowlist file", path,
						lineno);
		}
		hash = memchr(line, '#', len);
		if (hash)
			len = (size_t)(hash - line);
		while (i < len && is_blank(line[i]))
			i++;
		if (i < len && parse_value(line + i, len - i, allow_any, &p, err) < 0) {
			pending_clear(&p);
			return cordon_error_wrap(err, "%s:%zu", path, lineno);
		}
		line = next;
	}
	pending_commit(al, &p);
	return 0;
}

bool cordon_allowlist_match_addr(const struct cordon_allowlist *al, const struct cordon_addr *a)
{
	if (!al || !a)
		return false;
	for (size_t i = 0; i < al->n_cidrs; i++)
		if (cordon_cidr_contains(&al->cidrs[i], a))
			return true;
	return false;
}

struct cordon_allowlist *cordon_allowlist_edit(const struct cordon_allowlist *al, const char *edits,
					       size_t len, bool allow_any, struct cordon_error *err)
{
	struct cordon_allowlist *add = cordon_allowlist_new(), *del = cordon_allowlist_new(), *out;
	size_t lineno = 0;

	for (const char *line = edits, *end = edits + len; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((nl ? nl : end) - line);
		_cleanup_free_ char *value = NULL;

		lineno++;
		if (n > 0 && (line[0] == '+' || line[0] == '-') && !memchr(line, '\0', n)) {
			value = cordon_xasprintf("%.*s", (int)(n - 1), line + 1);
			if (cordon_allowlist_add(line[0] == '+' ? add : del, value, allow_any,
						 err) < 0) {
				cordon_error_wrap(err, "%s %s", line[0] == '+' ? "allow" : "deny",
						  value);
				goto fail;
			}
		} else if (n > 0) {
			cordon_error_set(err, CORDON_E_USAGE, 0,
					 "allowlist change %zu: neither +ENTRY nor -ENTRY", lineno);
			goto fail;
		}
		line = nl ? nl + 1 : end;
	}
	/* A denial names an entry the list holds, however it was spelt. */
	for (size_t i = 0; i < del->n_entries; i++)
		if (!text_known(al, del->entries[i].text)) {
			cordon_error_set(err, CORDON_E_USAGE, 0,
					 "deny %s: not an entry of the allowlist", del->entries[i].text);
			goto fail;
		}
	out = cordon_allowlist_new();
	for (size_t i = 0; i < al->n_entries; i++)
		if (!text_known(del, al->entries[i].text) &&
		    cordon_allowlist_add(out, al->entries[i].text, true, err) < 0)
			goto fail_out;
	for (size_t i = 0; i < add->n_entries; i++)
		if (cordon_allowlist_add(out, add->entries[i].text, true, err) < 0)
			goto fail_out;
	cordon_allowlist_free(add);
	cordon_allowlist_free(del);
	return out;
fail_out:
	cordon_allowlist_free(out);
fail:
	cordon_allowlist_free(add);
	cordon_allowlist_free(del);
	return NULL;
}

size_t cordon_allowlist_count(const struct cordon_allowlist *al)
{
	return al ? al->n_entries : 0;
}

const struct cordon_allow_entry *cordon_allowlist_entry(const struct cordon_allowlist *al, size_t i)
{
	if (!al || i >= al->n_entries)
		return NULL;
	return &al->entries[i];
}

size_t cordon_allowlist_cidrs(const struct cordon_allowlist *al, const struct cordon_cidr **out)
{
	*out = al ? al->cidrs : NULL;
	return al ? al->n_cidrs : 0;
}

static int text_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cordon_allowlist_fingerprint(const struct cordon_allowlist *al, char out[65])
{
	size_t n = cordon_allowlist_count(al);
	_cleanup_free_ const char **texts = cordon_xcalloc(n ? n : 1, sizeof(*texts));
	struct cordon_sha256 sha;
	uint8_t digest[32];

	for (size_t i = 0; i < n; i++)
		texts[i] = al->entries[i].text;
	qsort(texts, n, sizeof(*texts), text_order);
	cordon_sha256_init(&sha);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			cordon_sha256_update(&sha, "\n", 1);
		cordon_sha256_update(&sha, texts[i], strlen(texts[i]));
	}
	cordon_sha256_final(&sha, digest);
	cordon_hex(digest, sizeof(digest), out);
}
