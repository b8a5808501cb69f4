// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/net/dns.c: the bounded wire-format parser, error
 * replies, CNAME chains, the filter that rebuilds replies, and TC. Every
 * packet is built by hand below, byte by byte.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "cordon/net.h"
#include "unit.h"

/* --- a packet builder ------------------------------------------------- */

struct pkt {
	uint8_t b[16384];
	size_t len;
};

static void u8(struct pkt *p, unsigned v)
{
	ck_assert_uint_lt(p->len, sizeof(p->b));
	p->b[p->len++] = (uint8_t)v;
}

static void u16(struct pkt *p, unsigned v)
{
	u8(p, v >> 8);
	u8(p, v & 0xff);
}

static void u32(struct pkt *p, uint32_t v)
{
	u16(p, v >> 16);
	u16(p, v & 0xffff);
}

static void raw(struct pkt *p, const void *data, size_t n)
{
	ck_assert_uint_le(p->len + n, sizeof(p->b));
	memcpy(p->b + p->len, data, n);
	p->len += n;
}

/* The labels of a dotted name, without the root's zero byte. */
static void labels(struct pkt *p, const char *dotted)
{
	while (*dotted) {
		const char *dot = strchr(dotted, '.');
		size_t l = dot ? (size_t)(dot - dotted) : strlen(dotted);

		u8(p, (unsigned)l);
		raw(p, dotted, l);
		dotted += l;
		if (*dotted == '.')
			dotted++;
	}
}

/* An uncompressed name; returns its offset. */
static size_t name(struct pkt *p, const char *dotted)
{
	size_t at = p->len;

	labels(p, dotted);
	u8(p, 0);
	return at;
}

static void ptr(struct pkt *p, size_t offset)
{
	u16(p, 0xc000 | (unsigned)offset);
}

static void header(struct pkt *p, unsigned id, unsigned flags, unsigned qd, unsigned an,
		   unsigned ns, unsigned ar)
{
	p->len = 0;
	u16(p, id);
	u16(p, flags);
	u16(p, qd);
	u16(p, an);
	u16(p, ns);
	u16(p, ar);
}

static void set_counts(struct pkt *p, unsigned an, unsigned ns, unsigned ar)
{
	p->b[6] = (uint8_t)(an >> 8);
	p->b[7] = (uint8_t)an;
	p->b[8] = (uint8_t)(ns >> 8);
	p->b[9] = (uint8_t)ns;
	p->b[10] = (uint8_t)(ar >> 8);
	p->b[11] = (uint8_t)ar;
}

#define QUESTION_AT 12

static void question(struct pkt *p, const char *qname, unsigned qtype)
{
	name(p, qname);
	u16(p, qtype);
	u16(p, 1);
}

/* Type, class IN, TTL and rdlength; the owner is written before. */
static void rr_fixed(struct pkt *p, unsigned type, uint32_t ttl, unsigned rdlength)
{
	u16(p, type);
	u16(p, 1);
	u32(p, ttl);
	u16(p, rdlength);
}

static void rr_a(struct pkt *p, uint32_t ttl, const char *addr)
{
	uint8_t b[4];

	ck_assert_int_eq(inet_pton(AF_INET, addr, b), 1);
	rr_fixed(p, CORDON_DNS_TYPE_A, ttl, 4);
	raw(p, b, 4);
}

static void rr_aaaa(struct pkt *p, uint32_t ttl, const char *addr)
{
	uint8_t b[16];

	ck_assert_int_eq(inet_pton(AF_INET6, addr, b), 1);
	rr_fixed(p, CORDON_DNS_TYPE_AAAA, ttl, 16);
	raw(p, b, 16);
}

/* rdlength written afterwards: begin returns where it sits. */
static size_t rr_begin(struct pkt *p, unsigned type, uint32_t ttl)
{
	rr_fixed(p, type, ttl, 0);
	return p->len - 2;
}

static void rr_end(struct pkt *p, size_t rdlength_at)
{
	size_t n = p->len - rdlength_at - 2;

	p->b[rdlength_at] = (uint8_t)(n >> 8);
	p->b[rdlength_at + 1] = (uint8_t)n;
}

/* OPT owned by the root, payload 1232, DO set. */
static void rr_opt(struct pkt *p)
{
	u8(p, 0);
	u16(p, CORDON_DNS_TYPE_OPT);
	u16(p, 1232);
	u32(p, 0x00008000);
	u16(p, 0);
}

static unsigned get_be16(const uint8_t *b)
{
	return (unsigned)b[0] << 8 | b[1];
}

static const char *addr_text(const struct cordon_addr *a)
{
	static char buf[INET6_ADDRSTRLEN];

	ck_assert_ptr_nonnull(inet_ntop(a->family, a->u.bytes, buf, sizeof(buf)));
	return buf;
}

/* Large: one of each, outside the (forked) tests' stacks. */
static struct cordon_dns_msg msg, msg2;

/* --- parsing ---------------------------------------------------------- */

START_TEST(parse_simple_a)
{
	struct pkt p;
	size_t rr_at;

	header(&p, 0x1234, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	rr_at = p.len;
	ptr(&p, QUESTION_AT);
	rr_a(&p, 300, "93.184.215.14");

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.id, 0x1234);
	ck_assert_uint_eq(msg.flags, 0x8180);
	ck_assert_uint_eq(msg.qdcount, 1);
	ck_assert_uint_eq(msg.ancount, 1);
	ck_assert_str_eq(msg.question.name, "example.com");
	ck_assert_uint_eq(msg.question.qtype, CORDON_DNS_TYPE_A);
	ck_assert_uint_eq(msg.question.qclass, 1);
	ck_assert_uint_eq(msg.n_rr, 1);
	ck_assert_str_eq(msg.rr[0].name, "example.com");
	ck_assert_uint_eq(msg.rr[0].type, CORDON_DNS_TYPE_A);
	ck_assert_uint_eq(msg.rr[0].rclass, 1);
	ck_assert_uint_eq(msg.rr[0].ttl, 300);
	ck_assert_uint_eq(msg.rr[0].section, 1);
	ck_assert_uint_eq(msg.rr[0].offset, rr_at);
	ck_assert_uint_eq(msg.rr[0].length, p.len - rr_at);
	ck_assert_uint_eq(msg.rr[0].rdata_offset, p.len - 4);
	ck_assert_uint_eq(msg.rr[0].rdlength, 4);
	ck_assert_int_eq(msg.rr[0].addr.family, AF_INET);
	ck_assert_str_eq(addr_text(&msg.rr[0].addr), "93.184.215.14");

	/* The question alone, for queries. */
	memset(&msg2, 0xaa, sizeof(msg2));
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg2), 0);
	ck_assert_str_eq(msg2.question.name, "example.com");
	ck_assert_uint_eq(msg2.n_rr, 0);
}
END_TEST

