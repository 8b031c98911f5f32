#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A real server nobody here wrote, with a fork child of its own, ends with
# the same data under a limit its data cannot compress into. Debian's
# redis-server holds about 150 MiB of random values under
# ZSWAP_MEMORY_LIMIT=48M, a fifth of its peak without the library (about
# 220 MiB), so the second tier (ZSWAP_WRITEBACK) holds most of them. The
# same commands go to it with the library and without, through redis-cli
# and redis-benchmark on a unix socket: a load (redis-cli --pipe), random
# reads, overwrites and deletions, a BGSAVE (its child writes the snapshot,
# reading what the parent wrote back, while the parent takes more writes).
# The whole dataset's DEBUG DIGEST must match the plain run's just after the
# fork and at the end, and the child's RDB file, loaded by a plain server,
# must give the digest at the fork.
#
# The library's server must stay within 1.10 L + 16 MiB (VmHWM): the limit
# does not count its file pages (RssFile, about 10 MiB: redis-server,
# jemalloc, libssl, libc, libzswap) nor the library's bookkeeping (about
# 2 MiB here); 60 MiB was seen. Its dump at exit must show at least 64 MiB
# written back (the data beyond the limit had to go somewhere), no page
# poisoned, no failed read, and the tier's file no more than 32 MiB over
# the pages it holds: the slots kept for the child (the parent rewrites
# many of those pages after the fork) are freed once it is gone. It must
# say nothing (its messages go to a file per process), nor may the BGSAVE
# child, which reads back what its parent wrote out and writes back to a
# file of its own: it holds the same bound (about 53 MiB seen).
# Skipped without redis-server, redis-cli and redis-benchmark (Debian's
# redis-server and redis-tools) or python3 (it writes the commands).
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

for p in redis-server redis-cli redis-benchmark; do
	command -v $p >/dev/null 2>&1 || eng_skip "$p is not installed (redis-server, redis-tools)"
done
command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed (it writes the commands)"

ENG_TIMEOUT=300
limit_mb=48
dir=${TMPDIR:-/var/tmp}
keys=40000
bound=$((limit_mb * 1024 * 110 / 100 + 16 * 1024))

# The commands, the same bytes in both runs: SEED FIRST STEP LO HI sets
# every STEPth key from FIRST to a value of LO to HI random bytes (a seeded
# generator); LO 0 deletes those keys instead. RESP, for redis-cli --pipe.
cat >"$ENG_TMP/resp.py" <<'EOF'
import random, sys
seed, first, step, lo, hi, keys = (int(a) for a in sys.argv[1:7])
r = random.Random(seed)
out = sys.stdout.buffer
buf = []
for i in range(first, keys, step):
    k = b"key:%012d" % i
    if lo == 0:
        buf.append(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(k), k))
    else:
        v = r.randbytes(r.randint(lo, hi))
        buf.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    if len(buf) >= 256:
        out.write(b"".join(buf))
        buf = []
out.write(b"".join(buf))
EOF

now_ms() { echo $(($(date +%s%N) / 1000000)); }

rcli() {
	timeout -k 5 "$ENG_TIMEOUT" redis-cli -s "$rs_sock" "$@"
}

# rs_start LABEL MODE [VAR=VALUE...]: a redis-server of no config file on
# a unix socket in $ENG_TMP/LABEL (also its --dir), in the background,
# under the timeout. Sets rs_label, rs_dir, rs_sock, rs_pid (the server's)
# and rs_wait (the timeout's, to wait for). Returns 1 if it never answered.
rs_start() {
	rs_label=$1
	rs_mode=$2
	shift 2
	rs_dir=$ENG_TMP/$rs_label
	rs_sock=$rs_dir/sock
	mkdir -p "$rs_dir"
	case $rs_mode in
	lib) set -- env LD_PRELOAD="$ENG_PRELOAD" "$@" ;;
	plain) set -- env -u LD_PRELOAD "$@" ;;
	esac
	timeout -k 5 "$ENG_TIMEOUT" "$@" redis-server --port 0 --unixsocket "$rs_sock" \
		--save '' --appendonly no --dir "$rs_dir" --dbfilename dump.rdb \
		--enable-debug-command yes >"$rs_dir/log" 2>"$rs_dir/err" &
	rs_wait=$!
	for _ in $(seq 1 300); do
		[ "$(rcli ping 2>/dev/null)" = PONG ] && break
		kill -0 "$rs_wait" 2>/dev/null || break
		sleep 0.1
	done
	rs_pid=$(rcli info server 2>/dev/null | sed -n 's/^process_id:\([0-9]*\).*/\1/p')
	if [ -z "$rs_pid" ]; then
		eng_fail "$rs_label: redis-server did not answer: $(tail -n 3 "$rs_dir/log" "$rs_dir/err")"
		kill "$rs_wait" 2>/dev/null
		wait "$rs_wait"
		return 1
	fi
}

