// SPDX-License-Identifier: GPL-2.0
/*
 * The responder: executes request packets in PSN order.
 *
 * RC: a packet at the expected PSN executes; one ahead of it draws one
 * NAK-PSN-sequence-error per gap and is kept (rxe_resp_hold()) to execute
 * in its turn once the gap fills; one behind it is a duplicate, answered
 * without executing it again (SENDs and WRITEs with an ACK, READs and
 * atomics from the resources kept in resp.res). A request that needs a
 * receive WQE when none is posted draws an RNR NAK. Errors the requester
 * must hear of draw a NAK, and put the QP in error. ACKs are coalesced
 * over what one receive softirq takes in (rxe_resp_ack_idle()).
 *
 * UC: no ACKs; a missing packet drops the rest of its message. UD: one
 * packet per message, delivered behind a GRH.
 *
 * READ responses go out one per call, so a long READ neither starves the
 * queue of other QPs nor floods the network stack.
 */

#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "rxe_resp.h"
#include "rxe_qp.h"
#include "rxe_recv.h"
#include "rxe_cq.h"
#include "rxe_mr.h"
#include "rxe_net.h"
#include "rxe_hdr.h"
#include "rxe_pkt.h"
#include "rxe_counters.h"
#include "rxe_trace.h"

/* What executing a request packet came to. */
enum rxe_resp_result {
	RXE_RESP_OK,		/* executed */
	RXE_RESP_RNR,		/* needs a receive WQE and none is posted */
	RXE_RESP_DROP,		/* drop without a word (UC, UD) */
	RXE_RESP_NAK_INV,	/* invalid request */
	RXE_RESP_NAK_ACC,	/* remote access error */
	RXE_RESP_NAK_OP,	/* remote operational error */
};

/* What taking a receive WQE came to. */
enum rxe_resp_take {
	RXE_TAKE_OK,
	RXE_TAKE_EMPTY,
	RXE_TAKE_BAD,		/* the WQE failed its checks; the QP fails */
};

/* Bytes at the start of a UD receive buffer that hold the GRH. */
#define RXE_GRH_BYTES		40

/* The first kept packet is due to expire: the receive task drops it. */
static enum hrtimer_restart rxe_resp_hold_timer_fn(struct hrtimer *timer)
{
	struct rxe_qp *qp = container_of(timer, struct rxe_qp, resp.hold_timer);

	rxe_task_sched(&qp->recv_task);
	return HRTIMER_NORESTART;
}

/* The responder's state as a new QP has it: nothing kept, no timer set. */
static void rxe_resp_clear(struct rxe_qp *qp)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
	__skb_queue_head_init(&qp->resp.held);
	hrtimer_init(&qp->resp.hold_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->resp.hold_timer.function = rxe_resp_hold_timer_fn;
}

/**
 * rxe_resp_init() - allocate the responder's buffers
 * @qp: a new QP, with its receive queue or SRQ set
 *
 * Return: 0 or -ENOMEM.
 */
int rxe_resp_init(struct rxe_qp *qp)
{
	u32 max_sge = qp->srq ? qp->srq->max_sge : qp->rq.max_sge;

	rxe_resp_clear(qp);
	qp->resp.wqe = kzalloc(struct_size(qp->resp.wqe, sge, max_sge),
			       rxe_obj_gfp(qp->is_user));
	if (!qp->resp.wqe)
		return -ENOMEM;
	if (rxe_qp_type(qp) == IB_QPT_RC) {
		qp->resp.res = kcalloc(RXE_MAX_QP_RD_ATOM,
				       sizeof(*qp->resp.res),
				       rxe_obj_gfp(qp->is_user));
		if (!qp->resp.res) {
			kfree(qp->resp.wqe);
			qp->resp.wqe = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* Drop the packets kept past a gap. */
static void rxe_resp_drop_held(struct rxe_qp *qp)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&qp->resp.held))) {
		atomic_dec(&rxe->held_pkts);
		kfree_skb(skb);
	}
}

/**
 * rxe_resp_cleanup() - free the responder's buffers
 * @qp: the QP, whose receive task is disabled
 *
 * Context: any in which the hold timer's callback may be waited for.
 */
void rxe_resp_cleanup(struct rxe_qp *qp)
{
	hrtimer_cancel(&qp->resp.hold_timer);
	rxe_resp_drop_held(qp);
	kfree(qp->resp.res);
	kfree(qp->resp.wqe);
	qp->resp.res = NULL;
	qp->resp.wqe = NULL;
}

/**
 * rxe_resp_reset() - forget everything the responder knows
 * @qp: a QP moving to RESET, whose tasks are disabled
 */
void rxe_resp_reset(struct rxe_qp *qp)
{
	struct rxe_resp *resp = &qp->resp;
	struct rxe_rd_res *res = resp->res;
	struct rxe_rwqe *wqe = resp->wqe;

	hrtimer_cancel(&resp->hold_timer);
	rxe_resp_drop_held(qp);
	rxe_resp_clear(qp);
	resp->wqe = wqe;
	resp->res = res;
	if (res)
		memset(res, 0, RXE_MAX_QP_RD_ATOM * sizeof(*res));
}

/**
 * rxe_resp_start() - begin receiving at the QP's receive PSN
 * @qp: a QP moving to RTR
 */
void rxe_resp_start(struct rxe_qp *qp)
{
	qp->resp.psn = qp->attr.rq_psn;
}

/* Send an ACK or NAK carrying @syn for @psn. */
static void rxe_resp_send_ack(struct rxe_qp *qp, u8 syn, u32 psn)
{
	unsigned int len = RXE_BTH_BYTES + RXE_AETH_BYTES + RXE_ICRC_SIZE;
	struct sk_buff *skb;

	skb = rxe_net_alloc_skb(rxe_qp_dev(qp), len);
	if (!skb) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_DROP_NOMEM);
		return;
	}
	bth_init((struct rxe_bth *)skb->data, IB_OPCODE_RC_ACKNOWLEDGE, false,
		 0, RXE_DEFAULT_PKEY, qp->attr.dest_qp_num, false, psn);
	aeth_init((struct rxe_aeth *)(skb->data + RXE_BTH_BYTES), syn,
		  qp->resp.msn);
	rxe_net_xmit(qp, &qp->path, qp->src_port, skb);
}

static void rxe_resp_nak(struct rxe_qp *qp, u8 code, u32 psn)
{
	rxe_resp_send_ack(qp, aeth_syndrome(AETH_TYPE_NAK, code), psn);
}

/*
 * An RC responder that NAKs a request for an error goes to the error state
 * (IBA 9.9.3.1), and says why to its own consumer with an affiliated
 * asynchronous error (IBA 11.6.3): an RDMA WRITE, READ or atomic takes no
 * receive WQE, and without the event nothing would tell it.
 */
static void rxe_resp_nak_error(struct rxe_qp *qp, u8 code, u32 psn)
{
	enum ib_event_type event;

	switch (code) {
	case AETH_NAK_INVALID_REQ:
		event = IB_EVENT_QP_REQ_ERR;
		break;
	case AETH_NAK_REM_ACC_ERR:
		event = IB_EVENT_QP_ACCESS_ERR;
		break;
	default:
		event = IB_EVENT_QP_FATAL;
		break;
	}
	rxe_resp_nak(qp, code, psn);
	rxe_qp_set_error(qp);
	rxe_qp_event(qp, event);
}

/* Everything executed so far is acknowledged: nothing is owed. */
static void rxe_resp_acked(struct rxe_resp *resp)
{
	resp->ack_pending = false;
	resp->ack_count = 0;
	resp->unacked = 0;
}

