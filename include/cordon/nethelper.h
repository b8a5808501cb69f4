/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nethelper: the client side of cordon-nethelper(8), the small privileged
 * program that gives a rootful sandbox's gateway namespace its uplink.
 *
 * The helper runs with CAP_NET_ADMIN only (file capabilities, never
 * setuid). It creates a veth pair in the caller's network namespace (the
 * host): the host end "cdr-<8 hex>" in link group CORDON_NETHELPER_GROUP
 * with .1 of a free /30 of the pool, and the other end "up0" moved, still
 * unconfigured, into the gateway namespace. The caller then configures
 * up0 from inside the gateway namespace, where it holds CAP_NET_ADMIN of
 * its own (cordon_nethelper_configure_gateway): this keeps CAP_SYS_ADMIN
 * (setns) out of the helper. Nothing per sandbox is left on the host: the
 * veth dies with the gateway namespace.
 *
 * Protocol (see man/cordon-nethelper.8): stdin and stdout are one unix
 * stream socket; the caller writes {"id": ..., "pool": ...} with the
 * gateway namespace's fd attached (SCM_RIGHTS) and shuts its writing side
 * down; the helper answers with one JSON line and exits 0, or prints
 * `cordon-nethelper: CODE: message` on stderr and exits 1.
 */
#ifndef CORDON_NETHELPER_H
#define CORDON_NETHELPER_H

#include <net/if.h>
#include <stdbool.h>

#include "cordon/core.h"
#include "cordon/net.h"

/* Link group of every host end (0x00c0d0), matched by the host table. */
#define CORDON_NETHELPER_GROUP 0xc0d0u
#define CORDON_NETHELPER_DEFAULT_POOL "10.231.0.0/16"
/* The name of the end that lands in the gateway namespace. */
#define CORDON_NETHELPER_GATEWAY_IF "up0"
/* The static table the helper installs once in the host namespace. */
#define CORDON_NETHELPER_HOST_TABLE "cordon-host"
/* Longest sandbox id the helper accepts ([A-Za-z0-9][A-Za-z0-9_.-]{0,63}). */
#define CORDON_NETHELPER_ID_MAX 64

struct cordon_nethelper_result {
	char host_if[IFNAMSIZ];		 /* "cdr-0123abcd", in the caller's netns */
	char gateway_if[IFNAMSIZ];	 /* CORDON_NETHELPER_GATEWAY_IF, in the gateway netns */
	struct cordon_addr host_addr;	 /* .1 of the /30, configured on host_if */
	struct cordon_addr gateway_addr; /* .2 of the /30, for gateway_if (not yet set) */
	unsigned prefix;		 /* 30 */
	bool enabled_ip_forward;	 /* this call switched net.ipv4.ip_forward on */
};

/*
 * Run the helper at helper_path for sandbox id, handing it
 * gateway_netns_fd (not consumed); pool NULL means the helper's default.
 * The helper gets an empty environment and only fds 0-2. Waits at most
 * 30 s. On failure *err carries the helper's own message (code
 * CORDON_E_NET_POLICY) or why it could not be run.
 */
int cordon_nethelper_run(const char *helper_path, const char *id, int gateway_netns_fd,
			 const char *pool, struct cordon_nethelper_result *out,
			 struct cordon_error *err);

/*
 * The gateway side, called from inside the gateway namespace by a process
 * with CAP_NET_ADMIN there (the sandbox init): gateway_addr/prefix on
 * gateway_if, the link up, the default route via host_addr.
 */
int cordon_nethelper_configure_gateway(const struct cordon_nethelper_result *r,
				       struct cordon_error *err);

#endif
