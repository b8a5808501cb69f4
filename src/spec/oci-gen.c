// SPDX-License-Identifier: Apache-2.0
/*
 * What cordon writes in OCI terms: the default config.json of `cordon
 * spec` and the runtime features document of `cordon features`
 * (runtime-spec features.md), both generated with yajl_gen so that they
 * are always valid JSON and parse back through cordon_spec_from_oci.
 */
#include <string.h>
#include <yajl/yajl_gen.h>

#include "cordon/fs.h"
#include "oci-internal.h"

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(yajl_gen g, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void kv_str(yajl_gen g, const char *k, const char *v)
{
	key(g, k);
	str(g, v);
}

static void kv_int(yajl_gen g, const char *k, long long v)
{
	key(g, k);
	yajl_gen_integer(g, v);
}

static void kv_bool(yajl_gen g, const char *k, bool v)
{
	key(g, k);
	yajl_gen_bool(g, v);
}

static void str_array(yajl_gen g, const char *k, const char *const *v)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (; *v; v++)
		str(g, *v);
	yajl_gen_array_close(g);
}

static char *gen_finish(yajl_gen g)
{
	const unsigned char *buf;
	size_t len;
	char *out;

	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		abort(); /* only an unbalanced generator gets here: a bug */
	out = cordon_xmalloc(len + 2);
	memcpy(out, buf, len);
	out[len] = '\n';
	out[len + 1] = '\0';
	yajl_gen_free(g);
	return out;
}

static yajl_gen gen_new(void)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (!g)
		abort();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	return g;
}

/* --- cordon spec ------------------------------------------------------ */

/* What a shell in the sandbox needs; everything else starts dropped. */
static const char *const default_caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
					    NULL };

static void gen_process(yajl_gen g)
{
	static const char *const args[] = { "sh", NULL };
	static const char *const env[] = { "PATH=" CORDON_DEFAULT_PATH, "TERM=xterm", NULL };
	static const char *const sets[] = { "bounding", "effective", "permitted" };

	key(g, "process");
	yajl_gen_map_open(g);
	kv_bool(g, "terminal", true);
	key(g, "user");
	yajl_gen_map_open(g);
	kv_int(g, "uid", 0);
	kv_int(g, "gid", 0);
	yajl_gen_map_close(g);
	str_array(g, "args", args);
	str_array(g, "env", env);
	kv_str(g, "cwd", "/");
	key(g, "capabilities");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++)
		str_array(g, sets[i], default_caps);
	yajl_gen_map_close(g);
	key(g, "rlimits");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	kv_str(g, "type", "RLIMIT_NOFILE");
	kv_int(g, "soft", 1024);
	kv_int(g, "hard", 4096);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	kv_bool(g, "noNewPrivileges", true);
	yajl_gen_map_close(g);
}

static void gen_mount(yajl_gen g, const char *dest, const char *type, const char *source,
		      const char *const *options)
{
	yajl_gen_map_open(g);
	kv_str(g, "destination", dest);
	kv_str(g, "type", type);
	kv_str(g, "source", source);
	str_array(g, "options", options);
	yajl_gen_map_close(g);
}

static void gen_mounts(yajl_gen g, bool rootless)
{
	static const char *const proc[] = { "nosuid", "noexec", "nodev", NULL };
	static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k",
					   NULL };
	/* gid 5 (tty) is mapped only with a full range, not for a rootless single id. */
	static const char *const pts[] = { "nosuid",	"noexec", "newinstance", "ptmxmode=0666",
					   "mode=0620", "gid=5",  NULL };
	static const char *const pts_rootless[] = { "nosuid",	     "noexec",	  "newinstance",
						    "ptmxmode=0666", "mode=0620", NULL };
	static const char *const shm[] = { "nosuid",	"noexec",      "nodev",
					   "mode=1777", "size=65536k", NULL };
	static const char *const ro[] = { "nosuid", "noexec", "nodev", "ro", NULL };
	static const char *const tmp[] = { "nosuid",	"noexec",	"nodev",
					   "mode=1777", "size=262144k", NULL };

	key(g, "mounts");
	yajl_gen_array_open(g);
	gen_mount(g, "/proc", "proc", "proc", proc);
	gen_mount(g, "/dev", "tmpfs", "tmpfs", dev);
	gen_mount(g, "/dev/pts", "devpts", "devpts", rootless ? pts_rootless : pts);
	gen_mount(g, "/dev/shm", "tmpfs", "shm", shm);
	gen_mount(g, "/dev/mqueue", "mqueue", "mqueue", proc);
	gen_mount(g, "/sys", "sysfs", "sysfs", ro);
	gen_mount(g, "/sys/fs/cgroup", "cgroup", "cgroup", ro);
	gen_mount(g, "/tmp", "tmpfs", "tmpfs", tmp);
	yajl_gen_array_close(g);
}

