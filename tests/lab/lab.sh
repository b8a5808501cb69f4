# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # LAB_* variables are for the scripts that source this
#
# tests/lab/lab.sh — a private network lab for the tests that use the network.
#
# THE RULE: a test that sends packets does it only here. The test script
# first moves itself into a network namespace of its own (lab_isolate: its
# "host" has only lo, nothing it does can reach a real network), then
# lab_up builds, from there, two named network namespaces:
#
#   LH    "lab host": where the cordon under test runs
#         (ip netns exec "$LAB_LH" cordon run ..., or lab_exec cordon run ...)
#         world0 198.18.0.1/24, 2001:2::1/64, default routes via WORLD,
#         forwarding on; an HTTP listener on *:8080 that answers
#         "lab-host-loopback" on 127.0.0.1/::1 and "lab-host ADDR" elsewhere.
#   WORLD plays the internet: lh0 198.18.0.2/24, 2001:2::2/64; the service
#         addresses below on its lo; dnsmasq (the upstream resolver) on
#         198.18.1.53 and [2001:2:0:1::53]; one HTTP server on port 80 of
#         every address, answering with the name of the address it was
#         reached on; no route anywhere else (unreachable default), no
#         route back to anything but 198.18.0.0/24 and 2001:2::/64, so
#         traffic from LH reaches it only masqueraded (or from LH itself).
#
#   LH world0 <---- veth ----> lh0 WORLD
#
# All links live inside LH and WORLD, so they die with them. Names carry a
# per-run id (two labs coexist, in one machine or one test script's
# subshells). "ip netns exec LH" also bind-mounts a resolv.conf naming
# WORLD's resolver over /etc/resolv.conf (from /etc/netns/LH/), so nothing in
# the lab, cordon's default upstream included, ever sees the machine's.
#
# Labs of several scripts may run at once on one machine. Each has its
# namespaces, named by its id, and its directory /tmp/cordon-lab.ID, which
# holds its owner ("PID STARTTIME"): lab_sweep takes down only a lab whose
# owner is gone. What they share on the host, changed only under LAB_LOCK
# (flock):
#
#   /etc/netns    made by the lab that found none, which marks it
#                 (LAB_ETC_NETNS_MARK); removed by the last lab down once
#                 nothing but that mark is left in it
#   /dev/net/tun  made 0666 by lab_tun_open, for pasta (the rootless
#                 cases), its mode kept in LAB_TUN_MODE_FILE; every lab
#                 that asked holds it open ($LAB_DIR/tun) while it is up,
#                 and the last one down (or the sweep of a dead one) puts
#                 the mode back; a machine where it is 0666 already (as
#                 Debian makes it) is left alone
#
# Addresses: 198.18.0.0/15 (RFC 2544, benchmarking) and 2001:2::/48 (RFC
# 5180, benchmarking). cordon's vetting table refuses 198.18.0.0/15, so a
# cordon built with -DCORDON_TEST_LAB must be told the lab's range is
# public: CORDON_LAB_PUBLIC_CIDR=$LAB_PUBLIC_CIDR (lab_exec sets it). The
# table does not list 2001:2::/48: it needs no override (and the variable
# takes only one range).
#
#   name (DNS, in WORLD's dnsmasq)      address(es)                    HTTP answer
#   allowed.test                        198.18.1.10  2001:2:0:1::10    server1
#   denied.test                         198.18.1.20  2001:2:0:1::20    server2
#   cdn.allowed.test CNAME edge.cdnnet.test:
#     edge.cdnnet.test                  198.18.1.30  2001:2:0:1::30    server3
#   a.wild.test                         198.18.1.40  2001:2:0:1::40    wild-a
#   b.c.wild.test                       198.18.1.50  2001:2:0:1::50    wild-bc
#   wild.test                           198.18.1.60  2001:2:0:1::60    wild-apex
#   ttl1.allowed.test (TTL 1)           198.18.1.70  2001:2:0:1::70    ttl1
#   v6only.allowed.test (AAAA only)                  2001:2:0:1::80    v6only
#   multi.allowed.test (40 A records)   198.18.2.1 .. 198.18.2.40      multi-1 .. multi-40
#   rebind.allowed.test                 169.254.169.254, 127.0.0.1     (metadata)
#   embedded.allowed.test (AAAA only)   IPv6 forms of 169.254.169.254: (metadata)
#                                       ::ffff:0:a9fe:a9fe (translated),
#                                       64:ff9b:1::a9fe:a9fe and
#                                       64:ff9b:1:ab::a9fe:a9fe (local-use NAT64),
#                                       2001:0:4136:e378:8000:63bf:5601:5601
#                                       (Teredo client), fec0::a9fe:a9fe (site-local)
#   hostmapped.allowed.test (AAAA)      ::ffff:198.18.0.1, LH's address mapped
#   (no name)                           169.254.169.254                metadata
#                                       169.254.170.2                  metadata-ecs
#                                       100.100.100.200                metadata-alibaba
#                                       168.63.129.16                  metadata-azure
#                                       fd00:ec2::254                  metadata-v6
#                                       198.18.0.2   2001:2::2         world
#   any other WORLD address                                            "world ADDR"
#   any other name under .test: NXDOMAIN; outside .test: REFUSED (never forwarded)
#   every other record has TTL $LAB_TTL (300): dnsmasq's default for local
#   data is 0, which would hide TTL handling.
#
# GET /peer on any server answers the client address it saw (masquerade checks).
#
# Use (a tests/e2e/net-*.sh script; lab.sh first, before lib.sh, because
# lab_isolate re-executes the script):
#
#   . "$(dirname "$0")/../lab/lab.sh"
#   lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
#   . "$(dirname "$0")/lib.sh"
#   lab_up || exit 99            # also chains lab_down into the EXIT trap
#   lab_exec "$CORDON" run --net-allow allowed.test "$CORDON_ROOTFS" -- \
#       sh -c 'printf "GET / HTTP/1.0\r\n\r\n" | nc -w 2 allowed.test 80'
#   [ "$(lab_dns_queries denied.test)" -eq 0 ] || echo "denied.test reached upstream"
#   [ "$(lab_http_hits server2)" -eq 0 ] || echo "something reached server2"
#
# Functions:
#   lab_isolate "$@"     re-exec the calling script in a new network namespace
#                        (no-op once there); returns 1 when not root
#   lab_up               build the lab; sets LAB_ID LAB_DIR LAB_LH LAB_WORLD
#   lab_down             kill, delete, remove; idempotent; safe in any trap
#   lab_sweep            take down labs whose owner died unannounced (lab_up runs it)
#   lab_tun_open         /dev/net/tun usable by every user while this lab is up
#                        (pasta, rootless); LAB_TUN_RELAXED: the mode it found,
#                        when this call changed it
#   lab_exec CMD...      CMD in LH   (with CORDON_LAB_PUBLIC_CIDR set)
#   lab_world_exec CMD...  CMD in WORLD
#   lab_dns_queries NAME [TYPE]   queries WORLD's dnsmasq got for NAME (A, AAAA, ...)
#   lab_http_hits NAME   requests the server NAME (server1, metadata, ...) answered
#   lab_http_get [-n NETNS] URL   body of a GET from LH (or NETNS); 3 s timeout
#   lab_dig ARGS...      dig in LH against WORLD's resolver (bind9-dnsutils)
#   lab_capture_start NAME NETNS [MARKER...]   log every IP packet NETNS
#                        sees, on every link, in and out (lab-capture.py),
#                        each with the MARKERs it carries (and the UDP
#                        payload of one that carries any), to $LAB_DIR/NAME.cap
#   lab_capture_sync NAME NETNS   return once NAME has logged everything
#                        NETNS saw before: a datagram on NETNS's lo, waited for
#   lab_capture_stop NAME
#
# Needs: iproute2, dnsmasq-base, python3, util-linux (unshare, flock); root.

