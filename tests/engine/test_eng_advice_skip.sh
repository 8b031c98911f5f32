#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_advice_skip.sh - MADV_PAGEOUT and MADV_COLD on memory the library
# does not manage are counted by reason (the advice_skip_* counters of the
# dump's engine section, libzswap(7) DUMPS): Python's mmap.mmap, a
# MAP_SHARED mapping, given both advices; a private file mapping and a
# read-only private mapping given MADV_PAGEOUT. Each counter moves by the
# pages advised and no other does.

. "$(dirname "$0")/eng_lib.sh"

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"

cat > "$ENG_TMP/advise.py" <<'PY'
import ctypes, mmap, os, sys
MADV_COLD, MADV_PAGEOUT = 20, 21
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
def advise(addr, n, how):
    if libc.madvise(addr, n, how) != 0:
        sys.exit("madvise(%d): errno %d" % (how, ctypes.get_errno()))
# 256 pages shared (mmap.mmap's anonymous mapping is MAP_SHARED).
shared = mmap.mmap(-1, 256 * 4096)
shared.write(b"x" * len(shared))
addr = ctypes.addressof(ctypes.c_char.from_buffer(shared))
advise(addr, len(shared), MADV_PAGEOUT)
advise(addr, len(shared), MADV_COLD)
# 16 pages of a file, private.
path = os.path.join(sys.argv[1], "file")
with open(path, "wb") as f:
    f.write(b"y" * 16 * 4096)
fd = os.open(path, os.O_RDONLY)
priv = libc.mmap(None, 16 * 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0)
advise(priv, 16 * 4096, MADV_PAGEOUT)
# 8 pages of private anonymous memory, read-only.
ro = libc.mmap(None, 8 * 4096, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
advise(ro, 8 * 4096, MADV_PAGEOUT)
print("advised", flush=True)
PY

eng_run advise lib ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/dump" ZSWAP_STATS_SIGNAL=none \
	python3 "$ENG_TMP/advise.py" "$ENG_TMP"
[ "$ENG_RC" = 0 ] || eng_fail "the program failed: exit $ENG_RC: $(cat "$ENG_ERR")"
[ -s "$ENG_TMP/dump" ] || eng_skip "no dump at exit (no userfaultfd here?): $(cat "$ENG_ERR")"

# expect NAME PAGES: the counter of the dump at exit.
expect() {
	got=$(eng_dump_stat "$ENG_TMP/dump" "$1")
	[ "$got" = "$2" ] || eng_fail "$1 is '${got:-missing}', want $2 (pages advised)"
}
expect advice_skip_shared 512
expect advice_skip_file 16
expect advice_skip_readonly 8
expect advice_skip_unmapped 0
# The counters are the engine's, beside evict_skipped_pages.
sed -n '/^== engine/,/^== /p' "$ENG_TMP/dump" | grep -q '^advice_skip_shared ' ||
	eng_fail "advice_skip_shared is not in the dump's engine section"

eng_finish
