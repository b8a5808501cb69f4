#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the OCI runtime command line (docs/oci.md): create, start, state,
# kill, delete, list and run --bundle on bundles made with `cordon spec`.
#
# Every case uses its own state root (--root): other cordon runs on this
# host (older binaries among them) sweep the default root, and a stopped
# container's state must stay until `cordon delete`. The root must be
# empty when a case ends, on top of lib.sh's leftover checks.
. "$(dirname "$0")/oci-lib.sh"

program_running() { [ -n "$(procs_matching "sleep $MARK")" ]; }

t_lifecycle() {
	local id=$CASE_ID-c pid
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create --bundle "$BUNDLE" --pid-file "$CASE_DIR/pid" "$id"
	expect_rc 0
	expect_err_empty "create printed something"
	expect_status "$id" created
	pid=$(jfield pid)
	[ "$pid" -gt 0 ] 2>/dev/null || fail "expected a pid in the state"
	[ "$(cat "$CASE_DIR/pid" 2>/dev/null)" = "$pid" ] || fail "--pid-file does not hold the state's pid $pid"
	[ "$(jfield bundle)" = "$BUNDLE" ] || fail "expected bundle $BUNDLE"
	[ "$(jfield ociVersion)" = 1.2.0 ] || fail "expected ociVersion 1.2.0"
	# Created: the process exists and has not run its program yet.
	no_procs_matching "sleep $MARK" || fail "the program ran before start"
	oc start "$id"
	expect_rc 0
	expect_status "$id" running
	[ "$(jfield pid)" = "$pid" ] || fail "the pid changed at start"
	wait_until "$WAIT_LIMIT" program_running || fail "the program did not start"
	oc kill "$id"
	expect_rc 0
	wait_stopped "$id"
	[ "$(jfield exitStatus)" = 143 ] || fail "expected exitStatus 143 after kill (TERM)"
	[ "$(jfield pid)" = 0 ] || fail "expected pid 0 once stopped"
	oc delete "$id"
	expect_rc 0
	oc state "$id"
	expect_cordon_error STATE "$id"
	end_case
}

t_run_bundle() {
	setup_case
	# shellcheck disable=SC2016 # expanded inside the container
	mk_bundle b sh -c 'echo "hi from $(hostname)"; exit 7' || return
	oc run --bundle "$BUNDLE" "$CASE_ID-a"
	expect_rc 7
	expect_out_eq "hi from cordon"
	mk_bundle b2 sh -c 'kill -9 $$' || return
	oc run -b "$BUNDLE" "$CASE_ID-b"
	expect_rc 137
	mk_bundle b3 no-such-program || return
	oc run --bundle="$BUNDLE" "$CASE_ID-c"
	expect_rc 127
	expect_err_has CORDON_E_EXEC
	# --detach: create and start; the state stays until delete.
	mk_bundle b4 sh -c 'exit 3' || return
	oc run -d -b "$BUNDLE" "$CASE_ID-d"
	expect_rc 0
	wait_stopped "$CASE_ID-d"
	[ "$(jfield exitStatus)" = 3 ] || fail "expected exitStatus 3"
	oc delete "$CASE_ID-d"
	expect_rc 0
	# The other form of run is untouched.
	cordon --root "$OROOT" run --no-workspace "$ROOTFS" -- sh -c 'exit 5'
	expect_rc 5
	end_case
}

# kill_one SIGNAL STATUS: a started `sleep` killed with SIGNAL stops with STATUS.
kill_one() {
	local id=$CASE_ID-$1
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	oc kill "$id" "$1"
	expect_rc 0
	wait_stopped "$id"
	[ "$(jfield exitStatus)" = "$2" ] || fail "kill $1: expected exitStatus $2"
	oc delete "$id"
	expect_rc 0
}

t_kill_signals() {
	setup_case
	mk_bundle b sleep "$MARK" || return
	kill_one SIGUSR1 138
	kill_one HUP 129
	kill_one 9 137
	kill_one sigint 130
	oc create -b "$BUNDLE" "$CASE_ID-x"
	oc kill "$CASE_ID-x" FOO
	expect_cordon_error USAGE FOO
	oc kill "$CASE_ID-x" 0
	expect_cordon_error USAGE 0
	# --all with KILL: the whole container, also while only created.
	oc kill --all "$CASE_ID-x" KILL
	expect_rc 0
	wait_stopped "$CASE_ID-x"
	oc kill "$CASE_ID-x" TERM
	expect_cordon_error STATE stopped
	oc delete "$CASE_ID-x"
	expect_rc 0
	end_case
}

t_delete() {
	local id=$CASE_ID-r pid
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	oc delete "$id"
	expect_cordon_error STATE running
	expect_status "$id" running
	oc delete --force "$id"
	expect_rc 0
	oc state "$id"
	expect_cordon_error STATE "does not exist"
	no_procs_matching "sleep $MARK" || fail "the program survived delete --force"
	# A created container is deleted without --force (as runc does).
	oc create -b "$BUNDLE" "$id"
	expect_status "$id" created
	pid=$(jfield pid)
	oc delete "$id"
	expect_rc 0
	gone "$pid" || fail "the created container's process $pid survived delete"
	oc delete "$id"
	expect_cordon_error STATE "does not exist"
	end_case
}

t_refusals() {
	local id=$CASE_ID-e
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE"
	expect_cordon_error USAGE ID
	oc create -b "$CASE_DIR/no-such-bundle" "$id"
	expect_cordon_error PATH no-such-bundle
	oc create -b "$BUNDLE" 'bad/id'
	expect_cordon_error USAGE bad/id
	oc create -b "$BUNDLE" --console-socket "$CASE_DIR/sock" "$id"
	expect_cordon_error USAGE --console-socket
	oc start "$id"
	expect_cordon_error STATE "does not exist"
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error STATE exists
	oc start "$id"
	expect_rc 0
	oc start "$id"
	expect_cordon_error STATE running
	oc delete -f "$id"
	expect_rc 0
	# process.terminal needs a console socket (e2e-oci-exec.sh has the terminal cases).
	"$PYTHON" - "$BUNDLE/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); c["process"]["terminal"] = True
json.dump(c, open(sys.argv[1], "w"))
EOF
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error USAGE process.terminal
	# A cwd through /proc/self/fd/N: refused before anything exists.
	"$PYTHON" - "$BUNDLE/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); c["process"]["terminal"] = False
c["process"]["cwd"] = "/proc/self/fd/5"
json.dump(c, open(sys.argv[1], "w"))
EOF
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error SPEC process.cwd
	end_case
}

t_exec_failure_at_start() {
	local id=$CASE_ID-n
	setup_case
	# A program that is not there: create fails (podman maps the message to 127).
	mk_bundle b no-such-program || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error EXEC no-such-program
	oc state "$id"
	expect_cordon_error STATE "does not exist"
	# One that is there, but execve fails (its interpreter is not): at start.
	printf '#!/no/such/interpreter\n' >"$CASE_DIR/bad.sh"
	chmod 755 "$CASE_DIR/bad.sh"
	mk_bundle b2 /bad.sh || return
	cfg 'c["mounts"].append({"destination": "/bad.sh", "type": "bind", "source": sys.argv[1], "options": ["bind", "ro"]})' "$CASE_DIR/bad.sh"
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	oc start "$id"
	expect_cordon_error EXEC /bad.sh
	wait_stopped "$id"
	[ "$(jfield exitStatus)" = 127 ] || fail "expected exitStatus 127"
	oc delete "$id"
	expect_rc 0
	end_case
}

