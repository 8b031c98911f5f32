#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_compswitch.sh - ZSWAP_COMPRESSOR changed in a running process
# (zswapctl set PID compressor=...), as the kernel's zswap changes its
# compressor: a pool per compressor in use, new pages to the current one's,
# pages stored before readable from theirs until loaded, and an old pool
# freed once it holds nothing.
#
# prog_compswitch stores NPAGES text pages under lz4, then for each of zstd,
# lzo and lz4 again refaults, rewrites and stores again the first half of
# its pages while the compressor changes, and once more after: THREADS
# threads at once, each its own slice, and after each round a fork child
# checks every page, so changes meet stores, loads and forks in progress
# (a change asked for while a fork is frozen waits for it and is applied
# whole: every change must succeed). The second
# half stays in lz4's pool throughout (no readahead: it would bring pages of
# the second half in with the first). After each step the dump's pools
# section must list the current compressor first with the first half, lz4
# with the second half, and no other: the pool of the compressor before
# went once drained (zswapctl compact frees it at once). Back to lz4, its
# pool is the one kept all along. Every page is checked by the program at
# each refault and at the end, and its checksum must equal a plain run's.
# A misspelt compressor is refused with a suggestion, changing nothing.

eng_name=test_eng_compswitch
. "$(dirname "$0")/eng_lib.sh"

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
mkdir -m 700 "$ENG_TMP/xdg"
export XDG_RUNTIME_DIR=$ENG_TMP/xdg
prog=$(eng_prog prog_compswitch)

NPAGES=2048 HALF=1024 STEPS=3 THREADS=4 FORK=1

# A plain run for the checksum, every step started at once.
mkdir "$ENG_TMP/plain"
for f in go1 set1 go2 set2 go3 set3 drain end; do touch "$ENG_TMP/plain/$f"; done
eng_run plain plain "$prog" "$ENG_TMP/plain" $NPAGES $STEPS $THREADS $FORK
[ "$ENG_RC" = 0 ] || eng_fail "plain run: exit $ENG_RC"
ref=$(grep '^sum ' "$ENG_OUT")

D=$ENG_TMP/run
mkdir "$D"
timeout -k 5 $((ENG_TIMEOUT * 3)) env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MIN_REGION=64K ZSWAP_COLD_AGE=0 ZSWAP_READAHEAD=0 \
	ZSWAP_COMPRESSOR=lz4 "$prog" "$D" $NPAGES $STEPS $THREADS $FORK > "$D/out" 2> "$D/err" &
BG=$!

# wait_for NAME: until the program creates D/NAME (a hang detector).
wait_for() {
	for _ in $(seq 600); do
		[ -e "$D/$1" ] && return 0
		kill -0 "$BG" 2>/dev/null || break
		sleep 0.1
	done
	eng_fail "the program did not create $1: $(cat "$D/err")"
	kill "$BG" 2>/dev/null
	eng_finish
}

# pools: the dump's pools section, "NAME current stored_pages size" a line,
# in the dump's order, then "freed N".
pools() {
	"$ctl" stats --json "$PID" | python3 -c '
import json, sys
p = json.load(sys.stdin)["pools"]
for k, v in p.items():
    if isinstance(v, dict):
        print(k, v["current"], v["stored_pages"], v["pool_total_size"])
print("freed", p["pools_freed"])' > "$ENG_TMP/pools" || eng_fail "no pools section in the dump"
}

# expect_pools WHAT "NAME CURRENT STORED"... "freed N": the section, sizes
# aside (each pool holding pages must have some).
expect_pools() {
	what=$1
	shift
	pools
	awk '$1 != "freed" && ($3 > 0) != ($4 > 0) { print "size " $4 " for " $3 " pages of " $1 }' \
		"$ENG_TMP/pools" > "$ENG_TMP/sizes"
	[ -s "$ENG_TMP/sizes" ] && eng_fail "$what: $(cat "$ENG_TMP/sizes")"
	got=$(awk '$1 == "freed" { print; next } { print $1, $2, $3 }' "$ENG_TMP/pools")
	want=$(printf '%s\n' "$@")
	[ "$got" = "$want" ] || eng_fail "$what: the pools are
$got
want
$want"
}

wait_for ready0
PID=$(awk '$1 == "ready" { print $2 }' "$D/out")
expect_pools "at start" "lz4 1 $NPAGES" "freed 0"

# A misspelt compressor: refused, with the name meant, and nothing changes.
if "$ctl" set "$PID" compressor=zstdd > "$ENG_TMP/bad.out" 2>&1; then
	eng_fail "compressor=zstdd was taken"
fi
grep -q "did you mean zstd?" "$ENG_TMP/bad.out" ||
	eng_fail "compressor=zstdd: no suggestion: $(cat "$ENG_TMP/bad.out")"
expect_pools "after a refused change" "lz4 1 $NPAGES" "freed 0"

# step K COMPRESSOR: the change while the program goes round, then one
# round more.
step() {
	touch "$D/go$1"
	"$ctl" set "$PID" compressor="$2" > "$ENG_TMP/set.out" 2>&1 ||
		eng_fail "set compressor=$2: $(cat "$ENG_TMP/set.out")"
	touch "$D/set$1"
	wait_for "ready$1"
	"$ctl" compact "$PID" > /dev/null || eng_fail "compact failed"
}

step 1 zstd
expect_pools "lz4 -> zstd" "zstd:3 1 $HALF" "lz4 0 $HALF" "freed 0"
step 2 lzo
expect_pools "zstd -> lzo" "lzo 1 $HALF" "lz4 0 $HALF" "freed 1"
step 3 lz4
expect_pools "lzo -> lz4" "lz4 1 $NPAGES" "freed 2"

# Every page refaulted from lz4's pool and stored there again.
touch "$D/drain"
wait_for drained
"$ctl" set "$PID" compressor=zstd:1 > /dev/null 2>&1 || eng_fail "set compressor=zstd:1 failed"
"$ctl" set "$PID" compressor=lz4 > /dev/null 2>&1 || eng_fail "set compressor=lz4 failed"
"$ctl" compact "$PID" > /dev/null || eng_fail "compact failed"
expect_pools "drained, and zstd:1 held nothing" "lz4 1 $NPAGES" "freed 3"

touch "$D/end"
wait "$BG"
rc=$?
[ "$rc" = 0 ] || eng_fail "the program exited $rc: $(cat "$D/err")"
got=$(grep '^sum ' "$D/out")
[ "$got" = "$ref" ] || eng_fail "checksum $got, plain run $ref"
eng_finish
