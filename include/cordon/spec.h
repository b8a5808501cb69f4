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
#include "cordon/userns.h"

#define CORDON_TMPFS_DEFAULT_MB 256
#define CORDON_TMPFS_MIN_MB 64
#define CORDON_KILL_AFTER_DEFAULT_MS 5000
#define CORDON_DEFAULT_HOSTNAME "cordon"
#define CORDON_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define CORDON_ID_MAX 64

struct cordon_bind {
	char *source;      /* absolute host path, resolved (cordon_path_open) */
	struct cordon_path_id source_id; /* the object checked: mounts refuse any other */
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
	uint32_t max_flows; /* --net-max-flows; 0: not given (finalize: the default) */

	/* Filled by finalize. */
	bool enabled;
	struct cordon_allowlist *allowlist;
	struct sockaddr_storage upstreams[CORDON_DNS_UPSTREAM_MAX];
	size_t n_upstreams;
	char *helper_path; /* veth: cordon-nethelper */
	char *pasta_path;  /* pasta: the pasta binary */
};

struct cordon_oci;

/* The audit log (include/cordon/audit.h, docs/audit.md): the flags, as settled by the CLI. */
struct cordon_audit_spec {
	bool off;          /* --audit none */
	bool on;           /* asked for: --audit FILE, CORDON_AUDIT (an OCI container's is off else) */
	char *path;        /* --audit FILE (absolute), or NULL: audit.jsonl in the state directory */
	int fd;            /* its fd (O_APPEND), opened when the flag was read; -1 */
	int unnamed_dir;   /* made by --audit without a name yet (O_TMPFILE): its directory, or -1 */
	char *unnamed_name; /* the name it gets when the sandbox begins (cordon_audit_start) */
	char *dir;         /* --audit-dir: where the state directory's log is kept at the end */
	char **redact;     /* --audit-redact patterns */
	size_t n_redact;
	uint64_t max_bytes; /* --audit-max; 0: CORDON_AUDIT_MAX_DEFAULT */
	bool env_read;     /* CORDON_AUDIT and CORDON_AUDIT_DIR were looked at */
};

struct cordon_spec {
	char *id;     /* [A-Za-z0-9][A-Za-z0-9_.-]{0,63} */
	char *rootfs; /* absolute, resolved (cordon_path_open); for messages and re-opening */
	struct cordon_path_id rootfs_id; /* the directory checked: mounts refuse any other */
	char **argv;  /* NULL-terminated, argv[0] non-empty */
	char **env;   /* the workload's whole environment, K=V */
	size_t n_env;
	char *hostname;
	char *cwd; /* inside the sandbox; NULL = /workspace if any, else / */
	char *workspace; /* host directory bound rw at /workspace, or NULL */
	struct cordon_path_id workspace_id; /* the directory checked (owner: the id map) */
	bool no_workspace; /* --no-workspace: not even the default (the cwd) */
	struct cordon_bind *binds;
	size_t n_binds;
	bool overlay;
	uint64_t tmpfs_size_mb;
	unsigned preserve_fds; /* OCI --preserve-fds: the caller's fds 3..3+N-1 reach the process */

	char *user; /* --user as given (USER[:GROUP]), resolved by finalize */
	uid_t uid;  /* the workload's uid/gid inside the sandbox */
	gid_t gid;
	char *home; /* HOME for the workload, from the rootfs passwd */
	enum cordon_userns_mode userns;

	uint64_t timeout_ms;    /* 0 = none */
	uint64_t kill_after_ms; /* grace between SIGTERM and SIGKILL */
	bool tty;               /* -t: a pty of the sandbox's own, relayed to the caller's terminal */
	bool output_capped;
	uint64_t output_max; /* bytes of stdout+stderr forwarded */
	char *result_json;   /* path, or NULL; for messages only */
	char *result_name;   /* its last component, written relative to: */
	int result_dir_fd;   /* its directory, opened (O_PATH) when the flag was read; -1 */
	/* Where the walk to it followed links or '..': cleared once finalize checked them. */
	struct cordon_path_links result_links;

	cordon_capset cap_add;  /* --cap-add (only from the safe set) */
	cordon_capset cap_drop; /* --cap-drop */
	struct cordon_security security; /* resolved by finalize */
	char *seccomp_profile;  /* --seccomp-profile FILE */
	bool seccomp_mode_given; /* --seccomp was on the command line */
	bool print_profile;     /* --print-profile: report, do not run */

