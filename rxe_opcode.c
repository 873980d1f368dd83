// SPDX-License-Identifier: GPL-2.0
/*
 * The opcode table (IBA vol 1, 9.2 and table 38), for the RC, UC and UD
 * transports and the RoCEv2 CNP, and RC's FLUSH and ATOMIC WRITE of the
 * Memory Placement Extensions annex where the kernel has their verbs.
 */

#include <linux/kernel.h>

#include "rxe_opcode.h"

/*
 * A row: the headers and kind of an opcode's packets, the bytes of its
 * headers, and where each extension header starts. Lengths and offsets
 * are typed from IBA table 38; the self-test derives them again from the
 * mask and compares.
 */
#define RXE_OP(op, m, len, ...)						\
	[IB_OPCODE_ ## op] = {						\
		.mask = (m) | RXE_BTH_MASK,				\
		.length = (len),					\
		.offset = { __VA_ARGS__ },				\
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
#define READ_REQ	(RXE_REQ_MASK | RXE_READ_MASK | RXE_RETH_MASK | \
			 RXE_START_MASK | RXE_END_MASK)
#define ACK		(RXE_RSP_MASK | RXE_AETH_MASK | RXE_START_MASK | \
			 RXE_END_MASK)
#define ATOMIC_REQ	(RXE_REQ_MASK | RXE_ATOMIC_MASK | RXE_ATMETH_MASK | \
			 RXE_START_MASK | RXE_END_MASK)
#define READ_RSP_FIRST	(READ_RSP | RXE_AETH_MASK | RXE_START_MASK)
#define READ_RSP_MIDDLE	(READ_RSP | RXE_MIDDLE_MASK)
#define READ_RSP_LAST	(READ_RSP | RXE_AETH_MASK | RXE_END_MASK)
#define READ_RSP_ONLY	(READ_RSP_FIRST | READ_RSP_LAST)
#define ATOMIC_ACK	(ACK | RXE_ATOMIC_MASK | RXE_ATMACK_MASK)
#define SEND_LAST_IMM	(SEND_LAST | RXE_IMMDT_MASK)
#define SEND_ONLY_IMM	(SEND_ONLY | RXE_IMMDT_MASK)
#define SEND_LAST_INV	(SEND_LAST | RXE_IETH_MASK)
#define SEND_ONLY_INV	(SEND_ONLY | RXE_IETH_MASK)
#define UD_SEND_ONLY	(SEND_ONLY | RXE_DETH_MASK)
#define UD_SEND_ONLY_IMM (UD_SEND_ONLY | RXE_IMMDT_MASK)
/*
 * The Memory Placement Extensions: a FLUSH carries its FETH ahead of the
 * RETH, and no payload; an ATOMIC WRITE carries a RETH and the 8 bytes.
 */
#define FLUSH_REQ	(RXE_REQ_MASK | RXE_FLUSH_MASK | RXE_FETH_MASK | \
			 RXE_RETH_MASK | RXE_START_MASK | RXE_END_MASK)
#define AWRITE_REQ	(RXE_REQ_MASK | RXE_AWRITE_MASK | RXE_PAYLOAD_MASK | \
			 RXE_RETH_MASK | RXE_START_MASK | RXE_END_MASK)

