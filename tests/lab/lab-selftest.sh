#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # checks are called through check
# shellcheck disable=SC2015 # "A && B || fail": fail either way is meant
# shellcheck disable=SC2016 # eval'd check bodies expand when they run
# The network lab's self-test (TAP): brings tests/lab/lab.sh's lab up in a
# private network namespace, checks from its lab host (LH) that the world's
# resolver, web servers, metadata service and LH's own listener behave as
# lab.sh documents, that nothing leaves the lab, that two labs coexist, and
# that lab_down leaves nothing behind: no netns, no process, no reference to
# the lab's namespaces, no file. Needs root; skips otherwise, fails under CI.
set -u
set -o pipefail

. "$(dirname "$0")/lab.sh"
[ "$EUID" -eq 0 ] || skip_all_or_fail "needs root (network namespaces)"
lab_isolate "$@" || skip_all_or_fail "could not enter a private network namespace"

# --- TAP --------------------------------------------------------------------

_n=0
_failed=0
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
ok() { _n=$((_n + 1)); printf 'ok %d - %s\n' "$_n" "$1"; }
not_ok() {
	_n=$((_n + 1))
	_failed=$((_failed + 1))
	printf 'not ok %d - %s\n' "$_n" "$1"
	shift
	[ $# -gt 0 ] && diag "$@"
	return 0
}
# check NAME COMMAND...: ok when COMMAND succeeds; its output is the diagnostic.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}
_done=
_finish() {
	local rc=$?
	[ -n "$_done" ] && return
	printf '1..%d\n' "$_n"
	diag "test script ended early (status $rc)"
	exit 99
}
trap _finish EXIT

# fail MESSAGE: inside a check's function (which check runs in a subshell),
# report and end the check as failed.
fail() {
	printf '%s\n' "$*"
	exit 1
}

# wait_for_file FILE: until FILE is not empty, 60 s at most (a lab coming
# up in the background, on a machine busy with the other network tests).
wait_for_file() {
	local end=$((SECONDS + 60))
	until [ -s "$1" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# --- packages ---------------------------------------------------------------------

missing=
command -v dnsmasq >/dev/null 2>&1 || missing+=" dnsmasq-base"
command -v dig >/dev/null 2>&1 || missing+=" bind9-dnsutils"
if [ -n "$missing" ]; then
	not_ok "lab packages installed" "missing:$missing (contrib/deps.sh --test installs them)"
	_done=1
	printf '1..%d\n' "$_n"
	exit 0
fi

started=$SECONDS

# --- the test's own namespace, and lab_up ------------------------------------------

t_private() {
	local links
	[ "$(readlink /proc/$$/ns/net)" != "$(readlink /proc/1/ns/net)" ] ||
		fail "the test runs in PID 1's network namespace"
	links=$(ip -o link show | awk -F': ' '{ print $2 }' | tr '\n' ' ')
	[ "$links" = "lo " ] || fail "the test's own namespace has links: $links"
	ip route get 198.18.1.10 >/dev/null 2>&1 && fail "the test's own namespace has a route to the world"
	return 0
}
check "the test runs in a network namespace of its own, with only lo and no route" t_private

t_refuses() {
	local out
	out=$( (unset LAB_PRIVATE_NETNS; lab_up) 2>&1) && fail "lab_up ran without lab_isolate: $out"
	case $out in *"private network namespace"*) ;; *) fail "unexpected refusal: $out" ;; esac
	ip link add lab-extra0 type veth peer name lab-extra1 || fail "could not add a veth"
	out=$( (lab_up) 2>&1)
	local rc=$?
	ip link del lab-extra0
	[ "$rc" -ne 0 ] || fail "lab_up ran in a namespace with another link: $out"
	# Refused before it made anything (names, netns, files come later).
	case $out in *"private network namespace"*) ;; *) fail "unexpected refusal: $out" ;; esac
	return 0
}
check "lab_up refuses to run outside the test's private namespace" t_refuses

if lab_up; then
	ok "lab_up builds the lab in ${LAB_UP_SECONDS} s ($LAB_LH, $LAB_WORLD)"
else
	not_ok "lab_up builds the lab"
	_done=1
	printf '1..%d\n' "$_n"
	exit 0
