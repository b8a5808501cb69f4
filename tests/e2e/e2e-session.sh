#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: sessions (cordon create ROOTFS, then cordon exec, list, rm) and
# ownership (labels, the creator recorded in the state, cordon sweep):
# docs/architecture.md, "Sessions" and "Ownership and sweep". Every case
# uses its own state root ($OROOT), so that no other cordon run's sweep
# and no other case's session meets this one's.
. "$(dirname "$0")/oci-lib.sh"

OWNERS=()

# screate ARGS...: `cordon create ARGS` in this mode, from an owner that
# stays: a shell of the mode's user that runs create and then becomes
# `sleep` (same pid, same start time). Sets SID (the printed id),
# SHELL_PID (that shell, killed at the end of the case) and SOWNER (the
# creator the state records: that shell, unless --owner is given).
screate() {
	local dir=$CASE_DIR/create.$RANDOM script argv=()
	mk_dir "$dir"
	# shellcheck disable=SC2016 # expanded by the owner's shell
	script='echo $$ >"$4/pid"; cd "$1" && c=$2 r=$3 d=$4 && shift 4 && "$c" --root "$r" create "$@" >"$d/out" 2>"$d/err"; echo $? >"$d/rc"; exec sleep 1000'
	if [ "$MODE" = rootful ]; then
		argv=(env --default-signal sh -c "$script" owner)
	else
		local USER_PREFIX
		_user_prefix
		argv=("${USER_PREFIX[@]}" sh -c "$script" owner)
	fi
	("${argv[@]}" "$WS" "$CORDON" "$OROOT" "$dir" "$@" </dev/null >/dev/null 2>&1 &)
	wait_until "$WAIT_LIMIT" test -s "$dir/rc" ||
		{ fail "cordon create did not return: $(cat "$dir/err" 2>&1)"; return 1; }
	_slurp RC "$dir/rc"
	_slurp OUT "$dir/out"
	_slurp ERR "$dir/err"
	_show "$@"
	LAST_CMD="($MODE, from an owner shell) cordon --root $OROOT create $SHOWN"
	_slurp SHELL_PID "$dir/pid"
	OWNERS+=("$SHELL_PID")
	expect_rc 0 || return 1
	SID=$OUT
	SOWNER=$(sfield "$SID" creator_pid) || { fail "no creator_pid in $SID's state"; return 1; }
	[[ " $* " == *" --owner "* ]] || [ "$SOWNER" = "$SHELL_PID" ] ||
		fail "the creator recorded ($SOWNER) is not the owner shell ($SHELL_PID)"
}

# sfield ID KEY: KEY of ID's state.json.
sfield() {
	"$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$OROOT/$1/state.json" "$2" 2>/dev/null
}

# sedit ID PYTHON: run PYTHON on ID's state.json as `s` (then saved, as cordon saves it).
sedit() {
	"$PYTHON" - "$OROOT/$1/state.json" "$2" <<'EOF' || { fail "editing the state of $1"; return 1; }
import json, os, sys
path, code = sys.argv[1], sys.argv[2]
s = json.load(open(path))
exec(code)
st = os.stat(path)
tmp = path + ".edit"
with open(tmp, "w") as f:
    json.dump(s, f)
os.chown(tmp, st.st_uid, st.st_gid)
os.chmod(tmp, 0o600)
os.rename(tmp, path)
EOF
}

# cordon processes of session ID (its monitor; not the owner's runuser, whose command line names it too).
cordon_procs_of() {
	local line
	while read -r line; do
		[ "$(_argv0_of "${line%%:*}")" = "$CORDON" ] && echo "$line"
	done < <(procs_matching "--name $1 ")
}

session_gone() { [ ! -e "$OROOT/$1" ] && [ -z "$(cordon_procs_of "$1")" ]; }

# The owners go at the end of the case, before lib.sh's leftover checks.
end_session_case() {
	local pid
	for pid in "${OWNERS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	OWNERS=()
	# Rootless, runuser waits for its shell: gone once it has seen it go.
	wait_until "$WAIT_LIMIT" no_procs_matching "$CASE_ID-" || true
	end_case
}

