#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# security: the cordon binary seen from inside (the CVE-2019-5736 class).
# A rootfs whose ELF loader is hostile (sec-fakeld) and a "#!/proc/self/exe"
# script make the kernel run the binary of the cordon process that
# executes the script, with the attacker's code in place of the loader.
# That code must find a binary it cannot change: the host's when no id of
# the sandbox could write it, else a sealed copy (a memfd).
. "$(dirname "$0")/../e2e/oci-lib.sh"

SEC_FAKELD=${SEC_FAKELD:-build/tests/security/sec-fakeld}
case $SEC_FAKELD in /*) ;; *) SEC_FAKELD=$PWD/$SEC_FAKELD ;; esac

SELF_ROOTFS=$E2E_TMP/rootfs
if [ -x "$SEC_FAKELD" ]; then
	copy_rootfs "$SELF_ROOTFS" || exit 1
	mkdir -p "$SELF_ROOTFS/lib64"
	install -m 0755 "$SEC_FAKELD" "$SELF_ROOTFS/lib64/ld-linux-x86-64.so.2"
	printf '#!/proc/self/exe\n' >"$SELF_ROOTFS/bin/selfexe"
	chmod 0755 "$SELF_ROOTFS/bin/selfexe" "$SELF_ROOTFS"
fi

# A copy of the binary owned by the test user (rootless: the ids the
# sandbox maps own it).
USER_BIN=$E2E_TMP/userbin/cordon
mkdir -p "${USER_BIN%/*}"
cp "$CORDON" "$USER_BIN"
chmod 0755 "${USER_BIN%/*}" "$USER_BIN"
is_root && chown "$TEST_UID" "${USER_BIN%/*}" "$USER_BIN"

# Every case runs the hostile rootfs.
need_fakeld() {
	ROOTFS=$SELF_ROOTFS
	[ -x "$SEC_FAKELD" ] && return 0
	if [ "$(uname -m)" = x86_64 ]; then
		skip_or_fail "no sec-fakeld at $SEC_FAKELD"
	else
		skip_layout "sec-fakeld is built for x86-64 only"
	fi
	return 1
}

# The loader's report in $OUT: exe= names a sealed copy, which cannot be written.
expect_sealed_copy() {
	expect_out_has "exe=/memfd:cordon" "expected the loader to find a memfd copy of cordon" &&
		expect_out_has "seals=15" "expected the copy sealed (seal, shrink, grow, write)" &&
		expect_out_lacks "write=0" "expected the copy not to open for writing"
}

# set_maps HOSTID SIZE: $BUNDLE's uid and gid maps, container 0 at HOSTID.
set_maps() {
	"$PYTHON" - "$BUNDLE/config.json" "$1" "$2" <<'PY' || { fail "editing config.json"; return 1; }
import json, sys
c = json.load(open(sys.argv[1]))
for k in ("uidMappings", "gidMappings"):
    c["linux"][k] = [{"containerID": 0, "hostID": int(sys.argv[2]), "size": int(sys.argv[3])}]
json.dump(c, open(sys.argv[1], "w"))
PY
}

# exec_finds_sealed_copy ID: $BUNDLE created as ID, the hostile loader run
# by cordon exec there finds a sealed copy; then deleted.
exec_finds_sealed_copy() {
	oc create -b "$BUNDLE" "$1"
	expect_rc 0
	oc exec "$1" /bin/selfexe
	expect_rc 0
	expect_sealed_copy
	oc delete -f "$1"
	expect_rc 0
}

t_binary_not_writable() {
	need_fakeld || return
	crun --no-workspace -- /bin/selfexe
	expect_rc 0
	expect_out_has "exe=$CORDON" "expected the host binary: no id of the sandbox owns it"
	expect_out_has "write=-13" "expected EACCES opening the binary for writing"
}

t_binary_owned_by_sandbox_ids() {
	local before saved=$CORDON
	need_fakeld || return
	before=$(sha256sum <"$USER_BIN")
	if [ "$MODE" = rootful ]; then
		# --userns host: the sandbox's root is host root, the binary's owner.
		crun --no-workspace --userns host -- /bin/selfexe
	else
		CORDON=$USER_BIN
		crun --no-workspace -- /bin/selfexe
		CORDON=$saved
	fi
	expect_rc 0
	expect_sealed_copy
	[ "$(sha256sum <"$USER_BIN")" = "$before" ] || fail "the binary changed"
}

t_exec_sealed() {
	local id=$CASE_ID-x saved=$CORDON
	need_fakeld || return
	setup_case
	# Rootful, the config's identity maps make the container's root host
	# root (a launcher's choice). Rootless, the caller owns its copy of the binary.
	[ "$MODE" = rootless ] && CORDON=$USER_BIN
	mk_bundle b sleep 60 || { CORDON=$saved; return; }
	if [ "$MODE" = rootful ]; then
		set_maps 0 65536 || { CORDON=$saved; return; }
	fi
	exec_finds_sealed_copy "$id"
	CORDON=$saved
	end_case
}

# Rootful, the overflow id (65534) is a real host user ("nobody"): a binary
# it owns, in a container whose map gives it to the sandbox, is writable
# from inside like any other owned by a mapped id.
NOBODY_BIN=$E2E_TMP/nobodybin/cordon
if is_root; then
	mkdir -p "${NOBODY_BIN%/*}"
	cp "$CORDON" "$NOBODY_BIN"
	chmod 0755 "${NOBODY_BIN%/*}" "$NOBODY_BIN"
	chown 65534:65534 "${NOBODY_BIN%/*}" "$NOBODY_BIN"
fi

t_exec_sealed_nobody() {
	local id=$CASE_ID-n saved=$CORDON
	if [ "$MODE" = rootless ]; then
		skip_layout "rootless, the overflow id is never mapped below the caller's namespace"
		return
	fi
	need_fakeld || return
	setup_case
	CORDON=$NOBODY_BIN
	mk_bundle b sleep 60 || { CORDON=$saved; return; }
	set_maps 65534 1 || { CORDON=$saved; return; }
	exec_finds_sealed_copy "$id"
	CORDON=$saved
	end_case
}

# A createContainer hook names a host file, and a #! hook's interpreter is
# the container's: it is given /dev/fd/N, the fd the hook was exec'd from.
# Through that fd it must reach a copy, never the host file (which the
# container's ids own here: rootful by identity maps, rootless as the caller).
HOOK_ROOTFS=$E2E_TMP/hookroot
copy_rootfs "$HOOK_ROOTFS" || exit 1
mkdir -p "$HOOK_ROOTFS/mnt/rw"
cat >"$HOOK_ROOTFS/bin/evilsh" <<'SH'
#!/bin/sh
n=${1##*/}
if { printf 'changed\n' >>"/proc/self/fd/$n"; } 2>/dev/null; then
	echo wrote >>/mnt/rw/log
