#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_files.sh - the files the library opens by name (ZSWAP_STATS_FILE,
# ZSWAP_LOG_FILE; libzswap(7)) are its own or refused. As root, each is
# pointed at what another user could plant: a symbolic link to a file of
# root's, a FIFO with no reader, a FIFO with a reader, a 0666 file owned by
# nobody, a hard link to another file of root's. Each run must end (a hang
# is a failure, not a stuck suite), with the exit status of /bin/false run
# plainly, say once on stderr which variable, which path and why it was
# refused, and leave the planted target unchanged (a FIFO's reader gets
# nothing). A fresh path is created with mode 0600 and an existing file of
# root's with one link is appended to.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ "$(id -u)" = 0 ] || eng_skip "not root: the files planted belong to root and to nobody"
command -v mkfifo >/dev/null 2>&1 || eng_skip "mkfifo is missing (coreutils)"
prog=$(command -v false) || eng_skip "false(1) is missing"

eng_run plain plain "$prog"
want=$ENG_RC
D=$ENG_TMP/files
mkdir "$D"

# run VAR PATH: /bin/false under the library with VAR=PATH, the dump at exit
# and an option that is not one (a line for the log file).
run() {
	eng_run "$1-$(basename "$2")" lib ZSWAP_STATS_AT_EXIT=1 "$1=$2" ZSWAP_NOT_AN_OPTION=1 "$prog"
	eng_expect_rc "$want"
}

# refused VAR PATH WHY: the last run said VAR PATH WHY in one line.
refused() {
	n=$(grep -cF "libzswap: $1 $2 $3: " "$ENG_ERR")
	[ "$n" = 1 ] || eng_fail "$1=$2: $n lines '$1 $2 $3: ...' on stderr, expected 1"
}

# unchanged FILE SUM: FILE's contents are still those whose checksum is SUM.
unchanged() {
	[ "$(cksum < "$1")" = "$2" ] || eng_fail "$ENG_LABEL: $1 was written to"
}

for var in ZSWAP_STATS_FILE ZSWAP_LOG_FILE; do
	secret=$D/$var.secret
	printf 'root only\n' > "$secret"
	chmod 600 "$secret"
	sum=$(cksum < "$secret")

	ln -s "$secret" "$D/$var.link"
	run "$var" "$D/$var.link"
	refused "$var" "$D/$var.link" "is a symbolic link"
	unchanged "$secret" "$sum"

	mkfifo -m 666 "$D/$var.fifo"
	run "$var" "$D/$var.fifo"
	refused "$var" "$D/$var.fifo" "is a FIFO"

	# A reader that never reads: the shell holds the FIFO open both ways
	# (opening it for reading and writing does not wait for a writer).
	mkfifo -m 666 "$D/$var.read"
	exec 3<>"$D/$var.read"
	run "$var" "$D/$var.read"
	refused "$var" "$D/$var.read" "is a FIFO"
	got=$(dd if="$D/$var.read" iflag=nonblock bs=1M count=1 2>/dev/null | wc -c)
	[ "$got" = 0 ] || eng_fail "$var=$D/$var.read: the FIFO's reader got $got bytes"
	exec 3<&-

	: > "$D/$var.nobody"
	chown 65534 "$D/$var.nobody"
	chmod 666 "$D/$var.nobody"
	run "$var" "$D/$var.nobody"
	refused "$var" "$D/$var.nobody" "is owned by uid 65534, not 0"
	[ ! -s "$D/$var.nobody" ] || eng_fail "$var: the file nobody owns was written to"

	other=$D/$var.other
	printf 'root only\n' > "$other"
	chmod 600 "$other"
	ln "$other" "$D/$var.hard"
	run "$var" "$D/$var.hard"
	refused "$var" "$D/$var.hard" "has 2 links"
	unchanged "$other" "$sum"

	# What is written: a dump ("== " sections), or the library's lines.
	case $var in
	ZSWAP_STATS_FILE) mark='^== ' ;;
	*) mark='^libzswap: ZSWAP_NOT_AN_OPTION ' ;;
	esac
	run "$var" "$D/$var.fresh"
	grep -q "libzswap: $var " "$ENG_ERR" && eng_fail "$var: a fresh path was refused"
	[ "$(stat -c %a "$D/$var.fresh" 2>/dev/null)" = 600 ] ||
		eng_fail "$var: the fresh file is not there with mode 0600"
	grep -q "$mark" "$D/$var.fresh" || eng_fail "$var: nothing written to the fresh file"

	printf 'before\n' > "$D/$var.own"
	chmod 600 "$D/$var.own"
	run "$var" "$D/$var.own"
	grep -q "libzswap: $var " "$ENG_ERR" && eng_fail "$var: an existing file of root's was refused"
	[ "$(head -n 1 "$D/$var.own")" = before ] || eng_fail "$var: the existing file was not appended to"
	grep -q "$mark" "$D/$var.own" || eng_fail "$var: nothing appended to the existing file"
done
eng_finish
