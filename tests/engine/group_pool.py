# SPDX-License-Identifier: GPL-2.0-or-later
# A multiprocessing Pool of four workers, each building N records of
# 0.6-3 KiB (about 30 MiB for N = 16,000) and checking them once; prints a
# CRC a worker. Usage: group_pool.py fork|forkserver|spawn N
# (tests/engine/test_eng_group_pool.sh, tools/bench/bench_group.sh).
import sys, zlib, multiprocessing as mp
def work(k):
    n = int(sys.argv[2])
    rec = [("%08d w%d GET /api/v1/items/%d status=%d %s" % (i, k, i % 5000, 200 if i % 17 else 404,
            "x" * (600 + (i * 37 + k) % 2500))).encode() for i in range(n)]
    crc = 0
    for r in rec:
        crc = zlib.crc32(r, crc)
    return "worker %d records %d crc %08x" % (k, n, crc)
if __name__ == "__main__":
    mp.set_start_method(sys.argv[1])
    with mp.Pool(4) as pool:
        for line in pool.map(work, range(4)):
            print(line)
