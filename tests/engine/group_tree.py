# SPDX-License-Identifier: GPL-2.0-or-later
# Runs a command and samples its process tree every 0.2 s: the sum of the
# tree's proportional set sizes (Pss from /proc/PID/smaps_rollup: a page two
# processes share counts half in each, so the sum counts it once, as a
# memory cgroup charges it once), less their file pages (Pss_File): the
# interpreter's binary and libraries are in the page cache before the tree
# starts, and a memory cgroup charges a page of it to the group that read
# it in, not to this tree (the library's rule: src/engine/pagecache.h).
# At the end, on stderr:
# "group_tree: peak_kb=N samples=N procs=N"; the command's exit status.
import os
import subprocess
import sys
import time


def children():
    m = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        m.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
    return m


def pss_kb(pid):
    pss = pss_file = 0
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Pss_File:"):
                    pss_file = int(line.split()[1])
    except OSError:
        pass
    return pss - pss_file


p = subprocess.Popen(sys.argv[1:])
peak = samples = procs = 0
while p.poll() is None:
    m = children()
    tree = [p.pid]
    i = 0
    while i < len(tree):
        tree += m.get(tree[i], [])
        i += 1
    peak = max(peak, sum(pss_kb(x) for x in tree))
    procs = max(procs, len(tree))
    samples += 1
    time.sleep(0.2)
sys.stderr.write("group_tree: peak_kb=%d samples=%d procs=%d\n" % (peak, samples, procs))
sys.exit(p.returncode)
