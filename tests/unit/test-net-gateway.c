// SPDX-License-Identifier: Apache-2.0
/*
 * The pure parts of allowlisted egress: the gateway's blocked sets, the
 * internal link's overlap check, DNS upstream and resolv.conf parsing,
 * and the network flags' validation in cordon_spec_finalize_net.
 */
#include <arpa/inet.h>
#include <string.h>

#include "cordon/spec.h"
#include "unit.h"

static struct cordon_cidr cidr(const char *s)
{
	struct cordon_cidr c;

	ck_assert_msg(cordon_cidr_parse(s, &c, NULL) == 0, "cannot parse %s", s);
	return c;
}

static struct cordon_addr addr(const char *s)
{
	struct cordon_addr a;

	ck_assert_msg(cordon_addr_parse(s, &a) == 0, "cannot parse %s", s);
	return a;
}

/* Is a covered by any CIDR of the list? */
static bool blocked(const struct cordon_cidr *v, size_t n, const char *a)
{
	struct cordon_addr x = addr(a);

	for (size_t i = 0; i < n; i++)
		if (cordon_cidr_contains(&v[i], &x))
			return true;
	return false;
}

static struct cordon_allowlist *allowlist(const char *value)
{
	struct cordon_allowlist *al = cordon_allowlist_new();
	struct cordon_error err = { 0 };

	ck_assert_msg(cordon_allowlist_add(al, value, true, &err) == 0, "%s", err.msg);
	return al;
}

START_TEST(blocked_is_the_vetting_table_without_an_allowlist)
{
	struct cordon_cidr *v = NULL;
	size_t n = cordon_gateway_blocked(NULL, NULL, 0, &v);

	ck_assert(blocked(v, n, "10.1.2.3"));
	ck_assert(blocked(v, n, "169.254.169.254"));
	ck_assert(blocked(v, n, "127.0.0.1"));
	ck_assert(blocked(v, n, "fd00::1"));
	ck_assert(blocked(v, n, "fec0::1"));
	ck_assert(blocked(v, n, "64:ff9b:1::808:808"));
	ck_assert(!blocked(v, n, "93.184.216.34"));
	ck_assert(!blocked(v, n, "2606:2800:220:1::1"));
	/*
	 * No embedded IPv4 form in the sets: the forward chain checks each
	 * one of an IPv6 destination against blocked4 (test-net-nft).
	 */
	ck_assert(!blocked(v, n, "::ffff:10.0.0.1"));
	ck_assert(!blocked(v, n, "64:ff9b::a9fe:a9fe"));
	free(v);
}
END_TEST

START_TEST(blocked_cidr_entry_opens_its_part_only)
{
	struct cordon_allowlist *al = allowlist("10.8.0.0/24");
	struct cordon_cidr *v = NULL;
	size_t n = cordon_gateway_blocked(al, NULL, 0, &v);

	ck_assert(!blocked(v, n, "10.8.0.1"));
	ck_assert(!blocked(v, n, "10.8.0.255"));
	ck_assert(blocked(v, n, "10.8.1.0"));
	ck_assert(blocked(v, n, "10.7.255.255"));
	ck_assert(blocked(v, n, "10.0.0.1"));
	ck_assert(blocked(v, n, "192.168.1.1"));
	free(v);
	cordon_allowlist_free(al);
}
END_TEST

START_TEST(blocked_wide_entries_open_nothing_refused)
{
	struct cordon_allowlist *al = allowlist("0.0.0.0/0,::/0,8.0.0.0/5");
	struct cordon_cidr *v = NULL;
	size_t n = cordon_gateway_blocked(al, NULL, 0, &v);

	/* 8.0.0.0/5 holds 10/8 but lies inside no refused range: it opens nothing refused. */
	ck_assert(blocked(v, n, "10.0.0.1"));
	ck_assert(blocked(v, n, "127.0.0.1"));
	ck_assert(blocked(v, n, "fe80::1"));
	free(v);
	cordon_allowlist_free(al);
}
END_TEST

START_TEST(blocked_metadata_stays_unless_listed_exactly)
{
	struct cordon_allowlist *al = allowlist("169.254.0.0/16");
	struct cordon_cidr *v = NULL;
	size_t n = cordon_gateway_blocked(al, NULL, 0, &v);

	ck_assert(!blocked(v, n, "169.254.1.1"));
	ck_assert(blocked(v, n, "169.254.169.254"));
	ck_assert(blocked(v, n, "169.254.170.2"));
	free(v);
	cordon_allowlist_free(al);

	al = allowlist("169.254.169.254");
	n = cordon_gateway_blocked(al, NULL, 0, &v);
	ck_assert(!blocked(v, n, "169.254.169.254"));
	ck_assert(blocked(v, n, "169.254.170.2"));
	ck_assert(blocked(v, n, "169.254.1.1"));
	free(v);
	cordon_allowlist_free(al);
}
END_TEST

