/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The opcode table: for every opcode we carry, which headers follow the
 * BTH, where each one starts, and what kind of packet it is.
 */
#ifndef RXE_OPCODE_H
#define RXE_OPCODE_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>

#include "rxe_hdr.h"

/**
 * enum rxe_hdr_type - the headers a packet may carry, in wire order
 * @RXE_BTH: base transport header
 * @RXE_DETH: datagram extended transport header
 * @RXE_FETH: FLUSH extended transport header
 * @RXE_RETH: RDMA extended transport header
 * @RXE_ATMETH: atomic extended transport header
 * @RXE_AETH: ACK extended transport header
 * @RXE_ATMACK: atomic acknowledge extended transport header
 * @RXE_IMMDT: immediate data
 * @RXE_IETH: invalidate extended transport header
 * @RXE_NUM_HDR_TYPES: number of header types
 */
enum rxe_hdr_type {
	RXE_BTH,
	RXE_DETH,
	RXE_FETH,
	RXE_RETH,
	RXE_ATMETH,
	RXE_AETH,
	RXE_ATMACK,
	RXE_IMMDT,
	RXE_IETH,
	RXE_NUM_HDR_TYPES,
};

/* Which headers a packet carries; the bit order is the wire order. */
#define RXE_BTH_MASK		BIT(RXE_BTH)
#define RXE_DETH_MASK		BIT(RXE_DETH)
#define RXE_FETH_MASK		BIT(RXE_FETH)
#define RXE_RETH_MASK		BIT(RXE_RETH)
#define RXE_ATMETH_MASK		BIT(RXE_ATMETH)
#define RXE_AETH_MASK		BIT(RXE_AETH)
#define RXE_ATMACK_MASK		BIT(RXE_ATMACK)
#define RXE_IMMDT_MASK		BIT(RXE_IMMDT)
#define RXE_IETH_MASK		BIT(RXE_IETH)

/* The header bits stay below the kind bits. */
static_assert(RXE_NUM_HDR_TYPES <= 9);

/* What kind of packet it is. */
#define RXE_PAYLOAD_MASK	BIT(9)	/* may carry payload */
#define RXE_REQ_MASK		BIT(10)	/* request: for the responder */
#define RXE_RSP_MASK		BIT(11)	/* response or ACK: for the completer */
#define RXE_SEND_MASK		BIT(12)
#define RXE_WRITE_MASK		BIT(13)
#define RXE_READ_MASK		BIT(14)	/* READ request or READ response */
#define RXE_ATOMIC_MASK		BIT(15)	/* atomic request or atomic ACK */
#define RXE_RWR_MASK		BIT(16)	/* consumes a receive WQE */
#define RXE_COMP_MASK		BIT(17)	/* completes a receive WQE */
#define RXE_START_MASK		BIT(18)	/* first or only packet of a message */
#define RXE_MIDDLE_MASK		BIT(19)
#define RXE_END_MASK		BIT(20)	/* last or only packet of a message */
#define RXE_CNP_MASK		BIT(21)	/* congestion notification */
#define RXE_FLUSH_MASK		BIT(22)	/* RDMA FLUSH request */
#define RXE_AWRITE_MASK		BIT(23)	/* RDMA ATOMIC WRITE request */

/* Header bytes. */
#define RXE_BTH_BYTES		12
#define RXE_DETH_BYTES		8
#define RXE_FETH_BYTES		4
#define RXE_RETH_BYTES		16
#define RXE_ATMETH_BYTES	28
#define RXE_AETH_BYTES		4
#define RXE_ATMACK_BYTES	8
#define RXE_IMMDT_BYTES		4
#define RXE_IETH_BYTES		4
/* The payload of an ATOMIC WRITE: the 8 bytes it stores. */
#define RXE_AWRITE_BYTES	8
/* A CNP carries 16 reserved bytes after its BTH. */
#define RXE_CNP_BYTES		16

/*
 * The opcode of a RoCEv2 CNP, 10000001b (annex A17.9.3), as RoCE NICs
 * send it. The IB_OPCODE_CNP of <rdma/ib_pack.h> is 0x80, which is not.
 */
#define RXE_OPCODE_CNP		0x81

/* Largest header stack: BTH + RETH + IMMDT, or BTH + ATMETH. */
#define RXE_MAX_HDR_BYTES	(RXE_BTH_BYTES + RXE_ATMETH_BYTES)

/**
 * struct rxe_opcode_info - what an opcode's packets look like
 * @mask: RXE_*_MASK bits: headers present and packet kind; 0 for an
 *	opcode we do not carry
 * @length: bytes of all headers, BTH included; the payload starts here
 * @offset: where each present header starts, from the BTH
 */
struct rxe_opcode_info {
	u32 mask;
	u8 length;
	u8 offset[RXE_NUM_HDR_TYPES];
};

extern const struct rxe_opcode_info rxe_opcode[256];

/* rxe_opcode.c APIs: */
bool rxe_opcode_selftest(void);

/**
 * rxe_opcode_transport() - the transport an opcode belongs to
 * @opcode: the opcode
 *
 * Return: IB_OPCODE_RC, IB_OPCODE_UC, IB_OPCODE_UD, ...
 */
static inline u8 rxe_opcode_transport(u8 opcode)
{
	return opcode & 0xe0;
}

#endif /* RXE_OPCODE_H */
