// SPDX-License-Identifier: Apache-2.0
/* --result-json: one object, written at exit, atomically. */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
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
 * Where the result goes, and why so: the supervisor (host root when
 * rootful) writes into a directory the workload may share, after the
 * workload could plant anything there. So:
 *   - every name is resolved relative to the directory fd opened when the
 *     flag was read (spec->result_dir_fd): a directory renamed or replaced
 *     by a symlink meanwhile does not move the write;
 *   - the file is made new, never opened by name: O_TMPFILE (no name at
 *     all), else O_CREAT|O_EXCL|O_NOFOLLOW under a random name; neither
 *     follows a planted symlink nor reuses a planted file;
 *   - it gets its name by renameat(), which replaces the directory entry
 *     itself: a final name turned into a symlink is replaced, its target
 *     untouched (a directory there makes it fail).
 * The file is created with the supervisor's own ids, as any file it makes.
 */
#define RESULT_TEMP_PREFIX ".cordon-result-"

/* A temp name nobody can plant ahead: 64 random bits. */
static int temp_name(char name[static sizeof(RESULT_TEMP_PREFIX) + 16])
{
	uint64_t bits;

	if (getrandom(&bits, sizeof(bits), 0) != (ssize_t)sizeof(bits))
		return -EIO;
	snprintf(name, sizeof(RESULT_TEMP_PREFIX) + 16, RESULT_TEMP_PREFIX "%016" PRIx64, bits);
	return 0;
}

static int write_body(int fd, const unsigned char *buf, size_t len)
{
	if (cordon_write_all(fd, buf, len) < 0 || cordon_write_all(fd, "\n", 1) < 0 ||
	    fsync(fd) < 0)
		return -errno;
	return 0;
}

/* The written O_TMPFILE file under a fresh random name in dir_fd. */
static int link_anonymous(int dir_fd, int fd, char *tmp)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	for (int tries = 0; tries < 8; tries++) {
		int r = temp_name(tmp);

		if (r < 0)
			return r;
		/* linkat never follows newpath: an existing name is EEXIST. */
		if (linkat(AT_FDCWD, proc, dir_fd, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Filesystems without O_TMPFILE: a new file under a fresh random name. */
static int create_named(int dir_fd, char *tmp)
{
	for (int tries = 0; tries < 8; tries++) {
		int r = temp_name(tmp), fd;

		if (r < 0)
			return r;
		fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The body into a new file of dir_fd, named tmp on success. */
static int write_temp(int dir_fd, const unsigned char *buf, size_t len, char *tmp)
{
	_cleanup_close_ int fd = openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	int r;

	if (fd >= 0) {
		r = write_body(fd, buf, len);
		return r < 0 ? r : link_anonymous(dir_fd, fd, tmp);
	}
	/* EISDIR: a kernel older than O_TMPFILE; EOPNOTSUPP: the filesystem lacks it. */
	if (errno != EOPNOTSUPP && errno != EISDIR)
		return -errno;
	fd = create_named(dir_fd, tmp);
	if (fd < 0)
		return fd;
	r = write_body(fd, buf, len);
	if (r < 0)
		unlinkat(dir_fd, tmp, 0);
	return r;
}

int cordon_result_write(const struct cordon_spec *spec, const struct cordon_result *res,
			struct cordon_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	char tmp[sizeof(RESULT_TEMP_PREFIX) + 16];
	const char *id = spec->id;
	const unsigned char *buf;
	size_t len;
	int r;

	assert(spec->result_dir_fd >= 0 && spec->result_name);
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
		sandbox_json_net_policy(g, res->net.spec);
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
	yajl_gen_get_buf(g, &buf, &len);
	r = write_temp(spec->result_dir_fd, buf, len, tmp);
	yajl_gen_free(g);
	if (r == 0 &&
	    renameat(spec->result_dir_fd, tmp, spec->result_dir_fd, spec->result_name) < 0) {
		r = -errno;
		unlinkat(spec->result_dir_fd, tmp, 0);
	}
	if (r < 0)
		return cordon_error_set(err, CORDON_E_RESULT, -r, "--result-json %s",
					spec->result_json);
	return 0;
}

void cordon_result_free(struct cordon_result *result)
{
	free(result->net.names);
	result->net.names = NULL;
	result->net.n_names = 0;
}
