// SPDX-License-Identifier: GPL-2.0
/*
 * Receive demultiplexing. A packet whose headers passed the checks at the
 * door (rxe_net.c) is matched to its QP here: the QP must exist, carry the
 * packet's transport, hold the packet's P_Key and, for datagrams, its
 * Q_Key, be in a state that takes packets and, when connected, be the
 * QP the packet's addresses and ingress netdev say it is for. Requests
 * then queue for the QP's responder, responses for its completer. A
 * datagram for the multicast QPN goes to every QP attached to the group it
 * was sent to (rxe_mcast.c), each QP checked as above, all but the last
 * taking a clone.
 *
 * The lookup takes a reference on the QP (struct rxe_qp_entry), held
 * until the packet is queued. QP destroy drains the references before it
 * purges the queues, so a queued packet never outlives its QP and needs
 * no reference of its own.
 */

#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_mad.h>

#include "rxe_recv.h"
#include "rxe_mcast.h"
#include "rxe_qp.h"
#include "rxe_pkt.h"
#include "rxe_counters.h"
#include "rxe_trace.h"

static void rxe_recv_drop(struct rxe_dev *rxe, struct sk_buff *skb,
			  enum rxe_counter reason)
{
	rxe_counter_inc(rxe, reason);
	trace_rxe_pkt_drop(rxe, skb, reason);
	kfree_skb(skb);
}

/* Does the opcode's transport match the QP's? */
static bool rxe_recv_transport_ok(const struct rxe_qp *qp, u8 opcode)
{
	switch (rxe_opcode_transport(opcode)) {
	case IB_OPCODE_RC:
		return rxe_qp_type(qp) == IB_QPT_RC;
	case IB_OPCODE_UC:
		return rxe_qp_type(qp) == IB_QPT_UC;
	case IB_OPCODE_UD:
		return rxe_qp_is_ud(qp);
	default:
		return false;
	}
}

/*
 * IBA 10.9.3: a P_Key matches ours when the low 15 bits are equal and not
 * both are limited members; ours is the default full-member key.
 */
static bool rxe_recv_pkey_ok(u16 pkey)
{
	return (pkey & 0x7fff) == (RXE_DEFAULT_PKEY & 0x7fff);
}

/* IBA 10.2.5: the Q_Key of a datagram must be the QP's (GSI: the well-known). */
static bool rxe_recv_qkey_ok(const struct rxe_qp *qp, struct sk_buff *skb)
{
	const struct rxe_deth *deth = rxe_pkt_hdr(skb, RXE_DETH);
	u32 want = rxe_qp_type(qp) == IB_QPT_GSI ? IB_QP1_QKEY : qp->attr.qkey;

	return deth_qkey(deth) == want;
}

/* Does the QP take requests (responses) in its state? IBA 10.3.1. */
static bool rxe_recv_state_ok(const struct rxe_qp *qp, bool request)
{
	switch (rxe_qp_state(qp)) {
	case IB_QPS_RTR:
		return request;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return true;
	default:
		return false;
	}
}

/*
 * A connected QP takes packets from its peer only: sent from the address
 * its path sends to, to the address it sends from (RoCEv2's GIDs are the
 * IP addresses; the path keeps an IPv4 one v4-mapped), in through the
 * netdev its path sends through (the source GID's: the bound netdev, or a
 * VLAN, bridge, bond or macvlan above it). Without this, any host that
 * guessed a QPN and a PSN in the window could put requests or forged ACKs
 * into a connection without even forging the peer's address; and, as
 * Linux takes a packet to any of its addresses on any of its netdevs, an
 * untagged frame could reach a connection its path keeps on a VLAN. A
 * packet a QP of this host looped back to it (rxe_net_loopback()) crossed
 * no netdev and is exempt from the netdev test: the one it names is the
 * first with its destination address, and an IPv6 link-local address is
 * on a VLAN and on the netdev under it alike.
 *
 * Called only in a state past INIT, whose transition published the path
 * (the acquire in rxe_qp_state()). The path changes again only from SQD
 * to SQD, with no lock taken here: a packet racing such a change may be
 * dropped, and is then sent again as if lost, or taken on a mix of the
 * old and the new addresses.
 */