# Files written in /workspace and /tmp by one exec are there for the
# next: one sandbox, many commands; rm removes it all.
t_workspace_persists() {
	setup_case
	screate --name "$CASE_ID-s" --label "run=$MARK" "$ROOTFS" || { end_session_case; return; }
	[ "$SID" = "$CASE_ID-s" ] || fail "create printed '$SID', not the --name"
	oc exec "$SID" -- sh -c "echo $MARK >/workspace/w; echo tmp-$MARK >/tmp/t"
	expect_rc 0
	oc exec "$SID" -- cat /workspace/w /tmp/t
	expect_rc 0
	expect_out_eq "$MARK"$'\n'"tmp-$MARK"
	check "the workspace file is on the host" grep -qx "$MARK" "$WS/w"
	oc exec "$SID" -- sh -c 'exit 7'
	expect_rc 7
	oc exec "$SID" -- /no/such/program
	expect_rc 127
	oc list -q
	expect_out_eq "$SID"
	oc rm "$SID"
	expect_rc 0
	check "rm leaves nothing of the session" session_gone "$SID"
	oc exec "$SID" -- true
	expect_cordon_error STATE "does not exist"
	end_session_case
}

# --label filters list (K=V and K), and list's JSON shows labels and owner.
t_labels_filter() {
	local a b
	setup_case
	screate --name "$CASE_ID-a" --label team=red --label "mark=$MARK" --no-workspace "$ROOTFS" || { end_session_case; return; }
	a=$SID
	screate --name "$CASE_ID-b" --label team=blue --no-workspace "$ROOTFS" || { oc rm "$a"; end_session_case; return; }
	b=$SID
	oc list -q --label team=red
	expect_out_eq "$a"
	oc list -q --label team=blue
	expect_out_eq "$b"
	oc list -q --label team
	expect_out_eq "$a"$'\n'"$b"
	oc list -q --label team=red --label "mark=$MARK"
	expect_out_eq "$a"
	oc list -q --label team=green
	expect_out_eq ""
	oc list --format json --label team=red
	expect_rc 0
	"$PYTHON" - "$OUT" "$a" "$MARK" "$SOWNER" <<'PY' || fail "list's JSON: $OUT"
import json, sys
out, sid, mark, _ = sys.argv[1:]
l = json.loads(out)
assert len(l) == 1 and l[0]["id"] == sid, l
e = l[0]
assert e["kind"] == "session" and e["status"] == "running", e
assert e["labels"] == {"team": "red", "mark": mark}, e["labels"]
assert e["owner"]["pid"] > 0 and e["owner"]["start_time"] > 0 and e["owner"]["host"], e["owner"]
assert e["max_lifetime_s"] == 86400, e
PY
	check "the state records host, boot, version and creation time" "$PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["host"] and s["boot_id"] and s["version"] and s["created_ms"] > 0, s
' "$OROOT/$a/state.json"
	oc list --label 'bad key'
	expect_cordon_error USAGE "--label"
	oc rm "$a"
	expect_rc 0
	oc rm "$b"
	expect_rc 0
	end_session_case
}

