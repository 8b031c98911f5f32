#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No lazy symbol binding on the library's threads: after a dlopen(RTLD_GLOBAL)
# the dynamic linker's global search list lives in the program's heap, and a
# library thread binding a PLT slot there would fault on a page it moved out
# itself and hang the process. A C program (prog_lazybind) and Python's ctypes
# with a type named by a 32 MiB string under a 32 MiB limit (the peer suite's
# test_ctypes case) must both finish, with the output of the plain run.
# libzswap.so itself is linked lazily: once the library started, none of its
# own PLT slots may still lead to its PLT (the loader's resolver), while a
# process whose library has not started still has such slots (the check
# sees them).
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_lazybind)
eng_run plain plain "$prog" 1
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/ref"
eng_run idle lib ZSWAP_COLD_AGE=1 "$prog" 3
eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_same_stdout "$ENG_TMP/ref"
eng_run limit lib ZSWAP_COLD_AGE=1 ZSWAP_MEMORY_LIMIT=4M "$prog" 3
eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/ref"

py=$(command -v python3 || true)
lib=$ENG_LIB
if [ -n "$py" ] && command -v readelf >/dev/null 2>&1; then
	# Each jump slot's offset, and the PLT's range, from the object's tables.
	readelf -rW "$lib" | awk '$3 == "R_X86_64_JUMP_SLOT" { print $1 }' > "$ENG_TMP/slots"
	readelf -SW "$lib" | awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == ".plt" { print $3, $5 }' > "$ENG_TMP/plt"
	cat > "$ENG_TMP/slots.py" <<'PY'
import os, sys
lib = os.path.realpath(sys.argv[1])
base = None
for line in open("/proc/self/maps"):
    f = line.split()
    if len(f) >= 6 and os.path.realpath(f[5]) == lib and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
if base is None:
    sys.exit("libzswap.so is not mapped")
plt_addr, plt_size = (int(x, 16) for x in open(sys.argv[3]).read().split())
lazy = 0
slots = [int(x, 16) for x in open(sys.argv[2]).read().split()]
with open("/proc/self/mem", "rb") as mem:
    for off in slots:
        mem.seek(base + off)
        v = int.from_bytes(mem.read(8), "little")
        if base + plt_addr <= v < base + plt_addr + plt_size:
            lazy += 1
print(len(slots), "slots,", lazy, "lazy")
PY
	eng_run slots-started lib ZSWAP_START_DELAY=0 "$py" "$ENG_TMP/slots.py" "$lib" "$ENG_TMP/slots" "$ENG_TMP/plt"
	eng_expect_rc 0
	eng_say "started: $(cat "$ENG_OUT")"
	grep -q '^[1-9][0-9]* slots, 0 lazy$' "$ENG_OUT" ||
		eng_fail "slots-started: a started library left PLT slots of its own to the loader's lazy binding"
	eng_run slots-deferred lib ZSWAP_START_DELAY=60000 "$py" "$ENG_TMP/slots.py" "$lib" "$ENG_TMP/slots" "$ENG_TMP/plt"
	eng_expect_rc 0
	eng_say "deferred: $(cat "$ENG_OUT")"
	grep -q '^[1-9][0-9]* slots, [1-9][0-9]* lazy$' "$ENG_OUT" ||
		eng_fail "slots-deferred: no lazy slot in a library not started: the check cannot see one"
fi
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
