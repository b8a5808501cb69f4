# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# The two kinds of skip a test may report, and only these two:
#
# - The layout of this host cannot run the case: a hybrid host cannot
#   delegate a cgroup to a user, so the rootless delegated-cgroup and
#   freezer cases cannot exist there; a pure v2 host has no v1 hierarchy.
#   Always a skip (TAP "ok N - NAME # SKIP REASON"), under CI too, and the
#   reason names the layout.
# - A precondition is missing: root, the test user, a tool, a kernel
#   feature, a static probe, a network lab that came up. A skip when a
#   developer runs the test by hand on a machine without it; under CI
#   (CI=true, which .ci/run sets), where contrib/test.sh provides every
#   one of them, a failure: a green CI run must mean the case ran.
#
# lib.sh's cases use skip_layout and skip_or_fail; a script that cannot
# start at all uses skip_all_or_fail; scripts with their own TAP use
# ci_strict. tests/unit/unit.h has the same two for the check programs.

# Is a missing precondition a failure here?
ci_strict() { [ "${CI:-}" = true ]; }

# skip_all_or_fail REASON: the whole script cannot start (before any case):
# TAP's "1..0 # SKIP REASON", or under CI a bail-out (meson: a failure).
skip_all_or_fail() {
	if ci_strict; then
		echo "Bail out! $1 (CI=true: a missing precondition is a failure)"
		_done=1
		exit 1
	fi
	echo "1..0 # SKIP $1"
	_done=1
	exit 0
}
