/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multicast groups: UD QPs attached to a multicast GID, and the device's
 * membership of the IP group that GID names.
 */
#ifndef RXE_MCAST_H
#define RXE_MCAST_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/inetdevice.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "rxe_verbs.h"

/* Groups per device, and QPs per group (max_mcast_grp, ..._qp_attach). */
#define RXE_MAX_MCG		128
#define RXE_MCG_QPS		32

/**
 * struct rxe_mcg - a multicast group with at least one QP attached
 * @node: in rxe_dev.mcg_list
 * @rcu: frees the group after the readers that may still see it
 * @mgid: the multicast GID: an IPv6 multicast address, or an IPv4 one
 *	v4-mapped
 * @in_dev: for an IPv4 group, the netdev's IPv4 state it joined the group
 *	on, held until it leaves
 * @in6_dev: for an IPv6 group, the netdev's IPv6 state, held likewise
 * @nqps: QPs attached, under rxe_dev.mcg_mutex
 * @qpn: their QPNs, 0 in a free slot. Written in place with WRITE_ONCE()
 *	under rxe_dev.mcg_mutex, read with READ_ONCE() under RCU: a reader
 *	sees each slot either before or after a change, and a QPN is in
 *	one slot at most
 */
struct rxe_mcg {
	struct list_head node;
	struct rcu_head rcu;
	struct in6_addr mgid;
	union {
		struct in_device *in_dev;
		struct inet6_dev *in6_dev;
	};
	unsigned int nqps;
	u32 qpn[RXE_MCG_QPS];
};

/**
 * rxe_mcast_addr() - was a datagram sent to an IP multicast address?
 * @skb: a datagram whose network header is valid
 *
 * Return: true for an IPv4 or IPv6 multicast destination address.
 */
static inline bool rxe_mcast_addr(const struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		return ipv4_is_multicast(ip_hdr(skb)->daddr);
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/* rxe_mcast.c APIs: */
int rxe_mcast_attach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int rxe_mcast_detach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void rxe_mcast_qp_destroy(struct rxe_qp *qp);
const struct rxe_mcg *rxe_mcast_lookup_rcu(struct rxe_dev *rxe,
					   const struct sk_buff *skb);

#endif /* RXE_MCAST_H */
