#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: OCI conformance (docs/oci.md): what config.json asks for is what the
# container sees, read back from inside: the capability sets and
# NoNewPrivs of /proc/self/status, setuid programs, ambient capabilities,
# the mounts of /proc/self/mountinfo (sources, options, order).
#
# SEC_PROBE (tests/security's static probe) is copied into a rootfs for
# what busybox cannot show (a setuid program's ids, a bind to a port).
. "$(dirname "$0")/oci-lib.sh"

SEC_PROBE=${SEC_PROBE:-}

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

# status_field NAME: the value of NAME in the /proc/self/status on $OUT.
status_field() { awk -v k="$1:" '$1 == k { print $2 }' <<<"$OUT"; }

# expect_caps INH PRM EFF BND AMB: the five sets on $OUT (hex, 16 digits).
expect_caps() {
	local names=(CapInh CapPrm CapEff CapBnd CapAmb) want=("$@") i got
	for i in 0 1 2 3 4; do
		got=$(status_field "${names[$i]}")
		[ "$got" = "${want[$i]}" ] || fail "${names[$i]}: expected ${want[$i]}, got '$got'"
	done
}

# probe_rootfs: a copy of the rootfs with the probe as /bin/probe and a
# setuid-root copy of it as /bin/suid-probe; sets ROOTFS_COPY.
probe_rootfs() {
	if [ -z "$SEC_PROBE" ]; then
		skip_or_fail "no sec-probe in this build (SEC_PROBE is not set)"
		return 1
	fi
	ROOTFS_COPY=$CASE_DIR/rootfs
	copy_rootfs "$ROOTFS_COPY" || return 1
	cp "$SEC_PROBE" "$ROOTFS_COPY/bin/probe"
	cp "$SEC_PROBE" "$ROOTFS_COPY/bin/suid-probe"
	# The sandbox's root owns the rootfs: host root's files (idmapped), the caller's rootless.
	[ "$MODE" = rootless ] && chown -R "$TEST_UID:$TEST_GID" "$ROOTFS_COPY"
	chmod 4755 "$ROOTFS_COPY/bin/suid-probe"
}

# user_1000: the process runs as uid and gid 1000. Rootless, the config
# maps the caller to 0 and the subordinate range above it (the caller's
# own id alone would leave 1000 unmapped).
user_1000() {
	local base
	cfg 'c["process"]["user"] = {"uid": 1000, "gid": 1000}' || return 1
	[ "$MODE" = rootless ] || return 0
	base=$(awk -F: -v u="$CORDON_TEST_USER" '$1 == u { print $2; exit }' /etc/subuid)
	cfg 'u = [{"containerID": 0, "hostID": int(sys.argv[1]), "size": 1}, {"containerID": 1, "hostID": int(sys.argv[3]), "size": 65536}]
g = [{"containerID": 0, "hostID": int(sys.argv[2]), "size": 1}, {"containerID": 1, "hostID": int(sys.argv[3]), "size": 65536}]
c["linux"]["uidMappings"] = u; c["linux"]["gidMappings"] = g' "$TEST_UID" "$TEST_GID" "$base"
}

# Bits: CAP_KILL 5, CAP_NET_BIND_SERVICE 10, CAP_NET_RAW 13, CAP_SYS_ADMIN 21.
CAPS5='{"bounding": ["CAP_SYS_ADMIN", "CAP_NET_RAW", "CAP_KILL", "CAP_NO_SUCH_ONE"],
	"effective": ["CAP_KILL"], "permitted": ["CAP_KILL", "CAP_NET_RAW"],
	"inheritable": ["CAP_NET_RAW"], "ambient": ["CAP_NET_RAW"]}'

