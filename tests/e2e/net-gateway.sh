#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: nothing leaves the gateway that the policy did not allow, in the
# network lab (tests/lab/lab.sh). A workload with NET_RAW forges sources
# (a denied server, the metadata address, the lab host, IPv4-mapped ones)
# on queries to the DNS proxy over IPv4 and IPv6, UDP and TCP, sends
# packets with a TTL of 1, and IPv6 SYNs to every embedded form of the
# lab host's address; it sends the proxy queries with extra records,
# options and trailing bytes; DNS answers carry IPv6 forms of the
# metadata address in the ranges the vetting table gained. Whatever
# could leak is watched where it would arrive: a capture of every packet
# on every link of the world (WORLD) and of the lab host (LH: its links
# to the world, the veth uplinks' host ends, its loopback, where pasta's
# sockets reach the host), each packet searched for a token the case put
# in what it sent.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || { echo "1..0 # SKIP needs root for the network lab"; exit 0; }
. "$(dirname "$0")/net-lib.sh"

GW4=10.254.254.1
GW6=fd63:6f72:646f:6e::1
WL4=10.254.254.2
WL6=fd63:6f72:646f:6e::2

# --- captures -----------------------------------------------------------------

# cap_start: a token of this case's own (TOKEN), and captures of WORLD
# and LH (files $LAB_DIR/world-N.cap and host-N.cap) that mark it.
CAP_N=0
cap_start() {
	CAP_N=$((CAP_N + 1))
	TOKEN=lk$RANDOM$RANDOM
	CAP_WORLD=world-$CAP_N
	CAP_HOST=host-$CAP_N
	if ! lab_capture_start "$CAP_WORLD" "$LAB_WORLD" "$TOKEN" ||
		! lab_capture_start "$CAP_HOST" "$LAB_LH" "$TOKEN"; then
		fail "the lab's captures did not start"
		return 1
	fi
}

# cap_end: both captures have logged all they saw, then stop.
cap_end() {
	lab_capture_sync "$CAP_WORLD" "$LAB_WORLD" || fail "the world's capture fell behind"
	lab_capture_sync "$CAP_HOST" "$LAB_LH" || fail "the lab host's capture fell behind"
	lab_capture_stop "$CAP_WORLD"
	lab_capture_stop "$CAP_HOST"
}

