#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the egress policy of `cordon run --net-allow`, in the network lab
# (tests/lab/lab.sh): default deny, names, literals, CIDRs, wildcards,
# CNAME chains, IPv6 (pasta carries it; the veth uplink is IPv4 only), and
# what the result reports.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

t_default_deny() {
	local q0
	q0=$(lab_dns_queries allowed.test)
	crun -- sh -c '. /workspace/p.sh; cat /proc/net/dev; cat /etc/resolv.conf; look allowed.test; conn 198.18.1.10 80'
	expect_rc 0
	expect_no_line 'eth0' "expected no eth0 without --net-allow"
	expect_line '^LOOK allowed.test FAIL' "expected the lookup to fail without --net-allow"
	expect_line '^CONN 198.18.1.10:80 FAIL' "expected no connection without --net-allow"
	[ "$(lab_dns_queries allowed.test)" = "$q0" ] || fail "the lab's resolver was asked for allowed.test"
}

t_allowed_name() {
	local h0
	h0=$(lab_http_hits server1)
	crun_net --net-allow allowed.test -- 'ip -o addr show dev eth0; ip route; ip -6 route; cat /etc/resolv.conf; look allowed.test; get allowed.test'
	expect_rc 0
	expect_line '^LOOK allowed.test OK .*198\.18\.1\.10( |$)' "expected allowed.test to resolve to 198.18.1.10"
	expect_line '^GET allowed.test:80 OK server1$' "expected an HTTP answer from server1"
	expect_line 'eth0 +inet 10\.254\.254\.2/30' "expected eth0 10.254.254.2/30"
	expect_line 'eth0 +inet6 fd63:6f72:646f:6e::2/64' "expected eth0 fd63:6f72:646f:6e::2/64"
	expect_line '^default via 10\.254\.254\.1 dev eth0' "expected the default route via 10.254.254.1"
	expect_line '^default via fd63:6f72:646f:6e::1 dev eth0' "expected the IPv6 default route via fd63:6f72:646f:6e::1"
	expect_line '^nameserver 10\.254\.254\.1$' "expected resolv.conf to name 10.254.254.1"
	expect_line '^nameserver fd63:6f72:646f:6e::1$' "expected resolv.conf to name fd63:6f72:646f:6e::1"
	[ "$(lab_http_hits server1)" -eq $((h0 + 1)) ] || fail "expected exactly one request at server1"
	expect_json '.mode == "allowlist" and .backend == "'"$(backend)"'"'
	expect_json '.names | map(select(.name == "allowed.test" and .allowed and (.inserted | index("198.18.1.10")))) | length == 1' \
		"expected names[] to show allowed.test allowed with 198.18.1.10 inserted"
}

t_denied_name() {
	local q0 h0
	q0=$(lab_dns_queries denied.test)
	h0=$(lab_http_hits server2)
	crun_net --net-allow allowed.test -- 'look denied.test; W=1 get denied.test; W=1 get 198.18.1.20; get allowed.test'
	expect_rc 0
	expect_line '^LOOK denied.test FAIL.*NXDOMAIN' "expected NXDOMAIN for denied.test"
	expect_line '^GET denied.test:80 FAIL' "expected no connection to denied.test"
	expect_line '^GET 198.18.1.20:80 FAIL.*timed out' "expected the unattested literal 198.18.1.20 to time out"
	expect_line '^GET allowed.test:80 OK server1$' "expected allowed.test to work alongside"
	[ "$(lab_dns_queries denied.test)" = "$q0" ] || fail "denied.test was forwarded to the lab's resolver"
	[ "$(lab_http_hits server2)" = "$h0" ] || fail "something reached server2"
	expect_json '.denied_names | index("denied.test") != null' "expected denied.test in denied_names"
	expect_json '.dns_denied >= 1 and .dns_forwarded >= 1 and .dns_queries >= .dns_denied + .dns_forwarded'
	expect_json '.dropped_packets > 0 and .dropped_bytes > 0' "expected dropped packets after the blocked connects"
	expect_json '.names | map(select(.name == "denied.test" and (.allowed | not) and .inserted == [])) | length == 1' \
		"expected names[] to show denied.test not allowed, nothing inserted"
}

t_literal() {
	crun_net --net-allow 198.18.1.20 -- 'get 198.18.1.20 & W=1 get 198.18.1.10 & look allowed.test & wait'
	expect_rc 0
	expect_line '^GET 198.18.1.20:80 OK server2$' "expected the listed literal to be reachable"
	expect_line '^GET 198.18.1.10:80 FAIL' "expected an unlisted address to stay unreachable"
	expect_line '^LOOK allowed.test FAIL.*NXDOMAIN' "expected names to be refused with only a literal listed"
	expect_json '.allow == ["198.18.1.20"]'
}

t_cidr() {
	crun_net --net-allow 198.18.1.0/24 -- 'get 198.18.1.10 & get 198.18.1.20 & get 198.18.1.40 & W=1 get 198.18.2.1 & wait'
	expect_rc 0
	expect_line '^GET 198.18.1.10:80 OK server1$'
	expect_line '^GET 198.18.1.20:80 OK server2$'
	expect_line '^GET 198.18.1.40:80 OK wild-a$'
	expect_line '^GET 198.18.2.1:80 FAIL' "expected 198.18.2.1 (outside the /24) to stay unreachable"
}