# Each bad input: 125, one line naming it, nothing created.
t_bad_inputs() {
	local long
	setup_case
	long=$(printf 'v%.0s' {1..300})
	while IFS='|' read -r word args; do
		read -ra a <<<"$args"
		oc create --name "$CASE_ID-x" "${a[@]}" "$ROOTFS"
		expect_cordon_error USAGE "$word" || diag "for: create ${a[*]}"
		check "nothing is left after create ${a[*]}" root_empty
	done <<EOF
--label|--label =v
--label|--label bad/=v
--label|--label a..b.=v
--label|--label -k=v
--label|--label key
--label|--label k=$long
given twice|--label k=1 --label k=2
--idle-timeout|--idle-timeout 0
--idle-timeout|--idle-timeout soon
--max-lifetime|--max-lifetime -1
--max-lifetime|--max-lifetime 99999999999
--max-lifetime|--max-lifetime 0
--timeout|--timeout 5
--owner|--owner someone
--owner|--owner 0
no such process|--owner 2147483646
--result-json|--result-json /tmp/r.json
EOF
	local many=()
	for i in $(seq 33); do many+=(--label "k$i=v"); done
	oc create --name "$CASE_ID-x" "${many[@]}" "$ROOTFS"
	expect_cordon_error USAGE "at most 32"
	oc create --name "$CASE_ID-x" --label $'k=a\nb' "$ROOTFS"
	expect_cordon_error USAGE "control characters"
	oc create --name "$CASE_ID-x" --label $'a\nb=v' "$ROOTFS"
	expect_cordon_error USAGE "not printable"
	# Not UTF-8: state.json would not parse back, the session would be lost to every command.
	oc create --name "$CASE_ID-x" --label $'k=a\xffb' "$ROOTFS"
	expect_cordon_error USAGE "UTF-8"
	oc create --name "$CASE_ID-x" "$ROOTFS" true
	expect_cordon_error USAGE "takes no command"
	oc run --name "$CASE_ID-x" --label k=v "$ROOTFS" -- true
	expect_cordon_error USAGE "only for a session"
	check "nothing is left" root_empty
	end_session_case
}

# --max-lifetime ends the session by itself: everything gone.
t_lifetime_cap() {
	setup_case
	screate --name "$CASE_ID-l" --max-lifetime 1 --no-workspace "$ROOTFS" || { end_session_case; return; }
	[ "$(sfield "$SID" max_lifetime_ms)" = 1000 ] || fail "max_lifetime_ms not recorded"
	wait_until "$WAIT_LIMIT" session_gone "$SID" || fail "the session outlived its --max-lifetime"
	end_session_case
}

# --idle-timeout: never while an exec runs (one that outlasts it is not
# cut), then the session ends by itself.
t_idle_timeout() {
	setup_case
	screate --name "$CASE_ID-i" --idle-timeout 1 --no-workspace "$ROOTFS" || { end_session_case; return; }
	oc exec "$SID" -- sh -c "sleep 3; echo $MARK"
	expect_rc 0
	expect_out_eq "$MARK"
	wait_until "$WAIT_LIMIT" session_gone "$SID" || fail "the idle session did not end"
	end_session_case
}

past_ms() { [ "$(date +%s%3N)" -gt "$1" ]; }

# monitor_waits PID: PID sleeps in its event loop (it has handled what was ready).
monitor_waits() {
	local stat
	{ IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = S ] && grep -q epoll "/proc/$1/wchan" 2>/dev/null
}

# An exec does not wait for its monitor's answer: one its monitor has
# not heard yet when the idle timeout falls due is counted. The monitor
# is stopped while the exec starts and past the deadline, then continued:
# it takes the waiting request and keeps the session (the exec finishes,
# 0), then ends it once idle.
t_idle_exec_unheard() {
	local monitor deadline
	setup_case
	# Long enough for a loaded machine to stop the monitor before it falls due.
	screate --name "$CASE_ID-u" --idle-timeout 5 "$ROOTFS" || { end_session_case; return; }
	# The idle clock starts before create returns: due by then + 5 s at the latest.
	deadline=$(($(date +%s%3N) + 5000))
	monitor=$(monitor_of "$SID")
	kill -STOP "$monitor"
	check "the session is up when its monitor is stopped" test -e "$OROOT/$SID/state.json"
	oc_bg exec "$SID" -- sh -c \
		"echo up >/workspace/up; while [ ! -e /workspace/go ]; do sleep 0.1; done; echo $MARK"
	wait_until 20 test -e "$WS/up" || fail "the exec did not run while its monitor was stopped"
	# Past the idle deadline by the wall clock create recorded: an order, not an assertion.
	wait_until 20 past_ms "$((deadline + 200))"
	kill -CONT "$monitor"
	wait_until 10 monitor_waits "$monitor" || fail "the monitor did not go back to its loop"
	check "the session is up after its idle deadline" test -e "$OROOT/$SID/state.json"
	touch "$WS/go"
	wait_bg_for 20 || { end_session_case; return; }
	expect_rc 0
	expect_out_eq "$MARK"
	wait_until 20 session_gone "$SID" || fail "the idle session did not end"
	end_session_case
}

