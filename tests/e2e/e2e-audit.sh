#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the audit log (docs/audit.md). Every line any case makes is
# validated against docs/audit.schema.json (python3-jsonschema) by
# audit-check.py, which also fails on any text that must never be in it:
# an environment value, a token the redaction rules hide. The log's file
# is opened as --log is (no planted link or special file receives it), it
# has a size cap, and a state directory's log is kept at the end.
. "$(dirname "$0")/oci-lib.sh"

AUDIT_SCHEMA=${AUDIT_SCHEMA:-$(dirname "$0")/../../docs/audit.schema.json}
AUDIT_CHECK=$(dirname "$0")/audit-check.py

# Tokens of the shapes the default rules hide (made up, never real).
TOK_AWS=AKIAABCDEFGHIJKLMNOP
TOK_GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789
TOK_PAT=github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz
TOK_SLACK=xoxb-123456789012-abcdefghijkl
TOK_BEARER=eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.bearerpart
TOK_PASS=pa55w0rd-do-not-log
TOK_TOKEN=t0ken-do-not-log
TOK_FLAG=flag-secret-do-not-log
ENV_SECRET=env-value-do-not-log

# audit_check FILE [--forbid TEXT]...: validates; EVENTS gets the event names.
audit_check() {
	local file=$1
	shift
	EVENTS=$("$PYTHON" "$AUDIT_CHECK" "$AUDIT_SCHEMA" "$file" "$@" 2>"$CASE_DIR/check.err")
	local rc=$?
	[ "$rc" -eq 0 ] && return 0
	_fail_raw "audit log $file: $(cat "$CASE_DIR/check.err")" "$(head -c 4000 "$file" | _indent)"
	return 1
}

# The audit file of this case, made by its user (so a rootless run may append to it).
audit_file() {
	AUDIT=$CASE_DIR/audit.jsonl
}

t_events_and_secrets() {
	audit_file
	crun --audit "$AUDIT" --env "SECRET=$ENV_SECRET" --env-pass HOME -- \
		sh -c 'echo out; echo err >&2; exit 3' "$TOK_AWS" "$TOK_GH" "$TOK_PAT" "$TOK_SLACK" \
		"Authorization: Bearer $TOK_BEARER" "password=$TOK_PASS" "https://u:$TOK_PASS@h/x" \
		"--token=$TOK_TOKEN" --password "$TOK_FLAG" \
		"-----BEGIN OPENSSH PRIVATE KEY-----b3BlbnNzaC1rZXktdjEAAAAA"
	expect_rc 3 || return
	check "the log exists, 0600" test "$(stat -c %a "$AUDIT")" = 600 || return
	audit_check "$AUDIT" --forbid "$ENV_SECRET" --forbid "$TOK_AWS" --forbid "$TOK_GH" \
		--forbid "$TOK_PAT" --forbid "$TOK_SLACK" --forbid "$TOK_BEARER" --forbid "$TOK_PASS" \
		--forbid "$TOK_TOKEN" --forbid "$TOK_FLAG" --forbid b3BlbnNzaC1rZXktdjEAAAAA || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || { fail "events: $EVENTS"; return; }
	grep -q '"env_keys":\["SECRET",' "$AUDIT" || { fail "env key SECRET not in create"; return; }
	grep -q "\"id\":\"$ID\"" "$AUDIT" || { fail "the id is not in the log"; return; }
	grep -q '"exit_code":3,' "$AUDIT" || { fail "exit_code 3 not in exec"; return; }
	grep -q '"argv":\["sh","-c","echo out; echo err >&2; exit 3","\[REDACTED\]"' "$AUDIT" ||
		fail "argv not redacted as expected: $(grep '"exec"' "$AUDIT")"
}

t_counted_output_and_timeout() {
	audit_file
	crun --audit "$AUDIT" --output-max 4 --timeout 1 --kill-after 1 -- \
		sh -c 'echo 0123456789; exec sleep 30'
	expect_rc 124 || return
	audit_check "$AUDIT" || return
	grep -q '"timed_out":true' "$AUDIT" || { fail "timed_out not true"; return; }
	grep -q '"truncated":true' "$AUDIT" || { fail "truncated not true"; return; }
	# What the workload wrote, of which 4 bytes were passed on.
	grep -q '"stdout_bytes":11,' "$AUDIT" || fail "stdout_bytes not 11: $(grep exec "$AUDIT")"
}

