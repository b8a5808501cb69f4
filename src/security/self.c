// SPDX-License-Identifier: Apache-2.0
/*
 * The cordon binary, seen from inside a sandbox (the CVE-2019-5736 class).
 *
 * Every cordon process that enters a sandbox (the init, the workload
 * before its execve, cordon exec's process, a hook's helper) has the
 * cordon binary as its /proc/self/exe. A program that the sandbox makes
 * run next can reach that file: a "#!/proc/self/exe" script, or a rootfs
 * whose ELF loader replaced the real one, runs as a process whose exe
 * still is the binary. Whether it could then write the binary depends on
 * who owns it: when any id the sandbox maps owns it (or its group may
 * write it and the group is mapped, or anyone may), the supervisor first
 * copies itself into a sealed memfd and re-executes from there, so that
 * what the sandbox can reach is a copy no one can change. Otherwise the
 * binary stays where it is: the copy costs a re-exec per start.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cordon/security.h"
#include "cordon/userns.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

static char **self_argv;
static sigset_t self_mask;

void cordon_self_init(char **argv)
{
	self_argv = argv;
	sigprocmask(SIG_SETMASK, NULL, &self_mask);
}

static bool sealed(int exe)
{
	int seals = fcntl(exe, F_GET_SEALS);

	return seals >= 0 && (seals & SEALS) == SEALS;
}

static bool maps_host_id(const struct cordon_idmap *map, uint32_t id)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct cordon_idmap_extent *e = &map->extent[i];

		if (id >= e->outside && (uint64_t)id < (uint64_t)e->outside + e->count)
			return true;
	}
	return false;
}

/*
 * Read a uid_map or gid_map (of DIRFD, a /proc/PID directory) into MAP.
 * More extents than a map holds: the whole range, the worst case for the
 * callers (every id mapped).
 */
static int read_map(int dirfd, const char *name, struct cordon_idmap *map)
{
	_cleanup_free_ char *text = NULL;
	const char *p;

	memset(map, 0, sizeof(*map));
	if (cordon_read_file_at(dirfd, name, &text, NULL) < 0)
		return -1;
	for (p = text; *p && map->n < CORDON_IDMAP_MAX_EXTENTS;) {
		unsigned int in, out, count;
		int used = 0;

		if (sscanf(p, " %u %u %u%n", &in, &out, &count, &used) != 3)
			break;
		map->extent[map->n++] =
			(struct cordon_idmap_extent){ .inside = in, .outside = out, .count = count };
		p += used;
	}
	if (map->n == CORDON_IDMAP_MAX_EXTENTS)
		cordon_idmap_range(0, UINT32_MAX, map);
	return 0;
}

/*
 * Is ID, as a file owner, one our own user namespace does not map, so that
 * the kernel shows kernel.overflowuid (or gid) in its place? Only then can
 * no namespace below ours map the real owner. In the initial namespace
 * every id is mapped: there the overflow id (65534) is a real user
 * ("nobody") that a sandbox's map may well include.
 */
static bool unmapped_owner(const char *which, uint32_t id)
{
	_cleanup_free_ char *text = NULL;
	struct cordon_idmap own;
	char path[40], name[16];

	snprintf(path, sizeof(path), "/proc/sys/kernel/overflow%s", which);
	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0 ||
	    (uint32_t)strtoul(text, NULL, 10) != id)
		return false;
	snprintf(name, sizeof(name), "/proc/self/%s_map", which);
	if (read_map(AT_FDCWD, name, &own) < 0)
		return false;
	for (size_t i = 0; i < own.n; i++) {
		const struct cordon_idmap_extent *e = &own.extent[i];

		if (id >= e->inside && (uint64_t)id < (uint64_t)e->inside + e->count)
			return false;
	}
	return true;
}