# Twelve execs at once (more than the monitor's eight waiting slots, so
# that connections give way to newer ones): each is counted or refused
# before it runs, none is lost; past the idle deadline the session stays
# while they run, every one ends 0, then the session idles out. Counted:
# twelve started, twelve statuses of 0.
t_idle_many_execs() {
	local deadline i _argv n=12 ok=0
	setup_case
	screate --name "$CASE_ID-n" --idle-timeout 5 "$ROOTFS" || { end_session_case; return; }
	deadline=$(($(date +%s%3N) + 5000))
	_cordon_argv --root "$OROOT" exec "$SID" -- sh -c \
		'touch /workspace/up.$$; while [ ! -e /workspace/go ]; do sleep 0.1; done'
	for ((i = 0; i < n; i++)); do
		("${_argv[@]}" </dev/null >/dev/null 2>"$CASE_DIR/x$i.err"
		 echo $? >"$CASE_DIR/x$i.rc") 2>/dev/null &
		_bg_pids+=("$!")
	done
	ups() { [ "$(find "$WS" -name 'up.*' | wc -l)" -ge "$1" ]; }
	wait_until "$WAIT_LIMIT" ups "$n" || fail "$(find "$WS" -name 'up.*' | wc -l) of $n execs started"
	wait_until 20 past_ms "$((deadline + 500))"
	check "the session is up past its idle deadline while execs run" test -e "$OROOT/$SID/state.json"
	touch "$WS/go"
	rcs() { [ "$(find "$CASE_DIR" -name 'x*.rc' | wc -l)" -ge "$n" ]; }
	wait_until "$WAIT_LIMIT" rcs || fail "not every exec ended"
	for ((i = 0; i < n; i++)); do
		[ "$(cat "$CASE_DIR/x$i.rc" 2>/dev/null)" = 0 ] && ok=$((ok + 1))
	done
	[ "$ok" = "$n" ] || fail "$ok of $n execs ended 0: $(cat "$CASE_DIR"/x*.err)"
	wait_until "$WAIT_LIMIT" session_gone "$SID" || fail "the idle session did not end"
	end_session_case
}

# The owner SIGKILLed: sweep ends the session (--dry-run first: says so,
# touches nothing); a session whose owner lives is kept.
t_sweep_owner_killed() {
	local dead live
	setup_case
	screate --name "$CASE_ID-d" --no-workspace "$ROOTFS" || { end_session_case; return; }
	dead=$SID
	screate --name "$CASE_ID-k" --no-workspace "$ROOTFS" || { oc rm "$dead"; end_session_case; return; }
	live=$SID
	# After both exist: the sweep at the second create's start would end it.
	kill -9 "${OWNERS[0]}"
	oc sweep --dry-run
	expect_rc 0
	expect_out_has "would end $dead: its owner (pid ${OWNERS[0]}) is gone" "dry-run did not say what it would do"
	expect_out_lacks "$live" "dry-run named the live owner's session"
	oc exec "$dead" -- true
	expect_rc 0
	oc sweep
	expect_rc 0
	expect_out_has "ended $dead: its owner" "sweep did not say what it did"
	expect_out_lacks "$live"
	check "the orphaned session is gone, processes and all" session_gone "$dead"
	oc exec "$live" -- true
	expect_rc 0
	oc rm "$live"
	expect_rc 0
	end_session_case
}

# pid reuse: the owner's pid alive with another start time is not the
# owner (the state says another start time): the session is ended.
t_sweep_pid_reuse() {
	setup_case
	screate --name "$CASE_ID-r" --no-workspace "$ROOTFS" || { end_session_case; return; }
	oc sweep
	expect_out_lacks "$SID"
	sedit "$SID" 's["creator_start_time"] += 1'
	oc sweep
	expect_out_has "ended $SID: its owner (pid $SOWNER) is gone"
	check "the session whose owner's pid was reused is gone" session_gone "$SID"
	end_session_case
}

