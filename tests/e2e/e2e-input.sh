#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: input files that are hostile by their shape rather than their
# content. A config.json or --seccomp-profile nested a million levels deep
# (yajl_tree_free recursed once per level: SIGSEGV, no message); a fifo as
# --seccomp-profile, --net-allow-file, exec --process, update --resources
# or the rootfs's /etc/passwd (the reader blocked forever); /dev/zero as
# --net-allow-file (memory grew until allocation failed). Each is refused
# with exit 125 and one line naming the input, long before the run's
# 10 s timeout, and leaves nothing behind. The rootfs's /etc/passwd and
# /etc/group (also a running container's, for cordon exec's HOME) are
# never even opened unless they are regular files.
. "$(dirname "$0")/oci-lib.sh"

# A hang of the old code shows as exit 124 within this, not as a slow pass.
# shellcheck disable=SC2034 # read by lib.sh's run
E2E_RUN_TIMEOUT=10
DEPTH=1000000

# deep_json FILE PREFIX SUFFIX: PREFIX, an array nested $DEPTH deep, SUFFIX.
deep_json() {
	"$PYTHON" -c '
import sys
path, pre, post, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
open(path, "w").write(pre + "[" * n + "]" * n + post)
' "$1" "$2" "$3" "$DEPTH" || { _fail_raw "writing $1"; return 1; }
	chmod 644 "$1"
}

# A fifo the mode's user may open; nothing ever writes to it.
mk_fifo() {
	mkfifo -m 666 "$1" || { _fail_raw "mkfifo $1"; return 1; }
}


t_config_deep() {
	local id=$CASE_ID-c text
	setup_case
	mk_bundle b true || return
	# The valid config, with one more member nested a million levels deep.
	text=$(cat "$BUNDLE/config.json")
	deep_json "$BUNDLE/config.json" "${text%\}}, \"x-deep\": " "}" || return
	oc create --bundle "$BUNDLE" "$id"
	expect_cordon_error SPEC config.json || return
	expect_err_has "nested deeper than 64 levels"
	oc run --bundle "$BUNDLE" "$id"
	expect_cordon_error SPEC config.json || return
	expect_err_has "nested deeper than 64 levels"
	end_case
}

t_config_at_limit() {
	local id=$CASE_ID-l text
	setup_case
	mk_bundle b true || return
	# 64 levels in all: the config object and 63 arrays, accepted.
	text=$(cat "$BUNDLE/config.json")
	DEPTH=63 deep_json "$BUNDLE/config.json" "${text%\}}, \"x-deep\": " "}" || return
	oc run --bundle "$BUNDLE" "$id"
	expect_rc 0
	expect_err_empty "run --bundle of a config 64 deep warned or failed"
	oc delete -f "$id"
	text=$(cat "$BUNDLE/config.json")
	DEPTH=64 deep_json "$BUNDLE/config.json" "${text%\}}, \"x-deep\": " "}" || return
	oc run --bundle "$BUNDLE" "$id"
	expect_cordon_error SPEC config.json
	end_case
}

t_seccomp_profile_deep() {
	deep_json "$CASE_DIR/deep.json" '{"defaultAction": "SCMP_ACT_ALLOW", "x": ' '}' || return
	crun --seccomp-profile "$CASE_DIR/deep.json" -- true
	expect_cordon_error SPEC "--seccomp-profile $CASE_DIR/deep.json" || return
	expect_err_has "nested deeper than 64 levels"
	# yajl skips comments: a quote in one must not hide the depth after it.
	deep_json "$CASE_DIR/comment.json" '{"defaultAction": "SCMP_ACT_ALLOW", /* " */ "x": ' ' /* " */}' ||
		return
	crun --seccomp-profile "$CASE_DIR/comment.json" -- true
	expect_cordon_error SPEC "--seccomp-profile $CASE_DIR/comment.json" || return
	expect_err_has "JSON has no comments"
}

t_seccomp_profile_fifo() {
	mk_fifo "$CASE_DIR/profile" || return
	crun --seccomp-profile "$CASE_DIR/profile" -- true
	expect_cordon_error SPEC "--seccomp-profile $CASE_DIR/profile: not a regular file"
	crun --seccomp-profile /dev/zero -- true
	expect_cordon_error SPEC "--seccomp-profile /dev/zero: not a regular file"
}

t_allow_file_fifo() {
	mk_fifo "$CASE_DIR/allow" || return
	crun --net-allow-file "$CASE_DIR/allow" -- true
	expect_cordon_error NET_POLICY "$CASE_DIR/allow: not a regular file"
}

t_allow_file_dev_zero() {
	# Bounded address space, so that the old reader's growth ends here
	# and not in the host's OOM killer; the new one reads nothing.
	ulimit -S -v 1048576
	crun --net-allow-file /dev/zero -- true
	ulimit -S -v unlimited
	expect_cordon_error NET_POLICY "/dev/zero: not a regular file"
}

