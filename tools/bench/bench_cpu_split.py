#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench_cpu_split.py - what one CPU ran during a program's slowest refaults,
from a trace of tools/bench/bench_fault_trace.sh run on a command pinned to
that CPU (taskset -c CPU): waiting for the CPU, or work of the program's own.

Each refault is timed from one fault of the program's main thread (the
thread of PROG, its comm, with the most page_fault_user events) to its
next, unless the thread slept in between (clock_nanosleep or nanosleep:
the program waiting between rounds, not a refault). Over each of the N slowest, the CPU's sched_switch timeline says who
ran: the program's threads (PROG and the library's zswap-* threads, each
named), the benchmark's driver (DRIVER comms: its shell, its zswapctl and
sleep processes), other processes, or nothing (idle). The switch window is
from the first to the last event of a zswapctl process; the steady window
is before it.

Usage: tools/bench/bench_cpu_split.py TRACE [CPU [N [PROG]]]
(defaults: CPU 1, N 10, PROG bench_compswitch). A measuring tool: it
prints the split, judges nothing.
"""
import bisect
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
SWITCH = re.compile(r'prev_comm=(.*?) prev_pid=(\d+) .*?==> next_comm=(.*?) next_pid=(\d+)')
DRIVER = ('sh', 'sleep', 'ls', 'zswapctl')
SLEEPS = ('NR 35 ', 'NR 230 ')	# nanosleep, clock_nanosleep (x86-64)


def main():
    path = sys.argv[1]
    cpu = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    worst = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    prog = (sys.argv[4] if len(sys.argv) > 4 else 'bench_compswitch')[:15]
    faults = defaultdict(list)
    sleeps = defaultdict(list)
    comm_of = {}
    switches = []
    ctl = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, pid, on, ts, ev, args = (m.group(1).strip(), int(m.group(2)), int(m.group(3)),
                                           float(m.group(4)), m.group(5), m.group(6))
            comm_of[pid] = comm
            if ev == 'page_fault_user':
                faults[pid].append(ts)
            elif ev == 'sys_enter' and args.startswith(SLEEPS):
                sleeps[pid].append(ts)
            elif ev == 'sched_switch' and on == cpu:
                s = SWITCH.search(args)
                if s:
                    switches.append((ts, s.group(3), int(s.group(4))))
            if comm.startswith('zswapctl'):
                ctl.append(ts)
    mains = [p for p in faults if comm_of.get(p, '').startswith(prog)]
    if not mains or not ctl:
        sys.exit('bench_cpu_split.py: no faults of %s, or no zswapctl process, in %s' % (prog, path))
    main_tid = max(mains, key=lambda p: len(faults[p]))
    own = {p for p, c in comm_of.items() if c.startswith(prog) or c.startswith('zswap-')}

    def who(comm, pid):
        if pid == 0:
            return 'idle'
        if pid in own:
            return comm
        if comm.startswith(DRIVER):
            return 'driver'
        return 'others'

    segs = [(a[0], b[0], who(a[1], a[2])) for a, b in zip(switches, switches[1:])]
    naps = sorted(sleeps[main_tid])

    def slept(a, b):
        i = bisect.bisect_right(naps, a)
        return i < len(naps) and naps[i] < b

    t0, t1 = min(ctl), max(ctl)
    for label, lo, hi in (('steady', float('-inf'), t0), ('switch', t0, t1)):
        ts = [t for t in faults[main_tid] if lo <= t <= hi]
        iv = [(ts[i + 1] - ts[i], ts[i]) for i in range(len(ts) - 1) if not slept(ts[i], ts[i + 1])]
        n = len(iv)
        iv = sorted(iv, reverse=True)[:worst]
        total = defaultdict(float)
        print(f'{label}: the {len(iv)} slowest of {n} refaults, us: what CPU {cpu} ran')
        for dur, a in iv:
            d = defaultdict(float)
            for s, e, k in segs:
                x, y = max(s, a), min(e, a + dur)
                if y > x:
                    d[k] += y - x
            for k, v in d.items():
                total[k] += v
            print(f'  {dur * 1e6:9.0f}: ' + ', '.join(f'{k} {v * 1e6:.0f}'
                                                    for k, v in sorted(d.items(), key=lambda x: -x[1])))
        s = sum(total.values()) or 1
        print('  share: ' + ', '.join(f'{k} {v / s * 100:.0f}%' for k, v in sorted(total.items(), key=lambda x: -x[1])))


if __name__ == '__main__':
    main()
