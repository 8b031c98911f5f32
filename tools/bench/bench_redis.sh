#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_redis.sh - the clients of tools/bench/bench_real.sh's redis workload: a
# redis-server that someone else started (unlimited, in the kernel side's
# memory cgroup or under LD_PRELOAD=libzswap.so) is loaded and then served
# a timed client load through its unix socket. A benchmark's helper: it
# prints figures and judges none, but fails when a client sees an error.
#
#   gen DIR       writes the commands, the same bytes on every run (python3,
#                 seeded generators): DIR/load.resp sets key:000000000000 ..
#                 key:000000039999 to 512-7680 random bytes each (about 150
#                 MiB that do not compress; tests/engine/test_eng_redis.sh's
#                 load), DIR/sets.resp overwrites 20,000 keys drawn at random
#                 with new random values of the same sizes.
#   clients DIR SOCKET [PID]
#                 waits until the server on SOCKET answers (while process
#                 PID, if given, lives), then: the load (redis-cli --pipe);
#                 the timed phase: 100,000 GETs of random keys of the key
#                 space from 50 connections (redis-benchmark -r 40000 GET
#                 key:__rand_int__), then sets.resp (redis-cli --pipe); the
#                 whole dataset's DEBUG DIGEST (the server needs
#                 --enable-debug-command yes) and its number of keys; the
#                 server's VmHWM; SHUTDOWN NOSAVE.
#                 Prints on stdout "digest D keys N" (the GETs change
#                 nothing and the overwrites are one ordered stream, so D is
#                 the same on every run whose data is intact) and on stderr
#                 one line "bench_redis.sh: figures: key=value ...":
#                 rps (the timed phase's requests per second: GETs and SETs
#                 over its whole time), get_rps, set_rps, load_s, timed_s,
#                 digest_s, misses (GETs that found no key: 0), srv_hwm_kb.
#                 Its work files (the clients' outputs) go to DIR.
#
# The clients run without LD_PRELOAD (unset here for everything this script
# starts; tools/bench/bench_real.sh also starts this script with env -u
# LD_PRELOAD) and, in tools/bench/bench_real.sh, outside the kernel side's memory
# cgroup: the limit and the measured peak are the server's alone.
# redis-benchmark picks its keys from a generator seeded by the time: only
# reads are left to it. redis-cli --pipe takes only the writes: it parses
# large replies slowly (100,000 GETs of 4 KiB values took minutes, the
# server's output buffers growing meanwhile).
#
# Usage: tools/bench/bench_redis.sh gen DIR
#        tools/bench/bench_redis.sh clients DIR SOCKET [PID]
# Needs redis-cli and redis-benchmark (Debian's redis-tools), python3.
set -u

me=bench_redis.sh
keys=40000
gets=100000
sets=20000
conns=50
py=/usr/bin/python3
[ -x $py ] || py=python3

unset LD_PRELOAD
say() { echo "$me: $*" >&2; }
now_ns() { date +%s%N; }
# secs T0 T1: the seconds from T0 to T1 (nanoseconds), 3 decimals.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
# per_s N T0 T1: N over the seconds from T0 to T1.
per_s() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%d", (b > a ? n * 1e9 / (b - a) : 0) }'; }

gen() {
	"$py" - "$1" "$keys" "$sets" <<'EOF'
import random, sys
out, keys, sets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def cmd(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)

def write(path, cmds):
    with open(path, "wb") as f:
        buf = []
        for c in cmds:
            buf.append(c)
            if len(buf) >= 256:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))

def load():
    r = random.Random(1)
    for i in range(keys):
        yield cmd(b"SET", b"key:%012d" % i, r.randbytes(r.randint(512, 7680)))

def overwrite():
    r = random.Random(2)
    for _ in range(sets):
        k = b"key:%012d" % r.randrange(keys)
        yield cmd(b"SET", k, r.randbytes(r.randint(512, 7680)))

write(out + "/load.resp", load())
write(out + "/sets.resp", overwrite())
EOF
}

