// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/net/allowlist.c: the entry grammar and its
 * normalisation, every refusal naming its entry, the hostname trie's
 * matching (exact names, single-label wildcards, the look-alikes that must
 * not match), address matching, allowlist files and the fingerprint.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/stat.h>

#include "cordon/net.h"
#include "unit.h"

static void allowlist_freep(struct cordon_allowlist **al)
{
	cordon_allowlist_free(*al);
}

static struct cordon_allowlist *list_of(const char *value)
{
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };

	ck_assert_msg(cordon_allowlist_add(al, value, false, &err) == 0, "%s: %s", value, err.msg);
	return al;
}

static struct cordon_addr addr(const char *s)
{
	struct cordon_addr a;

	ck_assert_msg(cordon_addr_parse(s, &a) == 0, "cannot parse %s", s);
	return a;
}

/* --- entries and normalisation ----------------------------------------- */

static const struct {
	const char *input;
	enum cordon_allow_kind kind;
	const char *text;
	const char *cidr; /* ADDR and CIDR: the stored range */
} good_entries[] = {
	{ "1.2.3.4", CORDON_ALLOW_ADDR, "1.2.3.4", "1.2.3.4/32" },
	{ "1.2.3.4.", CORDON_ALLOW_ADDR, "1.2.3.4", "1.2.3.4/32" },
	{ "10.0.0.1/32", CORDON_ALLOW_ADDR, "10.0.0.1", "10.0.0.1/32" },
	{ "10.0.0.0/8", CORDON_ALLOW_CIDR, "10.0.0.0/8", "10.0.0.0/8" },
	{ "2001:DB8::1", CORDON_ALLOW_ADDR, "2001:db8::1", "2001:db8::1/128" },
	{ "2001:db8:0:0::1/128", CORDON_ALLOW_ADDR, "2001:db8::1", "2001:db8::1/128" },
	{ "2001:DB8::/32", CORDON_ALLOW_CIDR, "2001:db8::/32", "2001:db8::/32" },
	{ "pypi.org", CORDON_ALLOW_HOST, "pypi.org", NULL },
	{ "PyPI.Org.", CORDON_ALLOW_HOST, "pypi.org", NULL },
	{ "  pypi.org\t", CORDON_ALLOW_HOST, "pypi.org", NULL },
	{ "localhost", CORDON_ALLOW_HOST, "localhost", NULL },
	{ "xn--bcher-kva.de", CORDON_ALLOW_HOST, "xn--bcher-kva.de", NULL },
	{ "a-b.c-d.example", CORDON_ALLOW_HOST, "a-b.c-d.example", NULL },
	{ "0x7f000001", CORDON_ALLOW_HOST, "0x7f000001", NULL },
	{ "123.example.org", CORDON_ALLOW_HOST, "123.example.org", NULL },
	{ "*.npmjs.org", CORDON_ALLOW_WILDCARD, "*.npmjs.org", NULL },
	{ "*.NPMJS.org.", CORDON_ALLOW_WILDCARD, "*.npmjs.org", NULL },
	{ "*.a.b.example.org", CORDON_ALLOW_WILDCARD, "*.a.b.example.org", NULL },
};

START_TEST(entry_good)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = NULL;
	const struct cordon_allow_entry *e;
	char buf[INET6_ADDRSTRLEN + 4];

	al = list_of(good_entries[_i].input);
	ck_assert_uint_eq(cordon_allowlist_count(al), 1);
	e = cordon_allowlist_entry(al, 0);
	ck_assert_int_eq(e->kind, good_entries[_i].kind);
	ck_assert_str_eq(e->text, good_entries[_i].text);
	if (good_entries[_i].cidr) {
		cordon_cidr_format(&e->cidr, buf, sizeof(buf));
		ck_assert_str_eq(buf, good_entries[_i].cidr);
	}
}
END_TEST

