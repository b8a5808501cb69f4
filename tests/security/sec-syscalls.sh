#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: the default seccomp profile. Dangerous system calls fail with
# EPERM (clone3: ENOSYS), argument-filtered ones are refused only in their
# dangerous form, foreign syscall ABIs kill the process (SIGSYS), and the
# escape hatches: --seccomp unconfined, --seccomp-profile (good and bad).
. "$(dirname "$0")/seclib.sh"

# action expected-result(s), one per line ("|" separates alternatives).
DENIED='keyctl EPERM
add_key EPERM
request_key EPERM
userfaultfd EPERM
io_uring_setup EPERM
bpf EPERM
perf_event_open EPERM
ptrace:1 EPERM
traceme EPERM
process_vm_readv:1 EPERM
clone3 ENOSYS
clone:newuser EPERM
clone:newns EPERM
clone:newnet EPERM
clone:newpid EPERM
clone:newuts EPERM
clone:newipc EPERM
clone:newcgroup EPERM
clone:newtime EPERM
unshare:newuser EPERM
unshare:newns EPERM
unshare:newnet EPERM
unshare:newpid EPERM
setns:/proc/self/ns/net EPERM
mount EPERM
umount:/proc EPERM
name_to_handle_at EPERM
open_by_handle_at EPERM
kexec_load EPERM
init_module EPERM
finit_module EPERM
delete_module EPERM
personality:8 EPERM
personality:0x0400000 EPERM
netlink:9 EPERM
netlink:4 EPERM
netlink:12 EPERM
netlink:16 EPERM
netlink:0x100000009 EPERM
netlink:0xffffffff00000009 EPERM
personality:0x100000008 EPERM
tiocsti EPERM
tiocsti:0:0x100005412 EPERM
tiocsti:0:0xffffffff00005412 EPERM
tiocsti-pty EPERM
tioclinux EPERM'

# What must keep working beside them.
ALLOWED='clone:none ok
personality:0 ok*
personality:0xffffffff ok*
netlink:0 ok
tcp:1 ECONNREFUSED
ids 0,0,0:0,0,0'

