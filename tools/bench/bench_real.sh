#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_real.sh - real programs (nobody here wrote them) under a memory limit
# L, libzswap against the kernel's zswap in a memory cgroup, side by side in
# one invocation. A benchmark, not a test: it prints figures and
# judges none (but says when an output differs from the unlimited run's).
#
# Workloads (each several times more live data than a 64M limit, or twice
# its default limit for redis):
#   perl     a hash of 400,000 keys, 50-byte values (docs/DESIGN.md, "Known
#            bad case": random access all over a heap larger than the limit)
#   python   a dict of 1,500,000 str keys and int values
#   sort     sort -n of 2,000,000 lines of random numbers (a file made once)
#   redis    (on request: --workloads redis; Debian's redis-server and
#            redis-tools) a server and its clients: redis-server (no config
#            file, unix socket in a temporary directory, no persistence) is
#            the measured program; tools/bench/bench_redis.sh, beside it, loads
#            40,000 keys of 512-7680 random bytes (about 150 MiB that do not
#            compress; the commands made once, from fixed seeds), then the
#            timed phase: 100,000 GETs of random keys from 50 connections
#            (redis-benchmark), 20,000 overwrites of random keys with
#            random values (redis-cli --pipe, one ordered stream), then
#            DEBUG DIGEST (the output compared) and SHUTDOWN. The clients
#            run without LD_PRELOAD and outside the memory cgroup (the
#            harness's own group): limit, peak and faults are the server's
#   node     (on request) Node.js: a Map of 1,000,000 small objects, then
#            3,000,000 lookups in a scattered order (V8's heap, in pieces
#            of 256 KiB); its own default limit 60 % of the unlimited peak
#   cmd      (--cmd "COMMAND ARGS"): any program, as a shell command line;
#            its stdout is the output compared; without --limit, L is 60 %
#            of its unlimited peak (the first unlimited run's)
# Sides, each run:
#   none     the program alone, no limit (its output is the reference; its
#            peak RSS sets the kernel controller's footprint)
#   kernel   in a memory cgroup (v1) limited to L, the kernel's zswap in
#            front of a swapfile, page-cluster 0 (scripts/kernel-zswap.sh
#            --memcg L), with tools/bench/bench_reclaim_memcg --mode v2 beside it
#            keeping the group's limit at L minus its share of zswap's pool:
#            cgroup v2's charging emulated, as tools/bench/bench_reclaim.sh does
#   kernelswap (--kernel-modes "... swap") the swapfile alone, zswap off
#            (scripts/kernel-zswap.sh --backend swap): the kernel's disk
#            tier, with nothing compressed in front and nothing uncharged,
#            so that the limit holds on cgroup v1 as on v2
#   kernelv1 the same without the emulation (--kernel-modes "v2 v1"; v1 as
#            it is: L resident plus an uncharged pool)
#   libzswap LD_PRELOAD=libzswap.so with ZSWAP_MEMORY_LIMIT=L, its
#            statistics written at exit to a file (ZSWAP_STATS_FILE: sort
#            closes its stderr before the library's destructors run)
#   libzswapv1 (--lib-charges "v2 v1") the same with ZSWAP_MEMORY_CHARGE=v1:
#            the pool outside the limit, as kernelv1's is (like for like)
# Figures: wall time (the median and the spread of the runs; redis: the
# server's whole life, load and digest included), the throughput of redis's
# timed phase (requests per second, GETs and SETs together), peak memory
# (kernel: the group's usage plus its share of the pool, sampled every
# millisecond by the controller; libzswap and none: the process's peak RSS,
# ru_maxrss, libzswap's pool being in the process), refaults (kernel: the
# process's major faults; libzswap: its refaults counter), whether the
# output is the unlimited run's, and the ratios libzswap / kernel of the
# medians; the pool's peak (libzswap: mem_used_max; kernel: zswap's
# pool_total_size, sampled by the controller). A kernel run killed by the OOM
# killer is a table entry.
# --plot: the first run of each side sampled every 0.2 s
# (tools/bench/bench_sample.sh: resident memory, pool, refaults) and drawn by
# gnuplot into OUT/WORKLOAD.png, one panel each for resident memory, the
# pool and the refault rate, a line per side (gnuplot-nox is installed
# when missing and the user is root).
#
# Usage: tools/bench/bench_real.sh [--limit L] [--runs N] [--workloads "perl python sort"]
#            [--cmd "COMMAND ARGS"] [--plot] [--lib-charges "v2 v1"]
#            [--kernel-modes "v2 v1 swap"] [--no-kernel] [--no-lib] [--lib LIBZSWAP.so]
#            [--lib-env "VAR=VALUE ..."] [--memcg-ctl-args "ARGS"]
#            [--builddir DIR] [--out DIR] [--timeout SECONDS]
#            [--kernel-shrinker Y|N]
# Defaults: L 64M (redis 96M: about half its unlimited peak of 190 MiB;
# node and cmd 60 % of their unlimited peak), 3 runs, the workloads perl, python and
# sort (only cmd with --cmd), kernel mode v2 (emulated), libzswap's charge v2,
# the build directory's library, timeout 300 s a run. Root for the kernel side.
# --kernel-shrinker sets zswap's shrinker_enabled on the kernel side, as
# tools/bench/bench_reclaim.sh's does (default: as the machine has it).
# --memcg-ctl-args go to tools/bench/bench_reclaim_memcg (default "--ratio 0": no
# footprint equilibrium guessed before the pool's ratio is learnt; at its
# default ratio 2 the guess for perl's 109 MiB was an 11 MiB limit at once).
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${ZSWAP_BUILDDIR:-$(pwd)}
limit=
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
kshrink=
cmdline=
plot=0
charges=v2

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
	--kernel-shrinker) kshrink=${2:?}; shift 2 ;;
	--cmd) cmdline=${2:?}; workloads=cmd; shift 2 ;;
	--plot) plot=1; shift ;;
	--lib-charges) charges=${2:?}; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_real.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

