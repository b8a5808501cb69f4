// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's audit events (docs/audit.md): create before anything
 * of the sandbox exists but its state directory (cordon_audit_start
 * writes it), and at the end the
 * workload's exec, the dropped packets, the cleanup, in that order; then
 * a state directory's log is kept in the audit directory, before the
 * state goes.
 */
#include <string.h>

#include "sandbox-internal.h"

int sandbox_audit_begin(struct supervisor *sv, struct cordon_error *err)
{
	memset(err, 0, sizeof(*err));
	sv->audit = cordon_audit_start(sv->spec, sv->state->dir_fd, err);
	if (!sv->audit)
		return err->code ? -1 : 0;
	sv->net.audit = sv->audit;
	return 0;
}

/* A failed write at the end fails the run as any failure of cordon's does (exit 125). */
static void end_failed(struct supervisor *sv, const struct cordon_error *err)
{
	struct cordon_result *res = sv->result;

	if (!res->failed) {
		res->failed = true;
		res->exit_code = CORDON_EXIT_FAILURE;
		res->error = *err;
	} else {
		cordon_error_print(err);
	}
}

static bool same_addr(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET ? 4 : 16) == 0;
}

static int more_drops(const void *a, const void *b)
{
	const struct cordon_nft_drop *x = a, *y = b;

	return x->packets != y->packets ? (x->packets < y->packets ? 1 : -1) :
	       x->bytes != y->bytes	? (x->bytes < y->bytes ? 1 : -1) :
					  0;
}

/* A counter since it was last seen (one that went down was made anew: all of it is new). */
static uint64_t since(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

/*
 * A session's denied event: the gateway's counters (drops, cumulative,
 * owned here) less what the previous event counted; the destinations with
 * a drop since, most first. A run has one, at its end: nothing seen before.
 */
static int audit_denied_since(struct supervisor *sv, struct cordon_nft_drop *drops, size_t n,
			      uint64_t packets, uint64_t bytes, bool per_exec,
			      struct cordon_error *err)
{
	_cleanup_free_ struct cordon_nft_drop *delta = cordon_xcalloc(n ? n : 1, sizeof(*delta));
	size_t k = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		uint64_t p = drops[i].packets, b = drops[i].bytes;

		for (size_t j = 0; j < sv->n_drops_seen; j++) {
			if (same_addr(&drops[i].addr, &sv->drops_seen[j].addr)) {
				p = since(p, sv->drops_seen[j].packets);
				b = since(b, sv->drops_seen[j].bytes);
				break;
			}
		}
		if (p == 0)
			continue;
		delta[k] = drops[i];
		delta[k].packets = p;
		delta[k].bytes = b;
		k++;
	}
	if (k)
		qsort(delta, k, sizeof(*delta), more_drops);
	r = cordon_audit_denied(sv->audit, delta, k, since(packets, sv->dropped_packets_seen),
				since(bytes, sv->dropped_bytes_seen), per_exec, err);
	free(sv->drops_seen);
	sv->drops_seen = drops;
	sv->n_drops_seen = n;
	sv->dropped_packets_seen = packets;
	sv->dropped_bytes_seen = bytes;
	return r;
}

void sandbox_audit_exec_end(struct supervisor *sv)
{
	struct cordon_nft_drop *drops = NULL;
	struct cordon_nft_counters c;
	struct cordon_error err = { 0 };
	size_t n = 0;

	if (!sv->audit || !sv->spec->net.enabled || !sv->net.nft || sv->child_done)
		return;
	/* Counters that cannot be read give no event, as at a run's end (egress.c). */
	if (cordon_nft_read_counters(sv->net.nft, &c, &err) < 0 ||
	    cordon_nft_read_drops(sv->net.nft, &drops, &n, &err) < 0) {
		cordon_debug("session %s: the gateway's counters: %s", sv->state->id, err.msg);
		return;
	}
	/* drops are taken over with those seen, written or not. */
	if (audit_denied_since(sv, drops, n, c.dropped_packets, c.dropped_bytes, true, &err) < 0) {
		end_failed(sv, &err);
		session_end(sv, "its exec's denied event could not be written");
	}
}

void sandbox_audit_end(struct supervisor *sv)
{
	const struct cordon_result *res = sv->result;
	const struct cordon_net_report *net = &res->net;
	bool state_goes = !sv->created || !sv->state->info.kept;
	struct cordon_error err = { 0 };
	const char *removed[4];
	size_t n = 0;

	if (!sv->audit) {
		free(TAKE_PTR(sv->net.drops));
		free(TAKE_PTR(sv->drops_seen));
		return;
	}
	if (cordon_audit_exec(sv->audit,
			      &(struct cordon_audit_exec){
				      .argv = (const char *const *)sv->spec->argv,
				      .exit_code = res->exit_code,
				      .signal = res->signal,
				      .timed_out = res->timed_out,
				      .duration_ms = res->duration_ms,
				      .output_counted = res->output_counted,
				      .stdout_bytes = res->stdout_bytes,
				      .stderr_bytes = res->stderr_bytes,
				      .truncated = res->output_truncated,
				      .error = res->failed ? res->error.msg : NULL,
			      },
			      &err) < 0)
		end_failed(sv, &err);
	/* The drops read at the end are taken over (and freed) with those seen. */
	if (sv->spec->net.enabled && net->dropped_known &&
	    audit_denied_since(sv, TAKE_PTR(sv->net.drops), sv->net.n_drops, net->dropped_packets,
			       net->dropped_bytes, false, &err) < 0)
		end_failed(sv, &err);
	removed[n++] = "processes";
	removed[n++] = "cgroups";
	if (sv->spec->net.enabled)
		removed[n++] = "network";
	if (state_goes)
		removed[n++] = "state";
	/* A kept container's cleanup is `cordon delete`'s to write. */
	if (state_goes && cordon_audit_cleanup(sv->audit, removed, n, NULL, &err) < 0)
		end_failed(sv, &err);
	free(TAKE_PTR(sv->net.drops));
	sv->net.n_drops = 0;
	free(TAKE_PTR(sv->drops_seen));
	sv->n_drops_seen = 0;
	cordon_audit_close(TAKE_PTR(sv->audit));
	sv->net.audit = NULL;
	if (state_goes && sv->state->dir_fd >= 0 &&
	    cordon_audit_keep(sv->state->dir_fd, sv->state->id, &err) < 0)
		cordon_warn("%s (the log is lost with the state)", err.msg);
}
