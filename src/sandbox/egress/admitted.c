// SPDX-License-Identifier: Apache-2.0
/*
 * What the supervisor admitted into the allow sets, and for which names
 * (egress.h, "admitted.c").
 *
 * Until when each address stays in the allow sets: an admit never
 * shortens what an earlier one promised a client (the kernel takes the
 * newest timeout). A table by address, open addressing with a few
 * probes: an entry past its end is free for another address. When an
 * address's probes find nothing free the table doubles, up to twice the
 * allow sets' size; there, the entry that ends first gives way, and a
 * later admit of that address may cut its time short, which costs only
 * the workload that floods us. Each address costs a few probes, whatever
 * the proxy has admitted before; the table is at most a few MiB.
 *
 * Each entry also holds the names it was admitted for (the newest
 * ADMITTED_NAMES of them, interned and counted): a live update keeps an
 * address, in the sets and in open connections, only while one of its
 * names is still allowed. An entry past its end keeps its names until
 * its slot is taken, so that an update can still tell whether a
 * connection that outlived its DNS answer belongs to an allowed name.
 */
#include <string.h>

#include "egress.h"

#define ADMITTED_FIRST 256
#define ADMITTED_MAX (2 * (size_t)CORDON_NFT_SET_MAX)
#define ADMITTED_PROBES 8

/* --- names -------------------------------------------------------------------- */

struct egress_name {
	struct egress_name *next; /* in its bucket */
	uint32_t hash, refs;
	char text[];
};

static uint32_t text_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The interned name, one more reference to it. */
static struct egress_name *name_get(struct sandbox_net *n, const char *text)
{
	uint32_t h = text_hash(text);
	struct egress_name *e;
	size_t len = strlen(text);

	if (n->n_names >= n->n_buckets) {
		size_t cap = n->n_buckets ? n->n_buckets * 2 : 64;
		struct egress_name **b = cordon_xcalloc(cap, sizeof(*b));

		for (size_t i = 0; i < n->n_buckets; i++)
			while ((e = n->name_buckets[i])) {
				n->name_buckets[i] = e->next;
				e->next = b[e->hash & (cap - 1)];
				b[e->hash & (cap - 1)] = e;
			}
		free(n->name_buckets);
		n->name_buckets = b;
		n->n_buckets = cap;
	}
	for (e = n->name_buckets[h & (n->n_buckets - 1)]; e; e = e->next)
		if (e->hash == h && strcmp(e->text, text) == 0) {
			e->refs++;
			return e;
		}
	e = cordon_xmalloc(sizeof(*e) + len + 1);
	e->hash = h;
	e->refs = 1;
	memcpy(e->text, text, len + 1);
	e->next = n->name_buckets[h & (n->n_buckets - 1)];
	n->name_buckets[h & (n->n_buckets - 1)] = e;
	n->n_names++;
	return e;
}

const char *egress_name_text(const struct egress_name *name)
{
	return name->text;
}

static void name_put(struct sandbox_net *n, struct egress_name *name)
{
	struct egress_name **p;

	if (!name || --name->refs)
		return;
	for (p = &n->name_buckets[name->hash & (n->n_buckets - 1)]; *p != name; p = &(*p)->next)
		;
	*p = name->next;
	n->n_names--;
	free(name);
}

static void entry_clear(struct sandbox_net *n, struct admitted_until *e)
{
	for (size_t i = 0; i < ADMITTED_NAMES; i++)
		name_put(n, e->names[i]);
	memset(e, 0, sizeof(*e));
}

/* name first among e's names (the oldest gives way when they are full). */
static void entry_name(struct sandbox_net *n, struct admitted_until *e, const char *text)
{
	struct egress_name *name = name_get(n, text);
	size_t i;

	for (i = 0; i < ADMITTED_NAMES - 1 && e->names[i] != name; i++)
		;
	name_put(n, e->names[i]); /* itself (already held), or the oldest */
	memmove(e->names + 1, e->names, i * sizeof(e->names[0]));
	e->names[0] = name;
}

/* --- the table ------------------------------------------------------------------ */

static size_t admitted_hash(const struct cordon_addr *a)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	h = (h ^ (uint32_t)a->family) * 16777619u;
	for (size_t i = 0; i < (a->family == AF_INET6 ? 16u : 4u); i++)
		h = (h ^ a->u.bytes[i]) * 16777619u;
	return h;
}

static bool same_address(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET6 ? 16 : 4) == 0;
}

uint64_t egress_admitted_until(const struct sandbox_net *n, const struct cordon_addr *a,
			       uint64_t now_ms)
{
	size_t h = admitted_hash(a);

	for (size_t k = 0; k < ADMITTED_PROBES && n->cap_admitted; k++) {
		const struct admitted_until *e = &n->admitted[(h + k) & (n->cap_admitted - 1)];

		if (e->until_ms > now_ms && same_address(&e->addr, a))
			return e->until_ms;
	}
	return 0;
}

