// SPDX-License-Identifier: GPL-2.0
/*
 * A process that keeps refilling its work queues while the kernel flushes
 * them. The rings of a user QP are shared memory (an mmap of
 * /dev/infiniband/uverbsN) and the producer index of a send or receive
 * queue is the process's to write, whenever it likes. When a QP goes to
 * the error state the kernel completes what the queue holds with a flush
 * error; a process that moves the producer index on as fast as the kernel
 * takes WQEs must not keep it flushing for as long as it likes, with
 * bottom halves off (a soft lockup), nor have it schedule itself again for
 * each completion that finds the CQ full.
 *
 * For the receive queue and then the send queue of a fresh RC QP each, a
 * thread keeps the ring full (producer one behind the kernel's consumer
 * index) for HAMMER_MS, and the QP is moved to the error state 100 ms
 * into it. The WQEs the kernel takes in that time, counted from its
 * consumer index, must be no more than twice the ring: one flush of what
 * the ring held, and room for one more run. The CQs have one entry, so
 * every completion after the first finds them full. The rings are found
 * without knowing the provider's private structs: the receive ring holds
 * a WQE posted with a unique wr_id, the send ring is the one other ring
 * with slots of 256 bytes or more (a CQ's are 128).
 *
 *	rxe-ring [--dev rxe0]
 *
 * Prints "ok - ..." or "not ok - ...: why" per check; exits 1 if any failed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "rxe-maps.h"

#define RQ_WR		200	/* a ring of 256 */
#define SQ_WR		300	/* a ring of 512 */
#define HAMMER_MS	2000
#define RECV_MAGIC	0x72786572696e6701ull

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int nfailed;

static void report(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("ok - %s\n", what);
	} else {
		printf("not ok - %s: ", what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		nfailed++;
	}
	fflush(stdout);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

struct ring_match {
	bool (*is)(struct rxe_queue_buf *q, void *arg);
	void *arg;
	struct rxe_queue_buf *found;
	int nfound;
};

static void match_ring(struct rxe_queue_buf *q, void *arg)
{
	struct ring_match *m = arg;

	if (m->is(q, m->arg)) {
		m->found = q;
		m->nfound++;
	}
}

/* The one ring for which @fn returns true; *@nfound says how many did. */
static struct rxe_queue_buf *find_ring(bool (*fn)(struct rxe_queue_buf *,
						  void *), void *arg,
				       int *nfound)
{
	struct ring_match m = { .is = fn, .arg = arg };

	rxe_maps_each_ring(match_ring, &m);
	*nfound = m.nfound;
	return m.nfound == 1 ? m.found : NULL;
}

/* The receive ring: its one WQE is the one posted with RECV_MAGIC. */
static bool is_recv_ring(struct rxe_queue_buf *q, void *arg)
{
	uint32_t cons = q->consumer_index & q->index_mask;
	struct rxe_recv_wqe *w = (void *)(q->data +
					  ((unsigned long)cons <<
					   q->log2_elem_size));

	(void)arg;
	return ((q->producer_index - cons) & q->index_mask) == 1 &&
	       w->wr_id == RECV_MAGIC;
}

/* The send ring: slots of 256 bytes or more, and not the receive ring. */
static bool is_send_ring(struct rxe_queue_buf *q, void *arg)
{
	return q != arg && q->log2_elem_size >= 8 &&
	       q->index_mask + 1 >= SQ_WR;
}

struct hammer {
	struct rxe_queue_buf *q;
	uint64_t taken;		/* WQEs the kernel consumed */
};

/*
 * Keep the ring full for HAMMER_MS: the producer one slot behind the
 * kernel's consumer index, and count how far that index moves.
 */
static void *hammer(void *arg)
{
	struct hammer *h = arg;
	uint32_t mask = h->q->index_mask;
	uint32_t last = __atomic_load_n(&h->q->consumer_index,
					__ATOMIC_ACQUIRE) & mask;
	uint64_t end = now_ms() + HAMMER_MS;

	while (now_ms() < end) {
		uint32_t cons = __atomic_load_n(&h->q->consumer_index,
						__ATOMIC_ACQUIRE) & mask;

		h->taken += (cons - last) & mask;
		last = cons;
		__atomic_store_n(&h->q->producer_index, (cons + mask) & mask,
				 __ATOMIC_RELEASE);
	}
	/* Leave the ring empty: nothing more for the kernel to take. */
	__atomic_store_n(&h->q->producer_index, last, __ATOMIC_RELEASE);
	return NULL;
}

static struct ibv_qp *create_qp(struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = SQ_WR,
			.max_recv_wr = RQ_WR,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};

	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);
	int err;

	/* INIT: the provider takes receive WQEs from there on. */
	if (qp && (err = ibv_modify_qp(qp, &init, IBV_QP_STATE |
				       IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS))) {
		ibv_destroy_qp(qp);
		errno = err;
		return NULL;
	}
	return qp;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return (enum ibv_qp_state)-1;
	return attr.qp_state;
}