# All five sets as the config gives them, for root and another uid (the
# ambient one raised after the uid change); a capability outside cordon
# run's safe set (SYS_ADMIN) is the config's to grant; an unknown name is
# a warning, not an error.
t_caps_sets() {
	local id=$CASE_ID-c
	setup_case
	mk_bundle b cat /proc/self/status || return
	cfg 'c["process"]["capabilities"] = json.loads(sys.argv[1])' "$CAPS5" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	expect_err_has "CAP_NO_SUCH_ONE"
	# Root: execve raises permitted and effective to the bounding and
	# inheritable sets, but no_new_privs keeps them within the permitted set.
	expect_caps 0000000000002000 0000000000002020 0000000000002020 0000000000202020 0000000000002000
	cfg 'c["process"]["noNewPrivileges"] = False' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	expect_caps 0000000000002000 0000000000202020 0000000000202020 0000000000202020 0000000000002000
	user_1000 || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	# Another uid keeps what is ambient, and only that.
	expect_caps 0000000000002000 0000000000002000 0000000000002000 0000000000202020 0000000000002000
	# No capabilities object: nothing at all, for root too.
	cfg 'c["process"].pop("capabilities"); c["process"]["user"] = {"uid": 0, "gid": 0}
c["linux"].pop("uidMappings", None); c["linux"].pop("gidMappings", None)' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	expect_caps 0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000
	end_case
}

# exec --cap adds any capability the kernel knows to the bounding,
# permitted and effective sets; an unknown one is a warning.
t_exec_caps() {
	local id=$CASE_ID-e
	setup_case
	mk_bundle b sleep "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc exec --cap CAP_SYS_ADMIN --cap CAP_NO_SUCH_ONE "$id" cat /proc/self/status
	expect_rc 0
	expect_err_has "CAP_NO_SUCH_ONE"
	[ $((0x$(status_field CapBnd) & 0x200000)) != 0 ] || fail "exec --cap CAP_SYS_ADMIN: not in the bounding set"
	[ $((0x$(status_field CapEff) & 0x200000)) != 0 ] || fail "exec --cap CAP_SYS_ADMIN: not effective"
	oc delete --force "$id"
	expect_rc 0
	end_case
}

# Under cordon's network annotations the container keeps cordon run's policy.
t_caps_policy_net() {
	local id=$CASE_ID-p
	setup_case
	ANNOTATIONS='{"run.cordon.net.allow": "192.0.2.1"}' mk_bundle b true || return
	cfg 'c["process"]["capabilities"]["bounding"].append("CAP_NET_ADMIN")' || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "CAP_NET_ADMIN is refused with annotations.run.cordon.net.allow"
	end_case
}

# process.noNewPrivileges as the config says; run.cordon.no-new-privileges
# "true" and exec --no-new-privs force it; cordon run always sets it.
t_no_new_privs() {
	local id=$CASE_ID-n
	setup_case
	mk_bundle b grep NoNewPrivs /proc/self/status || return
	cfg 'c["process"]["noNewPrivileges"] = False' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "NoNewPrivs:	0" "noNewPrivileges false: expected NoNewPrivs 0"
	cfg 'c["process"].pop("noNewPrivileges")' || return
	oc run -b "$BUNDLE" "$id"
	expect_out_eq "NoNewPrivs:	0" "noNewPrivileges absent (false): expected NoNewPrivs 0"
	cfg 'c["process"]["noNewPrivileges"] = True' || return
	oc run -b "$BUNDLE" "$id"
	expect_out_eq "NoNewPrivs:	1" "noNewPrivileges true: expected NoNewPrivs 1"
	cfg 'c["process"]["noNewPrivileges"] = False; c["annotations"] = {"run.cordon.no-new-privileges": "true"}' || return
	oc run -b "$BUNDLE" "$id"
	expect_out_eq "NoNewPrivs:	1" "the annotation: expected NoNewPrivs 1"
	cfg 'c["annotations"] = {"run.cordon.no-new-privileges": "yes"}' || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "run.cordon.no-new-privileges: expected 'true' or 'false'"
	cfg 'c["annotations"] = {}; c["process"]["args"] = ["sleep", sys.argv[1]]' "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc exec "$id" grep NoNewPrivs /proc/self/status
	expect_out_eq "NoNewPrivs:	0" "exec: expected the config's NoNewPrivs 0"
	oc exec --no-new-privs "$id" grep NoNewPrivs /proc/self/status
	expect_out_eq "NoNewPrivs:	1" "exec --no-new-privs: expected NoNewPrivs 1"
	oc delete --force "$id"
	crun -- grep NoNewPrivs /proc/self/status
	expect_out_eq "NoNewPrivs:	1" "cordon run: expected NoNewPrivs 1"
	end_case
}

