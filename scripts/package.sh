#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build libzswap's Debian packages (debian/: libzswap0, libzswap-dev,
# zswap-tools) with dpkg-buildpackage, away from the source tree.
#
#   scripts/package.sh [--out DIR] [--no-install] [--lintian]
#
# The tree is copied to a temporary folder first (the files git tracks, as
# they are in the working tree; every file of a release tarball), since
# dpkg-buildpackage writes into debian/ and the packages into the folder
# above: nothing lands in the checkout but DIR (default ./build-deb), which
# receives the .deb files, .buildinfo, .changes and the build's log.
#   --no-install  fail instead of installing missing build dependencies
#                 (apt-get: dpkg-dev, debhelper and debian/control's)
#   --lintian     check the packages with lintian; its errors fail the run
set -eu
cd "$(dirname "$0")/.."
top=$(pwd -P)

out=$top/build-deb
install=yes
lintian=no
while [ $# -gt 0 ]; do
	case $1 in
	--out) [ $# -ge 2 ] || { echo "package: --out needs a folder" >&2; exit 2; }
		out=$2; shift ;;
	--out=*) out=${1#--out=} ;;
	--no-install) install=no ;;
	--lintian) lintian=yes ;;
	-h|--help) sed -n '3,/^set -eu/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--out DIR] [--no-install] [--lintian]" >&2; exit 2 ;;
	esac
	shift
done

# apt_install PKG...: what setup.sh does, as root or through sudo.
apt_install() {
	if [ "$install" = no ]; then
		echo "package: missing:$*; install them (or run without --no-install)" >&2
		exit 1
	fi
	echo "package: installing: $*"
	if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	$sudo apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1 || {
		$sudo apt-get update -qq
		$sudo apt-get install -y --no-install-recommends "$@"
	}
}

missing=
for p in dpkg-dev debhelper; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ "$lintian" = no ] || command -v lintian >/dev/null 2>&1 || missing="$missing lintian"
# shellcheck disable=SC2086
[ -z "$missing" ] || apt_install $missing
# debian/control's Build-Depends, as dpkg-checkbuilddeps names them ("pkg
# (>= 1.0) | other"): the first choice of each, without its version.
unmet=$(dpkg-checkbuilddeps debian/control 2>&1 |
	sed -n 's/.*Unmet build dependencies: //p' |
	sed 's/([^)]*)//g; s/|[^,]*//g; s/\[[^]]*\]//g; s/,/ /g')
# shellcheck disable=SC2086
[ -z "$unmet" ] || apt_install $unmet

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
work=$(mktemp -d "${TMPDIR:-/tmp}/libzswap-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/libzswap-$version
mkdir "$src"
# A checkout of its own, not a release tarball unpacked inside another
# checkout (make distcheck's, in the build folder).
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	# Tracked files, uncommitted edits included; a file deleted but not yet
	# committed as such is passed over.
	git -C "$top" ls-files -z | (cd "$top" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
		tar -xf - -C "$src"
else
	# A release tarball, maybe with a build folder inside (make distcheck's _build).
	tar --exclude='./.git' --exclude='./build*' --exclude='./_build' --exclude='./autom4te.cache' -cf - . |
		tar -xf - -C "$src"
fi

jobs=$(nproc 2>/dev/null || echo 1)
# Run from make (make check runs tests/checks/test_package.sh), the
# package's own make would inherit this one's variables, TESTS among them.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
echo "package: building libzswap $version in $work"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1; then
	tail -n 60 "$work/build.log" >&2
	echo "package: dpkg-buildpackage failed (the end of its output above)" >&2
	exit 1
fi

mkdir -p "$out"
cp "$work/build.log" "$out/build.log"
for f in "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes; do
	[ -e "$f" ] && cp "$f" "$out/"
done
for f in "$work"/*.deb; do
	echo "package: $out/$(basename "$f")"
done

if [ "$lintian" = yes ]; then
	changes=$(ls "$work"/*.changes)
	lintian --no-tag-display-limit "$changes" >"$work/lintian.log" 2>&1 || true
	cat "$work/lintian.log"
	if grep -q '^E: ' "$work/lintian.log"; then
		echo "package: lintian reports errors" >&2
		exit 1
	fi
	echo "package: lintian: no errors"
fi