# cap_lines AWK-CONDITION: the lines of both captures that match it
# (fields as lab-capture.py writes them), each prefixed with where.
cap_lines() {
	local f
	for f in "$CAP_WORLD" "$CAP_HOST"; do
		awk -v where="${f%-*}" "
			{ delete v; for (i = 1; i <= NF; i++) { k = \$i; sub(/=.*/, \"\", k); x = \$i; sub(/^[^=]*=/, \"\", x); v[k] = x } }
			$1 { print where \": \" \$0 }" "$LAB_DIR/$f.cap"
	done
}

# expect_no_capture AWK-CONDITION WHAT: nothing of the kind reached the
# world or the lab host.
expect_no_capture() {
	local seen
	seen=$(cap_lines "$1" | cut -c1-300)
	[ -z "$seen" ] || fail "$2 ($(wc -l <<<"$seen") packets):
$(head -n 6 <<<"$seen" | _indent)"
}

# Whatever carries this case's token.
expect_no_token() {
	expect_no_capture 'v["markers"] != "-"' "${1:-packets carrying what the workload sent reached the world or the lab host}"
}

# What a case's workload runs first: a query to the proxy's IPv6 address.
# The workload then has the gateway's link-layer address: a first raw
# packet with a source of its own choosing waits seconds for neighbour
# discovery (and may be dropped with the sandbox gone before it is done).
PRIME="look allowed.test $GW6 >/dev/null"

# --- cases ------------------------------------------------------------------------

# A workload that resolves and fetches one allowed name: nothing of the
# gateway's own (neighbour discovery, listener reports, the workload's
# address set-up) is dropped and counted.
t_quiet() {
	crun_net --net-allow allowed.test -- 'look allowed.test; get allowed.test'
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$'
	expect_json '.dropped_packets == 0' "expected nothing dropped for a workload that broke no rule"
}

# The flows a workload has open at once are capped (--net-max-flows):
# each new port pair is a conntrack entry in G and, through the veth
# uplink's masquerade, in the host's namespace, whose one table serves
# everything there. 300 UDP flows (no capability needed) pass under the
# default cap; under a cap of 64 the rest are dropped and counted, and
# the sandbox's host (the lab host) gains no more entries than the cap.
lh_conntrack() { ip netns exec "$LAB_LH" cat /proc/sys/net/netfilter/nf_conntrack_count; }
t_flow_cap() {
	local c0 c1 server=${LAB_IP4[server1]}
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	crun_net --net-allow "$server" -- "sec-probe udp-flows:$server:20000:300"
	expect_rc 0
	expect_line '^udp-flows:.*=300$'
	expect_json '.dropped_packets == 0 and .max_flows == 16384' "expected 300 flows to pass under the default cap"
	c0=$(lh_conntrack)
	crun_net --net-allow "$server" --net-max-flows 64 -- "sec-probe udp-flows:$server:21000:300"
	c1=$(lh_conntrack)
	expect_rc 0
	expect_json '.max_flows == 64 and .dropped_packets >= 230 and .dropped_packets <= 300' \
		"expected the flows past a cap of 64 dropped"
	diag "cap 64: dropped $(jnet .dropped_packets) of 300; the lab host's conntrack entries $c0 -> $c1"
	if [ "$MODE" = rootful ] && [ $((c1 - c0)) -gt 80 ]; then
		fail "the lab host gained $((c1 - c0)) conntrack entries from a sandbox capped at 64 flows"
	fi
}

# Queries to the proxy from forged sources: a denied server, the metadata
# address, the lab host, over IPv4; the same as IPv4-mapped sources and a
# denied server's IPv6 address to the proxy's IPv6 address; a name the
# allowlist matches (forwarded, were the source believed); TCP SYNs to
# port 53. Every reply would go to the forged source.
t_spoofed_dns() {
	local q0 spoof
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	cap_start || return
	q0=$(lab_dns_queries "$TOKEN-fwd.wild.test")
	spoof=''
	for src in "${LAB_IP4[server2]}" 169.254.169.254 "$LAB_LH4"; do
		spoof+=" send-raw:udp,$src,$GW4,9999,53,64,20,dns=$TOKEN-4.denied.test"
		spoof+=" send-raw:udp,$src,$GW4,9999,53,64,5,dns=$TOKEN-fwd.wild.test"
		spoof+=" send-raw:syn,$src,$GW4,9999,53,64,5"
		spoof+=" send-raw:udp,::ffff:$src,$GW6,9999,53,64,20,dns=$TOKEN-m.denied.test"
		spoof+=" send-raw:syn,::ffff:$src,$GW6,9999,53,64,5"
	done
	spoof+=" send-raw:udp,${LAB_IP6[server2]},$GW6,9999,53,64,20,dns=$TOKEN-6.denied.test"
	spoof+=" send-raw:syn,${LAB_IP6[server2]},$GW6,9999,53,64,5"
	crun_net --cap-add NET_RAW --net-allow allowed.test,'*.wild.test' -- \
		"$PRIME; sec-probe $spoof; look allowed.test; get allowed.test"
	cap_end
	expect_rc 0
	expect_no_line '^send-raw:.*=E[A-Z0-9]+$' "expected every forged packet sent"
	expect_line '^LOOK allowed.test OK' "expected the proxy to serve the workload itself"
	expect_line '^GET allowed.test:80 OK server1$'
	expect_no_token "an answer to a forged source left the gateway"
	expect_no_capture 'v["dport"] == 9999 || v["sport"] == 9999' "something was sent to the forged sources' port"
	expect_no_capture 'v["proto"] == "tcp" && v["sport"] == 53' "a SYN-ACK from port 53 left the gateway"
	[ "$(lab_dns_queries "$TOKEN-fwd.wild.test")" = "$q0" ] ||
		fail "a query from a forged source was forwarded upstream"
	expect_json '.dropped_packets >= 150' "expected the forged packets counted as dropped"
}

# TTL (hop limit) 1, from forged sources and from the workload's own:
# the gateway's time exceeded, which quotes the packet, goes to the
# source; for a forged one, nowhere.
t_ttl_one() {
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	cap_start || return
	crun_net --cap-add NET_RAW --net-allow allowed.test -- \
		"$PRIME; sec-probe send-raw:udp,${LAB_IP4[server2]},${LAB_IP4[server1]},5555,7777,1,10,text=$TOKEN-a send-raw:udp,$LAB_LH4,${LAB_IP4[server1]},5555,7777,1,10,text=$TOKEN-b send-raw:udp,169.254.169.254,${LAB_IP4[server1]},5555,7777,1,10,text=$TOKEN-c send-raw:udp,${LAB_IP6[server2]},${LAB_IP6[server1]},5555,7777,1,10,text=$TOKEN-d send-raw:udp,$WL4,${LAB_IP4[server1]},5555,7777,1,10,text=$TOKEN-e; get allowed.test"
	cap_end
	expect_rc 0
	expect_no_line '^send-raw:.*=E[A-Z0-9]+$' "expected every packet sent"
	expect_line '^GET allowed.test:80 OK server1$'
	expect_no_token "an ICMP error quoting the workload's packet left the gateway"
	expect_no_capture '(v["proto"] == "icmp" && v["type"] == 11) || (v["proto"] == "icmpv6" && v["type"] == 3)' \
		"an ICMP time exceeded left the gateway"
}

# IPv6 SYNs to every embedded IPv4 form of the lab host's address, and of
# the metadata address, with all of IPv6 listed (--net-allow-any ::/0),
# and the IPv4-mapped one also through a DNS answer (hostmapped.allowed.test,
# which the vetting admits: the lab host's address is public in the lab).
# With pasta, ::ffff:198.18.0.1 became a connection from pasta to the lab
# host's listener.
t_mapped_host() {
	local forms='' d h0
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	h0=$(wc -l <"$LAB_DIR/lh-http.log")
	cap_start || return
	# 198.18.0.1 = c612:1, 169.254.169.254 = a9fe:a9fe
	for d in ::ffff:c612:1 ::c612:1 ::ffff:0:c612:1 64:ff9b::c612:1 64:ff9b:1::c612:1 \
		64:ff9b:1:ab::c612:1 2002:c612:1:: 2001:0:c612:1:: 2001:0:4136:e378:8000:63bf:39ed:fffe \
		::ffff:a9fe:a9fe 64:ff9b::a9fe:a9fe 2002:a9fe:a9fe::; do
		forms+=" send-raw:syn,$WL6,$d,4321,$LAB_LH_PORT,64,3"
	done
	crun_net --cap-add NET_RAW --net-allow-any --net-allow ::/0,allowed.test,hostmapped.allowed.test -- \
		"$PRIME; look hostmapped.allowed.test; sec-probe $forms; get allowed.test"
	cap_end
	expect_rc 0
	expect_no_line '^send-raw:.*=E[A-Z0-9]+$' "expected every SYN sent"
	expect_line '^GET allowed.test:80 OK server1$'
	expect_no_capture 'v["proto"] == "tcp" && v["dport"] == '"$LAB_LH_PORT"' && v["flags"] == "S"' \
		"a SYN for the lab host's listener left the gateway"
	[ "$(wc -l <"$LAB_DIR/lh-http.log")" = "$h0" ] || fail "the lab host's listener was reached"
	# pasta carries IPv6 (the lab host routes it); the veth uplink does not,
	# and the gateway has no IPv6 route to forward by.
	[ "$(backend)" = veth ] || expect_json '.dropped_packets >= 36' "expected the SYNs counted as dropped"
}

# An address the lab host gains during the run: blocked as it appears,
# its IPv4-mapped form with it.
t_mapped_new_host_address() {
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	ip -n "$LAB_LH" link add cdt-gw type veth peer name cdt-gwp || { fail "cannot add a link to the lab host"; return; }
	ip -n "$LAB_LH" link set cdt-gw up
	rm -f "$WS/ready" "$WS/go" "$CASE_DIR/r.json"
	cap_start || { ip -n "$LAB_LH" link del cdt-gw; return; }
	crun_bg --result-json "$CASE_DIR/r.json" --dns-upstream "$LAB_DNS4" --timeout 60 \
		--cap-add NET_RAW --net-allow-any --net-allow ::/0,allowed.test -- sh -c \
		". /workspace/p.sh; touch /workspace/ready; while [ ! -e /workspace/go ]; do sleep 0.05; done; $PRIME; look allowed.test; sec-probe send-raw:syn,$WL6,::ffff:198.18.7.7,4321,$LAB_LH_PORT,64,3 send-raw:syn,$WL6,64:ff9b::c612:707,4321,$LAB_LH_PORT,64,3; get allowed.test"
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started: $(cat "$CASE_DIR/err")"
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		cap_end
		ip -n "$LAB_LH" link del cdt-gw
		return
	fi
	ip -n "$LAB_LH" addr add 198.18.7.7/32 dev cdt-gw || fail "cannot add 198.18.7.7 to the lab host"
	touch "$WS/go"
	wait_bg
	cap_end
	ip -n "$LAB_LH" link del cdt-gw
	rm -f "$WS/ready" "$WS/go"
	JSON=
	[ -s "$CASE_DIR/r.json" ] && JSON=$(cat "$CASE_DIR/r.json")
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$'
	expect_no_capture 'v["proto"] == "tcp" && v["dport"] == '"$LAB_LH_PORT"' && v["flags"] == "S"' \
		"a SYN for the address the lab host gained left the gateway"
	[ "$(backend)" = veth ] || expect_json '.dropped_packets >= 6' "expected the SYNs counted as dropped"
}

# The upstream resolver sees the question only: the workload's query
# carries an extra record of junk, EDNS options and the DO bit, trailing
# bytes; over TCP 30,000 bytes of it. What reaches the world is exactly
# the query cordon rebuilds: the lowercased name, RD, and the OPT cordon
# writes (the client sent one).
t_upstream_query_rebuilt() {
	local name want got
	net_probe_missing && return
	ROOTFS=$NET_PROBE_ROOTFS
	cap_start || return
	name="$TOKEN.Wild.TEST"
	crun_net --net-allow '*.wild.test' -- \
		"sec-probe dns-junk:udp,$GW4,$name,400 dns-junk:tcp,$GW4,$name,30000 dns-junk:udp,$GW6,$name,400"
	cap_end
	expect_rc 0
	expect_line '^dns-junk:udp,'"$GW4"'.*=ok rcode=3$' "expected an answer (NXDOMAIN) over UDP"
	expect_line '^dns-junk:tcp,.*=ok rcode=3$' "expected an answer (NXDOMAIN) over TCP"
	expect_line '^dns-junk:udp,'"$GW6"'.*=ok rcode=3$' "expected an answer (NXDOMAIN) over IPv6"
	expect_no_capture 'index($0, "6a756e6b2d") || index($0, "747261696c6a756e6b") || index($0, "636f6f6b69652121")' \
		"the workload's extra bytes reached the world"
	# After the id: RD; one question, no answer or authority, one
	# additional; the name in lower case; A, IN; an OPT: payload 1232,
	# no extended rcode, version or flags, no options.
	want=01000001000000000001
	want+=$(printf '%02x' ${#TOKEN})$(printf %s "$TOKEN" | od -An -tx1 | tr -d ' \n')
	want+=0477696c640474657374000001000100002904d0000000000000
	got=$(cap_lines 'v["dir"] == "in" && v["dport"] == 53 && v["proto"] == "udp" && v["markers"] != "-"' |
		grep "^world: if=lh0 " | sed 's/.* payload=....//' | sort -u)
	[ -n "$got" ] || fail "no query for $name reached the world's resolver"
	[ "$got" = "$want" ] || fail "the upstream got other bytes than the rebuilt query:
    got  $got
    want $want"
}

# DNS answers with IPv6 forms of 169.254.169.254 in the ranges the
# vetting table gained: local-use NAT64 (its first /96 and another), the
# IPv4-translated form, a Teredo client, site-local. None is inserted.
t_vetting_embedded() {
	local a
	crun_net --net-allow embedded.allowed.test -- 'look embedded.allowed.test'
	expect_rc 0
	expect_no_line '^LOOK embedded.allowed.test OK' "expected no address left in the answer"
	expect_json '.names | map(select(.name == "embedded.allowed.test")) | .[0] | .allowed and .inserted == []' \
		"expected nothing inserted for embedded.allowed.test"
	for a in $LAB_EMBEDDED_METADATA; do
		expect_json "[.names[] | select(.name == \"embedded.allowed.test\") | .refused[] | select(.address == \"$(python_norm6 "$a")\")] | length == 1" \
			"expected $a refused"
	done
}

# The text form cordon writes an IPv6 address in (inet_ntop's).
python_norm6() { "$PYTHON" -c 'import ipaddress, sys; print(ipaddress.IPv6Address(sys.argv[1]))' "$1"; }

each_mode "net: a workload that breaks no rule: nothing dropped" net_case t_quiet
each_mode "net: the workload's open flows are capped (--net-max-flows): the host's conntrack table is not the workload's" net_case t_flow_cap
each_mode "net: forged sources to the proxy (UDP, TCP, IPv4, IPv6, mapped): nothing answered, nothing forwarded" net_case t_spoofed_dns
each_mode "net: TTL 1 from forged sources: no ICMP error leaves the gateway" net_case t_ttl_one
each_mode "net: IPv6 SYNs to every embedded form of the host's address, ::/0 listed: none leaves" net_case t_mapped_host
each_mode "net: the mapped form of an address the host gains during the run: blocked with it" net_case t_mapped_new_host_address
each_mode "net: the upstream gets the rebuilt question only (UDP, TCP, IPv6)" net_case t_upstream_query_rebuilt
each_mode "net: DNS answers with metadata in the new vetting ranges: refused" net_case t_vetting_embedded
done_testing
