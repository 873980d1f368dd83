// SPDX-License-Identifier: GPL-2.0
/*
 * The requester: turns send work requests into request packets.
 *
 * It walks the send queue from req.index, one packet per call, giving each
 * work request a run of PSNs: one per packet of a SEND or WRITE, one per
 * response packet of a READ, one for an atomic. A retry rewinds it to a
 * PSN (rxe_req_rewind()); since a work request always splits into the same
 * packets, sending again from there reproduces the same PSNs.
 *
 * The send task runs the completer first (acknowledgments free room and
 * may ask for a retry), then the requester.
 */

#include "rxe_req.h"
#include "rxe_comp.h"
#include "rxe_post.h"
#include "rxe_qp.h"
#include "rxe_mr.h"
#include "rxe_net.h"
#include "rxe_hdr.h"
#include "rxe_opcode.h"
#include "rxe_counters.h"
#include "rxe_trace.h"

/**
 * rxe_req_reset() - forget everything the requester knows
 * @qp: the QP, whose tasks are quiet
 */
void rxe_req_reset(struct rxe_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
}

/**
 * rxe_req_start() - begin sending at the QP's send PSN
 * @qp: a QP moving to RTS
 */
void rxe_req_start(struct rxe_qp *qp)
{
	qp->req.psn = qp->attr.sq_psn;
	qp->req.top_psn = qp->attr.sq_psn;
	qp->req.twice_psn = qp->attr.sq_psn;
	qp->req.ack_req_psn = rxe_psn_add(qp->attr.sq_psn, -1);
	qp->req.top_unasked = false;
	qp->req.solicit = false;
	qp->req.alone = false;
	qp->req.sqd_notified = false;
	rxe_comp_start(qp);
}

/* The MTU that splits this QP's messages. */
static u32 rxe_req_mtu(const struct rxe_qp *qp)
{
	return rxe_qp_is_ud(qp) ? rxe_dev_mtu_bytes(rxe_qp_dev(qp)) : qp->mtu;
}

/**
 * rxe_req_npkts() - PSNs a work request takes
 * @qp: the QP
 * @wqe: the work request
 *
 * Return: packets of a SEND or WRITE, response packets of a READ, 1 for
 * an atomic.
 */
u32 rxe_req_npkts(const struct rxe_qp *qp, const struct rxe_swqe *wqe)
{
	if (wqe->mask & RXE_WR_ATOMIC)
		return 1;
	return max_t(u32, 1, DIV_ROUND_UP(wqe->length, rxe_req_mtu(qp)));
}

/*
 * Responses per READ request for a READ starting now: enough that
 * max_rd_atomic requests can fill the largest window, and at least
 * RXE_READ_CHUNK_MIN. Fixed for the life of the work request, so that the
 * completer knows where each request's last response falls.
 */
static u32 rxe_req_read_chunk(const struct rxe_qp *qp)
{
	u32 n = qp->attr.max_rd_atomic ?: 1;

	return max_t(u32, RXE_READ_CHUNK_MIN, DIV_ROUND_UP(RXE_CWND_MAX, n));
}

/* Which READ request of @wqe the response at byte @offset belongs to. */
static u32 rxe_req_read_index(const struct rxe_qp *qp,
			      const struct rxe_swqe *wqe, u32 offset)
{
	return offset / (wqe->rd_chunk * rxe_req_mtu(qp));
}

/* Where the READ request of @wqe that starts at byte @offset ends. */
static u32 rxe_req_read_end(const struct rxe_qp *qp,
			    const struct rxe_swqe *wqe, u32 offset)
{
	u64 chunk = (u64)wqe->rd_chunk * rxe_req_mtu(qp);
	u64 end = (rxe_req_read_index(qp, wqe, offset) + 1) * chunk;

	return min_t(u64, end, wqe->length);
}

/**
 * rxe_req_read_chunk_end() - does one of a READ's requests end at a PSN
 * @wqe: an RDMA READ work request, started
 * @psn: the PSN of one of its responses
 *
 * Return: true when the response at @psn is the last one of a READ
 * request, so it must carry RDMA READ Response Last (or Only).
 */
bool rxe_req_read_chunk_end(const struct rxe_swqe *wqe, u32 psn)
{
	return psn == wqe->last_psn ||
	       (rxe_psn_diff(psn, wqe->first_psn) + 1) % wqe->rd_chunk == 0;
}

/*
 * Does the request at req.offset of @wqe take a new place among the READ
 * and atomic requests outstanding (IBA's max_rd_atomic)? One sent before
 * and sent again after a retry keeps the place it has.
 */
static bool rxe_req_needs_rd_slot(const struct rxe_qp *qp,
				  const struct rxe_swqe *wqe)
{
	if (!(wqe->mask & (RXE_WR_READ | RXE_WR_ATOMIC)))
		return false;
	if (!wqe->rd_sent)
		return true;
	if (wqe->mask & RXE_WR_ATOMIC)
		return false;
	return rxe_req_read_index(qp, wqe, qp->req.offset) >= wqe->rd_sent;
}

