#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# zswapctl trusts no socket for its name. A fake server of user nobody (a
# python3 script) listens under a victim's PID in a directory zswapctl
# consults, and answers a dump holding a terminal escape sequence and a
# forged "ok": zswapctl refuses it (exit 1, one line) whether the directory
# is another user's (a root process asked about, XDG_RUNTIME_DIR pointing
# at nobody's directory) or the server is another process of the right user
# (SO_PEERCRED), and the escape byte never reaches the output. A server
# that never answers ends zswapctl at its deadline with an error, one that
# sends 100 MiB at its size cap. A genuine process under the library whose
# name holds an escape byte is shown with the byte escaped (stats, list),
# and a process that started as root under the library and changed to user
# nobody is still found by root's zswapctl.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
[ "$(id -u)" = 0 ] || eng_skip "needs root (servers and victims of user nobody)"
command -v setpriv > /dev/null 2>&1 || eng_skip "setpriv(1) is missing (util-linux)"
command -v python3 > /dev/null 2>&1 || eng_skip "python3 is not installed"
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
# A python3 that nobody may run (not one under root's home).
PY=
for p in /usr/bin/python3 "$(command -v python3)"; do
	$NOBODY "$p" -c '' 2> /dev/null && PY=$p && break
done
[ -n "$PY" ] || eng_skip "no python3 that user nobody may run"
ESC=$(printf '\033')

cat > "$ENG_TMP/fake.py" <<'PY'
import os, socket, sys, time
mode, d, name = sys.argv[1], sys.argv[2], sys.argv[3]
if name == "self":
    name = str(os.getpid())
s = socket.socket(socket.AF_UNIX)
s.bind(os.path.join(d, name + ".sock"))
s.listen(8)
print("ready", os.getpid(), flush=True)
while True:
    c, _ = s.accept()
    req = b""
    while b"\n" not in req:
        b = c.recv(1024)
        if not b:
            break
        req += b
    try:
        if mode == "silent":
            time.sleep(3600)
        elif mode == "flood":
            chunk = b"A" * 65535 + b"\n"
            for _ in range(1600):
                c.sendall(chunk)
        elif req.startswith((b"text", b"json", b"counters")):
            c.sendall(b"== libzswap statistics (forged)\n\033[2Jzswpout 1\n")
        else:
            c.sendall(b"ok\n\033[2Jforged change\n")
    except OSError:
        pass
    c.close()
PY

# A directory of nobody's, private as the library makes them.
NXDG=$ENG_TMP/nobody
mkdir -p "$NXDG/libzswap"
chmod 700 "$NXDG" "$NXDG/libzswap"
chown -R nobody:nogroup "$NXDG"

# ready_pid FILE: the pid a "ready PID" line of FILE gives, once there.
ready_pid() {
	for _ in $(seq 300); do
		awk '$1 == "ready" { print $2; f = 1 } END { exit !f }' "$1" && return 0
		sleep 0.1
	done
	return 1
}

