// SPDX-License-Identifier: Apache-2.0
/*
 * What the supervisor settles before it clones the sandbox's init: the id
 * plan of the sandbox's user namespace (a config's maps, the identity map,
 * or cordon's own), and, around the clone itself, the namespaces a config
 * joins by path and its oomScoreAdj, which the init inherits from us.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>

#include "cordon/fs.h"
#include "cordon/security.h"
#include "sandbox-internal.h"

/*
 * process.oomScoreAdj: ours for the clone to inherit (the sandbox's init
 * could not lower it: that needs CAP_SYS_RESOURCE on the host), the old
 * value into *saved for restore_oom_score_adj. Only with a config asking.
 */
static int set_oom_score_adj(const struct cordon_spec *spec, char *saved, size_t len,
			     struct cordon_error *err)
{
	_cleanup_free_ char *old = NULL;
	char value[16];
	int r;

	saved[0] = '\0';
	if (!spec->oci || !spec->oci->has_oom_score_adj)
		return 0;
	if (cordon_read_file_at(AT_FDCWD, "/proc/self/oom_score_adj", &old, NULL) == 0)
		snprintf(saved, len, "%s", old);
	snprintf(value, sizeof(value), "%d", spec->oci->oom_score_adj);
	r = cordon_write_file_at(AT_FDCWD, "/proc/self/oom_score_adj", value, strlen(value));
	if (r < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, -r, "process.oomScoreAdj %s%s",
					value, r == -EACCES ? " (lowering it needs CAP_SYS_RESOURCE)" : "");
	return 0;
}

static void restore_oom_score_adj(const char *saved)
{
	if (saved[0])
		cordon_write_file_at(AT_FDCWD, "/proc/self/oom_score_adj", saved, strlen(saved));
}

/* The namespaces a config may join by path (a pod's), and our own of each type. */
static const struct {
	enum cordon_oci_ns type;
	int flag;
	const char *name, *own;
} joinable[] = {
	{ CORDON_OCI_NS_NETWORK, CLONE_NEWNET, "network", "/proc/self/ns/net" },
	{ CORDON_OCI_NS_IPC, CLONE_NEWIPC, "ipc", "/proc/self/ns/ipc" },
	{ CORDON_OCI_NS_UTS, CLONE_NEWUTS, "uts", "/proc/self/ns/uts" },
};

/*
 * Back to our own namespaces. Root of a user namespace may not manage it
 * for one its namespace does not own (the host's network, say): it stays
 * in the container's, which only the runtime-namespace hooks would notice
 * (docs/oci.md, "Joined namespaces").
 */
_Static_assert(sizeof(joinable) / sizeof(joinable[0]) ==
		       sizeof(((struct sandbox_around *)0)->own_ns) / sizeof(int),
	       "one slot of struct sandbox_around.own_ns per joinable type");

static void leave_joined(int own[])
{
	for (size_t i = 0; i < ARRAY_SIZE(joinable); i++)
		if (own[i] >= 0) {
			if (setns(own[i], joinable[i].flag) < 0)
				cordon_debug("staying in the container's %s namespace: %s",
					     joinable[i].name, strerror(errno));
			cordon_closep(&own[i]);
		}
}

/*
 * Enter the namespaces the config joins, for the init's clone to inherit
 * (only a process with privileges over them, not the sandbox's, may), and
 * keep our own in own[] to come back to (leave_joined). *flags: the types
 * joined, which the clone must not create. The caller's own namespace is
 * never joined: a container never shares cordon's network, IPC or host name.
 */
