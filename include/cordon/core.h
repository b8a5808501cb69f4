/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core: the error type every fallible function fills, cleanup helpers,
 * fd and string utilities, and the thin syscall wrappers glibc lacks.
 *
 * Convention: a fallible function takes `struct cordon_error *err` last,
 * returns a negative value on failure after filling *err, and callers pass
 * the failure up with `if (ret < 0) return ret;`, optionally wrapping the
 * message with context on the way (cordon_error_wrap).
 */
#ifndef CORDON_CORE_H
#define CORDON_CORE_H

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

/* Exit statuses of cordon itself (the workload's own status passes through). */
#define CORDON_EXIT_FAILURE 125 /* cordon could not set up or run the sandbox */
#define CORDON_EXIT_CANNOT_EXEC 126
#define CORDON_EXIT_NOT_FOUND 127
#define CORDON_EXIT_TIMEOUT 124

/*
 * Stable error codes: printed as `cordon: CORDON_E_x: message`, written to
 * --result-json, and documented in docs/errors.md. Never renumber or
 * rename one; add new codes at the end.
 */
enum cordon_code {
	CORDON_OK = 0,
	CORDON_E_USAGE,     /* bad flag or argument */
	CORDON_E_ROOTFS,    /* rootfs missing, not a directory, unusable */
	CORDON_E_PATH,      /* a path argument (bind, workspace, cwd) is bad */
	CORDON_E_USERNS,    /* id maps could not be computed or written */
	CORDON_E_NAMESPACE, /* namespace creation failed */
	CORDON_E_MOUNT,     /* a mount in the sandbox failed */
	CORDON_E_STATE,     /* state directory or lock problem */
	CORDON_E_RESULT,    /* --result-json could not be written */
	CORDON_E_EXEC,      /* the command could not be executed (126/127) */
	CORDON_E_INTERNAL,  /* a bug or an unexpected kernel answer */
	CORDON_E_SECURITY,  /* capabilities, seccomp, no_new_privs, rlimits */
	CORDON_E_CGROUP,    /* cgroup setup or limits */
	CORDON_E_NET_POLICY, /* network policy setup */
	CORDON_E_SPEC,      /* OCI config.json */
	CORDON_E_HOOK,      /* an OCI hook failed, timed out or could not run */
	CORDON_E_AUDIT,     /* the audit log could not be opened or written */
	CORDON_CODE_COUNT,
};

struct cordon_error {
	enum cordon_code code;
	int errnum; /* errno of the failing call, 0 when none */
	char msg[768];
};

