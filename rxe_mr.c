// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions and windows.
 *
 * A key is (index << 8) | variant: the index names the entry in the
 * device's key table, the low byte tells a stale key from the live one.
 * Table entries are tagged pointers, so MRs and MWs share one key space.
 *
 * The data path finds a region by key under RCU and takes a reference for
 * the duration of one packet's copy. Deregistration unpublishes the key,
 * waits for those references to drain, unpins the memory, and frees the
 * MR after an RCU grace period, so a lookup racing with it sees either a
 * live region or nothing.
 */

#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "rxe_mr.h"

#define RXE_KEY_TAG_MR		0
#define RXE_KEY_TAG_MW		1

/*
 * Access bits a region may carry: FLUSH for global visibility too, where
 * the kernel has it; not for persistence, which needs persistent memory.
 */
#ifdef RXE_HAVE_MPE
#define RXE_MR_ACCESS_FLUSH	IB_ACCESS_FLUSH_GLOBAL
#else
#define RXE_MR_ACCESS_FLUSH	0
#endif
#define RXE_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | RXE_MR_ACCESS_FLUSH)

static struct kmem_cache *rxe_mr_cache;

static bool rxe_mr_is_dma(const struct rxe_mr *mr)
{
	return mr->ibmr.type == IB_MR_TYPE_DMA;
}

static int rxe_mr_check_access(int access)
{
	if (access & ~(RXE_MR_ACCESS | IB_ACCESS_OPTIONAL))
		return -EOPNOTSUPP;
	/* IBA: remote write or atomic access needs local write access. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static struct rxe_mr *rxe_mr_new(struct ib_pd *ibpd, enum ib_mr_type type,
				 int access, bool user)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);
	struct rxe_mr *mr;
	int err;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_MR], RXE_OBJ_MR, user);
	if (err)
		return ERR_PTR(err);

	mr = kmem_cache_zalloc(rxe_mr_cache, rxe_obj_gfp(user));
	if (!mr) {
		rxe_limit_drop(&rxe->limit[RXE_OBJ_MR], RXE_OBJ_MR);
		return ERR_PTR(-ENOMEM);
	}
	rxe_obj_init(&mr->obj);
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	mr->ibmr.type = type;
	mr->access = access;
	atomic_set(&mr->num_mw, 0);
	return mr;
}

/* Give the MR a key and publish it; the MR is usable from here on. */
static int rxe_mr_publish(struct rxe_dev *rxe, struct rxe_mr *mr)
{
	u32 index, key;
	int err;

	err = xa_alloc(&rxe->key_xa, &index,
		       xa_tag_pointer(mr, RXE_KEY_TAG_MR),
		       XA_LIMIT(1, RXE_MAX_MR), GFP_KERNEL);
	if (err)
		return err == -EBUSY ? -ENOMEM : err;

	key = index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

static void rxe_mr_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(rxe_mr_cache, container_of(rcu, struct rxe_mr, rcu));
}

/* Free an MR that was never published, or one fully drained. */
static void rxe_mr_free(struct rxe_dev *rxe, struct rxe_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	rxe_limit_drop(&rxe->limit[RXE_OBJ_MR], RXE_OBJ_MR);
	call_rcu(&mr->rcu, rxe_mr_free_rcu);
}

/**
 * rxe_mr_get_dma() - the get_dma_mr verb
 * @ibpd: the PD
 * @access: IB_ACCESS_* flags
 *
 * Addresses through a DMA MR are the kernel virtual addresses that the
 * virtual DMA mapping of a software device hands out.
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *rxe_mr_get_dma(struct ib_pd *ibpd, int access)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);
	struct rxe_mr *mr;
	int err;

	err = rxe_mr_check_access(access);
	if (err)
		return ERR_PTR(err);

	mr = rxe_mr_new(ibpd, IB_MR_TYPE_DMA, access, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	mr->state = RXE_MR_VALID;
	err = rxe_mr_publish(rxe, mr);
	if (err) {
		rxe_mr_free(rxe, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int rxe_mr_fill_user_pages(struct rxe_mr *mr, bool user)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter iter;
	unsigned int n = 0;

	mr->max_pages = ib_umem_num_pages(umem);
	mr->pages = rxe_obj_kvzalloc(array_size(mr->max_pages,
						sizeof(*mr->pages)), user);
	if (!mr->pages)
		return -ENOMEM;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (n == mr->max_pages)
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	mr->npages = n;
	mr->page_shift = PAGE_SHIFT;
	mr->page_offset = ib_umem_offset(umem);
	return 0;
}

/**
 * rxe_mr_reg_user() - the reg_user_mr verb
 * @ibpd: the PD
 * @start: user virtual address of the first byte
 * @length: bytes
 * @iova: the address the peer and the work requests use for @start
 * @access: IB_ACCESS_* flags
 * @udata: set when userspace registers the MR: its memory is then
 *	charged to the caller (rxe_obj_gfp()); NULL for a kernel consumer
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *rxe_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);
	struct rxe_mr *mr;
	int err;

	err = rxe_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length)
		return ERR_PTR(-EINVAL);

	mr = rxe_mr_new(ibpd, IB_MR_TYPE_USER, access, !!udata);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	err = rxe_mr_fill_user_pages(mr, udata);
	if (err)
		goto err_free;

	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->state = RXE_MR_VALID;
	err = rxe_mr_publish(rxe, mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	rxe_mr_free(rxe, mr);
	return ERR_PTR(err);
}

/**
 * rxe_mr_alloc() - the alloc_mr verb: an MR for fast registration
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages it can map
 *
 * The MR is invalid until a REG_MR work request registers it.
 *
 * Return: the MR or an ERR_PTR().
 */
struct ib_mr *rxe_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);
	struct rxe_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > RXE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = rxe_mr_new(ibpd, type, 0, false);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->max_pages = max_num_sg;
	mr->page_shift = PAGE_SHIFT;
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->state = RXE_MR_INVALID;
	err = rxe_mr_publish(rxe, mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	rxe_mr_free(rxe, mr);
	return ERR_PTR(err);
}

