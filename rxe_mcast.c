// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast groups. A UD QP attached to a multicast GID takes the
 * datagrams sent to that group: to the IP multicast address the GID is
 * (IPv6) or v4-maps (IPv4), with the multicast QPN, 0xFFFFFF, in the BTH.
 * rxe_recv.c gives each attached QP its own clone of such a packet.
 *
 * For those datagrams to reach us at all, the netdev must take the group's
 * frames and the IP layer must deliver the group's packets to this host:
 * the first QP attached joins the device's netdev to the IP group, as a
 * socket joining it would, and the last one detached leaves it. rdma_cm
 * joins IPv4 groups for its users as well; the IP layer counts each join.
 * The group is joined on the netdev the device is bound to, not on a VLAN
 * above it. An MTU too small for IPv4 (68) or IPv6 (1280) drops that
 * family's state on the netdev, and its groups with it: the QPs stay
 * attached but take nothing more of such a group until every QP has
 * detached from it and one attaches again.
 *
 * A multicast datagram this host sends to a group it has joined comes
 * back to it too (the IP layer loops it back), so QPs attached here take
 * it, the sending QP among them when attached, as IBA allows.
 */

#include <linux/inetdevice.h>
#include <linux/igmp.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "rxe_mcast.h"
#include "rxe_qp.h"

/* The group of @mgid; the caller holds rxe->mcg_mutex. */
static struct rxe_mcg *rxe_mcast_find(struct rxe_dev *rxe,
				      const struct in6_addr *mgid)
{
	struct rxe_mcg *mcg;

	list_for_each_entry(mcg, &rxe->mcg_list, node)
		if (ipv6_addr_equal(&mcg->mgid, mgid))
			return mcg;
	return NULL;
}

/* The slot of @qpn in @mcg, or -1. */
static int rxe_mcast_slot(const struct rxe_mcg *mcg, u32 qpn)
{
	int i;

	for (i = 0; i < RXE_MCG_QPS; i++)
		if (mcg->qpn[i] == qpn)
			return i;
	return -1;
}

/* Join the group's IP group on the device's netdev; RTNL held. */
static int rxe_mcast_join(struct rxe_dev *rxe, struct rxe_mcg *mcg)
{
	int err;

	if (ipv6_addr_v4mapped(&mcg->mgid)) {
		mcg->in_dev = __in_dev_get_rtnl(rxe->ndev);
		if (!mcg->in_dev)
			return -ENODEV;
		in_dev_hold(mcg->in_dev);
		ip_mc_inc_group(mcg->in_dev, mcg->mgid.s6_addr32[3]);
		return 0;
	}
	mcg->in6_dev = in6_dev_get(rxe->ndev);
	if (!mcg->in6_dev)
		return -ENODEV;
	err = ipv6_dev_mc_inc(rxe->ndev, &mcg->mgid);
	if (err)
		in6_dev_put(mcg->in6_dev);
	return err;
}

/*
 * Leave it again; RTNL held. Not when the netdev's IPv4 or IPv6 state it
 * was joined on is gone: an MTU too small for the family, or the netdev's
 * unregistration, drops that state with its groups, and the group of the
 * same address in a new one is not ours to leave.
 */
static void rxe_mcast_leave(struct rxe_dev *rxe, struct rxe_mcg *mcg)
{
	if (ipv6_addr_v4mapped(&mcg->mgid)) {
		if (__in_dev_get_rtnl(rxe->ndev) == mcg->in_dev)
			ip_mc_dec_group(mcg->in_dev, mcg->mgid.s6_addr32[3]);
		in_dev_put(mcg->in_dev);
		return;
	}
	if (__in6_dev_get(rxe->ndev) == mcg->in6_dev)
		ipv6_dev_mc_dec(rxe->ndev, &mcg->mgid);
	in6_dev_put(mcg->in6_dev);
}

/* Take @qpn out of @mcg, and the group away after its last QP. */
static void rxe_mcast_remove(struct rxe_dev *rxe, struct rxe_mcg *mcg,
			     int slot, struct rxe_qp *qp)
{
	WRITE_ONCE(mcg->qpn[slot], 0);
	qp->mcast_groups--;
	if (--mcg->nqps)
		return;
	list_del_rcu(&mcg->node);
	rxe->nmcg--;
	rxe_mcast_leave(rxe, mcg);
	kfree_rcu(mcg, rcu);
}

/**
 * rxe_mcast_attach() - the attach_mcast verb
 * @ibqp: a UD QP
 * @gid: the multicast GID
 * @lid: unused: RoCE has no LIDs
 *
 * Context: process; takes RTNL, then rxe_dev.mcg_mutex.
 * Return: 0 (also when the QP was attached already), -EINVAL for a QP
 * that is not UD or a GID that is not multicast, -ENOMEM when the device
 * has RXE_MAX_MCG groups or the group RXE_MCG_QPS QPs, or the error of
 * joining the IP group.
 */
