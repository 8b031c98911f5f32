#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Groups seen and steered from outside (zswapctl list, stats and set with
# @GROUP; src/reclaim/group.c, tools/zswapctl/). Two groups of three
# processes each (a python parent and two fork children under
# ZSWAP_MEMORY_LIMIT), A at 64M and B at 48M:
#   list     the three of a group share a GROUP, the two groups differ, and
#            each group has its row (memory.max, members=3); --json gives
#            every member its group object;
#   set      set @TOKEN memory_limit=80M goes to one member and every
#            member of A then shows memory.max 80M in its dump, B's 48M;
#            set @PREFIX cold_age=33 reaches every member of B, none of A;
#   stats    stats @PREFIX (8 digits, upper case) prints A's group section
#            once, its members' rows and the three members' dumps, none of
#            B's; --json the same as one object;
#   errors   a token no group has: exit 1 and a line saying so; a malformed
#            one: a usage error (exit 2);
#   nested   zswapctl run --limit 32M inside a group: the inner group's row
#            names the outer one as its parent.
ENG_TIMEOUT=${ENG_TIMEOUT:-300}	# a generous bound: a hang fails, slowness does not
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
eng_ctl_private

# A parent and two fork children touching memory, all reading stdin until
# it is closed; the parent prints its pid and theirs.
cat > "$ENG_TMP/tree.py" <<'PY'
import os
b = bytearray(8 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        c = bytearray(4 << 20)
        for i in range(0, len(c), 4096):
            c[i] = 2
        while os.read(0, 1):
            pass
        os._exit(0)
    kids.append(pid)
print("ready", os.getpid(), *kids, flush=True)
while os.read(0, 1):
    pass
for pid in kids:
    os.waitpid(pid, 0)
PY
mkfifo "$ENG_TMP/A.hold" "$ENG_TMP/B.hold" || eng_skip "mkfifo failed"
for g in A B; do
	limit=64M
	[ $g = B ] && limit=48M
	timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=$limit /usr/bin/python3 \
		"$ENG_TMP/tree.py" < "$ENG_TMP/$g.hold" > "$ENG_TMP/$g.out" 2> "$ENG_TMP/$g.err" &
done
exec 8> "$ENG_TMP/A.hold" 9> "$ENG_TMP/B.hold"
stop() { exec 7>&- 8>&- 9>&-; wait; }

# Every member of both groups listed (each serves its socket once its
# library has started).
A= B=
for _ in $(seq 600); do
	A=$(awk '$1 == "ready" { print $2, $3, $4 }' "$ENG_TMP/A.out")
	B=$(awk '$1 == "ready" { print $2, $3, $4 }' "$ENG_TMP/B.out")
	"$ctl" list > "$ENG_TMP/list.txt" 2> "$ENG_TMP/list.err"
	n=0
	for p in $A $B; do awk -v p="$p" '$1 == p { f = 1 } END { exit !f }' "$ENG_TMP/list.txt" && n=$((n + 1)); done
	[ $n = 6 ] && break
	sleep 0.1
done
[ "${n:-0}" = 6 ] || { stop; eng_fail "the six processes are not all listed (A: ${A:-?}, B: ${B:-?}): $(cat "$ENG_TMP/list.txt" "$ENG_TMP/A.err" "$ENG_TMP/B.err")"; eng_finish; }
eng_say "list:"
grep -E "^ *(group|$(echo $A $B | tr ' ' '|')) " "$ENG_TMP/list.txt" >&2

# col PID N: column N of PID's row of the list.
col() { awk -v p="$1" -v n="$2" '$1 == p { print $n }' "$ENG_TMP/list.txt"; }

# 1. list: one GROUP per group, a row per group with its memory.max.
head -n 1 "$ENG_TMP/list.txt" | grep -q ' GROUP  *SOCKET$' || eng_fail "list's header has no GROUP column: $(head -n 1 "$ENG_TMP/list.txt")"
set -- $A
gA=$(col "$1" 10)
set -- $B
gB=$(col "$1" 10)
echo "$gA" | grep -qx '[0-9a-f]\{8\}' || eng_fail "list: A's GROUP is '$gA', not 8 hex digits"
[ "$gA" != "$gB" ] || eng_fail "list: the two groups show the same GROUP '$gA'"
for p in $A; do [ "$(col "$p" 10)" = "$gA" ] || eng_fail "list: A's member $p shows GROUP '$(col "$p" 10)', not '$gA'"; done
for p in $B; do [ "$(col "$p" 10)" = "$gB" ] || eng_fail "list: B's member $p shows GROUP '$(col "$p" 10)', not '$gB'"; done
grow() {	# GROUP: its group row as "LIMIT COMMAND"
	awk -v g="$1" '$1 == "group" && $10 == g { print $3, $2 }' "$ENG_TMP/list.txt"
}
[ "$(grow "$gA")" = "64M members=3" ] || eng_fail "list: A's group row is '$(grow "$gA")', not '64M members=3'"
[ "$(grow "$gB")" = "48M members=3" ] || eng_fail "list: B's group row is '$(grow "$gB")', not '48M members=3'"
# The group's row comes first, then its members together.
awk -v g="$gA" '$10 == g { print $1 }' "$ENG_TMP/list.txt" | tr '\n' ' ' > "$ENG_TMP/orderA"
[ "$(cat "$ENG_TMP/orderA")" = "group $A " ] || eng_fail "list: A's rows are '$(cat "$ENG_TMP/orderA")', not 'group $A '"

# list --json: every member's group object, with the full token.
"$ctl" list --json > "$ENG_TMP/list.json" 2> "$ENG_TMP/list.err" || eng_fail "list --json failed: $(cat "$ENG_TMP/list.err")"
tokA=$(python3 - "$ENG_TMP/list.json" "$A" "$gA" 64 <<'PY' 2> "$ENG_TMP/json.err"
import json, sys
rows = {r["pid"]: r for r in json.load(open(sys.argv[1]))}
toks = set()
for p in map(int, sys.argv[2].split()):
    g = rows[p]["group"]
    assert g["token"].startswith(sys.argv[3]) and len(g["token"]) == 32, g
    assert g["memory.max"] == int(sys.argv[4]) << 20 and g["members"] == 3 and g["parent"] is None, g
    toks.add(g["token"])
assert len(toks) == 1, toks
print(toks.pop())
PY
) || eng_fail "list --json: A's members' group objects: $(cat "$ENG_TMP/json.err")"

# gval PID KEY: KEY's value in the group section of PID's dump.
gval() {
	"$ctl" stats "$1" | sed -n '/^== group/,/^==/p' | sed -n "s/^$2 *\([0-9a-f]*\)\$/\1/p; s/^$2=\(.*\)\$/\1/p"
}

# 2. set @TOKEN memory_limit: one member asked, every member's memory.max.
"$ctl" set "@$tokA" memory_limit=80M > "$ENG_TMP/set.out" 2> "$ENG_TMP/set.err" ||
	eng_fail "set @$tokA memory_limit=80M failed: $(cat "$ENG_TMP/set.err")"
[ "$(grep -c '^pid [0-9]*:$' "$ENG_TMP/set.out")" = 1 ] || eng_fail "set @TOKEN memory_limit asked other than one member: $(cat "$ENG_TMP/set.out")"
for p in $A; do
	[ "$(gval "$p" memory.max)" = $((80 << 20)) ] || eng_fail "set @TOKEN: A's member $p has memory.max $(gval "$p" memory.max), not 80M"
done
for p in $B; do
	[ "$(gval "$p" memory.max)" = $((48 << 20)) ] || eng_fail "set @TOKEN on A: B's member $p has memory.max $(gval "$p" memory.max)"
done
# set @PREFIX with another option: every member of B, none of A.
"$ctl" set "@$gB" cold_age=33 > "$ENG_TMP/set2.out" 2> "$ENG_TMP/set2.err" ||
	eng_fail "set @$gB cold_age=33 failed: $(cat "$ENG_TMP/set2.err")"
for p in $A $B; do
	want=ZSWAP_COLD_AGE=33
	case " $A " in *" $p "*) want=ZSWAP_COLD_AGE=120 ;; esac
	"$ctl" stats "$p" | grep -qx "$want" || eng_fail "set @$gB cold_age=33: process $p's configuration lacks $want"
