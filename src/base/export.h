/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export.h - the mark of the library's exported symbols: the public API and
 * the libc entry points it interposes (src/shim/libzswap.map lists them);
 * everything else is hidden (-fvisibility=hidden).
 */
#ifndef ZSWAP_EXPORT_H
#define ZSWAP_EXPORT_H

#define ZSWAP_EXPORT __attribute__((visibility("default")))

#endif