/*
 * One phase: a fresh QP, its @which ring ("receive" or "send") kept full
 * while the QP goes to the error state.
 */
static void phase(const char *which)
{
	bool recv = !strcmp(which, "receive");
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_recv_wr wr = { .wr_id = RECV_MAGIC };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr *bad;
	struct rxe_queue_buf *rq, *q;
	struct hammer h = { 0 };
	struct ibv_qp *qp = NULL;
	char what[128];
	pthread_t t;
	int n, err;

	snprintf(what, sizeof(what),
		 "%s queue: QP in INIT and CQs of one entry", which);
	scq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (scq && rcq)
		qp = create_qp(scq, rcq);
	report(qp, what, "%s", strerror(errno));
	if (!qp)
		goto out;

	/* A receive WQE marks the receive ring; the kernel has not seen it. */
	err = ibv_post_recv(qp, &wr, &bad);
	rq = err ? NULL : find_ring(is_recv_ring, NULL, &n);
	snprintf(what, sizeof(what), "%s queue: find the receive ring", which);
	report(rq, what, "post_recv: %s; %d rings hold the marked WQE, want 1",
	       strerror(err), err ? 0 : n);
	if (!rq)
		goto out;
	q = rq;
	if (!recv) {
		q = find_ring(is_send_ring, rq, &n);
		snprintf(what, sizeof(what), "%s queue: find the send ring",
			 which);
		report(q, what, "%d rings with 256-byte slots and %d or more, want 1",
		       n, SQ_WR);
		if (!q)
			goto out;
		/* The marked receive WQE stays: the receive flush takes it. */
	}

	h.q = q;
	if (pthread_create(&t, NULL, hammer, &h)) {
		report(false, "start the thread", "%s", strerror(errno));
		goto out;
	}
	usleep(100 * 1000);
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	snprintf(what, sizeof(what),
		 "%s queue: modify the QP to ERR while its ring is refilled",
		 which);
	report(!err, what, "%s", strerror(err));
	pthread_join(t, NULL);
	usleep(200 * 1000);

	snprintf(what, sizeof(what), "%s queue: the QP is in ERR", which);
	report(qp_state(qp) == IBV_QPS_ERR, what, "state %d",
	       (int)qp_state(qp));
	printf("# %s queue of %u slots: the kernel took %" PRIu64
	       " WQEs in %d ms\n", which, q->index_mask + 1, h.taken,
	       HAMMER_MS);
	snprintf(what, sizeof(what),
		 "%s queue: the flush took at most twice the ring (%u)",
		 which, 2 * (q->index_mask + 1));
	report(h.taken <= 2ull * (q->index_mask + 1), what,
	       "the kernel took %" PRIu64 " WQEs while the ring was refilled for %d ms: its flush followed the producer index",
	       h.taken, HAMMER_MS);
out:
	snprintf(what, sizeof(what), "%s queue: destroy the QP and CQs", which);
	err = 0;
	if (qp && ibv_destroy_qp(qp))
		err = errno;
	if (rcq && ibv_destroy_cq(rcq))
		err = err ?: errno;
	if (scq && ibv_destroy_cq(scq))
		err = err ?: errno;
	report(!err, what, "%s", strerror(err));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "rxe0";
	struct ibv_device **list;
	int c, i, ndev;

	while ((c = getopt_long(argc, argv, "d:", opts, NULL)) != -1) {
		if (c != 'd') {
			fprintf(stderr, "usage: %s [--dev NAME]\n", argv[0]);
			return 2;
		}
		dev = optarg;
	}

	list = ibv_get_device_list(&ndev);
	for (i = 0; list && i < ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	ctx = list && i < ndev ? ibv_open_device(list[i]) : NULL;
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	report(pd, "open the device and a PD", "%s: %s", dev,
	       strerror(errno));
	if (pd) {
		phase("receive");
		phase("send");
		ibv_dealloc_pd(pd);
	}
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	printf("# %d failed\n", nfailed);
	return nfailed ? 1 : 0;
}
