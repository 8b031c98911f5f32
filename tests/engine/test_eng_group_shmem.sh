#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared memory counts once in a group, as a memory cgroup charges a
# shared page once: a python parent maps 32 MiB of MAP_SHARED memory and
# writes it, forks, and its child writes every page too; both then wait.
# Each member's own charge holds most of the 32 MiB (memory_current: the
# file pages the charge leaves to others are subtracted from the shared
# and file pages together, src/engine/pagecache.h), and the
# group's memory.current, read while both wait, must count them once:
# under the parent's charge and the child's anonymous memory, far under
# the two charges summed (which it was while each member counted the
# shared pages whole). The pages read back as the child wrote them.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
eng_ctl_private
MIB=1048576

cat >"$ENG_TMP/shm.py" <<'PY'
import mmap, os, sys, time
d = sys.argv[1]
m = mmap.mmap(-1, 32 << 20, flags=mmap.MAP_SHARED)
for i in range(0, 32 << 20, 4096):
    m[i] = 1
pid = os.fork()
if pid == 0:
    for i in range(0, 32 << 20, 4096):
        m[i] = 2
    open(d + "/child", "w").close()
    while not os.path.exists(d + "/done"):
        time.sleep(0.05)
    os._exit(0)
while not os.path.exists(d + "/child"):
    time.sleep(0.05)
open(d + "/ready", "w").close()
while not os.path.exists(d + "/done"):
    time.sleep(0.05)
os.waitpid(pid, 0)
print(sum(m[i] for i in range(0, 32 << 20, 4096)))
PY

env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=256M /usr/bin/python3 "$ENG_TMP/shm.py" "$ENG_TMP" \
	>"$ENG_TMP/shm.out" 2>"$ENG_TMP/shm.err" &
top=$!
n=0
while [ ! -f "$ENG_TMP/ready" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
[ -f "$ENG_TMP/ready" ] || eng_fail "the program did not get ready: $(cat "$ENG_TMP/shm.err")"
# A member looks at what it shares once a second at most: two looks.
sleep 2.5
"$ctl" stats "$top" >"$ENG_TMP/stats" 2>"$ENG_TMP/stats.err" || eng_fail "zswapctl stats failed: $(cat "$ENG_TMP/stats.err")"
child=$(pgrep -P "$top" | head -n 1)
"$ctl" stats "$child" >"$ENG_TMP/cstats" 2>"$ENG_TMP/cstats.err" ||
	eng_fail "zswapctl stats of the child failed: $(cat "$ENG_TMP/cstats.err")"
touch "$ENG_TMP/done"
wait "$top" || eng_fail "python3 failed: $(cat "$ENG_TMP/shm.err")"
[ "$(cat "$ENG_TMP/shm.out")" = 16384 ] || eng_fail "the shared pages read back wrong: $(cat "$ENG_TMP/shm.out")"

val() { sed -n "s/^$2  *\([0-9]*\)\$/\1/p" "$1" | head -n 1; }
own=$(val "$ENG_TMP/stats" memory_current)
cown=$(val "$ENG_TMP/cstats" memory_current)
group=$(val "$ENG_TMP/stats" 'memory\.current')
eng_say "the parent's charge $own, the child's $cown, the group's memory.current $group"
if [ -z "$own" ] || [ -z "$cown" ] || [ -z "$group" ]; then
	eng_fail "no memory_current or memory.current in zswapctl stats: $(head -c 1500 "$ENG_TMP/stats")"
else
	[ "$own" -ge $((24 * MIB)) ] && [ "$cown" -ge $((24 * MIB)) ] ||
		eng_fail "a member's own charge does not hold the 32 MiB it maps: $own, $cown"
	[ "$group" -le $((own + cown - 24 * MIB)) ] ||
		eng_fail "the group counts the shared memory twice: $group against $own + $cown"
	[ "$group" -ge $((16 * MIB)) ] || eng_fail "the group counts less than half the shared memory: $group"
fi
eng_finish
