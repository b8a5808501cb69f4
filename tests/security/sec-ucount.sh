#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: the kernel's per-user limits (ucounts) that a sandbox would
# otherwise share with its owner on the host. Every inotify instance or
# watch, fanotify group or mark and namespace made inside is charged to
# the owner of the sandbox's user namespace as well (host root rootful,
# the caller rootless): without a limit of its own, one sandbox holding
# 128 inotify instances made inotify_init1 fail with EMFILE for its owner.
# The sandbox's namespace gets limits below the owner's (docs/security.md),
# --user-limit changes them, bad ones are refused before anything exists.
# The rlimit-backed ones (queued signals, POSIX message-queue bytes) are
# bounded by the soft rlimit the init has when it creates the workload's
# namespace: one sandbox queueing RT signals or making message queues up
# to the caller's rlimit made sigqueue fail with EAGAIN and mq_open with
# EMFILE for the owner, whatever uids inside held them.
. "$(dirname "$0")/seclib.sh"
. "$(dirname "$0")/../e2e/oci-lib.sh"

LIMIT_NAMES=(max_inotify_instances max_inotify_watches max_fanotify_groups max_fanotify_marks
	max_ipc_namespaces max_mnt_namespaces max_net_namespaces max_pid_namespaces
	max_uts_namespaces max_cgroup_namespaces max_time_namespaces)

# cordon's default for limit NAME: the smaller of its cap and an eighth of
# the caller's own (the test user's is the host's, as root's).
udefault() {
	local name=$1 cap own v
	case $name in
	max_inotify_instances | max_fanotify_groups) cap=128 ;;
	max_inotify_watches | max_fanotify_marks) cap=65536 ;;
	*) cap=16 ;;
	esac
	own=$(<"/proc/sys/user/$name")
	v=$((own / 8))
	[ "$v" -lt "$cap" ] || v=$cap
	echo "$v"
}

# cordon's default for rlimit NAME (sigpending, msgqueue): an eighth of
# the caller's own hard limit (this mode's user on the host), at most a cap.
rdefault() {
	local name=$1 cap flag own v USER_PREFIX
	case $name in
	sigpending) cap=16384 flag=-Hi ;;
	msgqueue) cap=1048576 flag=-Hq ;;
	esac
	if [ "$MODE" = rootless ]; then
		_user_prefix
		own=$("${USER_PREFIX[@]}" bash -c "ulimit $flag")
	else
		own=$(ulimit $flag)
	fi
	[ "$own" = unlimited ] && echo "$cap" && return
	v=$((own / 8))
	[ "$v" -lt "$cap" ] || v=$cap
	echo "$v"
}

# mq-count's answer for a limit of L bytes: queues of 10 messages of 1024
# bytes cost 10240 bytes and the kernel's bookkeeping (less than 1024).
mq_count_fits() {
	local got=$1 limit=$2 n
	case $got in
	"EMFILE "*) n=${got#EMFILE } ;;
	*) return 1 ;;
	esac
	[ $((n * 10240)) -le "$limit" ] && [ $(((n + 1) * 11264)) -gt "$limit" ]
}

# The probe as this mode's user on the host.
host_probe() {
	if [ "$MODE" = rootless ]; then
		local USER_PREFIX
		_user_prefix
		run "${USER_PREFIX[@]}" "$SEC_PROBE" "$@"
	else
		run "$SEC_PROBE" "$@"
	fi
}

held() { grep -q '^inotify-count:' "$CASE_DIR/out" 2>/dev/null; }

