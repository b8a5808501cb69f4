#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: what launchers take for granted of an OCI runtime (docs/oci.md): a
# detached container lets go of its caller, delete never reports a
# container gone that still runs, and what a bundle asks for works (a
# missing cwd, atime options, bind sources below root-only directories,
# --pid-file in the foreground, run --keep, hooks' environment, the
# container's own sub-cgroups).
. "$(dirname "$0")/oci-lib.sh"

# owned_rootfs DIR: a copy of the rootfs the mode's user may change.
owned_rootfs() {
	copy_rootfs "$1" || return 1
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$1"
	return 0
}

program_running() { [ -n "$(procs_matching "sleep $MARK")" ]; }

# The pids of the monitor of container $1 (create's command line, kept).
monitor_of() {
	local line pid
	while read -r line; do
		pid=${line%%:*}
		[ "$(_argv0_of "$pid")" = "$CORDON" ] && echo "$pid"
	done < <(procs_matching " $1")
}

# fds_of PID: "N -> target" of every fd of PID.
fds_of() {
	local f
	for f in /proc/"$1"/fd/*; do
		printf '%s -> %s\n' "${f##*/}" "$(readlink "$f" 2>/dev/null)"
	done
}

# caller_pipe ARGS...: cordon ARGS in this mode with fd 7 open on $SEVEN
# and stdout a pipe read to its end, as `$(cordon ...)` reads it; OUT gets
# what was read and "rc=N" (cordon's status, or the reader's 124 when
# the pipe was still open after 15 s).
caller_pipe() {
	local _argv
	_cordon_argv "$@"
	pushd "$WS" >/dev/null || return 1
	run env SEVEN="$SEVEN" bash -c 'set -o pipefail; "$@" 7<"$SEVEN" | timeout 15 cat; echo "rc=$?"' bash "${_argv[@]}"
	popd >/dev/null || return 1
}

# caller_seven ARGS...: cordon ARGS in this mode with fd 7 open on $SEVEN.
caller_seven() {
	local _argv
	_cordon_argv "$@"
	pushd "$WS" >/dev/null || return 1
	run env SEVEN="$SEVEN" bash -c '"$@" 7<"$SEVEN"' bash "${_argv[@]}"
	popd >/dev/null || return 1
}

# holds_nothing_of_callers PID WHAT [pipes]: no fd of PID is the caller's:
# its fd 7 ($SEVEN), the files of its stdout and stderr, or (with "pipes")
# any pipe.
holds_nothing_of_callers() {
	local fds
	fds=$(fds_of "$1")
	if grep -Fq -e "$SEVEN" -e "$CASE_DIR/out" -e "$CASE_DIR/err" <<<"$fds" ||
		{ [ "${3:-}" = pipes ] && grep -q 'pipe:' <<<"$fds"; }; then
		fail "process $1 ($2) holds the caller's fds:"$'\n'"$fds"
	fi
}

# The init keeps CAP_KILL alone (to relay signals), no_new_privs set.
init_confined() {
	local status
	status=$(cat "/proc/$1/status")
	grep -q '^CapEff:[[:space:]]*0000000000000020$' <<<"$status" &&
		grep -q '^CapPrm:[[:space:]]*0000000000000020$' <<<"$status" &&
		grep -q '^CapBnd:[[:space:]]*0000000000000020$' <<<"$status" &&
		grep -q '^CapInh:[[:space:]]*0000000000000000$' <<<"$status" &&
		grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$status" ||
		fail "the init holds more than CAP_KILL: $(grep -E '^(Cap|NoNewPrivs)' <<<"$status" | tr '\n' ' ')"
}

