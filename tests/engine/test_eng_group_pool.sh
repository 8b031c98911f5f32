#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One limit for a process tree (ZSWAP_MEMORY_SCOPE=tree, the default):
# Python's multiprocessing Pool, four workers each building and checking
# ~30 MiB of records, the tree's data about three times the limit, with
# the fork and the forkserver start methods. The output must be the plain
# run's, and the tree's memory, sampled every 0.2 s (group_tree.py: the sum
# of its processes' Pss, each page counted once), must stay within
# limit x 1.10 + 8 MiB, the rule test_eng_reclaim_interp.sh holds one
# process's VmHWM to. Each process with a limit of its own would hold five
# times the limit.
ENG_TIMEOUT=${ENG_TIMEOUT:-600}	# a generous bound: a hang fails, slowness does not
# Seven interpreters (forkserver's main, server, resource tracker and four
# workers) hold ~30 MiB of their own before any data, so the tree's working
# set may not fit in 48 MiB at times: the notice that says so is the truth,
# any other libzswap: line a failure.
ENG_ALLOW_LIBZSWAP='is thrashing under ZSWAP_MEMORY_LIMIT'
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
tree="$ENG_SRCDIR/tests/engine/group_tree.py"

cat > "$ENG_TMP/pool.py" <<'PY'
import sys, zlib, multiprocessing as mp
def work(k):
    n = int(sys.argv[2])
    rec = [("%08d w%d GET /api/v1/items/%d status=%d %s" % (i, k, i % 5000, 200 if i % 17 else 404,
            "x" * (600 + (i * 37 + k) % 2500))).encode() for i in range(n)]
    crc = 0
    for r in rec:
        crc = zlib.crc32(r, crc)
    return "worker %d records %d crc %08x" % (k, n, crc)
if __name__ == "__main__":
    mp.set_start_method(sys.argv[1])
    with mp.Pool(4) as pool:
        for line in pool.map(work, range(4)):
            print(line)
PY

limit_mb=48
max_kb=$((limit_mb * 1024 * 110 / 100 + 8192))
records=16000

for method in fork forkserver; do
	eng_run "$method-plain" plain /usr/bin/python3 "$ENG_TMP/pool.py" $method $records
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/$method.ref"
	plain=$(sed -n 's/^group_tree: //p' "$ENG_ERR")
	eng_run "$method" plain /usr/bin/python3 "$tree" env LD_PRELOAD="$ENG_PRELOAD" \
		ZSWAP_MEMORY_LIMIT=${limit_mb}M /usr/bin/python3 "$ENG_TMP/pool.py" $method $records
	eng_expect_rc 0 || continue
	eng_expect_no_libzswap || continue
	eng_expect_same_stdout "$ENG_TMP/$method.ref" || continue
	line=$(sed -n 's/^group_tree: //p' "$ENG_ERR")
	eng_say "$method: $line (at most $max_kb)"
	peak=$(echo "$line" | sed -n 's/.*peak_kb=\([0-9]*\).*/\1/p')
	[ -n "$peak" ] && [ "$peak" -le "$max_kb" ] ||
		eng_fail "$method: the tree's peak ${peak:-?} kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB"
done
eng_finish
