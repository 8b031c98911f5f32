#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench_reclaim_ab.sh - libzswap builds side by side under a memory limit:
# tools/bench/bench_reclaim under LD_PRELOAD of each build in turn, run by run
# (A B C A B C ...), so that load from elsewhere falls on every build alike.
# A benchmark, not a test: it prints figures and judges none.
#
# Usage: tools/bench/bench_reclaim_ab.sh [--runs N] [--patterns "uniform hotcold"]
#            [--threads "1 2"] [--size W] [--limit L] [--bench PATH]
#            [--env "ZSWAP_VAR=VALUE ..."] [--out FILE]
#            NAME=LIBZSWAP.so[,VAR=VALUE...] [NAME=LIBZSWAP.so ...]
# --env sets options for every build alike (e.g. ZSWAP_COMPRESSOR=lzo);
# VAR=VALUE after a build's library, comma-separated, for that build only
# (e.g. ft1=.libs/libzswap.so,ZSWAP_FAULT_THREADS=1: one library, two
# configurations);
# any other ZSWAP_ variable in the environment is unset.
# Prints one line per run (RESULT fields: wall_ms, refaults, bad_pages,
# vmhwm_mb) to FILE (default /tmp/bench_reclaim_ab.raw) and a table: per
# pattern, threads and build, the median wall_ms with the min..max of the
# runs, the median refaults and the highest peak RSS (VmHWM, MiB).
set -u
runs=3 patterns="uniform hotcold" threads="1 2" size=512M limit=320M bench= out=/tmp/bench_reclaim_ab.raw libenv=
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift 2 ;;
	--patterns) patterns=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--bench) bench=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--env) libenv=$2; shift 2 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*=*) break ;;
	*) echo "bench_reclaim_ab.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "bench_reclaim_ab.sh: no builds given (NAME=LIB.so)" >&2; exit 2; }
bench=${bench:-$(pwd)/tools/bench/bench_reclaim}
[ -x "$bench" ] || { echo "bench_reclaim_ab.sh: no $bench" >&2; exit 1; }
for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
: > "$out"
echo "date $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >&2
i=1
while [ $i -le "$runs" ]; do
	for p in $patterns; do
		for t in $threads; do
			for b in "$@"; do
				name=${b%%=*} lib=${b#*=} own=
				case "$lib" in *,*) own=$(echo "${lib#*,}" | tr ',' ' ') lib=${lib%%,*} ;; esac
				# shellcheck disable=SC2086 # --env and own are lists of words
				line=$(env $libenv $own LD_PRELOAD="$lib" ZSWAP_MEMORY_LIMIT="$limit" "$bench" --size "$size" \
					--pattern "$p" --threads "$t" 2>/dev/null | grep '^RESULT ')
				w=$(echo "$line" | sed -n 's/.* wall_ms=\([0-9]*\).*/\1/p')
				r=$(echo "$line" | sed -n 's/.* refaults=\([0-9]*\).*/\1/p')
				bad=$(echo "$line" | sed -n 's/.* bad_pages=\([0-9]*\).*/\1/p')
				hwm=$(echo "$line" | sed -n 's/.* vmhwm_mb=\([0-9.]*\).*/\1/p')
				echo "$p $t $name $i wall_ms=${w:-fail} refaults=${r:--} bad_pages=${bad:--} vmhwm_mb=${hwm:--}" | tee -a "$out" >&2
			done
		done
	done
	i=$((i + 1))
done
echo "date $(date -u +%H:%M:%S) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >&2
awk '
function med(s,   n, a, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	lo = a[1]; hi = a[n]; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ k = $1 " " $2 " " $3; sub(/wall_ms=/, "", $5); sub(/refaults=/, "", $6); sub(/vmhwm_mb=/, "", $8)
	w[k] = w[k] " " $5; r[k] = r[k] " " $6; if (!(k in seen)) { seen[k] = 1; o[++n] = k; p[k] = "-" }
	if ($8 != "-" && (p[k] == "-" || $8 + 0 > p[k] + 0)) p[k] = $8 }
END { print "| pattern | threads | build | wall ms median (min..max) | refaults median | peak MiB |"; print "|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++) { k = o[i]; m = med(w[k]); l = lo; h = hi; split(k, f, " ")
		printf "| %s | %s | %s | %s (%s..%s) | %s | %s |\n", f[1], f[2], f[3], m, l, h, med(r[k]), p[k] } }' "$out"
