/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queue pairs: creation, the IBTA state table, query and teardown.
 */
#ifndef RXE_QP_H
#define RXE_QP_H

#include "rxe_verbs.h"

/* rxe_qp.c APIs: */
int rxe_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata);
int rxe_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int rxe_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int rxe_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata);
struct rxe_qp *rxe_qp_get(struct rxe_dev *rxe, u32 qpn);
void rxe_qp_put(struct rxe_qp *qp);
void rxe_qp_set_error(struct rxe_qp *qp);
void rxe_qp_cq_full(struct rxe_qp *qp);
void rxe_qp_event(struct rxe_qp *qp, enum ib_event_type type);
int rxe_qp_fill_res_entry(struct sk_buff *msg, struct ib_qp *ibqp);

/**
 * rxe_qp_state() - the QP's state, read without its lock
 * @qp: the QP
 *
 * The data path acts on what it reads; a change of state always runs the
 * QP's tasks again, so they see the new state soon after.
 *
 * Return: the state.
 */
static inline enum ib_qp_state rxe_qp_state(const struct rxe_qp *qp)
{
	/* Pairs with the release in rxe_qp_apply_attr(). */
	return smp_load_acquire(&qp->attr.qp_state);
}

/**
 * rxe_qp_type() - the QP's transport
 * @qp: the QP
 *
 * Return: IB_QPT_RC, IB_QPT_UC, IB_QPT_UD or IB_QPT_GSI.
 */
static inline enum ib_qp_type rxe_qp_type(const struct rxe_qp *qp)
{
	return qp->ibqp.qp_type;
}

/**
 * rxe_qp_is_ud() - whether the QP carries datagrams
 * @qp: the QP
 *
 * Return: true for UD and GSI QPs.
 */
static inline bool rxe_qp_is_ud(const struct rxe_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

#endif /* RXE_QP_H */
