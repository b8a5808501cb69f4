#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: /proc and /sys. Masked and read-only /proc paths, kernel knobs
# that must not be writable (sysrq-trigger, core_pattern), mounts over the
# masks, cgroup release_agent, the init's /proc entries (non-dumpable),
# /proc/self/exe and /proc/1/exe for writing, /proc/self/status.
. "$(dirname "$0")/seclib.sh"

MASKED="acpi asound kcore keys latency_stats sched_debug scsi timer_list timer_stats"
READONLY="bus fs irq sys sysrq-trigger"

t_status() {
	local u k
	for u in 0 1000; do
		crun --no-workspace --user "$u" -- cat /proc/self/status
		expect_rc 0 || continue
		[ "$(status_field NoNewPrivs)" = 1 ] || fail "uid $u: expected NoNewPrivs 1"
		[ "$(status_field Seccomp)" = 2 ] || fail "uid $u: expected Seccomp 2 (filter)"
		for k in CapInh CapPrm CapEff CapBnd CapAmb; do
			[ "$(status_field $k)" = 0000000000000000 ] || fail "uid $u: expected $k 0"
		done
	done
}

# Each masked path that exists inside reads as nothing (a file bound to
# /dev/null or an empty read-only directory) and cannot be written; where
# the host has it, the sandbox has a mount over it.
t_masked() {
	local p o
	crun --no-workspace -- sh -c '
		for p in '"$MASKED"'; do
			f=/proc/$p
			if [ -d "$f" ]; then
				echo "$p dir $(ls -A "$f" | wc -l) $(touch "$f/x" 2>/dev/null && echo writable || echo ro)"
			elif [ -e "$f" ]; then
				echo "$p file $(cat "$f" | wc -c) $( (echo 1 >"$f") 2>/dev/null && echo written || echo refused)"
			else
				echo "$p absent"
			fi
		done
		echo ---
		cat /proc/self/mountinfo'
	expect_rc 0
	for p in $MASKED; do
		case $(printf '%s\n' "$OUT" | awk -v p="$p" '$1 == p { $1 = ""; print substr($0, 2); exit }') in
		"absent") [ ! -e "/proc/$p" ] || fail "/proc/$p exists on the host but is absent inside" ;;
		"dir 0 ro") ;;
		"file 0 written" | "file 0 refused") ;; # /dev/null takes writes and keeps nothing
		*) fail "expected /proc/$p masked (absent, empty ro dir, or /dev/null)" ;;
		esac
		if [ -e "/proc/$p" ] && [ -z "$(mount_opts "/proc/$p")" ]; then
			fail "/proc/$p exists on the host and nothing is mounted over it inside"
		fi
	done
	for p in $READONLY; do
		[ -e "/proc/$p" ] || continue
		o=$(mount_opts "/proc/$p")
		has_opt "$o" ro || fail "expected /proc/$p mounted read-only, got '${o:-no mount}'"
	done
	# kcore in particular: the kernel's memory.
	crun --no-workspace -- sh -c 'if [ -e /proc/kcore ]; then cat /proc/kcore | head -c 4096 | wc -c; else echo absent; fi'
	expect_rc 0
	[ "$OUT" = absent ] || [ "$OUT" = 0 ] || fail "expected /proc/kcore absent or empty"
}

t_sysrq() {
	crun --no-workspace -- sh -c '(echo h >/proc/sysrq-trigger) 2>/dev/null && echo wrote; echo done'
	expect_rc 0
	expect_out_eq "done" "expected writing /proc/sysrq-trigger to fail"
}

