#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mlock'ed memory (mlock, mlock2 MLOCK_ONFAULT, mlockall) is never evicted;
# mlock brings evicted pages back; after munlock eviction works again; calls
# over locked memory answer what they answer without the library; the
# second tier's key page stays locked through the program's munlockall.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_mlock)
# AddressSanitizer's runtime intercepts mlock, mlock2, mlockall and makes
# them do nothing (VmLck stays 0): in an ASan build there is no locking to test.
[ -z "$ENG_SAN_PRELOAD" ] ||
	eng_skip "an AddressSanitizer build: the sanitizer runtime turns mlock and mlockall into no-ops"
for c in mlock onfault mlockall mlockall-onfault; do
	eng_compare_run "mlock-$c" "$prog" "$c"
done
# The second tier's key stays locked through the program's munlockall.
eng_compare_run mlock-keylock ZSWAP_WRITEBACK=1 "$prog" keylock
eng_finish
