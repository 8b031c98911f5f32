# SPDX-License-Identifier: GPL-2.0-or-later
# The members test_eng_group.sh runs under one group limit.
#   kill: a child holding 40 MiB is killed with SIGKILL; its charge must
#         leave the group (memory.current, members), another finishes.
#   cold: an idle child holding 40 MiB and a busy one going over: the idle
#         one's cold pages are taken (the busy one's refaults are said).
#   stop: a child holding 40 MiB stops itself (SIGSTOP) while another
#         needs room for 40 MiB more: the other must finish.
# Each prints what it checked; the group is read with zswapctl stats.
import os
import re
import signal
import subprocess
import sys
import time
import zlib

ZSWAPCTL = sys.argv[2]
MIB = 1 << 20


def counter(pid, name):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run([ZSWAPCTL, "stats", str(pid)], env=env, capture_output=True, text=True).stdout
    m = re.search(r"^%s +(\d+)$" % name, out, re.M)
    return int(m.group(1)) if m else 0


def group():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run([ZSWAPCTL, "stats", str(os.getpid())], env=env, capture_output=True,
                         text=True).stdout
    if "== group" not in out:
        return 0, 0	# the plain run
    sect = out[out.find("== group"):]
    sect = sect[:sect.find("\n==", 1)]
    val = lambda k: int(re.search(r"^%s +(\d+)" % re.escape(k), sect, re.M).group(1))
    return val("memory.current"), val("members")


def hold(mib, seed):
    data = bytearray(bytes((i * 7 + seed) & 255 for i in range(1024))) * (mib * 1024)
    data[::4096] = bytes(range(256)) * (len(data) // 4096 // 256)
    return data


def worker(mib, seed):
    data = hold(mib, seed)
    crc = 0
    for _ in range(2):
        crc = zlib.crc32(data)
    return crc


def fork(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    return pid


def main():
    what = sys.argv[1]
    if what == "kill":
        r, w = os.pipe()
        victim = fork(lambda: (hold(40, 1), os.write(w, b"x"), time.sleep(3600)))
        os.read(r, 1)
        time.sleep(2.5)
        before, n_before = group()
        os.kill(victim, signal.SIGKILL)
        time.sleep(2.5)	# reaped within a second, a zombie as well
        after, n_after = group()
        os.waitpid(victim, 0)
        print("kill: members %d -> %d, memory.current dropped by at least 30 MiB: %s" %
              (n_before, n_after, before - after >= 30 * MIB))
        sys.stderr.write("group_member: current %d -> %d\n" % (before // MIB, after // MIB))
    elif what == "cold":
        # An idle member holding 40 MiB, a busy one going over its 32 MiB
        # ten times: the idle one's cold pages make the room.
        r, w = os.pipe()
        idle = fork(lambda: (hold(40, 4), os.write(w, b"x"), time.sleep(3600)))
        os.read(r, 1)
        time.sleep(3)	# its pages idle past the cold age, published
        r2, w2 = os.pipe()

        def busy():
            data = hold(32, 5)
            for _ in range(10):
                data[::4096] = bytes(len(data) // 4096)
            os.write(w2, b"%d" % counter(os.getpid(), "refaults"))
        other = fork(busy)
        os.close(w2)
        refaults = int(os.read(r2, 32) or b"0")
        os.waitpid(other, 0)
        steal = counter(idle, "pgsteal")
        os.kill(idle, signal.SIGKILL)
        os.waitpid(idle, 0)
        # The idle member's pages made the room: it stored at least 8 MiB,
        # more than the busy member had to bring back of its own.
        print("cold: the idle member made the room: %s" % (steal >= 2048 and refaults < steal))
        sys.stderr.write("group_member: idle pgsteal %d, busy refaults %d\n" % (steal, refaults))
        return
    elif what == "stop":
        r, w = os.pipe()
        sleeper = fork(lambda: (hold(40, 2), os.write(w, b"x"), os.kill(os.getpid(), signal.SIGSTOP)))
        os.read(r, 1)
        time.sleep(1.5)
    # The other member, which must finish either way.
    r, w = os.pipe()
    other = fork(lambda: os.write(w, b"%08x" % worker(40, 3)))
    os.close(w)
    crc = os.read(r, 8).decode()
    os.waitpid(other, 0)
    if what == "stop":
        os.kill(sleeper, signal.SIGCONT)
        os.waitpid(sleeper, 0)
    print("%s: the other member's checksum %s" % (what, crc))


main()
