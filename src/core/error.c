// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cordon/core.h"

static struct {
	int fd; /* the --log file, or -1 */
	enum cordon_log_format format;
	bool debug;
	bool stderr_off; /* a detached monitor with a log file */
} log_cfg = { .fd = -1 };

static const char *const code_names[CORDON_CODE_COUNT] = {
	[CORDON_OK] = "CORDON_OK",
	[CORDON_E_USAGE] = "CORDON_E_USAGE",
	[CORDON_E_ROOTFS] = "CORDON_E_ROOTFS",
	[CORDON_E_PATH] = "CORDON_E_PATH",
	[CORDON_E_USERNS] = "CORDON_E_USERNS",
	[CORDON_E_NAMESPACE] = "CORDON_E_NAMESPACE",
	[CORDON_E_MOUNT] = "CORDON_E_MOUNT",
	[CORDON_E_STATE] = "CORDON_E_STATE",
	[CORDON_E_RESULT] = "CORDON_E_RESULT",
	[CORDON_E_EXEC] = "CORDON_E_EXEC",
	[CORDON_E_INTERNAL] = "CORDON_E_INTERNAL",
	[CORDON_E_SECURITY] = "CORDON_E_SECURITY",
	[CORDON_E_CGROUP] = "CORDON_E_CGROUP",
	[CORDON_E_NET_POLICY] = "CORDON_E_NET_POLICY",
	[CORDON_E_SPEC] = "CORDON_E_SPEC",
	[CORDON_E_HOOK] = "CORDON_E_HOOK",
	[CORDON_E_AUDIT] = "CORDON_E_AUDIT",
};

const char *cordon_code_name(enum cordon_code code)
{
	if ((unsigned)code >= CORDON_CODE_COUNT || !code_names[code])
		return "CORDON_E_INTERNAL";
	return code_names[code];
}

int cordon_error_set(struct cordon_error *err, enum cordon_code code, int errnum,
		     const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int cordon_error_wrap(struct cordon_error *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation keeps the context and the start of the cause: acceptable. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %.*s", prefix, (int)(sizeof(old) - 1), old) < 0)
		err->msg[0] = '\0';
	return -1;
}

void cordon_error_message(const struct cordon_error *err, char *buf, size_t len)
{
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
}

static const char *file_kind(mode_t mode)
{
	return S_ISLNK(mode)  ? "a symbolic link" :
	       S_ISDIR(mode)  ? "a directory" :
	       S_ISFIFO(mode) ? "a fifo" :
	       S_ISSOCK(mode) ? "a socket" :
				"a device";
}

/*
 * A file cordon appends to (--log FILE, CORDON_TRACE=FILE), opened by
 * whoever runs cordon (host root when rootful), often in a launcher's
 * directory, and held by a monitor for the container's life. Its
 * directory by the host-path walk (another user's link is not followed);
 * the file itself looked at first through an O_PATH fd that follows no
 * symlink and opens nothing, and opened only when it is a regular file,
 * through that fd (a fifo is never opened, so never waited on; a
 * device's open never acts), O_NONBLOCK against a lease; in a directory
 * another user can add names to, a second name is refused as by the walk,
 * and so are a file of a third user (fs.protected_regular's rule) and one
 * open to others (cordon_path_check_planted). A missing file is made new
 * (O_EXCL|O_NOFOLLOW). O_APPEND: the monitor and later commands add to
 * the same file.
 */
#define LOG_OPEN_FLAGS (O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/*
 * NAME in DIR by the rules above. A missing one: made (APPEND_MAKE), an
 * error (APPEND_EXISTING), or an unnamed file in DIR (APPEND_UNNAMED,
 * O_TMPFILE), with *unnamed set; where the filesystem has no O_TMPFILE,
 * made as APPEND_MAKE does.
 */
static int append_open_in(int dir, const char *name, const char *path, const char *what,
			  enum cordon_append_mode mode, bool *unnamed, struct cordon_error *err)
{
	struct stat dir_st;

	if (fstat(dir, &dir_st) < 0)
		return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what, path);
	for (int tries = 0; tries < 8; tries++) {
		_cleanup_close_ int at = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		char proc[CORDON_FD_PATH_MAX];
		struct stat st;
		int fd;

		if (at >= 0) {
			if (fstat(at, &st) < 0)
				return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what,
							path);
			if (!S_ISREG(st.st_mode))
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"%s %s: not a regular file (%s)", what,
							path, file_kind(st.st_mode));
			if (cordon_path_check_names(&dir_st, &st, what, path, name, err) < 0 ||
			    cordon_path_check_planted(&dir_st, &st, what, path, name, err) < 0)
				return -1;
			fd = open(cordon_fd_path(at, proc), LOG_OPEN_FLAGS);
			if (fd < 0)
				return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what,
							path);
			return fd;
		}
		if (errno != ENOENT || mode == CORDON_APPEND_EXISTING)
			return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what, path);
		if (mode == CORDON_APPEND_UNNAMED) {
			fd = openat(dir, ".", LOG_OPEN_FLAGS | O_TMPFILE, 0600);
			if (fd >= 0) {
				*unnamed = true;
				return fd;
			}
			if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
				return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what,
							path);
		}
		fd = openat(dir, name, LOG_OPEN_FLAGS | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		if (fd >= 0)
			return fd;
		/* Made meanwhile: looked at again. */
		if (errno != EEXIST)
			return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what, path);
	}
	return cordon_error_set(err, CORDON_E_USAGE, EEXIST, "%s %s", what, path);
}

