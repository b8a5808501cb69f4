#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317,SC2016 # cases are called through each_mode; container-side scripts
# e2e: what a container's workload can do to its launcher's commands
# (docs/security.md, "What a container can do to its launcher"). The
# container stops or freezes what it can reach, moves its processes
# between the cgroups delegated to it, plants symlinks in its image and
# writes control bytes into its command line; every other command on the
# container still ends (kill, state, delete), exec and start end once the
# container does, and nothing acts on a process that is not the
# container's. Each hang guard is a bound on a command that must end,
# never a measure of how fast.
. "$(dirname "$0")/oci-lib.sh"

# start_container ID [EDIT]: a started container running `sleep $MARK`,
# its config edited by the python EDIT (cfg) first; WPID its process.
start_container() {
	mk_bundle b sleep "$MARK" || return 1
	[ -z "${2:-}" ] || cfg "$2" || return 1
	oc create -b "$BUNDLE" "$1" && oc start "$1"
	expect_rc 0 || return 1
	oc state "$1"
	WPID=$(user_process)
}

# The config's cgroup2 mount at /sys/fs/cgroup (the container's own cgroup, delegated).
CG_MOUNT='c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev"]})'

# A cgroup2 directory the container may write in: rootful, or a v2 host that delegates.
has_own_cgroup2() { [ "$MODE" = rootful ] || [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; }

# must_end WHAT: the background command ends (a hang guard of 30 s); RC etc. set.
must_end() {
	wait_bg_for "$WAIT_LIMIT" || { fail "$1 hung"; return 1; }
}

# exec into a cgroup the container froze (cgroup.freeze of a cgroup it
# made below its own): the joiner froze there with the container's lock
# held, and kill, delete and pause queued behind it for ever. Now nothing
# of exec enters the container's cgroups before the process is set up,
# a frozen target is refused, and kill ends whatever exec does.
t_exec_frozen_cgroup() {
	local id=$CASE_ID-c exec_pid
	setup_case
	has_own_cgroup2 || { skip_layout "no cgroup2 delegated rootless on this layout"; return; }
	start_container "$id" "$CG_MOUNT" || return
	oc exec "$id" sh -c 'mkdir /sys/fs/cgroup/x && echo 1 >/sys/fs/cgroup/x/cgroup.freeze'
	expect_rc 0 || { oc delete -f "$id" >/dev/null; return; }
	oc_bg exec --cgroup /x "$id" echo hi
	exec_pid=$BG_PID
	oc_bg kill "$id" KILL
	must_end "kill, while exec waited on the frozen cgroup" && expect_rc 0
	BG_PID=$exec_pid
	must_end "exec into the frozen cgroup" && expect_rc_not 0
	expect_out_lacks hi
	oc_bg delete -f "$id"
	must_end "delete" && expect_rc 0
	end_case
}

# The container stops its own process before it is started (an exec'd
# process SIGSTOPs it), then start is asked: start held the container's
# lock until the process's execve, which never came; kill, state and
# delete waited for ever. Now start holds no lock while it waits.
t_start_stopped_workload() {
	local id=$CASE_ID-s start_pid
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc exec "$id" kill -STOP 2
	expect_rc 0
	oc_bg start "$id"
	start_pid=$BG_PID
	oc_bg state "$id"
	must_end "state, while start waited" && expect_rc 0
	oc_bg kill "$id" KILL
	must_end "kill, while start waited" && expect_rc 0
	BG_PID=$start_pid
	must_end "start of the stopped process" && expect_rc_not 0
	oc_bg delete -f "$id"
	must_end "delete" && expect_rc 0
	end_case
}

# The container moves its processes into a cgroup of its own below the
# container's and enables a controller there (cgroup2's "no internal
# processes" rule then keeps anyone out of the container's cgroup):
# exec's join failed with EBUSY. It joins the cgroup of the container's
# process then, as runc does; update and delete go on as before.
t_exec_moved_init() {
	local id=$CASE_ID-m pid top=/sys/fs/cgroup/unified enabled=
	setup_case
	has_own_cgroup2 || { skip_layout "no cgroup2 delegated rootless on this layout"; return; }
	# A hybrid host's cgroup2 root enables no controller for its children:
	# hugetlb, which it holds, is enabled there for the case (and only then).
	if [ "$MODE" = rootful ] && grep -qw hugetlb "$top/cgroup.controllers" 2>/dev/null &&
		! grep -qw hugetlb "$top/cgroup.subtree_control"; then
		echo +hugetlb >"$top/cgroup.subtree_control" && enabled=1
	fi
	if ! start_container "$id" "$CG_MOUNT"; then
		[ -z "$enabled" ] || echo -hugetlb >"$top/cgroup.subtree_control"
		return
	fi
	oc exec "$id" sh -c 'cd /sys/fs/cgroup && c=$(cut -d" " -f1 cgroup.controllers) && [ -n "$c" ] && mkdir foo && for p in $(cat cgroup.procs); do echo $p >foo/cgroup.procs 2>/dev/null; done; echo "+$c" >cgroup.subtree_control && cat cgroup.subtree_control'
	if [ "$RC" != 0 ] || [ -z "$OUT" ]; then
		oc delete -f "$id" >/dev/null
		[ -z "$enabled" ] || echo -hugetlb >"$top/cgroup.subtree_control"
		skip_layout "no controller the container may enable below its cgroup on this host"
		return
	fi
	oc exec -d --pid-file "$CASE_DIR/pid" "$id" sleep "$((MARK + 1))"
	expect_rc 0
	pid=$(cat "$CASE_DIR/pid" 2>/dev/null)
	if [ -n "$pid" ]; then
		grep -q '^0::.*/foo$' "/proc/$WPID/cgroup" || fail "the container's process was not moved"
		[ "$(grep '^0::' "/proc/$pid/cgroup")" = "$(grep '^0::' "/proc/$WPID/cgroup")" ] ||
			fail "the exec'd process is not in the container process's cgroup2"
	fi
	oc update --pids-limit 100 "$id"
	expect_rc 0
	oc_bg delete -f "$id"
	must_end "delete" && expect_rc 0
	[ -z "$enabled" ] || echo -hugetlb >"$top/cgroup.subtree_control" ||
		fail "hugetlb could not be disabled again at $top"
	end_case
}

# `ps` prints the workload's command line: control bytes in it (a
# newline, an escape) are escaped, so that it cannot forge lines or
# terminal sequences in its launcher's view.
t_ps_escapes() {
	local id=$CASE_ID-p
	setup_case
	mk_bundle b sh || return
	cfg 'c["process"]["args"] = ["sh", "-c", "sleep %s; true" % sys.argv[1], "x\nFAKE 1 forged\033[2J"]' "$MARK" || return
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	wait_until "$WAIT_LIMIT" eval "oc ps $id; [[ \$OUT == *FAKE* ]]" || fail "ps never showed the process"
	oc ps "$id"
	expect_rc 0
	[[ $OUT != *$'\n'FAKE* ]] || fail "ps printed a forged line"
	[[ $OUT != *$'\033'* ]] || fail "ps printed an escape byte"
	[[ $OUT == *'\nFAKE'* ]] || fail "ps did not show the newline escaped"
	oc delete -f "$id"
	end_case
}

# A mount whose target resolves into /proc through symlinks of the image
# (/etc/x -> /proc/sys/kernel, /etc/y -> ../proc/self): it covered what
# the kernel shows there. Refused before the container runs.
t_mount_into_proc() {
	local id=$CASE_ID-d
	setup_case
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	ln -s /proc/sys/kernel "$ROOTFS/etc/x"
	ln -s ../proc/self "$ROOTFS/etc/y"
	mk_dir "$CASE_DIR/src"
	mk_bundle b true || return
	cfg 'c["mounts"].append({"destination": "/etc/x/random", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]})' || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error MOUNT "/etc/x/random resolves into /proc"
	mk_bundle b2 true || return
	cfg 'c["mounts"].append({"destination": "/etc/y/attr", "type": "bind", "source": sys.argv[1], "options": ["rbind", "ro"]})' "$CASE_DIR/src" || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error MOUNT "/etc/y/attr resolves into /proc"
	# The proc mount itself, and a mount next to /proc, go on.
	mk_bundle b3 true || return
	cfg 'c["mounts"].append({"destination": "/mnt", "type": "tmpfs", "source": "tmpfs"})' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	oc delete -f "$id" >/dev/null 2>&1
	end_case
}

each_mode "exec into a cgroup the container froze: kill and delete still end, so does exec" t_exec_frozen_cgroup
each_mode "start of a process the container stopped: state, kill and delete still end, so does start" t_start_stopped_workload
each_mode "exec after the container moved its processes below its cgroup: no EBUSY" t_exec_moved_init
each_mode "ps escapes control bytes of the workload's command line" t_ps_escapes
each_mode "a mount target that resolves into /proc is refused" t_mount_into_proc
done_testing