fi
LAB1_DIR=$LAB_DIR
LAB1_LH=$LAB_LH
LAB1_WORLD=$LAB_WORLD
LAB1_INODES=("${LAB_NS_INODES[@]}")

t_topology() {
	local list r4 r6
	list=$(ip netns list)
	grep -q "^$LAB_LH\\b" <<<"$list" && grep -q "^$LAB_WORLD\\b" <<<"$list" ||
		fail "netns missing from: $list"
	r4=$(ip -n "$LAB_LH" -4 route show default)
	r6=$(ip -n "$LAB_LH" -6 route show default)
	[[ $r4 == "default via $LAB_WORLD4 dev $LAB_LH_IF"* ]] || fail "LH IPv4 default: $r4"
	[[ $r6 == "default via $LAB_WORLD6 dev $LAB_LH_IF"* ]] || fail "LH IPv6 default: $r6"
	[ "$(lab_exec sysctl -n net.ipv4.ip_forward)" = 1 ] || fail "LH: IPv4 forwarding off"
	[ "$(lab_exec sysctl -n net.ipv6.conf.all.forwarding)" = 1 ] || fail "LH: IPv6 forwarding off"
	# Read whole before they are searched: grep -q leaves at the first match,
	# and ip's next write then fails (SIGPIPE), which pipefail counts.
	[[ $(ip -n "$LAB_LH" -o addr show dev "$LAB_LH_IF") == *" $LAB_LH4/24 "* ]] || fail "LH has no $LAB_LH4/24"
	[[ $(ip -n "$LAB_WORLD" -o addr show dev lo) == *" 198.18.2.40/32 "* ]] || fail "WORLD has no 198.18.2.40"
	return 0
}
check "LH and WORLD exist, joined by a veth; LH routes by default via WORLD and forwards" t_topology

t_resolv() {
	local conf
	conf=$(lab_exec cat /etc/resolv.conf)
	[ "$(grep '^nameserver' <<<"$conf" | tr '\n' ' ')" = "nameserver $LAB_DNS4 nameserver $LAB_DNS6 " ] ||
		fail "LH's resolv.conf: $conf"
	[ "$(lab_exec printenv CORDON_LAB_PUBLIC_CIDR)" = "$LAB_PUBLIC_CIDR" ] ||
		fail "lab_exec does not set CORDON_LAB_PUBLIC_CIDR"
}
check "in LH, /etc/resolv.conf names only the world's resolver; lab_exec sets CORDON_LAB_PUBLIC_CIDR" t_resolv

# --- DNS ---------------------------------------------------------------------------