	struct cordon_limits limits; /* --memory, --cpus, --pids, ... */
	struct cordon_user_limits user_limits; /* --user-limit, linux.sysctl user.*; settled by finalize */
	char *cgroup_parent;         /* --cgroup-parent, or NULL: the caller's cgroup */

	struct cordon_net_spec net;
	struct cordon_audit_spec audit;

	/*
	 * A session (`cordon create` without --bundle): the sandbox stays up
	 * with no command, its workload an idle process, until `cordon rm`,
	 * idle_timeout_ms without an exec running, or max_lifetime_ms.
	 */
	bool session;
	uint64_t idle_timeout_ms;  /* 0: none */
	uint64_t max_lifetime_ms;  /* 0: none (run, OCI); a session's default: 24 h */
	char **labels;		   /* --label K=V: key, value, ... NULL-terminated */
	size_t n_labels;
	/*
	 * The process that asked cordon for the sandbox, recorded in its state
	 * (cordon sweep): create's caller, run itself. Set by the command line.
	 */
	pid_t creator_pid;
	uint64_t creator_start;

	/*
	 * What only an OCI config.json can ask for (cordon_spec_from_oci);
	 * NULL for `cordon run` from flags. The common fields above are
	 * filled from the config as well (argv, env, cwd, hostname, rootfs,
	 * uid/gid, security, limits), so the rest of cordon reads one struct.
	 */
	struct cordon_oci *oci;
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

/*
 * Labels: at most CORDON_LABELS_MAX, a key of 1..63 of [A-Za-z0-9._/-] (a
 * letter or digit first and last), a value of at most CORDON_LABEL_VALUE_MAX
 * bytes without a control character.
 */
#define CORDON_LABELS_MAX 32
#define CORDON_LABEL_KEY_MAX 63
#define CORDON_LABEL_VALUE_MAX 256
#define CORDON_SESSION_LIFETIME_DEFAULT_MS (24ULL * 3600 * 1000)
/* A lifetime or idle timeout longer than this (a year) is refused as a typo. */
#define CORDON_SESSION_LIFETIME_MAX_MS (366ULL * 24 * 3600 * 1000)
bool cordon_label_key_valid(const char *key);
bool cordon_label_value_valid(const char *value);
/* --label K=V into spec->labels (flag: the option's name, for messages). */
int cordon_spec_add_label(struct cordon_spec *spec, const char *flag, const char *kv,
			  struct cordon_error *err);
/* A --label K=V or K filter: valid key (and value), split into *key, *value (NULL for K). */
int cordon_label_filter_parse(const char *text, char **key, char **value,
			      struct cordon_error *err);
bool cordon_hostname_valid(const char *name);
/*
 * Normalise an absolute sandbox path: collapse "//" and "/./", refuse ".."
 * components and relative paths. Returns a malloc'd string or NULL.
 */
char *cordon_path_normalize(const char *path);
/* A byte below 0x20 or 0x7f in s (a newline would split a line of the state's files). */
bool cordon_has_control(const char *s);
/*
 * Whether a normalised cwd lies in /proc: nothing a process should start
 * in, and the way through /proc/self/fd/N to whatever an fd points at.
 */
bool cordon_cwd_in_proc(const char *norm);

/*
 * Validate against the host: rootfs, workspace and bind sources exist and
 * have the right type, each opened once by cordon_path_open (the unsafe-
 * transition rule), checked on the fd and recorded (*_id) so that the
 * mounts refuse any other object; fills in the base environment (PATH, HOME, TERM,
 * HOSTNAME, container=cordon) in front of user entries. Nothing is
 * created; a failure names the flag and the path.
 */
int cordon_spec_finalize(struct cordon_spec *spec, struct cordon_error *err);

/*
 * Where the workload may write on the host: (dev, ino) is the workspace, a
 * writable --bind's source, the rootfs without --overlay or an OCI bind
 * mount's source but "rro" (*what and the path named, else NULL); and
 * the first of dir_fd (taken) and the directories above it up to / that
 * is one (*place, *what; *place NULL if none; -1 and errno on error).
 */
const char *cordon_spec_writable_place(const struct cordon_spec *spec, dev_t dev, ino_t ino,
				       const char **what);
int cordon_spec_writable_above(const struct cordon_spec *spec, int dir_fd, const char **place,
			       const char **what);
/*
 * A host path cordon writes into, checked against the sandbox's places:
 * a directory whose link or '..' its walk followed (links) that is one
 * of them or lies below one may be the workload's doing (a directory it
 * swapped for a link, or moved), whatever its owner. 0 when none is;
 * else -1 with err (CORDON_E_PATH naming flag and the place), also when
 * a directory cannot be looked at: nothing is to be written there.
 */
int cordon_spec_links_check(const struct cordon_spec *spec, const struct cordon_path_links *links,
			    const char *flag, struct cordon_error *err);
/* The same for a place the workload writes or only sees (a read-only bind, the rootfs). */
int cordon_spec_seen_above(const struct cordon_spec *spec, int dir_fd, const char **place,
			   const char **what);
/*
 * USER[:GROUP] (names or numbers) looked up in ROOT's /etc/passwd and
 * /etc/group, ROOT a directory fd (root_name says where, for messages):
 * each file resolved beneath it (RESOLVE_IN_ROOT, a link followed only
 * inside), looked at before it is opened (a regular file only, opened
 * O_NONBLOCK), its size capped. What run's --user does in the rootfs and
 * exec's --user NAME in the sandbox's root, from inside it. *home: the
 * entry's, or NULL.
 */
int cordon_user_resolve_at(int root, const char *root_name, const char *user, uid_t *uid,
			   gid_t *gid, char **home, struct cordon_error *err);

/*
 * A session's process confinement (src/spec/session.c), kept at create
 * (process.json) and read back by cordon exec: ids, env, cwd, the
 * bounding set, rlimits, the seccomp mode and its compiled program.
 */
char *cordon_spec_session_json(const struct cordon_spec *spec);
int cordon_spec_from_session(struct cordon_spec *spec, const char *id, const char *text,
			     size_t len, struct cordon_error *err);

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
/* The cordon-nethelper the veth backend runs: $CORDON_NETHELPER, the build tree's, or the installed one. */
const char *cordon_nethelper_program(void);

/* A fresh random id (12 hex digits). */
char *cordon_id_generate(void);

/* --- OCI runtime-spec config.json (docs/oci.md) ---------------------------- */

#define CORDON_OCI_VERSION "1.2.0"    /* what `cordon spec` writes */
#define CORDON_OCI_CONFIG_MAX CORDON_INPUT_JSON_MAX /* a bigger config.json is refused */

enum cordon_oci_ns {
	CORDON_OCI_NS_PID,
	CORDON_OCI_NS_NETWORK,
	CORDON_OCI_NS_MOUNT,
	CORDON_OCI_NS_IPC,
	CORDON_OCI_NS_UTS,
	CORDON_OCI_NS_USER,
	CORDON_OCI_NS_CGROUP,
	CORDON_OCI_NS_TIME,
	CORDON_OCI_NS_COUNT,
};

/* The namespace (enum cordon_oci_ns) that scopes sysctl key (dotted), or -1. */
int cordon_oci_sysctl_namespace(const char *key);

/* Namespaces a config may join by path: network, ipc, uts (a pod's). */
bool cordon_oci_ns_joinable(size_t type);
/* The path spec joins for type, or NULL (a new namespace, or no config). */
const char *cordon_spec_ns_path(const struct cordon_spec *spec, enum cordon_oci_ns type);
/*
 * A config's network, ipc or uts namespace that is not the sandbox's own:
 * joined by path, or shared with the runtime (no entry of that type: the
 * spec says the container inherits the runtime's). False for `cordon run`.
 */
bool cordon_spec_ns_not_new(const struct cordon_spec *spec, enum cordon_oci_ns type);
/* Not listed in the config at all: the runtime's (network, ipc, uts only). */
bool cordon_spec_ns_shared(const struct cordon_spec *spec, enum cordon_oci_ns type);

enum cordon_oci_hook_kind {
	CORDON_OCI_HOOK_PRESTART, /* deprecated by the spec, still run by runtimes */
	CORDON_OCI_HOOK_CREATE_RUNTIME,
	CORDON_OCI_HOOK_CREATE_CONTAINER,
	CORDON_OCI_HOOK_START_CONTAINER,
	CORDON_OCI_HOOK_POSTSTART,
	CORDON_OCI_HOOK_POSTSTOP,
	CORDON_OCI_HOOK_COUNT,
};

/* "prestart", "createRuntime", ...: the config's key of a kind. */
const char *cordon_oci_hook_name(enum cordon_oci_hook_kind kind);

struct cordon_oci_hook {
	char *path; /* absolute: on the host (runtime namespace), startContainer's in the container */
	char **args; /* NULL-terminated; may be NULL (then argv = { path }) */
	char **env;  /* NULL-terminated K=V; may be NULL */
	uint32_t timeout_s; /* 0 = none */
};

/* One range of linux.uidMappings / a mount's uidMappings. */
struct cordon_oci_idmap {
	uint32_t container_id;
	uint32_t host_id;
	uint32_t size;
};

#define CORDON_OCI_IDMAP_MAX 340 /* the kernel's limit per map since 4.15 */

enum cordon_oci_mount_kind {
	CORDON_OCI_MOUNT_BIND, /* type "bind"/"none"/absent with bind or rbind */
	CORDON_OCI_MOUNT_PROC,
	CORDON_OCI_MOUNT_SYSFS,
	CORDON_OCI_MOUNT_TMPFS,
	CORDON_OCI_MOUNT_DEVPTS,
	CORDON_OCI_MOUNT_MQUEUE,
	CORDON_OCI_MOUNT_CGROUP, /* "cgroup" or "cgroup2": the sandbox's own */
};

struct cordon_oci_mount {
	enum cordon_oci_mount_kind kind;
	char *destination; /* absolute, normalised, never "/" */
	char *type;        /* as given, or NULL */
	char *source;      /* bind: absolute host path (relative ones joined to the
			    * bundle); others: the name given, or NULL */
	struct cordon_path_id source_id; /* bind: the object checked at validation */
	char **options;    /* as given, NULL-terminated (NULL when none) */
	unsigned long flags;      /* MS_RDONLY, MS_NOSUID, ... set by the options */
	unsigned long clear;      /* flags an option explicitly cleared (rw, suid, ...) */
	unsigned long propagation; /* MS_PRIVATE/MS_SLAVE/MS_SHARED/MS_UNBINDABLE [|MS_REC], 0 */
	bool recursive;     /* rbind */
	bool recursive_ro;  /* rro: mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY) */
	bool idmap;         /* "idmap"/"ridmap" option or uidMappings given */
	bool idmap_recursive;
	char *data;         /* the filesystem options left (size=64m,mode=755), or NULL */
	struct cordon_oci_idmap *uid_map, *gid_map;
	size_t n_uid_map, n_gid_map;
};

/*
 * The destinations whose filesystem cordon always makes itself (/proc,
 * /dev, /dev/pts, /dev/mqueue): an entry there is satisfied by cordon's
 * own mount and not applied (docs/oci.md, "Mounts"). Every other entry
 * is mounted as the config says.
 */
bool cordon_oci_mount_provided(const struct cordon_oci_mount *m);

/* linux.devices: a node created in the sandbox's /dev. */
struct cordon_oci_device {
	char type; /* 'c', 'b', 'u' (unbuffered char) or 'p' (fifo) */
	char *path; /* absolute, normalised, below /dev */
	int64_t major, minor; /* -1 for 'p' */
	bool has_mode, has_uid, has_gid;
	uint32_t file_mode; /* permission bits only (07777) */
	uint32_t uid, gid;
};

struct cordon_oci_caps {
	cordon_capset bounding, effective, permitted, inheritable, ambient;
};

struct cordon_oci {
	char *bundle;      /* the bundle directory as given */
	char *config_text; /* the config.json parsed, as it was (NUL-terminated) */
	size_t config_len;
	char *oci_version; /* ociVersion */
	bool root_readonly;

