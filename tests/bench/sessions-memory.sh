#!/usr/bin/env bash
# tests/bench/sessions-memory.sh — what idle sandboxes cost the host in memory (not a test).
#
# Starts N idle sandboxes side by side, then sums, per sandbox, the private
# memory of every cordon process it keeps: the monitor (the host-side
# supervisor, state.json's owner_pid) and the sandbox's init (state.json's
# pid), from /proc/PID/smaps_rollup: Private_Dirty (pages only this process
# has written) and Anonymous (every anonymous page it maps, copy-on-write
# ones shared with its parent too). Prints the per-sandbox median and
# maximum, each process kind apart, and the total. Target (issue 14): at most
# 2 MiB of private memory per idle sandbox.
#
#   tests/bench/sessions-memory.sh [-n N] [--cordon PATH] [--rootfs DIR]
#
#   -n N           sandboxes (default 100, env BENCH_SESSIONS)
#   --cordon PATH  cordon binary (default build/cordon of this checkout)
#   --rootfs DIR   rootfs (default build/rootfs)
#
# A sandbox is `cordon create ROOTFS` where this cordon has it (a native
# session), else `cordon create --bundle` of a `cordon spec` bundle whose
# process is `sleep`, started. Run as root (the sandboxes' processes are
# read through /proc).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${BENCH_SESSIONS:-100}
cordon=$top/build/cordon
rootfs=$top/build/rootfs

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() {
	echo "sessions-memory.sh: $*" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--cordon) cordon=$2; shift 2 ;;
	--rootfs) rootfs=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer"
[ "$(id -u)" -eq 0 ] || die "needs root"
rootfs=$(cd "$rootfs" && pwd -P)

tmp=$(mktemp -d /tmp/cordon-bench-mem.XXXXXX)
root=$tmp/state
prefix=cbench-mem-$$-
ids=()
cleanup() {
	local id
	for id in "${ids[@]}"; do "$cordon" --root "$root" delete -f "$id" >/dev/null 2>&1 || true; done
	rm -rf -- "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT

native=0
if "$cordon" create --help 2>&1 | grep 'ROOTFS' >/dev/null; then
	native=1
	kind="native sessions (cordon create ROOTFS)"
else
	kind="OCI containers (cordon create --bundle, process: sleep)"
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
fi

for ((i = 0; i < n; i++)); do
	id=$prefix$i
	ids+=("$id")
	if [ "$native" = 1 ]; then
		"$cordon" --root "$root" create --owner none --name "$id" "$rootfs" >/dev/null </dev/null ||
			die "sandbox $i: cordon create failed"
	else
		"$cordon" --root "$root" create -b "$tmp/bundle" "$id" </dev/null >/dev/null 2>&1 ||
			die "sandbox $i: cordon create failed"
		"$cordon" --root "$root" start "$id" || die "sandbox $i: cordon start failed"
	fi
done

# kib PID FIELD: FIELD of /proc/PID/smaps_rollup, in KiB (0 if it is gone).
kib() { awk -v f="$2:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }

# One line per sandbox: monitor's Private_Dirty Anonymous, init's, then the sums.
for id in "${ids[@]}"; do
	read -r mon init < <(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s.get("owner_pid", 0), s.get("pid", 0))' "$root/$id/state.json")
	[ -d "/proc/$init" ] || die "sandbox $id: its init $init is not running"
	md=$(kib "$mon" Private_Dirty) ma=$(kib "$mon" Anonymous)
	id_=$(kib "$init" Private_Dirty) ia=$(kib "$init" Anonymous)
	echo "$md $ma $id_ $ia $((md + id_)) $((ma + ia))"
done >"$tmp/per"

stat_col() {
	cut -d' ' -f"$1" "$tmp/per" | sort -n |
		awk '{ v[NR] = $1; s += $1 } END { printf "%8d %8d %8.0f", v[int((NR + 1) / 2)], v[NR], s / NR }'
}
echo "idle sandboxes: $n $kind; per sandbox, KiB (median, max, mean)"
echo "machine: $(uname -r), $(nproc) cpus, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
printf '%-28s %8s %8s %8s\n' "" median max mean
printf '%-28s %s\n' "monitor Private_Dirty" "$(stat_col 1)"
printf '%-28s %s\n' "monitor Anonymous" "$(stat_col 2)"
printf '%-28s %s\n' "init Private_Dirty" "$(stat_col 3)"
printf '%-28s %s\n' "init Anonymous" "$(stat_col 4)"
printf '%-28s %s\n' "sandbox Private_Dirty" "$(stat_col 5)"
printf '%-28s %s\n' "sandbox Anonymous" "$(stat_col 6)"
max=$(cut -d' ' -f6 "$tmp/per" | sort -n | tail -1)
total=$(awk '{ s += $6 } END { print s }' "$tmp/per")
echo "all $n sandboxes: $((total / 1024)) MiB anonymous; the largest sandbox $max KiB" \
	"(target <= 2048 KiB each: $([ "$max" -le 2048 ] && echo met || echo NOT met))"
