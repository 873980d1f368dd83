// SPDX-License-Identifier: GPL-2.0
/*
 * rxe_ktest: a kernel consumer of an RDMA device, to test a driver's
 * kernel verbs end to end.
 *
 * A client and a server connect RC QPs through rdma_cm and run, for each
 * size and each of `count` iterations, the operations `ops` names:
 *
 *   send     SEND/RECV both ways, gathered from and scattered to several
 *            multi-page SGEs; then two bursts of SENDs at the same time on
 *            one QP, one posted message by message from the completion
 *            handler of the one before, one from the thread, received by
 *            a handler that posts the receive again
 *   write    RDMA WRITE into the server's buffer, then a SEND behind it
 *   read     RDMA READ of the server's buffer
 *   frmr     the server fast-registers its buffer with a new key each
 *            time (odd iterations in 64 KiB pages); the client WRITEs and
 *            READs through the rkey, READing into a buffer it
 *            fast-registered itself; both invalidate their keys with
 *            LOCAL_INV
 *   sendinv  fast registration, WRITE, then SEND with invalidate; the
 *            server checks IB_WC_WITH_INVALIDATE and the rkey it carries
 *   neg      one connection per check: a READ or WRITE through a key
 *            invalidated locally, invalidated remotely, replaced by a key
 *            update, or registered read-only must complete with
 *            IB_WC_REM_ACCESS_ERR and leave the requester's QP in error
 *   tail     RDMA WRITE as unsignaled WRITEs posted one call each, then a
 *            pause of `tail_ms` before the SEND behind them: the WRITEs
 *            posted while the first one's ACK is on its way leave the
 *            driver a tail nobody asked an ACK for (not in "all")
 *
 * Every byte is checked where it lands. The client drives; the server
 * answers its control messages (struct ktest_msg). Buffers are physically
 * contiguous, described page by page in a scatterlist and mapped with
 * ib_dma_map_sg(); control messages are mapped with ib_dma_map_single(),
 * and every other one is sent inline.
 *
 * Results go to the kernel log and to debugfs: rxe_ktest/result holds the
 * report, rxe_ktest/state says running, pass or fail. Every wait is
 * bounded and every error path tears its connection down, so the module
 * can always be removed.
 */

#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define KTEST_MAX_SIZE		SZ_2M	/* largest message: 512 pages */
#define KTEST_MAX_SIZES		8
#define KTEST_DATA_SGES		4	/* SGEs a payload is split into */
#define KTEST_NRECV		16	/* receive WQEs kept posted */
#define KTEST_RXQ		(2 * KTEST_NRECV)
#define KTEST_NOPS		8	/* send work requests in flight */
#define KTEST_SQ_DEPTH		16
#define KTEST_TAIL_PIECE	256	/* bytes of tail's WRITEs, at least */
#define KTEST_CQ_DEPTH		64
#define KTEST_RD_ATOM		4
#define KTEST_MAGIC		0x6b747374
#define KTEST_NEG_SIZE		8192	/* buffer of a negative check */
#define KTEST_BURST_MAX		512
#define KTEST_LOG_SIZE		32768

/* ---- parameters ---------------------------------------------------- */

static char *ktest_role = "loop";
module_param_named(role, ktest_role, charp, 0444);
MODULE_PARM_DESC(role, "client, server, or loop (both, in this module)");

static char *ktest_addr;
module_param_named(addr, ktest_addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 or IPv6 address: the server's, which it listens on");

static ushort ktest_port = 18600;
module_param_named(port, ktest_port, ushort, 0444);
MODULE_PARM_DESC(port, "rdma_cm port (default 18600)");

static uint ktest_count = 10;
module_param_named(count, ktest_count, uint, 0444);
MODULE_PARM_DESC(count, "iterations of each operation for each size (default 10)");

static int ktest_sizes[KTEST_MAX_SIZES] = { 65536 };
static int ktest_nsizes = 1;
module_param_array_named(size, ktest_sizes, int, &ktest_nsizes, 0444);
MODULE_PARM_DESC(size, "message sizes in bytes, comma-separated, 1 to 2 MiB (default 65536)");

static char *ktest_ops = "all";
module_param_named(ops, ktest_ops, charp, 0444);
MODULE_PARM_DESC(ops, "comma-separated: send,write,read,frmr,sendinv,neg,tail or all (all but tail)");

static char *ktest_poll = "softirq";
module_param_named(poll, ktest_poll, charp, 0444);
MODULE_PARM_DESC(poll, "CQ context of the main connection: softirq, workqueue or direct");

static uint ktest_tail_ms = 200;
module_param_named(tail_ms, ktest_tail_ms, uint, 0444);
MODULE_PARM_DESC(tail_ms, "tail: pause after the unsignaled WRITEs (default 200)");

static uint ktest_timeout_ms = 20000;
module_param_named(timeout_ms, ktest_timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "longest wait for any one step (default 20000)");

static uint ktest_listen_ms = 120000;
module_param_named(listen_ms, ktest_listen_ms, uint, 0444);
MODULE_PARM_DESC(listen_ms, "server: longest wait for a client (default 120000)");

static int ktest_corrupt = -1;
module_param_named(corrupt, ktest_corrupt, int, 0444);
MODULE_PARM_DESC(corrupt, "test the test: damage one byte of every payload of this iteration");

#define KTEST_OP_SEND		BIT(0)
#define KTEST_OP_WRITE		BIT(1)
#define KTEST_OP_READ		BIT(2)
#define KTEST_OP_FRMR		BIT(3)
#define KTEST_OP_SENDINV	BIT(4)
#define KTEST_OP_NEG		BIT(5)
#define KTEST_OP_TAIL		BIT(6)
/* ATOMIC WRITE, where the kernel has it (6.2 on); never part of "all". */
#define KTEST_OP_AWRITE		BIT(7)
/* The operations of the main connection; "all" is every one but tail and awrite. */
#define KTEST_OP_MAIN		(GENMASK(4, 0) | KTEST_OP_TAIL | KTEST_OP_AWRITE)
#define KTEST_OP_ALL		GENMASK(5, 0)

static const char * const ktest_op_names[] = {
	"send", "write", "read", "frmr", "sendinv", "neg", "tail", "awrite",
};

static u32 ktest_opmask;
static u32 ktest_max_size;
static enum ib_poll_context ktest_poll_ctx;
static struct sockaddr_storage ktest_sockaddr;

/* ---- what goes over the wire ----------------------------------------- */

/* Connections, in the order the client makes them. */
enum ktest_kind {
	KTEST_MAIN,
	KTEST_NEG_LOCAL_INV,
	KTEST_NEG_REMOTE_INV,
	KTEST_NEG_KEY_UPDATE,
	KTEST_NEG_ACCESS,
	KTEST_NKINDS,
};

static const char * const ktest_kind_names[] = {
	[KTEST_MAIN] = "main",
	[KTEST_NEG_LOCAL_INV] = "negative/local_inv",
	[KTEST_NEG_REMOTE_INV] = "negative/send_with_inv",
	[KTEST_NEG_KEY_UPDATE] = "negative/key_update",
	[KTEST_NEG_ACCESS] = "negative/read_only",
};

/* The connection request's private data. */
struct ktest_hello {
	__le32 magic;
	__le32 kind;
	__le32 max_size;
	__le32 flags;
};

#define KTEST_HELLO_LAST	BIT(0)	/* the server stops after this one */

/* Control messages. */
enum ktest_type {
	KTEST_HELLO = 1,	/* c->s: register your buffer */
	KTEST_HELLO_ACK,	/* s->c: its rkey, addr, len */
	KTEST_DATA,		/* both ways: a SEND with payload */
	KTEST_BURST,		/* c->s: one message of a burst */
	KTEST_BURST_END,	/* server-internal: the burst's last arrived */
	KTEST_BURST_RESULT,	/* s->c: how the burst went */
	KTEST_WRITTEN,		/* c->s: check the WRITE before this */
	KTEST_VERIFIED,		/* s->c: its result */
	KTEST_PREP_READ,	/* c->s: fill the buffer for a READ */
	KTEST_READY,		/* s->c: filled */
	KTEST_FR_REG,		/* c->s: fast-register the buffer */
	KTEST_FR_KEY,		/* s->c: the new rkey, addr, len */
	KTEST_FR_WRITTEN,	/* c->s: check the WRITE, fill for a READ */
	KTEST_FR_READY,		/* s->c: checked and filled */
	KTEST_FR_INV_LOCAL,	/* c->s: LOCAL_INV the rkey */
	KTEST_FR_INV_REMOTE,	/* c->s: SEND with invalidate */
	KTEST_ACK,		/* s->c: result of a request */
	KTEST_BYE,		/* c->s: done */
	KTEST_BYE_ACK,
};

/* Access a KTEST_FR_REG asks for (arg). */
#define KTEST_ACC_READ		BIT(0)
#define KTEST_ACC_WRITE		BIT(1)
#define KTEST_ACC_BIG		BIT(2)	/* in pages of KTEST_BIG_PAGE */

/*
 * A page size above PAGE_SIZE for ib_map_mr_sg(), with an MR allocated
 * for just as many pages of it: max_num_sg counts pages of the size the
 * registration uses.
 */
#define KTEST_BIG_PAGE		SZ_64K

struct ktest_msg {
	__le32 magic;
	__le16 type;
	__le16 status;		/* 0, or the sender found a fault */
	__le32 iter;
	__le32 len;
	__le32 rkey;
	__le32 arg;
	__le64 addr;
	u8 fill[32];		/* burst: a pattern of stream and sequence */
};

#define KTEST_MSG_SIZE		sizeof(struct ktest_msg)

/* Pattern seeds: one per direction and operation. */
enum ktest_seed {
	KTEST_SEED_C2S = 1,
	KTEST_SEED_S2C,
	KTEST_SEED_WRITE,
	KTEST_SEED_READ,
	KTEST_SEED_FRW,
	KTEST_SEED_FRR,
	KTEST_SEED_BURST,	/* burst stream 0; stream 1 adds one */
	KTEST_SEED_BURST1,
};

#define KTEST_STREAMS		2	/* burst streams: handler, thread */
#define KTEST_BURST_WINDOW	4	/* thread stream: SENDs in flight */

/* ---- the report -------------------------------------------------------- */

enum ktest_verdict {
	KTEST_IDLE,
	KTEST_RUNNING,
	KTEST_PASS,
	KTEST_FAIL,
};

static const char * const ktest_state_names[] = {
	"idle", "running", "pass", "fail",
};

static char ktest_log_buf[KTEST_LOG_SIZE];
static size_t ktest_log_len;
static bool ktest_log_full;
static int ktest_verdict = KTEST_IDLE;
/* ktest_log_buf, ktest_log_len, ktest_log_full, ktest_verdict */
static DEFINE_SPINLOCK(ktest_log_lock);
static atomic_t ktest_failures = ATOMIC_INIT(0);
static atomic_t ktest_running = ATOMIC_INIT(0);
static struct dentry *ktest_dir;

struct ktest_cmctx {
	bool listener;
};

/*
 * One side: a client or a server thread. In loop mode the module runs
 * both, against its own address.
 */
struct ktest_thread {
	struct ktest_cmctx cmx;		/* server: the listener's context */
	bool server;
	const char *prefix;		/* "" or "server: " */
	struct task_struct *task;
	struct ktest_thread *peer;	/* loop mode: the client's server */
	struct completion listening;
	/* server */
	struct rdma_cm_id *listen_id;
	wait_queue_head_t wq;
	spinlock_t lock;		/* pending */
	struct ktest_conn *pending;	/* a connection request to take */
	bool removed;			/* the listener's device went away */
};

static struct ktest_thread ktest_srv, ktest_cli;

static void ktest_append(const char *line, size_t n)
{
	unsigned long flags;

	spin_lock_irqsave(&ktest_log_lock, flags);
	if (ktest_log_len + n + 8 < sizeof(ktest_log_buf)) {
		memcpy(ktest_log_buf + ktest_log_len, "ktest: ", 7);
		memcpy(ktest_log_buf + ktest_log_len + 7, line, n);
		ktest_log_len += n + 7;
		ktest_log_buf[ktest_log_len++] = '\n';
	} else {
		ktest_log_full = true;
	}
	spin_unlock_irqrestore(&ktest_log_lock, flags);
}

static __printf(3, 0) void ktest_vreport(struct ktest_thread *t, bool fail,
					 const char *fmt, va_list ap)
{
	char line[320];
	int n;

	n = scnprintf(line, sizeof(line), "%s%s", fail ? "FAIL " : "",
		      t ? t->prefix : "");
	n += vscnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (fail) {
		atomic_inc(&ktest_failures);
		pr_err("%s\n", line);
	} else {
		pr_info("%s\n", line);
	}
	ktest_append(line, n);
}

static __printf(2, 3) void ktest_info(struct ktest_thread *t,
				      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktest_vreport(t, false, fmt, ap);
	va_end(ap);
}

static __printf(2, 3) void ktest_fail(struct ktest_thread *t,
				      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktest_vreport(t, true, fmt, ap);
	va_end(ap);
}

/* ---- data patterns ------------------------------------------------------ */

/* Byte @i of a payload: never 0, the poison of a buffer waiting for data. */
static u8 ktest_byte(u32 seed, u32 iter, u32 i)
{
	u32 x = i * 0x9e3779b1U ^ (iter * 0x85ebca6bU + seed * 0xc2b2ae35U);

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 13;
	return x % 255 + 1;
}

static void ktest_fill(u8 *va, u32 len, u32 seed, u32 iter)
{
	u32 i;

	for (i = 0; i < len; i++)
		va[i] = ktest_byte(seed, iter, i);
	if (ktest_corrupt >= 0 && iter == (u32)ktest_corrupt && len)
		va[len / 2] ^= 0xff;
}

/* Check @len bytes against the pattern; report the first that differs. */
static bool ktest_verify(struct ktest_thread *t, const char *what, u32 iter,
			 const u8 *va, u32 len, u32 seed)
{
	u32 i;
	u8 want;

	for (i = 0; i < len; i++) {
		want = ktest_byte(seed, iter, i);
		if (va[i] != want) {
			ktest_fail(t, "%s iteration %u (%u bytes): byte %u is 0x%02x, want 0x%02x",
				   what, iter, len, i, va[i], want);
			return false;
		}
	}
	return true;
}

/* ---- a connection ---------------------------------------------------- */

/* A physically contiguous buffer, mapped page by page. */
struct ktest_buf {
	u8 *va;
	u32 len;
	unsigned int npages;
	struct sg_table sgt;
	int nents;			/* mapped entries, 0 when unmapped */
};

/* A send work request and its completion. */
struct ktest_op {
	struct ib_cqe cqe;
	struct ktest_conn *c;
	bool busy;			/* posted and not yet reaped by the thread */
	bool done;			/* the completion arrived */
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
};

/* A receive WQE: its control message slot, then the receive buffer. */
struct ktest_rslot {
	struct ib_cqe cqe;
	struct ktest_conn *c;
	unsigned int idx;
};

/* A receive completion, as the handler passes it to the thread. */
struct ktest_rx {
	struct ktest_msg msg;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	int wc_flags;
	u32 inv_rkey;
};

enum ktest_cm_state {
	KTEST_CM_IDLE,
	KTEST_CM_ADDR,
	KTEST_CM_ROUTE,
	KTEST_CM_CONNECTED,
};

/*
 * One connection. Its thread owns it; the rdma_cm handler writes only
 * the cm_* fields and the two flags below them, the completion handlers
 * only their op or slot, the counters, the rx queue (under rx_lock) and
 * the burst state. It is freed after its QP is drained and destroyed and
 * its CQs freed, so no handler can run for it any more.
 */
struct ktest_conn {
	struct ktest_cmctx cmx;
	struct ktest_thread *t;
	struct rdma_cm_id *cm_id;
	wait_queue_head_t wq;
	/* set by the rdma_cm event handler */
	int cm_state;
	int cm_error;			/* the failing event, or 0 */
	int cm_status;
	bool disconnected;
	bool removed;
	/* the connection request */
	u32 kind;
	u32 max_size;
	u32 flags;
	/* verbs objects */
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ib_qp *qp;
	bool direct;			/* CQs polled by the thread */
	u32 max_inline;			/* inline bytes the QP took */
	u32 nsent;			/* control messages sent */
	struct ktest_msg *rmsg;		/* receive slots */
	u64 rmsg_dma;
	struct ktest_msg *smsg;		/* send slots, one per op */
	u64 smsg_dma;
	struct ktest_buf sbuf;		/* what we send or WRITE */
	struct ktest_buf rbuf;		/* where data lands */
	struct ib_sge rsge[KTEST_DATA_SGES];
	int nrsge;
	struct ib_mr *base_mr;		/* server: rbuf, for write and read */
	struct ib_mr *fr_mr;		/* rbuf, registered per iteration */
	struct ib_mr *big_mr;		/* server: the same in KTEST_BIG_PAGE pages */
	struct ib_mr *fr_cur;		/* server: fr_mr or big_mr, the last used */
	bool big_seen;			/* client: the server used big_mr */
	bool bye_answered;		/* server: the goodbye's answer posted */
	bool bye_sent;			/* client: the goodbye posted */
	bool flush_ends;		/* server, negative session */
	struct ktest_rslot rslot[KTEST_NRECV];
	struct ktest_op op[KTEST_NOPS];	/* op[0]: the burst */
	atomic_t sq_out;		/* send WRs posted, not completed */
	struct ib_cqe tail_cqe;		/* tail's unsignaled WRITEs */
	atomic_t rq_out;		/* receive WRs posted, not completed */
	/* receive handler -> thread */
	spinlock_t rx_lock;		/* rx, rx_head, rx_tail, rx_overflow, cb_err */
	struct ktest_rx rx[KTEST_RXQ];
	unsigned int rx_head;
	unsigned int rx_tail;
	bool rx_overflow;
	char cb_err[96];		/* first error a handler ran into */
	bool cb_err_told;
	/*
	 * The burst: the client's handler chain (stream 0), and what the
	 * server's receive handler saw of each stream.
	 */
	u32 burst_len;
	u32 burst_next;
	u32 burst_rcvd[KTEST_STREAMS];
	u32 burst_total[KTEST_STREAMS];
	u32 burst_bad_stream;
	u32 burst_bad_seq;
	u32 burst_bad_got;
	bool burst_bad;
	/* client: the server's buffer */
	u32 peer_rkey;
	u64 peer_addr;
	u32 peer_len;
	/* server: the last fast registration, and statistics */
	u32 fr_iter;
	u32 fr_len;
	u64 nmsgs;
	u64 nbytes;
	int failures;
};

static unsigned long ktest_tmo(void)
{
	return msecs_to_jiffies(ktest_timeout_ms);
}

static void ktest_cb_error(struct ktest_conn *c, const char *what)
{
	unsigned long flags;

	spin_lock_irqsave(&c->rx_lock, flags);
	if (!c->cb_err[0])
		strscpy(c->cb_err, what, sizeof(c->cb_err));
	spin_unlock_irqrestore(&c->rx_lock, flags);
	wake_up(&c->wq);
}

/* Report a failure of this connection. */
static __printf(2, 3) void ktest_cfail(struct ktest_conn *c,
				       const char *fmt, ...)
{
	va_list ap;

	c->failures++;
	va_start(ap, fmt);
	ktest_vreport(c->t, true, fmt, ap);
	va_end(ap);
}

/* ---- buffers ------------------------------------------------------------- */

static int ktest_buf_init(struct ib_device *dev, struct ktest_buf *b, u32 len)
{
	struct scatterlist *sg;
	unsigned int i;

	b->len = len;
	b->npages = DIV_ROUND_UP(len, PAGE_SIZE);
	b->va = alloc_pages_exact(b->npages * PAGE_SIZE,
				  GFP_KERNEL | __GFP_ZERO);
	if (!b->va)
		return -ENOMEM;
	if (sg_alloc_table(&b->sgt, b->npages, GFP_KERNEL)) {
		free_pages_exact(b->va, b->npages * PAGE_SIZE);
		b->va = NULL;
		return -ENOMEM;
	}
	/* One entry per page; the last one ends with the buffer. */
	for_each_sg(b->sgt.sgl, sg, b->npages, i)
		sg_set_page(sg, virt_to_page(b->va + i * PAGE_SIZE),
			    min_t(u32, PAGE_SIZE, len - i * PAGE_SIZE), 0);
	b->nents = ib_dma_map_sg(dev, b->sgt.sgl, b->npages, DMA_BIDIRECTIONAL);
	return b->nents ? 0 : -EIO;
}

static void ktest_buf_free(struct ib_device *dev, struct ktest_buf *b)
{
	if (!b->va)
		return;
	if (b->nents)
		ib_dma_unmap_sg(dev, b->sgt.sgl, b->npages, DMA_BIDIRECTIONAL);
	sg_free_table(&b->sgt);
	free_pages_exact(b->va, b->npages * PAGE_SIZE);
	b->va = NULL;
}

/*
 * The first @len bytes of a buffer as at most KTEST_DATA_SGES SGEs:
 * DMA-contiguous entries are merged into pieces of about len / 4 bytes,
 * so a payload is gathered from, or scattered to, several multi-page SGEs.
 */
static int ktest_buf_sges(struct ktest_conn *c, struct ktest_buf *b, u32 len,
			  struct ib_sge *sge)
{
	u32 piece = round_up(DIV_ROUND_UP(len, KTEST_DATA_SGES), PAGE_SIZE);
	struct scatterlist *sg;
	u32 left = len, l;
	int n = 0, i;
	u64 a;

	for_each_sg(b->sgt.sgl, sg, b->nents, i) {
		if (!left)
			break;
		a = sg_dma_address(sg);
		l = min_t(u32, sg_dma_len(sg), left);
		if (n && sge[n - 1].addr + sge[n - 1].length == a &&
		    sge[n - 1].length + l <= piece) {
			sge[n - 1].length += l;
		} else {
			if (n == KTEST_DATA_SGES)
				return -EINVAL;
			sge[n].addr = a;
			sge[n].length = l;
			sge[n].lkey = c->pd->local_dma_lkey;
			n++;
		}
		left -= l;
	}
	return left ? -EINVAL : n;
}

static u64 ktest_rmsg_dma(struct ktest_conn *c, unsigned int idx)
{
	return c->rmsg_dma + idx * KTEST_MSG_SIZE;
}

static unsigned int ktest_op_idx(struct ktest_conn *c, struct ktest_op *op)
{
	return op - c->op;
}

static struct ktest_msg *ktest_op_msg(struct ktest_conn *c, struct ktest_op *op)
{
	return &c->smsg[ktest_op_idx(c, op)];
}

static void ktest_msg_init(struct ktest_msg *m, u16 type, u32 iter, u32 len)
{
	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_le32(KTEST_MAGIC);
	m->type = cpu_to_le16(type);
	m->iter = cpu_to_le32(iter);
	m->len = cpu_to_le32(len);
}

/* The SGE of an op's message slot, synced for the device. */
static void ktest_op_msg_sge(struct ktest_conn *c, struct ktest_op *op,
			     struct ib_sge *sge)
{
	sge->addr = c->smsg_dma + ktest_op_idx(c, op) * KTEST_MSG_SIZE;
	sge->length = KTEST_MSG_SIZE;
	sge->lkey = c->pd->local_dma_lkey;
	ib_dma_sync_single_for_device(c->dev, sge->addr, KTEST_MSG_SIZE,
				      DMA_TO_DEVICE);
}

/* ---- completions ------------------------------------------------------- */

static void ktest_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ktest_op *op = container_of(wc->wr_cqe, struct ktest_op, cqe);
	struct ktest_conn *c = op->c;

	op->status = wc->status;
	op->opcode = wc->opcode;
	atomic_dec(&c->sq_out);
	/* Pairs with ktest_pred_op(): status and opcode are written. */
	smp_store_release(&op->done, true);
	wake_up(&c->wq);
}

