// SPDX-License-Identifier: GPL-2.0
/*
 * The invariant CRC (IBA vol 1, 7.8.1, and the RoCEv2 annex A17.3.3).
 *
 * The ICRC is the CRC-32 of Ethernet over the packet from the IP header
 * to the end of the pad, preceded by 8 bytes of 1s that stand for the LRH
 * RoCE does not carry. Fields a router may change are taken as all 1s:
 * IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and
 * hop limit; the UDP checksum; the BTH byte with FECN, BECN and reserved
 * bits. It goes on the wire least significant byte first, like the FCS.
 */

#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/kmod.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/jump_label.h>
#include <crypto/hash.h>

#include "rxe_icrc.h"
#include "rxe_hdr.h"

/* crc32_le(~0, 8 bytes of 0xff): the CRC state after the masked LRH. */
#define RXE_ICRC_SEED		0xdebb20e3

/*
 * The CRC engine. The library's crc32_le() is table-driven on x86 up to
 * 6.13, where the crypto API's "crc32" is carry-less multiplication
 * (crc32-pclmul) several times as fast on a real CPU; under emulation
 * (TCG) the table wins. So the engine is chosen at load by timing both
 * on packet-sized pieces (module parameter icrc: auto), or forced
 * (crc32_le, crypto). Set once in rxe_icrc_module_init(), before any
 * device exists, and read-only after.
 */
enum rxe_icrc_engine {
	RXE_ICRC_AUTO,
	RXE_ICRC_LIB,
	RXE_ICRC_CRYPTO,
};

static enum rxe_icrc_engine rxe_icrc_want = RXE_ICRC_AUTO;
static struct crypto_shash *rxe_icrc_tfm;
static DEFINE_STATIC_KEY_FALSE(rxe_icrc_crypto);

/* A crypto CRC-32 keeps its state in a u32; room for that and no more. */
#define RXE_ICRC_DESC_SIZE	(sizeof(struct shash_desc) + sizeof(u32))

/* crc32_le(@crc, @p, @len) by the crypto API's CRC-32. */
static u32 rxe_icrc_crypto_le(u32 crc, const void *p, unsigned int len)
{
	char buf[RXE_ICRC_DESC_SIZE] __aligned(__alignof__(struct shash_desc));
	struct shash_desc *desc = (struct shash_desc *)buf;

	desc->tfm = rxe_icrc_tfm;
	crypto_shash_import(desc, &crc);
	crypto_shash_update(desc, p, len);
	crypto_shash_export(desc, &crc);
	return crc;
}

/* Go on with @crc over a piece of payload, by the engine chosen at load. */
static u32 rxe_icrc_update(u32 crc, const void *p, unsigned int len)
{
	if (static_branch_unlikely(&rxe_icrc_crypto))
		return rxe_icrc_crypto_le(crc, p, len);
	return crc32_le(crc, p, len);
}

/* The masked copy of IP, UDP and BTH headers: IPv4 with options at most. */
#define RXE_ICRC_PSEUDO_MAX	(60 + sizeof(struct udphdr) + sizeof(struct rxe_bth))

/*
 * Go on with @crc over @len bytes of @skb from @from, in the order they
 * have on the wire: the linear area, then each page fragment (and any
 * frag_list). A CRC, unlike the Internet checksum, cannot be summed in
 * pieces and added up cheaply (crc32_le_combine() is a polynomial
 * multiplication per piece), so the pieces are fed to one running CRC.
 */
