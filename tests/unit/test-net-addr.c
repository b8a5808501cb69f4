// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/net/addr.c: address and CIDR parsing and formatting,
 * and the vetting table on every boundary (first and last address of each
 * refused range and the neighbours just outside).
 *
 * Built twice: test-net-addr links the library as it is (no CORDON_TEST_LAB)
 * and sets CORDON_LAB_PUBLIC_CIDR=198.18.0.0/15 to show that the variable is
 * ignored there; test-net-addr-lab compiles addr.c with -DCORDON_TEST_LAB,
 * runs the same boundary table with the variable unset, and adds the lab
 * override cases (each in its own forked process, since the table is built
 * once per process).
 */
#include <arpa/inet.h>
#include <string.h>

#include "cordon/net.h"
#include "unit.h"

static struct cordon_addr addr(const char *s)
{
	struct cordon_addr a;

	ck_assert_msg(cordon_addr_parse(s, &a) == 0, "cannot parse %s", s);
	return a;
}

static struct cordon_cidr cidr(const char *s)
{
	struct cordon_cidr c;

	ck_assert_msg(cordon_cidr_parse(s, &c, NULL) == 0, "cannot parse %s", s);
	return c;
}

/* --- parsing and formatting ------------------------------------------ */

static const struct {
	const char *text;
	int family;
	const char *formatted;
} good_addrs[] = {
	{ "1.2.3.4", AF_INET, "1.2.3.4" },
	{ "0.0.0.0", AF_INET, "0.0.0.0" },
	{ "255.255.255.255", AF_INET, "255.255.255.255" },
	{ "::", AF_INET6, "::" },
	{ "::1", AF_INET6, "::1" },
	{ "2001:DB8:0:0::1", AF_INET6, "2001:db8::1" },
	{ "::ffff:1.2.3.4", AF_INET6, "::ffff:1.2.3.4" },
	{ "fe80:0000:0000:0000:0000:0000:0000:0001", AF_INET6, "fe80::1" },
};

START_TEST(addr_parse_good)
{
	struct cordon_addr a;
	char buf[INET6_ADDRSTRLEN + 4];

	ck_assert_int_eq(cordon_addr_parse(good_addrs[_i].text, &a), 0);
	ck_assert_int_eq(a.family, good_addrs[_i].family);
	cordon_addr_format(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, good_addrs[_i].formatted);
}
END_TEST

static const char *const bad_addrs[] = {
	"",
	"1.2.3",
	"1.2.3.4.5",
	"256.0.0.0",
	"01.2.3.4",   /* octal to inet_aton */
	"0x7f.0.0.1", /* hex to inet_aton */
	"127.1",      /* short form to inet_aton */
	"2130706433", /* 127.0.0.1 as a number to inet_aton */
	"1.2.3.4/8",  /* a CIDR is not an address */
	" 1.2.3.4",
	"1.2.3.4 ",
	"fe80::1%eth0", /* no zone index */
	"::g",
	"1:2:3:4:5:6:7:8:9",
	"[::1]",
	"localhost",
};

START_TEST(addr_parse_bad)
{
	struct cordon_addr a;

	ck_assert_msg(cordon_addr_parse(bad_addrs[_i], &a) == -EINVAL, "'%s' accepted",
		      bad_addrs[_i]);
}
END_TEST

START_TEST(addr_parse_null)
{
	struct cordon_addr a;

	ck_assert_int_eq(cordon_addr_parse(NULL, &a), -EINVAL);
}
END_TEST

static const struct {
	const char *text;
	int ret;
	bool host_bits;
	const char *formatted;
} cidr_cases[] = {
	{ "10.0.0.0/8", 0, false, "10.0.0.0/8" },
	{ "10.0.0.1/8", 0, true, "10.0.0.0/8" },
	{ "10.128.0.0/9", 0, false, "10.128.0.0/9" },
	{ "10.192.0.0/9", 0, true, "10.128.0.0/9" },
	{ "1.2.3.4", 0, false, "1.2.3.4/32" },
	{ "1.2.3.4/32", 0, false, "1.2.3.4/32" },
	{ "0.0.0.0/0", 0, false, "0.0.0.0/0" },
	{ "1.0.0.0/0", 0, true, "0.0.0.0/0" },
	{ "::/0", 0, false, "::/0" },
	{ "fd00::/8", 0, false, "fd00::/8" },
	{ "FD00::/8", 0, false, "fd00::/8" },
	{ "2001:db8::1/64", 0, true, "2001:db8::/64" },
	{ "2001:db8::1/128", 0, false, "2001:db8::1/128" },
	{ "::1", 0, false, "::1/128" },
	{ "10.0.0.0/33", -EINVAL, false, NULL },
	{ "fd00::/129", -EINVAL, false, NULL },
	{ "10.0.0.0/", -EINVAL, false, NULL },
	{ "10.0.0.0/08", -EINVAL, false, NULL },
	{ "10.0.0.0/+8", -EINVAL, false, NULL },
	{ "10.0.0.0/-8", -EINVAL, false, NULL },
	{ "10.0.0.0/8 ", -EINVAL, false, NULL },
	{ "10.0.0.0/ 8", -EINVAL, false, NULL },
	{ "10.0.0.0/0008", -EINVAL, false, NULL },
	{ "10.0.0.0/8/8", -EINVAL, false, NULL },
	{ "/8", -EINVAL, false, NULL },
	{ "10.0.0/8", -EINVAL, false, NULL },
	{ "", -EINVAL, false, NULL },
};

