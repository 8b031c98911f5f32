#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_coredump.sh - stored pages in a core dump (libzswap(7) SIGNALS):
# a program whose pages were all paged out dies of abort() (SIGABRT) and of
# its own null write (SIGSEGV) with core dumps on: every page reads back
# from the core as it was written (without the library's help it would read
# zeros); with core dumps off nothing is loaded back; SIGQUIT ignored or
# handled by the program goes as without the library. The core is read
# with a few lines of Python (ELF program headers), so no debugger is
# needed.

. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_coredump)
command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed (it reads the core)"
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
"" | "|"* | /*) eng_skip "core_pattern '$pattern' writes no core file in the working directory" ;;
esac
(ulimit -c unlimited) 2>/dev/null || eng_skip "core dumps cannot be turned on (ulimit -c unlimited refused)"
MIB=16

# check_core LABEL: the core the last run left in the working directory
# holds every page the program wrote ("base=ADDR pages=N" on its stdout).
check_core() {
	base=$(sed -n 's/^base=\(0x[0-9a-f]*\) pages=.*/\1/p' "$ENG_OUT")
	pages=$(sed -n 's/^base=0x[0-9a-f]* pages=\([0-9]*\)/\1/p' "$ENG_OUT")
	core=$(ls -t core* 2>/dev/null | head -n 1)
	if [ -z "$base" ] || [ -z "$pages" ]; then
		eng_fail "$1: the program did not say where its pages are"
		return
	fi
	if [ -z "$core" ]; then
		eng_fail "$1: no core file was written (core_pattern '$pattern')"
		return
	fi
	if ! python3 - "$core" "$base" "$pages" > "$ENG_TMP/$1.core" 2>&1 <<'EOF'
import struct, sys
path, base, pages = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3])
f = open(path, 'rb')
h = f.read(64)
if h[:4] != b'\x7fELF' or h[4] != 2:
    sys.exit('not a 64-bit ELF core')
phoff = struct.unpack_from('<Q', h, 0x20)[0]
phentsize, phnum = struct.unpack_from('<HH', h, 0x36)
segs = []
for i in range(phnum):
    f.seek(phoff + i * phentsize)
    ptype, _, off, vaddr, _, filesz, memsz, _ = struct.unpack('<IIQQQQQQ', f.read(56))
    if ptype == 1:
        segs.append((vaddr, memsz, off, filesz))
def word(addr):
    for vaddr, memsz, off, filesz in segs:
        if vaddr <= addr < vaddr + memsz:
            if addr - vaddr + 8 > filesz:
                return None
            f.seek(off + addr - vaddr)
            return struct.unpack('<Q', f.read(8))[0]
    return None
magic, wrong, zero, missing = 0x5a17c0de00000000, 0, 0, 0
for i in range(pages):
    a, b = word(base + i * 4096), word(base + i * 4096 + 4088)
    if a is None or b is None:
        missing += 1
    elif a != magic ^ i or b != i ^ 0xffffffffffffffff:
        wrong += 1
        zero += a == 0 and b == 0
print('pages %d wrong %d (zero %d) not in the core %d' % (pages, wrong, zero, missing))
sys.exit(1 if wrong or missing else 0)
EOF
	then
		eng_fail "$1: the core does not hold the pages: $(cat "$ENG_TMP/$1.core")"
	else
		eng_say "$1: $(cat "$ENG_TMP/$1.core")"
	fi
}

mkdir -p "$ENG_TMP/cores"
cd "$ENG_TMP/cores" || exit 99

# Killed with core dumps on: the pages are in the core. Without the
# library first: the reader itself is checked on a core nothing was
# stored from.
for run in abort:plain:134 abort:lib:134 segv:lib:139; do
	how=${run%%:*} rest=${run#*:}
	mode=${rest%%:*} want=${rest#*:}
	rm -f core*
	ulimit -S -c unlimited
	eng_run "$how-$mode" "$mode" "$prog" "$how" $MIB
	eng_expect_rc "$want"
	check_core "$how-$mode"
	if [ "$mode" = lib ]; then
		grep -q "^libzswap: signal $((want - 128)): [0-9]* stored pages loaded back for the core dump" "$ENG_ERR" ||
			eng_fail "$how-$mode: the library did not say it loaded the pages back"
	fi
done

# Core dumps off: nothing loaded back (the process dies as fast as it would).
rm -f core*
ulimit -S -c 0
eng_run abort-nocore lib "$prog" abort $MIB
eng_expect_rc 134
! grep -q 'loaded back for the core dump' "$ENG_ERR" || eng_fail "abort-nocore: pages were loaded back with core dumps off"

# SIGQUIT ignored, or handled, by the program: as without the library.
ulimit -S -c unlimited
for how in quit-ign quit-own; do
	rm -f core*
	eng_run "$how" lib "$prog" "$how" $MIB
	eng_expect_rc 0
	case $how in
	quit-ign) eng_expect_stdout_has survived ;;
	quit-own) eng_expect_stdout_has handled ;;
	esac
	! grep -q 'loaded back for the core dump' "$ENG_ERR" || eng_fail "$how: pages were loaded back for a signal the program took"
	[ -z "$(ls core* 2>/dev/null)" ] || eng_fail "$how: a core was written"
done
rm -f core*
cd / || exit 99

eng_finish
