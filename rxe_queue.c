// SPDX-License-Identifier: GPL-2.0
/*
 * Rings shared with userspace, and their mmap entries.
 *
 * Userspace maps a ring through an opaque offset that ib_core's
 * rdma_user_mmap_entry API hands out. The ring memory is zeroed vmalloc
 * memory, charged to the creator's memory cgroup when the ring is
 * userspace's (rxe_obj_gfp()); vmalloc_user() cannot be charged, so
 * rxe_queue_mmap() inserts the pages itself, as remap_vmalloc_range()
 * would. Every page mapped holds a reference, so freeing the ring while a
 * process still has it mapped leaves the pages to that mapping until it
 * goes away, and the kernel never touches them again.
 */

#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include "rxe_compat.h"
#include "rxe_pool.h"
#include "rxe_queue.h"

/**
 * struct rxe_mmap_entry - what one mmap offset of a ucontext maps
 * @rdma: ib_core's entry, which owns the offset and its reference count
 * @vaddr: the ring memory
 */
struct rxe_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr;
};

static struct rxe_mmap_entry *to_rxe_mmap_entry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct rxe_mmap_entry, rdma);
}

/**
 * rxe_queue_init() - allocate a ring
 * @q: the ring to set up
 * @side: which index the kernel owns
 * @num_elem: how many elements the ring must hold at least
 * @elem_size: bytes per element; rounded up to a power of two
 * @gfp: rxe_obj_gfp() of the object the ring belongs to
 *
 * Return: 0 or -ENOMEM. On success the ring holds rxe_queue_capacity()
 * elements, which is @num_elem or more.
 */
int rxe_queue_init(struct rxe_queue *q, enum rxe_queue_side side,
		   unsigned int num_elem, size_t elem_size, gfp_t gfp)
{
	unsigned int slots;
	size_t data, size;

	if (!num_elem || num_elem >= (1U << 30) || !elem_size)
		return -EINVAL;

	slots = roundup_pow_of_two(num_elem + 1);
	elem_size = roundup_pow_of_two(max_t(size_t, elem_size, 64));
	if (check_mul_overflow((size_t)slots, elem_size, &data) ||
	    check_add_overflow(data, sizeof(struct rxe_queue_buf), &size))
		return -ENOMEM;
	size = PAGE_ALIGN(size);

	memset(q, 0, sizeof(*q));
	/* Page-aligned: SHMLBA is a page where this module builds. */
	q->buf = __vmalloc(size, gfp | __GFP_ZERO);
	if (!q->buf)
		return -ENOMEM;

	q->buf_size = size;
	q->index_mask = slots - 1;
	q->log2_elem_size = order_base_2(elem_size);
	q->side = side;
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;
	return 0;
}

/**
 * rxe_queue_cleanup() - free a ring and withdraw its mmap offset
 * @q: the ring; may be one that rxe_queue_init() never set up
 *
 * A ring userspace may map belongs to its mmap entry from here on: an
 * mmap() already past rdma_user_mmap_entry_get() still maps it page by
 * page, so the memory goes with the entry's last reference
 * (rxe_queue_mmap_free()). Pages mapped by then stay with their mappings.
 */
void rxe_queue_cleanup(struct rxe_queue *q)
{
	if (q->entry) {
		rdma_user_mmap_entry_remove(&q->entry->rdma);
		q->entry = NULL;
	} else {
		vfree(q->buf);
	}
	q->buf = NULL;
}

/**
 * rxe_queue_map() - give userspace an mmap offset for a ring
 * @q: the ring
 * @uctx: the user context that will map it
 * @mi: filled with the offset and size for the provider
 *
 * Return: 0 or a negative errno.
 */
int rxe_queue_map(struct rxe_queue *q, struct ib_ucontext *uctx,
		  struct mminfo *mi)
{
	struct rxe_mmap_entry *e;
	int err;

	e = kzalloc(sizeof(*e), rxe_obj_gfp(true));
	if (!e)
		return -ENOMEM;

