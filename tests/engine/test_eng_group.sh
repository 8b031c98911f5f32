#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The group of a process tree (ZSWAP_MEMORY_SCOPE=tree; src/reclaim/group.c)
# against what may happen to its members and its file:
#   kill     a member killed with SIGKILL: its charge leaves memory.current
#            and the table, another member finishes (group_member.py);
#   stop     a member stopped with SIGSTOP holding 40 MiB while another needs
#            40 MiB under a 64 MiB limit: the other finishes (no hang);
#   cold     an idle member holding 40 MiB and a busy one going over a 72 MiB
#            limit: the idle member stores more of its cold pages (at
#            least 8 MiB) than the busy member brings back of its own;
#   churn    1,000 short programs (each joins and leaves) and 200 subshells
#            that fork without exec: the table is back to one member;
#            zswapctl set memory_limit on a member sets memory.max;
#   nobody   another user given the token cannot join: one line, its own
#            limit;
#   symlink, mode   /dev/shm/libzswap-UID a symbolic link, or a directory of
#            mode 0755: refused, one line;
#   corrupt  a group file with a byte changed: refused, one line;
#   nested   zswapctl run --limit inside a group: a child group, its parent
#            named, its member counted in the parent too;
#   swept    a group whose every member was killed (nobody left to remove
#            its file) is removed when the next group is made, once its file
#            is a minute old; a live group's file is kept.
ENG_TIMEOUT=${ENG_TIMEOUT:-300}	# a generous bound: a hang fails, slowness does not
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
member="$ENG_SRCDIR/tests/engine/group_member.py"
zswapctl="$ENG_BUILDDIR/tools/zswapctl/zswapctl"
[ -x "$zswapctl" ] || { eng_say "ERROR: $zswapctl is not built"; exit 99; }
ENG_ALLOW_LIBZSWAP='cannot hold|thrashing'

# group_val FILE KEY: KEY's value in the group section of a dump.
group_val() {
	sed -n '/^== group/,/^==/p' "$1" | sed -n "s/^$2 *\([0-9a-f]*\)\$/\1/p; s/^$2=\(.*\)\$/\1/p" | tail -n 1
}

for what in kill stop cold; do
	eng_run "$what-plain" plain /usr/bin/python3 "$member" $what "$zswapctl"
	eng_expect_rc 0 || continue
	grep -v '^kill:\|^cold:' "$ENG_OUT" > "$ENG_TMP/$what.ref"
	limit=64M
	[ $what = cold ] && limit=72M
	eng_run "$what" plain env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=$limit \
		/usr/bin/python3 "$member" $what "$zswapctl"
	eng_expect_rc 0 || continue
	# cold turns on when the idle member's reclaimer publishes its cold
	# bytes (once a second, pages idle 2 s) against the busy member's first
	# excess: when other tests load every CPU it can miss that moment, and
	# the busy member takes its own pages. One more run; two misses fail.
	if [ $what = cold ] && ! grep -qx 'cold: the idle member made the room: True' "$ENG_OUT"; then
		eng_say "cold: missed ($(sed -n 's/^group_member: //p' "$ENG_ERR")): once more"
		eng_run "$what" plain env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=$limit \
			/usr/bin/python3 "$member" $what "$zswapctl"
		eng_expect_rc 0 || continue
	fi
	eng_expect_no_libzswap || continue
	eng_say "$what: $(cat "$ENG_OUT" | tr '\n' ' ') $(sed -n 's/^group_member: //p' "$ENG_ERR")"
	if [ $what = kill ]; then
		grep -qx 'kill: members 2 -> 1, memory.current dropped by at least 30 MiB: True' "$ENG_OUT" ||
			eng_fail "kill: the killed member's charge did not leave the group"
	fi
	if [ $what = cold ]; then
		grep -qx 'cold: the idle member made the room: True' "$ENG_OUT" ||
			eng_fail "cold: the idle member's cold pages were not taken for the busy one"
	fi
	grep -v '^kill:\|^cold:' "$ENG_OUT" | cmp -s - "$ENG_TMP/$what.ref" ||
		eng_fail "$what: the other member's output differs from the plain run's"
done

# churn: the shell is the group's first member; its children come and go.
cat > "$ENG_TMP/churn.sh" <<SH
for i in \$(seq 1000); do /bin/true; done
for i in \$(seq 200); do ( : ); done
sleep 1.5
# memory.max through a member's pid: the group's, which the dump shows.
/bin/true & LD_PRELOAD= "$zswapctl" set \$\$ memory_limit=80M > /dev/null; wait
sleep 0.2
echo "shell \$\$"
# The asking process is in the tree too (a fork child of the shell, which
# runs zswapctl without the library), as a cgroup would hold it.
LD_PRELOAD= /bin/sh -c 'echo "asker \$\$"; exec "$zswapctl" stats '\$\$
SH
eng_run churn lib env ZSWAP_MEMORY_LIMIT=64M /bin/bash "$ENG_TMP/churn.sh"
eng_expect_rc 0
pids=$(group_val "$ENG_OUT" pids | tr ' ' '\n' | sort -n | tr '\n' ' ')
want=$(sed -n 's/^shell //p; s/^asker //p' "$ENG_OUT" | sort -n | tr '\n' ' ')
eng_say "churn: members after 1,000 programs and 200 subshells: ${pids:-?}(the shell and the asker: $want)"
[ -n "$want" ] && [ "$pids" = "$want" ] || eng_fail "churn: members ${pids:-none}, not the shell and the asker (slots leaked)"
max=$(group_val "$ENG_OUT" memory.max)
[ "$max" = $((80 << 20)) ] || eng_fail "churn: zswapctl set memory_limit=80M on a member left memory.max ${max:-?}"

