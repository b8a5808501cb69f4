#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# podman drives cordon as its OCI runtime (`--runtime $CORDON`, cgroupfs
# manager), as root and as the unprivileged test user: run, exit codes, a
# terminal, detached containers with exec, stop and rm, memory and pids
# limits. The image is made offline from cordon's busybox rootfs (podman
# import); nothing here touches a registry or the network (--network none).
#
# podman is a test dependency (contrib/deps.sh --test): when it is missing
# every case fails, it never skips.

. "$(dirname "$0")/../e2e/lib.sh"

IMAGE=localhost/cordon-compat-bb
PM_TMP=$E2E_TMP/podman
mkdir -p "$PM_TMP"
chmod 755 "$PM_TMP"
# podman's overlay driver keeps its store's overlay directory mounted on
# itself while in use: the store's, not a container's (theirs are checked).
E2E_MOUNT_NOISE="$E2E_MOUNT_NOISE|^$PM_TMP/[a-z]+/root/overlay\$"

# The store of each mode, private to this run: removed at the end.
pm_dirs() {
	PM_HOME=$PM_TMP/$MODE
	PM_ROOT=$PM_HOME/root
	PM_RUNROOT=$PM_HOME/runroot
	PM_XDG=$PM_HOME/xdg
}

# pm ARGS...: podman in this mode, on its private store, with cordon as runtime.
pm() {
	local -a argv=(podman --root "$PM_ROOT" --runroot "$PM_RUNROOT" --runtime "$CORDON"
		--cgroup-manager cgroupfs --events-backend file --tmpdir "$PM_HOME/tmp"
		--storage-driver overlay "$@")
	if [ "$MODE" = rootful ]; then
		run env CONTAINERS_CONF=/dev/null "${argv[@]}"
	else
		local USER_PREFIX
		_user_prefix
		run "${USER_PREFIX[@]}" CONTAINERS_CONF=/dev/null XDG_RUNTIME_DIR="$PM_XDG" \
			XDG_CONFIG_HOME="$PM_HOME/config" XDG_DATA_HOME="$PM_HOME/data" "${argv[@]}"
	fi
	_show "$@"
	LAST_CMD="$MODE: podman $SHOWN"
}

# Once per mode: the store, and the busybox rootfs imported as $IMAGE.
declare -A pm_ready
pm_setup() {
	pm_dirs
	[ -n "${pm_ready[$MODE]:-}" ] && return 0
	if ! command -v podman >/dev/null 2>&1; then
		fail "podman is not installed (contrib/deps.sh --test installs it)"
		return 1
	fi
	mkdir -p "$PM_HOME/tmp" "$PM_HOME/config" "$PM_HOME/data"
	mkdir -p "$PM_XDG" && chmod 700 "$PM_XDG"
	[ -f "$PM_TMP/rootfs.tar" ] || tar -C "$CORDON_ROOTFS" -cf "$PM_TMP/rootfs.tar" . ||
		{ fail "could not pack the rootfs"; return 1; }
	chmod 644 "$PM_TMP/rootfs.tar"
	[ "$MODE" = rootful ] || chown -R "$TEST_UID:$TEST_GID" "$PM_HOME"
	pm import --change 'ENV PATH=/bin' "$PM_TMP/rootfs.tar" "$IMAGE"
	expect_rc 0 || return 1
	pm_ready[$MODE]=1
}

# The podman output without cordon's warnings (podman relays the runtime's stderr).
out_lines() { grep -v '^cordon: warning:' <<<"$OUT"; }

t_run_rm() {
	pm_setup || return
	pm run --rm --network none "$IMAGE" echo hi
	expect_rc 0
	[ "$(out_lines)" = hi ] || fail "expected 'hi', got '$OUT'"
	pm run --rm --network none "$IMAGE" sh -c 'id -u; hostname; cat /proc/1/cmdline | tr "\0" " "'
	expect_rc 0
	[ "$(out_lines | head -1)" = 0 ] || fail "expected uid 0 in the container"
	pm ps -a -q
	[ -z "$OUT" ] || fail "run --rm left a container: $OUT"
}

t_exit_codes() {
	pm_setup || return
	pm run --rm --network none "$IMAGE" sh -c 'exit 3'
	expect_rc 3
	pm run --rm --network none "$IMAGE" sh -c 'kill -9 $$'
	expect_rc 137
	pm run --rm --network none "$IMAGE" /no/such/program
	expect_rc 127
}

