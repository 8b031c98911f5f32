#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One set of rules: the environment, `zswapctl run -o` and `zswapctl set`
# read a setting with one grammar and one validator. Each case goes through
# all three: the same switch words (ZSWAP_WRITEBACK=yes included), sizes
# with K/M/G/T and KiB/MiB/GiB, N% and auto take the same value (the
# environment's, in ZSWAP_VERBOSE's "option" line; run's, in the program's
# environment; set's, in its "NAME=VALUE (was ...)" line), and a bad value
# or a misspelt name gets the same message, "did you mean" included, from
# each. zswapctl run refuses a directory for the second tier that does not
# exist, is a file or is on tmpfs, in one line naming ZSWAP_BACKING_DIR,
# before the program starts; the library names ZSWAP_BACKING_DIR too, and
# says when it passes over a TMPDIR on tmpfs.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
[ -z "$ENG_SAN_PRELOAD" ] || eng_skip "the library is built with AddressSanitizer"
# Any program: what matters is what the library reads at start-up.
prog=true
unset ZSWAPCTL_LIBRARY ZSWAPCTL_RUN
XDG=$ENG_TMP/xdg
mkdir -m 700 "$XDG"
export XDG_RUNTIME_DIR=$XDG

# A tier's directory on a disk for the cases that open one: the build tree.
disk=$ENG_BUILDDIR
case $(stat -f -c %T "$disk" 2>/dev/null) in
tmpfs|ramfs) eng_skip "the build tree is on tmpfs: no directory on a disk for the second tier" ;;
esac

# --- a process to change with zswapctl set --------------------------------
eng_live ZSWAP_BACKING_DIR="$disk" || eng_finish
pid=$ENG_LIVE

# good NAME VALUE SHOWN [default]: every entry point takes NAME=VALUE and the
# value in force reads SHOWN (ZSWAP_VERBOSE lists it unless it is the
# default).
good() {
	var=ZSWAP_$1
	eng_run "env-$1=$2" lib "$var=$2" ZSWAP_VERBOSE=1 ZSWAP_BACKING_DIR="$disk" "$prog"
	if eng_expect_rc 0; then
		if [ "${4:-}" = default ]; then
			grep -q "^libzswap: option $var=" "$ENG_ERR" &&
				eng_fail "env $var=$2: the default is listed as an option in force"
		else
			grep -qxF "libzswap: option $var=$3 (from the environment)" "$ENG_ERR" ||
				eng_fail "env $var=$2: no line 'option $var=$3 (from the environment)': $(cat "$ENG_ERR")"
		fi
		grep -q "expected\|not a libzswap option" "$ENG_ERR" &&
			eng_fail "env $var=$2: refused: $(grep -m1 expected "$ENG_ERR")"
	fi
	lower=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
	eng_run "run-$1=$2" plain "$ctl" run --lib "$ENG_LIB" -o "$lower=$2" -- sh -c "echo \"\$$var\""
	eng_expect_rc 0 && [ "$(cat "$ENG_OUT")" = "$2" ] ||
		eng_fail "run -o $lower=$2: $(cat "$ENG_ERR" "$ENG_OUT")"
	eng_run "set-$1=$2" plain "$ctl" set "$pid" "$lower=$2"
	eng_expect_rc 0 && grep -q "^$var=$3 (was " "$ENG_OUT" ||
		eng_fail "set $lower=$2: expected '$var=$3 (was ...)': $(cat "$ENG_ERR" "$ENG_OUT")"
}

# bad NAME VALUE MESSAGE: every entry point refuses NAME=VALUE with MESSAGE.
bad() {
	var=ZSWAP_$1
	eng_run "env-$1=$2" lib "$var=$2" "$prog"
	grep -qF "libzswap: $3" "$ENG_ERR" ||
		eng_fail "env $var=$2: no line 'libzswap: $3': $(cat "$ENG_ERR")"
	lower=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
	eng_run "run-$1=$2" plain "$ctl" run --lib "$ENG_LIB" -o "$lower=$2" -- echo ran
	eng_expect_rc 2 && grep -qF "zswapctl: run: $lower=$2: $3" "$ENG_ERR" ||
		eng_fail "run -o $lower=$2: expected 'zswapctl: run: $lower=$2: $3': $(cat "$ENG_ERR" "$ENG_OUT")"
	eng_run "set-$1=$2" plain "$ctl" set "$pid" "$lower=$2"
	eng_expect_rc 2 && grep -qF "zswapctl: set: $lower=$2: $3" "$ENG_ERR" ||
		eng_fail "set $lower=$2: expected 'zswapctl: set: $lower=$2: $3': $(cat "$ENG_ERR" "$ENG_OUT")"
}

