/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The driver's objects, each wrapping its ib_core counterpart, with the
 * rules of the locks they carry.
 *
 * Lock order, outermost first (docs/locking.rst has it all):
 *   qp->modify_mutex -> task->lock (rxe_task_disable())
 *   qp->state_lock
 *   qp->sq.lock / qp->rq.lock / srq->lock -> cq->lock, the innermost
 */
#ifndef RXE_VERBS_H
#define RXE_VERBS_H

#include <linux/skbuff.h>
#include <linux/in6.h>
#include <linux/hrtimer.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "rxe_pool.h"
#include "rxe_queue.h"
#include "rxe_task.h"
#include "rxe_dev.h"

/**
 * struct rxe_ucontext - a user context
 * @ibuc: ib_core's context
 */
struct rxe_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct rxe_pd - a protection domain
 * @ibpd: ib_core's PD
 */
struct rxe_pd {
	struct ib_pd ibpd;
};

/**
 * struct rxe_path - where packets of an address vector go
 * @saddr: source IP address, IPv4 as v4-mapped IPv6 (the source GID)
 * @daddr: destination IP address, likewise (the destination GID)
 * @flow_label: IPv6 flow label, and the seed of the UDP source port
 * @ifindex: the netdev of the source GID: the device's own, or a VLAN
 *	device on top of it
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @sgid_index: index of the source GID in the port's table
 * @hop_limit: IP TTL or hop limit
 * @traffic_class: IP DSCP and ECN bits
 * @dmac: destination MAC that ib_core resolved, reported back by query;
 *	the data path resolves neighbours itself through the route
 *
 * A plain value: work requests copy it, so it holds no references.
 */
struct rxe_path {
	struct in6_addr saddr;
	struct in6_addr daddr;
	u32 flow_label;
	int ifindex;
	u8 network_type;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 dmac[ETH_ALEN];
};

/**
 * struct rxe_ah - an address handle
 * @ibah: ib_core's AH
 * @path: the destination
 * @ah_num: the handle's number in the device's AH table; user UD work
 *	requests name their AH by it
 */
struct rxe_ah {
	struct ib_ah ibah;
	struct rxe_path path;
	u32 ah_num;
};

/**
 * struct rxe_cq - a completion queue
 * @ibcq: ib_core's CQ
 * @lock: protects @queue (its kernel index, and for kernel CQs the poll
 *	side), @notify and @overflow
 * @queue: ring of struct rxe_cqe slots
 * @notify: the armed request, IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, or 0
 * @overflow: a completion found the queue full; the CQ is in error
 * @is_user: userspace owns the consumer side
 */
struct rxe_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* queue, notify, overflow */
	struct rxe_queue queue;
	u8 notify;
	bool overflow;
	bool is_user;
};

/**
 * union rxe_cqe - one completion queue slot
 * @ibwc: the completion of a kernel CQ
 * @uibwc: the completion of a user CQ, as the provider reads it
 */
union rxe_cqe {
	struct ib_wc ibwc;
	struct ib_uverbs_wc uibwc;
};

/**
 * struct rxe_rwqe - a receive work request, in kernel memory
 * @wr_id: the consumer's cookie
 * @num_sge: entries used in @sge
 * @length: sum of the SGE lengths
 * @sge: the scatter list
 *
 * Receive rings hold struct rxe_recv_wqe, written by the consumer. The
 * responder copies one into a struct rxe_rwqe, checks it, and only then
 * uses it.
 */
struct rxe_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct ib_sge sge[];
};

/**
 * struct rxe_srq - a shared receive queue
 * @ibsrq: ib_core's SRQ; ib_core keeps it alive while a QP uses it
 * @lock: protects @queue (both sides for a kernel SRQ), @limit, @max_wr
 * @queue: ring of struct rxe_recv_wqe slots
 * @max_wr: the capacity the consumer asked for
 * @max_sge: SGEs per receive work request
 * @limit: the limit event fires when fewer WQEs remain; 0 when unarmed
 * @srq_num: the number reported to userspace
 * @is_user: userspace owns the producer side
 */