	e->vaddr = q->buf;
	err = rdma_user_mmap_entry_insert(uctx, &e->rdma, q->buf_size);
	if (err) {
		kfree(e);
		return err;
	}

	q->entry = e;
	mi->offset = rdma_user_mmap_get_offset(&e->rdma);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/**
 * rxe_queue_resize_prepare() - allocate the ring that will replace another
 * @nq: the new ring to set up
 * @q: the ring it will replace
 * @num_elem: the new minimum capacity
 * @uctx: the user context when userspace maps the ring, else NULL
 * @mi: filled with the new ring's mmap offset when @uctx is set
 *
 * Context: process context, without the lock that serialises @q->kidx.
 * Return: 0 or a negative errno; on error @nq needs no cleanup.
 */
int rxe_queue_resize_prepare(struct rxe_queue *nq, const struct rxe_queue *q,
			     unsigned int num_elem, struct ib_ucontext *uctx,
			     struct mminfo *mi)
{
	int err;

	err = rxe_queue_init(nq, q->side, num_elem,
			     (size_t)1 << q->log2_elem_size, rxe_obj_gfp(!!uctx));
	if (err)
		return err;

	if (uctx) {
		err = rxe_queue_map(nq, uctx, mi);
		if (err)
			rxe_queue_cleanup(nq);
	}
	return err;
}

/**
 * rxe_queue_resize_commit() - move the live elements and swap the rings
 * @q: the ring being replaced
 * @nq: the ring from rxe_queue_resize_prepare()
 *
 * The live elements move to the start of the new ring. The caller holds
 * the lock that serialises @q->kidx; the user side is quiet because the
 * provider holds its own ring lock across the resize verb. Whatever
 * happens, the caller then frees @nq with rxe_queue_cleanup(), outside
 * the lock: on success it holds the old ring.
 *
 * Return: 0, or -EINVAL when more elements are live than @nq holds.
 */
int rxe_queue_resize_commit(struct rxe_queue *q, struct rxe_queue *nq)
{
	u32 peer, count, from, i;

	peer = rxe_queue_peer_index(q);
	count = rxe_queue_count(q, peer);
	if (count > rxe_queue_capacity(nq))
		return -EINVAL;

	from = q->side == RXE_QUEUE_KERNEL_PRODUCES ? peer : q->kidx;
	for (i = 0; i < count; i++)
		memcpy(rxe_queue_slot(nq, i), rxe_queue_slot(q, from + i),
		       (size_t)1 << q->log2_elem_size);

	/* The consumer index of the new ring is 0 on both sides. */
	nq->buf->producer_index = count;
	nq->kidx = nq->side == RXE_QUEUE_KERNEL_PRODUCES ? count : 0;

	swap(*q, *nq);
	return 0;
}

/**
 * rxe_queue_mmap() - the device's mmap verb
 * @uctx: the user context
 * @vma: the mapping; its offset selects the ring
 *
 * Return: 0 or a negative errno.
 */
int rxe_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	unsigned long off, len;
	void *vaddr;
	int err = 0;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;

	/* Never past the ring, whatever ib_core checked of the length. */
	vaddr = to_rxe_mmap_entry(rdma_entry)->vaddr;
	len = vma->vm_end - vma->vm_start;
	if (len > rdma_entry->npages << PAGE_SHIFT)
		err = -EINVAL;
	for (off = 0; !err && off < len; off += PAGE_SIZE)
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(vaddr + off));
	if (!err)
		rxe_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * rxe_queue_mmap_free() - the device's mmap_free verb
 * @rdma_entry: an entry whose last reference ib_core dropped
 *
 * Frees the entry and the ring it maps, which rxe_queue_cleanup() left to
 * it.
 */
void rxe_queue_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct rxe_mmap_entry *e = to_rxe_mmap_entry(rdma_entry);

	vfree(e->vaddr);
	kfree(e);
}