static void ktest_rx_push(struct ktest_conn *c, const struct ktest_rx *rx)
{
	unsigned long flags;

	spin_lock_irqsave(&c->rx_lock, flags);
	if (c->rx_head - c->rx_tail < KTEST_RXQ)
		c->rx[c->rx_head++ % KTEST_RXQ] = *rx;
	else
		c->rx_overflow = true;
	spin_unlock_irqrestore(&c->rx_lock, flags);
	wake_up(&c->wq);
}

static bool ktest_rx_pop(struct ktest_conn *c, struct ktest_rx *rx)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&c->rx_lock, flags);
	if (c->rx_head != c->rx_tail) {
		*rx = c->rx[c->rx_tail++ % KTEST_RXQ];
		got = true;
	}
	spin_unlock_irqrestore(&c->rx_lock, flags);
	return got;
}

static int ktest_post_recv(struct ktest_conn *c, struct ktest_rslot *rs)
{
	struct ib_sge sge[1 + KTEST_DATA_SGES];
	struct ib_recv_wr wr = {
		.wr_cqe = &rs->cqe,
		.sg_list = sge,
		.num_sge = 1 + c->nrsge,
	};
	int err;

	sge[0].addr = ktest_rmsg_dma(c, rs->idx);
	sge[0].length = KTEST_MSG_SIZE;
	sge[0].lkey = c->pd->local_dma_lkey;
	memcpy(sge + 1, c->rsge, c->nrsge * sizeof(sge[0]));
	ib_dma_sync_single_for_device(c->dev, sge[0].addr, KTEST_MSG_SIZE,
				      DMA_FROM_DEVICE);
	atomic_inc(&c->rq_out);
	err = ib_post_recv(c->qp, &wr, NULL);
	if (err)
		atomic_dec(&c->rq_out);
	return err;
}

static bool ktest_burst_fill_ok(const struct ktest_msg *m, u32 stream,
				u32 seq)
{
	u32 i;

	for (i = 0; i < sizeof(m->fill); i++)
		if (m->fill[i] != ktest_byte(KTEST_SEED_BURST + stream, seq, i))
			return false;
	return true;
}

/*
 * A burst message, in the receive handler: check its place in its
 * stream's sequence and its content here; the thread hears when both
 * streams are complete. Handlers of one CQ do not run concurrently.
 */
static void ktest_burst_rx(struct ktest_conn *c, const struct ktest_rx *rx)
{
	u32 seq = le32_to_cpu(rx->msg.iter), n = le32_to_cpu(rx->msg.len);
	u32 st = le32_to_cpu(rx->msg.arg);
	struct ktest_rx end = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.byte_len = KTEST_MSG_SIZE,
	};

	if (st >= KTEST_STREAMS) {
		c->burst_bad = true;
		c->burst_bad_stream = st;
		return;
	}
	if (!c->burst_bad &&
	    (seq != c->burst_rcvd[st] || rx->byte_len != KTEST_MSG_SIZE ||
	     (rx->wc_flags & IB_WC_WITH_INVALIDATE) ||
	     !ktest_burst_fill_ok(&rx->msg, st, seq))) {
		c->burst_bad = true;
		c->burst_bad_stream = st;
		c->burst_bad_seq = c->burst_rcvd[st];
		c->burst_bad_got = seq;
	}
	c->burst_rcvd[st]++;
	c->burst_total[st] = n;
	for (st = 0; st < KTEST_STREAMS; st++)
		if (!c->burst_total[st] ||
		    c->burst_rcvd[st] != c->burst_total[st])
			return;
	ktest_msg_init(&end.msg, KTEST_BURST_END, 0, 0);
	ktest_rx_push(c, &end);
}

/*
 * Receive handler: copy the control message out, post the receive again
 * at once (from whatever context the CQ polls in), and pass the message
 * to the thread. The payload, if any, stays in rbuf; the peer sends the
 * next one only after our answer.
 */
static void ktest_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ktest_rslot *rs = container_of(wc->wr_cqe, struct ktest_rslot,
					      cqe);
	struct ktest_conn *c = rs->c;
	struct ktest_rx rx = {
		.status = wc->status,
		.opcode = wc->opcode,
		.byte_len = wc->byte_len,
		.wc_flags = wc->wc_flags,
	};

	atomic_dec(&c->rq_out);
	if (wc->status == IB_WC_SUCCESS) {
		if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
			rx.inv_rkey = wc->ex.invalidate_rkey;
		ib_dma_sync_single_for_cpu(c->dev, ktest_rmsg_dma(c, rs->idx),
					   KTEST_MSG_SIZE, DMA_FROM_DEVICE);
		rx.msg = c->rmsg[rs->idx];
		if (ktest_post_recv(c, rs))
			ktest_cb_error(c, "ib_post_recv from the receive handler failed");
		if (rx.msg.magic == cpu_to_le32(KTEST_MAGIC) &&
		    le16_to_cpu(rx.msg.type) == KTEST_BURST) {
			ktest_burst_rx(c, &rx);
			return;
		}
	}
	ktest_rx_push(c, &rx);
}

/* ---- posting ------------------------------------------------------------ */

/* Post a chain of send WRs, keeping count of those in flight. */
static int ktest_post_send(struct ktest_conn *c, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *w, *bad = NULL;
	int err;

	for (w = wr; w; w = w->next)
		atomic_inc(&c->sq_out);
	err = ib_post_send(c->qp, wr, &bad);
	if (err)
		for (w = bad; w; w = w->next)
			atomic_dec(&c->sq_out);
	return err;
}

