#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A preloaded program behaves exactly as without the library (libzswap(7)
# "Transparency"): it ends when its last thread ends, the program's own
# action for the statistics signal wins, a signal it sends itself takes the
# default action, a dump another process asked for is written even when the
# program ends at once, and the library's descriptors are close-on-exec,
# out of the program's way and gone from an exec'd program and from a fork
# child that runs without the library. Each case runs tests/progs/prog_behave
# with and without the library and compares.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_behave)
ENG_TIMEOUT=30	# a hang is the failure most cases look for

# plain_then_lib LABEL RC [VAR=VALUE...] -- ARGS: both runs end with RC and
# print the same; the library run says nothing on stderr.
plain_then_lib() {
	label=$1 want=$2
	shift 2
	vars=
	while [ "$1" != -- ]; do vars="$vars $1"; shift; done
	shift
	eng_run "$label-plain" plain "$prog" "$@"
	eng_expect_rc "$want" || return 1
	cp "$ENG_OUT" "$ENG_TMP/$label.ref"
	# shellcheck disable=SC2086
	eng_run "$label" lib $vars "$prog" "$@"
	eng_expect_rc "$want" && eng_expect_same_stdout "$ENG_TMP/$label.ref" || return 1
	if [ -s "$ENG_ERR" ]; then
		eng_fail "$label: the library run wrote to stderr"
		return 1
	fi
	return 0
}

# 1. The last thread ends the process: main() calls pthread_exit(), the
#    worker returns; atexit handlers run and stdio is flushed. Also with the
#    reclaimer's threads (a limit), and in a fork child made by a thread
#    other than main(), followed and not (the pool lock: the interim).
plain_then_lib last-thread 0 -- last-thread
plain_then_lib last-thread-limit 0 ZSWAP_MEMORY_LIMIT=64M -- last-thread
plain_then_lib fork-thread 0 -- fork-thread
plain_then_lib fork-thread-interim 0 ZSWAP_POOL_LOCK=pool -- fork-thread

# 2. The program's own action for the statistics signal wins: its handler
#    runs and sigsuspend returns, nothing is dumped (ZSWAP_STATS_FILE stays
#    absent); also after a vfork child reset the handler (Python's
#    subprocess); SIG_IGN interrupts no sleep; a blocked signal goes to
#    sigwaitinfo.
for m in handler vfork-reset ignore blocked; do
	rm -f "$ENG_TMP/$m.dump"
	plain_then_lib "$m" 0 ZSWAP_STATS_FILE="$ENG_TMP/$m.dump" -- "$m" &&
		[ -e "$ENG_TMP/$m.dump" ] && eng_fail "$m: the library wrote a dump though the program handles the signal"
done

# 3. A signal the program sends itself at its default action: it dies by
#    it, as without the library; and so does a posix_spawn() child given
#    the default action (POSIX_SPAWN_SETSIGDEF) that raises it.
plain_then_lib raise 138 ZSWAP_STATS_FILE="$ENG_TMP/raise.dump" -- raise
[ -e "$ENG_TMP/raise.dump" ] && eng_fail "raise: a dump was written for the program's own signal"
plain_then_lib spawn-raise 0 -- spawn-raise

# 4. Another process's signal at the default action asks for a dump: the
#    program survives it (that is the documented difference) and the dump
#    is written even when the program ends right after, by _exit() or by
#    returning from main().
for m in sent-exit sent-return; do
	eng_run "$m-plain" plain "$prog" "$m"
	eng_expect_rc 138
	f=$ENG_TMP/$m.dump
	eng_run "$m" lib ZSWAP_STATS_FILE="$f" "$prog" "$m"
	if eng_expect_rc 0 && eng_expect_stdout_has slept; then
		n=$(grep -c '^libzswap .* statistics: .*(signal)' "$f" 2>/dev/null)
		[ "${n:-0}" = 1 ] || eng_fail "$m: expected one dump asked for by the signal in $f, found ${n:-0}"
	fi
done

# 5. Descriptors. The program's own are the same with and without the
#    library; the library's are close-on-exec, from 64 below the descriptor
#    limit up, at most 7 with the defaults (userfaultfd, pagemap, statm,
#    status, the statistics eventfd, socket and the socket's directory:
#    libzswap(7)); an exec'd
#    program sees none of them, nor does a fork child that runs without the
#    library (the interim).
lim=$(ulimit -n)
[ "$lim" -gt 1024 ] && lim=1024
base=$((lim - 64))
# same_lines LABEL WHO BELOW WHAT: the descriptors under BELOW that WHO
# (program, exec, child) listed in the last run are those of the plain run.
same_lines() {
	grep "^$2 " "$ENG_OUT" | awk -v b="$3" '$3 < b' > "$ENG_TMP/$1.$2.got"
	cmp -s "$ENG_TMP/fds.$2.want" "$ENG_TMP/$1.$2.got" ||
		eng_fail "$1: $4: $(tr '\n' ' ' < "$ENG_TMP/$1.$2.got") against $(tr '\n' ' ' < "$ENG_TMP/fds.$2.want")"
}

