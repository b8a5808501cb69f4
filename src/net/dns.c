// SPDX-License-Identifier: Apache-2.0
/*
 * DNS wire format: a bounded parser and the few edits the DNS proxy makes.
 *
 * Every byte here was chosen by the upstream resolver or by the workload,
 * so nothing recurses, every length is checked against the buffer before
 * it is used, and a compression pointer must point strictly before the run
 * of labels it ends (and past the header): each jump moves to a lower
 * offset, so a name walk ends even before the limit of 32 jumps applies.
 *
 * Names that cordon compares (question, owners, CNAME targets) come out in
 * lower case without the trailing dot, bytes other than A-Z unchanged and
 * unescaped. A '.' or a NUL inside a label would make two different wire
 * names read alike, and no allowlist entry can contain one, so a message
 * carrying such a name is refused (-EINVAL) rather than guessed at.
 *
 * What cordon_dns_parse accepts: no question (some error replies carry
 * none; chain_addrs then lists nothing) but never two; at most one OPT, in
 * the additional section, owned by the root, and never listed in msg->rr;
 * A and AAAA of class IN with exactly 4 and 16 bytes; the types of
 * rdata_layouts below holding exactly their fields, so that whatever parses
 * can be filtered. A TTL with the top bit set reads as 0 (RFC 2181 8).
 * Bytes after the last record are ignored; more than 65535 is -EMSGSIZE.
 *
 * cordon_dns_chain_addrs returns how many indexes it wrote (at most cap);
 * cordon_dns_filter with keep NULL keeps every record it may keep.
 *
 * Editing policy (cordon_dns_filter):
 *
 *  - HTTPS and SVCB records (types 65 and 64) are dropped whole instead of
 *    having their ipv4hint/ipv6hint parameters removed. Hints are addresses
 *    that would reach the client without vetting; editing SvcParams means
 *    re-encoding an extensible key/value format whose unknown keys might
 *    carry addresses too. Clients fall back to A/AAAA, which cordon vets.
 *    RRSIGs covering those types go with them.
 *  - The reply is rebuilt, never patched: header, question, then each kept
 *    record with its names decompressed. A pointer elsewhere in the
 *    message may point into a record that is removed, so no byte of the
 *    old layout is trusted to mean the same thing afterwards. Names are
 *    compressed again only against names this rebuild wrote itself, so
 *    every pointer in the result is known to be valid.
 *  - Names inside rdata: the RFC 1035 types (NS, CNAME, SOA, PTR, MX, ...)
 *    are decompressed and may be compressed again; the types RFC 3597 4
 *    says a receiver should decompress (RP, AFSDB, RT, PX, NAPTR, SRV), and
 *    KX and DNAME, are decompressed and written uncompressed. SIG and NXT
 *    might carry a compressed name too and are obsolete: they are dropped.
 *    Every other type's rdata is copied byte for byte: RFC 3597 forbids
 *    compression inside it, so it cannot refer to the rest of the message.
 *  - OPT is never listed in msg->rr and is kept as it is.
 *  - The result never outgrows the original length: if the rebuild would
 *    not fit, the remaining records are left out (space for OPT is kept)
 *    and TC is set, so the client retries over TCP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cordon/net.h"

#define DNS_HEADER_LEN 12
#define DNS_MESSAGE_MAX 65535
#define DNS_WIRE_NAME_MAX 255 /* uncompressed, including the root's zero byte */
#define DNS_POINTER_JUMPS_MAX 32
#define DNS_POINTER_TARGET_MAX 0x3fff
#define DNS_CHAIN_LINKS_MAX 16
#define DNS_RR_FIXED_LEN 10	  /* type, class, ttl, rdlength */
#define DNS_EDNS_UDP_PAYLOAD 1232 /* what cordon's own error replies advertise */
#define DNS_COMPRESS_DICT_MAX 256

#define DNS_CLASS_IN 1
#define DNS_TYPE_SIG 24
#define DNS_TYPE_NXT 30
#define DNS_TYPE_RRSIG 46

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_OPCODE 0x7800
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_FLAG_CD 0x0010
#define DNS_EDNS_FLAG_DO 0x8000

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* --- names ------------------------------------------------------------ */