/* Must the request at req.offset of @wqe wait for a place to free up? */
static bool rxe_req_rd_full(const struct rxe_qp *qp,
			    const struct rxe_swqe *wqe)
{
	return rxe_req_needs_rd_slot(qp, wqe) &&
	       qp->req.rd_atomic >= qp->attr.max_rd_atomic;
}

/*
 * Step past the work request at req.index, which finished already: run
 * locally, or, after a rewind, completed by a response to its first send
 * before it was sent again. The PSNs it took then stay its own (the
 * responder has executed them), so the next request must start after
 * them; numbered from req.psn it would reuse them, the responder would
 * answer it as a duplicate of this one, and the QP would run out of
 * retries waiting for an answer it can never get.
 */
static void rxe_req_skip_done(struct rxe_qp *qp, const struct rxe_swqe *wqe)
{
	if (!(wqe->mask & RXE_WR_LOCAL) &&
	    rxe_psn_diff(wqe->last_psn, qp->req.psn) >= 0)
		qp->req.psn = rxe_psn_add(wqe->last_psn, 1);
	qp->req.offset = 0;
	qp->req.index = rxe_sq_next(qp, qp->req.index);
}

/**
 * rxe_req_rewind() - send again from a PSN
 * @qp: the QP
 * @psn: the first PSN to send again, in an unacknowledged work request
 *
 * The work request holding @psn resumes at the packet of that PSN; the
 * ones after it start over. Work requests that execute locally keep
 * their result.
 *
 * Context: the send task.
 */
void rxe_req_rewind(struct rxe_qp *qp, u32 psn)
{
	u32 index = qp->sq.queue.kidx;
	u32 end = qp->req.index;
	struct rxe_swqe *wqe;
	bool found = false;

	/* The WQE being sent, if any, is the last one to look at. */
	if (rxe_sq_wqe(qp, end)->state == RXE_WQE_ACTIVE && end != qp->req.tail)
		end = rxe_sq_next(qp, end);

	for (; index != end; index = rxe_sq_next(qp, index)) {
		wqe = rxe_sq_wqe(qp, index);
		if (wqe->state != RXE_WQE_SENT && wqe->state != RXE_WQE_ACTIVE)
			continue;
		if (!found && rxe_psn_diff(psn, wqe->last_psn) <= 0) {
			/*
			 * PSNs before this one belong to requests finished
			 * already (a response completed them while the
			 * completer's PSN stayed at the cursor): nothing of
			 * theirs goes again.
			 */
			if (rxe_psn_diff(psn, wqe->first_psn) < 0)
				psn = wqe->first_psn;
			found = true;
			qp->req.index = index;
			qp->req.psn = psn;
			qp->req.offset = (wqe->mask & RXE_WR_ATOMIC) ? 0 :
				rxe_psn_diff(psn, wqe->first_psn) * rxe_req_mtu(qp);
			wqe->state = RXE_WQE_ACTIVE;
		} else if (found) {
			wqe->state = RXE_WQE_POSTED;
		}
	}
	qp->req.since_ack_req = 0;
	qp->req.ack_req_psn = rxe_psn_add(psn, -1);
	qp->req.solicit = false;
	qp->req.alone = false;
	rxe_comp_forget_kept(qp);
	rxe_comp_resending(qp, psn);
	trace_rxe_retry(qp, psn);
}

/**
 * rxe_req_forward() - skip packets the responder already has
 * @qp: the QP
 * @psn: the responder acknowledged every PSN up to this one
 *
 * After a rewind the requester sends again from an older PSN. An ACK for
 * a PSN it has not sent again yet (the ACK of the first send got lost,
 * not the packets) moves it on past that PSN instead. A work request
 * always splits into the same packets, so the PSNs of those after the
 * cursor follow from their lengths. The walk stops at a READ, an atomic
 * or a local operation: an ACK does not complete those.
 *
 * Context: the send task.
 */
void rxe_req_forward(struct rxe_qp *qp, u32 psn)
{
	u32 next = rxe_psn_add(psn, 1);
	struct rxe_swqe *wqe;

	while (rxe_psn_diff(next, qp->req.psn) > 0 &&
	       qp->req.index != qp->req.tail) {
		wqe = rxe_sq_wqe(qp, qp->req.index);
		if (wqe->state == RXE_WQE_DONE) {
			rxe_req_skip_done(qp, wqe);
			continue;
		}
		if (wqe->state == RXE_WQE_ERROR || wqe->status != IB_WC_SUCCESS ||
		    (wqe->mask & (RXE_WR_READ | RXE_WR_ATOMIC | RXE_WR_LOCAL)))
			break;
		if (wqe->state == RXE_WQE_POSTED) {
			wqe->first_psn = qp->req.psn;
			wqe->last_psn = rxe_psn_add(qp->req.psn,
						    rxe_req_npkts(qp, wqe) - 1);
			wqe->state = RXE_WQE_ACTIVE;
			wqe->started = true;
			qp->req.offset = 0;
		}
		if (rxe_psn_diff(wqe->last_psn, psn) > 0) {
			qp->req.offset += rxe_psn_diff(next, qp->req.psn) *
					  rxe_req_mtu(qp);
			qp->req.psn = next;
			break;
		}
		wqe->state = RXE_WQE_SENT;
		qp->req.psn = rxe_psn_add(wqe->last_psn, 1);
		qp->req.index = rxe_sq_next(qp, qp->req.index);
		qp->req.offset = 0;
	}
}

