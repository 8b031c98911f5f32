#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A program that registers memory with its own userfaultfd keeps it: libzswap
# neither registers nor evicts it, the program's handler sees exactly its own
# faults, and the data stays right.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_ownuffd)
eng_compare_run ownuffd "$prog"
eng_finish
