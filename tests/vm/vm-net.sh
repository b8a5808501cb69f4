#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# VM suite: a networked smoke test on Debian 12's kernel, in the private
# network lab (tests/lab/lab.sh) inside the VM (which has no network
# device at all): rootful through the veth uplink (cordon-nethelper),
# rootless through pasta. On 6.1 nftables has no DESTROYSETELEM (6.3):
# every admission of an address takes the older way (ask, then DELSETELEM
# what exists), and a second answer for a name replaces its elements so.
# Uses the lab build of cordon ($CORDON_LAB), like e2e-netallow.sh.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || { echo "1..0 # SKIP needs root for the network lab"; exit 0; }
set -u

CORDON_LAB=${CORDON_LAB:-build/tests/lab/cordon-lab}
CORDON_ROOTFS=${CORDON_ROOTFS:-build/rootfs}
TEST_USER=${CORDON_TEST_USER:-cordon-test}
case $CORDON_LAB in /*) ;; *) CORDON_LAB=$PWD/$CORDON_LAB ;; esac
case $CORDON_ROOTFS in /*) ;; *) CORDON_ROOTFS=$PWD/$CORDON_ROOTFS ;; esac

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; printf '# %s\n' "$@"; }

if ! lab_up >/dev/null; then
	echo "not ok 1 - the network lab came up"
	echo "1..1"
	exit 0
fi
TMP=$(mktemp -d /tmp/cordon-vmnet.XXXXXX)
chmod 755 "$TMP"
mkdir -m 1777 "$TMP/out"
trap 'rm -rf "$TMP"; lab_down' EXIT

# sandbox MODE OPTIONS... -- CMD: cordon-lab run in the lab host, as MODE's user.
OUT='' RC=''
sandbox() {
	local mode=$1
	shift
	local -a who=()
	[ "$mode" = rootless ] && who=(runuser -u "$TEST_USER" -- env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR")
	OUT=$(cd "$TMP" && timeout 120 ip netns exec "$LAB_LH" env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR" \
		"${who[@]}" "$CORDON_LAB" run --no-workspace "$@" 2>&1)
	RC=$?
}
# The answer's last line; pasta stalls the close (docs/network.md), timeout ends nc.
http() { echo "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | timeout 10 nc -w 4 $1 80 | tail -1"; }
check() { # check MODE NAME CONDITION-COMMAND...
	local mode=$1 name=$2
	shift 2
	if "$@"; then ok "$mode: $name"; else not_ok "$mode: $name" "exit $RC, output:" "$OUT"; fi
}
has() { grep -q -- "$1" <<<"$OUT"; }
lacks() { ! has "$1"; }
denied_unforwarded() { has NXDOMAIN && [ "$1" = "$2" ]; }
unattested_unreachable() { lacks server2 && has end; }
no_links_left() {
	local links
	for _ in $(seq 100); do
		links=$(ip -n "$LAB_LH" -o link | grep -c ' cdr-') || true
		[ "$links" -eq 0 ] && return 0
		sleep 0.1
	done
	OUT="cdr-* links left in the lab host: $links"
	return 1
}

U=(--dns-upstream "$LAB_DNS4")
for mode in rootful rootless; do
	# E2E_CASES (as lib.sh's): the modes asked for.
	[ -z "${E2E_CASES:-}" ] || [[ $mode =~ $E2E_CASES ]] || continue
	if [ "$mode" = rootless ] && ! { command -v pasta >/dev/null && runuser -u "$TEST_USER" -- test -w /dev/net/tun; }; then
		if [ "${CI:-}" = true ]; then
			not_ok "rootless: pasta and a /dev/net/tun the user can open" "pasta: $(command -v pasta || echo missing); $(ls -l /dev/net/tun 2>&1)"
		else
			echo "ok $((n += 1)) - rootless # SKIP no pasta or /dev/net/tun not usable by $TEST_USER"
		fi
		continue
	fi
	# Two lookups, two fetches: the second answer replaces the elements
	# the first one inserted (pre-6.3 nftables: ask, then DELSETELEM).
	before=$(lab_dns_queries denied.test)
	sandbox "$mode" --net-allow allowed.test "${U[@]}" --result-json "$TMP/out/r-$mode.json" -- \
		sh -c "$(http allowed.test); $(http allowed.test); nslookup denied.test; $(http "${LAB_IP4[server2]}"); echo end"
	after=$(lab_dns_queries denied.test)
	check "$mode" "an allowed name resolves and its server answers, twice (its elements replaced)" \
		[ "$(printf '%s\n' "$OUT" | grep -c server1)" = 2 ]
	check "$mode" "a name off the allowlist gets NXDOMAIN and never reaches upstream" \
		denied_unforwarded "$before" "$after"
	check "$mode" "an address nothing attested is unreachable" unattested_unreachable
	chmod a+r "$TMP/out/r-$mode.json" 2>/dev/null
	OUT=$(cat "$TMP/out/r-$mode.json" 2>&1)
	check "$mode" "the result reports the policy, its backend and the address admitted" /usr/bin/python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["network"]
assert n["backend"] == ("veth" if sys.argv[2] == "rootful" else "pasta"), n
assert "denied.test" in n["denied_names"], n
names = {x["name"]: x for x in n["names"]}
assert "198.18.1.10" in names["allowed.test"]["inserted"], names
' "$TMP/out/r-$mode.json" "$mode"
	check "$mode" "nothing of the network is left on the lab host" no_links_left
done

echo "1..$n"