START_TEST(cidr_parse_table)
{
	struct cordon_cidr c;
	bool host_bits = !cidr_cases[_i].host_bits;
	char buf[INET6_ADDRSTRLEN + 4];

	ck_assert_msg(cordon_cidr_parse(cidr_cases[_i].text, &c, &host_bits) == cidr_cases[_i].ret,
		      "%s", cidr_cases[_i].text);
	if (cidr_cases[_i].ret < 0)
		return;
	ck_assert_msg(host_bits == cidr_cases[_i].host_bits, "%s", cidr_cases[_i].text);
	cordon_cidr_format(&c, buf, sizeof(buf));
	ck_assert_str_eq(buf, cidr_cases[_i].formatted);
}
END_TEST

START_TEST(cidr_parse_host_bits_need_the_flag)
{
	struct cordon_cidr c;

	/* A caller that does not ask about host bits never gets a widened range. */
	ck_assert_int_eq(cordon_cidr_parse("10.0.0.1/8", &c, NULL), -EINVAL);
	ck_assert_int_eq(cordon_cidr_parse("10.0.0.0/8", &c, NULL), 0);
	ck_assert_int_eq(cordon_cidr_parse(NULL, &c, NULL), -EINVAL);
}
END_TEST

static const struct {
	const char *cidr, *addr;
	bool in;
} contains_cases[] = {
	{ "10.0.0.0/8", "10.0.0.0", true },
	{ "10.0.0.0/8", "10.255.255.255", true },
	{ "10.0.0.0/8", "9.255.255.255", false },
	{ "10.0.0.0/8", "11.0.0.0", false },
	{ "100.64.0.0/10", "100.127.255.255", true },
	{ "100.64.0.0/10", "100.128.0.0", false },
	{ "1.2.3.4/32", "1.2.3.4", true },
	{ "1.2.3.4/32", "1.2.3.5", false },
	{ "0.0.0.0/0", "255.255.255.255", true },
	{ "0.0.0.0/0", "::", false }, /* never across families */
	{ "::/0", "1.2.3.4", false },
	{ "::/0", "ffff::1", true },
	{ "fe80::/10", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true },
	{ "fe80::/10", "fec0::", false },
	{ "::ffff:0:0/96", "::ffff:10.0.0.1", true },
	{ "10.0.0.0/8", "::ffff:10.0.0.1", false },
};

START_TEST(cidr_contains_table)
{
	struct cordon_cidr c = cidr(contains_cases[_i].cidr);
	struct cordon_addr a = addr(contains_cases[_i].addr);

	ck_assert_msg(cordon_cidr_contains(&c, &a) == contains_cases[_i].in, "%s in %s",
		      contains_cases[_i].addr, contains_cases[_i].cidr);
}
END_TEST

