// SPDX-License-Identifier: Apache-2.0
/* Capability names, the safe set, and the workload's capability sets. */
#include <ctype.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "cordon/security.h"
#include "security-internal.h"

/*
 * Capabilities are handled with prctl and capset directly: libcap would be
 * one more shared library for every start to map and relocate, for a
 * name table and one system call.
 */

/* The kernel's names (include/uapi/linux/capability.h), without CAP_. */
static const char *const cap_names[CAP_LAST_CAP + 1] = {
	[CAP_CHOWN] = "CHOWN",
	[CAP_DAC_OVERRIDE] = "DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "DAC_READ_SEARCH",
	[CAP_FOWNER] = "FOWNER",
	[CAP_FSETID] = "FSETID",
	[CAP_KILL] = "KILL",
	[CAP_SETGID] = "SETGID",
	[CAP_SETUID] = "SETUID",
	[CAP_SETPCAP] = "SETPCAP",
	[CAP_LINUX_IMMUTABLE] = "LINUX_IMMUTABLE",
	[CAP_NET_BIND_SERVICE] = "NET_BIND_SERVICE",
	[CAP_NET_BROADCAST] = "NET_BROADCAST",
	[CAP_NET_ADMIN] = "NET_ADMIN",
	[CAP_NET_RAW] = "NET_RAW",
	[CAP_IPC_LOCK] = "IPC_LOCK",
	[CAP_IPC_OWNER] = "IPC_OWNER",
	[CAP_SYS_MODULE] = "SYS_MODULE",
	[CAP_SYS_RAWIO] = "SYS_RAWIO",
	[CAP_SYS_CHROOT] = "SYS_CHROOT",
	[CAP_SYS_PTRACE] = "SYS_PTRACE",
	[CAP_SYS_PACCT] = "SYS_PACCT",
	[CAP_SYS_ADMIN] = "SYS_ADMIN",
	[CAP_SYS_BOOT] = "SYS_BOOT",
	[CAP_SYS_NICE] = "SYS_NICE",
	[CAP_SYS_RESOURCE] = "SYS_RESOURCE",
	[CAP_SYS_TIME] = "SYS_TIME",
	[CAP_SYS_TTY_CONFIG] = "SYS_TTY_CONFIG",
	[CAP_MKNOD] = "MKNOD",
	[CAP_LEASE] = "LEASE",
	[CAP_AUDIT_WRITE] = "AUDIT_WRITE",
	[CAP_AUDIT_CONTROL] = "AUDIT_CONTROL",
	[CAP_SETFCAP] = "SETFCAP",
	[CAP_MAC_OVERRIDE] = "MAC_OVERRIDE",
	[CAP_MAC_ADMIN] = "MAC_ADMIN",
	[CAP_SYSLOG] = "SYSLOG",
	[CAP_WAKE_ALARM] = "WAKE_ALARM",
	[CAP_BLOCK_SUSPEND] = "BLOCK_SUSPEND",
	[CAP_AUDIT_READ] = "AUDIT_READ",
#ifdef CAP_PERFMON
	[CAP_PERFMON] = "PERFMON",
#endif
#ifdef CAP_BPF
	[CAP_BPF] = "BPF",
#endif
#ifdef CAP_CHECKPOINT_RESTORE
	[CAP_CHECKPOINT_RESTORE] = "CHECKPOINT_RESTORE",
#endif
};

/*
 * What --cap-add accepts: the set a container runtime traditionally grants
 * root in a container, less SETFCAP. Each is confined by the user
 * namespace (it acts only on objects the sandbox owns). Everything else --
 * SYS_ADMIN, NET_ADMIN, SYS_PTRACE, SYS_MODULE, BPF, PERFMON, SYS_RAWIO,
 * ... -- widens the kernel surface the workload reaches and is refused.
 * SETFCAP is refused for what it leaves behind: a security.capability
 * written through the idmapped workspace of a directory host root owns
 * names host root as its owner, and the host honours it.
 */
