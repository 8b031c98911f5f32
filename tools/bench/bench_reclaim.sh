#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_reclaim.sh - a working set W larger than its memory limit L, libzswap
# against the kernel's zswap, side by side in one invocation.
# A benchmark, not a test: it prints figures and judges none.
#
# For each pattern (uniform, hotcold, seq) and thread count (1, 2), each run:
#   kernel    tools/bench/bench_reclaim in a memory cgroup (v1) limited to L, the
#             kernel's zswap in front of a swapfile, vm.page-cluster PC
#             (scripts/kernel-zswap.sh --memcg L; default PC 0: see below),
#             with tools/bench/bench_reclaim_memcg --mode v2 beside it keeping the
#             group's limit at L minus its share of zswap's pool (and at
#             the equilibrium of a W footprint from the start): cgroup v2's
#             charging emulated, the compared configuration ("v2-emu")
#   kernelv1  the same without the emulation: v1 as it is, L resident plus
#             an uncharged pool (reference column; the controller only
#             samples, --mode v1)
#   kernelzram (mode zram, not run unless asked: --kernel-modes "v2 zram")
#             the kernel's zram as the swap device instead of zswap and a
#             swapfile, compressor --zram-comp (default lz4, which zswap
#             lacks on this kernel: the like-for-like side for libzswap's
#             default), its pool charged as v2 would (the controller,
#             --mode v2, reads the device's mm_stat). The same LRU and
#             zsmalloc as zswap; zram swaps in without readahead
#             (synchronous device).
#   libzswap  the same program under LD_PRELOAD=libzswap.so with
#             ZSWAP_MEMORY_LIMIT=L (and the library's other defaults)
#   libzswap2 with --lib-env2 "VAR=VALUE ...": libzswap again with other
#             options, right after the first (e.g. --lib-env
#             ZSWAP_COMPRESSOR=lzo --lib-env2 ZSWAP_COMPRESSOR=lz4: the
#             kernel's compressor and the default, side by side)
# then a markdown table (summary.md, ready to paste): the ops phase's wall
# time of each side and the ratios libzswap / kernel (the goal: at most 1.0),
# refaults (pages brought back during the ops phase: libzswap's refaults
# counter, the kernel side's major faults), the peak of usage + pool (kernel:
# the group's usage plus its share of the pool, sampled every millisecond by
# the controller; libzswap: VmHWM, its pool being in the process) and each
# pool at the end; a table of what each side held compressed at the end
# (stored pages, pool, their ratio with the pool's overhead measured the
# same way on both sides, the share of the working set not stored, and the
# share found resident during the ops phase, sampled with mincore); with
# --lib-env2 a table of the second configuration; and a table checking the
# emulation. A kernel run killed by the OOM killer in its group is a table
# entry, not an abort.
#
# Usage: tools/bench/bench_reclaim.sh [--size W] [--limit L] [--runs N]
#            [--patterns "uniform hotcold seq"] [--threads "1 2"] [--ops N]
#            [--page-cluster PC] [--builddir DIR] [--out DIR]
#            [--no-kernel] [--no-lib] [--kernel-modes "v2 v1"]
#            [--memcg-interval-us N] [--memcg-margin SIZE]
#            [--memcg-reclaim workload|bounded|writer]
#            [--timeout SECONDS] [--lib-env "VAR=VALUE ..."]
#            [--lib-env2 "VAR=VALUE ..."] [--guest-halt-poll NS]
#            [--zram-comp NAME] [--kernel-shrinker Y|N]
#            [-- EXTRA-ARGS]
# Defaults: W 512M, L 320M, 1 run, PC 0, both kernel modes, the controller's
# interval 1000 us, margin 4M and reclaim policy workload (see
# tools/bench/bench_reclaim_memcg --help), timeout 600 s a run. EXTRA-ARGS go to
# tools/bench/bench_reclaim on every side. --kernel-shrinker sets zswap's
# shrinker_enabled on the kernel side (default: as the machine has it).
# --lib-env sets libzswap options for its
# side (ZSWAP_* of the caller's environment are cleared: a run says what it
# used), e.g. --lib-env ZSWAP_COMPRESSOR=zstd. Root for the kernel side.
# --guest-halt-poll NS sets the KVM guest's cpuidle halt polling
# (/sys/module/haltpoll/parameters/guest_halt_poll_ns, root) for the whole
# invocation, both sides, and puts the old value back at exit: a guest
# may boot with 0 (an idle vCPU halts at once, and waking it costs a
# host round trip), the driver's own default is 200000 (docs/DESIGN.md
# "Speed under the limit").
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
size=512M
limit=320M
runs=1
patterns="uniform hotcold seq"
threads="1 2"
ops=
pc=0
out=
kernel=1
libside=1
tmo=600
kmodes="v2 v1"
ctl_interval=1000
ctl_margin=4M
ctl_reclaim=workload
libenv=
libenv2=
libside2=0
hpoll=
zcomp=lz4
kshrink=

