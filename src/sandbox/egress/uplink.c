// SPDX-License-Identifier: Apache-2.0
/*
 * G's uplink, the host's side of it: pasta (rootless, or asked for),
 * started here and watched; the veth of cordon-nethelper (rootful) is
 * its client (nethelper.c beside this one).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "egress.h"

/* --- uplinks ----------------------------------------------------------------- */

/*
 * pasta joins G (and, to hold CAP_NET_ADMIN there, the sandbox's user
 * namespace), both opened by paths to fds we give it, creates its tap up0 in it, copies
 * the host's addresses and routes onto it (--config-net) and carries
 * G's traffic out through ordinary sockets of ours. No port is
 * forwarded in either direction; DHCP and router advertisements are off
 * (the tap is configured directly; neighbour discovery stays, G needs it
 * to find its IPv6 gateway); without --allow-host-loopback the gateway
 * address is not mapped to the host's loopback. It dies with us: a
 * parent-death signal, and we kill it at the end.
 */
int egress_pasta_start(struct sandbox_net *n, int userns, int gw_ns, struct cordon_error *err)
{
	const struct cordon_net_spec *net = &n->spec->net;
	const char *argv[32];
	size_t a = 0;
	int ep[2];
	pid_t pid, parent;

	argv[a++] = net->pasta_path;
	argv[a++] = "--foreground";
	argv[a++] = "--quiet";
	argv[a++] = "--config-net";
	argv[a++] = "--ns-ifname";
	argv[a++] = CORDON_GW_UPLINK_IF;
	for (const char *const *o = (const char *const[]){ "-t", "-u", "-T", "-U", NULL }; *o;
	     o++) {
		argv[a++] = *o;
		argv[a++] = "none";
	}
	argv[a++] = "--no-dhcp";
	argv[a++] = "--no-dhcpv6";
	argv[a++] = "--no-ra";
	if (!net->allow_host_loopback)
		argv[a++] = "--no-map-gw";
	/* As root, pasta would become nobody before it joins the namespaces, and fail. */
	if (geteuid() == 0) {
		argv[a++] = "--runas";
		argv[a++] = "0";
	}
	argv[a++] = "--userns";
	argv[a++] = "/proc/self/fd/3";
	argv[a++] = "--netns";
	argv[a++] = "/proc/self/fd/4";
	argv[a] = NULL;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return egress_fail(err, errno, "pipe");
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		close(ep[0]);
		close(ep[1]);
		return egress_fail(err, errno, "fork");
	}
	if (pid == 0) {
		static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		/* Our death before the prctl: the child's parent is whoever reaps
		 * orphans here (1, or a subreaper: a login's systemd, a CI runner). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		/* A ^C at the caller's terminal is for the workload (relayed), not the uplink. */
		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Above every fd we hold, then into place: no dup2 clobbers a source. */
		int u = fcntl(userns, F_DUPFD, 100), g = fcntl(gw_ns, F_DUPFD, 100);

		if (devnull < 0 || u < 0 || g < 0 || dup2(devnull, STDIN_FILENO) < 0 ||
		    dup2(devnull, STDOUT_FILENO) < 0 || dup2(ep[1], STDERR_FILENO) < 0 ||
		    dup2(u, 3) < 0 || dup2(g, 4) < 0)
			_exit(127);
		close_range(5, ~0U, 0);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	close(ep[1]);
	n->pasta = pid;
	n->pasta_err = ep[0];
	n->pasta_pidfd = cordon_pidfd_open(pid);
	if (n->pasta_pidfd < 0)
		return egress_fail(err, errno, "pidfd of pasta");
	return 0;
}

/* pasta's last words, for an error message. */
static void pasta_stderr(struct sandbox_net *n, char *buf, size_t cap)
{
	ssize_t r;
	char *nl;

	buf[0] = '\0';
	if (n->pasta_err < 0 || fcntl(n->pasta_err, F_SETFL, O_NONBLOCK) < 0)
		return;
	r = read(n->pasta_err, buf, cap - 1);
	buf[r > 0 ? r : 0] = '\0';
	while ((nl = strrchr(buf, '\n')) && nl[1] == '\0')
		*nl = '\0';
	if ((nl = strrchr(buf, '\n')))
		memmove(buf, nl + 1, strlen(nl + 1) + 1);
}

/*
 * pasta's exit takes it tens of milliseconds (its tap's unregistration
 * waits for RCU grace periods, docs/benchmarks.md): the signal goes
 * first, the wait for it comes last (sandbox_net_reap), and the rest of
 * the teardown runs in between.
 */
void egress_pasta_kill(struct sandbox_net *n)
{
	if (n->pasta_pidfd >= 0)
		cordon_pidfd_send_signal(n->pasta_pidfd, SIGKILL);
	else if (n->pasta > 0)
		kill(n->pasta, SIGKILL);
}

void sandbox_net_reap(struct sandbox_net *n)
{
	egress_pasta_kill(n);
	if (n->pasta_pidfd >= 0) {
		waitid(P_PIDFD, (id_t)n->pasta_pidfd, &(siginfo_t){ 0 }, WEXITED);
		cordon_closep(&n->pasta_pidfd);
	} else if (n->pasta > 0) {
		waitpid(n->pasta, NULL, 0);
	}
	n->pasta = 0;
	cordon_closep(&n->pasta_err);
}

/*
 * For pasta: its tap is configured once the init has seen it (the init
 * waits for that before it releases the workload). If pasta died first,
 * say why rather than "the sandbox init exited".
 */
bool sandbox_net_uplink_died(struct sandbox_net *n, struct cordon_error *err)
{
	char last[256];
	siginfo_t si = { 0 };

	if (n->pasta_pidfd < 0 ||
	    waitid(P_PIDFD, (id_t)n->pasta_pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid == 0)
		return false;
	pasta_stderr(n, last, sizeof(last));
	egress_fail(err, 0, "pasta exited (status %d)%s%s", si.si_status, last[0] ? ": " : "",
		    last);
	return true;
}