t_log_json() {
	local log=$CASE_DIR/log.json
	setup_case
	oc --log-format json state "$CASE_ID-none"
	expect_rc 125
	"$PYTHON" - "$CASE_ID-none" "$ERR" <<'EOF' 2>&1 || fail "stderr is not one JSON log line"
import json, re, sys
lines = sys.argv[2].splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["level"] == "error", r
assert r["msg"].startswith("CORDON_E_STATE: ") and sys.argv[1] in r["msg"], r
assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", r["time"]), r
EOF
	# With --log FILE: the text line on stderr, the JSON line in the file.
	cordon --root "$OROOT" --log "$log" --log-format=json kill "$CASE_ID-none" KILL
	expect_cordon_error STATE "$CASE_ID-none"
	"$PYTHON" - "$log" <<'EOF' 2>&1 || fail "the --log file does not hold one JSON error line"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["level"] == "error" and "CORDON_E_STATE" in r["msg"], r
EOF
	oc --log-format yaml list
	expect_cordon_error USAGE --log-format
	end_case
}

t_list() {
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$CASE_ID-l1" && oc create -b "$BUNDLE" "$CASE_ID-l2"
	expect_rc 0 || return
	oc start "$CASE_ID-l2"
	oc list -q
	expect_out_eq "$CASE_ID-l1"$'\n'"$CASE_ID-l2"
	oc list --format json
	"$PYTHON" - "$CASE_ID" "$OUT" <<'EOF' 2>&1 || fail "list --format json"
import json, sys
r = {c["id"]: c["status"] for c in json.loads(sys.argv[2])}
assert r == {sys.argv[1] + "-l1": "created", sys.argv[1] + "-l2": "running"}, r
EOF
	oc list
	expect_out_has "$CASE_ID-l2"
	oc delete -f "$CASE_ID-l1" && oc delete -f "$CASE_ID-l2"
	expect_rc 0
	oc list -q
	expect_out_eq ""
	end_case
}

t_root_writable() {
	local id=$CASE_ID-w
	setup_case
	copy_rootfs "$CASE_DIR/rootfs" || return
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$CASE_DIR/rootfs"
	mk_bundle b sh -c 'echo written >/from-container' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc_not 0 "a read-only root refuses the write"
	"$PYTHON" - "$BUNDLE/config.json" "$CASE_DIR/rootfs" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); c["root"] = {"path": sys.argv[2], "readonly": False}
json.dump(c, open(sys.argv[1], "w"))
EOF
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(cat "$CASE_DIR/rootfs/from-container" 2>/dev/null)" = written ] ||
		fail "root.readonly false: the write did not reach the rootfs"
	end_case
}

# Host root, a writable root on an overlay (an engine's storage): the
# sandbox's ids are the host's, so its root owns and writes the root's files.
# A read-only root, or one that can be idmapped, keeps cordon's own range.
t_root_overlay_host_ids() {
	local id=$CASE_ID-o ov=$CASE_DIR/ov
	setup_case
	mkdir -p "$ov/upper" "$ov/work" "$ov/merged"
	mount -t overlay overlay -o "lowerdir=$CORDON_ROOTFS,upperdir=$ov/upper,workdir=$ov/work" \
		"$ov/merged" || { fail "could not mount a test overlay"; return; }
	mk_bundle b sh -c 'echo written >/from-container; stat -c %u /bin; cat /proc/self/uid_map
		chmod 000 /dev/null 2>/dev/null && echo chmod-host-node; true' || return
	cfg 'c["root"] = {"path": sys.argv[1], "readonly": False}' "$ov/merged"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(stat -c %u:%g "$ov/upper/from-container" 2>/dev/null)" = 0:0 ] ||
		fail "the container's file on the overlay is not owned by host root"
	grep -q '^0$' <<<"$OUT" || fail "the root's files are not owned by the container's root"
	grep -Eq '^ *0 +0 +4294967295$' <<<"$OUT" || fail "expected the identity id map"
	# Its root is host uid 0 for files: the host's device nodes it sees are read-only binds.
	grep -q chmod-host-node <<<"$OUT" && fail "the container changed the host's /dev/null"
	[ "$(stat -c %a /dev/null)" = 666 ] || { chmod 666 /dev/null; fail "the host's /dev/null lost its mode"; }
	# The same root, read-only: cordon's own range.
	cfg 'c["root"] = {"path": sys.argv[1], "readonly": True}' "$ov/merged"
	oc run -b "$BUNDLE" "$id"
	grep -Eq '^ *0 +0 +4294967295$' <<<"$OUT" && fail "a read-only root got the identity map"
	umount "$ov/merged"
	end_case
}

# process.user.additionalGids and umask: the container's and exec's processes.
t_user_groups_umask() {
	local id=$CASE_ID-g
	setup_case
	mk_bundle b sh -c 'grep ^Groups: /proc/self/status; umask; cat /proc/sys/kernel/domainname; uname -m' || return
	cfg 'c["process"]["user"].update({"additionalGids": [5, 100], "umask": 63}); c["domainname"] = "example.org"; c["linux"]["personality"] = {"domain": "LINUX32"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = "$(printf 'Groups:\t5 100 \n0077\nexample.org\ni686')" ] ||
		fail "expected groups 5 100, umask 0077, domain example.org and i686, got '$OUT'"
	cfg 'c["process"]["args"] = ["sleep", sys.argv[1]]' "$MARK"
	oc run -b "$BUNDLE" -d "$id"
	expect_rc 0
	oc exec "$id" sh -c 'grep ^Groups: /proc/self/status; umask'
	[ "$OUT" = "$(printf 'Groups:\t5 100 \n0077')" ] || fail "exec: expected groups 5 100 and umask 0077, got '$OUT'"
	oc delete --force "$id"
	expect_rc 0
	end_case
}

# linux.sysctl: network (ids of the container's own), IPC and UTS values, in
# the container's namespaces only.
# linux.sysctl user.max_*: the limits of the container's outer user
# namespace (cordon's defaults for the rest), not the host's; a key cordon
# does not set, or a value that is not a number, is refused.
t_sysctl_user() {
	local id=$CASE_ID-u pid
	setup_case
	mk_bundle b sleep "$MARK" || return
	cfg 'c["linux"]["sysctl"] = {"user.max_inotify_instances": "5", "user.max_net_namespaces": "3"}'
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc start "$id"
	oc state "$id"
	pid=$(user_process)
	OUT=$(parent_userns_sysctls "$pid" 2>&1)
	[[ $OUT == *$'max_inotify_instances 5\n'* && $OUT == *$'max_net_namespaces 3\n'* &&
		$OUT == *$'max_ipc_namespaces 16\n'* ]] || fail "the outer namespace's limits: $OUT"
	[ "$(cat /proc/sys/user/max_inotify_instances)" != 5 ] || fail "the host's limit changed"
	oc delete --force "$id"
	expect_rc 0
	cfg 'c["linux"]["sysctl"] = {"user.max_user_namespaces": "5"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 125
	expect_err_has "CORDON_E_SPEC: bundle $BUNDLE: linux.sysctl.user.max_user_namespaces: 'max_user_namespaces': not a limit"
	cfg 'c["linux"]["sysctl"] = {"user.max_inotify_watches": "lots"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 125
	expect_err_has "CORDON_E_SPEC: bundle $BUNDLE: linux.sysctl.user.max_inotify_watches: max_inotify_watches: expected a number"
	cfg 'c["linux"]["sysctl"] = {"user.max_inotify_instances": "2147483647"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 125
	expect_err_has "CORDON_E_SPEC: linux.sysctl: user.max_inotify_instances=2147483647: above the caller's own"
	end_case
}

