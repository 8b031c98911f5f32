#!/usr/bin/python3.11
# SPDX-License-Identifier: GPL-2.0-or-later
"""peer_suite.py - CPython's own regression tests, plainly and under libzswap.

Runs `python3.11 -m test` (Debian's libpython3.11-testsuite, written by
nobody here) once per mode, side by side, and reports every difference from
the plain run, test module by test module and test case by test case:

  plain    no library
  default  LD_PRELOAD=libzswap.so, nothing else set (what a user gets)
  limit    also ZSWAP_MEMORY_LIMIT (32M) and ZSWAP_COLD_AGE (1 s), so that
           reclaim runs during the tests; every process writes its
           statistics at exit to OUT/limit.stats/ (how much was reclaimed
           is part of the report)

In both library modes the library's own messages go to OUT/MODE.libzswap.log
(ZSWAP_LOG_FILE), not into the workers' output that regrtest parses; the
summary counts them.

The library is preloaded into regrtest's workers (its --python option: each
test module runs in a worker, and every program a test starts inherits the
environment), not into regrtest's own parent, which only collects results:
under the limit mode's 32 MiB the parent's growing result set would thrash
and time the run out without telling anything about the tests. With
--python regrtest does not re-run failures itself (no -w); the confirmation
runs below do that, in both modes alike.

A difference is confirmed by running its module again, alone, in the plain
mode and in the mode that differed (--confirm times); one that never shows
again is reported as not reproduced and does not count. A confirmed
difference listed in tests/peer/peer_suite.inherent (libzswap(7) says why) is
reported as inherent and does not count either; a module that failed as a
whole in the full run (a timeout) is judged by the cases its confirmation
runs name.

--from DIR judges the runs an earlier invocation left in DIR (each mode's,
each confirmation's) without running them again; what is missing is run.

Usage: tests/peer/peer_suite.sh [options] [test ...]   (see peer_suite.sh)
Exit: 0 no difference left, 1 differences, 2 could not run.
"""

import argparse
import fnmatch
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

PY = "/usr/bin/python3.11"
BAD = ("failed", "env_changed", "omitted")


def plain_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("ZSWAP_") or k == "LD_PRELOAD":
            del env[k]
    return env


def mode_env(mode, args):
    """The variables a worker of this mode gets on top of the plain environment."""
    env = {}
    if mode == "plain":
        return env
    env["LD_PRELOAD"] = args.lib
    # regrtest's workers send their result as JSON on the stdout they share
    # with stderr: the library's own lines go to a file (libzswap(7),
    # DIAGNOSTICS), counted in the summary.
    env["ZSWAP_LOG_FILE"] = os.path.join(args.out, mode + ".libzswap.log")
    if mode == "limit":
        env["ZSWAP_MEMORY_LIMIT"] = args.limit
        env["ZSWAP_COLD_AGE"] = str(args.cold_age)
        env["ZSWAP_STATS_AT_EXIT"] = "1"
        env["ZSWAP_STATS_FORMAT"] = "json"
        env["ZSWAP_STATS_FILE"] = os.path.join(args.out, "limit.stats", "%p.json")
    return env


def regrtest(mode, tests, tag, args):
    """One run of regrtest; returns (module statuses, case outcomes, seconds)."""
    base = os.path.join(args.out, tag)
    tmp = base + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    worker = " ".join(shlex.quote(w) for w in
                      ["env"] + ["%s=%s" % kv for kv in sorted(mode_env(mode, args).items())] + [PY])
    cmd = [PY, "-m", "test", "-j%d" % args.jobs, "--timeout", str(args.timeout),
           "--python", worker, "--junit-xml", base + ".xml", "--tempdir", tmp] + \
        args.regrtest_args + tests
    t0 = time.monotonic()
    with open(base + ".log", "w") as log:
        subprocess.run(cmd, env=plain_env(), stdout=log, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, cwd=tmp)
    secs = time.monotonic() - t0
    return parse_log(base + ".log", tests), parse_xml(base + ".xml", tests), secs


SECTIONS = [
    (re.compile(r"^\d+ tests? failed:$"), "failed"),
    (re.compile(r"^\d+ tests? altered the execution environment:$"), "env_changed"),
    (re.compile(r"^\d+ tests? skipped:$"), "skipped"),
    (re.compile(r"^\d+ tests? omitted:$"), "omitted"),
    (re.compile(r"^\d+ re-run tests?:$"), "rerun"),
    (re.compile(r"^\d+ tests? run no tests:$"), "no_tests"),
]