/* Post message @seq of burst stream @st from @op. */
static int ktest_post_burst(struct ktest_conn *c, struct ktest_op *op, u32 st,
			    u32 seq)
{
	struct ktest_msg *m = ktest_op_msg(c, op);
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_cqe = &op->cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ktest_msg_init(m, KTEST_BURST, seq, c->burst_len);
	m->arg = cpu_to_le32(st);
	ktest_fill(m->fill, sizeof(m->fill), KTEST_SEED_BURST + st, seq);
	ktest_op_msg_sge(c, op, &sge);
	return ktest_post_send(c, &wr);
}

/* Stream 0 of the burst: its send handler posts the next message itself. */
static void ktest_burst_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ktest_op *op = container_of(wc->wr_cqe, struct ktest_op, cqe);
	struct ktest_conn *c = op->c;

	atomic_dec(&c->sq_out);
	op->status = wc->status;
	op->opcode = wc->opcode;
	if (wc->status == IB_WC_SUCCESS && ++c->burst_next < c->burst_len) {
		if (!ktest_post_burst(c, op, 0, c->burst_next))
			return;
		ktest_cb_error(c, "ib_post_send from the send completion handler failed");
	}
	/* Pairs with ktest_pred_op(): status and opcode are written. */
	smp_store_release(&op->done, true);
	wake_up(&c->wq);
}

/* ---- waiting ----------------------------------------------------------- */

/* A direct CQ is polled here, in process context, with ib_poll_cq(). */
static void ktest_poll_direct(struct ktest_conn *c)
{
	struct ib_cq *cqs[2] = { c->scq, c->rcq };
	struct ib_wc wc[8];
	int i, j, n;

	for (i = 0; i < 2; i++) {
		if (!cqs[i])
			continue;
		while ((n = ib_poll_cq(cqs[i], ARRAY_SIZE(wc), wc)) > 0)
			for (j = 0; j < n; j++)
				wc[j].wr_cqe->done(cqs[i], &wc[j]);
	}
}

/*
 * Wait until @pred holds, at most @tmo jiffies. Return 0, -ETIMEDOUT, or
 * -EINTR when the module is being removed and @stoppable.
 */
static int ktest_wait(struct ktest_conn *c,
		      bool (*pred)(struct ktest_conn *c, void *arg), void *arg,
		      unsigned long tmo, bool stoppable)
{
	unsigned long end = jiffies + tmo;
	long left;

	for (;;) {
		if (c->direct)
			ktest_poll_direct(c);
		if (pred(c, arg))
			return 0;
		if (stoppable && kthread_should_stop())
			return -EINTR;
		left = (long)(end - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		if (c->direct)
			schedule_timeout_uninterruptible(1);
		else
			wait_event_timeout(c->wq, pred(c, arg) ||
					   (stoppable && kthread_should_stop()),
					   left);
	}
}

static bool ktest_pred_op(struct ktest_conn *c, void *arg)
{
	/* Pairs with the completion handlers' release of done. */
	return smp_load_acquire(&((struct ktest_op *)arg)->done);
}

/* The op completed, or the peer is gone and it may never complete. */
static bool ktest_pred_op_or_gone(struct ktest_conn *c, void *arg)
{
	return ktest_pred_op(c, arg) || READ_ONCE(c->disconnected) ||
	       READ_ONCE(c->removed);
}

static bool ktest_pred_rx_pending(struct ktest_conn *c, void *arg)
{
	return READ_ONCE(c->rx_head) != READ_ONCE(c->rx_tail);
}

static bool ktest_pred_rx(struct ktest_conn *c, void *arg)
{
	return READ_ONCE(c->rx_head) != READ_ONCE(c->rx_tail) ||
	       READ_ONCE(c->disconnected) || READ_ONCE(c->removed) ||
	       READ_ONCE(c->cb_err[0]);
}

static bool ktest_pred_cm(struct ktest_conn *c, void *arg)
{
	return READ_ONCE(c->cm_state) >= *(int *)arg ||
	       READ_ONCE(c->cm_error) || READ_ONCE(c->removed);
}

static bool ktest_pred_flushed(struct ktest_conn *c, void *arg)
{
	return !atomic_read(&c->sq_out) && !atomic_read(&c->rq_out);
}

static bool ktest_pred_disconnected(struct ktest_conn *c, void *arg)
{
	return READ_ONCE(c->disconnected) || READ_ONCE(c->removed);
}

static const char *ktest_why(int err)
{
	return err == -EINTR ? "interrupted by module removal" : "timed out";
}

/*
 * The QP's state as its driver reports it, for a missing completion: in
 * RTS the driver lost it; in ERR it failed to flush it.
 */
static const char *ktest_qp_state(struct ktest_conn *c)
{
	static const char * const names[] = {
		[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT",
		[IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS",
		[IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
		[IB_QPS_ERR] = "ERR",
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (!c->qp || ib_query_qp(c->qp, &attr, IB_QP_STATE, &init))
		return "unknown";
	if (attr.qp_state >= ARRAY_SIZE(names))
		return "unknown";
	return names[attr.qp_state];
}

/*
 * Wait for an op's completion: 0 when it came, -ENOTCONN when the peer
 * disconnected and it did not come within a grace period (an ACK may
 * still be on its way when the disconnect overtakes it), -ETIMEDOUT or
 * -EINTR.
 */
static int ktest_wait_op(struct ktest_conn *c, struct ktest_op *op)
{
	int err = ktest_wait(c, ktest_pred_op_or_gone, op, ktest_tmo(), true);

	if (err || ktest_pred_op(c, op))
		return err;
	err = ktest_wait(c, ktest_pred_op, op, msecs_to_jiffies(1000), true);
	return err == -ETIMEDOUT ? -ENOTCONN : err;
}

/* A free op, armed for a send WR. op[0] belongs to the burst. */
static struct ktest_op *ktest_op_get(struct ktest_conn *c, const char *what)
{
	struct ktest_op *op;
	int i;

	for (i = 1; i < KTEST_NOPS; i++) {
		op = &c->op[i];
		if (op->busy)
			continue;
		op->busy = true;
		op->done = false;
		op->cqe.done = ktest_send_done;
		return op;
	}
	ktest_cfail(c, "%s: no send slot left (completions lost earlier)",
		    what);
	return NULL;
}

/* Wait for an op's completion; it must succeed with opcode @want. */
static int ktest_op_wait(struct ktest_conn *c, struct ktest_op *op,
			 enum ib_wc_opcode want, const char *what, u32 iter)
{
	int err = ktest_wait_op(c, op);

	if (err == -ENOTCONN && (c->bye_answered || c->bye_sent))
		return err;	/* the goodbye's callers judge it */
	if (err == -ENOTCONN) {
		ktest_cfail(c, "%s iteration %u: the peer disconnected before the completion",
			    what, iter);
		return err;	/* the teardown flushes it */
	}
	if (err) {
		ktest_cfail(c, "%s iteration %u: no completion (opcode %d, QP %s): %s after %u ms",
			    what, iter, want, ktest_qp_state(c), ktest_why(err),
			    ktest_timeout_ms);
		return err;	/* the op stays busy: it may still complete */
	}
	op->busy = false;
	if (op->status != IB_WC_SUCCESS && c->bye_sent)
		return -ENOTCONN;	/* flushed or retried out: as above */
	/*
	 * A negative session's client breaks the rules as soon as it has
	 * our reply, and our responder's error stops our QP (IBA 9.9.3.1).
	 * That can come before the ACK of the reply, which is then flushed,
	 * delivered all the same: nothing orders a responder's ACKs before
	 * its own QP's next request. A reply lost for good fails the client.
	 */
	if (op->status == IB_WC_WR_FLUSH_ERR && c->flush_ends)
		return -ENOTCONN;
	if (op->status != IB_WC_SUCCESS) {
		ktest_cfail(c, "%s iteration %u: completion status '%s' (%d)",
			    what, iter, ib_wc_status_msg(op->status),
			    op->status);
		return -EIO;
	}
	if (op->opcode != want) {
		ktest_cfail(c, "%s iteration %u: completion opcode %d, want %d",
			    what, iter, op->opcode, want);
		return -EIO;
	}
	return 0;
}

/*
 * May the connection go on? Not once rdma_cm has said its device is
 * going away: the device keeps working until we let go of it, so the
 * data path alone would never stop us, and the removal waits for us.
 * Nor once the module is being removed.
 */
static int ktest_alive(struct ktest_conn *c, const char *what, u32 iter)
{
	if (READ_ONCE(c->removed)) {
		ktest_cfail(c, "%s iteration %u: the device is going away",
			    what, iter);
		return -ENODEV;
	}
	if (kthread_should_stop()) {
		ktest_cfail(c, "%s iteration %u: interrupted by module removal",
			    what, iter);
		return -EINTR;
	}
	return 0;
}

/* Post a chain whose WRs each carry the cqe of ops[i]; wait for them all. */
static int ktest_run_chain(struct ktest_conn *c, struct ib_send_wr *wr,
			   struct ktest_op **ops, const enum ib_wc_opcode *want,
			   int n, const char *what, u32 iter)
{
	int err, i;

	err = ktest_alive(c, what, iter);
	if (err) {
		for (i = 0; i < n; i++)
			ops[i]->busy = false;
		return err;
	}
	err = ktest_post_send(c, wr);
	if (err) {
		ktest_cfail(c, "%s iteration %u: ib_post_send: %d", what, iter,
			    err);
		return err;
	}
	for (i = 0; i < n; i++) {
		err = ktest_op_wait(c, ops[i], want[i], what, iter);
		if (err)
			return err;
	}
	return 0;
}

/* Send a control message and wait for its completion. */
static int ktest_send_msg(struct ktest_conn *c, const struct ktest_msg *m,
			  u32 inv_rkey, const char *what)
{
	struct ktest_op *op = ktest_op_get(c, what);
	enum ib_wc_opcode want = IB_WC_SEND;
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.opcode = inv_rkey ? IB_WR_SEND_WITH_INV : IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
		.ex.invalidate_rkey = inv_rkey,
	};

	if (!op)
		return -EBUSY;
	wr.wr_cqe = &op->cqe;
	*ktest_op_msg(c, op) = *m;
	ktest_op_msg_sge(c, op, &sge);
	/*
	 * Every other control message goes inline: the device copies it at
	 * post time, from its CPU address.
	 */
	if (c->max_inline >= KTEST_MSG_SIZE && (c->nsent++ & 1)) {
		wr.send_flags |= IB_SEND_INLINE;
		sge.addr = (uintptr_t)ktest_op_msg(c, op);
	}
	return ktest_run_chain(c, &wr, &op, &want, 1, what,
			       le32_to_cpu(m->iter));
}

static int ktest_reply(struct ktest_conn *c, u16 type, u32 iter, bool ok,
		       const char *what)
{
	struct ktest_msg m;

	ktest_msg_init(&m, type, iter, 0);
	m.status = cpu_to_le16(!ok);
	return ktest_send_msg(c, &m, 0, what);
}

/* Send @len bytes of sbuf behind a KTEST_DATA message. */
static int ktest_send_data(struct ktest_conn *c, u32 iter, u32 len, bool ok,
			   const char *what)
{
	struct ktest_op *op = ktest_op_get(c, what);
	enum ib_wc_opcode want = IB_WC_SEND;
	struct ib_sge sge[1 + KTEST_DATA_SGES];
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = sge,
	};
	int n;

	if (!op)
		return -EBUSY;
	n = ktest_buf_sges(c, &c->sbuf, len, sge + 1);
	if (n < 0) {
		op->busy = false;
		ktest_cfail(c, "%s iteration %u: %u bytes do not fit in %d SGEs",
			    what, iter, len, KTEST_DATA_SGES);
		return n;
	}
	ktest_msg_init(ktest_op_msg(c, op), KTEST_DATA, iter, len);
	ktest_op_msg(c, op)->status = cpu_to_le16(!ok);
	ktest_op_msg_sge(c, op, &sge[0]);
	wr.wr_cqe = &op->cqe;
	wr.num_sge = 1 + n;
	return ktest_run_chain(c, &wr, &op, &want, 1, what, iter);
}

/*
 * Take the next received message. It must have completed successfully,
 * as a receive, with our magic. Anything a handler ran into is reported
 * here.
 */
static int ktest_recv(struct ktest_conn *c, struct ktest_rx *rx,
		      const char *what, u32 iter, bool quiet)
{
	int err = ktest_alive(c, what, iter);
	bool got;

	if (err)
		return err;
	err = ktest_wait(c, ktest_pred_rx, NULL, ktest_tmo(), true);
	got = ktest_rx_pop(c, rx);

	/* The disconnect may overtake a completion still in the CQ. */
	if (!got && !err && (READ_ONCE(c->disconnected) || READ_ONCE(c->removed)) &&
	    !ktest_wait(c, ktest_pred_rx_pending, NULL, msecs_to_jiffies(1000),
			true))
		got = ktest_rx_pop(c, rx);

	if (c->cb_err[0] && !c->cb_err_told) {
		c->cb_err_told = true;
		ktest_cfail(c, "%s iteration %u: completion handler: %s",
			    what, iter, c->cb_err);
		return -EIO;
	}
	if (c->rx_overflow) {
		ktest_cfail(c, "%s iteration %u: more messages than receive WQEs",
			    what, iter);
		return -EIO;
	}
	if (!got) {
		if (READ_ONCE(c->disconnected) || READ_ONCE(c->removed)) {
			if (!quiet)
				ktest_cfail(c, "%s iteration %u: the peer disconnected",
					    what, iter);
			return -ENOTCONN;
		}
		ktest_cfail(c, "%s iteration %u: no message from the peer: %s after %u ms",
			    what, iter, ktest_why(err ?: -ETIMEDOUT),
			    ktest_timeout_ms);
		return err ?: -ETIMEDOUT;
	}
	if (rx->status != IB_WC_SUCCESS) {
		if (quiet)
			return -ENOTCONN;
		ktest_cfail(c, "%s iteration %u: receive completion status '%s' (%d)",
			    what, iter, ib_wc_status_msg(rx->status),
			    rx->status);
		return -EIO;
	}
	if (rx->opcode != IB_WC_RECV ||
	    rx->msg.magic != cpu_to_le32(KTEST_MAGIC)) {
		ktest_cfail(c, "%s iteration %u: receive opcode %d, magic 0x%x: not our message",
			    what, iter, rx->opcode,
			    le32_to_cpu(rx->msg.magic));
		return -EIO;
	}
	return 0;
}

/*
 * Receive a message of @type for @iter that reports no failure, and
 * check the completion's byte count and flags.
 */
static int ktest_expect(struct ktest_conn *c, struct ktest_rx *rx, u16 type,
			const char *what, u32 iter)
{
	u16 got;
	int err;

	err = ktest_recv(c, rx, what, iter, false);
	if (err)
		return err;
	got = le16_to_cpu(rx->msg.type);
	if (got != type || le32_to_cpu(rx->msg.iter) != iter) {
		ktest_cfail(c, "%s iteration %u: got message %u for iteration %u, want %u",
			    what, iter, got, le32_to_cpu(rx->msg.iter), type);
		return -EPROTO;
	}
	if (rx->wc_flags & IB_WC_WITH_INVALIDATE) {
		ktest_cfail(c, "%s iteration %u: IB_WC_WITH_INVALIDATE on a plain SEND",
			    what, iter);
		return -EPROTO;
	}
	if (type != KTEST_DATA && rx->byte_len != KTEST_MSG_SIZE) {
		ktest_cfail(c, "%s iteration %u: byte_len %u, want %zu",
			    what, iter, rx->byte_len, KTEST_MSG_SIZE);
		return -EPROTO;
	}
	if (le16_to_cpu(rx->msg.status)) {
		ktest_cfail(c, "%s iteration %u: the peer reports a failure (see its log)",
			    what, iter);
		return -EIO;
	}
	return 0;
}

/* Send control message @m and wait for the peer's @reply to it, into @rx. */
static int ktest_ask(struct ktest_conn *c, const struct ktest_msg *m,
		     struct ktest_rx *rx, u16 reply, const char *what)
{
	int err = ktest_send_msg(c, m, 0, what);

	return err ?: ktest_expect(c, rx, reply, what, le32_to_cpu(m->iter));
}

/* ---- rdma_cm ------------------------------------------------------------ */

static struct ktest_conn *ktest_conn_alloc(struct ktest_thread *t)
{
	struct ktest_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int i;

	if (!c)
		return NULL;
	c->t = t;
	init_waitqueue_head(&c->wq);
	spin_lock_init(&c->rx_lock);
	atomic_set(&c->sq_out, 0);
	atomic_set(&c->rq_out, 0);
	for (i = 0; i < KTEST_NOPS; i++) {
		c->op[i].c = c;
		c->op[i].cqe.done = ktest_send_done;
	}
	for (i = 0; i < KTEST_NRECV; i++) {
		c->rslot[i].c = c;
		c->rslot[i].idx = i;
		c->rslot[i].cqe.done = ktest_recv_done;
	}
	return c;
}

/* A connection request on the listener: hand it to the server thread. */
static int ktest_listen_event(struct ktest_thread *t, struct rdma_cm_id *id,
			      struct rdma_cm_event *ev)
{
	const struct ktest_hello *h = ev->param.conn.private_data;
	struct ktest_conn *c;
	bool busy;

	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		WRITE_ONCE(t->removed, true);
		wake_up(&t->wq);
		return 0;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;

	if (!h || ev->param.conn.private_data_len < sizeof(*h) ||
	    h->magic != cpu_to_le32(KTEST_MAGIC) ||
	    le32_to_cpu(h->kind) >= KTEST_NKINDS ||
	    !le32_to_cpu(h->max_size) ||
	    le32_to_cpu(h->max_size) > KTEST_MAX_SIZE) {
		ktest_info(t, "rejecting a connection request that is not ours");
		return -EINVAL;		/* rdma_cm rejects and destroys it */
	}
	c = ktest_conn_alloc(t);
	if (!c)
		return -ENOMEM;
	c->cm_id = id;
	c->kind = le32_to_cpu(h->kind);
	c->max_size = le32_to_cpu(h->max_size);
	c->flags = le32_to_cpu(h->flags);
	c->direct = c->kind != KTEST_MAIN || ktest_poll_ctx == IB_POLL_DIRECT;

	spin_lock(&t->lock);
	busy = t->pending;
	if (!busy)
		t->pending = c;
	spin_unlock(&t->lock);
	if (busy) {
		kfree(c);
		return -EBUSY;
	}
	/* Later events of this id go to the connection. */
	id->context = &c->cmx;
	wake_up(&t->wq);
	return 0;
}

static int ktest_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ktest_cmctx *x = id->context;
	struct ktest_conn *c;

	if (x->listener)
		return ktest_listen_event(container_of(x, struct ktest_thread,
						       cmx), id, ev);
	c = container_of(x, struct ktest_conn, cmx);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		WRITE_ONCE(c->cm_state, KTEST_CM_ADDR);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		WRITE_ONCE(c->cm_state, KTEST_CM_ROUTE);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		WRITE_ONCE(c->cm_state, KTEST_CM_CONNECTED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		WRITE_ONCE(c->disconnected, true);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		WRITE_ONCE(c->removed, true);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		c->cm_status = ev->status;
		WRITE_ONCE(c->cm_error, ev->event);
		break;
	default:
		break;
	}
	wake_up(&c->wq);
	return 0;
}

/* Wait for the rdma_cm state @want; report the failure otherwise. */
static int ktest_cm_wait(struct ktest_conn *c, int want, const char *what,
			 bool quiet)
{
	int err = ktest_wait(c, ktest_pred_cm, &want, ktest_tmo(), true);

	if (READ_ONCE(c->cm_state) >= want)
		return 0;
	if (c->removed) {
		ktest_cfail(c, "%s: the device went away", what);
		return -ENODEV;
	}
	if (c->cm_error) {
		if (!quiet)
			ktest_cfail(c, "%s: %s (status %d)", what,
				    rdma_event_msg(c->cm_error), c->cm_status);
		return -ECONNREFUSED;
	}
	ktest_cfail(c, "%s: %s after %u ms", what, ktest_why(err),
		    ktest_timeout_ms);
	return err ?: -ETIMEDOUT;
}

/* The verbs objects of a connection whose cm_id has its device. */
static int ktest_conn_setup(struct ktest_conn *c)
{
	struct ib_device *dev = c->cm_id->device;
	enum ib_poll_context pctx = c->direct ? IB_POLL_DIRECT : ktest_poll_ctx;
	struct ib_qp_init_attr qa = {};
	u32 npages = DIV_ROUND_UP(c->max_size, PAGE_SIZE);
	int err, i;

	c->dev = dev;
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		ktest_cfail(c, "device %s does not advertise IB_DEVICE_MEM_MGT_EXTENSIONS",
			    dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	if (dev->attrs.max_fast_reg_page_list_len < npages) {
		ktest_cfail(c, "device %s: max_fast_reg_page_list_len %u < %u pages",
			    dev_name(&dev->dev),
			    dev->attrs.max_fast_reg_page_list_len, npages);
		return -EOPNOTSUPP;
	}

	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		err = PTR_ERR(c->pd);
		c->pd = NULL;
		ktest_cfail(c, "ib_alloc_pd: %d", err);
		return err;
	}
	c->scq = ib_alloc_cq(dev, c, KTEST_CQ_DEPTH, 0, pctx);
	if (IS_ERR(c->scq)) {
		err = PTR_ERR(c->scq);
		c->scq = NULL;
		ktest_cfail(c, "ib_alloc_cq (send): %d", err);
		return err;
	}
	c->rcq = ib_alloc_cq(dev, c, KTEST_CQ_DEPTH, 0, pctx);
	if (IS_ERR(c->rcq)) {
		err = PTR_ERR(c->rcq);
		c->rcq = NULL;
		ktest_cfail(c, "ib_alloc_cq (receive): %d", err);
		return err;
	}

	qa.qp_context = c;
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	qa.cap.max_send_wr = KTEST_SQ_DEPTH;
	qa.cap.max_recv_wr = KTEST_NRECV + 1;	/* + ib_drain_rq() */
	qa.cap.max_send_sge = 1 + KTEST_DATA_SGES;
	qa.cap.max_recv_sge = 1 + KTEST_DATA_SGES;
	qa.cap.max_inline_data = KTEST_MSG_SIZE;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	err = rdma_create_qp(c->cm_id, c->pd, &qa);
	if (err) {
		ktest_cfail(c, "rdma_create_qp: %d", err);
		return err;
	}
	c->qp = c->cm_id->qp;
	c->max_inline = qa.cap.max_inline_data;

	c->rmsg = kcalloc(KTEST_NRECV, KTEST_MSG_SIZE, GFP_KERNEL);
	c->smsg = kcalloc(KTEST_NOPS, KTEST_MSG_SIZE, GFP_KERNEL);
	if (!c->rmsg || !c->smsg) {
		ktest_cfail(c, "out of memory for messages");
		return -ENOMEM;
	}
	c->rmsg_dma = ib_dma_map_single(dev, c->rmsg,
					KTEST_NRECV * KTEST_MSG_SIZE,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, c->rmsg_dma)) {
		c->rmsg_dma = 0;
		ktest_cfail(c, "ib_dma_map_single of the receive slots failed");
		return -EIO;
	}
	c->smsg_dma = ib_dma_map_single(dev, c->smsg,
					KTEST_NOPS * KTEST_MSG_SIZE,
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, c->smsg_dma)) {
		c->smsg_dma = 0;
		ktest_cfail(c, "ib_dma_map_single of the send slots failed");
		return -EIO;
	}

	err = ktest_buf_init(dev, &c->sbuf, c->max_size);
	if (!err)
		err = ktest_buf_init(dev, &c->rbuf, c->max_size);
	if (err) {
		ktest_cfail(c, "buffers of %u bytes: %d", c->max_size, err);
		return err;
	}
	c->nrsge = ktest_buf_sges(c, &c->rbuf, c->rbuf.len, c->rsge);
	if (c->nrsge < 0) {
		ktest_cfail(c, "the receive buffer does not fit in %d SGEs",
			    KTEST_DATA_SGES);
		return -EINVAL;
	}

	c->fr_mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, c->rbuf.npages);
	if (IS_ERR(c->fr_mr)) {
		err = PTR_ERR(c->fr_mr);
		c->fr_mr = NULL;
		ktest_cfail(c, "ib_alloc_mr(IB_MR_TYPE_MEM_REG, %u): %d",
			    c->rbuf.npages, err);
		return err;
	}
	if (c->t->server && (dev->attrs.page_size_cap & KTEST_BIG_PAGE)) {
		/* Room for the pages of a buffer not aligned to them. */
		c->big_mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG,
					DIV_ROUND_UP(c->rbuf.len, KTEST_BIG_PAGE) + 1);
		if (IS_ERR(c->big_mr)) {
			err = PTR_ERR(c->big_mr);
			c->big_mr = NULL;
			ktest_cfail(c, "ib_alloc_mr(IB_MR_TYPE_MEM_REG) for %u KiB pages: %d",
				    KTEST_BIG_PAGE / SZ_1K, err);
			return err;
		}
	}
	c->fr_cur = c->fr_mr;
	if (c->t->server) {
		c->base_mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG,
					 c->rbuf.npages);
		if (IS_ERR(c->base_mr)) {
			err = PTR_ERR(c->base_mr);
			c->base_mr = NULL;
			ktest_cfail(c, "ib_alloc_mr(IB_MR_TYPE_MEM_REG, %u): %d",
				    c->rbuf.npages, err);
			return err;
		}
	}

	for (i = 0; i < KTEST_NRECV; i++) {
		err = ktest_post_recv(c, &c->rslot[i]);
		if (err) {
			ktest_cfail(c, "ib_post_recv: %d", err);
			return err;
		}
	}
	return 0;
}