static int enter_joined(const struct cordon_spec *spec, int own[], int *flags,
			struct cordon_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(joinable); i++)
		own[i] = -1;
	for (size_t i = 0; i < ARRAY_SIZE(joinable); i++) {
		const char *path = cordon_spec_ns_path(spec, joinable[i].type);
		_cleanup_close_ int fd = -1;
		struct stat want, ours;

		/* Not listed: the runtime's, ours, which the clone inherits as it is. */
		if (cordon_spec_ns_shared(spec, joinable[i].type)) {
			*flags |= joinable[i].flag;
			continue;
		}
		if (!path)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &want) < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
						"linux.namespaces: %s namespace %s", joinable[i].name,
						path);
		own[i] = open(joinable[i].own, O_RDONLY | O_CLOEXEC);
		if (own[i] < 0 || fstat(own[i], &ours) < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "%s",
						joinable[i].own);
		if (want.st_dev == ours.st_dev && want.st_ino == ours.st_ino) {
			cordon_closep(&own[i]);
			return cordon_error_set(err, CORDON_E_NAMESPACE, 0,
						"linux.namespaces: %s is the caller's own %s namespace: "
						"a container never shares it",
						path, joinable[i].name);
		}
		if (setns(fd, joinable[i].flag) < 0) {
			int e = errno;

			cordon_closep(&own[i]);
			return cordon_error_set(err, CORDON_E_NAMESPACE, e,
						e == EINVAL ? "linux.namespaces: %s is not a %s namespace"
							    : "linux.namespaces: joining %s (%s)",
						path, joinable[i].name);
		}
		*flags |= joinable[i].flag;
		/* Its sysctls are ours to set: the sandbox holds no privilege over it. */
		if (sandbox_sysctls(spec, SYSCTL_NS(joinable[i].type), err) < 0)
			return -1;
	}
	return 0;
}

/*
 * The config's maps are the launcher's to choose, except a rootless one
 * that maps only the caller's own ids to the process's (what `cordon spec
 * --rootless` writes): cordon's own plan then, which adds the caller's
 * subordinate range where there is one.
 */
static bool config_maps(const struct cordon_spec *spec)
{
	const struct cordon_oci *oci = spec->oci;

	if (!oci || !oci->n_uid_map)
		return false;
	if (cordon_host_root() || cordon_userns_root())
		return true;
	return !(oci->n_uid_map == 1 && oci->uid_map[0].size == 1 &&
		 oci->uid_map[0].container_id == spec->uid && oci->uid_map[0].host_id == geteuid() &&
		 oci->n_gid_map == 1 && oci->gid_map[0].size == 1 &&
		 oci->gid_map[0].container_id == spec->gid && oci->gid_map[0].host_id == getegid());
}

static int config_map(const struct cordon_oci_idmap *m, size_t n, uint32_t target,
		      const char *what, struct cordon_idmap *out, struct cordon_error *err)
{
	if (n > CORDON_IDMAP_MAX_EXTENTS)
		return cordon_error_set(err, CORDON_E_USERNS, 0, "linux.%s: at most %d ranges", what,
					CORDON_IDMAP_MAX_EXTENTS);
	out->n = n;
	for (size_t i = 0; i < n; i++)
		out->extent[i] = (struct cordon_idmap_extent){ m[i].container_id, m[i].host_id,
							       m[i].size };
	if (cordon_idmap_to_outside(out, target) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, 0,
					"linux.%s: the process's id %u is not mapped", what, target);
	return 0;
}

/* Root of a user namespace maps only ids its namespace has: each range within one of ours. */
static int maps_own_ids(const char *file, const struct cordon_idmap *map, const char *what,
			struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	int r = cordon_read_file_at(AT_FDCWD, file, &text, NULL);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_USERNS, -r, "reading %s", file);
	for (size_t i = 0; i < map->n; i++) {
		uint64_t lo = map->extent[i].outside, hi = lo + map->extent[i].count;
		unsigned long in, out, count;
		bool inside = false;
		int used;

		for (const char *p = text; sscanf(p, "%lu %lu %lu%n", &in, &out, &count, &used) == 3;
		     p += used)
			inside |= lo >= in && hi <= (uint64_t)in + count;
		if (!inside)
			return cordon_error_set(err, CORDON_E_USERNS, 0,
						"linux.%s: host ids %" PRIu64 "-%" PRIu64
						" are not ids of cordon's own user namespace",
						what, lo, hi - 1);
	}
	return 0;
}

