#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: --result-json. The supervisor (host root when rootful) writes
# the result at the end into a directory the workload shares (here the
# workspace, as in the README's `--result-json run.json`), after the
# workload could plant anything there. Planted symlinks at the names the
# old code wrote through (PATH.tmp.PID), a final name swapped for a
# symlink, the parent directory swapped for a symlink: a host file outside
# every bind stays unchanged, and the result lands in the workspace. A
# final name that already is a symlink is refused before anything runs.
. "$(dirname "$0")/seclib.sh"

# The host file every attempt aims at, outside every bind: rootful a
# root-owned 0600 file in a root-owned 0700 directory; rootless a file of
# the caller (which cordon, running as the caller, could write itself).
# Sets VICTIM_DIR, VICTIM and BEFORE.
make_victim() {
	VICTIM_DIR=$CASE_DIR/host
	VICTIM=$VICTIM_DIR/secret
	mk_dir "$VICTIM_DIR"
	chmod 0700 "$VICTIM_DIR"
	echo "victim-marker" >"$VICTIM"
	chmod 0600 "$VICTIM"
	[ "$MODE" = rootful ] || chown "$TEST_UID:$TEST_GID" "$VICTIM"
	BEFORE=$(host_snap "$VICTIM_DIR")
}

# result_ok FILE EXIT: FILE is a regular file (not a symlink) owned by the
# mode's user holding the result object of a run that exited EXIT.
result_ok() {
	local file=$1 want=$2 bad
	if [ -L "$file" ] || [ ! -f "$file" ]; then
		fail "expected the result at $file as a regular file"
		return 1
	fi
	[ "$(stat -c %u "$file")" = "$(mode_uid)" ] ||
		fail "expected $file owned by uid $(mode_uid), got $(stat -c %u "$file")"
	bad=$("$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError as e:
    print("not valid JSON: %s" % e)
    sys.exit(0)
if r.get("exit_code") != int(sys.argv[2]) or "error" in r:
    print("expected exit_code %s and no error, got %r" % (sys.argv[2], r))
' "$file" "$want" 2>&1)
	[ -z "$bad" ] || fail "result $file: $bad"
}

# No temp file of cordon's (or the old PATH.tmp.PID) left in DIR.
no_temp_left() {
	local f
	for f in "$1"/.cordon-result-* "$1"/*.tmp.*; do
		[ -e "$f" ] || continue
		[ -L "$f" ] && continue # the workload's own plants
		fail "a temp file was left behind: $f"
	done
}

# Run the workload SCRIPT (sh -c SCRIPT sh VICTIM) in the background with
# --workspace WS and --result-json RESULT, hand it the supervisor's host
# pid in /workspace/pid (the pid the old code put in its temp name), and
# wait for it.
run_with_pid() {
	local result=$1 script=$2 sup=
	crun_bg --workspace "$WS" --result-json "$result" -- sh -c "
		while [ ! -s /workspace/pid ]; do sleep 0.05; done
		$script" sh "$VICTIM"
	wait_until "$WAIT_LIMIT" eval 'sup=$(supervisor_of "$ID")' ||
		fail "the supervisor of $ID was not found"
	echo "${sup:-0}" >"$WS/pid.new"
	mv "$WS/pid.new" "$WS/pid"
	wait_bg_for "$WAIT_LIMIT"
}

# Symlinks to the host file at RESULT.tmp.N for the supervisor's pid and
# its neighbours: the old code opened RESULT.tmp.PID with O_CREAT|O_TRUNC
# and wrote the result through them.
t_planted_temp_links() {
	make_victim
	run_with_pid "$WS/run.json" '
		p=$(cat /workspace/pid)
		i=$((p - 8))
		while [ $i -le $((p + 8)) ]; do
			ln -s "$1" /workspace/run.json.tmp.$i || exit 9
			i=$((i + 1))
		done'
	expect_rc 0
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"
	result_ok "$WS/run.json" 0
	no_temp_left "$WS"
}

# The final name made a symlink to the host file (and to its directory)
# by the workload: the rename replaces the symlink, never writes through.
t_final_name_swapped() {
	make_victim
	echo stale >"$WS/run.json"
	echo stale >"$WS/dir.json"
	crun --workspace "$WS" --result-json "$WS/run.json" -- sh -c '
		rm /workspace/run.json && ln -s "$1" /workspace/run.json' sh "$VICTIM"
	expect_rc 0
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"
	result_ok "$WS/run.json" 0

	crun --workspace "$WS" --result-json "$WS/dir.json" -- sh -c '
		rm /workspace/dir.json && ln -s "${1%/*}" /workspace/dir.json' sh "$VICTIM"
	expect_rc 0
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"
	result_ok "$WS/dir.json" 0
	no_temp_left "$WS"
}

# The result's directory renamed away and replaced by a symlink to the
# host directory: the directory opened when the flag was read is the one
# written, wherever the workload moved it.
t_parent_dir_swapped() {
	make_victim
	mk_dir "$WS/out"
	crun --workspace "$WS" --result-json "$WS/out/run.json" -- sh -c '
		mv /workspace/out /workspace/out.moved && ln -s "${1%/*}" /workspace/out' sh "$VICTIM"
	expect_rc 0
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"
	result_ok "$WS/out.moved/run.json" 0
	no_temp_left "$WS/out.moved"
}

# The final name made a directory: nothing to replace; cordon says so
# (exit 125, the path named) and leaves no temp file.
t_final_name_dir() {
	make_victim
	crun --workspace "$WS" --result-json "$WS/run.json" -- mkdir /workspace/run.json
	expect_cordon_error RESULT run.json
	[ -d "$WS/run.json" ] || fail "expected the workload's directory to stay"
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"
	no_temp_left "$WS"
}

# A final name that already is a symlink (planted by an earlier run, say)
# or not a regular file is refused when the flag is read: exit 125 naming
# it, nothing runs, the link's target untouched.
t_refuse_existing_link() {
	make_victim
	ln -s "$VICTIM" "$WS/run.json"
	crun --result-json run.json -- touch /workspace/ran
	expect_cordon_error PATH run.json
	expect_err_has "symbolic link"
	[ ! -e "$WS/ran" ] || fail "expected nothing to run"
	[ -L "$WS/run.json" ] || fail "expected the symlink to stay"
	expect_host_unchanged "$BEFORE" "$VICTIM_DIR"

	ln -s /nonexistent "$WS/dangling.json"
	crun --result-json "$WS/dangling.json" -- touch /workspace/ran
	expect_cordon_error PATH dangling.json
	[ ! -e "$WS/ran" ] || fail "expected nothing to run"

	mkfifo "$WS/fifo.json"
	crun --result-json fifo.json -- touch /workspace/ran
	expect_cordon_error PATH fifo.json
	[ ! -e "$WS/ran" ] || fail "expected nothing to run"
}

sec_each "--result-json: planted RESULT.tmp.PID symlinks are not written through" t_planted_temp_links
sec_each "--result-json: a final name swapped for a symlink is replaced, its target untouched" t_final_name_swapped
sec_each "--result-json: a parent directory swapped for a symlink does not move the write" t_parent_dir_swapped
sec_each "--result-json: a final name made a directory: exit 125, no temp left" t_final_name_dir
sec_each "--result-json: an existing symlink or special file is refused before the run" t_refuse_existing_link
done_testing
