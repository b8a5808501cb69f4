#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project's shell scripts pass shellcheck at warning level and above
# (contrib/*.sh, tests/**/*.sh; the settings in .shellcheckrc: sourced
# files followed from each script's directory). TAP: one line a script,
# its findings after a failing one. Without shellcheck: a skip, or under
# CI=true a failure (contrib/deps.sh --test installs it).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/skip.sh

command -v shellcheck >/dev/null 2>&1 ||
	skip_all_or_fail "shellcheck is not installed (contrib/deps.sh --test installs it)"
shopt -s globstar nullglob
scripts=(contrib/*.sh tests/**/*.sh)
# One shellcheck for all (each run reads the libraries its script sources
# again): its findings one a line, "FILE:LINE:COL: LEVEL: TEXT [SCnnnn]".
findings=$(shellcheck -S warning -f gcc "${scripts[@]}" 2>&1)
n=0 failed=0
for f in "${scripts[@]}"; do
	n=$((n + 1))
	mine=$(grep -F -- "$f:" <<<"$findings" | grep -- "^$f:")
	if [ -z "$mine" ]; then
		echo "ok $n - $f"
	else
		failed=$((failed + 1))
		echo "not ok $n - $f"
		printf '%s\n' "$mine" | sed 's/^/#   /'
	fi
done
# What names no script of the list (a sourced file's, shellcheck's own error).
others=$(grep -v -F -f <(printf '%s:\n' "${scripts[@]}") <<<"$findings" | grep .)
n=$((n + 1))
if [ -z "$others" ]; then
	echo "ok $n - nothing else reported"
else
	failed=$((failed + 1))
	echo "not ok $n - shellcheck reported more"
	printf '%s\n' "$others" | sed 's/^/#   /'
fi
echo "1..$n"
[ "$failed" -eq 0 ]
