#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_postgres.sh - a forking database server under one memory limit:
# Debian's PostgreSQL 15 (a backend process per connection) with libzswap's
# group (the server's whole tree under ZSWAP_MEMORY_LIMIT) against the same
# server in a kernel memory cgroup (v1) of the same limit with the swapfile
# alone (zswap off: RAM bounded the same way on both sides,
# scripts/kernel-zswap.sh --backend swap, page-cluster 0), and the server
# alone. A benchmark, not a test: it prints figures and judges none, but says
# when the final queries' answers differ from the unlimited run's.
#
# The work is tests/engine/test_eng_postgres.sh's, larger: a scratch cluster
# as user nobody on a unix socket, shared_buffers 16MB, pgbench -i -s SCALE,
# pgbench with 4 clients and a fixed seed, then queries with work_mem and
# temp_buffers high (a sort, a hash aggregate, a temporary table of the
# accounts padded: a backend's private memory). The clients run outside the
# limit, as a server's clients do. Figures per side: the server's wall time
# from the first pgbench to the last answer, pgbench's tps, and the server
# tree's peak:
#   none, libzswap  the sum of the tree's Pss less its file pages, sampled
#                   every 0.2 s (tests/engine/group_tree.py)
#   kernel          the group's usage, sampled every millisecond
#                   (tools/bench/bench_reclaim_memcg --mode v1)
# and, for libzswap, the group's own memory.peak (the highest charge its
# members summed: what the limit holds); and its faults: libzswap's group
# memory.stat.pgmajfault (the dumps at exit), the kernel's tree's major
# faults.
#
# The library's server opens /dev/userfaultfd through CAP_DAC_OVERRIDE
# given as an ambient capability (what a group given the device would
# allow), as the test does: user nobody gets no userfaultfd otherwise.
#
# Usage: tools/bench/bench_postgres.sh [--limit L] [--scale N] [--tx N]
#            [--runs N] [--cpu N] [--no-kernel] [--builddir DIR] [--out DIR]
# Defaults: L 48M, scale 8 (a database of about 120 MiB), 1000 transactions
# a client, 1 run. --cpu N pins the server (and its clients) to CPU N. Root.
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
limit=48M scale=8 tx=1000 runs=1 cpu= kernel=1 builddir=. out=
while [ $# -gt 0 ]; do
	case $1 in
	--limit) limit=$2; shift ;;
	--scale) scale=$2; shift ;;
	--tx) tx=$2; shift ;;
	--runs) runs=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	--no-kernel) kernel=0 ;;
	--builddir) builddir=$2; shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench_postgres.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done

say() { echo "bench_postgres.sh: $*" >&2; }
pgbin=/usr/lib/postgresql/15/bin
for p in initdb postgres pg_ctl pgbench psql pg_isready; do
	[ -x "$pgbin/$p" ] || { say "$pgbin/$p is not installed (postgresql-15)"; exit 2; }
done
[ "$(id -u)" = 0 ] || { say "needs root (the server runs as user nobody)"; exit 2; }
lib=$(cd "$builddir" && pwd)/.libs/libzswap.so
ctl=$(cd "$builddir" && pwd)/tools/bench/bench_reclaim_memcg
[ -f "$lib" ] || { say "$lib is not built (--builddir)"; exit 2; }
[ -x "$ctl" ] || kernel=0
[ -n "$out" ] || out=$(mktemp -d /tmp/bench_postgres.XXXXXX)
mkdir -p "$out"
chmod 755 "$out"
pin=
[ -n "$cpu" ] && pin="taskset -c $cpu"
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
uffd_cap="--inh-caps=+dac_override --ambient-caps=+dac_override"
kz=$here/scripts/kernel-zswap.sh
tree=$here/tests/engine/group_tree.py
now_ms() { echo $(($(date +%s%N) / 1000000)); }

rm -rf "$out/init"
mkdir -p "$out/init"
chown 65534:65534 "$out/init"
$nobody "$pgbin/initdb" -D "$out/init" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$out/initdb.log" 2>&1 ||
	{ say "initdb failed: $(tail -n 3 "$out/initdb.log")"; exit 1; }
sed -n '/^cat >"$ENG_TMP\/final.sql" <<.EOF.$/,/^EOF$/p' "$here/tests/engine/test_eng_postgres.sh" | sed '1d; $d' >"$out/final.sql"
[ -s "$out/final.sql" ] || { say "the final queries were not found in tests/engine/test_eng_postgres.sh"; exit 1; }

