#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: the sandbox and the caller's session. The sandbox is a
# session and process group of its own: kill(0) from inside reaches
# neither the caller's shell, nor its other jobs, nor (rootless) cordon's
# supervisor, nor the other side of a pipeline of two sandboxes.
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
		if grep -qx done "$CASE_DIR/inner.out"; then
			SHELL_FATE=done
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
				grep -qx done "$CASE_DIR/inner.out" && SHELL_FATE=done || SHELL_FATE=gone
				break
			fi
		fi
		sleep 0.05
	done
	[ -n "$SHELL_FATE" ] || SHELL_FATE=timeout
	if [ "$SHELL_FATE" != done ] && [ -n "$pgid" ]; then
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
	[ "$SHELL_FATE" = done ] || fail "the caller's shell was $SHELL_FATE by the sandbox's kill -STOP 0"
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
	[ "$SHELL_FATE" = done ] || fail "the caller's shell was $SHELL_FATE by the sandbox's kill -KILL 0"
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
	[ "$SHELL_FATE" = done ] || fail "the caller's shell was $SHELL_FATE by A's kill -KILL 0"
	[ "$(out_value rc)" = "137 0" ] || fail "expected A killed by its own SIGKILL and B done (137 0), got '$(out_value rc)'"
	[[ $OUT == *$'from-a\nb-done'* ]] || fail "expected B to pass on A's output and finish"
}

sec_each "kill -STOP 0 inside: the caller's shell and jobs go on, --timeout fires" t_kill_stop_0
sec_each "kill -KILL 0 inside: the caller's shell and jobs survive" t_kill_kill_0
sec_each "cordon run A | cordon run B: A's kill -KILL 0 leaves B alone" t_pipeline
done_testing
