#!/usr/bin/env bash
# tests/bench/net-start.sh — cost of a networked sandbox start (not a test).
#
#   tests/bench/net-start.sh [-n N] [-r R] [--build DIR] [--rootless USER]
#
# Inside the private lab (tests/lab/lab.sh; root), times N sequential starts
# of /bin/true, in R interleaved rounds, for:
#   default-deny    cordon run -- /bin/true                    (only lo)
#   veth            --net-allow with 5 entries (rootful default)
#   pasta (root)    the same with --net-backend pasta
#   pasta rootless  the same as USER (default cordon-test, if it exists;
#                   needs /dev/net/tun usable by USER)
# and prints per variant the ms per start (median of the rounds' means) and
# its ratio to default-deny. The goal (issue #6): veth at most 2.5x.
#
#   --old DIR   also every variant with DIR's cordon-lab (another build,
#               e.g. of an older commit), in the same interleaved rounds:
#               rows "VARIANT@old", their ratio to default-deny@old, and a
#               last column, each row's ratio to its old row
set -uo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${BENCH_N:-30}
rounds=${BENCH_ROUNDS:-5}
build=$top/build
old=''
user='cordon-test'
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--old) old=$2; shift 2 ;;
	--rootless) user=$2; shift 2 ;;
	*) echo "net-start.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

. "$top/tests/lab/lab.sh"
lab_isolate -n "$n" -r "$rounds" --build "$build" ${old:+--old "$old"} --rootless "$user" ||
	{ echo "net-start.sh: needs root (the lab)" >&2; exit 1; }
lab_up >/dev/null || exit 1

cordon=$build/tests/lab/cordon-lab
allow=(--net-allow 'allowed.test,cdn.allowed.test,*.wild.test,198.18.1.0/24,2001:2:0:1::/64'
	--dns-upstream "$LAB_DNS4")
declare -A cmd=(
	[default-deny]="$cordon run --no-workspace -- /bin/true"
	[veth]="$cordon run --no-workspace ${allow[*]} -- /bin/true"
	[pasta-root]="$cordon run --no-workspace --net-backend pasta ${allow[*]} -- /bin/true"
)
order=(default-deny veth pasta-root)
if id "$user" >/dev/null 2>&1 && runuser -u "$user" -- test -r /dev/net/tun -a -w /dev/net/tun; then
	cmd[pasta-rootless]="runuser -u $user -- env CORDON_LAB_PUBLIC_CIDR=$LAB_PUBLIC_CIDR $cordon run --no-workspace ${allow[*]} -- /bin/true"
	order+=(pasta-rootless)
else
	echo "# pasta-rootless skipped: no user $user, or /dev/net/tun not usable by it"
fi

if [ -n "$old" ]; then
	for v in "${order[@]}"; do
		cmd[$v@old]=${cmd[$v]//$cordon/$old/tests/lab/cordon-lab}
	done
	both=()
	for v in "${order[@]}"; do both+=("$v" "$v@old"); done
	order=("${both[@]}")
fi

declare -A results
for ((r = 1; r <= rounds; r++)); do
	for v in "${order[@]}"; do
		start=$(date +%s%N)
		for ((i = 0; i < n; i++)); do
			# shellcheck disable=SC2086 # the command lines are word lists
			(cd /tmp && lab_exec ${cmd[$v]} >/dev/null 2>&1) || { echo "# $v failed"; break; }
		done
		end=$(date +%s%N)
		results[$v]+="$(( (end - start) / n / 1000 )) "
	done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
base=$(echo "${results[default-deny]}" | median)
printf '%-20s %12s %10s %10s   (%s starts x %s rounds, %s, %s cores, load %s)\n' variant ms/start \
	ratio "${old:+vs-old}" "$n" "$rounds" "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
for v in "${order[@]}"; do
	m=$(echo "${results[$v]}" | median)
	b=$base o=
	if [[ $v == *@old ]]; then
		b=$(echo "${results[default-deny@old]}" | median)
	elif [ -n "$old" ]; then
		o=$(echo "${results[$v@old]}" | median)
	fi
	awk -v v="$v" -v m="$m" -v b="$b" -v o="$o" 'BEGIN {
		printf "%-20s %12.2f %9.2fx", v, m / 1000, m / b
		if (o != "") printf " %9.2fx", m / o
		printf "\n" }'
done
echo "# each start includes 'ip netns exec' of the lab host (the same for every variant)"
