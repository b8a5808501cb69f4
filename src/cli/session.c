// SPDX-License-Identifier: Apache-2.0
/*
 * `cordon create [OPTIONS] [ROOTFS]`: a session, a sandbox with every
 * option of `cordon run` and no command, which stays up idle for
 * `cordon exec` until `cordon rm`, its --idle-timeout or its
 * --max-lifetime. Prints its id. (With --bundle, create is the OCI
 * command: create.c.)
 */
#include <string.h>

#include "cli.h"
#include "cordon/sandbox.h"
#include "cordon/state.h"

static const char session_usage[] =
	"Usage: cordon create [RUN OPTIONS] [--label K=V]... [--idle-timeout S]\n"
	"                     [--max-lifetime S] [--owner PID|none] [ROOTFS]\n"
	"       cordon create --bundle DIR [OPTIONS] ID   (the OCI form: cordon create -b . -h)\n"
	"\n"
	"Create a session: a sandbox on ROOTFS (default: the built-in rootfs) that\n"
	"runs no command and stays up, idle, for `cordon exec ID -- CMD`, until\n"
	"`cordon rm ID`, its idle timeout or its lifetime cap. Prints its id.\n"
	"\n"
	"RUN OPTIONS: every option of cordon run (see cordon run --help) but those\n"
	"of a command (--timeout, --kill-after, -t, --output-max, --result-json,\n"
	"--print-profile), which cordon exec takes per command. --env and --cwd are\n"
	"every exec's defaults.\n"
	"\n"
	"  --label K=V          a label (repeatable, at most 32): K is 1 to 63 of\n"
	"                       [A-Za-z0-9._/-], a letter or digit first and last;\n"
	"                       V at most 256 bytes, no control character\n"
	"  --idle-timeout S     end the session after S seconds with no exec running\n"
	"  --max-lifetime S     end it S seconds after its creation (default 86400)\n"
	"  --owner PID|none     the process whose end ends it (cordon sweep); default:\n"
	"                       this command's parent; none: only its lifetime\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit: 0 created (its id on stdout), 125 cordon error. See cordon-create(1).\n";

int cli_create_session(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct cordon_spec spec;
	bool help = false;
	pid_t pid;
	int code = 0;

	cordon_spec_init(&spec);
	/*
	 * The caller owns the session (unless --owner says another, or none):
	 * `cordon sweep` ends it once that process is gone.
	 */
	spec.creator_pid = getppid();
	spec.creator_start = cordon_proc_start_time(spec.creator_pid);
	if (cli_session_parse(argc, argv, &spec, &help, &err) < 0) {
		code = cli_fail(&err);
	} else if (help) {
		fputs(session_usage, stdout);
	} else if (cordon_spec_finalize(&spec, &err) < 0 ||
		   cordon_sandbox_seal_self(&spec, &err) < 0) {
		code = cli_fail(&err);
	} else {
		if (spec.security.seccomp == CORDON_SECCOMP_UNCONFINED)
			cordon_warn("--seccomp unconfined: the session's commands run without a "
				    "syscall filter");
		if (spec.net.enabled && spec.net.allow_host_loopback)
			cordon_warn("--allow-host-loopback: the session can reach services on the "
				    "host's loopback (development only)");
		if (cordon_container_create(&spec, cli_global.root, -1, &pid, &err) < 0)
			code = cli_fail(&err);
		else
			printf("%s\n", spec.id);
	}
	cordon_spec_free(&spec);
	return code;
}
