#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What crossed eth0 in 27-vlan, captured by guest b with a filter that
takes RoCEv2 frames tagged or not:

  vlan_check.py PCAP VID MIN_PACKETS

Every RoCEv2 frame must carry VLAN VID, with a right ICRC (roce.py) and,
over IPv6, a UDP checksum that adds up; the capture must hold at least
MIN_PACKETS of them, of both IP versions and from both guests.
"""

import struct
import sys
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402
from tap import check, finish  # noqa: E402


def vid(frame):
    """The frame's VLAN ID, None when it carries no 802.1Q tag."""
    if struct.unpack(">H", frame[12:14])[0] != 0x8100:
        return None
    return struct.unpack(">H", frame[14:16])[0] & 0xFFF


def main():
    pcap, want_vid, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    frames = roce.read_pcap(pcap)
    pkts, other = [], 0
    for fr in frames:
        p = roce.roce_frames([fr])
        if p:
            pkts.append((vid(fr), p[0]))
        else:
            other += 1
    v4 = [p for _, p in pkts if p.ipver == 4]
    v6 = [p for _, p in pkts if p.ipver == 6]
    srcs = sorted({p.src for _, p in pkts})
    print("# %d frames: %d RoCEv2 (%d IPv4, %d IPv6) from %s" %
          (len(frames), len(pkts), len(v4), len(v6), ", ".join(srcs)))
    check("the capture holds at least %d RoCEv2 frames (%d), IPv4 and "
          "IPv6" % (want, len(pkts)), len(pkts) >= want and v4 and v6)
    check("frames of both guests were captured (%s)" % ", ".join(srcs),
          len(srcs) >= 4)
    check("the capture holds nothing but RoCEv2 frames", not other,
          "%d others" % other)
    wrong = {}
    for v, _ in pkts:
        if v != want_vid:
            wrong[v] = wrong.get(v, 0) + 1
    check("every RoCEv2 frame is tagged VLAN %d" % want_vid, not wrong,
          "frames by VLAN (None: untagged): %s" % wrong)
    bad = ["%s %s->%s psn %d" % (p.name, p.src, p.dst, p.psn)
           for _, p in pkts if not p.icrc_ok]
    check("every ICRC is right (%d frames)" % len(pkts), not bad,
          "%d wrong: %s" % (len(bad), "; ".join(bad[:8])))
    bad6 = ["%s %s->%s psn %d" % (p.name, p.src, p.dst, p.psn)
            for p in v6 if not p.udp6_ok]
    check("every IPv6 UDP checksum adds up (%d frames)" % len(v6), not bad6,
          "%d wrong: %s" % (len(bad6), "; ".join(bad6[:8])))
    finish()


if __name__ == "__main__":
    main()
