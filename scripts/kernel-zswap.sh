#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel-zswap.sh - run a command with the KERNEL's zswap in front of a
# temporary swapfile, then put the machine back exactly as it was.
#
# The benchmarks compare libzswap with the kernel's own zswap on the same
# machine. The kernel side needs swap (zswap only stores pages on their way to
# a swap device), zswap enabled, a chosen vm.page-cluster (swap-in readahead)
# and debugfs mounted for zswap's counters. This machine is shared with other
# engineers' test runs, so swap must never stay on: everything changed is
# recorded in a state file first and restored on exit, on a signal, and by
# `teardown` after a run that was killed outright (SIGKILL skips traps).
#
# Usage:
#   kernel-zswap.sh [OPTIONS] run -- COMMAND [ARGS...]
#       set up, run COMMAND, restore; exits with COMMAND's status
#   kernel-zswap.sh teardown      restore from the state file of a killed run
#   kernel-zswap.sh status        print swap, zswap and page-cluster state
# Options (before the verb):
#   --page-cluster N   vm.page-cluster during the run (default: unchanged)
#   --size SIZE        swapfile size for fallocate (default 1G)
#   --swapfile PATH    default /var/tmp/libzswap-bench.swap
#   --compressor NAME  zswap compressor during the run (default: unchanged;
#                      this kernel has lzo, lzo-rle and deflate, no lz4);
#                      with --backend zram, zram's comp_algorithm (lz4 here)
#   --shrinker Y|N     zswap's shrinker_enabled during the run (default:
#                      unchanged): Y writes the pool back to the swapfile
#                      under memory pressure
#   --backend zswap|zram|swap
#                      zswap (default): zswap in front of the swapfile.
#                      swap: the swapfile alone, zswap disabled: the
#                      kernel's disk tier with nothing compressed in front,
#                      whose swap cache is charged to a memory cgroup like
#                      any page (a limit that holds on cgroup v1, where
#                      zswap's pool is not charged).
#                      zram: no swapfile and zswap disabled; a zram device
#                      of its own (hot_add, removed after) is the swap
#                      device: the kernel's LRU and zsmalloc with a
#                      compressor zswap lacks here (lz4). The device's
#                      sysfs directory is exported to COMMAND and to the
#                      controller as BENCH_ZRAM (its mm_stat is the pool).
#   --memcg LIMIT      run COMMAND in a memory cgroup (v1, under
#                      /sys/fs/cgroup/memory) limited to LIMIT bytes
#                      (memory.limit_in_bytes: 256M, 1G, ...), removed after;
#                      an OOM kill inside it is reported on stderr
#   --memcg-ctl PROG   with --memcg: run PROG --memcg DIR --limit LIMIT
#                      [CTL-ARGS] beside COMMAND, outside the group, from
#                      before COMMAND starts (PROG prints READY) until it
#                      ends (SIGTERM); tools/bench/bench_reclaim_memcg emulates
#                      cgroup v2's charging of zswap's pool (--mode v2)
#   --memcg-ctl-args ARGS   extra arguments for PROG (one string)
#   --memcg-report FILE     PROG's output (default: stderr)
#
# Needs root. Runs are serialised by a lock so two benchmarks never share
# (or tear down) one swap setup.
set -u

swapfile=/var/tmp/libzswap-bench.swap
size=1G
page_cluster=
compressor=
shrinker=
backend=zswap
memcg_limit=
memcg_ctl=
memcg_ctl_args=
memcg_report=
memcg_root=/sys/fs/cgroup/memory
memcg=$memcg_root/libzswap-bench
# root-only places: the state file is sourced by a root shell.
state=/run/libzswap-kernel-zswap.state
lock=/run/libzswap-kernel-zswap.lock
zp=/sys/module/zswap/parameters
dbg=/sys/kernel/debug

die() { echo "kernel-zswap.sh: $*" >&2; exit 1; }
say() { echo "kernel-zswap.sh: $*" >&2; }

