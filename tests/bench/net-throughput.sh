#!/usr/bin/env bash
# tests/bench/net-throughput.sh — TCP throughput through cordon's gateway (a
# benchmark, not a test).
#
#   tests/bench/net-throughput.sh [-r R] [-t SECONDS] [--build DIR] [--rootless USER]
#
# Inside the private lab (tests/lab/lab.sh; root). An iperf3 server runs in
# WORLD (on every address; the clients use 198.18.1.10, allowed.test's
# address). Clients, each `iperf3 -c 198.18.1.10 -t SECONDS -J`, R rounds
# (default 3 x 5 s), interleaved:
#   baseline        iperf3 in the lab host itself: one plain veth pair to WORLD
#   veth            in a sandbox, --net-allow 198.18.1.10 (root, cordon-nethelper):
#                   workload veth -> gateway netns (nft, masquerade) -> host veth
#                   -> lab host (routing, masquerade of the host table) -> WORLD
#   pasta-root      the same with --net-backend pasta
#   pasta-rootless  the same as USER (default cordon-test; pasta is the rootless
#                   default), if /dev/net/tun is usable by USER (not changed here)
# The sandboxes run on a temporary copy of build/rootfs with /usr/bin/iperf3 and
# its libraries (ldd) copied in. Prints per variant the receiver's Gbit/s of
# every round, their median, and the median's ratio to the baseline. The target
# (the network issue): through the gateway at least 80% of the plain veth pair.
# Needs iperf3 (contrib/deps.sh --bench).
set -uo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=3
secs=5
build=$top/build
user='cordon-test'
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-r) rounds=$2; shift 2 ;;
	-t) secs=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--rootless) user=$2; shift 2 ;;
	*) echo "net-throughput.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

iperf=$(command -v iperf3) || { echo "net-throughput.sh: iperf3 not installed (contrib/deps.sh --bench)" >&2; exit 1; }
. "$top/tests/lab/lab.sh"
lab_isolate "${args[@]}" || { echo "net-throughput.sh: needs root (the lab)" >&2; exit 1; }
[ -x "$build/tests/lab/cordon-lab" ] || { echo "net-throughput.sh: $build/tests/lab/cordon-lab not built" >&2; exit 1; }

tmp=$(mktemp -d /tmp/cordon-bench-tput.XXXXXX) || exit 1
chmod 755 "$tmp"
trap 'rm -rf --one-file-system "$tmp"' EXIT
lab_up >/dev/null || exit 1 # chains lab_down in front of the trap above

# Copies of the binaries (a rebuild of build/ during the run cannot mix builds).
cp "$build/tests/lab/cordon-lab" "$tmp/cordon" && cp "$build/src/cordon-nethelper" "$tmp/cordon-nethelper" &&
	chmod 755 "$tmp/cordon" "$tmp/cordon-nethelper" || exit 1
cordon=$tmp/cordon
export CORDON_NETHELPER=$tmp/cordon-nethelper

# The rootfs: build/rootfs plus iperf3 and its libraries.
root=$tmp/rootfs
cp -a "$build/rootfs" "$root" || exit 1
mkdir -p "$root/usr/bin"
cp -L "$iperf" "$root/usr/bin/iperf3"
for lib in $(ldd "$iperf" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
chmod -R a+rX "$root"

server=${LAB_IP4[server1]}
# Not lab_world_exec (a function: $! would be its subshell, not iperf3).
ip netns exec "$LAB_WORLD" "$iperf" -s -p 5201 >"$tmp/server.log" 2>&1 &
server_pid=$!
for ((i = 0; i < 100; i++)); do
	[ "$(lab_world_exec ss -Hltn 'sport = :5201' | wc -l)" -ge 1 ] && break
	sleep 0.05
done
[ "$i" -lt 100 ] || { echo "net-throughput.sh: the iperf3 server did not start: $(cat "$tmp/server.log")" >&2; exit 1; }

client=(iperf3 -c "$server" -p 5201 -t "$secs" -J)
sbx=("$cordon" run --no-workspace --net-allow "$server" --dns-upstream "$LAB_DNS4")
declare -A cmd=(
	[baseline]="$iperf ${client[*]:1}"
	[veth]="${sbx[*]} $root -- ${client[*]}"
	[pasta-root]="${sbx[*]} --net-backend pasta $root -- ${client[*]}"
)
order=(baseline veth pasta-root)
if id "$user" >/dev/null 2>&1 && runuser -u "$user" -- test -r /dev/net/tun -a -w /dev/net/tun; then
	cmd[pasta-rootless]="runuser -u $user -- env CORDON_LAB_PUBLIC_CIDR=$LAB_PUBLIC_CIDR ${sbx[*]} $root -- ${client[*]}"
	order+=(pasta-rootless)
else
	echo "# pasta-rootless skipped: no user $user, or /dev/net/tun not usable by it"
fi

# gbps FILE: the receiver's Gbit/s in iperf3's JSON, or "fail".
gbps() {
	"$LAB_PYTHON" -c '
import json, sys
try:
    j = json.load(open(sys.argv[1]))
    print("%.2f" % (j["end"]["sum_received"]["bits_per_second"] / 1e9))
except Exception:
    print("fail")' "$1"
}

printf '# net-throughput: %s rounds x %s s, iperf3 %s, server %s in WORLD; %s, %s cores, load %s; %s\n' \
	"$rounds" "$secs" "$("$iperf" --version | awk 'NR == 1 { print $2 }')" "$server" \
	"$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(date -u +%FT%TZ)"
declare -A results
fail=0
for ((r = 1; r <= rounds; r++)); do
	for v in "${order[@]}"; do
		# shellcheck disable=SC2086 # the command lines are word lists
		(cd /tmp && lab_exec ${cmd[$v]} >"$tmp/$v.$r.json" 2>"$tmp/$v.$r.err")
		g=$(gbps "$tmp/$v.$r.json")
		if [ "$g" = fail ]; then
			echo "# $v round $r failed: $(head -c 300 "$tmp/$v.$r.err" | tr '\n' ' ') $(grep -o '"error":.*' "$tmp/$v.$r.json" | head -n 1)"
			fail=1
		fi
		results[$v]+="$g "
	done
	echo "# load after round $r: $(cut -d' ' -f1-3 /proc/loadavg)"
done
kill "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null
# Anything else left in the lab (lab_down would kill it and name its pid).
for p in $(ip netns pids "$LAB_LH"; ip netns pids "$LAB_WORLD"); do
	c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
	case $c in dnsmasq | python3) ;; *) echo "# left in the lab after the runs: pid $p $c" ;; esac
done

median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "" }'; }
base=$(echo "${results[baseline]}" | median)
printf '%-15s %-24s %8s %8s\n' variant 'Gbit/s (rounds)' median 'vs base'
for v in "${order[@]}"; do
	m=$(echo "${results[$v]}" | median)
	if [ -n "$m" ] && [ -n "$base" ]; then
		ratio=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.0f%%", 100 * m / b }')
	else
		ratio=-
	fi
	printf '%-15s %-24s %8s %8s\n' "$v" "${results[$v]}" "${m:--}" "$ratio"
done
if [ -n "$base" ]; then
	m=$(echo "${results[veth]}" | median)
	[ -n "$m" ] && awk -v m="$m" -v b="$base" 'BEGIN {
		printf "# target: veth through the gateway >= 80%% of the plain veth pair: %s (%.0f%%)\n",
			(m >= 0.8 * b) ? "met" : "NOT met", 100 * m / b }'
fi
exit "$fail"
