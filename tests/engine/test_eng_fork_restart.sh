#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fork children without fork events (root without CAP_SYS_PTRACE) start a
# libzswap of their own at their first memory call: a child writing three
# times its limit stays near it, its own store holding its pages, every byte
# checked, the parent intact; children that exec at once never start one;
# a multiprocessing pool's workers under a limit print what a plain run does.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

eng_need_noptrace
np=$ENG_NOPTRACE
starts="fork: this child starts a libzswap of its own"

prog=$(eng_prog prog_fork)
eng_run limit-plain plain "$prog" --restart limit
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/limit.ref"
eng_ok_run limit lib $np env ZSWAP_MEMORY_LIMIT=32M "$prog" --restart limit &&
	eng_expect_same_stdout "$ENG_TMP/limit.ref"
hwm=$(eng_stat prog_fork child_vmhwm_kb)
stored=$(eng_stat prog_fork child_stored_pages)
# 32 MiB, with the limit's usual slack (1.10 L + 8 MiB) and the parent's
# 4 MiB the child shares; unmanaged, the child reaches 100 MiB.
if [ -z "$hwm" ] || [ "$hwm" -gt $((32 * 1024 * 11 / 10 + 12 * 1024)) ]; then
	eng_fail "limit: the child's VmHWM is ${hwm:-unknown} KiB under a limit of 32 MiB"
fi
[ "${stored:-0}" -gt 0 ] || eng_fail "limit: the child's own store holds ${stored:-no} pages"

ENG_ALLOW_LIBZSWAP=.	# the verbose runs below: what ZSWAP_VERBOSE says
# A child that execs at once (the shell's fork and exec) starts none; each
# program it runs starts the library as its own start-up does.
eng_ok_run exec lib $np env ZSWAP_VERBOSE=1 sh -c 'for i in 1 2 3 4 5 6 7 8; do /bin/true; done; echo done'
eng_expect_stdout_has done
n=$(grep -c "$starts" "$ENG_ERR")
[ "$n" = 0 ] || eng_fail "exec: $n children that exec at once started a libzswap of their own"
# bash allocates a few dozen small blocks in the child before its exec:
# that is no reason to start either.
if command -v bash >/dev/null 2>&1; then
	eng_ok_run exec-bash lib $np env ZSWAP_VERBOSE=1 bash -c 'for i in 1 2 3 4 5 6 7 8; do /bin/true; done; echo done'
	eng_expect_stdout_has done
	n=$(grep -c "$starts" "$ENG_ERR")
	[ "$n" = 0 ] || eng_fail "exec-bash: $n of bash's children that exec at once started a libzswap of their own"
fi

# The children a forking server makes: multiprocessing's fork workers.
if command -v python3 >/dev/null 2>&1; then
	py='
import hashlib, multiprocessing as mp
def work(i):
    data = [bytes([(i * 7 + j) % 251]) * 4096 for j in range(16384)]
    h = hashlib.sha256()
    for d in data:
        h.update(d)
    return i, h.hexdigest()
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(2) as pool:
        for i, d in pool.map(work, range(4)):
            print(i, d)
'
	eng_run pool-plain plain python3 -c "$py"
	eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/pool.ref"
	eng_ok_run pool lib $np env ZSWAP_MEMORY_LIMIT=48M ZSWAP_VERBOSE=1 python3 -c "$py" &&
		eng_expect_same_stdout "$ENG_TMP/pool.ref"
	n=$(grep -c "$starts" "$ENG_ERR")
	[ "$n" -ge 2 ] || eng_fail "pool: $n workers started a libzswap of their own, expected 2 or more"
fi
eng_finish
