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
# the first client, each counted in $CASE_DIR/ticks.
ticker_start() {
	: >"$CASE_DIR/ticks"
	ip netns exec "$LAB_WORLD" "$PYTHON" -c '
import socket, sys, time
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
    with open(sys.argv[2], "w") as f:
        f.write("%d\n" % n)
    time.sleep(0.02)
' "$TICK_PORT" "$CASE_DIR/ticks" &
	TICKER=$!
	_bg_pids+=("$TICKER")
}
ticks() { cat "$CASE_DIR/ticks" 2>/dev/null || echo 0; }
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
	wait_until 30 ws_has "r$1" || { fail "the workload's step $1 did not end"; return 1; }
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
	wait_until 30 ws_has r1 || { fail "the workload did not start"; give_up; return; }
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
	wait_until 20 stream_has 5 || {
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
	wait_until 20 ticks_past $((t0 + 25)) || fail "the ticker stopped"
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
	wait_until 10 ws_has up || { fail "the sandbox did not start"; return; }
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

each_mode "net-update: a name allowed at run time works at once; denied, it is refused and its connection cut" net_case t_update
each_mode "net-update: updates that cannot apply are refused" net_case t_update_refusals
each_mode "net-update: exec --expect-fingerprint refuses once the policy changed" net_case t_expect_fingerprint
done_testing
