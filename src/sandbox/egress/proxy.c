// SPDX-License-Identifier: Apache-2.0
/*
 * The DNS proxy's process, and the supervisor's end of its channel
 * (docs/security.md, "The DNS proxy's process").
 *
 * The proxy is the one part of cordon that parses bytes the workload
 * chooses, so it holds nothing worth taking: the supervisor forks it,
 * and before it reads a byte it
 *   - joins the sandbox's user namespace and the gateway namespace G,
 *     where its sockets are (the workload's DNS sockets, made by the
 *     init; the upstream ones it makes itself, in G);
 *   - gets a mount namespace of its own whose root is an empty,
 *     read-only tmpfs: no file of the host's is reachable by a path;
 *   - becomes an id of the sandbox's range that is neither host root
 *     nor the caller where the maps allow (nobody), with no capability
 *     in any set, securebits that keep it so, not dumpable,
 *     no_new_privs, small rlimits, and a seccomp filter of its socket,
 *     epoll and memory calls that kills it on anything else;
 *   - keeps the DNS listeners (UDP and TCP on the gateway's IPv4 and
 *     IPv6 address), the channel to us, and /dev/null as stdio.
 * It cannot write a rule: it asks us to admit an address (ADMIT), and
 * we check the message, re-vet every address against the vetting table
 * and everything the gateway blocks, and insert what passes. A proxy
 * that dies, or breaks the protocol, ends the sandbox: the workload's
 * DNS would otherwise silently stop, or worse, run on a proxy we no
 * longer understand.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "config.h"
#include "cordon/security.h"
#include "egress.h"

#define PROXY_TITLE "cordon-dnsproxy"
#define PROXY_STATS_TIMEOUT_MS 250
#define PROXY_POLICY_TIMEOUT_MS 5000
#define PROXY_SOCKETS_PER_S 200
#define PROXY_ADMITS_PER_S 1000

/*
 * One more request against a bucket of limit a second that holds two
 * seconds' worth: true when it is empty. Counted as we read, not as the
 * proxy sent: a second in which we were not scheduled leaves its
 * requests to the next, and a proxy that keeps to the limit must not
 * be taken for one that breaks it (a window of one second did, under
 * load). A proxy above the limit for long still empties it.
 */
static bool rate_exceeded(uint64_t *at_us, unsigned *tokens, unsigned limit)
{
	uint64_t now = cordon_now_mono_us(), add = (now - *at_us) * limit / 1000000;

	if (*tokens + add >= 2 * (uint64_t)limit) {
		*tokens = 2 * limit;
		*at_us = now;
	} else if (add) {
		*tokens += (unsigned)add;
		*at_us += add * 1000000 / limit;
	}
	if (*tokens == 0)
		return true;
	--*tokens;
	return false;
}

/* Where the proxy's fds are once it has closed the rest: the DNS listeners as in SYNC_NET. */
enum {
	FD_CTL = 3,
	FD_UDP,
	FD_TCP = FD_UDP + CORDON_GW_DNS_SOCKETS,
	FD_SOCKETS = FD_TCP + CORDON_GW_DNS_SOCKETS, /* the channel upstream sockets come by */
	FD_USERNS,
	FD_NETNS,
	FD_CONFIG, /* a sealed memfd: what the supervisor's memory told the forked proxy */
	FD_EXE,	   /* our own binary, to execveat: close-on-exec */
	FD_COUNT,
};
/* The filter lets sendto name an address only on the UDP listeners (seccomp-gen.c). */
_Static_assert(FD_UDP == CORDON_DNSPROXY_FD_UDP && CORDON_GW_DNS_SOCKETS == CORDON_DNSPROXY_N_UDP,
	       "the proxy's UDP listeners are where its seccomp filter expects them");

/* Every failure here is the DNS proxy's: "network: DNS proxy: ..." */
#define fail(err, errnum, ...) egress_fail(err, errnum, "DNS proxy: " __VA_ARGS__)

/* --- the proxy's ids ------------------------------------------------------------ */

/*
 * An id of map for the proxy: nobody (65534) where the map gives it a
 * host id that is neither root nor the caller, else the highest id that
 * is, else (a single-id map) the one id there is, single.
 */
static uint32_t pick_id(const struct cordon_idmap *map, uint32_t caller, uint32_t single)
{
	int64_t o = cordon_idmap_to_outside(map, 65534);

	if (o > 0 && o != caller)
		return 65534;
	for (size_t i = map->n; i-- > 0;) {
		const struct cordon_idmap_extent *e = &map->extent[i];

		/* The last two ids of an extent: one of them is neither root nor the caller. */
		for (uint32_t k = 0; k < 2 && k < e->count; k++) {
			uint32_t out = e->outside + e->count - 1 - k;

			if (out != 0 && out != caller)
				return e->inside + e->count - 1 - k;
		}
	}
	return single;
}

