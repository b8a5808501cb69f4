/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit: a sandbox's audit log (docs/audit.md), JSON Lines, one object per
 * event, each with its time, the sandbox's id and its labels. The
 * schema is docs/audit.schema.json.
 *
 * Where: --audit FILE (or CORDON_AUDIT), else audit.jsonl in the
 * sandbox's state directory, copied when the state goes into the audit
 * directory (--audit-dir, CORDON_AUDIT_DIR). The supervisor opens it
 * before anything of the sandbox exists and records in the state
 * directory (CORDON_AUDIT_RECORD) how later commands on the sandbox
 * (exec, update, delete) open it again: the same file (device and inode
 * checked), the same redaction rules, the same cap.
 *
 * What never reaches it: an environment value (create writes the keys),
 * and whatever the redaction rules match in an argv (defaults for common
 * token shapes, plus --audit-redact). The file has a size cap: past it
 * events are dropped and counted, never written (an exec event gives way
 * first to a minimal record, in a reserve of its own; a later command's
 * drops are counted in the state directory's CORDON_AUDIT_DROPS, for the
 * cleanup event to tell); DNS events, which the
 * workload drives, stop at three quarters of it and at a rate of
 * CORDON_AUDIT_DNS_PER_S, so the workload cannot crowd out the
 * caller's own events (exec, policy, cleanup).
 *
 * Every writer appends whole lines with one write(2) on an O_APPEND fd,
 * so concurrent commands on one sandbox never interleave within a line.
 */
#ifndef CORDON_AUDIT_H
#define CORDON_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon/core.h"
#include "cordon/net.h"
#include "cordon/spec.h"

#define CORDON_AUDIT_FILE "audit.jsonl"  /* in the state directory, by default */
#define CORDON_AUDIT_RECORD "audit.json" /* in the state directory: where and how */
#define CORDON_AUDIT_DROPS "audit.drops"  /* in the state directory: later commands' drops */
#define CORDON_AUDIT_MAX_DEFAULT (8u << 20)
#define CORDON_AUDIT_MAX_MIN 4096u
#define CORDON_AUDIT_MAX_MAX (64u << 20)
#define CORDON_AUDIT_REDACT_MAX 64
#define CORDON_AUDIT_DNS_PER_S 50 /* DNS decisions the proxy told of a second, burst as many */
/* Admits a second, burst as many: what the proxy's own rate (200 queries a second) can ask for. */
#define CORDON_AUDIT_ADMITS_PER_S 200
#define CORDON_AUDIT_REDACTED "[REDACTED]"

struct cordon_audit; /* an open audit log */

/* --- flags (the CLI, before anything is created) ------------------------- */

/*
 * --audit FILE: "none" turns the log off; anything else is opened now,
 * as --log is (the host-path walk, O_NOFOLLOW, a regular file only,
 * appended to), and kept in spec->audit. A missing one is made 0600
 * without a name (O_TMPFILE) that cordon_audit_start gives it when the
 * sandbox begins: a command refused before that leaves nothing.
 */
int cordon_audit_flag_file(struct cordon_spec *spec, const char *value, struct cordon_error *err);
/* --audit-redact REGEX (POSIX extended, compiled now to validate it). */
int cordon_audit_flag_redact(struct cordon_spec *spec, const char *value, struct cordon_error *err);
/* --audit-max BYTES (CORDON_AUDIT_MAX_MIN and above). */
int cordon_audit_flag_max(struct cordon_spec *spec, const char *value, struct cordon_error *err);
/* --audit-dir DIR. */
int cordon_audit_flag_dir(struct cordon_spec *spec, const char *value, struct cordon_error *err);
/* CORDON_AUDIT and CORDON_AUDIT_DIR, where the flags were not given. */
int cordon_audit_flag_env(struct cordon_spec *spec, struct cordon_error *err);

/*
 * The audit directory a state directory's log is kept in, refused where
 * the workload can write (the workspace, a writable bind or mount, the
 * rootfs without --overlay, or below one): spec finalize's, before
 * anything is created.
 */
int cordon_audit_check_keep(const struct cordon_spec *spec, struct cordon_error *err);

/* --- opening --------------------------------------------------------------- */

/*
 * The supervisor's: spec->audit's file, or audit.jsonl made new in the
 * state directory state_dir_fd; the record written there, then the
 * create event, and only then a file --audit made gets its name. NULL
 * with *err clear when the log is off, NULL with *err set on failure.
 */
