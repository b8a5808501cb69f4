#!/usr/bin/env bash
# tests/bench/startup.sh — sandbox start-up benchmark (not a test).
#
# Runs N sequential starts of /bin/true per runtime, in R rounds, and prints per
# runtime the milliseconds per sandbox (median over the rounds of each round's
# mean), its ratio to cordon and its ratio to the bare `unshare` floor.
#
#   tests/bench/startup.sh [-n N] [-r R] [--cordon PATH] [--rootfs DIR]
#                          [--rootless USER | --no-rootless]
#
#   -n N             starts per round (default 50, env BENCH_N)
#   -r R             rounds (default 5, env BENCH_ROUNDS)
#   --cordon PATH    cordon binary (default build/cordon of this checkout)
#   --rootfs DIR     rootfs for every runtime (default build/rootfs)
#   --rootless USER  also run cordon, bwrap and unshare as USER (runuser -u USER --)
#                    and print a second table; default: user cordon-test if it exists
#   --no-rootless    only the first table
#
# Runtimes, each only where installed: /bin/true itself (fork+exec baseline),
# unshare -Urmpnui --fork (the floor), cordon, `cordon run --bundle` (the
# same kind of bundle as runc's and crun's, from `runc spec`), bwrap, runc,
# crun, podman; and "v2 view" rows of crun and cordon --bundle, each round run
# in a private mount namespace whose /sys/fs/cgroup is the cgroup2 hierarchy
# alone, with one bundle (crun spec, no device rules): crun refuses a hybrid
# layout whose cgroup2 holds a controller, so this is where the two compare.
# Rounds are interleaved (round 1 of every runtime, then round 2, ...) so that
# a burst of noise on the machine hits all runtimes alike. Each runtime is
# started once untimed first (warm-up and probe); a runtime that fails prints
# "failed: <first line of its error>" instead of a number.
# runc/crun run an OCI bundle in a temp dir: rootfs is a read-only bind of the
# same rootfs, config.json comes from `runc spec` / `crun spec`, edited with
# python3 (args /bin/true, terminal false, root readonly); one container id per
# start. Needs root for the first table's runc/crun/podman rows and for
# --rootless (runuser).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

n=${BENCH_N:-50}
rounds=${BENCH_ROUNDS:-5}
cordon=$top/build/cordon
rootfs=$top/build/rootfs
rootless_user=
rootless_default=1

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() {
	echo "startup.sh: $*" >&2
	exit 2
}
need_arg() { [ $# -ge 2 ] || die "option $1 needs a value"; }

while [ $# -gt 0 ]; do
	case $1 in
	-n) need_arg "$@"; n=$2; shift 2 ;;
	-n*) n=${1#-n}; shift ;;
	-r) need_arg "$@"; rounds=$2; shift 2 ;;
	-r*) rounds=${1#-r}; shift ;;
	--cordon) need_arg "$@"; cordon=$2; shift 2 ;;
	--cordon=*) cordon=${1#*=}; shift ;;
	--rootfs) need_arg "$@"; rootfs=$2; shift 2 ;;
	--rootfs=*) rootfs=${1#*=}; shift ;;
	--rootless) need_arg "$@"; rootless_user=$2; rootless_default=0; shift 2 ;;
	--rootless=*) rootless_user=${1#*=}; rootless_default=0; shift ;;
	--no-rootless) rootless_user=; rootless_default=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done

