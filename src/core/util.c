// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cordon/core.h"

static void __attribute__((noreturn)) out_of_memory(void)
{
	static const char msg[] = "cordon: CORDON_E_INTERNAL: out of memory\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(CORDON_EXIT_FAILURE);
}

void *cordon_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *cordon_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

void *cordon_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory();
	return q;
}

char *cordon_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

char *cordon_xasprintf(const char *fmt, ...)
{
	char *p;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (r < 0)
		out_of_memory();
	return p;
}

void cordon_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void cordon_strv_push(char ***v, size_t *n, const char *s)
{
	*v = cordon_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = cordon_xstrdup(s);
	(*v)[*n] = NULL;
}

/* Decimal digits, then only characters of `trailing`; no sign, no leading space. */
static int parse_u64_then(const char *s, const char *trailing, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading spaces and a minus sign; we do not. */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	end += strspn(end, trailing);
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cordon_parse_u64(const char *s, uint64_t *out)
{
	return parse_u64_then(s, "", out);
}

int cordon_parse_u64_prefix(const char *s, uint64_t *out)
{
	return parse_u64_then(s, " \t\n", out);
}

int cordon_parse_seconds_ms(const char *s, uint64_t *out_ms)
{
	const char *dot = s ? strchr(s, '.') : NULL;
	uint64_t whole, frac = 0;
	char intpart[32];
	size_t n;
	int r;

	if (!s || !*s)
		return -EINVAL;
	n = dot ? (size_t)(dot - s) : strlen(s);
	if (n == 0 || n >= sizeof(intpart))
		return -EINVAL;
	memcpy(intpart, s, n);
	intpart[n] = '\0';
	r = cordon_parse_u64(intpart, &whole);
	if (r < 0)
		return r;
	if (dot) {
		const char *p = dot + 1;
		uint64_t scale = 100;

		if (!*p)
			return -EINVAL;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -EINVAL;
			frac += (uint64_t)(*p - '0') * scale;
			scale /= 10;
		}
	}
	if (whole > UINT64_MAX / 1000 - 1)
		return -ERANGE;
	*out_ms = whole * 1000 + frac;
	return 0;
}

int cordon_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int cordon_memfd_sealed(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	if (fd < 0)
		return -errno;
	r = cordon_write_all(fd, data, len);
	if (r == 0 &&
	    (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0 ||
	     lseek(fd, 0, SEEK_SET) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int cordon_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n, int flags)
{
	union {
		char buf[CMSG_SPACE(CORDON_SEND_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t w;

	if (n > CORDON_SEND_FDS_MAX)
		return -EINVAL;
	if (n > 0) {
		struct cmsghdr *c;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	do
		w = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EMSGSIZE;
}

int cordon_write_file_at(int dirfd, const char *path, const char *data, size_t len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -errno;
	/* Files like uid_map take exactly one write; never split it. */
	w = write(fd, data, len);
	if (w < 0)
		return -errno;
	if ((size_t)w != len)
		return -EIO;
	return 0;
}

int cordon_read_file_at(int dirfd, const char *path, char **out, size_t *out_len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 4096;
			if (cap > (64u << 20))
				return -EFBIG;
			buf = cordon_xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (!buf)
		buf = cordon_xmalloc(1);
	buf[len] = '\0';
	if (out_len)
		*out_len = len;
	*out = TAKE_PTR(buf);
	return 0;
}

static bool initial_userns(void)
{
	static int cached = -1;
	_cleanup_free_ char *map = NULL;
	size_t len;

	if (cached < 0) {
		unsigned long in, out, count;

		cached = cordon_read_file_at(AT_FDCWD, "/proc/self/uid_map", &map, &len) == 0 &&
			 sscanf(map, "%lu %lu %lu", &in, &out, &count) == 3 && in == 0 &&
			 out == 0 && count == 4294967295UL;
	}
	return cached;
}

bool cordon_host_root(void)
{
	return geteuid() == 0 && initial_userns();
}

bool cordon_userns_root(void)
{
	return geteuid() == 0 && !initial_userns();
}

uint64_t cordon_now_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t cordon_now_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
