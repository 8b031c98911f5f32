# SPDX-License-Identifier: GPL-2.0-or-later
# git_tree.sh - sourced by the checks that read the files git tracks
# (test_spdx.sh, test_merged.sh): with $name set, defines say and skip and
# enters the source tree, skipping (exit 77) where git is missing or the
# tree is not a git checkout's top (a release tarball, or one unpacked
# inside some other checkout).
srcdir=${ZSWAP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}

say() { printf '%s: %s\n' "$name" "$*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

command -v git >/dev/null 2>&1 || skip "needs git"
cd "$srcdir" || skip "no source tree at $srcdir"
top=$(git rev-parse --show-toplevel 2>/dev/null) || skip "$srcdir is not a git checkout"
[ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ] || skip "$srcdir is not a git checkout's top"
