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
#include "rxe_recv.h"
#include "rxe_cq.h"
#include "rxe_mr.h"
#include "rxe_net.h"
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

/* The QP starts or stops having packets unacknowledged (see busy_qps). */
static void rxe_comp_set_busy(struct rxe_qp *qp, bool busy)
{
	if (qp->comp.busy == busy)
		return;
	WRITE_ONCE(qp->comp.busy, busy);
	if (busy)
		atomic_inc(&rxe_qp_dev(qp)->busy_qps);
	else
		atomic_dec(&rxe_qp_dev(qp)->busy_qps);
}

/**
 * rxe_comp_stop() - stop the completer of a QP whose send task is disabled
 * @qp: the QP
 *
 * Stops both timers and waits for their callbacks (nothing re-arms them
 * with the send task disabled), and takes the QP out of the device's
 * count of sending QPs.
 *
 * Context: process context; may sleep.
 */
void rxe_comp_stop(struct rxe_qp *qp)
{
	hrtimer_cancel(&qp->comp.ack_timer);
	hrtimer_cancel(&qp->comp.rnr_timer);
	rxe_comp_set_busy(qp, false);
}

/**
 * rxe_comp_reset() - forget everything the completer knows
 * @qp: a QP moving to RESET, whose tasks are disabled
 */
void rxe_comp_reset(struct rxe_qp *qp)
{
	rxe_comp_stop(qp);
	qp->comp.psn = 0;
	qp->comp.rnr_wait = false;
	qp->comp.events = 0;
	qp->comp.flush_left = 0;
}

/**
 * rxe_comp_forget_kept() - drop every READ response kept past a gap
 * @qp: an RC QP
 *
 * The requester went back (rxe_req_rewind()) and asks again for
 * everything from there on; what it asks for comes back in order. The
 * payload of the responses dropped stays where it was put, and the same
 * bytes arrive again on top of it. Also called when the last kept one is
 * taken. Either way no READ request for a gap (rxe_req_refetch()) is due
 * any more.
 *
 * Context: the send task, or a QP whose tasks are quiet.
 */
void rxe_comp_forget_kept(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;

	qp->req.fetch_psn = comp->psn;
	qp->req.fetch_end = comp->psn;
	if (!comp->nkept)
		return;
	bitmap_zero(comp->kept, RXE_KEPT_PSNS);
	comp->nkept = 0;
}

/* Acknowledged up to @next: the marks of kept responses before it go. */
static void rxe_comp_unkeep(struct rxe_qp *qp, u32 next)
{
	struct rxe_comp *comp = &qp->comp;
	u32 psn;

	if (rxe_psn_diff(next, comp->kept_top) >= 0) {
		rxe_comp_forget_kept(qp);
		return;
	}
	if (rxe_psn_diff(next, comp->psn) <= 0)
		return;
	for (psn = comp->psn; psn != next; psn = rxe_psn_add(psn, 1))
		if (__test_and_clear_bit(psn % RXE_KEPT_PSNS, comp->kept))
			comp->nkept--;
}

/**
 * rxe_comp_start() - begin acknowledging at the QP's send PSN
 * @qp: a QP moving to RTS
 *
 * The window starts fully open: a path proves lossy before it shrinks.
 */
void rxe_comp_start(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;

	comp->psn = qp->attr.sq_psn;
	comp->retried_psn = ~0U;
	comp->fetching = false;
	comp->gap_seen = 0;
	comp->dup_seen = 0;
	comp->dup_limited = false;
	comp->retry_left = qp->attr.retry_cnt;
	comp->rnr_left = qp->attr.rnr_retry;
	comp->cwnd = RXE_CWND_MAX;
	comp->ssthresh = RXE_CWND_MAX;
	comp->cwnd_acked = 0;
	comp->in_recovery = false;
	comp->undo_armed = false;
	comp->peer_holds = false;
	comp->peer_drops = false;
	comp->nak_once = false;
	comp->alone_open = false;
	comp->held = false;
	comp->rtt_start = 0;
	comp->srtt_ns = 0;
	comp->rttvar_ns = 0;
	comp->backoff = 0;
	comp->deadline = 0;
	rxe_comp_forget_kept(qp);
}

/*
 * Was anything sent that is not acknowledged? The requester's own PSN
 * does not say: after a rewind it is back at comp.psn until it sends
 * again, which a QP whose skbs the stack holds on to may not do for a
 * long time. The retry timer must run on, and at the end fail the QP,
 * as it would on a dead link.
 */
static bool rxe_comp_outstanding(const struct rxe_qp *qp)
{
	return rxe_psn_diff(qp->req.top_psn, qp->comp.psn) > 0;
}

/* The local ACK timeout starts now for the oldest outstanding PSN. */
static void rxe_comp_deadline_start(struct rxe_qp *qp)
{
	u64 ns = rxe_comp_ack_timeout_ns(qp->attr.timeout);

	qp->comp.deadline = ns ? ktime_add_ns(ktime_get(), ns) : 0;
}

/*
 * How long the early retry timer waits now; while a packet sent alone
 * awaits its ACK, two round trips (at least RXE_ALONE_RTO_MIN_NS).
 */
static u64 rxe_comp_rto_ns(const struct rxe_comp *comp)
{
	u64 rto = comp->srtt_ns ? comp->srtt_ns + 4 * comp->rttvar_ns :
				  RXE_RTO_INIT_NS;

	rto = max_t(u64, rto, RXE_RTO_MIN_NS);
	if (comp->alone_open && comp->srtt_ns)
		rto = clamp_t(u64, 2 * comp->srtt_ns, RXE_ALONE_RTO_MIN_NS, rto);
	rto <<= min_t(u32, comp->backoff, 10);
	return min_t(u64, rto, RXE_RTO_MAX_NS);
}

/* (Re)start the retry timer: a round-trip timeout away, or at the deadline. */
static void rxe_comp_timer_restart(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;
	ktime_t when = ktime_add_ns(ktime_get(), rxe_comp_rto_ns(comp));

	if (comp->deadline && ktime_after(when, comp->deadline))
		when = comp->deadline;
	hrtimer_start(&comp->ack_timer, when, HRTIMER_MODE_ABS_SOFT);
}

/**
 * rxe_comp_sent() - the requester sent an RC packet
 * @qp: the QP
 * @psn: the packet's PSN
 * @timed: its acknowledgment may time a round trip (it asks for one, or
 *	is a READ or atomic request)
 *
 * Times a round trip on a new packet when none is being timed, and keeps
 * the retry timer running. The timer's own callback runs the send task,
 * so the timer may be active but not queued here: it must then be started
 * again, or a retry that is lost as well waits forever.
 */