t_terminal() {
	pm_setup || return
	pm run --rm -t --network none "$IMAGE" sh -c 'tty; test -t 0 && test -t 1 && echo is-a-tty'
	expect_rc 0
	grep -q '^/dev/pts/[0-9]' <<<"$OUT" || fail "run -t: no pty in the container: $OUT"
	grep -q 'is-a-tty' <<<"$OUT" || fail "run -t: stdin/stdout are not the terminal"
}

t_detached_exec_stop_rm() {
	local id
	pm_setup || return
	new_mark
	pm run -d --network none "$IMAGE" sleep "$MARK"
	expect_rc 0 || return
	id=$(out_lines | tail -1)
	pm inspect --format '{{.State.Status}} {{.State.Pid}}' "$id"
	[[ $OUT == running\ [1-9]* ]] || fail "expected running with a pid, got '$OUT'"
	pm exec "$id" sh -c 'echo in-container; cat /proc/1/cmdline | tr "\0" " "'
	expect_rc 0
	grep -q in-container <<<"$OUT" || fail "exec printed nothing"
	pm exec "$id" sh -c 'exit 5'
	expect_rc 5
	pm exec -t "$id" sh -c 'tty'
	expect_rc 0
	grep -q '^/dev/pts/[0-9]' <<<"$OUT" || fail "exec -t: no pty: $OUT"
	pm stop -t 5 "$id"
	expect_rc 0
	pm inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$id"
	[ "$OUT" = "exited 143" ] || fail "expected 'exited 143' after stop (SIGTERM), got '$OUT'"
	pm rm "$id"
	expect_rc 0
	no_procs_matching "sleep $MARK" || fail "the container's process survived rm"
	pm ps -a -q
	[ -z "$OUT" ] || fail "rm left a container: $OUT"
}

# A volume (-v): the container reads the host's file and its write lands on
# the host, owned by the caller (the container's root is the caller's uid).
t_volume() {
	local vol=$CASE_DIR/vol
	pm_setup || return
	new_mark
	mkdir -p "$vol"
	echo "host-$MARK" >"$vol/in"
	[ "$MODE" = rootful ] || chown -R "$TEST_UID:$TEST_GID" "$vol"
	pm run --rm --network none -v "$vol:/data" "$IMAGE" sh -c 'cat /data/in; echo container >/data/out'
	expect_rc 0
	grep -q "^host-$MARK$" <<<"$OUT" || fail "the container did not read the volume: $OUT"
	[ "$(cat "$vol/out" 2>/dev/null)" = container ] || fail "the container's write did not reach the host"
	[ "$(stat -c %u "$vol/out" 2>/dev/null)" = "$(mode_uid)" ] ||
		fail "the container's file is owned by $(stat -c %u "$vol/out"), not the caller"
}

# The probe image: the rootfs with the security tests' probe as /bin/probe
# and a setuid-root copy as /bin/suid-probe (an image's su or sudo).
pm_probe_image() {
	local dir=$PM_TMP/probe-image
	if [ -z "${SEC_PROBE:-}" ]; then
		fail "SEC_PROBE is not set (the security tests' probe)"
		return 1
	fi
	if [ ! -f "$PM_TMP/probe.tar" ]; then
		mkdir -p "$dir/bin"
		cp "$SEC_PROBE" "$dir/bin/probe"
		cp "$SEC_PROBE" "$dir/bin/suid-probe"
		chmod 4755 "$dir/bin/suid-probe"
		cp "$PM_TMP/rootfs.tar" "$PM_TMP/probe.tar"
		tar -C "$dir" --owner=0 --group=0 -rf "$PM_TMP/probe.tar" bin/probe bin/suid-probe ||
			{ fail "could not add the probe to the image"; return 1; }
		chmod 644 "$PM_TMP/probe.tar"
	fi
	pm import --change 'ENV PATH=/bin' "$PM_TMP/probe.tar" "$IMAGE-probe"
	expect_rc 0
}

# podman leaves no_new_privs off (its default): an image's setuid-root
# program runs as root for another user; --security-opt no-new-privileges
# takes that away.
t_setuid_program() {
	pm_setup || return
	pm_probe_image || return
	pm run --rm --network none --user 1000:1000 "$IMAGE-probe" /bin/suid-probe ids
	expect_rc 0
	[ "$(out_lines)" = "ids=1000,0,0:1000,1000,1000" ] ||
		fail "the setuid program did not run as root: '$OUT'"
	pm run --rm --network none --user 1000:1000 --security-opt no-new-privileges \
		"$IMAGE-probe" /bin/suid-probe ids
	expect_rc 0
	[ "$(out_lines)" = "ids=1000,1000,1000:1000,1000,1000" ] ||
		fail "no-new-privileges: the setuid program gained root: '$OUT'"
}