usage() {
	sed -n '/^# Usage:/,/^# Needs root/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# Undo everything the state file says was changed. Safe to run twice and
# safe to run when setup stopped half-way: each step checks what is there.
restore() {
	[ -f "$state" ] || return 0
	s_swapfile=$swapfile
	# shellcheck disable=SC1090
	. "$state"
	rc=0
	s_zram=${s_zram:-}
	# The cgroup first: its processes are gone (the command was waited for),
	# so it can go; its swapped pages are moved to the parent.
	if [ -n "${s_memcg:-}" ] && [ -d "$s_memcg" ]; then
		rmdir "$s_memcg" 2>/dev/null || { sleep 1; rmdir "$s_memcg"; } || { say "rmdir $s_memcg failed"; rc=1; }
	fi
	if grep -q "^$s_swapfile " /proc/swaps 2>/dev/null; then
		# swapoff brings every swapped page back into memory; with zswap
		# they come from the pool, so this is quick for benchmark sizes.
		swapoff "$s_swapfile" || { say "swapoff $s_swapfile failed"; rc=1; }
	fi
	if [ -n "$s_zram" ] && [ -d "/sys/block/$s_zram" ]; then
		if grep -q "^/dev/$s_zram " /proc/swaps 2>/dev/null; then
			swapoff "/dev/$s_zram" || { say "swapoff /dev/$s_zram failed"; rc=1; }
		fi
		# reset frees the device's pool; hot_remove takes the device.
		echo 1 > "/sys/block/$s_zram/reset" || rc=1
		echo "${s_zram#zram}" > /sys/class/zram-control/hot_remove || rc=1
	fi
	if [ "${s_created_swapfile:-0}" = 1 ] && [ -e "$s_swapfile" ]; then
		rm -f "$s_swapfile" || rc=1
	fi
	if [ -n "${s_shrinker:-}" ] && [ "$(cat $zp/shrinker_enabled)" != "$s_shrinker" ]; then
		echo "$s_shrinker" > $zp/shrinker_enabled || rc=1
	fi
	if [ -n "${s_compressor:-}" ] && [ "$(cat $zp/compressor)" != "$s_compressor" ]; then
		echo "$s_compressor" > $zp/compressor || rc=1
	fi
	if [ -n "${s_enabled:-}" ] && [ "$(cat $zp/enabled)" != "$s_enabled" ]; then
		echo "$s_enabled" > $zp/enabled || rc=1
	fi
	if [ -n "${s_page_cluster:-}" ] && [ "$(sysctl -n vm.page-cluster)" != "$s_page_cluster" ]; then
		sysctl -q -w vm.page-cluster="$s_page_cluster" || rc=1
	fi
	if [ "${s_mounted_debugfs:-0}" = 1 ] && mountpoint -q $dbg; then
		umount $dbg || rc=1
	fi
	if [ $rc = 0 ]; then
		rm -f "$state"
	else
		say "restore incomplete; state kept in $state, rerun: $0 teardown"
	fi
	return $rc
}

status() {
	echo "swaps:         $(tail -n +2 /proc/swaps | awk '{print $1}' | tr '\n' ' ')"
	echo "zswap enabled: $(cat $zp/enabled) compressor: $(cat $zp/compressor)" \
	     "max_pool_percent: $(cat $zp/max_pool_percent) shrinker: $(cat $zp/shrinker_enabled)"
	echo "page-cluster:  $(sysctl -n vm.page-cluster)"
	if mountpoint -q $dbg && [ -r $dbg/zswap/stored_pages ]; then
		echo "stored_pages:  $(cat $dbg/zswap/stored_pages)"
	fi
	for z in /sys/block/zram*; do
		[ -d "$z" ] && [ "$(cat "$z/disksize")" != 0 ] &&
			echo "zram:          ${z##*/} $(cat "$z/comp_algorithm") disksize $(cat "$z/disksize")"
	done
	[ -d "$memcg" ] && echo "memory cgroup: $memcg (limit $(cat $memcg/memory.limit_in_bytes))"
	[ -f "$state" ] && echo "state file:    $state (a run did not restore: run teardown)"
	return 0
}

setup() {
	[ "$(id -u)" = 0 ] || die "needs root (swapon, sysfs, debugfs)"
	[ -d $zp ] || die "this kernel has no zswap ($zp missing)"
	if [ -f "$state" ]; then
		say "a previous run left $state; restoring it first"
		restore || die "could not restore the previous run's changes"
	fi
	grep -q "^$swapfile " /proc/swaps && die "$swapfile is already in use as swap"
	[ -e "$swapfile" ] && die "$swapfile exists; remove it or pass --swapfile"

	# Record the original state before touching anything.
	{
		echo "s_swapfile='$swapfile'"
		echo "s_enabled='$(cat $zp/enabled)'"
		echo "s_compressor='$(cat $zp/compressor)'"
		echo "s_shrinker='$(cat $zp/shrinker_enabled)'"
		echo "s_page_cluster='$(sysctl -n vm.page-cluster)'"
	} > "$state" || die "cannot write $state"

	if ! mountpoint -q $dbg; then
		echo "s_mounted_debugfs=1" >> "$state"
		mount -t debugfs none $dbg || die "cannot mount debugfs"
	fi
	[ -n "$page_cluster" ] && { sysctl -q -w vm.page-cluster="$page_cluster" || die "bad page-cluster"; }
	if [ "$backend" = zram ]; then
		setup_zram
		return
	fi
	echo "s_created_swapfile=1" >> "$state"
	fallocate -l "$size" "$swapfile" || die "fallocate $size $swapfile failed"
	chmod 600 "$swapfile"
	mkswap -q "$swapfile" >/dev/null || die "mkswap failed"
	if [ -n "$compressor" ]; then
		echo "$compressor" > $zp/compressor || die "compressor $compressor refused"
	fi
	if [ -n "$shrinker" ]; then
		echo "$shrinker" > $zp/shrinker_enabled || die "shrinker_enabled $shrinker refused"
	fi
	if [ "$backend" = swap ]; then
		echo N > $zp/enabled || die "cannot disable zswap"
	else
		# zswap before swapon: no page may reach the swapfile uncompressed.
		echo Y > $zp/enabled || die "cannot enable zswap"
	fi
	swapon "$swapfile" || die "swapon failed"
	setup_memcg
	say "swap on $swapfile ($size), zswap $(cat $zp/enabled) $(cat $zp/compressor) shrinker $(cat $zp/shrinker_enabled)," \
	    "page-cluster $(sysctl -n vm.page-cluster)"
}

# A zram device of our own as the only swap we add, zswap off (it would take
# the pages first). Any other swap already on stays as it was.
setup_zram() {
	zc=/sys/class/zram-control
	[ -w $zc/hot_add ] || die "no zram (CONFIG_ZRAM, $zc) for --backend zram"
	echo N > $zp/enabled || die "cannot disable zswap"
	zn=$(cat $zc/hot_add) || die "zram hot_add failed"
	echo "s_zram='zram$zn'" >> "$state"
	zd=/sys/block/zram$zn
	if [ -n "$compressor" ]; then
		echo "$compressor" > "$zd/comp_algorithm" || die "zram refused compressor $compressor ($(cat "$zd/comp_algorithm"))"
	fi
	echo "$size" > "$zd/disksize" || die "zram disksize $size refused"
	i=0
	while [ ! -b "/dev/zram$zn" ]; do
		i=$((i + 1)); [ $i -gt 100 ] && die "/dev/zram$zn did not appear"
		sleep 0.05
	done
	mkswap -q "/dev/zram$zn" >/dev/null || die "mkswap on /dev/zram$zn failed"
	# The highest priority: pages go here, not to any swap already on.
	swapon -p 32767 "/dev/zram$zn" || die "swapon /dev/zram$zn failed"
	BENCH_ZRAM=$zd
	export BENCH_ZRAM
	setup_memcg
	say "swap on /dev/zram$zn ($size, $(sed 's/.*\[\([^]]*\)\].*/\1/' "$zd/comp_algorithm")), zswap $(cat $zp/enabled)," \
	    "page-cluster $(sysctl -n vm.page-cluster)"
}

setup_memcg() {
	if [ -n "$memcg_limit" ]; then
		[ -d $memcg_root ] || die "no cgroup v1 memory controller at $memcg_root"
		[ -d "$memcg" ] && { rmdir "$memcg" || die "$memcg exists and is in use"; }
		echo "s_memcg='$memcg'" >> "$state"
		mkdir "$memcg" || die "cannot create $memcg"
		echo "$memcg_limit" > "$memcg/memory.limit_in_bytes" || die "limit $memcg_limit refused"
		say "memory cgroup $memcg, limit $(cat "$memcg/memory.limit_in_bytes") bytes"
	fi
}

while [ $# -gt 0 ]; do
	case "$1" in
	--page-cluster) page_cluster=${2:?}; shift 2 ;;
	--size) size=${2:?}; shift 2 ;;
	--swapfile) swapfile=${2:?}; shift 2 ;;
	--compressor) compressor=${2:?}; shift 2 ;;
	--shrinker) shrinker=${2:?}; shift 2 ;;
	--backend)
		backend=${2:?}; shift 2
		case $backend in zswap|zram|swap) ;; *) say "--backend: zswap, zram or swap"; usage ;; esac ;;
	--memcg) memcg_limit=${2:?}; shift 2 ;;
	--memcg-ctl) memcg_ctl=${2:?}; shift 2 ;;
	--memcg-ctl-args) memcg_ctl_args=${2?}; shift 2 ;;
	--memcg-report) memcg_report=${2:?}; shift 2 ;;
	-h|--help) usage ;;
	--*) say "unknown option $1"; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