void rxe_comp_sent(struct rxe_qp *qp, u32 psn, bool timed)
{
	struct rxe_comp *comp = &qp->comp;
	bool fresh = rxe_psn_diff(psn, qp->req.top_psn) >= 0;

	if (timed && fresh && !comp->rtt_start) {
		comp->rtt_psn = psn;
		comp->rtt_start = ktime_get();
	}
	/* Nothing was outstanding: the local ACK timeout starts with it. */
	if (fresh && psn == comp->psn) {
		rxe_comp_deadline_start(qp);
		rxe_comp_set_busy(qp, true);
	}
	if (!comp->rnr_wait && !hrtimer_is_queued(&comp->ack_timer))
		rxe_comp_timer_restart(qp);
}

/* A round trip timed: fold it into the estimate (RFC 6298). */
static void rxe_comp_rtt_sample(struct rxe_comp *comp)
{
	u64 rtt = ktime_to_ns(ktime_sub(ktime_get(), comp->rtt_start));
	u64 delta;

	comp->rtt_start = 0;
	if (!comp->srtt_ns) {
		comp->srtt_ns = rtt;
		comp->rttvar_ns = rtt / 2;
		return;
	}
	delta = comp->srtt_ns > rtt ? comp->srtt_ns - rtt : rtt - comp->srtt_ns;
	comp->rttvar_ns = (3 * comp->rttvar_ns + delta) / 4;
	comp->srtt_ns = (7 * comp->srtt_ns + rtt) / 8;
}

/* @n more PSNs acknowledged: the window grows back towards its maximum. */
static void rxe_comp_grow(struct rxe_comp *comp, u32 n)
{
	if (comp->cwnd < comp->ssthresh) {
		comp->cwnd = min_t(u32, comp->cwnd + n, comp->ssthresh);
		return;
	}
	comp->cwnd_acked += n;
	while (comp->cwnd_acked >= comp->cwnd && comp->cwnd < RXE_CWND_MAX) {
		comp->cwnd_acked -= comp->cwnd;
		comp->cwnd++;
	}
}

/* Why the window shrinks. */
enum rxe_comp_loss_kind {
	RXE_LOSS_NAK,		/* a sequence NAK: certain, a request lost */
	RXE_LOSS_SEEN,		/* a gap in the responses: certain */
	RXE_LOSS_EARLY,		/* the early retry timer: maybe only slow */
	RXE_LOSS_TIMEOUT,	/* the QP's own timeout: nothing came back */
};

/*
 * Did the peer show the loss (a NAK, a response past a gap)? The retry
 * timer's kinds may be only a slow ACK, which rxe_comp_undo() forgives.
 */
static bool rxe_comp_loss_certain(enum rxe_comp_loss_kind kind)
{
	return kind == RXE_LOSS_NAK || kind == RXE_LOSS_SEEN;
}

/*
 * This QP's share of @total PSNs among its device's busy QPs, at least
 * RXE_CWND_LEAST.
 */
static u32 rxe_comp_share(const struct rxe_qp *qp, u32 total)
{
	int busy = atomic_read(&rxe_qp_dev(qp)->busy_qps);

	return max_t(u32, total / max(busy, 1), RXE_CWND_LEAST);
}

/* The least window: this QP's share of RXE_CWND_MIN on its device. */
static u32 rxe_comp_floor(const struct rxe_qp *qp)
{
	return rxe_comp_share(qp, RXE_CWND_MIN);
}

/**
 * rxe_comp_window() - PSNs the requester may have unacknowledged now
 * @qp: an RC QP
 *
 * Its own window, but no more than its share of RXE_CWND_MAX among the
 * device's busy QPs: one QP may have RXE_CWND_MAX packets in flight, and
 * so may eight together, whose windows all start at the most and would
 * otherwise put eight times that on the wire before the first loss.
 *
 * The share shrinks when QPs start sending. Packets already sent past
 * the last one that asked for an ACK are fewer than a quarter of the old
 * share (rxe_req.c asks that often), so the QP still gets an ACK that
 * opens its window unless the busy QPs more than quadrupled at once; then
 * the retry timer sends again, and the ACK that proves the retry needless
 * gives the window back.
 *
 * Context: the QP's send task; elsewhere (rdma res) a snapshot.
 * Return: the window in PSNs, at least 1 once the QP is in RTS.
 */
u32 rxe_comp_window(const struct rxe_qp *qp)
{
	return min(READ_ONCE(qp->comp.cwnd), rxe_comp_share(qp, RXE_CWND_MAX));
}

/*
 * The window after a loss: half; but for a request the responder reports
 * lost (a sequence NAK) on a QP sending alone on its device, all but an
 * eighth (RXE_CWND_KEEP_SHIFT). A gap in READ responses still halves:
 * responses come back in bursts, and a burst that overran a buffer on
 * the way is made smaller by a smaller window. So does a retry the timer
 * began: nothing came back at all.
 */
static u32 rxe_comp_decrease(const struct rxe_qp *qp,
			     enum rxe_comp_loss_kind kind)
{
	u32 cwnd = qp->comp.cwnd;

	if (kind == RXE_LOSS_NAK &&
	    atomic_read(&rxe_qp_dev(qp)->busy_qps) <= 1)
		return cwnd - (cwnd >> RXE_CWND_KEEP_SHIFT);
	return cwnd / 2;
}

/*
 * Packets were lost: shrink the window (rxe_comp_decrease()), once per
 * loss episode; the QP's own timeout shrinks it to the least. An episode
 * the retry timer began can be undone (rxe_comp_undo()).
 */
static void rxe_comp_loss(struct rxe_qp *qp, enum rxe_comp_loss_kind kind)
{
	struct rxe_comp *comp = &qp->comp;

	if (!comp->in_recovery) {
		comp->undo_cwnd = comp->cwnd;
		comp->undo_ssthresh = comp->ssthresh;
		comp->undo_armed = !rxe_comp_loss_certain(kind);
		comp->ssthresh = max(rxe_comp_decrease(qp, kind),
				     rxe_comp_floor(qp));
		comp->cwnd = comp->ssthresh;
		comp->cwnd_acked = 0;
		comp->in_recovery = true;
		comp->recover_psn = qp->req.top_psn;
	} else if (rxe_comp_loss_certain(kind)) {
		comp->undo_armed = false;
	}
	if (kind == RXE_LOSS_TIMEOUT)
		comp->cwnd = rxe_comp_floor(qp);
}

