// SPDX-License-Identifier: GPL-2.0
/*
 * The opcode table (IBA vol 1, 9.2 and table 38), for the RC, UC and UD
 * transports and the RoCEv2 CNP. Offsets are derived from the header mask,
 * so a row only states which headers an opcode carries and what it is.
 */

#include <linux/kernel.h>

#include "rxe_opcode.h"

/* Bytes of the headers in mask @m. */
#define RXE_HDRS_LEN(m) (RXE_BTH_BYTES +				\
	((m) & RXE_DETH_MASK ? RXE_DETH_BYTES : 0) +			\
	((m) & RXE_RETH_MASK ? RXE_RETH_BYTES : 0) +			\
	((m) & RXE_ATMETH_MASK ? RXE_ATMETH_BYTES : 0) +		\
	((m) & RXE_AETH_MASK ? RXE_AETH_BYTES : 0) +			\
	((m) & RXE_ATMACK_MASK ? RXE_ATMACK_BYTES : 0) +		\
	((m) & RXE_IMMDT_MASK ? RXE_IMMDT_BYTES : 0) +			\
	((m) & RXE_IETH_MASK ? RXE_IETH_BYTES : 0) +			\
	((m) & RXE_CNP_MASK ? RXE_CNP_BYTES : 0))

/* Where header @h starts: after every header before it in wire order. */
#define RXE_HDR_OFF(m, h)						\
	((m) & BIT(h) ? RXE_HDRS_LEN((m) & (BIT(h) - 1) & ~RXE_BTH_MASK) : 0)

#define RXE_OP(op, m) [IB_OPCODE_ ## op] = {				\
	.name = #op,							\
	.mask = (m) | RXE_BTH_MASK,					\
	.length = RXE_HDRS_LEN(m),					\
	.offset = {							\
		[RXE_BTH] = 0,						\
		[RXE_DETH] = RXE_HDR_OFF(m, RXE_DETH),			\
		[RXE_RETH] = RXE_HDR_OFF(m, RXE_RETH),			\
		[RXE_ATMETH] = RXE_HDR_OFF(m, RXE_ATMETH),		\
		[RXE_AETH] = RXE_HDR_OFF(m, RXE_AETH),			\
		[RXE_ATMACK] = RXE_HDR_OFF(m, RXE_ATMACK),		\
		[RXE_IMMDT] = RXE_HDR_OFF(m, RXE_IMMDT),		\
		[RXE_IETH] = RXE_HDR_OFF(m, RXE_IETH),			\
	},								\
}

/* Packet kinds shared by the RC and UC rows. */
#define SEND_FIRST	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_SEND_MASK | \
			 RXE_RWR_MASK | RXE_START_MASK)
#define SEND_MIDDLE	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_SEND_MASK | \
			 RXE_MIDDLE_MASK)
#define SEND_LAST	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_SEND_MASK | \
			 RXE_COMP_MASK | RXE_END_MASK)
#define SEND_ONLY	(SEND_FIRST | SEND_LAST)
#define WRITE_FIRST	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_WRITE_MASK | \
			 RXE_RETH_MASK | RXE_START_MASK)
#define WRITE_MIDDLE	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_WRITE_MASK | \
			 RXE_MIDDLE_MASK)
#define WRITE_LAST	(RXE_REQ_MASK | RXE_PAYLOAD_MASK | RXE_WRITE_MASK | \
			 RXE_END_MASK)
#define WRITE_LAST_IMM	(WRITE_LAST | RXE_IMMDT_MASK | RXE_RWR_MASK | \
			 RXE_COMP_MASK)
#define WRITE_ONLY	(WRITE_FIRST | WRITE_LAST)
#define WRITE_ONLY_IMM	(WRITE_FIRST | WRITE_LAST_IMM)
#define READ_RSP	(RXE_RSP_MASK | RXE_PAYLOAD_MASK | RXE_READ_MASK)

