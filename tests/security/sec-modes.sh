#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: nothing the workload creates or changes in a host-backed
# writable tree (the workspace, a :rw bind) carries a setuid or setgid bit
# or a file capability on the host. Rootful, the workspace of a directory
# host root owns is idmapped so that the workload's files are host root's:
# a setuid file there would be a setuid-root binary for every local user.
# Every way of setting a mode is tried (chmod, fchmod, fchmodat,
# fchmodat2, creat, open and openat with O_CREAT, O_TMPFILE, mknod,
# mknodat, openat2), under the default profile, --seccomp unconfined and a
# permissive --seccomp-profile (the mode guard), as root and as another
# user inside; then the host is searched with find -perm /6000 and getcap.
# Also: --cap-add SETFCAP is refused, and socket families outside the
# allowed few (AF_VSOCK first) answer EAFNOSUPPORT.
. "$(dirname "$0")/seclib.sh"

# action expected-result(s), one per line ("|" separates alternatives);
# @ is the writable directory under test. bb is a copy of busybox, d a
# directory, both made before the probe runs.
MODES_REFUSED='chmod:@/bb:04755 EPERM
chmod:@/bb:02755 EPERM
chmod:@/bb:06755 EPERM
chmod:@/bb:04000 EPERM
chmod:@/bb:02000 EPERM
chmod:@/bb:0x100004755 EPERM
chmod:@/bb:0xffffffff00002755 EPERM
fchmod:@/bb:04755 EPERM
fchmod:@/bb:02711 EPERM
fchmodat:@/bb:04755 EPERM
fchmodat:@/bb:02755 EPERM
fchmodat2:@/bb:04755 EPERM
fchmodat2:@/bb:02755 EPERM
chmod:@/d:02755 EPERM
creat:@/c1:04755 EPERM
creat:@/c2:02755 EPERM
open-creat:@/o1:04755 EPERM
open-creat:@/o2:0x100002755 EPERM
openat-creat:@/a1:04755 EPERM
openat-creat:@/a2:02755 EPERM
openat2-creat:@/h1:04755 ENOSYS
tmpfile:@:04755 EPERM
tmpfile:@:02755 EPERM
mknod-reg:@/n1:04755 EPERM
mknodat-reg:@/n2:02755 EPERM'

# The same calls without the bits: they work, so the refusals above are
# the bits'. (openat2 answers ENOSYS whatever it asks: libc falls back.)
MODES_ALLOWED='chmod:@/bb:0755 ok
chmod:@/bb:01777 ok
fchmod:@/bb:0700 ok
fchmodat:@/bb:0755 ok
fchmodat2:@/bb:0755 ok
chmod:@/d:01777 ok
creat:@/c3:0755 ok
open-creat:@/o3:0755 ok
openat-creat:@/a3:0644 ok
openat2-creat:@/h2:0644 ENOSYS
mknod-reg:@/n3:0755 ok
mknodat-reg:@/n4:0644 ok'

