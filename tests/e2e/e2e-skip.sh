#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The test harnesses' skips (tests/e2e/skip.sh, tests/unit/unit.h): a
# layout this host does not have is a skip everywhere; a missing
# precondition is a skip by hand and a failure under CI=true; a skipped
# check case is a TAP SKIP, never a pass. Each is checked on a small
# script (or test-cgroup as the unprivileged user) run twice, without CI
# and with CI=true.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CORDON=${CORDON:-build/cordon}
CORDON_ROOTFS=${CORDON_ROOTFS:-build/rootfs}
case $CORDON in /*) ;; *) CORDON=$PWD/$CORDON ;; esac
case $CORDON_ROOTFS in /*) ;; *) CORDON_ROOTFS=$PWD/$CORDON_ROOTFS ;; esac
TEST_CGROUP=${UNIT_TEST_CGROUP:-build/tests/unit/test-cgroup}
case $TEST_CGROUP in /*) ;; *) TEST_CGROUP=$PWD/$TEST_CGROUP ;; esac
TEST_USER=${CORDON_TEST_USER:-cordon-test}
TMP=$(mktemp -d /tmp/cordon-skip.XXXXXX) || exit 99
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
. "$HERE/skip.sh"

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '# %s\n' "$@"; }
# expect NAME PATTERN: the last output matches the ERE.
expect() {
	if grep -Eq -- "$2" <<<"$OUT"; then ok "$1"; else not_ok "$1" "expected /$2/ in:" "$(head -n 40 <<<"$OUT")"; fi
}
expect_not() {
	if grep -Eq -- "$2" <<<"$OUT"; then not_ok "$1" "did not expect /$2/:" "$(grep -E -- "$2" <<<"$OUT" | head -n 5)"; else ok "$1"; fi
}

# A script of lib.sh's cases: one per kind of skip, rootful only (the
# rootless half of "no user" is the unavailable mode).
cat >"$TMP/cases.sh" <<SCRIPT
. "$HERE/lib.sh"
t_layout() { skip_layout "a layout this host lacks"; }
t_missing() { skip_or_fail "a tool this host lacks"; }
t_plain() { :; }
rootful_only "layout" t_layout
rootful_only "missing" t_missing
rootless_only "plain" t_plain
done_testing
SCRIPT
cat >"$TMP/whole.sh" <<SCRIPT
. "$HERE/skip.sh"
skip_all_or_fail "a kernel feature this host lacks"
echo "not reached"
SCRIPT

# by hand: CI unset; under CI: CI=true. The rootless half has no user.
run_cases() {
	OUT=$(env -u CI "$@" CORDON="$CORDON" CORDON_ROOTFS="$CORDON_ROOTFS" \
		CORDON_TEST_USER=no-such-user-here bash "$TMP/cases.sh" 2>&1)
}

if [ "$EUID" -ne 0 ]; then
	# lib.sh's rootful cases need root to be anything but unavailable.
	skip_all_or_fail "needs root (the rootful half of the harness)"
fi

run_cases
expect "by hand: a layout skip is a SKIP" '^ok [0-9]+ - rootful: layout # SKIP a layout this host lacks$'
expect "by hand: a missing precondition is a SKIP" '^ok [0-9]+ - rootful: missing # SKIP a tool this host lacks$'
expect "by hand: an unavailable mode (no test user) is a SKIP" "^ok [0-9]+ - rootless: plain # SKIP test user 'no-such-user-here' does not exist"
run_cases CI=true
expect "CI: a layout skip is still a SKIP" '^ok [0-9]+ - rootful: layout # SKIP a layout this host lacks$'
expect "CI: a missing precondition fails" '^not ok [0-9]+ - rootful: missing$'
expect "CI: ... and says why" 'a tool this host lacks \(CI=true: a missing precondition is a failure\)'
expect "CI: an unavailable mode fails" '^not ok [0-9]+ - rootless: plain$'

OUT=$(env -u CI bash "$TMP/whole.sh" 2>&1)
rc=$?
expect "by hand: a script that cannot start is an empty plan with its reason" '^1\.\.0 # SKIP a kernel feature this host lacks$'
if [ "$rc" = 0 ]; then ok "... with status 0"; else not_ok "... with status 0" "status $rc"; fi
OUT=$(CI=true bash "$TMP/whole.sh" 2>&1)
rc=$?
expect "CI: a script that cannot start bails out" '^Bail out! a kernel feature this host lacks'
expect_not "CI: ... and stops there" 'not reached'
if [ "$rc" != 0 ]; then ok "... with a failing status"; else not_ok "... with a failing status" "status $rc"; fi

# check cases: test-cgroup's host cases as the unprivileged user (they
# need root): TAP SKIPs by hand, failures under CI, never "Passed".
if ! id "$TEST_USER" >/dev/null 2>&1; then
	if ci_strict; then
		not_ok "test-cgroup as $TEST_USER" "no user $TEST_USER (CI=true: a missing precondition is a failure)"
	else
		n=$((n + 1))
		echo "ok $n - test-cgroup as $TEST_USER # SKIP no user $TEST_USER (contrib/test.sh creates it)"
	fi
else
	cp "$TEST_CGROUP" "$TMP/test-cgroup" && chmod 755 "$TMP/test-cgroup"
	OUT=$(cd "$TMP" && runuser -u "$TEST_USER" -- env -u CI CK_TAP_LOG_FILE_NAME=- CK_FORK=yes ./test-cgroup 2>&1)
	expect "unit, by hand: a case that needs root is a TAP SKIP" '^ok [0-9]+ - [^ ]*:host:create_attach_limits_destroy # SKIP needs root'
	expect_not "unit, by hand: a case that needs root is not reported as passed" ':host:create_attach_limits_destroy: Passed'
	OUT=$(cd "$TMP" && runuser -u "$TEST_USER" -- env CI=true CK_TAP_LOG_FILE_NAME=- CK_FORK=yes ./test-cgroup 2>&1)
	expect "unit, CI: a case that needs root fails" '^not ok [0-9]+ - [^ ]*:host:create_attach_limits_destroy: CI=true, a missing precondition is a failure: needs root'
	expect_not "unit, CI: no case is a SKIP" '# SKIP'
fi

echo "1..$n"
