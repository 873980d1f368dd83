// SPDX-License-Identifier: GPL-2.0
/*
 * Device lifecycle: `rdma link add NAME type rxe netdev DEV` creates a
 * device bound to DEV, `rdma link delete NAME` or the netdev going away
 * removes it, and the port follows the netdev's link state and MTU.
 */

#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>

#include "rxe_dev.h"
#include "rxe_counters.h"
#include "rxe_mcast.h"
#include "rxe_verbs_ops.h"

/*
 * FLUSH to global visibility, and ATOMIC WRITE; not FLUSH to persistence,
 * which would need regions in persistent memory.
 */
#ifdef RXE_HAVE_MPE
#define RXE_DEVICE_MPE		(IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_ATOMIC_WRITE)
#else
#define RXE_DEVICE_MPE		0
#endif

/*
 * Bytes of headers the netdev MTU must leave room for beside a full RoCE
 * MTU of payload: the in-tree driver's 80, so that both ends pick the same
 * MTU. The largest request needs 84 (IPv6 40, UDP 8, BTH 12, RETH 16,
 * ImmDt 4, ICRC 4): at netdev MTUs 80-83 bytes above a RoCE MTU, an IPv6
 * WRITE_ONLY with immediate of a full MTU is too long for the netdev and
 * IPv6 drops it (it fragments no packet of ours). rdma_cm's path MTU
 * leaves room for 96 bytes and never meets it.
 */
#define RXE_MAX_HDR_LENGTH	80

/*
 * All devices. Writers hold rxe_dev_lock; the receive path and the netdev
 * notifier read under RCU (the notifier runs under RTNL, which
 * ib_register_device() takes inside rxe_dev_lock, so it must not take the
 * mutex).
 */
static LIST_HEAD(rxe_dev_list);
static DEFINE_MUTEX(rxe_dev_lock);

/**
 * rxe_dev_from_netdev_rcu() - the device bound to a netdev
 * @ndev: the netdev
 *
 * Context: rcu_read_lock() held; the device stays valid until it is
 * released.
 * Return: the device or NULL.
 */
struct rxe_dev *rxe_dev_from_netdev_rcu(const struct net_device *ndev)
{
	struct rxe_dev *rxe;

	list_for_each_entry_rcu(rxe, &rxe_dev_list, node)
		if (rxe->ndev == ndev)
			return rxe;
	return NULL;
}

/**
 * rxe_dev_below_netdev_rcu() - the device bound to a netdev below another
 * @upper: a netdev stacked, at any depth, on the bound one: a bridge it
 *	is a port of, its bond, a macvlan or ipvlan on it
 *
 * ib_core gives a device GIDs for the addresses of every netdev above the
 * bound one (its upper-device filter), so their traffic comes in through
 * them. Should netdevs of two devices share an upper netdev (two ports of
 * one bridge), the first device bound takes its packets.
 *
 * Context: rcu_read_lock() held.
 * Return: the device or NULL.
 */
struct rxe_dev *rxe_dev_below_netdev_rcu(struct net_device *upper)
{
	struct rxe_dev *rxe;

	list_for_each_entry_rcu(rxe, &rxe_dev_list, node)
		if (netdev_has_upper_dev_all_rcu(rxe->ndev, upper))
			return rxe;
	return NULL;
}

/**
 * rxe_dev_port_state() - the port state the netdev's link implies
 * @rxe: the device
 *
 * Return: IB_PORT_ACTIVE when the netdev is up with carrier, else
 * IB_PORT_DOWN.
 */