# corrupt: a member's group file with one byte of its token changed.
cat > "$ENG_TMP/corrupt.sh" <<SH
f=/dev/shm/libzswap-\$(id -u)/g-\$ZSWAP_GROUP
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(30); b = f.read(1); f.seek(30); f.write(bytes([b[0] ^ 1]))" "\$f"
LD_PRELOAD="$ENG_PRELOAD" /bin/true
SH
eng_run corrupt lib env ZSWAP_MEMORY_LIMIT=64M /bin/bash "$ENG_TMP/corrupt.sh"
eng_expect_rc 0
n=$(grep -c 'cannot be joined (bad checksum)' "$ENG_ERR")
[ "$n" = 1 ] || { eng_fail "corrupt: $n lines saying the file is refused, not 1"; eng_show_last; }

# nested: zswapctl run --limit inside a group makes a child group.
cat > "$ENG_TMP/nested.sh" <<SH
outer=\$ZSWAP_GROUP
env -u LD_PRELOAD "$zswapctl" run --lib "$ENG_LIB" --limit 32M -- /bin/bash -c \
	'sleep 2.5; LD_PRELOAD= "$zswapctl" stats \$\$ > "$ENG_TMP/inner.txt"'
echo "outer \$outer"
SH
eng_run nested lib env ZSWAP_MEMORY_LIMIT=256M /bin/bash "$ENG_TMP/nested.sh"
eng_expect_rc 0
outer=$(sed -n 's/^outer //p' "$ENG_OUT")
parent=$(group_val "$ENG_TMP/inner.txt" parent)
max=$(group_val "$ENG_TMP/inner.txt" memory.max)
eng_say "nested: outer ${outer:-?}, inner's parent ${parent:-?}, inner memory.max ${max:-?}"
[ -n "$outer" ] && [ "$parent" = "$outer" ] && [ "$max" = $((32 << 20)) ] ||
	eng_fail "nested: the inner group does not name the outer one as its parent with its own memory.max"

# swept: a group killed whole (SIGKILL: no destructor runs, no member looks).
gdir=/dev/shm/libzswap-$(id -u)
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=64M /bin/sh -c 'echo "$ZSWAP_GROUP"; exec sleep 60' \
	>"$ENG_TMP/dead.out" 2>/dev/null &
dead_pid=$!
env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=64M /bin/sh -c 'echo "$ZSWAP_GROUP"; exec sleep 60' \
	>"$ENG_TMP/live.out" 2>/dev/null &
live_pid=$!
n=0
while { [ ! -s "$ENG_TMP/dead.out" ] || [ ! -s "$ENG_TMP/live.out" ]; } && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
dead=$(cat "$ENG_TMP/dead.out") live=$(cat "$ENG_TMP/live.out")
kill -KILL $dead_pid
wait $dead_pid 2>/dev/null
# Both files a minute old: the swept one's members are gone, the kept one's
# still run.
touch -d '2 minutes ago' "$gdir/g-$dead" "$gdir/g-$live"
[ -f "$gdir/g-$dead" ] || eng_fail "swept: the killed group's file is gone before any sweep (test broken)"
eng_run swept lib ZSWAP_MEMORY_LIMIT=64M /bin/true
eng_expect_rc 0
if [ -f "$gdir/g-$dead" ]; then
	eng_fail "swept: the file of a group whose members were all killed stays after a new group was made"
	rm -f "$gdir/g-$dead"
fi
[ -f "$gdir/g-$live" ] || eng_fail "swept: the file of a live group was removed"
kill $live_pid
wait $live_pid 2>/dev/null
eng_say "swept: the killed group's file removed, the live group's kept"

# Another user, and /dev/shm/libzswap-UID tampered with (user nobody's,
# so that the root groups of tests running meanwhile are not disturbed).
eng_need_nobody /bin/true
nobody_dir=/dev/shm/libzswap-65534
rm -rf "$nobody_dir"
# nobody runs the library with CAP_SYS_PTRACE (userfaultfd), ambient.
as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace"
$as_nobody /bin/true 2>/dev/null || eng_skip "setpriv cannot give user nobody CAP_SYS_PTRACE"
cat > "$ENG_TMP/nobody.sh" <<SH
LD_PRELOAD= $as_nobody /bin/sh -c "LD_PRELOAD='$ENG_PRELOAD' exec /bin/true"
SH
eng_run nobody lib env ZSWAP_MEMORY_LIMIT=64M /bin/sh "$ENG_TMP/nobody.sh"
eng_expect_rc 0
n=$(grep -c 'cannot be joined (cannot open /dev/shm/libzswap-UID)' "$ENG_ERR")
[ "$n" = 1 ] || { eng_fail "nobody: $n lines saying it cannot join, not 1"; eng_show_last; }
for how in symlink mode; do
	rm -rf "$nobody_dir"
	case $how in
	symlink) ln -s "$ENG_TMP" "$nobody_dir" ;;
	mode) mkdir -m 0755 "$nobody_dir" && chown 65534 "$nobody_dir" ;;
	esac
	eng_run "$how" plain $as_nobody /bin/sh -c "LD_PRELOAD='$ENG_PRELOAD' ZSWAP_MEMORY_LIMIT=64M exec /bin/true"
	eng_expect_rc 0
	n=$(grep -c 'cannot make a process group' "$ENG_ERR")
	[ "$n" = 1 ] || { eng_fail "$how: $n lines saying the directory is refused, not 1"; eng_show_last; }
done
rm -rf "$nobody_dir"
eng_finish
