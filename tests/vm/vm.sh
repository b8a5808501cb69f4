#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM suite: cordon's own tests on a pure cgroup v2 host running Debian
# 12's kernel (6.1), in a QEMU virtual machine this script boots (TCG: no
# KVM needed). Output is one TAP stream (the guest's suites, renumbered),
# with the time budget and the time taken as its first and last lines.
#
# Everything comes from Debian packages: qemu-system-x86, busybox-static,
# cpio, kmod and e2fsprogs installed (contrib/deps.sh --test), and the
# kernel package linux-image-amd64 depends on, fetched with apt-get
# download and unpacked (never installed) into a cache kept between runs.
# The guest sees the host's root read-only over 9p (so it runs this
# checkout's build), the kernel package's modules as its /lib/modules, a
# fresh ext4 disk as /tmp (as on a Debian 12 machine, where /tmp is on the
# root filesystem), tmpfs on /run; it has no network device at all.
#
# Environment (meson sets the first ones; defaults suit a run by hand from
# the top of the checkout):
#   CORDON, CORDON_LAB, CORDON_ROOTFS, SEC_PROBE, SEC_FAKELD, CORDON_TEST_USER
#                       as for the e2e, security and net suites
#   CORDON_VM_SUITES    what runs inside: lines "PATH [CASES]" (default:
#                       VM_SUITES_DEFAULT below)
#   CORDON_VM_BUDGET    seconds the VM may run before it is stopped (1500; the
#                       last line says what it took and the CPU time qemu used)
#   CORDON_VM_CACHE     where the kernel package is kept
#                       (/var/cache/cordon-vm as root, else ~/.cache/cordon-vm)
#   CORDON_VM_KERNEL    a linux-image-* package name to use instead of the
#                       one linux-image-amd64 depends on now
#   CI                  "true": a VM that cannot be booted is a failure, not a skip
set -u
set -o pipefail

started=$SECONDS
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../.." && pwd -P)

abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }
CORDON=$(abspath "${CORDON:-build/cordon}")
CORDON_LAB=$(abspath "${CORDON_LAB:-build/tests/lab/cordon-lab}")
CORDON_ROOTFS=$(abspath "${CORDON_ROOTFS:-build/rootfs}")
SEC_PROBE=$(abspath "${SEC_PROBE:-build/tests/security/sec-probe}")
SEC_FAKELD=${SEC_FAKELD-build/tests/security/sec-fakeld}
[ -z "$SEC_FAKELD" ] || SEC_FAKELD=$(abspath "$SEC_FAKELD")
CORDON_TEST_USER=${CORDON_TEST_USER:-cordon-test}
BUDGET=${CORDON_VM_BUDGET:-1500}
# What runs inside, in this order: one suite a line, "PATH [CASES]", CASES
# an extended regular expression over the script's case names (E2E_CASES,
# tests/e2e/lib.sh; empty: all of it). Chosen to keep the VM to a few
# minutes under emulation (TCG runs this code 10-20 times slower than the
# host): what depends on the kernel and the cgroup layout, not what
# cordon does the same everywhere (argument checks, the OCI command line),
# which the host's suites cover.
VM_SUITES_DEFAULT="\
tests/vm/vm-kernel.sh
tests/vm/vm-cgroup2.sh
tests/e2e/e2e-cgroup.sh ^(--memory 32 --memory-swap 32|--pids 20|--cpus 0\.5|cgroup namespace|cgroups of a SIGKILLed supervisor removed by cordon sweep|a workload.s own child cgroups \(a/b/c)
tests/e2e/e2e-oci-ops.sh ^linux\.resources
tests/e2e/e2e-basic.sh ^hello
tests/e2e/e2e-fs.sh ^--overlay
tests/security/sec-syscalls.sh ^(denied system calls fail with EPERM/ENOSYS \(uid 0\)|i386)
tests/security/sec-self.sh ^(cordon exec: a hostile loader|a hostile loader run as cordon: a sealed copy)
tests/vm/vm-net.sh"
VM_SUITES=${CORDON_VM_SUITES:-$VM_SUITES_DEFAULT}
if [ "$(id -u)" -eq 0 ]; then
	CACHE=${CORDON_VM_CACHE:-/var/cache/cordon-vm}
else
	CACHE=${CORDON_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cordon-vm}
fi

WORK=
QEMU_PID=
cleanup() {
	# timeout(1) passes the TERM on to qemu.
	[ -z "$QEMU_PID" ] || kill -TERM "$(cat "$WORK/timeout.pid" 2>/dev/null)" 2>/dev/null
	[ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo "# vm: time budget ${BUDGET} s for the VM (TCG); suites: $(printf '%s\n' "$VM_SUITES" | awk '{ print $1 }' | xargs -n1 basename | tr '\n' ' ')"

# The VM cannot be had: a skip, or under CI a failure.
cannot_boot() {
	if [ "${CI:-}" = true ]; then
		echo "not ok 1 - vm: the VM could not be booted: $*"
		echo "1..1"
	else
		echo "1..0 # SKIP the VM could not be booted: $*"
	fi
	exit 0
}

for tool in qemu-system-x86_64 cpio depmod mke2fs dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
	command -v "$tool" >/dev/null 2>&1 ||
		cannot_boot "$tool not found (contrib/deps.sh --test installs qemu-system-x86, cpio, kmod, e2fsprogs)"
done
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && "$BUSYBOX" --list 2>/dev/null | grep -x switch_root >/dev/null ||
	cannot_boot "no static busybox at $BUSYBOX (busybox-static)"
[ -x "$CORDON" ] || cannot_boot "no cordon binary at $CORDON (build first)"

# --- the kernel package -----------------------------------------------------

# The package linux-image-amd64 depends on now: what a Debian 12 machine
# that takes its updates runs.
kernel_package() {
	local pkg
	[ -n "${CORDON_VM_KERNEL:-}" ] && { echo "$CORDON_VM_KERNEL"; return; }
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
		# No package lists yet (a fresh machine): read them once.
		apt-get update -q >/dev/null 2>&1
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	fi
	echo "$pkg"
}

# fetch_kernel PKG: unpacked into $CACHE/PKG (vmlinuz, lib/modules with
# modules.dep), once; the package's version in $CACHE/PKG/version.
fetch_kernel() {
	local pkg=$1 dir=$CACHE/$1 dl deb
	[ -f "$dir/ready" ] && return 0
	rm -rf "$dir" "$dir.tmp"
	dl=$dir.tmp
	mkdir -p "$dl/dl" || return 1
	# apt drops to _apt for the download; let it write there.
	id _apt >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && chown _apt "$dl/dl"
	(cd "$dl/dl" && apt-get download -q "$pkg") >"$dl/apt.log" 2>&1 || {
		cat "$dl/apt.log" >&2
		return 1
	}
	deb=$(echo "$dl"/dl/"$pkg"_*.deb)
	[ -f "$deb" ] || return 1
	dpkg-deb -f "$deb" Version >"$dl/version" &&
		dpkg-deb -x "$deb" "$dl/root" &&
		rm -f "$deb" || return 1
	local kver
	kver=$(basename "$(echo "$dl"/root/lib/modules/*)")
	depmod -b "$dl/root" "$kver" || return 1
	echo "$kver" >"$dl/kver"
	touch "$dl/ready"
	mv "$dl" "$dir"
}

mkdir -p "$CACHE" || cannot_boot "cannot make the cache directory $CACHE"
exec 9>"$CACHE/lock"
flock 9
KPKG=$(kernel_package)
if [ -n "$KPKG" ] && ! fetch_kernel "$KPKG"; then
	echo "# vm: apt-get download $KPKG failed" >&2
	KPKG=
fi
if [ -z "$KPKG" ]; then
	# No package index or no mirror: the newest kernel fetched before.
	KPKG=$(cd "$CACHE" && ls -d linux-image-*/ 2>/dev/null | sed 's,/$,,' | sort -V | tail -n 1)
	[ -n "$KPKG" ] && [ -f "$CACHE/$KPKG/ready" ] ||
		cannot_boot "no Debian kernel package: apt-get download of linux-image-amd64's kernel failed and none is cached in $CACHE"
fi
# Older kernels than the one used go (each is 400 MB unpacked).
for old in "$CACHE"/linux-image-*; do
	[ "$old" = "$CACHE/$KPKG" ] || rm -rf "$old"
done
flock -u 9
KVER=$(cat "$CACHE/$KPKG/kver")
echo "# vm: kernel $KPKG $(cat "$CACHE/$KPKG/version") ($KVER), Debian's package, unpacked in $CACHE/$KPKG"
KDIR=$CACHE/$KPKG/root

# --- initramfs, scratch disk, settings ------------------------------------------

WORK=$(mktemp -d /var/tmp/cordon-vm.XXXXXX) || cannot_boot "mktemp failed"
initrd=$WORK/initrd
(
	set -e
	cd "$WORK"
	mkdir -p ir/bin ir/proc ir/sys ir/dev ir/newroot ir/modules ir/vm
	cp "$BUSYBOX" ir/bin/busybox
	ln -s busybox ir/bin/sh
	cp "$here/initramfs-init" ir/init
	chmod 755 ir/init
	: >ir/modules/order
	mdir=$KDIR/lib/modules/$KVER
	[ -f "$mdir/modules.dep" ]
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
		netfs fscache 9pnet 9pnet_virtio 9p overlay; do
		f=$(awk -F: -v m="/$m.ko" 'substr($1, length($1) - length(m) + 1) == m { print $1; exit }' \
			"$mdir/modules.dep")
		if [ -n "$f" ]; then
			cp "$mdir/$f" "ir/modules/$m.ko"
			echo "$m" >>ir/modules/order
		fi
	done
	{
		for v in CORDON CORDON_LAB CORDON_ROOTFS SEC_PROBE SEC_FAKELD CORDON_TEST_USER VM_SUITES KVER KPKG; do
			printf '%s=%q\n' "$v" "${!v}"
		done
		printf 'VM_SRC=%q\nVM_GUEST=%q\nCI=%q\n' "$src" "$here/guest.sh" "${CI:-}"
	} >ir/vm/settings
	(cd ir && find . | cpio -o -H newc --quiet) | gzip -1 >"$initrd"
) || cannot_boot "building the initramfs failed"

# A sparse ext4 disk for the guest's /tmp: made here, gone with $WORK.
disk=$WORK/scratch.img
truncate -s 8G "$disk" && mke2fs -q -t ext4 -F -E lazy_itable_init=1 "$disk" ||
	cannot_boot "making the scratch disk failed"

# --- boot -------------------------------------------------------------------------

console=$WORK/console.log
tap=$WORK/tap
mkfifo "$tap"
# -nodefaults: no NIC, no VGA, no monitor. ttyS0 is the console (kept in a
# file, shown when something fails), ttyS1 the TAP stream. mitigations=off:
# the page-table isolation a kernel turns on for an emulated CPU flushes
# its TLB at every system call, which costs TCG dearly; nothing cordon
# does depends on it.
# The reader below waits in open() until qemu opens the fifo; if qemu never
# does (it failed at once), the subshell's own open lets the reader go.
(
	nice -n 10 timeout -k 10 "$BUDGET" qemu-system-x86_64 \
		-nodefaults -no-reboot -display none -accel tcg,thread=multi -cpu max -smp 2 -m 2048 \
		-kernel "$KDIR/boot/vmlinuz-$KVER" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 quiet mitigations=off" \
		-serial "file:$console" -serial "file:$tap" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$KDIR/lib/modules/$KVER,mount_tag=kmodules,security_model=none,readonly=on" \
		-drive "file=$disk,format=raw,if=virtio,cache=unsafe" \
		</dev/null >"$WORK/qemu.out" 2>&1 &
	echo $! >"$WORK/timeout.pid"
	wait $!
	echo $? >"$WORK/qemu.rc"
	exec 3<>"$tap"
) &
QEMU_PID=$!

# Forward the guest's TAP as it comes, keeping count, and the CPU time qemu
# has used so far (what an idle machine needs, about: TCG runs its vCPUs on
# up to two threads).
last=0 plan='' qpid='' cpu_ticks=0
while IFS= read -r line; do
	line=${line%$'\r'}
	[ -n "$qpid" ] || qpid=$(pgrep -P "$(cat "$WORK/timeout.pid" 2>/dev/null)" 2>/dev/null | head -n 1)
	if [ -n "$qpid" ] && read -r -a st <"/proc/$qpid/stat" 2>/dev/null; then
		cpu_ticks=$((st[13] + st[14]))
	fi
	case $line in
	"ok "* | "not ok "*)
		n=${line#not }
		n=${n#ok }
		n=${n%% *}
		[[ $n =~ ^[0-9]+$ ]] && last=$n
		;;
	1..*) plan=$line ;;
	esac
	printf '%s\n' "$line"
done <"$tap"
wait "$QEMU_PID"
QEMU_PID=
rc=$(cat "$WORK/qemu.rc" 2>/dev/null || echo '?')
took=$((SECONDS - started))

if [ -z "$plan" ]; then
	why="the VM ended before the suites finished (qemu status $rc"
	[ "$rc" = 124 ] && why+=": the time budget of $BUDGET s ran out"
	echo "not ok $((last + 1)) - vm: $why)"
	echo "# qemu said:"
	sed 's/^/#   /' "$WORK/qemu.out" | tail -n 20
	echo "# the console's last lines:"
	tail -n 40 "$console" | sed 's/^/#   /'
	echo "1..$((last + 1))"
fi
echo "# vm: took ${took} s (budget ${BUDGET} s for the VM; kernel $KVER; qemu used $((cpu_ticks / $(getconf CLK_TCK))) s of CPU; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
exit 0