/* Each refusal: the code, the entry named as written, and why. */
static const struct {
	const char *input;
	const char *named; /* appears quoted in the message */
	const char *why;   /* a fragment of the reason */
} bad_entries[] = {
	{ "*", "*", "bare '*'" },
	{ "*.", "*.", "bare '*'" },
	{ "*.*.example.org", "*.*.example.org", "whole leftmost label" },
	{ "a.*.example.org", "a.*.example.org", "whole leftmost label" },
	{ "a*b.example.org", "a*b.example.org", "whole leftmost label" },
	{ "*a.example.org", "*a.example.org", "whole leftmost label" },
	{ "**.example.org", "**.example.org", "whole leftmost label" },
	{ "example.*", "example.*", "whole leftmost label" },
	{ "*.com", "*.com", "at least two labels" },
	{ "*.org.", "*.org.", "at least two labels" },
	{ "a..example.org", "a..example.org", "empty label" },
	{ ".example.org", ".example.org", "empty label" },
	{ "example.org..", "example.org..", "empty label" },
	{ "*..org", "*..org", "empty label" },
	{ ".", ".", "empty name" },
	{ "-a.example.org", "-a.example.org", "starts or ends with '-'" },
	{ "a-.example.org", "a-.example.org", "starts or ends with '-'" },
	{ "a.example-.org", "a.example-.org", "starts or ends with '-'" },
	{ "example.-org", "example.-org", "starts or ends with '-'" },
	{ "a_b.example.org", "a_b.example.org", "underscore" },
	{ "_dmarc.example.org", "_dmarc.example.org", "underscore" },
	{ "b\xc3\xbc"
	  "cher.de",
	  "b\xc3\xbc"
	  "cher.de",
	  "xn--" },
	{ "a b.org", "a b.org", "invalid character ' '" },
	{ "a@b.org", "a@b.org", "invalid character '@'" },
	{ "a\x01.org", "a\x01.org", "invalid character 0x01" },
	{ "foo.123", "foo.123", "all digits" },
	{ "1.2.3", "1.2.3", "not a valid IPv4 address" },
	{ "256.1.1.1", "256.1.1.1", "not a valid IPv4 address" },
	{ "01.2.3.4", "01.2.3.4", "not a valid IPv4 address" },
	{ "123", "123", "not a valid IPv4 address" },
	{ "10.0.0.1/8", "10.0.0.1/8", "host bits set; the network is 10.0.0.0/8" },
	{ "192.168.1.1/24", "192.168.1.1/24", "the network is 192.168.1.0/24" },
	{ "2001:db8::1/32", "2001:db8::1/32", "the network is 2001:db8::/32" },
	{ "0.0.0.0/0", "0.0.0.0/0", "--net-allow-any" },
	{ "::/0", "::/0", "--net-allow-any" },
	{ "10.0.0.0/33", "10.0.0.0/33", "not a valid CIDR" },
	{ "10.0.0.0/", "10.0.0.0/", "not a valid CIDR" },
	{ "fe80::1%eth0", "fe80::1%eth0", "not a valid IP address" },
	{ "pypi.org:443", "pypi.org:443", "a port" },
	{ "https://pypi.org", "https://pypi.org", "a URL" },
	{ "pypi.org/simple", "pypi.org/simple", "not a valid CIDR" },
};

