// SPDX-License-Identifier: Apache-2.0
/*
 * cordon-nethelper and its client (src/helper/, src/sandbox/egress/nethelper.c)
 * against the real kernel. Every test runs in a network namespace of its
 * own, which plays the host (unshare(CLONE_NEWNET) in the checked fixture,
 * so in the forked test process); gateways and the "internet" are further
 * namespaces the test makes. No packet leaves them.
 *
 * The helper is $CORDON_NETHELPER (meson sets it). The unprivileged cases
 * run it as $CORDON_TEST_USER (default cordon-test) from a copy that has
 * the file capability the man page prescribes, cap_net_admin+ep, and
 * nothing else: they prove that this is enough. Without root (or without
 * nf_tables or veth) the whole program is skipped; without the test user
 * only those cases are.
 */
#include <arpa/inet.h>
#include <grp.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "cordon/core.h"
#include "cordon/net.h"
#include "cordon/nethelper.h"
#include "../../src/net/nft-internal.h"
#include "unit.h"

static const char *helper;  /* $CORDON_NETHELPER */
static char *capped_helper; /* a copy with cap_net_admin+ep, or NULL */
static char *capped_dir;
static struct passwd test_user; /* pw_uid 0 when there is none */
static int host_fd = -1;	/* this test's "host" namespace */

/* --- namespaces ------------------------------------------------------- */

static void enter(int ns)
{
	ck_assert_msg(setns(ns, CLONE_NEWNET) == 0, "setns: %s", strerror(errno));
}

/* A fresh network namespace, by fd; we stay where we were. */
static int netns_new(void)
{
	int fd;

	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare: %s", strerror(errno));
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	enter(host_fd);
	return fd;
}

static void host_setup(void)
{
	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	host_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(host_fd, 0);
	/*
	 * A new namespace copies the initial one's forwarding, which a
	 * rootful networked sandbox (or anything else on the machine) may
	 * have turned on: this "host" starts without it, as the cases expect.
	 */
	ck_assert_int_eq(cordon_write_file_at(AT_FDCWD, "/proc/sys/net/ipv4/ip_forward", "0", 1),
			 0);
}

static void host_teardown(void)
{
	close(host_fd);
	host_fd = -1;
}

/* --- running the helper ---------------------------------------------- */

static struct cordon_nethelper_result run_ok(const char *id, int gateway, const char *pool)
{
	struct cordon_nethelper_result r;
	struct cordon_error err = { 0 };
	char msg[1024];

	if (cordon_nethelper_run(helper, id, gateway, pool, &r, &err) < 0) {
		cordon_error_message(&err, msg, sizeof(msg));
		ck_abort_msg("cordon_nethelper_run(%s): %s", id, msg);
	}
	return r;
}

enum fd_kind { FD_NONE, FD_GATEWAY, FD_TWO, FD_DEVNULL, FD_UTS, FD_OWN_NETNS };

/*
 * Run the helper on a hand-made request: stdin/stdout a socketpair, the
 * given fds attached. Returns the exit status; stderr in err.
 */
