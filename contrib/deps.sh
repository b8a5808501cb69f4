#!/usr/bin/env bash
# contrib/deps.sh [--test] [--bench] — make sure cordon's Debian packages are installed.
#
#   (no option)  what building and running cordon needs
#   --test       also what contrib/test.sh needs
#   --bench      also the peer runtimes the benchmark compares against (optional)
#
# As root: installs what is missing (apt-get update first, only then).
# Otherwise: prints exactly one line, the apt-get command that installs what is
# missing, and exits 1. Exits 0 when nothing is missing.
#
# It can also be sourced (bash): it then only defines the lists and
# cordon_deps_ensure, which takes the same options and returns instead of exiting.

CORDON_DEPS_REQUIRED=(
	meson ninja-build pkg-config gcc clang libclang-rt-14-dev
	libcap-dev libseccomp-dev libnl-3-dev libnl-route-3-dev libnftnl-dev libmnl-dev libyajl-dev
	check busybox-static uidmap iproute2 procps util-linux python3 passt
)
# libclang-rt-14-dev: the fuzz build links libFuzzer and the sanitizer runtimes from it;
# it is only a Recommends of clang, which --no-install-recommends drops.
# passt: pasta, the rootless uplink of --net-allow.
# useradd/usermod for the cordon-test user; runuser is in util-linux above.
# nftables: a second reader of rulesets in tests; dnsmasq-base (the binary, no
# system service), bind9-dnsutils (dig): the network lab. buildah: tests/compat.
# containerd (with ctr and the runc v2 shim), umoci (builds the image
# offline): tests/compat/containerd.sh. qemu-system-x86, cpio, kmod (depmod),
# e2fsprogs (mke2fs): tests/vm, which boots Debian's own kernel (fetched with
# apt-get download, never installed) on pure cgroup v2. python3-jsonschema:
# every audit line the tests produce is validated against docs/audit.schema.json.
# The lint suite (tests/lint) runs shellcheck.
CORDON_DEPS_TEST=(passwd nftables dnsmasq-base bind9-dnsutils buildah podman containernetworking-plugins
	containerd umoci qemu-system-x86 cpio kmod libcap2-bin e2fsprogs python3-jsonschema shellcheck)
# Only tests/bench uses these; nothing else needs them.
CORDON_DEPS_BENCH=(bubblewrap runc crun iperf3)

# Prints the packages among "$@" that are not installed, one per line.
cordon_deps_missing() {
	local installed
	# One dpkg-query for all: it prints the known ones and complains about the rest.
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
		awk '$NF == "installed" && $(NF-1) == "ok" { print $1 }')
	local pkg
	for pkg in "$@"; do
		grep -qxF -- "$pkg" <<<"$installed" || printf '%s\n' "$pkg"
	done
}

cordon_deps_ensure() {
	local -a want=("${CORDON_DEPS_REQUIRED[@]}")
	local arg
	for arg in "$@"; do
		case $arg in
		--test) want+=("${CORDON_DEPS_TEST[@]}") ;;
		--bench) want+=("${CORDON_DEPS_BENCH[@]}") ;;
		*)
			echo "deps.sh: unknown option '$arg' (use --test, --bench)" >&2
			return 2
			;;
		esac
	done

	if ! command -v dpkg-query >/dev/null 2>&1; then
		echo "deps.sh: dpkg-query not found (not Debian?); make sure these are installed: ${want[*]}" >&2
		return 0
	fi

	local -a missing
	mapfile -t missing < <(cordon_deps_missing "${want[@]}")
	[ ${#missing[@]} -eq 0 ] && return 0

	if [ "$(id -u)" -ne 0 ]; then
		echo "apt-get install --no-install-recommends ${missing[*]}"
		return 1
	fi

	echo "deps.sh: installing ${missing[*]}" >&2
	if ! apt-get update -q >&2; then
		echo "deps.sh: apt-get update failed; trying the install with the current package lists" >&2
	fi
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
		echo "deps.sh: apt-get install failed for: ${missing[*]}" >&2
		return 1
	fi
	mapfile -t missing < <(cordon_deps_missing "${missing[@]}")
	if [ ${#missing[@]} -ne 0 ]; then
		echo "deps.sh: still not installed after apt-get: ${missing[*]}" >&2
		return 1
	fi
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	cordon_deps_ensure "$@"
	exit $?
fi
