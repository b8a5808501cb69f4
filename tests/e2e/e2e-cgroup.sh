#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: resource limits (cgroups) on this host's layout. Rootful: --memory
# OOM-kills, --pids stops a fork bomb, --cpus throttles, the default pids
# limit, the cgroup namespace, and the sandbox's cgroup directories gone
# after every kind of exit. Rootless (no delegation on v1/hybrid): requested
# limits fail closed, --limits best-effort runs unenforced, a plain run is
# unaffected. And a "pure v2 view": a private mount namespace with cgroup2
# mounted on /sys/fs/cgroup. And cgroups a workload makes below its own
# (an OCI cgroup mount, host root mapped) removed with it, also after a
# SIGKILL of the supervisor (the next run's sweep).
. "$(dirname "$0")/lib.sh"

CG=/sys/fs/cgroup

# The layout as cordon's docs define it, from statfs.
case $(stat -fc %T "$CG" 2>/dev/null) in
cgroup2fs) HOST_LAYOUT=v2 ;;
tmpfs) if [ "$(stat -fc %T "$CG/unified" 2>/dev/null)" = cgroup2fs ]; then HOST_LAYOUT=hybrid; else HOST_LAYOUT=v1; fi ;;
*) HOST_LAYOUT=none ;;
esac

# Our cgroup in the v1 hierarchy carrying CONTROLLER ("/" or a path).
# "" is the cgroup2 line ("0::/path").
self_cgroup() { awk -F: -v c="$1" 'c == "" && $2 == "" { print $3; exit } { n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) { print $3; exit } }' /proc/self/cgroup; }
# The directory cordon creates for run ID in the v1 hierarchy of CONTROLLER.
v1_dir() {
	local p
	p=$(self_cgroup "$1")
	[ "$p" = / ] && p=
	echo "$CG/$1$p/cordon-$2"
}

# Every directory named cordon-ID below /sys/fs/cgroup (all hierarchies).
cg_dirs_of() { find "$CG" -name "cordon-$1" -type d 2>/dev/null; }
no_cg_dirs_of() { [ -z "$(cg_dirs_of "$1")" ]; }

# json FILE KEY: the value as JSON text (true, 137, null), or "missing".
json() {
	"$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable"); sys.exit(0)
print(json.dumps(r[sys.argv[2]]) if sys.argv[2] in r else "missing")' "$1" "$2"
}

# expect_json FILE KEY VALUE: the field must read VALUE.
expect_json() {
	local got
	got=$(json "$1" "$2")
	[ "$got" = "$3" ] || fail "--result-json: expected \"$2\": $3, got $got ($(cat "$1" 2>/dev/null))"
}

# A rootless request of a limit: refused before anything runs (v1/hybrid
# have no delegation), naming the way out.
expect_fail_closed() {
	expect_cordon_error CGROUP best-effort || return 1
	expect_err_has "cannot enforce" || return 1
	no_cg_dirs_of "$ID" || fail "a refused run left cgroups: $(cg_dirs_of "$ID")"
}

# Every case also checks that no cordon-<its ids> directory is left in
# any hierarchy (the lib's leftover checks cover mounts, processes, state).
cg_case() {
	local left
	"$@"
	left=$(find "$CG" -path "*/cordon-$CASE_ID-*" -type d 2>/dev/null)
	[ -z "$left" ] || _fail_raw "leftover: cgroup directories remain:" "$(printf '%s\n' "$left" | _indent)"
	# remove them (children first), so that the next case starts clean
	[ -z "$left" ] || find "$CG" -depth -path "*/cordon-$CASE_ID-*" -type d -exec rmdir {} + 2>/dev/null
}

# --- memory ----------------------------------------------------------------

t_memory_oom() {
	local res=$CASE_DIR/result.json peak
	# tail buffers the last 200 MB of an endless stream: past 32 MB at once.
	crun --memory 32 --memory-swap 32 --timeout 30 --result-json "$res" -- tail -c 200000000 /dev/zero
	if [ "$MODE" = rootless ]; then
		expect_fail_closed
		return
	fi
	expect_rc 137 "expected the OOM-killed workload's 128+SIGKILL" || return
	expect_json "$res" oom_killed true
	expect_json "$res" signal 9
	expect_json "$res" limits_enforced true
	peak=$(json "$res" memory_peak_bytes)
	if [ "$peak" != null ]; then
		[ "$peak" -le $((33 * 1024 * 1024)) ] || fail "memory_peak_bytes $peak above the 32 MiB limit"
	fi
	# The host is fine: the supervisor reported it (above), this shell lives,
	# and the next sandbox, with a limit it stays under, runs normally.
	crun --memory 64 --result-json "$res" -- sh -c 'head -c 8000000 /dev/zero | tail -c 8000000 | wc -c'
	expect_rc 0 "a sandbox after the OOM kill failed"
	expect_out_eq 8000000
	expect_json "$res" oom_killed false
}

t_memory_swap_below_memory() {
	crun --memory 64 --memory-swap 32 -- true
	expect_cordon_error USAGE --memory-swap
	crun --memory-swap 32 -- true
	expect_cordon_error USAGE --memory
}

# --- pids ----------------------------------------------------------------

