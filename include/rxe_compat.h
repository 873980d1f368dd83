/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels this module builds for, Debian 12's
 * 6.1 and 6.12 from bookworm-backports, told apart by what the kernel
 * headers have rather than by version numbers, so that a distribution
 * kernel with a change backported builds too. Kbuild looks for the moved
 * headers (sparse has no __has_include()) and sets RXE_HAVE_*.
 *
 * Elsewhere:
 * - create_cq takes the uverbs attribute bundle from 6.11 on; Kbuild sets
 *   RXE_CREATE_CQ_ATTRS and rxe_verbs.c adapts (RXE_CREATE_CQ_OP).
 * - __assign_str() lost its source argument in 6.10; the tracepoints fill
 *   their name by hand (rxe_trace.h).
 * - 6.2 added the verbs of IBA's Memory Placement Extensions, RDMA FLUSH
 *   and ATOMIC WRITE (IB_WR_FLUSH, IB_WR_ATOMIC_WRITE, the FLUSH access
 *   and device flags). Kbuild sets RXE_HAVE_MPE where ib_verbs.h has
 *   them; without it the opcodes are not in the table and the verbs are
 *   refused (docs/uabi.md).
 */
#ifndef RXE_COMPAT_H
#define RXE_COMPAT_H

/* 6.12 moved the unaligned access helpers out of asm/. */
#ifdef RXE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.6 split net/page_pool.h into types and helpers; 6.7 dropped
 * PP_FLAG_PAGE_FRAG, as every pool then hands out fragments.
 */
#ifdef RXE_HAVE_PAGE_POOL_HELPERS_H
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif

#ifdef PP_FLAG_PAGE_FRAG
#define RXE_PP_FLAGS	PP_FLAG_PAGE_FRAG
#else
#define RXE_PP_FLAGS	0
#endif

/*
 * 6.3 made a VMA's flags writable only through vm_flags_set() and its
 * kin, which assert the mmap lock; before, the field was written.
 */
#ifdef RXE_HAVE_VM_FLAGS_SET
#define rxe_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#else
#define rxe_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

#endif /* RXE_COMPAT_H */
