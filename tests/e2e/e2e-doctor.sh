#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: `cordon doctor`: every check reports ok, degraded or failed with what
# it found, and, when not ok, what it means and what to do; the exit status
# is 1 only when something a default run needs failed. A missing subuid
# entry and a cordon-nethelper without its file capability are reported
# as what they are (each made missing for the case and put back after).
. "$(dirname "$0")/lib.sh"

CHECKS='["cgroups","idmap","kernel","nethelper","nftables","pasta","state","subids","userns"]'

# jq FILTER over the last output, true or not.
jq_true() { printf '%s' "$OUT" | jq -e "$1" >/dev/null 2>&1; }

t_report() {
	cordon doctor --json
	expect_rc 0 "expected exit 0 on this host (nothing a default run needs is missing)"
	jq_true "[.checks[].check] | sort == $CHECKS" || fail "expected the nine checks, got: $OUT"
	jq_true '.checks | all(.status == "ok" or .status == "degraded" or .status == "failed")' ||
		fail "a check without a known status: $OUT"
	jq_true '.checks | all(.detail | length > 0)' || fail "a check without a detail: $OUT"
	jq_true '.checks | map(select(.status != "ok")) | all((.consequence | length > 0) and (.fix | length > 0))' ||
		fail "a check that is not ok without its consequence and fix: $OUT"
	jq_true '.ok == true and ([.checks[] | select(.status == "failed")] | length == 0)' ||
		fail "expected ok with nothing failed"
	jq_true '[.checks[] | select(.check == "userns" or .check == "kernel" or .check == "state")] | all(.status == "ok")' ||
		fail "expected user namespaces, kernel features and the state directory ok"
	jq_true ".mode == \"$MODE\"" || fail "expected mode $MODE"
	cordon doctor
	expect_rc 0
	expect_out_has "user namespaces"
	expect_out_has "state directory"
}

t_failed_state() {
	cordon --root /proc/cordon-doctor-state doctor --json
	expect_rc 1 "expected exit 1 with a state directory that cannot be made"
	jq_true '.ok == false and (.checks[] | select(.check == "state") | .status == "failed" and (.consequence | test("no sandbox can start")))' ||
		fail "expected the state check failed, with its consequence: $OUT"
	cordon --root /proc/cordon-doctor-state doctor
	expect_rc 1
	expect_out_has "cordon cannot confine as promised here"
}

# The test user's /etc/subuid and /etc/subgid entries, gone for the case.
_subid_backup=
hide_subids() {
	_subid_backup=$CASE_DIR/subid
	# Killed meanwhile: the entries come back with the harness's own exit.
	trap 'restore_subids; _on_exit' EXIT
	cp -p /etc/subuid "$_subid_backup.uid" && cp -p /etc/subgid "$_subid_backup.gid" || return 1
	sed -i "/^$CORDON_TEST_USER:/d;/^$(id -u "$CORDON_TEST_USER"):/d" /etc/subuid /etc/subgid
}
restore_subids() {
	[ -n "$_subid_backup" ] || return 0
	cp -p "$_subid_backup.uid" /etc/subuid && cp -p "$_subid_backup.gid" /etc/subgid
	_subid_backup=
}

t_subids_missing() {
	if ! hide_subids; then
		restore_subids
		fail "could not set /etc/subuid aside"
		return
	fi
	cordon doctor --json
	restore_subids
	expect_rc 0 "a missing subuid entry degrades, it does not fail"
	jq_true '.checks[] | select(.check == "subids") | .status == "degraded" and (.detail | test("no entry")) and (.consequence | test("only your own id")) and (.fix | test("usermod"))' ||
		fail "expected subordinate ids degraded, naming the missing entry: $OUT"
}

t_subids_present() {
	cordon doctor --json
	jq_true '.checks[] | select(.check == "subids") | .status == "ok" and (.detail | test("uids [0-9]+-[0-9]+"))' ||
		fail "expected the test user's ranges reported: $OUT"
}

# A copy of cordon-nethelper, with and without CAP_NET_ADMIN as a file capability.
t_nethelper_capability() {
	local helper=$CASE_DIR/cordon-nethelper built
	for built in "$(dirname "$CORDON")/src/cordon-nethelper" "$(dirname "$CORDON")/cordon-nethelper"; do
		[ -x "$built" ] && break
	done
	cp "$built" "$helper" && chmod 755 "$helper" "$CASE_DIR" || {
		fail "no cordon-nethelper in the build tree of $CORDON"
		return
	}
	setcap cap_net_admin+ep "$helper" || { fail "setcap failed"; return; }
	XENV=(CORDON_NETHELPER="$helper")
	cordon doctor --json
	jq_true '.checks[] | select(.check == "nethelper") | .status == "ok" and (.detail | test("cap_net_admin"))' ||
		fail "expected the capable helper reported ok: $OUT"
	setcap -r "$helper"
	cordon doctor --json
	XENV=()
	jq_true '.checks[] | select(.check == "nethelper") | .status == "degraded" and (.detail | test("no CAP_NET_ADMIN")) and (.fix | test("setcap cap_net_admin[+]ep"))' ||
		fail "expected the helper without its capability reported degraded: $OUT"
	expect_rc 0
}

each_mode "doctor: every check with a status and a detail, the rest when not ok; exit 0 here" t_report
each_mode "doctor: a state directory that cannot be made fails it: exit 1" t_failed_state
rootless_only "doctor: the test user's subuid entry missing: degraded, named, how to fix" t_subids_missing
rootless_only "doctor: the test user's subordinate ranges" t_subids_present
rootless_only "doctor: cordon-nethelper with and without its CAP_NET_ADMIN file capability" t_nethelper_capability
done_testing
