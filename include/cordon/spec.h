/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec: the validated description of one sandbox. Command-line flags (and,
 * later, an OCI config.json) are turned into a struct cordon_spec first;
 * every other module takes the struct, never raw strings from the user.
 */
#ifndef CORDON_SPEC_H
#define CORDON_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon/cgroup.h"
#include "cordon/core.h"
#include "cordon/net.h"
#include "cordon/security.h"

#define CORDON_TMPFS_DEFAULT_MB 256
#define CORDON_TMPFS_MIN_MB 64
#define CORDON_KILL_AFTER_DEFAULT_MS 5000
#define CORDON_DEFAULT_HOSTNAME "cordon"
#define CORDON_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define CORDON_ID_MAX 64

struct cordon_bind {
	char *source;      /* absolute host path, resolved (realpath) */
	char *destination; /* absolute path inside the sandbox, normalised */
	bool writable;
};

enum cordon_userns_mode {
	CORDON_USERNS_AUTO, /* a new user namespace (always, unless "host") */
	CORDON_USERNS_HOST, /* rootful only: no user namespace for setup */
};

enum cordon_net_backend {
	CORDON_NET_BACKEND_AUTO,  /* veth as root, pasta otherwise */
	CORDON_NET_BACKEND_VETH,  /* cordon-nethelper: a veth to the host, masquerade */
	CORDON_NET_BACKEND_PASTA, /* pasta (package passt) on a tap in the gateway */
};

#define CORDON_DNS_UPSTREAM_MAX 8

/*
 * Allowlisted egress (docs/network.md). The flags only collect; finalize
 * builds and checks everything, and sets enabled when any --net-allow or
 * --net-allow-file was given. Without it the sandbox has only lo.
 */
struct cordon_net_spec {
	char **allow;       /* --net-allow values, in order */
	size_t n_allow;
	char **allow_files; /* --net-allow-file paths */
	size_t n_allow_files;
	bool allow_any;     /* --net-allow-any: 0.0.0.0/0 and ::/0 may be listed */
	char **upstream_text; /* --dns-upstream values */
	size_t n_upstream_text;
	bool dns_none;      /* --dns none: no resolver, port 53 closed */
	bool dns_given;     /* --dns was on the command line */
	bool allow_host_loopback; /* --allow-host-loopback (pasta only; audited) */
	enum cordon_net_backend backend;
	char *pool;         /* --net-pool: the veth uplinks' /30 pool, or NULL */

	/* Filled by finalize. */
	bool enabled;
	struct cordon_allowlist *allowlist;
	struct sockaddr_storage upstreams[CORDON_DNS_UPSTREAM_MAX];
	size_t n_upstreams;
	char *helper_path; /* veth: cordon-nethelper */
	char *pasta_path;  /* pasta: the pasta binary */
};

struct cordon_spec {
	char *id;     /* [A-Za-z0-9][A-Za-z0-9_.-]{0,63} */
	char *rootfs; /* absolute, resolved */
	char **argv;  /* NULL-terminated, argv[0] non-empty */
	char **env;   /* the workload's whole environment, K=V */
	size_t n_env;
	char *hostname;
	char *cwd; /* inside the sandbox; NULL = /workspace if any, else / */
	char *workspace; /* host directory bound rw at /workspace, or NULL */
	bool no_workspace; /* --no-workspace: not even the default (the cwd) */
	struct cordon_bind *binds;
	size_t n_binds;
	bool overlay;
	uint64_t tmpfs_size_mb;

	char *user; /* --user as given (USER[:GROUP]), resolved by finalize */
	uid_t uid;  /* the workload's uid/gid inside the sandbox */
	gid_t gid;
	char *home; /* HOME for the workload, from the rootfs passwd */
	enum cordon_userns_mode userns;

	uint64_t timeout_ms;    /* 0 = none */
	uint64_t kill_after_ms; /* grace between SIGTERM and SIGKILL */
	bool output_capped;
	uint64_t output_max; /* bytes of stdout+stderr forwarded */
	char *result_json;   /* path, or NULL */

	cordon_capset cap_add;  /* --cap-add (only from the safe set) */
	cordon_capset cap_drop; /* --cap-drop */
	struct cordon_security security; /* resolved by finalize */
	char *seccomp_profile;  /* --seccomp-profile FILE */
	bool seccomp_mode_given; /* --seccomp was on the command line */
	bool print_profile;     /* --print-profile: report, do not run */

	struct cordon_limits limits; /* --memory, --cpus, --pids, ... */
	char *cgroup_parent;         /* --cgroup-parent, or NULL: the caller's cgroup */

	struct cordon_net_spec net;
};

void cordon_spec_init(struct cordon_spec *spec);
void cordon_spec_free(struct cordon_spec *spec);

/* Parsers for single flag values; each names the flag in its error. */
int cordon_spec_parse_user(const char *value, char **user, struct cordon_error *err);
int cordon_spec_parse_bind(const char *value, struct cordon_bind *bind,
			   struct cordon_error *err);
int cordon_spec_add_env(struct cordon_spec *spec, const char *kv, struct cordon_error *err);
int cordon_spec_pass_env(struct cordon_spec *spec, const char *name, struct cordon_error *err);
/* Add KEY=VALUE unless the user already set KEY. */
void cordon_spec_env_default(struct cordon_spec *spec, const char *kv);

/* Lexical checks that need no filesystem access. */
bool cordon_id_valid(const char *id);
bool cordon_hostname_valid(const char *name);
/*
 * Normalise an absolute sandbox path: collapse "//" and "/./", refuse ".."
 * components and relative paths. Returns a malloc'd string or NULL.
 */
char *cordon_path_normalize(const char *path);

/*
 * Validate against the host: rootfs, workspace and bind sources exist and
 * have the right type; fills in the base environment (PATH, HOME, TERM,
 * HOSTNAME, container=cordon) in front of user entries. Nothing is
 * created; a failure names the flag and the path.
 */
int cordon_spec_finalize(struct cordon_spec *spec, struct cordon_error *err);

/*
 * The network part of finalize (src/spec/net.c): the allowlist, DNS
 * upstreams (default: the host's resolv.conf without loopback stubs), the
 * backend and the programs it needs. Called by cordon_spec_finalize.
 */
int cordon_spec_finalize_net(struct cordon_spec *spec, struct cordon_error *err);
/* ADDR, ADDR:PORT, [V6ADDR]:PORT (port 53 by default). */
int cordon_dns_upstream_parse(const char *value, struct sockaddr_storage *out);
/* Nameservers of a resolv.conf text, loopback ones skipped (counted in *skipped). */
size_t cordon_resolv_conf_nameservers(const char *text, struct sockaddr_storage *out, size_t cap,
				      size_t *skipped);

/* Path of the built-in rootfs: the build tree's, else the installed one. */
const char *cordon_default_rootfs(void);

/* A fresh random id (12 hex digits). */
char *cordon_id_generate(void);

#endif