/* Could a process with the sandbox's ids change the binary EXE? */
static bool writable_from(int exe, const struct cordon_idmap *uid, const struct cordon_idmap *gid)
{
	struct statvfs vfs;
	struct stat st;

	if (fstatvfs(exe, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		return false;
	if (fstat(exe, &st) < 0)
		return true;
	/*
	 * The owner may chmod it whatever its mode; an ACL may grant anyone.
	 * An owner our own namespace does not map (a host-root binary seen
	 * from a rootless launcher's namespace) no namespace below ours maps.
	 */
	if ((maps_host_id(uid, st.st_uid) && !unmapped_owner("uid", st.st_uid)) ||
	    (st.st_mode & S_IWOTH))
		return true;
	if ((st.st_mode & S_IWGRP) && maps_host_id(gid, st.st_gid) &&
	    !unmapped_owner("gid", st.st_gid))
		return true;
	return fgetxattr(exe, "system.posix_acl_access", NULL, 0) >= 0;
}

/*
 * How much of the binary an execve reads: up to the end of the last
 * segment its program headers name. What follows (debug information, the
 * symbol table, the section headers) is most of a debug build's size and
 * never mapped. The whole file when it is not a 64-bit ELF we can read.
 * *hdr gets the ELF header, to drop the section headers from the copy.
 */
static off_t exec_extent(int exe, off_t size, Elf64_Ehdr *hdr)
{
	unsigned char buf[4096];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	off_t end = 0;
	ssize_t n = pread(exe, buf, sizeof(buf), 0);

	if (n < (ssize_t)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > (uint64_t)n || eh->e_phnum > ((uint64_t)n - eh->e_phoff) / sizeof(Elf64_Phdr))
		return size;
	memcpy(hdr, eh, sizeof(*hdr));
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_offset > (uint64_t)size || ph.p_filesz > (uint64_t)size - ph.p_offset)
			return size;
		if ((off_t)(ph.p_offset + ph.p_filesz) > end)
			end = (off_t)(ph.p_offset + ph.p_filesz);
	}
	if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > (uint64_t)end)
		end = (off_t)(eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	return end > 0 ? end : size;
}

int cordon_sealed_copy(int src, const char *name, bool exec_only, unsigned int flags)
{
	int fd = memfd_create(name, flags | MFD_ALLOW_SEALING | MFD_EXEC);
	Elf64_Ehdr hdr = { 0 };
	struct stat st;
	off_t off = 0, len;
	int e;

	if (fd < 0 && errno == EINVAL) /* a kernel before MFD_EXEC */
		fd = memfd_create(name, flags | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (fstat(src, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	len = exec_only ? exec_extent(src, st.st_size, &hdr) : st.st_size;
	while (off < len) {
		ssize_t n = sendfile(fd, src, &off, (size_t)(len - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto fail;
		}
	}
	/* The section headers are not in the copy: say there are none. */
	if (len < st.st_size && hdr.e_shoff) {
		hdr.e_shoff = 0;
		hdr.e_shnum = 0;
		hdr.e_shstrndx = 0;
		if (pwrite(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
			goto fail;
	}
	if (fcntl(fd, F_ADD_SEALS, SEALS) < 0)
		goto fail;
	return fd;
fail:
	e = errno;
	close(fd);
	return -e;
}

static int reexec(int exe, struct cordon_error *err)
{
	int fd = cordon_sealed_copy(exe, "cordon", true, MFD_CLOEXEC);

	if (fd >= 0) {
		sigprocmask(SIG_SETMASK, &self_mask, NULL);
		execveat(fd, "", self_argv, environ, AT_EMPTY_PATH);
		close(fd);
	}
	return cordon_error_set(err, CORDON_E_SECURITY, fd < 0 ? -fd : errno,
				"a sealed copy of cordon for the sandbox (its binary is writable "
				"by ids the sandbox maps)");
}

int cordon_self_seal(const struct cordon_idmap *uid, const struct cordon_idmap *gid,
		     struct cordon_error *err)
{
	_cleanup_close_ int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (exe < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "opening /proc/self/exe");
	if (sealed(exe) || !writable_from(exe, uid, gid))
		return 0;
	if (!self_argv)
		return cordon_error_set(err, CORDON_E_INTERNAL, 0, "cordon_self_init was not called");
	return reexec(exe, err);
}

int cordon_self_seal_for(pid_t pid, int pidfd, struct cordon_error *err)
{
	struct cordon_idmap maps[2];
	_cleanup_close_ int dir = -1;
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "opening %s", path);
	/*
	 * The directory was opened while the pidfd's process was alive: it is
	 * that process's, not a later one's with a reused pid (whose maps
	 * would decide whether the binary is copied).
	 */
	if (cordon_pidfd_send_signal(pidfd, 0) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno,
					"the container's process %d has exited", (int)pid);
	if (read_map(dir, "uid_map", &maps[0]) < 0 || read_map(dir, "gid_map", &maps[1]) < 0)
		return cordon_error_set(err, CORDON_E_NAMESPACE, errno, "reading %s's id maps",
					path);
	return cordon_self_seal(&maps[0], &maps[1], err);
}