START_TEST(blocked_extra_addresses_always)
{
	struct cordon_allowlist *al = allowlist("203.0.113.0/24");
	struct cordon_addr extra[] = { addr("203.0.113.7"), addr("2001:db9::1") };
	struct cordon_cidr *v = NULL;
	size_t n = cordon_gateway_blocked(al, extra, 2, &v);

	ck_assert(!blocked(v, n, "203.0.113.6"));
	ck_assert(blocked(v, n, "203.0.113.7"));
	ck_assert(blocked(v, n, "2001:db9::1"));
	ck_assert(!blocked(v, n, "2001:db9::2"));
	free(v);
	cordon_allowlist_free(al);
}
END_TEST

START_TEST(split_around_covers_exactly)
{
	struct cordon_cidr r = cidr("10.0.0.0/8"), hole = cidr("10.8.0.0/24"), pieces[128];
	size_t n = cordon_cidr_split_around(&r, &hole, pieces);
	uint64_t total = 0;

	ck_assert_uint_eq(n, 16);
	for (size_t i = 0; i < n; i++) {
		ck_assert(cordon_cidr_within(&pieces[i], &r));
		ck_assert(!cordon_cidr_within(&hole, &pieces[i]));
		total += 1ull << (32 - pieces[i].prefix);
	}
	ck_assert_uint_eq(total + 256, 1ull << 24);
}
END_TEST

START_TEST(internal_link_overlap_refused)
{
	static const char *const bad[] = { "10.254.254.1", "10.254.254.0/30", "10.254.254.2/31",
					   "fd63:6f72:646f:6e::5", "fd63:6f72:646f:6e::/64" };
	struct cordon_error err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_allowlist *al = allowlist(bad[i]);

		ck_assert_int_eq(cordon_gateway_check_allowlist(al, &err), -1);
		ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
		ck_assert_msg(strstr(err.msg, "internal link"), "%s", err.msg);
		cordon_allowlist_free(al);
	}
	{
		struct cordon_allowlist *al = allowlist("10.254.253.0/24,10.0.0.0/8,0.0.0.0/0,::/0,example.org");

		ck_assert_int_eq(cordon_gateway_check_allowlist(al, &err), 0);
		cordon_allowlist_free(al);
	}
}
END_TEST

static void upstream_is(const char *text, int family, const char *host, unsigned port)
{
	struct sockaddr_storage ss;
	char buf[INET6_ADDRSTRLEN];

	ck_assert_msg(cordon_dns_upstream_parse(text, &ss) == 0, "refused %s", text);
	ck_assert_int_eq(ss.ss_family, family);
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
		ck_assert_uint_eq(ntohs(sin->sin_port), port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
		ck_assert_uint_eq(ntohs(sin6->sin6_port), port);
	}
	ck_assert_str_eq(buf, host);
}

