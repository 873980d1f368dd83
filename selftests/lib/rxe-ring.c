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
 * A third phase rings the send queue's doorbell (the provider's empty
 * POST_SEND command) in a loop from two more threads while the ring of
 * 32768 slots is kept full, after the QP went to ERR. Each doorbell asks
 * for a flush of what the ring holds, and a write() of the doorbell runs
 * the send task with bottom halves off, up to its budget of calls, which
 * the other thread's doorbells keep asking for: the CPU time of the
 * longest write() must stay short, not the ring many times over. Then,
 * with the ring left full, one more doorbell must flush all of it.
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
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "rxe-maps.h"

#define RQ_WR		200	/* a ring of 256 */
#define SQ_WR		300	/* a ring of 512 */
#define BIG_SQ_WR	16384	/* a ring of 32768 */
#define HAMMER_MS	2000
#define DOORBELL_MAX_MS	250	/* the most CPU one doorbell write() may take */
#define NBELLS		2	/* threads ringing the doorbell */
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

struct doorbell {
	struct ibv_qp *qp;
	volatile bool stop;
	uint64_t rung;		/* doorbells written */
	uint64_t max_us;	/* the most CPU time one write() took */
	int err;		/* errno of the first failed write() */
};

/* This thread's CPU time: what a write() ran, not what preempted it. */
static uint64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

/* Ring the send doorbell once, as the provider does; 0 or an errno. */
static int doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(req) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.cmd = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			.wqe_size = sizeof(struct ibv_send_wr),
		},
	};

	if (write(qp->context->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	return 0;
}

/* Ring the send doorbell until told to stop. */
static void *ring_bell(void *arg)
{
	struct doorbell *d = arg;

	while (!d->stop) {
		uint64_t t = cpu_us();

		d->err = doorbell(d->qp);
		if (d->err)
			break;
		t = cpu_us() - t;
		if (t > d->max_us)
			d->max_us = t;
		d->rung++;
	}
	return NULL;
}

/*
 * With the ring full and the QP in ERR, one doorbell must flush it all:
 * the consumer index reaches the producer's.
 */
static void flush_full_ring(struct ibv_qp *qp, struct rxe_queue_buf *q)
{
	uint32_t mask = q->index_mask;
	uint32_t cons = __atomic_load_n(&q->consumer_index,
					__ATOMIC_ACQUIRE) & mask;
	uint32_t want = (cons + mask) & mask;
	uint64_t end = now_ms() + 5000;
	int err;

	__atomic_store_n(&q->producer_index, want, __ATOMIC_RELEASE);
	err = doorbell(qp);
	while (!err && cons != want && now_ms() < end) {
		usleep(1000);
		cons = __atomic_load_n(&q->consumer_index,
				       __ATOMIC_ACQUIRE) & mask;
	}
	report(!err && cons == want,
	       "doorbelled send queue: one more doorbell flushes a full ring",
	       "doorbell: %s; %u WQEs still unflushed after 5 s",
	       strerror(err), (want - cons) & mask);
}

static struct ibv_qp *create_qp(struct ibv_cq *scq, struct ibv_cq *rcq,
				uint32_t sq_wr)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = sq_wr,
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
 * while the QP goes to the error state; with @bell, a send ring of 32768
 * slots, and its doorbell rung from another thread from then on.
 */
static void phase(const char *which, bool bell)
{
	bool recv = !strcmp(which, "receive");
	struct doorbell d[NBELLS] = { 0 };
	pthread_t bt[NBELLS];
	int nbells = 0;
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
		qp = create_qp(scq, rcq, bell ? BIG_SQ_WR : SQ_WR);
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
	for (n = 0; bell && n < NBELLS; n++, nbells++) {
		d[n].qp = qp;
		if (pthread_create(&bt[n], NULL, ring_bell, &d[n])) {
			report(false, "start a doorbell thread", "%s",
			       strerror(errno));
			break;
		}
	}
	pthread_join(t, NULL);
	for (n = 0; n < nbells; n++)
		d[n].stop = true;
	for (n = 0; n < nbells; n++)
		pthread_join(bt[n], NULL);
	usleep(200 * 1000);

	snprintf(what, sizeof(what), "%s queue: the QP is in ERR", which);
	report(qp_state(qp) == IBV_QPS_ERR, what, "state %d",
	       (int)qp_state(qp));
	printf("# %s queue of %u slots: the kernel took %" PRIu64
	       " WQEs in %d ms\n", which, q->index_mask + 1, h.taken,
	       HAMMER_MS);
	if (bell) {
		uint64_t rung = 0, max_us = 0;
		int berr = nbells == NBELLS ? 0 : EAGAIN;

		for (n = 0; n < nbells; n++) {
			rung += d[n].rung;
			if (d[n].max_us > max_us)
				max_us = d[n].max_us;
			berr = berr ?: d[n].err;
		}
		printf("# %" PRIu64 " doorbells from %d threads, the longest write() ran %"
		       PRIu64 " us of CPU\n", rung, nbells, max_us);
		report(!berr && rung, "doorbelled send queue: the doorbells rang",
		       "%" PRIu64 " doorbells, %s", rung, strerror(berr));
		snprintf(what, sizeof(what),
			 "doorbelled send queue: no doorbell's flush ran %d ms",
			 DOORBELL_MAX_MS);
		report(max_us < DOORBELL_MAX_MS * 1000ull, what,
		       "one write() of the doorbell ran %" PRIu64
		       " ms of CPU: its flush went on for many rings with bottom halves off",
		       max_us / 1000);
		flush_full_ring(qp, q);
		goto out;
	}
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
		phase("receive", false);
		phase("send", false);
		phase("doorbelled send", true);
		ibv_dealloc_pd(pd);
	}
	if (ctx)
		ibv_close_device(ctx);
	if (list)
		ibv_free_device_list(list);
	printf("# %d failed\n", nfailed);
	return nfailed ? 1 : 0;
}
