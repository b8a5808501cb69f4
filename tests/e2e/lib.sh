# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers of the end-to-end tests: TAP output, running cordon as root
# ("rootful") and as an unprivileged user ("rootless"), assertions, and the
# leftover checks every case gets for free (host mount table, processes,
# state directories, cgroups).
#
# A test file sources this, defines one function per case and registers
# each with `each_mode NAME FUNCTION` (both modes), `rootful_only` or
# `rootless_only`, then calls `done_testing`. Inside a case:
#
#   crun [OPTIONS...] -- CMD...   cordon run --name ID OPTIONS $ROOTFS -- CMD
#   cordon ARGS...                $CORDON ARGS, as the mode's user, in $WS
#   expect_rc 0; expect_out_eq "hello"; expect_err_has "..."; fail "why"
#
# Environment (meson sets it; defaults suit a run from the source tree):
#   CORDON            the binary                  (build/cordon)
#   CORDON_ROOTFS     the rootfs to run           (build/rootfs)
#   CORDON_TEST_USER  the unprivileged test user  (cordon-test)
#   E2E_CASES         run only the cases whose name matches this ERE

set -u
set -o pipefail

CORDON=${CORDON:-build/cordon}
CORDON_ROOTFS=${CORDON_ROOTFS:-build/rootfs}
CORDON_TEST_USER=${CORDON_TEST_USER:-cordon-test}
case $CORDON in /*) ;; *) CORDON=$PWD/$CORDON ;; esac
case $CORDON_ROOTFS in /*) ;; *) CORDON_ROOTFS=$PWD/$CORDON_ROOTFS ;; esac

# Seconds one foreground cordon call may take before the harness kills it.
E2E_RUN_TIMEOUT=${E2E_RUN_TIMEOUT:-30}
# Mount points that change on a busy host for reasons of their own. Mounts
# in other programs' temporary directories (/tmp/*) are noise too, except
# in ours and in cordon's rootless state directories (/tmp/cordon-UID).
E2E_MOUNT_NOISE=${E2E_MOUNT_NOISE:-'^(/proc/sys/fs/binfmt_misc|/run/user/|/run/credentials/|/run/netns(/|$)|/var/lib/docker/|/var/lib/containers/)'}

# shellcheck source=tests/e2e/skip.sh
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3

# The scratch tree: readable by the test user, removed at exit.
E2E_TMP=$(mktemp -d /tmp/cordon-e2e.XXXXXX) || exit 99
chmod 755 "$E2E_TMP"
# The audit logs cordon keeps when a sandbox's state goes (docs/audit.md)
# land in the scratch tree, one directory a mode, not in the host's
# /var/log/cordon/audit or the test user's home: every cordon call gets
# CORDON_AUDIT_DIR (a case's own XENV comes after it, and wins).
E2E_AUDIT_DIR=$E2E_TMP/audit-kept

_tap_n=0
_tap_failed=0
_tap_skipped=0
_case_n=0

# --- TAP ---------------------------------------------------------------

diag() {
	local line
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/# /'
	done
}

tap_ok() {
	_tap_n=$((_tap_n + 1))
	printf 'ok %d - %s\n' "$_tap_n" "$1"
}

tap_not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	printf 'not ok %d - %s\n' "$_tap_n" "$1"
}

tap_skip() {
	_tap_n=$((_tap_n + 1))
	_tap_skipped=$((_tap_skipped + 1))
	printf 'ok %d - %s # SKIP %s\n' "$_tap_n" "$1" "$2"
}

_e2e_cleanup() {
	local pid
	# Anything a case started in the background and did not reap.
	for pid in "${_bg_pids[@]}"; do
		kill -9 "$pid" 2>/dev/null
	done
	# A mount left in the scratch tree (by a failed case, or leaked by
	# cordon) must not let rm reach what it shows: detach it first, and
	# never cross into another filesystem.
	if is_root; then
		awk -v t="$E2E_TMP" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
			while read -r mp; do umount -l "$mp" 2>/dev/null; done
	fi
	rm -rf --one-file-system "$E2E_TMP"
}

# Print the plan (late, which TAP allows) and a summary. The verdict is
# the TAP stream: exit 0 even when cases failed, so that meson reports
# FAIL with the count of failed cases (a non-zero status makes it ERROR);
# 99 means the script broke off.
done_testing() {
	printf '1..%d\n' "$_tap_n"
	diag "$_tap_failed failed, $_tap_skipped skipped, of $_tap_n"
	_done=1
	exit 0
}

_on_exit() {
	local rc=$?
	_e2e_cleanup
	if [ -z "${_done:-}" ]; then
		printf '1..%d\n' "$_tap_n"
		diag "test script ended early (status $rc)"
		exit 99
	fi
}
trap _on_exit EXIT
_bg_pids=()

# --- modes and users ---------------------------------------------------

# The harness forks as little as it can: on a loaded machine every fork
# costs milliseconds, and a case runs its checks many times.
is_root() { [ "$EUID" -eq 0 ]; }

_have_test_user=
id -u "$CORDON_TEST_USER" >/dev/null 2>&1 && _have_test_user=1
have_test_user() { [ -n "$_have_test_user" ]; }

if is_root && have_test_user; then
	TEST_UID=$(id -u "$CORDON_TEST_USER")
	TEST_GID=$(id -g "$CORDON_TEST_USER")
	TEST_HOME=$(getent passwd "$CORDON_TEST_USER" | cut -d: -f6)
elif ! is_root; then
	# Run by an unprivileged user: that user is the rootless half.
	CORDON_TEST_USER=$(id -un)
	TEST_UID=$(id -u)
	TEST_GID=$(id -g)
	TEST_HOME=$HOME
fi

# Direct calls of cordon that do not go through run_cordon (races,
# background sandboxes, the lab's helpers) keep their audit logs in the
# scratch tree too: root's through the environment, the test user's
# through USER_PREFIX.
mkdir -p "$E2E_AUDIT_DIR/rootful" "$E2E_AUDIT_DIR/rootless"
if is_root && have_test_user; then chown "$TEST_UID:$TEST_GID" "$E2E_AUDIT_DIR/rootless"; fi
export CORDON_AUDIT_DIR=$E2E_AUDIT_DIR/rootful

# The command prefix that runs a command as the unprivileged test user
# with a minimal environment (default signal dispositions too), as the
# array USER_PREFIX; VAR=VALUE words may follow it.
_user_prefix() {
	USER_PREFIX=(env -i --default-signal PATH=/usr/local/bin:/usr/bin:/bin HOME="$TEST_HOME"
		USER="$CORDON_TEST_USER" LOGNAME="$CORDON_TEST_USER"
		CORDON_AUDIT_DIR="$E2E_AUDIT_DIR/rootless")
	if is_root; then
		USER_PREFIX=(runuser -u "$CORDON_TEST_USER" -- "${USER_PREFIX[@]}")
	fi
}

# as_user [VAR=VALUE...] CMD...: run CMD as the unprivileged test user.
as_user() {
	local USER_PREFIX
	_user_prefix
	"${USER_PREFIX[@]}" "$@"
}

# Why MODE cannot run here, into WHY (empty when it can).
mode_unavailable() {
	WHY=
	case $1 in
	rootful) is_root || WHY="rootful half needs root" ;;
	rootless)
		if is_root && ! have_test_user; then
			WHY="test user '$CORDON_TEST_USER' does not exist (contrib/test.sh creates it)"
		fi
		;;
	esac
}

# The uid that owns what this mode creates, and its state directories.
mode_uid() { if [ "$MODE" = rootful ]; then echo 0; else echo "$TEST_UID"; fi; }

state_dirs() {
	if [ "$MODE" = rootful ]; then
		STATE_DIRS=(/run/cordon)
	else
		STATE_DIRS=("/tmp/cordon-$TEST_UID" "/run/user/$TEST_UID/cordon")
	fi
	printf '%s\n' "${STATE_DIRS[@]}"
}

# mkdir owned by the mode's user (or by OWNER=uid[:gid] when given).
mk_dir() {
	local owner=${OWNER:-}
	if [ -z "$owner" ] && [ "$MODE" = rootless ] && is_root; then
		owner=$TEST_UID:$TEST_GID
	fi
	if [ -n "$owner" ]; then
		install -d -m 755 -o "${owner%%:*}" -g "${owner#*:}" "$@"
	else
		install -d -m 755 "$@"
	fi
}

# --- running things ----------------------------------------------------

OUT='' ERR='' RC='' LAST_CMD='' LAST_MS=0
XENV=()

# _show ARGS...: the words quoted for a shell, into SHOWN.
_show() {
	local arg q
	SHOWN=
	for arg in "$@"; do
		printf -v q '%q' "$arg"
		SHOWN+="${SHOWN:+ }$q"
	done
}

# _slurp VAR FILE: VAR=$(cat FILE), without a fork.
_slurp() {
	local -n _var=$1
	_var=
	IFS= read -r -d '' _var <"$2"
	while [[ $_var == *$'\n' ]]; do _var=${_var%$'\n'}; done
}

# run CMD...: on the host as the test script's own user, captured.
run() {
	local t0 t1
	_show "$@"
	LAST_CMD=$SHOWN
	_run_serial=$((_run_serial + 1))
	t0=${EPOCHREALTIME/./}
	timeout -k 5 "$E2E_RUN_TIMEOUT" "$@" >"$CASE_DIR/out" 2>"$CASE_DIR/err" </dev/null
	RC=$?
	t1=${EPOCHREALTIME/./}
	LAST_MS=$(((t1 - t0) / 1000))
	_slurp OUT "$CASE_DIR/out"
	_slurp ERR "$CASE_DIR/err"
	[ "$RC" -ne 124 ] || [ "$LAST_MS" -lt $((E2E_RUN_TIMEOUT * 1000)) ] ||
		_fail_raw "harness timeout: the command ran longer than ${E2E_RUN_TIMEOUT}s"
	return 0
}

# CORDON_AUDIT_DIR=... for this mode, into AUDIT_ENV (its directory made,
# the test user's when rootless).
_audit_env() {
	local d=$E2E_AUDIT_DIR/$MODE
	if [ ! -d "$d" ]; then
		mkdir -p "$d"
		if [ "$MODE" = rootless ] && is_root; then chown "$TEST_UID:$TEST_GID" "$d"; fi
	fi
	AUDIT_ENV=("CORDON_AUDIT_DIR=$d")
}

# The command line that runs $CORDON in this mode (XENV adds variables).
_cordon_argv() {
	local AUDIT_ENV
	_audit_env
	if [ "$MODE" = rootful ]; then
		# Default dispositions: bash starts background jobs with SIGINT
		# ignored, which the workload would inherit.
		_argv=(env --default-signal "${AUDIT_ENV[@]}" "${XENV[@]}" "$CORDON" "$@")
	else
		local USER_PREFIX
		_user_prefix
		_argv=("${USER_PREFIX[@]}" "${AUDIT_ENV[@]}" "${XENV[@]}" "$CORDON" "$@")
	fi
}

# cordon ARGS...: $CORDON in this mode, in $WS (the default /workspace).
cordon() {
	local _argv
	_cordon_argv "$@"
	pushd "$WS" >/dev/null || return 1
	run "${_argv[@]}"
	popd >/dev/null || return 1
	_show "$@"
	LAST_CMD="(cd $WS && $MODE: cordon $SHOWN)"
}

# A fresh id for each cordon run of the case, all with the case's prefix.
_run_k=0
next_id() {
	_run_k=$((_run_k + 1))
	ID="$CASE_ID-$_run_k"
}

# crun [OPTIONS...] -- CMD...: cordon run --name ID OPTIONS $ROOTFS -- CMD.
crun() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	next_id
	cordon run --name "$ID" "${opts[@]}" "$ROOTFS" -- "$@"
}

# crun_bg: like crun, in the background; sets BG_PID (the pid of the
# command started, which for rootless is runuser's) and ID.
crun_bg() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	next_id
	cordon_bg run --name "$ID" "${opts[@]}" "$ROOTFS" -- "$@"
}

# cordon_bg ARGS...: like cordon, in the background; sets BG_PID.
cordon_bg() {
	local _argv
	_cordon_argv "$@"
	_show "$@"
	LAST_CMD="(cd $WS && $MODE: cordon $SHOWN) &"
	pushd "$WS" >/dev/null || return 1
	# In a subshell (no exec), so bash prints no job notice when the test
	# SIGKILLs the cordon process.
	("${_argv[@]}" >"$CASE_DIR/out" 2>"$CASE_DIR/err" </dev/null; exit $?) 2>/dev/null &
	BG_PID=$!
	popd >/dev/null || return 1
	_bg_pids+=("$BG_PID")
}

# Wait for the background command; fills RC, OUT, ERR.
wait_bg() {
	_run_serial=$((_run_serial + 1))
	wait "$BG_PID"
	RC=$?
	_slurp OUT "$CASE_DIR/out"
	_slurp ERR "$CASE_DIR/err"
}

# Has the background command ended (gone, or a zombie waiting for us)?
bg_ended() {
	local stat
	{ IFS= read -r stat <"/proc/$BG_PID/stat"; } 2>/dev/null || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

# Is PID stopped (state T, by a signal)?
proc_stopped() {
	local stat
	{ IFS= read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = T ]
}

# wait_bg, but give up after SECONDS: kill it, fail the case, return 1.
wait_bg_for() {
	if ! wait_until "$1" bg_ended; then
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		fail "the background cordon did not exit within $1 s"
		return 1
	fi
	wait_bg
}

# Processes whose command line contains one of the given strings, as
# "pid: cmdline" lines (this shell and its subshells excluded).
procs_matching() {
	local f pid args joined m
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
		{ mapfile -d '' -t args <"$f"; } 2>/dev/null || continue
		[ ${#args[@]} -gt 0 ] || continue
		joined="${args[*]}"
		for m in "$@"; do
			[ -n "$m" ] || continue
			if [[ $joined == *"$m"* ]]; then
				printf '%s: %s\n' "$pid" "$joined"
				break
			fi
		done
	done
}

# argv[0] of PID.
_argv0_of() {
	local a=
	{ IFS= read -r -d '' a <"/proc/$1/cmdline"; } 2>/dev/null
	printf '%s' "$a"
}
_ppid_of() { awk '/^PPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# The pid of the supervisor of run ID: the process started as $CORDON
# with the id on its command line whose parent was not (the init it
# forks has the same command line). By argv[0], not /proc/PID/exe, which
# reads "... (deleted)" once the binary is rebuilt under a running test.
supervisor_of() {
	local id=$1 pid line
	while read -r line; do
		pid=${line%%:*}
		[ "$(_argv0_of "$pid")" = "$CORDON" ] || continue
		[ "$(_argv0_of "$(_ppid_of "$pid")")" = "$CORDON" ] && continue
		echo "$pid"
		return 0
	done < <(procs_matching "--name $id ")
	return 1
}

# The limit of a wait that ends on its event (wait_until, wait_bg_for):
# there only to end a case that hangs, never to judge how long something
# took. Generous for a loaded 2-core machine or an emulated one (the VM
# suite), where what takes a second alone takes tens: limits of 10 or 30 s
# failed cases there that passed alone.
# shellcheck disable=SC2034 # used by the scripts that source this file
WAIT_LIMIT=120

# Poll COMMAND... every 50 ms until it succeeds or SECONDS pass. Bounded
# by the clock, not by a count of polls: where a fork costs much (a loaded
# or an emulated machine), each poll takes far longer than 50 ms.
wait_until() {
	local secs=$1 end
	shift
	end=$((${EPOCHREALTIME/./} + secs * 1000000))
	while :; do
		"$@" && return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
		sleep 0.05
	done
}

no_procs_matching() { [ -z "$(procs_matching "$@")" ]; }

# watch_opens PATH: count, from now on, the opens of PATH's inode
# (inotify IN_OPEN, which an O_PATH open does not raise); opens_seen
# stops the count and sets OPENS. The kernel queues an event within the
# open itself: read after cordon returned, the count is complete.
watch_opens() {
	coproc OPENW {
		"$PYTHON" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0:  # IN_OPEN
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("ready", flush=True)
sys.stdin.readline()
n = 0
try:
    while True:
        buf = os.read(fd, 65536)
        i = 0
        while i + 16 <= len(buf):
            n += (int.from_bytes(buf[i + 4:i + 8], "little") & 0x20) != 0
            i += 16 + int.from_bytes(buf[i + 12:i + 16], "little")
except BlockingIOError:
    pass
print(n, flush=True)
' "$1" 2>&1
	}
	local line=
	read -r line <&"${OPENW[0]}"
	[ "$line" = ready ] || { _fail_raw "cannot watch the opens of $1: $line"; return 1; }
}
opens_seen() {
	OPENS=
	echo stop >&"${OPENW[1]}"
	# shellcheck disable=SC2034 # the result, read by the callers
	read -r OPENS <&"${OPENW[0]}"
	wait "$OPENW_PID" 2>/dev/null
}

# A unique number to put on a workload's command line (`sleep $MARK`).
new_mark() { MARK=$((800000000 + (RANDOM << 15 | RANDOM) % 100000000)); }

# copy_rootfs DEST: a copy of $CORDON_ROOTFS to modify. Run unprivileged,
# the parts of a root-built rootfs it cannot read (/root) are left out.
copy_rootfs() {
	cp -a "$CORDON_ROOTFS" "$1" 2>/dev/null
	[ -x "$1/bin/busybox" ] || { _fail_raw "could not copy $CORDON_ROOTFS to $1"; return 1; }
	chmod 755 "$1"
}

# --- assertions ----------------------------------------------------------

_case_fails=0
_case_diag=()

_indent() { sed 's/^/    /'; }

_run_serial=0
_dumped_serial=-1
_last_run_diag() {
	local rest
	# Each run's output is shown once, however many checks it failed.
	[ "$_dumped_serial" != "$_run_serial" ] && [ -n "$LAST_CMD" ] || return 0
	_dumped_serial=$_run_serial
	_case_diag+=("  \$ $LAST_CMD" "  exit status: ${RC:-?} (${LAST_MS} ms)")
	if [ -n "$OUT" ]; then
		_case_diag+=("  stdout:" "$(printf '%s\n' "$OUT" | head -c 2000 | head -n 30 | _indent)")
		rest=$(printf '%s\n' "$OUT" | wc -l)
		[ "$rest" -le 30 ] || _case_diag+=("    ... ($rest lines)")
	else
		_case_diag+=("  stdout: (empty)")
	fi
	if [ -n "$ERR" ]; then
		_case_diag+=("  stderr:" "$(printf '%s\n' "$ERR" | head -c 2000 | head -n 30 | _indent)")
		rest=$(printf '%s\n' "$ERR" | wc -l)
		[ "$rest" -le 30 ] || _case_diag+=("    ... ($rest lines)")
	else
		_case_diag+=("  stderr: (empty)")
	fi
}

# skip_case REASON: report the case as skipped (call it, then return).
# Say which kind (skip.sh): skip_layout or skip_or_fail.
skip_case() { _case_skip=$1; }

# skip_layout REASON: this host's layout cannot run the case; a skip everywhere.
skip_layout() { skip_case "$1"; }

# skip_or_fail REASON: a missing precondition; a skip by hand, a failure under CI.
skip_or_fail() {
	if ci_strict; then
		_fail_raw "$1 (CI=true: a missing precondition is a failure)"
		return 0
	fi
	skip_case "$1"
}

# A failure not about the last command.
_fail_raw() {
	_case_fails=$((_case_fails + 1))
	_case_diag+=("$@")
}

# fail MESSAGE: the case fails; the last command's output is shown.
fail() {
	_fail_raw "$1"
	_last_run_diag
	return 1
}

expect_rc() {
	[ "$RC" = "$1" ] || fail "${2:-expected exit status $1, got $RC}"
}

expect_rc_not() {
	[ "$RC" != "$1" ] || fail "${2:-expected an exit status other than $1}"
}

expect_out_eq() {
	[ "$OUT" = "$1" ] || fail "${2:-expected stdout '$1'}"
}

expect_out_has() {
	[[ $OUT == *"$1"* ]] || fail "${2:-expected stdout to contain '$1'}"
}

expect_out_lacks() {
	[[ $OUT != *"$1"* ]] || fail "${2:-expected stdout not to contain '$1'}"
}

expect_err_eq() {
	[ "$ERR" = "$1" ] || fail "${2:-expected stderr '$1'}"
}

expect_err_has() {
	[[ $ERR == *"$1"* ]] || fail "${2:-expected stderr to contain '$1'}"
}

expect_err_lacks() {
	[[ $ERR != *"$1"* ]] || fail "${2:-expected stderr not to contain '$1'}"
}

expect_err_empty() {
	[ -z "$ERR" ] || fail "${1:-expected nothing on stderr}"
}

# cordon's own failure: exit 125 and exactly one stderr line
# `cordon: CORDON_E_<CODE>: message` with the message naming WORD.
# CODE may be an ERE alternation (ROOTFS|MOUNT).
expect_cordon_error() {
	local code=$1 word=$2 lines
	expect_rc 125 || return 1
	lines=${ERR//[!$'\n']/}
	lines=$((${#lines} + 1))
	[ -n "$ERR" ] && [ "$lines" -eq 1 ] ||
		{ fail "expected exactly one line on stderr, got $lines"; return 1; }
	[[ $ERR =~ ^cordon:\ CORDON_E_($code):\ . ]] ||
		{ fail "expected 'cordon: CORDON_E_$code: ...' on stderr"; return 1; }
	[[ $ERR == *"$word"* ]] ||
		{ fail "expected the message to name '$word'"; return 1; }
}

# check DESCRIPTION CMD...: a host-side check; fails the case when CMD does.
check() {
	local what=$1
	shift
	"$@" && return 0
	_show "$@"
	_fail_raw "check failed: $what" "  \$ $SHOWN"
	return 1
}

# --- leftovers -----------------------------------------------------------

# The host mount table without what changes by itself: mount ids and
# propagation peer groups, and noisy mount points.
mount_snapshot() {
	awk -v noise="$E2E_MOUNT_NOISE" -v ours="$E2E_TMP" '{
		sep = 0
		for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
		mp = $5
		if (mp ~ noise) next
		if (index(mp, "/tmp/") == 1 && index(mp, ours) != 1 && mp !~ /^\/tmp\/cordon-[0-9]+(\/|$)/) next
		print mp, $4, $(sep + 1), $(sep + 2), $6
	}' /proc/self/mountinfo
}

# State entries, one "DIR/NAME" per line, into STATE.
state_snapshot() {
	local d e
	STATE=
	state_dirs >/dev/null
	for d in "${STATE_DIRS[@]}"; do
		for e in "$d"/* "$d"/.[!.]*; do
			[ -e "$e" ] || [ -L "$e" ] || continue
			STATE+="$e"$'\n'
		done
	done
}

# Cgroup directories named after case ID, one per line: cordon-ID-X made
# by cordon, and a cgroupsPath or parent the case named (...-ID-X, ...-ID).
cgroups_matching() {
	find /sys/fs/cgroup -mindepth 2 -maxdepth 12 -type d \( -name "*$1-*" -o -name "*$1" \) \
		-print 2>/dev/null
}

_leftover_checks() {
	local now diff procs pid cgs d
	now=$(mount_snapshot)
	if [ "$now" != "$_mounts_before" ]; then
		# Sorted only when it differs (the kernel keeps the order otherwise).
		_mounts_before=$(printf '%s\n' "$_mounts_before" | sort)
		now=$(printf '%s\n' "$now" | sort)
		diff=$(diff <(printf '%s\n' "$_mounts_before") <(printf '%s\n' "$now") | grep '^[<>]')
		_fail_raw "leftover: the host mount table changed (< gone, > new):" \
			"$(printf '%s\n' "$diff" | head -n 20 | _indent)"
	fi
	procs=$(procs_matching "$CASE_ID-" "${MARK:-}")
	if [ -n "$procs" ]; then
		_fail_raw "leftover: processes still running:" "$(printf '%s\n' "$procs" | _indent)"
		# Reap them so the next case starts clean.
		while read -r pid; do kill -9 "${pid%%:*}" 2>/dev/null; done <<<"$procs"
	fi
	# Every exit path leaves no cgroup: one without a state entry naming it
	# is lost to the sweep too.
	cgs=$(cgroups_matching "$CASE_ID")
	if [ -n "$cgs" ]; then
		_fail_raw "leftover: cgroups remain:" "$(printf '%s\n' "$cgs" | _indent)"
		while read -r d; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done <<<"$cgs"
	fi
	state_snapshot
	local e mine='' others=''
	while IFS= read -r e; do
		[ -n "$e" ] || continue
		if [[ $e == */"$CASE_ID"-* ]]; then
			mine+="    $e"$'\n'
		elif [[ $'\n'$_state_before != *$'\n'"$e"$'\n'* ]]; then
			others+="    $e"$'\n'
		fi
	done <<<"$STATE"
	[ -z "$mine" ] || _fail_raw "leftover: state directories remain:" "${mine%$'\n'}"
	# Entries under other names may be other cordon users' runs on this
	# host; worth a note, not a failure.
	[ -z "$others" ] || _case_notes+=("note: new state entries not named by this case (another cordon user?):"
		"${others%$'\n'}")
}

