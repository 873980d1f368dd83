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

/* rxe_recv.c APIs: */
void rxe_recv_dispatch(struct rxe_dev *rxe, struct sk_buff *skb);

#endif /* RXE_RECV_H */
