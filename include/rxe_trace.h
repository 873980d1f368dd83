/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints: packets in, out and dropped, retries, and completions.
 * Enable with `echo 1 > /sys/kernel/tracing/events/rxe/enable`.
 *
 * The device name is a __dynamic_array() filled by hand, as __string()
 * and __assign_str() would: the arguments of __assign_str() changed in
 * Linux 6.10, and this builds the same on every kernel. strscpy() stays
 * inside the room reserved even if the device is renamed meanwhile.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rxe

#if !defined(RXE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RXE_TRACE_H

#include <linux/tracepoint.h>

#include "rxe_verbs.h"
#include "rxe_counters.h"
#include "rxe_hdr.h"
#include "rxe_pkt.h"

DECLARE_EVENT_CLASS(rxe_pkt,
	TP_PROTO(const struct rxe_dev *rxe, const struct rxe_bth *bth,
		 unsigned int len),
	TP_ARGS(rxe, bth, len),
	TP_STRUCT__entry(
		__dynamic_array(char, dev,
				strlen(dev_name(&rxe->ib_dev.dev)) + 1)
		__field(u8, opcode)
		__field(u32, qpn)
		__field(u32, psn)
		__field(unsigned int, len)
	),
	TP_fast_assign(
		strscpy(__get_dynamic_array(dev), dev_name(&rxe->ib_dev.dev),
			__get_dynamic_array_len(dev));
		__entry->opcode = bth->opcode;
		__entry->qpn = bth_qpn(bth);
		__entry->psn = bth_psn(bth);
		__entry->len = len;
	),
	TP_printk("%s opcode=0x%02x qpn=%u psn=%u len=%u", __get_str(dev),
		  __entry->opcode, __entry->qpn, __entry->psn, __entry->len)
);

DEFINE_EVENT(rxe_pkt, rxe_pkt_rx_bth,
	TP_PROTO(const struct rxe_dev *rxe, const struct rxe_bth *bth,
		 unsigned int len),
	TP_ARGS(rxe, bth, len)
);

DEFINE_EVENT(rxe_pkt, rxe_pkt_tx_bth,
	TP_PROTO(const struct rxe_dev *rxe, const struct rxe_bth *bth,
		 unsigned int len),
	TP_ARGS(rxe, bth, len)
);

TRACE_EVENT(rxe_pkt_drop,
	TP_PROTO(const struct rxe_dev *rxe, const struct sk_buff *skb,
		 enum rxe_counter reason),
	TP_ARGS(rxe, skb, reason),
	TP_STRUCT__entry(
		__dynamic_array(char, dev,
				strlen(dev_name(&rxe->ib_dev.dev)) + 1)
		__field(unsigned int, len)
		__field(int, reason)
	),
	TP_fast_assign(
		strscpy(__get_dynamic_array(dev), dev_name(&rxe->ib_dev.dev),
			__get_dynamic_array_len(dev));
		__entry->len = skb->len;
		__entry->reason = reason;
	),
	TP_printk("%s len=%u reason=%s", __get_str(dev), __entry->len,
		  __print_symbolic(__entry->reason,
				   { RXE_CNT_DROP_ICRC, "icrc" },
				   { RXE_CNT_DROP_MALFORMED, "malformed" },
				   { RXE_CNT_DROP_OPCODE, "opcode" },
				   { RXE_CNT_DROP_QPN, "qpn" },
				   { RXE_CNT_DROP_PKEY, "pkey" },
				   { RXE_CNT_DROP_QKEY, "qkey" },
				   { RXE_CNT_DROP_QP_STATE, "qp_state" },
				   { RXE_CNT_DROP_ADDR, "addr" },
				   { RXE_CNT_DROP_NOMEM, "nomem" },
				   { RXE_CNT_RCVD_CNP, "cnp" }))
);

TRACE_EVENT(rxe_retry,
	TP_PROTO(const struct rxe_qp *qp, u32 psn),
	TP_ARGS(qp, psn),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
	),
	TP_fast_assign(
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
	),
	TP_printk("qpn=%u from psn=%u", __entry->qpn, __entry->psn)
);

TRACE_EVENT(rxe_wqe_complete,
	TP_PROTO(const struct rxe_qp *qp, u64 wr_id, enum ib_wc_status status),
	TP_ARGS(qp, wr_id, status),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->qpn = qp->ibqp.qp_num;
		__entry->wr_id = wr_id;
		__entry->status = status;
	),
	TP_printk("qpn=%u wr_id=0x%llx status=%d", __entry->qpn,
		  __entry->wr_id, __entry->status)
);

#endif /* RXE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rxe_trace
#include <trace/define_trace.h>

#ifndef RXE_TRACE_HELPERS_H
#define RXE_TRACE_HELPERS_H

/* A received packet: its data starts at the BTH. */
static inline void trace_rxe_pkt_rx(const struct rxe_dev *rxe,
				    struct sk_buff *skb,
				    const struct rxe_pkt *pkt)
{
	trace_rxe_pkt_rx_bth(rxe, (const struct rxe_bth *)skb->data, skb->len);
}

/* A packet going out: its BTH follows the UDP header. */
static inline void trace_rxe_pkt_tx(const struct rxe_dev *rxe,
				    struct sk_buff *skb, unsigned int bth_len)
{
	trace_rxe_pkt_tx_bth(rxe, (const struct rxe_bth *)
			     (skb_transport_header(skb) + sizeof(struct udphdr)),
			     bth_len);
}

#endif /* RXE_TRACE_HELPERS_H */
