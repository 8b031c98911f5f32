#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The charge leaves the library's own memory out, as a memory cgroup
# charges none of the kernel's zswap structures: python fills 64 MiB of
# text-like data under 32M (the pool and the second tier in use), then
# idles. Its library memory, read from outside (the resident pages of its
# anonymous MAP_NORESERVE mappings not registered with userfaultfd: every
# range the library maps is one), less the pool's zspages, is what the dump
# reports as bookkeeping_bytes, and the charge is the process's anonymous
# memory and page tables less that (memory_current less file_mapped).
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"

cat >"$ENG_TMP/fill.py" <<'PY'
import os, sys, time
words = [b"alpha ", b"beta ", b"gamma ", b"delta ", b"epsilon ", b"zeta "]
chunks = []
for i in range(64):
    chunks.append(bytearray(b"".join(words[(i * j) % 6] + b"%d " % j for j in range(100000))[: 1 << 20]))
open(sys.argv[1], "w").close()
time.sleep(30)
print(sum(len(c) for c in chunks))
PY

KIB=1024
ready=$ENG_TMP/ready
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$ENG_TMP" \
	ZSWAP_STATS_FILE="$ENG_TMP/own.st" /usr/bin/python3 "$ENG_TMP/fill.py" "$ready" \
	>"$ENG_TMP/own.out" 2>"$ENG_TMP/own.err" &
pid=$!
n=0
while [ ! -e "$ready" ] && [ $n -lt 600 ] && kill -0 $pid 2>/dev/null; do
	sleep 0.1
	n=$((n + 1))
done
[ -e "$ready" ] || { kill $pid 2>/dev/null; eng_fail "python3 did not fill its data: $(cat "$ENG_TMP/own.err")"; eng_finish; }
# Quiet for two seconds: the stages are empty and their copies given back.
sleep 2
# The library's resident memory seen from outside, and the process's.
own=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { anon = ($6 == ""); rss = 0; next }
	/^Rss:/ { rss = $2 }
	/^VmFlags:/ { if (anon && / nr/ && !/ um/) kb += rss }
	END { print kb + 0 }' "/proc/$pid/smaps")
anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status")
pte=$(awk '/^VmPTE:/ { print $2 }' "/proc/$pid/status")
kill -USR1 $pid
n=0
while ! grep -q '^bookkeeping_bytes' "$ENG_TMP/own.st" 2>/dev/null && [ $n -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill $pid 2>/dev/null
wait $pid 2>/dev/null
book=$(eng_dump_stat "$ENG_TMP/own.st" bookkeeping_bytes)
pool=$(eng_dump_stat "$ENG_TMP/own.st" pool_total_size)
cur=$(eng_dump_stat "$ENG_TMP/own.st" memory_current)
file=$(eng_dump_stat "$ENG_TMP/own.st" file_mapped)
wb=$(eng_dump_stat "$ENG_TMP/own.st" written_back_pages)
if [ -z "$book" ] || [ -z "$pool" ] || [ -z "$cur" ] || [ -z "$file" ]; then
	eng_fail "no bookkeeping_bytes, pool_total_size, memory_current or file_mapped in the dump"
	eng_finish
fi
lib=$((own * KIB - pool))
eng_say "library memory $((own)) kB resident, pool $((pool / KIB)) kB, bookkeeping_bytes $((book / KIB)) kB;" \
	"RssAnon $anon kB + VmPTE $pte kB, charge $((cur / KIB)) kB less file pages $((file / KIB)) kB; written back $wb"
[ "${wb:-0}" -gt 0 ] || eng_fail "nothing went to the second tier: the test fills too little"
# Both readings are of an idle process a moment apart: 256 KiB of slack.
diff=$((lib - book))
[ ${diff#-} -le $((256 * KIB)) ] ||
	eng_fail "the library's memory less the pool ($((lib / KIB)) kB) is not what bookkeeping_bytes says ($((book / KIB)) kB)"
want=$(((anon + pte) * KIB - book))
diff=$((cur - file - want))
[ ${diff#-} -le $((256 * KIB)) ] ||
	eng_fail "the charge less its file pages ($(((cur - file) / KIB)) kB) is not RssAnon + VmPTE less the library's memory ($((want / KIB)) kB)"
eng_finish
