#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317,SC1091 # cases are called through run_case; lib.sh by path
# VM suite: cgroup limits on a pure cgroup v2 host, in the shapes a systemd
# machine gives them (tests/vm/guest.sh sets the machine up):
#
#   /sys/fs/cgroup                      cgroup2 only, every controller on
#     user.slice/user-UID.slice/user@UID.service     delegated to the test
#                                       user (VM_DELEGATED): owned by it, with
#                                       the kernel's delegatable files
#       app.slice/vm-N.scope            where the user's commands run (its
#                                       shell is there: it has processes)
#       sandboxes                       an empty cgroup the user made, for
#                                       --cgroup-parent
#     user.slice/user-0.slice/session-N.scope        a root login's cgroup
#
# Rootless with delegation: limits enforced (OOM, pids, cpus, stats,
# cleanup, sweep) with --cgroup-parent in the delegated subtree. Below a
# cgroup that has processes (a login session's or a scope's, the caller's
# own) cgroup v2 forbids controllers: a requested limit fails closed with a
# message that says so and what to do, rootful and rootless, and a run
# without limits still runs.
. "$(dirname "$0")/../e2e/lib.sh"

CG=/sys/fs/cgroup
if [ "$(stat -fc %T "$CG" 2>/dev/null)" != cgroup2fs ] || [ -z "${VM_DELEGATED:-}" ]; then
	echo "1..0 # SKIP needs the VM suite's pure cgroup v2 machine (tests/vm/vm.sh)"
	_done=1
	exit 0
fi
# From the root: "/user.slice/user-UID.slice/user@UID.service".
DELEGATED_REL=${VM_DELEGATED#"$CG"}

# json FILE KEY: the value as JSON text, or "missing".
json() {
	"$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable"); sys.exit(0)
print(json.dumps(r[sys.argv[2]]) if sys.argv[2] in r else "missing")' "$1" "$2"
}
expect_json() {
	local got
	got=$(json "$1" "$2")
	[ "$got" = "$3" ] || fail "--result-json: expected \"$2\": $3, got $got ($(cat "$1" 2>/dev/null))"
}

# The caller's cgroup for this case: a scope of the user's (rootless) or a
# root login session (rootful), with a process of its own in it (a shell
# that sleeps, as a login shell would be there) for the case's lifetime.
SCOPE='' SCOPE_PID=''
scope_up() {
	if [ "$MODE" = rootless ]; then
		SCOPE=$VM_DELEGATED/app.slice/vm-$CASE_ID.scope
		# The user makes its own cgroups in its subtree.
		# The user makes its own cgroups in its subtree, and enables the
		# controllers in app.slice, as systemd --user does for its units.
		as_user sh -c 'mkdir -p "$1" && echo "+memory +pids +cpu" >"${1%/*}/cgroup.subtree_control"' sh "$SCOPE" ||
			{ _fail_raw "the test user cannot make $SCOPE in its delegated subtree"; return 1; }
	else
		SCOPE=$CG/user.slice/user-0.slice/session-$CASE_ID.scope
		mkdir -p "$SCOPE" || return 1
	fi
	sleep 600 &
	SCOPE_PID=$!
	echo "$SCOPE_PID" >"$SCOPE/cgroup.procs" || { _fail_raw "cannot move a process into $SCOPE"; return 1; }
}
scope_down() {
	[ -n "$SCOPE_PID" ] && kill "$SCOPE_PID" 2>/dev/null && wait "$SCOPE_PID" 2>/dev/null
	SCOPE_PID=
	# The scope and, rootless, the parents the user made (empty by now).
	[ -n "$SCOPE" ] && rmdir "$SCOPE" 2>/dev/null
	rmdir "$VM_DELEGATED/app.slice" "$VM_DELEGATED/sandboxes" 2>/dev/null
	SCOPE=
}

# cordon's command lines start in the case's scope: root moves the first
# process there (an unprivileged process may not leave the root cgroup
# for the user's subtree), then runuser as lib.sh does.
_cordon_argv() {
	local USER_PREFIX
	if [ "$MODE" = rootful ]; then
		_argv=(env --default-signal "${XENV[@]}" "$CORDON" "$@")
	else
		_user_prefix
		_argv=("${USER_PREFIX[@]}" "${XENV[@]}" "$CORDON" "$@")
	fi
	[ -z "$SCOPE" ] || _argv=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$SCOPE" "${_argv[@]}")
}

