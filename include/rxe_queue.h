/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rings shared with userspace in the layout of struct rxe_queue_buf
 * (include/uapi/rdma/rdma_user_rxe.h): a 384-byte header holding the
 * producer and consumer indices on their own cache lines, then the slots.
 *
 * Each ring has one index the kernel owns (the producer of a CQ, the
 * consumer of a work queue) and one the other side owns. The kernel keeps
 * its own index in struct rxe_queue and only ever writes it to the shared
 * header; it never reads it back from memory a user can write. The other
 * side's index is read with acquire semantics and masked, so a hostile
 * value can at worst name a slot inside the ring.
 */
#ifndef RXE_QUEUE_H
#define RXE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

/**
 * enum rxe_queue_side - which index of the ring the kernel owns
 * @RXE_QUEUE_KERNEL_PRODUCES: a completion queue
 * @RXE_QUEUE_KERNEL_CONSUMES: a send, receive or shared receive queue
 */
enum rxe_queue_side {
	RXE_QUEUE_KERNEL_PRODUCES,
	RXE_QUEUE_KERNEL_CONSUMES,
};

struct rxe_mmap_entry;

/**
 * struct rxe_queue - a ring of fixed-size slots
 * @buf: the shared header and slots (zeroed vmalloc memory)
 * @buf_size: bytes in @buf, a whole number of pages
 * @index_mask: number of slots minus one; the trusted copy
 * @log2_elem_size: log2 of the slot size; the trusted copy
 * @kidx: the index the kernel owns, always masked
 * @side: which index @kidx is
 * @entry: the mmap entry when userspace maps the ring, else NULL
 *
 * The lock that serialises @kidx belongs to the object that embeds the
 * ring (cq->lock, the responder for receive queues, ...).
 */
struct rxe_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	u32 index_mask;
	u32 log2_elem_size;
	u32 kidx;
	enum rxe_queue_side side;
	struct rxe_mmap_entry *entry;
};

/* rxe_queue.c APIs: */
int rxe_queue_init(struct rxe_queue *q, enum rxe_queue_side side,
		   unsigned int num_elem, size_t elem_size, gfp_t gfp);
void rxe_queue_cleanup(struct rxe_queue *q);
int rxe_queue_map(struct rxe_queue *q, struct ib_ucontext *uctx,
		  struct mminfo *mi);
int rxe_queue_resize_prepare(struct rxe_queue *nq, const struct rxe_queue *q,
			     unsigned int num_elem, struct ib_ucontext *uctx,
			     struct mminfo *mi);
int rxe_queue_resize_commit(struct rxe_queue *q, struct rxe_queue *nq);
int rxe_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void rxe_queue_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/**
 * rxe_queue_capacity() - how many elements the ring holds
 * @q: the ring
 *
 * Return: one less than the number of slots.
 */
static inline u32 rxe_queue_capacity(const struct rxe_queue *q)
{
	return q->index_mask;
}

/**
 * rxe_queue_slot() - address of a slot
 * @q: the ring
 * @index: any index; it is masked here
 *
 * Return: the slot inside @q->buf.
 */
static inline void *rxe_queue_slot(const struct rxe_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) << q->log2_elem_size);
}

/**
 * rxe_queue_peer_index() - the other side's index, read once
 * @q: the ring
 *
 * Return: the masked index, read with acquire semantics so that the slots
 * it covers are visible.
 */
static inline u32 rxe_queue_peer_index(const struct rxe_queue *q)
{
	const u32 *p = q->side == RXE_QUEUE_KERNEL_PRODUCES ?
		&q->buf->consumer_index : &q->buf->producer_index;

	/* Pairs with the other side's release of its index. */
	return smp_load_acquire(p) & q->index_mask;
}

/**
 * rxe_queue_count() - elements between the consumer and the producer
 * @q: the ring
 * @peer: a value read with rxe_queue_peer_index()
 *
 * Return: the number of elements in the ring.
 */
static inline u32 rxe_queue_count(const struct rxe_queue *q, u32 peer)
{
	if (q->side == RXE_QUEUE_KERNEL_PRODUCES)
		return (q->kidx - peer) & q->index_mask;
	return (peer - q->kidx) & q->index_mask;
}

/**
 * rxe_queue_advance() - move the kernel's index on and publish it
 * @q: the ring
 *
 * The release store orders the slot's contents (for a producer) or the
 * end of its use (for a consumer) before the new index.
 */
static inline void rxe_queue_advance(struct rxe_queue *q)
{
	u32 *p = q->side == RXE_QUEUE_KERNEL_PRODUCES ?
		&q->buf->producer_index : &q->buf->consumer_index;

	q->kidx = (q->kidx + 1) & q->index_mask;
	/* Pairs with the other side's acquire in its own ring accessors. */
	smp_store_release(p, q->kidx);
}

/**
 * rxe_queue_kslot() - the slot at the kernel's index
 * @q: the ring
 *
 * Return: the next slot to fill (CQ) or to consume (work queue).
 */
static inline void *rxe_queue_kslot(const struct rxe_queue *q)
{
	return rxe_queue_slot(q, q->kidx);
}

/*
 * Kernel consumers (ULPs) drive the other side of the rings of kernel
 * objects themselves: post_recv produces into an RQ and poll_cq consumes
 * from a CQ. Those rings live in kernel memory only, so the peer index is
 * trusted there.
 */

/**
 * rxe_queue_peer_slot() - the slot at the other side's index
 * @q: a ring of a kernel object
 *
 * Return: the slot.
 */
static inline void *rxe_queue_peer_slot(const struct rxe_queue *q)
{
	return rxe_queue_slot(q, rxe_queue_peer_index(q));
}

/**
 * rxe_queue_peer_advance() - move the other side's index on
 * @q: a ring of a kernel object
 */
static inline void rxe_queue_peer_advance(struct rxe_queue *q)
{
	u32 *p = q->side == RXE_QUEUE_KERNEL_PRODUCES ?
		&q->buf->consumer_index : &q->buf->producer_index;

	/* Pairs with rxe_queue_peer_index() on the kernel's side. */
	smp_store_release(p, (READ_ONCE(*p) + 1) & q->index_mask);
}

#endif /* RXE_QUEUE_H */