struct rxe_srq {
	struct ib_srq ibsrq;
	spinlock_t lock; /* queue, limit, max_wr */
	struct rxe_queue queue;
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	u32 srq_num;
	bool is_user;
};

/**
 * enum rxe_mr_state - whether an MR or MW key may be used
 * @RXE_MR_INVALID: a fast-registration MR before REG_MR or after an
 *	invalidation, or an unbound MW
 * @RXE_MR_VALID: usable by the keys it holds
 */
enum rxe_mr_state {
	RXE_MR_INVALID,
	RXE_MR_VALID,
};

/**
 * struct rxe_mr - a memory region
 * @ibmr: ib_core's MR, with the lkey and rkey
 * @obj: references from packets and work requests that use it
 * @state: see enum rxe_mr_state; written by the QP that registers it
 *	(release) or invalidates it (then a wait for @accesses)
 * @access: IB_ACCESS_* flags
 * @umem: the pinned user memory of a user MR
 * @pages: the blocks behind the MR, 1 << @page_shift bytes each, by the
 *	first page of each: PAGE_SIZE for a user MR, the page size of
 *	ib_map_mr_sg() for a fast-registration MR, whose blocks are
 *	physically contiguous. NULL for a DMA MR, whose addresses are kernel
 *	virtual addresses
 * @max_pages: room in @pages
 * @npages: blocks mapped
 * @page_shift: log2 of the block size
 * @page_offset: offset of the first byte of the MR in @pages[0]
 * @num_mw: memory windows bound to it; -1 once dereg_mr has found none,
 *	after which no bind can take the MR
 * @accesses: of a fast-registration MR, the accesses under way that may
 *	have found it valid (rxe_mr_tryget() to rxe_mr_put());
 *	rxe_mr_invalidate() waits for none. No window binds such an MR, so
 *	none is held for longer than one packet.
 * @rcu: lookups run under RCU; the memory is freed after a grace period
 */
struct rxe_mr {
	struct ib_mr ibmr;
	struct rxe_obj obj;
	enum rxe_mr_state state;
	u32 access;
	struct ib_umem *umem;
	struct page **pages;
	unsigned int max_pages;
	unsigned int npages;
	unsigned int page_shift;
	unsigned int page_offset;
	atomic_t num_mw;
	atomic_t accesses;
	struct rcu_head rcu;
};

/**
 * struct rxe_mw_key - a memory window as the wire finds it: its binding
 * @lock: protects @state, @mr, @rkey, @qpn, @addr, @length and @access
 * @state: see enum rxe_mr_state
 * @mr: the MR it is bound to, with a reference, or NULL
 * @rkey: its current key, whose low byte a bind changes; 0 once
 *	deallocated, which matches no key (index 0 is never given out)
 * @pd: the PD it belongs to; only ever compared
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2
 * @qpn: the QP a type 2 window is bound to
 * @addr: first byte it grants
 * @length: bytes it grants
 * @access: IB_ACCESS_REMOTE_* rights it grants
 * @rcu: frees it a grace period after dealloc
 *
 * Lookups find it in the key table under RCU and use it under @lock
 * only, so it needs no reference count. ib_core frees a window as soon
 * as dealloc_mw returns; this part, which the driver owns, outlives it by
 * a grace period that dealloc does not wait for (17 ms each in a test
 * guest, minutes for a process exiting with 65536 windows).
 */
struct rxe_mw_key {
	spinlock_t lock; /* state, mr, rkey, qpn, addr, length, access */
	enum rxe_mr_state state;
	struct rxe_mr *mr;
	u32 rkey;
	const struct ib_pd *pd;
	enum ib_mw_type type;
	u32 qpn;
	u64 addr;
	u64 length;
	u32 access;
	struct rcu_head rcu;
};

/**
 * struct rxe_mw - a memory window
 * @ibmw: ib_core's MW; ibmw.rkey is the key it was allocated with, whose
 *	index bits (key >> 8) a bind never changes
 * @key: what the wire and the send queue use of it
 */