	/* process (argv, env, cwd, uid, gid, rlimits live in cordon_spec) */
	bool terminal;
	bool has_console_size;
	uint16_t console_height, console_width;
	gid_t *additional_gids;
	size_t n_additional_gids;
	bool has_umask;
	uint32_t umask; /* 0..0777 */
	struct cordon_oci_caps caps; /* spec->security.caps is the bounding set */
	bool no_new_privileges; /* as asked; cordon sets no_new_privs regardless */
	bool has_oom_score_adj;
	int oom_score_adj; /* -1000..1000 */
	char *apparmor_profile; /* recorded; cordon applies no LSM profile */
	char *selinux_label;

	char *domainname;
	struct cordon_oci_mount *mounts;
	size_t n_mounts;
	struct cordon_oci_hook *hooks[CORDON_OCI_HOOK_COUNT];
	size_t n_hooks[CORDON_OCI_HOOK_COUNT];
	char **annotations; /* key, value, key, value, ... NULL-terminated */
	size_t n_annotations; /* number of pairs */

	/* linux */
	bool ns_listed[CORDON_OCI_NS_COUNT]; /* the namespace is in linux.namespaces */
	char *ns_path[CORDON_OCI_NS_COUNT];  /* join this one instead of a new one */
	struct cordon_oci_idmap *uid_map, *gid_map;
	size_t n_uid_map, n_gid_map;
	struct cordon_oci_device *devices;
	size_t n_devices;
	bool has_resources;
	struct cordon_resources resources; /* memory/cpu/pids also in spec->limits */
	char *cgroups_path;
	char **masked_paths, **readonly_paths; /* absolute, normalised */
	size_t n_masked_paths, n_readonly_paths;
	unsigned long rootfs_propagation; /* MS_* | MS_REC, 0 = not set */
	char **sysctl; /* key, value, ... NULL-terminated */
	size_t n_sysctl; /* pairs */
	char *mount_label; /* recorded and ignored (no SELinux) */
	bool has_personality;
	unsigned long personality; /* PER_LINUX or PER_LINUX32 */
	bool has_seccomp; /* linux.seccomp given: spec->security holds it compiled */

