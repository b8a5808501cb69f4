// SPDX-License-Identifier: Apache-2.0
/*
 * Redaction of what an audit line carries of a command line: every match
 * of a rule is replaced by CORDON_AUDIT_REDACTED before the line is built
 * (docs/audit.md, "Redaction"). The defaults are the common shapes of a
 * credential; --audit-redact adds POSIX extended expressions.
 */
#include <string.h>
#include <stdlib.h>
#include <strings.h>

#include "audit-internal.h"

/*
 * Matched without regard to case: a false match hides a word, a miss leaks
 * one. Each default rule is compiled only once a word holds one of its
 * hints (a substring every match contains, compared without regard to
 * case): regcomp of them all costs a cordon exec milliseconds, and most
 * command lines hold none.
 */
static const struct default_rule {
	const char *pattern;
	const char *hints[6];
} default_rules[] = {
	{ "(AKIA|ASIA)[0-9A-Z]{16}", { "akia", "asia" } }, /* AWS access key ids */
	{ "gh[pousr]_[A-Za-z0-9]{20,}", { "ghp_", "gho_", "ghu_", "ghs_", "ghr_" } }, /* GitHub */
	{ "github_pat_[A-Za-z0-9_]{20,}", { "github_pat_" } }, /* GitHub fine-grained tokens */
	{ "xox[abposr]-[A-Za-z0-9-]+", { "xox" } },	      /* Slack tokens */
	{ "glpat-[A-Za-z0-9_-]{16,}", { "glpat-" } },	      /* GitLab tokens */
	{ "sk-[A-Za-z0-9_-]{20,}", { "sk-" } },		      /* API keys of the sk- shape */
	{ "bearer[[:space:]]+[^[:space:]\"',;]+", { "bearer" } }, /* Authorization: Bearer */
	{ "basic[[:space:]]+[A-Za-z0-9+/=]{8,}", { "basic" } },    /* Authorization: Basic */
	/* KEY=VALUE and KEY: VALUE of the usual names, up to a separator. */
	{ "(password|passwd|passphrase|pwd|token|secret|api[_-]?key|access[_-]?key|client[_-]?secret|"
	  "auth[_-]?token|private[_-]?key)[\"']?[[:space:]]*[=:][[:space:]]*[^[:space:]&;,]+",
	  { "pass", "pwd", "token", "secret", "key" } },
	/* A URL's user:password@. */
	{ "://[^/@[:space:]:]+:[^/@[:space:]]+@", { "://" } },
	/* A private key, from its header to the end of the word. */
	{ "-----BEGIN[ A-Z0-9]*PRIVATE KEY-----.*", { "-----begin" } },
};

/* A word after one of these is a secret as a whole (--password SECRET). */
static const char *const hiding_flags[] = {
	"--password", "--passwd", "--pass", "--token", "--secret", "--api-key", "--apikey",
	"--access-key", "--secret-key", "--client-secret", "--auth-token", "--private-key",
};

bool audit_flag_hides_next(const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(hiding_flags); i++)
		if (strcasecmp(word, hiding_flags[i]) == 0)
			return true;
	return false;
}

/* The caller's rules now (an invalid one is its error); the defaults when a word needs them. */
int audit_rules_compile(struct cordon_audit *a, char *const *extra, size_t n_extra,
			struct cordon_error *err)
{
	size_t n = ARRAY_SIZE(default_rules) + n_extra;

	a->rules = cordon_xcalloc(n, sizeof(*a->rules));
	a->n_rules = n;
	for (size_t i = ARRAY_SIZE(default_rules); i < n; i++) {
		const char *pat = extra[i - ARRAY_SIZE(default_rules)];
		int r = regcomp(&a->rules[i].re, pat, REG_EXTENDED);

		if (r != 0) {
			char why[128];

			regerror(r, &a->rules[i].re, why, sizeof(why));
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--audit-redact '%s': %s", pat, why);
		}
		a->rules[i].compiled = true;
	}
	return 0;
}

void audit_rules_free(struct cordon_audit *a)
{
	for (size_t i = 0; i < a->n_rules; i++)
		if (a->rules[i].compiled)
			regfree(&a->rules[i].re);
	free(a->rules);
	a->rules = NULL;
	a->n_rules = 0;
}

/* Whether default rule i can match s at all (one of its hints is in it), compiled if so. */
static bool default_rule_ready(struct audit_rule *rule, size_t i, const char *s)
{
	const struct default_rule *d = &default_rules[i];
	bool hinted = false;

	for (size_t h = 0; h < ARRAY_SIZE(d->hints) && d->hints[h] && !hinted; h++)
		hinted = strcasestr(s, d->hints[h]) != NULL;
	if (!hinted)
		return false;
	if (!rule->compiled) {
		/* Fixed patterns: a failure is a bug, and hiding is the safe side of one. */
		if (regcomp(&rule->re, d->pattern, REG_EXTENDED | REG_ICASE) != 0)
			abort();
		rule->compiled = true;
	}
	return true;
}

/* s with every match of re replaced (malloc'd). */
static char *replace_all(const regex_t *re, const char *s)
{
	size_t cap = strlen(s) + 1, n = 0, mark = strlen(CORDON_AUDIT_REDACTED);
	char *out = cordon_xmalloc(cap);
	const char *p = s;
	int flags = 0;
	regmatch_t m;

	while (*p && regexec(re, p, 1, &m, flags) == 0) {
		size_t before = (size_t)m.rm_so, end = (size_t)m.rm_eo;

		if (end == before) { /* an empty match hides nothing: step past one byte */
			if (!p[before])
				break; /* at the end ('$', '[0-9]*$'): no byte to step past */
			end = before + 1;
			mark = 0;
		}
		if (n + before + mark + strlen(p) + 1 > cap) {
			cap = n + before + mark + strlen(p) + 1;
			out = cordon_xrealloc(out, cap);
		}
		memcpy(out + n, p, before);
		n += before;
		if (mark) {
			memcpy(out + n, CORDON_AUDIT_REDACTED, mark);
			n += mark;
		} else {
			out[n++] = p[before];
			mark = strlen(CORDON_AUDIT_REDACTED);
		}
		p += end;
		flags = REG_NOTBOL;
	}
	if (n + strlen(p) + 1 > cap)
		out = cordon_xrealloc(out, n + strlen(p) + 1);
	strcpy(out + n, p);
	return out;
}

char *cordon_audit_redact(const struct cordon_audit *a, const char *s)
{
	char *cur = cordon_xstrdup(s);

	for (size_t i = 0; a && i < a->n_rules; i++) {
		char *next;

		if (i < ARRAY_SIZE(default_rules) && !default_rule_ready(&a->rules[i], i, cur))
			continue;
		next = replace_all(&a->rules[i].re, cur);

		free(cur);
		cur = next;
	}
	return cur;
}
