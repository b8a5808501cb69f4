#!/usr/bin/env bash
# contrib/test.sh — build cordon three times and run every test; what CI runs.
#
#   build/       -Dwerror=true, debugoptimized: all suites (unit, e2e, ...),
#                and beside them the VM suite (tests/vm: Debian 12's kernel, pure cgroup v2)
#   build-asan/  ASan + UBSan at -O1, no rootfs: the unit suite only
#   build-fuzz/  clang, libFuzzer + ASan + UBSan: the fuzzers, two at a time
#
# The VM suite runs in the background from the start of build/'s suites,
# then beside the ASan unit run and the fuzzers (the guest sees the host
# read-only and has no network: nothing shared but the CPU; qemu at nice
# 10, the phases after build/'s at the same); its output is printed whole
# after theirs.
#
# As root it installs missing Debian packages and creates the unprivileged
# user cordon-test (with a 65536-id range in /etc/subuid and /etc/subgid) that
# the rootless end-to-end tests run as; as another user it prints the apt-get
# line for missing packages and stops. The last line of output is always the
# total: "N passed, N failed[, N skipped]". Exits non-zero if anything failed.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
root=$(pwd -P)
# Build trees must be readable by cordon-test.
umask 022

test_user=cordon-test
started=$SECONDS
failed_steps=()
logs=()

heading() { printf '\n== %s\n' "$*"; }
warn() { printf 'test.sh: %s\n' "$*" >&2; }
# In a background phase (step_file set) a failed step is written to that
# file, one a line, and the main shell adds it when it collects the phase.
step_file=
step_failed() {
	failed_steps+=(--failed-step "$1")
	[ -z "$step_file" ] || printf '%s\n' "$1" >>"$step_file"
	warn "FAILED: $1"
}
finish() {
	heading "Summary ($((SECONDS - started)) s)"
	if command -v python3 >/dev/null 2>&1; then
		python3 contrib/tap-summary.py "${failed_steps[@]}" "${logs[@]}"
		exit $?
	fi
	# Only when the packages could not be installed: nothing ran.
	echo "0 passed, $((${#failed_steps[@]} / 2)) failed"
	exit 1
}

heading "Debian packages"
if ! contrib/deps.sh --test; then
	step_failed "Debian packages are missing (install them as root with the apt-get line above)"
	finish
fi
echo "all present"

# --- the unprivileged test user --------------------------------------------

# Prints the first id of a free 65536-id range at or above 200000 that
# overlaps no entry of /etc/subuid or /etc/subgid.
free_subid_start() {
	cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: '
		BEGIN { start = 200000 }
		NF >= 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { s[NR] = $2; e[NR] = $2 + $3 }
		END {
			do {
				moved = 0
				for (i in s)
					if (start < e[i] && start + 65536 > s[i]) { start = e[i]; moved = 1 }
			} while (moved)
			print start
		}'
}

# True if FILE gives the user (by name or uid) at least 65536 ids.
has_subids() {
	local file=$1 uid
	uid=$(id -u "$test_user")
	awk -F: -v name="$test_user" -v uid="$uid" '
		($1 == name || $1 == uid) && $3 >= 65536 { found = 1 }
		END { exit !found }' "$file" 2>/dev/null
}

setup_test_user() {
	if ! id "$test_user" >/dev/null 2>&1; then
		useradd -m -s /bin/sh "$test_user" || return 1
		echo "created user $test_user"
	fi
	local file opt start=
	for file in /etc/subuid /etc/subgid; do
		has_subids "$file" && continue
		# One start for both files, computed before either changes.
		[ -n "$start" ] || start=$(free_subid_start)
		if [ "$file" = /etc/subuid ]; then opt=--add-subuids; else opt=--add-subgids; fi
		if ! usermod "$opt" "$start-$((start + 65535))" "$test_user" 2>/dev/null; then
			printf '%s:%s:65536\n' "$test_user" "$start" >>"$file" || return 1
		fi
		echo "gave $test_user ids $start-$((start + 65535)) in $file"
	done
}