t_custom_redact() {
	audit_file
	crun --audit "$AUDIT" --audit-redact 'corp-[0-9]{6}' -- echo id=corp-123456 ok
	expect_rc 0 || return
	audit_check "$AUDIT" --forbid corp-123456 || return
	grep -q '"id=\[REDACTED\]","ok"' "$AUDIT" || fail "custom rule not applied"
	crun --audit "$AUDIT" --audit-redact 'a(' -- true
	expect_cordon_error USAGE audit-redact
}

# Control bytes, quotes, backslashes and bytes that are not UTF-8 in an argv: one valid line.
t_hostile_bytes() {
	audit_file
	crun --audit "$AUDIT" -- echo $'q"uo\\te\n\r\t\x01\x1b[31m' $'\xff\xfe\xc0\x80' $'\xed\xa0\x80' \
		'}{"event":"create"}'
	expect_rc 0 || return
	audit_check "$AUDIT" || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || fail "events: $EVENTS"
}

# The env, and a default log kept in the audit directory at the end.
t_env_and_keep() {
	local keep=$CASE_DIR/kept f
	mk_dir "$keep"
	audit_file
	XENV=("CORDON_AUDIT=$AUDIT")
	crun -- true
	expect_rc 0 || return
	audit_check "$AUDIT" || return
	XENV=("CORDON_AUDIT_DIR=$keep")
	crun --env "SECRET=$ENV_SECRET" -- true
	expect_rc 0 || return
	f=$(find "$keep" -name "$ID-*.jsonl")
	[ -n "$f" ] || { fail "no $ID-*.jsonl kept in $keep"; return; }
	audit_check "$f" --forbid "$ENV_SECRET" || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || fail "events: $EVENTS"
	XENV=("CORDON_AUDIT=none" "CORDON_AUDIT_DIR=$keep")
	crun -- true
	expect_rc 0 || return
	[ -z "$(find "$keep" -name "$ID-*")" ] || fail "CORDON_AUDIT=none still wrote a log"
}

# The audit directory where the workload can write (the workspace holds it,
# a writable bind does): host root walks it by name at the end, so the
# workload could redirect that write or rewrite other runs' kept logs.
# Refused before anything is made; a read-only bind keeps the log.
t_keep_dir_shared() {
	local f
	XENV=("CORDON_AUDIT_DIR=$WS/logs/kept")
	crun -- true
	expect_cordon_error AUDIT "the workspace $WS holds the audit directory $WS/logs/kept" ||
		return
	check "nothing made in the workspace" test ! -e "$WS/logs" || return
	XENV=()
	mk_dir "$CASE_DIR/rw/deep"
	crun --bind "$CASE_DIR/rw:/mnt:rw" --audit-dir "$CASE_DIR/rw/deep/kept" -- true
	expect_cordon_error AUDIT "the writable --bind $CASE_DIR/rw holds the audit" || return
	check "nothing made below the bind" test ! -e "$CASE_DIR/rw/deep/kept" || return
	crun --bind "$CASE_DIR/rw:/mnt:ro" --audit-dir "$CASE_DIR/rw/deep/kept" -- true
	expect_rc 0 || return
	f=$(find "$CASE_DIR/rw/deep/kept" -name "$ID-*.jsonl")
	[ -n "$f" ] || { fail "no $ID-*.jsonl kept below the read-only bind"; return; }
	audit_check "$f"
}

