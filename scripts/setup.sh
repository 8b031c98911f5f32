#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Set libzswap up on a fresh Debian 12 machine and run the main job.
#
#   scripts/setup.sh              install what is missing, build, run the demo
#   scripts/setup.sh --build-only install what is missing and build
#
# Packages come from apt-get (as root, or through sudo). The build goes to
# ./build (an out-of-tree build inside the checkout).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

mode=demo
case "${1:-}" in
	--build-only) mode=build ;;
	"") ;;
	*) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

# --- packages --------------------------------------------------------------
pkgs="gcc make autoconf automake libtool pkg-config liblz4-dev libzstd-dev liblzo2-dev libsodium-dev libxxhash-dev libunwind-dev util-linux"
# What tests run besides the library's own programs (make check skips a
# test whose program is missing): real programs nobody here wrote.
# dpkg-dev and debhelper: tests/checks/test_package.sh builds the Debian packages.
# tmux: tests/engine/test_eng_top.sh runs zswapctl top in a real terminal.
# postgresql-15: tests/engine/test_eng_postgres.sh runs a server of its own
# (initdb, postgres, pgbench, psql from /usr/lib/postgresql/15/bin).
test_pkgs="python3 redis-server redis-tools nodejs openjdk-17-jdk-headless sqlite3 time libmimalloc2.0 libjemalloc2 dpkg-dev debhelper tmux postgresql-15"
missing=
for p in $pkgs $test_pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing:$missing"
	if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	# A fresh machine may have no package lists yet: update only if the install fails.
	$sudo apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
		$sudo apt-get update -qq
		$sudo apt-get install -y --no-install-recommends $missing
	}
fi

# --- build -----------------------------------------------------------------
if [ ! -x configure ] || [ configure.ac -nt configure ] ||
   [ -n "$(find Makefile.am mk -newer configure 2>/dev/null | head -n 1)" ]; then
	./autogen.sh
fi
mkdir -p build
cd build
if [ ! -f Makefile ] || [ ../configure -nt Makefile ]; then
	../configure -q
fi
make -j"$(nproc)" >/dev/null
echo "setup: built libzswap in $top/build"

[ "$mode" = build ] && exit 0

# --- the main job ----------------------------------------------------------
exec "$top/scripts/demo.sh"
