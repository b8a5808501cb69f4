// SPDX-License-Identifier: Apache-2.0
/*
 * linux.sysctl of a config: each value written, through /proc/sys, by a
 * process that sits in the namespace the sysctl belongs to and holds the
 * privilege over it. The parser let only namespaced ones through
 * (cordon_oci_sysctl_namespace). Who writes which (docs/oci.md):
 *
 *   net.*   the workload, in its own network namespace: opened while the
 *           host's /proc is still visible, written once its id maps exist
 *           (values such as ping_group_range are ids of its namespace),
 *           before its capabilities go; the supervisor in a joined one
 *   ipc     the init, in the sandbox's namespace; the supervisor in a
 *           joined one
 *   uts     the init, after it set the host and domain names (the sysctls
 *           win, as with runc), by the system calls: the /proc/sys files
 *           ask for host root whoever owns the namespace
 *
 * /proc/sys shows the namespaces of the process that opens it; the kernel
 * checks the writer's privilege at open and again at each write.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-internal.h"

static bool wanted(const char *key, unsigned int namespaces)
{
	int ns = cordon_oci_sysctl_namespace(key);

	return ns >= 0 && (namespaces & (1u << ns));
}

static bool uts_key(const char *key)
{
	return strcmp(key, "kernel.hostname") == 0 || strcmp(key, "kernel.domainname") == 0;
}

void sandbox_sysctls_close(struct sandbox_sysctls *s)
{
	for (size_t i = 0; i < s->n; i++)
		cordon_closep(&s->fd[i]);
	free(s->fd);
	s->fd = NULL;
	s->n = 0;
}

int sandbox_sysctls_open(const struct cordon_spec *spec, unsigned int namespaces,
			 struct sandbox_sysctls *s, struct cordon_error *err)
{
	const struct cordon_oci *oci = spec->oci;

	s->spec = spec;
	s->n = oci ? oci->n_sysctl : 0;
	s->fd = cordon_xmalloc((s->n ? s->n : 1) * sizeof(*s->fd));
	for (size_t i = 0; i < s->n; i++) {
		const char *key = oci->sysctl[2 * i];
		char path[256];

		s->fd[i] = -1;
		if (!wanted(key, namespaces) || uts_key(key))
			continue;
		if (snprintf(path, sizeof(path), "/proc/sys/%s", key) >= (int)sizeof(path))
			return cordon_error_set(err, CORDON_E_SPEC, 0, "linux.sysctl.%s: too long",
						key);
		for (char *p = path + 10; *p; p++)
			if (*p == '.')
				*p = '/';
		s->fd[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (s->fd[i] < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "linux.sysctl.%s",
						key);
	}
	return 0;
}

int sandbox_sysctls_write(struct sandbox_sysctls *s, unsigned int namespaces,
			  struct cordon_error *err)
{
	const struct cordon_oci *oci = s->spec->oci;

	for (size_t i = 0; i < s->n; i++) {
		const char *key = oci->sysctl[2 * i], *value = oci->sysctl[2 * i + 1];
		size_t len = strlen(value);
		int r = 0;

		if (s->fd[i] >= 0)
			r = write(s->fd[i], value, len) == (ssize_t)len ? 0 : -1;
		else if (wanted(key, namespaces) && uts_key(key))
			r = key[7] == 'h' ? sethostname(value, len) : setdomainname(value, len);
		if (r < 0)
			return cordon_error_set(err, CORDON_E_NAMESPACE, errno ? errno : EIO,
						"linux.sysctl.%s = '%s'", key, value);
	}
	sandbox_sysctls_close(s);
	return 0;
}

int sandbox_sysctls(const struct cordon_spec *spec, unsigned int namespaces,
		    struct cordon_error *err)
{
	struct sandbox_sysctls s;
	int r = sandbox_sysctls_open(spec, namespaces, &s, err);

	if (r == 0)
		r = sandbox_sysctls_write(&s, namespaces, err);
	sandbox_sysctls_close(&s);
	return r;
}
