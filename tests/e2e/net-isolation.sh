#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: what a sandbox with egress still cannot reach or change, in the
# network lab (tests/lab/lab.sh): the host it runs on (its addresses, its
# loopback, its default gateway, the veth uplink's host end), the gateway
# itself, another sandbox; its own routes and the netfilter ruleset.
# --allow-host-loopback: refused with veth, opens the host's loopback
# through pasta's gateway mapping.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

# Requests LH's own listener (port 8080) answered, on any address.
lh_hits() { wc -l <"$LAB_DIR/lh-http.log"; }

t_host_unreachable() {
	local h0 w0 extra=() probe=''
	h0=$(lh_hits)
	w0=$(lab_http_hits world)
	if [ "$MODE" = rootful ]; then
		# A pool of our own: the uplink's host end is 10.232.7.1, listed.
		extra=(--net-pool 10.232.7.0/28 --net-allow 10.232.0.0/16)
		probe='W=1 get 10.232.7.1 8080 & W=1 get 10.232.7.2 8080 &'
	fi
	# LH's address and its default gateway (WORLD) are listed, and stay closed.
	crun_net --net-allow allowed.test,198.18.0.0/24 "${extra[@]}" -- \
		"W=1 get $LAB_LH4 8080 & W=1 get $LAB_WORLD4 & W=1 get 10.254.254.1 8080 & W=1 get 127.0.0.1 8080 & $probe get allowed.test & wait"
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$' "expected allowed.test to work alongside"
	expect_line "^GET $LAB_LH4:8080 FAIL" "expected the lab host's own address closed, though listed"
	expect_line "^GET $LAB_WORLD4:80 FAIL" "expected the lab host's default gateway closed, though listed"
	expect_line '^GET 10.254.254.1:8080 FAIL' "expected the gateway's own address closed"
	expect_line '^GET 127.0.0.1:8080 FAIL.*refused' "expected the sandbox's own loopback to have no listener"
	if [ "$MODE" = rootful ]; then
		expect_line '^GET 10.232.7.1:8080 FAIL' "expected the uplink's host end closed, though listed"
		expect_line '^GET 10.232.7.2:8080 FAIL' "expected the uplink's gateway end closed"
		expect_json '.uplink == {"host": "10.232.7.1", "gateway": "10.232.7.2"}' "expected the uplink from --net-pool"
	fi
	[ "$(lh_hits)" = "$h0" ] || fail "the lab host's listener was reached: $(tail -n 3 "$LAB_DIR/lh-http.log")"
	[ "$(lab_http_hits world)" = "$w0" ] || fail "the lab host's default gateway was reached"
}

