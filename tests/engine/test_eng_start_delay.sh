#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ZSWAP_START_DELAY: a process without a memory limit starts the library at
# its first memory call after the delay, once it holds ZSWAP_START_SIZE of
# anonymous memory. A short program never starts it, nor does a small one
# until it grows; a
# limit, ZSWAP_START_DELAY=0 or a large request starts it at once; memory
# mapped before the start is managed after it (adopted, then compressed at
# the cold age); a statistics signal before the start does not end the
# program and its dump comes once the library starts; a fork child's delay
# counts from the fork; a started process with nothing stored, or little
# (loaded back first), forks without handing its library over, also while
# its threads change their mappings;
# MADV_PAGEOUT starts the library at once. Every page of every run is
# checked by the program.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_late)

actives() { grep -c '^libzswap: active:' "$ENG_ERR" || true; }

# A short program: no start unless something asks for one.
eng_run quick lib ZSWAP_VERBOSE=1 "$prog" quick
eng_expect_rc 0 && eng_expect_stdout_has "1024 pages checked: ok"
grep -q 'userfaultfd unavailable' "$ENG_ERR" && eng_skip "$(grep -m1 '^libzswap:' "$ENG_ERR")"
[ "$(actives)" = 0 ] || eng_fail "quick: the library started in a program that ended within the delay"
eng_run quick-now lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=0 "$prog" quick
eng_expect_rc 0
[ "$(actives)" = 1 ] || eng_fail "quick-now: ZSWAP_START_DELAY=0 did not start the library at once"
eng_run quick-limit lib ZSWAP_VERBOSE=1 ZSWAP_MEMORY_LIMIT=256M "$prog" quick
eng_expect_rc 0
[ "$(actives)" = 1 ] || eng_fail "quick-limit: a memory limit did not start the library at once"

# bg LABEL VAR=VALUE... -- ARGS: the program in the background, under the
# library (env execs it: $bg_pid is the program), bounded by a watchdog;
# returns once it printed "filled".
bg() {
	bg_label=$1
	shift
	ENG_LABEL=$bg_label ENG_OUT=$ENG_TMP/$bg_label.out ENG_ERR=$ENG_TMP/$bg_label.err
	env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_STATS_FILE="$ENG_TMP/$bg_label.dump" "$@" >"$ENG_OUT" 2>"$ENG_ERR" &
	bg_pid=$!
	(sleep 60 && kill -9 "$bg_pid") 2>/dev/null &
	bg_dog=$!
	for _ in $(seq 300); do
		grep -q '^filled$' "$ENG_OUT" && return 0
		sleep 0.1
	done
	eng_fail "$bg_label: the program did not fill its memory"
}

bg_wait() {
	wait "$bg_pid"
	ENG_RC=$?
	kill "$bg_dog" 2>/dev/null
	wait "$bg_dog" 2>/dev/null
	eng_expect_rc 0
}

# dump_stored LABEL: stored_pages of the dump the signal asked for.
dump_stored() {
	eng_dump_stat "$ENG_TMP/$1.dump" stored_pages
}

# Mapped in 4 MiB pieces before the start (24 MiB: no large request), then
# small allocations: the start comes after the delay, and the cold age
# compresses what was mapped before it.
bg hold ZSWAP_VERBOSE=1 ZSWAP_COLD_AGE=1 ZSWAP_START_DELAY=100 "$prog" hold 24 5
sleep 4
kill -USR1 "$bg_pid"
bg_wait
eng_expect_stdout_has "6144 pages checked: ok"
[ "$(actives)" = 1 ] || eng_fail "hold: the library did not start after the delay"
s=$(dump_stored hold)
eng_say "hold: stored_pages ${s:-none} in the dump 4 s in"
[ "${s:-0}" -gt 0 ] || eng_fail "hold: the memory mapped before the start was never compressed"

# ZSWAP_START_SIZE: a process holding less (4 MiB of text pages, the
# default size 8 MiB) makes its calls past the delay and never starts; one
# that grows past the size in pieces (no large request) starts at a call
# after it grew, not before (python's blocks of 100 KiB: malloc calls).
eng_run small lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=100 "$prog" hold 4 2
eng_expect_rc 0 && eng_expect_stdout_has "1024 pages checked: ok"
[ "$(actives)" = 0 ] || eng_fail "small: the library started in a process holding less than ZSWAP_START_SIZE"
eng_run small-size0 lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 "$prog" hold 4 2
eng_expect_rc 0 && eng_expect_stdout_has "1024 pages checked: ok"
[ "$(actives)" = 1 ] || eng_fail "small-size0: ZSWAP_START_SIZE=0 did not start the library after the delay"
if command -v python3 >/dev/null 2>&1; then
	eng_run grow lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=100 python3 -c '
import sys, time
def calls(s):
    end = time.time() + s
    while time.time() < end:
        bytearray(100 << 10)
        time.sleep(0.01)
