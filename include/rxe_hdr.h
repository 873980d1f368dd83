/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 wire headers (IBA vol 1, ch. 9, and the RoCEv2 annex A17):
 * one natural struct per header, with typed accessors. Every multi-byte
 * field is big-endian on the wire; 64-bit fields that sit at 4-byte
 * offsets are read with the unaligned helpers.
 */
#ifndef RXE_HDR_H
#define RXE_HDR_H

#include <linux/bitfield.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#include "rxe_compat.h"

/* UDP destination port of RoCEv2, IANA-assigned. */
#define RXE_ROCE_V2_PORT	4791

/* Invariant CRC trailing every packet. */
#define RXE_ICRC_SIZE		4

/* PSNs are 24 bits and wrap. */
#define RXE_PSN_MASK		GENMASK(23, 0)

/* Transport header version carried in every BTH. */
#define RXE_BTH_TVER		0

/**
 * struct rxe_bth - Base Transport Header, 12 bytes
 * @opcode: transport (3 bits) and operation (5 bits)
 * @flags: solicited event, migration, pad count, header version
 * @pkey: partition key
 * @qpn: FECN, BECN, 6 reserved bits, destination QP
 * @apsn: acknowledge request, 7 reserved bits, PSN
 */
struct rxe_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
};

static_assert(sizeof(struct rxe_bth) == 12);

#define BTH_SE			BIT(7)
#define BTH_MIG			BIT(6)
#define BTH_PAD			GENMASK(5, 4)
#define BTH_TVER		GENMASK(3, 0)
#define BTH_FECN		BIT(31)
#define BTH_BECN		BIT(30)
#define BTH_RESV6A		GENMASK(29, 24)
#define BTH_QPN			GENMASK(23, 0)
#define BTH_ACK			BIT(31)
#define BTH_RESV7		GENMASK(30, 24)
#define BTH_PSN			GENMASK(23, 0)

static inline u8 bth_pad(const struct rxe_bth *bth)
{
	return FIELD_GET(BTH_PAD, bth->flags);
}

static inline u8 bth_tver(const struct rxe_bth *bth)
{
	return FIELD_GET(BTH_TVER, bth->flags);
}

static inline bool bth_se(const struct rxe_bth *bth)
{
	return bth->flags & BTH_SE;
}

static inline u32 bth_qpn(const struct rxe_bth *bth)
{
	return be32_get_bits(bth->qpn, BTH_QPN);
}

static inline bool bth_becn(const struct rxe_bth *bth)
{
	return be32_get_bits(bth->qpn, BTH_BECN);
}

static inline u32 bth_psn(const struct rxe_bth *bth)
{
	return be32_get_bits(bth->apsn, BTH_PSN);
}

static inline bool bth_ack(const struct rxe_bth *bth)
{
	return be32_get_bits(bth->apsn, BTH_ACK);
}

