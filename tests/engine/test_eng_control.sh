#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_control.sh - zswapctl set, reclaim (the charge freed, as
# memory.reclaim), compact and reset on a live program under load, and
# ZSWAP_MEMORY_LIMIT=auto and N% following the memory cgroup the program
# runs in.
#
# The program (python3, a real interpreter) builds ~120 MiB of page-sized
# strings, then goes through phases a file in its directory starts; its
# output (a digest of everything) must equal a plain run's. Each verb must
# take effect (the dump's memory_max, VmRSS under the new limit, zswpout,
# the pool's size, the counters), and a bad value, an option read only at
# start-up and another user must each be refused with one line, changing
# nothing. The cgroup part (root, cgroup v1 or v2 memory controller) makes
# a group of its own, runs the program in it and changes the group's limit
# while it runs.

eng_name=test_eng_control
. "$(dirname "$0")/eng_lib.sh"

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
XDG=$ENG_TMP/xdg
mkdir -m 700 "$XDG"
export XDG_RUNTIME_DIR=$XDG

cat > "$ENG_TMP/work.py" <<'EOF'
import hashlib, os, random, sys, time
d = sys.argv[1]
def wait(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.02)
def say(name):
    open(os.path.join(d, name), "w").close()
# One object a page or so: touching one loads one page.
data = [("record %07d " % i) * 270 for i in range(30000)]
print("ready", os.getpid(), flush=True)
say("ready")
wait("touch")
random.seed(7)
s = 0
for i in random.sample(range(len(data)), len(data) // 2):
    s += len(data[i])
say("touched")
wait("end")
h = hashlib.sha256()
for x in data:
    h.update(x.encode())
print(h.hexdigest(), s)
EOF

# Reference output: a plain run, every phase started at once.
mkdir "$ENG_TMP/plain"
touch "$ENG_TMP/plain/touch" "$ENG_TMP/plain/end"
eng_run plain plain python3 "$ENG_TMP/work.py" "$ENG_TMP/plain"
[ "$ENG_RC" = 0 ] || eng_fail "plain run: exit $ENG_RC"
ref=$(tail -n 1 "$ENG_OUT")

# start DIR [VAR=VALUE...]: the program under the library in the background;
# PID set once it is ready.
start() {
	dir=$1; shift
	mkdir -p "$dir"
	timeout -k 5 "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MIN_REGION=64K "$@" \
		python3 "$ENG_TMP/work.py" "$dir" > "$dir/out" 2> "$dir/err" &
	BG=$!
	PID=
	for _ in $(seq 600); do
		[ -e "$dir/ready" ] && PID=$(awk '$1 == "ready" { print $2 }' "$dir/out") && [ -n "$PID" ] && return 0
		sleep 0.1
	done
	eng_fail "$dir: the program did not get ready: $(cat "$dir/err")"
	return 1
}

# finish DIR LABEL: end the program, compare its output with the plain run's.
finish() {
	touch "$1/touch" "$1/end"
	wait "$BG"
	rc=$?
	[ "$rc" = 0 ] || eng_fail "$2: the program exited $rc: $(cat "$1/err")"
	[ "$(tail -n 1 "$1/out")" = "$ref" ] || eng_fail "$2: output differs from the plain run's"
}

stat_of() {	# stat_of PID NAME: one counter of the dump (any section)
	"$ctl" stats --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next(v[sys.argv[1]] for v in d.values() if isinstance(v, dict) and sys.argv[1] in v))' "$2"
}
# What the limit counts resident is anonymous memory (file pages are not in
# it), less the library's own bookkeeping (a few MiB here): RssAnon is
# checked against the limit plus 1/16.
anon_kb() {
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$1/status"
}

# ctl_try WANT_RC PATTERN ARGS...: zswapctl's exit status and one line on stderr.
ctl_try() {
	want=$1 pat=$2; shift 2
	"$ctl" "$@" > "$ENG_TMP/c.out" 2> "$ENG_TMP/c.err"
	rc=$?
	[ "$rc" = "$want" ] || eng_fail "zswapctl $*: exit $rc, want $want ($(cat "$ENG_TMP/c.err"))"
	[ -z "$pat" ] || grep -q -- "$pat" "$ENG_TMP/c.err" "$ENG_TMP/c.out" ||
		eng_fail "zswapctl $*: '$(cat "$ENG_TMP/c.err" "$ENG_TMP/c.out")' lacks '$pat'"
	[ "$want" = 0 ] || [ "$(wc -l < "$ENG_TMP/c.err")" = 1 ] ||
		eng_fail "zswapctl $*: not one line: $(cat "$ENG_TMP/c.err")"
}