/*
 * Packets between requests for an ACK: often enough that the window
 * sees several ACKs, seldom enough that ACKs cost little.
 */
static u32 rxe_req_ack_every(const struct rxe_qp *qp)
{
	return clamp_t(u32, rxe_comp_window(qp) / 4, 1, RXE_ACK_REQ_EVERY);
}

/*
 * Would @more packets from req.psn on fill the window? req.psn may lie
 * behind comp.psn: the completer rewinds the requester when its timer
 * fires, then takes the responses already queued, which may answer all
 * it went back for, and READ responses do not move the requester on as
 * ACKs do (rxe_req_forward()). Such a requester is inside its window; the
 * difference is negative, and compared as unsigned it would look full
 * for good, with nothing outstanding to run the retry timer.
 *
 * READ responses kept past a gap (rxe_comp_keep()) have arrived, and count
 * no more than acknowledged ones, as in TCP's SACK pipe: new requests go
 * on while the gap is asked for again. Never so far ahead of comp.psn that
 * the next READ request's responses would fall outside the completer's
 * marks (RXE_KEPT_PSNS).
 */
static bool rxe_req_window_full(const struct rxe_qp *qp, u32 more)
{
	s32 out = rxe_psn_diff(qp->req.psn, qp->comp.psn);

	if (qp->comp.nkept) {
		if (out + (s32)more >= RXE_KEPT_PSNS - RXE_CWND_MAX)
			return true;
		out -= qp->comp.nkept;
	}
	return out + (s32)more >= (s32)rxe_comp_window(qp);
}

/*
 * Did a packet sent since the last rewind ask for an ACK that has not
 * come yet?
 */
static bool rxe_req_ack_owed(const struct rxe_qp *qp)
{
	return rxe_psn_diff(qp->req.ack_req_psn, qp->comp.psn) >= 0 &&
	       rxe_psn_diff(qp->req.ack_req_psn, qp->req.psn) < 0;
}

/*
 * Does the packet at req.psn ask for an ACK (BTH AckReq)? A responder
 * acknowledges only the packets that ask (IBA 9.7.5.1.1), so one of them
 * must come often enough to keep the window moving, and on the packet
 * that fills the window. That one need not ask while the ACK an earlier
 * packet asked for is still to come: it opens the window, and the packets
 * after it ask in their turn. A QP whose share of the window is small
 * fills it all the time, and asked on nearly every packet that did.
 *
 * The end of the last message posted asks when someone waits for it: the
 * work request is signaled, or no ACK is on its way that the next post
 * could follow. A poster sending one message per call empties the send
 * queue with every message; had each of those asked, every message would
 * cost an ACK on both ends, where now one ACK covers the messages of a
 * round trip. The last of them may then wait for an ACK nobody asked for:
 * the retry timer sends it again, asking (rxe_req_solicit()). READ and
 * atomic requests are answered anyway.
 */
static bool rxe_req_wants_ack(struct rxe_qp *qp, const struct rxe_swqe *wqe,
			      bool last)
{
	if (qp->req.solicit) {
		qp->req.solicit = false;
		return true;
	}
	if (++qp->req.since_ack_req >= rxe_req_ack_every(qp))
		return true;
	if (rxe_req_window_full(qp, 1) && !rxe_req_ack_owed(qp))
		return true;
	if (!last || rxe_sq_next(qp, qp->req.index) !=
		     rxe_queue_peer_index(&qp->sq.queue))
		return false;
	return qp->sig_all || (wqe->send_flags & IB_SEND_SIGNALED) ||
	       !rxe_req_ack_owed(qp);
}

/**
 * rxe_req_tail_unasked() - do the last packets sent wait for an ACK that
 *	none of them asked for?
 * @qp: an RC QP
 *
 * The end of unsignaled messages sent while an ACK was on its way
 * (rxe_req_wants_ack()), after which the poster went quiet: a responder
 * does not acknowledge them on its own, so nothing will come unless one
 * of them asks.
 *
 * Context: the send task.
 * Return: true when every packet that asked is acknowledged, and the
 * packets sent after the last of them neither asked nor draw a response.
 */
bool rxe_req_tail_unasked(const struct rxe_qp *qp)
{
	return qp->req.top_unasked && qp->req.psn == qp->req.top_psn &&
	       !rxe_req_ack_owed(qp);
}

/**
 * rxe_req_solicit() - send the last packet again, asking for an ACK
 * @qp: an RC QP whose tail is unasked (rxe_req_tail_unasked())
 *
 * The responder answers a duplicate that asks with an ACK for everything
 * it has executed, which covers the tail, or with a sequence NAK when the
 * tail was lost; either way one packet, not the tail, goes again.
 *
 * Context: the send task.
 */
