#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# crun's own test suite (tests/test_*.py of a containers/crun checkout,
# measured at its 1.8.1 tag) against cordon and its peers, side by side in
# one run; the per-file counts of docs/oci.md ("Conformance, measured").
# Nothing of crun's is part of this repository: the checkout is an
# argument, and what the suite needs that Debian lacks is made here, in a
# scratch directory:
#
#   - crun's tests/init, built static from the checkout;
#   - a stand-in for the Python `libmount` binding (the suite uses
#     Table(path).find_target(dest).vfs_options/fs_options on mountinfo);
#   - a wrapper per runtime that is not crun: crun's global
#     `--cgroup-manager M` is dropped (cgroupfs) and its `--config FILE`
#     becomes the working directory as the bundle (runc's default;
#     cordon's `run` and `create` get `--bundle .`), FILE linked there as
#     config.json when it is another name.
#
# Usage (as root): tests/compat/crun-suite.sh CRUN_CHECKOUT CORDON [RUNTIME...]
#   RUNTIME: runc, crun (their paths from PATH) or a path; default runc crun
#   CGROUP2_VIEW=1: run in a mount namespace whose /sys/fs/cgroup is the
#     host's cgroup2 hierarchy alone (crun 1.8.1 refuses a hybrid layout)
#   FILE_TIMEOUT: seconds per test file (240)
#   TESTS: the test files to run (default every tests/test_*.py)
# Output: one TAP log per runtime and file in $OUT (default
# /tmp/crun-suite-out), then a table of passed (skipped) / run per file,
# and on stderr the run's start and end (UTC), the kernel, the cores and
# the load averages at both ends, and the lowest and highest 1-minute
# load read between files (what docs/oci.md gives with the figures).
# A skip ("#SKIP") is not a pass.
set -u