# answers NAME TYPE [DIG OPTIONS...]: "TTL TYPE DATA" lines, sorted.
answers() {
	local name=$1 type=$2
	shift 2
	lab_dig +noall +answer "$@" "$name" "$type" | awk '{ print $2, $4, $5 }' | sort -V
}
# expect_answers NAME TYPE "EXPECTED LINES"
expect_answers() {
	local got
	got=$(answers "$1" "$2")
	[ "$got" = "$3" ] || fail "$1 $2: expected [$3], got [$got]"
}
status_of() { lab_dig +noall +comments "$@" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p'; }

check "allowed.test A and AAAA: server1, TTL $LAB_TTL" eval '
	expect_answers allowed.test A "$LAB_TTL A ${LAB_IP4[server1]}" &&
	expect_answers allowed.test AAAA "$LAB_TTL AAAA ${LAB_IP6[server1]}"'
check "denied.test A and AAAA: server2" eval '
	expect_answers denied.test A "$LAB_TTL A ${LAB_IP4[server2]}" &&
	expect_answers denied.test AAAA "$LAB_TTL AAAA ${LAB_IP6[server2]}"'

t_cdn() {
	local got
	got=$(lab_dig +noall +answer cdn.allowed.test A | awk '{ print $1, $4, $5 }')
	[ "$got" = "cdn.allowed.test. CNAME edge.cdnnet.test.
edge.cdnnet.test. A ${LAB_IP4[server3]}" ] || fail "cdn.allowed.test A: $got"
	got=$(lab_dig +noall +answer cdn.allowed.test AAAA | awk '{ print $4, $5 }' | tr '\n' ' ')
	[ "$got" = "CNAME edge.cdnnet.test. AAAA ${LAB_IP6[server3]} " ] || fail "cdn.allowed.test AAAA: $got"
}
check "cdn.allowed.test: CNAME edge.cdnnet.test, then server3 (A and AAAA)" t_cdn

t_multi() {
	local want got hdr
	want=$(for i in $(seq 1 "$LAB_MULTI_N"); do echo "$LAB_TTL A 198.18.2.$i"; done)
	got=$(answers multi.allowed.test A)
	[ "$got" = "$want" ] || fail "over UDP with EDNS: $(wc -l <<<"$got") records: $got"
	got=$(answers multi.allowed.test A +tcp)
	[ "$got" = "$want" ] || fail "over TCP: $(wc -l <<<"$got") records"
	# Without EDNS the answer does not fit 512 bytes: truncated, TC set.
	hdr=$(lab_dig +noedns +ignore +noall +comments multi.allowed.test A | grep 'flags:')
	[[ $hdr == *" tc"* ]] || fail "plain UDP answer is not truncated: $hdr"
	return 0
}
check "multi.allowed.test: $LAB_MULTI_N A records (UDP+EDNS, TCP); truncated (TC) over plain UDP" t_multi

t_ttl1() {
	local a aaaa
	a=$(answers ttl1.allowed.test A)
	aaaa=$(answers ttl1.allowed.test AAAA)
	[[ $a == *" A ${LAB_IP4[ttl1]}" ]] && [ "${a%% *}" -le 1 ] || fail "ttl1 A: $a"
	[[ $aaaa == *" AAAA ${LAB_IP6[ttl1]}" ]] && [ "${aaaa%% *}" -le 1 ] || fail "ttl1 AAAA: $aaaa"
	return 0
}
check "ttl1.allowed.test: TTL <= 1" t_ttl1

check "rebind.allowed.test: A 169.254.169.254 and A 127.0.0.1" \
	expect_answers rebind.allowed.test A "$LAB_TTL A 127.0.0.1
$LAB_TTL A 169.254.169.254"

check "a.wild.test, b.c.wild.test, wild.test: three distinct servers" eval '
	expect_answers a.wild.test A "$LAB_TTL A ${LAB_IP4[wild-a]}" &&
	expect_answers b.c.wild.test A "$LAB_TTL A ${LAB_IP4[wild-bc]}" &&
	expect_answers wild.test A "$LAB_TTL A ${LAB_IP4[wild-apex]}" &&
	expect_answers b.c.wild.test AAAA "$LAB_TTL AAAA ${LAB_IP6[wild-bc]}"'

t_v6only() {
	local s
	expect_answers v6only.allowed.test AAAA "$LAB_TTL AAAA ${LAB_IP6[v6only]}" || return 1
	s=$(status_of v6only.allowed.test A)
	[ "$s" = NOERROR ] && [ -z "$(answers v6only.allowed.test A)" ] ||
		fail "v6only.allowed.test A: status $s, answers $(answers v6only.allowed.test A)"
}
check "v6only.allowed.test: AAAA only (A: NOERROR, no data)" t_v6only

t_unknown() {
	local s
	s=$(status_of nothing-here.allowed.test A)
	[ "$s" = NXDOMAIN ] || fail "nothing-here.allowed.test: $s"
	s=$(status_of example.com A)
	[ "$s" = REFUSED ] || fail "example.com: $s (the world's resolver has no upstream)"
	return 0
}
check "unknown names: NXDOMAIN under .test, REFUSED elsewhere (never forwarded)" t_unknown

check "the resolver answers on its IPv6 address too" eval '
	[ "$(ip netns exec "$LAB_LH" dig @"$LAB_DNS6" +time=2 +tries=1 +short allowed.test A)" = "${LAB_IP4[server1]}" ]'

t_queries() {
	local n
	n=$(lab_dns_queries denied.test)
	[ "$n" -eq 2 ] || fail "denied.test: $n queries counted, 2 made (A, AAAA)"
	n=$(lab_dns_queries DENIED.test. AAAA)
	[ "$n" -eq 1 ] || fail "DENIED.test. AAAA: $n, expected 1 (case and trailing dot ignored)"
	n=$(lab_dns_queries never-asked.test)
	[ "$n" -eq 0 ] || fail "never-asked.test: $n"
	lab_dig +short MiXeD.wild.test A >/dev/null
	n=$(lab_dns_queries mixed.wild.test)
	[ "$n" -eq 1 ] || fail "MiXeD.wild.test: $n, expected 1"
	# allowed.test: A, AAAA, plus one A over IPv6; cdn.allowed.test is not it.
	n=$(lab_dns_queries allowed.test)
	[ "$n" -eq 3 ] || fail "allowed.test: $n, expected 3"
	n=$(lab_dns_queries multi.allowed.test A)
	[ "$n" -eq 3 ] || fail "multi.allowed.test A: $n, expected 3 (EDNS, TCP, plain)"
	return 0
}
check "lab_dns_queries counts the resolver's log exactly (name, type, case, TCP)" t_queries

# --- HTTP --------------------------------------------------------------------------

# get_all NETNS "URL EXPECTED-BODY"...: one python run fetches them all,
# printing a line for each mismatch.
get_all() {
	local ns=$1
	shift
	printf '%s\n' "$@" | ip netns exec "$ns" "$LAB_PYTHON" -c '
import sys, urllib.request
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
bad = 0
for line in sys.stdin:
    url, want = line.rstrip("\n").split(" ", 1)
    try:
        got = o.open(url, timeout=3).read().decode().rstrip("\n")
    except Exception as e:
        got = "error: %s" % e
    if got != want:
        print("%s: expected %r, got %r" % (url, want, got))
        bad = 1
sys.exit(bad)'
}

t_servers() {
	local name reqs=()
	for name in server1 server2 server3 wild-a wild-bc wild-apex ttl1 world; do
		reqs+=("http://${LAB_IP4[$name]}/ $name")
	done
	for name in server1 server2 server3 wild-a wild-bc wild-apex ttl1 v6only world; do
		reqs+=("http://[${LAB_IP6[$name]}]/ $name")
	done
	get_all "$LAB_LH" "${reqs[@]}"
}
check "every world web server answers from LH with its own name (IPv4 and IPv6)" t_servers

t_multi_http() {
	local i reqs=()
	for ((i = 1; i <= LAB_MULTI_N; i++)); do reqs+=("http://198.18.2.$i/ multi-$i"); done
	get_all "$LAB_LH" "${reqs[@]}"
}
check "the $LAB_MULTI_N multi.allowed.test addresses each answer (multi-N)" t_multi_http

check "metadata services answer from LH (they are world hosts here)" get_all "$LAB_LH" \
	"http://169.254.169.254/latest/meta-data/ metadata" \
	"http://169.254.170.2/ metadata-ecs" \
	"http://100.100.100.200/ metadata-alibaba" \
	"http://168.63.129.16/ metadata-azure" \
	"http://[fd00:ec2::254]/ metadata-v6"

check "a world server sees LH's address as the client (GET /peer)" get_all "$LAB_LH" \
	"http://${LAB_IP4[server1]}/peer $LAB_LH4" "http://[${LAB_IP6[server1]}]/peer $LAB_LH6"

check "LH's listener answers on LH's loopback (127.0.0.1, ::1) and on LH's own address" get_all "$LAB_LH" \
	"http://127.0.0.1:$LAB_LH_PORT/ lab-host-loopback" \
	"http://[::1]:$LAB_LH_PORT/ lab-host-loopback" \
	"http://$LAB_LH4:$LAB_LH_PORT/ lab-host $LAB_LH4"

t_hits() {
	local n
	n=$(lab_http_hits server1)
	[ "$n" -eq 4 ] || fail "server1: $n hits, expected 4"
	n=$(lab_http_hits multi-40)
	[ "$n" -eq 1 ] || fail "multi-40: $n hits, expected 1"
	n=$(lab_http_hits lab-host-loopback)
	[ "$n" -eq 2 ] || fail "lab-host-loopback: $n hits, expected 2"
	n=$(lab_http_hits denied-never)
	[ "$n" -eq 0 ] || fail "denied-never: $n"
	return 0
}
check "lab_http_hits counts the requests each server answered" t_hits

# A datagram from LH to a world server, carrying a marker, is logged once
# leaving LH and once entering WORLD, with its payload; one without the
# marker is logged, unmarked; a sync returns once all of it is in.
t_capture() {
	local w h
	lab_capture_start cap-world "$LAB_WORLD" capmark1 || return 1
	lab_capture_start cap-lh "$LAB_LH" capmark1 || return 1
	ip netns exec "$LAB_LH" "$LAB_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"xx capmark1 yy", (sys.argv[1], 9))
s.sendto(b"nothing", (sys.argv[1], 10))' "${LAB_IP4[server1]}" || return 1
	lab_capture_sync cap-world "$LAB_WORLD" && lab_capture_sync cap-lh "$LAB_LH" || return 1
	lab_capture_stop cap-world
	lab_capture_stop cap-lh
	w=$(grep -c "if=lh0 dir=in src=$LAB_LH4 dst=${LAB_IP4[server1]} ttl=64 proto=udp sport=[0-9]* dport=9 len=42 markers=capmark1 payload=$(printf 'xx capmark1 yy' | od -An -tx1 | tr -d ' \n')\$" "$LAB_DIR/cap-world.cap")
	h=$(grep -c "if=world0 dir=out src=$LAB_LH4 dst=${LAB_IP4[server1]} .* dport=9 .*markers=capmark1 " "$LAB_DIR/cap-lh.cap")
	[ "$w" = 1 ] && [ "$h" = 1 ] || fail "marked datagram logged $w times in WORLD, $h in LH: $(cat "$LAB_DIR/cap-world.cap")"
	grep -q "if=lh0 dir=in .* dport=10 len=35 markers=-\$" "$LAB_DIR/cap-world.cap" ||
		fail "the unmarked datagram was not logged, or with a payload"
}
check "lab_capture_start logs every IP packet, its markers and a marked one's payload; lab_capture_sync waits for it" t_capture

t_contained() {
	local out t0
	t0=$SECONDS
	# Outside the lab: WORLD answers "unreachable" at once, no packet goes on.
	out=$(lab_http_get http://203.0.113.1/ 2>&1) && fail "203.0.113.1 answered: $out"
	case $out in *"No route to host"* | *"unreachable"*) ;; *) fail "203.0.113.1: $out" ;; esac
	out=$(lab_http_get 'http://[2001:db8::1]/' 2>&1) && fail "2001:db8::1 answered: $out"
	case $out in *"No route to host"* | *"unreachable"*) ;; *) fail "2001:db8::1: $out" ;; esac
	out=$(lab_http_get http://198.18.1.99/ 2>&1) && fail "198.18.1.99 answered: $out"
	[ $((SECONDS - t0)) -le 8 ] || fail "unreachable took $((SECONDS - t0)) s, not at once"
	# WORLD's 127.0.0.1 is WORLD's own: LH's loopback listener is not there.
	out=$(lab_http_get -n "$LAB_WORLD" "http://127.0.0.1:$LAB_LH_PORT/" 2>&1) &&
		fail "LH's loopback answered from WORLD: $out"
	return 0
}
check "nothing leaves the lab: other addresses are unreachable at once; LH's loopback is LH's" t_contained