/*
 * ib_sg_to_pages() callback, once per block of ibmr->page_size bytes:
 * max_num_sg of ib_alloc_mr() counts these blocks, whatever their size.
 * With virtual DMA a DMA address is a kernel virtual address in the
 * direct map, so a block is physically contiguous and its first page
 * stands for it.
 */
static int rxe_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rxe_mr *mr = to_rxe_mr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = virt_to_page((void *)(uintptr_t)addr);
	return 0;
}

/**
 * rxe_mr_map_sg() - the map_mr_sg verb
 * @ibmr: a fast-registration MR
 * @sg: the DMA-mapped scatter list
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry, updated
 *
 * Return: the number of entries mapped.
 */
int rxe_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset)
{
	struct rxe_dev *rxe = to_rxe_dev(ibmr->device);
	struct rxe_mr *mr = to_rxe_mr(ibmr);
	int n;

	/* A power of two the device advertises, no smaller than a page. */
	if (ibmr->page_size < PAGE_SIZE || !is_power_of_2(ibmr->page_size) ||
	    !(ibmr->page_size & rxe->attr.page_size_cap))
		return -EINVAL;

	mr->npages = 0;
	mr->page_shift = ilog2(ibmr->page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rxe_mr_set_page);
	mr->page_offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/**
 * rxe_mr_dereg() - the dereg_mr verb
 * @ibmr: the MR
 * @udata: unused
 *
 * Return: 0, or -EBUSY while memory windows are bound to it.
 */
int rxe_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibmr->device);
	struct rxe_mr *mr = to_rxe_mr(ibmr);

	/* -1 from here on: a bind racing with this fails (rxe_mw_bind()). */
	if (atomic_cmpxchg(&mr->num_mw, 0, -1))
		return -EBUSY;

	xa_erase(&rxe->key_xa, ibmr->lkey >> 8);
	rxe_obj_drain(&mr->obj);
	rxe_mr_free(rxe, mr);
	return 0;
}

/* The table entry of a key, under RCU: an MR or an MW, by its tag. */
static void *rxe_mr_entry_rcu(struct rxe_dev *rxe, u32 key, unsigned int *tag)
{
	void *entry = xa_load(&rxe->key_xa, key >> 8);

	*tag = entry ? xa_pointer_tag(entry) : 0;
	return entry ? xa_untag_pointer(entry) : NULL;
}

/*
 * Take the reference of an access that is about to check @mr's key and
 * state; of a fast-registration MR, count the access, for
 * rxe_mr_invalidate() to wait on. rxe_mr_put() ends both. A
 * fast-registration MR already invalid is refused before it is counted,
 * so a peer that keeps sending to a key once invalidated cannot hold a
 * wait up. Context: under RCU, which keeps @mr's memory.
 */
static bool rxe_mr_tryget(struct rxe_mr *mr)
{
	if (mr->ibmr.type == IB_MR_TYPE_MEM_REG &&
	    READ_ONCE(mr->state) != RXE_MR_VALID)
		return false;
	if (!rxe_obj_get(&mr->obj))
		return false;
	if (mr->ibmr.type == IB_MR_TYPE_MEM_REG) {
		atomic_inc(&mr->accesses);
		/*
		 * The count before the state check; pairs with the barrier
		 * between the state store and the count read in
		 * rxe_mr_invalidate(). An access that still sees the MR
		 * valid is one the invalidation waits for.
		 */
		smp_mb__after_atomic();
	}
	return true;
}

/* Look a key up and take a reference on the MR it names. */
static struct rxe_mr *rxe_mr_lookup(struct rxe_dev *rxe, u32 key)
{
	struct rxe_mr *mr;
	unsigned int tag;

