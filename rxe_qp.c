// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation, the IBTA state table (ib_modify_qp_is_ok()) with
 * our attribute checks, query, and teardown.
 *
 * The state is qp->attr.qp_state, written under qp->state_lock and read
 * by the data path with rxe_qp_state(). Verbs-level modifies are
 * serialised by qp->modify_mutex, because moving to RESET quiesces the
 * QP's tasks, which sleeps.
 */

#include <linux/vmalloc.h>
#include <linux/overflow.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "rxe_qp.h"
#include "rxe_recv.h"
#include "rxe_hdr.h"
#include "rxe_av.h"
#include "rxe_srq.h"
#include "rxe_req.h"
#include "rxe_comp.h"
#include "rxe_resp.h"
#include "rxe_net.h"
#include "rxe_mcast.h"

/*
 * Access flags a QP grants to its peer's requests. Both FLUSH flags: ib_cm
 * grants both to the QPs it connects on a device that offers either. No
 * region may be registered for persistence (rxe_mr.c), so a FLUSH that
 * asks for it still fails at the R_Key.
 */
#ifdef RXE_HAVE_MPE
#define RXE_QP_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#else
#define RXE_QP_ACCESS_FLUSH	0
#endif
#define RXE_QP_ACCESS_FLAGS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | RXE_QP_ACCESS_FLUSH)

/* Attribute mask bits we act on; others are refused. */
#define RXE_QP_ATTR_MASK	(IB_QP_STATE | IB_QP_CUR_STATE | \
				 IB_QP_EN_SQD_ASYNC_NOTIFY | IB_QP_ACCESS_FLAGS | \
				 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY | \
				 IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT | \
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
				 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | \
				 IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | \
				 IB_QP_PATH_MIG_STATE | IB_QP_DEST_QPN)

/* Bytes of a kernel send WQE with room for @max_sge SGEs or @max_inline bytes. */
static size_t rxe_qp_swqe_size(u32 max_sge, u32 max_inline)
{
	return max(struct_size((struct rxe_swqe *)NULL, sge, max_sge),
		   struct_size((struct rxe_swqe *)NULL, inline_data, max_inline));
}

/* Bytes of a user send ring slot. */
static size_t rxe_qp_send_wqe_size(u32 max_sge, u32 max_inline)
{
	return max(struct_size((struct rxe_send_wqe *)NULL, dma.sge, max_sge),
		   struct_size((struct rxe_send_wqe *)NULL, dma.inline_data,
			       max_inline));
}

static int rxe_qp_check_init(struct rxe_dev *rxe, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;

	if (cap->max_send_wr > rxe->attr.max_qp_wr ||
	    cap->max_send_sge > rxe->attr.max_send_sge ||
	    cap->max_inline_data > RXE_MAX_INLINE_DATA)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > rxe->attr.max_qp_wr ||
			   cap->max_recv_sge > rxe->attr.max_recv_sge))
		return -EINVAL;
	return 0;
}

static int rxe_qp_init_sq(struct rxe_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	struct rxe_sq *sq = &qp->sq;
	size_t slot;
	int err;

	spin_lock_init(&sq->lock);
	sq->max_sge = max_t(u32, cap->max_send_sge, 1);
	sq->max_inline = max_t(u32, cap->max_inline_data,
			       sq->max_sge * sizeof(struct ib_sge));
	/* The shadow ring's stride: its entries hold u64 fields. */
	sq->swqe_size = ALIGN(rxe_qp_swqe_size(sq->max_sge, sq->max_inline),
			      __alignof__(struct rxe_swqe));
	slot = qp->is_user ? rxe_qp_send_wqe_size(sq->max_sge, sq->max_inline) :
			     sq->swqe_size;

	err = rxe_queue_init(&sq->queue, RXE_QUEUE_KERNEL_CONSUMES,
			     max_t(u32, cap->max_send_wr, 1), slot,
			     rxe_obj_gfp(qp->is_user));
	if (err)
		return err;
	sq->max_wr = rxe_queue_capacity(&sq->queue);

	if (qp->is_user) {
		sq->shadow = rxe_obj_kvzalloc(array_size(sq->queue.index_mask + 1,
							 sq->swqe_size), true);
		if (!sq->shadow) {
			rxe_queue_cleanup(&sq->queue);
			return -ENOMEM;
		}
	} else {
		sq->shadow = sq->queue.buf->data;
		sq->swqe_size = (size_t)1 << sq->queue.log2_elem_size;
	}

	cap->max_send_wr = sq->max_wr;
	cap->max_send_sge = sq->max_sge;
	cap->max_inline_data = sq->max_inline;
	return 0;
}

