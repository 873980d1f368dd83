// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA FLUSH from userspace, end to end: requester, responder and
 * completer of the rxe device, on two RC QPs of one device connected to
 * each other over the device's own GID (loopback).
 *
 * rdma-core 44 (Debian 12) cannot post a FLUSH: its rxe provider has no
 * wr_flush and leaves IBV_QP_EX_WITH_FLUSH out of its send ops. Newer
 * providers write a FLUSH's send WQE straight into the SQ ring, which is
 * shared memory (an mmap of /dev/infiniband/uverbsN), so this program
 * writes it there itself, exactly as they do, without knowing anything
 * of the provider's private structs: between ibv_wr_start() and
 * ibv_wr_complete() it builds an RDMA WRITE with a unique wr_id and
 * remote address as a placeholder, finds that WQE in the process's
 * mappings of the uverbs device, and rewrites its slot as a FLUSH
 * (struct rxe_send_wqe of the kernel's uapi rdma_user_rxe.h, 6.2 and
 * later); ibv_wr_complete() then publishes it and rings the doorbell.
 * A placeholder that cannot be found is a failure, never a skip.
 *
 *	--expect yes	the driver has FLUSH (kernels >= 6.2)
 *	--expect no	it has not (6.1): FLUSH fails locally and an MR
 *			cannot be registered for it
 *
 * Prints "ok - what" or "not ok - what: why" per check and "# N failed";
 * exits 1 when any check failed.
 *
 * Built on the host before the guests boot (build_tools, lib/common.sh),
 * with the uapi header of a 6.2+ kernel:
 *	gcc -Wall -Wextra -Werror -O2 \
 *		-include .../uapi/rdma/rdma_user_rxe.h \
 *		-o rxe-flush rxe-flush.c -l:libibverbs.so.1
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#ifndef RDMA_USER_RXE_H
#error "build with -include <a 6.2+ kernel's uapi/rdma/rdma_user_rxe.h>"
#endif

#include "rxe-maps.h"

/* What rdma-core 44's headers do not name yet (kernel uapi values). */
#define WR_FLUSH		14		/* IB_UVERBS_WR_FLUSH */
#define WC_FLUSH		8		/* IB_UVERBS_WC_FLUSH */
#define ACCESS_FLUSH_GLOBAL	(1 << 8)	/* IB_UVERBS_ACCESS_FLUSH_GLOBAL */
#define ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define FLUSH_GLOBAL		1		/* placement types */
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0		/* selectivity levels */
#define FLUSH_MR		1

/* The ring layout this program relies on (docs/uabi.md). */
_Static_assert(sizeof(struct rxe_send_wqe) == 208, "rxe_send_wqe size");
_Static_assert(offsetof(struct rxe_send_wqe, dma) == 184, "dma offset");
_Static_assert(offsetof(struct rxe_send_wr, wr.flush.rkey) == 36,
	       "flush.rkey offset");
_Static_assert(offsetof(struct rxe_send_wr, wr.flush.type) == 40,
	       "flush.type offset");

#define SRC_SIZE	4096
#define TGT_SIZE	(64 * 1024)
#define SQ_DEPTH	128
#define CQ_DEPTH	256
#define POLL_SECONDS	10

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index = 1;
static int nfailed;
static uint64_t magic_seq;

static void report(bool ok, const char *what, const char *why)
{
	if (ok) {
		printf("ok - %s\n", what);
	} else {
		printf("not ok - %s: %s\n", what, why);
		nfailed++;
	}
	fflush(stdout);
}