/*
 * linux.uidMappings/gidMappings: the launcher chose the ids (podman's
 * --userns=auto, a Kubernetes pod without host users) and made the root
 * theirs, so the sandbox's user namespace takes them as given. Host root
 * and root of a user namespace write them; anyone else through
 * newuidmap/newgidmap, which hold them to /etc/subuid and /etc/subgid,
 * unless they are only the caller's own id.
 */
static int config_plan(const struct cordon_spec *spec, struct cordon_idplan *plan,
		       struct cordon_error *err)
{
	const struct cordon_oci *oci = spec->oci;

	if (config_map(oci->uid_map, oci->n_uid_map, spec->uid, "uidMappings", &plan->uid, err) <
		    0 ||
	    config_map(oci->gid_map, oci->n_gid_map, spec->gid, "gidMappings", &plan->gid, err) < 0)
		return -1;
	if (cordon_userns_root() &&
	    (maps_own_ids("/proc/self/uid_map", &plan->uid, "uidMappings", err) < 0 ||
	     maps_own_ids("/proc/self/gid_map", &plan->gid, "gidMappings", err) < 0))
		return -1;
	plan->use_helpers = !cordon_host_root() && !cordon_userns_root();
	return 0;
}

/*
 * A bundle's writable root on a filesystem that cannot be idmapped (the
 * overlay of podman's, containerd's or buildah's storage), as host root:
 * the sandbox's user namespace maps every id to itself, so that its root
 * owns the root's files, as the engine expects (it wrote them as host
 * root). Capabilities stay the namespace's, and the workload is in the
 * nested one, as always. Read-only roots and idmappable ones keep
 * cordon's own range (docs/oci.md, "Users of a container").
 */
static bool host_ids(const struct cordon_spec *spec)
{
	return cordon_host_root() && spec->oci && !spec->oci->root_readonly &&
	       !cordon_fs_idmappable(spec->rootfs, &spec->rootfs_id);
}

int sandbox_id_plan(const struct cordon_spec *spec, struct cordon_idplan *plan,
		    struct cordon_error *err)
{
	if (config_maps(spec))
		return config_plan(spec, plan, err);
	if (host_ids(spec)) {
		cordon_idmap_range(0, UINT32_MAX, &plan->uid);
		cordon_idmap_range(0, UINT32_MAX, &plan->gid);
		return 0;
	}
	return cordon_userns_plan(spec->uid, spec->gid, plan, err);
}

int cordon_sandbox_seal_self(const struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_idplan plan;

	memset(&plan, 0, sizeof(plan));
	if (spec->userns == CORDON_USERNS_HOST) {
		cordon_idmap_range(0, UINT32_MAX, &plan.uid);
		cordon_idmap_range(0, UINT32_MAX, &plan.gid);
	} else if (sandbox_id_plan(spec, &plan, err) < 0) {
		return -1;
	}
	return cordon_self_seal(&plan.uid, &plan.gid, err);
}

int sandbox_clone_enter(const struct cordon_spec *spec, struct sandbox_around *a,
			struct cordon_error *err)
{
	a->joined = 0;
	for (size_t i = 0; i < ARRAY_SIZE(a->own_ns); i++)
		a->own_ns[i] = -1;
	if (set_oom_score_adj(spec, a->oom_saved, sizeof(a->oom_saved), err) < 0)
		return -1;
	if (enter_joined(spec, a->own_ns, &a->joined, err) < 0) {
		sandbox_clone_leave(a);
		return -1;
	}
	return 0;
}

void sandbox_clone_leave(struct sandbox_around *a)
{
	leave_joined(a->own_ns);
	restore_oom_score_adj(a->oom_saved);
	a->oom_saved[0] = '\0';
}