static const int safe_caps[] = {
	CAP_CHOWN,	CAP_DAC_OVERRIDE, CAP_FOWNER,	   CAP_FSETID,		 CAP_KILL,
	CAP_SETGID,	CAP_SETUID,	  CAP_SETPCAP,	   CAP_NET_BIND_SERVICE, CAP_NET_RAW,
	CAP_SYS_CHROOT, CAP_MKNOD,	  CAP_AUDIT_WRITE,
};

cordon_capset cordon_cap_safe_set(void)
{
	cordon_capset set = 0;

	for (size_t i = 0; i < ARRAY_SIZE(safe_caps); i++)
		set |= 1ULL << safe_caps[i];
	return set;
}

/*
 * A config.json may also grant SETFCAP (Docker's, containerd's and
 * podman's default sets do; runc and crun apply it): the launcher chose
 * it, with the root and volumes it set up (docs/security.md).
 */
cordon_capset cordon_cap_oci_set(void)
{
	return cordon_cap_safe_set() | 1ULL << CAP_SETFCAP;
}

static int last_cap(void)
{
	static int last = -1;

	if (last < 0) {
		/* The running kernel's; never above what this build knows. */
		last = CAP_LAST_CAP;
		while (last > 0 && prctl(PR_CAPBSET_READ, last, 0, 0, 0) < 0 && errno == EINVAL)
			last--;
	}
	return last;
}

/* Every capability the running kernel knows. */
static cordon_capset known_caps(void)
{
	return last_cap() >= 63 ? ~0ULL : (1ULL << (last_cap() + 1)) - 1;
}

const char *cordon_cap_name(int cap, char *buf, size_t len)
{
	if (cap >= 0 && cap <= CAP_LAST_CAP && cap_names[cap])
		snprintf(buf, len, "%s", cap_names[cap]);
	else
		snprintf(buf, len, "%d", cap);
	return buf;
}

int cordon_cap_parse(const char *flag, const char *name, cordon_capset *out,
		     struct cordon_error *err)
{
	const char *bare = strncasecmp(name, "CAP_", 4) == 0 ? name + 4 : name;

	if (strcasecmp(name, "ALL") == 0) {
		*out = known_caps();
		return 0;
	}
	for (int cap = 0; *bare && cap <= last_cap(); cap++) {
		if (cap_names[cap] && strcasecmp(cap_names[cap], bare) == 0) {
			*out = 1ULL << cap;
			return 0;
		}
	}
	return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: unknown capability '%s'", flag, name);
}