static void whyf(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void whyf(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

#define WHY(...)	whyf(why, sizeof(why), __VA_ARGS__)

/* A requester A and a responder B, connected to each other. */
struct pair_cfg {
	int tgt_access;		/* B's target region */
	int b_qp_access;	/* B's qp_access_flags */
	int a_rd_atomic;	/* A's max_rd_atomic */
	int b_dest_rd_atomic;	/* B's max_dest_rd_atomic */
};

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *ax;
	char *src_buf, *tgt_buf;
	struct ibv_mr *src, *tgt;
};

static const struct pair_cfg cfg_flush = {
	.tgt_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      ACCESS_FLUSH_GLOBAL,
	.b_qp_access = IBV_ACCESS_REMOTE_WRITE | ACCESS_FLUSH_GLOBAL,
	.a_rd_atomic = 4,
	.b_dest_rd_atomic = 4,
};

/* Without the FLUSH bits, for kernels that do not know them. */
static const struct pair_cfg cfg_plain = {
	.tgt_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	.b_qp_access = IBV_ACCESS_REMOTE_WRITE,
	.a_rd_atomic = 4,
	.b_dest_rd_atomic = 4,
};

static struct ibv_qp *create_qp(struct pair *p)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.send_cq = p->cq,
		.recv_cq = p->cq,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = 4,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_SEND,
	};

	return ibv_create_qp_ex(ctx, &ia);
}

/* RESET -> INIT -> RTR -> RTS towards dest, both PSNs 0. */
static int connect_qp(struct ibv_qp *qp, uint32_t dest, int access,
		      int rd_atomic, int dest_rd_atomic, char *why, size_t n)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int ret;

	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		whyf(why, n, "modify_qp INIT (access 0x%x): %s", access,
		     strerror(ret));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = dest;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = dest_rd_atomic;
	attr.min_rnr_timer = 1;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid = gid;
	attr.ah_attr.grh.sgid_index = gid_index;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.port_num = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret) {
		whyf(why, n, "modify_qp RTR: %s", strerror(ret));
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = rd_atomic;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret) {
		whyf(why, n, "modify_qp RTS (max_rd_atomic %d): %s", rd_atomic,
		     strerror(ret));
		return -1;
	}
	return 0;
}

static void pair_destroy(struct pair *p)
{
	if (p->a && ibv_destroy_qp(p->a))
		perror("ibv_destroy_qp");
	if (p->b && ibv_destroy_qp(p->b))
		perror("ibv_destroy_qp");
	if (p->src && ibv_dereg_mr(p->src))
		perror("ibv_dereg_mr");
	if (p->tgt && ibv_dereg_mr(p->tgt))
		perror("ibv_dereg_mr");
	if (p->cq && ibv_destroy_cq(p->cq))
		perror("ibv_destroy_cq");
	free(p->src_buf);
	free(p->tgt_buf);
	memset(p, 0, sizeof(*p));
}

static int pair_create(struct pair *p, const struct pair_cfg *cfg, char *why,
		       size_t n)
{
	memset(p, 0, sizeof(*p));
	if (posix_memalign((void **)&p->src_buf, 4096, SRC_SIZE) ||
	    posix_memalign((void **)&p->tgt_buf, 4096, TGT_SIZE)) {
		whyf(why, n, "out of memory");
		goto err;
	}
	memset(p->src_buf, 0, SRC_SIZE);
	memset(p->tgt_buf, 0, TGT_SIZE);
	p->cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!p->cq) {
		whyf(why, n, "ibv_create_cq: %s", strerror(errno));
		goto err;
	}
	p->src = ibv_reg_mr(pd, p->src_buf, SRC_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!p->src) {
		whyf(why, n, "ibv_reg_mr (source): %s", strerror(errno));
		goto err;
	}
	p->tgt = ibv_reg_mr(pd, p->tgt_buf, TGT_SIZE, cfg->tgt_access);
	if (!p->tgt) {
		whyf(why, n, "ibv_reg_mr (target, access 0x%x): %s",
		     cfg->tgt_access, strerror(errno));
		goto err;
	}
	p->a = create_qp(p);
	if (!p->a) {
		whyf(why, n, "ibv_create_qp_ex: %s", strerror(errno));
		goto err;
	}
	p->b = create_qp(p);
	if (!p->b) {
		whyf(why, n, "ibv_create_qp_ex: %s", strerror(errno));
		goto err;
	}
	p->ax = ibv_qp_to_qp_ex(p->a);
	if (!p->ax) {
		whyf(why, n, "ibv_qp_to_qp_ex: no extended QP");
		goto err;
	}
	if (connect_qp(p->b, p->a->qp_num, cfg->b_qp_access, 4,
		       cfg->b_dest_rd_atomic, why, n) ||
	    connect_qp(p->a, p->b->qp_num, IBV_ACCESS_REMOTE_WRITE,
		       cfg->a_rd_atomic, 4, why, n))
		goto err;
	return 0;
