# SPDX-License-Identifier: GPL-2.0-or-later
# bench_zram_lib.sh - sourced by the benchmarks that put pages through a
# zram device of their own (bench_pool_kernel.sh, bench_recomp.sh), after
# they set builddir, mb, pages (empty: made here), tmp, dev (empty until
# hot-added) and die. zl_cleanup resets and removes that device and the
# scratch folder; zl_pages makes the pages when none were given (the
# reclaim benchmark's, --mb MiB of them) and sets bytes and npages.

zl_cleanup() {
	if [ -n "$dev" ]; then
		echo 1 > "/sys/block/zram$dev/reset" 2>/dev/null
		echo "$dev" > /sys/class/zram-control/hot_remove 2>/dev/null
	fi
	rm -rf "$tmp"
}

zl_pages() {
	if [ -z "$pages" ]; then
		zl_bench=$builddir/tools/bench/bench_reclaim
		[ -x "$zl_bench" ] || die "$zl_bench not built (make tools/bench/bench_reclaim), or give --pages FILE"
		pages=$tmp/pages.bin
		"$zl_bench" --size "${mb}M" --dump $((mb * 256)) > "$pages" || die "bench_reclaim --dump failed"
	fi
	bytes=$(stat -c %s "$pages")
	npages=$((bytes / 4096))
	[ "$npages" -gt 0 ] || die "$pages: no whole page"
}
