/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_sockclient.c - a client of a process's statistics socket
 * (tests/engine/test_eng_sock.sh), for the sockets zswapctl would not find
 * or reach: it connects through /proc/self/fd/N/NAME of the socket's
 * directory, so a path longer than sun_path is reachable too.
 *
 *   ask PATH REQUEST      sends "REQUEST\n" and copies the answer to stdout;
 *                         fails when the answer is empty;
 *   dribble PATH SECONDS  prints "connected", then sends one byte ("t") a
 *                         second, never a newline, for SECONDS seconds, and
 *                         prints "dropped" once the library has closed the
 *                         connection or "kept" if it never did.
 *
 * usage: prog_sockclient ask|dribble PATH REQUEST|SECONDS
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "prog_sockclient: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int sc_connect(const char *path)
{
	char dir[4096], base[4096];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	int dfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die("open the socket's directory");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, basename(base));
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("connect");
	close(dfd);
	return s;
}

static int sc_ask(int s, const char *req)
{
	char line[256], buf[65536];
	size_t total = 0;
	long n;

	snprintf(line, sizeof(line), "%s\n", req);
	if (send(s, line, strlen(line), MSG_NOSIGNAL) != (long)strlen(line))
		die("send");
	while ((n = read(s, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		total += (size_t)n;
	}
	if (n < 0)
		die("read");
	if (!total) {
		fprintf(stderr, "prog_sockclient: no answer\n");
		return 1;
	}
	return 0;
}

static int sc_dribble(int s, int seconds)
{
	printf("connected\n");
	fflush(stdout);
	for (int i = 0; i < seconds; i++) {
		if (send(s, "t", 1, MSG_NOSIGNAL) != 1) {
			printf("dropped\n");
			return 0;
		}
		sleep(1);
	}
	printf("kept\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: prog_sockclient ask|dribble PATH REQUEST|SECONDS\n");
		return 2;
	}
	int s = sc_connect(argv[2]);
	if (!strcmp(argv[1], "ask"))
		return sc_ask(s, argv[3]);
	if (!strcmp(argv[1], "dribble"))
		return sc_dribble(s, atoi(argv[3]));
	fprintf(stderr, "prog_sockclient: unknown mode %s\n", argv[1]);
	return 2;
}
