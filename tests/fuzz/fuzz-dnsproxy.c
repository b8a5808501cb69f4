// SPDX-License-Identifier: Apache-2.0
/*
 * Fuzz target for the DNS proxy as its process runs it: the workload's
 * side as byte streams and datagrams, with the events that come between
 * them, over real sockets in a network namespace of the harness's own
 * (unshared at start, a user namespace too when not root: nothing leaves
 * the process's private loopback).
 *
 * The input is a script. Its first byte sets the proxy up (served as
 * cordon_dnsproxy_serve serves it, over a channel whose other end the
 * harness holds as the supervisor, or through the library's callbacks
 * with admits answered inside the callback; rate, in-flight and address
 * limits; one or two upstreams; the order a batch is handled in). Each
 * further byte is an operation, followed by its operands:
 *
 *   TCP clients   connect (own or a foreign source address), queue a
 *                 well-formed framed query or raw bytes (partial length
 *                 prefixes, pipelined queries, garbage), send some of
 *                 what is queued, read some or none of the replies (the
 *                 proxy's send queue backs up: the sockets are small),
 *                 reset (SO_LINGER {1, 0}), half-close, close
 *   UDP clients   a datagram from the own or a foreign address; read
 *   upstream      the harness plays the upstream resolvers (UDP and TCP
 *                 on each address): answer a query it holds with
 *                 records of its choosing, TC, raw bytes, an error, a
 *                 split or closed TCP answer, or nothing; a spoofed
 *                 answer from another port
 *   supervisor    answer an admit (as the supervisor vets it, all
 *                 admitted, verdicts or an error of the input's, fewer
 *                 verdicts, a stale token, a message of the wrong size),
 *                 ask for statistics, hang up; upstream sockets handed
 *                 over on their own channel as the supervisor makes
 *                 them, some refused or answered without one (set-up)
 *   loop          one epoll_wait batch handled exactly as the serve loop
 *                 does (every event, then the tick), with an event of
 *                 the input's added (EPOLLOUT without data, a hang-up on
 *                 a live object), or waited for a deadline (the
 *                 timeouts are a few milliseconds)
 *
 * After the script everything is answered and every client reset, and
 * the loop runs until the proxy is idle. Checked throughout: every reply
 * a client reads parses, answers a query that client sent (its id and
 * question, once), fits 512 bytes over UDP, holds no HTTPS or SVCB
 * record and no address the supervisor did not admit (nor with a TTL
 * longer than admitted), a foreign source hears nothing, a spoofed
 * answer is never used, every message the proxy sends passes
 * cordon_dnsctl_check, its own bookkeeping adds up after each batch
 * (transactions in flight, each client's pending count, nothing dead
 * left after the tick), in-flight returns to zero, and no fd or byte
 * of memory is left (ASan's leak check).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cordon/net.h"
#include "../../src/net/dnsproxy-internal.h"
#include "fuzz.h"

#define CHECK(cond)                                 \
	do {                                        \
		if (!(cond))                        \
			fuzz_fail(#cond, __LINE__); \
	} while (0)

static void fuzz_fail(const char *what, int line)
{
	fprintf(stderr, "fuzz-dnsproxy.c:%d: invariant failed: %s%s%s\n", line, what,
		fuzz_current_input ? " on " : "", fuzz_current_input ? fuzz_current_input : "");
	abort();
}

/* CORDON_FUZZ_TRACE=1: what each input does, on stderr (to read a crasher by). */
static bool tracing;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz-dnsproxy: %s: %s\n", what, strerror(errno));
	abort();
}

/* --- the input ------------------------------------------------------------------ */

static const uint8_t *in_data;
static size_t in_size, in_off;

static uint8_t byte(void)
{
	return in_off < in_size ? in_data[in_off++] : 0;
}

static uint16_t word(void)
{
	uint16_t hi = byte();

	return (uint16_t)(hi << 8 | byte());
}

/* --- the world, made once -------------------------------------------------------- */

#define TIMEOUT_MS 4	  /* upstream attempts and admits */
#define WAIT_BUDGET_MS 16 /* of waiting for deadlines, per input */

static const char *const allow_text = "allowed.test,*.wild.test,10.9.0.0/16,169.254.0.0/16";
static struct cordon_allowlist *allowlist;
static const struct cordon_cidr *allow_cidrs;
static size_t n_allow_cidrs;
/* The supervisor's: the gateway's blocked ranges and a host address of its own. */
static struct cordon_cidr *blocked;
static size_t n_blocked;
static bool have_v6;

/* Only in spoofed answers: never admitted, never in a reply. */
static const uint8_t spoof_marker[4] = { 93, 184, 216, 66 };

static void private_network(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	struct sockaddr_in6 one = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	/* Read before the unshare: inside, unmapped, they read as the overflow ids. */
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	int s;

	if (unshare(CLONE_NEWNET) < 0) {
		char map[64];
		int fd, len;

		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			die("unshare(CLONE_NEWUSER | CLONE_NEWNET)");
		fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "deny", 4) != 4)
				die("setgroups");
			close(fd);
		}
		len = snprintf(map, sizeof(map), "0 %u 1", uid);
		fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, (size_t)len) != len)
			die("uid_map");
		close(fd);
		len = snprintf(map, sizeof(map), "0 %u 1", gid);
		fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, (size_t)len) != len)
			die("gid_map");
		close(fd);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		die("lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		die("lo up");
	close(s);
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	have_v6 = s >= 0 && bind(s, (struct sockaddr *)&one, sizeof(one)) == 0;
	if (s >= 0)
		close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct cordon_error err = { 0 };
	struct cordon_addr host;

	(void)argc;
	(void)argv;
	tracing = getenv("CORDON_FUZZ_TRACE") != NULL;
	private_network();
	allowlist = cordon_allowlist_new();
	if (cordon_allowlist_add(allowlist, allow_text, false, &err) < 0) {
		fprintf(stderr, "fuzz-dnsproxy: %s\n", err.msg);
		abort();
	}
	n_allow_cidrs = cordon_allowlist_cidrs(allowlist, &allow_cidrs);
	if (cordon_addr_parse("93.184.216.34", &host) < 0)
		abort();
	n_blocked = cordon_gateway_blocked(allowlist, &host, 1, &blocked);
	return 0;
}

/* --- sockets ------------------------------------------------------------------------ */

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static void loopback(int family, const char *v4, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		inet_pton(AF_INET, v4, &s4->sin_addr);
		s4->sin_port = htons(port);
	}
}

static uint16_t port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		die("getsockname");
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
						((struct sockaddr_in *)&ss)->sin_port);
}

/* A non-blocking socket bound to the loopback (port 0: any); -1 when the port is taken. */
static int bound(int family, int type, const char *v4, uint16_t port)
{
	struct sockaddr_storage ss;
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	loopback(family, v4, port, &ss);
	if (bind(fd, (struct sockaddr *)&ss, sa_len(&ss)) < 0) {
		if (errno != EADDRINUSE)
			die("bind");
		close(fd);
		return -1;
	}
	if (type == SOCK_STREAM && listen(fd, 64) < 0)
		die("listen");
	return fd;
}

