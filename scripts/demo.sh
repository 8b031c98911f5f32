#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job: libzswap over real data, under a memory limit.
#
# 1. The store: pages read from files on this machine are compressed into the
#    zsmalloc-style pool, loaded back (exclusive loads) and verified byte for
#    byte; the pool's use is printed in the kernel's terms.
# 2. The pager: an ordinary program (tools/demo/demo_pager, an in-memory log store
#    that never asks for anything to be paged out) ingests 384 MiB of service
#    logs, queries them and checks every byte, run as
#        ZSWAP_MEMORY_LIMIT=128M LD_PRELOAD=libzswap.so demo_pager
#    The library alone keeps its resident memory plus the compressed pool
#    under the limit (a third of its data), as memory.max plus zswap would
#    for a cgroup; the memory saved and the counters are printed in the
#    kernel's terms. Knobs: ZSWAP_DEMO_PAGER_MB, ZSWAP_DEMO_LIMIT_MB,
#    ZSWAP_DEMO_MB (part 1).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
b=$top/build
data_mb=${ZSWAP_DEMO_PAGER_MB:-384}
limit_mb=${ZSWAP_DEMO_LIMIT_MB:-128}

echo "== 1. the store: pages from files on this machine, LZ4, zspage order 3"
"$b/tools/demo/zswap_demo" --mb "${ZSWAP_DEMO_MB:-256}"
echo

echo "== 2. the pager: $data_mb MiB of logs in a program limited to $limit_mb MiB:"
echo "   ZSWAP_MEMORY_LIMIT=${limit_mb}M ZSWAP_COMPRESSOR=zstd LD_PRELOAD=libzswap.so tools/demo/demo_pager --mb $data_mb"
# The demo's own ZSWAP_DEMO_* knobs are not libzswap options: keep them from it.
env -u ZSWAP_DEMO_MB -u ZSWAP_DEMO_PAGER_MB -u ZSWAP_DEMO_LIMIT_MB \
	ZSWAP_MEMORY_LIMIT="${limit_mb}M" ZSWAP_COMPRESSOR=zstd \
	LD_PRELOAD="$b/.libs/libzswap.so" "$b/tools/demo/demo_pager" --mb "$data_mb"