START_TEST(format_short_buffer_and_bad_family)
{
	struct cordon_addr a = addr("2001:db8::1");
	struct cordon_addr none = { 0 };
	struct cordon_cidr c = cidr("192.168.0.0/16");
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	cordon_addr_format(&a, buf, 5);
	ck_assert_str_eq(buf, "2001");
	ck_assert_int_eq(buf[5], 'x');
	cordon_cidr_format(&c, buf, 8);
	ck_assert_str_eq(buf, "192.168");
	cordon_addr_format(&none, buf, sizeof(buf));
	ck_assert_str_eq(buf, "invalid");
	/* The header's promise: INET6_ADDRSTRLEN + 4 holds the longest CIDR. */
	c = cidr("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.0/128");
	char exact[INET6_ADDRSTRLEN + 4];
	cordon_cidr_format(&c, exact, sizeof(exact));
	ck_assert_str_eq(exact, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/128");
}
END_TEST

/* --- the vetting table --------------------------------------------------- */

#define OK CORDON_VET_OK
#define UNSPECIFIED CORDON_VET_UNSPECIFIED
#define LOOPBACK CORDON_VET_LOOPBACK
#define LINK_LOCAL CORDON_VET_LINK_LOCAL
#define METADATA CORDON_VET_METADATA
#define PRIVATE CORDON_VET_PRIVATE
#define CGNAT CORDON_VET_CGNAT
#define MULTICAST CORDON_VET_MULTICAST
#define BROADCAST CORDON_VET_BROADCAST
#define THIS_NETWORK CORDON_VET_THIS_NETWORK
#define RESERVED CORDON_VET_RESERVED
#define BENCHMARK CORDON_VET_BENCHMARK
#define DOCUMENTATION CORDON_VET_DOCUMENTATION
#define EMBEDDED CORDON_VET_EMBEDDED

static const struct {
	const char *addr;
	enum cordon_vet why;
} vet_cases[] = {
	/* 0.0.0.0/8, with 0.0.0.0 itself unspecified */
	{ "0.0.0.0", UNSPECIFIED },
	{ "0.0.0.1", THIS_NETWORK },
	{ "0.255.255.255", THIS_NETWORK },
	{ "1.0.0.0", OK },
	/* 10.0.0.0/8 */
	{ "9.255.255.255", OK },
	{ "10.0.0.0", PRIVATE },
	{ "10.255.255.255", PRIVATE },
	{ "11.0.0.0", OK },
	/* 100.64.0.0/10, holding Alibaba's metadata address */
	{ "100.63.255.255", OK },
	{ "100.64.0.0", CGNAT },
	{ "100.100.100.199", CGNAT },
	{ "100.100.100.200", METADATA },
	{ "100.100.100.201", CGNAT },
	{ "100.127.255.255", CGNAT },
	{ "100.128.0.0", OK },
	/* 127.0.0.0/8 */
	{ "126.255.255.255", OK },
	{ "127.0.0.0", LOOPBACK },
	{ "127.0.0.1", LOOPBACK },
	{ "127.255.255.255", LOOPBACK },
	{ "128.0.0.0", OK },
	/* Azure's wire server, a single public address */
	{ "168.63.129.15", OK },
	{ "168.63.129.16", METADATA },
	{ "168.63.129.17", OK },
	/* 169.254.0.0/16 and the metadata addresses inside it */
	{ "169.253.255.255", OK },
	{ "169.254.0.0", LINK_LOCAL },
	{ "169.254.169.252", LINK_LOCAL },
	{ "169.254.169.253", METADATA },
	{ "169.254.169.254", METADATA },
	{ "169.254.169.255", LINK_LOCAL },
	{ "169.254.170.1", LINK_LOCAL },
	{ "169.254.170.2", METADATA },
	{ "169.254.170.3", LINK_LOCAL },
	{ "169.254.255.255", LINK_LOCAL },
	{ "169.255.0.0", OK },
	/* 172.16.0.0/12 */
	{ "172.15.255.255", OK },
	{ "172.16.0.0", PRIVATE },
	{ "172.31.255.255", PRIVATE },
	{ "172.32.0.0", OK },
	/* 192.0.0.0/24 and Oracle's metadata address in it */
	{ "191.255.255.255", OK },
	{ "192.0.0.0", RESERVED },
	{ "192.0.0.191", RESERVED },
	{ "192.0.0.192", METADATA },
	{ "192.0.0.193", RESERVED },
	{ "192.0.0.255", RESERVED },
	{ "192.0.1.0", OK },
	/* 192.0.2.0/24 */
	{ "192.0.1.255", OK },
	{ "192.0.2.0", DOCUMENTATION },
	{ "192.0.2.255", DOCUMENTATION },
	{ "192.0.3.0", OK },
	/* 192.168.0.0/16 */
	{ "192.167.255.255", OK },
	{ "192.168.0.0", PRIVATE },
	{ "192.168.255.255", PRIVATE },
	{ "192.169.0.0", OK },
	/* 198.18.0.0/15 */
	{ "198.17.255.255", OK },
	{ "198.18.0.0", BENCHMARK },
	{ "198.19.255.255", BENCHMARK },
	{ "198.20.0.0", OK },
	/* 198.51.100.0/24 */
	{ "198.51.99.255", OK },
	{ "198.51.100.0", DOCUMENTATION },
	{ "198.51.100.255", DOCUMENTATION },
	{ "198.51.101.0", OK },
	/* 203.0.113.0/24 */
	{ "203.0.112.255", OK },
	{ "203.0.113.0", DOCUMENTATION },
	{ "203.0.113.255", DOCUMENTATION },
	{ "203.0.114.0", OK },
	/* 224.0.0.0/4, then 240.0.0.0/4 up to the broadcast address */
	{ "223.255.255.255", OK },
	{ "224.0.0.0", MULTICAST },
	{ "239.255.255.255", MULTICAST },
	{ "240.0.0.0", RESERVED },
	{ "255.255.255.254", RESERVED },
	{ "255.255.255.255", BROADCAST },
	/* public */
	{ "1.1.1.1", OK },
	{ "8.8.8.8", OK },
	{ "151.101.0.223", OK },

	/* IPv6: unspecified, loopback, and ::2 as IPv4-compatible 0.0.0.2 */
	{ "::", UNSPECIFIED },
	{ "::1", LOOPBACK },
	{ "::2", EMBEDDED },
	/* 2001:db8::/32 */
	{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", OK },
	{ "2001:db8::", DOCUMENTATION },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", DOCUMENTATION },
	{ "2001:db9::", OK },
	/* fc00::/7, holding AWS's IPv6 metadata address */
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OK },
	{ "fc00::", PRIVATE },
	{ "fd00:ec2::253", PRIVATE },
	{ "fd00:ec2::254", METADATA },
	{ "fd00:ec2::255", PRIVATE },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PRIVATE },
	{ "fe00::", OK },
	/* fe80::/10 */
	{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OK },
	{ "fe80::", LINK_LOCAL },
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", LINK_LOCAL },
	/* fec0::/10, site-local (deprecated): local like fc00::/7 */
	{ "fec0::", PRIVATE },
	{ "fec0::a9fe:a9fe", PRIVATE },
	{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", PRIVATE },
	/* ff00::/8 */
	{ "ff00::", MULTICAST },
	{ "ff02::1", MULTICAST },
	{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", MULTICAST },
	/* public */
	{ "2001:4860:4860::8888", OK },
	{ "2606:4700::1111", OK },
	{ "2001:0:4136:e378:8000:63bf:f7f7:f7f7", OK }, /* Teredo: 65.54.227.120 for 8.8.8.8 */
	{ "64:ff9b:2::808:808", OK },			/* just past local-use NAT64 */

	/* IPv4-mapped ::ffff:0:0/96 */
	{ "::ffff:0.0.0.0", EMBEDDED },
	{ "::ffff:9.255.255.255", OK },
	{ "::ffff:10.0.0.0", EMBEDDED },
	{ "::ffff:10.255.255.255", EMBEDDED },
	{ "::ffff:11.0.0.0", OK },
	{ "::ffff:127.0.0.1", EMBEDDED },
	{ "::ffff:169.254.169.254", EMBEDDED },
	{ "::ffff:168.63.129.16", EMBEDDED },
	{ "::ffff:168.63.129.17", OK },
	{ "::ffff:255.255.255.255", EMBEDDED },
	{ "::ffff:8.8.8.8", OK },
	{ "::fffe:ffff:ffff", OK }, /* just below the mapped range */
	{ "::1:0:0:0", OK },	    /* just above it */
	/* IPv4-compatible ::/96 */
	{ "::10.0.0.1", EMBEDDED },
	{ "::127.0.0.1", EMBEDDED },
	{ "::192.168.1.1", EMBEDDED },
	{ "::8.8.8.8", OK },
	/* NAT64 64:ff9b::/96 */
	{ "64:ff9b::a00:1", EMBEDDED },
	{ "64:ff9b::7f00:1", EMBEDDED },
	{ "64:ff9b::a9fe:a9fe", EMBEDDED },
	{ "64:ff9b::9ff:ffff", OK },
	{ "64:ff9b::b00:0", OK },
	{ "64:ff9b::808:808", OK },
	{ "64:ff9a:ffff:ffff:ffff:ffff:a00:1", OK }, /* outside the prefix */
	/* 6to4 2002::/16, the IPv4 address in bits 16-47 */
	{ "2002:a00:1::", EMBEDDED },
	{ "2002:a00:1:ffff:ffff:ffff:ffff:ffff", EMBEDDED },
	{ "2002:7f00:1::1", EMBEDDED },
	{ "2002:a9fe:a9fe::", EMBEDDED },
	{ "2002:c0a8:101::1", EMBEDDED },
	{ "2002:9ff:ffff:ffff:ffff:ffff:ffff:ffff", OK },
	{ "2002:b00::", OK },
	{ "2002:808:808::1", OK },
	{ "2001:ffff:a00:1::", OK }, /* just below 2002::/16 */
	{ "2003:a00:1::", OK },	     /* just above */
	/* IPv4-translated (SIIT) ::ffff:0:0:0/96 */
	{ "::ffff:0:a9fe:a9fe", EMBEDDED },
	{ "::ffff:0:7f00:1", EMBEDDED },
	{ "::ffff:0:808:808", OK },
	/* local-use NAT64 64:ff9b:1::/48 (RFC 8215): refused whole, its /96 forms embedded */
	{ "64:ff9b:1::a9fe:a9fe", EMBEDDED },
	{ "64:ff9b:1::a00:1", EMBEDDED },
	{ "64:ff9b:1:abcd::a9fe:a9fe", EMBEDDED }, /* under a /96 an operator chose */
	{ "64:ff9b:1::808:808", PRIVATE },
	{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", EMBEDDED }, /* 255.255.255.255 */
	{ "64:ff9b:1:ffff:ffff:ffff:808:808", PRIVATE },
	/* Teredo 2001::/32: the server in bits 32-63, the client inverted in 96-127 */
	{ "2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", EMBEDDED }, /* server 169.254.169.254 */
	{ "2001:0:4136:e378:8000:63bf:5601:5601", EMBEDDED }, /* client 169.254.169.254 */
	{ "2001:0:4136:e378:8000:63bf:80ff:fffe", EMBEDDED }, /* client 127.0.0.1 */
	{ "2001:0:4136:e378:ffff:ffff:f5ff:fffe", EMBEDDED }, /* client 10.0.0.1 */
	{ "2001::1", EMBEDDED },			      /* server 0.0.0.0 */
	{ "2001:1::", OK },				      /* past 2001::/32 */
};

START_TEST(vet_boundaries)
{
	struct cordon_addr a = addr(vet_cases[_i].addr);
	enum cordon_vet got = cordon_addr_vet(&a, NULL, 0);

	ck_assert_msg(got == vet_cases[_i].why, "%s: got %s, want %s", vet_cases[_i].addr,
		      cordon_vet_name(got), cordon_vet_name(vet_cases[_i].why));
}
END_TEST

/*
 * The table and the verdict never disagree: refused iff some blocked range
 * holds it, but for a Teredo client, whose forms no fixed range holds
 * (flags and port vary before it): refused by reading its address out.
 */
START_TEST(vet_table_agrees_with_vet)
{
	struct cordon_addr a = addr(vet_cases[_i].addr);
	const struct cordon_cidr *ranges;
	struct cordon_cidr teredo = cidr("2001::/32");
	size_t n = cordon_vet_table(a.family, &ranges);
	bool blocked = false, refused = cordon_addr_vet(&a, NULL, 0) != CORDON_VET_OK;

	for (size_t i = 0; i < n; i++)
		blocked |= cordon_cidr_contains(&ranges[i], &a);
	if (blocked || !cordon_cidr_contains(&teredo, &a))
		ck_assert_msg(blocked == refused, "%s", vet_cases[_i].addr);
	else
		ck_assert_msg(refused == (cordon_vet_name(cordon_addr_vet(&a, NULL, 0))[0] == 'e'),
			      "%s", vet_cases[_i].addr);
}
END_TEST

static const struct {
	const char *addr;
	const char *allowed[3];
	enum cordon_vet why;
} cover_cases[] = {
	{ "10.1.2.3", { "10.0.0.0/8" }, OK },
	{ "10.1.2.3", { "10.1.0.0/16" }, OK },
	{ "10.1.2.3", { "10.1.2.3/32" }, OK },
	{ "10.1.2.3", { "10.2.0.0/16" }, PRIVATE },
	{ "10.1.2.3", { "8.0.0.0/6" }, PRIVATE }, /* wider than the refused range */
	{ "10.1.2.3", { "0.0.0.0/0" }, PRIVATE }, /* --net-allow-any opens nothing refused */
	{ "10.1.2.3", { "::/0", "10.1.2.3/32" }, OK },
	{ "169.254.1.1", { "169.254.0.0/16" }, OK },
	{ "169.254.169.254", { "169.254.0.0/16" }, METADATA }, /* must be listed itself */
	{ "169.254.169.254", { "169.254.169.254/32" }, OK },
	{ "100.100.100.200", { "100.64.0.0/10" }, METADATA },
	{ "100.100.100.201", { "100.64.0.0/10" }, OK },
	{ "fd00::1", { "fc00::/7" }, OK },
	{ "fd00:ec2::254", { "fc00::/7" }, METADATA },
	{ "fd00:ec2::254", { "fd00:ec2::254/128" }, OK },
	{ "::ffff:10.0.0.1", { "10.0.0.0/8" }, EMBEDDED }, /* families never mix */
	{ "::ffff:10.0.0.1", { "::ffff:10.0.0.0/104" }, OK },
	{ "::ffff:10.0.0.1", { "::ffff:0:0/96" }, EMBEDDED },
	{ "8.8.8.8", { "10.0.0.0/8" }, OK },
	/* A translator's prefix listed: its /96 forms of refused addresses stay refused. */
	{ "64:ff9b:1:abcd::808:808", { "64:ff9b:1:abcd::/96" }, OK },
	{ "64:ff9b:1:abcd::a9fe:a9fe", { "64:ff9b:1:abcd::/96" }, EMBEDDED },
	{ "64:ff9b:1:abcd::a9fe:a9fe", { "64:ff9b:1::/48" }, EMBEDDED },
	{ "64:ff9b:1:abcd::a9fe:a9fe", { "64:ff9b:1:abcd::a9fe:a9fe/128" }, OK },
	{ "2001:0:4136:e378:8000:63bf:5601:5601", { "2001::/32" }, EMBEDDED },
	{ "2001:0:4136:e378:8000:63bf:f7f7:f7f7", { "2001::/32" }, OK },
	{ "fec0::1", { "fec0::/10" }, OK },
};

START_TEST(vet_explicit_cover)
{
	struct cordon_cidr allowed[3];
	struct cordon_addr a = addr(cover_cases[_i].addr);
	size_t n = 0;
	enum cordon_vet got;

	for (; n < 3 && cover_cases[_i].allowed[n]; n++)
		allowed[n] = cidr(cover_cases[_i].allowed[n]);
	got = cordon_addr_vet(&a, allowed, n);
	ck_assert_msg(got == cover_cases[_i].why, "%s with %s: got %s", cover_cases[_i].addr,
		      cover_cases[_i].allowed[0], cordon_vet_name(got));
}
END_TEST

START_TEST(vet_null_allowed_and_bad_family)
{
	struct cordon_addr a = addr("10.0.0.1");
	struct cordon_addr none = { 0 };

	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 5), PRIVATE);
	/* Not an address at all: refused, never OK. */
	ck_assert_int_eq(cordon_addr_vet(&none, NULL, 0), UNSPECIFIED);
	none.family = AF_UNIX;
	ck_assert_int_eq(cordon_addr_vet(&none, NULL, 0), UNSPECIFIED);
}
END_TEST

START_TEST(vet_names)
{
	ck_assert_str_eq(cordon_vet_name(CORDON_VET_OK), "ok");
	ck_assert_str_eq(cordon_vet_name(CORDON_VET_METADATA), "metadata");
	ck_assert_str_eq(cordon_vet_name(CORDON_VET_LINK_LOCAL), "link-local");
	ck_assert_str_eq(cordon_vet_name(CORDON_VET_EMBEDDED), "embedded");
	ck_assert_str_eq(cordon_vet_name(CORDON_VET_COUNT), "unknown");
	ck_assert_str_eq(cordon_vet_name((enum cordon_vet) - 1), "unknown");
	for (int i = 0; i < CORDON_VET_COUNT; i++) {
		const char *n = cordon_vet_name((enum cordon_vet)i);

		ck_assert_str_ne(n, "unknown");
		ck_assert_uint_eq(strspn(n, "abcdefghijklmnopqrstuvwxyz-"), strlen(n));
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(n, cordon_vet_name((enum cordon_vet)j));
	}
}
END_TEST

static bool table_has(const struct cordon_cidr *ranges, size_t n, const char *text)
{
	struct cordon_cidr want = cidr(text);

	for (size_t i = 0; i < n; i++)
		if (ranges[i].prefix == want.prefix &&
		    memcmp(&ranges[i].addr.u, &want.addr.u, sizeof(want.addr.u)) == 0 &&
		    ranges[i].addr.family == want.addr.family)
			return true;
	return false;
}

/* Sorted, disjoint, host bits clear: what an nft interval set accepts. */
static void assert_table_well_formed(int family, const struct cordon_cidr *ranges, size_t n)
{
	size_t bytes = family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < n; i++) {
		struct cordon_cidr c = ranges[i];
		char buf[INET6_ADDRSTRLEN + 4];
		bool host_bits;

		ck_assert_int_eq(c.addr.family, family);
		cordon_cidr_format(&c, buf, sizeof(buf));
		ck_assert_int_eq(cordon_cidr_parse(buf, &c, &host_bits), 0);
		ck_assert_msg(!host_bits, "%s has host bits", buf);
		if (i > 0)
			ck_assert_msg(memcmp(ranges[i - 1].addr.u.bytes, ranges[i].addr.u.bytes,
					     bytes) < 0,
				      "not sorted at %s", buf);
		for (size_t j = 0; j < n; j++)
			ck_assert_msg(i == j || !cordon_cidr_contains(&ranges[j], &ranges[i].addr),
				      "%s overlaps entry %zu", buf, j);
	}
}

