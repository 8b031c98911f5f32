#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_layers.sh - the source tree's layers hold (docs/HACKING.md).
#
# src/ has one folder per layer, lowest first:
#   base core engine reclaim observe shim
# A file may include headers of its own layer and of the layers below, never
# of one above; every library header is included with its folder
# ("engine/fault.h"); and the modules (a .c with its .h) include each other
# in no cycle. Fails, naming each include at fault, otherwise.
srcdir=${ZSWAP_SRCDIR:-$(dirname "$0")/../..}
name=test_layers
layers="base core engine reclaim observe shim"

say() { printf '%s: %s\n' "$name" "$*" >&2; }

[ -d "$srcdir/src/base" ] || { say "ERROR: no $srcdir/src/base"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# check ROOT: print a FAIL line per fault under ROOT/src; 1 if any.
check() {
	root=$1
	fail=0
	# Every file in a layer folder, and anything else under src/ that is code.
	for f in "$root"/src/*.[ch]; do
		[ -e "$f" ] || continue
		say "FAIL: ${f#"$root"/} is in no layer folder"
		fail=1
	done

	# Edges "FROM_LAYER FROM_MODULE TO_LAYER TO_MODULE FILE" for every
	# #include "..." of a library header.
	for l in $layers; do
		for f in "$root"/src/$l/*.[ch]; do
			[ -e "$f" ] || continue
			m=$(basename "$f"); m=${m%.?}
			sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" |
				while read -r h; do
					case $h in
					config.h|zswap.h) ;;	# generated, and the public API
					*/*) printf '%s %s %s %s %s\n' "$l" "$m" "${h%%/*}" "$(basename "$h" .h)" "${f#"$root"/}" ;;
					*) printf '%s %s %s %s %s\n' "$l" "$m" "-" "$h" "${f#"$root"/}" ;;
					esac
				done
		done
	done > "$tmp/edges"

	awk -v order="$layers" '
	BEGIN { n = split(order, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i }
	{
		from = $1 "/" $2; to = $3 "/" $4
		if ($3 == "-") { printf "FAIL: %s includes \"%s\" without its folder\n", $5, $4; bad = 1; next }
		if (!($3 in rank)) { printf "FAIL: %s includes %s/%s.h: no such layer\n", $5, $3, $4; bad = 1; next }
		if (rank[$3] > rank[$1]) {
			printf "FAIL: %s (layer %s) includes %s/%s.h, a layer above\n", $5, $1, $3, $4; bad = 1
		}
		if (from != to && !((from, to) in seen)) { seen[from, to] = 1; adj[from] = adj[from] " " to; nodes[from] = 1; nodes[to] = 1 }
	}
	function visit(v,    k, ws, w, i, c) {
		color[v] = 1; path[++depth] = v
		k = split(adj[v], ws, " ")
		for (i = 1; i <= k; i++) {
			w = ws[i]
			if (color[w] == 1) {
				c = w
				for (j = depth; j >= 1 && path[j] != w; j--) c = path[j] " -> " c
				printf "FAIL: a cycle of includes: %s -> %s\n", w, substr(c, length(w) + 5) == "" ? w : c
				bad = 1
			} else if (!color[w]) visit(w)
		}
		depth--; color[v] = 2
	}
	END {
		for (v in nodes) if (!color[v]) visit(v)
		exit bad
	}' "$tmp/edges" >&2 || fail=1

	return $fail
}

# The checker must be able to fail: an upward include and a cycle.
mkdir -p "$tmp/bad/src/base" "$tmp/bad/src/engine"
printf '#include "engine/b.h"\n' > "$tmp/bad/src/base/a.h"
printf '#include "engine/c.h"\n' > "$tmp/bad/src/engine/b.c"
printf '#include "engine/b.h"\n' > "$tmp/bad/src/engine/c.c"
: > "$tmp/bad/src/engine/b.h"
: > "$tmp/bad/src/engine/c.h"
if check "$tmp/bad" 2> "$tmp/self"; then
	say "ERROR: the checker accepted an upward include and a cycle"; exit 99
fi
grep -q 'a layer above' "$tmp/self" && grep -q 'a cycle of includes' "$tmp/self" ||
	{ say "ERROR: the checker's self-test failed for the wrong reason:"; cat "$tmp/self" >&2; exit 99; }

check "$srcdir"
if [ "$fail" != 0 ]; then
	say "FAILED"
	exit 1
fi
say "ok ($(wc -l < "$tmp/edges") includes, no upward one, no cycle)"
exit 0
