#!/usr/bin/env bash
# compare.sh: start-up of two cordon binaries (or one binary with two flag
# sets), interleaved round by round, for measuring what a change costs.
#
#   tests/bench/compare.sh [-n N] [-r R] [--alternate] [--rootfs DIR] \
#       'LABEL_A=CMD...' 'LABEL_B=CMD...' [...]
#
# Each CMD is run as `CMD ROOTFS /bin/true` N times per round (default 100,
# 7 rounds); the figure is the median of the round means in ms, plus each
# row's difference to the first. Example, the cost of the hardening:
#
#   tests/bench/compare.sh 'before=/tmp/old/cordon run' 'after=build/cordon run'
#
# --alternate: instead of rounds, alternate the rows start by start (N
# starts of each) and time every start on its own; each row gets the
# median of its single starts and the median of its paired differences
# to the first row (same position in the alternation). Bursts of other
# work then hit single starts of every row, not whole rounds of one, and
# the medians drop them: the better method on a shared machine.
set -euo pipefail

n=100 rounds=7 alternate='' rootfs=$(cd "$(dirname "$0")/../.." && pwd)/build/rootfs
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--alternate) alternate=1; shift ;;
	--rootfs) rootfs=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "compare.sh: give at least two LABEL=CMD rows" >&2; exit 2; }

labels=() cmds=()
for row in "$@"; do
	labels+=("${row%%=*}")
	cmds+=("${row#*=}")
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

if [ -n "$alternate" ]; then
	declare -A starts diffs
	for i in "${!cmds[@]}"; do
		read -r -a cmd <<<"${cmds[$i]}"
		"${cmd[@]}" "$rootfs" /bin/true >/dev/null 2>&1 || {
			echo "compare.sh: '${cmds[$i]}' failed" >&2
			exit 1
		}
	done
	for ((k = 0; k < n; k++)); do
		first_ms=
		for i in "${!cmds[@]}"; do
			read -r -a cmd <<<"${cmds[$i]}"
			start=$EPOCHREALTIME
			"${cmd[@]}" "$rootfs" /bin/true >/dev/null 2>&1
			end=$EPOCHREALTIME
			ms=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", (e - s) * 1000 }')
			[ -n "$first_ms" ] || first_ms=$ms
			starts[$i]+="$ms "
			diffs[$i]+="$(awk -v a="$ms" -v b="$first_ms" 'BEGIN { printf "%.3f", a - b }') "
		done
	done
	echo "$(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $n alternated starts per row"
	for i in "${!cmds[@]}"; do
		printf '%-16s %8.3f ms/sandbox  %+7.3f ms (median paired difference)\n' "${labels[$i]}" \
			"$(echo "${starts[$i]}" | median)" "$(echo "${diffs[$i]}" | median)"
	done
	exit 0
fi

declare -A means
for ((r = 0; r < rounds; r++)); do
	for i in "${!cmds[@]}"; do
		read -r -a cmd <<<"${cmds[$i]}"
		"${cmd[@]}" "$rootfs" /bin/true >/dev/null 2>&1 || {
			echo "compare.sh: '${cmds[$i]}' failed" >&2
			exit 1
		}
		start=$EPOCHREALTIME
		for ((k = 0; k < n; k++)); do
			"${cmd[@]}" "$rootfs" /bin/true >/dev/null 2>&1
		done
		end=$EPOCHREALTIME
		means[$i]+="$(awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN { printf "%.3f ", (e - s) * 1000 / n }')"
	done
done
echo "$(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $n starts x $rounds rounds"
first=
for i in "${!cmds[@]}"; do
	m=$(echo "${means[$i]}" | median)
	[ -n "$first" ] || first=$m
	printf '%-16s %8.3f ms/sandbox  %+7.3f ms\n' "${labels[$i]}" "$m" "$(awk -v a="$m" -v b="$first" 'BEGIN { print a - b }')"
done
