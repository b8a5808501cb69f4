#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the OCI commands that act on a live container through its cgroups
# (docs/oci.md): ps, pause, resume, update; the global --systemd-cgroup
# and --rootless; the network annotations' refusals (their effect is
# tested in the lab, net-oci.sh).
#
# As in e2e-oci.sh, each case has its own state root, empty at its end.
# Rootless on cgroup v1 and hybrid no cgroup is delegated: there pause,
# resume and update fail with CORDON_E_CGROUP, and ps lists the
# container's pid namespace.
. "$(dirname "$0")/oci-lib.sh"

program_running() { [ -n "$(procs_matching "$MARK")" ]; }

end_case() {
	oc delete --force "$CID" >/dev/null
	check "the state root $OROOT is empty" root_empty
}

# Clients of the monitor's control socket that connect and say nothing:
# the monitor waited up to a second in recv for each, one after another,
# so 20 of them held `cordon start` (queued behind them) for 9 s or more.
# Now a connection is read only when its request is there.
t_silent_monitor_clients() {
	local sock holder i elapsed
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c "sleep 30; echo $MARK" || return 1
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return 1
	sock=$OROOT/$CID/monitor.sock
	[ -S "$sock" ] || { fail "expected the control socket $sock"; return 1; }
	"${USER_PREFIX[@]}" /usr/bin/python3 -c '
import socket, sys, time
held = []
for i in range(20):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    held.append(c)
print("held", flush=True)
time.sleep(60)
' "$sock" >"$CASE_DIR/held" 2>&1 &
	holder=$!
	for ((i = 0; i < 600; i++)); do
		grep -qx held "$CASE_DIR/held" && break
		sleep 0.05
	done
	SECONDS=0
	oc start "$CID"
	elapsed=$SECONDS
	expect_rc 0
	expect_status "$CID" running
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	[ "$elapsed" -lt 5 ] || fail "cordon start took ${elapsed} s behind 20 silent clients (expected well under 5 s)"
	end_case
}

# A v2 machine may delegate cgroups to the test user; v1 and hybrid never do.
# Rootless: cgroup v2, and the cgroup the test user's cordon starts in (this
# script's: runuser does not move it) is delegated to the user (a process
# in the root cgroup, as on a machine without systemd, has no delegation).
cgroups_delegated() {
	local cg
	[ "$MODE" = rootful ] && return 0
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || return 1
	cg=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup)
	as_user test -w "/sys/fs/cgroup${cg%/}/cgroup.procs"
}

# start_busy: a created and started container whose workload is a shell
# loop that burns CPU ($MARK on its command line); CID, PID.
start_busy() {
	CID=$CASE_ID-c
	mk_bundle b sh -c "while :; do :; done; echo $MARK" || return 1
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return 1
	oc start "$CID"
	expect_rc 0 || return 1
	expect_status "$CID" running
	PID=$(user_process)
}

# CPU ticks (utime + stime) of PID.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# The container's cgroup directory in the hierarchy carrying FILE.
cg_dir_with() {
	local d
	while read -r d; do
		[ -e "$d/$1" ] && { echo "$d"; return 0; }
	done <"$OROOT/$CID/cgroups"
	return 1
}

t_ps() {
	setup_case
	start_busy || return
	oc ps --format json "$CID"
	expect_rc 0
	[[ $OUT =~ ^\[[0-9,]+\]$ ]] || fail "expected a JSON array of pids, got '$OUT'"
	[[ ",${OUT//[\[\]]/}," == *",$PID,"* ]] || fail "expected the container process $PID in ps"
	oc ps "$CID"
	expect_rc 0
	expect_out_has "PID"
	grep -Eq "^$PID +sh -c while :; do :; done; echo $MARK\$" <<<"$OUT" ||
		fail "expected a table line for $PID with its command"
	oc ps -f yaml "$CID"
	expect_cordon_error USAGE "--format"
	oc ps "$CASE_ID-none"
	expect_cordon_error STATE "$CASE_ID-none"
	oc kill "$CID" KILL
	expect_rc 0
	wait_until "$WAIT_LIMIT" eval '[ "$(oc state "$CID" >/dev/null; jfield status)" = stopped ]' ||
		fail "the container did not stop"
	oc ps "$CID"
	expect_cordon_error STATE "stopped"
	end_case
}

t_pause_resume() {
	local t0 t1
	setup_case
	start_busy || return
	oc resume "$CID"
	expect_cordon_error STATE "running"
	oc pause "$CID"
	if ! cgroups_delegated; then
		expect_cordon_error CGROUP "freezer"
		expect_status "$CID" running
		end_case
		return
	fi
	expect_rc 0
	expect_err_empty "pause printed something"
	expect_status "$CID" paused
	oc list
	expect_rc 0
	grep -Eq "^$CID +[0-9]+ +paused " <<<"$OUT" || fail "expected list to say paused"
	# A frozen busy loop makes no progress.
	t0=$(ticks "$PID")
	sleep 0.5
	t1=$(ticks "$PID")
	[ -n "$t0" ] && [ "$t0" = "$t1" ] || fail "the busy loop ran while paused ($t0 -> $t1 ticks)"
	oc pause "$CID"
	expect_cordon_error STATE "paused"
	oc start "$CID"
	expect_cordon_error STATE "paused"
	oc delete "$CID"
	expect_cordon_error STATE "delete --force"
	oc resume "$CID"
	expect_rc 0
	expect_status "$CID" running
	sleep 0.5
	t1=$(ticks "$PID")
	[ "$t1" -gt "$t0" ] 2>/dev/null || fail "the busy loop did not resume ($t0 -> $t1 ticks)"
	# Paused again, delete --force ends it: the frozen init is thawed to die.
	oc pause "$CID"
	expect_rc 0
	oc delete --force "$CID"
	expect_rc 0
	wait_until "$WAIT_LIMIT" eval '! program_running' || fail "the workload survived delete --force"
	end_case
}

