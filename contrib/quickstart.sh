#!/usr/bin/env bash
# contrib/quickstart.sh — install what is missing, build cordon into build/,
# and show what a sandbox looks like from the inside.
#
# As root, missing Debian packages are installed; as another user the
# apt-get line that installs them is printed and the script stops.
set -euo pipefail

cd "$(dirname "$0")/.."
build=build

heading() { printf '\n== %s\n' "$*"; }
fail() {
	printf 'quickstart: %s\n' "$*" >&2
	exit 1
}

heading "Debian packages"
# As root also the lab's (dnsmasq-base, ...) for the network demo at the end.
deps_opt=
[ "$(id -u)" -eq 0 ] && deps_opt=--test
if ! contrib/deps.sh $deps_opt; then
	fail "some Debian packages are missing; install them as root with the apt-get line above, then run contrib/quickstart.sh again"
fi
echo "all present"

heading "Build (meson + ninja, in $build/)"
if [ ! -f "$build/build.ninja" ]; then
	log=$(mktemp)
	if [ -f "$build/meson-private/coredata.dat" ]; then
		meson setup --reconfigure "$build"
	else
		meson setup "$build"
	fi >"$log" 2>&1 || {
		cat "$log" >&2
		rm -f "$log"
		fail "meson setup failed (log above)"
	}
	rm -f "$log"
	echo "configured $build/"
fi
# ninja re-runs meson by itself when a meson.build changed; --quiet (ninja
# 1.11+) drops the progress lines and keeps warnings and errors.
quiet=
case $(ninja --help 2>&1 || true) in *--quiet*) quiet=--quiet ;; esac
ninja $quiet -C "$build" || fail "the build failed"
echo "built $build/cordon"
cordon=$build/cordon
[ -x "$cordon" ] || fail "$cordon was not built"

heading "Demo: $cordon run -- /bin/sh -c '...'  (default busybox rootfs, rootless when not root)"
# One sandbox for the tour; each step prints its own heading.
demo='
step() { printf "\n-- %s\n" "$*"; }
step "who am I inside (id, whoami)"
id
whoami
step "hostname"
hostname
step "the root filesystem is read-only (touch /probe)"
if out=$(touch /probe 2>&1); then
	echo "unexpected: / is writable"
	exit 1
fi
echo "refused: ${out#touch: }"
step "/tmp is a writable tmpfs"
echo hello >/tmp/probe && echo "wrote /tmp/probe: $(cat /tmp/probe)"
step "network: only the loopback interface (ip -o link)"
ip -o link | awk "{ print \$2, \$3 }"
echo "interfaces: $(ip -o link | wc -l)"
'
rc=0
"$cordon" run -- /bin/sh -c "$demo" || rc=$?
[ "$rc" -eq 0 ] || fail "the demo sandbox failed (exit status $rc)"

printf '\n-- exit codes pass through (cordon run -- /bin/sh -c "exit 7")\n'
rc=0
"$cordon" run -- /bin/sh -c 'exit 7' || rc=$?
echo "exit code: $rc"
[ "$rc" -eq 7 ] || fail "expected exit code 7"

heading "Demo: allowlisted egress (--net-allow), in a private network lab"
if [ "$(id -u)" -ne 0 ]; then
	echo "skipped: the lab builds network namespaces, which needs root (run contrib/lab-demo.sh as root)"
elif ! command -v dnsmasq >/dev/null 2>&1; then
	echo "skipped: the lab's resolver is dnsmasq (apt-get install dnsmasq-base, then contrib/lab-demo.sh)"
else
	contrib/lab-demo.sh "$build" || fail "the network demo failed"
fi

heading "Done"
echo "Try: $cordon run -- /bin/sh     (man ./man/cordon-run.1 for every option)"
