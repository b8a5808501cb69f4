// SPDX-License-Identifier: Apache-2.0
/*
 * cordon-nethelper: the rootful uplink of one gateway namespace
 * (man/cordon-nethelper.8, docs in include/cordon/nethelper.h).
 *
 * It runs with the privilege of file capabilities (CAP_NET_ADMIN only) on
 * behalf of a caller who may have none, so the order below is the point:
 * first make the process safe to be in (fds, capabilities), then believe
 * nothing from the caller until it is validated, then take the lock and
 * change the host. Every change the helper makes to the host is either
 * static (the table, ip_forward) or dies with the gateway namespace (the
 * veth); on failure after the veth exists, the veth is deleted again.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <yajl/yajl_gen.h>

#include "helper.h"

/*
 * Each holder keeps the lock for milliseconds, but fifty sandboxes started
 * at once on a loaded two-core machine queued past 10 s (the network
 * concurrency benchmark). Just under the client's 30 s for the whole run.
 */
#define LOCK_TIMEOUT_MS 25000
#define IP_FORWARD "/proc/sys/net/ipv4/ip_forward"

/* One /30 of the pool: network, host end (.1), gateway end (.2). */
struct uplink {
	char host_if[IFNAMSIZ];
	struct cordon_addr host, gateway;
	int ifindex;
	bool enabled_ip_forward;
};

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}

/* fds 0-2 exist (else an error message could land in a netlink socket);
 * nothing else of the caller's is open. */
static int fds_sanitize(struct cordon_error *err)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", O_RDWR) != fd)
			return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "/dev/null");
	}
	if (close_range(3, ~0u, 0) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "close_range");
	return 0;
}

/*
 * Keep CAP_NET_ADMIN (if we have it) and nothing else, whatever the file
 * capabilities or a root caller gave us; no exec can raise anything again.
 */
static int caps_keep_net_admin(struct cordon_error *err)
{
	_cleanup_(cap_freep) cap_t now = cap_get_proc(), want = cap_init();
	const cap_value_t net_admin = CAP_NET_ADMIN;
	cap_flag_value_t have = CAP_CLEAR;

	if (!now || !want)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "capabilities");
	if (cap_get_flag(now, CAP_NET_ADMIN, CAP_PERMITTED, &have) == 0 && have == CAP_SET) {
		cap_set_flag(want, CAP_PERMITTED, 1, &net_admin, CAP_SET);
		cap_set_flag(want, CAP_EFFECTIVE, 1, &net_admin, CAP_SET);
	}
	if (cap_set_proc(want) < 0 || cap_reset_ambient() < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "dropping capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "no_new_privs");
	return 0;
}

static int caps_require_net_admin(struct cordon_error *err)
{
	_cleanup_(cap_freep) cap_t now = cap_get_proc();
	cap_flag_value_t have = CAP_CLEAR;

	if (!now || cap_get_flag(now, CAP_NET_ADMIN, CAP_EFFECTIVE, &have) < 0 || have != CAP_SET)
		return cordon_error_set(err, CORDON_E_NET_POLICY, EPERM,
					"CAP_NET_ADMIN is missing: run as root or install with "
					"`setcap cap_net_admin+ep` (cordon-nethelper(8))");
	return 0;
}

/* "cdr-" and the first 4 bytes of SHA-256(id) in hex. */
static void host_if_name(const char *id, char out[IFNAMSIZ])
{
	struct cordon_sha256 c;
	uint8_t digest[32];
	char hex[9];

	cordon_sha256_init(&c);
	cordon_sha256_update(&c, id, strlen(id));
	cordon_sha256_final(&c, digest);
	cordon_hex(digest, 4, hex);
	snprintf(out, IFNAMSIZ, "cdr-%s", hex);
}

static bool overlaps(uint32_t a, unsigned pa, uint32_t b, unsigned pb)
{
	unsigned p = pa < pb ? pa : pb;
	uint32_t mask = p ? ~0u << (32 - p) : 0;

	return (a & mask) == (b & mask);
}

/*
 * The first /30 of the pool that overlaps no network of any address here:
 * not the other sandboxes' /30s, and not a LAN the host is on (a /30
 * inside it would take a piece of that LAN away from the host).
 */
static int uplink_choose(struct hostlink *h, const struct cordon_cidr *pool, struct uplink *u,
			 struct cordon_error *err)
{
	_cleanup_free_ struct cordon_cidr *nets = NULL;
	uint32_t base = ntohl(pool->addr.u.v4.s_addr);
	uint32_t count = 1u << (30 - pool->prefix);
	char text[INET6_ADDRSTRLEN + 4];
	size_t n = 0;

	if (hostlink_ipv4_networks(h, &nets, &n, err) < 0)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t block = base + 4 * i;
		bool used = false;

		for (size_t k = 0; k < n && !used; k++)
			used = overlaps(block, 30, ntohl(nets[k].addr.u.v4.s_addr), nets[k].prefix);
		if (used)
			continue;
		u->host.family = u->gateway.family = AF_INET;
		u->host.u.v4.s_addr = htonl(block + 1);
		u->gateway.u.v4.s_addr = htonl(block + 2);
		return 0;
	}
	cordon_cidr_format(pool, text, sizeof(text));
	return cordon_error_set(err, CORDON_E_NET_POLICY, ENOSPC,
				"pool %s: every /30 overlaps an address of a host link", text);
}

