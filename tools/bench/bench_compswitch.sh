#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_compswitch.sh - refault latency while the compressor changes under
# load, beside rounds where it does not, in one run (bench_compswitch.c).
#
# From a build directory:
#   taskset -c 1 tools/bench/bench_compswitch.sh [--size 64M] [--rounds 6]
#
# The program runs under the library (lz4, no readahead, so each first
# touch is one refault). In its "switch" rounds this script changes the
# compressor with zswapctl set, zstd, lzo, lz4 and round again, for as long
# as the program refaults; then it sets lz4 back. Prints the program's two
# RESULT lines and a SWITCHES line: the changes made in the switch rounds.
# The target: no refault of a switch round slower than twice the p99 of
# the steady rounds (compare max_us of mode=switch with 2 x p99_us of
# mode=steady). Pin it (taskset) away from CPUs others measure on.

set -u
build=${ZSWAP_BUILDDIR:-.}
lib=$build/.libs/libzswap.so
ctl=$build/tools/zswapctl/zswapctl
prog=$build/tools/bench/bench_compswitch
for f in "$lib" "$ctl" "$prog"; do
	[ -e "$f" ] || { echo "bench_compswitch.sh: $f is missing (run from a build directory)" >&2; exit 2; }
done
rounds=6
args=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; args="$args $1 $2"; shift 2 ;;
	--size) args="$args $1 $2"; shift 2 ;;
	*) echo "usage: bench_compswitch.sh [--size SIZE] [--rounds N]" >&2; exit 2 ;;
	esac
done

bg=
dir=$(mktemp -d) || exit 1
trap 'kill "$bg" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
mkdir -m 700 "$dir/xdg"
export XDG_RUNTIME_DIR=$dir/xdg
# shellcheck disable=SC2086
env LD_PRELOAD="$lib" ZSWAP_COMPRESSOR=lz4 ZSWAP_READAHEAD=0 ZSWAP_COLD_AGE=0 \
	"$prog" --dir "$dir" $args > "$dir/out" &
bg=$!

await() {	# await FILE: until the program makes it, or it ends
	while [ ! -e "$dir/$1" ]; do
		kill -0 "$bg" 2>/dev/null || { echo "bench_compswitch.sh: the program ended" >&2; exit 1; }
		sleep 0.002
	done
}

# switcher R: change the compressor until DIR/done.R; the count in
# DIR/switches.R.
switcher() {
	k=0
	while [ ! -e "$dir/done.$1" ]; do
		for c in zstd lzo lz4; do
			"$ctl" set "$bg" compressor=$c > /dev/null || { echo "set compressor=$c failed" >&2; exit 1; }
			k=$((k + 1))
		done
	done
	echo $k > "$dir/switches.$1"
}

total=0
r=0
while [ $r -lt "$rounds" ]; do
	while ! ls "$dir"/round.$r.* > /dev/null 2>&1; do
		kill -0 "$bg" 2>/dev/null || { echo "bench_compswitch.sh: the program ended" >&2; exit 1; }
		sleep 0.002
	done
	if [ -e "$dir/round.$r.switch" ]; then
		# The socket is up by the first round's end at the latest.
		switcher $r &
		sw=$!
		touch "$dir/go.$r"
		await "done.$r"
		wait $sw || exit 1
		total=$((total + $(cat "$dir/switches.$r")))
		"$ctl" set "$bg" compressor=lz4 > /dev/null || exit 1
		"$ctl" compact "$bg" > /dev/null || exit 1
	else
		touch "$dir/go.$r"
		await "done.$r"
	fi
	touch "$dir/ack.$r"
	r=$((r + 1))
done
wait "$bg" || { echo "bench_compswitch.sh: the program failed" >&2; exit 1; }
cat "$dir/out"
echo "SWITCHES total=$total"
