// SPDX-License-Identifier: Apache-2.0
/*
 * Loading the netlink libraries when a sandbox needs them (netlib.h).
 *
 * Each library is opened by its absolute path in the directory its
 * pkg-config file named at build time (config.h), the library it
 * depends on first: libnftnl's DT_NEEDED libmnl.so.0 and libnl-route's
 * libnl-3.so.200 then match the ones already loaded by soname, so no
 * search path (LD_LIBRARY_PATH, a RUNPATH) picks any of the four.
 */
#include <dlfcn.h>
#include <string.h>

#include "config.h"

#define NETLIB_NO_REDIRECT
#include "netlib.h"

struct netlib_nft netlib_nft;
struct netlib_link netlib_link;

static unsigned loaded;

struct group {
	unsigned bit;
	const char *paths[2]; /* the dependency first */
	void *table;
	const char *const *names;
	size_t n;
};

#define NETLIB_NAME(name) #name,
static const char *const nft_names[] = { NETLIB_NFT_FUNCTIONS(NETLIB_NAME) };
static const char *const link_names[] = { NETLIB_LINK_FUNCTIONS(NETLIB_NAME) };
#undef NETLIB_NAME

static const struct group groups[] = {
	{ CORDON_NETLIB_NFT, { CORDON_LIBMNL_PATH, CORDON_LIBNFTNL_PATH }, &netlib_nft, nft_names,
	  ARRAY_SIZE(nft_names) },
	{ CORDON_NETLIB_LINK, { CORDON_LIBNL_PATH, CORDON_LIBNL_ROUTE_PATH }, &netlib_link,
	  link_names, ARRAY_SIZE(link_names) },
};

static int load_group(const struct group *g, struct cordon_error *err)
{
	void *h[ARRAY_SIZE(g->paths)] = { NULL };
	void **table = g->table;
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(g->paths) && r == 0; i++) {
		h[i] = dlopen(g->paths[i], RTLD_NOW | RTLD_LOCAL);
		if (!h[i])
			r = cordon_error_set(err, CORDON_E_NET_POLICY, 0,
					     "loading the network's libraries: %s", dlerror());
	}
	/* The last library's handle: its symbols, then its dependency's. */
	for (size_t i = 0; i < g->n && r == 0; i++) {
		table[i] = dlsym(h[ARRAY_SIZE(h) - 1], g->names[i]);
		if (!table[i])
			r = cordon_error_set(err, CORDON_E_NET_POLICY, 0, "%s: no %s",
					     g->paths[ARRAY_SIZE(g->paths) - 1], g->names[i]);
	}
	if (r < 0) {
		memset(g->table, 0, g->n * sizeof(void *));
		for (size_t i = ARRAY_SIZE(h); i-- > 0;)
			if (h[i])
				dlclose(h[i]);
		return r;
	}
	loaded |= g->bit;
	return 0;
}

int cordon_netlib_load(unsigned libs, struct cordon_error *err)
{
	_Static_assert(sizeof(struct netlib_nft) == ARRAY_SIZE(nft_names) * sizeof(void *),
		       "one pointer per name");
	_Static_assert(sizeof(struct netlib_link) == ARRAY_SIZE(link_names) * sizeof(void *),
		       "one pointer per name");

	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		if ((libs & groups[i].bit) && !(loaded & groups[i].bit) &&
		    load_group(&groups[i], err) < 0)
			return -1;
	return 0;
}

void netlib_bound(unsigned libs)
{
	loaded |= libs;
}

int netlib_ready(unsigned libs, const char *what, struct cordon_error *err)
{
	if ((loaded & libs) == libs)
		return 0;
	return cordon_error_set(err, CORDON_E_INTERNAL, 0,
				"%s: the network libraries were not loaded", what);
}