# Switches: the same words everywhere; ZSWAP_WRITEBACK also auto.
for w in yes on true 1 YES; do
	good WRITEBACK "$w" 1
	good STATS_AT_EXIT "$w" 1
done
for w in no off false 0; do
	good WRITEBACK "$w" 0
done
good STATS_AT_EXIT on 1
good WRITEBACK auto auto default
bad WRITEBACK maybe 'ZSWAP_WRITEBACK="maybe": expected auto, 1 or 0 (or yes/no, on/off, true/false)'
bad STATS_AT_EXIT maybe 'ZSWAP_STATS_AT_EXIT="maybe": expected 1 or 0 (or yes/no, on/off, true/false)'

# Sizes: K/M/G/T and KiB/MiB/GiB, N% and auto.
good MAX_POOL_SIZE 64K 64K
good MAX_POOL_SIZE 64KiB 64K
good MAX_POOL_SIZE 3MiB 3M
good MAX_POOL_SIZE 1GiB 1G
good MAX_POOL_SIZE 2T 2T
good MEMORY_LIMIT 1G 1G
good MEMORY_LIMIT 2GiB 2G
good MEMORY_LIMIT 90% 90%
good MEMORY_LIMIT auto auto
good MEMORY_LIMIT 0 0 default
bad MEMORY_LIMIT 101% "ZSWAP_MEMORY_LIMIT=\"101%\": expected a percentage of the memory cgroup's limit from 1% to 100%"
bad MAX_POOL_SIZE 12Q 'ZSWAP_MAX_POOL_SIZE="12Q": expected a size like 512M or 2GiB'

# A misspelt name: "did you mean" from each.
bad COLD_AGEE 10 'ZSWAP_COLD_AGEE is not a libzswap option (did you mean ZSWAP_COLD_AGE?)'


# --- the second tier's directory, checked before the program starts -------
: >"$ENG_TMP/afile"
for dir in "$ENG_TMP/none" "$ENG_TMP/afile" /dev/shm; do
	[ "$dir" = /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ] && continue
	d=$(basename "$dir")
	eng_run "run-dir-$d" plain "$ctl" run --lib "$ENG_LIB" -o "backing_dir=$dir" -- echo ran
	if eng_expect_rc 1; then
		[ "$(wc -l <"$ENG_ERR")" = 1 ] && grep -q "^zswapctl: run: ZSWAP_BACKING_DIR=$dir: " "$ENG_ERR" ||
			eng_fail "run backing_dir=$dir: expected one line naming ZSWAP_BACKING_DIR: $(cat "$ENG_ERR")"
	fi
	[ -s "$ENG_OUT" ] && eng_fail "run backing_dir=$dir: the program ran"
	# From the environment the run inherits, too.
	eng_run "run-envdir-$d" plain env ZSWAP_BACKING_DIR="$dir" "$ctl" run --lib "$ENG_LIB" -- echo ran
	eng_expect_rc 1 && grep -q "ZSWAP_BACKING_DIR=$dir (in the environment): " "$ENG_ERR" ||
		eng_fail "run with ZSWAP_BACKING_DIR=$dir in the environment: $(cat "$ENG_ERR" "$ENG_OUT")"
	# The library names the variable that was set, not ZSWAP_WRITEBACK.
	eng_run "lib-dir-$d" lib ZSWAP_WRITEBACK=1 ZSWAP_START_DELAY=0 ZSWAP_BACKING_DIR="$dir" "$prog"
	grep -q "^libzswap: ZSWAP_BACKING_DIR=$dir: .*the second tier is off" "$ENG_ERR" ||
		eng_fail "library with ZSWAP_BACKING_DIR=$dir: $(cat "$ENG_ERR")"
done

# auto passing over a TMPDIR on tmpfs says so.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	eng_run tmpdir-shm lib ZSWAP_WRITEBACK=1 ZSWAP_START_DELAY=0 TMPDIR=/dev/shm "$prog"
	grep -q '^libzswap: ZSWAP_BACKING_DIR=auto: TMPDIR: /dev/shm .*; the second tier goes to /var/tmp' "$ENG_ERR" ||
		eng_fail "TMPDIR=/dev/shm: no line saying the tier goes to /var/tmp: $(cat "$ENG_ERR")"
fi

eng_finish
