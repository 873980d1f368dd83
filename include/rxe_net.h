/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wire: the RoCEv2 UDP sockets, packet allocation and transmission,
 * and the receive entry point with its header checks.
 */
#ifndef RXE_NET_H
#define RXE_NET_H

#include <linux/skbuff.h>

#include "rxe_verbs.h"

/* Our skbs a QP may have in the network stack before it waits. */
#define RXE_INFLIGHT_SKBS_HIGH	64
#define RXE_INFLIGHT_SKBS_LOW	16

/* rxe_net.c APIs: */
int rxe_net_module_init(void);
void rxe_net_module_exit(void);
struct sk_buff *rxe_net_alloc_skb(const struct rxe_dev *rxe,
				  unsigned int bth_len);
int rxe_net_xmit(struct rxe_qp *qp, const struct rxe_path *path, u16 sport,
		 struct sk_buff *skb);
int rxe_net_qp_init(struct rxe_qp *qp);
void rxe_net_qp_cleanup(struct rxe_qp *qp);
void rxe_net_qp_reroute(struct rxe_qp *qp);

/**
 * rxe_net_tx_busy() - whether a QP should hold its packets for a while
 * @qp: the QP
 *
 * Return: true when it has RXE_INFLIGHT_SKBS_HIGH skbs in the stack; the
 * skb destructor runs its tasks again once they drain below the low mark.
 */
static inline bool rxe_net_tx_busy(const struct rxe_qp *qp)
{
	return atomic_read(&qp->skb_inflight) >= RXE_INFLIGHT_SKBS_HIGH;
}

#endif /* RXE_NET_H */
