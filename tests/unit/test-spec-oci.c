// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the config.json parser (src/spec/oci*.c): real podman and
 * containerd configs, every refusal naming its JSON path, the default
 * config and the features document parsing back, and finalize on a bundle.
 */
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include "cordon/spec.h"
#include "unit.h"

#define CAP(n) (1ULL << (n))

static char *read_data(const char *name)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/oci/%s", UNIT_DATA_DIR, name);
	ck_assert_msg(cordon_read_file_at(AT_FDCWD, path, &text, &len) == 0, "reading %s", path);
	return text;
}

static void parse_ok(struct cordon_spec *spec, const char *bundle, const char *json)
{
	struct cordon_error err = { 0 };

	cordon_spec_init(spec);
	ck_assert_msg(cordon_spec_from_oci(spec, bundle, json, strlen(json), &err) == 0,
		      "refused: %s", err.msg);
	ck_assert_ptr_nonnull(spec->oci);
}

static rlim_t clamped(int resource, rlim_t want)
{
	struct rlimit cur;

	ck_assert_int_eq(getrlimit(resource, &cur), 0);
	return cur.rlim_max != RLIM_INFINITY && want > cur.rlim_max ? cur.rlim_max : want;
}

static bool has_warning(const struct cordon_oci *oci, const char *word)
{
	for (size_t i = 0; i < oci->n_warnings; i++)
		if (strstr(oci->warnings[i], word))
			return true;
	return false;
}

static const struct cordon_rlimit *rlimit_of(const struct cordon_spec *spec, int resource)
{
	for (size_t i = 0; i < spec->security.rlimits.n; i++)
		if (spec->security.rlimits.entry[i].resource == resource)
			return &spec->security.rlimits.entry[i];
	return NULL;
}

static const char *env_of(const struct cordon_spec *spec, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < spec->n_env; i++)
		if (strncmp(spec->env[i], name, n) == 0 && spec->env[i][n] == '=')
			return spec->env[i] + n + 1;
	return NULL;
}

/* --- real configs ------------------------------------------------------- */

START_TEST(podman_config)
{
	_cleanup_free_ char *json = read_data("podman.json");
	struct cordon_spec spec;
	const struct cordon_oci *oci;
	const struct cordon_oci_mount *m;
	const struct cordon_rlimit *rl;
	cordon_capset want = CAP(0) | CAP(1) | CAP(3) | CAP(4) | CAP(5) | CAP(10) | CAP(31) |
			     CAP(6) | CAP(8) | CAP(7) | CAP(18);

	parse_ok(&spec, "/run/bundle", json);
	oci = spec.oci;
	ck_assert_str_eq(oci->oci_version, "1.0.2-dev");
	ck_assert_str_eq(spec.argv[0], "/bin/sh");
	ck_assert_str_eq(spec.argv[2], "echo hello");
	ck_assert_ptr_null(spec.argv[3]);
	ck_assert_uint_eq(spec.n_env, 5);
	ck_assert_str_eq(env_of(&spec, "container"), "podman");
	ck_assert_str_eq(spec.cwd, "/");
	ck_assert_uint_eq(spec.uid, 0);
	ck_assert_uint_eq(spec.gid, 0);
	ck_assert(oci->has_umask);
	ck_assert_uint_eq(oci->umask, 022);
	ck_assert_uint_eq(oci->n_additional_gids, 11);
	ck_assert_uint_eq(oci->additional_gids[10], 27);
	ck_assert(oci->terminal);
	ck_assert(oci->has_console_size);
	ck_assert_uint_eq(oci->console_height, 50);
	ck_assert_uint_eq(oci->console_width, 187);
	ck_assert_uint_eq(oci->caps.bounding, want);
	ck_assert_uint_eq(oci->caps.effective, want);
	ck_assert_uint_eq(oci->caps.ambient, 0);
	ck_assert_uint_eq(spec.security.caps, want);
	/* As asked, or clamped to this process's own hard limit (see the clamp case). */
	rl = rlimit_of(&spec, RLIMIT_NOFILE);
	ck_assert_ptr_nonnull(rl);
	ck_assert_uint_eq(rl->limit.rlim_cur, clamped(RLIMIT_NOFILE, 1048576));
	rl = rlimit_of(&spec, RLIMIT_NPROC);
	ck_assert_uint_eq(rl->limit.rlim_max, clamped(RLIMIT_NPROC, 4194304));
	/* cordon's default core limit stays: the config does not name it. */
	ck_assert_ptr_nonnull(rlimit_of(&spec, RLIMIT_CORE));
	ck_assert_str_eq(oci->apparmor_profile, "containers-default-0.50.1");
	ck_assert(has_warning(oci, "process.apparmorProfile"));
	ck_assert(oci->has_oom_score_adj);
	ck_assert_int_eq(oci->oom_score_adj, 0);
	ck_assert_str_eq(spec.rootfs, "/var/lib/containers/storage/overlay/9f1c0e3b7a5d/merged");
	ck_assert(!oci->root_readonly);
	ck_assert_str_eq(spec.hostname, "5e4d2b8c9a1f");

	ck_assert_uint_eq(oci->n_mounts, 11);
	m = &oci->mounts[1];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_TMPFS);
	ck_assert_str_eq(m->destination, "/dev");
	ck_assert_uint_eq(m->flags, MS_NOSUID | MS_STRICTATIME);
	ck_assert_str_eq(m->data, "mode=755,size=65536k");
	m = &oci->mounts[2];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_SYSFS);
	ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY);
	ck_assert_ptr_null(m->data);
	m = &oci->mounts[3];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_DEVPTS);
	ck_assert_str_eq(m->data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
	m = &oci->mounts[8];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_BIND);
	ck_assert_str_eq(m->destination, "/dev/shm");
	ck_assert(!m->recursive);
	ck_assert_uint_eq(m->propagation, MS_PRIVATE | MS_REC);
	ck_assert_uint_eq(m->flags, MS_NOSUID | MS_NOEXEC | MS_NODEV);
	m = &oci->mounts[10];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_CGROUP);
	ck_assert(m->flags & MS_RDONLY);

	ck_assert_uint_eq(oci->n_hooks[CORDON_OCI_HOOK_CREATE_RUNTIME], 1);
	ck_assert_str_eq(oci->hooks[CORDON_OCI_HOOK_CREATE_RUNTIME][0].path,
			 "/usr/libexec/podman/netavark-hook");
	ck_assert_str_eq(oci->hooks[CORDON_OCI_HOOK_CREATE_RUNTIME][0].args[1], "setup");
	ck_assert_str_eq(oci->hooks[CORDON_OCI_HOOK_CREATE_RUNTIME][0].env[0],
			 "NETAVARK_CONFIG=/run/containers/networks");
	ck_assert_uint_eq(oci->hooks[CORDON_OCI_HOOK_CREATE_RUNTIME][0].timeout_s, 30);
	ck_assert_uint_eq(oci->n_hooks[CORDON_OCI_HOOK_POSTSTOP], 1);
	ck_assert_uint_eq(oci->hooks[CORDON_OCI_HOOK_POSTSTOP][0].timeout_s, 0);
	ck_assert_uint_eq(oci->n_hooks[CORDON_OCI_HOOK_PRESTART], 0);

	ck_assert_uint_eq(oci->n_annotations, 3);
	ck_assert_str_eq(oci->annotations[0], "io.container.manager");
	ck_assert_str_eq(oci->annotations[1], "libpod");
	ck_assert_uint_eq(oci->n_sysctl, 1);
	ck_assert_str_eq(oci->sysctl[0], "net.ipv4.ping_group_range");
	ck_assert_str_eq(oci->sysctl[1], "0 0");
	ck_assert(oci->has_resources);
	ck_assert_int_eq(oci->resources.pids_limit, 2048);
	ck_assert_uint_eq(spec.limits.pids, 2048);
	ck_assert_str_eq(oci->cgroups_path, "/libpod_parent/libpod-5e4d2b8c9a1f");
	ck_assert(oci->ns_listed[CORDON_OCI_NS_NETWORK]);
	ck_assert_str_eq(oci->ns_path[CORDON_OCI_NS_NETWORK], "/run/netns/netns-6b0a1c2d-3e4f");
	ck_assert(oci->ns_listed[CORDON_OCI_NS_PID]);
	ck_assert_ptr_null(oci->ns_path[CORDON_OCI_NS_PID]);
	ck_assert(!oci->ns_listed[CORDON_OCI_NS_USER]);
	/* A user namespace of cordon's own changes nothing the config relies on: no warning. */
	ck_assert(!has_warning(oci, "no 'user' entry"));
	ck_assert(oci->has_seccomp);
	ck_assert_int_eq(spec.security.seccomp, CORDON_SECCOMP_PROFILE);
	ck_assert_uint_eq(spec.security.n_filters, 1);
	ck_assert_uint_gt(spec.security.filters[0].len, 10);
	ck_assert_uint_eq(oci->n_masked_paths, 11);
	ck_assert_str_eq(oci->masked_paths[9], "/sys/fs/selinux");
	ck_assert_uint_eq(oci->n_readonly_paths, 6);
	ck_assert(spec.no_workspace);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(containerd_config)
{
	_cleanup_free_ char *json = read_data("containerd.json");
	struct cordon_spec spec;
	const struct cordon_oci *oci;
	const struct cordon_oci_mount *m;
	const struct cordon_resources *res;

	parse_ok(&spec, "/run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b", json);
	oci = spec.oci;
	ck_assert_str_eq(spec.rootfs,
			 "/run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b/rootfs");
	ck_assert(oci->root_readonly);
	ck_assert_uint_eq(spec.uid, 65535);
	ck_assert_uint_eq(spec.gid, 65535);
	ck_assert_uint_eq(oci->n_additional_gids, 1);
	ck_assert(!oci->has_umask);
	ck_assert_uint_eq(oci->caps.effective, CAP(10));
	ck_assert_uint_eq(oci->caps.permitted, CAP(10));
	ck_assert_uint_eq(__builtin_popcountll(oci->caps.bounding), 14);
	ck_assert(oci->no_new_privileges);
	ck_assert(!spec.security.new_privs_allowed);
	ck_assert_int_eq(oci->oom_score_adj, 969);
	ck_assert(!oci->terminal);
	ck_assert_str_eq(spec.argv[2], "daemon off;");

	ck_assert_uint_eq(oci->n_mounts, 12);
	m = &oci->mounts[6];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_BIND);
	ck_assert(m->recursive);
	ck_assert_uint_eq(m->clear, MS_RDONLY);
	ck_assert_uint_eq(m->flags, 0);
	m = &oci->mounts[11];
	ck_assert_str_eq(m->destination, "/var/run/secrets/kubernetes.io/serviceaccount");
	ck_assert_uint_eq(m->flags, MS_RDONLY);

	ck_assert_uint_eq(oci->n_annotations, 6);
	res = &oci->resources;
	ck_assert_uint_eq(res->n_devices, 3);
	ck_assert(!res->devices[0].allow);
	ck_assert_int_eq(res->devices[0].type, 'a');
	ck_assert_str_eq(res->devices[0].access, "rwm");
	ck_assert_int_eq(res->devices[1].type, 'c');
	ck_assert_int_eq(res->devices[1].major, 1);
	ck_assert_int_eq(res->devices[1].minor, 3);
	ck_assert_int_eq(res->devices[2].major, 136);
	ck_assert_int_eq(res->devices[2].minor, -1);
	ck_assert_int_eq(res->memory_limit, 134217728);
	ck_assert_uint_eq(spec.limits.memory, 134217728);
	ck_assert_uint_eq(spec.limits.memory_swap, 134217728);
	ck_assert_uint_eq(res->cpu_shares, 102);
	ck_assert_uint_eq(spec.limits.cpu_quota, 50000);
	ck_assert_uint_eq(spec.limits.cpu_period, 100000);
	ck_assert_int_eq(res->pids_limit, 0);
	ck_assert_uint_eq(spec.limits.pids, 0);
	ck_assert(has_warning(oci, "linux.resources.hugepageLimits: not applied"));
	ck_assert(!has_warning(oci, "unified"));
	ck_assert_str_eq(oci->ns_path[CORDON_OCI_NS_IPC], "/proc/4242/ns/ipc");
	ck_assert(!oci->ns_listed[CORDON_OCI_NS_CGROUP]);
	ck_assert_uint_eq(oci->n_devices, 1);
	ck_assert_str_eq(oci->devices[0].path, "/dev/fuse");
	ck_assert_int_eq(oci->devices[0].major, 10);
	ck_assert_int_eq(oci->devices[0].minor, 229);
	ck_assert(oci->devices[0].has_mode);
	ck_assert_uint_eq(oci->devices[0].file_mode, 0666);
	/* No linux.seccomp: cordon's default profile, not none. */
	ck_assert(!oci->has_seccomp);
	ck_assert_int_eq(spec.security.seccomp, CORDON_SECCOMP_DEFAULT);
	cordon_spec_free(&spec);
}
END_TEST

