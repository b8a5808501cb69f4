#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: processes: the pid namespace, --timeout and --kill-after,
# --output-max, and what happens when the supervisor gets a signal.
. "$(dirname "$0")/lib.sh"

t_pid_namespace() {
	local n
	crun -- ps
	expect_rc 0
	n=$(printf '%s\n' "$OUT" | sed 1d | grep -c .)
	[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "expected ps to show 1-3 processes (init, ps), got $n"
	crun -- sh -c 'ls /proc'
	expect_rc 0
	n=$(printf '%s\n' "$OUT" | grep -cxE '[0-9]+')
	[ "$n" -ge 1 ] && [ "$n" -le 4 ] || fail "expected 1-4 numeric entries in /proc (init, sh, ls), got $n"
	crun -- sh -c 'cat /proc/1/status | grep ^PPid; echo $PPID'
	expect_out_has $'PPid:\t0' "expected pid 1 to have no parent inside"
}

# Only the lower bounds are timed (a load can only lengthen a run): that
# the run ended at all, with 124, is the proof that the signals came (the
# workloads never end by themselves), and the harness's own limit
# (E2E_RUN_TIMEOUT) catches one that never does.
t_timeout() {
	new_mark
	crun --timeout 1 -- sleep "$MARK"
	expect_rc 124 "expected exit 124 on timeout"
	[ "$LAST_MS" -ge 900 ] || fail "returned after $LAST_MS ms, before the 1 s timeout"
	no_procs_matching "$MARK" || fail "a sleep $MARK process survived the timeout: $(procs_matching "$MARK")"
}

t_timeout_fraction_and_kill_after() {
	new_mark
	# The workload ignores SIGTERM, so only the SIGKILL after --kill-after ends it.
	crun --timeout 0.5 --kill-after 1 -- sh -c "trap '' TERM; while :; do sleep 0.2; done; : $MARK"
	expect_rc 124 "expected exit 124 on timeout"
	[ "$LAST_MS" -ge 1400 ] || fail "returned after $LAST_MS ms: SIGKILL came before 0.5 s + 1 s of grace"
	no_procs_matching "$MARK" || fail "workload survived: $(procs_matching "$MARK")"
}

t_no_timeout_when_fast() {
	crun --timeout 5 -- sh -c 'sleep 0.2; exit 7'
	# Its own status: --timeout did not end it.
	expect_rc 7 "expected the workload's status when it ends before --timeout"
}

# Bytes of FILE, and of FILE without cordon's truncation notice (which may
# follow a partial line of the workload's output on the same line).
bytes() { wc -c <"$1"; }
bytes_without_notice() {
	"$PYTHON" -c '
import re, sys
data = open(sys.argv[1], "rb").read()
print(len(re.sub(rb"cordon: output truncated at [0-9]+ bytes\n", b"", data, count=1)))
' "$1"
}
notices() { grep -o 'output truncated' "$1" | grep -c .; }

LINE=$(printf '%099d' 0 | tr 0 a) # 99 x 'a': 100 bytes with the newline

t_output_max_stdout() {
	crun --output-max 100 -- sh -c "yes $LINE | head -n 100"
	[ "$(bytes "$CASE_DIR/out")" -eq 100 ] || fail "expected exactly 100 bytes on stdout, got $(bytes "$CASE_DIR/out")"
	[ "$(notices "$CASE_DIR/err")" -eq 1 ] || fail "expected 'output truncated' once on stderr, got $(notices "$CASE_DIR/err")"
	grep -qx 'cordon: output truncated at 100 bytes' "$CASE_DIR/err" ||
		fail "expected the line 'cordon: output truncated at 100 bytes' on stderr"
	[ "$(bytes_without_notice "$CASE_DIR/err")" -eq 0 ] || fail "expected nothing else on stderr"
}

t_output_max_stderr() {
	crun --output-max 100 -- sh -c "yes $LINE | head -n 100 >&2"
	[ "$(bytes "$CASE_DIR/out")" -eq 0 ] || fail "expected nothing on stdout"
	[ "$(bytes_without_notice "$CASE_DIR/err")" -eq 100 ] ||
		fail "expected exactly 100 bytes of the workload's stderr, got $(bytes_without_notice "$CASE_DIR/err")"
	[ "$(notices "$CASE_DIR/err")" -eq 1 ] || fail "expected 'output truncated' once on stderr, got $(notices "$CASE_DIR/err")"
}

t_output_max_both() {
	crun --output-max 250 -- sh -c "i=0; while [ \$i -lt 50 ]; do echo $LINE; echo $LINE >&2; i=\$((i + 1)); done"
	local total=$(($(bytes "$CASE_DIR/out") + $(bytes_without_notice "$CASE_DIR/err")))
	[ "$total" -eq 250 ] || fail "expected 250 bytes forwarded over stdout and stderr together, got $total"
	[ "$(notices "$CASE_DIR/err")" -eq 1 ] || fail "expected 'output truncated' once on stderr, got $(notices "$CASE_DIR/err")"
}

t_output_max_not_reached() {
	crun --output-max 100000 -- sh -c "yes $LINE | head -n 100; exit 4"
	expect_rc 4
	[ "$(bytes "$CASE_DIR/out")" -eq 10000 ] || fail "expected all 10000 bytes under the cap"
	[ "$(notices "$CASE_DIR/err")" -eq 0 ] || fail "expected no truncation notice under the cap"
}

# The workload `sleep $MARK` as a process of its own (not a command line
# that merely mentions it).
workload_running() {
	procs_matching "$MARK" | grep ": sleep $MARK\$" >/dev/null
}

t_sigkill_supervisor() {
	local sup
	new_mark
	crun_bg -- sleep "$MARK"
	if ! wait_until "$WAIT_LIMIT" workload_running; then
		fail "the workload never started"
		return
	fi
	if ! sup=$(supervisor_of "$ID"); then
		fail "no supervisor process found for $ID: $(procs_matching "$ID")"
		return
	fi
	kill -9 "$sup"
	wait_bg_for "$WAIT_LIMIT"
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" ||
		fail "the workload outlived its SIGKILLed supervisor by 2 s: $(procs_matching "$MARK")"
	# The next run sweeps the dead supervisor's state.
	local dead=$ID d
	crun -- true
	expect_rc 0
	for d in $(state_dirs); do
		[ ! -e "$d/$dead" ] || fail "$d/$dead is still there after a later cordon run (no sweep)"
	done
}

t_sigterm_forwarded() {
	local sup
	crun_bg --workspace "$WS" -- sh -c 'trap "echo got-term > /workspace/term; exit 0" TERM; echo ready > /workspace/ready; while :; do sleep 0.1; done'
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started"
		return
	fi
	if ! sup=$(supervisor_of "$ID"); then
		fail "no supervisor process found for $ID"
		return
	fi
	kill -TERM "$sup"
	wait_bg_for "$WAIT_LIMIT" || return
	[ "$(cat "$WS/term" 2>/dev/null)" = got-term ] ||
		fail "the workload's TERM trap did not run: SIGTERM was not forwarded"
	expect_rc 0 "expected the workload's own status (0, from its trap)"
}

t_sigint_forwarded() {
	local sup
	crun_bg --workspace "$WS" -- sh -c 'trap "echo got-int > /workspace/int; exit 5" INT; echo ready > /workspace/ready; while :; do sleep 0.1; done'
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started"
		return
	fi
	if ! sup=$(supervisor_of "$ID"); then
		fail "no supervisor process found for $ID"
		return
	fi
	kill -INT "$sup"
	wait_bg_for "$WAIT_LIMIT" || return
	[ "$(cat "$WS/int" 2>/dev/null)" = got-int ] ||
		fail "the workload's INT trap did not run: SIGINT was not forwarded"
	expect_rc 5 "expected the workload's own status (5, from its trap)"
}

t_orphans_killed() {
	new_mark
	# The workload leaves a background child behind when it exits.
	crun -- sh -c "sleep $MARK & echo started"
	expect_rc 0
	expect_out_eq started
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" ||
		fail "a background process of the workload outlived the sandbox: $(procs_matching "$MARK")"
}

# A signal to cordon is relayed while the output's reader never reads:
# the relay of counted output holds no part of the supervisor's loop. A
# child of the workload floods stdout; the workload waits and, on
# SIGTERM, leaves a file; the reader reads nothing until that file is
# there (20 s at most), then goes away.
t_signal_reader_stuck() {
	local _argv rcfile=$CASE_DIR/rc sup
	new_mark
	rm -f "$rcfile" "$WS/termed" "$WS/flooding"
	_cordon_argv run --name "$CASE_ID-stuck" --output-max 100000000 "$ROOTFS" -- sh -c \
		"trap 'touch /workspace/termed; exit 7' TERM
		 (while :; do echo $MARK-$MARK-$MARK-$MARK; done) & touch /workspace/flooding; wait"
	# shellcheck disable=SC2016
	(cd "$WS" && exec bash -c '{ "${@:2}"; echo $? >"$0"; } | {
		for i in $(seq 200); do [ -e "$1/termed" ] && { touch "$1/seen"; break; }; sleep 0.1; done; }' \
		"$rcfile" "$WS" "${_argv[@]}") &
	local pipeline=$!
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/flooding"; then
		fail "the workload never started"
	else
		# Long enough for the pipe, and what cordon keeps, to be full.
		sleep 1
		sup=$(supervisor_of "$CASE_ID-stuck") && kill -TERM "$sup"
	fi
	wait "$pipeline"
	[ -e "$WS/seen" ] || fail "SIGTERM was not relayed while stdout was full"
	wait_until "$WAIT_LIMIT" test -s "$rcfile" || { fail "cordon never ended"; return; }
	[ "$(cat "$rcfile")" = 7 ] || fail "expected the workload's 7 from cordon, got $(cat "$rcfile")"
	no_procs_matching "$MARK" || fail "the workload survived: $(procs_matching "$MARK")"
}

# --timeout while the output's reader never reads: the relay of counted
# output must not hold the supervisor in write(). The reader waits for
# cordon's exit status (a file), so nothing but cordon's own timeout can
# end the pipeline before the harness's.
t_timeout_reader_stuck() {
	local _argv rcfile=$CASE_DIR/rc
	rm -f "$rcfile"
	_cordon_argv run --no-workspace --output-max 100000000 --timeout 1 --kill-after 1 \
		"$ROOTFS" -- sh -c "while :; do echo $MARK-$MARK-$MARK-$MARK; done"
	# shellcheck disable=SC2016
	run bash -c '{ "$@"; echo $? >"$0"; } | { while [ ! -s "$0" ]; do sleep 0.1; done; }' \
		"$rcfile" "${_argv[@]}"
	[ -s "$rcfile" ] || { fail "cordon never ended while its stdout was full"; return; }
	[ "$(cat "$rcfile")" = 124 ] || fail "expected 124 from cordon, got $(cat "$rcfile")"
	no_procs_matching "$MARK" || fail "the workload survived: $(procs_matching "$MARK")"
}

each_mode "pid namespace: ps and /proc show only the sandbox's processes" t_pid_namespace
each_mode "a signal to cordon is relayed while a stdout nobody reads is full" t_signal_reader_stuck
each_mode "--timeout with a stdout nobody reads (--output-max): still 124" t_timeout_reader_stuck
each_mode "--timeout 1: exit 124 within a few seconds, no sleep left" t_timeout
each_mode "--timeout 0.5 --kill-after 1: SIGKILL after the grace period" t_timeout_fraction_and_kill_after
each_mode "--timeout not reached: the workload's status" t_no_timeout_when_fast
each_mode "--output-max 100: exactly 100 bytes of stdout, one notice" t_output_max_stdout
each_mode "--output-max 100: exactly 100 bytes of stderr, one notice" t_output_max_stderr
each_mode "--output-max 250: the cap counts stdout and stderr together" t_output_max_both
each_mode "--output-max above the output: everything, no notice" t_output_max_not_reached
each_mode "SIGKILL of the supervisor kills the workload; next run sweeps" t_sigkill_supervisor
each_mode "SIGTERM to the supervisor is forwarded to the workload" t_sigterm_forwarded
each_mode "SIGINT to the supervisor is forwarded to the workload" t_sigint_forwarded
each_mode "background children die with the workload" t_orphans_killed
done_testing
