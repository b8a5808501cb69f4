# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # variables are for the scripts that source this
#
# Helpers of the allowlisted-egress tests (tests/e2e/net-*.sh): lib.sh's
# cases, run inside tests/lab/lab.sh's private network lab.
#
# A net-*.sh script starts with
#
#   . "$(dirname "$0")/../lab/lab.sh"
#   lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
#   . "$(dirname "$0")/net-lib.sh"
#
# which sources lib.sh with CORDON pointing at the lab build of cordon
# (build/tests/lab/cordon-lab, $CORDON_LAB: the vetting table's test-only
# override, since the lab's "internet" is 198.18.0.0/15), brings the lab
# up (one per script) and redefines lib.sh's _cordon_argv so that crun,
# crun_bg and cordon run cordon in the lab host (LH) namespace, as root or
# as the test user, with CORDON_LAB_PUBLIC_CIDR set. Register cases with
#
#   each_mode "what" net_case t_function
#
# net_case adds, after lib.sh's own leftover checks (mounts, processes,
# state directories), the network ones: no cdr-* link and no address
# added in LH, no process left in LH, no nft table but cordon-nethelper's
# static "inet cordon-host".
#
# Inside a sandbox, /workspace/p.sh (copied into every case's workspace)
# has probes; see PROBES below. `crun_net [OPTIONS] -- SCRIPT` runs
# `sh -c ". /workspace/p.sh; SCRIPT"` with --dns-upstream $LAB_DNS4 (unless
# --dns none) and
# --result-json $CASE_DIR/r.json (JSON: the parsed result, see jnet).
#
# Rootless cases use pasta, which opens /dev/net/tun as the test user:
# before the first, lab_tun_open (lab.sh) makes it 0666 while the lab is
# up; the last lab down (of every script running) puts the mode back.

CORDON=${CORDON_LAB:-build/tests/lab/cordon-lab}
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for _t in jq ip nft; do
	if ! command -v "$_t" >/dev/null 2>&1; then
		echo "Bail out! $_t not found (contrib/deps.sh --test)"
		_done=1
		exit 1
	fi
done
unset _t

if ! lab_up; then
	echo "Bail out! the network lab did not come up"
	_done=1
	exit 1
fi
diag "lab $LAB_ID up in ${LAB_UP_SECONDS}s (LH $LAB_LH)"

# --- /dev/net/tun for pasta ---------------------------------------------------

# Before the first rootless case (lab.sh: held while the lab is up, shared
# with the other labs on this machine).
net_tun_open() {
	lab_tun_open || _fail_raw "could not make /dev/net/tun usable for pasta (lab_tun_open)"
	[ -z "$LAB_TUN_RELAXED" ] ||
		diag "chmod 0666 /dev/net/tun for the rootless (pasta) cases; mode $LAB_TUN_RELAXED put back by the last lab down"
}

# --- running cordon in the lab ----------------------------------------------------

# lib.sh's, in LH: rootful with the override in the environment, rootless
# with it among the test user's (runuser's env -i clears it otherwise).
_cordon_argv() {
	local AUDIT_ENV
	_audit_env
	if [ "$MODE" = rootful ]; then
		_argv=(ip netns exec "$LAB_LH" env --default-signal
			CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR" "${AUDIT_ENV[@]}" "${XENV[@]}"
			"$CORDON" "$@")
	else
		local USER_PREFIX
		_user_prefix
		_argv=(ip netns exec "$LAB_LH" "${USER_PREFIX[@]}"
			CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR" "${AUDIT_ENV[@]}" "${XENV[@]}"
			"$CORDON" "$@")
	fi
}

# The backend this mode gets by default.
backend() { if [ "$MODE" = rootful ]; then echo veth; else echo pasta; fi; }

# crun_net [OPTIONS...] -- SCRIPT: SCRIPT in the sandbox's sh, probes loaded.
crun_net() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	rm -f "$CASE_DIR/r.json"
	# The lab's resolver, unless --dns none (they exclude each other).
	[[ " ${opts[*]} " == *" --dns none "* ]] || opts=(--dns-upstream "$LAB_DNS4" "${opts[@]}")
	crun --result-json "$CASE_DIR/r.json" "${opts[@]}" -- \
		sh -c ". /workspace/p.sh; $1"
	JSON=
	[ -s "$CASE_DIR/r.json" ] && JSON=$(cat "$CASE_DIR/r.json")
	return 0
}