/*
 * The responder acknowledged packets the requester has not sent again
 * since the retry timer rewound it: they were not lost, the timer only
 * beat a slow ACK. Give the window back.
 */
static void rxe_comp_undo(struct rxe_comp *comp)
{
	if (!comp->undo_armed)
		return;
	comp->cwnd = max(comp->cwnd, comp->undo_cwnd);
	comp->ssthresh = max(comp->ssthresh, comp->undo_ssthresh);
	comp->in_recovery = false;
	comp->undo_armed = false;
}

/*
 * The peer answered with anything but an RNR NAK: a QP that stopped
 * sharing the window while it did not (RXE_BUSY_BACKOFFS) shares it
 * again, while it has packets unacknowledged.
 */
static void rxe_comp_answered(struct rxe_qp *qp)
{
	if (!qp->comp.busy && !qp->comp.rnr_wait && rxe_comp_outstanding(qp))
		rxe_comp_set_busy(qp, true);
}

/* One more retry with no answer since the last (RXE_BUSY_BACKOFFS). */
static void rxe_comp_backoff(struct rxe_qp *qp)
{
	if (++qp->comp.backoff >= RXE_BUSY_BACKOFFS)
		rxe_comp_set_busy(qp, false);
}

/*
 * The peer acknowledged everything before @next: time the round trip,
 * grow the window, and start the retry budgets and the timeout over.
 */
static void rxe_comp_advance(struct rxe_qp *qp, u32 next)
{
	struct rxe_comp *comp = &qp->comp;

	rxe_comp_grow(comp, rxe_psn_diff(next, comp->psn));
	if (comp->nkept)
		rxe_comp_unkeep(qp, next);
	comp->psn = next;
	/* Copies of what is acknowledged no longer matter. */
	if (rxe_psn_diff(next, qp->req.twice_psn) > 0)
		qp->req.twice_psn = next;
	if (comp->rtt_start && rxe_psn_diff(next, comp->rtt_psn) > 0)
		rxe_comp_rtt_sample(comp);
	if (comp->in_recovery && rxe_psn_diff(next, comp->recover_psn) >= 0)
		comp->in_recovery = false;
	if (comp->alone_open && rxe_psn_diff(next, comp->alone_end) >= 0)
		comp->alone_open = false;

	comp->retry_left = qp->attr.retry_cnt;
	comp->rnr_left = qp->attr.rnr_retry;
	comp->retried_psn = ~0U;
	comp->gap_seen = 0;
	comp->dup_seen = 0;
	comp->dup_limited = false;
	comp->backoff = 0;
	if (rxe_comp_outstanding(qp)) {
		rxe_comp_answered(qp);
		rxe_comp_deadline_start(qp);
		rxe_comp_timer_restart(qp);
	} else {
		comp->deadline = 0;
		hrtimer_try_to_cancel(&comp->ack_timer);
		rxe_comp_set_busy(qp, false);
	}
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

/*
 * Fail the oldest unfinished work request; the QP goes to ERR. That may be
 * one a rewind set back to POSTED at req.index, and the requester has yet
 * to send again: a NAK for its first PSN, or the retries run out on it,
 * while the requester still sends what comes before. It is the one whose
 * completion says why the QP failed.
 */
static void rxe_comp_fail(struct rxe_qp *qp, enum ib_wc_status status)
{
	struct rxe_swqe *wqe;
	u32 index;

	wqe = rxe_comp_head(qp, &index);
	if (!wqe && qp->req.index != qp->req.tail &&
	    rxe_sq_wqe(qp, qp->req.index)->started) {
		index = qp->req.index;
		wqe = rxe_sq_wqe(qp, index);
	}
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

	/*
	 * Never past the requester's cursor. After a rewind the work
	 * requests from req.psn on wait to be sent again; a READ or atomic
	 * among them is not answered by an ACK or a response for a later
	 * PSN of its first send, and a walk that stopped short of it must
	 * not acknowledge it.
	 */
	if (rxe_psn_diff(next, qp->req.psn) > 0)
		next = qp->req.psn;
	if (rxe_psn_diff(next, qp->comp.psn) > 0)
		rxe_comp_advance(qp, next);
	return stop;
}

/*
 * Spend one of the retries of the QP's retry count (IBA 9.7.6.1.3), or
 * fail the QP when none is left. Return whether one was left.
 */
static bool rxe_comp_spend_retry(struct rxe_qp *qp)
{
	if (!qp->comp.retry_left) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RETRY_EXCEEDED_ERR);
		rxe_comp_fail(qp, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	qp->comp.retry_left--;
	return true;
}

/*
 * The requester goes back to @psn: for about a round trip what arrives
 * may still answer the packets sent before (rxe_comp_resent_lately()),
 * and the round trip timed, if any, is not a sample.
 */
static void rxe_comp_going_back(struct rxe_comp *comp, u32 psn)
{
	comp->retried_psn = psn;
	comp->resent_at = ktime_get();
	comp->fetching = false;
	comp->nak_psn = psn;
	comp->gap_seen = 0;
	comp->dup_seen = 0;
	comp->rtt_start = 0;
}

/* Is an ACK held (rxe_comp_hold())? */
static bool rxe_comp_ack_held(const struct rxe_comp *comp)
{
	return comp->held && aeth_syn_ack(comp->held_syn);
}

/* Is a NAK for an error held, the responder's verdict on its request? */
static bool rxe_comp_error_held(const struct rxe_comp *comp)
{
	return comp->held &&
	       FIELD_GET(AETH_TYPE, comp->held_syn) == AETH_TYPE_NAK &&
	       !aeth_syn_seq_nak(comp->held_syn);
}

/*
 * Where a refetch stops. After the retry timer, at req.psn: every
 * response not in. After a gap seen, at the last response kept, or later
 * at the PSN an ACK held past a READ does not acknowledge: the responder
 * answered every request before it. A NAK held says that the responder
 * stopped at its PSN: a READ request past it would be out of sequence
 * there, so none goes (rxe_comp_hold()).
 */
static u32 rxe_comp_fetch_end(const struct rxe_qp *qp,
			      enum rxe_comp_loss_kind kind)
{
	const struct rxe_comp *comp = &qp->comp;
	u32 end;

	if (comp->held && !rxe_comp_ack_held(comp))
		return comp->held_psn;
	if (kind != RXE_LOSS_SEEN)
		return qp->req.psn;
	end = comp->held ? comp->held_psn : comp->kept_top;
	if (comp->nkept && rxe_psn_diff(comp->kept_top, end) > 0)
		end = comp->kept_top;
	return end;
}

/*
 * Can the requester ask again for just the READ responses missing from
 * @psn on? Only when @psn is the oldest not acknowledged and one of a
 * READ's, and responses past it were kept or an acknowledgment past it is
 * held (rxe_comp_hold()): the responder has what follows, which need not
 * go again. Not for a sequence NAK alone: the NAKed packet goes again
 * anyway, and a go-back sends it in the same round trip.
 */
static bool rxe_comp_refetchable(struct rxe_qp *qp, u32 psn)
{
	const struct rxe_comp *comp = &qp->comp;
	struct rxe_swqe *wqe;

	if (psn != comp->psn ||
	    (!comp->nkept &&
	     (!comp->held || aeth_syn_seq_nak(comp->held_syn))))
		return false;
	wqe = rxe_comp_wqe_at(qp, psn);
	return wqe && rxe_wqe_reads_bytes(wqe);
}

/*
 * Send again from @psn, lost as @kind shows. A packet a sequence NAK
 * names goes again alone (rxe_req_resend_alone()) unless the responder
 * was seen dropping what follows a gap; the ACK for it tells which kind
 * of responder this is (rxe_comp_alone_acked()). So does the next lost
 * packet, when the NAK for it shows that the responder executed packets
 * it had kept after the last one sent alone. A packet right after that
 * one missing as well is a burst, which the requester sends again as a
 * whole (go-back-N), as it does for any other loss and towards a
 * responder that drops: one packet per round trip would take longer
 * than a window. READ responses missing before ones kept past the gap,
 * or before an acknowledgment held past the READ (rxe_comp_hold()), are
 * asked for again on their own (rxe_req_refetch()), and the requester
 * stays where it is; when the retry timer fired, every response missing.
 */
static void rxe_comp_resend(struct rxe_qp *qp, u32 psn,
			    enum rxe_comp_loss_kind kind)
{
	struct rxe_comp *comp = &qp->comp;
	bool alone = kind == RXE_LOSS_NAK && !comp->peer_drops &&
		     (!comp->alone_open ||
		      rxe_psn_diff(psn, comp->nak_psn) > 1);

	rxe_comp_going_back(comp, psn);
	comp->nak_once = kind == RXE_LOSS_NAK &&
			 rxe_psn_diff(psn, qp->req.twice_psn) >= 0;
	comp->alone_open = alone;
	if (alone) {
		comp->alone_end = qp->req.top_psn;
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RESENT_ALONE);
		rxe_req_resend_alone(qp, psn);
	} else if (kind != RXE_LOSS_NAK && rxe_comp_refetchable(qp, psn)) {
		comp->fetching = true;
		comp->fetch_mark = qp->req.psn;
		rxe_req_refetch(qp, psn, rxe_comp_fetch_end(qp, kind));
	} else {
		rxe_req_rewind(qp, psn);
	}
	rxe_comp_timer_restart(qp);
}

