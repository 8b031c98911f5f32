#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_sample.sh - one side of tools/bench/bench_real.sh over time: the measured
# process's resident memory, the pool beside it and its refaults, sampled
# every INTERVAL seconds until it exits.
#
# Usage: bench_sample.sh SIDE TOP_PID OUT [INTERVAL] [ZSWAPCTL]
# SIDE is bench_real.sh's (none, kernel..., libzswap...). The measured
# process is the child of /usr/bin/time among TOP_PID's descendants (the
# side's wrappers, timeout and scripts/kernel-zswap.sh, sit above it).
# OUT gets one line a sample: seconds since the process was found,
# resident MiB, pool MiB, refaults so far. Resident: VmRSS, less the pool for
# libzswap (whose pool is in its own VmRSS); the pool: libzswap's
# pool_total_size (zswapctl stats), the kernel's zswap pool_total_size
# (debugfs: the machine's whole pool, the measured group being its only
# user), 0 unlimited; refaults: libzswap's refaults counter, the process's
# major faults elsewhere.
set -u
side=${1:?side}
top=${2:?pid}
out=${3:?output file}
iv=${4:-0.2}
ctl=${5:-zswapctl}

# The child of time (the side's wrappers exec or fork down to it).
find_measured() {
	todo=$top
	while [ -n "$todo" ]; do
		next=
		for p in $todo; do
			kids=$(pgrep -P "$p" 2> /dev/null)
			if [ "$(cat "/proc/$p/comm" 2> /dev/null)" = time ] && [ -n "$kids" ]; then
				echo "$kids" | head -n 1
				return 0
			fi
			next="$next $kids"
		done
		todo=$next
	done
	return 1
}

: > "$out"
pid=
while kill -0 "$top" 2> /dev/null; do
	pid=$(find_measured) && break
	sleep 0.05
done
[ -n "$pid" ] || exit 0
t0=$(date +%s.%N)
zpool=/sys/kernel/debug/zswap/pool_total_size
while [ -r "/proc/$pid/status" ]; do
	now=$(date +%s.%N)
	rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2> /dev/null)
	[ -n "$rss" ] || break
	# Field 12 of stat, counted after the command name's closing parenthesis.
	maj=$(sed 's/.*) //' "/proc/$pid/stat" 2> /dev/null | cut -d' ' -f10)
	pool=0 ref=${maj:-0}
	case $side in
	libzswap*)
		st=$("$ctl" stats "$pid" 2> /dev/null | awk '$1 == "pool_total_size" { p = $2 } $1 == "refaults" { r = $2 } END { if (p != "") print p, r }')
		# No answer (the process is exiting): no sample.
		[ -n "$st" ] || { sleep "$iv"; continue; }
		pool=${st% *} ref=${st#* } ;;
	kernel*)
		[ -r "$zpool" ] && pool=$(cat "$zpool") ;;
	esac
	awk -v t0="$t0" -v now="$now" -v rss="$rss" -v pool="$pool" -v ref="$ref" -v lib="$(case $side in libzswap*) echo 1 ;; *) echo 0 ;; esac)" \
		'BEGIN { res = rss / 1024 - (lib ? pool / 1048576 : 0); if (res < 0) res = 0
			printf "%.2f %.1f %.1f %d\n", now - t0, res, pool / 1048576, ref }' >> "$out"
	sleep "$iv"
done