START_TEST(parse_aaaa)
{
	struct pkt p;

	header(&p, 7, 0x8180, 1, 1, 0, 0);
	question(&p, "v6.example", CORDON_DNS_TYPE_AAAA);
	ptr(&p, QUESTION_AT);
	rr_aaaa(&p, 60, "2001:db8::1");

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 1);
	ck_assert_uint_eq(msg.rr[0].type, CORDON_DNS_TYPE_AAAA);
	ck_assert_int_eq(msg.rr[0].addr.family, AF_INET6);
	ck_assert_str_eq(addr_text(&msg.rr[0].addr), "2001:db8::1");

	/* Address records of the wrong size are malformed. */
	p.b[p.len - 17] = 15;
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len - 1, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_a_wrong_rdlength)
{
	struct pkt p;

	header(&p, 7, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, CORDON_DNS_TYPE_A, 60, 5);
	raw(&p, "\1\2\3\4\5", 5);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_lowercases_and_root)
{
	struct pkt p;

	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, "WWW.Example.COM", CORDON_DNS_TYPE_A);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), 0);
	ck_assert_str_eq(msg.question.name, "www.example.com");

	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, "", 2);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), 0);
	ck_assert_str_eq(msg.question.name, "");
}
END_TEST

START_TEST(parse_compression_suffix)
{
	struct pkt p;
	size_t rdlength_at, www_at;

	/* www.example.com CNAME cdn.example.com; cdn.example.com A. */
	header(&p, 9, 0x8180, 1, 2, 0, 0);
	question(&p, "www.example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, CORDON_DNS_TYPE_CNAME, 3600);
	www_at = p.len;
	labels(&p, "cdn");
	ptr(&p, QUESTION_AT + 4); /* "example.com" inside the question */
	rr_end(&p, rdlength_at);
	ptr(&p, www_at);
	rr_a(&p, 20, "192.0.2.7");

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 2);
	ck_assert_str_eq(msg.rr[0].name, "www.example.com");
	ck_assert_str_eq(msg.rr[0].target, "cdn.example.com");
	ck_assert_str_eq(msg.rr[1].name, "cdn.example.com");
	ck_assert_str_eq(addr_text(&msg.rr[1].addr), "192.0.2.7");
}
END_TEST

START_TEST(parse_pointer_to_itself)
{
	struct pkt p;
	size_t at;

	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	at = p.len;
	ptr(&p, at);
	rr_a(&p, 1, "192.0.2.1");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* The question itself: a label, then a pointer back to that label. */
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	labels(&p, "a");
	ptr(&p, QUESTION_AT);
	u16(&p, 1);
	u16(&p, 1);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_forward_pointer)
{
	struct pkt p;
	size_t at;

	/* An owner pointing at the (valid) name of the next record. */
	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	at = p.len;
	ptr(&p, at + 2 + 10 + 4);
	rr_a(&p, 1, "192.0.2.1");
	name(&p, "b.example.com");
	rr_a(&p, 1, "192.0.2.2");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_mutual_loop)
{
	struct pkt p;
	size_t first, second;

	/* Two owners pointing at each other; neither ever reaches a label. */
	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	first = p.len;
	second = first + 2 + 10 + 4;
	ptr(&p, second);
	rr_a(&p, 1, "192.0.2.1");
	ptr(&p, first);
	rr_a(&p, 1, "192.0.2.2");
	ck_assert_int_eq(p.len, second + 16);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/*
	 * "y" + pointer to "x" sits in a TXT record; the owner after it is
	 * "x" + a (backward) pointer to that "y", whose pointer leads back.
	 */
	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, 16, 60, 4);
	first = p.len;
	labels(&p, "y");
	ptr(&p, first + 4);
	ck_assert_uint_eq(p.len, first + 4);
	labels(&p, "x");
	ptr(&p, first);
	rr_a(&p, 1, "192.0.2.1");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_pointer_into_header)
{
	struct pkt p;

	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, 4); /* qdcount's bytes 00 01 would read as a label */
	rr_a(&p, 1, "192.0.2.1");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

/* A TXT record holding n pointers, each to the one before; the first to the question. */
static void build_jumps(struct pkt *p, unsigned n)
{
	size_t rdlength_at, last = QUESTION_AT;

	header(p, 1, 0x8180, 1, 2, 0, 0);
	question(p, "example.com", CORDON_DNS_TYPE_A);
	ptr(p, QUESTION_AT);
	rdlength_at = rr_begin(p, 16, 60);
	for (unsigned i = 0; i < n; i++) {
		size_t here = p->len;

		ptr(p, last);
		last = here;
	}
	rr_end(p, rdlength_at);
	ptr(p, last);
	rr_a(p, 1, "192.0.2.1");
}

START_TEST(parse_pointer_jump_limit)
{
	struct pkt p;

	build_jumps(&p, 31); /* 32 jumps in all */
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_str_eq(msg.rr[1].name, "example.com");
	build_jumps(&p, 32);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

/* question, CNAME (compressed target), A, AAAA, SOA in authority, OPT. */
static void build_full_answer(struct pkt *p)
{
	size_t rdlength_at, target_at;

	header(p, 0xbeef, 0x8180, 1, 3, 1, 1);
	question(p, "www.example.org", CORDON_DNS_TYPE_A);
	ptr(p, QUESTION_AT);
	rdlength_at = rr_begin(p, CORDON_DNS_TYPE_CNAME, 300);
	target_at = p->len;
	labels(p, "edge");
	ptr(p, QUESTION_AT + 4);
	rr_end(p, rdlength_at);
	ptr(p, target_at);
	rr_a(p, 60, "198.51.100.10");
	ptr(p, target_at);
	rr_aaaa(p, 60, "2001:db8::10");
	ptr(p, QUESTION_AT + 4);
	rdlength_at = rr_begin(p, 6, 900);
	labels(p, "ns1");
	ptr(p, QUESTION_AT + 4);
	labels(p, "hostmaster");
	ptr(p, QUESTION_AT + 4);
	for (unsigned i = 0; i < 5; i++)
		u32(p, 1000 + i);
	rr_end(p, rdlength_at);
	rr_opt(p);
}

START_TEST(parse_truncated_everywhere)
{
	struct pkt p;

	build_full_answer(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 4); /* OPT is not listed */
	ck_assert_uint_eq(msg.rr[3].section, 2);
	/* Header, question, record, rdata: every cut short of the end fails. */
	for (size_t cut = 0; cut < p.len; cut++)
		ck_assert_msg(cordon_dns_parse(p.b, cut, &msg) == -EINVAL, "cut at %zu parsed",
			      cut);
	for (size_t cut = 0; cut < 12 + 17 + 4; cut++)
		ck_assert_int_eq(cordon_dns_parse_question(p.b, cut, &msg), -EINVAL);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, 12 + 17 + 4, &msg), 0);
}
END_TEST