/* A name in uncompressed wire form: length-prefixed labels, then a zero. */
struct wire_name {
	uint8_t bytes[DNS_WIRE_NAME_MAX];
	size_t len;
};

/*
 * Read the name at *pos into uncompressed form. On success *pos is just
 * past the name as it is stored there (past its first pointer, if any).
 */
static int dns_name_read(const uint8_t *buf, size_t len, size_t *pos, struct wire_name *name)
{
	size_t p = *pos, run_start = *pos, end = 0;
	unsigned jumps = 0;

	name->len = 0;
	for (;;) {
		uint8_t b;

		if (p >= len)
			return -EINVAL;
		b = buf[p];
		if ((b & 0xc0) == 0xc0) {
			size_t target;

			if (len - p < 2)
				return -EINVAL;
			target = (size_t)(b & 0x3f) << 8 | buf[p + 1];
			/*
			 * Before the run this pointer ends, not merely before
			 * the pointer: "a" then a pointer back to that "a"
			 * points backwards and still loops.
			 */
			if (target < DNS_HEADER_LEN || target >= run_start ||
			    ++jumps > DNS_POINTER_JUMPS_MAX)
				return -EINVAL;
			if (jumps == 1)
				end = p + 2;
			p = run_start = target;
			continue;
		}
		/* 0x40 and 0x80 are the retired extended label types. */
		if (b & 0xc0)
			return -EINVAL;
		if (b == 0) {
			name->bytes[name->len++] = 0;
			p++;
			break;
		}
		if (len - p - 1 < b)
			return -EINVAL;
		/* This label, and room left for the root's zero byte. */
		if (name->len + 1 + b + 1 > DNS_WIRE_NAME_MAX)
			return -EINVAL;
		memcpy(name->bytes + name->len, buf + p, 1 + (size_t)b);
		name->len += 1 + (size_t)b;
		p += 1 + (size_t)b;
	}
	*pos = jumps > 0 ? end : p;
	return 0;
}

/* Presentation form of a name cordon compares (see the top of this file). */
static int dns_name_to_text(const struct wire_name *name, char out[CORDON_DNS_NAME_MAX])
{
	size_t i = 0, o = 0;

	while (name->bytes[i] != 0) {
		size_t l = name->bytes[i++];

		if (o > 0)
			out[o++] = '.';
		for (size_t j = 0; j < l; j++) {
			uint8_t c = name->bytes[i + j];

			if (c == '.' || c == '\0')
				return -EINVAL;
			out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
		}
		i += l;
	}
	/* At most 253 characters: the wire form is two bytes longer. */
	out[o] = '\0';
	return 0;
}

/* --- records ---------------------------------------------------------- */

struct record {
	size_t offset;	     /* of the owner name */
	size_t fixed_offset; /* of the type field */
	size_t rdata_offset;
	size_t end;
	struct wire_name name;
	uint16_t type, rclass, rdlength;
	uint32_t ttl;
};

static int dns_record_read(const uint8_t *buf, size_t len, size_t *pos, struct record *rec)
{
	int r;

	rec->offset = *pos;
	r = dns_name_read(buf, len, pos, &rec->name);
	if (r < 0)
		return r;
	if (len - *pos < DNS_RR_FIXED_LEN)
		return -EINVAL;
	rec->fixed_offset = *pos;
	rec->type = get16(buf + *pos);
	rec->rclass = get16(buf + *pos + 2);
	rec->ttl = get32(buf + *pos + 4);
	rec->rdlength = get16(buf + *pos + 8);
	rec->rdata_offset = *pos + DNS_RR_FIXED_LEN;
	if (len - rec->rdata_offset < rec->rdlength)
		return -EINVAL;
	rec->end = rec->rdata_offset + rec->rdlength;
	*pos = rec->end;
	return 0;
}

/*
 * How the rdata of a type that carries names is laid out: 'N' a name,
 * 'S' a character-string, '1'-'9' that many fixed bytes. The rdata must be
 * consumed exactly.
 */
struct rdata_layout {
	uint16_t type;
	bool compress; /* an RFC 1035 type: its names may be compressed */
	const char *fields;
};