# run SIDE N: one server, the work, its figures as "SIDE N key=value ...".
run() {
	side=$1 n=$2 d=$out/$1.$2
	rm -rf "$d" "$out/ctl"
	mkdir -p "$d/stats"
	cp -a "$out/init" "$d/data"
	chown -R 65534:65534 "$d"
	server="$pgbin/postgres -D $d/data -k $d -p 5432 -c listen_addresses= -c fsync=off -c huge_pages=off
		-c shared_buffers=16MB -c max_parallel_workers_per_gather=0 -c autovacuum=off"
	# shellcheck disable=SC2086
	case $side in
	none) $pin /usr/bin/python3 "$tree" $nobody env -u LD_PRELOAD $server >"$d/log" 2>&1 & ;;
	libzswap) $pin /usr/bin/python3 "$tree" $nobody $uffd_cap env LD_PRELOAD="$lib" ZSWAP_MEMORY_LIMIT="$limit" \
		ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$d/stats/st.%p" $server >"$d/log" 2>&1 & ;;
	kernel) $kz --backend swap --page-cluster 0 --memcg "$limit" --memcg-ctl "$ctl" --memcg-report "$out/ctl" \
		--memcg-ctl-args "--mode v1" run -- $pin /usr/bin/time -o "$d/time" -f "majflt=%F" \
		$nobody $server >"$d/log" 2>&1 & ;;
	esac
	srv=$!
	for _ in $(seq 1 600); do
		"$pgbin/pg_isready" -q -h "$d" -p 5432 && break
		sleep 0.1
	done
	pgc() { p=$1; shift; $pin "$pgbin/$p" -h "$d" -p 5432 -U postgres "$@"; }
	t0=$(now_ms)
	pgc pgbench -i -s "$scale" -q postgres >"$d/init.out" 2>&1
	t1=$(now_ms)
	pgc pgbench -c 4 -j 2 -t "$tx" --random-seed=20240 postgres >"$d/bench.out" 2>&1
	t2=$(now_ms)
	pgc psql -X -At -v ON_ERROR_STOP=1 -f "$out/final.sql" postgres >"$d/final" 2>"$d/final.err"
	t3=$(now_ms)
	$nobody "$pgbin/pg_ctl" -D "$d/data" stop -m fast -w -t 100 >/dev/null 2>&1
	wait "$srv"
	sum=$(md5sum <"$d/final" | cut -c1-12)
	[ "$side" = none ] && [ "$n" = 1 ] && echo "$sum" >"$out/ref"
	same=no
	[ "$sum" = "$(cat "$out/ref" 2>/dev/null)" ] && [ -s "$d/final" ] && same=yes
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$d/bench.out" | head -n 1)
	ok=$(grep -c "^number of transactions actually processed: $((4 * tx))/$((4 * tx))\$" "$d/bench.out")
	line="$side $n same=$same pgbench_ok=$ok init_s=$(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100))"
	line="$line bench_s=$(((t2 - t1) / 1000)).$(((t2 - t1) % 1000 / 100)) tps=${tps:-?}"
	line="$line queries_s=$(((t3 - t2) / 1000)).$(((t3 - t2) % 1000 / 100)) work_s=$(((t3 - t0) / 1000)).$(((t3 - t0) % 1000 / 100))"
	case $side in
	none|libzswap)
		peak=$(sed -n 's/^group_tree: peak_kb=\([0-9]*\).*/\1/p' "$d/log")
		line="$line peak_kb=${peak:-?}" ;;
	kernel)
		m=$(grep '^MEMCG' "$out/ctl" 2>/dev/null)
		line="$line memcg_peak_mb=$(echo "$m" | sed -n 's/.* peak_usage_mb=\([0-9.]*\).*/\1/p')"
		line="$line oom_kill=$(echo "$m" | sed -n 's/.* oom_kill=\([0-9]*\).*/\1/p') $(cat "$d/time" 2>/dev/null | tail -n 1)" ;;
	esac
	if [ "$side" = libzswap ]; then
		ref=$(cat "$d"/stats/st.* 2>/dev/null | awk '/^memory.stat.pgmajfault / && $2 > m { m = $2 } END { print m + 0 }')
		gpeak=$(cat "$d"/stats/st.* 2>/dev/null | awk '/^memory.peak / && $2 > m { m = $2 } END { print int(m / 1024) }')
		line="$line group_peak_kb=$gpeak refaults=$ref dumps=$(ls "$d/stats" | wc -l)"
	fi
	echo "$line"
	grep -E 'terminated by signal|PANIC' "$d/log" >&2 && say "$side run $n: a server process failed"
}

say "limit $limit, scale $scale, $tx transactions x 4 clients, ${pin:-unpinned}, runs $runs (raw in $out)"
for n in $(seq "$runs"); do
	run none "$n"
	run libzswap "$n"
	[ $kernel = 1 ] && run kernel "$n"
done | tee "$out/raw"
