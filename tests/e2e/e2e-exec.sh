#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: `cordon exec` with a command's own outcome (docs/architecture.md,
# "exec's process tree"): --timeout ends the command and every process it
# started (a double fork, setsid), nothing else of the sandbox's; two
# execs at once; --output-max; cordon run's exit statuses and result JSON;
# the reaper, the output pipes and --result-json against a hostile command.
# Nothing here measures time: what is asserted is which processes are left
# and what was counted.
. "$(dirname "$0")/oci-lib.sh"

# The kind of sandbox a case runs in (the case's first argument): "oci", a
# started container of a bundle running `sleep $MARK`; "native", a session
# of `cordon create ROOTFS`.
have_sessions() { "$CORDON" create --help 2>&1 | grep ROOTFS >/dev/null; }

# start_sandbox ID [KIND]: a running sandbox of KIND (default oci); WPID its
# workload process, SHM a directory inside that every command may write.
start_sandbox() {
	if [ "${2:-oci}" = native ]; then
		have_sessions || { skip_case "cordon create ROOTFS (a session) is not in this build"; return 1; }
		# No owner: the harness's process that runs create exits at once.
		oc create --owner none --name "$1" "$ROOTFS"
		expect_rc 0 || return 1
		SHM=/tmp
	else
		mk_bundle b sleep "$MARK" || return 1
		# A writable bind of $CASE_DIR/share at /share, asked by SHARE=1.
		if [ -n "${SHARE:-}" ]; then
			cfg 'c["mounts"].append({"destination": "/share", "type": "bind", "source": sys.argv[1], "options": ["rbind", "rw"]})' \
				"$CASE_DIR/share" || return 1
		fi
		oc create -b "$BUNDLE" "$1" && oc start "$1"
		expect_rc 0 || return 1
		SHM=/dev/shm
	fi
	oc state "$1"
	WPID=$(user_process)
	[ -n "$WPID" ] || { fail "no workload process in $1"; return 1; }
}

# exec_bg NAME ARGS...: `cordon exec ARGS` in the background; its stdout,
# stderr and status in $CASE_DIR/NAME.out, .err, .rc.
exec_bg() {
	local name=$1 _argv
	shift
	_cordon_argv --root "$OROOT" exec "$@"
	("${_argv[@]}" >"$CASE_DIR/$name.out" 2>"$CASE_DIR/$name.err" </dev/null
	 echo $? >"$CASE_DIR/$name.rc") 2>/dev/null &
	_bg_pids+=("$!")
}

# exec_done NAME: the background exec NAME has exited.
exec_done() { [ -s "$CASE_DIR/$1.rc" ]; }

# exec_wait NAME SECONDS: wait for it; RC, OUT, ERR are its.
exec_wait() {
	wait_until "$2" exec_done "$1" || { fail "exec $1 did not end (waited $2 s)"; return 1; }
	RC=$(cat "$CASE_DIR/$1.rc")
	_slurp OUT "$CASE_DIR/$1.out"
	_slurp ERR "$CASE_DIR/$1.err"
}

# host_procs WORD: how many processes on the host have WORD in their command line.
host_procs() { procs_matching "$1" | wc -l; }

# jget FILE KEY: KEY of the JSON object in FILE, as Python prints it.
jget() {
	"$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], "ABSENT"))' "$1" "$2"
}