static int run_raw(const char *req, size_t len, enum fd_kind kind, int gateway, char *err,
		   size_t errlen)
{
	int sv[2], ep[2], fds[2], nfds = 0, status;
	union {
		char space[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control = { 0 };
	struct iovec iov = { (void *)req, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n, got = 0;
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(pipe2(ep, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(sv[1], 0);
		dup2(sv[1], 1);
		dup2(ep[1], 2);
		execl(helper, "cordon-nethelper", (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	close(ep[1]);
	switch (kind) {
	case FD_NONE:
		break;
	case FD_GATEWAY:
		fds[nfds++] = gateway;
		break;
	case FD_TWO:
		fds[nfds++] = gateway;
		fds[nfds++] = gateway;
		break;
	case FD_DEVNULL:
		fds[nfds++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		break;
	case FD_UTS:
		fds[nfds++] = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
		break;
	case FD_OWN_NETNS:
		fds[nfds++] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		break;
	}
	if (nfds) {
		struct cmsghdr *c;

		mh.msg_control = control.space;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	/* A refused helper may be gone before we finish: not our failure. */
	(void)sendmsg(sv[0], &mh, MSG_NOSIGNAL);
	if (kind == FD_DEVNULL || kind == FD_UTS || kind == FD_OWN_NETNS)
		close(fds[0]);
	shutdown(sv[0], SHUT_WR);
	while ((n = read(ep[0], err + got, errlen - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	close(ep[0]);
	close(sv[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* --- looking at the host ---------------------------------------------- */

struct link_info {
	bool exists, up;
	uint32_t group;
	char addr[INET_ADDRSTRLEN + 4]; /* "a.b.c.d/p" of its first IPv4 address */
};

static struct link_info link_info(const char *name)
{
	struct link_info info = { 0 };
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *addrs = NULL;
	struct rtnl_link *link = NULL;
	int index;

	ck_assert_ptr_nonnull(sk);
	ck_assert_int_eq(nl_connect(sk, NETLINK_ROUTE), 0);
	if (rtnl_link_get_kernel(sk, 0, name, &link) == 0) {
		info.exists = true;
		info.up = rtnl_link_get_flags(link) & IFF_UP;
		info.group = rtnl_link_get_group(link);
		index = rtnl_link_get_ifindex(link);
		ck_assert_int_eq(rtnl_addr_alloc_cache(sk, &addrs), 0);
		for (struct nl_object *o = nl_cache_get_first(addrs); o; o = nl_cache_get_next(o)) {
			struct rtnl_addr *a = (struct rtnl_addr *)o;

			if (rtnl_addr_get_ifindex(a) == index &&
			    rtnl_addr_get_family(a) == AF_INET) {
				nl_addr2str(rtnl_addr_get_local(a), info.addr, sizeof(info.addr));
				break;
			}
		}
		nl_cache_free(addrs);
		rtnl_link_put(link);
	}
	nl_socket_free(sk);
	return info;
}

static bool link_in(int ns, const char *name)
{
	bool found;

	enter(ns);
	found = if_nametoindex(name) != 0;
	enter(host_fd);
	return found;
}

/* How many cdr-* links the host has. */
static int cordon_links(void)
{
	struct if_nameindex *all = if_nameindex(), *i;
	int n = 0;

	ck_assert_ptr_nonnull(all);
	for (i = all; i->if_index; i++)
		n += strncmp(i->if_name, "cdr-", 4) == 0;
	if_freenameindex(all);
	return n;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(int *)data)++;
	return MNL_CB_OK;
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_table *t = nftnl_table_alloc();

	if (t && nftnl_table_nlmsg_parse(nlh, t) == 0 &&
	    !strcmp(nftnl_table_get_str(t, NFTNL_TABLE_NAME), CORDON_NETHELPER_HOST_TABLE))
		(*(int *)data)++;
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

/* Tables named cordon-host, and the rules in it. */
static void host_table(int *tables, int *rules)
{
	struct cordon_error err = { 0 };
	struct cordon_nft *nft = cordon_nft_open(&err);
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nlmsghdr *nlh;

	ck_assert_ptr_nonnull(nft);
	*tables = *rules = 0;
	nlh = nft_request_msg(nft, NFT_MSG_GETTABLE, NLM_F_DUMP);
	ck_assert_int_eq(nft_request(nft, nlh, table_cb, tables, "tables", &err), 0);
	nlh = nft_request_msg(nft, NFT_MSG_GETRULE, NLM_F_DUMP);
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, CORDON_NETHELPER_HOST_TABLE);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	ck_assert_int_eq(nft_request(nft, nlh, count_cb, rules, "rules", &err), 0);
	cordon_nft_close(nft);
}

static char *read_sysctl(const char *path)
{
	char *v = NULL;
	size_t len;

	ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, path, &v, &len), 0);
	v[strcspn(v, "\n")] = '\0';
	return v;
}

static const char *expected_host_if(const char *id)
{
	static char name[IFNAMSIZ];
	struct cordon_sha256 c;
	uint8_t d[32];
	char hex[9];

	cordon_sha256_init(&c);
	cordon_sha256_update(&c, id, strlen(id));
	cordon_sha256_final(&c, d);
	cordon_hex(d, 4, hex);
	snprintf(name, sizeof(name), "cdr-%s", hex);
	return name;
}

static const char *addr_text(const struct cordon_addr *a)
{
	static char buf[2][INET6_ADDRSTRLEN];
	static int k;

	k ^= 1;
	cordon_addr_format(a, buf[k], sizeof(buf[k]));
	return buf[k];
}

/* --- the tests: success ------------------------------------------------ */

START_TEST(creates_the_uplink)
{
	int g = netns_new();
	_cleanup_free_ char *before = read_sysctl("/proc/sys/net/ipv4/ip_forward");
	_cleanup_free_ char *after = NULL;
	struct cordon_nethelper_result r;
	struct link_info info;
	int tables, rules;

	ck_assert_str_eq(before, "0"); /* a new namespace starts without forwarding */
	r = run_ok("web-1", g, NULL);
	ck_assert_str_eq(r.host_if, expected_host_if("web-1"));
	ck_assert_str_eq(r.gateway_if, "up0");
	ck_assert_str_eq(addr_text(&r.host_addr), "10.231.0.1");
	ck_assert_str_eq(addr_text(&r.gateway_addr), "10.231.0.2");
	ck_assert_uint_eq(r.prefix, 30);
	ck_assert(r.enabled_ip_forward);
	after = read_sysctl("/proc/sys/net/ipv4/ip_forward");
	ck_assert_str_eq(after, "1");

	info = link_info(r.host_if);
	ck_assert(info.exists);
	ck_assert(info.up);
	ck_assert_uint_eq(info.group, 0xc0d0);
	ck_assert_str_eq(info.addr, "10.231.0.1/30");
	/* The other end is in the gateway namespace, and only there. */
	ck_assert(link_in(g, "up0"));
	ck_assert(!link_in(host_fd, "up0"));
	ck_assert(!link_in(g, r.host_if));

	host_table(&tables, &rules);
	ck_assert_int_eq(tables, 1);
	ck_assert_int_eq(rules, 10);
	close(g);
}
END_TEST

/*
 * An older host table (installed once and kept: a host that ran an older
 * helper) is replaced by the current one, in one batch; the current one
 * is left alone.
 */
START_TEST(replaces_an_older_host_table)
{
	int g1 = netns_new(), g2 = netns_new();
	struct cordon_error err = { 0 };
	struct cordon_nft *nft = cordon_nft_open(&err);
	struct nftnl_rule *r;
	int tables, rules;

	/* What a helper of another version left: the table, one rule, no version. */
	ck_assert_ptr_nonnull(nft);
	nft_batch_begin(nft);
	nft_put_table(nft, CORDON_NETHELPER_HOST_TABLE, 0, NULL);
	nft_put_chain(nft, CORDON_NETHELPER_HOST_TABLE, "forward", "filter", NF_INET_FORWARD, 0,
		      NF_ACCEPT);
	r = nft_rule_new(CORDON_NETHELPER_HOST_TABLE, "forward");
	nft_match_ct_established(r);
	nft_verdict(r, NF_ACCEPT);
	nft_put_rule(nft, r, "old");
	ck_assert_msg(nft_batch_commit(nft, "old table", &err) == 0, "%s", err.msg);
	cordon_nft_close(nft);
	host_table(&tables, &rules);
	ck_assert_int_eq(rules, 1);

	run_ok("old-table-1", g1, NULL);
	host_table(&tables, &rules);
	ck_assert_int_eq(tables, 1);
	ck_assert_int_eq(rules, 10);
	/* The current version stays as it is: nothing rewritten. */
	run_ok("old-table-2", g2, NULL);
	host_table(&tables, &rules);
	ck_assert_int_eq(tables, 1);
	ck_assert_int_eq(rules, 10);
	close(g1);
	close(g2);
}
END_TEST

START_TEST(second_run_gets_the_next_slash_30)
{
	int g1 = netns_new(), g2 = netns_new();
	struct cordon_nethelper_result a, b;
	int tables, rules;

	a = run_ok("one", g1, NULL);
	b = run_ok("two", g2, "10.231.0.0/16");
	ck_assert_str_eq(addr_text(&a.host_addr), "10.231.0.1");
	ck_assert_str_eq(addr_text(&b.host_addr), "10.231.0.5");
	ck_assert_str_eq(addr_text(&b.gateway_addr), "10.231.0.6");
	ck_assert_str_ne(a.host_if, b.host_if);
	ck_assert(a.enabled_ip_forward);
	ck_assert(!b.enabled_ip_forward); /* already on */
	ck_assert_str_eq(link_info(b.host_if).addr, "10.231.0.5/30");
	/* Installed once: the second run added no table and no rule. */
	host_table(&tables, &rules);
	ck_assert_int_eq(tables, 1);
	ck_assert_int_eq(rules, 10);
	close(g1);
	close(g2);
}
END_TEST

START_TEST(skips_networks_of_the_host)
{
	int g1 = netns_new(), g2 = netns_new(), lan = netns_new();
	struct cordon_error err = { 0 };
	struct cordon_link *l = cordon_link_open(&err);
	struct cordon_addr a;
	struct cordon_nethelper_result r;

	/* The host sits on 10.231.0.0/29: the first two /30s are its LAN. */
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cordon_link_veth(l, "lan0", "eth0", lan, 0, &err), 0);
	ck_assert_int_eq(cordon_addr_parse("10.231.0.3", &a), 0);
	ck_assert_int_eq(cordon_link_addr(l, "lan0", &a, 29, &err), 0);
	cordon_link_close(l);
	r = run_ok("after-lan", g1, NULL);
	ck_assert_str_eq(addr_text(&r.host_addr), "10.231.0.9");

	/* root may name a pool of its own. */
	r = run_ok("own-pool", g2, "192.168.77.0/28");
	ck_assert_str_eq(addr_text(&r.host_addr), "192.168.77.1");
	ck_assert_str_eq(addr_text(&r.gateway_addr), "192.168.77.2");
	close(g1);
	close(g2);
	close(lan);
}
END_TEST

START_TEST(concurrent_runs_get_distinct_slash_30s)
{
	enum { N = 6 };
	int g[N], pipes[N][2];
	pid_t pid[N];
	char seen[N][INET_ADDRSTRLEN];

	for (int i = 0; i < N; i++) {
		g[i] = netns_new();
		ck_assert_int_eq(pipe(pipes[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (pid[i] == 0) {
			struct cordon_nethelper_result r;
			struct cordon_error err = { 0 };
			char id[16];

			snprintf(id, sizeof(id), "c%d", i);
			if (cordon_nethelper_run(helper, id, g[i], NULL, &r, &err) < 0)
				dprintf(pipes[i][1], "error: %s", err.msg);
			else
				dprintf(pipes[i][1], "%s", addr_text(&r.host_addr));
			_exit(0);
		}
	}
	for (int i = 0; i < N; i++) {
		ssize_t n;
		int status;

		close(pipes[i][1]);
		n = read(pipes[i][0], seen[i], sizeof(seen[i]) - 1);
		seen[i][n > 0 ? n : 0] = '\0';
		close(pipes[i][0]);
		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		ck_assert_msg(strncmp(seen[i], "10.231.0.", 9) == 0, "run %d: %s", i, seen[i]);
		for (int k = 0; k < i; k++)
			ck_assert_str_ne(seen[i], seen[k]);
	}
	ck_assert_int_eq(cordon_links(), N);
	for (int i = 0; i < N; i++)
		close(g[i]);
}
END_TEST

START_TEST(veth_dies_with_the_gateway)
{
	int g = netns_new();
	struct cordon_nethelper_result r = run_ok("ephemeral", g, NULL);
	bool gone = false;

	ck_assert(link_info(r.host_if).exists);
	/* The last reference to the namespace: the helper kept none. */
	close(g);
	for (int i = 0; i < 100 && !gone; i++) {
		const struct timespec t = { 0, 50 * 1000000L };

		gone = !link_info(r.host_if).exists;
		if (!gone)
			nanosleep(&t, NULL);
	}
	ck_assert_msg(gone, "%s still exists 5 s after its gateway namespace went", r.host_if);
	ck_assert_int_eq(cordon_links(), 0);
}
END_TEST

/* --- the tests: refusals ---------------------------------------------- */

static const struct refusal {
	const char *request;
	enum fd_kind fd;
	const char *message; /* a part of the error line */
} refusals[] = {
	{ "{\"id\":\"\"}", FD_GATEWAY, "does not match" },
	{ "{\"id\":\"-lead\"}", FD_GATEWAY, "does not match" },
	{ "{\"id\":\"a/b\"}", FD_GATEWAY, "does not match" },
	{ "{\"id\":\"a b\"}", FD_GATEWAY, "does not match" },
	{ "{\"id\":\"../x\"}", FD_GATEWAY, "does not match" },
	{ "{\"id\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	  FD_GATEWAY, "too long" },
	{ "{\"id\":\"ok\",\"extra\":1}", FD_GATEWAY, "unknown key" },
	{ "{\"id\":\"ok\",\"pool\":\"10.231.0.0/16\",\"x\":\"y\"}", FD_GATEWAY, "unknown key" },
	{ "{\"pool\":\"10.231.0.0/16\"}", FD_GATEWAY, "\"id\" is missing" },
	{ "{}", FD_GATEWAY, "\"id\" is missing" },
	{ "{\"id\":5}", FD_GATEWAY, "\"id\" is not a string" },
	{ "{\"id\":null}", FD_GATEWAY, "\"id\" is not a string" },
	{ "{\"id\":[\"a\"]}", FD_GATEWAY, "\"id\" is not a string" },
	{ "{\"id\":{\"a\":\"b\"}}", FD_GATEWAY, "\"id\" is not a string" },
	{ "{\"id\":\"ok\",\"id\":\"ok\"}", FD_GATEWAY, "given twice" },
	{ "{\"id\":\"o\\u0000k\"}", FD_GATEWAY, "NUL" },
	{ "{\"id\":\"ok\"} {\"id\":\"ok\"}", FD_GATEWAY, "well-formed" },
	{ "{\"id\":\"ok\"} x", FD_GATEWAY, "well-formed" },
	{ "{\"id\":\"ok\"} /* c */", FD_GATEWAY, "well-formed" },
	{ "{\"id\":\"ok\"", FD_GATEWAY, "well-formed" },
	{ "[\"ok\"]", FD_GATEWAY, "not one JSON object" },
	{ "\"ok\"", FD_GATEWAY, "not one JSON object" },
	{ "", FD_GATEWAY, "well-formed" },
	{ "{\"id\":\"ok\",\"pool\":\"10.231.0.0/29\"}", FD_GATEWAY, "/16 to /28" },
	{ "{\"id\":\"ok\",\"pool\":\"10.0.0.0/15\"}", FD_GATEWAY, "/16 to /28" },
	{ "{\"id\":\"ok\",\"pool\":\"10.231.0.1/16\"}", FD_GATEWAY, "host bits" },
	{ "{\"id\":\"ok\",\"pool\":\"8.8.0.0/16\"}", FD_GATEWAY, "not inside" },
	{ "{\"id\":\"ok\",\"pool\":\"fd00::/64\"}", FD_GATEWAY, "not an IPv4 CIDR" },
	{ "{\"id\":\"ok\",\"pool\":\"10.231.0.0\"}", FD_GATEWAY, "/16 to /28" },
	{ "{\"id\":\"ok\",\"pool\":\"010.231.0.0/16\"}", FD_GATEWAY, "not an IPv4 CIDR" },
	{ "{\"id\":\"ok\",\"pool\":16}", FD_GATEWAY, "\"pool\" is not a string" },
	{ "{\"id\":\"ok\"}", FD_NONE, "no network namespace fd" },
	{ "{\"id\":\"ok\"}", FD_TWO, "exactly one" },
	{ "{\"id\":\"ok\"}", FD_DEVNULL, "not a namespace" },
	{ "{\"id\":\"ok\"}", FD_UTS, "not a network namespace" },
	{ "{\"id\":\"ok\"}", FD_OWN_NETNS, "helper's own network namespace" },
};

START_TEST(refuses_bad_requests)
{
	const struct refusal *t = &refusals[_i];
	int g = netns_new();
	char err[2048];
	int status = run_raw(t->request, strlen(t->request), t->fd, g, err, sizeof(err));

	ck_assert_msg(status == 1, "%s: exit %d (%s)", t->request, status, err);
	ck_assert_msg(!strncmp(err, "cordon-nethelper: CORDON_E_NET_POLICY: ", 39), "%s: %s",
		      t->request, err);
	ck_assert_msg(strstr(err, t->message), "%s: wanted \"%s\" in: %s", t->request, t->message,
		      err);
	/* Exactly one line. */
	ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: %s",
		      t->request, err);
	ck_assert_int_eq(cordon_links(), 0);
	ck_assert(!link_in(g, "up0"));
	close(g);
}
END_TEST

START_TEST(refuses_an_oversized_request)
{
	int g = netns_new();
	size_t len = 8192;
	_cleanup_free_ char *req = cordon_xmalloc(len);
	char err[2048];

	memset(req, ' ', len);
	memcpy(req, "{\"id\":\"ok\"}", 11);
	ck_assert_int_eq(run_raw(req, len, FD_GATEWAY, g, err, sizeof(err)), 1);
	ck_assert_msg(strstr(err, "larger than 4096 bytes"), "%s", err);
	close(g);
}
END_TEST

START_TEST(refuses_stdin_that_is_not_a_socket)
{
	int status;
	char err[1024];
	int ep[2];
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe2(ep, O_CLOEXEC), 0);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(ep[1], 2);
		execl(helper, "cordon-nethelper", (char *)NULL);
		_exit(127);
	}
	close(ep[1]);
	n = read(ep[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(ep[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	ck_assert_msg(strstr(err, "stdin is not a unix socket"), "%s", err);
}
END_TEST

START_TEST(same_id_twice_is_refused)
{
	int g1 = netns_new(), g2 = netns_new();
	struct cordon_nethelper_result r;
	struct cordon_error err = { 0 };

	run_ok("twice", g1, NULL);
	ck_assert_int_eq(cordon_nethelper_run(helper, "twice", g2, NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_msg(strstr(err.msg, "exists already"), "%s", err.msg);
	ck_assert_int_eq(cordon_links(), 1);
	close(g1);
	close(g2);
}
END_TEST

START_TEST(client_reports_the_helpers_message)
{
	struct cordon_nethelper_result r;
	struct cordon_error err = { 0 };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int g = netns_new();

	ck_assert_int_eq(cordon_nethelper_run(helper, "ok", null, NULL, &r, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_NET_POLICY);
	ck_assert_str_eq(err.msg,
			 "nethelper: request: the fd that came with it is not a namespace");

	ck_assert_int_eq(cordon_nethelper_run(helper, "bad id", g, NULL, &r, &err), -1);
	ck_assert_msg(strstr(err.msg, "does not match"), "%s", err.msg);

	ck_assert_int_eq(
		cordon_nethelper_run("/nonexistent/cordon-nethelper", "ok", g, NULL, &r, &err), -1);
	ck_assert_msg(strstr(err.msg, "cannot run"), "%s", err.msg);
	ck_assert_int_eq(err.errnum, ENOENT);
	close(null);
	close(g);
}
END_TEST

/* --- the tests: as an unprivileged user -------------------------------- */

struct user_outcome {
	int rc;
	char msg[768];
	struct cordon_nethelper_result r;
};

/*
 * In a child that becomes the test user: run the capped helper for a
 * gateway namespace that is either given (gateway >= 0) or made by the
 * user (a user namespace of its own, then a network namespace in it).
 */
static struct user_outcome run_as_user(const char *id, int gateway, const char *pool)
{
	struct user_outcome out = { 0 };
	int report[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(report), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct cordon_error err = { 0 };
		int ready[2], hold[2];
		pid_t inner = -1;
		char c, path[64];

		out.rc = -2;
		/* Dumpable again after setuid, or the user could not open its
		 * own child's /proc/PID/ns/net. */
		if (setgroups(0, NULL) < 0 || setgid(test_user.pw_gid) < 0 ||
		    setuid(test_user.pw_uid) < 0 || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
			goto report;
		if (gateway < 0) {
			if (pipe(ready) < 0 || pipe(hold) < 0)
				goto report;
			inner = fork();
			if (inner == 0) {
				if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
					_exit(1);
				(void)!write(ready[1], "x", 1);
				(void)!read(hold[0], &c, 1); /* until the parent is done */
				_exit(0);
			}
			close(ready[1]);
			close(hold[0]);
			if (read(ready[0], &c, 1) != 1)
				goto report;
			snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)inner);
			gateway = open(path, O_RDONLY | O_CLOEXEC);
			close(hold[1]);
			if (gateway < 0)
				goto report;
		}
		out.rc = cordon_nethelper_run(capped_helper, id, gateway, pool, &out.r, &err);
		cordon_error_message(&err, out.msg, sizeof(out.msg));
report:
		if (out.rc == -2)
			snprintf(out.msg, sizeof(out.msg), "test setup as uid %u: %s",
				 (unsigned)test_user.pw_uid, strerror(errno));
		(void)!write(report[1], &out, sizeof(out));
		_exit(0);
	}
	close(report[1]);
	ck_assert_int_eq(read(report[0], &out, sizeof(out)), (ssize_t)sizeof(out));
	close(report[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return out;
}

static bool have_user_setup(void)
{
	return test_user.pw_uid != 0 && capped_helper;
}

START_TEST(user_gets_an_uplink_for_its_own_namespace)
{
	struct user_outcome o;
	struct link_info info;

	if (!have_user_setup())
		UNIT_SKIP_OR_FAIL("no test user, or no copy of the helper with file capabilities");
	o = run_as_user("user-1", -1, NULL);
	ck_assert_msg(o.rc == 0, "as %s: %s", test_user.pw_name, o.msg);
	ck_assert_str_eq(addr_text(&o.r.host_addr), "10.231.0.1");
	/* CAP_NET_ADMIN alone did all of it, sysctl included. */
	ck_assert(o.r.enabled_ip_forward);
	info = link_info(o.r.host_if);
	/* The namespace died with the user's child: the veth may be gone
	 * already, but while it exists it is ours. */
	if (info.exists)
		ck_assert_uint_eq(info.group, 0xc0d0);
}
END_TEST

START_TEST(user_is_refused_a_namespace_it_does_not_own)
{
	int g = netns_new(); /* owned by the initial user namespace, i.e. root */
	struct user_outcome o;

	if (!have_user_setup())
		UNIT_SKIP_OR_FAIL("no test user, or no copy of the helper with file capabilities");
	o = run_as_user("foreign", g, NULL);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_msg(strstr(o.msg, "belongs to a user namespace of uid 0, not the caller's"), "%s",
		      o.msg);
	ck_assert_int_eq(cordon_links(), 0);
	ck_assert(!link_in(g, "up0"));
	close(g);
}
END_TEST

START_TEST(user_may_not_choose_the_pool)
{
	struct user_outcome o;

	if (!have_user_setup())
		UNIT_SKIP_OR_FAIL("no test user, or no copy of the helper with file capabilities");
	o = run_as_user("pool", -1, "192.168.0.0/16");
	ck_assert_int_eq(o.rc, -1);
	ck_assert_msg(strstr(o.msg, "only root may choose a pool"), "%s", o.msg);
	/* A part of the default pool is fine. */
	o = run_as_user("subpool", -1, "10.231.128.0/17");
	ck_assert_msg(o.rc == 0, "%s", o.msg);
	ck_assert_str_eq(addr_text(&o.r.host_addr), "10.231.128.1");
}
END_TEST

/* --- the tests: what the host table lets through ------------------------ */

static int tcp_listen(int ns, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, s;

	enter(ns);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(s, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	enter(host_fd);
	return s;
}

/* Does a TCP connection from ns to dst:port come up? */
static bool tcp_connects(int ns, const char *dst, uint16_t port)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct pollfd p;
	int s, soerr = -1;
	socklen_t len = sizeof(soerr);

	enter(ns);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(s, 0);
	inet_pton(AF_INET, dst, &to.sin_addr);
	if (connect(s, (struct sockaddr *)&to, sizeof(to)) < 0)
		ck_assert_int_eq(errno, EINPROGRESS);
	p = (struct pollfd){ .fd = s, .events = POLLOUT };
	if (poll(&p, 1, 700) == 1)
		getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &len);
	close(s);
	enter(host_fd);
	return soerr == 0;
}

static bool tcp_connects_retry(int ns, const char *dst, uint16_t port, int tries)
{
	while (tries-- > 0)
		if (tcp_connects(ns, dst, port))
			return true;
	return false;
}

static int udp_bound(int ns, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s;

	enter(ns);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	enter(host_fd);
	return s;
}

/*
 * A datagram from ns with source address src: a spoofing sandbox. UDP,
 * because a spoofed TCP handshake fails whether or not the host let the
 * SYN through; a datagram is either there or not. IP_TRANSPARENT rather
 * than IP_FREEBIND: only it lets the route lookup take a foreign source.
 */
static void udp_send_from(int ns, const char *src, const char *dst, uint16_t port)
{
	struct sockaddr_in from = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s, one = 1;

	enter(ns);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(setsockopt(s, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)), 0);
	inet_pton(AF_INET, src, &from.sin_addr);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&from, sizeof(from)), 0);
	inet_pton(AF_INET, dst, &to.sin_addr);
	ck_assert_int_eq(sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	close(s);
	enter(host_fd);
}

/* The source of a datagram that arrived within ms, or "" for none. */
static const char *udp_received(int s, int ms)
{
	static char text[INET_ADDRSTRLEN];
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	struct pollfd p = { .fd = s, .events = POLLIN };
	char c;

	text[0] = '\0';
	if (poll(&p, 1, ms) == 1 && recvfrom(s, &c, 1, 0, (struct sockaddr *)&from, &len) == 1)
		inet_ntop(AF_INET, &from.sin_addr, text, sizeof(text));
	return text;
}

/*
 * An ICMP time exceeded from ns to dst, about a UDP datagram from src that
 * nothing ever sent: what a gateway emits for a packet whose source the
 * sandbox forged (with a TTL of 1). Conntrack knows no connection it is
 * about.
 */
static void icmp_error_from(int ns, const char *src, const char *dst)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint8_t m[8 + 20 + 8] = { 11, 0 }; /* time exceeded in transit */
	uint32_t sum = 0;
	int s;

	/* The quoted datagram: IPv4 header, src -> dst, UDP 4444 -> 53. */
	m[8] = 0x45;
	m[8 + 3] = 28;
	m[8 + 8] = 1;
	m[8 + 9] = IPPROTO_UDP;
	inet_pton(AF_INET, src, m + 8 + 12);
	inet_pton(AF_INET, dst, m + 8 + 16);
	m[28 + 0] = 0x11;
	m[28 + 1] = 0x5c;
	m[28 + 3] = 53;
	m[28 + 5] = 8;
	for (size_t i = 0; i < sizeof(m); i += 2)
		sum += (uint32_t)(m[i] << 8 | m[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	m[2] = (uint8_t)(~sum >> 8);
	m[3] = (uint8_t)~sum;
	enter(ns);
	s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	ck_assert_int_ge(s, 0);
	inet_pton(AF_INET, dst, &to.sin_addr);
	ck_assert_int_eq(sendto(s, m, sizeof(m), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)sizeof(m));
	close(s);
	enter(host_fd);
}

/* A raw ICMP socket in ns, to see what arrives there. */
static int icmp_bound(int ns)
{
	int s;

	enter(ns);
	s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMP);
	ck_assert_int_ge(s, 0);
	enter(host_fd);
	return s;
}

/* Did an ICMP time exceeded arrive within ms? */
static bool icmp_time_exceeded_received(int s, int ms)
{
	uint8_t b[256];
	struct pollfd p = { .fd = s, .events = POLLIN };

	while (poll(&p, 1, ms) == 1) {
		ssize_t n = recv(s, b, sizeof(b), 0);

		if (n >= 21 && b[(b[0] & 0xf) * 4] == 11)
			return true;
	}
	return false;
}

static void configure_in(int ns, const struct cordon_nethelper_result *r)
{
	struct cordon_error err = { 0 };
	char msg[1024];
	int ret;

	enter(ns);
	ret = cordon_nethelper_configure_gateway(r, &err);
	enter(host_fd);
	cordon_error_message(&err, msg, sizeof(msg));
	ck_assert_msg(ret == 0, "%s", msg);
}

START_TEST(host_table_allows_only_egress)
{
	int g1 = netns_new(), g2 = netns_new(), wan = netns_new();
	struct cordon_error err = { 0 };
	struct cordon_link *l = cordon_link_open(&err);
	struct cordon_nethelper_result r1, r2;
	struct cordon_addr host_wan, remote;
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	int remote_srv, remote_udp, remote_icmp, host_srv, g2_srv, g1_srv, c;
	char from[INET_ADDRSTRLEN];

	/* The "internet": 198.51.100.2 behind the host's wan0 (198.51.100.1). */
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cordon_link_veth(l, "wan0", "eth0", wan, 0, &err), 0);
	cordon_addr_parse("198.51.100.1", &host_wan);
	cordon_addr_parse("198.51.100.2", &remote);
	ck_assert_int_eq(cordon_link_addr(l, "wan0", &host_wan, 24, &err), 0);
	ck_assert_int_eq(cordon_link_up(l, "wan0", &err), 0);
	cordon_link_close(l);
	enter(wan);
	l = cordon_link_open(&err);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cordon_link_addr(l, "eth0", &remote, 24, &err), 0);
	ck_assert_int_eq(cordon_link_up(l, "eth0", &err), 0);
	/* So that it could answer, or open, a connection to a sandbox address. */
	ck_assert_int_eq(cordon_link_default_route(l, "eth0", &host_wan, &err), 0);
	cordon_link_close(l);
	enter(host_fd);

	r1 = run_ok("traffic-1", g1, NULL);
	r2 = run_ok("traffic-2", g2, NULL);
	configure_in(g1, &r1);
	configure_in(g2, &r2);

	remote_srv = tcp_listen(wan, 8080);
	remote_udp = udp_bound(wan, 9090);
	host_srv = tcp_listen(host_fd, 8081);
	g2_srv = tcp_listen(g2, 8082);
	g1_srv = tcp_listen(g1, 8083);

	/* Out to the internet, masqueraded behind the host's address. */
	/* The first connect also resolves neighbours on two hops: on a busy
	 * machine (unit tests run in parallel) allow it a few tries. */
	ck_assert_msg(tcp_connects_retry(g1, "198.51.100.2", 8080, 4), "egress failed");
	c = accept(remote_srv, (struct sockaddr *)&peer, &len);
	ck_assert_int_ge(c, 0);
	inet_ntop(AF_INET, &peer.sin_addr, from, sizeof(from));
	ck_assert_str_eq(from, "198.51.100.1");
	close(c);

	/* Not to the host itself, on its cordon address or any other. */
	ck_assert(!tcp_connects(g1, "10.231.0.1", 8081));
	ck_assert(!tcp_connects(g1, "198.51.100.1", 8081));
	/* Not to another sandbox. */
	ck_assert(!tcp_connects(g1, "10.231.0.6", 8082));
	/* Nothing new from outside into a sandbox. */
	ck_assert(!tcp_connects(wan, "10.231.0.2", 8083));
	ck_assert(accept(remote_srv, NULL, NULL) < 0);
	/* Not with another sandbox's source address, nor a made-up one;
	 * with its own, masqueraded. */
	udp_send_from(g1, "10.231.0.6", "198.51.100.2", 9090);
	udp_send_from(g1, "10.99.0.1", "198.51.100.2", 9090);
	ck_assert_str_eq(udp_received(remote_udp, 500), "");
	udp_send_from(g1, "10.231.0.2", "198.51.100.2", 9090);
	ck_assert_str_eq(udp_received(remote_udp, 2000), "198.51.100.1");
	/*
	 * An ICMP error about nothing conntrack knows (a gateway answering a
	 * forged source): invalid, dropped. It used to be forwarded,
	 * unmasqueraded.
	 */
	remote_icmp = icmp_bound(wan);
	icmp_error_from(g1, "198.51.100.2", "198.51.100.2");
	ck_assert_msg(!icmp_time_exceeded_received(remote_icmp, 500),
		      "an ICMP error conntrack could not place left the host");
	close(remote_icmp);
	/* And the second sandbox gets out too. */
	ck_assert(tcp_connects(g2, "198.51.100.2", 8080));

	close(remote_srv);
	close(remote_udp);
	close(host_srv);
	close(g2_srv);
	close(g1_srv);
	close(g1);
	close(g2);
	close(wan);
}
END_TEST

static Suite *nethelper_suite(void)
{
	Suite *s = suite_create("nethelper");
	TCase *tc = tcase_create("runs");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, host_setup, host_teardown);
	tcase_add_test(tc, creates_the_uplink);
	tcase_add_test(tc, second_run_gets_the_next_slash_30);
	tcase_add_test(tc, skips_networks_of_the_host);
	tcase_add_test(tc, concurrent_runs_get_distinct_slash_30s);
	tcase_add_test(tc, veth_dies_with_the_gateway);
	tcase_add_test(tc, replaces_an_older_host_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("refusals");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, host_setup, host_teardown);
	tcase_add_loop_test(tc, refuses_bad_requests, 0, (int)ARRAY_SIZE(refusals));
	tcase_add_test(tc, refuses_an_oversized_request);
	tcase_add_test(tc, refuses_stdin_that_is_not_a_socket);
	tcase_add_test(tc, same_id_twice_is_refused);
	tcase_add_test(tc, client_reports_the_helpers_message);
	suite_add_tcase(s, tc);

	tc = tcase_create("unprivileged");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, host_setup, host_teardown);
	tcase_add_test(tc, user_gets_an_uplink_for_its_own_namespace);
	tcase_add_test(tc, user_is_refused_a_namespace_it_does_not_own);
	tcase_add_test(tc, user_may_not_choose_the_pool);
	suite_add_tcase(s, tc);

	tc = tcase_create("traffic");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, host_setup, host_teardown);
	tcase_add_test(tc, host_table_allows_only_egress);
	suite_add_tcase(s, tc);
	return s;
}

/* --- setup ------------------------------------------------------------- */

/* Copy the helper where the test user can run it, with cap_net_admin+ep. */
static void make_capped_copy(void)
{
	_cleanup_free_ char *data = NULL;
	size_t len;
	cap_t caps;
	int fd, ok;

	char tmpl[] = "/tmp/cordon-nethelper.XXXXXX";

	/* Not unit_tmpdir(): its ck_asserts only work inside a test. */
	if (cordon_read_file_at(AT_FDCWD, helper, &data, &len) < 0 || !mkdtemp(tmpl))
		return;
	capped_dir = cordon_xstrdup(tmpl);
	chmod(capped_dir, 0755);
	capped_helper = cordon_xasprintf("%s/cordon-nethelper", capped_dir);
	fd = open(capped_helper, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ok = fd >= 0 && cordon_write_all(fd, data, len) == 0;
	if (fd >= 0)
		close(fd);
	caps = cap_from_text("cap_net_admin+ep");
	ok = ok && caps && cap_set_file(capped_helper, caps) == 0;
	if (caps)
		cap_free(caps);
	if (!ok) {
		printf("# no file capabilities here (%s): the unprivileged cases skip\n",
		       strerror(errno));
		free(capped_helper);
		capped_helper = NULL;
	}
}

static const char *probe(char *why, size_t len)
{
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		snprintf(why, len, "needs root (euid %u)", (unsigned)geteuid());
		return why;
	}
	if (!helper || access(helper, X_OK) < 0) {
		snprintf(why, len, "CORDON_NETHELPER is not an executable (%s)",
			 helper ? helper : "unset");
		return why;
	}
	/* A veth and nf_tables in a namespace of a child's own. */
	pid = fork();
	if (pid == 0) {
		struct cordon_error err = { 0 };
		struct cordon_link *l;
		struct cordon_nft *nft;
		struct nlmsghdr *nlh;

		if (unshare(CLONE_NEWNET) < 0 || !(l = cordon_link_open(&err)) ||
		    cordon_link_veth(l, "probe0", "probe1", -1, 0, &err) < 0)
			_exit(1);
		nft = cordon_nft_open(&err);
		if (!nft)
			_exit(2);
		nlh = nft_request_msg(nft, NFT_MSG_GETTABLE, NLM_F_DUMP);
		_exit(nft_request(nft, nlh, NULL, NULL, "tables", &err) < 0 ? 2 : 0);
	}
	status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		snprintf(why, len, "no %s in a new network namespace",
			 WIFEXITED(status) && WEXITSTATUS(status) == 2 ? "nf_tables" : "veth");
		return why;
	}
	return NULL;
}

int main(void)
{
	const char *user = getenv("CORDON_TEST_USER");
	struct passwd *pw;
	char why[256];
	const char *skip;
	struct cordon_error err = { 0 };
	int ret;

	/* The engine calls the netlink libraries through tables: filled as cordon fills them. */
	if (cordon_netlib_load(CORDON_NETLIB_ALL, &err) < 0) {
		printf("Bail out! %s\n", err.msg);
		return EXIT_FAILURE;
	}
	helper = getenv("CORDON_NETHELPER");
	skip = probe(why, sizeof(why));
	if (skip && unit_ci()) {
		printf("Bail out! %s (CI=true: CI can run this)\n", skip);
		return EXIT_FAILURE;
	}
	if (skip) {
		printf("1..0 # SKIP %s\n", skip);
		return EXIT_SUCCESS;
	}
	pw = getpwnam(user && *user ? user : "cordon-test");
	if (pw && pw->pw_uid != 0) {
		test_user = *pw;
		test_user.pw_name = cordon_xstrdup(pw->pw_name);
		make_capped_copy();
	} else {
		printf("# no test user %s: the unprivileged cases skip\n",
		       user && *user ? user : "cordon-test");
	}
	/* The helper's privilege boundary is what the unprivileged cases test. */
	if (!have_user_setup() && unit_ci()) {
		printf("Bail out! the unprivileged cases need the test user and a copy of "
		       "the helper with file capabilities (CI=true: CI can run them)\n");
		unit_rm_rf(capped_dir);
		return EXIT_FAILURE;
	}
	ret = unit_run(nethelper_suite());
	unit_rm_rf(capped_dir);
	return ret;
}