t_pause_created() {
	setup_case
	CID=$CASE_ID-c
	cgroups_delegated || { skip_layout "no freezer cgroup rootless on this layout"; return; }
	mk_bundle b sh -c "echo $MARK" || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0
	oc pause "$CID"
	expect_rc 0
	expect_status "$CID" paused
	oc resume "$CID"
	expect_rc 0
	expect_status "$CID" created
	end_case
}

t_update() {
	local mem pids cpu
	setup_case
	start_busy || return
	oc update --memory 64m --pids-limit 20 "$CID"
	if ! cgroups_delegated; then
		expect_cordon_error CGROUP "no memory cgroup"
		end_case
		return
	fi
	expect_rc 0
	mem=$(cg_dir_with memory.limit_in_bytes || cg_dir_with memory.max)
	pids=$(cg_dir_with pids.max)
	cpu=$(cg_dir_with cpu.cfs_quota_us || cg_dir_with cpu.max)
	[ "$(cat "$mem/memory.limit_in_bytes" 2>/dev/null || cat "$mem/memory.max")" = 67108864 ] ||
		fail "expected the memory limit 67108864 in $mem"
	[ "$(cat "$pids/pids.max")" = 20 ] || fail "expected pids.max 20 in $pids"
	oc update --cpu-quota 20000 --cpu-period 100000 --cpu-share 512 "$CID"
	expect_rc 0
	if [ -e "$cpu/cpu.cfs_quota_us" ]; then
		[ "$(cat "$cpu/cpu.cfs_quota_us") $(cat "$cpu/cpu.cfs_period_us") $(cat "$cpu/cpu.shares")" = "20000 100000 512" ] ||
			fail "expected quota 20000, period 100000, shares 512 in $cpu"
	else
		[ "$(cat "$cpu/cpu.max")" = "20000 100000" ] || fail "expected cpu.max '20000 100000'"
	fi
	echo '{"pids": {"limit": -1}, "memory": {"limit": 134217728}}' >"$CASE_DIR/res.json"
	oc update --resources "$CASE_DIR/res.json" --memory 96m "$CID"
	expect_rc 0
	[ "$(cat "$pids/pids.max")" = max ] || fail "expected pids.max max after pids.limit -1"
	[ "$(cat "$mem/memory.limit_in_bytes" 2>/dev/null || cat "$mem/memory.max")" = 100663296 ] ||
		fail "expected --memory 96m to win over the file"
	# Refused before anything is written.
	oc update --memory-swap 16m --memory 32m "$CID"
	expect_cordon_error USAGE "--memory-swap"
	oc update --pids-limit 0 "$CID"
	expect_cordon_error USAGE "--pids-limit"
	oc update --cpu-quota 10 "$CID"
	expect_cordon_error USAGE "--cpu-quota"
	oc update --cpu-period 5000000 "$CID"
	expect_cordon_error USAGE "--cpu-period"
	oc update --cpuset-cpus 0 "$CID"
	expect_cordon_error USAGE "--pids-limit"
	oc update "$CID"
	expect_cordon_error USAGE "nothing to change"
	echo '{"cpu": {"shares": 1}}' >"$CASE_DIR/bad.json"
	oc update -r "$CASE_DIR/bad.json" "$CID"
	expect_cordon_error SPEC "linux.resources.cpu.shares"
	[ "$(cat "$pids/pids.max")" = max ] || fail "a refused update changed pids.max"
	oc kill "$CID" KILL
	expect_rc 0
	wait_until "$WAIT_LIMIT" eval '[ "$(oc state "$CID" >/dev/null; jfield status)" = stopped ]'
	oc update --pids-limit 5 "$CID"
	expect_cordon_error STATE "stopped"
	end_case
}

