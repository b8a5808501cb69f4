// SPDX-License-Identifier: Apache-2.0
/*
 * config.json "process": what runs and with which ids, environment,
 * capabilities and limits. The fields `cordon run` also has go into the
 * common part of struct cordon_spec; the rest into spec->oci.
 */
#include <string.h>

#include "oci-internal.h"

/*
 * Capability names as the runtime-spec spells them, by number. A table of
 * our own rather than libcap's: what a config.json means must not depend
 * on the libcap or kernel the parse runs on.
 */
static const char *const cap_names[] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
};

const char *oci_cap_name(int n)
{
	return n >= 0 && (size_t)n < ARRAY_SIZE(cap_names) ? cap_names[n] : NULL;
}

int oci_cap_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cap_names); i++)
		if (strcmp(cap_names[i], name) == 0)
			return (int)i;
	return -1;
}

/*
 * A name cordon does not know is left out with a warning: the spec asks
 * runtimes to log what cannot be granted and not to fail for it (a config
 * written for a newer kernel).
 */
static int parse_capset(struct oci_parse *p, yajl_val v, const char *path, cordon_capset *out)
{
	*out = 0;
	if (!v)
		return 0;
	if (oci_want_array(v, path, p->err) < 0)
		return -1;
	for (size_t i = 0; i < v->u.array.len; i++) {
		char e[OCI_PATH_MAX];
		const char *name;
		int cap;

		oci_path(e, "%s[%zu]", path, i);
		if (oci_string_ref(v->u.array.values[i], e, &name, p->err) < 0)
			return -1;
		cap = oci_cap_from_name(name);
		if (cap < 0) {
			oci_warn(p->oci, "%s: unknown capability '%s', not granted", e, name);
			continue;
		}
		*out |= 1ULL << cap;
	}
	return 0;
}

/*
 * The five sets, applied as given (security/caps.c): without
 * "capabilities" every set is empty, for root too, as with runc.
 */
static int parse_caps(struct oci_parse *p, yajl_val caps)
{
	struct cordon_oci_caps *c = &p->oci->caps;
	struct cordon_security *sec = &p->spec->security;

	memset(c, 0, sizeof(*c));
	sec->config_sets = true;
	sec->caps = sec->effective = sec->permitted = sec->inheritable = sec->ambient = 0;
	if (!caps)
		return 0;
	if (oci_want_object(caps, "process.capabilities", p->err) < 0 ||
	    parse_capset(p, oci_get(caps, "bounding"), "process.capabilities.bounding",
			 &c->bounding) < 0 ||
	    parse_capset(p, oci_get(caps, "effective"), "process.capabilities.effective",
			 &c->effective) < 0 ||
	    parse_capset(p, oci_get(caps, "permitted"), "process.capabilities.permitted",
			 &c->permitted) < 0 ||
	    parse_capset(p, oci_get(caps, "inheritable"), "process.capabilities.inheritable",
			 &c->inheritable) < 0 ||
	    parse_capset(p, oci_get(caps, "ambient"), "process.capabilities.ambient", &c->ambient) <
		    0)
		return -1;
	/* The kernel's own invariants (capabilities(7)); a config that breaks them fails at exec.
	 */
	if (c->effective & ~c->permitted)
		return oci_error(p->err,
				 "process.capabilities.effective: not a subset of permitted");
	/*
	 * The kernel raises an ambient capability only if it is permitted and
	 * inheritable. `runc spec` writes ambient without inheritable, and
	 * runtimes skip what cannot be raised: so does cordon, and says so.
	 */
	if (c->ambient & ~(c->permitted & c->inheritable)) {
		oci_warn(p->oci,
			 "process.capabilities.ambient: capabilities not both permitted and "
			 "inheritable are not raised");
		c->ambient &= c->permitted & c->inheritable;
	}
	sec->caps = c->bounding;
	sec->effective = c->effective;
	sec->permitted = c->permitted;
	sec->inheritable = c->inheritable;
	sec->ambient = c->ambient;
	return 0;
}