# Planted links and special files never receive the log; nothing is created.
t_hostile_paths() {
	local target=$CASE_DIR/target
	mk_dir "$CASE_DIR/d"
	: >"$target"
	ln -s "$target" "$CASE_DIR/d/link"
	crun --audit "$CASE_DIR/d/link" -- true
	expect_cordon_error AUDIT "not a regular file" || return
	check "the link's target is untouched" test ! -s "$target" || return
	mkfifo "$CASE_DIR/d/fifo"
	crun --audit "$CASE_DIR/d/fifo" -- true
	expect_cordon_error AUDIT fifo || return
	crun --audit /dev/null -- true
	expect_cordon_error AUDIT "not a regular file" || return
	crun --audit "$CASE_DIR/d" -- true
	expect_cordon_error AUDIT "--audit" || return
	crun --audit "$CASE_DIR/missing/dir/a.jsonl" -- true
	expect_cordon_error AUDIT "--audit" || return
	# A third user's file where everyone can add names (sticky, as /tmp):
	# it would read, rewrite or cut host root's log (fs.protected_regular's
	# rule, which the kernel applies only to an O_CREAT open).
	mkdir -m 1777 "$CASE_DIR/sticky"
	: >"$CASE_DIR/sticky/a.jsonl"
	chmod 666 "$CASE_DIR/sticky/a.jsonl"
	chown "$(other_uid)" "$CASE_DIR/sticky/a.jsonl"
	crun --audit "$CASE_DIR/sticky/a.jsonl" -- true
	expect_cordon_error AUDIT "belongs to uid $(other_uid), neither the caller nor the directory's owner" || return
	check "the planted file is untouched" test ! -s "$CASE_DIR/sticky/a.jsonl" || return
	# The caller's own, open to others (anyone who could move it there
	# would read the log): refused; 0600, used.
	chown "$(mode_uid)" "$CASE_DIR/sticky/a.jsonl"
	chmod 640 "$CASE_DIR/sticky/a.jsonl"
	crun --audit "$CASE_DIR/sticky/a.jsonl" -- true
	expect_cordon_error AUDIT "'a.jsonl' is open to others (mode 0640)" || return
	check "the file open to others is untouched" test ! -s "$CASE_DIR/sticky/a.jsonl" || return
	chmod 600 "$CASE_DIR/sticky/a.jsonl"
	crun --audit "$CASE_DIR/sticky/a.jsonl" -- true
	expect_rc 0 || return
	audit_check "$CASE_DIR/sticky/a.jsonl" || return
	crun --audit-max 10 -- true
	expect_cordon_error USAGE audit-max || return
	# Where the workload can write (the workspace, below a writable bind): it
	# could rewrite its own log.
	crun --audit "$WS/a.jsonl" -- true
	expect_cordon_error AUDIT "inside the workspace or a writable bind" || return
	check "the refused log was not left" test ! -e "$WS/a.jsonl" || return
	mk_dir "$CASE_DIR/rw/deep"
	crun --bind "$CASE_DIR/rw:/mnt:rw" --audit "$CASE_DIR/rw/deep/a.jsonl" -- true
	expect_cordon_error AUDIT "inside the workspace or a writable bind" || return
	check "the refused log was not left" test ! -e "$CASE_DIR/rw/deep/a.jsonl" || return
	crun --bind "$CASE_DIR/rw:/mnt:ro" --audit "$CASE_DIR/rw/deep/a.jsonl" -- true
	expect_rc 0
}

# blocked_on_stderr STRING: cordon, with STRING on its command line, is in
# write(2, ...) (x86_64: system call 1), its stderr a pipe nobody reads.
blocked_on_stderr() {
	local line pid
	while read -r line; do
		pid=${line%%:*}
		[ "$(_argv0_of "$pid")" = "$CORDON" ] || continue
		[[ "$(cat "/proc/$pid/syscall" 2>/dev/null)" == "1 0x2 "* ]] && return 0
	done < <(procs_matching "$1")
	return 1
}

# release_b: t_one_new_log_two_runs's B goes on; waits for it.
release_b() {
	touch "$CASE_DIR/b.rc.go"
	wait
}

# Two runs name one log that does not exist yet: the first to begin gives
# it its name, the other then finds that file and appends to it (both had
# made theirs, unnamed, when they read the flag). B is held on its warning
# (stderr a full pipe) after it read --audit, until A has run; then B
# goes on. One file, both runs' events; nothing else in the directory.
# hold_b ARGS...: cordon ARGS in the background (B), its stderr a full
# pipe, until release_b; its exit status then in $CASE_DIR/b.rc, the
# end of its stderr in $CASE_DIR/b.rc.err.
hold_b() {
	_cordon_argv "$@"
	"$PYTHON" - "$CASE_DIR/b.rc" "${_argv[@]}" <<'EOF' &
import os, subprocess, sys, time
r, w = os.pipe()
os.set_blocking(w, False)
try:
    while True:
        os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
os.set_blocking(w, True)
b = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w)
os.close(w)
open(sys.argv[1] + ".held", "w").close()
while not os.path.exists(sys.argv[1] + ".go"):
    time.sleep(0.05)
err = b""
while True:
    chunk = os.read(r, 65536)
    if not chunk:
        break
    err = (err + chunk.lstrip(b"x"))[-4096:]
open(sys.argv[1] + ".err", "wb").write(err)
open(sys.argv[1], "w").write(str(b.wait()))
EOF
}

# held_b LOG RUN-FLAGS...: B (named $B) is `cordon run RUN-FLAGS --audit
# LOG`, held (hold_b) once it has read its flags: --seccomp unconfined's
# warning blocks it, its log made but not named. 1 when it never got there.
held_b() {
	local log=$1
	shift
	next_id
	B=$ID-b
	hold_b run --name "$B" "$@" --seccomp unconfined --audit "$log" "$ROOTFS" -- true
	wait_until "$WAIT_LIMIT" blocked_on_stderr "--name $B " && return 0
	fail "B never blocked on its warning"
	release_b
	return 1
}