# serve MODE NAME: the fake server as nobody in $NXDG/libzswap; SRV its
# process, SRV_PID the server's pid once it listens.
serve() {
	rm -f "$NXDG"/libzswap/*.sock
	timeout -k 5 120 $NOBODY "$PY" "$ENG_TMP/fake.py" "$1" "$NXDG/libzswap" "$2" > "$ENG_TMP/srv.out" 2> "$ENG_TMP/srv.err" &
	SRV=$!
	SRV_PID=$(ready_pid "$ENG_TMP/srv.out") ||
		eng_fail "the fake server did not start: $(cat "$ENG_TMP/srv.err")"
}
unserve() {
	kill "$SRV" 2> /dev/null
	wait "$SRV" 2> /dev/null
}

# refused LABEL WHAT: the last zswapctl exited 1 with one line on stderr
# holding WHAT, printed nothing forged and no escape byte.
refused() {
	[ "$RC" = 1 ] || eng_fail "$1: exit $RC, want 1 (stdout '$(head -c 200 "$ENG_TMP/c.out")')"
	[ "$(wc -l < "$ENG_TMP/c.err")" = 1 ] || eng_fail "$1: not one line on stderr: '$(cat "$ENG_TMP/c.err")'"
	grep -q -- "$2" "$ENG_TMP/c.err" || eng_fail "$1: stderr '$(cat "$ENG_TMP/c.err")' lacks '$2'"
	if grep -q "forged" "$ENG_TMP/c.out" "$ENG_TMP/c.err" || grep -q "$ESC" "$ENG_TMP/c.out" "$ENG_TMP/c.err"; then
		eng_fail "$1: the forged answer was printed"
	fi
	return 0
}

# ctl [$NOBODY] ARGS...: zswapctl, bounded, RC its status.
ctl() {
	timeout -k 5 60 "$@" > "$ENG_TMP/c.out" 2> "$ENG_TMP/c.err"
	RC=$?
}

# 1. Root's zswapctl about a root process, XDG_RUNTIME_DIR at nobody's
# directory: the directory is nobody's, so it is skipped.
sleep 120 & victim=$!
serve forge "$victim"
ctl env XDG_RUNTIME_DIR="$NXDG" "$ctl" stats "$victim"
refused "root stats, nobody's directory" "owned by user 65534, not 0: skipped"
ctl env XDG_RUNTIME_DIR="$NXDG" "$ctl" set "$victim" cold_age=5
refused "root set, nobody's directory" "owned by user 65534, not 0: skipped"
unserve
kill "$victim"

# 2. A process of nobody's and nobody's own directory: the server is
# another process, refused by SO_PEERCRED.
$NOBODY sleep 120 & victim=$!
serve forge "$victim"
ctl $NOBODY env XDG_RUNTIME_DIR="$NXDG" "$ctl" stats "$victim"
refused "stats, another process's server" "is served by pid $SRV_PID of user 65534, not process $victim: refused"
ctl $NOBODY env XDG_RUNTIME_DIR="$NXDG" "$ctl" set "$victim" cold_age=5
refused "set, another process's server" "is served by pid $SRV_PID of user 65534, not process $victim: refused"
ctl $NOBODY env XDG_RUNTIME_DIR="$NXDG" "$ctl" list
grep -q "^ *$victim " "$ENG_TMP/c.out" && eng_fail "list shows the forged socket of $victim"
grep -q "is served by pid $SRV_PID" "$ENG_TMP/c.err" || eng_fail "list does not say why it skips $victim: '$(cat "$ENG_TMP/c.err")'"
unserve
kill "$victim"

# 3. A server that accepts and never answers: the deadline ends zswapctl.
serve silent self
ctl $NOBODY env XDG_RUNTIME_DIR="$NXDG" "$ctl" stats "$SRV_PID"
refused "a server that never answers" "did not answer within"
unserve

# 4. A server that sends 100 MiB: zswapctl stops at its cap.
serve flood self
ctl $NOBODY env XDG_RUNTIME_DIR="$NXDG" "$ctl" stats "$SRV_PID"
refused "a server that sends 100 MiB" "exceeds 16 MiB"
[ "$(wc -c < "$ENG_TMP/c.out")" = 0 ] || eng_fail "a server that sends 100 MiB: part of it was printed"
unserve

# 5. A genuine process whose name holds an escape sequence: printed escaped.
XDG=$ENG_TMP/xdg
mkdir -m 700 "$XDG"
evil=$(printf 'z\033[2Jz')
ln -s "$(command -v sleep)" "$ENG_TMP/$evil"
# sleep(1) makes no memory call: the library starts at once (ZSWAP_START_DELAY=0).
XDG_RUNTIME_DIR=$XDG LD_PRELOAD="$ENG_PRELOAD" ZSWAP_START_DELAY=0 "$ENG_TMP/$evil" 120 & victim=$!
for _ in $(seq 100); do [ -S "$XDG/libzswap/$victim.sock" ] && break; sleep 0.1; done
ctl env XDG_RUNTIME_DIR="$XDG" "$ctl" stats "$victim"
[ "$RC" = 0 ] || eng_fail "stats of a genuine process: exit $RC: $(cat "$ENG_TMP/c.err")"
grep -qF 'z\x1b[2Jz' "$ENG_TMP/c.out" || eng_fail "stats: the name is not shown escaped: $(head -n 3 "$ENG_TMP/c.out")"
grep -q "$ESC" "$ENG_TMP/c.out" && eng_fail "stats: the escape byte reached the output"
ctl env XDG_RUNTIME_DIR="$XDG" "$ctl" list
grep -q "^ *$victim z\\\\x1b\\[2Jz " "$ENG_TMP/c.out" || eng_fail "list: the name is not shown escaped: $(cat "$ENG_TMP/c.out")"
grep -q "$ESC" "$ENG_TMP/c.out" && eng_fail "list: the escape byte reached the output"
kill "$victim"

# 6. A process started as root under the library that changed to nobody
# (and made itself dumpable again, so /proc/PID is nobody's).
cat > "$ENG_TMP/drop.py" <<'PY'
import ctypes, os, sys, time
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
print("ready", os.getpid(), flush=True)
time.sleep(120)
PY
# Its socket goes to nobody's directory, which it may create: the test
# removes what it left there (killed, it runs no destructor).
ndir=/tmp/libzswap-65534
[ -e "$ndir" ] && ndir_was=1 || ndir_was=0
XDG_RUNTIME_DIR=$XDG LD_PRELOAD="$ENG_PRELOAD" ZSWAP_START_DELAY=0 timeout -k 5 120 python3 "$ENG_TMP/drop.py" > "$ENG_TMP/drop.out" 2> "$ENG_TMP/drop.err" &
dropper=$!
if ! pid=$(ready_pid "$ENG_TMP/drop.out"); then
	eng_fail "the program that changes user did not start: $(cat "$ENG_TMP/drop.err")"
else
	ctl env XDG_RUNTIME_DIR="$XDG" "$ctl" stats "$pid"
	[ "$RC" = 0 ] && grep -q "^libzswap .* statistics: pid $pid " "$ENG_TMP/c.out" ||
		eng_fail "stats of a process that left root: exit $RC: $(cat "$ENG_TMP/c.err")"
fi
kill "$dropper" 2> /dev/null
wait "$dropper" 2> /dev/null
[ -n "$pid" ] && rm -f "$ndir/$pid.sock" "/run/user/65534/libzswap/$pid.sock"
[ "$ndir_was" = 1 ] || rmdir "$ndir" 2> /dev/null

eng_finish