START_TEST(parse_rdata_beyond_end)
{
	struct pkt p;

	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", 16);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, 16, 60, 200);
	raw(&p, "\3abc", 4);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_label_and_name_limits)
{
	char label[70], big[300];
	struct pkt p;

	memset(label, 'a', 63);
	label[63] = '\0';
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, label, 1);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(strlen(msg.question.name), 63);

	label[63] = 'a';
	label[64] = '\0';
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, label, 1);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);

	/* 63+63+63+61 octets in 4 labels: 255 wire bytes with the root. */
	snprintf(big, sizeof(big), "%.63s.%.63s.%.63s.%.61s", label, label, label, label);
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, big, 1);
	ck_assert_uint_eq(p.len, 12 + 255 + 4);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(strlen(msg.question.name), 253);

	snprintf(big, sizeof(big), "%.63s.%.63s.%.63s.%.62s", label, label, label, label);
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	question(&p, big, 1);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_name_too_long_through_pointer)
{
	char label[64], big[300];
	struct pkt p;

	/* 252 wire bytes in the question, then an owner adding "abc" in front. */
	memset(label, 'b', 63);
	label[63] = '\0';
	snprintf(big, sizeof(big), "%s.%s.%s.%.58s", label, label, label, label);
	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, big, 1);
	labels(&p, "abc");
	ptr(&p, QUESTION_AT);
	rr_a(&p, 1, "192.0.2.1");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_label_bytes)
{
	static const uint8_t with_dot[] = { 3, 'a', '.', 'b', 3, 'c', 'o', 'm', 0 };
	static const uint8_t with_nul[] = { 3, 'a', 0, 'b', 3, 'c', 'o', 'm', 0 };
	static const uint8_t with_odd[] = { 4, 'a', ' ', 0xff, '_', 3, 'C', 'O', 'M', 0 };
	struct pkt p;

	header(&p, 1, 0x0100, 1, 0, 0, 0);
	raw(&p, with_dot, sizeof(with_dot));
	u32(&p, 0x00010001);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);

	header(&p, 1, 0x0100, 1, 0, 0, 0);
	raw(&p, with_nul, sizeof(with_nul));
	u32(&p, 0x00010001);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);

	/* Any other byte is kept as it is (and no allowlist entry will match it). */
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	raw(&p, with_odd, sizeof(with_odd));
	u32(&p, 0x00010001);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), 0);
	ck_assert_str_eq(msg.question.name, "a \xff_.com");

	/* 0x40 and 0x80 label types. */
	header(&p, 1, 0x0100, 1, 0, 0, 0);
	u8(&p, 0x41);
	u8(&p, 0);
	u32(&p, 0x00010001);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
	p.b[12] = 0x81;
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_record_limit)
{
	struct pkt p;

	header(&p, 1, 0x8180, 1, CORDON_DNS_MAX_RECORDS, 0, 0);
	question(&p, "many.example", CORDON_DNS_TYPE_A);
	for (unsigned i = 0; i < CORDON_DNS_MAX_RECORDS; i++) {
		char a[16];

		snprintf(a, sizeof(a), "192.0.%u.%u", i / 256, i % 256);
		ptr(&p, QUESTION_AT);
		rr_a(&p, 60, a);
	}
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, CORDON_DNS_MAX_RECORDS);
	ck_assert_str_eq(addr_text(&msg.rr[255].addr), "192.0.0.255");

	set_counts(&p, CORDON_DNS_MAX_RECORDS, 0, 1);
	rr_opt(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EMSGSIZE);
	set_counts(&p, 0xffff, 0xffff, 0xffff);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EMSGSIZE);
}
END_TEST

START_TEST(parse_question_counts)
{
	struct pkt p;

	header(&p, 1, 0x0100, 0, 0, 0, 0);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
	/* A whole message may lack a question (some error replies do). */
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.qdcount, 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, NULL, 0), 0);

	header(&p, 1, 0x0100, 2, 0, 0, 0);
	question(&p, "a.example", 1);
	question(&p, "b.example", 1);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, p.len, &msg), -EINVAL);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* Too short for a header; too long for any DNS message. */
	ck_assert_int_eq(cordon_dns_parse(p.b, 11, &msg), -EINVAL);
	ck_assert_int_eq(cordon_dns_parse_question(p.b, 0, &msg), -EINVAL);
	ck_assert_int_eq(cordon_dns_parse(p.b, 65536, &msg), -EMSGSIZE);
}
END_TEST

START_TEST(parse_opt_rules)
{
	struct pkt p;

	header(&p, 1, 0x8180, 1, 1, 0, 1);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rr_a(&p, 60, "192.0.2.1");
	rr_opt(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 1);
	ck_assert_uint_eq(msg.arcount, 1);

	/* Two OPTs. */
	set_counts(&p, 1, 0, 2);
	rr_opt(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* OPT in the answer section. */
	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	rr_opt(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* OPT not owned by the root. */
	header(&p, 1, 0x8180, 1, 0, 0, 1);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, CORDON_DNS_TYPE_OPT, 0, 0);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);
}
END_TEST

START_TEST(parse_ttl_top_bit)
{
	struct pkt p;

	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "example.com", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rr_a(&p, 0x80000001u, "192.0.2.1");
	ptr(&p, QUESTION_AT);
	rr_a(&p, 0x7fffffffu, "192.0.2.2");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.rr[0].ttl, 0);
	ck_assert_uint_eq(msg.rr[1].ttl, 0x7fffffffu);
}
END_TEST

