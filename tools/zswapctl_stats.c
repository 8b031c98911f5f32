/*
 * zswapctl_stats.c - `zswapctl stats`, `watch` and `list`: talking to
 * running processes under libzswap through their statistics sockets.
 *
 * The library (src/observe/stats.c) listens on PID.sock in the first usable of
 * $XDG_RUNTIME_DIR/libzswap, /run/user/UID/libzswap, /run/libzswap (root)
 * and /tmp/libzswap-UID, each mode 0700. A request is one line ("text",
 * "json" or "counters"); the answer runs until the library closes.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "zswapctl.h"

#define CTL_MAX_DIRS 4

/* The socket directories to look in for processes of user uid. */
static int ctl_dirs(uid_t uid, char dirs[CTL_MAX_DIRS][256])
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n = 0;

	if (xdg && *xdg == '/' && uid == geteuid())
		snprintf(dirs[n++], 256, "%s/libzswap", xdg);
	snprintf(dirs[n++], 256, "/run/user/%lu/libzswap", (unsigned long)uid);
	if (uid == 0)
		snprintf(dirs[n++], 256, "/run/libzswap");
	snprintf(dirs[n++], 256, "/tmp/libzswap-%lu", (unsigned long)uid);
	return n;
}

/* Does /proc/PID/maps mention libzswap? 1 yes, 0 no, -1 unreadable (errno). */
static int ctl_maps_libzswap(long pid)
{
	char path[64], line[1024];
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "libzswap") != NULL;
	fclose(f);
	return found;
}

/*
 * Connect to pid's statistics socket. Returns the descriptor, or -1 after
 * printing what went wrong (no such process, not under libzswap, no socket,
 * permission denied).
 */
int zswapctl_connect(const struct zswapctl_cmd *cmd, long pid)
{
	char proc[64], dirs[CTL_MAX_DIRS][256], tried[1100] = "";
	struct stat sb;
	int saw_eacces = 0;

	snprintf(proc, sizeof(proc), "/proc/%ld", pid);
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		fprintf(stderr, "zswapctl: %s: no such process: %ld\n", cmd->name, pid);
		return -1;
	}
	if (stat(proc, &sb) != 0) {
		fprintf(stderr, "zswapctl: %s: no such process: %ld (%s)\n", cmd->name, pid, strerror(errno));
		return -1;
	}
	int n = ctl_dirs(sb.st_uid, dirs);
	for (int i = 0; i < n; i++) {
		struct sockaddr_un sa;
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%ld.sock", dirs[i], pid) >=
		    (int)sizeof(sa.sun_path))
			continue;
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s", i ? ", " : "", dirs[i]);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			fprintf(stderr, "zswapctl: %s: socket: %s\n", cmd->name, strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e == EACCES || e == EPERM)
			saw_eacces = 1;
	}
	int lib = ctl_maps_libzswap(pid);
	int maps_errno = lib < 0 ? errno : 0;
	if (!saw_eacces && sb.st_uid == geteuid() && (maps_errno == EACCES || maps_errno == EPERM))
		/* Our own user, yet its maps are closed to us (a protected or
		 * non-dumpable process): say that, not "run as that user". */
		fprintf(stderr, "zswapctl: %s: permission denied: cannot read /proc/%ld/maps (%s), and it "
			"offers no libzswap statistics socket in %s\n", cmd->name, pid, strerror(maps_errno), tried);
	else if (saw_eacces || maps_errno == EACCES || maps_errno == EPERM || sb.st_uid != geteuid())
		fprintf(stderr, "zswapctl: %s: permission denied: process %ld belongs to user %lu "
			"(run zswapctl as that user or as root)\n", cmd->name, pid, (unsigned long)sb.st_uid);
	else if (lib == 1)
		fprintf(stderr, "zswapctl: %s: process %ld has libzswap loaded but offers no statistics "
			"socket (ZSWAP_STATS_SOCKET=0, ZSWAP_ENABLED=0, or no userfaultfd); looked in %s\n",
			cmd->name, pid, tried);
	else
		fprintf(stderr, "zswapctl: %s: process %ld is not running libzswap (no socket in %s)\n",
			cmd->name, pid, tried);
	return -1;
}