START_TEST(vet_table_v4)
{
	const struct cordon_cidr *r;
	size_t n = cordon_vet_table(AF_INET, &r);
	static const char *const want[] = {
		"0.0.0.0/8",	    "10.0.0.0/8",     "100.64.0.0/10", "127.0.0.0/8",
		"168.63.129.16/32", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
		"192.0.2.0/24",	    "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24",   "224.0.0.0/4",    "240.0.0.0/4",
	};

	ck_assert_uint_eq(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(table_has(r, n, want[i]), "missing %s", want[i]);
	assert_table_well_formed(AF_INET, r, n);
}
END_TEST

START_TEST(vet_table_v6)
{
	const struct cordon_cidr *r;
	size_t n = cordon_vet_table(AF_INET6, &r);
	static const char *const want[] = {
		"2001:db8::/32",
		"fc00::/7",
		"fe80::/10",
		"ff00::/8",
		"::ffff:127.0.0.0/104",
		"::ffff:10.0.0.0/104",
		"::/104",
		"::a00:0/104",
		"64:ff9b::a00:0/104",
		"64:ff9b::a9fe:0/112",
		"2002:a00::/24",
		"2002:a9fe::/32",
		"2002:a83f:8110::/48",
		"2002:f000::/20",
		"::ffff:0:a9fe:0/112",
		"64:ff9b:1::/48",
		"2001:0:a9fe::/48",
		"2001:0:a00::/40",
		"fec0::/10",
	};

	/*
	 * 6 native ranges and 6 embedded forms of each of the 15 IPv4 ones
	 * (mapped, compatible, translated, NAT64, 6to4, Teredo server; the
	 * local-use NAT64 forms lie inside its refused /48).
	 */
	ck_assert_uint_eq(n, 6 + 6 * 15);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(table_has(r, n, want[i]), "missing %s", want[i]);
	assert_table_well_formed(AF_INET6, r, n);
	ck_assert_uint_eq(cordon_vet_table(AF_UNIX, &r), 0);
	ck_assert_ptr_null(r);
}
END_TEST

/* What the gateway's blocked sets hold: no embedded form (the forward chain checks those). */
START_TEST(vet_table_native)
{
	const struct cordon_cidr *r, *full;
	size_t n = cordon_vet_table_native(AF_INET6, &r), n_full;
	static const char *const want[] = {
		"::/128",   "::1/128",	 "64:ff9b:1::/48", "2001:db8::/32",
		"fc00::/7", "fe80::/10", "fec0::/10",	   "ff00::/8",
	};

	ck_assert_uint_eq(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_msg(table_has(r, n, want[i]), "missing %s", want[i]);
	assert_table_well_formed(AF_INET6, r, n);
	n = cordon_vet_table_native(AF_INET, &r);
	n_full = cordon_vet_table(AF_INET, &full);
	ck_assert_uint_eq(n, n_full);
	ck_assert_int_eq(memcmp(r, full, n * sizeof(*r)), 0);
	ck_assert_uint_eq(cordon_vet_table_native(AF_UNIX, &r), 0);
	ck_assert_ptr_null(r);
}
END_TEST

#ifdef CORDON_TEST_LAB
/* --- the test-lab override (each case forks: the table is built once) ----- */

START_TEST(lab_public_range)
{
	struct cordon_addr a = addr("198.18.0.0");
	const struct cordon_cidr *r;
	size_t n;

	setenv("CORDON_LAB_PUBLIC_CIDR", "198.18.0.0/15", 1);
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("198.19.255.255");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("198.17.255.255");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("198.20.0.0");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("::ffff:198.18.0.1");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("2002:c612:1::");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("10.0.0.1");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), PRIVATE);
	a = addr("198.51.100.1");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), DOCUMENTATION);

	n = cordon_vet_table(AF_INET, &r);
	ck_assert_uint_eq(n, 14);
	ck_assert(!table_has(r, n, "198.18.0.0/15"));
	assert_table_well_formed(AF_INET, r, n);
	n = cordon_vet_table(AF_INET6, &r);
	ck_assert_uint_eq(n, 6 + 6 * 14);
	ck_assert(!table_has(r, n, "::ffff:198.18.0.0/111"));
	assert_table_well_formed(AF_INET6, r, n);
}
END_TEST

