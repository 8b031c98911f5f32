#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Adoption of a program mapping that the kernel merged with library memory
# into one VMA (glibc's arenas are MAP_NORESERVE like the library's own
# memory): the program's part is adopted and evicted, the library's part is
# never registered nor evicted (prog_adopt.c). Library-only: without the
# library there is nothing to merge with.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_adopt)
eng_run adopt lib ZSWAP_MIN_REGION=64K "$prog" below whole above
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "adopt ok"
eng_finish
