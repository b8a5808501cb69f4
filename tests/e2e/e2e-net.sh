#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# e2e: the default network: only lo inside, and nothing outside reachable,
# not even a listener on the caller's own 127.0.0.1.
#
# The "host" side of the listener case is a network namespace this script
# creates (unshare --net): the listener binds 127.0.0.1 there and cordon is
# started from there, so no traffic ever touches the real host's network.
. "$(dirname "$0")/lib.sh"

t_only_lo() {
	local ifaces
	crun -- cat /proc/net/dev
	expect_rc 0
	ifaces=$(printf '%s\n' "$OUT" | sed 1,2d | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')
	[ "$ifaces" = "lo " ] || fail "expected only lo in /proc/net/dev, got: $ifaces"
}

t_lo_up() {
	# A listener and a client on the sandbox's own loopback; the client
	# retries until the listener is up.
	crun -- sh -c 'nc -l -p 4321 > /tmp/got & l=$!
		i=0; until echo over-lo | nc -w 1 127.0.0.1 4321; do i=$((i + 1)); [ $i -lt 50 ] || break; sleep 0.1; done
		wait $l; cat /tmp/got'
	expect_out_has over-lo "expected lo to be up: a connection to 127.0.0.1 inside the sandbox"
}

# A network namespace standing in for the host, with lo up.
HOLDER_PID=
start_holder() {
	new_mark
	unshare --net -- sleep "$MARK" &
	HOLDER_PID=$!
	_bg_pids+=("$HOLDER_PID")
	wait_until "$WAIT_LIMIT" bash -c "[ \"\$(readlink /proc/$HOLDER_PID/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]" ||
		{ _fail_raw "the stand-in host network namespace did not appear"; return 1; }
	nsenter -t "$HOLDER_PID" -n ip link set lo up ||
		{ _fail_raw "could not bring lo up in the stand-in host namespace"; return 1; }
}

in_holder() { nsenter -t "$HOLDER_PID" -n -- "$@"; }

# An HTTP request for /probe with busybox nc (busybox 1.35's static wget
# crashes on Debian 12, so it cannot tell "refused" from "crashed").
probe_cmd() { echo "printf 'GET /probe HTTP/1.0\\r\\n\\r\\n' | nc -w 2 127.0.0.1 $1"; }

t_host_loopback_unreachable() {
	local port=$((20000 + RANDOM % 20000)) listener hits _argv
	is_root || { skip_or_fail "needs root to create the stand-in host network namespace"; return; }
	start_holder || return
	mkdir -p "$CASE_DIR/www"
	echo "secret-$MARK" >"$CASE_DIR/www/probe"
	# nsenter itself, not in_holder: $! must be the listener, not a subshell
	# whose kill would leave it running after the case.
	nsenter -t "$HOLDER_PID" -n -- "$PYTHON" -m http.server --bind 127.0.0.1 \
		--directory "$CASE_DIR/www" "$port" >"$CASE_DIR/http.log" 2>&1 &
	listener=$!
	_bg_pids+=("$listener")

	# Positive control: the listener answers on the stand-in host's loopback.
	if ! wait_until "$WAIT_LIMIT" bash -c "nsenter -t $HOLDER_PID -n -- busybox sh -c \"$(probe_cmd "$port")\" 2>/dev/null | grep -q secret-"; then
		_fail_raw "the test's own listener on 127.0.0.1:$port never answered" "$(cat "$CASE_DIR/http.log")"
		kill "$listener" "$HOLDER_PID"
		return
	fi

	# The sandbox, started from that namespace, must not reach it.
	next_id
	if [ "$MODE" = rootful ]; then
		_argv=(nsenter -t "$HOLDER_PID" -n -- env --default-signal "$CORDON")
	else
		local USER_PREFIX
		_user_prefix
		_argv=(nsenter -t "$HOLDER_PID" -n -- "${USER_PREFIX[@]}" "$CORDON")
	fi
	pushd "$WS" >/dev/null || return
	run "${_argv[@]}" run --name "$ID" "$ROOTFS" -- sh -c "$(probe_cmd "$port"); echo nc=\$?"
	popd >/dev/null || return
	LAST_CMD="(in the stand-in host netns) $LAST_CMD"
	expect_rc 0
	expect_out_lacks "secret-" "the sandbox fetched from the caller's 127.0.0.1:$port"
	expect_out_has nc=1 "expected nc to 127.0.0.1:$port to fail inside"
	expect_err_has "Connection refused" "expected 'Connection refused' (the sandbox's own lo has no listener)"
	hits=$(grep -c 'GET /probe' "$CASE_DIR/http.log")
	kill "$listener" "$HOLDER_PID" 2>/dev/null
	wait "$listener" "$HOLDER_PID" 2>/dev/null
	[ "$hits" -eq 1 ] || _fail_raw "expected the listener to log exactly the positive control's request, got $hits" \
		"$(cat "$CASE_DIR/http.log")"
}

# No traffic is sent here: the routing tables alone say nothing can leave.
t_no_route() {
	crun -- cat /proc/net/route
	expect_rc 0
	[ "$(printf '%s\n' "$OUT" | sed 1d | grep -c .)" -eq 0 ] || fail "expected an empty IPv4 routing table"
	crun -- cat /proc/net/ipv6_route
	expect_rc 0
	local dst len flags dev _
	while read -r dst len _ _ _ _ _ _ flags dev; do
		[ "$dev" = lo ] || fail "expected IPv6 routes on lo only, got one on $dev"
		# ::/0 other than the kernel's reject entry (RTF_REJECT, 0x200).
		if [[ $dst =~ ^0+$ ]] && [ "$len" = 00 ] && (((16#$flags & 0x200) == 0)); then
			fail "expected no IPv6 default route"
		fi
	done <<<"$OUT"
	return 0
}

each_mode "network: only lo in /proc/net/dev" t_only_lo
each_mode "network: lo is up inside" t_lo_up
each_mode "network: a listener on the caller's 127.0.0.1 is unreachable" t_host_loopback_unreachable
each_mode "network: no routes out (IPv4 table empty, no IPv6 default)" t_no_route
done_testing
