#!/usr/bin/env bash
# tests/bench/concurrent.sh — K sandboxes started at once (a benchmark, not a
# test: it prints figures, and exits non-zero if any start failed or anything
# was left behind).
#
#   tests/bench/concurrent.sh [-k "1 10 50 100"] [-r R] [--rows "ROW..."]
#                             [--build DIR] [--rootfs DIR]
#
#   -k LIST      the numbers of sandboxes started together (default 1 10 50 100)
#   -r R         rounds per K (default 3; K=1 runs 10 R single starts)
#   --rows LIST  any of: cordon bwrap veth (default all three; veth only as
#                root: it runs in the private lab, tests/lab/lab.sh, and then
#                every row runs in the lab host)
#   --build DIR  build directory (default build/: cordon, rootfs, the lab's
#                tests/lab/cordon-lab)
#
# Rows, each `/bin/true` in a fresh sandbox:
#   cordon   cordon run --name ID ROOTFS -- /bin/true, the defaults (each start
#            in a directory of its own, its workspace; a pids cgroup)
#   bwrap    bwrap --unshare-all --die-with-parent --ro-bind ROOTFS / --proc /proc
#            --dev /dev --tmpfs /tmp /bin/true (as tests/bench/startup.sh)
#   veth     cordon run --net-allow allowed.test,198.18.1.0/24 --dns-upstream
#            LAB_DNS4 (the lab build, veth uplink by cordon-nethelper)
#
# A python3 harness forks the K processes first, each waiting on one pipe;
# closing the pipe's write end releases them all at once (the clock starts
# there), and each one's latency is from the release to its exit as the
# harness's waitpid sees it. Per row and K: throughput (K / the time to the
# last exit, sandboxes per second; the median round), p50 and p99 of the
# latencies of every start of every round, the failures (an exit status
# other than 0, with the first line of its error) and, for cordon, what is
# left: state entries, cgroup directories, cdr-* links, cordon processes.
set -uo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
ks="1 10 50 100"
rounds=3
rows="cordon bwrap veth"
build=$top/build
rootfs=
orig=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-k) ks=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	--rows) rows=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--rootfs) rootfs=$2; shift 2 ;;
	*) echo "concurrent.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
rootfs=${rootfs:-$build/rootfs}
[ "$EUID" -eq 0 ] || { echo "concurrent.sh: run it as root" >&2; exit 1; }

work=$(mktemp -d /tmp/cordon-conc.XXXXXX) || exit 1
chmod 755 "$work"
# Copies: a rebuild of build/ during the run cannot mix builds.
cp "$build/cordon" "$work/cordon" || exit 1
prefix=()
dns=
lab=
if [[ " $rows " == *" veth "* ]]; then
	. "$top/tests/lab/lab.sh"
	lab_isolate "${orig[@]}" || { echo "concurrent.sh: veth needs the lab (root)" >&2; exit 1; }
	lab=1
	cp "$build/tests/lab/cordon-lab" "$work/cordon-lab" &&
		cp "$build/src/cordon-nethelper" "$work/cordon-nethelper" || exit 1
	export CORDON_NETHELPER=$work/cordon-nethelper
	lab_up >/dev/null || exit 1
	prefix=(ip netns exec "$LAB_LH" env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR"
		CORDON_NETHELPER="$CORDON_NETHELPER")
	dns=$LAB_DNS4
fi
trap 'rm -rf --one-file-system "$work"; [ -z "$lab" ] || lab_down' EXIT

printf 'cordon concurrent start-up  %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
printf '  kernel: %s   nproc: %s   load at start: %s\n' "$(uname -r)" "$(nproc)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  cordon: %s (%s)   bwrap: %s\n' "$build/cordon" \
	"$(git -C "$top" log -1 --format=%h 2>/dev/null)" \
	"$(bwrap --version 2>/dev/null || echo 'not installed')"

"${prefix[@]}" python3 - "$work" "$rootfs" "$dns" "$rounds" "$ks" "$rows" <<'PY'
import os, shutil, subprocess, sys, time

work, rootfs, dns, rounds, ks, rows = sys.argv[1:7]
rounds = int(rounds)
ks = [int(k) for k in ks.split()]
rows = rows.split()
devnull = os.open('/dev/null', os.O_RDWR)
failures = 0


