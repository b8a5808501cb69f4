#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the basics of `cordon run`: output, ids, environment, exit statuses,
# argument forms and --result-json.
. "$(dirname "$0")/lib.sh"

t_version() {
	cordon --version
	expect_rc 0
	expect_out_has cordon
	# runc's and crun's second field, which launchers parse.
	[[ $OUT == *$'\n'"spec: 1."* ]] || fail "no 'spec: 1.x' line, as runc and crun print"
}

t_hello() {
	crun -- echo hello
	expect_rc 0
	expect_out_eq hello
	expect_err_empty
}

t_id_default_root() {
	crun -- sh -c 'id -u; id -g'
	expect_rc 0
	expect_out_eq $'0\n0' "expected uid 0 and gid 0 inside by default"
}

t_id_user() {
	crun --user 1000:1000 -- sh -c 'id -u; id -g'
	expect_rc 0
	expect_out_eq $'1000\n1000' "expected uid 1000 and gid 1000 with --user 1000:1000"
	# Names come from the rootfs's /etc/passwd (sandbox is 1000, HOME from passwd).
	crun --user sandbox -- sh -c 'id -u; id -g; echo "$HOME"'
	expect_rc 0
	expect_out_eq $'1000\n1000\n/home/sandbox' "expected --user sandbox to be 1000:1000 with HOME /home/sandbox"
}

t_pid_and_cwd() {
	# Run from $WS, which becomes /workspace, the default cwd.
	crun -- sh -c 'echo $$; pwd'
	expect_rc 0
	expect_out_eq $'2\n/workspace' "expected the workload as pid 2 with cwd /workspace"
	crun --cwd /tmp -- pwd
	expect_rc 0
	expect_out_eq /tmp "expected --cwd to win over the /workspace default"
	crun --no-workspace -- sh -c 'pwd; ls -A /workspace 2>/dev/null | wc -l'
	expect_rc 0
	expect_out_eq $'/\n0' "expected cwd / and no workspace content with --no-workspace"
}

t_hostname() {
	crun -- hostname
	expect_rc 0
	expect_out_eq cordon "expected the default hostname 'cordon'"
	crun --hostname foo -- sh -c 'hostname; echo "$HOSTNAME"; cat /proc/sys/kernel/hostname'
	expect_rc 0
	expect_out_eq $'foo\nfoo\nfoo' "expected hostname foo (uname, \$HOSTNAME, /proc)"
	crun --hostname=bar -- hostname
	expect_rc 0
	expect_out_eq bar "expected --hostname=bar to work like --hostname bar"
}

t_env_scrub() {
	local term keys kv
	XENV=(CORDON_E2E_SECRET=leak-marker CORDON_E2E_PASSED=passed-value LD_PRELOAD=/nonexistent.so)
	if [ "$MODE" = rootful ]; then term=${TERM:-}; else term=; fi
	[ -n "$term" ] || term=xterm

	crun -- env
	expect_rc 0
	expect_out_lacks leak-marker "the host's environment reached the workload"
	keys=$(printf '%s\n' "$OUT" | cut -d= -f1 | sort | tr '\n' ' ')
	[ "$keys" = "HOME HOSTNAME PATH TERM container " ] ||
		fail "expected exactly the keys HOME HOSTNAME PATH TERM container, got: $keys"
	for kv in HOME=/root HOSTNAME=cordon container=cordon "TERM=$term"; do
		grep -qxF -- "$kv" <<<"$OUT" || fail "expected $kv in the environment"
	done
	grep -qxF "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" <<<"$OUT" ||
		fail "expected the fixed PATH"

	crun --env FOO=bar --env HOME=/elsewhere --env-pass CORDON_E2E_PASSED --env-pass CORDON_E2E_UNSET -- env
	expect_rc 0
	keys=$(printf '%s\n' "$OUT" | cut -d= -f1 | sort | tr '\n' ' ')
	[ "$keys" = "CORDON_E2E_PASSED FOO HOME HOSTNAME PATH TERM container " ] ||
		fail "expected exactly the keys CORDON_E2E_PASSED FOO HOME HOSTNAME PATH TERM container, got: $keys"
	for kv in FOO=bar HOME=/elsewhere CORDON_E2E_PASSED=passed-value; do
		grep -qxF -- "$kv" <<<"$OUT" || fail "expected $kv in the environment"
	done
	expect_out_lacks leak-marker "the host's environment reached the workload"

	# --debug's command line hides what --env gives (a token, a password),
	# in each form; the workload's own arguments after -- stay as given.
	new_mark
	next_id
	cordon --debug run --name "$ID" --env "TOKEN=a$MARK" --env="T2=b$MARK" "$ROOTFS" \
		-- sh -c 'echo "$TOKEN $T2" "$@"' sh "c=$MARK"
	expect_rc 0
	expect_out_eq "a$MARK b$MARK c=$MARK"
	expect_err_has "--env TOKEN=*** --env=T2=***"
	expect_err_has "-- sh -c"
	expect_err_has "c=$MARK"
	expect_err_lacks "a$MARK" "--debug logged an --env value"
	expect_err_lacks "b$MARK" "--debug logged an --env= value"
}

