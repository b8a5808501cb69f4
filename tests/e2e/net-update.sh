#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: a live update of a running sandbox's allowlist (`cordon update
# --net-allow/--net-deny`, docs/network.md "Changing the policy of a
# running sandbox"), in the network lab: a name added resolves and
# connects at once; a name removed is refused at once and its open
# connection is cut (counted: a ticker in the world keeps sending, and
# what reaches the workload after the update is at most what was already
# past the gateway); refused updates change nothing; the fingerprint
# printed is the one the run's result reports.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

TICK_PORT=9100

# nc keeps its input open (sleep): pasta mishandles a half-closed
# connection (net-lib.sh, PROBES).
#
# A ticker on denied.test's address in the world: one line every 20 ms to
# the first client, each counted in $CASE_DIR/ticks (replaced whole, so
# that a reader never finds it empty).
ticker_start() {
	: >"$CASE_DIR/ticks"
	ip netns exec "$LAB_WORLD" "$PYTHON" -c '
import os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.1.20", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
n = 0
while n < 100000:
    n += 1
    try:
        c.send(b"tick %d\n" % n)
    except OSError:
        break
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d\n" % n)
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    time.sleep(0.02)
' "$TICK_PORT" "$CASE_DIR/ticks" &
	TICKER=$!
	_bg_pids+=("$TICKER")
}
ticks() { local n; n=$(cat "$CASE_DIR/ticks" 2>/dev/null); echo "${n:-0}"; }
ticks_past() { [ "$(ticks)" -ge "$1" ]; }
stream_lines() { local n; n=$(grep -c '^tick' "$WS/stream" 2>/dev/null); echo "${n:-0}"; }
stream_has() { [ "$(stream_lines)" -ge "$1" ]; }
ws_has() { [ -e "$WS/$1" ]; }

# The workload: step N waits for $WS/gN, writes $WS/sN, then says $WS/rN.
STEPS='
step() { while [ ! -e /workspace/g$1 ]; do sleep 0.05; done; }
get allowed.test >/workspace/s1; look denied.test >>/workspace/s1; touch /workspace/r1
step 2
look denied.test >/workspace/s2; get denied.test >>/workspace/s2
sleep 600 | nc 198.18.1.20 '$TICK_PORT' >/workspace/stream 2>/dev/null &
touch /workspace/r2
step 3
T=3 look denied.test >/workspace/s3; W=1 get denied.test >>/workspace/s3
W=1 conn 198.18.1.20 80 >>/workspace/s3; get allowed.test >>/workspace/s3; touch /workspace/r3
step 4
'

# go N: let step N run, wait for its result; S is what it wrote.
go() {
	touch "$WS/g$1"
	wait_until "$WAIT_LIMIT" ws_has "r$1" || { fail "the workload's step $1 did not end"; return 1; }
	S=$(cat "$WS/s$1")
}

# A case that stops early lets the workload finish, so that nothing stays behind.
give_up() {
	touch "$WS/g2" "$WS/g3" "$WS/g4"
	cordon kill "$ID" KILL
	wait_bg
	kill "$TICKER" 2>/dev/null
}
s_line() { grep -qE "$1" <<<"$S" || fail "${2:-expected a line matching '$1'}" "$S"; }

