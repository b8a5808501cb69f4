#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the DNS proxy's own process (docs/security.md, "The DNS proxy's
# process"), in the network lab: seen from the host it is a child of the
# supervisor with an id of the sandbox's range (neither root nor the
# caller), no capability in any set, no_new_privs, a seccomp filter, an
# empty root, only sockets and /dev/null open, in the gateway's network
# namespace; killed with SIGKILL, it takes the sandbox with it (exit 125,
# CORDON_E_NET_POLICY) and leaves nothing; and what a proxy taken over by
# the workload would ask for (the lab build forges it:
# CORDON_LAB_DNS_FORGE_ADMIT) is refused by the supervisor: the metadata
# address and the host's own address never enter the allow sets.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || { echo "1..0 # SKIP needs root for the network lab"; exit 0; }
. "$(dirname "$0")/net-lib.sh"

# The proxy of the sandbox whose supervisor is $1: its one cordon-dnsproxy child.
proxy_of() { pgrep -P "$1" -x cordon-dnsproxy; }
status_field() { awk -v k="$2:" '$1 == k { print $2; exit }' "/proc/$1/status"; }

# Start a networked sandbox that resolves allowed.test and waits for $WS/done.
start_waiting() {
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
	PROXY=$(proxy_of "$SUP") || { fail "no cordon-dnsproxy child of the supervisor $SUP"; return 1; }
}

finish_waiting() {
	touch "$WS/done"
	wait_bg_for "$WAIT_LIMIT" || return 1
	expect_rc 0
}

t_process() {
	local caller uid cap fd target init bad=
	start_waiting || return
	grep -q '^LOOK allowed.test OK' "$WS/looked" || fail "expected allowed.test to resolve: $(cat "$WS/looked")"
	if [ "$MODE" = rootful ]; then caller=0; else caller=$(id -u "$CORDON_TEST_USER"); fi
	for uid in $(status_field "$PROXY" Uid) $(status_field "$PROXY" Gid); do
		[ "$uid" != 0 ] || bad+=" id 0"
		[ "$uid" != "$caller" ] || bad+=" the caller's id $caller"
	done
	for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
		[ "$(status_field "$PROXY" "$cap")" = 0000000000000000 ] || bad+=" $cap=$(status_field "$PROXY" "$cap")"
	done
	[ "$(status_field "$PROXY" NoNewPrivs)" = 1 ] || bad+=" NoNewPrivs=$(status_field "$PROXY" NoNewPrivs)"
	[ "$(status_field "$PROXY" Seccomp)" = 2 ] || bad+=" Seccomp=$(status_field "$PROXY" Seccomp)"
	[ -z "$bad" ] || fail "the proxy (pid $PROXY) holds:$bad" "$(grep -E '^(Uid|Gid|Cap|NoNewPrivs|Seccomp)' "/proc/$PROXY/status")"
	# No file of the host's: an empty root, and nothing open but sockets, epoll and /dev/null.
	[ -z "$(ls -A "/proc/$PROXY/root/")" ] || fail "expected an empty root, found: $(ls -A "/proc/$PROXY/root/" | tr '\n' ' ')"
	for fd in /proc/"$PROXY"/fd/*; do
		target=$(readlink "$fd")
		case $target in
		socket:* | anon_inode:\[eventpoll\] | /dev/null) ;;
		*) bad+=" ${fd##*/}->$target" ;;
		esac
	done
	[ -z "$bad" ] || fail "the proxy holds fds other than sockets and /dev/null:$bad"
	# In the gateway's network namespace, the init's (the supervisor's
	# child, both modes; never another sandbox's init: other scripts run
	# theirs beside this one); not the lab host's.
	[ "$(readlink "/proc/$PROXY/ns/net")" != "$(ip netns exec "$LAB_LH" readlink /proc/self/ns/net)" ] ||
		fail "expected the proxy outside the lab host's network namespace"
	if init=$(pgrep -P "$SUP" -x cordon-init); then
		[ "$(readlink "/proc/$PROXY/ns/net")" = "$(readlink "/proc/$init/ns/net")" ] ||
			fail "expected the proxy in the gateway namespace (the init's)"
	else
		fail "no cordon-init child of the supervisor $SUP"
	fi
	[ "$(tr -d '\0' <"/proc/$PROXY/cmdline")" = cordon-dnsproxy ] ||
		fail "expected the command line cordon-dnsproxy, got $(tr '\0' ' ' <"/proc/$PROXY/cmdline")"
	finish_waiting
}