calls(0.6)
print("grows", file=sys.stderr, flush=True)
held = [bytearray(1 << 20) for _ in range(24)]
calls(0.6)
print("held", sum(len(b) for b in held))'
	eng_expect_rc 0 && eng_expect_stdout_has "held 25165824"
	grep -n -e '^grows$' -e '^libzswap: active:' "$ENG_ERR" | cut -d: -f2- | tr '\n' ' ' > "$ENG_TMP/grow.order"
	eng_say "grow: $(cat "$ENG_TMP/grow.order")"
	grep -q '^grows libzswap: active:' "$ENG_TMP/grow.order" ||
		eng_fail "grow: the library did not start once, after the process grew past ZSWAP_START_SIZE"
fi

# A start takes SIGSEGV while another thread of the program sets its
# handler without pause: no call loses the action it set, none reports
# another's (twenty runs; the calls of a signal nobody took go to the kernel
# without the library's lock).
i=0
while [ $i -lt 20 ]; do
	eng_run sigrace lib ZSWAP_VERBOSE=1 "$prog" sigrace
	eng_expect_rc 0 && { grep -q '^sigrace: [0-9]* calls ok$' "$ENG_OUT" ||
		eng_fail "sigrace: no 'sigrace: N calls ok' line"; }
	[ "$(actives)" = 1 ] || eng_fail "sigrace: the 16 MiB request did not start the library"
	i=$((i + 1))
done
eng_say "sigrace: $(cat "$ENG_OUT")"

# A signal before the start (a delay of a minute): the program goes on, and
# the dump comes at its next memory calls.
bg early ZSWAP_START_DELAY=60000 "$prog" hold 8 3
sleep 0.5
kill -USR1 "$bg_pid"
for _ in $(seq 20); do
	[ -s "$ENG_TMP/early.dump" ] && break
	sleep 0.1
done
bg_wait
eng_expect_stdout_has "2048 pages checked: ok"
[ -s "$ENG_TMP/early.dump" ] || eng_fail "early: no dump for the signal sent before the start"

# One large mapping, then no call at all: started at the request, so the
# cold age still compresses it.
bg idle ZSWAP_VERBOSE=1 ZSWAP_COLD_AGE=1 "$prog" idle 16 5
sleep 4
kill -USR1 "$bg_pid"
bg_wait
eng_expect_stdout_has "4096 pages checked: ok"
s=$(dump_stored idle)
eng_say "idle: stored_pages ${s:-none} in the dump 4 s in"
[ "${s:-0}" -gt 0 ] || eng_fail "idle: a program that mapped 16 MiB at once and then slept was not managed"

# A fork child 300 ms into its parent's life counts its own delay: its
# 50 ms of calls start nothing (with the parent's, they would).
eng_run fork lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 "$prog" fork 300
eng_expect_rc 0 && eng_expect_stdout_has "child ended: ok"
[ "$(actives)" = 0 ] || eng_fail "fork: the child started the library though it lived less than the delay"

