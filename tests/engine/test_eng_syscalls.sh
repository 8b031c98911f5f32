#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults taken inside the kernel (read, pread, recv, write FROM evicted memory,
# futex words, readv/preadv/recvmsg/writev/sendmsg with the iovec array and
# msghdr evicted too), signals delivered to a thread faulting on evicted memory
# (SA_RESTART, the handler faulting too) and onto an evicted sigaltstack, a
# thread whose own stack (pthread_attr_setstack) is evicted while it sleeps in
# read(2) (all but its top, the thread descriptor, which is never evicted),
# threads exiting and the process exiting with faults in flight.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_syscalls)
for c in read pread recv write futex signal threadexit altstack threadstack iovec; do
	eng_compare_run "sys-$c" "$prog" "$c"
done
# A thread on a given stack ending with the exit system call: its
# descriptor (the thread ID the kernel clears at exit) must not have been
# evicted. With glibc's rseq off, nothing else brings that page back first.
eng_compare_run "sys-stackexit" GLIBC_TUNABLES=glibc.pthread.rseq=0 "$prog" stackexit
eng_compare_run "sys-stackexit-addr" GLIBC_TUNABLES=glibc.pthread.rseq=0 "$prog" stackexit-addr

# exit(0) from main while 4 threads fault: status 0, the process ends (the
# timeout of eng_run catches a hang). Repeated: the window is narrow.
i=0
while [ $i -lt 8 ]; do
	eng_run "exit-$i" lib "$prog" exit
	eng_expect_rc 0 && eng_expect_no_libzswap && eng_expect_stdout_has "exit: exiting with 0" || break
	eng_run "exitthread-$i" lib "$prog" exitthread
	eng_expect_rc 5 && eng_expect_no_libzswap && eng_expect_stdout_has "exitthread: exiting with 5" || break
	i=$((i + 1))
done
eng_finish
