#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The second tier (ZSWAP_WRITEBACK, on by default under a limit): data whose
# compressed size does not fit in the limit is written back to a file, and
# the limit holds. Text 4x the limit and random pages 2x the limit, every
# byte checked, VmHWM within 1.10 L + 8 MiB; the same with the tier off runs
# over the limit (the comparison that proves the tier did the holding);
# fork after writeback, both sides checking all and writing their own half
# (the child writes back to a file of its own and holds the limit too, and
# never punches a block of its parent's; the parent frees the blocks kept
# for the child once it is gone); four threads refaulting from the pool and the
# tier at once; injected write failures (ENOSPC, EIO, a short write) and a
# full disk keep the pages in the pool; a pool at ZSWAP_MAX_POOL_SIZE
# makes room by writeback (reject_reclaim_fail when it cannot); blocks damaged on disk raise SIGBUS
# on their pages only; a page read back keeps its slot while unchanged (the
# swap cache) and changed, moved or discarded pages still read right; a
# working set that fits beside a pool of old entries stops refaulting once
# they are in the tier;
# SIGKILL leaves no file behind; a tier directory on
# tmpfs is refused with one line and the program runs.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_writeback)
dir=${TMPDIR:-/var/tmp}
ENG_TIMEOUT=180
bound=$(( (32 * 1024 * 110 / 100) + 8 * 1024 ))

hwm() { sed -n 's/^prog_writeback: vmhwm_kb=//p' "$ENG_ERR"; }
# pair NAME MODE ARGS...: the mode plainly, then under 32M with the tier;
# true when the second ran and printed what the first did.
pair() {
	n=$1; shift
	eng_run "$n-plain" plain "$prog" "$@"
	eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/$n.ref"
	eng_run "$n" lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" "$prog" "$@"
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/$n.ref"
}
stat_of() { sed -n "s/^prog_writeback: stat $1=//p" "$ENG_ERR"; }

for kind in "text 128" "random 64"; do
	set -- $kind
	eng_run "$1-plain" plain "$prog" fill "$2" "$1"
	eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/$1.ref"
	eng_run "$1-tier" lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" "$prog" fill "$2" "$1"
	if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/$1.ref"; then
		h=$(hwm); wb=$(stat_of written_back_pages)
		eng_say "$1: $2 MiB under 32M: VmHWM ${h:-?} KiB (bound $bound), written back ${wb:-?} pages"
		[ "${h:-999999999}" -le "$bound" ] || eng_fail "$1: VmHWM ${h:-?} KiB over 1.10 L + 8 MiB ($bound KiB)"
		[ "${wb:-0}" -gt 0 ] || eng_fail "$1: nothing was written back"
		[ "$(stat_of poisoned_pages)" = 0 ] || eng_fail "$1: pages were poisoned"
	fi
done
# The v1 charge model (ZSWAP_MEMORY_CHARGE=v1): the limit counts resident
# memory alone, as cgroup v1 does, so the text's pool (larger than the limit
# itself) stays in memory and nothing is written back; what is resident
# besides the pool holds the bound.
eng_run text-v1 lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_MEMORY_CHARGE=v1 ZSWAP_BACKING_DIR="$dir" "$prog" fill 128 text
if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/text.ref"; then
	h=$(hwm); wb=$(stat_of written_back_pages); pool=$(stat_of mem_used_max_kb)
	eng_say "text, v1 charge: VmHWM ${h:-?} KiB, the pool at most ${pool:-?} KiB, written back ${wb:-?} pages"
	[ "${wb:-1}" = 0 ] || eng_fail "text, v1 charge: $wb pages written back, where the pool is not charged"
	[ "${pool:-0}" -gt 32768 ] || eng_fail "text, v1 charge: the pool (${pool:-?} KiB) stayed within the limit"
	[ "${h:-999999999}" -le $((bound + ${pool:-0})) ] ||
		eng_fail "text, v1 charge: VmHWM ${h:-?} KiB over the bound plus the pool ($bound + ${pool:-?} KiB)"
fi
# Without the tier the random pages cannot be held: proof the tier did it.
eng_run random-off lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_WRITEBACK=0 "$prog" fill 64 random
if eng_expect_rc 0; then
	h=$(hwm)
	[ "${h:-0}" -gt "$bound" ] || eng_fail "with ZSWAP_WRITEBACK=0 random pages stayed within the bound (${h:-?} KiB)"
