// SPDX-License-Identifier: Apache-2.0
/*
 * Fuzz target for the supervisor's end of the DNS proxy's channel
 * (src/net/dnsproxy-ctl.c): the bytes of a message a proxy taken over by
 * the workload could send, through cordon_dnsctl_check, and for an ADMIT
 * that passes, through the supervisor's re-vetting as it runs it
 * (cordon_dnsctl_vet_admit against the allowlist and the gateway's
 * blocked ranges, cordon_gateway_blocked, with the host's own addresses).
 *
 * The input is one message, cut or zero-padded to the message's size,
 * and after the message's bytes an optional trailer: which allowlist the
 * supervisor runs with, and whether the host has addresses of its own.
 * The raw input is checked too, at its own length: only a whole message
 * may pass.
 *
 * What an accepted message must be, restated here field by field rather
 * than trusted: a type a proxy may send, counts within the arrays,
 * every address of a known family with nothing past the family's length,
 * verdicts and reasons known ones, names NUL-terminated and printable
 * with only zeros after them, and every field the type does not carry
 * zero. What the re-vetting must never do: admit an address that
 * cordon_addr_vet refuses with the allowlist's CIDRs, that lies in a
 * blocked range or is one of the host's addresses (or an IPv6 form of
 * one, mapped, compatible, NAT64 or 6to4), a metadata address the
 * allowlist does not name exactly, or any address for a name the
 * allowlist does not match.
 *
 * The other direction, ADMITTED as the proxy's loop reads it, and the
 * socket channel's answers, are driven by fuzz-dnsproxy.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/net.h"
#include "fuzz.h"

#define CHECK(cond)                                 \
	do {                                        \
		if (!(cond))                        \
			fuzz_fail(#cond, __LINE__); \
	} while (0)

static void fuzz_fail(const char *what, int line)
{
	fprintf(stderr, "fuzz-dnsctl.c:%d: invariant failed: %s%s%s\n", line, what,
		fuzz_current_input ? " on " : "", fuzz_current_input ? fuzz_current_input : "");
	abort();
}

/* The supervisor's allowlists: names, and CIDRs that open parts of the vetting table. */
static const char *const allowlist_texts[] = {
	"allowed.test,*.wild.test",
	"allowed.test,*.wild.test,10.0.0.0/8,169.254.0.0/16,fd00::/8,::ffff:0:0/96",
	"allowed.test,100.64.0.0/10,198.18.0.0/15,2001:db8::/32,64:ff9b::/96,fe80::/10",
	"allowed.test,169.254.169.254,fd00:ec2::254,127.0.0.0/8,::1",
};
#define N_ALLOWLISTS (sizeof(allowlist_texts) / sizeof(allowlist_texts[0]))

/* What the host holds itself: blocked whatever the allowlist says. */
static const char *const host_texts[] = { "93.184.216.34", "8.8.8.8", "2606:2800:220:1::248",
					  "10.1.2.3", "fd00::5" };
#define N_HOST (sizeof(host_texts) / sizeof(host_texts[0]))

static struct cordon_allowlist *allowlists[N_ALLOWLISTS];
static struct cordon_cidr *blocked[N_ALLOWLISTS][2]; /* without, with the host's addresses */
static size_t n_blocked[N_ALLOWLISTS][2];
static struct cordon_addr host[N_HOST];

static void setup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	for (size_t i = 0; i < N_HOST; i++)
		if (cordon_addr_parse(host_texts[i], &host[i]) < 0)
			abort();
	for (size_t a = 0; a < N_ALLOWLISTS; a++) {
		struct cordon_error err = { 0 };

		allowlists[a] = cordon_allowlist_new();
		if (cordon_allowlist_add(allowlists[a], allowlist_texts[a], false, &err) < 0) {
			fprintf(stderr, "fuzz-dnsctl: %s: %s\n", allowlist_texts[a], err.msg);
			abort();
		}
		n_blocked[a][0] = cordon_gateway_blocked(allowlists[a], NULL, 0, &blocked[a][0]);
		n_blocked[a][1] =
			cordon_gateway_blocked(allowlists[a], host, N_HOST, &blocked[a][1]);
	}
}

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* A name of a message: NUL-terminated, at least min_len long, of [lo, 0x7e], zeros after. */
static bool good_name(const char *name, size_t cap, size_t min_len, unsigned lo)
{
	size_t len = strnlen(name, cap);

	if (len == cap || len < min_len)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] < lo || (unsigned char)name[i] > 0x7e)
			return false;
	return all_zero(name + len, cap - len);
}