void rxe_req_solicit(struct rxe_qp *qp)
{
	rxe_req_rewind(qp, rxe_psn_add(qp->req.top_psn, -1));
	qp->req.solicit = true;
}

/**
 * rxe_req_resend_alone() - send one lost packet again, and only that one
 * @qp: an RC QP whose responder is not known to drop the packets after a
 *	gap (rxe_comp.c)
 * @psn: the PSN the responder NAKed
 *
 * The packet goes again, asking for an ACK, and the requester then goes on
 * where it was (rxe_req_forward() to top_psn): a responder that keeps
 * packets has the rest and executes it once this packet fills the gap;
 * the ACK shows whether it did. The walk forward stops at a READ, an
 * atomic or a local operation, and from there the packets go again as
 * after any rewind.
 *
 * Context: the send task.
 */
void rxe_req_resend_alone(struct rxe_qp *qp, u32 psn)
{
	rxe_req_rewind(qp, psn);
	qp->req.solicit = true;
	qp->req.alone = true;
}

/**
 * rxe_req_refetch() - ask again for the READ responses missing past a gap
 * @qp: an RC QP whose completer kept READ responses past a gap
 * @psn: the first response missing, comp.psn
 * @end: one past the last response kept
 *
 * The requester does not go back. Each of the READ requests sent before
 * whose responses have a gap before @end goes again, as a duplicate the
 * responder answers without executing anything (IBA 9.7.5.1.2), before
 * any new packet (rxe_req_refetch_one()). Responses past @end are either
 * on their way or lost with nothing after them to show it; the retry
 * timer finds those.
 *
 * Context: the send task.
 */
void rxe_req_refetch(struct rxe_qp *qp, u32 psn, u32 end)
{
	qp->req.fetch_psn = psn;
	qp->req.fetch_end = end;
	trace_rxe_retry(qp, psn);
}

/*
 * The packet just sent had gone before: the PSNs before @end may have a
 * second copy on the way. Not past top_psn: a READ request sent again may
 * ask for more responses than the first did.
 */
static void rxe_req_sent_twice(struct rxe_qp *qp, u32 end)
{
	if (rxe_psn_diff(end, qp->req.top_psn) > 0)
		end = qp->req.top_psn;
	if (rxe_psn_diff(end, qp->req.twice_psn) > 0)
		qp->req.twice_psn = end;
}

/* Opcode of the packet at this point of a work request. */
static u8 rxe_req_opcode(const struct rxe_qp *qp, const struct rxe_swqe *wqe,
			 bool first, bool last)
{
	u8 transport = rxe_qp_type(qp) == IB_QPT_RC ? IB_OPCODE_RC :
		       rxe_qp_type(qp) == IB_QPT_UC ? IB_OPCODE_UC :
						      IB_OPCODE_UD;
	u8 op;

	switch (wqe->opcode) {
	case IB_WR_RDMA_READ:
		return IB_OPCODE_RC_RDMA_READ_REQUEST;
#ifdef RXE_HAVE_MPE
	case IB_WR_FLUSH:
		return IB_OPCODE_RC_FLUSH;
	case IB_WR_ATOMIC_WRITE:
		return IB_OPCODE_RC_ATOMIC_WRITE;
#endif
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_OPCODE_RC_COMPARE_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_OPCODE_RC_FETCH_ADD;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		if (first)
			op = last ? IB_OPCODE_RDMA_WRITE_ONLY :
				    IB_OPCODE_RDMA_WRITE_FIRST;
		else
			op = last ? IB_OPCODE_RDMA_WRITE_LAST :
				    IB_OPCODE_RDMA_WRITE_MIDDLE;
		if (last && (wqe->mask & RXE_WR_IMM))
			op += IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE -
			      IB_OPCODE_RDMA_WRITE_LAST;
		return transport | op;
	default:
		if (first)
			op = last ? IB_OPCODE_SEND_ONLY : IB_OPCODE_SEND_FIRST;
		else
			op = last ? IB_OPCODE_SEND_LAST : IB_OPCODE_SEND_MIDDLE;
		if (last && (wqe->mask & RXE_WR_IMM))
			op += IB_OPCODE_SEND_LAST_WITH_IMMEDIATE -
			      IB_OPCODE_SEND_LAST;
		else if (last && (wqe->mask & RXE_WR_INV))
			op = first ? IB_OPCODE_SEND_ONLY_WITH_INVALIDATE :
				     IB_OPCODE_SEND_LAST_WITH_INVALIDATE;
		return transport | op;
	}
}

