// SPDX-License-Identifier: GPL-2.0
/*
 * The wire side of the driver: the RoCEv2 UDP sockets of the initial
 * network namespace, transmission through the IP stack (or straight to
 * the receiving device when the destination is a local address), and the
 * receive entry point, which checks every header once before anything
 * else looks at the packet.
 */

#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/wait_bit.h>
#include <net/addrconf.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "rxe_net.h"
#include "rxe_compat.h"
#include "rxe_hdr.h"
#include "rxe_icrc.h"
#include "rxe_opcode.h"
#include "rxe_pkt.h"
#include "rxe_recv.h"
#include "rxe_mcast.h"
#include "rxe_counters.h"
#include "rxe_trace.h"

static struct socket *rxe_net_sock4;
static struct socket *rxe_net_sock6;

static unsigned int rxe_net_batch_max = RXE_NET_BATCH_PKTS;
module_param_named(tx_batch, rxe_net_batch_max, uint, 0644);
MODULE_PARM_DESC(tx_batch,
		 "packets of a QP that may go through the IP stack as one (GSO) skb, at most "
		 __stringify(RXE_NET_BATCH_PKTS) "; 0 or 1: one by one");

/* Room in front of the BTH: link layer (with a VLAN tag), IPv6, UDP. */
static unsigned int rxe_net_headroom(const struct rxe_dev *rxe)
{
	return LL_RESERVED_SPACE(rxe->ndev) + VLAN_HLEN +
	       sizeof(struct ipv6hdr) + sizeof(struct udphdr);
}

/*
 * Heads of copied packets come from page pools, one a CPU, and go back to
 * them when the stack frees the skb. A head holds the whole packet where
 * the netdev takes no fragments, and fresh pages from any allocator are
 * cleared under the init_on_alloc hardening that distributions turn on:
 * with many packets in flight the stack's page fragment cache hands out
 * fresh pages all the time, and clearing them cost the sender more than
 * the ICRC (a profile of a two-guest 64 KiB WRITE: about as many bytes
 * cleared as sent). A pool's recycled pages are not cleared: every byte
 * the packet carries is written when it is built, and build_skb()
 * initialises the rest that anything reads.
 *
 * A pool has one user at a time: this CPU's, with bottom halves off
 * (the tasks run so). Its pages return from any CPU. Heads for lent
 * payloads stay with the page fragment cache: the trailer fragment takes
 * a page reference of its own (rxe_net_add_trailer()), which a pool page
 * must not get, and those heads hold headers only.
 *
 * Pages are taken as they are needed; of those that come back a pool
 * keeps at most its ring (RXE_NET_POOL_PAGES) and the page pool's own
 * cache of as many again, 2 MiB a CPU with 8 KiB pages, until the module
 * is unloaded, and gives the rest back to the page allocator.
 */
#define RXE_NET_POOL_ORDER	1
#define RXE_NET_POOL_PAGES	128

static struct page_pool * __percpu *rxe_net_pools;

/*
 * May this context use the per-CPU caches that NAPI keeps with bottom
 * halves off (page pools here, and the stack's cache of sk_buffs)? The
 * tasks run so, and the receive softirq is such a context.
 */
static bool rxe_net_bh_context(void)
{
	return in_softirq() && !in_hardirq();
}

/*
 * An skb around the head @data of @size bytes. The sk_buff itself is
 * memory too: from the slab it is cleared on every allocation under
 * init_on_alloc, 232 bytes a packet before build_skb() clears most of it
 * again. With bottom halves off it comes from NAPI's per-CPU cache of
 * sk_buffs instead, which the skbs this driver consumes (rxe_net_consume())
 * and those a netdev frees after sending refill without clearing.
 */
static struct sk_buff *rxe_net_build_skb(void *data, unsigned int size)
{
	if (rxe_net_bh_context())
		return napi_build_skb(data, size);
	return build_skb(data, size);
}

/**
 * rxe_net_consume() - free a packet that was used, not dropped
 * @skb: the packet
 *
 * With bottom halves off its sk_buff goes back to this CPU's cache for
 * the next packet built (rxe_net_build_skb()); else, or for a clone, as
 * consume_skb() does.
 *
 * Context: any.
 */
void rxe_net_consume(struct sk_buff *skb)
{
	if (rxe_net_bh_context())
		napi_consume_skb(skb, 1);
	else
		consume_skb(skb);
}

/* An skb around @size bytes of this CPU's pool, or NULL. */
static struct sk_buff *rxe_net_pool_skb(unsigned int size)
{
	struct page_pool *pool;
	struct sk_buff *skb;
	unsigned int offset;
	struct page *page;

