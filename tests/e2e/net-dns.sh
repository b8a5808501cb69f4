#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the sandbox's DNS, in the network lab (tests/lab/lab.sh): the proxy
# strips answers that point at metadata or loopback, metadata stays closed
# unless listed exactly, no resolver but the proxy is reachable, the proxy
# answers over TCP too, --dns none closes port 53, and an address learnt
# from a 1-second TTL outlives it (the 30 s floor); TCP clients that reset
# after a denied query leave the proxy (and the supervisor) running.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

t_rebind() {
	local h0
	h0=$(lab_http_hits metadata)
	crun_net --net-allow rebind.allowed.test -- 'look rebind.allowed.test; W=1 get 169.254.169.254 & W=1 get 127.0.0.1 8080 & wait'
	expect_rc 0
	expect_no_line '^LOOK rebind.allowed.test OK' "expected no address in the answer for rebind.allowed.test"
	expect_no_line '^LOOK.*(169\.254\.169\.254|127\.0\.0\.1)' "expected 169.254.169.254 and 127.0.0.1 stripped from the answer"
	expect_line '^GET 169.254.169.254:80 FAIL' "expected the metadata address to stay closed"
	expect_line '^GET 127.0.0.1:8080 FAIL' "expected nothing on the sandbox's own 127.0.0.1:8080"
	[ "$(lab_http_hits metadata)" = "$h0" ] || fail "something reached the metadata server"
	expect_json '.names | map(select(.name == "rebind.allowed.test")) | .[0] | .allowed and .inserted == [] and ([.refused[].address] | sort == ["127.0.0.1", "169.254.169.254"])' \
		"expected both addresses refused, nothing inserted, for rebind.allowed.test"
	expect_json '[.names[].refused[].reason] | all(type == "string" and length > 0)' "expected a reason for each refused address"
}

t_metadata_cover() {
	local h0
	h0=$(( $(lab_http_hits metadata) + $(lab_http_hits metadata-ecs) + $(lab_http_hits metadata-alibaba) + $(lab_http_hits metadata-azure) ))
	# Ranges that contain the metadata addresses open everything else in
	# them, never the metadata addresses themselves.
	crun_net --net-allow 169.254.0.0/16,100.64.0.0/10,168.63.129.0/24 -- \
		'W=1 get 169.254.169.254 & W=1 get 169.254.170.2 & W=1 get 100.100.100.200 & W=1 get 168.63.129.16 & wait'
	expect_rc 0
	expect_line '^GET 169.254.169.254:80 FAIL' "expected 169.254.169.254 closed under 169.254.0.0/16"
	expect_line '^GET 169.254.170.2:80 FAIL' "expected 169.254.170.2 closed under 169.254.0.0/16"
	expect_line '^GET 100.100.100.200:80 FAIL' "expected 100.100.100.200 closed under 100.64.0.0/10"
	expect_line '^GET 168.63.129.16:80 FAIL' "expected 168.63.129.16 closed under 168.63.129.0/24"
	[ $(( $(lab_http_hits metadata) + $(lab_http_hits metadata-ecs) + $(lab_http_hits metadata-alibaba) + $(lab_http_hits metadata-azure) )) = "$h0" ] ||
		fail "something reached a metadata server"
	expect_json '.dropped_packets >= 4' "expected the metadata connects counted as dropped"
}

t_metadata_exact() {
	crun_net --net-allow 169.254.169.254 -- 'get 169.254.169.254 & W=1 get 169.254.170.2 & wait'
	expect_rc 0
	expect_line '^GET 169.254.169.254:80 OK metadata$' "expected 169.254.169.254 reachable when listed exactly"
	expect_line '^GET 169.254.170.2:80 FAIL' "expected 169.254.170.2 to stay closed"
}

t_foreign_resolver() {
	local q0
	q0=$(lab_dns_queries denied.test)
	crun_net --net-allow allowed.test -- "T=4 look denied.test $LAB_DNS4 & W=1 conn $LAB_DNS4 53 & T=4 look allowed.test $LAB_DNS4 & wait"
	expect_rc 0
	expect_line '^LOOK denied.test FAIL' "expected a query to $LAB_DNS4 (not the proxy) to fail"
	expect_no_line 'NXDOMAIN' "expected no answer at all from $LAB_DNS4"
	expect_line '^LOOK allowed.test FAIL' "expected even an allowed name to fail through $LAB_DNS4"
	expect_line "^CONN $LAB_DNS4:53 FAIL" "expected no TCP connection to $LAB_DNS4:53"
	[ "$(lab_dns_queries denied.test)" = "$q0" ] || fail "denied.test reached the lab's resolver"
}

t_tcp() {
	local q0
	q0=$(lab_dns_queries denied.test)
	# Only the TCP answer attests 198.18.1.10 before the connect.
	crun_net --net-allow allowed.test -- 'tcpdns allowed.test; tcpdns denied.test; get 198.18.1.10'
	expect_rc 0
	expect_line '^TCPDNS allowed.test rcode=0 an=[1-9][0-9]* addrs=198\.18\.1\.10$' "expected an A answer over TCP"
	expect_line '^TCPDNS denied.test rcode=3 an=0 ' "expected NXDOMAIN over TCP for denied.test"
	expect_line '^GET 198.18.1.10:80 OK server1$' "expected the address attested over TCP to be open"
	[ "$(lab_dns_queries denied.test)" = "$q0" ] || fail "denied.test reached the lab's resolver"
}

