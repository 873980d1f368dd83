// SPDX-License-Identifier: GPL-2.0
/*
 * The completer: acknowledgments and responses turn send work requests
 * into completions.
 *
 * It runs in the send task, before the requester, and owns comp.psn, the
 * oldest PSN not acknowledged. An ACK acknowledges SENDs and WRITEs up to
 * its PSN; READs and atomics complete only with their responses. A
 * sequence NAK, a response past the one expected, an ACK past an
 * unanswered READ, or the ACK timer rewinds the requester (go-back-N from
 * the first PSN missing). Retirement posts completions strictly in send
 * queue order.
 */

#include "rxe_comp.h"
#include "rxe_req.h"
#include "rxe_post.h"
#include "rxe_qp.h"
#include "rxe_cq.h"
#include "rxe_mr.h"
#include "rxe_hdr.h"
#include "rxe_pkt.h"
#include "rxe_counters.h"
#include "rxe_trace.h"

/**
 * rxe_comp_ack_timeout_ns() - the local ACK timeout (IBA 9.7.6.1.3)
 * @timeout: the QP's 5-bit timeout attribute
 *
 * Return: 4.096 us * 2^@timeout in nanoseconds, or 0 (wait forever) for 0.
 */
u64 rxe_comp_ack_timeout_ns(u8 timeout)
{
	return timeout ? 4096ULL << timeout : 0;
}

/**
 * rxe_comp_rnr_timeout_ns() - the delay an RNR NAK asks for (IBA table 45)
 * @code: the 5-bit timer code of the NAK
 *
 * The table doubles every two codes from 20 us, with the odd codes half
 * way: code c >= 2 is 10 us * 2^(c/2), times 1.5 when c is odd. Code 1 is
 * 10 us and code 0 the longest, 655.36 ms.
 *
 * Return: the delay in nanoseconds.
 */
u64 rxe_comp_rnr_timeout_ns(u8 code)
{
	u64 units;

	code &= 31;
	if (code == 0)
		units = 1ULL << 16;
	else if (code == 1)
		units = 1;
	else
		units = (1ULL << (code / 2)) * (code & 1 ? 3 : 2) / 2;
	return units * 10 * NSEC_PER_USEC;
}

static enum hrtimer_restart rxe_comp_ack_timer_fn(struct hrtimer *timer)
{
	struct rxe_qp *qp = container_of(timer, struct rxe_qp, comp.ack_timer);

