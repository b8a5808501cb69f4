// SPDX-License-Identifier: Apache-2.0
/*
 * The supervisor's audit events (docs/audit.md): create before anything
 * of the sandbox exists but its state directory, and at the end the
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
	return cordon_audit_create(sv->audit, sv->spec, err);
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
	if (sv->spec->net.enabled && net->dropped_known &&
	    cordon_audit_denied(sv->audit, sv->net.drops, sv->net.n_drops, net->dropped_packets,
				net->dropped_bytes, &err) < 0)
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
	cordon_audit_close(TAKE_PTR(sv->audit));
	sv->net.audit = NULL;
	if (state_goes && sv->state->dir_fd >= 0 &&
	    cordon_audit_keep(sv->state->dir_fd, sv->state->id, &err) < 0)
		cordon_warn("%s (the log is lost with the state)", err.msg);
}
