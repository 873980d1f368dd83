/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-device protocol and drop counters, read through
 * `rdma statistic show link DEV/1`.
 */
#ifndef RXE_COUNTERS_H
#define RXE_COUNTERS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "rxe_dev.h"

/**
 * enum rxe_counter - what the counters count
 * @RXE_CNT_SENT_PKTS: packets handed to the network or looped back
 * @RXE_CNT_RCVD_PKTS: packets that passed the header checks
 * @RXE_CNT_DUP_REQ: duplicate request packets (a lost ACK, a retry)
 * @RXE_CNT_OUT_OF_SEQ_REQ: request packets ahead of the expected PSN
 * @RXE_CNT_RCV_RNR_ERR: RNR NAKs received
 * @RXE_CNT_SND_RNR_ERR: RNR NAKs sent
 * @RXE_CNT_RCV_SEQ_ERR: NAK-PSN-sequence-errors received
 * @RXE_CNT_SND_SEQ_ERR: NAK-PSN-sequence-errors sent
 * @RXE_CNT_COMPLETER_RETRY_ERR: retransmissions after a sequence NAK
 *	or a response ahead of the expected PSN
 * @RXE_CNT_RETRY_TIMEOUT: retransmissions after the QP's local ACK timeout
 * @RXE_CNT_RETRY_EXCEEDED_ERR: QPs failed with the retry count spent
 * @RXE_CNT_RNR_RETRY_EXCEEDED_ERR: QPs failed with the RNR retry count spent
 * @RXE_CNT_SEND_ERR: packets the network layer refused
 * @RXE_CNT_LINK_DOWNED: port transitions from ACTIVE to DOWN
 * @RXE_CNT_RDMA_SENDS: messages sent (SEND, WRITE, READ request, atomic)
 * @RXE_CNT_RDMA_RECVS: messages completed by the responder
 * @RXE_CNT_ACK_COALESCED: ACKs not sent because a later one covers them
 * @RXE_CNT_RCVD_CNP: congestion notification packets received (and ignored)
 * @RXE_CNT_DROP_ICRC: packets dropped for a wrong ICRC
 * @RXE_CNT_DROP_MALFORMED: packets dropped for a truncated or inconsistent
 *	header (length, pad, version, payload where the opcode has none)
 * @RXE_CNT_DROP_OPCODE: packets dropped for an unknown opcode, or one the
 *	QP's transport does not carry
 * @RXE_CNT_DROP_QPN: packets dropped for naming no QP
 * @RXE_CNT_DROP_PKEY: packets dropped for a P_Key mismatch
 * @RXE_CNT_DROP_QKEY: packets dropped for a Q_Key mismatch
 * @RXE_CNT_DROP_QP_STATE: packets dropped because the QP does not take
 *	packets in its state
 * @RXE_CNT_DROP_ADDR: packets dropped for their IP addresses: a datagram
 *	sent to a broadcast address, or to a multicast address that is not
 *	one of the device's groups or names a QP other than the multicast
 *	QPN, or an RC or UC packet not from its QP's peer to its QP's own
 *	address through the netdev of the QP's path
 * @RXE_CNT_DROP_NOMEM: packets not sent or dropped for want of memory
 * @RXE_CNT_DROP_NO_WQE: UD and UC messages dropped for want of a receive WQE
 * @RXE_CNT_RETRY_EARLY: retransmissions after the measured round-trip
 *	timeout, before the QP's own; they spend no retry
 * @RXE_CNT_LENT_PKTS: packets sent with their payload in the sender's own
 *	pages, not copied (rxe_mr_lend_sgl())
 * @RXE_CNT_BATCHED_PKTS: packets that went through the IP stack in a batch
 *	of two or more (rxe_net_send())
 * @RXE_CNT_ACK_SOLICITED: last packets sent again only to ask for the ACK
 *	that the packets before them did not ask for (rxe_req_solicit())
 * @RXE_CNT_HELD_REQ: request packets that arrived past a gap and were kept
 *	to be executed once it filled (rxe_resp_hold())
 * @RXE_CNT_HELD_EXPIRED: kept packets dropped unused, RXE_HOLD_MAX_AGE_MS
 *	after they arrived
 * @RXE_CNT_RESENT_ALONE: lost packets sent again alone, to a responder not
 *	seen dropping the packets after a gap (rxe_req_resend_alone())
 * @RXE_CNT_TASK_DEFERRED: runs of a QP's task handed to the high-priority
 *	workqueue by a kernel thread that shares its CPU fairly with user
 *	space (ksoftirqd, threaded NAPI; rxe_task_run())
 * @RXE_CNT_READ_KEPT: READ responses that arrived past a gap and were
 *	kept, their payload put in place at once (rxe_comp_keep())
 * @RXE_CNT_READ_REFETCH: READ requests sent again for only the responses
 *	missing before the last one kept (rxe_req_refetch())
 * @RXE_CNT_NAK_HELD: NAKs and RNR NAKs for a PSN past a READ or atomic
 *	still waiting for its responses, held until those are in
 *	(rxe_comp_hold())
 * @RXE_CNT_ACK_HELD: ACKs past a READ or atomic still waiting for its
 *	responses, held until those are in (rxe_comp_hold())
 * @RXE_CNT_DROP_UC: UC request packets dropped without a word, as UC
 *	has no NAK: refused (R_Key, bounds, opcode sequence, a message
 *	longer than its receive WQE), or a later packet of a message whose
 *	earlier packet was lost or refused (its first packet, refused for
 *	want of a receive WQE, counts under drop_no_recv_wqe)
 * @RXE_CNT_NUM: number of counters
 */
