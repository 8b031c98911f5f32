#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_engine.sh - libzswap's preload engine and the kernel's own zswap, side
# by side, in one invocation. A benchmark, not a test: it prints
# figures and judges none.
#
# Each run does, in this order, with the same data (text pages, fixed seed):
#   refault     kernel zswap, vm.page-cluster=0     (scripts/kernel-zswap.sh)
#               kernel zswap, vm.page-cluster=3     (the default readahead)
#               kernel zswap, page-cluster=0, pinned to CPU 0
#               libzswap, ZSWAP_READAHEAD=0         (LD_PRELOAD)
#               libzswap, ZSWAP_READAHEAD=RA        (--readahead, default 16: the
#                           adaptive window's maximum, src/engine/readahead.c)
#               libzswap, READAHEAD=0, program thread and fault handler on
#               one CPU (samecpu), and on different CPUs (othercpu)
#               libzswap, READAHEAD=RA on one CPU (samecpu)
#   refault-random (--random-refault, or --only refault-random): the same
#               refault in a random page order, kernel page-cluster 0 and 3,
#               libzswap READAHEAD 0 and RA: what readahead costs when
#               there is no sequence to find
#   firsttouch  no library: fresh mapping, after a page-out of its tail,
#               and pinned to CPU 0
#               libzswap:   fresh mapping (never evicted, not registered),
#                           registered (a page of its tail evicted first),
#                           registered with samecpu / othercpu placement
#   uffd_rtt    the raw userfaultfd round trip (tools/bench/bench_uffd_rtt)
# then prints, per configuration, the median and the spread (min..max) over the
# runs, and the libzswap/kernel ratios computed run by run (each pair measured
# seconds apart) with their median and spread.
#
# The machine is shared and has 2 CPUs: before each measurement the script
# waits (up to --idle-wait seconds, default 10) for a moment when nothing else
# is runnable, and every result records the involuntary context switches of
# its timed loop (nivcsw): a preempted run shows it.
#
# Usage: tools/bench/bench_engine.sh [--runs N] [--builddir DIR] [--out DIR]
#                              [--refault-size 256M] [--firsttouch-size 1G]
#                              [--only refault|refault-random|firsttouch|rtt] [--no-kernel]
#                              [--idle-wait SECONDS] [--readahead RA]
#                              [--random-refault]
# Needs root for the kernel side (swapon); swap is on only while a kernel-side
# run is going, and scripts/kernel-zswap.sh always turns it off again.
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
runs=5
out=
refault_size=256M
ft_size=1G
only=
kernel=1
idle_wait=10
ra=16
random_refault=0

while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=${2:?}; shift 2 ;;
	--builddir) builddir=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--refault-size) refault_size=${2:?}; shift 2 ;;
	--firsttouch-size) ft_size=${2:?}; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	--no-kernel) kernel=0; shift ;;
	--idle-wait) idle_wait=${2:?}; shift 2 ;;
	--readahead) ra=${2:?}; shift 2 ;;
	--random-refault) random_refault=1; shift ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_engine.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