static bool rxe_recv_addr_ok(const struct rxe_qp *qp,
			     const struct sk_buff *skb)
{
	const struct rxe_path *path = &qp->path;
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	if (skb->pkt_type != PACKET_LOOPBACK &&
	    skb->dev->ifindex != path->ifindex)
		return false;
	if (ip_hdr(skb)->version == 4) {
		iph = ip_hdr(skb);
		return path->network_type == RDMA_NETWORK_IPV4 &&
		       iph->saddr == path->daddr.s6_addr32[3] &&
		       iph->daddr == path->saddr.s6_addr32[3];
	}
	ip6h = ipv6_hdr(skb);
	return path->network_type == RDMA_NETWORK_IPV6 &&
	       ipv6_addr_equal(&ip6h->saddr, &path->daddr) &&
	       ipv6_addr_equal(&ip6h->daddr, &path->saddr);
}

/*
 * The checks of a packet against the QP it is for: true when the QP takes
 * it, else false with the counter of the drop in *@why.
 */
static bool rxe_recv_qp_ok(const struct rxe_qp *qp, struct sk_buff *skb,
			   bool request, enum rxe_counter *why)
{
	const struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	const struct rxe_bth *bth = (const struct rxe_bth *)skb->data;

	if (!rxe_recv_transport_ok(qp, pkt->opcode))
		*why = RXE_CNT_DROP_OPCODE;
	else if (!rxe_recv_pkey_ok(bth_pkey(bth)))
		*why = RXE_CNT_DROP_PKEY;
	else if ((pkt->mask & RXE_DETH_MASK) && !rxe_recv_qkey_ok(qp, skb))
		*why = RXE_CNT_DROP_QKEY;
	else if (!rxe_recv_state_ok(qp, request))
		*why = RXE_CNT_DROP_QP_STATE;
	else if (!rxe_qp_is_ud(qp) && !rxe_recv_addr_ok(qp, skb))
		*why = RXE_CNT_DROP_ADDR;
	else
		return true;
	return false;
}

/*
 * Queue a packet the QP takes for its responder or completer, within the
 * QP's budget and, for a user QP, the device's. Each packet queued is
 * counted in rxe->queued_pkts until rxe_recv_dequeue() or rxe_recv_purge()
 * takes it. A kernel QP's packets count, but are never refused for the
 * device's sake: QPs that a process stalled must not starve ib_cm's QP1
 * or NVMe-oF's and NFS's QPs, as the object caps keep a share for them.
 */
static void rxe_recv_enqueue(struct rxe_dev *rxe, struct rxe_qp *qp,
			     struct sk_buff *skb, bool request)
{
	struct sk_buff_head *q = request ? &qp->req_q : &qp->rsp_q;

	if (skb_queue_len(q) >= RXE_RECV_QUEUE_MAX)
		goto drop;
	if (atomic_inc_return(&rxe->queued_pkts) > RXE_RECV_DEV_MAX &&
	    qp->is_user) {
		atomic_dec(&rxe->queued_pkts);
		goto drop;
	}
	rxe_skb_pkt(skb)->qp = qp;
	skb_queue_tail(q, skb);
	rxe_task_run(request ? &qp->recv_task : &qp->send_task);
	return;

drop:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_NOMEM);
}

/**
 * rxe_recv_dequeue() - take the next packet queued for a task of the QP
 * @qp: the QP
 * @q: its request or response queue
 *
 * Return: the packet, no longer counted against the device's budget, or
 * NULL.
 */
struct sk_buff *rxe_recv_dequeue(struct rxe_qp *qp, struct sk_buff_head *q)
{
	struct sk_buff *skb = skb_dequeue(q);

	if (skb)
		atomic_dec(&rxe_qp_dev(qp)->queued_pkts);
	return skb;
}