static void rxe_qp_cleanup_sq(struct rxe_qp *qp)
{
	if (qp->is_user)
		kvfree(qp->sq.shadow);
	qp->sq.shadow = NULL;
	rxe_queue_cleanup(&qp->sq.queue);
}

static int rxe_qp_init_rq(struct rxe_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	struct rxe_rq *rq = &qp->rq;
	int err;

	spin_lock_init(&rq->lock);
	if (qp->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}

	rq->max_sge = max_t(u32, cap->max_recv_sge, 1);
	err = rxe_queue_init(&rq->queue, RXE_QUEUE_KERNEL_CONSUMES,
			     max_t(u32, cap->max_recv_wr, 1),
			     rxe_recv_wqe_size(rq->max_sge),
			     rxe_obj_gfp(qp->is_user));
	if (err)
		return err;
	rq->max_wr = rxe_queue_capacity(&rq->queue);
	cap->max_recv_wr = rq->max_wr;
	cap->max_recv_sge = rq->max_sge;
	return 0;
}

static int rxe_qp_alloc_qpn(struct rxe_dev *rxe, struct rxe_qp *qp)
{
	static u32 next = RXE_QPN_MIN;
	u32 qpn;
	int err;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		err = xa_insert(&rxe->qp_xa, 1, qp->entry, GFP_KERNEL);
		qpn = 1;
	} else {
		err = xa_alloc_cyclic(&rxe->qp_xa, &qpn, qp->entry,
				      XA_LIMIT(RXE_QPN_MIN, RXE_QPN_LAST),
				      &next, GFP_KERNEL);
		if (err > 0)
			err = 0;
	}
	if (err)
		return err == -EBUSY ? -EEXIST : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int rxe_qp_map_rings(struct rxe_qp *qp, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = rxe_uctx_of(udata);
	struct rxe_create_qp_resp resp = {};
	int err;

	if (!qp->srq) {
		err = rxe_queue_map(&qp->rq.queue, uctx, &resp.rq_mi);
		if (err)
			return err;
	}
	err = rxe_queue_map(&qp->sq.queue, uctx, &resp.sq_mi);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/* Put the data path of a QP back to its state after creation. */
static void rxe_qp_reset_engines(struct rxe_qp *qp)
{
	rxe_recv_purge(qp, &qp->req_q);
	rxe_recv_purge(qp, &qp->rsp_q);
	rxe_req_reset(qp);
	rxe_comp_reset(qp);
	rxe_resp_reset(qp);

	qp->sq.queue.kidx = 0;
	qp->sq.queue.buf->producer_index = 0;
	qp->sq.queue.buf->consumer_index = 0;
	if (!qp->srq) {
		qp->rq.queue.kidx = 0;
		qp->rq.queue.buf->producer_index = 0;
		qp->rq.queue.buf->consumer_index = 0;
	}
}

/**
 * rxe_qp_create() - the create_qp verb
 * @ibqp: the QP ib_core allocated
 * @init: its attributes; the capacities actually given are written back
 * @udata: userspace's response buffer, or NULL for a kernel QP
 *
 * Return: 0 or a negative errno.
 */
int rxe_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibqp->device);
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	int err;

	err = rxe_qp_check_init(rxe, init);
	if (err)
		return err;
	if (udata && (udata->inlen ||
		      udata->outlen < sizeof(struct rxe_create_qp_resp)))
		return -EINVAL;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_QP], RXE_OBJ_QP, !!udata);
	if (err)
		return err;

	qp->entry = kzalloc(sizeof(*qp->entry), rxe_obj_gfp(!!udata));
	if (!qp->entry) {
		err = -ENOMEM;
		goto err_limit;
	}
	rxe_obj_init(&qp->entry->obj);
	qp->entry->qp = qp;
	spin_lock_init(&qp->state_lock);
	mutex_init(&qp->modify_mutex);
	skb_queue_head_init(&qp->req_q);
	skb_queue_head_init(&qp->rsp_q);
	INIT_LIST_HEAD(&qp->ack_link);
	qp->ack_flags = 0;
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->srq = init->srq ? to_rxe_srq(init->srq) : NULL;
	qp->scq = to_rxe_cq(init->send_cq);
	qp->rcq = to_rxe_cq(init->recv_cq);
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.cur_qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = IB_MTU_256;
	qp->attr.port_num = 1;
	qp->mtu = 256;

	err = rxe_qp_init_sq(qp, init);
	if (err)
		goto err_entry;
	err = rxe_qp_init_rq(qp, init);
	if (err)
		goto err_sq;
	qp->attr.cap = init->cap;

	rxe_task_init(&qp->send_task, qp, rxe_req_run);
	rxe_task_init(&qp->recv_task, qp, rxe_resp_run);
	rxe_req_reset(qp);
	rxe_comp_init(qp);
	err = rxe_resp_init(qp);
	if (err)
		goto err_rq;
	err = rxe_net_qp_init(qp);
	if (err)
		goto err_resp;

	err = rxe_qp_alloc_qpn(rxe, qp);
	if (err)
		goto err_net;

	if (udata) {
		err = rxe_qp_map_rings(qp, udata);
		if (err)
			goto err_qpn;
	}
	pr_debug("%s: QP %u created\n", dev_name(&rxe->ib_dev.dev),
		 ibqp->qp_num);
	return 0;