	set_bit(RXE_COMP_EV_ACK_TIMEOUT, &qp->comp.events);
	rxe_task_run(&qp->send_task);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart rxe_comp_rnr_timer_fn(struct hrtimer *timer)
{
	struct rxe_qp *qp = container_of(timer, struct rxe_qp, comp.rnr_timer);

	set_bit(RXE_COMP_EV_RNR_DONE, &qp->comp.events);
	rxe_task_run(&qp->send_task);
	return HRTIMER_NORESTART;
}

/**
 * rxe_comp_init() - set up the completer's timers
 * @qp: a new QP
 */
void rxe_comp_init(struct rxe_qp *qp)
{
	memset(&qp->comp, 0, sizeof(qp->comp));
	hrtimer_init(&qp->comp.ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->comp.ack_timer.function = rxe_comp_ack_timer_fn;
	hrtimer_init(&qp->comp.rnr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->comp.rnr_timer.function = rxe_comp_rnr_timer_fn;
}

/**
 * rxe_comp_stop_timers() - stop both timers and wait for their callbacks
 * @qp: a QP whose send task is disabled, so nothing re-arms them
 *
 * Context: process context; may sleep.
 */
void rxe_comp_stop_timers(struct rxe_qp *qp)
{
	hrtimer_cancel(&qp->comp.ack_timer);
	hrtimer_cancel(&qp->comp.rnr_timer);
}

/**
 * rxe_comp_reset() - forget everything the completer knows
 * @qp: a QP moving to RESET, whose tasks are disabled
 */
void rxe_comp_reset(struct rxe_qp *qp)
{
	rxe_comp_stop_timers(qp);
	qp->comp.psn = 0;
	qp->comp.rnr_wait = false;
	qp->comp.events = 0;
}

/**
 * rxe_comp_start() - begin acknowledging at the QP's send PSN
 * @qp: a QP moving to RTS
 */
void rxe_comp_start(struct rxe_qp *qp)
{
	qp->comp.psn = qp->attr.sq_psn;
	qp->comp.retried_psn = ~0U;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
}

static bool rxe_comp_outstanding(const struct rxe_qp *qp)
{
	return rxe_psn_diff(qp->req.psn, qp->comp.psn) > 0;
}

/**
 * rxe_comp_arm_timer() - start the ACK timer unless it runs
 * @qp: an RC QP with packets outstanding
 */
void rxe_comp_arm_timer(struct rxe_qp *qp)
{
	u64 ns = rxe_comp_ack_timeout_ns(qp->attr.timeout);

	if (ns && !qp->comp.rnr_wait && !hrtimer_active(&qp->comp.ack_timer))
		hrtimer_start(&qp->comp.ack_timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
}

/* The peer acknowledged something new: the retry budgets start over. */
static void rxe_comp_progress(struct rxe_qp *qp)
{
	u64 ns = rxe_comp_ack_timeout_ns(qp->attr.timeout);

	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.retried_psn = ~0U;
	if (rxe_comp_outstanding(qp) && ns)
		hrtimer_start(&qp->comp.ack_timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL_SOFT);
	else
		hrtimer_try_to_cancel(&qp->comp.ack_timer);
}

/*
 * Has the requester started the work request at @index? Those before
 * req.index it has; the one at req.index when it is part way through it.
 */
static bool rxe_comp_started(const struct rxe_qp *qp, u32 index)
{
	if (index != qp->req.index)
		return true;
	return index != qp->req.tail &&
	       rxe_sq_wqe(qp, index)->state == RXE_WQE_ACTIVE;
}

/* The oldest started work request not finished, and its index. */
static struct rxe_swqe *rxe_comp_head(struct rxe_qp *qp, u32 *indexp)
{
	u32 index = qp->sq.queue.kidx;
	struct rxe_swqe *wqe;

	for (; rxe_comp_started(qp, index); index = rxe_sq_next(qp, index)) {
		wqe = rxe_sq_wqe(qp, index);
		if (wqe->state != RXE_WQE_DONE && wqe->state != RXE_WQE_ERROR) {
			*indexp = index;
			return wqe;
		}
		if (index == qp->req.index)
			break;
	}
	return NULL;
}

/* Fail the oldest unfinished work request; the QP goes to ERR. */
static void rxe_comp_fail(struct rxe_qp *qp, enum ib_wc_status status)
{
	struct rxe_swqe *wqe;
	u32 index;

	wqe = rxe_comp_head(qp, &index);
	if (wqe) {
		wqe->state = RXE_WQE_ERROR;
		wqe->status = status;
		/* Let retirement reach it. */
		if (index == qp->req.index) {
			qp->req.index = rxe_sq_next(qp, index);
			qp->req.offset = 0;
		}
	}
	rxe_qp_set_error(qp);
}

/*
 * Acknowledge every PSN up to @psn: SENDs and WRITEs it covers are done.
 * READs and atomics wait for their responses, so the walk stops at one.
 * Return the oldest unfinished work request if it is a READ or atomic,
 * else NULL.
 */
static struct rxe_swqe *rxe_comp_ack(struct rxe_qp *qp, u32 psn)
{
	u32 index = qp->sq.queue.kidx, next = rxe_psn_add(psn, 1);
	struct rxe_swqe *wqe, *stop = NULL;

	for (; rxe_comp_started(qp, index); index = rxe_sq_next(qp, index)) {
		wqe = rxe_sq_wqe(qp, index);
		if (wqe->state != RXE_WQE_DONE && wqe->state != RXE_WQE_ERROR) {
			if (wqe->mask & (RXE_WR_READ | RXE_WR_ATOMIC)) {
				stop = wqe;
				if (rxe_psn_diff(wqe->first_psn, next) < 0)
					next = wqe->first_psn;
				break;
			}
			if (rxe_psn_diff(wqe->last_psn, psn) > 0)
				break;
			wqe->state = RXE_WQE_DONE;
		}
		if (index == qp->req.index)
			break;
	}

	if (rxe_psn_diff(next, qp->comp.psn) > 0) {
		qp->comp.psn = next;
		rxe_comp_progress(qp);
	}
	return stop;
}

/* Send again from @psn; @counts when the retry spends the retry count. */
static void rxe_comp_retry(struct rxe_qp *qp, u32 psn, bool counts)
{
	if (counts) {
		if (!qp->comp.retry_left) {
			rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RETRY_EXCEEDED_ERR);
			rxe_comp_fail(qp, IB_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_left--;
	}
	qp->comp.retried_psn = psn;
	rxe_req_rewind(qp, psn);
	hrtimer_try_to_cancel(&qp->comp.ack_timer);
	rxe_comp_arm_timer(qp);
}

/*
 * Responses are missing before one that arrived: ask again from the first
 * missing PSN. Once per gap: the rest of the old request's responses are
 * still arriving, and each would look like a new gap. If the request sent
 * again is lost as well, the ACK timer retries it, and that one counts.
 */
static void rxe_comp_gap(struct rxe_qp *qp)
{
	if (qp->comp.psn == qp->comp.retried_psn)
		return;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, qp->comp.psn, false);
}

/* An RNR NAK: wait as long as the responder asked, then send again. */
static void rxe_comp_rnr(struct rxe_qp *qp, u8 code)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);

	rxe_counter_inc(rxe, RXE_CNT_RCV_RNR_ERR);
	if (qp->attr.rnr_retry != RXE_RNR_RETRY_INFINITE) {
		if (!qp->comp.rnr_left) {
			rxe_counter_inc(rxe, RXE_CNT_RNR_RETRY_EXCEEDED_ERR);
			rxe_comp_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_left--;
	}
	qp->comp.rnr_wait = true;
	hrtimer_try_to_cancel(&qp->comp.ack_timer);
	hrtimer_start(&qp->comp.rnr_timer,
		      ns_to_ktime(rxe_comp_rnr_timeout_ns(code)),
		      HRTIMER_MODE_REL_SOFT);
}

static enum ib_wc_status rxe_comp_nak_status(u8 code)
{
	switch (code) {
	case AETH_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case AETH_NAK_REM_ACC_ERR:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* An ACKNOWLEDGE packet: an ACK, an RNR NAK or a NAK. */
static void rxe_comp_acknowledge(struct rxe_qp *qp, struct sk_buff *skb)
{
	const struct rxe_aeth *aeth = rxe_pkt_hdr(skb, RXE_AETH);
	u32 psn = rxe_skb_pkt(skb)->psn;
	u8 syn = aeth_syn(aeth);
	u8 value = FIELD_GET(AETH_VALUE, syn);
	struct rxe_swqe *stop;

	switch (FIELD_GET(AETH_TYPE, syn)) {
	case AETH_TYPE_ACK:
		stop = rxe_comp_ack(qp, psn);
		/* ACKed past a READ or atomic: its response got lost. */
		if (stop && rxe_psn_diff(psn, stop->first_psn) >= 0)
			rxe_comp_gap(qp);
		break;
	case AETH_TYPE_RNR_NAK:
		rxe_comp_ack(qp, rxe_psn_add(psn, -1));
		if (psn == qp->comp.psn)
			rxe_comp_rnr(qp, value);
		break;
	case AETH_TYPE_NAK:
		rxe_comp_ack(qp, rxe_psn_add(psn, -1));
		if (psn != qp->comp.psn)
			break;
		if (value == AETH_NAK_PSN_SEQ_ERR) {
			rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RCV_SEQ_ERR);
			rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
			rxe_comp_retry(qp, psn, psn == qp->comp.retried_psn);
		} else {
			rxe_comp_fail(qp, rxe_comp_nak_status(value));
		}
		break;
	default:
		/* Reserved syndrome: ignore the packet. */
		break;
	}
}

/*
 * Check that a response PSN is the one expected for @wqe, the oldest
 * unfinished READ or atomic. Responses come back in PSN order, so one
 * ahead of comp.psn means responses were lost: ask again from the first
 * missing. That holds as well for a response of a later READ or atomic
 * (past @wqe's last PSN): the tail of @wqe was lost, and nothing but the
 * ACK timer would notice otherwise.
 */
static bool rxe_comp_rsp_in_order(struct rxe_qp *qp, struct rxe_swqe *wqe,
				  u32 psn)
{
	if (!wqe || rxe_psn_diff(psn, wqe->first_psn) < 0)
		return false;
	if (psn == qp->comp.psn)
		return rxe_psn_diff(psn, wqe->last_psn) <= 0;
	if (rxe_psn_diff(psn, qp->comp.psn) > 0)
		rxe_comp_gap(qp);
	return false;
}

/* A READ or atomic answered: done, and one less outstanding. */
static void rxe_comp_rd_atomic_done(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	wqe->state = RXE_WQE_DONE;
	if (wqe->mask & RXE_WR_RD_COUNTED) {
		wqe->mask &= ~RXE_WR_RD_COUNTED;
		qp->req.rd_atomic--;
	}
	qp->comp.psn = rxe_psn_add(wqe->last_psn, 1);
	rxe_comp_progress(qp);
}

/* A READ response: its payload lands at its place in the scatter list. */
static void rxe_comp_read_rsp(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	enum ib_wc_status status;
	struct rxe_swqe *wqe;
	struct rxe_buf buf = { .skb = skb, .off = pkt->hdrlen };
	u32 offset, want;
	bool last;

	wqe = rxe_comp_ack(qp, rxe_psn_add(pkt->psn, -1));
	if (!rxe_comp_rsp_in_order(qp, wqe, pkt->psn) ||
	    !(wqe->mask & RXE_WR_READ))
		return;

	offset = rxe_psn_diff(pkt->psn, wqe->first_psn) * qp->mtu;
	want = min(wqe->length - offset, qp->mtu);
	last = pkt->psn == wqe->last_psn;
	if (pkt->paylen != want || !!(pkt->mask & RXE_END_MASK) != last) {
		rxe_comp_fail(qp, IB_WC_BAD_RESP_ERR);
		return;
	}

	if (want && rxe_mr_copy_sgl(qp, wqe->sge, wqe->num_sge, offset, &buf,
				    want, RXE_TO_MR, IB_ACCESS_LOCAL_WRITE,
				    &status)) {
		rxe_comp_fail(qp, status);
		return;
	}

	if (last) {
		rxe_comp_rd_atomic_done(qp, wqe);
	} else {
		qp->comp.psn = rxe_psn_add(pkt->psn, 1);
		rxe_comp_progress(qp);
	}
}

/* An atomic ACK: the original value goes to the 8-byte local buffer. */
static void rxe_comp_atomic_ack(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	const struct rxe_atmack *atmack = rxe_pkt_hdr(skb, RXE_ATMACK);
	u64 orig = atmack_orig(atmack);
	struct rxe_buf buf = { .ptr = &orig };
	enum ib_wc_status status;
	struct rxe_swqe *wqe;

	wqe = rxe_comp_ack(qp, rxe_psn_add(pkt->psn, -1));
	if (!rxe_comp_rsp_in_order(qp, wqe, pkt->psn) ||
	    !(wqe->mask & RXE_WR_ATOMIC))
		return;

	if (rxe_mr_copy_sgl(qp, wqe->sge, wqe->num_sge, 0, &buf, sizeof(orig),
			    RXE_TO_MR, IB_ACCESS_LOCAL_WRITE, &status)) {
		rxe_comp_fail(qp, status);
		return;
	}
	rxe_comp_rd_atomic_done(qp, wqe);
}

/* One response packet. */
static void rxe_comp_rcv(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);

	/* Only PSNs we sent and that are not acknowledged yet. */
	if (rxe_psn_diff(pkt->psn, qp->req.psn) >= 0 ||
	    rxe_psn_diff(pkt->psn, qp->comp.psn) < 0)
		return;

	if (pkt->mask & RXE_READ_MASK)
		rxe_comp_read_rsp(qp, skb);
	else if (pkt->mask & RXE_ATOMIC_MASK)
		rxe_comp_atomic_ack(qp, skb);
	else
		rxe_comp_acknowledge(qp, skb);
}

static enum ib_wc_opcode rxe_comp_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/* Report a finished work request, if it asked to be or it failed. */
static void rxe_comp_post(struct rxe_qp *qp, struct rxe_swqe *wqe,
			  enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = rxe_comp_wc_opcode(wqe->opcode),
		.byte_len = wqe->length,
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	if (status == IB_WC_SUCCESS && !qp->sig_all &&
	    !(wqe->send_flags & IB_SEND_SIGNALED))
		return;
	trace_rxe_wqe_complete(qp, wqe->wr_id, status);
	if (rxe_cq_post(qp->scq, &wc, false))
		rxe_qp_set_error(qp);
}

/* Complete finished work requests, in order, up to the first unfinished. */
static void rxe_comp_retire(struct rxe_qp *qp)
{
	struct rxe_swqe *wqe;

	while (qp->sq.queue.kidx != qp->req.index) {
		wqe = rxe_sq_wqe(qp, qp->sq.queue.kidx);
		if (wqe->state == RXE_WQE_DONE)
			rxe_comp_post(qp, wqe, IB_WC_SUCCESS);
		else if (wqe->state == RXE_WQE_ERROR)
			rxe_comp_post(qp, wqe, wqe->status);
		else
			break;
		rxe_queue_advance(&qp->sq.queue);
	}
}

/*
 * The QP is in error: every work request completes, those that had not
 * finished with a flush error, and the send queue ends up empty.
 */
static void rxe_comp_flush(struct rxe_qp *qp)
{
	u32 prod = rxe_queue_peer_index(&qp->sq.queue);
	struct rxe_queue *q = &qp->sq.queue;
	struct rxe_swqe *wqe;

	skb_queue_purge(&qp->rsp_q);
	hrtimer_try_to_cancel(&qp->comp.ack_timer);
	hrtimer_try_to_cancel(&qp->comp.rnr_timer);
	qp->comp.rnr_wait = false;

	while (q->kidx != prod) {
		if (q->kidx == qp->req.tail) {
			if (qp->is_user)
				rxe_post_snapshot(qp, qp->req.tail);
			qp->req.tail = rxe_sq_next(qp, qp->req.tail);
		}
		wqe = rxe_sq_wqe(qp, q->kidx);
		if (wqe->state == RXE_WQE_DONE)
			rxe_comp_post(qp, wqe, IB_WC_SUCCESS);
		else if (wqe->state == RXE_WQE_ERROR)
			rxe_comp_post(qp, wqe, wqe->status);
		else
			rxe_comp_post(qp, wqe, IB_WC_WR_FLUSH_ERR);
		wqe->state = RXE_WQE_DONE;
		rxe_queue_advance(q);
	}
	qp->req.index = q->kidx;
	qp->req.tail = q->kidx;
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
}

/**
 * rxe_comp_run() - the completer's share of the send task
 * @qp: the QP
 *
 * Handles the timers' events and one response packet, then retires what
 * finished. In ERR (and SQE) it flushes the send queue instead.
 *
 * Return: true while responses are queued.
 */
bool rxe_comp_run(struct rxe_qp *qp)
{
	enum ib_qp_state state = rxe_qp_state(qp);
	struct sk_buff *skb;

	switch (state) {
	case IB_QPS_ERR:
	case IB_QPS_SQE:
		rxe_comp_flush(qp);
		return false;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		break;
	default:
		skb_queue_purge(&qp->rsp_q);
		return false;
	}

	if (test_and_clear_bit(RXE_COMP_EV_RNR_DONE, &qp->comp.events)) {
		qp->comp.rnr_wait = false;
		rxe_req_rewind(qp, qp->comp.psn);
		rxe_comp_arm_timer(qp);
	}
	if (test_and_clear_bit(RXE_COMP_EV_ACK_TIMEOUT, &qp->comp.events) &&
	    rxe_comp_outstanding(qp) && !qp->comp.rnr_wait) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RETRY_TIMEOUT);
		rxe_comp_retry(qp, qp->comp.psn, true);
	}

	skb = skb_dequeue(&qp->rsp_q);
	if (skb) {
		rxe_comp_rcv(qp, skb);
		consume_skb(skb);
	}
	rxe_comp_retire(qp);
	return !skb_queue_empty(&qp->rsp_q);
}

#ifdef DEBUG
/**
 * rxe_comp_selftest() - the timer formulas against IBA's tables
 *
 * Return: true when every check passes.
 */
bool rxe_comp_selftest(void)
{
	/* IBA table 45, in microseconds: every code. */
	static const u32 rnr_us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};
	bool ok = true;
	int i;

	for (i = 0; i < 32; i++) {
		if (rxe_comp_rnr_timeout_ns(i) != rnr_us[i] * NSEC_PER_USEC) {
			pr_err("rnr timer code %d: %llu ns, want %u us\n", i,
			       rxe_comp_rnr_timeout_ns(i), rnr_us[i]);
			ok = false;
		}
	}
	if (rxe_comp_ack_timeout_ns(0) != 0 ||
	    rxe_comp_ack_timeout_ns(14) != 67108864ULL ||
	    rxe_comp_ack_timeout_ns(31) != 4096ULL << 31) {
		pr_err("ack timeout formula mismatch\n");
		ok = false;
	}
	pr_info("timer self-tests: %s\n", ok ? "pass" : "FAIL");
	return ok;
}
#endif /* DEBUG */