START_TEST(lab_hole_inside_a_range)
{
	static const struct {
		const char *addr;
		enum cordon_vet why;
	} cases[] = {
		{ "10.98.255.255", PRIVATE }, { "10.99.0.0", OK },
		{ "10.99.255.255", OK },      { "10.100.0.0", PRIVATE },
		{ "10.0.0.0", PRIVATE },      { "10.255.255.255", PRIVATE },
		{ "::ffff:10.99.1.1", OK },   { "::ffff:10.98.1.1", EMBEDDED },
	};
	const struct cordon_cidr *r;
	size_t n;

	setenv("CORDON_LAB_PUBLIC_CIDR", "10.99.0.0/16", 1);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct cordon_addr a = addr(cases[i].addr);
		enum cordon_vet got = cordon_addr_vet(&a, NULL, 0);
		bool blocked = false;

		ck_assert_msg(got == cases[i].why, "%s: got %s", cases[i].addr,
			      cordon_vet_name(got));
		n = cordon_vet_table(a.family, &r);
		for (size_t j = 0; j < n; j++)
			blocked |= cordon_cidr_contains(&r[j], &a);
		ck_assert_msg(blocked == (got != OK), "%s", cases[i].addr);
	}
	/* 10.0.0.0/8 minus a /16: eight pieces instead of one. */
	n = cordon_vet_table(AF_INET, &r);
	ck_assert_uint_eq(n, 15 - 1 + 8);
	assert_table_well_formed(AF_INET, r, n);
	n = cordon_vet_table(AF_INET6, &r);
	assert_table_well_formed(AF_INET6, r, n);
}
END_TEST

