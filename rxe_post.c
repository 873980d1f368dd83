// SPDX-License-Identifier: GPL-2.0
/*
 * Posting work requests.
 *
 * Kernel consumers post through ib_post_send() and ib_post_recv(): their
 * work requests are checked and written straight into the rings, which
 * only the kernel can see. Userspace writes its rings itself and rings a
 * doorbell for sends; the requester then copies each user send work
 * request into kernel memory with rxe_post_snapshot() and checks the copy,
 * never the ring, which the user may rewrite at any time. Both paths share
 * the checks, so a work request means the same whoever posts it.
 */

#include "rxe_post.h"
#include "rxe_qp.h"
#include "rxe_av.h"
#include "rxe_comp.h"
#include "rxe_mr.h"
#include "rxe_req.h"

/* Send flags a work request may carry. */
#define RXE_SEND_FLAGS		(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* Which QP types may post an opcode. */
#define RXE_QPT_RC		BIT(0)
#define RXE_QPT_UC		BIT(1)
#define RXE_QPT_UD		BIT(2)

static u32 rxe_post_qpt_bit(const struct rxe_qp *qp)
{
	switch (rxe_qp_type(qp)) {
	case IB_QPT_RC:
		return RXE_QPT_RC;
	case IB_QPT_UC:
		return RXE_QPT_UC;
	default:
		return RXE_QPT_UD;
	}
}

/*
 * The RXE_WR_* class of an opcode on this QP, or 0 when the QP may not
 * post it. REG_MR exists only for kernel consumers.
 */
static u32 rxe_post_wr_mask(const struct rxe_qp *qp, u32 opcode)
{
	static const struct {
		u32 mask;
		u32 qpts;
	} ops[] = {
		[IB_WR_RDMA_WRITE] = { RXE_WR_WRITE, RXE_QPT_RC | RXE_QPT_UC },
		[IB_WR_RDMA_WRITE_WITH_IMM] = { RXE_WR_WRITE | RXE_WR_IMM,
						RXE_QPT_RC | RXE_QPT_UC },
		[IB_WR_SEND] = { RXE_WR_SEND,
				 RXE_QPT_RC | RXE_QPT_UC | RXE_QPT_UD },
		[IB_WR_SEND_WITH_IMM] = { RXE_WR_SEND | RXE_WR_IMM,
					  RXE_QPT_RC | RXE_QPT_UC | RXE_QPT_UD },
		[IB_WR_RDMA_READ] = { RXE_WR_READ, RXE_QPT_RC },
		[IB_WR_ATOMIC_CMP_AND_SWP] = { RXE_WR_ATOMIC, RXE_QPT_RC },
		[IB_WR_ATOMIC_FETCH_AND_ADD] = { RXE_WR_ATOMIC, RXE_QPT_RC },
		[IB_WR_LOCAL_INV] = { RXE_WR_LOCAL, RXE_QPT_RC | RXE_QPT_UC },
		[IB_WR_BIND_MW] = { RXE_WR_LOCAL, RXE_QPT_RC | RXE_QPT_UC },
		[IB_WR_SEND_WITH_INV] = { RXE_WR_SEND | RXE_WR_INV, RXE_QPT_RC },
#ifdef RXE_HAVE_MPE
		[IB_WR_FLUSH] = { RXE_WR_READ | RXE_WR_FLUSH, RXE_QPT_RC },
		[IB_WR_ATOMIC_WRITE] = { RXE_WR_READ | RXE_WR_AWRITE, RXE_QPT_RC },
#endif
	};

	if (opcode == IB_WR_REG_MR)
		return qp->is_user ? 0 : RXE_WR_LOCAL;
	if (opcode >= ARRAY_SIZE(ops) || !(ops[opcode].qpts & rxe_post_qpt_bit(qp)))
		return 0;
	return ops[opcode].mask;
}

/* Sum SGE lengths; a message longer than IBA allows is a length error. */
static enum ib_wc_status rxe_post_sum_sges(struct rxe_swqe *wqe)
{
	u64 length = 0;
	u32 i;

