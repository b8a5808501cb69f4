#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317,SC2016
# A workload that took over its DNS proxy (docs/security.md, "The DNS
# proxy's process"), played by tests/security/proxy-inject: as host root
# it stops the live cordon-dnsproxy with ptrace and makes it run system
# calls, each through the proxy's own seccomp filter, as code running in
# the proxy would. Each case asserts what must hold; a lab listener sees
# what would get out.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || { echo "1..0 # SKIP needs root for the network lab"; exit 0; }
. "$(dirname "$0")/net-lib.sh"

INJECT=${PROXY_INJECT:-$(dirname "$CORDON")/tests/security/proxy-inject}

proxy_of() { pgrep -P "$1" -x cordon-dnsproxy; }

# proxy-inject speaks x86-64 registers; elsewhere it is not built.
inject_missing() {
	[ ! -x "$INJECT" ] || return 1
	skip_or_fail "no proxy-inject at $INJECT (built on x86-64 only)"
}

start_waiting() {
	inject_missing && return 1
	crun_bg --dns-upstream "$LAB_DNS4" --net-allow allowed.test "$@" -- sh -c \
		'. /workspace/p.sh; look allowed.test >/workspace/looked; touch /workspace/ready
		 while [ ! -e /workspace/done ]; do sleep 0.1; done'
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		fail "the sandbox never got ready"
		return 1
	fi
	SUP=$(supervisor_of "$ID") || { fail "no supervisor found for $ID"; return 1; }
	PROXY=$(proxy_of "$SUP") || { fail "no cordon-dnsproxy child of $SUP"; return 1; }
}

finish_waiting() {
	touch "$WS/done"
	wait_bg_for "$WAIT_LIMIT" || return 1
}

