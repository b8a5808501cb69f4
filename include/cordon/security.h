/* SPDX-License-Identifier: Apache-2.0 */
/*
 * security: what confines the workload after the namespaces: its
 * capability sets (libcap), rlimits, no_new_privs and seccomp (libseccomp,
 * precompiled at build time for the default profile).
 *
 * Everything here is applied by the workload process itself, after its
 * ids are set and before execve, in the order cordon_security_apply()
 * documents; the parsers run at validation time, before anything exists.
 */
#ifndef CORDON_SECURITY_H
#define CORDON_SECURITY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "cordon/core.h"

/* --- capabilities ------------------------------------------------------ */

/* A set of capabilities as a bit mask (bit N = capability N). */
typedef uint64_t cordon_capset;

/*
 * Parse "NET_RAW", "cap_net_raw" or "ALL". Fills *out with one bit (or all
 * known ones for ALL). The flag name goes into the error message.
 */
int cordon_cap_parse(const char *flag, const char *name, cordon_capset *out,
		     struct cordon_error *err);
/* The capabilities --cap-add accepts (see docs/security.md). */
cordon_capset cordon_cap_safe_set(void);
/* What a config.json (and `cordon exec --cap`) may grant: the safe set and SETFCAP. */
cordon_capset cordon_cap_oci_set(void);
/* Name of capability bit n without the CAP_ prefix, upper case. */
const char *cordon_cap_name(int cap, char *buf, size_t len);

/* --- rlimits ------------------------------------------------------------ */

#define CORDON_RLIMIT_MAX 16

struct cordon_rlimit {
	int resource; /* RLIMIT_* */
	struct rlimit limit;
};

struct cordon_rlimits {
	struct cordon_rlimit entry[CORDON_RLIMIT_MAX];
	size_t n;
};

/* The defaults every sandbox gets (core 0, nofile, nproc, sigpending, msgqueue; security.md). */
void cordon_rlimits_default(struct cordon_rlimits *r);
/* Parse NAME=SOFT[:HARD] (NAME: core, nofile, nproc, ... or RLIMIT_x; "unlimited"). */
int cordon_rlimit_parse(const char *value, struct cordon_rlimits *r, struct cordon_error *err);
const char *cordon_rlimit_name(int resource);
/*
 * Make our own hard limit of resource at least hard, so that a sandbox we
 * start may have it: true when it already is or could be raised (host
 * root: CAP_SYS_RESOURCE, and for NOFILE at most fs.nr_open).
 */
bool cordon_rlimit_raise_own(int resource, rlim_t hard);
/*
 * Lower our own RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE (soft and hard) to
 * r's hard limits (the defaults when r has none), never raising either:
 * called by the init right before it creates the workload's user
 * namespace, whose kernel rlimit_max then bounds the sandbox's total.
 */
int cordon_rlimits_bound_sandbox(const struct cordon_rlimits *r, struct cordon_error *err);
/* RLIMIT_* for "nofile", "NOFILE" or "RLIMIT_NOFILE"; -1 when unknown. */
int cordon_rlimit_from_name(const char *name);

/* --- seccomp -------------------------------------------------------------- */

enum cordon_seccomp_mode {
	CORDON_SECCOMP_DEFAULT,    /* the built-in profile */
	CORDON_SECCOMP_PROFILE,    /* an OCI seccomp JSON file */
	CORDON_SECCOMP_UNCONFINED, /* none (audited, warned) */
};

/* A compiled filter program: cBPF instructions, ready for the kernel. */
struct cordon_bpf {
	const void *insns; /* struct sock_filter[] */
	size_t len;        /* number of instructions */
};

/* The default profile: one program, generated at build time (seccomp-gen.c). */
size_t cordon_seccomp_default(const struct cordon_bpf **filters);
/*
 * The mode guard (seccomp-gen.c): only the default profile's setuid and
 * setgid mode checks and openat2's ENOSYS, on every x86 ABI. Installed
 * under --seccomp unconfined or a --seccomp-profile when the sandbox has a
 * host-backed writable tree (docs/security.md).
 */
const struct cordon_bpf *cordon_seccomp_mode_guard(void);
/*
 * The DNS proxy's process (seccomp-gen.c): its socket, epoll and memory
 * calls, IPv4/IPv6 UDP/TCP sockets only, no executable memory; anything
 * else kills it (docs/security.md, "The DNS proxy's process").
 */
const struct cordon_bpf *cordon_seccomp_dnsproxy(void);
/*
 * Where the proxy's process keeps its UDP listeners (src/sandbox/egress/proxy.c):
 * the only fds its filter lets sendto name an address on. Every other
 * socket it has is connected (its upstream sockets, the supervisor's).
 * Its RLIMIT_NOFILE, a power of two: the filter lets close name fds
 * below it only (and never a listener).
 */
#define CORDON_DNSPROXY_FD_UDP 4
#define CORDON_DNSPROXY_N_UDP 2
#define CORDON_DNSPROXY_NOFILE 128
/* Hex SHA-256 over the concatenated programs: what was loaded, exactly. */
void cordon_seccomp_digest(const struct cordon_bpf *filters, size_t n, char out[65]);

struct cordon_security;

/*
 * Compile an OCI seccomp profile (linux.seccomp JSON) into sec->filters
 * with libseccomp. Runs at validation time; errors name the JSON path.
 */
int cordon_seccomp_profile_load(const char *path, struct cordon_security *sec,
				struct cordon_error *err);
