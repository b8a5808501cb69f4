#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: `cordon exec` and terminals (docs/oci.md): a process in a running
# container sees the container (hostname, pid namespace, rootfs) and not
# the host, gets the container's confinement, exits with its status;
# --detach, --pid-file, --env, --cwd, --user, --cap, --process,
# --preserve-fds; --tty and process.terminal through a console socket
# (console-recv.py receives the pty's master).
. "$(dirname "$0")/oci-lib.sh"

RECV=$(cd "$(dirname "$0")" && pwd)/console-recv.py

# edit_config PYTHON: run PYTHON with c = $BUNDLE/config.json loaded, then save it.
edit_config() {
	"$PYTHON" - "$BUNDLE/config.json" "$1" <<'EOF' || fail "editing config.json"
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
EOF
}

# start_container ID [BUNDLE]: a started container running `sleep $MARK`; WPID its process.
start_container() {
	mk_bundle "${2:-b}" sleep "$MARK" || return 1
	oc create -b "$BUNDLE" "$1" && oc start "$1"
	expect_rc 0 || return 1
	oc state "$1"
	WPID=$(user_process)
}

# same_ns PID1 PID2: every namespace of the two processes is the same.
same_ns() {
	local ns
	for ns in user mnt pid net uts ipc cgroup; do
		[ "$(readlink "/proc/$1/ns/$ns")" = "$(readlink "/proc/$2/ns/$ns")" ] ||
			{ fail "namespace $ns of $2 is not the container's"; return 1; }
	done
}

# status_field PID KEY: a line of /proc/PID/status.
status_field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# start_receiver SOCK OUT [INPUT]: console-recv.py in the background, as the mode's user.
start_receiver() {
	if [ "$MODE" = rootless ]; then
		as_user "$PYTHON" "$RECV" "$@" 2>"$CASE_DIR/recv.err" &
	else
		"$PYTHON" "$RECV" "$@" 2>"$CASE_DIR/recv.err" &
	fi
	RECV_PID=$!
	_bg_pids+=("$RECV_PID")
	wait_until "$WAIT_LIMIT" test -S "$1" || fail "the console receiver did not listen"
}

t_exec_sees_container() {
	local id=$CASE_ID-c
	setup_case
	echo "host-secret-$MARK" >"$CASE_DIR/secret"
	chmod 644 "$CASE_DIR/secret"
	start_container "$id" || return
	# shellcheck disable=SC2016 # expanded inside the container
	oc exec "$id" sh -c 'hostname; echo "pid $$"; ps -o comm,args | grep "[s]leep"; ls /'
	expect_rc 0
	expect_out_has cordon
	expect_out_has "sleep $MARK" "the container's process is not in the exec's pid namespace"
	if ! [[ $OUT =~ pid\ ([0-9]+) ]] || [ "${BASH_REMATCH[1]}" -ge 100 ]; then
		fail "the exec'd shell's pid is not one of the container's pid namespace"
	fi
	expect_out_has linuxrc "the container's rootfs is not the exec's root"
	oc exec "$id" cat "$CASE_DIR/secret"
	expect_rc_not 0 "a host file is visible in the exec"
	expect_out_lacks "host-secret-$MARK"
	oc exec "$id" sh -c 'exit 7'
	expect_rc 7
	# shellcheck disable=SC2016
	oc exec "$id" sh -c 'kill -9 $$'
	expect_rc 137
	oc exec "$id" no-such-program
	expect_rc 127
	expect_err_has CORDON_E_EXEC
	oc exec "$id" /etc/passwd
	expect_rc 126
	oc delete -f "$id"
	expect_rc 0
	end_case
}

