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