t_update() {
	local fp1 fp2 before after
	ticker_start
	rm -f "$CASE_DIR/r.json"
	crun_bg --dns-upstream "$LAB_DNS4" --net-allow allowed.test --result-json "$CASE_DIR/r.json" \
		-- sh -c ". /workspace/p.sh; $STEPS"
	wait_until "$WAIT_LIMIT" ws_has r1 || { fail "the workload did not start"; give_up; return; }
	S=$(cat "$WS/s1")
	s_line '^GET allowed.test:80 OK server1$'
	s_line '^LOOK denied.test FAIL.*NXDOMAIN' "expected denied.test refused before the update"

	# Refused updates change nothing.
	cordon update "$ID" --net-deny denied.test
	expect_rc 125
	expect_err_has 'deny denied.test: not an entry of the allowlist'
	cordon update "$ID" --net-allow 10.254.254.0/30
	expect_rc 125
	cordon update "$ID" --net-allow 'bad..name'
	expect_rc 125
	expect_err_has 'bad..name'

	cordon update "$ID" --net-allow denied.test
	expect_rc 0
	fp1=$OUT
	[[ $fp1 =~ ^[0-9a-f]{64}$ ]] || fail "expected a fingerprint, got '$fp1'"
	go 2 || { give_up; return; }
	s_line '^LOOK denied.test OK .*198\.18\.1\.20' "expected denied.test to resolve once allowed"
	s_line '^GET denied.test:80 OK server2$' "expected denied.test to answer once allowed"
	# inspect: the policy in force and what it admitted, for which name, for how long.
	cordon inspect "$ID"
	expect_rc 0
	JSON=$OUT
	expect_json '.fingerprint == "'"$fp1"'" and (.allow | sort) == ["allowed.test", "denied.test"]'
	expect_json '.admitted | map(select(.address == "198.18.1.20" and .names == ["denied.test"] and .ttl_s > 0)) | length == 1' \
		"expected inspect to show 198.18.1.20 admitted for denied.test"
	printf '%s' "$OUT" | jq -e '.process.seccomp == "filter" and .process.no_new_privs' >/dev/null ||
		fail "expected inspect to show the process's seccomp filter and no_new_privs"
	wait_until "$WAIT_LIMIT" stream_has 5 || {
		fail "the ticker's stream never reached the workload"
		give_up
		return
	}

	cordon update "$ID" --net-deny denied.test
	expect_rc 0
	fp2=$OUT
	[ "$fp2" != "$fp1" ] || fail "expected a new fingerprint"
	# Counted: once the ticker has sent 25 more lines, at most what was in flight arrived.
	before=$(stream_lines)
	local t0
	t0=$(ticks)
	wait_until "$WAIT_LIMIT" ticks_past $((t0 + 25)) || fail "the ticker stopped"
	after=$(stream_lines)
	[ $((after - before)) -le 3 ] ||
		fail "the connection to denied.test was not cut: $((after - before)) more lines arrived"
	cordon inspect "$ID"
	JSON=$OUT
	expect_json '.fingerprint == "'"$fp2"'" and (.admitted | map(select(.address == "198.18.1.20")) | length == 0)' \
		"expected 198.18.1.20 gone from what inspect shows admitted"
	go 3 || { give_up; return; }
	s_line '^LOOK denied.test FAIL' "expected denied.test refused again"
	s_line '^GET denied.test:80 FAIL' "expected denied.test's address closed again"
	s_line '^CONN 198.18.1.20:80 FAIL' "expected 198.18.1.20 closed again"
	s_line '^GET allowed.test:80 OK server1$' "expected allowed.test untouched"
	touch "$WS/g4"
	wait_bg
	expect_rc 0
	JSON=$(cat "$CASE_DIR/r.json" 2>/dev/null)
	expect_json '.fingerprint == "'"$fp2"'"' "expected the result to report the policy in force"
	expect_json '.allow == ["allowed.test"]'
	kill "$TICKER" 2>/dev/null
}

t_update_refusals() {
	crun_bg -- sh -c 'touch /workspace/up; sleep 30'
	wait_until "$WAIT_LIMIT" ws_has up || { fail "the sandbox did not start"; return; }
	cordon update "$ID" --net-allow allowed.test
	expect_rc 125
	expect_err_has 'no network policy to change'
	cordon update "$ID" --net-allow allowed.test --memory 64m
	expect_rc 125
	expect_err_has 'two commands'
	cordon update "$ID" --net-allow ''
	expect_rc 125
	cordon kill "$ID" KILL
	wait_bg
}