err_qpn:
	/* A packet that found it has a reference; in RESET it queued none. */
	xa_erase(&rxe->qp_xa, ibqp->qp_num);
	rxe_obj_drain(&qp->entry->obj);
err_net:
	rxe_net_qp_cleanup(qp);
err_resp:
	rxe_resp_cleanup(qp);
err_rq:
	if (!qp->srq)
		rxe_queue_cleanup(&qp->rq.queue);
err_sq:
	rxe_qp_cleanup_sq(qp);
err_entry:
	kfree_rcu(qp->entry, rcu);
err_limit:
	rxe_limit_drop(&rxe->limit[RXE_OBJ_QP], RXE_OBJ_QP);
	return err;
}

static int rxe_qp_check_attr(struct rxe_qp *qp, struct ib_qp_attr *attr,
			     int mask, struct rxe_path *path)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	enum ib_qp_state cur, next;
	int err;

	if (mask & ~RXE_QP_ATTR_MASK)
		return -EOPNOTSUPP;

	/* A caller's idea of the current state must be the real one. */
	cur = rxe_qp_state(qp);
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;

	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= RXE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(RXE_QP_ACCESS_FLAGS | IB_ACCESS_OPTIONAL)))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > rxe->attr.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > rxe->attr.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > RXE_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		err = rxe_av_from_attr(rxe, &attr->ah_attr, path);
		if (err)
			return err;
		/*
		 * Only a connected QP takes a path here, and its peer is one
		 * host: a group would flood its requests to every member,
		 * each of which drops them, and the QP would fail through
		 * its retries instead of here.
		 */
		if (rdma_is_multicast_addr(&path->daddr))
			return -EINVAL;
	}
	return 0;
}

/*
 * Set up what an engine needs before the new state lets it run: the
 * responder's expected PSN on INIT to RTR, the requester's and the
 * completer's PSNs on RTR to RTS, and a new SQ_DRAINED on each entry to
 * SQD. Published before the state, a task that sees the state sees them.
 */
static void rxe_qp_start_engines(struct rxe_qp *qp, enum ib_qp_state from,
				 enum ib_qp_state to)
	__must_hold(&qp->state_lock)
{
	if (from == IB_QPS_INIT && to == IB_QPS_RTR)
		rxe_resp_start(qp);
	if (from == IB_QPS_RTR && to == IB_QPS_RTS)
		rxe_req_start(qp);
	else if (from != IB_QPS_SQD && to == IB_QPS_SQD)
		rxe_req_sqd_begin(qp);
}