	for (i = 0; i < wqe->num_sge; i++)
		length += wqe->sge[i].length;
	if (length > RXE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	wqe->length = length;
	return IB_WC_SUCCESS;
}

/*
 * A FLUSH asks for placement types this device offers, at a selectivity
 * level IBA defines. The device flags say which types: only global
 * visibility, as no memory region may be registered for persistence.
 */
static bool rxe_post_flush_ok(const struct rxe_swqe *wqe)
{
#ifdef RXE_HAVE_MPE
	return !(wqe->wr.rdma.flush_plt & ~IB_FLUSH_GLOBAL) &&
	       wqe->wr.rdma.flush_sel <= IB_FLUSH_MR;
#else
	return false;
#endif
}

/* The checks of a filled-in work request, for kernel and user alike. */
static enum ib_wc_status rxe_post_check(const struct rxe_qp *qp,
					const struct rxe_swqe *wqe)
{
	if (wqe->is_inline && !(wqe->mask & (RXE_WR_SEND | RXE_WR_WRITE)))
		return IB_WC_LOC_QP_OP_ERR;
	if (rxe_qp_is_ud(qp) &&
	    wqe->length > rxe_dev_mtu_bytes(rxe_qp_dev(qp)))
		return IB_WC_LOC_LEN_ERR;
	if (wqe->mask & RXE_WR_ATOMIC) {
		if (wqe->length != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		if (wqe->wr.atomic.va & (sizeof(u64) - 1))
			return IB_WC_LOC_QP_OP_ERR;
	}
	if ((wqe->mask & RXE_WR_AWRITE) && (wqe->wr.rdma.va & (sizeof(u64) - 1)))
		return IB_WC_LOC_QP_OP_ERR;
	if ((wqe->mask & RXE_WR_FLUSH) && !rxe_post_flush_ok(wqe))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/*
 * A kernel consumer's ATOMIC WRITE names its 8 bytes like the payload of
 * a WRITE: inline, or in a gather list of local keys. They are taken now,
 * the gather list checked as the requester would, and the work request
 * goes on as a READ of no bytes (RXE_WR_AWRITE).
 */
static int rxe_post_awrite_value(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	struct rxe_buf buf = { .ptr = wqe->wr.rdma.awrite };
	enum ib_wc_status status;

	if (wqe->length != sizeof(wqe->wr.rdma.awrite))
		return -EINVAL;
	if (wqe->is_inline)
		memcpy(wqe->wr.rdma.awrite, wqe->inline_data, wqe->length);
	else if (rxe_mr_copy_sgl(qp, wqe->sge, wqe->num_sge, 0, &buf,
				 wqe->length, RXE_FROM_MR, 0, &status))
		return -EINVAL;
	wqe->is_inline = false;
	wqe->num_sge = 0;
	wqe->length = 0;
	return 0;
}

/* Fill a kernel copy from a kernel consumer's work request. */
static int rxe_post_fill(struct rxe_qp *qp, struct rxe_swqe *wqe,
			 const struct ib_send_wr *wr)
{
	u32 mask = rxe_post_wr_mask(qp, wr->opcode);
	u32 i, length = 0;

	if (!mask || wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags & RXE_SEND_FLAGS;
	wqe->mask = mask;
	wqe->state = RXE_WQE_POSTED;
	wqe->status = IB_WC_SUCCESS;

	if (mask & RXE_WR_IMM)
		wqe->ex.imm_data = wr->ex.imm_data;
	if ((mask & RXE_WR_INV) || wr->opcode == IB_WR_LOCAL_INV)
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;

	/* ib_send_wr has no room for a FLUSH's placement type and level. */
	if (mask & RXE_WR_FLUSH)
		return -EINVAL;
	if (mask & (RXE_WR_READ | RXE_WR_WRITE)) {
		wqe->wr.rdma.va = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
	} else if (mask & RXE_WR_ATOMIC) {
		wqe->wr.atomic.va = atomic_wr(wr)->remote_addr;
		wqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
	} else if (wr->opcode == IB_WR_REG_MR) {
		wqe->wr.reg.mr = to_rxe_mr(reg_wr(wr)->mr);
		wqe->wr.reg.key = reg_wr(wr)->key;
		wqe->wr.reg.access = reg_wr(wr)->access;
	} else if (wr->opcode == IB_WR_BIND_MW) {
		return -EINVAL;
	}

	if (rxe_qp_is_ud(qp)) {
		struct rxe_ah *ah = to_rxe_ah(ud_wr(wr)->ah);

		if (ah->ibah.pd != qp->ibqp.pd)
			return -EINVAL;
		wqe->wr.ud.path = ah->path;
		wqe->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn & RXE_QPN_MAX;
		wqe->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		wqe->wr.ud.pkey_index = ud_wr(wr)->pkey_index;
	}

	if ((wr->send_flags & IB_SEND_INLINE) &&
	    (mask & (RXE_WR_SEND | RXE_WR_WRITE | RXE_WR_AWRITE))) {
		wqe->is_inline = true;
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->sq.max_inline - length)
				return -EINVAL;
			memcpy(wqe->inline_data + length,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			length += wr->sg_list[i].length;
		}
		wqe->length = length;
	} else {
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		if (rxe_post_sum_sges(wqe) != IB_WC_SUCCESS)
			return -EINVAL;
	}
	if ((mask & RXE_WR_AWRITE) && rxe_post_awrite_value(qp, wqe))
		return -EINVAL;

	return rxe_post_check(qp, wqe) == IB_WC_SUCCESS ? 0 : -EINVAL;
}

/**
 * rxe_post_send() - the post_send verb
 * @ibqp: the QP
 * @wr: the work requests; for a user QP, the doorbell passes none
 * @bad_wr: set to the first work request not posted
 *
 * Context: any; the requester runs inline when the context allows.
 * Return: 0, -EINVAL for a bad work request or a QP that takes none in
 * its state, -ENOMEM when the send queue is full.
 */
int rxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	struct rxe_queue *q = &qp->sq.queue;
	enum ib_qp_state state = rxe_qp_state(qp);
	unsigned long flags;
	u32 prod;
	int err = 0;

	if (qp->is_user) {
		/*
		 * The doorbell: the work requests are in the ring already.
		 * In ERR the flush counts the ring again for it, whenever
		 * the QP got there (rxe_comp_flush()).
		 */
		smp_mb__before_atomic();
		set_bit(RXE_COMP_EV_FLUSH, &qp->comp.events);
		rxe_task_run(&qp->send_task);
		return 0;
	}

	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		prod = rxe_queue_peer_index(q);
		if (((prod + 1) & q->index_mask) == READ_ONCE(q->kidx)) {
			err = -ENOMEM;
			break;
		}
		err = rxe_post_fill(qp, rxe_sq_wqe(qp, prod), wr);
		if (err)
			break;
		rxe_queue_peer_advance(q);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	if (err)
		*bad_wr = wr;
	rxe_task_run(&qp->send_task);
	return err;
}

/*
 * Write one receive work request into a kernel ring. The caller holds the
 * lock of the ring's producer side.
 */
static int rxe_post_one_recv(struct rxe_queue *q, u32 max_sge,
			     const struct ib_recv_wr *wr)
{
	struct rxe_recv_wqe *rwqe;
	u64 length = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	if (((rxe_queue_peer_index(q) + 1) & q->index_mask) == READ_ONCE(q->kidx))
		return -ENOMEM;

	rwqe = rxe_queue_peer_slot(q);
	rwqe->wr_id = wr->wr_id;
	for (i = 0; i < wr->num_sge; i++) {
		rwqe->dma.sge[i].addr = wr->sg_list[i].addr;
		rwqe->dma.sge[i].length = wr->sg_list[i].length;
		rwqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		length += wr->sg_list[i].length;
	}
	if (length > RXE_MAX_MSG_SIZE)
		return -EINVAL;
	rwqe->dma.num_sge = wr->num_sge;
	rwqe->dma.length = length;
	rwqe->dma.resid = length;
	rwqe->dma.cur_sge = 0;
	rwqe->dma.sge_offset = 0;
	rxe_queue_peer_advance(q);
	return 0;
}

/**
 * rxe_post_recv() - the post_recv verb, for kernel QPs
 * @ibqp: the QP
 * @wr: the work requests
 * @bad_wr: set to the first work request not posted
 *
 * Return: 0, -EINVAL for a bad work request, a QP with an SRQ or one in
 * RESET, -ENOMEM when the receive queue is full.
 */
int rxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->srq || qp->is_user || rxe_qp_state(qp) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = rxe_post_one_recv(&qp->rq.queue, qp->rq.max_sge, wr);
		if (err)
			break;
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);

