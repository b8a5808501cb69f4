// SPDX-License-Identifier: Apache-2.0
/*
 * config.json "linux": namespaces, id maps, devices, cgroup path, seccomp,
 * masked and read-only paths, propagation, sysctls and personality
 * (linux.resources is in oci-resources.c).
 */
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>

#include "oci-internal.h"

const char *const oci_ns_names[CORDON_OCI_NS_COUNT] = {
	[CORDON_OCI_NS_PID] = "pid",	   [CORDON_OCI_NS_NETWORK] = "network",
	[CORDON_OCI_NS_MOUNT] = "mount",   [CORDON_OCI_NS_IPC] = "ipc",
	[CORDON_OCI_NS_UTS] = "uts",	   [CORDON_OCI_NS_USER] = "user",
	[CORDON_OCI_NS_CGROUP] = "cgroup", [CORDON_OCI_NS_TIME] = "time",
};

bool cordon_oci_ns_joinable(size_t type)
{
	return type == CORDON_OCI_NS_NETWORK || type == CORDON_OCI_NS_IPC ||
	       type == CORDON_OCI_NS_UTS;
}

const char *cordon_spec_ns_path(const struct cordon_spec *spec, enum cordon_oci_ns type)
{
	return spec->oci ? spec->oci->ns_path[type] : NULL;
}

bool cordon_spec_ns_shared(const struct cordon_spec *spec, enum cordon_oci_ns type)
{
	return spec->oci && cordon_oci_ns_joinable(type) && !spec->oci->ns_listed[type];
}

bool cordon_spec_ns_not_new(const struct cordon_spec *spec, enum cordon_oci_ns type)
{
	return cordon_spec_ns_path(spec, type) || cordon_spec_ns_shared(spec, type);
}

static int parse_namespaces(struct oci_parse *p, yajl_val list)
{
	struct cordon_oci *oci = p->oci;

	if (!list)
		return oci_error(p->err, "linux.namespaces: required (at least a mount namespace)");
	if (oci_want_array(list, "linux.namespaces", p->err) < 0)
		return -1;
	for (size_t i = 0; i < list->u.array.len; i++) {
		yajl_val ns = list->u.array.values[i], v;
		char path[OCI_PATH_MAX], f[OCI_PATH_MAX];
		const char *type;
		size_t k;

		oci_path(path, "linux.namespaces[%zu]", i);
		oci_path(f, "%s.type", path);
		if (oci_want_object(ns, path, p->err) < 0 ||
		    oci_string_ref(oci_get(ns, "type"), f, &type, p->err) < 0)
			return -1;
		for (k = 0; k < CORDON_OCI_NS_COUNT; k++)
			if (strcmp(oci_ns_names[k], type) == 0)
				break;
		if (k == CORDON_OCI_NS_COUNT)
			return oci_error(p->err, "%s: unknown namespace type '%s'", f, type);
		if (oci->ns_listed[k])
			return oci_error(p->err, "%s: '%s' given twice", f, type);
		oci->ns_listed[k] = true;
		oci_path(f, "%s.path", path);
		if ((v = oci_get(ns, "path"))) {
			if (oci_string(v, f, &oci->ns_path[k], p->err) < 0)
				return -1;
			if (!*oci->ns_path[k])
				free(TAKE_PTR(oci->ns_path[k])); /* "": a new one */
			else if (oci->ns_path[k][0] != '/')
				return oci_error(p->err, "%s: must be absolute, got '%s'", f,
						 oci->ns_path[k]);
		}
	}
	/* Without its own mount namespace a container's root would be the host's. */
	if (!oci->ns_listed[CORDON_OCI_NS_MOUNT])
		return oci_error(p->err, "linux.namespaces: a mount namespace is required");
	if (oci->ns_path[CORDON_OCI_NS_MOUNT])
		return oci_error(p->err,
				 "linux.namespaces: joining a mount namespace is not supported");
	/*
	 * A pod's containers share its network, IPC and UTS namespaces: those
	 * are joined. The pid 1 of a joined pid namespace would not be
	 * cordon's init, a joined user or cgroup namespace would take the
	 * id maps and cgroup root out of cordon's hands.
	 */
	for (size_t k = 0; k < CORDON_OCI_NS_COUNT; k++)
		if (oci->ns_path[k] && !cordon_oci_ns_joinable(k))
			return oci_error(p->err,
					 "linux.namespaces: joining a %s namespace (%s) is not "
					 "supported: only network, ipc and uts",
					 oci_ns_names[k], oci->ns_path[k]);
	if (oci->ns_listed[CORDON_OCI_NS_TIME])
		oci_warn(oci,
			 "linux.namespaces: 'time': not created (cordon shares the host's clocks)");
	/*
	 * A namespace left out is the runtime's, the spec says: a network,
	 * IPC or UTS namespace is then shared (cordon_spec_ns_shared), as
	 * podman's --network host asks. The runtime's pid namespace cannot
	 * be: cordon's init is pid 1 of one of its own, and a proc of the
	 * host's cannot be mounted from the sandbox's user namespace; refused.
	 * A user or cgroup namespace of its own is cordon's always (rootful
	 * engines leave both out): the container's root is never the host's
	 * (docs/oci.md, "Differences from runc").
	 */
	return 0;
}