/*
 * The same for a profile object already parsed by yajl_tree (a yajl_val):
 * the linux.seccomp of a config.json. Messages name the field relative to
 * the profile ("syscalls[2].action: ..."); the caller says where it is.
 */
struct yajl_val_s;
int cordon_seccomp_oci_compile(const struct yajl_val_s *profile, struct cordon_security *sec,
			       struct cordon_error *err);
void cordon_seccomp_profile_free(struct cordon_security *sec);
/* A program of len instructions (malloc'd, taken) as sec's one filter, freed with it. */
void cordon_seccomp_adopt(struct cordon_security *sec, void *insns, size_t len);

/* The names an OCI profile may use, for the runtime features document. */
enum cordon_seccomp_oci_kind {
	CORDON_SECCOMP_OCI_ACTION,
	CORDON_SECCOMP_OCI_OPERATOR,
	CORDON_SECCOMP_OCI_ARCH,
	CORDON_SECCOMP_OCI_FLAG,
};
/* The i-th name of a kind, NULL past the last. */
const char *cordon_seccomp_oci_name(enum cordon_seccomp_oci_kind kind, size_t i);

/* Install filters (the process must have no_new_privs set, or CAP_SYS_ADMIN effective). */
int cordon_seccomp_install(const struct cordon_bpf *filters, size_t n,
			   struct cordon_error *err);

/* --- the whole sequence --------------------------------------------------- */

struct cordon_security {
	cordon_capset caps; /* bounding set (and, for uid 0, permitted/effective) */
	/*
	 * An OCI config's process.capabilities: the effective, permitted,
	 * inheritable and ambient sets applied as given (caps holds the
	 * bounding set). Without it (`cordon run`) root gets caps as
	 * effective and permitted, any other uid nothing, and inheritable and
	 * ambient stay empty.
	 */
	bool config_sets;
	cordon_capset effective, permitted, inheritable, ambient;
	/*
	 * An OCI config's process.noNewPrivileges false (and no annotation
	 * forcing it): no_new_privs is left unset. Never for `cordon run`;
	 * zero, the default, sets it.
	 */
	bool new_privs_allowed;
	struct cordon_rlimits rlimits;
	enum cordon_seccomp_mode seccomp;
	const struct cordon_bpf *filters;
	size_t n_filters;
	void *owned; /* filters compiled from a profile (freed with the spec) */
	/*
	 * Install cordon_seccomp_mode_guard() before filters: the profile is
	 * not the default and the sandbox writes a host-backed tree.
	 */
	bool mode_guard;
};

/*
 * Steps that need the workload's capabilities in its own namespace, before
 * its ids change: rlimits (raising a hard limit needs CAP_SYS_RESOURCE),
 * the bounding set (dropping needs CAP_SETPCAP), ambient set cleared.
 */
int cordon_security_before_ids(const struct cordon_security *sec, struct cordon_error *err);
/*
 * After setresuid: exact capability sets, the ambient set raised, then
 * no_new_privs. Where no_new_privs is left off and seccomp is still to
 * come, CAP_SYS_ADMIN stays effective until the filter is installed
 * (the kernel asks for one or the other): cordon_security_seccomp drops
 * it again.
 */
int cordon_security_after_ids(const struct cordon_security *sec, bool uid_is_root,
			      struct cordon_error *err);
/*
 * A cordon process that reads hostile bytes and needs no privilege at
 * all (the DNS proxy): securebits that keep root from regaining
 * anything, an empty bounding set, no ambient capabilities, no
 * supplementary groups (where setgroups is allowed), the ids uid and
 * gid, empty capability sets, not dumpable, no_new_privs.
 */
int cordon_security_drop_all(uid_t uid, gid_t gid, bool setgroups_allowed,
			     struct cordon_error *err);
/* The last step before execve: the filters, then the final capability sets. */
int cordon_security_seccomp(const struct cordon_security *sec, bool uid_is_root,
			    struct cordon_error *err);

/*
 * A cordon process that stays in a sandbox (its init) and needs no more
 * than keep: the bounding, permitted and effective sets become keep,
 * inheritable and ambient empty. Needs CAP_SETPCAP. 0 or -1.
 */
int cordon_caps_keep_only(cordon_capset keep, struct cordon_error *err);

/*
 * self.c: the binary the sandbox can reach through /proc/self/exe. Call
 * cordon_self_init from main. cordon_self_seal re-executes the program
 * from a sealed memfd copy (with main's argv) when the binary could be
 * changed by ids the maps give the sandbox (host-side ids: "outside");
 * it returns 0 when no copy is needed or this already is one, -1 (err
 * set) when the copy failed. cordon_self_seal_for takes the maps of a
 * running sandbox's process PID, which PIDFD (its pidfd, start time
 * already checked) pins against pid reuse.
 */
struct cordon_idmap;
void cordon_self_init(char **argv);
int cordon_self_seal(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
		     struct cordon_error *err);
int cordon_self_seal_for(pid_t pid, int pidfd, struct cordon_error *err);
/*
 * A sealed memfd (seal, shrink, grow, write) holding the regular file SRC,
 * named NAME, with memfd_create FLAGS (MFD_CLOEXEC or 0); EXEC_ONLY copies
 * only what execve of an ELF file reads. Returns the fd or -errno.
 */
int cordon_sealed_copy(int src, const char *name, bool exec_only, unsigned int flags);

#endif
