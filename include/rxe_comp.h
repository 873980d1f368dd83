/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The completer: acknowledgements and responses to send completions,
 * the retry and RNR timers, and the flush of the send queue.
 */
#ifndef RXE_COMP_H
#define RXE_COMP_H

#include "rxe_verbs.h"

/* IBA 9.7.5.2.8: an RNR retry count of 7 never runs out. */
#define RXE_RNR_RETRY_INFINITE	7

/*
 * The requester's window of unacknowledged PSNs (RC): it starts at the
 * most, and a loss shrinks it (by half, or by an eighth: below) down to
 * the least. The least is what keeps a randomly lossy link busy: at 8,
 * 1% loss held the window so small that the requester waited for ACKs
 * half the time, and asked for one every few packets; 32 moved 43% more
 * at 1% loss and 12% more at 5%, while 64 resent too much at 5%
 * (docs/performance.md). The QPs sending on one device share that least,
 * each keeping at least RXE_CWND_LEAST: eight QPs at 32 each kept 256
 * packets in flight on a wire that one QP at 32 does not overrun; at 8
 * each they lost 40% fewer packets. They share the most as well
 * (rxe_comp_window()): eight QPs whose windows all started at 256 lost
 * twice the packets that they lose sharing 256.
 */
#define RXE_CWND_MAX		256
#define RXE_CWND_MIN		32
#define RXE_CWND_LEAST		8

/*
 * A QP stops sharing the window while its peer does not answer: in an RNR
 * wait, or after this many retries in a row with no answer (1.3 s from
 * the first at the least, the retry timer doubling from 20 ms). A process
 * could otherwise keep QPs retrying towards nowhere (an infinite timeout
 * or RNR retry) and cut every other QP of the device down to
 * RXE_CWND_LEAST. It shares again at the peer's next answer. A QP on a
 * lossy link that only loses its retries now and then, as go-back-N
 * does, stays: its answers come within a few retries, and a QP that
 * left would take a larger share than it is due while it resends.
 */
#define RXE_BUSY_BACKOFFS	6

/*
 * A QP sending alone keeps all but 1 / (1 << RXE_CWND_KEEP_SHIFT) of its
 * window when a sequence NAK reports a loss, where others halve it: on a
 * path whose round trip jumps with the scheduling of the hosts under it,
 * the queue a large window keeps is what carries the sender through a
 * jump, and a random loss says nothing about that queue. Several QPs
 * share a device's buffers, and their losses are more often its
 * overflow: they halve, as a gap in READ responses does (a burst that
 * overran a buffer; rxe_comp_decrease()).
 */
#define RXE_CWND_KEEP_SHIFT	3

/*
 * The early retry timer waits the smoothed round trip plus four times its
 * deviation (RFC 6298), at least RXE_RTO_MIN_NS, and RXE_RTO_INIT_NS
 * before the first sample; each early retry without progress doubles it.
 * The QP's own timeout still bounds it and is what counts retries.
 */
#define RXE_RTO_MIN_NS		(10 * NSEC_PER_MSEC)
#define RXE_RTO_INIT_NS		(20 * NSEC_PER_MSEC)
#define RXE_RTO_MAX_NS		(2 * NSEC_PER_SEC)

/*
 * Responses past a gap before it counts as a loss rather than packets
 * overtaking each other on the way (READ responses; a NAK or an ACK past
 * a READ is taken at once).
 */
#define RXE_REORDER_PKTS	3

/*
 * A packet sent again alone (rxe_req_resend_alone()) that is lost as well
 * draws no second NAK: the responder NAKs a gap once, and keeps what comes
 * after it. Waiting RXE_RTO_MIN_NS for it would stall the QP for tens of
 * round trips, and sending one packet again costs next to nothing, so the
 * timer waits two smoothed round trips then, at least this long.
 */
#define RXE_ALONE_RTO_MIN_NS	(1 * NSEC_PER_MSEC)

/*
 * After going back, the old packets still in flight arrive for about a
 * round trip, and a gap or a second NAK for the same PSN in that time says
 * nothing new. Before the first round-trip sample the window is this.
 */
#define RXE_RESEND_QUIET_NS	(2 * NSEC_PER_MSEC)

/*
 * Send WQEs one call of the flush retires at most. Each is a copy from
 * the user's ring and a CQE, and a send task call runs with bottom
 * halves off, up to RXE_TASK_BUDGET calls in a row: a whole ring of
 * 32767 WQEs in one call, and a process that refills the ring and rings
 * the doorbell for every call, kept them off for 2 s at a time (test 15).
 */
#define RXE_COMP_FLUSH_BATCH	64

/*
 * Bits of struct rxe_comp.events: the timers', and FLUSH, which the move
 * to ERR or SQE and each doorbell of a user QP set so that the flush
 * counts the ring afresh (rxe_comp_flush()).
 */
#define RXE_COMP_EV_ACK_TIMEOUT	0
#define RXE_COMP_EV_RNR_DONE	1
#define RXE_COMP_EV_FLUSH	2

/* rxe_comp.c APIs: */
void rxe_comp_init(struct rxe_qp *qp);
void rxe_comp_reset(struct rxe_qp *qp);
void rxe_comp_start(struct rxe_qp *qp);
void rxe_comp_stop(struct rxe_qp *qp);
void rxe_comp_sent(struct rxe_qp *qp, u32 psn, bool timed);
u32 rxe_comp_window(const struct rxe_qp *qp);
bool rxe_comp_run(struct rxe_qp *qp);
u64 rxe_comp_rnr_timeout_ns(u8 code);
u64 rxe_comp_ack_timeout_ns(u8 timeout);
bool rxe_comp_selftest(void);
void rxe_comp_forget_kept(struct rxe_qp *qp);
void rxe_comp_resending(struct rxe_qp *qp, u32 psn);
struct rxe_swqe *rxe_comp_wqe_at(struct rxe_qp *qp, u32 psn);

/**
 * rxe_comp_kept() - was the READ response at a PSN kept past a gap?
 * @qp: an RC QP
 * @psn: a PSN from comp.psn up to comp.kept_top
 *
 * Return: true when its payload is in place and it waits to be taken.
 */
static inline bool rxe_comp_kept(const struct rxe_qp *qp, u32 psn)
{
	return qp->comp.nkept &&
	       test_bit(psn % RXE_KEPT_PSNS, qp->comp.kept);
}

#endif /* RXE_COMP_H */
