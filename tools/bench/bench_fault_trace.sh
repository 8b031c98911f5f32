#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_fault_trace.sh - where a refault's time goes, from the kernel's side:
# run COMMAND with ftrace events on (its threads only) and keep the raw trace
# for tools/bench/bench_fault_trace.py. A measuring tool, not a test. Root, tracefs.
#
# Events: exceptions:page_fault_user (the program's fault), sched_switch and
# sched_wakeup (who runs where, and when each thread is woken), raw_syscalls
# (the handler's poll/read/ioctl: COPY, WAKE, MOVE), tlb:tlb_flush,
# ipi:ipi_send_cpu/_cpumask and the call-function vectors (TLB shootdowns).
# Each event costs ~0.2-0.5 us: the figures are inflated by about that much
# per event on the path; compare phases, not the absolute total.
#
# Usage: tools/bench/bench_fault_trace.sh OUT.trace COMMAND...
set -u
out=${1:?usage: bench_fault_trace.sh OUT.trace COMMAND...}; shift
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t || exit 1
old_kb=$(cat $t/buffer_size_kb)
old_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $t/trace_clock)
echo 0 > $t/tracing_on
echo > $t/trace
echo nop > $t/current_tracer
echo mono > $t/trace_clock
echo ${BUFFER_KB:-400000} > $t/buffer_size_kb
echo 1 > $t/options/event-fork
echo > $t/set_event
for e in exceptions:page_fault_user sched:sched_switch sched:sched_wakeup raw_syscalls:sys_enter \
	 raw_syscalls:sys_exit tlb:tlb_flush ipi:ipi_send_cpu ipi:ipi_send_cpumask \
	 irq_vectors:call_function_entry irq_vectors:call_function_single_entry; do
	echo "$e" >> $t/set_event
done
# The command's process (and its threads: event-fork) only.
sh -c 'echo $$ > '$t'/set_event_pid; echo 1 > '$t'/tracing_on; exec "$@"' sh "$@"
rc=$?
echo 0 > $t/tracing_on
cat $t/trace > "$out"
echo > $t/set_event
echo > $t/set_event_pid
echo 0 > $t/options/event-fork
echo "$old_kb" > $t/buffer_size_kb
echo "$old_clock" > $t/trace_clock
echo > $t/trace
echo "bench_fault_trace.sh: $(wc -l < "$out") lines in $out; lost: $(grep -c LOST "$out")" >&2
exit $rc