# A started process that no limit covers, with nothing stored, forks
# without handing its library over: the child makes no thread at the fork,
# sees every byte, starts its own library as a deferred process would, and
# a statistics signal before that start is answered with a dump, not the
# end of the child. Under a limit, the child takes over at once.
eng_run forks-plain plain "$prog" forks
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/forks.ref"
forks_check() {
	eng_expect_rc 0 && eng_expect_stdout_has "signalled child ended: ok" && eng_expect_no_libzswap
	grep -v '^signalled' "$ENG_OUT" | cmp -s - "$ENG_TMP/forks.ref" ||
		eng_fail "$1: the output differs from the plain run's"
	pt=$(eng_stat prog_late parent_threads) qt=$(eng_stat prog_late quick_threads)
	lt=$(eng_stat prog_late late_threads) lp=$(eng_stat prog_late late_paged_out)
	sp=$(eng_stat prog_late signalled_pid)
	eng_say "$1: threads: parent ${pt:-?}, quick child ${qt:-?}, late child ${lt:-?}; late child paged out ${lp:-?}"
	[ "${pt:-1}" -gt 1 ] || eng_fail "$1: the parent's library did not start after the delay"
	[ "${qt:-0}" = 1 ] || eng_fail "$1: the quick child had ${qt:-?} threads at the fork: the library was handed over"
	[ "${lt:-1}" -gt 1 ] || eng_fail "$1: the late child never started a library of its own"
	[ "${lp:-0}" -gt 0 ] || eng_fail "$1: the late child's MADV_PAGEOUT paged nothing out: not managed"
	gt=$(eng_stat prog_late grand_threads) gp=$(eng_stat prog_late grand_paged_out)
	[ "${gt:-1}" -gt 1 ] && [ "${gp:-0}" -gt 0 ] ||
		eng_fail "$1: a grandchild forked before its parent's start was not managed (threads ${gt:-?}, paged out ${gp:-?})"
	[ -n "$sp" ] && [ -s "$ENG_TMP/forks.$sp.dump" ] ||
		eng_fail "$1: no dump from the child signalled before its start"
	# Nothing evicted yet: nothing registered, and no fork is frozen
	# (five forks: quick, late, grand's parent, signalled, dumper).
	forks_counted "$1" 5 0 5
}
# forks_counted LABEL LIGHT FOLLOWED BARE: the parent's dump at exit.
forks_counted() {
	pp=$(eng_stat prog_late parent_pid)
	d="$ENG_TMP/forks.${pp:-none}.dump"
	fl=$(awk '$1 == "fork_light" { print $2 }' "$d" 2>/dev/null)
	ff=$(awk '$1 == "fork_followed" { print $2 }' "$d" 2>/dev/null)
	fb=$(awk '$1 == "fork_bare" { print $2 }' "$d" 2>/dev/null)
	eng_say "$1: forks light ${fl:-?}, followed ${ff:-?}, bare ${fb:-?}"
	[ "${fl:-x}" = "$2" ] && [ "${ff:-x}" = "$3" ] && [ "${fb:-x}" = "$4" ] ||
		eng_fail "$1: forks light ${fl:-?}, followed ${ff:-?}, bare ${fb:-?}; expected $2, $3, $4"
}
# A delay shorter than the parent's 300 ms of calls (the default is a second).
eng_run forks lib ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 ZSWAP_STATS_FILE="$ENG_TMP/forks.%p.dump" "$prog" forks signal dump
forks_check forks
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && [ -c /dev/userfaultfd ]; then
	# Without fork events every fork restarts: the same, the signal included.
	np="setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace"
	rm -f "$ENG_TMP"/forks.*.dump
	eng_run forks-noptrace lib $np env ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 ZSWAP_STATS_FILE="$ENG_TMP/forks.%p.dump" "$prog" forks signal dump
	forks_check forks-noptrace
fi
# Light forks while two threads map, fill and unmap memory: every child
# sees every byte and fills new memory, nothing hangs.
eng_run forkrace-plain plain "$prog" forkrace 30
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/forkrace.ref"
eng_run forkrace lib ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 "$prog" forkrace 30
eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/forkrace.ref" && eng_expect_no_libzswap
ct=$(eng_stat prog_late forkrace_child_threads)
[ "${ct:-0}" = 1 ] || eng_fail "forkrace: the first child had ${ct:-?} threads: not a light fork"

eng_run forks-limit lib ZSWAP_MEMORY_LIMIT=256M ZSWAP_STATS_FILE="$ENG_TMP/forks.%p.dump" "$prog" forks dump
eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/forks.ref"
qt=$(eng_stat prog_late quick_threads)
[ "${qt:-1}" -gt 1 ] || eng_fail "forks-limit: the quick child under a limit had ${qt:-?} threads: not handed over"
forks_counted forks-limit 0 4 0

# A few pages stored (as ZSWAP_COLD_AGE leaves a long-lived shell) are
# loaded back and the fork stays light; more than START_FORK_LOAD_MAX (256)
# and it is followed. Every byte is checked either way.
for n in 64 1024; do
	eng_run forks-stored-$n lib ZSWAP_START_DELAY=100 ZSWAP_START_SIZE=0 ZSWAP_STATS_FILE="$ENG_TMP/forks.%p.dump" \
		"$prog" forks dump pageout $n
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/forks.ref" && eng_expect_no_libzswap
	ps=$(eng_stat prog_late parent_stored) qt=$(eng_stat prog_late quick_threads)
	eng_say "forks-stored-$n: ${ps:-?} pages stored at the fork, the quick child's threads ${qt:-?}"
	[ "${ps:-0}" = "$n" ] || eng_fail "forks-stored-$n: ${ps:-?} pages stored, not $n"
	if [ "$n" = 64 ]; then
		[ "${qt:-0}" = 1 ] || eng_fail "forks-stored-64: the quick child had ${qt:-?} threads: not a light fork"
		# Its memory was registered at the page-out: light, never bare.
		forks_counted forks-stored-64 4 0 0
	else
		[ "${qt:-1}" -gt 1 ] || eng_fail "forks-stored-1024: the quick child had ${qt:-?} threads: not handed over"
		# The last fork (the dumper's) comes after the parent's check
		# loaded every page back: light.
		forks_counted forks-stored-1024 1 3 0
	fi
done

# MADV_PAGEOUT is asked for now: it starts the library and pages out.
eng_run pageout lib "$prog" pageout
eng_expect_rc 0 && eng_expect_stdout_has "2048 pages checked: ok" && eng_expect_no_libzswap
s=$(eng_stat prog_late stored_pages)
[ "${s:-0}" -gt 0 ] || eng_fail "pageout: MADV_PAGEOUT before the delay stored nothing (${s:-none})"

eng_finish
