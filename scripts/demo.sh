#!/bin/sh
# The main job: a real run of libzswap over real data.
#
# The store: pages read from files on this machine are compressed into the
# zsmalloc-style pool, loaded back (exclusive loads) and verified byte for
# byte; the pool's use is printed in the kernel's terms.
set -eu
cd "$(dirname "$0")/.."
b=build
echo "== libzswap store demo: pages from /usr/share and /usr/lib, LZ4, zspage order 2"
"$b/tools/zswap_demo" --mb "${ZSWAP_DEMO_MB:-256}"