# The session's monitor SIGKILLed: its sandbox goes with it (the init's
# parent-death signal); sweep removes the state left, the owner alive or not.
t_sweep_monitor_killed() {
	local monitor
	setup_case
	screate --name "$CASE_ID-m" --no-workspace "$ROOTFS" || { end_session_case; return; }
	monitor=$(monitor_of "$SID")
	kill -9 "$monitor"
	wait_until "$WAIT_LIMIT" test -z "$(cordon_procs_of "$SID")" || fail "the monitor's processes outlived it"
	wait_until "$WAIT_LIMIT" state_procs_gone "$SID" || fail "the sandbox's init outlived its monitor"
	check "its state is left for sweep" test -e "$OROOT/$SID/state.json"
	oc sweep
	expect_out_has "removed $SID: its supervisor (pid $monitor) is gone"
	check "sweep removed the state" session_gone "$SID"
	end_session_case
}

# --owner PID: that process's end ends the session, not the caller's;
# --owner none: no owner, the lifetime cap alone.
t_sweep_owner_flag() {
	local keeper named
	setup_case
	sleep 1000 &
	keeper=$!
	screate --name "$CASE_ID-n" --owner none --no-workspace "$ROOTFS" || { kill -9 "$keeper"; end_session_case; return; }
	named=$SID
	[ "$(sfield "$named" creator_pid)" = 0 ] || fail "--owner none recorded a creator"
	screate --name "$CASE_ID-p" --owner "$keeper" --no-workspace "$ROOTFS" || { oc rm "$named"; kill -9 "$keeper"; end_session_case; return; }
	[ "$(sfield "$SID" creator_pid)" = "$keeper" ] || fail "--owner $keeper not recorded"
	kill -9 "${OWNERS[@]}" # the shells that ran create
	oc sweep
	expect_out_lacks "$named" "a session of --owner none was ended"
	expect_out_lacks "$SID" "a session whose --owner lives was ended"
	kill -9 "$keeper"
	wait "$keeper" 2>/dev/null
	oc sweep
	expect_out_has "ended $SID: its owner (pid $keeper) is gone"
	check "the session of the --owner that died is gone" session_gone "$SID"
	oc rm "$named"
	expect_rc 0
	end_session_case
}

# A state recorded on another host (a shared state root): its pids mean
# nothing here; kept until it is older than its lifetime cap, then its
# directory alone goes. Faked from a real session's state.
t_sweep_other_host() {
	local fake
	setup_case
	screate --name "$CASE_ID-h" --no-workspace "$ROOTFS" || { end_session_case; return; }
	fake=$CASE_ID-f
	mk_dir "$OROOT/$fake"
	chmod 700 "$OROOT/$fake"
	cp -p "$OROOT/$SID/state.json" "$OROOT/$fake/state.json"
	oc rm "$SID"
	expect_rc 0
	# Owner, supervisor and init all dead here; another host's all the same.
	sedit "$fake" 's["host"] = "elsewhere.example"; s["id"] = "'"$fake"'"'
	oc sweep
	expect_rc 0
	expect_out_lacks "$fake"
	check "another host's young entry is kept" test -e "$OROOT/$fake/state.json"
	sedit "$fake" 's["created_ms"] -= s["max_lifetime_ms"] + 1000'
	oc sweep --dry-run
	expect_out_has "would forget $fake: recorded on host elsewhere.example, older than its lifetime cap"
	check "dry-run removed nothing" test -e "$OROOT/$fake/state.json"
	oc sweep
	expect_out_has "forgot $fake"
	check "the aged entry of another host is gone" test ! -e "$OROOT/$fake"
	end_session_case
}