done

# 3. stats @PREFIX: A's group once, its rows, its three dumps.
up=$(echo "$gA" | tr a-f A-F)
"$ctl" stats "@$up" > "$ENG_TMP/st.txt" 2> "$ENG_TMP/st.err" || eng_fail "stats @$up failed: $(cat "$ENG_TMP/st.err")"
[ "$(grep -c '^== group' "$ENG_TMP/st.txt")" = 1 ] || eng_fail "stats @PREFIX: $(grep -c '^== group' "$ENG_TMP/st.txt") group sections, not 1"
grep -qx "memory.max *$((80 << 20))" "$ENG_TMP/st.txt" || eng_fail "stats @PREFIX: the group section lacks memory.max 80M"
grep -q "^ *group  *members=3 .* $gA " "$ENG_TMP/st.txt" || eng_fail "stats @PREFIX: no row of the group"
dumps=$(sed -n 's/^libzswap .* statistics: pid \([0-9]*\) .*/\1/p' "$ENG_TMP/st.txt" | tr '\n' ' ')
[ "$dumps" = "$A " ] || eng_fail "stats @PREFIX: dumps of '$dumps', not of A's '$A'"
"$ctl" stats --json "@$gA" > "$ENG_TMP/st.json" 2> "$ENG_TMP/st.err" || eng_fail "stats --json @$gA failed"
python3 - "$ENG_TMP/st.json" "$A" "$tokA" <<'PY' || eng_fail "stats --json @PREFIX: $(head -c 300 "$ENG_TMP/st.json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["group"]["token"] == sys.argv[3] and o["group"]["memory.max"] == 80 << 20, o["group"]
assert [m["pid"] for m in o["members"]] == list(map(int, sys.argv[2].split())), [m["pid"] for m in o["members"]]
PY