t_sysctl() {
	local id=$CASE_ID-s
	setup_case
	mk_bundle b sh -c 'cd /proc/sys; cat net/ipv4/ping_group_range net/ipv4/ip_unprivileged_port_start kernel/shmmni kernel/domainname' || return
	cfg 'c["linux"]["sysctl"] = {"net.ipv4.ping_group_range": "0 0", "net.ipv4.ip_unprivileged_port_start": "80", "kernel.shmmni": "1234", "kernel.domainname": "sysctl.example"}'
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = "$(printf '0\t0\n80\n1234\nsysctl.example')" ] || fail "expected the config's sysctls, got '$OUT'"
	[ "$(cat /proc/sys/kernel/shmmni)" != 1234 ] || fail "the host's kernel.shmmni changed"
	[ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" != 80 ] || fail "the host's port start changed"
	end_case
}

# The state's pid (cordon's init) is in the container's network namespace,
# not the host's: buildah runs CNI in /proc/PID/ns/net of the pid file's
# process, as with runc's init.
t_pid_network_namespace() {
	local id=$CASE_ID-n pid ns_init ns_workload
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create --bundle "$BUNDLE" --pid-file "$CASE_DIR/pid" "$id"
	expect_rc 0 || return
	pid=$(cat "$CASE_DIR/pid")
	ns_init=$(readlink "/proc/$pid/ns/net")
	[ -n "$ns_init" ] && [ "$ns_init" != "$(readlink /proc/self/ns/net)" ] ||
		fail "created: the pid file's process is in the host's network namespace ($ns_init)"
	oc start "$id"
	expect_rc 0
	wait_until "$WAIT_LIMIT" program_running || fail "the program did not start"
	ns_workload=$(readlink "/proc/$(procs_matching "sleep $MARK" | head -n 1 | cut -d: -f1)/ns/net")
	[ "$ns_init" = "$ns_workload" ] ||
		fail "the pid file's process is in $ns_init, the workload in $ns_workload"
	oc delete --force "$id"
	expect_rc 0
	end_case
}

# process.oomScoreAdj: the container's; lowering it needs CAP_SYS_RESOURCE.
t_oom_score_adj() {
	local id=$CASE_ID-o
	setup_case
	mk_bundle b cat /proc/self/oom_score_adj || return
	cfg 'c["process"]["oomScoreAdj"] = 500'
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = 500 ] || fail "expected oom_score_adj 500, got '$OUT'"
	cfg 'c["process"]["oomScoreAdj"] = -500'
	oc run -b "$BUNDLE" "$id"
	# CAP_SYS_RESOURCE (bit 24): host root has it, unless its own container took it away.
	if [ "$MODE" = rootful ] && (($(awk '/^CapEff/ { print "0x" $2 }' /proc/self/status) >> 24 & 1)); then
		expect_rc 0
		[ "$OUT" = -500 ] || fail "expected oom_score_adj -500, got '$OUT'"
	else
		expect_cordon_error SECURITY oomScoreAdj
	fi
	end_case
}

# linux.devices: the host's node of the same path, bound; a FIFO made; a node
# that is not the device the config names is refused.
t_devices() {
	local id=$CASE_ID-v
	setup_case
	mk_bundle b sh -c 'stat -c "%F %t:%T" /dev/net/tun; stat -c "%F %a" /dev/sub/fifo' || return
	cfg 'c["linux"]["devices"] = [{"path": "/dev/net/tun", "type": "c", "major": 10, "minor": 200}, {"path": "/dev/sub/fifo", "type": "p", "fileMode": 384}]'
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = "$(printf 'character special file a:c8\nfifo 600')" ] ||
		fail "expected the tun node and a fifo, got '$OUT'"
	# Rootful the node is made as the config says (e2e-oci-conf.sh); rootless the host's must match.
	if [ "$MODE" = rootless ]; then
		cfg 'c["linux"]["devices"] = [{"path": "/dev/net/tun", "type": "c", "major": 10, "minor": 201}]'
		oc run -b "$BUNDLE" "$id"
		expect_cordon_error MOUNT "not c 10:201"
	fi
	end_case
}

# linux.uidMappings/gidMappings: the launcher's ids, its root owned by them
# (not idmapped again). Rootless: the caller's subordinate range, through
# newuidmap, or the caller's own id alone.
t_config_id_maps() {
	local id=$CASE_ID-m base pid wpid maps got p
	setup_case
	copy_rootfs "$CASE_DIR/rootfs" || return
	if [ "$MODE" = rootful ]; then
		base=300000
		chown -R "$base:$base" "$CASE_DIR/rootfs"
	else
		base=$(awk -F: -v u="$CORDON_TEST_USER" '$1 == u { print $2; exit }' /etc/subuid)
		chown -R "$((base + 1)):$((base + 1))" "$CASE_DIR/rootfs"
		chown "$TEST_UID:$TEST_GID" "$CASE_DIR/rootfs"
	fi
	mk_bundle b stat -c %u:%g /bin || return
	if [ "$MODE" = rootful ]; then
		cfg 'c["root"] = {"path": sys.argv[1], "readonly": True}
m = [{"containerID": 0, "hostID": int(sys.argv[2]), "size": 65536}]
c["linux"]["uidMappings"] = m; c["linux"]["gidMappings"] = m' "$CASE_DIR/rootfs" "$base"
		want="0:0"
	else
		cfg 'c["root"] = {"path": sys.argv[1], "readonly": True}
m = [{"containerID": 0, "hostID": int(sys.argv[3]), "size": 1}, {"containerID": 1, "hostID": int(sys.argv[2]), "size": 65536}]
g = [{"containerID": 0, "hostID": int(sys.argv[4]), "size": 1}, {"containerID": 1, "hostID": int(sys.argv[2]), "size": 65536}]
c["linux"]["uidMappings"] = m; c["linux"]["gidMappings"] = g' "$CASE_DIR/rootfs" "$base" "$TEST_UID" "$TEST_GID"
		want="2:2"
	fi
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = "$want" ] || fail "expected /bin owned by $want inside, got '$OUT'"
	# Inside, /proc/self/uid_map is the nested namespace's: the sandbox's
	# ids as themselves (docs/oci.md, what differs from runc).
	cfg 'c["process"]["args"] = ["cat", "/proc/self/uid_map"]' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(awk 'NR == 1 { print $1, $2 }' <<<"$OUT")" = "0 0" ] ||
		fail "expected the nested namespace's map inside (0 0 ...), got '$OUT'"
	# The host sees the config's maps, on the state's pid and on the
	# container process alike (what a launcher reads).
	cfg 'c["process"]["args"] = ["sleep", sys.argv[1]]' "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc start "$id"
	expect_rc 0 || return
	wait_until "$WAIT_LIMIT" program_running || fail "the program did not start"
	oc state "$id"
	pid=$(jfield pid)
	wpid=$(user_process)
	maps=$("$PYTHON" -c 'import json, sys
c = json.load(open(sys.argv[1]))
for k in ("uidMappings", "gidMappings"):
    print(" ".join("%d %d %d" % (m["containerID"], m["hostID"], m["size"]) for m in c["linux"][k]))' \
		"$BUNDLE/config.json")
	for p in "$pid" "$wpid"; do
		got=$(for f in uid_map gid_map; do
			awk '{ s = s (NR > 1 ? " " : "") $1 " " $2 " " $3 } END { print s }' "/proc/$p/$f"
		done)
		[ "$got" = "$maps" ] || fail "host's /proc/$p/{uid,gid}_map: expected '$maps', got '$got'"
	done
	oc delete --force "$id"
	expect_rc 0
	end_case
}

