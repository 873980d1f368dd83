// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device counters, exported as ib_core hw_stats of port 1.
 */

#include <linux/percpu.h>

#include "rxe_counters.h"

/* The first sixteen keep the names the in-tree driver uses. */
static const struct rdma_stat_desc rxe_counter_descs[RXE_CNT_NUM] = {
	[RXE_CNT_SENT_PKTS]		= { .name = "sent_pkts" },
	[RXE_CNT_RCVD_PKTS]		= { .name = "rcvd_pkts" },
	[RXE_CNT_DUP_REQ]		= { .name = "duplicate_request" },
	[RXE_CNT_OUT_OF_SEQ_REQ]	= { .name = "out_of_seq_request" },
	[RXE_CNT_RCV_RNR_ERR]		= { .name = "rcvd_rnr_err" },
	[RXE_CNT_SND_RNR_ERR]		= { .name = "send_rnr_err" },
	[RXE_CNT_RCV_SEQ_ERR]		= { .name = "rcvd_seq_err" },
	[RXE_CNT_SND_SEQ_ERR]		= { .name = "send_seq_err" },
	[RXE_CNT_COMPLETER_RETRY_ERR]	= { .name = "completer_retry_err" },
	[RXE_CNT_RETRY_TIMEOUT]		= { .name = "retry_timeout" },
	[RXE_CNT_RETRY_EXCEEDED_ERR]	= { .name = "retry_exceeded_err" },
	[RXE_CNT_RNR_RETRY_EXCEEDED_ERR] = { .name = "retry_rnr_exceeded_err" },
	[RXE_CNT_SEND_ERR]		= { .name = "send_err" },
	[RXE_CNT_LINK_DOWNED]		= { .name = "link_downed" },
	[RXE_CNT_RDMA_SENDS]		= { .name = "rdma_sends" },
	[RXE_CNT_RDMA_RECVS]		= { .name = "rdma_recvs" },
	[RXE_CNT_ACK_COALESCED]		= { .name = "ack_coalesced" },
	[RXE_CNT_RCVD_CNP]		= { .name = "rcvd_cnp" },
	[RXE_CNT_DROP_ICRC]		= { .name = "drop_icrc_err" },
	[RXE_CNT_DROP_MALFORMED]	= { .name = "drop_malformed" },
	[RXE_CNT_DROP_OPCODE]		= { .name = "drop_bad_opcode" },
	[RXE_CNT_DROP_QPN]		= { .name = "drop_unknown_qpn" },
	[RXE_CNT_DROP_PKEY]		= { .name = "drop_pkey_err" },
	[RXE_CNT_DROP_QKEY]		= { .name = "drop_qkey_err" },
	[RXE_CNT_DROP_QP_STATE]		= { .name = "drop_qp_state" },
	[RXE_CNT_DROP_ADDR]		= { .name = "drop_addr_err" },
	[RXE_CNT_DROP_NOMEM]		= { .name = "drop_nomem" },
	[RXE_CNT_DROP_NO_WQE]		= { .name = "drop_no_recv_wqe" },
	[RXE_CNT_RETRY_EARLY]		= { .name = "retry_early" },
	[RXE_CNT_LENT_PKTS]		= { .name = "lent_pkts" },
	[RXE_CNT_BATCHED_PKTS]		= { .name = "batched_pkts" },
	[RXE_CNT_ACK_SOLICITED]		= { .name = "ack_solicited" },
	[RXE_CNT_HELD_REQ]		= { .name = "held_request" },
	[RXE_CNT_HELD_EXPIRED]		= { .name = "held_expired" },
	[RXE_CNT_RESENT_ALONE]		= { .name = "resent_alone" },
	[RXE_CNT_TASK_DEFERRED]		= { .name = "task_deferred" },
	[RXE_CNT_READ_KEPT]		= { .name = "read_rsp_kept" },
	[RXE_CNT_READ_REFETCH]		= { .name = "read_refetch" },
	[RXE_CNT_NAK_HELD]		= { .name = "nak_held" },
	[RXE_CNT_ACK_HELD]		= { .name = "ack_held" },
	[RXE_CNT_DROP_UC]		= { .name = "drop_uc_msg" },
};

/**
 * rxe_counters_init() - allocate a device's counters
 * @rxe: the device
 *
 * Return: 0 or -ENOMEM.
 */
int rxe_counters_init(struct rxe_dev *rxe)
{
	rxe->counters = alloc_percpu(struct rxe_counters);
	return rxe->counters ? 0 : -ENOMEM;
}

/**
 * rxe_counters_cleanup() - free a device's counters
 * @rxe: the device
 */
void rxe_counters_cleanup(struct rxe_dev *rxe)
{
	free_percpu(rxe->counters);
	rxe->counters = NULL;
}

/**
 * rxe_counter_read() - sum one counter over the CPUs
 * @rxe: the device
 * @index: the counter
 *
 * Return: the sum.
 */
u64 rxe_counter_read(const struct rxe_dev *rxe, enum rxe_counter index)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(rxe->counters, cpu)->cnt[index];
	return sum;
}

/**
 * rxe_counters_alloc_port_stats() - the alloc_hw_port_stats verb
 * @ibdev: the device
 * @port_num: the port (always 1)
 *
 * Return: a stats structure for ib_core to fill through get_hw_stats.
 */
struct rdma_hw_stats *rxe_counters_alloc_port_stats(struct ib_device *ibdev,
						    u32 port_num)
{
	BUILD_BUG_ON(ARRAY_SIZE(rxe_counter_descs) != RXE_CNT_NUM);
	return rdma_alloc_hw_stats_struct(rxe_counter_descs, RXE_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * rxe_counters_get_hw_stats() - the get_hw_stats verb
 * @ibdev: the device
 * @stats: filled with every counter
 * @port: the port
 * @index: the counter ib_core asks for; we fill them all
 *
 * Return: the number of counters filled.
 */
int rxe_counters_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct rxe_dev *rxe = to_rxe_dev(ibdev);
	int i;

	for (i = 0; i < RXE_CNT_NUM; i++)
		stats->value[i] = rxe_counter_read(rxe, i);
	return RXE_CNT_NUM;
}
