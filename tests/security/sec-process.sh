#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: what the workload inherits and what it can reach as a
# process. No file descriptor of the caller leaks in; host sockets (an
# abstract unix socket, a loopback TCP port) are unreachable from the
# sandbox's network namespace; rlimits are set and cannot be raised; the
# nproc limit holds to the process (counted by sec-probe forks); a fork
# bomb is stopped by it and leaves the host responsive.
. "$(dirname "$0")/seclib.sh"

# An fd is open in the caller: it must not be inside. Checked with fds 7
# and 200 (a directory, the dangerous kind: fchdir out of the root) and a
# host file; the control shows the fds reach the cordon process.
t_fds() {
	local ctl
	exec 7</etc/hostname 200</
	ctl=$(as_user sh -c 'ls /proc/self/fd' 2>&1 | tr '\n' ' ')
	crun --no-workspace -- sh -c 'ls /proc/self/fd | tr "\n" " "; echo; sec-probe fds'
	exec 7<&- 200<&-
	[[ " $ctl " == *" 7 "* && " $ctl " == *" 200 "* ]] ||
		_case_notes+=("note: fds 7 and 200 did not reach the test user's shell (control: $ctl)")
	expect_rc 0
	# ls's own directory fd is 3.
	[ "$(printf '%s\n' "$OUT" | head -n 1)" = "0 1 2 3 " ] || fail "expected ls /proc/self/fd to show 0 1 2 3 only"
	probe_is fds 0,1,2
}

# The caller's fds with --result-json/--output-max (pipes instead of the
# caller's own stdout/stderr): still nothing else.
t_fds_piped() {
	exec 7</etc/hostname
	crun --no-workspace --output-max 100000 -- sec-probe fds
	exec 7<&-
	expect_rc 0
	probe_is fds 0,1,2
}

# A host process listening on an abstract unix socket and on a loopback
# TCP port; the sandbox's own network namespace has neither.
t_host_sockets() {
	local name="cordon-sec-$$-$_case_n" port pid i
	"$PYTHON" -c '
import socket, sys, time
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.bind("\0" + sys.argv[1]); u.listen(8)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 0)); t.listen(8)
print(t.getsockname()[1], flush=True)
time.sleep(60)
' "$name" >"$CASE_DIR/listener" 2>&1 &
	pid=$!
	_bg_pids+=("$pid")
	for ((i = 0; i < 100; i++)); do
		port=$(head -n 1 "$CASE_DIR/listener")
		[ -n "$port" ] && break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		kill "$pid"
		fail "the host listener did not start: $(cat "$CASE_DIR/listener")"
		return
	fi
	# Control: from the host both are reachable.
	run "$SEC_PROBE" "abstract:$name" "tcp:$port"
	probe_is "abstract:$name" ok
	probe_is "tcp:$port" ok
	crun --no-workspace -- sec-probe "abstract:$name" "tcp:$port"
	expect_rc 0
	probe_is "abstract:$name" ECONNREFUSED ENOENT
	probe_is "tcp:$port" ECONNREFUSED ENETUNREACH
	crun --no-workspace --cap-add NET_RAW -- sec-probe "abstract:$name" "tcp:$port"
	probe_is "abstract:$name" ECONNREFUSED ENOENT
	probe_is "tcp:$port" ECONNREFUSED ENETUNREACH
	kill "$pid"
	wait "$pid" 2>/dev/null
}

t_rlimits() {
	crun --no-workspace -- cat /proc/self/limits
	expect_rc 0
	limit_is "Max core file size" "0 0"
	limit_is "Max open files" "1024 4096"
	limit_is "Max processes" "1024 1024"
	crun --no-workspace --rlimit nofile=100:200 --rlimit core=0 --rlimit nproc=300 -- cat /proc/self/limits
	expect_rc 0
	limit_is "Max open files" "100 200"
	limit_is "Max processes" "300 300"
	# The hard limits are hard: the sandbox root cannot raise them.
	crun --no-workspace -- sh -c 'ulimit -H -n 8192 2>/dev/null && echo raised-nofile; ulimit -H -u 4096 2>/dev/null && echo raised-nproc; ulimit -H -c 1000 2>/dev/null && echo raised-core; ulimit -n 4096 && echo soft-ok'
	expect_rc 0
	expect_out_eq soft-ok "expected hard limits fixed (raising the soft one to the hard one works)"
	for bad in nofile=10:5 bogus=1 nofile=abc nofile nofile=-1; do
		crun --no-workspace --rlimit "$bad" -- true
		expect_cordon_error USAGE --rlimit
	done
}