# --preserve-fds N: the caller's fds 3..3+N-1 reach the container process
# (socket activation), and no other of cordon's; an fd the caller did not pass is refused.
t_preserve_fds() {
	local id=$CASE_ID-f
	setup_case
	echo "from-fd-3-$MARK" >"$CASE_DIR/in"
	chmod 644 "$CASE_DIR/in"
	mk_bundle b sh -c 'cat <&3; ls /proc/self/fd | sort -n | tr "\n" " "' || return
	oc run -b "$BUNDLE" --preserve-fds 1 "$id" 3<"$CASE_DIR/in"
	expect_rc 0
	grep -q "^from-fd-3-$MARK$" <<<"$OUT" || fail "the container did not read the caller's fd 3: '$OUT'"
	# ls's own directory fd is the only one above 3.
	grep -Eq '^0 1 2 3 4 $' <<<"$(tail -1 <<<"$OUT")" || fail "unexpected fds in the container: '$OUT'"
	oc create -b "$BUNDLE" --preserve-fds 1 "$id" 3<"$CASE_DIR/in"
	expect_rc 0
	oc start "$id"
	expect_rc 0
	wait_stopped "$id"
	oc delete "$id"
	expect_rc 0
	oc run -b "$BUNDLE" --preserve-fds 3 "$id" 3<"$CASE_DIR/in"
	expect_cordon_error USAGE "fd 4 is not one the caller passed"
	end_case
}

# mounts with idmap: host root makes them (files keep their owners inside,
# and what the container writes is the host owner's); rootless, refused.
t_idmap_mounts() {
	local id=$CASE_ID-i
	setup_case
	mkdir -p "$CASE_DIR/data"
	echo x >"$CASE_DIR/data/f"
	chown 0:0 "$CASE_DIR/data" "$CASE_DIR/data/f"
	mk_bundle b sh -c 'stat -c %u:%g /data/f /plain/f; echo w >/data/new' || return
	cfg 'c["mounts"] += [{"destination": "/data", "type": "bind", "source": sys.argv[1], "options": ["bind", "idmap"]},
                {"destination": "/plain", "type": "bind", "source": sys.argv[1], "options": ["bind", "ro"]}]' "$CASE_DIR/data"
	oc run -b "$BUNDLE" "$id"
	if [ "$MODE" = rootless ]; then
		expect_cordon_error SPEC "an idmapped mount needs host root"
		end_case
		return
	fi
	expect_rc 0
	[ "$OUT" = "$(printf '0:0\n65534:65534')" ] ||
		fail "expected root's file as 0 through the idmapped mount, nobody through the plain one: '$OUT'"
	[ "$(stat -c %u:%g "$CASE_DIR/data/new" 2>/dev/null)" = 0:0 ] ||
		fail "the container's write through the idmapped mount is not host root's"
	# A mount's own maps: host 0 seen as 7 (a user namespace made for them).
	cfg 'c["mounts"][-2]["uidMappings"] = [{"containerID": 7, "hostID": 0, "size": 1}]
c["mounts"][-2]["gidMappings"] = [{"containerID": 7, "hostID": 0, "size": 1}]'
	oc run -b "$BUNDLE" "$id"
	expect_rc_not 0 "the workload may not write as an unmapped owner"
	[ "$(head -1 <<<"$OUT")" != 0:0 ] || fail "the mount's own maps were not used: '$OUT'"
	end_case
}

# --- linux.namespaces paths -----------------------------------------------------

# A pod's namespaces (network, ipc, uts) are joined by path; exec joins them too.
t_ns_join() {
	local id=$CASE_ID-j ns=cordon-e2e-$$-$_case_n holder
	setup_case
	ip netns add "$ns" || { fail "ip netns add"; return; }
	ip -n "$ns" link add pod0 type veth peer name pod1
	# The holder of an IPC and a UTS namespace, with a host name and a queue of its own.
	unshare --ipc --uts sh -c "hostname pod-$MARK; ipcmk -Q >/dev/null; exec sleep $MARK" &
	holder=$!
	wait_until "$WAIT_LIMIT" test "$(readlink /proc/$holder/ns/uts)" != "$(readlink /proc/self/ns/uts)"
	sleep 0.2
	mk_bundle b sh -c 'grep -o pod0 /proc/net/dev; hostname; cat /proc/sysvipc/msg | wc -l' || return
	cfg 'c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": "77"}'
	cfg '
for n in c["linux"]["namespaces"]:
    if n["type"] == "network": n["path"] = "/run/netns/" + sys.argv[1]
    if n["type"] in ("ipc", "uts"): n["path"] = "/proc/%s/ns/%s" % (sys.argv[2], n["type"])
' "$ns" "$holder"
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$OUT" = "$(printf 'pod0\npod-%s\n2' "$MARK")" ] ||
		fail "expected the pod's interface, host name and message queue, got '$OUT'"
	[ "$(ip netns exec "$ns" cat /proc/sys/net/ipv4/ip_unprivileged_port_start)" = 77 ] ||
		fail "the joined namespace did not get the config's sysctl"
	cfg 'c["process"]["args"] = ["sleep", sys.argv[1]]' "$((MARK + 1))"
	oc run -b "$BUNDLE" -d "$id"
	expect_rc 0
	oc exec "$id" sh -c 'grep -o pod0 /proc/net/dev; hostname'
	expect_rc 0
	[ "$OUT" = "$(printf 'pod0\npod-%s' "$MARK")" ] || fail "exec: not in the pod's namespaces: '$OUT'"
	oc delete --force "$id"
	expect_rc 0
	kill "$holder"
	wait "$holder" 2>/dev/null
	ip netns del "$ns"
	end_case
}