LAB_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# skip_all_or_fail, ci_strict: a missing precondition fails under CI.
# shellcheck source=tests/e2e/skip.sh
. "$LAB_HOME/../e2e/skip.sh"
# Debian's python3, as lib.sh picks it (not whatever PATH finds first).
LAB_PYTHON=/usr/bin/python3
[ -x "$LAB_PYTHON" ] || LAB_PYTHON=python3

LAB_PUBLIC_CIDR=198.18.0.0/15
LAB_NET6=2001:2::/48
LAB_LH4=198.18.0.1
LAB_WORLD4=198.18.0.2
LAB_LH6=2001:2::1
LAB_WORLD6=2001:2::2
LAB_DNS4=198.18.1.53
LAB_DNS6=2001:2:0:1::53
LAB_TTL=300
LAB_LH_PORT=8080
# Link names inside the lab's namespaces (each names where it leads).
LAB_LH_IF=world0
LAB_WORLD_IF=lh0

# Service name -> IPv4 / IPv6 address on WORLD (the table above).
declare -gA LAB_IP4=(
	[server1]=198.18.1.10 [server2]=198.18.1.20 [server3]=198.18.1.30
	[wild-a]=198.18.1.40 [wild-bc]=198.18.1.50 [wild-apex]=198.18.1.60
	[ttl1]=198.18.1.70
	[metadata]=169.254.169.254 [metadata-ecs]=169.254.170.2
	[metadata-alibaba]=100.100.100.200 [metadata-azure]=168.63.129.16
	[world]=198.18.0.2
)
declare -gA LAB_IP6=(
	[server1]=2001:2:0:1::10 [server2]=2001:2:0:1::20 [server3]=2001:2:0:1::30
	[wild-a]=2001:2:0:1::40 [wild-bc]=2001:2:0:1::50 [wild-apex]=2001:2:0:1::60
	[ttl1]=2001:2:0:1::70 [v6only]=2001:2:0:1::80
	[metadata-v6]=fd00:ec2::254
	[world]=2001:2::2
)
# IPv6 forms of 169.254.169.254 in the ranges cordon's vetting refuses
# whole or by the embedded address (embedded.allowed.test's AAAA records).
LAB_EMBEDDED_METADATA="::ffff:0:a9fe:a9fe 64:ff9b:1::a9fe:a9fe 64:ff9b:1:ab::a9fe:a9fe 2001:0:4136:e378:8000:63bf:5601:5601 fec0::a9fe:a9fe"
LAB_MULTI_N=40
for _lab_i in $(seq 1 "$LAB_MULTI_N"); do LAB_IP4[multi-$_lab_i]=198.18.2.$_lab_i; done
unset _lab_i

