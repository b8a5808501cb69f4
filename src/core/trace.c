// SPDX-License-Identifier: Apache-2.0
/*
 * CORDON_TRACE=FILE: where a sandbox's start-up and teardown spend their
 * time. Every process of cordon's that takes part (the supervisor, the
 * init, the workload until its execve) appends one line per step as it
 * ends: "PHASE PROCESS NS", NS the CLOCK_MONOTONIC time in nanoseconds,
 * which all processes of the host share. One write(2) of a short line to
 * an O_APPEND file: lines of several processes never mix.
 * tests/bench/startup-phases.sh turns the lines into the phases' durations
 * and the critical path (docs/benchmarks.md).
 *
 * Off (the default), cordon_trace() is one test of cordon_trace_fd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cordon/core.h"

int cordon_trace_fd = -1;
static const char *trace_process = "supervisor";

int cordon_trace_open(struct cordon_error *err)
{
	const char *path = getenv("CORDON_TRACE");

	if (!path || !*path)
		return 0;
	cordon_trace_fd = cordon_append_open(path, "CORDON_TRACE", err);
	return cordon_trace_fd < 0 ? -1 : 0;
}

void cordon_trace_process(const char *name)
{
	trace_process = name;
}

void cordon_trace_write(const char *phase)
{
	struct timespec ts;
	char line[128];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof(line), "%s %s %llu\n", phase, trace_process,
		     (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
	if (n > 0 && (size_t)n < sizeof(line) && write(cordon_trace_fd, line, (size_t)n) < 0) {
		/* A trace that cannot be written is dropped, never the sandbox. */
	}
}