	/* Fields accepted but not applied, one line each (docs/oci.md). */
	char **warnings;
	size_t n_warnings;
};

void cordon_oci_free(struct cordon_oci *oci);

/*
 * Parse a config.json (runtime-spec 1.0 to 1.2) into an initialised spec;
 * what an earlier parse set is replaced, the id is kept. bundle_dir is where relative paths (root.path, bind
 * sources) start. Unknown fields are ignored, as the spec requires; a
 * wrong type or an impossible value is a CORDON_E_SPEC error naming the
 * JSON path ("mounts[2].destination: must be absolute"). Nothing on the
 * host is touched: cordon_spec_finalize checks paths afterwards.
 */
int cordon_spec_from_oci(struct cordon_spec *spec, const char *bundle_dir, const char *json,
			 size_t len, struct cordon_error *err);
/*
 * Replace the process part of a parsed config (argv, env, cwd, user,
 * capabilities, rlimits, terminal, ...) with an OCI "process" object, as
 * `cordon exec --process FILE` gives it. Errors name the field
 * ("process.cwd: must be absolute"); nothing of the old process stays.
 */
int cordon_spec_process_from_json(struct cordon_spec *spec, const char *json, size_t len,
				  struct cordon_error *err);
/* The same for BUNDLE/config.json, read through an fd of the bundle. */
int cordon_spec_from_bundle(struct cordon_spec *spec, const char *bundle_dir,
			    struct cordon_error *err);

/*
 * A linux.resources object on its own (`cordon update --resources FILE`,
 * runc's format), checked as in a config.json; errors name the field
 * (`linux.resources.cpu.shares: ...`). pids.limit -1 stays -1 (remove
 * the limit); other fields the cgroup module does not change are left
 * 0. Free res->cpus, ->mems and ->devices with cordon_resources_free.
 */
int cordon_oci_resources_parse(const char *json, size_t len, struct cordon_resources *res,
			       struct cordon_error *err);
void cordon_resources_free(struct cordon_resources *res);

/*
 * The config.json `cordon spec` writes (malloc'd JSON text): a shell in
 * ./rootfs with cordon's defaults. rootless: map only the caller's ids
 * (uid and gid given), no devpts gid, no linux.resources.
 */
char *cordon_oci_default_config(bool rootless, uid_t uid, gid_t gid);
/* The runtime features document (`cordon features`), malloc'd JSON text. */
char *cordon_oci_features(void);

#endif
