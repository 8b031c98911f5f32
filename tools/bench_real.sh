#!/bin/sh
# bench_real.sh - real programs (nobody here wrote them) under a memory limit
# L, libzswap against the kernel's zswap in a memory cgroup, side by side in
# one invocation. A benchmark, not a test: it prints figures and
# judges none (but says when an output differs from the unlimited run's).
#
# Workloads (each several times more live data than a 64M limit):
#   perl     a hash of 400,000 keys, 50-byte values (docs/DESIGN.md, "Known
#            bad case": random access all over a heap larger than the limit)
#   python   a dict of 1,500,000 str keys and int values
#   sort     sort -n of 2,000,000 lines of random numbers (a file made once)
# Sides, each run:
#   none     the program alone, no limit (its output is the reference; its
#            peak RSS sets the kernel controller's footprint)
#   kernel   in a memory cgroup (v1) limited to L, the kernel's zswap in
#            front of a swapfile, page-cluster 0 (scripts/kernel-zswap.sh
#            --memcg L), with tools/bench_reclaim_memcg --mode v2 beside it
#            keeping the group's limit at L minus its share of zswap's pool:
#            cgroup v2's charging emulated, as tools/bench_reclaim.sh does
#   kernelv1 the same without the emulation (--kernel-modes "v2 v1"; v1 as
#            it is: L resident plus an uncharged pool)
#   libzswap LD_PRELOAD=libzswap.so with ZSWAP_MEMORY_LIMIT=L, its
#            statistics written at exit to a file (ZSWAP_STATS_FILE: sort
#            closes its stderr before the library's destructors run)
# Figures: wall time (the median and the spread of the runs), peak memory
# (kernel: the group's usage plus its share of the pool, sampled every
# millisecond by the controller; libzswap and none: the process's peak RSS,
# ru_maxrss, libzswap's pool being in the process), refaults (kernel: the
# process's major faults; libzswap: its refaults counter), and whether the
# output is the unlimited run's. A kernel run killed by the OOM killer is a
# table entry.
#
# Usage: tools/bench_real.sh [--limit L] [--runs N] [--workloads "perl python sort"]
#            [--kernel-modes "v2"] [--no-kernel] [--no-lib] [--lib LIBZSWAP.so]
#            [--lib-env "VAR=VALUE ..."] [--memcg-ctl-args "ARGS"]
#            [--builddir DIR] [--out DIR] [--timeout SECONDS]
# Defaults: L 64M, 3 runs, all three workloads, kernel mode v2 (emulated),
# the build directory's library, timeout 300 s a run. Root for the kernel side.
# --memcg-ctl-args go to tools/bench_reclaim_memcg (default "--ratio 0": no
# footprint equilibrium guessed before the pool's ratio is learnt; at its
# default ratio 2 the guess for perl's 109 MiB was an 11 MiB limit at once).
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
limit=64M
runs=3
workloads="perl python sort"
kmodes=v2
kernel=1
libside=1
lib=
libenv=
ctlargs="--ratio 0"
out=
tmo=300

while [ $# -gt 0 ]; do
	case "$1" in
	--limit) limit=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--workloads) workloads=${2:?}; shift 2 ;;
	--kernel-modes) kmodes=${2:?}; shift 2 ;;
	--no-kernel) kernel=0; shift ;;
	--no-lib) libside=0; shift ;;
	--lib) lib=${2:?}; shift 2 ;;
	--lib-env) libenv=${2:?}; shift 2 ;;
	--memcg-ctl-args) ctlargs=${2:?}; shift 2 ;;
	--builddir) builddir=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--timeout) tmo=${2:?}; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_real.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

