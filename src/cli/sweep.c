// SPDX-License-Identifier: Apache-2.0
/* `cordon sweep`: reap the state of sandboxes whose supervisor is gone. */
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "cordon/state.h"

int cli_sweep(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	_cleanup_close_ int root = -1;
	int removed;

	if (argc > 0 && (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
		puts("Usage: cordon sweep\n\nRemove what sandboxes whose supervisor died left behind.");
		return 0;
	}
	if (argc > 0) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "sweep: unexpected argument '%s'", argv[0]);
		cordon_error_print(&err);
		return CORDON_EXIT_FAILURE;
	}
	root = cordon_state_root_open(cli_global.root, NULL, &err);
	if (root < 0) {
		cordon_error_print(&err);
		return CORDON_EXIT_FAILURE;
	}
	removed = cordon_state_sweep(root, UINT_MAX);
	printf("removed %d\n", removed);
	return 0;
}