# --- two labs ----------------------------------------------------------------------

t_two_labs() {
	local out before
	before=$(lab_dns_queries allowed.test)
	out=$(
		lab_up || exit 1
		[ "$LAB_LH" != "$LAB1_LH" ] && [ "$LAB_WORLD" != "$LAB1_WORLD" ] ||
			{ echo "second lab reused the names $LAB_LH $LAB_WORLD"; exit 1; }
		[ "$(lab_dig +short allowed.test)" = "${LAB_IP4[server1]}" ] ||
			{ echo "second lab's resolver did not answer"; exit 1; }
		[ "$(lab_http_get "http://${LAB_IP4[server2]}/")" = server2 ] ||
			{ echo "second lab's server2 did not answer"; exit 1; }
		[ "$(lab_dns_queries allowed.test)" -eq 1 ] ||
			{ echo "second lab's log is not its own"; exit 1; }
		echo "second=$LAB_LH,$LAB_WORLD"
		lab_down
		ip netns list | grep -q -e "^$LAB_LH\\b" -e "^$LAB_WORLD\\b" && { echo "second lab's netns left"; exit 1; }
		exit 0
	) || fail "$out"
	[ "$(lab_dig +short allowed.test)" = "${LAB_IP4[server1]}" ] || fail "first lab broke: $out"
	# The one query just made, none of the second lab's.
	[ "$(lab_dns_queries allowed.test)" -eq $((before + 1)) ] || fail "the second lab's queries reached the first"
	ip netns list | grep -q "^$LAB1_LH\\b" || fail "first lab's LH is gone"
	return 0
}
check "a second lab (in a subshell) coexists with the first, then goes" t_two_labs

# kill_then_sweep PID: the owner killed and reaped (a zombie's start time
# still counts as its life), then lab_sweep's words into out.
kill_then_sweep() {
	kill -KILL "$1"
	wait "$1" 2>/dev/null
	out=$(lab_sweep 2>&1)
}

t_sweep() {
	local info p dir lh world out
	info=$(mktemp /tmp/cordon-lab-selftest.XXXXXX)
	# A lab whose owner is SIGKILLed: exec keeps the owner's pid and start
	# time (so the lab counts as live) until the kill.
	(
		lab_up >/dev/null 2>&1 && echo "$LAB_DIR $LAB_LH $LAB_WORLD" >"$info"
		exec sleep 600
	) </dev/null >/dev/null 2>&1 &
	p=$!
	wait_for_file "$info"
	read -r dir lh world <"$info"
	rm -f "$info"
	[ -n "$dir" ] || { kill -KILL "$p"; fail "the abandoned lab did not come up"; }
	out=$(lab_sweep 2>&1)
	case $out in *"${dir##*.}"*) kill -KILL "$p"; fail "lab_sweep touched a lab whose owner lives: $out" ;; esac
	ip netns list | grep -q "^$lh\\b" || { kill -KILL "$p"; fail "lab_sweep took down a live owner's lab"; }
	# The kill and the sweep under the labs' lock: another script's lab_up
	# (the network tests run beside this one) would sweep it first.
	_lab_locked kill_then_sweep "$p"
	case $out in *"taking down the lab ${dir##*.}"*) ;; *) fail "lab_sweep said: $out" ;; esac
	! ip netns list | grep -q -e "^$lh\\b" -e "^$world\\b" || fail "the abandoned lab's netns are left"
	[ ! -e "$dir" ] || fail "the abandoned lab's $dir is left"
	[ -z "$(pgrep -af -- "$dir/")" ] || fail "the abandoned lab's processes are left: $(pgrep -af -- "$dir/")"
	[ "$(lab_dig +short allowed.test)" = "${LAB_IP4[server1]}" ] || fail "lab_sweep broke this shell's lab"
	return 0
}
check "lab_sweep takes down a lab whose owner was killed, and only that one" t_sweep