# The workload waits for SIGUSR1 (after the update), then starts 20 sleeps:
# beyond pids.max 8 fork fails (and ends the subshell that forks: busybox
# sh gives up). Its files are read through /proc/PID/root.
# PID has a handler for SIGUSR1 (bit 10 of SigCgt).
catches_usr1() {
	local m
	m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$PID/status" 2>/dev/null)
	[ -n "$m" ] && (((16#$m >> 9) & 1))
}

t_update_pids_enforced() {
	local n
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c "trap 'go=1' USR1; while [ -z \"\$go\" ]; do sleep 0.05; done
		(i=0; while [ \$i -lt 20 ]; do sleep 30 & i=\$((i + 1)); done) 2>/dev/shm/err
		touch /dev/shm/done; sleep 60; echo $MARK" || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0
	oc start "$CID"
	expect_rc 0
	expect_status "$CID" running
	PID=$(user_process)
	oc update --pids-limit 8 "$CID"
	expect_rc 0
	wait_until "$WAIT_LIMIT" catches_usr1 || fail "the workload did not set its trap"
	oc kill "$CID" USR1
	expect_rc 0
	wait_until "$WAIT_LIMIT" test -e "/proc/$PID/root/dev/shm/done" || fail "the workload did not finish forking"
	grep -q "fork" "/proc/$PID/root/dev/shm/err" 2>/dev/null ||
		fail "expected fork to fail beyond the limit: $(cat "/proc/$PID/root/dev/shm/err" 2>&1)"
	oc ps --format json "$CID"
	n=$(tr -cd , <<<"$OUT" | wc -c)
	[ $((n + 1)) -le 8 ] || fail "expected at most 8 processes, ps says $OUT"
	end_case
}

t_global_flags() {
	setup_case
	CID=$CASE_ID-c
	cordon --systemd-cgroup --root "$OROOT" list
	expect_cordon_error CGROUP "systemd cgroup manager is not supported: use cgroupfs"
	cordon --root "$OROOT" --systemd-cgroup state "$CID"
	expect_cordon_error CGROUP "use cgroupfs"
	cordon --rootless maybe --root "$OROOT" list
	expect_cordon_error USAGE "--rootless"
	for v in auto true false; do
		cordon --rootless "$v" --root "$OROOT" list -q
		expect_rc 0
	done
	mk_bundle b sh -c "exit 3" || return
	cordon --rootless=auto --root "$OROOT" run --bundle "$BUNDLE" "$CID"
	expect_rc 3
	end_case
}

# What containerd's shim relies on (tests/compat/containerd.sh drives the
# shim itself): a --root whose parents do not exist yet, warnings in the
# --log file only (create's stderr is the container's; --debug lines
# too), kill of a stopped
# container worded as runc ("container not running"), delete --force of
# a container that is gone succeeding.
t_launcher_conventions() {
	local log=$CASE_DIR/log.json
	setup_case
	CID=$CASE_ID-c
	OROOT=$CASE_DIR/runc/namespace
	mk_bundle b sh -c 'echo out' || return
	"$PYTHON" - "$BUNDLE/config.json" <<'PY' || fail "editing config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["apparmorProfile"] = "cordon-e2e"
json.dump(c, open(sys.argv[1], "w"))
PY
	cordon --root "$OROOT" --log "$log" --log-format json --debug run --bundle "$BUNDLE" "$CID"
	expect_rc 0
	expect_out_eq out
	expect_err_empty "with --log, a warning or a debug line belongs in the log, not on stderr"
	[ "$(stat -c %a "$CASE_DIR/runc")" = 700 ] || fail "--root's missing parent is not 0700"
	"$PYTHON" - "$log" <<'PY' 2>&1 || fail "the --log file does not hold the warning as a JSON line"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert any(r["level"] == "warning" and "apparmorProfile" in r["msg"] for r in lines), lines
assert any(r["level"] == "debug" and r["msg"].startswith("command: run --bundle ") for r in lines), lines
assert any(r["level"] == "debug" and r["msg"] == "run: exit status 0" for r in lines), lines
PY
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return
	oc start "$CID"
	wait_stopped "$CID"
	oc kill "$CID" KILL
	expect_cordon_error STATE "container not running"
	oc delete "$CID"
	expect_rc 0
	oc delete --force "$CID"
	expect_rc 0 "delete --force of a container that is gone must succeed"
	expect_err_empty
	oc delete "$CID"
	expect_cordon_error STATE "does not exist"
	end_case
}

# --pid-file in a shared directory (sticky and everyone's, as /tmp), where
# the other party -- the test user against root, root against the test
# user -- planted a fifo and hard links at the names the old code wrote
# first (PATH.cordon-tmp, opened by name with O_TRUNC, then renamed): a
# fifo there hung create forever (the container stayed created), a hard
# link had the caller truncate and write the victim and made the pid file
# the other party's file. create, exec and run --bundle write a new file
# of their own (the victim untouched), and the directory is reached by
# the host-path walk: rootful, a link of the test user's to /etc is
# refused before anything is created. A pid file that cannot be written
# (a directory at its name) still leaves no container behind.
t_pid_file_planted() {
	local sh=$CASE_DIR/shared victim n owner=0
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sleep "$MARK" || return
	install -d -m 1777 "$sh"
	victim=$sh/victim
	echo "victim-$MARK" >"$victim"
	if [ "$MODE" = rootful ]; then
		chown "$TEST_UID:$TEST_GID" "$victim"
		chmod 644 "$victim"
		as_user mkfifo "$sh/pid.cordon-tmp" "$sh/rpid.cordon-tmp"
		as_user ln "$victim" "$sh/epid.cordon-tmp"
	else
		owner=$TEST_UID
		chmod 666 "$victim"
		mkfifo -m 666 "$sh/pid.cordon-tmp" "$sh/rpid.cordon-tmp"
		ln "$victim" "$sh/epid.cordon-tmp"
	fi
	oc create --bundle "$BUNDLE" --pid-file "$sh/pid" "$CID"
	expect_rc 0 || return
	oc state "$CID"
	[ "$(cat "$sh/pid" 2>/dev/null)" = "$(jfield pid)" ] || fail "create's --pid-file does not hold the state's pid"
	[ -f "$sh/pid" ] && [ "$(stat -c %u "$sh/pid")" = "$owner" ] ||
		fail "create's --pid-file is not a file of the caller's"
	oc start "$CID"
	expect_rc 0
	oc exec -d --pid-file "$sh/epid" "$CID" sleep "$((MARK + 1))"
	expect_rc 0
	[ "$(cat "$victim")" = "victim-$MARK" ] || fail "the victim was written: $(cat "$victim")"
	[ "$(stat -c %i "$sh/epid")" != "$(stat -c %i "$victim")" ] || fail "exec's --pid-file is the victim"
	[ "$(stat -c %u "$sh/epid")" = "$owner" ] || fail "exec's --pid-file is not a file of the caller's"
	n=$(cat "$sh/epid" 2>/dev/null)
	[[ "$(tr '\0' ' ' <"/proc/${n:-0}/cmdline" 2>/dev/null)" == *"sleep $((MARK + 1))"* ]] ||
		fail "exec's --pid-file does not name its process: '$n'"
	mk_bundle b2 true || return
	oc run --bundle "$BUNDLE" --pid-file "$sh/rpid" "$CASE_ID-r"
	expect_rc 0
	[ -f "$sh/rpid" ] || fail "run --bundle wrote no --pid-file"
	oc create --bundle "$BUNDLE" --pid-file "$CASE_DIR" "$CASE_ID-d"
	expect_cordon_error PATH "--pid-file"
	oc state "$CASE_ID-d"
	expect_cordon_error STATE "does not exist"
	if [ "$MODE" = rootful ]; then
		as_user ln -s /etc "$sh/lnk"
		oc create --bundle "$BUNDLE" --pid-file "$sh/lnk/cordon-pid-$MARK" "$CASE_ID-l"
		expect_cordon_error PATH "unsafe ownership transition"
		[ ! -e "/etc/cordon-pid-$MARK" ] || { rm -f "/etc/cordon-pid-$MARK"; fail "the pid file went to /etc"; }
		oc state "$CASE_ID-l"
		expect_cordon_error STATE "does not exist"
	fi
	[ "$(cat "$victim")" = "victim-$MARK" ] || fail "the victim was written: $(cat "$victim")"
	end_case
}

# --log FILE is opened by whoever runs cordon (host root when rootful),
# often where others can add names: a fifo there is never opened (the
# binary before blocked for good in the open), a symlink or a second name
# (a hard link, which anyone could have made in a sticky directory) is
# refused, the file they name untouched, and so is a third user's file
# there (fs.protected_regular's rule); a regular file is appended to, a
# missing one made 0600.
t_log_planted() {
	local sticky=$CASE_DIR/sticky victim=$CASE_DIR/victim
	setup_case
	CID=$CASE_ID-c
	mkdir -m 1777 "$sticky"
	echo "victim-$MARK" >"$victim"
	chmod 666 "$victim"
	mkfifo -m 666 "$sticky/fifo.log"
	ln -s "$victim" "$sticky/link.log"
	ln "$victim" "$sticky/hard.log"
	echo "planted-$MARK" >"$sticky/planted.log"
	chmod 666 "$sticky/planted.log"
	chown -h "$(other_uid)" "$sticky/fifo.log" "$sticky/link.log" "$sticky/planted.log"
	oc --log "$sticky/fifo.log" list -q
	expect_cordon_error USAGE "not a regular file (a fifo)"
	[ "$LAST_MS" -lt 10000 ] || fail "--log on a fifo took ${LAST_MS} ms"
	oc --log "$sticky/link.log" --debug list -q
	expect_cordon_error USAGE "not a regular file (a symbolic link)"
	oc --log "$sticky/hard.log" --debug list -q
	expect_cordon_error PATH "'hard.log' has 2 names"
	[ "$(cat "$victim")" = "victim-$MARK" ] || fail "the victim was written: $(cat "$victim")"
	# A third user's file (fs.protected_regular's rule): it would read the lines.
	oc --log "$sticky/planted.log" --debug list -q
	expect_cordon_error PATH "'planted.log' belongs to uid $(other_uid), neither the caller nor the directory's owner"
	[ "$(cat "$sticky/planted.log")" = "planted-$MARK" ] || fail "the planted file was written: $(cat "$sticky/planted.log")"
	# The caller's own file, open to others: anyone who could move it
	# there (a rename keeps its owner) would read the lines; 0600 is used.
	: >"$sticky/mine.log"
	chown "$(mode_uid)" "$sticky/mine.log"
	chmod 644 "$sticky/mine.log"
	oc --log "$sticky/mine.log" --debug list -q
	expect_cordon_error PATH "'mine.log' is open to others (mode 0644)"
	[ ! -s "$sticky/mine.log" ] || fail "the file open to others was written"
	chmod 600 "$sticky/mine.log"
	oc --log "$sticky/mine.log" --debug list -q
	expect_rc 0
	grep -q 'command: ' "$sticky/mine.log" || fail "the caller's own 0600 file in the shared directory holds no debug line"
	oc --log "$CASE_DIR/new.log" --debug list -q
	expect_rc 0
	[ "$(stat -c %u:%a "$CASE_DIR/new.log")" = "$(mode_uid):600" ] || fail "the new --log is not the caller's, 0600"
	grep -q 'command: ' "$CASE_DIR/new.log" || fail "the new --log holds no debug line"
	echo "before-$MARK" >>"$CASE_DIR/new.log"
	oc --log "$CASE_DIR/new.log" --debug list -q
	expect_rc 0
	grep -q "before-$MARK" "$CASE_DIR/new.log" || fail "--log did not append"
	end_case
}

# A launcher that starts cordon with fd 0, 1 or 2 closed: cordon's own
# files (host root's --log, the trace, the audit log) took the free
# number, and the monitor passed what held it on to the container as its
# stdio, where the workload wrote into them. Now a closed one is
# /dev/null, the container's stdio as the caller left it.
t_closed_stdio() {
	local n logs=$CASE_DIR/logs _argv
	setup_case
	mk_dir "$logs"
	mk_bundle b sh -c "for f in 0 1 2; do echo FORGED-$MARK-\$f >&\$f; done" || return
	for n in 0 1 2; do
		CID=$CASE_ID-c$n
		XENV=("CORDON_TRACE=$logs/trace-$n" "CORDON_AUDIT=$logs/audit-$n.jsonl")
		_cordon_argv --root "$OROOT" --log "$logs/log-$n" create --bundle "$BUNDLE" "$CID"
		XENV=()
		case $n in
		0) "${_argv[@]}" <&- >/dev/null 2>"$CASE_DIR/err" ;;
		1) "${_argv[@]}" </dev/null >&- 2>"$CASE_DIR/err" ;;
		2) "${_argv[@]}" </dev/null >/dev/null 2>&- ;;
		esac
		[ $? -eq 0 ] || { fail "create with fd $n closed: $(cat "$CASE_DIR/err" 2>/dev/null)"; return; }
		oc start "$CID"
		expect_rc 0 || return
		wait_stopped "$CID"
		oc delete "$CID"
		expect_rc 0 || return
		check "fd $n closed: the workload wrote nothing into cordon's files" \
			test -z "$(grep -l "FORGED-$MARK-[0-2]" "$logs"/*-$n* 2>/dev/null)" || return
	done
	# A directory as stdin: a handle on the host's tree outside the root.
	CID=$CASE_ID-dir
	_cordon_argv --root "$OROOT" create --bundle "$BUNDLE" "$CID"
	"${_argv[@]}" <"$CASE_DIR" >/dev/null 2>"$CASE_DIR/err"
	[ $? -eq 125 ] && grep -qF "CORDON_E_USAGE: fd 0 is a directory" "$CASE_DIR/err" ||
		{ fail "create with a directory as stdin: $(cat "$CASE_DIR/err")"; oc delete --force "$CID"; return; }
	# A closed fd where /dev/null is not the null device (a file mounted
	# over it, in a mount namespace of the test's): refused, not written.
	if [ "$MODE" = rootful ]; then
		: >"$CASE_DIR/fake-null"
		unshare -m sh -c 'mount --bind "$1" /dev/null && exec "$2" --root "$3" list -q <&-' \
			_ "$CASE_DIR/fake-null" "$CORDON" "$OROOT" >/dev/null 2>"$CASE_DIR/err"
		[ $? -eq 125 ] && grep -qF "fd 0 was closed and /dev/null is not the null device" "$CASE_DIR/err" ||
			{ fail "a closed fd 0 with a file at /dev/null: $(cat "$CASE_DIR/err")"; return; }
	fi
	end_case
}

