/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receive demultiplexing: a checked packet to its QP's responder or
 * completer.
 */
#ifndef RXE_RECV_H
#define RXE_RECV_H

#include <linux/skbuff.h>

#include "rxe_verbs.h"

/* Packets a QP queues for one of its tasks before it drops more. */
#define RXE_RECV_QUEUE_MAX	4096

/*
 * Packets all the QPs of a device queue, at most, as far as user QPs may
 * add to them: a responder that cannot send (its READ responses wait for
 * the netdev) stops taking requests, and a peer that keeps sending to many
 * such QPs would otherwise pin RXE_RECV_QUEUE_MAX skbs on each of their
 * queues, memory charged to nobody. Kernel QPs are not refused for it
 * (rxe_recv_enqueue()).
 */
#define RXE_RECV_DEV_MAX	32768

/* rxe_recv.c APIs: */
void rxe_recv_dispatch(struct rxe_dev *rxe, struct sk_buff *skb);
struct sk_buff *rxe_recv_dequeue(struct rxe_qp *qp, struct sk_buff_head *q);
void rxe_recv_purge(struct rxe_qp *qp, struct sk_buff_head *q);

#endif /* RXE_RECV_H */