# /dev/net/tun's mode is the labs' to share: a stand-in file here (the
# real one is another lab's while this runs), 0600. Two labs hold it open
# (this one and a second): the first down leaves it 0666, the last down
# puts 0600 back; so does the sweep of a lab whose owner was killed.
t_tun_shared() {
	local dir p out
	dir=$(mktemp -d /tmp/cordon-lab-selftest.XXXXXX)
	LAB_TUN_DEV=$dir/tun LAB_TUN_MODE_FILE=$dir/tun-mode
	: >"$LAB_TUN_DEV"
	chmod 600 "$LAB_TUN_DEV"
	lab_tun_open
	[ "$LAB_TUN_RELAXED" = 600 ] && [ "$(stat -c %a "$LAB_TUN_DEV")" = 666 ] ||
		fail "lab_tun_open: relaxed from '$LAB_TUN_RELAXED', now $(stat -c %a "$LAB_TUN_DEV")"
	out=$(
		lab_up >/dev/null 2>&1 || { echo "the second lab did not come up"; exit 1; }
		lab_tun_open
		[ -z "$LAB_TUN_RELAXED" ] || { echo "the second lab changed it again (from $LAB_TUN_RELAXED)"; exit 1; }
		lab_down
	) || fail "$out"
	[ "$(stat -c %a "$LAB_TUN_DEV")" = 666 ] || fail "the second lab down took it from the first: $(stat -c %a "$LAB_TUN_DEV")"
	# This lab's hold let go as lab_down does.
	rm -f "$LAB_DIR/tun"
	_lab_locked _lab_host_settle
	[ "$(stat -c %a "$LAB_TUN_DEV")" = 600 ] && [ ! -e "$LAB_TUN_MODE_FILE" ] ||
		fail "the last hold let go: mode $(stat -c %a "$LAB_TUN_DEV"), $(ls "$dir")"
	(
		lab_up >/dev/null 2>&1 && lab_tun_open && echo held >"$dir/held"
		exec sleep 600
	) </dev/null >/dev/null 2>&1 &
	p=$!
	wait_for_file "$dir/held" || { kill -KILL "$p"; fail "the third lab did not come up"; }
	[ "$(stat -c %a "$LAB_TUN_DEV")" = 666 ] || { kill -KILL "$p"; fail "the third lab did not open it"; }
	_lab_locked kill_then_sweep "$p"
	[ "$(stat -c %a "$LAB_TUN_DEV")" = 600 ] && [ ! -e "$LAB_TUN_MODE_FILE" ] ||
		fail "the sweep of a killed holder: mode $(stat -c %a "$LAB_TUN_DEV"); lab_sweep said: $out"
	rm -rf "$dir"
	return 0
}
check "/dev/net/tun's mode: held open while any lab that asked is up, put back by the last (or the sweep)" t_tun_shared