static u32 rxe_icrc_walk(const struct sk_buff *skb, unsigned int from,
			 unsigned int len, u32 crc)
{
	struct skb_seq_state st;
	unsigned int pos = 0, n;
	const u8 *data;

	/* Reads only; the API takes a writable skb for its cursor. */
	skb_prepare_seq_read((struct sk_buff *)skb, from, from + len, &st);
	while (pos < len) {
		n = skb_seq_read(pos, &data, &st);
		if (!n)
			break;
		/* A block may run past the end asked for. */
		n = min(n, len - pos);
		crc = rxe_icrc_update(crc, data, n);
		pos += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/* Copy the IP and UDP headers with their variant fields set to 1s. */
static unsigned int rxe_icrc_mask_ip_udp(const struct sk_buff *skb, u8 *buf)
{
	const u8 *nh = skb_network_header(skb);
	unsigned int iplen;
	struct udphdr *udp;

	if (ip_hdr(skb)->version == 4) {
		struct iphdr *ip = (struct iphdr *)buf;

		iplen = ip_hdr(skb)->ihl * 4;
		memcpy(buf, nh, iplen);
		ip->tos = 0xff;
		ip->ttl = 0xff;
		ip->check = (__force __sum16)0xffff;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;

		iplen = sizeof(*ip6);
		memcpy(buf, nh, iplen);
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	}

	udp = (struct udphdr *)(buf + iplen);
	memcpy(udp, skb_transport_header(skb), sizeof(*udp));
	udp->check = (__force __sum16)0xffff;
	return iplen + sizeof(*udp);
}

/**
 * rxe_icrc_compute() - the ICRC of a RoCEv2 packet
 * @skb: the packet; its network and transport headers are set and lie in
 *	the linear area, with the UDP header right after the IP header
 * @bth_off: offset of the BTH from @skb->data; the BTH is linear
 * @len: bytes from the BTH to the end of the pad, without the ICRC
 *
 * The payload may sit in page fragments.
 *
 * Return: the ICRC as it goes on the wire.
 */
__le32 rxe_icrc_compute(const struct sk_buff *skb, unsigned int bth_off,
			unsigned int len)
{
	u8 buf[RXE_ICRC_PSEUDO_MAX];
	unsigned int n;
	u32 crc;

	n = rxe_icrc_mask_ip_udp(skb, buf);
	memcpy(buf + n, skb->data + bth_off, sizeof(struct rxe_bth));
	/* The byte holding FECN, BECN and the six reserved bits. */
	buf[n + offsetof(struct rxe_bth, qpn)] = 0xff;
	n += sizeof(struct rxe_bth);

	/* Some 50 bytes: below what carry-less multiplication speeds up. */
	crc = crc32_le(RXE_ICRC_SEED, buf, n);
	crc = rxe_icrc_walk(skb, bth_off + sizeof(struct rxe_bth),
			    len - sizeof(struct rxe_bth), crc);
	return cpu_to_le32(~crc);
}

/* Timing the engines: pieces of a RoCE packet's payload at a 1 KiB MTU. */
#define RXE_ICRC_BENCH_LEN	1024
#define RXE_ICRC_BENCH_PIECES	16
#define RXE_ICRC_BENCH_ROUNDS	5

/* Nanoseconds for the pieces, best of the rounds. */
static u64 rxe_icrc_time(bool crypto, const u8 *buf)
{
	u64 best = U64_MAX, t;
	unsigned int r, i;
	u32 crc = RXE_ICRC_SEED;

	for (r = 0; r < RXE_ICRC_BENCH_ROUNDS; r++) {
		preempt_disable();
		t = ktime_get_ns();
		for (i = 0; i < RXE_ICRC_BENCH_PIECES; i++) {
			/* Odd offsets: payloads follow 54 or 74 bytes of headers. */
			const u8 *p = buf + (i & 7) * 2 + 1;

			crc = crypto ? rxe_icrc_crypto_le(crc, p, RXE_ICRC_BENCH_LEN) :
				       crc32_le(crc, p, RXE_ICRC_BENCH_LEN);
		}
		t = ktime_get_ns() - t;
		preempt_enable();
		best = min(best, t);
	}
	/* Keep the loop from being optimised away. */
	OPTIMIZER_HIDE_VAR(crc);
	return best;
}

/*
 * Does the crypto engine give crc32_le()'s answers, carried from piece to
 * piece through the state it imports and exports? Lengths on both sides
 * of where carry-less multiplication starts, at odd addresses.
 */
static bool rxe_icrc_crypto_agrees(const u8 *buf)
{
	static const unsigned int lens[] = { 1, 15, 63, 64, 79, 80, 257, 1024, 4095 };
	u32 lib = RXE_ICRC_SEED, cry = RXE_ICRC_SEED;
	unsigned int i, off = 1;

	if (crypto_shash_descsize(rxe_icrc_tfm) != sizeof(u32) ||
	    crypto_shash_statesize(rxe_icrc_tfm) != sizeof(u32))
		return false;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		lib = crc32_le(lib, buf + off, lens[i]);
		cry = rxe_icrc_crypto_le(cry, buf + off, lens[i]);
		if (lib != cry)
			return false;
		off = (off + 3) & 15;
	}
	return true;
}

static const char *rxe_icrc_crypto_name(void)
{
	return crypto_shash_driver_name(rxe_icrc_tfm);
}

/* Time both engines on @buf and keep the crypto one if it is faster. */
static bool rxe_icrc_pick_crypto(const u8 *buf)
{
	u64 lib, cry;

	lib = rxe_icrc_time(false, buf);
	cry = rxe_icrc_time(true, buf);
	pr_info("icrc: crc32_le %llu ns, %s %llu ns per %u KiB\n", lib,
		rxe_icrc_crypto_name(), cry,
		RXE_ICRC_BENCH_LEN * RXE_ICRC_BENCH_PIECES / 1024);
	return cry < lib;
}

/**
 * rxe_icrc_module_init() - choose the CRC engine
 *
 * With icrc=auto the crypto API's CRC-32 is used when it gives the
 * library's answers and is faster here; icrc=crypto uses it whenever it
 * gives the right answers; crc32_le, or any failure, keeps the library.
 * Never fails the load.
 */
void rxe_icrc_module_init(void)
{
	struct crypto_shash *tfm;
	bool use = false;
	u8 *buf;

	if (rxe_icrc_want == RXE_ICRC_LIB)
		return;

	/* Every module that offers "crc32", the accelerated one among them. */
	request_module("crypto-crc32");
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("icrc: no crypto crc32 (%ld), using crc32_le\n",
			PTR_ERR(tfm));
		return;
	}
	rxe_icrc_tfm = tfm;

	buf = kmalloc(RXE_ICRC_BENCH_LEN * 4 + 32, GFP_KERNEL);
	if (buf) {
		get_random_bytes(buf, RXE_ICRC_BENCH_LEN * 4 + 32);
		if (!rxe_icrc_crypto_agrees(buf))
			pr_warn("icrc: %s disagrees with crc32_le, not used\n",
				rxe_icrc_crypto_name());
		else if (rxe_icrc_want == RXE_ICRC_CRYPTO)
			use = true;
		else
			use = rxe_icrc_pick_crypto(buf);
		kfree(buf);
	}

	if (use) {
		static_branch_enable(&rxe_icrc_crypto);
		pr_info("icrc: using %s\n", rxe_icrc_crypto_name());
	} else {
		rxe_icrc_tfm = NULL;
		crypto_free_shash(tfm);
		pr_info("icrc: using crc32_le\n");
	}
}