# A setuid-root program of the image works for another uid where the
# config leaves no_new_privs off, and gains nothing where it sets it.
t_setuid_program() {
	local id=$CASE_ID-s
	setup_case
	probe_rootfs || return
	mk_bundle b /bin/suid-probe ids || return
	cfg 'c["root"]["path"] = sys.argv[1]; c["process"]["noNewPrivileges"] = False' "$ROOTFS_COPY" || return
	user_1000 || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "ids=1000,0,0:1000,1000,1000" "noNewPrivileges false: the setuid program did not run as root"
	cfg 'c["process"]["noNewPrivileges"] = True' || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "ids=1000,1000,1000:1000,1000,1000" "noNewPrivileges true: the setuid program gained root"
	end_case
}

# An ambient capability lets a program of another uid use it without file
# capabilities: NET_BIND_SERVICE binds port 80.
t_ambient_bind() {
	local id=$CASE_ID-a
	setup_case
	probe_rootfs || return
	mk_bundle b /bin/probe bind:80 || return
	cfg 'c["root"]["path"] = sys.argv[1]; n = ["CAP_NET_BIND_SERVICE"]
c["process"]["capabilities"] = {"bounding": n, "permitted": n, "inheritable": n, "ambient": n}' "$ROOTFS_COPY" || return
	user_1000 || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "bind:80=ok" "ambient NET_BIND_SERVICE: port 80 not bound"
	cfg 'c["process"]["capabilities"]["ambient"] = []' || return
	oc run -b "$BUNDLE" "$id"
	expect_out_eq "bind:80=EACCES" "without the ambient capability: expected EACCES"
	end_case
}

# --- mounts ----------------------------------------------------------------

# mount_line DEST: the last mountinfo line on $OUT whose mount point is DEST,
# as "OPTIONS FSTYPE SOURCE SUPER-OPTIONS".
mount_line() {
	awk -v mp="$1" '$5 == mp {
		for (i = 7; i <= NF; i++) if ($i == "-") break
		line = $6 " " $(i + 1) " " $(i + 2) " " $(i + 3)
	} END { print line }' <<<"$OUT"
}

# in_order DEST...: each DEST's first mount comes after the one before it in $OUT's mountinfo.
in_order() {
	awk -v list="$*" 'BEGIN { n = split(list, want, " ") }
		{ if (!($5 in seen)) { seen[$5] = NR } }
		END { last = 0; for (i = 1; i <= n; i++) { if (!(want[i] in seen) || seen[want[i]] < last) exit 1; last = seen[want[i]] } }' <<<"$OUT"
}