if [ $# -lt 2 ]; then
	sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;/^set -u/d'
	exit 2
fi
CHECKOUT=$(cd "$1" && pwd) || exit 2
CORDON_BIN=$(readlink -f "$2") || exit 2
shift 2
RUNTIMES=("$@")
[ ${#RUNTIMES[@]} -gt 0 ] || RUNTIMES=(runc crun)
OUT=${OUT:-/tmp/crun-suite-out}
FILE_TIMEOUT=${FILE_TIMEOUT:-240}

if [ -z "${_CRUN_SUITE_INNER:-}" ] && [ "${CGROUP2_VIEW:-}" = 1 ] &&
	[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
	unified=/sys/fs/cgroup/unified
	[ "$(stat -fc %T "$unified" 2>/dev/null)" = cgroup2fs ] ||
		{ echo "no cgroup2 hierarchy at $unified" >&2; exit 1; }
	# shellcheck disable=SC2016
	exec unshare -m --propagation private env _CRUN_SUITE_INNER=1 bash -c '
		umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' \
		bash "$0" "$CHECKOUT" "$CORDON_BIN" "${RUNTIMES[@]}"
fi

mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/crun-suite.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -a "$CHECKOUT/tests" "$WORK/tests"
cd "$WORK" || exit 1

# init.c includes crun's config.h: what Debian's glibc (and libseccomp, when static) has.
mkdir -p "$WORK/inc"
echo '#define HAVE_ERROR_H 1' >"$WORK/inc/config.h"
seccomp=()
if [ -e /usr/lib/x86_64-linux-gnu/libseccomp.a ] || [ -e /usr/lib/libseccomp.a ]; then
	echo '#define HAVE_SECCOMP 1' >>"$WORK/inc/config.h"
	seccomp=(-lseccomp)
fi
gcc -static -O2 -I"$WORK/inc" -o "$WORK/init" tests/init.c "${seccomp[@]}" ||
	{ echo "building tests/init failed" >&2; exit 1; }

mkdir -p "$WORK/py"
cat >"$WORK/py/libmount.py" <<'PY'
# A stand-in for the parts of the libmount binding crun's suite uses.
class _Fs:
    def __init__(self, fields, fstype, source, super_opts):
        self.target = fields[4].encode().decode("unicode_escape")
        self.vfs_options = fields[5]
        self.fs_options = super_opts
        self.fstype = fstype
        self.source = source


class Table:
    def __init__(self, path):
        self.fs = []
        with open(path) as f:
            for line in f:
                if " - " not in line:
                    continue
                left, right = line.rstrip("\n").split(" - ", 1)
                fields = left.split()
                rest = right.split()
                if len(fields) < 6 or len(rest) < 3:
                    continue
                self.fs.append(_Fs(fields, rest[0], rest[1], rest[2]))

    def find_target(self, target):
        for fs in reversed(self.fs):
            if fs.target == target:
                return fs
        return None
PY

# wrapper NAME BINARY: an OCI_RUNTIME with crun's command line for BINARY.
wrapper() {
	local w=$WORK/bin/$1
	mkdir -p "$WORK/bin"
	cat >"$w" <<EOF
#!/bin/bash
bin=$2
args=()
cmd=
while [ \$# -gt 0 ]; do
	case \$1 in
	--cgroup-manager) shift 2; continue ;;
	--cgroup-manager=*) shift; continue ;;
	--config)
		# crun reads the config there, the root relative to the working directory.
		[ "\$2" = config.json ] || [ -e config.json ] || ln -s "\$2" config.json
		shift 2
		continue
		;;
	esac
	if [ -z "\$cmd" ] && [ "\${1#-}" = "\$1" ] && [ "\${args[-1]:-}" != --root ] && [ "\${args[-1]:-}" != --log ]; then
		cmd=\$1
		args+=("\$1")
		case "\$(basename "\$bin"):\$cmd" in
		cordon:run | cordon:create) args+=(--bundle .) ;;
		esac
		shift
		continue
	fi
	args+=("\$1")
	shift
done
exec "\$bin" "\${args[@]}"
EOF
	chmod 755 "$w"
	echo "$w"
}

declare -A RT_PATH
names=(cordon)
RT_PATH[cordon]=$(wrapper cordon "$CORDON_BIN")
for r in "${RUNTIMES[@]}"; do
	name=$(basename "$r")
	bin=$(command -v "$r") || { echo "no $r" >&2; continue; }
	names+=("$name")
	if [ "$name" = crun ]; then
		RT_PATH[$name]=$bin
	else
		RT_PATH[$name]=$(wrapper "$name" "$bin")
	fi
done

# machine_line WHEN: the time, kernel, cores and load averages, on stderr.
machine_line() {
	echo "$1: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), Linux $(uname -r), $(nproc) cores," \
		"load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
}
machine_line start
load_min='' load_max=''
# load_read: the 1-minute load average, kept if lowest or highest so far.
load_read() {
	local l
	l=$(cut -d' ' -f1 /proc/loadavg)
	if [ -z "$load_min" ] || awk -v a="$l" -v b="$load_min" 'BEGIN { exit !(a < b) }'; then
		load_min=$l
	fi
	if [ -z "$load_max" ] || awk -v a="$l" -v b="$load_max" 'BEGIN { exit !(a > b) }'; then
		load_max=$l
	fi
}

files=${TESTS:-$(cd tests && ls test_*.py)}
declare -A PASS SKIP RUN
for f in $files; do
	load_read
	for n in "${names[@]}"; do
		log=$OUT/$n-${f%.py}.tap
		(cd tests && INIT=$WORK/init OCI_RUNTIME=${RT_PATH[$n]} PYTHONPATH=$WORK/py \
			timeout -k 10 "$FILE_TIMEOUT" python3 "$f") >"$log" 2>"$log.err"
		PASS[$n,$f]=$(grep -c '^ok ' "$log" | tr -d ' ')
		SKIP[$n,$f]=$(grep -c '^ok .*#SKIP' "$log" | tr -d ' ')
		RUN[$n,$f]=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -1)
		PASS[$n,$f]=$((PASS[$n,$f] - SKIP[$n,$f]))
	done
	echo "done $f" >&2
done
load_read
machine_line end
echo "1-minute load between files: $load_min to $load_max" >&2

printf '| file |'
for n in "${names[@]}"; do printf ' %s |' "$n"; done
printf '\n|---|'
for n in "${names[@]}"; do printf -- '---|'; done
echo
declare -A TOTAL TSKIP
for f in $files; do
	# shellcheck disable=SC2016 # markdown's backquotes
	printf '| `%s` |' "$f"
	for n in "${names[@]}"; do
		s=${SKIP[$n,$f]}
		printf ' %s%s / %s |' "${PASS[$n,$f]}" "$([ "$s" -gt 0 ] && echo " ($s skipped)")" "${RUN[$n,$f]:-?}"
		TOTAL[$n]=$((${TOTAL[$n]:-0} + PASS[$n,$f]))
		TSKIP[$n]=$((${TSKIP[$n]:-0} + s))
	done
	echo
done
printf '| **passed (skipped)** |'
for n in "${names[@]}"; do printf ' **%s (%s)** |' "${TOTAL[$n]}" "${TSKIP[$n]}"; done
echo