/* Fill the extension headers a request packet carries. */
static void rxe_req_fill_ext(struct rxe_qp *qp, const struct rxe_swqe *wqe,
			     u8 *bth, u32 mask, u32 offset)
{
	const struct rxe_opcode_info *info = &rxe_opcode[*bth];
	u32 qkey, len;

	if (mask & RXE_RETH_MASK) {
		if (wqe->mask & RXE_WR_FLUSH)
			len = wqe->wr.rdma.flush_len;
		else if (wqe->mask & RXE_WR_AWRITE)
			len = RXE_AWRITE_BYTES;
		else if (wqe->mask & RXE_WR_READ)
			len = rxe_req_read_end(qp, wqe, offset) - offset;
		else
			len = wqe->length;
		reth_init((void *)bth + info->offset[RXE_RETH],
			  wqe->wr.rdma.va + offset, wqe->wr.rdma.rkey, len);
	}
	if (mask & RXE_FETH_MASK)
		feth_init((void *)bth + info->offset[RXE_FETH],
			  wqe->wr.rdma.flush_plt, wqe->wr.rdma.flush_sel);
	if (mask & RXE_ATMETH_MASK) {
		if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP)
			atmeth_init((void *)bth + info->offset[RXE_ATMETH],
				    wqe->wr.atomic.va, wqe->wr.atomic.rkey,
				    wqe->wr.atomic.swap,
				    wqe->wr.atomic.compare_add);
		else
			atmeth_init((void *)bth + info->offset[RXE_ATMETH],
				    wqe->wr.atomic.va, wqe->wr.atomic.rkey,
				    wqe->wr.atomic.compare_add, 0);
	}
	if (mask & RXE_IMMDT_MASK)
		((struct rxe_immdt *)(bth + info->offset[RXE_IMMDT]))->imm =
			wqe->ex.imm_data;
	if (mask & RXE_IETH_MASK)
		((struct rxe_ieth *)(bth + info->offset[RXE_IETH]))->rkey =
			cpu_to_be32(wqe->ex.invalidate_rkey);
	if (mask & RXE_DETH_MASK) {
		/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
		qkey = wqe->wr.ud.remote_qkey & BIT(31) ? qp->attr.qkey :
							  wqe->wr.ud.remote_qkey;
		deth_init((void *)bth + info->offset[RXE_DETH], qkey,
			  qp->ibqp.qp_num);
	}
}

/* Fail a work request locally; the completer reports it and the QP fails. */
static void rxe_req_fail(struct rxe_qp *qp, struct rxe_swqe *wqe,
			 enum ib_wc_status status)
{
	wqe->state = RXE_WQE_ERROR;
	wqe->status = status;
	qp->req.index = rxe_sq_next(qp, qp->req.index);
	qp->req.offset = 0;
	rxe_qp_set_error(qp);
}

/*
 * A packet whose payload lies in the work request's own pages, with pad
 * and room for the ICRC behind it: NULL when that cannot be (no memory,
 * a netdev without scatter/gather, pages that cannot be lent), and the
 * payload is to be copied; an ERR_PTR when the buffers fail their checks,
 * with @status set.
 */
static struct sk_buff *rxe_req_lend(struct rxe_qp *qp,
				    const struct rxe_swqe *wqe, u32 hdr_len,
				    u32 offset, u32 paylen, u8 pad,
				    enum ib_wc_status *status)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct sk_buff *skb;
	int err;

	/*
	 * UD and UC complete a request once its packets are handed to the
	 * netdev, which may hold them longer: the consumer may then write
	 * the pages while they still wait to go. RC completes on the ACK,
	 * after which a copy still waiting carries nothing the peer needs.
	 */
	if (rxe_qp_type(qp) != IB_QPT_RC || wqe->is_inline ||
	    !rxe_net_may_lend(rxe, paylen))
		return NULL;
	skb = rxe_net_alloc_skb_lend(rxe, hdr_len);
	if (!skb)
		return NULL;
	err = rxe_mr_lend_sgl(qp, wqe->sge, wqe->num_sge, offset, skb, paylen,
			      status);
	if (!err && rxe_net_add_trailer(skb, pad)) {
		rxe_counter_inc(rxe, RXE_CNT_LENT_PKTS);
		return skb;
	}
	kfree_skb(skb);
	return err && err != -EAGAIN ? ERR_PTR(err) : NULL;
}

/*
 * Build and send the packet of @wqe at req.offset. Return false when the
 * work request failed (it is then marked so).
 */
