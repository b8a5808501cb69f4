#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: the filesystem boundary. Crafted symlinks in the rootfs, the
# workspace and --bind destinations must not reach host files; API
# filesystem mount points that are symlinks are refused; setuid files in
# the rootfs do not raise privilege; mount flags of the root, /dev and
# /tmp; the device set of /dev.
. "$(dirname "$0")/seclib.sh"

# The host side every escape aims at: a world-writable directory with a
# world-writable file holding a marker, so that a failed write is the
# sandbox's doing and not a permission the test forgot.
HOST=$E2E_TMP/host
mkdir -p "$HOST/bindtarget" "$HOST/bindtarget-rel"
echo "host-secret-marker" >"$HOST/target"
chmod 0777 "$HOST" "$HOST/bindtarget" "$HOST/bindtarget-rel"
chmod 0666 "$HOST/target"
# Enough ../ to climb out of any root, then the host path.
DOTDOT=../../../../../../../../../../../..

# Symlinks in the rootfs copy: absolute and relative to the host file,
# to its directory, and --bind destinations pointing out and in.
ln -s "$HOST/target" "$SEC_ROOTFS/etc/evil-abs"
ln -s "$DOTDOT$HOST/target" "$SEC_ROOTFS/etc/evil-rel"
ln -s "$HOST" "$SEC_ROOTFS/etc/evil-dir"
ln -s "$HOST/bindtarget" "$SEC_ROOTFS/mnt/out-abs"
ln -s "$DOTDOT$HOST/bindtarget-rel" "$SEC_ROOTFS/mnt/out-rel"
ln -s /home "$SEC_ROOTFS/mnt/in-abs"

# Setuid copies of the probe: owned by host root (sandbox root when
# rootful, the rootfs being idmapped) and by the test user (sandbox root
# when rootless, where the caller maps to uid 0).
install -m 6755 "$SEC_PROBE" "$SEC_ROOTFS/bin/suid-root"
install -m 6755 "$SEC_PROBE" "$SEC_ROOTFS/bin/suid-user"
if is_root && [ -n "${TEST_UID:-}" ]; then
	chown "$TEST_UID:$TEST_GID" "$SEC_ROOTFS/bin/suid-user"
	chmod 6755 "$SEC_ROOTFS/bin/suid-user"
fi

# Links to the fds a cordon process might still hold at the workload's
# chdir or execve (the CVE-2024-21626 pattern), a marker and a probe in
# the rootfs copy's own /tmp (hidden inside by the sandbox's tmpfs: only
# a host-side view of the directory shows them), and a plain symlinked
# directory as the positive control.
for n in $(seq 3 40); do
	ln -s "/proc/self/fd/$n" "$SEC_ROOTFS/fdlink$n"
done
echo "host-view-marker" >"$SEC_ROOTFS/tmp/.cordon-host-marker"
install -m 0755 "$SEC_PROBE" "$SEC_ROOTFS/tmp/.cordon-host-probe"
ln -s /usr "$SEC_ROOTFS/applink"

# A second copy whose /proc, /dev, /tmp become symlinks to a host dir.
EVILROOT=$E2E_TMP/evilroot
sec_copy_rootfs "$EVILROOT" || { echo "Bail out! cannot copy the rootfs"; _done=1; exit 1; }

SRC=$E2E_TMP/bindsrc
mkdir -p "$SRC"
echo bind-content >"$SRC/f"
chmod -R a+rX "$SRC"

HOST_PATHS=("$HOST")

# Host-owned files (uid 0, not mapped into any sandbox) to bind :rw.
OWNED=$E2E_TMP/hostowned
mkdir -p "$OWNED"
echo "owned-secret-marker" >"$OWNED/secret"
echo "owned-public" >"$OWNED/pub"
chmod 0755 "$OWNED"
chmod 0600 "$OWNED/secret"
chmod 0644 "$OWNED/pub"

t_rootfs_symlinks() {
	local before
	before=$(host_snap "${HOST_PATHS[@]}")
	crun --no-workspace -- sh -c '
		for l in /etc/evil-abs /etc/evil-rel /etc/evil-dir/target; do
			if cat "$l" 2>/dev/null | grep -q host-secret-marker; then echo "read $l"; fi
			if (echo pwned >"$l") 2>/dev/null; then echo "wrote $l"; fi
		done
		(echo pwned >/etc/evil-dir/new) 2>/dev/null && echo "created /etc/evil-dir/new"
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected no read and no write through the rootfs symlinks"
	expect_host_unchanged "$before" "${HOST_PATHS[@]}"
}