START_TEST(parse_rdata_names_checked)
{
	struct pkt p;
	size_t rdlength_at;

	/* MX whose exchange name is a forward pointer. */
	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", 15);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 15, 60);
	u16(&p, 10);
	ptr(&p, p.len + 2);
	rr_end(&p, rdlength_at);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* A CNAME with bytes after its target. */
	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", 1);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, CORDON_DNS_TYPE_CNAME, 60);
	ptr(&p, QUESTION_AT);
	u8(&p, 0);
	rr_end(&p, rdlength_at);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* A CNAME target that ends past its rdata. */
	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "example.com", 1);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, CORDON_DNS_TYPE_CNAME, 60, 2);
	name(&p, "abc.example");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), -EINVAL);

	/* An SOA rname may hold a dot inside a label: it is not a hostname. */
	header(&p, 1, 0x8180, 1, 0, 1, 0);
	question(&p, "example.com", 1);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 6, 60);
	name(&p, "ns.example.com");
	u8(&p, 9);
	raw(&p, "john.doe", 8);
	u8(&p, 'x');
	ptr(&p, QUESTION_AT);
	for (unsigned i = 0; i < 5; i++)
		u32(&p, i);
	rr_end(&p, rdlength_at);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
}
END_TEST

/* --- error replies ---------------------------------------------------- */

static void build_query(struct pkt *p, bool edns)
{
	header(p, 0x4242, 0x0110 /* RD, CD */, 1, 0, 0, edns ? 1 : 0);
	question(p, "Blocked.Example.NET", CORDON_DNS_TYPE_AAAA);
	if (edns)
		rr_opt(p);
}

START_TEST(build_error_each_rcode)
{
	static const int rcodes[] = {
		CORDON_DNS_RCODE_NXDOMAIN, CORDON_DNS_RCODE_SERVFAIL, CORDON_DNS_RCODE_REFUSED,
		CORDON_DNS_RCODE_NOTIMP,   CORDON_DNS_RCODE_FORMERR,
	};
	uint8_t out[512];
	struct pkt q;

	build_query(&q, false);
	for (size_t i = 0; i < ARRAY_SIZE(rcodes); i++) {
		ssize_t n = cordon_dns_build_error(q.b, q.len, rcodes[i], out, sizeof(out));

		ck_assert_int_eq(n, (ssize_t)q.len);
		ck_assert_int_eq(cordon_dns_parse(out, (size_t)n, &msg), 0);
		ck_assert_uint_eq(msg.id, 0x4242);
		/* QR, opcode 0, RD and CD copied, RA, the rcode; no AA, no TC. */
		ck_assert_uint_eq(msg.flags, 0x8000 | 0x0100 | 0x0080 | 0x0010 | rcodes[i]);
		ck_assert_uint_eq(msg.qdcount, 1);
		ck_assert_uint_eq(msg.ancount + msg.nscount + msg.arcount, 0);
		ck_assert_str_eq(msg.question.name, "blocked.example.net");
		ck_assert_uint_eq(msg.question.qtype, CORDON_DNS_TYPE_AAAA);
		/* The question comes back byte for byte, case and all. */
		ck_assert_int_eq(memcmp(out + 12, q.b + 12, q.len - 12), 0);
	}
}
END_TEST

START_TEST(build_error_opcode_and_edns)
{
	uint8_t out[512];
	struct pkt q;
	ssize_t n;

	build_query(&q, true);
	q.b[2] |= 0x10; /* opcode 2 (STATUS) */
	n = cordon_dns_build_error(q.b, q.len, CORDON_DNS_RCODE_NOTIMP, out, sizeof(out));
	ck_assert_int_eq(n, (ssize_t)q.len);
	ck_assert_int_eq(cordon_dns_parse(out, (size_t)n, &msg), 0);
	ck_assert_uint_eq((msg.flags >> 11) & 0xf, 2);
	ck_assert_uint_eq(msg.flags & 0xf, CORDON_DNS_RCODE_NOTIMP);
	/* An OPT answers the query's OPT, DO copied. */
	ck_assert_uint_eq(msg.arcount, 1);
	ck_assert_uint_eq(out[n - 11 + 3], 1232 >> 8);
	ck_assert_uint_eq(out[n - 11 + 7], 0x80);
}
END_TEST

