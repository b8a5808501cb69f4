#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# shellcheck disable=SC2317 # cases are called through each_mode
# shellcheck disable=SC2016 # sandbox scripts expand inside the sandbox
# net: the network policy of an OCI bundle (docs/oci.md, "Network
# policy"): the annotations run.cordon.net.allow and
# run.cordon.dns.upstream, in the network lab (tests/lab/lab.sh), through
# `cordon run --bundle`. No annotation: only lo, as always.
. "$(dirname "$0")/../lab/lab.sh"
lab_isolate "$@" || skip_all_or_fail "needs root for the network lab"
. "$(dirname "$0")/net-lib.sh"

t_oci_allow() {
	local q0 h0
	q0=$(lab_dns_queries denied.test)
	h0=$(lab_http_hits server1)
	oci_bundle '{"run.cordon.net.allow": "allowed.test", "run.cordon.dns.upstream": "'"$LAB_DNS4"'"}' \
		'look allowed.test; get allowed.test; look denied.test; W=1 get 198.18.1.20' || return
	cordon --root "$CASE_DIR/root" run --bundle "$BUNDLE" "$CASE_ID-c"
	expect_rc 0
	expect_line '^LOOK allowed.test OK .*198\.18\.1\.10( |$)' "expected allowed.test to resolve to 198.18.1.10"
	expect_line '^GET allowed.test:80 OK server1$' "expected an HTTP answer from server1"
	expect_line '^LOOK denied.test FAIL.*NXDOMAIN' "expected NXDOMAIN for denied.test"
	expect_line '^GET 198.18.1.20:80 FAIL' "expected the unattested literal 198.18.1.20 to fail"
	[ "$(lab_dns_queries denied.test)" = "$q0" ] || fail "denied.test was forwarded to the lab's resolver"
	[ "$(lab_http_hits server1)" -eq $((h0 + 1)) ] || fail "expected exactly one request at server1"
}

t_oci_default_deny() {
	oci_bundle '{}' 'cat /proc/net/dev; look allowed.test; conn 198.18.1.10 80' || return
	cordon --root "$CASE_DIR/root" run --bundle "$BUNDLE" "$CASE_ID-c"
	expect_rc 0
	expect_no_line 'eth0' "expected no eth0 without the annotation"
	expect_line '^LOOK allowed.test FAIL' "expected the lookup to fail"
	expect_line '^CONN 198.18.1.10:80 FAIL' "expected no connection"
}

# The init fails while the supervisor still sets up the uplink (a mount
# that cannot be made, after the gateway was handed over): the init's
# reason is what cordon says, not the broken pipe it left behind.
t_oci_init_failure() {
	echo x >"$CASE_DIR/file"
	chmod 644 "$CASE_DIR/file"
	oci_bundle '{"run.cordon.net.allow": "allowed.test", "run.cordon.dns.upstream": "'"$LAB_DNS4"'"}' 'true' || return
	"$PYTHON" -c '
import json, sys
c = json.load(open(sys.argv[1]))
c["mounts"].append({"destination": "/bin", "type": "bind", "source": sys.argv[2], "options": ["bind", "ro"]})
json.dump(c, open(sys.argv[1], "w"))' "$BUNDLE/config.json" "$CASE_DIR/file" || { fail "editing config.json"; return 1; }
	cordon --root "$CASE_DIR/root" run --bundle "$BUNDLE" "$CASE_ID-c"
	expect_cordon_error MOUNT "/bin"
	[[ $ERR != *"Broken pipe"* ]] || fail "the supervisor's broken pipe instead of the init's reason"
}

each_mode "OCI annotations: allowed.test reachable, denied.test NXDOMAIN" net_case t_oci_allow
each_mode "OCI without annotations: only lo" net_case t_oci_default_deny
each_mode "OCI annotations: an init that fails during the uplink's setup says why" net_case t_oci_init_failure
done_testing