# `run --detach` returns to a caller that reads its output to its end
# while the container runs: neither the monitor nor the init holds the
# caller's stdio or any other fd of its (an fd 7 here). The init keeps
# only its sync socket and signalfd, and of its capabilities CAP_KILL.
# `create` too (its container process holds the caller's stdio until its
# program runs, as runc's does); the create-time hooks still write to
# create's stdout, the start-time ones to start's.
t_detach_lets_go() {
	local id=$CASE_ID-d init pid
	setup_case
	SEVEN=$CASE_DIR/seven
	echo "caller-$MARK" >"$SEVEN"
	chmod 644 "$SEVEN"
	# The program itself lets go of its stdio: what stays open is cordon's.
	mk_bundle b sh -c "exec </dev/null >/dev/null 2>&1 7<&-; sleep $MARK" || return
	caller_pipe --root "$OROOT" run -d -b "$BUNDLE" "$id"
	[ "$(tail -1 <<<"$OUT")" = rc=0 ] ||
		fail "run --detach: the caller's pipe stayed open while the container runs (or it failed)"
	expect_status "$id" running || return
	init=$(jfield pid)
	holds_nothing_of_callers "$init" init pipes
	for pid in $(monitor_of "$id"); do
		holds_nothing_of_callers "$pid" monitor pipes
	done
	[ "$(fds_of "$init" | grep -vc -- '-> /\(dev/\)\?null$')" = 2 ] ||
		fail "the init holds more than its sync socket and signalfd:"$'\n'"$(fds_of "$init")"
	init_confined "$init"
	oc delete -f "$id"
	expect_rc 0
	# create with hooks: prestart writes to create's stdout, poststart to start's.
	cfg 'c["hooks"] = {"prestart": [{"path": "/bin/sh", "args": ["sh", "-c", "echo pre-" + sys.argv[1]]}],
             "poststart": [{"path": "/bin/sh", "args": ["sh", "-c", "echo post-" + sys.argv[1]]}]}' "$MARK"
	caller_seven --root "$OROOT" create -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "pre-$MARK"
	for pid in $(monitor_of "$id"); do
		holds_nothing_of_callers "$pid" monitor pipes
	done
	expect_status "$id" created || return
	init=$(jfield pid)
	holds_nothing_of_callers "$init" init
	init_confined "$init"
	oc start "$id"
	expect_rc 0
	expect_out_eq "post-$MARK"
	for pid in $(monitor_of "$id"); do
		holds_nothing_of_callers "$pid" monitor pipes
	done
	oc delete -f "$id"
	expect_rc 0
	end_case
}

frozen_in() { [ "$(cat "$1/freezer.state" 2>/dev/null)" = FROZEN ]; }

# delete --force never reports a container gone that still runs. Its init,
# frozen by the caller in a freezer cgroup of the caller's own (cgroup v1),
# goes back to the container's thawed freezer cgroup and dies: delete
# returns once it is gone, with every cgroup of the container removed.
# Where it cannot be ended (the container's own freezer cgroup removed too,
# so it stays frozen), delete fails with the reason and keeps the
# container; once it can end, delete removes it.
t_delete_never_lies() {
	local id=$CASE_ID-f init dirs d fz ours
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc run -d -b "$BUNDLE" "$id"
	expect_status "$id" running || return
	init=$(jfield pid)
	oc delete -f "$id"
	expect_rc 0
	gone "$init" || fail "delete --force returned while the init $init lives"
	if [ "$MODE" = rootless ]; then
		end_case
		return
	fi
	if [ ! -e /sys/fs/cgroup/freezer/cgroup.procs ]; then
		[ -n "${CI:-}" ] && fail "no cgroup v1 freezer hierarchy"
		end_case
		return
	fi
	fz=/sys/fs/cgroup/freezer/cordon-e2e-$$-$_case_n
	oc run -d -b "$BUNDLE" "$id"
	expect_status "$id" running || return
	init=$(jfield pid)
	dirs=$(cat "$OROOT/$id/cgroups")
	mkdir "$fz" && echo "$init" >"$fz/cgroup.procs" && echo FROZEN >"$fz/freezer.state" ||
		{ fail "freezing the init in $fz"; return; }
	wait_until "$WAIT_LIMIT" frozen_in "$fz" || fail "$fz did not freeze"
	oc delete -f "$id"
	expect_rc 0
	gone "$init" || fail "delete --force returned while the frozen init $init lives"
	for d in $dirs; do
		[ ! -e "$d" ] || fail "delete --force left the cgroup $d"
	done
	rmdir "$fz" || fail "the caller's freezer cgroup still holds something of the container"
	# Its own freezer cgroup gone as well: nothing can thaw it.
	oc run -d -b "$BUNDLE" "$id"
	expect_status "$id" running || return
	init=$(jfield pid)
	ours=$(grep '^/sys/fs/cgroup/freezer/' "$OROOT/$id/cgroups")
	mkdir "$fz" && echo FROZEN >"$fz/freezer.state" || { fail "making $fz"; return; }
	while read -r d; do echo "$d" >"$fz/cgroup.procs"; done <"$ours/cgroup.procs"
	rmdir "$ours" || { fail "removing the container's freezer cgroup $ours"; return; }
	wait_until "$WAIT_LIMIT" frozen_in "$fz" || fail "$fz did not freeze"
	oc delete -f "$id"
	expect_cordon_error STATE "still alive"
	oc state "$id"
	expect_rc 0
	echo THAWED >"$fz/freezer.state"
	oc delete -f "$id"
	expect_rc 0
	gone "$init" || fail "the init $init lives after the second delete"
	rmdir "$fz" || fail "$fz still holds something"
	end_case
}