verb=$1; shift

case "$verb" in
status) status; exit 0 ;;
teardown)
	exec 9>"$lock"; flock -w 600 9 || die "lock $lock busy"
	restore; exit $? ;;
run)
	[ "${1:-}" = "--" ] && shift
	[ $# -ge 1 ] || usage
	exec 9>"$lock"; flock -w 600 9 || die "lock $lock busy for 10 minutes"
	# From here on, whatever happens, restore. The command runs in the
	# background so that a signal reaches this shell's trap at once.
	child=
	ctl=
	# Stop the controller (it prints its summary on SIGTERM) and wait.
	# shellcheck disable=SC2317  # called from the traps below
	stop_ctl() {
		[ -n "$ctl" ] || return 0
		kill -TERM "$ctl" 2>/dev/null
		wait "$ctl" 2>/dev/null
		ctl=
	}
	# On a signal, stop the command before swapoff: none of its pages
	# may still be on their way to or from swap.
	# shellcheck disable=SC2317  # called from the traps below
	on_signal() {
		[ -n "$child" ] && kill "$child" 2>/dev/null && wait "$child"
		stop_ctl
		exit "$1"
	}
	trap 'restore' EXIT
	trap 'on_signal 130' INT
	trap 'on_signal 143' TERM
	trap 'on_signal 129' HUP
	setup
	if [ -n "$memcg_limit" ] && [ -n "$memcg_ctl" ]; then
		# The controller runs in this shell's group, not the limited one.
		ctl_out=${memcg_report:-/dev/stderr}
		# shellcheck disable=SC2086  # CTL-ARGS split on purpose
		"$memcg_ctl" --memcg "$memcg" --limit "$memcg_limit" $memcg_ctl_args > "$ctl_out" 9>&- &
		ctl=$!
		if [ -n "$memcg_report" ]; then
			n=0
			until grep -q '^READY' "$memcg_report" 2>/dev/null; do
				kill -0 "$ctl" 2>/dev/null || die "$memcg_ctl exited before it was ready"
				n=$((n + 1))
				[ $n -gt 200 ] && { stop_ctl; die "$memcg_ctl not ready after 10 s"; }
				sleep 0.05
			done
		fi
	fi
	# Started in the background (the traps must run meanwhile), with this
	# script's standard input: a shell gives a background command /dev/null
	# as its standard input before its own redirections, so the input is
	# kept on descriptor 8 first.
	exec 8<&0
	if [ -n "$memcg_limit" ]; then
		# shellcheck disable=SC2016  # expanded by the inner shell
		sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$memcg" "$@" 9>&- <&8 8<&- &
	else
		"$@" 9>&- <&8 8<&- &
	fi
	exec 8<&-
	child=$!
	wait "$child"
	rc=$?
	stop_ctl
	if [ -n "$memcg_limit" ]; then
		# v1's memory.oom_control counts the group's OOM kills (a killed
		# command exits 137 with no message of its own).
		kills=$(awk '$1 == "oom_kill" {print $2}' "$memcg/memory.oom_control" 2>/dev/null)
		[ "${kills:-0}" != 0 ] && say "OOM killer: $kills kill(s) in $memcg (limit $memcg_limit); see dmesg"
	fi
	exit $rc ;;
*) usage ;;
esac
