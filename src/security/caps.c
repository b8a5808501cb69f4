// SPDX-License-Identifier: Apache-2.0
/* Capability names, the safe set, and the workload's capability sets. */
#include <ctype.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "cordon/security.h"

/*
 * What --cap-add accepts: the set a container runtime traditionally grants
 * root in a container. Each is confined by the user namespace (it acts
 * only on objects the sandbox owns). Everything else -- SYS_ADMIN,
 * NET_ADMIN, SYS_PTRACE, SYS_MODULE, BPF, PERFMON, SYS_RAWIO, ... --
 * widens the kernel surface the workload reaches and is refused.
 */
static const int safe_caps[] = {
	CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FOWNER,	    CAP_FSETID,	    CAP_KILL,
	CAP_SETGID, CAP_SETUID,	      CAP_SETPCAP,	    CAP_NET_BIND_SERVICE, CAP_NET_RAW,
	CAP_SYS_CHROOT, CAP_MKNOD,    CAP_AUDIT_WRITE,	    CAP_SETFCAP,
};

cordon_capset cordon_cap_safe_set(void)
{
	cordon_capset set = 0;

	for (size_t i = 0; i < ARRAY_SIZE(safe_caps); i++)
		set |= 1ULL << safe_caps[i];
	return set;
}

static int last_cap(void)
{
	static int last = -1;

	if (last < 0) {
		/* The running kernel's; never above what this build knows. */
		last = (int)cap_max_bits() - 1;
		if (last < 0 || last > CAP_LAST_CAP)
			last = CAP_LAST_CAP;
	}
	return last;
}

const char *cordon_cap_name(int cap, char *buf, size_t len)
{
	char *name = cap_to_name((cap_value_t)cap);
	const char *p = name;

	if (name && strncasecmp(p, "cap_", 4) == 0)
		p += 4;
	snprintf(buf, len, "%s", p ? p : "?");
	for (char *q = buf; *q; q++)
		*q = (char)toupper((unsigned char)*q);
	cap_free(name);
	return buf;
}

int cordon_cap_parse(const char *flag, const char *name, cordon_capset *out,
		     struct cordon_error *err)
{
	char full[64];
	cap_value_t v;

	if (strcasecmp(name, "ALL") == 0) {
		*out = last_cap() >= 63 ? ~0ULL : (1ULL << (last_cap() + 1)) - 1;
		return 0;
	}
	if (strncasecmp(name, "CAP_", 4) == 0)
		snprintf(full, sizeof(full), "%s", name);
	else
		snprintf(full, sizeof(full), "cap_%s", name);
	for (char *q = full; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	if (!*name || cap_from_name(full, &v) < 0 || v < 0 || v > last_cap())
		return cordon_error_set(err, CORDON_E_USAGE, 0, "%s: unknown capability '%s'", flag,
					name);
	*out = 1ULL << v;
	return 0;
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
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "clearing ambient capabilities");
	return 0;
}

int cordon_security_after_ids(const struct cordon_security *sec, bool uid_is_root,
			      struct cordon_error *err)
{
	cap_t caps = cap_init(); /* all three sets empty */
	int r = 0;

	if (!caps)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "cap_init");
	/*
	 * Root keeps exactly the granted set (execve as uid 0 recomputes
	 * permitted from the bounding set, so this matches what it will
	 * have); any other uid keeps nothing, as after a normal setuid.
	 * Inheritable and ambient stay empty.
	 */
	if (uid_is_root) {
		for (int cap = 0; cap <= last_cap(); cap++) {
			cap_value_t v = cap;

			if (!(sec->caps & (1ULL << cap)))
				continue;
			if (cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0 ||
			    cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0)
				r = -1;
		}
	}
	if (r == 0 && cap_set_proc(caps) < 0)
		r = -1;
	cap_free(caps);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "setting capabilities");
	/* setuid binaries and file capabilities inside the rootfs gain nothing. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "no_new_privs");
	return 0;
}
