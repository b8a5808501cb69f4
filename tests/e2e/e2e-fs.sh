#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the sandbox's filesystem: workspace ownership, read-only root, /tmp,
# --overlay, /dev, --bind.
. "$(dirname "$0")/lib.sh"

# owner_of PATH: "uid:gid" on the host.
owner_of() { stat -c %u:%g "$1" 2>/dev/null; }

# Create a file and a directory in the workspace DIR and check that the
# host sees them owned by DIR's owner.
workspace_owned_by_dir_owner() {
	local dir=$1 want got
	shift
	want=$(owner_of "$dir")
	crun --workspace "$dir" "$@" -- sh -c 'echo made-inside > /workspace/file && mkdir /workspace/dir'
	expect_rc 0 "expected the workload to write into /workspace ($dir, owner $want)" || return 1
	[ "$(cat "$dir/file" 2>/dev/null)" = made-inside ] ||
		fail "the file written in /workspace is not in $dir on the host"
	got=$(owner_of "$dir/file")
	[ "$got" = "$want" ] || fail "a file created in /workspace is owned by $got on the host, want $want (the owner of $dir)"
	got=$(owner_of "$dir/dir")
	[ "$got" = "$want" ] || fail "a directory created in /workspace is owned by $got on the host, want $want (the owner of $dir)"
}

t_workspace_owner() {
	local other=${TEST_UID:-4242}:${TEST_GID:-4242} d
	if [ "$MODE" = rootful ]; then
		d=$CASE_DIR/ws-root
		OWNER=0:0 mk_dir "$d"
		workspace_owned_by_dir_owner "$d"
		d=$CASE_DIR/ws-user
		OWNER=$other mk_dir "$d"
		workspace_owned_by_dir_owner "$d"
	else
		workspace_owned_by_dir_owner "$WS"
	fi
}

t_workspace_owner_user() {
	local other=${TEST_UID:-4242}:${TEST_GID:-4242} d
	if [ "$MODE" = rootful ]; then
		d=$CASE_DIR/ws-user
		OWNER=$other mk_dir "$d"
		workspace_owned_by_dir_owner "$d" --user 1000:1000
	else
		workspace_owned_by_dir_owner "$WS" --user 1000:1000
	fi
}

t_default_workspace_is_cwd() {
	echo from-host >"$WS/host-file"
	crun -- sh -c 'cat /workspace/host-file && echo from-sandbox > /workspace/sandbox-file'
	expect_rc 0
	expect_out_eq from-host "expected the current directory to be /workspace by default"
	[ "$(cat "$WS/sandbox-file" 2>/dev/null)" = from-sandbox ] ||
		fail "expected /workspace writes to land in the current directory"
}

t_workspace_with_submount() {
	local src=$CASE_DIR/sub-src
	is_root || { skip_or_fail "needs root to mount inside the workspace"; return; }
	mk_dir "$src" "$WS/sub"
	echo inner >"$src/f"
	mount --bind "$src" "$WS/sub" || { _fail_raw "mount --bind $src $WS/sub failed"; return; }
	crun -- cat /workspace/sub/f
	umount "$WS/sub"
	expect_rc 0 "expected a workspace with a mount inside it to work (and the mount to be visible, as with a recursive bind)"
	expect_out_eq inner
}

t_readonly_root() {
	local f=cordon-e2e-ro-$$
	crun -- sh -c "echo x > /$f"
	expect_rc_not 0 "expected writing to / to fail"
	expect_err_has "Read-only file system"
	crun -- touch "/etc/$f"
	expect_rc_not 0 "expected writing to /etc to fail"
	crun -- mkdir "/usr/$f"
	expect_rc_not 0 "expected mkdir in /usr to fail"
	crun -- sh -c "awk '\$2 == \"/\" { print \$4 }' /proc/mounts"
	[[ $OUT == ro,* || $OUT == ro ]] || fail "expected / mounted ro"
	check "nothing reached the host rootfs" test ! -e "$ROOTFS/$f" -a ! -e "$ROOTFS/etc/$f" -a ! -e "$ROOTFS/usr/$f"
}

t_tmp() {
	crun -- sh -c 'echo hi > /tmp/f && cat /tmp/f; cp /bin/busybox /tmp/bb && chmod 755 /tmp/bb; /tmp/bb true; echo "exec=$?"; stat -c %a /tmp'
	expect_out_has hi "expected /tmp to be writable"
	expect_out_has "exec=126" "expected executing a copy of busybox from /tmp to fail with 126 (noexec)"
	expect_err_has "Permission denied" "expected 'Permission denied' from the exec in /tmp"
	expect_out_has 1777 "expected /tmp to be mode 1777"
	crun -- sh -c "awk '\$2 == \"/tmp\" { print \$3, \$4 }' /proc/mounts"
	expect_rc 0
	for opt in nosuid nodev noexec size=262144k; do
		[[ ",${OUT#* }," == *",$opt,"* ]] || fail "expected /tmp mounted with $opt (default 256 MB)"
	done
	[[ $OUT == tmpfs\ * ]] || fail "expected /tmp to be a tmpfs"
	crun --tmpfs-size 64 -- sh -c "awk '\$2 == \"/tmp\" { print \$4 }' /proc/mounts"
	[[ ",$OUT," == *",size=65536k,"* ]] || fail "expected --tmpfs-size 64 to give size=65536k"
}