void sandbox_net_proxy_ids(struct sandbox_net *n, const struct cordon_idplan *plan)
{
	if (!plan) {
		/*
		 * --userns host: G belongs to the host's user namespace. Host
		 * root becomes the top id of cordon's rootful range, which no
		 * host process runs as (nobody is one many do: any of them
		 * could signal it).
		 */
		n->proxy_uid = geteuid() == 0 ? CORDON_ROOTFUL_UID_BASE + 65535 : geteuid();
		n->proxy_gid = geteuid() == 0 ? CORDON_ROOTFUL_UID_BASE + 65535 : getegid();
		n->proxy_setgroups = geteuid() == 0;
		return;
	}
	n->proxy_uid = pick_id(&plan->uid, geteuid(), n->spec->uid);
	n->proxy_gid = pick_id(&plan->gid, getegid(), n->spec->gid);
	n->proxy_setgroups = !plan->deny_setgroups;
}

/* --- the proxy process ----------------------------------------------------------- */

static _Noreturn void proxy_die(const struct cordon_error *err)
{
	struct cordon_dnsctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_FAILED;
	/* Cut to the message's size: the supervisor needs the start of it. */
	snprintf(m.name, sizeof(m.name), "%.*s", (int)sizeof(m.name) - 1, err->msg);
	if (err->errnum) {
		size_t len = strlen(m.name);

		snprintf(m.name + len, sizeof(m.name) - len, ": %s", strerror(err->errnum));
	}
	send(FD_CTL, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
	_exit(1);
}

/* fds[i] into FD_CTL + i (-1 stays unused); stdio on /dev/null; every other fd closed. */
static int proxy_fds(const int fds[FD_COUNT - FD_CTL])
{
	int high[FD_COUNT - FD_CTL], devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (devnull < 0)
		return -1;
	/* Above everything first, so that no dup2 below clobbers a source. */
	for (int i = 0; i < FD_COUNT - FD_CTL; i++) {
		high[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, 100) : -1;
		if (fds[i] >= 0 && high[i] < 0)
			return -1;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(devnull, i) < 0)
			return -1;
	for (int i = 0; i < FD_COUNT - FD_CTL; i++)
		if (high[i] >= 0 && dup2(high[i], FD_CTL + i) < 0)
			return -1;
	/* Across the execve: these and nothing else. */
	return close_range(FD_COUNT, ~0U, 0);
}

/* A mount namespace of our own whose root is an empty, read-only tmpfs. */
static int proxy_empty_root(struct cordon_error *err)
{
	_cleanup_close_ int fs = -1, mnt = -1;

	if (unshare(CLONE_NEWNS) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "a mount namespace");
	fs = cordon_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || cordon_fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    cordon_fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "1", 0) < 0 ||
	    cordon_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0 ||
	    cordon_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "an empty root");
	mnt = cordon_fsmount(fs, FSMOUNT_CLOEXEC,
			     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				     MOUNT_ATTR_NOEXEC);
	if (mnt < 0 || fchdir(mnt) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return cordon_error_set(err, CORDON_E_MOUNT, errno, "entering an empty root");
	return 0;
}

static int proxy_rlimits(struct cordon_error *err)
{
	static const struct {
		int resource;
		rlim_t value;
	} limits[] = {
		{ RLIMIT_CORE, 0 },
		{ RLIMIT_FSIZE, 0 },
		{ RLIMIT_NPROC, 0 },
		{ RLIMIT_MEMLOCK, 0 },
		{ RLIMIT_MSGQUEUE, 0 },
		{ RLIMIT_NOFILE, CORDON_DNSPROXY_NOFILE },
#if !defined(__SANITIZE_ADDRESS__)
		/* Its buffers come to a few MiB; a sanitizer's shadow memory is terabytes of
		   address space. */
		{ RLIMIT_AS, 512u << 20 },
#endif
	};

	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		struct rlimit rl = { limits[i].value, limits[i].value };

		if (setrlimit(limits[i].resource, &rl) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno, "rlimit %s",
						cordon_rlimit_name(limits[i].resource));
	}
	return 0;
}

/* --- what the fresh image is told ------------------------------------------------ */

/*
 * The proxy's settings, as lines of text in a sealed memfd: the image it
 * runs is a fresh one (execveat of our own binary, no environment), so
 * nothing of the supervisor's memory (the caller's environment, the
 * whole spec, hooks and their environments) is in it. Made in the
 * supervisor, before the fork.
 */
