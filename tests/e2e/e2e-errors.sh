#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: bad input. Each is refused with exit 125 and one stderr line
# `cordon: CORDON_E_<CODE>: message` naming the offending flag or path,
# and leaves nothing behind (the leftover checks of every case).
. "$(dirname "$0")/lib.sh"

t_missing_rootfs() {
	ROOTFS=$CASE_DIR/no-such-rootfs
	crun -- true
	expect_cordon_error ROOTFS "$ROOTFS"
}

t_rootfs_is_file() {
	ROOTFS=$CASE_DIR/rootfs-file
	echo not a directory >"$ROOTFS"
	chmod 644 "$ROOTFS"
	crun -- true
	expect_cordon_error ROOTFS "$ROOTFS"
}

t_rootfs_is_host_root() {
	ROOTFS=/
	crun -- true
	expect_cordon_error ROOTFS rootfs
}

t_bind_no_colon() {
	crun --bind /tmp -- true
	expect_cordon_error USAGE --bind
}

t_bind_bad_mode() {
	crun --bind /tmp:/mnt:rx -- true
	expect_cordon_error USAGE --bind
	expect_err_has rx "expected the message to name the bad mode 'rx'"
}

t_bind_relative_destination() {
	crun --bind /tmp:mnt -- true
	expect_cordon_error USAGE --bind
}

t_bind_over_proc() {
	crun --bind /tmp:/proc -- true
	expect_cordon_error USAGE --bind
	crun --bind /tmp:/ -- true
	expect_cordon_error USAGE --bind
}

t_bind_missing_source() {
	crun --bind "$CASE_DIR/no-such-source:/mnt" -- true
	expect_cordon_error PATH no-such-source
}

t_unknown_flag() {
	crun --frobnicate -- true
	expect_cordon_error USAGE --frobnicate
	crun --frobnicate=1 -- true
	expect_cordon_error USAGE --frobnicate
}

t_missing_value() {
	next_id
	cordon run --name "$ID" --timeout
	expect_cordon_error USAGE --timeout
	next_id
	cordon run --name "$ID" --hostname
	expect_cordon_error USAGE --hostname
}

t_no_command() {
	next_id
	cordon run --name "$ID" "$ROOTFS"
	expect_cordon_error USAGE command
	next_id
	cordon run --name "$ID" "$ROOTFS" --
	expect_cordon_error USAGE command
}

t_workspace_relative_missing() {
	crun --workspace does-not-exist -- true
	expect_cordon_error PATH --workspace
	expect_err_has does-not-exist "expected the message to name the path"
	check "nothing created in the current directory" test ! -e "$WS/does-not-exist"
}

t_workspace_is_file() {
	echo x >"$WS/a-file"
	crun --workspace a-file -- true
	expect_cordon_error PATH --workspace
}

t_rootfs_proc_symlink() {
	# A copy of the rootfs whose /proc points at the host's /: mounting
	# proc there must not land on the host (the leftover check of the mount
	# table catches it if it does).
	ROOTFS=$CASE_DIR/evil-rootfs
	copy_rootfs "$ROOTFS" || return
	rm -rf "${ROOTFS:?}/proc"
	ln -s / "$ROOTFS/proc"
	crun -- true
	expect_cordon_error 'ROOTFS|MOUNT|PATH' proc
	check "the host's / is still /" test -d /proc/self
}

t_rootfs_dev_symlink() {
	ROOTFS=$CASE_DIR/evil-rootfs
	copy_rootfs "$ROOTFS" || return
	rm -rf "${ROOTFS:?}/dev"
	ln -s /../../../dev "$ROOTFS/dev"
	rm -rf "${ROOTFS:?}/tmp"
	ln -s "$CASE_DIR" "$ROOTFS/tmp"
	# Either refused, or the links resolve inside the rootfs; never on the host.
	crun -- sh -c 'echo x > /tmp/escaped'
	check "nothing written through the rootfs's /tmp symlink on the host" test ! -e "$CASE_DIR/escaped"
	if [ "$RC" = 125 ]; then
		expect_cordon_error 'ROOTFS|MOUNT|PATH' /
	fi
}

t_tmpfs_too_small() {
	crun --tmpfs-size 10 -- true
	expect_cordon_error USAGE --tmpfs-size
	crun --tmpfs-size 63 -- true
	expect_cordon_error USAGE --tmpfs-size
	crun --tmpfs-size lots -- true
	expect_cordon_error USAGE --tmpfs-size
}

