#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A real program nobody here wrote, under a memory limit: Debian's perl (and
# python3 when installed) build ~85 MiB of live records, go through them
# three times and print checksums. Under ZSWAP_MEMORY_LIMIT=24M (three and a
# half times less) the output must be the same as without the library, the
# counters (printed at exit by prog_reclaim_stats.so, preloaded after the
# library) must show reclaim (pgsteal) and refaults, and the peak RSS
# (VmHWM, printed by the same) must stay within limit x 1.10 + 8 MiB, the
# build of the records included. The records (0.6 to 3 KiB) are glibc
# malloc's (perl's and python's small-object allocators take only smaller
# ones): the brk heap, grown by glibc without the interposer; memory
# src/reclaim/growth.c holds at the allocation.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

statlib="$ENG_BUILDDIR/tests/progs/prog_reclaim_stats.so"
[ -f "$statlib" ] || { eng_say "ERROR: $statlib is not built"; exit 99; }
command -v perl >/dev/null 2>&1 || eng_skip "perl is not installed"

cat > "$ENG_TMP/records.pl" <<'PERL'
use strict; use warnings;
my $n = $ARGV[0];
my @rec;
for my $i (0 .. $n - 1) {
    push @rec, sprintf("%08d user%05d GET /api/v1/items/%d status=%d bytes=%d %s", $i, $i % 997,
                       $i % 5000, ($i % 17) ? 200 : 404, ($i * 37) % 20000, "x" x (600 + ($i * 37) % 2500));
}
my %users;
my $sum = 0;
for my $pass (1 .. 3) {
    for my $r (@rec) {
        $sum = ($sum + unpack("%32C*", $r)) % 4294967296;
        $users{substr($r, 9, 9)}++ if $pass == 1;
    }
}
printf "records %d sum %u users %d\n", $n, $sum, scalar(keys %users);
PERL

cat > "$ENG_TMP/records.py" <<'PY'
import sys, zlib
n = int(sys.argv[1])
rec = ["%08d user%05d GET /api/v1/items/%d status=%d bytes=%d %s" %
       (i, i % 997, i % 5000, 200 if i % 17 else 404, (i * 37) % 20000, "x" * (600 + (i * 37) % 2500))
       for i in range(n)]
users = {}
crc = 0
for p in range(3):
    for r in rec:
        crc = zlib.crc32(r.encode(), crc)
        if p == 0:
            users[r[9:18]] = users.get(r[9:18], 0) + 1
print("records %d crc %08x users %d" % (n, crc, len(users)))
PY

limit_mb=24
max_kb=$((limit_mb * 1024 * 110 / 100 + 8192))
records=40000

# interp LABEL INTERPRETER SCRIPT
interp() {
	eng_run "$1-plain" plain "$2" "$ENG_TMP/$3" $records
	eng_expect_rc 0 || return
	cp "$ENG_OUT" "$ENG_TMP/$1.ref"
	eng_run "$1" plain ZSWAP_MEMORY_LIMIT=${limit_mb}M LD_PRELOAD="$ENG_PRELOAD $statlib" "$2" "$ENG_TMP/$3" $records
	eng_expect_rc 0 || return
	eng_expect_no_libzswap || return
	eng_expect_same_stdout "$ENG_TMP/$1.ref" || return
	line=$(grep '^prog_reclaim_stats:' "$ENG_ERR")
	eng_say "$1: ${line#prog_reclaim_stats: }"
	steal=$(echo "$line" | sed -n 's/.* pgsteal=\([0-9]*\).*/\1/p')
	refaults=$(echo "$line" | sed -n 's/.* refaults=\([0-9]*\).*/\1/p')
	hwm=$(echo "$line" | sed -n 's/.* vmhwm_kb=\([0-9]*\).*/\1/p')
	[ "${steal:-0}" -gt 1000 ] && [ "${refaults:-0}" -gt 1000 ] ||
		eng_fail "$1: too little reclaim or refault under the limit (pgsteal ${steal:-?}, refaults ${refaults:-?})"
	[ -n "$hwm" ] && [ "$hwm" -le "$max_kb" ] ||
		eng_fail "$1: peak RSS ${hwm:-?} kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB"
}

interp perl perl records.pl
if [ -x /usr/bin/python3 ]; then
	interp python3 /usr/bin/python3 records.py
else
	eng_say "python3 is not installed: only perl was run"
fi
eng_finish