static int parse_device(struct oci_parse *p, yajl_val d, const char *path,
			struct cordon_oci_device *dev)
{
	char f[OCI_PATH_MAX];
	const char *type;
	yajl_val v;
	int64_t n;

	if (oci_want_object(d, path, p->err) < 0)
		return -1;
	oci_path(f, "%s.type", path);
	if (oci_string_ref(oci_get(d, "type"), f, &type, p->err) < 0)
		return -1;
	if (strlen(type) != 1 || !strchr("cbup", type[0]))
		return oci_error(p->err, "%s: '%s' is not c, b, u or p", f, type);
	dev->type = type[0];
	oci_path(f, "%s.path", path);
	if (!(v = oci_get(d, "path")))
		return oci_error(p->err, "%s: required", f);
	if (oci_container_path(v, f, &dev->path, p->err) < 0)
		return -1;
	if (strcmp(dev->path, "/") == 0)
		return oci_error(p->err, "%s: cannot be /", f);
	dev->major = dev->minor = -1;
	if (dev->type != 'p') {
		/* The kernel's dev_t: 12 bits of major, 20 of minor. */
		oci_path(f, "%s.major", path);
		if (oci_int(oci_get(d, "major"), f, 0, 4095, &dev->major, p->err) < 0)
			return -1;
		oci_path(f, "%s.minor", path);
		if (oci_int(oci_get(d, "minor"), f, 0, 1048575, &dev->minor, p->err) < 0)
			return -1;
	}
	oci_path(f, "%s.fileMode", path);
	if ((v = oci_get(d, "fileMode"))) {
		if (oci_int(v, f, 0, 07777, &n, p->err) < 0)
			return -1;
		dev->has_mode = true;
		dev->file_mode = (uint32_t)n;
	}
	oci_path(f, "%s.uid", path);
	if ((v = oci_get(d, "uid"))) {
		if (oci_u32(v, f, UINT32_MAX - 1, &dev->uid, p->err) < 0)
			return -1;
		dev->has_uid = true;
	}
	oci_path(f, "%s.gid", path);
	if ((v = oci_get(d, "gid"))) {
		if (oci_u32(v, f, UINT32_MAX - 1, &dev->gid, p->err) < 0)
			return -1;
		dev->has_gid = true;
	}
	return 0;
}

