/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log's parts: audit.c opens, records and writes; events.c builds the lines. */
#ifndef CORDON_AUDIT_INTERNAL_H
#define CORDON_AUDIT_INTERNAL_H

#include <regex.h>
#include <yajl/yajl_gen.h>

#include "cordon/audit.h"

/* A line longer than this is not written (strings are cut well before: AUDIT_STRING_MAX). */
#define AUDIT_LINE_MAX (64 * 1024)
/* Each string of an event (an argv word, a name, a path), after redaction. */
#define AUDIT_STRING_MAX 1024
/* argv words an exec event carries. */
#define AUDIT_ARGV_MAX 256
/*
 * The JSON an exec event's argv may take: words past it are left off
 * (argv_truncated). A word takes at most 6 * AUDIT_STRING_MAX + 3 bytes
 * (every byte a \u00XX), so the first always fits, and the line stays
 * far below AUDIT_LINE_MAX.
 */
#define AUDIT_ARGV_JSON_MAX (16 * 1024)
/* What the cleanup event alone may use at the cap's end (at most an eighth of it). */
#define AUDIT_RESERVE 4096
/* What an exec's minimal record may use before that (at most an eighth of the cap). */
#define AUDIT_RESERVE_MINIMAL (60 * 1024)

enum audit_class {
	AUDIT_WORKLOAD, /* driven by the workload (dns, a session exec's denied): three quarters of the cap */
	AUDIT_CALLER,   /* create, exec, policy, a run's denied: the cap less both reserves */
	AUDIT_MINIMAL,  /* an exec's minimal record: the cap less the cleanup's reserve */
	AUDIT_LAST,     /* cleanup: the whole cap */
};

struct audit_rule {
	regex_t re;
	bool compiled; /* a default rule is, once a word needs it */
};

struct cordon_audit {
	int fd;
	char *id;
	char **label_keys, **label_values;
	size_t n_labels;
	uint64_t base; /* the file's size when the sandbox began: the cap counts from here */
	uint64_t max;
	struct audit_rule *rules;
	size_t n_rules;
	/* The DNS token buckets: [0] decisions the proxy told of, [1] admits. */
	double dns_tokens[2];
	uint64_t dns_refill_us[2];
	uint64_t dropped_cap, dropped_dns;
	/*
	 * CORDON_AUDIT_DROPS in the state directory: a later command (exec,
	 * update, delete) appends a byte for each line it drops; the cleanup
	 * event counts them with its own writer's (-1: none).
	 */
	int drops_fd;
	bool drops_shared; /* this writer's drops go to drops_fd (not the supervisor's) */
};

/* A generator for one event: the common fields written, the object left open. */
yajl_gen audit_begin(const struct cordon_audit *a, const char *event);
/* Close the object and append it as one line within the class's share of the cap. */
int audit_end(struct cordon_audit *a, yajl_gen g, enum audit_class class,
	      struct cordon_error *err);
/* The same, but a line past its share is neither written nor counted: 1 (g is freed). */
int audit_end_try(struct cordon_audit *a, yajl_gen g, enum audit_class class,
		  struct cordon_error *err);
/* Count a line dropped at the cap (in the state directory's count for a later command). */
int audit_count_drop(struct cordon_audit *a, struct cordon_error *err);
/* Lines dropped at the cap so far: this writer's and the later commands'. */
uint64_t audit_drops(const struct cordon_audit *a);

void audit_key(yajl_gen g, const char *k);
/* A string: cut to AUDIT_STRING_MAX bytes, made well-formed UTF-8, escaped by yajl. */
void audit_str(yajl_gen g, const char *s);
/* s cut and made well-formed as audit_str does (malloc'd); *cut: it was cut. */
char *audit_clean(const char *s, bool *cut);
/* At most how many bytes yajl writes for the clean string s, quotes included. */
size_t audit_json_len(const char *s);
void audit_kstr(yajl_gen g, const char *k, const char *s);
void audit_kint(yajl_gen g, const char *k, long long v);
void audit_kbool(yajl_gen g, const char *k, bool v);

/* The default rules and --audit-redact's, compiled (redact.c). */
int audit_rules_compile(struct cordon_audit *a, char *const *extra, size_t n_extra,
			struct cordon_error *err);
void audit_rules_free(struct cordon_audit *a);
/* Whether the word after this one is a secret (--password, --token, ...). */
bool audit_flag_hides_next(const char *word);

#endif
