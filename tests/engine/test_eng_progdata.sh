#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main program's data segment made anonymous at start (ZSWAP_PROGRAM_DATA,
# src/engine/progdata.h): with the library started on the process's one
# thread, the written data is evicted and comes back intact; with
# ZSWAP_PROGRAM_DATA=0, and with a second thread running at the start, it
# stays a file mapping and every write is kept (prog_progdata.c). Started at
# the first call (zswap_active) and in the constructor (a memory limit).
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_progdata)
eng_run progdata-plain plain "$prog" anon
eng_expect_rc 0 && eng_expect_stdout_has "progdata ok (anon, plain)"
eng_run progdata-anon lib "$prog" anon
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "progdata ok (anon, managed)"
eng_run progdata-limit lib ZSWAP_MEMORY_LIMIT=256M ZSWAP_VERBOSE=1 "$prog" anon
eng_expect_rc 0 && eng_expect_stdout_has "progdata ok (anon, managed)" &&
	{ grep -q "the program's data ([0-9]* KiB) is anonymous memory now" "$ENG_ERR" ||
		eng_fail "progdata-limit: no line saying the data was made anonymous"; }
eng_run progdata-off lib ZSWAP_PROGRAM_DATA=0 "$prog" file
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "progdata ok (file, managed)"
eng_run progdata-threads lib "$prog" threads
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "progdata ok (threads, managed)"
eng_finish