/*
 * Tear a connection down, whatever state it is in: disconnect, move the
 * QP to error and wait (bounded) for every work request to flush, then
 * ib_drain_qp(), and free everything in reverse order.
 */
static void ktest_conn_destroy(struct ktest_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err;

	if (c->cm_id && READ_ONCE(c->cm_state) == KTEST_CM_CONNECTED &&
	    !c->removed) {
		rdma_disconnect(c->cm_id);
		ktest_wait(c, ktest_pred_disconnected, NULL,
			   msecs_to_jiffies(2000), false);
	}
	if (c->qp) {
		ib_modify_qp(c->qp, &attr, IB_QP_STATE);
		err = ktest_wait(c, ktest_pred_flushed, NULL, ktest_tmo(),
				 false);
		if (err)
			ktest_cfail(c, "teardown: %d+%d WRs unflushed after %u ms, not draining",
				    atomic_read(&c->sq_out),
				    atomic_read(&c->rq_out), ktest_timeout_ms);
		else
			ib_drain_qp(c->qp);
		rdma_destroy_qp(c->cm_id);
		c->qp = NULL;
	}
	if (c->base_mr)
		ib_dereg_mr(c->base_mr);
	if (c->fr_mr)
		ib_dereg_mr(c->fr_mr);
	if (c->big_mr)
		ib_dereg_mr(c->big_mr);
	if (c->dev) {
		ktest_buf_free(c->dev, &c->sbuf);
		ktest_buf_free(c->dev, &c->rbuf);
		if (c->rmsg_dma)
			ib_dma_unmap_single(c->dev, c->rmsg_dma,
					    KTEST_NRECV * KTEST_MSG_SIZE,
					    DMA_FROM_DEVICE);
		if (c->smsg_dma)
			ib_dma_unmap_single(c->dev, c->smsg_dma,
					    KTEST_NOPS * KTEST_MSG_SIZE,
					    DMA_TO_DEVICE);
	}
	kfree(c->rmsg);
	kfree(c->smsg);
	if (c->scq)
		ib_free_cq(c->scq);
	if (c->rcq)
		ib_free_cq(c->rcq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	if (c->cm_id)
		rdma_destroy_id(c->cm_id);
	kfree(c);
}

static void ktest_conn_param_init(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = KTEST_RD_ATOM;
	p->initiator_depth = KTEST_RD_ATOM;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* Client: one attempt at a connection; *retry when nobody listened yet. */
static int ktest_try_connect(struct ktest_conn *c, bool *retry)
{
	struct ktest_hello h = {
		.magic = cpu_to_le32(KTEST_MAGIC),
		.kind = cpu_to_le32(c->kind),
		.max_size = cpu_to_le32(c->max_size),
		.flags = cpu_to_le32(c->flags),
	};
	struct rdma_conn_param p;
	int err;

	*retry = false;
	c->cm_id = rdma_create_id(&init_net, ktest_cm_handler, &c->cmx,
				  RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->cm_id)) {
		err = PTR_ERR(c->cm_id);
		c->cm_id = NULL;
		ktest_cfail(c, "rdma_create_id: %d", err);
		return err;
	}
	err = rdma_resolve_addr(c->cm_id, NULL,
				(struct sockaddr *)&ktest_sockaddr, 2000);
	if (err) {
		ktest_cfail(c, "rdma_resolve_addr %pISpc: %d",
			    &ktest_sockaddr, err);
		return err;
	}
	err = ktest_cm_wait(c, KTEST_CM_ADDR, "resolving the address", false);
	if (err)
		return err;
	err = rdma_resolve_route(c->cm_id, 2000);
	if (err) {
		ktest_cfail(c, "rdma_resolve_route: %d", err);
		return err;
	}
	err = ktest_cm_wait(c, KTEST_CM_ROUTE, "resolving the route", false);
	if (err)
		return err;
	err = ktest_conn_setup(c);
	if (err)
		return err;

	ktest_conn_param_init(&p);
	p.private_data = &h;
	p.private_data_len = sizeof(h);
	err = rdma_connect(c->cm_id, &p);
	if (err) {
		ktest_cfail(c, "rdma_connect: %d", err);
		return err;
	}
	err = ktest_cm_wait(c, KTEST_CM_CONNECTED, "connecting", true);
	if (err == -ECONNREFUSED &&
	    (c->cm_error == RDMA_CM_EVENT_REJECTED ||
	     c->cm_error == RDMA_CM_EVENT_UNREACHABLE))
		*retry = true;
	return err;
}

/*
 * Client: connect for a session of @kind, retrying for a while when the
 * server is not listening yet.
 */
static struct ktest_conn *ktest_connect(struct ktest_thread *t, u32 kind,
					u32 max_size, bool last)
{
	unsigned long end = jiffies + ktest_tmo();
	struct ktest_conn *c;
	bool retry;
	int err, cm_error, cm_status;

	for (;;) {
		c = ktest_conn_alloc(t);
		if (!c) {
			ktest_fail(t, "%s: out of memory", ktest_kind_names[kind]);
			return NULL;
		}
		c->kind = kind;
		c->max_size = max_size;
		c->flags = last ? KTEST_HELLO_LAST : 0;
		c->direct = kind != KTEST_MAIN ||
			    ktest_poll_ctx == IB_POLL_DIRECT;
		err = ktest_try_connect(c, &retry);
		if (!err)
			return c;
		cm_error = c->cm_error;
		cm_status = c->cm_status;
		ktest_conn_destroy(c);
		if (!retry)
			return NULL;
		if (time_after(jiffies, end) || kthread_should_stop()) {
			ktest_fail(t, "%s: connecting to %pISpc: %s (status %d), still after %u ms",
				   ktest_kind_names[kind], &ktest_sockaddr,
				   rdma_event_msg(cm_error), cm_status,
				   ktest_timeout_ms);
			return NULL;
		}
		msleep(200);
	}
}

/* ---- memory registration -------------------------------------------- */

static int ktest_access(u32 arg)
{
	int access = 0;

	if (arg & KTEST_ACC_READ)
		access |= IB_ACCESS_REMOTE_READ;
	if (arg & KTEST_ACC_WRITE)
		access |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	return access;
}

/*
 * Fast-register the first @len bytes of rbuf with @mr: a new key (the
 * key byte goes up by one), ib_map_mr_sg() of its page-sized scatterlist
 * entries into pages of @page_size, and a REG_MR work request with
 * @access.
 */
static int ktest_fast_reg(struct ktest_conn *c, struct ib_mr *mr, u32 len,
			  unsigned int page_size, int access, const char *what,
			  u32 iter)
{
	int nents = DIV_ROUND_UP(len, PAGE_SIZE), n;
	enum ib_wc_opcode want = IB_WC_REG_MR;
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.access = access,
	};
	struct ktest_op *op;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, c->rbuf.sgt.sgl, nents, NULL, page_size);
	if (n != nents) {
		ktest_cfail(c, "%s iteration %u: ib_map_mr_sg (%u-byte pages) mapped %d of %d",
			    what, iter, page_size, n, nents);
		return n < 0 ? n : -EINVAL;
	}
	if (mr->length < len) {
		ktest_cfail(c, "%s iteration %u: MR length %llu < %u", what,
			    iter, mr->length, len);
		return -EINVAL;
	}
	op = ktest_op_get(c, what);
	if (!op)
		return -EBUSY;
	wr.wr.wr_cqe = &op->cqe;
	wr.mr = mr;
	wr.key = mr->rkey;
	return ktest_run_chain(c, &wr.wr, &op, &want, 1, what, iter);
}