START_TEST(entry_bad)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char named[300];

	ck_assert_int_lt(cordon_allowlist_add(al, bad_entries[_i].input, false, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	snprintf(named, sizeof(named), "'%s'", bad_entries[_i].named);
	ck_assert_msg(strstr(err.msg, named), "'%s' not named in: %s", bad_entries[_i].named,
		      err.msg);
	ck_assert_msg(strstr(err.msg, bad_entries[_i].why), "'%s' not in: %s", bad_entries[_i].why,
		      err.msg);
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
}
END_TEST

static char *repeat(char c, size_t n)
{
	char *s = calloc(1, n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	return s;
}

START_TEST(entry_lengths)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	_cleanup_free_ char *l63 = repeat('a', 63), *l64 = repeat('a', 64);
	_cleanup_free_ char *ok = NULL, *long_label = NULL, *name253 = NULL, *name254 = NULL;
	_cleanup_free_ char *wild253 = NULL, *wild254 = NULL, *huge = repeat('a', 5000);
	struct cordon_error err = { 0 };

	ok = cordon_xasprintf("%s.example.org", l63);
	long_label = cordon_xasprintf("%s.example.org", l64);
	/* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
	name253 = cordon_xasprintf("%s.%s.%s.%.61s", l63, l63, l63, l63);
	name254 = cordon_xasprintf("%s.%s.%s.%.62s", l63, l63, l63, l63);
	wild253 = cordon_xasprintf("*.%s.%s.%s.%.59s", l63, l63, l63, l63);
	wild254 = cordon_xasprintf("*.%s.%s.%s.%.60s", l63, l63, l63, l63);
	ck_assert_uint_eq(strlen(name253), 253);
	ck_assert_uint_eq(strlen(wild254), 254);

	ck_assert_int_eq(cordon_allowlist_add(al, ok, false, &err), 0);
	ck_assert_int_eq(cordon_allowlist_add(al, name253, false, &err), 0);
	ck_assert_int_eq(cordon_allowlist_add(al, wild253, false, &err), 0);
	/* A trailing dot does not count. */
	_cleanup_free_ char *dotted = cordon_xasprintf("%s.", name253);
	ck_assert_int_eq(cordon_allowlist_add(al, dotted, false, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 3);

	ck_assert_int_lt(cordon_allowlist_add(al, long_label, false, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 63 bytes"));
	ck_assert_int_lt(cordon_allowlist_add(al, name254, false, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 253 bytes"));
	ck_assert_int_lt(cordon_allowlist_add(al, wild254, false, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 253 bytes"));
	ck_assert_int_lt(cordon_allowlist_add(al, huge, false, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 253 bytes"));
	/* A huge entry is named, but cut short. */
	ck_assert_uint_lt(strlen(err.msg), 400);
	ck_assert_uint_eq(cordon_allowlist_count(al), 3);

	ck_assert(cordon_allowlist_match_name(al, name253));
	ck_assert(cordon_allowlist_match_name(al, dotted));
}
END_TEST

START_TEST(allow_any)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	struct cordon_addr a = addr("203.0.113.9");

	ck_assert_int_eq(cordon_allowlist_add(al, "0.0.0.0/0,::/0", true, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 2);
	ck_assert_int_eq(cordon_allowlist_entry(al, 0)->kind, CORDON_ALLOW_CIDR);
	ck_assert_str_eq(cordon_allowlist_entry(al, 0)->text, "0.0.0.0/0");
	ck_assert_str_eq(cordon_allowlist_entry(al, 1)->text, "::/0");
	ck_assert(cordon_allowlist_match_addr(al, &a));
	/* allow_any is about /0 only: the rest of the grammar still holds. */
	ck_assert_int_lt(cordon_allowlist_add(al, "*", true, &err), 0);
	ck_assert_int_lt(cordon_allowlist_add(al, "10.0.0.1/8", true, &err), 0);
}
END_TEST

START_TEST(comma_separated_and_merged)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };

	ck_assert_int_eq(cordon_allowlist_add(al, "pypi.org, files.pythonhosted.org ,*.npmjs.org",
					      false, &err),
			 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 3);
	ck_assert_str_eq(cordon_allowlist_entry(al, 1)->text, "files.pythonhosted.org");
	/* Duplicates merge, in one value and across values, whatever the spelling. */
	ck_assert_int_eq(cordon_allowlist_add(al, "PYPI.ORG,pypi.org.,*.npmjs.org.", false, &err),
			 0);
	ck_assert_int_eq(cordon_allowlist_add(al, "10.0.0.1,10.0.0.1/32, 10.0.0.1.", false, &err),
			 0);
	ck_assert_int_eq(cordon_allowlist_add(al, "2001:db8::1,2001:DB8:0::1", false, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 5);
	ck_assert_str_eq(cordon_allowlist_entry(al, 3)->text, "10.0.0.1");
	ck_assert_ptr_null(cordon_allowlist_entry(al, 5));
	/* An exact name and the wildcard below it are different entries. */
	ck_assert_int_eq(cordon_allowlist_add(al, "npmjs.org", false, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 6);
}
END_TEST

START_TEST(empty_entries_refused)
{
	static const char *const values[] = { "", " ", "a.org,,b.org", "a.org,", ",a.org", " , " };
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();

	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		struct cordon_error err = { 0 };

		ck_assert_msg(cordon_allowlist_add(al, values[i], false, &err) < 0, "'%s'",
			      values[i]);
		ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
		ck_assert_ptr_nonnull(strstr(err.msg, "empty entry"));
	}
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
}
END_TEST

START_TEST(value_is_all_or_nothing)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = list_of("pypi.org");
	struct cordon_error err = { 0 };

	ck_assert_int_lt(cordon_allowlist_add(al, "a.org,10.0.0.0/8,*.com,b.org", false, &err), 0);
	/* The error names the bad entry, not its neighbours. */
	ck_assert_ptr_nonnull(strstr(err.msg, "'*.com'"));
	ck_assert_ptr_null(strstr(err.msg, "a.org"));
	ck_assert_uint_eq(cordon_allowlist_count(al), 1);
	ck_assert(!cordon_allowlist_match_name(al, "a.org"));
	ck_assert(cordon_allowlist_match_name(al, "pypi.org"));
}
END_TEST

/* --- matching ------------------------------------------------------------ */

static const struct {
	const char *list;
	const char *name;
	bool match;
} match_cases[] = {
	{ "pypi.org", "pypi.org", true },
	{ "pypi.org", "PYPI.Org", true },
	{ "pypi.org", "pypi.org.", true },
	{ "pypi.org", "pypi.org..", false },
	{ "pypi.org", "sub.pypi.org", false },
	{ "pypi.org", "notpypi.org", false },
	{ "pypi.org", "ypi.org", false },
	{ "pypi.org", "pypi.org.evil", false },
	{ "pypi.org", "pypi.org.evil.com", false },
	{ "pypi.org", "pypi", false },
	{ "pypi.org", "org", false },
	{ "pypi.org", "", false },
	{ "pypi.org", ".", false },
	{ "pypi.org", ".pypi.org", false },
	{ "pypi.org", "pypi..org", false },
	{ "pypi.org", "pypi.org ", false },
	{ "*.npmjs.org", "registry.npmjs.org", true },
	{ "*.npmjs.org", "REGISTRY.NPMJS.ORG.", true },
	{ "*.npmjs.org", "a.npmjs.org", true },
	{ "*.npmjs.org", "_tcp.npmjs.org", true }, /* a wildcard label may hold '_' (SRV) */
	{ "*.npmjs.org", "npmjs.org", false },
	{ "*.npmjs.org", "a.b.npmjs.org", false },
	{ "*.npmjs.org", "npmjs.org.evil.com", false },
	{ "*.npmjs.org", "registry.npmjs.org.evil.com", false },
	{ "*.npmjs.org", "fake-npmjs.org", false },
	{ "*.npmjs.org", "registrynpmjs.org", false },
	{ "*.npmjs.org", ".npmjs.org", false },
	{ "*.npmjs.org", "a..npmjs.org", false },
	{ "*.npmjs.org", "a b.npmjs.org", false },
	{ "*.npmjs.org", "a/b.npmjs.org", false },
	{ "*.npmjs.org", "*.npmjs.org", false },
	{ "*.npmjs.org", "r\xc3\xa9.npmjs.org", false },
	{ "*.npmjs.org,npmjs.org", "npmjs.org", true },
	{ "*.npmjs.org,npmjs.org", "x.npmjs.org", true },
	{ "*.npmjs.org,x.a.npmjs.org", "a.npmjs.org", true },
	{ "*.npmjs.org,x.a.npmjs.org", "x.a.npmjs.org", true },
	{ "*.npmjs.org,x.a.npmjs.org", "y.a.npmjs.org", false },
	{ "a.b.example.org", "b.example.org", false }, /* inner nodes are not entries */
	{ "a.b.example.org", "example.org", false },
	{ "a.b.example.org", "a.b.example.org", true },
	{ "*.b.example.org", "a.b.example.org", true },
	{ "*.b.example.org", "b.example.org", false },
	{ "*.b.example.org", "a.example.org", false },
	{ "1.2.3.4", "1.2.3.4", false }, /* an address entry is not a name */
	{ "10.0.0.0/8", "10.0.0.1", false },
	{ "org.pypi", "pypi.org", false }, /* labels are reversed, not the string */
	{ "localhost", "localhost", true },
	{ "localhost", "localhost.", true },
};

START_TEST(match_table)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = NULL;

	al = list_of(match_cases[_i].list);
	ck_assert_msg(cordon_allowlist_match_name(al, match_cases[_i].name) ==
			      match_cases[_i].match,
		      "'%s' against [%s]: want %s", match_cases[_i].name, match_cases[_i].list,
		      match_cases[_i].match ? "match" : "no match");
}
END_TEST

START_TEST(match_degenerate)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	_cleanup_free_ char *label64 = repeat('a', 64), *name300 = repeat('a', 300);
	_cleanup_free_ char *long_label = cordon_xasprintf("%s.npmjs.org", label64);

	/* An empty list matches nothing. */
	ck_assert(!cordon_allowlist_match_name(al, "pypi.org"));
	ck_assert(!cordon_allowlist_match_name(al, ""));
	ck_assert(!cordon_allowlist_match_name(NULL, "pypi.org"));
	ck_assert(!cordon_allowlist_match_name(al, NULL));
	cordon_allowlist_free(al);
	al = list_of("*.npmjs.org");
	ck_assert(!cordon_allowlist_match_name(al, long_label));
	ck_assert(!cordon_allowlist_match_name(al, name300));
	/* Many dots, no labels: bounded, no match. */
	_cleanup_free_ char *dots = repeat('.', 253);
	ck_assert(!cordon_allowlist_match_name(al, dots));
}
END_TEST

/* Enough names to grow the trie's table many times; every one still found. */
START_TEST(match_many)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char name[128];

	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "h%d.d%d.example.org,*.w%d.example.net", i, i % 97, i);
		ck_assert_int_eq(cordon_allowlist_add(al, name, false, &err), 0);
	}
	ck_assert_uint_eq(cordon_allowlist_count(al), 6000);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "H%d.d%d.example.org", i, i % 97);
		ck_assert_msg(cordon_allowlist_match_name(al, name), "%s", name);
		snprintf(name, sizeof(name), "x.w%d.example.net", i);
		ck_assert_msg(cordon_allowlist_match_name(al, name), "%s", name);
		snprintf(name, sizeof(name), "h%d.d%d.example.org", i, (i + 1) % 97);
		ck_assert_msg(!cordon_allowlist_match_name(al, name), "%s", name);
		snprintf(name, sizeof(name), "w%d.example.net", i);
		ck_assert_msg(!cordon_allowlist_match_name(al, name), "%s", name);
		snprintf(name, sizeof(name), "d%d.example.org", i % 97);
		ck_assert_msg(!cordon_allowlist_match_name(al, name), "%s", name);
	}
}
END_TEST

/* The obvious matcher, entry by entry, to check the trie against. */
static bool naive_match(char **entries, size_t n, const char *query)
{
	char name[1024];
	size_t len = strlen(query);

	if (len >= sizeof(name))
		return false;
	for (size_t i = 0; i <= len; i++)
		name[i] = (query[i] >= 'A' && query[i] <= 'Z') ? (char)(query[i] + 32) : query[i];
	if (len > 0 && name[len - 1] == '.')
		name[--len] = '\0';
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *e = entries[i];

		if (e[0] != '*') {
			if (strcmp(e, name) == 0)
				return true;
			continue;
		}
		/* "*.base": one label of [a-z0-9_-], 1-63 bytes, then ".base". */
		size_t base_len = strlen(e + 1), label_len;

		if (len <= base_len || strcmp(name + len - base_len, e + 1) != 0)
			continue;
		label_len = len - base_len;
		if (label_len < 1 || label_len > 63 ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != label_len)
			continue;
		return true;
	}
	return false;
}