# A sandbox that opens inotify instances until the kernel refuses one and
# holds them until $WS/go exists; OPTIONS are cordon's. Sets BG_PID, and
# HELD to the count line once it is there.
hold_inotify() {
	rm -f "$WS/go"
	crun_bg "$@" -- sec-probe inotify-count:/workspace/go
	if ! wait_until "$WAIT_LIMIT" held; then
		touch "$WS/go"
		wait_bg_for "$WAIT_LIMIT"
		fail "the sandbox did not report its inotify count"
		return 1
	fi
	HELD=$(grep '^inotify-count:' "$CASE_DIR/out")
	HELD=${HELD#*=}
}

release_inotify() {
	touch "$WS/go"
	wait_bg_for "$WAIT_LIMIT" || return 1
	expect_rc 0
}

# The workload's pid (the probe) of the sandbox hold_inotify started.
held_workload() {
	local line pid
	while read -r line; do
		pid=${line%%:*}
		[ "$(_argv0_of "$pid")" = sec-probe ] && echo "$pid" && return 0
	done < <(procs_matching "inotify-count:/workspace/go")
	return 1
}

# A sandbox running sec-probe ACTION:/workspace/go with OPTIONS, until
# ACTION's line is there (in HELD, without "ACTION:...="). Sets BG_PID.
hold_probe() {
	local action=$1
	shift
	rm -f "$WS/go"
	crun_bg "$@" -- sec-probe "$action:/workspace/go"
	if ! wait_until "$WAIT_LIMIT" grep -qs "^$action:" "$CASE_DIR/out"; then
		touch "$WS/go"
		wait_bg_for "$WAIT_LIMIT"
		fail "the sandbox did not report $action"
		return 1
	fi
	HELD=$(grep "^$action:" "$CASE_DIR/out")
	HELD=${HELD#*=}
}

# Inside, instances stop at the sandbox's limit, whatever the owner has left.
t_inotify_default() {
	crun --no-workspace -- sec-probe inotify-count
	expect_rc 0
	probe_is inotify-count "EMFILE $(udefault max_inotify_instances)"
}

# Watches too (of all the sandbox's instances together).
t_watches_default() {
	crun --no-workspace -- sec-probe inotify-watches
	expect_rc 0
	probe_is inotify-watches "ENOSPC $(udefault max_inotify_watches)"
}

# The regression: while a sandbox holds every instance it can get, its
# owner on the host (root, or the caller) can still make one.
t_owner_keeps_inotify() {
	hold_inotify || return
	[ "$HELD" = "EMFILE $(udefault max_inotify_instances)" ] ||
		fail "the sandbox got '$HELD' inotify instances"
	host_probe inotify-init
	probe_is inotify-init ok
	release_inotify
	host_probe inotify-init
	probe_is inotify-init ok
}

# Two sandboxes at their limits at once: each has its own, the owner still has some.
t_two_sandboxes() {
	local first
	hold_inotify || return
	first=$BG_PID
	crun --no-workspace -- sec-probe inotify-count
	probe_is inotify-count "EMFILE $(udefault max_inotify_instances)"
	host_probe inotify-init
	probe_is inotify-init ok
	BG_PID=$first
	release_inotify
}

# --user-limit sets them, low or high (up to the caller's own).
t_override() {
	crun --no-workspace --user-limit max_inotify_instances=3 --user-limit max_inotify_watches=5 \
		-- sh -c 'sec-probe inotify-count; sec-probe inotify-watches'
	expect_rc 0
	probe_is inotify-count "EMFILE 3"
	probe_is inotify-watches "ENOSPC 5"
	crun --no-workspace --user-limit max_inotify_instances=0 -- sec-probe inotify-count
	probe_is inotify-count "EMFILE 0"
	crun --no-workspace --user-limit "max_inotify_instances=$(($(</proc/sys/user/max_inotify_instances) + 1))" \
		-- sec-probe inotify-count
	expect_rc 125
	expect_err_has "CORDON_E_USAGE: --user-limit: user.max_inotify_instances="
	expect_err_has "above the caller's own"
}

# Every limit sits in the sandbox's outer namespace (U1), where the
# workload can neither see nor change it; the workload's own (U2) is
# unbounded but for max_user_namespaces, and it holds no CAP_SYS_RESOURCE.
t_outer_namespace() {
	local name want got pid
	hold_inotify --user-limit max_pid_namespaces=2 || return
	pid=$(held_workload) || { fail "no workload process found"; release_inotify; return; }
	OUT=$(parent_userns_sysctls "$pid" 2>&1)
	for name in "${LIMIT_NAMES[@]}"; do
		want=$(udefault "$name")
		[ "$name" = max_pid_namespaces ] && want=2
		got=$(printf '%s\n' "$OUT" | awk -v n="$name" '$1 == n { print $2 }')
		[ "$got" = "$want" ] || fail "outer namespace: $name is '$got', expected $want ($OUT)"
	done
	release_inotify
	crun --no-workspace -- cat /proc/sys/user/max_inotify_instances
	expect_out_eq 2147483647
	crun --no-workspace --cap-add SYS_RESOURCE -- true
	expect_rc 125
}

# Without a sandbox namespace the workload's own namespace gets them.
t_userns_host() {
	crun --no-workspace --userns host -- sec-probe inotify-count
	expect_rc 0
	probe_is inotify-count "EMFILE $(udefault max_inotify_instances)"
	crun --no-workspace --userns host --print-profile
	expect_rc 0
	expect_out_has '"namespace": "workload"'
}

t_bad_limits() {
	local arg
	for arg in 'max_nothing=1' 'max_user_namespaces=5' 'user.max_inotify_instances=1' \
		'max_inotify_instances' '=4' 'max_inotify_instances=' 'max_inotify_instances=x' \
		'max_inotify_instances=-1' 'max_inotify_instances=2147483648' \
		'max_inotify_instances=0x10'; do
		crun --no-workspace --user-limit "$arg" -- true
		expect_rc 125
		expect_err_has "CORDON_E_USAGE: --user-limit"
		expect_err_has "${arg%%=*}"
	done
	crun --no-workspace --user-limit max_net_namespaces=3 --user-limit max_net_namespaces=4 -- true
	expect_rc 125
	expect_err_has "max_net_namespaces: given twice"
}

t_print_profile() {
	local pp='import json, sys; u = json.load(sys.stdin)["user_limits"]; print(u["namespace"], *(u[k]["limit"] for k in sys.argv[1:]), u["max_net_namespaces"]["given"])'
	cordon run --print-profile --user-limit max_net_namespaces=4 "$ROOTFS"
	expect_rc 0
	OUT=$("$PYTHON" -c "$pp" "${LIMIT_NAMES[@]}" <<<"$OUT")
	[ "$OUT" = "sandbox $(for n in "${LIMIT_NAMES[@]}"; do [ "$n" = max_net_namespaces ] && echo -n "4 " || echo -n "$(udefault "$n") "; done)True" ] ||
		fail "unexpected user_limits in the profile: $OUT"
}

# Queued signals stop at the sandbox's rlimit, message queues at theirs.
t_sigpending_default() {
	crun --no-workspace -- sec-probe sigqueue-count
	expect_rc 0
	probe_is sigqueue-count "EAGAIN $(rdefault sigpending)"
	crun --no-workspace -- sec-probe mq-count
	expect_rc 0
	OUT=$(probe_result mq-count)
	mq_count_fits "$OUT" "$(rdefault msgqueue)" ||
		fail "mq-count inside: '$OUT' for a limit of $(rdefault msgqueue) bytes"
}

# The regression: while a sandbox holds every signal it can queue, its
# owner on the host can still queue one; the same for message queues.
t_owner_keeps_sigqueue() {
	hold_probe sigqueue-count || return
	[ "$HELD" = "EAGAIN $(rdefault sigpending)" ] || fail "the sandbox queued '$HELD' signals"
	host_probe sigqueue-one
	probe_is sigqueue-one ok
	release_inotify
}

t_owner_keeps_mq() {
	hold_probe mq-count || return
	mq_count_fits "$HELD" "$(rdefault msgqueue)" || fail "the sandbox made '$HELD' queues"
	host_probe mq-one
	probe_is mq-one ok
	release_inotify
}

# The bound is the sandbox's total, not per uid: children switching to
# other uids inside get nothing more once the first has it all.
t_sigpending_uids() {
	local d
	d=$(rdefault sigpending)
	crun --no-workspace --cap-add SETUID,SETGID -- sec-probe sigqueue-uids:3
	expect_rc 0
	probe_is sigqueue-uids:3 "EAGAIN $d $d+0+0"
	crun --no-workspace --cap-add SETUID,SETGID --rlimit sigpending=100 -- sec-probe sigqueue-uids:3
	expect_rc 0
	probe_is sigqueue-uids:3 "EAGAIN 100 100+0+0"
	hold_probe sigqueue-uids:3 --cap-add SETUID,SETGID || return
	[ "$HELD" = "EAGAIN $d $d+0+0" ] || fail "the sandbox's uids queued '$HELD' signals"
	host_probe sigqueue-one
	probe_is sigqueue-one ok
	release_inotify
}

# A process cordon exec starts joins the workload's namespace and shares
# its bound: with the workload holding all of it, the exec'd one gets none.
# The exec starts once the workload has counted, seen from the host: a
# shell polling for the count inside, beside the counting workload, had
# SIGCHLDs of the same uid pending (each counts against the same bound)
# and the workload stopped one short on a loaded machine.
t_exec_shares() {
	local id=$CASE_ID-x d init
	d=$(rdefault sigpending)
	setup_case
	mk_bundle b sh -c 'sec-probe sigqueue-count:/tmp/go >/tmp/held' || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	oc start "$id"
	expect_rc 0
	oc state "$id"
	init=$(jfield pid)
	wait_until "$WAIT_LIMIT" grep -qs EAGAIN "/proc/$init/root/tmp/held" ||
		fail "the workload did not report its count"
	oc exec "$id" sh -c 'cat /tmp/held; sec-probe sigqueue-count; touch /tmp/go'
	expect_rc 0
	probe_is sigqueue-count:/tmp/go "EAGAIN $d"
	probe_is sigqueue-count "EAGAIN 0"
	wait_stopped "$id"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

# --rlimit sets them (its hard limit bounds the total).
t_rlimit_override() {
	crun --no-workspace --rlimit sigpending=50 --rlimit msgqueue=30000 \
		-- sh -c 'sec-probe sigqueue-count; sec-probe mq-count'
	expect_rc 0
	probe_is sigqueue-count "EAGAIN 50"
	OUT=$(probe_result mq-count)
	mq_count_fits "$OUT" 30000 || fail "mq-count with msgqueue=30000: '$OUT'"
	# Each uid's own bound is its soft limit, the total the hard one.
	crun --no-workspace --cap-add SETUID,SETGID --rlimit sigpending=10:60 \
		-- sec-probe sigqueue-uids:8
	expect_rc 0
	probe_is sigqueue-uids:8 "EAGAIN 60 10+10+10+10+10+10+0+0"
}

# Under --userns host the workload's namespace hangs below the host's:
# the init's lowered limit bounds it there, on host root's own count (so
# with what host root has pending elsewhere: at most the default).
t_userns_host_rlimits() {
	local d n
	d=$(rdefault sigpending)
	hold_probe sigqueue-uids:2 --userns host --cap-add SETUID,SETGID || return
	n=${HELD#EAGAIN }
	n=${n%% *}
	[[ $HELD == "EAGAIN $n $n+0" && $n -le $d && $n -gt $((d / 2)) ]] ||
		fail "--userns host: the sandbox queued '$HELD' signals (default $d)"
	host_probe sigqueue-one
	probe_is sigqueue-one ok
	release_inotify
}

t_print_profile_rlimits() {
	cordon run --print-profile "$ROOTFS"
	expect_rc 0
	OUT=$("$PYTHON" -c 'import json, sys; r = json.load(sys.stdin)["rlimits"]; print(*r["sigpending"], *r["msgqueue"])' <<<"$OUT")
	[ "$OUT" = "$(rdefault sigpending) $(rdefault sigpending) $(rdefault msgqueue) $(rdefault msgqueue)" ] ||
		fail "rlimits in the profile: $OUT"
}

sec_each "inotify instances stop at the sandbox's limit" t_inotify_default
sec_each "inotify watches stop at the sandbox's limit" t_watches_default
sec_each "the owner can still inotify_init1 while a sandbox holds its maximum" t_owner_keeps_inotify
sec_each "two sandboxes at their limits leave the owner instances" t_two_sandboxes
sec_each "--user-limit sets the limits (up to the caller's own)" t_override
sec_each "the limits sit in the outer namespace, out of the workload's reach" t_outer_namespace
sec_rootful "--userns host: the workload's namespace gets the limits" t_userns_host
sec_each "bad --user-limit values are refused with 125" t_bad_limits
sec_each "--print-profile shows the limits" t_print_profile
sec_each "queued signals and message queues stop at the sandbox's rlimit" t_sigpending_default
sec_each "the owner can still sigqueue while a sandbox holds its maximum" t_owner_keeps_sigqueue
sec_each "the owner can still mq_open while a sandbox holds its maximum" t_owner_keeps_mq
sec_each "queued signals are bounded across the sandbox's uids" t_sigpending_uids
sec_each "--rlimit sigpending and msgqueue set the bound" t_rlimit_override
sec_each "cordon exec's processes share the sandbox's bound" t_exec_shares
sec_rootful "--userns host: the init's limit bounds the workload's namespace" t_userns_host_rlimits
sec_each "--print-profile shows the sigpending and msgqueue defaults" t_print_profile_rlimits
done_testing
