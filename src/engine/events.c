/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * events.c - mapping changes applied to the region table (events.h).
 */
#include "config.h"
#include "engine/events.h"

#include <stdatomic.h>
#include <stdint.h>

#include "base/prim.h"
#include "engine/engine.h"
#include "engine/region.h"

void events_apply(const struct uffd_msg *m)
{
	switch (m->event) {
	case UFFD_EVENT_UNMAP:
	case UFFD_EVENT_REMOVE: {
		uintptr_t start = m->arg.remove.start, end = m->arg.remove.end;
		bool unmap = m->event == UFFD_EVENT_UNMAP;
		/* The evictor emptying its staging area raises REMOVE too: library
		 * memory never holds regions. */
		if (prim_is_own(start))
			return;
		region_drop_range(eng.store, start, end, unmap);
		if (unmap) {
			atomic_fetch_add(&eng.ev_gen, 1);
			atomic_fetch_add(&eng.cnt.events_unmap, 1);
		} else {
			atomic_fetch_add(&eng.remove_seq, 1);
			atomic_fetch_add(&eng.cnt.events_remove, 1);
		}
		break;
	}
	case UFFD_EVENT_REMAP:
		region_relocate(eng.store, m->arg.remap.from, m->arg.remap.len, m->arg.remap.to);
		atomic_fetch_add(&eng.ev_gen, 1);
		atomic_fetch_add(&eng.cnt.events_remap, 1);
		break;
	default:
		break;
	}
}
