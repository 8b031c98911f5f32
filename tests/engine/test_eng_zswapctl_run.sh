#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# zswapctl run: the program runs with the library preloaded and the options
# set (its /proc/self/maps holds libzswap; its statistics dump shows the
# configuration given), in zswapctl's own process (the same process ID, no
# wrapper), with its exit status and its death by a signal passed on as the
# shell sees them. A bad option name or value is refused (exit 2, one line
# naming it) before anything runs; a missing program exits 127 and one that
# cannot be executed 126; an LD_PRELOAD already set is kept, the library not
# added twice. A zswapctl in a build tree preloads that tree's library.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
# zswapctl puts the library first in LD_PRELOAD; an ASan build needs its
# runtime first in the process.
[ -z "$ENG_SAN_PRELOAD" ] || eng_skip "the library is built with AddressSanitizer"
unset ZSWAPCTL_LIBRARY

# one_line LABEL TEXT: the last run wrote exactly one line on stderr, a
# "zswapctl: run:" line containing TEXT, and nothing on stdout.
one_line() {
	if [ "$(wc -l <"$ENG_ERR")" != 1 ] || ! grep -q '^zswapctl: run: ' "$ENG_ERR"; then
		eng_fail "$1: expected one 'zswapctl: run:' line on stderr"
	elif ! grep -qF -- "$2" "$ENG_ERR"; then
		eng_fail "$1: the line does not name '$2'"
	fi
	[ -s "$ENG_OUT" ] && eng_fail "$1: the program ran (stdout: $(head -n 1 "$ENG_OUT"))"
	return 0
}

# --- the library loaded, the options in effect ---------------------------
eng_run loaded plain "$ctl" run --lib "$ENG_LIB" --limit 32M -o cold_age=1 \
	-o ZSWAP_STATS_AT_EXIT=1 -o Stats_File="$ENG_TMP/dump.%p" -- grep -c libzswap /proc/self/maps
if eng_expect_rc 0; then
	[ "$(cat "$ENG_OUT")" -gt 0 ] 2>/dev/null ||
		eng_fail "loaded: libzswap is not mapped in the program (grep printed '$(cat "$ENG_OUT")')"
	dump=$(ls "$ENG_TMP"/dump.* 2>/dev/null | head -n 1)
	if [ -z "$dump" ]; then
		grep -q 'userfaultfd unavailable' "$ENG_ERR" && eng_skip "$(grep -m1 '^libzswap:' "$ENG_ERR")"
		eng_fail "loaded: no statistics dump at exit in $ENG_TMP"
	else
		for want in ZSWAP_MEMORY_LIMIT=32M ZSWAP_COLD_AGE=1 ZSWAP_STATS_AT_EXIT=1; do
			grep -qx "$want" "$dump" || eng_fail "loaded: the dump's configuration has no line $want"
		done
	fi
	eng_expect_no_libzswap
fi

# The library from ZSWAPCTL_LIBRARY when there is no --lib; the options in
# the program's environment by their full names, the later of two settings
# of one option counting.
eng_run environ plain env ZSWAPCTL_LIBRARY="$ENG_LIB" "$ctl" run -o readahead=4 -oREADAHEAD=8 \
	-o zswap_fault_around=4 sh -c 'echo "$LD_PRELOAD"; echo "$ZSWAP_READAHEAD $ZSWAP_FAULT_AROUND"'