[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive integer, got '$n'"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "-r wants a positive integer, got '$rounds'"
[ -d "$rootfs" ] || die "rootfs '$rootfs' is not a directory (build it: ninja -C build)"
[ -x "$rootfs/bin/true" ] || [ -L "$rootfs/bin/true" ] || die "rootfs '$rootfs' has no /bin/true"
rootfs=$(cd "$rootfs" && pwd -P)
case $cordon in */*) [ -d "$(dirname "$cordon")" ] && cordon=$(cd "$(dirname "$cordon")" && pwd -P)/$(basename "$cordon") ;; esac

is_root=0
[ "$(id -u)" -eq 0 ] && is_root=1
if [ "$rootless_default" -eq 1 ] && [ "$is_root" -eq 1 ] && id -u cordon-test >/dev/null 2>&1; then
	rootless_user="cordon-test"
fi
if [ -n "$rootless_user" ]; then
	[ "$is_root" -eq 1 ] || die "--rootless needs root (it uses runuser)"
	id -u "$rootless_user" >/dev/null 2>&1 || die "no such user '$rootless_user'"
	[ "$(id -u "$rootless_user")" -ne 0 ] || die "--rootless user must not be root"
	command -v runuser >/dev/null 2>&1 || die "runuser not found (util-linux)"
fi

# ---------------------------------------------------------------- temp dir ---
tmp=$(mktemp -d /tmp/cordon-bench.XXXXXX)
chmod 755 "$tmp"
id_prefix="cbench-$$-"
bind_mounts=()

cleanup() {
	local rt c m
	for rt in runc crun; do
		command -v "$rt" >/dev/null 2>&1 || continue
		for c in $("$rt" list -q 2>/dev/null | grep -F -- "$id_prefix" || true); do
			"$rt" delete -f "$c" >/dev/null 2>&1 || true
		done
	done
	for m in "${bind_mounts[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	# Never rm -rf through a bind of the real rootfs.
	if [ -d "$tmp" ] && ! findmnt -rn -o TARGET | grep -F -- "$tmp" >/dev/null; then
		rm -rf -- "$tmp"
	elif [ -d "$tmp" ]; then
		echo "startup.sh: something is still mounted under $tmp; left it in place" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------ timing core ---
# time_round N PREFIX CMD...: runs CMD N times (with PREFIX$i appended as last
# argument if PREFIX is non-empty), stdout to /dev/null, stderr left to the
# caller. Prints "ok MICROSECONDS" or "fail RC". Self-contained: it is also
# shipped to the unprivileged user with declare -f.
time_round() {
	local n=$1 pfx=$2 i rc=0 t0 t1
	shift 2
	# EPOCHREALTIME (bash 5) costs no fork; date is the fallback.
	if [ -n "${EPOCHREALTIME:-}" ]; then t0=$EPOCHREALTIME; else t0=$(date +%s.%N); fi
	if [ -n "$pfx" ]; then
		{ for ((i = 0; i < n; i++)); do "$@" "$pfx$i" || { rc=$?; break; }; done; } >/dev/null
	else
		{ for ((i = 0; i < n; i++)); do "$@" || { rc=$?; break; }; done; } >/dev/null
	fi
	if [ -n "${EPOCHREALTIME:-}" ]; then t1=$EPOCHREALTIME; else t1=$(date +%s.%N); fi
	if [ "$rc" -ne 0 ]; then
		echo "fail $rc"
	else
		# seconds.fraction -> microseconds, without floating point in bash
		t0=${t0/,/.} t1=${t1/,/.}
		local f0=${t0#*.}000000 f1=${t1#*.}000000
		echo "ok $(((${t1%.*} - ${t0%.*}) * 1000000 + 10#${f1:0:6} - 10#${f0:0:6}))"
	fi
}

# run_as USER|"" DIR CMD...: runs CMD in DIR, as USER via runuser if given.
run_as() {
	local user=$1 dir=$2
	shift 2
	if [ -z "$user" ]; then
		(cd "$dir" && "$@")
	else
		local uid xdg=
		uid=$(id -u "$user")
		[ -d "/run/user/$uid" ] && xdg=/run/user/$uid
		runuser -u "$user" -- env -u XDG_RUNTIME_DIR ${xdg:+XDG_RUNTIME_DIR=$xdg} \
			bash -c "set -euo pipefail; $(declare -f time_round); cd \"\$1\"; shift; \"\$@\"" \
			bench "$dir" "$@"
	fi
}

# --------------------------------------------------------------- runtimes ---
bwrap_cmd=(bwrap --unshare-all --die-with-parent --ro-bind "$rootfs" / --proc /proc
	--dev /dev --tmpfs /tmp /bin/true)
unshare_cmd=(unshare -Urmpnui --fork /bin/true)

# make_bundle RUNTIME [SPEC-RUNTIME]: an OCI bundle in $tmp/bundle-RUNTIME; prints its path
# or fails with a message on stderr.
make_bundle() {
	local rt=$1 b=$tmp/bundle-$1 spec_rt=${2:-$1}
	mkdir -p "$b/rootfs"
	command -v "$spec_rt" >/dev/null 2>&1 || spec_rt=runc
	(cd "$b" && "$spec_rt" spec) || { echo "$spec_rt spec failed" >&2; return 1; }
	if mount --bind "$rootfs" "$b/rootfs" 2>/dev/null; then
		bind_mounts+=("$b/rootfs")
		mount -o remount,bind,ro "$b/rootfs" 2>/dev/null || true
	else
		cp -a "$rootfs/." "$b/rootfs/"
	fi
	python3 - "$b/config.json" <<-'EOF'
		import json, sys
		path = sys.argv[1]
		with open(path) as f:
		    c = json.load(f)
		c["process"]["args"] = ["/bin/true"]
		c["process"]["terminal"] = False
		c.setdefault("root", {})["path"] = "rootfs"
		c["root"]["readonly"] = True
		with open(path, "w") as f:
		    json.dump(c, f, indent=2)
	EOF
	echo "$b"
}

# Global results: status[key]=ok|na|failed, note[key]=text, means[key]="us us ..."
declare -A status note means label
keys_root=()
keys_user=()

# cmd_for KEY: sets CMD (array) and PFX for KEY = mode:runtime.
cmd_for() {
	local rt=${1#*:}
	V2VIEW=
	PFX=
	case $rt in
	true) CMD=(/bin/true) ;;
	unshare) CMD=("${unshare_cmd[@]}") ;;
	unshare-subid) CMD=(unshare --map-auto --map-root-user -mpnui --fork /bin/true) ;;
	cordon) CMD=("$cordon_run" run "$rootfs" /bin/true) ;;
	bwrap) CMD=("${bwrap_cmd[@]}") ;;
	runc) CMD=(runc run -b "$tmp/bundle-runc") PFX="${id_prefix}runc-r$ROUND-" ;;
	crun) CMD=(crun run -b "$tmp/bundle-crun") PFX="${id_prefix}crun-r$ROUND-" ;;
	cordon-bundle) CMD=("$cordon_run" run -b "$tmp/bundle-cordon-bundle") PFX="${id_prefix}cb-r$ROUND-" ;;
	crun-v2) CMD=(crun run -b "$tmp/bundle-v2") PFX="${id_prefix}crun2-r$ROUND-" V2VIEW=1 ;;
	cordon-bundle-v2) CMD=("$cordon_run" run -b "$tmp/bundle-v2") PFX="${id_prefix}cb2-r$ROUND-" V2VIEW=1 ;;
	podman) CMD=(podman run --rm --network none --rootfs "$rootfs" /bin/true) ;;
	esac
}

first_line() {
	local l
	l=$(grep -m1 -v '^[[:space:]]*$' "$1" 2>/dev/null || true)
	[ -n "$l" ] || l="exit status $2, no message"
	printf '%s' "${l:0:160}"
}

# add KEY LABEL INSTALLED?: registers a row.
add() {
	local key=$1
	label[$key]=$2
	means[$key]=
	if [ "$3" -eq 1 ]; then status[$key]=ok; else status[$key]=na; note[$key]="not installed"; fi
	case $key in root:*) keys_root+=("$key") ;; *) keys_user+=("$key") ;; esac
}
have() { command -v "$1" >/dev/null 2>&1; }
have_cordon=0
[ -x "$cordon" ] && have_cordon=1
if [ "$have_cordon" -eq 0 ] && [[ $cordon != */* ]] && have "$cordon"; then have_cordon=1; fi