lib=${lib:-$builddir/.libs/libzswap.so}
zctl=$builddir/tools/zswapctl/zswapctl
ctl=$builddir/tools/bench/bench_reclaim_memcg
# shellcheck disable=SC2034  # kz and the others so marked: read through eval
kz=$here/scripts/kernel-zswap.sh
out=${out:-$builddir/bench-out/real-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1
raw=$out/raw.txt
: > "$raw"
say() { echo "bench_real.sh: $*" >&2; }

for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
command -v /usr/bin/time > /dev/null || { say "needs /usr/bin/time (package time)"; exit 1; }
if [ $plot = 1 ] && ! command -v gnuplot > /dev/null; then
	[ "$(id -u)" = 0 ] && apt-get install -y --no-install-recommends gnuplot-nox > /dev/null 2>&1
	command -v gnuplot > /dev/null || say "gnuplot is not installed (gnuplot-nox): samples kept, no plot"
fi
mkdir -p "$out/series"
case " $workloads " in *" redis "*)
	for p in redis-server redis-cli redis-benchmark; do
		command -v $p > /dev/null && continue
		say "$p is not installed (redis-server, redis-tools): redis skipped"
		workloads=$(echo " $workloads " | sed 's/ redis / /g')
		break
	done ;;
esac
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
# shellcheck disable=SC2016,SC2034
perl_prog='my %h; $h{$_} = "x" x 50 for 1..400000; print scalar(keys %h), "\n"'
# shellcheck disable=SC2034
python_prog='d = {}
for i in range(1500000):
    d[str(i)] = i