/* Send the coalesced ACK that is owed, if any. */
static void rxe_resp_flush_ack(struct rxe_qp *qp)
{
	struct rxe_resp *resp = &qp->resp;

	if (!resp->ack_pending)
		return;
	rxe_resp_send_ack(qp, aeth_syndrome(AETH_TYPE_ACK, AETH_CREDIT_INVALID),
			  resp->ack_psn);
	if (resp->ack_count > 1)
		rxe_counter_add(rxe_qp_dev(qp), RXE_CNT_ACK_COALESCED,
				resp->ack_count - 1);
	rxe_resp_acked(resp);
}

/*
 * ACKs at the end of the receive round. The receive task runs in the
 * softirq that takes each packet off the netdev, one packet at a time, so
 * its queue runs dry after every packet, and an ACK owed then would go out
 * at once: one per packet that asks, even when the next packets of the QP
 * are already waiting on the netdev. Instead the QP goes on this CPU's
 * list, and a tasklet sends its ACK once the softirq has taken in what it
 * had: tasklets run after the network receive softirq that raised them.
 * An ACK that answers RXE_MAX_ACK_COALESCE requests goes out at once.
 *
 * The list is only touched on its own CPU with bottom halves disabled
 * (the receive task and the tasklet), so it needs no lock. Each QP on
 * it holds a reference, which destroy waits for.
 */
struct rxe_ack_round {
	struct list_head qps;
	struct tasklet_struct tasklet;
};

static DEFINE_PER_CPU(struct rxe_ack_round, rxe_ack_round);

static void rxe_resp_ack_round_end(struct tasklet_struct *t)
{
	struct rxe_ack_round *round = from_tasklet(round, t, tasklet);
	struct rxe_qp *qp, *next;
	LIST_HEAD(qps);

	list_splice_init(&round->qps, &qps);
	list_for_each_entry_safe(qp, next, &qps, ack_link) {
		list_del_init(&qp->ack_link);
		clear_bit_unlock(RXE_ACK_LISTED, &qp->ack_flags);
		set_bit(RXE_ACK_NOW, &qp->ack_flags);
		rxe_task_run(&qp->recv_task);
		rxe_qp_put(qp);
	}
}

/**
 * rxe_resp_module_init() - set up each CPU's list of QPs owing an ACK
 */
void rxe_resp_module_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rxe_ack_round *round = per_cpu_ptr(&rxe_ack_round, cpu);

		INIT_LIST_HEAD(&round->qps);
		tasklet_setup(&round->tasklet, rxe_resp_ack_round_end);
	}
}

/**
 * rxe_resp_module_exit() - wait for the last round's tasklets
 *
 * Context: every QP is destroyed, so no tasklet is scheduled again.
 */
void rxe_resp_module_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		tasklet_kill(&per_cpu_ptr(&rxe_ack_round, cpu)->tasklet);
}

/*
 * The queue ran dry with an ACK owed: send it now, or at the end of this
 * receive round when the task runs in the softirq that takes packets in.
 * An ACK for the only packet since the last one goes at once: the
 * requester is not streaming, more likely waiting for it (a ping-pong),
 * and the tasklet may be left to ksoftirqd when the round ran long.
 */
static void rxe_resp_ack_idle(struct rxe_qp *qp)
{
	bool now = test_and_clear_bit(RXE_ACK_NOW, &qp->ack_flags);
	struct rxe_ack_round *round;

	if (!qp->resp.ack_pending)
		return;
	if (now || !in_serving_softirq() || qp->resp.unacked < 2) {
		rxe_resp_flush_ack(qp);
		return;
	}
	if (test_and_set_bit_lock(RXE_ACK_LISTED, &qp->ack_flags))
		return;		/* a round's end is coming for it */
	if (!rxe_obj_get(&qp->entry->obj)) {
		clear_bit_unlock(RXE_ACK_LISTED, &qp->ack_flags);
		rxe_resp_flush_ack(qp);
		return;
	}
	round = this_cpu_ptr(&rxe_ack_round);
	list_add_tail(&qp->ack_link, &round->qps);
	tasklet_schedule(&round->tasklet);
}

/* A response of ours (READ, atomic) acknowledges what came before it. */
static void rxe_resp_drop_ack(struct rxe_qp *qp)
{
	if (qp->resp.ack_pending)
		rxe_counter_add(rxe_qp_dev(qp), RXE_CNT_ACK_COALESCED,
				qp->resp.ack_count);
	rxe_resp_acked(&qp->resp);
}

/*
 * Copy the receive WQE at the consumer index into resp.wqe and check it.
 * The ring may be userspace's: one read of each field, then only the copy
 * is used.
 */
static enum rxe_resp_take rxe_resp_copy_wqe(struct rxe_qp *qp,
					    struct rxe_queue *q, u32 max_sge)
{
	const struct rxe_recv_wqe *slot = rxe_queue_kslot(q);
	struct rxe_rwqe *wqe = qp->resp.wqe;
	u64 length = 0;
	u32 i, num_sge;

	wqe->wr_id = READ_ONCE(slot->wr_id);
	num_sge = READ_ONCE(slot->dma.num_sge);
	if (num_sge > max_sge) {
		wqe->num_sge = 0;
		wqe->length = 0;
		return RXE_TAKE_BAD;
	}
	memcpy(wqe->sge, slot->dma.sge, num_sge * sizeof(wqe->sge[0]));
	barrier();
	for (i = 0; i < num_sge; i++)
		length += wqe->sge[i].length;
	wqe->num_sge = num_sge;
	wqe->length = min_t(u64, length, RXE_MAX_MSG_SIZE);
	return length > RXE_MAX_MSG_SIZE ? RXE_TAKE_BAD : RXE_TAKE_OK;
}

/* Take the next receive WQE of the QP's receive queue or SRQ. */
static enum rxe_resp_take rxe_resp_take_wqe(struct rxe_qp *qp)
{
	struct rxe_srq *srq = qp->srq;
	enum rxe_resp_take ret;
	bool limit_event = false;
	unsigned long flags;
	struct rxe_queue *q;
	u32 peer;

	if (!srq) {
		q = &qp->rq.queue;
		if (!rxe_queue_count(q, rxe_queue_peer_index(q)))
			return RXE_TAKE_EMPTY;
		ret = rxe_resp_copy_wqe(qp, q, qp->rq.max_sge);
		rxe_queue_advance(q);
		goto taken;
	}

	q = &srq->queue;
	spin_lock_irqsave(&srq->lock, flags);
	peer = rxe_queue_peer_index(q);
	if (!rxe_queue_count(q, peer)) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return RXE_TAKE_EMPTY;
	}
	ret = rxe_resp_copy_wqe(qp, q, srq->max_sge);
	rxe_queue_advance(q);
	if (srq->limit && rxe_queue_count(q, peer) < srq->limit) {
		srq->limit = 0;
		limit_event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit_event && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
taken:
	qp->resp.wqe_valid = true;
	qp->resp.offset = 0;
	return ret;
}

/* Build the GRH a UD receive buffer starts with, from the IP header. */
static void rxe_resp_grh(struct sk_buff *skb, u8 *grh)
{
	memset(grh, 0, RXE_GRH_BYTES);
	if (ip_hdr(skb)->version == 4)
		memcpy(grh + RXE_GRH_BYTES - sizeof(struct iphdr),
		       skb_network_header(skb), sizeof(struct iphdr));
	else
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
}