	if (err)
		*bad_wr = wr;
	/* The responder flushes in ERR, and waits for WQEs after an RNR NAK. */
	rxe_task_run(&qp->recv_task);
	return err;
}

/**
 * rxe_post_srq_recv() - the post_srq_recv verb, for kernel SRQs
 * @ibsrq: the SRQ
 * @wr: the work requests
 * @bad_wr: set to the first work request not posted
 *
 * Return: 0, -EINVAL for a bad work request, -ENOMEM when the SRQ is full.
 */
int rxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct rxe_srq *srq = to_rxe_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		err = rxe_post_one_recv(&srq->queue, srq->max_sge, wr);
		if (err)
			break;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * A user FLUSH or ATOMIC WRITE, as rdma-core's rxe provider writes them:
 * a FLUSH's length is the dma length (wr.flush.length stays 0), an
 * ATOMIC WRITE's 8 bytes lead the dma union. Neither has SGEs.
 */
static void rxe_post_snapshot_mpe(struct rxe_swqe *k,
				  const struct rxe_send_wqe *u,
				  const struct rxe_send_wqe *w)
{
#ifdef RXE_HAVE_MPE
	if (k->mask & RXE_WR_FLUSH) {
		k->wr.rdma.va = w->wr.wr.flush.remote_addr;
		k->wr.rdma.rkey = w->wr.wr.flush.rkey;
		k->wr.rdma.flush_len = w->dma.length;
		k->wr.rdma.flush_plt = w->wr.wr.flush.type;
		k->wr.rdma.flush_sel = w->wr.wr.flush.level;
	} else {
		k->wr.rdma.va = w->wr.wr.rdma.remote_addr;
		k->wr.rdma.rkey = w->wr.wr.rdma.rkey;
		memcpy(k->wr.rdma.awrite, u->dma.atomic_wr,
		       sizeof(k->wr.rdma.awrite));
	}
#endif
}

