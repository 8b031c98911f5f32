#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A forking database server nobody here wrote, run as users run it: Debian's
# PostgreSQL 15, as an unprivileged user (nobody) in a scratch cluster on a
# unix socket, forks a backend per connection. The same work goes to it
# without the library and with ZSWAP_MEMORY_LIMIT=48M given to the server
# (one limit for its whole tree: the postmaster and every backend share
# it, a group): pgbench -i, then pgbench with 4 clients
# and a fixed seed (every transaction succeeds), then queries whose answers
# must equal the plain run's: the balances (pgbench's updates add up the
# same whatever the clients' interleaving), a sort and a hash aggregate with
# work_mem high, and a temporary table of some 40 MiB in temp_buffers,
# written once and read back: a backend's private memory, beside the
# server's shared buffers (shared memory, which the library does not
# manage; 16 MiB of them keeps what a backend maps well under its limit:
# test_eng_reclaim_shared.sh is the case where it does not).
#
# User nobody gets no userfaultfd on a machine left as Debian sets it up
# (vm.unprivileged_userfaultfd=0, /dev/userfaultfd root's only): the
# library's server is given CAP_DAC_OVERRIDE, which opens /dev/userfaultfd
# to it as a group given the device would, without changing the machine,
# and nothing else. So it has no CAP_SYS_PTRACE and no fork events: each
# backend starts a libzswap of its own (src/shim/start.c), which this run
# checks in the per-process logs (ZSWAP_VERBOSE says it), with at least one
# backend's dump at exit showing pages stored and loaded back, none
# poisoned, no failed read (a library silently not loaded fails). The
# server's own log must hold no libzswap: line and nothing of a backend
# that crashed.
# Skipped without PostgreSQL 15's binaries (Debian's postgresql-15), root,
# setpriv, or both /dev/userfaultfd and vm.unprivileged_userfaultfd=1.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

pgbin=/usr/lib/postgresql/15/bin
for p in initdb postgres pg_ctl pgbench psql; do
	[ -x "$pgbin/$p" ] || eng_skip "$pgbin/$p is not installed (postgresql-15)"
done
[ "$(id -u)" = 0 ] || eng_skip "needs root (the server runs as user nobody)"
command -v setpriv >/dev/null 2>&1 || eng_skip "setpriv(1) is missing (util-linux)"
[ -c /dev/userfaultfd ] || [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 1 ] ||
	eng_skip "no /dev/userfaultfd and vm.unprivileged_userfaultfd=0: nothing gives user nobody a userfaultfd without CAP_SYS_PTRACE"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "test -r '$ENG_LIB'" ||
	eng_skip "user nobody cannot read $ENG_LIB (build directory not world-readable)"

ENG_TIMEOUT=300
limit=48M
scale=2
tx=250
seed=20240
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
# What a user does to let an unprivileged server open /dev/userfaultfd.
uffd_cap="--inh-caps=+dac_override --ambient-caps=+dac_override"
pg=$ENG_TMP/pg
mkdir -p "$pg"
chown 65534:65534 "$pg"