t_proc_sys() {
	local before_cp before_hn
	before_cp=$(cat /proc/sys/kernel/core_pattern)
	before_hn=$(cat /proc/sys/kernel/hostname)
	crun --no-workspace -- sh -c '
		for k in kernel/core_pattern kernel/modprobe kernel/hostname vm/drop_caches kernel/sysrq \
			 fs/binfmt_misc/register kernel/kptr_restrict net/ipv4/ip_forward; do
			f=/proc/sys/$k
			[ -e "$f" ] || continue
			(echo "|/tmp/pwn" >"$f") 2>/dev/null && echo "wrote $k"
		done
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected every write to /proc/sys to fail"
	check "the host's core_pattern is unchanged" [ "$(cat /proc/sys/kernel/core_pattern)" = "$before_cp" ]
	check "the host's hostname is unchanged" [ "$(cat /proc/sys/kernel/hostname)" = "$before_hn" ]
	crun --no-workspace -- cat /proc/self/mountinfo
	has_opt "$(mount_opts /proc/sys)" ro || fail "expected /proc/sys mounted read-only"
}

t_mount_over_masks() {
	crun --no-workspace -- sh -c '
		mount -t proc proc /proc/keys 2>/dev/null && echo "mounted proc on /proc/keys"
		mount -t proc proc /tmp 2>/dev/null && echo "mounted proc on /tmp"
		umount /proc/keys 2>/dev/null && echo "unmounted /proc/keys"
		umount -l /proc/acpi 2>/dev/null && echo "unmounted /proc/acpi"
		umount -l /proc/sys 2>/dev/null && echo "unmounted /proc/sys"
		mount -o remount,rw /proc/sys 2>/dev/null && echo "remounted /proc/sys rw"
		mount --bind /proc /tmp 2>/dev/null && echo "bound /proc"
		wc -c </proc/keys
		echo done'
	expect_rc 0
	expect_out_eq $'0\ndone' "expected every mount and unmount to fail and /proc/keys to stay empty"
	crun --no-workspace -- sec-probe mount:/proc/keys:proc mount:/proc/sys:proc umount:/proc/keys umount:/proc/sys
	expect_rc 0
	probe_is mount:/proc/keys:proc EPERM
	probe_is mount:/proc/sys:proc EPERM
	probe_is umount:/proc/keys EPERM
	probe_is umount:/proc/sys EPERM
}

t_cgroup() {
	crun --no-workspace -- sh -c '
		[ -e /sys/fs/cgroup ] && echo "/sys/fs/cgroup exists"
		mkdir -p /tmp/cg
		for t in "cgroup -o memory" "cgroup -o rdma" "cgroup -o none,name=x" "cgroup2"; do
			mount -t $t cgroup /tmp/cg 2>/dev/null && echo "mounted $t"
		done
		[ -e /tmp/cg/release_agent ] && echo "release_agent visible"
		(echo /tmp/pwn >/sys/fs/cgroup/release_agent) 2>/dev/null && echo "wrote release_agent"
		grep -c cgroup /proc/self/mountinfo
		echo done'
	expect_rc 0
	expect_out_eq $'0\ndone' "expected no cgroup filesystem and no way to mount one"
	crun --no-workspace -- sec-probe mount:/tmp:cgroup mount:/tmp:cgroup2
	probe_is mount:/tmp:cgroup EPERM
	probe_is mount:/tmp:cgroup2 EPERM
}

t_sys_empty() {
	crun --no-workspace -- sh -c 'ls -A /sys | wc -l; awk "\$5 ~ /^\/sys/" /proc/self/mountinfo | wc -l'
	expect_rc 0
	expect_out_eq $'0\n0' "expected /sys an empty directory with nothing mounted"
	crun --no-workspace -- sh -c 'mount -t sysfs sysfs /sys 2>/dev/null && echo mounted; sec-probe mount:/tmp:sysfs'
	expect_out_eq mount:/tmp:sysfs=EPERM "expected sysfs not mountable"
}

