/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the state store (state.c) and its sweep (sweep.c); not part of the public API. */
#ifndef CORDON_STATE_INTERNAL_H
#define CORDON_STATE_INTERNAL_H

#include "cordon/state.h"

#define STATE_FILE "state.json"

/* The directory NAME of dir_fd, opened without following a link: ours, writable by nobody else. */
int state_open_private_dir(int dir_fd, const char *name);
/* A file of an entry, read only as what cordon wrote (a regular file, bounded): 0 or -errno. */
int state_read(int dir_fd, const char *name, size_t max, char **out, size_t *out_len);
/* state.json's text into *info (id: for messages). */
int state_parse(const char *id, const char *text, struct cordon_state_info *info,
		struct cordon_error *err);
/* pid is the process that started at start (a recycled pid is another). */
bool state_process_alive(pid_t pid, uint64_t start);
/*
 * A dead sandbox's recorded cgroups, each with its tree; id: only leaves
 * named cordon-ID. -EBUSY when a recorded one still holds a process (left
 * alone; a planned one is only ever rmdir'd).
 */
int state_remove_cgroups(int dir, const char *id);
/* The entry id of the state root, every name in it first. */
void state_remove_entry(int root_fd, const char *id);

#endif