yes_no() { "$@" && echo 1 || echo 0; }
add root:true "/bin/true" 1
add root:unshare "unshare" "$(yes_no have unshare)"
add root:cordon "cordon" "$have_cordon"
add root:bwrap "bwrap" "$(yes_no have bwrap)"
add root:cordon-bundle "cordon -b" "$have_cordon"
add root:runc "runc" "$(yes_no have runc)"
add root:cordon-bundle-v2 "cordon -b v2" "$have_cordon"
add root:crun-v2 "crun v2" "$(yes_no have crun)"
add root:crun "crun" "$(yes_no have crun)"
add root:podman "podman" "$(yes_no have podman)"
if [ -n "$rootless_user" ]; then
	add user:true "/bin/true" 1
	add user:unshare "unshare" "$(yes_no have unshare)"
	add user:cordon "cordon" "$have_cordon"
	add user:bwrap "bwrap" "$(yes_no have bwrap)"
	# Extra floor for rootless: unshare also filling the subordinate id range
	# through newuidmap/newgidmap, as cordon does when /etc/subuid has the user.
	if have unshare && unshare --help 2>/dev/null | grep -- --map-auto >/dev/null &&
		have newuidmap && have newgidmap &&
		grep -q "^$rootless_user:" /etc/subuid 2>/dev/null &&
		grep -q "^$rootless_user:" /etc/subgid 2>/dev/null; then
		add user:unshare-subid "unshare-subid" 1
	fi