# Every server this test started is stopped on every exit path.
pg_cleanup() {
	for d in "$pg"/*/data; do
		[ -f "$d/postmaster.pid" ] && $nobody "$pgbin/pg_ctl" -D "$d" stop -m immediate >/dev/null 2>&1
	done
	[ -n "${pg_wait:-}" ] && kill "$pg_wait" 2>/dev/null
	rm -rf "$ENG_TMP"
}
trap pg_cleanup EXIT
trap 'exit 1' INT TERM HUP

# One cluster, copied for each run: initdb is the slowest part.
timeout -k 5 120 $nobody "$pgbin/initdb" -D "$pg/init" -U postgres -A trust -E UTF8 --locale=C --no-sync \
	>"$ENG_TMP/initdb.log" 2>&1 || {
	tail -n 5 "$ENG_TMP/initdb.log" >&2
	eng_fail "initdb failed"
	eng_finish
}

cat >"$ENG_TMP/final.sql" <<'EOF'
SELECT sum(abalance), count(*), md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)) FROM pgbench_accounts;
SELECT sum(tbalance), md5(string_agg(tid || ':' || tbalance, ',' ORDER BY tid)) FROM pgbench_tellers;
SELECT sum(bbalance), md5(string_agg(bid || ':' || bbalance, ',' ORDER BY bid)) FROM pgbench_branches;
SELECT count(*) FROM pgbench_history;
SET work_mem = '256MB';
SET temp_buffers = '128MB';
SELECT md5(string_agg(k, ',' ORDER BY k)), count(*) FROM (SELECT md5(aid || ':' || abalance) AS k FROM pgbench_accounts WHERE aid <= 100000) s;
SELECT count(*), sum(c), md5(string_agg(g || ':' || c, ',' ORDER BY g)) FROM (SELECT aid % 100003 AS g, count(*) AS c FROM pgbench_accounts GROUP BY 1) h;
CREATE TEMP TABLE t AS SELECT aid, abalance, repeat(md5(aid || ':' || abalance), 4) AS pad FROM pgbench_accounts;
SELECT count(*), sum(abalance), md5(string_agg(pad, ',' ORDER BY aid)) FROM t WHERE aid % 7 = 3;
SELECT count(*), sum(length(pad)), sum(abalance) FROM t;
EOF

now_ms() { echo $(($(date +%s%N) / 1000000)); }

pgc() {
	pgc_p=$1
	shift
	timeout -k 5 "$ENG_TIMEOUT" "$pgc_p" -h "$pg_dir" -p 5432 -U postgres "$@"
}

# pg_session LABEL PREFIX...: a cluster of its own in $pg/LABEL, a server
# started through PREFIX (as nobody, with or without the library), the
# work, the answers into $ENG_TMP/LABEL.final, a fast shutdown.
pg_session() {
	pg_label=$1
	shift
	pg_dir=$pg/$pg_label
	mkdir -p "$pg_dir/stats"
	cp -a "$pg/init" "$pg_dir/data"
	chown -R 65534:65534 "$pg_dir"
	t0=$(now_ms)
	timeout -k 5 "$ENG_TIMEOUT" "$@" "$pgbin/postgres" -D "$pg_dir/data" -k "$pg_dir" -p 5432 \
		-c listen_addresses= -c fsync=off -c huge_pages=off -c shared_buffers=16MB \
		-c max_parallel_workers_per_gather=0 -c autovacuum=off >"$pg_dir/log" 2>&1 &
	pg_wait=$!
	for _ in $(seq 1 300); do
		"$pgbin/pg_isready" -q -h "$pg_dir" -p 5432 && break
		kill -0 "$pg_wait" 2>/dev/null || break
		sleep 0.1
	done
	if ! "$pgbin/pg_isready" -q -h "$pg_dir" -p 5432; then
		eng_fail "$pg_label: the server did not start: $(tail -n 5 "$pg_dir/log")"
		return 1
	fi
	pgc "$pgbin/pgbench" -i -s "$scale" -q postgres >"$pg_dir/init.out" 2>&1 ||
		eng_fail "$pg_label: pgbench -i failed: $(tail -n 3 "$pg_dir/init.out")"
	t1=$(now_ms)
	pgc "$pgbin/pgbench" -c 4 -j 2 -t "$tx" --random-seed="$seed" postgres >"$pg_dir/bench.out" 2>&1 ||
		eng_fail "$pg_label: pgbench exited with $?: $(tail -n 3 "$pg_dir/bench.out")"
	grep -q "^number of transactions actually processed: $((4 * tx))/$((4 * tx))\$" "$pg_dir/bench.out" &&
		grep -q '^number of failed transactions: 0 ' "$pg_dir/bench.out" ||
		eng_fail "$pg_label: pgbench: $(grep -E '^number of' "$pg_dir/bench.out" | tr '\n' ' ')"
	t2=$(now_ms)
	pgc "$pgbin/psql" -X -At -v ON_ERROR_STOP=1 -f "$ENG_TMP/final.sql" postgres \
		>"$ENG_TMP/$pg_label.final" 2>"$pg_dir/final.err" ||
		eng_fail "$pg_label: the final queries failed: $(tail -n 3 "$pg_dir/final.err")"
	t3=$(now_ms)
	timeout -k 5 120 $nobody "$pgbin/pg_ctl" -D "$pg_dir/data" stop -m fast -w -t 100 >/dev/null 2>&1 ||
		eng_fail "$pg_label: pg_ctl stop -m fast failed"
	wait "$pg_wait"
	rc=$?
	pg_wait=
	[ "$rc" = 0 ] || eng_fail "$pg_label: the server exited with $(eng_status "$rc")"
	t4=$(now_ms)
	eng_say "$pg_label: $((t4 - t0)) ms (start and pgbench -i $((t1 - t0)), pgbench $((t2 - t1)), queries $((t3 - t2)), shutdown $((t4 - t3)))"
	if grep -E 'terminated by signal|PANIC|server process .* exited with exit code [^0]' "$pg_dir/log" >&2; then
		eng_fail "$pg_label: a server process failed (its log above)"
	fi
	n=$(eng_count_libzswap "$pg_dir/log")
	[ "$n" = 0 ] || eng_fail "$pg_label: $n libzswap: line(s) in the server's log"
}

pg_session plain $nobody env -u LD_PRELOAD
pg_session lib $nobody $uffd_cap env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_MEMORY_LIMIT=$limit \
	ZSWAP_VERBOSE=1 ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$pg/lib/stats/stats.%p" \
	ZSWAP_LOG_FILE="$pg/lib/stats/log.%p"

[ -s "$ENG_TMP/plain.final" ] || eng_fail "plain: the final queries answered nothing"
if ! cmp -s "$ENG_TMP/plain.final" "$ENG_TMP/lib.final"; then
	eng_fail "the answers differ from the plain run's"
	diff "$ENG_TMP/plain.final" "$ENG_TMP/lib.final" >&2
fi

# The backends: each started a libzswap of its own (no fork events without
# CAP_SYS_PTRACE), and one at least stored pages and loaded them back.
starts=$(grep -l 'fork: this child starts a libzswap of its own' "$pg"/lib/stats/log.* 2>/dev/null | wc -l)
[ "$starts" -ge 5 ] ||
	eng_fail "lib: $starts of the server's children started a libzswap of their own, expected every backend (5 or more)"
busy=0
dumps=0
most=
for f in "$pg"/lib/stats/stats.*; do
	[ -f "$f" ] || continue
	grep -q '^libzswap .* statistics: pid .*(exit)' "$f" || continue
	dumps=$((dumps + 1))
	out=$(eng_dump_stat "$f" zswpout)
	back=$(eng_dump_stat "$f" refaults)
	if [ "${out:-0}" -gt 0 ] && [ "${back:-0}" -gt 0 ]; then
		busy=$((busy + 1))
		most="$most; $(basename "$f"): $out stored, $back loaded back"
	fi
	for c in poisoned_pages bd_read_fail decompress_fail; do
		v=$(eng_dump_stat "$f" $c)
		[ "${v:-0}" = 0 ] || eng_fail "lib: $c is $v in $(basename "$f")"
	done
done
eng_say "lib: $starts processes started a libzswap of their own, $dumps dumps at exit, $busy of them with pages stored and loaded back$most"
# One limit for the server's whole tree: every process that dumped at exit
# was a member of one group, whose memory.max is the limit given.
tokens=$(for f in "$pg"/lib/stats/stats.*; do sed -n 's/^token=//p' "$f" | tail -n 1; done | sort -u)
ntok=$(printf '%s\n' "$tokens" | grep -c .)
[ "$ntok" = 1 ] || eng_fail "lib: the server's processes are in $ntok groups, expected one (tokens: $(echo $tokens))"
gmax=$(for f in "$pg"/lib/stats/stats.*; do eng_dump_stat "$f" memory.max; done | sort -u)
[ "$gmax" = $((48 << 20)) ] || eng_fail "lib: the group's memory.max is '$(echo $gmax)', expected $((48 << 20))"
[ "$busy" -ge 1 ] || eng_fail "lib: no process's dump at exit shows a page stored and loaded back: the library managed nothing"
eng_finish
