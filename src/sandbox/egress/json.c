// SPDX-License-Identifier: Apache-2.0
/*
 * The "network" object of --print-profile and --result-json: the policy a
 * sandbox gets (both), and what happened under it (the result only).
 */
#include <arpa/inet.h>
#include <string.h>

#include "egress.h"

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(yajl_gen g, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void addr(yajl_gen g, const struct cordon_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	cordon_addr_format(a, buf, sizeof(buf));
	str(g, buf);
}

static void sockaddr(yajl_gen g, const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN + 8];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, sizeof(buf), "%s:%u", host, ntohs(sin->sin_port));
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, sizeof(buf), "[%s]:%u", host, ntohs(sin6->sin6_port));
	}
	str(g, buf);
}

static const char *backend_name(enum cordon_net_backend b)
{
	return b == CORDON_NET_BACKEND_VETH ? "veth" : "pasta";
}

void sandbox_json_net_policy(yajl_gen g, const struct cordon_spec *spec,
			     const struct cordon_allowlist *al)
{
	const struct cordon_net_spec *net = &spec->net;
	struct cordon_gateway_addrs gw;
	char fingerprint[65];

	key(g, "mode");
	if (!net->enabled) {
		str(g, "none");
		key(g, "allow");
		yajl_gen_array_open(g);
		yajl_gen_array_close(g);
		return;
	}
	cordon_gateway_addrs(&gw);
	if (!al)
		al = net->allowlist;
	str(g, "allowlist");
	key(g, "allow");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cordon_allowlist_count(al); i++)
		str(g, cordon_allowlist_entry(al, i)->text);
	yajl_gen_array_close(g);
	cordon_allowlist_fingerprint(al, fingerprint);
	key(g, "fingerprint");
	str(g, fingerprint);
	key(g, "backend");
	str(g, backend_name(net->backend));
	key(g, "workload_addresses");
	yajl_gen_array_open(g);
	addr(g, &gw.workload4);
	addr(g, &gw.workload6);
	yajl_gen_array_close(g);
	key(g, "gateway");
	yajl_gen_array_open(g);
	addr(g, &gw.gw4);
	addr(g, &gw.gw6);
	yajl_gen_array_close(g);
	key(g, "dns");
	str(g, net->dns_none ? "none" : "proxy");
	key(g, "dns_upstreams");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < net->n_upstreams; i++)
		sockaddr(g, &net->upstreams[i]);
	yajl_gen_array_close(g);
	key(g, "allow_host_loopback");
	yajl_gen_bool(g, net->allow_host_loopback);
	key(g, "max_flows");
	yajl_gen_integer(g, net->max_flows);
}

static void addr_list(yajl_gen g, const char *k, const struct cordon_net_addr_list *l, bool why)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < l->n; i++) {
		if (!why) {
			addr(g, &l->v[i].addr);
			continue;
		}
		yajl_gen_map_open(g);
		key(g, "address");
		addr(g, &l->v[i].addr);
		key(g, "reason");
		str(g, cordon_vet_name(l->v[i].why));
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void sandbox_json_net_outcome(yajl_gen g, const struct cordon_net_report *rep)
{
	key(g, "uplink");
	if (rep->uplink_host[0]) {
		yajl_gen_map_open(g);
		key(g, "host");
		str(g, rep->uplink_host);
		key(g, "gateway");
		str(g, rep->uplink_gateway);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	key(g, "names");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < rep->n_names; i++) {
		const struct cordon_net_name *n = &rep->names[i];

		yajl_gen_map_open(g);
		key(g, "name");
		str(g, n->name);
		key(g, "allowed");
		yajl_gen_bool(g, n->allowed);
		addr_list(g, "inserted", &n->added, false);
		addr_list(g, "refused", &n->refused, true);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "denied_names");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < rep->n_names; i++)
		if (rep->names[i].denied)
			str(g, rep->names[i].name);
	yajl_gen_array_close(g);
	key(g, "names_truncated");
	yajl_gen_bool(g, rep->names_truncated);
	key(g, "dropped_packets");
	if (rep->dropped_known)
		yajl_gen_integer(g, (long long)rep->dropped_packets);
	else
		yajl_gen_null(g);
	key(g, "dropped_bytes");
	if (rep->dropped_known)
		yajl_gen_integer(g, (long long)rep->dropped_bytes);
	else
		yajl_gen_null(g);
	key(g, "dns_queries");
	yajl_gen_integer(g, (long long)rep->dns.queries);
	key(g, "dns_denied");
	yajl_gen_integer(g, (long long)rep->dns.denied);
	key(g, "dns_forwarded");
	yajl_gen_integer(g, (long long)rep->dns.forwarded);
	key(g, "dns_rate_limited");
	yajl_gen_integer(g, (long long)rep->dns.rate_limited);
}

static void cidr(yajl_gen g, const struct cordon_cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 4];

	cordon_cidr_format(c, buf, sizeof(buf));
	str(g, buf);
}

void sandbox_json_net_live(yajl_gen g, struct sandbox_net *n)
{
	struct cordon_nft_counters counters;
	struct cordon_error err = { 0 };
	uint64_t now_ms = cordon_now_mono_us() / 1000;

	sandbox_json_net_policy(g, n->spec, n->result->net.allowlist);
	key(g, "admitted");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n->cap_admitted; i++) {
		const struct admitted_until *e = &n->admitted[i];

		if (e->until_ms <= now_ms)
			continue;
		yajl_gen_map_open(g);
		key(g, "address");
		addr(g, &e->addr);
		key(g, "names");
		yajl_gen_array_open(g);
		for (size_t k = 0; k < ADMITTED_NAMES && e->names[k]; k++)
			str(g, egress_name_text(e->names[k]));
		yajl_gen_array_close(g);
		key(g, "ttl_s");
		yajl_gen_integer(g, (long long)((e->until_ms - now_ms + 999) / 1000));
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "blocked");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n->n_blocked; i++)
		cidr(g, &n->blocked[i]);
	yajl_gen_array_close(g);
	if (n->nft && cordon_nft_read_counters(n->nft, &counters, &err) == 0) {
		key(g, "dropped_packets");
		yajl_gen_integer(g, (long long)counters.dropped_packets);
		key(g, "dropped_bytes");
		yajl_gen_integer(g, (long long)counters.dropped_bytes);
	}
}