int cordon_append_open(const char *path, const char *what, struct cordon_error *err)
{
	return cordon_append_open_mode(path, what, CORDON_APPEND_MAKE, NULL, NULL, err);
}

int cordon_append_open_mode(const char *path, const char *what, enum cordon_append_mode mode,
			    int *unnamed_dir, char **unnamed_name, struct cordon_error *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = cordon_output_dir_open(path, what, CORDON_E_USAGE, &name, err);
	bool unnamed = false;
	int fd;

	if (dir < 0)
		return -1;
	fd = append_open_in(dir, name, path, what, mode, &unnamed, err);
	if (fd >= 0 && unnamed) {
		*unnamed_dir = TAKE_FD(dir);
		*unnamed_name = TAKE_PTR(name);
	}
	return fd;
}

int cordon_append_name(int *fd, int dir, const char *name, const char *path, const char *what,
		       struct cordon_error *err)
{
	char proc[CORDON_FD_PATH_MAX];
	struct stat st, nst;
	bool unnamed = false;
	int named, found;

	if (linkat(AT_FDCWD, cordon_fd_path(*fd, proc), dir, name, AT_SYMLINK_FOLLOW) == 0) {
		/*
		 * Opened again by the name, so that its holders show where the
		 * log is; the unnamed fd stays where the name was taken from
		 * it meanwhile (by whoever can write the directory).
		 */
		named = append_open_in(dir, name, path, what, CORDON_APPEND_EXISTING, &unnamed,
				       err);
		if (named >= 0 && fstat(*fd, &st) == 0 && fstat(named, &nst) == 0 &&
		    st.st_dev == nst.st_dev && st.st_ino == nst.st_ino) {
			close(*fd);
			*fd = named;
		} else if (named >= 0) {
			close(named);
		}
		memset(err, 0, sizeof(*err));
		return 0;
	}
	if (errno != EEXIST)
		return cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s: naming it", what,
					path);
	/*
	 * Made meanwhile: another command's log, then, made by the same
	 * user; a file of anyone else's is refused.
	 */
	found = append_open_in(dir, name, path, what, CORDON_APPEND_EXISTING, &unnamed, err);
	if (found < 0)
		return -1;
	if (fstat(found, &nst) < 0) {
		cordon_error_set(err, CORDON_E_USAGE, errno, "%s %s", what, path);
		close(found);
		return -1;
	}
	if (nst.st_uid != geteuid()) {
		close(found);
		return cordon_error_set(err, CORDON_E_PATH, 0,
					"%s %s: made meanwhile by uid %u, not by this user "
					"(uid %u): refused",
					what, path, (unsigned)nst.st_uid, (unsigned)geteuid());
	}
	close(*fd);
	*fd = found;
	return 1;
}

int cordon_log_configure(const char *path, enum cordon_log_format format, bool debug,
			 struct cordon_error *err)
{
	log_cfg.format = format;
	log_cfg.debug = debug;
	if (!path)
		return 0;
	log_cfg.fd = cordon_append_open(path, "--log", err);
	return log_cfg.fd < 0 ? -1 : 0;
}

