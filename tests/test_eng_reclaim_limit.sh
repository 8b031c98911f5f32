#!/bin/sh
# ZSWAP_MEMORY_LIMIT holds: a program with three times more data than its
# limit writes it all at full speed, reads it back, and then makes random
# accesses (half rewrites); every byte is checked (same stdout as without the
# library), and the peak RSS it reads back (VmHWM) stays within
# limit x 1.10 + 8 MiB, the fill phase included. The counters show reclaim
# (pgsteal) and refaults.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/..}/tests/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
limit_mb=64
max_kb=$((limit_mb * 1024 * 110 / 100 + 8192))

# stat NAME: the value the last run printed for a counter (or vmhwm_kb).
stat() {
	sed -n "s/^prog_reclaim: \\(stat \\)\\{0,1\\}$1=\\([0-9]*\\).*/\\2/p" "$ENG_ERR" | tail -n 1
}

check_run() {
	label=$1
	shift
	eng_run "$label-plain" plain "$prog" "$@"
	eng_expect_rc 0 || return
	cp "$ENG_OUT" "$ENG_TMP/$label.ref"
	eng_run "$label" lib ZSWAP_MEMORY_LIMIT=${limit_mb}M "$prog" "$@"
	eng_expect_rc 0 || return
	eng_expect_no_libzswap || return
	eng_expect_same_stdout "$ENG_TMP/$label.ref" || return
	hwm=$(stat vmhwm_kb)
	steal=$(stat pgsteal)
	refaults=$(stat refaults)
	eng_say "$label: VmHWM ${hwm:-?} kB (at most $max_kb), pgsteal ${steal:-?}, refaults ${refaults:-?}"
	[ -n "$hwm" ] && [ "$hwm" -le "$max_kb" ] ||
		eng_fail "$label: peak RSS ${hwm:-?} kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB"
	[ "${steal:-0}" -gt 0 ] && [ "${refaults:-0}" -gt 0 ] ||
		eng_fail "$label: no reclaim or no refault counted (pgsteal ${steal:-?}, refaults ${refaults:-?})"
}

check_run fill fill 192
check_run random random 192 20000
eng_finish