# A new filesystem keeps its source; the config's mounts appear in its
# order; a filesystem's options on a bind are ignored (as by mount(2)),
# strictatime is the tmpfs's and leaves a bind's locked atime as it is;
# suid and dev are honoured; nodev is a bind's default.
t_mount_sources_options_order() {
	local src=$CASE_DIR/src id=$CASE_ID-o
	setup_case
	mk_dir "$src"
	mk_bundle b cat /proc/self/mountinfo || return
	cfg 'c["mounts"] = [m for m in c["mounts"] if m["destination"] not in ("/dev/shm", "/dev/mqueue", "/tmp")]
c["mounts"] += [
	{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "nodev", "mode=1777", "size=1m"]},
	{"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue"},
	{"destination": "/srv/b1", "type": "bind", "source": sys.argv[1], "options": ["rbind", "mode=755", "size=65536k", "strictatime"]},
	{"destination": "/run", "type": "tmpfs", "source": "run-" + sys.argv[2], "options": ["strictatime", "suid", "dev", "size=1m"]},
	{"destination": "/srv/b2", "type": "bind", "source": sys.argv[1], "options": ["bind", "dev", "nosuid"]}]' "$src" "$MARK" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	[[ $(mount_line /dev/shm) == *" tmpfs shm "* ]] || fail "/dev/shm: expected source shm, got '$(mount_line /dev/shm)'"
	[[ $(mount_line /dev/mqueue) == *" mqueue mqueue "* ]] || fail "/dev/mqueue: expected source mqueue, got '$(mount_line /dev/mqueue)'"
	[[ $(mount_line /run) == *" tmpfs run-$MARK "* ]] || fail "/run: expected source run-$MARK, got '$(mount_line /run)'"
	in_order /proc /dev /dev/pts /dev/shm /dev/mqueue /srv/b1 /run /srv/b2 ||
		fail "the mounts are not in the config's order"
	local run b1 b2
	run=$(mount_line /run)
	b1=$(mount_line /srv/b1)
	b2=$(mount_line /srv/b2)
	[[ ${run%% *} != *nosuid* && ${run%% *} != *nodev* && ${run%% *} != *relatime* ]] ||
		fail "/run: expected suid, dev and strictatime, got '$run'"
	[[ ${b1%% *} == *nodev* && ${b1%% *} != *nosuid* ]] || fail "/srv/b1: expected nodev and no nosuid, got '$b1'"
	[[ ${b2%% *} == *nosuid* && ${b2%% *} != *nodev* ]] || fail "/srv/b2: expected nosuid and dev, got '$b2'"
	end_case
}

# A config gets only the mounts it lists: no /tmp, /dev/shm or /dev/mqueue
# of cordon's, so a read-only rootfs without /tmp, which the container's
# ids could not write, starts.
t_no_extra_mounts() {
	local rootfs=$CASE_DIR/rootfs id=$CASE_ID-x
	setup_case
	copy_rootfs "$rootfs" || return
	rm -rf "$rootfs/tmp"
	chmod 555 "$rootfs"
	mk_bundle b cat /proc/self/mountinfo || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"] = [m for m in c["mounts"] if m["destination"] not in ("/dev/shm", "/dev/mqueue", "/tmp")]' "$rootfs" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0 || return
	local d
	for d in /tmp /dev/shm /dev/mqueue; do
		[ -z "$(mount_line "$d")" ] || fail "$d is mounted though the config does not list it"
	done
	[ ! -e "$rootfs/tmp" ] || fail "/tmp was created in the rootfs"
	chmod 755 "$rootfs"
	end_case
}

# A destination that is a dangling symlink is created through, inside the
# root (never on the host), as runc and crun do.
t_mount_dangling_symlink() {
	local rootfs=$CASE_DIR/rootfs src=$CASE_DIR/src name=cordon-dangling-$MARK id=$CASE_ID-d
	setup_case
	copy_rootfs "$rootfs" || return
	ln -s "../srv/$name/not/here" "$rootfs/etc/rel"
	ln -s "/$name/abs" "$rootfs/etc/abs"
	[ "$MODE" = rootless ] && chown -hR "$TEST_UID:$TEST_GID" "$rootfs"
	mk_dir "$src"
	echo "inside $MARK" >"$src/file"
	chmod 644 "$src/file"
	mk_bundle b sh -c 'cat /etc/rel /etc/abs/file' || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"] += [
	{"destination": "/etc/rel", "type": "bind", "source": sys.argv[2] + "/file", "options": ["bind", "ro"]},
	{"destination": "/etc/abs", "type": "bind", "source": sys.argv[2], "options": ["rbind", "ro"]}]' \
		"$rootfs" "$src" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "inside $MARK"$'\n'"inside $MARK"
	[ ! -e "/$name" ] || { rm -rf "/${name:?}"; fail "the link's target was created on the host's /"; }
	[ -f "$rootfs/srv/$name/not/here" ] && [ -d "$rootfs/$name/abs" ] ||
		fail "the links' targets were not made inside the rootfs"
	end_case
}