# linux.sysctl kernel.hostname fights the config's hostname (which cordon
# always sets): refused, as runc and crun refuse it; kernel.domainname only
# where it contradicts the config's domainname.
t_uts_sysctl() {
	local id=$CASE_ID-u
	setup_case
	mk_bundle b sh -c 'cat /proc/sys/kernel/domainname; hostname' || return
	cfg 'c["linux"]["sysctl"] = {"kernel.hostname": "other"}'
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "linux.sysctl.kernel.hostname"
	cfg 'c["hostname"] = "box"; c["domainname"] = "a.example"; c["linux"]["sysctl"] = {"kernel.domainname": "b.example"}'
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "linux.sysctl.kernel.domainname"
	cfg 'c["linux"]["sysctl"] = {"kernel.domainname": "a.example"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "$(printf 'a.example\nbox')"
	end_case
}

# A process.cwd the image lacks is made (inside the root, also under
# root.readonly, as runc and crun do); a symlink on its way stays inside
# the root; a file where it should be is an error that names the field.
t_cwd_created() {
	local id=$CASE_ID-w
	setup_case
	owned_rootfs "$CASE_DIR/rootfs" || return
	ln -s "/../../../../tmp" "$CASE_DIR/rootfs/esc"
	: >"$CASE_DIR/rootfs/afile"
	mk_bundle b sh -c 'pwd; stat -c %a .' || return
	cfg 'c["root"]["path"] = sys.argv[1]; c["process"]["cwd"] = "/new/dir"' "$CASE_DIR/rootfs"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(head -2 <<<"$OUT")" = "$(printf '/new/dir\n755')" ] || fail "expected the process in a new /new/dir, mode 755"
	[ -d "$CASE_DIR/rootfs/new/dir" ] || fail "/new/dir was not made in the rootfs"
	# /esc -> /../../../../tmp: the container's /tmp (the config's tmpfs), never the host's.
	cfg 'c["process"]["cwd"] = "/esc/cordon-e2e-escape-" + sys.argv[1] + "/sub"' "$MARK"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(head -1 <<<"$OUT")" = "/tmp/cordon-e2e-escape-$MARK/sub" ] || fail "expected the cwd made through the link, inside the root"
	[ ! -e "/tmp/cordon-e2e-escape-$MARK" ] || { fail "the cwd was made on the host"; rm -rf "/tmp/cordon-e2e-escape-$MARK"; }
	cfg 'c["process"]["cwd"] = "/afile/x"'
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error ROOTFS "process.cwd /afile/x"
	end_case
}

# A bind source below a directory only host root's capabilities may enter
# (root's, mode 0000): host root clones it, in the sandbox's mount
# namespace, and the container reads it.
t_bind_below_000() {
	local id=$CASE_ID-z
	setup_case
	mkdir -p "$CASE_DIR/locked/m"
	echo "hello-$MARK" >"$CASE_DIR/locked/m/content"
	chmod 755 "$CASE_DIR/locked/m"
	chmod 644 "$CASE_DIR/locked/m/content"
	chown 0:0 "$CASE_DIR/locked"
	chmod 000 "$CASE_DIR/locked"
	mk_bundle b cat /foo/content || return
	owned_rootfs "$CASE_DIR/rootfs" || return
	cfg 'c["root"]["path"] = sys.argv[2]
c["mounts"].append({"destination": "/foo", "type": "bind", "source": sys.argv[1], "options": ["bind", "ro"]})' "$CASE_DIR/locked/m" "$CASE_DIR/rootfs"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "hello-$MARK"
	chmod 755 "$CASE_DIR/locked"
	end_case
}

# atime_of PATH: the atime option a mount at PATH has (statvfs flags).
atime_of() {
	"$PYTHON" -c '
import os, sys
f = os.statvfs(sys.argv[1]).f_flag
print("noatime" if f & 1024 else "relatime" if f & 4096 else "strictatime", "nodiratime" if f & 2048 else "diratime")' "$1"
}

