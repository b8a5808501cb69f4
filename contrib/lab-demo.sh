#!/usr/bin/env bash
# contrib/lab-demo.sh [BUILD_DIR] — allowlisted egress, shown in the private
# network lab (tests/lab/lab.sh): a "world" network namespace with its own
# resolver and web servers, so nothing here touches a real network.
#
# Needs root (network namespaces) and dnsmasq (package dnsmasq-base).
# Uses BUILD_DIR/tests/lab/cordon-lab: cordon built with the test-only
# override that lets the lab's 198.18.0.0/15 "internet" count as public.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
. "$top/tests/lab/lab.sh"
lab_isolate "$@" || { echo "lab-demo: needs root" >&2; exit 1; }
lab_up >/dev/null || { echo "lab-demo: could not build the lab" >&2; exit 1; }

cordon=$build/tests/lab/cordon-lab
[ -x "$cordon" ] || { echo "lab-demo: $cordon not built (meson -Dtests=true)" >&2; exit 1; }
show() { printf '\n$ cordon run --net-allow allowed.test -- %s\n' "$1"; }
sandbox() {
	lab_exec "$cordon" run --no-workspace --net-allow allowed.test --dns-upstream "$LAB_DNS4" \
		-- /bin/sh -c "$1" 2>&1 | sed 's/^/  /'
}

show "fetch http://allowed.test/"
sandbox 'printf "GET / HTTP/1.0\r\nHost: allowed.test\r\n\r\n" | nc -w 3 allowed.test 80 | tail -1'
show "nslookup denied.test"
sandbox 'nslookup denied.test 2>&1 | grep -i "can.t find" | head -1'
echo "  (queries for denied.test that reached the lab's resolver: $(lab_dns_queries denied.test))"
show "connect to ${LAB_IP4[server2]} (denied.test's address, never attested by DNS)"
sandbox "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 ${LAB_IP4[server2]} 80 || echo 'refused: no connection'"