const struct rxe_opcode_info rxe_opcode[256] = {
	RXE_OP(RC_SEND_FIRST, SEND_FIRST, 12),
	RXE_OP(RC_SEND_MIDDLE, SEND_MIDDLE, 12),
	RXE_OP(RC_SEND_LAST, SEND_LAST, 12),
	RXE_OP(RC_SEND_LAST_WITH_IMMEDIATE, SEND_LAST_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(RC_SEND_ONLY, SEND_ONLY, 12),
	RXE_OP(RC_SEND_ONLY_WITH_IMMEDIATE, SEND_ONLY_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(RC_RDMA_WRITE_FIRST, WRITE_FIRST, 28, [RXE_RETH] = 12),
	RXE_OP(RC_RDMA_WRITE_MIDDLE, WRITE_MIDDLE, 12),
	RXE_OP(RC_RDMA_WRITE_LAST, WRITE_LAST, 12),
	RXE_OP(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, WRITE_LAST_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(RC_RDMA_WRITE_ONLY, WRITE_ONLY, 28, [RXE_RETH] = 12),
	RXE_OP(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, WRITE_ONLY_IMM, 32,
	       [RXE_RETH] = 12, [RXE_IMMDT] = 28),
	RXE_OP(RC_RDMA_READ_REQUEST, READ_REQ, 28, [RXE_RETH] = 12),
	RXE_OP(RC_RDMA_READ_RESPONSE_FIRST, READ_RSP_FIRST, 16,
	       [RXE_AETH] = 12),
	RXE_OP(RC_RDMA_READ_RESPONSE_MIDDLE, READ_RSP_MIDDLE, 12),
	RXE_OP(RC_RDMA_READ_RESPONSE_LAST, READ_RSP_LAST, 16,
	       [RXE_AETH] = 12),
	RXE_OP(RC_RDMA_READ_RESPONSE_ONLY, READ_RSP_ONLY, 16, [RXE_AETH] = 12),
	RXE_OP(RC_ACKNOWLEDGE, ACK, 16, [RXE_AETH] = 12),
	RXE_OP(RC_ATOMIC_ACKNOWLEDGE, ATOMIC_ACK, 24,
	       [RXE_AETH] = 12, [RXE_ATMACK] = 16),
	RXE_OP(RC_COMPARE_SWAP, ATOMIC_REQ, 40, [RXE_ATMETH] = 12),
	RXE_OP(RC_FETCH_ADD, ATOMIC_REQ, 40, [RXE_ATMETH] = 12),
	RXE_OP(RC_SEND_LAST_WITH_INVALIDATE, SEND_LAST_INV, 16,
	       [RXE_IETH] = 12),
	RXE_OP(RC_SEND_ONLY_WITH_INVALIDATE, SEND_ONLY_INV, 16,
	       [RXE_IETH] = 12),
#ifdef RXE_HAVE_MPE
	RXE_OP(RC_FLUSH, FLUSH_REQ, 32, [RXE_FETH] = 12, [RXE_RETH] = 16),
	RXE_OP(RC_ATOMIC_WRITE, AWRITE_REQ, 28, [RXE_RETH] = 12),
#endif

	RXE_OP(UC_SEND_FIRST, SEND_FIRST, 12),
	RXE_OP(UC_SEND_MIDDLE, SEND_MIDDLE, 12),
	RXE_OP(UC_SEND_LAST, SEND_LAST, 12),
	RXE_OP(UC_SEND_LAST_WITH_IMMEDIATE, SEND_LAST_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(UC_SEND_ONLY, SEND_ONLY, 12),
	RXE_OP(UC_SEND_ONLY_WITH_IMMEDIATE, SEND_ONLY_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(UC_RDMA_WRITE_FIRST, WRITE_FIRST, 28, [RXE_RETH] = 12),
	RXE_OP(UC_RDMA_WRITE_MIDDLE, WRITE_MIDDLE, 12),
	RXE_OP(UC_RDMA_WRITE_LAST, WRITE_LAST, 12),
	RXE_OP(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, WRITE_LAST_IMM, 16,
	       [RXE_IMMDT] = 12),
	RXE_OP(UC_RDMA_WRITE_ONLY, WRITE_ONLY, 28, [RXE_RETH] = 12),
	RXE_OP(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, WRITE_ONLY_IMM, 32,
	       [RXE_RETH] = 12, [RXE_IMMDT] = 28),

	RXE_OP(UD_SEND_ONLY, UD_SEND_ONLY, 20, [RXE_DETH] = 12),
	RXE_OP(UD_SEND_ONLY_WITH_IMMEDIATE, UD_SEND_ONLY_IMM, 24,
	       [RXE_DETH] = 12, [RXE_IMMDT] = 20),

	[RXE_OPCODE_CNP] = {
		.mask = RXE_CNP_MASK | RXE_BTH_MASK,
		.length = RXE_BTH_BYTES + RXE_CNP_BYTES,
	},
};

#ifdef DEBUG
#ifdef RXE_HAVE_MPE
#define RXE_KNOWN_OPCODES	40
#else
#define RXE_KNOWN_OPCODES	38
#endif

/* Bytes of each extension header, in enum rxe_hdr_type order. */
static const u8 rxe_hdr_bytes[RXE_NUM_HDR_TYPES] = {
	RXE_BTH_BYTES, RXE_DETH_BYTES, RXE_FETH_BYTES, RXE_RETH_BYTES,
	RXE_ATMETH_BYTES, RXE_AETH_BYTES, RXE_ATMACK_BYTES, RXE_IMMDT_BYTES,
	RXE_IETH_BYTES,
};

/*
 * The lengths and offsets were typed from the specification; here they
 * are derived again from which headers each opcode carries: the headers
 * sit back to back in wire order after the BTH, and the length is their
 * sum. The count of opcodes guards against a row gone missing.
 */

/**
 * rxe_opcode_selftest() - check the table against its header masks
 *
 * Return: true when every check passes.
 */
bool rxe_opcode_selftest(void)
{
	const struct rxe_opcode_info *info;
	unsigned int op, h, end, known = 0;
	bool ok = true;

	for (op = 0; op < ARRAY_SIZE(rxe_opcode); op++) {
		info = &rxe_opcode[op];
		if (!info->mask)
			continue;
		known++;
		end = RXE_BTH_BYTES;
		for (h = RXE_BTH + 1; h < RXE_NUM_HDR_TYPES; h++) {
			if (!(info->mask & BIT(h))) {
				if (info->offset[h]) {
					pr_err("opcode 0x%02x: offset of absent header %u\n",
					       op, h);
					ok = false;
				}
				continue;
			}
			if (info->offset[h] != end) {
				pr_err("opcode 0x%02x: header %u at %u, want %u\n",
				       op, h, info->offset[h], end);
				ok = false;
			}
			end += rxe_hdr_bytes[h];
		}
		if (info->mask & RXE_CNP_MASK)
			end += RXE_CNP_BYTES;
		if (info->length != end || info->length > RXE_MAX_HDR_BYTES) {
			pr_err("opcode 0x%02x: length %u, want %u\n", op,
			       info->length, end);
			ok = false;
		}
	}

	/* 23 RC (25 with FLUSH and ATOMIC WRITE), 12 UC, 2 UD, and the CNP. */
	if (known != RXE_KNOWN_OPCODES) {
		pr_err("opcode table holds %u opcodes, want %u\n", known,
		       RXE_KNOWN_OPCODES);
		ok = false;
	}
	pr_info("opcode self-tests: %s\n", ok ? "pass" : "FAIL");
	return ok;
}
#endif /* DEBUG */