# probe_modes DIR HOSTDIR [CORDON OPTIONS...]: every attempt of both tables
# in DIR inside (HOSTDIR on the host), each answered as listed; then no
# file under HOSTDIR may carry a setuid or setgid bit or a capability.
probe_modes() {
	local dir=$1 hostdir=$2 table actions=() line want found
	shift 2
	table=${MODES_REFUSED//@/$dir}$'\n'${MODES_ALLOWED//@/$dir}
	while read -r line; do actions+=("${line%% *}"); done <<<"$table"
	crun "$@" -- sh -c "rm -rf $dir/* && cp /bin/busybox $dir/bb && mkdir $dir/d && sec-probe \"\$@\";
		chmod u+s $dir/bb 2>/dev/null && echo 'chmod u+s worked';
		chmod g+s $dir/d 2>/dev/null && echo 'chmod g+s worked'; true" sh "${actions[@]}"
	expect_rc 0 || return
	while read -r line; do
		want=${line#* }
		# shellcheck disable=SC2086
		probe_is "${line%% *}" ${want//|/ }
	done <<<"$table"
	expect_out_lacks "worked" "expected busybox chmod u+s and g+s to fail"
	found=$(find "$hostdir" -perm /6000 2>&1)
	[ -z "$found" ] || fail "setuid or setgid files on the host: $found"
	found=$(getcap -r "$hostdir" 2>&1)
	[ -z "$found" ] || fail "file capabilities on the host: $found"
}

t_workspace_root() { probe_modes /workspace "$WS"; }
t_workspace_user() { probe_modes /workspace "$WS" --user 1000:1000; }

# A :rw bind is not idmapped: rootful, the sandbox's root is an unmapped
# host uid there, so the directory is made writable for everyone. A setuid
# file of that uid would still be the sandbox's identity for anyone.
mk_rw_dir() {
	mk_dir "$1"
	chmod 0777 "$1"
}

t_rw_bind() {
	local dir=$CASE_DIR/rw
	mk_rw_dir "$dir"
	probe_modes /mnt/rw "$dir" --no-workspace --bind "$dir:/mnt/rw:rw"
}

t_guard_unconfined() {
	probe_modes /workspace "$WS" --seccomp unconfined
	probe_modes /workspace "$WS" --seccomp unconfined --user 1000:1000
}

t_guard_profile() {
	local p=$CASE_DIR/allow-all.json dir=$CASE_DIR/rw
	printf '{"defaultAction": "SCMP_ACT_ALLOW"}\n' >"$p"
	chmod 644 "$p"
	mk_rw_dir "$dir"
	probe_modes /workspace "$WS" --seccomp-profile "$p"
	probe_modes /mnt/rw "$dir" --no-workspace --seccomp-profile "$p" --bind "$dir:/mnt/rw:rw"
}

# The guard is there exactly when a host tree is writable: --print-profile
# says so, and without one (--no-workspace, read-only binds) an
# unconfined workload may set any mode in its own /tmp.
t_guard_scope() {
	local ro=$CASE_DIR/ro
	mk_dir "$ro"
	crun --seccomp unconfined --print-profile
	expect_rc 0
	expect_out_has '"mode_guard": {' "expected the guard with a workspace"
	crun --no-workspace --seccomp unconfined --bind "$ro:/mnt/ro" --print-profile
	expect_rc 0
	expect_out_has '"mode_guard": false' "expected no guard without a writable host tree"
	crun --print-profile
	expect_rc 0
	expect_out_has '"mode_guard": false' "expected no guard under the default profile (it has the checks)"
	crun --no-workspace --seccomp unconfined --bind "$ro:/mnt/ro" -- sh -c 'touch /tmp/f; sec-probe chmod:/tmp/f:04755'
	expect_rc 0
	probe_is chmod:/tmp/f:04755 ok
}

# A directory the host made setgid passes the bit to new subdirectories
# (the kernel's inheritance: the group of new entries), never to files,
# and the workload cannot set it on a file through the directory either.
t_setgid_dir_inheritance() {
	local found
	chmod 2775 "$WS"
	crun -- sh -c 'mkdir /workspace/sub && touch /workspace/f /workspace/sub/f &&
		sec-probe creat:/workspace/c:02755 open-creat:/workspace/o:0775 &&
		stat -c "%A %n" /workspace/sub'
	chmod 0755 "$WS"
	expect_rc 0
	probe_is creat:/workspace/c:02755 EPERM
	probe_is open-creat:/workspace/o:0775 ok
	expect_out_has "drwxr-sr-x /workspace/sub" "expected the subdirectory to inherit S_ISGID"
	found=$(find "$WS" -type f -perm /6000 2>&1)
	[ -z "$found" ] || fail "setuid or setgid files on the host: $found"
}

t_setfcap_refused() {
	local found
	crun --cap-add SETFCAP -- sh -c 'cp /bin/busybox /workspace/bb && sec-probe setcap:/workspace/bb'
	expect_cordon_error USAGE SETFCAP
	crun --cap-add chown,setfcap -- true
	expect_cordon_error USAGE SETFCAP
	# With every capability --cap-add grants, no file capability either.
	crun --cap-add CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,SETGID,SETUID,SETPCAP,NET_BIND_SERVICE,NET_RAW,SYS_CHROOT,MKNOD,AUDIT_WRITE \
		-- sh -c 'cp /bin/busybox /workspace/bb && sec-probe setcap:/workspace/bb'
	expect_rc 0
	probe_is setcap:/workspace/bb EPERM
	found=$(getcap -r "$WS" 2>&1)
	[ -z "$found" ] || fail "file capabilities on the host: $found"
}

SOCKETS_REFUSED='socket:40 EAFNOSUPPORT
socket:40:2 EAFNOSUPPORT
socket:40:5 EAFNOSUPPORT
socket:38:5 EAFNOSUPPORT
socket:44:3 EAFNOSUPPORT
socket:15:3 EAFNOSUPPORT
socket:31:1 EAFNOSUPPORT
socket:29:3 EAFNOSUPPORT
socket:30:5 EAFNOSUPPORT
socket:21:5 EAFNOSUPPORT
socket:0 EAFNOSUPPORT
socket:3:2 EAFNOSUPPORT
socket:46 EAFNOSUPPORT
socket:0x100000002 EAFNOSUPPORT
socket:0xffffffff00000001 EAFNOSUPPORT
socketpair:40 EAFNOSUPPORT
socketpair:2 EAFNOSUPPORT
socketpair:0x100000001 EAFNOSUPPORT'

SOCKETS_ALLOWED='socket:1 ok
socket:1:2 ok
socket:2 ok
socket:2:2 ok
socket:10 ok
socket:10:2 ok
netlink:0 ok
socketpair:1 ok
socket:17:3 EPERM'

t_socket_families() {
	local table=$SOCKETS_REFUSED$'\n'$SOCKETS_ALLOWED actions=() line want
	while read -r line; do actions+=("${line%% *}"); done <<<"$table"
	crun --no-workspace -- sec-probe "${actions[@]}"
	expect_rc 0 || return
	while read -r line; do
		want=${line#* }
		probe_is "${line%% *}" "$want"
	done <<<"$table"
	# AF_PACKET is the kernel's to refuse: with NET_RAW over the sandbox's
	# own network namespace it opens; AF_VSOCK stays refused.
	crun --no-workspace --cap-add NET_RAW -- sec-probe socket:17:3 socket:40
	expect_rc 0
	probe_is socket:17:3 ok
	probe_is socket:40 EAFNOSUPPORT
}

sec_each "no setuid/setgid mode in the workspace, as root inside" t_workspace_root
sec_each "no setuid/setgid mode in the workspace, as --user 1000" t_workspace_user
sec_each "no setuid/setgid mode in a :rw bind" t_rw_bind
sec_each "--seccomp unconfined keeps the mode guard" t_guard_unconfined
sec_each "a permissive --seccomp-profile keeps the mode guard" t_guard_profile
sec_each "the mode guard exactly when a host tree is writable" t_guard_scope
sec_each "a host setgid directory passes the bit to directories, never to files" t_setgid_dir_inheritance
sec_each "--cap-add SETFCAP is refused; no file capability on the host" t_setfcap_refused
sec_each "socket families: AF_VSOCK and all but unix, inet, inet6, netlink, packet refused" t_socket_families
done_testing
