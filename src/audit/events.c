// SPDX-License-Identifier: Apache-2.0
/* The audit log's events, one JSON object each (docs/audit.schema.json). */
#include <arpa/inet.h>
#include <string.h>

#include "audit-internal.h"

static const char *qtype_name(uint16_t t, char buf[16])
{
	switch (t) {
	case CORDON_DNS_TYPE_A:
		return "A";
	case CORDON_DNS_TYPE_AAAA:
		return "AAAA";
	case CORDON_DNS_TYPE_CNAME:
		return "CNAME";
	case CORDON_DNS_TYPE_SVCB:
		return "SVCB";
	case CORDON_DNS_TYPE_HTTPS:
		return "HTTPS";
	case 15:
		return "MX";
	case 16:
		return "TXT";
	case 12:
		return "PTR";
	case 2:
		return "NS";
	case 6:
		return "SOA";
	case 33:
		return "SRV";
	}
	snprintf(buf, 16, "TYPE%u", t);
	return buf;
}

static void gen_addr(yajl_gen g, const struct cordon_addr *a)
{
	char text[INET6_ADDRSTRLEN];

	cordon_addr_format(a, text, sizeof(text));
	audit_str(g, text);
}

/* A limit: its value, or null when none was set. */
static void kcount(yajl_gen g, const char *k, uint64_t v)
{
	audit_key(g, k);
	if (v)
		yajl_gen_integer(g, (long long)v);
	else
		yajl_gen_null(g);
}

static void gen_policy(yajl_gen g, const struct cordon_spec *spec)
{
	const struct cordon_net_spec *net = &spec->net;

	audit_key(g, "network");
	yajl_gen_map_open(g);
	audit_kstr(g, "mode", net->enabled ? "allowlist" : "none");
	if (net->enabled && net->allowlist) {
		char fp[65];

		audit_key(g, "allow");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < cordon_allowlist_count(net->allowlist); i++)
			audit_str(g, cordon_allowlist_entry(net->allowlist, i)->text);
		yajl_gen_array_close(g);
		audit_kstr(g, "dns", net->dns_none ? "none" : "proxy");
		audit_kstr(g, "backend",
			   net->backend == CORDON_NET_BACKEND_PASTA ? "pasta" : "veth");
		audit_kbool(g, "allow_host_loopback", net->allow_host_loopback);
		cordon_allowlist_fingerprint(net->allowlist, fp);
		audit_kstr(g, "fingerprint", fp);
	} else {
		audit_key(g, "allow");
		yajl_gen_array_open(g);
		yajl_gen_array_close(g);
		audit_kstr(g, "fingerprint", NULL);
	}
	yajl_gen_map_close(g);
}

int cordon_audit_create(struct cordon_audit *a, const struct cordon_spec *spec,
			struct cordon_error *err)
{
	yajl_gen g;

	if (!a)
		return 0;
	g = audit_begin(a, "create");
	audit_kstr(g, "rootfs", spec->rootfs);
	audit_key(g, "user");
	yajl_gen_map_open(g);
	audit_kint(g, "uid", spec->uid);
	audit_kint(g, "gid", spec->gid);
	audit_kstr(g, "name", spec->user);
	audit_kstr(g, "userns", spec->userns == CORDON_USERNS_HOST ? "host" : "auto");
	yajl_gen_map_close(g);
	/* The keys only: a value may be a secret, and no rule can know which. */
	audit_key(g, "env_keys");
	yajl_gen_array_open(g);
	for (size_t i = 0; spec->env && spec->env[i]; i++) {
		const char *eq = strchr(spec->env[i], '=');
		_cleanup_free_ char *key =
			eq ? cordon_xasprintf("%.*s", (int)(eq - spec->env[i]), spec->env[i]) :
			     cordon_xstrdup(spec->env[i]);

		audit_str(g, key);
	}
	yajl_gen_array_close(g);
	audit_key(g, "limits");
	yajl_gen_map_open(g);
	kcount(g, "memory", spec->limits.memory);
	kcount(g, "memory_swap", spec->limits.memory_swap);
	audit_key(g, "cpus");
	if (spec->limits.cpu_quota && spec->limits.cpu_period)
		yajl_gen_double(g, (double)spec->limits.cpu_quota / (double)spec->limits.cpu_period);
	else
		yajl_gen_null(g);
	kcount(g, "pids", spec->limits.pids);
	kcount(g, "timeout_ms", spec->timeout_ms);
	audit_key(g, "output_max");
	if (spec->output_capped)
		yajl_gen_integer(g, (long long)spec->output_max);
	else
		yajl_gen_null(g);
	audit_kstr(g, "mode", spec->limits.best_effort ? "best-effort" : "strict");
	yajl_gen_map_close(g);
	gen_policy(g, spec);
	return audit_end(a, g, AUDIT_CALLER, err);
}