heading "Test user $test_user"
if [ "$(id -u)" -eq 0 ]; then
	if setup_test_user; then
		echo "$test_user: uid $(id -u "$test_user");" \
			"subuid $(grep -m1 "^$test_user:" /etc/subuid | cut -d: -f2-);" \
			"subgid $(grep -m1 "^$test_user:" /etc/subgid | cut -d: -f2-)"
	else
		step_failed "could not set up the user $test_user"
	fi
else
	echo "not root: not creating $test_user (the tests that need it skip or run as you)"
fi

# --- configure and build -------------------------------------------------------

# configure DIR OPTION...: a fresh setup, or a reconfigure with the same options.
configure() {
	local dir=$1
	shift
	if [ -f "$dir/meson-private/coredata.dat" ]; then
		meson setup --reconfigure "$dir" "$@" && return 0
		warn "reconfiguring $dir failed; starting it afresh"
		meson setup --wipe "$dir" "$@" && return 0
		rm -rf "$dir"
	fi
	meson setup "$dir" "$@"
}

build_tree() {
	local dir=$1 log
	shift
	heading "Configure and build $dir/ ($*)"
	log=$(mktemp)
	if ! configure "$dir" "$@" >"$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		step_failed "meson setup $dir"
		return 1
	fi
	rm -f "$log"
	if ! ninja -C "$dir"; then
		step_failed "ninja -C $dir (the build failed)"
		return 1
	fi
}

build_ok=0
asan_ok=0
fuzz_ok=0
build_tree build -Dbuildtype=debugoptimized -Dwerror=true -Dtests=true && build_ok=1
build_tree build-asan -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=true \
	-Dbuild_rootfs=false -Dwerror=true -Dtests=true && asan_ok=1
# The fuzzers (clang, libFuzzer, ASan+UBSan): suite 'fuzz' runs them two at a
# time, each for -Dfuzz_seconds (20 s; about 50 s in all).
CC=clang build_tree build-fuzz -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
	-Doptimization=1 -Ddebug=true -Dbuild_rootfs=false -Dwerror=true -Dtests=true && fuzz_ok=1

# --- can the test user reach the build? ---------------------------------------------