bool egress_admitted_known(const struct sandbox_net *n, const struct cordon_addr *a)
{
	size_t h = admitted_hash(a);

	for (size_t k = 0; k < ADMITTED_PROBES && n->cap_admitted; k++) {
		const struct admitted_until *e = &n->admitted[(h + k) & (n->cap_admitted - 1)];

		if (e->names[0] && same_address(&e->addr, a))
			return true;
	}
	return false;
}

/*
 * Where a goes in table: its own entry, else the first free one among
 * its probes, else the one that ends first (*evicts: it is still in use).
 */
static size_t admitted_slot(const struct admitted_until *table, size_t cap,
			    const struct cordon_addr *a, uint64_t now_ms, bool *evicts)
{
	size_t h = admitted_hash(a), victim = h & (cap - 1), free_at = cap;

	for (size_t k = 0; k < ADMITTED_PROBES; k++) {
		size_t i = (h + k) & (cap - 1);

		if (table[i].until_ms <= now_ms) {
			if (free_at == cap)
				free_at = i;
			continue;
		}
		if (same_address(&table[i].addr, a)) {
			*evicts = false;
			return i;
		}
		if (table[i].until_ms < table[victim].until_ms)
			victim = i;
	}
	*evicts = free_at == cap;
	return free_at == cap ? victim : free_at;
}

/* Double the table (the first: ADMITTED_FIRST), keeping what has not ended. */
static void admitted_grow(struct sandbox_net *n, uint64_t now_ms)
{
	size_t cap = n->cap_admitted ? n->cap_admitted * 2 : ADMITTED_FIRST;
	struct admitted_until *table = cordon_xcalloc(cap, sizeof(*table));
	bool evicts;

	for (size_t i = 0; i < n->cap_admitted; i++) {
		struct admitted_until *e = &n->admitted[i];

		if (e->until_ms > now_ms) {
			struct admitted_until *to =
				&table[admitted_slot(table, cap, &e->addr, now_ms, &evicts)];

			/* A live entry giving way (not expected in a table twice as large). */
			if (evicts)
				entry_clear(n, to);
			*to = *e;
		} else {
			entry_clear(n, e);
		}
	}
	free(n->admitted);
	n->admitted = table;
	n->cap_admitted = cap;
}

void egress_admitted_put(struct sandbox_net *n, const struct cordon_addr *a, const char *name,
			 uint64_t until_ms, uint64_t now_ms)
{
	struct admitted_until *e;
	bool evicts = false;

	if (!n->cap_admitted)
		admitted_grow(n, now_ms);
	for (;;) {
		e = &n->admitted[admitted_slot(n->admitted, n->cap_admitted, a, now_ms, &evicts)];
		if (!evicts || n->cap_admitted >= ADMITTED_MAX)
			break;
		admitted_grow(n, now_ms);
	}
	/* Another address's, or ended: its names are not a's. */
	if (e->until_ms <= now_ms || !same_address(&e->addr, a))
		entry_clear(n, e);
	e->addr = *a;
	e->until_ms = until_ms;
	entry_name(n, e, name);
}

size_t egress_admitted_revet(struct sandbox_net *n, const struct cordon_allowlist *al,
			     const struct cordon_cidr *blocked, size_t n_blocked, bool apply,
			     uint64_t now_ms, struct cordon_addr *keep, uint32_t *keep_ms)
{
	size_t kept = 0;

	for (size_t i = 0; i < n->cap_admitted; i++) {
		struct admitted_until *e = &n->admitted[i];
		struct egress_name *still[ADMITTED_NAMES] = { NULL };
		size_t k = 0;

		if (!e->names[0])
			continue;
		for (size_t j = 0; j < ADMITTED_NAMES && e->names[j]; j++) {
			enum cordon_vet why;

			if (cordon_dnsctl_vet_admit(al, blocked, n_blocked, e->names[j]->text,
						    &e->addr, 1, &why) == 1)
				still[k++] = e->names[j];
			else if (apply)
				name_put(n, e->names[j]);
		}
		if (k && e->until_ms > now_ms && keep) {
			keep[kept] = e->addr;
			keep_ms[kept++] = (uint32_t)(e->until_ms - now_ms);
		}
		if (!apply)
			continue;
		memcpy(e->names, still, sizeof(still));
		if (!k)
			memset(e, 0, sizeof(*e)); /* its names were put above */
	}
	return kept;
}

size_t egress_admitted_live(const struct sandbox_net *n, uint64_t now_ms)
{
	size_t live = 0;

	for (size_t i = 0; i < n->cap_admitted; i++)
		live += n->admitted[i].until_ms > now_ms;
	return live;
}

void egress_admitted_free(struct sandbox_net *n)
{
	for (size_t i = 0; i < n->cap_admitted; i++)
		entry_clear(n, &n->admitted[i]);
	free(TAKE_PTR(n->admitted));
	n->cap_admitted = 0;
	free(TAKE_PTR(n->name_buckets));
	n->n_buckets = 0;
}
