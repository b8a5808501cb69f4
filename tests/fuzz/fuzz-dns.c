// SPDX-License-Identifier: Apache-2.0
/*
 * Fuzz target for src/net/dns.c: parse, chain, filter, error replies, the
 * rebuilt upstream query.
 *
 * Built twice (tests/fuzz/meson.build): as a libFuzzer target under clang
 * with -Dfuzz=true, and always as fuzz-dns-replay (-DCORDON_FUZZ_REPLAY),
 * a plain program that feeds the files or directories it is given to the
 * same entry point, so that the seed corpus and every crash ever found are
 * replayed by `meson test` with any compiler.
 *
 * Beyond "does not crash", each input checks what the proxy relies on: a
 * filtered reply parses again, holds no HTTPS/SVCB, keeps exactly the
 * records asked for (unless it had to set TC), never grows, and filtering
 * it a second time changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/net.h"
#include "fuzz.h"


#define DNS_FLAG_TC 0x0200

/* Large, and the harness runs one input at a time. */
static struct cordon_dns_msg msg, filtered, error_reply;
static uint8_t copy[65536], copy2[65536];

#define CHECK(cond)                                 \
	do {                                        \
		if (!(cond))                        \
			fuzz_fail(#cond, __LINE__); \
	} while (0)

static void fuzz_fail(const char *what, int line)
{
	fprintf(stderr, "fuzz-dns.c:%d: invariant failed: %s%s%s\n", line, what,
		fuzz_current_input ? " on " : "", fuzz_current_input ? fuzz_current_input : "");
	abort();
}

/* The filter's own policy, restated: records dropped whatever keep says. */
static bool always_dropped(const uint8_t *buf, const struct cordon_dns_rr *rr)
{
	if (rr->type == CORDON_DNS_TYPE_SVCB || rr->type == CORDON_DNS_TYPE_HTTPS ||
	    rr->type == 24 /* SIG */ || rr->type == 30 /* NXT */)
		return true;
	if (rr->type == 46 /* RRSIG */ && rr->rdlength >= 2) {
		unsigned covered = (unsigned)buf[rr->rdata_offset] << 8 | buf[rr->rdata_offset + 1];

		return covered == CORDON_DNS_TYPE_SVCB || covered == CORDON_DNS_TYPE_HTTPS;
	}
	return false;
}

static bool same_record(const struct cordon_dns_rr *a, const struct cordon_dns_rr *b)
{
	return strcmp(a->name, b->name) == 0 && a->type == b->type && a->rclass == b->rclass &&
	       a->ttl == b->ttl && a->section == b->section && strcmp(a->target, b->target) == 0 &&
	       memcmp(&a->addr, &b->addr, sizeof(a->addr)) == 0;
}

static void check_error_replies(const uint8_t *data, size_t size)
{
	static const int rcodes[] = { CORDON_DNS_RCODE_NXDOMAIN, CORDON_DNS_RCODE_REFUSED,
				      CORDON_DNS_RCODE_FORMERR };
	uint8_t reply[512];

	for (size_t i = 0; i < sizeof(rcodes) / sizeof(rcodes[0]); i++) {
		ssize_t n = cordon_dns_build_error(data, size, rcodes[i], reply, sizeof(reply));

		if (n < 0) {
			CHECK(rcodes[i] != CORDON_DNS_RCODE_FORMERR || size < 12 || size > 65535);
			continue;
		}
		CHECK(n >= 12 && (size_t)n <= sizeof(reply));
		CHECK(cordon_dns_parse(reply, (size_t)n, &error_reply) == 0);
		CHECK((error_reply.flags & 0x800f) == (0x8000 | rcodes[i]));
		CHECK(error_reply.n_rr == 0);
		if (cordon_dns_parse_question(data, size, &msg) == 0) {
			CHECK(error_reply.qdcount == 1);
			CHECK(error_reply.id == msg.id);
			CHECK(strcmp(error_reply.question.name, msg.question.name) == 0);
			CHECK(error_reply.question.qtype == msg.question.qtype);
		}
	}
}

/*
 * The query the proxy sends upstream: whatever came in, it parses, carries
 * the same question and nothing but it (and at most cordon's own OPT), and
 * is exactly as long as that.
 */
static void check_rebuilt_query(const uint8_t *data, size_t size)
{
	uint8_t out[CORDON_DNS_QUERY_MAX];
	ssize_t n = cordon_dns_rebuild_query(data, size, 0x1234, out, sizeof(out));

	if (n < 0) {
		CHECK(cordon_dns_parse_question(data, size, &msg) < 0);
		return;
	}
	CHECK(cordon_dns_parse_question(data, size, &msg) == 0);
	CHECK(cordon_dns_parse(out, (size_t)n, &error_reply) == 0);
	CHECK(error_reply.id == 0x1234);
	CHECK(error_reply.flags == (msg.flags & 0x0100));
	CHECK(error_reply.qdcount == 1 && error_reply.ancount == 0 && error_reply.nscount == 0);
	CHECK(error_reply.arcount <= 1 && error_reply.n_rr == 0);
	CHECK(strcmp(error_reply.question.name, msg.question.name) == 0);
	CHECK(error_reply.question.qtype == msg.question.qtype);
	CHECK(error_reply.question.qclass == msg.question.qclass);
	CHECK((size_t)n == 12 + strlen(msg.question.name) + (msg.question.name[0] ? 2 : 1) + 4 +
				   (error_reply.arcount ? 11 : 0));
}

static void check_parsed(size_t size)
{
	for (size_t i = 0; i < msg.n_rr; i++) {
		const struct cordon_dns_rr *rr = &msg.rr[i];

		CHECK(rr->section >= 1 && rr->section <= 3);
		CHECK(i == 0 || rr->section >= msg.rr[i - 1].section);
		CHECK(rr->offset + rr->length <= size);
		CHECK(rr->rdata_offset + rr->rdlength == rr->offset + rr->length);
		CHECK(strlen(rr->name) < CORDON_DNS_NAME_MAX);
		CHECK(rr->type != CORDON_DNS_TYPE_OPT);
		CHECK(rr->ttl <= 0x7fffffffu);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t idx[CORDON_DNS_MAX_RECORDS], n_chain, n_chain_kept = 0, n_expected = 0, j = 0;
	bool keep[CORDON_DNS_MAX_RECORDS];
	bool truncated;
	ssize_t n, n2;
	int r;

	check_error_replies(data, size);
	check_rebuilt_query(data, size);

	r = cordon_dns_parse(data, size, &msg);
	if (r < 0) {
		CHECK(r == -EINVAL || r == -EMSGSIZE);
		return 0;
	}
	CHECK(msg.n_rr <= CORDON_DNS_MAX_RECORDS);
	check_parsed(size);

	n_chain = cordon_dns_chain_addrs(&msg, idx, CORDON_DNS_MAX_RECORDS);
	CHECK(n_chain <= msg.n_rr);
	for (size_t i = 0; i < n_chain; i++) {
		const struct cordon_dns_rr *rr = &msg.rr[idx[i]];

		CHECK(idx[i] < msg.n_rr && (i == 0 || idx[i] > idx[i - 1]));
		CHECK(rr->section == 1 && rr->rclass == 1);
		CHECK(rr->type == CORDON_DNS_TYPE_A || rr->type == CORDON_DNS_TYPE_AAAA);
		CHECK(rr->addr.family == (rr->type == CORDON_DNS_TYPE_A ? AF_INET : AF_INET6));
	}

	/* Keep what the proxy keeps: every non-address record, the chain's addresses. */
	for (size_t i = 0; i < msg.n_rr; i++)
		keep[i] = msg.rr[i].type != CORDON_DNS_TYPE_A &&
			  msg.rr[i].type != CORDON_DNS_TYPE_AAAA;
	for (size_t i = 0; i < n_chain; i++)
		keep[idx[i]] = true;
	/* ...and, steered by the input's last byte, refuse a few of those addresses. */
	for (size_t i = 0; i < msg.n_rr; i++)
		if (size > 0 && (data[size - 1] >> (i % 8) & 1) && i % 3 == 0 &&
		    (msg.rr[i].type == CORDON_DNS_TYPE_A || msg.rr[i].type == CORDON_DNS_TYPE_AAAA))
			keep[i] = false;
	for (size_t i = 0; i < n_chain; i++)
		n_chain_kept += keep[idx[i]];
	for (size_t i = 0; i < msg.n_rr; i++)
		if (keep[i] && !always_dropped(data, &msg.rr[i]))
			n_expected++;

	/* TC cleared first, so that TC afterwards means the filter truncated. */
	memcpy(copy, data, size);
	cordon_dns_set_tc(copy, size, false);
	n = cordon_dns_filter(copy, size, &msg, keep);
	CHECK(n >= 12 && (size_t)n <= size);
	CHECK(cordon_dns_parse(copy, (size_t)n, &filtered) == 0);
	CHECK(filtered.id == msg.id);
	CHECK((filtered.flags & ~DNS_FLAG_TC) == (msg.flags & ~DNS_FLAG_TC));
	CHECK(filtered.qdcount == msg.qdcount);
	CHECK(strcmp(filtered.question.name, msg.question.name) == 0);
	CHECK(filtered.question.qtype == msg.question.qtype);
	CHECK(filtered.n_rr <= n_expected);
	/* OPT is kept whatever happens. */
	CHECK(filtered.ancount + filtered.nscount + filtered.arcount - filtered.n_rr ==
	      msg.ancount + msg.nscount + msg.arcount - msg.n_rr);
	/* In order, each one a record that was asked for. */
	for (size_t i = 0; i < msg.n_rr && j < filtered.n_rr; i++) {
		if (!keep[i] || always_dropped(data, &msg.rr[i]))
			continue;
		CHECK(same_record(&filtered.rr[j], &msg.rr[i]));
		j++;
	}
	CHECK(j == filtered.n_rr);
	for (size_t i = 0; i < filtered.n_rr; i++)
		CHECK(filtered.rr[i].type != CORDON_DNS_TYPE_HTTPS &&
		      filtered.rr[i].type != CORDON_DNS_TYPE_SVCB);
	truncated = filtered.flags & DNS_FLAG_TC;
	if (truncated) {
		/* Only by leaving records out, and only when the rebuild grew. */
		CHECK(filtered.n_rr < n_expected);
		return 0;
	}
	CHECK(filtered.n_rr == n_expected);
	/* CNAMEs are all kept, so the chain is the same, less the refused addresses. */
	CHECK(cordon_dns_chain_addrs(&filtered, idx, CORDON_DNS_MAX_RECORDS) == n_chain_kept);

	/* A filtered reply is a fixed point. */
	memcpy(copy2, copy, (size_t)n);
	n2 = cordon_dns_filter(copy2, (size_t)n, &filtered, NULL);
	CHECK(n2 == n);
	CHECK(memcmp(copy, copy2, (size_t)n) == 0);

	cordon_dns_set_tc(copy2, (size_t)n, true);
	CHECK(cordon_dns_parse(copy2, (size_t)n, &filtered) == 0);
	CHECK(filtered.flags & DNS_FLAG_TC);
	cordon_dns_set_tc(copy2, (size_t)n, false);
	CHECK(memcmp(copy, copy2, (size_t)n) == 0);
	return 0;
}