# Prints the first directory on the way to PATH that the test user cannot enter.
first_blocked_dir() {
	local path=$1 dir=
	local IFS=/
	for part in ${path#/}; do
		dir=$dir/$part
		[ -d "$dir" ] || break
		if ! runuser -u "$test_user" -- test -x "$dir"; then
			printf '%s\n' "$dir"
			return
		fi
	done
}

# A checkout under a private directory (CI may clone below /root): give the
# test user search permission on the parents, nothing more, and say so.
if [ "$build_ok" -eq 1 ] && [ "$(id -u)" -eq 0 ] && id "$test_user" >/dev/null 2>&1; then
	for _ in 1 2 3 4 5 6 7 8; do
		blocked=$(first_blocked_dir "$root/build/cordon")
		[ -n "$blocked" ] || break
		chmod o+x "$blocked" && echo "made $blocked searchable (o+x) so that $test_user can run the build"
	done
fi

if [ "$build_ok" -eq 1 ] && [ "$(id -u)" -eq 0 ] && id "$test_user" >/dev/null 2>&1; then
	if runuser -u "$test_user" -- test -x "$root/build/cordon" &&
		{ [ ! -d "$root/build/rootfs" ] || runuser -u "$test_user" -- test -r "$root/build/rootfs/bin/busybox"; }; then
		export CORDON_TEST_USER=$test_user
		echo "$test_user can run $root/build/cordon (CORDON_TEST_USER=$test_user)"
	else
		blocked=$(first_blocked_dir "$root/build/cordon")
		warn "the user $test_user cannot run $root/build/cordon${blocked:+: it cannot enter $blocked ($(stat -c %A "$blocked"))}."
		warn "The rootless tests run as $test_user and need every parent directory of the checkout to be"
		warn "world-searchable (o+x). Clone into a world-readable path (for example under /srv or /tmp),"
		warn "or make the parents o+x. CORDON_TEST_USER is not set, so those tests cannot run as $test_user."
	fi
fi

# (/dev/net/tun, which pasta opens as the rootless network tests' user: the
# network lab makes it 0666 while a lab that needs it is up, and the last
# one down puts the mode back; tests/lab/lab.sh, lab_tun_open.)

# --- run the tests -------------------------------------------------------------

# run_suite DIR LABEL [--log NAME] MESON-TEST-ARGS...: NAME.json is the log
# meson writes (testlog; testlog-SETUP with --setup SETUP). meson runs at
# the niceness in $suite_nice (0 unless beside the VM).
suite_nice=0
suite_pid=
run_suite() {
	local dir=$1 label=$2 rc logbase=testlog
	shift 2
	if [ "${1:-}" = --log ]; then
		logbase=$2
		shift 2
	fi
	heading "meson test -C $dir $*"
	rm -f "$dir/meson-logs/$logbase.json"
	# In the background and waited for, so that a TERM trap can pass the
	# signal on (a background phase's meson would outlive its subshell).
	nice -n "$suite_nice" meson test -C "$dir" --no-rebuild --print-errorlogs "$@" &
	suite_pid=$!
	wait "$suite_pid"
	rc=$?
	suite_pid=
	logs+=("$label=$dir/meson-logs/$logbase.json")
	# 0: all passed, 1: some test failed (counted from the log); else meson itself failed.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		step_failed "meson test -C $dir exited with status $rc"
	fi
}

vm_pid=
vm_out=
vm_steps=
# Ends the background VM phase (its meson, which ends the VM) when the
# script exits or is killed. Killed: the VM phase ended, then die as the
# signal would.
stop_vm() {
	[ -n "$vm_pid" ] || return 0
	kill -TERM "$vm_pid" 2>/dev/null
	wait "$vm_pid" 2>/dev/null
	vm_pid=
	rm -f "$vm_out" "$vm_steps"
}
# The running meson too: started in the background (run_suite), it ignores
# the terminal's SIGINT.
stop_suites() {
	[ -z "$suite_pid" ] || kill -TERM "$suite_pid" 2>/dev/null
	stop_vm
}
trap stop_suites EXIT
for sig in TERM INT HUP; do
	# shellcheck disable=SC2064 # the signal is meant to be expanded now
	trap "stop_suites; trap - $sig EXIT; kill -$sig \$\$" "$sig"
done

if [ "$build_ok" -eq 1 ]; then
	# Debian 12's kernel on pure cgroup v2, in a VM under emulation
	# (tests/vm): its budget and the time it took are in its output.
	# In the background: its output goes to a file, its failed steps to
	# another; a TERM passes on to its meson (which stops the VM). It
	# starts with the host's suites: qemu runs at nice 10 (vm.sh), so it
	# takes the CPU they leave (the serial network scripts wait more than
	# they compute), and the run no longer waits for it at the end.
	vm_out=$(mktemp)
	vm_steps=$(mktemp)
	(
		step_file=$vm_steps
		suite_pid=
		trap '[ -z "$suite_pid" ] || kill -TERM "$suite_pid" 2>/dev/null; exit 143' TERM
		trap - INT HUP EXIT
		vm_started=$SECONDS
		run_suite build vm --log testlog-vm --setup vm --suite vm
		echo "VM suite: $((SECONDS - vm_started)) s"
	) >"$vm_out" 2>&1 &
	vm_pid=$!
	run_suite build build --timeout-multiplier 2
	# The phases after it share the CPU with the VM evenly rather than
	# starve it.
	suite_nice=10
fi
if [ "$asan_ok" -eq 1 ]; then
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:print_summary=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:print_summary=1} \
		run_suite build-asan asan --suite unit --timeout-multiplier 3
fi
if [ "$fuzz_ok" -eq 1 ]; then
	run_suite build-fuzz fuzz --suite fuzz
fi
if [ -n "$vm_pid" ]; then
	wait "$vm_pid"
	vm_rc=$?
	vm_pid=
	cat "$vm_out"
	# The phase's log and its failed steps, as if it had run here.
	logs+=("vm=build/meson-logs/testlog-vm.json")
	while IFS= read -r step; do
		failed_steps+=(--failed-step "$step")
	done <"$vm_steps"
	[ "$vm_rc" -eq 0 ] || step_failed "the VM suite's phase exited with status $vm_rc"
	rm -f "$vm_out" "$vm_steps"
fi

finish