START_TEST(build_error_bad_queries)
{
	uint8_t out[512];
	struct pkt q;
	ssize_t n;

	build_query(&q, false);
	ck_assert_int_eq(cordon_dns_build_error(q.b, q.len, 16, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(cordon_dns_build_error(q.b, q.len, -1, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(
		cordon_dns_build_error(q.b, 11, CORDON_DNS_RCODE_FORMERR, out, sizeof(out)),
		-EINVAL);
	ck_assert_int_eq(cordon_dns_build_error(q.b, q.len, CORDON_DNS_RCODE_REFUSED, out, 20),
			 -ENOSPC);

	/* A question that does not parse: FORMERR from the header alone. */
	n = cordon_dns_build_error(q.b, q.len - 3, CORDON_DNS_RCODE_FORMERR, out, sizeof(out));
	ck_assert_int_eq(n, 12);
	ck_assert_int_eq(cordon_dns_parse(out, (size_t)n, &msg), 0);
	ck_assert_uint_eq(msg.id, 0x4242);
	ck_assert_uint_eq(msg.qdcount, 0);
	ck_assert_uint_eq(msg.flags & 0xf, CORDON_DNS_RCODE_FORMERR);
	/* ...but nothing claims NXDOMAIN for a name it could not read. */
	ck_assert_int_eq(
		cordon_dns_build_error(q.b, q.len - 3, CORDON_DNS_RCODE_NXDOMAIN, out, sizeof(out)),
		-EINVAL);
}
END_TEST

/* --- the upstream query ----------------------------------------------- */

/* What cordon sends upstream for name and type: the fixed form, byte for byte. */
static void expected_query(struct pkt *p, unsigned id, unsigned flags, const char *qname,
			   unsigned qtype, bool edns)
{
	header(p, id, flags, 1, 0, 0, edns ? 1 : 0);
	question(p, qname, qtype);
	if (edns) {
		u8(p, 0);
		u16(p, CORDON_DNS_TYPE_OPT);
		u16(p, 1232);
		u32(p, 0);
		u16(p, 0);
	}
}

static void assert_bytes(const uint8_t *got, size_t got_len, const struct pkt *want)
{
	ck_assert_uint_eq(got_len, want->len);
	for (size_t i = 0; i < want->len; i++)
		ck_assert_msg(got[i] == want->b[i], "byte %zu is 0x%02x, want 0x%02x", i, got[i],
			      want->b[i]);
}

/*
 * Everything a client can add around its question stays behind: other
 * flags (AD, CD, even QR and an opcode), records in every section, EDNS
 * options and the DO bit, bytes after the last record. What is left is the
 * question as parsed (lower case) and, since the client spoke EDNS, an OPT
 * of cordon's own.
 */
START_TEST(rebuild_query_carries_the_question_only)
{
	uint8_t out[CORDON_DNS_QUERY_MAX];
	struct pkt q, want;
	size_t rdlength_at;
	ssize_t n;

	header(&q, 0x4242, 0x0100 | 0x0020 | 0x0010 /* RD, AD, CD */, 1, 1, 1, 3);
	question(&q, "WwW.Example.ORG", CORDON_DNS_TYPE_AAAA);
	ptr(&q, QUESTION_AT);
	rr_a(&q, 300, "192.0.2.1");
	name(&q, "covert.example.org");
	rdlength_at = rr_begin(&q, 16 /* TXT */, 60);
	u8(&q, 12);
	raw(&q, "secret bytes", 12);
	rr_end(&q, rdlength_at);
	/* OPT with DO, a cookie and padding. */
	u8(&q, 0);
	u16(&q, CORDON_DNS_TYPE_OPT);
	u16(&q, 4096);
	u32(&q, 0x00008000);
	rdlength_at = q.len;
	u16(&q, 0);
	u16(&q, 10); /* COOKIE */
	u16(&q, 8);
	raw(&q, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	u16(&q, 12); /* PADDING */
	u16(&q, 16);
	for (int i = 0; i < 16; i++)
		u8(&q, 0x55);
	rr_end(&q, rdlength_at);
	ptr(&q, QUESTION_AT);
	rr_a(&q, 300, "192.0.2.2");
	raw(&q, "trailing", 8);

	n = cordon_dns_rebuild_query(q.b, q.len, 0x9a9a, out, sizeof(out));
	expected_query(&want, 0x9a9a, 0x0100, "www.example.org", CORDON_DNS_TYPE_AAAA, true);
	assert_bytes(out, (size_t)n, &want);
	ck_assert_int_eq(cordon_dns_parse_question(out, (size_t)n, &msg), 0);
	ck_assert_str_eq(msg.question.name, "www.example.org");

	/* No OPT from the client, no OPT upstream; RD only as asked; QR and opcode dropped. */
	header(&q, 0x0101, 0x8000 | 0x2800 | 0x0020, 1, 0, 0, 0);
	question(&q, "a.b", CORDON_DNS_TYPE_A);
	n = cordon_dns_rebuild_query(q.b, q.len, 7, out, sizeof(out));
	expected_query(&want, 7, 0, "a.b", CORDON_DNS_TYPE_A, false);
	assert_bytes(out, (size_t)n, &want);

	/* The longest name fits the bound. */
	{
		char longest[4 * 64]; /* written whole, then cut at 253 */

		for (int i = 0; i < 4; i++)
			memcpy(longest + 64 * i,
			       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.",
			       64);
		longest[253] = '\0'; /* 63+1+63+1+63+1+61 */
		header(&q, 1, 0x0100, 1, 0, 0, 1);
		question(&q, longest, CORDON_DNS_TYPE_A);
		rr_opt(&q);
		n = cordon_dns_rebuild_query(q.b, q.len, 1, out, sizeof(out));
		ck_assert_int_eq(n, CORDON_DNS_QUERY_MAX);
		expected_query(&want, 1, 0x0100, longest, CORDON_DNS_TYPE_A, true);
		assert_bytes(out, (size_t)n, &want);
	}
}
END_TEST

START_TEST(rebuild_query_refuses)
{
	uint8_t out[CORDON_DNS_QUERY_MAX];
	struct pkt q;

	header(&q, 1, 0x0100, 2, 0, 0, 0);
	question(&q, "a.example", CORDON_DNS_TYPE_A);
	question(&q, "b.example", CORDON_DNS_TYPE_A);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, q.len, 1, out, sizeof(out)), -EINVAL);
	header(&q, 1, 0x0100, 0, 0, 0, 0);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, q.len, 1, out, sizeof(out)), -EINVAL);
	header(&q, 1, 0x0100, 1, 0, 0, 0);
	question(&q, "a.example", CORDON_DNS_TYPE_A);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, 11, 1, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, q.len - 1, 1, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, q.len, 1, out, 20), -ENOSPC);
	/* A dot inside a label could not be written back as the same name. */
	header(&q, 1, 0x0100, 1, 0, 0, 0);
	u8(&q, 3);
	raw(&q, "a.b", 3);
	u8(&q, 0);
	u16(&q, CORDON_DNS_TYPE_A);
	u16(&q, 1);
	ck_assert_int_eq(cordon_dns_rebuild_query(q.b, q.len, 1, out, sizeof(out)), -EINVAL);
}
END_TEST

/* --- CNAME chains ----------------------------------------------------- */

static void add_cname(struct pkt *p, const char *owner, const char *target)
{
	size_t rdlength_at;

	name(p, owner);
	rdlength_at = rr_begin(p, CORDON_DNS_TYPE_CNAME, 300);
	name(p, target);
	rr_end(p, rdlength_at);
}

static void add_a(struct pkt *p, const char *owner, const char *addr)
{
	name(p, owner);
	rr_a(p, 300, addr);
}

START_TEST(chain_follows_cnames)
{
	size_t idx[8], n;
	struct pkt p;

	/* q -> a -> b, addresses on b; an unrelated A; an A for b in additional. */
	header(&p, 1, 0x8180, 1, 6, 0, 1);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	add_cname(&p, "q.example", "a.example");
	add_a(&p, "unrelated.example", "203.0.113.66");
	add_cname(&p, "A.Example", "b.example");
	add_a(&p, "b.example", "203.0.113.1");
	name(&p, "b.example");
	rr_aaaa(&p, 300, "2001:db8::b");
	add_a(&p, "b.example", "203.0.113.2");
	add_a(&p, "b.example", "203.0.113.99");

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx));
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(idx[0], 3);
	ck_assert_uint_eq(idx[1], 4);
	ck_assert_uint_eq(idx[2], 5);
	ck_assert_str_eq(addr_text(&msg.rr[idx[1]].addr), "2001:db8::b");
	for (size_t i = 0; i < n; i++)
		ck_assert_str_ne(addr_text(&msg.rr[idx[i]].addr), "203.0.113.66");

	/* The count stops at cap. */
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, 2), 2);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, NULL, 0), 0);
}
END_TEST

START_TEST(chain_direct_answer_only_owner)
{
	size_t idx[8];
	struct pkt p;

	/* Without CNAMEs only the question name's own records count. */
	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	add_a(&p, "unrelated.example", "203.0.113.66");
	add_a(&p, "q.example", "203.0.113.5");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 1);
	ck_assert_uint_eq(idx[0], 1);

	/* CNAMEs outside the answer section are not followed. */
	header(&p, 1, 0x8180, 1, 1, 1, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	add_a(&p, "elsewhere.example", "203.0.113.7");
	add_cname(&p, "q.example", "elsewhere.example");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 0);
}
END_TEST

