/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ctlreq.c - libFuzzer target: the control requests as the library
 * parses them (src/core/ctlreq.c, what control_serve acts on). The input is
 * a request line as a peer sends it, up to the statistics thread's 1023
 * bytes. Nothing may crash or read past the line; a request it refuses
 * must say so in one "error: ..." line ending in a newline. A "set" taken names only
 * options that change at run time and leaves the others as they were; a
 * reclaim taken asks for more than 0 bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

#include "base/log.h"
#include "core/ctlreq.h"
#include "core/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctlreq r;
	char req[1024];

	static int quiet = -1;
	if (quiet < 0) {
		quiet = open("/dev/null", O_WRONLY);
		log_set_fd(quiet);
	}
	if (size > sizeof(req) - 1)
		size = sizeof(req) - 1;
	memcpy(req, data, size);
	req[size] = '\0';	/* as the statistics thread ends what it read */

	struct opt_values base;
	opt_defaults(&base);
	ctlreq_parse(req, &base, &r);
	if (r.kind == CTLREQ_NONE)
		return 0;
	if (r.bad) {
		size_t n = strnlen(r.why, sizeof(r.why));
		if (n == 0 || n >= sizeof(r.why) || strncmp(r.why, "error: ", 7) || r.why[n - 1] != '\n' ||
		    memchr(r.why, '\n', n - 1))
			abort();
		return 0;
	}
	if (r.kind == CTLREQ_RECLAIM && r.bytes == 0)
		abort();
	if (r.kind == CTLREQ_SET) {
		if (!r.mask)
			abort();
		for (int i = 0; i < OPT__COUNT; i++) {
			if (!(r.mask & (1ull << i)))
				continue;
			if (!(opt_table[i].flags & OPT_F_RUNTIME))
				abort();
		}
		if (r.nv.zspage_order != base.zspage_order || r.nv.nr_pools != base.nr_pools)
			abort();	/* start-up options never change */
	}
	return 0;
}
