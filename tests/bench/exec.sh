#!/usr/bin/env bash
# tests/bench/exec.sh — the cost of one command in a live sandbox (not a test).
#
# Runs N sequential `/bin/true` commands per way of entering one live
# sandbox, in R interleaved rounds, and prints per way the milliseconds per
# command (median over the rounds of each round's mean) and the ratios the
# project holds itself to (docs/benchmarks.md, "exec"):
#
#   nsenter   the floor: util-linux nsenter entering the sandbox workload's
#             namespaces (user, mount, pid, uts, ipc, net, cgroup) from a
#             process first written into the sandbox's cgroups (a subshell
#             of the timing loop: a fork it pays anyway), running /bin/true
#   cordon    cordon exec ID -- /bin/true
#   cordon-t  cordon exec --timeout 60 ID -- /bin/true (the supervised path:
#             a reaper, the tree kill armed)
#   podman    podman exec CTR /bin/true, on a container of an image imported
#             from the same rootfs (podman import: no registry)
#
#   tests/bench/exec.sh [-n N] [-r R] [--cordon PATH] [--rootfs DIR]
#
#   -n N           commands per round (default 50, env BENCH_N; podman does N/5)
#   -r R           rounds (default 5, env BENCH_ROUNDS)
#   --cordon PATH  cordon binary (default build/cordon of this checkout)
#   --rootfs DIR   rootfs (default build/rootfs)
#
# The sandbox is `cordon create ROOTFS` where this cordon has it (a native
# session), else `cordon create --bundle` of a bundle from `cordon spec`.
# Needs root (nsenter into another user namespace's processes, podman).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${BENCH_N:-50}
rounds=${BENCH_ROUNDS:-5}
cordon=$top/build/cordon
rootfs=$top/build/rootfs

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() {
	echo "exec.sh: $*" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--cordon) cordon=$2; shift 2 ;;
	--rootfs) rootfs=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer"
[ "$(id -u)" -eq 0 ] || die "needs root"
[ -x "$cordon" ] || die "no cordon binary at $cordon (ninja -C build)"
rootfs=$(cd "$rootfs" && pwd -P)

tmp=$(mktemp -d /tmp/cordon-bench-exec.XXXXXX)
root=$tmp/state
id=cbench-exec-$$
pod=cbench-exec-$$
image=localhost/cordon-bench-exec:$$
have_podman=0

cleanup() {
	"$cordon" --root "$root" delete -f "$id" >/dev/null 2>&1 || true
	if [ "$have_podman" = 1 ]; then
		podman rm -f -t 0 "$pod" >/dev/null 2>&1 || true
		podman rmi -f "$image" >/dev/null 2>&1 || true
	fi
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT

# children_cpu_us: the CPU time (user + system) of every child this shell has
# waited for, and of theirs, from the `times` builtin (clock ticks); run in
# the shell itself (a command substitution would be a subshell of its own).
children_cpu_us() {
	times >"$tmp/times"
	tail -1 "$tmp/times" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
	       printf "%d\n", t * 1000000 }'
}

# time_round N CMD...: CMD N times; prints "WALL_US CPU_US", or "fail". The
# CPU time counts what the commands' processes ran, whatever else the machine
# runs meanwhile; only the processes waited for count (not podman's conmon).
time_round() {
	local n=$1 i t0 t1 c0 c1
	shift
	children_cpu_us >"$tmp/c0"
	t0=${EPOCHREALTIME/./}
	for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 || { echo fail; return; }; done
	t1=${EPOCHREALTIME/./}
	children_cpu_us >"$tmp/c1"
	c0=$(cat "$tmp/c0") c1=$(cat "$tmp/c1")
	echo "$((t1 - t0)) $((c1 - c0))"
}

# --- the sandbox ------------------------------------------------------------
if "$cordon" create --help 2>&1 | grep 'ROOTFS' >/dev/null; then
	kind="native session (cordon create ROOTFS)"
	"$cordon" --root "$root" create --owner none --name "$id" "$rootfs" >/dev/null ||
		die "cordon create $rootfs failed"
else
	kind="OCI container (cordon create --bundle)"
	mkdir -p "$tmp/bundle"
	"$cordon" spec -b "$tmp/bundle"
	python3 - "$tmp/bundle/config.json" "$rootfs" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["root"] = {"path": sys.argv[2], "readonly": True}
		c["process"]["terminal"] = False
		c["process"]["args"] = ["sleep", "1000000"]
		c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/sys")]
		c.get("linux", {}).get("resources", {}).pop("devices", None)
		json.dump(c, open(sys.argv[1], "w"))
	EOF
	"$cordon" --root "$root" create -b "$tmp/bundle" "$id" </dev/null >/dev/null 2>&1 ||
		die "cordon create --bundle failed"
	"$cordon" --root "$root" start "$id" || die "cordon start failed"