/*
 * Did the requester go back to comp.psn, the oldest PSN not acknowledged, so
 * recently that what arrives now may still be the answer to the packets
 * sent before? About a round trip.
 */
static bool rxe_comp_resent_lately(const struct rxe_comp *comp)
{
	u64 quiet = comp->srtt_ns ? comp->srtt_ns + comp->rttvar_ns :
				    RXE_RESEND_QUIET_NS;

	return comp->psn == comp->retried_psn &&
	       ktime_before(ktime_get(), ktime_add_ns(comp->resent_at, quiet));
}

/*
 * Packets were lost, as @kind shows: send again from @psn. This spends no
 * retry: a peer that keeps asking without the QP making progress runs
 * into the local ACK timeout, which does.
 */
static void rxe_comp_retry(struct rxe_qp *qp, u32 psn,
			   enum rxe_comp_loss_kind kind)
{
	rxe_comp_loss(qp, kind);
	rxe_comp_resend(qp, psn, kind);
}

/*
 * The retry timer fired with packets outstanding. Before the QP's own
 * timeout it is an early retry that spends nothing; at the timeout it is
 * the retry IBA counts, and the timeout starts over. When the packets
 * outstanding never asked for an ACK, nothing is known to be lost: the
 * last of them goes again to ask, spending nothing, and the timeout
 * starts over for it; if that is not answered either, the next time the
 * timer fires is a retry as any other.
 */
static void rxe_comp_timeout(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	enum rxe_comp_loss_kind kind = RXE_LOSS_EARLY;

	if (rxe_req_tail_unasked(qp)) {
		rxe_counter_inc(rxe, RXE_CNT_ACK_SOLICITED);
		rxe_req_solicit(qp);
		rxe_comp_deadline_start(qp);
		rxe_comp_timer_restart(qp);
		return;
	}
	if (comp->alone_open &&
	    (!comp->deadline || ktime_before(ktime_get(), comp->deadline))) {
		/*
		 * The packet sent alone, or the ACK for it, was lost: send
		 * the oldest missing packet alone again. The backoff keeps a
		 * path that is only slow from drawing one a round trip.
		 */
		rxe_comp_backoff(qp);
		rxe_counter_inc(rxe, RXE_CNT_RESENT_ALONE);
		rxe_comp_going_back(comp, comp->psn);
		rxe_req_resend_alone(qp, comp->psn);
		rxe_comp_timer_restart(qp);
		return;
	}
	if (comp->deadline && !ktime_before(ktime_get(), comp->deadline)) {
		rxe_counter_inc(rxe, RXE_CNT_RETRY_TIMEOUT);
		if (!rxe_comp_spend_retry(qp))
			return;
		rxe_comp_deadline_start(qp);
		kind = RXE_LOSS_TIMEOUT;
	} else {
		rxe_counter_inc(rxe, RXE_CNT_RETRY_EARLY);
	}
	rxe_comp_backoff(qp);
	rxe_comp_loss(qp, kind);
	rxe_comp_resend(qp, comp->psn, kind);
}