struct rxe_mw {
	struct ib_mw ibmw;
	struct rxe_mw_key *key;
};

/**
 * enum rxe_wqe_state - progress of a send work request
 * @RXE_WQE_POSTED: not yet taken by the requester
 * @RXE_WQE_ACTIVE: the requester is sending it
 * @RXE_WQE_SENT: every packet is out; waiting for the acknowledgment
 * @RXE_WQE_DONE: finished; the completer may retire it
 * @RXE_WQE_ERROR: failed with @status; the completer retires it
 */
enum rxe_wqe_state {
	RXE_WQE_POSTED,
	RXE_WQE_ACTIVE,
	RXE_WQE_SENT,
	RXE_WQE_DONE,
	RXE_WQE_ERROR,
};

/* Classes of a send work request, in struct rxe_swqe.mask. */
#define RXE_WR_SEND		BIT(0)	/* SEND, with immediate or invalidate */
#define RXE_WR_WRITE		BIT(1)	/* RDMA WRITE, with immediate or not */
#define RXE_WR_READ		BIT(2)
#define RXE_WR_ATOMIC		BIT(3)
#define RXE_WR_LOCAL		BIT(4)	/* REG_MR, LOCAL_INV, BIND_MW: no packet */
#define RXE_WR_IMM		BIT(5)	/* carries immediate data */
#define RXE_WR_INV		BIT(6)	/* carries an rkey to invalidate */
/*
 * The Memory Placement Extensions. Both go as one request answered by one
 * zero-length READ response, so they are READs of no bytes to the
 * requester and completer (RXE_WR_READ is set too): each holds a place
 * among the READ and atomic requests outstanding, and only its response
 * completes it. The request carries what the READ's would not.
 */
#define RXE_WR_FLUSH		BIT(7)	/* RDMA FLUSH: a FETH, no payload */
#define RXE_WR_AWRITE		BIT(8)	/* RDMA ATOMIC WRITE: 8 bytes */
#define RXE_WR_MPE		(RXE_WR_FLUSH | RXE_WR_AWRITE)

/**
 * struct rxe_swqe - a send work request, in kernel memory
 * @wr_id: the consumer's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_*
 * @ex: immediate data, or the rkey a SEND_WITH_INV invalidates
 * @wr: the operation's parameters; a FLUSH or an ATOMIC WRITE uses
 *	@wr.rdma's address and key, and its own fields there
 * @state: see enum rxe_wqe_state
 * @status: the completion status once it is not IB_WC_SUCCESS
 * @mask: RXE_WR_* class bits of @opcode
 * @first_psn: PSN of its first packet
 * @last_psn: PSN of its last packet (of its last response for a READ)
 * @length: bytes it moves; 0 for a FLUSH or an ATOMIC WRITE, whose
 *	response carries none
 * @rd_chunk: a READ's responses per READ request (rxe_req_read_chunk())
 * @rd_sent: READ requests (one per @rd_chunk responses), or the atomic
 *	request, counted in the requester's rd_atomic
 * @rd_done: those of them answered in full
 * @num_sge: entries in @sge, or 0 for inline data
 * @is_inline: @inline_data holds the payload
 * @started: the requester has sent it before. A rewind may set it back
 *	to POSTED; it then neither waits for its fence again (it passed
 *	it, and the READs behind it may hold the places it would wait for)
 *	nor stays behind in SQD, which holds back only new work requests.
 * @sge: the gather list (scatter list for READ and atomics)
 * @inline_data: the payload of an inline send
 *
 * Kernel QPs write these straight into their send ring at post time.
 * User QPs post struct rxe_send_wqe into a ring they can write at any
 * time; the requester snapshots each into a private struct rxe_swqe and
 * checks it before it uses anything in it.
 */
