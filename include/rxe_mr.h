/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory regions and windows: registration, keys, the checks a key must
 * pass before the data path touches memory through it, and the copies.
 */
#ifndef RXE_MR_H
#define RXE_MR_H

#include "rxe_verbs.h"

/**
 * enum rxe_copy_dir - direction of a copy between memory and a buffer
 * @RXE_TO_MR: write into the region (a receive, a WRITE, a READ response)
 * @RXE_FROM_MR: read from the region (a send, a READ request's reply)
 */
enum rxe_copy_dir {
	RXE_TO_MR,
	RXE_FROM_MR,
};

/**
 * struct rxe_buf - the other side of a copy to or from memory regions
 * @skb: a packet: received ones may be paged, ours to send are linear
 * @ptr: else a kernel buffer
 * @off: where the next byte goes or comes from, advanced by each copy
 */
struct rxe_buf {
	struct sk_buff *skb;
	void *ptr;
	u32 off;
};

/* rxe_mr.c APIs: */
int rxe_mr_module_init(void);
void rxe_mr_module_exit(void);
struct ib_mr *rxe_mr_get_dma(struct ib_pd *ibpd, int access);
struct ib_mr *rxe_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata);
struct ib_mr *rxe_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg);
int rxe_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);
int rxe_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata);
struct rxe_mr *rxe_mr_get_local(struct rxe_dev *rxe, const struct ib_pd *pd,
				u32 lkey, u64 iova, u64 length, u32 access,
				enum ib_wc_status *status);
struct rxe_mr *rxe_mr_get_remote(const struct rxe_qp *qp, u32 rkey, u64 iova,
				 u64 length, u32 access);
struct rxe_mr *rxe_mr_get_remote_key(const struct rxe_qp *qp, u32 rkey,
				     u32 access);
int rxe_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int rxe_mw_dealloc(struct ib_mw *ibmw);
void rxe_mr_put(struct rxe_mr *mr);
int rxe_mr_copy(struct rxe_mr *mr, u64 iova, struct rxe_buf *buf,
		u32 length, enum rxe_copy_dir dir);
int rxe_mr_copy_sgl(struct rxe_qp *qp, const struct ib_sge *sge, u32 num_sge,
		    u32 offset, struct rxe_buf *buf, u32 length,
		    enum rxe_copy_dir dir, u32 access, enum ib_wc_status *status);
int rxe_mr_lend(struct rxe_mr *mr, u64 iova, struct sk_buff *skb, u32 length);
int rxe_mr_lend_sgl(struct rxe_qp *qp, const struct ib_sge *sge, u32 num_sge,
		    u32 offset, struct sk_buff *skb, u32 length,
		    enum ib_wc_status *status);
void rxe_mr_local_op(struct rxe_qp *qp, struct rxe_swqe *wqe);
int rxe_mr_invalidate(struct rxe_qp *qp, u32 rkey, bool remote);
void *rxe_mr_atomic_addr(struct rxe_mr *mr, u64 iova, struct page **page);

#endif /* RXE_MR_H */