/*
 * Responses are missing before the one at @psn that arrived: ask again
 * from the first missing PSN. A READ response past the gap may only have
 * overtaken the missing ones, so it takes RXE_REORDER_PKTS of them. (An
 * ACK past a READ, which its responses cannot follow, is certain:
 * rxe_comp_hold().)
 *
 * Not again too soon after asking for this gap. A responder answers its
 * requests in order, a duplicate READ request as well, so the answer to a
 * refetch comes after the responses to every request sent before it, which
 * may be a window of them: only responses from fetch_mark on, to requests
 * sent after it, show that the refetch or its answer was lost. After going
 * back, a round trip: the rest of the old responses are still arriving,
 * and each would look like the same gap. If the request sent again is lost
 * too, a later gap or the retry timer notices.
 */
static void rxe_comp_gap(struct rxe_qp *qp, u32 psn)
{
	struct rxe_comp *comp = &qp->comp;
	bool fetching = comp->fetching && comp->retried_psn == comp->psn;

	if (fetching && rxe_psn_diff(psn, comp->fetch_mark) < 0)
		return;
	if (++comp->gap_seen < RXE_REORDER_PKTS)
		return;
	if (!fetching && rxe_comp_resent_lately(comp))
		return;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, comp->psn, RXE_LOSS_SEEN);
}

/*
 * The ACK for a packet sent again alone, covering @acked. Past it: the
 * responder had the packets after it, which did not go again, so it keeps
 * what follows a gap; learnt only when the NAKed packet had gone once
 * before (nak_once), or an older copy of it may have filled the gap in
 * time for the rest to follow. Only it: the packet after it is missing,
 * lost as well or dropped by a responder that does not keep packets (the
 * first time, that is what it is taken for). Either way the requester goes
 * back there now rather than waiting for the NAK of its next packet, or
 * for the retry timer when it has none.
 */
static void rxe_comp_alone_acked(struct rxe_qp *qp, u32 acked)
{
	struct rxe_comp *comp = &qp->comp;
	u32 next = rxe_psn_add(acked, 1);

	if (rxe_psn_diff(acked, comp->nak_psn) > 0) {
		if (comp->nak_once) {
			comp->peer_holds = true;
			comp->peer_drops = false;
		}
		return;
	}
	if (acked != comp->nak_psn || !comp->alone_open)
		return;
	comp->alone_open = false;
	if (!comp->peer_holds)
		comp->peer_drops = true;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, next, RXE_LOSS_SEEN);
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
	rxe_comp_set_busy(qp, false);
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

/*
 * A NAK or an RNR NAK for @psn, the oldest PSN not acknowledged: wait
 * and send again, send again now, or fail the work request it names.
 */
static void rxe_comp_nak(struct rxe_qp *qp, u32 psn, u8 syn)
{
	u8 value = FIELD_GET(AETH_VALUE, syn);

	if (FIELD_GET(AETH_TYPE, syn) == AETH_TYPE_RNR_NAK) {
		rxe_comp_rnr(qp, value);
		return;
	}
	if (value != AETH_NAK_PSN_SEQ_ERR) {
		rxe_comp_fail(qp, rxe_comp_nak_status(value));
		return;
	}
	/*
	 * A second NAK for where the requester just went back to was most
	 * likely set off by an old packet that overtook the ones sent again.
	 */
	if (rxe_comp_resent_lately(&qp->comp))
		return;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, psn, RXE_LOSS_NAK);
}

/*
 * An ACK, NAK or RNR NAK for @psn past a READ or atomic still waiting for
 * its responses. The responder executed every request before @psn and
 * answered it before this packet, which applies once those answers are
 * in: when comp.psn gets to the first PSN it does not acknowledge, @psn
 * for a NAK and the one after for an ACK. Until then it is held, the
 * latest one if more come; not an ACK in place of a NAK that acknowledges
 * as much, and says more.
 *
 * The answers missing were lost, for a responder answers in order: the
 * READ responses missing before the packet held are asked for again at
 * once (rxe_comp_fetch_end()). What it acknowledged need not go again,
 * kept responses or not. After a sequence NAK with none kept the requester
 * goes back to comp.psn instead, which sends @psn again in the same round
 * trip. Not when it just did either: the refetch that a gap set off is
 * then still being answered, behind the responses sent before this
 * packet.
 */
static void rxe_comp_hold(struct rxe_qp *qp, u32 psn, u8 syn)
{
	struct rxe_comp *comp = &qp->comp;
	bool ack = aeth_syn_ack(syn);
	u32 end = ack ? rxe_psn_add(psn, 1) : psn;
	int later = comp->held ? rxe_psn_diff(end, comp->held_psn) : 1;

	if (later < 0 || (!later && ack))
		return;
	comp->held = true;
	comp->held_psn = end;
	comp->held_syn = syn;
	rxe_counter_inc(rxe_qp_dev(qp),
			ack ? RXE_CNT_ACK_HELD : RXE_CNT_NAK_HELD);
	if (rxe_comp_resent_lately(comp))
		return;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, comp->psn, RXE_LOSS_SEEN);
}

/**
 * rxe_comp_resending() - the requester sends again from a PSN
 * @qp: an RC QP
 * @psn: the first PSN it sends again
 *
 * An ACK, sequence NAK or RNR NAK held for @psn or a later PSN is
 * dropped: what it acknowledged or asked for goes again, and the
 * responder answers that afresh. A NAK for an error stays: it is the
 * responder's verdict on its request.
 *
 * Context: the send task.
 */
void rxe_comp_resending(struct rxe_qp *qp, u32 psn)
{
	struct rxe_comp *comp = &qp->comp;

	if (comp->held && rxe_psn_diff(comp->held_psn, psn) >= 0 &&
	    !rxe_comp_error_held(comp))
		comp->held = false;
}

/*
 * What is held applies once comp.psn gets to held_psn: the READ or atomic
 * that held the walk is done, and the SENDs and WRITEs after it that the
 * packet acknowledged complete on the way there. Then a NAK is acted on.
 * Past held_psn, an ACK covered it and it is moot.
 *
 * The walk may stop short at an atomic, a FLUSH or an ATOMIC WRITE, whose
 * response was lost as well; no refetch asks for those (rxe_req_refetch()),
 * so the requester goes back to it.
 */
static void rxe_comp_release_held(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;
	u32 psn = comp->held_psn;
	struct rxe_swqe *stop = NULL;

	if (rxe_psn_diff(comp->psn, psn) < 0)
		stop = rxe_comp_ack(qp, rxe_psn_add(psn, -1));
	if (rxe_psn_diff(comp->psn, psn) < 0) {
		if (stop && !rxe_wqe_reads_bytes(stop) &&
		    !rxe_comp_resent_lately(comp)) {
			rxe_counter_inc(rxe_qp_dev(qp),
					RXE_CNT_COMPLETER_RETRY_ERR);
			rxe_comp_retry(qp, comp->psn, RXE_LOSS_SEEN);
		}
		return;
	}
	comp->held = false;
	if (comp->psn == psn && !aeth_syn_ack(comp->held_syn))
		rxe_comp_nak(qp, psn, comp->held_syn);
}

