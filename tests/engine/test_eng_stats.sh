#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_stats.sh - the statistics dump (libzswap(7) STATISTICS DUMP) and
# zswapctl stats/list: a dump by signal and by zswapctl, in text and JSON,
# opening with a summary in human units (the same object in JSON), empty
# size classes and test-only knobs only in the full dump (--full,
# ZSWAP_STATS_FULL), the kernel's sections holding the kernel's names only
# (writeback_failed under libzswap's tier section, mm_stat's mem_limit 0
# without ZSWAP_MAX_POOL_SIZE),
# whose numbers agree with what tests/progs/prog_stats did (pages stored, zero
# pages, refaults); the program's own SIGUSR1 handler (sigaction and
# signal) still runs; periodic dumps; attribution names the program's own
# function; every field of struct zswap_stats is in the dump; zswapctl's
# errors name what went wrong and exit 1 or 2.

. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$ENG_BUILDDIR/tests/progs/prog_stats
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
header=$ENG_SRCDIR/include/zswap.h
[ -x "$prog" ] || eng_skip "$prog is not built"
[ -x "$ctl" ] || eng_skip "$ctl is not built"
nm -D "$ENG_LIB" 2>/dev/null | grep -q ' T sigaction$' ||
	eng_skip "libzswap.so does not export sigaction (src/shim/libzswap.map): the statistics signal cannot be shared"
command -v python3 >/dev/null 2>&1 && have_py=1 || have_py=0

# With libunwind the call site is named; without, "unavailable" (the object
# file is named either way).
if grep -q '^#define HAVE_LIBUNWIND 1' "$ENG_BUILDDIR/config.h" 2>/dev/null; then
	SITE=stats_test_make_buffer
else
	SITE=unavailable
fi

DATA=100 ZERO=20 REF=30
STORED=$((DATA + ZERO - REF))
# Every run: its own socket directory, small regions managed.
XDG=$ENG_TMP/run
mkdir -p "$XDG" && chmod 700 "$XDG"
run() {	# run LABEL VAR=VALUE... -- ARGS...
	label=$1; shift
	vars=
	while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
	shift
	# shellcheck disable=SC2086
	timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" XDG_RUNTIME_DIR="$XDG" ZSWAP_MIN_REGION=64K ZSWAP_READAHEAD=0 \
		$vars "$prog" "$@" > "$ENG_TMP/$label.out" 2> "$ENG_TMP/$label.err"
	rc=$?
	if [ "$rc" = 77 ]; then eng_skip "$label: $(cat "$ENG_TMP/$label.err")"; fi
	[ "$rc" = 0 ] || { eng_say "--- $label stderr ---"; cat "$ENG_TMP/$label.err" >&2; eng_fail "$label: exit $rc"; }
}

# value FILE NAME: the first "NAME value" line of a text dump.
value() { awk -v n="$2" '$1 == n { print $2; exit }' "$1"; }

check_text() {	# check_text LABEL FILE
	f=$2
	for pair in "stored_pages $STORED" "same_filled_pages $ZERO" "zswpout $((DATA + ZERO))" \
		"zswpin $REF" "refaults $REF" "evicted_pages $((DATA + ZERO))" "regions 1"; do
		set -- $pair
		got=$(value "$f" "$1")
		[ "$got" = "$2" ] || eng_fail "$label: $1 is '$got' in the dump, the program did $2"
	done
	# Sections in the issue's order.
	order=$(grep '^== ' "$f" | awk '{ print $2 }' | tr '\n' ' ')
	case $order in
	"summary configuration zswap vmstat mm_stat bd_stat tier pools zsmalloc engine reclaim latency attribution end "*) ;;
	*) eng_fail "$label: sections out of order: $order" ;;
	esac
	grep -q '^ZSWAP_STATS_SIGNAL=SIGUSR1$' "$f" || eng_fail "$label: the configuration misses ZSWAP_STATS_SIGNAL"
	# mm_stat: one line of nine columns, zram's order; same_pages the 6th.
	mm=$(awk '/^== mm_stat/ { getline; getline; print; exit }' "$f")
	set -- $mm
	[ "$#" = 9 ] && [ "$6" = "$ZERO" ] || eng_fail "$label: mm_stat line '$mm'"
	[ "$4" = 0 ] || eng_fail "$label: mm_stat's mem_limit is $4 with no ZSWAP_MAX_POOL_SIZE (0 for none)"
	check_summary "$label" "$f"
	check_layout "$label" "$f"
	# Attribution: the buffer, named by its call site, with its counts.
	row=$(grep " $SITE" "$f" | grep "($prog)" | head -n 1)
	if [ -z "$row" ]; then
		eng_fail "$label: attribution does not name $SITE ($prog)"
	else
		set -- $row
		[ "$2" = mmap ] && [ "$4" = $((STORED * 4096)) ] && [ "$6" = "$REF" ] ||
			eng_fail "$label: attribution row '$row' (want kind mmap, evicted $((STORED * 4096)), refaults $REF)"
		case $row in *"$prog"*) ;; *) eng_fail "$label: attribution row does not name the object $prog" ;; esac
	fi
	# Latency: refaults were timed (count at most the refaults).
	set -- $(awk '$1 == "refault" { print $2, $3; exit }' "$f")
	[ "${1:-0}" -ge 1 ] && [ "${1:-0}" -le "$REF" ] && [ "${2:-0}" -gt 0 ] ||
		eng_fail "$label: refault latency line: count ${1:-?} p50 ${2:-?}"
}