static int ktest_local_inv(struct ktest_conn *c, u32 key, const char *what,
			   u32 iter)
{
	enum ib_wc_opcode want = IB_WC_LOCAL_INV;
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};
	struct ktest_op *op = ktest_op_get(c, what);

	if (!op)
		return -EBUSY;
	wr.wr_cqe = &op->cqe;
	return ktest_run_chain(c, &wr, &op, &want, 1, what, iter);
}

/* ---- the server ------------------------------------------------------ */

static int ktest_check_len(struct ktest_conn *c, u32 len, const char *what,
			   u32 iter)
{
	if (len && len <= c->rbuf.len)
		return 0;
	ktest_cfail(c, "%s iteration %u: length %u out of range", what, iter,
		    len);
	return -EPROTO;
}

/* Serve one control message. */
static int ktest_serve_one(struct ktest_conn *c, const struct ktest_rx *rx)
{
	struct ktest_thread *t = c->t;
	u16 type = le16_to_cpu(rx->msg.type);
	u32 iter = le32_to_cpu(rx->msg.iter), len = le32_to_cpu(rx->msg.len);
	struct ktest_msg m;
	bool ok = true, big;
	int err;

	if (type != KTEST_FR_INV_REMOTE &&
	    (rx->wc_flags & IB_WC_WITH_INVALIDATE)) {
		ktest_cfail(c, "message %u iteration %u: IB_WC_WITH_INVALIDATE on a plain SEND",
			    type, iter);
		ok = false;
	}
	if (type != KTEST_DATA && rx->byte_len != KTEST_MSG_SIZE) {
		ktest_cfail(c, "message %u iteration %u: byte_len %u, want %zu",
			    type, iter, rx->byte_len, KTEST_MSG_SIZE);
		ok = false;
	}
	c->nmsgs++;

	switch (type) {
	case KTEST_HELLO:
		err = ktest_fast_reg(c, c->base_mr, c->rbuf.len, PAGE_SIZE,
				     IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_READ |
				     IB_ACCESS_REMOTE_WRITE,
				     "registering the buffer", 0);
		if (err)
			return err;
		ktest_msg_init(&m, KTEST_HELLO_ACK, 0, c->rbuf.len);
		m.rkey = cpu_to_le32(c->base_mr->rkey);
		m.addr = cpu_to_le64(c->base_mr->iova);
		m.status = cpu_to_le16(!ok);
		return ktest_send_msg(c, &m, 0, "hello");

	case KTEST_DATA:
		err = ktest_check_len(c, len, "send/recv", iter);
		if (err)
			return err;
		if (rx->byte_len != KTEST_MSG_SIZE + len) {
			ktest_cfail(c, "send/recv iteration %u: byte_len %u, want %zu",
				    iter, rx->byte_len, KTEST_MSG_SIZE + len);
			ok = false;
		}
		ok &= ktest_verify(t, "send/recv", iter, c->rbuf.va, len,
				   KTEST_SEED_C2S);
		c->nbytes += len;
		memset(c->rbuf.va, 0, len);
		ktest_fill(c->sbuf.va, len, KTEST_SEED_S2C, iter);
		return ktest_send_data(c, iter, len, ok, "send/recv reply");

	case KTEST_BURST_END:
		if (c->burst_bad) {
			ktest_cfail(c, "send burst stream %u: message %u: sequence %u or bad data",
				    c->burst_bad_stream, c->burst_bad_seq,
				    c->burst_bad_got);
			ok = false;
		}
		len = c->burst_rcvd[0] + c->burst_rcvd[1];
		ktest_msg_init(&m, KTEST_BURST_RESULT, 0, len);
		m.status = cpu_to_le16(!ok);
		c->nmsgs += len;
		memset(c->burst_rcvd, 0, sizeof(c->burst_rcvd));
		memset(c->burst_total, 0, sizeof(c->burst_total));
		c->burst_bad = false;
		return ktest_send_msg(c, &m, 0, "send burst result");

	case KTEST_WRITTEN:
		err = ktest_check_len(c, len, "rdma_write", iter);
		if (err)
			return err;
		ok &= ktest_verify(t, "rdma_write", iter, c->rbuf.va, len,
				   KTEST_SEED_WRITE);
		c->nbytes += len;
		memset(c->rbuf.va, 0, len);
		return ktest_reply(c, KTEST_VERIFIED, iter, ok, "rdma_write");

	case KTEST_PREP_READ:
		err = ktest_check_len(c, len, "rdma_read", iter);
		if (err)
			return err;
		ktest_fill(c->rbuf.va, len, KTEST_SEED_READ, iter);
		return ktest_reply(c, KTEST_READY, iter, ok, "rdma_read");

	case KTEST_FR_REG:
		err = ktest_check_len(c, len, "fast registration", iter);
		if (err)
			return err;
		ktest_fill(c->rbuf.va, len, KTEST_SEED_FRR, iter);
		big = c->big_mr && (le32_to_cpu(rx->msg.arg) & KTEST_ACC_BIG);
		c->fr_cur = big ? c->big_mr : c->fr_mr;
		err = ktest_fast_reg(c, c->fr_cur, len,
				     big ? KTEST_BIG_PAGE : PAGE_SIZE,
				     ktest_access(le32_to_cpu(rx->msg.arg)),
				     "fast registration", iter);
		if (err)
			return err;
		c->fr_iter = iter;
		c->fr_len = len;
		ktest_msg_init(&m, KTEST_FR_KEY, iter, c->fr_cur->length);
		m.rkey = cpu_to_le32(c->fr_cur->rkey);
		m.addr = cpu_to_le64(c->fr_cur->iova);
		m.arg = cpu_to_le32(c->fr_cur->page_size);
		m.status = cpu_to_le16(!ok);
		return ktest_send_msg(c, &m, 0, "fast registration");

	case KTEST_FR_WRITTEN:
		err = ktest_check_len(c, len, "rdma_write through the fast-registered rkey",
				      iter);
		if (err)
			return err;
		ok &= ktest_verify(t, "rdma_write through the fast-registered rkey",
				   iter, c->rbuf.va, len, KTEST_SEED_FRW);
		c->nbytes += len;
		ktest_fill(c->rbuf.va, len, KTEST_SEED_FRR, iter);
		return ktest_reply(c, KTEST_FR_READY, iter, ok, "fast registration");

	case KTEST_FR_INV_LOCAL:
		if (le32_to_cpu(rx->msg.rkey) != c->fr_cur->rkey) {
			ktest_cfail(c, "local_inv iteration %u: asked for %#x, key is %#x",
				    iter, le32_to_cpu(rx->msg.rkey),
				    c->fr_cur->rkey);
			ok = false;
		}
		err = ktest_local_inv(c, c->fr_cur->rkey, "local_inv", iter);
		if (err)
			return err;
		return ktest_reply(c, KTEST_ACK, iter, ok, "local_inv");

	case KTEST_FR_INV_REMOTE:
		if (!(rx->wc_flags & IB_WC_WITH_INVALIDATE)) {
			ktest_cfail(c, "send_with_inv iteration %u: no IB_WC_WITH_INVALIDATE",
				    iter);
			ok = false;
		} else if (rx->inv_rkey != c->fr_cur->rkey) {
			ktest_cfail(c, "send_with_inv iteration %u: invalidate_rkey %#x, want %#x",
				    iter, rx->inv_rkey, c->fr_cur->rkey);
			ok = false;
		}
		if (len) {
			err = ktest_check_len(c, len, "send_with_inv", iter);
			if (err)
				return err;
			ok &= ktest_verify(t, "rdma_write before send_with_inv",
					   iter, c->rbuf.va, len,
					   KTEST_SEED_FRW);
			c->nbytes += len;
		}
		return ktest_reply(c, KTEST_ACK, iter, ok, "send_with_inv");

	case KTEST_BYE:
		/*
		 * The client disconnects once it has our answer. On a lossy
		 * link the ACK for the answer may be lost and its disconnect
		 * arrive first, which shows the answer delivered as well.
		 */
		c->bye_answered = true;
		err = ktest_reply(c, KTEST_BYE_ACK, 0, ok, "goodbye");
		return err == -ENOTCONN ? 0 : err;

	default:
		ktest_cfail(c, "unknown message type %u", type);
		return -EPROTO;
	}
}

/* Serve a connection until the client says goodbye or goes away. */
static void ktest_serve(struct ktest_conn *c)
{
	struct ktest_thread *t = c->t;
	bool is_main = c->kind == KTEST_MAIN;
	struct ktest_rx rx;
	int err;

	c->flush_ends = !is_main;
	for (;;) {
		/*
		 * A negative check ends with our QP in error (the responder
		 * NAKed) or with the client disconnecting: both are expected.
		 */
		err = ktest_recv(c, &rx, "message", c->nmsgs, true);
		if (err == -ENOTCONN && !is_main)
			break;
		if (err == -ENOTCONN)
			ktest_cfail(c, "main session: client gone after %llu messages, no goodbye",
				    c->nmsgs);
		if (err)
			return;
		err = ktest_serve_one(c, &rx);
		if (err || le16_to_cpu(rx.msg.type) == KTEST_BYE)
			break;
	}
	if (c->kind == KTEST_NEG_ACCESS && c->fr_len &&
	    ktest_verify(t, "negative/read_only: the memory behind a read-only rkey",
			 c->fr_iter, c->rbuf.va, c->fr_len, KTEST_SEED_FRR))
		ktest_info(t, "negative/read_only: a WRITE through a read-only rkey left the memory unchanged: ok");
	if (is_main && !c->failures)
		ktest_info(t, "main session: %llu messages, %llu bytes verified: ok",
			   c->nmsgs, c->nbytes);
}

static int ktest_accept(struct ktest_conn *c)
{
	struct rdma_conn_param p;
	int err;

	ktest_conn_param_init(&p);
	/* Called outside the event handler: hold its lock. */
	rdma_lock_handler(c->cm_id);
	err = rdma_accept(c->cm_id, &p);
	rdma_unlock_handler(c->cm_id);
	if (err) {
		ktest_cfail(c, "rdma_accept: %d", err);
		return err;
	}
	return ktest_cm_wait(c, KTEST_CM_CONNECTED, "accepting", false);
}

