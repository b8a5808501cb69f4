// SPDX-License-Identifier: Apache-2.0
/*
 * The gateway's blocked sets: what the forward chain drops before any
 * allow rule. It is the vetting table without its embedded IPv4 forms
 * (cordon_vet_table_native: the forward chain checks every embedded form
 * of an IPv6 destination against blocked4 itself), with the same
 * explicit covers the DNS vetting honours cut out of it (a CIDR entry
 * that lies inside a refused range opens that part, so 10.8.0.0/24
 * works), the cloud metadata addresses put back unless listed exactly,
 * and the uplink's and the host's own addresses, which no entry opens.
 */
#include <string.h>

#include "cordon/net.h"

struct cidr_list {
	struct cordon_cidr *v;
	size_t n, cap;
};

static void list_push(struct cidr_list *l, const struct cordon_cidr *c)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = cordon_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = *c;
}

static unsigned family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static void subtract(struct cidr_list *l, const struct cordon_cidr *hole)
{
	struct cidr_list next = { 0 };

	for (size_t i = 0; i < l->n; i++) {
		const struct cordon_cidr *r = &l->v[i];
		struct cordon_cidr pieces[128];
		size_t n;

		if (cordon_cidr_within(r, hole))
			continue; /* wholly opened */
		if (!cordon_cidr_within(hole, r)) {
			list_push(&next, r);
			continue;
		}
		n = cordon_cidr_split_around(r, hole, pieces);
		for (size_t k = 0; k < n; k++)
			list_push(&next, &pieces[k]);
	}
	free(l->v);
	*l = next;
}

/* Does an entry of the allowlist name exactly this address (as a /32 or /128)? */
static bool listed_exactly(const struct cordon_cidr *allowed, size_t n, const struct cordon_cidr *c)
{
	for (size_t i = 0; i < n; i++)
		if (allowed[i].prefix == c->prefix && allowed[i].addr.family == c->addr.family &&
		    memcmp(allowed[i].addr.u.bytes, c->addr.u.bytes, 16) == 0)
			return true;
	return false;
}

size_t cordon_gateway_blocked(const struct cordon_allowlist *al, const struct cordon_addr *extra,
			      size_t n_extra, struct cordon_cidr **out)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct cidr_list list = { 0 };
	const struct cordon_cidr *allowed = NULL;
	size_t n_allowed = al ? cordon_allowlist_cidrs(al, &allowed) : 0;

	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		const struct cordon_cidr *table;
		size_t n = cordon_vet_table_native(families[f], &table);
		struct cidr_list fam = { 0 };

		for (size_t i = 0; i < n; i++)
			list_push(&fam, &table[i]);
		/* An entry opens what it covers only when it lies inside a refused range. */
		for (size_t a = 0; a < n_allowed; a++) {
			bool inside = false;

			for (size_t i = 0; i < n && !inside; i++)
				inside = cordon_cidr_within(&allowed[a], &table[i]);
			if (inside)
				subtract(&fam, &allowed[a]);
		}
		for (size_t i = 0; i < fam.n; i++)
			list_push(&list, &fam.v[i]);
		free(fam.v);
	}
	/* Metadata services stay blocked unless named one by one. */
	{
		const struct cordon_cidr *meta;
		size_t n = cordon_vet_metadata(&meta);

		for (size_t i = 0; i < n; i++)
			if (!listed_exactly(allowed, n_allowed, &meta[i]))
				list_push(&list, &meta[i]);
	}
	for (size_t i = 0; i < n_extra; i++) {
		struct cordon_cidr c = { .addr = extra[i], .prefix = family_bits(extra[i].family) };

		list_push(&list, &c);
	}
	*out = list.v;
	return list.n;
}
