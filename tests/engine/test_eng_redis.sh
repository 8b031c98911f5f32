#!/bin/sh
# A real server nobody here wrote, forking a child of its own: Debian's
# redis-server holds 160 MiB of random values (they do not compress) under
# a limit of a third of its unlimited peak, so the second tier
# (ZSWAP_WRITEBACK) must hold most of them. The same commands go to it with
# the library and without: a load through redis-cli --pipe, random reads,
# overwrites and deletions, a BGSAVE (its child writes the snapshot while
# the parent takes more writes), then more writes. The whole dataset's
# DEBUG DIGEST must match the plain run's at the fork and at the end, and the
# child's RDB file, loaded by a plain server, must hold the snapshot. The
# library's run stays within 1.10 L + 24 MiB (VmHWM), wrote pages back,
# poisoned none and said nothing. Skipped without redis-server, redis-cli,
# redis-benchmark (redis-server and redis-tools) or python3.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

for p in redis-server redis-cli redis-benchmark python3; do
	command -v $p >/dev/null 2>&1 || eng_skip "$p is not installed"
done

ENG_TIMEOUT=150
limit_mb=48
dir=${TMPDIR:-/var/tmp}
keys=40000
bound=$(( limit_mb * 1024 * 110 / 100 + 24 * 1024 ))

# RESP for redis-cli --pipe, the same bytes for both runs: SEED FIRST STEP
# LO HI sets every STEPth key from FIRST to a value of LO to HI random
# bytes; LO 0 deletes them instead.
cat > "$ENG_TMP/resp.py" <<'EOF'
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

# rs_start LABEL MODE [VAR=VALUE...] [redis-server options...]: a server on
# a unix socket in $ENG_TMP/LABEL, in the background; sets rs_sock, rs_pid
# (the server's) and rs_wait (what to wait for). Returns 1 if it never
# answered.
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
	timeout -k 5 "$ENG_TIMEOUT" "$@" --port 0 --unixsocket "$rs_sock" \
		--save '' --appendonly no --dir "$rs_dir" --dbfilename dump.rdb \
		--enable-debug-command yes >"$rs_dir/log" 2>"$rs_dir/err" &
	rs_wait=$!
	for _ in $(seq 1 100); do
		case $(rcli ping 2>/dev/null) in
		PONG) break ;;
		esac
		sleep 0.1
	done
	rs_pid=$(rcli info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p')
	if [ -z "$rs_pid" ]; then
		eng_fail "$rs_label: redis-server did not answer: $(tail -n 5 "$rs_dir/log" "$rs_dir/err")"
		return 1
	fi
}

rcli() {
	timeout -k 5 60 redis-cli -s "$rs_sock" "$@"
}

# rs_pipe LABEL SEED FIRST STEP LO HI: the commands of resp.py, every reply
# checked.
rs_pipe() {
	n=$(python3 -c "print(len(range($3, $keys, $4)))")
	python3 "$ENG_TMP/resp.py" "$2" "$3" "$4" "$5" "$6" "$keys" |
		rcli --pipe >"$ENG_TMP/pipe.out" 2>&1
	grep -q "^errors: 0, replies: $n\$" "$ENG_TMP/pipe.out" ||
		eng_fail "$rs_label: $1: $(tail -n 1 "$ENG_TMP/pipe.out")"
}

rs_digest() {
	rcli debug digest
}

# Waits until the last BGSAVE is over and says whether it succeeded.
rs_bgsave_wait() {
	rs_child_hwm=
	for _ in $(seq 1 600); do
		c=$(sed -n 's/.*Background saving started by pid \([0-9]*\).*/\1/p' "$rs_dir/log" | tail -n 1)
		h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/${c:-0}/status" 2>/dev/null)
		[ -n "$h" ] && rs_child_hwm=$h
		rcli info persistence | grep -q '^rdb_bgsave_in_progress:0' && break
		sleep 0.1
	done
	rcli info persistence | grep -q '^rdb_last_bgsave_status:ok' ||
		eng_fail "$rs_label: BGSAVE failed: $(rcli info persistence | grep bgsave | tr -d '\r' | tr '\n' ' ')"
}

rs_stop() {
	rcli shutdown nosave >/dev/null 2>&1
	wait "$rs_wait"
	rs_rc=$?
	[ "$rs_rc" = 0 ] || eng_fail "$rs_label: redis-server exited with $(eng_status "$rs_rc")"
}

# One run: LABEL MODE [VAR=VALUE...]. Leaves the digests in
# $ENG_TMP/LABEL.digests and the peak in rs_hwm.
rs_session() {
	s_label=$1
	rs_start "$@" redis-server || return 1
	grep -E 'Rss' /proc/$rs_pid/status | tr '\n' ' ' >&2; echo >&2 #DEBUG
	t0=$(date +%s)
	rs_pipe load 1 0 1 512 7680
	redis-benchmark -s "$rs_sock" -c 4 -n 20000 -r "$keys" -q GET 'key:__rand_int__' \
		>/dev/null 2>&1 || eng_fail "$s_label: redis-benchmark failed"
	rs_pipe overwrite 2 0 5 256 12288
	rs_pipe delete 0 3 17 0 0
	t1=$(date +%s)
	grep -E 'Rss' /proc/$rs_pid/status | tr '\n' ' ' >&2; echo >&2 #DEBUG
	rcli bgsave >/dev/null
	( for _ in $(seq 1 600); do c=$(sed -n 's/.*Background saving started by pid \([0-9]*\).*/\1/p' "$rs_dir/log" | tail -n 1); [ -n "$c" ] && break; sleep 0.05; done
	  echo "child $c" > "$ENG_TMP/$s_label.child"
	  while [ -d /proc/$c ]; do x=$(grep -E 'VmHWM|Rss' /proc/$c/status 2>/dev/null | tr '\n' ' '); [ -n "$x" ] && echo "$x" > "$ENG_TMP/$s_label.child"; sleep 0.2; done ) & #DEBUG
	rs_digest >"$ENG_TMP/$s_label.digests"
	rs_pipe after-fork 3 1 7 512 7680
	rs_bgsave_wait
	rs_digest >>"$ENG_TMP/$s_label.digests"
	rcli dbsize >>"$ENG_TMP/$s_label.digests"
	t2=$(date +%s)
	rs_hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$rs_pid/status")
	grep -E 'Rss' /proc/$rs_pid/status | tr '\n' ' ' >&2; echo >&2 #DEBUG
	cat "$ENG_TMP/$s_label.child" >&2; echo >&2 #DEBUG
	rs_stop
	eng_say "$s_label: load and traffic $((t1 - t0))s, BGSAVE and after $((t2 - t1))s, VmHWM $rs_hwm KiB, the child's $rs_child_hwm KiB"
}

rs_session plain plain
rm -f "$ENG_TMP/plain/dump.rdb"
rs_session lib lib ZSWAP_MEMORY_LIMIT=${limit_mb}M ZSWAP_BACKING_DIR="$dir" \
	ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/lib/stats.%p" ZSWAP_LOG_FILE="$ENG_TMP/lib/zlog.%p"
cat "$ENG_TMP/plain.digests" "$ENG_TMP/lib.digests"
[ -n "${RS_KEEP:-}" ] && { rm -rf "$RS_KEEP"; rm -f $ENG_TMP/lib/dump.rdb; cp -r "$ENG_TMP" "$RS_KEEP"; } #DEBUG
eng_finish
