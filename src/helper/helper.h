/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inside cordon-nethelper (man/cordon-nethelper.8): the pieces main()
 * in nethelper.c calls in order.
 *
 *   request.c     the request on stdin: bytes, the one fd, the caller's
 *                 uid; the strict JSON and its validation; the netns fd
 *   hostlink.c    rtnetlink through libmnl: addresses, the veth, up, delete
 *   netlib.c      the network engine's nft table, from the linked libraries
 *
 * The lock and the static table inet cordon-host are nftables rulesets
 * like the gateway's, built by the network engine (src/net/nft-host.c,
 * cordon_nft_host_lock and cordon_nft_host_install in cordon/net.h).
 *
 * Why libmnl rather than libnl-route (src/net/link.c): this program holds
 * file capabilities, and libnl reads its environment (NLDBG, NLCB,
 * NLSYSCONFDIR) and parses $NLSYSCONFDIR/classid in a constructor, before
 * main() could scrub anything. libmnl, libnftnl and yajl read no
 * environment and run no constructors; meson links only them.
 */
#ifndef CORDON_HELPER_H
#define CORDON_HELPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/core.h"
#include "cordon/net.h"
#include "cordon/nethelper.h"

/* --- request.c -------------------------------------------------------- */

#define HELPER_REQUEST_MAX 4096
#define HELPER_REQUEST_TIMEOUT_MS 10000

struct helper_request {
	char id[CORDON_NETHELPER_ID_MAX + 1];
	struct cordon_cidr pool;
	int netns_fd; /* the one fd that came with the request, -1 if none */
	uid_t caller; /* SO_PEERCRED of stdin, equal to our real uid */
};

/* Read the request from fd (a unix stream socket) until EOF; parse it. */
int request_read(int fd, struct helper_request *req, struct cordon_error *err);
/* The JSON alone (also for tests): strict keys, types and values. */
int request_parse(const char *buf, size_t len, bool caller_is_root, struct helper_request *req,
		  struct cordon_error *err);
/*
 * req->netns_fd is a network namespace other than ours whose user
 * namespace req->caller owns (any, for root).
 */
int request_check_netns(const struct helper_request *req, struct cordon_error *err);

/* --- netlib.c ----------------------------------------------------------- */

/* Before any cordon_nft_* call: the engine calls libnftnl through a table. */
void helper_netlib_bind(void);

/* --- hostlink.c --------------------------------------------------------- */

struct hostlink;

struct hostlink *hostlink_open(struct cordon_error *err);
void hostlink_close(struct hostlink *h);
/* The IPv4 network (address & mask) of every local and peer address here. */
int hostlink_ipv4_networks(struct hostlink *h, struct cordon_cidr **out, size_t *n,
			   struct cordon_error *err);
/* A veth: name here in group, peer_name born in the netns peer_netns_fd. */
int hostlink_create_veth(struct hostlink *h, const char *name, uint32_t group,
			 const char *peer_name, int peer_netns_fd, int *ifindex,
			 struct cordon_error *err);
int hostlink_add_ipv4(struct hostlink *h, int ifindex, const struct cordon_addr *a, unsigned prefix,
		      struct cordon_error *err);
int hostlink_set_up(struct hostlink *h, int ifindex, struct cordon_error *err);
int hostlink_delete(struct hostlink *h, int ifindex, struct cordon_error *err);

#endif
