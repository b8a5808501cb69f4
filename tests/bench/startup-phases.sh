#!/usr/bin/env bash
# tests/bench/startup-phases.sh — where a sandbox's start-up and teardown
# spend their time, from cordon's own trace (not a test).
#
#   tests/bench/startup-phases.sh [-n N] [--variants "V..."] [--build DIR]
#                                 [--cordon PATH] [--rootfs DIR] [--rootless USER]
#                                 [--raw DIR] [-- EXTRA-RUN-ARGS...]
#
#   -n N              starts per variant (default 30, env BENCH_N)
#   --variants "V..." any of: root rootless veth pasta-root pasta-rootless
#                     (default "root rootless"); veth and pasta-* run
#                     `--net-allow allowed.test,198.18.1.0/24 --dns-upstream
#                     LAB_DNS4` inside the private lab (tests/lab/lab.sh, root),
#                     and then every variant runs in the lab host
#   --build DIR       build directory (default build/; the lab variants use its
#                     tests/lab/cordon-lab)
#   --cordon PATH     the cordon binary (default DIR/cordon, or cordon-lab)
#   --rootfs DIR      default DIR/rootfs
#   --rootless USER   the user of the rootless variants (default cordon-test)
#   --raw DIR         keep every trace file there
#   EXTRA-RUN-ARGS    added to every `cordon run` (e.g. --seccomp unconfined)
#
# Each start is `cordon run ROOTFS -- /bin/true` with the defaults (the
# default workspace: each start runs in a fresh directory of the caller's),
# with CORDON_TRACE set to a file of its own. Every cordon process appends
# "PHASE PROCESS NS" when a step ends (CLOCK_MONOTONIC; docs/benchmarks.md
# lists the phases). A harness in python3 starts each cordon itself (as the
# rootless user through setuid in the fork, not runuser) and notes the same
# clock just before the fork and after the wait, so the time before cordon's
# main() (fork, execve, the dynamic loader) and after its last line (its
# exit) are phases too.
#
# Printed per variant:
#   - every phase of every process: the median of its duration, the time
#     since that process's previous line (a process's first line counts from
#     the line its parent wrote before the clone);
#   - the critical path: from the harness's wait back to its fork, each step
#     the one that ended last: the process's own previous step, or the other
#     process whose message woke it (`A -> B` lines: the wake-up, from A's
#     send to B's return). The median of each step over the starts; their
#     sum is near the median wall time.
set -uo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
n=${BENCH_N:-30}
variants="root rootless"
build=$top/build
cordon=
rootfs=
user='cordon-test'
raw=
extra=()
orig=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=$2; shift 2 ;;
	--variants) variants=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--cordon) cordon=$2; shift 2 ;;
	--rootfs) rootfs=$2; shift 2 ;;
	--rootless) user=$2; shift 2 ;;
	--raw) raw=$2; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	*) echo "startup-phases.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
rootfs=${rootfs:-$build/rootfs}

lab=
for v in $variants; do
	case $v in
	root | rootless) ;;
	veth | pasta-root | pasta-rootless) lab=1 ;;
	*) echo "startup-phases.sh: unknown variant $v" >&2; exit 2 ;;
	esac
done
if [ -n "$lab" ]; then
	. "$top/tests/lab/lab.sh"
	lab_isolate "${orig[@]}" ||
		{ echo "startup-phases.sh: the network variants need root (the lab)" >&2; exit 1; }
	lab_up >/dev/null || exit 1
	cordon=${cordon:-$build/tests/lab/cordon-lab}
	prefix=(ip netns exec "$LAB_LH" env CORDON_LAB_PUBLIC_CIDR="$LAB_PUBLIC_CIDR")
	dns=$LAB_DNS4
else
	cordon=${cordon:-$build/cordon}
	prefix=()
	dns=
fi