# The sandbox init (pid 1) is the cordon binary, non-dumpable: its
# memory, fds, environment and exe (the host's cordon) are out of reach.
t_init_proc() {
	local before
	before=$(host_snap "$(readlink -f "$CORDON")")
	crun --no-workspace -- sh -c '
		for f in environ mem maps fd/0 root/ cwd/ exe; do
			cat /proc/1/$f >/dev/null 2>&1 && echo "read /proc/1/$f"
		done
		ls /proc/1/fd >/dev/null 2>&1 && echo "listed /proc/1/fd"
		readlink /proc/1/exe 2>/dev/null | grep . && echo "readlink /proc/1/exe"
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected the init's /proc entries to be unreadable"
	crun --no-workspace -- sec-probe open-write:/proc/1/exe open-read:/proc/1/exe open-write:/proc/1/mem \
		ptrace:1 process_vm_readv:1
	expect_rc 0
	probe_is open-write:/proc/1/exe EACCES EPERM ETXTBSY
	probe_is open-read:/proc/1/exe EACCES EPERM
	probe_is open-write:/proc/1/mem EACCES EPERM
	probe_is ptrace:1 EPERM
	probe_is process_vm_readv:1 EPERM ESRCH
	expect_host_unchanged "$before" "$(readlink -f "$CORDON")"
}

t_self_exe() {
	local before opt
	before=$(host_snap "$SEC_ROOTFS/bin/busybox" "$SEC_ROOTFS/bin/sec-probe")
	for opt in --no-workspace --overlay; do
		# shellcheck disable=SC2086
		crun --no-workspace ${opt#--no-workspace} -- sh -c '(echo x >/proc/self/exe) 2>/dev/null && echo "wrote sh"
			sec-probe open-write:/proc/self/exe open-write:/bin/sec-probe open-write:/bin/busybox'
		expect_rc 0
		[[ $OUT != *wrote* ]] || fail "$opt: wrote the shell through /proc/self/exe"
		probe_is open-write:/proc/self/exe ETXTBSY EACCES EPERM EROFS
		if [ "$opt" = --overlay ]; then
			# The overlay's copy-up may allow the write: inside only.
			probe_is open-write:/bin/busybox ok EROFS EACCES
		else
			probe_is open-write:/bin/sec-probe ETXTBSY EROFS EACCES
			probe_is open-write:/bin/busybox EROFS EACCES
		fi
	done
	expect_host_unchanged "$before" "$SEC_ROOTFS/bin/busybox" "$SEC_ROOTFS/bin/sec-probe"
}

t_ns_files() {
	crun --no-workspace -- sh -c '
		nsenter -t 1 -m true 2>/dev/null && echo "entered mnt"
		nsenter -t 1 -n true 2>/dev/null && echo "entered net"
		nsenter -t 1 -U true 2>/dev/null && echo "entered user"
		nsenter -t 1 -p true 2>/dev/null && echo "entered pid"
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected nsenter into pid 1's namespaces to fail"
	crun --no-workspace -- sec-probe setns:/proc/1/ns/mnt setns:/proc/1/ns/user setns:/proc/self/ns/mnt \
		setns:/proc/self/ns/net setns:/proc/self/ns/user setns:/proc/self/ns/pid
	expect_rc 0
	probe_is setns:/proc/1/ns/mnt open-EACCES EPERM
	probe_is setns:/proc/1/ns/user open-EACCES EPERM
	probe_is setns:/proc/self/ns/mnt EPERM
	probe_is setns:/proc/self/ns/net EPERM
	probe_is setns:/proc/self/ns/user EPERM EINVAL
	probe_is setns:/proc/self/ns/pid EPERM
}

sec_each "/proc/self/status: NoNewPrivs 1, Seccomp 2, capabilities 0" t_status
sec_each "/proc masked paths (kcore, keys, ...) and read-only paths" t_masked
sec_each "/proc/sysrq-trigger is not writable" t_sysrq
sec_each "/proc/sys (core_pattern, ...) is read-only; host unchanged" t_proc_sys
sec_each "no mount or unmount over the /proc masks" t_mount_over_masks
sec_each "no cgroup fs: release_agent unreachable, mount cgroup fails" t_cgroup
sec_each "/sys is an empty directory" t_sys_empty
sec_each "the init's /proc/1 (exe, mem, fds, environ) is out of reach" t_init_proc
sec_each "/proc/self/exe cannot be opened for writing" t_self_exe
sec_each "no setns into pid 1's or own namespaces (nsenter)" t_ns_files
done_testing