print(len(d), sum(d.values()))'
# shellcheck disable=SC2034
node_prog='const m = new Map();
for (let i = 0; i < 1000000; i++) m.set("key" + i, { a: i, b: "v" + (i * 7), c: [i, i + 1] });
let s = 0;
for (let r = 0; r < 3; r++) for (let i = 0; i < 1000000; i++) { const o = m.get("key" + ((i * 7919) % 1000000)); s += o.a + o.c[1]; }
console.log(m.size, s);'
# redis: the server is the command; its clients (wl_clients) run beside it.
# Its commands are made once into $out/redis (removed at the end), its
# socket and --dir are a temporary directory's.
rdata=$out/redis
rtmp=
# shellcheck disable=SC2034
rserver=$(command -v redis-server)
wl_cmd() {
	case "$1" in
	perl) echo /usr/bin/perl -e "\"\$perl_prog\"" ;;
	python) echo /usr/bin/python3 -c "\"\$python_prog\"" ;;
	node) echo /usr/bin/node -e "\"\$node_prog\"" ;;
	sort) echo /usr/bin/sort -n -o "\$outfile" "\$sortin" ;;
	redis) echo "\"\$rserver\" --port 0 --unixsocket \"\$rtmp/sock\" --save '' --appendonly no" \
		"--dir \"\$rtmp\" --enable-debug-command yes" ;;
	cmd) echo "$cmdline" ;;
	esac
}
# The default limit: about half the unlimited peak for redis.
wl_limit() {
	case "$1" in redis) echo 96M ;; cmd|node) echo ;; *) echo 64M ;; esac
}
# wl_clients WORKLOAD PID: the clients of a server workload, not preloaded,
# in this shell's memory cgroup, while PID (the server's job) lives; their
# stdout is the output compared.
wl_clients() {
	case "$1" in
	redis) env -u LD_PRELOAD /bin/sh "$here/tools/bench/bench_redis.sh" clients "$rdata" "$rtmp/sock" "$2" ;;
	*) return 0 ;;
	esac
}
case " $workloads " in *" sort "*)
	awk 'BEGIN { srand(5); for (i = 0; i < 2000000; i++) printf "%d\n", int(rand() * 1000000000) }' > "$sortin" ;;
esac
# On a signal during a server workload: its clients stopped, the server
# shut down (scripts/kernel-zswap.sh then restores as usual).
srvjob=
cjob=
on_signal() {
	[ -n "$cjob" ] && kill "$cjob" 2> /dev/null
	if [ -n "$srvjob" ]; then
		env -u LD_PRELOAD redis-cli -s "$rtmp/sock" shutdown nosave > /dev/null 2>&1
		wait "$srvjob"
	fi
	exit "$1"
}
case " $workloads " in *" redis "*)
	rtmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_real.XXXXXX") || exit 1
	trap 'rm -rf "$rtmp" "$rdata"/*.resp' EXIT
	trap 'on_signal 130' INT
	trap 'on_signal 143' TERM
	if ! { mkdir -p "$rdata" && env -u LD_PRELOAD /bin/sh "$here/tools/bench/bench_redis.sh" gen "$rdata"; }; then
		say "could not write redis's commands into $rdata"
		exit 1
	fi ;;
esac