START_TEST(chain_loop_stops)
{
	size_t idx[8];
	struct pkt p;

	/* q -> a -> b -> a: the walk stops, a and b stay on the chain. */
	header(&p, 1, 0x8180, 1, 5, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	add_cname(&p, "q.example", "a.example");
	add_cname(&p, "a.example", "b.example");
	add_cname(&p, "b.example", "a.example");
	add_a(&p, "b.example", "203.0.113.1");
	add_a(&p, "c.example", "203.0.113.2");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 1);
	ck_assert_uint_eq(idx[0], 3);

	/* q -> q. */
	header(&p, 1, 0x8180, 1, 2, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	add_cname(&p, "q.example", "q.example");
	add_a(&p, "x.example", "203.0.113.3");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 0);
}
END_TEST

START_TEST(chain_at_most_16_links)
{
	size_t idx[8];
	struct pkt p;
	char owner[32], target[32];

	/* q -> c1 -> ... -> c17, an A on c16 (16 links) and one on c17 (17). */
	header(&p, 1, 0x8180, 1, 19, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	for (unsigned i = 1; i <= 17; i++) {
		snprintf(owner, sizeof(owner), i == 1 ? "q.example" : "c%u.example", i - 1);
		snprintf(target, sizeof(target), "c%u.example", i);
		add_cname(&p, owner, target);
	}
	add_a(&p, "c16.example", "203.0.113.16");
	add_a(&p, "c17.example", "203.0.113.17");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 1);
	ck_assert_str_eq(addr_text(&msg.rr[idx[0]].addr), "203.0.113.16");
}
END_TEST

START_TEST(chain_ignores_other_classes)
{
	size_t idx[4];
	struct pkt p;

	header(&p, 1, 0x8180, 1, 1, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	name(&p, "q.example");
	u16(&p, CORDON_DNS_TYPE_A);
	u16(&p, 3); /* CH */
	u32(&p, 60);
	u16(&p, 4);
	u32(&p, 0x7f000001);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_int_eq(msg.rr[0].addr.family, 0);
	ck_assert_uint_eq(cordon_dns_chain_addrs(&msg, idx, ARRAY_SIZE(idx)), 0);
}
END_TEST

/* --- filter ----------------------------------------------------------- */

/* An HTTPS record with ipv4hint and ipv6hint, plus an A. */
static void build_https_answer(struct pkt *p)
{
	size_t rdlength_at;

	header(p, 5, 0x8180, 1, 2, 0, 1);
	question(p, "svc.example", CORDON_DNS_TYPE_HTTPS);
	ptr(p, QUESTION_AT);
	rdlength_at = rr_begin(p, CORDON_DNS_TYPE_HTTPS, 300);
	u16(p, 1); /* priority */
	u8(p, 0);  /* target "." */
	u16(p, 1); /* alpn */
	u16(p, 3);
	raw(p, "\2h2", 3);
	u16(p, 4); /* ipv4hint */
	u16(p, 4);
	u32(p, 0x0a000001);
	u16(p, 6); /* ipv6hint */
	u16(p, 16);
	raw(p, "\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
	rr_end(p, rdlength_at);
	ptr(p, QUESTION_AT);
	rr_a(p, 300, "203.0.113.80");
	rr_opt(p);
}

START_TEST(filter_drops_https)
{
	uint8_t opt[11];
	struct pkt p;
	ssize_t n;

	build_https_answer(&p);
	memcpy(opt, p.b + p.len - 11, 11);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 2);
	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)p.len);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.ancount, 1);
	ck_assert_uint_eq(msg2.arcount, 1);
	ck_assert_uint_eq(msg2.n_rr, 1);
	ck_assert_uint_eq(msg2.rr[0].type, CORDON_DNS_TYPE_A);
	ck_assert_str_eq(addr_text(&msg2.rr[0].addr), "203.0.113.80");
	ck_assert_uint_eq(msg2.flags & 0x0200, 0);
	/* OPT kept byte for byte, at the end. */
	ck_assert_int_eq(memcmp(p.b + n - 11, opt, 11), 0);
	/* SVCB too, even when the caller would keep it. */
	build_https_answer(&p);
	p.b[12 + 13 + 4 + 2 + 1] = CORDON_DNS_TYPE_SVCB;
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.rr[0].type, CORDON_DNS_TYPE_SVCB);
	n = cordon_dns_filter(p.b, p.len, &msg, (const bool[]){ true, true });
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 1);
	ck_assert_uint_eq(msg2.rr[0].type, CORDON_DNS_TYPE_A);
}
END_TEST

START_TEST(filter_subsets_parse_again)
{
	struct pkt orig, p;

	/* 4 listed records (CNAME, A, AAAA, SOA) and OPT: every subset. */
	build_full_answer(&orig);
	ck_assert_int_eq(cordon_dns_parse(orig.b, orig.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 4);
	for (unsigned mask = 0; mask < 16; mask++) {
		bool keep[4];
		unsigned an = 0, ns = 0;
		size_t j = 0;
		ssize_t n;

		for (unsigned i = 0; i < 4; i++) {
			keep[i] = mask & (1u << i);
			if (keep[i])
				*(msg.rr[i].section == 1 ? &an : &ns) += 1;
		}
		p = orig;
		n = cordon_dns_filter(p.b, p.len, &msg, keep);
		ck_assert_int_gt(n, 0);
		ck_assert_int_le(n, (ssize_t)orig.len);
		ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
		ck_assert_uint_eq(msg2.ancount, an);
		ck_assert_uint_eq(msg2.nscount, ns);
		ck_assert_uint_eq(msg2.arcount, 1);
		ck_assert_uint_eq(msg2.n_rr, an + ns);
		ck_assert_str_eq(msg2.question.name, "www.example.org");
		ck_assert_uint_eq(msg2.id, 0xbeef);
		ck_assert_uint_eq(msg2.flags, 0x8180);
		for (unsigned i = 0; i < 4; i++) {
			if (!keep[i])
				continue;
			ck_assert_str_eq(msg2.rr[j].name, msg.rr[i].name);
			ck_assert_uint_eq(msg2.rr[j].type, msg.rr[i].type);
			ck_assert_uint_eq(msg2.rr[j].ttl, msg.rr[i].ttl);
			ck_assert_str_eq(msg2.rr[j].target, msg.rr[i].target);
			ck_assert_int_eq(
				memcmp(&msg2.rr[j].addr, &msg.rr[i].addr, sizeof(msg.rr[i].addr)),
				0);
			j++;
		}
	}
}
END_TEST

START_TEST(filter_pointer_into_removed_record)
{
	struct pkt p;
	size_t rdlength_at, a_owner, cname_target;
	ssize_t n;

	/*
	 * rr0: A owned by gone.cdn.example.net (uncompressed), dropped.
	 * rr1: CNAME q.example -> "edge" + pointer into rr0's "cdn.example.net".
	 * rr2: A owned by a pointer into rr1's target.
	 */
	header(&p, 3, 0x8180, 1, 3, 0, 0);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	a_owner = name(&p, "gone.cdn.example.net");
	rr_a(&p, 60, "203.0.113.9");
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, CORDON_DNS_TYPE_CNAME, 60);
	cname_target = p.len;
	labels(&p, "edge");
	ptr(&p, a_owner + 5);
	rr_end(&p, rdlength_at);
	ptr(&p, cname_target);
	rr_a(&p, 60, "203.0.113.10");

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_str_eq(msg.rr[1].target, "edge.cdn.example.net");
	ck_assert_str_eq(msg.rr[2].name, "edge.cdn.example.net");
	n = cordon_dns_filter(p.b, p.len, &msg, (const bool[]){ false, true, true });
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 2);
	ck_assert_str_eq(msg2.rr[0].name, "q.example");
	ck_assert_str_eq(msg2.rr[0].target, "edge.cdn.example.net");
	ck_assert_str_eq(msg2.rr[1].name, "edge.cdn.example.net");
	ck_assert_str_eq(addr_text(&msg2.rr[1].addr), "203.0.113.10");
	/* Nothing of the removed record is left. */
	ck_assert_ptr_null(memmem(p.b, (size_t)n, "gone", 4));
}
END_TEST