while [ $# -gt 0 ]; do
	case "$1" in
	--size) size=${2:?}; shift 2 ;;
	--limit) limit=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--patterns) patterns=${2:?}; shift 2 ;;
	--threads) threads=${2:?}; shift 2 ;;
	--ops) ops=${2:?}; shift 2 ;;
	--page-cluster) pc=${2:?}; shift 2 ;;
	--builddir) builddir=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--no-kernel) kernel=0; shift ;;
	--no-lib) libside=0; shift ;;
	--timeout) tmo=${2:?}; shift 2 ;;
	--kernel-modes) kmodes=${2:?}; shift 2 ;;
	--memcg-interval-us) ctl_interval=${2:?}; shift 2 ;;
	--memcg-margin) ctl_margin=${2:?}; shift 2 ;;
	--memcg-reclaim) ctl_reclaim=${2:?}; shift 2 ;;
	--lib-env) libenv=${2:?}; shift 2 ;;
	--lib-env2) libenv2=${2:?}; libside2=1; shift 2 ;;
	--guest-halt-poll) hpoll=${2:?}; shift 2 ;;
	--zram-comp) zcomp=${2:?}; shift 2 ;;
	--kernel-shrinker) kshrink=${2:?}; shift 2 ;;
	--) shift; break ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_reclaim.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

bench=$builddir/tools/bench/bench_reclaim
ctl=$builddir/tools/bench/bench_reclaim_memcg
lib=$builddir/.libs/libzswap.so
kz=$here/scripts/kernel-zswap.sh
[ -x "$bench" ] || { echo "bench_reclaim.sh: $bench not built (make tools/bench/bench_reclaim)" >&2; exit 1; }
out=${out:-$builddir/bench-out/reclaim-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
raw=$out/raw.txt
: > "$raw"

for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

hpoll_file=/sys/module/haltpoll/parameters/guest_halt_poll_ns
hpoll_old=$(cat "$hpoll_file" 2>/dev/null)
if [ -n "$hpoll" ]; then
	if [ -z "$hpoll_old" ] || ! echo "$hpoll" > "$hpoll_file"; then
		echo "bench_reclaim.sh: cannot set $hpoll_file (no haltpoll cpuidle driver, or not root)" >&2
		exit 1
	fi
	trap 'echo "$hpoll_old" > "$hpoll_file"' EXIT
	trap 'exit 130' HUP INT PIPE TERM
fi
say() { echo "bench_reclaim.sh: $*" >&2; }

# The swapfile holds the whole working set plus room.
mb() { case "$1" in *G) echo $((${1%G} * 1024)) ;; *M) echo "${1%M}" ;; *) echo $(($1 >> 20)) ;; esac; }
swap_mb=$(( $(mb "$size") + 512 ))

extra="--size $size --limit-label $limit${ops:+ --ops $ops}"

# run LABEL RUN COMMAND...: keep the RESULT line, tagged, with the memory
# cgroup controller's MEMCG line (its fields prefixed ctl_) for kernel runs.
# A run that fails leaves a "LABEL RUN failed=1 rc=N ..." line instead, so
# the table shows the failure.
run() {
	label=$1 n=$2; shift 2
	say "$label run $n"
	rm -f "$out/last.ctl"
	timeout -k 10 "$tmo" "$@" > "$out/last.out" 2> "$out/last.err"
	rc=$?
	ctlf=
	[ -f "$out/last.ctl" ] && ctlf=$(sed -n 's/^MEMCG //p' "$out/last.ctl" | sed 's/\([a-z_0-9]*\)=/ctl_\1=/g')
	if grep -q '^RESULT ' "$out/last.out"; then
		grep '^RESULT ' "$out/last.out" | sed "s/^RESULT /$label $n /; s/\$/ $ctlf/" >> "$raw"
	else
		oom=$(echo "$ctlf" | sed -n 's/.*ctl_oom_kill=\([0-9]*\).*/\1/p')
		grep -q 'OOM killer: ' "$out/last.err" && oom=${oom:-1}
		echo "$label $n failed=1 rc=$rc oom=${oom:-0} $ctlf" >> "$raw"
	fi
	if [ $rc != 0 ]; then
		say "$label run $n failed (exit $rc$([ $rc = 124 ] && echo ': timed out')$([ $rc = 137 ] && echo ': killed')):"
		tail -n 5 "$out/last.err" >&2
		echo "$label $n FAILED rc=$rc$(grep -h 'OOM killer: ' "$out/last.err" | sed 's/^kernel-zswap.sh: / /')" >> "$out/failed.txt"
	fi
	{ cat "$out/last.err"; [ -f "$out/last.ctl" ] && cat "$out/last.ctl"; } >> "$out/stderr.txt"
}

