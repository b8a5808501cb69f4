// SPDX-License-Identifier: Apache-2.0
/*
 * Files a caller or an image hands cordon: config.json, a process or
 * resources document, a seccomp profile, an allowlist, the rootfs's
 * passwd and group. Each is bounded before it is trusted with memory or
 * a parser: a regular file (never a fifo that blocks the reader or a
 * device that never ends), a size cap, and for JSON a nesting cap.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cordon/core.h"

int cordon_input_read_fd(int fd, size_t max, enum cordon_code code, const char *what, char **out,
			 size_t *out_len, struct cordon_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return cordon_error_set(err, code, errno, "%s", what);
	if (!S_ISREG(st.st_mode))
		return cordon_error_set(err, code, 0, "%s: not a regular file", what);
	if ((uint64_t)st.st_size > max)
		return cordon_error_set(err, code, 0, "%s: larger than %zu bytes", what, max);
	/*
	 * st_size is a hint, not a bound: the file may grow (or be a procfs
	 * file that says 0). Read up to max + 1 bytes; one byte past the cap
	 * is what tells a file that grew beyond it.
	 */
	cap = (size_t)st.st_size + 1;
	buf = cordon_xmalloc(cap + 1);
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap > max)
				return cordon_error_set(err, code, 0, "%s: larger than %zu bytes",
							what, max);
			cap = cap > max / 2 ? max + 1 : cap * 2;
			buf = cordon_xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cordon_error_set(err, code, errno, "%s: reading", what);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max)
		return cordon_error_set(err, code, 0, "%s: larger than %zu bytes", what, max);
	buf[len] = '\0';
	if (out_len)
		*out_len = len;
	*out = TAKE_PTR(buf);
	return 0;
}

int cordon_input_read(int dirfd, const char *path, size_t max, enum cordon_code code,
		      const char *what, char **out, size_t *out_len, struct cordon_error *err)
{
	/* O_NONBLOCK: opening a fifo for reading would otherwise wait for a writer. */
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return cordon_error_set(err, code, errno, "%s", what);
	return cordon_input_read_fd(fd, max, code, what, out, out_len, err);
}

int cordon_json_depth(const char *text, size_t len, size_t stop, size_t *out)
{
	size_t depth = 0, deepest = 0;
	bool in_string = false;

	for (size_t i = 0; i < len && deepest <= stop; i++) {
		char c = text[i];

		if (in_string) {
			/* The character after a backslash never ends the string. */
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			break;
		case '/':
			/*
			 * yajl_tree_parse allows comments, and a quote in one
			 * would make this scan take the brackets after it for
			 * a string's. JSON has none: refuse them.
			 */
			return -EINVAL;
		case '[':
		case '{':
			if (++depth > deepest)
				deepest = depth;
			break;
		case ']':
		case '}':
			/* Unbalanced: the parser's to say so. */
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	*out = deepest > stop ? stop + 1 : deepest;
	return 0;
}

int cordon_json_parse(const char *text, size_t len, enum cordon_code code, struct yajl_val_s **out,
		      struct cordon_error *err)
{
	_cleanup_free_ char *copy = NULL;
	char ebuf[256] = "";
	yajl_val tree;
	size_t depth;

	if (memchr(text, '\0', len))
		return cordon_error_set(err, code, 0, "contains a NUL byte");
	/* Before the tree exists: yajl builds and frees it recursively. */
	if (cordon_json_depth(text, len, CORDON_JSON_DEPTH_MAX, &depth) < 0)
		return cordon_error_set(err, code, 0, "a '/' outside a string (JSON has no comments)");
	if (depth > CORDON_JSON_DEPTH_MAX)
		return cordon_error_set(err, code, 0, "nested deeper than %d levels",
					CORDON_JSON_DEPTH_MAX);
	/* yajl_tree_parse wants a C string; text need not be one. */
	copy = cordon_xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	tree = yajl_tree_parse(copy, ebuf, sizeof(ebuf));
	if (!tree) {
		/* yajl's message spans lines (the text and a caret): keep the first. */
		ebuf[strcspn(ebuf, "\n")] = '\0';
		return cordon_error_set(err, code, 0, "%s", *ebuf ? ebuf : "not valid JSON");
	}
	*out = tree;
	return 0;
}

char *cordon_json_gen_take(struct yajl_gen_t *g)
{
	const unsigned char *buf;
	size_t len;
	char *out;

	yajl_gen_get_buf(g, &buf, &len);
	out = cordon_xmalloc(len + 1);
	memcpy(out, buf, len);
	out[len] = '\0';
	yajl_gen_free(g);
	return out;
}
