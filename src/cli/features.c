// SPDX-License-Identifier: Apache-2.0
/* `cordon features`: the OCI runtime features document on stdout. */
#include <string.h>

#include "cli.h"

int cli_features(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	_cleanup_free_ char *json = NULL;

	if (argc > 0 && (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
		puts("Usage: cordon features\n\nPrint what cordon supports of the OCI runtime "
		     "spec, as the runtime-spec features JSON.");
		return 0;
	}
	if (argc > 0) {
		cordon_error_set(&err, CORDON_E_USAGE, 0, "features: unexpected argument '%s'",
				 argv[0]);
		cordon_error_print(&err);
		return CORDON_EXIT_FAILURE;
	}
	json = cordon_oci_features();
	if (fputs(json, stdout) == EOF || fflush(stdout) == EOF) {
		cordon_error_set(&err, CORDON_E_INTERNAL, errno, "writing the features document");
		cordon_error_print(&err);
		return CORDON_EXIT_FAILURE;
	}
	return 0;
}
