#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the network flags refused before anything exists, what
# --print-profile and --result-json say about the network, and that
# nothing stays behind in the lab host after a normal exit, a --timeout
# or a SIGKILLed supervisor (net_case checks links, addresses, processes
# and nft tables after every case; lib.sh the state directories).
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

dns_log_lines() { wc -l <"$LAB_DIR/dns.log"; }

# refused CODE WORD OPTIONS...: exit 125 with CORDON_E_CODE naming WORD,
# quickly, and the workload never ran.
refused() {
	local code=$1 word=$2
	shift 2
	rm -f "$WS/ran"
	crun "$@" -- touch /workspace/ran
	expect_cordon_error "$code" "$word" || return 1
	[ ! -e "$WS/ran" ] || fail "the workload ran"
	[ "$LAST_MS" -lt 5000 ] || fail "expected the refusal at once, took $LAST_MS ms"
}

t_invalid() {
	local d0 up=(--dns-upstream "$LAB_DNS4")
	d0=$(dns_log_lines)
	printf '# nothing here\n\n   \n# allowed.test\n' >"$CASE_DIR/empty.allow"
	printf 'allowed.test\nfoo_bar.test\n' >"$CASE_DIR/bad.allow"
	chmod 644 "$CASE_DIR"/*.allow
	refused NET_POLICY empty --net-allow-file "$CASE_DIR/empty.allow" "${up[@]}"
	refused NET_POLICY "bad.allow:2" --net-allow-file "$CASE_DIR/bad.allow" "${up[@]}"
	refused '[A-Z_]+' "$CASE_DIR/none.allow" --net-allow-file "$CASE_DIR/none.allow" "${up[@]}"
	refused NET_POLICY 'a*b.test' --net-allow 'a*b.test' "${up[@]}"
	refused NET_POLICY '*.test' --net-allow '*.test' "${up[@]}"
	refused NET_POLICY '10.0.0.0/8' --net-allow 10.0.0.1/8 "${up[@]}"
	refused NET_POLICY '0.0.0.0/0' --net-allow 0.0.0.0/0 "${up[@]}"
	refused NET_POLICY 'http://allowed.test/' --net-allow http://allowed.test/ "${up[@]}"
	refused NET_POLICY '10.254.254.0/30' --net-allow allowed.test,10.254.254.0/30 "${up[@]}"
	refused NET_POLICY '10.254.254.2/31' --net-allow 10.254.254.2/31 "${up[@]}"
	refused NET_POLICY 'fd63:6f72:646f:6e::5' --net-allow fd63:6f72:646f:6e::5 "${up[@]}"
	refused USAGE --dns-upstream "${up[@]}"
	refused USAGE --dns --dns none
	refused USAGE --net-backend --net-backend veth
	refused USAGE --dns-upstream --net-allow allowed.test --dns none "${up[@]}"
	refused USAGE '198.18.1.53:0' --net-allow allowed.test --dns-upstream 198.18.1.53:0
	refused USAGE 'nope' --net-allow allowed.test --dns nope "${up[@]}"
	refused USAGE 'foo' --net-allow allowed.test --net-backend foo "${up[@]}"
	refused USAGE '--net-max-flows' --net-max-flows 64
	refused USAGE "'15'" --net-allow allowed.test --net-max-flows 15 "${up[@]}"
	refused USAGE "'1048577'" --net-allow allowed.test --net-max-flows 1048577 "${up[@]}"
	refused USAGE "'many'" --net-allow allowed.test --net-max-flows many "${up[@]}"
	if [ "$MODE" = rootful ]; then
		refused USAGE '10.232.0.1/16' --net-allow allowed.test --net-pool 10.232.0.1/16 "${up[@]}"
		refused USAGE --userns --net-allow allowed.test --userns host "${up[@]}"
	else
		refused USAGE --net-pool --net-allow allowed.test --net-pool 10.232.0.0/16 "${up[@]}"
	fi
	[ "$(dns_log_lines)" = "$d0" ] || fail "the lab's resolver was asked something"
}

t_allow_any() {
	local h0
	h0=$(( $(lab_http_hits metadata) + $(wc -l <"$LAB_DIR/lh-http.log") ))
	# 0.0.0.0/0 opens the world, never what the vetting table refuses.
	crun_net --net-allow-any --net-allow 0.0.0.0/0 -- \
		"get 198.18.1.20 & W=1 get 169.254.169.254 & W=1 get $LAB_LH4 8080 & W=1 get 10.254.254.1 8080 & look denied.test & wait"
	expect_rc 0
	expect_line '^GET 198.18.1.20:80 OK server2$' "expected 0.0.0.0/0 to open a world address"
	expect_line '^GET 169.254.169.254:80 FAIL' "expected metadata closed under 0.0.0.0/0"
	expect_line "^GET $LAB_LH4:8080 FAIL" "expected the lab host closed under 0.0.0.0/0"
	expect_line '^LOOK denied.test FAIL.*NXDOMAIN' "expected names still refused (0.0.0.0/0 is no name)"
	[ $(( $(lab_http_hits metadata) + $(wc -l <"$LAB_DIR/lh-http.log") )) = "$h0" ] ||
		fail "metadata or the lab host was reached"
	expect_json '.allow == ["0.0.0.0/0"]'
}

t_result() {
	local profile fp want
	# Normalised: lower case, trailing dot, /32; fingerprint over the sorted entries.
	# From a file too: CRLF, comments, blank lines.
	printf '# the lab\r\nAllowed.Test.\r\n\r\n198.18.1.20/32  # server2\r\n' >"$CASE_DIR/list.allow"
	chmod 644 "$CASE_DIR/list.allow"
	cordon run --print-profile --net-allow-file "$CASE_DIR/list.allow" --net-allow '*.wild.test' \
		--dns-upstream "$LAB_DNS4" "$ROOTFS" -- true
	expect_rc 0
	profile=$(jq -c '.network' <<<"$OUT" 2>/dev/null)
	want=$(printf '%s\n' '*.wild.test' 198.18.1.20 allowed.test | sort | head -c -1 | sha256sum | cut -d' ' -f1)
	JSON="{\"network\": ${profile:-null}}"
	expect_json '.allow | sort == ["*.wild.test", "198.18.1.20", "allowed.test"]' "expected the normalised allowlist in --print-profile"
	expect_json ".fingerprint == \"$want\"" "expected the fingerprint to be SHA-256 of the sorted entries joined by newlines ($want)"
	expect_json ".mode == \"allowlist\" and .backend == \"$(backend)\" and .dns == \"proxy\""
	fp=$(jnet .fingerprint)

	crun_net --net-allow-file "$CASE_DIR/list.allow" --net-allow '*.wild.test' -- \
		'look allowed.test; look denied.test; get allowed.test; W=1 get 198.18.1.30'
	expect_rc 0
	expect_line '^GET 198.18.1.30:80 FAIL' "expected the unattested address closed"
	[ -n "$JSON" ] || { fail "expected --result-json to write the result"; return; }
	[ "$(jq -r .exit_code <<<"$JSON")" = 0 ] || fail "expected exit_code 0 in the result"
	expect_json "(.allow | sort) == ([\"*.wild.test\", \"198.18.1.20\", \"allowed.test\"]) and .fingerprint == $fp" \
		"expected the result's allowlist and fingerprint to match --print-profile's"
	expect_json '.mode == "allowlist" and .backend == "'"$(backend)"'" and .dns == "proxy" and .allow_host_loopback == false'
	expect_json '.workload_addresses == ["10.254.254.2", "fd63:6f72:646f:6e::2"] and .gateway == ["10.254.254.1", "fd63:6f72:646f:6e::1"]'
	expect_json '.dns_upstreams == ["198.18.1.53:53"]'
	if [ "$MODE" = rootful ]; then
		expect_json '.uplink | (.host | test("^10\\.231\\.")) and (.gateway | test("^10\\.231\\."))' \
			"expected the veth uplink's addresses from the default pool 10.231.0.0/16"
	else
		expect_json '.uplink == null' "expected no uplink object with pasta"
	fi
	expect_json '.names | map(select(.name == "allowed.test")) | .[0] | .allowed and (.inserted | sort == ["198.18.1.10", "2001:2:0:1::10"]) and .refused == []' \
		"expected allowed.test with both addresses inserted"
	expect_json '.denied_names == ["denied.test"]'
	expect_json '.dropped_packets >= 1 and .dropped_bytes >= 40 * .dropped_packets' "expected the blocked connect counted"
	expect_json '.dns_denied >= 1 and .dns_forwarded >= 1 and .dns_queries >= .dns_denied + .dns_forwarded'
}

t_timeout() {
	crun_net --timeout 1 --kill-after 1 --net-allow allowed.test -- 'get allowed.test; touch /workspace/fetched; sleep 30'
	expect_rc 124
	[ -e "$WS/fetched" ] || fail "expected the workload to fetch before the timeout"
	[ "$LAST_MS" -lt 10000 ] || fail "expected the run to end soon after --timeout 1, took $LAST_MS ms"
	[ "$(jq -r .timed_out <<<"$JSON" 2>/dev/null)" = true ] || fail "expected timed_out in the result"
	expect_json '.names | length == 1' "expected the network report written after a timeout too"
}

t_sigkill() {
	local sup
	crun_bg --dns-upstream "$LAB_DNS4" --net-allow allowed.test -- sh -c \
		'. /workspace/p.sh; get allowed.test >/workspace/got; touch /workspace/ready; sleep 60'
	local killed=$ID
	if ! wait_until "$WAIT_LIMIT" test -e "$WS/ready"; then
		kill -9 "$BG_PID" 2>/dev/null
		wait_bg
		fail "the sandbox never got ready"
		return
	fi
	# Positive controls: the uplink exists while it runs.
	if [ "$MODE" = rootful ]; then
		[ -n "$(_lh_cdr_links)" ] || _fail_raw "expected a cdr-* link in the lab host while the sandbox runs"
	else
		# (Read whole: grep -q would leave before the lines after pasta's.)
		[[ $(_lh_strays) == *pasta* ]] || _fail_raw "expected pasta in the lab host while the sandbox runs"
	fi
	grep -q 'OK server1' "$WS/got" || _fail_raw "expected egress before the kill: $(cat "$WS/got")"
	sup=$(supervisor_of "$killed") || { _fail_raw "no supervisor found for $killed"; kill -9 "$BG_PID"; wait_bg; return; }
	kill -9 "$sup"
	wait_bg_for "$WAIT_LIMIT" || return
	[ "$RC" = 137 ] || [ "$MODE" = rootless ] || _fail_raw "expected the killed cordon to report 137, got $RC"
	# Everything in the lab host goes with it: no link, no pasta, no process.
	wait_until "$WAIT_LIMIT" _lh_clean || _fail_raw "expected the lab host clean after the SIGKILL" \
		"$(_lh_cdr_links) $(_lh_strays)"
	# The next run works, and sweeps what the killed one left in the state
	# directory. Another script's run beside this one may have begun that
	# sweep first: it holds the entry's lock until the entry is gone, and
	# this run's sweep passes a locked entry by; so it is waited for.
	crun_net --net-allow allowed.test -- 'get allowed.test'
	expect_rc 0
	expect_line '^GET allowed.test:80 OK server1$'
	local d left
	state_dirs >/dev/null
	killed_state_gone() {
		left=
		for d in "${STATE_DIRS[@]}"; do
			[ -e "$d/$killed" ] && left+=" $d/$killed"
		done
		[ -z "$left" ]
	}
	wait_until "$WAIT_LIMIT" killed_state_gone ||
		fail "expected the next run to sweep the killed run's state:$left"
}

each_mode "net: bad network flags: exit 125 before anything exists" net_case t_invalid
each_mode "net: --net-allow-any 0.0.0.0/0 still keeps the vetting table closed" net_case t_allow_any
each_mode "net: --print-profile and --result-json describe the network" net_case t_result
each_mode "net: --timeout: exit 124, report written, nothing left" net_case t_timeout
each_mode "net: SIGKILLed supervisor: uplink and pasta gone, next run sweeps" net_case t_sigkill
done_testing
