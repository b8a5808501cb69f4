#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317,SC1091 # cases are called through run_case; lib.sh by path
# VM suite: what differs on Debian 12's kernel (6.1) from the kernels
# cordon is developed on, and what cordon does about each (the VM's
# machine: tests/vm/guest.sh; docs/architecture.md, "Kernels"):
#
#   memory.peak       Linux 5.19, and pids.peak: there (Debian's 6.1 has
#                     pids.peak), so memory_peak_bytes and pids_peak are numbers
#   idmapped tmpfs    Linux 6.3: a rootfs or workspace on tmpfs gets a plain
#                     bind instead of an idmapped one
#   MFD_EXEC          Linux 6.3: the sealed copy's memfd is made without it
#                     (tests/security/sec-self.sh's cases, run in the VM)
#   DESTROYSETELEM    Linux 6.3: set elements are replaced by asking, then
#                     DELSETELEM (the VM's network smoke test)
. "$(dirname "$0")/../e2e/lib.sh"

CG=/sys/fs/cgroup

json() {
	"$PYTHON" -c '
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable"); sys.exit(0)
print(json.dumps(r[sys.argv[2]]) if sys.argv[2] in r else "missing")' "$1" "$2"
}

# The kernel and the layout this suite is about.
t_kernel_and_layout() {
	local f=$CASE_DIR/profile.json got
	[[ $(uname -r) == 6.1.* ]] || fail "kernel $(uname -r): this suite is about 6.1"
	crun --print-profile -- true
	expect_rc 0 || return
	printf '%s\n' "$OUT" >"$f"
	got=$("$PYTHON" -c '
import json, sys
c = json.load(open(sys.argv[1]))["cgroups"]
print(c["layout"], " ".join("%s:%s" % (h["version"], h["mount"]) for h in c["hierarchies"]))' "$f" 2>&1)
	[ "$got" = "v2 2:/sys/fs/cgroup" ] || fail "--print-profile: cgroups '$got', expected 'v2 2:/sys/fs/cgroup' (pure v2)"
}

# What the result reports on 6.1: memory.peak and cpu.stat exist, pids.peak does not.
t_result_fields() {
	local res=$CASE_DIR/result.json v
	crun --memory 64 --pids 50 --result-json "$res" -- sh -c 'head -c 4000000 /dev/zero | wc -c'
	expect_rc 0 || return
	v=$(json "$res" memory_peak_bytes)
	[[ $v =~ ^[1-9][0-9]*$ ]] || fail "memory_peak_bytes '$v': expected a number (memory.peak, 5.19+)"
	v=$(json "$res" cpu_usage_us)
	[[ $v =~ ^[0-9]+$ ]] || fail "cpu_usage_us '$v': expected a number"
	# pids.peak: Debian's 6.1 has it; where a kernel lacks it, null.
	v=$(json "$res" pids_peak)
	if [ -e "$CG/user.slice/pids.peak" ]; then
		[[ $v =~ ^[1-9][0-9]*$ ]] || fail "pids_peak '$v': expected a number (pids.peak is there)"
	else
		[ "$v" = null ] || fail "pids_peak '$v': no pids.peak on this kernel, expected null"
	fi
}

# A tmpfs mounted for the case, in its scratch directory.
TMPFS=
tmpfs_up() {
	TMPFS=$CASE_DIR/tmpfs
	mkdir -p "$TMPFS" && mount -t tmpfs -o mode=0755 tmpfs "$TMPFS" || { _fail_raw "cannot mount a tmpfs"; return 1; }
}
tmpfs_down() { [ -n "$TMPFS" ] && umount "$TMPFS"; TMPFS=; }

# A workspace on tmpfs: 6.1 cannot idmap tmpfs (6.3 can). Rootful, the
# workspace is idmapped to its owner: that fails closed, naming the
# filesystem (a plain bind would leave it unwritable to the sandbox's
# root, or give what it writes the sandbox's ids). Rootless needs no
# idmap: it works, and the file is the user's.
t_tmpfs_workspace() {
	tmpfs_up || return
	mk_dir "$TMPFS/ws"
	crun --workspace "$TMPFS/ws" -- sh -c 'echo hi >/workspace/f && echo wrote'
	if [ "$MODE" = rootful ]; then
		expect_cordon_error MOUNT "cannot idmap" &&
			expect_err_has "tmpfs (idmapped since Linux 6.3)" &&
			expect_err_has "--no-workspace"
		[ ! -e "$TMPFS/ws/f" ] || fail "the refused run wrote the workspace"
	else
		expect_rc 0 && expect_out_eq wrote
		[ "$(stat -c %u "$TMPFS/ws/f" 2>&1)" = "$TEST_UID" ] ||
			fail "the file is owned by $(stat -c %u "$TMPFS/ws/f" 2>&1), not the user"
	fi
	tmpfs_down
}

# A rootfs on tmpfs: the plain clone (read-only; its files show as
# nobody inside), which running it does not need.
t_tmpfs_rootfs() {
	tmpfs_up || return
	cp -a "$CORDON_ROOTFS/." "$TMPFS/" || { fail "cannot copy the rootfs to a tmpfs"; tmpfs_down; return; }
	# shellcheck disable=SC2034 # crun runs $ROOTFS
	ROOTFS=$TMPFS
	crun -- sh -c 'stat -c %u /bin/busybox; echo ran; touch /x 2>/dev/null || echo read-only'
	expect_rc 0 && expect_out_eq "65534
ran
read-only" "expected the root's files as nobody (not idmapped), the workload run, the root read-only"
	tmpfs_down
}

rootful_only "Debian 12's kernel 6.1 on a pure cgroup v2 host (--print-profile)" t_kernel_and_layout
rootful_only "result on 6.1: memory_peak_bytes, cpu_usage_us and pids_peak are numbers" t_result_fields
each_mode "a workspace on tmpfs (no idmapped tmpfs before 6.3): rootful fails closed naming it; rootless works" t_tmpfs_workspace
each_mode "a rootfs on tmpfs (no idmapped tmpfs before 6.3): a plain read-only bind runs" t_tmpfs_rootfs
done_testing