err:
	pair_destroy(p);
	return -1;
}

enum op_kind { OP_WRITE, OP_FLUSH };

/*
 * One work request. Addresses are offsets into the target buffer (they
 * may point outside it). A WRITE sends len bytes of the source buffer.
 */
struct op {
	enum op_kind kind;
	int64_t off;
	uint32_t len;
	uint8_t type;
	uint8_t level;
	uint32_t rkey_xor;	/* to damage the rkey */
	/* set by post_ops() */
	uint64_t wr_id;
	uint64_t placeholder;	/* the WRITE's remote address to find */
};

struct wqe_match {
	const struct op *op;
	struct rxe_send_wqe *found;
	int nfound;
};

/* The slots of a ring of send WQEs that hold @m's placeholder. */
static void match_wqe(struct rxe_queue_buf *q, void *arg)
{
	struct wqe_match *m = arg;
	uint32_t i;

	if ((1ul << q->log2_elem_size) < sizeof(struct rxe_send_wqe))
		return;
	for (i = 0; i <= q->index_mask; i++) {
		struct rxe_send_wqe *w = (void *)(q->data +
					((unsigned long)i << q->log2_elem_size));

		if (w->wr.wr_id == m->op->wr_id &&
		    w->wr.opcode == IBV_WR_RDMA_WRITE &&
		    w->wr.wr.rdma.remote_addr == m->op->placeholder) {
			m->found = w;
			m->nfound++;
		}
	}
}

/*
 * The WQE the provider wrote for the placeholder WRITE of @op: the one
 * slot, in any ring this process has mapped from a uverbs device, with
 * its wr_id, opcode and remote address.
 */
static struct rxe_send_wqe *find_wqe(const struct op *op, char *why, size_t n)
{
	struct wqe_match m = { .op = op };
	int nrings;

	nrings = rxe_maps_each_ring(match_wqe, &m);
	if (nrings < 0) {
		whyf(why, n, "/proc/self/maps: %s", strerror(errno));
		return NULL;
	}
	if (m.nfound == 1)
		return m.found;
	whyf(why, n, "the placeholder WQE (wr_id 0x%" PRIx64
	     ") is in %d slots of %d rings mapped from /dev/infiniband/uverbs*, want 1",
	     op->wr_id, m.nfound, nrings);
	return NULL;
}

/* Rewrite a slot as rdma-core >= 45's wr_flush() writes it. */
static void write_flush(struct rxe_send_wqe *w, const struct op *op,
			uint64_t addr, uint32_t rkey)
{
	uint32_t send_flags = w->wr.send_flags;

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = op->wr_id;
	w->wr.opcode = WR_FLUSH;
	w->wr.send_flags = send_flags;
	w->wr.wr.flush.remote_addr = addr;
	w->wr.wr.flush.rkey = rkey;
	w->wr.wr.flush.type = op->type;
	w->wr.wr.flush.level = op->level;
	/* wr.flush.length stays 0: the length goes in dma */
	w->dma.length = op->len;
	w->dma.resid = op->len;
	w->dma.num_sge = 0;
	w->iova = addr;
}

