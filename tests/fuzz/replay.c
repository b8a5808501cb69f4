// SPDX-License-Identifier: Apache-2.0
/*
 * The replay driver shared by every fuzz harness: a main() that feeds each
 * file given (or every file of a directory given) to
 * LLVMFuzzerTestOneInput once, and reports one TAP line. Built with the
 * harness when -DCORDON_FUZZ_REPLAY, with any compiler, so CI replays the
 * seed corpus even without clang.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cordon/core.h"
#include "fuzz.h"

const char *fuzz_current_input;
/* Weak: called, as libFuzzer calls it, only when the harness has one. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
static const char *program = "fuzz-replay";

/* Inputs of any size are fed: a parser must refuse the ones too large for it. */
#define REPLAY_INPUT_MAX (1024 * 1024)

static int replay_file(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "rbe");
	_cleanup_free_ uint8_t *buf = malloc(REPLAY_INPUT_MAX);
	size_t n;

	if (!f || !buf) {
		fprintf(stderr, "%s: %s: %s\n", program, path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, REPLAY_INPUT_MAX, f);
	if (ferror(f)) {
		fprintf(stderr, "%s: %s: read error\n", program, path);
		return -1;
	}
	fuzz_current_input = path;
	LLVMFuzzerTestOneInput(buf, n);
	fuzz_current_input = NULL;
	return 0;
}

static int replay_dir(const char *dir, size_t *count)
{
	struct dirent **entries;
	int n = scandir(dir, &entries, NULL, alphasort);
	int ret = 0;

	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", program, dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;
		struct stat st;

		if (entries[i]->d_name[0] != '.' &&
		    asprintf(&path, "%s/%s", dir, entries[i]->d_name) >= 0 &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (replay_file(path) < 0)
				ret = -1;
			else
				(*count)++;
		}
		free(entries[i]);
	}
	free(entries);
	return ret;
}

int main(int argc, char **argv)
{
	program = argv[0];
	size_t count = 0;
	int failed = 0;

	printf("1..1\n");
	fflush(stdout);
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %s: %s\n", program, argv[i], strerror(errno));
			failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			failed |= replay_dir(argv[i], &count) < 0;
		} else if (replay_file(argv[i]) < 0) {
			failed = 1;
		} else {
			count++;
		}
	}
	if (failed || count == 0) {
		printf("not ok 1 - replayed %zu inputs%s\n", count,
		       failed ? ", some unreadable" : "");
		return 1;
	}
	printf("ok 1 - replayed %zu inputs\n", count);
	return 0;
}