# exec --expect-fingerprint runs its command only under the policy it names.
t_expect_fingerprint() {
	local root=$CASE_DIR/root id=$CASE_ID-c fp1 fp2
	oci_bundle '{"run.cordon.net.allow": "allowed.test", "run.cordon.dns.upstream": "'"$LAB_DNS4"'"}' \
		'sleep 60' || return
	cordon --root "$root" run --bundle "$BUNDLE" --detach "$id"
	expect_rc 0 || return
	cordon --root "$root" update "$id" --net-allow denied.test
	expect_rc 0
	fp1=$OUT
	cordon --root "$root" exec --expect-fingerprint "$fp1" "$id" -- sh -c "$(cat "$NET_PROBES"); look denied.test"
	expect_rc 0
	expect_line '^LOOK denied.test OK' "expected the command to run under the policy it named"
	cordon --root "$root" update "$id" --net-deny denied.test
	expect_rc 0
	fp2=$OUT
	cordon --root "$root" exec --expect-fingerprint "$fp1" "$id" -- touch /tmp/ran
	expect_cordon_error NET_POLICY "$fp1"
	cordon --root "$root" exec "$id" -- test -e /tmp/ran
	expect_rc 1
	cordon --root "$root" exec --expect-fingerprint "$fp2" "$id" -- true
	expect_rc 0
	cordon --root "$root" exec --expect-fingerprint nothex "$id" -- true
	expect_cordon_error USAGE "64 hex digits"
	cordon --root "$root" kill "$id" KILL
	cordon --root "$root" delete --force "$id"
	expect_rc 0
}

# A UDP sink on denied.test's IPv6 address in the world: each datagram
# "TAG N" answered (so that the gateway's flow is established) and
# counted by TAG in $CASE_DIR/udp-TAG.
udp_sink_start() {
	rm -f "$CASE_DIR"/udp-*
	ip netns exec "$LAB_WORLD" "$PYTHON" -c '
import os, socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("2001:2:0:1::20", 9200))
n = {}
while True:
    d, a = s.recvfrom(512)
    tag = d.split()[0].decode()
    n[tag] = n.get(tag, 0) + 1
    s.sendto(b"ack", a)
    with open("%s/.udp-%s" % (sys.argv[1], tag), "w") as f:
        f.write("%d\n" % n[tag])
    os.replace("%s/.udp-%s" % (sys.argv[1], tag), "%s/udp-%s" % (sys.argv[1], tag))
' "$CASE_DIR" &
	SINK=$!
	_bg_pids+=("$SINK")
}
udp_got() { cat "$CASE_DIR/udp-$1" 2>/dev/null || echo 0; }
udp_got_past() { [ "$(udp_got "$1")" -ge "$2" ]; }
udp_sent() { local n; n=$(grep -c "^$1 [0-9]" "$WS/sent-$1" 2>/dev/null); echo "${n:-0}"; }
udp_sent_past() { [ "$(udp_sent "$1")" -ge "$2" ]; }

# (IPV6_FREEBIND: the sandbox's sec-probe udp-freebind.)
# The workload may send from any address of its /64 (IPV6_FREEBIND needs
# no capability): from one not its own nothing leaves the gateway (such a
# flow could not be judged by its source), and its own flow to a denied
# destination is cut.
t_cut_any_source() {
	local own foreign s0 backend=()
	[ -n "$NET_PROBE_ROOTFS" ] || { net_probe_missing; return; }
	# IPv6 leaves through pasta only (the veth uplink is IPv4 only).
	[ "$MODE" = rootful ] && backend=(--net-backend pasta)
	udp_sink_start
	ROOTFS=$NET_PROBE_ROOTFS crun_bg "${backend[@]}" --dns-upstream "$LAB_DNS4" --net-allow 2001:2:0:1::20 -- sh -c '
P=udp-freebind:fd63:6f72:646f:6e
sec-probe $P::2,2001:2:0:1::20,9200,own,1500,20 >/workspace/sent-own 2>&1 &
sec-probe $P::3,2001:2:0:1::20,9200,foreign,1500,20 >/workspace/sent-foreign 2>&1 &
wait'
	if ! wait_until "$WAIT_LIMIT" udp_got_past own 5 || ! wait_until "$WAIT_LIMIT" udp_sent_past foreign 50; then
		fail "the datagrams did not go out (own $(udp_got own) received, foreign $(udp_sent foreign) sent)"
		cordon kill "$ID" KILL
		wait_bg
		kill "$SINK" 2>/dev/null
		return
	fi
	# From another address of the workload's link nothing leaves the gateway at all.
	[ "$(udp_got foreign)" = 0 ] ||
		fail "$(udp_got foreign) datagrams from an address not the workload's own reached the world"
	cordon update "$ID" --net-deny 2001:2:0:1::20
	expect_rc 0
	own=$(udp_got own)
	foreign=$(udp_got foreign)
	s0=$(udp_sent foreign)
	# Counted: once 50 more have gone out, at most what was in flight arrived.
	wait_until "$WAIT_LIMIT" udp_sent_past foreign $((s0 + 50)) || fail "the workload stopped sending"
	[ $(($(udp_got own) - own)) -le 3 ] ||
		fail "the flow from the workload's address was not cut: $(($(udp_got own) - own)) more datagrams"
	[ $(($(udp_got foreign) - foreign)) -le 3 ] ||
		fail "a flow from another address of the workload's link survived the cut: $(($(udp_got foreign) - foreign)) more datagrams reached the denied address"
	cordon kill "$ID" KILL
	wait_bg
	kill "$SINK" 2>/dev/null
}