fi

if pair fork fork 64; then
	# Once the child is gone the slots kept for it are freed: the file on
	# disk is what is live and the freed blocks it keeps for reuse (within
	# 1 MiB), and those at most as many as the live ones and 4 MiB.
	# The child writes back to a file of its own: its limit holds too.
	ch=$(sed -n 's/^prog_writeback: child vmhwm_kb=//p' "$ENG_ERR")
	[ "${ch:-999999999}" -le "$bound" ] || eng_fail "fork: the child's VmHWM ${ch:-?} KiB over 1.10 L + 8 MiB ($bound KiB)"
	d=$(stat_of disk_after_child_kb); l=$(stat_of live_after_child_kb); f=$(stat_of free_after_child_kb)
	eng_say "fork: the child's VmHWM ${ch:-?} KiB; after it, ${d:-?} KiB on disk for ${l:-?} KiB live and ${f:-?} KiB kept free"
	[ "${d:-999999999}" -le $(( ${l:-0} + ${f:-0} + 1024 )) ] ||
		eng_fail "fork: ${d:-?} KiB on disk for ${l:-?} KiB live and ${f:-?} KiB kept free once the child is gone"
	[ "${f:-999999999}" -le $(( ${l:-0} + 4096 )) ] ||
		eng_fail "fork: ${f:-?} KiB of freed slots kept on disk for ${l:-?} KiB live"
fi

# Write failures by injection (ENOSPC, EIO and a short write in turn): the
# pages stay in the pool, every byte is right, the failure is said once
# and counted, and writeback goes on afterwards (each failure pauses it for
# a second: the fork mode waits until something was written back).
ENG_ALLOW_LIBZSWAP='^libzswap: (writeback: the tier.s file could not take a page|ZSWAP_MEMORY_LIMIT \(32 MiB\) cannot hold)'
eng_run inject lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" ZSWAP_INJECT_WRITEBACK_FAIL=3 \
	"$prog" fork 64
if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/fork.ref"; then
	[ "$(grep -c 'could not take a page' "$ENG_ERR")" = 1 ] ||
		eng_fail "inject: the failed writes were not said exactly once"
	[ "$(stat_of writeback_failed)" -ge 3 ] || eng_fail "inject: fewer than 3 failed write-backs counted"
	[ "$(stat_of written_back_pages)" -gt 0 ] || eng_fail "inject: writeback did not go on after the failures"
	[ "$(stat_of poisoned_pages)" = 0 ] || eng_fail "inject: pages were poisoned"
	eng_expect_no_libzswap
fi
ENG_ALLOW_LIBZSWAP=

# The swap cache: a page read back keeps its tier slot while unchanged.
# Changed pages (by the program, by the kernel through read(), at a page's
# last bytes), moved ones (mremap) and discarded ones (MADV_DONTNEED) must
# read right; clean ones go back to their slots without a write; nothing is
# left in the tier once the area is unmapped.
if pair swapcache swapcache 64; then
	re=$(stat_of swap_cached_reclaimed); wb=$(stat_of written_back_pages)
	eng_say "swapcache: $re pages evicted again to the slot they kept, $wb written"
	[ "${re:-0}" -gt 0 ] || eng_fail "swapcache: no clean page went back to its kept slot"
	[ "$(stat_of bd_count_after_unmap)" = 0 ] || eng_fail "swapcache: $(stat_of bd_count_after_unmap) pages left in the tier after munmap"
	[ "$(stat_of swap_cached_after_unmap)" = 0 ] || eng_fail "swapcache: $(stat_of swap_cached_after_unmap) kept slots left after munmap"
fi
# With the swap cache off every page evicted is written again.
# The balance of pool and resident pages: 72 MiB of text filled once, then
# random reads over the next 24 MiB, which fits under 32M only beside a pool
# that gave its old entries to the tier. Once the pool's edge has moved
# (16 rounds), the last 8 rounds refault fewer times than the working set
# has pages (0 measured; 18,237 with the pool kept at half the limit).
if pair balance balance 96; then
	late=$(stat_of late_refaults); hot=$(stat_of hot_pages)
	eng_say "balance: ${late:-?} refaults in the last 8 rounds over ${hot:-?} pages"
	[ "${late:-999999999}" -lt "${hot:-0}" ] ||
		eng_fail "balance: ${late:-?} refaults in the last 8 rounds over a ${hot:-?}-page working set that fits"