	rcu_read_lock();
	mr = rxe_mr_entry_rcu(rxe, key, &tag);
	if (mr && (tag != RXE_KEY_TAG_MR || !rxe_mr_tryget(mr)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* Does [iova, iova + length) lie inside the MR? */
static bool rxe_mr_in_bounds(const struct rxe_mr *mr, u64 iova, u64 length)
{
	u64 end;

	if (rxe_mr_is_dma(mr))
		return true;
	if (check_add_overflow(iova, length, &end))
		return false;
	return iova >= mr->ibmr.iova && end <= mr->ibmr.iova + mr->ibmr.length;
}

/**
 * rxe_mr_get_local() - check an lkey for a local access
 * @rxe: the device
 * @pd: the PD of the QP that uses it
 * @lkey: the key from an SGE
 * @iova: first byte accessed
 * @length: bytes accessed
 * @access: IB_ACCESS_LOCAL_WRITE when the device writes, else 0
 * @status: on failure, the completion status that reports it
 *
 * Return: the MR with a reference, or NULL.
 */
struct rxe_mr *rxe_mr_get_local(struct rxe_dev *rxe, const struct ib_pd *pd,
				u32 lkey, u64 iova, u64 length, u32 access,
				enum ib_wc_status *status)
{
	struct rxe_mr *mr = rxe_mr_lookup(rxe, lkey);

	*status = IB_WC_LOC_PROT_ERR;
	if (!mr)
		return NULL;
	/* Pairs with the release in rxe_mr_fast_reg(): key and access are new. */
	if (smp_load_acquire(&mr->state) != RXE_MR_VALID || mr->ibmr.lkey != lkey ||
	    mr->ibmr.pd != pd || (access & ~mr->access))
		goto err_put;
	if (!rxe_mr_in_bounds(mr, iova, length)) {
		*status = IB_WC_LOC_LEN_ERR;
		goto err_put;
	}
	return mr;

err_put:
	rxe_mr_put(mr);
	return NULL;
}

/*
 * A peer's access through a memory window: the window must be bound and
 * grant the access over the whole range; a type 1 window belongs to the
 * QP's PD, a type 2 window to the QP itself. Return its MR with a
 * reference.
 */
static struct rxe_mr *rxe_mw_get_remote(const struct rxe_qp *qp,
					struct rxe_mw_key *mw, u32 rkey, u64 iova,
					u64 length, u32 access, bool whole)
{
	struct rxe_mr *mr = NULL;
	unsigned long flags;
	u64 end;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->state != RXE_MR_VALID || mw->rkey != rkey ||
	    mw->pd != qp->ibqp.pd || (access & ~mw->access))
		goto out;
	if (mw->type == IB_MW_TYPE_2 && mw->qpn != qp->ibqp.qp_num)
		goto out;
	if (!whole && (check_add_overflow(iova, length, &end) ||
		       iova < mw->addr || end > mw->addr + mw->length))
		goto out;
	if (rxe_mr_tryget(mw->mr))
		mr = mw->mr;
out:
	spin_unlock_irqrestore(&mw->lock, flags);
	return mr;
}

/*
 * The checks of rxe_mr_get_remote(); @whole: the key is checked for
 * @access alone, over whatever it grants, and @iova and @length unused.
 */
static struct rxe_mr *rxe_mr_lookup_remote(const struct rxe_qp *qp, u32 rkey,
					   u64 iova, u64 length, u32 access,
					   bool whole)
{
	struct rxe_mr *mr = NULL;
	unsigned int tag;
	void *entry;

	rcu_read_lock();
	entry = rxe_mr_entry_rcu(rxe_qp_dev(qp), rkey, &tag);
	if (entry && tag == RXE_KEY_TAG_MW)
		mr = rxe_mw_get_remote(qp, entry, rkey, iova, length, access,
				       whole);
	else if (entry && rxe_mr_tryget(entry))
		mr = entry;
	rcu_read_unlock();
	if (!mr || tag == RXE_KEY_TAG_MW)
		return mr;

	/* Pairs with the release in rxe_mr_fast_reg(): key and access are new. */
	if (smp_load_acquire(&mr->state) != RXE_MR_VALID || mr->ibmr.rkey != rkey ||
	    mr->ibmr.pd != qp->ibqp.pd || (access & ~mr->access) ||
	    (!whole && !rxe_mr_in_bounds(mr, iova, length))) {
		rxe_mr_put(mr);
		return NULL;
	}
	return mr;
}

/**
 * rxe_mr_get_remote() - check an rkey for a peer's access
 * @qp: the QP the request arrived on; its PD must own the key
 * @rkey: the key from the request: an MR's or a memory window's
 * @iova: first byte accessed
 * @length: bytes accessed
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC, or the FLUSH ones
 *
 * Every failure is a remote access error for the peer, so no reason is
 * returned.
 *
 * Return: the MR holding the bytes, with a reference, or NULL.
 */
struct rxe_mr *rxe_mr_get_remote(const struct rxe_qp *qp, u32 rkey, u64 iova,
				 u64 length, u32 access)
{
	return rxe_mr_lookup_remote(qp, rkey, iova, length, access, false);
}

/**
 * rxe_mr_get_remote_key() - check an rkey for a peer's access to all of
 *	what it grants, as a FLUSH of a whole region asks
 * @qp: the QP the request arrived on; its PD must own the key
 * @rkey: the key from the request: an MR's or a memory window's
 * @access: the IB_ACCESS_FLUSH_* flags the request needs
 *
 * Return: the MR, with a reference, or NULL.
 */
struct rxe_mr *rxe_mr_get_remote_key(const struct rxe_qp *qp, u32 rkey,
				     u32 access)
{
	return rxe_mr_lookup_remote(qp, rkey, 0, 0, access, true);
}

/**
 * rxe_mr_put() - end an access: drop the reference of a lookup
 * @mr: the MR
 */
void rxe_mr_put(struct rxe_mr *mr)
{
	if (mr->ibmr.type == IB_MR_TYPE_MEM_REG) {
		/* The access's copies before an invalidation may see it done. */
		smp_mb__before_atomic();
		atomic_dec(&mr->accesses);
	}
	rxe_obj_put(&mr->obj);
}

static void rxe_buf_xfer(struct rxe_buf *buf, void *mem, u32 n,
			 enum rxe_copy_dir dir)
{
	if (dir == RXE_TO_MR) {
		if (buf->skb)
			skb_copy_bits(buf->skb, buf->off, mem, n);
		else
			memcpy(mem, buf->ptr + buf->off, n);
	} else {
		memcpy((buf->skb ? buf->skb->data : buf->ptr) + buf->off, mem, n);
	}
	buf->off += n;
}

/*
 * The page holding byte @off of an MR's blocks, counted from the start of
 * @pages[0], or NULL past the blocks mapped. A block is physically
 * contiguous, so its pages follow its first.
 */
static struct page *rxe_mr_page(const struct rxe_mr *mr, u64 off)
{
	u64 idx = off >> mr->page_shift;
	u64 in_blk = off & ((1ULL << mr->page_shift) - 1);

	if (idx >= mr->npages)
		return NULL;
	return nth_page(mr->pages[idx], in_blk >> PAGE_SHIFT);
}

/**
 * rxe_mr_copy() - copy between a region and a packet or buffer
 * @mr: the MR, checked for the range
 * @iova: first byte in the region
 * @buf: the other side, advanced past the bytes copied
 * @length: bytes
 * @dir: which way
 *
 * Return: 0, or -EFAULT when the range runs past the mapped pages (a
 * fast-registration MR mapped shorter than its length).
 */
int rxe_mr_copy(struct rxe_mr *mr, u64 iova, struct rxe_buf *buf,
		u32 length, enum rxe_copy_dir dir)
{
	struct page *page;
	size_t pg_off, n;
	void *va;
	u64 off;

	if (rxe_mr_is_dma(mr)) {
		rxe_buf_xfer(buf, (void *)(uintptr_t)iova, length, dir);
		return 0;
	}

	off = iova - mr->ibmr.iova + mr->page_offset;
	while (length) {
		page = rxe_mr_page(mr, off);
		if (!page)
			return -EFAULT;
		pg_off = off & ~PAGE_MASK;
		n = min_t(size_t, length, PAGE_SIZE - pg_off);
		va = kmap_local_page(page);
		rxe_buf_xfer(buf, va + pg_off, n, dir);
		kunmap_local(va);
		length -= n;
		off += n;
	}
	return 0;
}

/* A place in a scatter/gather list: entry @i, @offset bytes into it. */
struct rxe_mr_sgl_pos {
	const struct ib_sge *sge;
	u32 num_sge;
	u32 i;
	u32 offset;
};

/* Start at byte @offset of the list. */
static void rxe_mr_sgl_seek(struct rxe_mr_sgl_pos *pos,
			    const struct ib_sge *sge, u32 num_sge, u32 offset)
{
	pos->sge = sge;
	pos->num_sge = num_sge;
	pos->i = 0;
	while (pos->i < num_sge && offset >= sge[pos->i].length)
		offset -= sge[pos->i++].length;
	pos->offset = offset;
}

/*
 * The next piece of the list, at most @length bytes: its MR, with the key
 * checked for @access over the piece's bytes (*@iova, *@n), and @pos moved
 * past it. NULL, with @status set, when the list ends first or the key
 * fails.
 */
static struct rxe_mr *rxe_mr_sgl_next(struct rxe_mr_sgl_pos *pos,
				      struct rxe_qp *qp, u32 length,
				      u32 access, u64 *iova, u32 *n,
				      enum ib_wc_status *status)
{
	const struct ib_sge *sge;

	if (pos->i >= pos->num_sge) {
		*status = IB_WC_LOC_LEN_ERR;
		return NULL;
	}
	sge = &pos->sge[pos->i++];
	*n = min(length, sge->length - pos->offset);
	*iova = sge->addr + pos->offset;
	pos->offset = 0;
	return rxe_mr_get_local(rxe_qp_dev(qp), qp->ibqp.pd, sge->lkey, *iova,
				*n, access, status);
}

/**
 * rxe_mr_copy_sgl() - copy between a scatter/gather list and a packet
 * @qp: the QP whose work request owns the list; its PD must own the keys
 * @sge: the list
 * @num_sge: its entries
 * @offset: where in the list to start
 * @buf: the other side
 * @length: bytes
 * @dir: which way
 * @access: IB_ACCESS_LOCAL_WRITE when the list is written
 * @status: on failure, the completion status that reports it
 *
 * Each entry's key is checked for the bytes the copy touches.
 *
 * Return: 0 or -EINVAL.
 */
int rxe_mr_copy_sgl(struct rxe_qp *qp, const struct ib_sge *sge, u32 num_sge,
		    u32 offset, struct rxe_buf *buf, u32 length,
		    enum rxe_copy_dir dir, u32 access, enum ib_wc_status *status)
{
	struct rxe_mr_sgl_pos pos;
	struct rxe_mr *mr;
	u64 iova;
	int err;
	u32 n;

	rxe_mr_sgl_seek(&pos, sge, num_sge, offset);
	while (length) {
		mr = rxe_mr_sgl_next(&pos, qp, length, access, &iova, &n,
				     status);
		if (!mr)
			return -EINVAL;
		err = rxe_mr_copy(mr, iova, buf, n, dir);
		rxe_mr_put(mr);
		if (err) {
			*status = IB_WC_LOC_PROT_ERR;
			return -EINVAL;
		}
		length -= n;
	}
	return 0;
}

/* Lend @length bytes of @mr from @iova to @skb as page fragments. */
static int __rxe_mr_lend(struct rxe_mr *mr, u64 iova, struct sk_buff *skb,
			 u32 length)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct page *page;
	skb_frag_t *last;
	u32 pg_off, n;
	u64 off;

	/* Addressed by kernel virtual address: maybe slab memory. */
	if (rxe_mr_is_dma(mr))
		return -EAGAIN;

	off = iova - mr->ibmr.iova + mr->page_offset;
	while (length) {
		page = rxe_mr_page(mr, off);
		if (!page)
			return -EFAULT;
		/* Slab pages must not be referenced from an skb. */
		if (!sendpage_ok(page))
			return -EAGAIN;
		pg_off = off & ~PAGE_MASK;
		n = min_t(u32, length, PAGE_SIZE - pg_off);
		last = shinfo->nr_frags ?
		       &shinfo->frags[shinfo->nr_frags - 1] : NULL;
		if (last && skb_frag_page(last) == page &&
		    skb_frag_off(last) + skb_frag_size(last) == pg_off) {
			skb_frag_size_add(last, n);
		} else {
			/* One slot stays free for the trailer. */
			if (shinfo->nr_frags >= MAX_SKB_FRAGS - 1)
				return -EAGAIN;
			get_page(page);
			skb_fill_page_desc(skb, shinfo->nr_frags, page, pg_off,
					   n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		length -= n;
		off += n;
	}
	return 0;
}

/* What rxe_mr_lend() and rxe_mr_lend_sgl() undo: the skb as it was. */
struct rxe_mr_lend_mark {
	unsigned int nr_frags;
	unsigned int last_size;
	unsigned int data_len;
};

static void rxe_mr_lend_mark(const struct sk_buff *skb,
			     struct rxe_mr_lend_mark *mark)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);

	mark->nr_frags = shinfo->nr_frags;
	mark->last_size = mark->nr_frags ?
		skb_frag_size(&shinfo->frags[mark->nr_frags - 1]) : 0;
	mark->data_len = skb->data_len;
}

/* Give back what was lent since @mark. */
static void rxe_mr_lend_undo(struct sk_buff *skb,
			     const struct rxe_mr_lend_mark *mark)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int n = skb->data_len - mark->data_len;

