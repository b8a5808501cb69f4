#!/usr/bin/env bash
# tests/bench/net-concurrent.sh — many networked sandboxes at once (a benchmark,
# not a test: it prints figures, but it also exits non-zero on any failure).
#
#   tests/bench/net-concurrent.sh [-n N] [--hold S] [--build DIR]
#                                 [--backends LIST] [--rootless USER]
#
# Inside the private lab (tests/lab/lab.sh; root), for each backend in LIST
# (default "veth pasta-rootless"; also known: pasta-root) starts N sandboxes
# (default 50) at once, each
#
#   cordon run --net-allow allowed.test --dns-upstream $LAB_DNS4 \
#       --result-json FILE -- sh -c 'nslookup allowed.test; GET allowed.test; sleep S'
#
# (the lab build, build/tests/lab/cordon-lab, on build/rootfs). The GET reads
# only the first answer and then drops the connection, as tests/e2e/net-lib.sh's
# get does (Debian 12's pasta mishandles a client half-close). The sleep
# (--hold, default 3 s) makes the sandboxes overlap; each workload notes
# /proc/uptime when it starts and ends, which gives the peak number of
# workloads running at the same moment.
#
# Prints per backend: started (the workload ran) and succeeded (exit 0, lookup
# answered 198.18.1.10, the GET reached server1, result JSON written), whether
# the uplinks (result JSON network.uplink.host) are all distinct, the wall
# time from the first launch to the last exit, the peak overlap, the median and
# maximum of the sandboxes' own duration_ms; then the leak checks, each polled
# up to 30 s (namespaces die asynchronously in the kernel, so a host veth end
# may outlive its sandbox for a moment; the time it took is printed):
#   no cdr-* link left in the lab host, no pasta process in it, no cordon
#   process in it, no state entry of these sandboxes (/run/cordon, or the
#   rootless user's state root), no nft table in the lab host but inet cordon-host.
#
# pasta-rootless runs as USER (default cordon-test) and needs /dev/net/tun
# usable by USER; the script does not change /dev/net/tun: the backend is
# skipped (and said so) if it is not.
set -uo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
n=50
hold=3
build=$top/build
user='cordon-test'
backends="veth pasta-rootless"
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--hold) hold=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--backends) backends=$2; shift 2 ;;
	--rootless) user=$2; shift 2 ;;
	*) echo "net-concurrent.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

. "$top/tests/lab/lab.sh"
lab_isolate "${args[@]}" || { echo "net-concurrent.sh: needs root (the lab)" >&2; exit 1; }