# atime options on binds (strictatime, noatime, nodiratime): the kernel
# keeps the host mount's setting for a container's mount namespace; the
# container runs with the source's, and create says so where it differs.
t_bind_atime() {
	local id=$CASE_ID-a host a b
	setup_case
	mk_dir "$CASE_DIR/data"
	host=$(atime_of "$CASE_DIR/data")
	mk_bundle b sh -c 'for m in /a /b; do awk -v m=$m '\''$5 == m { print $6 }'\'' /proc/self/mountinfo; done' || return
	owned_rootfs "$CASE_DIR/rootfs" || return
	cfg 'c["root"]["path"] = sys.argv[2]
c["mounts"] += [{"destination": "/a", "type": "bind", "source": sys.argv[1], "options": ["bind", "strictatime"]},
                {"destination": "/b", "type": "bind", "source": sys.argv[1], "options": ["bind", "noatime", "nodiratime"]}]' "$CASE_DIR/data" "$CASE_DIR/rootfs"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	a=$(head -1 <<<"$OUT")
	b=$(tail -1 <<<"$OUT")
	case $host in
	strictatime*) [[ $a != *atime* ]] || fail "/a: expected strictatime, got $a" ;;
	*) [[ $a == *"${host%% *}"* ]] || fail "/a: expected the source's ${host%% *}, got $a"
	   [[ $ERR == *"mounts[$(($(grep -o '"destination"' "$BUNDLE/config.json" | wc -l) - 2))] /a: strictatime not applied"* ]] ||
		fail "create did not say that strictatime was not applied to /a" ;;
	esac
	case $host in
	noatime*) ;;
	*) [[ $ERR == *"/b: noatime not applied"* ]] || fail "create did not say that noatime was not applied to /b" ;;
	esac
	case $host in
	*" nodiratime") ;;
	*) [[ $ERR == *"/b: nodiratime not applied"* ]] || fail "create did not say that nodiratime was not applied to /b"
	   [[ $b != *nodiratime* ]] || fail "/b: nodiratime appeared on a locked mount: $b" ;;
	esac
	end_case
}

# The container's root may make cgroups below its own (its cgroup2
# directory is delegated to it: the directory, cgroup.procs,
# cgroup.threads, cgroup.subtree_control) and move its processes there;
# its own cgroup's other files stay root's, among them the bounds of what
# it may make. Nothing is left at its end.
t_sub_cgroups() {
	local id=$CASE_ID-g pid
	setup_case
	# shellcheck disable=SC2016 # expanded inside the container
	mk_bundle b sh -c 'cd /sys/fs/cgroup && mkdir sub1 && echo $$ >sub1/cgroup.procs && mkdir sub1/sub2 &&
		grep "^0::" /proc/self/cgroup; cat cgroup.max.descendants cgroup.max.depth;
		echo max >cgroup.max.descendants && echo "max.descendants written"; true' || return
	# Its mount point is made in the root: a copy, never the shared test rootfs.
	owned_rootfs "$CASE_DIR/rootfs" || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "rw"]})' "$CASE_DIR/rootfs"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "$(printf '0::/sub1\n1024\n32')" "expected the container in its own sub1, its tree bounded (1024 cgroups, 32 deep) by files it cannot write"
	[ -z "$(ls -d /sys/fs/cgroup/*/"cordon-$id" /sys/fs/cgroup/"cordon-$id" 2>/dev/null)" ] ||
		fail "the container's cgroups were left"
	# exec --cgroup: a process in a cgroup the container made below its own.
	cfg 'c["process"]["args"] = ["sh", "-c", "mkdir /sys/fs/cgroup/foo && exec sleep " + sys.argv[1]]' "$MARK"
	oc run -d -b "$BUNDLE" "$id"
	expect_rc 0 || return
	wait_until "$WAIT_LIMIT" program_running || fail "the container did not start"
	oc exec --cgroup /foo "$id" grep "^0::" /proc/self/cgroup
	expect_rc 0
	expect_out_eq "0::/foo"
	oc exec --cgroup /nope "$id" true
	expect_cordon_error CGROUP "--cgroup /nope"
	oc exec --cgroup ../.. "$id" true
	expect_cordon_error CGROUP "--cgroup ../.."
	# ps and kill --all reach a process in a cgroup below the container's
	# (the container's own process too: it ends with it).
	oc exec -d --cgroup /foo "$id" sleep $((MARK + 1))
	expect_rc 0
	pid=$(procs_matching "sleep $((MARK + 1))" | head -1 | cut -d: -f1)
	oc ps --format json "$id"
	[[ $OUT == *"$pid"* ]] || fail "ps does not list $pid, in the container's /foo: $OUT"
	oc kill --all "$id" USR1
	expect_rc 0
	wait_until "$WAIT_LIMIT" gone "$pid" || fail "kill --all did not reach $pid, in the container's /foo"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# run --bundle in the foreground: --pid-file gets the container's pid 1