# An update whose client is gone (killed, or interrupted) lets go of the
# state lock while its supervisor has yet to apply it: an exec that names
# the policy before the update must not be let through while the one in
# force may already be the new one. The supervisor is stopped to hold the
# update in that window: no exec may pass --expect-fingerprint until the
# update has ended. Killed before the supervisor looked at it, the update
# is never applied (a peer gone cannot be checked to be in the
# supervisor's pid namespace), and the supervisor, seeing that the
# refused peer was the one that left the mark, removes it: the old
# fingerprint holds again and the exec runs; a new update applies.
t_expect_fingerprint_client_gone() {
	local root=$CASE_DIR/root id=$CASE_ID-g fp0 owner upd
	oci_bundle '{"run.cordon.net.allow": "allowed.test", "run.cordon.dns.upstream": "'"$LAB_DNS4"'"}' \
		'sleep 60' || return
	cordon --root "$root" run --bundle "$BUNDLE" --detach "$id"
	expect_rc 0 || return
	fp0=$(jq -r .net_fingerprint "$root/$id/state.json")
	owner=$(jq -r .owner_pid "$root/$id/state.json")
	kill -STOP "$owner"
	cordon_bg --root "$root" update "$id" --net-allow denied.test
	# The client has sent its request and waits in poll for the answer.
	upd_sent() {
		upd=$(pgrep -f "update $id --net-allow" | tail -1)
		[ -n "$upd" ] && [ -n "$(find "/proc/$upd/fd" -lname '*memfd:cordon-update*' 2>/dev/null)" ] &&
			grep -qE '^(7|271) ' "/proc/$upd/syscall" 2>/dev/null
	}
	wait_until "$WAIT_LIMIT" upd_sent || fail "the update never asked"
	[ "$(cat "$root/$id/net-update" 2>/dev/null)" = "$upd" ] ||
		fail "the update's mark does not name its client ($upd): $(cat "$root/$id/net-update" 2>&1)"
	kill -9 "$upd"
	wait_bg
	cordon --root "$root" exec --expect-fingerprint "$fp0" "$id" -- echo ran
	expect_cordon_error NET_POLICY 'an update of its network policy is being applied'
	kill -CONT "$owner"
	mark_gone() { [ ! -e "$root/$id/net-update" ]; }
	wait_until "$WAIT_LIMIT" mark_gone || fail "the gone client's mark was never removed"
	[ "$(jq -r .net_fingerprint "$root/$id/state.json")" = "$fp0" ] ||
		fail "the update of a client gone before it was looked at was applied"
	cordon --root "$root" exec --expect-fingerprint "$fp0" "$id" -- echo ran
	expect_rc 0
	expect_line '^ran$'
	cordon --root "$root" update "$id" --net-allow denied.test
	expect_rc 0
	[ "$(jq -r .net_fingerprint "$root/$id/state.json")" != "$fp0" ] ||
		fail "an update after the gone one was not applied"
	cordon --root "$root" kill "$id" KILL
	cordon --root "$root" delete --force "$id"
}