static const struct rdata_layout rdata_layouts[] = {
	{ 2, true, "N" },	 /* NS */
	{ 3, true, "N" },	 /* MD */
	{ 4, true, "N" },	 /* MF */
	{ 5, true, "N" },	 /* CNAME */
	{ 6, true, "NN44444" },	 /* SOA: mname rname serial refresh retry expire minimum */
	{ 7, true, "N" },	 /* MB */
	{ 8, true, "N" },	 /* MG */
	{ 9, true, "N" },	 /* MR */
	{ 12, true, "N" },	 /* PTR */
	{ 14, true, "NN" },	 /* MINFO */
	{ 15, true, "2N" },	 /* MX */
	{ 17, false, "NN" },	 /* RP */
	{ 18, false, "2N" },	 /* AFSDB */
	{ 21, false, "2N" },	 /* RT */
	{ 26, false, "2NN" },	 /* PX */
	{ 33, false, "222N" },	 /* SRV: priority weight port target */
	{ 35, false, "22SSSN" }, /* NAPTR: order preference flags services regexp replacement */
	{ 36, false, "2N" },	 /* KX */
	{ 39, false, "N" },	 /* DNAME */
};

static const struct rdata_layout *dns_rdata_layout(uint16_t type)
{
	for (size_t i = 0; i < ARRAY_SIZE(rdata_layouts); i++)
		if (rdata_layouts[i].type == type)
			return &rdata_layouts[i];
	return NULL;
}

/* --- the rebuilt message ---------------------------------------------- */

/*
 * An output buffer that refuses to overflow: a write that does not fit
 * sets full and is dropped, and the caller checks full once per record.
 */
struct writer {
	uint8_t *buf;
	size_t cap, len;
	bool full;
	/*
	 * Where this writer put each name and each of its suffixes: pointer
	 * targets for later names. len is the uncompressed length from there
	 * on; jumps, how many pointers reading it follows.
	 */
	struct {
		uint16_t offset;
		uint8_t len;
		uint8_t jumps;
	} dict[DNS_COMPRESS_DICT_MAX];
	size_t n_dict;
};