/* An ACKNOWLEDGE packet: an ACK, an RNR NAK or a NAK. */
static void rxe_comp_acknowledge(struct rxe_qp *qp, struct sk_buff *skb)
{
	const struct rxe_aeth *aeth = rxe_pkt_hdr(skb, RXE_AETH);
	u32 psn = rxe_skb_pkt(skb)->psn;
	u8 syn = aeth_syn(aeth);
	u8 type = FIELD_GET(AETH_TYPE, syn);
	struct rxe_swqe *stop;
	bool alone;
	u32 acked = type == AETH_TYPE_ACK ? psn : rxe_psn_add(psn, -1);

	/* A reserved syndrome (AETH type 2): the packet says nothing. */
	if (type != AETH_TYPE_ACK && type != AETH_TYPE_NAK &&
	    type != AETH_TYPE_RNR_NAK)
		return;

	/*
	 * The responder has more than the requester sent again since a
	 * rewind. After a sequence NAK for a packet that had gone once, that
	 * shows it keeps the packets after a gap: those past the NAKed one
	 * were not sent again.
	 */
	if (rxe_psn_diff(acked, qp->req.psn) >= 0) {
		if (qp->comp.nak_once &&
		    rxe_psn_diff(acked, qp->comp.nak_psn) > 0) {
			qp->comp.peer_holds = true;
			qp->comp.peer_drops = false;
		}
		rxe_comp_undo(&qp->comp);
		rxe_req_forward(qp, acked);
	}

	switch (type) {
	case AETH_TYPE_ACK:
		/* It covers what is held: a NAK's packet got there after all. */
		if (qp->comp.held &&
		    rxe_psn_diff(psn, qp->comp.held_psn) >= 0)
			qp->comp.held = false;
		alone = qp->comp.alone_open;
		stop = rxe_comp_ack(qp, psn);
		if (alone)
			rxe_comp_alone_acked(qp, psn);
		/* ACKed past a READ or atomic: its response got lost. */
		if (stop && rxe_psn_diff(psn, stop->first_psn) >= 0)
			rxe_comp_hold(qp, psn, syn);
		break;
	case AETH_TYPE_NAK:
	case AETH_TYPE_RNR_NAK:
		if (aeth_syn_seq_nak(syn))
			rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_RCV_SEQ_ERR);
		stop = rxe_comp_ack(qp, acked);
		if (psn == qp->comp.psn)
			rxe_comp_nak(qp, psn, syn);
		else if (stop && rxe_psn_diff(acked, stop->first_psn) >= 0)
			rxe_comp_hold(qp, psn, syn);
		break;
	}
	if (type != AETH_TYPE_RNR_NAK)
		rxe_comp_answered(qp);
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
		rxe_comp_gap(qp, psn);
	return false;
}

/* A READ or atomic answered: done, and its requests no longer outstanding. */
static void rxe_comp_rd_atomic_done(struct rxe_qp *qp, struct rxe_swqe *wqe)
{
	wqe->state = RXE_WQE_DONE;
	qp->req.rd_atomic -= wqe->rd_sent - wqe->rd_done;
	wqe->rd_done = wqe->rd_sent;
	rxe_comp_advance(qp, rxe_psn_add(wqe->last_psn, 1));
}

/**
 * rxe_comp_wqe_at() - the work request a PSN was sent for
 * @qp: an RC QP
 * @psn: a PSN sent and not acknowledged
 *
 * Context: the send task.
 * Return: the unfinished SEND, WRITE, READ or atomic whose PSNs take in
 * @psn, or NULL.
 */
struct rxe_swqe *rxe_comp_wqe_at(struct rxe_qp *qp, u32 psn)
{
	struct rxe_swqe *wqe;
	u32 index;

	if (!rxe_comp_head(qp, &index))
		return NULL;
	for (; rxe_comp_started(qp, index); index = rxe_sq_next(qp, index)) {
		wqe = rxe_sq_wqe(qp, index);
		if ((wqe->state == RXE_WQE_SENT || wqe->state == RXE_WQE_ACTIVE) &&
		    !(wqe->mask & RXE_WR_LOCAL) &&
		    rxe_psn_diff(psn, wqe->first_psn) >= 0 &&
		    rxe_psn_diff(psn, wqe->last_psn) <= 0)
			return wqe;
		if (index == qp->req.index)
			break;
	}
	return NULL;
}

/*
 * Check a READ response of @wqe against what its PSN must carry, and copy
 * its payload to its place in the scatter list. The last response of each
 * READ request ends it; one sent again for a gap (rxe_req_refetch()) may
 * end before that, so an end elsewhere is no error. Return 0, or -EINVAL
 * with @status set: a response of the wrong size, or a scatter list that
 * fails.
 */
static int rxe_comp_read_place(struct rxe_qp *qp, struct rxe_swqe *wqe,
			       struct sk_buff *skb, enum ib_wc_status *status)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	struct rxe_buf buf = { .skb = skb, .off = pkt->hdrlen };
	u32 offset = rxe_psn_diff(pkt->psn, wqe->first_psn) * qp->mtu;
	u32 want = min(wqe->length - offset, qp->mtu);

	if (pkt->paylen != want ||
	    (rxe_req_read_chunk_end(wqe, pkt->psn) &&
	     !(pkt->mask & RXE_END_MASK))) {
		*status = IB_WC_BAD_RESP_ERR;
		return -EINVAL;
	}
	if (want && rxe_mr_copy_sgl(qp, wqe->sge, wqe->num_sge, offset, &buf,
				    want, RXE_TO_MR, IB_ACCESS_LOCAL_WRITE,
				    status))
		return -EINVAL;
	return 0;
}

/* The READ response at comp.psn is in place: count it and move on. */
static void rxe_comp_read_took(struct rxe_qp *qp, struct rxe_swqe *wqe,
			       u32 psn)
{
	if (psn == wqe->last_psn) {
		rxe_comp_rd_atomic_done(qp, wqe);
		return;
	}
	/* One of the READ's requests answered in full. */
	if (rxe_req_read_chunk_end(wqe, psn) && wqe->rd_done < wqe->rd_sent) {
		wqe->rd_done++;
		qp->req.rd_atomic--;
	}
	rxe_comp_advance(qp, rxe_psn_add(psn, 1));
}

