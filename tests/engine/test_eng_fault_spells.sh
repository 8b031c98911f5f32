#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared spells (src/engine/fault.c, "one handler, or one per CPU"): with a handler
# pinned to each CPU, several program threads faulting at once hand every
# fault to the first handler, unpinned, and the others sleep; one thread
# faulting alone brings them back. Checked: the same data as without the
# library through rounds of four threads then one thread refaulting every
# page (tests/progs/prog_spells.c), with ZSWAP_FAULT_THREADS=0 (spells counted in
# the dump's fault_shared_spells; sixteen threads in short rounds begin and
# end one every few windows), with 2 (unpinned handlers: no spell) and
# on one CPU (one handler: no spell); one thread alone never starts one.
# Timed spells: one thread refaulting long enough has the handlers try the
# other placement (fault_mode_trials) with the data unchanged; none are
# tried with unpinned handlers or on one CPU.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

spells=$(eng_prog prog_spells)

# stat_of LABEL NAME: counter NAME from LABEL's dump at exit.
stat_of() {
	eng_dump_stat "$ENG_TMP/$1.dump" "$2"
}

spells_of() {
	stat_of "$1" fault_shared_spells
}

# spell_run LABEL EXPECT ARGS...: compare with a plain run; EXPECT is the
# fewest spells wanted (2 or more: one ended and another began) or "none".
# Threads faulting at once take turns at every fault even on a busy CPU
# (each sleeps in its fault), so a spell does not depend on the machine.
spell_run() {
	sr_label=$1 sr_expect=$2
	shift 2
	eng_compare_run "$sr_label" ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/$sr_label.dump" "$@" || return
	sr_n=$(spells_of "$sr_label")
	if [ -z "$sr_n" ]; then
		eng_fail "$sr_label: no fault_shared_spells in the dump at exit"
		return
	fi
	eng_say "$sr_label: fault_shared_spells $sr_n"
	case $sr_expect in
	none) [ "$sr_n" = 0 ] || eng_fail "$sr_label: $sr_n shared spell(s), expected none" ;;
	*) [ "$sr_n" -ge "$sr_expect" ] ||
		eng_fail "$sr_label: $sr_n shared spell(s) for rounds of threads faulting at once, expected $sr_expect or more" ;;
	esac
}

# timed_run LABEL EXPECT ARGS...: like spell_run for fault_mode_trials; EXPECT
# is "some" or "none".
timed_run() {
	tr_label=$1 tr_expect=$2
	shift 2
	eng_compare_run "$tr_label" ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/$tr_label.dump" "$@" || return
	tr_n=$(stat_of "$tr_label" fault_mode_trials)
	tr_c=$(stat_of "$tr_label" fault_mode_changes)
	if [ -z "$tr_n" ] || [ -z "$tr_c" ]; then
		eng_fail "$tr_label: no fault_mode_trials or fault_mode_changes in the dump at exit"
		return
	fi
	eng_say "$tr_label: fault_mode_trials $tr_n, fault_mode_changes $tr_c, fault_shared_spells $(spells_of "$tr_label")"
	[ "$tr_c" -le "$tr_n" ] || eng_fail "$tr_label: $tr_c changes from $tr_n trials"
	case $tr_expect in
	none) [ "$tr_n" = 0 ] || eng_fail "$tr_label: $tr_n trial(s), expected none" ;;
	*) [ "$tr_n" -ge 1 ] || eng_fail "$tr_label: one thread refaulting ~80,000 times and no trial" ;;
	esac
}

ncpus=$(nproc 2>/dev/null || echo 1)
if [ "$ncpus" -ge 2 ]; then
	spell_run turns 2 ZSWAP_FAULT_THREADS=0 "$spells" 4 4096 4
	spell_run turns2 2 ZSWAP_FAULT_THREADS=0 "$spells" 2 8192 3
	# Spells begun and ended every few windows: sixteen threads, short rounds.
	spell_run flap 10 ZSWAP_FAULT_THREADS=0 "$spells" 16 1024 20
else
	eng_say "one CPU: no second pinned handler, no spell expected"
	spell_run turns none ZSWAP_FAULT_THREADS=0 "$spells" 4 4096 4
fi
spell_run alone none ZSWAP_FAULT_THREADS=0 "$spells" 1 4096 4
spell_run unpinned none ZSWAP_FAULT_THREADS=2 "$spells" 4 4096 2
if [ "$ncpus" -ge 2 ]; then
	timed_run timed some ZSWAP_FAULT_THREADS=0 "$spells" 1 8192 5
fi
timed_run timed-unpinned none ZSWAP_FAULT_THREADS=1 "$spells" 1 8192 5
if command -v taskset >/dev/null 2>&1; then
	first=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
	spell_run onecpu none ZSWAP_FAULT_THREADS=0 taskset -c "$first" "$spells" 4 4096 2
	timed_run timed-onecpu none ZSWAP_FAULT_THREADS=0 taskset -c "$first" "$spells" 1 8192 5
fi
eng_finish