# run WORKLOAD SIDE N: one run; appends "WORKLOAD SIDE N key=value..." to raw.
run() {
	w=$1 side=$2 n=$3
	outfile=$out/last.sorted
	rm -f "$out/last.ctl" "$outfile" "$out/last.stats"
	cmd=$(wl_cmd "$w")
	say "$w $side run $n"
	# shellcheck disable=SC2034
	tf="wall_s=%e user_s=%U sys_s=%S majflt=%F maxrss_kb=%M"
	# The side's environment: kernel-zswap.sh before time, the preload after.
	pre='' post=''
	case $side in
	libzswap*) post="env LD_PRELOAD=\"\$lib\" ZSWAP_MEMORY_LIMIT=\$L ZSWAP_STATS_AT_EXIT=1"
		[ "$side" = libzswapv1 ] && post="$post ZSWAP_MEMORY_CHARGE=v1"
		post="$post ZSWAP_STATS_FILE=\"\$out/last.stats\" $libenv" ;;
	kernel*) m=v2; [ "$side" = kernelv1 ] && m=v1
		[ -n "$kshrink" ] && pre="--shrinker \"\$kshrink\""
		[ "$side" = kernelswap ] && { m=v1; pre="--backend swap"; }
		pre="\"\$kz\" $pre --memcg \"\$L\" --page-cluster 0 --memcg-ctl \"\$ctl\" --memcg-report \"\$out/last.ctl\""
		pre="$pre --memcg-ctl-args \"--mode \$m --footprint \${foot:-0} \$ctlargs\" run --" ;;
	esac
	line="timeout -k 10 $tmo $pre /usr/bin/time -o \"\$out/last.time\" -f \"\$tf\" $post $cmd"
	crc=0 fig=
	rm -f "$out/last.cli"
	smp=
	[ $plot = 1 ] && [ "$n" = 1 ] && smp=$out/series/$w-$side.dat
	case $w in
	redis)	# The server in the background (its log to last.err), its
		# clients beside it (their stdout is the output compared).
		eval "$line" > "$out/last.err" 2>&1 &
		srvjob=$!
		[ -n "$smp" ] && sh "$here/tools/bench/bench_sample.sh" "$side" "$srvjob" "$smp" 0.2 "$zctl" &
		wl_clients "$w" "$srvjob" > "$out/last.out" 2> "$out/last.cli" &
		cjob=$!
		wait "$cjob"
		crc=$?
		cjob=
		wait "$srvjob"
		rc=$?
		srvjob=
		fig=$(sed -n 's/^bench_redis.sh: figures: //p' "$out/last.cli")
		[ $rc = 0 ] && [ $crc != 0 ] && { rc=$crc; say "$w $side run $n: the clients failed"; tail -n 3 "$out/last.cli" >&2; } ;;
	*) eval "$line" > "$out/last.out" 2> "$out/last.err" &
		job=$!
		[ -n "$smp" ] && sh "$here/tools/bench/bench_sample.sh" "$side" "$job" "$smp" 0.2 "$zctl" &
		wait "$job"
		rc=$? ;;
	esac
	wait	# the sampler
	[ "$w" = sort ] && [ -f "$outfile" ] && cat "$outfile" > "$out/last.out"
	sum=$(md5sum < "$out/last.out" | cut -c1-12)
	[ "$side" = none ] && [ "$n" = 1 ] && echo "$sum" > "$out/$w.ref"
	same=0
	[ "$sum" = "$(cat "$out/$w.ref" 2>/dev/null)" ] && same=1
	t=$(tail -n 1 "$out/last.time" 2>/dev/null | grep wall_s=)
	st=
	# Every process of the command line under the library writes a dump at
	# exit (a shell, a wrapper script such as pyenv's shim): the figures
	# are those of the dump with the most activity, the workload's.
	[ -f "$out/last.stats" ] && st=$(awk '
		/ statistics: pid / { if (cur != "" && act >= best) { best = act; keep = cur }; cur = ""; act = 0 }
		/^(refaults|pgscan|pgsteal|workingset_activate|allocstall|memory_events_max|stored_pages|pool_total_size|written_back_pages) / {
			cur = cur sprintf("%s=%s ", $1, $2) }
		/^(zswpout|refaults) / { act += $2 }
		/^# orig_data_size/ { mm = 1; next } mm { cur = cur sprintf("mem_used_max=%s ", $5); mm = 0 }
		END { if (cur != "" && act >= best) keep = cur; printf "%s", keep }' "$out/last.stats")
	ctlf=
	[ -f "$out/last.ctl" ] && ctlf=$(sed -n 's/^MEMCG //p' "$out/last.ctl" | sed 's/\([a-z_0-9]*\)=/ctl_\1=/g')
	oom=0
	grep -q 'OOM killer: ' "$out/last.err" && oom=1
	echo "$w $side $n rc=$rc crc=$crc oom=$oom same=$same limit=$L $t $fig $st $ctlf" >> "$raw"
	[ "$side" = none ] && [ "$n" = 1 ] &&
		foot=$(( $(echo "$t" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p') / 1024 ))M
	# cmd without --limit: 60 % of the unlimited peak.
	[ "$side" = none ] && [ "$n" = 1 ] && [ -z "$L" ] &&
		L=$(( $(echo "$t" | sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p') * 60 / 100 / 1024 ))M
	[ $rc = 0 ] || { say "$w $side run $n: exit $rc$([ $oom = 1 ] && echo ' (OOM kill)')"; tail -n 3 "$out/last.err" >&2; }
	cat "$out/last.err" >> "$out/stderr.txt"
	[ -f "$out/last.cli" ] && cat "$out/last.cli" >> "$out/stderr.txt"
	[ -f "$out/last.stats" ] && cat "$out/last.stats" >> "$out/stats.txt"
}

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "limit ${limit:-per workload (perl, python, sort 64M; redis 96M; node, cmd 60 % of the unlimited peak)}, runs $runs, workloads: $workloads; kernel modes: $kmodes (kernel side $([ $kernel_ok = 1 ] && echo on || echo off), controller args: $ctlargs, zswap shrinker ${kshrink:-as set: $(cat /sys/module/zswap/parameters/shrinker_enabled 2>/dev/null)})"
	echo "libzswap: $lib${libenv:+ $libenv}, other options default"
	echo "tree: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)$(git -C "$here" status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"
	echo "perl: $(/usr/bin/perl -e 'print $^V'), python: $(/usr/bin/python3 -V 2>&1), sort: $(/usr/bin/sort --version | head -n 1)"
	case " $workloads " in *" node "*) echo "node: $(node --version)" ;; esac
	case " $workloads " in *" redis "*) echo "redis: $(redis-server --version)" ;; esac
} > "$out/machine.txt"
cat "$out/machine.txt" >&2

for w in $workloads; do
	# shellcheck disable=SC2034
	foot=
	L=${limit:-$(wl_limit "$w")}
	i=1
	while [ $i -le "$runs" ]; do
		run "$w" none $i
		if [ $kernel_ok = 1 ]; then
			for m in $kmodes; do
				case $m in v2) run "$w" kernel $i ;; v1) run "$w" kernelv1 $i ;;
				swap) run "$w" kernelswap $i ;; esac
			done
		fi
		if [ $libside = 1 ]; then
			for c in $charges; do
				case $c in v2) run "$w" libzswap $i ;; v1) run "$w" libzswapv1 $i ;; esac
			done
		fi
		i=$((i + 1))
	done
