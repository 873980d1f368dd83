/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The soft-RoCE device: one per netdev, created by
 * `rdma link add NAME type rxe netdev DEV`, with its limits.
 */
#ifndef RXE_DEV_H
#define RXE_DEV_H

#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rxe_pool.h"

/* Limits the device advertises, and enforces. */
enum rxe_dev_param {
	RXE_MAX_UCONTEXT	= 0x10000,
	RXE_MAX_PD		= 0x10000,
	RXE_MAX_AH		= 0x8000,
	RXE_MAX_CQ		= 0x10000,
	RXE_MAX_CQE		= 0x7fff,
	RXE_MAX_QP		= 0x10000,
	RXE_MAX_QP_WR		= 0x4000,
	RXE_MAX_SGE		= 32,
	RXE_MAX_INLINE_DATA	= RXE_MAX_SGE * 16,
	RXE_MAX_SRQ		= 0x10000,
	RXE_MAX_SRQ_WR		= 0x4000,
	RXE_MAX_SRQ_SGE		= RXE_MAX_SGE,
	RXE_MAX_MR		= 0x40000,
	RXE_MAX_MW		= 0x10000,
	RXE_MAX_QP_RD_ATOM	= 128,
	RXE_MAX_FAST_REG_PAGES	= 512,
	RXE_LOCAL_CA_ACK_DELAY	= 15,
	RXE_MAX_PKEYS		= 1,
	RXE_GID_TABLE_LEN	= 128,
	/* IBA: the vendor ID of a vendor without an OUI. */
	RXE_VENDOR_ID		= 0xffffff,
};

/*
 * QPNs 0 and 1 are the SMI and GSI QPs; ordinary QPs start above. A QPN
 * has 24 bits, and the last, 0xFFFFFF, is the multicast QPN, which no
 * QP takes.
 */
#define RXE_QPN_MIN		16
#define RXE_QPN_MAX		0xffffff
#define RXE_QPN_LAST		(RXE_QPN_MAX - 1)

/* The single P_Key of a RoCE port: the default, full membership. */
#define RXE_DEFAULT_PKEY	0xffff

/* Largest message: IBA caps a message at 2^31 bytes. */
#define RXE_MAX_MSG_SIZE	0x80000000U

struct rxe_counters;

/**
 * struct rxe_dev - a soft-RoCE device
 * @ib_dev: ib_core's device
 * @ndev: the netdev it is bound to, with a tracked reference
 * @ndev_tracker: tracks that reference
 * @attr: the device attributes, fixed at creation
 * @active_mtu: RoCE MTU that fits the netdev MTU (IB_MTU_256..4096)
 * @port_active: the port state last announced with an event
 * @limit: count and cap of each object kind
 * @qp_xa: QPN to the QP's struct rxe_qp_entry; readers use RCU and take
 *	a reference through it, writers the xa_lock, taken only by verbs in
 *	process context: a plain spinlock, which an allocation may drop to
 *	sleep
 * @key_xa: MR/MW key index (key >> 8) to struct rxe_mr or a window's
 *	struct rxe_mw_key, both freed after a grace period; readers use RCU,
 *	writers the xa_lock, as for @qp_xa
 * @ah_xa: ah_num to struct rxe_ah; readers copy the AH under the xa_lock
 *	(interrupts disabled), because ib_core frees an AH as soon as
 *	its destroy verb returns, from any context
 * @srq_xa: srq_num to struct rxe_srq; used to allocate the numbers
 * @counters: per-CPU protocol and drop counters
 * @busy_qps: RC QPs with packets unacknowledged and a peer that
 *	answers, which share the least and the most window (rxe_comp.c);
 *	each QP's send task moves it in and out. On a cache line of its
 *	own: the fields around it are read per packet
 * @held_pkts: request packets its QPs keep past a gap, at most
 *	RXE_HOLD_DEV_MAX (rxe_resp.c)
 * @queued_pkts: packets queued for its QPs' responders and completers,
 *	at most RXE_RECV_DEV_MAX (rxe_recv.c)
 * @mcg_list: the multicast groups (struct rxe_mcg); readers use RCU,
 *	writers hold @mcg_mutex
 * @mcg_mutex: serialises attaching and detaching QPs; taken inside RTNL,
 *	which joining and leaving an IP group needs
 * @nmcg: groups on @mcg_list, under @mcg_mutex
 * @node: entry in the module's list of devices, under rxe_dev_lock and RCU
 * @unlisted: registration failed, so @node was never listed; set before
 *	ib_dealloc_device() by rxe_dev_add(), whose caller holds rxe_dev_lock
 */
struct rxe_dev {
	struct ib_device ib_dev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct ib_device_attr attr;
	enum ib_mtu active_mtu;
	bool port_active;
	struct rxe_limit limit[RXE_OBJ_NTYPES];
	struct xarray qp_xa;
	struct xarray key_xa;
	struct xarray ah_xa;
	struct xarray srq_xa;
	struct rxe_counters __percpu *counters;
	atomic_t busy_qps ____cacheline_aligned_in_smp;
	atomic_t held_pkts;
	atomic_t queued_pkts;
	struct list_head mcg_list;
	struct mutex mcg_mutex; /* see above */
	unsigned int nmcg;
	struct list_head node;
	bool unlisted;
};

static inline struct rxe_dev *to_rxe_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rxe_dev, ib_dev);
}

/* rxe_dev.c APIs: */
int rxe_dev_module_init(void);
void rxe_dev_module_exit(void);
struct rxe_dev *rxe_dev_from_netdev_rcu(const struct net_device *ndev);
struct rxe_dev *rxe_dev_below_netdev_rcu(struct net_device *upper);
enum ib_port_state rxe_dev_port_state(const struct rxe_dev *rxe);
int rxe_dev_mtu_bytes(const struct rxe_dev *rxe);
void rxe_dev_dealloc(struct ib_device *ibdev);

#endif /* RXE_DEV_H */