lib=${lib:-$builddir/.libs/libzswap.so}
ctl=$builddir/tools/bench_reclaim_memcg
kz=$here/scripts/kernel-zswap.sh
out=${out:-$builddir/bench-out/real-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
raw=$out/raw.txt
: > "$raw"
say() { echo "bench_real.sh: $*" >&2; }

for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
command -v /usr/bin/time > /dev/null || { say "needs /usr/bin/time (package time)"; exit 1; }
if [ $libside = 1 ]; then
	[ -f "$lib" ] || { say "$lib not built: libzswap side skipped"; libside=0; }
fi
kernel_ok=0
if [ $kernel = 1 ]; then
	if [ "$(id -u)" = 0 ] && [ -d /sys/module/zswap ] && [ -d /sys/fs/cgroup/memory ] && [ -x "$ctl" ]; then
		kernel_ok=1
	else
		say "kernel side needs root, zswap, the cgroup v1 memory controller and $ctl: skipped"
	fi
fi

# The workloads. sort's input is made once, from a fixed seed.
sortin=$out/sort.in
perl_prog='my %h; $h{$_} = "x" x 50 for 1..400000; print scalar(keys %h), "\n"'
python_prog='d = {}
for i in range(1500000):
    d[str(i)] = i
print(len(d), sum(d.values()))'
wl_cmd() {
	case "$1" in
	perl) echo /usr/bin/perl -e "\"\$perl_prog\"" ;;
	python) echo /usr/bin/python3 -c "\"\$python_prog\"" ;;
	sort) echo /usr/bin/sort -n -o "\$outfile" "\$sortin" ;;
	esac
}
case " $workloads " in *" sort "*)
	awk 'BEGIN { srand(5); for (i = 0; i < 2000000; i++) printf "%d\n", int(rand() * 1000000000) }' > "$sortin" ;;
esac

# run WORKLOAD SIDE N: one run; appends "WORKLOAD SIDE N key=value..." to raw.
run() {
	w=$1 side=$2 n=$3
	outfile=$out/last.sorted
	rm -f "$out/last.ctl" "$outfile" "$out/last.stats"
	cmd=$(wl_cmd "$w")
	say "$w $side run $n"
	tf="wall_s=%e user_s=%U sys_s=%S majflt=%F maxrss_kb=%M"
	case $side in
	none) eval "timeout -k 10 $tmo /usr/bin/time -o \"\$out/last.time\" -f \"\$tf\" $cmd" \
		> "$out/last.out" 2> "$out/last.err" ;;
	libzswap) eval "timeout -k 10 $tmo /usr/bin/time -o \"\$out/last.time\" -f \"\$tf\" env LD_PRELOAD=\"\$lib\"" \
		"ZSWAP_MEMORY_LIMIT=$limit ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE=\"\$out/last.stats\" $libenv $cmd" \
		> "$out/last.out" 2> "$out/last.err" ;;
	kernel*) m=v2; [ "$side" = kernelv1 ] && m=v1
		eval "timeout -k 10 $tmo \"\$kz\" --memcg \"\$limit\" --page-cluster 0 --memcg-ctl \"\$ctl\"" \
			"--memcg-report \"\$out/last.ctl\" --memcg-ctl-args \"--mode \$m --footprint \${foot:-0} \$ctlargs\"" \
			"run -- /usr/bin/time -o \"\$out/last.time\" -f \"\$tf\" $cmd" > "$out/last.out" 2> "$out/last.err" ;;
	esac
	rc=$?
	[ "$w" = sort ] && [ -f "$outfile" ] && cat "$outfile" > "$out/last.out"
	sum=$(md5sum < "$out/last.out" | cut -c1-12)
	[ "$side" = none ] && [ "$n" = 1 ] && echo "$sum" > "$out/$w.ref"
	same=0
	[ "$sum" = "$(cat "$out/$w.ref" 2>/dev/null)" ] && same=1
	t=$(tail -n 1 "$out/last.time" 2>/dev/null | grep wall_s=)
	st=
	[ -f "$out/last.stats" ] && st=$(awk '/^(refaults|pgscan|pgsteal|workingset_activate|allocstall|memory_events_max|stored_pages|pool_total_size) / { printf "%s=%s ", $1, $2 }' "$out/last.stats")
	ctlf=
	[ -f "$out/last.ctl" ] && ctlf=$(sed -n 's/^MEMCG //p' "$out/last.ctl" | sed 's/\([a-z_0-9]*\)=/ctl_\1=/g')
	oom=0
	grep -q 'OOM killer: ' "$out/last.err" && oom=1
	echo "$w $side $n rc=$rc oom=$oom same=$same $t $st $ctlf" >> "$raw"
	[ "$side" = none ] && [ "$n" = 1 ] &&
		foot=$(( $(echo "$t" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p') / 1024 ))M
	[ $rc = 0 ] || { say "$w $side run $n: exit $rc$([ $oom = 1 ] && echo ' (OOM kill)')"; tail -n 3 "$out/last.err" >&2; }
	cat "$out/last.err" >> "$out/stderr.txt"
	[ -f "$out/last.stats" ] && cat "$out/last.stats" >> "$out/stats.txt"
}

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "limit $limit, runs $runs, workloads: $workloads; kernel modes: $kmodes (kernel side $([ $kernel_ok = 1 ] && echo on || echo off), controller args: $ctlargs)"
	echo "libzswap: $lib${libenv:+ $libenv}, other options default"
	echo "tree: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "perl: $(/usr/bin/perl -e 'print $^V'), python: $(/usr/bin/python3 -V 2>&1), sort: $(/usr/bin/sort --version | head -n 1)"
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

for w in $workloads; do
	foot=
	i=1
	while [ $i -le "$runs" ]; do
		run "$w" none $i
		if [ $kernel_ok = 1 ]; then
			for m in $kmodes; do
				case $m in v2) run "$w" kernel $i ;; v1) run "$w" kernelv1 $i ;; esac
			done
		fi
		[ $libside = 1 ] && run "$w" libzswap $i
		i=$((i + 1))
	done