static int config_write(const struct sandbox_net *n, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_close_ int fd = memfd_create("cordon-dnsproxy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int out;

	if (fd < 0)
		return fail(err, errno, "memfd");
	out = dup(fd);
	f = out >= 0 ? fdopen(out, "w") : NULL;
	if (!f) {
		if (out >= 0)
			close(out);
		return fail(err, errno, "memfd");
	}
	fprintf(f, "parent %d\nuid %u\ngid %u\nsetgroups %d\nuserns %d\nttl_floor %u\nany %d\n",
		(int)getpid(), (unsigned)n->proxy_uid, (unsigned)n->proxy_gid, n->proxy_setgroups,
		n->uses_userns, n->ttl_floor_s, net->allow_any);
	for (size_t i = 0; i < net->n_upstreams; i++) {
		struct cordon_addr a = { .family = net->upstreams[i].ss_family };
		char text[INET6_ADDRSTRLEN];
		unsigned port;

		if (a.family == AF_INET6) {
			const struct sockaddr_in6 *sa = (const void *)&net->upstreams[i];

			a.u.v6 = sa->sin6_addr;
			port = ntohs(sa->sin6_port);
		} else {
			const struct sockaddr_in *sa = (const void *)&net->upstreams[i];

			a.u.v4 = sa->sin_addr;
			port = ntohs(sa->sin_port);
		}
		cordon_addr_format(&a, text, sizeof(text));
		fprintf(f, "upstream %s %u\n", text, port);
	}
	for (size_t i = 0; i < cordon_allowlist_count(net->allowlist); i++)
		fprintf(f, "allow %s\n", cordon_allowlist_entry(net->allowlist, i)->text);
	if (fflush(f) != 0 || ferror(f))
		return fail(err, errno, "memfd");
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0 ||
	    lseek(fd, 0, SEEK_SET) < 0)
		return fail(err, errno, "sealing the memfd");
	return TAKE_FD(fd);
}

struct proxy_config {
	pid_t parent;
	uid_t uid;
	gid_t gid;
	bool setgroups, userns, any;
	uint32_t ttl_floor_s;
	struct sockaddr_storage upstreams[CORDON_DNSPROXY_MAX_UPSTREAMS];
	size_t n_upstreams;
	struct cordon_allowlist *allowlist;
};

static void to_sockaddr(const struct cordon_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sa = (struct sockaddr_in6 *)ss;

		sa->sin6_family = AF_INET6;
		sa->sin6_addr = a->u.v6;
		sa->sin6_port = htons(port);
	} else {
		struct sockaddr_in *sa = (struct sockaddr_in *)ss;

		sa->sin_family = AF_INET;
		sa->sin_addr = a->u.v4;
		sa->sin_port = htons(port);
	}
}

static int config_read(int fd, struct proxy_config *c, struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;
	struct stat st;

	/* Sealed by the supervisor: its size is what it wrote. */
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > (16 << 20))
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "reading its settings");
	text = cordon_xmalloc((size_t)st.st_size + 1);
	if (pread(fd, text, (size_t)st.st_size, 0) != st.st_size)
		return cordon_error_set(err, CORDON_E_INTERNAL, errno, "reading its settings");
	text[st.st_size] = '\0';
	c->allowlist = cordon_allowlist_new();
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *value = strchr(line, ' ');
		uint64_t v = 0;

		if (!value)
			return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "setting '%s'",
						line);
		*value++ = '\0';
		if (strcmp(line, "allow") == 0) {
			if (cordon_allowlist_add(c->allowlist, value, c->any, err) < 0)
				return -1;
			continue;
		}
		if (strcmp(line, "upstream") == 0) {
			char *port = strchr(value, ' ');
			struct cordon_addr a;

			if (!port || c->n_upstreams == ARRAY_SIZE(c->upstreams))
				return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "upstream");
			*port++ = '\0';
			if (cordon_addr_parse(value, &a) < 0 || cordon_parse_u64(port, &v) < 0 ||
			    v > 65535)
				return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "upstream");
			to_sockaddr(&a, (uint16_t)v, &c->upstreams[c->n_upstreams++]);
			continue;
		}
		if (cordon_parse_u64(value, &v) < 0 || v > UINT32_MAX)
			return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "setting %s", line);
		if (strcmp(line, "parent") == 0)
			c->parent = (pid_t)v;
		else if (strcmp(line, "uid") == 0)
			c->uid = (uid_t)v;
		else if (strcmp(line, "gid") == 0)
			c->gid = (gid_t)v;
		else if (strcmp(line, "setgroups") == 0)
			c->setgroups = v != 0;
		else if (strcmp(line, "userns") == 0)
			c->userns = v != 0;
		else if (strcmp(line, "any") == 0)
			c->any = v != 0;
		else if (strcmp(line, "ttl_floor") == 0)
			c->ttl_floor_s = (uint32_t)v;
		else
			return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "setting %s", line);
	}
	if (c->n_upstreams == 0 || cordon_allowlist_count(c->allowlist) == 0 || c->parent <= 1)
		return cordon_error_set(err, CORDON_E_INTERNAL, EINVAL, "incomplete settings");
	return 0;
}

/*
 * The fresh image, from main: nothing but the fds at FD_CTL.. and its
 * settings. Joins G, confines itself, serves. Started by anything but
 * cordon's supervisor, it finds none of that and exits.
 */
