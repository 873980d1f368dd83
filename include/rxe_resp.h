/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The responder: request packets to receive completions, and the ACKs,
 * NAKs, READ responses and atomic ACKs that answer them.
 */
#ifndef RXE_RESP_H
#define RXE_RESP_H

#include "rxe_verbs.h"

/*
 * Packets asking for an ACK that one ACK may answer while more requests
 * arrive; the requester asks every few packets, so each must be answered
 * soon.
 */
#define RXE_MAX_ACK_COALESCE	2

/*
 * An RC responder keeps the request packets that arrive past a gap, up to
 * this many PSNs past the one it awaits, and executes them once the gap
 * fills (rxe_resp_hold()). Our requester never has more unacknowledged
 * (RXE_CWND_MAX), so none of its packets falls outside.
 */
#define RXE_HOLD_PSNS		256

/*
 * Packets all the QPs of a device may keep at once: a peer that opens
 * gaps on every QP ties up this much memory and no more.
 */
#define RXE_HOLD_DEV_MAX	8192

/*
 * How long a kept packet waits for its gap to fill. A requester sends the
 * missing packet within a round trip of the NAK; one that has not after
 * this long went back to it on its retry timer (10 ms at least, doubling)
 * and sends what was kept again, so nothing kept longer is of use. Nor
 * does a packet forged ahead of an idle connection lie in wait for the
 * real one to fill the gap before it.
 */
#define RXE_HOLD_MAX_AGE_MS	100

/* Bits of rxe_qp.ack_flags. */
enum {
	RXE_ACK_LISTED,	/* on a CPU's list of QPs owing an ACK */
	RXE_ACK_NOW,	/* the receive round ended: send what is owed */
};

/* rxe_resp.c APIs: */
void rxe_resp_module_init(void);
void rxe_resp_module_exit(void);
int rxe_resp_init(struct rxe_qp *qp);
void rxe_resp_cleanup(struct rxe_qp *qp);
void rxe_resp_reset(struct rxe_qp *qp);
void rxe_resp_start(struct rxe_qp *qp);
bool rxe_resp_run(struct rxe_qp *qp);

#endif /* RXE_RESP_H */
