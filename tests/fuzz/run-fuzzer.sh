#!/bin/sh
# run-fuzzer.sh FUZZER CORPUS SECONDS: a bounded libFuzzer run as one TAP case.
# The seed corpus is copied: new inputs stay in a scratch directory, and a
# crash leaves its input there (printed), to be added to CORPUS by hand.
set -u
fuzzer=$1 corpus=$2 seconds=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-fuzz.XXXXXX") || exit 1
mkdir "$work/corpus"
cp "$corpus"/* "$work/corpus/"
echo "1..1"
if (cd "$work" && "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus >fuzz.log 2>&1); then
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
	echo "ok 1 - $(basename "$fuzzer"): ${seconds} s, ${execs:-?} inputs, nothing found"
	rm -rf "$work"
else
	echo "not ok 1 - $(basename "$fuzzer") found a crash; inputs and log in $work"
	tail -n 40 "$work/fuzz.log" | sed 's/^/# /'
	exit 1
fi
