#!/usr/bin/env bash
# tests/bench/cgroup-cost.sh — what cgroups add to a sandbox start (not a test).
#
# Times N sequential `cordon run ROOTFS /bin/true` as root, in R interleaved
# rounds, in three settings, and prints ms/sandbox (median of the rounds'
# means) for each and the differences:
#
#   default  the host's /sys/fs/cgroup: cordon detects the layout and creates,
#            limits (pids.max 512, the default) and removes cordon-ID in the
#            pids hierarchy
#   tmpfs    in a private mount namespace with an empty tmpfs on
#            /sys/fs/cgroup: detection and parse still run, no cgroup can be
#            created (the one the brief asks for)
#   none     the same with a ramfs instead: not cgroup2 nor tmpfs, so cordon
#            sees layout "none" and skips even the parse
#
# The mount namespace is created once per round (the loop runs inside it),
# so its cost is not in the figures. Before timing, each setting is probed:
# --print-profile's cgroups.layout, and whether a running sandbox has a
# cordon-ID directory under the host's /sys/fs/cgroup.
#
#   tests/bench/cgroup-cost.sh [-n N] [-r R] [--cordon PATH] [--rootfs DIR]
#
#   -n N           starts per round and setting (default 100, env BENCH_N)
#   -r R           rounds (default 5, env BENCH_ROUNDS)
#   --cordon PATH  cordon binary (default build/cordon of this checkout)
#   --rootfs DIR   rootfs (default build/rootfs)
#
# Target: cgroups add at most 2 ms per sandbox (default - tmpfs).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

n=${BENCH_N:-100}
rounds=${BENCH_ROUNDS:-5}
cordon=$top/build/cordon
rootfs=$top/build/rootfs

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() {
	echo "cgroup-cost.sh: $*" >&2
	exit 2
}
need_arg() { [ $# -ge 2 ] || die "option $1 needs a value"; }

while [ $# -gt 0 ]; do
	case $1 in
	-n) need_arg "$@"; n=$2; shift 2 ;;
	-r) need_arg "$@"; rounds=$2; shift 2 ;;
	--cordon) need_arg "$@"; cordon=$2; shift 2 ;;
	--cordon=*) cordon=${1#*=}; shift ;;
	--rootfs) need_arg "$@"; rootfs=$2; shift 2 ;;
	--rootfs=*) rootfs=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer, got '$n'"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer, got '$rounds'"
[ "$(id -u)" -eq 0 ] || die "needs root (rootful runs, mount namespaces)"
[ -x "$cordon" ] || die "no cordon binary at $cordon (build it: ninja -C build)"
[ -x "$rootfs/bin/true" ] || [ -L "$rootfs/bin/true" ] || die "rootfs '$rootfs' has no /bin/true"
command -v unshare >/dev/null || die "unshare not found (util-linux)"
rootfs=$(cd "$rootfs" && pwd -P)

tmp=$(mktemp -d /tmp/cordon-cgbench.XXXXXX)
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Others may rebuild the checkout meanwhile: time a snapshot of the binary.
cp "$cordon" "$tmp/cordon"
chmod 755 "$tmp" "$tmp/cordon"
bin=$tmp/cordon
mkdir "$tmp/work"

# in_setting SETTING CMD...: CMD with /sys/fs/cgroup as SETTING has it.
in_setting() {
	local setting=$1
	shift
	case $setting in
	default) "$@" ;;
	tmpfs | none)
		local fs=tmpfs
		[ "$setting" = none ] && fs=ramfs
		unshare -m --propagation private bash -c '
			mount -t "$1" cgbench /sys/fs/cgroup || exit 97
			shift
			exec "$@"' cgbench "$fs" "$@"
		;;
	esac
}

# round N: N starts of /bin/true; prints microseconds, or "fail RC".
round() {
	local n=$1 bin=$2 rootfs=$3 i t0 t1
	cd "$4" || exit 96
	t0=${EPOCHREALTIME/./}
	for ((i = 0; i < n; i++)); do
		"$bin" run "$rootfs" /bin/true >/dev/null || { echo "fail $?"; return 0; }
	done
	t1=${EPOCHREALTIME/./}
	echo $((t1 - t0))
}
round_cmd=(bash -c "$(declare -f round); round \"\$@\"" round)