/*
 * A READ response past a gap. Go-back-N would drop it and ask again for
 * everything from the gap on, a window of responses for one lost; its
 * payload goes to its place now instead, and the requester asks again
 * only for what is missing before it (rxe_req_refetch()). Not a response
 * the requester has yet to ask for again after a rewind, nor one too far
 * ahead to mark; neither should arrive. One that fails its checks is
 * dropped here, and fails the QP when its turn comes. Return true when
 * the response had been kept already.
 */
static bool rxe_comp_keep(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_comp *comp = &qp->comp;
	u32 psn = rxe_skb_pkt(skb)->psn;
	enum ib_wc_status status;
	struct rxe_swqe *wqe;

	if (rxe_psn_diff(psn, comp->psn) >= RXE_KEPT_PSNS ||
	    rxe_psn_diff(psn, qp->req.psn) >= 0)
		return false;
	if (rxe_comp_kept(qp, psn))
		return true;
	wqe = rxe_comp_wqe_at(qp, psn);
	if (!wqe || !(wqe->mask & RXE_WR_READ) ||
	    rxe_comp_read_place(qp, wqe, skb, &status))
		return false;
	__set_bit(psn % RXE_KEPT_PSNS, comp->kept);
	if (!comp->nkept || rxe_psn_diff(psn, comp->kept_top) >= 0)
		comp->kept_top = rxe_psn_add(psn, 1);
	comp->nkept++;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_READ_KEPT);
	/*
	 * The responder is answering: the retry timer waits for it to stop.
	 * Answers to the last refetch queue behind these responses, and a
	 * retry now would ask again for every response not yet arrived.
	 */
	if (!comp->rnr_wait)
		rxe_comp_timer_restart(qp);
	return false;
}

/*
 * The response at @psn, kept before, arrived again past comp.psn: an
 * answer to a READ request sent again for the gaps (rxe_req_refetch()).
 * The first of those asked for comp.psn, and the responder answers in
 * order, so the response at comp.psn, or the request for it, was lost;
 * the third such answer decides, as a link that reorders may only have
 * delayed it. Ask again now: nothing else on its way may show the loss
 * before the retry timer.
 *
 * The answers to the refetches before keep coming, in PSN order, and
 * must not each set off another: after one, only answers below the PSN
 * that set it off count, which those to the new refetch are, until
 * progress.
 */
static void rxe_comp_kept_again(struct rxe_qp *qp, u32 psn)
{
	struct rxe_comp *comp = &qp->comp;

	if (comp->dup_limited && rxe_psn_diff(psn, comp->dup_limit) >= 0)
		return;
	if (++comp->dup_seen < RXE_REORDER_PKTS)
		return;
	comp->dup_limited = true;
	comp->dup_limit = psn;
	rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
	rxe_comp_retry(qp, comp->psn, RXE_LOSS_SEEN);
}

/* Were RXE_REORDER_PKTS responses or more kept past comp.psn? */
static bool rxe_comp_gap_known(const struct rxe_qp *qp)
{
	u32 psn = qp->comp.psn, n = 0;

	while (n < RXE_REORDER_PKTS && psn != qp->comp.kept_top) {
		psn = rxe_psn_add(psn, 1);
		n += rxe_comp_kept(qp, psn);
	}
	return n >= RXE_REORDER_PKTS;
}

/*
 * Take the kept responses that follow comp.psn, up to the next gap. A
 * response acknowledges every request before its own, so SENDs and WRITEs
 * between two READs complete on the way.
 *
 * When they stop at a gap the last refetch did not cover (at or past
 * req.fetch_end), the responses past it arrived while an earlier gap held
 * comp.psn back, and counted for that one: ask for this one now. The
 * window is likely full up to it, so nothing more would arrive to show it
 * before the retry timer.
 */
static void rxe_comp_take_kept(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;
	struct rxe_swqe *wqe;
	u32 psn;

	while (comp->nkept) {
		psn = comp->psn;
		while (!rxe_comp_kept(qp, psn)) {
			psn = rxe_psn_add(psn, 1);
			if (rxe_psn_diff(psn, comp->kept_top) >= 0)
				return;
		}
		wqe = rxe_comp_ack(qp, rxe_psn_add(psn, -1));
		if (psn != comp->psn || !wqe || !(wqe->mask & RXE_WR_READ) ||
		    rxe_psn_diff(psn, wqe->last_psn) > 0)
			break;
		rxe_comp_read_took(qp, wqe, psn);
	}
	if (comp->nkept &&
	    rxe_psn_diff(comp->psn, qp->req.fetch_end) >= 0 &&
	    comp->psn != comp->retried_psn && rxe_comp_gap_known(qp)) {
		rxe_counter_inc(rxe_qp_dev(qp), RXE_CNT_COMPLETER_RETRY_ERR);
		rxe_comp_retry(qp, comp->psn, RXE_LOSS_SEEN);
	}
}

/* A READ response: its payload lands at its place in the scatter list. */
static void rxe_comp_read_rsp(struct rxe_qp *qp, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	enum ib_wc_status status;
	struct rxe_swqe *wqe;

	wqe = rxe_comp_ack(qp, rxe_psn_add(pkt->psn, -1));
	if (wqe && pkt->psn != qp->comp.psn && rxe_comp_keep(qp, skb)) {
		rxe_comp_kept_again(qp, pkt->psn);
		return;
	}
	if (!rxe_comp_rsp_in_order(qp, wqe, pkt->psn) ||
	    !(wqe->mask & RXE_WR_READ))
		return;
	if (rxe_comp_read_place(qp, wqe, skb, &status)) {
		rxe_comp_fail(qp, status);
		return;
	}
	rxe_comp_read_took(qp, wqe, pkt->psn);
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
	if (rxe_psn_diff(pkt->psn, qp->req.top_psn) >= 0 ||
	    rxe_psn_diff(pkt->psn, qp->comp.psn) < 0)
		return;

	if (pkt->mask & RXE_READ_MASK)
		rxe_comp_read_rsp(qp, skb);
	else if (pkt->mask & RXE_ATOMIC_MASK)
		rxe_comp_atomic_ack(qp, skb);
	else
		rxe_comp_acknowledge(qp, skb);
	if (qp->comp.nkept && rxe_qp_state(qp) != IB_QPS_ERR)
		rxe_comp_take_kept(qp);
	if (qp->comp.held && rxe_qp_state(qp) != IB_QPS_ERR)
		rxe_comp_release_held(qp);
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
#ifdef RXE_HAVE_MPE
	case IB_WR_FLUSH:
		return IB_WC_FLUSH;
	case IB_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
#endif
	default:
		return IB_WC_SEND;
	}
}