	while (shinfo->nr_frags > mark->nr_frags)
		put_page(skb_frag_page(&shinfo->frags[--shinfo->nr_frags]));
	if (mark->nr_frags)
		skb_frag_size_set(&shinfo->frags[mark->nr_frags - 1],
				  mark->last_size);
	skb->len -= n;
	skb->data_len -= n;
	skb->truesize -= n;
}

/**
 * rxe_mr_lend() - attach a range of a region's pages to a packet
 * @mr: the MR, checked for the range
 * @iova: where the range starts
 * @skb: the packet; the pages become its next fragments
 * @length: bytes
 *
 * See rxe_mr_lend_sgl().
 *
 * Return: 0; -EAGAIN with @skb as it was when the pages cannot be lent
 * (copy instead); -EFAULT, @skb as it was, past the region's pages.
 */
int rxe_mr_lend(struct rxe_mr *mr, u64 iova, struct sk_buff *skb, u32 length)
{
	struct rxe_mr_lend_mark mark;
	int err;

	rxe_mr_lend_mark(skb, &mark);
	err = __rxe_mr_lend(mr, iova, skb, length);
	if (err) {
		rxe_mr_lend_undo(skb, &mark);
		return err;
	}
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

/**
 * rxe_mr_lend_sgl() - attach the pages of a scatter/gather list to a packet
 * @qp: the QP whose work request owns the list; its PD must own the keys
 * @sge: the list
 * @num_sge: its entries
 * @offset: where in the list to start
 * @skb: the packet; the pages become its next fragments
 * @length: bytes
 * @status: on failure, the completion status that reports it
 *
 * The packet then carries the region's own pages instead of a copy of
 * them. Each fragment holds a page reference, so a page outlives its
 * region if the network stack keeps the packet longer. The payload is
 * read when the packet leaves, as a NIC reads it by DMA: a consumer that
 * changes a buffer before its work request completes sends what it
 * wrote, which the ICRC, computed before, then rejects at the receiver,
 * and the retry sends it whole. Each entry's key is checked for the bytes
 * lent.
 *
 * Return: 0; -EAGAIN with @skb as it was when a page cannot be lent (a
 * region addressed by kernel virtual address, a slab page, more pieces
 * than an skb holds): copy instead; -EINVAL on a key or length error.
 */
int rxe_mr_lend_sgl(struct rxe_qp *qp, const struct ib_sge *sge, u32 num_sge,
		    u32 offset, struct sk_buff *skb, u32 length,
		    enum ib_wc_status *status)
{
	struct rxe_mr_lend_mark mark;
	struct rxe_mr_sgl_pos pos;
	struct rxe_mr *mr;
	int err = 0;
	u64 iova;
	u32 n;

	rxe_mr_lend_mark(skb, &mark);
	rxe_mr_sgl_seek(&pos, sge, num_sge, offset);
	while (length) {
		mr = rxe_mr_sgl_next(&pos, qp, length, 0, &iova, &n, status);
		if (!mr) {
			err = -EINVAL;
			break;
		}
		err = __rxe_mr_lend(mr, iova, skb, n);
		rxe_mr_put(mr);
		if (err) {
			if (err != -EAGAIN) {
				*status = IB_WC_LOC_PROT_ERR;
				err = -EINVAL;
			}
			break;
		}
		length -= n;
	}
	if (err) {
		/* The caller copies instead, or fails the work request. */
		rxe_mr_lend_undo(skb, &mark);
		return err;
	}
	/*
	 * The pages stay writable by their owner: whoever must read them
	 * twice the same (a checksum in software) copies first.
	 */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

/*
 * REG_MR: give a fast-registration MR, mapped with ib_map_mr_sg(), its new
 * key and access, and make it valid. IBA 10.6.3.2: it must be invalid.
 */
static enum ib_wc_status rxe_mr_fast_reg(struct rxe_qp *qp, struct rxe_mr *mr,
					 u32 key, u32 access)
{
	if (mr->ibmr.type != IB_MR_TYPE_MEM_REG || mr->ibmr.pd != qp->ibqp.pd ||
	    READ_ONCE(mr->state) != RXE_MR_INVALID ||
	    (key >> 8) != (mr->ibmr.lkey >> 8) || rxe_mr_check_access(access))
		return IB_WC_MW_BIND_ERR;

	mr->access = access;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* Lookups that see the MR valid see its new key and access. */
	smp_store_release(&mr->state, RXE_MR_VALID);
	return IB_WC_SUCCESS;
}

/* Unbind a window; the caller drops the MR it returns, outside the lock. */
static struct rxe_mr *rxe_mw_unbind(struct rxe_mw_key *mw)
	__must_hold(&mw->lock)
{
	struct rxe_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->mr = NULL;
	mw->state = RXE_MR_INVALID;
	mw->length = 0;
	mw->access = 0;
	return mr;
}

static void rxe_mw_drop_mr(struct rxe_mr *mr)
{
	if (mr) {
		atomic_dec(&mr->num_mw);
		rxe_mr_put(mr);
	}
}

/*
 * Invalidate a type 2 window (IBA 10.6.7.2.5): bound, of the QP's PD, and
 * for a remote invalidation bound to this very QP.
 */
static int rxe_mw_invalidate(struct rxe_qp *qp, struct rxe_mw_key *mw, u32 rkey,
			     bool remote)
{
	struct rxe_mr *mr = NULL;
	unsigned long flags;
	int err = -EINVAL;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->type == IB_MW_TYPE_2 && mw->state == RXE_MR_VALID &&
	    mw->rkey == rkey && mw->pd == qp->ibqp.pd &&
	    (!remote || mw->qpn == qp->ibqp.qp_num)) {
		mr = rxe_mw_unbind(mw);
		err = 0;
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	rxe_mw_drop_mr(mr);
	return err;
}

/*
 * Wait for the accesses that may have found @mr valid before
 * rxe_mr_invalidate() made it invalid: a peer's packet placed or read, a
 * local SGE copied. Each is counted from before its state check to after
 * its copy, for one packet with bottom halves off, and no access counted
 * ever invalidates; so the wait is for other CPUs finishing at most one
 * packet each. An access that begins once the MR is invalid is not
 * counted, one that meets the change counts only for its checks.
 * Waiters do not count, so any number of invalidations may wait at once;
 * and once the MR is valid again, registered anew after one of them
 * completed, the accesses under way are the new registration's, and
 * nothing of the old is left to wait for.
 * When the wait ends the old accesses' copies are done: no byte is
 * written into the MR after the consumer sees the invalidation complete.
 */
static void rxe_mr_wait_accesses(struct rxe_mr *mr)
{
	while (atomic_read_acquire(&mr->accesses) &&
	       READ_ONCE(mr->state) != RXE_MR_VALID)
		cpu_relax();
}

/**
 * rxe_mr_invalidate() - invalidate a key
 * @qp: the QP asking (LOCAL_INV, or a received SEND with invalidate); the
 *	key must belong to its PD
 * @rkey: the key; all 32 bits must match. A fast-registration MR's or a
 *	type 2 memory window's.
 * @remote: a peer asked; a window must then be bound to @qp
 *
 * Return: 0, or -EINVAL when the key names nothing that may be invalidated.
 */
int rxe_mr_invalidate(struct rxe_qp *qp, u32 rkey, bool remote)
{
	struct rxe_mr *mr = NULL;
	unsigned int tag;
	void *entry;
	int err = -EINVAL;

	rcu_read_lock();
	entry = rxe_mr_entry_rcu(rxe_qp_dev(qp), rkey, &tag);
	if (entry && tag == RXE_KEY_TAG_MW)
		err = rxe_mw_invalidate(qp, entry, rkey, remote);
	else if (entry && rxe_obj_get(&((struct rxe_mr *)entry)->obj))
		mr = entry;
	rcu_read_unlock();
	if (!mr)
		return err;

	/*
	 * A fast-registration MR never has a window bound (rxe_mw_bind_mr()
	 * refuses it; windows come from userspace only, and a user PD holds
	 * no such MR anyway), so its accesses are all short.
	 */
	if (mr->ibmr.type == IB_MR_TYPE_MEM_REG && mr->ibmr.rkey == rkey &&
	    mr->ibmr.pd == qp->ibqp.pd) {
		/*
		 * The count is read after the state is written. Every
		 * invalidation waits, also of an MR another one is making
		 * invalid: its completion must not overtake that one's wait.
		 */
		smp_store_mb(mr->state, RXE_MR_INVALID);
		rxe_mr_wait_accesses(mr);
		err = 0;
	}
	rxe_obj_put(&mr->obj);	/* not an access: not counted */
	return err;
}

/* The MR a bind names, checked for the range and rights it will grant. */
static struct rxe_mr *rxe_mw_bind_mr(struct rxe_qp *qp,
				     const struct rxe_swqe *wqe)
{
	u32 access = wqe->wr.mw.access;
	struct rxe_mr *mr;

	mr = rxe_mr_lookup(rxe_qp_dev(qp), wqe->wr.mw.mr_lkey);
	if (!mr)
		return NULL;
	/* Pairs with the release in rxe_mr_fast_reg(): key and access are new. */
	if (smp_load_acquire(&mr->state) != RXE_MR_VALID ||
	    mr->ibmr.lkey != wqe->wr.mw.mr_lkey ||
	    mr->ibmr.pd != qp->ibqp.pd || !(mr->access & IB_ACCESS_MW_BIND) ||
	    rxe_mr_is_dma(mr) || mr->ibmr.type == IB_MR_TYPE_MEM_REG ||
	    !rxe_mr_in_bounds(mr, wqe->wr.mw.addr, wqe->wr.mw.length) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IB_ACCESS_LOCAL_WRITE))) {
		rxe_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * BIND_MW (IBA 10.6.7.2): give a window of the QP's PD a range of an MR
 * with MW_BIND rights, the rights it grants, and a new key whose index is
 * its own. A type 1 window may be bound again (length 0 unbinds); a type 2
 * window only once invalidated, and only for this QP.
 */
static enum ib_wc_status rxe_mw_bind(struct rxe_qp *qp,
				     const struct rxe_swqe *wqe)
{
	u32 rkey = wqe->wr.mw.mw_rkey, access = wqe->wr.mw.access;
	u32 new_rkey = (rkey & ~0xffU) | (wqe->wr.mw.rkey & 0xff);
	struct rxe_mr *mr = NULL, *old = NULL;
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct rxe_mw_key *mw;
	unsigned long flags;
	unsigned int tag;

	if (access & ~(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_ATOMIC))
		return status;
	if (wqe->wr.mw.length) {
		mr = rxe_mw_bind_mr(qp, wqe);
		if (!mr)
			return status;
	}

	rcu_read_lock();
	mw = rxe_mr_entry_rcu(rxe_qp_dev(qp), rkey, &tag);
	if (!mw || tag != RXE_KEY_TAG_MW)
		goto out_unlock_rcu;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->rkey != rkey || mw->pd != qp->ibqp.pd)
		goto out_unlock;
	if (mw->type == IB_MW_TYPE_2 &&
	    (mw->state != RXE_MR_INVALID || !mr))
		goto out_unlock;

	/* An MR that dereg_mr has begun to take down binds nothing more. */
	if (mr && !atomic_inc_unless_negative(&mr->num_mw))
		goto out_unlock;
	old = rxe_mw_unbind(mw);
	if (mr) {
		mw->mr = mr;
		mw->addr = wqe->wr.mw.addr;
		mw->length = wqe->wr.mw.length;
		mw->access = access;
		mw->qpn = qp->ibqp.qp_num;
		mw->state = RXE_MR_VALID;
		mr = NULL;
	}
	mw->rkey = new_rkey;
	status = IB_WC_SUCCESS;
out_unlock:
	spin_unlock_irqrestore(&mw->lock, flags);
out_unlock_rcu:
	rcu_read_unlock();
	if (mr)
		rxe_mr_put(mr);
	rxe_mw_drop_mr(old);
	return status;
}

/**
 * rxe_mw_alloc() - the alloc_mw verb
 * @ibmw: the MW ib_core allocated, with its type
 * @udata: unused
 *
 * Return: 0 or a negative errno.
 */
int rxe_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibmw->device);
	struct rxe_mw *mw = to_rxe_mw(ibmw);
	struct rxe_mw_key *key;
	u32 index;
	int err;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_MW], RXE_OBJ_MW, true);
	if (err)
		return err;

	key = kzalloc(sizeof(*key), rxe_obj_gfp(!!udata));
	if (!key) {
		err = -ENOMEM;
		goto err_limit;
	}
	spin_lock_init(&key->lock);
	key->state = RXE_MR_INVALID;
	key->pd = ibmw->pd;
	key->type = ibmw->type;
	err = xa_alloc(&rxe->key_xa, &index,
		       xa_tag_pointer(key, RXE_KEY_TAG_MW),
		       XA_LIMIT(1, RXE_MAX_MR), GFP_KERNEL);
	if (err) {
		kfree(key);
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_limit;
	}
	ibmw->rkey = index << 8 | (get_random_u32() & 0xff);
	/* Until now the key matched none: index 0 is never given out. */
	spin_lock_bh(&key->lock);
	key->rkey = ibmw->rkey;
	spin_unlock_bh(&key->lock);
	mw->key = key;
	return 0;

