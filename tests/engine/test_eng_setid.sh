#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Programs that change credentials under the library. glibc applies each
# set*id call to every thread and aborts when one thread's result differs
# from the caller's; the library's threads must take the calling thread's
# capabilities and securebits first.
# 1. setpriv under the library (keepcaps and a capability raised on its own
#    thread before setresgid and setgroups) runs a program that pages memory
#    out and back as nobody: the same output and exit status as without it.
# 2. prog_setid, a root daemon with threads of its own that drops to nobody
#    keeping CAP_SETGID for one more setresgid, then drops every capability:
#    no library thread keeps one, its memory reads back whole.
# 3. Its statistics socket moves from root's directory to nobody's, answers
#    there, and is removed at exit.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

# 1. setpriv itself under the library.
prog=$(eng_prog prog_pageout)
eng_need_nobody "$prog"
eng_run setpriv-plain plain setpriv --reuid=nobody --regid=nogroup --clear-groups "$prog" --inactive-ok 2
if eng_expect_rc 0; then
	cp "$ENG_OUT" "$ENG_TMP/setpriv.ref"
	eng_run setpriv lib setpriv --reuid=nobody --regid=nogroup --clear-groups "$prog" --inactive-ok 2
	# As nobody the program may find userfaultfd refused: that line only.
	if eng_expect_rc 0; then
		eng_expect_same_stdout "$ENG_TMP/setpriv.ref"
		ENG_ALLOW_LIBZSWAP='userfaultfd unavailable'
		eng_expect_no_libzswap
		unset ENG_ALLOW_LIBZSWAP
	fi
fi

# 2. The daemon's drop, with and without the library.
prog=$(eng_prog prog_setid)
eng_compare_run daemon "$prog"

# 3. The socket follows the new user.
label=socket
if ! command -v python3 >/dev/null 2>&1 || ! mkfifo "$ENG_TMP/hold"; then
	eng_say "no python3 or no mkfifo: the socket is not checked"
	eng_finish
fi
timeout "$ENG_TIMEOUT" env -u XDG_RUNTIME_DIR LD_PRELOAD="$ENG_PRELOAD" "$prog" --hold \
	< "$ENG_TMP/hold" > "$ENG_TMP/hold.out" 2> "$ENG_TMP/hold.err" &
bg=$!
exec 9> "$ENG_TMP/hold"	# the program runs until this closes
wait_for() {	# wait_for WORD: the pid the program printed after WORD
	for _ in $(seq 600); do
		pid=$(awk -v w="$1" '$1 == w { print $2 }' "$ENG_TMP/hold.out")
		[ -n "$pid" ] && return 0
		kill -0 "$bg" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# The directory each user's socket goes to (stats.c): no XDG_RUNTIME_DIR here.
root_sock= nobody_sock=
if ! wait_for root; then
	eng_fail "$label: the program did not start: $(cat "$ENG_TMP/hold.err")"
else
	root_sock=/run/libzswap/$pid.sock
	[ -S "$root_sock" ] || eng_fail "$label: as root, no socket at $root_sock"
	echo go >&9
	if ! wait_for ready; then
		eng_fail "$label: the program did not drop to nobody: $(cat "$ENG_TMP/hold.err")"
	else
		for s in /run/user/65534/libzswap/$pid.sock /tmp/libzswap-65534/$pid.sock; do
			[ -S "$s" ] && nobody_sock=$s && break
		done
		[ ! -e "$root_sock" ] || eng_fail "$label: $root_sock is still there after the drop"
		if [ -z "$nobody_sock" ]; then
			eng_fail "$label: no socket in nobody's directory after the drop"
		else
			[ "$(stat -c %u "$(dirname "$nobody_sock")")" = 65534 ] ||
				eng_fail "$label: $(dirname "$nobody_sock") is not nobody's"
			timeout "$ENG_TIMEOUT" python3 - "$nobody_sock" > "$ENG_TMP/dump.txt" 2> "$ENG_TMP/py.err" <<'PY' ||
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"text\n")
while True:
    b = s.recv(65536)
    if not b:
        break
    sys.stdout.buffer.write(b)
PY
				eng_fail "$label: cannot ask $nobody_sock: $(cat "$ENG_TMP/py.err")"
			grep -q '^== engine' "$ENG_TMP/dump.txt" && grep -q '(zswapctl)' "$ENG_TMP/dump.txt" ||
				eng_fail "$label: $nobody_sock answered no dump: $(head -c 300 "$ENG_TMP/dump.txt")"
		fi
	fi
fi
exec 9>&-
wait $bg
rc=$?
[ "$rc" = 0 ] || eng_fail "$label: the program exited $(eng_status "$rc"): $(tail -n 20 "$ENG_TMP/hold.err")"
n=$(eng_count_libzswap "$ENG_TMP/hold.err")
[ "$n" = 0 ] || eng_fail "$label: $n libzswap: line(s): $(grep '^libzswap:' "$ENG_TMP/hold.err")"
[ -z "$nobody_sock" ] || [ ! -e "$nobody_sock" ] || eng_fail "$label: $nobody_sock is still there after exit"
[ -z "$root_sock" ] || [ ! -e "$root_sock" ] || eng_fail "$label: $root_sock is there after exit"
eng_finish