fi

workdir_root=$tmp/work
mkdir -p "$workdir_root"
if [ -n "$rootless_user" ]; then
	workdir_user=$tmp/work-$rootless_user
	mkdir -p "$workdir_user"
	chown "$rootless_user" "$workdir_user"
fi

for rt in runc crun cordon-bundle; do
	[ "${status[root:$rt]}" = ok ] || continue
	if ! make_bundle "$rt" >/dev/null 2>"$tmp/err"; then
		status[root:$rt]=failed
		note[root:$rt]="failed: bundle: $(first_line "$tmp/err" 1)"
	fi
done
# The v2 view's bundle (crun's spec): no device rules, which crun turns into an
# eBPF program that needs a raised RLIMIT_MEMLOCK (root without CAP_SYS_RESOURCE
# cannot); the same bundle for both.
if [ "${status[root:crun-v2]}" = ok ] && make_bundle v2 crun >/dev/null 2>"$tmp/err"; then
	python3 -c 'import json, sys; p = sys.argv[1]; c = json.load(open(p)); c["linux"].pop("resources", None); json.dump(c, open(p, "w"))' "$tmp/bundle-v2/config.json"
else
	[ "${status[root:crun-v2]}" != ok ] || { status[root:crun-v2]=failed; note[root:crun-v2]="failed: bundle: $(first_line "$tmp/err" 1)"; }
	status[root:cordon-bundle-v2]=failed
	note[root:cordon-bundle-v2]="no v2-view bundle (needs crun)"
fi

# run_one KEY: one timed round of KEY, appends the mean to means[KEY].
run_one() {
	local key=$1 count=$2 user='' dir=$workdir_root out rc
	[ "${status[$key]}" = ok ] || return 0
	case $key in user:*) user=$rootless_user dir=$workdir_user ;; esac
	cmd_for "$key"
	rc=0
	if [ -n "$V2VIEW" ]; then
		# A private mount namespace whose /sys/fs/cgroup is the cgroup2
		# hierarchy alone: the whole round runs in it, set up once, untimed.
		out=$(cd "$dir" && unshare -m bash -c "set -euo pipefail; $(declare -f time_round)
			mount --make-rprivate /; umount -l /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup
			time_round \"\$@\"" bench "$count" "$PFX" "${CMD[@]}" 2>"$tmp/err") || rc=$?
	else
		out=$(run_as "$user" "$dir" time_round "$count" "$PFX" "${CMD[@]}" 2>"$tmp/err") || rc=$?
	fi
	if [ "$rc" -ne 0 ] || [[ $out != ok\ * ]]; then
		[[ $out == fail\ * ]] && rc=${out#fail }
		status[$key]=failed
		note[$key]="failed: $(first_line "$tmp/err" "$rc")"
		return 0
	fi
	means[$key]+="${out#ok } "
}

# Other people may rebuild the checkout while we run: time a snapshot of the
# binary taken now, so that every round runs the same build. (We always pass
# ROOTFS, so cordon's own location does not matter.)
cordon_run=$cordon
cordon_sha=-
if [ "$have_cordon" -eq 1 ]; then
	mkdir -p "$tmp/bin"
	cp "$(command -v "$cordon")" "$tmp/bin/cordon"
	chmod 755 "$tmp/bin" "$tmp/bin/cordon"
	cordon_run=$tmp/bin/cordon
	cordon_sha=$(sha256sum "$cordon_run" | cut -c1-12)
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

