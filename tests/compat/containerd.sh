#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through rootful_only
# shellcheck source=tests/e2e/lib.sh
# compat: cordon as the OCI runtime of containerd (Debian's 1.6) through its
# runc shim, io.containerd.runc.v2, as `ctr run --runc-binary` uses it.
#
# The test starts its own containerd as root: a private config (only the
# plugins ctr needs: no CRI), root, state and socket in the scratch tree,
# stopped and removed at exit. The image is built offline from the test
# rootfs with umoci and imported with `ctr image import`; no registry, no
# network. The shim always passes --root, --log FILE and --log-format json:
# the log must be JSON lines, the shim reads a failure's reason from it
# (the 1.6 shim never passes --debug).
#
# containerd, ctr and umoci missing is a failure, not a skip:
# contrib/deps.sh --test installs them.
. "$(dirname "$0")/../e2e/lib.sh"

NS=cordon-test
IMAGE=cordon.test/busybox:latest
CD_DIR=$E2E_TMP/containerd
CD_SOCK=$CD_DIR/containerd.sock
CD_STATE=$CD_DIR/state
# The shim's --root for cordon: `ctr run --runc-root`, private to the test
# (the shim adds the namespace; cordon makes the missing directories).
RUNC_ROOT=$CD_DIR/runc
CD_PID=
# The shim's sockets go to /run/containerd/s whatever the config says
# (containerd 1.6): removed at the end when the test made the directory.
[ -e /run/containerd ] && RUN_CONTAINERD_BEFORE=1 || RUN_CONTAINERD_BEFORE=
# The longest a ctr call may take (lib.sh's run kills it then).
export E2E_RUN_TIMEOUT=60

# --- containerd ------------------------------------------------------------

containerd_start() {
	mkdir -p "$CD_DIR/root" "$CD_STATE"
	cat >"$CD_DIR/config.toml" <<EOF
version = 2
root = "$CD_DIR/root"
state = "$CD_STATE"
# ctr needs the content store, snapshots, images, containers, tasks and
# the runc shim; CRI and the remote snapshotters not.
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "$CD_SOCK"

[ttrpc]
  address = "$CD_SOCK.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""
EOF
	containerd --config "$CD_DIR/config.toml" >"$CD_DIR/containerd.log" 2>&1 </dev/null &
	CD_PID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		if [ -S "$CD_SOCK" ] && ctr -a "$CD_SOCK" version >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$CD_PID" 2>/dev/null || break
		sleep 0.05
	done
	return 1
}

# Stop containerd, then any shim of ours it left (a failed case's), and
# remove the parent cgroups named after the namespace when empty (the
# shim's cgroupsPath is /NAMESPACE/ID; the parent stays, as with runc).
containerd_stop() {
	local line d
	if [ -n "$CD_PID" ]; then
		kill -TERM "$CD_PID" 2>/dev/null
		wait_until "$WAIT_LIMIT" cd_gone || kill -KILL "$CD_PID" 2>/dev/null
		wait "$CD_PID" 2>/dev/null
		CD_PID=
	fi
	while IFS= read -r line; do
		[ -n "$line" ] && kill -KILL "${line%%:*}" 2>/dev/null
	done < <(procs_matching "-address $CD_SOCK")
	for d in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	if [ -z "$RUN_CONTAINERD_BEFORE" ]; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null
	fi
}

cd_gone() { ! kill -0 "$CD_PID" 2>/dev/null; }

# lib.sh's exit trap removes the scratch tree: containerd goes first.
# shellcheck disable=SC2154 # _rc is assigned in the trap itself
trap '_rc=$?; containerd_stop; (exit $_rc); _on_exit' EXIT

# ctr ARGS...: ctr on our socket and namespace, captured as `run` does.
ctr_() { run ctr -a "$CD_SOCK" -n "$NS" "$@"; }

