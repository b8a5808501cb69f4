// SPDX-License-Identifier: Apache-2.0
/*
 * The network flags of a spec, validated before anything exists: the
 * allowlist, the DNS upstreams, the backend and the programs it runs.
 * A bad value fails here with exit 125 and a message that names it.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cordon/spec.h"

#define RESOLV_CONF "/etc/resolv.conf"

int cordon_dns_upstream_parse(const char *value, struct sockaddr_storage *out)
{
	_cleanup_free_ char *host = NULL;
	const char *port_text = NULL;
	struct cordon_addr a;
	uint64_t port = 53;

	memset(out, 0, sizeof(*out));
	if (!value || !*value)
		return -EINVAL;
	if (value[0] == '[') {
		const char *end = strchr(value, ']');

		if (!end || (end[1] != '\0' && end[1] != ':'))
			return -EINVAL;
		host = strndup(value + 1, (size_t)(end - value - 1));
		if (end[1] == ':')
			port_text = end + 2;
	} else {
		const char *colon = strchr(value, ':');

		/* One colon: IPv4 with a port; more: a bare IPv6 address. */
		if (colon && !strchr(colon + 1, ':')) {
			host = strndup(value, (size_t)(colon - value));
			port_text = colon + 1;
		} else {
			host = strdup(value);
		}
	}
	if (!host)
		return -ENOMEM;
	if (cordon_addr_parse(host, &a) < 0)
		return -EINVAL;
	if (port_text && (cordon_parse_u64(port_text, &port) < 0 || port == 0 || port > 65535))
		return -EINVAL;
	if (a.family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		sin->sin_addr = a.u.v4;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sin6->sin6_addr = a.u.v6;
	}
	return 0;
}

static bool is_loopback(const struct cordon_addr *a)
{
	if (a->family == AF_INET)
		return a->u.bytes[0] == 127;
	return IN6_IS_ADDR_LOOPBACK(&a->u.v6) ||
	       (IN6_IS_ADDR_V4MAPPED(&a->u.v6) && a->u.bytes[12] == 127);
}

size_t cordon_resolv_conf_nameservers(const char *text, struct sockaddr_storage *out, size_t cap,
				      size_t *skipped)
{
	size_t n = 0;

	*skipped = 0;
	for (const char *line = text; line && *line;) {
		const char *end = strchrnul(line, '\n');
		char buf[128];
		size_t len = (size_t)(end - line);
		char *p, *word;

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			p = buf + strspn(buf, " \t");
			if (strncmp(p, "nameserver", 10) == 0 && (p[10] == ' ' || p[10] == '\t')) {
				struct cordon_addr a;

				word = p + 10 + strspn(p + 10, " \t");
				word[strcspn(word, " \t\r#;%")] = '\0';
				if (cordon_addr_parse(word, &a) == 0) {
					if (is_loopback(&a))
						(*skipped)++;
					else if (n < cap && cordon_dns_upstream_parse(word, &out[n]) == 0)
						n++;
				}
			}
		}
		line = *end ? end + 1 : end;
	}
	return n;
}

static int default_upstreams(struct cordon_net_spec *net, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t skipped;
	int r = cordon_read_file_at(AT_FDCWD, RESOLV_CONF, &text, NULL);

	if (r < 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, -r,
					"DNS upstream: reading %s (name one with --dns-upstream)",
					RESOLV_CONF);
	net->n_upstreams = cordon_resolv_conf_nameservers(text, net->upstreams,
							  CORDON_DNS_UPSTREAM_MAX, &skipped);
	if (net->n_upstreams == 0)
		return cordon_error_set(
			err, CORDON_E_NET_POLICY, 0,
			"DNS upstream: %s has no usable nameserver%s; name one with --dns-upstream ADDR",
			RESOLV_CONF,
			skipped ? " (only loopback stubs, which the sandbox cannot share)" : "");
	return 0;
}

/* An executable file, or NULL. */
static char *find_program(const char *const *candidates)
{
	for (; *candidates; candidates++)
		if (**candidates && access(*candidates, X_OK) == 0)
			return cordon_xstrdup(*candidates);
	return NULL;
}

/* The build tree's helper when cordon runs from the build tree. */
static const char *nethelper_default(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t blen = strlen(CORDON_BUILD_DIR);

	if (n > 0) {
		exe[n] = '\0';
		if ((size_t)n > blen && strncmp(exe, CORDON_BUILD_DIR, blen) == 0 &&
		    exe[blen] == '/')
			return CORDON_BUILD_NETHELPER;
	}
	return CORDON_INSTALL_NETHELPER;
}

const char *cordon_nethelper_program(void)
{
	const char *env = getenv("CORDON_NETHELPER");

	return env && *env ? env : nethelper_default();
}