START_TEST(lab_hole_v6)
{
	struct cordon_addr a = addr("fd00:ab::1");
	const struct cordon_cidr *r;
	size_t n;

	setenv("CORDON_LAB_PUBLIC_CIDR", "fd00:ab::/32", 1);
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), OK);
	a = addr("fd00:ac::1");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), PRIVATE);
	a = addr("fd00:ec2::254");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), METADATA);
	a = addr("198.18.0.1");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), BENCHMARK);
	n = cordon_vet_table(AF_INET6, &r);
	assert_table_well_formed(AF_INET6, r, n);
	ck_assert_uint_eq(cordon_vet_table(AF_INET, &r), 15);
}
END_TEST

START_TEST(lab_bad_value_ignored)
{
	struct cordon_addr a = addr("10.0.0.1");
	struct unit_capture cap;
	char *out;

	setenv("CORDON_LAB_PUBLIC_CIDR", "10.0.0.1/8", 1);
	unit_capture_start(&cap);
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), PRIVATE);
	out = unit_capture_end(&cap);
	ck_assert_ptr_nonnull(strstr(out, "CORDON_LAB_PUBLIC_CIDR"));
	free(out);
	const struct cordon_cidr *r;
	ck_assert_uint_eq(cordon_vet_table(AF_INET, &r), 15);
}
END_TEST
#else
START_TEST(lab_variable_ignored_without_the_define)
{
	struct cordon_addr a = addr("198.18.0.1");
	const struct cordon_cidr *r;
	size_t n = cordon_vet_table(AF_INET, &r);

	ck_assert_str_eq(getenv("CORDON_LAB_PUBLIC_CIDR"), "198.18.0.0/15");
	ck_assert_int_eq(cordon_addr_vet(&a, NULL, 0), BENCHMARK);
	ck_assert(table_has(r, n, "198.18.0.0/15"));
}
END_TEST
#endif