# --- lab_down ----------------------------------------------------------------------

# Processes and mounts that still refer to the lab's network namespaces.
ns_refs() {
	"$LAB_PYTHON" - "$@" <<-'EOF'
		import os, sys
		want = {"net:[%s]" % i for i in sys.argv[1:]}
		seen_mnt = set()
		for pid in filter(str.isdigit, os.listdir("/proc")):
		    d = "/proc/" + pid
		    try:
		        if os.readlink(d + "/ns/net") in want:
		            print("pid %s is in it" % pid)
		        for fd in os.listdir(d + "/fd"):
		            try:
		                if os.readlink("%s/fd/%s" % (d, fd)) in want:
		                    print("pid %s holds fd %s" % (pid, fd))
		            except OSError:
		                pass
		        mnt = os.readlink(d + "/ns/mnt")
		        if mnt not in seen_mnt:
		            seen_mnt.add(mnt)
		            with open(d + "/mountinfo") as f:
		                for line in f:
		                    if line.split()[3] in want:
		                        print("mounted in %s (pid %s): %s" % (mnt, pid, line.split()[4]))
		    except OSError:
		        pass
	EOF
}

# A process the lab did not start, left in LH (as a failed cordon case would).
ip netns exec "$LAB_LH" sleep 600 </dev/null >/dev/null 2>&1 &
stray=$!
for ((i = 0; i < 100; i++)); do
	ip netns pids "$LAB_LH" | grep -qx "$stray" && break
	sleep 0.05