# A destination reached through relative symlinks' ".." while the host
# renames (a rename or mount anywhere makes the kernel's scoped walk fail
# with EAGAIN, "try again"): every one of RACE_RUNS containers is made.
RACE_RUNS=${RACE_RUNS:-15} RACE_LINKS=${RACE_LINKS:-1} RACE_DOTS=${RACE_DOTS:-100}
t_mount_dotdot_renames() {
	local rootfs=$CASE_DIR/rootfs src=$CASE_DIR/src id=$CASE_ID-r renamer i bad=0 last='' dots
	setup_case
	copy_rootfs "$rootfs" || return
	# Many a ".." on the way (RACE_LINKS links of RACE_DOTS each): each is a
	# point where the walk finds the race. Not too many: a walk so long
	# that nearly every try meets a rename would fail even tried again.
	mkdir -p "$rootfs/srv/d" "$rootfs/srv/a"
	touch "$rootfs/srv/a/b"
	dots=$(printf 'd/../%.0s' $(seq "$RACE_DOTS"))
	ln -s "${dots}a/b" "$rootfs/srv/l$RACE_LINKS"
	for i in $(seq $((RACE_LINKS - 1)) -1 1); do
		ln -s "${dots}l$((i + 1))" "$rootfs/srv/l$i"
	done
	ln -s ../srv/l1 "$rootfs/etc/rel"
	[ "$MODE" = rootless ] && chown -hR "$TEST_UID:$TEST_GID" "$rootfs"
	mk_dir "$src"
	echo "inside $MARK" >"$src/file"
	chmod 644 "$src/file"
	mk_bundle b cat /srv/a/b || return
	cfg 'c["root"]["path"] = sys.argv[1]
c["mounts"].append({"destination": "/etc/rel", "type": "bind", "source": sys.argv[2], "options": ["bind", "ro"]})' \
		"$rootfs" "$src/file" || return
	touch "$CASE_DIR/r0"
	"$PYTHON" -c 'import os, sys
a, b = sys.argv[1] + "/r0", sys.argv[1] + "/r1"
while os.path.exists(a):
    os.rename(a, b)
    os.rename(b, a)' "$CASE_DIR" &
	renamer=$!
	for i in $(seq "$RACE_RUNS"); do
		oc run -b "$BUNDLE" "$id"
		[ "$RC" = 0 ] && [ "$OUT" = "inside $MARK" ] || { bad=$((bad + 1)); last=$ERR; }
	done
	kill "$renamer"
	wait "$renamer" 2>/dev/null
	[ "$bad" = 0 ] || fail "$bad of $RACE_RUNS containers failed (the last: $last)"
	end_case
}