# A host with more addresses than cordon once kept (64, the rest dropped
# silently, the uplink's host end and the default gateway among them):
# 100 on a veth link of LH, all inside a listed CIDR, and none reached.
t_host_many_addresses() {
	local h0 w0 i extra=() probe=''
	ip -n "$LAB_LH" link add cdt-many type veth peer name cdt-manyp || { fail "cannot add a link to the lab host"; return; }
	for i in $(seq 1 100); do
		ip -n "$LAB_LH" addr add "10.77.$((i / 250)).$((i % 250 + 1))/32" dev cdt-many || break
	done
	ip -n "$LAB_LH" link set cdt-many up
	[ "$(ip -n "$LAB_LH" -o -4 addr show dev cdt-many | wc -l)" = 100 ] || fail "expected 100 addresses on the lab host's extra link"
	h0=$(lh_hits)
	w0=$(lab_http_hits world)
	if [ "$MODE" = rootful ]; then
		extra=(--net-pool 10.232.7.0/28 --net-allow 10.232.0.0/16)
		probe='W=1 get 10.232.7.1 8080 &'
	fi
	crun_net --net-allow "allowed.test,10.77.0.0/16,198.18.0.0/24" "${extra[@]}" -- \
		"W=1 get 10.77.0.2 8080 & W=1 get 10.77.0.51 8080 & W=1 get 10.77.0.101 8080 & W=1 get $LAB_LH4 8080 & W=1 get $LAB_WORLD4 & $probe get allowed.test & wait"
	ip -n "$LAB_LH" link del cdt-many
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$' "expected allowed.test to work alongside"
	expect_line '^GET 10.77.0.2:8080 FAIL' "expected the host's first added address closed, though listed"
	expect_line '^GET 10.77.0.51:8080 FAIL' "expected the host's 50th added address closed, though listed"
	expect_line '^GET 10.77.0.101:8080 FAIL' "expected the host's 100th added address closed, though listed"
	expect_line "^GET $LAB_LH4:8080 FAIL" "expected the lab host's own address closed, though listed"
	expect_line "^GET $LAB_WORLD4:80 FAIL" "expected the lab host's default gateway closed, though listed"
	if [ "$MODE" = rootful ]; then
		expect_line '^GET 10.232.7.1:8080 FAIL' "expected the uplink's host end closed, though listed"
	fi
	[ "$(lh_hits)" = "$h0" ] || fail "the lab host's listener was reached $(($(lh_hits) - h0)) times: $(tail -n 3 "$LAB_DIR/lh-http.log")"
	[ "$(lab_http_hits world)" = "$w0" ] || fail "the lab host's default gateway was reached"
}

# An address the host gains while the sandbox runs, inside a listed CIDR:
# blocked as it appears. The workload waits for the test's go, after
# the address was added; its DNS lookup is answered only after the
# supervisor has read the upstream's reply, in a later pass of the
# loop than the one that saw the address event (queued in the kernel
# before the query was sent), so the set holds it before the connect.
# With veth the host's own table drops the sandbox's traffic to any host
# address too; the gateway's drop counter says the gateway dropped it.
t_host_new_address() {
	local h0
	ip -n "$LAB_LH" link add cdt-new type veth peer name cdt-newp || { fail "cannot add a link to the lab host"; return; }
	ip -n "$LAB_LH" link set cdt-new up
	h0=$(lh_hits)
	rm -f "$WS/ready" "$WS/go" "$CASE_DIR/r.json"
	crun_bg --result-json "$CASE_DIR/r.json" --dns-upstream "$LAB_DNS4" --timeout 60 \
		--net-allow "allowed.test,10.77.0.0/16" -- sh -c \
		'. /workspace/p.sh; touch /workspace/ready; while [ ! -e /workspace/go ]; do sleep 0.05; done; look allowed.test; W=1 get 10.77.1.1 8080; get allowed.test'
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started: $(cat "$CASE_DIR/err")"
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		ip -n "$LAB_LH" link del cdt-new
		return
	fi
	ip -n "$LAB_LH" addr add 10.77.1.1/32 dev cdt-new || fail "cannot add 10.77.1.1 to the lab host"
	touch "$WS/go"
	wait_bg
	ip -n "$LAB_LH" link del cdt-new
	rm -f "$WS/ready" "$WS/go"
	JSON=
	[ -s "$CASE_DIR/r.json" ] && JSON=$(cat "$CASE_DIR/r.json")
	expect_rc 0
	expect_json '.dropped_packets >= 1' "expected the gateway to drop the connect to the new address"
	expect_line '^LOOK allowed.test OK' "expected the lookup before the connect to work"
	expect_line '^GET 10.77.1.1:8080 FAIL' "expected the address the host gained during the run closed, though listed"
	expect_line '^GET allowed.test:80 OK server1$' "expected allowed.test to work after the address was blocked"
	[ "$(lh_hits)" = "$h0" ] || fail "the lab host's listener was reached $(($(lh_hits) - h0)) times: $(tail -n 3 "$LAB_DIR/lh-http.log")"
}

