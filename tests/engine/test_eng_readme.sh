#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's quick start works as written, in a fresh build tree. The
# commands are read from README.md itself, so a README change that breaks
# one fails here:
#  - the line of "Building by hand" runs in a fresh copy of the source tree
#    (its tracked files, edits included), command by command: "make" builds
#    what the examples use (the library and zswapctl; the rest is the main
#    build's), "make check" is this suite and is left out, and "make
#    install", which writes outside the tree, is stood for by a directory
#    holding what the runtime package holds (libzswap.so.0) on
#    LD_LIBRARY_PATH, and by the build tree's zswapctl on PATH;
#  - every example that runs ./app (the fenced ones, the inline ones of
#    "Using it") runs in a directory whose ./app is a real program, sort(1):
#    it must print what it prints without the library, and the library must
#    be there (its dump at exit, ZSWAP_STATS_AT_EXIT).
# The quick start's first block (scripts/setup.sh, scripts/test.sh) installs
# packages with apt-get and runs the whole suite: not run here.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -n "$ENG_SRCDIR" ] || eng_skip "ZSWAP_SRCDIR is not set"
src=$(cd "$ENG_SRCDIR" && pwd)
readme=$src/README.md
for t in autoreconf libtoolize make tar sort; do
	command -v "$t" >/dev/null 2>&1 || eng_skip "$t is missing (scripts/setup.sh installs what building needs)"
done
# The examples run under the library with userfaultfd, as the other tests.
eng_run probe lib "$(command -v sort)" /dev/null
[ "$ENG_RC" = 0 ] || eng_fail "sort under the library exited $ENG_RC: $(cat "$ENG_ERR")"

# The fenced blocks after a heading (awk's h: "" for all), one line each.
fenced() {
	awk -v h="$1" '
		!fence && /^#/ { in_h = (h == "" || $0 == h) }
		/^```/ { fence = !fence; next }
		fence && in_h { print }' "$readme"
}

# --- the fresh tree --------------------------------------------------------
tree=$ENG_TMP/libzswap
mkdir "$tree"
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
	git -C "$src" ls-files -z | (cd "$src" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
		tar -xf - -C "$tree"
else
	(cd "$src" && tar --exclude='./.git' --exclude='./build*' --exclude='./_build' \
		--exclude='./autom4te.cache' -cf - .) | tar -xf - -C "$tree"
fi
[ -f "$tree/README.md" ] || eng_fail "the copy of $src holds no README.md"

build=$(fenced "## Building by hand" | grep -m 1 'configure')
[ -n "$build" ] || { eng_fail "README.md's \"Building by hand\" has no build line"; eng_finish; }
eng_say "building as README.md says: $build"
# This suite's make would pass its variables (TESTS among them) down.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
rest=$build
while [ -n "$rest" ]; do
	cmd=${rest%%&&*}
	case $rest in *"&&"*) rest=${rest#*&&} ;; *) rest= ;; esac
	cmd=$(printf '%s' "$cmd" | sed 's/^ *//; s/ *$//')
	case $cmd in
	"make check" | "make install") continue ;;
	make) cmd="make -j2 libzswap.la tools/zswapctl/zswapctl" ;;
	esac
	if ! (cd "$tree" && nice -n 19 sh -c "$cmd") > "$ENG_TMP/build.log" 2>&1; then
		tail -n 30 "$ENG_TMP/build.log" >&2
		eng_fail "README.md's build: '$cmd' failed in a fresh tree"
		eng_finish
	fi
done
[ -f "$tree/.libs/libzswap.so.0" ] && [ -x "$tree/tools/zswapctl/zswapctl" ] ||
	{ eng_fail "README.md's build made no .libs/libzswap.so.0 or tools/zswapctl/zswapctl"; eng_finish; }
runtime=$ENG_TMP/runtime
mkdir "$runtime"
cp -L "$tree/.libs/libzswap.so.0" "$runtime/libzswap.so.0"

# --- the examples ----------------------------------------------------------
work=$ENG_TMP/work
mkdir "$work"
cp "$(command -v sort)" "$work/app"
seq 200000 | sort -R --random-source=/dev/zero > "$work/input"
(cd "$work" && env -u LD_PRELOAD ./app < input > "$ENG_TMP/ref")
{
	fenced "" | grep '\./app'
	grep -o '`[^`]*\./app`' "$readme" | tr -d '`' | grep -E '^([A-Z_]+=[^ ]+ )*(LD_PRELOAD=|zswapctl )'
} | sed 's/ *#.*//' | awk '!seen[$0]++' > "$ENG_TMP/examples"
grep -q 'LD_PRELOAD=' "$ENG_TMP/examples" && grep -q '^zswapctl run' "$ENG_TMP/examples" ||
	eng_fail "README.md shows no LD_PRELOAD= and zswapctl run example of ./app: $(cat "$ENG_TMP/examples")"
i=0
while IFS= read -r line; do
	i=$((i + 1))
	(cd "$work" && timeout -k 5 "$ENG_TIMEOUT" env PATH="$tree/tools/zswapctl:$PATH" LD_LIBRARY_PATH="$runtime" \
		ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$work/dump$i.%p" sh -c "$line" < input) \
		> "$ENG_TMP/ex$i.out" 2> "$ENG_TMP/ex$i.err"
	rc=$?
	[ "$rc" = 0 ] || eng_fail "'$line' exited $rc: $(head -n 5 "$ENG_TMP/ex$i.err")"
	cmp -s "$ENG_TMP/ref" "$ENG_TMP/ex$i.out" || eng_fail "'$line' printed other than ./app without the library"
	set -- "$work"/dump"$i".*
	if [ $# != 1 ] || [ ! -f "$1" ]; then
		eng_fail "'$line' ran without libzswap (no dump at exit): $(head -n 5 "$ENG_TMP/ex$i.err")"
	elif ! grep -q '^== summary' "$1"; then
		eng_fail "'$line': the dump at exit has no summary"
	else
		eng_say "ran '$line': output as without the library, libzswap's dump at exit"
	fi
done < "$ENG_TMP/examples"
eng_finish