static int ktest_listen(struct ktest_thread *t)
{
	int err;

	t->listen_id = rdma_create_id(&init_net, ktest_cm_handler, &t->cmx,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(t->listen_id)) {
		err = PTR_ERR(t->listen_id);
		t->listen_id = NULL;
		ktest_fail(t, "rdma_create_id: %d", err);
		return err;
	}
	err = rdma_bind_addr(t->listen_id, (struct sockaddr *)&ktest_sockaddr);
	if (err) {
		ktest_fail(t, "rdma_bind_addr %pISpc: %d (no RDMA device with that address?)",
			   &ktest_sockaddr, err);
		return err;
	}
	err = rdma_listen(t->listen_id, 4);
	if (err) {
		ktest_fail(t, "rdma_listen: %d", err);
		return err;
	}
	ktest_info(t, "listening on %pISpc", &ktest_sockaddr);
	return 0;
}

static struct ktest_conn *ktest_take_pending(struct ktest_thread *t)
{
	struct ktest_conn *c;

	spin_lock(&t->lock);
	c = t->pending;
	t->pending = NULL;
	spin_unlock(&t->lock);
	return c;
}

static bool ktest_srv_wake(struct ktest_thread *t)
{
	return READ_ONCE(t->pending) || READ_ONCE(t->removed) ||
	       kthread_should_stop();
}

static void ktest_server_run(struct ktest_thread *t)
{
	struct ktest_conn *c;
	bool last;
	int err;

	err = ktest_listen(t);
	complete_all(&t->listening);
	while (!err) {
		wait_event_timeout(t->wq, ktest_srv_wake(t),
				   msecs_to_jiffies(ktest_listen_ms));
		c = ktest_take_pending(t);
		if (!c) {
			if (kthread_should_stop())
				ktest_fail(t, "interrupted while waiting for a client");
			else if (t->removed)
				ktest_fail(t, "the device went away");
			else
				ktest_fail(t, "no client connected within %u ms",
					   ktest_listen_ms);
			break;
		}
		ktest_info(t, "session %s: connection from %pISpc",
			   ktest_kind_names[c->kind],
			   &c->cm_id->route.addr.dst_addr);
		if (!ktest_conn_setup(c) && !ktest_accept(c))
			ktest_serve(c);
		last = c->flags & KTEST_HELLO_LAST;
		ktest_conn_destroy(c);
		if (last || kthread_should_stop())
			break;
	}
	if (t->listen_id)
		rdma_destroy_id(t->listen_id);
	t->listen_id = NULL;
	/* No more requests can come; drop one that arrived meanwhile. */
	c = ktest_take_pending(t);
	if (c)
		ktest_conn_destroy(c);
}

/* ---- the client -------------------------------------------------------- */

static u32 ktest_iter(u32 s, u32 i)
{
	return s * ktest_count + i;
}

static int ktest_client_hello(struct ktest_conn *c)
{
	struct ktest_rx rx;
	struct ktest_msg m;
	int err;

	ktest_msg_init(&m, KTEST_HELLO, 0, c->max_size);
	err = ktest_ask(c, &m, &rx, KTEST_HELLO_ACK, "hello");
	if (err)
		return err;
	c->peer_rkey = le32_to_cpu(rx.msg.rkey);
	c->peer_addr = le64_to_cpu(rx.msg.addr);
	c->peer_len = le32_to_cpu(rx.msg.len);
	if (c->peer_len < c->max_size) {
		ktest_cfail(c, "hello: the server's buffer has %u bytes, want %u",
			    c->peer_len, c->max_size);
		return -EPROTO;
	}
	return 0;
}

static int ktest_client_send(struct ktest_conn *c)
{
	const char *what = "send/recv";
	struct ktest_rx rx;
	u32 s, i, iter, len;
	int err;

	for (s = 0; s < ktest_nsizes; s++) {
		len = ktest_sizes[s];
		for (i = 0; i < ktest_count; i++) {
			iter = ktest_iter(s, i);
			ktest_fill(c->sbuf.va, len, KTEST_SEED_C2S, iter);
			memset(c->rbuf.va, 0, len);
			err = ktest_send_data(c, iter, len, true, what);
			if (!err)
				err = ktest_expect(c, &rx, KTEST_DATA, what,
						   iter);
			if (err)
				return err;
			if (rx.byte_len != KTEST_MSG_SIZE + len ||
			    le32_to_cpu(rx.msg.len) != len) {
				ktest_cfail(c, "%s iteration %u: byte_len %u, len %u, want %zu, %u",
					    what, iter, rx.byte_len,
					    le32_to_cpu(rx.msg.len),
					    KTEST_MSG_SIZE + len, len);
				return -EPROTO;
			}
			if (!ktest_verify(c->t, "send/recv reply", iter,
					  c->rbuf.va, len, KTEST_SEED_S2C))
				return -EIO;
		}
		ktest_info(c->t, "send/recv: %u x %u ok", ktest_count, len);
	}
	return 0;
}

static const char *ktest_poll_name(struct ktest_conn *c)
{
	if (c->direct)
		return "process context, ib_poll_cq";
	return ktest_poll_ctx == IB_POLL_SOFTIRQ ? "softirq" : "workqueue";
}

/*
 * The thread's stream of the burst, posted while the handler chain of
 * stream 0 posts its own on the same QP: KTEST_BURST_WINDOW SENDs in
 * flight from op[1..KTEST_BURST_WINDOW].
 */
static int ktest_burst_thread(struct ktest_conn *c)
{
	struct ktest_op *op;
	u32 seq;
	int err;

	for (seq = 0; seq < c->burst_len; seq++) {
		err = ktest_alive(c, "send burst stream 1", seq);
		if (err)
			return err;
		op = &c->op[1 + seq % KTEST_BURST_WINDOW];
		if (op->busy) {
			err = ktest_op_wait(c, op, IB_WC_SEND, "send burst stream 1",
					    seq - KTEST_BURST_WINDOW);
			if (err)
				return err;
		}
		op->busy = true;
		op->done = false;
		op->cqe.done = ktest_send_done;
		err = ktest_post_burst(c, op, 1, seq);
		if (err) {
			op->busy = false;
			ktest_cfail(c, "send burst stream 1 message %u: ib_post_send: %d",
				    seq, err);
			return err;
		}
	}
	for (seq = 1; seq <= KTEST_BURST_WINDOW; seq++) {
		op = &c->op[seq];
		if (!op->busy)
			continue;
		err = ktest_op_wait(c, op, IB_WC_SEND, "send burst stream 1",
				    c->burst_len);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Two bursts of SENDs on one QP at the same time: stream 0 posted one by
 * one from the completion handler of the one before, stream 1 from the
 * thread. The server checks each stream's order and content.
 */
static int ktest_client_burst(struct ktest_conn *c)
{
	struct ktest_op *op = &c->op[0];
	struct ktest_rx rx;
	int err, i;

	for (i = 0; i <= KTEST_BURST_WINDOW; i++) {
		if (c->op[i].busy) {
			ktest_cfail(c, "send burst: send slot %d still in use", i);
			return -EBUSY;
		}
	}
	c->burst_len = clamp_t(u32, ktest_count * 8, 16, KTEST_BURST_MAX);
	c->burst_next = 0;
	op->busy = true;
	op->done = false;
	op->cqe.done = ktest_burst_done;
	err = ktest_post_burst(c, op, 0, 0);
	if (err) {
		op->busy = false;
		ktest_cfail(c, "send burst: ib_post_send: %d", err);
		return err;
	}
	err = ktest_burst_thread(c);
	if (err)
		return err;
	err = ktest_wait_op(c, op);
	if (err) {
		ktest_cfail(c, "send burst: %u of %u messages completed: %s",
			    c->burst_next, c->burst_len,
			    err == -ENOTCONN ? "the peer disconnected" :
			    ktest_why(err));
		return err;
	}
	op->busy = false;
	if (op->status != IB_WC_SUCCESS) {
		ktest_cfail(c, "send burst message %u: completion status '%s' (%d)",
			    c->burst_next, ib_wc_status_msg(op->status),
			    op->status);
		return -EIO;
	}
	if (c->cb_err[0] || c->burst_next != c->burst_len) {
		ktest_cfail(c, "send burst: stopped after %u of %u messages: %s",
			    c->burst_next, c->burst_len, c->cb_err);
		return -EIO;
	}
	err = ktest_expect(c, &rx, KTEST_BURST_RESULT, "send burst", 0);
	if (err)
		return err;
	if (le32_to_cpu(rx.msg.len) != KTEST_STREAMS * c->burst_len) {
		ktest_cfail(c, "send burst: the server counted %u messages, want %u",
			    le32_to_cpu(rx.msg.len), KTEST_STREAMS * c->burst_len);
		return -EPROTO;
	}
	ktest_info(c->t, "send burst: 2 x %u messages on one QP at once, posted from the completion handler (%s) and from the thread: ok",
		   c->burst_len, ktest_poll_name(c));
	return 0;
}

/*
 * @opcode, an RDMA WRITE or ATOMIC WRITE, from sbuf to (addr, rkey) with
 * @flags, followed by a message in one chain.
 */
static int ktest_put_and_tell(struct ktest_conn *c, enum ib_wr_opcode opcode,
			      int flags, u32 len, u32 addr_rkey, u64 addr,
			      const struct ktest_msg *m, u32 inv_rkey,
			      const char *what, u32 iter)
{
	enum ib_wc_opcode want[] = { IB_WC_RDMA_WRITE, IB_WC_SEND };
	struct ib_sge sge[KTEST_DATA_SGES], msge;
	struct ktest_op *ops[2];
	struct ib_rdma_wr w = {
		.wr.opcode = opcode,
		.wr.send_flags = IB_SEND_SIGNALED | flags,
		.wr.sg_list = sge,
		.remote_addr = addr,
		.rkey = addr_rkey,
	};
	struct ib_send_wr s = {
		.opcode = inv_rkey ? IB_WR_SEND_WITH_INV : IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &msge,
		.num_sge = 1,
		.ex.invalidate_rkey = inv_rkey,
	};
	int n;

#ifdef KTEST_HAVE_MPE
	if (opcode == IB_WR_ATOMIC_WRITE)
		want[0] = IB_WC_ATOMIC_WRITE;
#endif
	n = ktest_buf_sges(c, &c->sbuf, len, sge);
	if (n < 0) {
		ktest_cfail(c, "%s iteration %u: %u bytes do not fit in %d SGEs",
			    what, iter, len, KTEST_DATA_SGES);
		return n;
	}
	ops[0] = ktest_op_get(c, what);
	if (!ops[0])
		return -EBUSY;
	ops[1] = ktest_op_get(c, what);
	if (!ops[1]) {
		ops[0]->busy = false;
		return -EBUSY;
	}
	w.wr.num_sge = n;
	w.wr.wr_cqe = &ops[0]->cqe;
	w.wr.next = &s;
	s.wr_cqe = &ops[1]->cqe;
	*ktest_op_msg(c, ops[1]) = *m;
	ktest_op_msg_sge(c, ops[1], &msge);
	return ktest_run_chain(c, &w.wr, ops, want, 2, what, iter);
}

/* WRITE from sbuf to (addr, rkey), followed by a message in one chain. */
static int ktest_write_and_tell(struct ktest_conn *c, u32 len, u32 addr_rkey,
				u64 addr, const struct ktest_msg *m,
				u32 inv_rkey, const char *what, u32 iter)
{
	return ktest_put_and_tell(c, IB_WR_RDMA_WRITE, 0, len, addr_rkey, addr,
				  m, inv_rkey, what, iter);
}

static int ktest_client_write(struct ktest_conn *c)
{
	const char *what = "rdma_write";
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 s, i, iter, len;
	int err;

	for (s = 0; s < ktest_nsizes; s++) {
		len = ktest_sizes[s];
		for (i = 0; i < ktest_count; i++) {
			iter = ktest_iter(s, i);
			ktest_fill(c->sbuf.va, len, KTEST_SEED_WRITE, iter);
			ktest_msg_init(&m, KTEST_WRITTEN, iter, len);
			err = ktest_write_and_tell(c, len, c->peer_rkey,
						   c->peer_addr, &m, 0, what,
						   iter);
			if (!err)
				err = ktest_expect(c, &rx, KTEST_VERIFIED, what,
						   iter);
			if (err)
				return err;
		}
		ktest_info(c->t, "rdma_write: %u x %u ok", ktest_count, len);
	}
	return 0;
}

#ifdef KTEST_HAVE_MPE
/*
 * Work requests the driver must refuse at post time, leaving the QP as
 * it was: an ATOMIC WRITE to an address not 8-byte aligned, or of other
 * than 8 bytes, and a FLUSH (ib_send_wr has no room for its placement
 * type).
 */
static int ktest_awrite_refused(struct ktest_conn *c)
{
	const struct ib_send_wr *bad;
	struct ib_sge sge = {
		.addr = sg_dma_address(c->sbuf.sgt.sgl),
		.length = sizeof(u64),
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr w = {
		.wr.opcode = IB_WR_ATOMIC_WRITE,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = c->peer_addr + 4,
		.rkey = c->peer_rkey,
	};
	int err;

	err = ib_post_send(c->qp, &w.wr, &bad);
	if (err != -EINVAL) {
		ktest_cfail(c, "atomic_write, misaligned: ib_post_send returned %d, want -EINVAL",
			    err);
		return err ? err : -EPROTO;
	}
	w.remote_addr = c->peer_addr;
	sge.length = 4;
	err = ib_post_send(c->qp, &w.wr, &bad);
	if (err != -EINVAL) {
		ktest_cfail(c, "atomic_write of 4 bytes: ib_post_send returned %d, want -EINVAL",
			    err);
		return err ? err : -EPROTO;
	}
	w.wr.opcode = IB_WR_FLUSH;
	sge.length = 0;
	w.wr.num_sge = 0;
	err = ib_post_send(c->qp, &w.wr, &bad);
	if (err != -EINVAL) {
		ktest_cfail(c, "flush from the kernel: ib_post_send returned %d, want -EINVAL",
			    err);
		return err ? err : -EPROTO;
	}
	return 0;
}

/* ATOMIC WRITEs, each checked by the server, then the refused ones. */
static int ktest_client_awrite(struct ktest_conn *c)
{
	const char *what = "atomic_write";
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 i;
	int err;

	for (i = 0; i < ktest_count; i++) {
		ktest_fill(c->sbuf.va, sizeof(u64), KTEST_SEED_WRITE, i);
		ktest_msg_init(&m, KTEST_WRITTEN, i, sizeof(u64));
		/* By local key, and inline every other time. */
		err = ktest_put_and_tell(c, IB_WR_ATOMIC_WRITE,
					 i & 1 ? IB_SEND_INLINE : 0, sizeof(u64),
					 c->peer_rkey, c->peer_addr, &m, 0, what,
					 i);
		if (!err)
			err = ktest_expect(c, &rx, KTEST_VERIFIED, what, i);
		if (err)
			return err;
	}
	err = ktest_awrite_refused(c);
	if (err)
		return err;
	err = ktest_alive(c, what, i);
	if (err)
		return err;
	ktest_info(c->t, "atomic_write: %u x 8 bytes by lkey and inline ok; misaligned, short and FLUSH refused at post",
		   ktest_count);
	return 0;
}
#else
static int ktest_client_awrite(struct ktest_conn *c)
{
	ktest_cfail(c, "atomic_write: this kernel has no IB_WR_ATOMIC_WRITE");
	return -EOPNOTSUPP;
}
#endif /* KTEST_HAVE_MPE */

/*
 * An unsignaled WRITE completes only when it is flushed: that is the
 * connection failing, which the waits report; say which work request it was.
 */
static void ktest_tail_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ktest_conn *c = container_of(wc->wr_cqe, struct ktest_conn,
					    tail_cqe);
	char why[80];

	if (wc->status == IB_WC_SUCCESS)
		return;
	snprintf(why, sizeof(why), "tail: an unsignaled RDMA WRITE: %s",
		 ib_wc_status_msg(wc->status));
	ktest_cb_error(c, why);
}

/*
 * Post @n SGEs of sbuf to the peer's buffer as unsignaled WRITEs of at
 * most @plen bytes, each in a call of its own. Return how many were
 * posted, or a negative errno.
 */
static int ktest_post_tail(struct ktest_conn *c, const struct ib_sge *sge,
			   int n, u32 plen, u32 iter)
{
	struct ib_sge piece;
	struct ib_rdma_wr w = {
		.wr.wr_cqe = &c->tail_cqe,
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.sg_list = &piece,
		.wr.num_sge = 1,
		.remote_addr = c->peer_addr,
		.rkey = c->peer_rkey,
	};
	int j, nw = 0, err;
	u32 o;

	for (j = 0; j < n; j++) {
		for (o = 0; o < sge[j].length; o += piece.length) {
			piece = sge[j];
			piece.addr += o;
			piece.length = min(sge[j].length - o, plen);
			err = ib_post_send(c->qp, &w.wr, NULL);
			if (err) {
				ktest_cfail(c, "tail iteration %u: WRITE %d: %d",
					    iter, nw + 1, err);
				return err;
			}
			w.remote_addr += piece.length;
			nw++;
		}
	}
	return nw;
}

/*
 * The write operation's data as unsignaled WRITEs of KTEST_TAIL_PIECE
 * bytes (more for sizes that would take more SQ slots than the ops leave),
 * each posted on its own the way a consumer streams small messages, then
 * a pause with nothing posted, then the SEND that has the server check
 * every byte. None of the WRITEs is waited for: the SEND completes after
 * them.
 */
static int ktest_client_tail(struct ktest_conn *c)
{
	const char *what = "tail";
	struct ib_sge sge[KTEST_DATA_SGES];
	u32 s, i, iter, len, plen;
	struct ktest_rx rx;
	struct ktest_msg m;
	int n, nw = 0, err;

	c->tail_cqe.done = ktest_tail_done;
	for (s = 0; s < ktest_nsizes; s++) {
		len = ktest_sizes[s];
		/* The WRITEs hold their SQ slots until acknowledged. */
		plen = max_t(u32, KTEST_TAIL_PIECE,
			     DIV_ROUND_UP(len, KTEST_SQ_DEPTH - KTEST_NOPS));
		for (i = 0; i < ktest_count; i++) {
			iter = ktest_iter(s, i);
			ktest_fill(c->sbuf.va, len, KTEST_SEED_WRITE, iter);
			n = ktest_buf_sges(c, &c->sbuf, len, sge);
			if (n < 0) {
				ktest_cfail(c, "%s iteration %u: %u bytes do not fit in %d SGEs",
					    what, iter, len, KTEST_DATA_SGES);
				return n;
			}
			nw = ktest_post_tail(c, sge, n, plen, iter);
			if (nw < 0)
				return nw;
			msleep(ktest_tail_ms);
			ktest_msg_init(&m, KTEST_WRITTEN, iter, len);
			err = ktest_ask(c, &m, &rx, KTEST_VERIFIED, what);
			if (err)
				return err;
		}
		ktest_info(c->t, "tail: %u x %u ok, as %d unsignaled WRITEs and a %u ms pause each",
			   ktest_count, len, nw, ktest_tail_ms);
	}
	return 0;
}

/* READ @len bytes from (addr, rkey) into rbuf; lkey 0: the PD's. */
static int ktest_read(struct ktest_conn *c, u32 len, u32 rkey, u64 addr,
		      const char *what, u32 iter)
{
	enum ib_wc_opcode want = IB_WC_RDMA_READ;
	struct ib_sge sge[KTEST_DATA_SGES];
	struct ib_rdma_wr r = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = sge,
		.remote_addr = addr,
		.rkey = rkey,
	};
	struct ktest_op *op;
	int n;

	n = ktest_buf_sges(c, &c->rbuf, len, sge);
	if (n < 0) {
		ktest_cfail(c, "%s iteration %u: %u bytes do not fit in %d SGEs",
			    what, iter, len, KTEST_DATA_SGES);
		return n;
	}
	op = ktest_op_get(c, what);
	if (!op)
		return -EBUSY;
	r.wr.num_sge = n;
	r.wr.wr_cqe = &op->cqe;
	memset(c->rbuf.va, 0, len);
	return ktest_run_chain(c, &r.wr, &op, &want, 1, what, iter);
}

static int ktest_client_read(struct ktest_conn *c)
{
	const char *what = "rdma_read";
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 s, i, iter, len;
	int err;

	for (s = 0; s < ktest_nsizes; s++) {
		len = ktest_sizes[s];
		for (i = 0; i < ktest_count; i++) {
			iter = ktest_iter(s, i);
			ktest_msg_init(&m, KTEST_PREP_READ, iter, len);
			err = ktest_ask(c, &m, &rx, KTEST_READY, what);
			if (!err)
				err = ktest_read(c, len, c->peer_rkey,
						 c->peer_addr, what, iter);
			if (err)
				return err;
			if (!ktest_verify(c->t, what, iter, c->rbuf.va, len,
					  KTEST_SEED_READ))
				return -EIO;
		}
		ktest_info(c->t, "rdma_read: %u x %u ok", ktest_count, len);
	}
	return 0;
}

/* Ask the server for a fast registration of @len bytes; get its key. */
static int ktest_fr_request(struct ktest_conn *c, u32 len, u32 acc,
			    const char *what, u32 iter)
{
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 old = c->peer_rkey;
	int err;

	ktest_msg_init(&m, KTEST_FR_REG, iter, len);
	m.arg = cpu_to_le32(acc);
	err = ktest_ask(c, &m, &rx, KTEST_FR_KEY, what);
	if (err)
		return err;
	c->peer_rkey = le32_to_cpu(rx.msg.rkey);
	c->peer_addr = le64_to_cpu(rx.msg.addr);
	c->peer_len = le32_to_cpu(rx.msg.len);
	if (le32_to_cpu(rx.msg.arg) == KTEST_BIG_PAGE)
		c->big_seen = true;
	if (c->peer_len < len) {
		ktest_cfail(c, "%s iteration %u: the server registered %u bytes, want %u",
			    what, iter, c->peer_len, len);
		return -EPROTO;
	}
	if (c->peer_rkey == old) {
		ktest_cfail(c, "%s iteration %u: the new registration kept rkey 0x%x",
			    what, iter, old);
		return -EPROTO;
	}
	return 0;
}

/*
 * READ into rbuf through a fast registration of our own: REG_MR of rbuf
 * with local write access, then the READ with the new lkey, in one chain;
 * LOCAL_INV of the lkey after.
 */
static int ktest_read_fr_local(struct ktest_conn *c, u32 len,
			       const char *what, u32 iter)
{
	static const enum ib_wc_opcode want[] = { IB_WC_REG_MR,
						  IB_WC_RDMA_READ };
	int nents = DIV_ROUND_UP(len, PAGE_SIZE), n, err;
	struct ib_mr *mr = c->fr_mr;
	struct ktest_op *ops[2];
	struct ib_sge sge;
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_rdma_wr r = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = c->peer_addr,
		.rkey = c->peer_rkey,
	};

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->lkey));
	n = ib_map_mr_sg(mr, c->rbuf.sgt.sgl, nents, NULL, PAGE_SIZE);
	if (n != nents) {
		ktest_cfail(c, "%s iteration %u: ib_map_mr_sg mapped %d of %d pages",
			    what, iter, n, nents);
		return n < 0 ? n : -EINVAL;
	}
	ops[0] = ktest_op_get(c, what);
	if (!ops[0])
		return -EBUSY;
	ops[1] = ktest_op_get(c, what);
	if (!ops[1]) {
		ops[0]->busy = false;
		return -EBUSY;
	}
	reg.wr.wr_cqe = &ops[0]->cqe;
	reg.wr.next = &r.wr;
	reg.mr = mr;
	reg.key = mr->lkey;
	r.wr.wr_cqe = &ops[1]->cqe;
	sge.addr = mr->iova;
	sge.length = len;
	sge.lkey = mr->lkey;
	memset(c->rbuf.va, 0, len);
	err = ktest_run_chain(c, &reg.wr, ops, want, 2, what, iter);
	if (err)
		return err;
	return ktest_local_inv(c, mr->lkey, "local_inv of our own lkey", iter);
}