static bool good_addr(const struct cordon_dnsctl_addr *a)
{
	size_t len = a->family == AF_INET ? 4 : a->family == AF_INET6 ? 16 : 0;

	return len && a->why < CORDON_VET_COUNT && all_zero(a->bytes + len, 16 - len);
}

/* n addresses, each good, and the rest of the array zero. */
static bool good_addrs(const struct cordon_dnsctl_addr *v, size_t n)
{
	if (n > CORDON_DNS_ADMIT_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!good_addr(&v[i]))
			return false;
	return all_zero(v + n, (CORDON_DNS_ADMIT_MAX - n) * sizeof(*v));
}

enum field {
	F_TOKEN = 1 << 0,
	F_TTL = 1 << 1,
	F_ERROR = 1 << 2,
	F_QTYPE = 1 << 3,
	F_ALLOWED = 1 << 4,
	F_RCODE = 1 << 5,
	F_ADDRS = 1 << 6,   /* n_addrs and addrs */
	F_REFUSED = 1 << 7, /* n_refused and refused */
	F_NAME = 1 << 8,
	F_STATS = 1 << 9,
};

/* Everything but the fields the type carries is zero (the padding included). */
static bool rest_zero(const struct cordon_dnsctl_msg *m, unsigned carried)
{
	static struct cordon_dnsctl_msg rest;

	memcpy(&rest, m, sizeof(rest));
	rest.type = 0;
	if (carried & F_TOKEN)
		rest.token = 0;
	if (carried & F_TTL)
		rest.ttl_s = 0;
	if (carried & F_ERROR)
		rest.error = 0;
	if (carried & F_QTYPE)
		rest.qtype = 0;
	if (carried & F_ALLOWED)
		rest.allowed = 0;
	if (carried & F_RCODE)
		rest.rcode = 0;
	if (carried & F_ADDRS) {
		rest.n_addrs = 0;
		memset(rest.addrs, 0, sizeof(rest.addrs));
	}
	if (carried & F_REFUSED) {
		rest.n_refused = 0;
		memset(rest.refused, 0, sizeof(rest.refused));
	}
	if (carried & F_NAME)
		memset(rest.name, 0, sizeof(rest.name));
	if (carried & F_STATS)
		memset(&rest.stats, 0, sizeof(rest.stats));
	return all_zero(&rest, sizeof(rest));
}

