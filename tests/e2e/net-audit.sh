#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the audit log of an allowlisted sandbox, in the network lab
# (tests/lab/lab.sh): dns events for a lookup of an allowed and of a
# denied name (the supervisor's verdict, the addresses it admitted and
# their TTL), the create event's policy fingerprint (the result JSON's),
# the dropped packets by destination at the command's end, the cleanup,
# and the size cap under a flood of lookups. Every line is validated
# against docs/audit.schema.json.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

AUDIT_SCHEMA=${AUDIT_SCHEMA:-$(dirname "$0")/../../docs/audit.schema.json}
AUDIT_CHECK=$(dirname "$0")/audit-check.py

audit_check() {
	local file=$1
	shift
	# shellcheck disable=SC2034 # the events, as e2e-audit.sh's audit_check gives them
	EVENTS=$("$PYTHON" "$AUDIT_CHECK" "$AUDIT_SCHEMA" "$file" "$@" 2>"$CASE_DIR/check.err")
	local rc=$?
	[ "$rc" -eq 0 ] && return 0
	_fail_raw "audit log $file: $(cat "$CASE_DIR/check.err")" "$(head -c 4000 "$file" | _indent)"
	return 1
}

# jaudit FILTER: jq -s FILTER over the log's lines (an array of the events).
jaudit() { jq -s -c "$1" "$AUDIT" 2>/dev/null; }

expect_audit() {
	[ "$(jaudit "$1")" = true ] || fail "${2:-expected the audit log to satisfy: $1}
$(wc -lc <"$AUDIT") lines, bytes; the first and the last:
$(head -c 1500 "$AUDIT" | _indent)
    ...
$(tail -c 2500 "$AUDIT" | _indent)"
}

t_dns_and_denied() {
	local s1=${LAB_IP4[server1]} s2=${LAB_IP4[server2]}
	AUDIT=$CASE_DIR/a.jsonl
	crun_net --audit "$AUDIT" --net-allow allowed.test -- \
		"look allowed.test; look denied.test; get $s1; W=1 get $s2; W=1 get $s2 8080"
	expect_rc 0 || return
	expect_line "^GET $s1:80 OK server1" || return
	audit_check "$AUDIT" || return
	expect_audit "[.[] | select(.event == \"dns\" and .name == \"allowed.test\" and .decision == \"allowed\"
		and (.addresses | index(\"$s1\")) != null and .ttl_s > 0)] | length >= 1" \
		"expected an allowed dns event for allowed.test admitting $s1" || return
	expect_audit '[.[] | select(.event == "dns" and .name == "denied.test")] | length >= 1 and all(.decision == "denied" and .addresses == [] and .ttl_s == null)' \
		"expected denied dns events for denied.test, no address" || return
	expect_audit "map(select(.event == \"create\"))[0].network | .mode == \"allowlist\" and .allow == [\"allowed.test\"] and .fingerprint == $(jnet .fingerprint)" \
		"expected the create event's policy and the result's fingerprint" || return
	expect_audit "map(select(.event == \"denied\"))[0] | .packets >= 2 and ([.destinations[] | select(.address == \"$s2\") | .packets] | add) >= 2" \
		"expected the drops to $s2 counted by destination" || return
	expect_audit "map(select(.event == \"denied\"))[0].destinations | all(.address != \"$s1\")" \
		"expected no drop counted for the allowed $s1" || return
	expect_audit 'map(.event) | .[-1] == "cleanup" and .[0] == "create"' || return
	expect_audit 'map(select(.event == "cleanup"))[0].removed == ["processes", "cgroups", "network", "state"]'
}

# A flood of lookups (200 names, A and AAAA each: 400 decisions, eight
# times what the DNS share of a 16 KiB cap holds): the log stays within
# its cap, the cleanup is written.
t_flood() {
	local cap=16384 lines
	AUDIT=$CASE_DIR/a.jsonl
	crun_net --audit "$AUDIT" --audit-max "$cap" --net-allow allowed.test -- \
		'i=0; while [ $i -lt 200 ]; do nslookup "x$i-$(head -c 50 /dev/zero | tr "\0" y).denied.test" >/dev/null 2>&1 & i=$((i + 1)); [ $((i % 40)) = 0 ] && wait; done; wait; echo flooded'
	expect_rc 0 || return
	expect_out_has flooded || return
	audit_check "$AUDIT" --max-bytes "$cap" || return
	lines=$(grep -c '"event":"dns"' "$AUDIT")
	# Three quarters of the cap, each line well over 100 bytes.
	[ "$lines" -gt 0 ] && [ "$lines" -le $((cap * 3 / 4 / 100)) ] || { fail "$lines dns lines"; return; }
	expect_audit 'map(.event) | .[-1] == "cleanup"' "expected the cleanup written past the flood" || return
	expect_audit 'map(select(.event == "cleanup"))[0].dropped | .cap + .dns_rate > 0' \
		"expected the dropped dns events counted"
}

each_mode "net: audit: dns allowed and denied, policy, drops by destination, cleanup" net_case t_dns_and_denied
each_mode "net: audit: the cap holds under a flood of lookups" net_case t_flood
done_testing