/* Closed with a reset: no TIME_WAIT left behind in the namespace. */
static void reset_close(int *fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (*fd < 0)
		return;
	setsockopt(*fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(*fd);
	*fd = -1;
}

static void plain_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static size_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	if (!d)
		die("/proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* --- DNS messages by hand -------------------------------------------------------------- */

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct buf *m, const void *p, size_t len)
{
	if (m->n + len > m->cap)
		len = m->cap - m->n;
	memcpy(m->b + m->n, p, len);
	m->n += len;
}

static void put8(struct buf *m, uint8_t v)
{
	put(m, &v, 1);
}

static void put16(struct buf *m, uint16_t v)
{
	put8(m, (uint8_t)(v >> 8));
	put8(m, (uint8_t)v);
}

static void put32(struct buf *m, uint32_t v)
{
	put16(m, (uint16_t)(v >> 16));
	put16(m, (uint16_t)v);
}

static void put_name(struct buf *m, const char *name)
{
	while (*name) {
		const char *dot = strchrnul(name, '.');

		put8(m, (uint8_t)(dot - name));
		put(m, name, (size_t)(dot - name));
		name = *dot ? dot + 1 : dot;
	}
	put8(m, 0);
}

static const char *const query_names[] = {
	"allowed.test",	 "ALLOWED.Test",
	"a.wild.test",	 "b.wild.test",
	"x.y.wild.test", "denied.test",
	"wild.test",	 "a\\b.wild.test",
	"a b.wild.test", "",
	"c1.cdn.test",	 "allowed.test.denied.test",
};

static const uint16_t query_types[] = { CORDON_DNS_TYPE_A,     CORDON_DNS_TYPE_AAAA,
					CORDON_DNS_TYPE_CNAME, 16 /* TXT */,
					CORDON_DNS_TYPE_HTTPS, 255 /* ANY */ };

/* A client's query, its shape the input's: mostly well formed, sometimes not quite. */
static size_t build_query(uint8_t *out, size_t cap)
{
	struct buf m = { out, 0, cap };
	uint16_t id = word();
	uint8_t f = byte(), sel = byte();
	uint16_t flags = (f & 1) ? 0x0100 : 0;

	if ((f & 0x06) == 0x06)
		flags |= 2 << 11; /* an opcode other than QUERY */
	if (f & 0x80)
		flags |= 0x8000; /* a response: dropped */
	put16(&m, id);
	put16(&m, flags);
	put16(&m, (f & 0x40) ? 2 : 1);
	put16(&m, 0);
	put16(&m, 0);
	put16(&m, (f & 0x20) ? 1 : 0);
	if (f & 0x08) {
		/* A name of the input's own labels, one label below wild.test. */
		uint8_t len = byte() % 64;

		put8(&m, len);
		for (uint8_t i = 0; i < len; i++)
			put8(&m, byte());
		put_name(&m, "wild.test");
	} else {
		put_name(&m, query_names[(sel & 0x0f) % ARRAY_SIZE(query_names)]);
	}
	put16(&m, query_types[(sel >> 4) % ARRAY_SIZE(query_types)]);
	put16(&m, (f & 0x10) ? 3 /* CH */ : CORDON_DNS_CLASS_IN);
	if (f & 0x40) {
		put_name(&m, "allowed.test");
		put16(&m, CORDON_DNS_TYPE_A);
		put16(&m, CORDON_DNS_CLASS_IN);
	}
	if (f & 0x20) {
		/* OPT with a cookie option the upstream must never see */
		put8(&m, 0);
		put16(&m, CORDON_DNS_TYPE_OPT);
		put16(&m, 4096);
		put32(&m, 0);
		put16(&m, 12);
		put16(&m, 10);
		put16(&m, 8);
		put32(&m, 0x636f7264);
		put32(&m, 0x6f6e2121);
	}
	return m.n;
}

/* --- queries a client sent, that a reply may answer ----------------------------------- */

#define MAX_IDS 256

static struct cordon_dns_msg scratch; /* large: one parse at a time */

struct asked {
	struct {
		uint16_t id;
		bool named;
		char name[CORDON_DNS_NAME_MAX];
	} v[MAX_IDS];
	size_t n;
	bool overflow; /* too many to follow: replies are parsed, not matched */
};

/* A query as the proxy will see it: noted if the proxy may answer it. */
static void note_query(struct asked *a, const uint8_t *q, size_t len)
{
	if (len < 12 || (q[2] & 0x80))
		return; /* dropped unanswered */
	if (a->n == MAX_IDS) {
		a->overflow = true;
		return;
	}
	a->v[a->n].id = (uint16_t)(q[0] << 8 | q[1]);
	a->v[a->n].named = cordon_dns_parse_question(q, len, &scratch) == 0 && scratch.qdcount == 1;
	if (a->v[a->n].named)
		memcpy(a->v[a->n].name, scratch.question.name, sizeof(scratch.question.name));
	a->n++;
}

/* --- what the supervisor admitted ------------------------------------------------------- */

#define MAX_ADMITS 64
#define MAX_ADMITTED 256

struct admit {
	uint32_t token;
	size_t n;
	struct cordon_addr addrs[CORDON_DNS_ADMIT_MAX];
	char name[256];
	uint32_t ttl_s;
};

static struct {
	struct admit v[MAX_ADMITS];
	size_t n;
	size_t next_new; /* the first one not answered by the closing sweep */
} admits;

static struct {
	struct cordon_addr a;
	uint32_t ttl_s;
} admitted[MAX_ADMITTED];
static size_t n_admitted;

static bool same_addr(const struct cordon_addr *a, const struct cordon_addr *b)
{
	return a->family == b->family &&
	       memcmp(a->u.bytes, b->u.bytes, a->family == AF_INET6 ? 16 : 4) == 0;
}

static void note_admitted(const struct cordon_addr *a, uint32_t ttl_s)
{
	for (size_t i = 0; i < n_admitted; i++) {
		if (same_addr(&admitted[i].a, a)) {
			if (ttl_s > admitted[i].ttl_s)
				admitted[i].ttl_s = ttl_s;
			return;
		}
	}
	CHECK(n_admitted < MAX_ADMITTED);
	admitted[n_admitted].a = *a;
	admitted[n_admitted++].ttl_s = ttl_s;
}

static const uint32_t *admitted_ttl(const struct cordon_addr *a)
{
	for (size_t i = 0; i < n_admitted; i++)
		if (same_addr(&admitted[i].a, a))
			return &admitted[i].ttl_s;
	return NULL;
}

static struct admit *admit_by_token(uint32_t token)
{
	for (size_t i = 0; i < admits.n; i++)
		if (admits.v[i].token == token)
			return &admits.v[i];
	return NULL;
}

/* An admit as the proxy asked for it: only what its own vetting passed, for a listed name. */
static void note_admit(uint32_t token, const char *name, const struct cordon_addr *addrs, size_t n,
		       uint32_t ttl_s, size_t max_addrs)
{
	struct admit *a;

	trace("  admit %u '%s' %zu addresses", token, name, n);
	CHECK(n >= 1 && n <= max_addrs);
	CHECK(!admit_by_token(token));
	for (size_t i = 0; i < n; i++) {
		CHECK(cordon_addr_vet(&addrs[i], allow_cidrs, n_allow_cidrs) == CORDON_VET_OK);
		CHECK(addrs[i].family != AF_INET || memcmp(addrs[i].u.bytes, spoof_marker, 4) != 0);
	}
	/* An escaped name (a byte the report cannot carry) may no longer match. */
	if (!strchr(name, '\\'))
		CHECK(cordon_allowlist_match_name(allowlist, name));
	CHECK(ttl_s >= CORDON_DNS_TTL_FLOOR_S && ttl_s <= CORDON_DNS_TTL_CEILING_S);
	if (admits.n == MAX_ADMITS) {
		memmove(&admits.v[0], &admits.v[1], (MAX_ADMITS - 1) * sizeof(admits.v[0]));
		admits.n--;
		if (admits.next_new)
			admits.next_new--;
	}
	a = &admits.v[admits.n++];
	a->token = token;
	a->n = n;
	memcpy(a->addrs, addrs, n * sizeof(*addrs));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->ttl_s = ttl_s;
}

/*
 * The answer the proxy will act on: error 0 and a verdict per address
 * admits each address whose verdict is OK (a missing verdict admits
 * nothing). Noted whether or not the proxy still waits: the supervisor
 * put them in the sets either way.
 */
static void note_answer(uint32_t token, int error, const enum cordon_vet *v, size_t n)
{
	const struct admit *a = admit_by_token(token);

	trace("  answer %u%s: error %d, %zu verdicts", token, a ? "" : " (unknown)", error,
	      v ? n : 0);
	if (!a || error != 0 || !v)
		return;
	for (size_t i = 0; i < a->n && i < n; i++)
		if (v[i] == CORDON_VET_OK)
			note_admitted(&a->addrs[i], a->ttl_s);
}

/* --- one run's state -------------------------------------------------------------------- */

#define MAX_CLIENTS 24
#define FRAME_MAX (2 + 65535)

struct client {
	int fd;
	int family;
	bool foreign;
	uint8_t pend[8192]; /* queued, not yet sent */
	size_t pend_len;
	uint8_t frame[FRAME_MAX]; /* the sent stream, framed as the proxy frames it */
	size_t frame_len;
	uint8_t in[FRAME_MAX]; /* replies read, not yet whole */
	size_t in_len;
	struct asked asked;
};

enum { UDP_V4, UDP_V6, UDP_FOREIGN, N_UDP_CLIENTS };

struct udp_client {
	int fd;
	int family;
	bool foreign;
	struct asked asked;
};

#define MAX_UP_CONNS 8
#define MAX_UP_QUERIES 32

struct up_conn {
	int fd;
	int up; /* which upstream */
	uint8_t in[2 + 512];
	size_t in_len;
	uint8_t out[2 + 65535];
	size_t out_len;
};

struct up_query {
	int up;
	int conn; /* -1: over UDP */
	struct sockaddr_storage from;
	socklen_t from_len;
	uint8_t q[512];
	size_t len;
};

static struct {
	uint8_t cfg_flags;
	bool serve_mode, reverse;
	struct dp_serve serve;
	struct cordon_dnsproxy *p;
	int epfd;   /* the proxy's loop */
	int sup;    /* the supervisor's end of the channel */
	bool ended; /* the loop ended: the supervisor hung up */
	size_t max_addrs;
	int waited_ms;
	struct sockaddr_storage listen_udp[2], listen_tcp[2]; /* v4, v6 */
	struct sockaddr_storage upstreams[2];
	size_t n_upstreams;
	int up_udp[2], up_tcp[2], spoof;
	size_t n_conns;
	struct up_query qs[MAX_UP_QUERIES];
	size_t n_qs;
	struct client *clients[MAX_CLIENTS];
	size_t n_clients;
	unsigned stats_asked, stats_got;
	/* Large, set up as they are used: not cleared between runs. */
	struct udp_client udp[N_UDP_CLIENTS];
	struct up_conn conns[MAX_UP_CONNS];
} r;

static struct client client_pool[MAX_CLIENTS];

/* --- the proxy's own bookkeeping ----------------------------------------------------- */

static bool client_listed(const struct cordon_dnsproxy *p, const struct tcp_client *c)
{
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i] == c)
			return true;
	return false;
}