t_wildcard() {
	local qa qb
	qa=$(lab_dns_queries wild.test)
	qb=$(lab_dns_queries b.c.wild.test)
	crun_net --net-allow '*.wild.test' -- 'look a.wild.test; look wild.test; look b.c.wild.test; get a.wild.test; W=1 get 198.18.1.60'
	expect_rc 0
	expect_line '^LOOK a.wild.test OK .*198\.18\.1\.40' "expected *.wild.test to match a.wild.test"
	expect_line '^GET a.wild.test:80 OK wild-a$'
	expect_line '^LOOK wild.test FAIL.*NXDOMAIN' "expected *.wild.test not to match the apex"
	expect_line '^LOOK b.c.wild.test FAIL.*NXDOMAIN' "expected *.wild.test not to match two labels"
	expect_line '^GET 198.18.1.60:80 FAIL' "expected the apex's address to stay closed"
	[ "$(lab_dns_queries wild.test)" = "$qa" ] || fail "wild.test was forwarded upstream"
	[ "$(lab_dns_queries b.c.wild.test)" = "$qb" ] || fail "b.c.wild.test was forwarded upstream"
}

t_cname() {
	crun_net --net-allow cdn.allowed.test -- 'look cdn.allowed.test; get cdn.allowed.test; look edge.cdnnet.test'
	expect_rc 0
	expect_line '^LOOK cdn.allowed.test OK .*198\.18\.1\.30' "expected the CNAME chain to resolve"
	expect_line '^GET cdn.allowed.test:80 OK server3$' "expected the CNAME target to be reachable"
	expect_line '^LOOK edge.cdnnet.test FAIL.*NXDOMAIN' "expected the CNAME target itself not to be allowed by name"
	expect_json '.names | map(select(.name == "cdn.allowed.test")) | .[0].inserted | index("198.18.1.30") != null' \
		"expected 198.18.1.30 inserted for cdn.allowed.test"
}

t_ipv6() {
	crun_net --net-allow allowed.test,2001:2:0:1::20 -- 'look allowed.test; t0=$(date +%s); W=5 get 2001:2:0:1::20; W=5 get 2001:2:0:1::10; W=2 get 2001:2:0:1::30; echo "took $(( $(date +%s) - t0 ))"'
	expect_rc 0
	expect_line '^LOOK allowed.test OK .*2001:2:0:1::10' "expected the AAAA answer to pass"
	expect_json '.names | map(select(.name == "allowed.test")) | .[0].inserted | index("2001:2:0:1::10") != null' \
		"expected the AAAA address inserted"
	if [ "$MODE" = rootless ]; then
		# pasta carries IPv6: listed and attested addresses work, others do not.
		expect_line '^GET 2001:2:0:1::20:80 OK server2' "expected the listed IPv6 address reachable"
		expect_line '^GET 2001:2:0:1::10:80 OK server1' "expected the AAAA-attested address reachable"
		expect_line '^GET 2001:2:0:1::30:80 FAIL' "expected an unattested IPv6 address unreachable"
	else
		# The veth uplink is IPv4 only: no IPv6 route out, connects fail at once.
		expect_line '^GET 2001:2:0:1::20:80 FAIL.*Network is unreachable' "expected IPv6 to fail fast: no IPv6 route out"
		expect_line '^GET 2001:2:0:1::10:80 FAIL.*Network is unreachable' "expected IPv6 to fail fast: no IPv6 route out"
		expect_line '^took [0-6]$' "expected IPv6 connects to fail at once, not time out (5 s, 5 s, 2 s)"
	fi
}

# As root, --net-backend pasta carries IPv6 too (the veth uplink cannot).
t_ipv6_root_pasta() {
	crun_net --net-backend pasta --net-allow allowed.test -- 'look allowed.test; W=5 get 2001:2:0:1::10; W=2 get 2001:2:0:1::20'
	expect_rc 0
	expect_line '^GET 2001:2:0:1::10:80 OK server1' "expected the AAAA-attested address reachable through pasta as root"
	expect_line '^GET 2001:2:0:1::20:80 FAIL' "expected an unattested IPv6 address unreachable"
}

t_multi() {
	crun_net --net-allow multi.allowed.test -- 'look multi.allowed.test'
	expect_rc 0
	expect_line '^LOOK multi.allowed.test OK ' "expected multi.allowed.test to resolve"
	local answered inserted a missing=
	answered=$(grep '^LOOK multi' <<<"$OUT" | cut -d' ' -f4- | tr ' ' '\n' | grep . | sort)
	inserted=$(jnet '.names[] | select(.name == "multi.allowed.test") | .inserted[]' | tr -d '"' | sort)
	[ -n "$inserted" ] || fail "expected inserted addresses for multi.allowed.test"
	[ "$(grep -c . <<<"$inserted")" -le 16 ] || fail "expected at most 16 inserted addresses per answer"
	for a in $answered; do
		grep -qx "$a" <<<"$inserted" || missing+=" $a"
	done
	[ -z "$missing" ] || fail "answered but not inserted (the client would be sent to closed addresses):$missing"
}

each_mode "net: without --net-allow: no eth0, no lookups, nothing reachable" net_case t_default_deny
each_mode "net: an allowed name resolves and answers over HTTP" net_case t_allowed_name
each_mode "net: a denied name is NXDOMAIN, never forwarded; its address is closed" net_case t_denied_name
each_mode "net: a listed literal address is reachable, others are not" net_case t_literal
each_mode "net: a listed CIDR opens its addresses only" net_case t_cidr
each_mode "net: *.wild.test matches one label only" net_case t_wildcard
each_mode "net: a CNAME chain from an allowed name works" net_case t_cname
each_mode "net: IPv6: pasta carries it under the same policy, veth fails at once" net_case t_ipv6
rootful_only "net: IPv6 through --net-backend pasta as root" net_case t_ipv6_root_pasta
each_mode "net: every address in an answer is open (40 A records)" net_case t_multi
done_testing