fi
"$cordon" --root "$root" exec "$id" -- /bin/true || die "cordon exec failed"
init=$("$cordon" --root "$root" state "$id" | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])')
# The workload: the init's first child (its namespaces are the ones an exec joins).
wpid=$(pgrep -o -P "$init")
[ -n "$wpid" ] || die "no workload process below the init $init"

# The sandbox's cgroups, one cgroup.procs per hierarchy it has one in.
procs_files=()
while IFS=: read -r _ ctrl path; do
	[ "$path" = / ] && continue
	case $ctrl in
	"") dir=/sys/fs/cgroup/unified ;;
	name=*) continue ;;
	*) dir=/sys/fs/cgroup/${ctrl%%,*} ;;
	esac
	[ -d /sys/fs/cgroup/cgroup.procs ] || [ -e "$dir$path/cgroup.procs" ] || continue
	procs_files+=("$dir$path/cgroup.procs")
done <"/proc/$wpid/cgroup"
if [ -e /sys/fs/cgroup/cgroup.procs ]; then
	procs_files=("/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$wpid/cgroup")/cgroup.procs")
fi

# One command of the floor: a subshell (the loop's fork) joins the cgroups, then nsenter.
nsenter_once() {
	(
		for f in "${procs_files[@]}"; do echo "$BASHPID" >"$f"; done
		exec nsenter -t "$wpid" -U -m -p -u -i -n -C --preserve-credentials /bin/true
	)
}
nsenter_once || die "nsenter into the sandbox failed"

# --- podman -----------------------------------------------------------------
# Its default rlimits (nofile, nproc) may be above what this host lets root
# raise to (no CAP_SYS_RESOURCE in a container's bounding set): set low ones.
# crun refuses a hybrid cgroup layout: runc is tried next.
podman_note=
podman_rt=()
if command -v podman >/dev/null 2>&1; then
	have_podman=1
	podman_note="podman could not run the imported image with crun or runc"
	if tar -C "$rootfs" -c . 2>/dev/null | podman import -q - "$image" >/dev/null 2>&1; then
		for rt in "" runc; do
			podman_rt=(${rt:+--runtime "$rt"})
			podman rm -f -t 0 "$pod" >/dev/null 2>&1 || true
			if podman "${podman_rt[@]}" run -d --name "$pod" --network none \
				--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$image" \
				sleep 1000000 >/dev/null 2>&1 &&
				podman "${podman_rt[@]}" exec "$pod" /bin/true >/dev/null 2>&1; then
				podman_note=
				break
			fi
		done
	fi
else
	podman_note="podman not installed (contrib/deps.sh)"
fi

ways=(nsenter cordon cordon-t)
[ -z "$podman_note" ] && ways+=(podman)
declare -A per cpu
for ((r = 0; r < rounds; r++)); do
	for w in "${ways[@]}"; do
		k=$n
		case $w in
		nsenter) us=$(time_round "$k" nsenter_once) ;;
		cordon) us=$(time_round "$k" "$cordon" --root "$root" exec "$id" -- /bin/true) ;;
		cordon-t) us=$(time_round "$k" "$cordon" --root "$root" exec --timeout 60 "$id" -- /bin/true) ;;
		podman)
			k=$(((n + 4) / 5))
			us=$(time_round "$k" podman "${podman_rt[@]}" exec "$pod" /bin/true)
			;;
		esac
		[ "$us" = fail ] && die "$w failed in round $((r + 1))"
		per[$w]+="$((${us% *} / k)) "
		cpu[$w]+="$((${us#* } / k)) "
	done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "exec latency: $kind; $n commands x $rounds rounds (podman $(((n + 4) / 5))), median of round means"
echo "machine: $(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %12s %10s %12s %10s\n' way wall-ms/cmd vs-nsenter cpu-ms/cmd vs-nsenter
floor=$(median "${per[nsenter]}")
cfloor=$(median "${cpu[nsenter]}")
for w in "${ways[@]}"; do
	m=$(median "${per[$w]}")
	cm=$(median "${cpu[$w]}")
	if [ "$w" = podman ]; then
		printf '%-10s %12s %10s %12s %10s\n' "$w" "$(ms "$m")" "$(ratio "$m" "$floor")" "-" "-"
	else
		printf '%-10s %12s %10s %12s %10s\n' "$w" "$(ms "$m")" "$(ratio "$m" "$floor")" \
			"$(ms "$cm")" "$(ratio "$cm" "$cfloor")"
	fi
done
c=$(median "${per[cordon]}")
echo "cordon exec / nsenter: wall $(ratio "$c" "$floor"), cpu $(ratio "$(median "${cpu[cordon]}")" "$cfloor") (target <= 1.5)"
if [ -z "$podman_note" ]; then
	echo "podman exec / cordon exec: wall $(ratio "$(median "${per[podman]}")" "$c") (target >= 20;" \
		"podman $(podman --version | awk '{ print $3 }'), runtime ${podman_rt[1]:-default})"
else
	echo "podman: $podman_note"
fi