/* Complete the receive WQE in use. */
static void rxe_resp_complete(struct rxe_qp *qp, struct sk_buff *skb,
			      enum ib_wc_status status, u32 byte_len)
{
	struct rxe_pkt *pkt = skb ? rxe_skb_pkt(skb) : NULL;
	struct ib_wc wc = {
		.wr_id = qp->resp.wqe->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = qp->attr.dest_qp_num,
		.port_num = 1,
	};
	bool solicited = false;

	qp->resp.wqe_valid = false;
	if (status == IB_WC_SUCCESS && pkt) {
		if (pkt->mask & RXE_WRITE_MASK)
			wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		if (pkt->mask & RXE_IMMDT_MASK) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = ((struct rxe_immdt *)
					  rxe_pkt_hdr(skb, RXE_IMMDT))->imm;
		}
		if (pkt->mask & RXE_IETH_MASK) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey =
				ieth_rkey(rxe_pkt_hdr(skb, RXE_IETH));
		}
		if (pkt->mask & RXE_DETH_MASK) {
			wc.src_qp = deth_sqp(rxe_pkt_hdr(skb, RXE_DETH));
			wc.wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
			wc.network_hdr_type = ip_hdr(skb)->version == 4 ?
				RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
			/*
			 * Not for a datagram the IP layer looped back, whose
			 * MAC header is its network header.
			 */
			if (skb_mac_header_was_set(skb) &&
			    skb_mac_header_len(skb) >= ETH_HLEN) {
				ether_addr_copy(wc.smac, eth_hdr(skb)->h_source);
				wc.wc_flags |= IB_WC_WITH_SMAC;
			}
			/*
			 * Arrived through a VLAN: ib_core finds the GID to
			 * answer from by it (the connection manager's MADs).
			 */
			if (pkt->vlan_id != RXE_PKT_NO_VLAN) {
				wc.vlan_id = pkt->vlan_id;
				wc.wc_flags |= IB_WC_WITH_VLAN;
			}
		}
		solicited = bth_se((struct rxe_bth *)skb->data);
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RDMA_RECVS);
	}

	trace_rxe_wqe_complete(qp, wc.wr_id, status);
	if (rxe_cq_post(qp->rcq, &wc, solicited))
		rxe_qp_cq_full(qp);
}

/* A SEND packet: its payload goes to the receive WQE. */
static enum rxe_resp_result rxe_resp_send(struct rxe_qp *qp,
					  struct sk_buff *skb,
					  enum ib_wc_status *status)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_resp *resp = &qp->resp;
	struct rxe_buf buf = { .skb = skb, .off = pkt->hdrlen };
	u8 grh[RXE_GRH_BYTES];
	u32 room, skip = 0;

	/*
	 * A message's first packet takes a receive WQE, unless a UC message
	 * that lost its end left one taken: that one is filled again.
	 */
	if ((pkt->mask & RXE_START_MASK) && !resp->wqe_valid) {
		switch (rxe_resp_take_wqe(qp)) {
		case RXE_TAKE_EMPTY:
			return rxe_qp_type(qp) == IB_QPT_RC ? RXE_RESP_RNR :
							      RXE_RESP_DROP;
		case RXE_TAKE_BAD:
			*status = IB_WC_LOC_QP_OP_ERR;
			return RXE_RESP_NAK_OP;
		case RXE_TAKE_OK:
			break;
		}
	}
	if (pkt->mask & RXE_START_MASK)
		resp->offset = 0;

	if (rxe_qp_is_ud(qp)) {
		/* The GRH fills the first 40 bytes of the buffer. */
		if (resp->wqe->length < RXE_GRH_BYTES + pkt->paylen) {
			*status = IB_WC_LOC_LEN_ERR;
			return RXE_RESP_DROP;
		}
		rxe_resp_grh(skb, grh);
		buf.skb = NULL;
		buf.ptr = grh;
		buf.off = 0;
		if (rxe_mr_copy_sgl(qp, resp->wqe->sge, resp->wqe->num_sge, 0,
				    &buf, RXE_GRH_BYTES, RXE_TO_MR,
				    IB_ACCESS_LOCAL_WRITE, status))
			return RXE_RESP_DROP;
		buf.skb = skb;
		buf.ptr = NULL;
		buf.off = pkt->hdrlen;
		skip = RXE_GRH_BYTES;
	}

	room = resp->wqe->length - skip - resp->offset;
	if (pkt->paylen > room) {
		*status = IB_WC_LOC_LEN_ERR;
		return RXE_RESP_NAK_INV;
	}
	if (pkt->paylen &&
	    rxe_mr_copy_sgl(qp, resp->wqe->sge, resp->wqe->num_sge,
			    skip + resp->offset, &buf, pkt->paylen, RXE_TO_MR,
			    IB_ACCESS_LOCAL_WRITE, status))
		return RXE_RESP_NAK_OP;
	resp->offset += pkt->paylen;

	if (!(pkt->mask & RXE_END_MASK)) {
		resp->msg = RXE_SEND_MASK;
		return RXE_RESP_OK;
	}

	resp->msg = 0;
	if ((pkt->mask & RXE_IETH_MASK) &&
	    rxe_mr_invalidate(qp, ieth_rkey(rxe_pkt_hdr(skb, RXE_IETH)),
			      true)) {
		*status = IB_WC_LOC_PROT_ERR;
		return RXE_RESP_NAK_INV;
	}
	rxe_resp_complete(qp, skb, IB_WC_SUCCESS, skip + resp->offset);
	return RXE_RESP_OK;
}

/* Does the QP let its peer at memory this way (IBA 10.2.4.2)? */
static bool rxe_resp_qp_allows(const struct rxe_qp *qp, u32 access)
{
	return qp->attr.qp_access_flags & access;
}

/* A WRITE packet: its payload goes to the region its first packet named. */
static enum rxe_resp_result rxe_resp_write(struct rxe_qp *qp,
					   struct sk_buff *skb,
					   enum ib_wc_status *status)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_resp *resp = &qp->resp;
	struct rxe_buf buf = { .skb = skb, .off = pkt->hdrlen };
	const struct rxe_reth *reth;
	struct rxe_mr *mr;
	int err;

	if (pkt->mask & RXE_START_MASK) {
		if (!rxe_resp_qp_allows(qp, IB_ACCESS_REMOTE_WRITE))
			return RXE_RESP_NAK_ACC;
		reth = rxe_pkt_hdr(skb, RXE_RETH);
		resp->va = reth_va(reth);
		resp->rkey = reth_rkey(reth);
		resp->length = reth_len(reth);
		resp->offset = 0;
		if (resp->length > RXE_MAX_MSG_SIZE)
			return RXE_RESP_NAK_INV;
	}

	if (pkt->paylen > resp->length - resp->offset ||
	    (!!(pkt->mask & RXE_END_MASK) !=
	     (resp->offset + pkt->paylen == resp->length)))
		return RXE_RESP_NAK_INV;

	/*
	 * WRITE with immediate consumes a receive WQE: make sure of one first.
	 * On UC it may be the one a SEND that lost its end left taken
	 * (rxe_resp_uc()), which the next message fills, whatever it is.
	 */
	if ((pkt->mask & RXE_RWR_MASK) && !resp->wqe_valid) {
		switch (rxe_resp_take_wqe(qp)) {
		case RXE_TAKE_EMPTY:
			return rxe_qp_type(qp) == IB_QPT_RC ? RXE_RESP_RNR :
							      RXE_RESP_DROP;
		case RXE_TAKE_BAD:
			*status = IB_WC_LOC_QP_OP_ERR;
			return RXE_RESP_NAK_OP;
		case RXE_TAKE_OK:
			break;
		}
	}

	if (pkt->paylen) {
		mr = rxe_mr_get_remote(qp, resp->rkey,
				       resp->va + resp->offset, pkt->paylen,
				       IB_ACCESS_REMOTE_WRITE);
		if (!mr) {
			*status = IB_WC_REM_ACCESS_ERR;
			return RXE_RESP_NAK_ACC;
		}
		err = rxe_mr_copy(mr, resp->va + resp->offset, &buf,
				  pkt->paylen, RXE_TO_MR);
		rxe_mr_put(mr);
		if (err)
			return RXE_RESP_NAK_ACC;
	}
	resp->offset += pkt->paylen;

	if (!(pkt->mask & RXE_END_MASK)) {
		resp->msg = RXE_WRITE_MASK;
		return RXE_RESP_OK;
	}
	resp->msg = 0;
	if (pkt->mask & RXE_COMP_MASK)
		rxe_resp_complete(qp, skb, IB_WC_SUCCESS, resp->length);
	return RXE_RESP_OK;
}