static void gen_strings(yajl_gen g, const char *k, const char *const *v, size_t n)
{
	audit_key(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++)
		audit_str(g, v[i]);
	yajl_gen_array_close(g);
}

int cordon_audit_policy(struct cordon_audit *a, const char *const *added, size_t n_added,
			const char *const *removed, size_t n_removed, const char *fingerprint,
			struct cordon_error *err)
{
	yajl_gen g;

	if (!a)
		return 0;
	g = audit_begin(a, "policy");
	gen_strings(g, "added", added, n_added);
	gen_strings(g, "removed", removed, n_removed);
	audit_kstr(g, "fingerprint", fingerprint);
	return audit_end(a, g, AUDIT_CALLER, err);
}

/*
 * An exec event's fields after argv: the same in the full record and the
 * minimal one.
 */
static void gen_exec_outcome(yajl_gen g, const struct cordon_audit_exec *ex)
{
	audit_kint(g, "exit_code", ex->exit_code);
	audit_key(g, "signal");
	if (ex->signal)
		yajl_gen_integer(g, ex->signal);
	else
		yajl_gen_null(g);
	audit_kbool(g, "timed_out", ex->timed_out);
	audit_kint(g, "duration_ms", (long long)ex->duration_ms);
	audit_key(g, "stdout_bytes");
	if (ex->output_counted)
		yajl_gen_integer(g, (long long)ex->stdout_bytes);
	else
		yajl_gen_null(g);
	audit_key(g, "stderr_bytes");
	if (ex->output_counted)
		yajl_gen_integer(g, (long long)ex->stderr_bytes);
	else
		yajl_gen_null(g);
	audit_kbool(g, "truncated", ex->truncated);
	audit_kstr(g, "error", ex->error);
}

/*
 * One exec event, never dropped for its argv's size: the words are
 * redacted whole, then each cut at AUDIT_STRING_MAX, the list at
 * AUDIT_ARGV_MAX words and AUDIT_ARGV_JSON_MAX bytes of JSON
 * (argv_truncated says any of it was); argc and argv_sha256 (of every
 * redacted word, each ended by a NUL) describe the whole. When the line
 * passes the callers' share of the cap, a minimal record (argv empty,
 * the rest as it was) takes the reserve made for it; only when that is
 * full too is the event dropped and counted.
 */
int cordon_audit_exec(struct cordon_audit *a, const struct cordon_audit_exec *ex,
		      struct cordon_error *err)
{
	struct cordon_sha256 digest;
	bool hide_next = false, left_off = false, cut_any = false;
	size_t n = 0, json = 0;
	uint8_t sum[32];
	char hex[65];
	yajl_gen g;
	int r;

	if (!a)
		return 0;
	while (ex->argv && ex->argv[n])
		n++;
	cordon_sha256_init(&digest);
	g = audit_begin(a, "exec");
	audit_key(g, "argv");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		/* Redacted whole, before any cut: a cut could leave a token no rule matches. */
		_cleanup_free_ char *word = hide_next ? cordon_xstrdup(CORDON_AUDIT_REDACTED) :
							cordon_audit_redact(a, ex->argv[i]);
		_cleanup_free_ char *clean = NULL;
		bool cut;