/* --- refusals ------------------------------------------------------------ */

/*
 * A config from parts: NULL takes the minimal valid default, "-" leaves
 * the member out, top adds members at the end.
 */
struct parts {
	const char *version, *process, *root, *mounts, *linux_, *top;
};

#define D_VERSION "\"1.2.0\""
#define D_PROCESS "{\"args\": [\"sh\"], \"cwd\": \"/\"}"
#define D_ROOT "{\"path\": \"rootfs\"}"
#define D_MOUNTS "[]"
#define D_NS \
	"[{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": \"uts\"}, {\"type\": \"user\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"}]"
#define D_LINUX "{\"namespaces\": " D_NS "}"
#define LINUX(extra) "{\"namespaces\": " D_NS ", " extra "}"
#define PROCESS(extra) "{\"args\": [\"sh\"], \"cwd\": \"/\", " extra "}"

static void member(char **out, const char *name, const char *value, const char *dflt)
{
	char *next;

	if (value && strcmp(value, "-") == 0)
		return;
	next = cordon_xasprintf("%s%s\"%s\": %s", *out, **out == '{' && !(*out)[1] ? "" : ", ",
				name, value ? value : dflt);
	free(*out);
	*out = next;
}

static char *build(const struct parts *p)
{
	char *json = cordon_xstrdup("{"), *done;

	member(&json, "ociVersion", p->version, D_VERSION);
	member(&json, "process", p->process, D_PROCESS);
	member(&json, "root", p->root, D_ROOT);
	member(&json, "mounts", p->mounts, D_MOUNTS);
	member(&json, "linux", p->linux_, D_LINUX);
	done = cordon_xasprintf("%s%s%s}", json, p->top ? ", " : "", p->top ? p->top : "");
	free(json);
	return done;
}