/* Fill the operation's fields of a user work request's copy. */
static enum ib_wc_status rxe_post_snapshot_wr(struct rxe_qp *qp,
					      struct rxe_swqe *k,
					      const struct rxe_send_wr *w)
{
	/* FLUSH and ATOMIC WRITE: rxe_post_snapshot_mpe(). */
	if ((k->mask & (RXE_WR_READ | RXE_WR_WRITE)) && !(k->mask & RXE_WR_MPE)) {
		k->wr.rdma.va = w->wr.rdma.remote_addr;
		k->wr.rdma.rkey = w->wr.rdma.rkey;
	} else if (k->mask & RXE_WR_ATOMIC) {
		k->wr.atomic.va = w->wr.atomic.remote_addr;
		k->wr.atomic.compare_add = w->wr.atomic.compare_add;
		k->wr.atomic.swap = w->wr.atomic.swap;
		k->wr.atomic.rkey = w->wr.atomic.rkey;
	} else if (k->opcode == IB_WR_BIND_MW) {
		k->wr.mw.addr = w->wr.mw.addr;
		k->wr.mw.length = w->wr.mw.length;
		k->wr.mw.mr_lkey = w->wr.mw.mr_lkey;
		k->wr.mw.mw_rkey = w->wr.mw.mw_rkey;
		k->wr.mw.rkey = w->wr.mw.rkey;
		k->wr.mw.access = w->wr.mw.access;
	}

	if (rxe_qp_is_ud(qp)) {
		/* Only through an AH of this QP's PD, never a user AV. */
		if (rxe_av_lookup_ah(rxe_qp_dev(qp), w->wr.ud.ah_num,
				     qp->ibqp.pd, &k->wr.ud.path))
			return IB_WC_LOC_QP_OP_ERR;
		k->wr.ud.remote_qpn = w->wr.ud.remote_qpn & RXE_QPN_MAX;
		k->wr.ud.remote_qkey = w->wr.ud.remote_qkey;
		k->wr.ud.pkey_index = w->wr.ud.pkey_index;
	}
	return IB_WC_SUCCESS;
}