t_net_annotations_refused() {
	setup_case
	CID=$CASE_ID-c
	ANNOTATIONS='{"run.cordon.net.allow": "*"}' mk_bundle b1 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.net.allow: allowlist entry '*'"
	ANNOTATIONS='{"run.cordon.net.allow": "example.org", "netns-path": 1}' mk_bundle b2 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.net.allow: the network namespace is joined by path"
	ANNOTATIONS='{"run.cordon.dns": "none"}' mk_bundle b3 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.dns: needs run.cordon.net.allow"
	ANNOTATIONS='{"run.cordon.net.allow": "example.org", "run.cordon.dns": "maybe"}' mk_bundle b4 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.dns: expected proxy or none"
	ANNOTATIONS='{"run.cordon.net.allow": "example.org", "run.cordon.dns.upstream": "192.0.2.1,nope"}' mk_bundle b5 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.dns.upstream: 'nope'"
	ANNOTATIONS='{"run.cordon.net.allow": "example.org", "run.cordon.dns": "none", "run.cordon.dns.upstream": "192.0.2.1"}' mk_bundle b6 true || return
	oc create --bundle "$BUNDLE" "$CID"
	expect_cordon_error SPEC "annotations.run.cordon.dns.upstream: excluded"
	# Other annotations are the launcher's business.
	ANNOTATIONS='{"run.cordon.other": "x", "io.kubernetes.cri.container-type": "container"}' mk_bundle b7 true || return
	oc run --bundle "$BUNDLE" "$CID"
	expect_rc 0
	end_case
}

