#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The ICRC of every captured RoCEv2 packet, checked by two independent
implementations (41-wire-icrc):

  icrc_check.py PCAP MIN_PACKETS [ours|theirs]

roce.icrc() is ours, written from the RoCEv2 annex A17.3.3; scapy's
(scapy.contrib.roce, IPv4 only) is the second opinion. Before judging the
capture, the checker proves it can tell: on real packets of both IP
versions, changing any covered byte must change the ICRC and changing a
masked field (what routers rewrite) must not.
"""

import sys
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402
from tap import check, finish  # noqa: E402


def masked_offsets(ip):
    """Byte offsets (from the IP header) of the fields the ICRC treats as
    1s, and the IPv4 header checksum."""
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 15) * 4
        out = {1, 8, 10, 11}        # TOS, TTL, header checksum
    else:
        ihl = 40
        out = {1, 2, 3, 7}          # traffic class, flow label, hop limit
    out |= {ihl + 6, ihl + 7}       # UDP checksum
    out.add(ihl + 8 + 4)            # BTH: FECN, BECN, resv6a
    return out


def self_test(pkts):
    """The checker must notice a change of any covered byte and ignore
    the masked fields."""
    for ver in (4, 6):
        # Prefer a packet whose masked fields are not 0 anyway.
        sample = sorted((p for p in pkts if p.ipver == ver and p.paylen),
                        key=lambda p: (p.tos == 0, p.flow == 0))
        if not check("a captured IPv%d packet with payload to test the "
                     "checker on" % ver, sample):
            continue
        p = sample[0]
        ip = bytearray(p.ip)
        good = roce.icrc(ip)
        masked = masked_offsets(ip)
        missed, noticed = [], []
        for off in range(len(ip) - 4):
            mod = bytearray(ip)
            if ver == 6 and off == 0:
                mod[0] ^= 0x0F      # the traffic class half of byte 0
                changed = roce.icrc(mod) != good
                if changed:
                    noticed.append(off)
                mod[0] ^= 0x0F
                mod[0] ^= 0x10      # a version bit: covered
                if roce.icrc(mod) == good:
                    missed.append(off)
                continue
            mod[off] ^= 0xA5
            changed = roce.icrc(mod) != good
            if off in masked and changed:
                noticed.append(off)
            elif off not in masked and not changed:
                missed.append(off)
        check("IPv%d: the checker notices a change of each of the %d covered "
              "bytes" % (ver, len(ip) - 4 - len(masked)), not missed,
              "missed offsets %s" % missed)
        check("IPv%d: the checker ignores the masked fields (TOS/traffic "
              "class, TTL/hop limit, flow label, checksums, FECN/BECN)" % ver,
              not noticed, "noticed offsets %s" % noticed)
        bad = bytearray(ip)
        bad[-1] ^= 1
        check("IPv%d: a packet with one ICRC bit flipped fails the check" % ver,
              roce.icrc(bad) != bytes(bad[-4:]))


def scapy_icrc(p):
    """scapy's ICRC of an IPv4 RoCEv2 packet (it has no IPv6 one)."""
    from scapy.layers.inet import IP
    from scapy.contrib.roce import BTH
    from scapy.compat import raw
    pkt = IP(p.ip)
    del pkt[BTH].icrc
    return raw(pkt)[-4:]


def main():
    pcap, want = sys.argv[1], int(sys.argv[2])
    impl = sys.argv[3] if len(sys.argv) > 3 else "ours"
    pkts = roce.roce_frames(roce.read_pcap(pcap))
    v4 = [p for p in pkts if p.ipver == 4]
    v6 = [p for p in pkts if p.ipver == 6]
    ops = {p.name for p in pkts}
    check("the capture holds at least %d RoCEv2 packets (%d: %d IPv4, "
          "%d IPv6, %d opcodes)" % (want, len(pkts), len(v4), len(v6), len(ops)),
          len(pkts) >= want and v4 and v6)
    print("# opcodes: " + ", ".join(sorted(ops)))
    srcs = {p.src for p in pkts}
    check("packets of both guests were captured (%s)" % ", ".join(sorted(srcs)),
          len(srcs) >= 4)
    self_test(pkts)

    bad = ["%d %s %s->%s psn %d" % (i + 1, p.name, p.src, p.dst, p.psn)
           for i, p in enumerate(pkts) if not p.icrc_ok]
    check("every packet's ICRC is right by roce.py (%d packets)" % len(pkts),
          not bad, "%d wrong: %s" % (len(bad), "; ".join(bad[:8])))
    for ver, sub in ((4, v4), (6, v6)):
        for src in sorted({p.src for p in sub}):
            n = sum(1 for p in sub if p.src == src)
            ok = sum(1 for p in sub if p.src == src and p.icrc_ok)
            print("#   IPv%d from %s: %d of %d right" % (ver, src, ok, n))
    for ver, sub in ((4, v4), (6, v6)):
        check("IPv%d packets with a traffic class were checked (%s)" %
              (ver, sorted(hex(t) for t in {p.tos for p in sub})),
              any(p.tos for p in sub))
    if impl == "theirs" and not any(p.flow for p in v6):
        print("# the in-tree rxe sends no flow label: none to check")
    else:
        check("IPv6 packets with a flow label were checked (%d)" %
              sum(1 for p in v6 if p.flow), any(p.flow for p in v6))
    big = [p for p in pkts if p.paylen and p.paylen >= 1000]
    check("multi-packet messages (full MTU payloads) were checked (%d)" %
          len(big), big)
    pads = {p.pad for p in pkts if p.paylen}
    check("packets with every pad count 0-3 were checked (%s)" %
          sorted(pads), pads == {0, 1, 2, 3})

    try:
        disagree = [i + 1 for i, p in enumerate(pkts)
                    if p.ipver == 4 and scapy_icrc(p) != p.ip[-4:]]
        check("scapy agrees on every IPv4 packet's ICRC (%d packets)" % len(v4),
              not disagree, "frames %s" % disagree[:10])
        sample = v4[0] if v4 else None
        if sample:
            mod = bytearray(sample.ip)
            mod[-10] ^= 0xFF
            check("scapy and roce.py also agree on a corrupted packet",
                  scapy_icrc(roce.Pkt(b"\0" * 12 + b"\x08\x00" + bytes(mod))) ==
                  roce.icrc(mod))
    except ImportError as ex:
        check("scapy is there for a second opinion", False, str(ex))

    finish()


if __name__ == "__main__":
    main()