static void put_bytes(struct writer *w, const void *p, size_t n)
{
	if (w->full || w->cap - w->len < n) {
		w->full = true;
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put16(struct writer *w, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put_bytes(w, b, sizeof(b));
}

/* Is the name this writer put at dict entry d the given uncompressed name? */
static bool dict_matches(const struct writer *w, size_t d, const uint8_t *wire, size_t len)
{
	struct wire_name there;
	size_t pos = w->dict[d].offset;

	if (w->dict[d].len != len)
		return false;
	/* What was written is a valid message prefix: read it back as a parser would. */
	if (dns_name_read(w->buf, w->len, &pos, &there) < 0)
		return false;
	return there.len == len && memcmp(there.bytes, wire, len) == 0;
}

/* The entry holding the longest suffix of name already written; *label is where it starts. */
static bool dict_find(const struct writer *w, const struct wire_name *name, const size_t *labels,
		      size_t n_labels, size_t *label, size_t *entry)
{
	for (size_t k = 0; k < n_labels; k++) {
		for (size_t d = 0; d < w->n_dict; d++) {
			/* Reading the new name takes one jump more than reading this one. */
			if (w->dict[d].jumps >= DNS_POINTER_JUMPS_MAX ||
			    !dict_matches(w, d, name->bytes + labels[k], name->len - labels[k]))
				continue;
			*label = k;
			*entry = d;
			return true;
		}
	}
	return false;
}

static void put_name(struct writer *w, const struct wire_name *name, bool compress)
{
	size_t labels[DNS_WIRE_NAME_MAX / 2];
	size_t n_labels = 0, start = w->len, n_written, d;
	unsigned jumps = 0;

	for (size_t i = 0; name->bytes[i] != 0; i += 1 + (size_t)name->bytes[i])
		labels[n_labels++] = i;

	if (compress && dict_find(w, name, labels, n_labels, &n_written, &d)) {
		jumps = w->dict[d].jumps + 1u;
		put_bytes(w, name->bytes, labels[n_written]);
		put16(w, (uint16_t)(0xc000 | w->dict[d].offset));
	} else {
		n_written = n_labels;
		put_bytes(w, name->bytes, name->len);
	}
	if (w->full)
		return;

	/* The labels written out here are targets for later names. */
	for (size_t i = 0; i < n_written && w->n_dict < DNS_COMPRESS_DICT_MAX; i++) {
		if (start + labels[i] > DNS_POINTER_TARGET_MAX)
			break;
		w->dict[w->n_dict].offset = (uint16_t)(start + labels[i]);
		w->dict[w->n_dict].len = (uint8_t)(name->len - labels[i]);
		w->dict[w->n_dict].jumps = (uint8_t)jumps;
		w->n_dict++;
	}
}

/*
 * Check the rdata of a record against its layout and, with w, write it
 * with its names decompressed.
 */
static int dns_rdata_walk(const uint8_t *buf, size_t len, const struct record *rec,
			  const struct rdata_layout *layout, struct writer *w)
{
	size_t pos = rec->rdata_offset;

	for (const char *f = layout->fields; *f; f++) {
		if (*f == 'N') {
			struct wire_name name;
			int r = dns_name_read(buf, len, &pos, &name);

			/* The name may point anywhere earlier, but it must start and sit here. */
			if (r < 0)
				return r;
			if (pos > rec->end)
				return -EINVAL;
			if (w)
				put_name(w, &name, layout->compress);
		} else if (*f == 'S') {
			size_t n;

			if (pos >= rec->end)
				return -EINVAL;
			n = 1 + (size_t)buf[pos];
			if (rec->end - pos < n)
				return -EINVAL;
			if (w)
				put_bytes(w, buf + pos, n);
			pos += n;
		} else {
			size_t n = (size_t)(*f - '0');

			if (rec->end - pos < n)
				return -EINVAL;
			if (w)
				put_bytes(w, buf + pos, n);
			pos += n;
		}
	}
	return pos == rec->end ? 0 : -EINVAL;
}

/* --- parsing ---------------------------------------------------------- */

static int dns_header_read(const uint8_t *buf, size_t len, struct cordon_dns_msg *msg)
{
	if (len < DNS_HEADER_LEN)
		return -EINVAL;
	if (len > DNS_MESSAGE_MAX)
		return -EMSGSIZE;
	msg->id = get16(buf);
	msg->flags = get16(buf + 2);
	msg->qdcount = get16(buf + 4);
	msg->ancount = get16(buf + 6);
	msg->nscount = get16(buf + 8);
	msg->arcount = get16(buf + 10);
	memset(&msg->question, 0, sizeof(msg->question));
	msg->n_rr = 0;
	return 0;
}

static int dns_question_read(const uint8_t *buf, size_t len, size_t *pos,
			     struct cordon_dns_question *q, struct wire_name *name)
{
	int r;

	r = dns_name_read(buf, len, pos, name);
	if (r < 0)
		return r;
	r = dns_name_to_text(name, q->name);
	if (r < 0)
		return r;
	if (len - *pos < 4)
		return -EINVAL;
	q->qtype = get16(buf + *pos);
	q->qclass = get16(buf + *pos + 2);
	*pos += 4;
	return 0;
}

int cordon_dns_parse_question(const uint8_t *buf, size_t len, struct cordon_dns_msg *msg)
{
	struct wire_name name;
	size_t pos = DNS_HEADER_LEN;
	int r;

	r = dns_header_read(buf, len, msg);
	if (r < 0)
		return r;
	if (msg->qdcount != 1)
		return -EINVAL;
	return dns_question_read(buf, len, &pos, &msg->question, &name);
}

/* Fill the public view of one record, checking what cordon relies on. */
static int dns_rr_fill(const uint8_t *buf, size_t len, const struct record *rec, uint16_t section,
		       struct cordon_dns_rr *rr)
{
	const struct rdata_layout *layout;
	int r;

	memset(rr, 0, sizeof(*rr));
	r = dns_name_to_text(&rec->name, rr->name);
	if (r < 0)
		return r;
	rr->type = rec->type;
	rr->rclass = rec->rclass;
	/* RFC 2181 8: a TTL with the top bit set is treated as zero. */
	rr->ttl = rec->ttl > INT32_MAX ? 0 : rec->ttl;
	rr->section = section;
	rr->offset = rec->offset;
	rr->length = rec->end - rec->offset;
	rr->rdata_offset = rec->rdata_offset;
	rr->rdlength = rec->rdlength;

	if (rec->rclass == DNS_CLASS_IN && rec->type == CORDON_DNS_TYPE_A) {
		if (rec->rdlength != 4)
			return -EINVAL;
		rr->addr.family = AF_INET;
		memcpy(rr->addr.u.bytes, buf + rec->rdata_offset, 4);
	} else if (rec->rclass == DNS_CLASS_IN && rec->type == CORDON_DNS_TYPE_AAAA) {
		if (rec->rdlength != 16)
			return -EINVAL;
		rr->addr.family = AF_INET6;
		memcpy(rr->addr.u.bytes, buf + rec->rdata_offset, 16);
	}

	/* Checked here so that whatever parses can also be filtered. */
	layout = dns_rdata_layout(rec->type);
	if (layout) {
		r = dns_rdata_walk(buf, len, rec, layout, NULL);
		if (r < 0)
			return r;
	}
	if (rec->type == CORDON_DNS_TYPE_CNAME) {
		struct wire_name target;
		size_t pos = rec->rdata_offset;

		r = dns_name_read(buf, len, &pos, &target);
		if (r < 0)
			return r;
		r = dns_name_to_text(&target, rr->target);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Visit every record after the question, in order, with its section (1-3). */
static int dns_record_next(const uint8_t *buf, size_t len, const uint16_t counts[3], size_t *pos,
			   size_t *visited, struct record *rec, uint16_t *section)
{
	size_t i = *visited;
	int r;

	for (*section = 1; *section <= 3; (*section)++) {
		if (i < counts[*section - 1])
			break;
		i -= counts[*section - 1];
	}
	if (*section > 3)
		return 0;
	r = dns_record_read(buf, len, pos, rec);
	if (r < 0)
		return r;
	(*visited)++;
	return 1;
}

int cordon_dns_parse(const uint8_t *buf, size_t len, struct cordon_dns_msg *msg)
{
	struct wire_name name;
	struct record rec;
	uint16_t counts[3], section;
	size_t pos = DNS_HEADER_LEN, visited = 0;
	bool seen_opt = false;
	int r;

	r = dns_header_read(buf, len, msg);
	if (r < 0)
		return r;
	/* A reply may carry no question (some NOTIMP/FORMERR do); never two. */
	if (msg->qdcount > 1)
		return -EINVAL;
	if ((size_t)msg->ancount + msg->nscount + msg->arcount > CORDON_DNS_MAX_RECORDS)
		return -EMSGSIZE;
	if (msg->qdcount == 1) {
		r = dns_question_read(buf, len, &pos, &msg->question, &name);
		if (r < 0)
			return r;
	}

	counts[0] = msg->ancount;
	counts[1] = msg->nscount;
	counts[2] = msg->arcount;
	while ((r = dns_record_next(buf, len, counts, &pos, &visited, &rec, &section)) > 0) {
		if (rec.type == CORDON_DNS_TYPE_OPT) {
			/* RFC 6891 6.1.1: one, in the additional section, owned by the root. */
			if (section != 3 || seen_opt || rec.name.len != 1)
				return -EINVAL;
			seen_opt = true;
			continue;
		}
		r = dns_rr_fill(buf, len, &rec, section, &msg->rr[msg->n_rr]);
		if (r < 0)
			return r;
		msg->n_rr++;
	}
	/* Bytes after the last record are ignored: the filter never copies them. */
	return r;
}

/* --- replies ---------------------------------------------------------- */

/* Does the query carry a well-formed OPT? Its DO bit, for the reply. */
static bool dns_query_edns(const uint8_t *query, size_t qlen, size_t pos, bool *dnssec_ok)
{
	uint16_t counts[3] = { get16(query + 6), get16(query + 8), get16(query + 10) };
	struct record rec;
	uint16_t section;
	size_t visited = 0;

	if ((size_t)counts[0] + counts[1] + counts[2] > CORDON_DNS_MAX_RECORDS)
		return false;
	while (dns_record_next(query, qlen, counts, &pos, &visited, &rec, &section) > 0) {
		if (rec.type == CORDON_DNS_TYPE_OPT && section == 3 && rec.name.len == 1) {
			*dnssec_ok = (rec.ttl & DNS_EDNS_FLAG_DO) != 0;
			return true;
		}
	}
	return false;
}

ssize_t cordon_dns_build_error(const uint8_t *query, size_t qlen, int rcode, uint8_t *out,
			       size_t cap)
{
	struct cordon_dns_question q;
	struct wire_name name;
	struct writer w = { .buf = out, .cap = cap };
	size_t pos = DNS_HEADER_LEN;
	bool echo, edns = false, dnssec_ok = false;
	uint16_t qflags, flags;
	int r;

	if (rcode < 0 || rcode > 15)
		return -EINVAL;
	if (qlen < DNS_HEADER_LEN)
		return -EINVAL;
	if (qlen > DNS_MESSAGE_MAX)
		return -EMSGSIZE;
	qflags = get16(query + 2);
	r = get16(query + 4) == 1 ? dns_question_read(query, qlen, &pos, &q, &name) : -EINVAL;
	echo = r == 0;
	/*
	 * A query whose question cannot be read still deserves FORMERR (or
	 * NOTIMP, for opcodes without one): the header alone says which.
	 */
	if (!echo && rcode != CORDON_DNS_RCODE_FORMERR && rcode != CORDON_DNS_RCODE_NOTIMP)
		return r;
	if (echo)
		edns = dns_query_edns(query, qlen, pos, &dnssec_ok);

	/* RFC 4035 3.2.2 asks for CD to be copied along with RD and the opcode. */
	flags = DNS_FLAG_QR | (qflags & (DNS_FLAG_OPCODE | DNS_FLAG_RD | DNS_FLAG_CD)) |
		DNS_FLAG_RA;
	put_bytes(&w, query, 2);
	put16(&w, (uint16_t)(flags | rcode));
	put16(&w, echo ? 1 : 0);
	put16(&w, 0);
	put16(&w, 0);
	put16(&w, edns ? 1 : 0);
	if (echo) {
		/* Byte for byte, so that a client randomising case sees its own. */
		put_name(&w, &name, false);
		put_bytes(&w, query + pos - 4, 4);
	}
	if (edns) {
		/* RFC 6891 7: an OPT in the query asks for one in the reply. */
		put_bytes(&w, (const uint8_t[1]){ 0 }, 1); /* owned by the root */
		put16(&w, CORDON_DNS_TYPE_OPT);
		put16(&w, DNS_EDNS_UDP_PAYLOAD);
		put16(&w, 0); /* extended rcode, version */
		put16(&w, dnssec_ok ? DNS_EDNS_FLAG_DO : 0);
		put16(&w, 0); /* no options */
	}
	if (w.full)
		return -ENOSPC;
	return (ssize_t)w.len;
}

ssize_t cordon_dns_rebuild_query(const uint8_t *query, size_t qlen, uint16_t id, uint8_t *out,
				 size_t cap)
{
	struct cordon_dns_question question, *q = &question;
	struct wire_name name;
	struct writer w = { .buf = out, .cap = cap };
	size_t pos = DNS_HEADER_LEN;
	bool edns, dnssec_ok = false;
	int r;

	if (qlen < DNS_HEADER_LEN)
		return -EINVAL;
	if (qlen > DNS_MESSAGE_MAX)
		return -EMSGSIZE;
	if (get16(query + 4) != 1)
		return -EINVAL;
	r = dns_question_read(query, qlen, &pos, q, &name);
	if (r < 0)
		return r;
	edns = dns_query_edns(query, qlen, pos, &dnssec_ok);

	put16(&w, id);
	put16(&w, (uint16_t)(get16(query + 2) & DNS_FLAG_RD));
	put16(&w, 1);
	put16(&w, 0);
	put16(&w, 0);
	put16(&w, edns ? 1 : 0);
	/* The name again from its text form: labels as parsed, lower case. */
	for (const char *l = q->name; *l;) {
		size_t n = strcspn(l, ".");
		uint8_t len = (uint8_t)n;

		if (n == 0 || n > 63)
			return -EINVAL;
		put_bytes(&w, &len, 1);
		put_bytes(&w, l, n);
		l += n;
		if (*l == '.')
			l++;
	}
	put_bytes(&w, (const uint8_t[1]){ 0 }, 1);
	put16(&w, q->qtype);
	put16(&w, q->qclass);
	if (edns) {
		put_bytes(&w, (const uint8_t[1]){ 0 }, 1); /* owned by the root */
		put16(&w, CORDON_DNS_TYPE_OPT);
		put16(&w, DNS_EDNS_UDP_PAYLOAD);
		put16(&w, 0); /* extended rcode, version */
		put16(&w, 0); /* no flags: DO is not the client's to set upstream */
		put16(&w, 0); /* no options */
	}
	if (w.full)
		return -ENOSPC;
	return (ssize_t)w.len;
}

/* --- chains and filtering --------------------------------------------- */

static const char *dns_cname_target(const struct cordon_dns_msg *msg, const char *owner)
{
	for (size_t i = 0; i < msg->n_rr; i++) {
		const struct cordon_dns_rr *rr = &msg->rr[i];

		if (rr->section == 1 && rr->type == CORDON_DNS_TYPE_CNAME &&
		    rr->rclass == DNS_CLASS_IN && strcmp(rr->name, owner) == 0)
			return rr->target;
	}
	return NULL;
}

static bool dns_chain_has(const char *const *chain, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(chain[i], name) == 0)
			return true;
	return false;
}

size_t cordon_dns_chain_addrs(const struct cordon_dns_msg *msg, size_t *idx, size_t cap)
{
	const char *chain[DNS_CHAIN_LINKS_MAX + 1];
	size_t n_chain = 0, n = 0;

	if (msg->qdcount != 1)
		return 0;
	chain[n_chain++] = msg->question.name;
	while (n_chain <= DNS_CHAIN_LINKS_MAX) {
		const char *next = dns_cname_target(msg, chain[n_chain - 1]);

		if (!next || dns_chain_has(chain, n_chain, next))
			break;
		chain[n_chain++] = next;
	}

	for (size_t i = 0; i < msg->n_rr && n < cap; i++) {
		const struct cordon_dns_rr *rr = &msg->rr[i];

		if (rr->section != 1 || rr->rclass != DNS_CLASS_IN ||
		    (rr->type != CORDON_DNS_TYPE_A && rr->type != CORDON_DNS_TYPE_AAAA))
			continue;
		if (dns_chain_has(chain, n_chain, rr->name))
			idx[n++] = i;
	}
	return n;
}

/* Dropped whatever the caller asked: see the top of this file. */
static bool dns_record_always_dropped(const uint8_t *buf, const struct record *rec)
{
	switch (rec->type) {
	case CORDON_DNS_TYPE_SVCB:
	case CORDON_DNS_TYPE_HTTPS:
	case DNS_TYPE_SIG:
	case DNS_TYPE_NXT:
		return true;
	case DNS_TYPE_RRSIG: {
		uint16_t covered;

		if (rec->rdlength < 2)
			return false;
		covered = get16(buf + rec->rdata_offset);
		return covered == CORDON_DNS_TYPE_SVCB || covered == CORDON_DNS_TYPE_HTTPS;
	}
	default:
		return false;
	}
}

static void dns_record_write(struct writer *w, const uint8_t *buf, size_t len,
			     const struct record *rec)
{
	const struct rdata_layout *layout = dns_rdata_layout(rec->type);
	size_t rdlength_at;

	put_name(w, &rec->name, true);
	put_bytes(w, buf + rec->fixed_offset, DNS_RR_FIXED_LEN - 2);
	rdlength_at = w->len;
	put16(w, 0);
	if (!layout)
		put_bytes(w, buf + rec->rdata_offset, rec->rdlength);
	else if (dns_rdata_walk(buf, len, rec, layout, w) < 0)
		w->full = true; /* cannot happen after a successful parse */
	if (w->full)
		return;
	/* Below 65535: the whole message is no longer than the original. */
	w->buf[rdlength_at] = (uint8_t)((w->len - rdlength_at - 2) >> 8);
	w->buf[rdlength_at + 1] = (uint8_t)(w->len - rdlength_at - 2);
}

ssize_t cordon_dns_filter(uint8_t *buf, size_t len, const struct cordon_dns_msg *msg,
			  const bool *keep)
{
	_cleanup_free_ uint8_t *out = NULL;
	struct writer writer = { 0 }, *w = &writer;
	struct wire_name name;
	struct record rec;
	uint16_t counts[3], kept[3] = { 0 }, section;
	size_t pos = DNS_HEADER_LEN, visited = 0, j = 0, opt_reserve = 0;
	bool truncated = false;
	int r;

	if (len < DNS_HEADER_LEN || len > DNS_MESSAGE_MAX)
		return -EINVAL;
	counts[0] = get16(buf + 6);
	counts[1] = get16(buf + 8);
	counts[2] = get16(buf + 10);
	/* msg must describe this very buffer; the walk below checks each record. */
	if (get16(buf) != msg->id || get16(buf + 4) != msg->qdcount || msg->qdcount > 1 ||
	    counts[0] != msg->ancount || counts[1] != msg->nscount || counts[2] != msg->arcount ||
	    (size_t)counts[0] + counts[1] + counts[2] > CORDON_DNS_MAX_RECORDS)
		return -EINVAL;

	out = malloc(len);
	if (!out)
		return -ENOMEM;
	w->buf = out;
	w->cap = len;

	put_bytes(w, buf, 4);
	put16(w, msg->qdcount);
	put_bytes(w, (const uint8_t[6]){ 0 }, 6);
	if (msg->qdcount == 1) {
		r = dns_name_read(buf, len, &pos, &name);
		if (r < 0 || len - pos < 4)
			return -EINVAL;
		put_name(w, &name, true);
		put_bytes(w, buf + pos, 4);
		pos += 4;
	}
	if (w->full)
		return -EINVAL;

	/* First walk: find the OPT record, whose room is kept free throughout. */
	{
		size_t p = pos, v = 0;

		while ((r = dns_record_next(buf, len, counts, &p, &v, &rec, &section)) > 0)
			if (rec.type == CORDON_DNS_TYPE_OPT)
				opt_reserve = 1 + (rec.end - rec.fixed_offset);
		if (r < 0)
			return -EINVAL;
	}

	while ((r = dns_record_next(buf, len, counts, &pos, &visited, &rec, &section)) > 0) {
		size_t mark = w->len, dict_mark = w->n_dict;
		const struct cordon_dns_rr *rr;
		size_t i;

		if (rec.type == CORDON_DNS_TYPE_OPT) {
			/* As it is, with its owner (the root) written out. */
			put_bytes(w, (const uint8_t[1]){ 0 }, 1);
			put_bytes(w, buf + rec.fixed_offset, rec.end - rec.fixed_offset);
			if (w->full)
				return -EINVAL; /* its room was reserved */
			opt_reserve = 0;
			kept[section - 1]++;
			continue;
		}

		i = j++;
		if (i >= msg->n_rr)
			return -EINVAL;
		rr = &msg->rr[i];
		if (rr->offset != rec.offset || rr->length != rec.end - rec.offset ||
		    rr->type != rec.type || rr->section != section)
			return -EINVAL;
		if (truncated || dns_record_always_dropped(buf, &rec) || (keep && !keep[i]))
			continue;

		dns_record_write(w, buf, len, &rec);
		if (w->full || len - w->len < opt_reserve) {
			/* Does not fit: this and every later record stay out. */
			w->len = mark;
			w->n_dict = dict_mark;
			w->full = false;
			truncated = true;
			continue;
		}
		kept[section - 1]++;
	}
	if (r < 0 || j != msg->n_rr)
		return -EINVAL;

	for (size_t s = 0; s < 3; s++) {
		out[6 + 2 * s] = (uint8_t)(kept[s] >> 8);
		out[7 + 2 * s] = (uint8_t)kept[s];
	}
	memcpy(buf, out, w->len);
	if (truncated)
		cordon_dns_set_tc(buf, w->len, true);
	return (ssize_t)w->len;
}

void cordon_dns_set_tc(uint8_t *buf, size_t len, bool tc)
{
	if (len < DNS_HEADER_LEN)
		return;
	if (tc)
		buf[2] |= DNS_FLAG_TC >> 8;
	else
		buf[2] &= (uint8_t) ~(DNS_FLAG_TC >> 8);
}