# b_refused TEXT: B, released, exited 125 saying TEXT.
b_refused() {
	[ "$(cat "$CASE_DIR/b.rc" 2>/dev/null)" = 125 ] ||
		{ fail "B exited $(cat "$CASE_DIR/b.rc" 2>/dev/null), not 125: $(cat "$CASE_DIR/b.rc.err")"; return 1; }
	grep -qF -- "$1" "$CASE_DIR/b.rc.err" || { fail "B's error: $(cat "$CASE_DIR/b.rc.err")"; return 1; }
}

t_one_new_log_two_runs() {
	local log=$CASE_DIR/logs/a.jsonl B
	setup_case
	mk_dir "$CASE_DIR/logs"
	held_b "$log" --no-workspace || return
	check "B's log has no name yet" test ! -e "$log" || { release_b; return; }
	crun --no-workspace --audit "$log" -- true
	expect_rc 0 || { release_b; return; }
	release_b
	[ -s "$CASE_DIR/b.rc" ] || { fail "B never ended"; return; }
	[ "$(cat "$CASE_DIR/b.rc")" = 0 ] || { fail "B exited $(cat "$CASE_DIR/b.rc")"; return; }
	audit_check "$log" || return
	[ "$(grep -c '"event":"create"' "$log")" = 2 ] || { fail "not both runs' create in the log: $EVENTS"; return; }
	grep -q "\"$B\"" "$log" || { fail "B's events are not in the log"; return; }
	[ "$(ls -A "$CASE_DIR/logs")" = a.jsonl ] || fail "more than the log: $(ls -A "$CASE_DIR/logs")"
}

# A file put at the new log's name by another user between the flag and
# the sandbox's start (B held there, as above) is not taken for another
# command's log: B is refused and writes nothing there.
t_log_made_meanwhile() {
	local log=$CASE_DIR/logs/a.jsonl B
	setup_case
	mk_dir "$CASE_DIR/logs"
	held_b "$log" --no-workspace || return
	: >"$log"
	chmod 666 "$log"
	chown "$(other_uid)" "$log"
	release_b
	b_refused "CORDON_E_AUDIT: --audit $log: made meanwhile by uid $(other_uid)" || return
	check "the other user's file is untouched" test ! -s "$log"
}

# A command refused (a bad input, a failed set-up) or that runs nothing
# (--help, --print-profile) leaves no log: run, a session and an OCI
# container, by flag and by CORDON_AUDIT (the file made has no name until
# the sandbox begins). A file that was there before stays as it was, empty
# or not; a log overridden by a second --audit leaves nothing; a run's
# log stays.
t_refused_leaves_no_log() {
	local log=$CASE_DIR/logs/a.jsonl old=$CASE_DIR/logs/old.jsonl id=$CASE_ID-r
	setup_case
	mk_dir "$CASE_DIR/logs"
	crun --audit "$log" --net-allow '???' -- true
	expect_cordon_error NET_POLICY "allowlist entry" || return
	check "run, a bad --net-allow: no log left" test ! -e "$log" || return
	cordon run --no-workspace --audit "$log" "$CASE_DIR/no-rootfs" -- true
	expect_cordon_error ROOTFS "no-rootfs" || return
	check "run, a missing rootfs: no log left" test ! -e "$log" || return
	cordon run --audit "$log" --help
	expect_rc 0 || return
	check "run --help: no log left" test ! -e "$log" || return
	cordon run --no-workspace --audit "$log" --print-profile "$ROOTFS" -- true
	expect_rc 0 || return
	check "run --print-profile: no log left" test ! -e "$log" || return
	XENV=("CORDON_AUDIT=$log")
	oc create --no-workspace --name 'bad name!' "$ROOTFS"
	expect_cordon_error USAGE "--name" || return
	check "a session, a bad --name: no log left" test ! -e "$log" || return
	mk_bundle b true || return
	cfg 'c["process"]["args"] = 5' || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 125 || return
	check "an OCI container, a bad config: no log left" test ! -e "$log" || return
	XENV=()
	printf 'kept\n' >"$old"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$old"
	crun --audit "$old" --net-allow '???' -- true
	expect_rc 125 || return
	check "a log that was there stays as it was" test "$(cat "$old")" = kept || return
	: >"$old"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$old"
	crun --audit "$old" --net-allow '???' -- true
	expect_rc 125 || return
	check "an empty log that was there stays" test -e "$old" || return
	crun --audit "$log" --audit "$CASE_DIR/logs/b.jsonl" -- true
	expect_rc 0 || return
	check "a log overridden by a second --audit is taken back" test ! -e "$log" || return
	audit_check "$CASE_DIR/logs/b.jsonl" || return
}

