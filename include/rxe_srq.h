/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared receive queues.
 */
#ifndef RXE_SRQ_H
#define RXE_SRQ_H

#include "rxe_verbs.h"

/* rxe_srq.c APIs: */
int rxe_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int rxe_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rxe_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rxe_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata);
size_t rxe_recv_wqe_size(u32 max_sge);

#endif /* RXE_SRQ_H */
