#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the state directory's files are written so that nothing planted at
# their names receives the bytes (docs/security.md, "The state
# directory"). Whoever can write a container's state directory before
# cordon writes it again -- a link to the user's own files (rootless),
# to any file (rootful) -- must not turn cordon's write into a write of
# that file. The old code opened state.json.tmp by name with O_TRUNC: a
# hard link there had the victim rewritten with the container's state.
. "$(dirname "$0")/oci-lib.sh"

# The victim: a file of the mode's user on the state root's filesystem.
mk_victim() {
	VICTIM=$CASE_DIR/victim
	echo "victim-$MARK" >"$VICTIM"
	chmod 600 "$VICTIM"
	[ "$MODE" = rootful ] || chown "$TEST_UID:$TEST_GID" "$VICTIM"
}

victim_intact() { [ "$(cat "$VICTIM")" = "victim-$MARK" ]; }

# A created container; names planted in its directory; then start (which
# writes state.json "running"), its exit (state.json "stopped", with the
# status), state and delete.
t_planted_names() {
	local id=$CASE_ID-p dir
	setup_case
	mk_victim
	mk_bundle b sh -c 'exit 3' || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	dir=$OROOT/$id
	[ -f "$dir/state.json" ] || { fail "no state.json in $dir"; return; }
	ln "$VICTIM" "$dir/state.json.tmp" # the temp name the old code used
	ln -s "$VICTIM" "$dir/.cordon-state-0000000000000000"
	ln "$VICTIM" "$dir/junk"
	oc start "$id"
	expect_rc 0
	wait_stopped "$id"
	oc state "$id"
	expect_rc 0
	[ "$(jfield status)" = stopped ] || fail "expected the state to say stopped"
	check "the planted hard link's file was not written" victim_intact
	oc delete "$id"
	expect_rc 0
	check "the planted names were not written through" victim_intact
	check "the container's directory is gone, planted names and all" test ! -e "$dir"
	end_case
}

# A link at monitor.sock to another container's monitor: cordon start
# reaches only the socket its own monitor made (the old code followed the
# link and started the other container).
t_monitor_link() {
	local a=$CASE_ID-a b=$CASE_ID-b
	setup_case
	mk_bundle b sh -c "echo $MARK" || return
	oc create -b "$BUNDLE" "$a" && oc create -b "$BUNDLE" "$b"
	expect_rc 0 || return
	rm -f "$OROOT/$a/monitor.sock"
	ln -s "$OROOT/$b/monitor.sock" "$OROOT/$a/monitor.sock"
	oc start "$a"
	expect_cordon_error STATE "reaching its monitor"
	expect_status "$b" created
	oc delete -f "$a"
	expect_rc 0
	oc delete -f "$b"
	expect_rc 0
	end_case
}

# A hard link at monitor.sock to another container's socket is that
# socket: start checks that the listener is its own monitor (the pid that
# listens, the owner recorded with its start time) and refuses another's
# (the binary before started the other container). Then a socket of
# someone else's listening there.
t_monitor_hard_link() {
	local a=$CASE_ID-a b=$CASE_ID-b listener
	setup_case
	mk_bundle b sh -c "echo $MARK" || return
	oc create -b "$BUNDLE" "$a" && oc create -b "$BUNDLE" "$b"
	expect_rc 0 || return
	rm -f "$OROOT/$a/monitor.sock"
	ln "$OROOT/$b/monitor.sock" "$OROOT/$a/monitor.sock" || { fail "linking the socket"; return; }
	oc start "$a"
	expect_cordon_error STATE "not its monitor's socket"
	expect_status "$b" created
	rm -f "$OROOT/$a/monitor.sock"
	# The mode's user's: a socket its cordon start may connect to.
	if [ "$MODE" = rootful ]; then listener=("$PYTHON"); else listener=(as_user "$PYTHON"); fi
	"${listener[@]}" - "$OROOT/$a/monitor.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(8)
s.settimeout(20)
s.accept()
PY
	wait_until "$WAIT_LIMIT" test -S "$OROOT/$a/monitor.sock" || fail "no listener of the test's"
	oc start "$a"
	expect_cordon_error STATE "not its monitor's socket"
	wait
	oc delete -f "$a"
	expect_rc 0
	oc delete -f "$b"
	expect_rc 0
	end_case
}

