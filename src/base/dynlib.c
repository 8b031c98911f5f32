/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dynlib.c - libraries loaded when the library starts (see dynlib.h).
 *
 * RTLD_NOW: every relocation of the library and of what it needs (liblzma
 * for libunwind) is bound inside dlopen, so no later call through a pointer
 * ever enters the loader to bind a slot. A library the program had already
 * loaded lazily keeps its lazy slots: bindnow binds them with the rest
 * (dynlib_objects). RTLD_LOCAL: the program's own lookups never find these
 * definitions, as they never found them when libzswap was not loaded.
 */
#include "config.h"
#include "base/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "base/log.h"

#define DYNLIB_MAX 8		/* libraries */
#define DYNLIB_SYMS_MAX 32	/* symbols of one library */

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct link_map *dynlib_maps[DYNLIB_MAX];
static size_t dynlib_nmaps;

/* dlerror's text, or what we say instead. */
static void dynlib_fail(struct dynlib *lib, const char *what)
{
	const char *e = dlerror();

	if (e)
		log_snprintf(lib->why, sizeof(lib->why), "%s", e);
	else
		log_snprintf(lib->why, sizeof(lib->why), "%s: %s", lib->soname, what);
	__atomic_store_n(&lib->state, -1, __ATOMIC_RELEASE);
}

static bool dynlib_try(struct dynlib *lib)
{
	void *found[DYNLIB_SYMS_MAX];

	if (lib->nsyms > DYNLIB_SYMS_MAX) {
		log_snprintf(lib->why, sizeof(lib->why), "%s: more than %d symbols asked for", lib->soname,
			     DYNLIB_SYMS_MAX);
		__atomic_store_n(&lib->state, -1, __ATOMIC_RELEASE);
		return false;
	}
	dlerror();
	lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib->handle) {
		dynlib_fail(lib, "cannot be loaded");
		return false;
	}
	for (size_t i = 0; i < lib->nsyms; i++) {
		dlerror();
		found[i] = dlsym(lib->handle, lib->syms[i].name);
		if (!found[i]) {
			dlerror();
			log_snprintf(lib->why, sizeof(lib->why), "%s has no %s", lib->soname, lib->syms[i].name);
			__atomic_store_n(&lib->state, -1, __ATOMIC_RELEASE);
			dlclose(lib->handle);
			lib->handle = NULL;
			return false;
		}
	}
	for (size_t i = 0; i < lib->nsyms; i++)
		*lib->syms[i].slot = found[i];
	struct link_map *l = NULL;
	if (dlinfo(lib->handle, RTLD_DI_LINKMAP, &l) == 0 && l && dynlib_nmaps < DYNLIB_MAX)
		dynlib_maps[dynlib_nmaps++] = l;
	__atomic_store_n(&lib->state, 1, __ATOMIC_RELEASE);	/* after every pointer */
	return true;
}

bool dynlib_load(struct dynlib *lib)
{
	bool ok;

	int st = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

	if (st)
		return st > 0;	/* answered without the lock: a fork handler may ask */
	pthread_mutex_lock(&dynlib_lock);
	ok = lib->state ? lib->state > 0 : dynlib_try(lib);
	pthread_mutex_unlock(&dynlib_lock);
	return ok;
}

const char *dynlib_why(const struct dynlib *lib)
{
	return __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE) < 0 ? lib->why : NULL;
}

size_t dynlib_objects(const struct link_map **out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&dynlib_lock);
	n = dynlib_nmaps < max ? dynlib_nmaps : max;
	memcpy(out, dynlib_maps, n * sizeof(*out));
	pthread_mutex_unlock(&dynlib_lock);
	return n;
}