static int parse_rlimits(struct oci_parse *p, yajl_val list)
{
	struct cordon_rlimits *rl = &p->spec->security.rlimits;
	bool seen[RLIM_NLIMITS] = { false };

	if (!list)
		return 0;
	if (oci_want_array(list, "process.rlimits", p->err) < 0)
		return -1;
	for (size_t i = 0; i < list->u.array.len; i++) {
		yajl_val r = list->u.array.values[i];
		char path[OCI_PATH_MAX], f[OCI_PATH_MAX];
		const char *type;
		uint64_t soft, hard;
		int res;
		size_t k;

		oci_path(path, "process.rlimits[%zu]", i);
		if (oci_want_object(r, path, p->err) < 0)
			return -1;
		oci_path(f, "%s.type", path);
		if (oci_string_ref(oci_get(r, "type"), f, &type, p->err) < 0)
			return -1;
		res = strncmp(type, "RLIMIT_", 7) == 0 ? cordon_rlimit_from_name(type) : -1;
		if (res < 0 || res >= RLIM_NLIMITS)
			return oci_error(p->err, "%s: unknown limit '%s'", f, type);
		if (seen[res])
			return oci_error(p->err, "%s: %s given twice", f, type);
		seen[res] = true;
		oci_path(f, "%s.soft", path);
		if (oci_u64(oci_get(r, "soft"), f, &soft, p->err) < 0)
			return -1;
		oci_path(f, "%s.hard", path);
		if (oci_u64(oci_get(r, "hard"), f, &hard, p->err) < 0)
			return -1;
		if (soft > hard)
			return oci_error(p->err,
					 "%s: soft limit %" PRIu64 " above hard limit %" PRIu64,
					 path, soft, hard);
		/*
		 * A sandbox cannot raise a hard limit above its caller's. Host
		 * root raises its own first (the monitor and the sandbox inherit
		 * it); beyond what that allows, clamp to the caller's, and say
		 * so, rather than fail every container of an engine that asks
		 * for more than the host allows (rootless podman: NOFILE 1048576;
		 * docs/oci.md).
		 */
		{
			struct rlimit cur;

			if (!cordon_rlimit_raise_own(res, (rlim_t)hard) && getrlimit(res, &cur) == 0 &&
			    cur.rlim_max != RLIM_INFINITY && hard > (uint64_t)cur.rlim_max) {
				oci_warn(p->oci,
					 "%s: %s hard limit %" PRIu64
					 " clamped to the caller's hard limit %llu",
					 path, type, hard, (unsigned long long)cur.rlim_max);
				hard = cur.rlim_max;
				if (soft > hard)
					soft = hard;
			}
		}
		/* Replaces cordon's default for the same resource, else adds it. */
		for (k = 0; k < rl->n; k++)
			if (rl->entry[k].resource == res)
				break;
		if (k == CORDON_RLIMIT_MAX)
			return oci_error(p->err, "%s: too many limits", path);
		rl->entry[k] = (struct cordon_rlimit){ res, { (rlim_t)soft, (rlim_t)hard } };
		if (k == rl->n)
			rl->n++;
	}
	return 0;
}

static int parse_user(struct oci_parse *p, yajl_val user)
{
	struct cordon_oci *oci = p->oci;
	uint32_t uid, gid;
	yajl_val v;

	p->spec->uid = 0;
	p->spec->gid = 0;
	if (!user)
		return 0;
	if (oci_want_object(user, "process.user", p->err) < 0)
		return -1;
	/* 4294967295 is (uid_t)-1: "no change" to setresuid, never an id. */
	if (oci_u32(oci_get(user, "uid"), "process.user.uid", UINT32_MAX - 1, &uid, p->err) < 0 ||
	    oci_u32(oci_get(user, "gid"), "process.user.gid", UINT32_MAX - 1, &gid, p->err) < 0)
		return -1;
	p->spec->uid = uid;
	p->spec->gid = gid;
	if ((v = oci_get(user, "umask"))) {
		if (oci_u32(v, "process.user.umask", 0777, &oci->umask, p->err) < 0)
			return -1;
		oci->has_umask = true;
	}
	if ((v = oci_get(user, "additionalGids"))) {
		if (oci_want_array(v, "process.user.additionalGids", p->err) < 0)
			return -1;
		/* NGROUPS_MAX is 65536. */
		if (v->u.array.len > 65536)
			return oci_error(p->err, "process.user.additionalGids: more than 65536");
		oci->additional_gids = cordon_xcalloc(v->u.array.len + 1, sizeof(gid_t));
		for (size_t i = 0; i < v->u.array.len; i++) {
			char path[OCI_PATH_MAX];

			oci_path(path, "process.user.additionalGids[%zu]", i);
			if (oci_u32(v->u.array.values[i], path, UINT32_MAX - 1, &gid, p->err) < 0)
				return -1;
			oci->additional_gids[oci->n_additional_gids++] = gid;
		}
	}
	return 0;
}