/**
 * rxe_icrc_module_exit() - release the crypto engine, if one was chosen
 *
 * Context: after the last device is gone; no packet is being summed.
 */
void rxe_icrc_module_exit(void)
{
	if (!rxe_icrc_tfm)
		return;
	static_branch_disable(&rxe_icrc_crypto);
	crypto_free_shash(rxe_icrc_tfm);
	rxe_icrc_tfm = NULL;
}

static const char * const rxe_icrc_engine_names[] = {
	[RXE_ICRC_AUTO] = "auto",
	[RXE_ICRC_LIB] = "crc32_le",
	[RXE_ICRC_CRYPTO] = "crypto",
};

static int rxe_icrc_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(rxe_icrc_engine_names, val);

	if (i < 0)
		return i;
	rxe_icrc_want = i;
	return 0;
}

/* Reads back the engine in use, not the one asked for. */
static int rxe_icrc_param_get(char *buf, const struct kernel_param *kp)
{
	if (static_key_enabled(&rxe_icrc_crypto))
		return sysfs_emit(buf, "crypto %s\n", rxe_icrc_crypto_name());
	return sysfs_emit(buf, "crc32_le\n");
}

static const struct kernel_param_ops rxe_icrc_param_ops = {
	.set = rxe_icrc_param_set,
	.get = rxe_icrc_param_get,
};

module_param_cb(icrc, &rxe_icrc_param_ops, NULL, 0444);
MODULE_PARM_DESC(icrc,
		 "ICRC engine: auto (the faster, timed at load), crc32_le, crypto; reads back the one in use");

#ifdef DEBUG
/*
 * The seed must be the CRC state after 8 bytes of 1s, and a CRC carried on
 * from one piece to the next must give the CRC of the whole, since packets
 * with page fragments are summed piece by piece.
 */

/**
 * rxe_icrc_selftest() - known answers for the CRC arithmetic
 *
 * Return: true when every check passes.
 */
bool rxe_icrc_selftest(void)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	/* "123456789": the check value of CRC-32 is 0xcbf43926. */
	static const u8 check[] = "123456789";
	u32 whole, half;
	bool ok = true;

	if (crc32_le(~0U, lrh, sizeof(lrh)) != RXE_ICRC_SEED) {
		pr_err("icrc: seed mismatch\n");
		ok = false;
	}
	if (~crc32_le(~0U, check, 9) != 0xcbf43926) {
		pr_err("icrc: CRC-32 check value mismatch\n");
		ok = false;
	}
	whole = crc32_le(RXE_ICRC_SEED, check, 9);
	half = crc32_le(RXE_ICRC_SEED, check, 4);
	if (crc32_le(half, check + 4, 5) != whole) {
		pr_err("icrc: piecewise mismatch\n");
		ok = false;
	}
	pr_info("icrc self-tests: %s\n", ok ? "pass" : "FAIL");
	return ok;
}
#endif /* DEBUG */