t_dns_none() {
	local q0
	q0=$(lab_dns_queries allowed.test)
	crun_net --dns none --net-allow 198.18.1.10,allowed.test -- \
		'cat /etc/resolv.conf; echo ---; T=3 look allowed.test & T=3 look allowed.test 10.254.254.1 & W=1 conn 10.254.254.1 53 & get 198.18.1.10 & wait'
	expect_rc 0
	expect_no_line '^nameserver' "expected no nameserver in resolv.conf with --dns none"
	expect_line '^LOOK allowed.test FAIL' "expected lookups to fail with --dns none"
	expect_no_line '^LOOK allowed.test OK' "expected lookups to fail with --dns none"
	expect_line '^CONN 10.254.254.1:53 FAIL' "expected port 53 closed on the gateway"
	expect_line '^GET 198.18.1.10:80 OK server1$' "expected the literal entry to work without DNS"
	[ "$(lab_dns_queries allowed.test)" = "$q0" ] || fail "allowed.test reached the lab's resolver"
	expect_json '.dns == "none" and .names == []'
}

t_ttl_floor() {
	crun_net --net-allow ttl1.allowed.test -- 'look ttl1.allowed.test; sleep 2.5; get 198.18.1.70'
	expect_rc 0
	expect_line '^LOOK ttl1.allowed.test OK .*198\.18\.1\.70' "expected ttl1.allowed.test to resolve"
	expect_line '^GET 198.18.1.70:80 OK ttl1$' "expected the address still open 2.5 s after a 1 s TTL (30 s floor)"
}

# The lab build's CORDON_LAB_DNS_TTL_FLOOR lowers the floor to 2 s so that
# expiry can be watched: a connection opened before it keeps working (the
# forward chain accepts established traffic first), a new one after it is
# dropped.
t_ttl_expiry() {
	XENV=(CORDON_LAB_DNS_TTL_FLOOR=2)
	crun_net --net-allow ttl1.allowed.test -- 'look ttl1.allowed.test
		{ sleep 4; printf "GET / HTTP/1.0\r\n\r\n"; sleep 2; } | timeout 8 nc -w 7 198.18.1.70 80 > /tmp/old &
		sleep 3.5; W=2 get 198.18.1.70; wait
		grep -q "^ttl1" /tmp/old && echo "OLD OK" || echo "OLD FAIL"'
	XENV=()
	expect_rc 0
	expect_line '^LOOK ttl1.allowed.test OK .*198\.18\.1\.70' "expected ttl1.allowed.test to resolve"
	expect_line '^GET 198.18.1.70:80 FAIL' "expected a new connection refused once the (2 s) TTL expired"
	expect_line '^OLD OK$' "expected the connection opened before the expiry to keep working"
}

# TCP clients of the proxy that send a query for a denied name and reset
# (SO_LINGER {1, 0}) before reading the answer: the answer's send fails
# and closes the client while the proxy's read loop still held it (a
# use after free in the supervisor: it crashed). 200 of them, then an
# allowed lookup (UDP and TCP) and a fetch still work and the exit status
# is the workload's.
t_tcp_reset() {
	local q0
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	q0=$(lab_dns_queries denied.test)
	crun_net --net-allow allowed.test -- \
		'sec-probe dns-reset:10.254.254.1:53:denied.test:200; look allowed.test; tcpdns allowed.test; get allowed.test; exit 7'
	expect_rc 7
	expect_line '^dns-reset:10\.254\.254\.1:53:denied\.test:200=ok 200$' "expected 200 connections made and reset"
	expect_line '^LOOK allowed.test OK .*198\.18\.1\.10' "expected allowed.test to resolve after the resets"
	expect_line '^TCPDNS allowed.test rcode=0 an=[1-9][0-9]* addrs=198\.18\.1\.10$' "expected the proxy to still answer over TCP"
	expect_line '^GET allowed.test:80 OK server1$' "expected a fetch of allowed.test after the resets"
	[ "$(lab_dns_queries denied.test)" = "$q0" ] || fail "denied.test reached the lab's resolver"
	expect_json '[.names[] | select(.name == "denied.test" and (.allowed | not))] | length >= 1' \
		"expected the denied queries in the result"
}

each_mode "net: rebind.allowed.test: loopback and metadata answers stripped, never opened" net_case t_rebind
each_mode "net: metadata stays closed under a covering range" net_case t_metadata_cover
each_mode "net: 169.254.169.254 listed exactly is reachable" net_case t_metadata_exact
each_mode "net: a resolver other than the proxy is unreachable" net_case t_foreign_resolver
each_mode "net: the proxy answers over TCP and its answers open addresses" net_case t_tcp
each_mode "net: --dns none: no nameserver, port 53 closed, literals work" net_case t_dns_none
each_mode "net: an address from a 1 s TTL stays open past it (30 s floor)" net_case t_ttl_floor
each_mode "net: after the TTL (floor 2 s) new connections fail, established ones live" net_case t_ttl_expiry
each_mode "net: 200 TCP clients that reset after a denied query; the proxy lives on" net_case t_tcp_reset
done_testing