struct rxe_swqe {
	u64 wr_id;
	u32 opcode;
	u32 send_flags;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	union {
		struct {
			u64 va;
			u32 rkey;
			u32 flush_len;		/* FLUSH: bytes from @va */
			u8 awrite[8];		/* ATOMIC WRITE: the bytes stored */
			u8 flush_plt;		/* FLUSH: IB_FLUSH_GLOBAL | _PERSISTENT */
			u8 flush_sel;		/* FLUSH: IB_FLUSH_RANGE or _MR */
		} rdma;
		struct {
			u64 va;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			u32 remote_qpn;
			u32 remote_qkey;
			u16 pkey_index;
			struct rxe_path path;
		} ud;
		struct {
			struct rxe_mr *mr;
			u32 key;
			u32 access;
		} reg;
		struct {
			u64 addr;
			u64 length;
			u32 mr_lkey;
			u32 mw_rkey;
			u32 rkey;
			u32 access;
		} mw;
	} wr;
	enum rxe_wqe_state state;
	enum ib_wc_status status;
	u32 mask;
	u32 first_psn;
	u32 last_psn;
	u32 length;
	u32 rd_chunk;
	u32 rd_sent;
	u32 rd_done;
	u32 num_sge;
	bool is_inline;
	bool started;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * Does @wqe read bytes that come back in READ responses? A FLUSH or an
 * ATOMIC WRITE, READs of no bytes, never has responses to ask for again
 * (rxe_req_refetch()): it goes again whole, on a rewind.
 */
static inline bool rxe_wqe_reads_bytes(const struct rxe_swqe *wqe)
{
	return (wqe->mask & (RXE_WR_READ | RXE_WR_MPE)) == RXE_WR_READ;
}

/**
 * struct rxe_sq - the send queue of a QP
 * @queue: the ring; slots are struct rxe_send_wqe for a user QP and
 *	struct rxe_swqe for a kernel QP. The kernel index is the oldest
 *	work request not yet completed.
 * @shadow: a user QP's private copies of its slots, @swqe_size each
 * @swqe_size: bytes per struct rxe_swqe, with its SGEs or inline data
 * @lock: kernel QPs: serialises posters (the ring's producer side)
 * @max_wr: work requests it holds
 * @max_sge: SGEs per work request
 * @max_inline: inline bytes per work request
 */
struct rxe_sq {
	struct rxe_queue queue;
	void *shadow;
	size_t swqe_size;
	spinlock_t lock; /* kernel producer side of queue */
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
};

/**
 * struct rxe_rq - the receive queue of a QP without an SRQ
 * @queue: ring of struct rxe_recv_wqe slots; the kernel index belongs
 *	to the responder
 * @lock: kernel QPs: serialises posters (the ring's producer side)
 * @max_wr: work requests it holds
 * @max_sge: SGEs per work request
 */
struct rxe_rq {
	struct rxe_queue queue;
	spinlock_t lock; /* kernel producer side of queue */
	u32 max_wr;
	u32 max_sge;
};

/**
 * struct rxe_req - the requester's state; the send task owns it
 * @psn: PSN of the next packet not sent before
 * @index: SQ index of the WQE being sent
 * @offset: bytes of that WQE sent so far; for a READ, bytes of response
 *	asked for
 * @tail: SQ index up to which WQEs sit in kernel memory (for a user QP:
 *	snapshotted and checked)
 * @top_psn: one past the highest PSN ever sent; a packet below it is a
 *	retransmission
 * @twice_psn: one past the highest PSN sent more than once, or past the
 *	last one acknowledged if that is higher: a PSN before it may have a
 *	second copy on the way, one at or after it went once
 * @rd_atomic: READ and atomic WQEs sent and not yet answered
 * @since_ack_req: packets sent since the last that asked for an ACK
 * @ack_req_psn: PSN of the last packet that asked for an ACK; one before
 *	the PSN it went back to after a rewind
 * @top_unasked: the packet before @top_psn neither asked for an ACK nor
 *	draws a response, so the packets after the last that asked wait for
 *	one that will (rxe_req_tail_unasked())
 * @solicit: the next packet asks for an ACK, whatever else it is
 *	(rxe_req_solicit())
 * @alone: the next packet is a lost one sent again alone; after it the
 *	requester goes on from @top_psn (rxe_req_resend_alone())
 * @sqd_notified: the SQ_DRAINED event of this drain went out
 * @fetch_psn: where the next READ request for responses missing past a
 *	gap starts looking (rxe_req_refetch())
 * @fetch_end: one past the last of those to ask for; @fetch_psn reaches it
 *	once all are asked for
 */
struct rxe_req {
	u32 psn;
	u32 index;
	u32 offset;
	u32 tail;
	u32 top_psn;
	u32 twice_psn;
	u32 rd_atomic;
	u32 since_ack_req;
	u32 ack_req_psn;
	bool top_unasked;
	bool solicit;
	bool alone;
	bool sqd_notified;
	u32 fetch_psn;
	u32 fetch_end;
};

/*
 * READ responses the completer can keep past a gap, counted from the
 * oldest PSN not acknowledged: the largest window (RXE_CWND_MAX in
 * rxe_comp.h), plus the responses of one READ request sent at its edge,
 * at most as many again (rxe_req_read_chunk()). Every response
 * outstanding fits.
 */
#define RXE_KEPT_PSNS		512

/**
 * struct rxe_comp - the completer's state; the send task owns it, and the
 *	timers only set bits in @events
 * @psn: oldest PSN not yet acknowledged
 * @retry_left: transport retries left before the QP fails
 * @rnr_left: RNR retries left; RXE_RNR_RETRY_INFINITE never runs out
 * @rnr_wait: the requester holds until the RNR timer fires
 * @retried_psn: the PSN the requester last went back to, ~0 after progress
 * @resent_at: when it went back there
 * @gap_seen: READ responses seen past @psn since the last progress
 * @fetching: the requester last asked again for the READ responses
 *	missing from @retried_psn on without going back (a refetch)
 * @fetch_mark: req.psn when it did: a responder answers in order, so the
 *	answer comes before the responses from @fetch_mark on
 * @dup_seen: READ responses kept past @psn that arrived again since the
 *	last progress or retry (rxe_comp_kept_again())
 * @dup_limited: since the last progress such an answer set off a
 *	refetch; only those below @dup_limit count now
 * @dup_limit: the PSN of the answer that did
 * @events: RXE_COMP_EV_* bits set by the timers, the move to ERR and
 *	user doorbells
 * @cwnd: PSNs the requester may have unacknowledged (RC). Go-back-N
 *	resends everything in flight after a loss, so on a lossy path a
 *	smaller window wastes less: it halves on a loss and grows back by
 *	one PSN per window acknowledged
 * @ssthresh: below it the window grows by each PSN acknowledged
 * @busy: counted in the device's busy_qps (packets unacknowledged, and
 *	the peer answering: RXE_BUSY_BACKOFFS)
 * @cwnd_acked: PSNs acknowledged towards the next linear step
 * @recover_psn: req.top_psn when the last loss was seen; losses before
 *	@psn reaches it belong to the same episode and shrink nothing more
 * @in_recovery: a loss episode is open
 * @undo_cwnd: the window before a retry timer episode shrank it
 * @undo_ssthresh: the threshold before it
 * @undo_armed: the episode began with the retry timer and no NAK has
 *	confirmed a loss since: an ACK for packets not yet sent again proves
 *	the timer spurious, and the window goes back
 * @peer_holds: the responder keeps the packets after a gap: an ACK came
 *	for packets past a NAKed one that had not gone again, and that had
 *	itself gone only once before the NAK (@nak_once)
 * @peer_drops: the responder drops the packets after a gap: the ACK for a
 *	NAKed packet sent again alone covered that packet and no more
 * @nak_once: the last time the requester went back, a sequence NAK sent
 *	it, for a packet that had gone only once. The copy sent for the NAK
 *	is then the one that fills the gap, and an ACK past it shows a
 *	responder that kept what followed. A second copy sent before the NAK
 *	came (the retry timer went back first) may have filled the gap
 *	already, and a responder that drops would take what follows it too.
 * @nak_psn: the PSN it last went back to, the NAKed one for @nak_once;
 *	unlike @retried_psn, kept past progress
 * @alone_open: a lost packet went again alone (rxe_req_resend_alone())
 *	and the ACK that covers what followed it has not come yet
 * @alone_end: top_psn when it went; the ACK for everything before it
 *	ends the episode
 * @held: an ACK, NAK or RNR NAK came for a PSN past a READ or atomic that
 *	still waited for its responses; it applies when @psn gets to
 *	@held_psn (rxe_comp_release_held())
 * @held_psn: the first PSN it does not acknowledge: the one a NAK names,
 *	one past an ACK's
 * @held_syn: its AETH syndrome
 * @rtt_psn: the PSN whose acknowledgment times a round trip
 * @rtt_start: when it was sent, or 0 when no round trip is timed
 * @srtt_ns: smoothed round-trip time, 0 before the first sample
 * @rttvar_ns: mean deviation of the round-trip time
 * @backoff: early retries since the last progress; each doubles the wait
 * @deadline: when the QP's local ACK timeout (IBA 9.7.6.1.3) expires for
 *	the oldest outstanding PSN, or 0 with an infinite timeout
 * @ack_timer: the retry timer: early at the measured round-trip timeout,
 *	and at @deadline at the latest
 * @rnr_timer: the RNR NAK backoff
 * @kept_top: one past the highest PSN in @kept, while @nkept is not 0
 * @nkept: how many PSNs @kept marks; READ responses past a gap are kept
 *	while it is not 0
 * @kept: READ responses kept past @psn, whose payload already lies in
 *	place: bit (PSN % RXE_KEPT_PSNS), for PSNs from @psn to @kept_top
 * @flush_left: send WQEs the flush has yet to retire, of those the ring
 *	held at the move to ERR or the last user doorbell since
 *	(RXE_COMP_EV_FLUSH); a kernel QP's flush takes all it holds
 */
struct rxe_comp {
	u32 psn;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	u32 retried_psn;
	ktime_t resent_at;
	u32 gap_seen;
	bool fetching;
	u32 fetch_mark;
	u32 dup_seen;
	bool dup_limited;
	u32 dup_limit;
	unsigned long events;
	u32 cwnd;
	u32 ssthresh;
	bool busy;
	u32 cwnd_acked;
	u32 recover_psn;
	bool in_recovery;
	u32 undo_cwnd;
	u32 undo_ssthresh;
	bool undo_armed;
	bool peer_holds;
	bool peer_drops;
	bool nak_once;
	u32 nak_psn;
	bool alone_open;
	u32 alone_end;
	bool held;
	u8 held_syn;
	u32 held_psn;
	u32 rtt_psn;
	ktime_t rtt_start;
	u64 srtt_ns;
	u64 rttvar_ns;
	u32 backoff;
	ktime_t deadline;
	struct hrtimer ack_timer;
	struct hrtimer rnr_timer;
	u32 kept_top;
	u32 nkept;
	DECLARE_BITMAP(kept, RXE_KEPT_PSNS);
	u32 flush_left;
};

/**
 * struct rxe_rd_res - what the responder keeps of a READ or atomic
 *	request, to answer a duplicate of it without executing it again
 * @kind: RXE_READ_MASK, RXE_ATOMIC_MASK, RXE_FLUSH_MASK or
 *	RXE_AWRITE_MASK (those two answered as READs of no bytes), or 0 for
 *	an unused entry
 * @first_psn: PSN of the request (of the first response of a READ)
 * @last_psn: PSN of the last response
 * @va: first byte read
 * @rkey: key the request used
 * @length: bytes read
 * @orig: the value an atomic operation returned
 */
struct rxe_rd_res {
	u32 kind;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;
};

/**
 * struct rxe_resp - the responder's state; the receive task owns it
 * @psn: the PSN it expects next
 * @msn: messages completed, for the AETH
 * @msg: RXE_SEND_MASK or RXE_WRITE_MASK while a multi-packet message is
 *	open, else 0
 * @offset: bytes of the open message received
 * @va: the open WRITE's address
 * @rkey: the open WRITE's key
 * @length: the open WRITE's length
 * @nak_sent: a NAK-PSN-sequence-error went out for the current gap
 * @oos_psn: the last PSN seen ahead of @psn since that NAK
 * @drop_msg: UC: drop packets until the next first or only one
 * @wqe_valid: @wqe holds the receive WQE of the open SEND
 * @wqe: the receive WQE in use, with room for the largest SGE list
 * @res: READ and atomic requests answered, a ring of
 *	RXE_MAX_QP_RD_ATOM entries of which max_dest_rd_atomic are used
 * @res_next: where the next READ or atomic request goes in @res
 * @read: the READ whose responses are going out, or NULL
 * @read_psn: PSN of its next response
 * @read_start: PSN of the first response of this run of them (a
 *	duplicate request replays from the middle of a READ)
 * @read_end: PSN of the last response of this run (a duplicate request
 *	may ask for less than the rest of the READ)
 * @ack_pending: an ACK is owed for the packets up to @ack_psn
 * @ack_psn: PSN the owed ACK carries
 * @ack_count: packets asking for an ACK that the owed ACK answers
 * @unacked: SEND and WRITE packets executed since the last ACK or response
 * @established: IB_EVENT_COMM_EST was raised (first packet taken in RTR)
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED was raised (a QP on an SRQ, in
 *	the error state)
 * @held: RC request packets that arrived past a gap, in PSN order, to
 *	execute when it fills; the receive task owns the list, which is why
 *	it goes without the sk_buff_head's lock
 * @from_held: the last packet taken came from @held
 * @hold_timer: runs the receive task once the first packet of @held is
 *	due to expire, so that kept packets go with no packet after them
 *	to take the task there; only the receive task arms it
 */
struct rxe_resp {
	u32 psn;
	u32 msn;
	u32 msg;
	u32 offset;
	u64 va;
	u32 rkey;
	u32 length;
	bool nak_sent;
	u32 oos_psn;
	bool drop_msg;
	bool wqe_valid;
	struct rxe_rwqe *wqe;
	struct rxe_rd_res *res;
	u32 res_next;
	struct rxe_rd_res *read;
	u32 read_psn;
	u32 read_start;
	u32 read_end;
	bool ack_pending;
	u32 ack_psn;
	u32 ack_count;
	u32 unacked;
	bool established;
	bool last_wqe;
	struct sk_buff_head held;
	bool from_held;
	struct hrtimer hold_timer;
};

/**
 * struct rxe_qp_entry - a QP as the wire finds it
 * @obj: the QP's references: its creator's, and one for each packet, skb
 *	destructor or ACK round using it (rxe_qp_get() to rxe_qp_put())
 * @qp: the QP
 * @rcu: frees the entry a grace period after the QP's destroy
 *
 * ib_core frees a QP as soon as the destroy verb returns. What the QPN
 * table and the QP's skbs in the network stack point at is therefore this
 * entry, which the driver owns and frees with kfree_rcu(): a lookup under
 * RCU can always try for a reference, which fails once the count has
 * reached zero, the end of destroy's drain. Destroy waits for the
 * references to drain, not for a
 * grace period, which would cost each QP 17 ms in a test guest and a
 * process exiting with 65536 of them twenty minutes.
 */
struct rxe_qp_entry {
	struct rxe_obj obj;
	struct rxe_qp *qp;
	struct rcu_head rcu;
};

/**
 * struct rxe_qp - a queue pair
 * @ibqp: ib_core's QP
 * @entry: its entry in the QPN table, with its reference count
 * @state_lock: protects @attr and @path; the state itself is
 *	@attr.qp_state, which the data path reads with rxe_qp_state()
 * @modify_mutex: serialises the modify verb, which may sleep
 * @attr: the attributes as last modified, with the state
 * @path: the primary path of an RC or UC QP, set at RTR
 * @src_port: UDP source port of its packets
 * @mtu: path MTU in bytes
 * @is_user: userspace owns its rings
 * @sig_all: every send work request generates a completion
 * @cq_full: a completion found its CQ full and IB_EVENT_QP_FATAL was
 *	raised (rxe_qp_cq_full()); under @state_lock, cleared by a reset
 * @sq: the send queue
 * @rq: the receive queue, unused with an SRQ
 * @srq: the SRQ, or NULL
 * @scq: the send CQ
 * @rcq: the receive CQ
 * @send_task: the requester and the completer
 * @recv_task: the responder
 * @req_q: request packets waiting for the responder
 * @rsp_q: response packets waiting for the completer
 * @tx: the QP's skbs in the network stack (struct rxe_net_tx); NULL once
 *	destroyed, freed after an RCU grace period (rxe_net_qp_inflight())
 * @dst_cache: the route of @path
 * @req: requester state
 * @comp: completer state
 * @resp: responder state
 * @ack_link: in this CPU's list of QPs that owe an ACK at the end of the
 *	receive round (rxe_resp.c); outside @resp, which a reset clears
 * @ack_flags: RXE_ACK_LISTED, RXE_ACK_NOW (atomic bit operations)
 * @mcast_groups: multicast groups the QP is attached to, under
 *	rxe_dev.mcg_mutex (rxe_mcast.c)
 */
struct rxe_qp {
	struct ib_qp ibqp;
	struct rxe_qp_entry *entry;
	spinlock_t state_lock; /* attr, path, cq_full */
	struct mutex modify_mutex; /* modify_qp callers */
	struct ib_qp_attr attr;
	struct rxe_path path;
	u16 src_port;
	u32 mtu;
	bool is_user;
	bool sig_all;
	bool cq_full;
	struct rxe_sq sq;
	struct rxe_rq rq;
	struct rxe_srq *srq;
	struct rxe_cq *scq;
	struct rxe_cq *rcq;
	struct rxe_task send_task;
	struct rxe_task recv_task;
	struct sk_buff_head req_q;
	struct sk_buff_head rsp_q;
	struct rxe_net_tx *tx;
	struct dst_cache dst_cache;
	struct rxe_req req;
	struct rxe_comp comp;
	struct rxe_resp resp;
	struct list_head ack_link;
	unsigned long ack_flags;
	unsigned int mcast_groups;
};

static inline struct rxe_ucontext *to_rxe_uctx(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct rxe_ucontext, ibuc);
}

