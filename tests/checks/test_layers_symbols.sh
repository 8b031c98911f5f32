#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_layers_symbols.sh - the layers hold in the compiled objects too.
#
# test_layers.sh reads the includes; a call can still run up the layers
# without one: a libc name the shim interposes (close, malloc...) binds, in
# libzswap.so, to the shim's own definition, and a function declared by hand
# or through the public header (zswap.h) links to whatever layer defines it.
# This reads the objects of libzswap.so in the build tree
# (src/LAYER/.libs/*.o, as test_hygiene.sh does) with nm and fails, naming
# the symbol and both files:
#   - on an object whose undefined symbol is defined by an object of a
#     layer above its own (layers, lowest first:
#     base core engine reclaim observe shim);
#   - on an object outside src/shim that defines a libc entry point the
#     library interposes: the names src/shim/libzswap.map exports, less the
#     public API (zswap_*).
builddir=${ZSWAP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
srcdir=${ZSWAP_SRCDIR:-$(dirname "$0")/../..}
name=test_layers_symbols
layers="base core engine reclaim observe shim"

say() { printf '%s: %s\n' "$name" "$*" >&2; }

command -v nm >/dev/null 2>&1 || { say "SKIP: nm (binutils) is not installed"; exit 77; }
map=$srcdir/src/shim/libzswap.map
[ -r "$map" ] || { say "ERROR: no $map"; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

# The interposed libc names: the export list's global names but the API's.
awk '/global:/ { on = 1; next } /local:/ { on = 0 }
     on { gsub(/[ \t;]/, ""); if ($0 != "" && $0 !~ /^zswap_/) print }' "$map" | sort -u > "$tmp/interposed"
[ -s "$tmp/interposed" ] || { say "ERROR: no interposed names in $map"; exit 99; }

# check ROOT: print a FAIL line per fault in ROOT/src/*/.libs/*.o; 1 if any.
check() {
	root=$1
	: > "$tmp/defs"
	: > "$tmp/undefs"
	for l in $layers; do
		for o in "$root"/src/$l/.libs/*.o; do
			[ -e "$o" ] || continue
			src=src/$l/$(basename "$o" .o).c
			# Global definitions (upper-case types but U; weak ones too).
			nm --defined-only "$o" | awk -v l="$l" -v f="$src" \
				'NF >= 3 && $2 ~ /^[A-TV-Z]$/ { print $3, l, f }' >> "$tmp/defs"
			nm -u "$o" | awk -v l="$l" -v f="$src" \
				'{ s = $NF; sub(/@.*/, "", s); print s, l, f }' >> "$tmp/undefs"
		done
	done
	[ -s "$tmp/defs" ] || { say "ERROR: no objects under $root/src/*/.libs (make builds them)"; return 2; }
	awk -v order="$layers" '
	BEGIN { n = split(order, L, " "); for (i = 1; i <= n; i++) rank[L[i]] = i }
	FILENAME == ARGV[1] { interposed[$1] = 1; next }
	FILENAME == ARGV[2] {
		if (!($1 in def)) { def[$1] = $2; deffile[$1] = $3 }
		if (($1 in interposed) && $2 != "shim") {
			printf "FAIL: %s (layer %s) defines %s, a libc entry point the library interposes: only src/shim may\n", $3, $2, $1
			bad = 1
		}
		next
	}
	($1 in def) && rank[def[$1]] > rank[$2] {
		printf "FAIL: %s (layer %s) uses %s, defined by %s (layer %s), a layer above\n", $3, $2, $1, deffile[$1], def[$1]
		bad = 1
	}
	END { exit bad }' "$tmp/interposed" "$tmp/defs" "$tmp/undefs" >&2
}

# The checker must be able to fail: a base object calling an engine
# function, a core object calling the shim's close, and a reclaim object
# defining malloc.
cc=${ZSWAP_CC:-${CC:-cc}}
if command -v "$cc" >/dev/null 2>&1; then
	b=$tmp/bad/src
	mkdir -p "$b/base/.libs" "$b/core/.libs" "$b/engine/.libs" "$b/reclaim/.libs" "$b/shim/.libs"
	printf 'int engine_x(void);\nint base_y(void);\nint base_y(void) { return engine_x(); }\n' > "$tmp/a.c"
	printf 'int engine_x(void);\nint engine_x(void) { return 1; }\n' > "$tmp/b.c"
	printf '#include <unistd.h>\nint core_z(int);\nint core_z(int fd) { return close(fd); }\n' > "$tmp/c.c"
	printf '#include <stddef.h>\nint close(int);\nint close(int fd) { return fd; }\n' > "$tmp/d.c"
	printf '#include <stddef.h>\nvoid *malloc(size_t);\nvoid *malloc(size_t n) { return (void *)n; }\n' > "$tmp/e.c"
	"$cc" -c -o "$b/base/.libs/a.o" "$tmp/a.c" && "$cc" -c -o "$b/engine/.libs/b.o" "$tmp/b.c" &&
	"$cc" -c -o "$b/core/.libs/c.o" "$tmp/c.c" && "$cc" -fno-builtin -c -o "$b/shim/.libs/d.o" "$tmp/d.c" &&
	"$cc" -fno-builtin -c -o "$b/reclaim/.libs/e.o" "$tmp/e.c" ||
		{ say "ERROR: $cc cannot compile the checker's self-test"; exit 99; }
	if check "$tmp/bad" 2> "$tmp/self"; then
		say "ERROR: the checker accepted calls up the layers and a libc name defined outside the shim"; exit 99
	fi
	grep -q 'src/base/a.c (layer base) uses engine_x, defined by src/engine/b.c' "$tmp/self" &&
	grep -q 'src/core/c.c (layer core) uses close, defined by src/shim/d.c' "$tmp/self" &&
	grep -q 'src/reclaim/e.c (layer reclaim) defines malloc' "$tmp/self" ||
		{ say "ERROR: the checker's self-test failed for the wrong reason:"; cat "$tmp/self" >&2; exit 99; }
else
	say "note: no C compiler ($cc): the checker's self-test is skipped"
fi

check "$builddir"
case $? in
0) ;;
2) exit 99 ;;
*) say "FAILED"; exit 1 ;;
esac
say "ok ($(wc -l < "$tmp/undefs") undefined symbols in $(cut -d' ' -f3 "$tmp/defs" | sort -u | wc -l) objects, none defined above; $(wc -l < "$tmp/interposed") interposed names, defined in src/shim only)"
exit 0