# The user's empty cgroup for --cgroup-parent, made by the user.
SANDBOXES=
sandboxes_up() {
	SANDBOXES=$DELEGATED_REL/sandboxes
	as_user mkdir -p "$CG$SANDBOXES" || { _fail_raw "the test user cannot mkdir $CG$SANDBOXES"; return 1; }
}

# Every case: run it with its scope, then check that no cordon-<its ids>
# cgroup is left anywhere.
vm_case() {
	local left
	scope_up && "$@"
	scope_down
	left=$(find "$CG" -path "*/cordon-$CASE_ID-*" -type d 2>/dev/null)
	[ -z "$left" ] || _fail_raw "leftover: cgroup directories remain:" "$(printf '%s\n' "$left" | _indent)"
	[ -z "$left" ] || find "$CG" -depth -path "*/cordon-$CASE_ID-*" -type d -exec rmdir {} + 2>/dev/null
}

cg_dirs_of() { find "$CG" -name "cordon-$1" -type d 2>/dev/null; }
no_cg_dirs_of() { [ -z "$(cg_dirs_of "$1")" ]; }

# --- rootless, delegated: limits enforced -------------------------------------

t_delegated_oom() {
	local res=$CASE_DIR/result.json peak
	sandboxes_up || return
	crun --cgroup-parent "$SANDBOXES" --memory 32 --memory-swap 32 --timeout 60 --result-json "$res" -- \
		tail -c 200000000 /dev/zero
	expect_rc 137 "expected the OOM-killed workload's 128+SIGKILL" || return
	expect_json "$res" oom_killed true
	expect_json "$res" limits_enforced true
	peak=$(json "$res" memory_peak_bytes)
	[[ $peak =~ ^[0-9]+$ ]] || fail "memory_peak_bytes '$peak': memory.peak exists on 6.1 (5.19+)"
	[[ $peak =~ ^[0-9]+$ ]] && [ "$peak" -le $((33 * 1024 * 1024)) ] || fail "memory_peak_bytes $peak above the 32 MiB limit"
	no_cg_dirs_of "$ID" || fail "cgroups left after the OOM kill: $(cg_dirs_of "$ID")"
}

# The limits as the kernel holds them, read from the host while it runs,
# and the sandbox's cgroup in the user's subtree.
t_delegated_limits_written() {
	local dir
	sandboxes_up || return
	new_mark
	crun_bg --cgroup-parent "$SANDBOXES" --memory 48 --memory-swap 64 --pids 30 --cpus 0.5 \
		--workspace "$WS" -- sh -c "touch /workspace/ready; sleep $MARK"
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started"
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		return
	fi
	dir=$CG$SANDBOXES/cordon-$ID
	[ "$(cat "$dir/memory.max" 2>&1)" = $((48 << 20)) ] || fail "$dir/memory.max: $(cat "$dir/memory.max" 2>&1)"
	[ "$(cat "$dir/memory.swap.max" 2>&1)" = $((16 << 20)) ] || fail "$dir/memory.swap.max: $(cat "$dir/memory.swap.max" 2>&1), expected 16 MiB (--memory-swap 64 is memory + swap)"
	[ "$(cat "$dir/pids.max" 2>&1)" = 30 ] || fail "$dir/pids.max: $(cat "$dir/pids.max" 2>&1)"
	[ "$(cat "$dir/cpu.max" 2>&1)" = "50000 100000" ] || fail "$dir/cpu.max: $(cat "$dir/cpu.max" 2>&1)"
	[ "$(stat -c %u "$dir")" = "$TEST_UID" ] || fail "$dir is owned by $(stat -c %u "$dir"), not the user"
	grep -q . "$dir/cgroup.procs" || fail "no process in $dir"
	pkill_mark
	wait_bg_for "$WAIT_LIMIT"
	no_cg_dirs_of "$ID" || fail "cgroups left after exit: $(cg_dirs_of "$ID")"
}