/* Post ops in one ibv_wr_start()/ibv_wr_complete() batch, all signaled. */
static int post_ops(struct pair *p, struct op *ops, int nops, char *why,
		    size_t n)
{
	struct ibv_qp_ex *qx = p->ax;
	uint64_t tgt = (uintptr_t)p->tgt_buf;
	int i, ret;

	ibv_wr_start(qx);
	for (i = 0; i < nops; i++) {
		struct op *op = &ops[i];
		uint32_t rkey = p->tgt->rkey ^ op->rkey_xor;

		magic_seq++;
		op->wr_id = (op->kind == OP_FLUSH ? 0xf1005400000000ull :
			     0x3a17e00000000ull) | magic_seq;
		qx->wr_id = op->wr_id;
		qx->wr_flags = IBV_SEND_SIGNALED;
		if (op->kind == OP_WRITE) {
			ibv_wr_rdma_write(qx, rkey, tgt + op->off);
			ibv_wr_set_sge(qx, p->src->lkey,
				       (uintptr_t)p->src_buf, op->len);
			continue;
		}
		/* a WRITE nobody could mean, to find and overwrite */
		op->placeholder = 0xf1f1f10000000000ull | magic_seq << 12 |
				  (getpid() & 0xfff);
		ibv_wr_rdma_write(qx, rkey, op->placeholder);
		ibv_wr_set_sge(qx, p->src->lkey, (uintptr_t)p->src_buf, 8);
	}
	for (i = 0; i < nops; i++) {
		struct rxe_send_wqe *w;

		if (ops[i].kind != OP_FLUSH)
			continue;
		w = find_wqe(&ops[i], why, n);
		if (!w) {
			ibv_wr_abort(qx);
			return -1;
		}
		write_flush(w, &ops[i], tgt + ops[i].off,
			    p->tgt->rkey ^ ops[i].rkey_xor);
	}
	ret = ibv_wr_complete(qx);
	if (ret) {
		whyf(why, n, "ibv_wr_complete: %s", strerror(ret));
		return -1;
	}
	return 0;
}

/* Up to n of A's completions, waiting at most POLL_SECONDS. */
static int poll_a(struct pair *p, struct ibv_wc *wcs, int n)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		struct ibv_wc wc;
		int ret = ibv_poll_cq(p->cq, 1, &wc);

		if (ret < 0)
			return got;
		if (ret == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > POLL_SECONDS)
				break;
			usleep(200);
			continue;
		}
		if (wc.qp_num == p->a->qp_num)
			wcs[got++] = wc;
	}
	return got;
}

static const char *opname(enum op_kind k)
{
	return k == OP_FLUSH ? "FLUSH" : "WRITE";
}

/*
 * Every op completes successfully, in posting order, with the opcode and
 * length of its kind (check_len: a FLUSH's byte_len is its length).
 */