	if (!rxe_net_pools || !rxe_net_bh_context() ||
	    size > PAGE_SIZE << RXE_NET_POOL_ORDER)
		return NULL;
	pool = *this_cpu_ptr(rxe_net_pools);
	page = page_pool_alloc_frag(pool, &offset, size,
				    GFP_ATOMIC | __GFP_NOWARN);
	if (!page)
		return NULL;
	skb = rxe_net_build_skb(page_address(page) + offset, size);
	if (!skb) {
		page_pool_put_full_page(pool, page, false);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	return skb;
}

static void rxe_net_pools_destroy(void)
{
	int cpu;

	if (!rxe_net_pools)
		return;
	for_each_possible_cpu(cpu)
		page_pool_destroy(*per_cpu_ptr(rxe_net_pools, cpu));
	free_percpu(rxe_net_pools);
	rxe_net_pools = NULL;
}

/*
 * Without pools (no memory at load, or an architecture whose page pools
 * cannot hand out fragments) heads come from the page fragment cache.
 */
static void rxe_net_pools_create(void)
{
	struct page_pool_params pp = {
		.flags = RXE_PP_FLAGS,
		.order = RXE_NET_POOL_ORDER,
		.pool_size = RXE_NET_POOL_PAGES,
	};
	struct page_pool *pool;
	int cpu;

	rxe_net_pools = alloc_percpu(struct page_pool *);
	if (!rxe_net_pools)
		goto none;
	for_each_possible_cpu(cpu) {
		pp.nid = cpu_to_node(cpu);
		pool = page_pool_create(&pp);
		if (IS_ERR(pool)) {
			/* page_pool_destroy() takes the NULLs of those not made */
			rxe_net_pools_destroy();
			goto none;
		}
		*per_cpu_ptr(rxe_net_pools, cpu) = pool;
	}
	return;
none:
	pr_info("no page pools for packet heads: using the page fragment cache\n");
}

static struct sk_buff *rxe_net_alloc_head(const struct rxe_dev *rxe,
					  unsigned int bth_len,
					  unsigned int room)
{
	unsigned int headroom = rxe_net_headroom(rxe);
	unsigned int len = headroom + bth_len + room;
	unsigned int size = SKB_HEAD_ALIGN(len);
	struct sk_buff *skb = NULL;
	void *data;

	if (!room)
		skb = rxe_net_pool_skb(size);
	if (!skb && size <= PAGE_FRAG_CACHE_MAX_SIZE) {
		data = netdev_alloc_frag(size);
		if (data) {
			skb = rxe_net_build_skb(data, size);
			if (!skb)
				skb_free_frag(data);
		}
	}
	if (!skb)
		skb = alloc_skb(len, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, headroom);
	skb_put(skb, bth_len);
	return skb;
}

/**
 * rxe_net_alloc_skb() - allocate a packet to send
 * @rxe: the sending device
 * @bth_len: bytes from the BTH to the end of the ICRC
 *
 * The head comes from this CPU's page pool (above), else from the
 * network stack's page fragment cache, and is built into an skb around
 * it; a kmalloc()ed head, zeroed on each allocation under init_on_alloc,
 * is the last resort.
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: an skb whose data is @bth_len bytes from the BTH on, or NULL.
 */
struct sk_buff *rxe_net_alloc_skb(const struct rxe_dev *rxe,
				  unsigned int bth_len)
{
	return rxe_net_alloc_head(rxe, bth_len, 0);
}

/**
 * rxe_net_alloc_skb_lend() - allocate the head of a packet whose payload
 *	is lent, not copied
 * @rxe: the sending device
 * @hdr_len: bytes of BTH and extension headers
 *
 * The payload's pages are attached as fragments (rxe_mr_lend_sgl()), and
 * rxe_net_add_trailer() then puts pad and ICRC in a last fragment, taken
 * from room left behind the headers in this head.
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: an skb whose data is the @hdr_len header bytes, or NULL.
 */
struct sk_buff *rxe_net_alloc_skb_lend(const struct rxe_dev *rxe,
				       unsigned int hdr_len)
{
	return rxe_net_alloc_head(rxe, hdr_len, RXE_NET_TRAILER_ROOM);
}

/**
 * rxe_net_add_trailer() - end a packet with lent payload: pad and ICRC
 * @skb: from rxe_net_alloc_skb_lend(), its payload attached
 * @pad: pad bytes (0 to 3)
 *
 * The trailer has to follow the payload's fragments, so it becomes one
 * too: @pad zero bytes and room for the ICRC, in the head's own page
 * behind the headers (a page fragment head holds a page reference like
 * any fragment). It needs a head from the page fragment cache, its room
 * within one page, and a free fragment slot.
 *
 * Return: true, or false with @skb unchanged (send a copy instead).
 */
bool rxe_net_add_trailer(struct sk_buff *skb, unsigned int pad)
{
	unsigned int len = pad + RXE_ICRC_SIZE;
	u8 *p = skb_tail_pointer(skb);
	struct page *page;

	/* skb_tailroom() is 0 for any skb with fragments. */
	if (!skb->head_frag || skb_end_pointer(skb) - p < len ||
	    offset_in_page(p) + len > PAGE_SIZE ||
	    skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS)
		return false;
	memset(p, 0, len);
	page = virt_to_page(p);
	get_page(page);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   offset_in_page(p), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return true;
}

/*
 * The device a packet received on belongs to: the netdev's own, a VLAN's
 * real device's, or that of a netdev below it (a bridge's port, say):
 * every netdev that ib_core gives the device GIDs of.
 */
static struct rxe_dev *rxe_net_dev_rcu(struct net_device *ndev)
{
	struct rxe_dev *rxe = rxe_dev_from_netdev_rcu(ndev);

