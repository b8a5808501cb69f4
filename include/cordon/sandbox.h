/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox: one sandbox's lifecycle, from a validated spec to an exit
 * status: create the namespaces, drive the child through setup, supervise
 * the workload (signals, timeout, output), and tear everything down.
 */
#ifndef CORDON_SANDBOX_H
#define CORDON_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "cordon/cgroup.h"
#include "cordon/core.h"
#include "cordon/spec.h"

struct cordon_result {
	int exit_code;   /* what cordon exits with */
	int signal;      /* signal that ended the workload, 0 if none */
	bool timed_out;
	uint64_t duration_ms;
	bool output_counted; /* stdout/stderr went through cordon's pipes */
	uint64_t stdout_bytes;
	uint64_t stderr_bytes;
	bool output_truncated;
	struct cordon_cgroup_stats cgroup; /* limits_enforced, oom_killed, peaks */
	bool failed;     /* cordon itself failed (exit 125/126/127) */
	struct cordon_error error;
};

/* Run the sandbox to completion. Fills *result; returns the exit status. */
int cordon_sandbox_run(const struct cordon_spec *spec, struct cordon_result *result);

/*
 * --print-profile: the confinement a sandbox of this spec would get, as
 * one JSON object on stdout (ids, namespaces, capabilities, seccomp
 * digest, rlimits, masked paths), without creating anything.
 */
int cordon_sandbox_print_profile(const struct cordon_spec *spec, struct cordon_error *err);

/* Write --result-json (atomically: temp file, then rename). */
int cordon_result_write(const char *path, const char *id, const struct cordon_result *result,
			struct cordon_error *err);

#endif