# Forged states (hostile review): sweep acts only through what it can
# prove. A session state naming a live process of ours as its supervisor
# and init, its owner dead: the process is never signalled (sweep asks a
# monitor through its socket, and there is none). An entry that is a
# symlink to a directory of dead state: not followed, the target intact.
t_sweep_forged() {
	local victim victim_start fake=$CASE_ID-v link=$CASE_ID-y target=$CASE_DIR/target
	setup_case
	oc list # makes the state root, the mode's user's
	expect_rc 0
	sleep 1000 &
	victim=$!
	victim_start=$(awk '{ print $22 }' "/proc/$victim/stat")
	mk_dir "$OROOT/$fake" "$target"
	chmod 700 "$OROOT/$fake"
	"$PYTHON" - "$OROOT/$fake/state.json" "$victim" "$victim_start" "$(hostname)" <<'PY'
import json, sys
path, pid, start, host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
json.dump({"ociVersion": "1.2.0", "id": "x", "status": "running", "kind": "session",
           "pid": pid, "pid_start_time": start, "init_pid": pid, "init_start_time": start,
           "owner_pid": pid, "owner_start_time": start, "creator_pid": 1,
           "creator_start_time": 1, "host": host, "created_ms": 1,
           "max_lifetime_ms": 1000}, open(path, "w"))
PY
	[ "$MODE" = rootful ] || chown -R "$TEST_UID:$TEST_GID" "$OROOT/$fake"
	chmod 600 "$OROOT/$fake/state.json"
	cp -p "$OROOT/$fake/state.json" "$target/state.json"
	ln -s "$target" "$OROOT/$link"
	[ "$MODE" = rootful ] || chown -h "$TEST_UID:$TEST_GID" "$OROOT/$link"
	oc sweep
	expect_rc 0
	check "the process a forged state names is alive" kill -0 "$victim"
	check "the symlinked entry's target is intact" test -e "$target/state.json"
	kill -9 "$victim"
	wait "$victim" 2>/dev/null
	rm -rf "${OROOT:?}/$fake" "${OROOT:?}/$link"
	end_session_case
}

# process.json is held to what create could grant: a capability beyond
# the safe set written there makes every exec fail, never run with it.
t_exec_forged_process() {
	setup_case
	screate --name "$CASE_ID-c" --no-workspace "$ROOTFS" || { end_session_case; return; }
	"$PYTHON" - "$OROOT/$SID/process.json" <<'PY' || fail "editing process.json"
import json, os, sys
path = sys.argv[1]
p = json.load(open(path))
p["caps"] |= 1 << 21  # CAP_SYS_ADMIN
st = os.stat(path)
with open(path + ".edit", "w") as f:
    json.dump(p, f)
os.chown(path + ".edit", st.st_uid, st.st_gid)
os.chmod(path + ".edit", 0o600)
os.rename(path + ".edit", path)
PY
	oc exec "$SID" -- true
	expect_cordon_error STATE "caps beyond the safe set"
	oc rm "$SID"
	expect_rc 0
	end_session_case
}

# The bounded sweep at every start never blocks it and never touches a
# live session of another run: junk in the root (a fifo for state.json,
# an unreadable state, a stale empty entry) and a live session, then a run.
# Only root and the session's own user may speak to its monitor. A rootful
# sandbox whose workspace holds the state root can reach the monitor's
# socket (its files are host root's there, through the idmapped mount):
# its STOP is closed unanswered and the session lives on.
t_monitor_peer_refused() {
	local prootfs=$CASE_DIR/prootfs
	setup_case
	if [ -z "${SEC_PROBE:-}" ]; then
		skip_or_fail "no sec-probe in this build (SEC_PROBE is not set)"
		end_case
		return
	fi
	copy_rootfs "$prootfs" || { end_case; return; }
	cp "$SEC_PROBE" "$prootfs/bin/probe"
	screate --name "$CASE_ID-v" --no-workspace "$ROOTFS" || { end_session_case; return; }
	# (Its own state root elsewhere: one below its workspace is refused, e2e-state.)
	cordon --root "$E2E_TMP/aroot.$CASE_ID" run --workspace "$CASE_DIR" "$prootfs" -- \
		/bin/probe "unix-req:/workspace/root/$SID/monitor.sock:5"
	expect_rc 0
	# Closed before or after the request was sent: no answer either way.
	[[ $OUT == *=ok* ]] && fail "the monitor answered another user's request: $OUT"
	oc exec "$SID" -- echo "$MARK"
	expect_rc 0
	expect_out_eq "$MARK"
	# A workload with the trusted uid (--userns host: host uid 0, no
	# capability) that reaches the socket through a host mount the path
	# checks cannot see (the state root bound below its workspace): its
	# pid namespace is not the supervisor's, and it is closed unanswered.
	mk_dir "$CASE_DIR/wsb/st"
	if mount --bind "$OROOT" "$CASE_DIR/wsb/st"; then
		cordon --root "$E2E_TMP/aroot.$CASE_ID" run --userns host --workspace "$CASE_DIR/wsb" \
			"$prootfs" -- /bin/probe "unix-req:/workspace/st/$SID/monitor.sock:5"
		umount "$CASE_DIR/wsb/st"
		expect_rc 0
		[[ $OUT == *=ok* ]] && fail "the monitor answered a workload's request: $OUT"
		oc exec "$SID" -- echo "$MARK"
		expect_rc 0
		expect_out_eq "$MARK"
	else
		fail "could not bind the state root below a workspace"
	fi
	oc delete -f "$SID"
	end_session_case
}