static void gen_idmap(yajl_gen g, const char *k, uint32_t host)
{
	key(g, k);
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	kv_int(g, "containerID", 0);
	kv_int(g, "hostID", host);
	kv_int(g, "size", 1);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

static void gen_proc_paths(yajl_gen g, const char *k, const char *const *names)
{
	key(g, k);
	yajl_gen_array_open(g);
	for (; *names; names++) {
		char path[OCI_PATH_MAX];

		oci_path(path, "/proc/%s", *names);
		str(g, path);
	}
	yajl_gen_array_close(g);
}

static void gen_linux(yajl_gen g, bool rootless, uid_t uid, gid_t gid)
{
	key(g, "linux");
	yajl_gen_map_open(g);
	/*
	 * Rootful: no maps, so cordon uses its own range (docs/architecture.md,
	 * "Users"). Rootless: the caller becomes root, as `cordon run` does.
	 */
	if (rootless) {
		gen_idmap(g, "uidMappings", uid);
		gen_idmap(g, "gidMappings", gid);
	} else {
		key(g, "resources");
		yajl_gen_map_open(g);
		key(g, "devices");
		yajl_gen_array_open(g);
		yajl_gen_map_open(g);
		kv_bool(g, "allow", false);
		kv_str(g, "access", "rwm");
		yajl_gen_map_close(g);
		yajl_gen_array_close(g);
		key(g, "pids");
		yajl_gen_map_open(g);
		kv_int(g, "limit", CORDON_PIDS_DEFAULT);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
	}
	key(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t k = 0; k < CORDON_OCI_NS_COUNT; k++) {
		if (k == CORDON_OCI_NS_TIME)
			continue;
		yajl_gen_map_open(g);
		kv_str(g, "type", oci_ns_names[k]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	gen_proc_paths(g, "maskedPaths", cordon_fs_masked_paths);
	gen_proc_paths(g, "readonlyPaths", cordon_fs_readonly_paths);
	yajl_gen_map_close(g);
}

char *cordon_oci_default_config(bool rootless, uid_t uid, gid_t gid)
{
	yajl_gen g = gen_new();

	yajl_gen_map_open(g);
	kv_str(g, "ociVersion", CORDON_OCI_VERSION);
	gen_process(g);
	key(g, "root");
	yajl_gen_map_open(g);
	kv_str(g, "path", "rootfs");
	kv_bool(g, "readonly", true);
	yajl_gen_map_close(g);
	kv_str(g, "hostname", CORDON_DEFAULT_HOSTNAME);
	gen_mounts(g, rootless);
	gen_linux(g, rootless, uid, gid);
	yajl_gen_map_close(g);
	return gen_finish(g);
}

/* --- cordon features ---------------------------------------------------- */

static void gen_seccomp_names(yajl_gen g, const char *k, enum cordon_seccomp_oci_kind kind)
{
	const char *name;

	key(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; (name = cordon_seccomp_oci_name(kind, i)); i++)
		str(g, name);
	yajl_gen_array_close(g);
}

static void gen_enabled(yajl_gen g, const char *k, bool enabled)
{
	key(g, k);
	yajl_gen_map_open(g);
	kv_bool(g, "enabled", enabled);
	yajl_gen_map_close(g);
}

static void gen_features_linux(yajl_gen g)
{
	const char *name;

	key(g, "linux");
	yajl_gen_map_open(g);
	key(g, "namespaces");
	yajl_gen_array_open(g);
	for (size_t k = 0; k < CORDON_OCI_NS_COUNT; k++)
		if (k != CORDON_OCI_NS_TIME)
			str(g, oci_ns_names[k]);
	yajl_gen_array_close(g);
	key(g, "capabilities");
	yajl_gen_array_open(g);
	for (int c = 0; (name = oci_cap_name(c)); c++)
		str(g, name);
	yajl_gen_array_close(g);
	key(g, "cgroup");
	yajl_gen_map_open(g);
	kv_bool(g, "v1", true);
	kv_bool(g, "v2", true);
	kv_bool(g, "systemd", false);
	kv_bool(g, "systemdUser", false);
	kv_bool(g, "rdma", false);
	yajl_gen_map_close(g);
	key(g, "seccomp");
	yajl_gen_map_open(g);
	kv_bool(g, "enabled", true);
	gen_seccomp_names(g, "actions", CORDON_SECCOMP_OCI_ACTION);
	gen_seccomp_names(g, "operators", CORDON_SECCOMP_OCI_OPERATOR);
	gen_seccomp_names(g, "archs", CORDON_SECCOMP_OCI_ARCH);
	gen_seccomp_names(g, "knownFlags", CORDON_SECCOMP_OCI_FLAG);
	/* Accepted, but none is passed to seccomp(2) (seccomp-oci.c says why). */
	key(g, "supportedFlags");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	gen_enabled(g, "apparmor", false);
	gen_enabled(g, "selinux", false);
	gen_enabled(g, "intelRdt", false);
	key(g, "mountExtensions");
	yajl_gen_map_open(g);
	/* Host root makes them (the supervisor); a rootless caller's are refused. */
	gen_enabled(g, "idmap", true);
	yajl_gen_map_close(g);
	gen_enabled(g, "netDevices", false);
	yajl_gen_map_close(g);
}

char *cordon_oci_features(void)
{
	yajl_gen g = gen_new();
	const char *name;

	yajl_gen_map_open(g);
	kv_str(g, "ociVersionMin", "1.0.0");
	kv_str(g, "ociVersionMax", CORDON_OCI_VERSION);
	key(g, "hooks");
	yajl_gen_array_open(g);
	for (size_t k = 0; k < CORDON_OCI_HOOK_COUNT; k++)
		str(g, oci_hook_names[k]);
	yajl_gen_array_close(g);
	key(g, "mountOptions");
	yajl_gen_array_open(g);
	for (size_t i = 0; (name = oci_mount_option_name(i)); i++)
		str(g, name);
	yajl_gen_array_close(g);
	gen_features_linux(g);
	key(g, "annotations");
	yajl_gen_map_open(g);
	kv_str(g, "io.github.cordon.version", CORDON_VERSION);
	yajl_gen_map_close(g);
	key(g, "potentiallyUnsafeConfigAnnotations");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return gen_finish(g);
}