/*
 * Random names over a small alphabet of labels (so that hits are common),
 * odd bytes and case, lengths across the 8-byte words the matcher works in.
 */
START_TEST(match_agrees_with_naive)
{
	static const char *const labels[] = {
		"a",	    "b",   "ab",       "org",	    "npmjs",
		"registry", "x-y", "abcdefgh", "abcdefghi", "0123456789abcdef",
		"q"
	};
	static const char *const odd[] = { "", ".", "..", "A", "B.", "_", "\xc3\xa9", " ", "*" };
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *entries[64];
	size_t n = 0, hits = 0;
	unsigned seed = 12345;

	while (n < ARRAY_SIZE(entries)) {
		char e[256] = "";
		int k = 1 + (int)(rand_r(&seed) % 4);
		bool wildcard = rand_r(&seed) % 3 == 0;

		if (wildcard)
			strcat(e, "*.");
		for (int j = 0; j < k; j++) {
			strcat(e, labels[rand_r(&seed) % ARRAY_SIZE(labels)]);
			if (j + 1 < k)
				strcat(e, ".");
		}
		if ((wildcard && k < 2) || cordon_allowlist_add(al, e, false, &err) < 0)
			continue;
		entries[n++] = strdup(e);
	}
	for (int q = 0; q < 200000; q++) {
		char name[512] = "";
		int k = 1 + (int)(rand_r(&seed) % 6);

		for (int j = 0; j < k; j++) {
			const char *l = rand_r(&seed) % 8 == 0 ?
						odd[rand_r(&seed) % ARRAY_SIZE(odd)] :
						labels[rand_r(&seed) % ARRAY_SIZE(labels)];

			strcat(name, l);
			if (j + 1 < k)
				strcat(name, ".");
		}
		if (rand_r(&seed) % 4 == 0)
			strcat(name, ".");
		for (char *p = name; *p; p++)
			if (*p >= 'a' && *p <= 'z' && rand_r(&seed) % 5 == 0)
				*p -= 32;
		bool want = naive_match(entries, n, name);

		ck_assert_msg(cordon_allowlist_match_name(al, name) == want, "'%s': trie says %d",
			      name, !want);
		hits += want;
	}
	/* Both answers well represented, or the comparison proves little. */
	ck_assert_uint_gt(hits, 5000);
	ck_assert_uint_lt(hits, 195000);
	for (size_t i = 0; i < n; i++)
		free(entries[i]);
}
END_TEST

