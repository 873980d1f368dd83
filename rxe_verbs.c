// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs entry points. The device, port, context and PD verbs live
 * here; the others check their arguments and act in the file of their
 * object. Everything registers through one ib_device_ops table.
 */

#include <linux/sysfs.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "rxe_verbs_ops.h"
#include "rxe_verbs.h"
#include "rxe_av.h"
#include "rxe_mcast.h"
#include "rxe_cq.h"
#include "rxe_srq.h"
#include "rxe_qp.h"
#include "rxe_mr.h"
#include "rxe_post.h"
#include "rxe_counters.h"

static int rxe_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr, struct ib_udata *uhw)
{
	if (uhw->inlen || uhw->outlen)
		return -EINVAL;
	*attr = to_rxe_dev(ibdev)->attr;
	return 0;
}

static int rxe_modify_device(struct ib_device *ibdev, int mask,
			     struct ib_device_modify *attr)
{
	struct rxe_dev *rxe = to_rxe_dev(ibdev);

	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		rxe->attr.sys_image_guid = cpu_to_be64(attr->sys_image_guid);
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

static int rxe_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct rxe_dev *rxe = to_rxe_dev(ibdev);

	/* ib_core has zeroed @attr. */
	attr->state = rxe_dev_port_state(rxe);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(rxe->active_mtu);
	attr->gid_tbl_len = RXE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = RXE_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = rxe_counter_read(rxe, RXE_CNT_DROP_PKEY);
	attr->qkey_viol_cntr = rxe_counter_read(rxe, RXE_CNT_DROP_QKEY);
	attr->pkey_tbl_len = RXE_MAX_PKEYS;
	attr->max_vl_num = 1;
	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

static int rxe_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = RXE_MAX_PKEYS;
	immutable->gid_tbl_len = RXE_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer rxe_get_link_layer(struct ib_device *ibdev,
					       u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int rxe_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index >= RXE_MAX_PKEYS)
		return -EINVAL;
	*pkey = RXE_DEFAULT_PKEY;
	return 0;
}

static int rxe_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(uctx->device);

	return rxe_limit_take(&rxe->limit[RXE_OBJ_UCONTEXT], RXE_OBJ_UCONTEXT,
			      true);
}

static void rxe_dealloc_ucontext(struct ib_ucontext *uctx)
{
	struct rxe_dev *rxe = to_rxe_dev(uctx->device);

	rxe_limit_drop(&rxe->limit[RXE_OBJ_UCONTEXT], RXE_OBJ_UCONTEXT);
}

static int rxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);

	return rxe_limit_take(&rxe->limit[RXE_OBJ_PD], RXE_OBJ_PD, !!udata);
}

static int rxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rxe_dev(ibpd->device);

	rxe_limit_drop(&rxe->limit[RXE_OBJ_PD], RXE_OBJ_PD);
	return 0;
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct rxe_dev *rxe = rdma_device_to_drv_device(device, struct rxe_dev,
							ib_dev);

	return sysfs_emit(buf, "%s\n", netdev_name(rxe->ndev));
}

static DEVICE_ATTR_RO(parent);

static struct attribute *rxe_dev_attributes[] = {
	&dev_attr_parent.attr,
	NULL,
};

static const struct attribute_group rxe_attr_group = {
	.attrs = rxe_dev_attributes,
};

#ifdef RXE_CREATE_CQ_ATTRS
/*
 * From Linux 6.11 on, create_cq is handed the uverbs attribute bundle
 * (NULL for a kernel CQ) where it used to get the driver's udata.
 */
static int rxe_create_cq_attrs(struct ib_cq *ibcq,
			       const struct ib_cq_init_attr *attr,
			       struct uverbs_attr_bundle *attrs)
{
	return rxe_cq_create(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}

#define RXE_CREATE_CQ_OP	rxe_create_cq_attrs
#else
#define RXE_CREATE_CQ_OP	rxe_cq_create
#endif

static const struct ib_device_ops rxe_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = RXE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = rxe_counters_alloc_port_stats,
	.alloc_mr = rxe_mr_alloc,
	.alloc_mw = rxe_mw_alloc,
	.alloc_pd = rxe_alloc_pd,
	.alloc_ucontext = rxe_alloc_ucontext,
	.attach_mcast = rxe_mcast_attach,
	.create_ah = rxe_av_create_ah,
	.create_cq = RXE_CREATE_CQ_OP,
	.create_qp = rxe_qp_create,
	.create_srq = rxe_srq_create,
	.create_user_ah = rxe_av_create_ah,
	.dealloc_driver = rxe_dev_dealloc,
	.dealloc_mw = rxe_mw_dealloc,
	.dealloc_pd = rxe_dealloc_pd,
	.dealloc_ucontext = rxe_dealloc_ucontext,
	.dereg_mr = rxe_mr_dereg,
	.destroy_ah = rxe_av_destroy_ah,
	.destroy_cq = rxe_cq_destroy,
	.destroy_qp = rxe_qp_destroy,
	.destroy_srq = rxe_srq_destroy,
	.detach_mcast = rxe_mcast_detach,
	.device_group = &rxe_attr_group,
	.fill_res_qp_entry = rxe_qp_fill_res_entry,
	.get_dma_mr = rxe_mr_get_dma,
	.get_hw_stats = rxe_counters_get_hw_stats,
	.get_link_layer = rxe_get_link_layer,
	.get_port_immutable = rxe_get_port_immutable,
	.map_mr_sg = rxe_mr_map_sg,
	.mmap = rxe_queue_mmap,
	.mmap_free = rxe_queue_mmap_free,
	.modify_device = rxe_modify_device,
	.modify_qp = rxe_qp_modify,
	.modify_srq = rxe_srq_modify,
	.poll_cq = rxe_cq_poll,
	.post_recv = rxe_post_recv,
	.post_send = rxe_post_send,
	.post_srq_recv = rxe_post_srq_recv,
	.query_ah = rxe_av_query_ah,
	.query_device = rxe_query_device,
	.query_pkey = rxe_query_pkey,
	.query_port = rxe_query_port,
	.query_qp = rxe_qp_query,
	.query_srq = rxe_srq_query,
	.reg_user_mr = rxe_mr_reg_user,
	.req_notify_cq = rxe_cq_req_notify,
	.resize_cq = rxe_cq_resize,

	INIT_RDMA_OBJ_SIZE(ib_ah, rxe_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rxe_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, rxe_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, rxe_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, rxe_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, rxe_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rxe_ucontext, ibuc),
};

/**
 * rxe_verbs_register() - register a device with ib_core
 * @rxe: the device, with its netdev and attributes set
 * @ibdev_name: the name `rdma link add` gave it
 *
 * The device uses virtual DMA (no DMA device): the addresses kernel
 * consumers map are kernel virtual addresses.
 *
 * Return: 0 or a negative errno.
 */
int rxe_verbs_register(struct rxe_dev *rxe, const char *ibdev_name)
{
	struct ib_device *ibdev = &rxe->ib_dev;
	int err;

	strscpy(ibdev->node_desc, "rxe", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/* The provider's doorbell and CQ arming go through write(). */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &rxe_dev_ops);

	err = ib_device_set_netdev(ibdev, rxe->ndev, 1);
	if (err)
		return err;
	return ib_register_device(ibdev, ibdev_name, NULL);
}