/* The next entry of the READ and atomic resources. */
static struct rxe_rd_res *rxe_resp_new_res(struct rxe_qp *qp)
{
	struct rxe_rd_res *res = &qp->resp.res[qp->resp.res_next];

	qp->resp.res_next = (qp->resp.res_next + 1) %
			    qp->attr.max_dest_rd_atomic;
	return res;
}

/* A READ request: check it, keep it, and start its responses. */
static enum rxe_resp_result rxe_resp_read_req(struct rxe_qp *qp,
					      struct sk_buff *skb)
{
	const struct rxe_reth *reth = rxe_pkt_hdr(skb, RXE_RETH);
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	u32 len = reth_len(reth), npkts;
	struct rxe_rd_res *res;
	struct rxe_mr *mr;

	if (!qp->attr.max_dest_rd_atomic || len > RXE_MAX_MSG_SIZE)
		return RXE_RESP_NAK_INV;
	if (!rxe_resp_qp_allows(qp, IB_ACCESS_REMOTE_READ))
		return RXE_RESP_NAK_ACC;
	if (len) {
		mr = rxe_mr_get_remote(qp,
				       reth_rkey(reth), reth_va(reth), len,
				       IB_ACCESS_REMOTE_READ);
		if (!mr)
			return RXE_RESP_NAK_ACC;
		rxe_mr_put(mr);
	}

	npkts = max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
	res = rxe_resp_new_res(qp);
	res->kind = RXE_READ_MASK;
	res->first_psn = pkt->psn;
	res->last_psn = rxe_psn_add(pkt->psn, npkts - 1);
	res->va = reth_va(reth);
	res->rkey = reth_rkey(reth);
	res->length = len;

	rxe_resp_drop_ack(qp);
	qp->resp.read = res;
	qp->resp.read_psn = pkt->psn;
	qp->resp.read_start = pkt->psn;
	qp->resp.read_end = res->last_psn;
	qp->resp.psn = rxe_psn_add(res->last_psn, 1);
	qp->resp.msn++;
	return RXE_RESP_OK;
}

/* Send one atomic ACK with the original value. */
static void rxe_resp_send_atomic_ack(struct rxe_qp *qp, u32 psn, u64 orig)
{
	unsigned int len = RXE_BTH_BYTES + RXE_AETH_BYTES + RXE_ATMACK_BYTES +
			   RXE_ICRC_SIZE;
	struct sk_buff *skb;

	skb = rxe_net_alloc_skb(rxe_qp_dev(qp), len);
	if (!skb) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_DROP_NOMEM);
		return;
	}
	bth_init((struct rxe_bth *)skb->data, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
		 false, 0, RXE_DEFAULT_PKEY, qp->attr.dest_qp_num, false, psn);
	aeth_init((struct rxe_aeth *)(skb->data + RXE_BTH_BYTES),
		  aeth_syndrome(AETH_TYPE_ACK, AETH_CREDIT_INVALID), qp->resp.msn);
	atmack_init((struct rxe_atmack *)(skb->data + RXE_BTH_BYTES +
					  RXE_AETH_BYTES), orig);
	rxe_net_xmit(qp, &qp->path, qp->src_port, skb);
}

/* The aligned 8 bytes an atomic or an ATOMIC WRITE works on, mapped. */
struct rxe_u64_map {
	struct rxe_mr *mr;
	struct page *page;
	u64 *addr;
};

/*
 * Check that the QP and @rkey grant @access to the 8 bytes at @va, which
 * is aligned, and map them. Return false for a remote access error.
 */
static bool rxe_resp_map_u64(struct rxe_qp *qp, u32 rkey, u64 va, u32 access,
			     struct rxe_u64_map *map)
{
	if (!rxe_resp_qp_allows(qp, access))
		return false;
	map->mr = rxe_mr_get_remote(qp, rkey, va, sizeof(u64), access);
	if (!map->mr)
		return false;
	map->addr = rxe_mr_atomic_addr(map->mr, va, &map->page);
	if (!map->addr) {
		rxe_mr_put(map->mr);
		return false;
	}
	return true;
}

static void rxe_resp_unmap_u64(struct rxe_u64_map *map)
{
	if (map->page)
		kunmap_local(map->addr);
	rxe_mr_put(map->mr);
}

/*
 * An atomic request: executed with a real atomic instruction on the
 * target memory, so it is atomic against the CPUs too, and kept so that a
 * duplicate gets the same answer without running it again.
 */
static enum rxe_resp_result rxe_resp_atomic(struct rxe_qp *qp,
					    struct sk_buff *skb)
{
	const struct rxe_atmeth *atm = rxe_pkt_hdr(skb, RXE_ATMETH);
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	u64 va = atmeth_va(atm), orig;
	struct rxe_u64_map map;
	struct rxe_rd_res *res;

	if (!qp->attr.max_dest_rd_atomic || (va & (sizeof(u64) - 1)))
		return RXE_RESP_NAK_INV;
	if (!rxe_resp_map_u64(qp, atmeth_rkey(atm), va, IB_ACCESS_REMOTE_ATOMIC,
			      &map))
		return RXE_RESP_NAK_ACC;
	if (pkt->opcode == IB_OPCODE_RC_COMPARE_SWAP)
		orig = cmpxchg64(map.addr, atmeth_compare(atm),
				 atmeth_swap_add(atm));
	else
		orig = atomic64_fetch_add(atmeth_swap_add(atm),
					  (atomic64_t *)map.addr);
	rxe_resp_unmap_u64(&map);

	res = rxe_resp_new_res(qp);
	res->kind = RXE_ATOMIC_MASK;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;

	rxe_resp_drop_ack(qp);
	qp->resp.psn = rxe_psn_add(pkt->psn, 1);
	qp->resp.msn++;
	rxe_resp_send_atomic_ack(qp, pkt->psn, orig);
	return RXE_RESP_OK;
}

/*
 * Answer the request at @psn, which @res keeps, with one READ response of
 * no bytes: how FLUSH and ATOMIC WRITE are acknowledged.
 */
static void rxe_resp_answer_empty(struct rxe_qp *qp, struct rxe_rd_res *res,
				  u32 psn)
{
	qp->resp.read = res;
	qp->resp.read_psn = psn;
	qp->resp.read_start = psn;
	qp->resp.read_end = psn;
}