int cordon_dnsproxy_main(void)
{
	struct proxy_config c = { 0 };
	struct cordon_gateway_addrs gw;
	struct cordon_addr clients[2];
	struct cordon_dnsproxy_config cfg;
	struct cordon_error err = { 0 };
	struct stat st;

	/* Our fds, or we were not started by a supervisor: then nothing to do. */
	if (fstat(FD_CONFIG, &st) < 0 || fstat(FD_CTL, &st) < 0 || !S_ISSOCK(st.st_mode))
		return CORDON_EXIT_FAILURE;
	/* An image run from an fd is named after the fd: its name, as ps shows it. */
	prctl(PR_SET_NAME, PROXY_TITLE, 0, 0, 0);
	if (config_read(FD_CONFIG, &c, &err) < 0)
		proxy_die(&err);
	close(FD_CONFIG);
	/* The death signal survives the execve; the parent must still be the one we had. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c.parent)
		_exit(1);
	/* Into G; its user namespace first, which gives CAP_SYS_ADMIN over G. */
	if (c.userns && setns(FD_USERNS, CLONE_NEWUSER) < 0) {
		cordon_error_set(&err, CORDON_E_NAMESPACE, errno,
				 "joining the sandbox's user namespace");
		proxy_die(&err);
	}
	if (setns(FD_NETNS, CLONE_NEWNET) < 0) {
		cordon_error_set(&err, CORDON_E_NAMESPACE, errno, "joining the gateway namespace");
		proxy_die(&err);
	}
	close(FD_USERNS);
	close(FD_NETNS);
	if (proxy_empty_root(&err) < 0 ||
	    cordon_security_drop_all(c.uid, c.gid, c.setgroups, &err) < 0)
		proxy_die(&err);
	/* The id change cleared the death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c.parent)
		_exit(1);
	/*
	 * The vetting table is built on first use (it sorts, and glibc's
	 * qsort asks the kernel for the memory size): build it before the
	 * filter would kill us for that.
	 */
	cordon_vet_table(AF_INET, &(const struct cordon_cidr *){ NULL });
	if (proxy_rlimits(&err) < 0 ||
	    cordon_seccomp_install(cordon_seccomp_dnsproxy(), 1, &err) < 0)
		proxy_die(&err);
	/* The workload's own addresses: the only ones it answers. */
	cordon_gateway_addrs(&gw);
	clients[0] = gw.workload4;
	clients[1] = gw.workload6;
	cfg = (struct cordon_dnsproxy_config){
		.allowlist = c.allowlist,
		.upstreams = c.upstreams,
		.n_upstreams = c.n_upstreams,
		.clients = clients,
		.n_clients = ARRAY_SIZE(clients),
		.qps = 200,
		.ttl_floor_s = c.ttl_floor_s,
	};
	/* From here on only the filter's calls: the serve loop is written for it. */
	if (cordon_dnsproxy_serve(&cfg, (const int[]){ FD_UDP, FD_UDP + 1 }, CORDON_GW_DNS_SOCKETS,
				  (const int[]){ FD_TCP, FD_TCP + 1 }, CORDON_GW_DNS_SOCKETS,
				  FD_CTL, FD_SOCKETS, &err) < 0)
		proxy_die(&err);
	_exit(0);
}

/*
 * In the forked child: a session of its own, default signals but those a
 * terminal or a group sends, its fds in place, then a fresh image of
 * our own binary with an empty environment and no argument but its name.
 */
static _Noreturn void proxy_exec(pid_t parent, const int fds[FD_COUNT - FD_CTL])
{
	static char *const argv[] = { PROXY_TITLE, NULL };
	/*
	 * No environment but the lab build's test-only variables (docs/network.md,
	 * "Testing"), which production builds read nowhere.
	 */
	char *envp[3] = { NULL };
	size_t n_env = 0;
	sigset_t none;

	for (char *const *e = environ; *e && n_env < ARRAY_SIZE(envp) - 1; e++)
		if (strncmp(*e, "CORDON_LAB_PUBLIC_CIDR=", 23) == 0 ||
		    strncmp(*e, "CORDON_LAB_DNS_FORGE_ADMIT=", 27) == 0)
			envp[n_env++] = *e;

	/* It dies with us; if we are gone already there is no one to serve for. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	/*
	 * A session of its own: a ^C, ^Z or hang-up of the caller's terminal
	 * goes to the supervisor's process group, and is the workload's to
	 * have (relayed), never the proxy's. Signals as for a new program
	 * (we block ours and read them from a signalfd), except that those a
	 * terminal or a group may send are ignored (that survives execve):
	 * only SIGKILL ends it.
	 */
	if (setsid() < 0)
		_exit(1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	for (const int *sig = (const int[]){ SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGTSTP, SIGTTIN,
					     SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2, 0 };
	     *sig; sig++)
		signal(*sig, SIG_IGN);
	if (proxy_fds(fds) < 0 || fcntl(FD_EXE, F_SETFD, FD_CLOEXEC) < 0)
		_exit(1);
	syscall(SYS_execveat, FD_EXE, "", argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

int sandbox_net_proxy_start(struct sandbox_net *n, const int dns[SYNC_NET_FDS - SYNC_NET_FD_UDP],
			    int userns, int gw_ns, struct cordon_error *err)
{
	pid_t parent = getpid(), pid;
	_cleanup_close_ int config = -1, exe = -1;
	int sp[2], ss[2];

	/* Our own binary (the sealed copy, when we run from one), and what to tell it. */
	exe = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (exe < 0)
		return fail(err, errno, "opening /proc/self/exe");
	config = config_write(n, err);
	if (config < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return fail(err, errno, "socketpair");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ss) < 0) {
		close(sp[0]);
		close(sp[1]);
		return fail(err, errno, "socketpair");
	}
	pid = fork();
	if (pid < 0) {
		close(sp[0]);
		close(sp[1]);
		close(ss[0]);
		close(ss[1]);
		return fail(err, errno, "fork");
	}
	if (pid == 0) {
		int fds[FD_COUNT - FD_CTL];

		fds[0] = sp[1];
		memcpy(fds + FD_UDP - FD_CTL, dns, sizeof(int) * 2 * CORDON_GW_DNS_SOCKETS);
		fds[FD_SOCKETS - FD_CTL] = ss[1];
		fds[FD_USERNS - FD_CTL] = n->uses_userns ? userns : -1;
		fds[FD_NETNS - FD_CTL] = gw_ns;
		fds[FD_CONFIG - FD_CTL] = config;
		fds[FD_EXE - FD_CTL] = exe;
		proxy_exec(parent, fds);
	}
	close(sp[1]);
	close(ss[1]);
	n->proxy_pid = pid;
	n->proxy_ctl = sp[0];
	n->proxy_sockets = ss[0];
	n->proxy_pidfd = cordon_pidfd_open(pid);
	if (n->proxy_pidfd < 0)
		return fail(err, errno, "pidfd");
	return 0;
}

/* --- the supervisor's end of the channel ----------------------------------------- */

/*
 * Its channel closed: it is exiting, or was killed. Its fds go before it
 * can be waited for, so give it a moment, for the reason to tell.
 */
static int proxy_gone(struct sandbox_net *n, struct cordon_error *err)
{
	struct pollfd p = { .fd = n->proxy_pidfd, .events = POLLIN };

	if (n->proxy_pidfd >= 0 && poll(&p, 1, 1000) > 0 && sandbox_net_proxy_died(n, err))
		return -1;
	return fail(err, 0, "it hung up");
}

/* A SOCK_SEQPACKET read of 0 bytes is a hang-up only if the peer is gone: else an empty message. */
static bool channel_hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP));
}

