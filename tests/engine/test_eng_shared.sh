#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# MAP_SHARED (anonymous and file), private file mappings, read-only and
# PROT_NONE anonymous memory are never evicted, and keep their data.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_shared)
eng_compare_run shared "$prog"
eng_finish
