#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# posix_spawn, system(), vfork+execve and execve from a program with evicted
# memory: the child runs with its own libzswap instance (it evicts its own
# memory), the parent's data is intact afterwards. fork(): parent and child
# both read the parent's evicted pages intact. The library's descriptors are
# close-on-exec. posix_spawn, vfork+execve and execve with the path, argv and
# envp (arrays and strings) all on evicted pages: the child gets every byte.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_spawn)
for c in spawn system vfork fork forkevict forkthreads cloexec spawnargs vforkargs; do
	eng_compare_run "spawn-$c" "$prog" "$c"
done
eng_compare_run spawn-exec "$prog" exec
eng_expect_stdout_has "child ok"
eng_compare_run spawn-execargs "$prog" execargs
eng_expect_stdout_has "argcheck ok"
eng_finish
