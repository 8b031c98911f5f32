/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * compat.h - kernel interfaces newer than the installed uapi headers.
 *
 * The build machines carry linux-libc-dev 6.1 while the kernels we run on are
 * newer (6.18 here). Everything added after 6.1 that libzswap uses is defined
 * here, each behind its own #ifndef, with the values of the kernel's uapi.
 * Whether the running kernel has a feature is only ever decided at run time
 * (UFFDIO_API's feature and ioctl masks, or the ioctl's answer).
 */
#ifndef ZSWAP_COMPAT_H
#define ZSWAP_COMPAT_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/userfaultfd.h>
#include <linux/fs.h>

/* --- userfaultfd ------------------------------------------------------- */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC
#define USERFAULTFD_IOC 0xAA
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(USERFAULTFD_IOC, 0x00)
#endif

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)		/* 6.4 */
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)			/* 6.6 */
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)			/* 6.7 */
#endif
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16)			/* 6.8 */
#endif

#ifndef _UFFDIO_MOVE
#define _UFFDIO_MOVE (0x05)
#endif
#ifndef _UFFDIO_POISON
#define _UFFDIO_POISON (0x08)
#endif

#ifndef UFFDIO_MOVE
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
#define UFFDIO_MOVE_MODE_DONTWAKE		((__u64)1 << 0)
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES	((__u64)1 << 1)
	__u64 mode;
	__s64 move;	/* bytes moved, or a negative errno */
};
#define UFFDIO_MOVE _IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

#ifndef UFFDIO_POISON
struct uffdio_poison {
	struct uffdio_range range;
#define UFFDIO_POISON_MODE_DONTWAKE ((__u64)1 << 0)
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, _UFFDIO_POISON, struct uffdio_poison)
#endif

/* --- pagemap ioctl (6.7) ----------------------------------------------- */
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_FILE		(1 << 2)
#define PAGE_IS_PRESENT		(1 << 3)
#define PAGE_IS_SWAPPED		(1 << 4)
#define PAGE_IS_PFNZERO		(1 << 5)
#define PAGE_IS_HUGE		(1 << 6)
#define PAGE_IS_SOFT_DIRTY	(1 << 7)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* --- /proc/PID/maps ------------------------------------------------------ */
/* PROCMAP_QUERY (6.11): one mapping by address, without reading the file. */
#ifndef PROCMAP_QUERY
#define PROCFS_IOCTL_MAGIC 'f'
#define PROCMAP_QUERY_VMA_READABLE		0x01
#define PROCMAP_QUERY_VMA_WRITABLE		0x02
#define PROCMAP_QUERY_VMA_EXECUTABLE		0x04
#define PROCMAP_QUERY_VMA_SHARED		0x08
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA	0x10
#define PROCMAP_QUERY_FILE_BACKED_VMA		0x20
struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define PROCMAP_QUERY _IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query)
#endif

#endif