# 1. set: a limit on a process started without one, then refusals.
label=set
if start "$ENG_TMP/set" ZSWAP_COLD_AGE=0; then
	rss0=$(anon_kb "$PID")
	[ "$rss0" -gt 100000 ] || eng_fail "$label: RssAnon $rss0 kB before the limit: the workload is too small"
	ctl_try 0 "ZSWAP_MEMORY_LIMIT=64M (was 0)" set "$PID" memory_limit=64M ZSWAP_COLD_AGE=30
	grep -q "ZSWAP_COLD_AGE=30 (was 0)" "$ENG_TMP/c.out" || eng_fail "$label: the cold age change is not reported"
	[ "$(stat_of "$PID" memory_max)" = $((64 << 20)) ] || eng_fail "$label: memory_max is not 64M"
	for _ in $(seq 100); do
		[ "$(anon_kb "$PID")" -lt 69632 ] && break
		sleep 0.1
	done
	rss1=$(anon_kb "$PID")
	[ "$rss1" -lt 69632 ] || eng_fail "$label: RssAnon $rss1 kB 10 s after a 64M limit (was $rss0 kB)"
	[ "$(stat_of "$PID" zswpout)" -gt 10000 ] || eng_fail "$label: the new limit stored nothing"
	# ZSWAP_WRITEBACK=auto: a limit wants the second tier, opened now.
	[ "$(stat_of "$PID" backing_max_bytes)" -gt 0 ] || eng_fail "$label: no second tier under the new limit"
	ctl_try 0 "ZSWAP_WRITEBACK=0 (was auto)" set "$PID" writeback=0
	# Refused, each with one line, changing nothing.
	ctl_try 2 "expected a size" set "$PID" memory_limit=12x
	ctl_try 2 "read once at start-up" set "$PID" zspage_order=2
	ctl_try 2 "did you mean ZSWAP_MEMORY_LIMIT?" set "$PID" memory_limmit=1G
	ctl_try 2 "expected NAME=VALUE" set "$PID" memory_limit
	ctl_try 2 "expected a size" set "$PID" cold_age=5 memory_limit=-1
	[ "$(stat_of "$PID" memory_max)" = $((64 << 20)) ] || eng_fail "$label: a refused set changed the limit"
	"$ctl" stats "$PID" | grep -q "^ZSWAP_COLD_AGE=30$" || eng_fail "$label: a refused set changed the cold age"
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" set "$PID" memory_limit=1G \
			> /dev/null 2> "$ENG_TMP/perm.err"
		rc=$?
		[ "$rc" = 1 ] && grep -q "permission denied" "$ENG_TMP/perm.err" &&
			[ "$(wc -l < "$ENG_TMP/perm.err")" = 1 ] ||
			eng_fail "$label: set as nobody: exit $rc, '$(cat "$ENG_TMP/perm.err")'"
		[ "$(stat_of "$PID" memory_max)" = $((64 << 20)) ] || eng_fail "$label: another user changed the limit"
		out0=$(stat_of "$PID" zswpout)
		for verb in "reclaim $PID 8M" "compact $PID" "reset $PID"; do
			# shellcheck disable=SC2086 # the verb's words
			setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" $verb > /dev/null 2> "$ENG_TMP/perm.err"
			rc=$?
			[ "$rc" = 1 ] && grep -q "permission denied" "$ENG_TMP/perm.err" ||
				eng_fail "$label: $verb as nobody: exit $rc, '$(cat "$ENG_TMP/perm.err")'"
		done
		[ "$(stat_of "$PID" zswpout)" -ge "$out0" ] || eng_fail "$label: another user reset the counters"
	fi
	# The history is in the dump; the limit can be lifted again.
	"$ctl" stats "$PID" | grep -q "^changed .*ZSWAP_MEMORY_LIMIT=64M (was 0)" ||
		eng_fail "$label: the dump does not list the change"
	ctl_try 0 "ZSWAP_MEMORY_LIMIT=0 (was 64M)" set "$PID" memory_limit=0
	[ "$(stat_of "$PID" memory_max)" = 0 ] || eng_fail "$label: the limit was not lifted"
	finish "$ENG_TMP/set" $label
fi