done
errfile=$(mktemp /tmp/cordon-lab-selftest.XXXXXX)
lab_down 2>"$errfile"
down_rc=$?
down_err=$(cat "$errfile")
rm -f "$errfile"

t_down() {
	local left
	[ "$down_rc" -eq 0 ] || fail "lab_down: status $down_rc: $down_err"
	left=$(ip netns list | grep -e "$LAB1_LH" -e "$LAB1_WORLD")
	[ -z "$left" ] || fail "netns left: $left"
	left=$(pgrep -af -- "$LAB1_DIR")
	[ -z "$left" ] || fail "processes left: $left"
	left=$(ns_refs "${LAB1_INODES[@]}")
	[ -z "$left" ] || fail "the lab's namespaces are still referenced: $left"
	[ ! -e "$LAB1_DIR" ] || fail "$LAB1_DIR left"
	[ ! -e "/etc/netns/$LAB1_LH" ] && [ ! -e "/etc/netns/$LAB1_WORLD" ] || fail "/etc/netns entries left"
	[ "$(ip -o link show | wc -l)" -eq 1 ] || fail "links in the test's namespace: $(ip -o link show)"
	return 0
}
check "lab_down leaves no netns, process, namespace reference, link or file" t_down

t_stray() {
	kill -0 "$stray" 2>/dev/null && fail "the stray process $stray in LH survived"
	case $down_err in *"$stray"*) ;; *) fail "lab_down did not name the stray process: $down_err" ;; esac
	return 0
}
check "lab_down kills, and names, a process it did not start left in LH" t_stray
kill -KILL "$stray" 2>/dev/null
wait "$stray" 2>/dev/null

check "lab_down again does nothing and succeeds" lab_down

elapsed=$((SECONDS - started))
if [ $elapsed -le 30 ]; then ok "the self-test took $elapsed s (<= 30)"; else not_ok "the self-test took $elapsed s (> 30)"; fi

_done=1
printf '1..%d\n' "$_n"
diag "$_failed failed, of $_n"
exit 0