	if (!rxe && is_vlan_dev(ndev))
		rxe = rxe_dev_from_netdev_rcu(vlan_dev_real_dev(ndev));
	if (!rxe && ndev->lower_level > 1)
		rxe = rxe_dev_below_netdev_rcu(ndev);
	return rxe;
}

static void rxe_net_drop(struct rxe_dev *rxe, struct sk_buff *skb,
			 enum rxe_counter reason)
{
	rxe_counter_inc(rxe, reason);
	trace_rxe_pkt_drop(rxe, skb, reason);
	kfree_skb(skb);
}

/*
 * Check everything the BTH lets us check before the packet is looked at:
 * that it is as long as its headers say, that its opcode is one we carry,
 * its version, its pad and length in whole words, and its ICRC. Then hand
 * it on to the QP. The order matters: no length is computed from a table
 * entry before the entry is known to exist.
 *
 * Context: softirq, under rcu_read_lock(); consumes @skb.
 */
static void rxe_net_rcv(struct rxe_dev *rxe, struct sk_buff *skb,
			bool loopback)
{
	const struct rxe_opcode_info *info;
	struct rxe_pkt *pkt = rxe_skb_pkt(skb);
	const struct rxe_bth *bth;
	unsigned int tail;
	__le32 icrc, *picrc;

	if (skb->len < sizeof(*bth))
		goto drop_malformed;
	if (!pskb_may_pull(skb, sizeof(*bth)))
		goto drop_nomem;
	bth = (const struct rxe_bth *)skb->data;

	info = &rxe_opcode[bth->opcode];
	if (!info->mask)
		goto drop_opcode;
	if (bth_tver(bth) != RXE_BTH_TVER)
		goto drop_malformed;
	if (skb->len < info->length)
		goto drop_malformed;
	if (!pskb_may_pull(skb, info->length))
		goto drop_nomem;
	bth = (const struct rxe_bth *)skb->data;

	tail = bth_pad(bth) + RXE_ICRC_SIZE;
	if (skb->len < info->length + tail)
		goto drop_malformed;

	pkt->opcode = bth->opcode;
	pkt->mask = info->mask;
	pkt->hdrlen = info->length;
	pkt->psn = bth_psn(bth);
	pkt->paylen = skb->len - info->length - tail;
	pkt->qp = NULL;
	pkt->vlan_id = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) :
					       RXE_PKT_NO_VLAN;
	if (pkt->paylen && !(info->mask & RXE_PAYLOAD_MASK))
		goto drop_malformed;
	/*
	 * Headers and ICRC are whole 4-byte words, and the pad count makes
	 * the payload one too (IBA 9.2); on IB the length is even counted
	 * in words. Any other length is no IBA packet.
	 */
	if (skb->len & 3)
		goto drop_malformed;

	if (!loopback) {
		picrc = skb_header_pointer(skb, skb->len - RXE_ICRC_SIZE,
					   sizeof(icrc), &icrc);
		if (!picrc || *picrc != rxe_icrc_compute(skb, 0, skb->len -
							 RXE_ICRC_SIZE))
			goto drop_icrc;
	}

	rxe_counter_inc(rxe, RXE_CNT_RCVD_PKTS);
	trace_rxe_pkt_rx(rxe, skb, pkt);
	rxe_recv_dispatch(rxe, skb);
	return;

drop_malformed:
	rxe_net_drop(rxe, skb, RXE_CNT_DROP_MALFORMED);
	return;
drop_opcode:
	rxe_net_drop(rxe, skb, RXE_CNT_DROP_OPCODE);
	return;
drop_icrc:
	rxe_net_drop(rxe, skb, RXE_CNT_DROP_ICRC);
	return;
drop_nomem:
	/* The headers are there, in pages we could not pull them from. */
	rxe_net_drop(rxe, skb, RXE_CNT_DROP_NOMEM);
}