# 4. errors: a group no process is in, a malformed operand.
for cmd in "stats @ffffffff00000000" "set @ffffffff00000000 cold_age=30"; do
	"$ctl" $cmd > /dev/null 2> "$ENG_TMP/err"
	rc=$?
	[ $rc = 1 ] && grep -q 'no group @ffffffff00000000' "$ENG_TMP/err" ||
		eng_fail "$cmd: exit $rc, '$(cat "$ENG_TMP/err")' (want 1 and 'no group')"
done
"$ctl" stats @12ab > /dev/null 2> "$ENG_TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "expected @ and 8 to 32 hex digits" "$ENG_TMP/err" ||
	eng_fail "stats @12ab: exit $rc, '$(cat "$ENG_TMP/err")' (want a usage error)"

# 5. nested: zswapctl run --limit inside a group; the inner group's row
# names its parent, the outer group.
mkfifo "$ENG_TMP/C.hold" || eng_skip "mkfifo failed"
timeout "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=96M /bin/sh -c \
	'echo "outer $$"; env -u LD_PRELOAD "$1" run --lib "$2" --limit 32M -- /usr/bin/python3 -c "
import os
print(\"inner\", os.getpid(), flush=True)
while os.read(0, 1):
    pass"' sh "$ctl" "$ENG_LIB" < "$ENG_TMP/C.hold" > "$ENG_TMP/C.out" 2> "$ENG_TMP/C.err" &
exec 7> "$ENG_TMP/C.hold"
for _ in $(seq 600); do
	outer=$(sed -n 's/^outer //p' "$ENG_TMP/C.out")
	inner=$(sed -n 's/^inner //p' "$ENG_TMP/C.out")
	"$ctl" list > "$ENG_TMP/list.txt" 2> "$ENG_TMP/list.err"
	gO=$(col "$outer" 10)
	gI=$(col "$inner" 10)
	[ -n "$outer" ] && [ -n "$inner" ] && [ "${gI:--}" != - ] && [ "${gO:--}" != - ] && break
	sleep 0.1
done
exec 7>&-
row=$(awk -v g="$gI" '$1 == "group" && $10 == g { print $3, $14 }' "$ENG_TMP/list.txt")
eng_say "nested: outer $outer in ${gO:-?}, inner $inner in ${gI:-?}, the inner group's row: $row"
[ -n "$gO" ] && [ "$gO" != - ] && [ "$gI" != "$gO" ] && [ "$row" = "32M parent=$gO" ] ||
	eng_fail "nested: the inner group's row is '$row', not '32M parent=${gO:-?}'"

stop
[ "$ENG_FAILED" = 0 ] || eng_say "stderr of A and B: $(cat "$ENG_TMP/A.err" "$ENG_TMP/B.err")"
eng_finish