/* Fill *err and return -1. errnum 0 means "no errno to report". */
int cordon_error_set(struct cordon_error *err, enum cordon_code code, int errnum,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Prefix the message with "context: " and return -1. */
int cordon_error_wrap(struct cordon_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

const char *cordon_code_name(enum cordon_code code);

/* "message: strerror(errnum)" without the code, into buf. */
void cordon_error_message(const struct cordon_error *err, char *buf, size_t len);

/* Print `cordon: CODE: message` on stderr. */
void cordon_error_print(const struct cordon_error *err);

/* Diagnostics that are not errors (warnings the user must see). */
void cordon_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with --debug. */
void cordon_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Where errors and warnings go (the global --log, --log-format and --debug
 * flags). Without a log file they go to stderr in the log format (text:
 * `cordon: CODE: message`; json: one object per line, {"level", "msg",
 * "time"}). With one, the file gets every message in the log format,
 * appended, and stderr keeps only an error's text line (a launcher may
 * hand create the container's own stderr, as containerd's shim does).
 */
enum cordon_log_format { CORDON_LOG_TEXT, CORDON_LOG_JSON };
int cordon_log_configure(const char *path, enum cordon_log_format format, bool debug,
			 struct cordon_error *err);
/* A detached monitor: stop writing to stderr (it belongs to the container). */
void cordon_log_detach_stderr(void);
/* The --log file's fd (a detached monitor keeps it), or -1. */
int cordon_log_fd(void);

/*
 * A file cordon appends to, opened by the rules of --log (core/error.c):
 * its directory by the host-path walk, the file only when regular, a
 * missing one made 0600. CORDON_E_USAGE naming what on failure.
 */
int cordon_append_open(const char *path, const char *what, struct cordon_error *err);
/*
 * The same, where a missing file is made (CORDON_APPEND_MAKE), refused
 * (CORDON_APPEND_EXISTING), or made without a name (CORDON_APPEND_UNNAMED,
 * O_TMPFILE, where the filesystem has it): then *unnamed_dir (an O_PATH fd
 * of its directory) and *unnamed_name say where cordon_append_name gives
 * it its name once it is to be kept; a command refused before that leaves
 * nothing. Left -1 and NULL otherwise.
 */
enum cordon_append_mode { CORDON_APPEND_MAKE, CORDON_APPEND_EXISTING, CORDON_APPEND_UNNAMED };
int cordon_append_open_mode(const char *path, const char *what, enum cordon_append_mode mode,
			    int *unnamed_dir, char **unnamed_name, struct cordon_error *err);
/*
 * Names the unnamed file *FD as NAME in DIR. Returns 0 when it has that
 * name, *FD then an fd opened by it (of the same file: /proc shows the
 * name, not "(deleted)"); 1 where the name was made meanwhile (another
 * command's log), *FD then an fd of that file, opened by the same rules
 * as the flag's, the file *FD was closed; -1 on error, *FD unchanged.
 */
int cordon_append_name(int *fd, int dir, const char *name, const char *path, const char *what,
		       struct cordon_error *err);

/*
 * The start-up trace (CORDON_TRACE=FILE, docs/benchmarks.md): each
 * process of a sandbox appends "PHASE PROCESS NS" lines, NS its
 * CLOCK_MONOTONIC time in nanoseconds, as each step ends. Off, a trace
 * point is one test of cordon_trace_fd. The fd is close-on-exec and goes
 * with the fds a process closes wholesale unless kept
 * (cordon_close_fds_except turns the trace off where it closes it).
 */
extern int cordon_trace_fd;
/* Opens $CORDON_TRACE if set (once, in main); -1 with err if it cannot be. */
int cordon_trace_open(struct cordon_error *err);
/* The name this process writes in its lines (supervisor, init, workload, ...). */
void cordon_trace_process(const char *name);
void cordon_trace_write(const char *phase);
static inline void cordon_trace(const char *phase)
{
	if (__builtin_expect(cordon_trace_fd >= 0, 0))
		cordon_trace_write(phase);
}

/* --- cleanup helpers ------------------------------------------------ */

static inline void cordon_freep(void *p)
{
	free(*(void **)p);
}
static inline void cordon_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		*fd = -1;
		errno = saved;
	}
}
static inline void cordon_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
void cordon_strv_free(char **v);
static inline void cordon_strv_freep(char ***v)
{
	cordon_strv_free(*v);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(cordon_freep)
#define _cleanup_close_ _cleanup_(cordon_closep)
#define _cleanup_fclose_ _cleanup_(cordon_fclosep)
#define _cleanup_strv_ _cleanup_(cordon_strv_freep)

/* Hand ownership on: returns the value and clears the variable. */
#define TAKE_PTR(p)                                                                  \
	({                                                                           \
		__typeof__(p) _p = (p);                                              \
		(p) = NULL;                                                          \
		_p;                                                                  \
	})
#define TAKE_FD(fd)                                                                  \
	({                                                                           \
		int _fd = (fd);                                                      \
		(fd) = -1;                                                           \
		_fd;                                                                 \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- memory and strings ---------------------------------------------- */

/* Allocation failure is not recoverable in a short-lived runtime. */
void *cordon_xmalloc(size_t n);
void *cordon_xcalloc(size_t n, size_t size);
void *cordon_xrealloc(void *p, size_t n);
char *cordon_xstrdup(const char *s);
char *cordon_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Append s (copied) to a NULL-terminated vector of *n entries. */
void cordon_strv_push(char ***v, size_t *n, const char *s);

/* Strict decimal parses: whole string, no sign surprises, range checked. */
int cordon_parse_u64(const char *s, uint64_t *out);
/* Leading decimal digits, then only whitespace (cgroup and proc files). */
int cordon_parse_u64_prefix(const char *s, uint64_t *out);
/* Seconds with an optional fraction ("1.5"), to milliseconds. */
int cordon_parse_seconds_ms(const char *s, uint64_t *out_ms);

/* --- digests ------------------------------------------------------ */

struct cordon_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t used;
};

void cordon_sha256_init(struct cordon_sha256 *c);
void cordon_sha256_update(struct cordon_sha256 *c, const void *data, size_t len);
void cordon_sha256_final(struct cordon_sha256 *c, uint8_t out[32]);
/* Lower-case hex of data into out (2*len+1 bytes). */
void cordon_hex(const uint8_t *data, size_t len, char *out);

/* --- fds and files ------------------------------------------------- */

/* write() all of buf, retrying on EINTR and short writes. */
int cordon_write_all(int fd, const void *buf, size_t len);
/*
 * A memfd holding data, sealed against any change (write, grow, shrink,
 * new seals), its offset at 0: what one process hands another to read.
 * The fd (close-on-exec), or -errno.
 */
int cordon_memfd_sealed(const char *name, const void *data, size_t len);
/* One message of len bytes with n fds (SCM_RIGHTS, at most 4; n 0: none) on a socket: 0 or -errno. */
#define CORDON_SEND_FDS_MAX 4
int cordon_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n, int flags);
/* Write a whole small file (e.g. /proc/PID/uid_map) in one write(). */
int cordon_write_file_at(int dirfd, const char *path, const char *data, size_t len);
/* Read a small file into a NUL-terminated malloc'd buffer. */
int cordon_read_file_at(int dirfd, const char *path, char **out, size_t *out_len);

/* --- files cordon writes where names may be planted (src/core/output.c) */

#define CORDON_REPLACE_SYNC 1u /* fsync the file before it gets its name */
/*
 * Swap the new file with the old one (RENAME_EXCHANGE), then unlink the
 * old one, rather than rename over it (a plain rename where NAME does
 * not exist or the filesystem cannot swap). A symlink or hard link at
 * NAME is unlinked, never followed, as with a rename; but a directory
 * there is moved to the temp name (the call then fails, EISDIR, with
 * the new file at NAME), where a rename fails before anything moves:
 * for the state directory, not for --result-json. Why: on ext4, a rename
 * over an existing file starts the new file's writeback at once
 * (auto_da_alloc), which costs the rename milliseconds and the later
 * unlink a wait for that I/O.
 */
#define CORDON_REPLACE_EXCHANGE 2u
/*
 * Give NAME in DIR_FD a new file holding DATA: made without a name
 * (O_TMPFILE, else O_CREAT|O_EXCL|O_NOFOLLOW under TEMP_PREFIX and 64
 * random bits), then renamed over NAME. A symlink, hard link or file
 * planted at NAME or at any temp name never receives the write. MODE as
 * for open(2). 0 or -errno; no temp name is left on failure.
 */
int cordon_file_replace_at(int dir_fd, const char *name, const char *temp_prefix,
			   const void *data, size_t len, mode_t mode, unsigned flags);
/*
 * The directories that held the symlinks a walk followed, and those it
 * reached by '..' (O_PATH fds, in the order met), for a check that needs
 * what is known only later: an output path that went through a link or
 * '..' in the sandbox's own places, which the workload may have made or
 * moved (its files are root's or the caller's on the host, so ownership
 * cannot tell), is refused (cordon_spec_links_check).
 */
#define CORDON_PATH_LINKS_MAX 40
struct cordon_path_links {
	int fd[CORDON_PATH_LINKS_MAX];
	size_t n;
};
void cordon_path_links_close(struct cordon_path_links *links);
/*
 * The directory of PATH, where a file cordon writes at PATH is made
 * (cordon_file_replace_at): opened by the host-path walk
 * (cordon_path_open, with `code`) as an O_PATH fd, which is returned, and
 * checked to be a directory; *name gets PATH's last component (malloc'd),
 * which must be a file name. -1 with err set ("WHAT ...").
 */
int cordon_output_dir_open(const char *path, const char *what, enum cordon_code code, char **name,
			   struct cordon_error *err);
/* The same, the links its walk followed added to *links (cordon_path_open_links). */
int cordon_output_dir_open_links(const char *path, const char *what, enum cordon_code code,
				 char **name, struct cordon_path_links *links,
				 struct cordon_error *err);
/*
 * A copy of s that is well-formed UTF-8 (RFC 3629): each byte that is not
 * part of a well-formed sequence replaced by U+FFFD (malloc'd).
 */
char *cordon_utf8_sanitize(const char *s);
/*
 * --pid-file PATH (the caller's, as host root when rootful, often in a
 * shared directory): its directory opened when the flag is used, before
 * anything is created (cordon_output_dir_open, CORDON_E_PATH); the pid
 * then written in decimal as a new file renamed over the name
 * (cordon_file_replace_at: a reader sees no file or the whole pid, and
 * nothing planted at any name receives it).
 */
struct cordon_pid_file {
	int dir_fd; /* the directory (O_PATH), -1 when closed */
	char *name;
	char *path; /* as given, for messages */
	struct cordon_path_links links; /* where the walk to it followed links */
};
int cordon_pid_file_open(struct cordon_pid_file *pf, const char *path, struct cordon_error *err);
int cordon_pid_file_write(const struct cordon_pid_file *pf, pid_t pid, struct cordon_error *err);
void cordon_pid_file_close(struct cordon_pid_file *pf);

/* --- files a caller or an image hands cordon (src/core/input.c) ---- */

/*
 * Caps on what cordon reads from such a file (docs/errors.md): a JSON
 * document (config.json, exec --process, update --resources,
 * --seccomp-profile) and a line-based text (--net-allow-file, the
 * rootfs's /etc/passwd and /etc/group).
 */
#define CORDON_INPUT_JSON_MAX (8u << 20)
#define CORDON_INPUT_TEXT_MAX (4u << 20)
/*
 * Nesting a JSON input may have. The deepest the OCI schema goes is 7
 * levels (an object in linux.seccomp.syscalls[].args[]); yajl_tree_free
 * recurses once per level, so a document 800k deep ends cordon on SIGSEGV.
 */
#define CORDON_JSON_DEPTH_MAX 64

/*
 * Read a whole input file into a NUL-terminated malloc'd buffer. The open
 * is O_NONBLOCK | O_NOCTTY (a fifo's open does not wait for a writer, a
 * tty does not become the controlling one), the file must be a regular
 * file ("WHAT: not a regular file": not a fifo, a device such as /dev/zero
 * or a socket), and at most max bytes ("WHAT: larger than MAX bytes"),
 * counted as read, so that a file growing while it is read is refused
 * too. Every message starts with `what` and carries `code`.
 */
int cordon_input_read(int dirfd, const char *path, size_t max, enum cordon_code code,
		      const char *what, char **out, size_t *out_len, struct cordon_error *err);
/*
 * The same for a host path the user named, opened by cordon_path_open (the
 * unsafe-transition rule of path.c) and read through that fd.
 */
int cordon_input_read_path(const char *path, size_t max, enum cordon_code code, const char *what,
			   char **out, size_t *out_len, struct cordon_error *err);
/* The same, a relative PATH walked from the directory DIR_FD (a bundle's config.json). */
int cordon_input_read_path_at(int dir_fd, const char *path, size_t max, enum cordon_code code,
			      const char *what, char **out, size_t *out_len,
			      struct cordon_error *err);
/* The same for an fd the caller opened (with O_NONBLOCK); the fd stays open. */
int cordon_input_read_fd(int fd, size_t max, enum cordon_code code, const char *what, char **out,
			 size_t *out_len, struct cordon_error *err);

/*
 * The deepest nesting of arrays and objects in a JSON text, into *depth:
 * brackets in strings (escapes included) are not counted, and the scan
 * stops at the first level beyond stop (*depth = stop + 1). -EINVAL for a
 * '/' outside a string: yajl_tree_parse would take it for a comment,
 * whose text this scan must not misread (a quote in a comment would hide
 * the brackets after it), and JSON has no comments. Malformed text is
 * otherwise left to the parser.
 */
int cordon_json_depth(const char *text, size_t len, size_t stop, size_t *depth);

/*
 * Parse a JSON input with yajl_tree: no NUL byte, no comment, nesting at
 * most CORDON_JSON_DEPTH_MAX (measured before any tree is built), yajl's
 * message cut to its first line. The messages name no file: callers wrap
 * them with theirs.
 */
struct yajl_val_s;
int cordon_json_parse(const char *text, size_t len, enum cordon_code code, struct yajl_val_s **out,
		      struct cordon_error *err);
/* What a yajl generator made, as a NUL-terminated string (malloc'd); the generator is freed. */
struct yajl_gen_t;
char *cordon_json_gen_take(struct yajl_gen_t *g);

/*
 * Host root: euid 0 in the initial user namespace (its uid_map maps every
 * id to itself). Root of a user namespace (rootless podman runs its
 * runtime so) is not: it cannot create host links, idmapped mounts of
 * host filesystems or cgroups, and its ids are the namespace's.
 */
bool cordon_host_root(void);
/* euid 0 in a user namespace other than the initial one. */
bool cordon_userns_root(void);

/*
 * The length of the well-formed UTF-8 sequence of two to four bytes at s
 * (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF), or 0
 * (ASCII included: the caller takes a byte below 0x80 as it is).
 */
size_t cordon_utf8_sequence(const unsigned char *s);

/* Time since boot in ms and µs (CLOCK_MONOTONIC) and wall time in ms. */
uint64_t cordon_now_mono_us(void);
uint64_t cordon_now_wall_ms(void);

/* --- syscall wrappers glibc 2.36 does not offer cleanly --------------- */

struct clone_args;
struct open_how;
struct mount_attr;
pid_t cordon_clone3(struct clone_args *args, size_t size);
int cordon_openat2(int dirfd, const char *path, struct open_how *how, size_t size);
/*
 * openat2's RESOLVE_IN_ROOT / RESOLVE_BENEATH walk done one name at a time
 * in user space, never handing the kernel a ".." (which fails with EAGAIN
 * while anything on the host is renamed): cordon_openat2 falls back to it.
 */
int cordon_openat2_walk(int dirfd, const char *path, const struct open_how *how);
int cordon_open_tree(int dirfd, const char *path, unsigned int flags);
int cordon_move_mount(int from_dirfd, const char *from_path, int to_dirfd,
		      const char *to_path, unsigned int flags);
int cordon_mount_setattr(int dirfd, const char *path, unsigned int flags,
			 struct mount_attr *attr, size_t size);
int cordon_pivot_root(const char *new_root, const char *put_old);
int cordon_pidfd_send_signal(int pidfd, int sig);
int cordon_pidfd_open(pid_t pid);
int cordon_fsopen(const char *fsname, unsigned int flags);
int cordon_fsconfig(int fd, unsigned int cmd, const char *key, const void *value, int aux);
int cordon_fsmount(int fd, unsigned int flags, unsigned int attr_flags);

/* "/proc/self/fd/N" for an fd, in a caller-provided buffer. */
#define CORDON_FD_PATH_MAX 32
const char *cordon_fd_path(int fd, char buf[CORDON_FD_PATH_MAX]);

/* --- host paths (path.c) ---------------------------------------------- */

/* What was checked of a host path: the object (dev, ino) and its type and owner. */
struct cordon_path_id {
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	bool valid;
};

/*
 * Open PATH as an O_PATH fd, one component at a time, refusing unsafe
 * ownership transitions (a symlink or '..' by which a directory or link of
 * a user other than root and the caller leads out of that user's
 * directories: CORDON_E_PATH naming the component). Other failures are
 * CODE with "WHAT PATH". Returns the fd, or -1 with *err filled.
 */
int cordon_path_open(const char *path, const char *what, enum cordon_code code,
		     struct cordon_error *err);
/* The same walk, a relative PATH starting at DIR_FD (a directory, or AT_FDCWD). */
int cordon_path_open_at(int dir_fd, const char *path, const char *what, enum cordon_code code,
			struct cordon_error *err);
/*
 * The same walk, making each missing component a directory of MODE (as
 * `mkdir -p` does, never through another user's link): the state root.
 */
int cordon_path_mkdirs(const char *path, mode_t mode, const char *what, enum cordon_code code,
		       struct cordon_error *err);
/* cordon_path_open, adding to *links (NULL: none kept). */
int cordon_path_open_links(const char *path, const char *what, enum cordon_code code,
			   struct cordon_path_links *links, struct cordon_error *err);
struct stat;
/*
 * The walk's rule for a second name, for a file FILE found at COMP in the
 * directory DIR: a non-directory with more than one name is refused
 * (CORDON_E_PATH, "WHAT PATH: 'COMP' ...") when DIR belongs to another
 * user than root and the caller and the file is not that user's, or when
 * DIR is one everyone can add names to (sticky or world-writable),
 * whoever owns the file. 0 when it may be used.
 */
int cordon_path_check_names(const struct stat *dir, const struct stat *file, const char *what,
			    const char *path, const char *comp, struct cordon_error *err);
/*
 * The rule for an existing file cordon writes into (an append log) at COMP
 * in DIR: in a directory others can add names to (sticky or
 * world-writable), a file owned by neither the caller nor DIR's owner is
 * refused (CORDON_E_PATH), as fs.protected_regular refuses an O_CREAT
 * open of it, and so is one that others may read or write (mode & 077).
 */
int cordon_path_check_planted(const struct stat *dir, const struct stat *file, const char *what,
			      const char *path, const char *comp, struct cordon_error *err);
void cordon_path_id_of(const struct stat *st, struct cordon_path_id *id);
/*
 * Open PATH again the same way (in another mount namespace, where the
 * first fd cannot be mounted) and refuse it with CORDON_E_PATH unless it
 * is the very object ID recorded. Returns the fd, or -1 with *err filled.
 */
int cordon_path_reopen(const char *path, const struct cordon_path_id *id, const char *what,
		       struct cordon_error *err);

/* --- waits a signal ends (interrupt.c) ---------------------------------- */

/*
 * The commands that act on a container end when SIGINT, SIGTERM or SIGHUP
 * comes while they wait (for its lock, its monitor, its init, a freeze),
 * let go of what they hold and say so. cordon_interrupt_arm blocks those
 * signals and notes them with a handler (one the caller ignores stays
 * ignored); the waits below let them in for their own duration only, so
 * one that comes at any moment ends the next wait at once. Unarmed (a
 * supervisor, a monitor), the waits are plain ones.
 */
void cordon_interrupt_arm(void);
/* The first signal that came (SIGINT, SIGTERM or SIGHUP) since arming, or 0. */
int cordon_interrupted(void);
/*
 * ppoll: > 0 when ready, 0 once timeout_ms (-1: none) passed, -EINTR when
 * interrupted (also before it starts, if a signal came earlier), -errno.
 */
int cordon_wait_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
/* Sleep ms: 0, or -EINTR when interrupted. */
int cordon_wait_ms(int ms);
/* flock(fd, op) that an interrupt ends: 0, -EINTR, or -errno. */
int cordon_wait_flock(int fd, int op);
/* CORDON_E_STATE "WHAT: interrupted by SIGTERM" into err; returns -1. */
int cordon_interrupt_error(struct cordon_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- a cordon process that stays inside a sandbox (proc.c) ------------- */

/* Close every fd >= first except the (at most 64) in keep. Returns 0 or -errno. */
int cordon_close_fds_except(int first, const int *keep, size_t n);
/* Show TITLE as our cmdline and nothing as our environ. Returns 0 or -errno. */
int cordon_proc_title_hide(const char *title);
/*
 * Whether process pid (a child of ours, not reaped: its pid cannot be
 * another's) has passed execve: the kernel sets PF_FORKNOEXEC at fork and
 * clears it in execve before it closes the close-on-exec fds, so after
 * the EOF of such an fd this tells an execve from a death before it,
 * also of a zombie. 1, 0, or -errno when its stat cannot be read.
 */
int cordon_proc_execed(pid_t pid);

#endif