# The new log's directory, moved into the workspace between the flag and
# the sandbox's start (B held there) and made again at its path: the
# check before the name is given looks at the directory the name goes
# in, not at the path again, and refuses it.
t_log_dir_moved_into_workspace() {
	local log=$CASE_DIR/logs/a.jsonl ws=$CASE_DIR/ws2 B
	setup_case
	mk_dir "$CASE_DIR/logs" "$ws"
	held_b "$log" --workspace "$ws" || return
	mv "$CASE_DIR/logs" "$ws/logs"
	mk_dir "$CASE_DIR/logs"
	release_b
	b_refused "CORDON_E_AUDIT: --audit $log: inside the workspace" || return
	check "no log in the workspace" test -z "$(ls -A "$ws/logs")" || return
	check "no log at the path" test -z "$(ls -A "$CASE_DIR/logs")"
}

# A command refused once its new log is open, before its sandbox begins,
# leaves no log either: the log's filesystem full (the create event
# cannot be written), the state root without inodes left (the count of
# dropped lines, then the log's record, cannot be made there).
t_refused_late_leaves_no_log() {
	local full=$CASE_DIR/full tiny=$CASE_DIR/tiny k
	setup_case
	mk_dir "$CASE_DIR/logs" "$full" "$tiny"
	mount -t tmpfs -o "size=4k,mode=755,uid=$(mode_uid)" cordon-e2e-full "$full" ||
		{ fail "mounting a tmpfs at $full"; return; }
	head -c 4096 /dev/zero >"$full/filler" 2>/dev/null
	crun --no-workspace --audit "$full/a.jsonl" -- true
	umount "$full"
	expect_cordon_error AUDIT "audit: writing: No space left on device" || return
	check "its filesystem full: no log left" test ! -e "$full/a.jsonl" || return
	for k in 3 4; do
		mount -t tmpfs -o "nr_inodes=$k,mode=700,uid=$(mode_uid)" cordon-e2e-tiny "$tiny" ||
			{ fail "mounting a tmpfs at $tiny"; return; }
		next_id
		cordon --root "$tiny" run --name "$ID" --no-workspace --audit "$CASE_DIR/logs/k$k.jsonl" \
			"$ROOTFS" -- true
		umount "$tiny"
		expect_cordon_error AUDIT "No space left on device" || return
		check "a state root of $k inodes: no log left" test ! -e "$CASE_DIR/logs/k$k.jsonl" || return
	done
}

# The log where an OCI container's workload can write: its rootfs (when
# root.readonly is false, or in a host mount below it), a bind mount of
# config.json's mounts[] unless read-only all through ("rro": "ro" leaves
# the submounts writable). Refused before anything of the container
# exists; an "rro" bind keeps it. A log with a second name (a hard link
# in the workspace) is refused too: no walk up from its own name finds it.
t_oci_writable_paths() {
	local rootfs=$CASE_DIR/rootfs id=$CASE_ID-w opts
	setup_case
	copy_rootfs "$rootfs" || return
	mk_dir "$rootfs/var/log" "$rootfs/logs" "$CASE_DIR/logs/deep"
	mk_bundle b true || return
	cfg 'c["root"] = {"path": sys.argv[1], "readonly": False}' "$rootfs" || return
	XENV=("CORDON_AUDIT=$rootfs/var/log/a.jsonl")
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error AUDIT "inside the workspace or a writable bind, mount or rootfs" || return
	check "nothing of the container exists" root_empty || return
	cfg 'c["root"]["readonly"] = True' || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error AUDIT "a writable bind, mount or rootfs" || return
	XENV=("CORDON_AUDIT=$CASE_DIR/logs/deep/a.jsonl")
	for opts in '"rbind", "rw"' '"bind"' '"rbind", "ro"' '"bind", "ro"'; do
		cfg 'c["mounts"].append({"destination": "/logs", "type": "bind",
			"source": sys.argv[1], "options": json.loads("[" + sys.argv[2] + "]")})' \
			"$CASE_DIR/logs" "$opts" || return
		oc create -b "$BUNDLE" "$id"
		expect_cordon_error AUDIT "a writable bind, mount or rootfs" || return
		check "nothing of the container exists ($opts)" root_empty || return
		cfg 'c["mounts"].pop()' || return
	done
	cfg 'c["mounts"].append({"destination": "/logs", "type": "bind",
		"source": sys.argv[1], "options": ["rbind", "ro", "rro"]})' "$CASE_DIR/logs" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc delete --force "$id"
	expect_rc 0 || return
	XENV=()
	end_case
}