#ifdef RXE_HAVE_MPE
/* Keep an executed FLUSH or ATOMIC WRITE for its duplicates, and answer it. */
static void rxe_resp_keep_empty(struct rxe_qp *qp, u32 kind, u32 psn)
{
	struct rxe_rd_res *res = rxe_resp_new_res(qp);

	res->kind = kind;
	res->first_psn = psn;
	res->last_psn = psn;
	res->va = 0;
	res->rkey = 0;
	res->length = 0;
	rxe_resp_drop_ack(qp);
	rxe_resp_answer_empty(qp, res, psn);
	qp->resp.psn = rxe_psn_add(psn, 1);
	qp->resp.msn++;
}

/*
 * A FLUSH (Memory Placement Extensions annex): the requests before it
 * were executed in PSN order, their bytes stored by the CPU; a barrier
 * makes them visible to every agent before the answer goes. Persistence
 * is not offered (no region may be registered for it), so a FLUSH that
 * asks for it fails the access checks. The whole-region level names the
 * region by its key alone.
 */
static enum rxe_resp_result rxe_resp_flush_req(struct rxe_qp *qp,
					       struct sk_buff *skb)
{
	const struct rxe_feth *feth = rxe_pkt_hdr(skb, RXE_FETH);
	const struct rxe_reth *reth = rxe_pkt_hdr(skb, RXE_RETH);
	u8 plt = feth_plt(feth), sel = feth_sel(feth);
	u32 access = 0;
	struct rxe_mr *mr;

	if (!qp->attr.max_dest_rd_atomic || sel > IB_FLUSH_MR ||
	    (plt & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT)))
		return RXE_RESP_NAK_INV;
	if (plt & IB_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (plt & IB_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	if (access & ~qp->attr.qp_access_flags)
		return RXE_RESP_NAK_ACC;

	if (sel == IB_FLUSH_MR)
		mr = rxe_mr_get_remote_key(qp, reth_rkey(reth), access);
	else
		mr = rxe_mr_get_remote(qp, reth_rkey(reth), reth_va(reth),
				       reth_len(reth), access);
	if (!mr)
		return RXE_RESP_NAK_ACC;
	rxe_mr_put(mr);

	if (plt & IB_FLUSH_GLOBAL) {
		/* Every store of the requests before it lands before the answer. */
		wmb();
	}
	rxe_resp_keep_empty(qp, RXE_FLUSH_MASK, rxe_skb_pkt(skb)->psn);
	return RXE_RESP_OK;
}

/*
 * An ATOMIC WRITE: its 8 bytes go to an aligned address in one store, so
 * no CPU sees half of them, and with release order, so a CPU that sees
 * them sees every WRITE before it too.
 */
static enum rxe_resp_result rxe_resp_awrite(struct rxe_qp *qp,
					    struct sk_buff *skb)
{
	const struct rxe_reth *reth = rxe_pkt_hdr(skb, RXE_RETH);
	const struct rxe_bth *bth = rxe_pkt_hdr(skb, RXE_BTH);
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	u64 va = reth_va(reth), value;
	struct rxe_u64_map map;

	if (!qp->attr.max_dest_rd_atomic || reth_len(reth) != RXE_AWRITE_BYTES ||
	    pkt->paylen != RXE_AWRITE_BYTES || bth_pad(bth) ||
	    (va & (RXE_AWRITE_BYTES - 1)))
		return RXE_RESP_NAK_INV;
	/*
	 * The bytes as they came, in no byte order of ours; only the headers
	 * are pulled into the linear part, so they may sit in a frag.
	 */
	if (skb_copy_bits(skb, pkt->hdrlen, &value, sizeof(value)))
		return RXE_RESP_NAK_INV;
	if (!rxe_resp_map_u64(qp, reth_rkey(reth), va, IB_ACCESS_REMOTE_WRITE,
			      &map))
		return RXE_RESP_NAK_ACC;
	/* Orders the WRITEs executed before it ahead of these 8 bytes. */
	smp_store_release(map.addr, value);
	rxe_resp_unmap_u64(&map);

	rxe_resp_keep_empty(qp, RXE_AWRITE_MASK, pkt->psn);
	return RXE_RESP_OK;
}
#endif /* RXE_HAVE_MPE */

/*
 * A READ response whose payload lies in the region's own pages, with pad
 * and room for the ICRC behind it (rxe_mr_lend()), or NULL: copy it.
 */
static struct sk_buff *rxe_resp_lend(struct rxe_qp *qp, struct rxe_mr *mr,
				     u64 iova, u32 hdr_len, u32 paylen, u8 pad)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct sk_buff *skb;

	if (!mr || !rxe_net_may_lend(rxe, paylen))
		return NULL;
	skb = rxe_net_alloc_skb_lend(rxe, hdr_len);
	if (!skb)
		return NULL;
	if (!rxe_mr_lend(mr, iova, skb, paylen) &&
	    rxe_net_add_trailer(skb, pad)) {
		rxe_counter_inc(rxe, RXE_CNT_LENT_PKTS);
		return skb;
	}
	/* Out of the region's pages, too: the copy finds that out again. */
	kfree_skb(skb);
	return NULL;
}

/* Send the next response packet of the READ being answered. */
static void rxe_resp_send_read(struct rxe_qp *qp, struct rxe_net_batch *batch)
{
	struct rxe_resp *resp = &qp->resp;
	struct rxe_rd_res *res = resp->read;
	u32 psn = resp->read_psn, mtu = qp->mtu;
	u32 offset = rxe_psn_diff(psn, res->first_psn) * mtu;
	u32 paylen = min(res->length - offset, mtu);
	bool first = psn == resp->read_start, last = psn == resp->read_end;
	u8 opcode, pad = (4 - paylen) & 3;
	const struct rxe_opcode_info *info;
	struct rxe_buf buf;
	struct sk_buff *skb;
	struct rxe_mr *mr;
	int err;

	if (first)
		opcode = last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
				IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	else
		opcode = last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
				IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
	info = &rxe_opcode[opcode];

	mr = NULL;
	if (paylen) {
		mr = rxe_mr_get_remote(qp, res->rkey, res->va + offset, paylen,
				       IB_ACCESS_REMOTE_READ);
		if (!mr)
			goto gone;
	}
	skb = rxe_resp_lend(qp, mr, res->va + offset, info->length, paylen,
			    pad);
	if (!skb) {
		skb = rxe_net_alloc_skb(rxe_qp_dev(qp), info->length + paylen +
					pad + RXE_ICRC_SIZE);
		if (!skb) {
			/* Try this response again on the next run. */
			if (mr)
				rxe_mr_put(mr);
			rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_DROP_NOMEM);
			return;
		}
		buf.skb = skb;
		buf.ptr = NULL;
		buf.off = info->length;
		err = mr ? rxe_mr_copy(mr, res->va + offset, &buf, paylen,
				       RXE_FROM_MR) : 0;
		if (err) {
			kfree_skb(skb);
			rxe_mr_put(mr);
			goto gone;
		}
		memset(skb->data + info->length + paylen, 0, pad);
	}
	if (mr)
		rxe_mr_put(mr);

	bth_init((struct rxe_bth *)skb->data, opcode, false, pad,
		 RXE_DEFAULT_PKEY, qp->attr.dest_qp_num, false, psn);
	if (info->mask & RXE_AETH_MASK)
		aeth_init((struct rxe_aeth *)(skb->data + info->offset[RXE_AETH]),
			  aeth_syndrome(AETH_TYPE_ACK, AETH_CREDIT_INVALID),
			  resp->msn);
	rxe_net_send(qp, &qp->path, qp->src_port, skb, batch);

	resp->read_psn = rxe_psn_add(psn, 1);
	if (last)
		resp->read = NULL;
	return;

gone:
	/* The region went away under the READ: the NAK goes after the rest. */
	rxe_net_flush(qp, batch);
	resp->read = NULL;
	rxe_resp_nak_error(qp, AETH_NAK_REM_ACC_ERR, psn);
}