# Host state the labs share (above). The selftest points the last two
# at a file of its own.
LAB_LOCK=/run/cordon-lab.lock
LAB_ETC_NETNS_MARK=/etc/netns/.cordon-lab
LAB_TUN_DEV=/dev/net/tun
LAB_TUN_MODE_FILE=/run/cordon-lab.tun-mode

LAB_ID='' LAB_DIR='' LAB_LH='' LAB_WORLD=''
LAB_PIDS=()
LAB_NS_INODES=()
LAB_TUN_RELAXED=
_lab_owner=
_lab_lock_fd=

_lab_err() { printf 'lab: %s\n' "$*" >&2; }

# --- the test's own network namespace -------------------------------------

# True when this shell is in the namespace lab_isolate made for it: only lo.
_lab_isolated() {
	local me links
	me=$(readlink "/proc/$BASHPID/ns/net") || return 1
	[ -n "${LAB_PRIVATE_NETNS:-}" ] && [ "$me" = "$LAB_PRIVATE_NETNS" ] || return 1
	links=$(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | tr '\n' ' ')
	[ "$links" = "lo " ]
}

lab_isolate() {
	local me
	[ "$EUID" -eq 0 ] || return 1
	me=$(readlink "/proc/$BASHPID/ns/net") || return 1
	if [ -n "${LAB_PARENT_NETNS:-}" ] && [ -z "${LAB_PRIVATE_NETNS:-}" ]; then
		# Just re-executed by the branch below.
		if [ "$me" = "$LAB_PARENT_NETNS" ]; then
			_lab_err "unshare --net left the script in its parent's network namespace"
			exit 99
		fi
		export LAB_PRIVATE_NETNS=$me
		unset LAB_PARENT_NETNS
		ip link set lo up || exit 99
		_lab_isolated || { _lab_err "the private network namespace has more than lo"; exit 99; }
		return 0
	fi
	_lab_isolated && return 0
	# shellcheck disable=SC2093 # exec on purpose; reached only if it fails
	LAB_PARENT_NETNS=$me exec unshare --net -- "$BASH" "$0" "$@"
	_lab_err "could not re-execute $0 with unshare --net"
	exit 99
}

# --- bring up ---------------------------------------------------------------

# The start time of process $1 (clock ticks since boot), empty if it is gone.
_lab_starttime() {
	local stat fields
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	read -r -a fields <<<"${stat##*) }"
	echo "${fields[19]}"
}

