#!/bin/sh
# The main job: libzswap over real data, under a memory limit.
#
# 1. The store: pages read from files on this machine are compressed into the
#    zsmalloc-style pool, loaded back (exclusive loads) and verified byte for
#    byte; the pool's use is printed in the kernel's terms.
# 2. The pager: an ordinary program (tools/demo_pager) holds 1 GiB of
#    text-like data inside a memory cgroup limited to 640 MiB, preloaded with
#    libzswap. It pages its data out as it goes (MADV_PAGEOUT) and reads it all
#    back, verified. Without libzswap (and without swap) the same program
#    would be killed by the limit.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
b=$top/build
data_mb=${ZSWAP_DEMO_PAGER_MB:-1024}
limit_mb=${ZSWAP_DEMO_LIMIT_MB:-640}

echo "== 1. the store: pages from files on this machine, LZ4, zspage order 2"
"$b/tools/zswap_demo" --mb "${ZSWAP_DEMO_MB:-256}"
echo

echo "== 2. the pager: $data_mb MiB of data in a program limited to $limit_mb MiB, under LD_PRELOAD=libzswap.so"
cg=/sys/fs/cgroup/memory/libzswap-demo-$$
run_limited() {
	if [ "$(id -u)" -eq 0 ] && [ -w /sys/fs/cgroup/memory ] && mkdir "$cg" 2>/dev/null; then
		echo $((limit_mb << 20)) > "$cg/memory.limit_in_bytes"
		# The limit must bind: no swap may absorb the excess.
		[ -f "$cg/memory.swappiness" ] && echo 0 > "$cg/memory.swappiness" 2>/dev/null || true
		echo "(memory cgroup $cg: memory.limit_in_bytes = $limit_mb MiB)"
		rc=0
		sh -c 'echo $$ > "$1/tasks" && shift && exec "$@"' sh "$cg" "$@" || rc=$?
		echo "memory.max_usage_in_bytes: $(( $(cat "$cg/memory.max_usage_in_bytes") >> 20 )) MiB," \
		     "memory.failcnt: $(cat "$cg/memory.failcnt")"
		rmdir "$cg" 2>/dev/null || true
		return $rc
	fi
	echo "(no memory cgroup available here: running without the limit)"
	"$@"
}
# The demo's own ZSWAP_DEMO_* knobs are not libzswap options: keep them from it.
run_limited env -u ZSWAP_DEMO_MB -u ZSWAP_DEMO_PAGER_MB -u ZSWAP_DEMO_LIMIT_MB LD_PRELOAD="$b/.libs/libzswap.so" "$b/tools/demo_pager" --mb "$data_mb"