static bool rxe_req_send_packet(struct rxe_qp *qp, struct rxe_swqe *wqe,
				struct rxe_net_batch *batch)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	bool ud = rxe_qp_is_ud(qp);
	const struct rxe_path *path = ud ? &wqe->wr.ud.path : &qp->path;
	u32 mtu = rxe_req_mtu(qp), offset = qp->req.offset;
	u32 resid = wqe->length - offset;
	bool rd_atomic = wqe->mask & (RXE_WR_READ | RXE_WR_ATOMIC);
	bool awrite = wqe->mask & RXE_WR_AWRITE;
	u32 paylen = awrite ? RXE_AWRITE_BYTES : rd_atomic ? 0 : min(resid, mtu);
	bool first = offset == 0, last = rd_atomic || resid <= mtu;
	u8 opcode = rxe_req_opcode(qp, wqe, first, last);
	const struct rxe_opcode_info *info = &rxe_opcode[opcode];
	u8 pad = (4 - paylen) & 3;
	enum ib_wc_status status;
	struct rxe_buf buf;
	struct sk_buff *skb;
	bool ack;
	u16 sport;

	/*
	 * A datagram is one packet, and its length was checked against the
	 * MTU when it was posted; the netdev's MTU may have shrunk since.
	 */
	if (ud && !last) {
		rxe_req_fail(qp, wqe, IB_WC_LOC_LEN_ERR);
		return false;
	}
	skb = awrite ? NULL : rxe_req_lend(qp, wqe, info->length, offset,
					   paylen, pad, &status);
	if (IS_ERR(skb)) {
		rxe_req_fail(qp, wqe, status);
		return false;
	}
	if (!skb) {
		skb = rxe_net_alloc_skb(rxe, info->length + paylen + pad +
					RXE_ICRC_SIZE);
		if (!skb) {
			/*
			 * Taken as sent and lost: the retry timer sends it
			 * later, so it must run, even when nothing else is
			 * outstanding.
			 */
			rxe_counter_inc(rxe, RXE_CNT_DROP_NOMEM);
			if (rxe_qp_type(qp) == IB_QPT_RC)
				rxe_comp_sent(qp, qp->req.psn, false);
			return true;
		}
		buf.skb = skb;
		buf.ptr = NULL;
		buf.off = info->length;
		if (awrite) {
			memcpy(skb->data + info->length, wqe->wr.rdma.awrite,
			       paylen);
		} else if (wqe->is_inline) {
			memcpy(skb->data + info->length,
			       wqe->inline_data + offset, paylen);
		} else if (paylen &&
			   rxe_mr_copy_sgl(qp, wqe->sge, wqe->num_sge, offset,
					   &buf, paylen, RXE_FROM_MR, 0,
					   &status)) {
			kfree_skb(skb);
			rxe_req_fail(qp, wqe, status);
			return false;
		}
		memset(skb->data + info->length + paylen, 0, pad);
	}

	ack = rxe_qp_type(qp) == IB_QPT_RC && rxe_req_wants_ack(qp, wqe, last);
	if (ack) {
		qp->req.since_ack_req = 0;
		qp->req.ack_req_psn = qp->req.psn;
	}
	if (rxe_psn_diff(rxe_psn_add(qp->req.psn, 1), qp->req.top_psn) >= 0)
		qp->req.top_unasked = !ack && !rd_atomic;
	bth_init((struct rxe_bth *)skb->data, opcode,
		 last && (wqe->send_flags & IB_SEND_SOLICITED),
		 pad, RXE_DEFAULT_PKEY,
		 ud ? wqe->wr.ud.remote_qpn : qp->attr.dest_qp_num,
		 ack, qp->req.psn);
	rxe_req_fill_ext(qp, wqe, skb->data, info->mask, offset);

	sport = ud ? rdma_get_udp_sport(path->flow_label, qp->ibqp.qp_num,
					wqe->wr.ud.remote_qpn) : qp->src_port;
	rxe_net_send(qp, path, sport, skb, batch);
	if (rxe_qp_type(qp) == IB_QPT_RC)
		rxe_comp_sent(qp, qp->req.psn, ack || rd_atomic);
	if (first)
		rxe_counter_inc(rxe, RXE_CNT_RDMA_SENDS);
	return true;
}

/* Account a packet of @wqe as sent and move on. */
static void rxe_req_advance(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	u32 mtu = rxe_req_mtu(qp);
	bool again = rxe_psn_diff(qp->req.psn, qp->req.top_psn) < 0;

	if (rxe_req_needs_rd_slot(qp, wqe)) {
		wqe->rd_sent++;
		qp->req.rd_atomic++;
	}
	if (wqe->mask & RXE_WR_READ) {
		u32 end = rxe_req_read_end(qp, wqe, qp->req.offset);

		qp->req.psn = end == wqe->length ?
			rxe_psn_add(wqe->last_psn, 1) :
			rxe_psn_add(qp->req.psn,
				    DIV_ROUND_UP(end - qp->req.offset, mtu));
		qp->req.offset = end;
	} else if (wqe->mask & RXE_WR_ATOMIC) {
		qp->req.psn = rxe_psn_add(wqe->last_psn, 1);
		qp->req.offset = wqe->length;
	} else {
		qp->req.psn = rxe_psn_add(qp->req.psn, 1);
		qp->req.offset += min(wqe->length - qp->req.offset, mtu);
	}

	if (again)
		rxe_req_sent_twice(qp, qp->req.psn);
	if (rxe_psn_diff(qp->req.psn, qp->req.top_psn) > 0)
		qp->req.top_psn = qp->req.psn;
	if (qp->req.offset < wqe->length)
		return;

	/* Only RC waits for an acknowledgment. */
	wqe->state = rxe_qp_type(qp) == IB_QPT_RC ? RXE_WQE_SENT : RXE_WQE_DONE;
	qp->req.index = rxe_sq_next(qp, qp->req.index);
	qp->req.offset = 0;
}

/*
 * The work request at req.index, made ready in kernel memory, or NULL
 * when the send queue has nothing more. Work requests that already
 * finished (executed locally, or completed before a rewind) are skipped.
 */