t_hard_link_refused() {
	audit_file
	: >"$AUDIT"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$AUDIT"
	ln "$AUDIT" "$WS/planted.jsonl"
	crun --audit "$AUDIT" -- true
	expect_cordon_error AUDIT "2 names" || return
	check "nothing written" test ! -s "$AUDIT" || return
	XENV=("CORDON_AUDIT=$AUDIT")
	crun -- true
	expect_cordon_error AUDIT "2 names" || return
	XENV=()
	rm "$WS/planted.jsonl"
	crun --audit "$AUDIT" -- true
	expect_rc 0
}

# The cap: an exec whose line passes the callers' share is written as a
# minimal record (argv empty, argc, the digest, the outcome) in the
# reserve made for them; the cleanup still fits, nothing is dropped.
t_cap() {
	local big
	audit_file
	big=$(head -c 1000 /dev/zero | tr '\0' x)
	crun --audit "$AUDIT" --audit-max 4096 -- echo "$big" "$big" "$big" "$big" >/dev/null
	expect_rc 0 || return
	audit_check "$AUDIT" --max-bytes 4096 || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || { fail "events: $EVENTS"; return; }
	grep -q '"argv":\[\],"argv_truncated":true,"argc":5,' "$AUDIT" ||
		{ fail "no minimal record: $(grep '"exec"' "$AUDIT")"; return; }
	grep -q '"dropped":{"cap":0,' "$AUDIT" || fail "a line was dropped: $(tail -1 "$AUDIT")"
}

# exec_field FILE N KEY: KEY of the Nth exec event of FILE (JSON).
exec_field() {
	"$PYTHON" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["event"] == "exec"]
print(json.dumps(e[int(sys.argv[2])][sys.argv[3]]))' "$@"
}

# An argv whose line would pass 64 KiB (70 words of 1000 bytes) is cut,
# never dropped: the exec event of a run and of a session's exec are
# there, argv_truncated, argc the whole count.
t_argv_cut() {
	local pad args=() id=$CASE_ID-a i
	setup_case
	audit_file
	pad=$(head -c 1000 /dev/zero | tr '\0' A)
	for i in $(seq 70); do args+=("$pad"); done
	crun --audit "$AUDIT" -- sh -c 'exit 7' "${args[@]}"
	expect_rc 7 || return
	audit_check "$AUDIT" || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || { fail "run: events: $EVENTS"; return; }
	[ "$(exec_field "$AUDIT" 0 argv_truncated) $(exec_field "$AUDIT" 0 argc) $(exec_field "$AUDIT" 0 exit_code)" = "true 73 7" ] ||
		{ fail "run: the exec event: $(grep '"exec"' "$AUDIT" | cut -c1-300)"; return; }
	: >"$AUDIT"
	oc create --owner none --name "$id" --no-workspace --audit "$AUDIT" "$ROOTFS"
	expect_rc 0 || return
	oc exec "$id" -- sh -c 'exit 6' "${args[@]}"
	expect_rc 6 || { oc rm "$id"; return; }
	oc rm "$id"
	expect_rc 0 || return
	audit_check "$AUDIT" || return
	[ "$(exec_field "$AUDIT" 0 argv_truncated) $(exec_field "$AUDIT" 0 argc) $(exec_field "$AUDIT" 0 exit_code)" = "true 73 6" ] ||
		{ fail "session: the exec event: $(grep '"exec"' "$AUDIT" | cut -c1-300)"; return; }
	end_case
}