enum ib_port_state rxe_dev_port_state(const struct rxe_dev *rxe)
{
	return netif_running(rxe->ndev) && netif_carrier_ok(rxe->ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/**
 * rxe_dev_mtu_bytes() - the port's active RoCE MTU
 * @rxe: the device
 *
 * Return: 256 to 4096.
 */
int rxe_dev_mtu_bytes(const struct rxe_dev *rxe)
{
	return ib_mtu_enum_to_int(READ_ONCE(rxe->active_mtu));
}

/* The largest IB MTU whose packets fit in the netdev MTU. */
static enum ib_mtu rxe_dev_mtu_from_netdev(unsigned int ndev_mtu)
{
	int room = (int)ndev_mtu - RXE_MAX_HDR_LENGTH;

	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

static void rxe_dev_set_mtu(struct rxe_dev *rxe)
{
	WRITE_ONCE(rxe->active_mtu, rxe_dev_mtu_from_netdev(rxe->ndev->mtu));
}

/* Announce a change of the port state to ib_core's clients. */
static void rxe_dev_port_event(struct rxe_dev *rxe)
{
	bool active = rxe_dev_port_state(rxe) == IB_PORT_ACTIVE;
	struct ib_event ev = {
		.device = &rxe->ib_dev,
		.element.port_num = 1,
	};

	if (active == rxe->port_active)
		return;
	rxe->port_active = active;
	if (!active)
		rxe_counter_inc(rxe, RXE_CNT_LINK_DOWNED);

	ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
	ibdev_info(&rxe->ib_dev, "port 1 %s\n", active ? "ACTIVE" : "DOWN");
}

static void rxe_dev_init_attr(struct rxe_dev *rxe)
{
	struct ib_device_attr *attr = &rxe->attr;

	attr->fw_ver = 0;
	attr->sys_image_guid = rxe->ib_dev.node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = 0xfffff000;
	attr->vendor_id = RXE_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_qp = RXE_MAX_QP;
	attr->max_qp_wr = RXE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
				 IB_DEVICE_BAD_QKEY_CNTR |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 RXE_DEVICE_MPE;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = RXE_MAX_SGE;
	attr->max_recv_sge = RXE_MAX_SGE;
	attr->max_sge_rd = RXE_MAX_SGE;
	attr->max_cq = RXE_MAX_CQ;
	attr->max_cqe = RXE_MAX_CQE;
	attr->max_mr = RXE_MAX_MR;
	attr->max_mw = RXE_MAX_MW;
	attr->max_pd = RXE_MAX_PD;
	attr->max_qp_rd_atom = RXE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = RXE_MAX_QP_RD_ATOM;
	attr->max_res_rd_atom = RXE_MAX_QP * RXE_MAX_QP_RD_ATOM;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_mcast_grp = RXE_MAX_MCG;
	attr->max_mcast_qp_attach = RXE_MCG_QPS;
	attr->max_total_mcast_qp_attach = RXE_MAX_MCG * RXE_MCG_QPS;
	attr->max_ah = RXE_MAX_AH;
	attr->max_srq = RXE_MAX_SRQ;
	attr->max_srq_wr = RXE_MAX_SRQ_WR;
	attr->max_srq_sge = RXE_MAX_SRQ_SGE;
	attr->max_fast_reg_page_list_len = RXE_MAX_FAST_REG_PAGES;
	attr->max_pkeys = RXE_MAX_PKEYS;
	attr->local_ca_ack_delay = RXE_LOCAL_CA_ACK_DELAY;
}

static void rxe_dev_init_limits(struct rxe_dev *rxe)
{
	static const u32 max[RXE_OBJ_NTYPES] = {
		[RXE_OBJ_UCONTEXT]	= RXE_MAX_UCONTEXT,
		[RXE_OBJ_PD]		= RXE_MAX_PD,
		[RXE_OBJ_AH]		= RXE_MAX_AH,
		[RXE_OBJ_CQ]		= RXE_MAX_CQ,
		[RXE_OBJ_SRQ]		= RXE_MAX_SRQ,
		[RXE_OBJ_QP]		= RXE_MAX_QP,
		[RXE_OBJ_MR]		= RXE_MAX_MR,
		[RXE_OBJ_MW]		= RXE_MAX_MW,
	};
	int i;

	for (i = 0; i < RXE_OBJ_NTYPES; i++) {
		atomic_set(&rxe->limit[i].count, 0);
		rxe->limit[i].max = max[i];
	}
}

/**
 * rxe_dev_dealloc() - the dealloc_driver verb: the device's last moment
 * @ibdev: the device, unregistered, or never registered (rxe_dev_add());
 *	ib_core frees it after this returns
 *
 * Every client is gone and every object destroyed by now, so a non-zero
 * object count is a leak; say so.
 */
void rxe_dev_dealloc(struct ib_device *ibdev)
{
	struct rxe_dev *rxe = to_rxe_dev(ibdev);
	int i, n;

	/*
	 * A device registered is listed by rxe_dev_newlink() before it lets
	 * go of the lock: an unregistration racing with it waits here.
	 */
	if (!rxe->unlisted) {
		mutex_lock(&rxe_dev_lock);
		list_del_rcu(&rxe->node);
		mutex_unlock(&rxe_dev_lock);
		/* The receive path and the notifier may still hold it. */
		synchronize_rcu();
	}

	for (i = 0; i < RXE_OBJ_NTYPES; i++) {
		n = atomic_read(&rxe->limit[i].count);
		if (n)
			ibdev_err(ibdev, "%d %s objects leaked\n", n,
				  rxe_obj_name(i));
	}
	n = atomic_read(&rxe->busy_qps);
	if (n)
		ibdev_err(ibdev, "%d QPs still counted as sending\n", n);
	n = atomic_read(&rxe->held_pkts);
	if (n)
		ibdev_err(ibdev, "%d packets still counted as held\n", n);
	n = atomic_read(&rxe->queued_pkts);
	if (n)
		ibdev_err(ibdev, "%d packets still counted as queued\n", n);
	/* Every QP detached from its groups when it was destroyed. */
	if (rxe->nmcg)
		ibdev_err(ibdev, "%u multicast groups leaked\n", rxe->nmcg);
	mutex_destroy(&rxe->mcg_mutex);

	xa_destroy(&rxe->qp_xa);
	xa_destroy(&rxe->key_xa);
	xa_destroy(&rxe->ah_xa);
	xa_destroy(&rxe->srq_xa);
	rxe_counters_cleanup(rxe);
	if (!rxe->unlisted)
		ibdev_info(ibdev, "removed from %s\n", netdev_name(rxe->ndev));
	netdev_put(rxe->ndev, &rxe->ndev_tracker);
}

static int rxe_dev_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_err("%s is not an Ethernet device\n", netdev_name(ndev));
		return -EINVAL;
	}
	if (!net_eq(dev_net(ndev), &init_net)) {
		pr_err("%s is not in the initial network namespace\n",
		       netdev_name(ndev));
		return -EOPNOTSUPP;
	}
	return 0;
}

static int rxe_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct rxe_dev *rxe;
	int err;