static struct rxe_swqe *rxe_req_next_wqe(struct rxe_qp *qp)
{
	struct rxe_queue *q = &qp->sq.queue;
	struct rxe_swqe *wqe;

	for (;;) {
		if (qp->req.index == qp->req.tail) {
			/*
			 * Posted is what lies between the consumer and the
			 * producer: a producer index userspace moved back
			 * behind the tail gives nothing, and the tail never
			 * runs round onto work requests still outstanding.
			 */
			if (rxe_queue_count(q, rxe_queue_peer_index(q)) <=
			    rxe_queue_count(q, qp->req.tail))
				return NULL;
			if (qp->is_user)
				rxe_post_snapshot(qp, qp->req.tail);
			qp->req.tail = rxe_sq_next(qp, qp->req.tail);
		}
		wqe = rxe_sq_wqe(qp, qp->req.index);
		if (wqe->state != RXE_WQE_DONE)
			return wqe;
		rxe_req_skip_done(qp, wqe);
	}
}

/**
 * rxe_req_sqd_begin() - arm the SQ_DRAINED event of a new drain
 * @qp: a QP moving to SQD; the caller holds qp->state_lock, before the
 *	state that lets the send task look is published
 */
void rxe_req_sqd_begin(struct rxe_qp *qp)
{
	qp->req.sqd_notified = false;
}