# jnet FILTER: jq FILTER on the last result's .network, compact.
jnet() { printf '%s' "$JSON" | jq -c ".network | $1" 2>/dev/null; }

# expect_json FILTER: the filter (a jq boolean over .network) holds.
expect_json() {
	local v
	v=$(jnet "$1")
	[ "$v" = true ] || fail "${2:-expected the network object of the result to satisfy: $1}
  network: $(jnet .)"
}

# expect_line PATTERN [MSG]: some line of stdout matches the ERE.
expect_line() {
	grep -Eq -- "$1" <<<"$OUT" || fail "${2:-expected a stdout line matching /$1/}"
}

expect_no_line() {
	! grep -Eq -- "$1" <<<"$OUT" || fail "${2:-expected no stdout line matching /$1/}"
}

# --- probes (run inside the sandbox: busybox sh) ------------------------------------
#
#   get HOST [PORT [PATH]]  an HTTP GET; prints "GET HOST:PORT OK NAME" (the
#                           lab server's X-Lab-Server) or "GET HOST:PORT FAIL why"
#   conn HOST PORT          a TCP connect; "CONN HOST:PORT OK|FAIL why"
#   look NAME [SERVER]      nslookup; "LOOK NAME OK addr addr..." or "LOOK NAME FAIL why"
#   tcpdns NAME             an A query over TCP to the gateway's proxy;
#                           "TCPDNS NAME rcode=N an=N addrs=a,b,..."
#   par CMD...; wait        (just "&"): probes run in parallel, one line each
#
# pasta (passt 0.0~git20230309, Debian 12) mishandles a connection the
# client has half-closed (nc does, at the end of its input): the server's
# FIN never arrives and the answer is delivered over and over, as if the
# stream repeated (reproduced with pasta alone, no cordon). So a probe
# stops reading as soon as the first answer is complete and reads only
# that one, instead of waiting for nc to see the end of the stream.