/* What the supervisor relies on in a message cordon_dnsctl_check let through. */
static void check_accepted(const struct cordon_dnsctl_msg *m)
{
	switch (m->type) {
	case CORDON_DNSCTL_READY:
		CHECK(rest_zero(m, 0));
		break;
	case CORDON_DNSCTL_ADMIT:
		CHECK(m->n_addrs >= 1 && good_addrs(m->addrs, m->n_addrs));
		for (size_t i = 0; i < m->n_addrs; i++)
			CHECK(m->addrs[i].why == CORDON_VET_OK);
		CHECK(good_name(m->name, sizeof(m->name), 1, 0x21));
		CHECK(rest_zero(m, F_TOKEN | F_TTL | F_QTYPE | F_ADDRS | F_NAME));
		break;
	case CORDON_DNSCTL_EVENT:
		CHECK(good_addrs(m->addrs, m->n_addrs) && good_addrs(m->refused, m->n_refused));
		for (size_t i = 0; i < m->n_refused; i++) {
			CHECK(m->refused[i].why != CORDON_VET_OK);
			CHECK(strcmp(cordon_vet_name((enum cordon_vet)m->refused[i].why),
				     "unknown") != 0);
		}
		CHECK(m->allowed <= 1 && m->rcode <= 15);
		CHECK(good_name(m->name, sizeof(m->name), 0, 0x21));
		CHECK(rest_zero(m, F_QTYPE | F_ALLOWED | F_RCODE | F_ADDRS | F_REFUSED | F_NAME));
		break;
	case CORDON_DNSCTL_STATS:
		CHECK(rest_zero(m, F_STATS));
		break;
	case CORDON_DNSCTL_SOCKET:
		/* On its own channel: which upstream, and UDP or TCP. */
		CHECK(m->token < CORDON_DNSPROXY_MAX_UPSTREAMS);
		CHECK(m->qtype == SOCK_DGRAM || m->qtype == SOCK_STREAM);
		CHECK(rest_zero(m, F_TOKEN | F_QTYPE));
		break;
	case CORDON_DNSCTL_POLICY:
		/* The answer to a live update: its length back, and 0 or an errno. */
		CHECK(m->error <= 0 && m->error >= -4095);
		CHECK(rest_zero(m, F_TOKEN | F_ERROR));
		break;
	case CORDON_DNSCTL_FAILED:
		/* A reason for the terminal: printable, spaces allowed. */
		CHECK(good_name(m->name, sizeof(m->name), 0, 0x20));
		CHECK(rest_zero(m, F_NAME));
		break;
	default:
		CHECK(!"a type the proxy may not send was accepted");
	}
}

static bool inside_any(const struct cordon_cidr *v, size_t n, const struct cordon_addr *a)
{
	for (size_t i = 0; i < n; i++)
		if (cordon_cidr_contains(&v[i], a))
			return true;
	return false;
}

static bool same_addr(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET ? 4 : 16) == 0;
}

/* The allowlist names a exactly (as a /32 or /128 entry). */
static bool listed_exactly(const struct cordon_allowlist *al, const struct cordon_addr *a)
{
	const struct cordon_cidr *cidrs;
	size_t n = cordon_allowlist_cidrs(al, &cidrs);

	for (size_t i = 0; i < n; i++)
		if (cidrs[i].prefix == (a->family == AF_INET ? 32u : 128u) &&
		    same_addr(&cidrs[i].addr, a))
			return true;
	return false;
}

/*
 * The IPv4 address a few IPv6 forms carry, restated here (mapped,
 * compatible, NAT64's well-known prefix, 6to4): 0, or 1 with it in v4.
 */
static int embedded_v4(const struct cordon_addr *a, size_t form, struct cordon_addr *v4)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t compatible[12] = { 0 };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
	const uint8_t *b = a->u.bytes;

	memset(v4, 0, sizeof(*v4));
	v4->family = AF_INET;
	if (a->family != AF_INET6)
		return 0;
	switch (form) {
	case 0:
	case 1:
	case 2:
		if (memcmp(b, form == 0 ? mapped : form == 1 ? compatible : nat64, 12) != 0)
			return 0;
		memcpy(v4->u.bytes, b + 12, 4);
		return 1;
	case 3:
		if (b[0] != 0x20 || b[1] != 0x02)
			return 0;
		memcpy(v4->u.bytes, b + 2, 4);
		return 1;
	}
	return 0;
}