# --root through a link of another user's in a sticky directory of root's
# (a /tmp): refused by the host-path walk, nothing made or listed where it
# points (the binary before made the missing directories below the
# link's target, and listed a state root there); the link of the
# caller's own is followed.
t_root_walked() {
	local sticky=$CASE_DIR/sticky target=$CASE_DIR/target
	setup_case
	mkdir -m 1777 "$sticky"
	mk_dir "$target"
	ln -s "$target" "$sticky/link"
	chown -h "$(other_uid)" "$sticky/link"
	cordon --root "$sticky/link/state" list
	expect_cordon_error PATH "'link' is a symlink of uid $(other_uid)"
	[ ! -e "$target/state" ] || fail "--root made a directory where another user's link points"
	mk_bundle b true || return
	cordon --root "$sticky/link/a/b" create -b "$BUNDLE" "$CASE_ID-x"
	expect_cordon_error PATH "'link'"
	[ ! -e "$target/a" ] || fail "--root made directories where another user's link points"
	# The caller's own link: followed, the missing parents made.
	ln -s "$target" "$sticky/own"
	chown -h "$(mode_uid)" "$sticky/own"
	cordon --root "$sticky/own/a/b" list -q
	expect_rc 0
	[ -d "$target/a/b" ] && [ "$(stat -c %u:%a "$target/a/b")" = "$(mode_uid):700" ] ||
		fail "--root through the caller's own link: $target/a/b not made 0700"
	end_case
}