/*
 * Copy the payload description: inline bytes, or the SGE list. The
 * lengths come from the copy, never from the ring.
 */
static enum ib_wc_status rxe_post_snapshot_data(struct rxe_qp *qp,
						struct rxe_swqe *k,
						const struct rxe_send_wqe *u,
						const struct rxe_send_wqe *w)
{
	if (k->mask & RXE_WR_MPE) {
		rxe_post_snapshot_mpe(k, u, w);
		return IB_WC_SUCCESS;
	}
	if (k->send_flags & IB_SEND_INLINE) {
		if (w->dma.length > qp->sq.max_inline)
			return IB_WC_LOC_LEN_ERR;
		k->is_inline = true;
		k->length = w->dma.length;
		memcpy(k->inline_data, u->dma.inline_data, k->length);
		return IB_WC_SUCCESS;
	}

	if (w->dma.num_sge > qp->sq.max_sge)
		return IB_WC_LOC_QP_OP_ERR;
	k->num_sge = w->dma.num_sge;
	memcpy(k->sge, u->dma.sge, k->num_sge * sizeof(k->sge[0]));
	return rxe_post_sum_sges(k);
}

/**
 * rxe_post_snapshot() - copy a user send work request into kernel memory
 * @qp: a user QP
 * @index: its SQ index
 *
 * The copy is checked like a kernel consumer's work request. A bad one is
 * marked with the completion status it fails with when the requester
 * reaches it; nothing of it is used.
 *
 * Context: the send task.
 */
void rxe_post_snapshot(struct rxe_qp *qp, u32 index)
{
	const struct rxe_send_wqe *u = rxe_queue_slot(&qp->sq.queue, index);
	struct rxe_swqe *k = rxe_sq_wqe(qp, index);
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;
	struct rxe_send_wqe w;

	BUILD_BUG_ON(sizeof(struct rxe_sge) != sizeof(struct ib_sge));

	/*
	 * One read of the header; the user may be rewriting it right now.
	 * The barrier keeps the compiler from reading the ring again in
	 * place of the copy.
	 */
	memcpy(&w, u, sizeof(w));
	barrier();

	memset(k, 0, sizeof(*k));
	k->wr_id = w.wr.wr_id;
	k->opcode = w.wr.opcode;
	k->send_flags = w.wr.send_flags & RXE_SEND_FLAGS;
	k->state = RXE_WQE_POSTED;
	k->mask = rxe_post_wr_mask(qp, w.wr.opcode);
	if (!k->mask)
		goto bad;
	if (k->mask & RXE_WR_IMM)
		k->ex.imm_data = w.wr.ex.imm_data;
	else
		k->ex.invalidate_rkey = w.wr.ex.invalidate_rkey;

	status = rxe_post_snapshot_wr(qp, k, &w.wr);
	if (status != IB_WC_SUCCESS)
		goto bad;
	status = rxe_post_snapshot_data(qp, k, u, &w);
	if (status != IB_WC_SUCCESS)
		goto bad;
	status = rxe_post_check(qp, k);
	if (status != IB_WC_SUCCESS)
		goto bad;
	k->status = IB_WC_SUCCESS;
	return;

bad:
	/* Keep what the completion reports; forget what it would have done. */
	k->num_sge = 0;
	k->length = 0;
	k->is_inline = false;
	k->status = status;
}