# Ends the workload `sleep $MARK`.
pkill_mark() {
	local line
	while read -r line; do
		[[ $line == *": sleep $MARK" ]] && kill -TERM "${line%%:*}" 2>/dev/null
	done < <(procs_matching "$MARK")
}

# pids: counted, not caught at its height (as e2e-cgroup.sh).
t_delegated_pids() {
	local res=$CASE_DIR/result.json dir refused=0 line
	sandboxes_up || return
	new_mark
	crun_bg --cgroup-parent "$SANDBOXES" --pids 20 --timeout 6 --kill-after 2 --result-json "$res" -- \
		sh -c "b() { b | b & }; b; sleep 30; : $MARK"
	dir=$CG$SANDBOXES/cordon-$ID
	for _ in $(seq 300); do
		line=$(grep '^max ' "$dir/pids.events" 2>/dev/null)
		[ "${line#max }" -gt 0 ] 2>/dev/null && { refused=${line#max }; break; }
		bg_ended && break
		sleep 0.1
	done
	wait_bg_for "$WAIT_LIMIT" || return
	expect_rc 124 "expected the fork bomb to run until --timeout (124)"
	[ "$refused" -gt 0 ] || fail "$dir/pids.events: no fork refused while the run lasted"
	expect_json "$res" limits_enforced true
	expect_json "$res" pids_peak 20
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || fail "fork bomb processes outlived the sandbox"
	_case_notes+=("note: pids.events max $refused")
}

t_delegated_cpus() {
	local res=$CASE_DIR/result.json ratio
	sandboxes_up || return
	crun --cgroup-parent "$SANDBOXES" --cpus 0.5 --result-json "$res" -- \
		sh -c 'timeout 4 sh -c "while :; do :; done"; exit 0'
	expect_rc 0 || return
	expect_json "$res" limits_enforced true
	ratio=$("$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
u, d = r.get("cpu_usage_us"), r.get("duration_ms")
print("null" if u is None or not d else "%.3f" % (u / (d * 1000.0)))' "$res")
	[ "$ratio" != null ] || { fail "no cpu_usage_us in --result-json"; return; }
	_case_notes+=("note: --cpus 0.5 busy loop used $ratio of the wall time")
	# The throttle is never exceeded; how much below it depends on the load.
	awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r <= 0.75) }' || fail "--cpus 0.5: the busy loop used $ratio of a core"
}

sleep_running() { procs_matching "$MARK" | grep ": sleep $MARK\$" >/dev/null; }

# A SIGKILLed supervisor's cgroup in the user's subtree: cordon sweep (as
# the user) removes it.
t_delegated_sigkill_sweep() {
	local sup dead
	sandboxes_up || return
	new_mark
	crun_bg --cgroup-parent "$SANDBOXES" --memory 64 --pids 50 -- sleep "$MARK"
	dead=$ID
	wait_until "$WAIT_LIMIT" sleep_running || { fail "the workload never started"; return; }
	sup=$(supervisor_of "$dead") || { fail "no supervisor found for $dead"; return; }
	kill -9 "$sup"
	wait_bg_for "$WAIT_LIMIT" || return
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || { fail "the workload outlived its supervisor"; return; }
	cordon sweep
	expect_rc 0
	no_cg_dirs_of "$dead" || fail "after SIGKILL of the supervisor and 'cordon sweep', cgroups remain: $(cg_dirs_of "$dead")"
}

# --- below a cgroup with processes ------------------------------------------------

# The caller's own cgroup has processes (the session's shell, the
# supervisor itself): v2 forbids controllers there. Fails closed, naming
# the cgroup, the reason and the way out.
t_populated_caller_fails_closed() {
	crun --memory 32 -- true
	expect_cordon_error CGROUP "has processes of its own" || return
	expect_err_has "${SCOPE#"$CG"}" "expected the message to name the caller's cgroup"
	expect_err_has "--cgroup-parent"
	# Not the advice for a missing delegation: root gets this too.
	expect_err_lacks "run as root"
	no_cg_dirs_of "$ID" || fail "a refused run left cgroups: $(cg_dirs_of "$ID")"
}

# Without a requested limit it runs: the default pids limit is not a
# request, and is absent where it cannot be set.
t_populated_caller_plain_run() {
	local res=$CASE_DIR/result.json
	crun --result-json "$res" -- echo plain
	expect_rc 0 || return
	expect_out_eq plain
	expect_err_empty
	expect_json "$res" limits_enforced true
	no_cg_dirs_of "$ID" || fail "cgroups left: $(cg_dirs_of "$ID")"
}

# --limits best-effort runs and says the limit was not enforced.
t_populated_caller_best_effort() {
	local res=$CASE_DIR/result.json
	crun --memory 32 --limits best-effort --result-json "$res" -- echo ran
	expect_rc 0 || return
	expect_out_eq ran
	expect_json "$res" limits_enforced false
}

# The way out the message names: a cgroup without processes.
t_populated_caller_cgroup_parent() {
	local res=$CASE_DIR/result.json parent
	if [ "$MODE" = rootless ]; then
		sandboxes_up || return
		parent=$SANDBOXES
	else
		parent=/system.slice/vm-$CASE_ID.slice
		mkdir -p "$CG$parent"
	fi
	crun --cgroup-parent "$parent" --memory 32 --result-json "$res" -- \
		sh -c 'cat /sys/fs/cgroup/memory.max 2>/dev/null; grep "^0::" /proc/self/cgroup'
	expect_rc 0 || return
	expect_json "$res" limits_enforced true
	[ "$MODE" = rootful ] && rmdir "$CG$parent" 2>/dev/null
	expect_out_has "0::/" "expected the cgroup namespace's root inside"
}

# The caller's cgroup offers no controller (its parent enables none for
# it), the --cgroup-parent given does: what the sandbox can have is read
# from the parent, so --memory is enforced there (the controllers were read
# from the caller's cgroup: 'no memory controller available').
t_controllers_from_parent() {
	local res=$CASE_DIR/result.json parent plain scope=$SCOPE
	if [ "$MODE" = rootless ]; then
		sandboxes_up || return
		parent=$SANDBOXES
		plain=$VM_DELEGATED/vm-plain-$CASE_ID
		as_user mkdir -p "$plain/caller" || { fail "the test user cannot make $plain/caller"; return; }
	else
		parent=/system.slice/vm-$CASE_ID.slice
		plain=$CG/vm-plain-$CASE_ID
		mkdir -p "$CG$parent" "$plain/caller"
	fi
	[ -z "$(cat "$plain/caller/cgroup.controllers")" ] ||
		{ fail "$plain/caller offers controllers: $(cat "$plain/caller/cgroup.controllers")"; return; }
	SCOPE=$plain/caller
	crun --cgroup-parent "$parent" --memory 32 --memory-swap 32 --result-json "$res" -- \
		tail -c 200000000 /dev/zero
	SCOPE=$scope
	rmdir "$plain/caller" "$plain" 2>/dev/null
	[ "$MODE" = rootful ] && rmdir "$CG$parent" 2>/dev/null
	expect_rc 137 "expected the OOM-killed workload's 128+SIGKILL" || return
	expect_json "$res" oom_killed true
	expect_json "$res" limits_enforced true
}

# The other way round: the caller's cgroup offers memory, the parent given
# does not: refused, naming the parent (it was cordon's write of +memory to
# the parent that failed, with ENOENT).
t_controllers_missing_in_parent() {
	local parent
	if [ "$MODE" = rootless ]; then
		parent=$DELEGATED_REL/vm-plain-$CASE_ID/sandboxes
		as_user mkdir -p "$CG$parent" || { fail "the test user cannot make $CG$parent"; return; }
	else
		parent=/vm-plain-$CASE_ID/sandboxes
		mkdir -p "$CG$parent"
	fi
	crun --cgroup-parent "$parent" --memory 32 -- true
	rmdir "$CG$parent" "${CG}${parent%/*}" 2>/dev/null
	expect_cordon_error CGROUP "no memory controller available" || return
	expect_err_has "cgroup.controllers of $parent" "expected the message to name the parent"
	no_cg_dirs_of "$ID" || fail "a refused run left cgroups: $(cg_dirs_of "$ID")"
}

# Rootless from a cgroup not delegated to the caller (the root cgroup here;
# a login's session-N.scope on a systemd machine) while systemd delegates
# user@UID.service to it: refused, with the way out there (an empty cgroup
# in it, and cordon run from a scope of the user's manager); following
# that advice, as systemd-run --user --scope would place cordon, works.
t_undelegated_systemd_advice() {
	local mk parent
	SCOPE=
	crun --memory 32 -- true
	expect_cordon_error CGROUP "cannot enforce" || return
	expect_err_has "Permission denied"
	expect_err_has "systemd-run --user --scope -p Delegate=yes cordon run --cgroup-parent $DELEGATED_REL/cordon.slice" ||
		return
	mk=$(sed -n 's/.*: mkdir \([^ ,]*\), then .*/\1/p' <<<"$ERR")
	parent=$(sed -n 's/.* --cgroup-parent \([^ ]*\) .*/\1/p' <<<"$ERR")
	[ "$mk" = "$CG$parent" ] || { fail "the advice's mkdir ($mk) is not its --cgroup-parent ($parent)"; return; }
	as_user mkdir "$mk" || { fail "the test user cannot mkdir $mk"; return; }
	SCOPE=$VM_DELEGATED/app.slice/run-$CASE_ID.scope
	as_user mkdir -p "$SCOPE"
	crun --cgroup-parent "$parent" --memory 32 --memory-swap 32 --result-json "$CASE_DIR/r.json" -- \
		tail -c 200000000 /dev/zero
	rmdir "$SCOPE" "$mk" 2>/dev/null
	SCOPE=
	expect_rc 137 "expected the OOM-killed workload's 128+SIGKILL" || return
	expect_json "$CASE_DIR/r.json" oom_killed true
}

# Rootless with no delegation at all (a process in the root cgroup, as a
# user logged in without systemd: no user@UID.service of the user's):
# refused, naming the way out.
t_undelegated_fails_closed() {
	SCOPE=
	chown 0:0 "$VM_DELEGATED"
	crun --memory 32 -- true
	chown "$TEST_UID:$TEST_GID" "$VM_DELEGATED"
	expect_cordon_error CGROUP "cannot enforce" || return
	expect_err_has "Permission denied"
	expect_err_has "delegated cgroup v2 subtree"
	expect_err_lacks "systemd-run"
}

rootless_only "delegated v2: --memory 32 hog OOM-killed (137, oom_killed, limits_enforced, memory_peak_bytes)" vm_case t_delegated_oom
rootless_only "delegated v2: memory.max, memory.swap.max, pids.max, cpu.max written; the cgroup is the user's" vm_case t_delegated_limits_written
rootless_only "delegated v2: --pids 20 stops a fork bomb; pids_peak 20" vm_case t_delegated_pids
rootless_only "delegated v2: --cpus 0.5 throttles a busy loop" vm_case t_delegated_cpus
rootless_only "delegated v2: a SIGKILLed supervisor's cgroups removed by cordon sweep" vm_case t_delegated_sigkill_sweep
each_mode "caller's cgroup has processes: --memory fails closed, naming why and --cgroup-parent" vm_case t_populated_caller_fails_closed
rootless_only "caller's cgroup has processes: a run without limits runs" vm_case t_populated_caller_plain_run
rootless_only "caller's cgroup has processes: --limits best-effort runs, limits_enforced false" vm_case t_populated_caller_best_effort
each_mode "caller's cgroup has processes: --cgroup-parent to an empty cgroup enforces the limit" vm_case t_populated_caller_cgroup_parent
each_mode "the caller's cgroup offers no controller: --cgroup-parent's are used, --memory enforced" vm_case t_controllers_from_parent
each_mode "--cgroup-parent offers no memory controller: refused, naming it" vm_case t_controllers_missing_in_parent
rootless_only "no delegation (root cgroup), user@UID.service delegated: --memory fails closed, advising systemd-run and --cgroup-parent there" t_undelegated_systemd_advice
rootless_only "no delegation (root cgroup), none by systemd: --memory fails closed" t_undelegated_fails_closed
done_testing