static int parse_devices(struct oci_parse *p, yajl_val list)
{
	struct cordon_oci *oci = p->oci;

	if (!list)
		return 0;
	if (oci_want_array(list, "linux.devices", p->err) < 0)
		return -1;
	oci->devices = cordon_xcalloc(list->u.array.len + 1, sizeof(*oci->devices));
	for (size_t i = 0; i < list->u.array.len; i++) {
		char path[OCI_PATH_MAX];

		oci_path(path, "linux.devices[%zu]", i);
		oci->n_devices++;
		if (parse_device(p, list->u.array.values[i], path, &oci->devices[i]) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(oci->devices[j].path, oci->devices[i].path) == 0)
				return oci_error(p->err, "%s.path: %s is also linux.devices[%zu]",
						 path, oci->devices[i].path, j);
	}
	return 0;
}

static int parse_paths(yajl_val list, const char *name, char ***out, size_t *n,
		       struct cordon_error *err)
{
	if (!list)
		return 0;
	if (oci_strv(list, name, out, n, err) < 0)
		return -1;
	for (size_t i = 0; i < *n; i++) {
		char path[OCI_PATH_MAX];
		char *norm;

		oci_path(path, "%s[%zu]", name, i);
		if ((*out)[i][0] != '/')
			return oci_error(err, "%s: must be absolute, got '%s'", path, (*out)[i]);
		norm = cordon_path_normalize((*out)[i]);
		if (!norm)
			return oci_error(err, "%s: may not contain '..', got '%s'", path,
					 (*out)[i]);
		if (strcmp(norm, "/") == 0) {
			free(norm);
			return oci_error(err, "%s: cannot be /", path);
		}
		free((*out)[i]);
		(*out)[i] = norm;
	}
	return 0;
}