# linux.resources.unified: each file of the container's cgroup2 directory
# written as given (a hugetlb limit, where this host's cgroup2 has the
# controller); a file the kernel lacks is refused, naming it.
t_unified() {
	local id=$CASE_ID-u cg=/cordon-e2e-$MARK v2
	setup_case
	v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	mk_bundle b sleep "$MARK" || return
	if [ -n "$v2" ] && grep -qw hugetlb "$v2/cgroup.subtree_control" 2>/dev/null &&
		[ -e "$v2/cgroup.controllers" ] && ls "$v2"/*/hugetlb.2MB.max >/dev/null 2>&1; then
		cfg 'c["linux"]["cgroupsPath"] = sys.argv[1]
c["linux"].setdefault("resources", {})["unified"] = {"hugetlb.2MB.max": "4194304"}' "$cg" || return
		oc create -b "$BUNDLE" "$id"
		expect_rc 0 || return
		[ "$(cat "$v2$cg/hugetlb.2MB.max" 2>/dev/null)" = 4194304 ] ||
			fail "hugetlb.2MB.max: expected 4194304, got '$(cat "$v2$cg/hugetlb.2MB.max" 2>&1)'"
		oc delete --force "$id"
		expect_rc 0
	fi
	cfg 'c["linux"]["cgroupsPath"] = sys.argv[1]
c["linux"].setdefault("resources", {})["unified"] = {"memory.doesnotexist": "1"}' "$cg" || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error CGROUP "linux.resources.unified.memory.doesnotexist = '1'"
	expect_err_has "No such file or directory"
	end_case
}

# --- namespaces --------------------------------------------------------------

# ns_of WHAT: the caller's own namespace of WHAT (net, ipc, uts), as this mode's user sees it.
ns_of() { readlink "/proc/self/ns/$1"; }
# shellcheck disable=SC2016 # expanded inside the container
NS_SHOW='for n in net ipc uts; do readlink /proc/self/ns/$n; done'

# No network, ipc or uts entry: the container shares the runtime's (the
# spec's rule), and exec joins it as it is; with an entry, a new one; no
# pid entry is refused (cordon's init is pid 1 of a namespace of its own).
t_namespaces_shared() {
	local id=$CASE_ID-n want
	setup_case
	mk_bundle b true || return
	cfg 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] not in ("network", "ipc", "uts")]
c.pop("hostname", None); c.pop("domainname", None)
c["linux"].pop("sysctl", None)
c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/dev/mqueue"]
c["process"]["args"] = ["sh", "-c", sys.argv[1]]' "$NS_SHOW" || return
	want=$(printf '%s\n%s\n%s' "$(ns_of net)" "$(ns_of ipc)" "$(ns_of uts)")
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	expect_out_eq "$want" "expected the runtime's network, ipc and uts namespaces"
	cfg 'c["process"]["args"] = ["sleep", sys.argv[1]]' "$MARK" || return
	oc create -b "$BUNDLE" "$id"
	expect_rc 0 || return
	oc exec "$id" sh -c "$NS_SHOW"
	expect_rc 0
	expect_out_eq "$want" "exec: expected the runtime's network, ipc and uts namespaces"
	oc delete --force "$id"
	cfg 'c["linux"]["namespaces"] += [{"type": "network"}, {"type": "ipc"}, {"type": "uts"}]
c["process"]["args"] = ["sh", "-c", sys.argv[1]]' "$NS_SHOW" || return
	oc run -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(grep -cxF -e "$(ns_of net)" -e "$(ns_of ipc)" -e "$(ns_of uts)" <<<"$OUT")" = 0 ] ||
		fail "listed namespaces must be new ones: got '$OUT'"
	cfg 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "pid"]' || return
	oc run -b "$BUNDLE" "$id"
	expect_cordon_error SPEC "no 'pid' entry"
	end_case
}

# --- devices -----------------------------------------------------------------

# linux.devices as the config says: rootful, a node made with the type,
# numbers, mode and owner given, also of a device the host does not have;
# rootless, the host's node (a device the host lacks is refused). A FIFO
# has its fileMode whatever the umask, and its owner.
t_devices_made() {
	local id=$CASE_ID-v
	setup_case
	mk_bundle b sh -c 'stat -c "%F %t:%T %a %u:%g" /dev/x666 /dev/sub/fifo /dev/null' || return
	cfg 'c["linux"]["devices"] = [
	{"path": "/dev/x666", "type": "c", "major": 10, "minor": 666, "fileMode": 416, "uid": 10, "gid": 11},
	{"path": "/dev/sub/fifo", "type": "p", "fileMode": 432, "uid": 10, "gid": 11}]' || return
	oc run -b "$BUNDLE" "$id"
	if [ "$MODE" = rootful ]; then
		expect_rc 0
		expect_out_has "character special file a:29a 640 10:11"
		expect_out_has "fifo 0:0 660 10:11"
	else
		expect_cordon_error MOUNT "linux.devices[0] /dev/x666"
		cfg 'c["linux"]["devices"] = c["linux"]["devices"][1:]
c["process"]["args"] = ["stat", "-c", "%F %a %u:%g", "/dev/sub/fifo"]' || return
		oc run -b "$BUNDLE" "$id"
		expect_rc 0
		expect_out_eq "fifo 660 10:11"
	fi
	end_case
}

# --- resources ---------------------------------------------------------------

# memory.swappiness and disableOOMKiller: applied on a cgroup v1 memory
# controller; where there is none (a cgroup2-only view of this host, made
# in a mount namespace of the test's own), an error, not a warning.
t_memory_knobs() {
	local id=$CASE_ID-k cg=/cordon-e2e-$MARK dir
	setup_case
	mk_bundle b sleep "$MARK" || return
	cfg 'c["linux"]["cgroupsPath"] = sys.argv[1]
r = c["linux"].setdefault("resources", {})
r["memory"] = {"swappiness": 17, "disableOOMKiller": True}
r.pop("pids", None)' "$cg" || return
	if [ -d /sys/fs/cgroup/memory ]; then
		oc create -b "$BUNDLE" "$id"
		expect_rc 0 || return
		dir=/sys/fs/cgroup/memory$cg
		[ "$(cat "$dir/memory.swappiness" 2>/dev/null)" = 17 ] ||
			fail "memory.swappiness: expected 17, got '$(cat "$dir/memory.swappiness" 2>&1)'"
		grep -qx 'oom_kill_disable 1' "$dir/memory.oom_control" 2>/dev/null ||
			fail "memory.oom_control: the OOM killer is not disabled"
		oc delete --force "$id"
		expect_rc 0
	fi
	run unshare -m sh -c 'mount --make-rprivate / && umount -R /sys/fs/cgroup &&
		mount -t cgroup2 cgroup2 /sys/fs/cgroup && exec "$@"' sh \
		"$CORDON" --root "$OROOT" run -b "$BUNDLE" "$id"
	expect_cordon_error CGROUP "linux.resources.memory.swappiness: needs a cgroup v1 memory controller"
	end_case
}

each_mode "process.capabilities: the five sets, root and uid 1000, SYS_ADMIN granted, an unknown name warned" t_caps_sets
each_mode "exec --cap: any known capability added, an unknown one warned" t_exec_caps
each_mode "capabilities under the network annotations: cordon run's policy" t_caps_policy_net
each_mode "noNewPrivileges: as configured, forced by the annotation and exec --no-new-privs" t_no_new_privs
each_mode "a setuid program: root with noNewPrivileges false, nothing with true" t_setuid_program
each_mode "an ambient capability for uid 1000: NET_BIND_SERVICE binds port 80" t_ambient_bind
each_mode "mounts: sources kept, config order, bind data ignored, strictatime, suid, dev" t_mount_sources_options_order
each_mode "mounts: nothing the config does not list (no /tmp, /dev/shm, /dev/mqueue)" t_no_extra_mounts
each_mode "mounts: a dangling symlink destination created through, inside the root" t_mount_dangling_symlink
each_mode "mounts: a destination through ../ made while the host renames" t_mount_dotdot_renames
rootful_only "linux.resources.unified: a cgroup2 file written, a missing one refused" t_unified
each_mode "linux.namespaces: network, ipc, uts left out are the runtime's (run and exec); no pid refused" t_namespaces_shared
each_mode "linux.devices: made as configured rootful (type, numbers, mode, owner), FIFO mode and owner" t_devices_made
rootful_only "memory.swappiness, disableOOMKiller: the v1 files; refused on cgroup2 alone" t_memory_knobs
done_testing
