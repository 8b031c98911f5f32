# SPDX-License-Identifier: GPL-2.0-or-later
# eng_lib.sh - shell helpers for the engine tests (tests/engine/test_eng_*.sh).
#
# Sourced, not run. The harness exports ZSWAP_LIB (the built libzswap.so),
# ZSWAP_BUILDDIR and ZSWAP_SRCDIR. They are copied into ENG_* variables and
# every ZSWAP_* variable is then removed from the environment: the programs run
# under the library, whose option parser reports unknown ZSWAP_* names, and a
# test must choose every option it passes.
#
# eng_run LABEL MODE [VAR=VALUE...] PROGRAM ARGS...
#   MODE: lib (LD_PRELOAD=$ENG_PRELOAD), plain (no library), nobody-lib and
#   nobody-plain (the same as user nobody, through setpriv). Sets ENG_RC,
#   ENG_OUT and ENG_ERR (files holding the run's stdout and stderr). Every run
#   is bounded by a timeout (ENG_TIMEOUT, 60 s): a hang is a failure, reported
#   as such.
# ENG_PRELOAD          what LD_PRELOAD holds to load the library: $ENG_LIB,
#                      after the sanitizer runtime ENG_SAN_PRELOAD when the
#                      library was built with AddressSanitizer (configure
#                      --enable-asan), which must come first in the process
# eng_need_nobody P    skip unless PROGRAM P can run as user nobody
# eng_fail MESSAGE     record a failure (the test goes on, exits 1 at the end)
# eng_skip MESSAGE     exit 77 with the reason on stderr
# eng_finish           exit 0, or 1 if anything failed
# eng_live [VAR=VALUE...]  start an idle python3 under the library in the
#                      background, serving its statistics socket in
#                      $XDG_RUNTIME_DIR (the caller's private directory):
#                      ENG_LIVE its process ID, its stderr in
#                      $ENG_TMP/live.err, stopped at exit; skips when
#                      userfaultfd is unavailable, returns 1 without a socket

set -u

eng_name=$(basename "$0" .sh)
ENG_FAILED=0
ENG_TIMEOUT=${ENG_TIMEOUT:-60}

eng_say() {
	printf '%s: %s\n' "$eng_name" "$*" >&2
}

eng_skip() {
	eng_say "SKIP: $*"
	exit 77
}

# Show the end of the last run's output, to make a failure readable.
eng_show_last() {
	if [ -n "${ENG_ERR:-}" ] && [ -s "$ENG_ERR" ]; then
		eng_say "--- stderr of $ENG_LABEL (last 30 lines) ---"
		tail -n 30 "$ENG_ERR" >&2
	fi
	if [ -n "${ENG_OUT:-}" ] && [ -s "$ENG_OUT" ]; then
		eng_say "--- stdout of $ENG_LABEL (last 10 lines) ---"
		tail -n 10 "$ENG_OUT" >&2
	fi
}

eng_fail() {
	eng_say "FAIL: $*"
	eng_show_last
	ENG_FAILED=1
}

eng_finish() {
	if [ "$ENG_FAILED" != 0 ]; then
		eng_say "FAILED"
		exit 1
	fi
	eng_say "ok"
	exit 0
}

if [ -z "${ZSWAP_LIB:-}" ] || [ -z "${ZSWAP_BUILDDIR:-}" ]; then
	eng_skip "ZSWAP_LIB and ZSWAP_BUILDDIR are not set (run through make check)"
fi
ENG_LIB=$ZSWAP_LIB
ENG_BUILDDIR=$ZSWAP_BUILDDIR
ENG_SRCDIR=${ZSWAP_SRCDIR:-}
for eng_v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$eng_v"
done
unset eng_v
unset LD_PRELOAD

if [ ! -f "$ENG_LIB" ]; then
	eng_skip "the library $ENG_LIB is not built"
fi
command -v timeout >/dev/null 2>&1 || eng_skip "timeout(1) is missing (coreutils)"

# An ASan build: the runtime the library needs must be the first object in
# the process, so it goes first in LD_PRELOAD (by soname: the loader finds
# it). Leak checking is off: the library's memory is raw mmap, never freed
# by design, and the programs exit with memory in use.
ENG_SAN_PRELOAD=
if command -v objdump >/dev/null 2>&1; then
	ENG_SAN_PRELOAD=$(objdump -p "$ENG_LIB" 2>/dev/null | awk '$1 == "NEEDED" && $2 ~ /^libasan\.so/ { print $2 }')
fi
if [ -n "$ENG_SAN_PRELOAD" ]; then
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
	export ASAN_OPTIONS
fi
ENG_PRELOAD="${ENG_SAN_PRELOAD:+$ENG_SAN_PRELOAD }$ENG_LIB"

ENG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/$eng_name.XXXXXX") || eng_skip "mktemp failed"
chmod 755 "$ENG_TMP"
trap 'rm -rf "$ENG_TMP"' EXIT