clients() {
	dir=$1 sock=$2 job=${3:-}
	rcli() { redis-cli -s "$sock" "$@"; }
	i=0
	until [ "$(rcli ping 2>/dev/null)" = PONG ]; do
		if [ -n "$job" ] && ! kill -0 "$job" 2>/dev/null; then
			say "the server exited before it answered"
			return 1
		fi
		i=$((i + 1))
		[ $i -gt 12000 ] && { say "no answer on $sock after 600 s"; return 1; }
		sleep 0.05
	done
	pid=$(rcli info server | tr -d '\r' | sed -n 's/^process_id:\([0-9]*\)$/\1/p')
	ok=1
	# pipe WHAT FILE N: FILE's N commands through redis-cli --pipe, every
	# reply counted.
	pipe() {
		rcli --pipe < "$2" > "$dir/$1.out" 2>&1
		grep -q "^errors: 0, replies: $3\$" "$dir/$1.out" && return 0
		l=$(tail -n 1 "$dir/$1.out")
		say "$1: ${l:-redis-cli --pipe printed nothing}"
		ok=0
	}
	t0=$(now_ns)
	pipe load "$dir/load.resp" $keys
	t1=$(now_ns)
	if [ $ok = 1 ] && ! redis-benchmark -s "$sock" -c $conns -n $gets -r $keys -q GET 'key:__rand_int__' \
		> "$dir/bench.out" 2>&1; then
		say "redis-benchmark: $(tr '\r' '\n' < "$dir/bench.out" | grep . | tail -n 1)"
		ok=0
	fi
	t2=$(now_ns)
	[ $ok = 1 ] && pipe sets "$dir/sets.resp" $sets
	t3=$(now_ns)
	d='' n='' misses='' hwm=''
	if [ "$(rcli ping 2>/dev/null)" = PONG ]; then
		d=$(rcli debug digest 2>&1)
		n=$(rcli dbsize 2>&1)
		t4=$(now_ns)
		misses=$(rcli info stats | tr -d '\r' | sed -n 's/^keyspace_misses://p')
		[ -n "$pid" ] && hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status" 2>/dev/null)
		rcli shutdown nosave > /dev/null 2>&1
	else
		t4=$t3
		say "the server no longer answers (killed?): no digest"
		ok=0
	fi
	if [ -n "$pid" ]; then
		# A server that did not go (SHUTDOWN unanswered) is stopped.
		i=0
		while kill -0 "$pid" 2>/dev/null; do
			i=$((i + 1))
			[ $i = 200 ] && { say "the server did not exit after SHUTDOWN: SIGTERM"; kill "$pid"; }
			[ $i = 400 ] && { kill -9 "$pid"; break; }
			sleep 0.05
		done
	fi
	echo "digest ${d:-none} keys ${n:-none}"
	if [ -n "$d" ]; then
		case $d in
		*[!0-9a-f]*) say "DEBUG DIGEST gave '$d'"; ok=0 ;;
		esac
		[ "$misses" = 0 ] || { say "${misses:-?} GETs found no key"; ok=0; }
	fi
	say "figures: rps=$(per_s $((gets + sets)) "$t1" "$t3") get_rps=$(per_s $gets "$t1" "$t2")" \
	    "set_rps=$(per_s $sets "$t2" "$t3") load_s=$(secs "$t0" "$t1") timed_s=$(secs "$t1" "$t3")" \
	    "digest_s=$(secs "$t3" "$t4") misses=${misses:-?} srv_hwm_kb=${hwm:-?}"
	[ $ok = 1 ]
}

case ${1:-} in
gen) [ $# = 2 ] || { sed -n '/^# Usage:/,/^# Needs/p' "$0" >&2; exit 2; }
	gen "$2" ;;
clients) [ $# -ge 3 ] || { sed -n '/^# Usage:/,/^# Needs/p' "$0" >&2; exit 2; }
	clients "$2" "$3" "${4:-}" ;;
*) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ "${1:-}" = -h ] || [ "${1:-}" = --help ] ;;
esac