# 2. reclaim, compact and reset, without a limit.
label=reclaim
if start "$ENG_TMP/rc" ZSWAP_COLD_AGE=0; then
	out0=$(stat_of "$PID" zswpout)
	ctl_try 0 "" reclaim "$PID" 64M
	# memory.reclaim's figure is the charge freed: what the charge line
	# says went down, at least what was asked; what was stored for it is
	# more, the pool holding it.
	freed=$(awk '$1 == "reclaimed" && $6 == "charge," { print $2 }' "$ENG_TMP/c.out")
	set -- $(awk '$1 == "charge" { print $2, $4 }' "$ENG_TMP/c.out") 0 0
	[ -n "$freed" ] && [ "$freed" = $(($1 - $2)) ] ||
		eng_fail "$label: the charge freed is not what the charge says: $(cat "$ENG_TMP/c.out")"
	[ "${freed:-0}" -ge 67108864 ] || eng_fail "$label: exit 0 with less than 64M freed: $(cat "$ENG_TMP/c.out")"
	stored=$(awk '$1 == "stored" { print $2 }' "$ENG_TMP/c.out")
	[ "${stored:-0}" -ge "${freed:-0}" ] || eng_fail "$label: stored $stored bytes for $freed freed"
	out1=$(stat_of "$PID" zswpout)
	[ $((out1 - out0)) -ge 16384 ] || eng_fail "$label: zswpout rose by $((out1 - out0)), not 16384"
	ctl_try 2 "expected a size" reclaim "$PID" 0
	ctl_try 2 "expected a size" reclaim "$PID" lots
	# Sizes as libzswap(7) writes them, to the end and within 64 bits.
	ctl_try 2 "expected a size" reclaim "$PID" 99999999999999999999
	ctl_try 2 "expected a size" reclaim "$PID" 1iB
	# More than there is: partial, exit 1, what was done still printed.
	ctl_try 1 "less than asked was freed" reclaim "$PID" 64G
	grep -q "^reclaimed [0-9]* bytes of the charge, of 68719476736 asked" "$ENG_TMP/c.out" ||
		eng_fail "$label: a partial reclaim printed $(cat "$ENG_TMP/c.out")"
	# Loads take a random half back: the pool has holes compaction fills.
	touch "$ENG_TMP/rc/touch"
	for _ in $(seq 600); do [ -e "$ENG_TMP/rc/touched" ] && break; sleep 0.1; done
	label=compact
	comp0=$(stat_of "$PID" pages_compacted)
	ctl_try 0 "^compacted" compact "$PID"
	freed=$(awk '$1 == "compacted" { print $2 }' "$ENG_TMP/c.out")
	set -- $(awk '$1 == "pool" { print $2, $4 }' "$ENG_TMP/c.out")
	comp1=$(stat_of "$PID" pages_compacted)
	# What compaction freed, by this call or by the reclaimer's own
	# compaction since the loads: the pool is smaller than it was full.
	[ $((comp1 - comp0)) -ge "${freed:-0}" ] || eng_fail "$label: pages_compacted rose by $((comp1 - comp0)), the call said $freed"
	[ "$comp1" -gt 0 ] || eng_fail "$label: nothing was ever compacted in a pool with holes"
	[ "$2" -le "$1" ] || eng_fail "$label: the pool grew: $1 -> $2"
	label=reset
	stored=$(stat_of "$PID" stored_pages)
	ctl_try 0 "counters and mem_used_max reset" reset "$PID"
	[ "$(stat_of "$PID" zswpout)" = 0 ] || eng_fail "$label: zswpout is not 0 after reset"
	[ "$(stat_of "$PID" refaults)" = 0 ] || eng_fail "$label: refaults is not 0 after reset"
	[ "$(stat_of "$PID" stored_pages)" = "$stored" ] || eng_fail "$label: stored_pages changed"
	[ "$(stat_of "$PID" mem_used_max)" -le $(( $(stat_of "$PID" mem_used_total) + 1048576 )) ] ||
		eng_fail "$label: mem_used_max is not the pool's size after reset"
	finish "$ENG_TMP/rc" reclaim
fi

# 3. The memory cgroup's limit: auto and N%, followed as it changes.
label=cgroup
cgv1=/sys/fs/cgroup/memory
if [ "$(id -u)" != 0 ]; then
	eng_say "cgroup part skipped: not root"
elif [ ! -w "$cgv1" ]; then
	eng_say "cgroup part skipped: no cgroup v1 memory controller at $cgv1"