int cordon_security_before_ids(const struct cordon_security *sec, struct cordon_error *err)
{
	for (size_t i = 0; i < sec->rlimits.n; i++) {
		const struct cordon_rlimit *r = &sec->rlimits.entry[i];

		if (setrlimit(r->resource, &r->limit) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno, "setting rlimit %s",
						cordon_rlimit_name(r->resource));
	}
	for (int cap = 0; cap <= last_cap(); cap++) {
		if (sec->caps & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return cordon_error_set(err, CORDON_E_SECURITY, errno,
						"dropping capability %d from the bounding set", cap);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return cordon_error_set(err, CORDON_E_SECURITY, errno,
					"clearing ambient capabilities");
	/*
	 * A config's permitted set outlives the change to a uid other than
	 * 0 (the kernel clears it otherwise); execve clears the flag again.
	 */
	if (sec->config_sets && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "keepcaps");
	return 0;
}

/* The sets the process ends up with: the config's, or `cordon run`'s rule. */
static void final_sets(const struct cordon_security *sec, bool uid_is_root, cordon_capset *eff,
		       cordon_capset *perm, cordon_capset *inh)
{
	if (sec->config_sets) {
		*eff = sec->effective & known_caps();
		*perm = sec->permitted & known_caps();
		*inh = sec->inheritable & known_caps();
		return;
	}
	/*
	 * Root keeps exactly the granted set (execve as uid 0 recomputes
	 * permitted from the bounding set, so this matches what it will
	 * have); any other uid keeps nothing, as after a normal setuid.
	 * Inheritable and ambient stay empty.
	 */
	*eff = *perm = uid_is_root ? sec->caps & known_caps() : 0;
	*inh = 0;
}

/*
 * Installing a filter without no_new_privs takes CAP_SYS_ADMIN in our
 * own namespace: held from the id change until the filter is in.
 */
bool security_admin_for_seccomp(const struct cordon_security *sec, bool uid_is_root)
{
	cordon_capset eff, perm, inh;

	if (!sec->new_privs_allowed ||
	    (sec->seccomp == CORDON_SECCOMP_UNCONFINED && !sec->mode_guard))
		return false;
	final_sets(sec, uid_is_root, &eff, &perm, &inh);
	return !(eff & 1ULL << CAP_SYS_ADMIN);
}

int security_capset(const struct cordon_security *sec, bool uid_is_root, bool admin,
		    struct cordon_error *err)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	cordon_capset eff, perm, inh;

	final_sets(sec, uid_is_root, &eff, &perm, &inh);
	if (admin) {
		eff |= 1ULL << CAP_SYS_ADMIN;
		perm |= 1ULL << CAP_SYS_ADMIN;
	}
	data[0].effective = (uint32_t)eff;
	data[1].effective = (uint32_t)(eff >> 32);
	data[0].permitted = (uint32_t)perm;
	data[1].permitted = (uint32_t)(perm >> 32);
	data[0].inheritable = (uint32_t)inh;
	data[1].inheritable = (uint32_t)(inh >> 32);
	if (syscall(SYS_capset, &header, data) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "setting capabilities");
	return 0;
}

int cordon_security_after_ids(const struct cordon_security *sec, bool uid_is_root,
			      struct cordon_error *err)
{
	if (security_capset(sec, uid_is_root, security_admin_for_seccomp(sec, uid_is_root), err) <
	    0)
		return -1;
	/*
	 * Ambient capabilities survive the execve of a program without file
	 * capabilities, also for a uid other than 0: the kernel raises only
	 * what is permitted and inheritable (the parser dropped the rest).
	 */
	if (sec->config_sets) {
		for (int cap = 0; cap <= last_cap(); cap++)
			if ((sec->ambient & 1ULL << cap) &&
			    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
				return cordon_error_set(err, CORDON_E_SECURITY, errno,
							"raising ambient capability %d", cap);
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno, "keepcaps");
	}
	/* setuid binaries and file capabilities inside the rootfs gain nothing. */
	if (!sec->new_privs_allowed && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "no_new_privs");
	return 0;
}

int cordon_caps_keep_only(cordon_capset keep, struct cordon_error *err)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which goes next. */
	for (int cap = 0; cap <= last_cap(); cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno,
						"dropping capability %d from the bounding set",
						cap);
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno,
					"clearing ambient capabilities");
	keep &= known_caps();
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &header, data) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "setting capabilities");
	return 0;
}

int cordon_security_drop_all(uid_t uid, gid_t gid, bool setgroups_allowed, struct cordon_error *err)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	/* Root regains nothing by an id change or an execve, and the bits stay. */
	const unsigned long secure = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
				     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
				     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	/* The bounding set and the securebits need CAP_SETPCAP: before the ids change. */
	if (prctl(PR_SET_SECUREBITS, secure, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "securebits");
	for (int cap = 0; cap <= last_cap(); cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno,
						"dropping capability %d from the bounding set",
						cap);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno,
					"clearing ambient capabilities");
	if (setgroups_allowed && setgroups(0, NULL) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "setgroups");
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "changing to uid %u gid %u",
					(unsigned)uid, (unsigned)gid);
	if (syscall(SYS_capset, &header, data) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "clearing capabilities");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "no_new_privs");
	return 0;
}
