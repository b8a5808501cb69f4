/* SPDX-License-Identifier: Apache-2.0 */
/* What a fuzz harness shares with the replay driver (replay.c). */
#ifndef CORDON_TESTS_FUZZ_H
#define CORDON_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional: a harness's set-up, once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The file being replayed, for messages; NULL under libFuzzer. */
#ifdef CORDON_FUZZ_REPLAY
extern const char *fuzz_current_input;
#else
static const char *const fuzz_current_input;
#endif

#endif