t_killed() {
	start_waiting || return
	kill -9 "$PROXY"
	wait_bg_for "$WAIT_LIMIT" || return
	expect_cordon_error NET_POLICY 'network: DNS proxy: it was killed (signal 9)'
	[ ! -e "/proc/$SUP" ] || fail "expected the supervisor gone"
}

# The lab build's proxy adds 169.254.169.254 and the lab host's own
# 198.18.0.1 (inside the lab's "public" range: the vetting table passes
# it) to its admit, as a proxy taken over by the workload could.
t_forged_admit() {
	local set h0
	h0=$(lab_http_hits metadata)
	XENV=('CORDON_LAB_DNS_FORGE_ADMIT=169.254.169.254,198.18.0.1')
	start_waiting --result-json "$CASE_DIR/r.json" || { XENV=(); return; }
	XENV=()
	set=$(nsenter -t "$PROXY" -n nft -j list set inet cordon allow4 2>&1)
	jq -e '[.nftables[].set.elem // empty | .[] | (.elem.val // .)] | index("198.18.1.10") != null' <<<"$set" >/dev/null ||
		fail "expected allowed.test's 198.18.1.10 in allow4" "$set"
	jq -e '[.nftables[].set.elem // empty | .[] | (.elem.val // .)] | (index("169.254.169.254") == null and index("198.18.0.1") == null)' <<<"$set" >/dev/null ||
		fail "expected neither forged address in allow4" "$set"
	finish_waiting
	JSON=$(cat "$CASE_DIR/r.json" 2>/dev/null)
	expect_json '.names | map(select(.name == "allowed.test")) | .[0] | (.inserted | index("198.18.1.10") != null) and ([.refused[] | "\(.address) \(.reason)"] | sort == ["169.254.169.254 metadata", "198.18.0.1 blocked"])' \
		"expected the supervisor to refuse both forged addresses, with their reasons"
	[ "$(lab_http_hits metadata)" = "$h0" ] || fail "something reached the metadata server"
}

# The DNS proxy's admits are served while the output's reader never
# reads: the supervisor's loop is never held by the relay of counted
# output. A child of the workload floods stdout; the workload then
# resolves and fetches allowed.test (an admit each); the reader reads
# nothing until the result is in the workspace (20 s at most).
t_admit_reader_stuck() {
	local _argv rcfile=$CASE_DIR/rc
	rm -f "$rcfile" "$WS/got"
	_cordon_argv run --name "$CASE_ID-stuck" --dns-upstream "$LAB_DNS4" --net-allow allowed.test \
		--output-max 100000000 "$ROOTFS" -- sh -c \
		'. /workspace/p.sh; (while :; do echo flooding-flooding-flooding; done) & sleep 1
		 { look allowed.test; get allowed.test; } >/workspace/got.tmp 2>&1; mv /workspace/got.tmp /workspace/got'
	# shellcheck disable=SC2016
	(cd "$WS" && exec bash -c '{ "${@:2}"; echo $? >"$0"; } | {
		for i in $(seq 200); do [ -e "$1/got" ] && break; sleep 0.1; done; }' \
		"$rcfile" "$WS" "${_argv[@]}")
	[ -e "$WS/got" ] || { fail "the workload never finished its lookup while stdout was full"; return; }
	grep -q '^LOOK allowed.test OK' "$WS/got" || fail "expected allowed.test to resolve while stdout was full: $(cat "$WS/got")"
	grep -q '^GET allowed.test:80 OK server1$' "$WS/got" || fail "expected the fetch to work while stdout was full: $(cat "$WS/got")"
}

# The proxy is cordon's binary run afresh with no environment: nothing of
# the supervisor's memory is in it (the caller's environment, the whole
# spec). A secret in the caller's environment is nowhere in the proxy's
# memory, read whole through /proc/PID/mem (as root).
t_fresh_image() {
	local secret=cordon-secret-$RANDOM$RANDOM$RANDOM found
	XENV=(CORDON_CALLER_SECRET="$secret")
	start_waiting || { XENV=(); return; }
	XENV=()
	found=$("$LAB_PYTHON" - "$PROXY" "$secret" <<'PY'
import re, sys
pid, needle = sys.argv[1], sys.argv[2].encode()
hits = []
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (r)", line)
        if not m:
            continue
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        try:
            mem.seek(lo)
            if needle in mem.read(hi - lo):
                hits.append(line.split()[-1] if len(line.split()) > 5 else "[anon]")
        except OSError:
            pass
print(" ".join(hits))
PY
)
	[ -z "$found" ] || fail "the caller's secret is in the proxy's memory: $found"
	grep -qa "$secret" "/proc/$PROXY/environ" && fail "the caller's secret is in the proxy's environment"
	grep -qa "$secret" "/proc/$SUP/environ" || fail "expected the secret in the supervisor's environment (the control)"
	finish_waiting
}