done

# The table: medians and spreads (min-max) per workload and side.
awk -v limit="$limit" '
function val(line, key,   m) { if (match(line, " " key "=[^ ]*")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2); return "" }
function add(k, key, v) { if (v == "") return; n[k, key]++; x[k, key, n[k, key]] = v + 0 }
function sortk(k, key,   i, j, t, c) { c = n[k, key]; for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (x[k, key, j] < x[k, key, i]) { t = x[k, key, i]; x[k, key, i] = x[k, key, j]; x[k, key, j] = t } return c }
function med(k, key, f,   c) { c = sortk(k, key); if (!c) return "-"; return sprintf(f, c % 2 ? x[k, key, (c + 1) / 2] : (x[k, key, c / 2] + x[k, key, c / 2 + 1]) / 2) }
function spread(k, key, f,   c) { c = sortk(k, key); if (!c) return "-"; return sprintf(f, x[k, key, 1]) "-" sprintf(f, x[k, key, c]) }
{
	k = $1 SUBSEP $2
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	runs[k]++
	if (val($0, "rc") != "0") { failed[k]++; if (val($0, "oom") == "1") oom[k]++; next }
	ok[k]++; if (val($0, "same") != "1") diff[k]++
	add(k, "wall", val($0, "wall_s"))
	if ($2 == "libzswap") { add(k, "peak", val($0, "maxrss_kb") / 1024); add(k, "ref", val($0, "refaults")) }
	else if ($2 ~ /^kernel/) { add(k, "peak", val($0, "ctl_peak_sum_mb")); add(k, "ref", val($0, "majflt")) }
	else { add(k, "peak", val($0, "maxrss_kb") / 1024); add(k, "ref", val($0, "majflt")) }
}
END {
	print "| workload | side | runs ok / runs | wall s, median (spread) | peak MiB, median (spread) | refaults, median (spread) | output as unlimited |"
	print "|---|---|---|---|---|---|---|"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP)
		note = failed[k] ? sprintf(" (%d failed%s)", failed[k], oom[k] ? sprintf(", %d OOM-killed", oom[k]) : "") : ""
		printf "| %s | %s | %d / %d%s | %s (%s) | %s (%s) | %s (%s) | %s |\n", p[1], p[2], ok[k], runs[k], note,
		       med(k, "wall", "%.2f"), spread(k, "wall", "%.2f"), med(k, "peak", "%.1f"), spread(k, "peak", "%.1f"),
		       med(k, "ref", "%d"), spread(k, "ref", "%d"), ok[k] ? (diff[k] ? "DIFFERENT in " diff[k] : "yes") : "-"
	}
	print ""
	print "limit " limit "; peak: none = peak RSS, libzswap = peak RSS (pool included), kernel = usage + pool (sampled)"
}' "$raw" > "$out/summary.md"
cat "$out/summary.md"
say "raw figures in $raw, table in $out/summary.md"
