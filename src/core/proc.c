// SPDX-License-Identifier: Apache-2.0
/*
 * What a cordon process that stays inside a sandbox does to itself before
 * the workload can see it: drop every fd it was not meant to keep, and
 * show a fixed name instead of the supervisor's command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cordon/core.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int cordon_close_fds_except(int first, const int *keep, size_t n)
{
	int sorted[64];
	unsigned int lo = (unsigned int)first;
	size_t m = 0;

	bool trace_kept = cordon_trace_fd < first;

	if (n > ARRAY_SIZE(sorted))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] >= first)
			sorted[m++] = keep[i];
		if (keep[i] == cordon_trace_fd)
			trace_kept = true;
	}
	/* Closed below unless kept: never written to again (its number may be reused). */
	if (!trace_kept)
		cordon_trace_fd = -1;
	qsort(sorted, m, sizeof(sorted[0]), cmp_int);
	for (size_t i = 0; i < m; i++) {
		unsigned int fd = (unsigned int)sorted[i];

		if (fd > lo && syscall(SYS_close_range, lo, fd - 1, 0) < 0)
			return -errno;
		lo = fd + 1;
	}
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0)
		return -errno;
	return 0;
}

/*
 * The kernel shows /proc/PID/cmdline and environ from the memory between
 * the mm's arg_start/arg_end and env_start/env_end: ours still hold the
 * supervisor's argv and environment (--env values, host paths). Point
 * them at a copy of TITLE on our own heap (the kernel reads cmdline only
 * from anonymous memory) and at nothing. PR_SET_MM_MAP needs every field,
 * so the others are read back from /proc/self/stat as they are.
 */
int cordon_proc_title_hide(const char *title)
{
	struct prctl_mm_map map = { .exe_fd = -1 };
	unsigned long long v[52] = { 0 };
	char buf[2048], *p, *end;
	size_t len = strlen(title) + 1;
	char *copy = malloc(len);
	ssize_t n;
	int fd, field;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, title, len);
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		goto fail;
	buf[n] = '\0';
	/* Fields after the command name, which may hold spaces and ')'. */
	p = strrchr(buf, ')');
	if (!p)
		goto fail;
	p++;
	for (field = 3; field < (int)ARRAY_SIZE(v) && *p; field++) {
		while (*p == ' ')
			p++;
		if (field == 3) { /* the state, a letter */
			while (*p && *p != ' ')
				p++;
			continue;
		}
		errno = 0;
		v[field] = strtoull(p, &end, 10);
		if (end == p || errno)
			goto fail;
		p = end;
	}
	if (field <= 47)
		goto fail;
	map.start_code = v[26];
	map.end_code = v[27];
	map.start_stack = v[28];
	map.start_data = v[45];
	map.end_data = v[46];
	map.start_brk = v[47];
	map.brk = (unsigned long)sbrk(0);
	map.arg_start = (unsigned long)copy;
	map.arg_end = (unsigned long)copy + len;
	map.env_start = map.env_end = (unsigned long)copy + len;
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, &map, sizeof(map), 0) < 0)
		goto fail;
	/* The name in /proc/PID/stat and comm, too. */
	prctl(PR_SET_NAME, title, 0, 0, 0);
	return 0; /* copy stays: the kernel reads it from now on */
fail:
	free(copy);
	return errno ? -errno : -EINVAL;
}

/* PF_FORKNOEXEC of include/linux/sched.h: set by fork, cleared by execve. */
#define CORDON_PF_FORKNOEXEC 0x00000040u

int cordon_proc_execed(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned int flags;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	/* The command name may hold spaces and ')': the fields follow the last ')'. */
	p = strrchr(buf, ')');
	/* state, ppid, pgrp, session, tty_nr, tpgid, then flags (field 9) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		return -EIO;
	return !(flags & CORDON_PF_FORKNOEXEC);
}