static const struct {
	struct parts p;
	const char *want;
} refusals[] = {
	/* ociVersion */
	{ { .version = "-" }, "ociVersion: required" },
	{ { .version = "1" }, "ociVersion: expected string" },
	{ { .version = "\"2.0.0\"" }, "ociVersion: 2.0.0 is not supported" },
	{ { .version = "\"1.3.0\"" }, "ociVersion: 1.3.0 is not supported" },
	{ { .version = "\"1.0\"" }, "ociVersion: '1.0' is not MAJOR.MINOR.PATCH" },
	{ { .version = "\"1.0.0x\"" }, "ociVersion: '1.0.0x' is not MAJOR.MINOR.PATCH" },
	/* process */
	{ { .process = "-" }, "process: required" },
	{ { .process = "[]" }, "process: expected object" },
	{ { .process = "{\"cwd\": \"/\"}" }, "process.args: required" },
	{ { .process = "{\"args\": [], \"cwd\": \"/\"}" }, "process.args: empty" },
	{ { .process = "{\"args\": \"sh\", \"cwd\": \"/\"}" }, "process.args: expected array" },
	{ { .process = "{\"args\": [\"sh\", 1], \"cwd\": \"/\"}" },
	  "process.args[1]: expected string" },
	{ { .process = "{\"args\": [\"\"], \"cwd\": \"/\"}" }, "process.args[0]: empty" },
	{ { .process = "{\"args\": [\"sh\"]}" }, "process.cwd: required" },
	{ { .process = "{\"args\": [\"sh\"], \"cwd\": \"tmp\"}" },
	  "process.cwd: must be absolute" },
	{ { .process = "{\"args\": [\"sh\"], \"cwd\": \"/a/../b\"}" },
	  "process.cwd: may not contain '..'" },
	{ { .process = PROCESS("\"env\": [\"X\"]") }, "process.env[0]: expected NAME=VALUE" },
	{ { .process = PROCESS("\"env\": [\"A=1\", \"=v\"]") },
	  "process.env[1]: expected NAME=VALUE" },
	{ { .process = PROCESS("\"env\": {}") }, "process.env: expected array" },
	{ { .process = PROCESS("\"user\": 0") }, "process.user: expected object" },
	{ { .process = PROCESS("\"user\": {\"uid\": \"0\", \"gid\": 0}") },
	  "process.user.uid: expected integer" },
	{ { .process = PROCESS("\"user\": {\"uid\": -1, \"gid\": 0}") },
	  "process.user.uid: -1 out of range" },
	{ { .process = PROCESS("\"user\": {\"uid\": 4294967295, \"gid\": 0}") },
	  "process.user.uid: 4294967295 out of range" },
	{ { .process = PROCESS("\"user\": {\"uid\": 1.5, \"gid\": 0}") },
	  "process.user.uid: expected integer" },
	{ { .process = PROCESS("\"user\": {\"uid\": 99999999999999999999, \"gid\": 0}") },
	  "process.user.uid: 99999999999999999999 out of range" },
	{ { .process = PROCESS("\"user\": {\"uid\": 0}") }, "process.user.gid: expected integer" },
	{ { .process = PROCESS("\"user\": {\"uid\": 0, \"gid\": 0, \"umask\": 512}") },
	  "process.user.umask: 512 out of range" },
	{ { .process =
		    PROCESS("\"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [1, \"x\"]}") },
	  "process.user.additionalGids[1]: expected integer" },
	{ { .process = PROCESS("\"capabilities\": []") }, "process.capabilities: expected object" },
	{ { .process = PROCESS("\"capabilities\": {\"bounding\": \"CAP_KILL\"}") },
	  "process.capabilities.bounding: expected array" },
	{ { .top = "\"annotations\": {\"run.cordon.no-new-privileges\": \"1\"}" },
	  "annotations.run.cordon.no-new-privileges: expected 'true' or 'false', got '1'" },
	{ { .process = PROCESS("\"capabilities\": {\"effective\": [\"CAP_KILL\"]}") },
	  "process.capabilities.effective: not a subset of permitted" },
	{ { .process = PROCESS("\"rlimits\": {}") }, "process.rlimits: expected array" },
	{ { .process = PROCESS(
		    "\"rlimits\": [{\"type\": \"RLIMIT_FOO\", \"soft\": 1, \"hard\": 1}]") },
	  "process.rlimits[0].type: unknown limit 'RLIMIT_FOO'" },
	{ { .process = PROCESS("\"rlimits\": [{\"type\": \"nofile\", \"soft\": 1, \"hard\": 1}]") },
	  "process.rlimits[0].type: unknown limit 'nofile'" },
	{ { .process = PROCESS(
		    "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 1}]") },
	  "process.rlimits[0]: soft limit 2 above hard limit 1" },
	{ { .process = PROCESS(
		    "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1}, {\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1}]") },
	  "process.rlimits[1].type: RLIMIT_NOFILE given twice" },
	{ { .process = PROCESS("\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"soft\": 1}]") },
	  "process.rlimits[0].hard: expected integer" },
	{ { .process = PROCESS(
		    "\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"soft\": -1, \"hard\": 1}]") },
	  "process.rlimits[0].soft: -1 out of range" },
	{ { .process = PROCESS(
		    "\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"soft\": 1, \"hard\": 18446744073709551616}]") },
	  "process.rlimits[0].hard: 18446744073709551616 out of range" },
	{ { .process = PROCESS("\"terminal\": \"yes\"") }, "process.terminal: expected boolean" },
	{ { .process = PROCESS("\"consoleSize\": {\"height\": 70000, \"width\": 80}") },
	  "process.consoleSize.height: 70000 out of range" },
	{ { .process = PROCESS("\"consoleSize\": {\"height\": 24}") },
	  "process.consoleSize.width: expected integer" },
	{ { .process = PROCESS("\"oomScoreAdj\": 1001") },
	  "process.oomScoreAdj: 1001 out of range" },
	{ { .process = PROCESS("\"oomScoreAdj\": -1001") },
	  "process.oomScoreAdj: -1001 out of range" },
	{ { .process = PROCESS("\"noNewPrivileges\": 1") },
	  "process.noNewPrivileges: expected boolean" },
	{ { .process = PROCESS("\"apparmorProfile\": 5") },
	  "process.apparmorProfile: expected string" },
	{ { .process = PROCESS("\"selinuxLabel\": []") }, "process.selinuxLabel: expected string" },
	{ { .process = PROCESS("\"scheduler\": []") }, "process.scheduler: expected object" },
	/* root, hostname */
	{ { .root = "-" }, "root: required" },
	{ { .root = "\"rootfs\"" }, "root: expected object" },
	{ { .root = "{\"readonly\": true}" }, "root.path: required" },
	{ { .root = "{\"path\": \"\"}" }, "root.path: empty" },
	{ { .root = "{\"path\": \"rootfs\", \"readonly\": \"yes\"}" },
	  "root.readonly: expected boolean" },
	{ { .top = "\"hostname\": 5" }, "hostname: expected string" },
	{ { .top = "\"hostname\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"" },
	  "hostname: longer than 64 bytes" },
	{ { .linux_ = "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\"}]}" },
	  "linux.namespaces: no 'pid' entry: sharing the runtime's pid namespace is not supported" },
	{ { .top = "\"hostname\": \"box\"", .linux_ = "{\"namespaces\": [{\"type\": \"mount\"}]}" },
	  "hostname: needs a uts namespace" },
	{ { .top = "\"domainname\": \"example.org\"",
	    .linux_ = "{\"namespaces\": [{\"type\": \"mount\"}]}" },
	  "domainname: needs a uts namespace" },
	/* mounts */
	{ { .mounts = "{}" }, "mounts: expected array" },
	{ { .mounts = "[5]" }, "mounts[0]: expected object" },
	{ { .mounts = "[{\"type\": \"tmpfs\"}]" }, "mounts[0].destination: required" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\"}, {\"destination\": \"tmp\", \"type\": \"tmpfs\"}]" },
	  "mounts[1].destination: must be absolute" },
	{ { .mounts = "[{\"destination\": \"/\", \"type\": \"tmpfs\"}]" },
	  "mounts[0].destination: cannot mount over /" },
	{ { .mounts = "[{\"destination\": \"/a/../b\", \"type\": \"tmpfs\"}]" },
	  "mounts[0].destination: may not contain '..'" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": 5}]" },
	  "mounts[0].type: expected string" },
	{ { .mounts =
		    "[{\"destination\": \"/proc/cpuinfo\", \"type\": \"bind\", \"source\": \"/s\"}]" },
	  "mounts[0].destination: /proc/cpuinfo: nothing may be mounted below /proc" },
	{ { .mounts = "[{\"destination\": \"/p2\", \"type\": \"proc\"}]" },
	  "mounts[0].type: proc is mounted at /proc only" },
	{ { .mounts = "[{\"destination\": \"/pts\", \"type\": \"devpts\"}]" },
	  "mounts[0].type: devpts is mounted at /dev/pts only" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": \"nfs\", \"source\": \"h:/e\"}]" },
	  "mounts[0].type: 'nfs' is not supported" },
	{ { .mounts = "[{\"destination\": \"/a\", \"source\": \"/s\"}]" },
	  "mounts[0].type: required unless options has bind or rbind" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": \"none\", \"source\": \"/s\"}]" },
	  "mounts[0].type: 'none' needs a bind or rbind option" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": \"bind\", \"options\": [\"bind\"]}]" },
	  "mounts[0].source: required for a bind mount" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": 1}]" },
	  "mounts[0].source: expected string" },
	{ { .mounts = "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": \"ro\"}]" },
	  "mounts[0].options: expected array" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"size=1m,mode=1777\"]}]" },
	  "mounts[0].options[0]: 'size=1m,mode=1777' is not one mount option" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"ro\", \"\"]}]" },
	  "mounts[0].options[1]: '' is not one mount option" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"bogus\"]}]" },
	  "mounts[0].options[0]: unknown option 'bogus' for tmpfs" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"sysfs\", \"options\": [\"size=1m\"]}]" },
	  "mounts[0].options[0]: unknown option 'size=1m' for sysfs" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/s\", \"options\": [\"rbind\", \"rpivate\"]}]" },
	  "mounts[0].options[1]: unknown option 'rpivate' for bind" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"idmap\"]}]" },
	  "mounts[0].options: idmap applies to bind mounts only" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"tmpfs\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}]" },
	  "mounts[0].uidMappings: only bind mounts can be idmapped" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/s\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}]" },
	  "mounts[0].gidMappings: required with uidMappings" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/s\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 0}], \"gidMappings\": []}]" },
	  "mounts[0].uidMappings[0].size: must be at least 1" },
	{ { .mounts =
		    "[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/s\", \"uidMappings\": [], \"gidMappings\": []}]" },
	  "mounts[0].uidMappings: an idmapped mount needs at least one range" },
	/* hooks, annotations */
	{ { .top = "\"hooks\": []" }, "hooks: expected object" },
	{ { .top = "\"hooks\": {\"prestart\": {}}" }, "hooks.prestart: expected array" },
	{ { .top = "\"hooks\": {\"poststart\": [{\"args\": [\"x\"]}]}" },
	  "hooks.poststart[0].path: required" },
	{ { .top = "\"hooks\": {\"createRuntime\": [{\"path\": \"/bin/true\"}, {\"path\": \"bin/true\"}]}" },
	  "hooks.createRuntime[1].path: must be absolute" },
	{ { .top = "\"hooks\": {\"poststop\": [{\"path\": \"/bin/true\", \"timeout\": 0}]}" },
	  "hooks.poststop[0].timeout: must be greater than zero" },
	{ { .top = "\"hooks\": {\"poststop\": [{\"path\": \"/bin/true\", \"timeout\": -1}]}" },
	  "hooks.poststop[0].timeout: -1 out of range" },
	{ { .top = "\"hooks\": {\"createContainer\": [{\"path\": \"/bin/true\", \"env\": [\"X\"]}]}" },
	  "hooks.createContainer[0].env[0]: expected NAME=VALUE" },
	{ { .top = "\"hooks\": {\"startContainer\": [{\"path\": \"/bin/true\", \"args\": [1]}]}" },
	  "hooks.startContainer[0].args[0]: expected string" },
	{ { .top = "\"annotations\": []" }, "annotations: expected object" },
	{ { .top = "\"annotations\": {\"a\": 1}" }, "annotations.a: expected string" },
	{ { .top = "\"annotations\": {\"\": \"x\"}" }, "annotations: empty key" },
	{ { .top = "\"annotations\": {\"a\": \"1\", \"a\": \"2\"}" },
	  "annotations.a: duplicate key" },
	/* linux */
	{ { .linux_ = "-" }, "linux: required" },
	{ { .linux_ = "[]" }, "linux: expected object" },
	{ { .linux_ = "{}" }, "linux.namespaces: required" },
	{ { .linux_ = "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"mount\"}]}" },
	  "linux.namespaces[1].type: 'mount' given twice" },
	{ { .linux_ = "{\"namespaces\": [{\"type\": \"bogus\"}]}" },
	  "linux.namespaces[0].type: unknown namespace type 'bogus'" },
	{ { .linux_ = "{\"namespaces\": [{\"path\": \"/proc/1/ns/net\"}]}" },
	  "linux.namespaces[0].type: expected string" },
	{ { .linux_ = "{\"namespaces\": [{\"type\": \"pid\"}]}" },
	  "linux.namespaces: a mount namespace is required" },
	{ { .linux_ =
		    "{\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\", \"path\": \"run/netns/x\"}]}" },
	  "linux.namespaces[1].path: must be absolute" },
	{ { .linux_ = "{\"namespaces\": [{\"type\": \"mount\", \"path\": \"/proc/1/ns/mnt\"}]}" },
	  "joining a mount namespace is not supported" },
	{ { .linux_ =
		    "{\"namespaces\": [{\"type\": \"mount\"}], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}" },
	  "linux.uidMappings: needs a user namespace" },
	{ { .linux_ = LINUX(
		    "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]") },
	  "linux.gidMappings: required with linux.uidMappings" },
	{ { .linux_ = LINUX(
		    "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]") },
	  "linux.uidMappings: required with linux.gidMappings" },
	{ { .linux_ = LINUX(
		    "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}, {\"containerID\": 1000, \"hostID\": 1000, \"size\": 1}]") },
	  "linux.uidMappings[1]: containerID range overlaps linux.uidMappings[0]" },
	{ { .linux_ = LINUX(
		    "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 10}, {\"containerID\": 10, \"hostID\": 100005, \"size\": 1}]") },
	  "linux.uidMappings[1]: hostID range overlaps linux.uidMappings[0]" },
	{ { .linux_ = LINUX(
		    "\"uidMappings\": [{\"containerID\": 4294967295, \"hostID\": 1, \"size\": 1}]") },
	  "linux.uidMappings[0].containerID: 4294967295 out of range" },
	{ { .linux_ = LINUX(
		    "\"uidMappings\": [{\"containerID\": 4294967290, \"hostID\": 1, \"size\": 10}]") },
	  "linux.uidMappings[0]: the range goes past id 4294967294" },
	{ { .linux_ = LINUX("\"gidMappings\": [{\"containerID\": 0, \"size\": 1}]") },
	  "linux.gidMappings[0].hostID: expected integer" },
	{ { .linux_ = LINUX("\"devices\": {}") }, "linux.devices: expected array" },
	{ { .linux_ = LINUX("\"devices\": [{\"type\": \"x\", \"path\": \"/dev/x\"}]") },
	  "linux.devices[0].type: 'x' is not c, b, u or p" },
	{ { .linux_ = LINUX(
		    "\"devices\": [{\"type\": \"c\", \"path\": \"dev/x\", \"major\": 1, \"minor\": 1}]") },
	  "linux.devices[0].path: must be absolute" },
	{ { .linux_ = LINUX("\"devices\": [{\"type\": \"c\", \"major\": 1, \"minor\": 1}]") },
	  "linux.devices[0].path: required" },
	{ { .linux_ =
		    LINUX("\"devices\": [{\"type\": \"c\", \"path\": \"/dev/x\", \"minor\": 1}]") },
	  "linux.devices[0].major: expected integer" },
	{ { .linux_ = LINUX(
		    "\"devices\": [{\"type\": \"b\", \"path\": \"/dev/x\", \"major\": 4096, \"minor\": 1}]") },
	  "linux.devices[0].major: 4096 out of range" },
	{ { .linux_ = LINUX(
		    "\"devices\": [{\"type\": \"b\", \"path\": \"/dev/x\", \"major\": 1, \"minor\": 1048576}]") },
	  "linux.devices[0].minor: 1048576 out of range" },
	{ { .linux_ = LINUX(
		    "\"devices\": [{\"type\": \"p\", \"path\": \"/dev/x\", \"fileMode\": 28672}]") },
	  "linux.devices[0].fileMode: 28672 out of range" },
	{ { .linux_ =
		    LINUX("\"devices\": [{\"type\": \"p\", \"path\": \"/dev/x\", \"uid\": -1}]") },
	  "linux.devices[0].uid: -1 out of range" },
	{ { .linux_ = LINUX(
		    "\"devices\": [{\"type\": \"p\", \"path\": \"/dev/x\"}, {\"type\": \"p\", \"path\": \"/dev//x\"}]") },
	  "linux.devices[1].path: /dev/x is also linux.devices[0]" },
	{ { .linux_ = LINUX("\"resources\": []") }, "linux.resources: expected object" },
	{ { .linux_ = LINUX("\"resources\": {\"devices\": [{\"access\": \"rwm\"}]}") },
	  "linux.resources.devices[0].allow: required" },
	{ { .linux_ = LINUX(
		    "\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}") },
	  "linux.resources.devices[0].access: 'rwx' is not a set of r, w and m" },
	{ { .linux_ = LINUX(
		    "\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rr\"}]}") },
	  "linux.resources.devices[0].access: 'rr'" },
	{ { .linux_ = LINUX("\"resources\": {\"devices\": [{\"allow\": true, \"type\": \"p\"}]}") },
	  "linux.resources.devices[0].type: 'p' is not a, c or b" },
	{ { .linux_ = LINUX(
		    "\"resources\": {\"devices\": [{\"allow\": true, \"type\": \"c\", \"major\": -2}]}") },
	  "linux.resources.devices[0].major: -2 out of range" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"limit\": \"1g\"}}") },
	  "linux.resources.memory.limit: expected integer" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"limit\": -2}}") },
	  "linux.resources.memory.limit: -2 out of range" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"limit\": 1000, \"swap\": 100}}") },
	  "linux.resources.memory.swap: 100 is below memory.limit 1000" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"swap\": 100}}") },
	  "linux.resources.memory.swap: needs memory.limit" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"swappiness\": \"x\"}}") },
	  "linux.resources.memory.swappiness: expected integer" },
	{ { .linux_ = LINUX("\"resources\": {\"unified\": {\"memory.high\": 1}}") },
	  "linux.resources.unified.memory.high: expected string" },
	{ { .linux_ = LINUX("\"resources\": {\"unified\": {\"../memory.high\": \"1\"}}") },
	  "linux.resources.unified: '../memory.high' is not a cgroup v2 file name" },
	{ { .linux_ = LINUX("\"resources\": {\"unified\": {\"NOT-A-KEY\": \"1\"}}") },
	  "linux.resources.unified: 'NOT-A-KEY' is not a cgroup v2 file name" },
	{ { .linux_ = LINUX("\"resources\": {\"unified\": {\"cgroup.procs\": \"1\"}}") },
	  "linux.resources.unified: cgroup.procs: the cgroup's core files are cordon's" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"swappiness\": 101}}") },
	  "linux.resources.memory.swappiness: 101 out of range" },
	{ { .linux_ = LINUX("\"resources\": {\"memory\": {\"disableOOMKiller\": 1}}") },
	  "linux.resources.memory.disableOOMKiller: expected boolean" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"shares\": 1}}") },
	  "linux.resources.cpu.shares: 1 out of range (2..262144)" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"quota\": 999}}") },
	  "linux.resources.cpu.quota: 999 below" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"quota\": 0}}") },
	  "linux.resources.cpu.quota: 0" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"period\": 100}}") },
	  "linux.resources.cpu.period: 100 out of range" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"cpus\": \"0-\"}}") },
	  "linux.resources.cpu.cpus: '0-' is not a list" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"cpus\": \"3-1\"}}") },
	  "linux.resources.cpu.cpus: '3-1' is not a list" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"mems\": \"0,,1\"}}") },
	  "linux.resources.cpu.mems: '0,,1' is not a list" },
	{ { .linux_ = LINUX("\"resources\": {\"cpu\": {\"idle\": 1.5}}") },
	  "linux.resources.cpu.idle: expected integer" },
	{ { .linux_ = LINUX("\"resources\": {\"pids\": {}}") },
	  "linux.resources.pids.limit: required" },
	{ { .linux_ = LINUX("\"resources\": {\"pids\": {\"limit\": -2}}") },
	  "linux.resources.pids.limit: -2 out of range" },
	{ { .linux_ = LINUX("\"resources\": {\"hugepageLimits\": {}}") },
	  "linux.resources.hugepageLimits: expected array" },
	{ { .linux_ = LINUX("\"resources\": {\"blockIO\": []}") },
	  "linux.resources.blockIO: expected object" },
	{ { .linux_ = LINUX("\"cgroupsPath\": 5") }, "linux.cgroupsPath: expected string" },
	{ { .linux_ = LINUX("\"cgroupsPath\": \"system.slice:cordon:x\"") },
	  "linux.cgroupsPath: 'system.slice:cordon:x': systemd cgroup paths are not supported" },
	{ { .linux_ = LINUX("\"cgroupsPath\": \"/a/../b\"") },
	  "linux.cgroupsPath: may not contain '..'" },
	{ { .linux_ = LINUX("\"cgroupsPath\": \"/a\\n/sys/fs/cgroup/pids/b\"") },
	  "linux.cgroupsPath: may not contain control characters" },
	{ { .linux_ = LINUX("\"cgroupsPath\": \"/\"") },
	  "linux.cgroupsPath: '/' names no cgroup of its own" },
	{ { .linux_ = LINUX("\"cgroupsPath\": \"./\"") },
	  "linux.cgroupsPath: './' names no cgroup of its own" },
	{ { .linux_ = LINUX("\"seccomp\": []") }, "linux.seccomp: expected object" },
	{ { .linux_ = LINUX("\"seccomp\": {}") }, "linux.seccomp.defaultAction: expected string" },
	{ { .linux_ = LINUX("\"seccomp\": {\"defaultAction\": \"SCMP_ACT_NOPE\"}") },
	  "linux.seccomp.defaultAction: unsupported action 'SCMP_ACT_NOPE'" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 5000}") },
	  "linux.seccomp.defaultErrnoRet: 5000 is not an errno" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_VAX\"]}") },
	  "linux.seccomp.architectures[0]: unknown" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": \"read\", \"action\": \"SCMP_ACT_ERRNO\"}]}") },
	  "linux.seccomp.syscalls[0].names: expected array" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}") },
	  "linux.seccomp.syscalls[0].action: unsupported action 'SCMP_ACT_NOTIFY'" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]}") },
	  "linux.seccomp.syscalls[0].args[0].index: 0-5" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_ALMOST\"}]}]}") },
	  "linux.seccomp.syscalls[0].args[0].op: unknown 'SCMP_CMP_ALMOST'" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/agent.sock\"}") },
	  "linux.seccomp.listenerPath: seccomp user notification is not supported" },
	{ { .linux_ = LINUX(
		    "\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_BOGUS\"]}") },
	  "linux.seccomp.flags[0]: unknown flag 'SECCOMP_FILTER_FLAG_BOGUS'" },
	{ { .linux_ = LINUX("\"maskedPaths\": [\"proc/kcore\"]") },
	  "linux.maskedPaths[0]: must be absolute" },
	{ { .linux_ = LINUX("\"maskedPaths\": [\"/proc/../etc\"]") },
	  "linux.maskedPaths[0]: may not contain '..'" },
	{ { .linux_ = LINUX("\"maskedPaths\": [\"//\"]") }, "linux.maskedPaths[0]: cannot be /" },
	{ { .linux_ = LINUX("\"readonlyPaths\": [\"/proc/sys\", 1]") },
	  "linux.readonlyPaths[1]: expected string" },
	{ { .linux_ = LINUX("\"rootfsPropagation\": \"sideways\"") },
	  "linux.rootfsPropagation: unknown 'sideways'" },
	{ { .linux_ = LINUX("\"sysctl\": []") }, "linux.sysctl: expected object" },
	{ { .linux_ = LINUX("\"sysctl\": {\"kernel.panic\": \"1\"}") },
	  "linux.sysctl.kernel.panic: not namespaced" },
	{ { .linux_ = LINUX("\"sysctl\": {\"net.ipv4.ip_forward\": 1}") },
	  "linux.sysctl.net.ipv4.ip_forward: expected string" },
	{ { .linux_ = LINUX("\"sysctl\": {\"../x\": \"1\"}") },
	  "linux.sysctl.../x: not a sysctl name" },
	{ { .linux_ =
		    "{\"namespaces\": [{\"type\": \"mount\"}], \"sysctl\": {\"net.ipv4.ip_forward\": \"1\"}}" },
	  "linux.sysctl.net.ipv4.ip_forward: needs the network namespace" },
	{ { .linux_ =
		    "{\"namespaces\": [{\"type\": \"mount\"}], \"sysctl\": {\"kernel.shmmax\": \"1\"}}" },
	  "linux.sysctl.kernel.shmmax: needs the ipc namespace" },
	/* The host name has its own field; a domain name the field contradicts (runc, crun). */
	{ { .linux_ = LINUX("\"sysctl\": {\"kernel.hostname\": \"x\"}") },
	  "linux.sysctl.kernel.hostname: refused: it conflicts with the config's hostname field" },
	{ { .top = "\"domainname\": \"a.example\"",
	    .linux_ = LINUX("\"sysctl\": {\"kernel.domainname\": \"b.example\"}") },
	  "linux.sysctl.kernel.domainname: 'b.example' conflicts with the config's domainname "
	  "'a.example'" },
	{ { .linux_ = LINUX("\"personality\": {\"domain\": \"LINUX64\"}") },
	  "linux.personality.domain: 'LINUX64' is not LINUX or LINUX32" },
	{ { .linux_ = LINUX("\"personality\": {\"flags\": []}") },
	  "linux.personality.domain: expected string" },
	{ { .linux_ = LINUX("\"personality\": {\"domain\": \"LINUX\", \"flags\": [\"x\"]}") },
	  "linux.personality.flags: no flag is supported" },
	{ { .linux_ = LINUX("\"intelRdt\": []") }, "linux.intelRdt: expected object" },
	{ { .linux_ = LINUX("\"mountLabel\": 5") }, "linux.mountLabel: expected string" },
};