# A fifo or a device planted at state.json or config.json is looked at
# through an O_PATH fd and refused, never opened (inotify's IN_OPEN, which
# an O_PATH open does not raise): the binary before opened them (a
# device's open can act by itself) and only then saw what they were.
t_state_files_unopened() {
	local id=$CASE_ID-s dir
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	dir=$OROOT/$id
	mv "$dir/state.json" "$CASE_DIR/state.keep"
	mkfifo -m 666 "$dir/state.json"
	watch_opens "$dir/state.json" || return
	oc state "$id"
	expect_cordon_error STATE "reading state of $id"
	opens_seen
	[ "$OPENS" = 0 ] || fail "state.json, a fifo, was opened $OPENS time(s)"
	rm -f "$dir/state.json"
	mv "$CASE_DIR/state.keep" "$dir/state.json"
	mv "$dir/config.json" "$CASE_DIR/config.keep"
	mknod -m 666 "$dir/config.json" c 1 3
	watch_opens "$dir/config.json" || return
	oc exec "$id" true
	expect_cordon_error STATE "no config kept"
	opens_seen
	[ "$OPENS" = 0 ] || fail "config.json, a device, was opened $OPENS time(s)"
	rm -f "$dir/config.json"
	mv "$CASE_DIR/config.keep" "$dir/config.json"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# A workspace or bind (read-only too) that holds the state root would give the
# workload every sandbox's state and monitor socket (rootful: root's
# files, through the idmapped mount; rootless: the caller's uid, which
# its supervisors trust): refused, CORDON_E_PATH, nothing made, whether
# the workspace is named, the current directory, or a --bind.
t_state_root_not_shared() {
	local top=$CASE_DIR/top
	setup_case
	mk_dir "$top/state"
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$top"
	cordon --root "$top/state" run --workspace "$top" "$ROOTFS" -- true
	expect_rc 125
	expect_err_has "CORDON_E_PATH: the workspace $top holds the state root $top/state"
	cordon --root "$top/state" create --owner none --no-workspace --bind "$top:/mnt:rw" "$ROOTFS"
	expect_rc 125
	expect_err_has "holds the state root"
	WS=$top cordon --root "$top/state" run "$ROOTFS" -- true
	expect_rc 125
	expect_err_has "holds the state root"
	[ -z "$(ls -A "$top/state")" ] || fail "something was made in the state root: $(ls -A "$top/state")"
	# Read-only (a --bind's default) too: a unix socket is connected to through it.
	cordon --root "$top/state" run --no-workspace --bind "$top:/mnt" "$ROOTFS" -- true
	expect_rc 125
	expect_err_has "CORDON_E_PATH: the --bind $top holds the state root"
	[ -z "$(ls -A "$top/state")" ] || fail "something was made in the state root: $(ls -A "$top/state")"
	# The caller's default root counts when --root names another (rootful: /run/cordon).
	if [ "$MODE" = rootful ] && [ -d /run/cordon ]; then
		cordon --root "$top/state" run --no-workspace --bind /run:/mnt "$ROOTFS" -- true
		expect_rc 125
		expect_err_has "holds the state root /run/cordon"
	fi
	cordon --root "$top/state" run --no-workspace --bind "$top/state/..:/mnt" --bind "$CASE_DIR/ws:/w" "$ROOTFS" -- true
	expect_rc 125
	cordon --root "$top/state" run --no-workspace "$ROOTFS" -- true
	expect_rc 0
	end_case
}

each_mode "state directory: links planted beside state.json never receive its writes; delete removes them" t_planted_names
each_mode "state directory: a link at monitor.sock to another container's: start refused, the other untouched" t_monitor_link
# MONITOR_NET_INFO writes only into a memfd made to be sealed (as
# cordon inspect sends): a tmpfs file, where F_GET_SEALS succeeds too,
# is refused and left as it was.
t_net_info_memfd_only() {
	local id=$CASE_ID-n py what code size USER_PREFIX
	setup_case
	oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	expect_rc 0 || return
	if [ "$MODE" = rootful ]; then py=("$PYTHON"); else
		_user_prefix
		py=("${USER_PREFIX[@]}" "$PYTHON")
	fi
	cat >"$CASE_DIR/ask.py" <<'PY'
import os, socket, struct, sys
def ask(fd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.sendmsg([struct.pack("I", 3)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])
    return struct.unpack("I", s.recv(776)[:4])[0]
tmpfs = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
os.unlink(sys.argv[2])
memfd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
print("tmpfs", ask(tmpfs), os.fstat(tmpfs).st_size)
print("memfd", ask(memfd), os.fstat(memfd).st_size > 0)
PY
	chmod 644 "$CASE_DIR/ask.py"
	run "${py[@]}" "$CASE_DIR/ask.py" "$OROOT/$id/monitor.sock" "/dev/shm/$CASE_ID-n"
	local got=$OUT err=$ERR
	oc rm "$id"
	expect_rc 0 || return
	read -r what code size <<<"$got"
	if [ "$what $size" != "tmpfs 0" ] || [ "$code" = 0 ]; then
		fail "a tmpfs file was written or not refused: $got $err"
		return
	fi
	[ "$(tail -1 <<<"$got")" = "memfd 0 True" ] || { fail "the memfd was not written: $got $err"; return; }
	end_case
}

each_mode "state directory: a fifo at state.json, a device at config.json: refused, never opened" t_state_files_unopened
each_mode "--root: walked (another user's link refused, nothing made there), the caller's own followed" t_root_walked
each_mode "state directory: a hard link at monitor.sock to another container's socket, a listener of someone else's: start refused" t_monitor_hard_link
each_mode "MONITOR_NET_INFO: a tmpfs file is refused, a memfd written" t_net_info_memfd_only
each_mode "a workspace or bind (read-only too) holding the state root: refused, nothing made" t_state_root_not_shared
done_testing