static int uplink_create(struct hostlink *h, const struct helper_request *req, struct uplink *u,
			 struct cordon_error *err)
{
	struct cordon_error ignored;

	host_if_name(req->id, u->host_if);
	if (hostlink_create_veth(h, u->host_if, CORDON_NETHELPER_GROUP, CORDON_NETHELPER_GATEWAY_IF,
				 req->netns_fd, &u->ifindex, err) < 0)
		return -1;
	if (hostlink_add_ipv4(h, u->ifindex, &u->host, 30, err) < 0 ||
	    hostlink_set_up(h, u->ifindex, err) < 0) {
		/* Deleting one end deletes both. */
		hostlink_delete(h, u->ifindex, &ignored);
		return cordon_error_wrap(err, "%s", u->host_if);
	}
	return 0;
}

/* net.ipv4.ip_forward of this namespace on; CAP_NET_ADMIN is what makes
 * the sysctl writable (net_ctl_permissions), not the uid. */
static int ip_forward_enable(bool *enabled, struct cordon_error *err)
{
	_cleanup_free_ char *value = NULL;
	size_t len = 0;
	int r = cordon_read_file_at(AT_FDCWD, IP_FORWARD, &value, &len);

	*enabled = false;
	if (r < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, -r, "reading " IP_FORWARD);
	if (len > 0 && value[0] == '1')
		return 0;
	r = cordon_write_file_at(AT_FDCWD, IP_FORWARD, "1\n", 2);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, -r, "enabling " IP_FORWARD);
	*enabled = true;
	return 0;
}

static void gen_str(yajl_gen g, const char *key, const char *value)
{
	yajl_gen_string(g, (const unsigned char *)key, strlen(key));
	yajl_gen_string(g, (const unsigned char *)value, strlen(value));
}

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

static int reply(const struct uplink *u, struct cordon_error *err)
{
	_cleanup_(yajl_gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	char host[INET6_ADDRSTRLEN], gateway[INET6_ADDRSTRLEN];
	const unsigned char *out;
	size_t len;

	if (!g)
		return cordon_error_set(err, CORDON_E_INTERNAL, ENOMEM, "reply");
	cordon_addr_format(&u->host, host, sizeof(host));
	cordon_addr_format(&u->gateway, gateway, sizeof(gateway));
	yajl_gen_map_open(g);
	gen_str(g, "host_if", u->host_if);
	gen_str(g, "host_addr", host);
	gen_str(g, "gateway_addr", gateway);
	yajl_gen_string(g, (const unsigned char *)"prefix", 6);
	yajl_gen_integer(g, 30);
	yajl_gen_string(g, (const unsigned char *)"enabled_ip_forward", 18);
	yajl_gen_bool(g, u->enabled_ip_forward);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &out, &len);
	if (cordon_write_all(STDOUT_FILENO, out, len) < 0 ||
	    cordon_write_all(STDOUT_FILENO, "\n", 1) < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, errno, "writing the reply");
	return 0;
}

static void nft_closep(struct cordon_nft **n)
{
	cordon_nft_close(*n);
}

static void hostlink_closep(struct hostlink **h)
{
	hostlink_close(*h);
}

static int run(struct cordon_error *err)
{
	struct helper_request req = { .netns_fd = -1 };
	_cleanup_(nft_closep) struct cordon_nft *nft = NULL;
	_cleanup_(hostlink_closep) struct hostlink *h = NULL;
	_cleanup_close_ int netns_fd = -1;
	struct uplink u = { 0 };
	bool created;

	/* 1. A sane process before anything else: fds, then privilege. */
	if (fds_sanitize(err) < 0 || caps_keep_net_admin(err) < 0)
		return -1;

	/* 2. The caller's request, validated whole; no privilege used yet. */
	if (request_read(STDIN_FILENO, &req, err) < 0)
		return -1;
	netns_fd = req.netns_fd;
	if (request_check_netns(&req, err) < 0 || caps_require_net_admin(err) < 0)
		return -1;

	/* 3. Under the lock: choosing a /30 and taking it must be one step. */
	nft = cordon_nft_open(err);
	if (!nft || cordon_nft_host_lock(nft, LOCK_TIMEOUT_MS, err) < 0)
		return -1;
	h = hostlink_open(err);
	if (!h || uplink_choose(h, &req.pool, &u, err) < 0)
		return -1;

	/* 4. The static table before the first cordon link can carry a packet. */
	if (cordon_nft_host_install(nft, &created, err) < 0)
		return -1;

	/* 5. The veth; its host end is configured, the gateway end is not. */
	if (uplink_create(h, &req, &u, err) < 0)
		return -1;

	/* 6. Forwarding last: nothing is switched on for a failed request. */
	if (ip_forward_enable(&u.enabled_ip_forward, err) < 0) {
		struct cordon_error ignored;

		hostlink_delete(h, u.ifindex, &ignored);
		return -1;
	}
	return reply(&u, err);
}

int main(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	char msg[1024];

	(void)argv;
	helper_netlib_bind();
	if (argc > 1)
		cordon_error_set(
			&err, CORDON_E_NET_POLICY, 0,
			"takes no arguments; the request comes on stdin (cordon-nethelper(8))");
	else if (run(&err) == 0)
		return 0;
	cordon_error_message(&err, msg, sizeof(msg));
	/* One line of text, whatever a refused value contained. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stderr, "cordon-nethelper: %s: %s\n", cordon_code_name(err.code), msg);
	return 1;
}
