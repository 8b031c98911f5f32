# SPDX-License-Identifier: GPL-2.0-or-later
# The group's second tier (test_eng_group_tier.sh).
#
# driver WORK ZSWAPCTL DIR CAP -- COMMAND...: runs COMMAND (the first
# member, under the library) and, from outside the tree, samples every
# 0.05 s the blocks of the members' tier files (st_blocks of each file a
# member holds open, each counted once): the tree's disk use. Prints one
# "check NAME: True|False ..." line per check:
#   cap     the sampled disk use never passed CAP (and 1 MiB of the
#           filesystem's own blocks);
#   dir     every member's tier file is in DIR;
#   dump    the group section of the dump shows memory.swap.max = CAP, the
#           cap reached (memory.swap.events.max) and memory.swap.current =
#           the files' blocks;
#   kill    member 2 killed with SIGKILL: it leaves the table, no member
#           holds its file, and memory.swap.current is the remaining files'
#           blocks again (its bytes left the group's);
#   refill  member 1 writes back into the room member 2 left: the group's
#           disk use is at the cap again;
#   exec    member 1, once it has checked its bytes, execs a program under
#           the library (member 3, the same pid and slot): its old file
#           is gone, and memory.swap.current is the files' blocks again;
#   data    members 0 and 1 read back every byte they wrote.
# member K WORK DIRB: member 0 runs member 2 (TMPDIR=DIRB: a default of its
# own elsewhere) and forks member 1; each holds MEMBER_MIB of random bytes,
# says it is ready, waits for the driver's go and checks them; member 1 then
# execs member 3, which says it is ready and waits for the driver's done.
import os
import random
import re
import signal
import subprocess
import sys
import time
import zlib

MIB = 1 << 20
MEMBER_MIB = 40


def data_of(k):
    r = random.Random(k)
    return b"".join(r.randbytes(MIB) for _ in range(MEMBER_MIB))


def ready(work, k):
    with open("%s/ready-%d.tmp" % (work, k), "w") as f:
        f.write(str(os.getpid()))
    os.rename("%s/ready-%d.tmp" % (work, k), "%s/ready-%d" % (work, k))


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.1)


def member(k, work, dirb):
    if k == 3:
        ready(work, 3)
        wait_for(work + "/done")
        return
    kids = []
    if k == 0:
        env = dict(os.environ, TMPDIR=dirb)
        kids.append(subprocess.Popen([sys.executable, __file__, "member", "2", work, dirb], env=env))
        pid = os.fork()
        if pid == 0:
            member(1, work, dirb)
            os.execv(sys.executable, [sys.executable, __file__, "member", "3", work, dirb])
        kids.append(pid)
    r = random.Random(k)
    data = bytearray(MEMBER_MIB * MIB)
    for i in range(MEMBER_MIB):
        data[i * MIB:(i + 1) * MIB] = r.randbytes(MIB)
    ready(work, k)
    wait_for(work + "/go")
    with open("%s/out-%d" % (work, k), "w") as f:
        f.write("%08x\n" % zlib.crc32(data))
    for kid in kids:
        if isinstance(kid, int):
            os.waitpid(kid, 0)
        else:
            kid.wait()


def tree(root):
    par = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    s = f.read()
            except OSError:
                continue
            par.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
    out = [root]
    i = 0
    while i < len(out):
        out += par.get(out[i], [])
        i += 1
    return out


def tier_files(pids):
    """{(dev, ino): (blocks_bytes, dir, {pids})} of the tier files pids hold."""
    files = {}
    for pid in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            p = "/proc/%d/fd/%s" % (pid, fd)
            try:
                link = os.readlink(p)
                if not link.endswith(" (deleted)"):
                    continue
                name = link[:-len(" (deleted)")]
                base = os.path.basename(name)
                if not (base.startswith("#") or base.startswith(".libzswap-")):
                    continue
                st = os.stat(p)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            e = files.setdefault(key, [st.st_blocks * 512, os.path.dirname(name), set()])
            e[2].add(pid)
    return files


def disk(files):
    return sum(e[0] for e in files.values())


def group(zswapctl, pid):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    out = subprocess.run([zswapctl, "stats", str(pid)], env=env, capture_output=True, text=True).stdout
    sect = out[out.find("== group"):] if "== group" in out else ""
    sect = sect[:sect.find("\n==", 1)]
    val = {}
    for k in ("memory.swap.current", "memory.swap.max", "memory.swap.events.max"):
        m = re.search(r"^%s +(\d+)$" % re.escape(k), sect, re.M)
        val[k] = int(m.group(1)) if m else None
    m = re.search(r"^pids[ =]+(.*)$", sect, re.M)
    val["pids"] = [int(x) for x in m.group(1).split()] if m else []
    return val