static const struct {
	const char *addr;
	bool match;
} addr_cases[] = {
	{ "10.0.0.0", true },	       { "10.255.255.255", true }, { "9.255.255.255", false },
	{ "11.0.0.0", false },	       { "192.0.2.7", true },	   { "192.0.2.6", false },
	{ "192.0.2.8", false },	       { "2001:db8::", true },	   { "2001:db8:ffff::1", true },
	{ "2001:db9::", false },       { "fd00::1", true },	   { "fd00::2", false },
	{ "::ffff:10.0.0.1", false }, /* families never mix */
	{ "::ffff:192.0.2.7", false },
};

START_TEST(match_addr_table)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = NULL;
	struct cordon_addr a = addr(addr_cases[_i].addr);

	al = list_of("10.0.0.0/8, 192.0.2.7, 2001:db8::/32, fd00::1, pypi.org");
	ck_assert_msg(cordon_allowlist_match_addr(al, &a) == addr_cases[_i].match, "%s",
		      addr_cases[_i].addr);
}
END_TEST

START_TEST(cidrs_for_the_static_sets)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = NULL;
	const struct cordon_cidr *c;
	char buf[INET6_ADDRSTRLEN + 4];
	struct cordon_addr a = addr("10.0.0.1");

	al = list_of("pypi.org,10.0.0.0/8,*.npmjs.org,192.0.2.7,2001:db8::/32,192.0.2.7/32");
	ck_assert_uint_eq(cordon_allowlist_cidrs(al, &c), 3);
	cordon_cidr_format(&c[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.0.0.0/8");
	cordon_cidr_format(&c[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "192.0.2.7/32");
	cordon_cidr_format(&c[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "2001:db8::/32");
	/* The explicit cover the vetting table wants. */
	ck_assert_int_eq(cordon_addr_vet(&a, c, 3), CORDON_VET_OK);
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), CORDON_VET_PRIVATE);

	cordon_allowlist_free(al);
	al = list_of("pypi.org");
	ck_assert_uint_eq(cordon_allowlist_cidrs(al, &c), 0);
	ck_assert_uint_eq(cordon_allowlist_count(NULL), 0);
	cordon_allowlist_free(NULL);
}
END_TEST

/* --- files --------------------------------------------------------------- */

START_TEST(file_with_comments)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	char *path = unit_write(dir, "allow.txt",
				"# package registries\n"
				"pypi.org\n"
				"\n"
				"   files.pythonhosted.org   # wheels\n"
				"\t*.npmjs.org\r\n"
				"# addresses\n"
				"10.0.0.0/8, 192.0.2.7\n"
				"PYPI.org.\n"
				"   \n"
				"#\n"
				"2001:db8::/32"); /* no final newline */

	ck_assert_msg(cordon_allowlist_add_file(al, path, false, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(cordon_allowlist_count(al), 6);
	ck_assert_str_eq(cordon_allowlist_entry(al, 0)->text, "pypi.org");
	ck_assert_str_eq(cordon_allowlist_entry(al, 1)->text, "files.pythonhosted.org");
	ck_assert_str_eq(cordon_allowlist_entry(al, 2)->text, "*.npmjs.org");
	ck_assert_str_eq(cordon_allowlist_entry(al, 5)->text, "2001:db8::/32");
	ck_assert(cordon_allowlist_match_name(al, "registry.npmjs.org"));
	unit_rm_rf(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(file_error_names_file_and_line)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = list_of("example.com");
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	char *path = unit_write(dir, "allow.txt",
				"# header\npypi.org\n\nbad_name.org  # oops\nok.org\n");
	_cleanup_free_ char *want = cordon_xasprintf("%s:4: allowlist entry 'bad_name.org'", path);

	ck_assert_int_lt(cordon_allowlist_add_file(al, path, false, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "underscore"));
	/* Nothing of the file was added. */
	ck_assert_uint_eq(cordon_allowlist_count(al), 1);
	ck_assert(!cordon_allowlist_match_name(al, "pypi.org"));
	unit_rm_rf(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(file_empty_entry_in_a_line)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	char *path = unit_write(dir, "allow.txt", "a.org\nb.org,,c.org\n");
	_cleanup_free_ char *want = cordon_xasprintf("%s:2: ", path);

	ck_assert_int_lt(cordon_allowlist_add_file(al, path, false, &err), 0);
	ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(err.msg, "empty entry"));
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
	unit_rm_rf(dir);
	free(path);
	free(dir);
}
END_TEST

START_TEST(file_empty_and_comment_only)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	char *empty = unit_write(dir, "empty.txt", "");
	char *comments = unit_write(dir, "comments.txt", "# nothing\n\n  # at all\n");

	/* An empty list is the caller's concern, not the parser's. */
	ck_assert_int_eq(cordon_allowlist_add_file(al, empty, false, &err), 0);
	ck_assert_int_eq(cordon_allowlist_add_file(al, comments, false, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
	unit_rm_rf(dir);
	free(empty);
	free(comments);
	free(dir);
}
END_TEST

START_TEST(file_unreadable)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	_cleanup_free_ char *missing = cordon_xasprintf("%s/missing.txt", dir);
	_cleanup_free_ char *fifo = cordon_xasprintf("%s/fifo", dir);

	ck_assert_int_lt(cordon_allowlist_add_file(al, missing, false, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_int_eq(err.errnum, ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, missing));
	/* A directory, a fifo (no writer: a blocking reader would hang) and an endless device. */
	ck_assert_int_lt(cordon_allowlist_add_file(al, dir, false, &err), 0);
	ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_lt(cordon_allowlist_add_file(al, fifo, false, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_msg(strstr(err.msg, fifo) && strstr(err.msg, "not a regular file"), "%s",
		      err.msg);
	ck_assert_int_lt(cordon_allowlist_add_file(al, "/dev/zero", false, &err), 0);
	ck_assert_msg(strstr(err.msg, "/dev/zero: not a regular file"), "%s", err.msg);
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
	unit_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(file_size_cap)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	_cleanup_free_ char *text = cordon_xmalloc(CORDON_INPUT_TEXT_MAX + 2);
	_cleanup_free_ char *at = NULL, *over = NULL;

	/* Comment lines up to exactly the cap, one entry at the end. */
	memset(text, '#', CORDON_INPUT_TEXT_MAX);
	for (size_t i = 1023; i < CORDON_INPUT_TEXT_MAX; i += 1024)
		text[i] = '\n';
	memcpy(text + CORDON_INPUT_TEXT_MAX - 6, "\na.b\n", 5);
	text[CORDON_INPUT_TEXT_MAX - 1] = '\n';
	text[CORDON_INPUT_TEXT_MAX] = '\0';
	at = unit_write(dir, "at.txt", text);
	ck_assert_int_eq(cordon_allowlist_add_file(al, at, false, &err), 0);
	ck_assert_uint_eq(cordon_allowlist_count(al), 1);
	text[CORDON_INPUT_TEXT_MAX] = 'x';
	text[CORDON_INPUT_TEXT_MAX + 1] = '\0';
	over = unit_write(dir, "over.txt", text);
	ck_assert_int_lt(cordon_allowlist_add_file(al, over, false, &err), 0);
	ck_assert_msg(strstr(err.msg, over) && strstr(err.msg, "larger than 4194304 bytes"), "%s",
		      err.msg);
	ck_assert_uint_eq(cordon_allowlist_count(al), 1);
	unit_rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(file_nul_byte)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };
	char *dir = unit_tmpdir();
	_cleanup_free_ char *path = cordon_xasprintf("%s/nul.txt", dir);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fwrite("a.org\npypi.org\0.evil.com\n", 1, 25, f);
	fclose(f);
	ck_assert_int_lt(cordon_allowlist_add_file(al, path, false, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, ":2: NUL byte"));
	ck_assert_uint_eq(cordon_allowlist_count(al), 0);
	unit_rm_rf(dir);
	free(dir);
}
END_TEST

/* --- a live update's edits ------------------------------------------------ */

static void edited(const char *start, const char *edits, const char *want_fp_of)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al = cordon_allowlist_new(), *out;
	char got[65], want[65];

	ck_assert_int_eq(cordon_allowlist_add(al, start, false, &err), 0);
	out = cordon_allowlist_edit(al, edits, strlen(edits), false, &err);
	ck_assert_msg(out != NULL, "edit '%s': %s", edits, err.msg);
	cordon_allowlist_fingerprint(out, got);
	cordon_allowlist_free(out);
	cordon_allowlist_free(al);
	al = cordon_allowlist_new();
	if (want_fp_of)
		ck_assert_int_eq(cordon_allowlist_add(al, want_fp_of, false, &err), 0);
	cordon_allowlist_fingerprint(al, want);
	cordon_allowlist_free(al);
	ck_assert_msg(!strcmp(got, want), "edit '%s' of '%s' is not '%s'", edits, start,
		      want_fp_of ? want_fp_of : "(empty)");
}

static void edit_refused(const char *start, const char *edits, const char *want_msg)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al = cordon_allowlist_new();

	ck_assert_int_eq(cordon_allowlist_add(al, start, false, &err), 0);
	ck_assert_ptr_null(cordon_allowlist_edit(al, edits, strlen(edits), false, &err));
	ck_assert_msg(strstr(err.msg, want_msg), "edit '%s': '%s' does not say '%s'", edits,
		      err.msg, want_msg);
	cordon_allowlist_free(al);
}

START_TEST(edit_adds_and_removes)
{
	edited("a.test,10.0.0.0/8", "+b.test\n", "a.test,b.test,10.0.0.0/8");
	edited("a.test,10.0.0.0/8", "-A.TEST.\n+192.0.2.1,*.c.test\n",
	       "10.0.0.0/8,192.0.2.1,*.c.test");
	edited("a.test", "+a.test\n\n", "a.test");
	edited("a.test,b.test", "-a.test,b.test", NULL);
	/* Removal first, whatever the order: "-x then +x" and "+x then -x" keep x. */
	edited("a.test", "+a.test\n-a.test\n", "a.test");
}
END_TEST

START_TEST(edit_refuses_what_it_cannot_do)
{
	edit_refused("a.test", "-b.test", "not an entry of the allowlist");
	edit_refused("a.test,10.0.0.0/8", "-10.0.0.0/16", "not an entry");
	edit_refused("a.test", "+bad..name", "allow bad..name");
	edit_refused("a.test", "+0.0.0.0/0", "allow 0.0.0.0/0");
	edit_refused("a.test", "a.test", "neither +ENTRY nor -ENTRY");
	edit_refused("a.test", "+b.test\n?c.test", "change 2");
}
END_TEST

/* --- fingerprint --------------------------------------------------------- */

static void fingerprint_of(const char *value, char out[65])
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };

	if (value)
		ck_assert_msg(cordon_allowlist_add(al, value, false, &err) == 0, "%s", err.msg);
	cordon_allowlist_fingerprint(al, out);
}

START_TEST(fingerprint_known_values)
{
	char fp[65];

	/* printf '%s' "$joined" | sha256sum */
	fingerprint_of(NULL, fp);
	ck_assert_str_eq(fp, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	fingerprint_of("pypi.org", fp);
	ck_assert_str_eq(fp, "a4aa2ac280bb8d1a0ce7a1be5a7bfb10292b49fe9435ad5cff19f421f3c70e41");
	/* "*.npmjs.org\n10.0.0.0/8\npypi.org": sorted bytewise, no final newline. */
	fingerprint_of("pypi.org,10.0.0.0/8,*.npmjs.org", fp);
	ck_assert_str_eq(fp, "713507073e1bf136091c38ae8f40c70cfc67a75887f80c138c886b2dcb9777f9");
}
END_TEST

START_TEST(fingerprint_order_and_spelling_independent)
{
	char a[65], b[65], c[65], d[65];

	fingerprint_of("pypi.org,*.npmjs.org,10.0.0.0/8,2001:db8::1", a);
	fingerprint_of("2001:DB8:0::1, 10.0.0.0/8 ,*.NPMJS.org.,PyPI.org", b);
	fingerprint_of("*.npmjs.org,pypi.org,pypi.org.,10.0.0.0/8,2001:db8::1/128,pypi.org", c);
	ck_assert_str_eq(a, b);
	ck_assert_str_eq(a, c);
	/* A different list, or the same names as a different kind, differs. */
	fingerprint_of("pypi.org,*.npmjs.org,10.0.0.0/8", d);
	ck_assert_str_ne(a, d);
	fingerprint_of("pypi.org,npmjs.org,10.0.0.0/8,2001:db8::1", d);
	ck_assert_str_ne(a, d);
	ck_assert_uint_eq(strlen(a), 64);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 64);
}
END_TEST

START_TEST(fingerprint_stable_across_adds)
{
	_cleanup_(allowlist_freep) struct cordon_allowlist *al = list_of("b.org,a.org");
	struct cordon_error err = { 0 };
	char before[65], again[65], after[65], want[65];

	cordon_allowlist_fingerprint(al, before);
	cordon_allowlist_fingerprint(al, again);
	ck_assert_str_eq(before, again);
	ck_assert_int_eq(cordon_allowlist_add(al, "A.org", false, &err), 0);
	cordon_allowlist_fingerprint(al, again);
	ck_assert_str_eq(before, again);
	ck_assert_int_eq(cordon_allowlist_add(al, "c.org", false, &err), 0);
	cordon_allowlist_fingerprint(al, after);
	ck_assert_str_ne(before, after);
	fingerprint_of("c.org,a.org,b.org", want);
	ck_assert_str_eq(after, want);
}
END_TEST

static Suite *net_allowlist_suite(void)
{
	Suite *s = suite_create("net-allowlist");
	TCase *tc = tcase_create("entries");

	tcase_add_loop_test(tc, entry_good, 0, ARRAY_SIZE(good_entries));
	tcase_add_loop_test(tc, entry_bad, 0, ARRAY_SIZE(bad_entries));
	tcase_add_test(tc, entry_lengths);
	tcase_add_test(tc, allow_any);
	tcase_add_test(tc, comma_separated_and_merged);
	tcase_add_test(tc, empty_entries_refused);
	tcase_add_test(tc, value_is_all_or_nothing);
	suite_add_tcase(s, tc);

	tc = tcase_create("match");
	tcase_add_loop_test(tc, match_table, 0, ARRAY_SIZE(match_cases));
	tcase_add_test(tc, match_degenerate);
	tcase_add_test(tc, match_many);
	tcase_add_test(tc, match_agrees_with_naive);
	tcase_add_loop_test(tc, match_addr_table, 0, ARRAY_SIZE(addr_cases));
	tcase_add_test(tc, cidrs_for_the_static_sets);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_test(tc, file_with_comments);
	tcase_add_test(tc, file_error_names_file_and_line);
	tcase_add_test(tc, file_empty_entry_in_a_line);
	tcase_add_test(tc, file_empty_and_comment_only);
	tcase_add_test(tc, file_unreadable);
	tcase_add_test(tc, file_size_cap);
	tcase_add_test(tc, file_nul_byte);
	suite_add_tcase(s, tc);

	tc = tcase_create("fingerprint");
	tcase_add_test(tc, edit_adds_and_removes);
	tcase_add_test(tc, edit_refuses_what_it_cannot_do);
	tcase_add_test(tc, fingerprint_known_values);
	tcase_add_test(tc, fingerprint_order_and_spelling_independent);
	tcase_add_test(tc, fingerprint_stable_across_adds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(net_allowlist_suite());
}
