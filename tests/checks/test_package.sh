#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages (debian/, scripts/package.sh): they build from a copy
# of the tree, carry what `make install` installs (dh_missing fails the
# build otherwise) where Debian wants it, and work unpacked into a scratch
# root (dpkg -x, never installed on this system): the packaged zswapctl
# runs a program under the packaged library, whose statistics dump at exit
# shows it active with the options given; zswapctl's default library is the
# path the runtime package puts it at; a program builds against the
# development package through its pkg-config file. lintian, when installed,
# must report no error.
set -u
name=test_package
srcdir=${ZSWAP_SRCDIR:-$(dirname "$0")/../..}
failed=0

say() { printf '%s: %s\n' "$name" "$*" >&2; }
fail() { say "FAIL: $*"; failed=1; }
skip() { say "SKIP: $*"; exit 77; }

command -v dpkg-buildpackage >/dev/null 2>&1 || skip "dpkg-buildpackage is missing (dpkg-dev; scripts/setup.sh installs it)"
command -v dh >/dev/null 2>&1 || skip "dh is missing (debhelper; scripts/setup.sh installs it)"
unmet=$(dpkg-checkbuilddeps "$srcdir/debian/control" 2>&1) ||
	skip "build dependencies missing: ${unmet#*: } (scripts/package.sh installs them)"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) || skip "dpkg-architecture failed"
version=$(dpkg-parsechangelog -l "$srcdir/debian/changelog" -S Version) || skip "debian/changelog unreadable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || skip "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD ZSWAPCTL_LIBRARY
for v in $(env | sed -n 's/^\(ZSWAP_[A-Za-z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

lint=
command -v lintian >/dev/null 2>&1 && lint=--lintian
start=$(date +%s)
if ! "$srcdir/scripts/package.sh" --no-install $lint --out "$tmp/debs" >"$tmp/package.log" 2>&1; then
	tail -n 40 "$tmp/package.log" >&2
	fail "scripts/package.sh failed"
	exit 1
fi
say "packages built in $(( $(date +%s) - start )) s${lint:+, lintian without errors}"
grep '^[EW]: ' "$tmp/package.log" >&2

root=$tmp/root
mkdir "$root"
for p in libzswap0 libzswap-dev zswap-tools; do
	deb=$(ls "$tmp/debs/${p}_${version}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		fail "no package $p ${version} in $(ls "$tmp/debs" | tr '\n' ' ')"
		continue
	fi
	dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb failed"
done
[ "$failed" = 0 ] || exit 1

libdir=/usr/lib/$ma
for f in "$libdir/libzswap.so.0" "$libdir/libzswap.so" "$libdir/pkgconfig/libzswap.pc" \
	/usr/include/zswap.h /usr/bin/zswapctl /usr/share/man/man1/zswapctl.1.gz \
	/usr/share/man/man7/libzswap.7.gz /usr/share/man/man3/zswap.3.gz \
	/usr/share/man/man3/zswap_pageout.3.gz; do
	[ -e "$root$f" ] || fail "no $f in the packages"
done
[ -e "$root$libdir/libzswap.la" ] && fail "the packages carry libtool's $libdir/libzswap.la"
# What the library loads at start (src/base/dynlib.h): dpkg-shlibdeps
# sees no DT_NEEDED entry for them, debian/control names them.
deps=$(dpkg-deb -f "$tmp/debs/libzswap0_${version}_"*.deb Depends)
for d in libzstd1 liblzo2-2 libsodium23; do
	printf '%s\n' "$deps" | grep -qw "$d" || fail "libzswap0 does not depend on $d (loaded at start): $deps"
done
dpkg-deb -f "$tmp/debs/zswap-tools_${version}_"*.deb Depends | grep -q "libzswap0 (= $version)" ||
	fail "zswap-tools does not depend on libzswap0 (= $version)"

# zswapctl's library when nothing else is said: where libzswap0 puts it.
ctl=$root/usr/bin/zswapctl
default=$("$ctl" run --help | sed -n 's/^ *\(\/.*libzswap\.so\.[0-9]*\))$/\1/p')
[ "$default" = "$libdir/libzswap.so.0" ] ||
	fail "zswapctl's default library is '$default', the package's is $libdir/libzswap.so.0"

# The packaged tool runs a program under the packaged library.
lib=$root$libdir/libzswap.so.0
LD_LIBRARY_PATH=$root$libdir timeout -k 5 60 "$ctl" run --lib "$lib" --limit 64M -o cold_age=5 \
	-o stats_at_exit=1 -o stats_file="$tmp/dump.%p" -- grep -c "$root$libdir/libzswap" /proc/self/maps \
	>"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
if [ "$rc" != 0 ]; then
	cat "$tmp/run.err" >&2
	fail "zswapctl run from the packages exited $rc"
elif ! [ "$(cat "$tmp/run.out")" -gt 0 ] 2>/dev/null; then
	fail "the packaged library is not mapped in the program"
else
	dump=$(ls "$tmp"/dump.* 2>/dev/null | head -n 1)
	if [ -z "$dump" ]; then
		grep -q 'userfaultfd unavailable' "$tmp/run.err" && skip "$(grep -m1 '^libzswap:' "$tmp/run.err")"
		cat "$tmp/run.err" >&2
		fail "no statistics dump at exit from the packaged library"
	else
		for want in ZSWAP_MEMORY_LIMIT=64M ZSWAP_COLD_AGE=5; do
			grep -qx "$want" "$dump" || fail "the dump's configuration has no line $want"
		done
		head -n 1 "$dump" | grep -q "^libzswap $version " ||
			fail "the dump's first line is not libzswap $version's: $(head -n 1 "$dump")"
	fi
fi

# A program built against libzswap-dev, with its pkg-config file (its
# prefix moved to the scratch root), runs with the packaged library.
cc=${ZSWAP_CC:-cc}
if command -v pkg-config >/dev/null 2>&1; then
	cat >"$tmp/ver.c" <<'EOF'
#include <stdio.h>
#include <zswap.h>
int main(void) { puts(zswap_version()); return 0; }
EOF
	# shellcheck disable=SC2046
	if $cc -o "$tmp/ver" "$tmp/ver.c" $(PKG_CONFIG_PATH=$root$libdir/pkgconfig \
		pkg-config --define-variable=prefix="$root/usr" --cflags --libs libzswap) \
		2>"$tmp/cc.err"; then
		got=$(LD_LIBRARY_PATH=$root$libdir ZSWAP_ENABLED=0 "$tmp/ver")
		case $got in
		*"$version"*) ;;
		*) fail "zswap_version() of the packaged library says '$got', not $version" ;;
		esac
	else
		cat "$tmp/cc.err" >&2
		fail "a program does not build against libzswap-dev"
	fi
fi

if [ "$failed" != 0 ]; then
	say "FAILED"
	exit 1
fi
say "ok"
exit 0
