// SPDX-License-Identifier: Apache-2.0
/*
 * A stand-in for a hostile rootfs's ELF loader (/lib64/ld-linux-x86-64.so.2).
 * When a process of the sandbox executes the cordon binary (a
 * "#!/proc/self/exe" script run by a cordon process that is about to
 * execve), the kernel maps cordon and starts this "loader" in its place:
 * attacker code whose /proc/self/exe is whatever cordon ran from. It
 * prints that link, the file's seals, and whether it opens for writing:
 *
 *   exe=/memfd:cordon (deleted)
 *   seals=15            (or -22: not a memfd)
 *   write=-26           (0: opened for writing; else -errno)
 *
 * No libc: a static glibc would set itself up from the auxiliary vector,
 * which describes cordon, not us.
 *
 * Its last segment must be writable, as a real loader's (its data) is:
 * Debian 12's kernel (6.1) zeroes the rest of the interpreter's last page
 * after its file data, and when that page is read-only fails the execve
 * past its point of no return (SIGSEGV, nothing run; later kernels zero
 * only writable segments). Hence the link's buffer in .data.
 */
#include <fcntl.h>
#include <sys/syscall.h>

static long sys3(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static unsigned long len(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static void put(const char *s)
{
	sys3(SYS_write, 1, (long)s, (long)len(s));
}

static void put_num(long v)
{
	char buf[24], *p = buf + sizeof(buf) - 1;
	int neg = v < 0;
	unsigned long u = neg ? (unsigned long)-v : (unsigned long)v;

	*p = '\0';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	put(p);
}

/* Initialised, so .data, a writable segment after .rodata's (above). */
static char link[256] = "?";

__attribute__((force_align_arg_pointer, noreturn)) void _start(void)
{
	static const char exe[] = "/proc/self/exe";
	long n, fd;

	n = sys3(SYS_readlink, (long)exe, (long)link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	put("exe=");
	put(link);
	put("\nseals=");
	fd = sys3(SYS_open, (long)exe, O_RDONLY | O_CLOEXEC, 0);
	put_num(fd < 0 ? fd : sys3(SYS_fcntl, fd, F_GET_SEALS, 0));
	put("\nwrite=");
	fd = sys3(SYS_open, (long)exe, O_WRONLY | O_CLOEXEC, 0);
	put_num(fd < 0 ? fd : 0);
	put("\n");
	sys3(SYS_exit_group, 0, 0, 0);
	for (;;)
		;
}
