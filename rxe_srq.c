// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: creation, resizing, the limit event's arming,
 * and destruction. The responder consumes them (rxe_resp.c).
 */

#include <linux/uaccess.h>

#include "rxe_srq.h"

/**
 * rxe_recv_wqe_size() - bytes of a receive ring slot
 * @max_sge: SGEs per work request
 *
 * Return: the size of a struct rxe_recv_wqe with @max_sge SGEs.
 */
size_t rxe_recv_wqe_size(u32 max_sge)
{
	return struct_size((struct rxe_recv_wqe *)NULL, dma.sge, max_sge);
}

/**
 * rxe_srq_create() - the create_srq verb
 * @ibsrq: the SRQ ib_core allocated
 * @init: its attributes; a max_sge of 0 comes back as 1, and a limit
 *	above max_wr as 0 (unarmed). max_wr comes back as asked, though the
 *	ring may hold more.
 * @udata: userspace's response buffer, or NULL for a kernel SRQ
 *
 * Return: 0 or a negative errno.
 */
int rxe_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibsrq->device);
	struct rxe_srq *srq = to_rxe_srq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr < 1 || attr->max_wr > rxe->attr.max_srq_wr ||
	    attr->max_sge > rxe->attr.max_srq_sge)
		return -EINVAL;
	/*
	 * What the in-tree driver takes: no SGE is one, and any limit.
	 * libibverbs documents the limit as irrelevant at creation, so a
	 * caller may leave anything there. A limit above the size, which
	 * the SRQ is always below (the in-tree driver raises the limit
	 * event at the first WQE taken), arms nothing here; modify_srq
	 * refuses it.
	 */
	attr->max_sge = max_t(u32, attr->max_sge, 1);
	if (attr->srq_limit > attr->max_wr)
		attr->srq_limit = 0;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_SRQ], RXE_OBJ_SRQ, !!udata);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->is_user = !!udata;
	srq->max_wr = attr->max_wr;
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	err = xa_alloc(&rxe->srq_xa, &srq->srq_num, srq, xa_limit_32b,
		       GFP_KERNEL);
	if (err)
		goto err_limit;

	err = rxe_queue_init(&srq->queue, RXE_QUEUE_KERNEL_CONSUMES,
			     attr->max_wr, rxe_recv_wqe_size(attr->max_sge),
			     rxe_obj_gfp(srq->is_user));
	if (err)
		goto err_erase;

	if (udata) {
		err = rxe_queue_map(&srq->queue, rxe_uctx_of(udata),
				    &resp.mi);
		if (err)
			goto err_queue;
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	rxe_queue_cleanup(&srq->queue);
err_erase:
	xa_erase(&rxe->srq_xa, srq->srq_num);
err_limit:
	rxe_limit_drop(&rxe->limit[RXE_OBJ_SRQ], RXE_OBJ_SRQ);
	return err;
}

static int rxe_srq_resize(struct rxe_srq *srq, u32 max_wr,
			  struct ib_udata *udata)
{
	struct rxe_modify_srq_cmd cmd = {};
	struct mminfo mi = {};
	struct rxe_queue nq;
	unsigned long flags;
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}

	err = rxe_queue_resize_prepare(&nq, &srq->queue, max_wr,
				       udata ? rxe_uctx_of(udata) :
					       NULL, &mi);
	if (err)
		return err;

	/*
	 * The provider passes the address of its struct mminfo in the
	 * command. It is written before the rings change, so that a bad
	 * address leaves the SRQ as it was.
	 */
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi, sizeof(mi))) {
		err = -EFAULT;
		goto out;
	}

	spin_lock_irqsave(&srq->lock, flags);
	err = rxe_queue_resize_commit(&srq->queue, &nq);
	if (!err)
		srq->max_wr = max_wr;
	spin_unlock_irqrestore(&srq->lock, flags);
out:
	rxe_queue_cleanup(&nq);
	return err;
}

/**
 * rxe_srq_modify() - the modify_srq verb
 * @ibsrq: the SRQ
 * @attr: new attributes
 * @mask: IB_SRQ_MAX_WR to resize, IB_SRQ_LIMIT to arm the limit event
 * @udata: for a user SRQ, the command holding where to write the new
 *	ring's mmap information
 *
 * Return: 0, -EINVAL for values out of range (a size below the WQEs the
 * SRQ holds, a limit above its size), or another negative errno.
 */
int rxe_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibsrq->device);
	struct rxe_srq *srq = to_rxe_srq(ibsrq);
	u32 max_wr = srq->max_wr;
	unsigned long flags;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EOPNOTSUPP;

	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr < 1 || attr->max_wr > rxe->attr.max_srq_wr)
			return -EINVAL;
		max_wr = attr->max_wr;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > max_wr)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT) && READ_ONCE(srq->limit) > max_wr)
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		err = rxe_srq_resize(srq, max_wr, udata);
		if (err)
			return err;
	}

	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

/**
 * rxe_srq_query() - the query_srq verb
 * @ibsrq: the SRQ
 * @attr: filled in
 *
 * Return: 0.
 */
int rxe_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rxe_srq *srq = to_rxe_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * rxe_srq_destroy() - the destroy_srq verb
 * @ibsrq: the SRQ; ib_core has checked that no QP uses it
 * @udata: unused
 *
 * Return: 0.
 */
int rxe_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibsrq->device);
	struct rxe_srq *srq = to_rxe_srq(ibsrq);

	xa_erase(&rxe->srq_xa, srq->srq_num);
	rxe_queue_cleanup(&srq->queue);
	rxe_limit_drop(&rxe->limit[RXE_OBJ_SRQ], RXE_OBJ_SRQ);
	return 0;
}