err_limit:
	rxe_limit_drop(&rxe->limit[RXE_OBJ_MW], RXE_OBJ_MW);
	return err;
}

/**
 * rxe_mw_dealloc() - the dealloc_mw verb
 * @ibmw: the MW; bound or not
 *
 * A lookup that found the window before it left the key table takes its
 * lock before dealloc's, and is done as if dealloc came after it (an
 * access keeps the MR by its own reference, a bind's MR is unbound here),
 * or after, and finds it unbound with key 0, which matches no key. The
 * key part is freed a grace period later, which dealloc does not wait
 * for.
 *
 * Return: 0.
 */
int rxe_mw_dealloc(struct ib_mw *ibmw)
{
	struct rxe_dev *rxe = to_rxe_dev(ibmw->device);
	struct rxe_mw_key *key = to_rxe_mw(ibmw)->key;
	struct rxe_mr *mr;

	xa_erase(&rxe->key_xa, ibmw->rkey >> 8);
	spin_lock_bh(&key->lock);
	mr = rxe_mw_unbind(key);
	key->rkey = 0;
	spin_unlock_bh(&key->lock);
	rxe_mw_drop_mr(mr);
	kfree_rcu(key, rcu);
	rxe_limit_drop(&rxe->limit[RXE_OBJ_MW], RXE_OBJ_MW);
	return 0;
}