static int parse_args_env(struct oci_parse *p, yajl_val process)
{
	yajl_val v = oci_get(process, "args");
	_cleanup_strv_ char **env = NULL;
	size_t n_env = 0;

	if (!v)
		return oci_error(p->err, "process.args: required");
	if (oci_strv(v, "process.args", &p->spec->argv, NULL, p->err) < 0)
		return -1;
	if (!p->spec->argv[0])
		return oci_error(p->err, "process.args: empty");
	if (!p->spec->argv[0][0])
		return oci_error(p->err, "process.args[0]: empty");
	if ((v = oci_get(process, "env"))) {
		if (oci_strv(v, "process.env", &env, &n_env, p->err) < 0)
			return -1;
		for (size_t i = 0; i < n_env; i++) {
			const char *eq = strchr(env[i], '=');

			if (!eq || eq == env[i])
				return oci_error(p->err,
						 "process.env[%zu]: expected NAME=VALUE, got '%s'",
						 i, env[i]);
			/* A repeated name: the later entry wins, as with --env. */
			if (cordon_spec_add_env(p->spec, env[i], p->err) < 0)
				return -1;
		}
	}
	return 0;
}

static int parse_console(struct oci_parse *p, yajl_val process)
{
	struct cordon_oci *oci = p->oci;
	yajl_val v, size;
	uint32_t h, w;

	if ((v = oci_get(process, "terminal")) &&
	    oci_bool(v, "process.terminal", &oci->terminal, p->err) < 0)
		return -1;
	size = oci_get(process, "consoleSize");
	if (!size)
		return 0;
	/* struct winsize has unsigned short rows and columns. */
	if (oci_want_object(size, "process.consoleSize", p->err) < 0 ||
	    oci_u32(oci_get(size, "height"), "process.consoleSize.height", UINT16_MAX, &h, p->err) <
		    0 ||
	    oci_u32(oci_get(size, "width"), "process.consoleSize.width", UINT16_MAX, &w, p->err) <
		    0)
		return -1;
	oci->has_console_size = true;
	oci->console_height = (uint16_t)h;
	oci->console_width = (uint16_t)w;
	return 0;
}

/* An LSM label: recorded; a non-empty one is noted as not applied. */
static int parse_lsm(struct oci_parse *p, yajl_val process, const char *key, char **out)
{
	char path[OCI_PATH_MAX];
	yajl_val v = oci_get(process, key);

	if (!v)
		return 0;
	oci_path(path, "process.%s", key);
	if (oci_string(v, path, out, p->err) < 0)
		return -1;
	if (**out)
		oci_warn(p->oci, "%s '%s': not applied (cordon applies no LSM profile)", path,
			 *out);
	return 0;
}

/* Fields of runtime-spec 1.2 that cordon reads but does not apply yet. */
static int note_unapplied(struct oci_parse *p, yajl_val process)
{
	static const char *const keys[] = { "scheduler", "ioPriority", "execCPUAffinity" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		yajl_val v = oci_get(process, keys[i]);
		char path[OCI_PATH_MAX];

		if (!v)
			continue;
		oci_path(path, "process.%s", keys[i]);
		if (oci_want_object(v, path, p->err) < 0)
			return -1;
		oci_warn(p->oci, "%s: not applied", path);
	}
	return 0;
}

int oci_parse_process(struct oci_parse *p, yajl_val process)
{
	struct cordon_oci *oci = p->oci;
	yajl_val v;
	int64_t adj;

	if (!process)
		return oci_error(p->err, "process: required");
	if (oci_want_object(process, "process", p->err) < 0)
		return -1;
	if (parse_args_env(p, process) < 0)
		return -1;
	v = oci_get(process, "cwd");
	if (!v)
		return oci_error(p->err, "process.cwd: required");
	if (oci_container_path(v, "process.cwd", &p->spec->cwd, p->err) < 0)
		return -1;
	if (cordon_cwd_in_proc(p->spec->cwd))
		return oci_error(p->err, "process.cwd: must not be inside /proc, got '%s'",
				 p->spec->cwd);
	if (parse_user(p, oci_get(process, "user")) < 0 || parse_console(p, process) < 0 ||
	    parse_caps(p, oci_get(process, "capabilities")) < 0 ||
	    parse_rlimits(p, oci_get(process, "rlimits")) < 0)
		return -1;
	/* Absent means false (the spec's default); an annotation may force it (oci.c). */
	oci->no_new_privileges = false;
	if ((v = oci_get(process, "noNewPrivileges")) &&
	    oci_bool(v, "process.noNewPrivileges", &oci->no_new_privileges, p->err) < 0)
		return -1;
	p->spec->security.new_privs_allowed = !oci->no_new_privileges;
	if ((v = oci_get(process, "oomScoreAdj"))) {
		if (oci_int(v, "process.oomScoreAdj", -1000, 1000, &adj, p->err) < 0)
			return -1;
		oci->has_oom_score_adj = true;
		oci->oom_score_adj = (int)adj;
	}
	if (parse_lsm(p, process, "apparmorProfile", &oci->apparmor_profile) < 0 ||
	    parse_lsm(p, process, "selinuxLabel", &oci->selinux_label) < 0)
		return -1;
	return note_unapplied(p, process);
}