/**
 * rxe_recv_purge() - drop the packets queued for a task of the QP
 * @qp: the QP
 * @q: its request or response queue
 *
 * Takes the queue as it is in one go, so that packets that keep arriving
 * meanwhile do not keep the caller here.
 */
void rxe_recv_purge(struct rxe_qp *qp, struct sk_buff_head *q)
{
	struct sk_buff_head list;
	unsigned long flags;

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&q->lock, flags);
	skb_queue_splice_init(q, &list);
	spin_unlock_irqrestore(&q->lock, flags);
	atomic_sub(skb_queue_len(&list), &rxe_qp_dev(qp)->queued_pkts);
	__skb_queue_purge(&list);
}

/*
 * A datagram for the multicast QPN: every QP attached to the group it was
 * sent to takes it, if the QP's own checks pass. The last QP to take it
 * takes @skb itself, each one before a clone (the payload is shared, and
 * only read). A QP no clone could be made for misses the datagram, counted
 * under drop_nomem; a datagram no QP takes is dropped and counted once.
 */
static void rxe_recv_mcast(struct rxe_dev *rxe, struct sk_buff *skb)
{
	enum rxe_counter why = RXE_CNT_DROP_QPN;
	struct rxe_qp *qp, *taker = NULL;
	const struct rxe_mcg *mcg;
	struct sk_buff *copy;
	u32 qpn;
	int i;

	mcg = rxe_mcast_lookup_rcu(rxe, skb);
	for (i = 0; mcg && i < RXE_MCG_QPS; i++) {
		qpn = READ_ONCE(mcg->qpn[i]);
		qp = qpn ? rxe_qp_get(rxe, qpn) : NULL;
		if (!qp)
			continue;
		if (!rxe_recv_qp_ok(qp, skb, true, &why)) {
			rxe_qp_put(qp);
			continue;
		}
		if (taker) {
			copy = skb_clone(skb, GFP_ATOMIC);
			if (copy) {
				rxe_recv_enqueue(rxe, taker, copy, true);
			} else {
				rxe_counter_inc(rxe, RXE_CNT_DROP_NOMEM);
				trace_rxe_pkt_drop(rxe, skb, RXE_CNT_DROP_NOMEM);
			}
			rxe_qp_put(taker);
		}
		taker = qp;
	}
	if (taker) {
		rxe_recv_enqueue(rxe, taker, skb, true);
		rxe_qp_put(taker);
	} else {
		rxe_recv_drop(rxe, skb, why);
	}
}

/**
 * rxe_recv_dispatch() - deliver a checked packet to its QP
 * @rxe: the receiving device
 * @skb: the packet, parsed into its struct rxe_pkt
 *
 * Context: softirq or bottom halves disabled, under rcu_read_lock();
 * consumes @skb.
 */
void rxe_recv_dispatch(struct rxe_dev *rxe, struct sk_buff *skb)
{
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	const struct rxe_bth *bth = (const struct rxe_bth *)skb->data;
	bool request = pkt->mask & RXE_REQ_MASK;
	enum rxe_counter why;
	struct rxe_qp *qp;

	if (unlikely(pkt->mask & RXE_CNP_MASK)) {
		/* Congestion notification: no rate control here to slow down. */
		rxe_recv_drop(rxe, skb, RXE_CNT_RCVD_CNP);
		return;
	}
	if (unlikely(bth_qpn(bth) == IB_MULTICAST_QPN)) {
		rxe_recv_mcast(rxe, skb);
		return;
	}
	/* A datagram to a group is for the multicast QPN only. */
	if (unlikely(rxe_mcast_addr(skb))) {
		rxe_recv_drop(rxe, skb, RXE_CNT_DROP_ADDR);
		return;
	}

	qp = rxe_qp_get(rxe, bth_qpn(bth));
	if (!qp) {
		rxe_recv_drop(rxe, skb, RXE_CNT_DROP_QPN);
		return;
	}
	if (rxe_recv_qp_ok(qp, skb, request, &why))
		rxe_recv_enqueue(rxe, qp, skb, request);
	else
		rxe_recv_drop(rxe, skb, why);
	rxe_qp_put(qp);
}