def argv(row, name):
    if row == 'cordon':
        return [f'{work}/cordon', 'run', '--name', name, rootfs, '--', '/bin/true']
    if row == 'veth':
        return [f'{work}/cordon-lab', 'run', '--name', name, '--net-allow',
                'allowed.test,198.18.1.0/24', '--dns-upstream', dns, rootfs, '--', '/bin/true']
    return ['bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', rootfs, '/',
            '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '/bin/true']


def batch(row, k, tag):
    """K processes released together: (seconds to the last exit, latencies, errors)."""
    r, w = os.pipe()
    kids = {}
    for i in range(k):
        name = f'conc-{tag}-{i}'
        d = os.path.join(work, name)
        os.mkdir(d)
        err = os.open(os.path.join(d, 'err'), os.O_WRONLY | os.O_CREAT, 0o644)
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.chdir(d)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.dup2(err, 2)
            os.read(r, 1)  # the release: EOF when the harness closes w
            try:
                os.execvp(argv(row, name)[0], argv(row, name))
            finally:
                os._exit(127)
        os.close(err)
        kids[pid] = d
    os.close(r)
    t0 = time.monotonic()
    os.close(w)
    lat, errors = [], []
    while kids:
        pid, status = os.waitpid(-1, 0)
        t = time.monotonic() - t0
        d = kids.pop(pid)
        lat.append(t)
        if os.waitstatus_to_exitcode(status) != 0:
            with open(os.path.join(d, 'err')) as f:
                line = (f.readline().strip() or '(no message)')
            errors.append(f'exit {os.waitstatus_to_exitcode(status)}: {line}')
        shutil.rmtree(d)
    return max(lat), lat, errors


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, max(0, int(round(p / 100 * len(vals) + 0.5)) - 1))]


def leftovers():
    """What cordon left of the conc-* sandboxes: state entries, cgroups, links, processes."""
    left = []
    for root in ('/run/cordon',):
        if os.path.isdir(root):
            left += [f'state {root}/{e}' for e in os.listdir(root) if e.startswith('conc-')]
    for base, dirs, files in os.walk('/sys/fs/cgroup'):
        left += [f'cgroup {base}/{d}' for d in dirs if d.startswith('cordon-conc-')]
        if base.count('/') >= 6:
            dirs[:] = []
    out = subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True, text=True).stdout
    left += [f'link {l.split(":")[1].strip()}' for l in out.splitlines() if ': cdr-' in l]
    for p in os.listdir('/proc'):
        try:
            with open(f'/proc/{p}/cmdline', 'rb') as f:
                cmd = f.read().split(b'\0')
        except OSError:
            continue
        if cmd[0].startswith(work.encode()):
            left.append(f'process {p} {b" ".join(cmd).decode(errors="replace")}')
    return left


print(f'  method: K processes forked first, released together; latency = release to '
      f'exit; {rounds} rounds per K (K=1: {10 * rounds} single starts)')
print(f'\n  {"row":<8}{"K":>5}{"sandboxes/s":>13}{"p50 ms":>10}{"p99 ms":>10}'
      f'{"p99/p50(K=1)":>14}{"failures":>10}')
base = {}
for k in ks:
    for row in rows:
        n = 10 * rounds if k == 1 else rounds
        spans, lat, errors = [], [], []
        for j in range(n):
            span, l, e = batch(row, k, f'{row}-{k}-{j}')
            spans.append(span)
            lat += l
            errors += e
        tput = sorted(k / s for s in spans)[len(spans) // 2]
        p50, p99 = pct(lat, 50), pct(lat, 99)
        if k == 1:
            base[row] = p50
        ratio = f'{p99 / base[row]:.1f}x' if row in base else '-'
        print(f'  {row:<8}{k:>5}{tput:>13.1f}{1000 * p50:>10.1f}{1000 * p99:>10.1f}'
              f'{ratio:>14}{len(errors):>6}/{k * n}', flush=True)
        for e in sorted(set(errors)):
            print(f'      {errors.count(e)} x {e}')
        failures += len(errors)
time.sleep(1)
left = leftovers()
for _ in range(30):
    if not left:
        break
    time.sleep(1)
    left = leftovers()
print(f'\n  left behind: {", ".join(left) if left else "nothing"}')
sys.exit(1 if failures or left else 0)
PY
rc=$?
printf '  load at end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