# A session at its cap: every cordon exec leaves a trace, its record, a
# minimal one, or a count in the session's cleanup (an exec's drop was
# counted in its own process alone, and lost).
t_session_cap() {
	local id=$CASE_ID-c i traces
	setup_case
	audit_file
	oc create --owner none --name "$id" --no-workspace --audit "$AUDIT" --audit-max 4096 "$ROOTFS"
	expect_rc 0 || return
	for i in $(seq 30); do
		oc exec "$id" -- true "command-$i"
		expect_rc 0 || { oc rm "$id"; return; }
	done
	oc rm "$id"
	expect_rc 0 || return
	audit_check "$AUDIT" --max-bytes 4096 || return
	[ "${EVENTS##*$'\n'}" = cleanup ] || { fail "no cleanup last: $EVENTS"; return; }
	# The execs' records (argc 2) and the lines dropped, of which the
	# session's own end (an exec of argc 0) may be one.
	traces=$("$PYTHON" -c 'import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
execs = [e for e in ls if e["event"] == "exec" and e["argc"] == 2]
print(len(execs) + ls[-1]["dropped"]["cap"])' "$AUDIT")
	if [ "$traces" -lt 30 ] || [ "$traces" -gt 31 ]; then
		fail "30 execs, $traces traces: $(cut -c1-160 "$AUDIT")"
	fi
	end_case
}

# A session whose monitor was SIGKILLed (nothing of cordon ran its end):
# sweep keeps its state directory's log in the audit directory, as rm
# does, ended by a cleanup event that says why; the log validates.
t_sweep_keeps_log() {
	local keep=$CASE_DIR/kept id=$CASE_ID-k monitor f
	setup_case
	mk_dir "$keep"
	XENV=("CORDON_AUDIT_DIR=$keep")
	oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	expect_rc 0 || return
	oc exec "$id" -- true
	expect_rc 0 || { oc rm "$id"; return; }
	XENV=()
	monitor=$(monitor_of "$id")
	kill -9 "$monitor"
	wait_until "$WAIT_LIMIT" no_procs_matching "--name $id " || fail "the monitor's processes outlived it"
	wait_until "$WAIT_LIMIT" state_procs_gone "$id" || fail "the sandbox's init outlived its monitor"
	oc sweep
	expect_rc 0 || return
	expect_out_has "removed $id: its supervisor (pid $monitor) is gone" || return
	check "sweep removed the state" root_empty || return
	f=$(find "$keep" -name "$id-*.jsonl")
	[ -n "$f" ] || { fail "no $id-*.jsonl kept in $keep: $(ls -A "$keep")"; return; }
	audit_check "$f" || return
	[ "$EVENTS" = $'create\nexec\ncleanup' ] || { fail "events: $EVENTS"; return; }
	grep -q "\"failure\":\"its supervisor (pid $monitor) is gone\"" "$f" ||
		fail "the cleanup does not say why: $(tail -1 "$f")"
}

# A session (cordon create ROOTFS) reads CORDON_AUDIT and CORDON_AUDIT_DIR
# as run does: the file named gets every event, none turns the log off,
# the directory named keeps the state directory's log at rm.
t_session_env() {
	local keep=$CASE_DIR/kept id=$CASE_ID-s f
	setup_case
	mk_dir "$keep"
	audit_file
	XENV=("CORDON_AUDIT=$AUDIT" "CORDON_AUDIT_DIR=$keep")
	oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	expect_rc 0 || return
	XENV=()
	oc exec "$id" -- true
	expect_rc 0 || { oc rm "$id"; return; }
	oc rm "$id"
	expect_rc 0 || return
	audit_check "$AUDIT" || return
	[ "$EVENTS" = $'create\nexec\nexec\ncleanup' ] || { fail "CORDON_AUDIT=FILE: events: $EVENTS"; return; }
	[ -z "$(ls -A "$keep")" ] || { fail "a log named by CORDON_AUDIT was kept too"; return; }
	XENV=("CORDON_AUDIT=none" "CORDON_AUDIT_DIR=$keep")
	oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	expect_rc 0 || return
	XENV=()
	check "CORDON_AUDIT=none: no audit record" test ! -e "$OROOT/$id/audit.json" ||
		{ oc rm "$id"; return; }
	oc exec "$id" -- true
	expect_rc 0 || { oc rm "$id"; return; }
	oc rm "$id"
	expect_rc 0 || return
	[ -z "$(ls -A "$keep")" ] || { fail "CORDON_AUDIT=none still kept a log"; return; }
	XENV=("CORDON_AUDIT_DIR=$keep")
	oc create --owner none --name "$id" --no-workspace "$ROOTFS"
	expect_rc 0 || return
	XENV=()
	oc exec "$id" -- true
	expect_rc 0 || { oc rm "$id"; return; }
	oc rm "$id"
	expect_rc 0 || return
	f=$(find "$keep" -name "$id-*.jsonl")
	[ -n "$f" ] || { fail "CORDON_AUDIT_DIR: no $id-*.jsonl kept in $keep"; return; }
	audit_check "$f" || return
	[ "$EVENTS" = $'create\nexec\nexec\ncleanup' ] || { fail "CORDON_AUDIT_DIR: events: $EVENTS"; return; }
	end_case
}

# cordon exec and delete append to the log the sandbox began with (an
# OCI container's, asked for with CORDON_AUDIT); one moved in its place
# is refused before the command runs, and delete still removes the
# sandbox.
t_exec_and_delete() {
	exec_and_delete "$CASE_ID-x"
	# A failure above leaves no container behind.
	[ ! -e "$OROOT/$CASE_ID-x" ] || { oc delete --force "$CASE_ID-x"; end_case; }
}

exec_and_delete() {
	local id=$1
	setup_case
	audit_file
	mk_bundle b sleep "$MARK" || return
	# Deleted whatever happens below.
	XENV=("CORDON_AUDIT=$AUDIT")
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	XENV=()
	# The monitor holds the log (made without a name) by its name now: no
	# holder shows it deleted, as a log that was unlinked would be.
	check "the monitor holds the log by its name" \
		test -n "$(find /proc/[0-9]*/fd -lname "$AUDIT" 2>/dev/null)" || return
	check "no holder shows the log deleted" \
		test -z "$(find /proc/[0-9]*/fd -lname "$AUDIT (deleted)" 2>/dev/null)" || return
	oc exec "$id" -- sh -c "echo password=$TOK_PASS; exit 5"
	expect_rc 5 || return
	oc exec --timeout 1 --kill-after 1 --output-max 3 "$id" -- sh -c 'echo 0123456789; exec sleep 30'
	expect_rc 124 || return
	audit_check "$AUDIT" --forbid "$TOK_PASS" || return
	[ "$EVENTS" = $'create\nexec\nexec' ] || { fail "events: $EVENTS"; return; }
	grep -q '"exit_code":5,' "$AUDIT" || { fail "the plain exec's status is not 5"; return; }
	grep -q '"timed_out":true' "$AUDIT" || { fail "the supervised exec did not time out"; return; }
	grep -q '"stdout_bytes":11,.*"truncated":true' "$AUDIT" || { fail "the supervised exec's output"; return; }
	# Another file at the log's name: refused, and nothing runs.
	mv "$AUDIT" "$AUDIT.moved"
	: >"$AUDIT"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$AUDIT"
	oc exec "$id" -- touch /dev/shm/ran
	expect_cordon_error AUDIT "no longer the file" || return
	oc exec "$id" -- test -e /dev/shm/ran
	expect_rc_not 0 "the refused exec ran" || return
	# No file at the name: refused, and none is left made there.
	rm -f "$AUDIT"
	oc exec "$id" -- true
	expect_cordon_error AUDIT "no longer the file" || return
	check "the refused exec made no log" test ! -e "$AUDIT" || return
	mv "$AUDIT.moved" "$AUDIT"
	oc delete --force "$id"
	expect_rc 0 || return
	audit_check "$AUDIT" || return
	[ "${EVENTS##*$'\n'}" = cleanup ] || fail "no cleanup at delete: $EVENTS"
	end_case
}

each_mode "events, env keys only, redacted argv" t_events_and_secrets
each_mode "cordon exec and delete append; a replaced log is refused" t_exec_and_delete
each_mode "output counted, timeout" t_counted_output_and_timeout
each_mode "--audit-redact" t_custom_redact
each_mode "hostile bytes in argv" t_hostile_bytes
each_mode "CORDON_AUDIT, the kept default log" t_env_and_keep
each_mode "planted links, fifos, devices refused" t_hostile_paths
each_mode "a refused command leaves no log it made" t_refused_leaves_no_log
each_mode "two commands on one new log: one file, both runs in it" t_one_new_log_two_runs
each_mode "a file another user put at the new log's name meanwhile is refused" t_log_made_meanwhile
each_mode "a new log's directory moved into the workspace meanwhile is refused" t_log_dir_moved_into_workspace
each_mode "refused once its log is open (no space, no inodes): no log left" t_refused_late_leaves_no_log
each_mode "an audit directory the workload can write is refused" t_keep_dir_shared
each_mode "size cap: a minimal exec record" t_cap
each_mode "an argv past a line's size is cut, not dropped" t_argv_cut
each_mode "a session at its cap: every exec leaves a trace" t_session_cap
each_mode "sweep keeps a crashed session's log in the audit directory" t_sweep_keeps_log
each_mode "an OCI writable rootfs or mount never holds the log" t_oci_writable_paths
each_mode "a log with a second name (hard link) refused" t_hard_link_refused
each_mode "a session reads CORDON_AUDIT and CORDON_AUDIT_DIR" t_session_env
done_testing