# --cap-add for a user other than root: podman asks for it as ambient, and
# it works without file capabilities (port 80 bound).
t_ambient_capability() {
	pm_setup || return
	pm_probe_image || return
	pm run --rm --network none --user 1000:1000 --cap-add NET_BIND_SERVICE "$IMAGE-probe" \
		/bin/probe bind:80
	expect_rc 0
	[ "$(out_lines)" = "bind:80=ok" ] || fail "ambient NET_BIND_SERVICE: port 80 not bound: '$OUT'"
	pm run --rm --network none --user 1000:1000 "$IMAGE-probe" /bin/probe bind:80
	[ "$(out_lines)" = "bind:80=EACCES" ] || fail "without --cap-add: expected EACCES, got '$OUT'"
}

t_memory_limit() {
	pm_setup || return
	pm run --rm --network none --memory 32m "$IMAGE" dd if=/dev/zero of=/dev/null bs=100M count=1
	expect_rc 137
	pm run --rm --network none --memory 128m "$IMAGE" dd if=/dev/zero of=/dev/null bs=50M count=1
	expect_rc 0
}

t_pids_limit() {
	pm_setup || return
	pm run --rm --network none --pids-limit 10 "$IMAGE" \
		sh -c 'i=0; while [ $i -lt 12 ]; do sleep 5 & i=$((i + 1)); done; wait'
	expect_rc_not 0 "12 processes under --pids-limit 10"
	grep -q "can't fork" <<<"$OUT$ERR" || fail "expected the shell's fork failure"
}

# podman's default network (rootful: a CNI bridge): the container joins the
# namespace podman made (linux.namespaces path) and reaches the bridge. All of
# it inside a network namespace of the test's own: the bridge, its firewall
# rules and every packet stay there.
t_bridge_network() {
	local port=$((20000 + RANDOM % 20000))
	pm_setup || return
	new_mark
	cat >"$CASE_DIR/listen.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1)
s.settimeout(20)
c, _ = s.accept()
open(sys.argv[2], "wb").write(c.recv(64))
PY
	cat >"$CASE_DIR/net.sh" <<SH
ip link set lo up
python3 "$CASE_DIR/listen.py" $port "$CASE_DIR/got" &
sleep 0.3
env CONTAINERS_CONF=/dev/null podman --root "$PM_ROOT" --runroot "$PM_RUNROOT" --runtime "$CORDON" \\
	--cgroup-manager cgroupfs --events-backend file --tmpdir "$PM_HOME/tmp" --storage-driver overlay \\
	run --rm "$IMAGE" sh -c 'grep -o eth0 /proc/net/dev; echo from-$MARK | nc -w 5 10.88.0.1 $port'
rc=\$?
wait
exit \$rc
SH
	run unshare --net bash "$CASE_DIR/net.sh"
	expect_rc 0
	grep -q '^eth0$' <<<"$OUT" || fail "no eth0 in the container: $OUT"
	[ "$(cat "$CASE_DIR/got" 2>/dev/null)" = "from-$MARK" ] ||
		fail "the bridge's host side did not get the container's message"
}

# Rootless podman leaves its pause process (the holder of its user namespace).
pm_cleanup() {
	local mode pid
	for mode in rootful rootless; do
		pid=$(cat "$PM_TMP/$mode/xdg/libpod/tmp/pause.pid" 2>/dev/null) &&
			kill "$pid" 2>/dev/null
	done
	# Image layers are not mounted once the containers are gone; to be sure.
	grep -o " $PM_TMP/[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
	return 0
}
trap 'pm_cleanup; _on_exit' EXIT

each_mode "run --rm --network none: output, uid 0, nothing left" t_run_rm
each_mode "exit codes: 3, 137 for SIGKILL, 127 for a missing program" t_exit_codes
each_mode "run -t: the container's stdio is a terminal" t_terminal
each_mode "run -d, exec, exec -t, stop (143), rm" t_detached_exec_stop_rm
each_mode "-v: a volume read and written, the write the caller's" t_volume
each_mode "a setuid program of the image (no_new_privs off), and with no-new-privileges" t_setuid_program
each_mode "--cap-add for uid 1000: an ambient capability" t_ambient_capability
# Rootless podman on cgroup v1 and hybrid drops limits itself (no delegation).
rootful_only "--memory: over the limit 137, under it 0" t_memory_limit
rootful_only "--pids-limit: a fork past the limit fails" t_pids_limit
rootful_only "the default bridge network: a joined network namespace, in a private one" t_bridge_network
done_testing