t_rootfs_symlinks_overlay() {
	local before
	before=$(host_snap "${HOST_PATHS[@]}")
	# The overlay makes the root writable: the link's target can now be
	# created, inside the sandbox. It must land there, not on the host.
	crun --overlay --no-workspace -- sh -c "
		mkdir -p '$HOST' || exit 3
		echo pwned >/etc/evil-abs || exit 4
		echo pwned >/etc/evil-rel || exit 5
		echo pwned >/etc/evil-dir/new || exit 6
		cat '$HOST/target'"
	expect_rc 0
	expect_out_eq pwned "expected the writes to land in the sandbox's own $HOST"
	expect_host_unchanged "$before" "${HOST_PATHS[@]}"
}

t_workspace_symlinks() {
	local before
	ln -s "$HOST/target" "$WS/link-abs"
	ln -s "$DOTDOT$HOST/target" "$WS/link-rel"
	ln -s "$HOST" "$WS/link-dir"
	before=$(host_snap "${HOST_PATHS[@]}")
	crun -- sh -c '
		for l in /workspace/link-abs /workspace/link-rel /workspace/link-dir/target; do
			if cat "$l" 2>/dev/null | grep -q host-secret-marker; then echo "read $l"; fi
			if (echo pwned >"$l") 2>/dev/null; then echo "wrote $l"; fi
		done
		(echo pwned >/workspace/link-dir/new) 2>/dev/null && echo "created link-dir/new"
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected no read and no write through workspace symlinks"
	expect_host_unchanged "$before" "${HOST_PATHS[@]}"
}

# A --bind destination that is a symlink out of the root is either
# refused or resolved inside the root; never mounted (or created) on the
# host path it names.
t_bind_dst_symlink_out() {
	local before dst
	before=$(host_snap "${HOST_PATHS[@]}")
	for dst in /mnt/out-abs /mnt/out-rel; do
		crun --no-workspace --bind "$SRC:$dst:rw" -- sh -c "cat $dst/f && echo x >$dst/g"
		if [ "$RC" = 125 ]; then
			expect_cordon_error 'ROOTFS|PATH|MOUNT' "$dst"
		else
			expect_rc 0 "expected $dst refused (125) or the bind inside the sandbox"
			expect_out_eq bind-content
		fi
	done
	expect_host_unchanged "$before" "${HOST_PATHS[@]}"
	[ -z "$(find "$HOST/bindtarget" "$HOST/bindtarget-rel" -mindepth 1)" ] ||
		_fail_raw "a host directory named by a symlinked --bind destination got content"
	rm -f "$SRC/g"
}

t_bind_dst_symlink_in() {
	local before
	before=$(host_snap "$SEC_ROOTFS/home")
	crun --no-workspace --bind "$SRC:/mnt/in-abs" -- sh -c 'cat /home/f; cat /mnt/in-abs/f'
	if [ "$RC" = 125 ]; then
		expect_cordon_error 'ROOTFS|PATH|MOUNT' /mnt/in-abs
	else
		expect_rc 0
		expect_out_eq $'bind-content\nbind-content' "expected the bind on the link's target inside the root (/home)"
	fi
	expect_host_unchanged "$before" "$SEC_ROOTFS/home"
}

t_api_mountpoint_symlinks() {
	local d before
	mkdir -p "$HOST/apitarget"
	chmod 0777 "$HOST/apitarget"
	before=$(host_snap "${HOST_PATHS[@]}")
	for d in proc dev tmp; do
		mv "$EVILROOT/$d" "$EVILROOT/$d.real"
		ln -s "$HOST/apitarget" "$EVILROOT/$d"
		ROOTFS=$EVILROOT crun --no-workspace -- true
		rm "$EVILROOT/$d"
		mv "$EVILROOT/$d.real" "$EVILROOT/$d"
		expect_cordon_error ROOTFS "/$d"
	done
	expect_host_unchanged "$before" "${HOST_PATHS[@]}"
	rmdir "$HOST/apitarget"
}