# --- cases -----------------------------------------------------------------

# Run FUNCTION as one TAP case in MODE, with leftover checks around it.
# The case sees: MODE, CASE_ID (prefix of every --name), CASE_DIR (its
# scratch dir), WS (a workspace dir owned by the mode's user, the cwd of
# every cordon call), ROOTFS, and MARK (set by new_mark).
run_case() {
	local mode=$1 name=$2 fn=$3 WHY
	shift 3
	# E2E_CASES (an extended regular expression): only the cases whose
	# name matches run; the others are left out of the TAP stream. The VM
	# suite (tests/vm) runs a chosen part of a script under emulation so.
	[ -z "${E2E_CASES:-}" ] || [[ $name =~ $E2E_CASES ]] || return 0
	MODE=$mode
	mode_unavailable "$mode"
	if [ -n "$WHY" ] && ci_strict; then
		tap_not_ok "$mode: $name"
		diag "$WHY (CI=true: a missing precondition is a failure)"
		return
	fi
	if [ -n "$WHY" ]; then
		tap_skip "$mode: $name" "$WHY"
		return
	fi
	_case_n=$((_case_n + 1))
	CASE_ID="e2e-$$-$_case_n"
	CASE_DIR="$E2E_TMP/$_case_n"
	WS="$CASE_DIR/ws"
	ROOTFS=$CORDON_ROOTFS
	MARK=
	XENV=()
	_run_k=0
	_case_fails=0
	_case_diag=()
	_case_skip=
	_case_notes=()
	OUT='' ERR='' RC='' LAST_CMD='' LAST_MS=0
	mk_dir "$CASE_DIR" "$WS"
	_mounts_before=$(mount_snapshot)
	state_snapshot
	_state_before=$'\n'$STATE

	"$fn" "$@"

	_leftover_checks
	if [ -n "$_case_skip" ] && [ "$_case_fails" -eq 0 ]; then
		tap_skip "$mode: $name" "$_case_skip"
	elif [ "$_case_fails" -eq 0 ]; then
		tap_ok "$mode: $name"
	else
		tap_not_ok "$mode: $name"
		diag "${_case_diag[@]}"
	fi
	[ ${#_case_notes[@]} -eq 0 ] || diag "${_case_notes[@]}"
}

each_mode() {
	run_case rootful "$@"
	run_case rootless "$@"
}

rootful_only() { run_case rootful "$@"; }
rootless_only() { run_case rootless "$@"; }

# --- preflight ---------------------------------------------------------------

# Without a binary or a rootfs every case would fail the same way: say so
# once and stop (meson shows the bail-out as an error).
if [ ! -x "$CORDON" ]; then
	echo "Bail out! cordon binary not found at $CORDON"
	_done=1
	exit 1
fi
if [ ! -x "$CORDON_ROOTFS/bin/sh" ] && [ ! -L "$CORDON_ROOTFS/bin/sh" ]; then
	echo "Bail out! rootfs not found at $CORDON_ROOTFS (no bin/sh)"
	_done=1
	exit 1
fi

# parent_userns_sysctls PID: "NAME VALUE" lines of /proc/sys/user as the
# parent of PID's user namespace sees them (a sandbox's outer namespace,
# from its workload's pid), read by this mode's user after setns into it.
parent_userns_sysctls() {
	local _argv=("$PYTHON" -c '
import ctypes, fcntl, os, sys
fd = os.open("/proc/%s/ns/user" % sys.argv[1], os.O_RDONLY)
parent = fcntl.ioctl(fd, 0xb702)  # NS_GET_PARENT
if ctypes.CDLL(None, use_errno=True).setns(parent, 0x10000000) != 0:  # CLONE_NEWUSER
    sys.exit("setns: " + os.strerror(ctypes.get_errno()))
for n in sorted(os.listdir("/proc/sys/user")):
    print(n, open("/proc/sys/user/" + n).read().strip())
' "$1")
	if [ "$MODE" = rootless ] && is_root; then
		as_user "${_argv[@]}"
	else
		"${_argv[@]}"
	fi
}