		hide_next = audit_flag_hides_next(ex->argv[i]);
		cordon_sha256_update(&digest, word, strlen(word) + 1);
		if (left_off)
			continue;
		clean = audit_clean(word, &cut);
		if (i >= AUDIT_ARGV_MAX || json + audit_json_len(clean) + 1 > AUDIT_ARGV_JSON_MAX) {
			left_off = true;
			continue;
		}
		json += audit_json_len(clean) + 1;
		cut_any |= cut;
		yajl_gen_string(g, (const unsigned char *)clean, strlen(clean));
	}
	yajl_gen_array_close(g);
	cordon_sha256_final(&digest, sum);
	cordon_hex(sum, sizeof(sum), hex);
	audit_kbool(g, "argv_truncated", left_off || cut_any);
	audit_kint(g, "argc", (long long)n);
	audit_kstr(g, "argv_sha256", hex);
	gen_exec_outcome(g, ex);
	r = audit_end_try(a, g, AUDIT_CALLER, err);
	if (r != 1)
		return r;
	/* Past the callers' share: what ran, how it ended, without its words. */
	g = audit_begin(a, "exec");
	audit_key(g, "argv");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	audit_kbool(g, "argv_truncated", n > 0);
	audit_kint(g, "argc", (long long)n);
	audit_kstr(g, "argv_sha256", hex);
	gen_exec_outcome(g, ex);
	r = audit_end_try(a, g, AUDIT_MINIMAL, err);
	return r == 1 ? audit_count_drop(a, err) : r;
}

void cordon_audit_dns(struct cordon_audit *a, const struct cordon_audit_dns *d)
{
	struct cordon_error err = { 0 };
	uint64_t now = cordon_now_mono_us();
	unsigned rate;
	char tbuf[16];
	int b;
	yajl_gen g;

	if (!a)
		return;
	/* A token bucket: the workload asks as often as it likes; the disk sees this many. */
	b = d->admit;
	rate = b ? CORDON_AUDIT_ADMITS_PER_S : CORDON_AUDIT_DNS_PER_S;
	a->dns_tokens[b] += (double)(now - a->dns_refill_us[b]) / 1e6 * rate;
	if (a->dns_tokens[b] > rate)
		a->dns_tokens[b] = rate;
	a->dns_refill_us[b] = now;
	if (a->dns_tokens[b] < 1) {
		a->dropped_dns++;
		return;
	}
	a->dns_tokens[b] -= 1;
	g = audit_begin(a, "dns");
	audit_kstr(g, "name", d->name);
	audit_kstr(g, "type", qtype_name(d->qtype, tbuf));
	audit_kstr(g, "decision", d->allowed ? "allowed" : "denied");
	audit_key(g, "addresses");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < d->n_addrs; i++)
		gen_addr(g, &d->addrs[i]);
	yajl_gen_array_close(g);
	audit_key(g, "ttl_s");
	if (d->n_addrs)
		yajl_gen_integer(g, d->ttl_s);
	else
		yajl_gen_null(g);
	audit_kint(g, "refused", (long long)d->n_refused);
	/* A write that fails is the next caller event's to report. */
	audit_end(a, g, AUDIT_WORKLOAD, &err);
}

int cordon_audit_denied(struct cordon_audit *a, const struct cordon_nft_drop *d, size_t n,
			uint64_t total_packets, uint64_t total_bytes, bool per_exec,
			struct cordon_error *err)
{
	yajl_gen g;

	if (!a)
		return 0;
	g = audit_begin(a, "denied");
	audit_kint(g, "packets", (long long)total_packets);
	audit_kint(g, "bytes", (long long)total_bytes);
	audit_key(g, "destinations");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n && i < CORDON_AUDIT_DROPS_MAX; i++) {
		yajl_gen_map_open(g);
		audit_key(g, "address");
		gen_addr(g, &d[i].addr);
		audit_kint(g, "packets", (long long)d[i].packets);
		audit_kint(g, "bytes", (long long)d[i].bytes);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	return audit_end(a, g, per_exec ? AUDIT_WORKLOAD : AUDIT_CALLER, err);
}

int cordon_audit_cleanup(struct cordon_audit *a, const char *const *removed, size_t n,
			 const char *failure, struct cordon_error *err)
{
	yajl_gen g;

	if (!a)
		return 0;
	g = audit_begin(a, "cleanup");
	gen_strings(g, "removed", removed, n);
	audit_kstr(g, "failure", failure);
	audit_key(g, "dropped");
	yajl_gen_map_open(g);
	audit_kint(g, "cap", (long long)audit_drops(a));
	audit_kint(g, "dns_rate", (long long)a->dropped_dns);
	yajl_gen_map_close(g);
	return audit_end(a, g, AUDIT_LAST, err);
}