	rxe = ib_alloc_device(rxe_dev, ib_dev);
	if (!rxe)
		return -ENOMEM;

	rxe->ndev = ndev;
	netdev_hold(ndev, &rxe->ndev_tracker, GFP_KERNEL);
	INIT_LIST_HEAD(&rxe->node);
	INIT_LIST_HEAD(&rxe->mcg_list);
	mutex_init(&rxe->mcg_mutex);
	xa_init_flags(&rxe->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&rxe->key_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&rxe->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&rxe->srq_xa, XA_FLAGS_ALLOC1);
	rxe_dev_init_limits(rxe);
	err = rxe_counters_init(rxe);
	if (err)
		goto err_free;

	addrconf_addr_eui48((unsigned char *)&rxe->ib_dev.node_guid,
			    ndev->dev_addr);
	rxe_dev_init_attr(rxe);
	rxe_dev_set_mtu(rxe);
	rxe->port_active = rxe_dev_port_state(rxe) == IB_PORT_ACTIVE;

	err = rxe_verbs_register(rxe, ibdev_name);
	if (err) {
		/*
		 * The device has its ops now: ib_dealloc_device() calls
		 * rxe_dev_dealloc(), which undoes the rest, and must not
		 * take rxe_dev_lock, which our caller holds. ib_core refuses
		 * a name already taken here, for one.
		 */
		rxe->unlisted = true;
		ib_dealloc_device(&rxe->ib_dev);
		return err;
	}

