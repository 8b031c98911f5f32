#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_paths.sh - every path under tools/, tests/ or scripts/ that the
# documents, the man pages and the scripts name exists: a file or folder of
# the source tree, or a program mk/*.am builds. A moved or renamed file
# leaves no command in the documents that no longer runs as written.
# A path with a placeholder in it (test_name.c, corpus/TARGET, fuzz_) is a
# pattern, not a path, and is skipped.
srcdir=${ZSWAP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$srcdir" || exit 1
[ -d .git ] || [ -f .git ] || { echo "test_paths: $srcdir is not a git checkout" >&2; exit 77; }
command -v git > /dev/null || { echo "test_paths: needs git" >&2; exit 77; }

fail=0
paths=$(git grep -ohE '(^|[^A-Za-z0-9_./$-])(tools|tests|scripts)/[A-Za-z0-9_./-]*[A-Za-z0-9_]' -- \
	README.md 'docs/*.md' 'docs/bench/*.md' 'tools/README.md' 'man/*' \
	'scripts/*.sh' 'tools/bench/*.sh' 'tools/bench/*.py' 'tests/soak/*.sh' \
	'tests/peer/*.sh' 'tests/peer/*.py' 'tests/fuzz/*.sh' |
	sed -E 's#^[^a-z]##' | sort -u)
for p in $paths; do
	case $p in
	*[A-Z]* | *name* | *_) continue ;;
	esac
	[ -e "$p" ] && continue
	grep -qwF "$p" mk/*.am && continue
	echo "test_paths: $p is named but is neither in the tree nor built by mk/*.am:" >&2
	git grep -nF "$p" -- README.md docs man scripts tools tests mk | sed 's/^/  /' | head -5 >&2
	fail=1
done
exit $fail
