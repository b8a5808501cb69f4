// SPDX-License-Identifier: Apache-2.0
/* `cordon spec`: write a default config.json into a bundle directory. */
#include <fcntl.h>
#include <string.h>

#include "cli.h"

static const char spec_usage[] =
	"Usage: cordon spec [--rootless] [--bundle DIR]\n"
	"\n"
	"Write a default OCI config.json (a shell in DIR/rootfs) into DIR,\n"
	"the current directory unless --bundle is given. An existing\n"
	"config.json is never overwritten.\n"
	"\n"
	"  --rootless        map only your own uid and gid (for unprivileged use)\n"
	"  -b, --bundle DIR  the bundle directory\n"
	"  -h, --help        this text\n";

enum spec_flag { S_ROOTLESS, S_BUNDLE, S_HELP };

static const struct cli_flag spec_flags[] = {
	{ "rootless", S_ROOTLESS, false },
	{ "bundle", S_BUNDLE, true },
	{ "help", S_HELP, false },
	{ NULL, 0, false },
};

int cli_spec_parse(int argc, char **argv, struct cli_spec_args *args, struct cordon_error *err)
{
	memset(args, 0, sizeof(*args));
	args->bundle = ".";
	for (int i = 0; i < argc;) {
		const char *value;
		int id;

		/* -b is runc's short spelling; cli_flag_next knows long flags only. */
		if (strcmp(argv[i], "-b") == 0) {
			if (i + 1 >= argc)
				return cordon_error_set(err, CORDON_E_USAGE, 0, "-b needs a value");
			args->bundle = argv[i + 1];
			i += 2;
			continue;
		}
		if (cli_flag_next(spec_flags, argc, argv, &i, &id, &value, err) < 0)
			return -1;
		if (id == S_HELP)
			args->help = true;
		else if (id == S_ROOTLESS)
			args->rootless = true;
		else
			args->bundle = value;
	}
	if (!*args->bundle)
		return cordon_error_set(err, CORDON_E_USAGE, 0, "--bundle: empty path");
	return 0;
}

static int write_config(const struct cli_spec_args *args, struct cordon_error *err)
{
	_cleanup_free_ char *json = cordon_oci_default_config(args->rootless, getuid(), getgid());
	_cleanup_close_ int dir = open(args->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -1;

	if (dir < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "--bundle %s", args->bundle);
	/* O_EXCL: never replace a config someone wrote, nor follow a planted link. */
	fd = openat(dir, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return cordon_error_set(err, CORDON_E_PATH, errno, "%s/config.json", args->bundle);
	if (cordon_write_all(fd, json, strlen(json)) < 0) {
		int e = errno;

		unlinkat(dir, "config.json", 0);
		return cordon_error_set(err, CORDON_E_PATH, e, "writing %s/config.json",
					args->bundle);
	}
	return 0;
}

int cli_spec(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct cli_spec_args args;

	if (cli_spec_parse(argc, argv, &args, &err) < 0 ||
	    (!args.help && write_config(&args, &err) < 0)) {
		cordon_error_print(&err);
		return CORDON_EXIT_FAILURE;
	}
	if (args.help)
		fputs(spec_usage, stdout);
	return 0;
}
