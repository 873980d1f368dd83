/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Posting work requests: kernel consumers' ib_post_*() calls, the user
 * doorbell, and the snapshot of user send work requests.
 */
#ifndef RXE_POST_H
#define RXE_POST_H

#include "rxe_verbs.h"

/* rxe_post.c APIs: */
int rxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int rxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
int rxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
void rxe_post_snapshot(struct rxe_qp *qp, u32 index);

#endif /* RXE_POST_H */