void cordon_log_detach_stderr(void)
{
	if (log_cfg.fd >= 0)
		log_cfg.stderr_off = true;
}

int cordon_log_fd(void)
{
	return log_cfg.fd;
}

/* RFC 3339 in UTC with nanoseconds, as runc's logrus writes it. */
static void rfc3339_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09ldZ", base, ts.tv_nsec);
}

/*
 * The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, nothing above U+10FFFF), or 0.
 */
size_t cordon_utf8_sequence(const unsigned char *s)
{
	size_t len;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

char *cordon_utf8_sanitize(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	/* U+FFFD is three bytes for one: at most three times as long. */
	char *out = cordon_xmalloc(strlen(s) * 3 + 1);
	size_t n = 0;

	while (*p) {
		size_t len;

		if (*p < 0x80) {
			out[n++] = (char)*p++;
		} else if ((len = cordon_utf8_sequence(p)) > 0) {
			memcpy(out + n, p, len);
			n += len, p += len;
		} else {
			memcpy(out + n, "\xef\xbf\xbd", 3);
			n += 3, p++;
		}
	}
	out[n] = '\0';
	return out;
}

/*
 * A JSON string body: quotes, backslashes and control characters escaped,
 * a byte that is not part of well-formed UTF-8 (a path or an argument
 * from the command line) replaced by U+FFFD: a launcher's JSON decoder
 * (containerd's shim reads the --log file) refuses the line otherwise.
 */
static size_t json_escape(const char *s, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p && n + 7 < cap) {
		size_t len;

		if (*p == '"' || *p == '\\') {
			out[n++] = '\\';
			out[n++] = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			n += (size_t)snprintf(out + n, cap - n, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			out[n++] = (char)*p++;
		} else if ((len = cordon_utf8_sequence(p)) > 0) {
			memcpy(out + n, p, len);
			n += len, p += len;
		} else {
			n += (size_t)snprintf(out + n, cap - n, "\\ufffd");
			p++;
		}
	}
	out[n] = '\0';
	return n;
}

/* One log line (msg has no newline) in the configured format, to fd. */
static void log_line(int fd, enum cordon_log_format format, const char *level, const char *text)
{
	char line[3072];
	int n;

	if (format == CORDON_LOG_JSON) {
		char esc[2400], when[48];

		json_escape(text, esc, sizeof(esc));
		rfc3339_now(when, sizeof(when));
		n = snprintf(line, sizeof(line), "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
			     level, esc, when);
	} else {
		n = snprintf(line, sizeof(line), "cordon: %s\n", text);
	}
	if (n > 0)
		cordon_write_all(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/*
 * text: "CODE: message" or "warning: message"; the level for JSON lines.
 * With --log, only an error is also written to stderr, as runc does: a
 * launcher hands create the container's own stderr (containerd's shim, a
 * fifo of the task's output), where a warning would read as the workload's.
 */
static void log_emit(const char *level, const char *text, const char *json_text)
{
	if (log_cfg.fd >= 0) {
		if (!log_cfg.stderr_off && strcmp(level, "error") == 0)
			log_line(STDERR_FILENO, CORDON_LOG_TEXT, level, text);
		log_line(log_cfg.fd, log_cfg.format, level,
			 log_cfg.format == CORDON_LOG_JSON ? json_text : text);
		return;
	}
	log_line(STDERR_FILENO, log_cfg.format, level,
		 log_cfg.format == CORDON_LOG_JSON ? json_text : text);
}

void cordon_error_print(const struct cordon_error *err)
{
	char msg[1024], text[1100];

	cordon_error_message(err, msg, sizeof(msg));
	/* One line, always: a multi-line reason would break log parsers. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	snprintf(text, sizeof(text), "%s: %s", cordon_code_name(err->code), msg);
	log_emit("error", text, text);
}

static void vlog(const char *level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char msg[1024], text[1100];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	snprintf(text, sizeof(text), "%s: %s", level, msg);
	log_emit(level, text, msg);
}

void cordon_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning", fmt, ap);
	va_end(ap);
}

void cordon_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_cfg.debug)
		return;
	va_start(ap, fmt);
	vlog("debug", fmt, ap);
	va_end(ap);
}