/*
 * Find the kept READ or atomic a duplicate request asks for again, newest
 * first: an entry kept since before the 24-bit PSNs last went round may
 * hold the same PSNs as a recent one, and its address and key are not
 * the ones the duplicate means.
 */
static struct rxe_rd_res *rxe_resp_find_res(struct rxe_qp *qp, u32 kind,
					    u32 psn)
{
	u32 n = qp->attr.max_dest_rd_atomic;
	struct rxe_rd_res *res;
	u32 i;

	for (i = 1; i <= n; i++) {
		res = &qp->resp.res[(qp->resp.res_next + n - i) % n];
		if (res->kind == kind &&
		    rxe_psn_diff(psn, res->first_psn) >= 0 &&
		    rxe_psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/*
 * The PSN of the last response a duplicate READ request for @res asks
 * for: as many as its length takes, from its own PSN, and none past the
 * READ's own end. The responses come from what the first request asked
 * for and was allowed; the duplicate's address and key are not used.
 */
static u32 rxe_resp_dup_read_end(const struct rxe_qp *qp,
				 const struct rxe_rd_res *res,
				 struct sk_buff *skb)
{
	u32 psn = rxe_skb_pkt(skb)->psn;
	u32 len = reth_len(rxe_pkt_hdr(skb, RXE_RETH));
	u32 npkts = max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
	u32 left = rxe_psn_diff(res->last_psn, psn);

	return rxe_psn_add(psn, min(npkts - 1, left));
}

/*
 * A duplicate's answer ends at @end, before what this responder has
 * executed since: it stands for an ACK owed only when it reaches the last
 * PSN executed. An ACK owed for later requests goes after it, when the
 * queue is empty (rxe_resp_ack_idle()); dropped, it would leave them
 * unacknowledged until the requester's timer.
 */
static void rxe_resp_dup_drop_ack(struct rxe_qp *qp, u32 end)
{
	if (rxe_psn_diff(qp->resp.psn, end) <= 1)
		rxe_resp_drop_ack(qp);
}

/* A request we saw before (IBA 9.7.5.1.2): answer it, execute nothing. */
static void rxe_resp_duplicate(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_rd_res *res;

	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_DUP_REQ);
	if (pkt->mask & RXE_READ_MASK) {
		res = rxe_resp_find_res(qp, RXE_READ_MASK, pkt->psn);
		if (res) {
			qp->resp.read = res;
			qp->resp.read_psn = pkt->psn;
			qp->resp.read_start = pkt->psn;
			qp->resp.read_end = rxe_resp_dup_read_end(qp, res, skb);
			rxe_resp_dup_drop_ack(qp, qp->resp.read_end);
		}
	} else if (pkt->mask & RXE_ATOMIC_MASK) {
		res = rxe_resp_find_res(qp, RXE_ATOMIC_MASK, pkt->psn);
		if (res && res->first_psn == pkt->psn)
			rxe_resp_send_atomic_ack(qp, pkt->psn, res->orig);
	} else if (pkt->mask & (RXE_FLUSH_MASK | RXE_AWRITE_MASK)) {
		/* Answered again, not executed again: a newer value may be there. */
		res = rxe_resp_find_res(qp, pkt->mask &
					(RXE_FLUSH_MASK | RXE_AWRITE_MASK),
					pkt->psn);
		if (res) {
			rxe_resp_dup_drop_ack(qp, pkt->psn);
			rxe_resp_answer_empty(qp, res, pkt->psn);
		}
	} else {
		/*
		 * Its ACK was lost, or the requester went back over packets
		 * this responder kept: acknowledge everything so far again,
		 * once for all the duplicates that come together.
		 */
		qp->resp.ack_pending = true;
		qp->resp.ack_psn = rxe_psn_add(qp->resp.psn, -1);
	}
}

/* Is the opcode the one that may come next (IBA 9.8.3.1)? */
static bool rxe_resp_in_sequence(const struct rxe_qp *qp, u32 mask)
{
	if (qp->resp.msg)
		return (mask & qp->resp.msg) && !(mask & RXE_START_MASK);
	return mask & RXE_START_MASK;
}

/* Execute one request packet. */
static enum rxe_resp_result rxe_resp_execute(struct rxe_qp *qp,
					     struct sk_buff *skb,
					     enum ib_wc_status *status)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	u32 mtu = qp->mtu;

	if (!rxe_resp_in_sequence(qp, pkt->mask))
		return RXE_RESP_NAK_INV;
	/* Every packet but a message's last carries a full MTU. */
	if (pkt->paylen > mtu ||
	    (!(pkt->mask & RXE_END_MASK) && pkt->paylen != mtu))
		return RXE_RESP_NAK_INV;

	if (pkt->mask & RXE_SEND_MASK)
		return rxe_resp_send(qp, skb, status);
	if (pkt->mask & RXE_WRITE_MASK)
		return rxe_resp_write(qp, skb, status);
	if (pkt->mask & RXE_READ_MASK)
		return rxe_resp_read_req(qp, skb);
#ifdef RXE_HAVE_MPE
	if (pkt->mask & RXE_FLUSH_MASK)
		return rxe_resp_flush_req(qp, skb);
	if (pkt->mask & RXE_AWRITE_MASK)
		return rxe_resp_awrite(qp, skb);
#endif
	return rxe_resp_atomic(qp, skb);
}

/*
 * A request failed. RC: tell the requester with a NAK (or an RNR NAK, and
 * keep waiting for the packet), complete the receive WQE in use with the
 * error, and put the QP in error. UC: drop the rest of the message.
 */
static void rxe_resp_fail(struct rxe_qp *qp, struct sk_buff *skb,
			  enum rxe_resp_result result, enum ib_wc_status status)
{
	static const u8 nak_code[] = {
		[RXE_RESP_NAK_INV] = AETH_NAK_INVALID_REQ,
		[RXE_RESP_NAK_ACC] = AETH_NAK_REM_ACC_ERR,
		[RXE_RESP_NAK_OP] = AETH_NAK_REM_OP_ERR,
	};
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_dev *rxe = rxe_qp_dev(qp);

	if (result == RXE_RESP_RNR) {
		rxe_counter_inc(rxe, RXE_CNT_SND_RNR_ERR);
		rxe_resp_flush_ack(qp);
		rxe_resp_send_ack(qp, aeth_syndrome(AETH_TYPE_RNR_NAK,
						    qp->attr.min_rnr_timer),
				  pkt->psn);
		return;
	}

	if (rxe_qp_type(qp) != IB_QPT_RC) {
		if (qp->resp.wqe_valid && status != IB_WC_SUCCESS)
			rxe_resp_complete(qp, NULL, status, 0);
		if (result == RXE_RESP_DROP && !qp->resp.wqe_valid &&
		    status == IB_WC_SUCCESS)
			rxe_counter_inc(rxe, RXE_CNT_DROP_NO_WQE);
		else
			rxe_counter_inc(rxe, RXE_CNT_DROP_UC);
		qp->resp.msg = 0;
		qp->resp.drop_msg = !(pkt->mask & RXE_END_MASK);
		return;
	}

	rxe_resp_flush_ack(qp);
	if (qp->resp.wqe_valid)
		rxe_resp_complete(qp, NULL, status == IB_WC_SUCCESS ?
				  IB_WC_REM_INV_REQ_ERR : status, 0);
	rxe_resp_nak_error(qp, nak_code[result], pkt->psn);
}

/*
 * Owe an ACK for a packet that asks for one (IBA 9.7.5.1.1); send it when
 * the queue runs dry or it is due. The ones that do not ask are covered
 * by the next that does, or by the one owed already, which then names the
 * latest packet executed: it tells the requester of packets kept past a
 * gap (rxe_resp_hold()) without waiting for one of them to ask.
 */
static void rxe_resp_owe_ack(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_resp *resp = &qp->resp;

	resp->unacked++;
	if (!bth_ack((struct rxe_bth *)skb->data)) {
		if (resp->ack_pending)
			resp->ack_psn = pkt->psn;
		return;
	}
	resp->ack_pending = true;
	resp->ack_psn = pkt->psn;
	if (++resp->ack_count >= RXE_MAX_ACK_COALESCE)
		rxe_resp_flush_ack(qp);
}

/*
 * Have the receive task run when the first kept packet is due to expire
 * (rxe_resp_next()), unless the timer is set already: a packet kept later
 * than the first is due later, and one that was the first and went since
 * leaves an early run, which sets the timer again for the new first.
 */
static void rxe_resp_hold_timer_arm(struct rxe_qp *qp)
{
	struct sk_buff *skb = skb_peek(&qp->resp.held);
	long wait;

	if (!skb || hrtimer_is_queued(&qp->resp.hold_timer))
		return;
	wait = (long)(rxe_skb_pkt(skb)->held_at +
		      msecs_to_jiffies(RXE_HOLD_MAX_AGE_MS) + 1 - jiffies);
	hrtimer_start(&qp->resp.hold_timer,
		      ns_to_ktime(jiffies_to_nsecs(max(wait, 1L))),
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * Keep a request packet that arrived @diff PSNs past the one awaited, for
 * when the gap before it fills. Go-back-N would throw it away and have it
 * sent again; kept, it lets a requester that knows send only the packet
 * missing (rxe_comp.c). It is executed then as if it had just arrived, so
 * nothing about it is trusted now: its ICRC and headers passed the door
 * (rxe_net.c), and the rest of its checks come in its turn. The list stays
 * in PSN order, holds each PSN once, spans fewer than RXE_HOLD_PSNS PSNs,
 * and the device keeps no more than RXE_HOLD_DEV_MAX packets for all its
 * QPs; a packet waits RXE_HOLD_MAX_AGE_MS at most (rxe_resp_next()).
 * Return false when the packet is not kept.
 *
 * A kept packet is trusted no more and no less than one that arrives in
 * sequence: RoCE has no authentication, and a packet forged at the PSN
 * awaited was always executed. Keeping widens that to the PSNs of the
 * window for the age limit, as TCP's receive window and the out-of-order
 * placement of RoCE NICs do.
 */
static bool rxe_resp_hold(struct rxe_qp *qp, struct sk_buff *skb, s32 diff)
{
	struct sk_buff_head *held = &qp->resp.held;
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	u32 psn = rxe_skb_pkt(skb)->psn;
	struct sk_buff *pos;
	s32 d;

	if (diff >= RXE_HOLD_PSNS)
		return false;
	/* Mostly the packets after a gap arrive in order: look from the end. */
	skb_queue_reverse_walk(held, pos) {
		d = rxe_psn_diff(psn, rxe_skb_pkt(pos)->psn);
		if (d == 0)
			return false;
		if (d > 0)
			break;
	}
	if (atomic_inc_return(&rxe->held_pkts) > RXE_HOLD_DEV_MAX) {
		atomic_dec(&rxe->held_pkts);
		return false;
	}
	/* Its route is of no use later, and may not outlive this softirq. */
	skb_dst_drop(skb);
	rxe_skb_pkt(skb)->held_at = jiffies;
	__skb_queue_after(held, pos, skb);
	rxe_counter_inc(rxe, RXE_CNT_HELD_REQ);
	rxe_resp_hold_timer_arm(qp);
	return true;
}

/*
 * The next request packet to take: a kept one whose turn has come, else
 * the next that arrived. Kept packets go unused when the gap's own filling
 * made them stale (the requester sent them again, and those copies went
 * first), or when they waited too long (RXE_HOLD_MAX_AGE_MS): the first
 * kept is the oldest as a rule, so looking at it alone frees them all in
 * time.
 */
static struct sk_buff *rxe_resp_next(struct rxe_qp *qp)
{
	unsigned long age = msecs_to_jiffies(RXE_HOLD_MAX_AGE_MS);
	struct sk_buff_head *held = &qp->resp.held;
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct sk_buff *skb;
	bool expired;
	s32 d;

	while ((skb = skb_peek(held))) {
		d = rxe_psn_diff(rxe_skb_pkt(skb)->psn, qp->resp.psn);
		expired = time_after(jiffies, rxe_skb_pkt(skb)->held_at + age);
		if (d > 0 && !expired) {
			rxe_resp_hold_timer_arm(qp);
			break;
		}
		__skb_unlink(skb, held);
		atomic_dec(&rxe->held_pkts);
		if (d == 0 && !expired) {
			qp->resp.from_held = true;
			return skb;
		}
		if (d >= 0) {
			rxe_counter_inc(rxe, RXE_CNT_HELD_EXPIRED);
			kfree_skb(skb);
		} else {
			rxe_net_consume(skb);
		}
	}
	skb = rxe_recv_dequeue(qp, &qp->req_q);
	if (skb)
		qp->resp.from_held = false;
	return skb;
}

/* Is there a request packet to take (rxe_resp_next())? */
static bool rxe_resp_more(struct rxe_qp *qp)
{
	struct sk_buff *skb = skb_peek(&qp->resp.held);

	if (!skb_queue_empty(&qp->req_q))
		return true;
	return skb && rxe_psn_diff(rxe_skb_pkt(skb)->psn, qp->resp.psn) <= 0;
}

/*
 * NAK the PSN awaited as a sequence error (IBA 9.7.5.1.3), after the ACK
 * owed for what came before it; no more NAKs for this gap (resp.nak_sent).
 */
static void rxe_resp_seq_nak(struct rxe_qp *qp)
{
	qp->resp.nak_sent = true;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_SND_SEQ_ERR);
	rxe_resp_flush_ack(qp);
	rxe_resp_nak(qp, AETH_NAK_PSN_SEQ_ERR, qp->resp.psn);
}

/*
 * The packets that arrived are taken, and the last was a kept one: a
 * packet that filled a gap let the ones kept after it run up to the next
 * gap, whose NAK is sent now, not when the next packet arrives. A
 * requester that sends lost packets alone (rxe_comp.c) may have none left
 * to send, nor room in its window to send one. Not after a packet off the
 * wire: then the next gap may only be the requester's packets still on
 * their way, as when it goes back over packets kept here. Not while the
 * responses of a kept READ (or FLUSH, ATOMIC WRITE) are still to go:
 * their PSNs come before the NAK's, which would acknowledge them unsent.
 * The step that finds nothing left to do after them sends it.
 */
static void rxe_resp_gap_nak(struct rxe_qp *qp)
{
	if (!qp->resp.nak_sent && qp->resp.from_held && !qp->resp.read &&
	    !skb_queue_empty(&qp->resp.held))
		rxe_resp_seq_nak(qp);
}

/*
 * An RC request packet. Return true when it was kept (rxe_resp_hold()),
 * not used up.
 */
static bool rxe_resp_rc(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	enum ib_wc_status status = IB_WC_SUCCESS;
	enum rxe_resp_result result;
	s32 diff = rxe_psn_diff(pkt->psn, qp->resp.psn);

	if (diff > 0) {
		/*
		 * One NAK per gap (IBA 9.7.5.1.3), and one more when the
		 * requester visibly started over from the NAKed PSN and lost
		 * that packet again: the one right after it arrives after
		 * later ones. No need to wait for its ACK timer then.
		 */
		rxe_counter_inc(rxe, RXE_CNT_OUT_OF_SEQ_REQ);
		if (!qp->resp.nak_sent ||
		    (diff == 1 &&
		     rxe_psn_diff(pkt->psn, qp->resp.oos_psn) < 0)) {
			rxe_resp_seq_nak(qp);
		}
		qp->resp.oos_psn = pkt->psn;
		return rxe_resp_hold(qp, skb, diff);
	}
	if (diff < 0) {
		rxe_resp_duplicate(qp, skb);
		return false;
	}
	qp->resp.nak_sent = false;

	result = rxe_resp_execute(qp, skb, &status);
	if (result != RXE_RESP_OK) {
		rxe_resp_fail(qp, skb, result, status);
		/*
		 * Its RNR NAK or error NAK names this PSN, and the requester
		 * goes back to it (after its RNR wait) on that: packets kept
		 * past it draw no sequence NAK now (rxe_resp_gap_nak()), nor
		 * do the ones still on their way.
		 */
		qp->resp.nak_sent = true;
		return false;
	}
	if (pkt->mask & (RXE_SEND_MASK | RXE_WRITE_MASK)) {
		qp->resp.psn = rxe_psn_add(pkt->psn, 1);
		if (pkt->mask & RXE_END_MASK)
			qp->resp.msn++;
		rxe_resp_owe_ack(qp, skb);
	}
	return false;
}

/* A UC request packet. */
static void rxe_resp_uc(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	enum ib_wc_status status = IB_WC_SUCCESS;
	enum rxe_resp_result result;

	if (pkt->psn != qp->resp.psn || qp->resp.drop_msg) {
		if (rxe_psn_diff(pkt->psn, qp->resp.psn) > 0)
			rxe_counter_inc(rxe, RXE_CNT_OUT_OF_SEQ_REQ);
		/* A packet got lost: the rest of its message goes too. */
		if (!(pkt->mask & RXE_START_MASK)) {
			rxe_counter_inc(rxe, RXE_CNT_DROP_UC);
			qp->resp.drop_msg = true;
			qp->resp.psn = rxe_psn_add(pkt->psn, 1);
			return;
		}
		qp->resp.drop_msg = false;
	}
	qp->resp.psn = rxe_psn_add(pkt->psn, 1);

	/* A new message while one is open: the open one lost its end. */
	if (pkt->mask & RXE_START_MASK)
		qp->resp.msg = 0;

	result = rxe_resp_execute(qp, skb, &status);
	if (result != RXE_RESP_OK)
		rxe_resp_fail(qp, skb, result, status);
}

/* A UD (or GSI) datagram. */
static void rxe_resp_ud(struct rxe_qp *qp, struct sk_buff *skb)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	enum rxe_resp_result result;

	result = rxe_resp_send(qp, skb, &status);
	if (result == RXE_RESP_OK)
		return;
	if (result == RXE_RESP_DROP && status == IB_WC_SUCCESS) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_DROP_NO_WQE);
		return;
	}
	/* A datagram that does not fit fails its WQE; the QP lives on. */
	if (qp->resp.wqe_valid)
		rxe_resp_complete(qp, NULL, status, 0);
}