static void check_proxy(bool after_tick)
{
	const struct cordon_dnsproxy *p = r.p;
	unsigned live = 0;

	for (const struct txn *t = p->txns; t; t = t->next) {
		CHECK(!t->dead);
		CHECK(++live <= p->cfg.max_inflight);
		CHECK(!t->tcp_client || (!t->tcp_client->dead && client_listed(p, t->tcp_client)));
		CHECK(!t->admitting || (t->fd < 0 && t->answer));
	}
	CHECK(live == p->inflight);
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++) {
		const struct tcp_client *c = p->clients[i];
		unsigned pending = 0;

		if (!c)
			continue;
		CHECK(!c->dead && c->fd >= 0);
		CHECK(c->in_len <= sizeof(c->in));
		CHECK(!c->out || c->out_off <= c->out_len);
		for (const struct txn *t = p->txns; t; t = t->next)
			pending += t->tcp_client == c;
		CHECK(c->pending == pending);
		for (size_t k = i + 1; k < MAX_TCP_CLIENTS; k++)
			CHECK(p->clients[k] != c);
	}
	if (after_tick)
		CHECK(!p->dead_clients && !p->dead_txns);
}

/* --- the supervisor --------------------------------------------------------------------- */

static void sup_send(const void *m, size_t len)
{
	if (r.sup >= 0)
		(void)!send(r.sup, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* One message the proxy sent, checked. */
static void sup_message(const struct cordon_dnsctl_msg *m)
{
	struct cordon_addr addrs[CORDON_DNS_ADMIT_MAX];

	switch (m->type) {
	case CORDON_DNSCTL_READY:
	case CORDON_DNSCTL_FAILED:
		CHECK(!"READY or FAILED while serving");
		break;
	case CORDON_DNSCTL_ADMIT:
		for (size_t k = 0; k < m->n_addrs; k++)
			cordon_dnsctl_addr_get(&m->addrs[k], &addrs[k]);
		note_admit(m->token, m->name, addrs, m->n_addrs, m->ttl_s, r.max_addrs);
		break;
	case CORDON_DNSCTL_EVENT:
		for (size_t k = 0; k < m->n_addrs; k++)
			CHECK(m->addrs[k].family != AF_INET ||
			      memcmp(m->addrs[k].bytes, spoof_marker, 4) != 0);
		break;
	case CORDON_DNSCTL_STATS:
		CHECK(r.stats_got < r.stats_asked);
		r.stats_got++;
		CHECK(m->stats.queries >= m->stats.allowed + m->stats.denied);
		break;
	}
}

/* Every datagram the proxy sent, checked as the supervisor checks it (EVENTs come together). */
static void sup_read(void)
{
	static struct cordon_dnsctl_msg d[CORDON_DNSCTL_EVENTS_MAX];

	for (int i = 0; r.serve_mode && r.sup >= 0 && i < 4096; i++) {
		ssize_t n = recv(r.sup, d, sizeof(d), MSG_DONTWAIT | MSG_TRUNC);
		const char *why = NULL;
		int count;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		CHECK(n > 0); /* the proxy never hangs up while the harness holds it */
		count = cordon_dnsctl_check_datagram(d, (size_t)n, &why);
		if (count < 0) {
			fprintf(stderr, "fuzz-dnsproxy: the proxy broke its protocol: %s\n", why);
			CHECK(!"every datagram of the proxy's passes cordon_dnsctl_check_datagram");
		}
		for (int k = 0; k < count; k++)
			sup_message(&d[k]);
	}
}

static const int errors[] = { -ENOSPC, -E2BIG, -ENFILE, -EIO, -ETIMEDOUT, -EPERM, 5, INT_MIN };

/*
 * Answer the admit of token (known or not): how says in which way. In
 * serve mode as an ADMITTED message over the channel, read the way the
 * proxy's loop reads it (at most 16 verdicts, an unknown verdict a
 * refusal, a positive error -EIO); else by the call.
 */
static void answer(uint32_t token, uint8_t how, bool from_input)
{
	static struct cordon_dnsctl_msg m;
	const struct admit *a = admit_by_token(token);
	enum cordon_vet v[CORDON_DNS_ADMIT_MAX] = { 0 };
	size_t n = a ? a->n : 0, wire_n = n;
	uint8_t wire_why[CORDON_DNS_ADMIT_MAX] = { 0 };
	int error = 0;
	size_t len = sizeof(m);
	bool null_verdicts = false;

	switch (how % 6) {
	case 0: /* as the supervisor vets them */
		if (a)
			cordon_dnsctl_vet_admit(allowlist, blocked, n_blocked, a->name, a->addrs, n,
						v);
		break;
	case 1: /* all admitted */
		break;
	case 2: /* the input's verdicts, and how many */
		wire_n = from_input ? byte() : n;
		if (!r.serve_mode)
			wire_n %= CORDON_DNS_ADMIT_MAX + 1;
		for (size_t i = 0; i < CORDON_DNS_ADMIT_MAX; i++) {
			uint8_t x = from_input ? byte() : 0;

			wire_why[i] = r.serve_mode ? (x % 4 ? x % CORDON_VET_COUNT : x) :
						     (uint8_t)(x % CORDON_VET_COUNT);
			v[i] = wire_why[i] < CORDON_VET_COUNT ? (enum cordon_vet)wire_why[i] :
								CORDON_VET_BLOCKED;
		}
		break;
	case 3: /* an error */
		error = errors[(from_input ? byte() : 0) % ARRAY_SIZE(errors)];
		if (!r.serve_mode && error > 0)
			error = -error;
		break;
	case 4: /* no verdicts at all */
		wire_n = 0;
		null_verdicts = true;
		break;
	case 5: /* one verdict short */
		wire_n = n ? n - 1 : 0;
		break;
	}
	if (how % 6 != 2)
		for (size_t i = 0; i < CORDON_DNS_ADMIT_MAX; i++)
			wire_why[i] = (uint8_t)v[i];
	if (r.serve_mode) {
		memset(&m, 0, sizeof(m));
		m.type = CORDON_DNSCTL_ADMITTED;
		m.token = token;
		m.error = error;
		m.n_addrs = (uint8_t)wire_n;
		for (size_t i = 0; i < CORDON_DNS_ADMIT_MAX; i++) {
			if (a && i < a->n)
				cordon_dnsctl_addr_put(&a->addrs[i], CORDON_VET_OK, &m.addrs[i]);
			m.addrs[i].why = wire_why[i];
		}
		if (from_input && (how & 0x40)) {
			/* Not a message the proxy takes: a wrong size or type. */
			len = (how & 0x80) ? sizeof(m) - 1 - (size_t)(byte() % 8) :
					     sizeof(m) + 1 + (size_t)(byte() % 8);
			if (how & 0x20) {
				len = sizeof(m);
				m.type = byte();
				if (m.type == CORDON_DNSCTL_ADMITTED ||
				    m.type == CORDON_DNSCTL_STATS || m.type == CORDON_DNSCTL_POLICY)
					m.type = 0;
			}
		}
		if (len == sizeof(m) && m.type == CORDON_DNSCTL_ADMITTED)
			note_answer(token, error > 0 ? -EIO : error, v,
				    wire_n < CORDON_DNS_ADMIT_MAX ? wire_n : CORDON_DNS_ADMIT_MAX);
		if (len <= sizeof(m)) {
			sup_send(&m, len);
		} else {
			static uint8_t big[sizeof(m) + 16];

			memset(big, 0, sizeof(big));
			memcpy(big, &m, sizeof(m));
			sup_send(big, len);
		}
		return;
	}
	note_answer(token, error, null_verdicts ? NULL : v, wire_n);
	cordon_dnsproxy_admitted(r.p, token, error, null_verdicts ? NULL : v, wire_n);
}

/* Which admit the input names: one the proxy asked for, or one it never gave out. */
static uint32_t pick_token(void)
{
	uint8_t pick = byte();

	if (admits.n && pick % 4)
		return admits.v[pick % admits.n].token;
	/*
	 * Never one the proxy may give out later in the run (it counts up
	 * from 1): a supervisor answers only what it was asked, at worst late.
	 */
	return 0x80000000u | (pick % 4 == 1 ? (uint32_t)byte() : (uint32_t)word() << 16 | word());
}

/* --- the proxy, driven ------------------------------------------------------------------- */

/* The library's callbacks, when not served over the channel: the supervisor in process. */
static int direct_admit(void *opaque, const struct cordon_dns_admit *req)
{
	(void)opaque;
	note_admit(req->token, req->name, req->addrs, req->n, req->ttl_s, r.max_addrs);
	if ((r.cfg_flags & 0x80) && (byte() & 1))
		return -EAGAIN; /* could not ask */
	if (r.cfg_flags & 0x40) {
		uint8_t how = byte();

		if (how & 1) /* answered inside the call, as the API allows */
			answer(req->token, how >> 1, true);
	}
	return 0;
}

static void direct_event(void *opaque, const struct cordon_dns_event *ev)
{
	(void)opaque;
	CHECK(ev->name && ev->n_added <= CORDON_DNS_ADMIT_MAX);
	CHECK(ev->rcode >= 0 && ev->rcode <= 15);
	for (size_t i = 0; i < ev->n_refused; i++)
		CHECK(ev->refused_why[i] != CORDON_VET_OK && ev->refused_why[i] < CORDON_VET_COUNT);
}

/* One batch handled as the serve loop handles it: every event, then the tick. */
static void dispatch(struct epoll_event *evs, int n)
{
	if (r.reverse)
		for (int i = 0; i < n / 2; i++) {
			struct epoll_event t = evs[i];

			evs[i] = evs[n - 1 - i];
			evs[n - 1 - i] = t;
		}
	if (r.serve_mode) {
		int ret = dp_serve_dispatch(&r.serve, evs, n);

		trace("  dispatch: %d", ret);

		CHECK(ret == 0 || (ret == 1 && r.sup < 0));
		if (ret == 1)
			r.ended = true;
	} else {
		/* 0 for an object closed earlier in the batch: no longer the proxy's. */
		for (int i = 0; i < n; i++)
			CHECK(cordon_dnsproxy_handle(r.p, evs[i].data.ptr, evs[i].events) <= 1);
		cordon_dnsproxy_tick(r.p);
	}
	check_proxy(true);
}

static void drive(int timeout_ms)
{
	struct epoll_event evs[32];
	int n;

	if (r.ended)
		return;
	n = epoll_wait(r.epfd, evs, ARRAY_SIZE(evs), timeout_ms);
	dispatch(evs, n < 0 ? 0 : n);
}

/* Until the proxy's next deadline, cap_ms at most. */
static int next_deadline(int cap_ms)
{
	int t = r.ended ? 0 : cordon_dnsproxy_timeout_ms(r.p);

	return t < 0 || t > cap_ms ? cap_ms : t;
}

/* Wait for the proxy's next deadline, within the input's budget. */
static void wait_deadline(int cap_ms)
{
	int t;

	if (r.ended)
		return;
	t = next_deadline(cap_ms);
	if (r.waited_ms + t > WAIT_BUDGET_MS)
		t = WAIT_BUDGET_MS - r.waited_ms;
	if (t < 0)
		t = 0;
	r.waited_ms += t;
	drive(t);
}

static const uint32_t spurious_masks[] = {
	EPOLLOUT, EPOLLIN, EPOLLIN | EPOLLOUT, EPOLLHUP, EPOLLERR | EPOLLIN, EPOLLIN | EPOLLRDHUP,
};

/* A batch with one event of the input's added: what epoll could say of a live object. */
static void drive_spurious(void)
{
	struct epoll_event evs[33];
	struct cordon_dnsproxy *p = r.p;
	void *tags[MAX_TCP_CLIENTS + 2 * CORDON_DNSPROXY_MAX_LISTENERS +
		   CORDON_DNSPROXY_MAX_UPSTREAMS * UDP_POOL + 64 + 1];
	size_t n_tags = 0;
	uint8_t which = byte(), mask = byte(), at = byte();
	int n;

	if (r.ended)
		return;
	for (size_t i = 0; i < MAX_TCP_CLIENTS; i++)
		if (p->clients[i])
			tags[n_tags++] = &p->clients[i]->tag;
	/* A transaction is on epoll only while it has an upstream TCP socket. */
	for (struct txn *t = p->txns; t && n_tags < 64 + MAX_TCP_CLIENTS; t = t->next)
		if (t->fd >= 0)
			tags[n_tags++] = &t->tag;
	for (size_t i = 0; i < p->n_udp; i++)
		tags[n_tags++] = &p->udp[i].tag;
	for (size_t i = 0; i < p->n_tcp; i++)
		tags[n_tags++] = &p->tcp[i].tag;
	for (size_t i = 0; i < ARRAY_SIZE(p->pool); i++)
		for (size_t k = 0; k < UDP_POOL; k++)
			if (p->pool[i][k].fd > 0)
				tags[n_tags++] = &p->pool[i][k].tag;
	if (r.serve_mode)
		tags[n_tags++] = &r.serve;
	n = epoll_wait(r.epfd, evs, 32, 0);
	if (n < 0)
		n = 0;
	if (n_tags) {
		int pos = at % (n + 1);

		memmove(&evs[pos + 1], &evs[pos], (size_t)(n - pos) * sizeof(evs[0]));
		evs[pos] = (struct epoll_event){
			.events = spurious_masks[mask % ARRAY_SIZE(spurious_masks)],
			.data.ptr = tags[which % n_tags],
		};
		n++;
	}
	dispatch(evs, n);
}

/* --- clients ------------------------------------------------------------------------------ */

/* The replies a client read, as it would use them. */
static void check_reply(struct asked *asked, const uint8_t *b, size_t len, bool udp)
{
	size_t k;

	CHECK(!udp || len <= 512);
	CHECK(cordon_dns_parse(b, len, &scratch) == 0);
	trace("  reply id %04x rcode %u '%s' %zu records%s", scratch.id, scratch.flags & 0xf,
	      scratch.question.name, scratch.n_rr, udp ? " (udp)" : "");
	CHECK(scratch.flags & 0x8000);
	/*
	 * Ids may repeat: a reply with a question answers a query of that
	 * name, else one whose question did not parse; a reply without
	 * answers one whose question did not parse, else any of that id.
	 */
	for (int pass = 0; pass < 2; pass++) {
		for (k = 0; k < asked->n; k++) {
			bool named = asked->v[k].named;

			if (asked->v[k].id != scratch.id)
				continue;
			if (pass == 0 &&
			    (scratch.qdcount ?
				     named && strcmp(asked->v[k].name, scratch.question.name) == 0 :
				     !named))
				break;
			if (pass == 1 && (!named || !scratch.qdcount))
				break;
		}
		if (k < asked->n)
			break;
	}
	if (!asked->overflow)
		CHECK(k < asked->n); /* a reply to a query of this client, one each */
	if (k < asked->n)
		asked->v[k] = asked->v[--asked->n];
	for (size_t i = 0; i < scratch.n_rr; i++) {
		const struct cordon_dns_rr *rr = &scratch.rr[i];
		const uint32_t *ttl;

		CHECK(rr->type != CORDON_DNS_TYPE_HTTPS && rr->type != CORDON_DNS_TYPE_SVCB);
		if (rr->type != CORDON_DNS_TYPE_A && rr->type != CORDON_DNS_TYPE_AAAA)
			continue;
		CHECK(rr->addr.family != AF_INET || memcmp(rr->addr.u.bytes, spoof_marker, 4) != 0);
		CHECK(cordon_addr_vet(&rr->addr, allow_cidrs, n_allow_cidrs) == CORDON_VET_OK);
		/* In the allow sets, and no longer in the client's cache than there. */
		ttl = admitted_ttl(&rr->addr);
		CHECK(ttl != NULL);
		CHECK(rr->ttl <= *ttl);
	}
}

static struct client *pick_client(void)
{
	uint8_t k = byte();

	if (!r.n_clients)
		return NULL;
	return r.clients[k % r.n_clients];
}

static void client_connect(void)
{
	uint8_t how = byte();
	int family = (how & 1) && have_v6 ? AF_INET6 : AF_INET;
	bool foreign = family == AF_INET && (how & 2);
	struct client *c;
	struct sockaddr_storage src;
	const struct sockaddr_storage *dst = &r.listen_tcp[family == AF_INET6];

	if (r.n_clients == MAX_CLIENTS)
		return;
	c = &client_pool[r.n_clients];
	c->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket");
	c->family = family;
	c->foreign = foreign;
	c->pend_len = c->frame_len = c->in_len = 0;
	c->asked.n = 0;
	c->asked.overflow = false;
	if (how & 4) {
		int small = 2048;

		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	if (foreign) {
		loopback(AF_INET, "127.0.0.2", 0, &src);
		if (bind(c->fd, (struct sockaddr *)&src, sa_len(&src)) < 0)
			die("bind 127.0.0.2");
	}
	if (connect(c->fd, (const struct sockaddr *)dst, sa_len(dst)) < 0 && errno != EINPROGRESS)
		die("connect");
	r.clients[r.n_clients++] = c;
}

static void client_queue(struct client *c, const uint8_t *b, size_t len)
{
	if (len > sizeof(c->pend) - c->pend_len)
		len = sizeof(c->pend) - c->pend_len;
	memcpy(c->pend + c->pend_len, b, len);
	c->pend_len += len;
}

/* Bytes that left: framed the way the proxy frames them, each whole query noted. */
static void client_sent(struct client *c, const uint8_t *b, size_t len)
{
	while (len) {
		size_t want = c->frame_len < 2 ? 2 : 2 + (size_t)(c->frame[0] << 8 | c->frame[1]);
		size_t take = want - c->frame_len < len ? want - c->frame_len : len;

		memcpy(c->frame + c->frame_len, b, take);
		c->frame_len += take;
		b += take;
		len -= take;
		if (c->frame_len >= 2 &&
		    c->frame_len == 2 + (size_t)(c->frame[0] << 8 | c->frame[1])) {
			note_query(&c->asked, c->frame + 2, c->frame_len - 2);
			c->frame_len = 0;
		}
	}
}

static void client_send(struct client *c, size_t max)
{
	ssize_t n;

	if (c->fd < 0 || !c->pend_len)
		return;
	n = send(c->fd, c->pend, max && max < c->pend_len ? max : c->pend_len,
		 MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n <= 0)
		return;
	client_sent(c, c->pend, (size_t)n);
	memmove(c->pend, c->pend + n, c->pend_len - (size_t)n);
	c->pend_len -= (size_t)n;
}

static void client_read(struct client *c, size_t max)
{
	size_t got = 0;

	while (c->fd >= 0 && (!max || got < max)) {
		size_t room = sizeof(c->in) - c->in_len;
		ssize_t n = recv(c->fd, c->in + c->in_len,
				 max && max - got < room ? max - got : room, MSG_DONTWAIT);

		if (n <= 0)
			return;
		/* A foreign source is closed unread, never answered. */
		CHECK(!c->foreign);
		got += (size_t)n;
		c->in_len += (size_t)n;
		while (c->in_len >= 2 && c->in_len >= 2 + (size_t)(c->in[0] << 8 | c->in[1])) {
			size_t len = (size_t)(c->in[0] << 8 | c->in[1]);

			check_reply(&c->asked, c->in + 2, len, false);
			memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
			c->in_len -= 2 + len;
		}
	}
}

static void udp_open(void)
{
	for (int i = 0; i < N_UDP_CLIENTS; i++) {
		struct udp_client *u = &r.udp[i];

		u->family = i == UDP_V6 ? AF_INET6 : AF_INET;
		u->foreign = i == UDP_FOREIGN;
		u->asked.n = 0;
		u->asked.overflow = false;
		u->fd = -1;
		if (u->family == AF_INET6 && !have_v6)
			continue;
		u->fd = bound(u->family, SOCK_DGRAM, u->foreign ? "127.0.0.2" : "127.0.0.1", 0);
		if (u->fd < 0)
			die("udp client");
	}
}

static void udp_send(void)
{
	struct udp_client *u = &r.udp[byte() % N_UDP_CLIENTS];
	uint8_t q[1024] = { 0 }, how = byte();
	size_t len;
	const struct sockaddr_storage *dst;

	if (u->fd < 0)
		return;
	if (how & 1) {
		len = byte();
		for (size_t i = 0; i < len; i++)
			q[i] = byte();
	} else {
		len = build_query(q, sizeof(q));
	}
	dst = &r.listen_udp[u->family == AF_INET6];
	if (sendto(u->fd, q, len, MSG_DONTWAIT, (const struct sockaddr *)dst, sa_len(dst)) ==
	    (ssize_t)len)
		note_query(&u->asked, q, len);
}

static void udp_read(void)
{
	for (int i = 0; i < N_UDP_CLIENTS; i++) {
		struct udp_client *u = &r.udp[i];

		for (int k = 0; u->fd >= 0 && k < 256; k++) {
			uint8_t b[4096];
			ssize_t n = recv(u->fd, b, sizeof(b), MSG_DONTWAIT);

			if (n < 0)
				break;
			CHECK(!u->foreign); /* never answered */
			check_reply(&u->asked, b, (size_t)n, true);
		}
	}
}

/* --- the upstream resolvers --------------------------------------------------------------- */

static const char *const pool4[] = {
	"93.184.216.7", "93.184.216.8",	   "169.254.169.254", "127.0.0.1",
	"10.9.1.2",	"10.1.1.1",	   "169.254.5.5",     "8.8.4.4",
	"0.0.0.0",	"255.255.255.255", "192.168.1.1",     "93.184.216.34",
};
static const char *const pool6[] = {
	"2606:2800:220:1::7", "::1",	     "fe80::1", "::ffff:127.0.0.1",
	"64:ff9b::a9fe:a9fe", "2001:db8::1", "fd00::1", "::ffff:93.184.216.7",
	"2002:a9fe:a9fe::1",  "::",
};
static const uint32_t ttls[] = { 0, 1, 30, 300, 86400, 0x80000001u };
static const char *const owners[] = { "c1.cdn.test", "c2.cdn.test", "other.test" };

static void put_owner(struct buf *m, uint8_t sel, size_t qname_at)
{
	if (sel % 4 == 0)
		put16(m, (uint16_t)(0xc000 | qname_at));
	else
		put_name(m, owners[sel % 4 - 1]);
}

static void put_addr_rr(struct buf *m, bool v6, uint8_t sel, bool marker)
{
	struct cordon_addr a;
	uint8_t raw[16];

	put16(m, v6 ? CORDON_DNS_TYPE_AAAA : CORDON_DNS_TYPE_A);
	put16(m, CORDON_DNS_CLASS_IN);
	put32(m, ttls[byte() % ARRAY_SIZE(ttls)]);
	put16(m, v6 ? 16 : 4);
	if (marker) {
		put(m, spoof_marker, 4);
		return;
	}
	if (sel % 16 == 15) {
		for (size_t i = 0; i < (v6 ? 16u : 4u); i++)
			raw[i] = byte();
		if (!v6 && memcmp(raw, spoof_marker, 4) == 0)
			raw[3] ^= 1;
		put(m, raw, v6 ? 16 : 4);
		return;
	}
	if (v6)
		cordon_addr_parse(pool6[sel % ARRAY_SIZE(pool6)], &a);
	else
		cordon_addr_parse(pool4[sel % ARRAY_SIZE(pool4)], &a);
	put(m, a.u.bytes, v6 ? 16 : 4);
}

/*
 * An answer to q, the upstream query the proxy sent, of the input's
 * making. 0: no answer. marker: a spoofed answer, its one address the
 * marker.
 */
static size_t build_answer(const uint8_t *q, size_t qlen, uint8_t *out, size_t cap, bool tcp,
			   bool marker, uint8_t kind)
{
	struct buf m = { out, 0, cap };
	size_t qend = 12, n_rr = 0, count_at;
	uint16_t flags = 0x8180;

	while (qend < qlen && q[qend])
		qend += 1 + q[qend];
	qend += 1 + 4;
	if (qlen < 12 || qend > qlen)
		return 0;
	if (marker)
		kind = 0;
	switch (kind % 8) {
	case 4: /* truncated: ask again over TCP */
		flags |= 0x0200;
		break;
	case 5: { /* the input's bytes, with the query's id */
		size_t len = byte();

		for (size_t i = 0; i < len; i++)
			put8(&m, byte());
		if (m.n >= 2)
			memcpy(out, q, 2);
		return m.n;
	}
	case 6: /* an error */
		flags |= (uint16_t)(byte() % 6);
		break;
	case 7:
		return 0;
	}
	put(&m, q, 2);
	put16(&m, flags);
	put16(&m, 1);
	count_at = m.n;
	put16(&m, 0);
	put16(&m, 0);
	put16(&m, 0);
	put(&m, q + 12, qend - 12);
	if (marker) {
		put16(&m, 0xc00c);
		put_addr_rr(&m, false, 0, true);
		n_rr = 1;
	}
	for (size_t n = kind % 8 < 4 ? byte() % 13 : 0; n > 0; n--) {
		uint8_t sel = byte(), type = byte();

		if (type % 8 == 7)
			put_name(&m, "unrelated.test");
		else
			put_owner(&m, sel >> 4, 12);
		switch (type % 8) {
		case 0:
		case 1:
			put_addr_rr(&m, false, sel, false);
			break;
		case 2:
			put_addr_rr(&m, true, sel, false);
			break;
		case 3: { /* CNAME on the chain, or off it */
			size_t at;

			put16(&m, CORDON_DNS_TYPE_CNAME);
			put16(&m, CORDON_DNS_CLASS_IN);
			put32(&m, ttls[byte() % ARRAY_SIZE(ttls)]);
			at = m.n;
			put16(&m, 0);
			put_owner(&m, (uint8_t)(type >> 3), 12);
			if (at + 2 <= m.n) { /* else it did not fit, and is not sent */
				out[at] = (uint8_t)((m.n - at - 2) >> 8);
				out[at + 1] = (uint8_t)(m.n - at - 2);
			}
			break;
		}
		case 4: /* HTTPS: priority 1, the root as target, no parameters */
			put16(&m, CORDON_DNS_TYPE_HTTPS);
			put16(&m, CORDON_DNS_CLASS_IN);
			put32(&m, 300);
			put16(&m, 3);
			put16(&m, 1);
			put8(&m, 0);
			break;
		case 5:
		case 6: { /* TXT, up to nearly 64 KiB over TCP: a reply that fills queues */
			size_t len = tcp && (type & 0x80) ? 255u * (1u + byte() % 230u) :
							    1u + byte() % 64u;

			put16(&m, 16);
			put16(&m, CORDON_DNS_CLASS_IN);
			put32(&m, 60);
			put16(&m, (uint16_t)len);
			for (size_t i = 0; i < len; i += 255) {
				size_t s = len - i < 255 ? len - i : 255;

				put8(&m, (uint8_t)(s - 1));
				for (size_t k = 1; k < s; k++)
					put8(&m, 'x');
			}
			break;
		}
		case 7: /* an A record off the chain */
			put_addr_rr(&m, false, sel, false);
			break;
		}
		n_rr++;
	}
	out[count_at] = (uint8_t)(n_rr >> 8);
	out[count_at + 1] = (uint8_t)n_rr;
	if (m.n == m.cap)
		return 0; /* did not fit: not sent */
	return m.n;
}

static void up_open(void)
{
	size_t i = 0;

	r.n_upstreams = (r.cfg_flags & 0x10) ? 2 : 1;
	for (; i < r.n_upstreams; i++) {
		int family = i == 1 && have_v6 ? AF_INET6 : AF_INET;

		/* UDP and TCP on one port, as a resolver listens. */
		do {
			r.up_tcp[i] = bound(family, SOCK_STREAM, "127.0.0.1", 0);
			r.up_udp[i] = bound(family, SOCK_DGRAM, "127.0.0.1", port_of(r.up_tcp[i]));
			if (r.up_udp[i] < 0)
				close(r.up_tcp[i]);
		} while (r.up_udp[i] < 0);
		loopback(family, "127.0.0.1", port_of(r.up_tcp[i]), &r.upstreams[i]);
	}
	for (; i < 2; i++)
		r.up_udp[i] = r.up_tcp[i] = -1;
	r.spoof = bound(AF_INET, SOCK_DGRAM, "127.0.0.1", 0);
	r.n_conns = r.n_qs = 0;
}

static void up_hold(const struct up_query *q)
{
	if (r.n_qs == MAX_UP_QUERIES) {
		memmove(&r.qs[0], &r.qs[1], (MAX_UP_QUERIES - 1) * sizeof(r.qs[0]));
		r.n_qs--;
	}
	r.qs[r.n_qs++] = *q;
}

static void up_conn_close(size_t k, bool reset)
{
	if (reset)
		reset_close(&r.conns[k].fd);
	else
		plain_close(&r.conns[k].fd);
	for (size_t i = 0; i < r.n_qs;) {
		if (r.qs[i].conn == (int)k) {
			memmove(&r.qs[i], &r.qs[i + 1], (--r.n_qs - i) * sizeof(r.qs[0]));
			continue;
		}
		i++;
	}
	/* The last one takes its place, and its queries follow it. */
	r.conns[k] = r.conns[--r.n_conns];
	for (size_t i = 0; i < r.n_qs; i++)
		if (r.qs[i].conn == (int)r.n_conns)
			r.qs[i].conn = (int)k;
}

static void up_conn_flush(struct up_conn *c)
{
	ssize_t n;

	if (!c->out_len)
		return;
	n = send(c->fd, c->out, c->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n > 0) {
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (size_t)n;
	}
}

/* What the proxy sent upstream: every query read and held. */
static void up_collect(void)
{
	struct up_query q;

	for (size_t u = 0; u < r.n_upstreams; u++) {
		for (int k = 0; k < 64; k++) {
			ssize_t n;

			q.from_len = sizeof(q.from);
			n = recvfrom(r.up_udp[u], q.q, sizeof(q.q), MSG_DONTWAIT,
				     (struct sockaddr *)&q.from, &q.from_len);
			if (n < 0)
				break;
			/* cordon's own query: one question, nothing of the client's */
			CHECK(cordon_dns_parse(q.q, (size_t)n, &scratch) == 0);
			CHECK(scratch.qdcount == 1 && scratch.n_rr == 0 && scratch.arcount <= 1);
			q.up = (int)u;
			q.conn = -1;
			q.len = (size_t)n;
			up_hold(&q);
		}
		while (r.n_conns < MAX_UP_CONNS) {
			int fd = accept4(r.up_tcp[u], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd < 0)
				break;
			r.conns[r.n_conns] = (struct up_conn){ .fd = fd, .up = (int)u };
			r.n_conns++;
		}
	}
	for (size_t k = 0; k < r.n_conns;) {
		struct up_conn *c = &r.conns[k];
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			up_conn_close(k, true);
			continue;
		}
		if (n > 0)
			c->in_len += (size_t)n;
		while (c->in_len >= 2) {
			size_t len = (size_t)(c->in[0] << 8 | c->in[1]);

			CHECK(len <= CORDON_DNS_QUERY_MAX);
			if (c->in_len < 2 + len)
				break;
			CHECK(cordon_dns_parse(c->in + 2, len, &scratch) == 0);
			q.up = c->up;
			q.conn = (int)k;
			q.len = len;
			memcpy(q.q, c->in + 2, len);
			up_hold(&q);
			memmove(c->in, c->in + 2 + len, c->in_len - 2 - len);
			c->in_len -= 2 + len;
		}
		up_conn_flush(c);
		k++;
	}
}

static void up_answer_one(size_t i, uint8_t kind, uint8_t tcp_how)
{
	static uint8_t ans[65535];
	struct up_query q = r.qs[i];
	size_t len;

	memmove(&r.qs[i], &r.qs[i + 1], (--r.n_qs - i) * sizeof(r.qs[0]));
	len = build_answer(q.q, q.len, ans, sizeof(ans), q.conn >= 0, false, kind);
	if (q.conn < 0) {
		if (len)
			sendto(r.up_udp[q.up], ans, len, MSG_DONTWAIT, (struct sockaddr *)&q.from,
			       q.from_len);
		return;
	}
	{
		struct up_conn *c = &r.conns[q.conn];
		size_t room = sizeof(c->out) - c->out_len;

		switch (tcp_how % 5) {
		case 3: /* closed without an answer */
			up_conn_close((size_t)q.conn, false);
			return;
		case 4: /* reset */
			up_conn_close((size_t)q.conn, true);
			return;
		}
		if (len && len + 2 <= room) {
			c->out[c->out_len] = (uint8_t)(len >> 8);
			c->out[c->out_len + 1] = (uint8_t)len;
			memcpy(c->out + c->out_len + 2, ans, len);
			c->out_len += len + 2;
		}
		if (tcp_how % 5 == 1) {
			/* only a part now: the rest at the next upstream turn */
			size_t part = c->out_len ? byte() % c->out_len : 0;
			ssize_t n =
				part ? send(c->fd, c->out, part, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;

			if (n > 0) {
				memmove(c->out, c->out + n, c->out_len - (size_t)n);
				c->out_len -= (size_t)n;
			}
			return;
		}
		up_conn_flush(c);
		if (tcp_how % 5 == 2)
			up_conn_close((size_t)q.conn, false);
	}
}

static void up_answer(void)
{
	uint8_t pick = byte(), kind = byte(), tcp_how = byte();

	up_collect();
	/* Counted from the newest: 0 is the query that arrived last. */
	if (r.n_qs)
		up_answer_one(r.n_qs - 1 - pick % r.n_qs, kind, tcp_how);
}

/* An answer from a port that is not the upstream's: the proxy must not take it. */
static void up_spoof(void)
{
	uint8_t ans[512];
	uint8_t pick = byte();
	struct up_query *q;
	size_t len;

	up_collect();
	for (size_t k = 0; k < r.n_qs; k++) {
		q = &r.qs[(pick + k) % r.n_qs];
		if (q->conn >= 0 || q->from.ss_family != AF_INET)
			continue;
		len = build_answer(q->q, q->len, ans, sizeof(ans), false, true, 0);
		if (len)
			sendto(r.spoof, ans, len, MSG_DONTWAIT, (struct sockaddr *)&q->from,
			       q->from_len);
		return;
	}
}

/* --- the supervisor's socket channel ----------------------------------------------------- */

/*
 * In serve mode the proxy makes no socket: it asks the supervisor for
 * each upstream socket and waits for the answer, so the supervisor's end
 * of that channel is answered on a thread of its own. It makes the
 * socket as the supervisor does (connected to the upstream asked for,
 * TCP still connecting), unless the set-up byte says to refuse every
 * third request (0x80) or to answer every fourth without a socket or an
 * error (0x40). Every request must pass cordon_dnsctl_check.
 */
static struct {
	pthread_t thread;
	int fd; /* the supervisor's end; -1: not in use */
	uint8_t policy;
	unsigned asked;
	const char *bad; /* a request the supervisor would refuse, and why */
} sockets = { .fd = -1 };

static void *socket_answers(void *unused)
{
	(void)unused;
	for (;;) {
		struct cordon_dnsctl_msg m, reply;
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		struct iovec iov = { .iov_base = &reply, .iov_len = sizeof(reply) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recv(sockets.fd, &m, sizeof(m), MSG_TRUNC);
		const char *why = NULL;
		unsigned k = sockets.asked++;
		int fd = -1;

		if (n <= 0)
			return NULL; /* the proxy's end is closed: the run is over */
		if (cordon_dnsctl_check(&m, (size_t)n, &why) < 0 ||
		    m.type != CORDON_DNSCTL_SOCKET || m.token >= r.n_upstreams) {
			sockets.bad = why ? why : "not a SOCKET request for a configured upstream";
			return NULL;
		}
		memset(&reply, 0, sizeof(reply));
		reply.type = CORDON_DNSCTL_SOCKET;
		if ((sockets.policy & 0x80) && k % 3 == 2) {
			reply.error = -EMFILE;
		} else if (!((sockets.policy & 0x40) && k % 4 == 1)) {
			const struct sockaddr_storage *up = &r.upstreams[m.token];

			fd = socket(up->ss_family, m.qtype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (fd < 0 || (connect(fd, (const struct sockaddr *)up, sa_len(up)) < 0 &&
				       errno != EINPROGRESS))
				die("an upstream socket");
		}
		if (fd >= 0) {
			struct cmsghdr *c;

			mh.msg_control = control.buf;
			mh.msg_controllen = sizeof(control.buf);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		(void)!sendmsg(sockets.fd, &mh, MSG_NOSIGNAL);
		if (fd >= 0)
			close(fd);
	}
}

/* The channel and its thread; the proxy's end in *proxy_end. */
static void sockets_start(int *proxy_end)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		die("socketpair");
	sockets.fd = sp[0];
	sockets.policy = r.cfg_flags & 0xc0;
	sockets.asked = 0;
	sockets.bad = NULL;
	*proxy_end = sp[1];
	errno = pthread_create(&sockets.thread, NULL, socket_answers, NULL);
	if (errno)
		die("pthread_create");
}

/* After the proxy's end is closed: the thread ends, and said nothing was wrong. */
static void sockets_stop(void)
{
	if (sockets.fd < 0)
		return;
	pthread_join(sockets.thread, NULL);
	plain_close(&sockets.fd);
	if (sockets.bad) {
		fprintf(stderr, "fuzz-dnsproxy: the proxy asked for a socket wrongly: %s\n",
			sockets.bad);
		CHECK(!"every socket request passes cordon_dnsctl_check");
	}
}

/* --- a run --------------------------------------------------------------------------------- */

static void start(void)
{
	static struct cordon_dnsproxy_config cfg;
	struct cordon_error err = { 0 };
	struct cordon_addr clients[2];
	int udp[2], tcp[2], sp[2], small = 4096, sockets_end;
	size_t n_fam = have_v6 ? 2 : 1;

	r.serve_mode = !(r.cfg_flags & 1);
	r.reverse = r.cfg_flags & 0x20;
	r.max_addrs = (r.cfg_flags & 8) ? 2 : CORDON_DNS_ADMIT_MAX;
	for (size_t f = 0; f < n_fam; f++) {
		int family = f ? AF_INET6 : AF_INET;

		udp[f] = bound(family, SOCK_DGRAM, "127.0.0.1", 0);
		tcp[f] = bound(family, SOCK_STREAM, "127.0.0.1", 0);
		if (udp[f] < 0 || tcp[f] < 0)
			die("listener");
		/* Small send buffers (the accepted sockets inherit them): queues back up soon. */
		setsockopt(tcp[f], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		loopback(family, "127.0.0.1", port_of(udp[f]), &r.listen_udp[f]);
		loopback(family, "127.0.0.1", port_of(tcp[f]), &r.listen_tcp[f]);
	}
	up_open();
	udp_open();
	cordon_addr_parse("127.0.0.1", &clients[0]);
	cordon_addr_parse("::1", &clients[1]);
	cfg = (struct cordon_dnsproxy_config){
		.allowlist = allowlist,
		.upstreams = r.upstreams,
		.n_upstreams = r.n_upstreams,
		.clients = clients,
		.n_clients = 2,
		.upstream_timeout_ms = TIMEOUT_MS,
		.admit_timeout_ms = TIMEOUT_MS,
		.max_inflight = (r.cfg_flags & 4) ? 3 : 64,
		.qps = (r.cfg_flags & 2) ? 4 : 0,
		.max_addrs_per_reply = (uint32_t)r.max_addrs,
	};
	if (r.serve_mode) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
			die("socketpair");
		r.sup = sp[0];
		if (dp_serve_start(&r.serve, &cfg, udp, n_fam, tcp, n_fam, sp[1], &err) < 0) {
			fprintf(stderr, "fuzz-dnsproxy: %s\n", err.msg);
			abort();
		}
		r.p = r.serve.p;
		r.epfd = r.serve.epfd;
		sockets_start(&sockets_end);
		if (dp_serve_sockets(&r.serve, sockets_end, &err) < 0) {
			fprintf(stderr, "fuzz-dnsproxy: %s\n", err.msg);
			abort();
		}
		return;
	}
	cfg.admit = direct_admit;
	cfg.event = direct_event;
	r.sup = -1;
	r.p = cordon_dnsproxy_new(&cfg, udp, n_fam, tcp, n_fam, &err);
	r.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!r.p || r.epfd < 0 || cordon_dnsproxy_attach(r.p, r.epfd, &err) < 0) {
		fprintf(stderr, "fuzz-dnsproxy: %s\n", err.msg);
		abort();
	}
}

static bool proxy_idle(bool clients_too)
{
	if (r.ended)
		return true;
	if (r.p->inflight)
		return false;
	for (size_t i = 0; clients_too && i < MAX_TCP_CLIENTS; i++)
		if (r.p->clients[i])
			return false;
	return true;
}

/* Everything the proxy waits for answered, as the supervisor and a plain upstream would. */
static void answer_everything(void)
{
	up_collect();
	while (r.n_qs)
		up_answer_one(0, 6 /* an error: nothing to admit */, 0);
	sup_read();
	for (; admits.next_new < admits.n; admits.next_new++)
		answer(admits.v[admits.next_new].token, 0, false);
}

static void run_down(void)
{
	/* The replies still coming are read and checked. */
	for (int round = 0; round < 200 && !proxy_idle(false); round++) {
		answer_everything();
		drive(round < 100 ? 0 : next_deadline(5));
		for (size_t i = 0; i < r.n_clients; i++) {
			client_send(r.clients[i], 0);
			client_read(r.clients[i], 0);
		}
		udp_read();
	}
	/* Then every client goes, and the proxy must let go of them all. */
	for (size_t i = 0; i < r.n_clients; i++)
		reset_close(&r.clients[i]->fd);
	for (int round = 0; round < 1000 && !proxy_idle(true); round++) {
		answer_everything();
		drive(round < 100 ? 0 : next_deadline(5));
	}
	if (!proxy_idle(true)) {
		fprintf(stderr, "fuzz-dnsproxy: not idle: %u in flight\n", r.p->inflight);
		CHECK(!"everything answered and closed, the proxy is idle");
	}
	sup_read();
}

static struct cordon_dnsproxy_stats stats_at_end;

static void stop(void)
{
	cordon_dnsproxy_stats(r.p, &stats_at_end);
	if (r.serve_mode) {
		dp_serve_stop(&r.serve);
		plain_close(&r.sup);
		plain_close(&r.serve.ctl);
		plain_close(&r.serve.sockets);
		sockets_stop();
	} else {
		cordon_dnsproxy_free(r.p);
		plain_close(&r.epfd);
	}
	r.p = NULL;
	for (size_t i = 0; i < r.n_clients; i++)
		reset_close(&r.clients[i]->fd);
	for (int i = 0; i < N_UDP_CLIENTS; i++)
		plain_close(&r.udp[i].fd);
	while (r.n_conns)
		up_conn_close(r.n_conns - 1, true);
	for (int i = 0; i < 2; i++) {
		plain_close(&r.up_udp[i]);
		plain_close(&r.up_tcp[i]);
	}
	plain_close(&r.spoof);
}

enum op {
	OP_CONNECT,
	OP_QUEUE_QUERY,
	OP_QUEUE_RAW,
	OP_SEND,
	OP_READ,
	OP_RESET,
	OP_SHUTDOWN,
	OP_CLOSE,
	OP_UDP_SEND,
	OP_UDP_READ,
	OP_UPSTREAM,
	OP_SPOOF,
	OP_ADMIT,
	OP_STATS,
	OP_HANGUP,
	OP_DRIVE,
	OP_WAIT,
	OP_SPURIOUS,
	OP_COUNT,
};

static const char *const op_names[] = {
	"connect",  "queue-query", "queue-raw", "send",	    "read",	"reset",
	"shutdown", "close",	   "udp-send",	"udp-read", "upstream", "spoof",
	"admit",    "stats",	   "hangup",	"drive",    "wait",	"spurious",
};

static void step(enum op op)
{
	struct client *c;
	uint8_t b[1024];
	size_t len;

	trace("op %s (input at %zu; %u in flight)", op_names[op], in_off, r.p->inflight);
	switch (op) {
	case OP_CONNECT:
		client_connect();
		break;
	case OP_QUEUE_QUERY:
		if (!(c = pick_client()))
			break;
		len = build_query(b + 2, sizeof(b) - 2);
		b[0] = (uint8_t)(len >> 8);
		b[1] = (uint8_t)len;
		client_queue(c, b, len + 2);
		break;
	case OP_QUEUE_RAW:
		if (!(c = pick_client()))
			break;
		len = byte();
		for (size_t i = 0; i < len; i++)
			b[i] = byte();
		client_queue(c, b, len);
		break;
	case OP_SEND:
		if ((c = pick_client()))
			client_send(c, byte());
		break;
	case OP_READ:
		if ((c = pick_client()))
			client_read(c, (size_t)byte() * 16);
		break;
	case OP_RESET:
		if ((c = pick_client()))
			reset_close(&c->fd);
		break;
	case OP_SHUTDOWN:
		if ((c = pick_client()) && c->fd >= 0)
			shutdown(c->fd, SHUT_WR);
		break;
	case OP_CLOSE:
		if ((c = pick_client()))
			plain_close(&c->fd);
		break;
	case OP_UDP_SEND:
		udp_send();
		break;
	case OP_UDP_READ:
		udp_read();
		break;
	case OP_UPSTREAM:
		up_answer();
		break;
	case OP_SPOOF:
		up_spoof();
		break;
	case OP_ADMIT: {
		uint32_t token;

		sup_read();
		token = pick_token();
		answer(token, byte(), true);
		break;
	}
	case OP_STATS:
		if (r.serve_mode && r.sup >= 0) {
			static struct cordon_dnsctl_msg m;

			memset(&m, 0, sizeof(m));
			m.type = CORDON_DNSCTL_STATS;
			if (send(r.sup, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m))
				r.stats_asked++;
		}
		break;
	case OP_HANGUP:
		/* The supervisor goes: the loop ends (the proxy's process would exit). */
		if (r.serve_mode && (byte() & 7) == 7)
			plain_close(&r.sup);
		break;
	case OP_DRIVE:
		drive(0);
		break;
	case OP_WAIT:
		wait_deadline(1 + byte() % 4);
		break;
	case OP_SPURIOUS:
		drive_spurious();
		break;
	case OP_COUNT:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t fds = count_fds();

	in_data = data;
	in_size = size;
	in_off = 0;
	memset(&r, 0, offsetof(typeof(r), udp));
	admits.n = admits.next_new = 0;
	n_admitted = 0;
	r.cfg_flags = byte();
	start();
	for (int ops = 0; in_off < in_size && ops < 2000 && !r.ended; ops++)
		step((enum op)(byte() % OP_COUNT));
	run_down();
	stop();
	CHECK(r.stats_got <= r.stats_asked);
	CHECK(count_fds() == fds);
	if (tracing) {
		struct cordon_dnsproxy_stats st = stats_at_end;

		trace("stats: %" PRIu64 " queries, %" PRIu64 " allowed, %" PRIu64
		      " denied, %" PRIu64 " forwarded, %" PRIu64 " servfail, %" PRIu64
		      " tcp retries, %" PRIu64 " rate limited, %" PRIu64
		      " inflight limited, %" PRIu64 " inserted, %" PRIu64 " refused, %" PRIu64
		      " foreign",
		      st.queries, st.allowed, st.denied, st.forwarded, st.servfail, st.tcp_retries,
		      st.rate_limited, st.inflight_limited, st.addrs_inserted, st.addrs_refused,
		      st.foreign);
	}
	return 0;
}