/*
 * One datagram from the proxy, checked: one message, or several EVENTs
 * (cordon_dnsctl_check_datagram). How many, 0 none waiting, -1 (err set)
 * a violation or hang-up.
 */
static int proxy_recv(struct sandbox_net *n, struct cordon_dnsctl_msg m[CORDON_DNSCTL_EVENTS_MAX],
		      struct cordon_error *err)
{
	const char *why = NULL;
	ssize_t r;
	int count;

	do
		r = recv(n->proxy_ctl, m, CORDON_DNSCTL_EVENTS_MAX * sizeof(*m),
			 MSG_DONTWAIT | MSG_TRUNC);
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN)
		return 0;
	if (r < 0)
		return fail(err, errno, "its channel");
	if (r == 0 && !channel_hung_up(n->proxy_ctl))
		return fail(err, EPROTO, "broke its protocol: an empty message");
	if (r == 0)
		return proxy_gone(n, err);
	count = cordon_dnsctl_check_datagram(m, (size_t)r, &why);
	if (count < 0)
		return fail(err, EPROTO, "broke its protocol: %s", why);
	return count;
}

static uint32_t clamp_ttl(const struct sandbox_net *n, uint32_t ttl)
{
	uint32_t floor = n->ttl_floor_s ? n->ttl_floor_s : CORDON_DNS_TTL_FLOOR_S;

	if (ttl < floor)
		return floor;
	return ttl > CORDON_DNS_TTL_CEILING_S ? CORDON_DNS_TTL_CEILING_S : ttl;
}

/*
 * The audit's dns event of an admit: our verdict, never the proxy's
 * word. The name was checked printable by cordon_dnsctl_check; the
 * addresses are those now in the allow sets, the TTL how long the
 * shortest of them stays there.
 */
static void audit_admit(struct sandbox_net *n, const struct cordon_dnsctl_msg *m,
			const struct cordon_addr *addrs, const enum cordon_vet *why,
			const uint64_t *until, uint64_t now_ms, int error)
{
	struct cordon_addr in[CORDON_DNS_ADMIT_MAX];
	size_t k = 0, refused = 0;
	uint64_t ttl_ms = UINT64_MAX;

	if (!n->audit)
		return;
	for (size_t i = 0; i < m->n_addrs; i++) {
		if (why[i] != CORDON_VET_OK || error) {
			refused += why[i] != CORDON_VET_OK;
			continue;
		}
		in[k++] = addrs[i];
		if (until[i] - now_ms < ttl_ms)
			ttl_ms = until[i] - now_ms;
	}
	cordon_audit_dns(n->audit,
			 &(struct cordon_audit_dns){
				 .name = m->name,
				 .qtype = m->qtype,
				 .allowed = cordon_allowlist_match_name(n->allowlist, m->name),
				 .addrs = in,
				 .n_addrs = k,
				 .ttl_s = k ? (uint32_t)(ttl_ms / 1000) : 0,
				 .n_refused = refused,
				 .admit = true,
			 });
	memcpy(n->last_admit_name, m->name, sizeof(n->last_admit_name));
	n->last_admit_qtype = m->qtype;
}