# The caller's own namespaces are never joined; other types are not joinable;
# rootless, joining needs privileges over the namespace (and fails cleanly).
t_ns_join_refused() {
	local id=$CASE_ID-r
	setup_case
	mk_bundle b true || return
	cfg '
for n in c["linux"]["namespaces"]:
    if n["type"] == "network": n["path"] = "/proc/self/ns/net"
'
	oc run -b "$BUNDLE" "$id"
	if [ "$MODE" = rootful ]; then
		expect_cordon_error NAMESPACE "caller's own network namespace"
	else
		expect_cordon_error NAMESPACE "network namespace"
	fi
	mk_bundle b2 true || return
	cfg '
for n in c["linux"]["namespaces"]:
    if n["type"] == "pid": n["path"] = "/proc/1/ns/pid"
'
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "joining a pid namespace"
	mk_bundle b3 true || return
	cfg '
for n in c["linux"]["namespaces"]:
    if n["type"] == "uts": n["path"] = "/proc/1/ns/net"
'
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error NAMESPACE "uts"
	end_case
}

# --- config.json mounts, maskedPaths, readonlyPaths --------------------------

# mount_opts PATH: "OPTIONS FSTYPE SUPER-OPTIONS" of the topmost mount at PATH in
# the container's mountinfo, printed on $OUT.
mount_opts() {
	awk -v mp="$1" '$5 == mp {
		for (i = 7; i <= NF; i++) if ($i == "-") break
		opts = $6 " " $(i + 1) " " $(i + 3)
	} END { print opts }' <<<"$OUT"
}

# n_mounts: how many entries the bundle's config.json has in mounts (the next one's index).
n_mounts() {
	"$PYTHON" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["mounts"]))' "$BUNDLE/config.json"
}

t_mount_binds() {
	local ro=$CASE_DIR/private/ro rw=$CASE_DIR/rw id=$CASE_ID-b
	setup_case
	mk_dir "$CASE_DIR/private" "$ro" "$rw"
	# As in an engine's storage: only the caller (rootful: the host's root) may enter.
	chmod 700 "$CASE_DIR/private"
	echo "read-only $MARK" >"$ro/file"
	# The sandbox's root is not the owner on the host (rootful: a mapped id).
	chmod 777 "$rw"
	# shellcheck disable=SC2016 # expanded inside the container
	mk_bundle b sh -c 'cat /mnt/ro/file; touch /mnt/ro/new 2>/dev/null && echo RO-WRITABLE
		echo "from the container" >/srv/rw/out; cat /proc/self/mountinfo' || return
	cfg 'c["mounts"] += [
		{"destination": "/mnt/ro", "type": "bind", "source": sys.argv[1], "options": ["rbind", "ro", "rprivate"]},
		{"destination": "/srv/rw", "type": "none", "source": sys.argv[2], "options": ["bind", "rw", "noexec"]}]' \
		"$ro" "$rw" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_has "read-only $MARK"
	expect_out_lacks RO-WRITABLE
	[ ! -e "$ro/new" ] || fail "the read-only bind let a file through to the host"
	[ "$(cat "$rw/out" 2>/dev/null)" = "from the container" ] ||
		fail "the write to the rw bind did not land on the host"
	# nosuid only where the options say so (as mount(2)); nodev, cordon's default for a bind.
	[[ $(mount_opts /mnt/ro) == ro,nodev* ]] || fail "/mnt/ro: expected ro,nodev, got '$(mount_opts /mnt/ro)'"
	[[ $(mount_opts /srv/rw) == rw,nodev,noexec* ]] ||
		fail "/srv/rw: expected rw,nodev,noexec, got '$(mount_opts /srv/rw)'"
	end_case
}

t_mount_file_tmpfs() {
	local rootfs=$CASE_DIR/rootfs hosts=$CASE_DIR/hosts env=$CASE_DIR/containerenv id=$CASE_ID-f
	setup_case
	copy_rootfs "$rootfs" || return
	rm -f "$rootfs/etc/hosts"
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$rootfs"
	echo "10.1.2.3 host-$MARK" >"$hosts"
	echo "engine=test" >"$env"
	chmod 644 "$hosts" "$env"
	# shellcheck disable=SC2016 # expanded inside the container
	mk_bundle b sh -c 'cat /etc/hosts /run/.containerenv
		dd if=/dev/zero of=/run/big bs=1024 count=2048 2>/dev/null && echo RUN-UNBOUNDED
		stat -c "run %a" /run; cat /proc/self/mountinfo' || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"] += [
	{"destination": "/etc/hosts", "type": "bind", "source": sys.argv[2], "options": ["bind", "ro"]},
	{"destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "size=1m", "mode=710"]},
	{"destination": "/run/.containerenv", "type": "bind", "source": sys.argv[3], "options": ["bind", "ro"]}]
c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/tmp"] + [
	{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["size=3m"]}]' \
		"$rootfs" "$hosts" "$env" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_has "host-$MARK"
	expect_out_has "engine=test"
	expect_out_lacks RUN-UNBOUNDED
	expect_out_has "run 710"
	[ -f "$rootfs/etc/hosts" ] || fail "the missing /etc/hosts was not created as a file in the rootfs"
	[[ $(mount_opts /run) == *size=1024k* ]] || fail "/run: expected size=1024k, got '$(mount_opts /run)'"
	[[ $(mount_opts /tmp) == *size=3072k* ]] || fail "/tmp: the config's tmpfs (size=3072k) is not the one mounted: '$(mount_opts /tmp)'"
	end_case
}

t_mount_symlink_escape() {
	local rootfs=$CASE_DIR/rootfs src=$CASE_DIR/src name=cordon-escape-$MARK id=$CASE_ID-s
	setup_case
	copy_rootfs "$rootfs" || return
	ln -s / "$rootfs/etc/evil"
	ln -s ../../../../../../.. "$rootfs/etc/evil2"
	[ "$MODE" = rootless ] && chown -hR "$TEST_UID:$TEST_GID" "$rootfs"
	mk_dir "$src"
	echo "inside $MARK" >"$src/file"
	mk_bundle b sh -c "cat /$name/file /$name-2/file" || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"] += [
	{"destination": "/etc/evil/" + sys.argv[3], "type": "bind", "source": sys.argv[2], "options": ["rbind", "ro"]},
	{"destination": "/etc/evil2/" + sys.argv[3] + "-2", "type": "bind", "source": sys.argv[2], "options": ["rbind", "ro"]}]' \
		"$rootfs" "$src" "$name" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "inside $MARK"$'\n'"inside $MARK"
	[ ! -e "/$name" ] && [ ! -e "/$name-2" ] || { rmdir "/$name" "/$name-2" 2>/dev/null; fail "a mount point was created on the host's /"; }
	[ -d "$rootfs/$name" ] && [ -d "$rootfs/$name-2" ] || fail "the mount points were not made inside the rootfs"
	end_case
}