START_TEST(filter_rdata_names)
{
	struct pkt p;
	size_t rdlength_at, at;
	ssize_t n;

	/* MX and SRV whose names point into a TXT record that is dropped. */
	header(&p, 3, 0x8180, 1, 3, 0, 0);
	question(&p, "example.com", 15);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 16, 60);
	u8(&p, 20);
	at = p.len;
	name(&p, "mail.example.org"); /* 18 bytes */
	raw(&p, "xx", 2);
	rr_end(&p, rdlength_at);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 15, 60);
	u16(&p, 10);
	ptr(&p, at);
	rr_end(&p, rdlength_at);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 33, 60);
	u16(&p, 1);
	u16(&p, 2);
	u16(&p, 443);
	ptr(&p, at);
	rr_end(&p, rdlength_at);

	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_filter(p.b, p.len, &msg, (const bool[]){ false, true, true });
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 2);
	/* MX: preference then the name, compressed or not. */
	ck_assert_uint_eq(msg2.rr[0].type, 15);
	ck_assert_uint_eq(get_be16(p.b + msg2.rr[0].rdata_offset), 10);
	/* SRV's target must not be compressed (RFC 2782): written out. */
	ck_assert_uint_eq(msg2.rr[1].type, 33);
	ck_assert_uint_eq(msg2.rr[1].rdlength, 6 + 18);
	ck_assert_int_eq(memcmp(p.b + msg2.rr[1].rdata_offset + 6, "\4mail\7example\3org\0", 18),
			 0);
	/* The MX name came first, uncompressed; SRV may not point at it. */
	ck_assert_uint_eq(msg2.rr[0].rdlength, 2 + 18);
}
END_TEST

START_TEST(filter_drops_sig_and_nxt)
{
	struct pkt p;
	ssize_t n;

	header(&p, 3, 0x8180, 1, 3, 0, 0);
	question(&p, "example.com", 1);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, 24, 60, 3);
	raw(&p, "\xc0\x0c!", 3);
	ptr(&p, QUESTION_AT);
	rr_fixed(&p, 30, 60, 2);
	raw(&p, "\xc0\x0c", 2);
	ptr(&p, QUESTION_AT);
	rr_a(&p, 60, "203.0.113.1");
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 1);
	ck_assert_uint_eq(msg2.rr[0].type, CORDON_DNS_TYPE_A);
}
END_TEST

START_TEST(filter_never_grows)
{
	char label[64], big[256];
	struct pkt p;
	size_t rdlength_at, long_at;
	ssize_t n;

	/*
	 * Owners point into a TXT record's rdata, which the filter copies as
	 * opaque bytes: rebuilt, the first owner is written out in full and
	 * the reply would outgrow the original.
	 */
	memset(label, 'l', 63);
	label[63] = '\0';
	snprintf(big, sizeof(big), "%s.%s.%s", label, label, label);
	header(&p, 3, 0x8180, 1, 31, 0, 1);
	question(&p, "q.example", CORDON_DNS_TYPE_A);
	ptr(&p, QUESTION_AT);
	rdlength_at = rr_begin(&p, 16, 60);
	u8(&p, 193); /* a character-string holding the name's bytes */
	long_at = name(&p, big);
	rr_end(&p, rdlength_at);
	for (unsigned i = 0; i < 30; i++) {
		char a[16];

		snprintf(a, sizeof(a), "203.0.113.%u", i);
		ptr(&p, long_at);
		rr_a(&p, 60, a);
	}
	rr_opt(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	ck_assert_uint_eq(msg.n_rr, 31);

	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	ck_assert_int_gt(n, 0);
	ck_assert_int_le(n, (ssize_t)p.len);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_ne(msg2.flags & 0x0200, 0); /* TC */
	ck_assert_uint_lt(msg2.ancount, 31);
	ck_assert_uint_gt(msg2.ancount, 2);
	ck_assert_uint_eq(msg2.arcount, 1); /* OPT survives truncation */
	ck_assert_uint_eq(msg2.rr[0].type, 16);
	ck_assert_uint_eq(msg2.rr[1].type, CORDON_DNS_TYPE_A);
	ck_assert_str_eq(msg2.rr[1].name, big);
	/* Whole records only, the first ones. */
	for (size_t i = 1; i < msg2.n_rr; i++)
		ck_assert_uint_eq(msg2.rr[i].addr.u.bytes[3], i - 1);
}
END_TEST

START_TEST(filter_compresses_owners)
{
	struct pkt p;
	ssize_t n;

	/* 8 A records owned by the question name, written uncompressed. */
	header(&p, 3, 0x8180, 1, 8, 0, 0);
	question(&p, "many.example.com", CORDON_DNS_TYPE_A);
	for (unsigned i = 0; i < 8; i++) {
		char a[16];

		snprintf(a, sizeof(a), "203.0.113.%u", i);
		add_a(&p, "many.example.com", a);
	}
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	/* Each owner becomes a 2-byte pointer to the question. */
	ck_assert_int_eq(n, 12 + 18 + 4 + 8 * (2 + 10 + 4));
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 8);
	for (unsigned i = 0; i < 8; i++)
		ck_assert_str_eq(msg2.rr[i].name, "many.example.com");
}
END_TEST