/* Copy the attributes a modify carries. Caller holds qp->state_lock. */
static void rxe_qp_apply_attr(struct rxe_qp *qp, const struct ib_qp_attr *attr,
			      int mask, const struct rxe_path *path)
	__must_hold(&qp->state_lock)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		qp->path = *path;
		rxe_net_qp_reroute(qp);
	}
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(min(attr->path_mtu,
						 rxe_qp_dev(qp)->active_mtu));
	}
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & RXE_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & RXE_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->src_port = rdma_get_udp_sport(qp->path.flow_label,
						  qp->ibqp.qp_num,
						  a->dest_qp_num);
	if (mask & IB_QP_STATE) {
		rxe_qp_start_engines(qp, a->qp_state, attr->qp_state);
		/* Pairs with rxe_qp_state(): the engines start as set here. */
		smp_store_release(&a->qp_state, attr->qp_state);
		a->cur_qp_state = attr->qp_state;
	}
}

/*
 * The QP went to ERR (or SQE): both tasks run to flush its work queues,
 * the send queue's flush counting what its ring holds now.
 */
static void rxe_qp_start_flush(struct rxe_qp *qp)
{
	set_bit(RXE_COMP_EV_FLUSH, &qp->comp.events);
	rxe_task_sched(&qp->send_task);
	rxe_task_sched(&qp->recv_task);
}

/**
 * rxe_qp_modify() - the modify_qp verb
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: IB_QP_* bits naming the attributes to change
 * @udata: unused; the provider passes none
 *
 * ib_core has resolved the destination MAC and the source GID attribute
 * of a new address vector before we see it.
 *
 * Return: 0, -EINVAL for a transition the state table forbids or an
 * attribute out of range, -EOPNOTSUPP for an attribute we do not offer,
 * -EBUSY for a change in SQD before the SQ has drained.
 */
int rxe_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	struct rxe_path path;
	enum ib_qp_state prev, next;
	unsigned long flags;
	bool quiesce;
	int err;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;

	mutex_lock(&qp->modify_mutex);
	err = rxe_qp_check_attr(qp, attr, mask, &path);
	if (err)
		goto out;

	prev = rxe_qp_state(qp);
	next = mask & IB_QP_STATE ? attr->qp_state : prev;

	/*
	 * Moving to RESET stops the tasks to clear the engines. So does a
	 * change of what they read packet by packet (the path, the MTU, the
	 * READ and atomic limits, the retry counts), which the state table
	 * allows only from SQD to SQD, and we only once the SQ has drained:
	 * nothing sent is then waiting to be sent again under other rules.
	 */
	quiesce = next == IB_QPS_RESET;
	if (prev == IB_QPS_SQD && next == IB_QPS_SQD &&
	    (mask & ~(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY))) {
		if (rxe_req_sq_draining(qp)) {
			err = -EBUSY;
			goto out;
		}
		quiesce = true;
	}
	if (quiesce) {
		rxe_task_disable(&qp->send_task);
		rxe_task_disable(&qp->recv_task);
	}

	/*
	 * The data path may have moved the QP to ERR since the checks; apply
	 * the change only if the state table still allows it from there.
	 */
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->attr.qp_state == prev ||
	    ib_modify_qp_is_ok(qp->attr.qp_state, next, qp->ibqp.qp_type, mask))
		rxe_qp_apply_attr(qp, attr, mask, &path);
	else
		err = -EINVAL;
	if (!err && next == IB_QPS_RESET)
		qp->cq_full = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (quiesce) {
		if (!err && next == IB_QPS_RESET)
			rxe_qp_reset_engines(qp);
		rxe_task_enable(&qp->send_task);
		rxe_task_enable(&qp->recv_task);
	}
	if (err)
		goto out;

	switch (next) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		break;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		rxe_task_run(&qp->send_task);
		break;
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		rxe_qp_start_flush(qp);
		break;
	}
out:
	mutex_unlock(&qp->modify_mutex);
	return err;
}