START_TEST(upstream_forms)
{
	static const char *const bad[] = { "", "dns.example", "1.2.3.4:", "1.2.3.4:0",
					   "1.2.3.4:65536", "[::1", "[::1]x", "[::1]:", "1.2.3.4:53x",
					   "[1.2.3.4]:53x", "300.1.1.1" };
	struct sockaddr_storage ss;

	upstream_is("9.9.9.9", AF_INET, "9.9.9.9", 53);
	upstream_is("9.9.9.9:5353", AF_INET, "9.9.9.9", 5353);
	upstream_is("2620:fe::fe", AF_INET6, "2620:fe::fe", 53);
	upstream_is("[2620:fe::fe]:853", AF_INET6, "2620:fe::fe", 853);
	upstream_is("[2620:fe::fe]", AF_INET6, "2620:fe::fe", 53);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(cordon_dns_upstream_parse(bad[i], &ss) < 0, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(resolv_conf_skips_loopback_stubs)
{
	static const char text[] = "# generated\n"
				   "search example.org\n"
				   "nameserver 127.0.0.53\n"
				   "nameserver ::1\n"
				   "  nameserver\t192.0.2.53 # office\n"
				   "nameserver fe80::1%eth0\n"
				   "nameserver 2001:db8::53\n"
				   "nameserverx 1.1.1.1\n"
				   "options edns0\n";
	struct sockaddr_storage ns[8];
	size_t skipped, n = cordon_resolv_conf_nameservers(text, ns, 8, &skipped);

	ck_assert_uint_eq(skipped, 2);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(ns[0].ss_family, AF_INET);
	ck_assert_int_eq(ns[1].ss_family, AF_INET6);
	ck_assert_int_eq(ns[2].ss_family, AF_INET6);
	n = cordon_resolv_conf_nameservers("nameserver 127.0.0.1\n", ns, 8, &skipped);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(skipped, 1);
}
END_TEST

/* --- finalize: the flags' validation ---------------------------------- */

static int finalize_net(struct cordon_spec *spec, struct cordon_error *err)
{
	return cordon_spec_finalize_net(spec, err);
}

START_TEST(net_flags_need_an_allowlist)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	ck_assert_int_eq(finalize_net(&spec, &err), 0);
	ck_assert(!spec.net.enabled);
	cordon_strv_push(&spec.net.upstream_text, &spec.net.n_upstream_text, "9.9.9.9");
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_msg(strstr(err.msg, "--dns-upstream needs --net-allow"), "%s", err.msg);
	cordon_spec_free(&spec);

	cordon_spec_init(&spec);
	spec.net.dns_given = spec.net.dns_none = true;
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "--dns needs"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(net_bad_entry_named)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow, &spec.net.n_allow, "example.org,*.com");
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_msg(strstr(err.msg, "*.com"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(net_dns_none_and_upstream_conflict)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow, &spec.net.n_allow, "example.org");
	cordon_strv_push(&spec.net.upstream_text, &spec.net.n_upstream_text, "9.9.9.9");
	spec.net.dns_none = spec.net.dns_given = true;
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "exclude each other"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(net_bad_upstream_and_pool)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow, &spec.net.n_allow, "example.org");
	cordon_strv_push(&spec.net.upstream_text, &spec.net.n_upstream_text, "dns.example");
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "--dns-upstream 'dns.example'"), "%s", err.msg);
	cordon_spec_free(&spec);

	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow, &spec.net.n_allow, "example.org");
	spec.net.pool = cordon_xstrdup("10.231.0.1/16");
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "--net-pool '10.231.0.1/16'"), "%s", err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(net_host_loopback_needs_pasta)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };

	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow, &spec.net.n_allow, "example.org");
	cordon_strv_push(&spec.net.upstream_text, &spec.net.n_upstream_text, "9.9.9.9");
	spec.net.backend = CORDON_NET_BACKEND_VETH;
	spec.net.allow_host_loopback = true;
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "--allow-host-loopback needs --net-backend pasta"), "%s",
		      err.msg);
	cordon_spec_free(&spec);
}
END_TEST

START_TEST(net_empty_allowlist_file)
{
	struct cordon_spec spec;
	struct cordon_error err = { 0 };
	char path[] = "/tmp/cordon-unit-allow.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "# nothing\n\n", 11), 11);
	close(fd);
	cordon_spec_init(&spec);
	cordon_strv_push(&spec.net.allow_files, &spec.net.n_allow_files, path);
	ck_assert_int_eq(finalize_net(&spec, &err), -1);
	ck_assert_msg(strstr(err.msg, "allowlist is empty"), "%s", err.msg);
	cordon_spec_free(&spec);
	unlink(path);
}
END_TEST

static Suite *net_gateway_suite(void)
{
	Suite *s = suite_create("net-gateway");
	TCase *tc = tcase_create("blocked");

	tcase_add_test(tc, blocked_is_the_vetting_table_without_an_allowlist);
	tcase_add_test(tc, blocked_cidr_entry_opens_its_part_only);
	tcase_add_test(tc, blocked_wide_entries_open_nothing_refused);
	tcase_add_test(tc, blocked_metadata_stays_unless_listed_exactly);
	tcase_add_test(tc, blocked_extra_addresses_always);
	tcase_add_test(tc, split_around_covers_exactly);
	tcase_add_test(tc, internal_link_overlap_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("dns-upstream");
	tcase_add_test(tc, upstream_forms);
	tcase_add_test(tc, resolv_conf_skips_loopback_stubs);
	suite_add_tcase(s, tc);

	tc = tcase_create("flags");
	tcase_add_test(tc, net_flags_need_an_allowlist);
	tcase_add_test(tc, net_bad_entry_named);
	tcase_add_test(tc, net_dns_none_and_upstream_conflict);
	tcase_add_test(tc, net_bad_upstream_and_pool);
	tcase_add_test(tc, net_host_loopback_needs_pasta);
	tcase_add_test(tc, net_empty_allowlist_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(net_gateway_suite());
}
