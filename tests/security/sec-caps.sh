#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through sec_each
# security: capabilities and --print-profile. Empty sets by default;
# --cap-add grants only the safe set (and the grant works), --cap-drop
# removes; everything that widens the kernel surface is refused with 125
# before anything runs. --print-profile reports the effective confinement
# as JSON and runs nothing.
. "$(dirname "$0")/seclib.sh"

# Capability bits (linux/capability.h).
CAP_CHOWN=0 CAP_NET_BIND_SERVICE=10 CAP_NET_RAW=13

capmask() {
	local m=0 b
	for b in "$@"; do m=$((m | (1 << b))); done
	printf '%016x' "$m"
}

expect_caps() {
	local want=$1 k
	shift
	for k in "$@"; do
		[ "$(status_field "$k")" = "$want" ] || fail "expected $k $want, got '$(status_field "$k")'"
	done
}

t_caps_default() {
	crun --no-workspace -- sh -c 'cat /proc/self/status; sec-probe raw chown:/tmp:1000 bind:80 chroot:/ mknod:/tmp/n setuid:1000'
	expect_rc 0
	expect_caps 0000000000000000 CapInh CapPrm CapEff CapBnd CapAmb
	# uid 0 of its own namespace, and still none of root's powers.
	probe_is raw EPERM
	probe_is chown:/tmp:1000 EPERM
	probe_is bind:80 EACCES
	probe_is chroot:/ EPERM
	probe_is mknod:/tmp/n EPERM
	probe_is setuid:1000 EPERM
	crun --no-workspace --user 1000:1000 -- cat /proc/self/status
	expect_rc 0
	expect_caps 0000000000000000 CapInh CapPrm CapEff CapBnd CapAmb
}

t_net_raw() {
	crun --no-workspace -- sh -c 'sec-probe raw; ping -c 1 -W 2 127.0.0.1 >/dev/null 2>&1 && echo ping-ok; true'
	expect_rc 0
	probe_is raw EPERM
	expect_out_lacks ping-ok "expected ping to fail without NET_RAW"
	crun --no-workspace --cap-add NET_RAW -- sh -c 'grep ^Cap /proc/self/status; sec-probe raw; ping -c 1 -W 2 127.0.0.1 >/dev/null && echo ping-ok'
	expect_rc 0
	probe_is raw ok
	expect_out_has ping-ok "expected ping of 127.0.0.1 to work with --cap-add NET_RAW"
	expect_caps "$(capmask $CAP_NET_RAW)" CapPrm CapEff CapBnd
	expect_caps 0000000000000000 CapInh CapAmb
}

t_cap_add_works() {
	crun --no-workspace --cap-add CHOWN,NET_BIND_SERVICE -- sh -c 'grep ^Cap /proc/self/status; touch /tmp/f; sec-probe chown:/tmp/f:1000 bind:80 raw'
	expect_rc 0
	expect_caps "$(capmask $CAP_CHOWN $CAP_NET_BIND_SERVICE)" CapPrm CapEff CapBnd
	probe_is chown:/tmp/f:1000 ok
	probe_is bind:80 ok
	probe_is raw EPERM
	# Lower case and the CAP_ prefix name the same capability.
	crun --no-workspace --cap-add cap_chown --cap-add net_bind_service -- grep ^CapEff /proc/self/status
	expect_rc 0
	expect_caps "$(capmask $CAP_CHOWN $CAP_NET_BIND_SERVICE)" CapEff
}

t_cap_drop() {
	crun --no-workspace --cap-add NET_RAW,CHOWN --cap-drop NET_RAW -- sh -c 'grep ^Cap /proc/self/status; sec-probe raw'
	expect_rc 0
	expect_caps "$(capmask $CAP_CHOWN)" CapPrm CapEff CapBnd
	probe_is raw EPERM
	crun --no-workspace --cap-add NET_RAW,CHOWN --cap-drop ALL -- grep ^Cap /proc/self/status
	expect_rc 0
	expect_caps 0000000000000000 CapInh CapPrm CapEff CapBnd CapAmb
	crun --no-workspace --cap-drop BOGUS -- true
	expect_cordon_error USAGE BOGUS
}

t_cap_refused() {
	local c
	for c in SYS_ADMIN NET_ADMIN SYS_PTRACE SYS_MODULE BPF PERFMON SYS_RAWIO DAC_READ_SEARCH \
		SYS_TIME SYS_BOOT SYS_RESOURCE MAC_ADMIN SYSLOG CHECKPOINT_RESTORE LINUX_IMMUTABLE IPC_LOCK; do
		crun --cap-add "$c" -- touch /workspace/ran
		expect_cordon_error USAGE "--cap-add $c" || continue
		expect_err_has refused
	done
	# Spellings and lists do not get around it.
	for c in sys_admin CAP_SYS_ADMIN cap_net_admin NET_RAW,SYS_ADMIN ALL; do
		crun --cap-add "$c" -- touch /workspace/ran
		expect_cordon_error USAGE "--cap-add" || continue
		expect_err_has refused
	done
	crun --cap-add NET_RAW --cap-add BPF -- touch /workspace/ran
	expect_cordon_error USAGE "--cap-add BPF"
	crun --cap-add SYS_ADMIN --print-profile
	expect_cordon_error USAGE "--cap-add SYS_ADMIN"
	expect_out_eq "" "expected no profile printed for a refused capability"
	crun --cap-add NO_SUCH_CAP -- touch /workspace/ran
	expect_cordon_error USAGE NO_SUCH_CAP
	check "nothing ran" [ ! -e "$WS/ran" ]
}

