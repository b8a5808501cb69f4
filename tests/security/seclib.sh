# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Shared setup of the security tests, on top of the e2e harness
# (tests/e2e/lib.sh: TAP, rootful/rootless modes, leftover checks).
#
# Sourcing this gives every script:
#   SEC_ROOTFS  a copy of $CORDON_ROOTFS with /bin/sec-probe added, made
#               once per script in the harness's scratch tree (the built
#               rootfs is never modified)
#   sec_each NAME FN / sec_rootful NAME FN / sec_rootless NAME FN
#               like each_mode & co., with ROOTFS=$SEC_ROOTFS in the case
#   probe_is ACTION RESULT...   the probe line ACTION=X has X among RESULTs
#   host_snap PATH...           a fingerprint of host files (content,
#                               mode, owner, mtime, listing) to compare
#                               before and after a hostile run
#
# Environment: SEC_PROBE, the static probe (meson sets it).

# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

SEC_PROBE=${SEC_PROBE:-build/tests/security/sec-probe}
case $SEC_PROBE in /*) ;; *) SEC_PROBE=$PWD/$SEC_PROBE ;; esac
if [ ! -x "$SEC_PROBE" ]; then
	echo "Bail out! sec-probe not found at $SEC_PROBE"
	_done=1
	exit 1
fi

# Run a private copy of the binary: a rebuild of build/cordon while the
# script runs (the tree is shared) would otherwise fail random cases with
# "Permission denied" from a half-linked file. cordon uses its own path
# only to find the default rootfs, and every case names its rootfs.
_sec_bin=$E2E_TMP/cordon
for _i in 1 2 3 4 5; do
	if cp "$CORDON" "$_sec_bin" 2>/dev/null && chmod 0755 "$_sec_bin" &&
		"$_sec_bin" --version >/dev/null 2>&1; then
		CORDON=$_sec_bin
		break
	fi
	sleep 1
done
if [ "$CORDON" != "$_sec_bin" ]; then
	echo "Bail out! cannot make a working copy of $CORDON"
	_done=1
	exit 1
fi

# Make a copy of the rootfs at DIR with the probe in /bin.
sec_copy_rootfs() {
	local dir=$1
	cp -a "$CORDON_ROOTFS" "$dir" || return 1
	install -m 0755 "$SEC_PROBE" "$dir/bin/sec-probe" || return 1
	chmod 0755 "$dir"
}

SEC_ROOTFS=$E2E_TMP/rootfs
if ! sec_copy_rootfs "$SEC_ROOTFS"; then
	echo "Bail out! cannot copy $CORDON_ROOTFS to $SEC_ROOTFS"
	_done=1
	exit 1
fi

_sec_case() {
	ROOTFS=$SEC_ROOTFS
	"$@"
}

sec_each() { each_mode "$1" _sec_case "$2"; }
sec_rootful() { rootful_only "$1" _sec_case "$2"; }
sec_rootless() { rootless_only "$1" _sec_case "$2"; }

# The RESULT the probe printed for ACTION in $OUT (empty when absent).
probe_result() {
	local line
	while IFS= read -r line; do
		if [[ $line == "$1="* ]]; then
			printf '%s\n' "${line#"$1="}"
			return
		fi
	done <<<"$OUT"
}

# probe_is ACTION RESULT...: fail the case unless ACTION printed one of
# the RESULTs. A RESULT ending in '*' matches as a prefix ("ok*").
probe_is() {
	local action=$1 got want
	shift
	got=$(probe_result "$action")
	for want in "$@"; do
		case $want in
		*'*') [[ $got == "${want%'*'}"* ]] && [ -n "$got" ] && return 0 ;;
		*) [ "$got" = "$want" ] && return 0 ;;
		esac
	done
	want="$*"
	fail "probe $action: expected ${want// / or }, got '${got:-nothing}'"
}

# A fingerprint of host paths: for each, its listing (recursively for a
# directory) with mode, owner, size, mtime, and the content's hash.
host_snap() {
	local p
	for p in "$@"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			find "$p" -printf '%p %M %U:%G %s %T@ %l\n' 2>&1 | sort
			find "$p" -type f -exec sha256sum {} + 2>&1 | sort
		else
			echo "$p absent"
		fi
	done
}

# expect_host_unchanged BEFORE PATH...: the fingerprint is still BEFORE.
expect_host_unchanged() {
	local before=$1 now
	shift
	now=$(host_snap "$@")
	[ "$now" = "$before" ] && return 0
	_fail_raw "the host changed under $*:" \
		"$(diff <(printf '%s\n' "$before") <(printf '%s\n' "$now") | grep '^[<>]' | head -n 20 | _indent)"
	return 1
}

# The line "Key:<tab>value" of /proc/self/status-like text in $OUT.
status_field() {
	printf '%s\n' "$OUT" | awk -v k="$1:" '$1 == k { print $2; exit }'
}

# The mount options (per-mount, field 6) of mount point MP in the
# mountinfo text in $OUT, or nothing when there is no such mount.
mount_opts() {
	printf '%s\n' "$OUT" | awk -v mp="$1" '$5 == mp { o = $6 } END { print o }'
}

# has_opt OPTS OPT: the comma-separated OPTS include OPT.
has_opt() { [[ ,$1, == *",$2,"* ]]; }