# Run every action of TABLE in one probe call and check each line.
probe_table() {
	local table=$1 actions=() line want
	shift
	while read -r line; do actions+=("${line%% *}"); done <<<"$table"
	crun --no-workspace "$@" -- sec-probe "${actions[@]}"
	expect_rc 0 || return
	while read -r line; do
		want=${line#* }
		# shellcheck disable=SC2086
		probe_is "${line%% *}" ${want//|/ }
	done <<<"$table"
}

t_denied_root() {
	probe_table "$DENIED"
	probe_table "$ALLOWED"
}

t_denied_user() {
	probe_table "$DENIED" --user 1000:1000
}

t_ns_tools() {
	crun --no-workspace -- sh -c '
		for f in -U -n -m -p -i -u -C "-r -U" "-n -r"; do
			unshare $f true 2>/dev/null && echo "unshare $f worked"
		done
		echo done'
	expect_rc 0
	expect_out_eq "done" "expected every unshare to fail"
}

# With the filter off, the probes must behave differently: that shows it is
# the filter, not the kernel or the tty, that refused them above.
t_unconfined() {
	crun --no-workspace --seccomp unconfined -- sh -c 'grep -E "^(Seccomp|NoNewPrivs|CapEff|CapBnd):" /proc/self/status;
		sec-probe tiocsti tiocsti-pty personality:8 clone3 netlink:9 unshare:newuser clone:newuser; unshare -U true 2>/dev/null && echo "unshare -U worked"; true'
	expect_rc 0
	expect_err_has "warning" "expected a warning on stderr for --seccomp unconfined"
	expect_err_has "unconfined"
	[ "$(status_field Seccomp)" = 0 ] || fail "expected Seccomp 0 with --seccomp unconfined"
	[ "$(status_field NoNewPrivs)" = 1 ] || fail "expected NoNewPrivs 1 even with --seccomp unconfined"
	[ "$(status_field CapEff)" = 0000000000000000 ] || fail "expected CapEff 0 even with --seccomp unconfined"
	[ "$(status_field CapBnd)" = 0000000000000000 ] || fail "expected CapBnd 0 even with --seccomp unconfined"
	probe_is tiocsti ENOTTY
	probe_is personality:8 ok*
	probe_is clone3 ok
	probe_is netlink:9 ok EPROTONOSUPPORT
	# A further user namespace stays impossible without the filter.
	probe_is unshare:newuser ENOSPC EPERM
	probe_is clone:newuser ENOSPC EPERM
	expect_out_lacks "unshare -U worked"
	if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 1 ]; then
		probe_is tiocsti-pty ok
	fi
}

t_netlink_route_works() {
	crun --no-workspace -- sh -c 'ip -o link show lo >/dev/null && echo ip-ok; ip -o addr show lo | grep -c 127.0.0.1'
	expect_rc 0
	expect_out_eq $'ip-ok\n1' "expected rtnetlink (ip link/addr) to work"
	crun --no-workspace -- linux32 true
	expect_rc_not 0 "expected linux32 (personality PER_LINUX32) to fail"
}

# int 0x80: the i386 entry. Where the host itself cannot make it (no IA32
# emulation, or a hypervisor that faults it), the case says so and skips.
t_int80() {
	local nr host_rc
	("$SEC_PROBE" int80; exit $?) >/dev/null 2>&1
	host_rc=$?
	if [ "$host_rc" != 0 ]; then
		skip_layout "int 0x80 does not work on this host (probe exits $host_rc outside any sandbox)"
		return
	fi
	for nr in 20 310 21; do # i386 getpid, unshare, mount
		crun --no-workspace -- sec-probe "int80:$nr"
		expect_rc 159 "int 0x80 syscall $nr: expected the process killed by SIGSYS (159), got $RC"
		expect_out_eq "int80:$nr=reached"
	done
}

t_x32() {
	local nr
	for nr in 39 272 165; do # x32 getpid, unshare, mount
		crun --no-workspace -- sec-probe "x32:$nr"
		expect_rc 159 "x32 syscall $nr: expected the process killed by SIGSYS (159), got $RC"
		expect_out_eq "x32:$nr=reached"
	done
	# Unfiltered, the call returns (ENOSYS where x32 is not built in).
	crun --no-workspace --seccomp unconfined -- sec-probe x32:39
	expect_rc 0
	expect_out_has "x32:39=returned"
}

t_profile_errno() {
	local p=$CASE_DIR/deny-mkdir.json
	cat >"$p" <<-'EOF'
		{
		  "defaultAction": "SCMP_ACT_ALLOW",
		  "architectures": ["SCMP_ARCH_X86_64"],
		  "syscalls": [
		    {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13},
		    {"names": ["rmdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 28},
		    {"names": ["no_such_syscall_xyz"], "action": "SCMP_ACT_ERRNO"}
		  ]
		}
	EOF
	chmod 644 "$p"
	crun --no-workspace --seccomp-profile "$p" -- sh -c 'sec-probe mkdir:/tmp/d ids; mkdir /tmp/e 2>/dev/null && echo "mkdir worked";
		touch /tmp/f && echo touch-ok; grep "^Seccomp:" /proc/self/status'
	expect_rc 0
	probe_is mkdir:/tmp/d EACCES
	probe_is ids 0,0,0:0,0,0
	expect_out_lacks "mkdir worked"
	expect_out_has touch-ok
	[ "$(status_field Seccomp)" = 2 ] || fail "expected Seccomp 2 with --seccomp-profile"
	crun --no-workspace --overlay --seccomp-profile "$p" -- sh -c 'sec-probe mkdir:/tmp/d; rmdir /home/sandbox 2>&1'
	probe_is mkdir:/tmp/d EACCES
	expect_out_has "No space left on device" "expected rmdir to fail with the profile's errno 28 (ENOSPC)"
}

t_profile_bad() {
	local d=$CASE_DIR f
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [' >"$d/truncated.json"
	printf 'not json at all\n' >"$d/garbage.json"
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOPE"}]}\n' >"$d/bad-action.json"
	printf '[]\n' >"$d/array.json"
	chmod 644 "$d"/*.json
	for f in truncated garbage bad-action array; do
		crun --no-workspace --seccomp-profile "$d/$f.json" -- touch /tmp/ran
		expect_cordon_error 'SPEC|USAGE|SECURITY' "$d/$f.json"
	done
	crun --no-workspace --seccomp-profile "$d/missing.json" -- true
	expect_cordon_error 'SPEC|USAGE|SECURITY|PATH' "$d/missing.json"
	crun --no-workspace --seccomp bogus -- true
	expect_cordon_error USAGE --seccomp
}

# libseccomp is opened by its absolute path (seccomp-oci.c), so a caller's
# LD_LIBRARY_PATH naming a directory with another libseccomp.so.2 (here an
# empty file, which the loader would refuse) does not choose the library.
t_profile_search_path() {
	local p=$CASE_DIR/deny-mkdir.json
	mkdir -m 755 "$CASE_DIR/lib"
	: >"$CASE_DIR/lib/libseccomp.so.2"
	chmod 644 "$CASE_DIR/lib/libseccomp.so.2"
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}\n' >"$p"
	chmod 644 "$p"
	XENV=("LD_LIBRARY_PATH=$CASE_DIR/lib")
	crun --no-workspace --seccomp-profile "$p" -- sh -c 'mkdir /tmp/d 2>/dev/null || echo refused'
	XENV=()
	expect_rc 0
	expect_out_has refused
}

# The same for the profile's top-level fields: the message names the file.
t_profile_bad_toplevel() {
	local d=$CASE_DIR f
	printf '{"defaultAction": "SCMP_ACT_FROBNICATE"}\n' >"$d/bad-default.json"
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_VAX"]}\n' >"$d/bad-arch.json"
	chmod 644 "$d"/*.json
	for f in bad-default bad-arch; do
		crun --no-workspace --seccomp-profile "$d/$f.json" -- touch /tmp/ran
		expect_cordon_error 'SPEC|USAGE|SECURITY' "$d/$f.json"
	done
}

# --userns host (rootful only): no user namespace for the sandbox, the
# workload still gets its nested one and the same confinement.
t_userns_host() {
	probe_table "$DENIED" --userns host
	crun --no-workspace --userns host -- cat /proc/self/status
	expect_rc 0
	[ "$(status_field NoNewPrivs)" = 1 ] || fail "expected NoNewPrivs 1 with --userns host"
	[ "$(status_field Seccomp)" = 2 ] || fail "expected Seccomp 2 with --userns host"
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		[ "$(status_field $k)" = 0000000000000000 ] || fail "expected $k 0 with --userns host"
	done
}

# The workload's user namespace is the last one, whatever the syscall
# filter: with --seccomp unconfined or a profile that allows everything,
# creating another fails (user.max_user_namespaces), in every userns mode.
t_userns_limit() {
	local p=$CASE_DIR/allow-all.json v
	printf '{"defaultAction": "SCMP_ACT_ALLOW"}\n' >"$p"
	chmod 644 "$p"
	for v in "--seccomp unconfined" "--seccomp-profile $p"; do
		v="$* $v"
		# shellcheck disable=SC2086
		crun --no-workspace $v -- sh -c 'sec-probe unshare:newuser; sec-probe clone:newuser; unshare -U true 2>/dev/null && echo "unshare -U worked"; true'
		expect_rc 0
		probe_is unshare:newuser ENOSPC EPERM || _case_diag+=("  (with $v)")
		probe_is clone:newuser ENOSPC EPERM || _case_diag+=("  (with $v)")
		expect_out_lacks "unshare -U worked" "with $v: expected unshare -U to fail"
	done
}

sec_each "denied system calls fail with EPERM/ENOSYS (uid 0)" t_denied_root
sec_each "denied system calls fail with EPERM/ENOSYS (uid 1000)" t_denied_user
sec_rootful "--userns host: the same denied calls and empty capabilities" t_userns_host
sec_each "unshare -U/-n/-m/... fail" t_ns_tools
sec_each "no further user namespace under a permissive filter (unconfined, allow-all profile)" t_userns_limit
rootful_only "--userns host: no further user namespace under a permissive filter" _sec_case t_userns_limit --userns host
sec_each "--seccomp unconfined: warning, Seccomp 0, no new user namespace" t_unconfined
sec_each "NETLINK_ROUTE works, personality(PER_LINUX32) does not" t_netlink_route_works
sec_each "i386 syscalls (int 0x80) kill the process with SIGSYS" t_int80
sec_each "x32 syscalls kill the process with SIGSYS" t_x32
sec_each "--seccomp-profile: denied calls fail with the profile's errno" t_profile_errno
sec_each "--seccomp-profile: bad profiles are refused with 125 naming the file" t_profile_bad
sec_each "--seccomp-profile: bad defaultAction/architecture: 125 naming the file" t_profile_bad_toplevel
sec_each "--seccomp-profile: the system's libseccomp, whatever LD_LIBRARY_PATH names" t_profile_search_path
done_testing