cordon=$build/tests/lab/cordon-lab
rootfs=$build/rootfs
[ -x "$cordon" ] || { echo "net-concurrent.sh: $cordon not built (ninja -C $build)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/cordon-bench-conc.XXXXXX) || exit 1
chmod 755 "$tmp"
trap 'rm -rf --one-file-system "$tmp"' EXIT
lab_up >/dev/null || exit 1 # chains lab_down in front of the trap above

# Copies of the lab cordon and of the nethelper: a rebuild of build/ during
# the run cannot mix builds.
cp "$cordon" "$tmp/cordon" && cp "$build/src/cordon-nethelper" "$tmp/cordon-nethelper" &&
	chmod 755 "$tmp/cordon" "$tmp/cordon-nethelper" || exit 1
cordon=$tmp/cordon
export CORDON_NETHELPER=$tmp/cordon-nethelper

# The workload (busybox sh). Prints STARTED, LOOKUP OK|FAIL, GET OK|FAIL and
# the uptime at start and end.
# shellcheck disable=SC2016 # expanded inside the sandbox
workload='
t0=$(cut -d" " -f1 /proc/uptime); echo "STARTED $t0"
if nslookup allowed.test 2>&1 | grep -q "^Address.*198\.18\.1\.10$"; then echo "LOOKUP OK"; else echo "LOOKUP FAIL"; fi
printf "GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n" | timeout 20 nc -w 10 allowed.test 80 >/tmp/o 2>/tmp/e &
p=$!; i=0
while [ $i -lt 400 ]; do
	[ -n "$(tr -d "\r" </tmp/o | sed "1,/^\$/d")" ] && break
	kill -0 $p 2>/dev/null || break
	sleep 0.05; i=$((i + 1))
done
kill $p 2>/dev/null; wait $p 2>/dev/null
v=$(tr -d "\r" </tmp/o | sed -n "s/^X-Lab-Server: *//p" | head -n 1)
if [ "$v" = server1 ]; then echo "GET OK"; else echo "GET FAIL $(cat /tmp/e)"; fi
sleep '"$hold"'
echo "ENDED $(cut -d" " -f1 /proc/uptime)"
'

fail=0
note() { printf '# %s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }

rootless_ok() {
	id "$user" >/dev/null 2>&1 && runuser -u "$user" -- test -r /dev/net/tun -a -w /dev/net/tun
}

# The state root of the rootless user, as cordon picks it under runuser
# (no XDG_RUNTIME_DIR there).
rootless_state=/tmp/cordon-$(id -u "$user" 2>/dev/null || echo none)

# run_one BACKEND I: one sandbox, its outputs in $tmp/BACKEND/I.*
run_one() {
	local b=$1 i=$2 d=$tmp/$1
	local -a pre=() opt=()
	case $b in
	veth) ;;
	pasta-root) opt=(--net-backend pasta) ;;
	pasta-rootless) pre=(runuser -u "$user" -- env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR") ;;
	esac
	# shellcheck disable=SC2086
	(cd /tmp && exec timeout -k 5 300 ip netns exec "$LAB_LH" env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR" \
		"${pre[@]}" "$cordon" run --name "bnc-$$-$b-$i" --no-workspace --timeout 240 \
		"${opt[@]}" --net-allow allowed.test --dns-upstream "$LAB_DNS4" \
		--result-json "$d/$i.json" "$rootfs" -- sh -c "$workload" \
		>"$d/$i.out" 2>"$d/$i.err" </dev/null)
	echo $? >"$d/$i.rc"
}

# poll SECONDS CMD...: until CMD succeeds; prints the seconds it took, returns 1 on timeout.
poll() {
	local limit=$1 t0=${EPOCHREALTIME/[.,]/} now
	shift
	while :; do
		now=${EPOCHREALTIME/[.,]/}
		if "$@"; then
			awk -v t=$((now - t0)) 'BEGIN { printf "%.1f", t / 1e6 }'
			return 0
		fi
		[ $((now - t0)) -ge $((limit * 1000000)) ] && return 1
		sleep 0.1
	done
}
no_cdr_links() { ! ip -n "$LAB_LH" -o link show | grep ' cdr-' >/dev/null; }
lh_procs() { # comm of every process in the lab host
	local p
	for p in $(ip netns pids "$LAB_LH" 2>/dev/null); do cat "/proc/$p/comm" 2>/dev/null; done
}
no_pasta() { ! lh_procs | grep -Ex '(pasta|passt)(\.avx2)?' >/dev/null; } # Debian: pasta -> passt(.avx2)
no_cordon() { ! lh_procs | grep -x 'cordon.*' >/dev/null; }
# The run's state entries left in either state root, by name.
state_left() {
	local f
	for f in /run/cordon/bnc-$$-* "$rootless_state"/bnc-$$-*; do
		[ -e "$f" ] && printf '%s\n' "${f##*/}"
	done
}
no_state() {
	[ -z "$(state_left)" ]
}
only_host_table() {
	[ "$(ip netns exec "$LAB_LH" nft list tables 2>/dev/null | grep -vx 'table inet cordon-host')" = "" ]
}

printf '# net-concurrent: %s sandboxes at once per backend, hold %ss; %s, %s cores, load %s; %s\n' \
	"$n" "$hold" "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(date -u +%FT%TZ)"
printf '%-15s %8s %9s %9s %8s %8s %10s %10s\n' backend started succeeded uplinks wall-s peak dur-med-s dur-max-s

for b in $backends; do
	case $b in
	veth | pasta-root) ;;
	pasta-rootless)
		if ! rootless_ok; then
			note "pasta-rootless skipped: no user $user, or /dev/net/tun not usable by it"
			continue
		fi
		;;
	*) bad "unknown backend $b"; continue ;;
	esac
	mkdir -p "$tmp/$b"
	chmod 777 "$tmp/$b" # the rootless supervisor writes its result JSON here
	t0=${EPOCHREALTIME/[.,]/}
	pids=()
	for ((i = 1; i <= n; i++)); do
		run_one "$b" "$i" &
		pids+=($!)
	done
	wait "${pids[@]}" # not a bare wait: the lab's servers are children too
	t1=${EPOCHREALTIME/[.,]/}

	# Per sandbox: rc, started, lookup, get, uplink, duration, start, end.
	summary=$("$LAB_PYTHON" - "$tmp/$b" "$n" <<-'EOF'
		import json, os, sys
		d, n = sys.argv[1], int(sys.argv[2])
		for i in range(1, n + 1):
		    p = lambda ext: os.path.join(d, "%d.%s" % (i, ext))
		    rc = open(p("rc")).read().strip() if os.path.exists(p("rc")) else "?"
		    out = open(p("out"), errors="replace").read() if os.path.exists(p("out")) else ""
		    started = ended = "-"
		    for line in out.splitlines():
		        if line.startswith("STARTED "): started = line.split()[1]
		        if line.startswith("ENDED "): ended = line.split()[1]
		    look = "ok" if "LOOKUP OK" in out else "fail"
		    get = "ok" if "GET OK" in out else "fail"
		    uplink, dur = "-", "-"
		    try:
		        j = json.load(open(p("json")))
		        uplink = ((j.get("network") or {}).get("uplink") or {}).get("host") or "-"
		        dur = j.get("duration_ms", "-")
		    except Exception:
		        uplink = "nojson"
		    print(i, rc, started, look, get, uplink, dur, ended)
	EOF
	)
	started=$(awk '$3 != "-"' <<<"$summary" | wc -l)
	ok=$(awk '$2 == 0 && $3 != "-" && $4 == "ok" && $5 == "ok" && $6 != "nojson"' <<<"$summary" | wc -l)
	nup=$(awk '$6 != "-" && $6 != "nojson" { print $6 }' <<<"$summary" | sort | wc -l)
	nuniq=$(awk '$6 != "-" && $6 != "nojson" { print $6 }' <<<"$summary" | sort -u | wc -l)
	if [ "$b" = veth ]; then
		uplinks="$nuniq/$nup"
		# A /30 used again after its first sandbox ended is fine; two
		# sandboxes whose workloads overlapped in time must not share one.
		clash=$(awk '$6 ~ /^[0-9.]+$/ && $3 != "-" && $8 != "-" { print $6, $3, $8, $1 }' <<<"$summary" |
			sort -k1,1 -k2,2n | awk '$1 == u && $2 < e { print "#" i " and #" $4 " share " $1 } { if ($1 != u || $3 > e) e = $3; u = $1; i = $4 }')
		[ "$nup" -eq "$n" ] || bad "$b: only $nup of $n result JSONs name an uplink"
		[ -z "$clash" ] || bad "$b: sandboxes running at the same time share an uplink: $clash"
		[ "$nuniq" -eq "$nup" ] || note "$b: $((nup - nuniq)) uplink /30(s) reused by a sandbox started after the first one's workload ended"
	else
		uplinks="($nuniq/$nup)" # pasta: every sandbox sees the host's own address
	fi
	# The peak overlap: the most workloads between STARTED and ENDED at once.
	peak=$(awk '$3 != "-" && $8 != "-" { print $3, 1; print $8, -1 }' <<<"$summary" |
		sort -k1,1n -k2,2n | awk '{ c += $2; if (c > m) m = c } END { print m + 0 }')
	durs=$(awk '$7 ~ /^[0-9]+$/ { print $7 }' <<<"$summary" | sort -n)
	dmed=$(awk '{ a[NR] = $1 } END { if (NR) printf "%.2f", a[int((NR + 1) / 2)] / 1000; else print "-" }' <<<"$durs")
	dmax=$(awk '{ m = $1 } END { if (NR) printf "%.2f", m / 1000; else print "-" }' <<<"$durs")
	wall=$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.2f", t / 1e6 }')
	printf '%-15s %8s %9s %9s %8s %8s %10s %10s\n' "$b" "$started/$n" "$ok/$n" "$uplinks" "$wall" "$peak" "$dmed" "$dmax"
	[ "$ok" -eq "$n" ] || {
		bad "$b: $((n - ok)) of $n sandboxes failed; the first ones:"
		awk '!($2 == 0 && $3 != "-" && $4 == "ok" && $5 == "ok" && $6 != "nojson")' <<<"$summary" | head -n 5 |
			while read -r i rc rest; do
				printf '#   #%s rc=%s %s | %s\n' "$i" "$rc" "$rest" \
					"$(tr '\n' ' ' <"$tmp/$b/$i.err" | cut -c1-200)"
			done
	}

	# Leaks, once every sandbox of this backend has exited.
	for check in no_cdr_links no_pasta no_cordon no_state only_host_table; do
		if s=$(poll 30 "$check"); then
			note "$b: $check after ${s}s"
		else
			bad "$b: $check still false after 30 s"
			case $check in
			no_cdr_links) ip -n "$LAB_LH" -o link show | grep ' cdr-' | head -n 5 ;;
			no_pasta | no_cordon) lh_procs | sort | uniq -c ;;
			no_state) state_left | head -n 5 ;;
			only_host_table) ip netns exec "$LAB_LH" nft list tables ;;
			esac
		fi
	done
done

[ "$fail" -eq 0 ] && echo "# all good" || echo "# FAILURES above"
exit "$fail"