const struct rxe_opcode_info rxe_opcode[256] = {
	RXE_OP(RC_SEND_FIRST, SEND_FIRST),
	RXE_OP(RC_SEND_MIDDLE, SEND_MIDDLE),
	RXE_OP(RC_SEND_LAST, SEND_LAST),
	RXE_OP(RC_SEND_LAST_WITH_IMMEDIATE, SEND_LAST | RXE_IMMDT_MASK),
	RXE_OP(RC_SEND_ONLY, SEND_ONLY),
	RXE_OP(RC_SEND_ONLY_WITH_IMMEDIATE, SEND_ONLY | RXE_IMMDT_MASK),
	RXE_OP(RC_RDMA_WRITE_FIRST, WRITE_FIRST),
	RXE_OP(RC_RDMA_WRITE_MIDDLE, WRITE_MIDDLE),
	RXE_OP(RC_RDMA_WRITE_LAST, WRITE_LAST),
	RXE_OP(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, WRITE_LAST_IMM),
	RXE_OP(RC_RDMA_WRITE_ONLY, WRITE_ONLY),
	RXE_OP(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, WRITE_ONLY_IMM),
	RXE_OP(RC_RDMA_READ_REQUEST, RXE_REQ_MASK | RXE_READ_MASK |
	       RXE_RETH_MASK | RXE_START_MASK | RXE_END_MASK),
	RXE_OP(RC_RDMA_READ_RESPONSE_FIRST, READ_RSP | RXE_AETH_MASK |
	       RXE_START_MASK),
	RXE_OP(RC_RDMA_READ_RESPONSE_MIDDLE, READ_RSP | RXE_MIDDLE_MASK),
	RXE_OP(RC_RDMA_READ_RESPONSE_LAST, READ_RSP | RXE_AETH_MASK |
	       RXE_END_MASK),
	RXE_OP(RC_RDMA_READ_RESPONSE_ONLY, READ_RSP | RXE_AETH_MASK |
	       RXE_START_MASK | RXE_END_MASK),
	RXE_OP(RC_ACKNOWLEDGE, RXE_RSP_MASK | RXE_AETH_MASK |
	       RXE_START_MASK | RXE_END_MASK),
	RXE_OP(RC_ATOMIC_ACKNOWLEDGE, RXE_RSP_MASK | RXE_ATOMIC_MASK |
	       RXE_AETH_MASK | RXE_ATMACK_MASK | RXE_START_MASK |
	       RXE_END_MASK),
	RXE_OP(RC_COMPARE_SWAP, RXE_REQ_MASK | RXE_ATOMIC_MASK |
	       RXE_ATMETH_MASK | RXE_START_MASK | RXE_END_MASK),
	RXE_OP(RC_FETCH_ADD, RXE_REQ_MASK | RXE_ATOMIC_MASK |
	       RXE_ATMETH_MASK | RXE_START_MASK | RXE_END_MASK),
	RXE_OP(RC_SEND_LAST_WITH_INVALIDATE, SEND_LAST | RXE_IETH_MASK),
	RXE_OP(RC_SEND_ONLY_WITH_INVALIDATE, SEND_ONLY | RXE_IETH_MASK),

	RXE_OP(UC_SEND_FIRST, SEND_FIRST),
	RXE_OP(UC_SEND_MIDDLE, SEND_MIDDLE),
	RXE_OP(UC_SEND_LAST, SEND_LAST),
	RXE_OP(UC_SEND_LAST_WITH_IMMEDIATE, SEND_LAST | RXE_IMMDT_MASK),
	RXE_OP(UC_SEND_ONLY, SEND_ONLY),
	RXE_OP(UC_SEND_ONLY_WITH_IMMEDIATE, SEND_ONLY | RXE_IMMDT_MASK),
	RXE_OP(UC_RDMA_WRITE_FIRST, WRITE_FIRST),
	RXE_OP(UC_RDMA_WRITE_MIDDLE, WRITE_MIDDLE),
	RXE_OP(UC_RDMA_WRITE_LAST, WRITE_LAST),
	RXE_OP(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, WRITE_LAST_IMM),
	RXE_OP(UC_RDMA_WRITE_ONLY, WRITE_ONLY),
	RXE_OP(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, WRITE_ONLY_IMM),

	RXE_OP(UD_SEND_ONLY, SEND_ONLY | RXE_DETH_MASK),
	RXE_OP(UD_SEND_ONLY_WITH_IMMEDIATE, SEND_ONLY | RXE_DETH_MASK |
	       RXE_IMMDT_MASK),

	RXE_OP(CNP, RXE_CNP_MASK),
};