# _lab_locked CMD...: CMD under LAB_LOCK, waited for 60 s at most; a call
# from under it runs CMD at once (flock does not nest: a second open file
# of the same process would wait for the first). Nothing started under
# it may outlive CMD: it would hold the lock's fd.
_lab_locked() {
	local fd rc
	[ -z "$_lab_lock_fd" ] || { "$@"; return; }
	exec {fd}>>"$LAB_LOCK" || { _lab_err "cannot open $LAB_LOCK"; return 1; }
	if ! flock -w 60 "$fd"; then
		exec {fd}>&-
		_lab_err "$LAB_LOCK: another lab held it for 60 s"
		return 1
	fi
	_lab_lock_fd=$fd
	"$@"
	rc=$?
	_lab_lock_fd=
	exec {fd}>&-
	return "$rc"
}

# Is the owner of the lab in directory $1 alive (pid and start time, so
# that a recycled pid is not taken for it)? A lab without an owner file
# yet (just made), or one that cannot be read, counts as alive: nothing
# is taken down on a guess.
_lab_owner_alive() {
	local pid start
	[ -f "$1/owner" ] || return 0
	read -r pid start <"$1/owner" || return 0
	[ -n "$pid" ] && [ "$(_lab_starttime "$pid")" = "$start" ]
}

# Labs whose owner died without lab_down (SIGKILL, e.g. a harness timeout):
# take them down, and let go of what they held of the host. A live
# owner's lab is never touched.
lab_sweep() { _lab_locked _lab_sweep_dead; }
_lab_sweep_dead() {
	local d pid
	for d in /tmp/cordon-lab.*; do
		[ -f "$d/owner" ] || continue
		_lab_owner_alive "$d" && continue
		read -r pid _ <"$d/owner"
		_lab_err "taking down the lab ${d##*.} that its owner (pid ${pid:-?}) left behind"
		_lab_sweep_one "$d"
	done
	_lab_host_settle
}

# lab_down on the lab in directory $1, leaving this shell's lab alone.
_lab_sweep_one() {
	local LAB_DIR=$1 LAB_ID=${1##*.}
	local LAB_LH=clab-$LAB_ID-lh LAB_WORLD=clab-$LAB_ID-world LAB_PIDS=()
	lab_down
}

# --- host state the labs share (under LAB_LOCK) ------------------------------------

# /etc/netns/LH and /etc/netns/WORLD; /etc/netns itself, marked, if there
# was none.
_lab_etc_netns_make() {
	if [ ! -d /etc/netns ]; then
		mkdir -m 755 /etc/netns && : >"$LAB_ETC_NETNS_MARK" || return 1
	fi
	mkdir -p "/etc/netns/$LAB_LH" "/etc/netns/$LAB_WORLD"
}

# lab_tun_open: see the top. As root (chmod); a no-op once this lab holds
# it. The hold names the device: the last one down restores that one.
lab_tun_open() {
	LAB_TUN_RELAXED=
	[ "$EUID" -eq 0 ] && [ -e "$LAB_TUN_DEV" ] || return 0
	[ -n "$LAB_DIR" ] || { _lab_err "lab_tun_open: no lab is up"; return 1; }
	[ -e "$LAB_DIR/tun" ] && return 0
	_lab_locked _lab_tun_take
}
_lab_tun_take() {
	local m
	m=$(stat -c %a "$LAB_TUN_DEV") || return 1
	# The mode to put back: kept by the first lab that changed it.
	if [ ! -f "$LAB_TUN_MODE_FILE" ] && [ "$m" != 666 ]; then
		echo "$m" >"$LAB_TUN_MODE_FILE" || return 1
	fi
	if [ "$m" != 666 ]; then
		chmod 0666 "$LAB_TUN_DEV" || return 1
		LAB_TUN_RELAXED=$m
	fi
	echo "$LAB_TUN_DEV" >"$LAB_DIR/tun"
}

# What no live lab uses any more goes back: /dev/net/tun's mode, once no
# live lab holds it open; /etc/netns, once only a lab's mark is in it.
_lab_host_settle() {
	local d m
	if [ -f "$LAB_TUN_MODE_FILE" ]; then
		for d in /tmp/cordon-lab.*; do
			[ "$(cat "$d/tun" 2>/dev/null)" = "$LAB_TUN_DEV" ] && _lab_owner_alive "$d" && break
			d=
		done
		if [ -z "$d" ]; then
			m=$(cat "$LAB_TUN_MODE_FILE")
			case $m in
			[0-7][0-7][0-7] | [0-7][0-7][0-7][0-7]) chmod "$m" "$LAB_TUN_DEV" ;;
			*) _lab_err "$LAB_TUN_MODE_FILE: not a mode: '$m' ($LAB_TUN_DEV left as it is)" ;;
			esac
			rm -f "$LAB_TUN_MODE_FILE"
		fi
	fi
	if [ -e "$LAB_ETC_NETNS_MARK" ] && [ "$(ls -A /etc/netns)" = "${LAB_ETC_NETNS_MARK##*/}" ]; then
		rm -f "$LAB_ETC_NETNS_MARK" && rmdir /etc/netns
	fi
	return 0
}