/* Bytes a work request moved, as its completion reports them. */
static u32 rxe_comp_byte_len(const struct rxe_swqe *wqe)
{
	if (wqe->mask & RXE_WR_FLUSH)
		return wqe->wr.rdma.flush_len;
	if (wqe->mask & RXE_WR_AWRITE)
		return RXE_AWRITE_BYTES;
	return wqe->length;
}

/* Report a finished work request, if it asked to be or it failed. */
static void rxe_comp_post(struct rxe_qp *qp, struct rxe_swqe *wqe,
			  enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = rxe_comp_wc_opcode(wqe->opcode),
		.byte_len = rxe_comp_byte_len(wqe),
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	if (status == IB_WC_SUCCESS && !qp->sig_all &&
	    !(wqe->send_flags & IB_SEND_SIGNALED))
		return;
	trace_rxe_wqe_complete(qp, wqe->wr_id, status);
	if (rxe_cq_post(qp->scq, &wc, false))
		rxe_qp_cq_full(qp);
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
static bool rxe_comp_flush(struct rxe_qp *qp)
{
	struct rxe_queue *q = &qp->sq.queue;
	struct rxe_swqe *wqe;
	unsigned int n;
	u32 count;

	rxe_recv_purge(qp, &qp->rsp_q);
	hrtimer_try_to_cancel(&qp->comp.ack_timer);
	hrtimer_try_to_cancel(&qp->comp.rnr_timer);
	qp->comp.rnr_wait = false;
	rxe_comp_set_busy(qp, false);
	qp->req.rd_atomic = 0;

	/*
	 * A process's QP flushes only the WQEs posted when the flush began
	 * or by the last doorbell since (RXE_COMP_EV_FLUSH), so that one
	 * that refills the ring without ringing gets no more; the bit is
	 * cleared before the ring is counted, and set after the producer
	 * index moved. A kernel QP flushes all it holds. Either way
	 * RXE_COMP_FLUSH_BATCH a call, and none past the producer index,
	 * should the process have moved it back.
	 */
	if (test_and_clear_bit(RXE_COMP_EV_FLUSH, &qp->comp.events) ||
	    !qp->is_user)
		qp->comp.flush_left = U32_MAX;
	count = rxe_queue_count(q, rxe_queue_peer_index(q));
	qp->comp.flush_left = min(qp->comp.flush_left, count);
	for (n = 0; n < RXE_COMP_FLUSH_BATCH && qp->comp.flush_left; n++) {
		/* The requester's cursors never fall behind the consumer. */
		if (q->kidx == qp->req.tail) {
			if (qp->is_user)
				rxe_post_snapshot(qp, qp->req.tail);
			qp->req.tail = rxe_sq_next(qp, qp->req.tail);
		}
		if (q->kidx == qp->req.index) {
			qp->req.index = rxe_sq_next(qp, qp->req.index);
			qp->req.offset = 0;
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
		qp->comp.flush_left--;
	}
	return qp->comp.flush_left;
}

/* Take the oldest queued response, if any; return whether there was one. */
static bool rxe_comp_take(struct rxe_qp *qp)
{
	struct sk_buff *skb = rxe_recv_dequeue(qp, &qp->rsp_q);

	if (!skb)
		return false;
	rxe_comp_rcv(qp, skb);
	rxe_net_consume(skb);
	return true;
}

/* Does the completer take responses in the QP's state? */
static bool rxe_comp_live(const struct rxe_qp *qp)
{
	enum ib_qp_state state = rxe_qp_state(qp);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

/*
 * The retry timer fired. The responses queued before it did go first: when
 * this CPU stalls, the timer and the ACK it waits for fall due together,
 * and the ACK in the queue makes the retry needless. After a stall at the
 * peer, a NAK already queued names the lost packet, where a retry would
 * send everything from comp.psn again. Only those already queued, so that
 * a peer that keeps sending cannot hold the timer off. What they did
 * decides: progress, or a retry of their own, started the timer again.
 */
static void rxe_comp_timer_fired(struct rxe_qp *qp)
{
	struct rxe_comp *comp = &qp->comp;
	u32 n = skb_queue_len(&qp->rsp_q);
	ktime_t resent_at = comp->resent_at;
	u32 psn = comp->psn;

	while (n-- && rxe_comp_live(qp)) {
		if (!rxe_comp_take(qp))
			break;
	}
	/* A QP that failed is flushed; RTS to SQD changes nothing here. */
	if (!rxe_comp_live(qp) || comp->psn != psn ||
	    comp->resent_at != resent_at)
		return;
	if (rxe_comp_outstanding(qp) && !comp->rnr_wait)
		rxe_comp_timeout(qp);
}

/**
 * rxe_comp_run() - the completer's share of the send task
 * @qp: the QP
 *
 * Handles the timers' events and one response packet (every one queued
 * when the retry timer fired), then retires what finished. In ERR (and
 * SQE) it flushes the send queue instead, RXE_COMP_FLUSH_BATCH WQEs a
 * call.
 *
 * Return: true while responses are queued or the flush has more to do.
 */
bool rxe_comp_run(struct rxe_qp *qp)
{
	enum ib_qp_state state = rxe_qp_state(qp);

	switch (state) {
	case IB_QPS_ERR:
	case IB_QPS_SQE:
		return rxe_comp_flush(qp);
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		break;
	default:
		rxe_recv_purge(qp, &qp->rsp_q);
		return false;
	}

	if (test_and_clear_bit(RXE_COMP_EV_RNR_DONE, &qp->comp.events)) {
		/* The wait was the responder's; the timeout starts after it. */
		qp->comp.rnr_wait = false;
		qp->comp.rtt_start = 0;
		rxe_req_rewind(qp, qp->comp.psn);
		rxe_comp_deadline_start(qp);
		rxe_comp_timer_restart(qp);
	}
	if (test_and_clear_bit(RXE_COMP_EV_ACK_TIMEOUT, &qp->comp.events))
		rxe_comp_timer_fired(qp);

	rxe_comp_take(qp);
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