# The proxy may not send anywhere but its upstreams: close(0x100000004)
# must not free its listener's fd 4 for an upstream socket (made in the
# supervisor's namespace, the host's), on which sendto may name an
# address. Listeners on the lab host's loopback, denied.test's server
# and the metadata address must see nothing.
t_proxy_udp_escape() {
	local token=esc$RANDOM$RANDOM lhlog=$CASE_DIR/lh-udp.log wlog=$CASE_DIR/world-udp.log lp wp rc
	rm -f "$lhlog" "$wlog"
	lp=$(ip netns exec "$LAB_LH" "$LAB_PYTHON" -c 'import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",5399))
open(sys.argv[1],"w").close()
while True:
    d,a=s.recvfrom(2048); open(sys.argv[1],"a").write("%s %s\n"%(a[0],d.decode(errors="replace")))' "$lhlog" >/dev/null 2>&1 & echo $!)
	wp=$(ip netns exec "$LAB_WORLD" "$LAB_PYTHON" -c 'import socket,sys,select
ss=[]
for a in ("198.18.1.20","169.254.169.254"):
    s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind((a,9)); ss.append(s)
open(sys.argv[1],"w").close()
while True:
    for s in select.select(ss,[],[])[0]:
        d,a=s.recvfrom(2048); open(sys.argv[1],"a").write("%s->%s %s\n"%(a[0],s.getsockname()[0],d.decode(errors="replace")))' "$wlog" >/dev/null 2>&1 & echo $!)
	wait_until "$WAIT_LIMIT" test -e "$lhlog" && wait_until "$WAIT_LIMIT" test -e "$wlog" || { fail "listeners did not start"; kill "$lp" "$wp"; return; }
	start_waiting || { kill "$lp" "$wp"; return; }
	"$INJECT" "$PROXY" escape-udp 127.0.0.1 5399 "$token-lhloop" 2 >"$CASE_DIR/inject.log" 2>&1
	rc=$?
	# The upstream socket now at fd 4: two more destinations.
	if [ $rc = 0 ]; then
		"$INJECT" "$PROXY" escape-udp 198.18.1.20 9 "$token-denied" 2 >>"$CASE_DIR/inject.log" 2>&1 ||
			true
	fi
	sleep 1
	finish_waiting
	kill "$lp" "$wp" 2>/dev/null
	wait "$lp" "$wp" 2>/dev/null
	diag "injector rc=$rc: $(tr '\n' ';' <"$CASE_DIR/inject.log")"
	diag "lab host's loopback listener saw: $(tr '\n' ';' <"$lhlog")"
	diag "world listeners saw: $(tr '\n' ';' <"$wlog")"
	! grep -q "$token" "$lhlog" || fail "BYPASS: the lab host's loopback service got the proxy's datagram: $(head -n 2 "$lhlog")"
	! grep -q "$token" "$wlog" || fail "BYPASS: a world listener got the proxy's datagram: $(head -n 2 "$wlog")"
}

sup_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # clock ticks, user + system
sup_rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; } # KiB

# Admits from a taken-over proxy, 16 new public IPv6 addresses each,
# as fast as the injector goes (a few hundred a second, under the
# supervisor's limit of 1000): each costs the supervisor a few probes of
# its admitted table and one nft batch, whatever came before, and the
# table stops growing at the allow sets' size. An earlier supervisor
# scanned a list of every address ever admitted: 220 us of CPU an
# address after 55,000, growing; here it must stay under 60 us, counted
# in CPU time, not wall time, so a loaded machine does not change it.
t_admit_growth() {
	local c0 c1 r0 r1 sent hz per_addr
	hz=$(getconf CLK_TCK)
	start_waiting || return
	c0=$(sup_cpu "$SUP") r0=$(sup_rss "$SUP")
	sent=$("$INJECT" "$PROXY" admit-flood allowed.test "${TAKEOVER_FLOOD_S:-12}" 900 2>"$CASE_DIR/inject.log")
	# What the supervisor still has queued, read before counting.
	sleep 2
	c1=$(sup_cpu "$SUP") r1=$(sup_rss "$SUP")
	finish_waiting || return
	[ "${sent:-0}" -gt 500 ] || { fail "the injector sent only ${sent:-0} admits: $(cat "$CASE_DIR/inject.log")"; return; }
	per_addr=$(((c1 - c0) * 1000000 / hz / (sent * 16)))
	diag "$sent admits of 16 new addresses: supervisor CPU $(((c1 - c0) * 1000 / hz)) ms (${per_addr} us an address), RSS ${r0} -> ${r1} KiB"
	[ "$per_addr" -lt 60 ] || fail "the supervisor spent ${per_addr} us of CPU an admitted address"
	[ $((r1 - r0)) -lt 16384 ] || fail "the supervisor grew by $((r1 - r0)) KiB for $sent admits"
}

# Forged EVENTs into the audit log: a denied name said allowed with an
# address never admitted, names made of JSON's own characters, and a
# flood. The log holds the supervisor's verdict (denied, no address),
# every line is one valid object, and the flood is held to the DNS rate
# and the cap.
t_audit_forged_events() {
	local audit=$CASE_DIR/a.jsonl s2=${LAB_IP4[server2]} sent lines
	start_waiting --audit "$audit" --audit-max 65536 || return
	sent=$("$INJECT" "$PROXY" event-forge denied.test "$s2" 3000 2>"$CASE_DIR/inject.log")
	finish_waiting || return
	[ "${sent:-0}" -gt 100 ] || { fail "the injector sent only ${sent:-0} events: $(cat "$CASE_DIR/inject.log")"; return; }
	"$PYTHON" "$(dirname "$0")/audit-check.py" "$(dirname "$0")/../../docs/audit.schema.json" \
		"$audit" --max-bytes 65536 >"$CASE_DIR/events" 2>"$CASE_DIR/check.err" ||
		{ fail "audit log: $(cat "$CASE_DIR/check.err")"; return; }
	[ "$(grep -c '^create$' "$CASE_DIR/events")" = 1 ] || { fail "a forged create event got in"; return; }
	! grep -q "\"$s2\"" "$audit" || { fail "the never-admitted $s2 is in the log"; return; }
	[ "$(jq -s '[.[] | select(.event == "dns" and .name == "denied.test")] | length > 0 and all(.decision == "denied")' "$audit")" = true ] ||
		{ fail "denied.test not written as denied: $(grep denied.test "$audit" | head -3)"; return; }
	[ "$(jq -s '[.[] | select(.event == "dns" and .name == "a\"b\\c}{x.allowed.test")] | length' "$audit")" = 1 ] ||
		{ fail "the name of JSON characters did not come back whole"; return; }
	lines=$(grep -c '"event":"dns"' "$audit")
	diag "$sent forged events: $lines dns lines, $(wc -c <"$audit") bytes"
	# The burst and 50 a second for as long as the flood lasted (well under 20 s).
	[ "$lines" -le $((50 + 50 * 20)) ] || fail "$lines dns lines for a forged flood"
	[ "$(jq -s 'map(select(.event == "cleanup"))[0].dropped.dns_rate > 0' "$audit")" = true ] ||
		fail "the flood's dropped events are not counted"
}

# Only EVENTs may share a datagram (a turn of the proxy's loop sends
# them together): an ADMIT hidden behind an EVENT is a broken protocol.
# The supervisor refuses the datagram whole, admits nothing of it and
# ends the sandbox (125, the reason named).
t_batch_admit_refused() {
	local s2=${LAB_IP4[server2]} sent
	start_waiting || return
	sent=$("$INJECT" "$PROXY" batch-admit allowed.test "$s2" 2>"$CASE_DIR/inject.log")
	[ "$sent" = 1 ] || { fail "the injector did not send its datagram: $(cat "$CASE_DIR/inject.log")"; finish_waiting; return; }
	wait_bg_for "$WAIT_LIMIT" || return
	[ "$RC" = 125 ] || { fail "expected 125, got $RC: $ERR"; return; }
	grep -q "broke its protocol: a message other than EVENT among several" "$CASE_DIR/err" ||
		fail "the reason is not named: $ERR"
}

each_mode "net: a taken-over proxy sends nowhere but its upstreams (close's high bits)" net_case t_proxy_udp_escape
each_mode "net: a taken-over proxy's forged events: the supervisor's verdict, valid lines, rate and cap" net_case t_audit_forged_events
each_mode "net: a taken-over proxy's ADMIT among EVENTs in one datagram ends the sandbox" net_case t_batch_admit_refused
each_mode "net: a taken-over proxy's admits cost the supervisor a bounded table and constant time" net_case t_admit_growth
done_testing