t_setuid_binary() {
	local f
	if [ "$MODE" = rootful ]; then f=/bin/suid-root; else f=/bin/suid-user; fi
	# The file must look setuid-root inside, or the case proves nothing.
	crun --no-workspace -- stat -c '%u %a' "$f"
	expect_rc 0
	expect_out_eq "0 6755" "expected $f to be setuid root inside the sandbox" || return
	crun --no-workspace --user 1000:1000 -- "$f" ids setuid:0
	expect_rc 0
	probe_is ids 1000,1000,1000:1000,1000,1000
	probe_is setuid:0 EPERM
	crun --no-workspace --user 1000:1000 -- sh -c "$f ids; grep -E '^(CapEff|CapPrm):' /proc/self/status"
	expect_rc 0
	probe_is ids 1000,1000,1000:1000,1000,1000
	[[ $OUT == *$'CapPrm:\t0000000000000000'*$'CapEff:\t0000000000000000'* ]] ||
		fail "expected no capabilities for uid 1000"
}

t_mount_flags() {
	local o
	crun -- cat /proc/self/mountinfo
	expect_rc 0
	o=$(mount_opts /)
	for f in ro nosuid nodev; do has_opt "$o" $f || fail "expected / mounted $f, got '$o'"; done
	o=$(mount_opts /dev)
	for f in nosuid noexec; do has_opt "$o" $f || fail "expected /dev mounted $f, got '$o'"; done
	o=$(mount_opts /tmp)
	for f in nosuid nodev noexec; do has_opt "$o" $f || fail "expected /tmp mounted $f, got '$o'"; done
	o=$(mount_opts /dev/shm)
	for f in nosuid nodev noexec; do has_opt "$o" $f || fail "expected /dev/shm mounted $f, got '$o'"; done
	o=$(mount_opts /workspace)
	for f in nosuid nodev; do has_opt "$o" $f || fail "expected /workspace mounted $f, got '$o'"; done

	# What the flags mean: the root is not writable, /tmp and /dev/shm
	# hold no executables.
	crun -- sh -c '
		touch /bin/x 2>/dev/null && echo "wrote /bin"
		touch /etc/x 2>/dev/null && echo "wrote /etc"
		cp /bin/sec-probe /tmp/p && /tmp/p ids >/dev/null 2>&1 && echo "exec /tmp"
		cp /bin/sec-probe /dev/shm/p && /dev/shm/p ids >/dev/null 2>&1 && echo "exec /dev/shm"
		cp /bin/sec-probe /dev/p 2>/dev/null && /dev/p ids >/dev/null 2>&1 && echo "exec /dev"
		echo done'
	expect_rc 0
	expect_out_eq "done"
}

t_dev_contents() {
	crun --no-workspace -- sh -c 'ls -A /dev | tr "\n" " "; echo; ls -A /dev/pts | tr "\n" " "; echo;
		find /dev -type b | wc -l'
	expect_rc 0
	expect_out_eq $'fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero \nptmx \n0' \
		"expected exactly the documented /dev entries and no block devices"
	# No device can be made, with CAP_MKNOD granted or not (a user
	# namespace never may), on /dev (a tmpfs the sandbox root owns) or
	# /dev/shm.
	crun --no-workspace --cap-add MKNOD -- sec-probe mknod:/dev/mem2 mknod:/dev/shm/null2 mknod:/tmp/null2
	expect_rc 0
	probe_is mknod:/dev/mem2 EPERM
	probe_is mknod:/dev/shm/null2 EPERM
	probe_is mknod:/tmp/null2 EPERM
}

# chroot with CAP_SYS_CHROOT granted: the classic fd-and-climb escape
# ends at the sandbox's root (pivot_root left no way to the host's).
t_chroot_escape() {
	local marker
	marker=$(readlink -f "$CORDON")
	crun --no-workspace --cap-add SYS_CHROOT -- sec-probe "chroot-escape:$marker"
	expect_rc 0
	probe_is "chroot-escape:$marker" contained
	crun --no-workspace --cap-add SYS_CHROOT -- sh -c "sec-probe chroot-escape:/bin/sec-probe"
	# ... and it did leave the jail: the sandbox root's files are there.
	probe_is chroot-escape:/bin/sec-probe escaped
}

# The safe capabilities act only on what the sandbox owns: files of an
# unmapped host user in a :rw bind stay out of reach.
t_caps_vs_host_files() {
	local before
	is_root || { skip_or_fail "needs root to create files of an unmapped host user"; return; }
	before=$(host_snap "$OWNED")
	crun --no-workspace --bind "$OWNED:/mnt/h:rw" --cap-add DAC_OVERRIDE,CHOWN,FOWNER,FSETID,SETUID,SETGID -- sh -c '
		cat /mnt/h/secret 2>/dev/null && echo "read secret"
		chown 0:0 /mnt/h/pub 2>/dev/null && echo "chowned pub"
		chmod 0666 /mnt/h/pub 2>/dev/null && echo "chmodded pub"
		(echo x >>/mnt/h/pub) 2>/dev/null && echo "appended pub"
		touch /mnt/h/new 2>/dev/null && echo "created new"
		rm -f /mnt/h/pub 2>/dev/null && echo "removed pub"
		mv /mnt/h/secret /mnt/h/s2 2>/dev/null && echo "renamed secret"
		touch -d "2000-01-01" /mnt/h/pub 2>/dev/null && echo "touched pub"
		cat /mnt/h/pub'
	expect_rc 0
	expect_out_eq owned-public "expected the host-owned files readable only as 'other' and otherwise untouchable"
	expect_host_unchanged "$before" "$OWNED"
}

