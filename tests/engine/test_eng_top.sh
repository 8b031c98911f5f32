#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_top.sh - zswapctl list and top over every process under
# libzswap: list's table has zramctl's columns and a row for a live
# preloaded process whose figures are the process's own (its limit, what it
# stored, its group), --json the same as a JSON array; top, run in a real
# terminal (tmux), shows that table with the process and its group's row
# and quits on q.

. "$(dirname "$0")/eng_lib.sh"

ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
XDG=$ENG_TMP/xdg
mkdir -m 700 "$XDG"
export XDG_RUNTIME_DIR=$XDG

# A live process: 64 MiB written under a limit of 32M, so that it stores,
# running until its fifo is closed.
mkfifo "$ENG_TMP/hold" || eng_skip "mkfifo failed"
LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=32M timeout "$ENG_TIMEOUT" python3 -c '
import os, sys
b = bytearray(64 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("ready", os.getpid(), flush=True)
sys.stdin.read()' < "$ENG_TMP/hold" > "$ENG_TMP/prog.out" 2> "$ENG_TMP/prog.err" &
bg=$!
exec 9> "$ENG_TMP/hold"
pid=
for _ in $(seq 600); do
	pid=$(awk '$1 == "ready" { print $2 }' "$ENG_TMP/prog.out")
	[ -n "$pid" ] && [ -S "$XDG/libzswap/$pid.sock" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { exec 9>&-; eng_fail "the program did not start: $(cat "$ENG_TMP/prog.err")"; eng_finish; }

# 1. list: zramctl's columns, the process's row with its limit and what it stored.
"$ctl" list > "$ENG_TMP/list.txt" 2> "$ENG_TMP/list.err" || eng_fail "zswapctl list failed: $(cat "$ENG_TMP/list.err")"
head -n 1 "$ENG_TMP/list.txt" | grep -q '^ *PID  *COMMAND  *LIMIT  *CHARGE  *STORED  *POOL  *RATIO  *TIER  *REFAULTS/s  *GROUP  *SOCKET$' ||
	eng_fail "list's header: $(head -n 1 "$ENG_TMP/list.txt")"
row=$(awk -v p="$pid" '$1 == p' "$ENG_TMP/list.txt")
set -- $row
[ "${2:-}" = python3 ] && [ "${3:-}" = 32M ] || eng_fail "list's row for $pid: '$row' (want python3, limit 32M)"
[ "${5:-0}" != 0 ] || eng_fail "list's row for $pid stores nothing under a limit it passed: '$row'"
# A limit makes a group of the process (ZSWAP_MEMORY_SCOPE=tree).
echo "${10:-}" | grep -qx '[0-9a-f]\{8\}' || eng_fail "list's row for $pid names group '${10:-}', not 8 hex digits"
[ "${11:-}" = "$XDG/libzswap/$pid.sock" ] || eng_fail "list's row for $pid names socket '${11:-}'"

# 2. list --json: the same process, sizes in bytes.
"$ctl" list --json > "$ENG_TMP/list.json" 2> "$ENG_TMP/list.err" || eng_fail "zswapctl list --json failed"
python3 - "$ENG_TMP/list.json" "$pid" <<'PY' || eng_fail "list --json: $(cat "$ENG_TMP/list.json")"
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["pid"] == int(sys.argv[2])]
assert len(rows) == 1, rows
r = rows[0]
assert r["command"] == "python3" and r["limit_bytes"] == 32 << 20, r
assert r["stored_bytes"] > 0 and r["pool_bytes"] > 0 and r["ratio"] > 0, r
for k in ("charge_bytes", "tier_bytes", "refaults_per_s", "socket"):
    assert k in r, k
PY

# 3. top in a terminal: the table with the process, then q quits.
if ! command -v tmux >/dev/null 2>&1; then
	eng_say "tmux is not installed: zswapctl top not run in a terminal (scripts/setup.sh installs it)"
	exec 9>&-; wait $bg; eng_finish
fi
sess=zswapctl-top-$$
export TMUX_TMPDIR=$ENG_TMP
if ! tmux new-session -d -s "$sess" -x 160 -y 30 \
	"XDG_RUNTIME_DIR=$XDG '$ctl' top --interval 1; echo top-exit=\$? > '$ENG_TMP/top.rc'; sleep 30" 2> "$ENG_TMP/tmux.err"; then
	exec 9>&-; wait $bg
	eng_skip "tmux cannot run here: $(cat "$ENG_TMP/tmux.err")"
fi
shown=
for _ in $(seq 100); do
	tmux capture-pane -p -t "$sess" > "$ENG_TMP/pane" 2>/dev/null
	if grep -q '^zswapctl top: ' "$ENG_TMP/pane" && awk -v p="$pid" '$1 == p && $2 == "python3" { f = 1 } END { exit !f }' "$ENG_TMP/pane"; then
		shown=1
		break
	fi
	sleep 0.1
done
[ -n "$shown" ] || eng_fail "top in tmux does not show process $pid: $(cat "$ENG_TMP/pane")"
grep -q '^ *PID  *COMMAND  *LIMIT  *CHARGE  *STORED  *POOL  *RATIO  *TIER  *REFAULTS/s  *GROUP' "$ENG_TMP/pane" ||
	eng_fail "top in tmux shows no table header: $(cat "$ENG_TMP/pane")"
# The process's group (its limit makes one) has its row, as in list.
# (timeout runs under the library too: it is the group's first member).
grow=$(awk -v g="$(awk -v p="$pid" '$1 == p { print $10 }' "$ENG_TMP/list.txt")" '$1 == "group" && $10 == g { print $2, $3 }' "$ENG_TMP/pane")
case $grow in
"members="[0-9]*" 32M") ;;
*) eng_fail "top in tmux shows the process's group row as '$grow', not 'members=N 32M'" ;;
esac
tmux send-keys -t "$sess" q
for _ in $(seq 100); do [ -s "$ENG_TMP/top.rc" ] && break; sleep 0.1; done
[ "$(cat "$ENG_TMP/top.rc" 2>/dev/null)" = top-exit=0 ] || eng_fail "top did not quit on q: $(cat "$ENG_TMP/top.rc" 2>/dev/null)"
tmux kill-session -t "$sess" 2>/dev/null

exec 9>&-
wait $bg || eng_fail "the program failed: $(cat "$ENG_TMP/prog.err")"
eng_finish
