#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench_fault_trace.py - read a trace from tools/bench/bench_fault_trace.sh and say
where the time of a refault goes (the program's fault to its next fault),
what a UFFDIO_MOVE call costs and whether it flushes the TLB locally or by
IPI, and how long handlers wait between poll() and read() (fault_defer,
eng.ev_lock's write side).

Usage: tools/bench/bench_fault_trace.py TRACE [FROM [TO]]
FROM, TO: seconds after the trace's first event (the ops phase of
tools/bench/bench_reclaim: after fill_ms, before verify). SHOW_SLOW=N in the
environment lists the first N slow faults (150-600 us) to look up in TRACE.
A measuring tool: it prints means and percentiles, judges nothing.
Timestamps are the trace's (microsecond resolution): means over many
events are finer than that, single events are not.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$')
COPY, WAKE, MOVE, ZERO, POISON = 0xc028aa03, 0x8010aa02, 0xc028aa05, 0xc020aa04, 0xc020aa08
NAMES = {COPY: 'copy', WAKE: 'wake', MOVE: 'move', ZERO: 'zeropage', POISON: 'poison'}


def pct(v, p):
    if not v:
        return 0.0
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def row(name, v, scale=1e6):
    if not v:
        print(f'  {name:44s} n=0')
        return
    m = sum(v) / len(v)
    print(f'  {name:44s} n={len(v):7d} mean={m*scale:8.1f} p50={pct(v,50)*scale:8.1f} '
          f'p90={pct(v,90)*scale:8.1f} p99={pct(v,99)*scale:8.1f} us')


def main():
    path = sys.argv[1]
    comm = {}
    ev = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            task, pid, cpu, ts, name, rest = m.groups()
            pid = int(pid)
            ev.append((float(ts), pid, int(cpu), name, rest))
    # Names: the sched_switch prev_comm/next_comm say what each pid is now.
    for ts, pid, cpu, name, rest in ev:
        if name == 'sched_switch':
            for c, p in re.findall(r'(?:prev|next)_comm=(\S+) (?:prev|next)_pid=(\d+)', rest):
                comm[int(p)] = c
    handlers = {p for p, c in comm.items() if c == 'zswap-fault'}
    reclaimers = {p for p, c in comm.items() if c == 'zswap-reclaim'}
    programs = {p for p, c in comm.items() if c not in ('zswap-fault', 'zswap-reclaim', 'swapper/0',
                                                          'swapper/1') and not c.startswith('migration')
                and not c.startswith('kworker') and not c.startswith('ksoftirq')}
    print(f'handlers {sorted(handlers)} reclaimers {sorted(reclaimers)} programs {sorted(programs)}')

    # Per thread state.
    last_fault = {}          # program pid -> (ts, cpu) of its pending fault
    sleeping_since = {}      # program pid -> ts switched out after a fault
    woken = {}               # program pid -> (ts, waker pid, waker cpu, fault ts, fault cpu)
    h_state = defaultdict(dict)  # handler pid -> info
    sys_open = {}            # pid -> (ts, nr, args)
    ph = defaultdict(list)
    move = defaultdict(list)  # pages -> durations
    move_ipi = defaultdict(list)
    move_ipi_n = defaultdict(int)
    move_state = {}
    ioctl_d = defaultdict(list)
    lockwait = []
    pollwait = []
    cross = same = 0
    per_fault_h = []
    running = {}             # cpu -> pid
    nxt_kind = {}
    r_since = {}
    by_kind = defaultdict(list)
    move_calls = [0]
    move_flush = defaultdict(int)
    cur_rec = {}
    recs = []
    preempt_by = defaultdict(float)
    skip = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    t_from = ev[0][0] + skip if ev else 0
    t_to = ev[0][0] + float(sys.argv[3]) if len(sys.argv) > 3 else float('inf')
    held = {}

    def kind(p):
        if p in handlers:
            return 'handler ' + str(p)
        if p in reclaimers:
            return 'the reclaimer'
        if p == 0:
            return 'idle'
        if p in programs:
            return 'program ' + comm.get(p, '?') + '-' + str(p)
        return 'other (' + comm.get(p, '?') + ')'
    for ts, pid, cpu, name, rest in ev:
        if (ts < t_from or ts > t_to) and name not in ('sched_switch',):
            continue
        if name == 'sched_switch':
            m = re.search(r'prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=\S+ next_pid=(\d+)', rest)
            prev, state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
            running[cpu] = nxt
            if prev in programs and prev in last_fault and state.startswith(('S', 'D')):
                sleeping_since[prev] = ts
                f = last_fault[prev]
                if f[0] >= t_from:
                    nxt_kind[prev] = kind(nxt)
            if nxt in programs and nxt in woken:
                w = woken.pop(nxt)
                ph['5 woken -> program runs'].append(ts - w[0])
                if nxt in last_fault:
                    f = last_fault[nxt]
                    ph['T fault -> program runs again'].append(ts - f[0])
                    r = cur_rec.pop(nxt, None)
                    if r is not None:
                        r['T'] = ts - f[0]
                        r['t0'] = f[0]
                        r['5'] = ts - w[0]
                        recs.append(r)
                    if nxt in nxt_kind:
                        by_kind[nxt_kind.pop(nxt)].append(ts - f[0])
                h_state[nxt]['ran'] = ts
            if prev in handlers and state.startswith('R'):
                h_state[prev]['out'] = ts
                h_state[prev]['out_to'] = kind(nxt)
            if nxt in handlers:
                h_state[nxt]['in'] = ts
                hs = h_state[nxt]
                if 'out' in hs:
                    hs.setdefault('gaps', []).append((hs.pop('out'), ts, hs.pop('out_to')))
            if prev in reclaimers:
                r_since.pop(cpu, None)
            if nxt in reclaimers:
                r_since[cpu] = ts
            continue
        if name == 'page_fault_user' and pid in programs:
            a = int(re.search(r'address=0x([0-9a-f]+)', rest).group(1), 16)
            # A fault that then sleeps is a userfault; others (first touch of
            # the program's own stack etc.) are left out later.
            st = h_state[pid]
            if 'ran' in st and pid in last_fault and last_fault[pid][2]:
                ph['6 program runs -> its next fault'].append(ts - st['ran'])
            last_fault[pid] = (ts, cpu, False, a)
            continue
        if name == 'sched_wakeup':
            m = re.search(r'pid=(\d+) .*target_cpu=(\d+)', rest)
            tgt, tcpu = int(m.group(1)), int(m.group(2))
            if tgt in programs and tgt in last_fault and pid in handlers and tgt in sleeping_since:
                f = last_fault[tgt]
                last_fault[tgt] = (f[0], f[1], True, f[3])
                woken[tgt] = (ts, pid, cpu, f[0], f[1])
                rec = {'wake_cpu_same': cpu == f[1]}
                cur_rec[tgt] = rec
                del sleeping_since[tgt]
                hs = h_state[pid]
                if cpu == f[1]:
                    same += 1
                else:
                    cross += 1
                # Walk the handler's own marks for this fault.
                if hs.get('poll_exit', 0) >= f[0] - 1e-6:
                    ph['1 fault -> handler poll returns'].append(hs['poll_exit'] - f[0])
                    rec['1'] = hs['poll_exit'] - f[0]
                    if hs.get('read_enter', 0) >= hs['poll_exit']:
                        ph['2 poll returns -> read (defer, ev_lock write)'].append(hs['read_enter'] - hs['poll_exit'])
                        rec['2'] = hs['read_enter'] - hs['poll_exit']
                        if hs.get('copy_enter', 0) >= hs['read_exit']:
                            ph['3 read done -> COPY (lookup, claim, load)'].append(hs['copy_enter'] - hs['read_exit'])
                            rec['3'] = hs['copy_enter'] - hs['read_exit']
                            rec['4'] = ts - hs['copy_enter']
                            ph['4a COPY'].append(hs['copy_exit'] - hs['copy_enter'])
                            ph['4b COPY done -> wake sent'].append(ts - hs['copy_exit'])
                    ph['H handler: poll returns -> wake sent'].append(ts - hs['poll_exit'])
                if hs.get('in', 0) >= f[0]:
                    ph['0 fault -> handler switched in'].append(hs['in'] - f[0])
                # Time the handler was preempted since it started this fault.
                pre = 0
                for a, b, k in hs.get('gaps', []):
                    d = b - max(a, f[0])
                    if d > 0:
                        pre += d
                        preempt_by[k] += d
                hs['gaps'] = []
                ph['P handler preempted (runnable, not running)'].append(pre)
                rec['P'] = pre
                rec['H'] = ts - f[0]
                rec['held'] = hs.pop('held', 0)
            continue
        if name == 'sys_enter':
            m = re.match(r'NR (\d+) \(([0-9a-f]+), ([0-9a-f]+)', rest)
            nr = int(m.group(1))
            sys_open[pid] = (ts, nr, int(m.group(3), 16))
            if pid in handlers:
                hs = h_state[pid]
                if nr == 0:
                    hs['read_enter'] = ts
                elif nr == 16 and int(m.group(3), 16) == COPY:
                    hs['copy_enter'] = ts
            if nr == 16 and int(m.group(3), 16) == MOVE:
                move_state[pid] = [ts, 0]
                move_calls[0] += 1
            continue
        if name == 'tlb_flush' and pid in move_state:
            move_flush[rest.split('reason:')[-1]] += 1
            continue
        if name in ('ipi_send_cpu', 'ipi_send_cpumask') and pid in move_state:
            if 'on_each_cpu' in rest or 'flush_tlb' in rest or 'smp_call_function_many' in rest:
                move_state[pid][1] += 1
            continue
        if name == 'sys_exit':
            m = re.match(r'NR (\d+) = (-?\d+)', rest)
            nr, ret = int(m.group(1)), int(m.group(2))
            o = sys_open.pop(pid, None)
            if not o:
                continue
            d = ts - o[0]
            if nr == 16:
                ioctl_d[(NAMES.get(o[2], hex(o[2])), 'handler' if pid in handlers else
                         'reclaimer' if pid in reclaimers else 'program')].append(d)
                if o[2] == MOVE and pid in move_state:
                    ms = move_state.pop(pid)
                    pages = max(ret, 0) // 4096
                    key = pages if pages <= 8 else (16 if pages <= 16 else (64 if pages <= 64 else 512))
                    (move_ipi if ms[1] else move)[key].append(d)
                    move_ipi_n[key] += 1 if ms[1] else 0
            if pid in handlers:
                hs = h_state[pid]
                if nr == 7:
                    if o[2] == 2:
                        hs['held'] = hs.get('held', 0) + d
                    hs['poll_exit'] = ts
                    pollwait.append(d)
                elif nr == 0:
                    hs['read_exit'] = ts
                elif nr == 16 and o[2] == COPY:
                    hs['copy_exit'] = ts
            continue
    print(f'wakes of a program thread by a handler: same CPU {same}, other CPU {cross}')
    print('A refault, program side and handler side (phases are sequential):')
    for k in sorted(ph):
        row(k, ph[k])
    print('fault -> program runs again, by what the faulting CPU ran first after the program slept:')
    for k in sorted(by_kind):
        row(k, by_kind[k])
        print(f'    share of the total time: {sum(by_kind[k]) / max(1e-9, sum(ph["T fault -> program runs again"])):.2f}')
    print('handler preempted while serving, by what ran instead (seconds in all):')
    for k, v in sorted(preempt_by.items(), key=lambda x: -x[1]):
        print(f'    {k:30s} {v:8.3f} s')
    T = ph['T fault -> program runs again']
    tot = sum(T)
    for lim in (50e-6, 100e-6, 200e-6, 1e-3):
        sl = [t for t in T if t > lim]
        print(f'  faults over {lim*1e6:5.0f} us: {len(sl):6d} ({100*len(sl)/max(1,len(T)):.1f}%), {sum(sl):.3f} s of {tot:.3f} s ({100*sum(sl)/max(tot,1e-9):.0f}%)')
    for lim in (0, 100e-6):
        sub = [r for r in recs if r['T'] > lim]
        print(f'faults over {lim*1e6:.0f} us ({len(sub)}): mean per phase (us; 1+2+3+4 = fault to wake; P overlaps them):')
        for k in ('1', '2', '3', '4', 'H', '5', 'P', 'held', 'T'):
            v = [r[k] for r in sub if k in r]
            print(f'    {k}: n={len(v):6d} mean={1e6*sum(v)/max(1,len(v)):8.1f}  sum={sum(v):.3f} s')
        print(f'    woken from the other CPU: {sum(1 for r in sub if not r["wake_cpu_same"])}; held (throttled) faults: {sum(1 for r in sub if r.get("held"))}')
        nh = [r for r in sub if not r.get('held')]
        print(f'    not held: n={len(nh)} T sum={sum(r["T"] for r in nh):.3f} s; 1={sum(r.get("1",0) for r in nh):.3f} 2={sum(r.get("2",0) for r in nh):.3f} 3={sum(r.get("3",0) for r in nh):.3f} 4={sum(r.get("4",0) for r in nh):.3f} 5={sum(r.get("5",0) for r in nh):.3f} P={sum(r.get("P",0) for r in nh):.3f}')
    import os
    if os.environ.get('SHOW_SLOW'):
        lo, hi = (float(x) * 1e-6 for x in os.environ.get('SLOW_US', '150-600').split('-'))
        for r in [r for r in recs if lo < r['T'] < hi and not r.get('held')][:int(os.environ['SHOW_SLOW'])]:
            print(f"slow fault at {r['t0']:.6f}: T {r['T']*1e6:.0f} us")
    print('ioctls (duration):')
    for k in sorted(ioctl_d):
        row(f'{k[0]} by {k[1]}', ioctl_d[k])
    print(f'UFFDIO_MOVE calls {move_calls[0]}; tlb_flush events during them, per call:')
    for k, v in sorted(move_flush.items()):
        print(f'    {k:40s} {v / max(1, move_calls[0]):.3f}')
    print('UFFDIO_MOVE calls (the pages moved are not in the trace), with / without a TLB-flush IPI:')
    for k in sorted(set(move) | set(move_ipi)):
        row('without an IPI', move[k])
        row('with an IPI', move_ipi[k])


main()