NET_PROBES=$E2E_TMP/p.sh
cat >"$NET_PROBES" <<'PROBES'
# cordon net tests: probes for busybox sh
# _key PROBE ARGS: its files' stem, what an earlier probe left there gone
# (in a session /tmp outlives an exec: a stale answer, read before the
# new probe truncated it, ended its wait at once and was then found empty).
_key() {
	_kk="/tmp/probe-$(echo "$*" | tr -c 'A-Za-z0-9.\n' _)"
	rm -f "$_kk.o" "$_kk.e"
	echo "$_kk"
}
# _waitfor PID CHECK...: until CHECK succeeds (then kill PID) or PID ends.
_waitfor() {
	_p=$1
	shift
	while :; do
		if "$@"; then kill "$_p" 2>/dev/null; break; fi
		kill -0 "$_p" 2>/dev/null || break
		sleep 0.05
	done
	wait "$_p" 2>/dev/null
	return 0
}
_http_done() { [ -n "$(tr -d '\r' <"$1" | sed '1,/^$/d')" ]; }
get() {
	_k=$(_key get "$@")
	printf 'GET /%s HTTP/1.0\r\nHost: %s\r\n\r\n' "${3:-}" "$1" |
		timeout "${T:-5}" nc -w "${W:-2}" "$1" "${2:-80}" >"$_k.o" 2>"$_k.e" &
	_waitfor $! _http_done "$_k.o"
	_v=$(tr -d '\r' <"$_k.o" | sed -n 's/^X-Lab-Server: *//p' | head -n 1)
	if [ -n "$_v" ]; then
		echo "GET $1:${2:-80} OK $_v"
	else
		echo "GET $1:${2:-80} FAIL $(tr '\n' ' ' <"$_k.e")"
	fi
}
conn() {
	_k=$(_key conn "$@")
	if timeout "${T:-5}" nc -w "${W:-2}" "$1" "$2" -e /bin/true >"$_k.o" 2>"$_k.e"; then
		echo "CONN $1:$2 OK"
	else
		echo "CONN $1:$2 FAIL $(tr '\n' ' ' <"$_k.e")"
	fi
}
look() {
	_k=$(_key look "$@")
	timeout "${T:-8}" nslookup "$@" >"$_k.o" 2>&1
	_r=$?
	# The answer's addresses: the lines after "Name:".
	_a=$(sed -n '/^Name:/,$s/^Address[^:]*: *//p' "$_k.o" | tr '\n' ' ')
	if [ "$_r" = 0 ] && [ -n "$_a" ]; then
		echo "LOOK $1 OK $_a"
	else
		echo "LOOK $1 FAIL rc=$_r $(tr '\n' ' ' <"$_k.o")"
	fi
}
_dns_done() {
	_n=$(od -An -tu1 -N2 "$1" | awk '{ print $1 * 256 + $2 }')
	[ -n "$_n" ] && [ "$(wc -c <"$1")" -ge $((_n + 2)) ]
}
tcpdns() {
	_k=$(_key tcpdns "$@")
	_q=
	for _l in $(echo "$1" | tr . ' '); do _q="$_q\\$(printf %03o ${#_l})$_l"; done
	_n=$((${#1} + 2 + 16))
	{
		printf "\\$(printf %03o $((_n / 256)))\\$(printf %03o $((_n % 256)))"
		printf '\022\064\001\000\000\001\000\000\000\000\000\000'
		printf "$_q"
		printf '\000\000\001\000\001'
		sleep "${W:-2}"
	} | timeout "${T:-5}" nc -w "${W:-2}" "${2:-10.254.254.1}" 53 >"$_k.o" 2>"$_k.e" &
	_waitfor $! _dns_done "$_k.o"
	if ! _dns_done "$_k.o"; then
		echo "TCPDNS $1 FAIL $(tr '\n' ' ' <"$_k.e")"
		return
	fi
	od -An -tu1 -v "$_k.o" | tr -s ' \n' '  ' | awk -v name="$1" '{
		# 2 length bytes, then the message: 12 header bytes.
		for (i = 1; i <= NF; i++) b[i - 1] = $i
		rcode = b[5] % 16; an = b[8] * 256 + b[9]
		p = 14
		while (b[p] != 0) p += b[p] + 1
		p += 5
		out = ""
		for (k = 0; k < an; k++) {
			if (b[p] >= 192) p += 2; else { while (b[p] != 0) p += b[p] + 1; p++ }
			type = b[p] * 256 + b[p + 1]; len = b[p + 8] * 256 + b[p + 9]; p += 10
			if (type == 1 && len == 4) out = out (out == "" ? "" : ",") b[p] "." b[p + 1] "." b[p + 2] "." b[p + 3]
			p += len
		}
		printf "TCPDNS %s rcode=%d an=%d addrs=%s\n", name, rcode, an, out
	}'
}
PROBES
chmod 644 "$NET_PROBES"

# --- sec-probe in the sandbox -----------------------------------------------------
#
# What busybox cannot do (a TCP reset, say) sec-probe does
# (tests/security/probe.c, static; meson sets SEC_PROBE, which sanitizer
# builds do not build). NET_PROBE_ROOTFS is a copy of the rootfs with it
# in /bin, made once per script (the built rootfs is never modified), or
# empty when there is no probe: a case that needs it sets
# ROOTFS=$NET_PROBE_ROOTFS, or skips with net_probe_missing's reason.

SEC_PROBE=${SEC_PROBE:-build/tests/security/sec-probe}
case $SEC_PROBE in /*) ;; *) SEC_PROBE=$PWD/$SEC_PROBE ;; esac
NET_PROBE_ROOTFS=
if [ -x "$SEC_PROBE" ]; then
	NET_PROBE_ROOTFS=$E2E_TMP/rootfs-probe
	if ! cp -a "$CORDON_ROOTFS" "$NET_PROBE_ROOTFS" ||
		! install -m 0755 "$SEC_PROBE" "$NET_PROBE_ROOTFS/bin/sec-probe" ||
		! chmod 0755 "$NET_PROBE_ROOTFS"; then
		echo "Bail out! cannot copy $CORDON_ROOTFS with sec-probe to $NET_PROBE_ROOTFS"
		_done=1
		exit 1
	fi
fi
# net_probe_missing: true (and skip_or_fail) when there is no probe.
net_probe_missing() {
	[ -z "$NET_PROBE_ROOTFS" ] || return 1
	skip_or_fail "no sec-probe at $SEC_PROBE (a sanitizer build does not link it statically)"
}

# --- the lab host's state, before and after each case -------------------------------

_lh_addrs() { ip -n "$LAB_LH" -o addr show | awk '{ print $2, $4 }' | sort; }
_lh_links() { ip -n "$LAB_LH" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
_lh_cdr_links() { _lh_links | grep '^cdr-'; }
_lh_tables() { ip netns exec "$LAB_LH" nft list tables 2>/dev/null | grep -vx 'table inet cordon-host' | sort; }
# Processes in LH that are not the lab's own servers.
_lh_strays() {
	local pid args
	for pid in $(ip netns pids "$LAB_LH" 2>/dev/null); do
		args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
		[[ $args == *"$LAB_DIR/"* ]] && continue
		[ -n "$args" ] || continue
		echo "$pid: $args"
	done
}
_lh_clean() {
	[ -z "$(_lh_cdr_links)" ] && [ "$(_lh_addrs)" = "$NET_LH_ADDRS" ] &&
		[ "$(_lh_links)" = "$NET_LH_LINKS" ] && [ -z "$(_lh_strays)" ] &&
		[ "$(_lh_tables)" = "$NET_LH_TABLES" ]
}
NET_LH_ADDRS=$(_lh_addrs)
NET_LH_LINKS=$(_lh_links)
NET_LH_TABLES=$(_lh_tables)

# oci_bundle ANNOTATIONS_JSON SCRIPT: a bundle in $CASE_DIR/b whose process
# is sh -c "PROBES; SCRIPT" (no workspace in OCI mode: the probes travel in
# the command line); BUNDLE.
oci_bundle() {
	local spec_args=(spec -b "$CASE_DIR/b")
	BUNDLE=$CASE_DIR/b
	mk_dir "$BUNDLE"
	[ "$MODE" = rootless ] && spec_args+=(--rootless)
	cordon "${spec_args[@]}"
	expect_rc 0 || return 1
	"$PYTHON" - "$BUNDLE/config.json" "$ROOTFS" "$1" "$(cat "$NET_PROBES"); $2" <<'EOF' || { fail "editing config.json"; return 1; }
import json, sys
path, rootfs, ann, script = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
c = json.load(open(path))
c["root"] = {"path": rootfs, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", script]
c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/sys")]
# The lab's isolation has no pids controller: no limit to ask for.
c.get("linux", {}).pop("resources", None)
c["annotations"] = ann
json.dump(c, open(path, "w"))
EOF
}

# net_case FUNCTION: the case, then the network leftover checks.
net_case() {
	local fn=$1 strays
	declare -F "$fn" >/dev/null || { _fail_raw "no case function $fn"; return; }
	[ "$MODE" = rootless ] && net_tun_open
	cp "$NET_PROBES" "$WS/p.sh"
	chmod 644 "$WS/p.sh"
	JSON=
	"$fn"
	# Links of a dead namespace go in the kernel's own time.
	wait_until "$WAIT_LIMIT" _lh_clean && return 0
	[ -z "$(_lh_cdr_links)" ] ||
		_fail_raw "leftover: cdr-* links in the lab host:" "$(_lh_cdr_links | _indent)"
	[ "$(_lh_links)" = "$NET_LH_LINKS" ] ||
		_fail_raw "leftover: the lab host's links changed:" \
			"$(diff <(echo "$NET_LH_LINKS") <(_lh_links) | grep '^[<>]' | _indent)"
	[ "$(_lh_addrs)" = "$NET_LH_ADDRS" ] ||
		_fail_raw "leftover: the lab host's addresses changed:" \
			"$(diff <(echo "$NET_LH_ADDRS") <(_lh_addrs) | grep '^[<>]' | _indent)"
	[ "$(_lh_tables)" = "$NET_LH_TABLES" ] ||
		_fail_raw "leftover: nft tables in the lab host:" "$(_lh_tables | _indent)"
	strays=$(_lh_strays)
	if [ -n "$strays" ]; then
		_fail_raw "leftover: processes in the lab host:" "$(_indent <<<"$strays")"
		while read -r pid; do kill -9 "${pid%%:*}" 2>/dev/null; done <<<"$strays"
	fi
}