done

# The tables: medians and spreads (min-max) per workload and side, then
# the ratios libzswap / kernel of the medians.
awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v kshrink="${kshrink:-as the machine has it}" '
function val(line, key,   m) { if (match(line, " " key "=[^ ]*")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2); return "" }
function add(k, key, v) { if (v == "") return; n[k, key]++; x[k, key, n[k, key]] = v + 0 }
function sortk(k, key,   i, j, t, c) { c = n[k, key]; for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (x[k, key, j] < x[k, key, i]) { t = x[k, key, i]; x[k, key, i] = x[k, key, j]; x[k, key, j] = t } return c }
function medv(k, key,   c) { c = sortk(k, key); if (!c) return ""; return c % 2 ? x[k, key, (c + 1) / 2] : (x[k, key, c / 2] + x[k, key, c / 2 + 1]) / 2 }
function med(k, key, f,   v) { v = medv(k, key); return v == "" ? "-" : sprintf(f, v) }
function spread(k, key, f,   c) { c = sortk(k, key); if (!c) return "-"; return sprintf(f, x[k, key, 1]) "-" sprintf(f, x[k, key, c]) }
function ratio(a, b, key,   u, v) { u = medv(a, key); v = medv(b, key); return (u == "" || v == "" || v == 0) ? "-" : sprintf("%.2f", u / v) }
{
	k = $1 SUBSEP $2
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	if (!($1 in lim)) { lim[$1] = ""; worder[++nw] = $1 }
	if (lim[$1] == "") lim[$1] = val($0, "limit")
	runs[k]++
	if (val($0, "rc") != "0") { failed[k]++; if (val($0, "oom") == "1") oom[k]++; next }
	ok[k]++; if (val($0, "same") != "1") diff[k]++
	add(k, "wall", val($0, "wall_s"))
	add(k, "rps", val($0, "rps"))
	if ($2 ~ /^libzswap/) { add(k, "peak", val($0, "maxrss_kb") / 1024); add(k, "ref", val($0, "refaults"))
		if (val($0, "mem_used_max") != "") add(k, "pool", val($0, "mem_used_max") / 1048576) }
	else if ($2 ~ /^kernel/) { add(k, "peak", val($0, "ctl_peak_sum_mb")); add(k, "ref", val($0, "majflt")); add(k, "pool", val($0, "ctl_peak_pool_mb")) }
	else { add(k, "peak", val($0, "maxrss_kb") / 1024); add(k, "ref", val($0, "majflt")) }
}
END {
	print "| workload, limit | side | runs ok / runs | wall s, median (spread) | requests/s, median (spread) | peak MiB, median (spread) | pool peak MiB | refaults, median (spread) | output as unlimited |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, p, SUBSEP)
		note = failed[k] ? sprintf(" (%d failed%s)", failed[k], oom[k] ? sprintf(", %d OOM-killed", oom[k]) : "") : ""
		printf "| %s, %s | %s | %d / %d%s | %s (%s) | %s (%s) | %s (%s) | %s | %s (%s) | %s |\n", p[1], lim[p[1]], p[2], ok[k], runs[k], note,
		       med(k, "wall", "%.2f"), spread(k, "wall", "%.2f"), med(k, "rps", "%d"), spread(k, "rps", "%d"),
		       med(k, "peak", "%.1f"), spread(k, "peak", "%.1f"), med(k, "pool", "%.1f"),
		       med(k, "ref", "%d"), spread(k, "ref", "%d"), ok[k] ? (diff[k] ? "DIFFERENT in " diff[k] : "yes") : "-"
	}
	hdr = 0
	for (i = 1; i <= nk; i++) {
		l = order[i]; split(l, q, SUBSEP)
		if (q[2] !~ /^libzswap/ || !ok[l]) continue
		for (j = 1; j <= nk; j++) {
			k = order[j]; split(k, p, SUBSEP)
			if (p[1] != q[1] || p[2] !~ /^kernel/ || !ok[k]) continue
			if (!hdr++) {
				print ""
				print "| workload | side / side | wall | requests/s | peak | refaults |"
				print "|---|---|---|---|---|---|"
			}
			printf "| %s | %s / %s | %s | %s | %s | %s |\n", q[1], q[2], p[2], ratio(l, k, "wall"), ratio(l, k, "rps"), ratio(l, k, "peak"), ratio(l, k, "ref")
		}
	}
	print ""
	print "peak: none = peak RSS, libzswap = peak RSS (pool included), kernel = usage + pool (sampled); requests/s: redis'"'"'s timed phase"
	print "charging of the pool: kernel = cgroup v2'"'"'s, emulated (the v1 group'"'"'s limit kept at L minus its share of the pool), kernelv1 = v1'"'"'s (none), kernelswap = no pool (swap alone, zswap off), libzswap = v2'"'"'s (ZSWAP_MEMORY_CHARGE=v2), libzswapv1 = v1'"'"'s (ZSWAP_MEMORY_CHARGE=v1); zswap'"'"'s shrinker on the kernel side: " kshrink
	print "load average at the end: " load
}' "$raw" > "$out/summary.md"
cat "$out/summary.md"
say "raw figures in $raw, table in $out/summary.md"