t_masked_readonly() {
	local rw=$CASE_DIR/rw id=$CASE_ID-m
	setup_case
	mk_dir "$rw"
	chmod 777 "$rw"
	mk_bundle b sh -c 'cat /etc/passwd | wc -c; echo "data:[$(ls /data)]"; echo x >/data/f || echo DATA-RO
		echo x >/srv/rw/f || echo SRV-RO; echo y >/scratch/f && echo SCRATCH-RW; cat /srv/rw/f
		cat /proc/self/mountinfo' || return
	cfg 'c["mounts"] += [
	{"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
	{"destination": "/data/sub", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
	{"destination": "/srv/rw", "type": "bind", "source": sys.argv[1], "options": ["bind", "rw"]},
	{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}]
c["linux"]["maskedPaths"] += ["/etc/passwd", "/data", "/no/such/path"]
c["linux"]["readonlyPaths"] += ["/srv/rw", "/no/such/dir"]' "$rw" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	# A masked file reads empty, a masked directory is an empty read-only tmpfs.
	[ "$(head -n 1 <<<"$OUT")" = 0 ] || fail "the masked /etc/passwd is not empty"
	expect_out_has DATA-RO
	expect_out_has "data:[]"
	expect_out_has SRV-RO
	expect_out_has SCRATCH-RW
	[ ! -e "$rw/f" ] || fail "a write went through the read-only path to the host"
	end_case
}

t_mount_sys() {
	local id=$CASE_ID-y
	setup_case
	mk_bundle b sh -c 'ls /sys/fs/cgroup; echo 1 >/sys/kernel/profiling 2>/dev/null || echo SYS-RO
		cat /proc/self/mountinfo' || return
	# The /sys entries `cordon spec` writes (mk_bundle takes them out).
	cfg 'c["mounts"] += [
	{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
	{"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "ro"]}]' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_has cgroup.controllers
	expect_out_has SYS-RO
	[[ $(mount_opts /sys/fs/cgroup) == ro,*\ cgroup2\ * ]] ||
		fail "/sys/fs/cgroup: expected a read-only cgroup2, got '$(mount_opts /sys/fs/cgroup)'"
	end_case
}

t_mount_errors() {
	local id=$CASE_ID-e file=$CASE_DIR/file n
	setup_case
	echo x >"$file"
	chmod 644 "$file"
	mk_bundle b true || return
	n=$(n_mounts)
	cfg 'c["mounts"] += [{"destination": "/x", "type": "bind", "source": "/no/such/source", "options": ["bind"]}]' || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error "PATH|MOUNT" "mounts[$n]"
	# A file cannot cover a directory: found only while mounting.
	cfg 'c["mounts"][-1:] = [
	{"destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
	{"destination": "/bin", "type": "bind", "source": sys.argv[1], "options": ["bind"]}]' "$file" || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error MOUNT "mounts[$((n + 1))] /bin"
	oc state "$id"
	expect_cordon_error STATE "$id"
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error MOUNT "mounts[$((n + 1))] /bin"
	cfg 'c["mounts"][-2:] = [{"destination": "/run", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m", "nr_inodes=lots"]}]' || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error MOUNT "mounts[$n] /run"
	cfg 'c["mounts"][-1:] = [{"destination": "/proc/cpuinfo", "type": "bind", "source": sys.argv[1], "options": ["bind"]}]' "$file" || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "mounts[$n].destination"
	end_case
}

# --- hooks ---------------------------------------------------------------------

# hooks_setup: $HOOKS, a directory of the mode's user bound at /mnt/rw in the
# container, holding hook.sh and the log every hook appends to ($HOOKS/log on
# the host, /mnt/rw/log inside); a bundle running `sleep $MARK` with it.
# hook.sh KIND LOG WHERE appends "KIND STATUS PID MARKS": STATUS and PID from
# the state on its stdin; MARKS: env= (HOOKVAR: the hook's env when it has
# one, else cordon's own on the host and nothing in the container), rootfs
# (its / is the container's), and for WHERE=host
# pid1 (the pid is the container's pid 1) and procroot (its /proc/PID/root is
# the container's root).
hooks_setup() {
	HOOKS=$CASE_DIR/hooks
	mk_dir "$HOOKS"
	cat >"$HOOKS/hook.sh" <<'HOOK'
#!/bin/sh
marks="env=${HOOKVAR:-unset}"
PATH=/usr/bin:/bin
st=$(cat)
status=$(printf '%s' "$st" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p')
pid=$(printf '%s' "$st" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
[ -e /linuxrc ] && [ ! -e /etc/debian_version ] && marks="$marks rootfs"
if [ "$3" = host ] && [ "$pid" != 0 ]; then
	grep -q "^NSpid:.*[[:space:]]1\$" "/proc/$pid/status" 2>/dev/null && marks="$marks pid1"
	[ -e "/proc/$pid/root/linuxrc" ] && marks="$marks procroot"
fi
echo "$1 $status $pid $marks" >>"$2"
HOOK
	chmod 755 "$HOOKS/hook.sh"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$HOOKS/hook.sh"
	mk_bundle b sleep "$MARK" || return 1
	cfg 'c["mounts"].append({"destination": "/mnt/rw", "type": "bind", "source": sys.argv[1], "options": ["bind", "rw"]})' "$HOOKS"
}

# hook_log: the log's lines, on $OUT.
hook_log() { OUT=$(cat "$HOOKS/log" 2>/dev/null); }

t_hooks_order() {
	local id=$CASE_ID-h pid procroot='' expected
	setup_case
	hooks_setup || return
	# cordon's own environment: what a hook on the host without an env gets.
	XENV=(HOOKVAR=inherited)
	cfg 'h = lambda kind, log, where, **kw: dict(path=sys.argv[1] + "/hook.sh", args=["hook.sh", kind, log, where], **kw)
host = sys.argv[1] + "/log"
c["hooks"] = {
	"prestart": [h("prestart", host, "host", env=["HOOKVAR=yes"])],
	"createRuntime": [h("createRuntime", host, "host")],
	"createContainer": [h("createContainer", "/mnt/rw/log", "container")],
	"startContainer": [dict(path="/mnt/rw/hook.sh", args=["hook.sh", "startContainer", "/mnt/rw/log", "container"])],
	"poststart": [h("poststart", host, "host", timeout=30)],
	"poststop": [h("poststop", host, "host")],
}' "$HOOKS" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	expect_err_empty "create warned or failed"
	expect_status "$id" created
	pid=$(jfield pid)
	# Host root may look into the init's /proc; the rootless caller not (it is not dumpable).
	[ "$MODE" = rootful ] && procroot=' procroot'
	hook_log
	expected="prestart creating $pid env=yes pid1$procroot
createRuntime creating $pid env=inherited pid1$procroot
createContainer creating $pid env=unset rootfs"
	expect_out_eq "$expected" "create: expected the create-time hooks in order"
	no_procs_matching "sleep $MARK" || fail "the program ran before start"
	oc start "$id"
	expect_rc 0
	expect_err_empty "start warned or failed"
	hook_log
	expected+="
startContainer created $pid env=unset rootfs
poststart running $pid env=inherited pid1$procroot"
	expect_out_eq "$expected" "start: expected startContainer, then poststart"
	oc kill "$id" KILL
	wait_stopped "$id"
	hook_log
	expect_out_eq "$expected" "no poststop before delete"
	oc delete "$id"
	expect_rc 0
	expect_err_empty "delete warned or failed"
	hook_log
	expect_out_eq "$expected
poststop stopped 0 env=inherited" "delete: expected poststop"
	# run --bundle: every kind once, in order, poststop at its end.
	rm -f "$HOOKS/log"
	cfg 'c["process"]["args"] = ["true"]' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	hook_log
	[ "$(cut -d' ' -f1,2 <<<"$OUT" | tr '\n' ' ')" = "prestart creating createRuntime creating createContainer creating startContainer created poststart running poststop stopped " ] ||
		fail "run --bundle: expected every hook once, in order"
	XENV=()
	end_case
}

t_hooks_fail() {
	local id=$CASE_ID-f
	setup_case
	hooks_setup || return
	# A failing createRuntime: create fails, nothing is left; poststop still runs.
	cfg 'c["hooks"] = {
	"createRuntime": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 3"]}],
	"poststop": [{"path": sys.argv[1] + "/hook.sh", "args": ["hook.sh", "poststop", sys.argv[1] + "/log", "host"]}],
}' "$HOOKS" || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error HOOK "hooks.createRuntime[0] /bin/sh: exited with status 3"
	oc state "$id"
	expect_cordon_error STATE "does not exist"
	no_procs_matching "$id" "sleep $MARK" || fail "processes of the container remain"
	check "the state root is empty after the failed create" root_empty
	hook_log
	expect_out_eq "poststop stopped 0 env=unset" "expected poststop after the failure"
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error HOOK "hooks.createRuntime[0]"
	# A timeout kills the hook (here and in the container) and fails the create.
	cfg 'c["hooks"] = {"prestart": [{"path": "/bin/sleep", "args": ["sleep", sys.argv[1]], "timeout": 1}]}' "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error HOOK "hooks.prestart[0] /bin/sleep: timed out after 1 s"
	no_procs_matching "sleep $MARK" || fail "the hook survived its timeout"
	printf '#!/bin/sh\nsleep %s\n' "$MARK" >"$HOOKS/slow.sh"
	chmod 755 "$HOOKS/slow.sh"
	cfg 'c["hooks"] = {"createContainer": [{"path": sys.argv[1] + "/slow.sh", "timeout": 1}]}' "$HOOKS" || return
	oc create -b "$BUNDLE" "$id"
	expect_cordon_error HOOK "hooks.createContainer[0] $HOOKS/slow.sh: timed out"
	no_procs_matching "sleep $MARK" || fail "the hook survived its timeout"
	# A failing startContainer fails start: the container is stopped.
	cfg 'c["hooks"] = {"startContainer": [{"path": "/no/such/hook"}]}' || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	oc start "$id"
	expect_cordon_error HOOK "hooks.startContainer[0] /no/such/hook"
	wait_stopped "$id"
	no_procs_matching "sleep $MARK" || fail "the program ran after a failed startContainer"
	oc delete "$id"
	expect_rc 0
	end_case
}

t_hooks_warn() {
	local id=$CASE_ID-w
	setup_case
	hooks_setup || return
	# poststart and poststop failures are warnings; the next hook still runs.
	cfg 'c["hooks"] = {
	"poststart": [{"path": "/bin/false"}, {"path": sys.argv[1] + "/hook.sh", "args": ["hook.sh", "poststart", sys.argv[1] + "/log", "host"]}],
	"poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 5"]}],
}' "$HOOKS" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	oc start "$id"
	expect_rc 0
	expect_err_eq "cordon: warning: hooks.poststart[0] /bin/false: exited with status 1"
	expect_status "$id" running
	hook_log
	[[ $OUT == "poststart running "* ]] || fail "the second poststart hook did not run"
	oc delete -f "$id"
	expect_rc 0
	expect_err_eq "cordon: warning: hooks.poststop[0] /bin/sh: exited with status 5"
	cfg 'c["process"]["args"] = ["sh", "-c", "exit 4"]' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 4
	expect_err_has "warning: hooks.poststart[0] /bin/false: exited with status 1"
	expect_err_has "warning: hooks.poststop[0] /bin/sh: exited with status 5"
	end_case
}