	list_add_tail_rcu(&rxe->node, &rxe_dev_list);
	/*
	 * The notifier finds the device from here on. An MTU or link change
	 * while it registered went by unseen: take the netdev's state again,
	 * as the notifier does, on a device whose unregistration has not
	 * begun: a `rdma link delete` may have found it the moment it was
	 * registered, and an event dispatched now would outlive it.
	 */
	if (ib_device_try_get(&rxe->ib_dev)) {
		rtnl_lock();
		rxe_dev_set_mtu(rxe);
		rxe_dev_port_event(rxe);
		rtnl_unlock();
		ib_device_put(&rxe->ib_dev);
	}
	ibdev_info(&rxe->ib_dev, "added on %s, MTU %d\n", netdev_name(ndev),
		   rxe_dev_mtu_bytes(rxe));
	return 0;

err_free:
	netdev_put(ndev, &rxe->ndev_tracker);
	ib_dealloc_device(&rxe->ib_dev);
	return err;
}

/* rdma_link_ops.newlink: `rdma link add NAME type rxe netdev DEV`. */
static int rxe_dev_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct rxe_dev *rxe;
	int err;

	err = rxe_dev_check_netdev(ndev);
	if (err)
		return err;

	mutex_lock(&rxe_dev_lock);
	list_for_each_entry(rxe, &rxe_dev_list, node) {
		if (rxe->ndev == ndev) {
			pr_err("%s already has RDMA device %s\n",
			       netdev_name(ndev), dev_name(&rxe->ib_dev.dev));
			err = -EEXIST;
			goto out_unlock;
		}
	}
	err = rxe_dev_add(ibdev_name, ndev);
out_unlock:
	mutex_unlock(&rxe_dev_lock);
	return err;
}

static int rxe_dev_netdev_event(struct notifier_block *nb,
				unsigned long event, void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct rxe_dev *rxe;

	rcu_read_lock();
	rxe = rxe_dev_from_netdev_rcu(ndev);
	/* Listed until dealloc: one whose unregistration began is left be. */
	if (!rxe || !ib_device_try_get(&rxe->ib_dev))
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Runs dealloc, which drops our netdev reference, later. */
		ib_unregister_device_queued(&rxe->ib_dev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		rxe_dev_port_event(rxe);
		break;
	case NETDEV_CHANGEMTU:
		rxe_dev_set_mtu(rxe);
		ibdev_info(&rxe->ib_dev, "MTU %d for %s MTU %u\n",
			   rxe_dev_mtu_bytes(rxe), netdev_name(ndev), ndev->mtu);
		break;
	default:
		break;
	}
	ib_device_put(&rxe->ib_dev);
out:
	rcu_read_unlock();
	return NOTIFY_OK;
}

static struct notifier_block rxe_dev_netdev_nb = {
	.notifier_call = rxe_dev_netdev_event,
};

static struct rdma_link_ops rxe_dev_link_ops = {
	.type = "rxe",
	.newlink = rxe_dev_newlink,
};

/**
 * rxe_dev_module_init() - start following netdevs and take link type rxe
 *
 * Return: 0 or a negative errno.
 */
int rxe_dev_module_init(void)
{
	int err;

	err = register_netdevice_notifier(&rxe_dev_netdev_nb);
	if (err)
		return err;
	rdma_link_register(&rxe_dev_link_ops);
	return 0;
}

/**
 * rxe_dev_module_exit() - remove every device and stop following netdevs
 */
void rxe_dev_module_exit(void)
{
	rdma_link_unregister(&rxe_dev_link_ops);
	ib_unregister_driver(RDMA_DRIVER_RXE);
	unregister_netdevice_notifier(&rxe_dev_netdev_nb);
}
