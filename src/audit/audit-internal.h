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
/* What the cleanup event may use past the others' share of the cap (at most an eighth of it). */
#define AUDIT_RESERVE 4096

enum audit_class {
	AUDIT_WORKLOAD, /* driven by the workload (dns): three quarters of the cap */
	AUDIT_CALLER,   /* create, exec, policy, denied: the cap less the reserve */
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
};

/* A generator for one event: the common fields written, the object left open. */
yajl_gen audit_begin(const struct cordon_audit *a, const char *event);
/* Close the object and append it as one line within the class's share of the cap. */
int audit_end(struct cordon_audit *a, yajl_gen g, enum audit_class class,
	      struct cordon_error *err);

void audit_key(yajl_gen g, const char *k);
/* A string: cut to AUDIT_STRING_MAX bytes, made well-formed UTF-8, escaped by yajl. */
void audit_str(yajl_gen g, const char *s);
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