t_allow_file_too_large() {
	# 4 MiB and one byte of comment lines.
	"$PYTHON" -c 'import sys; open(sys.argv[1], "w").write(("#" * 1023 + "\n") * 4096 + "x")' \
		"$CASE_DIR/big.allow" && chmod 644 "$CASE_DIR/big.allow"
	crun --net-allow-file "$CASE_DIR/big.allow" -- true
	expect_cordon_error NET_POLICY "$CASE_DIR/big.allow: larger than 4194304 bytes"
}

t_exec_process_fifo() {
	setup_case
	mk_fifo "$CASE_DIR/process" || return
	# The file is read before the container is looked up.
	oc exec --process "$CASE_DIR/process" "$CASE_ID-none"
	expect_cordon_error PATH "--process $CASE_DIR/process: not a regular file"
	end_case
}

t_update_resources_fifo() {
	setup_case
	mk_fifo "$CASE_DIR/res" || return
	oc update --resources "$CASE_DIR/res" "$CASE_ID-none"
	expect_cordon_error PATH "--resources $CASE_DIR/res: not a regular file"
	end_case
}

# A device or a fifo at /etc/passwd is refused without being opened: the
# open of a device can act by itself (a tape rewinds, a watchdog starts),
# as host root when rootful, and a fifo's writer would be let in. Only an
# O_PATH look at it, never an open the inotify watch sees.
passwd_special() {
	local kind=$1
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	rm -f "$ROOTFS/etc/passwd"
	case $kind in
	fifo) mk_fifo "$ROOTFS/etc/passwd" || return ;;
	# /dev/null's numbers: whatever opens it, nothing happens to the host.
	device) mknod -m 666 "$ROOTFS/etc/passwd" c 1 3 || { _fail_raw "mknod"; return; } ;;
	esac
	watch_opens "$ROOTFS/etc/passwd" || return
	crun --user nobody -- true
	expect_cordon_error USAGE "$ROOTFS/etc/passwd: not a regular file"
	crun --user 1000 -- true
	expect_rc 0
	expect_err_empty "--user 1000 over a $kind passwd warned or failed"
	opens_seen
	[ "$OPENS" = 0 ] || fail "the $kind at the rootfs's /etc/passwd was opened (inotify saw IN_OPEN)"
}
t_rootfs_passwd_fifo_unopened() { passwd_special fifo; }
t_rootfs_passwd_device_unopened() { passwd_special device; }

# A symlink as /etc/passwd is followed inside the rootfs (images keep the
# file elsewhere; runc and crun follow it): to the image's file, and one
# aimed at the host's /etc/passwd by .. finds the rootfs's own name there
# (itself: a loop, refused), never the host's file. To a fifo it is
# refused unopened.
t_rootfs_passwd_symlink() {
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	mv "$ROOTFS/etc/passwd" "$ROOTFS/usr/passwd.real"
	ln -s ../usr/passwd.real "$ROOTFS/etc/passwd"
	crun --user sandbox -- sh -c 'id -u; echo $HOME'
	expect_rc 0
	expect_out_eq $'1000\n/home/sandbox'
	rm "$ROOTFS/etc/passwd"
	ln -s ../../../../../../../../../etc/passwd "$ROOTFS/etc/passwd"
	crun --user root -- true
	expect_cordon_error USAGE "$ROOTFS/etc/passwd"
	rm "$ROOTFS/etc/passwd"
	mk_fifo "$ROOTFS/usr/fifo" || return
	ln -s /usr/fifo "$ROOTFS/etc/passwd"
	watch_opens "$ROOTFS/usr/fifo" || return
	crun --user nobody -- true
	expect_cordon_error USAGE "$ROOTFS/etc/passwd: not a regular file"
	opens_seen
	[ "$OPENS" = 0 ] || fail "the fifo behind the rootfs's /etc/passwd was opened"
}

# A 1 GiB /etc/passwd (sparse) and a 1 GiB /etc/group: refused at once.
t_rootfs_passwd_huge() {
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	truncate -s 1G "$ROOTFS/etc/passwd" "$ROOTFS/etc/group"
	crun --user sandbox -- true
	expect_cordon_error USAGE "$ROOTFS/etc/passwd: larger than"
	crun --user 1000:staff -- true
	expect_cordon_error USAGE "$ROOTFS/etc/group: larger than"
}