# _lab_bg NETNS NAME CMD...: start CMD in NETNS in the background, tracked.
_lab_bg() {
	local ns=$1 name=$2
	shift 2
	ip netns exec "$ns" "$@" </dev/null >"$LAB_DIR/$name.out" 2>&1 &
	LAB_PIDS+=($!)
}

# _lab_wait_file FILE PID WHAT: wait (bounded, 10 s) for FILE while PID lives.
_lab_wait_file() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -s "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	_lab_err "$3 did not start: $(tail -n 5 "$LAB_DIR/$3.out" 2>/dev/null | tr '\n' ' ')"
	return 1
}

_lab_write_dns_conf() {
	local f=$LAB_DIR/dnsmasq.conf i
	{
		echo "# cordon network lab $LAB_ID: the world's resolver, local data only"
		echo "local-ttl=$LAB_TTL"
		# Every name under .test that is not listed: NXDOMAIN, never forwarded.
		echo "local=/test/"
		echo "host-record=allowed.test,${LAB_IP4[server1]},${LAB_IP6[server1]}"
		echo "host-record=denied.test,${LAB_IP4[server2]},${LAB_IP6[server2]}"
		echo "host-record=edge.cdnnet.test,${LAB_IP4[server3]},${LAB_IP6[server3]}"
		echo "cname=cdn.allowed.test,edge.cdnnet.test"
		echo "host-record=rebind.allowed.test,169.254.169.254"
		echo "host-record=rebind.allowed.test,127.0.0.1"
		echo "host-record=ttl1.allowed.test,${LAB_IP4[ttl1]},${LAB_IP6[ttl1]},1"
		echo "host-record=a.wild.test,${LAB_IP4[wild-a]},${LAB_IP6[wild-a]}"
		echo "host-record=b.c.wild.test,${LAB_IP4[wild-bc]},${LAB_IP6[wild-bc]}"
		echo "host-record=wild.test,${LAB_IP4[wild-apex]},${LAB_IP6[wild-apex]}"
		echo "host-record=v6only.allowed.test,${LAB_IP6[v6only]}"
		for i in $LAB_EMBEDDED_METADATA; do echo "host-record=embedded.allowed.test,$i"; done
		echo "host-record=hostmapped.allowed.test,::ffff:$LAB_LH4"
		for ((i = 1; i <= LAB_MULTI_N; i++)); do
			echo "host-record=multi.allowed.test,${LAB_IP4[multi-$i]}"
		done
	} >"$f"
}

_lab_write_http_map() {
	local name
	{
		for name in "${!LAB_IP4[@]}"; do echo "${LAB_IP4[$name]} $name"; done
		for name in "${!LAB_IP6[@]}"; do echo "${LAB_IP6[$name]} $name"; done
	} >"$LAB_DIR/world-http.map"
	printf '127.0.0.1 lab-host-loopback\n::1 lab-host-loopback\n' >"$LAB_DIR/lh-http.map"
}

# (/etc/netns/NS made under the lock by _lab_etc_netns_make.)
_lab_resolv_conf() {
	local ns=$1
	printf '# cordon network lab %s\nnameserver %s\nnameserver %s\n' \
		"$LAB_ID" "$LAB_DNS4" "$LAB_DNS6" >"/etc/netns/$ns/resolv.conf" || return 1
	chmod 644 "/etc/netns/$ns/resolv.conf"
}