t_exit_status() {
	crun -- sh -c 'exit 0'
	expect_rc 0
	crun -- sh -c 'exit 3'
	expect_rc 3
	crun -- false
	expect_rc 1
	crun -- sh -c 'kill -9 $$'
	expect_rc 137 "expected 128+9 for a workload killed by SIGKILL"
	crun -- sh -c 'kill -TERM $$'
	expect_rc 143 "expected 128+15 for a workload killed by SIGTERM"
}

t_exec_failures() {
	# Exists, but is not executable (mode 0644 in the rootfs).
	crun -- /etc/passwd
	expect_rc 126 "expected 126 for a file that is not executable"
	[[ $ERR == *"cordon: CORDON_E_EXEC: "* ]] || fail "expected a 'cordon: CORDON_E_EXEC:' line"
	expect_err_has /etc/passwd "expected the message to name /etc/passwd"

	crun -- /no/such/command
	expect_rc 127 "expected 127 for a missing command"
	[[ $ERR == *"cordon: CORDON_E_EXEC: "* ]] || fail "expected a 'cordon: CORDON_E_EXEC:' line"
	expect_err_has /no/such/command "expected the message to name the command"

	crun -- no-such-command-in-path
	expect_rc 127 "expected 127 for a command not found in PATH"
	[[ $ERR == *"cordon: CORDON_E_EXEC: "* ]] || fail "expected a 'cordon: CORDON_E_EXEC:' line"

	# A directory is not executable either.
	crun -- /etc
	expect_rc 126 "expected 126 for a directory"
}

t_argument_forms() {
	# ROOTFS then CMD without "--".
	next_id
	cordon run --name "$ID" "$ROOTFS" echo no-dashes
	expect_rc 0
	expect_out_eq no-dashes
	# No ROOTFS: "--" first means the built-in rootfs.
	next_id
	cordon run --name "$ID" -- echo default-rootfs
	expect_rc 0
	expect_out_eq default-rootfs
	# Options stop at ROOTFS: what follows belongs to the command.
	next_id
	cordon run --name="$ID" "$ROOTFS" echo --hostname x
	expect_rc 0
	expect_out_eq "--hostname x"
}

t_stdin_passthrough() {
	printf 'line one\nline two\n' >"$CASE_DIR/in"
	next_id
	local _argv
	_cordon_argv run --name "$ID" "$ROOTFS" -- cat
	LAST_CMD="$MODE: cordon run --name $ID $ROOTFS -- cat <input"
	(cd "$WS" && "${_argv[@]}") <"$CASE_DIR/in" >"$CASE_DIR/out" 2>"$CASE_DIR/err"
	RC=$?
	OUT=$(cat "$CASE_DIR/out")
	ERR=$(cat "$CASE_DIR/err")
	expect_rc 0
	expect_out_eq $'line one\nline two' "expected stdin to reach the workload"
}

t_userns_host() {
	crun --userns host -- id -u
	expect_rc 0
	expect_out_eq 0
}

