/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the receive path learns of a packet once, at the door, and keeps
 * in the skb's control block for the responder and the completer.
 */
#ifndef RXE_PKT_H
#define RXE_PKT_H

#include <linux/skbuff.h>

#include "rxe_opcode.h"

struct rxe_qp;

/**
 * struct rxe_pkt - a received packet, parsed and checked
 * @qp: the destination QP; valid while the packet sits in one of the
 *	QP's queues, which destroy purges before it drains the QP
 * @psn: BTH PSN
 * @mask: the opcode's RXE_*_MASK bits
 * @paylen: payload bytes, pad excluded
 * @opcode: BTH opcode
 * @hdrlen: bytes of BTH and extension headers; the payload starts here
 * @vlan_id: the ID of the VLAN device the packet came in through, or
 *	RXE_PKT_NO_VLAN; noted on arrival, while the device is sure to exist
 * @held_at: jiffies when the responder kept it past a gap (rxe_resp_hold())
 *
 * The skb's data starts at the BTH and every header is linear; the
 * payload may sit in page fragments. The IP header stays reachable
 * through skb_network_header() for the GRH of UD receives.
 */
struct rxe_pkt {
	struct rxe_qp *qp;
	u32 psn;
	u32 mask;
	u32 paylen;
	u8 opcode;
	u8 hdrlen;
	u16 vlan_id;
	unsigned long held_at;
};

#define RXE_PKT_NO_VLAN		0xffff

/**
 * rxe_skb_pkt() - the parsed packet of an skb
 * @skb: a packet the receive path accepted
 *
 * Return: its struct rxe_pkt, in the control block.
 */
static inline struct rxe_pkt *rxe_skb_pkt(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct rxe_pkt) > sizeof(skb->cb));
	return (struct rxe_pkt *)skb->cb;
}

/**
 * rxe_pkt_hdr() - one extension header of a packet
 * @skb: the packet
 * @type: the header, which its opcode carries
 *
 * Return: the header, in the linear area.
 */
static inline void *rxe_pkt_hdr(struct sk_buff *skb, enum rxe_hdr_type type)
{
	return skb->data + rxe_opcode[rxe_skb_pkt(skb)->opcode].offset[type];
}

#endif /* RXE_PKT_H */