# init_in_read INIT: the init has released its workload and waits in
# read(2) on the report pipe for its execve (or its death).
init_in_read() { [[ $(cat "/proc/$1/wchan" 2>/dev/null) == *pipe_read* ]]; }

# The monitor of `create` killed while it makes the container's cgroups
# (right after a mkdir, before the list of what it made is written): the
# launcher's delete removes them, since they were named in the state
# before the first was made. Before, delete found no list and left them.
KILLAT=${SEC_KILLAT:-$(dirname "$CORDON")/tests/security/sec-killat}
cg_v2() { [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; }
cg_named() { find /sys/fs/cgroup -type d -name "$1" 2>/dev/null; }

t_create_killed_making_cgroups() {
	local id=$CASE_ID-k out want=3
	setup_case
	[ -x "$KILLAT" ] || { skip_or_fail "no sec-killat at $KILLAT (tests/security is not built)"; return; }
	! cg_v2 || want=1 # one hierarchy
	mk_bundle b sleep "$MARK" || return
	# To a file, not a pipe: a process of it left stopped could hold a pipe open for good.
	(cd "$WS" && "$KILLAT" "cordon-$id:$want" "$CORDON" --root "$OROOT" create -b "$BUNDLE" "$id") >"$CASE_DIR/killat.out" 2>&1
	out=$(<"$CASE_DIR/killat.out")
	[[ $out == *"killed "* ]] || { fail "sec-killat did not kill the monitor after cgroup $want: $out"; oc delete -f "$id" >/dev/null; return; }
	[ "$(cg_named "cordon-$id" | grep -c .)" -eq "$want" ] ||
		fail "expected the $want cgroup(s) made before the kill, found: $(cg_named "cordon-$id")"
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || fail "a process of the container outlived its monitor"
	oc delete -f "$id"
	expect_rc 0
	[ -z "$(cg_named "cordon-$id")" ] || fail "after delete, cgroups remain: $(cg_named "cordon-$id")"
	end_case
}

# The same kill with a linux.cgroupsPath that exists already, empty, in
# one hierarchy (an engine may make it ahead; create takes it over):
# delete after the kill removes only what was planned, the directories
# that were not there yet. The one that was there before is no plan's and
# stays (a plan of every leaf, there or not, had delete remove it).
t_create_killed_existing_cgroup_kept() {
	local id=$CASE_ID-e path=e2e-pre-$CASE_ID out pre=/sys/fs/cgroup/pids
	setup_case
	[ -x "$KILLAT" ] || { skip_or_fail "no sec-killat at $KILLAT (tests/security is not built)"; return; }
	cg_v2 && { skip_layout "one cgroup hierarchy (v2): with the path there already, nothing is made to kill after"; return; }
	[ -d "$pre" ] || { skip_layout "no v1 pids hierarchy at $pre"; return; }
	mk_dir "$pre/$path"
	mk_bundle b sleep "$MARK" || return
	cfg "c['linux']['cgroupsPath'] = '/' + sys.argv[1]" "$path" || return
	# To a file, not a pipe: a process of it left stopped could hold a pipe open for good.
	(cd "$WS" && "$KILLAT" "$path:1" "$CORDON" --root "$OROOT" create -b "$BUNDLE" "$id") >"$CASE_DIR/killat.out" 2>&1
	out=$(<"$CASE_DIR/killat.out")
	[[ $out == *"killed "* ]] || fail "sec-killat did not kill the monitor after its first cgroup: $out"
	[ "$(cg_named "$path" | grep -c .)" -eq 2 ] || fail "expected $pre/$path and the one made, found: $(cg_named "$path")"
	wait_until "$WAIT_LIMIT" no_procs_matching "$MARK" || fail "a process of the container outlived its monitor"
	oc delete -f "$id"
	expect_rc 0
	[ "$(cg_named "$path")" = "$pre/$path" ] ||
		fail "after delete, expected $pre/$path alone (there before the container), found: $(cg_named "$path")"
	rmdir "$pre/$path"
	end_case
}

# A workload killed before its execve never ran its program: start fails,
# the state says stopped with 137, no poststart hook runs. It is held
# (SIGSTOP) after the release and killed there. The close-on-exec report
# pipe's EOF was taken for an execve: start succeeded and said running.
t_start_killed_before_execve() {
	local id=$CASE_ID-c init w
	setup_case
	mk_bundle b sh -c "echo ran-$MARK; sleep 600" || return
	cfg "c['hooks'] = {'poststart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'echo poststart >>' + sys.argv[1]]}]}" "$CASE_DIR/post" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc state "$id"
	init=$(jfield pid)
	w=$(user_process)
	[ "$(cat "/proc/$init/wchan" 2>/dev/null)" != 0 ] ||
		{ skip_or_fail "the init's wchan cannot be read here (not root)"; oc delete -f "$id" >/dev/null; return; }
	kill -STOP "$w"
	oc_bg start "$id"
	wait_until "$WAIT_LIMIT" init_in_read "$init" || fail "the init did not release the workload"
	kill -KILL "$w"
	wait_bg_for "$WAIT_LIMIT" || return
	expect_cordon_error STATE "exited with status 137 before it was started"
	expect_status "$id" stopped
	[ "$(jfield exitStatus)" = 137 ] || fail "expected exitStatus 137"
	expect_out_lacks "ran-$MARK"
	[ ! -e "$CASE_DIR/post" ] || fail "the poststart hook ran for a workload that never did"
	oc delete "$id"
	expect_rc 0
	end_case
}

# state_watching: the state command in the background waits for the
# monitor's record (it watches the container's directory).
state_watching() {
	local pid fd
	pid=$(client_of "--root $OROOT state") || return 1
	for fd in /proc/"$pid"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = anon_inode:inotify ] && return 0
	done
	return 1
}