/**
 * rxe_mr_local_op() - execute a work request that sends no packet
 * @qp: the QP
 * @wqe: REG_MR, LOCAL_INV or BIND_MW; marked done or failed
 *
 * Context: the send task, in send queue order.
 */
void rxe_mr_local_op(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	enum ib_wc_status status;

	switch (wqe->opcode) {
	case IB_WR_REG_MR:
		status = rxe_mr_fast_reg(qp, wqe->wr.reg.mr, wqe->wr.reg.key,
					 wqe->wr.reg.access);
		break;
	case IB_WR_LOCAL_INV:
		status = rxe_mr_invalidate(qp, wqe->ex.invalidate_rkey, false) ?
			 IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
		break;
	case IB_WR_BIND_MW:
		status = rxe_mw_bind(qp, wqe);
		break;
	default:
		status = IB_WC_LOC_QP_OP_ERR;
		break;
	}
	wqe->status = status;
	wqe->state = status == IB_WC_SUCCESS ? RXE_WQE_DONE : RXE_WQE_ERROR;
}

/**
 * rxe_mr_atomic_addr() - map the 8 bytes an atomic operation works on
 * @mr: the MR, checked for the range
 * @iova: the address, 8-byte aligned, so it lies inside one page
 * @page: set to the page to unmap, or NULL for a DMA MR
 *
 * Return: the kernel address, or NULL past the mapped pages. Unless
 * @page is NULL, unmap it with kunmap_local() on the returned address.
 */
void *rxe_mr_atomic_addr(struct rxe_mr *mr, u64 iova, struct page **page)
{
	u64 off;

	*page = NULL;
	if (rxe_mr_is_dma(mr))
		return (void *)(uintptr_t)iova;

	off = iova - mr->ibmr.iova + mr->page_offset;
	*page = rxe_mr_page(mr, off);
	if (!*page)
		return NULL;
	return kmap_local_page(*page) + (off & ~PAGE_MASK);
}

/**
 * rxe_mr_module_init() - create the MR slab cache
 *
 * Return: 0 or -ENOMEM.
 */
int rxe_mr_module_init(void)
{
	rxe_mr_cache = KMEM_CACHE(rxe_mr, 0);
	return rxe_mr_cache ? 0 : -ENOMEM;
}

/**
 * rxe_mr_module_exit() - destroy the MR slab cache, after every MR is freed
 */
void rxe_mr_module_exit(void)
{
	/* MRs are freed after a grace period. */
	rcu_barrier();
	kmem_cache_destroy(rxe_mr_cache);
}
