#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Real programs nobody here wrote, under a limit of 60 % of their own peak
# without the library, print what they print without it, and the library's
# statistics show real reclaim (pages stored and refaulted):
#   node    Node.js (V8's heap, in 256 KiB pieces): a Map of 300,000 objects
#           looked up in a scattered order
#   java    OpenJDK (its heap one large reservation): a HashMap of 300,000
#           strings, from a single-file source program
#   sqlite3 an in-memory database of 400,000 rows, two indexes, three queries
#   sort    sort -n of 1,000,000 random numbers (GNU sort's buffers)
# (redis-server with its own BGSAVE child is test_eng_redis.sh's; perl and
# python test_eng_reclaim_interp.sh's.) A program that is not installed is
# skipped with its package named; all missing skips the test.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

ENG_TIMEOUT=240
dir=${TMPDIR:-/var/tmp}
command -v /usr/bin/time >/dev/null 2>&1 || eng_skip "/usr/bin/time is not installed (package time)"
ran=0

# real NAME PACKAGE COMMAND...: the command plainly (its peak sets the
# limit), then under 60 % of that peak with the library.
real() {
	name=$1 pkg=$2
	shift 2
	command -v "$1" >/dev/null 2>&1 || { eng_say "$name: $1 is not installed ($pkg): skipped"; return 0; }
	ran=$((ran + 1))
	eng_run "$name-plain" plain /usr/bin/time -f 'peak_kb=%M' -o "$ENG_TMP/$name.time" "$@"
	eng_expect_rc 0 || return 1
	cp "$ENG_OUT" "$ENG_TMP/$name.ref"
	peak=$(sed -n 's/^peak_kb=//p' "$ENG_TMP/$name.time")
	limit=$((peak * 60 / 100 / 1024))
	[ "$limit" -ge 16 ] || limit=16
	t0=$(date +%s)
	eng_run "$name" lib ZSWAP_MEMORY_LIMIT="${limit}M" ZSWAP_BACKING_DIR="$dir" ZSWAP_STATS_AT_EXIT=1 \
		ZSWAP_STATS_FILE="$ENG_TMP/$name.stats" "$@"
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/$name.ref" || return 1
	st=$ENG_TMP/$name.stats
	# The measured process's dump is the one with the most stored pages
	# (java and sort start helpers of their own).
	out=$(awk '$1 == "zswpout" { if ($2 > o) o = $2 } $1 == "refaults" { if ($2 > r) r = $2 }
		$1 == "poisoned_pages" { p += $2 } END { print o + 0, r + 0, p + 0 }' "$st")
	set -- $out
	eng_say "$name: peak $((peak / 1024)) MiB alone, ${limit}M: $(($(date +%s) - t0)) s, zswpout $1, refaults $2"
	[ "$1" -gt 1000 ] || eng_fail "$name: only $1 pages stored under ${limit}M: no real reclaim"
	[ "$2" -gt 100 ] || eng_fail "$name: only $2 refaults under ${limit}M"
	[ "$3" = 0 ] || eng_fail "$name: $3 pages poisoned"
	# It says nothing but that it thrashes (a working set that does not fit).
	ENG_ALLOW_LIBZSWAP='^libzswap: the program is thrashing'
	eng_expect_no_libzswap
	ENG_ALLOW_LIBZSWAP=
}

js='const n = 300000, m = new Map();
for (let i = 0; i < n; i++) m.set("key" + i, { a: i, b: "v" + (i * 7), c: [i, i + 1] });
let s = 0;
for (let r = 0; r < 2; r++) for (let i = 0; i < n; i++) { const o = m.get("key" + ((i * 7919) % n)); s += o.a + o.c[1]; }
console.log(m.size, s);'
real node nodejs node -e "$js"

cat > "$ENG_TMP/Big.java" <<'EOF'
import java.util.HashMap;
public class Big {
	public static void main(String[] a) {
		int n = 300000;
		HashMap<String, String> m = new HashMap<>();
		for (int i = 0; i < n; i++) m.put("key" + i, "value-" + (i * 31L) + "-" + Integer.toHexString(i));
		long s = 0;
		for (int r = 0; r < 2; r++) for (int i = 0; i < n; i++) s += m.get("key" + ((i * 7919L) % n)).length();
		System.out.println(m.size() + " " + s);
	}
}
EOF
real java openjdk-17-jre-headless java -Xmx256m -XX:+UseSerialGC "$ENG_TMP/Big.java"
# Its old generation is read all over (the lookups) while its young one
# churns: nearly every page taken from the old one comes back at once, and
# reclaim gives it only its share (pgskip_share).
if [ -s "$ENG_TMP/java.stats" ]; then
	skip=$(awk '$1 == "pgskip_share" { if ($2 > s) s = $2 } END { print s + 0 }' "$ENG_TMP/java.stats")
	eng_say "java: pgskip_share $skip"
	[ "$skip" -gt 0 ] || eng_fail "java: reclaim took the old generation's pages as freely as the young one's"
fi

sql="create table t(a integer primary key, b text, c integer);
with recursive r(i) as (select 1 union all select i + 1 from r where i < 400000)
insert into t select i, printf('row %d %x %s', i, (i * 2654435761) % 4294967296,
	substr('lorem ipsum dolor sit amet consectetur adipiscing elit', 1 + i % 40)), (i * 7919) % 400000 from r;
create index tb on t(b); create index tc on t(c);
select count(*), sum(c), max(b) from t;
select count(*), sum(length(b)) from t where c between 1000 and 300000;
select b from t where c = 4242;"
real sqlite3 sqlite3 sqlite3 :memory: "$sql"

awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%d\n", int(rand() * 1000000000) }' > "$ENG_TMP/sort.in"
real sort coreutils sort -n -S 64M "$ENG_TMP/sort.in"

[ "$ran" -gt 0 ] || eng_skip "none of node, java, sqlite3 and sort is installed"
eng_finish