def parse_log(path, tests):
    """Module name -> status, from the result lists regrtest prints last."""
    lists = {name: set() for _, name in SECTIONS}
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    try:
        start = max(i for i, l in enumerate(lines) if l.startswith("== Tests result:"))
    except ValueError:
        return None                     # regrtest itself did not finish
    cur = None
    for line in lines[start + 1:]:
        if not line.strip():
            cur = None
            continue
        for rx, name in SECTIONS:
            if rx.match(line):
                cur = name
                break
        else:
            if cur and line.startswith("    "):
                lists[cur].update(line.split())
    status = {}
    for t in tests:
        for name in ("omitted", "failed", "env_changed", "skipped", "no_tests"):
            if t in lists[name]:
                status[t] = name
                break
        else:
            status[t] = "flaky" if t in lists["rerun"] else "ok"
    return status


def finished(base, tests):
    """An earlier run's (statuses, cases, seconds) from base.log and base.xml,
    or None when there is none or it did not finish."""
    try:
        text = open(base + ".log", errors="replace").read()
    except OSError:
        return None
    st = parse_log(base + ".log", tests)
    if st is None:
        return None
    m = re.search(r"^Total duration: (?:(\d+) hour )?(?:(\d+) min )?([\d.]+) sec", text, re.M)
    secs = (int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3))) if m else 0
    return st, parse_xml(base + ".xml", tests), secs


def parse_xml(path, tests):
    """(module, test id) -> pass/fail/skip. A case inherited from a helper module (test.fork_wait in
    test_wait4) belongs to the module whose suite ran it."""
    cases = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return cases
    known = set(tests)
    for suite in root.iter("testsuite"):
        tcs = list(suite.iter("testcase"))
        mods = [module_of(tc.get("name", "")) for tc in tcs]
        owners = [m for m in mods if m in known] or mods or ["?"]
        mod = max(set(owners), key=owners.count)
        for tc in tcs:
            kinds = {c.tag for c in tc}
            if kinds & {"failure", "error"}:
                outcome = "fail"
            elif "skipped" in kinds:
                outcome = "skip"
            else:
                outcome = "pass"
            cases[(mod, tc.get("name", ""))] = outcome
    return cases


def module_of(case):
    parts = case.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "test" else parts[0]


def differences(plain, other):
    """What the other run does worse than the plain one: {module: [reason, ...]}."""
    (pst, pcs), (ost, ocs) = plain, other
    diffs = {}
    for mod, s in ost.items():
        ps = pst.get(mod, "ok")
        if s in BAD and ps not in BAD:
            diffs.setdefault(mod, []).append("module %s (plain: %s)" % (s, ps))
        elif s in ("skipped", "no_tests") and ps not in ("skipped", "no_tests") + BAD:
            diffs.setdefault(mod, []).append("module %s (plain: %s)" % (s, ps))
    for case, o in ocs.items():
        p = pcs.get(case)
        if p is None or p == o or p == "fail":
            continue
        if o == "fail" or (o == "skip" and p == "pass"):
            diffs.setdefault(case[0], []).append("%s: %s (plain: %s)" % (case[1], o, p))
    return diffs


def load_inherent(path):
    rules = []
    if not os.path.exists(path):
        return rules
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                mode, pattern = line.split()[:2]
                rules.append((mode, pattern))
    return rules


def inherent(mode, mod, reasons, rules):
    """True when every reason names a case (or the module) the rules excuse."""
    def excused(name):
        return any(fnmatch.fnmatch(mode, m) and fnmatch.fnmatch(name, p) for m, p in rules)
    for r in reasons:
        name = r.split(":")[0] if not r.startswith("module ") else mod
        if r.startswith("module ") and any(not x.startswith("module ") for x in reasons):
            continue                    # the cases that failed say why the module did
        if not excused(name):
            return False
    return True