/*
 * The QP is in error: drop what arrives and complete every receive WQE
 * of its own receive queue with a flush error. An SRQ keeps its WQEs for
 * the other QPs; the one this QP took, if any, is flushed, and it takes no
 * more. IBA 11.6.3 has the QP say so once, with the affiliated event Last
 * WQE Reached: ib_drain_qp() (6.11 on) waits up to a minute for it before
 * polling the CQ for the flushed WQEs, and consumers free a QP's receive
 * contexts on it.
 */
static void rxe_resp_flush(struct rxe_qp *qp)
{
	struct rxe_queue *q = &qp->rq.queue;
	u32 n;

	rxe_recv_purge(qp, &qp->req_q);
	rxe_resp_drop_held(qp);
	qp->resp.read = NULL;
	qp->resp.ack_pending = false;
	qp->resp.msg = 0;

	if (qp->resp.wqe_valid)
		rxe_resp_complete(qp, NULL, IB_WC_WR_FLUSH_ERR, 0);
	if (qp->srq) {
		if (!qp->resp.last_wqe) {
			qp->resp.last_wqe = true;
			rxe_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
		}
		return;
	}
	/*
	 * Only the WQEs posted when the flush began. Those posted since
	 * wait for the task's next run: a user who kept moving the
	 * producer index on would otherwise keep this loop going, with
	 * bottom halves off, for as long as it liked.
	 */
	n = rxe_queue_count(q, rxe_queue_peer_index(q));
	while (n-- && rxe_resp_take_wqe(qp) != RXE_TAKE_EMPTY)
		rxe_resp_complete(qp, NULL, IB_WC_WR_FLUSH_ERR, 0);
}

