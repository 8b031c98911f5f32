#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_spdx.sh - every file git tracks states its licence in an SPDX line
# ("SPDX-License-Identifier: EXPRESSION", in the file's own comment syntax)
# within its first three lines, so that a packager or a user who holds one
# file knows its terms. The project is GPL-2.0-or-later (COPYING); a file of
# another origin is listed in origin() with its own expression, and
# debian/copyright gives it a stanza of its own. Fails naming each file
# without its line, with another expression, or of another origin that
# debian/copyright does not name.
#
# Every tracked file is checked, documents included (an HTML comment atop a
# Markdown file), except those skip() lists, each for a reason: files whose
# format has no room for the line, or that are data rather than text written
# to be read. Generated files (configure, Makefile.in, aclocal.m4,
# build-aux/, m4/, config.h.in) are not tracked, so never checked. A tree
# that is not a git checkout (a release tarball) has nothing to list: the
# check is skipped there.
name=test_spdx
project=GPL-2.0-or-later
. "$(dirname "$0")/git_tree.sh"

# skip FILE: true for a file that carries no SPDX line, and why.
skip_file() {
	case $1 in
	# The licence's own text.
	COPYING) return 0 ;;
	# Fuzzer seeds: bytes the targets read as they are.
	tests/fuzz/corpus/*) return 0 ;;
	# debian/copyright states every file's licence itself; dpkg and
	# debhelper read the others from their first line, with no comments
	# (changelog, control, source/format) or as lists of paths.
	debian/copyright | debian/changelog | debian/control | debian/source/format | \
	debian/*.install) return 0 ;;
	esac
	# A man page that is only a ".so" link to another: man-db and
	# dh_installman take it for a link by its first line, and it has no
	# text of its own.
	case $1 in
	man/*) [ "$(wc -l <"$1")" -le 1 ] && head -n 1 "$1" | grep -q '^\.so ' && return 0 ;;
	esac
	return 1
}

# origin FILE: the SPDX expression FILE carries.
origin() {
	case $1 in
	# The kernel's uapi definitions newer than the installed headers,
	# under the kernel's terms for its uapi headers.
	src/base/compat.h) echo "GPL-2.0-only WITH Linux-syscall-note" ;;
	*) echo "$project" ;;
	esac
}

failed=0
files=$(git ls-files) || skip "git ls-files failed"
checked=0
for f in $files; do
	[ -f "$f" ] || continue	# deleted, not yet committed as such
	skip_file "$f" && continue
	checked=$((checked + 1))
	want=$(origin "$f")
	# The expression, without the comment's closing ("*/", "-->").
	got=$(head -n 3 "$f" | sed -n 's/.*SPDX-License-Identifier: *//p' | head -n 1 |
		sed 's/[[:space:]]*\(\*\/\|-->\)[[:space:]]*$//; s/[[:space:]]*$//')
	if [ -z "$got" ]; then
		say "$f: no SPDX-License-Identifier line in its first 3 lines (want: $want)"
		failed=1
	elif [ "$got" != "$want" ]; then
		say "$f: SPDX-License-Identifier: $got, not $want"
		failed=1
	elif [ "$want" != "$project" ] && ! grep -q "^Files:.*[[:space:]]$f\([[:space:]]\|$\)" debian/copyright; then
		say "$f: $want, but debian/copyright has no Files: stanza naming it"
		failed=1
	fi
done
[ -f COPYING ] || { say "no COPYING at the top of the tree"; failed=1; }

if [ "$failed" != 0 ]; then
	say "FAILED (new files start with the SPDX line: docs/HACKING.md)"
	exit 1
fi
say "ok: $checked files"
exit 0