def check(name, ok, detail):
    print("check %s: %s %s" % (name, bool(ok), detail), flush=True)


def ctl(zswapctl, *args):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    subprocess.run([zswapctl] + [str(a) for a in args], env=env, capture_output=True)


def driver(work, zswapctl, tdir, cap, cmd):
    tol = MIB
    p = subprocess.Popen(cmd)
    peak = 0
    pids = {}
    dirs = set()

    def sample():
        nonlocal peak
        f = tier_files(tree(p.pid))
        peak = max(peak, disk(f))
        for e in f.values():
            dirs.add(e[1])
        return f

    while p.poll() is None and len(pids) < 3:
        for k in range(3):
            if k not in pids and os.path.exists("%s/ready-%d" % (work, k)):
                with open("%s/ready-%d" % (work, k)) as f:
                    pids[k] = int(f.read())
        time.sleep(0.05)
    if len(pids) < 3:
        check("start", False, "the members did not all start (exit %s)" % p.poll())
        return
    # Every member's bytes into its pool, then to the tier: member 2's
    # first (a part of the cap), then the others', more than the cap.
    for k in (2, 0, 1):
        ctl(zswapctl, "reclaim", pids[k], "%dM" % (MEMBER_MIB + 8))
        ctl(zswapctl, "writeback", pids[k], 2048 if k == 2 else "incompressible")
        sample()
    check("dir", dirs == {tdir}, "tier files in %s (the group's: %s)" % (sorted(dirs), tdir))

    # The dump against the files: read the dump twice around the files so
    # that a write between does not count.
    def agree(want_gone=None):
        for _ in range(100):
            a = group(zswapctl, pids[0])
            f = sample()
            b = group(zswapctl, pids[0])
            cur = a["memory.swap.current"]
            gone = want_gone is None or want_gone not in b["pids"]
            if cur is not None and cur == b["memory.swap.current"] and abs(cur - disk(f)) <= tol and gone:
                return True, a, f
            time.sleep(0.1)
        return False, a, f
    ok, g, f = agree()
    check("dump", ok and g["memory.swap.max"] == cap and (g["memory.swap.events.max"] or 0) > 0,
          "memory.swap.current %s, the files' blocks %d, memory.swap.max %s (cap %d), memory.swap.events.max %s"
          % (g["memory.swap.current"], disk(f), g["memory.swap.max"], cap, g["memory.swap.events.max"]))

    victim = pids[2]
    mine = [k for k, e in f.items() if victim in e[2]]
    before = sum(f[k][0] for k in mine)
    was = g["memory.swap.current"] or 0
    os.kill(victim, signal.SIGKILL)
    ok, g, f = agree(victim)
    held = [k for k in mine if k in f]
    now = g["memory.swap.current"] or 0
    check("kill", ok and before >= MIB and not held and abs(was - before - now) <= tol,
          "member 2 held %d bytes in %d file(s); after SIGKILL: pids %s, memory.swap.current %d -> %d, the "
          "files' blocks %d, its file still held: %s" % (before, len(mine), g["pids"], was, now, disk(f),
                                                         bool(held)))

    ctl(zswapctl, "writeback", pids[1], "incompressible")
    f = sample()
    check("refill", abs(disk(f) - cap) <= tol, "member 1 wrote into the room: %d bytes on disk, cap %d"
          % (disk(f), cap))

    open(work + "/go", "w").close()
    while p.poll() is None and not os.path.exists(work + "/ready-3"):
        sample()
        time.sleep(0.05)
    ok, g, f = agree()
    check("exec", ok, "after member 1's exec: memory.swap.current %s, the files' blocks %d"
          % (g["memory.swap.current"], disk(f)))
    open(work + "/done", "w").close()
    while p.poll() is None:
        sample()
        time.sleep(0.05)
    check("cap", peak <= cap + tol, "peak %d bytes on disk, cap %d" % (peak, cap))
    bad = []
    for k in (0, 1):
        try:
            with open("%s/out-%d" % (work, k)) as fh:
                got = fh.read().strip()
        except OSError:
            got = "none"
        if got != "%08x" % zlib.crc32(data_of(k)):
            bad.append(k)
    check("data", p.returncode == 0 and not bad, "exit %s, members whose bytes differ: %s" % (p.returncode, bad))


if __name__ == "__main__":
    if sys.argv[1] == "member":
        member(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        driver(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[sys.argv.index("--") + 1:])