rs_stop() {
	rcli shutdown nosave >/dev/null 2>&1
	wait "$rs_wait"
	rs_rc=$?
	[ "$rs_rc" = 0 ] || eng_fail "$rs_label: redis-server exited with $(eng_status "$rs_rc")"
}

# rs_pipe WHAT SEED FIRST STEP LO HI: resp.py's commands, every reply counted.
rs_pipe() {
	python3 "$ENG_TMP/resp.py" "$2" "$3" "$4" "$5" "$6" "$keys" |
		rcli --pipe >"$rs_dir/pipe.out" 2>&1
	grep -q "^errors: 0, replies: $(((keys - $3 + $4 - 1) / $4))\$" "$rs_dir/pipe.out" ||
		eng_fail "$rs_label: $1: $(tail -n 1 "$rs_dir/pipe.out")"
}

# The whole dataset's digest, and the number of keys, onto FILE.
rs_digest() {
	d=$(rcli debug digest)
	case $d in
	*[!0-9a-f]* | "" | 0000000000000000000000000000000000000000)
		eng_fail "$rs_label: DEBUG DIGEST gave '$d'" ;;
	esac
	echo "$d $(rcli dbsize)" >>"$1"
}

# VmHWM of PID in KiB (empty once it has gone).
vmhwm() {
	sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null
}

# The peak of the BGSAVE child, from its start until it is gone, into FILE.
rs_watch_child() {
	c=
	for _ in $(seq 1 200); do
		c=$(sed -n 's/.*Background saving started by pid \([0-9]*\).*/\1/p' "$rs_dir/log")
		[ -n "$c" ] && break
		sleep 0.05
	done
	[ -n "$c" ] || return 0
	while [ -d "/proc/$c" ]; do
		h=$(vmhwm "$c")
		[ -n "$h" ] && echo "$h" >"$1"
		sleep 0.2
	done
}

# Waits until the BGSAVE is over: it must have succeeded.
rs_bgsave_wait() {
	for _ in $(seq 1 1200); do
		rcli info persistence | grep -q '^rdb_bgsave_in_progress:0' && break
		sleep 0.1
	done
	rcli info persistence | grep -q '^rdb_last_bgsave_status:ok' ||
		eng_fail "$rs_label: BGSAVE failed: $(rcli info persistence | grep bgsave | tr -d '\r' | tr '\n' ' ')"
}

# rs_session LABEL MODE [VAR=VALUE...]: the whole run. Leaves the digests
# (at the fork, at the end) in $ENG_TMP/LABEL.digests, the server's peak in
# rs_hwm and the child's in $ENG_TMP/LABEL.child-hwm.
rs_session() {
	t0=$(now_ms)
	rs_start "$@" || return 1
	rs_pipe load 1 0 1 512 7680
	t1=$(now_ms)
	timeout -k 5 "$ENG_TIMEOUT" redis-benchmark -s "$rs_sock" -c 4 -n 10000 -r "$keys" -q GET 'key:__rand_int__' \
		>"$rs_dir/bench.out" 2>&1 || eng_fail "$rs_label: redis-benchmark failed: $(tail -n 2 "$rs_dir/bench.out")"
	rs_pipe overwrite 2 0 5 256 12288
	rs_pipe delete 0 3 17 0 0
	t2=$(now_ms)
	: >"$ENG_TMP/$rs_label.digests"
	rcli bgsave >/dev/null
	rs_watch_child "$ENG_TMP/$rs_label.child-hwm" &
	rs_watcher=$!
	rs_digest "$ENG_TMP/$rs_label.digests"
	rs_pipe after-fork 3 1 7 512 7680
	rs_bgsave_wait
	wait "$rs_watcher"
	t3=$(now_ms)
	rs_digest "$ENG_TMP/$rs_label.digests"
	rs_hwm=$(vmhwm "$rs_pid")
	t4=$(now_ms)
	rs_stop
	t5=$(now_ms)
	eng_say "$rs_label: $((t5 - t0)) ms (start and load $((t1 - t0)), traffic $((t2 - t1)), BGSAVE and writes $((t3 - t2)), digest $((t4 - t3)), shutdown $((t5 - t4))); VmHWM ${rs_hwm:-?} KiB, the BGSAVE child's $(cat "$ENG_TMP/$rs_label.child-hwm" 2>/dev/null || echo ?) KiB"
}

