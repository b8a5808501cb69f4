// SPDX-License-Identifier: Apache-2.0
/*
 * What the network did, for --result-json: the names the workload asked
 * the DNS proxy about, what was admitted and refused (the supervisor's
 * verdicts; the proxy's word only where the report says so), the
 * gateway's drop counters and the proxy's own (docs/network.md).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "egress.h"

/* --- the report ------------------------------------------------------------ */

static struct cordon_net_name *report_name(struct cordon_net_report *r, const char *name)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (strcmp(r->names[i].name, name) == 0)
			return &r->names[i];
	if (r->n_names >= CORDON_NET_REPORT_NAMES_MAX) {
		r->names_truncated = true;
		return NULL;
	}
	r->names = cordon_xrealloc(r->names, (r->n_names + 1) * sizeof(*r->names));
	memset(&r->names[r->n_names], 0, sizeof(*r->names));
	snprintf(r->names[r->n_names].name, sizeof(r->names[0].name), "%s", name);
	return &r->names[r->n_names++];
}

static void report_addr(struct cordon_net_addr_list *l, const struct cordon_addr *a,
			enum cordon_vet why)
{
	for (size_t i = 0; i < l->n; i++)
		if (memcmp(&l->v[i].addr, a, sizeof(*a)) == 0)
			return;
	if (l->n < ARRAY_SIZE(l->v))
		l->v[l->n++] = (struct cordon_net_addr){ *a, why };
}

bool sandbox_net_report_has(struct sandbox_net *n, const char *name)
{
	const struct cordon_net_report *r = &n->result->net;

	for (size_t i = 0; i < r->n_names; i++)
		if (strcmp(r->names[i].name, name) == 0)
			return true;
	return false;
}

void sandbox_net_report(struct sandbox_net *n, const char *name, bool allowed,
			const struct cordon_addr *addrs, size_t n_addrs, const enum cordon_vet *why)
{
	struct cordon_net_name *entry;

	if (!name || !*name)
		return;
	entry = report_name(&n->result->net, name);
	if (!entry)
		return;
	if (allowed)
		entry->allowed = true;
	else
		entry->denied = true;
	for (size_t i = 0; i < n_addrs; i++) {
		if (why[i] == CORDON_VET_OK)
			report_addr(&entry->added, &addrs[i], CORDON_VET_OK);
		else
			report_addr(&entry->refused, &addrs[i], why[i]);
	}
}
