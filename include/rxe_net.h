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

/*
 * Alignment of struct rxe_net_tx, whose address an skb's destructor_arg
 * carries with a packet count below it: above RXE_NET_BATCH_PKTS.
 */
#define RXE_NET_TX_ALIGN	32

/**
 * struct rxe_net_tx - a QP's share of the network stack
 * @ref: one for the QP until it is destroyed, one for each skb in the stack
 * @inflight: the QP's packets the stack still holds
 * @entry: the QP to wake when @inflight falls to RXE_INFLIGHT_SKBS_LOW,
 *	NULL once the QP is being destroyed; RCU, as the skb destructor
 *	reads it, and takes a reference on the QP through it
 * @rcu: the last reference frees it after a grace period
 *
 * A netdev frees a sent skb when it likes: at the next transmission, on a
 * TX interrupt, or, when its queue is stuck, never. So skbs do not pin
 * their QP: destroying a QP waits for none of them. They pin this and,
 * once the QP is gone, the module (their destructor is our code).
 */
struct rxe_net_tx {
	refcount_t ref;
	atomic_t inflight;
	struct rxe_qp_entry __rcu *entry;
	struct rcu_head rcu;
} __aligned(RXE_NET_TX_ALIGN);

/* Head room behind the headers for a lent payload's pad and ICRC. */
#define RXE_NET_TRAILER_ROOM	8

/*
 * Payloads from this size on are lent to the packet, not copied. A small
 * copy is short, while each lent page costs a reference taken and dropped
 * and one more piece for the netdev's driver to map.
 */
#define RXE_NET_LEND_MIN	256

/* Packets a batch holds at most, and its bytes: one IP datagram's. */
#define RXE_NET_BATCH_PKTS	16
#define RXE_NET_BATCH_BYTES	U16_MAX

/**
 * struct rxe_net_batch - packets held to go through the stack together
 * @head: the first packet; the others hang on its frag_list
 * @tail: the last of those, NULL while there is only @head
 * @dst: @head's route; only packets on it join
 * @npkts: packets held
 * @seg_len: @head's UDP payload, the GSO segment size
 *
 * Lives on the stack of one step of a QP's task (the requester's packets,
 * or the responder's READ responses): filled by rxe_net_send() and emptied
 * by rxe_net_flush() before the step returns.
 */
struct rxe_net_batch {
	struct sk_buff *head;
	struct sk_buff *tail;
	struct dst_entry *dst;
	unsigned int npkts;
	unsigned int seg_len;
};

/* rxe_net.c APIs: */
int rxe_net_module_init(void);
void rxe_net_module_exit(void);
struct sk_buff *rxe_net_alloc_skb(const struct rxe_dev *rxe,
				  unsigned int bth_len);
struct sk_buff *rxe_net_alloc_skb_lend(const struct rxe_dev *rxe,
				       unsigned int hdr_len);
bool rxe_net_add_trailer(struct sk_buff *skb, unsigned int pad);
void rxe_net_consume(struct sk_buff *skb);
int rxe_net_send(struct rxe_qp *qp, const struct rxe_path *path, u16 sport,
		 struct sk_buff *skb, struct rxe_net_batch *batch);
void rxe_net_flush(struct rxe_qp *qp, struct rxe_net_batch *batch);
int rxe_net_qp_init(struct rxe_qp *qp);
void rxe_net_qp_detach(struct rxe_qp *qp);
void rxe_net_qp_cleanup(struct rxe_qp *qp);
u32 rxe_net_qp_inflight(const struct rxe_qp *qp);
void rxe_net_qp_reroute(struct rxe_qp *qp);

/**
 * rxe_net_may_lend() - whether a payload should be lent, not copied
 * @rxe: the sending device
 * @paylen: the payload's bytes
 *
 * Return: true for a payload of RXE_NET_LEND_MIN or more on a netdev that
 * takes page fragments (NETIF_F_SG).
 */
static inline bool rxe_net_may_lend(const struct rxe_dev *rxe, u32 paylen)
{
	return paylen >= RXE_NET_LEND_MIN &&
	       (READ_ONCE(rxe->ndev->features) & NETIF_F_SG);
}

/**
 * rxe_net_tx_busy() - whether a QP should hold its packets for a while
 * @qp: the QP
 *
 * Return: true when it has RXE_INFLIGHT_SKBS_HIGH skbs in the stack; the
 * skb destructor runs its tasks again once they drain below the low mark.
 */
static inline bool rxe_net_tx_busy(const struct rxe_qp *qp)
{
	return atomic_read(&qp->tx->inflight) >= RXE_INFLIGHT_SKBS_HIGH;
}

/**
 * rxe_net_xmit() - send a packet at once
 * @qp: the sending QP
 * @path: where to
 * @sport: UDP source port
 * @skb: the packet, consumed
 *
 * Return: as rxe_net_send().
 */
static inline int rxe_net_xmit(struct rxe_qp *qp, const struct rxe_path *path,
			       u16 sport, struct sk_buff *skb)
{
	return rxe_net_send(qp, path, sport, skb, NULL);
}

#endif /* RXE_NET_H */