# Chain lab_down in front of whatever EXIT trap is set (lib.sh's _on_exit),
# keeping the exit status it sees.
# shellcheck disable=SC2120,SC2154 # "$3" is trap -p's word; _lab_rc is set by the trap
_lab_trap() {
	local prev
	# A subshell starts with no traps, whatever trap -p shows of its parent's.
	if [ "$BASHPID" != "$$" ]; then
		trap '_lab_rc=$?; lab_down; exit $_lab_rc' EXIT
		return 0
	fi
	prev=$(trap -p EXIT)
	case $prev in *lab_down*) return 0 ;; esac
	if [ -n "$prev" ]; then
		eval "set -- $prev"
		# shellcheck disable=SC2064 # expanded now on purpose
		trap "_lab_rc=\$?; lab_down; (exit \$_lab_rc); $3" EXIT
	else
		trap '_lab_rc=$?; lab_down; exit $_lab_rc' EXIT
	fi
}

lab_up() {
	local t0=${EPOCHREALTIME/[.,]/} tool i
	if [ -n "$LAB_DIR" ] && [ "$_lab_owner" = "$BASHPID" ]; then
		_lab_err "a lab is already up in this shell ($LAB_ID)"
		return 1
	fi
	# A subshell inherits its parent's lab in its variables: it builds one
	# of its own (and its lab_down then takes down only that one).
	LAB_DIR='' LAB_PIDS=() LAB_NS_INODES=() _lab_owner=$BASHPID
	if ! _lab_isolated; then
		_lab_err "refusing to build the lab outside a private network namespace (call lab_isolate first)"
		return 1
	fi
	for tool in ip dnsmasq flock "$LAB_PYTHON"; do
		command -v "$tool" >/dev/null 2>&1 || { _lab_err "$tool not found (contrib/deps.sh --test)"; return 1; }
	done
	lab_sweep
	LAB_DIR=$(mktemp -d /tmp/cordon-lab.XXXXXX) || return 1
	chmod 755 "$LAB_DIR"
	# (BASHPID read here: inside $(...) it would be the substitution's own.)
	# Renamed into place: a sweep never reads it half written.
	i=$BASHPID
	echo "$i $(_lab_starttime "$i")" >"$LAB_DIR/owner.new" && mv "$LAB_DIR/owner.new" "$LAB_DIR/owner" ||
		{ rm -rf "$LAB_DIR"; LAB_DIR=''; return 1; }
	LAB_ID=${LAB_DIR##*.}
	LAB_LH=clab-$LAB_ID-lh
	LAB_WORLD=clab-$LAB_ID-world
	_lab_trap ""

	if ip netns list | grep -qE "^($LAB_LH|$LAB_WORLD)( |\$)"; then
		_lab_err "netns $LAB_LH or $LAB_WORLD already exists"
		return 1
	fi
	if ! ip netns add "$LAB_LH" || ! ip netns add "$LAB_WORLD"; then
		lab_down
		return 1
	fi
	LAB_NS_INODES=("$(stat -L -c %i "/run/netns/$LAB_LH")" "$(stat -L -c %i "/run/netns/$LAB_WORLD")")
	if ! _lab_locked _lab_etc_netns_make || ! _lab_resolv_conf "$LAB_LH" ||
		! _lab_resolv_conf "$LAB_WORLD"; then
		lab_down
		return 1
	fi

	# No DAD: addresses usable at once; then the wiring, one batch per side.
	for i in "$LAB_LH" "$LAB_WORLD"; do
		ip netns exec "$i" sysctl -q -w net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
			>/dev/null || { lab_down; return 1; }
	done
	# Forwarding in WORLD too: only so that it answers "unreachable" (ICMP) at
	# once for an address it does not have, instead of a silent drop.
	for i in "$LAB_LH" "$LAB_WORLD"; do
		ip netns exec "$i" sysctl -q -w net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
			>/dev/null || { lab_down; return 1; }
	done
	ip -n "$LAB_LH" link add "$LAB_LH_IF" type veth peer name "$LAB_WORLD_IF" netns "$LAB_WORLD" ||
		{ lab_down; return 1; }
	ip -n "$LAB_LH" -batch - <<-EOF || { lab_down; return 1; }
		link set lo up
		link set $LAB_LH_IF up
		address add $LAB_LH4/24 dev $LAB_LH_IF
		address add $LAB_LH6/64 dev $LAB_LH_IF nodad
		route add default via $LAB_WORLD4
		route add default via $LAB_WORLD6
	EOF
	{
		echo "link set lo up"
		echo "link set $LAB_WORLD_IF up"
		echo "address add $LAB_WORLD4/24 dev $LAB_WORLD_IF"
		echo "address add $LAB_WORLD6/64 dev $LAB_WORLD_IF nodad"
		echo "address add $LAB_DNS4/32 dev lo"
		echo "address add $LAB_DNS6/128 dev lo nodad"
		for i in "${!LAB_IP4[@]}"; do
			[ "$i" = world ] || echo "address add ${LAB_IP4[$i]}/32 dev lo"
		done
		for i in "${!LAB_IP6[@]}"; do
			[ "$i" = world ] || echo "address add ${LAB_IP6[$i]}/128 dev lo nodad"
		done
		# The world ends here: anything else is unreachable, at once.
		echo "route add unreachable default"
		echo "route add unreachable ::/0"
	} | ip -n "$LAB_WORLD" -batch - || { lab_down; return 1; }

	# The resolver: only the lab's config (-C), no resolv.conf, no hosts file.
	_lab_write_dns_conf
	: >"$LAB_DIR/dns.log"
	_lab_bg "$LAB_WORLD" dnsmasq dnsmasq -k -C "$LAB_DIR/dnsmasq.conf" \
		--no-resolv --no-hosts --no-poll --bind-interfaces \
		--listen-address="$LAB_DNS4" --listen-address="$LAB_DNS6" --port=53 \
		--log-queries --log-facility="$LAB_DIR/dns.log" --pid-file="$LAB_DIR/dnsmasq.pid" \
		--user=root --group=root

	_lab_write_http_map
	_lab_bg "$LAB_WORLD" world-http "$LAB_PYTHON" "$LAB_HOME/lab-httpd.py" --port 80 \
		--map "$LAB_DIR/world-http.map" --default world \
		--log "$LAB_DIR/world-http.log" --ready "$LAB_DIR/world-http.ready"
	_lab_bg "$LAB_LH" lh-http "$LAB_PYTHON" "$LAB_HOME/lab-httpd.py" --port "$LAB_LH_PORT" \
		--map "$LAB_DIR/lh-http.map" --default lab-host \
		--log "$LAB_DIR/lh-http.log" --ready "$LAB_DIR/lh-http.ready"

	if ! _lab_wait_file "$LAB_DIR/dnsmasq.pid" "${LAB_PIDS[0]}" dnsmasq ||
		! _lab_wait_file "$LAB_DIR/world-http.ready" "${LAB_PIDS[1]}" world-http ||
		! _lab_wait_file "$LAB_DIR/lh-http.ready" "${LAB_PIDS[2]}" lh-http; then
		lab_down
		return 1
	fi
	# The pid file is written before the sockets are bound: wait for both.
	for ((i = 0; i < 100; i++)); do
		[ "$(ip netns exec "$LAB_WORLD" ss -Hlnu "sport = :53" | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	[ "$i" -lt 100 ] || { _lab_err "dnsmasq is not listening on port 53"; lab_down; return 1; }
	# How long it took, "1.234" (s).
	t0=$(( ${EPOCHREALTIME/[.,]/} - t0 ))
	printf -v LAB_UP_SECONDS '%d.%03d' $((t0 / 1000000)) $((t0 / 1000 % 1000))
	return 0
}

# --- tear down ----------------------------------------------------------------

# Pids of every process in the lab's namespaces (cordon's included).
_lab_ns_pids() {
	local ns
	for ns in "$LAB_LH" "$LAB_WORLD"; do
		[ -e "/run/netns/$ns" ] && ip netns pids "$ns" 2>/dev/null
	done
}

lab_down() {
	local pid i alive strays=
	[ -n "${LAB_DIR:-}" ] || return 0
	for pid in "${LAB_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for ((i = 0; i < 40; i++)); do
		alive=
		for pid in "${LAB_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.05
	done
	for pid in "${LAB_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	# Anything else still in the lab goes too, or the namespaces would
	# outlive their names: children of the lab's own servers (dnsmasq forks
	# one per TCP query) quietly, anything else (a sandbox a failed case
	# left behind) with a word on stderr.
	for ((i = 0; i < 60; i++)); do
		alive=$(_lab_ns_pids)
		[ -z "$alive" ] && break
		for pid in $alive; do
			if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$LAB_DIR/"; then
				case " $strays " in *" $pid "*) ;; *) strays+=" $pid" ;; esac
			fi
			kill -KILL "$pid" 2>/dev/null
		done
		sleep 0.05
	done
	[ -n "$strays" ] && _lab_err "killed processes left in the lab's namespaces:$strays"
	[ -n "$alive" ] && _lab_err "processes still in the lab's namespaces: ${alive//$'\n'/ }"
	for pid in "${LAB_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for i in "$LAB_LH" "$LAB_WORLD"; do
		[ -n "$i" ] || continue
		[ -e "/run/netns/$i" ] && ip netns delete "$i"
		rm -rf "/etc/netns/$i"
	done
	# This lab's hold on /dev/net/tun goes first: the last one down restores it.
	rm -f "$LAB_DIR/tun"
	_lab_locked _lab_host_settle
	rm -rf --one-file-system "$LAB_DIR"
	LAB_DIR='' LAB_PIDS=()
	# LAB_ID, LAB_LH, LAB_WORLD and LAB_NS_INODES stay, for leftover checks.
	return 0
}