# The summary opens the dump, right after its first line: saved, stored and
# the pool with the ratio, the tier, limit and charge, the rates lately,
# the time held at the limit.
check_summary() {	# check_summary LABEL FILE
	[ "$(sed -n 2p "$2")" = "== summary (the full sections follow)" ] ||
		eng_fail "$1: the dump does not open with its summary: $(sed -n 2p "$2")"
	sed -n '/^== summary/,/^== /p' "$2" > "$ENG_TMP/summary"
	for pat in '^saved  *[0-9.]* [KMGT]*i*B$' \
		"^stored  *[0-9.]* [KMGT]*i*B in a pool of [0-9.]* [KMGT]*i*B, ratio [0-9]*\\.[0-9][0-9]\$" \
		'^second tier ' '^limit  *none, charge [0-9.]* [KMGT]*i*B$' \
		'^lately  *[0-9]* refaults/s, [0-9]* stores/s (over [0-9.]* s)$' '^at the limit  *[0-9.]* s held in all$'; do
		grep -q "$pat" "$ENG_TMP/summary" || eng_fail "$1: the summary has no line like '$pat': $(cat "$ENG_TMP/summary")"
	done
}

# Kernel names in the kernel's sections, libzswap's in its own; no empty
# size class and no test-only knob unless the dump is full.
check_layout() {	# check_layout LABEL FILE [full]
	sect() { sed -n "/^== $1/,/^== /p" "$2"; }
	sect zswap "$2" | grep -q '^writeback_failed ' && eng_fail "$1: writeback_failed in the zswap (debugfs) section"
	sect tier "$2" | grep -q '^writeback_failed ' || eng_fail "$1: writeback_failed is not in the tier section"
	for c in bd_read_fail backing_disk_bytes backing_max_bytes swap_cached_pages; do
		sect tier "$2" | grep -q "^$c " || eng_fail "$1: $c is not in the tier section"
	done
	empty=$(sect zsmalloc "$2" | awk '$1 ~ /^[0-9]+$/ && NF == 19 { s = 0; for (i = 3; i <= NF; i++) if (i != 17 && i != 19) s += $i; if (s == 0) n++ } END { print n + 0 }')
	inject=$(grep -c '^ZSWAP_INJECT_' "$2")
	if [ "${3:-}" = full ]; then
		[ "$empty" -gt 0 ] || eng_fail "$1: the full dump shows no empty size class"
		[ "$inject" -gt 0 ] || eng_fail "$1: the full dump shows no ZSWAP_INJECT_* knob"
	else
		[ "$empty" = 0 ] || eng_fail "$1: $empty empty size classes in the dump"
		[ "$inject" = 0 ] || eng_fail "$1: $inject ZSWAP_INJECT_* lines in the dump"
		grep -q '^(.* empty classes not shown: zswapctl stats --full, ZSWAP_STATS_FULL=1)$' "$2" ||
			eng_fail "$1: the dump does not say how to see the empty classes"
	fi
}