/* The supervisor's ADMIT (src/sandbox/egress/proxy.c proxy_admit), its vetting restated. */
static void check_admit(const struct cordon_dnsctl_msg *m, size_t which, bool with_host)
{
	const struct cordon_allowlist *al = allowlists[which];
	const struct cordon_cidr *bl = blocked[which][with_host], *cidrs, *meta;
	size_t nb = n_blocked[which][with_host], n_cidrs = cordon_allowlist_cidrs(al, &cidrs);
	size_t n_meta = cordon_vet_metadata(&meta), admitted, counted = 0;
	struct cordon_addr addrs[CORDON_DNS_ADMIT_MAX];
	enum cordon_vet why[CORDON_DNS_ADMIT_MAX];
	bool listed = cordon_allowlist_match_name(al, m->name);

	for (size_t i = 0; i < m->n_addrs; i++) {
		struct cordon_dnsctl_addr back;

		cordon_dnsctl_addr_get(&m->addrs[i], &addrs[i]);
		/* The address read is the address sent, and written back it is the same bytes. */
		CHECK(addrs[i].family == m->addrs[i].family);
		cordon_dnsctl_addr_put(&addrs[i], CORDON_VET_OK, &back);
		CHECK(memcmp(&back, &m->addrs[i], sizeof(back)) == 0);
	}
	admitted = cordon_dnsctl_vet_admit(al, bl, nb, m->name, addrs, m->n_addrs, why);
	for (size_t i = 0; i < m->n_addrs; i++) {
		const struct cordon_addr *a = &addrs[i];

		CHECK(why[i] < CORDON_VET_COUNT);
		if (why[i] != CORDON_VET_OK)
			continue;
		counted++;
		CHECK(listed);
		CHECK(cordon_addr_vet(a, cidrs, n_cidrs) == CORDON_VET_OK);
		CHECK(!inside_any(bl, nb, a));
		for (size_t k = 0; with_host && k < N_HOST; k++)
			CHECK(!same_addr(a, &host[k]));
		if (inside_any(meta, n_meta, a))
			CHECK(listed_exactly(al, a));
		/* Nor an IPv6 form of a blocked IPv4 address (the forward chain drops it). */
		for (size_t form = 0; form < 4; form++) {
			struct cordon_addr v4;

			if (!embedded_v4(a, form, &v4))
				continue;
			CHECK(!inside_any(bl, nb, &v4));
			for (size_t k = 0; with_host && k < N_HOST; k++)
				CHECK(!same_addr(&v4, &host[k]));
		}
	}
	CHECK(admitted == counted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t raw[sizeof(struct cordon_dnsctl_msg) + 64];
	static struct cordon_dnsctl_msg dgram[CORDON_DNSCTL_EVENTS_MAX + 1];
	static struct cordon_dnsctl_msg m;
	const size_t whole = sizeof(m);
	const char *why = NULL;
	int r;

	setup();

	/* The bytes as they came, at their own length: only a whole message may pass. */
	if (size <= sizeof(raw)) {
		memcpy(raw, data, size);
		r = cordon_dnsctl_check(raw, size, &why);
		CHECK(r == 0 || r == -1);
		CHECK(r < 0 ? why && *why : size == whole);
	}

	/*
	 * As a datagram: one message, or EVENTs only, each passing the check
	 * on its own (the supervisor reads what it returns as that many).
	 */
	if (size <= sizeof(dgram)) {
		int n;

		memcpy(dgram, data, size);
		why = NULL;
		n = cordon_dnsctl_check_datagram(dgram, size, &why);
		CHECK(n == -1 || (n >= 1 && n <= CORDON_DNSCTL_EVENTS_MAX));
		CHECK(n < 0 ? why && *why : size == (size_t)n * whole);
		for (int k = 0; k < n; k++) {
			CHECK(cordon_dnsctl_check(&dgram[k], whole, &why) == 0);
			CHECK(n == 1 || dgram[k].type == CORDON_DNSCTL_EVENT);
		}
	}

	/* As one message, and what the trailer says about the supervisor. */
	memset(&m, 0, sizeof(m));
	memcpy(&m, data, size < whole ? size : whole);
	why = NULL;
	r = cordon_dnsctl_check(&m, whole, &why);
	if (r < 0) {
		CHECK(r == -1 && why && *why);
		return 0;
	}
	check_accepted(&m);
	if (m.type == CORDON_DNSCTL_ADMIT) {
		uint8_t t = size > whole ? data[whole] : 0;

		check_admit(&m, t % N_ALLOWLISTS, (t & 0x80) == 0);
	}
	return 0;
}
