// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.
 *
 * The kernel produces completions into the ring; a user CQ is consumed by
 * the provider straight from the mapped ring, a kernel CQ by rxe_cq_poll().
 * A user slot holds the struct ib_uverbs_wc the provider reads, a kernel
 * slot a struct ib_wc.
 */

#include "rxe_cq.h"

static int rxe_cq_check_size(const struct rxe_dev *rxe, int cqe)
{
	return cqe < 1 || cqe > rxe->attr.max_cqe ? -EINVAL : 0;
}

/**
 * rxe_cq_create() - the create_cq verb
 * @ibcq: the CQ ib_core allocated
 * @attr: size, completion vector and flags
 * @udata: userspace's response buffer, or NULL for a kernel CQ
 *
 * Return: 0 or a negative errno.
 */
int rxe_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibcq->device);
	struct rxe_cq *cq = to_rxe_cq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (rxe_cq_check_size(rxe, attr->cqe) ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_CQ], RXE_OBJ_CQ, !!udata);
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	cq->notify = 0;
	cq->overflow = false;
	cq->is_user = !!udata;
	err = rxe_queue_init(&cq->queue, RXE_QUEUE_KERNEL_PRODUCES, attr->cqe,
			     sizeof(union rxe_cqe), rxe_obj_gfp(cq->is_user));
	if (err)
		goto err_limit;

	if (udata) {
		err = rxe_queue_map(&cq->queue, rxe_uctx_of(udata),
				    &resp.mi);
		if (err)
			goto err_queue;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}

	ibcq->cqe = rxe_queue_capacity(&cq->queue);
	return 0;

err_queue:
	rxe_queue_cleanup(&cq->queue);
err_limit:
	rxe_limit_drop(&rxe->limit[RXE_OBJ_CQ], RXE_OBJ_CQ);
	return err;
}

/**
 * rxe_cq_destroy() - the destroy_cq verb
 * @ibcq: the CQ; ib_core has checked that no QP uses it
 * @udata: unused
 *
 * Return: 0.
 */
int rxe_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibcq->device);
	struct rxe_cq *cq = to_rxe_cq(ibcq);

	rxe_queue_cleanup(&cq->queue);
	rxe_limit_drop(&rxe->limit[RXE_OBJ_CQ], RXE_OBJ_CQ);
	return 0;
}

/**
 * rxe_cq_resize() - the resize_cq verb
 * @ibcq: the CQ
 * @cqe: the new minimum number of entries
 * @udata: userspace's response buffer, or NULL for a kernel CQ
 *
 * Return: 0, -EINVAL for a size out of range or below the completions
 * the CQ holds, or another negative errno.
 */
int rxe_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibcq->device);
	struct rxe_cq *cq = to_rxe_cq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct rxe_queue nq;
	unsigned long flags;
	int err;

	if (rxe_cq_check_size(rxe, cqe))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = rxe_queue_resize_prepare(&nq, &cq->queue, cqe,
				       udata ? rxe_uctx_of(udata) : NULL,
				       &resp.mi);
	if (err)
		return err;

	/*
	 * The new ring's offset goes out first: a response that cannot be
	 * written leaves the CQ as it was, not on a ring the provider does
	 * not know.
	 */
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out;
	}

	spin_lock_irqsave(&cq->lock, flags);
	err = rxe_queue_resize_commit(&cq->queue, &nq);
	if (!err)
		ibcq->cqe = rxe_queue_capacity(&cq->queue);
	spin_unlock_irqrestore(&cq->lock, flags);
out:
	rxe_queue_cleanup(&nq);
	return err;
}

/**
 * rxe_cq_poll() - the poll_cq verb, for kernel CQs
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: filled with completions, oldest first
 *
 * Return: the number of completions returned.
 */
int rxe_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rxe_cq *cq = to_rxe_cq(ibcq);
	union rxe_cqe *cqe;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries &&
	       rxe_queue_count(&cq->queue, rxe_queue_peer_index(&cq->queue))) {
		cqe = rxe_queue_peer_slot(&cq->queue);
		wc[n++] = cqe->ibwc;
		rxe_queue_peer_advance(&cq->queue);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * rxe_cq_req_notify() - the req_notify_cq verb
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, and optionally
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * A request for the next completion overrides one for solicited ones.
 *
 * Return: 1 when missed events are asked for and the CQ is not empty,
 * else 0.
 */
int rxe_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rxe_cq *cq = to_rxe_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;

	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    rxe_queue_count(&cq->queue, rxe_queue_peer_index(&cq->queue)))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Completion flags as userspace reads them (libibverbs' enum ibv_wc_flags,
 * which the provider copies from the ring unchanged). They agree with the
 * kernel's IB_WC_* for the GRH and immediate data only; the kernel's SMAC,
 * VLAN and network header type flags have no userspace meaning (their bits
 * are tag matching flags there) and the ABI has no field for what they
 * describe.
 */
#define RXE_UWC_GRH		BIT(0)
#define RXE_UWC_WITH_IMM	BIT(1)
#define RXE_UWC_IP_CSUM_OK	BIT(2)
#define RXE_UWC_WITH_INV	BIT(3)

static u32 rxe_cq_user_flags(int flags)
{
	return (flags & IB_WC_GRH ? RXE_UWC_GRH : 0) |
	       (flags & IB_WC_WITH_IMM ? RXE_UWC_WITH_IMM : 0) |
	       (flags & IB_WC_IP_CSUM_OK ? RXE_UWC_IP_CSUM_OK : 0) |
	       (flags & IB_WC_WITH_INVALIDATE ? RXE_UWC_WITH_INV : 0);
}

static void rxe_cq_fill_user(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp->qp_num;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = rxe_cq_user_flags(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
	uwc->reserved = 0;
}

static void rxe_cq_overflow(struct rxe_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibdev_err_ratelimited(cq->ibcq.device, "CQ overflow\n");
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * rxe_cq_post() - add a completion to a CQ and notify its consumer
 * @cq: the CQ
 * @wc: the completion, in kernel form
 * @solicited: the completion answers a solicited event request
 *
 * An armed CQ fires its completion handler once, outside cq->lock, so the
 * handler may poll and re-arm.
 *
 * Context: any.
 * Return: 0, or -EBUSY when the CQ overflowed; it is then in error and
 * its consumer has had an IB_EVENT_CQ_ERR.
 */
int rxe_cq_post(struct rxe_cq *cq, const struct ib_wc *wc, bool solicited)
{
	union rxe_cqe *cqe;
	unsigned long flags;
	bool notify = false;
	bool first;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow ||
	    rxe_queue_count(&cq->queue, rxe_queue_peer_index(&cq->queue)) >=
	    rxe_queue_capacity(&cq->queue)) {
		first = !cq->overflow;
		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first)
			rxe_cq_overflow(cq);
		return -EBUSY;
	}

	cqe = rxe_queue_kslot(&cq->queue);
	if (cq->is_user)
		rxe_cq_fill_user(&cqe->uibwc, wc);
	else
		cqe->ibwc = *wc;
	rxe_queue_advance(&cq->queue);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}