t_start_sweep_safe() {
	setup_case
	screate --name "$CASE_ID-o" --no-workspace "$ROOTFS" || { end_session_case; return; }
	mk_dir "$OROOT/$CASE_ID-j1" "$OROOT/$CASE_ID-j2"
	chmod 700 "$OROOT/$CASE_ID-j1" "$OROOT/$CASE_ID-j2"
	mkfifo -m 600 "$OROOT/$CASE_ID-j1/state.json"
	echo '{not json' >"$OROOT/$CASE_ID-j2/state.json"
	[ "$MODE" = rootful ] || chown -R "$TEST_UID:$TEST_GID" "$OROOT/$CASE_ID-j1" "$OROOT/$CASE_ID-j2"
	next_id
	oc run --name "$ID" --no-workspace "$ROOTFS" -- echo "$MARK"
	expect_rc 0
	expect_out_eq "$MARK"
	oc exec "$SID" -- true
	expect_rc 0
	check "the live session is untouched" test -e "$OROOT/$SID/state.json"
	check "an unreadable entry is kept" test -e "$OROOT/$CASE_ID-j2/state.json"
	oc rm "$SID"
	expect_rc 0
	rm -rf "${OROOT:?}/$CASE_ID-j1" "${OROOT:?}/$CASE_ID-j2"
	end_session_case
}

each_mode "a session: the workspace and /tmp persist across execs, rm removes it" t_workspace_persists
each_mode "labels: list filters by K=V and K, JSON shows labels and owner" t_labels_filter
each_mode "bad labels and lifetimes: 125, named, nothing left" t_bad_inputs
each_mode "--max-lifetime ends the session" t_lifetime_cap
each_mode "--idle-timeout ends the session, never while an exec runs" t_idle_timeout
each_mode "--idle-timeout counts an exec its monitor has not heard yet" t_idle_exec_unheard
each_mode "--idle-timeout: twelve execs at once, none lost" t_idle_many_execs
each_mode "sweep ends a session whose owner was SIGKILLed, keeps a live owner's; --dry-run" t_sweep_owner_killed
each_mode "sweep: a reused owner pid (other start time) is not the owner" t_sweep_pid_reuse
each_mode "sweep removes what a SIGKILLed session monitor left" t_sweep_monitor_killed
each_mode "sweep: --owner PID is the owner, --owner none has none" t_sweep_owner_flag
each_mode "sweep: another host's entry ages out only" t_sweep_other_host
each_mode "sweep: forged states signal no process, links are not followed" t_sweep_forged
each_mode "exec: a forged process.json granting a capability beyond the safe set is refused" t_exec_forged_process
each_mode "the sweep at start: junk entries do not block it, a live session stays" t_start_sweep_safe
rootful_only "a workload that reaches a session's monitor socket cannot stop it" t_monitor_peer_refused
done_testing