/*
 * The audit's dns event of a decision the proxy told of (EVENT): a
 * denied name, an allowed one answered without a new admit. Whether the
 * name is allowed is ours to say; of the addresses it says it gave out,
 * only those our table holds in the allow sets now are written. The
 * EVENT that follows an admit of the same question was written then.
 * Rate-limited in the audit (a workload asks as often as it likes).
 */
static void audit_event(struct sandbox_net *n, const struct cordon_dnsctl_msg *m)
{
	struct cordon_addr in[CORDON_DNS_ADMIT_MAX];
	uint64_t now_ms = cordon_now_mono_us() / 1000, ttl_ms = UINT64_MAX;
	bool after_admit;
	size_t k = 0;

	if (!n->audit || !m->name[0]) /* a query that was not parsed (rate-limited): no name */
		return;
	after_admit = m->n_addrs && m->qtype == n->last_admit_qtype &&
		      strcmp(m->name, n->last_admit_name) == 0;
	n->last_admit_name[0] = '\0';
	if (after_admit)
		return;
	for (size_t i = 0; i < m->n_addrs; i++) {
		struct cordon_addr a;
		uint64_t until;

		cordon_dnsctl_addr_get(&m->addrs[i], &a);
		until = egress_admitted_until(n, &a, now_ms);
		if (!until)
			continue;
		in[k++] = a;
		if (until - now_ms < ttl_ms)
			ttl_ms = until - now_ms;
	}
	cordon_audit_dns(n->audit,
			 &(struct cordon_audit_dns){
				 .name = m->name,
				 .qtype = m->qtype,
				 .allowed = cordon_allowlist_match_name(n->allowlist, m->name),
				 .addrs = in,
				 .n_addrs = k,
				 .ttl_s = k ? (uint32_t)(ttl_ms / 1000) : 0,
				 .n_refused = m->n_refused,
			 });
}

/*
 * ADMIT: whatever the proxy says, each address is vetted again here and
 * must lie outside everything the gateway blocks; what passes goes into
 * the allow sets, with the TTL asked for or what an earlier admit left,
 * if longer: one batch for each distinct timeout, one in the usual case.
 * The proxy hears the verdict of each.
 */