static inline u16 bth_pkey(const struct rxe_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

/**
 * bth_init() - fill a BTH
 * @bth: the header
 * @opcode: the opcode
 * @se: solicited event
 * @pad: pad bytes before the ICRC
 * @pkey: partition key
 * @qpn: destination QP
 * @ack: acknowledge request
 * @psn: packet sequence number
 */
static inline void bth_init(struct rxe_bth *bth, u8 opcode, bool se, u8 pad,
			    u16 pkey, u32 qpn, bool ack, u32 psn)
{
	bth->opcode = opcode;
	bth->flags = (se ? BTH_SE : 0) | FIELD_PREP(BTH_PAD, pad) |
		     FIELD_PREP(BTH_TVER, RXE_BTH_TVER);
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = cpu_to_be32(FIELD_PREP(BTH_QPN, qpn));
	bth->apsn = cpu_to_be32((ack ? BTH_ACK : 0) | FIELD_PREP(BTH_PSN, psn));
}

/**
 * struct rxe_reth - RDMA Extended Transport Header, 16 bytes
 * @va: virtual address (unaligned on the wire)
 * @rkey: remote key
 * @len: DMA length of the whole message
 */
struct rxe_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

static_assert(sizeof(struct rxe_reth) == 16);

static inline u64 reth_va(const struct rxe_reth *reth)
{
	return get_unaligned_be64(&reth->va);
}

static inline u32 reth_rkey(const struct rxe_reth *reth)
{
	return be32_to_cpu(reth->rkey);
}

static inline u32 reth_len(const struct rxe_reth *reth)
{
	return be32_to_cpu(reth->len);
}

static inline void reth_init(struct rxe_reth *reth, u64 va, u32 rkey, u32 len)
{
	put_unaligned_be64(va, &reth->va);
	reth->rkey = cpu_to_be32(rkey);
	reth->len = cpu_to_be32(len);
}

/**
 * struct rxe_aeth - ACK Extended Transport Header, 4 bytes
 * @smsn: syndrome (8 bits) and message sequence number (24 bits)
 */
struct rxe_aeth {
	__be32 smsn;
};

static_assert(sizeof(struct rxe_aeth) == 4);

#define AETH_SYN		GENMASK(31, 24)
#define AETH_MSN		GENMASK(23, 0)

/* Syndrome: two type bits, then a five-bit value. */
#define AETH_TYPE		GENMASK(6, 5)
#define AETH_VALUE		GENMASK(4, 0)
#define AETH_TYPE_ACK		0
#define AETH_TYPE_RNR_NAK	1
#define AETH_TYPE_NAK		3

/* NAK codes (the value of a NAK syndrome). */
#define AETH_NAK_PSN_SEQ_ERR	0
#define AETH_NAK_INVALID_REQ	1
#define AETH_NAK_REM_ACC_ERR	2
#define AETH_NAK_REM_OP_ERR	3

/* The credit value of an ACK that advertises no credit count. */
#define AETH_CREDIT_INVALID	31

static inline u8 aeth_syn(const struct rxe_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, AETH_SYN);
}

static inline u32 aeth_msn(const struct rxe_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, AETH_MSN);
}

static inline void aeth_init(struct rxe_aeth *aeth, u8 syn, u32 msn)
{
	aeth->smsn = cpu_to_be32(FIELD_PREP(AETH_SYN, syn) |
				 FIELD_PREP(AETH_MSN, msn));
}

/**
 * aeth_syndrome() - build a syndrome
 * @type: AETH_TYPE_ACK, AETH_TYPE_RNR_NAK or AETH_TYPE_NAK
 * @value: the credit count, RNR timer code or NAK code
 *
 * Return: the 8-bit syndrome.
 */
static inline u8 aeth_syndrome(u8 type, u8 value)
{
	return FIELD_PREP(AETH_TYPE, type) | FIELD_PREP(AETH_VALUE, value);
}

/* Is @syn an ACK's, whatever credit count it carries? */
static inline bool aeth_syn_ack(u8 syn)
{
	return FIELD_GET(AETH_TYPE, syn) == AETH_TYPE_ACK;
}

/* Is @syn a NAK for a PSN sequence error? Its reserved bit does not count. */
static inline bool aeth_syn_seq_nak(u8 syn)
{
	return FIELD_GET(AETH_TYPE, syn) == AETH_TYPE_NAK &&
	       FIELD_GET(AETH_VALUE, syn) == AETH_NAK_PSN_SEQ_ERR;
}

/**
 * struct rxe_atmeth - Atomic Extended Transport Header, 28 bytes
 * @va: virtual address (unaligned on the wire)
 * @rkey: remote key
 * @swap_add: swap or add data
 * @compare: compare data
 */
struct rxe_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

static_assert(sizeof(struct rxe_atmeth) == 28);

static inline u64 atmeth_va(const struct rxe_atmeth *a)
{
	return get_unaligned_be64(&a->va);
}

static inline u32 atmeth_rkey(const struct rxe_atmeth *a)
{
	return be32_to_cpu(a->rkey);
}

static inline u64 atmeth_swap_add(const struct rxe_atmeth *a)
{
	return get_unaligned_be64(&a->swap_add);
}

static inline u64 atmeth_compare(const struct rxe_atmeth *a)
{
	return get_unaligned_be64(&a->compare);
}