# pids_refused DIR: REFUSED, the "max" count of DIR/pids.events (the forks
# the pids controller refused in that cgroup), if it reads above what
# REFUSED held; true if it is above 0.
pids_refused() {
	local line
	{ while read -r line; do
		[[ $line == "max "* ]] && [ "${line#max }" -gt "$REFUSED" ] && REFUSED=${line#max }
	done <"$1/pids.events"; } 2>/dev/null
	[ "$REFUSED" -gt 0 ]
}
pids_refused_or_ended() { pids_refused "$1" || bg_ended; }

# The limit is shown by counting, not by catching the bomb at its height
# (its shells exit as their forks fail, so the number alive falls back
# between any two looks): the pids controller's own count of the forks
# it refused (pids.events "max", v1 and v2, read while the cgroup
# exists; it only grows), the bomb's own count ("can't fork" on its
# stderr, in the file after the run), and the cgroup's high-water mark
# (pids_peak, which cordon reads after the last process is gone), which
# must be exactly the limit: a fork was refused, so 20 were there.
# Nothing is timed: the bomb runs until the host has counted a refusal,
# however long a loaded machine takes to get there (a --timeout 3 ended
# it first there: no refusal yet), then its first shell exits, with the
# rest of the bomb still forking; every process of it ends with the
# sandbox. The first shell waits without forking (read -t on a fifo of
# its own, not sleep): a fork refused to it would end it with 2, as
# happened once in the VM. --timeout only bounds a run the test fails to end.
t_pids_fork_bomb() {
	local res=$CASE_DIR/result.json peak dir said
	REFUSED=0
	new_mark
	crun_bg --pids 20 --timeout 600 --workspace "$WS" --result-json "$res" -- \
		sh -c "mkfifo /tmp/w; exec 3<>/tmp/w; b() { b | b & }; b; until [ -e /workspace/counted ]; do read -t 1 _ <&3; done; exit 7; : $MARK"
	if [ "$MODE" = rootless ]; then
		wait_bg_for "$WAIT_LIMIT" || return
		expect_fail_closed
		return
	fi
	dir=$(v1_dir pids "$ID")
	[ "$HOST_LAYOUT" = v2 ] && dir=$CG$(self_cgroup "")/cordon-$ID
	# Until the controller has refused a fork (or the run is over): the
	# counter only grows, so any read after the first refusal sees it.
	wait_until 300 pids_refused_or_ended "$dir"
	pids_refused "$dir"
	touch "$WS/counted"
	wait_bg_for 300 || return
	[ "$REFUSED" -gt 0 ] || fail "$dir/pids.events: the pids controller refused no fork (max $REFUSED) while the run lasted; the limit never held back the bomb"
	expect_rc 7 "expected the bomb's first shell's own status once the refusal was counted"
	said=$(grep -c "can't fork" <<<"$ERR")
	[ "$said" -gt 0 ] || fail "the bomb saw no fork refused (no \"can't fork\" on its stderr)"
	peak=$(json "$res" pids_peak)
	if [ "$peak" != null ]; then
		[ "$peak" = 20 ] || fail "pids_peak $peak under --pids 20: expected exactly 20 (above is the limit broken; below, the refusals were not the limit's)"
	fi
	expect_json "$res" timed_out false
	expect_json "$res" limits_enforced true
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || fail "fork bomb processes outlived the sandbox: $(procs_matching "$MARK" | head -5)"
	no_cg_dirs_of "$ID" || fail "cgroups left after the run: $(cg_dirs_of "$ID")"
	_case_notes+=("note: pids.events max $REFUSED (as the host last read it), $said \"can't fork\" from the bomb, pids_peak $peak")
}

# The default limit, seen from the host while the sandbox runs.
t_pids_default_512() {
	local dir v
	new_mark
	crun_bg --workspace "$WS" -- sh -c "touch /workspace/ready; sleep $MARK"
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started"
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		return
	fi
	if [ "$MODE" = rootful ]; then
		dir=$(v1_dir pids "$ID")
		[ "$HOST_LAYOUT" = v2 ] && dir=$CG$(self_cgroup "")/cordon-$ID
		v=$(cat "$dir/pids.max" 2>/dev/null)
		[ "$v" = 512 ] || fail "$dir/pids.max reads '${v:-(missing)}', expected the default 512"
		grep -qxF "$dir" "/run/cordon/$ID/cgroups" 2>/dev/null ||
			fail "$dir is not recorded in the state directory (/run/cordon/$ID/cgroups: $(cat "/run/cordon/$ID/cgroups" 2>&1))"
	else
		# rootless: the default is not a request; it is silently absent
		no_cg_dirs_of "$ID" || fail "a rootless run created cgroups: $(cg_dirs_of "$ID")"
	fi
	pkill_mark
	wait_bg_for "$WAIT_LIMIT" || return
	if [ "$MODE" = rootless ]; then
		expect_err_empty "a plain rootless run printed something about cgroups"
	fi
	no_cg_dirs_of "$ID" || fail "cgroups left after exit: $(cg_dirs_of "$ID")"
}

# Ends the workload `sleep $MARK` (the sandbox then exits 143 or 0). The
# shell may not have started sleep yet when /workspace/ready appears (on a
# loaded or emulated machine the gap is long): wait for it first.
pkill_mark() {
	local line
	wait_until "$WAIT_LIMIT" sleep_running || fail "no 'sleep $MARK' process to end"
	while read -r line; do
		[[ $line == *": sleep $MARK" ]] && kill -TERM "${line%%:*}" 2>/dev/null
	done < <(procs_matching "$MARK")
}

t_pids_explicit_from_host() {
	local dir v
	if [ "$MODE" = rootless ]; then
		crun --pids 64 -- true
		expect_fail_closed
		return
	fi
	new_mark
	crun_bg --pids 64 --workspace "$WS" -- sh -c "touch /workspace/ready; sleep $MARK"
	wait_until "$WAIT_LIMIT" test -e "$WS/ready" || { fail "the workload never started"; kill -9 "$BG_PID"; wait_bg; return; }
	dir=$(v1_dir pids "$ID")
	[ "$HOST_LAYOUT" = v2 ] && dir=$CG$(self_cgroup "")/cordon-$ID
	v=$(cat "$dir/pids.max" 2>/dev/null)
	[ "$v" = 64 ] || fail "$dir/pids.max reads '${v:-(missing)}', expected 64"
	pkill_mark
	wait_bg_for "$WAIT_LIMIT"
}

# --- cpu -----------------------------------------------------------------

# busy_ratio FILE: cpu_usage_us / wall time of the run, as 0.xx.
busy_ratio() {
	"$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
u, d = r.get("cpu_usage_us"), r.get("duration_ms")
print("null" if u is None or not d else "%.3f" % (u / (d * 1000.0)))' "$1"
}

# awk's arithmetic comparison of two decimals: in A LO HI
between() { awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(a >= lo && a <= hi) }'; }

# The quota cordon wrote for run ID, as "QUOTA PERIOD" (cpu.max, or v1's two files).
cpu_quota_of() {
	local dir
	if [ "$HOST_LAYOUT" = v2 ]; then
		cat "$CG$(self_cgroup "")/cordon-$1/cpu.max" 2>/dev/null
		return
	fi
	dir=$(v1_dir cpu "$1")
	echo "$(cat "$dir/cpu.cfs_quota_us" 2>/dev/null) $(cat "$dir/cpu.cfs_period_us" 2>/dev/null)"
}

# What --cpus 0.5 sets is read exactly from the host (a count, not a
# sample); what a busy loop then gets is measured: never above the
# throttle (a load can only lower it). How little it may get depends on
# the machine's load: noted, never failed.
t_cpus_half() {
	local res=$CASE_DIR/result.json free=$CASE_DIR/free.json ratio control q
	if [ "$MODE" = rootful ]; then
		new_mark
		crun_bg --cpus 0.5 --workspace "$WS" -- sh -c "touch /workspace/ready; sleep $MARK"
		wait_until "$WAIT_LIMIT" test -e "$WS/ready" || { fail "the workload never started"; kill -9 "$BG_PID"; wait_bg; return; }
		q=$(cpu_quota_of "$ID")
		[ "$q" = "50000 100000" ] || fail "--cpus 0.5: the cgroup's quota and period read '$q', expected '50000 100000'"
		pkill_mark
		wait_bg_for "$WAIT_LIMIT"
	fi
	# 3 s of a busy loop, bounded by timeout(1) inside.
	crun --cpus 0.5 --result-json "$res" -- sh -c 'timeout 3 sh -c "while :; do :; done"; exit 0'
	if [ "$MODE" = rootless ]; then
		expect_fail_closed
		return
	fi
	expect_rc 0 || return
	expect_json "$res" limits_enforced true
	ratio=$(busy_ratio "$res")
	[ "$ratio" != null ] || { fail "no cpu_usage_us in --result-json: $(cat "$res")"; return; }
	# The same loop unlimited: how much of a core this machine gives us now.
	crun --result-json "$free" -- sh -c 'timeout 3 sh -c "while :; do :; done"; exit 0'
	control=$(busy_ratio "$free")
	_case_notes+=("note: --cpus 0.5 busy loop used $ratio of the wall time; unlimited: $control (loadavg $(cut -d' ' -f1-3 /proc/loadavg))")
	# The throttle is never exceeded, however idle the machine is.
	between "$ratio" 0 0.75 || fail "--cpus 0.5: the busy loop used $ratio of a core (expected 0.25-0.75)"
	# A lower bound would be a sample of the machine's load (the control
	# loop runs at another moment): only noted.
	between "$ratio" 0.25 1 ||
		_case_notes+=("note: the busy loop got only $ratio of a core (unlimited, just after: $control)")
	if [ "$control" != null ] && ! between "$control" 0.8 2; then
		_case_notes+=("note: unlimited loop below 0.8 of a core: a busy machine")
	fi
}

t_cpus_bad() {
	local v
	for v in 0 -1 abc 1.2.3; do
		crun --cpus "$v" -- true
		expect_cordon_error USAGE --cpus || return
	done
}

# --- namespace, profile ------------------------------------------------------

t_cgroup_namespace() {
	local res=$CASE_DIR/result.json bad pid line host
	# --memory (rootful) so that the nested memory hierarchy is used too.
	local opts=(--result-json "$res")
	[ "$MODE" = rootful ] && opts+=(--memory 64)
	crun "${opts[@]}" -- sh -c 'cat /proc/self/cgroup; echo --; cat /proc/1/cgroup'
	expect_rc 0 || return
	bad=$(printf '%s\n' "$OUT" | grep -v -e '^--$' | grep -v ':/$')
	[ -z "$bad" ] || fail "inside, /proc/self/cgroup shows paths other than /: $bad"
	if [ "$HOST_LAYOUT" = v2 ]; then
		grep -qx '0::/' <<<"$OUT" || fail "no 0::/ line in /proc/self/cgroup inside"
	else
		grep -q ':pids:/$' <<<"$OUT" || fail "no pids line in /proc/self/cgroup inside"
	fi
	[ "$MODE" = rootful ] || return 0
	# From the host, the workload is in cordon-ID of each hierarchy used.
	new_mark
	crun_bg --memory 64 --workspace "$WS" -- sh -c "touch /workspace/ready; sleep $MARK"
	wait_until "$WAIT_LIMIT" test -e "$WS/ready" || { fail "the workload never started"; kill -9 "$BG_PID"; wait_bg; return; }
	wait_until "$WAIT_LIMIT" sleep_running
	pid=$(procs_matching "$MARK" | awk -F: -v m="sleep $MARK" '$2 == " " m { print $1; exit }')
	if [ -z "$pid" ]; then
		fail "no sleep $MARK process found"
	else
		host=$(cat "/proc/$pid/cgroup")
	fi
	if [ -n "$pid" ] && [ "$HOST_LAYOUT" = v2 ]; then
		line=$(self_cgroup "")
		[ "$host" = "0::${line%/}/cordon-$ID" ] ||
			fail "from the host, the workload's cgroup is '$host', expected 0::${line%/}/cordon-$ID"
	elif [ -n "$pid" ]; then
		for c in pids memory; do
			line=$(printf '%s\n' "$host" | awk -F: -v c="$c" '$2 == c')
			[[ $line == *"/cordon-$ID" ]] ||
				fail "from the host, the workload's $c cgroup is '$line', expected .../cordon-$ID"
		done
		line=$(printf '%s\n' "$host" | awk -F: '$2 == "memory"')
		[ "${line#*:memory:}" = "$(self_cgroup memory | sed 's,^/$,,')/cordon-$ID" ] ||
			fail "memory cgroup '${line#*:memory:}' not below the caller's $(self_cgroup memory)"
	fi
	pkill_mark
	wait_bg_for "$WAIT_LIMIT"
}

t_print_profile_layout() {
	local f=$CASE_DIR/profile.json got mem
	crun --print-profile -- true
	expect_rc 0 || return
	printf '%s\n' "$OUT" >"$f"
	got=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cgroups"]["layout"])' "$f" 2>&1)
	[ "$got" = "$HOST_LAYOUT" ] || fail "--print-profile: cgroups.layout '$got', expected '$HOST_LAYOUT'"
	[ "$HOST_LAYOUT" = hybrid ] || _case_notes+=("note: this host is $HOST_LAYOUT, not hybrid")
	# the memory hierarchy at the caller's (nested) cgroup
	mem=$("$PYTHON" -c '
import json, sys
for h in json.load(open(sys.argv[1]))["cgroups"]["hierarchies"]:
    if "memory" in h["controllers"].split(","):
        print(h["version"], h["mount"], h["path"]); break' "$f")
	if [ "$HOST_LAYOUT" = hybrid ] || [ "$HOST_LAYOUT" = v1 ]; then
		[ "$mem" = "1 $CG/memory $(self_cgroup memory)" ] ||
			fail "--print-profile: memory hierarchy '$mem', expected '1 $CG/memory $(self_cgroup memory)'"
	fi
	"$PYTHON" -c '
import json, sys
l = json.load(open(sys.argv[1]))["cgroups"]["limits"]
assert l["pids"] == 512 and l["pids_is_default"] is True and l["mode"] == "strict", l' "$f" ||
		fail "--print-profile: default limits not pids 512 (default), strict"
}

# --- lifetime ----------------------------------------------------------------

# Limits in every hierarchy cordon uses: memory, cpu, cpuacct (stats), pids.
ALL_LIMITS=(--memory 64 --cpus 1 --pids 100)

t_cleanup_normal_exit() {
	crun "${ALL_LIMITS[@]}" --result-json "$CASE_DIR/r.json" -- true
	expect_rc 0 || return
	no_cg_dirs_of "$ID" || fail "cgroups left after a normal exit: $(cg_dirs_of "$ID")"
	crun "${ALL_LIMITS[@]}" -- sh -c 'exit 3'
	expect_rc 3
	no_cg_dirs_of "$ID" || fail "cgroups left after exit 3: $(cg_dirs_of "$ID")"
}

t_cleanup_timeout() {
	new_mark
	crun "${ALL_LIMITS[@]}" --result-json "$CASE_DIR/r.json" --timeout 0.5 --kill-after 1 -- \
		sh -c "trap '' TERM; while :; do sleep 0.1; done; : $MARK"
	expect_rc 124 || return
	no_cg_dirs_of "$ID" || fail "cgroups left after --timeout: $(cg_dirs_of "$ID")"
}

sleep_running() { procs_matching "$MARK" | grep ": sleep $MARK\$" >/dev/null; }

# Start a sandbox with every hierarchy, SIGKILL its supervisor; DEAD=its id.
kill_supervisor_midrun() {
	local sup n
	new_mark
	crun_bg "${ALL_LIMITS[@]}" --result-json "$CASE_DIR/r.json" -- sleep "$MARK"
	DEAD=$ID
	if ! wait_until "$WAIT_LIMIT" sleep_running; then
		fail "the workload never started"
		return 1
	fi
	n=$(cg_dirs_of "$ID" | grep -c .)
	if [ "$HOST_LAYOUT" = v2 ]; then
		[ "$n" -eq 1 ] || fail "expected the one cgroup2 directory while it runs, found $n: $(cg_dirs_of "$ID")"
	else
		[ "$n" -ge 3 ] || fail "expected cgroups in memory, cpu, cpuacct and pids while it runs, found $n: $(cg_dirs_of "$ID")"
	fi
	sup=$(supervisor_of "$ID") || { fail "no supervisor found for $ID"; return 1; }
	kill -9 "$sup"
	wait_bg_for "$WAIT_LIMIT" || return 1
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || { fail "the workload outlived its supervisor"; return 1; }
	[ -n "$(cg_dirs_of "$DEAD")" ] ||
		_case_notes+=("note: the cgroups were gone before any sweep (nothing to test the sweep with)")
	return 0
}

t_cleanup_sigkill_next_run() {
	kill_supervisor_midrun || return
	crun -- true
	expect_rc 0
	no_cg_dirs_of "$DEAD" || fail "after SIGKILL of the supervisor and a new run, cgroups remain: $(cg_dirs_of "$DEAD")"
}

t_cleanup_sigkill_sweep() {
	kill_supervisor_midrun || return
	cordon sweep
	expect_rc 0
	no_cg_dirs_of "$DEAD" || fail "after SIGKILL of the supervisor and 'cordon sweep', cgroups remain: $(cg_dirs_of "$DEAD")"
	[ ! -e "/run/cordon/$DEAD" ] || fail "/run/cordon/$DEAD still there after cordon sweep"
}

# A supervisor killed while it makes the cgroups (right after a mkdir,
# before the list of what it made is written): they were named in its
# state before the first was made, so the sweep finds and removes them.
# Before, they were recorded only once all were made, and no sweep could
# know them. Its own --root: no other cordon's sweep takes the entry first.
KILLAT=${SEC_KILLAT:-$(dirname "$CORDON")/tests/security/sec-killat}

# cordon sweep in ROOT removes ID's entry and every cgroup of it (AFTER: what came before, for messages).
sweep_removes() {
	cordon --root "$1" sweep
	expect_rc 0
	expect_out_has "removed $ID: its supervisor"
	no_cg_dirs_of "$ID" || fail "after $2 and 'cordon sweep', cgroups remain: $(cg_dirs_of "$ID")"
	[ ! -e "$1/$ID" ] || fail "$1/$ID still there after $2 and 'cordon sweep'"
}

t_cleanup_killed_making_cgroups() {
	local out root=$CASE_DIR/root want=2
	[ -x "$KILLAT" ] || { skip_or_fail "no sec-killat at $KILLAT (tests/security is not built)"; return; }
	[ "$HOST_LAYOUT" != v2 ] || want=1 # one hierarchy
	next_id
	# To a file, not a pipe: a process of it left stopped could hold a pipe open for good.
	(cd "$WS" && "$KILLAT" "cordon-$ID:$want" "$CORDON" --root "$root" run --name "$ID" \
		"${ALL_LIMITS[@]}" "$ROOTFS" -- true) >"$CASE_DIR/killat.out" 2>&1
	out=$(<"$CASE_DIR/killat.out")
	[[ $out == *"killed "* ]] || { fail "sec-killat did not kill the supervisor after cgroup $want: $out"; return; }
	[ "$(cg_dirs_of "$ID" | grep -c .)" -eq "$want" ] ||
		{ fail "expected the $want cgroup(s) made before the kill, found: $(cg_dirs_of "$ID")"; return; }
	sweep_removes "$root" "the kill"
}

# The sweep finds a dead supervisor's recorded cgroup still holding a
# process (an init cloned before its pid was recorded, for the moment it
# takes to end; played here by a sleep the case moves into the cgroup of
# a supervisor killed right after it wrote its init into cgroup.procs): it
# keeps the entry and its list, and a later sweep, once the process is
# gone, removes both. Before, the entry went at once and the cgroup,
# emptied later, stayed for good.
t_sweep_keeps_busy_cgroup() {
	local out root=$CASE_DIR/root dir holder
	[ -x "$KILLAT" ] || { skip_or_fail "no sec-killat at $KILLAT (tests/security is not built)"; return; }
	next_id
	# To a file, not a pipe: a process of it left stopped could hold a pipe open for good.
	(cd "$WS" && "$KILLAT" cgroup.procs "$CORDON" --root "$root" run --name "$ID" "$ROOTFS" -- true) >"$CASE_DIR/killat.out" 2>&1
	out=$(<"$CASE_DIR/killat.out")
	[[ $out == *"killed "* ]] || { fail "sec-killat did not kill the supervisor at its init's attach: $out"; return; }
	grep -q '^/' "$root/$ID/cgroups" || { fail "the kill came before the cgroups were recorded: $(cat "$root/$ID/cgroups")"; return; }
	dir=$(cg_dirs_of "$ID" | head -n 1)
	[ -n "$dir" ] || { fail "no cgroup made before the kill"; return; }
	new_mark
	sleep "$MARK" &
	holder=$!
	echo "$holder" >"$dir/cgroup.procs" || { fail "moving a process into $dir"; kill "$holder"; return; }
	cordon --root "$root" sweep
	expect_rc 0
	expect_out_has "kept $ID: its supervisor is gone but a process is still in its cgroups"
	[ -d "$dir" ] || fail "the sweep removed $dir with a process in it"
	[ -e "$root/$ID" ] || fail "the sweep removed the entry while its cgroup held a process: nothing names $dir now"
	compgen -G "$E2E_AUDIT_DIR/$MODE/$ID-*.jsonl" >/dev/null ||
		fail "the kept entry's audit log is not in the audit directory meanwhile (a tmpfs state root goes at reboot)"
	kill "$holder"
	wait "$holder" 2>/dev/null
	sweep_removes "$root" "the process ended"
}

# --- cgroups the workload makes -------------------------------------------------
#
# An OCI container with a writable cgroup mount (a new cgroup2 rooted at
# its cgroup, docs/oci.md) under a config that maps host root (root inside
# may then write the cgroup2 directories, which host root owns) makes
# child cgroups below its own and moves processes into them. Its
# supervisor removes that whole tree when it ends, in every hierarchy;
# after a SIGKILL of the supervisor, the next run's sweep does.

# Rootless: only a delegated cgroup2 tree is the user's to make children in.
cg_tree_unavailable() {
	local cg
	[ "$MODE" = rootful ] && return 1
	if [ "$HOST_LAYOUT" = v2 ]; then
		# The cgroup the user's cordon starts in (this script's).
		cg=$(self_cgroup "")
		as_user test -w "$CG${cg%/}/cgroup.procs" && return 1
		skip_layout "no cgroup is delegated to $CORDON_TEST_USER here (its cordon starts in $cg, which is not its own)"
		return 0
	fi
	skip_layout "no cgroup is delegated to $CORDON_TEST_USER on a $HOST_LAYOUT host (v1 cannot delegate; cordon makes no cgroup for it)"
}

# The rootfs of cg_bundle: a copy with /sys/fs/cgroup made, so that the
# mount point the config names is never created in the shared build/rootfs
# (a missing mount point is made in the root before it turns read-only).
CG_ROOTFS=$E2E_TMP/cg-rootfs
cg_rootfs() {
	[ -d "$CG_ROOTFS/sys/fs/cgroup" ] && return 0
	copy_rootfs "$CG_ROOTFS" || return 1
	mkdir -p "$CG_ROOTFS/sys/fs/cgroup" && chmod 0755 "$CG_ROOTFS"
}

# cg_bundle DIR SCRIPT: a bundle at DIR running sh -c SCRIPT with
# /sys/fs/cgroup a writable cgroup mount and (rootful) host root mapped.
cg_bundle() {
	local dir=$1 spec_args=(spec -b "$1")
	cg_rootfs || { fail "cannot copy the rootfs"; return 1; }
	mk_dir "$dir"
	[ "$MODE" = rootless ] && spec_args+=(--rootless)
	cordon "${spec_args[@]}"
	expect_rc 0 || return 1
	"$PYTHON" - "$dir/config.json" "$CG_ROOTFS" "$MODE" "$2" <<'PY' || { fail "editing config.json"; return 1; }
import json, sys
path, rootfs, mode, script = sys.argv[1:]
c = json.load(open(path))
c["root"] = {"path": rootfs, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", script]
c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/sys")]
c["mounts"].append({"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
                    "options": ["rw", "nosuid", "nodev", "noexec"]})
c.get("linux", {}).get("resources", {}).pop("devices", None)
if mode == "rootful":
    for k in ("uidMappings", "gidMappings"):
        c["linux"][k] = [{"containerID": 0, "hostID": 0, "size": 65536}]
json.dump(c, open(path, "w"))
PY
}

# Every cgroup directory of run ID (cordon-ID and all below it), in any hierarchy.
cg_tree_of() { find "$CG" \( -name "cordon-$1" -o -path "*/cordon-$1/*" \) -type d 2>/dev/null; }

# mkdir -p a/b/c and d, the shell itself into c: a sleep it leaves there
# is what the pid namespace's end kills while the supervisor removes.
CG_TREE_SCRIPT='cd /sys/fs/cgroup && mkdir -p a/b/c a/e d || exit 1
echo $$ >a/b/c/cgroup.procs || exit 1
sleep 1000 &
echo "IN $(grep "^0::" /proc/self/cgroup)"'

t_workload_cgroups_removed() {
	local R=$CASE_DIR/oroot
	cg_tree_unavailable && return
	mk_dir "$R"
	cg_bundle "$CASE_DIR/bundle" "$CG_TREE_SCRIPT
exit 5" || return
	next_id
	cordon --root "$R" run --bundle "$CASE_DIR/bundle" "$ID"
	if [ "$MODE" = rootless ] && [ "$RC" = 1 ] && [[ $ERR == *"Permission denied"* ]]; then
		skip_layout "the test user's cgroup2 tree is not delegated here (no systemd user session delegates one)"
		return
	fi
	expect_rc 5 "expected the workload's exit status" || return
	expect_out_eq "IN 0::/a/b/c" "expected the workload in its child cgroup a/b/c"
	expect_err_lacks "could not remove cgroup"
	[ -z "$(cg_tree_of "$ID")" ] || fail "the sandbox's cgroups remain after it ended:
$(cg_tree_of "$ID")"
}

t_workload_cgroups_sigkill_next_run() {
	local R=$CASE_DIR/oroot sup dead
	cg_tree_unavailable && return
	mk_dir "$R"
	new_mark
	cg_bundle "$CASE_DIR/bundle" "$CG_TREE_SCRIPT
exec sleep $MARK" || return
	next_id
	dead=$ID
	cordon_bg --root "$R" run --bundle "$CASE_DIR/bundle" "$ID"
	if ! wait_until "$WAIT_LIMIT" sleep_running; then
		fail "the workload never started"
		return
	fi
	[ -n "$(find "$CG" -path "*/cordon-$dead/a/b/c" -type d)" ] ||
		fail "expected cordon-$dead/a/b/c while it runs: $(cg_tree_of "$dead")"
	sup=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["owner_pid"])' "$R/$dead/state.json")
	kill -9 "$sup"
	wait_bg_for "$WAIT_LIMIT" || return
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || { fail "the workload outlived its supervisor"; return; }
	[ -n "$(cg_tree_of "$dead")" ] ||
		_case_notes+=("note: the cgroups were gone before any sweep (nothing to test the sweep with)")
	# The next run in the same state root sweeps the dead one's entry.
	cg_bundle "$CASE_DIR/bundle2" "true" || return
	next_id
	cordon --root "$R" run --bundle "$CASE_DIR/bundle2" "$ID"
	expect_rc 0
	[ -z "$(cg_tree_of "$dead")" ] || fail "after SIGKILL of the supervisor and a new run, cgroups remain:
$(cg_tree_of "$dead")"
	[ ! -e "$R/$dead" ] || fail "$R/$dead still there after the next run"
}

# --- rootless ------------------------------------------------------------------

t_best_effort() {
	local res=$CASE_DIR/result.json
	crun --memory 32 --limits best-effort --result-json "$res" -- echo ran
	expect_rc 0 || return
	expect_out_eq ran
	if [ "$MODE" = rootless ]; then
		expect_json "$res" limits_enforced false
	else
		expect_json "$res" limits_enforced true
	fi
	no_cg_dirs_of "$ID" || fail "cgroups left: $(cg_dirs_of "$ID")"
}

t_plain_run() {
	local res=$CASE_DIR/result.json
	crun --result-json "$res" -- echo plain
	expect_rc 0 || return
	expect_out_eq plain
	expect_err_empty
	# nothing was requested, so nothing went unenforced
	expect_json "$res" limits_enforced true
}

# --- a pure v2 view ---------------------------------------------------------
#
# A private mount namespace with cgroup2 mounted over /sys/fs/cgroup. On
# this host cgroup2 carries only hugetlb (memory, cpu and pids are bound to
# their v1 hierarchies, and a controller lives in one hierarchy at a time),
# so limits cannot be exercised on v2 here: only detection, failing closed,
# and a plain run.

# v2view CORDON-ARGS...: cordon in that namespace; after it, the case's
# own cordon-* directories of the cgroup2 mount (other sandboxes may be
# running on the host) are listed on stdout as "LEFT: path".
v2view() {
	pushd "$WS" >/dev/null || return 1
	run unshare -m --propagation private sh -c '
		mount -t cgroup2 none /sys/fs/cgroup || exit 99
		prefix=$1; shift
		"$@"; rc=$?
		find /sys/fs/cgroup -name "cordon-$prefix*" -type d | sed "s/^/LEFT: /"
		exit $rc' v2view "$CASE_ID" env --default-signal "$CORDON" "$@"
	popd >/dev/null || return 1
}

t_v2view_profile() {
	local f=$CASE_DIR/profile.json got
	next_id
	v2view run --name "$ID" --print-profile "$ROOTFS" -- true
	expect_rc 0 || return
	printf '%s\n' "$OUT" | grep -v '^LEFT: ' >"$f"
	got=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cgroups"]["layout"])' "$f" 2>&1)
	[ "$got" = v2 ] || fail "--print-profile in the v2 view: layout '$got', expected 'v2'"
}

t_v2view_profile_hierarchies() {
	local f=$CASE_DIR/profile.json got
	next_id
	v2view run --name "$ID" --print-profile "$ROOTFS" -- true
	expect_rc 0 || return
	printf '%s\n' "$OUT" | grep -v '^LEFT: ' >"$f"
	# Only the cgroup2 at /sys/fs/cgroup is reachable: the v1 mounts and
	# unified below it are hidden under the new mount.
	got=$("$PYTHON" -c '
import json, sys
print(" ".join("%s:%s" % (h["version"], h["mount"]) for h in json.load(open(sys.argv[1]))["cgroups"]["hierarchies"]))' "$f" 2>&1)
	[ "$got" = "2:/sys/fs/cgroup" ] ||
		fail "--print-profile in the v2 view lists hierarchies '$got', expected only '2:/sys/fs/cgroup'"
}

t_v2view_memory_fails_closed() {
	next_id
	v2view run --name "$ID" --memory 32 "$ROOTFS" -- true
	_case_notes+=("note: cgroup2 here has only '$(cat $CG/unified/cgroup.controllers 2>/dev/null)': the memory controller is bound to v1 on this host, so limits cannot be exercised on v2; only failing closed is")
	expect_cordon_error CGROUP memory
}

t_v2view_memory_reason() {
	next_id
	v2view run --name "$ID" --memory 32 "$ROOTFS" -- true
	expect_rc 125 || return
	# The reason is that cgroup2 has no memory controller, not a v1
	# directory hidden under the cgroup2 mount.
	expect_err_has "no memory controller" "expected the reason 'no memory controller available'"
	expect_err_lacks "$CG/memory/" "the message names $CG/memory/..., a v1 path hidden under the cgroup2 mount"
}

t_v2view_plain_run() {
	next_id
	v2view run --name "$ID" --result-json "$CASE_DIR/r.json" "$ROOTFS" -- echo plain
	expect_rc 0 || return
	expect_out_eq plain "expected the output 'plain' and no cordon-* directory in the cgroup2 mount"
	expect_err_empty
	no_cg_dirs_of "$ID" || fail "cgroups left on the host: $(cg_dirs_of "$ID")"
}

[ "$HOST_LAYOUT" != none ] || skip_all_or_fail "no cgroups mounted at $CG"

each_mode "--memory 32 --memory-swap 32: a memory hog is OOM-killed (137, oom_killed); rootless fails closed" cg_case t_memory_oom
each_mode "--memory-swap below --memory, or without it: refused" cg_case t_memory_swap_below_memory
each_mode "--pids 20: a fork bomb stays at 20, counted, and ends with the sandbox; rootless fails closed" cg_case t_pids_fork_bomb
each_mode "default pids.max 512 seen from the host; rootless: silently absent" cg_case t_pids_default_512
each_mode "--pids 64 seen from the host; rootless fails closed" cg_case t_pids_explicit_from_host
each_mode "--cpus 0.5: a busy loop gets about half a core; rootless fails closed" cg_case t_cpus_half
each_mode "--cpus 0, -1, abc, 1.2.3: refused" cg_case t_cpus_bad
each_mode "cgroup namespace: / inside, cordon-ID below the caller's cgroup outside" cg_case t_cgroup_namespace
each_mode "--print-profile: cgroups.layout is this host's ($HOST_LAYOUT)" cg_case t_print_profile_layout
rootful_only "cgroups removed after a normal exit" cg_case t_cleanup_normal_exit
rootful_only "cgroups removed after --timeout" cg_case t_cleanup_timeout
rootful_only "cgroups of a SIGKILLed supervisor removed by the next run" cg_case t_cleanup_sigkill_next_run
rootful_only "cgroups of a SIGKILLed supervisor removed by cordon sweep" cg_case t_cleanup_sigkill_sweep
rootful_only "cgroups of a supervisor killed while it made them removed by cordon sweep" cg_case t_cleanup_killed_making_cgroups
rootful_only "a dead supervisor's cgroup still holding a process: sweep keeps the entry, a later one removes both" cg_case t_sweep_keeps_busy_cgroup
each_mode "a workload's own child cgroups (a/b/c, busy) go with the sandbox's, in every hierarchy" cg_case t_workload_cgroups_removed
each_mode "a workload's own child cgroups: after SIGKILL of the supervisor, the next run's sweep removes them" cg_case t_workload_cgroups_sigkill_next_run
each_mode "--memory 32 --limits best-effort runs; rootless reports limits_enforced false" cg_case t_best_effort
each_mode "a plain run succeeds (rootless: default pids limit silently absent)" cg_case t_plain_run
if [ -n "${E2E_CASES:-}" ] && ! [[ "v2 view" =~ $E2E_CASES ]]; then
	: # not among the cases asked for
elif [ "$HOST_LAYOUT" = hybrid ]; then
	rootful_only "v2 view: --print-profile reports layout v2" cg_case t_v2view_profile
	rootful_only "v2 view: --print-profile lists only the cgroup2 at /sys/fs/cgroup" cg_case t_v2view_profile_hierarchies
	rootful_only "v2 view: --memory 32 fails closed (CORDON_E_CGROUP)" cg_case t_v2view_memory_fails_closed
	rootful_only "v2 view: --memory 32 fails for the right reason (no memory controller)" cg_case t_v2view_memory_reason
	rootful_only "v2 view: a plain run succeeds and leaves no cordon-* directory" cg_case t_v2view_plain_run
else
	tap_skip "v2 view" "needs a hybrid host (cgroup2 at $CG/unified); this one is $HOST_LAYOUT" # a layout skip
fi
done_testing
