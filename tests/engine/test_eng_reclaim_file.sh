#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The limit holds the program's file pages too, as a memory cgroup charges
# the page cache its processes fault in. Node.js maps ~35 MiB of its own
# binary (V8's code, its start-up snapshot, ICU's tables) beside its heap:
# a Map of 100,000 small objects, looked up in a scattered order, peaks at
# ~85 MiB without the library. Under ZSWAP_MEMORY_LIMIT=64M the output must
# be the same as without the library and the peak RSS (VmHWM, printed at
# exit by prog_reclaim_stats.so) within limit x 1.10 + 8 MiB: counting only
# anonymous memory, the heap filled the limit and the binary's pages came
# on top (~86 MiB). The file pages of its text and read-only data are paged
# out under the limit (src/reclaim/filemap.c); the ones it runs are read
# again from the file.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

statlib="$ENG_BUILDDIR/tests/progs/prog_reclaim_stats.so"
[ -f "$statlib" ] || { eng_say "ERROR: $statlib is not built"; exit 99; }
node=$(command -v node) || eng_skip "node is not installed"

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

eng_run node-plain plain "$node" "$ENG_TMP/map.js" 100000
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/node.ref"
eng_run node plain ZSWAP_MEMORY_LIMIT=${limit_mb}M LD_PRELOAD="$ENG_PRELOAD $statlib" "$node" "$ENG_TMP/map.js" 100000
if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/node.ref"; then
	line=$(grep '^prog_reclaim_stats:' "$ENG_ERR")
	eng_say "node: ${line#prog_reclaim_stats: }"
	hwm=$(echo "$line" | sed -n 's/.* vmhwm_kb=\([0-9]*\).*/\1/p')
	[ -n "$hwm" ] && [ "$hwm" -le "$max_kb" ] ||
		eng_fail "node: peak RSS ${hwm:-?} kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB"
fi
eng_finish