# cordon exec looks up the process's HOME in the running container's
# /etc/passwd, which the container may have replaced (a writable root):
# with a fifo or a device there the exec runs at once with HOME=/, and
# the file is never opened.
exec_passwd_special() {
	local kind=$1 id=$CASE_ID-x
	setup_case
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	rm -f "$ROOTFS/etc/passwd"
	case $kind in
	fifo) mk_fifo "$ROOTFS/etc/passwd" || return ;;
	device) mknod -m 666 "$ROOTFS/etc/passwd" c 1 3 || { _fail_raw "mknod"; return; } ;;
	esac
	watch_opens "$ROOTFS/etc/passwd" || return
	# shellcheck disable=SC2016 # expanded inside the container
	oc exec --user 1000 "$id" sh -c 'echo "HOME=$HOME"'
	expect_rc 0
	expect_out_eq "HOME=/"
	opens_seen
	[ "$OPENS" = 0 ] || fail "the $kind at the container's /etc/passwd was opened (inotify saw IN_OPEN)"
	oc delete -f "$id"
	expect_rc 0
	end_case
}
t_exec_passwd_fifo() { exec_passwd_special fifo; }
t_exec_passwd_device() { exec_passwd_special device; }

# exec --user NAME[:GROUP]: looked up by the process in the sandbox's
# root as it is now (a user the sandbox added is found), by run's rules:
# HOME the entry's unless --env sets it; a link followed inside the root
# only; a fifo never opened, a huge file refused at once; a name not there
# refused. Here the session's rootfs is a copy the test changes, as a
# sandbox with a writable root would; a session and a container alike.
exec_user_name() {
	local kind=$1 id=$CASE_ID-u
	setup_case
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	if [ "$kind" = session ]; then
		oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	else
		mk_bundle b sleep "$MARK" || return
		oc create -b "$BUNDLE" "$id" && oc start "$id"
	fi
	expect_rc 0 || return
	# shellcheck disable=SC2016 # expanded inside the sandbox
	oc exec --user sandbox "$id" -- sh -c 'id -u; id -g; echo $HOME'
	expect_rc 0
	expect_out_eq $'1000\n1000\n/home/sandbox'
	# shellcheck disable=SC2016
	oc exec --user sandbox --env HOME=/tmp "$id" -- sh -c 'echo $HOME'
	expect_out_eq /tmp
	echo "added:x:1234:65534:added:/home/added:/bin/sh" >>"$ROOTFS/etc/passwd"
	oc exec --user added:nogroup "$id" -- sh -c 'echo $(id -u):$(id -g)'
	expect_rc 0
	expect_out_eq 1234:65534
	oc exec --user bob "$id" -- true
	expect_cordon_error USAGE "no user 'bob' in the sandbox's root /etc/passwd"
	oc exec --user sandbox:nosuchgroup "$id" -- true
	expect_cordon_error USAGE "no group 'nosuchgroup'"
	oc exec --user $'a\nb' "$id" -- true
	expect_cordon_error USAGE "expected UID[:GID] or NAME[:GROUP]"
	mv "$ROOTFS/etc/passwd" "$ROOTFS/usr/passwd.real"
	ln -s ../usr/passwd.real "$ROOTFS/etc/passwd"
	oc exec --user sandbox "$id" -- id -u
	expect_rc 0
	expect_out_eq 1000
	rm "$ROOTFS/etc/passwd"
	ln -s ../../../../../../../../../etc/passwd "$ROOTFS/etc/passwd"
	oc exec --user root "$id" -- true
	expect_cordon_error USAGE "the sandbox's root /etc/passwd"
	rm "$ROOTFS/etc/passwd"
	mk_fifo "$ROOTFS/usr/fifo" || return
	ln -s /usr/fifo "$ROOTFS/etc/passwd"
	watch_opens "$ROOTFS/usr/fifo" || return
	oc exec --user nobody "$id" -- true
	expect_cordon_error USAGE "the sandbox's root /etc/passwd: not a regular file"
	opens_seen
	[ "$OPENS" = 0 ] || fail "the fifo behind the sandbox's /etc/passwd was opened"
	rm "$ROOTFS/etc/passwd"
	truncate -s 1G "$ROOTFS/etc/passwd"
	oc exec --user sandbox "$id" -- true
	expect_cordon_error USAGE "the sandbox's root /etc/passwd: larger than"
	# Numbers need no entry (id itself would read the 1 GiB file).
	oc exec --user 1000 "$id" -- sh -c 'echo $(($(cat /proc/self/status | grep -c "^Uid:.1000")))'
	expect_rc 0
	expect_out_eq 1
	mv -f "$ROOTFS/usr/passwd.real" "$ROOTFS/etc/passwd"
	oc exec --user 1000 "$id" -- id -u
	expect_rc 0
	expect_out_eq 1000
	oc delete -f "$id"
	expect_rc 0
	end_case
}
t_exec_user_name_session() { exec_user_name session; }
t_exec_user_name_oci() { exec_user_name oci; }