/*
 * Fast registration: the server registers with a new key, we WRITE and
 * READ through it (into our own fast registration), and the key is
 * invalidated, by the server's LOCAL_INV (@remote_inv false) or by our
 * SEND with invalidate.
 */
static int ktest_client_frmr(struct ktest_conn *c, bool remote_inv)
{
	const char *what = remote_inv ? "fastreg+send_with_inv" :
					 "fastreg+local_inv";
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 s, i, iter, len;
	int err;

	for (s = 0; s < ktest_nsizes; s++) {
		len = ktest_sizes[s];
		for (i = 0; i < ktest_count; i++) {
			iter = ktest_iter(s, i);
			/* Odd iterations in pages of KTEST_BIG_PAGE. */
			err = ktest_fr_request(c, len,
					       KTEST_ACC_READ | KTEST_ACC_WRITE |
					       (i & 1 ? KTEST_ACC_BIG : 0),
					       what, iter);
			if (err)
				return err;
			ktest_fill(c->sbuf.va, len, KTEST_SEED_FRW, iter);
			if (remote_inv) {
				/* WRITE, then SEND_WITH_INV of the rkey. */
				ktest_msg_init(&m, KTEST_FR_INV_REMOTE, iter,
					       len);
				m.rkey = cpu_to_le32(c->peer_rkey);
				err = ktest_write_and_tell(c, len, c->peer_rkey,
							   c->peer_addr, &m,
							   c->peer_rkey, what,
							   iter);
				if (!err)
					err = ktest_expect(c, &rx, KTEST_ACK,
							   what, iter);
				if (err)
					return err;
				continue;
			}
			ktest_msg_init(&m, KTEST_FR_WRITTEN, iter, len);
			err = ktest_write_and_tell(c, len, c->peer_rkey,
						   c->peer_addr, &m, 0, what,
						   iter);
			if (!err)
				err = ktest_expect(c, &rx, KTEST_FR_READY, what,
						   iter);
			if (!err)
				err = ktest_read_fr_local(c, len, what, iter);
			if (err)
				return err;
			if (!ktest_verify(c->t, "rdma_read through the fast-registered rkey",
					  iter, c->rbuf.va, len,
					  KTEST_SEED_FRR))
				return -EIO;
			ktest_msg_init(&m, KTEST_FR_INV_LOCAL, iter, 0);
			m.rkey = cpu_to_le32(c->peer_rkey);
			err = ktest_ask(c, &m, &rx, KTEST_ACK, what);
			if (err)
				return err;
		}
		ktest_info(c->t, "%s: %u x %u ok%s", what, ktest_count, len,
			   c->big_seen ? " (pages of 4 and 64 KiB)" : "");
	}
	return 0;
}

static int ktest_client_bye(struct ktest_conn *c)
{
	struct ktest_rx rx;
	struct ktest_msg m;
	int err;

	ktest_msg_init(&m, KTEST_BYE, 0, 0);
	c->bye_sent = true;
	err = ktest_send_msg(c, &m, 0, "goodbye");
	/*
	 * The server disconnects once it has answered. On a lossy link the
	 * ACK for our goodbye may be lost and the disconnect overtake it,
	 * which leaves the SEND uncompleted; its answer, received, shows
	 * it delivered. Without that answer ktest_expect() fails.
	 */
	if (err && err != -ENOTCONN)
		return err;
	return ktest_expect(c, &rx, KTEST_BYE_ACK, "goodbye", 0);
}

static void ktest_client_main(struct ktest_conn *c)
{
	static const u32 order[] = {
		/* Up to read, through the key of the hello; frmr replaces it. */
		KTEST_OP_SEND, KTEST_OP_WRITE, KTEST_OP_TAIL, KTEST_OP_READ,
		KTEST_OP_FRMR, KTEST_OP_SENDINV, KTEST_OP_AWRITE,
	};
	int err, i;

	ktest_info(c->t, "device %s: IB_DEVICE_MEM_MGT_EXTENSIONS, max_fast_reg_page_list_len %u, inline %u, CQs in %s",
		   dev_name(&c->dev->dev),
		   c->dev->attrs.max_fast_reg_page_list_len, c->max_inline,
		   ktest_poll_name(c));
	err = ktest_client_hello(c);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		if (!(ktest_opmask & order[i]))
			continue;
		if (err) {
			ktest_fail(c->t, "%s: not run, the session failed before",
				   ktest_op_names[ffs(order[i]) - 1]);
			continue;
		}
		switch (order[i]) {
		case KTEST_OP_SEND:
			err = ktest_client_send(c);
			if (!err)
				err = ktest_client_burst(c);
			break;
		case KTEST_OP_WRITE:
			err = ktest_client_write(c);
			break;
		case KTEST_OP_READ:
			err = ktest_client_read(c);
			break;
		case KTEST_OP_FRMR:
			err = ktest_client_frmr(c, false);
			break;
		case KTEST_OP_SENDINV:
			err = ktest_client_frmr(c, true);
			break;
		case KTEST_OP_TAIL:
			err = ktest_client_tail(c);
			break;
		case KTEST_OP_AWRITE:
			err = ktest_client_awrite(c);
			break;
		}
	}
	if (!err)
		ktest_client_bye(c);
}

/*
 * A READ or WRITE that must fail: the completion says
 * IB_WC_REM_ACCESS_ERR and the QP is in error after it.
 */