# The fields of --print-profile's JSON (stdout) that the checks below
# compare, one "key value" line each, from python3 on the host.
profile_fields() {
	printf '%s\n' "$OUT" | "$PYTHON" -c '
import json, sys
p = json.load(sys.stdin)
caps = p["capabilities"]
for s in ("bounding", "effective", "permitted", "inheritable", "ambient"):
    print("cap." + s, ",".join(caps[s]) or "-")
print("no_new_privs", p["no_new_privs"])
print("seccomp.mode", p["seccomp"]["mode"])
print("seccomp.sha256", p["seccomp"].get("sha256") or "-")
for k, v in sorted(p["rlimits"].items()):
    print("rlimit." + k, "%s:%s" % tuple(v))
print("masked", ",".join(p["proc"]["masked_paths"]))
print("readonly", ",".join(p["proc"]["readonly_paths"]))
'
}

field() { printf '%s\n' "$FIELDS" | awk -v k="$1" '$1 == k { print $2; exit }'; }

expect_field() {
	[ "$(field "$1")" = "$2" ] || fail "--print-profile: expected $1 = $2, got '$(field "$1")'"
}

print_profile() {
	crun --print-profile "$@" -- touch /workspace/ran
	expect_rc 0 || return 1
	FIELDS=$(profile_fields) || { fail "--print-profile: stdout is not the expected JSON"; return 1; }
}

t_print_profile() {
	local sha1 sha2 sha3 s p=$CASE_DIR/profile.json
	print_profile || return
	for s in bounding effective permitted inheritable ambient; do expect_field "cap.$s" -; done
	expect_field no_new_privs True
	expect_field seccomp.mode default
	sha1=$(field seccomp.sha256)
	[[ $sha1 =~ ^[0-9a-f]{64}$ ]] || fail "expected seccomp.sha256 as 64 hex digits, got '$sha1'"
	expect_field rlimit.core 0:0
	expect_field rlimit.nofile 1024:4096
	expect_field rlimit.nproc 1024:1024
	expect_field masked acpi,asound,kcore,keys,latency_stats,sched_debug,scsi,timer_list,timer_stats
	expect_field readonly bus,fs,irq,sys,sysrq-trigger
	check "--print-profile ran nothing" [ ! -e "$WS/ran" ]

	print_profile || return
	sha2=$(field seccomp.sha256)
	[ "$sha1" = "$sha2" ] || fail "expected the same seccomp digest from two calls ($sha1 / $sha2)"

	print_profile --cap-add NET_RAW --rlimit nofile=100:200 || return
	for s in bounding effective permitted; do expect_field "cap.$s" NET_RAW; done
	expect_field cap.inheritable -
	expect_field cap.ambient -
	expect_field rlimit.nofile 100:200
	[ "$(field seccomp.sha256)" = "$sha1" ] || fail "expected --cap-add not to change the seccomp digest"

	printf '%s\n' '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}' >"$p"
	chmod 644 "$p"
	print_profile --seccomp-profile "$p" || return
	sha3=$(field seccomp.sha256)
	[[ $sha3 =~ ^[0-9a-f]{64}$ ]] || fail "expected a 64 hex digest with --seccomp-profile, got '$sha3'"
	[ "$sha3" != "$sha1" ] || fail "expected a different seccomp digest with --seccomp-profile"
	[ "$(field seccomp.mode)" != default ] || fail "expected seccomp.mode other than default with --seccomp-profile"

	print_profile --seccomp unconfined || return
	expect_field seccomp.mode unconfined
	expect_field no_new_privs True
	check "--print-profile ran nothing" [ ! -e "$WS/ran" ]
}

sec_each "capability sets are empty by default (uid 0 and 1000)" t_caps_default
sec_each "raw sockets need --cap-add NET_RAW, which works" t_net_raw
sec_each "--cap-add CHOWN,NET_BIND_SERVICE grant exactly those" t_cap_add_works
sec_each "--cap-drop removes capabilities (and ALL)" t_cap_drop
sec_each "--cap-add SYS_ADMIN/NET_ADMIN/SYS_PTRACE/BPF/... refused with 125" t_cap_refused
sec_each "--print-profile: capabilities, stable seccomp digest, rlimits, masks" t_print_profile
done_testing