# while it runs; --keep leaves it stopped, with its status, until delete.
t_run_pid_file_keep() {
	local id=$CASE_ID-p pid
	setup_case
	# shellcheck disable=SC2016 # expanded inside the container
	mk_bundle b sh -c 'cut -d" " -f4,5 /proc/1/stat; exit 7' || return
	oc run -b "$BUNDLE" --pid-file "$CASE_DIR/pid" --keep "$id"
	expect_rc 7
	pid=$(cat "$CASE_DIR/pid" 2>/dev/null)
	[ "${pid:-0}" -gt 0 ] 2>/dev/null || fail "--pid-file holds no pid: '$pid'"
	expect_status "$id" stopped || return
	[ "$(jfield exitStatus)" = 7 ] || fail "--keep: expected exitStatus 7"
	oc delete "$id"
	expect_rc 0
	oc state "$id"
	expect_cordon_error STATE "does not exist"
	end_case
}

# A container whose workload has exited while its init has not: the init
# ends only once every process of its pid namespace is gone, and a
# background child frozen in a freezer cgroup of the caller's holds it
# there. That container is not stopped (the old code said so from the
# workload's exit alone: kill refused, and delete --force reported success
# after 10 s, leaving the init, the frozen child and the cgroups). `state`
# keeps saying it is running; delete --force thaws the child (rootful: back
# into the container's own freezer cgroup) and returns once all is gone,
# or (rootless: nothing of the caller's to thaw it with) fails, keeps the
# container, and removes it once it can end.
t_init_outlives_workload() {
	local id=$CASE_ID-w init main bg fz dirs d
	setup_case
	if [ ! -e /sys/fs/cgroup/freezer/cgroup.procs ]; then
		skip_layout "no cgroup v1 freezer hierarchy"
		end_case
		return
	fi
	fz=/sys/fs/cgroup/freezer/cordon-e2e-$$-$_case_n
	mk_bundle b sh -c "sleep $MARK & exec sleep $((MARK + 1))" || return
	oc run -d -b "$BUNDLE" "$id"
	expect_status "$id" running || return
	init=$(jfield pid)
	main=$(pgrep -o -P "$init")
	wait_until "$WAIT_LIMIT" pgrep -P "$main" >/dev/null || { fail "no background child of $main"; return; }
	bg=$(pgrep -P "$main")
	dirs=$(cat "$OROOT/$id/cgroups" 2>/dev/null)
	mkdir "$fz" && echo "$bg" >"$fz/cgroup.procs" && echo FROZEN >"$fz/freezer.state" ||
		{ fail "freezing $bg in $fz"; return; }
	wait_until "$WAIT_LIMIT" frozen_in "$fz" || fail "$fz did not freeze"
	kill -9 "$main"
	wait_until "$WAIT_LIMIT" test ! -e "/proc/$main" || fail "the workload $main did not end"
	gone "$init" && { fail "the init $init ended with a frozen child (the case proves nothing)"; }
	expect_status "$id" running
	if [ "$MODE" = rootful ]; then
		oc delete -f "$id"
		expect_rc 0
		gone "$init" || fail "delete --force returned while the init $init lives"
		gone "$bg" || fail "delete --force returned while the frozen child $bg lives"
		for d in $dirs; do
			[ ! -e "$d" ] || fail "delete --force left the cgroup $d"
		done
	else
		oc delete -f "$id"
		expect_cordon_error STATE "still alive"
		expect_status "$id" running
		echo THAWED >"$fz/freezer.state"
		wait_until "$WAIT_LIMIT" gone "$init" || fail "the init $init lives once thawed"
		oc delete -f "$id"
		expect_rc 0
	fi
	rmdir "$fz" || fail "$fz still holds something"
	end_case
}

rootful_only "cgroups: the container makes its own below its cgroup (delegated), exec --cgroup runs there, they go with it" t_sub_cgroups
each_mode "run --bundle --pid-file and --keep in the foreground" t_run_pid_file_keep
each_mode "linux.sysctl: kernel.hostname refused, kernel.domainname against domainname" t_uts_sysctl
each_mode "process.cwd: made where missing, inside the root, under a read-only root" t_cwd_created
rootful_only "mounts: a bind source below a root-only 0000 directory" t_bind_below_000
each_mode "mounts: atime options on binds keep the source's setting, with a warning" t_bind_atime
each_mode "delete --force: returns once the container is gone (a frozen init too), or fails and keeps it" t_delete_never_lies
each_mode "delete --force: a container whose workload exited while its init lives (a frozen child): not stopped, ended" t_init_outlives_workload
each_mode "run --detach and create let go of the caller's stdio and fds; the init keeps CAP_KILL" t_detach_lets_go

done_testing
