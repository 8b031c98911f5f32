#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# memory.peak, as a memory cgroup keeps it: the highest charge, for the
# process (memory_peak, and "peak" in the summary) and for its group
# (the group section's memory.peak).
#   one    python holds 24 MiB for half a second under 64M, frees it, waits
#          and exits: at exit memory_peak is at least 24 MiB, at least
#          16 MiB over memory_current, and within the limit's bound
#          (L x 1.10 + 8 MiB); the summary names the same peak.
#   group  a parent and a fork child each hold 24 MiB at the same time,
#          then free it; the parent waits for the child and dumps at exit:
#          the group's memory.peak holds both (40 MiB or more), more than
#          the parent's own memory_peak, and the child's pid was a member.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"

MIB=1048576
cat >"$ENG_TMP/peak.py" <<'PY'
import os, sys, time
mode, d = sys.argv[1], sys.argv[2]
def hold(tag):
    b = bytearray(24 << 20)
    b[::4096] = b"\x01" * (len(b) // 4096)
    open(d + "/" + tag, "w").close()
    t = time.time()
    while time.time() - t < 5 and not (os.path.exists(d + "/p") and os.path.exists(d + "/c")):
        time.sleep(0.02)
    time.sleep(0.5)
    s = sum(b[::4096])
    del b
    return s
if mode == "one":
    open(d + "/c", "w").close()
    print(hold("p"))
    time.sleep(0.5)
else:
    pid = os.fork()
    if pid == 0:
        os.write(1, b"child %d\n" % hold("c"))	# one write each: the two share stdout
        os._exit(0)
    os.write(1, b"parent %d\n" % hold("p"))
    os.waitpid(pid, 0)
    time.sleep(0.3)
PY

# one
rm -f "$ENG_TMP/p" "$ENG_TMP/c"
ENG_LABEL=one
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=64M ZSWAP_STATS_AT_EXIT=1 \
	ZSWAP_STATS_FILE="$ENG_TMP/one.st" /usr/bin/python3 "$ENG_TMP/peak.py" one "$ENG_TMP" \
	>"$ENG_TMP/one.out" 2>"$ENG_TMP/one.err" || eng_fail "one: python3 failed: $(cat "$ENG_TMP/one.err")"
[ "$(cat "$ENG_TMP/one.out")" = 6144 ] || eng_fail "one: the pages read back wrong: $(cat "$ENG_TMP/one.out")"
peak=$(eng_dump_stat "$ENG_TMP/one.st" memory_peak)
cur=$(eng_dump_stat "$ENG_TMP/one.st" memory_current)
bound=$((64 * MIB * 110 / 100 + 8 * MIB))
eng_say "one: memory_peak $peak, memory_current $cur at exit (bound $bound)"
if [ -z "$peak" ] || [ -z "$cur" ]; then
	eng_fail "one: no memory_peak or memory_current in the dump"
else
	[ "$peak" -ge $((24 * MIB)) ] || eng_fail "one: memory_peak $peak is under the 24 MiB held"
	[ "$peak" -ge $((cur + 16 * MIB)) ] || eng_fail "one: memory_peak $peak is not 16 MiB over memory_current $cur"
	[ "$peak" -le $bound ] || eng_fail "one: memory_peak $peak is over the bound $bound"
fi
grep -q '^limit  *64.0 MiB, charge [0-9.]* [KMG]*i*B, peak [0-9.]* MiB$' "$ENG_TMP/one.st" ||
	eng_fail "one: the summary's limit line has no peak: $(grep '^limit ' "$ENG_TMP/one.st")"

# group
rm -f "$ENG_TMP/p" "$ENG_TMP/c"
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=128M ZSWAP_STATS_AT_EXIT=1 \
	ZSWAP_STATS_FILE="$ENG_TMP/group.st" /usr/bin/python3 "$ENG_TMP/peak.py" group "$ENG_TMP" \
	>"$ENG_TMP/group.out" 2>"$ENG_TMP/group.err" || eng_fail "group: python3 failed: $(cat "$ENG_TMP/group.err")"
grep -qx 'parent 6144' "$ENG_TMP/group.out" && grep -qx 'child 6144' "$ENG_TMP/group.out" ||
	eng_fail "group: the pages read back wrong: $(cat "$ENG_TMP/group.out")"
# The parent's dump is the last one in the file (the child exits first).
ndumps=$(grep -c '^libzswap .* statistics: pid' "$ENG_TMP/group.st")
awk -v n="$ndumps" '/^libzswap .* statistics: pid/ { k++ } k == n' "$ENG_TMP/group.st" >"$ENG_TMP/group.last"
last=$ENG_TMP/group.last
grep -q "statistics: pid [0-9]* (python3)" "$last" || eng_fail "group: no dump at exit: $(head -c 2000 "$ENG_TMP/group.st")"
gpeak=$(eng_dump_stat "$last" 'memory\.peak')
own=$(eng_dump_stat "$last" memory_peak)
eng_say "group: memory.peak $gpeak, the parent's memory_peak $own"
if [ -z "$gpeak" ] || [ -z "$own" ]; then
	eng_fail "group: no memory.peak or memory_peak in the parent's dump"
else
	[ "$gpeak" -ge $((40 * MIB)) ] || eng_fail "group: memory.peak $gpeak does not hold both members' 24 MiB"
	[ "$gpeak" -gt "$own" ] || eng_fail "group: memory.peak $gpeak is not over the parent's own peak $own"
fi
eng_finish