# "Max open files   1024   4096   files": soft and hard of a limit line.
limit_is() {
	local got
	got=$(printf '%s\n' "$OUT" | awk -v k="$1" 'index($0, k) == 1 { s = substr($0, length(k) + 1); split(s, f, " "); print f[1], f[2]; exit }')
	[ "$got" = "$2" ] || fail "expected '$1' $2, got '$got'"
}

# The nproc limit, counted: sec-probe forks children that stay (blocked
# on a pipe) until a fork fails. The probe is the workload's only process
# of its uid in its user namespace (the init is of the parent namespace),
# so under a limit L it must make exactly L-1 and then see EAGAIN, however
# loaded the machine; without the limit it makes MAX and says "none".
# --rlimit nproc=64 (below the default pids.max 512, so nproc is what
# binds), and the default 1024 with --pids 2000 (rootful, the pids
# cgroup's 512 would bind first; rootless on v1/hybrid has none).
t_nproc_counted() {
	crun --no-workspace --rlimit nproc=64 -- sec-probe forks:200
	expect_rc 0
	probe_is forks:200 "63+1 EAGAIN"
	if [ "$MODE" = rootful ]; then
		crun --no-workspace --pids 2000 -- sec-probe forks:2000
	else
		crun --no-workspace -- sec-probe forks:2000
	fi
	expect_rc 0
	probe_is forks:2000 "1023+1 EAGAIN"
}

# A real bomb under the default limits forks until the limit stops it;
# --timeout ends the run; the host can still start a process; nothing is
# left behind. Each member waits for the two it made, so those that
# forked stay alive and the bomb holds at the limit until the timeout
# (one whose shells exit as their forks fail can die out on a loaded
# machine before it gets going). Counted, not timed: the refusals on its
# stderr ("can't fork"), and the processes alive (every one carries MARK
# on its command line, forks of the same sh -c), never above nproc 1024.
# The host's process start is bounded only by timeout(1)'s 10 s.
t_forkbomb() {
	local refused n
	new_mark
	crun_bg --no-workspace --timeout 10 --kill-after 2 -- \
		sh -c "b() { b | b & wait; }; b; sleep 60 # $MARK"
	wait_until "$WAIT_LIMIT" grep -qs "can't fork" "$CASE_DIR/err" ||
		_fail_raw "the bomb never hit the process limit (no \"can't fork\" on its stderr)"
	# The bomb's own processes only (sh): cordon's, runuser's and the
	# init's command lines name the mark too, and are not the workload's.
	n=$(ps -o comm= -p "$(pgrep -d, -f -- "$MARK")" | grep -cx sh)
	[ "$n" -le 1024 ] || _fail_raw "$n processes of the bomb alive at once: more than nproc 1024"
	timeout 10 sh -c true || _fail_raw "the host could not start a process during the bomb"
	wait_bg_for "$WAIT_LIMIT" || return
	expect_rc 124 "expected the run to end by --timeout (124)"
	refused=$(grep -c "can't fork" <<<"$ERR")
	[ "$refused" -gt 0 ] || _fail_raw "the bomb never hit the process limit (no \"can't fork\" on its stderr)"
	timeout 10 sh -c true || _fail_raw "the host cannot start a process after the bomb"
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" ||
		_fail_raw "bomb processes remain after the run: $(pgrep -c -f -- "$MARK")"
	_case_notes+=("note: the bomb was refused $refused forks; $n of its processes alive at one look")
}

sec_each "no caller fd leaks into the workload (exec 7< before cordon)" t_fds
sec_each "no caller fd leaks with piped output" t_fds_piped
sec_each "host abstract unix and loopback TCP sockets are unreachable" t_host_sockets
sec_each "rlimits: core 0, nofile 1024:4096, nproc 1024; hard limits fixed" t_rlimits
sec_each "nproc counted: a prober makes exactly the limit's worth of processes, then EAGAIN" t_nproc_counted
sec_each "a fork bomb is bounded by nproc; host responsive; nothing left" t_forkbomb
done_testing
