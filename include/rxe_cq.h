/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Completion queues.
 */
#ifndef RXE_CQ_H
#define RXE_CQ_H

#include "rxe_verbs.h"

/* rxe_cq.c APIs: */
int rxe_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata);
int rxe_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata);
int rxe_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int rxe_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int rxe_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int rxe_cq_post(struct rxe_cq *cq, const struct ib_wc *wc, bool solicited);

#endif /* RXE_CQ_H */
