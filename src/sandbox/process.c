// SPDX-License-Identifier: Apache-2.0
/*
 * The last steps of a container's process, shared by the workload
 * (child.c) and exec'd processes (exec.c): finding its program on the
 * PATH of its own environment, its cwd, and its ids, groups, umask and
 * personality.
 */
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-internal.h"

/*
 * PATH search with the sandbox's PATH (glibc's execvpe would search the
 * supervisor's). ENOENT everywhere → 127; found but not executable → 126.
 */
static const char *env_lookup(char *const envp[], const char *key);

/* execve file; or, probing, only whether execve would find and could run it (0). */
static int try_exec(const char *file, char *const argv[], char *const envp[], bool probe)
{
	struct stat st;

	if (!probe) {
		execve(file, argv, envp);
		return -1;
	}
	if (stat(file, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

static int exec_search(char *const argv[], char *const envp[], bool probe, int *errnum)
{
	const char *path = env_lookup(envp, "PATH");
	const char *name = argv[0];
	bool denied = false;
	char buf[4096];

	if (strchr(name, '/')) {
		if (try_exec(name, argv, envp, probe) == 0)
			return 0;
		*errnum = errno;
		return (errno == ENOENT || errno == ENOTDIR) ? CORDON_EXIT_NOT_FOUND
							     : CORDON_EXIT_CANNOT_EXEC;
	}
	*errnum = ENOENT;
	for (const char *p = path; p && *p;) {
		const char *end = strchrnul(p, ':');
		size_t len = (size_t)(end - p);

		if (len == 0) {
			len = 1;
			p = ".";
		}
		if (len + 1 + strlen(name) < sizeof(buf)) {
			memcpy(buf, p, len);
			buf[len] = '/';
			strcpy(buf + len + 1, name);
			if (try_exec(buf, argv, envp, probe) == 0)
				return 0;
			if (errno == EACCES || errno == EPERM || errno == ENOEXEC) {
				denied = true;
				*errnum = errno;
			} else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
				   errno != ENAMETOOLONG) {
				*errnum = errno;
				return CORDON_EXIT_CANNOT_EXEC;
			}
		}
		p = *end ? end + 1 : end;
	}
	return denied ? CORDON_EXIT_CANNOT_EXEC : CORDON_EXIT_NOT_FOUND;
}

int sandbox_exec_search(char *const argv[], char *const envp[], int *errnum)
{
	return exec_search(argv, envp, false, errnum);
}

int sandbox_exec_probe(char *const argv[], char *const envp[], int *errnum)
{
	const char *path = env_lookup(envp, "PATH");

	/* Relative to the workload's cwd, which is not ours yet: execve will tell. */
	if (argv[0][0] != '/' && strchr(argv[0], '/'))
		return 0;
	if (!strchr(argv[0], '/'))
		for (const char *p = path; p && *p; p = strchrnul(p, ':'), p += *p == ':')
			if (*p != '/')
				return 0;
	return exec_search(argv, envp, true, errnum);
}

static const char *env_lookup(char *const envp[], const char *key)
{
	if (!envp)
		return NULL;
	size_t klen = strlen(key);

	for (; *envp; envp++)
		if (strncmp(*envp, key, klen) == 0 && (*envp)[klen] == '=')
			return *envp + klen + 1;
	return NULL;
}

int sandbox_set_ids(const struct cordon_spec *spec, bool deny_setgroups, struct cordon_error *err)
{
	const struct cordon_oci *oci = spec->oci;
	size_t n = oci && !deny_setgroups ? oci->n_additional_gids : 0;

	/* linux.personality: LINUX32 makes uname(2) say i686 (inherited by exec, as runc). */
	if (oci && oci->has_personality && personality(oci->personality) < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "linux.personality");

	if (!deny_setgroups && setgroups(n, n ? oci->additional_gids : NULL) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno,
					n ? "process.user.additionalGids: setting %zu groups (each "
					    "must be mapped)"
					  : "clearing supplementary groups",
					n);
	if (setresgid(spec->gid, spec->gid, spec->gid) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno, "setting gid %u", spec->gid);
	if (setresuid(spec->uid, spec->uid, spec->uid) < 0)
		return cordon_error_set(err, CORDON_E_USERNS, errno, "setting uid %u", spec->uid);
	if (oci && oci->has_umask)
		umask((mode_t)oci->umask);
	return 0;
}

int sandbox_enter_cwd(const char *cwd, struct cordon_error *err)
{
	/*
	 * Resolved inside our root whatever the path holds: ".." and absolute
	 * symlinks stay below "/", and a magic link (/proc/self/fd/N, /proc/1/cwd)
	 * is refused rather than followed to wherever its fd points.
	 */
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char buf[PATH_MAX];
	long n;
	int root, dir;

	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "opening / for the cwd");
	dir = cordon_openat2(root, cwd, &how, sizeof(how));
	close(root);
	if (dir < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "cwd %s", cwd);
	if (fchdir(dir) < 0) {
		close(dir);
		return cordon_error_set(err, CORDON_E_PATH, errno, "cwd %s", cwd);
	}
	close(dir);
	/*
	 * The kernel's own answer (glibc's getcwd would try to make one up):
	 * a directory outside our root reads "(unreachable)/...".
	 */
	n = syscall(SYS_getcwd, buf, sizeof(buf));
	if (n <= 0 || buf[0] != '/')
		return cordon_error_set(err, CORDON_E_SECURITY, n < 0 ? errno : EXDEV,
					"cwd %s lies outside the sandbox's root", cwd);
	return 0;
}
