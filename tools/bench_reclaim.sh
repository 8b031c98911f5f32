#!/bin/sh
# bench_reclaim.sh - a working set W larger than its memory limit L, libzswap
# against the kernel's zswap, side by side in one invocation (issue 5).
# A benchmark, not a test: it prints figures and judges none.
#
# For each pattern (uniform, hotcold, seq) and thread count (1, 2), each run:
#   kernel    tools/bench_reclaim in a memory cgroup (v1) limited to L, the
#             kernel's zswap in front of a swapfile, vm.page-cluster PC
#             (scripts/kernel-zswap.sh --memcg L; default PC 0: see below)
#   libzswap  the same program under LD_PRELOAD=libzswap.so with
#             ZSWAP_MEMORY_LIMIT=L (and the library's other defaults)
# then a table per configuration: the ops phase's wall time of each side and
# their ratio (libzswap / kernel: the goal is at most 1.0), refaults (pages
# brought back during the ops phase: libzswap's refaults counter, the
# kernel's zswpin + pswpin), peak RSS (VmHWM, fill included; kernel side also
# the cgroup's memory.max_usage_in_bytes) and each pool at the end.
#
# Accounting differs and the table says so: ZSWAP_MEMORY_LIMIT counts the
# pool (as cgroup v2 charges zswap's pool), while this kernel's cgroup v1
# does not charge zswap's pool to the cgroup, so the kernel side keeps L
# resident plus its pool.
#
# Usage: tools/bench_reclaim.sh [--size W] [--limit L] [--runs N]
#            [--patterns "uniform hotcold seq"] [--threads "1 2"] [--ops N]
#            [--page-cluster PC] [--builddir DIR] [--out DIR]
#            [--no-kernel] [--no-lib] [--timeout SECONDS] [-- EXTRA-ARGS]
# Defaults: W 512M, L 320M, 1 run, PC 0, timeout 600 s a run. EXTRA-ARGS go
# to tools/bench_reclaim on both sides. Root for the kernel side.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
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
	--) shift; break ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_reclaim.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

bench=$builddir/tools/bench_reclaim
lib=$builddir/.libs/libzswap.so
kz=$here/scripts/kernel-zswap.sh
[ -x "$bench" ] || { echo "bench_reclaim.sh: $bench not built (make tools/bench_reclaim)" >&2; exit 1; }
out=${out:-$builddir/bench-out/reclaim-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
raw=$out/raw.txt
: > "$raw"

for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
say() { echo "bench_reclaim.sh: $*" >&2; }

# The swapfile holds the whole working set plus room.
mb() { case "$1" in *G) echo $((${1%G} * 1024)) ;; *M) echo "${1%M}" ;; *) echo $(($1 >> 20)) ;; esac; }
swap_mb=$(( $(mb "$size") + 512 ))

extra="--size $size --limit-label $limit${ops:+ --ops $ops}"

# run LABEL RUN COMMAND...: keep the RESULT line, tagged.
run() {
	label=$1 n=$2; shift 2
	say "$label run $n"
	timeout -k 10 "$tmo" "$@" > "$out/last.out" 2> "$out/last.err"
	rc=$?
	if [ $rc != 0 ]; then
		say "$label run $n failed (exit $rc$([ $rc = 124 ] && echo ': timed out')$([ $rc = 137 ] && echo ': killed (OOM?)')):"
		tail -n 5 "$out/last.err" >&2
		echo "$label $n FAILED rc=$rc" >> "$out/failed.txt"
	fi
	grep '^RESULT ' "$out/last.out" | sed "s/^RESULT /$label $n /" >> "$raw"
	cat "$out/last.err" >> "$out/stderr.txt"
}

kernel_ok=0
if [ $kernel = 1 ]; then
	if [ "$(id -u)" = 0 ] && [ -d /sys/module/zswap ] && [ -d /sys/fs/cgroup/memory ]; then kernel_ok=1
	else say "kernel side needs root, zswap and the cgroup v1 memory controller: skipped"; fi