/**
 * rxe_qp_query() - the query_qp verb
 * @ibqp: the QP
 * @attr: filled with the attributes
 * @mask: ignored; everything is returned
 * @init: filled with the creation attributes
 *
 * Return: 0.
 */
int rxe_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	rxe_av_to_attr(&qp->path, &attr->ah_attr);
	attr->sq_draining = rxe_req_sq_draining(qp);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	attr->cur_qp_state = attr->qp_state;

	memset(init, 0, sizeof(*init));
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->srq = qp->ibqp.srq;
	init->cap = qp->attr.cap;
	init->qp_type = qp->ibqp.qp_type;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

/**
 * rxe_qp_destroy() - the destroy_qp verb
 * @ibqp: the QP
 * @udata: unused
 *
 * Teardown, in order, and why:
 *  0. Detach the QP from the multicast groups it is still attached to
 *     (only a kernel consumer leaves it so), while its QPN is still
 *     taken: no QP that gets the number next inherits its memberships.
 *  1. Unpublish the QPN and detach the QP from its skbs in the network
 *     stack: no packet or skb destructor finds the QP any more. Those
 *     that found it before hold a reference (struct rxe_qp_entry).
 *  2. Disable both tasks: neither runs again, and a queued work item has
 *     finished. Whoever still asks one to run, a timer, a packet being
 *     queued, a destructor, only has the request noted.
 *  3. Stop the completer's timers, which no task can now re-arm (the
 *     responder's hold timer goes with its buffers, at step 6).
 *  4. Drain the references, held by contexts that finish on their own:
 *     a packet being queued, a destructor scheduling the tasks, a CPU's
 *     list of QPs owing an ACK, whose tasklet only asks the disabled
 *     receive task to run. skbs still in the network stack hold none: a
 *     stuck netdev may keep them for good, and they only pin the QP's
 *     struct rxe_net_tx (rxe_net_qp_cleanup()).
 *  5. Drop the packets queued for the QP; no more can come.
 *  6. Free the responder's buffers and the rings, and the entry after a
 *     grace period; ib_core frees the QP itself once we return.
 *
 * Return: 0.
 */
int rxe_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibqp->device);
	struct rxe_qp *qp = to_rxe_qp(ibqp);

	rxe_mcast_qp_destroy(qp);
	xa_erase(&rxe->qp_xa, ibqp->qp_num);
	rxe_net_qp_detach(qp);

	rxe_task_disable(&qp->send_task);
	rxe_task_disable(&qp->recv_task);
	rxe_comp_stop(qp);
	rxe_obj_drain(&qp->entry->obj);
	rxe_recv_purge(qp, &qp->req_q);
	rxe_recv_purge(qp, &qp->rsp_q);

	rxe_resp_cleanup(qp);
	rxe_net_qp_cleanup(qp);
	rxe_qp_cleanup_sq(qp);
	if (!qp->srq)
		rxe_queue_cleanup(&qp->rq.queue);
	kfree_rcu(qp->entry, rcu);
	mutex_destroy(&qp->modify_mutex);
	rxe_limit_drop(&rxe->limit[RXE_OBJ_QP], RXE_OBJ_QP);
	pr_debug("%s: QP %u destroyed\n", dev_name(&rxe->ib_dev.dev),
		 ibqp->qp_num);
	return 0;
}

/**
 * rxe_qp_get() - find a QP by number and take a reference
 * @rxe: the device
 * @qpn: the QP number
 *
 * Context: any.
 * Return: the QP, or NULL when no live QP has that number.
 */
struct rxe_qp *rxe_qp_get(struct rxe_dev *rxe, u32 qpn)
{
	struct rxe_qp_entry *entry;
	struct rxe_qp *qp = NULL;

	rcu_read_lock();
	entry = xa_load(&rxe->qp_xa, qpn);
	if (entry && rxe_obj_get(&entry->obj))
		qp = entry->qp;
	rcu_read_unlock();
	return qp;
}

/**
 * rxe_qp_put() - drop a reference taken with rxe_qp_get()
 * @qp: the QP
 */
void rxe_qp_put(struct rxe_qp *qp)
{
	rxe_obj_put(&qp->entry->obj);
}