static inline void atmeth_init(struct rxe_atmeth *a, u64 va, u32 rkey,
			       u64 swap_add, u64 compare)
{
	put_unaligned_be64(va, &a->va);
	a->rkey = cpu_to_be32(rkey);
	put_unaligned_be64(swap_add, &a->swap_add);
	put_unaligned_be64(compare, &a->compare);
}

/**
 * struct rxe_atmack - Atomic Acknowledge Extended Transport Header, 8 bytes
 * @orig: the original remote data (unaligned on the wire)
 */
struct rxe_atmack {
	__be64 orig;
} __packed;

static_assert(sizeof(struct rxe_atmack) == 8);

static inline u64 atmack_orig(const struct rxe_atmack *a)
{
	return get_unaligned_be64(&a->orig);
}

static inline void atmack_init(struct rxe_atmack *a, u64 orig)
{
	put_unaligned_be64(orig, &a->orig);
}

/**
 * struct rxe_immdt - Immediate Data Extended Transport Header, 4 bytes
 * @imm: the immediate data, passed through as is
 */
struct rxe_immdt {
	__be32 imm;
};

static_assert(sizeof(struct rxe_immdt) == 4);

/**
 * struct rxe_ieth - Invalidate Extended Transport Header, 4 bytes
 * @rkey: the remote key to invalidate
 */
struct rxe_ieth {
	__be32 rkey;
};

static_assert(sizeof(struct rxe_ieth) == 4);

static inline u32 ieth_rkey(const struct rxe_ieth *ieth)
{
	return be32_to_cpu(ieth->rkey);
}

/**
 * struct rxe_deth - Datagram Extended Transport Header, 8 bytes
 * @qkey: queue key
 * @sqp: 8 reserved bits and the source QP
 */
struct rxe_deth {
	__be32 qkey;
	__be32 sqp;
};

static_assert(sizeof(struct rxe_deth) == 8);

#define DETH_SQP		GENMASK(23, 0)

static inline u32 deth_qkey(const struct rxe_deth *deth)
{
	return be32_to_cpu(deth->qkey);
}

static inline u32 deth_sqp(const struct rxe_deth *deth)
{
	return be32_get_bits(deth->sqp, DETH_SQP);
}

static inline void deth_init(struct rxe_deth *deth, u32 qkey, u32 sqp)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqp = cpu_to_be32(FIELD_PREP(DETH_SQP, sqp));
}

/**
 * struct rxe_feth - FLUSH Extended Transport Header, 4 bytes (Memory
 * Placement Extensions annex); it comes before the RETH
 * @bits: 26 reserved bits, selectivity level (2 bits), placement type
 *	(4 bits)
 */
struct rxe_feth {
	__be32 bits;
};

static_assert(sizeof(struct rxe_feth) == 4);

/* Placement type: bit 0 global visibility, bit 1 persistence. */
#define FETH_PLT		GENMASK(3, 0)
/* Selectivity level: 0 the memory range, 1 the whole memory region. */
#define FETH_SEL		GENMASK(5, 4)

static inline u8 feth_plt(const struct rxe_feth *feth)
{
	return be32_get_bits(feth->bits, FETH_PLT);
}

static inline u8 feth_sel(const struct rxe_feth *feth)
{
	return be32_get_bits(feth->bits, FETH_SEL);
}

static inline void feth_init(struct rxe_feth *feth, u8 plt, u8 sel)
{
	feth->bits = cpu_to_be32(FIELD_PREP(FETH_PLT, plt) |
				 FIELD_PREP(FETH_SEL, sel));
}

/**
 * rxe_psn_diff() - signed distance between two PSNs
 * @a: a PSN
 * @b: another PSN
 *
 * Return: a - b in 24-bit serial arithmetic: negative when @a comes
 * before @b, within half the PSN space.
 */
static inline s32 rxe_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/**
 * rxe_psn_add() - advance a PSN
 * @psn: the PSN
 * @n: how far
 *
 * Return: the PSN @n steps on, wrapped.
 */
static inline u32 rxe_psn_add(u32 psn, u32 n)
{
	return (psn + n) & RXE_PSN_MASK;
}

#endif /* RXE_HDR_H */
