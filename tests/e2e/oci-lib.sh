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
	wait_until 10 is_stopped "$1" || fail "container $1 did not stop"
}

root_empty() { [ -z "$(ls -A "$OROOT" 2>/dev/null)" ]; }

setup_case() {
	OROOT=$CASE_DIR/root
	new_mark
}

# The state root must be empty when a case ends, on top of lib.sh's leftover checks.
end_case() {
	check "the state root $OROOT is empty" root_empty
}