/*
 * Was the datagram sent to many hosts, and not to a multicast group of
 * ours? The UDP layer hands datagrams sent to a broadcast or multicast
 * frame or IP address to our socket too. Of those, only the ones sent to
 * a group a QP is attached to (rxe_mcast.c) are for us: in a multicast
 * frame, in a frame to this host alone (a bridge or access point may
 * turn multicast into unicast), or looped back from this host's own send
 * to the group. Without this check a UD QP would take a datagram sent to
 * the whole subnet.
 */
static bool rxe_net_to_many(struct rxe_dev *rxe, const struct sk_buff *skb)
{
	bool group = rxe_mcast_addr(skb);
	const struct rtable *rt;

	switch (skb->pkt_type) {
	case PACKET_HOST:
		if (group)
			break;
		if (ip_hdr(skb)->version == 6)
			return false;
		/* The route knows the subnets' broadcast addresses. */
		rt = skb_rtable(skb);
		return rt && (rt->rt_flags & RTCF_BROADCAST);
	case PACKET_MULTICAST:
	case PACKET_LOOPBACK:
		if (!group)
			return true;
		break;
	default:
		return true;
	}
	return !rxe_mcast_lookup_rcu(rxe, skb);
}

/*
 * udp_tunnel encap_rcv: a datagram for UDP port 4791. The data starts at
 * the UDP header, which the UDP layer has checked, with its checksum.
 */
static int rxe_net_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct rxe_dev *rxe;

	rcu_read_lock();
	rxe = rxe_net_dev_rcu(skb->dev);
	if (!rxe) {
		kfree_skb(skb);
	} else {
		__skb_pull(skb, sizeof(struct udphdr));
		if (unlikely(rxe_net_to_many(rxe, skb)))
			rxe_net_drop(rxe, skb, RXE_CNT_DROP_ADDR);
		else
			rxe_net_rcv(rxe, skb, false);
	}
	rcu_read_unlock();
	return 0;
}

/* struct rxe_net_tx not yet freed; rxe_net_module_exit() waits for none. */
static atomic_t rxe_net_tx_live = ATOMIC_INIT(0);

static void rxe_net_tx_free(struct rcu_head *head)
{
	kfree(container_of(head, struct rxe_net_tx, rcu));
	if (atomic_dec_and_test(&rxe_net_tx_live))
		wake_up_var(&rxe_net_tx_live);
	/* Taken by rxe_net_qp_cleanup(). */
	module_put(THIS_MODULE);
}

static void rxe_net_tx_put(struct rxe_net_tx *tx)
{
	if (refcount_dec_and_test(&tx->ref))
		call_rcu(&tx->rcu, rxe_net_tx_free);
}

/*
 * An skb's destructor_arg: its QP's struct rxe_net_tx, with the packets
 * the skb accounts for in the low bits (RXE_NET_TX_ALIGN keeps them
 * free): one, or a whole batch for the batch's first packet. The others
 * of a batch carry no destructor: fraglist segmentation would run it when
 * it takes the batch apart and leave it set, to run again when the packet
 * is freed.
 */
static_assert(RXE_NET_BATCH_PKTS < RXE_NET_TX_ALIGN);
/* kmalloc() aligns a power-of-two size to itself (rxe_net_qp_init()). */
static_assert(!(sizeof(struct rxe_net_tx) & (sizeof(struct rxe_net_tx) - 1)));

static void *rxe_net_tx_arg(struct rxe_net_tx *tx, unsigned int npkts)
{
	return (void *)((unsigned long)tx | npkts);
}

/*
 * Runs when the network stack is done with one of our skbs. That can be
 * deep inside a driver holding its transmit queue lock (virtio-net frees
 * sent skbs under it), so the tasks that wait for room are only
 * scheduled here, never run: they would transmit into that same lock.
 */
static void rxe_net_tx_done(struct sk_buff *skb)
{
	unsigned long arg = (unsigned long)skb_shinfo(skb)->destructor_arg;
	struct rxe_net_tx *tx = (void *)(arg & ~(RXE_NET_TX_ALIGN - 1UL));
	int npkts = arg & (RXE_NET_TX_ALIGN - 1);
	struct rxe_qp_entry *entry;
	int left;

	left = atomic_sub_return(npkts, &tx->inflight);
	if (left <= RXE_INFLIGHT_SKBS_LOW &&
	    left + npkts > RXE_INFLIGHT_SKBS_LOW) {
		rcu_read_lock();
		entry = rcu_dereference(tx->entry);
		if (entry && rxe_obj_get(&entry->obj)) {
			rxe_task_sched(&entry->qp->send_task);
			rxe_task_sched(&entry->qp->recv_task);
			rxe_obj_put(&entry->obj);
		}
		rcu_read_unlock();
	}
	rxe_net_tx_put(tx);
}