def limit_stats(out):
    procs = reclaimed = zswpout = zswpin = 0
    for p in glob.glob(os.path.join(out, "limit.stats", "*.json")):
        try:
            with open(p, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        dec, pos, d = json.JSONDecoder(), 0, None
        while True:                     # a file may hold several dumps: the last counts
            pos = text.find("{", pos)
            if pos < 0:
                break
            try:
                d, pos = dec.raw_decode(text, pos)
            except ValueError:
                break
        if not isinstance(d, dict):
            continue
        procs += 1
        out_pages = d.get("vmstat", {}).get("zswpout", 0)
        zswpout += out_pages
        zswpin += d.get("vmstat", {}).get("zswpin", 0)
        reclaimed += out_pages > 0
    return procs, reclaimed, zswpout, zswpin


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--modes", default="plain default limit")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--confirm", type=int, default=2)
    ap.add_argument("--limit", default="32M")
    ap.add_argument("--cold-age", type=int, default=1)
    ap.add_argument("--inherent", default=os.path.join(os.path.dirname(__file__), "peer_suite.inherent"))
    ap.add_argument("--regrtest-args", default="")
    ap.add_argument("--plain-from", default="",
                    help="read the plain run from DIR/plain.log and plain.xml, a finished run of the same tests")
    ap.add_argument("--from", dest="reuse", default="",
                    help="read every run DIR holds (each mode's, each confirmation's) instead of running it again")
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()
    args.regrtest_args = args.regrtest_args.split()
    modes = args.modes.split()
    if "plain" not in modes:
        modes.insert(0, "plain")
    os.makedirs(args.out, exist_ok=True)
    if "limit" in modes:
        os.makedirs(os.path.join(args.out, "limit.stats"), exist_ok=True)

    tests = args.tests
    if not tests:
        r = subprocess.run([PY, "-m", "test", "--list-tests"] + args.regrtest_args,
                           env=plain_env(), capture_output=True, text=True)
        tests = r.stdout.split()
    if not tests:
        print("peer_suite: no tests found (is libpython3.11-testsuite installed?)", file=sys.stderr)
        return 2

    runs, secs = {}, {}
    for mode in modes:
        if not args.reuse:
            try:
                os.unlink(os.path.join(args.out, mode + ".libzswap.log"))
            except FileNotFoundError:
                pass
        src = args.reuse or (args.plain_from if mode == "plain" else "")
        if src:
            base = os.path.join(src, mode)
            print("peer_suite: %s: read from %s.log" % (mode, base), flush=True)
            found = finished(base, tests)
            if found is None:
                print("peer_suite: %s.log is not a finished run" % base, file=sys.stderr)
                return 2
            st, cs, secs[mode] = found
            runs[mode] = (st, cs)
            continue
        print("peer_suite: %s: %d test modules..." % (mode, len(tests)), flush=True)
        st, cs, secs[mode] = regrtest(mode, tests, mode, args)
        if st is None:
            print("peer_suite: %s: regrtest did not finish, see %s/%s.log" % (mode, args.out, mode),
                  file=sys.stderr)
            return 2
        runs[mode] = (st, cs)

    rules = load_inherent(args.inherent)
    worst = 0
    report = open(os.path.join(args.out, "differences.txt"), "w")
    for mode in modes[1:]:
        diffs = differences(runs["plain"], runs[mode])
        confirmed, gone, excused = {}, [], []
        for mod, reasons in sorted(diffs.items()):
            seen = []
            for i in range(args.confirm):
                tag = "%s.confirm.%s.%d" % (mode, mod, i)
                p = args.reuse and finished(os.path.join(args.reuse, tag + ".plain"), [mod])
                p = p or regrtest("plain", [mod], tag + ".plain", args)
                o = args.reuse and finished(os.path.join(args.reuse, tag), [mod])
                o = o or regrtest(mode, [mod], tag, args)
                if p[0] is None or o[0] is None:
                    seen.append("regrtest did not finish (%s)" % tag)
                    continue
                seen += differences(p[:2], o[:2]).get(mod, [])
            if not seen:
                gone.append(mod)
            elif inherent(mode, mod, reasons + seen, rules):
                excused.append(mod)
            else:
                confirmed[mod] = reasons
        st = runs[mode][0]
        pst = runs["plain"][0]
        def counts(s):
            c = {}
            for v in s.values():
                c[v] = c.get(v, 0) + 1
            return ", ".join("%d %s" % (n, k) for k, n in sorted(c.items()))
        for mod, reasons in confirmed.items():
            for r in reasons:
                print("%s: %s: %s" % (mode, mod, r), file=report)
        for mod in excused:
            for r in diffs[mod]:
                print("%s: %s: inherent: %s" % (mode, mod, r), file=report)
        for mod in gone:
            for r in diffs[mod]:
                print("%s: %s: not reproduced in %d runs: %s" % (mode, mod, args.confirm, r),
                      file=report)
        logf = os.path.join(args.reuse or args.out, mode + ".libzswap.log")
        nlog = sum(1 for _ in open(logf, errors="replace")) if os.path.exists(logf) else 0
        extra = "; %d libzswap messages (%s)" % (nlog, logf)
        if mode == "limit":
            procs, rec, zout, zin = limit_stats(args.reuse or args.out)
            extra += "; %d processes dumped statistics, %d of them reclaimed (zswpout %d pages, " \
                    "zswpin %d)" % (procs, rec, zout, zin)
        print("peer_suite: cpython %s vs plain: %d modules, %d cases compared; plain: %s; %s: %s; "
              "%d differences (%d inherent, %d not reproduced)%s; %.0f s vs %.0f s plain"
              % (mode, len(tests), len(set(runs[mode][1]) & set(runs["plain"][1])), counts(pst),
                 mode, counts(st), len(confirmed), len(excused), len(gone), extra,
                 secs[mode], secs["plain"]))
        for mod, reasons in confirmed.items():
            print("  %s: %s" % (mod, "; ".join(reasons[:3]) + (" ..." if len(reasons) > 3 else "")))
        if confirmed:
            worst = 1
    report.close()
    print("peer_suite: details in %s" % args.out)
    return worst


if __name__ == "__main__":
    sys.exit(main())