static const struct {
	const char *name;
	unsigned long flags;
} propagations[] = {
	{ "private", MS_PRIVATE },	 { "rprivate", MS_PRIVATE | MS_REC },
	{ "slave", MS_SLAVE },		 { "rslave", MS_SLAVE | MS_REC },
	{ "shared", MS_SHARED },	 { "rshared", MS_SHARED | MS_REC },
	{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

static int parse_propagation(struct oci_parse *p, yajl_val v)
{
	const char *s;

	if (!v)
		return 0;
	if (oci_string_ref(v, "linux.rootfsPropagation", &s, p->err) < 0)
		return -1;
	for (size_t k = 0; k < ARRAY_SIZE(propagations); k++) {
		if (strcmp(propagations[k].name, s) == 0) {
			p->oci->rootfs_propagation = propagations[k].flags;
			return 0;
		}
	}
	return oci_error(p->err, "linux.rootfsPropagation: unknown '%s'", s);
}

/*
 * Only sysctls the kernel scopes to a namespace the container owns may be
 * set: anything else would change the host (runtime-spec, "Sysctl").
 */
int cordon_oci_sysctl_namespace(const char *key)
{
	static const char *const ipc_keys[] = { "kernel.msgmax", "kernel.msgmnb",
						"kernel.msgmni", "kernel.sem",
						"kernel.shmall", "kernel.shmmax",
						"kernel.shmmni", "kernel.shm_rmid_forced" };

	for (size_t i = 0; i < ARRAY_SIZE(ipc_keys); i++)
		if (strcmp(ipc_keys[i], key) == 0)
			return CORDON_OCI_NS_IPC;
	if (strncmp(key, "fs.mqueue.", 10) == 0)
		return CORDON_OCI_NS_IPC;
	if (strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0)
		return CORDON_OCI_NS_UTS;
	if (strncmp(key, "net.", 4) == 0)
		return CORDON_OCI_NS_NETWORK;
	return -1;
}

static int parse_sysctl(struct oci_parse *p, yajl_val map)
{
	struct cordon_oci *oci = p->oci;

	if (!map)
		return 0;
	if (oci_string_map(map, "linux.sysctl", &oci->sysctl, &oci->n_sysctl, p->err) < 0)
		return -1;
	for (size_t i = 0; i < oci->n_sysctl; i++) {
		char *key = oci->sysctl[2 * i];
		_cleanup_free_ char *given = cordon_xstrdup(key);
		int ns;

		/* "net/ipv4/ip_forward" is the same key; the dotted form is kept. */
		for (char *c = key; *c; c++)
			if (*c == '/')
				*c = '.';
		if (strspn(key,
			   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
			    strlen(key) ||
		    key[0] == '.' || strstr(key, "..") || key[strlen(key) - 1] == '.')
			return oci_error(p->err, "linux.sysctl.%s: not a sysctl name", given);
		/*
		 * The limits of the sandbox's own user namespace (a container
		 * always has one): cordon's defaults, overridden, written by the
		 * init (cordon_user_limits_write), not by the path below.
		 */
		if (strncmp(key, "user.", 5) == 0) {
			if (cordon_user_limit_set(&p->spec->user_limits, key + 5,
						  oci->sysctl[2 * i + 1], p->err) < 0) {
				p->err->code = CORDON_E_SPEC;
				return cordon_error_wrap(p->err, "linux.sysctl.%s", key);
			}
			continue;
		}
		ns = cordon_oci_sysctl_namespace(key);
		if (ns < 0)
			return oci_error(
				p->err, "linux.sysctl.%s: not namespaced, it would change the host",
				key);
		/*
		 * A namespace joined by path (a pod's) is fine here; that it is not
		 * the host's can only be checked on the host, when it is joined.
		 */
		if (!oci->ns_listed[ns])
			return oci_error(
				p->err,
				"linux.sysctl.%s: needs the %s namespace in linux.namespaces", key,
				oci_ns_names[ns]);
	}
	return 0;
}

static int parse_personality(struct oci_parse *p, yajl_val v)
{
	const char *domain;
	yajl_val flags;

	if (!v)
		return 0;
	if (oci_want_object(v, "linux.personality", p->err) < 0 ||
	    oci_string_ref(oci_get(v, "domain"), "linux.personality.domain", &domain, p->err) < 0)
		return -1;
	if (strcmp(domain, "LINUX") == 0)
		p->oci->personality = PER_LINUX;
	else if (strcmp(domain, "LINUX32") == 0)
		p->oci->personality = PER_LINUX32;
	else
		return oci_error(p->err, "linux.personality.domain: '%s' is not LINUX or LINUX32",
				 domain);
	flags = oci_get(v, "flags");
	if (flags && oci_want_array(flags, "linux.personality.flags", p->err) < 0)
		return -1;
	/* The spec defines no flag yet. */
	if (flags && flags->u.array.len)
		return oci_error(p->err, "linux.personality.flags: no flag is supported");
	p->oci->has_personality = true;
	return 0;
}

static int parse_seccomp(struct oci_parse *p, yajl_val v)
{
	static const char prefix[] = "linux.seccomp.";
	struct cordon_security *sec = &p->spec->security;
	char *msg = p->err->msg;
	size_t plen = sizeof(prefix) - 1, mlen;

	if (!v)
		return 0; /* absent: cordon's default profile, never none */
	if (oci_want_object(v, "linux.seccomp", p->err) < 0)
		return -1;
	cordon_seccomp_profile_free(sec);
	if (cordon_seccomp_oci_compile(v, sec, p->err) < 0) {
		/* The compiler names fields relative to the profile: prefix the path. */
		mlen = strnlen(msg, sizeof(p->err->msg) - 1);
		if (plen + mlen >= sizeof(p->err->msg))
			mlen = sizeof(p->err->msg) - 1 - plen;
		memmove(msg + plen, msg, mlen);
		memcpy(msg, prefix, plen);
		msg[plen + mlen] = '\0';
		return -1;
	}
	sec->seccomp = CORDON_SECCOMP_PROFILE;
	p->oci->has_seccomp = true;
	return 0;
}

static int parse_cgroups_path(struct oci_parse *p, yajl_val v)
{
	const char *s;
	bool named = false;

	if (!v)
		return 0;
	if (oci_string_ref(v, "linux.cgroupsPath", &s, p->err) < 0)
		return -1;
	if (!*s)
		return 0;
	/* The kernel takes no control character in a cgroup's name; nor does the state's list. */
	if (cordon_has_control(s))
		return oci_error(p->err, "linux.cgroupsPath: may not contain control characters");
	/* "slice:prefix:name" is the systemd driver's form. */
	if (strchr(s, ':'))
		return oci_error(p->err,
				 "linux.cgroupsPath: '%s': systemd cgroup paths are not supported "
				 "(use the cgroupfs manager)",
				 s);
	for (const char *c = s; *c;) {
		size_t len = strcspn(c, "/");

		if (len == 2 && c[0] == '.' && c[1] == '.')
			return oci_error(p->err,
					 "linux.cgroupsPath: may not contain '..', got '%s'", s);
		named |= len > 1 || (len == 1 && c[0] != '.');
		c += len;
		c += *c == '/';
	}
	/* The container's own cgroup: not a hierarchy's root, nor the caller's ("."). */
	if (!named)
		return oci_error(p->err,
				 "linux.cgroupsPath: '%s' names no cgroup of its own (the root or "
				 "the caller's)",
				 s);
	p->oci->cgroups_path = cordon_xstrdup(s);
	return 0;
}

/* Known linux fields cordon checks the shape of but does not apply. */
static int note_unapplied(struct oci_parse *p, yajl_val linux_obj)
{
	static const char *const keys[] = { "intelRdt", "netDevices", "timeOffsets",
					    "memoryPolicy" };
	yajl_val v;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char path[OCI_PATH_MAX];

		if (!(v = oci_get(linux_obj, keys[i])))
			continue;
		oci_path(path, "linux.%s", keys[i]);
		if (oci_want_object(v, path, p->err) < 0)
			return -1;
		oci_warn(p->oci, "%s: not applied", path);
	}
	if ((v = oci_get(linux_obj, "mountLabel"))) {
		if (oci_string(v, "linux.mountLabel", &p->oci->mount_label, p->err) < 0)
			return -1;
		if (*p->oci->mount_label)
			oci_warn(p->oci, "linux.mountLabel '%s': ignored (no SELinux support)",
				 p->oci->mount_label);
	}
	return 0;
}

int oci_parse_linux(struct oci_parse *p, yajl_val l)
{
	struct cordon_oci *oci = p->oci;
	yajl_val v;

	if (oci_want_object(l, "linux", p->err) < 0 ||
	    parse_namespaces(p, oci_get(l, "namespaces")) < 0)
		return -1;
	if ((v = oci_get(l, "uidMappings")) &&
	    oci_idmaps(v, "linux.uidMappings", &oci->uid_map, &oci->n_uid_map, p->err) < 0)
		return -1;
	if ((v = oci_get(l, "gidMappings")) &&
	    oci_idmaps(v, "linux.gidMappings", &oci->gid_map, &oci->n_gid_map, p->err) < 0)
		return -1;
	if (parse_devices(p, oci_get(l, "devices")) < 0 ||
	    oci_parse_resources(p, oci_get(l, "resources")) < 0 ||
	    parse_cgroups_path(p, oci_get(l, "cgroupsPath")) < 0 ||
	    parse_seccomp(p, oci_get(l, "seccomp")) < 0 ||
	    parse_paths(oci_get(l, "maskedPaths"), "linux.maskedPaths", &oci->masked_paths,
			&oci->n_masked_paths, p->err) < 0 ||
	    parse_paths(oci_get(l, "readonlyPaths"), "linux.readonlyPaths", &oci->readonly_paths,
			&oci->n_readonly_paths, p->err) < 0 ||
	    parse_propagation(p, oci_get(l, "rootfsPropagation")) < 0 ||
	    parse_sysctl(p, oci_get(l, "sysctl")) < 0 ||
	    parse_personality(p, oci_get(l, "personality")) < 0)
		return -1;
	return note_unapplied(p, l);
}
