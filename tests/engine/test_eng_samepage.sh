#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Several threads faulting on the same evicted page at once all read the right
# data, all their writes stick, and each page is loaded exactly once.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_samepage)
eng_compare_run samepage-8 "$prog" 8 40
eng_compare_run samepage-16 "$prog" 16 20
eng_finish