fi

eng_run swapcache-off lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_SWAP_CACHE=0 ZSWAP_BACKING_DIR="$dir" "$prog" swapcache 64
if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/swapcache.ref"; then
	[ "$(stat_of swap_cached_reclaimed)" = 0 ] || eng_fail "ZSWAP_SWAP_CACHE=0: pages went back to kept slots"
fi

# Four threads refaulting at once, from the pool (text pages) and from the
# tier (random pages) interleaved: every byte right, both kinds of refault.
if pair threads threads 64; then
	r=$(stat_of refaults); br=$(stat_of bd_reads)
	eng_say "threads: $r refaults, $br of them from the tier"
	[ "${br:-0}" -gt 0 ] || eng_fail "threads: nothing was read back from the tier"
	[ "${r:-0}" -gt "${br:-0}" ] || eng_fail "threads: no refault came from the pool"
fi


# A pool bounded by ZSWAP_MAX_POOL_SIZE: writeback makes room in it
# (written_back_pages); when writeback cannot (every write fails), that is
# counted in reject_reclaim_fail, and the pages the pool refused stay
# resident. Every byte right either way.
eng_run pool-plain plain "$prog" pool 64
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/pool.ref"
for inj in 0 1000000; do
	ENG_ALLOW_LIBZSWAP='^libzswap: writeback: the tier.s file could not take a page'
	eng_run pool-$inj lib ZSWAP_MAX_POOL_SIZE=8M ZSWAP_WRITEBACK=1 ZSWAP_BACKING_DIR="$dir" \
		ZSWAP_INJECT_WRITEBACK_FAIL=$inj "$prog" pool 64
	ENG_ALLOW_LIBZSWAP=
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/pool.ref" || continue
	hit=$(stat_of pool_limit_hit); rrf=$(stat_of reject_reclaim_fail); wb=$(stat_of written_back_pages)
	eng_say "pool, $inj failures injected: pool_limit_hit $hit, written back $wb, reject_reclaim_fail $rrf"
	[ "${hit:-0}" -gt 0 ] || eng_fail "pool-$inj: the pool never reached its limit"
	if [ $inj = 0 ]; then
		[ "${wb:-0}" -gt 0 ] && [ "${rrf:-1}" = 0 ] ||
			eng_fail "pool-0: written back ${wb:-?}, reject_reclaim_fail ${rrf:-?}: expected some and none"
	else
		[ "${wb:-1}" = 0 ] && [ "${rrf:-0}" -gt 0 ] ||
			eng_fail "pool-$inj: written back ${wb:-?}, reject_reclaim_fail ${rrf:-?}: expected none and some"
	fi
done

# A damaged file: pages read back from blocks the test changed on disk
# raise SIGBUS, those pages only; every other page is right, and each
# SIGBUS is a poisoned page and a failed read in the counters.
mkdir -p "$ENG_TMP/corrupt"
ENG_ALLOW_LIBZSWAP='^libzswap: a stored page at .* could not be (decompressed|read back): poisoned'
# No timeout(1) in between: $! is the program (its waits are bounded).
ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" LD_PRELOAD="$ENG_PRELOAD" \
	"$prog" corrupt 64 "$ENG_TMP/corrupt" >"$ENG_TMP/corrupt.out" 2>"$ENG_TMP/corrupt.err" &