else
	cg=$cgv1/libzswap-test-$$
	mkdir "$cg" && echo $((512 << 20)) > "$cg/memory.limit_in_bytes" || eng_fail "$label: cannot make $cg"
	mkdir -p "$ENG_TMP/cg"
	# The shell moves itself into the group, then becomes the program.
	sh -c "echo \$\$ > $cg/cgroup.procs && exec env LD_PRELOAD='$ENG_PRELOAD' ZSWAP_MEMORY_LIMIT=auto \
		ZSWAP_COLD_AGE=0 ZSWAP_MIN_REGION=64K timeout -k 5 $ENG_TIMEOUT python3 '$ENG_TMP/work.py' '$ENG_TMP/cg'" \
		> "$ENG_TMP/cg/out" 2> "$ENG_TMP/cg/err" &
	BG=$!
	PID=
	for _ in $(seq 600); do
		[ -e "$ENG_TMP/cg/ready" ] && PID=$(awk '$1 == "ready" { print $2 }' "$ENG_TMP/cg/out") && [ -n "$PID" ] && break
		sleep 0.1
	done
	if [ -z "$PID" ]; then
		eng_fail "$label: the program did not get ready: $(cat "$ENG_TMP/cg/err")"
	else
		# auto: 7/8 of 512M.
		[ "$(stat_of "$PID" memory_max)" = $((448 << 20)) ] ||
			eng_fail "$label: auto under a 512M group: memory_max $(stat_of "$PID" memory_max)"
		# The group's limit moves (above what the program uses, so the
		# kernel accepts it): followed within a few seconds.
		echo $((384 << 20)) > "$cg/memory.limit_in_bytes" || eng_fail "$label: cannot lower the group's limit"
		for _ in $(seq 50); do
			[ "$(stat_of "$PID" memory_max)" = $((336 << 20)) ] && break
			sleep 0.1
		done
		[ "$(stat_of "$PID" memory_max)" = $((336 << 20)) ] ||
			eng_fail "$label: the group's 384M not followed: memory_max $(stat_of "$PID" memory_max)"
		# N% is of the group's limit: 25% of 384M.
		ctl_try 0 "ZSWAP_MEMORY_LIMIT=25% (was auto)" set "$PID" memory_limit=25%
		[ "$(stat_of "$PID" memory_max)" = $((96 << 20)) ] ||
			eng_fail "$label: 25% of a 384M group: memory_max $(stat_of "$PID" memory_max)"
		for _ in $(seq 100); do
			[ "$(anon_kb "$PID")" -lt 104448 ] && break
			sleep 0.1
		done
		[ "$(anon_kb "$PID")" -lt 104448 ] || eng_fail "$label: RssAnon $(anon_kb "$PID") kB under 96M"
		finish "$ENG_TMP/cg" $label
	fi
	wait "$BG" 2>/dev/null
	for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	[ ! -d "$cg" ] || eng_fail "$label: cannot remove $cg"
fi

# Outside any limited group: auto is no limit, N% is of physical memory.
label=nocgroup
phys=$(( $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024 ))
own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
hier=
[ -z "$own" ] || hier=$(awk '$1 == "hierarchical_memory_limit" { print $2 }' "$cgv1$own/memory.stat" 2>/dev/null)
v2max=$(cat "/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' /proc/self/cgroup)/memory.max" 2>/dev/null)
if { [ -n "$hier" ] && [ "$hier" -lt "$phys" ]; } || { [ -n "$v2max" ] && [ "$v2max" != max ]; }; then
	eng_say "nocgroup part skipped: this test itself runs in a limited memory cgroup"
else
	eng_run auto-none lib ZSWAP_MEMORY_LIMIT=auto ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/auto.txt" \
		python3 -c 'print(1)'
	lim=$(awk '$1 == "memory_max" { print $2; exit }' "$ENG_TMP/auto.txt")
	[ "$lim" = 0 ] || eng_fail "$label: auto outside a limited group: memory_max '$lim', want 0"
	eng_run pct-none lib ZSWAP_MEMORY_LIMIT=10% ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/pct.txt" \
		python3 -c 'print(1)'
	lim=$(awk '$1 == "memory_max" { print $2; exit }' "$ENG_TMP/pct.txt")
	want=$((phys / 10 / 4096 * 4096))
	[ -n "$lim" ] && [ $((lim - want)) -le 4096 ] && [ $((want - lim)) -le 4096 ] ||
		eng_fail "$label: 10% of physical memory: memory_max '$lim', want about $want"
fi

eng_finish