if eng_expect_rc 0 && eng_expect_no_libzswap; then
	[ "$(cat "$ENG_OUT")" = "$ENG_LIB
8 4" ] || eng_fail "environ: LD_PRELOAD and the options were: $(cat "$ENG_OUT")"
fi

# A relative --lib becomes absolute: the program may change directory
# before it starts others, which inherit LD_PRELOAD.
(cd "$(dirname "$ENG_LIB")" && eng_run relative plain "$ctl" run --lib "./$(basename "$ENG_LIB")" -- \
	sh -c 'cd /; echo "$LD_PRELOAD"' && eng_expect_rc 0 &&
	cp "$ENG_OUT" "$ENG_TMP/relative.got")
[ "$(cat "$ENG_TMP/relative.got" 2>/dev/null)" = "$(cd "$(dirname "$ENG_LIB")" && pwd -P)/$(basename "$ENG_LIB")" ] ||
	eng_fail "relative: LD_PRELOAD was '$(cat "$ENG_TMP/relative.got" 2>/dev/null)'"

# --- the program's own process and status ---------------------------------
# The shell prints its process ID, then becomes zswapctl, which becomes the
# program: the same ID three times means nothing forked on the way.
eng_run samepid plain sh -c 'echo $$; exec "$0" run --lib "$1" -- sh -c "echo \$\$"' \
	"$ctl" "$ENG_LIB"
if eng_expect_rc 0; then
	[ "$(sed -n 1p "$ENG_OUT")" = "$(sed -n 2p "$ENG_OUT")" ] ||
		eng_fail "samepid: the program's process ID is not zswapctl's: $(tr '\n' ' ' <"$ENG_OUT")"
fi

eng_run exit3 plain "$ctl" run --lib "$ENG_LIB" -- sh -c 'exit 3'
eng_expect_rc 3

for sig in TERM USR2; do
	eng_run "sig$sig-plain" plain sh -c "kill -$sig \$\$"
	want=$ENG_RC
	[ "$want" -gt 128 ] || eng_fail "sig$sig-plain: sh killing itself exited $want"
	eng_run "sig$sig" plain "$ctl" run --lib "$ENG_LIB" -- sh -c "kill -$sig \$\$"
	eng_expect_rc "$want"
done

# --- refused before anything runs ------------------------------------------
eng_run badname plain "$ctl" run --lib "$ENG_LIB" -o cold_agee=1 -- echo ran
eng_expect_rc 2 && one_line badname cold_agee
eng_run badvalue plain "$ctl" run --lib "$ENG_LIB" -o cold_age=soon -- echo ran
eng_expect_rc 2 && one_line badvalue ZSWAP_COLD_AGE
eng_run badlimit plain "$ctl" run --lib "$ENG_LIB" --limit 32Q -- echo ran
eng_expect_rc 2 && one_line badlimit ZSWAP_MEMORY_LIMIT
eng_run notopt plain "$ctl" run --lib "$ENG_LIB" -o ZSWAP_LIB=x -- echo ran
eng_expect_rc 2 && one_line notopt ZSWAP_LIB
eng_run nolib plain "$ctl" run --lib "$ENG_TMP/none.so" -- echo ran
eng_expect_rc 1 && one_line nolib "$ENG_TMP/none.so"

# Without --lib or ZSWAPCTL_LIBRARY, from a build tree: the tree's own
# library, found from zswapctl's place whatever the working directory.
(cd / && eng_run buildtree plain "$ctl" run -- sh -c 'echo "$LD_PRELOAD"' && eng_expect_rc 0 &&
	cp "$ENG_OUT" "$ENG_TMP/buildtree.got")
[ "$(cat "$ENG_TMP/buildtree.got" 2>/dev/null)" = "$(cd "$ENG_BUILDDIR" && pwd -P)/.libs/libzswap.so" ] ||
	eng_fail "buildtree: LD_PRELOAD was '$(cat "$ENG_TMP/buildtree.got" 2>/dev/null)', not the build tree's library"

# Elsewhere: the installed library, named in the help; when it is not
# installed, one line naming the path.
mkdir "$ENG_TMP/bin"
cp "$ctl" "$ENG_TMP/bin/zswapctl"
default=$("$ENG_TMP/bin/zswapctl" run --help | sed -n 's/^ *\(\/.*libzswap\.so\.[0-9]*\))$/\1/p')
case $default in
/*) ;;
*) eng_fail "run --help names no default library" ;;
esac
if [ -n "$default" ] && [ ! -e "$default" ]; then
	eng_run nodefault plain "$ENG_TMP/bin/zswapctl" run -- echo ran
	eng_expect_rc 1 && one_line nodefault "$default"
fi

eng_run noprog plain "$ctl" run --lib "$ENG_LIB" -- "$ENG_TMP/no-such-program"
eng_expect_rc 127 && one_line noprog "$ENG_TMP/no-such-program"
printf 'not a program\n' >"$ENG_TMP/text"
chmod 644 "$ENG_TMP/text"
eng_run noexec plain "$ctl" run --lib "$ENG_LIB" -- "$ENG_TMP/text"
eng_expect_rc 126 && one_line noexec "$ENG_TMP/text"

# --- LD_PRELOAD kept ------------------------------------------------------
[ -n "${ZSWAP_CC:-}" ] || ZSWAP_CC=cc
if printf 'int zswapctl_run_mark;\n' | $ZSWAP_CC -shared -fPIC -x c - -o "$ENG_TMP/libmark.so" 2>/dev/null; then
	mark=$ENG_TMP/libmark.so
	eng_run keep plain env LD_PRELOAD="$mark" "$ctl" run --lib "$ENG_LIB" -- \
		sh -c 'echo "$LD_PRELOAD"; grep -q libzswap /proc/$$/maps && grep -q libmark /proc/$$/maps && echo both'
	if eng_expect_rc 0; then
		[ "$(cat "$ENG_OUT")" = "$ENG_LIB $mark
both" ] || eng_fail "keep: expected LD_PRELOAD '$ENG_LIB $mark' and both mapped, got: $(cat "$ENG_OUT")"
	fi
	# Already there, by another name of the same file: left as it is.
	ln -s "$ENG_LIB" "$ENG_TMP/alias.so"
	eng_run nodup plain env LD_PRELOAD="$mark:$ENG_TMP/alias.so" "$ctl" run --lib "$ENG_LIB" -- \
		sh -c 'echo "$LD_PRELOAD"'
	if eng_expect_rc 0; then
		[ "$(cat "$ENG_OUT")" = "$mark:$ENG_TMP/alias.so" ] ||
			eng_fail "nodup: LD_PRELOAD became '$(cat "$ENG_OUT")'"
	fi
else
	eng_fail "cannot build a shared object with $ZSWAP_CC"
fi

eng_finish