pid=$!
for _ in $(seq 1 600); do
	[ -e "$ENG_TMP/corrupt/ready" ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
damaged=
if [ -e "$ENG_TMP/corrupt/ready" ]; then
	fd=$(ls -l /proc/$pid/fd 2>/dev/null | awk -v d="$dir/" 'index($0, d) && /\(deleted\)/ { print $9; exit }')
	# One byte flipped in each of 4 pages spread over the file's first
	# extent of data (SEEK_DATA): pages written back and not read since.
	damaged=$(python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
start = os.lseek(fd, 0, os.SEEK_DATA)
end = os.lseek(fd, start, os.SEEK_HOLE)
n = 0
for k in range(4):
    off = start + (end - start) // 4096 * k // 4 * 4096 + 100
    if off >= end:
        break
    b = os.pread(fd, 1, off)
    os.pwrite(fd, bytes([b[0] ^ 0x5a]), off)
    n += 1
os.fsync(fd)
print(n)' "/proc/$pid/fd/$fd")
fi
: > "$ENG_TMP/corrupt/go"
wait $pid
ENG_RC=$? ENG_OUT=$ENG_TMP/corrupt.out ENG_ERR=$ENG_TMP/corrupt.err ENG_LABEL=corrupt
if [ -z "$damaged" ] || [ "$damaged" = 0 ]; then
	eng_fail "corrupt: the tier's file could not be damaged (fd ${fd:-none} of $pid)"
elif eng_expect_rc 0; then
	bus=$(sed -n 's/^prog_writeback: sigbus //p' "$ENG_ERR")
	eng_say "corrupt: $damaged blocks damaged, $bus pages raised SIGBUS"
	[ "${bus:-0}" -ge 1 ] && [ "${bus:-0}" -le "$damaged" ] ||
		eng_fail "corrupt: ${bus:-?} pages raised SIGBUS for $damaged damaged blocks"
	[ "$(stat_of poisoned_pages)" = "$bus" ] && [ "$(stat_of bd_read_fail)" = "$bus" ] ||
		eng_fail "corrupt: poisoned_pages $(stat_of poisoned_pages), bd_read_fail $(stat_of bd_read_fail) for $bus SIGBUS"
	eng_expect_no_libzswap
fi
ENG_ALLOW_LIBZSWAP=

# SIGKILL while pages are in the tier: nothing is left in the directory (the
# file never had a name), and the file was really in use (its descriptor
# shows it while the program runs).
before=$(ls -A "$dir" | wc -l)
ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" LD_PRELOAD="$ENG_PRELOAD" "$prog" fork 64 \
	>/dev/null 2>&1 &
pid=$!
seen=
for _ in $(seq 1 100); do
	if ls -l /proc/$pid/fd 2>/dev/null | grep -q "$dir/.*(deleted)"; then
		seen=1
		break
	fi
	sleep 0.1
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ -n "$seen" ] || eng_fail "the tier's file was never seen among the program's descriptors"
after=$(ls -A "$dir" | wc -l)
[ "$after" -le "$before" ] || eng_fail "SIGKILL left $((after - before)) new entries in $dir"

# A disk that fills: a 16 MiB filesystem of the test's own, a cap beyond it.
# Writes fail with ENOSPC, pages stay in the pool, it is said once, and
# every byte is right.
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null 2>&1; then
	img=$ENG_TMP/small.img
	mnt=$ENG_TMP/small
	mkdir -p "$mnt"
	if truncate -s 16M "$img" && mkfs.ext4 -q -F "$img" >/dev/null 2>&1 &&
	   mount -o loop "$img" "$mnt" 2>/dev/null; then
		ENG_ALLOW_LIBZSWAP='^libzswap: (writeback: the tier.s file could not take a page|ZSWAP_MEMORY_LIMIT \(32 MiB\) cannot hold)'
		eng_run enospc lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$mnt" ZSWAP_BACKING_MAX=1G \
			"$prog" fill 64 random
		if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/random.ref"; then
			[ "$(grep -c 'could not take a page' "$ENG_ERR")" = 1 ] ||
				eng_fail "a full disk was not said exactly once"
			[ "$(stat_of writeback_failed)" -gt 0 ] || eng_fail "no failed write-back was counted"
		fi
		ENG_ALLOW_LIBZSWAP=
		umount "$mnt"
	else
		eng_say "no loop mount here: the full-disk case is not run"
	fi
else
	eng_say "not root or no mkfs.ext4: the full-disk case is not run"
fi

if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	eng_run tmpfs-plain plain "$prog" fill 32 text
	eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/small.ref"
	eng_run tmpfs lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR=/dev/shm "$prog" fill 32 text
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/small.ref"
	grep -q "ZSWAP_BACKING_DIR=/dev/shm: /dev/shm is on tmpfs" "$ENG_ERR" ||
		eng_fail "a tier on tmpfs was not refused with its reason"
fi
eng_finish
