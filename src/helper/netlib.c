// SPDX-License-Identifier: Apache-2.0
/*
 * The network engine's nft table (src/net/netlib.h), filled from the
 * libmnl and libnftnl this program is linked against: it holds file
 * capabilities, so it opens no library itself (no dlopen), and the
 * dynamic loader's secure mode alone decides which files are mapped.
 */
#define NETLIB_NO_REDIRECT
#include "../net/netlib.h"
#include "helper.h"

void helper_netlib_bind(void)
{
#define BIND(name) netlib_nft.name = name;
	NETLIB_NFT_FUNCTIONS(BIND)
#undef BIND
	netlib_bound(CORDON_NETLIB_NFT);
}