all_keys=("${keys_root[@]}" "${keys_user[@]}")
total=$(((rounds * n + 1) * ${#all_keys[@]}))
echo "# cordon start-up benchmark: $n starts x $rounds rounds per runtime (up to $total starts)" >&2

ROUND=w
for key in "${all_keys[@]}"; do run_one "$key" 1; done # warm-up + probe
means_reset() { local k; for k in "${all_keys[@]}"; do means[$k]=; done; }
means_reset
for ((ROUND = 1; ROUND <= rounds; ROUND++)); do
	echo "# round $ROUND/$rounds" >&2
	for key in "${all_keys[@]}"; do run_one "$key" "$n"; done
	for rt in runc crun; do # runc/crun run deletes on exit; sweep leftovers untimed
		have "$rt" || continue
		for c in $("$rt" list -q 2>/dev/null | grep -F -- "$id_prefix" || true); do
			"$rt" delete -f "$c" >/dev/null 2>&1 || true
		done
	done
done

# ---------------------------------------------------------------- results ---
# stats KEY: prints "MEDIAN_MS MIN_MS MAX_MS" over the rounds' means.
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

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
[ -n "$cpu" ] || cpu=unknown
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	cg="unified (cgroup2 at /sys/fs/cgroup)"
elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	cg="hybrid (cgroup v1 controllers + cgroup2 at /sys/fs/cgroup/unified)"
else
	cg="legacy (cgroup v1 only)"
fi
ver() { "$@" 2>/dev/null | head -n1 || true; }

echo "cordon start-up benchmark  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  kernel:   $(uname -r)   nproc: $(nproc)   cpu: $cpu   memory: $mem"
echo "  cgroups:  $cg"
echo "  loadavg:  $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end (1/5/15 min; other work on the machine skews figures)"
echo "  rootfs:   $rootfs"
if [ "$have_cordon" -eq 1 ]; then
	echo "  cordon:   $cordon ($(ver "$cordon_run" --version), sha256 $cordon_sha..., copied at start)"
else
	echo "  cordon:   $cordon (not installed)"
fi
for rt in bwrap runc crun podman; do
	have "$rt" && echo "  $rt: $(printf '%*s' $((8 - ${#rt})) '')$(ver "$rt" --version)"
done
echo "  method:   $n sequential starts of /bin/true per round, $rounds rounds interleaved;"
echo "            ms/sandbox = median of the rounds' mean; range = min-max of the round means"

table() {
	local title=$1 k s
	shift
	local cordon_ms='' floor_ms=''
	declare -A med rng
	for k in "$@"; do
		if [ "${status[$k]}" = ok ] && s=$(stats "$k"); then
			med[$k]=${s%% *}
			rng[$k]=$(awk '{ printf "%.3f-%.3f", $2, $3 }' <<<"$s")
		fi
	done
	for k in "$@"; do
		case $k in *:cordon) cordon_ms=${med[$k]:-} ;; *:unshare) floor_ms=${med[$k]:-} ;; esac
	done
	echo
	echo "$title"
	printf '  %-14s %11s  %15s  %16s  %s\n' runtime ms/sandbox ratio-to-cordon ratio-to-unshare "range(ms)"
	for k in "$@"; do
		if [ -n "${med[$k]:-}" ]; then
			printf '  %-14s %11s  %15s  %16s  %s\n' "${label[$k]}" "${med[$k]}" \
				"$(ratio "${med[$k]}" "$cordon_ms")" "$(ratio "${med[$k]}" "$floor_ms")" "${rng[$k]}"
		else
			printf '  %-14s %s\n' "${label[$k]}" "${note[$k]:-failed: no result}"
		fi
	done
}
ratio() {
	if [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; else echo -; fi
}

if [ "$is_root" -eq 1 ]; then
	table "as root (uid 0)" "${keys_root[@]}"
else
	table "as uid $(id -u) -- NOT root, so runc/crun/podman run rootless or fail" "${keys_root[@]}"
fi
if [ -n "$rootless_user" ]; then
	table "rootless, as $rootless_user (uid $(id -u "$rootless_user")) via runuser" "${keys_user[@]}"
fi
