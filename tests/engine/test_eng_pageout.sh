#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Page-out and verify over zero, same-filled, text, binary and random pages,
# by madvise(MADV_PAGEOUT) and by zswap_pageout(): pages leave the page table,
# the counters and RSS say where they went, reading back gives the same bytes
# as a run without the library, and the store is empty afterwards; with
# ZSWAP_WRITEBACK=0, pages that do not compress are refused and stay.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_pageout)
eng_compare_run pageout-madvise "$prog"
eng_compare_run pageout-api "$prog" --api
# Larger mappings: several regions' worth of pages per kind.
eng_compare_run pageout-16m "$prog" 16
# ZSWAP_WRITEBACK=0 (memory.zswap.writeback 0): random pages are refused,
# stay resident and are counted in reject_compress_poor; the rest go out.
eng_compare_run pageout-refuse-poor ZSWAP_WRITEBACK=0 "$prog" --refuse-poor
eng_finish
