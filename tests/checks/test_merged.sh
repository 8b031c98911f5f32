#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_merged.sh - no file git tracks holds a merge's conflict markers (a
# line starting "<<<<<<< " or ">>>>>>> "): a half-resolved merge compiles
# when the markers sit in a document or a comment, and the reader gets both
# sides. Fails naming each file and line. A tree that is not a git checkout
# (a release tarball) has nothing to list: the check is skipped there.
name=test_merged
. "$(dirname "$0")/git_tree.sh"

# git grep reads the working tree's tracked files; -I leaves binaries out.
found=$(git grep -n -I -E '^(<<<<<<<|>>>>>>>) ' -- . 2>/dev/null)
if [ -n "$found" ]; then
	printf '%s\n' "$found" | while IFS= read -r l; do say "FAIL: conflict marker at $l"; done
	exit 1
fi
# The checker must be able to fail: a marker in a scratch file is found.
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
printf 'a\n<<<<<<< HEAD\nb\n' > "$tmp/f"
grep -qE '^(<<<<<<<|>>>>>>>) ' "$tmp/f" || { say "FAIL: the pattern misses a marker"; exit 1; }
say "no conflict markers in the tracked files"
exit 0
