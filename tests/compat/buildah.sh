#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # cases are called through each_mode
# compat: cordon as the OCI runtime of buildah (Debian's 1.28),
# `buildah run --runtime $CORDON --isolation oci`, as root and as the
# unprivileged test user (rootless buildah runs the runtime as uid 0 of
# its own user namespace).
#
# buildah drives the runtime with create --bundle --pid-file, start, state
# (until stopped) and delete, then reads the exit status from the state.
# Each mode has a private store (--root, --runroot, the vfs driver: a plain
# directory tree, writable by the sandbox's root through cordon's idmapped
# rootfs) in the scratch tree; the image is the test rootfs added to
# `buildah from scratch` and committed, never pulled. Runs use `--network
# none` (no CNI or slirp4netns: nothing on the host's network changes).
#
# buildah missing is a failure, not a skip: contrib/deps.sh --test installs it.
# shellcheck source=../e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

IMAGE=localhost/cordon-bb
# buildah commit copies the whole rootfs (vfs): give a call more time.
# shellcheck disable=SC2034 # read by lib.sh's run
E2E_RUN_TIMEOUT=60
ROOTFS_TAR=$E2E_TMP/rootfs.tar

# The store (and buildah's temporary directories) of MODE.
store_of() { echo "$E2E_TMP/buildah-$1"; }

# bh ARGS...: buildah on this mode's store, as the mode's user, captured.
# TMPDIR (buildah's bundles) and, rootless, XDG_RUNTIME_DIR (buildah's
# runtime files and cordon's state) and XDG_DATA_HOME (the blob info cache,
# else in the test user's home) lie in the store: nothing of it outlives
# the test. (As root, commit updates /var/lib/containers/cache, a cache.)
bh() {
	local store USER_PREFIX
	store=$(store_of "$MODE")
	if [ "$MODE" = rootful ]; then
		run env TMPDIR="$store/tmp" buildah --root "$store/root" --runroot "$store/runroot" \
			--storage-driver vfs "$@"
	else
		_user_prefix
		run "${USER_PREFIX[@]}" XDG_RUNTIME_DIR="$store/xdg" XDG_DATA_HOME="$store/data" \
			TMPDIR="$store/tmp" \
			buildah --root "$store/root" --runroot "$store/runroot" --storage-driver vfs "$@"
	fi
}

# bh_run CTR CMD...: buildah run with cordon as the runtime.
bh_run() {
	local ctr=$1
	shift
	bh run --runtime "$CORDON" --isolation oci --network none "$ctr" "$@"
}

# The state root cordon uses under buildah in this mode.
cordon_state_root() {
	if [ "$MODE" = rootful ]; then
		echo /run/cordon
	else
		echo "$(store_of rootless)/xdg/cordon"
	fi
}

# Containers buildah made through cordon that are still recorded.
cordon_leftovers() {
	local root
	root=$(cordon_state_root)
	find "$root" -mindepth 1 -maxdepth 1 -name 'buildah-*' 2>/dev/null | sort
}

# A case's working container of the image: CTR.
from_image() {
	CTR=$CASE_ID-$1
	bh from --pull=never --name "$CTR" "${2:-$IMAGE}"
	expect_rc 0 "buildah from --pull=never $IMAGE failed" || return 1
}

_leftovers_before=
setup_case() {
	_leftovers_before=$(cordon_leftovers)
}

# Remove the case's containers and images; cordon must have no state left.
end_case() {
	local now
	bh rm --all >/dev/null
	now=$(cordon_leftovers)
	[ "$now" = "$_leftovers_before" ] ||
		_fail_raw "leftover: cordon state of buildah's containers:" "$(comm -13 \
			<(printf '%s\n' "$_leftovers_before") <(printf '%s\n' "$now") | _indent)"
}

# --- the image -----------------------------------------------------------------

# The test rootfs, committed as $IMAGE into this mode's store.
t_image() {
	local store
	store=$(store_of "$MODE")
	mk_dir "$store" "$store/tmp"
	[ "$MODE" = rootless ] && install -d -m 700 -o "$TEST_UID" -g "$TEST_GID" "$store/xdg"
	bh from --name "$CASE_ID-img" scratch
	expect_rc 0 || return
	# A local tar is unpacked into the root.
	bh add "$CASE_ID-img" "$ROOTFS_TAR" /
	expect_rc 0 || return
	bh config --env PATH=/usr/sbin:/usr/bin:/sbin:/bin --cmd sh "$CASE_ID-img"
	expect_rc 0 || return
	bh commit --rm "$CASE_ID-img" "$IMAGE"
	expect_rc 0 || return
	bh images --noheading --format '{{.Name}}'
	expect_out_has "$IMAGE"
}

# --- cases -----------------------------------------------------------------------

t_echo() {
	setup_case
	from_image c || return
	bh_run "$CTR" echo hi
	expect_rc 0
	expect_out_eq hi
	expect_err_lacks CORDON_E_
	end_case
}

