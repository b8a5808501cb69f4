// SPDX-License-Identifier: Apache-2.0
/* --result-json: one object, written at exit, atomically. */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "cordon/sandbox.h"
#include "sandbox-internal.h"

static void gen_key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void gen_str(yajl_gen g, const char *k, const char *v)
{
	gen_key(g, k);
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void gen_int(yajl_gen g, const char *k, long long v)
{
	gen_key(g, k);
	yajl_gen_integer(g, v);
}

static void gen_bool(yajl_gen g, const char *k, bool v)
{
	gen_key(g, k);
	yajl_gen_bool(g, v);
}

static void gen_count(yajl_gen g, const char *k, bool known, uint64_t v)
{
	gen_key(g, k);
	if (known)
		yajl_gen_integer(g, (long long)v);
	else
		yajl_gen_null(g);
}

/*
 * Where the result goes: the supervisor (host root when rootful) writes
 * into a directory the workload may share, after the workload could
 * plant anything there. So every name is resolved relative to the
 * directory fd opened when the flag was read (spec->result_dir_fd), and
 * the file is made new and renamed over the final name
 * (cordon_file_replace_at): no planted symlink or file receives it. The
 * file is created with the supervisor's own ids, as any file it makes.
 */
#define RESULT_TEMP_PREFIX ".cordon-result-"

int cordon_result_write(const struct cordon_spec *spec, const struct cordon_result *res,
			struct cordon_error *err)
{
	const struct cordon_result_target to = {
		.dir_fd = spec->result_dir_fd,
		.name = spec->result_name,
		.path = spec->result_json,
	};

	return cordon_result_write_to(&to, spec->id, res, err);
}

int cordon_result_write_to(const struct cordon_result_target *to, const char *id,
			   const struct cordon_result *res, struct cordon_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	_cleanup_free_ char *body = NULL;
	const unsigned char *buf;
	size_t len;
	int r;

	assert(to->dir_fd >= 0 && to->name);
	yajl_gen_map_open(g);
	gen_str(g, "id", id ? id : "");
	gen_int(g, "exit_code", res->exit_code);
	gen_key(g, "signal");
	if (res->signal)
		yajl_gen_integer(g, res->signal);
	else
		yajl_gen_null(g);
	gen_bool(g, "timed_out", res->timed_out);
	gen_int(g, "duration_ms", (long long)res->duration_ms);
	gen_count(g, "stdout_bytes", res->output_counted, res->stdout_bytes);
	gen_count(g, "stderr_bytes", res->output_counted, res->stderr_bytes);
	gen_bool(g, "output_truncated", res->output_truncated);
	gen_bool(g, "limits_enforced", res->cgroup.enforced);
	gen_bool(g, "oom_killed", res->cgroup.oom_killed);
	gen_count(g, "memory_peak_bytes", res->cgroup.memory_peak_known, res->cgroup.memory_peak);
	gen_count(g, "cpu_usage_us", res->cgroup.cpu_usage_known, res->cgroup.cpu_usage_us);
	gen_count(g, "pids_peak", res->cgroup.pids_peak_known, res->cgroup.pids_peak);
	if (res->net.enabled && res->net.spec) {
		gen_key(g, "network");
		yajl_gen_map_open(g);
		sandbox_json_net_policy(g, res->net.spec, res->net.allowlist);
		sandbox_json_net_outcome(g, &res->net);
		yajl_gen_map_close(g);
	}
	if (res->failed) {
		char msg[1024];

		cordon_error_message(&res->error, msg, sizeof(msg));
		gen_key(g, "error");
		yajl_gen_map_open(g);
		gen_str(g, "code", cordon_code_name(res->error.code));
		gen_str(g, "message", msg);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	/* The object and a newline: one write, one file. */
	yajl_gen_get_buf(g, &buf, &len);
	body = cordon_xmalloc(len + 1);
	memcpy(body, buf, len);
	body[len] = '\n';
	yajl_gen_free(g);
	r = cordon_file_replace_at(to->dir_fd, to->name, RESULT_TEMP_PREFIX, body, len + 1, 0644,
				   CORDON_REPLACE_SYNC);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_RESULT, -r, "--result-json %s", to->path);
	return 0;
}

void cordon_result_free(struct cordon_result *result)
{
	free(result->net.names);
	result->net.names = NULL;
	cordon_allowlist_free(result->net.allowlist);
	result->net.allowlist = NULL;
	result->net.n_names = 0;
}
