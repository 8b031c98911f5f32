#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's uffd module (src/engine/uffd.c): the userfaultfd features the
# library requires (UFFDIO_MOVE and the UNMAP, REMAP and REMOVE events) are
# asked of the kernel with every optional one it offers (EVENT_FORK, POISON,
# THREAD_ID, WP_ASYNC) and none it does not. A kernel without a required
# feature makes the library step aside with exactly one "libzswap:" line
# naming what is missing, the program running as without it; one without an
# optional feature leaves the library active and the data right; EVENT_FORK
# refused (EPERM: no CAP_SYS_PTRACE) is given up and the rest kept.
# Smaller kernels are made by tests/progs/prog_uffd.so, preloaded before the
# library, which hides the features PROG_UFFD_HIDE names from UFFDIO_API and
# reports each UFFDIO_API the library makes.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_pageout)
shim="$ENG_BUILDDIR/tests/progs/prog_uffd.so"
[ -f "$shim" ] || { eng_say "ERROR: $shim is not built"; exit 99; }
# The sanitizer runtime first, as in ENG_PRELOAD; the kernel's stand-in
# before the library, so that the library's ioctl calls reach it.
shim_preload="${ENG_SAN_PRELOAD:+$ENG_SAN_PRELOAD }$shim $ENG_LIB"

# linux/userfaultfd.h
FORK=0x2 REMAP=0x4 REMOVE=0x8 UNMAP=0x40 THREAD_ID=0x100 POISON=0x4000 WP_ASYNC=0x8000 MOVE=0x10000
REQUIRED=$((MOVE | REMAP | REMOVE | UNMAP))
OPTIONAL=$((FORK | THREAD_ID | POISON | WP_ASYNC))

eng_run ref plain "$prog" 2
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/ref"

# The kernel as it is: the library must be active here for the rest to mean
# anything (prog_pageout skips when it is not).
eng_run kernel lib "$prog" 2
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
[ "$ENG_FAILED" = 0 ] || eng_finish

# api_lines: the UFFDIO_API calls of the last run, "ASKED OFFERED RC" each.
api_lines() {
	sed -n 's/^prog_uffd: api asked=\(0x[0-9a-f]*\) offered=\(0x[0-9a-f]*\) rc=\(-\{0,1\}[0-9]*\)$/\1 \2 \3/p' "$ENG_ERR"
}

# expect_granted LABEL: the library asked first what the kernel offers, then
# for the required features and the optional ones offered, and was granted
# exactly that, once at least; with LABEL's feature refused (EPERM), a first
# request with it and a granted one without it. Sets offered.
expect_granted() {
	offered=$(api_lines | awk '$1 == "0x0" && $3 == 0 { print $2; exit }')
	if [ -z "$offered" ]; then
		eng_fail "$1: the library never asked the kernel which features it offers"
		return 1
	fi
	want=$((REQUIRED | (offered & OPTIONAL) & ~${2:-0}))
	granted=0
	for a in $(api_lines | awk '$1 != "0x0" && $3 == 0 { print $1 }'); do
		if [ $((a)) != "$want" ]; then
			eng_fail "$1: granted features $a, expected $(printf '0x%x' "$want") (offered $offered)"
			return 1
		fi
		granted=$((granted + 1))
	done
	[ "$granted" -ge 1 ] || { eng_fail "$1: no UFFDIO_API request of the library was granted"; return 1; }
	return 0
}

# The stand-in hiding nothing: the same negotiation as with the kernel.
eng_run none lib LD_PRELOAD="$shim_preload" "$prog" 2
[ "$ENG_RC" = 0 ] || eng_fail "none: exit status $(eng_status "$ENG_RC"), expected 0 (the library active)"
eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
expect_granted none

# A required feature missing: one line naming it, a pure pass-through.
for f in MOVE:UFFDIO_MOVE REMAP:UNMAP/REMAP/REMOVE REMOVE:UNMAP/REMAP/REMOVE UNMAP:UNMAP/REMAP/REMOVE; do
	name=${f%%:*}
	says=${f#*:}
	eval bit=\$$name
	eng_run "no-$name" lib LD_PRELOAD="$shim_preload" PROG_UFFD_HIDE="$bit" "$prog" --expect-inactive 2
	eng_expect_rc 0 || continue
	eng_expect_same_stdout "$ENG_TMP/ref"
	eng_expect_one_libzswap || continue
	echo "$ENG_LINE" | grep -qF "$says" || eng_fail "no-$name: the line does not name what is missing ($says)"
	echo "$ENG_LINE" | grep -qF "6.8" || eng_fail "no-$name: the line does not name the kernel needed (6.8)"
	asked=$(api_lines | awk '$1 != "0x0"' | wc -l)
	[ "$asked" = 0 ] || eng_fail "no-$name: the library asked for features ($asked request(s)) from a kernel without $name"
done

# An optional feature missing: the library active, the data right, the
# feature never asked for (the stand-in refuses it as the kernel would).
for name in FORK THREAD_ID WP_ASYNC POISON; do
	eval bit=\$$name
	ENG_ALLOW_LIBZSWAP=
	[ "$name" = POISON ] && ENG_ALLOW_LIBZSWAP='no UFFDIO_POISON'
	eng_run "no-$name" lib LD_PRELOAD="$shim_preload" PROG_UFFD_HIDE="$bit" "$prog" 2
	[ "$ENG_RC" = 0 ] || eng_fail "no-$name: exit status $(eng_status "$ENG_RC"), expected 0 (the library active)"
	eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
	expect_granted "no-$name"
	if [ "$name" = POISON ] && ! grep -q '^libzswap:.*no UFFDIO_POISON' "$ENG_ERR"; then
		eng_fail "no-POISON: no line saying that a failed load aborts the program without UFFDIO_POISON"
	fi
done
ENG_ALLOW_LIBZSWAP=

# EVENT_FORK refused though offered: asked for, given up, the rest kept.
eng_run eperm-FORK lib LD_PRELOAD="$shim_preload" PROG_UFFD_EPERM="$FORK" "$prog" 2
[ "$ENG_RC" = 0 ] || eng_fail "eperm-FORK: exit status $(eng_status "$ENG_RC"), expected 0 (the library active)"
eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
if expect_granted eperm-FORK "$FORK"; then
	refused=$(api_lines | awk '$3 == "-1" { print $1 }' | head -n 1)
	if [ -z "$refused" ] || [ $((refused & FORK)) = 0 ]; then
		eng_fail "eperm-FORK: the library did not ask for EVENT_FORK first (offered $offered)"
	fi
fi
eng_finish