static int ktest_expect_access_error(struct ktest_conn *c,
				     enum ib_wr_opcode opcode, u32 rkey,
				     const char *what)
{
	struct ib_sge sge[KTEST_DATA_SGES];
	struct ib_rdma_wr w = {
		.wr.opcode = opcode,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = sge,
		.remote_addr = c->peer_addr,
		.rkey = rkey,
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr = {};
	struct ktest_op *op;
	int n, err;

	n = ktest_buf_sges(c, opcode == IB_WR_RDMA_READ ? &c->rbuf : &c->sbuf,
			   KTEST_NEG_SIZE, sge);
	if (n < 0) {
		ktest_cfail(c, "%s: %u bytes do not fit in %d SGEs", what,
			    KTEST_NEG_SIZE, KTEST_DATA_SGES);
		return n;
	}
	op = ktest_op_get(c, what);
	if (!op)
		return -EBUSY;
	w.wr.num_sge = n;
	w.wr.wr_cqe = &op->cqe;
	err = ktest_post_send(c, &w.wr);
	if (err) {
		ktest_cfail(c, "%s: ib_post_send: %d", what, err);
		return err;
	}
	err = ktest_wait(c, ktest_pred_op, op, ktest_tmo(), true);
	if (err) {
		ktest_cfail(c, "%s: no completion (QP %s): %s after %u ms",
			    what, ktest_qp_state(c), ktest_why(err),
			    ktest_timeout_ms);
		return err;
	}
	op->busy = false;
	if (op->status != IB_WC_REM_ACCESS_ERR) {
		ktest_cfail(c, "%s: completion status '%s' (%d), want '%s' (IB_WC_REM_ACCESS_ERR)",
			    what, ib_wc_status_msg(op->status), op->status,
			    ib_wc_status_msg(IB_WC_REM_ACCESS_ERR));
		return -EIO;
	}
	err = ib_query_qp(c->qp, &attr, IB_QP_STATE, &init);
	if (err || attr.qp_state != IB_QPS_ERR) {
		ktest_cfail(c, "%s: then QP state %d (query %d), want IB_QPS_ERR",
			    what, attr.qp_state, err);
		return -EIO;
	}
	ktest_info(c->t, "%s: IB_WC_REM_ACCESS_ERR, QP in error: ok", what);
	return 0;
}

/* A READ through the registration that must work, checked. */
static int ktest_neg_read_ok(struct ktest_conn *c, u32 iter)
{
	int err = ktest_read(c, KTEST_NEG_SIZE, c->peer_rkey, c->peer_addr,
			     "rdma_read through a valid rkey", iter);

	if (!err && !ktest_verify(c->t, "rdma_read through a valid rkey",
				  iter, c->rbuf.va, KTEST_NEG_SIZE,
				  KTEST_SEED_FRR))
		err = -EIO;
	return err;
}

static int ktest_neg_local_inv(struct ktest_conn *c, const char *what)
{
	struct ktest_rx rx;
	struct ktest_msg m;

	ktest_msg_init(&m, KTEST_FR_INV_LOCAL, 0, 0);
	m.rkey = cpu_to_le32(c->peer_rkey);
	return ktest_ask(c, &m, &rx, KTEST_ACK, what);
}

static void ktest_client_neg(struct ktest_conn *c)
{
	const u32 rw = KTEST_ACC_READ | KTEST_ACC_WRITE;
	const char *what = ktest_kind_names[c->kind];
	struct ktest_rx rx;
	struct ktest_msg m;
	u32 old;
	int err;

	switch (c->kind) {
	case KTEST_NEG_LOCAL_INV:
		err = ktest_fr_request(c, KTEST_NEG_SIZE, rw, what, 0);
		if (!err)
			err = ktest_neg_read_ok(c, 0);
		if (!err)
			err = ktest_neg_local_inv(c, what);
		if (!err)
			ktest_expect_access_error(c, IB_WR_RDMA_READ,
						  c->peer_rkey,
						  "negative: rdma_read through an rkey invalidated by LOCAL_INV");
		break;
	case KTEST_NEG_REMOTE_INV:
		err = ktest_fr_request(c, KTEST_NEG_SIZE, rw, what, 0);
		if (err)
			break;
		ktest_fill(c->sbuf.va, KTEST_NEG_SIZE, KTEST_SEED_FRW, 0);
		ktest_msg_init(&m, KTEST_FR_INV_REMOTE, 0, KTEST_NEG_SIZE);
		m.rkey = cpu_to_le32(c->peer_rkey);
		err = ktest_write_and_tell(c, KTEST_NEG_SIZE, c->peer_rkey,
					   c->peer_addr, &m, c->peer_rkey,
					   what, 0);
		if (!err)
			err = ktest_expect(c, &rx, KTEST_ACK, what, 0);
		if (!err)
			ktest_expect_access_error(c, IB_WR_RDMA_WRITE,
						  c->peer_rkey,
						  "negative: rdma_write through an rkey invalidated by SEND_WITH_INV");
		break;
	case KTEST_NEG_KEY_UPDATE:
		err = ktest_fr_request(c, KTEST_NEG_SIZE, rw, what, 0);
		old = c->peer_rkey;
		if (!err)
			err = ktest_neg_local_inv(c, what);
		if (!err)
			err = ktest_fr_request(c, KTEST_NEG_SIZE, rw, what, 1);
		if (err)
			break;
		if ((old ^ c->peer_rkey) & ~0xffU) {
			ktest_cfail(c, "%s: key update changed more than the key byte: %#x -> %#x",
				    what, old, c->peer_rkey);
			break;
		}
		err = ktest_neg_read_ok(c, 1);
		if (!err)
			ktest_expect_access_error(c, IB_WR_RDMA_READ, old,
						  "negative: rdma_read through the rkey a key update replaced");
		break;
	case KTEST_NEG_ACCESS:
		err = ktest_fr_request(c, KTEST_NEG_SIZE, KTEST_ACC_READ,
				       what, 0);
		if (!err)
			err = ktest_neg_read_ok(c, 0);
		if (err)
			break;
		ktest_fill(c->sbuf.va, KTEST_NEG_SIZE, KTEST_SEED_FRW, 0);
		ktest_expect_access_error(c, IB_WR_RDMA_WRITE, c->peer_rkey,
					  "negative: rdma_write through an rkey registered for remote read only");
		break;
	}
}

static void ktest_client_run(struct ktest_thread *t)
{
	u32 kinds[KTEST_NKINDS], n = 0, i;
	struct ktest_conn *c;

	if (t->peer &&
	    !wait_for_completion_timeout(&t->peer->listening, ktest_tmo())) {
		ktest_fail(t, "the server thread did not start listening");
		return;
	}
	if (ktest_opmask & KTEST_OP_MAIN)
		kinds[n++] = KTEST_MAIN;
	if (ktest_opmask & KTEST_OP_NEG)
		for (i = KTEST_NEG_LOCAL_INV; i < KTEST_NKINDS; i++)
			kinds[n++] = i;

	for (i = 0; i < n && !kthread_should_stop(); i++) {
		c = ktest_connect(t, kinds[i],
				  kinds[i] == KTEST_MAIN ? ktest_max_size :
							   KTEST_NEG_SIZE,
				  i == n - 1);
		if (!c)
			break;
		if (kinds[i] == KTEST_MAIN)
			ktest_client_main(c);
		else
			ktest_client_neg(c);
		ktest_conn_destroy(c);
	}
	if (i < n)
		ktest_fail(t, "%u of %u sessions not run", n - i, n);
}

/* ---- threads, debugfs, module ------------------------------------------ */

static void ktest_thread_done(void)
{
	unsigned long flags;
	int failures;

	if (!atomic_dec_and_test(&ktest_running))
		return;
	failures = atomic_read(&ktest_failures);
	if (failures)
		ktest_info(NULL, "result: FAIL (%d failures)", failures);
	else
		ktest_info(NULL, "result: PASS");
	spin_lock_irqsave(&ktest_log_lock, flags);
	ktest_verdict = failures ? KTEST_FAIL : KTEST_PASS;
	spin_unlock_irqrestore(&ktest_log_lock, flags);
}

static int ktest_thread_fn(void *arg)
{
	struct ktest_thread *t = arg;

	if (t->server)
		ktest_server_run(t);
	else
		ktest_client_run(t);
	ktest_thread_done();

	/* Stay until kthread_stop(), so that it always finds us. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int ktest_result_show(struct seq_file *s, void *unused)
{
	unsigned long flags;

	spin_lock_irqsave(&ktest_log_lock, flags);
	seq_write(s, ktest_log_buf, ktest_log_len);
	if (ktest_log_full)
		seq_puts(s, "ktest: (report truncated)\n");
	spin_unlock_irqrestore(&ktest_log_lock, flags);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ktest_result);

static int ktest_state_show(struct seq_file *s, void *unused)
{
	seq_printf(s, "%s\n", ktest_state_names[READ_ONCE(ktest_verdict)]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ktest_state);

static int ktest_parse_addr(void)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ktest_sockaddr;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ktest_sockaddr;

	if (!ktest_addr || !*ktest_addr)
		return -EINVAL;
	memset(&ktest_sockaddr, 0, sizeof(ktest_sockaddr));
	if (in4_pton(ktest_addr, -1, (u8 *)&a4->sin_addr.s_addr, '\0',
		     NULL)) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(ktest_port);
		return 0;
	}
	if (in6_pton(ktest_addr, -1, a6->sin6_addr.s6_addr, '\0', NULL)) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(ktest_port);
		return 0;
	}
	return -EINVAL;
}

static int ktest_parse_ops(void)
{
	char *copy, *p, *tok;
	int i, err = 0;

	copy = kstrdup(ktest_ops, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	p = copy;
	ktest_opmask = 0;
	while ((tok = strsep(&p, ",")) && !err) {
		if (!*tok)
			continue;
		if (!strcmp(tok, "all")) {
			ktest_opmask |= KTEST_OP_ALL;
			continue;
		}
		i = match_string(ktest_op_names, ARRAY_SIZE(ktest_op_names),
				 tok);
		if (i < 0) {
			pr_err("ops: unknown operation '%s'\n", tok);
			err = -EINVAL;
		} else {
			ktest_opmask |= BIT(i);
		}
	}
	kfree(copy);
	if (!err && !ktest_opmask)
		err = -EINVAL;
	return err;
}

static int ktest_parse_params(void)
{
	int i;

	if (ktest_parse_addr()) {
		pr_err("addr: give the server's IPv4 or IPv6 address\n");
		return -EINVAL;
	}
	if (ktest_parse_ops())
		return -EINVAL;
	if (!strcmp(ktest_poll, "softirq")) {
		ktest_poll_ctx = IB_POLL_SOFTIRQ;
	} else if (!strcmp(ktest_poll, "workqueue")) {
		ktest_poll_ctx = IB_POLL_WORKQUEUE;
	} else if (!strcmp(ktest_poll, "direct")) {
		ktest_poll_ctx = IB_POLL_DIRECT;
	} else {
		pr_err("poll: softirq, workqueue or direct\n");
		return -EINVAL;
	}
	if (!ktest_count || !ktest_timeout_ms || !ktest_nsizes) {
		pr_err("count, timeout_ms and size must not be 0\n");
		return -EINVAL;
	}
	ktest_max_size = 0;
	for (i = 0; i < ktest_nsizes; i++) {
		if (ktest_sizes[i] < 1 || ktest_sizes[i] > KTEST_MAX_SIZE) {
			pr_err("size: %d is not between 1 and %u\n",
			       ktest_sizes[i], KTEST_MAX_SIZE);
			return -EINVAL;
		}
		ktest_max_size = max_t(u32, ktest_max_size, ktest_sizes[i]);
	}
	if (ktest_count > 100000) {
		pr_err("count: at most 100000\n");
		return -EINVAL;
	}
	return 0;
}

static void ktest_thread_init(struct ktest_thread *t, bool server)
{
	memset(t, 0, sizeof(*t));
	t->server = server;
	t->cmx.listener = true;
	t->prefix = server ? "server: " : "";
	init_completion(&t->listening);
	init_waitqueue_head(&t->wq);
	spin_lock_init(&t->lock);
}

static int ktest_start(struct ktest_thread *t)
{
	struct task_struct *task;

	atomic_inc(&ktest_running);
	task = kthread_run(ktest_thread_fn, t, "rxe_ktest_%s",
			   t->server ? "srv" : "cli");
	if (IS_ERR(task)) {
		atomic_dec(&ktest_running);
		return PTR_ERR(task);
	}
	t->task = task;
	return 0;
}

static void ktest_stop(void)
{
	if (ktest_cli.task)
		kthread_stop(ktest_cli.task);
	if (ktest_srv.task)
		kthread_stop(ktest_srv.task);
	ktest_cli.task = NULL;
	ktest_srv.task = NULL;
}

static int __init ktest_init(void)
{
	bool server, client;
	int err;

	err = ktest_parse_params();
	if (err)
		return err;
	server = !strcmp(ktest_role, "server") || !strcmp(ktest_role, "loop");
	client = !strcmp(ktest_role, "client") || !strcmp(ktest_role, "loop");
	if (!server && !client) {
		pr_err("role: client, server or loop\n");
		return -EINVAL;
	}

	ktest_dir = debugfs_create_dir("rxe_ktest", NULL);
	debugfs_create_file("result", 0444, ktest_dir, NULL,
			    &ktest_result_fops);
	debugfs_create_file("state", 0444, ktest_dir, NULL, &ktest_state_fops);

	ktest_verdict = KTEST_RUNNING;
	if (client)
		ktest_info(NULL, "role %s, address %pISpc, count %u, sizes up to %u, ops %s, poll %s",
			   ktest_role, &ktest_sockaddr, ktest_count,
			   ktest_max_size, ktest_ops, ktest_poll);
	else
		ktest_info(NULL, "role server, address %pISpc; the client chooses the rest",
			   &ktest_sockaddr);
	ktest_thread_init(&ktest_srv, true);
	ktest_thread_init(&ktest_cli, false);
	ktest_cli.cmx.listener = false;
	if (server) {
		err = ktest_start(&ktest_srv);
		if (err)
			goto err_stop;
	}
	if (client) {
		if (server)
			ktest_cli.peer = &ktest_srv;
		err = ktest_start(&ktest_cli);
		if (err)
			goto err_stop;
	}
	return 0;

err_stop:
	ktest_stop();
	debugfs_remove_recursive(ktest_dir);
	return err;
}

static void __exit ktest_exit(void)
{
	ktest_stop();
	debugfs_remove_recursive(ktest_dir);
}

module_init(ktest_init);
module_exit(ktest_exit);

MODULE_DESCRIPTION("Kernel verbs test of an RDMA device over rdma_cm");
MODULE_LICENSE("GPL");
