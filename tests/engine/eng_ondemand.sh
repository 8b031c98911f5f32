# SPDX-License-Identifier: GPL-2.0-or-later
# eng_ondemand.sh - sourced after eng_lib.sh by the tests that act on
# prog_ondemand through zswapctl (test_eng_wb_demand.sh,
# test_eng_recompress.sh): od_start runs it under the library in the
# background until its pages are out (PID, BG and OD_DIR set); snap reads
# the dump's counters, stat_of and expect check one of them.

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
od_prog=$(eng_prog prog_ondemand)
mkdir -m 700 "$ENG_TMP/xdg"
export XDG_RUNTIME_DIR=$ENG_TMP/xdg

# od_start TEXT HUGE RANDOM [VAR=VALUE...]: the program with those pages.
od_start() {
	OD_DIR=$ENG_TMP/run
	mkdir -p "$OD_DIR"
	od_t=$1 od_h=$2 od_r=$3
	shift 3
	timeout -k 5 $((ENG_TIMEOUT * 3)) env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MIN_REGION=64K ZSWAP_COLD_AGE=0 \
		"$@" "$od_prog" "$OD_DIR" "$od_t" "$od_h" "$od_r" > "$OD_DIR/out" 2> "$OD_DIR/err" &
	BG=$!
	od_wait ready || { eng_fail "the program did not get ready: $(cat "$OD_DIR/err")"; eng_finish; }
	PID=$(awk '$1 == "ready" { print $2 }' "$OD_DIR/out")
}

# od_wait NAME: until the program creates OD_DIR/NAME (a hang detector).
od_wait() {
	for _ in $(seq 600); do
		[ -e "$OD_DIR/$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# od_finish: the program checks every page once more and must exit 0.
od_finish() {
	touch "$OD_DIR/go" "$OD_DIR/go2"
	wait "$BG"
	od_rc=$?
	[ "$od_rc" = 0 ] || eng_fail "the program exited $od_rc: $(cat "$OD_DIR/err")"
	grep -q "^sum " "$OD_DIR/out" || eng_fail "the program printed no checksum"
}

# snap: the dump's counters now, one "NAME VALUE" line each, for stat_of.
snap() {
	"$ctl" stats --json --full "$PID" | python3 -c '
import json, sys
for v in json.load(sys.stdin).values():
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, int):
                print(k, x)' > "$ENG_TMP/snap"
}
stat_of() {	# stat_of NAME: one counter of the last snap
	awk -v n="$1" '$1 == n { print $2; exit }' "$ENG_TMP/snap"
}
expect() {	# expect NAME VALUE WHAT
	got=$(stat_of "$1")
	[ "$got" = "$2" ] || eng_fail "$3: $1 is $got, want $2"
}