kernel_ok=0
if [ $kernel = 1 ]; then
	if [ "$(id -u)" = 0 ] && [ -d /sys/module/zswap ] && [ -d /sys/fs/cgroup/memory ]; then kernel_ok=1
	else say "kernel side needs root, zswap and the cgroup v1 memory controller: skipped"; fi
	if [ $kernel_ok = 1 ] && [ ! -x "$ctl" ]; then
		say "$ctl not built (make tools/bench/bench_reclaim_memcg): kernel side skipped"; kernel_ok=0
	fi
fi
lib_ok=0
if [ $libside = 1 ]; then
	if [ -f "$lib" ]; then lib_ok=1; else say "no $lib: libzswap side skipped"; fi
fi

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r); cpus: $(nproc); memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	if [ -n "$hpoll_old" ]; then
		echo "guest halt polling: $(cat "$hpoll_file") ns${hpoll:+ (set for this run; $hpoll_old before)}"
	else
		echo "guest halt polling: none (no haltpoll cpuidle driver)"
	fi
	echo "loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "kernel zswap: compressor $(cat /sys/module/zswap/parameters/compressor), page-cluster $pc during the runs," \
	     "memory cgroup v1 limit $limit, swapfile ${swap_mb}M; modes: $kmodes" \
	     "(v2: emulated by tools/bench/bench_reclaim_memcg, interval ${ctl_interval} us, margin $ctl_margin, reclaim $ctl_reclaim)"
	case " $kmodes " in *" zram "*) echo "kernel zram: compressor $zcomp, no swapfile, zswap off, v2 charging emulated as above" ;; esac
	echo "libzswap: $lib, ZSWAP_MEMORY_LIMIT=$limit${libenv:+ $libenv}, other options default"
	[ $libside2 = 1 ] && echo "libzswap2: $lib, ZSWAP_MEMORY_LIMIT=$limit${libenv2:+ $libenv2}, other options default"
	echo "tree: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "working set $size, runs $runs, patterns: $patterns; threads: $threads; bench args: $extra $*"
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

i=1
while [ $i -le "$runs" ]; do
	for p in $patterns; do
		for t in $threads; do
			args="$extra --pattern $p --threads $t $*"
			for m in $kmodes; do
				[ $kernel_ok = 1 ] || break
				kb=
				case $m in
				v2) kl=kernel; cm=v2 ;;
				v1) kl=kernelv1; cm=v1 ;;
				zram) kl=kernelzram; cm=v2; kb="--backend zram --compressor $zcomp" ;;
				*) say "unknown kernel mode $m"; continue ;;
				esac
				[ -n "$kshrink" ] && [ "$m" != zram ] && kb="$kb --shrinker $kshrink"
				# shellcheck disable=SC2086
				run "$p-t$t-$kl" $i "$kz" $kb --memcg "$limit" --size "${swap_mb}M" --page-cluster "$pc" \
					--memcg-ctl "$ctl" --memcg-report "$out/last.ctl" \
					--memcg-ctl-args "--mode $cm --interval-us $ctl_interval --margin $ctl_margin --reclaim $ctl_reclaim --footprint $size" \
					run -- "$bench" $args
			done
			if [ $lib_ok = 1 ]; then
				# shellcheck disable=SC2086
				run "$p-t$t-libzswap" $i env LD_PRELOAD="$lib" ZSWAP_MEMORY_LIMIT="$limit" $libenv "$bench" $args
				if [ $libside2 = 1 ]; then
					# shellcheck disable=SC2086
					run "$p-t$t-libzswap2" $i env LD_PRELOAD="$lib" ZSWAP_MEMORY_LIMIT="$limit" $libenv2 "$bench" $args
				fi
			fi
		done
	done
	i=$((i + 1))