static void proxy_admit(struct sandbox_net *n, const struct cordon_dnsctl_msg *m)
{
	struct cordon_addr addrs[CORDON_DNS_ADMIT_MAX], batch[CORDON_DNS_ADMIT_MAX];
	enum cordon_vet why[CORDON_DNS_ADMIT_MAX];
	uint64_t until[CORDON_DNS_ADMIT_MAX];
	bool done[CORDON_DNS_ADMIT_MAX] = { false };
	struct cordon_dnsctl_msg reply;
	struct cordon_error err = { 0 };
	uint64_t now_ms = cordon_now_mono_us() / 1000;
	uint64_t want = now_ms + (uint64_t)clamp_ttl(n, m->ttl_s) * 1000;

	for (size_t i = 0; i < m->n_addrs; i++)
		cordon_dnsctl_addr_get(&m->addrs[i], &addrs[i]);
	cordon_dnsctl_vet_admit(n->allowlist, n->blocked, n->n_blocked, m->name, addrs,
				m->n_addrs, why);
	memset(&reply, 0, sizeof(reply));
	reply.type = CORDON_DNSCTL_ADMITTED;
	reply.token = m->token;
	reply.n_addrs = m->n_addrs;
	for (size_t i = 0; i < m->n_addrs; i++) {
		uint64_t held = egress_admitted_until(n, &addrs[i], now_ms);

		until[i] = held > want ? held : want;
		done[i] = why[i] != CORDON_VET_OK;
	}
	for (size_t i = 0; i < m->n_addrs && !reply.error; i++) {
		size_t k = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < m->n_addrs; j++)
			if (!done[j] && until[j] == until[i]) {
				batch[k++] = addrs[j];
				done[j] = j != i;
			}
		done[i] = true;
		if (cordon_nft_allow(n->nft, batch, k, (uint32_t)(until[i] - now_ms), &err) < 0) {
			reply.error = err.errnum ? -err.errnum : -EIO;
			break;
		}
		/* Recorded once in the sets: a refused insert promises nothing. */
		for (size_t j = 0; j < k; j++)
			egress_admitted_put(n, &batch[j], m->name, until[i], now_ms);
	}
	for (size_t i = 0; i < m->n_addrs; i++)
		cordon_dnsctl_addr_put(&addrs[i], why[i], &reply.addrs[i]);
	sandbox_net_report(n, m->name, true, reply.error ? NULL : addrs,
			   reply.error ? 0 : m->n_addrs, why);
	audit_admit(n, m, addrs, why, until, now_ms, reply.error);
	/* A proxy that does not read its answers times its own admit out. */
	send(n->proxy_ctl, &reply, sizeof(reply), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* EVENT: the proxy's own decisions, for the report; what it admitted is known from ADMIT. */
static void proxy_event(struct sandbox_net *n, const struct cordon_dnsctl_msg *m)
{
	struct cordon_addr refused[CORDON_DNS_ADMIT_MAX];
	enum cordon_vet why[CORDON_DNS_ADMIT_MAX];

	audit_event(n, m);
	/*
	 * The proxy's word, for the report only; whether the name is allowed
	 * is ours to say. Names it alone tells of take at most three
	 * quarters of the report's table: a flood of them cannot push out
	 * the names whose addresses we admitted.
	 */
	if (n->result->net.n_names >= CORDON_NET_REPORT_NAMES_MAX / 4 * 3 &&
	    !sandbox_net_report_has(n, m->name))
		return;
	for (size_t i = 0; i < m->n_refused; i++) {
		cordon_dnsctl_addr_get(&m->refused[i], &refused[i]);
		why[i] = (enum cordon_vet)m->refused[i].why;
	}
	sandbox_net_report(n, m->name, cordon_allowlist_match_name(n->allowlist, m->name),
			   refused, m->n_refused, why);
}

/* One message of the proxy's, checked: 0, 1 it became ready, -1 (err set) to end the sandbox. */
static int proxy_message(struct sandbox_net *n, const struct cordon_dnsctl_msg *m,
			 struct cordon_error *err)
{
	/* Before READY, the proxy says only that, or why it could not start. */
	if (!n->proxy_ready) {
		if (m->type == CORDON_DNSCTL_FAILED)
			return fail(err, 0, "%s", m->name);
		if (m->type != CORDON_DNSCTL_READY)
			return fail(err, EPROTO, "broke its protocol: message %u before READY",
				    m->type);
		n->proxy_ready = true;
		return 1;
	}
	switch (m->type) {
	case CORDON_DNSCTL_ADMIT:
		/* Its own limit is 200 queries a second: five times that is no proxy of ours. */
		if (rate_exceeded(&n->admits_window_us, &n->admits_in_window, PROXY_ADMITS_PER_S))
			return fail(err, EPROTO, "broke its protocol: more than %d admits a second",
				    PROXY_ADMITS_PER_S);
		proxy_admit(n, m);
		return 0;
	case CORDON_DNSCTL_EVENT:
		proxy_event(n, m);
		return 0;
	case CORDON_DNSCTL_STATS:
		n->proxy_stats = m->stats;
		n->proxy_stats_known = true;
		return 0;
	case CORDON_DNSCTL_POLICY:
		if (!n->policy_pending)
			return fail(err, EPROTO, "broke its protocol: an answer to no policy");
		n->policy_pending = false;
		n->policy_error = m->error;
		return 0;
	default: /* READY again, FAILED once serving: not in the protocol */
		return fail(err, EPROTO, "broke its protocol: message %u while serving", m->type);
	}
}

int sandbox_net_proxy_io(struct sandbox_net *n, struct cordon_error *err)
{
	int became_ready = 0;

	/* Bounded per pass: a flood from the proxy cannot hold the loop. */
	for (int i = 0; i < 64; i++) {
		struct cordon_dnsctl_msg m[CORDON_DNSCTL_EVENTS_MAX];
		int count = proxy_recv(n, m, err);

		if (count < 0)
			return -1;
		if (count == 0)
			break;
		for (int k = 0; k < count; k++) {
			int r = proxy_message(n, &m[k], err);

			if (r < 0)
				return -1;
			became_ready |= r;
		}
	}
	return became_ready;
}

/*
 * A socket to one of the configured upstreams, made here, in our own
 * network namespace (never G: nothing the workload sends reaches it),
 * connected (UDP) or connecting (TCP), and handed over. The proxy names
 * the upstream by its index; it can have no other. At most
 * PROXY_SOCKETS_PER_S a second: a proxy that asks for more is not one
 * we understand.
 */
static int make_upstream_socket(const struct sandbox_net *n, size_t i, int type)
{
	const struct sockaddr_storage *ss = &n->spec->net.upstreams[i];
	socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						    sizeof(struct sockaddr_in);
	int fd = socket(ss->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int sandbox_net_proxy_sockets(struct sandbox_net *n, struct cordon_error *err)
{
	for (int i = 0; i < 16; i++) {
		struct cordon_dnsctl_msg m;
		const char *why = NULL;
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} control;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fd;
		ssize_t r;

		do
			r = recv(n->proxy_sockets, &m, sizeof(m), MSG_DONTWAIT | MSG_TRUNC);
		while (r < 0 && errno == EINTR);
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r < 0)
			return fail(err, errno, "its socket channel");
		if (r == 0 && channel_hung_up(n->proxy_sockets))
			return proxy_gone(n, err);
		if (cordon_dnsctl_check(&m, (size_t)r, &why) < 0 ||
		    m.type != CORDON_DNSCTL_SOCKET || m.token >= n->spec->net.n_upstreams)
			return fail(err, EPROTO, "broke its protocol: %s",
				    why ? why : "a socket request off its channel or upstreams");
		if (rate_exceeded(&n->sockets_window_us, &n->sockets_in_window,
				  PROXY_SOCKETS_PER_S))
			return fail(err, EPROTO,
				    "broke its protocol: more than %d sockets a second",
				    PROXY_SOCKETS_PER_S);
		fd = make_upstream_socket(n, m.token, m.qtype);
		memset(&m, 0, sizeof(m));
		m.type = CORDON_DNSCTL_SOCKET;
		if (fd < 0) {
			m.error = fd;
		} else {
			struct cmsghdr *c;

			mh.msg_control = control.buf;
			mh.msg_controllen = sizeof(control.buf);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
		}
		/* Our copy goes either way; a proxy that does not read times its request out. */
		sendmsg(n->proxy_sockets, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/*
 * POLICY: the allowlist's entries, one a line, in a sealed memfd, and the
 * proxy's answer waited for (its socket requests served meanwhile: it
 * may be waiting on one). 0, or -1 (err set): the proxy could not take
 * it, or did not answer; the caller ends the sandbox.
 */
int egress_proxy_policy(struct sandbox_net *n, const struct cordon_allowlist *al,
			struct cordon_error *err)
{
	uint64_t deadline = cordon_now_mono_us() + PROXY_POLICY_TIMEOUT_MS * 1000;
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	struct cordon_dnsctl_msg m;
	size_t len = 0;
	int r;

	if (n->proxy_ctl < 0)
		return 0; /* --dns none: no proxy to tell */
	for (size_t i = 0; i < cordon_allowlist_count(al); i++) {
		const char *entry = cordon_allowlist_entry(al, i)->text;
		size_t k = strlen(entry);

		text = cordon_xrealloc(text, len + k + 2);
		memcpy(text + len, entry, k);
		len += k;
		text[len++] = '\n';
	}
	if (len > CORDON_DNSCTL_POLICY_MAX)
		return fail(err, E2BIG, "an allowlist of %zu bytes", len);
	fd = cordon_memfd_sealed("cordon-policy", text ? text : "", len);
	if (fd < 0)
		return fail(err, -fd, "memfd");
	memset(&m, 0, sizeof(m));
	m.type = CORDON_DNSCTL_POLICY;
	m.token = (uint32_t)len;
	r = cordon_send_fds(n->proxy_ctl, &m, sizeof(m), &fd, 1, MSG_DONTWAIT);
	if (r < 0)
		return fail(err, -r, "sending it the new policy");
	n->policy_pending = true;
	while (n->policy_pending) {
		uint64_t now = cordon_now_mono_us();
		struct pollfd p[2] = { { .fd = n->proxy_ctl, .events = POLLIN },
				       { .fd = n->proxy_sockets, .events = POLLIN } };

		if (now >= deadline)
			return fail(err, ETIMEDOUT, "it did not take the new policy");
		if (poll(p, 2, (int)((deadline - now) / 1000) + 1) < 0 && errno != EINTR)
			return fail(err, errno, "poll");
		if ((p[1].revents & POLLIN) && sandbox_net_proxy_sockets(n, err) < 0)
			return -1;
		if ((p[0].revents & (POLLIN | POLLHUP)) && sandbox_net_proxy_io(n, err) < 0)
			return -1;
	}
	if (n->policy_error)
		return fail(err, -n->policy_error, "it refused the new policy");
	return 0;
}

bool sandbox_net_proxy_died(struct sandbox_net *n, struct cordon_error *err)
{
	siginfo_t si = { 0 };

	if (n->proxy_pidfd < 0 ||
	    waitid(P_PIDFD, (id_t)n->proxy_pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid == 0)
		return false;
	if (si.si_code == CLD_EXITED)
		fail(err, 0, "it exited (status %d)", si.si_status);
	else
		fail(err, 0, "it was killed (signal %d)", si.si_status);
	return true;
}

void sandbox_net_proxy_stop(struct sandbox_net *n)
{
	if (n->proxy_ctl >= 0 && n->proxy_pidfd >= 0) {
		struct cordon_dnsctl_msg m;
		uint64_t deadline = cordon_now_mono_us() + PROXY_STATS_TIMEOUT_MS * 1000;

		/* Its counters for the report: asked, and waited for a moment. */
		memset(&m, 0, sizeof(m));
		m.type = CORDON_DNSCTL_STATS;
		if (send(n->proxy_ctl, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    (ssize_t)sizeof(m)) {
			while (!n->proxy_stats_known) {
				struct cordon_error err = { 0 };
				uint64_t now = cordon_now_mono_us();
				struct pollfd p = { .fd = n->proxy_ctl, .events = POLLIN };

				if (now >= deadline ||
				    poll(&p, 1, (int)((deadline - now) / 1000) + 1) <= 0 ||
				    sandbox_net_proxy_io(n, &err) < 0)
					break;
			}
		}
	}
	cordon_closep(&n->proxy_ctl);
	cordon_closep(&n->proxy_sockets);
	if (n->proxy_pidfd >= 0) {
		cordon_pidfd_send_signal(n->proxy_pidfd, SIGKILL);
		waitid(P_PIDFD, (id_t)n->proxy_pidfd, &(siginfo_t){ 0 }, WEXITED);
		cordon_closep(&n->proxy_pidfd);
	} else if (n->proxy_pid > 0) {
		kill(n->proxy_pid, SIGKILL);
		waitpid(n->proxy_pid, NULL, 0);
	}
	n->proxy_pid = 0;
}