/* SQD: tell the consumer once everything sent has been acknowledged. */
static void rxe_req_check_drained(struct rxe_qp *qp)
{
	if (rxe_qp_state(qp) != IB_QPS_SQD || qp->req.sqd_notified ||
	    qp->req.offset || qp->sq.queue.kidx != qp->req.index)
		return;
	qp->req.sqd_notified = true;
	if (qp->attr.en_sqd_async_notify)
		rxe_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/**
 * rxe_req_sq_draining() - whether an SQD QP still has packets to settle
 * @qp: the QP
 *
 * Return: true in SQD until everything sent is acknowledged.
 */
bool rxe_req_sq_draining(const struct rxe_qp *qp)
{
	return rxe_qp_state(qp) == IB_QPS_SQD && !qp->req.sqd_notified;
}

/*
 * May the work request start now? It waits for the fence (every READ and
 * atomic before it answered), the first time only, and for room among the
 * READ and atomic requests outstanding.
 */
static bool rxe_req_may_start(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	if ((wqe->send_flags & IB_SEND_FENCE) && !wqe->started &&
	    qp->req.rd_atomic)
		return false;
	return !rxe_req_rd_full(qp, wqe);
}

/*
 * Send the READ request of @wqe that asks for its responses from @psn to
 * @last again. Return false when there was no memory for it.
 */
static bool rxe_req_send_refetch(struct rxe_qp *qp, struct rxe_swqe *wqe,
				 u32 psn, u32 last,
				 struct rxe_net_batch *batch)
{
	const struct rxe_opcode_info *info =
		&rxe_opcode[IB_OPCODE_RC_RDMA_READ_REQUEST];
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	u32 mtu = rxe_req_mtu(qp);
	u32 offset = rxe_psn_diff(psn, wqe->first_psn) * mtu;
	u32 end = min_t(u64, (u64)(rxe_psn_diff(last, wqe->first_psn) + 1) *
			     mtu, wqe->length);
	struct sk_buff *skb;

	skb = rxe_net_alloc_skb(rxe, info->length + RXE_ICRC_SIZE);
	if (!skb) {
		rxe_counter_inc(rxe, RXE_CNT_DROP_NOMEM);
		return false;
	}
	bth_init((struct rxe_bth *)skb->data, IB_OPCODE_RC_RDMA_READ_REQUEST,
		 false, 0, RXE_DEFAULT_PKEY, qp->attr.dest_qp_num, false, psn);
	reth_init((void *)skb->data + info->offset[RXE_RETH],
		  wqe->wr.rdma.va + offset, wqe->wr.rdma.rkey, end - offset);
	rxe_net_send(qp, &qp->path, qp->src_port, skb, batch);
	rxe_comp_sent(qp, psn, false);
	rxe_counter_inc(rxe, RXE_CNT_READ_REFETCH);
	return true;
}

/*
 * Does rxe_req_refetch() have READ requests to send, and may they go now?
 * They wait as new packets do: for the end of an RNR wait, and for room
 * in the netdev's queue.
 */
static bool rxe_req_may_refetch(struct rxe_qp *qp)
{
	enum ib_qp_state state = rxe_qp_state(qp);

	return qp->req.fetch_psn != qp->req.fetch_end &&
	       (state == IB_QPS_RTS || state == IB_QPS_SQD) &&
	       !qp->comp.rnr_wait && !rxe_net_tx_busy(qp);
}

/*
 * Send the next READ request rxe_req_refetch() asked for, if any. One
 * goes for each READ request of the first send with responses missing
 * before req.fetch_end, from its first response missing to its last, the
 * kept ones between included. The first starts at the gap, comp.psn;
 * every later one at the first response of its READ request. A responder
 * like the in-tree driver's takes a duplicate READ request only where it
 * does not start before the last one it answered for the same request,
 * and the next retry, or a rewind, asks again from there at the earliest.
 */
static bool rxe_req_refetch_one(struct rxe_qp *qp,
				struct rxe_net_batch *batch)
{
	u32 psn = qp->req.fetch_psn, end = qp->req.fetch_end;
	u32 chunk_end, last;
	struct rxe_swqe *wqe;

	if (rxe_psn_diff(psn, qp->comp.psn) < 0)
		psn = qp->comp.psn;
	while (rxe_psn_diff(psn, end) < 0) {
		wqe = rxe_comp_wqe_at(qp, psn);
		if (!wqe)
			break;
		if (!rxe_wqe_reads_bytes(wqe)) {
			psn = rxe_psn_add(wqe->last_psn, 1);
			continue;
		}
		chunk_end = rxe_psn_add(wqe->first_psn,
					(rxe_psn_diff(psn, wqe->first_psn) /
					 wqe->rd_chunk + 1) * wqe->rd_chunk);
		if (rxe_psn_diff(chunk_end, wqe->last_psn) > 0)
			chunk_end = rxe_psn_add(wqe->last_psn, 1);
		last = rxe_psn_diff(chunk_end, end) < 0 ? chunk_end : end;
		do {
			last = rxe_psn_add(last, -1);
		} while (last != psn && rxe_comp_kept(qp, last));
		if (rxe_comp_kept(qp, last)) {
			psn = chunk_end;
			continue;
		}
		if (!rxe_req_send_refetch(qp, wqe, psn, last, batch)) {
			qp->req.fetch_psn = psn;
			return false;
		}
		qp->req.fetch_psn = chunk_end;
		return true;
	}
	qp->req.fetch_psn = end;
	return false;
}

/* Send the next packet, or execute the next local work request. */
static bool rxe_req_send_one(struct rxe_qp *qp, struct rxe_net_batch *batch)
{
	enum ib_qp_state state = rxe_qp_state(qp);
	struct rxe_swqe *wqe;

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	if (qp->comp.rnr_wait || rxe_net_tx_busy(qp))
		return false;

	wqe = rxe_req_next_wqe(qp);
	if (!wqe) {
		rxe_req_check_drained(qp);
		return false;
	}

	/* A user work request that failed its checks at the snapshot. */
	if (wqe->status != IB_WC_SUCCESS) {
		rxe_req_fail(qp, wqe, wqe->status);
		return false;
	}

	if (wqe->state == RXE_WQE_POSTED) {
		if (state == IB_QPS_SQD && !wqe->started) {
			rxe_req_check_drained(qp);
			return false;
		}
		if ((wqe->mask & (RXE_WR_READ | RXE_WR_ATOMIC)) &&
		    !qp->attr.max_rd_atomic) {
			rxe_req_fail(qp, wqe, IB_WC_LOC_QP_OP_ERR);
			return false;
		}
		if (!rxe_req_may_start(qp, wqe))
			return false;
		if (wqe->mask & RXE_WR_LOCAL) {
			rxe_mr_local_op(qp, wqe);
			qp->req.index = rxe_sq_next(qp, qp->req.index);
			if (wqe->state == RXE_WQE_ERROR)
				rxe_qp_set_error(qp);
			return true;
		}
		wqe->first_psn = qp->req.psn;
		wqe->last_psn = rxe_psn_add(qp->req.psn,
					    rxe_req_npkts(qp, wqe) - 1);
		if (!wqe->rd_sent)
			wqe->rd_chunk = rxe_req_read_chunk(qp);
		wqe->state = RXE_WQE_ACTIVE;
		wqe->started = true;
		qp->req.offset = 0;
	} else if (rxe_req_rd_full(qp, wqe)) {
		/* The next READ request of a long READ needs a place too. */
		return false;
	}

	if (rxe_qp_type(qp) == IB_QPT_RC && rxe_req_window_full(qp, 0))
		return false;

	if (!rxe_req_send_packet(qp, wqe, batch))
		return false;
	rxe_req_advance(qp, wqe);
	if (qp->req.alone) {
		qp->req.alone = false;
		rxe_req_forward(qp, rxe_psn_add(qp->req.top_psn, -1));
	}
	return true;
}

/**
 * rxe_req_run() - the send task
 * @qp: the QP
 *
 * One call sends up to RXE_NET_BATCH_PKTS packets, which go to the stack
 * together when they can (rxe_net_send()); none is held past the call.
 *
 * Return: true while there is more to do.
 */
bool rxe_req_run(struct rxe_qp *qp)
{
	struct rxe_net_batch batch = {};
	unsigned int n = 0;
	bool more;

	more = rxe_comp_run(qp);
	while (n < RXE_NET_BATCH_PKTS && rxe_req_may_refetch(qp) &&
	       rxe_req_refetch_one(qp, &batch))
		n++;
	while (n < RXE_NET_BATCH_PKTS && rxe_req_send_one(qp, &batch))
		n++;
	rxe_net_flush(qp, &batch);
	return more || n;
}