t_exec_confinement() {
	local id=$CASE_ID-f pid
	setup_case
	start_container "$id" || return
	oc exec -d --pid-file "$CASE_DIR/pid" "$id" sleep "$((MARK + 1))"
	expect_rc 0
	expect_err_empty
	pid=$(cat "$CASE_DIR/pid" 2>/dev/null)
	if [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then
		fail "--pid-file does not name a running process"
		return
	fi
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline") == "sleep $((MARK + 1)) " ]] || fail "the pid file names another process"
	same_ns "$WPID" "$pid"
	local k
	for k in Uid Gid CapBnd CapEff CapPrm CapInh CapAmb NoNewPrivs Seccomp Seccomp_filters; do
		[ "$(status_field "$pid" "$k")" = "$(status_field "$WPID" "$k")" ] ||
			fail "$k of the exec'd process differs from the container process's"
	done
	[ "$(status_field "$pid" Seccomp)" = 2 ] || fail "the exec'd process has no seccomp filter"
	diff <(sed 's/^[0-9]*://' "/proc/$WPID/cgroup") <(sed 's/^[0-9]*://' "/proc/$pid/cgroup") >/dev/null ||
		fail "the exec'd process is not in the container's cgroups"
	# Nothing of the host: only 0-2, and the cwd is the container's.
	local fds=("/proc/$pid/fd"/*)
	[ "${fds[*]##*/}" = "0 1 2" ] || fail "the exec'd process holds more than fds 0-2"
	[ "$(readlink "/proc/$pid/cwd")" = / ] || fail "the exec'd process's cwd is not the container's /"
	# Killing the container ends it too.
	oc delete -f "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" test ! -d "/proc/$pid" || fail "the exec'd process survived delete --force"
	end_case
}

t_exec_options() {
	local id=$CASE_ID-o
	setup_case
	start_container "$id" || return
	# shellcheck disable=SC2016
	oc exec --env FOO=bar -e PATH=/bin:/usr/bin --cwd /tmp --user 1000:1000 "$id" \
		sh -c 'echo "$(id -u):$(id -g) $(pwd) $FOO $PATH $HOME"'
	expect_rc 0
	expect_out_eq "1000:1000 /tmp bar /bin:/usr/bin /home/sandbox"
	# --debug's command line hides the values (-e K=V, --env K=V, --env=K=V).
	new_mark
	# shellcheck disable=SC2016
	cordon --root "$OROOT" --debug exec -e "A=a$MARK" --env "B=b$MARK" --env="C=c$MARK" "$id" \
		sh -c 'echo "$A$B$C"'
	expect_rc 0
	expect_out_eq "a${MARK}b${MARK}c$MARK"
	expect_err_has "exec -e A=*** --env B=*** --env=C=*** $id"
	expect_err_lacks "$MARK" "--debug logged an exec --env value"
	# The config's environment is the base.
	# shellcheck disable=SC2016
	oc exec "$id" sh -c 'echo "$TERM"'
	expect_out_eq xterm
	# --cap adds to the process's sets, whatever capability the kernel knows.
	oc exec --cap NET_RAW -c CAP_CHOWN "$id" sh -c 'grep CapBnd /proc/self/status'
	expect_rc 0
	expect_out_has 0000000020002421
	oc exec --cap SYS_ADMIN "$id" sh -c 'grep CapBnd /proc/self/status'
	expect_rc 0
	expect_out_has 0000000020200420
	oc exec --cwd tmp "$id" true
	expect_cordon_error USAGE --cwd
	oc exec --cwd /no/such/dir "$id" true
	expect_cordon_error PATH /no/such/dir
	# /proc/self/fd/N would lead wherever an fd of cordon exec's pointed.
	oc exec --cwd /proc/self/fd/3 "$id" true
	expect_cordon_error USAGE /proc
	oc exec --user 70000 "$id" true
	expect_cordon_error USERNS 70000
	# --preserve-fds: fd 3 passes, fd 4 does not.
	local _argv
	echo "passed-$MARK" >"$CASE_DIR/fd3"
	chmod 644 "$CASE_DIR/fd3"
	_cordon_argv --root "$OROOT" exec --preserve-fds 1 "$id" \
		sh -c 'cat <&3; [ -e /proc/self/fd/4 ] && echo fd4 leaked || echo no fd4'
	# shellcheck disable=SC2016
	run bash -c 'exec 3<"$0" 4<"$0"; exec "$@"' "$CASE_DIR/fd3" "${_argv[@]}"
	expect_rc 0
	expect_out_eq "passed-$MARK"$'\n'"no fd4"
	oc exec --preserve-fds 2 "$id" true
	expect_cordon_error USAGE --preserve-fds
	oc delete -f "$id"
	expect_rc 0
	end_case
}

t_exec_process_file() {
	local id=$CASE_ID-p
	setup_case
	start_container "$id" || return
	cat >"$CASE_DIR/process.json" <<'EOF'
{"args": ["sh", "-c", "echo \"$(id -u) $(pwd) $X\"; exit 4"], "cwd": "/dev",
 "env": ["PATH=/bin", "X=from-process-json"], "user": {"uid": 1000, "gid": 1000},
 "terminal": false}
EOF
	chmod 644 "$CASE_DIR/process.json"
	oc exec --process "$CASE_DIR/process.json" "$id"
	expect_rc 4
	expect_out_eq "1000 /dev from-process-json"
	echo '{"args": ["true"], "cwd": "rel"}' >"$CASE_DIR/bad.json"
	chmod 644 "$CASE_DIR/bad.json"
	oc exec -p "$CASE_DIR/bad.json" "$id"
	expect_cordon_error SPEC process.cwd
	echo '{"args": ["true"], "cwd": "/proc/self/fd/5"}' >"$CASE_DIR/bad.json"
	oc exec -p "$CASE_DIR/bad.json" "$id"
	expect_cordon_error SPEC process.cwd
	oc exec -p "$CASE_DIR/process.json" "$id" extra
	expect_cordon_error USAGE extra
	oc delete -f "$id"
	expect_rc 0
	end_case
}

t_exec_refusals() {
	local id=$CASE_ID-r
	setup_case
	oc exec "$id" true
	expect_cordon_error STATE "does not exist"
	mk_bundle b sh -c 'exit 3' || return
	oc run -d -b "$BUNDLE" "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" is_stopped "$id" || fail "container $id did not stop"
	oc exec "$id" true
	expect_cordon_error STATE stopped
	oc exec "$id"
	expect_cordon_error USAGE command
	oc exec
	expect_cordon_error USAGE ID
	oc exec --tty "$id" true
	expect_cordon_error STATE stopped
	oc delete "$id"
	expect_rc 0
	new_mark
	start_container "$id" b2 || return
	oc exec --tty "$id" true
	expect_cordon_error USAGE --console-socket
	oc exec --user x "$id" true
	expect_cordon_error USAGE --user
	oc delete -f "$id"
	expect_rc 0
	end_case
}

t_exec_tty() {
	local id=$CASE_ID-t
	setup_case
	start_container "$id" || return
	start_receiver "$CASE_DIR/console.sock" "$CASE_DIR/console.out" hello
	# shellcheck disable=SC2016
	oc exec -t --console-socket "$CASE_DIR/console.sock" "$id" \
		sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo "stdio is a tty"; read x; echo "got:$x"; exit 5'
	expect_rc 5
	wait "$RECV_PID"
	_slurp OUT "$CASE_DIR/console.out"
	expect_out_has /dev/pts/0
	expect_out_has "stdio is a tty"
	expect_out_has got:hello
	[ "$(cat "$CASE_DIR/console.out.name" 2>/dev/null)" = /dev/ptmx ] || fail "the console socket got no name with the fd"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# The exec'd process leads a session and process group of its own (kill(0)
# inside must not reach the caller's, nor /dev/tty its terminal); so does
# the container's own process (its group; its session is its init's).
t_exec_session() {
	local id=$CASE_ID-s f
	setup_case
	start_container "$id" || return
	# shellcheck disable=SC2016
	oc exec "$id" sh -c 'read -r a </proc/self/stat; set -- ${a##*) }; echo "pgrp=$3 session=$4 self=$$"'
	expect_rc 0
	f=${OUT#*self=}
	expect_out_has "pgrp=$f session=$f " "expected the exec'd process to lead its own session and group"
	read -r f <"/proc/$WPID/stat"
	set -- ${f##*) }
	[ "$3" = "$WPID" ] || fail "expected the container's process to lead its own process group (pgrp $3, pid $WPID)"
	[ "$4" != "$(ps -o sid= -p $$ | tr -d ' ')" ] || fail "the container's process is in the test's session"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

t_create_terminal() {
	local id=$CASE_ID-k
	setup_case
	# shellcheck disable=SC2016
	mk_bundle b sh -c 'tty; stty size; read x; echo "got:$x"; exit 6' || return
	edit_config 'c["process"]["terminal"] = True; c["process"]["consoleSize"] = {"height": 30, "width": 100}'
	start_receiver "$CASE_DIR/console.sock" "$CASE_DIR/console.out" world
	oc create -b "$BUNDLE" --console-socket "$CASE_DIR/console.sock" "$id"
	expect_rc 0
	expect_err_empty
	oc start "$id"
	expect_rc 0
	wait "$RECV_PID"
	wait_until "$WAIT_LIMIT" is_stopped "$id" || fail "container $id did not stop"
	[ "$(jfield exitStatus)" = 6 ] || fail "expected exitStatus 6"
	_slurp OUT "$CASE_DIR/console.out"
	expect_out_has "winsize 30 100"
	expect_out_has /dev/pts/0
	expect_out_has "30 100"$'\r'
	expect_out_has got:world
	oc delete "$id"
	expect_rc 0
	# process.terminal needs a console socket; a console socket needs a terminal.
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error USAGE process.terminal
	edit_config 'c["process"]["terminal"] = False'
	oc create -b "$BUNDLE" --console-socket "$CASE_DIR/console.sock" "$id"
	expect_cordon_error USAGE --console-socket
	end_case
}

# A v2 machine may delegate cgroups to the test user; v1 and hybrid never do.
has_freezer() { [ "$MODE" = rootful ] || [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; }

# exec into a paused container is refused at once (as crun refuses it).
# It froze itself joining the frozen cgroup, with the container's lock
# held and SIGTERM blocked: resume, kill and delete queued behind it.
t_exec_paused_refused() {
	local id=$CASE_ID-c
	setup_case
	has_freezer || { skip_layout "no freezer cgroup rootless on this layout"; return; }
	start_container "$id" || return
	oc pause "$id"
	expect_rc 0 || return
	oc_bg exec "$id" echo hi
	if wait_bg_for "$WAIT_LIMIT"; then
		expect_cordon_error STATE "container $id is paused"
		expect_out_eq ""
	fi
	oc resume "$id"
	expect_rc 0
	oc exec "$id" echo hi
	expect_rc 0
	expect_out_eq hi
	oc delete -f "$id"
	end_case
}

# A cgroup of the container frozen behind cordon's back (the cgroup2
# directory of a hybrid layout, while the v1 freezer, which says
# "paused", is thawed). The joiner wrote itself into it first and froze
# there, the container's lock held, until a signal ended cordon exec. Now
# nothing of exec enters the container's cgroups before its process is
# set up, and a frozen one is refused at once; the container goes on.
t_exec_frozen_refused() {
	local id=$CASE_ID-c unified p
	setup_case
	start_container "$id" || return
	unified=$(grep -x '/sys/fs/cgroup/unified/.*' "$OROOT/$id/cgroups")
	if [ -z "$unified" ] || ! grep -q '^/sys/fs/cgroup/freezer/' "$OROOT/$id/cgroups"; then
		skip_layout "needs a v1 freezer and a cgroup2 directory (hybrid): elsewhere a frozen cgroup is a paused container, refused before any wait"
		oc delete --force "$id" >/dev/null
		return
	fi
	echo 1 >"$unified/cgroup.freeze"
	wait_until "$WAIT_LIMIT" grep -qx "frozen 1" "$unified/cgroup.events" || fail "$unified did not freeze"
	expect_status "$id" running
	oc_bg exec "$id" echo hi
	if wait_bg_for "$WAIT_LIMIT"; then
		expect_cordon_error STATE "cgroup $unified is frozen: cannot exec in it"
		expect_out_eq ""
	fi
	for p in $(cat "$unified/cgroup.procs"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = cordon-exec ] && fail "something of exec joined the frozen cgroup"
	done
	echo 0 >"$unified/cgroup.freeze"
	expect_status "$id" running
	oc exec "$id" echo hi
	expect_rc 0
	expect_out_eq hi
	oc delete -f "$id"
	end_case
}

each_mode "exec: the container's hostname, pid namespace and rootfs, not the host's; statuses" t_exec_sees_container
each_mode "exec --detach --pid-file: namespaces, cgroups, ids, capabilities, seccomp, fds, cwd" t_exec_confinement
each_mode "exec --env, --cwd, --user, --cap, --preserve-fds" t_exec_options
each_mode "exec --process FILE" t_exec_process_file
each_mode "exec refusals: no container, stopped, no command, --tty without socket" t_exec_refusals
each_mode "exec --tty --console-socket: a pty of the container" t_exec_tty
each_mode "exec: the process leads a session and group of its own" t_exec_session
each_mode "create with process.terminal, consoleSize and --console-socket" t_create_terminal
each_mode "exec into a paused container: refused at once, resume works" t_exec_paused_refused
rootful_only "exec into a cgroup frozen behind cordon's back: refused at once, nothing joins it" t_exec_frozen_refused
done_testing
