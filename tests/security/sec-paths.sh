#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: host paths are checked and used as one object. A hostile user
# who owns a directory on the path of a --workspace or a rootfs swaps the
# checked directory with a symlink (to /etc, to /) while root starts
# sandboxes on it: not one start may see the swapped-in tree; each either
# gets the real directory or fails closed (CORDON_E_PATH). And the
# ownership rule: a symlink or '..' by which that user's directory leads
# into root's is refused for host root, fine for the user itself.
. "$(dirname "$0")/seclib.sh"

SWAP=$(dirname "$0")/swap.py
case $SWAP in /*) ;; *) SWAP=$PWD/$SWAP ;; esac
RACE_RUNS=${RACE_RUNS:-200}

# D: the hostile user's directory, with a real directory and a symlink
# the swapper exchanges.
setup_hostile_dir() {
	D=$CASE_DIR/hostile
	mkdir -p "$D"
	chown "$TEST_UID:$TEST_GID" "$D"
}

# Start the swapper as the test user on D/$1 <-> D/$2; SWAPPER its pid.
start_swapper() {
	local log=$CASE_DIR/swap.log
	: >"$log"
	chmod 0666 "$log"
	runuser -u "$CORDON_TEST_USER" -- python3 "$SWAP" "$D/$1" "$D/$2" >"$log" 2>&1 &
	SWAPPER=$!
	wait_until "$WAIT_LIMIT" grep -q swapping "$log" ||
		{ fail "the swapper never swapped: $(cat "$log")"; return 1; }
}

stop_swapper() {
	kill "$SWAPPER" 2>/dev/null
	wait "$SWAPPER" 2>/dev/null
	# Put the real directory back under its name for the leftover checks.
	[ -L "$D/$1" ] && mv -T "$D/$1" "$D/tmp.$$" && mv -T "$D/$2" "$D/$1" &&
		mv -T "$D/tmp.$$" "$D/$2"
	return 0
}

# Tally one start: OUT/ERR/RC of a run that must print $1 or fail closed.
tally() {
	if [ "$RC" -eq 0 ] && [ "$OUT" = "$1" ]; then
		GOOD=$((GOOD + 1))
	elif [ "$RC" -eq 125 ] && [[ $ERR =~ ^cordon:\ CORDON_E_(PATH|ROOTFS):\  ]]; then
		CLOSED=$((CLOSED + 1))
	else
		BAD=$((BAD + 1))
		[ "$BAD" -gt 3 ] || fail "run $2: rc=$RC out=$(head -c 200 <<<"$OUT") err=$ERR"
	fi
}

t_workspace_swap() {
	setup_hostile_dir
	mkdir "$D/ws"
	echo ws-marker >"$D/ws/ws-marker"
	chown -R "$TEST_UID:$TEST_GID" "$D/ws"
	ln -s /etc "$D/link"
	# The control: unswapped, the workspace is what the sandbox sees.
	run "$CORDON" run --workspace "$D/ws" "$ROOTFS" -- ls /workspace
	expect_rc 0 && expect_out_eq ws-marker || return
	start_swapper ws link || return
	GOOD=0 CLOSED=0 BAD=0
	for i in $(seq "$RACE_RUNS"); do
		run "$CORDON" run --workspace "$D/ws" "$ROOTFS" -- ls /workspace
		tally ws-marker "$i"
	done
	stop_swapper ws link
	diag "$RACE_RUNS starts: $GOOD saw the workspace, $CLOSED failed closed, $BAD saw another tree"
	[ "$BAD" -eq 0 ] || fail "$BAD of $RACE_RUNS starts mounted what the swap put there"
}

t_rootfs_swap() {
	setup_hostile_dir
	cp -a "$ROOTFS" "$D/root"
	echo rootfs-marker >"$D/root/rootfs-marker"
	ln -s / "$D/link"
	run "$CORDON" run --no-workspace "$D/root" -- cat /rootfs-marker
	expect_rc 0 && expect_out_eq rootfs-marker || return
	start_swapper root link || return
	GOOD=0 CLOSED=0 BAD=0
	for i in $(seq "$RACE_RUNS"); do
		run "$CORDON" run --no-workspace "$D/root" -- cat /rootfs-marker
		tally rootfs-marker "$i"
	done
	stop_swapper root link
	diag "$RACE_RUNS starts: $GOOD on the rootfs, $CLOSED failed closed, $BAD on another root"
	[ "$BAD" -eq 0 ] || fail "$BAD of $RACE_RUNS starts had the swapped-in tree as root"
}

# The test user's symlink to root's /etc, and '..' out of its directory.
t_unsafe_transition_rootful() {
	setup_hostile_dir
	ln -s /etc "$D/etclink"
	mkdir "$D/sub"
	chown -h "$TEST_UID:$TEST_GID" "$D/etclink" "$D/sub"
	run "$CORDON" run --workspace "$D/etclink" "$ROOTFS" -- true
	expect_cordon_error PATH "'etclink'"
	run "$CORDON" run --no-workspace --bind "$D/etclink:/mnt/x" "$ROOTFS" -- true
	expect_cordon_error PATH "'etclink'"
	run "$CORDON" run --workspace "$D/sub/../.." "$ROOTFS" -- true
	expect_cordon_error PATH "'..'"
	# Files read once by name follow the same rule (root's files behind them).
	echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$CASE_DIR/profile.json"
	echo 192.0.2.1 >"$CASE_DIR/allow.txt"
	ln -s "$CASE_DIR/profile.json" "$D/plink"
	ln -s "$CASE_DIR/allow.txt" "$D/alink"
	chown -h "$TEST_UID:$TEST_GID" "$D/plink" "$D/alink"
	run "$CORDON" run --no-workspace --seccomp-profile "$D/plink" "$ROOTFS" -- true
	expect_cordon_error PATH "'plink'"
	run "$CORDON" run --no-workspace --net-allow-file "$D/alink" "$ROOTFS" -- true
	expect_cordon_error PATH "'alink'"
	# --result-json's directory: root's write never lands in /etc.
	run "$CORDON" run --no-workspace --result-json "$D/etclink/cordon-sec-paths.json" "$ROOTFS" -- true
	expect_cordon_error PATH "'etclink'"
	[ ! -e /etc/cordon-sec-paths.json ] || { rm -f /etc/cordon-sec-paths.json; fail "the result was written into /etc"; }
	# In a sticky, world-writable directory of root's (a /tmp), the user's
	# relative link to root's sibling directory: the sibling is not "below"
	# anything of the user's.
	mkdir -m 1777 "$CASE_DIR/sticky"
	mkdir -m 0700 "$CASE_DIR/sticky/rootdir"
	echo root-secret >"$CASE_DIR/sticky/rootdir/secret"
	runuser -u "$CORDON_TEST_USER" -- ln -s rootdir "$CASE_DIR/sticky/userjob"
	run "$CORDON" run --workspace "$CASE_DIR/sticky/userjob" "$ROOTFS" -- cat /workspace/secret
	expect_cordon_error PATH "'userjob'"
	expect_out_lacks root-secret "the user's link in /tmp gave the sandbox root's directory"
	run "$CORDON" run --no-workspace --result-json "$CASE_DIR/sticky/userjob/out.json" "$ROOTFS" -- true
	expect_cordon_error PATH "'userjob'"
	[ ! -e "$CASE_DIR/sticky/rootdir/out.json" ] || fail "the result was written into root's directory"
	# A second name for root's file in the user's directory (a hard link,
	# as fs.protected_hardlinks=0 would let the user make): refused.
	ln "$CASE_DIR/profile.json" "$D/hardlink"
	run "$CORDON" run --no-workspace --seccomp-profile "$D/hardlink" "$ROOTFS" -- true
	expect_cordon_error PATH "'hardlink'"
	# "file/" is a directory or nothing, as for the kernel.
	run "$CORDON" run --no-workspace --bind "$CASE_DIR/allow.txt/:/mnt/x" "$ROOTFS" -- true
	expect_rc 125
	expect_err_has "Not a directory"
	# Root's own symlink in the same place leads where root put it.
	ln -s "$D/sub" "$CASE_DIR/rootlink"
	run "$CORDON" run --workspace "$CASE_DIR/rootlink" "$ROOTFS" -- true
	expect_rc 0
}

# The same paths for the user who owns them: no privilege is crossed.
t_unsafe_transition_rootless() {
	setup_hostile_dir
	ln -s /etc "$D/etclink"
	chown -h "$TEST_UID:$TEST_GID" "$D/etclink"
	cordon run --no-workspace --bind "$D/etclink:/mnt" "$ROOTFS" -- cat /mnt/hostname
	expect_rc 0
	expect_out_eq "$(cat /etc/hostname)"
}

# A second name in a directory everyone can add names to (a sticky /tmp
# of root's): whoever made it, it may name any file, root's among them
# (fs.protected_hardlinks=0 lets a user link /etc/shadow; root makes the
# links here, as the user then could). The walk trusted root's /tmp and
# took such a link for the file (the binary before bound root's file
# read-write and read the profile and the allowlist); a file with one
# name there is used as before.
t_sticky_hard_link() {
	local sticky=$CASE_DIR/sticky
	new_mark
	mkdir -m 1777 "$sticky"
	echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$CASE_DIR/profile.json"
	echo 192.0.2.1 >"$CASE_DIR/allow.txt"
	echo "root-data-$MARK" >"$CASE_DIR/rootfile"
	chmod 644 "$CASE_DIR/profile.json" "$CASE_DIR/allow.txt" "$CASE_DIR/rootfile"
	ln "$CASE_DIR/rootfile" "$sticky/r"
	ln "$CASE_DIR/profile.json" "$sticky/p"
	ln "$CASE_DIR/allow.txt" "$sticky/a"
	cordon run --no-workspace --bind "$sticky/r:/mnt/r:rw" "$ROOTFS" -- cat /mnt/r
	expect_cordon_error PATH "'r' has 2 names"
	expect_out_lacks "root-data-$MARK" "the sandbox got root's file through a link in a sticky directory"
	cordon run --no-workspace --seccomp-profile "$sticky/p" "$ROOTFS" -- true
	expect_cordon_error PATH "'p' has 2 names"
	cordon run --no-workspace --net-allow-file "$sticky/a" "$ROOTFS" -- true
	expect_cordon_error PATH "'a' has 2 names"
	echo "single-$MARK" >"$sticky/single"
	chmod 644 "$sticky/single"
	cordon run --no-workspace --bind "$sticky/single:/mnt/s" "$ROOTFS" -- cat /mnt/s
	expect_rc 0
	expect_out_eq "single-$MARK"
}

sec_rootful "workspace swapped with a symlink to /etc: never mounted" t_workspace_swap
sec_rootful "rootfs swapped with a symlink to /: never the root" t_rootfs_swap
sec_rootful "symlink or .. from the user's directory into root's: refused" t_unsafe_transition_rootful
sec_rootless "the same symlink for its owner: followed" t_unsafe_transition_rootless
sec_each "a hard link in a sticky directory of root's: refused, whoever owns the file" t_sticky_hard_link

done_testing