START_TEST(refusal)
{
	_cleanup_free_ char *json = build(&refusals[_i].p);
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	cordon_spec_init(&spec);
	ck_assert_msg(cordon_spec_from_oci(&spec, "/b", json, strlen(json), &err) < 0,
		      "accepted: %s", json);
	ck_assert_msg(err.code == CORDON_E_SPEC, "code %s for %s", cordon_code_name(err.code),
		      json);
	ck_assert_msg(strstr(err.msg, refusals[_i].want), "message '%s', want '%s' (%s)", err.msg,
		      refusals[_i].want, json);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(not_json)
{
	static const char *const bad[] = {
		"", "{", "not json", "[]", "5", "null", "{\"ociVersion\": \"1.2.0\",}"
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_error err = { 0 };
		struct cordon_spec spec;

		cordon_spec_init(&spec);
		ck_assert_msg(cordon_spec_from_oci(&spec, "/b", bad[i], strlen(bad[i]), &err) < 0,
			      "'%s' accepted", bad[i]);
		ck_assert_int_eq(err.code, CORDON_E_SPEC);
		ck_assert_msg(strstr(err.msg, "config.json: "), "'%s': %s", bad[i], err.msg);
		ck_assert_ptr_null(strchr(err.msg, '\n'));
		cordon_spec_free(&spec);
	}
}
END_TEST

/* Every prefix of a real config is refused cleanly (and, under ASan, without a leak). */
START_TEST(truncated_configs)
{
	_cleanup_free_ char *json = read_data("podman.json");
	size_t len = strlen(json);

	while (len > 0 && (json[len - 1] == '\n' || json[len - 1] == '}'))
		len--; /* the last byte that may go while it still parses */
	for (size_t n = 0; n <= len; n++) {
		struct cordon_error err = { 0 };
		struct cordon_spec spec;

		cordon_spec_init(&spec);
		ck_assert_msg(cordon_spec_from_oci(&spec, "/b", json, n, &err) < 0,
			      "prefix of %zu bytes accepted", n);
		ck_assert_int_eq(err.code, CORDON_E_SPEC);
		cordon_spec_free(&spec);
	}
}
END_TEST

START_TEST(nul_byte_refused)
{
	static const char json[] = "{\"ociVersion\": \"1.2.0\"}\0{}";
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	cordon_spec_init(&spec);
	ck_assert_int_lt(cordon_spec_from_oci(&spec, "/b", json, sizeof(json) - 1, &err), 0);
	ck_assert_msg(strstr(err.msg, "NUL"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

/*
 * Nesting is bounded before yajl builds a tree (yajl_tree_free recursed
 * once per level: a config a million deep was a SIGSEGV), for the config,
 * an exec process document and an update's resources alike.
 */
START_TEST(deep_nesting_refused)
{
	const size_t n = 1000000;
	_cleanup_free_ char *deep = cordon_xmalloc(2 * n + 512);
	struct cordon_resources res;
	struct cordon_error err = { 0 };
	struct cordon_spec spec;
	size_t len;

	len = (size_t)sprintf(deep, "{\"x\": ");
	memset(deep + len, '[', n);
	memset(deep + len + n, ']', n);
	len += 2 * n;
	deep[len++] = '}';
	cordon_spec_init(&spec);
	ck_assert_int_lt(cordon_spec_from_oci(&spec, "/b", deep, len, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_SPEC);
	ck_assert_str_eq(err.msg, "config.json: nested deeper than 64 levels");
	ck_assert_int_lt(cordon_oci_resources_parse(deep, len, &res, &err), 0);
	ck_assert_str_eq(err.msg, "resources: nested deeper than 64 levels");
	cordon_spec_free(&spec);

	/* 64 levels: the config object, "x" and 62 more arrays, accepted as an unknown field. */
	cordon_spec_init(&spec);
	len = (size_t)sprintf(deep, "{\"ociVersion\": " D_VERSION ", \"process\": " D_PROCESS
				    ", \"root\": " D_ROOT ", \"linux\": " D_LINUX ", \"x\": ");
	memset(deep + len, '[', 63);
	memset(deep + len + 63, ']', 63);
	len += 126;
	deep[len++] = '}';
	ck_assert_msg(cordon_spec_from_oci(&spec, "/b", deep, len, &err) == 0, "%s", err.msg);
	/* An exec --process document one level over. */
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	ck_assert_int_lt(cordon_spec_process_from_json(&spec, deep, 130, &err), 0);
	ck_assert_str_eq(err.msg, "nested deeper than 64 levels");
	cordon_spec_free(&spec);
}
END_TEST

/* --- what is accepted --------------------------------------------------- */

START_TEST(unknown_fields_and_null_ignored)
{
	struct parts p = {
		.process = PROCESS("\"futureField\": {\"x\": [1, 2]}, \"user\": null, "
				   "\"commandLine\": \"sh\""),
		.linux_ = LINUX("\"futureLinux\": 5, \"seccomp\": null"),
		.top = "\"vendorThing\": [true], \"hostname\": null, \"annotations\": {}",
	};
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;

	parse_ok(&spec, "/b", json);
	ck_assert_ptr_null(spec.hostname);
	ck_assert(!spec.oci->has_seccomp);
	ck_assert_uint_eq(spec.oci->n_annotations, 0);
	ck_assert_uint_eq(spec.uid, 0);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(versions_accepted)
{
	static const char *const good[] = { "\"1.0.0\"", "\"1.0.2-dev\"",   "\"1.1.0\"",
					    "\"1.2.0\"", "\"1.2.1+build\"", "\"1.1.0-rc.1\"" };

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct parts p = { .version = good[i] };
		_cleanup_free_ char *json = build(&p);
		struct cordon_spec spec;

		parse_ok(&spec, "/b", json);
		cordon_spec_free(&spec);
	}
}
END_TEST

/* Rootful podman asks for NOFILE 1048576: above the caller's hard limit it is clamped. */
START_TEST(rlimit_above_callers_hard_limit_clamped)
{
	struct rlimit low = { 512, 1024 };
	struct parts p = {
		.process = PROCESS("\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1048576, "
				   "\"hard\": 1048576}, {\"type\": \"RLIMIT_NPROC\", \"soft\": 1, "
				   "\"hard\": 2}]"),
	};
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;
	bool nofile = false;

	/* This test runs in a forked process of its own: lowering our own limit is harmless. */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	parse_ok(&spec, "/b", json);
	ck_assert(has_warning(spec.oci, "process.rlimits[0]: RLIMIT_NOFILE hard limit 1048576 "
					"clamped to the caller's hard limit 1024"));
	ck_assert(!has_warning(spec.oci, "process.rlimits[1]"));
	for (size_t i = 0; i < spec.security.rlimits.n; i++) {
		const struct cordon_rlimit *r = &spec.security.rlimits.entry[i];

		if (r->resource != RLIMIT_NOFILE)
			continue;
		nofile = true;
		ck_assert_uint_eq(r->limit.rlim_cur, 1024);
		ck_assert_uint_eq(r->limit.rlim_max, 1024);
	}
	ck_assert(nofile);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(warnings_recorded)
{
	struct parts p = {
		.process = PROCESS("\"apparmorProfile\": \"\", \"selinuxLabel\": "
				   "\"system_u:system_r:container_t:s0\", \"scheduler\": "
				   "{\"policy\": \"SCHED_OTHER\"}"),
		.mounts = "[{\"destination\": \"/run\", \"type\": \"tmpfs\", \"options\": "
			  "[\"tmpcopyup\", \"size=1m\"]}]",
		.linux_ = LINUX("\"mountLabel\": \"system_u:object_r:container_file_t:s0\", "
				"\"netDevices\": {\"eth1\": {}}, \"resources\": {\"blockIO\": "
				"{\"weight\": 10}, \"unified\": {\"memory.high\": \"1G\"}, "
				"\"memory\": {\"swappiness\": 0, \"disableOOMKiller\": false}}"),
	};
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;
	const struct cordon_oci *oci;

	parse_ok(&spec, "/b", json);
	oci = spec.oci;
	ck_assert(!has_warning(oci, "apparmorProfile")); /* empty: nothing asked */
	ck_assert(has_warning(oci, "process.selinuxLabel 'system_u:system_r:container_t:s0'"));
	ck_assert(has_warning(oci, "process.scheduler: not applied"));
	ck_assert(has_warning(oci, "mounts[0].options[0]: tmpcopyup"));
	ck_assert(has_warning(oci, "linux.mountLabel"));
	ck_assert(has_warning(oci, "linux.netDevices: not applied"));
	ck_assert(has_warning(oci, "linux.resources.blockIO: not applied"));
	/* unified is applied (cgroup/resources.c). */
	ck_assert(!has_warning(oci, "linux.resources.unified"));
	ck_assert_uint_eq(oci->resources.n_unified, 1);
	ck_assert_str_eq(oci->resources.unified[0], "memory.high");
	ck_assert_str_eq(oci->resources.unified[1], "1G");
	/* Applied now (v1), an error where the kernel has no knob: no warning. */
	ck_assert(!has_warning(oci, "swappiness"));
	ck_assert(!has_warning(oci, "disableOOMKiller"));
	ck_assert(oci->resources.has_swappiness);
	ck_assert_uint_eq(oci->resources.memory_swappiness, 0);
	ck_assert(!oci->resources.disable_oom_killer);
	ck_assert(!has_warning(oci, "no 'mount' entry"));
	ck_assert_str_eq(oci->mounts[0].data, "size=1m");
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(mount_options)
{
	struct parts p = {
		.mounts =
			"["
			"{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"data\", "
			"\"options\": [\"rbind\", \"ro\", \"rw\", \"nosuid\", \"rro\", \"shared\", \"rslave\"]},"
			"{\"destination\": \"/b//c/.\", \"source\": \"/srv\", \"options\": [\"bind\", \"idmap\"]},"
			"{\"destination\": \"/c\", \"type\": \"none\", \"source\": \"/srv\", \"options\": [\"rbind\"], "
			"\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}], "
			"\"gidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]},"
			"{\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"/sys\", \"options\": [\"rbind\", \"ro\"]},"
			"{\"destination\": \"/proc\", \"type\": \"proc\", \"options\": [\"hidepid=2\", \"subset=pid\"]},"
			"{\"destination\": \"/sys/fs/cgroup\", \"type\": \"cgroup2\", \"source\": \"cgroup2\"},"
			"{\"destination\": \"/d\", \"type\": \"tmpfs\", \"source\": \"/srv\", \"options\": [\"size=1m\", \"rbind\", \"mode=755\"]}"
			"]",
	};
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;
	const struct cordon_oci_mount *m;

	parse_ok(&spec, "/bundle", json);
	m = &spec.oci->mounts[0];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_BIND);
	ck_assert_str_eq(m->source, "/bundle/data"); /* relative to the bundle */
	ck_assert(m->recursive);
	ck_assert(m->recursive_ro);
	ck_assert_uint_eq(m->flags, MS_NOSUID); /* ro then rw: rw wins */
	ck_assert_uint_eq(m->clear, MS_RDONLY);
	ck_assert_uint_eq(m->propagation, MS_SLAVE | MS_REC); /* the last one */
	m = &spec.oci->mounts[1];
	ck_assert_str_eq(m->destination, "/b/c");
	ck_assert(!m->recursive);
	ck_assert(m->idmap);
	ck_assert_uint_eq(m->n_uid_map, 0);
	m = &spec.oci->mounts[2];
	ck_assert(m->idmap);
	ck_assert_uint_eq(m->n_uid_map, 1);
	ck_assert_uint_eq(m->uid_map[0].host_id, 100000);
	ck_assert_uint_eq(m->gid_map[0].size, 65536);
	m = &spec.oci->mounts[3];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_BIND); /* rbind makes it a bind */
	ck_assert_str_eq(m->source, "/sys");
	m = &spec.oci->mounts[4];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_PROC);
	ck_assert_str_eq(m->data, "hidepid=2,subset=pid");
	ck_assert_int_eq(spec.oci->mounts[5].kind, CORDON_OCI_MOUNT_CGROUP);
	/* A filesystem's options on a bind are ignored, as mount(2) ignores them. */
	m = &spec.oci->mounts[6];
	ck_assert_int_eq(m->kind, CORDON_OCI_MOUNT_BIND);
	ck_assert_ptr_null(m->data);
	cordon_spec_free(&spec);
}
END_TEST

/* `runc spec` writes ambient without inheritable: not raised, with a warning (as runc). */
START_TEST(process_ambient_not_inheritable)
{
	struct parts p = { .process = PROCESS(
				   "\"capabilities\": {\"permitted\": [\"CAP_KILL\", \"CAP_CHOWN\"], "
				   "\"inheritable\": [\"CAP_CHOWN\"], "
				   "\"ambient\": [\"CAP_KILL\", \"CAP_CHOWN\"]}") };
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;

	parse_ok(&spec, "/b", json);
	ck_assert_uint_eq(spec.oci->caps.ambient, CAP(0));
	ck_assert(has_warning(spec.oci, "process.capabilities.ambient"));
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(process_details)
{
	struct parts p = {
		.process = PROCESS(
			"\"env\": [\"A=1\", \"B=\", \"A=2\"], "
			"\"user\": {\"uid\": 4294967294, \"gid\": 1000, \"umask\": 0, \"additionalGids\": []}, "
			"\"capabilities\": {\"bounding\": [\"CAP_CHECKPOINT_RESTORE\", \"CAP_CHOWN\"], "
			"\"permitted\": [\"CAP_CHOWN\"], \"inheritable\": [\"CAP_CHOWN\"], "
			"\"effective\": [\"CAP_CHOWN\"], \"ambient\": [\"CAP_CHOWN\"]}, "
			"\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"soft\": 1024, \"hard\": 18446744073709551615}, "
			"{\"type\": \"RLIMIT_MEMLOCK\", \"soft\": 0, \"hard\": 0}], "
			"\"oomScoreAdj\": -1000"),
		.linux_ = LINUX(
			"\"personality\": {\"domain\": \"LINUX32\"}, \"rootfsPropagation\": \"rslave\", "
			"\"sysctl\": {\"net/ipv4/ip_unprivileged_port_start\": \"0\", \"kernel.shmmax\": \"1\", "
			"\"fs.mqueue.msg_max\": \"20\", \"kernel.domainname\": \"example.org\"}, "
			"\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}, "
			"{\"containerID\": 1, \"hostID\": 100000, \"size\": 65535}], "
			"\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]"),
		.top = "\"domainname\": \"example.org\"",
	};
	_cleanup_free_ char *json = build(&p);
	struct cordon_spec spec;
	const struct cordon_oci *oci;
	const struct cordon_rlimit *rl;

	parse_ok(&spec, "/b", json);
	oci = spec.oci;
	ck_assert_uint_eq(spec.n_env, 2); /* A=2 replaced A=1 */
	ck_assert_str_eq(env_of(&spec, "A"), "2");
	ck_assert_str_eq(env_of(&spec, "B"), "");
	ck_assert_uint_eq(spec.uid, 4294967294u);
	ck_assert_uint_eq(spec.gid, 1000);
	ck_assert(oci->has_umask);
	ck_assert_uint_eq(oci->umask, 0);
	ck_assert_uint_eq(oci->n_additional_gids, 0);
	ck_assert_uint_eq(oci->caps.bounding, CAP(40) | CAP(0));
	ck_assert_uint_eq(oci->caps.ambient, CAP(0));
	rl = rlimit_of(&spec, RLIMIT_CORE);
	ck_assert_uint_eq(rl->limit.rlim_cur, 1024);
	ck_assert(rl->limit.rlim_max == RLIM_INFINITY);
	ck_assert_ptr_nonnull(rlimit_of(&spec, RLIMIT_MEMLOCK));
	ck_assert_int_eq(oci->oom_score_adj, -1000);
	ck_assert(oci->has_personality);
	ck_assert_uint_eq(oci->personality, PER_LINUX32);
	ck_assert_uint_eq(oci->rootfs_propagation, MS_SLAVE | MS_REC);
	ck_assert_uint_eq(oci->n_sysctl, 4);
	ck_assert_str_eq(oci->sysctl[0], "net.ipv4.ip_unprivileged_port_start");
	ck_assert_uint_eq(oci->n_uid_map, 2);
	ck_assert_uint_eq(oci->uid_map[1].container_id, 1);
	ck_assert_uint_eq(oci->n_gid_map, 1);
	ck_assert_str_eq(oci->domainname, "example.org");
	cordon_spec_free(&spec);
}
END_TEST

/* --- cordon spec and cordon features ------------------------------------- */

static void default_config_check(bool rootless)
{
	_cleanup_free_ char *json = cordon_oci_default_config(rootless, 1000, 1001);
	struct cordon_spec spec;
	const struct cordon_oci *oci;
	cordon_capset want = CAP(29) | CAP(5) | CAP(10);

	parse_ok(&spec, "/bundle", json);
	oci = spec.oci;
	ck_assert_uint_eq(oci->n_warnings, 0);
	ck_assert_str_eq(oci->oci_version, CORDON_OCI_VERSION);
	ck_assert_str_eq(spec.argv[0], "sh");
	ck_assert_str_eq(env_of(&spec, "PATH"), CORDON_DEFAULT_PATH);
	ck_assert_str_eq(spec.rootfs, "/bundle/rootfs");
	ck_assert(oci->root_readonly);
	ck_assert(oci->terminal);
	ck_assert(oci->no_new_privileges);
	ck_assert_uint_eq(oci->caps.bounding, want);
	ck_assert_uint_eq(oci->caps.permitted, want);
	ck_assert_uint_eq(oci->caps.inheritable, 0);
	ck_assert_uint_eq(rlimit_of(&spec, RLIMIT_NOFILE)->limit.rlim_max, 4096);
	ck_assert_str_eq(spec.hostname, CORDON_DEFAULT_HOSTNAME);
	ck_assert_uint_eq(oci->n_mounts, 8);
	ck_assert_str_eq(oci->mounts[7].destination, "/tmp");
	for (size_t k = 0; k < CORDON_OCI_NS_COUNT; k++)
		ck_assert(oci->ns_listed[k] == (k != CORDON_OCI_NS_TIME));
	ck_assert_uint_gt(oci->n_masked_paths, 5);
	ck_assert_str_eq(oci->masked_paths[0], "/proc/acpi");
	ck_assert_uint_gt(oci->n_readonly_paths, 3);
	if (rootless) {
		ck_assert_uint_eq(oci->n_uid_map, 1);
		ck_assert_uint_eq(oci->uid_map[0].host_id, 1000);
		ck_assert_uint_eq(oci->gid_map[0].host_id, 1001);
		ck_assert(!strstr(oci->mounts[2].data, "gid=5"));
		ck_assert(!oci->has_resources);
	} else {
		ck_assert_uint_eq(oci->n_uid_map, 0);
		ck_assert(strstr(oci->mounts[2].data, "gid=5"));
		ck_assert(oci->has_resources);
		ck_assert_uint_eq(oci->resources.n_devices, 1);
		ck_assert(!oci->resources.devices[0].allow);
		ck_assert_uint_eq(spec.limits.pids, CORDON_PIDS_DEFAULT);
	}
	cordon_spec_free(&spec);
}

START_TEST(default_config_round_trip)
{
	default_config_check(false);
	default_config_check(true);
}
END_TEST

static bool array_has(yajl_val arr, const char *s)
{
	for (size_t i = 0; arr && YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++)
		if (YAJL_IS_STRING(arr->u.array.values[i]) &&
		    strcmp(arr->u.array.values[i]->u.string, s) == 0)
			return true;
	return false;
}

START_TEST(features_document)
{
	_cleanup_free_ char *json = cordon_oci_features();
	char ebuf[128];
	yajl_val tree = yajl_tree_parse(json, ebuf, sizeof(ebuf));
	const char *min[] = { "ociVersionMin", NULL }, *max[] = { "ociVersionMax", NULL };
	const char *hooks[] = { "hooks", NULL }, *opts[] = { "mountOptions", NULL };
	const char *ns[] = { "linux", "namespaces", NULL },
		   *caps[] = { "linux", "capabilities", NULL };
	const char *act[] = { "linux", "seccomp", "actions", NULL };
	const char *ops[] = { "linux", "seccomp", "operators", NULL };
	const char *v2[] = { "linux", "cgroup", "v2", NULL };
	const char *sd[] = { "linux", "cgroup", "systemd", NULL };
	const char *idmap[] = { "linux", "mountExtensions", "idmap", "enabled", NULL };
	const char *aa[] = { "linux", "apparmor", "enabled", NULL };

	ck_assert_msg(tree != NULL, "%s", ebuf);
	ck_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(tree, min, yajl_t_string)), "1.0.0");
	ck_assert_str_eq(YAJL_GET_STRING(yajl_tree_get(tree, max, yajl_t_string)),
			 CORDON_OCI_VERSION);
	ck_assert(array_has(yajl_tree_get(tree, hooks, yajl_t_array), "createContainer"));
	ck_assert(array_has(yajl_tree_get(tree, opts, yajl_t_array), "rbind"));
	ck_assert(array_has(yajl_tree_get(tree, opts, yajl_t_array), "rro"));
	ck_assert(array_has(yajl_tree_get(tree, ns, yajl_t_array), "user"));
	ck_assert(!array_has(yajl_tree_get(tree, ns, yajl_t_array), "time"));
	ck_assert(array_has(yajl_tree_get(tree, caps, yajl_t_array), "CAP_CHECKPOINT_RESTORE"));
	ck_assert(array_has(yajl_tree_get(tree, act, yajl_t_array), "SCMP_ACT_ERRNO"));
	ck_assert(!array_has(yajl_tree_get(tree, act, yajl_t_array), "SCMP_ACT_NOTIFY"));
	ck_assert(array_has(yajl_tree_get(tree, ops, yajl_t_array), "SCMP_CMP_MASKED_EQ"));
	ck_assert(YAJL_IS_TRUE(yajl_tree_get(tree, v2, yajl_t_any)));
	ck_assert(YAJL_IS_FALSE(yajl_tree_get(tree, sd, yajl_t_any)));
	ck_assert(YAJL_IS_TRUE(yajl_tree_get(tree, idmap, yajl_t_any)));
	ck_assert(YAJL_IS_FALSE(yajl_tree_get(tree, aa, yajl_t_any)));
	yajl_tree_free(tree);
}
END_TEST

/* Every mount option the features document lists is one the parser takes. */
START_TEST(features_mount_options_parse)
{
	_cleanup_free_ char *features = cordon_oci_features();
	char ebuf[128];
	yajl_val tree = yajl_tree_parse(features, ebuf, sizeof(ebuf));
	const char *opts[] = { "mountOptions", NULL };
	yajl_val list = yajl_tree_get(tree, opts, yajl_t_array);

	ck_assert_ptr_nonnull(list);
	for (size_t i = 0; i < list->u.array.len; i++) {
		_cleanup_free_ char *mounts = cordon_xasprintf(
			"[{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"/s\", "
			"\"options\": [\"bind\", \"%s\"]}]",
			list->u.array.values[i]->u.string);
		struct parts p = { .mounts = mounts };
		_cleanup_free_ char *json = build(&p);
		struct cordon_spec spec;

		parse_ok(&spec, "/b", json);
		cordon_spec_free(&spec);
	}
	yajl_tree_free(tree);
}
END_TEST

/* --- bundles and finalize -------------------------------------------------- */

static char *tmp;

static void bundle_setup(void)
{
	tmp = unit_tmpdir();
}

static void bundle_teardown(void)
{
	unit_rm_rf(tmp);
	free(tmp);
	tmp = NULL;
}

START_TEST(bundle_read_and_finalize)
{
	_cleanup_free_ char *json = cordon_oci_default_config(false, 0, 0);
	_cleanup_free_ char *cfg = unit_write(tmp, "config.json", json);
	_cleanup_free_ char *pw =
		unit_write(tmp, "rootfs/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
	_cleanup_free_ char *want_rootfs = cordon_xasprintf("%s/rootfs", tmp);
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	/* Written for their side effect; kept to be freed. */
	(void)cfg;
	(void)pw;

	cordon_spec_init(&spec);
	ck_assert_msg(cordon_spec_from_bundle(&spec, tmp, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(spec.oci->bundle, tmp);
	ck_assert_msg(cordon_spec_finalize(&spec, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(spec.rootfs, want_rootfs);
	ck_assert_ptr_nonnull(spec.id);
	ck_assert_ptr_null(spec.workspace);
	ck_assert_str_eq(env_of(&spec, "HOME"), "/root");
	ck_assert_str_eq(spec.home, "/root");
	/* The config's environment, not cordon run's defaults. */
	ck_assert_ptr_null(env_of(&spec, "container"));
	ck_assert_ptr_null(env_of(&spec, "HOSTNAME"));
	ck_assert_int_eq(spec.security.seccomp, CORDON_SECCOMP_DEFAULT);
	ck_assert_uint_gt(spec.security.n_filters, 0);
	ck_assert_uint_eq(spec.uid, 0);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(finalize_hostname_and_bind_sources)
{
	struct parts p = {
		.process = PROCESS(
			"\"env\": [\"HOME=/home/app\"], \"user\": {\"uid\": 1000, \"gid\": 1000}"),
		.mounts = "[{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"data\", "
			  "\"options\": [\"rbind\", \"ro\"]}]",
	};
	_cleanup_free_ char *json = build(&p);
	_cleanup_free_ char *want = cordon_xasprintf("%s/data", tmp);
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	unit_mkdirs(tmp, "rootfs");
	parse_ok(&spec, tmp, json);
	ck_assert_int_lt(cordon_spec_finalize(&spec, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_PATH);
	ck_assert_msg(strstr(err.msg, "mounts[0].source"), "%s", err.msg);
	cordon_spec_free(&spec);

	unit_mkdirs(tmp, "data");
	parse_ok(&spec, tmp, json);
	ck_assert_msg(cordon_spec_finalize(&spec, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(spec.oci->mounts[0].source, want);
	/* No hostname in the config: never the host's. */
	ck_assert_str_eq(spec.hostname, CORDON_DEFAULT_HOSTNAME);
	ck_assert_str_eq(spec.home, "/home/app");
	ck_assert_uint_eq(spec.n_env, 1);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(finalize_capability_policy)
{
	/* A config's capabilities are the launcher's: SYS_ADMIN is granted... */
	struct parts p = {
		.process = PROCESS("\"capabilities\": {\"bounding\": [\"CAP_KILL\", \"CAP_NOPE\"], "
				   "\"permitted\": [\"CAP_KILL\", \"CAP_SYS_ADMIN\", \"kill\"]}"),
	};
	struct parts net = {
		.process = p.process,
		.top = "\"annotations\": {\"run.cordon.net.allow\": \"192.0.2.1\"}",
	};
	_cleanup_free_ char *json = build(&p), *json_net = build(&net);
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	unit_mkdirs(tmp, "rootfs");
	parse_ok(&spec, tmp, json);
	ck_assert_int_eq(cordon_spec_finalize(&spec, &err), 0);
	ck_assert(spec.security.config_sets);
	ck_assert_uint_eq(spec.security.permitted, CAP(5) | CAP(21));
	ck_assert_uint_eq(spec.security.caps, CAP(5));
	/* ...and names cordon does not know are warnings, not errors. */
	ck_assert_uint_ge(spec.oci->n_warnings, 2);
	ck_assert_msg(strstr(spec.oci->warnings[0], "bounding[1]: unknown capability 'CAP_NOPE'"),
		      "%s", spec.oci->warnings[0]);
	ck_assert_msg(strstr(spec.oci->warnings[1], "permitted[2]: unknown capability 'kill'"),
		      "%s", spec.oci->warnings[1]);
	cordon_spec_free(&spec);
	/* Under cordon's network policy, the safe set and SETFCAP only, as with --cap-add. */
	parse_ok(&spec, tmp, json_net);
	ck_assert_int_lt(cordon_spec_finalize(&spec, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_SPEC);
	ck_assert_msg(strstr(err.msg, "process.capabilities.permitted: CAP_SYS_ADMIN is refused"),
		      "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(finalize_missing_root)
{
	_cleanup_free_ char *json = cordon_oci_default_config(true, 1000, 1000);
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	parse_ok(&spec, tmp, json);
	ck_assert_int_lt(cordon_spec_finalize(&spec, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_ROOTFS);
	ck_assert_msg(strstr(err.msg, "root.path"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(bundle_errors)
{
	_cleanup_free_ char *missing = cordon_xasprintf("%s/nope", tmp);
	_cleanup_free_ char *dir_cfg = cordon_xasprintf("%s/b1", tmp);
	_cleanup_free_ char *fifo_cfg = cordon_xasprintf("%s/b2", tmp);
	_cleanup_free_ char *fifo = cordon_xasprintf("%s/b2/config.json", tmp);
	_cleanup_free_ char *bad_cfg = cordon_xasprintf("%s/b3", tmp);
	_cleanup_free_ char *f = unit_write(
		tmp, "b3/config.json",
		"{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"r\"}, \"process\": 7}");
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	(void)f; /* written for its side effect */

	cordon_spec_init(&spec);
	ck_assert_int_lt(cordon_spec_from_bundle(&spec, missing, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_SPEC);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_int_lt(cordon_spec_from_bundle(&spec, tmp, &err), 0); /* no config.json */
	ck_assert_msg(strstr(err.msg, "config.json"), "%s", err.msg);
	unit_mkdirs(tmp, "b1/config.json");
	ck_assert_int_lt(cordon_spec_from_bundle(&spec, dir_cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
	unit_mkdirs(tmp, "b2");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_lt(cordon_spec_from_bundle(&spec, fifo_cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
	ck_assert_int_lt(cordon_spec_from_bundle(&spec, bad_cfg, &err), 0);
	ck_assert_msg(strstr(err.msg, "process: expected object"), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, bad_cfg), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

/* Parsing twice into the same spec (a retry) replaces, never leaks. */
START_TEST(parse_twice)
{
	_cleanup_free_ char *podman = read_data("podman.json");
	_cleanup_free_ char *containerd = read_data("containerd.json");
	struct cordon_error err = { 0 };
	struct cordon_spec spec;

	parse_ok(&spec, "/b", podman);
	ck_assert_int_eq(cordon_spec_from_oci(&spec, "/b", containerd, strlen(containerd), &err),
			 0);
	ck_assert_uint_eq(spec.uid, 65535);
	ck_assert_uint_eq(spec.oci->n_mounts, 12);
	ck_assert_uint_eq(spec.n_env, 5); /* containerd's, not podman's added to it */
	ck_assert_ptr_null(env_of(&spec, "container"));
	ck_assert_str_eq(spec.hostname, "web-7c5ddbdf54-x2x7k");
	/* podman's compiled filter is gone: containerd's config has none */
	ck_assert_int_eq(spec.security.seccomp, CORDON_SECCOMP_DEFAULT);
	ck_assert_ptr_null(spec.security.filters);
	ck_assert_ptr_nonnull(rlimit_of(&spec, RLIMIT_CORE));
	ck_assert_uint_eq(rlimit_of(&spec, RLIMIT_NOFILE)->limit.rlim_cur, 1024);
	cordon_spec_free(&spec);

	/* and the other way round, keeping the caller's id */
	parse_ok(&spec, "/b", containerd);
	spec.id = cordon_xstrdup("web");
	ck_assert_int_eq(cordon_spec_from_oci(&spec, "/b", podman, strlen(podman), &err), 0);
	ck_assert_str_eq(spec.id, "web");
	ck_assert_uint_eq(spec.limits.memory, 0);
	ck_assert_uint_eq(spec.limits.pids, 2048);
	ck_assert_int_eq(spec.security.seccomp, CORDON_SECCOMP_PROFILE);
	cordon_spec_free(&spec);
}
END_TEST

static Suite *spec_oci_suite(void)
{
	Suite *s = suite_create("spec-oci");
	TCase *tc;

	tc = tcase_create("configs");
	tcase_add_test(tc, podman_config);
	tcase_add_test(tc, containerd_config);
	tcase_add_test(tc, unknown_fields_and_null_ignored);
	tcase_add_test(tc, versions_accepted);
	tcase_add_test(tc, warnings_recorded);
	tcase_add_test(tc, rlimit_above_callers_hard_limit_clamped);
	tcase_add_test(tc, mount_options);
	tcase_add_test(tc, process_details);
	tcase_add_test(tc, process_ambient_not_inheritable);
	tcase_add_test(tc, parse_twice);
	suite_add_tcase(s, tc);

	tc = tcase_create("refusals");
	tcase_add_loop_test(tc, refusal, 0, (int)ARRAY_SIZE(refusals));
	tcase_add_test(tc, not_json);
	tcase_add_test(tc, nul_byte_refused);
	tcase_add_test(tc, deep_nesting_refused);
	tcase_add_test(tc, truncated_configs);
	suite_add_tcase(s, tc);

	tc = tcase_create("generated");
	tcase_add_test(tc, default_config_round_trip);
	tcase_add_test(tc, features_document);
	tcase_add_test(tc, features_mount_options_parse);
	suite_add_tcase(s, tc);

	tc = tcase_create("bundle");
	tcase_add_checked_fixture(tc, bundle_setup, bundle_teardown);
	tcase_add_test(tc, bundle_read_and_finalize);
	tcase_add_test(tc, finalize_hostname_and_bind_sources);
	tcase_add_test(tc, finalize_missing_root);
	tcase_add_test(tc, finalize_capability_policy);
	tcase_add_test(tc, bundle_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(spec_oci_suite());
}