# The plots: per workload, resident memory, the pool and the refault rate
# of each side's first run over time.
if [ $plot = 1 ] && command -v gnuplot > /dev/null; then
	for w in $workloads; do
		files=$(ls "$out/series/$w-"*.dat 2> /dev/null) || continue
		# Refault rate a second from the cumulative count.
		for f in $files; do
			awk 'NR > 1 && $1 > t && $4 >= r { printf "%s %s %s %.0f\n", $1, $2, $3, ($4 - r) / ($1 - t) } { t = $1; r = $4 }' "$f" > "$f.rate"
		done
		{
			echo "set terminal pngcairo size 1200,1000 noenhanced font ',10'"
			echo "set output '$out/$w.png'"
			echo "set multiplot layout 3,1 title \"$w under $(sed -n "s/^$w [a-z0-9]* 1 .* limit=\([^ ]*\) .*/\1/p" "$raw" | grep . | head -n 1): the first run of each side\""
			echo "set key outside right; set grid; set xlabel 'seconds'"
			for panel in "2:resident MiB (libzswap: VmRSS less the pool)" "3:pool MiB" "4:refaults a second"; do
				col=${panel%%:*}
				echo "set ylabel '${panel#*:}'"
				printf 'plot'
				sep=' '
				for f in $files; do
					s=$(basename "$f" .dat); s=${s#"$w"-}
					printf "%s'%s.rate' using 1:%s with lines lw 2 title '%s'" "$sep" "$f" "$col" "$s"
					sep=', '
				done
				echo
			done
			echo "unset multiplot"
		} > "$out/series/$w.gp"
		gnuplot "$out/series/$w.gp" && say "plot: $out/$w.png"
	done
fi
