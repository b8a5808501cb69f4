// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "cli.h"

int cli_flag_next(const struct cli_flag *flags, int argc, char **argv, int *i, int *id,
		  const char **value, struct cordon_error *err)
{
	const char *arg = argv[*i], *eq;
	size_t len;

	if (strcmp(arg, "-h") == 0)
		arg = "--help";
	if (strncmp(arg, "--", 2) != 0)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "unknown option '%s'", arg);
	arg += 2;
	eq = strchr(arg, '=');
	len = eq ? (size_t)(eq - arg) : strlen(arg);
	for (const struct cli_flag *f = flags; f->name; f++) {
		if (strlen(f->name) != len || strncmp(f->name, arg, len) != 0)
			continue;
		*id = f->id;
		(*i)++;
		if (!f->takes_value) {
			if (eq)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"--%s takes no value", f->name);
			*value = NULL;
			return 0;
		}
		if (eq) {
			*value = eq + 1;
			return 0;
		}
		if (*i >= argc)
			return cordon_error_set(err, CORDON_E_USAGE, 0, "--%s needs a value",
						f->name);
		*value = argv[(*i)++];
		return 0;
	}
	return cordon_error_set(err, CORDON_E_USAGE, 0, "unknown option '--%.*s'", (int)len, arg);
}