work=$(mktemp -d /tmp/cordon-phases.XXXXXX)
chmod 755 "$work"
cleanup() { rm -rf "$work"; [ -z "$lab" ] || lab_down; }
trap cleanup EXIT
uid=0 gid=0
if id "$user" >/dev/null 2>&1; then
	uid=$(id -u "$user") gid=$(id -g "$user")
fi

printf 'cordon start-up phases  %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
printf '  kernel: %s   nproc: %s   load at start: %s\n' "$(uname -r)" "$(nproc)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  cordon: %s (%s)\n' "$cordon" "$(git -C "$top" log -1 --format=%h 2>/dev/null)"

"${prefix[@]}" python3 - "$work" "$n" "$cordon" "$rootfs" "$uid" "$gid" "$dns" "$raw" \
	"$variants" "${extra[@]}" <<'PY'
import os, shutil, statistics, subprocess, sys, time

work, n, cordon, rootfs, uid, gid, dns, raw, variants = sys.argv[1:10]
extra = sys.argv[10:]
n, uid, gid = int(n), int(uid), int(gid)
allow = ['--net-allow', 'allowed.test,198.18.1.0/24', '--dns-upstream', dns]
args = {
    'root': ([], False),
    'rootless': ([], True),
    'veth': (allow, False),
    'pasta-root': (['--net-backend', 'pasta'] + allow, False),
    'pasta-rootless': (allow, True),
}

# A message's receipt, and the line of the process that sent it.
WAKE = {
    ('init', 'go-recv'): ('supervisor', 'go'),
    ('supervisor', 'gateway-recv'): ('init', 'gateway-sent'),
    ('init', 'uplink-recv'): ('supervisor', 'uplink-sent'),
    ('init', 'report-recv'): ('workload', 'report'),
    ('supervisor', 'created-recv'): ('init', 'created-sent'),
    ('init', 'start-recv'): ('supervisor', 'start-sent'),
    ('workload', 'release-recv'): ('init', 'release'),
    ('init', 'execed'): ('workload', 'execve'),
    ('supervisor', 'running-recv'): ('init', 'execed'),
}
# A process's first line: its parent's clone of it.
SPAWN = {'init': ('supervisor', 'clone'), 'workload': ('init', 'workload-clone')}