/*
 * Send up to RXE_NET_BATCH_PKTS responses of the READ being answered, to
 * the stack together when they can (rxe_net_send()).
 */
static bool rxe_resp_send_reads(struct rxe_qp *qp)
{
	struct rxe_net_batch batch = {};
	unsigned int n;

	for (n = 0; n < RXE_NET_BATCH_PKTS && qp->resp.read; n++) {
		if (rxe_net_tx_busy(qp))
			break;
		rxe_resp_send_read(qp, &batch);
	}
	rxe_net_flush(qp, &batch);
	return n > 0;
}

/**
 * rxe_resp_run() - the receive task
 * @qp: the QP
 *
 * One step: the next READ responses (a batch), or the next request packet. A
 * coalesced ACK goes out once the queue is empty.
 *
 * Return: true while there is more to do.
 */
bool rxe_resp_run(struct rxe_qp *qp)
{
	struct sk_buff *skb;
	bool kept = false;
	bool more;

	switch (rxe_qp_state(qp)) {
	case IB_QPS_ERR:
		rxe_resp_flush(qp);
		return false;
	case IB_QPS_RESET:
	case IB_QPS_INIT:
		rxe_recv_purge(qp, &qp->req_q);
		rxe_resp_drop_held(qp);
		return false;
	case IB_QPS_RTR:
		if (!qp->resp.established && !rxe_qp_is_ud(qp) &&
		    !skb_queue_empty(&qp->req_q)) {
			/*
			 * IBA 11.6.3: the first packet a connected QP
			 * gets in RTR proves the connection up, even when
			 * the CM's RTU was lost on the way; ib_cm users
			 * pass this on with rdma_notify().
			 */
			qp->resp.established = true;
			rxe_qp_event(qp, IB_EVENT_COMM_EST);
		}
		break;
	default:
		break;
	}

	if (qp->resp.read)
		return rxe_resp_send_reads(qp);

	skb = rxe_resp_next(qp);
	if (!skb) {
		rxe_resp_gap_nak(qp);
		rxe_resp_ack_idle(qp);
		return false;
	}

	switch (rxe_qp_type(qp)) {
	case IB_QPT_RC:
		kept = rxe_resp_rc(qp, skb);
		break;
	case IB_QPT_UC:
		rxe_resp_uc(qp, skb);
		break;
	default:
		rxe_resp_ud(qp, skb);
		break;
	}
	if (!kept)
		rxe_net_consume(skb);

	more = rxe_resp_more(qp);
	if (!more) {
		rxe_resp_gap_nak(qp);
		rxe_resp_ack_idle(qp);
	}
	return qp->resp.read || more;
}