else
	echo refused >>/mnt/rw/log
fi
SH
chmod 0755 "$HOOK_ROOTFS/bin/evilsh"

t_create_container_hook_copy() {
	local id=$CASE_ID-h saved_rootfs=$ROOTFS hooks before
	setup_case
	hooks=$CASE_DIR/hooks
	mk_dir "$hooks"
	printf '#!/bin/evilsh\nthe hook\n' >"$hooks/hook"
	chmod 0755 "$hooks/hook"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$hooks/hook"
	before=$(sha256sum <"$hooks/hook")
	ROOTFS=$HOOK_ROOTFS
	mk_bundle b sleep 60 || { ROOTFS=$saved_rootfs; return; }
	ROOTFS=$saved_rootfs
	"$PYTHON" - "$BUNDLE/config.json" "$hooks" "$MODE" <<'PY' || { fail "editing config.json"; return; }
import json, sys
c = json.load(open(sys.argv[1]))
c["mounts"].append({"destination": "/mnt/rw", "type": "bind", "source": sys.argv[2], "options": ["bind", "rw"]})
c["hooks"] = {"createContainer": [{"path": sys.argv[2] + "/hook"}]}
if sys.argv[3] == "rootful":
    for k in ("uidMappings", "gidMappings"):
        c["linux"][k] = [{"containerID": 0, "hostID": 0, "size": 65536}]
json.dump(c, open(sys.argv[1], "w"))
PY
	oc create -b "$BUNDLE" "$id"
	expect_rc 0
	[ "$(cat "$hooks/log" 2>/dev/null)" = refused ] ||
		fail "expected the hook's interpreter refused writing through its fd, log: $(cat "$hooks/log" 2>/dev/null)"
	[ "$(sha256sum <"$hooks/hook")" = "$before" ] || fail "the host's hook file changed"
	oc delete -f "$id"
	expect_rc 0
	end_case
}

each_mode "a hostile loader run as cordon: the host binary, not writable by the sandbox" t_binary_not_writable
each_mode "a hostile loader run as cordon: a sealed copy when sandbox ids own the binary" t_binary_owned_by_sandbox_ids
each_mode "cordon exec: a hostile loader finds a sealed copy" t_exec_sealed
each_mode "a createContainer #! hook: its interpreter reaches a sealed copy, not the host file" t_create_container_hook_copy
each_mode "cordon exec: a sealed copy when host nobody owns the binary and the map gives it" t_exec_sealed_nobody
done_testing