t_bad_name() {
	local name
	for name in -leading-dash 'a/b' '../x' 'has space' "$(printf 'x%.0s' {1..65})" ''; do
		next_id
		cordon run --name "$name" "$ROOTFS" -- true
		expect_cordon_error USAGE --name
	done
}

t_bad_numbers() {
	crun --timeout abc -- true
	expect_cordon_error USAGE --timeout
	crun --timeout -1 -- true
	expect_cordon_error USAGE --timeout
	crun --kill-after 1. -- true
	expect_cordon_error USAGE --kill-after
	crun --output-max -5 -- true
	expect_cordon_error USAGE --output-max
	crun --output-max 1x -- true
	expect_cordon_error USAGE --output-max
}

t_bad_hostname() {
	crun --hostname bad_host -- true
	expect_cordon_error USAGE --hostname
	crun --hostname "$(printf 'h%.0s' {1..70})" -- true
	expect_cordon_error USAGE --hostname
}

t_bad_user() {
	crun --user nosuchuser -- true
	expect_cordon_error USAGE nosuchuser
	crun --user 'a:b:c' -- true
	expect_cordon_error USAGE --user
}

t_bad_env() {
	crun --env NOEQUALS -- true
	expect_cordon_error USAGE --env
	crun --env =value -- true
	expect_cordon_error USAGE --env
}

t_bad_userns() {
	crun --userns sometimes -- true
	expect_cordon_error USAGE --userns
}

t_userns_host_unprivileged() {
	crun --userns host -- true
	expect_cordon_error 'USAGE|USERNS' --userns
}

t_bad_cwd() {
	crun --cwd relative/dir -- true
	expect_cordon_error USAGE --cwd
}

t_result_json_unwritable() {
	# Refused up front (USAGE/PATH) or when writing (RESULT); either way 125.
	crun --result-json "$CASE_DIR/no-such-dir/result.json" -- true
	expect_cordon_error 'USAGE|PATH|RESULT' --result-json
}

each_mode "missing rootfs: CORDON_E_ROOTFS" t_missing_rootfs
each_mode "rootfs is a file: CORDON_E_ROOTFS" t_rootfs_is_file
each_mode "rootfs is the host's /: CORDON_E_ROOTFS" t_rootfs_is_host_root
each_mode "--bind without a colon: CORDON_E_USAGE" t_bind_no_colon
each_mode "--bind with a bad mode: CORDON_E_USAGE" t_bind_bad_mode
each_mode "--bind with a relative destination: CORDON_E_USAGE" t_bind_relative_destination
each_mode "--bind over / or /proc: CORDON_E_USAGE" t_bind_over_proc
each_mode "--bind with a missing source: CORDON_E_PATH" t_bind_missing_source
each_mode "unknown flag: CORDON_E_USAGE" t_unknown_flag
each_mode "flag without its value: CORDON_E_USAGE" t_missing_value
each_mode "no command: CORDON_E_USAGE" t_no_command
each_mode "relative --workspace that does not exist: CORDON_E_PATH" t_workspace_relative_missing
each_mode "--workspace is a file: CORDON_E_PATH" t_workspace_is_file
each_mode "rootfs whose /proc is a symlink to /: refused, host untouched" t_rootfs_proc_symlink
each_mode "rootfs whose /dev and /tmp are symlinks out: host untouched" t_rootfs_dev_symlink
each_mode "--tmpfs-size below 64: CORDON_E_USAGE" t_tmpfs_too_small
each_mode "invalid --name: CORDON_E_USAGE" t_bad_name
each_mode "bad numbers for --timeout, --kill-after, --output-max: CORDON_E_USAGE" t_bad_numbers
each_mode "invalid --hostname: CORDON_E_USAGE" t_bad_hostname
each_mode "unknown --user: CORDON_E_USAGE" t_bad_user
each_mode "bad --env: CORDON_E_USAGE" t_bad_env
each_mode "bad --userns value: CORDON_E_USAGE" t_bad_userns
rootless_only "--userns host as an unprivileged user: refused" t_userns_host_unprivileged
each_mode "relative --cwd: CORDON_E_USAGE" t_bad_cwd
each_mode "--result-json in a missing directory: refused" t_result_json_unwritable
done_testing