/*
 * Give the stack @skb, which accounts for @npkts packets of the QP's
 * in-flight count (rxe_net_send() counted them): it holds the QP's
 * struct rxe_net_tx until rxe_net_tx_done() runs for it.
 */
static void rxe_net_tx_own(struct rxe_qp *qp, struct sk_buff *skb,
			   unsigned int npkts)
{
	refcount_inc(&qp->tx->ref);
	skb_shinfo(skb)->destructor_arg = rxe_net_tx_arg(qp->tx, npkts);
	skb->destructor = rxe_net_tx_done;
}

static struct dst_entry *rxe_net_route4(const struct rxe_path *path,
					struct dst_cache *cache)
{
	struct flowi4 fl = {
		.flowi4_oif = path->ifindex,
		.flowi4_tos = RT_TOS(path->traffic_class),
		.flowi4_proto = IPPROTO_UDP,
		.saddr = path->saddr.s6_addr32[3],
		.daddr = path->daddr.s6_addr32[3],
	};
	struct rtable *rt;
	__be32 saddr;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &saddr);
		if (rt)
			return &rt->dst;
	}

	rt = ip_route_output_key(&init_net, &fl);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	return &rt->dst;
}

static struct dst_entry *rxe_net_route6(const struct rxe_path *path,
					struct dst_cache *cache)
{
	struct flowi6 fl = {
		.flowi6_oif = path->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.flowlabel = ip6_make_flowinfo(path->traffic_class,
					       cpu_to_be32(path->flow_label)),
		.saddr = path->saddr,
		.daddr = path->daddr,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	if (!rxe_net_sock6)
		return NULL;
	if (cache) {
		dst = dst_cache_get_ip6(cache, &saddr);
		if (dst)
			return dst;
	}