t_timeout_ends_the_tree() {
	local id=$CASE_ID-t bg daemon fg
	setup_case
	bg=$((MARK + 1)) daemon=$((MARK + 2)) fg=$((MARK + 3))
	start_sandbox "$id" "${1:-oci}" || return
	# Started first, ends only when told: the timed-out command must not take it along.
	exec_bg first --timeout 60 "$id" -- sh -c \
		"while [ ! -e $SHM/go ]; do sleep 0.05; done; echo first-done"
	# A background child, a daemon in a session of its own (double fork), and a
	# foreground that ignores SIGTERM: SIGKILL after --kill-after ends all three.
	oc exec --timeout 1 --kill-after 0.5 "$id" -- sh -c \
		"sleep $bg & (setsid sleep $daemon &) ; trap '' TERM; echo started; sleep $fg"
	expect_rc 124
	expect_out_eq started
	[ "$(host_procs "sleep $bg")" = 0 ] || fail "the command's background sleep survived the timeout"
	[ "$(host_procs "sleep $daemon")" = 0 ] || fail "the command's setsid daemon survived the timeout"
	[ "$(host_procs "sleep $fg")" = 0 ] || fail "the command itself survived the timeout"
	[ -d "/proc/$WPID" ] || fail "the timeout ended the sandbox's own process"
	exec_done first && fail "the timeout ended another exec's command"
	oc exec "$id" touch "$SHM/go"
	expect_rc 0
	exec_wait first "$WAIT_LIMIT" || return
	expect_rc 0
	expect_out_eq first-done
	expect_status "$id" running
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# SIGTERM alone is enough for a command that does not ignore it; its children get it too.
# The child says when its trap is set, and leaves a file when the SIGTERM comes
# (counted, not timed: the exec waits for the whole tree, so a child that the
# SIGTERM missed ended at --kill-after's SIGKILL, and the case passed). A
# timeout that came before the child was there proves nothing: again, with
# twice as long.
t_timeout_term() {
	local id=$CASE_ID-m kid t
	setup_case
	kid=$((MARK + 4))
	start_sandbox "$id" "${1:-oci}" || return
	# The trap writes with a redirection, not touch: a process the handler
	# forked after the command's exit would get that exit's SIGTERM too.
	for t in 0.5 1 2 4 8 16 32; do
		oc exec --timeout "$t" --kill-after 30 --result-json "$CASE_DIR/r.json" "$id" -- \
			sh -c "(trap ': >$SHM/termed-$kid; exit 0' TERM; echo child-ready; sleep $kid & wait) &
				sleep $((kid + 1))"
		[[ $OUT != *child-ready* ]] || break
	done
	expect_rc 124
	[[ $OUT == *child-ready* ]] || fail "the child never started, even with --timeout $t"
	[ -e "/proc/$WPID/root$SHM/termed-$kid" ] || fail "the command's child did not get the SIGTERM"
	[ "$(host_procs "sleep $kid")" = 0 ] || fail "the command's child survived SIGTERM"
	[ "$(jget "$CASE_DIR/r.json" timed_out)" = True ] || fail "timed_out is not true"
	[ "$(jget "$CASE_DIR/r.json" exit_code)" = 124 ] || fail "exit_code is not 124"
	[ "$(jget "$CASE_DIR/r.json" signal)" = 15 ] || fail "signal is not SIGTERM's"
	oc delete -f "$id"
	end_case
}

# The command ends at SIGTERM, a child it left ignores it: the exec is not
# over until --kill-after's SIGKILL has ended that child too.
t_timeout_term_ignored() {
	local id=$CASE_ID-i kid
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	kid=$((MARK + 8))
	oc exec --timeout 0.5 --kill-after 0.5 "$id" -- \
		sh -c "(trap '' TERM; exec sleep $kid) & exec sleep $((kid + 1))"
	expect_rc 124
	[ "$(host_procs "sleep $kid")" = 0 ] || fail "a child that ignores SIGTERM outlived the exec"
	[ -d "/proc/$WPID" ] || fail "the kill reached the sandbox's own process"
	oc delete -f "$id"
	end_case
}

# A command that keeps forking orphans while it is being killed leaves none.
t_timeout_fork_race() {
	local id=$CASE_ID-f orphan
	setup_case
	orphan=$((MARK + 5))
	start_sandbox "$id" "${1:-oci}" || return
	oc exec --timeout 1 --kill-after 0 "$id" -- sh -c \
		"trap '' TERM; while :; do (setsid sleep $orphan &); (sleep $orphan &); done"
	expect_rc 124
	[ "$(host_procs "sleep $orphan")" = 0 ] ||
		fail "$(host_procs "sleep $orphan") orphans of the forking command survived"
	[ -d "/proc/$WPID" ] || fail "the kill reached the sandbox's own process"
	oc delete -f "$id"
	end_case
}

# threads_matching WORD: how many threads on the host have WORD in their
# command line (a process whose main thread has ended shows an empty one).
threads_matching() {
	local f n=0 args
	for f in /proc/[0-9]*/task/[0-9]*/cmdline; do
		{ mapfile -d '' -t args <"$f"; } 2>/dev/null || continue
		[[ "${args[*]}" == *"$1"* ]] && n=$((n + 1))
	done
	echo "$n"
}

# A command whose main thread has ended while another runs on reads "Z" in
# /proc/PID/stat: it is still the command's, and --kill-after ends it;
# the same for such a process below the command.
t_timeout_leader_exits() {
	local id=$CASE_ID-z zl ROOTFS=$ROOTFS
	setup_case
	if [ -z "${SEC_PROBE:-}" ]; then
		skip_or_fail "no sec-probe in this build (SEC_PROBE is not set)"
		return
	fi
	zl=zl$MARK
	copy_rootfs "$CASE_DIR/rootfs" || return
	cp "$SEC_PROBE" "$CASE_DIR/rootfs/bin/$zl"
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$CASE_DIR/rootfs"
	ROOTFS=$CASE_DIR/rootfs
	start_sandbox "$id" "${1:-oci}" || return
	oc exec --timeout 0.5 --kill-after 0.5 "$id" -- "/bin/$zl" leader-exits
	expect_rc 124
	expect_out_eq leader-exits=ok
	[ "$(threads_matching "$zl")" = 0 ] || fail "the command's live thread outlived the exec"
	oc exec --timeout 0.5 --kill-after 0.5 "$id" -- sh -c "/bin/$zl leader-exits; sleep 600"
	expect_rc 124
	[ "$(threads_matching "$zl")" = 0 ] || fail "a child's live thread outlived the exec"
	[ -d "/proc/$WPID" ] || fail "the kill reached the sandbox's own process"
	oc delete -f "$id"
	end_case
}

t_concurrent() {
	local id=$CASE_ID-c
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	# Each ends only once the other has started: they run at once or not at all.
	exec_bg a --timeout 60 "$id" -- sh -c \
		"touch $SHM/a; while [ ! -e $SHM/b ]; do sleep 0.05; done; echo a-done"
	exec_bg b --timeout 60 "$id" -- sh -c \
		"touch $SHM/b; while [ ! -e $SHM/a ]; do sleep 0.05; done; echo b-done; exit 3"
	exec_wait a "$WAIT_LIMIT" || return
	expect_rc 0
	expect_out_eq a-done
	exec_wait b "$WAIT_LIMIT" || return
	expect_rc 3
	expect_out_eq b-done
	oc delete -f "$id"
	end_case
}

t_output_max() {
	local id=$CASE_ID-o
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	oc exec --output-max 100 --result-json "$CASE_DIR/r.json" "$id" -- \
		sh -c 'head -c 100000 /dev/zero | tr "\0" x; echo oops >&2'
	expect_rc 0
	[ "${#OUT}" = 100 ] || fail "expected 100 bytes of output, got ${#OUT}"
	expect_err_has "output truncated at 100 bytes"
	[ "$(jget "$CASE_DIR/r.json" stdout_bytes)" = 100000 ] || fail "stdout_bytes is not 100000"
	[ "$(jget "$CASE_DIR/r.json" stderr_bytes)" = 5 ] || fail "stderr_bytes is not 5"
	[ "$(jget "$CASE_DIR/r.json" output_truncated)" = True ] || fail "output_truncated is not true"
	# Under the cap: all of it, stdout and stderr apart.
	oc exec --output-max 100 "$id" -- sh -c 'echo out; echo err >&2'
	expect_rc 0
	expect_out_eq out
	expect_err_eq err
	# A flood that never ends: the cap holds, and the timeout still ends it.
	oc exec --output-max 10 --timeout 1 --kill-after 0 "$id" -- sh -c 'trap "" TERM; yes'
	expect_rc 124
	[ "${#OUT}" -le 10 ] || fail "the flood passed the cap: ${#OUT} bytes"
	oc delete -f "$id"
	end_case
}

t_statuses_and_result() {
	local id=$CASE_ID-s r=$CASE_DIR/r.json
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	oc exec --result-json "$r" "$id" -- sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; echo 12345; exit 7'
	expect_rc 7
	"$PYTHON" - "$r" "$id" <<'PY' || fail "the result JSON's fields"
import json, sys
r = json.load(open(sys.argv[1]))
want = {"id": sys.argv[2], "exit_code": 7, "signal": None, "timed_out": False,
        "stdout_bytes": 6, "stderr_bytes": 0, "output_truncated": False}
for k, v in want.items():
    assert r[k] == v, (k, r[k], v)
for k in ("duration_ms", "limits_enforced", "oom_killed", "memory_peak_bytes", "pids_peak"):
    assert k in r, k
# The command's CPU time (with its waited-for children's): a shell loop spends some.
assert isinstance(r["cpu_usage_us"], int) and r["cpu_usage_us"] > 0, r["cpu_usage_us"]
assert isinstance(r["duration_ms"], int) and r["duration_ms"] >= 0
assert "error" not in r
PY
	# shellcheck disable=SC2016
	oc exec --result-json "$r" "$id" -- sh -c 'kill -9 $$'
	expect_rc 137
	[ "$(jget "$r" signal)" = 9 ] || fail "signal is not 9"
	oc exec --result-json "$r" "$id" -- no-such-program
	expect_rc 127
	expect_err_has CORDON_E_EXEC
	[ "$(jget "$r" exit_code)" = 127 ] || fail "exit_code is not 127"
	"$PYTHON" -c 'import json, sys; assert json.load(open(sys.argv[1]))["error"]["code"] == "CORDON_E_EXEC"' "$r" ||
		fail "the error's code is not CORDON_E_EXEC"
	oc exec --timeout 5 "$id" -- /etc
	expect_rc 126
	oc exec --timeout 5 --result-json "$r" "$id-none" -- true
	expect_cordon_error STATE "does not exist"
	[ "$(jget "$r" exit_code)" = 125 ] || fail "a refused exec's result says no 125"
	oc exec --timeout 0 "$id" -- true
	expect_cordon_error USAGE --timeout
	oc exec --timeout 5 -d "$id" -- true
	expect_cordon_error USAGE --detach
	oc delete -f "$id"
	end_case
}

# Rootless the reaper runs as the caller's uid, which is also the sandbox
# root's: a root command may kill it (architecture.md). cordon exec says it
# cannot know the status, and the command's timeout is lost with it.
t_reaper_killed_rootless() {
	local id=$CASE_ID-q
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	# shellcheck disable=SC2016
	oc exec --timeout 30 --result-json "$CASE_DIR/r.json" "$id" -- sh -c 'kill -9 $PPID; sleep 1'
	expect_cordon_error STATE "reaper ended"
	[ "$(jget "$CASE_DIR/r.json" exit_code)" = 125 ] || fail "the result says no 125"
	oc delete -f "$id"
	end_case
}

# A caller that stops reading (a pager at its prompt, ^S) does not hold the
# timeout: the flood's pipe fills, cordon exec ends it all the same.
t_stalled_reader() {
	local id=$CASE_ID-r _argv
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	mkfifo "$CASE_DIR/fifo"
	# Held open at both ends here and never read.
	exec 7<>"$CASE_DIR/fifo"
	_cordon_argv --root "$OROOT" exec --timeout 1 --kill-after 0 --result-json "$CASE_DIR/r.json" \
		"$id" -- sh -c 'trap "" TERM; yes'
	("${_argv[@]}" >"$CASE_DIR/fifo" 2>"$CASE_DIR/stall.err" </dev/null
	 echo $? >"$CASE_DIR/stall.rc") 2>/dev/null &
	_bg_pids+=("$!")
	wait_until "$WAIT_LIMIT" exec_done stall ||
		fail "cordon exec waited for a reader that never reads, past its timeout"
	exec 7<&-
	exec_wait stall "$WAIT_LIMIT" || return
	expect_rc 124
	[ "$(jget "$CASE_DIR/r.json" timed_out)" = True ] || fail "timed_out is not true"
	oc delete -f "$id"
	end_case
}

# A reader that goes away (`| head`) does not end cordon exec (SIGPIPE):
# the command keeps its timeout, and its tree still ends.
t_reader_gone() {
	local id=$CASE_ID-g kid _argv
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	kid=$((MARK + 7))
	_cordon_argv --root "$OROOT" exec --timeout 1 --kill-after 0 --output-max 100000000 "$id" -- \
		sh -c "sleep $kid & trap '' TERM; while :; do echo line; done"
	("${_argv[@]}" 2>"$CASE_DIR/gone.err" </dev/null | head -c 5 >"$CASE_DIR/gone.out"
	 echo "${PIPESTATUS[0]}" >"$CASE_DIR/gone.rc") 2>/dev/null &
	_bg_pids+=("$!")
	exec_wait gone "$WAIT_LIMIT" || return
	expect_rc 124
	[ "$(host_procs "sleep $kid")" = 0 ] || fail "the command's tree outlived its timeout"
	oc delete -f "$id"
	end_case
}

# The sandbox ends under a supervised exec: it says so and ends, nothing waits.
t_sandbox_ends_under_exec() {
	local id=$CASE_ID-e
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	exec_bg long --timeout 600 --result-json "$CASE_DIR/r.json" "$id" -- sleep $((MARK + 6))
	wait_until "$WAIT_LIMIT" pgrep -f "^sleep $((MARK + 6))\$" >/dev/null ||
		fail "the exec's command did not start"
	# The sandbox's init killed: its pid namespace ends, the reaper (the
	# lower pid) killed before the command. delete -f also kills what its
	# cgroups hold, the command among them, and the reaper, which is not
	# there, then reported the command's SIGKILL (137) whenever that came
	# before the end of the pid namespace (once in a run, on 2 cores).
	oc state "$id"
	kill -9 "$(jfield pid)"
	exec_wait long "$WAIT_LIMIT" || return
	expect_cordon_error STATE "reaper ended"
	[ "$(jget "$CASE_DIR/r.json" exit_code)" = 125 ] || fail "the result says no 125"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# --result-json is written by cordon exec on the host (host root when
# rootful): a link planted at its name is refused, never followed.
t_result_json_hostile() {
	local id=$CASE_ID-h
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	echo "precious-$MARK" >"$CASE_DIR/target"
	ln -s "$CASE_DIR/target" "$CASE_DIR/link.json"
	oc exec --result-json "$CASE_DIR/link.json" "$id" -- true
	expect_cordon_error PATH "symbolic link"
	[ "$(cat "$CASE_DIR/target")" = "precious-$MARK" ] || fail "the link's target was written"
	oc exec --result-json "$CASE_DIR/no/such/dir/r.json" "$id" -- true
	expect_rc 125
	mkdir "$CASE_DIR/d.json"
	oc exec --result-json "$CASE_DIR/d.json" "$id" -- true
	expect_cordon_error PATH directory
	oc delete -f "$id"
	end_case
}

# --pid-file and --result-json are written by cordon exec on the host:
# a path that goes through a symlink in the sandbox's own places (the
# session's workspace, an OCI container's writable bind), which the
# workload may have made in place of a directory, is refused, and
# nothing is written where it points (its files are root's or the
# caller's on the host: the walk's ownership rule alone trusted it), as
# is a '..' out of one of its directories; nothing is written there when
# the exec fails before it looked (the sandbox ended), nor by the next
# cordon run on the same workspace. A link elsewhere is followed as before.
t_output_link_refused() {
	local id=$CASE_ID-l place inside
	setup_case
	mkdir -p "$CASE_DIR/share" "$CASE_DIR/victim" "$CASE_DIR/real"
	# Rootful, the container's root is not host root: anyone may add names
	# to the share (its link is then another uid's, refused by the walk's
	# own rule, as the message says).
	[ "$MODE" = rootful ] && chmod 1777 "$CASE_DIR/share"
	[ "$MODE" = rootless ] &&
		chown "$TEST_UID:$TEST_GID" "$CASE_DIR/share" "$CASE_DIR/victim" "$CASE_DIR/real"
	SHARE=1 start_sandbox "$id" "${1:-oci}" || return
	if [ "${1:-oci}" = native ]; then
		place=$CASE_DIR/ws inside=/workspace
	else
		place=$CASE_DIR/share inside=/share
	fi
	oc exec "$id" -- sh -c "mkdir -p $inside/run && rm -rf $inside/run && ln -s $CASE_DIR/victim $inside/run"
	expect_rc 0 || return
	[ -L "$place/run" ] || { fail "the workload's link is not at $place/run"; return; }
	oc exec --pid-file "$place/run/exec.pid" "$id" -- true
	expect_cordon_error PATH "symlink"
	oc exec --result-json "$place/run/r.json" "$id" -- true
	expect_cordon_error PATH "symlink"
	# '..' out of a directory of the place: where it leads is the workload's doing.
	oc exec "$id" -- mkdir -p "$inside/sub"
	oc exec --result-json "$place/sub/../r.json" "$id" -- true
	expect_cordon_error PATH "'..'"
	# '..' from the place's own root, which its workload cannot move: allowed.
	oc exec --result-json "$place/../up.json" "$id" -- true
	expect_rc 0
	[ -s "$CASE_DIR/up.json" ] || fail "--result-json PLACE/../up.json was not written"
	ln -s "$CASE_DIR/real" "$CASE_DIR/lnk"
	oc exec --pid-file "$CASE_DIR/lnk/exec.pid" --detach "$id" -- true
	expect_rc 0
	[ -s "$CASE_DIR/real/exec.pid" ] || fail "a link outside the sandbox's places was not followed"
	# Ended (the workload can end its own sandbox): an exec that fails
	# before its links are checked writes no refusal through them.
	oc delete -f "$id"
	oc exec --result-json "$place/run/r.json" "$id" -- true
	expect_rc 125
	[ -z "$(ls -A "$CASE_DIR/victim")" ] || fail "written where the workload's link points: $(ls -A "$CASE_DIR/victim")"
	if [ "${1:-oci}" = native ]; then
		# A workspace outlives its run: the next run's --result-json through
		# the link the last one's workload left is refused, and nothing written.
		cordon run --workspace "$place" --result-json "$place/run/next.json" "$ROOTFS" -- true
		expect_cordon_error PATH "symlink"
		# A second --result-json that fails leaves the first one's links unchecked: no write.
		cordon run --workspace "$place" --result-json "$place/run/first.json" \
			--result-json "$CASE_DIR/no/such/second.json" "$ROOTFS" -- true
		expect_rc 125
		[ -z "$(ls -A "$CASE_DIR/victim")" ] ||
			fail "cordon run wrote where an earlier workload's link points: $(ls -A "$CASE_DIR/victim")"
	fi
	end_case
}

# The supervised flags wait for the command and take its output: with
# -t (the output goes to --console-socket), --detach or --pid-file they
# are refused, naming both flags, before anything runs or is written.
t_supervised_refusals() {
	local id=$CASE_ID-r f
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	# A terminal from --process FILE ("terminal": true) is refused as -t is.
	printf '{"terminal": true, "args": ["touch", "%s/ran"], "cwd": "/"}\n' "$SHM" \
		>"$CASE_DIR/tty-process.json"
	chmod 644 "$CASE_DIR/tty-process.json"
	for f in "--timeout 5" "--kill-after 1" "--output-max 10" "--result-json $CASE_DIR/r.json"; do
		# shellcheck disable=SC2086 # a flag and its value
		oc exec --console-socket "$CASE_DIR/console.sock" $f \
			--process "$CASE_DIR/tty-process.json" "$id"
		expect_cordon_error USAGE "${f%% *}: not with --process $CASE_DIR/tty-process.json's \"terminal\": true"
		# shellcheck disable=SC2086 # a flag and its value
		oc exec -t --console-socket "$CASE_DIR/console.sock" $f "$id" -- touch "$SHM/ran"
		expect_cordon_error USAGE "${f%% *}: not with -t/--tty (a terminal's output goes to --console-socket"
		# shellcheck disable=SC2086
		oc exec --detach $f "$id" -- touch "$SHM/ran"
		expect_cordon_error USAGE "${f%% *}: not with --detach"
		# shellcheck disable=SC2086
		oc exec --pid-file "$CASE_DIR/pid" $f "$id" -- touch "$SHM/ran"
		expect_cordon_error USAGE "${f%% *}: not with --pid-file"
	done
	oc exec "$id" -- test -e "$SHM/ran"
	expect_rc_not 0 "a refused exec ran"
	check "no result or pid file was written" test ! -e "$CASE_DIR/r.json" -a ! -e "$CASE_DIR/pid"
	oc delete -f "$id"
	end_case
}

# The reaper keeps the tree: rootful, nothing in the container may signal it
# (host uid 0, which the container does not map; no capability in U1).
t_reaper_unkillable() {
	local id=$CASE_ID-k
	setup_case
	start_sandbox "$id" "${1:-oci}" || return
	# shellcheck disable=SC2016
	oc exec --timeout 30 "$id" -- sh -c 'kill -9 $PPID && echo killed || echo refused'
	expect_rc 0
	expect_out_eq refused
	oc delete -f "$id"
	end_case
}

each_mode "exec --timeout: the command's whole tree ends (SIGKILL), another exec and the sandbox do not" t_timeout_ends_the_tree
each_mode "exec --timeout: SIGTERM reaches the command's children; result JSON" t_timeout_term
each_mode "exec --timeout: a child that ignores SIGTERM ends at --kill-after, after the command" t_timeout_term_ignored
each_mode "exec --timeout --kill-after 0: a command forking orphans while killed leaves none" t_timeout_fork_race
each_mode "exec --timeout: a command whose main thread has ended (a live thread left) still ends" t_timeout_leader_exits
each_mode "exec: two commands at once" t_concurrent
each_mode "exec --output-max: the cap, the counts, a flood" t_output_max
each_mode "exec: cordon run's exit statuses and result JSON" t_statuses_and_result
each_mode "exec --timeout: a caller that stops reading does not hold the timeout" t_stalled_reader
each_mode "exec --timeout: a reader that goes away (| head) ends nothing but the output" t_reader_gone
each_mode "exec: the sandbox ends under a supervised exec: 125, nothing waits" t_sandbox_ends_under_exec
each_mode "exec --result-json: a planted link or a directory is refused" t_result_json_hostile
each_mode "exec --pid-file, --result-json: a link in the sandbox's own places is refused" t_output_link_refused
rootful_only "exec: the reaper cannot be signalled from the container" t_reaper_unkillable
rootless_only "exec: a root command that kills the reaper (rootless: the caller's uid) gets 125, not a made-up status" t_reaper_killed_rootless
# The same in a session of `cordon create ROOTFS` (skipped, saying so, in a build without it).
each_mode "session: exec --timeout: the command's whole tree ends, another exec and the session do not" t_timeout_ends_the_tree native
each_mode "session: exec --timeout: a child that ignores SIGTERM ends at --kill-after" t_timeout_term_ignored native
each_mode "session: exec --timeout: a command whose main thread has ended still ends" t_timeout_leader_exits native
each_mode "session: exec: two commands at once" t_concurrent native
each_mode "session: exec --output-max: the cap, the counts, a flood" t_output_max native
each_mode "session: exec: cordon run's exit statuses and result JSON" t_statuses_and_result native
each_mode "exec: the supervised flags with -t, --detach or --pid-file are refused, nothing runs" t_supervised_refusals
each_mode "session: exec: the supervised flags with -t, --detach or --pid-file are refused" t_supervised_refusals native
each_mode "session: exec --pid-file, --result-json: a link in the workspace is refused" t_output_link_refused native
done_testing