bench=$builddir/tools/bench/bench_engine
rtt=$builddir/tools/bench/bench_uffd_rtt
lib=$builddir/.libs/libzswap.so
kz=$here/scripts/kernel-zswap.sh
[ -x "$bench" ] || { echo "bench_engine.sh: $bench not built (make tools/bench/bench_engine in $builddir)" >&2; exit 1; }
out=${out:-$builddir/bench-out/engine-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
raw=$out/raw.txt
: > "$raw"

# The library reports unknown ZSWAP_* names: every option it sees is chosen here.
for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

say() { echo "bench_engine.sh: $*" >&2; }
want() {
	if [ "$1" = refault-random ]; then
		[ "$only" = refault-random ] || { [ -z "$only" ] && [ $random_refault = 1 ]; }
		return
	fi
	[ -z "$only" ] || [ "$only" = "$1" ]
}

# Wait until nothing else is runnable for half a second (the 4th field of
# /proc/loadavg counts runnable threads, this shell included), at most
# idle_wait seconds. Returns 1 when no quiet moment came.
quiet() {
	t=0 calm=0
	while [ $t -lt $((idle_wait * 10)) ]; do
		read -r _ _ _ rq _ < /proc/loadavg
		if [ "${rq%/*}" -le 1 ]; then
			calm=$((calm + 1))
			[ $calm -ge 5 ] && return 0
		else
			calm=0
		fi
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}

# run LABEL RUN COMMAND...: keep the RESULT lines, tagged; show failures.
run() {
	label=$1 n=$2; shift 2
	if [ "$idle_wait" -gt 0 ] && ! quiet; then
		say "$label run $n: no quiet moment in ${idle_wait}s (other work running): measuring anyway"
		echo "$label $n busy=1" >> "$out/busy.txt"
	fi
	if "$@" > "$out/last.out" 2> "$out/last.err"; then :; else
		say "$label run $n failed (exit $?):"; tail -n 5 "$out/last.err" >&2
	fi
	grep '^RESULT ' "$out/last.out" | sed "s/^RESULT /$label $n /" >> "$raw"
	cat "$out/last.err" >> "$out/stderr.txt"
}

# How every libzswap run starts: lz COMMAND..., or lzpin CPU COMMAND... with
# the whole process (the library's handler threads too) on one CPU.
lz() { env LD_PRELOAD="$lib" ZSWAP_COMPRESSOR=lz4 "$@"; }
lzpin() { cpu=$1; shift; taskset -c "$cpu" env LD_PRELOAD="$lib" ZSWAP_COMPRESSOR=lz4 "$@"; }
lib_ok=0
if [ -f "$lib" ]; then
	LD_PRELOAD=$lib "$bench" refault --size 4M > "$out/probe.out" 2> "$out/probe.err"
	if grep -q 'side=libzswap active=1' "$out/probe.out" &&
	   ! grep -q ' stored_pages=0 ' "$out/probe.out"; then
		lib_ok=1
	else
		say "libzswap at $lib does not store pages here; its rows are skipped:"
		cat "$out/probe.out" "$out/probe.err" >&2
	fi
else
	say "no $lib: libzswap rows skipped (build it: make libzswap.la)"
fi
kernel_ok=0
if [ $kernel = 1 ]; then
	if [ "$(id -u)" = 0 ] && [ -d /sys/module/zswap ]; then kernel_ok=1
	else say "kernel side needs root and zswap: skipped"; fi
fi

# The machine, as it was when the runs started.
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r)"
	echo "cpus: $(nproc) ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))"
	echo "memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)," \
	     "free $(awk '/^MemAvailable/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
	echo "kernel zswap: compressor $(cat /sys/module/zswap/parameters/compressor)," \
	     "max_pool_percent $(cat /sys/module/zswap/parameters/max_pool_percent)," \
	     "shrinker $(cat /sys/module/zswap/parameters/shrinker_enabled)"
	echo "libzswap: $lib (active: $lib_ok), compressor lz4 (ZSWAP_COMPRESSOR=lz4)"
	echo "tree: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "runs: $runs; refault size $refault_size; first-touch size $ft_size"
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