done

# Summary: per configuration, medians over the runs, and the run-paired ratios.
awk -v runs="$runs" -v limit="$limit" -v env1="$libenv" -v env2="$libenv2" -v zcomp="$zcomp" '
function med(l, k,   a, n, r, t, i, j) {
	n = 0
	for (r = 1; r <= runs; r++) if ((l, k, r) in v) a[++n] = v[l, k, r] + 0
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# libzswap / side s, paired run by run.
function ratio(s, k) { return ratio2("-libzswap", s, k) }
# side z / side s, paired run by run.
function ratio2(z, s, k,   a, n, r, t, i, j, m) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((c z, k, r) in v && (c s, k, r) in v && v[c s, k, r] + 0 > 0)
			a[++n] = v[c z, k, r] / v[c s, k, r]
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	return n > 1 ? sprintf("%.2f (%.2f..%.2f)", m, a[1], a[n]) : sprintf("%.2f", m)
}
# How the runs of side l failed, "" if none did.
function fails(l,   r, n, o, rc) {
	n = 0; o = 0
	for (r = 1; r <= runs; r++) if ((l, "failed", r) in v) { n++; if (v[l, "oom", r] + 0 > 0) o++; rc = v[l, "rc", r] }
	if (n == 0) return ""
	return (o ? (o == n ? "OOM-killed" : o " OOM-killed") : "failed (exit " rc ")") (runs > 1 ? " in " n "/" runs : "")
}
function fmt2(x) { return x == "-" ? x : sprintf("%.2f", x) }
function fmt1(x) { return x == "-" ? x : sprintf("%.1f", x) }
function cell(l, k,   m, f) {
	m = med(l, k); f = fails(l)
	if (m == "-" && f != "") return f
	return f != "" ? m " (" f ")" : m
}
{
	l = $1; r = $2
	for (f = 3; f <= NF; f++) { eq = index($f, "="); if (eq) v[l, substr($f, 1, eq - 1), r] = substr($f, eq + 1) }
	c = l; sub(/-(kernel|kernelv1|kernelzram|libzswap|libzswap2)$/, "", c)
	if (l ~ /-libzswap2$/) have2 = 1
	if (l ~ /-kernelzram$/) havez = 1
	# Compressed at the end, the pool measured alike on both sides:
	# stored pages x 4 KiB / the pool'"'"'s bytes (zsmalloc'"'"'s pages), and the
	# share of the working set not stored (resident, or in the swapfile).
	if ((l, "stored_pages", r) in v && (l, "pool_mb", r) in v && (l, "size_mb", r) in v) {
		sp = v[l, "stored_pages", r] + 0; pm = v[l, "pool_mb", r] + 0; sz = v[l, "size_mb", r] + 0
		if (sp > 0 && pm > 0) v[l, "pool_ratio", r] = sp * 4096 / (pm * 1048576)
		if (sz > 0) v[l, "resident_pct", r] = 100 * (1 - sp / (sz * 256))
	}
	if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
}
END {
	print "| pattern, threads | wall ms kernel v2-emu / kernel v1 / libzswap | ratio libzswap / kernel v2-emu | ratio libzswap / kernel v1 | refaults kernel v2-emu / v1 / libzswap | peak usage+pool MiB kernel v2-emu / v1 / libzswap (limit " limit ") | pool MiB at end kernel v2-emu / v1 / libzswap | fill ms kernel v2-emu / v1 / libzswap | bad pages |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nc; i++) {
		c = order[i]; k = c "-kernel"; k1 = c "-kernelv1"; z = c "-libzswap"
		printf "| %s | %s / %s / %s | **%s** | %s | %s / %s / %s | %s / %s / %s | %s / %s / %s | %s / %s / %s | %s |\n", c,
		       cell(k, "wall_ms"), cell(k1, "wall_ms"), cell(z, "wall_ms"), ratio("-kernel", "wall_ms"), ratio("-kernelv1", "wall_ms"),
		       med(k, "refaults"), med(k1, "refaults"), med(z, "refaults"),
		       med(k, "ctl_peak_sum_mb"), med(k1, "ctl_peak_sum_mb"), med(z, "vmhwm_mb"),
		       med(k, "pool_mb"), med(k1, "pool_mb"), med(z, "pool_mb"),
		       med(k, "fill_ms"), med(k1, "fill_ms"), med(z, "fill_ms"),
		       med(k, "bad_pages") + med(k1, "bad_pages") + med(z, "bad_pages")
	}
	print ""
	print "What each side held compressed at the end of the ops phase: stored pages, the pool (kernel: debugfs zswap pool_total_size; libzswap: mem_used_total), stored pages x 4 KiB / pool (the same measure on both sides, the pool'"'"'s overhead included), and the share of the working set not stored; and the working set found resident during the ops phase (mincore every 50 ms, the mean: what the refaults follow):"
	print ""
	print "| pattern, threads | stored pages kernel v2-emu / v1 / libzswap" (have2 ? " / libzswap2" : "") " | pool MiB | stored x 4K / pool | not stored % | W resident during ops, MiB |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= nc; i++) {
		c = order[i]; k = c "-kernel"; k1 = c "-kernelv1"; z = c "-libzswap"; z2 = c "-libzswap2"
		printf "| %s | %s / %s / %s%s | %s / %s / %s%s | %s / %s / %s%s | %s / %s / %s%s | %s / %s / %s%s |\n", c,
		       med(k, "stored_pages"), med(k1, "stored_pages"), med(z, "stored_pages"), have2 ? " / " med(z2, "stored_pages") : "",
		       med(k, "pool_mb"), med(k1, "pool_mb"), med(z, "pool_mb"), have2 ? " / " med(z2, "pool_mb") : "",
		       fmt2(med(k, "pool_ratio")), fmt2(med(k1, "pool_ratio")), fmt2(med(z, "pool_ratio")), have2 ? " / " fmt2(med(z2, "pool_ratio")) : "",
		       fmt1(med(k, "resident_pct")), fmt1(med(k1, "resident_pct")), fmt1(med(z, "resident_pct")), have2 ? " / " fmt1(med(z2, "resident_pct")) : "",
		       fmt1(med(k, "ws_resident_mb")), fmt1(med(k1, "ws_resident_mb")), fmt1(med(z, "ws_resident_mb")), have2 ? " / " fmt1(med(z2, "ws_resident_mb")) : ""
	}
	if (have2) {
		print ""
		print "libzswap2 (" env2 ") beside libzswap (" (env1 == "" ? "defaults" : env1) "), run by run:"
		print ""
		print "| pattern, threads | wall ms libzswap / libzswap2 | ratio libzswap2 / kernel v2-emu | ratio libzswap2 / libzswap | refaults kernel v2-emu / libzswap / libzswap2 | ratio of refaults libzswap / kernel v2-emu, libzswap2 / kernel v2-emu | peak MiB libzswap / libzswap2 | pool MiB at end libzswap / libzswap2 |"
		print "|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nc; i++) {
			c = order[i]; k = c "-kernel"; z = c "-libzswap"; z2 = c "-libzswap2"
			printf "| %s | %s / %s | **%s** | %s | %s / %s / %s | %s, %s | %s / %s | %s / %s |\n", c,
			       cell(z, "wall_ms"), cell(z2, "wall_ms"), ratio2("-libzswap2", "-kernel", "wall_ms"),
			       ratio2("-libzswap2", "-libzswap", "wall_ms"),
			       med(k, "refaults"), med(z, "refaults"), med(z2, "refaults"),
			       ratio2("-libzswap", "-kernel", "refaults"), ratio2("-libzswap2", "-kernel", "refaults"),
			       med(z, "vmhwm_mb"), med(z2, "vmhwm_mb"), med(z, "pool_mb"), med(z2, "pool_mb")
		}
	}
	if (havez) {
		print ""
		print "The kernel with zram (" zcomp ") as its swap device instead of zswap, v2 charging emulated the same way, beside libzswap (" (env1 == "" ? "defaults" : env1) ")" (have2 ? " and libzswap2 (" env2 ")" : "") ", run by run:"
		print ""
		print "| pattern, threads | wall ms kernel zram / libzswap" (have2 ? " / libzswap2" : "") " | ratio libzswap / kernel zram | refaults kernel zram / libzswap" (have2 ? " / libzswap2" : "") " | ratio of refaults libzswap / kernel zram" (have2 ? ", libzswap2 / kernel zram" : "") " | peak usage+pool MiB kernel zram / libzswap | pool MiB at end | stored x 4K / pool | W resident during ops, MiB |"
		print "|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nc; i++) {
			c = order[i]; kz = c "-kernelzram"; z = c "-libzswap"; z2 = c "-libzswap2"
			printf "| %s | %s / %s%s | **%s** | %s / %s%s | **%s**%s | %s / %s | %s / %s | %s / %s | %s / %s |\n", c,
			       cell(kz, "wall_ms"), cell(z, "wall_ms"), have2 ? " / " cell(z2, "wall_ms") : "",
			       ratio("-kernelzram", "wall_ms"),
			       med(kz, "refaults"), med(z, "refaults"), have2 ? " / " med(z2, "refaults") : "",
			       ratio("-kernelzram", "refaults"), have2 ? ", " ratio2("-libzswap2", "-kernelzram", "refaults") : "",
			       med(kz, "ctl_peak_sum_mb"), med(z, "vmhwm_mb"), med(kz, "pool_mb"), med(z, "pool_mb"),
			       fmt2(med(kz, "pool_ratio")), fmt2(med(z, "pool_ratio")),
			       fmt1(med(kz, "ws_resident_mb")), fmt1(med(z, "ws_resident_mb"))
		}
	}
	print ""
	print "Kernel side, usage + pool (the group'"'"'s usage plus its share of zswap'"'"'s pool, or zram'"'"'s, sampled by tools/bench/bench_reclaim_memcg):"
	print ""
	print "| pattern, threads, kernel mode | peak usage+pool MiB (usage + pool at that sample) | samples over the limit / samples (worst, KiB) | memcg peak usage MiB | limit min MiB | limit writes (EINTR, EBUSY) | controller CPU ms (in limit writes) | largest sampling gap ms | pages of others in zswap (max) | free swap MiB (min) | OOM kills |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nc; i++) {
		c = order[i]
		for (m = 1; m <= 3; m++) {
			k = c (m == 1 ? "-kernel" : m == 2 ? "-kernelv1" : "-kernelzram")
			if (!((k, "ctl_samples", 1) in v) && fails(k) == "") continue
			printf "| %s, %s | %s (%s + %s) | %s / %s (%s) | %s | %s | %s (%s, %s) | %s (%s) | %s | %s | %s | %s |\n", c, (m == 1 ? "v2-emu" : m == 2 ? "v1" : "zram v2-emu"),
			       med(k, "ctl_peak_sum_mb"), med(k, "ctl_peak_sum_usage_mb"), med(k, "ctl_peak_sum_pool_mb"),
			       med(k, "ctl_over_limit_samples"), med(k, "ctl_samples"), med(k, "ctl_over_limit_max_kb"),
			       med(k, "ctl_max_usage_mb"), med(k, "ctl_min_limit_mb"),
			       med(k, "ctl_limit_writes"), med(k, "ctl_eintr"), med(k, "ctl_ebusy"),
			       med(k, "ctl_ctl_cpu_ms"), med(k, "ctl_write_ms"), med(k, "ctl_gap_max_ms"),
			       med(k, "ctl_foreign_pages_max"), med(k, "ctl_swap_free_min_mb"), med(k, "ctl_oom_kill")
		}
	}
}' "$raw" > "$out/summary.md"

