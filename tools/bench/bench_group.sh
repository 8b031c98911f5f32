#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_group.sh - a process tree under one memory limit: libzswap's group
# (ZSWAP_MEMORY_SCOPE=tree, the default) against the same tree in a kernel
# memory cgroup (v1) of the same limit with the swapfile alone (zswap off:
# RAM bounded the same way on both sides, scripts/kernel-zswap.sh --backend
# swap, page-cluster 0), and the tree alone. A benchmark, not a test: it
# prints figures and judges none (but says when an output differs from the
# unlimited run's).
#
# The tree is tests/engine/group_pool.py (a multiprocessing Pool of four
# workers, each building and checking RECORDS records of 0.6-3 KiB) or any
# command given with --cmd. Figures per side: wall time, CPU (user + system,
# the tree's: /usr/bin/time counts the descendants the command waited for),
# the tree's peak memory and faults:
#   none, libzswap  the sum of the tree's Pss less its file pages, sampled
#                   every 0.2 s (tests/engine/group_tree.py: a page two
#                   processes share counts once, as a memory cgroup charges it)
#   kernel          the group's usage, sampled every millisecond
#                   (tools/bench/bench_reclaim_memcg --mode v1), and its
#                   memory.max_usage_in_bytes
#   refaults        libzswap: the group's (memory.stat.pgmajfault of the
#                   dumps at exit: every member's, those gone included);
#                   kernel and none: the tree's major faults
#
# Usage: tools/bench/bench_group.sh [--limit L] [--method fork|forkserver]
#            [--records N] [--runs N] [--cmd "COMMAND ARGS"] [--cpu N]
#            [--scope tree|process] [--no-kernel] [--timeout S]
#            [--builddir DIR] [--out DIR]
# Defaults: L 48M, fork, 16000 records (the tree's data about three times
# L), 1 run, the build directory's library. Each run ends after S seconds
# (300) with rc=124: a Pool whose worker the kernel OOM-killed waits for it
# forever (oom_kill says so). --cpu N pins every side to CPU N
# (taskset): the work without the machine's cross-CPU wake-ups. Root for
# the kernel side.
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
limit=48M method=fork records=16000 runs=1 cmd= cpu= scope=tree kernel=1 tmo=300
builddir=. out=

while [ $# -gt 0 ]; do
	case $1 in
	--limit) limit=$2; shift ;;
	--method) method=$2; shift ;;
	--records) records=$2; shift ;;
	--runs) runs=$2; shift ;;
	--cmd) cmd=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--scope) scope=$2; shift ;;
	--no-kernel) kernel=0 ;;
	--timeout) tmo=$2; shift ;;
	--builddir) builddir=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_group.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done

lib=$(cd "$builddir" && pwd)/.libs/libzswap.so
ctl=$(cd "$builddir" && pwd)/tools/bench/bench_reclaim_memcg
kz=$here/scripts/kernel-zswap.sh
tree=$here/tests/engine/group_tree.py
[ -f "$lib" ] || { echo "bench_group.sh: $lib is not built (--builddir)" >&2; exit 2; }
[ -n "$cmd" ] || cmd="/usr/bin/python3 $here/tests/engine/group_pool.py $method $records"
if [ $kernel = 1 ] && { [ "$(id -u)" != 0 ] || [ ! -x "$ctl" ]; }; then
	echo "bench_group.sh: the kernel side needs root and $ctl: left out" >&2
	kernel=0
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/bench_group.XXXXXX)
mkdir -p "$out"
pin=
[ -n "$cpu" ] && pin="taskset -c $cpu"
tf="wall_s=%e user_s=%U sys_s=%S majflt=%F"

say() { echo "bench_group.sh: $*" >&2; }

# run SIDE N: one run; prints "SIDE N key=value ...".
run() {
	side=$1 n=$2 pre= env= st=$out/stats.$1.$2
	rm -rf "$st" "$out/ctl"
	case $side in
	libzswap) mkdir -p "$st"
		env="env LD_PRELOAD=$lib ZSWAP_MEMORY_LIMIT=$limit ZSWAP_MEMORY_SCOPE=$scope ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE=$st/st.%p" ;;
	kernel) pre="$kz --backend swap --page-cluster 0 --memcg $limit --memcg-ctl $ctl --memcg-report $out/ctl" ;;
	esac
	if [ "$side" = kernel ]; then
		# shellcheck disable=SC2086
		$pre --memcg-ctl-args "--mode v1" run -- timeout -k 5 "$tmo" $pin /usr/bin/time -o "$out/time" -f "$tf" \
			/usr/bin/python3 "$tree" $cmd >"$out/out" 2>"$out/err"
	else
		# shellcheck disable=SC2086
		timeout -k 5 "$tmo" $pin /usr/bin/time -o "$out/time" -f "$tf" /usr/bin/python3 "$tree" $env $cmd >"$out/out" 2>"$out/err"
	fi
	rc=$?
	[ $rc = 124 ] && : >"$out/time"	# killed: no times
	sum=$(md5sum <"$out/out" | cut -c1-12)
	[ "$side" = none ] && [ "$n" = 1 ] && echo "$sum" >"$out/ref"
	same=no
	[ "$sum" = "$(cat "$out/ref" 2>/dev/null)" ] && same=yes
	peak=$(sed -n 's/^group_tree: peak_kb=\([0-9]*\).*/\1/p' "$out/err")
	procs=$(sed -n 's/^group_tree: .*procs=\([0-9]*\).*/\1/p' "$out/err")
	line="$side $n rc=$rc same=$same $(tail -n 1 "$out/time") peak_kb=${peak:-?} procs=${procs:-?}"
	if [ "$side" = libzswap ]; then
		ref=$(cat "$st"/st.* 2>/dev/null | awk '/^memory.stat.pgmajfault / && $2 > m { m = $2 } END { print m + 0 }')
		wb=$(cat "$st"/st.* 2>/dev/null | awk '/^written_back_pages / { s += $2 } END { print s + 0 }')
		line="$line refaults=$ref written_back_pages=$wb dumps=$(ls "$st" | wc -l)"
	fi
	if [ "$side" = kernel ]; then
		m=$(grep '^MEMCG' "$out/ctl" 2>/dev/null)
		pk=$(echo "$m" | sed -n 's/.* peak_usage_mb=\([0-9.]*\).*/\1/p')
		mu=$(echo "$m" | sed -n 's/.* max_usage_mb=\([0-9.]*\).*/\1/p')
		oom=$(echo "$m" | sed -n 's/.* oom_kill=\([0-9]*\).*/\1/p')
		line="$line memcg_peak_mb=${pk:-?} max_usage_mb=${mu:-?} oom_kill=${oom:-?}"
	fi
	echo "$line"
	[ $rc = 0 ] || { say "$side run $n: exit $rc"; tail -n 5 "$out/err" >&2; }
}

say "limit $limit, scope $scope, ${pin:-unpinned}, runs $runs: $cmd (raw in $out)"
for n in $(seq "$runs"); do
	run none "$n"
	run libzswap "$n"
	[ $kernel = 1 ] && run kernel "$n"
done | tee "$out/raw"