# json_check FILE PYTHON-EXPRESSIONS...: each expression, with `r` the
# parsed object, must be true (one python run for all of them).
json_check() {
	local file=$1 bad
	shift
	if [ ! -s "$file" ]; then
		fail "--result-json file $file missing or empty"
		return 1
	fi
	bad=$("$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError as e:
    print("not valid JSON: %s" % e)
    sys.exit(0)
for expr in sys.argv[2:]:
    try:
        ok = eval(expr)
    except Exception as e:
        ok = False
    if not ok:
        print("expected " + expr)
' "$file" "$@" 2>&1)
	[ -z "$bad" ] || fail "result JSON $(cat "$file"):"$'\n'"$bad"
}

# Every field of the contract with its type (later issues may add more).
json_shape=(
	'{"id", "exit_code", "signal", "timed_out", "duration_ms", "stdout_bytes", "stderr_bytes", "output_truncated"} <= set(r)'
	'type(r["id"]) is str and type(r["exit_code"]) is int and type(r["timed_out"]) is bool'
	'type(r["duration_ms"]) is int and r["duration_ms"] >= 0 and type(r["output_truncated"]) is bool'
	'r["signal"] is None or type(r["signal"]) is int'
	'all(r[k] is None or type(r[k]) is int for k in ("stdout_bytes", "stderr_bytes"))'
)

t_result_json() {
	local res
	res="$WS/result-1.json"
	crun --result-json "$res" -- sh -c 'echo hello; echo err >&2; exit 3'
	expect_rc 3
	expect_out_eq hello "expected stdout to be forwarded with --result-json"
	expect_err_eq err "expected stderr to be forwarded with --result-json"
	json_check "$res" "${json_shape[@]}" \
		"r['id'] == '$ID'" 'r["exit_code"] == 3' 'r["signal"] is None' \
		'r["timed_out"] is False' 'r["output_truncated"] is False' \
		'r["stdout_bytes"] == 6' 'r["stderr_bytes"] == 4' '"error" not in r'

	res="$WS/result-2.json"
	crun --result-json "$res" -- sh -c 'kill -9 $$'
	expect_rc 137
	json_check "$res" "${json_shape[@]}" 'r["signal"] == 9' 'r["exit_code"] == 137' \
		'r["timed_out"] is False'

	res="$WS/result-3.json"
	crun --result-json "$res" --timeout 0.5 -- sleep 30
	expect_rc 124
	json_check "$res" "${json_shape[@]}" 'r["timed_out"] is True' 'r["exit_code"] == 124' \
		'r["duration_ms"] >= 400'

	res="$WS/result-4.json"
	crun --result-json "$res" --output-max 10 -- echo 0123456789abcdef
	json_check "$res" "${json_shape[@]}" 'r["output_truncated"] is True'
}

t_result_json_on_error() {
	local res="$WS/result.json"
	next_id
	cordon run --name "$ID" --result-json "$res" "$CASE_DIR/no-such-rootfs" -- true
	expect_cordon_error ROOTFS no-such-rootfs
	json_check "$res" "${json_shape[@]}" 'r["exit_code"] == 125' \
		'r.get("error", {}).get("code") == "CORDON_E_ROOTFS"' \
		'type(r["error"].get("message")) is str and "no-such-rootfs" in r["error"]["message"]'
}

# CORDON_TRACE=FILE: every process of the sandbox appends "PHASE PROCESS NS"
# lines (docs/benchmarks.md); the file is opened by --log's rules, and
# nothing of it reaches the workload (its fds are the same as without).
t_trace() {
	local dir=$CASE_DIR/trace plain traced p want
	mk_dir "$dir"
	crun --no-workspace -- ls /proc/self/fd
	expect_rc 0
	plain=$OUT
	XENV=(CORDON_TRACE="$dir/t")
	crun --no-workspace -- ls /proc/self/fd
	expect_rc 0
	traced=$OUT
	[ "$traced" = "$plain" ] || fail "the workload's fds differ with a trace: '$traced' against '$plain'"
	[ "$(stat -c %u:%a "$dir/t")" = "$(mode_uid):600" ] || fail "the new trace is not the caller's, 0600"
	grep -vqE '^[a-z-]+ (supervisor|init|workload) [0-9]+$' "$dir/t" &&
		fail "a line is not 'PHASE PROCESS NS': $(grep -vE '^[a-z-]+ (supervisor|init|workload) [0-9]+$' "$dir/t" | head -1)"
	for want in "main supervisor" "clone supervisor" "init-start init" "mounts init" \
		"workload-start workload" "seccomp workload" "execve workload" "execed init" \
		"exited-recv supervisor" "reap supervisor" "exit supervisor"; do
		[ "$(grep -c "^$want " "$dir/t")" = 1 ] || fail "expected one '$want' line"
	done
	# Each process's clock only goes forward.
	for p in supervisor init workload; do
		awk -v p="$p" '$2 == p { if ($3 < last) exit 1; last = $3 }' "$dir/t" ||
			fail "the $p lines go back in time"
	done
	# Appended, not replaced.
	crun --no-workspace -- true
	expect_rc 0
	[ "$(grep -c '^main supervisor ' "$dir/t")" = 2 ] || fail "the second run did not append"
	# Opened as --log is: a fifo is refused at once, never opened.
	if [ "$MODE" = rootful ]; then mkfifo -m 666 "$dir/fifo"; else as_user mkfifo "$dir/fifo"; fi
	XENV=(CORDON_TRACE="$dir/fifo")
	crun --no-workspace -- true
	expect_cordon_error USAGE "CORDON_TRACE $dir/fifo: not a regular file (a fifo)"
	XENV=()
}

# inspect: the posture of a live sandbox, as the kernel and its supervisor say it.
inspect_ready() { [ -e "$WS/up" ]; }
t_inspect() {
	local j limits=()
	# Rootless on this host's hybrid layout a pids limit has no delegated cgroup.
	[ "$MODE" = rootful ] && limits=(--pids 40)
	crun_bg "${limits[@]}" -- sh -c 'touch /workspace/up; sleep 30'
	wait_until "$WAIT_LIMIT" inspect_ready || { fail "the sandbox did not start"; wait_bg; return; }
	cordon inspect "$ID"
	expect_rc 0
	j=$OUT
	"$PYTHON" - "$j" "$ID" "${#limits[@]}" <<'EOF' || fail "inspect's JSON is not what the sandbox is: $j"
import json, sys
d = json.loads(sys.argv[1])
p = d["process"]
assert d["id"] == sys.argv[2] and d["status"] == "running", d["status"]
assert p["no_new_privs"] is True and p["seccomp"] == "filter"
assert p["capabilities"]["CapEff"] == [] and p["uid_map"] and p["gids"]
assert any(m["target"] == "/workspace" for m in p["mounts"])
assert sys.argv[3] == "0" or any(c.get("pids.max") == "40" for c in d["cgroups"]), d["cgroups"]
assert d["network"] == {"mode": "none"}
EOF
	cordon kill "$ID" KILL
	wait_bg
	cordon inspect "$ID"
	expect_cordon_error STATE "$ID"
}

each_mode "cordon --version" t_version
each_mode "hello: echo prints hello" t_hello
each_mode "id: uid=0 gid=0 inside by default" t_id_default_root
each_mode "id: --user 1000:1000 and --user NAME" t_id_user
each_mode "workload is pid 2; cwd /workspace, --cwd, --no-workspace" t_pid_and_cwd
each_mode "hostname: default cordon, --hostname foo" t_hostname
each_mode "env: host environment scrubbed, exact keys, --env/--env-pass" t_env_scrub
each_mode "exit status: 0, 3, 1, 137, 143 pass through" t_exit_status
each_mode "exec failures: 126 not executable, 127 not found" t_exec_failures
each_mode "inspect: a live sandbox's ids, capabilities, seccomp, mounts, cgroups and network" t_inspect
each_mode "argument forms: no --, default rootfs, options stop at ROOTFS" t_argument_forms
each_mode "stdin reaches the workload" t_stdin_passthrough
rootful_only "--userns host runs as root" t_userns_host
each_mode "--result-json: fields and types (exit, signal, timeout, truncation)" t_result_json
each_mode "--result-json on a cordon error carries the error code" t_result_json_on_error
each_mode "CORDON_TRACE: every process's phases appended, opened as --log is, nothing in the workload" t_trace
done_testing
