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
# 10 s timeout, and leaves nothing behind.
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

t_rootfs_passwd_fifo() {
	ROOTFS=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS" || return
	rm -f "$ROOTFS/etc/passwd"
	mk_fifo "$ROOTFS/etc/passwd" || return
	crun --user nobody -- true
	expect_cordon_error USAGE "$ROOTFS/etc/passwd: not a regular file"
	# A numeric uid needs no entry: the fifo is passed over, the run goes on.
	crun --user 1000 -- true
	expect_rc 0
	expect_err_empty "--user 1000 over a fifo passwd warned or failed"
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
each_mode "rootfs /etc/passwd a fifo: --user NAME refused, --user UID runs" t_rootfs_passwd_fifo
done_testing