# probe SETTING: layout per --print-profile, and whether a sandbox has
# host-visible cgroups while it runs.
probe() {
	local setting=$1 layout id=cgbench-$$-$1 seen=no pid i
	layout=$(in_setting "$setting" "$bin" run --print-profile "$rootfs" /bin/true 2>&1 |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["cgroups"]["layout"])' 2>/dev/null || echo "?")
	(cd "$tmp/work" && in_setting "$setting" "$bin" run --name "$id" "$rootfs" sleep 1 >/dev/null 2>&1) &
	pid=$!
	for ((i = 0; i < 40; i++)); do
		if [ -n "$(find /sys/fs/cgroup -name "cordon-$id" 2>/dev/null)" ]; then
			seen=$(find /sys/fs/cgroup -name "cordon-$id" | sed 's,/cordon-.*,,; s,^/sys/fs/cgroup/,,' | paste -sd, -)
			break
		fi
		sleep 0.02
	done
	wait "$pid" || true
	printf '%s|%s\n' "$layout" "$seen"
}

settings=(default tmpfs none)
declare -A means layout_of cg_of failed
for s in "${settings[@]}"; do
	IFS="|" read -r "layout_of[$s]" "cg_of[$s]" < <(probe "$s")
	means[$s]=
	failed[$s]=
done

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# cgroup start-up cost: $n starts x $rounds rounds x ${#settings[@]} settings" >&2
for s in "${settings[@]}"; do in_setting "$s" "${round_cmd[@]}" 2 "$bin" "$rootfs" "$tmp/work" >/dev/null; done # warm-up
for ((r = 1; r <= rounds; r++)); do
	echo "# round $r/$rounds" >&2
	for s in "${settings[@]}"; do
		[ -z "${failed[$s]}" ] || continue
		out=$(in_setting "$s" "${round_cmd[@]}" "$n" "$bin" "$rootfs" "$tmp/work" 2>"$tmp/err") || out="fail $?"
		if [[ $out == fail* ]]; then
			failed[$s]="$out: $(head -n1 "$tmp/err")"
		else
			means[$s]+="$out "
		fi
	done
done

# stats SETTING: "MEDIAN MIN MAX" in ms per sandbox over the rounds.
stats() {
	# shellcheck disable=SC2086
	printf '%s\n' ${means[$1]} | sort -n | awk -v n="$n" '
		{ v[NR] = $1 / n / 1000 }
		END {
			if (NR == 0) exit 1
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f %.3f %.3f\n", m, v[1], v[NR]
		}'
}

echo "cordon cgroup start-up cost  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  kernel:  $(uname -r)   nproc: $(nproc)"
echo "  loadavg: $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end (other work on the machine skews figures)"
echo "  cordon:  $cordon (sha256 $(sha256sum "$bin" | cut -c1-12)..., copied at start)"
echo "  method:  $n sequential 'cordon run ROOTFS /bin/true' as root per round, $rounds rounds interleaved;"
echo "           ms/sandbox = median of the rounds' means; range = min-max of the round means"
echo
printf '  %-8s %-8s %-24s %11s  %s\n' setting layout "cgroups while running" ms/sandbox "range(ms)"
declare -A med
for s in "${settings[@]}"; do
	if [ -n "${failed[$s]}" ]; then
		printf '  %-8s %-8s %-24s %s\n' "$s" "${layout_of[$s]}" "${cg_of[$s]}" "failed: ${failed[$s]}"
		continue
	fi
	read -r m lo hi < <(stats "$s")
	med[$s]=$m
	printf '  %-8s %-8s %-24s %11s  %s-%s\n' "$s" "${layout_of[$s]}" "${cg_of[$s]}" "$m" "$lo" "$hi"
done
echo
if [ -n "${med[default]:-}" ] && [ -n "${med[tmpfs]:-}" ]; then
	awk -v a="${med[default]}" -v b="${med[tmpfs]}" 'BEGIN {
		d = a - b
		printf "  cgroups add %.3f ms/sandbox (default - tmpfs); target <= 2 ms: %s\n", d, d <= 2 ? "met" : "NOT met" }'
fi
if [ -n "${med[tmpfs]:-}" ] && [ -n "${med[none]:-}" ]; then
	awk -v a="${med[tmpfs]}" -v b="${med[none]}" 'BEGIN {
		printf "  layout detection and parse alone: %.3f ms/sandbox (tmpfs - none)\n", a - b }'
fi