t_exit_status() {
	setup_case
	from_image c || return
	bh_run "$CTR" sh -c 'echo out; echo err >&2; exit 3'
	expect_rc 3
	expect_out_eq out
	expect_err_has err
	# shellcheck disable=SC2016 # expanded inside the container
	bh_run "$CTR" sh -c 'kill -9 $$'
	expect_rc 137
	bh_run "$CTR" no-such-program
	expect_rc_not 0
	expect_err_has "CORDON_E_EXEC: no-such-program"
	end_case
}

# What a RUN step needs: the working container's root is writable, and what
# the workload writes there (as the container's root) is in the committed
# image, owned by root, and seen by a container of that image.
t_commit() {
	local img=$IMAGE-$CASE_ID
	setup_case
	from_image a || return
	bh_run "$CTR" sh -c 'echo from-run >/etc/from-run && mkdir -p /opt/made && touch /opt/made/f && rm /bin/true'
	expect_rc 0 || { end_case; return; }
	bh commit --rm "$CTR" "$img"
	expect_rc 0 || { end_case; return; }
	from_image b "$img" || { end_case; return; }
	# shellcheck disable=SC2016 # expanded inside the container
	bh_run "$CTR" sh -c 'cat /etc/from-run; ls -ln /etc/from-run | awk "{ print \$3, \$4 }"; ls /opt/made; [ -e /bin/true ] || echo true-gone'
	expect_rc 0
	expect_out_eq $'from-run\n0 0\nf\ntrue-gone'
	bh rm "$CTR" >/dev/null
	bh rmi "$img"
	expect_rc 0
	end_case
}

# buildah bud: RUN steps through cordon, one after another on the layers
# the previous ones committed, with the ENV of an earlier instruction.
t_bud() {
	local img=$IMAGE-$CASE_ID ctx=$CASE_DIR/ctx
	setup_case
	mk_dir "$ctx"
	cat >"$ctx/Containerfile" <<EOF
FROM $IMAGE
RUN echo built >/built && mkdir /home/u1 && chown 1000:1000 /home/u1
ENV STEP=second
RUN echo "\$STEP: \$(cat /built) \$(stat -c %u:%g /home/u1)"
EOF
	bh bud --pull=never --network none --runtime "$CORDON" --isolation oci -t "$img" "$ctx"
	expect_rc 0
	expect_out_has "second: built 1000:1000"
	bh rmi "$img"
	expect_rc 0
	end_case
}

# buildah config: environment, working directory and user reach the
# workload through config.json; run's own --env and --workingdir too.
t_config() {
	setup_case
	from_image c || return
	bh config --env GREETING=hello --env EMPTY= --workingdir /srv/app "$CTR"
	expect_rc 0 || { end_case; return; }
	# shellcheck disable=SC2016 # expanded inside the container
	bh_run "$CTR" sh -c 'echo "$GREETING|$EMPTY|$(pwd)|$(id -u):$(id -g)"'
	expect_rc 0
	expect_out_eq "hello||/srv/app|0:0"
	# shellcheck disable=SC2016
	bh run --runtime "$CORDON" --isolation oci --network none --env GREETING=bye \
		--workingdir /tmp --user 1000:1000 "$CTR" sh -c 'echo "$GREETING|$(pwd)|$(id -u):$(id -g)"'
	expect_rc 0
	expect_out_eq "bye|/tmp|1000:1000"
	end_case
}

# --- main ----------------------------------------------------------------------

if ! command -v buildah >/dev/null 2>&1; then
	tap_not_ok "buildah is installed"
	diag "buildah not found: contrib/deps.sh --test installs it (Debian: buildah)"
	done_testing
fi
if ! is_root; then
	tap_not_ok "run as root"
	diag "the test runs buildah as root and as $CORDON_TEST_USER: run it as root (contrib/test.sh does)"
	done_testing
fi
if ! tar -C "$CORDON_ROOTFS" -cf "$ROOTFS_TAR" . || ! chmod 644 "$ROOTFS_TAR"; then
	tap_not_ok "tar of the test rootfs"
	done_testing
fi

# The stores hold files of the sandbox's ids: remove them through buildah,
# then lib.sh's exit trap removes the scratch tree.
buildah_cleanup() {
	local m
	for m in rootful rootless; do
		[ -d "$(store_of "$m")/root" ] || continue
		MODE=$m CASE_DIR=$E2E_TMP bh rm --all
		MODE=$m CASE_DIR=$E2E_TMP bh rmi --all --force
	done
}
# shellcheck disable=SC2154 # _rc is assigned in the trap itself
trap '_rc=$?; buildah_cleanup; (exit $_rc); _on_exit' EXIT

each_mode "buildah from scratch, add the rootfs tar, commit $IMAGE" t_image
each_mode "buildah run echo hi: hi, exit 0" t_echo
each_mode "buildah run: exit status 3, stdout and stderr apart; signal 9 is 137; a missing program fails" t_exit_status
each_mode "a file written by buildah run is in the committed image, owned by root" t_commit
each_mode "buildah bud: two RUN steps, the second sees the first's files and an ENV" t_bud
each_mode "buildah config --env, --workingdir; run --env, --workingdir, --user" t_config
done_testing