# The watch's fail-closed path: address events the supervisor could not
# read (its socket's queue overflowed, ENOBUFS) may hide an address the
# host gained, so the sandbox ends (exit 125, CORDON_E_NET_POLICY).
# Deterministic: the supervisor is stopped (SIGSTOP) while the lab host
# gains 8000 addresses, more events than any receive buffer cordon asks
# for (1 MiB, which the kernel doubles) can queue, and continued after.
# Rootless, runuser waits for its child with WUNTRACED and stops itself
# when the child stops: it is continued too (it then continues the child).
t_host_events_lost() {
	local sup parent i batch=$CASE_DIR/flood
	rm -f "$WS/ready" "$CASE_DIR/r.json"
	crun_bg --result-json "$CASE_DIR/r.json" --dns-upstream "$LAB_DNS4" --timeout 60 \
		--net-allow "allowed.test" -- sh -c 'touch /workspace/ready; exec sleep 120'
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		fail "the workload never started: $(cat "$CASE_DIR/err")"
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		return
	fi
	sup=$(supervisor_of "$ID") || { fail "no supervisor found for $ID"; kill -9 "$BG_PID"; wait_bg; return; }
	parent=$(_ppid_of "$sup")
	kill -STOP "$sup"
	wait_until "$WAIT_LIMIT" proc_stopped "$sup" || fail "the supervisor did not stop"
	if [ "$MODE" = rootless ]; then
		wait_until "$WAIT_LIMIT" proc_stopped "$parent" || fail "runuser did not stop with its child"
	fi
	for ((i = 0; i < 8000; i++)); do
		echo "addr add 10.78.$((i / 250)).$((i % 250 + 1))/32 dev cdt-flood"
	done >"$batch"
	if ! ip -n "$LAB_LH" link add cdt-flood type veth peer name cdt-floodp ||
		! ip -n "$LAB_LH" -batch "$batch"; then
		fail "cannot flood the lab host with addresses"
	fi
	[ "$MODE" = rootless ] && kill -CONT "$parent"
	kill -CONT "$sup"
	wait_bg_for "$WAIT_LIMIT"
	ip -n "$LAB_LH" link del cdt-flood
	expect_cordon_error NET_POLICY "lost"
	JSON=
	[ -s "$CASE_DIR/r.json" ] && JSON=$(cat "$CASE_DIR/r.json")
	[ "$(printf '%s' "$JSON" | jq -r .error.code)" = CORDON_E_NET_POLICY ] ||
		fail "expected the result's error to be CORDON_E_NET_POLICY: $JSON"
}

t_host_loopback_flag() {
	local h0
	h0=$(lh_hits)
	if [ "$MODE" = rootful ]; then
		crun --net-allow allowed.test --dns-upstream "$LAB_DNS4" --allow-host-loopback -- touch /workspace/ran
		expect_cordon_error USAGE --allow-host-loopback
		[ ! -e "$WS/ran" ] || fail "the workload ran"
		crun --net-allow allowed.test --dns-upstream "$LAB_DNS4" --net-backend veth --allow-host-loopback -- touch /workspace/ran
		expect_cordon_error USAGE --allow-host-loopback
		return
	fi
	# pasta maps the address of the host's default gateway ($LAB_WORLD4,
	# which it copies) to the host's loopback; it must be listed too.
	crun_net --net-allow "allowed.test,$LAB_WORLD4" --allow-host-loopback -- "get $LAB_WORLD4 8080; get allowed.test"
	expect_rc 0
	expect_err_has "--allow-host-loopback" "expected a warning naming --allow-host-loopback"
	expect_line "^GET $LAB_WORLD4:8080 OK lab-host-loopback$" "expected the lab host's 127.0.0.1:8080 through $LAB_WORLD4"
	expect_line '^GET allowed.test:80 OK server1$'
	expect_json '.allow_host_loopback == true'
	[ "$(lh_hits)" = $((h0 + 1)) ] || fail "expected one request at the lab host's listener"
	# Not listed: closed all the same.
	crun_net --net-allow allowed.test --allow-host-loopback -- "W=1 get $LAB_WORLD4 8080"
	expect_rc 0
	expect_line "^GET $LAB_WORLD4:8080 FAIL" "expected the mapped address closed when not listed"
	# Without the flag, listing the address is not enough.
	crun_net --net-allow "allowed.test,$LAB_WORLD4" -- "W=1 get $LAB_WORLD4 8080"
	expect_rc 0
	expect_line "^GET $LAB_WORLD4:8080 FAIL" "expected the host's loopback closed without --allow-host-loopback"
	expect_json '.allow_host_loopback == false'
	[ "$(lh_hits)" = $((h0 + 1)) ] || fail "expected no more requests at the lab host's listener"
}