static Suite *net_addr_suite(void)
{
	Suite *s = suite_create("net-addr");
	TCase *tc = tcase_create("addr");

	tcase_add_loop_test(tc, addr_parse_good, 0, ARRAY_SIZE(good_addrs));
	tcase_add_loop_test(tc, addr_parse_bad, 0, ARRAY_SIZE(bad_addrs));
	tcase_add_test(tc, addr_parse_null);
	tcase_add_loop_test(tc, cidr_parse_table, 0, ARRAY_SIZE(cidr_cases));
	tcase_add_test(tc, cidr_parse_host_bits_need_the_flag);
	tcase_add_loop_test(tc, cidr_contains_table, 0, ARRAY_SIZE(contains_cases));
	tcase_add_test(tc, format_short_buffer_and_bad_family);
	suite_add_tcase(s, tc);

	tc = tcase_create("vet");
	tcase_add_loop_test(tc, vet_boundaries, 0, ARRAY_SIZE(vet_cases));
	tcase_add_loop_test(tc, vet_table_agrees_with_vet, 0, ARRAY_SIZE(vet_cases));
	tcase_add_loop_test(tc, vet_explicit_cover, 0, ARRAY_SIZE(cover_cases));
	tcase_add_test(tc, vet_null_allowed_and_bad_family);
	tcase_add_test(tc, vet_names);
	tcase_add_test(tc, vet_table_v4);
	tcase_add_test(tc, vet_table_v6);
	tcase_add_test(tc, vet_table_native);
	suite_add_tcase(s, tc);

	tc = tcase_create("lab");
#ifdef CORDON_TEST_LAB
	tcase_add_test(tc, lab_public_range);
	tcase_add_test(tc, lab_hole_inside_a_range);
	tcase_add_test(tc, lab_hole_v6);
	tcase_add_test(tc, lab_bad_value_ignored);
#else
	tcase_add_test(tc, lab_variable_ignored_without_the_define);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
#ifdef CORDON_TEST_LAB
	/* The boundary table runs with the override off; lab cases set it in their own fork. */
	unsetenv("CORDON_LAB_PUBLIC_CIDR");
	setenv("CK_FORK", "yes", 1);
#else
	/* Everything below must hold with the variable set: it is ignored. */
	setenv("CORDON_LAB_PUBLIC_CIDR", "198.18.0.0/15", 1);
#endif
	return unit_run(net_addr_suite());
}