# --cwd through /proc/self/fd/N for every fd a cordon process could hold:
# the workload must never start in a host directory (the rootfs seen from
# the host, the state directory, the host's root).
t_cwd_through_fd_links() {
	local n ws escaped=
	crun --no-workspace --cwd /applink -- pwd
	expect_rc 0
	expect_out_eq /usr "expected the positive control to start in /usr"
	for ws in --no-workspace ""; do
		for n in $(seq 3 40); do
			# shellcheck disable=SC2086 # ws is one flag or none
			crun $ws --env "PFX=$CASE_ID" --cwd "/fdlink$n" -- sh -c '
				cat tmp/.cordon-host-marker 2>/dev/null
				ls -a . .. 2>/dev/null | grep -q "^$PFX" && echo "state directory"
				ls -a ../.. 2>/dev/null | grep -qx boot && echo "host root"
				true'
			[ -n "$OUT" ] && escaped="$escaped fd $n${ws:+ $ws}: $OUT;"
		done
	done
	[ -z "$escaped" ] || {
		fail "the workload started in a host directory:$escaped"
		return
	}
	# A magic link as the cwd is refused with the path's name.
	crun --no-workspace --cwd /fdlink4 -- true
	expect_cordon_error PATH fdlink4
}

# execve of a path through /proc/self/fd/N: by the time the workload's
# program is looked up, no fd of cordon's is left to walk through.
t_exec_through_fd_links() {
	local n ran=
	for n in $(seq 3 40); do
		crun --no-workspace --cwd / -- "./fdlink$n/tmp/.cordon-host-probe" ids
		[ "$RC" -eq 0 ] && ran="$ran $n"
	done
	[ -z "$ran" ] || {
		fail "a program was run from the host's view of the rootfs through fd(s)$ran"
		return
	}
}

# The init's and an exec'd process's visible command line and environment.
t_proc1_cmdline() {
	crun --no-workspace --env CORDON_SECRET=hunter2-marker -- sh -c '
		tr "\0" " " </proc/1/cmdline; echo
		cat /proc/1/comm
		cat /proc/1/environ 2>/dev/null | tr "\0" "\n" | grep -c hunter2'
	expect_rc_not 0
	expect_out_has "cordon-init" "expected pid 1 to show a fixed name"
	expect_out_lacks "hunter2" "expected no --env value in /proc/1"
	expect_out_lacks "$ROOTFS" "expected no host path in /proc/1/cmdline"
}

sec_each "rootfs symlinks to host files are not followed out" t_rootfs_symlinks
sec_each "rootfs symlinks with --overlay write inside only" t_rootfs_symlinks_overlay
sec_each "workspace symlinks to host files are not followed out" t_workspace_symlinks
sec_each "--bind destination symlinked out of the root stays inside" t_bind_dst_symlink_out
sec_each "--bind destination symlinked inside the root lands inside" t_bind_dst_symlink_in
sec_each "rootfs /proc, /dev, /tmp as symlinks are refused" t_api_mountpoint_symlinks
sec_each "setuid-root binary in the rootfs does not raise privilege" t_setuid_binary
sec_each "root ro,nosuid,nodev; /dev nosuid,noexec; /tmp, /dev/shm noexec" t_mount_flags
sec_each "/dev has only the documented devices; no mknod" t_dev_contents
sec_each "--cwd through /proc/self/fd/N never starts in a host directory" t_cwd_through_fd_links
sec_each "execve through /proc/self/fd/N finds no fd of cordon's" t_exec_through_fd_links
sec_each "/proc/1 shows a fixed name, no --env value, no host path" t_proc1_cmdline
sec_each "--cap-add SYS_CHROOT: a chroot escape ends at the sandbox root" t_chroot_escape
sec_each "--cap-add DAC_OVERRIDE,CHOWN,FOWNER: host-owned files in a :rw bind untouched" t_caps_vs_host_files
done_testing