i=1
while [ $i -le "$runs" ]; do
	say "run $i of $runs"
	if want refault; then
		if [ $kernel_ok = 1 ]; then
			run refault-kernel-pc0 $i "$kz" --page-cluster 0 run -- "$bench" refault --size "$refault_size"
			run refault-kernel-pc3 $i "$kz" --page-cluster 3 run -- "$bench" refault --size "$refault_size"
			run refault-kernel-pc0-cpu0 $i "$kz" --page-cluster 0 run -- \
				taskset -c 0 "$bench" refault --size "$refault_size"
		fi
		if [ $lib_ok = 1 ]; then
			run refault-libzswap-ra0 $i lz env ZSWAP_READAHEAD=0 "$bench" refault --size "$refault_size"
			run refault-libzswap-ra$ra $i lz env ZSWAP_READAHEAD=$ra "$bench" refault --size "$refault_size"
			# The handler threads start in the library's constructor and
			# inherit the process's affinity; the program thread then
			# pins itself (--cpu): same CPU, or the other one.
			run refault-libzswap-ra0-samecpu $i lzpin 0 ZSWAP_READAHEAD=0 \
				"$bench" refault --size "$refault_size" --cpu 0
			run refault-libzswap-ra0-othercpu $i lzpin 1 ZSWAP_READAHEAD=0 \
				"$bench" refault --size "$refault_size" --cpu 0
			run refault-libzswap-ra$ra-samecpu $i lzpin 0 ZSWAP_READAHEAD=$ra \
				"$bench" refault --size "$refault_size" --cpu 0
		fi
	fi
	if want refault-random; then
		if [ $kernel_ok = 1 ]; then
			run refault-random-kernel-pc0 $i "$kz" --page-cluster 0 run -- \
				"$bench" refault --size "$refault_size" --random
			run refault-random-kernel-pc3 $i "$kz" --page-cluster 3 run -- \
				"$bench" refault --size "$refault_size" --random
		fi
		if [ $lib_ok = 1 ]; then
			run refault-random-libzswap-ra0 $i lz env ZSWAP_READAHEAD=0 \
				"$bench" refault --size "$refault_size" --random
			run refault-random-libzswap-ra$ra $i lz env ZSWAP_READAHEAD=$ra \
				"$bench" refault --size "$refault_size" --random
		fi
	fi
	if want firsttouch; then
		run firsttouch-plain-fresh $i "$bench" firsttouch --size "$ft_size"
		run firsttouch-plain-registered $i "$bench" firsttouch --size "$ft_size" --evict-first
		run firsttouch-plain-fresh-cpu0 $i taskset -c 0 "$bench" firsttouch --size "$ft_size" --cpu 0
		if [ $lib_ok = 1 ]; then
			run firsttouch-libzswap-fresh $i lz env "$bench" firsttouch --size "$ft_size"
			run firsttouch-libzswap-registered $i lz env \
				"$bench" firsttouch --size "$ft_size" --evict-first
			run firsttouch-libzswap-registered-samecpu $i lzpin 0 \
				"$bench" firsttouch --size "$ft_size" --evict-first --cpu 0
			run firsttouch-libzswap-registered-othercpu $i lzpin 1 \
				"$bench" firsttouch --size "$ft_size" --evict-first --cpu 0
		fi
	fi
	if want rtt && [ -x "$rtt" ]; then
		[ "$idle_wait" -gt 0 ] && quiet
		"$rtt" > "$out/last.out" 2> "$out/last.err"
		sed -n 's/^RESULT \(.*handler=\([a-z]*\) placement=\([a-z-]*\).*\)/rtt-\2-\3 '"$i"' \1/p' \
			"$out/last.out" | sed 's/^rtt-none-- /rtt-baseline-anon-fault /' >> "$raw"
	fi
	i=$((i + 1))
done