fi
lib_ok=0
if [ $libside = 1 ]; then
	if [ -f "$lib" ]; then lib_ok=1; else say "no $lib: libzswap side skipped"; fi
fi

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -r); cpus: $(nproc); memory: $(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "kernel zswap: compressor $(cat /sys/module/zswap/parameters/compressor), page-cluster $pc during the runs," \
	     "memory cgroup v1 limit $limit, swapfile ${swap_mb}M"
	echo "libzswap: $lib, ZSWAP_MEMORY_LIMIT=$limit, other options default"
	echo "tree: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "working set $size, runs $runs, patterns: $patterns; threads: $threads; bench args: $extra $*"
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

i=1
while [ $i -le "$runs" ]; do
	for p in $patterns; do
		for t in $threads; do
			args="$extra --pattern $p --threads $t $*"
			if [ $kernel_ok = 1 ]; then
				# shellcheck disable=SC2086
				run "$p-t$t-kernel" $i "$kz" --memcg "$limit" --size "${swap_mb}M" --page-cluster "$pc" \
					run -- "$bench" $args
			fi
			if [ $lib_ok = 1 ]; then
				# shellcheck disable=SC2086
				run "$p-t$t-libzswap" $i env LD_PRELOAD="$lib" ZSWAP_MEMORY_LIMIT="$limit" "$bench" $args
			fi
		done
	done
	i=$((i + 1))
done

# Summary: per configuration, medians over the runs, and the run-paired ratio.
awk -v runs="$runs" '
function med(l, k,   a, n, r, t, i, j) {
	n = 0
	for (r = 1; r <= runs; r++) if ((l, k, r) in v) a[++n] = v[l, k, r] + 0
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(k,   a, n, r, t, i, j, m) {
	n = 0
	for (r = 1; r <= runs; r++)
		if ((c "-libzswap", k, r) in v && (c "-kernel", k, r) in v && v[c "-kernel", k, r] + 0 > 0)
			a[++n] = v[c "-libzswap", k, r] / v[c "-kernel", k, r]
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	return n > 1 ? sprintf("%.2f (%.2f..%.2f)", m, a[1], a[n]) : sprintf("%.2f", m)
}
{
	l = $1; r = $2
	for (f = 3; f <= NF; f++) { eq = index($f, "="); if (eq) v[l, substr($f, 1, eq - 1), r] = substr($f, eq + 1) }
	c = l; sub(/-(kernel|libzswap)$/, "", c)
	if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
}
END {
	print "| pattern, threads | wall ms kernel | wall ms libzswap | ratio | refaults kernel | refaults libzswap | peak RSS MiB kernel (memcg peak) | peak RSS MiB libzswap | pool MiB kernel / libzswap | fill ms kernel / libzswap | bad pages |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nc; i++) {
		c = order[i]; k = c "-kernel"; z = c "-libzswap"
		printf "| %s | %s | %s | **%s** | %s | %s | %s (%s) | %s | %s / %s | %s / %s | %s / %s |\n", c,
		       med(k, "wall_ms"), med(z, "wall_ms"), ratio("wall_ms"),
		       med(k, "refaults"), med(z, "refaults"),
		       med(k, "vmhwm_mb"), med(k, "memcg_peak_mb"), med(z, "vmhwm_mb"),
		       med(k, "pool_mb"), med(z, "pool_mb"), med(k, "fill_ms"), med(z, "fill_ms"),
		       med(k, "bad_pages"), med(z, "bad_pages")
	}
}' "$raw" > "$out/summary.md"

if tail -n +2 /proc/swaps | grep -q .; then
	say "WARNING: swap is enabled now: $(tail -n +2 /proc/swaps | awk '{print $1}' | tr '\n' ' ')"
fi
if grep -q 'bad_pages=[1-9]\|bad_reads=[1-9]' "$raw"; then
	say "WARNING: some runs read back wrong data: see $raw"
fi
[ -s "$out/failed.txt" ] && { echo; echo "Runs that failed:"; cat "$out/failed.txt"; } >> "$out/summary.md"
cat "$out/summary.md"
say "raw results: $raw; summary: $out/summary.md; machine: $out/machine.txt"