/* Send one request, read the whole answer into a malloc'd buffer. */
char *zswapctl_request(int fd, const char *req, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	if (!buf || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *p = realloc(buf, cap *= 2);
			if (!p) {
				free(buf);
				return NULL;
			}
			buf = p;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int zswapctl_parse_pid(const struct zswapctl_cmd *cmd, const char *s, long *pid)
{
	unsigned long v;
	const char *cause;

	if (!s)
		return zswapctl_usage_error(cmd, "a PID is needed");
	if (!zswapctl_parse_uint(s, 1, 4194304, &v, &cause))
		return zswapctl_usage_error(cmd, "PID '%s': %s", s, cause);
	*pid = (long)v;
	return 0;
}

static const struct option ctl_stats_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int zswapctl_stats(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	int json = 0, c;
	long pid;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jh", ctl_stats_opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'h')
			return zswapctl_cmd_help(cmd);
		else
			return zswapctl_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
	}
	if (optind + 1 < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if ((c = zswapctl_parse_pid(cmd, argv[optind], &pid)) != 0)
		return c;
	int fd = zswapctl_connect(cmd, pid);
	if (fd < 0)
		return 1;
	size_t len;
	char *out = zswapctl_request(fd, json ? "json\n" : "text\n", &len);
	close(fd);
	if (!out || len == 0) {
		fprintf(stderr, "zswapctl: %s: process %ld sent no statistics\n", cmd->name, pid);
		free(out);
		return 1;
	}
	fwrite(out, 1, len, stdout);
	free(out);
	return 0;
}

/* ---- watch ----------------------------------------------------------------- */

#define WATCH_N 9
static const char *const watch_names[WATCH_N] = {
	"zswpout", "zswpin", "faults", "refaults", "evicted_pages", "stored_pages",
	"pool_total_size", "orig_data_size", "refault_p50_ns",
};

static int watch_sample(long pid, const struct zswapctl_cmd *cmd, unsigned long long v[WATCH_N])
{
	int fd = zswapctl_connect(cmd, pid);
	size_t len;

	if (fd < 0)
		return -1;
	char *out = zswapctl_request(fd, "counters\n", &len);
	close(fd);
	if (!out)
		return -1;
	for (int i = 0; i < WATCH_N; i++) {
		v[i] = 0;
		size_t nl = strlen(watch_names[i]);
		for (char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (!strncmp(p, watch_names[i], nl) && p[nl] == ' ')
				v[i] = strtoull(p + nl + 1, NULL, 10);
	}
	free(out);
	return 0;
}

static const struct option ctl_watch_opts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int zswapctl_watch(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	unsigned long interval = 1, count = 0;
	const char *cause;
	long pid;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+i:c:h", ctl_watch_opts, NULL)) != -1) {
		if (c == 'h')
			return zswapctl_cmd_help(cmd);
		if (c == 'i' && !zswapctl_parse_uint(optarg, 1, 3600, &interval, &cause))
			return zswapctl_usage_error(cmd, "--interval '%s': %s, expected 1..3600", optarg, cause);
		if (c == 'c' && !zswapctl_parse_uint(optarg, 1, 1000000, &count, &cause))
			return zswapctl_usage_error(cmd, "--count '%s': %s, expected 1..1000000", optarg, cause);
		if (c == '?' || c == ':')
			return zswapctl_usage_error(cmd, "unknown option or missing value: '%s'",
						    argv[optind - 1]);
	}
	if (optind + 1 < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if ((c = zswapctl_parse_pid(cmd, argv[optind], &pid)) != 0)
		return c;
	unsigned long long prev[WATCH_N], cur[WATCH_N];
	if (watch_sample(pid, cmd, prev) != 0)
		return 1;
	/* As vmstat: rates per second over the interval, levels as they are. */
	printf("%10s %10s %10s %10s %10s %12s %12s %8s %10s\n", "zswpout/s", "zswpin/s", "faults/s",
	       "refault/s", "evicted/s", "stored", "pool_bytes", "ratio", "p50_ns");
	fflush(stdout);
	for (unsigned long k = 0; !count || k < count; k++) {
		sleep((unsigned int)interval);
		if (watch_sample(pid, cmd, cur) != 0)
			return 1;
		unsigned long long d[5];
		for (int i = 0; i < 5; i++)
			d[i] = (cur[i] - prev[i]) / interval;
		double ratio = cur[6] ? (double)cur[7] / (double)cur[6] : 0.0;
		printf("%10llu %10llu %10llu %10llu %10llu %12llu %12llu %8.2f %10llu\n", d[0], d[1], d[2],
		       d[3], d[4], cur[5], cur[6], ratio, cur[8]);
		fflush(stdout);
		memcpy(prev, cur, sizeof(prev));
	}
	return 0;
}

/* ---- list ------------------------------------------------------------------- */

int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	char dirs[CTL_MAX_DIRS][256];
	int n = ctl_dirs(geteuid(), dirs);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return zswapctl_cmd_help(cmd);
		return zswapctl_usage_error(cmd, argv[i][0] == '-' ? "unknown option '%s'"
								   : "unexpected argument '%s'", argv[i]);
	}
	printf("%8s %-16s %s\n", "PID", "COMMAND", "SOCKET");
	for (int i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		if (!d)
			continue;
		while ((e = readdir(d))) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (pid <= 0 || strcmp(end, ".sock") != 0)
				continue;
			if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
				continue;	/* a killed process's socket */
			/* Alive, but perhaps a process that exec'd without the
			 * library: only a socket that answers counts. */
			struct sockaddr_un sa;
			memset(&sa, 0, sizeof(sa));
			sa.sun_family = AF_UNIX;
			if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dirs[i], e->d_name) >=
			    (int)sizeof(sa.sun_path))
				continue;
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			int up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
			if (fd >= 0)
				close(fd);
			if (!up)
				continue;
			char path[512], comm[64] = "?";
			snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
			FILE *f = fopen(path, "r");
			if (f) {
				if (fgets(comm, sizeof(comm), f))
					comm[strcspn(comm, "\n")] = '\0';
				fclose(f);
			}
			printf("%8ld %-16s %s/%s\n", pid, comm, dirs[i], e->d_name);
		}
		closedir(d);
	}
	return 0;
}