enum rxe_counter {
	RXE_CNT_SENT_PKTS,
	RXE_CNT_RCVD_PKTS,
	RXE_CNT_DUP_REQ,
	RXE_CNT_OUT_OF_SEQ_REQ,
	RXE_CNT_RCV_RNR_ERR,
	RXE_CNT_SND_RNR_ERR,
	RXE_CNT_RCV_SEQ_ERR,
	RXE_CNT_SND_SEQ_ERR,
	RXE_CNT_COMPLETER_RETRY_ERR,
	RXE_CNT_RETRY_TIMEOUT,
	RXE_CNT_RETRY_EXCEEDED_ERR,
	RXE_CNT_RNR_RETRY_EXCEEDED_ERR,
	RXE_CNT_SEND_ERR,
	RXE_CNT_LINK_DOWNED,
	RXE_CNT_RDMA_SENDS,
	RXE_CNT_RDMA_RECVS,
	RXE_CNT_ACK_COALESCED,
	RXE_CNT_RCVD_CNP,
	RXE_CNT_DROP_ICRC,
	RXE_CNT_DROP_MALFORMED,
	RXE_CNT_DROP_OPCODE,
	RXE_CNT_DROP_QPN,
	RXE_CNT_DROP_PKEY,
	RXE_CNT_DROP_QKEY,
	RXE_CNT_DROP_QP_STATE,
	RXE_CNT_DROP_ADDR,
	RXE_CNT_DROP_NOMEM,
	RXE_CNT_DROP_NO_WQE,
	RXE_CNT_RETRY_EARLY,
	RXE_CNT_LENT_PKTS,
	RXE_CNT_BATCHED_PKTS,
	RXE_CNT_ACK_SOLICITED,
	RXE_CNT_HELD_REQ,
	RXE_CNT_HELD_EXPIRED,
	RXE_CNT_RESENT_ALONE,
	RXE_CNT_TASK_DEFERRED,
	RXE_CNT_READ_KEPT,
	RXE_CNT_READ_REFETCH,
	RXE_CNT_NAK_HELD,
	RXE_CNT_ACK_HELD,
	RXE_CNT_DROP_UC,
	RXE_CNT_NUM,
};

/**
 * struct rxe_counters - one CPU's counters
 * @cnt: indexed by enum rxe_counter
 */
struct rxe_counters {
	u64 cnt[RXE_CNT_NUM];
};

/* rxe_counters.c APIs: */
int rxe_counters_init(struct rxe_dev *rxe);
void rxe_counters_cleanup(struct rxe_dev *rxe);
u64 rxe_counter_read(const struct rxe_dev *rxe, enum rxe_counter index);
struct rdma_hw_stats *rxe_counters_alloc_port_stats(struct ib_device *ibdev,
						    u32 port_num);
int rxe_counters_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index);

/**
 * rxe_counter_inc() - count one event
 * @rxe: the device
 * @index: the counter
 *
 * Context: any.
 */
static inline void rxe_counter_inc(struct rxe_dev *rxe, enum rxe_counter index)
{
	this_cpu_inc(rxe->counters->cnt[index]);
}

/**
 * rxe_counter_add() - count @n events
 * @rxe: the device
 * @index: the counter
 * @n: how many
 *
 * Context: any.
 */
static inline void rxe_counter_add(struct rxe_dev *rxe, enum rxe_counter index,
				   unsigned int n)
{
	this_cpu_add(rxe->counters->cnt[index], n);
}

#endif /* RXE_COUNTERS_H */