	dst = ipv6_stub->ipv6_dst_lookup_flow(&init_net, rxe_net_sock6->sk,
					      &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl.saddr);
	return dst;
}

static void rxe_net_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(RXE_ROCE_V2_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static void rxe_net_push_ip4(struct sk_buff *skb, const struct rxe_path *path,
			     struct dst_entry *dst)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = path->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = path->hop_limit ?: ip4_dst_hoplimit(dst);
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = path->saddr.s6_addr32[3];
	iph->daddr = path->daddr.s6_addr32[3];
	skb->protocol = htons(ETH_P_IP);
	ip_select_ident(&init_net, skb, NULL);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void rxe_net_push_ip6(struct sk_buff *skb, const struct rxe_path *path,
			     struct dst_entry *dst)
{
	struct ipv6hdr *ip6h;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, path->traffic_class, cpu_to_be32(path->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = path->hop_limit ?: ip6_dst_hoplimit(dst);
	ip6h->saddr = path->saddr;
	ip6h->daddr = path->daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/*
 * The device that owns a local destination address, if it is one of
 * ours; *@ndevp is the netdev with the address (ours, or a VLAN, bridge or
 * other netdev above it).
 */
static struct rxe_dev *rxe_net_local_dev_rcu(const struct rxe_path *path,
					     struct net_device **ndevp)
{
	struct net_device *ndev;

	if (path->network_type == RDMA_NETWORK_IPV4)
		ndev = __ip_dev_find(&init_net, path->daddr.s6_addr32[3], false);
	else
		ndev = ipv6_dev_find(&init_net, &path->daddr, NULL);
	*ndevp = ndev;
	return ndev ? rxe_net_dev_rcu(ndev) : NULL;
}

/*
 * A packet for a local address never leaves the host: hand it to the
 * receive path of the device owning that address, with its IP and UDP
 * headers in place as if it had come in through the netdev that has the
 * address (a VLAN's, for the VLAN it names). There is no ICRC to check.
 */
static int rxe_net_loopback(struct rxe_qp *qp, struct sk_buff *skb,
			    const struct rxe_path *path)
{
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	struct net_device *ndev;
	struct rxe_dev *to;

	rcu_read_lock();
	to = rxe_net_local_dev_rcu(path, &ndev);
	if (!to) {
		rcu_read_unlock();
		rxe_counter_inc(rxe, RXE_CNT_SEND_ERR);
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	rxe_counter_inc(rxe, RXE_CNT_SENT_PKTS);
	skb->dev = ndev;
	skb->pkt_type = PACKET_LOOPBACK;
	skb_dst_drop(skb);
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	rxe_net_rcv(to, skb, true);
	rcu_read_unlock();
	return 0;
}

/*
 * Hand a finished packet, or a batch of them, to the IP layer. A batch is
 * one GSO skb: the first packet in its head, the others whole on its
 * frag_list (UDP fraglist GSO), so that the stack routes, filters and
 * queues it once, and the netdev's driver gets the packets back to back
 * (xmit_more) from one software segmentation in front of it. That only
 * takes the packets apart: each keeps its own headers, IPv4 ID
 * (SKB_GSO_TCP_FIXEDID; they all have DF set), UDP checksum and ICRC; the
 * IP layer's length fields, which it sets for the whole batch, are set
 * again for each packet. The segment size is the first packet's, the
 * largest of the batch (rxe_net_batch_add()), so the stack's check of it
 * against the route's MTU holds for all.
 */
static int rxe_net_out(struct rxe_dev *rxe, struct sk_buff *skb,
		       unsigned int npkts, unsigned int seg_len)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	int err;

	if (npkts > 1) {
		rxe_counter_add(rxe, RXE_CNT_BATCHED_PKTS, npkts);
		skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST |
					    (ipv6 ? 0 : SKB_GSO_TCP_FIXEDID);
		skb_shinfo(skb)->gso_size = seg_len;
		skb_shinfo(skb)->gso_segs = npkts;
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	}
	if (ipv6)
		err = ip6_local_out(&init_net, rxe_net_sock6->sk, skb);
	else
		err = ip_local_out(&init_net, rxe_net_sock4->sk, skb);
	err = net_xmit_eval(err);
	if (unlikely(err)) {
		rxe_counter_add(rxe, RXE_CNT_SEND_ERR, npkts);
		return err;
	}
	rxe_counter_add(rxe, RXE_CNT_SENT_PKTS, npkts);
	return 0;
}

/**
 * rxe_net_flush() - send the packets held in a batch
 * @qp: the QP that filled @batch
 * @batch: emptied
 *
 * Context: bottom halves disabled.
 */
void rxe_net_flush(struct rxe_qp *qp, struct rxe_net_batch *batch)
{
	struct sk_buff *skb = batch->head;

	if (!skb)
		return;
	batch->head = NULL;
	batch->tail = NULL;
	rxe_net_tx_own(qp, skb, batch->npkts);
	rxe_net_out(rxe_qp_dev(qp), skb, batch->npkts, batch->seg_len);
}

/*
 * May a packet on @dst join a batch? Only on a QP's own path (the one
 * with a route @cache), not to a local address, and only to a netdev
 * that takes the batch apart itself, one without NETIF_F_GSO_FRAGLIST,
 * or to a VLAN on such a netdev: the VLAN device passes the batch whole
 * to the one under it, which cuts it with the tag in every packet. Other
 * devices with the feature (tunnels, bridges, bonds, a VLAN on a VLAN)
 * pass it on whole as well, but a tunnel's segmentation of its outer
 * packet mangles an inner fraglist (seen through VXLAN on 6.1), and the
 * others are not looked through.
 */
static bool rxe_net_may_batch(const struct dst_entry *dst,
			      const struct dst_cache *cache)
{
	const struct net_device *dev = dst->dev;

	if (!cache || (dev->flags & IFF_LOOPBACK))
		return false;
	if (is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	return !(READ_ONCE(dev->features) & NETIF_F_GSO_FRAGLIST);
}

/*
 * IPv6 requires a UDP checksum, which a packet sent alone leaves to the
 * netdev (CHECKSUM_PARTIAL). Fraglist segmentation would not finish it in
 * the packets of a batch, so one that joins carries it whole: one more
 * pass over a packet whose ICRC was just computed, for a pass through the
 * stack saved.
 */
static void rxe_net_udp6_csum(struct sk_buff *skb)
{
	unsigned int off = skb_transport_offset(skb), len = skb->len - off;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct udphdr *uh = udp_hdr(skb);

	uh->check = 0;
	uh->check = udp_v6_check(len, &ip6h->saddr, &ip6h->daddr,
				 skb_checksum(skb, off, len, 0));
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
	skb->ip_summed = CHECKSUM_NONE;
}

/*
 * Hold @skb, whose UDP payload is @seg_len bytes, in @batch if it can
 * join: the same route, no longer than the first packet, room left under
 * an IP datagram's length. Else the batch goes, and @skb starts the next.
 * The batch keeps the first packet's route; the others drop theirs, and
 * its first packet's destructor accounts for them all (rxe_net_flush()).
 */
static bool rxe_net_batch_add(struct rxe_qp *qp, struct rxe_net_batch *batch,
			      struct sk_buff *skb, struct dst_entry *dst,
			      unsigned int seg_len)
{
	struct sk_buff *head = batch->head;

	if (head && (batch->dst != dst || seg_len > batch->seg_len ||
		     batch->npkts >= READ_ONCE(rxe_net_batch_max) ||
		     head->len + skb->len > RXE_NET_BATCH_BYTES))
		rxe_net_flush(qp, batch);
	if (READ_ONCE(rxe_net_batch_max) <= 1)
		return false;

	if (skb->protocol == htons(ETH_P_IPV6))
		rxe_net_udp6_csum(skb);
	head = batch->head;
	if (!head) {
		skb_dst_set(skb, dst);
		skb->dev = dst->dev;
		batch->head = skb;
		batch->dst = dst;
		batch->npkts = 1;
		batch->seg_len = seg_len;
		return true;
	}

	dst_release(dst);
	if (batch->tail)
		batch->tail->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	batch->tail = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	batch->npkts++;
	return true;
}

/**
 * rxe_net_send() - send a packet, now or in a batch
 * @qp: the sending QP; it owns the skb until the stack frees it
 * @path: where to; a connected QP's own path uses its route cache
 * @sport: UDP source port
 * @skb: from rxe_net_alloc_skb(), with BTH, headers, payload and pad
 *	filled in, or from rxe_net_alloc_skb_lend() with its payload
 *	fragments and trailer; the ICRC is computed and stored here
 * @batch: NULL to send at once; else packets on the QP's own path are
 *	held in it until rxe_net_flush() or until one does not fit
 *
 * Context: bottom halves disabled; consumes @skb.
 * Return: 0, or a negative errno when the packet was not sent (it is then
 * lost, as on a wire, and the protocol's retries take over). A held
 * packet counts as sent; the stack may still drop it, as it may any.
 */
int rxe_net_send(struct rxe_qp *qp, const struct rxe_path *path, u16 sport,
		 struct sk_buff *skb, struct rxe_net_batch *batch)
{
	struct dst_cache *cache = path == &qp->path ? &qp->dst_cache : NULL;
	bool ipv4 = path->network_type == RDMA_NETWORK_IPV4;
	struct rxe_dev *rxe = rxe_qp_dev(qp);
	unsigned int bth_len = skb->len;
	unsigned int bth_off;
	struct dst_entry *dst;
	__le32 icrc;
	bool join;

	dst = ipv4 ? rxe_net_route4(path, cache) : rxe_net_route6(path, cache);
	if (!dst) {
		rxe_counter_inc(rxe, RXE_CNT_SEND_ERR);
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	join = batch && rxe_net_may_batch(dst, cache);
	if (batch && !join)
		rxe_net_flush(qp, batch);	/* what it holds goes first */

	rxe_net_push_udp(skb, sport);
	if (ipv4)
		rxe_net_push_ip4(skb, path, dst);
	else
		rxe_net_push_ip6(skb, path, dst);
	atomic_inc(&qp->tx->inflight);
	trace_rxe_pkt_tx(rxe, skb, bth_len);

	if (dst->dev->flags & IFF_LOOPBACK) {
		dst_release(dst);
		rxe_net_tx_own(qp, skb, 1);
		return rxe_net_loopback(qp, skb, path);
	}

	bth_off = skb_transport_offset(skb) + sizeof(struct udphdr);
	icrc = rxe_icrc_compute(skb, bth_off, bth_len - RXE_ICRC_SIZE);
	if (skb_is_nonlinear(skb))
		skb_store_bits(skb, bth_off + bth_len - RXE_ICRC_SIZE, &icrc,
			       sizeof(icrc));
	else
		memcpy(skb_tail_pointer(skb) - RXE_ICRC_SIZE, &icrc,
		       sizeof(icrc));

	if (join && rxe_net_batch_add(qp, batch, skb, dst, bth_len))
		return 0;

	rxe_net_tx_own(qp, skb, 1);
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	if (!ipv4)
		udp6_set_csum(false, skb, &path->saddr, &path->daddr,
			      bth_len + sizeof(struct udphdr));
	return rxe_net_out(rxe, skb, 1, bth_len);
}

/**
 * rxe_net_qp_init() - set up a QP's route cache and skb accounting
 * @qp: the QP
 *
 * Return: 0 or -ENOMEM.
 */
int rxe_net_qp_init(struct rxe_qp *qp)
{
	int err;

	/* Aligned to its power-of-two size, RXE_NET_TX_ALIGN at least. */
	qp->tx = kzalloc(sizeof(*qp->tx), rxe_obj_gfp(qp->is_user));
	if (!qp->tx)
		return -ENOMEM;
	refcount_set(&qp->tx->ref, 1);
	RCU_INIT_POINTER(qp->tx->entry, qp->entry);

	err = dst_cache_init(&qp->dst_cache, rxe_obj_gfp(qp->is_user));
	if (err) {
		kfree(qp->tx);
		qp->tx = NULL;
		return err;
	}
	atomic_inc(&rxe_net_tx_live);
	return 0;
}

/**
 * rxe_net_qp_detach() - stop the QP's skbs from waking it
 * @qp: a QP being destroyed
 *
 * A destructor that found the QP before may still be scheduling its
 * tasks, with a reference that the caller's drain waits for.
 */
void rxe_net_qp_detach(struct rxe_qp *qp)
{
	RCU_INIT_POINTER(qp->tx->entry, NULL);
}

/**
 * rxe_net_qp_cleanup() - free a QP's route cache, let go of its skbs
 * @qp: the QP, detached
 *
 * Its skbs still in the stack keep their accounting, and with it the
 * module, until the stack frees them.
 */
void rxe_net_qp_cleanup(struct rxe_qp *qp)
{
	struct rxe_net_tx *tx = qp->tx;

	dst_cache_destroy(&qp->dst_cache);
	rxe_net_qp_detach(qp);
	/* rxe_net_qp_inflight() may be looking, under RCU. */
	WRITE_ONCE(qp->tx, NULL);
	__module_get(THIS_MODULE);
	rxe_net_tx_put(tx);
}

/**
 * rxe_net_qp_inflight() - the QP's skbs in the network stack
 * @qp: the QP; it may be being destroyed (rdma res show races with that)
 *
 * Return: their number, 0 once the QP let go of them.
 */
u32 rxe_net_qp_inflight(const struct rxe_qp *qp)
{
	struct rxe_net_tx *tx;
	u32 n = 0;

	rcu_read_lock();
	tx = READ_ONCE(qp->tx);
	if (tx)
		n = atomic_read(&tx->inflight);
	rcu_read_unlock();
	return n;
}

/**
 * rxe_net_qp_reroute() - forget a QP's cached route after its path changed
 * @qp: the QP
 */
void rxe_net_qp_reroute(struct rxe_qp *qp)
{
	dst_cache_reset(&qp->dst_cache);
}

static struct socket *rxe_net_udp_open(int family)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = rxe_net_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(RXE_ROCE_V2_PORT),
		.ipv6_v6only = family == AF_INET6,
	};
	struct socket *sock;
	int one = 1;
	int err;

	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tcfg);
	/*
	 * A tunnel socket does not loop IPv4 multicast back to this host
	 * (IPv6 it does). Our QPs attached to a group take what a QP of
	 * this host sends to it, over either family (rxe_mcast.c).
	 */
	if (family == AF_INET) {
		err = sock->ops->setsockopt(sock, SOL_IP, IP_MULTICAST_LOOP,
					    KERNEL_SOCKPTR(&one), sizeof(one));
		if (err) {
			udp_tunnel_sock_release(sock);
			return ERR_PTR(err);
		}
	}
	return sock;
}

/*
 * A host without IPv6 runs on IPv4 alone. The port being taken means
 * another RoCE driver (the in-tree rdma_rxe) is loaded: say so.
 */

/**
 * rxe_net_module_init() - open the RoCEv2 UDP sockets
 *
 * Return: 0 or a negative errno.
 */
int rxe_net_module_init(void)
{
	struct socket *sock;

	rxe_net_pools_create();
	sock = rxe_net_udp_open(AF_INET);
	if (IS_ERR(sock)) {
		pr_err("cannot bind UDP port %d (%ld): is another RoCE driver loaded?\n",
		       RXE_ROCE_V2_PORT, PTR_ERR(sock));
		rxe_net_pools_destroy();
		return PTR_ERR(sock);
	}
	rxe_net_sock4 = sock;

	sock = rxe_net_udp_open(AF_INET6);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) != -EAFNOSUPPORT) {
			pr_err("cannot bind UDP port %d over IPv6 (%ld)\n",
			       RXE_ROCE_V2_PORT, PTR_ERR(sock));
			udp_tunnel_sock_release(rxe_net_sock4);
			rxe_net_sock4 = NULL;
			rxe_net_pools_destroy();
			return PTR_ERR(sock);
		}
		pr_info("IPv6 is disabled: RoCEv2 over IPv4 only\n");
		sock = NULL;
	}
	rxe_net_sock6 = sock;
	return 0;
}

/**
 * rxe_net_module_exit() - close the RoCEv2 UDP sockets
 */
void rxe_net_module_exit(void)
{
	/*
	 * Every device is gone, but skbs of destroyed QPs may still be in a
	 * netdev's queues, with our destructor: wait for them, then for the
	 * RCU callbacks that free their accounting to return.
	 */
	while (!wait_var_event_timeout(&rxe_net_tx_live,
				       !atomic_read(&rxe_net_tx_live), 60 * HZ))
		pr_err("waiting for %d QPs' packets to leave the network stack\n",
		       atomic_read(&rxe_net_tx_live));
	rcu_barrier();
	if (rxe_net_sock6)
		udp_tunnel_sock_release(rxe_net_sock6);
	udp_tunnel_sock_release(rxe_net_sock4);
	rxe_net_sock6 = NULL;
	rxe_net_sock4 = NULL;
	/* Pages of skbs still held (a looped-back one) return to it later. */
	rxe_net_pools_destroy();
}