int rxe_mcast_attach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct rxe_dev *rxe = to_rxe_dev(ibqp->device);
	struct in6_addr *mgid = (struct in6_addr *)gid->raw;
	struct rxe_qp *qp = to_rxe_qp(ibqp);
	struct rxe_mcg *mcg;
	int slot, err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !rdma_is_multicast_addr(mgid))
		return -EINVAL;

	rtnl_lock();
	mutex_lock(&rxe->mcg_mutex);
	mcg = rxe_mcast_find(rxe, mgid);
	if (mcg && rxe_mcast_slot(mcg, ibqp->qp_num) >= 0)
		goto out;
	if (!mcg) {
		err = -ENOMEM;
		if (rxe->nmcg >= RXE_MAX_MCG)
			goto out;
		mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
		if (!mcg)
			goto out;
		mcg->mgid = *mgid;
		err = rxe_mcast_join(rxe, mcg);
		if (err) {
			kfree(mcg);
			goto out;
		}
		list_add_tail_rcu(&mcg->node, &rxe->mcg_list);
		rxe->nmcg++;
	}
	slot = rxe_mcast_slot(mcg, 0);
	if (slot < 0) {
		err = -ENOMEM;
		goto out;
	}
	WRITE_ONCE(mcg->qpn[slot], ibqp->qp_num);
	mcg->nqps++;
	qp->mcast_groups++;
out:
	mutex_unlock(&rxe->mcg_mutex);
	rtnl_unlock();
	return err;
}

/**
 * rxe_mcast_detach() - the detach_mcast verb
 * @ibqp: the QP
 * @gid: the multicast GID
 * @lid: unused
 *
 * Context: process; takes RTNL, then rxe_dev.mcg_mutex.
 * Return: 0, or -EINVAL when the QP is not attached to @gid.
 */
int rxe_mcast_detach(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct rxe_dev *rxe = to_rxe_dev(ibqp->device);
	const struct in6_addr *mgid = (const struct in6_addr *)gid->raw;
	struct rxe_mcg *mcg;
	int slot = -1;

	rtnl_lock();
	mutex_lock(&rxe->mcg_mutex);
	mcg = rxe_mcast_find(rxe, mgid);
	if (mcg)
		slot = rxe_mcast_slot(mcg, ibqp->qp_num);
	if (slot >= 0)
		rxe_mcast_remove(rxe, mcg, slot, to_rxe_qp(ibqp));
	mutex_unlock(&rxe->mcg_mutex);
	rtnl_unlock();
	return slot >= 0 ? 0 : -EINVAL;
}

/**
 * rxe_mcast_qp_destroy() - detach a QP being destroyed from its groups
 * @qp: the QP, still published, so that no QP reusing its number can
 *	inherit its memberships
 *
 * ib_uverbs detaches a user QP's groups before it destroys it; a kernel
 * consumer may not have.
 *
 * Context: process, RTNL not held.
 */
void rxe_mcast_qp_destroy(struct rxe_qp *qp)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct rxe_mcg *mcg, *next;
	int slot;

	if (!qp->mcast_groups)
		return;
	rtnl_lock();
	mutex_lock(&rxe->mcg_mutex);
	list_for_each_entry_safe(mcg, next, &rxe->mcg_list, node) {
		slot = rxe_mcast_slot(mcg, qp->ibqp.qp_num);
		if (slot >= 0)
			rxe_mcast_remove(rxe, mcg, slot, qp);
	}
	mutex_unlock(&rxe->mcg_mutex);
	rtnl_unlock();
}

/**
 * rxe_mcast_lookup_rcu() - the group a datagram was sent to
 * @rxe: the receiving device
 * @skb: a datagram whose network header is valid
 *
 * Context: under rcu_read_lock(); the group stays valid until it ends.
 * Return: the group of the datagram's IP destination address, or NULL
 * when it is not one of this device's groups.
 */
const struct rxe_mcg *rxe_mcast_lookup_rcu(struct rxe_dev *rxe,
					   const struct sk_buff *skb)
{
	const struct rxe_mcg *mcg;
	struct in6_addr mgid;

	if (!rxe_mcast_addr(skb))
		return NULL;
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &mgid);
	else
		mgid = ipv6_hdr(skb)->daddr;
	list_for_each_entry_rcu(mcg, &rxe->mcg_list, node)
		if (ipv6_addr_equal(&mcg->mgid, &mgid))
			return mcg;
	return NULL;
}
