#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_build.sh - a shell-heavy tree with no memory limit: a build or a
# configure script, alone and under each library given, in turn within each
# round, so that every ratio compares runs of the same minute.
#
# What it measures is what the library costs a program it does nothing for
# yet: loading it into every program the tree runs, the deferred start
# (ZSWAP_START_DELAY), the fork handlers of the processes that started. A
# build runs thousands of programs that end within milliseconds.
#
# Usage:
#   bench_build.sh [--rounds N] [--cpu C] [--lib PATH]... [--env "K=V ..."]
#                  [--check FILE] [--builddir DIR] --make DIR [--jobs N]
#   bench_build.sh ... --configure SRCDIR
# --make DIR: `make -s clean` (untimed), then `make -s -jN` (default 2) in
#     DIR, a source tree that builds in place (e.g. a clone of
#     https://github.com/lz4/lz4) or a configured build directory.
# --configure SRCDIR: SRCDIR/configure -q in an empty directory of its own.
# --lib PATH: a libzswap.so to preload (repeatable; default the build
#     directory's .libs/libzswap.so); --env adds settings to every library
#     side (e.g. "ZSWAP_START_DELAY=30000").
# --check FILE: a file the build makes (relative to DIR, or to the
#     configure's directory): its checksum must be the same on every side.
# --cpu C: pin every side to CPU C (taskset), else unpinned.
# Output: one line per side and round (wall seconds, CPU seconds of the
# whole tree: user + system of make and every program it waited for, and
# both against alone in that round), then the median ratios per side.
# Prints figures and judges none; exits 1 if a run failed or a checked
# file differed.
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=3 cpu='' env='' check='' builddir=$here/build mode='' dir='' jobs=2 libs=''
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	--lib) libs="$libs $2"; shift 2 ;;
	--env) env=$2; shift 2 ;;
	--check) check=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--make) mode=make dir=$2; shift 2 ;;
	--configure) mode=configure dir=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "bench_build.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
[ -n "$mode" ] || { echo "bench_build.sh: --make DIR or --configure SRCDIR (--help)" >&2; exit 2; }
[ -d "$dir" ] || { echo "bench_build.sh: $dir is not a directory" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
[ -n "$libs" ] || libs=$(cd "$builddir" && pwd)/.libs/libzswap.so
for l in $libs; do
	[ -f "$l" ] || { echo "bench_build.sh: $l is not built (--lib, --builddir)" >&2; exit 2; }
done
[ "$mode" = configure ] && [ ! -x "$dir/configure" ] &&
	{ echo "bench_build.sh: $dir/configure is not there" >&2; exit 2; }
pin=
[ -n "$cpu" ] && pin="taskset -c $cpu"
work=$(mktemp -d /tmp/bench_build.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
failed=0

# run SETTINGS NAME PIN: the job once under env SETTINGS, pinned by PIN,
# in $work/NAME (configure) or $dir (make); its time in $work/NAME.time,
# its output in $work/NAME.out, its exit status in $work/NAME.rc.
run() {
	if [ "$mode" = make ]; then
		(cd "$dir" && make -s clean >/dev/null 2>&1)
		# shellcheck disable=SC2086
		(cd "$dir" && /usr/bin/time -o "$work/$2.time" -f '%e %U %S' $3 env $1 make -s -j"$jobs" \
			>"$work/$2.out" 2>&1)
	else
		rm -rf "${work:?}/$2" && mkdir "$work/$2"
		# shellcheck disable=SC2086
		(cd "$work/$2" && /usr/bin/time -o "$work/$2.time" -f '%e %U %S' $3 env $1 "$dir/configure" -q \
			>"$work/$2.out" 2>&1)
	fi
	echo $? >"$work/$2.rc"
}

# measured SETTINGS NAME: sets wall, cpu_s and sum from the run in NAME.
measured() {
	where=$dir
	[ "$mode" = configure ] && where=$work/$2
	# shellcheck disable=SC2046
	set -- "$1" "$2" $(tail -n 1 "$work/$2.time")	# time says a failure on a line before
	wall=${3:-0} cpu_s=$(echo "${4:-0} + ${5:-0}" | bc)
	sum=-
	if [ -n "$check" ]; then
		sum=missing
		[ -f "$where/$check" ] && sum=$(sha256sum "$where/$check" | cut -c1-16)
	fi
	if [ "$(cat "$work/$2.rc")" != 0 ]; then
		echo "bench_build.sh: a run failed (exit $(cat "$work/$2.rc")) under: $1" >&2
		tail -n 5 "$work/$2.out" >&2
		failed=1
	fi
}

# report ROUND LIB: one library side against the alone run (w0, c0, s0).
report() {
	wr=$(echo "scale=3; $wall / $w0" | bc) cr=$(echo "scale=3; $cpu_s / $c0" | bc)
	echo "round=$1 side=$2 wall_s=$wall cpu_s=$cpu_s wall_ratio=$wr cpu_ratio=$cr${check:+ check=$sum}"
	echo "$2 $wr $cr" >>"$work/ratios"
	if [ -n "$check" ] && [ "$sum" != "$s0" ]; then
		echo "bench_build.sh: $check differs from the run alone under $2" >&2
		failed=1
	fi
}

alone=X_BENCH_BUILD=alone
echo "bench_build.sh: $mode $dir, rounds $rounds, ${pin:-unpinned}, libraries:$libs${env:+ with $env}" >&2
: >"$work/ratios"
for r in $(seq "$rounds"); do
	run "$alone" alone "$pin"
	measured "$alone" alone
	w0=$wall c0=$cpu_s s0=$sum
	echo "round=$r side=alone wall_s=$w0 cpu_s=$c0${check:+ check=$s0}"
	for l in $libs; do
		run "LD_PRELOAD=$l $env" lib "$pin"
		measured "LD_PRELOAD=$l" lib
		report "$r" "$l"
	done
done
for l in $libs; do
	awk -v l="$l" '$1 == l { w[n + 0] = $2; c[n + 0] = $3; n++ }
		function med(a, n,   i, j, t) {
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
		}
		END { if (n) printf "RESULT bench=build side=%s rounds=%d wall_ratio_median=%.3f cpu_ratio_median=%.3f\n", l, n, med(w, n), med(c, n) }' "$work/ratios"
done
exit $failed
