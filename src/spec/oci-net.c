// SPDX-License-Identifier: Apache-2.0
/*
 * Network policy of an OCI container, from annotations (docs/oci.md,
 * "Network policy"): run.cordon.net.allow, run.cordon.dns.upstream and
 * run.cordon.dns fill spec->net as --net-allow, --dns-upstream and --dns
 * do, with the same checks; an error names the annotation.
 */
#include <string.h>

#include "oci-internal.h"

#define ANN_ALLOW "run.cordon.net.allow"
#define ANN_UPSTREAM "run.cordon.dns.upstream"
#define ANN_DNS "run.cordon.dns"

const char *oci_annotation(const struct cordon_oci *oci, const char *key)
{
	for (size_t i = 0; i < oci->n_annotations; i++)
		if (strcmp(oci->annotations[2 * i], key) == 0)
			return oci->annotations[2 * i + 1];
	return NULL;
}

/* The message of a check made elsewhere, as a config.json error naming the annotation. */
static int annotation_error(struct cordon_error *err, const char *key)
{
	char msg[sizeof(err->msg)];

	memcpy(msg, err->msg, sizeof(msg));
	return oci_error(err, "annotations.%s: %s", key, msg);
}

static int parse_allow(struct oci_parse *p, const char *value)
{
	struct cordon_allowlist *al;
	int r;

	if (!*value)
		return oci_error(p->err, "annotations." ANN_ALLOW ": empty (leave it out for no "
					 "network but lo)");
	/* The whole check of --net-allow, so that finalize has nothing left to refuse. */
	al = cordon_allowlist_new();
	r = cordon_allowlist_add(al, value, false, p->err);
	if (r == 0 && cordon_allowlist_count(al) == 0)
		r = cordon_error_set(p->err, CORDON_E_NET_POLICY, 0, "no entry");
	if (r == 0)
		r = cordon_gateway_check_allowlist(al, p->err);
	cordon_allowlist_free(al);
	if (r < 0)
		return annotation_error(p->err, ANN_ALLOW);
	cordon_strv_push(&p->spec->net.allow, &p->spec->net.n_allow, value);
	return 0;
}

static int parse_upstreams(struct oci_parse *p, const char *value)
{
	_cleanup_free_ char *copy = cordon_xstrdup(value);
	char *save = NULL;
	size_t n = 0;

	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		struct sockaddr_storage ss;

		e += strspn(e, " ");
		e[strcspn(e, " ")] = '\0';
		if (cordon_dns_upstream_parse(e, &ss) < 0)
			return oci_error(p->err,
					 "annotations." ANN_UPSTREAM ": '%s': expected ADDR, "
					 "ADDR:PORT or [ADDR]:PORT",
					 e);
		if (++n > CORDON_DNS_UPSTREAM_MAX)
			return oci_error(p->err, "annotations." ANN_UPSTREAM ": at most %d",
					 CORDON_DNS_UPSTREAM_MAX);
		cordon_strv_push(&p->spec->net.upstream_text, &p->spec->net.n_upstream_text, e);
	}
	if (n == 0)
		return oci_error(p->err, "annotations." ANN_UPSTREAM ": empty");
	return 0;
}

int oci_parse_net_annotations(struct oci_parse *p)
{
	const struct cordon_oci *oci = p->oci;
	const char *allow = oci_annotation(oci, ANN_ALLOW),
		   *upstream = oci_annotation(oci, ANN_UPSTREAM),
		   *dns = oci_annotation(oci, ANN_DNS);
	const char *first = allow ? ANN_ALLOW : upstream ? ANN_UPSTREAM : ANN_DNS;
	const char *path = oci->ns_path[CORDON_OCI_NS_NETWORK];

	if (!allow && !upstream && !dns)
		return 0; /* default deny: only lo */
	/* The policy is enforced around a namespace cordon makes; a joined one is someone else's. */
	if (path && *path)
		return oci_error(p->err,
				 "annotations.%s: the network namespace is joined by path (%s); "
				 "cordon applies a network policy only to a new one",
				 first, path);
	if (!oci->ns_listed[CORDON_OCI_NS_NETWORK])
		return oci_error(p->err,
				 "annotations.%s: needs a new network namespace "
				 "(linux.namespaces: {\"type\": \"network\"})",
				 first);
	if (!allow)
		return oci_error(p->err,
				 "annotations.%s: needs " ANN_ALLOW
				 " (without it the container has no network but lo)",
				 first);
	if (parse_allow(p, allow) < 0)
		return -1;
	if (dns) {
		if (strcmp(dns, "proxy") != 0 && strcmp(dns, "none") != 0)
			return oci_error(p->err,
					 "annotations." ANN_DNS ": expected proxy or none, got '%s'",
					 dns);
		p->spec->net.dns_given = true;
		p->spec->net.dns_none = strcmp(dns, "none") == 0;
	}
	if (upstream && p->spec->net.dns_none)
		return oci_error(p->err, "annotations." ANN_UPSTREAM ": excluded by " ANN_DNS
					 " none");
	if (upstream && parse_upstreams(p, upstream) < 0)
		return -1;
	return 0;
}
