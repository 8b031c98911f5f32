/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.h - the mapping changes userfaultfd reports (UNMAP, REMAP, REMOVE)
 * applied to the region table. Handlers apply them as they read them; the
 * fork thread applies those it read while a fork froze the handlers.
 */
#ifndef ZSWAP_EVENTS_H
#define ZSWAP_EVENTS_H

#include <linux/userfaultfd.h>

/* Apply one UNMAP, REMAP or REMOVE message (any other is ignored). The
 * caller holds eng.ev_lock for writing (engine.h). */
void events_apply(const struct uffd_msg *m);

#endif