# Path of a test program; a missing one is a hard error of the build.
eng_prog() {
	eng_p="$ENG_BUILDDIR/tests/progs/$1"
	if [ ! -x "$eng_p" ]; then
		eng_say "ERROR: test program $eng_p is not built"
		exit 99
	fi
	printf '%s\n' "$eng_p"
}

eng_run() {
	ENG_LABEL=$1
	eng_mode=$2
	shift 2
	ENG_OUT=$ENG_TMP/$ENG_LABEL.out
	ENG_ERR=$ENG_TMP/$ENG_LABEL.err
	case $eng_mode in
	lib)
		timeout -k 5 "$ENG_TIMEOUT" env LD_PRELOAD="$ENG_PRELOAD" "$@" >"$ENG_OUT" 2>"$ENG_ERR"
		ENG_RC=$? ;;
	plain)
		# Without the library even when the suite runs under one.
		timeout -k 5 "$ENG_TIMEOUT" env -u LD_PRELOAD "$@" >"$ENG_OUT" 2>"$ENG_ERR"
		ENG_RC=$? ;;
	nobody-lib)
		timeout -k 5 "$ENG_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups \
			env LD_PRELOAD="$ENG_PRELOAD" "$@" >"$ENG_OUT" 2>"$ENG_ERR"
		ENG_RC=$? ;;
	nobody-plain)
		timeout -k 5 "$ENG_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -u LD_PRELOAD "$@" >"$ENG_OUT" 2>"$ENG_ERR"
		ENG_RC=$? ;;
	*)
		eng_say "ERROR: eng_run: unknown mode $eng_mode"
		exit 99 ;;
	esac
	if [ "$ENG_RC" = 124 ]; then
		eng_fail "$ENG_LABEL: did not finish within ${ENG_TIMEOUT}s (hang): $*"
	elif [ "$ENG_RC" = 137 ]; then
		eng_fail "$ENG_LABEL: killed by SIGKILL (the OOM killer, or the timeout's kill 5s after ${ENG_TIMEOUT}s): $*"
	fi
	return 0
}

# eng_need_nobody PROGRAM: skip unless this test can run PROGRAM as user
# nobody (root, setpriv, a build directory nobody can read).
eng_need_nobody() {
	[ "$(id -u)" = 0 ] || eng_skip "needs root to switch to user nobody"
	command -v setpriv >/dev/null 2>&1 || eng_skip "setpriv(1) is missing (util-linux)"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "test -x '$1' && test -r '$ENG_LIB'" ||
		eng_skip "user nobody cannot run $1 or read $ENG_LIB (build directory not world-readable)"
}

# eng_need_noptrace: skip unless this test can run a program as root
# without CAP_SYS_PTRACE (no fork events) with userfaultfd still open to it;
# sets ENG_NOPTRACE to the command prefix that drops the capability.
eng_need_noptrace() {
	[ "$(id -u)" = 0 ] || eng_skip "needs root (to drop CAP_SYS_PTRACE alone)"
	command -v setpriv >/dev/null 2>&1 || eng_skip "setpriv(1) is missing (util-linux)"
	ENG_NOPTRACE="setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace"
	eng_eff=$($ENG_NOPTRACE sh -c 'sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status')
	[ -n "$eng_eff" ] && [ $(((0x$eng_eff >> 19) & 1)) = 0 ] ||
		eng_skip "setpriv cannot drop CAP_SYS_PTRACE here (CapEff ${eng_eff:-unknown})"
	# userfaultfd must still open without the capability: /dev/userfaultfd
	# (root's own) or the sysctl.
	[ -c /dev/userfaultfd ] || [ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 1 ] ||
		eng_skip "no /dev/userfaultfd and vm.unprivileged_userfaultfd=0: nothing opens without CAP_SYS_PTRACE"
}