static int expect_success(struct pair *p, const struct op *ops, int nops,
			  bool check_len, char *why, size_t n)
{
	struct ibv_wc *wcs = calloc(nops, sizeof(*wcs));
	int i, got, ret = -1;

	if (!wcs) {
		whyf(why, n, "out of memory");
		return -1;
	}
	got = poll_a(p, wcs, nops);
	for (i = 0; i < got; i++) {
		const struct op *op = &ops[i];
		unsigned int want_op = op->kind == OP_FLUSH ? WC_FLUSH :
				       IBV_WC_RDMA_WRITE;

		if (wcs[i].wr_id != op->wr_id) {
			whyf(why, n, "completion %d is wr_id 0x%" PRIx64
			     ", want 0x%" PRIx64 " (%s %d): out of order",
			     i, wcs[i].wr_id, op->wr_id, opname(op->kind), i);
			goto out;
		}
		if (wcs[i].status != IBV_WC_SUCCESS) {
			whyf(why, n, "%s %d: status %d (%s), want success",
			     opname(op->kind), i, wcs[i].status,
			     ibv_wc_status_str(wcs[i].status));
			goto out;
		}
		if (wcs[i].opcode != want_op) {
			whyf(why, n, "%s %d: wc opcode %d, want %u",
			     opname(op->kind), i, wcs[i].opcode, want_op);
			goto out;
		}
		if (check_len && wcs[i].byte_len != op->len) {
			whyf(why, n, "%s %d: byte_len %u, want %u",
			     opname(op->kind), i, wcs[i].byte_len, op->len);
			goto out;
		}
	}
	if (got < nops) {
		whyf(why, n, "%d of %d completions in %d s", got, nops,
		     POLL_SECONDS);
		goto out;
	}
	ret = 0;
out:
	free(wcs);
	return ret;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/* The one op fails with status @want and A goes to the error state. */
static int expect_error(struct pair *p, const struct op *op,
			enum ibv_wc_status want, char *why, size_t n)
{
	struct ibv_wc wc;
	int state;

	if (poll_a(p, &wc, 1) != 1) {
		whyf(why, n, "no completion in %d s, want status %d (%s)",
		     POLL_SECONDS, want, ibv_wc_status_str(want));
		return -1;
	}
	if (wc.wr_id != op->wr_id) {
		whyf(why, n, "completion of wr_id 0x%" PRIx64 ", want 0x%"
		     PRIx64, wc.wr_id, op->wr_id);
		return -1;
	}
	if (wc.status != want) {
		whyf(why, n, "status %d (%s), want %d (%s)", wc.status,
		     ibv_wc_status_str(wc.status), want,
		     ibv_wc_status_str(want));
		return -1;
	}
	state = qp_state(p->a);
	if (state != IBV_QPS_ERR) {
		whyf(why, n, "status %s as wanted, but the QP is in state %d, want %d (error)",
		     ibv_wc_status_str(want), state, IBV_QPS_ERR);
		return -1;
	}
	return 0;
}

/* One check: a fresh pair, ops posted in one batch, all must succeed. */
static void run_success(const char *what, const struct pair_cfg *cfg,
			struct op *ops, int nops, bool check_len,
			bool pattern)
{
	char why[512] = "";
	struct pair p;
	bool ok;
	int i;

	if (pair_create(&p, cfg, why, sizeof(why))) {
		report(false, what, why);
		return;
	}
	/* ops[0] is then a WRITE of this: no byte is 0 as the target was */
	for (i = 0; pattern && i < SRC_SIZE; i++)
		p.src_buf[i] = 0x80 | (i * 7 + 3);
	ok = !post_ops(&p, ops, nops, why, sizeof(why)) &&
	     !expect_success(&p, ops, nops, check_len, why, sizeof(why));
	if (ok && pattern && memcmp(p.tgt_buf + ops[0].off, p.src_buf,
				    ops[0].len)) {
		WHY("both completed, but the target does not hold the pattern WRITE wrote");
		ok = false;
	}
	if (ok && qp_state(p.a) != IBV_QPS_RTS) {
		WHY("completed, but the QP is in state %d, want RTS",
		    qp_state(p.a));
		ok = false;
	}
	report(ok, what, why);
	pair_destroy(&p);
}

/* One check: a fresh pair, one FLUSH, which must fail with @want. */
static void run_error(const char *what, const struct pair_cfg *cfg,
		      struct op op, enum ibv_wc_status want)
{
	char why[512] = "";
	struct pair p;
	bool ok;

	op.kind = OP_FLUSH;
	if (pair_create(&p, cfg, why, sizeof(why))) {
		report(false, what, why);
		return;
	}
	ok = !post_ops(&p, &op, 1, why, sizeof(why)) &&
	     !expect_error(&p, &op, want, why, sizeof(why));
	report(ok, what, why);
	pair_destroy(&p);
}

/* Registering a region with @access must fail with @want_errno (0: any). */
static void reg_fails(const char *what, int access, int want_errno)
{
	char why[512] = "", *buf;
	struct ibv_mr *mr;
	bool ok = false;

	if (posix_memalign((void **)&buf, 4096, 4096)) {
		report(false, what, "out of memory");
		return;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, access);
	if (mr) {
		WHY("ibv_reg_mr with access 0x%x succeeded", access);
		ibv_dereg_mr(mr);
	} else if (want_errno && errno != want_errno) {
		WHY("errno %d (%s), want %d (%s)", errno, strerror(errno),
		    want_errno, strerror(want_errno));
	} else {
		printf("# ibv_reg_mr(access 0x%x): %s\n", access,
		       strerror(errno));
		ok = true;
	}
	report(ok, what, why);
	free(buf);
}

static void tests_yes(void)
{
	struct pair_cfg cfg;
	struct op ops[64];
	int i;

	/* global visibility of a range inside the region */
	ops[0] = (struct op){ .kind = OP_FLUSH, .off = 4096, .len = 8192,
			      .type = FLUSH_GLOBAL, .level = FLUSH_RANGE };
	run_success("FLUSH global, range inside the MR: success, WC_FLUSH, byte_len the length",
		    &cfg_flush, ops, 1, true, false);

	/* the whole region: address and length do not matter */
	ops[0] = (struct op){ .kind = OP_FLUSH, .off = TGT_SIZE + (1 << 20),
			      .len = 12345, .type = FLUSH_GLOBAL,
			      .level = FLUSH_MR };
	run_success("FLUSH global, whole-MR level, address outside the MR: success",
		    &cfg_flush, ops, 1, false, false);

	/* a WRITE, then a FLUSH of what it wrote */
	ops[0] = (struct op){ .kind = OP_WRITE, .off = 0x2000, .len = 64 };
	ops[1] = (struct op){ .kind = OP_FLUSH, .off = 0x2000, .len = 64,
			      .type = FLUSH_GLOBAL, .level = FLUSH_RANGE };
	run_success("RDMA WRITE then FLUSH: both complete in order, the pattern is in the target",
		    &cfg_flush, ops, 2, true, true);

	/* more FLUSHes than max_rd_atomic lets out at once */
	for (i = 0; i < 64; i++)
		ops[i] = (struct op){ .kind = OP_FLUSH, .off = i * 1024,
				      .len = 1024, .type = FLUSH_GLOBAL,
				      .level = FLUSH_RANGE };
	run_success("64 FLUSHes in flight, max_rd_atomic 4: all succeed, completions in posting order",
		    &cfg_flush, ops, 64, true, false);

	ops[0] = (struct op){ .kind = OP_FLUSH, .off = 0, .len = 0,
			      .type = FLUSH_GLOBAL, .level = FLUSH_RANGE };
	run_success("zero-length FLUSH at the MR start: success",
		    &cfg_flush, ops, 1, true, false);

	/* errors: each on a pair of its own, as the QP goes to error */
	cfg = cfg_flush;
	cfg.tgt_access &= ~ACCESS_FLUSH_GLOBAL;
	run_error("FLUSH of an MR registered without FLUSH_GLOBAL: IBV_WC_REM_ACCESS_ERR, QP in error",
		  &cfg, (struct op){ .off = 0, .len = 4096,
				     .type = FLUSH_GLOBAL },
		  IBV_WC_REM_ACCESS_ERR);

	cfg = cfg_flush;
	cfg.b_qp_access &= ~ACCESS_FLUSH_GLOBAL;
	run_error("FLUSH to a QP without FLUSH_GLOBAL in qp_access_flags: IBV_WC_REM_ACCESS_ERR, QP in error",
		  &cfg, (struct op){ .off = 0, .len = 4096,
				     .type = FLUSH_GLOBAL },
		  IBV_WC_REM_ACCESS_ERR);

	run_error("FLUSH of a range past the MR's end: IBV_WC_REM_ACCESS_ERR, QP in error",
		  &cfg_flush, (struct op){ .off = TGT_SIZE - 64, .len = 128,
					   .type = FLUSH_GLOBAL },
		  IBV_WC_REM_ACCESS_ERR);

	run_error("FLUSH with a bad rkey: IBV_WC_REM_ACCESS_ERR, QP in error",
		  &cfg_flush, (struct op){ .off = 0, .len = 4096,
					   .type = FLUSH_GLOBAL,
					   .rkey_xor = 0x5a },
		  IBV_WC_REM_ACCESS_ERR);

	run_error("FLUSH to persistence (placement type 2): IBV_WC_LOC_QP_OP_ERR, QP in error",
		  &cfg_flush, (struct op){ .off = 0, .len = 4096,
					   .type = FLUSH_PERSISTENT },
		  IBV_WC_LOC_QP_OP_ERR);

	run_error("FLUSH with placement type 4 (undefined): IBV_WC_LOC_QP_OP_ERR, QP in error",
		  &cfg_flush, (struct op){ .off = 0, .len = 4096, .type = 4 },
		  IBV_WC_LOC_QP_OP_ERR);

	run_error("FLUSH with selectivity level 2 (undefined): IBV_WC_LOC_QP_OP_ERR, QP in error",
		  &cfg_flush, (struct op){ .off = 0, .len = 4096,
					   .type = FLUSH_GLOBAL, .level = 2 },
		  IBV_WC_LOC_QP_OP_ERR);

	cfg = cfg_flush;
	cfg.a_rd_atomic = 0;
	run_error("FLUSH from a QP with max_rd_atomic 0: IBV_WC_LOC_QP_OP_ERR, QP in error",
		  &cfg, (struct op){ .off = 0, .len = 4096,
				     .type = FLUSH_GLOBAL },
		  IBV_WC_LOC_QP_OP_ERR);

	reg_fails("MR registration with FLUSH_PERSISTENT fails with EOPNOTSUPP (no persistence offered)",
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  ACCESS_FLUSH_PERSISTENT, EOPNOTSUPP);
}

static void tests_no(void)
{
	reg_fails("MR registration with access 1<<8 (FLUSH_GLOBAL) fails",
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  ACCESS_FLUSH_GLOBAL, 0);

	run_error("FLUSH on a kernel without it: IBV_WC_LOC_QP_OP_ERR, QP in error",
		  &cfg_plain, (struct op){ .off = 0, .len = 4096,
					   .type = FLUSH_GLOBAL },
		  IBV_WC_LOC_QP_OP_ERR);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s --expect yes|no [--dev rxe0] [--gid 1]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "expect", required_argument, NULL, 'e' },
		{ "dev", required_argument, NULL, 'd' },
		{ "gid", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "rxe0", *expect = NULL;
	struct ibv_device **list;
	int c, i, ndev;

	while ((c = getopt_long(argc, argv, "e:d:g:", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			expect = optarg;
			break;
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!expect || (strcmp(expect, "yes") && strcmp(expect, "no")))
		usage(argv[0]);

	list = ibv_get_device_list(&ndev);
	if (!list) {
		printf("not ok - list the RDMA devices: %s\n# 1 failed\n",
		       strerror(errno));
		return 1;
	}
	for (i = 0; i < ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == ndev) {
		printf("not ok - open %s: no such device\n# 1 failed\n", dev);
		ibv_free_device_list(list);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx) {
		printf("not ok - open %s: %s\n# 1 failed\n", dev,
		       strerror(errno));
		ibv_free_device_list(list);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		printf("not ok - PD and GID %d of %s: %s\n# 1 failed\n",
		       gid_index, dev, strerror(errno));
		if (pd)
			ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		ibv_free_device_list(list);
		return 1;
	}

	if (!strcmp(expect, "yes"))
		tests_yes();
	else
		tests_no();

	if (ibv_dealloc_pd(pd))
		report(false, "free the PD", strerror(errno));
	if (ibv_close_device(ctx))
		report(false, "close the device", strerror(errno));
	ibv_free_device_list(list);
	printf("# %d failed\n", nfailed);
	return nfailed ? 1 : 0;
}