static_assert(RXE_HDRS_LEN(WRITE_ONLY_IMM) <= RXE_MAX_HDR_BYTES);

#ifdef DEBUG
/*
 * Header bytes of some opcodes, typed from IBA table 38 rather than
 * derived: the check that the derivation above is right.
 */
static const struct {
	u8 opcode;
	u8 length;
	u8 payload_offset_of;
} rxe_opcode_kat[] = {
	{ IB_OPCODE_RC_SEND_ONLY, 12, RXE_BTH },
	{ IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE, 16, RXE_IMMDT },
	{ IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE, 16, RXE_IETH },
	{ IB_OPCODE_RC_RDMA_WRITE_FIRST, 28, RXE_RETH },
	{ IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 32, RXE_IMMDT },
	{ IB_OPCODE_RC_RDMA_READ_REQUEST, 28, RXE_RETH },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 16, RXE_AETH },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, 12, RXE_BTH },
	{ IB_OPCODE_RC_ACKNOWLEDGE, 16, RXE_AETH },
	{ IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, 24, RXE_ATMACK },
	{ IB_OPCODE_RC_COMPARE_SWAP, 40, RXE_ATMETH },
	{ IB_OPCODE_UD_SEND_ONLY, 20, RXE_DETH },
	{ IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, 24, RXE_IMMDT },
	{ IB_OPCODE_CNP, 28, RXE_BTH },
};

/**
 * rxe_opcode_selftest() - check the table against IBA's header sizes
 *
 * Every known opcode: its length is the sum of its headers' sizes and its
 * headers sit back to back in wire order. Listed opcodes: the length and
 * the offset of their last header match the specification.
 *
 * Return: true when every check passes.
 */
bool rxe_opcode_selftest(void)
{
	static const u8 size[RXE_NUM_HDR_TYPES] = {
		RXE_BTH_BYTES, RXE_DETH_BYTES, RXE_RETH_BYTES,
		RXE_ATMETH_BYTES, RXE_AETH_BYTES, RXE_ATMACK_BYTES,
		RXE_IMMDT_BYTES, RXE_IETH_BYTES,
	};
	const struct rxe_opcode_info *info;
	unsigned int op, h, end, known = 0;
	bool ok = true;

	for (op = 0; op < ARRAY_SIZE(rxe_opcode); op++) {
		info = &rxe_opcode[op];
		if (!info->mask)
			continue;
		known++;
		end = 0;
		for (h = 0; h < RXE_NUM_HDR_TYPES; h++) {
			if (!(info->mask & BIT(h)))
				continue;
			if (info->offset[h] != end) {
				pr_err("opcode %s: header %u at %u, want %u\n",
				       info->name, h, info->offset[h], end);
				ok = false;
			}
			end += size[h];
		}
		if (info->mask & RXE_CNP_MASK)
			end += RXE_CNP_BYTES;
		if (info->length != end) {
			pr_err("opcode %s: length %u, want %u\n", info->name,
			       info->length, end);
			ok = false;
		}
	}

	for (op = 0; op < ARRAY_SIZE(rxe_opcode_kat); op++) {
		info = &rxe_opcode[rxe_opcode_kat[op].opcode];
		h = rxe_opcode_kat[op].payload_offset_of;
		if (info->length != rxe_opcode_kat[op].length ||
		    info->offset[h] + (h == RXE_BTH ? RXE_BTH_BYTES : size[h]) !=
		    (info->mask & RXE_CNP_MASK ? info->length - RXE_CNP_BYTES :
						 info->length)) {
			pr_err("opcode %s: does not match IBA table 38\n",
			       info->name ? info->name : "?");
			ok = false;
		}
	}

	/* 23 RC, 12 UC, 2 UD, and the CNP. */
	if (known != 38) {
		pr_err("opcode table holds %u opcodes, want 38\n", known);
		ok = false;
	}
	pr_info("opcode self-tests: %s\n", ok ? "pass" : "FAIL");
	return ok;
}
#endif /* DEBUG */
