#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_sock.sh - the statistics socket against another local user and
# slow clients (src/observe/sock.c, libzswap(7) FILES):
#  - /tmp/libzswap-UID made by another user first: the process still offers
#    a socket, in a /tmp/libzswap-UID.XXXXXX of its own, reused by the next;
#  - an XDG_RUNTIME_DIR longer than sun_path holds: still a socket;
#  - XDG_RUNTIME_DIR/libzswap a link to another directory: refused, the
#    next directory used;
#  - the directory renamed and replaced by a link while the process runs:
#    the socket is removed at exit from the directory it was made in, and
#    the file at the new path is left alone;
#  - a client that sends a byte a second and never a newline holds the
#    statistics thread for its 2 s at most: a dump the signal asks for
#    meanwhile is written long before the client would be done.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ "$(id -u)" = 0 ] || eng_skip "needs root (another user's directory, user nobody)"
prog=$(eng_prog prog_stats)
client=$(eng_prog prog_sockclient)

# serve LABEL AS VAR=VALUE...: prog_stats serving under the library, as
# root or as nobody (given CAP_SYS_PTRACE for its userfaultfd, with
# $ENG_TMP/tmp for /tmp and no /run/user/65534, in a mount namespace of its
# own: /tmp/libzswap-65534 is other tests' too), without XDG_RUNTIME_DIR
# unless a VAR gives one, until stop; its pid in pid. As nobody, the program
# and the library are the copies in $ENG_TMP/tmp/bin: the build tree may be
# under the /tmp the namespace hides.
serve() {
	label=$1 as=$2
	shift 2
	sprog=$prog preload=$ENG_PRELOAD
	[ "$as" = nobody ] && sprog=/tmp/bin/prog_stats preload=/tmp/bin/libzswap.so
	set -- env -u XDG_RUNTIME_DIR LD_PRELOAD="$preload" ZSWAP_MIN_REGION=64K "$@" \
		"$sprog" serve 4 0 0 /dev/null 0
	[ "$as" = nobody ] && set -- unshare -m sh -c 'mount --bind "$1" /tmp &&
		{ [ ! -d /run/user ] || mount -t tmpfs -o mode=755 tmpfs /run/user; } && shift && exec "$@"' \
		sh "$ENG_TMP/tmp" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace "$@"
	rm -f "$ENG_TMP/hold"
	mkfifo "$ENG_TMP/hold" || eng_skip "mkfifo failed"
	timeout "$ENG_TIMEOUT" "$@" < "$ENG_TMP/hold" > "$ENG_TMP/$label.out" 2> "$ENG_TMP/$label.err" &
	bg=$!
	exec 9> "$ENG_TMP/hold"	# the program runs until this closes
	pid=
	for _ in $(seq 600); do
		pid=$(awk '$1 == "ready" { print $2 }' "$ENG_TMP/$label.out")
		[ -n "$pid" ] && return 0
		kill -0 $bg 2>/dev/null || break
		sleep 0.1
	done
	eng_fail "$label: the program did not get ready: $(cat "$ENG_TMP/$label.err")"
	stop
	return 1
}

stop() {
	exec 9>&-
	wait $bg || eng_fail "$label: the program failed: $(cat "$ENG_TMP/$label.err")"
}

# ask SOCKET: a text dump through it, which must be this process's.
ask() {
	timeout "$ENG_TIMEOUT" "$client" ask "$1" text > "$ENG_TMP/$label.ask" 2>&1 &&
		grep -q "statistics: pid $pid " "$ENG_TMP/$label.ask" ||
		eng_fail "$label: no dump of pid $pid through $1: $(head -n 3 "$ENG_TMP/$label.ask")"
}

# 1. /tmp/libzswap-65534 made by root before nobody's first process, and no
# /run/user/65534: nobody's processes make and then reuse a directory of
# their own beside it.
nob=65534
case=tmp-taken
tmp=$ENG_TMP/tmp
if ! command -v unshare >/dev/null 2>&1 || ! unshare -m true 2>/dev/null; then
	eng_say "$case: skipped: no mount namespace for a /tmp of its own (unshare -m)"
elif ! setpriv --reuid=$nob --regid=$nob --clear-groups --inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace true 2>/dev/null; then
	eng_say "$case: skipped: setpriv cannot give user nobody CAP_SYS_PTRACE (--ambient-caps) for its userfaultfd"
elif [ -n "$ENG_SAN_PRELOAD" ]; then
	eng_say "$case: skipped: the sanitizer's runtime is preloaded too (the namespace's /tmp holds the library alone)"