# cfg_edit CODE: run Python CODE on the bundle's config as `c`, then save it.
cfg_edit() {
	"$PYTHON" - "$BUNDLE/config.json" "$1" <<'PY' || fail "editing config.json"
import json, sys
path, code = sys.argv[1], sys.argv[2]
c = json.load(open(path))
exec(code)
json.dump(c, open(path, "w"))
PY
}

# The caller's cgroup in the v1 hierarchy of CONTROLLER (or "" for cgroup2).
caller_cgroup() {
	awk -F: -v c="$1" '$2 == c || (c == "" && $1 == "0") { print $3; exit }' /proc/self/cgroup
}

# in_procs DIR PID: PID is a member of the cgroup DIR.
in_procs() { grep -qx "$2" "$1/cgroup.procs" 2>/dev/null; }

hybrid() { [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] && [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; }

# A memory limit and an absolute cgroupsPath: the container's processes are in
# /sys/fs/cgroup/memory/PATH (v1) and unified/PATH, the limit is there; the
# leaf goes with delete, the parent cordon made stays (as with runc).
t_cgroups_path_absolute() {
	local top=/e2e-cg-$CASE_ID path d
	setup_case
	CID=$CASE_ID-c
	path=$top/libpod-$MARK
	hybrid || { skip_layout "written for the hybrid layout (v1 memory, cgroup2 at unified)"; return; }
	mk_bundle b sh -c "sleep 30; echo $MARK" || return
	cfg_edit "c['linux']['cgroupsPath'] = '$path'; c['linux'].setdefault('resources', {})['memory'] = {'limit': 67108864}"
	oc create --bundle "$BUNDLE" "$CID"
	if [ "$MODE" = rootless ]; then
		# No delegation on v1: the limit asks for a cgroup the caller cannot make.
		expect_cordon_error CGROUP "creating /sys/fs/cgroup/memory$top: Permission denied"
		[ ! -e "/sys/fs/cgroup/memory$top" ] || fail "a rootless create made /sys/fs/cgroup/memory$top"
		cfg_edit "del c['linux']['resources']['memory']; c['process']['args'] = ['true']"
		oc run --bundle "$BUNDLE" "$CID" >/dev/null
		expect_rc 0 || true
		expect_err_lacks "cgroupsPath"
		end_case
		return
	fi
	expect_rc 0 || return
	expect_err_lacks "cgroupsPath"
	oc start "$CID"
	expect_rc 0
	expect_status "$CID" running
	PID=$(jfield pid)
	in_procs "/sys/fs/cgroup/memory$path" "$PID" || fail "pid $PID is not in /sys/fs/cgroup/memory$path"
	in_procs "/sys/fs/cgroup/unified$path" "$PID" || fail "pid $PID is not in /sys/fs/cgroup/unified$path"
	[ "$(cat "/sys/fs/cgroup/memory$path/memory.limit_in_bytes")" = 67108864 ] ||
		fail "expected memory.limit_in_bytes 67108864 at $path"
	grep -qx "/sys/fs/cgroup/memory$path" "$OROOT/$CID/cgroups" || fail "the state does not record the memory cgroup"
	# update, pause and kill --all find it through the state.
	oc update --pids-limit 30 "$CID"
	expect_rc 0
	[ "$(cat "/sys/fs/cgroup/pids$path/pids.max")" = 30 ] || fail "update did not reach /sys/fs/cgroup/pids$path"
	oc pause "$CID"
	expect_rc 0
	[ "$(cat "/sys/fs/cgroup/freezer$path/freezer.state")" = FROZEN ] || fail "pause did not freeze $path"
	oc resume "$CID"
	expect_rc 0
	# Another container at the same path is refused while this one lives there.
	oc create --bundle "$BUNDLE" "$CID-2"
	expect_cordon_error CGROUP "is in use"
	oc kill --all "$CID" KILL
	expect_rc 0
	wait_stopped "$CID"
	oc delete "$CID"
	expect_rc 0
	for d in /sys/fs/cgroup/*"$path"; do
		[ -e "$d" ] && fail "$d remains after delete"
	done
	[ -d "/sys/fs/cgroup/memory$top" ] || fail "the parent /sys/fs/cgroup/memory$top was removed"
	for d in /sys/fs/cgroup/*"$top"; do rmdir "$d" 2>/dev/null; done
	end_case
}

# A relative cgroupsPath is below the caller's cgroup of each hierarchy.
t_cgroups_path_relative() {
	local rel=e2e-cg-$CASE_ID/ctr base
	setup_case
	CID=$CASE_ID-c
	hybrid || { skip_layout "written for the hybrid layout"; return; }
	mk_bundle b sh -c "sleep 30; echo $MARK" || return
	cfg_edit "c['linux']['cgroupsPath'] = '$rel'"
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return
	PID=$(oc state "$CID" >/dev/null; jfield pid)
	base=$(caller_cgroup memory)
	in_procs "/sys/fs/cgroup/memory${base%/}/$rel" "$PID" ||
		fail "pid $PID is not in /sys/fs/cgroup/memory${base%/}/$rel (the caller's memory cgroup is $base)"
	base=$(caller_cgroup pids)
	in_procs "/sys/fs/cgroup/pids${base%/}/$rel" "$PID" || fail "pid $PID is not in /sys/fs/cgroup/pids${base%/}/$rel"
	oc delete --force "$CID"
	expect_rc 0
	[ ! -e "/sys/fs/cgroup/memory$(caller_cgroup memory)/$rel" ] || fail "the leaf remains after delete"
	for d in /sys/fs/cgroup/*; do
		base=$(caller_cgroup "$(basename "$d")")
		[ "$d" = /sys/fs/cgroup/unified ] && base=$(caller_cgroup "")
		rmdir "$d${base%/}/e2e-cg-$CASE_ID" 2>/dev/null
	done
	end_case
}

# The rest of linux.resources at create: cpu.shares, cpuset, memory.reservation.
t_resources_at_create() {
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c "sleep 30; echo $MARK" || return
	cfg_edit "c['linux'].setdefault('resources', {}).update({'cpu': {'shares': 512, 'cpus': '0', 'mems': '0'}, 'memory': {'reservation': 33554432}})"
	oc create --bundle "$BUNDLE" "$CID"
	if ! cgroups_delegated; then
		expect_cordon_error CGROUP "linux.resources"
		end_case
		return
	fi
	expect_rc 0 || return
	expect_err_lacks "linux.resources"
	PID=$(oc state "$CID" >/dev/null; jfield pid)
	if [ -e "$(cg_dir_with cpu.shares)" ]; then
		[ "$(cat "$(cg_dir_with cpu.shares)/cpu.shares")" = 512 ] || fail "expected cpu.shares 512"
		[ "$(cat "$(cg_dir_with memory.soft_limit_in_bytes)/memory.soft_limit_in_bytes")" = 33554432 ] ||
			fail "expected memory.soft_limit_in_bytes 33554432"
	else
		[ "$(cat "$(cg_dir_with cpu.weight)/cpu.weight")" = 20 ] || fail "expected cpu.weight 20 (shares 512)"
		[ "$(cat "$(cg_dir_with memory.low)/memory.low")" = 33554432 ] || fail "expected memory.low 33554432"
	fi
	[ "$(cat "$(cg_dir_with cpuset.cpus)/cpuset.cpus")" = 0 ] || fail "expected cpuset.cpus 0"
	in_procs "$(cg_dir_with cpuset.cpus)" "$PID" || fail "the container is not in its cpuset"
	[ "$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$PID/status")" = 0 ] ||
		fail "the container may run on CPUs $(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$PID/status"), not 0"
	end_case
}

# Device rules at create: podman's deny-all keeps cordon's /dev working; a
# rule denying /dev/null by name is enforced. Rootless (no devices cgroup
# on v1), also as root of a user namespace: skipped with a warning, as runc
# does.
t_devices_at_create() {
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c 'echo x >/dev/null && echo null-ok; [ "$(head -c 3 /dev/zero | wc -c)" = 3 ] && echo zero-ok' || return
	cfg_edit "c['linux'].setdefault('resources', {})['devices'] = [{'allow': False, 'access': 'rwm'}]"
	oc run --bundle "$BUNDLE" "$CID"
	expect_rc 0
	expect_out_has "null-ok"
	expect_out_has "zero-ok"
	[ "$MODE" = rootless ] && ! cgroups_delegated && expect_err_has "linux.resources.devices: not applied (rootless"
	# Root of a user namespace is rootless too (rootless buildah and podman
	# run the runtime so): the rules are skipped, not a failure.
	if [ "$MODE" = rootless ] && ! cgroups_delegated; then
		local USER_PREFIX
		_user_prefix
		# Its ids are the namespace's: config maps must name them (1001 is one there).
		run "${USER_PREFIX[@]}" unshare --map-root-user --map-auto \
			"$CORDON" --root "$OROOT" run --bundle "$BUNDLE" "$CID"
		expect_rc 0
		expect_out_has "null-ok"
		expect_err_has "linux.resources.devices: not applied (rootless"
		cfg_edit "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 5000000, 'size': 1}]"
		run "${USER_PREFIX[@]}" unshare --map-root-user --map-auto \
			"$CORDON" --root "$OROOT" run --bundle "$BUNDLE" "$CID"
		expect_rc 125
		expect_err_has "not ids of cordon's own user namespace"
		# Without maps (as rootless podman's and buildah's configs), its own ids.
		cfg_edit "del c['linux']['uidMappings']; del c['linux']['gidMappings']"
		run "${USER_PREFIX[@]}" unshare --map-root-user --map-auto \
			"$CORDON" --root "$OROOT" run --bundle "$BUNDLE" "$CID"
		expect_rc 0
		expect_out_has "null-ok"
	fi
	cfg_edit "c['linux']['resources']['devices'].append({'allow': False, 'type': 'c', 'major': 1, 'minor': 3, 'access': 'rwm'})"
	oc run --bundle "$BUNDLE" "$CID"
	if [ "$MODE" = rootless ] && ! cgroups_delegated; then
		expect_out_has "null-ok"
		end_case
		return
	fi
	expect_out_lacks "null-ok"
	expect_out_has "zero-ok"
	expect_err_has "/dev/null: Operation not permitted"
	end_case
}

# start_sleeping: a created and started container whose workload sleeps ($MARK); CID, PID.
start_sleeping() {
	CID=$CASE_ID-c
	mk_bundle b sh -c "sleep 600; echo $MARK" || return 1
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return 1
	oc start "$CID"
	expect_rc 0 || return 1
	expect_status "$CID" running
	PID=$(user_process)
}

# Every command on a container waits for its lock while another holds it
# (here a python flock, as a command stuck elsewhere would): SIGTERM ends each
# wait at once, with the reason, and leaves the container as it was. The
# commands died of the signal before, without a word (exec: blocked it
# and waited on).
t_interrupt_lock_waits() {
	local holder dir args
	setup_case
	start_sleeping || return
	dir=$OROOT/$CID
	"$PYTHON" -c 'import fcntl, os, sys, time
fcntl.flock(os.open(sys.argv[1], os.O_RDONLY), fcntl.LOCK_EX)
time.sleep(600)' "$dir" &
	holder=$!
	_bg_pids+=("$holder")
	wait_until "$WAIT_LIMIT" lock_held "$dir" || { fail "flock did not take the lock"; return; }
	for args in "state $CID" "ps $CID" "kill $CID WINCH" "kill --all $CID WINCH" \
		"pause $CID" "resume $CID" "update --pids-limit 100 $CID" "start $CID" \
		"delete --force $CID" "exec $CID true" "list"; do
		# shellcheck disable=SC2086 # the words of one command
		oc_bg $args
		wait_until "$WAIT_LIMIT" lock_waited "$dir" || { fail "cordon $args did not wait for the lock"; continue; }
		interrupt_bg "--root $OROOT ${args%% *}" "container $CID: waiting for its lock" ||
			_fail_raw "  (cordon $args)"
		wait_until "$WAIT_LIMIT" eval '! lock_waited "$dir"' || fail "cordon $args left a waiter on the lock"
	done
	kill "$holder"
	wait "$holder" 2>/dev/null
	expect_status "$CID" running
	[ "$(user_process)" = "$PID" ] || fail "the container's process changed"
	end_case
}

# start waits for the monitor's answer, which a startContainer hook holds
# back: SIGTERM ends the wait and releases the lock (state answers); the
# start itself goes on in the monitor.
t_interrupt_start_waits() {
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sleep "$MARK" || return
	cfg_edit "c['hooks'] = {'startContainer': [{'path': '/bin/sh', 'args': ['sh', '-c', 'sleep 600; : $MARK-hook']}]}"
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return
	oc_bg start "$CID"
	wait_until "$WAIT_LIMIT" eval '[ -n "$(procs_matching "$MARK-hook")" ]' || { fail "the hook did not run"; return; }
	interrupt_bg "--root $OROOT start" "container $CID: waiting for its monitor to start it"
	expect_status "$CID" created
	end_case
}

# delete --force waits for the monitor to finish once the init is killed;
# a monitor that does not (stopped here) holds it: SIGTERM ends the wait,
# and the state stays for another delete.
t_interrupt_delete_waits() {
	local mon init
	setup_case
	start_sleeping || return
	oc state "$CID"
	init=$(jfield pid)
	mon=$(monitor_of "$CID")
	[ -n "$mon" ] && kill -STOP "$mon" || { fail "no monitor to stop"; return; }
	oc_bg delete --force "$CID"
	wait_until "$WAIT_LIMIT" gone "$init" || fail "delete --force did not kill the init"
	interrupt_bg "--root $OROOT delete" "container $CID: waiting for its monitor to finish"
	[ -d "$OROOT/$CID" ] || fail "an interrupted delete removed the state"
	kill -CONT "$mon"
	wait_stopped "$CID"
	[ "$(jfield exitStatus)" = 137 ] || fail "expected exitStatus 137 after the init's SIGKILL"
	oc delete "$CID"
	expect_rc 0
	# A poststop hook that does not end holds delete: SIGTERM kills it.
	mk_bundle b2 true || return
	cfg_edit "c['hooks'] = {'poststop': [{'path': '/bin/sh', 'args': ['sh', '-c', 'sleep 600; : $MARK-post']}]}"
	oc create --bundle "$BUNDLE" "$CID"
	expect_rc 0 || return
	oc_bg delete --force "$CID"
	wait_until "$WAIT_LIMIT" eval '[ -n "$(procs_matching "$MARK-post")" ]' || { fail "the poststop hook did not run"; return; }
	interrupt_bg "--root $OROOT delete" "deleted, but hooks.poststop[0] /bin/sh: waiting for it (killed)"
	wait_until "$WAIT_LIMIT" eval '[ -z "$(procs_matching "$MARK-post")" ]' || fail "the poststop hook was not killed"
	[ ! -e "$OROOT/$CID" ] || fail "the container's state remains"
	end_case
}

# kill --all reaches every process of the container (the workload and one
# of exec), rootless without a cgroup too (it reached the workload alone).
# A USR1 trap in each writes a file in the container's /dev/shm.
t_kill_all_reaches_every_process() {
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c "trap 'touch /dev/shm/w' USR1; while :; do sleep 0.1; done; : $MARK" || return
	oc create --bundle "$BUNDLE" "$CID"
	oc start "$CID"
	expect_rc 0 || return
	oc state "$CID"
	PID=$(user_process)
	oc exec -d "$CID" sh -c "trap 'touch /dev/shm/e' USR1; while :; do sleep 0.1; done; : $MARK-e"
	expect_rc 0 || return
	wait_until "$WAIT_LIMIT" catches_usr1 || fail "the workload did not set its trap"
	local e
	e=$(procs_matching "$MARK-e" | grep -v "^$PID:" | head -n 1)
	e=${e%%:*}
	[ -n "$e" ] || { fail "no exec'd process"; return; }
	PID=$e wait_until "$WAIT_LIMIT" catches_usr1 || fail "the exec'd process did not set its trap"
	oc kill --all "$CID" USR1
	expect_rc 0
	wait_until "$WAIT_LIMIT" eval 'oc exec "$CID" ls /dev/shm >/dev/null; [[ $OUT == *w* && $OUT == *e* ]]' ||
		fail "kill --all USR1 did not reach both processes (in /dev/shm: $OUT)"
	end_case
}

# A process in the container's cgroup that is not the container's (a host
# process; cordon exec's joiner is one for a moment; a reused pid would be
# one): kill --all signals pids it checked through a pidfd to be in the
# container's pid namespace, never one read from cgroup.procs alone.
t_kill_all_only_the_container() {
	local host cg
	setup_case
	CID=$CASE_ID-c
	mk_bundle b sh -c "trap 'touch /dev/shm/w' USR1; while :; do sleep 0.1; done; : $MARK" || return
	oc create --bundle "$BUNDLE" "$CID"
	oc start "$CID"
	expect_rc 0 || return
	oc state "$CID"
	PID=$(user_process)
	wait_until "$WAIT_LIMIT" catches_usr1 || fail "the workload did not set its trap"
	cg=$(cg_dir_with pids.max) || { fail "no pids cgroup"; return; }
	sleep 600 &
	host=$!
	_bg_pids+=("$host")
	echo "$host" >"$cg/cgroup.procs" || { fail "could not move pid $host into $cg"; return; }
	oc kill --all "$CID" USR1
	expect_rc 0
	wait_until "$WAIT_LIMIT" eval 'oc exec "$CID" ls /dev/shm >/dev/null; [[ $OUT == *w* ]]' ||
		fail "kill --all USR1 did not reach the workload"
	kill -0 "$host" 2>/dev/null || fail "kill --all signalled a host process (pid $host) in the container's cgroup"
	echo "$host" >"${cg%/*}/cgroup.procs" 2>/dev/null
	kill "$host" 2>/dev/null
	wait "$host" 2>/dev/null
	end_case
}

# delete --regex RE (crun's): every container whose id RE matches, each
# as `delete ID` would; a running one only with --force; a bad RE refused.
t_delete_regex() {
	local id CID=$CASE_ID-b1
	setup_case
	mk_bundle b sleep "$MARK" || return
	for id in "$CASE_ID-a1" "$CASE_ID-a2" "$CASE_ID-b1"; do
		oc run -d -b "$BUNDLE" "$id"
		expect_rc 0 || return
	done
	oc delete --regex "$CASE_ID-a[0-9]"
	expect_cordon_error STATE "container $CASE_ID-a1 is running"
	oc delete -f --regex "$CASE_ID-a[0-9]"
	expect_rc 0
	oc list -q
	expect_out_eq "$CASE_ID-b1"
	oc delete -f --regex '('
	expect_cordon_error USAGE "--regex ("
	oc delete -f --regex x "$CASE_ID-b1"
	expect_cordon_error USAGE "takes no container ID"
	oc delete -f "$CASE_ID-b1"
	expect_rc 0
	end_case
}

each_mode "ps: pids as JSON and a table; unknown and stopped refused" t_ps
each_mode "cordon started with fd 0, 1 or 2 closed: the container never gets cordon's files; a directory as stdin refused" t_closed_stdio
each_mode "monitor: 20 clients that say nothing do not hold cordon start" t_silent_monitor_clients
each_mode "pause: paused, no progress, refusals; resume; delete --force when paused" t_pause_resume
each_mode "pause a created container, resume to created" t_pause_created
each_mode "update: cgroup files, --resources, refusals, stopped refused" t_update
rootful_only "update --pids-limit: fork beyond the limit fails" t_update_pids_enforced
each_mode "--systemd-cgroup refused, --rootless accepted" t_global_flags
each_mode "network annotations: refusals name the annotation" t_net_annotations_refused
each_mode "cgroupsPath absolute: memory and unified dirs, limit, update, pause, in use refused, leaf removed" t_cgroups_path_absolute
rootful_only "cgroupsPath relative: below the caller's cgroup" t_cgroups_path_relative
each_mode "linux.resources at create: cpu.shares, cpuset, memory.reservation" t_resources_at_create
each_mode "linux.resources.devices at create: deny-all keeps /dev, /dev/null denied by name" t_devices_at_create
each_mode "--pid-file: nothing planted in a shared directory receives it; its directory walked; a failure leaves nothing" t_pid_file_planted
each_mode "--log: a fifo, a symlink, a second name or a third user's file in a shared directory refused at once, a file appended" t_log_planted
each_mode "launcher conventions: --root parents made, warnings only in --log, kill stopped, delete --force gone" t_launcher_conventions
each_mode "interrupt: every command's wait for the lock ends at SIGTERM, with the reason" t_interrupt_lock_waits
each_mode "interrupt: start's wait for the monitor ends at SIGTERM, the lock released" t_interrupt_start_waits
each_mode "interrupt: delete's waits for the monitor and a poststop hook end at SIGTERM" t_interrupt_delete_waits
each_mode "kill --all: the workload and an exec'd process" t_kill_all_reaches_every_process
rootful_only "kill --all: a host process in the container's cgroup is not signalled" t_kill_all_only_the_container
each_mode "delete --regex: every matching container, --force for running ones" t_delete_regex
done_testing
