# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers of the OCI command-line tests (e2e-oci*.sh), on top of lib.sh.
# Every case uses its own state root (--root, $OROOT): other cordon runs on
# this host (older binaries among them) sweep the default root, and a
# stopped container's state must stay until `cordon delete`.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# oc ARGS...: cordon --root $OROOT ARGS, in this mode.
oc() { cordon --root "$OROOT" "$@"; }
# oc_bg ARGS...: the same in the background (cordon_bg: BG_PID, wait_bg).
oc_bg() { cordon_bg --root "$OROOT" "$@"; }

# mk_bundle NAME ARGS...: a bundle in $CASE_DIR/NAME running ARGS on the
# test rootfs (read-only, no terminal, no /sys, no device rules), from
# `cordon spec`; sets BUNDLE. With ANNOTATIONS (a JSON object) set, they
# become the config's annotations; the key "netns-path" instead gives the
# network namespace a path.
mk_bundle() {
	local name=$1 spec_args
	shift
	BUNDLE=$CASE_DIR/$name
	mk_dir "$BUNDLE"
	spec_args=(spec -b "$BUNDLE")
	[ "$MODE" = rootless ] && spec_args+=(--rootless)
	cordon "${spec_args[@]}"
	expect_rc 0 || return 1
	"$PYTHON" - "$BUNDLE/config.json" "$ROOTFS" "${ANNOTATIONS:-}" "$@" <<'PY' || { fail "editing config.json"; return 1; }
import json, sys
path, rootfs, ann, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
c = json.load(open(path))
c["root"] = {"path": rootfs, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = args
c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/sys")]
c.get("linux", {}).get("resources", {}).pop("devices", None)
if ann:
    ann = json.loads(ann)
    if ann.pop("netns-path", None):
        for n in c["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = "/proc/1/ns/net"
    c["annotations"] = ann
json.dump(c, open(path, "w"))
PY
}

# cfg PYTHON: run PYTHON on the bundle's config.json as `c` (then saved);
# ARGS after it are sys.argv[1:].
cfg() {
	local code=$1
	shift
	"$PYTHON" - "$BUNDLE/config.json" "$code" "$@" <<'EOF' || { fail "editing config.json: $code"; return 1; }
import json, sys
path, code = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
c = json.load(open(path))
exec(code)
json.dump(c, open(path, "w"))
EOF
}

# jfield KEY: the value of KEY in the JSON object on $OUT (empty if absent).
jfield() {
	"$PYTHON" -c 'import json, sys; v = json.loads(sys.stdin.read()).get(sys.argv[1], ""); print(v)' "$1" <<<"$OUT"
}

# user_process: after `oc state`, the container's user process. The state's
# pid is the container's pid 1, cordon's init; the process of config.json's
# args is its first child.
user_process() {
	pgrep -o -P "$(jfield pid)"
}

# gone PID: no such process, or only a zombie its new parent has yet to reap.
gone() {
	[ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] ||
		[ ! -e "/proc/$1" ]
}

# state_procs_gone ID: the supervisor and the init that ID's state.json
# names are gone as cordon sweep judges it (pid and start time; a zombie is
# gone). An init still ending the rest of its pid namespace has no command
# line left, so a wait for command lines alone ends before it is gone,
# and a sweep then (rightly) keeps the sandbox.
state_procs_gone() {
	"$PYTHON" - "$OROOT/$1/state.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
def alive(pid, start):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return False
    fields = st[st.rindex(")") + 2:].split()
    return fields[0] not in ("Z", "X") and int(fields[19]) == start
sys.exit(any(s.get(p, 0) > 0 and alive(s[p], s.get(t, 0))
             for p, t in (("owner_pid", "owner_start_time"), ("init_pid", "init_start_time"))))
EOF
}

# expect_status ID STATUS: `cordon state ID` succeeds and says STATUS.
expect_status() {
	oc state "$1"
	expect_rc 0 || return 1
	[ "$(jfield status)" = "$2" ] || fail "expected status '$2' of $1, got '$(jfield status)'"
}

is_stopped() {
	oc state "$1" >/dev/null
	[ "$RC" = 0 ] && [ "$(jfield status)" = stopped ]
}

# wait_stopped ID: until `cordon state` says stopped (10 s).
wait_stopped() {
	wait_until "$WAIT_LIMIT" is_stopped "$1" || fail "container $1 did not stop"
}

# The other party of this mode, as a uid: the test user against root, a
# uid nobody uses against the test user.
other_uid() { if [ "$MODE" = rootful ]; then echo "$TEST_UID"; else echo 2999999; fi; }

root_empty() { [ -z "$(ls -A "$OROOT" 2>/dev/null)" ]; }

# client_of WORDS: the pid of the cordon command whose command line holds
# WORDS; not a cordon process's child of the same command line (a lock
# waiter, a joiner).
client_of() {
	local pid line
	while read -r line; do
		pid=${line%%:*}
		[ "$(_argv0_of "$pid")" = "$CORDON" ] || continue
		[ "$(_argv0_of "$(_ppid_of "$pid")")" = "$CORDON" ] && continue
		echo "$pid"
		return 0
	done < <(procs_matching "$1")
	return 1
}

# monitor_of ID: the pid of container ID's monitor (the owner in its state.json).
monitor_of() {
	"$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["owner_pid"])' \
		"$OROOT/$1/state.json"
}

# The inode of DIR in /proc/locks' form (DEV:INO, the device in hex).
_lock_key() { stat -c %i "$1"; }

# lock_held DIR: a process holds flock on DIR.
lock_held() {
	local ino
	ino=$(_lock_key "$1") || return 1
	grep -Eq "^[0-9]+: FLOCK +ADVISORY +[A-Z]+ +[0-9]+ [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks
}

# lock_waited DIR: a process waits for flock on DIR (blocked, "->" in /proc/locks).
lock_waited() {
	local ino
	ino=$(_lock_key "$1") || return 1
	grep -Eq -- "-> FLOCK +ADVISORY +[A-Z]+ +[0-9]+ [0-9a-f]+:[0-9a-f]+:$ino " /proc/locks
}

# interrupt_bg WORDS WHAT: SIGTERM to the cordon command started by
# cordon_bg whose command line holds WORDS; it must end (not hang), exit
# 125 and say CORDON_E_STATE, that it was interrupted, and WHAT.
interrupt_bg() {
	local pid
	pid=$(client_of "$1") || { fail "no cordon process with '$1' on its command line"; return 1; }
	kill -TERM "$pid"
	wait_bg_for "$WAIT_LIMIT" || return 1
	expect_cordon_error STATE "interrupted by SIGTERM" || return 1
	expect_err_has "$2"
}

setup_case() {
	OROOT=$CASE_DIR/root
	new_mark
}

# The state root must be empty when a case ends, on top of lib.sh's leftover checks.
end_case() {
	check "the state root $OROOT is empty" root_empty
}