else
	mkdir -m 1777 "$tmp"
	mkdir -m 755 "$tmp/bin"
	cp -L "$prog" "$tmp/bin/prog_stats" && cp -L "$ENG_LIB" "$tmp/bin/libzswap.so" &&
		chmod 755 "$tmp/bin/prog_stats" "$tmp/bin/libzswap.so" || eng_fail "$case: cannot copy the program and the library"
	mkdir -m 700 "$tmp/libzswap-$nob"
	dirs=
	for run in 1 2; do
		serve $case-$run nobody || continue
		sock=$(ls "$tmp"/libzswap-$nob.*/$pid.sock 2>/dev/null | head -n 1)
		if [ -S "$sock" ]; then
			ask "$sock"
			d=$(dirname "$sock")
			[ "$(stat -c '%u %a' "$d")" = "$nob 700" ] ||
				eng_fail "$case: $d is $(stat -c '%u %a' "$d"), not $nob's with mode 700"
			dirs="$dirs $d"
		else
			eng_fail "$label: no socket in a /tmp/libzswap-$nob.* ($(ls -d "$tmp"/libzswap-$nob* | tr '\n' ' '))"
		fi
		stop
		[ -z "$sock" ] || [ ! -e "$sock" ] || eng_fail "$label: $sock is still there after exit"
	done
	set -- $dirs
	[ $# != 2 ] || [ "$1" = "$2" ] || eng_fail "$case: the second process made $2 instead of reusing $1"
fi

# 2. An XDG_RUNTIME_DIR of 150 characters: "$dir/libzswap/PID.sock" does
# not fit in sun_path (108 bytes).
label=long-xdg
long=$ENG_TMP/
while [ ${#long} -lt 150 ]; do long=${long}x; done
long=${long%/}
mkdir -p -m 700 "$long"
if serve $label root XDG_RUNTIME_DIR="$long"; then
	sock=
	for d in "$long/libzswap" /run/user/0/libzswap /run/libzswap; do
		[ -S "$d/$pid.sock" ] && { sock=$d/$pid.sock; break; }
	done
	if [ -n "$sock" ]; then ask "$sock"; else eng_fail "$label: no socket anywhere"; fi
	stop
fi

# 3. XDG_RUNTIME_DIR/libzswap a link to a private directory of root's:
# not followed.
label=xdg-link
xdg=$ENG_TMP/xdg-link
mkdir -m 700 "$xdg" "$ENG_TMP/elsewhere"
ln -s ../elsewhere "$xdg/libzswap"
if serve $label root XDG_RUNTIME_DIR="$xdg"; then
	[ ! -e "$ENG_TMP/elsewhere/$pid.sock" ] || eng_fail "$label: the socket was made through the link"
	sock=
	for d in /run/user/0/libzswap /run/libzswap; do
		[ -S "$d/$pid.sock" ] && { sock=$d/$pid.sock; break; }
	done
	if [ -n "$sock" ]; then ask "$sock"; else eng_fail "$label: no socket in the next directory"; fi
	stop
fi

# 4. The directory swapped for a link after the check: the exit removes the
# socket where it was made, not the file the path now leads to.
label=swapped
xdg=$ENG_TMP/xdg-swap
mkdir -m 700 "$xdg" "$ENG_TMP/decoy"
if serve $label root XDG_RUNTIME_DIR="$xdg"; then
	if [ -S "$xdg/libzswap/$pid.sock" ]; then
		mv "$xdg/libzswap" "$xdg/moved"
		: > "$ENG_TMP/decoy/$pid.sock"
		ln -s ../decoy "$xdg/libzswap"
		stop
		[ -e "$ENG_TMP/decoy/$pid.sock" ] || eng_fail "$label: the exit removed the file the swapped path leads to"
		[ ! -e "$xdg/moved/$pid.sock" ] || eng_fail "$label: the socket is still there after exit"
	else
		eng_fail "$label: no socket at $xdg/libzswap/$pid.sock"
		stop
	fi
fi

# 5. A client dribbling its request (a byte a second, for 20 s) while a dump
# is asked for by the signal: the dump comes once the client's 2 s are up.
label=slow
xdg=$ENG_TMP/xdg-slow
mkdir -m 700 "$xdg"
if serve $label root XDG_RUNTIME_DIR="$xdg" ZSWAP_STATS_FILE="$ENG_TMP/slow.dump"; then
	sock=$xdg/libzswap/$pid.sock
	timeout "$ENG_TIMEOUT" "$client" dribble "$sock" 20 > "$ENG_TMP/slow.client" 2>&1 &
	cl=$!
	for _ in $(seq 100); do
		grep -q connected "$ENG_TMP/slow.client" && break
		sleep 0.1
	done
	sleep 1	# the thread is reading the client's bytes
	kill -USR1 "$pid"
	got=0
	for _ in $(seq 80); do	# 8 s: four times the client's deadline
		grep -q '(signal)' "$ENG_TMP/slow.dump" 2>/dev/null && { got=1; break; }
		sleep 0.1
	done
	[ "$got" = 1 ] || eng_fail "$label: no dump 8 s after the signal while a slow client was connected"
	wait $cl
	grep -q dropped "$ENG_TMP/slow.client" ||
		eng_fail "$label: the slow client was not dropped: $(cat "$ENG_TMP/slow.client")"
	ask "$sock"
	stop
fi
eng_finish