t_overlay() {
	local f=cordon-e2e-overlay-$$
	if [ "$MODE" = rootless ] && [ "$(stat -c %u "$CORDON_ROOTFS/etc")" != "$TEST_UID" ]; then
		# Rootless, a root-owned /etc is owned by an unmapped id (nobody)
		# inside, which no sandbox root may write to, overlay or not. A
		# rootless user runs a rootfs of their own: give the user a copy.
		ROOTFS=$CASE_DIR/user-rootfs
		copy_rootfs "$ROOTFS" || return
		chown -R -h "$TEST_UID:$TEST_GID" "$ROOTFS" ||
			{ _fail_raw "could not give $ROOTFS to $TEST_UID"; return; }
	fi
	crun --overlay -- sh -c "echo changed > /etc/$f && cat /etc/$f && echo more >> /etc/passwd && rm /etc/hosts && echo done"
	expect_rc 0 "expected writes to /etc to succeed with --overlay"
	expect_out_eq $'changed\ndone'
	crun --overlay -- sh -c "test -e /etc/$f; echo \$?; grep -c more /etc/passwd; test -e /etc/hosts; echo \$?"
	expect_out_eq $'1\n0\n0' "expected the next run to see none of the earlier overlay's changes"
	crun -- test -e "/etc/$f"
	expect_rc 1 "expected the file to be absent without --overlay"
	check "the overlay's file is absent from the host rootfs" test ! -e "$ROOTFS/etc/$f"
	check "the host rootfs's /etc/passwd is unchanged" bash -c "! grep -q '^more$' '$ROOTFS/etc/passwd'"
	check "the host rootfs's /etc/hosts is still there" test -e "$ROOTFS/etc/hosts"
}

t_dev() {
	local extra
	crun -- ls -A /dev
	expect_rc 0
	for n in null zero full random urandom tty pts shm mqueue fd stdin stdout stderr; do
		grep -qx "$n" <<<"$OUT" || fail "expected /dev/$n"
	done
	extra=$(printf '%s\n' "$OUT" | grep -vxE 'null|zero|full|random|urandom|tty|pts|shm|mqueue|fd|stdin|stdout|stderr|ptmx|console')
	[ -z "$extra" ] || fail "unexpected entries in /dev: $(echo $extra)"
	crun -- sh -c 'echo x > /dev/null && head -c 5 /dev/zero | wc -c && head -c 7 /dev/urandom | wc -c && readlink /dev/fd && ls /dev/pts; echo x > /dev/full; echo full=$?'
	expect_out_has $'5\n7\n/proc/self/fd' "expected working null, zero, urandom and /dev/fd -> /proc/self/fd"
	expect_out_has ptmx "expected /dev/pts/ptmx"
	expect_out_has "full=1" "expected writing to /dev/full to fail"
}

t_bind() {
	local src=$CASE_DIR/bindsrc
	mk_dir "$src"
	chmod 777 "$src"
	echo bound >"$src/f"
	chmod 644 "$src/f"
	crun --bind "$src:/mnt" -- sh -c 'cat /mnt/f; touch /mnt/new; echo "touch=$?"'
	expect_out_has bound "expected the bind's content at /mnt"
	expect_out_has "touch=1" "expected a --bind without mode to be read-only"
	crun --bind "$src:/mnt:ro" -- sh -c 'touch /mnt/new; echo "touch=$?"'
	expect_out_has "touch=1" "expected a :ro bind to be read-only"
	check "nothing written through read-only binds" test ! -e "$src/new"
	crun --bind "$src:/mnt:rw" -- sh -c 'echo written > /mnt/new; echo "write=$?"'
	expect_out_has "write=0" "expected a :rw bind to be writable"
	[ "$(cat "$src/new" 2>/dev/null)" = written ] || fail "expected the write through the :rw bind on the host"
}

t_proc_fresh() {
	crun -- sh -c 'readlink /proc/self; cat /proc/1/cmdline | tr "\0" " "; echo; ls /proc/sys >/dev/null && echo sys-ok'
	expect_rc 0
	[[ ${OUT%%$'\n'*} =~ ^[0-9]+$ ]] && [ "${OUT%%$'\n'*}" -lt 10 ] ||
		fail "expected /proc/self to be a small pid of the sandbox's own pid namespace"
	expect_out_has sys-ok
	crun -- sh -c 'echo 1 > /proc/sys/kernel/hostname'
	expect_rc_not 0 "expected /proc/sys to be read-only"
}

each_mode "workspace: files owned on the host by the workspace dir's owner" t_workspace_owner
each_mode "workspace: same with --user 1000:1000" t_workspace_owner_user
each_mode "workspace: the current directory by default" t_default_workspace_is_cwd
each_mode "workspace: a mount inside the workspace dir is visible (recursive bind)" t_workspace_with_submount
each_mode "read-only root: writes to /, /etc, /usr fail" t_readonly_root
each_mode "/tmp: writable tmpfs, noexec (exec gives 126), nosuid, nodev, 1777, size" t_tmp
each_mode "--overlay: /etc writable, gone in the next run, host rootfs untouched" t_overlay
each_mode "/dev: exactly the minimal devices, and they work" t_dev
each_mode "--bind: read-only by default and with :ro, writable with :rw" t_bind
each_mode "/proc: fresh for the pid namespace, /proc/sys read-only" t_proc_fresh
done_testing
