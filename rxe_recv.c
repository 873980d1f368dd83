// SPDX-License-Identifier: GPL-2.0
/*
 * Receive demultiplexing. A packet whose headers passed the checks at the
 * door (rxe_net.c) is matched to its QP here: the QP must exist, carry the
 * packet's transport, hold the packet's P_Key and, for datagrams, its
 * Q_Key, be in a state that takes packets and, when connected, be the
 * QP the packet's addresses say it is for. Requests then queue for the
 * QP's responder, responses for its completer.
 *
 * The lookup and the enqueue happen under one RCU read-side section, and
 * QP destroy waits for a grace period after unpublishing the QP before it
 * purges the queues, so a queued packet never outlives its QP and needs
 * no reference of its own.
 */

#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_mad.h>

#include "rxe_recv.h"
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
 * IP addresses; the path keeps an IPv4 one v4-mapped). Without this, any
 * host that guessed a QPN and a PSN in the window could put requests or
 * forged ACKs into a connection without even forging the peer's address.
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
	struct sk_buff_head *q;
	struct rxe_task *task;
	struct rxe_qp *qp;

	if (unlikely(pkt->mask & RXE_CNP_MASK)) {
		/* Congestion notification: no rate control here to slow down. */
		rxe_recv_drop(rxe, skb, RXE_CNT_RCVD_CNP);
		return;
	}

	qp = xa_load(&rxe->qp_xa, bth_qpn(bth));
	if (!qp)
		goto drop_qpn;
	if (!rxe_recv_transport_ok(qp, pkt->opcode))
		goto drop_opcode;
	if (!rxe_recv_pkey_ok(bth_pkey(bth)))
		goto drop_pkey;
	if ((pkt->mask & RXE_DETH_MASK) && !rxe_recv_qkey_ok(qp, skb))
		goto drop_qkey;
	if (!rxe_recv_state_ok(qp, request))
		goto drop_state;
	if (!rxe_qp_is_ud(qp) && !rxe_recv_addr_ok(qp, skb))
		goto drop_addr;

	pkt->qp = qp;
	q = request ? &qp->req_q : &qp->rsp_q;
	task = request ? &qp->recv_task : &qp->send_task;
	if (skb_queue_len(q) >= RXE_RECV_QUEUE_MAX)
		goto drop_nomem;
	skb_queue_tail(q, skb);
	rxe_task_run(task);
	return;

drop_qpn:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_QPN);
	return;
drop_opcode:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_OPCODE);
	return;
drop_pkey:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_PKEY);
	return;
drop_qkey:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_QKEY);
	return;
drop_state:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_QP_STATE);
	return;
drop_addr:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_ADDR);
	return;
drop_nomem:
	rxe_recv_drop(rxe, skb, RXE_CNT_DROP_NOMEM);
}
