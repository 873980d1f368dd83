// SPDX-License-Identifier: GPL-2.0
/*
 * Address vectors and address handles.
 *
 * Only RoCEv2 paths exist here: every path has a GRH whose source GID is a
 * RoCEv2 GID of the port, which gives the source IP address and the netdev
 * (the device's own, or a VLAN on it). The destination GID is the
 * destination IP address, v4-mapped for IPv4.
 */

#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "rxe_av.h"

/**
 * rxe_av_from_attr() - check AH attributes and turn them into a path
 * @rxe: the device
 * @attr: the attributes, with the source GID attribute ib_core resolved
 * @path: filled in
 *
 * Return: 0, or -EINVAL for attributes that name no RoCEv2 path.
 */
int rxe_av_from_attr(struct rxe_dev *rxe, const struct rdma_ah_attr *attr,
		     struct rxe_path *path)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	struct net_device *ndev;
	int ifindex;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !sgid_attr ||
	    rdma_ah_get_port_num(attr) != 1)
		return -EINVAL;
	if (sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	/* 20 bits; more would spill into the IPv6 header's traffic class. */
	if (grh->flow_label & ~IB_GRH_FLOWLABEL_MASK)
		return -EINVAL;

	memset(path, 0, sizeof(*path));
	path->network_type = rdma_gid_attr_network_type(sgid_attr);
	switch (path->network_type) {
	case RDMA_NETWORK_IPV4:
		if (!ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		break;
	case RDMA_NETWORK_IPV6:
		if (ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	ifindex = IS_ERR(ndev) ? 0 : ndev->ifindex;
	rcu_read_unlock();
	if (!ifindex)
		return -EINVAL;

	memcpy(&path->saddr, sgid_attr->gid.raw, sizeof(path->saddr));
	memcpy(&path->daddr, grh->dgid.raw, sizeof(path->daddr));
	path->flow_label = grh->flow_label;
	path->ifindex = ifindex;
	path->sgid_index = grh->sgid_index;
	path->hop_limit = grh->hop_limit;
	path->traffic_class = grh->traffic_class;
	if (attr->type == RDMA_AH_ATTR_TYPE_ROCE)
		ether_addr_copy(path->dmac, attr->roce.dmac);
	return 0;
}

/**
 * rxe_av_to_attr() - report a path as AH attributes
 * @path: the path
 * @attr: filled in; ib_core fills the source GID attribute itself
 */
void rxe_av_to_attr(const struct rxe_path *path, struct rdma_ah_attr *attr)
{
	struct ib_global_route *grh = rdma_ah_retrieve_grh(attr);

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_ah_flags(attr, IB_AH_GRH);
	rdma_ah_set_port_num(attr, 1);
	memcpy(grh->dgid.raw, &path->daddr, sizeof(grh->dgid.raw));
	grh->flow_label = path->flow_label;
	grh->sgid_index = path->sgid_index;
	grh->hop_limit = path->hop_limit;
	grh->traffic_class = path->traffic_class;
	ether_addr_copy(attr->roce.dmac, path->dmac);
}

/**
 * rxe_av_lookup_ah() - copy the path of a user AH named by its number
 * @rxe: the device
 * @ah_num: the number from a user UD work request
 * @pd: the PD of the QP that names it; an AH of another PD is refused,
 *	so one process cannot send through another's AH
 * @path: filled in
 *
 * The copy is made under the table lock, which destroy also takes, so the
 * AH cannot be freed under us.
 *
 * Context: any; takes the AH table lock with bottom halves disabled.
 * Return: 0, or -EINVAL when no such AH exists on @pd.
 */
int rxe_av_lookup_ah(struct rxe_dev *rxe, u32 ah_num, const struct ib_pd *pd,
		     struct rxe_path *path)
{
	struct rxe_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&rxe->ah_xa, flags);
	ah = xa_load(&rxe->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*path = ah->path;
		err = 0;
	}
	xa_unlock_irqrestore(&rxe->ah_xa, flags);
	return err;
}

/**
 * rxe_av_create_ah() - the create_ah and create_user_ah verbs
 * @ibah: the AH ib_core allocated
 * @init_attr: its attributes
 * @udata: userspace's response buffer, or NULL for a kernel AH
 *
 * A user AH gets a number, which the provider puts in UD work requests;
 * a kernel AH is named by its pointer.
 *
 * Context: may be atomic for a kernel AH without RDMA_CREATE_AH_SLEEPABLE.
 * Return: 0 or a negative errno.
 */
int rxe_av_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibah->device);
	struct rxe_ah *ah = to_rxe_ah(ibah);
	struct rxe_create_ah_resp resp = {};
	gfp_t gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ?
		GFP_KERNEL : GFP_ATOMIC;
	unsigned long flags;
	int err;

	if (udata && udata->outlen && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = rxe_av_from_attr(rxe, init_attr->ah_attr, &ah->path);
	if (err)
		return err;

	err = rxe_limit_take(&rxe->limit[RXE_OBJ_AH], RXE_OBJ_AH, !!udata);
	if (err)
		return err;

	ah->ah_num = 0;
	if (udata) {
		xa_lock_irqsave(&rxe->ah_xa, flags);
		err = __xa_alloc(&rxe->ah_xa, &ah->ah_num, ah,
				 XA_LIMIT(1, RXE_MAX_AH), gfp);
		xa_unlock_irqrestore(&rxe->ah_xa, flags);
		if (err)
			goto err_limit;

		resp.ah_num = ah->ah_num;
		if (udata->outlen) {
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
			if (err)
				goto err_erase;
		}
	}
	return 0;

err_erase:
	xa_lock_irqsave(&rxe->ah_xa, flags);
	__xa_erase(&rxe->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&rxe->ah_xa, flags);
err_limit:
	rxe_limit_drop(&rxe->limit[RXE_OBJ_AH], RXE_OBJ_AH);
	return err;
}

/**
 * rxe_av_query_ah() - the query_ah verb
 * @ibah: the AH
 * @attr: filled in
 *
 * Return: 0.
 */
int rxe_av_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	rxe_av_to_attr(&to_rxe_ah(ibah)->path, attr);
	return 0;
}

/**
 * rxe_av_destroy_ah() - the destroy_ah verb
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0
 *
 * Context: any.
 * Return: 0.
 */
int rxe_av_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rxe_dev *rxe = to_rxe_dev(ibah->device);
	struct rxe_ah *ah = to_rxe_ah(ibah);
	unsigned long irqflags;

	if (ah->ah_num) {
		xa_lock_irqsave(&rxe->ah_xa, irqflags);
		__xa_erase(&rxe->ah_xa, ah->ah_num);
		xa_unlock_irqrestore(&rxe->ah_xa, irqflags);
	}
	rxe_limit_drop(&rxe->limit[RXE_OBJ_AH], RXE_OBJ_AH);
	return 0;
}