# ctr_tty CMDLINE: a ctr command line (one string, quoted for a shell) on a
# terminal of its own (script(1)), captured; carriage returns dropped.
ctr_tty() {
	local ctr
	printf -v ctr '%q ' ctr -a "$CD_SOCK" -n "$NS"
	run script -qec "$ctr$1" /dev/null
	OUT=${OUT//$'\r'/}
}

# The image: the test rootfs as one layer, PATH in its config.
build_image() {
	local img=$E2E_TMP/image
	umoci init --layout "$img" &&
		umoci new --image "$img:latest" &&
		umoci insert --image "$img:latest" "$CORDON_ROOTFS" / &&
		umoci config --image "$img:latest" --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			--config.cmd sh &&
		tar -C "$img" -cf "$E2E_TMP/image.tar" . &&
		ctr -a "$CD_SOCK" -n "$NS" image import --base-name cordon.test/busybox "$E2E_TMP/image.tar" &&
		ctr -a "$CD_SOCK" -n "$NS" image ls -q | grep -xF "$IMAGE" >/dev/null
}

# --- per case ----------------------------------------------------------------

# The runtime flags every ctr run of a case passes (the task's fifos in
# the scratch tree too, not ctr's default /run/containerd/fifo).
RT=()
setup_case() {
	RT=(--runc-binary "$CORDON" --runc-root "$RUNC_ROOT" --fifo-dir "$CD_DIR/fifo")
	new_mark
}

# The containerd bundle of ID, where the shim keeps log.json.
bundle_of() { echo "$CD_STATE/io.containerd.runtime.v2.task/$NS/$1"; }

task_status() {
	ctr -a "$CD_SOCK" -n "$NS" task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'
}
task_is() { [ "$(task_status "$1")" = "$2" ]; }

# cgroup directories named after ID (cordon-ID or ID) in any hierarchy.
cgroups_of() {
	find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -type d \( -name "$1" -o -name "cordon-$1" \) 2>/dev/null
}

# expect_log_json FILE: every line of FILE is a JSON object with a known
# level, a string msg and an RFC 3339 time (what the shim's decoder reads),
# an error among them.
expect_log_json() {
	local why
	why=$("$PYTHON" - "$1" <<'EOF' 2>&1
import json, re, sys
levels = set()
with open(sys.argv[1], "rb") as f:
    for i, raw in enumerate(f, 1):
        try:
            r = json.loads(raw.decode("utf-8"))
        except Exception as e:
            sys.exit("line %d is not JSON (%s): %r" % (i, e, raw[:200]))
        if not isinstance(r, dict):
            sys.exit("line %d is not an object: %r" % (i, raw[:200]))
        if r.get("level") not in ("debug", "info", "warning", "error"):
            sys.exit("line %d: level %r" % (i, r.get("level")))
        if not isinstance(r.get("msg"), str):
            sys.exit("line %d: msg %r" % (i, r.get("msg")))
        if not re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", str(r.get("time"))):
            sys.exit("line %d: time %r" % (i, r.get("time")))
        levels.add(r["level"])
if "error" not in levels:
    sys.exit("no error line (the case made cordon fail)")
EOF
	) || fail "$1 is not cordon's JSON lines: $why"
}

# Everything of ID gone: containerd's record, the shim's bundle, cordon's
# state under the shim's --root, cgroups. (Processes, mounts and
# /run/cordon: lib.sh's leftover checks.)
expect_gone() {
	local id=$1 left
	ctr -a "$CD_SOCK" -n "$NS" container ls -q 2>/dev/null | grep -xF "$id" >/dev/null &&
		_fail_raw "leftover: containerd still lists container $id"
	[ ! -e "$(bundle_of "$id")" ] || _fail_raw "leftover: the shim's bundle $(bundle_of "$id")"
	[ ! -e "$RUNC_ROOT/$NS/$id" ] || _fail_raw "leftover: cordon state $RUNC_ROOT/$NS/$id"
	left=$(cgroups_of "$id")
	[ -z "$left" ] || _fail_raw "leftover: cgroups of $id:" "$(printf '%s\n' "$left" | _indent)"
}

# --- cases ---------------------------------------------------------------------

t_run_echo() {
	setup_case
	next_id
	ctr_ run --rm "${RT[@]}" "$IMAGE" "$ID" echo hi
	expect_rc 0
	expect_out_eq hi
	expect_err_empty "nothing but the workload's output (a warning on the task's stderr?)"
	expect_gone "$ID"
}

t_exit_status() {
	setup_case
	next_id
	ctr_ run --rm "${RT[@]}" "$IMAGE" "$ID" sh -c 'echo out; echo err >&2; exit 3'
	expect_rc 3
	expect_out_eq out
	expect_err_eq err
	expect_gone "$ID"
	next_id
	# shellcheck disable=SC2016 # the container's shell expands it
	ctr_ run --rm "${RT[@]}" "$IMAGE" "$ID" sh -c 'kill -9 $$'
	expect_rc 137
	expect_gone "$ID"
}

# A program that is not there: the shim reads cordon's reason from the
# JSON log and ctr says it.
t_exec_failure() {
	setup_case
	next_id
	ctr_ run --rm "${RT[@]}" "$IMAGE" "$ID" "no-such-program-$MARK"
	expect_rc_not 0
	expect_err_has CORDON_E_EXEC "ctr does not show cordon's reason (read from the --log JSON)"
	expect_err_has "no-such-program-$MARK"
	# ctr run --rm stops at the failed start: the container is ctr's to remove.
	ctr_ container rm "$ID"
	expect_gone "$ID"
}

t_run_tty() {
	local cmd
	setup_case
	next_id
	printf -v cmd '%q ' run --rm -t "${RT[@]}" "$IMAGE" "$ID" \
		sh -c 'tty; test -t 0 && test -t 1 && echo on-a-terminal; exit 4'
	ctr_tty "$cmd"
	expect_rc 4
	expect_out_has /dev/pts/0 "the workload's stdin is not the container's pty"
	expect_out_has on-a-terminal
	expect_gone "$ID"
}

t_detach_exec() {
	local id cmd log pid
	setup_case
	next_id
	id=$ID
	ctr_ run -d "${RT[@]}" "$IMAGE" "$id" sleep "$MARK"
	expect_rc 0 || return
	wait_until "$WAIT_LIMIT" task_is "$id" RUNNING || fail "task $id is not RUNNING: $(task_status "$id")"
	ctr_ task exec --fifo-dir "$CD_DIR/fifo" --exec-id "x-$MARK" "$id" sh -c 'echo from-exec; hostname; ps -o args | grep -c "[s]leep '"$MARK"'"'
	expect_rc 0
	expect_out_has from-exec
	expect_out_has $'\n1' "the exec does not see the container's sleep in its pid namespace"
	ctr_ task exec --fifo-dir "$CD_DIR/fifo" --exec-id "y-$MARK" "$id" sh -c 'exit 5'
	expect_rc 5
	ctr_ task exec --fifo-dir "$CD_DIR/fifo" --exec-id "z-$MARK" "$id" "no-such-program-$MARK"
	expect_rc_not 0
	expect_err_has CORDON_E_EXEC "ctr does not show cordon's reason (read from the --log JSON)"
	printf -v cmd '%q ' task exec --fifo-dir "$CD_DIR/fifo" -t --exec-id "t-$MARK" "$id" sh -c 'tty; exit 6'
	ctr_tty "$cmd"
	expect_rc 6
	expect_out_has /dev/pts/
	# linux.cgroupsPath is containerd's /NAMESPACE/ID; the shim reads the
	# init's cgroups for its metrics.
	pid=$(ctr -a "$CD_SOCK" -n "$NS" task ls 2>/dev/null | awk -v id="$id" '$1 == id { print $2 }')
	grep -q ":memory:/$NS/$id\$" "/proc/$pid/cgroup" 2>/dev/null ||
		fail "the task's init ($pid) is not in the memory cgroup /$NS/$id: $(cat "/proc/$pid/cgroup" 2>&1)"
	ctr_ task metrics "$id"
	expect_rc 0
	expect_out_has memory.usage_in_bytes
	ctr_ task ps "$id"
	expect_rc 0
	expect_out_has PID
	ctr_ task pause "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" task_is "$id" PAUSED || fail "task $id is not PAUSED: $(task_status "$id")"
	ctr_ task resume "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" task_is "$id" RUNNING || fail "task $id is not RUNNING after resume"
	# Every cordon call so far logged here, the failed exec among them.
	log=$(bundle_of "$id")/log.json
	expect_log_json "$log"
	ctr_ task kill "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" task_is "$id" STOPPED || fail "task $id did not stop on SIGTERM: $(task_status "$id")"
	ctr_ task rm "$id"
	expect_rc 0
	ctr_ container rm "$id"
	expect_rc 0
	expect_gone "$id"
}

# What ctr's flags put in the config: a read-only bind mount, the
# environment, the working directory; the root (containerd's overlay
# snapshot) is writable by the container's root.
t_run_options() {
	setup_case
	next_id
	mkdir -p "$CASE_DIR/vol"
	echo "volume-$MARK" >"$CASE_DIR/vol/file"
	# shellcheck disable=SC2016 # $MARK is the container's (--env)
	ctr_ run --rm "${RT[@]}" --mount "type=bind,src=$CASE_DIR/vol,dst=/vol,options=rbind:ro" \
		--env "MARK=$MARK" --cwd /tmp "$IMAGE" "$ID" \
		sh -c 'cat /vol/file; touch /vol/new 2>/dev/null && echo vol-writable; echo "env $MARK"; pwd; touch /root-written && echo root-writable'
	expect_rc 0
	expect_out_eq "volume-$MARK"$'\n'"env $MARK"$'\n'/tmp$'\n'root-writable
	[ ! -e "$CASE_DIR/vol/new" ] || fail "the read-only bind mount was written"
	expect_gone "$ID"
}

# ctr task kill -s KILL of a running task, then task rm -f and container rm.
t_kill_rm_force() {
	local id
	setup_case
	next_id
	id=$ID
	ctr_ run -d "${RT[@]}" "$IMAGE" "$id" sleep "$MARK"
	expect_rc 0 || return
	ctr_ task kill -s KILL "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" task_is "$id" STOPPED || fail "task $id did not stop on SIGKILL"
	ctr_ task rm -f "$id"
	expect_rc 0
	ctr_ container rm "$id"
	expect_rc 0
	expect_gone "$id"
}

# --- main ----------------------------------------------------------------------

missing=()
for tool in containerd ctr containerd-shim-runc-v2 umoci script; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
	tap_not_ok "containerd, ctr, the runc shim and umoci are installed"
	diag "missing: ${missing[*]}" "contrib/deps.sh --test installs them (Debian: containerd umoci)"
	done_testing
fi
if ! is_root; then
	tap_not_ok "run as root"
	diag "containerd needs root: run this test as root (contrib/test.sh does)"
	done_testing
fi

if ! containerd_start; then
	tap_not_ok "containerd starts"
	diag "$(tail -n 20 "$CD_DIR/containerd.log")"
	done_testing
fi
tap_ok "containerd starts on a private socket ($CD_SOCK)"
if build_image >"$E2E_TMP/image.log" 2>&1; then
	tap_ok "umoci image of the test rootfs imported ($IMAGE)"
else
	tap_not_ok "umoci image of the test rootfs imported"
	diag "$(tail -n 20 "$E2E_TMP/image.log")"
	done_testing
fi

rootful_only "ctr run --rm echo hi: hi, exit 0, nothing else on stderr" t_run_echo
rootful_only "ctr run --rm: exit status 3, stdout and stderr apart; signal 9 is 137" t_exit_status
rootful_only "ctr run of a missing program: cordon's reason through the JSON log" t_exec_failure
rootful_only "ctr run --mount (ro bind), --env, --cwd; the snapshot root writable" t_run_options
rootful_only "ctr run -t: the workload on a terminal, its status" t_run_tty
rootful_only "ctr run -d: cgroup /NS/ID, metrics, task exec (plain, status, failure, -t), ps, pause, resume, kill, rm; the --log is JSON lines" t_detach_exec
rootful_only "task kill -s KILL, task rm -f, container rm" t_kill_rm_force
done_testing