eng_run fds-plain plain "$prog" fds
if eng_expect_rc 0; then
	for who in program exec child; do
		grep "^$who " "$ENG_OUT" > "$ENG_TMP/fds.$who.want"
	done
	for cfg in default interim; do
		vars=
		[ $cfg = interim ] && vars=ZSWAP_POOL_LOCK=pool
		# shellcheck disable=SC2086
		eng_run fds-$cfg lib $vars "$prog" fds
		eng_expect_rc 0 || continue
		same_lines fds-$cfg program $base "the program's own descriptors differ"
		same_lines fds-$cfg exec 999999 "an exec'd program inherits descriptors"
		[ $cfg = interim ] &&
			same_lines fds-$cfg child 999999 "a fork child without the library keeps descriptors"
		ours=$(awk -v b=$base '$1 == "program" && $3 >= b' "$ENG_OUT")
		n=$(printf '%s' "$ours" | grep -c .)
		[ "$n" -le 7 ] || eng_fail "fds-$cfg: $n descriptors of the library's, more than 7: $ours"
		printf '%s\n' "$ours" | grep -v cloexec | grep -q . &&
			eng_fail "fds-$cfg: a descriptor of the library's is not close-on-exec: $ours"
	done
fi

# 6. ZSWAP_LOG_FILE: the library's own messages (a start-up line at
#    ZSWAP_VERBOSE=1, the warning about a bad option) go to the file, the
#    program's stderr stays its own; a fork child writes to its own file
#    (%p); an unopenable file leaves them on stderr, said once. These short
#    programs start the library at once (ZSWAP_START_DELAY=0) to say the
#    start-up line.
mkdir -p "$ENG_TMP/logs"
if plain_then_lib log-file 0 ZSWAP_LOG_FILE="$ENG_TMP/logs/%p" ZSWAP_VERBOSE=1 ZSWAP_COLD_AGE=soon ZSWAP_START_DELAY=0 \
	-- fork-thread; then
	set -- "$ENG_TMP"/logs/*
	[ $# = 2 ] || eng_fail "log-file: expected a log file for the process and its child, found: $*"
	cat "$@" > "$ENG_TMP/log.all"
	grep -q '^libzswap: ZSWAP_COLD_AGE="soon": ' "$ENG_TMP/log.all" ||
		eng_fail "log-file: the option warning is not in the log file"
	grep -q '^libzswap: active: ' "$ENG_TMP/log.all" ||
		eng_fail "log-file: the start-up line is not in the log file"
fi
eng_run log-file-bad lib ZSWAP_LOG_FILE=/nonexistent/dir/log ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=0 "$prog" last-thread
if eng_expect_rc 0; then
	grep -q '^libzswap: ZSWAP_LOG_FILE /nonexistent/dir/log cannot be created (errno 2): messages go to stderr' "$ENG_ERR" &&
		grep -q '^libzswap: active: ' "$ENG_ERR" ||
		eng_fail "log-file-bad: expected the open failure and then the messages on stderr"
fi

# 7. A real program: Python's signal.pause() with its own handler, the
#    signal sent by a subprocess (subprocess's vfork child resets every
#    handler before exec).
if command -v python3 >/dev/null 2>&1; then
	cat > "$ENG_TMP/pause.py" <<'EOF'
import os, signal, subprocess
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
child = subprocess.Popen(["sh", "-c", "sleep 0.2; kill -USR1 %d" % os.getpid()])
while not got:
    signal.pause()
child.wait()
print("handler ran", len(got))
EOF
	eng_run py-pause-plain plain python3 "$ENG_TMP/pause.py"
	if eng_expect_rc 0; then
		cp "$ENG_OUT" "$ENG_TMP/py.ref"
		eng_run py-pause lib python3 "$ENG_TMP/pause.py"
		eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/py.ref" && eng_expect_no_libzswap
		grep -q 'statistics' "$ENG_ERR" && eng_fail "py-pause: the library dumped though Python handles SIGUSR1"
	fi
fi
eng_finish
