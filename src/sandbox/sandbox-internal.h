/* SPDX-License-Identifier: Apache-2.0 */
/* The supervisor ⇄ sandbox-init protocol and the child entry point. */
#ifndef CORDON_SANDBOX_INTERNAL_H
#define CORDON_SANDBOX_INTERNAL_H

#include "cordon/fs.h"
#include "cordon/sandbox.h"
#include "cordon/userns.h"

/* Messages on the SOCK_SEQPACKET sync socket, one datagram each. */
enum sync_type {
	SYNC_GO = 1,       /* supervisor → init: maps written, fds attached */
	SYNC_SETUP_FAILED, /* init → supervisor: error before exec (exit 125) */
	SYNC_EXEC_FAILED,  /* init → supervisor: execve failed (exit 126/127) */
	SYNC_EXITED,       /* init → supervisor: the workload's wait status */
};

struct sync_msg {
	uint32_t type;
	int32_t status;  /* SYNC_EXITED: wait status; SYNC_EXEC_FAILED: exit code */
	int32_t errnum;
	uint32_t code;   /* enum cordon_code */
	char text[768]; /* as struct cordon_error.msg */
};

/* Everything the init process needs; it runs in a copy of the supervisor. */
struct child_ctx {
	const struct cordon_spec *spec;
	const struct cordon_idplan *plan; /* the sandbox's maps (for the nested ns) */
	bool userns;                      /* setup runs in a new user namespace */
	bool rootful;                     /* the supervisor runs as host root */
	int sync_fd;
	int stdout_fd; /* pipe write ends when output is counted, else -1 */
	int stderr_fd;
};

/* The sandbox's pid 1: setup, spawn the workload, reap, report. */
_Noreturn void sandbox_child(const struct child_ctx *ctx);

int sync_send(int fd, const struct sync_msg *msg, const int *fds, size_t n_fds);
/* Receive one message; fds (up to *n_fds) are returned through fds. 0 on EOF. */
ssize_t sync_recv(int fd, struct sync_msg *msg, int *fds, size_t *n_fds);

/* Signals the supervisor forwards and the init process relays. */
extern const int sandbox_forwarded_signals[];
extern const size_t sandbox_n_forwarded_signals;

#endif