# Every field of struct zswap_stats is printed.
check_fields() {	# check_fields LABEL FILE
	for fld in $(awk '/^struct zswap_stats \{/ { s = 1; next } s && /^\};/ { exit }
			s && $1 == "uint64_t" { sub(/;.*/, "", $2); if ($2 != "size") print $2 }' "$header"); do
		grep -Eq "\"$fld\":|^$fld |[# ]$fld( |\$)" "$2" || eng_fail "$1: the dump has no $fld"
	done
}

# 1. Text dump on SIGUSR1, into a file.
label=signal-text
run $label ZSWAP_STATS_FILE="$ENG_TMP/d.txt" -- signal $DATA $ZERO $REF "$ENG_TMP/d.txt" 1
check_text $label "$ENG_TMP/d.txt"
check_fields $label "$ENG_TMP/d.txt"

# Every counter the text dump prints is documented in libzswap(7).
man7=$ENG_SRCDIR/man/libzswap.7
if [ -r "$man7" ]; then
	awk '/^== / { s = $2; next }
	     (s == "zswap" || s == "vmstat" || s == "tier" || s == "engine" || s == "reclaim") && NF == 2 { print $1 }
	     s == "mm_stat" && $1 == "#" { for (i = 2; i <= NF; i++) print $i }
	     s == "latency" && ($1 == "refault" || $1 == "evict") { print $1 }' "$ENG_TMP/d.txt" | sort -u > "$ENG_TMP/counters"
	[ -s "$ENG_TMP/counters" ] || eng_fail "no counters found in the text dump"
	for c in $(cat "$ENG_TMP/counters") count p50 p90 p99 max resident_bytes evicted_bytes \
		compressed_bytes refaults evictions refault_rate function object; do
		grep -Eq "(^\.|[ ])Va $c( |\$)" "$man7" ||
			eng_fail "the dump's $c is not documented in man/libzswap.7"
	done
fi

# 1a. The full dump: ZSWAP_STATS_FULL=1 adds the empty classes and the
#     test-only knobs.
label=full
run $label ZSWAP_STATS_FULL=1 ZSWAP_STATS_FILE="$ENG_TMP/full.txt" -- signal $DATA $ZERO $REF "$ENG_TMP/full.txt" 1
check_layout $label "$ENG_TMP/full.txt" full

# 1b. The C library's own memory, named as such: its heap and an arena.
label=malloc
run $label PROG_STATS_MALLOC=1 ZSWAP_STATS_FILE="$ENG_TMP/m.txt" -- signal $DATA $ZERO $REF "$ENG_TMP/m.txt" 1
sed -n '/^== attribution/,$p' "$ENG_TMP/m.txt" > "$ENG_TMP/m.attr"
grep -q '^[0-9a-f]*-[0-9a-f]* *heap .* - (-)$' "$ENG_TMP/m.attr" ||
	eng_fail "$label: attribution has no heap row: $(cat "$ENG_TMP/m.attr")"
grep -q '^[0-9a-f]*-[0-9a-f]* *malloc arena ' "$ENG_TMP/m.attr" ||
	eng_fail "$label: attribution has no malloc arena row: $(cat "$ENG_TMP/m.attr")"

# 2. JSON on SIGUSR1; %p in the file name; valid JSON with the same numbers.
label=signal-json
run $label ZSWAP_STATS_FORMAT=json "ZSWAP_STATS_FILE=$ENG_TMP/d-%p.json" -- \
	signal $DATA $ZERO $REF "$ENG_TMP/d-%p.json" 1
set -- "$ENG_TMP"/d-[0-9]*.json
if [ ! -f "$1" ]; then
	eng_fail "$label: no dump file d-PID.json"
elif [ "$have_py" = 1 ]; then
	python3 - "$1" "$STORED" "$ZERO" "$REF" "$SITE" <<'PY' || eng_fail "$label: JSON dump wrong (above)"
import json, sys
d = json.load(open(sys.argv[1]))
stored, zero, ref = map(int, sys.argv[2:5])
site = sys.argv[5]
want = {("zswap", "stored_pages"): stored, ("zswap", "same_filled_pages"): zero,
        ("vmstat", "zswpin"): ref, ("engine", "refaults"): ref, ("mm_stat", "same_pages"): zero}
bad = [f"{s}.{k} = {d[s][k]}, want {v}" for (s, k), v in want.items() if d[s][k] != v]
top = d["attribution"]["top"]
if not top or not top[0]["function"].startswith(site) or not top[0]["object"].endswith("prog_stats"):
    bad.append(f"attribution top: {top[:1]}")
elif top[0]["evicted_bytes"] != stored * 4096 or top[0]["refaults"] != ref:
    bad.append(f"attribution counts: {top[0]}")
if list(d)[:5] != ["libzswap", "pid", "comm", "dump", "reason"] or "classes" not in d:
    bad.append(f"keys: {list(d)}")
summ = d.get("summary", {})
keys = ["saved_bytes", "stored_bytes", "pool_bytes", "ratio", "tier_bytes", "limit_bytes",
        "charge_bytes", "peak_bytes", "refaults_per_s", "stores_per_s", "held_at_limit_us"]
if [k for k in d if k not in ("libzswap", "pid", "comm", "dump", "reason", "uptime_ms")][:1] != ["summary"]:
    bad.append(f"the summary is not the first section: {list(d)}")
elif [k for k in keys if k not in summ] or summ["stored_bytes"] != d["mm_stat"]["orig_data_size"]:
    bad.append(f"summary: {summ}")
elif abs(summ["ratio"] - d["mm_stat"]["orig_data_size"] / max(d["zswap"]["pool_total_size"], 1)) > 0.011:
    bad.append(f"summary ratio {summ['ratio']}")
if "writeback_failed" in d["zswap"] or "writeback_failed" not in d["tier"]:
    bad.append("writeback_failed is not in the tier section alone")
for b in bad:
    print("test_eng_stats: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	check_fields $label "$1"
fi

# 3. The program's own SIGUSR1 handler, set with sigaction and with signal:
#    it runs once per signal, and the program's action wins: no dump.
for how in sigaction signal; do
	label=own-$how
	run $label ZSWAP_STATS_FILE="$ENG_TMP/own-$how.txt" -- own $DATA $ZERO $REF "$ENG_TMP/own-$how.txt" 2 own=$how
	grep -q '^handler 2$' "$ENG_TMP/$label.out" || eng_fail "$label: the program's handler did not run twice"
	[ -e "$ENG_TMP/own-$how.txt" ] && eng_fail "$label: a dump was written though the program handles the signal"
done

# 4. Periodic dumps (every second), and one at exit.
label=periodic
run $label ZSWAP_STATS_INTERVAL=1 ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_SIGNAL=none \
	ZSWAP_STATS_FILE="$ENG_TMP/per.txt" -- periodic $DATA $ZERO $REF "$ENG_TMP/per.txt" 2
grep -c '(interval)' "$ENG_TMP/per.txt" | awk '$1 < 2 { exit 1 }' || eng_fail "$label: fewer than 2 interval dumps"
grep -q '(exit)' "$ENG_TMP/per.txt" || eng_fail "$label: no dump at exit"

# 5. zswapctl stats and list against a running program; then its errors.
label=zswapctl
mkfifo "$ENG_TMP/hold" || eng_skip "mkfifo failed"
timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" XDG_RUNTIME_DIR="$XDG" ZSWAP_MIN_REGION=64K ZSWAP_READAHEAD=0 \
	"$prog" serve $DATA $ZERO $REF /dev/null 0 < "$ENG_TMP/hold" > "$ENG_TMP/serve.out" 2> "$ENG_TMP/serve.err" &
bg=$!
exec 9> "$ENG_TMP/hold"	# the program runs until this closes
pid=
for _ in $(seq 600); do
	pid=$(awk '$1 == "ready" { print $2 }' "$ENG_TMP/serve.out")
	[ -n "$pid" ] && break
	sleep 0.1
done
if [ -z "$pid" ]; then
	eng_fail "$label: the program did not get ready: $(cat "$ENG_TMP/serve.err")"
else
	XDG_RUNTIME_DIR=$XDG timeout "$ENG_TIMEOUT" "$ctl" stats "$pid" > "$ENG_TMP/ctl.txt" 2> "$ENG_TMP/ctl.err" ||
		eng_fail "$label: zswapctl stats failed: $(cat "$ENG_TMP/ctl.err")"
	check_text $label "$ENG_TMP/ctl.txt"
	grep -q '(zswapctl)' "$ENG_TMP/ctl.txt" || eng_fail "$label: the dump does not say zswapctl asked"
	XDG_RUNTIME_DIR=$XDG timeout "$ENG_TIMEOUT" "$ctl" stats --full "$pid" > "$ENG_TMP/ctl-full.txt" 2> "$ENG_TMP/ctl.err" ||
		eng_fail "$label: zswapctl stats --full failed: $(cat "$ENG_TMP/ctl.err")"
	check_layout "$label --full" "$ENG_TMP/ctl-full.txt" full
	XDG_RUNTIME_DIR=$XDG timeout "$ENG_TIMEOUT" "$ctl" stats --json "$pid" > "$ENG_TMP/ctl.json" 2> "$ENG_TMP/ctl.err" ||
		eng_fail "$label: zswapctl stats --json failed: $(cat "$ENG_TMP/ctl.err")"
	if [ "$have_py" = 1 ]; then
		python3 -m json.tool "$ENG_TMP/ctl.json" > /dev/null || eng_fail "$label: zswapctl stats --json is not JSON"
	fi
	XDG_RUNTIME_DIR=$XDG "$ctl" list > "$ENG_TMP/list.txt" 2>&1 || eng_fail "$label: zswapctl list failed"
	awk -v p="$pid" '$1 == p { f = 1 } END { exit !f }' "$ENG_TMP/list.txt" ||
		eng_fail "$label: zswapctl list does not show $pid: $(cat "$ENG_TMP/list.txt")"
	XDG_RUNTIME_DIR=$XDG timeout "$ENG_TIMEOUT" "$ctl" watch --interval 1 --count 1 "$pid" > "$ENG_TMP/watch.txt" 2>&1 ||
		eng_fail "$label: zswapctl watch failed: $(cat "$ENG_TMP/watch.txt")"
	[ "$(wc -l < "$ENG_TMP/watch.txt")" = 2 ] || eng_fail "$label: zswapctl watch --count 1 printed $(cat "$ENG_TMP/watch.txt")"
	# Another user is refused, and told why.
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" stats "$pid" > /dev/null 2> "$ENG_TMP/perm.err"
		rc=$?
		[ "$rc" = 1 ] && grep -q "permission denied" "$ENG_TMP/perm.err" ||
			eng_fail "$label: zswapctl stats as nobody: exit $rc, '$(cat "$ENG_TMP/perm.err")'"
	fi
	sock=$(awk -v p="$pid" '$1 == p { print $NF }' "$ENG_TMP/list.txt")
	[ -S "$sock" ] || eng_fail "$label: no socket at '$sock'"
	[ "$(stat -c %a "$(dirname "$sock")")" = 700 ] || eng_fail "$label: $(dirname "$sock") is not mode 700"
fi
exec 9>&-
wait $bg || eng_fail "$label: the program failed: $(cat "$ENG_TMP/serve.err")"
[ -z "${sock:-}" ] || [ ! -e "$sock" ] || eng_fail "$label: the socket $sock is still there after exit"

# zswapctl's errors: usage 2, runtime 1, each with a line saying why.
ctl_err() {	# ctl_err WANT_RC PATTERN ARGS...
	want=$1 pat=$2; shift 2
	XDG_RUNTIME_DIR=$XDG "$ctl" "$@" > "$ENG_TMP/e.out" 2> "$ENG_TMP/e.err"
	rc=$?
	[ "$rc" = "$want" ] || eng_fail "zswapctl $*: exit $rc, want $want"
	grep -q "$pat" "$ENG_TMP/e.err" || eng_fail "zswapctl $*: stderr '$(cat "$ENG_TMP/e.err")' lacks '$pat'"
}
ctl_err 2 "a PID is needed" stats
ctl_err 2 "not a number" stats abc
ctl_err 2 "unknown option" stats --bogus 1
ctl_err 2 "unknown command" frobnicate
ctl_err 1 "no such process" stats 4194303
sleep 300 & other=$!
ctl_err 1 "not running libzswap" stats $other
kill $other 2>/dev/null
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_ENABLED=0 sleep 300 & other=$!
for _ in $(seq 100); do grep -q libzswap /proc/$other/maps 2>/dev/null && break; sleep 0.1; done
ctl_err 1 "has libzswap loaded but offers no statistics socket" stats $other
kill $other 2>/dev/null
"$ctl" --version | grep -q '^zswapctl' || eng_fail "zswapctl --version"
"$ctl" stats --help | grep -q '^usage: zswapctl stats' || eng_fail "zswapctl stats --help"

eng_finish