# ^C, ^\ or a hang-up at the caller's terminal go to the supervisor's
# process group: they are the workload's (relayed), never the proxy's
# death. The proxy leads a session of its own and ignores what a
# terminal or a group sends; sent to it directly, they change nothing.
t_terminal_signals() {
	local sid sig
	start_waiting || return
	sid=$(ps -o sid= -p "$PROXY" | tr -d ' ')
	[ "$sid" = "$PROXY" ] || fail "expected the proxy to lead a session of its own (sid $sid)"
	[ "$(ps -o sid= -p "$SUP" | tr -d ' ')" != "$sid" ] || fail "expected the proxy outside the supervisor's session"
	for sig in INT QUIT HUP TERM TSTP; do
		kill -"$sig" "$PROXY"
	done
	sleep 0.5
	[ -e "/proc/$PROXY" ] || fail "the proxy died of a terminal's signal"
	grep -q '^State:.*[Tt]' "/proc/$PROXY/status" && fail "the proxy stopped on SIGTSTP"
	finish_waiting
}

# The resolver cordon asks may be one of the host's own (a stub on its
# loopback, a server on one of its addresses): the proxy's upstream
# sockets are the supervisor's, made in the host's namespace. And G holds
# no socket but the proxy's listeners: nothing the workload sends into G
# can reach an upstream socket to answer in its place.
t_upstream_on_the_host() {
	local stub=$CASE_DIR/stub.py log=$CASE_DIR/stub.log pid
	cat >"$stub" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 5354))
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 12:
        continue
    open(sys.argv[1], "a").write("query\n")
    # The question back, one A record 198.18.1.10, TTL 60.
    end = 12
    while q[end]:
        end += q[end] + 1
    end += 5
    a = q[:2] + b"\x81\x80" + q[4:6] + b"\x00\x01\x00\x00\x00\x00" + q[12:end]
    a += b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + bytes([198, 18, 1, 10])
    s.sendto(a, peer)
PY
	ip netns exec "$LAB_LH" "$LAB_PYTHON" "$stub" "$log" &
	pid=$!
	sleep 0.5
	crun_bg --dns-upstream 127.0.0.1:5354 --net-allow allowed.test -- sh -c \
		'. /workspace/p.sh; { look allowed.test; get 198.18.1.10; } >/workspace/got 2>&1; touch /workspace/ready
		 while [ ! -e /workspace/done ]; do sleep 0.1; done'
	if wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		SUP=$(supervisor_of "$ID") && PROXY=$(proxy_of "$SUP") &&
			[ -z "$(nsenter -t "$PROXY" -n ss -Hanu | awk '$4 !~ /:53$/')" ] ||
			fail "expected no UDP socket in the gateway but the proxy's :53 listeners" \
				"$(nsenter -t "$PROXY" -n ss -Hanu 2>&1)"
	fi
	touch "$WS/done"
	wait_bg_for "$WAIT_LIMIT"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	expect_rc 0
	grep -q '^LOOK allowed.test OK .*198\.18\.1\.10' "$WS/got" ||
		fail "expected the lookup through a resolver on the host's loopback: $(cat "$WS/got")"
	grep -q '^GET 198.18.1.10:80 OK server1$' "$WS/got" || fail "expected the fetch: $(cat "$WS/got")"
	[ -s "$log" ] || fail "the resolver on the host's loopback saw no query"
}

each_mode "net: the DNS proxy runs apart: no privilege, no capability, no file, in the gateway" net_case t_process
each_mode "net: the DNS proxy killed: exit 125, CORDON_E_NET_POLICY, nothing left" net_case t_killed
each_mode "net: the proxy's admits are served while a stdout nobody reads is full" net_case t_admit_reader_stuck
each_mode "net: the proxy is a fresh image: the caller's environment is not in its memory" net_case t_fresh_image
each_mode "net: the proxy leads its own session; a terminal's signals do not end it" net_case t_terminal_signals
each_mode "net: a resolver on the host's loopback works; G holds no upstream socket" net_case t_upstream_on_the_host
each_mode "net: a forged admit of the metadata and the host's address is refused by the supervisor" net_case t_forged_admit
done_testing