/**
 * rxe_qp_event() - report an asynchronous event of a QP
 * @qp: the QP
 * @type: the event
 */
void rxe_qp_event(struct rxe_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * rxe_qp_set_error() - move a QP to the error state from the data path
 * @qp: the QP
 *
 * Both tasks run again to flush the outstanding work requests. A QP
 * already in error has had that run: each flushed work request whose
 * completion finds the CQ full comes back here, and scheduling again for
 * each would keep the flush going for as long as a user refills the ring.
 *
 * Context: any.
 */
void rxe_qp_set_error(struct rxe_qp *qp)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->state_lock, flags);
	changed = qp->attr.qp_state != IB_QPS_RESET &&
		  qp->attr.qp_state != IB_QPS_ERR;
	if (changed) {
		WRITE_ONCE(qp->attr.qp_state, IB_QPS_ERR);
		qp->attr.cur_qp_state = IB_QPS_ERR;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (changed)
		rxe_qp_start_flush(qp);
}

/**
 * rxe_qp_cq_full() - a completion of the QP found its CQ full
 * @qp: the QP
 *
 * The completion is lost, and the QP can make no more: it goes to the
 * error state (IBA C9-218) and its consumer hears of it by an affiliated
 * asynchronous error (C11-37; IBA's Local Work Queue Catastrophic Error,
 * IB_EVENT_QP_FATAL), once, whichever of its work queues found the CQ
 * full first. The CQ itself raised IB_EVENT_CQ_ERR (rxe_cq_post()).
 *
 * Context: either task of the QP.
 */
void rxe_qp_cq_full(struct rxe_qp *qp)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&qp->state_lock, flags);
	first = !qp->cq_full;
	qp->cq_full = true;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	rxe_qp_set_error(qp);
	if (first)
		rxe_qp_event(qp, IB_EVENT_QP_FATAL);
}

/**
 * rxe_qp_fill_res_entry() - the driver's view of a QP for `rdma res show qp -dd`
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * The engines' state: where the requester, the completer and the
 * responder stand, the window and round-trip estimate of the completer,
 * and what waits in the packet queues. The tasks change these without a
 * lock while this reads them: a snapshot for diagnosis, not a promise.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int rxe_qp_fill_res_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	const struct {
		const char *name;
		u32 value;
	} attrs[] = {
		{ "req_psn", READ_ONCE(qp->req.psn) },
		{ "req_top_psn", READ_ONCE(qp->req.top_psn) },
		{ "req_rd_atomic", READ_ONCE(qp->req.rd_atomic) },
		{ "sq_done", READ_ONCE(qp->sq.queue.kidx) },
		{ "sq_next", READ_ONCE(qp->req.index) },
		{ "sq_tail", READ_ONCE(qp->req.tail) },
		{ "comp_psn", READ_ONCE(qp->comp.psn) },
		{ "cwnd", READ_ONCE(qp->comp.cwnd) },
		{ "ssthresh", READ_ONCE(qp->comp.ssthresh) },
		{ "srtt_us", (u32)div_u64(READ_ONCE(qp->comp.srtt_ns), NSEC_PER_USEC) },
		{ "rttvar_us", (u32)div_u64(READ_ONCE(qp->comp.rttvar_ns), NSEC_PER_USEC) },
		{ "retry_left", READ_ONCE(qp->comp.retry_left) },
		{ "backoff", READ_ONCE(qp->comp.backoff) },
		{ "rnr_wait", READ_ONCE(qp->comp.rnr_wait) },
		{ "busy", READ_ONCE(qp->comp.busy) },
		{ "window", rxe_comp_window(qp) },
		{ "resp_psn", READ_ONCE(qp->resp.psn) },
		{ "resp_msn", READ_ONCE(qp->resp.msn) },
		{ "req_queue", skb_queue_len(&qp->req_q) },
		{ "req_held", skb_queue_len(&qp->resp.held) },
		{ "rsp_queue", skb_queue_len(&qp->rsp_q) },
		{ "skb_inflight", rxe_net_qp_inflight(qp) },
	};
	struct nlattr *table;
	size_t i;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		if (rdma_nl_put_driver_u32(msg, attrs[i].name, attrs[i].value)) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}