def one(variant, i):
    extra_args, rootless = args[variant]
    d = os.path.join(work, f'{variant}.{i}')
    os.mkdir(d)
    trace = os.path.join(d, 'trace')
    if rootless:
        os.chown(d, uid, gid)
        # HOME elsewhere: the default workspace is the cwd unless it is HOME.
        env = {'PATH': '/usr/bin:/bin', 'HOME': '/nonexistent', 'CORDON_TRACE': trace,
               'CORDON_LAB_PUBLIC_CIDR': os.environ.get('CORDON_LAB_PUBLIC_CIDR', '')}
        kw = dict(user=uid, group=gid, extra_groups=[])
    else:
        env = dict(os.environ, CORDON_TRACE=trace)
        kw = {}
    cmd = [cordon, 'run'] + extra_args + extra + [rootfs, '--', '/bin/true']
    t0 = time.monotonic_ns()
    r = subprocess.run(cmd, cwd=d, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    t1 = time.monotonic_ns()
    if r.returncode != 0:
        sys.exit(f'{variant}: exit {r.returncode}: {r.stderr.decode().strip()}')
    ev = [('harness', 'fork', t0)]
    with open(trace) as f:
        for line in f:
            phase, proc, ns = line.split()
            ev.append((proc, phase, int(ns)))
    ev.append(('harness', 'waited', t1))
    if raw:
        shutil.copy(trace, os.path.join(raw, f'{variant}.{i}.trace'))
    shutil.rmtree(d)
    return ev


def phases(ev):
    """(process, phase) -> duration since that process's previous line."""
    out, last, first = {}, {}, {}
    by = {(p, ph): t for p, ph, t in ev}
    for p, ph, t in ev:
        if p == 'harness':
            continue
        if p not in last:
            src = SPAWN.get(p)
            # The supervisor's first line counts from the fork of cordon.
            prev = by.get(src, by[('harness', 'fork')]) if src else by[('harness', 'fork')]
            key = (p, ph if src else 'exec+load->' + ph)
        else:
            prev, key = last[p], (p, ph)
        out[key] = out.get(key, 0) + t - prev
        last[p] = t
    out[('harness', 'exit+wait')] = by[('harness', 'waited')] - last['supervisor']
    return out


def critical(ev):
    """The steps from the harness's wait back to its fork, each the one that ended last."""
    by = {(p, ph): t for p, ph, t in ev}
    idx = {(p, ph): k for k, (p, ph, t) in enumerate(ev)}
    prev_in = {}
    seen = {}
    for k, (p, ph, t) in enumerate(ev):
        prev_in[k] = seen.get(p)
        seen[p] = k
    steps = {}
    k = len(ev) - 1
    def add(name, dt):
        steps[name] = steps.get(name, 0) + dt
    # waited <- supervisor's last line
    sup_last = max(k2 for k2, e in enumerate(ev) if e[0] == 'supervisor')
    add('supervisor exit, harness wait', ev[k][2] - ev[sup_last][2])
    k = sup_last
    while True:
        p, ph, t = ev[k]
        own = prev_in[k]
        src = WAKE.get((p, ph))
        if own is None:
            sp = SPAWN.get(p)
            if sp:
                j = idx[sp]
                add(f'{sp[0]} {sp[1]} -> {p} {ph}', t - ev[j][2])
                k = j
                continue
            add(f'{p} fork+exec+load -> {ph}', t - by[('harness', 'fork')])
            break
        if src and src in idx and ev[idx[src]][2] > ev[own][2]:
            j = idx[src]
            add(f'{src[0]} {src[1]} -> {p} {ph}', t - ev[j][2])
            k = j
            continue
        add(f'{p} {ph}', t - ev[own][2])
        k = own
    return steps


def ms(ns):
    return ns / 1e6


def report(variant, runs):
    walls = [e[-1][2] - e[0][2] for e in runs]
    wall = statistics.median(walls)
    print(f'\n== {variant}: cordon run {" ".join(args[variant][0] + extra)} ROOTFS -- /bin/true')
    print(f'   {len(runs)} starts; wall (fork to wait) median {ms(wall):.2f} ms, '
          f'min {ms(min(walls)):.2f}, max {ms(max(walls)):.2f}')
    per = [phases(e) for e in runs]
    order = []
    for e in runs:
        for k in phases(e):
            if k not in order:
                order.append(k)
    print(f'   {"process":<11}{"phase":<28}{"median ms":>10}{"of starts":>11}')
    for k in order:
        vals = [p.get(k, 0) for p in per]
        have = sum(1 for p in per if k in p)
        print(f'   {k[0]:<11}{k[1]:<28}{ms(statistics.median(vals)):>10.3f}{have:>8}/{len(runs)}')
    crit = [critical(e) for e in runs]
    names = []
    for e, c in zip(runs, crit):
        for name in reversed(list(c)):
            if name not in names:
                names.append(name)
    print(f'   critical path (median ms of each step over the starts; on the path in how many)')
    tot = 0
    for name in names:
        vals = [c.get(name, 0) for c in crit]
        have = sum(1 for c in crit if name in c)
        med = statistics.median(vals)
        tot += med
        print(f'   {name:<50}{ms(med):>8.3f}{have:>6}/{len(runs)}  {100 * med / wall:5.1f}%')
    print(f'   {"sum of the medians":<50}{ms(tot):>8.3f}')


for variant in variants.split():
    one(variant, 'warm')  # warm-up: caches, the first netfilter ruleset
    runs = [one(variant, i) for i in range(n)]
    report(variant, runs)
PY
rc=$?
printf '\n  load at end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