# The host-end address of LH's only cdr-* link, into UPLINK_HOST.
uplink_seen() {
	UPLINK_HOST=$(ip -n "$LAB_LH" -o -4 addr show | awk '$2 ~ /^cdr-/ { sub(/\/.*/, "", $4); print $4 }')
	[ -n "$UPLINK_HOST" ] && [ "$(wc -w <<<"$UPLINK_HOST")" -eq 1 ]
}

t_two_sandboxes() {
	local a_ready=$WS/a-ready a_json=$CASE_DIR/a.json probe='' extra=() a_host='' a_gw=''
	# A: fetches, then listens on 9000 until told to stop.
	crun_bg --dns-upstream "$LAB_DNS4" --net-allow allowed.test --result-json "$a_json" -- sh -c \
		'. /workspace/p.sh; get allowed.test >/workspace/a-get; nc -l -p 9000 >/workspace/a-got 2>&1 & touch /workspace/a-ready
		 i=0; while [ ! -e /workspace/stop ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done'
	if ! wait_until "$WAIT_LIMIT" test -e "$a_ready"; then
		touch "$WS/stop"
		wait_bg_for "$WAIT_LIMIT"
		fail "the first sandbox never got ready"
		return
	fi
	if [ "$MODE" = rootful ]; then
		if uplink_seen; then
			a_host=$UPLINK_HOST
			a_gw=${a_host%.*}.$((${a_host##*.} + 1))
			extra=(--net-allow 10.231.0.0/16)
			probe="W=1 get $a_host 8080 & W=1 conn $a_gw 9000 & W=1 conn $a_gw 53 &"
		else
			_fail_raw "expected exactly one cdr-* link in the lab host while the first sandbox runs" \
				"$(ip -n "$LAB_LH" -o -4 addr show | _indent)"
		fi
	fi
	# B, meanwhile: its own 10.254.254.2 is not A's.
	crun_net --net-allow allowed.test "${extra[@]}" -- \
		"get allowed.test & W=1 conn 10.254.254.2 9000 & W=1 get $LAB_LH4 8080 & $probe wait"
	local b_out=$OUT b_json=$JSON
	touch "$WS/stop"
	wait_bg_for "$WAIT_LIMIT" || return
	expect_rc 0 "expected the first sandbox to exit 0, got $RC"
	OUT=$b_out
	expect_line '^GET allowed.test:80 OK server1$' "expected the second sandbox's egress to work"
	expect_line '^CONN 10.254.254.2:9000 FAIL' "expected 10.254.254.2:9000 inside the second sandbox to be its own (closed)"
	expect_line "^GET $LAB_LH4:8080 FAIL"
	if [ -n "$a_host" ]; then
		expect_line "^GET $a_host:8080 FAIL" "expected the first sandbox's uplink host end closed"
		expect_line "^CONN $a_gw:9000 FAIL" "expected the first sandbox's gateway closed"
		expect_line "^CONN $a_gw:53 FAIL" "expected the first sandbox's DNS proxy closed to the second"
	fi
	grep -q 'OK server1' "$WS/a-get" 2>/dev/null || fail "expected the first sandbox's egress to work: $(cat "$WS/a-get" 2>/dev/null)"
	[ ! -s "$WS/a-got" ] || fail "the first sandbox's listener got: $(head -c 200 "$WS/a-got")"
	JSON=$(cat "$a_json" 2>/dev/null)
	local a_up
	a_up=$(jnet '.uplink.host')
	JSON=$b_json
	if [ "$MODE" = rootful ]; then
		[ "$a_up" = "\"$a_host\"" ] || fail "expected the first sandbox's result to name uplink.host $a_host, got $a_up"
		expect_json ".uplink.host != $a_up and .uplink.host != null" "expected distinct uplinks"
	else
		[ "$a_up" = null ] || fail "expected uplink null with pasta in the first result, got $a_up"
		expect_json '.uplink == null' "expected uplink null with pasta"
	fi
}

# nft and its libraries in a copy of the rootfs.
NFT_ROOTFS=$E2E_TMP/nftroot
make_nft_rootfs() {
	local lib
	[ -x "$NFT_ROOTFS/usr/sbin/nft" ] && return 0
	copy_rootfs "$NFT_ROOTFS" || return 1
	mkdir -p "$NFT_ROOTFS/usr/sbin"
	cp -L /usr/sbin/nft "$NFT_ROOTFS/usr/sbin/nft"
	for lib in $(ldd /usr/sbin/nft | grep -o '/[^ ]*'); do
		mkdir -p "$NFT_ROOTFS$(dirname "$lib")"
		cp -L "$lib" "$NFT_ROOTFS$lib"
	done
	chmod -R a+rX "$NFT_ROOTFS"
}

t_no_net_admin() {
	make_nft_rootfs || return
	ROOTFS=$NFT_ROOTFS
	crun_net --net-allow allowed.test -- '
		nft flush ruleset 2>&1; echo "nft-flush rc=$?"
		nft add table inet x 2>&1; echo "nft-add rc=$?"
		ip route del default 2>&1; echo "route-del rc=$?"
		ip route add 0.0.0.0/1 dev eth0 2>&1; echo "route-add rc=$?"
		ip addr add 10.254.254.1/30 dev eth0 2>&1; echo "addr-add rc=$?"
		ip link set eth0 down 2>&1; echo "link-down rc=$?"
		ip link add d0 type dummy 2>&1; echo "link-add rc=$?"
		ip route; get allowed.test'
	expect_rc 0
	expect_line '^nft-flush rc=[1-9]' "expected nft flush ruleset to fail inside"
	expect_line 'Netlink socket: Operation not permitted' "expected nft to run and fail with EPERM"
	expect_no_line 'RTNETLINK answers: (File exists|No such)' "expected the ip changes to be refused (EPERM), not to fail for other reasons"
	expect_line '^nft-add rc=[1-9]' "expected nft add table to fail inside"
	expect_line '^route-del rc=[1-9]' "expected ip route del default to fail inside"
	expect_line '^route-add rc=[1-9]'
	expect_line '^addr-add rc=[1-9]' "expected taking the gateway's address to fail"
	expect_line '^link-down rc=[1-9]'
	expect_line '^link-add rc=[1-9]'
	expect_line '^default via 10\.254\.254\.1 dev eth0' "expected the default route intact"
	expect_line '^GET allowed.test:80 OK server1$' "expected egress intact after the attempts"
}

each_mode "net: the lab host, its gateway and the uplink stay closed, listed or not" net_case t_host_unreachable
each_mode "net: a host with 100 addresses: none reached, the uplink and gateway among them" net_case t_host_many_addresses
each_mode "net: an address the host gains during a run: blocked as it appears" net_case t_host_new_address
each_mode "net: address events lost (the watch's queue overflowed): the sandbox ends, 125" net_case t_host_events_lost
each_mode "net: --allow-host-loopback: refused with veth, host loopback via pasta" net_case t_host_loopback_flag
each_mode "net: two sandboxes at once: both egress, neither reaches the other" net_case t_two_sandboxes
each_mode "net: no nft or route changes from inside" net_case t_no_net_admin
done_testing