# Describe an exit status: "0", "1", "signal 7 (SIGBUS)".
eng_status() {
	if [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
		printf 'signal %d (SIG%s)' $(($1 - 128)) "$(kill -l $(($1 - 128)) 2>/dev/null)"
	else
		printf '%d' "$1"
	fi
}

# eng_expect_rc WANT: the last run exited with WANT. A skip (77) of a program
# that should have run skips the whole test, with its reason.
eng_expect_rc() {
	if [ "$ENG_RC" = "$1" ]; then
		return 0
	fi
	if [ "$ENG_RC" = 77 ] && [ "$ENG_FAILED" = 0 ]; then
		cat "$ENG_ERR" >&2
		eng_skip "$ENG_LABEL: the program skipped"
	fi
	eng_fail "$ENG_LABEL: exit status $(eng_status "$ENG_RC"), expected $1"
	return 1
}

# A counter a test program printed on stderr as "PROG: stat NAME=VALUE"
# (prog_reclaim's print_stats): the last value of NAME.
eng_stat() {
	sed -n "s/^$1: stat $2=\([0-9]*\).*/\1/p" "$ENG_ERR" | tail -n 1
}

# A counter of the library's text dump ("NAME  VALUE" lines) in FILE: the
# last value of NAME (the dump at exit, when FILE holds several).
eng_dump_stat() {
	sed -n "s/^$2 *\([0-9]*\)\$/\1/p" "$1" | tail -n 1
}

# Number of "libzswap:" lines in a file, but for those matching
# ENG_ALLOW_LIBZSWAP (an extended regular expression, when set: what a run
# is expected to say, e.g. that its limit cannot hold).
eng_count_libzswap() {
	if [ -n "${ENG_ALLOW_LIBZSWAP:-}" ]; then
		grep '^libzswap:' "$1" 2>/dev/null | grep -cvE "$ENG_ALLOW_LIBZSWAP" || true
	else
		grep -c '^libzswap:' "$1" 2>/dev/null || true
	fi
}

eng_expect_no_libzswap() {
	eng_n=$(eng_count_libzswap "$ENG_ERR")
	if [ "$eng_n" != 0 ]; then
		eng_fail "$ENG_LABEL: $eng_n unexpected libzswap: line(s) on stderr"
		return 1
	fi
	return 0
}

# eng_expect_one_libzswap: the last run printed exactly one "libzswap:"
# line (a library that steps aside says why once); sets ENG_LINE to it.
eng_expect_one_libzswap() {
	eng_n=$(eng_count_libzswap "$ENG_ERR")
	if [ "$eng_n" != 1 ]; then
		eng_fail "$ENG_LABEL: $eng_n libzswap: lines on stderr, expected exactly 1"
		return 1
	fi
	ENG_LINE=$(grep '^libzswap:' "$ENG_ERR")
	eng_say "$ENG_LABEL: $ENG_LINE"
	return 0
}

# eng_expect_same_stdout FILE: the last run printed exactly FILE's contents.
eng_expect_same_stdout() {
	if ! cmp -s "$1" "$ENG_OUT"; then
		eng_fail "$ENG_LABEL: stdout differs from the reference run"
		diff "$1" "$ENG_OUT" | head -n 20 >&2
		return 1
	fi
	return 0
}

# eng_expect_stdout_has TEXT: a line of the last run's stdout is exactly TEXT.
eng_expect_stdout_has() {
	if ! grep -qxF -- "$1" "$ENG_OUT"; then
		eng_fail "$ENG_LABEL: stdout has no line '$1'"
		return 1
	fi
	return 0
}

# eng_ok_run LABEL MODE ARGS...: run, expect exit 0 and no libzswap: line.
eng_ok_run() {
	eng_run "$@"
	eng_expect_rc 0 && eng_expect_no_libzswap
}

# Run LABEL under the library and without, both must succeed with the same
# stdout; the library run must print no libzswap: line.
eng_compare_run() {
	eng_c_label=$1
	shift
	eng_run "$eng_c_label-plain" plain "$@"
	eng_expect_rc 0 || return 1
	cp "$ENG_OUT" "$ENG_TMP/$eng_c_label.ref"
	eng_ok_run "$eng_c_label" lib "$@" || return 1
	eng_expect_same_stdout "$ENG_TMP/$eng_c_label.ref"
}

eng_live() {
	# Started at once: an interpreter that only sleeps makes no memory
	# call to start it after ZSWAP_START_DELAY.
	env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_START_DELAY=0 "$@" python3 -c 'import os, time
print(os.getpid(), flush=True)
time.sleep(300)' >"$ENG_TMP/live.out" 2>"$ENG_TMP/live.err" &
	eng_live_bg=$!
	trap 'kill $eng_live_bg 2>/dev/null; rm -rf "$ENG_TMP"' EXIT
	ENG_LIVE=
	for _ in $(seq 300); do
		ENG_LIVE=$(head -n 1 "$ENG_TMP/live.out")
		[ -n "$ENG_LIVE" ] && [ -S "$XDG_RUNTIME_DIR/libzswap/$ENG_LIVE.sock" ] && return 0
		sleep 0.1
	done
	grep -q 'userfaultfd unavailable' "$ENG_TMP/live.err" && eng_skip "$(grep -m1 '^libzswap:' "$ENG_TMP/live.err")"
	eng_fail "the live process offers no statistics socket: $(cat "$ENG_TMP/live.err")"
	return 1
}

# eng_ctl_private: $ctl, the zswapctl of this build, and a private
# XDG_RUNTIME_DIR ($XDG) for the sockets of the processes the test starts.
eng_ctl_private() {
	ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
	[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
	XDG=$ENG_TMP/xdg
	mkdir -m 700 "$XDG"
	export XDG_RUNTIME_DIR=$XDG
}