rs_session plain plain
rm -f "$ENG_TMP/plain/dump.rdb"
rs_session lib lib ZSWAP_MEMORY_LIMIT=${limit_mb}M ZSWAP_BACKING_DIR="$dir" \
	ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/lib/stats.%p" \
	ZSWAP_LOG_FILE="$ENG_TMP/lib/zswap.%p"
lib_pid=$rs_pid
lib_hwm=$rs_hwm

if ! cmp -s "$ENG_TMP/plain.digests" "$ENG_TMP/lib.digests"; then
	eng_fail "the data differs (digest and keys at the fork, then at the end): plain" \
		"$(tr '\n' ' ' <"$ENG_TMP/plain.digests")lib $(tr '\n' ' ' <"$ENG_TMP/lib.digests")"
fi
[ "$(sed -n 1p "$ENG_TMP/plain.digests")" != "$(sed -n 2p "$ENG_TMP/plain.digests")" ] ||
	eng_fail "the writes after the fork changed nothing: the comparison proves nothing"

# The snapshot the library's fork child wrote, loaded by a plain server.
mkdir -p "$ENG_TMP/reload"
if mv "$ENG_TMP/lib/dump.rdb" "$ENG_TMP/reload/dump.rdb" 2>/dev/null; then
	: >"$ENG_TMP/reload.digests"
	if rs_start reload plain; then
		rs_digest "$ENG_TMP/reload.digests"
		rs_stop
		[ "$(cat "$ENG_TMP/reload.digests")" = "$(sed -n 1p "$ENG_TMP/plain.digests")" ] ||
			eng_fail "the BGSAVE child's RDB holds $(cat "$ENG_TMP/reload.digests"), not the data at the fork ($(sed -n 1p "$ENG_TMP/plain.digests"))"
	fi
else
	eng_fail "the library's BGSAVE child wrote no RDB file"
fi

# The library's server: its peak, its dump at exit, its messages.
[ "${lib_hwm:-999999999}" -le "$bound" ] ||
	eng_fail "lib: VmHWM ${lib_hwm:-?} KiB over 1.10 L + 16 MiB ($bound KiB)"
stats=$ENG_TMP/lib/stats.$lib_pid
if grep -q "^libzswap .* statistics: pid $lib_pid .*(exit)" "$stats" 2>/dev/null; then
	wb=$(eng_dump_stat "$stats" written_back_pages)
	bd=$(sed -n '/^# bd_count/{n;p;}' "$stats")
	in_tier=$(echo "$bd" | awk '{ print $1 }')
	disk=$(eng_dump_stat "$stats" backing_disk_bytes)
	kept=$(eng_dump_stat "$stats" backing_free_bytes)
	eng_say "lib: written back ${wb:-?} pages; at exit bd_count bd_reads bd_writes:$(echo "$bd" | tr -s ' ' ' '), the file $disk bytes on disk, ${kept:-?} of them freed slots kept for reuse"
	[ "${wb:-0}" -ge 16384 ] || eng_fail "lib: ${wb:-?} pages written back, not even the 64 MiB beyond the limit"
	[ "${disk:-999999999999}" -le $((${in_tier:-0} * 4096 + ${kept:-0} + 32 * 1048576)) ] ||
		eng_fail "lib: the tier's file takes $disk bytes for ${in_tier:-?} pages: the slots kept for the BGSAVE child were not freed once it was gone"
	for c in poisoned_pages bd_read_fail decompress_fail; do
		[ "$(eng_dump_stat "$stats" $c)" = 0 ] || eng_fail "lib: $c is $(eng_dump_stat "$stats" $c), not 0"
	done
else
	eng_fail "lib: no dump at exit in $stats"
fi
# The BGSAVE child writes back to a file of its own: it holds the limit too
# and says nothing either.
child_hwm=$(cat "$ENG_TMP/lib.child-hwm" 2>/dev/null)
[ "${child_hwm:-999999999}" -le "$bound" ] ||
	eng_fail "lib: the BGSAVE child's VmHWM ${child_hwm:-?} KiB over 1.10 L + 16 MiB ($bound KiB)"
for f in "$ENG_TMP"/lib/log "$ENG_TMP"/lib/err "$ENG_TMP"/lib/zswap.*; do
	n=$(eng_count_libzswap "$f")
	if [ "$n" != 0 ]; then
		eng_fail "lib: $n unexpected libzswap: line(s) in $(basename "$f")"
		grep '^libzswap:' "$f" | head -n 5 >&2
	fi
done
ENG_ALLOW_LIBZSWAP=
eng_finish
