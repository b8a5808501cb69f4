#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC1090 # the settings file is the run's own
# The VM suite's guest side: PID 1 after the initramfs (tests/vm/vm.sh),
# on the host's root, read-only over 9p. Sets the machine up as a Debian 12
# machine on pure cgroup v2 would be (cgroup2 alone on /sys/fs/cgroup, /tmp
# on ext4, /dev/net/tun 0666 as udev makes it, a delegated cgroup subtree
# for the test user as systemd's user@UID.service is), runs the suites
# named in the settings, each as the host's meson would, renumbered into
# one TAP stream on the second serial port, and powers off.
. "$1"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export CORDON CORDON_LAB SEC_PROBE SEC_FAKELD CORDON_TEST_USER CI
export HOME=/root LANG=C.UTF-8

poweroff() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}

# Output that is not TAP goes to the console (ttyS0): the host shows its
# end when the run breaks off.
exec </dev/null >/dev/console 2>&1

setup_failed() {
	echo "vm guest: setup failed: $*"
	echo "not ok 1 - vm: guest setup: $*" >&3
	echo "1..1" >&3
	poweroff
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
# The TAP stream: raw, no CR added.
stty -F /dev/ttyS1 raw -echo -onlcr 2>/dev/null
exec 3>/dev/ttyS1

mkdir -p /dev/pts /dev/shm /dev/mqueue
# What udev and systemd-tmpfiles add to devtmpfs (bash's <(...) needs /dev/fd).
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts || setup_failed "devpts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm || setup_failed "tmpfs on /dev/shm"
mount -t mqueue mqueue /dev/mqueue 2>/dev/null
# Pure cgroup v2: cgroup2 alone, no v1 hierarchy anywhere.
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup || setup_failed "cgroup2 on /sys/fs/cgroup"
modprobe -a virtio_blk ext4 tun veth || setup_failed "modprobe virtio_blk ext4 tun veth"
# nftables' modules, loaded now rather than on first use: read over 9p
# and set up under emulation on a loaded host, the kernel's own
# autoloading could take most of cordon-nethelper's 30 s (vm-net.sh's
# rootful case gave no answer within them once). What a first rootful
# vm-net.sh case loads on 6.1; one missing is loaded on demand later.
modprobe -a nf_tables nft_ct nft_chain_nat nft_masq nft_fib_inet nft_connlimit nft_objref 2>/dev/null
for _ in $(seq 50); do [ -b /dev/vda ] && break; sleep 0.1; done
mount -t ext4 /dev/vda /tmp || setup_failed "the scratch disk on /tmp"
chmod 1777 /tmp
# As Debian's udev rules make it.
chmod 0666 /dev/net/tun
ip link set lo up
hostname cordon-vm

# Every controller the kernel offers, enabled from the root down, as
# systemd does on a unified host.
ctrls=$(sed 's/\([a-z_]*\)/+\1/g' /sys/fs/cgroup/cgroup.controllers)
echo "$ctrls" >/sys/fs/cgroup/cgroup.subtree_control || setup_failed "enabling $ctrls"

# The test user's delegated subtree: user.slice/user-UID.slice/user@UID.service,
# owned by the user with the files the kernel lists as delegatable, and
# every controller enabled down to it (systemd's Delegate=yes).
TEST_UID=$(id -u "$CORDON_TEST_USER") || setup_failed "no user $CORDON_TEST_USER"
TEST_GID=$(id -g "$CORDON_TEST_USER")
VM_DELEGATED=/sys/fs/cgroup/user.slice/user-$TEST_UID.slice/user@$TEST_UID.service
# The slices systemd makes, with the controllers enabled as its default
# accounting does: where root's services and logins (user-0.slice) run.
mkdir -p "$VM_DELEGATED" /sys/fs/cgroup/system.slice /sys/fs/cgroup/user.slice/user-0.slice ||
	setup_failed "mkdir $VM_DELEGATED"
for d in /sys/fs/cgroup/system.slice /sys/fs/cgroup/user.slice /sys/fs/cgroup/user.slice/user-0.slice \
	/sys/fs/cgroup/user.slice/user-$TEST_UID.slice "$VM_DELEGATED"; do
	echo "$ctrls" >"$d/cgroup.subtree_control" || setup_failed "enabling $ctrls in $d"
done
chown "$TEST_UID:$TEST_GID" "$VM_DELEGATED"
while read -r f; do
	[ -e "$VM_DELEGATED/$f" ] && chown "$TEST_UID:$TEST_GID" "$VM_DELEGATED/$f"
done </sys/kernel/cgroup/delegate
export VM_DELEGATED

# The rootfs on ext4, as a user's would be (the build's is on 9p here).
CORDON_ROOTFS_COPY=/tmp/cordon-vm-rootfs
cp -a "$CORDON_ROOTFS" "$CORDON_ROOTFS_COPY" || setup_failed "copying the rootfs"
chmod 755 "$CORDON_ROOTFS_COPY"
export CORDON_ROOTFS=$CORDON_ROOTFS_COPY

echo "# vm: up in $(cut -d' ' -f1 /proc/uptime) s: $(uname -r), $(nproc) cpus, cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)" >&3

# --- the suites -----------------------------------------------------------------

total=0
mkdir -p /tmp/vm-logs

# renumber NAME: a suite's TAP on stdin, onto fd 3 with numbers following
# the previous suites' and NAME before each description; the count of
# test lines and the plan it read into /tmp/vm-logs/NAME.count.
renumber() {
	awk -v name="$1" -v start="$total" -v countfile="/tmp/vm-logs/$1.count" '
	function emit(ok, desc) { n++; printf "%s %d - %s: %s\n", ok, start + n, name, desc; fflush() }
	/^(not )?ok( |$)/ {
		ok = ($0 ~ /^not /) ? "not ok" : "ok"
		desc = $0
		sub(/^(not )?ok *[0-9]* *(- )?/, "", desc)
		emit(ok, desc)
		next
	}
	/^1\.\.0( |$)/ {
		why = $0; sub(/^1\.\.0 *(# *[Ss][Kk][Ii][Pp])? */, "", why)
		emit("ok", "the whole suite # SKIP " why)
		plan = 0; skipped_all = 1
		next
	}
	/^1\.\.[0-9]+/ { plan = substr($0, 4) + 0; next }
	/^Bail out!/ { emit("not ok", $0); next }
	{ print; fflush() }
	END { printf "%d %s\n", skipped_all ? plan : n, plan == "" ? "none" : plan > countfile }' >&3
}

# run_suite PATH [CASES]: as meson runs it, bounded; its stderr kept in the logs
# and shown when it failed to finish. Just before its time is up, what
# is running is added to that log (what it hangs on).
run_suite() {
	local path=$1 cases=${2:-} name t0 rc got planned limit=${VM_SUITE_TIMEOUT:-600} watch
	name=$(basename "$path" .sh)
	t0=$SECONDS
	(
		sleep $((limit - 5))
		ps -eo pid,ppid,stat,wchan:24,etime,args | grep -v ' \[' | cut -c1-200 |
			sed 's/^/ps: /' >>"/tmp/vm-logs/$name.err"
	) &
	watch=$!
	(cd "$VM_SRC" && export E2E_CASES=$cases && exec timeout -k 10 "$limit" bash "$VM_SRC/$path") \
		2>>"/tmp/vm-logs/$name.err" | renumber "$name"
	rc=${PIPESTATUS[0]}
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	read -r got planned <"/tmp/vm-logs/$name.count"
	total=$((total + got))
	if [ "$planned" = none ] || [ "$planned" != "$got" ]; then
		total=$((total + 1))
		echo "not ok $total - $name: ended after $got of ${planned/none/an unknown number of} tests (status $rc)" >&3
	fi
	if [ "$planned" = none ] || [ "$planned" != "$got" ] || [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 124 ] && echo "# $name: stopped after $limit s" >&3
		echo "# $name: exit status $rc; its stderr ends:" >&3
		tail -n 40 "/tmp/vm-logs/$name.err" | sed 's/^/#   /' >&3
	fi
	echo "# vm: $name took $((SECONDS - t0)) s" >&3
}

(
	while read -r path cases; do
		[ -n "$path" ] && run_suite "$path" "$cases"
	done <<<"$VM_SUITES"
	echo "1..$total" >&3
)
poweroff
