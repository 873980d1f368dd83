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

#include "rxe_icrc.h"
#include "rxe_hdr.h"

/* crc32_le(~0, 8 bytes of 0xff): the CRC state after the masked LRH. */
#define RXE_ICRC_SEED		0xdebb20e3

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
		crc = crc32_le(crc, data, n);
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

	crc = crc32_le(RXE_ICRC_SEED, buf, n);
	crc = rxe_icrc_walk(skb, bth_off + sizeof(struct rxe_bth),
			    len - sizeof(struct rxe_bth), crc);
	return cpu_to_le32(~crc);
}

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
