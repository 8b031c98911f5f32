#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# File pages and the limit, as a memory cgroup charges the page cache: a
# page is charged to the group that read it in, once (src/engine/pagecache.h).
# prog_pagecache maps a 48 MiB file, reads it all, then fills and reads
# back 40 MiB of anonymous memory, under ZSWAP_MEMORY_LIMIT=64M:
#  warm  the file was read just before by another process: its pages are
#        others', the charge holds the anonymous memory alone: nothing is
#        reclaimed and the file's pages stay mapped (pgsteal 0, RssFile 40
#        MiB or more at the end, file_mapped under 4 MiB);
#  cold  its page cache dropped first, the process reads it in: the file
#        pages are charged (48 + 40 MiB over the 64M limit) and paged out
#        under the limit (src/reclaim/filemap.c): the peak RSS (VmHWM)
#        within limit x 1.10 + 8 MiB, every page checked.
# Node.js (its own binary, ~35 MiB, mapped beside its heap: a Map of
# 100,000 small objects looked up in a scattered order) gives the same
# output under the same limit as without the library.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

cat > "$ENG_TMP/map.js" <<'JS'
const n = +process.argv[2];
const m = new Map();
for (let i = 0; i < n; i++) m.set("key" + i, { a: i, b: "v" + (i * 7), c: [i, i + 1] });
let s = 0;
for (let i = 0; i < n; i++) { const o = m.get("key" + ((i * 7919) % n)); s += o.a + o.c[1]; }
console.log(m.size, s);
JS

limit_mb=64
max_kb=$((limit_mb * 1024 * 110 / 100 + 8192))
prog="$ENG_BUILDDIR/tests/progs/prog_pagecache"
[ -x "$prog" ] || { eng_say "ERROR: $prog is not built"; exit 99; }
# On disk, not tmpfs: its page cache can be dropped.
data=$(mktemp /var/tmp/test_eng_reclaim_file.XXXXXX) || eng_skip "mktemp in /var/tmp failed"
trap 'rm -rf "$ENG_TMP" "$data"' EXIT
head -c $((48 * 1024 * 1024)) /dev/urandom | od -An -tx8 | head -c $((48 * 1024 * 1024)) > "$data"

kv() { echo "$2" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }

eng_run pc-plain plain "$prog" "$data" 40 warm
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/pc.ref"
for kind in warm cold; do
	cat "$data" > /dev/null
	eng_run "$kind" plain ZSWAP_MEMORY_LIMIT=${limit_mb}M LD_PRELOAD="$ENG_PRELOAD" "$prog" "$data" 40 "$kind"
	eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/pc.ref" || continue
	line=$(grep '^prog_pagecache:' "$ENG_ERR")
	eng_say "$kind: ${line#prog_pagecache: }"
	mapped=$(kv file_mapped_kb "$line")
	steal=$(kv pgsteal "$line")
	hwm=$(kv vmhwm_kb "$line")
	rssf=$(kv rss_file_kb "$line")
	if [ -z "$mapped" ] || [ -z "$steal" ] || [ -z "$hwm" ] || [ -z "$rssf" ]; then
		eng_fail "$kind: no figures on stderr"
	elif [ "$kind" = warm ]; then
		[ "$steal" -eq 0 ] ||
			eng_fail "warm: $steal pages reclaimed: the file pages the page cache held were charged"
		[ "$rssf" -ge $((40 * 1024)) ] ||
			eng_fail "warm: RssFile $rssf kB at the end: the file pages the page cache held were paged out"
		[ "$mapped" -lt 4096 ] ||
			eng_fail "warm: file_mapped $mapped kB: the file pages the page cache held were charged"
	else
		[ "$hwm" -le "$max_kb" ] ||
			eng_fail "cold: peak RSS $hwm kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB: the file pages it read in were not charged"
	fi
done

node=$(command -v node) || { eng_say "node is not installed: its part skipped"; eng_finish; }
eng_run node-plain plain "$node" "$ENG_TMP/map.js" 100000
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/node.ref"
eng_run node plain ZSWAP_MEMORY_LIMIT=${limit_mb}M LD_PRELOAD="$ENG_PRELOAD" "$node" "$ENG_TMP/map.js" 100000
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/node.ref"
eng_finish