# --- running things -------------------------------------------------------------

lab_exec() { ip netns exec "$LAB_LH" env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR" "$@"; }
lab_world_exec() { ip netns exec "$LAB_WORLD" "$@"; }

lab_dig() { ip netns exec "$LAB_LH" dig @"$LAB_DNS4" +time=2 +tries=1 "$@"; }

# lab_http_get [-n NETNS] URL: the body (no proxy, ever; 3 s timeout).
lab_http_get() {
	local ns=$LAB_LH
	if [ "$1" = -n ]; then
		ns=$2
		shift 2
	fi
	ip netns exec "$ns" "$LAB_PYTHON" -c '
import sys, urllib.request
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    sys.stdout.write(o.open(sys.argv[1], timeout=3).read().decode())
except Exception as e:
    sys.stderr.write("lab_http_get: %s: %s\n" % (sys.argv[1], e))
    sys.exit(1)' "$1"
}

# lab_dns_queries NAME [TYPE]: how many queries WORLD's resolver got for NAME
# (any type, or TYPE: A, AAAA, ...), case-insensitive, UDP and TCP alike.
lab_dns_queries() {
	awk -v n="$1" -v t="${2:-}" '
		BEGIN { n = tolower(n); sub(/\.$/, "", n) }
		{
			for (i = 1; i < NF; i++)
				if ($i ~ /^query\[/ && tolower($(i + 1)) == n &&
				    (t == "" || $i == "query[" t "]")) { c++; break }
		}
		END { print c + 0 }' "$LAB_DIR/dns.log"
}

# --- packet captures ----------------------------------------------------------

# lab_capture_start NAME NETNS [MARKER...]
lab_capture_start() {
	local name=$1 ns=$2 m args=()
	shift 2
	for m in "$@"; do args+=(--marker "$m"); done
	rm -f "$LAB_DIR/$name.cap" "$LAB_DIR/$name.ready"
	_lab_bg "$ns" "$name" "$LAB_PYTHON" "$LAB_HOME/lab-capture.py" \
		--log "$LAB_DIR/$name.cap" --ready "$LAB_DIR/$name.ready" "${args[@]}"
	_lab_wait_file "$LAB_DIR/$name.ready" "${LAB_PIDS[-1]}" "$name"
}

# lab_capture_sync NAME NETNS: a datagram to 127.0.0.1 on a port of its
# own, then wait (at most 10 s) until NAME has logged it: the capture
# reads its socket in order, so everything NETNS saw before is logged.
lab_capture_sync() {
	local name=$1 ns=$2 port i
	port=$((40000 + RANDOM % 20000))
	ip netns exec "$ns" "$LAB_PYTHON" -c '
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"sync", ("127.0.0.1", int(sys.argv[1])))' "$port" ||
		return 1
	for ((i = 0; i < 200; i++)); do
		grep -q "proto=udp sport=[0-9]* dport=$port " "$LAB_DIR/$name.cap" 2>/dev/null && return 0
		sleep 0.05
	done
	_lab_err "capture $name never logged its sync datagram (port $port)"
	return 1
}

lab_capture_stop() {
	local pid
	pid=$(cat "$LAB_DIR/$1.ready" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null
}

# lab_http_hits NAME: requests answered by the server NAME (LH's listener too).
lab_http_hits() {
	cat "$LAB_DIR/world-http.log" "$LAB_DIR/lh-http.log" 2>/dev/null |
		awk -v n="$1" '$1 == n { c++ } END { print c + 0 }'
}
