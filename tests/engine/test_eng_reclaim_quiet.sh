#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An idle tree under a limit costs next to nothing: once a process has been
# calm for a second, its reclaimer reads the charge every 320 ms
# (RECLAIM_POLL_IDLE_MS) instead of every 10 ms. Four members of one group
# (a python parent and three fork children, each holding 8 MiB) sit idle
# under ZSWAP_MEMORY_LIMIT=256M; after two seconds of calm, each member's
# zswap-reclaim thread is counted over three seconds: its voluntary context
# switches (one a sleep) must stay under 40 (about 10 at 320 ms, 300 at
# 10 ms). A count, not a time: a loaded machine makes the sleeps no shorter.
# Then one member writes its 8 MiB again and checks it, the others check
# theirs.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"

cat >"$ENG_TMP/quiet.py" <<'PY'
import os, sys, time
d = sys.argv[1]
data = bytearray(os.urandom(1 << 16) * 128)
kids = []
for i in range(3):
    p = os.fork()
    if p == 0:
        data = bytearray(os.urandom(1 << 16) * 128)
        while not os.path.exists(d + "/go"):
            time.sleep(0.05)
        if i == 0:
            data[:] = bytes(len(data))
            data[::4096] = b"\x01" * (len(data) // 4096)
        ok = all(data[j] == (1 if i == 0 else data[j]) for j in range(0, len(data), 4096))
        print("child", i, "ok" if ok else "BAD")
        os._exit(0)
    kids.append(p)
open(d + "/ready", "w").close()
for p in kids:
    os.waitpid(p, 0)
print("parent", sum(data) & 0xffff)
PY

ENG_TIMEOUT=120
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=256M /usr/bin/python3 "$ENG_TMP/quiet.py" "$ENG_TMP" \
	>"$ENG_TMP/quiet.out" 2>"$ENG_TMP/quiet.err" &
top=$!
n=0
while [ ! -f "$ENG_TMP/ready" ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
sleep 2

# The zswap-reclaim thread of each member: "PID TID".
threads() {
	for p in $top $(pgrep -P $top); do
		for t in /proc/$p/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = zswap-reclaim ] && echo "$p ${t##*/}"
		done
	done
}
switches() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$1/task/$2/status" 2>/dev/null; }

threads >"$ENG_TMP/threads"
nthr=$(wc -l <"$ENG_TMP/threads")
while read -r p t; do echo "$p $t $(switches "$p" "$t")"; done <"$ENG_TMP/threads" >"$ENG_TMP/before"
sleep 3
worst=0
while read -r p t a; do
	b=$(switches "$p" "$t")
	[ -n "$b" ] || continue
	eng_say "member $p: its reclaimer woke $((b - a)) times in 3 s"
	[ $((b - a)) -gt $worst ] && worst=$((b - a))
done <"$ENG_TMP/before"
touch "$ENG_TMP/go"
wait $top
rc=$?

[ "$rc" = 0 ] || eng_fail "the program exited $rc: $(tail -n 3 "$ENG_TMP/quiet.err")"
[ "$nthr" = 4 ] || eng_fail "$nthr reclaimer threads found, expected one in each of the 4 members"
[ "$worst" -lt 40 ] || eng_fail "an idle member's reclaimer woke $worst times in 3 s (a quiet one wakes about 10)"
grep -q BAD "$ENG_TMP/quiet.out" && eng_fail "a member read back other bytes than it wrote"
[ "$(grep -c ' ok$' "$ENG_TMP/quiet.out")" = 3 ] || eng_fail "not every child checked its pages: $(cat "$ENG_TMP/quiet.out")"
n=$(eng_count_libzswap "$ENG_TMP/quiet.err")
[ "$n" = 0 ] || eng_fail "$n libzswap: line(s) on stderr"
eng_finish