struct cordon_audit *cordon_audit_start(const struct cordon_spec *spec, int state_dir_fd,
					struct cordon_error *err);
/*
 * A later command's: the log the state directory's record names, opened
 * again and checked to be the same file. NULL with *err clear when the
 * sandbox has no log (its record is absent).
 */
struct cordon_audit *cordon_audit_open_state(int state_dir_fd, const char *id,
					     struct cordon_error *err);
void cordon_audit_close(struct cordon_audit *a);
/* Labels (key, value pairs) every later event carries; copied. */
void cordon_audit_set_labels(struct cordon_audit *a, const char *const *keys,
			     const char *const *values, size_t n);

/*
 * At the end of the sandbox's state (run's end, delete): the state
 * directory's audit.jsonl copied into the audit directory the record
 * names, as ID-CREATED_MS.jsonl. 0 when there was nothing to keep.
 */
int cordon_audit_keep(int state_dir_fd, const char *id, struct cordon_error *err);

/* --- redaction ------------------------------------------------------------- */

/* s with every match of a's rules (defaults and --audit-redact) replaced (malloc'd). */
char *cordon_audit_redact(const struct cordon_audit *a, const char *s);

/* --- events ---------------------------------------------------------------- */
/*
 * Each returns 0 once its line is written, or was dropped by the cap or
 * the DNS rate (counted, and told in the next cleanup event), or -1
 * with err set when the write failed: the caller fails closed.
 */

int cordon_audit_create(struct cordon_audit *a, const struct cordon_spec *spec,
			struct cordon_error *err);

/*
 * The live allowlist changed (cordon update): the entries added and
 * removed as given (normalised), and the new policy's fingerprint
 * (cordon_allowlist_fingerprint).
 */
int cordon_audit_policy(struct cordon_audit *a, const char *const *added, size_t n_added,
			const char *const *removed, size_t n_removed, const char *fingerprint,
			struct cordon_error *err);

struct cordon_audit_exec {
	const char *const *argv; /* as given; redacted here */
	int exit_code;           /* what cordon reports (128+N, 124, 125...) */
	int signal;              /* 0 if none */
	bool timed_out;
	uint64_t duration_ms;
	bool output_counted;     /* false: bytes unknown (the output was not cordon's to see) */
	uint64_t stdout_bytes, stderr_bytes;
	bool truncated;
	const char *error;       /* cordon's own failure (125/126/127), or NULL */
};
int cordon_audit_exec(struct cordon_audit *a, const struct cordon_audit_exec *ex,
		      struct cordon_error *err);

/* One DNS decision: the supervisor's own verdict, never the proxy's word alone. */
struct cordon_audit_dns {
	const char *name;
	uint16_t qtype;
	bool allowed;
	const struct cordon_addr *addrs; /* admitted into the allow sets */
	size_t n_addrs;
	uint32_t ttl_s;                  /* how long they stay */
	size_t n_refused;                /* addresses vetting refused */
	/*
	 * Written from an admit the supervisor made: at most
	 * CORDON_AUDIT_ADMITS_PER_S a second, all a proxy of ours can ask
	 * for. Else a decision the proxy told of, at most
	 * CORDON_AUDIT_DNS_PER_S a second.
	 */
	bool admit;
};
/* Rate-limited and capped; never fails the run (a dropped event is counted). */
void cordon_audit_dns(struct cordon_audit *a, const struct cordon_audit_dns *d);

/*
 * Dropped packets in all and by destination (cordon_nft_read_drops, most
 * first), read from the gateway's counters at a command's end; the
 * first CORDON_AUDIT_DROPS_MAX destinations are written. A session's
 * event at each exec's end (per_exec) is counted in the workload's share
 * of the cap, as dns events are: its size and how often it comes are the
 * workload's to choose, and the callers' share keeps their exec events.
 */
#define CORDON_AUDIT_DROPS_MAX 64
int cordon_audit_denied(struct cordon_audit *a, const struct cordon_nft_drop *d, size_t n,
			uint64_t total_packets, uint64_t total_bytes, bool per_exec,
			struct cordon_error *err);

/* What the end removed, and the first failure (NULL: none). */
int cordon_audit_cleanup(struct cordon_audit *a, const char *const *removed, size_t n,
			 const char *failure, struct cordon_error *err);

/* Events dropped so far by the cap and by the DNS rate (for tests and the cleanup event). */
void cordon_audit_dropped(const struct cordon_audit *a, uint64_t *capped, uint64_t *dns_rate);

#endif