/**
 * rxe_uctx_of() - the user context a verb's udata belongs to
 * @udata: the udata of a user verb
 *
 * Return: the ib_ucontext.
 */
static inline struct ib_ucontext *rxe_uctx_of(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct rxe_ucontext,
					  ibuc)->ibuc;
}

static inline struct rxe_pd *to_rxe_pd(struct ib_pd *pd)
{
	return container_of(pd, struct rxe_pd, ibpd);
}

static inline struct rxe_ah *to_rxe_ah(struct ib_ah *ah)
{
	return container_of(ah, struct rxe_ah, ibah);
}

static inline struct rxe_cq *to_rxe_cq(struct ib_cq *cq)
{
	return container_of(cq, struct rxe_cq, ibcq);
}

static inline struct rxe_srq *to_rxe_srq(struct ib_srq *srq)
{
	return container_of(srq, struct rxe_srq, ibsrq);
}

static inline struct rxe_qp *to_rxe_qp(struct ib_qp *qp)
{
	return container_of(qp, struct rxe_qp, ibqp);
}

static inline struct rxe_mr *to_rxe_mr(struct ib_mr *mr)
{
	return container_of(mr, struct rxe_mr, ibmr);
}

static inline struct rxe_mw *to_rxe_mw(struct ib_mw *mw)
{
	return container_of(mw, struct rxe_mw, ibmw);
}

static inline struct rxe_dev *rxe_qp_dev(const struct rxe_qp *qp)
{
	return to_rxe_dev(qp->ibqp.device);
}

#endif /* RXE_VERBS_H */
