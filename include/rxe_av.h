/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address vectors: the path a packet takes, from the attributes of an
 * address handle or of a connected QP.
 */
#ifndef RXE_AV_H
#define RXE_AV_H

#include "rxe_verbs.h"

/* rxe_av.c APIs: */
int rxe_av_from_attr(struct rxe_dev *rxe, const struct rdma_ah_attr *attr,
		     struct rxe_path *path);
void rxe_av_to_attr(const struct rxe_path *path, struct rdma_ah_attr *attr);
int rxe_av_lookup_ah(struct rxe_dev *rxe, u32 ah_num, const struct ib_pd *pd,
		     struct rxe_path *path);
int rxe_av_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata);
int rxe_av_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int rxe_av_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* RXE_AV_H */
