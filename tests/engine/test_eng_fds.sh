#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The program's descriptors are the program's (src/base/fdtab.h). The library's
# own (userfaultfd, pagemap, eventfds, statm) sat at the lowest numbers: a
# shell's `exec 5>file` put a file where the fork eventfd was, and the next
# fork hung for good (autoconf's configure, libtool's `exec 5<&0`); closing
# every descriptor (closefrom, close_range, Python's os.closerange) made
# every evicted page read as zeros. Now they sit high and the interposed
# close family leaves them open: each case below evicts, deals with the
# descriptors, checks every page, forks and checks again in the child.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_fds)
for c in close-all closefrom close-range; do
	eng_compare_run "fds-$c" "$prog" "$c"
done

# dup2 onto every number: the library's own are refused (EBUSY), with one
# line saying so; the program's output is the same.
eng_run fds-dup2-plain plain "$prog" dup2-all
if eng_expect_rc 0; then
	cp "$ENG_OUT" "$ENG_TMP/dup2.ref"
	eng_run fds-dup2 lib "$prog" dup2-all
	if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/dup2.ref"; then
		n=$(eng_count_libzswap "$ENG_ERR")
		[ "$n" = 1 ] && grep -q '^libzswap: dup2 onto [0-9]*, a descriptor libzswap uses' "$ENG_ERR" ||
			eng_fail "fds-dup2: expected one libzswap: line about dup2, got $n"
	fi
fi

# The close_range system call itself: nothing interposed sees it, the
# evicted pages are gone (the kernel dropped the registrations), and the
# library must say so rather than lose them quietly.
eng_run fds-raw-close lib "$prog" raw-close
if eng_expect_rc 0 && eng_expect_stdout_has "raw-close: done"; then
	grep -q "^libzswap: the program closed libzswap's userfaultfd" "$ENG_ERR" ||
		eng_fail "fds-raw-close: the lost userfaultfd went unreported"
fi

# The shell idioms that hung: `exec N>file` on the low numbers, libtool's
# save-and-restore of stdin on descriptor 5, each followed by a fork (a
# command substitution). Nothing of the library's may land in the files.
if command -v bash >/dev/null 2>&1; then
	f=$ENG_TMP/fds-shell
	eng_run fds-bash-exec lib bash -c "exec 3>$f.3 4>$f.4 5>$f.5 6>$f.6 7>$f.7; x=\$(echo sub); echo got \$x"
	if eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "got sub"; then
		for k in 3 4 5 6 7; do
			[ ! -s "$f.$k" ] || eng_fail "fds-bash-exec: descriptor $k's file got $(wc -c <"$f.$k") bytes"
		done
	fi
	eng_run fds-bash-libtool lib bash -c 'exec 5<&0 </dev/null; exec 0<&5 5<&-; x=$(echo a); echo got $x'
	eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "got a"
fi

# Python closing every inherited descriptor under a memory limit, with its
# heap mostly evicted: the data hashes the same before and after.
if command -v python3 >/dev/null 2>&1; then
	cat >"$ENG_TMP/closerange.py" <<'EOF'
import hashlib, os
data = [bytes([i % 251]) * 4000 + i.to_bytes(8, "little") * 12 for i in range(16000)]
h1 = hashlib.sha256(b"".join(data)).hexdigest()
junk = [bytearray(b"j" * 4096) for i in range(8000)]
os.closerange(3, 4096)
junk2 = [bytearray(b"k" * 4096) for i in range(8000)]
h2 = hashlib.sha256(b"".join(data)).hexdigest()
print("same" if h1 == h2 else "DIFFERENT")
EOF
	eng_run fds-python lib ZSWAP_MEMORY_LIMIT=24M ZSWAP_STATS_AT_EXIT=1 python3 "$ENG_TMP/closerange.py"
	if eng_expect_rc 0 && eng_expect_stdout_has "same"; then
		r=$(eng_dump_stat "$ENG_ERR" refaults)
		eng_say "fds-python: refaults ${r:-?}"
		[ "${r:-0}" -gt 0 ] || eng_fail "fds-python: no refault: nothing was evicted, the case proves nothing"
	fi
fi
eng_finish