# A session's own network (cordon create --net-allow): an exec reaches the
# allowed name and not another; cordon update adds that one, which then
# resolves and connects in the next exec; --net-deny refuses it again and
# cuts the connection a running exec holds (counted, as in t_update). The
# end of each exec writes a denied event with what was dropped since the
# one before (the first and the last name 198.18.1.20, the second none);
# every line validates.
t_session() {
	ticker_start
	session_case
	# Whatever ended the case: the ticker's port is the next case's.
	kill "$TICKER" 2>/dev/null
	wait "$TICKER" 2>/dev/null
}
session_case() {
	local root=$CASE_DIR/root id=$CASE_ID-s audit=$CASE_DIR/audit.jsonl
	: >"$audit"
	[ "$MODE" = rootless ] && chown "$TEST_UID:$TEST_GID" "$audit"
	cordon --root "$root" create --owner none --name "$id" --audit "$audit" \
		--dns-upstream "$LAB_DNS4" --net-allow allowed.test "$ROOTFS"
	expect_rc 0 || return
	sx() { cordon --root "$root" exec "$id" -- sh -c ". /workspace/p.sh; $1"; }
	session_body "$root" "$id" "$audit"
	cordon --root "$root" rm "$id" >/dev/null 2>&1
	[ -z "$BG_PID" ] || wait "$BG_PID" 2>/dev/null
}
session_body() {
	local root=$1 id=$2 audit=$3 before after t0 d
	sx 'get allowed.test; look denied.test; W=1 conn 198.18.1.20 80'
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$'
	expect_line '^LOOK denied.test FAIL' "expected denied.test refused before the update"
	expect_line '^CONN 198.18.1.20:80 FAIL' "expected 198.18.1.20 closed before the update"
	cordon --root "$root" update "$id" --net-allow denied.test
	expect_rc 0
	sx 'look denied.test; get denied.test'
	expect_line '^LOOK denied.test OK .*198\.18\.1\.20' "expected denied.test to resolve once allowed"
	expect_line '^GET denied.test:80 OK server2$' "expected denied.test to answer once allowed"
	# An exec that holds a connection to the ticker across the deny.
	cordon_bg --root "$root" exec "$id" -- sh -c \
		"sleep 600 | nc 198.18.1.20 $TICK_PORT >/workspace/stream 2>/dev/null"
	wait_until "$WAIT_LIMIT" stream_has 5 || fail "the ticker's stream never reached the session's exec"
	cordon --root "$root" update "$id" --net-deny denied.test
	expect_rc 0
	before=$(stream_lines)
	t0=$(ticks)
	wait_until "$WAIT_LIMIT" ticks_past $((t0 + 25)) || fail "the ticker stopped"
	after=$(stream_lines)
	[ $((after - before)) -le 3 ] ||
		fail "the session's connection to denied.test was not cut: $((after - before)) more lines arrived"
	sx 'T=3 look denied.test; W=1 get denied.test; W=1 conn 198.18.1.20 80; get allowed.test'
	expect_line '^LOOK denied.test FAIL' "expected denied.test refused again"
	expect_line '^GET denied.test:80 FAIL' "expected denied.test's address closed again"
	expect_line '^CONN 198.18.1.20:80 FAIL' "expected 198.18.1.20 closed again"
	expect_line '^GET allowed.test:80 OK server1$' "expected allowed.test untouched"
	cordon --root "$root" rm "$id"
	expect_rc 0
	wait_bg
	"$PYTHON" "$(dirname "$0")/audit-check.py" "$(dirname "$0")/../../docs/audit.schema.json" \
		"$audit" >/dev/null 2>"$CASE_DIR/check.err" ||
		fail "the session's audit log does not validate: $(cat "$CASE_DIR/check.err")"
	# The denied events in order: the three execs that ended, then the held
	# exec's (ended by rm, if its end came before the session's) and the end's.
	d=$(jq -c 'select(.event == "denied") | [.destinations[] | select(.address == "198.18.1.20")] | length' "$audit" | tr '\n' ' ')
	[[ $d =~ ^1\ 0\ 1\ ([01]\ ){1,2}$ ]] ||
		fail "denied events naming 198.18.1.20, per event: '$d' (expected 1 0 1, then one or two)" \
			"$(grep denied "$audit")"
}

each_mode "net-update: a name allowed at run time works at once; denied, it is refused and its connection cut" net_case t_update
each_mode "net-update: updates that cannot apply are refused" net_case t_update_refusals
each_mode "net-update: exec --expect-fingerprint refuses once the policy changed" net_case t_expect_fingerprint
each_mode "net-update: only the workload's own address leaves; its flow to a denied address is cut" net_case t_cut_any_source
each_mode "net-update: a session's allowlist: allowed, denied, added, cut; a denied event per exec" net_case t_session
rootful_only "net-update: --expect-fingerprint holds when an update's client is gone" net_case t_expect_fingerprint_client_gone
done_testing
