// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "cli.h"

struct cli_global cli_global;

int cli_flag_next(const struct cli_flag *flags, int argc, char **argv, int *i, int *id,
		  const char **value, struct cordon_error *err)
{
	const char *arg = argv[*i], *eq;
	size_t len;

	if (strcmp(arg, "-h") == 0)
		arg = "--help";
	if (arg[0] == '-' && arg[1] && arg[1] != '-' && !arg[2]) {
		for (const struct cli_flag *f = flags; f->name; f++) {
			if (f->short_name != arg[1])
				continue;
			*id = f->id;
			(*i)++;
			*value = NULL;
			if (!f->takes_value)
				return 0;
			if (*i >= argc)
				return cordon_error_set(err, CORDON_E_USAGE, 0, "%s needs a value", arg);
			*value = argv[(*i)++];
			return 0;
		}
	}
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

int cli_parse_args(const struct cli_flag *flags, int help_id, int argc, char **argv,
		   cli_apply_fn apply, void *ctx, const char **pos, int max, int *n_pos,
		   struct cordon_error *err)
{
	bool only_pos = false;

	*n_pos = 0;
	for (int i = 0; i < argc;) {
		const char *value;
		int id;

		if (!only_pos && strcmp(argv[i], "--") == 0) {
			only_pos = true;
			i++;
			continue;
		}
		if (only_pos || argv[i][0] != '-' || argv[i][1] == '\0') {
			if (*n_pos >= max)
				return cordon_error_set(err, CORDON_E_USAGE, 0,
							"unexpected argument '%s'", argv[i]);
			pos[(*n_pos)++] = argv[i++];
			continue;
		}
		if (cli_flag_next(flags, argc, argv, &i, &id, &value, err) < 0)
			return -1;
		if (id == help_id)
			return apply(ctx, id, NULL, err) < 0 ? -1 : 1;
		if (apply(ctx, id, value, err) < 0)
			return -1;
	}
	return 0;
}

int cli_apply_help(void *ctx, int id, const char *value, struct cordon_error *err)
{
	(void)id;
	(void)value;
	(void)err;
	*(bool *)ctx = true;
	return 0;
}

int cli_fail(const struct cordon_error *err)
{
	cordon_error_print(err);
	return CORDON_EXIT_FAILURE;
}