# Summary: median and spread per configuration, then run-paired ratios.
awk -v runs="$runs" -v ra="$ra" '
function sortn(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
}
# the values of key k of configuration l, run by run
function each(l, k,   r, o) {
	o = ""
	for (r = 1; r <= runs; r++)
		o = o (o == "" ? "" : " ") (((l, k, r) in v) ? fmt(v[l, k, r] + 0) : "-")
	return o
}
# median (min..max) of the values of key k of configuration l over the runs
function stat(l, k,   a, n, r, m) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((l, k, r) in v) a[++n] = v[l, k, r] + 0
	if (n == 0) return "-"
	sortn(a, n)
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	return sprintf("%s (%s..%s)", fmt(m), fmt(a[1]), fmt(a[n]))
}
# per-run ratio num/den of key k, then median (min..max)
function ratio(num, den, k,   a, n, r, m) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((num, k, r) in v && (den, k, r) in v && v[den, k, r] + 0 > 0)
			a[++n] = (v[num, k, r] + 0) / (v[den, k, r] + 0)
	if (n == 0) return "-"
	sortn(a, n)
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	return sprintf("%.2f (%.2f..%.2f), %d runs", m, a[1], a[n], n)
}
function fmt(x) { return (x >= 100) ? sprintf("%.0f", x) : (x >= 10) ? sprintf("%.1f", x) : sprintf("%.2f", x) }
{
	l = $1; r = $2; seen[l] = 1
	for (f = 3; f <= NF; f++) {
		eq = index($f, "=")
		if (eq) v[l, substr($f, 1, eq - 1), r] = substr($f, eq + 1)
	}
	if (!(l in order)) { order[l] = ++nl; names[nl] = l }
}
END {
	print "## Per configuration: median (min..max) over " runs " runs"
	print ""
	print "| configuration | pageout us/page | refault p50 us | p90 us | p99 us | mean us | paged out | stored (own) | stored (global) | ratio | nivcsw |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nl; i++) if (names[i] ~ /^refault/) {
		l = names[i]
		print "| " l " | " stat(l, "pageout_us_per_page") " | " stat(l, "p50_us") " | " stat(l, "p90_us") \
		      " | " stat(l, "p99_us") " | " stat(l, "mean_us") " | " stat(l, "paged_out") \
		      " | " stat(l, "own_stored") " | " stat(l, "stored_pages") " | " stat(l, "ratio") " | " stat(l, "nivcsw") " |"
	}
	print ""
	print "| configuration | refault p50 us, run by run |"
	print "|---|---|"
	for (i = 1; i <= nl; i++) if (names[i] ~ /^refault/)
		print "| " names[i] " | " each(names[i], "p50_us") " |"
	print ""
	print "| configuration | first touch us/page (total/pages) | p50 us | p99 us | total ms | nivcsw |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= nl; i++) if (names[i] ~ /^firsttouch/) {
		l = names[i]
		print "| " l " | " stat(l, "us_per_page") " | " stat(l, "p50_us") " | " stat(l, "p99_us") \
		      " | " stat(l, "total_ms") " | " stat(l, "nivcsw") " |"
	}
	print ""
	print "| userfaultfd round trip | p50 us | p90 us | p99 us | resolving ioctl p50 us | nivcsw |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= nl; i++) if (names[i] ~ /^rtt/) {
		l = names[i]
		print "| " l " | " stat(l, "p50_us") " | " stat(l, "p90_us") " | " stat(l, "p99_us") \
		      " | " stat(l, "ioctl_p50_us") " | " stat(l, "nivcsw") " |"
	}
	print ""
	print "## Ratios, computed run by run: median (min..max)"
	print ""
	k0 = "refault-kernel-pc0"; k3 = "refault-kernel-pc3"
	l0 = "refault-libzswap-ra0"; l7 = "refault-libzswap-ra" ra
	print "- pageout us/page, libzswap / kernel: " ratio(l0, k0, "pageout_us_per_page")
	print "- refault p50, libzswap ra0 / kernel page-cluster=0: " ratio(l0, k0, "p50_us")
	print "- refault p99, libzswap ra0 / kernel page-cluster=0: " ratio(l0, k0, "p99_us")
	print "- refault mean, libzswap ra0 / kernel page-cluster=0: " ratio(l0, k0, "mean_us")
	print "- refault p50, libzswap ra" ra " / kernel page-cluster=3: " ratio(l7, k3, "p50_us")
	print "- refault p99, libzswap ra" ra " / kernel page-cluster=3: " ratio(l7, k3, "p99_us")
	print "- refault mean, libzswap ra" ra " / kernel page-cluster=3: " ratio(l7, k3, "mean_us")
	print "- refault mean, libzswap ra" ra " / kernel page-cluster=0: " ratio(l7, k0, "mean_us")
	print "- refault mean, libzswap ra" ra " / libzswap ra0: " ratio(l7, l0, "mean_us")
	print "- refault mean, libzswap ra" ra " same CPU / ra0 same CPU: " ratio(l7 "-samecpu", l0 "-samecpu", "mean_us")
	print "- refault mean, libzswap ra" ra " same CPU / kernel page-cluster=0 on CPU 0: " ratio(l7 "-samecpu", "refault-kernel-pc0-cpu0", "mean_us")
	r0 = "refault-random-libzswap-ra0"; r7 = "refault-random-libzswap-ra" ra
	print "- random refault mean, libzswap ra" ra " / ra0: " ratio(r7, r0, "mean_us")
	print "- random refault mean, libzswap ra0 / kernel page-cluster=0: " ratio(r0, "refault-random-kernel-pc0", "mean_us")
	print "- random refault mean, libzswap ra" ra " / kernel page-cluster=3: " ratio(r7, "refault-random-kernel-pc3", "mean_us")
	print "- random refault mean, kernel page-cluster=3 / page-cluster=0: " ratio("refault-random-kernel-pc3", "refault-random-kernel-pc0", "mean_us")
	kc = "refault-kernel-pc0-cpu0"
	print "- refault p50, libzswap same CPU / kernel page-cluster=0 on CPU 0: " ratio(l0 "-samecpu", kc, "p50_us")
	print "- refault p99, libzswap same CPU / kernel page-cluster=0 on CPU 0: " ratio(l0 "-samecpu", kc, "p99_us")
	print "- refault p50, libzswap other CPU / kernel page-cluster=0 on CPU 0: " ratio(l0 "-othercpu", kc, "p50_us")
	print "- pageout us/page, libzswap same CPU / kernel on CPU 0: " ratio(l0 "-samecpu", kc, "pageout_us_per_page")
	pf = "firsttouch-plain-fresh"
	print "- first touch, libzswap never-evicted / no library: " ratio("firsttouch-libzswap-fresh", pf, "us_per_page")
	print "- first touch, libzswap registered / no library: " ratio("firsttouch-libzswap-registered", pf, "us_per_page")
	print "- first touch, control (no library, tail paged out) / no library: " ratio("firsttouch-plain-registered", pf, "us_per_page")
	pc = "firsttouch-plain-fresh-cpu0"
	print "- first touch, libzswap registered same CPU / no library on CPU 0: " ratio("firsttouch-libzswap-registered-samecpu", pc, "us_per_page")
	print "- first touch, libzswap registered other CPU / no library on CPU 0: " ratio("firsttouch-libzswap-registered-othercpu", pc, "us_per_page")
}' "$raw" > "$out/summary.md"

echo "loadavg at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
if [ -s "$out/busy.txt" ]; then
	echo "measured with other work runnable (no quiet moment within ${idle_wait}s):" \
	     "$(wc -l < "$out/busy.txt") of the measurements, listed in $out/busy.txt" >> "$out/summary.md"
fi

# kernel-zswap.sh restores the machine after every kernel-side run; check.
if tail -n +2 /proc/swaps | grep -q .; then
	say "WARNING: swap is enabled now: $(tail -n +2 /proc/swaps | awk '{print $1}' | tr '\n' ' ')"
fi
# Any page that read back wrong makes the whole run worthless: say so loudly.
if grep -q 'bad_pages=[1-9]' "$raw"; then
	say "WARNING: some runs read back wrong data (bad_pages > 0): see $raw"
fi
cat "$out/summary.md"
say "raw results: $raw; summary: $out/summary.md; machine: $out/machine.txt"
