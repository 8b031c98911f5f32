#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No lazy symbol binding on the library's threads: after a dlopen(RTLD_GLOBAL)
# the dynamic linker's global search list lives in the program's heap, and a
# library thread binding a PLT slot there would fault on a page it moved out
# itself and hang the process. A C program (prog_lazybind) and Python's ctypes
# with a type named by a 32 MiB string under a 32 MiB limit (the peer suite's
# test_ctypes case) must both finish, with the output of the plain run.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_lazybind)
eng_run plain plain "$prog" 1
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/ref"
eng_run idle lib ZSWAP_COLD_AGE=1 "$prog" 3
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
eng_run limit lib ZSWAP_COLD_AGE=1 ZSWAP_MEMORY_LIMIT=4M "$prog" 3
eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"

py=$(command -v python3 || true)
if [ -n "$py" ] && "$py" -c 'import ctypes' 2>/dev/null; then
	cat > "$ENG_TMP/lazy.py" <<'PY'
import ctypes, ctypes.util, time
for name in ("m", "z", "bz2", "expat", "lzma", "ffi"):
    path = ctypes.util.find_library(name)
    if path:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
time.sleep(1.5)
s = "T" * 2**25
t = "LP_" + s
print(len(t), t[:4], t[-2:])
PY
	eng_run py-plain plain "$py" "$ENG_TMP/lazy.py"
	eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/pyref"
	eng_run py-limit lib ZSWAP_COLD_AGE=1 ZSWAP_MEMORY_LIMIT=32M "$py" "$ENG_TMP/lazy.py"
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/pyref"
else
	eng_say "python3 with ctypes not found: the Python case is not run"
fi
eng_finish
