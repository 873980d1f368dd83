/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The requester: send work requests to request packets.
 */
#ifndef RXE_REQ_H
#define RXE_REQ_H

#include "rxe_verbs.h"

/* A request asks for an ACK at least this often. */
#define RXE_ACK_REQ_EVERY	32

/*
 * Responses one READ request asks for, at least: a long READ is sent as
 * several READ requests, each sent when the window has room, so that its
 * responses are paced by the window like every other packet (a 1 MiB READ
 * would otherwise come back as 256 packets of 4 KiB in one burst).
 */
#define RXE_READ_CHUNK_MIN	32

/* rxe_req.c APIs: */
void rxe_req_reset(struct rxe_qp *qp);
void rxe_req_start(struct rxe_qp *qp);
bool rxe_req_run(struct rxe_qp *qp);
void rxe_req_rewind(struct rxe_qp *qp, u32 psn);
void rxe_req_forward(struct rxe_qp *qp, u32 psn);
bool rxe_req_tail_unasked(const struct rxe_qp *qp);
void rxe_req_solicit(struct rxe_qp *qp);
void rxe_req_resend_alone(struct rxe_qp *qp, u32 psn);
void rxe_req_refetch(struct rxe_qp *qp, u32 psn, u32 end);
bool rxe_req_sq_draining(const struct rxe_qp *qp);
void rxe_req_sqd_begin(struct rxe_qp *qp);
u32 rxe_req_npkts(const struct rxe_qp *qp, const struct rxe_swqe *wqe);
bool rxe_req_read_chunk_end(const struct rxe_swqe *wqe, u32 psn);

/**
 * rxe_sq_wqe() - the kernel copy of a send work request
 * @qp: the QP
 * @index: its SQ index; masked here
 *
 * Return: the struct rxe_swqe.
 */
static inline struct rxe_swqe *rxe_sq_wqe(const struct rxe_qp *qp, u32 index)
{
	return qp->sq.shadow +
	       (size_t)(index & qp->sq.queue.index_mask) * qp->sq.swqe_size;
}

/**
 * rxe_sq_next() - the SQ index after another
 * @qp: the QP
 * @index: an SQ index
 *
 * Return: the following index, wrapped.
 */
static inline u32 rxe_sq_next(const struct rxe_qp *qp, u32 index)
{
	return (index + 1) & qp->sq.queue.index_mask;
}

#endif /* RXE_REQ_H */