# The monitor records the end (stopped, the exit status) a moment after the
# container's process died; state said "stopped" without an exitStatus in
# between (the kill case above, under load). With the monitor held
# (SIGSTOP), state waits for its record.
t_state_waits_for_the_record() {
	local id=$CASE_ID-c init mon
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id" && oc start "$id"
	expect_rc 0 || return
	oc state "$id"
	init=$(jfield pid)
	mon=$(monitor_of "$id")
	[ -n "$mon" ] && kill -STOP "$mon" || { fail "no monitor to stop"; return; }
	oc kill "$id" KILL
	expect_rc 0
	wait_until "$WAIT_LIMIT" gone "$init" || fail "the container did not end"
	oc_bg state "$id"
	wait_until "$WAIT_LIMIT" eval 'bg_ended || state_watching'
	kill -CONT "$mon"
	wait_bg_for "$WAIT_LIMIT" || return
	expect_rc 0
	[ "$(jfield status)" = stopped ] || fail "expected status stopped"
	[ "$(jfield exitStatus)" = 137 ] || fail "expected exitStatus 137 once stopped"
	oc delete "$id"
	expect_rc 0
	end_case
}

each_mode "create, state, start, kill, state stopped, delete" t_lifecycle
each_mode "run --bundle: exit statuses, exec failure, --detach" t_run_bundle
each_mode "kill: signal names and numbers, --all, stopped refused" t_kill_signals
each_mode "a workload killed before its execve: start fails, stopped 137, no poststart" t_start_killed_before_execve
rootful_only "create's monitor killed while it made the cgroups: delete removes them" t_create_killed_making_cgroups
rootful_only "create's monitor killed while it made the cgroups: a cgroupsPath there before stays" t_create_killed_existing_cgroup_kept
each_mode "state waits for the monitor's record: stopped comes with its exitStatus" t_state_waits_for_the_record
each_mode "delete: running refused, --force, a created one" t_delete
each_mode "refusals: no id, bad bundle, bad id, console socket without terminal, twice, terminal without socket" t_refusals
each_mode "a missing program fails create; an execve failure at start: state says 127" t_exec_failure_at_start
each_mode "--log-format json and --log FILE" t_log_json
each_mode "list: table, --quiet, --format json" t_list
each_mode "root.readonly false: the rootfs is writable" t_root_writable
run_case rootful "root on an overlay, writable: the host's ids; read-only: cordon's range" t_root_overlay_host_ids
each_mode "process.user: additionalGids and umask, for exec too; domainname; personality" t_user_groups_umask
each_mode "linux.sysctl: network, IPC and UTS values in the container only" t_sysctl
each_mode "linux.sysctl user.max_*: the outer user namespace's limits" t_sysctl_user
each_mode "process.oomScoreAdj: raised by anyone, lowered with CAP_SYS_RESOURCE only" t_oom_score_adj
each_mode "linux.devices: a host node bound, a FIFO made, a wrong number refused" t_devices
each_mode "linux.uidMappings/gidMappings: the launcher's ids" t_config_id_maps
each_mode "create and run --bundle --preserve-fds: the caller's fds, and only those" t_preserve_fds
each_mode "mounts: idmapped (host root; refused rootless), with the container's or the mount's maps" t_idmap_mounts
rootful_only "linux.namespaces: network, ipc and uts joined by path, by exec too" t_ns_join
each_mode "linux.namespaces: the caller's own refused, pid not joinable, a wrong type" t_ns_join_refused
each_mode "the state's pid is in the container's network namespace" t_pid_network_namespace
each_mode "mounts: a ro bind (below a 0700 directory) is read-only, a rw bind writes to the host" t_mount_binds
each_mode "mounts: a file bind created over /etc/hosts, tmpfs /run with size and mode, a bind in it, the config's /tmp" t_mount_file_tmpfs
each_mode "mounts: a destination through a rootfs symlink to / stays in the rootfs" t_mount_symlink_escape
each_mode "maskedPaths and readonlyPaths of the config" t_masked_readonly
each_mode "mounts: sysfs read-only, cgroup as the sandbox's cgroup2" t_mount_sys
each_mode "mounts: a missing source, a file over a directory, bad tmpfs data fail with 125" t_mount_errors
each_mode "hooks: every kind once, in order, with its status, where it runs, their env or cordon's" t_hooks_order
each_mode "hooks: a failing createRuntime fails create, leaves nothing; timeouts kill; a failing startContainer fails start" t_hooks_fail
each_mode "hooks: failing poststart and poststop only warn" t_hooks_warn
done_testing