# Ids of the image's passwd are read as digits below 2^32 - 1, or the
# entry is refused: strtoul took "abc" and "-1" and 4294967296 alike, the
# first as uid 0 (`--user NAME` ran as root), the last as 0 once cast; a
# group field that is no number gave gid 0, and so did a missing one.
t_rootfs_passwd_ids() {
	local u
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	printf '%s\n' badid:x:abc:100::/:/bin/sh bigid:x:4294967296:100::/:/bin/sh \
		minus:x:-1:100::/:/bin/sh badgid:x:1500:abc::/:/bin/sh nogid:x:1501 \
		>>"$ROOTFS/etc/passwd"
	for u in badid bigid minus; do
		crun --user "$u" -- id -u
		expect_cordon_error USAGE "the entry of '$u' has no valid id"
		expect_out_lacks 0 "--user $u ran as root"
	done
	crun --user badgid -- id -g
	expect_cordon_error USAGE "no valid group id"
	# A numeric uid whose entry's group is no number: gid = uid, not 0.
	crun --user 1500 -- id -g
	expect_rc 0
	expect_out_eq 1500
	crun --user nogid -- id -g
	expect_rc 0
	expect_out_eq 1501
}

# exec --process, update --resources and a bundle's config.json reached
# through a link of another user's (the test user against root, a uid
# nobody uses against the test user): refused by the host-path walk, as
# --seccomp-profile is (the binary before opened them by name and
# followed the links: the process and the limits were read, the
# container created from the linked config).
t_inputs_walked() {
	local sticky=$CASE_DIR/sticky theirs=$CASE_DIR/theirs
	setup_case
	mk_bundle b true || return
	mkdir -m 1777 "$sticky"
	echo '{"args": ["true"], "cwd": "/"}' >"$CASE_DIR/process.json"
	echo '{}' >"$CASE_DIR/res.json"
	chmod 644 "$CASE_DIR/process.json" "$CASE_DIR/res.json"
	ln -s "$CASE_DIR/process.json" "$sticky/plink"
	ln -s "$CASE_DIR/res.json" "$sticky/rlink"
	mkdir -m 755 "$theirs"
	ln -s "$BUNDLE/config.json" "$theirs/config.json"
	chown -h "$(other_uid)" "$sticky/plink" "$sticky/rlink" "$theirs" "$theirs/config.json"
	oc exec --process "$sticky/plink" "$CASE_ID-none"
	expect_cordon_error PATH "'plink' is a symlink of uid $(other_uid)"
	oc update --resources "$sticky/rlink" "$CASE_ID-none"
	expect_cordon_error PATH "'rlink' is a symlink of uid $(other_uid)"
	oc create --bundle "$theirs" "$CASE_ID-t"
	expect_cordon_error PATH "'config.json' is a symlink"
	oc state "$CASE_ID-t"
	expect_cordon_error STATE "does not exist"
	end_case
}

each_mode "config.json nested 1,000,000 deep: create and run --bundle refuse it" t_config_deep
each_mode "config.json nested exactly 64 deep runs, 65 is refused" t_config_at_limit
each_mode "--seccomp-profile nested 1,000,000 deep, also behind a comment: CORDON_E_SPEC" t_seccomp_profile_deep
each_mode "--seccomp-profile a fifo or /dev/zero: not a regular file" t_seccomp_profile_fifo
each_mode "--net-allow-file a fifo: not a regular file" t_allow_file_fifo
each_mode "--net-allow-file /dev/zero: not a regular file" t_allow_file_dev_zero
each_mode "--net-allow-file over 4 MiB: refused" t_allow_file_too_large
each_mode "exec --process a fifo: not a regular file" t_exec_process_fifo
each_mode "update --resources a fifo: not a regular file" t_update_resources_fifo
each_mode "rootfs /etc/passwd a fifo: refused and never opened" t_rootfs_passwd_fifo_unopened
each_mode "rootfs /etc/passwd a device: refused and never opened" t_rootfs_passwd_device_unopened
each_mode "rootfs /etc/passwd a symlink: followed inside the rootfs only" t_rootfs_passwd_symlink
each_mode "rootfs /etc/passwd and /etc/group of 1 GiB: refused at once" t_rootfs_passwd_huge
each_mode "exec: the container's /etc/passwd a fifo: HOME=/ at once, never opened" t_exec_passwd_fifo
each_mode "exec: the container's /etc/passwd a device: HOME=/ at once, never opened" t_exec_passwd_device
each_mode "exec --user NAME in a session: the sandbox's passwd and group, by run's rules" t_exec_user_name_session
each_mode "exec --user NAME in a container: the sandbox's passwd and group, by run's rules" t_exec_user_name_oci
each_mode "rootfs /etc/passwd ids: digits below 2^32-1 or refused, never root by default" t_rootfs_passwd_ids
each_mode "exec --process, update --resources, a bundle's config.json: another user's link refused" t_inputs_walked
done_testing