START_TEST(filter_compression_depth_bounded)
{
	char owner[128] = "example";
	struct pkt p;
	ssize_t n;

	/*
	 * Owners a.example, a.a.example, a.a.a.example, ... written out in
	 * full. Compressed again naively, each would point at the one before,
	 * and reading the last would take more than 32 jumps.
	 */
	header(&p, 3, 0x8180, 1, 40, 0, 0);
	question(&p, "example", CORDON_DNS_TYPE_A);
	for (unsigned i = 0; i < 40; i++) {
		memmove(owner + 2, owner, strlen(owner) + 1);
		memcpy(owner, "a.", 2);
		add_a(&p, owner, "203.0.113.1");
	}
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)p.len / 2);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_eq(msg2.n_rr, 40);
	ck_assert_str_eq(msg2.rr[39].name, owner);
}
END_TEST

START_TEST(filter_rejects_foreign_msg)
{
	struct pkt p, other;

	build_full_answer(&p);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	build_https_answer(&other);
	ck_assert_int_eq(cordon_dns_filter(other.b, other.len, &msg, NULL), -EINVAL);
	ck_assert_int_eq(cordon_dns_filter(p.b, 11, &msg, NULL), -EINVAL);
	/* A record where msg does not place it. */
	msg2 = msg;
	msg2.rr[2].offset++;
	ck_assert_int_eq(cordon_dns_filter(p.b, p.len, &msg2, NULL), -EINVAL);
	/* Fewer records listed than the buffer holds. */
	msg2 = msg;
	msg2.n_rr--;
	ck_assert_int_eq(cordon_dns_filter(p.b, p.len, &msg2, NULL), -EINVAL);
	/* Same layout, other letters: the filter checks structure only. */
	p.b[QUESTION_AT + 1] = 'W';
	ck_assert_int_gt(cordon_dns_filter(p.b, p.len, &msg, NULL), 0);
}
END_TEST

START_TEST(filter_keeps_tc)
{
	struct pkt p;
	ssize_t n;

	build_full_answer(&p);
	cordon_dns_set_tc(p.b, p.len, true);
	ck_assert_int_eq(cordon_dns_parse(p.b, p.len, &msg), 0);
	n = cordon_dns_filter(p.b, p.len, &msg, NULL);
	ck_assert_int_eq(cordon_dns_parse(p.b, (size_t)n, &msg2), 0);
	ck_assert_uint_ne(msg2.flags & 0x0200, 0);
}
END_TEST

/* --- TC --------------------------------------------------------------- */

START_TEST(set_tc_sets_and_clears)
{
	struct pkt p;
	uint8_t before[12];

	build_full_answer(&p);
	memcpy(before, p.b, 12);
	cordon_dns_set_tc(p.b, p.len, true);
	ck_assert_uint_eq(p.b[2], before[2] | 0x02);
	ck_assert_uint_eq(p.b[3], before[3]);
	cordon_dns_set_tc(p.b, p.len, true);
	ck_assert_uint_eq(p.b[2], before[2] | 0x02);
	cordon_dns_set_tc(p.b, p.len, false);
	ck_assert_int_eq(memcmp(p.b, before, 12), 0);

	/* All other flags stay. */
	p.b[2] = 0xff;
	cordon_dns_set_tc(p.b, p.len, false);
	ck_assert_uint_eq(p.b[2], 0xfd);

	/* Shorter than a header: untouched. */
	p.b[2] = 0;
	cordon_dns_set_tc(p.b, 11, true);
	ck_assert_uint_eq(p.b[2], 0);
}
END_TEST

static Suite *dns_suite(void)
{
	Suite *s = suite_create("net-dns");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, parse_simple_a);
	tcase_add_test(tc, parse_aaaa);
	tcase_add_test(tc, parse_a_wrong_rdlength);
	tcase_add_test(tc, parse_lowercases_and_root);
	tcase_add_test(tc, parse_compression_suffix);
	tcase_add_test(tc, parse_pointer_to_itself);
	tcase_add_test(tc, parse_forward_pointer);
	tcase_add_test(tc, parse_mutual_loop);
	tcase_add_test(tc, parse_pointer_into_header);
	tcase_add_test(tc, parse_pointer_jump_limit);
	tcase_add_test(tc, parse_truncated_everywhere);
	tcase_add_test(tc, parse_rdata_beyond_end);
	tcase_add_test(tc, parse_label_and_name_limits);
	tcase_add_test(tc, parse_name_too_long_through_pointer);
	tcase_add_test(tc, parse_label_bytes);
	tcase_add_test(tc, parse_record_limit);
	tcase_add_test(tc, parse_question_counts);
	tcase_add_test(tc, parse_opt_rules);
	tcase_add_test(tc, parse_ttl_top_bit);
	tcase_add_test(tc, parse_rdata_names_checked);
	suite_add_tcase(s, tc);

	tc = tcase_create("error-replies");
	tcase_add_test(tc, build_error_each_rcode);
	tcase_add_test(tc, rebuild_query_carries_the_question_only);
	tcase_add_test(tc, rebuild_query_refuses);
	tcase_add_test(tc, build_error_opcode_and_edns);
	tcase_add_test(tc, build_error_bad_queries);
	suite_add_tcase(s, tc);

	tc = tcase_create("chain");
	tcase_add_test(tc, chain_follows_cnames);
	tcase_add_test(tc, chain_direct_answer_only_owner);
	tcase_add_test(tc, chain_loop_stops);
	tcase_add_test(tc, chain_at_most_16_links);
	tcase_add_test(tc, chain_ignores_other_classes);
	suite_add_tcase(s, tc);

	tc = tcase_create("filter");
	tcase_add_test(tc, filter_drops_https);
	tcase_add_test(tc, filter_subsets_parse_again);
	tcase_add_test(tc, filter_pointer_into_removed_record);
	tcase_add_test(tc, filter_rdata_names);
	tcase_add_test(tc, filter_drops_sig_and_nxt);
	tcase_add_test(tc, filter_never_grows);
	tcase_add_test(tc, filter_compresses_owners);
	tcase_add_test(tc, filter_compression_depth_bounded);
	tcase_add_test(tc, filter_rejects_foreign_msg);
	tcase_add_test(tc, filter_keeps_tc);
	tcase_add_test(tc, set_tc_sets_and_clears);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(dns_suite());
}
