#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A fork while the parent's statistics thread answers a request (zswapctl
# list and top ask every process in turn): the child has no such thread, so
# what it held (stats_lock) must not stay held in the child. A parent under
# the library forks 200 children one after another while three processes
# ask it for full dumps without pause; each child asks its own socket for
# its counters and must get them (the first that does not, after waiting
# 10 s, ends the run).
ENG_TIMEOUT=${ENG_TIMEOUT:-300}	# a generous bound: a hang fails, slowness does not
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
eng_ctl_private

cat > "$ENG_TMP/parent.py" <<'PY'
import os, socket, sys
d, n = sys.argv[1], int(sys.argv[2])
print(os.getpid(), flush=True)
sys.stdin.readline()		# the askers run
bad = 0
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        path = os.path.join(d, "%d.sock" % os.getpid())
        for _ in range(1000):
            if os.path.exists(path):
                break
            os.sched_yield()
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        got = b""
        try:
            s.connect(path)
            s.sendall(b"counters\n")
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += b
        except OSError as e:
            sys.stderr.write("child %d: %s\n" % (os.getpid(), e))
        os._exit(0 if b"\nzswpin " in got else 1)
    _, st = os.waitpid(pid, 0)
    if st != 0:
        bad = 1
        break		# one is enough: each waits out its timeout
print("children without an answer:", bad, "of", n, flush=True)
PY
cat > "$ENG_TMP/asker.py" <<'PY'
import os, socket, sys
path, stop = sys.argv[1], sys.argv[2]
k = 0
while not os.path.exists(stop):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(20)
    try:
        s.connect(path)
    except OSError:
        break		# the parent is done
    try:
        s.sendall(b"text full\n")
        while s.recv(65536):
            pass
    except OSError:
        pass		# dropped (slow to read): ask again
    s.close()
    k += 1
    if k == 1:
        print("asking", flush=True)
print("dumps", k, flush=True)
PY
mkfifo "$ENG_TMP/go" || eng_skip "mkfifo failed"
# The parent waits on its standard input, making no memory call: started at
# once (ZSWAP_START_DELAY=0), so that it serves its socket from the start.
timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_START_DELAY=0 /usr/bin/python3 "$ENG_TMP/parent.py" \
	"$XDG/libzswap" 200 < "$ENG_TMP/go" > "$ENG_TMP/parent.out" 2> "$ENG_TMP/parent.err" &
parent=$!
exec 9> "$ENG_TMP/go"
pid=
for _ in $(seq 600); do
	pid=$(head -n 1 "$ENG_TMP/parent.out")
	[ -n "$pid" ] && [ -S "$XDG/libzswap/$pid.sock" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { exec 9>&-; wait $parent; eng_fail "the parent did not start: $(cat "$ENG_TMP/parent.err")"; eng_finish; }
# Three askers: the parent's statistics thread is never idle for long.
askers=
for k in 1 2 3; do
	timeout "$ENG_TIMEOUT" /usr/bin/python3 "$ENG_TMP/asker.py" "$XDG/libzswap/$pid.sock" "$ENG_TMP/stop" \
		> "$ENG_TMP/asker$k.out" 2> "$ENG_TMP/asker$k.err" &
	askers="$askers $!"
done
for _ in $(seq 600); do [ -s "$ENG_TMP/asker3.out" ] && break; sleep 0.1; done
echo go >&9
exec 9>&-
wait $parent
touch "$ENG_TMP/stop"
wait $askers
res=$(sed -n 's/^children without an answer: //p' "$ENG_TMP/parent.out")
eng_say "children without an answer: ${res:-?}; the askers' dumps meanwhile: $(sed -n 's/^dumps //p' "$ENG_TMP"/asker?.out | tr '\n' ' ')$(cat "$ENG_TMP"/asker?.err)"
[ "$res" = "0 of 200" ] || eng_fail "children forked while the parent answered did not answer: ${res:-none} ($(head -c 600 "$ENG_TMP/parent.err"))"
eng_finish
