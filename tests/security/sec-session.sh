#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: the sandbox and the caller's session and terminal. The
# sandbox is a session and process group of its own: kill(0) from inside
# reaches neither the caller's shell, nor its other jobs, nor (rootless)
# cordon's supervisor, nor the other side of a pipeline of two sandboxes.
# The caller's terminal never enters it: without -t its stdio are pipes
# cordon relays, with -t it has a pty of its own (ptyrun.py gives cordon
# a real terminal).
. "$(dirname "$0")/seclib.sh"

# The state letter of PID (R, S, T, Z, ...), or nothing when it is gone.
proc_state() {
	local s
	{ IFS= read -r s <"/proc/$1/stat"; } 2>/dev/null || return 0
	s=${s##*) }
	printf '%s' "${s%% *}"
}

# SIGCONT to PID and its descendants.
cont_tree() {
	local c
	kill -CONT "$1" 2>/dev/null
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		cont_tree "$c"
	done
}

# in_session SCRIPT: run the bash SCRIPT as the mode's user in a session
# of its own (a caller's shell with its jobs in one process group), with
# CORDON, ROOTFS, ID, MARK, WS in its environment and its output in
# $CASE_DIR/inner.out. Waits until it has printed "done", or until its
# shell is stopped or gone without it (what a hostile sandbox did to
# it), then ends whatever of its group is left. SHELL_FATE is "done",
# "stopped" or "gone".
in_session() {
	local pgid i st bg
	printf '%s\n' 'echo $$ >"$D/pgid"' "$1" 'echo done' >"$CASE_DIR/inner.sh"
	chmod 644 "$CASE_DIR/inner.sh"
	: >"$CASE_DIR/inner.out"
	chmod 666 "$CASE_DIR/inner.out"
	rm -f "$CASE_DIR/pgid"
	chmod 777 "$CASE_DIR"
	local env=(D="$CASE_DIR" CORDON="$CORDON" ROOTFS="$ROOTFS" ID="$CASE_ID" MARK="$MARK" WS="$WS")
	if [ "$MODE" = rootful ]; then
		(env --default-signal "${env[@]}" setsid -w bash "$CASE_DIR/inner.sh" \
			>>"$CASE_DIR/inner.out" 2>&1 </dev/null) &
	else
		(as_user "${env[@]}" setsid -w bash "$CASE_DIR/inner.sh" \
			>>"$CASE_DIR/inner.out" 2>&1 </dev/null) &
	fi
	bg=$!
	_bg_pids+=("$bg")
	SHELL_FATE=
	for ((i = 0; i < 600; i++)); do
		if grep -qx 'done' "$CASE_DIR/inner.out"; then
			SHELL_FATE='done'
			break
		fi
		pgid=$(cat "$CASE_DIR/pgid" 2>/dev/null)
		if [ -n "$pgid" ]; then
			st=$(proc_state "$pgid")
			if [ "$st" = T ]; then
				SHELL_FATE=stopped
				break
			fi
			if [ -z "$st" ] || [ "$st" = Z ]; then
				grep -qx 'done' "$CASE_DIR/inner.out" && SHELL_FATE='done' || SHELL_FATE=gone
				break
			fi
		fi
		sleep 0.05
	done
	[ -n "$SHELL_FATE" ] || SHELL_FATE=timeout
	if [ "$SHELL_FATE" != 'done' ] && [ -n "$pgid" ]; then
		kill -CONT -- "-$pgid" 2>/dev/null
		kill -KILL -- "-$pgid" 2>/dev/null
	fi
	# runuser stops itself when its child stops: continue what is left.
	cont_tree "$bg"
	wait "$bg" 2>/dev/null
	_slurp OUT "$CASE_DIR/inner.out"
	LAST_CMD="(in a session of its own, as the $MODE user) $1"
	RC=
}

# The value of the line KEY=VALUE of $OUT.
out_value() {
	local line
	while IFS= read -r line; do
		[[ $line == "$1="* ]] && { printf '%s' "${line#"$1="}"; return; }
	done <<<"$OUT"
}

# The caller's shell has two jobs beside cordon: a host process and
# another sandbox (which, rootful, runs as the same host ids). The
# workload stops its process group: only itself stops, --timeout still
# ends it (124), the shell and both jobs go on.
t_kill_stop_0() {
	new_mark
	in_session '
sleep "$MARK" & host=$!
"$CORDON" run --name "$ID-sib" --no-workspace "$ROOTFS" -- sleep "$((MARK + 1))" & sib=$!
for i in $(seq 400); do inner=$(pgrep -f "^sleep $((MARK + 1))\$") && break; sleep 0.05; done
echo "sibling=${inner:-none}"
"$CORDON" run --name "$ID" --no-workspace --timeout 2 --kill-after 1 "$ROOTFS" -- \
	sh -c "kill -STOP 0; echo not-stopped"
echo "rc=$?"
st() { local s; { read -r s </proc/$1/stat; } 2>/dev/null || return; s=${s##*) }; echo "${s%% *}"; }
echo "host-job=$(st "$host")"
echo "sandbox-job=$(st "$inner")"
kill -CONT "$inner" 2>/dev/null
kill "$sib" "$host"
wait'
	[ "$SHELL_FATE" = 'done' ] || fail "the caller's shell was $SHELL_FATE by the sandbox's kill -STOP 0"
	[ "$(out_value sibling)" != none ] || fail "the sibling sandbox never started"
	[ "$(out_value rc)" = 124 ] || fail "expected --timeout to end the run (124), got '$(out_value rc)'"
	[ "$(out_value host-job)" = S ] || fail "the caller's other job was stopped ($(out_value host-job))"
	[ "$(out_value sandbox-job)" = S ] || fail "the other sandbox's workload was stopped ($(out_value sandbox-job))"
	[[ $OUT != *not-stopped* ]] || fail "the workload itself was not stopped"
}

# The same with SIGKILL: the workload dies (137), nothing of the caller does.
t_kill_kill_0() {
	new_mark
	in_session '
sleep "$MARK" & host=$!
"$CORDON" run --name "$ID-sib" --no-workspace "$ROOTFS" -- sleep "$((MARK + 1))" & sib=$!
for i in $(seq 400); do inner=$(pgrep -f "^sleep $((MARK + 1))\$") && break; sleep 0.05; done
echo "sibling=${inner:-none}"
"$CORDON" run --name "$ID" --no-workspace "$ROOTFS" -- sh -c "kill -KILL 0; echo survived"
echo "rc=$?"
st() { local s; { read -r s </proc/$1/stat; } 2>/dev/null || return; s=${s##*) }; echo "${s%% *}"; }
echo "host-job=$(st "$host")"
echo "sandbox-job=$(st "$inner")"
kill "$sib" "$host"
wait'
	[ "$SHELL_FATE" = 'done' ] || fail "the caller's shell was $SHELL_FATE by the sandbox's kill -KILL 0"
	[ "$(out_value sibling)" != none ] || fail "the sibling sandbox never started"
	[ "$(out_value rc)" = 137 ] || fail "expected the workload's own SIGKILL (137), got '$(out_value rc)'"
	[ "$(out_value host-job)" = S ] || fail "the caller's other job was killed ($(out_value host-job))"
	[ "$(out_value sandbox-job)" = S ] || fail "the other sandbox's workload was killed ($(out_value sandbox-job))"
	[[ $OUT != *survived* ]] || fail "the workload itself survived"
}

# cordon run A | cordon run B: A waits until B's workload runs, then
# kills its process group. B reads A's output to its end and finishes.
t_pipeline() {
	in_session '
"$CORDON" run --name "$ID-a" --workspace "$WS" --timeout 20 "$ROOTFS" -- \
	sh -c "while [ ! -e /workspace/b-ready ]; do sleep 0.05; done; echo from-a; kill -KILL 0" |
"$CORDON" run --name "$ID-b" --workspace "$WS" --timeout 20 "$ROOTFS" -- \
	sh -c "touch /workspace/b-ready; cat; echo b-done"
echo "rc=${PIPESTATUS[*]}"'
	[ "$SHELL_FATE" = 'done' ] || fail "the caller's shell was $SHELL_FATE by A's kill -KILL 0"
	[ "$(out_value rc)" = "137 0" ] || fail "expected A killed by its own SIGKILL and B done (137 0), got '$(out_value rc)'"
	[[ $OUT == *$'from-a\nb-done'* ]] || fail "expected B to pass on A's output and finish"
}

PTYRUN=$(dirname "$0")/ptyrun.py
case $PTYRUN in /*) ;; *) PTYRUN=$PWD/$PTYRUN ;; esac

# pty_run [STEP...] -- CMD...: CMD as the mode's user on a terminal of its
# own (ptyrun.py), captured (carriage returns dropped). The rootful
# caller owns its terminal (cordon reads it through an open of its own);
# the rootless one is given root's, as after su (cordon reads fd 0 itself).
pty_run() {
	local steps=() argv
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		steps+=("$1")
		shift
	done
	shift
	if [ "$MODE" = rootful ]; then
		argv=(env --default-signal "$@")
	else
		local USER_PREFIX
		_user_prefix
		argv=("${USER_PREFIX[@]}" "$@")
	fi
	pushd "$WS" >/dev/null || return 1
	run "$PYTHON" "$PTYRUN" --rows 33 --cols 101 "${steps[@]}" -- "${argv[@]}"
	popd >/dev/null || return 1
	OUT=${OUT//$'\r'/}
}

# Without -t, on the caller's terminal: the sandbox's stdio are pipes
# (keys typed still arrive, ^D ends them), /dev/tty has nothing to open,
# and the terminal's modes and input are out of reach. Seccomp is off, so
# that what answers TIOCSTI is the kernel.
t_no_terminal_inside() {
	next_id
	pty_run expect:ready 'send:typed\r' 'send:\x04' -- \
		"$CORDON" run --name "$ID" --no-workspace --seccomp unconfined "$ROOTFS" -- sh -c '
for f in 0 1 2; do [ -t $f ] && echo "fd$f=tty" || echo "fd$f=pipe"; done
sec-probe open-write:/dev/tty tiocsti:0 tiocsti:1 tiocsti:2 tcsets:0 tcsets:1 tcsets:2 tiocsctty:0
echo ready; read x; echo "got=$x"; cat; echo end-of-input'
	expect_rc 0
	local f
	for f in 0 1 2; do
		expect_out_has "fd$f=pipe" "expected fd $f not to be a terminal inside"
	done
	probe_is open-write:/dev/tty ENXIO
	for f in 0 1 2; do
		probe_is "tiocsti:$f" ENOTTY
		probe_is "tcsets:$f" ENOTTY
	done
	probe_is tiocsctty:0 ENOTTY
	expect_out_has "got=typed" "expected the typed line to reach the workload's stdin"
	expect_out_has "end-of-input" "expected ^D to end the workload's stdin"
}

# --output-max still bounds what reaches the terminal: 100 bytes of
# "x\n" are 50 lines, then cordon's notice.
t_no_terminal_output_max() {
	next_id
	pty_run -- "$CORDON" run --name "$ID" --no-workspace --output-max 100 "$ROOTFS" -- \
		sh -c 'yes x | head -c 5000'
	expect_rc 0
	local body=${OUT%%cordon: output truncated*}
	body=${body//[!x]/}
	[ "${#body}" = 50 ] || fail "expected 50 lines of x (100 bytes) on the terminal, got ${#body}"
	expect_out_has "cordon: output truncated at 100 bytes"
}

# ^C at the caller's terminal reaches the workload's process group
# (the sandbox is not in the terminal's foreground group): its trap runs.
t_terminal_interrupt() {
	next_id
	pty_run expect:ready 'send:\x03' -- "$CORDON" run --name "$ID" --no-workspace "$ROOTFS" -- \
		sh -c 'trap "echo got-int; exit 7" INT; echo ready; while :; do sleep 0.1; done'
	expect_rc 7 "expected the workload's INT trap to end it (7)"
	expect_out_has got-int
}

# ^Z at the caller's terminal, under a shell with job control: the
# workload stops with cordon, and goes on when the shell's fg continues
# cordon; ^C then ends it.
t_terminal_stop() {
	local pid argv
	new_mark
	next_id
	chmod 777 "$CASE_DIR"
	printf '%s\n' 'set -m' \
		"\"\$1\" run --name \"\$2\" --no-workspace \"\$3\" -- sh -c 'echo ready; exec sleep $MARK'" \
		'echo "stopped rc=$?"' \
		"while [ ! -e '$CASE_DIR/fg' ]; do sleep 0.05; done" \
		'fg' 'echo "fg rc=$?"' >"$CASE_DIR/job.sh"
	if [ "$MODE" = rootful ]; then
		argv=(env --default-signal)
	else
		local USER_PREFIX
		_user_prefix
		argv=("${USER_PREFIX[@]}")
	fi
	# ^Z only once the workload is sleep (it prints ready before its
	# exec: stopped in between, it would be found by no name).
	"$PYTHON" "$PTYRUN" expect:ready "wait:$CASE_DIR/running" 'send:\x1a' 'expect:stopped rc=' \
		"mark:$CASE_DIR/stopped" \
		"wait:$CASE_DIR/int" 'send:\x03' -- "${argv[@]}" bash "$CASE_DIR/job.sh" \
		"$CORDON" "$ID" "$ROOTFS" >"$CASE_DIR/out" 2>"$CASE_DIR/err" </dev/null &
	BG_PID=$!
	_bg_pids+=("$BG_PID")
	if ! wait_until "$WAIT_LIMIT" eval 'pid=$(pgrep -f "^sleep $MARK\$")'; then
		fail "the workload never became sleep $MARK: $(cat "$CASE_DIR/out")"
		touch "$CASE_DIR/running" "$CASE_DIR/fg" "$CASE_DIR/int"
		return
	fi
	touch "$CASE_DIR/running"
	if ! wait_until "$WAIT_LIMIT" test -e "$CASE_DIR/stopped"; then
		fail "^Z did not stop cordon: $(cat "$CASE_DIR/out")"
		return
	fi
	wait_until "$WAIT_LIMIT" eval '[ "$(proc_state "$pid")" = T ]' ||
		fail "the workload was not stopped with cordon (state $(proc_state "$pid"))"
	touch "$CASE_DIR/fg"
	wait_until "$WAIT_LIMIT" eval '[ "$(proc_state "$pid")" = S ] || [ "$(proc_state "$pid")" = R ]' ||
		fail "the workload did not go on after fg (state $(proc_state "$pid"))"
	touch "$CASE_DIR/int"
	wait_bg_for "$WAIT_LIMIT" || return
	OUT=${OUT//$'\r'/}
	expect_out_has "stopped rc=148" "expected the shell to see cordon stopped (148)"
	expect_out_has "fg rc=130" "expected ^C after fg to end the workload (130)"
}

# cordon in the background (&) takes nothing typed: the shell reads the
# first line; after fg, cordon reads the second for the workload.
t_terminal_background() {
	next_id
	chmod 777 "$CASE_DIR"
	printf '%s\n' 'set -m' \
		"\"\$1\" run --name \"\$2\" --no-workspace \"\$3\" -- sh -c 'echo ready; read x; echo sandbox-got=\$x' &" \
		'read line; echo "shell-got=$line"' 'fg' 'echo "fg rc=$?"' >"$CASE_DIR/job.sh"
	pty_run expect:ready 'send:first\r' expect:shell-got= 'send:second\r' 'expect:fg rc=' -- \
		bash "$CASE_DIR/job.sh" "$CORDON" "$ID" "$ROOTFS"
	expect_rc 0
	expect_out_has "shell-got=first" "expected the shell, not the background cordon, to read the first line"
	expect_out_has "sandbox-got=second" "expected the workload to read the line typed after fg"
	expect_out_has "fg rc=0"
}

# -t: a pty of the sandbox's own devpts as stdio and controlling
# terminal, the caller's window size and its change, keys and output
# both ways, the workload's status; the caller's modes as before.
t_tty() {
	next_id
	pty_run expect:ready 'send:hello\r' 'expect:got=hello' 'winch:40:120' 'send:again\r' \
		expect:rc= -- sh -c '
stty -g
"$0" run -t --name "$1" --no-workspace "$2" -- sh -c "
tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo stdio=tty
[ \"\$(stat -L -c %d /proc/self/fd/0)\" = \"\$(stat -c %d /dev/pts/ptmx)\" ] && echo devpts=own
echo ready; read x; echo got=\$x; read y; stty size; exit 3"
echo "rc=$?"
stty -g' "$CORDON" "$ID" "$ROOTFS"
	expect_rc 0
	expect_out_has "rc=3" "expected the workload's status (3)"
	expect_out_has $'\n/dev/pts/0\n' "expected tty to name the sandbox's first pts"
	expect_out_has $'\n33 101\n' "expected the caller's window size inside"
	expect_out_has "stdio=tty"
	expect_out_has "devpts=own" "expected the pts to be of the sandbox's own devpts"
	expect_out_has "got=hello"
	expect_out_has $'\n40 120\n' "expected the new window size inside after SIGWINCH"
	local first last
	first=${OUT%%$'\n'*}
	last=${OUT##*$'\n'}
	[ -n "$first" ] && [ "$first" = "$last" ] ||
		fail "the caller's terminal modes changed: '$first' before, '$last' after"
}

# -t: ^C is a key the sandbox's own terminal turns into its SIGINT.
t_tty_interrupt() {
	next_id
	pty_run expect:ready 'send:\x03' -- "$CORDON" run -t --name "$ID" --no-workspace "$ROOTFS" -- \
		sh -c 'trap "echo got-int; exit 4" INT; echo ready; while :; do sleep 0.1; done'
	expect_rc 4 "expected the workload's INT trap to end it (4)"
	expect_out_has got-int
}

# -t needs a terminal to relay.
t_tty_needs_terminal() {
	crun -t --no-workspace -- true
	expect_cordon_error USAGE "stdin is not a terminal"
}

sec_each "kill -STOP 0 inside: the caller's shell and jobs go on, --timeout fires" t_kill_stop_0
sec_each "kill -KILL 0 inside: the caller's shell and jobs survive" t_kill_kill_0
sec_each "cordon run A | cordon run B: A's kill -KILL 0 leaves B alone" t_pipeline
sec_each "on a terminal without -t: pipes, /dev/tty ENXIO, no TIOCSTI, no mode change, keys arrive" t_no_terminal_inside
sec_each "on a terminal without -t: --output-max bounds what reaches it" t_no_terminal_output_max
sec_each "on a terminal without -t: ^C reaches the workload's group" t_terminal_interrupt
sec_each "on a terminal without -t: ^Z stops the workload with cordon, fg continues both" t_terminal_stop
sec_each "on a terminal without -t: in the background cordon takes nothing typed; after fg it does" t_terminal_background
sec_each "-t: a pty of its own devpts, window size and SIGWINCH, modes restored" t_tty
sec_each "-t: ^C becomes the sandbox terminal's SIGINT" t_tty_interrupt
sec_each "-t without a terminal on stdin: refused" t_tty_needs_terminal
done_testing
