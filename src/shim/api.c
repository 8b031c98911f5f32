/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api.c - the public API (include/zswap.h, zswap(3)).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "base/export.h"
#include "engine/engine.h"
#include "engine/calls.h"
#include "engine/snapshot.h"
#include "shim/start.h"
#include "zswap.h"

ZSWAP_EXPORT int zswap_pageout(void *addr, size_t len)
{
	start_wake_now();
	if (!engine_running()) {
		errno = ENOSYS;
		return -1;
	}
	int rc = calls_pageout((uintptr_t)addr, len);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

ZSWAP_EXPORT int zswap_stats(struct zswap_stats *st, size_t size)
{
	start_wake_now();
	return snapshot_stats(st, size);
}

ZSWAP_EXPORT int zswap_active(void)
{
	start_wake_now();
	return engine_running();
}

ZSWAP_EXPORT const char *zswap_version(void)
{
	return ZSWAP_VERSION;
}