if tail -n +2 /proc/swaps | grep -q .; then
	say "WARNING: swap is enabled now: $(tail -n +2 /proc/swaps | awk '{print $1}' | tr '\n' ' ')"
fi
if grep -q 'bad_pages=[1-9]\|bad_reads=[1-9]' "$raw"; then
	say "WARNING: some runs read back wrong data: see $raw"
fi
[ -s "$out/failed.txt" ] && { echo; echo "Runs that failed:"; cat "$out/failed.txt"; } >> "$out/summary.md"
echo "loadavg at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
{
	echo "W $size, L $limit, $runs run(s); $(sed -n 's/^date: //p' "$out/machine.txt") to $(date -u +%H:%M:%SZ);" \
	     "load average $(sed -n 's/^loadavg: //p' "$out/machine.txt") at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end;" \
	     "tree $(sed -n 's/^tree: //p' "$out/machine.txt"); kernel page-cluster $pc;" \
	     "guest halt polling $(sed -n 's/^guest halt polling: //p' "$out/machine.txt")"
	echo
	cat "$out/summary.md"
} > "$out/summary.tmp" && mv "$out/summary.tmp" "$out/summary.md"
cat "$out/summary.md"
say "raw results: $raw; summary: $out/summary.md; machine: $out/machine.txt"