static int resolve_backend(struct cordon_net_spec *net, struct cordon_error *err)
{
	if (net->backend == CORDON_NET_BACKEND_AUTO)
		net->backend = cordon_host_root() ? CORDON_NET_BACKEND_VETH : CORDON_NET_BACKEND_PASTA;
	if (net->backend == CORDON_NET_BACKEND_VETH) {
		/* CORDON_NETHELPER: an administrator's install elsewhere. It runs with our own
		 * privileges (plus its file capabilities, which only the administrator sets). */
		const char *env = getenv("CORDON_NETHELPER");
		const char *candidates[] = { env && *env ? env : "", nethelper_default(), NULL };

		if (net->allow_host_loopback)
			return cordon_error_set(
				err, CORDON_E_USAGE, 0,
				"--allow-host-loopback needs --net-backend pasta: the veth uplink "
				"never reaches the host's loopback");
		net->helper_path = find_program(candidates);
		if (!net->helper_path)
			return cordon_error_set(err, CORDON_E_NET_POLICY, ENOENT,
						"--net-backend veth: cordon-nethelper not found at %s",
						env && *env ? env : nethelper_default());
		return 0;
	}
	{
		const char *env = getenv("CORDON_PASTA");
		const char *candidates[] = { env && *env ? env : "", "/usr/bin/pasta",
					     "/usr/local/bin/pasta", NULL };

		if (net->pool)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--net-pool applies to --net-backend veth only");
		net->pasta_path = find_program(candidates);
		if (!net->pasta_path)
			return cordon_error_set(err, CORDON_E_NET_POLICY, ENOENT,
						"--net-backend pasta: pasta not found (Debian package "
						"passt)");
		/* pasta opens it as the sandbox's root, that is, as us. */
		if (access("/dev/net/tun", R_OK | W_OK) < 0)
			return cordon_error_set(err, CORDON_E_NET_POLICY, errno,
						"--net-backend pasta: /dev/net/tun is not usable by "
						"uid %u",
						(unsigned)getuid());
	}
	return 0;
}

static int build_allowlist(struct cordon_net_spec *net, struct cordon_error *err)
{
	net->allowlist = cordon_allowlist_new();
	for (size_t i = 0; i < net->n_allow; i++)
		if (cordon_allowlist_add(net->allowlist, net->allow[i], net->allow_any, err) < 0)
			return cordon_error_wrap(err, "--net-allow");
	for (size_t i = 0; i < net->n_allow_files; i++)
		if (cordon_allowlist_add_file(net->allowlist, net->allow_files[i], net->allow_any,
					      err) < 0)
			return cordon_error_wrap(err, "--net-allow-file");
	if (cordon_allowlist_count(net->allowlist) == 0)
		return cordon_error_set(err, CORDON_E_NET_POLICY, 0,
					"the allowlist is empty: networking needs at least one "
					"--net-allow entry");
	return cordon_gateway_check_allowlist(net->allowlist, err);
}

int cordon_spec_finalize_net(struct cordon_spec *spec, struct cordon_error *err)
{
	struct cordon_net_spec *net = &spec->net;

	net->enabled = net->n_allow > 0 || net->n_allow_files > 0;
	if (!net->enabled) {
		const char *flag = net->n_upstream_text ? "--dns-upstream"
				   : net->dns_given     ? "--dns"
				   : net->allow_host_loopback ? "--allow-host-loopback"
				   : net->backend != CORDON_NET_BACKEND_AUTO ? "--net-backend"
				   : net->pool ? "--net-pool"
				   : net->max_flows ? "--net-max-flows"
				   : net->allow_any ? "--net-allow-any"
						    : NULL;

		if (flag)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"%s needs --net-allow (without it the sandbox has "
						"no network but lo)",
						flag);
		return 0;
	}
	if (spec->userns == CORDON_USERNS_HOST)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--net-allow needs a user namespace (not --userns host)");
	if (build_allowlist(net, err) < 0)
		return -1;
	if (net->dns_none && net->n_upstream_text)
		return cordon_error_set(err, CORDON_E_USAGE, 0,
					"--dns none and --dns-upstream exclude each other");
	if (net->pool) {
		struct cordon_cidr c;
		bool host_bits;

		if (cordon_cidr_parse(net->pool, &c, &host_bits) < 0 || c.addr.family != AF_INET ||
		    host_bits)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--net-pool '%s': expected an IPv4 network like "
						"10.231.0.0/16",
						net->pool);
	}
	if (!net->max_flows)
		net->max_flows = CORDON_NET_FLOWS_DEFAULT;
	if (net->n_upstream_text > CORDON_DNS_UPSTREAM_MAX)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--dns-upstream: at most %d",
					CORDON_DNS_UPSTREAM_MAX);
	for (size_t i = 0; i < net->n_upstream_text; i++) {
		if (cordon_dns_upstream_parse(net->upstream_text[i], &net->upstreams[i]) < 0)
			return cordon_error_set(err, CORDON_E_USAGE, 0,
						"--dns-upstream '%s': expected ADDR, ADDR:PORT or "
						"[ADDR]:PORT",
						net->upstream_text[i]);
		net->n_upstreams++;
	}
	if (!net->dns_none && net->n_upstreams == 0 && default_upstreams(net, err) < 0)
		return -1;
	return resolve_backend(net, err);
}
