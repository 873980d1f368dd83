#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The multicast datagrams of a capture, as the wire carries them
(28-multicast):

  mcast_wire.py PCAP GROUP SOURCE COUNT QKEY [TSHARK_OPTION...]

Every RoCEv2 frame from SOURCE to the IPv4 group GROUP must be a UD
SEND_ONLY_WITH_IMMEDIATE (what mckey sends) to the multicast QPN 0xFFFFFF
in a frame to the group's multicast MAC (01:00:5e and the group's low 23
bits), with the default P_Key, Q_Key QKEY and a right ICRC (roce.py), and
tshark's InfiniBand dissector must read each one the same way, with no
Malformed or Error mark. At least COUNT of them.
"""

import ipaddress
import subprocess
import sys
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402
from tap import check, finish  # noqa: E402


def group_mac(group):
    low = int(ipaddress.IPv4Address(group)) & 0x7FFFFF
    return bytes([0x01, 0x00, 0x5E]) + low.to_bytes(3, "big")


def main():
    pcap, group, source, want = sys.argv[1:5]
    qkey, tshark_opts = int(sys.argv[5], 0), sys.argv[6:]
    frames = roce.read_pcap(pcap)
    ours = []
    for i, fr in enumerate(frames):
        p = roce.roce_frames([fr])
        if p and p[0].src == source and p[0].dst == group:
            ours.append((i + 1, fr[:6], p[0]))
    check("at least %s datagrams from %s to %s captured (%d)" %
          (want, source, group, len(ours)), len(ours) >= int(want))

    def bad(cond):
        return [n for n, mac, p in ours if not cond(mac, p)]

    ud_send = roce.OP["UD SEND_ONLY_WITH_IMMEDIATE"]
    for what, cond in (
            ("in a frame to the group's MAC %s" % group_mac(group).hex(":"),
             lambda mac, p: mac == group_mac(group)),
            ("a UD SEND_ONLY_WITH_IMMEDIATE (mckey's)",
             lambda mac, p: p.opcode == ud_send),
            ("to the multicast QPN 0xFFFFFF",
             lambda mac, p: p.qpn == roce.MCAST_QPN),
            ("with the default P_Key", lambda mac, p: p.pkey == 0xFFFF),
            ("with Q_Key %#x" % qkey,
             lambda mac, p: p.hdrs.get("DETH", {}).get("qkey") == qkey),
            ("with a right ICRC and IPv4 header checksum",
             lambda mac, p: p.icrc_ok and p.ip_ok),
            ("well formed by roce.py", lambda mac, p: not p.problems)):
        wrong = bad(cond)
        check("every datagram to the group is " + what, not wrong,
              "frames %s" % wrong[:10])

    # One tshark run: under TCG its start alone takes seconds. A frame
    # Wireshark marks has the _ws.malformed field, or an expert item of
    # severity error (PI_ERROR, 0x800000) among _ws.expert.severity's.
    out = subprocess.run(["tshark", "-r", pcap] + tshark_opts +
                         ["-T", "fields", "-e", "frame.number",
                          "-e", "infiniband.bth.opcode",
                          "-e", "infiniband.bth.destqp",
                          "-e", "infiniband.deth.q_key",
                          "-e", "_ws.malformed",
                          "-e", "_ws.expert.severity"],
                         capture_output=True, text=True, check=False)
    err, rows, marked = "", {}, []
    if out.returncode:
        err = "tshark exit %d: %s" % (out.returncode,
                                      out.stderr.strip()[-300:])
    for line in out.stdout.splitlines() if not err else []:
        cols = (line.split("\t") + [""] * 6)[:6]
        rows[int(cols[0])] = cols[1:4]
        if cols[4] or str(0x800000) in cols[5].split(","):
            marked.append(int(cols[0]))
    check("tshark dissected every datagram to the group",
          not err and all(rows.get(n) for n, _, _ in ours), err)

    def as_int(text):
        try:
            return int(text, 0)
        except ValueError:
            return None

    wrong = [n for n, _, _ in ours
             if [as_int(x) for x in rows.get(n, ["", "", ""])] !=
             [ud_send, roce.MCAST_QPN, qkey]]
    check("tshark reads each as a UD SEND_ONLY_WITH_IMMEDIATE to QP "
          "0xFFFFFF with Q_Key "
          "%#x" % qkey, not wrong,
          "frames %s: %s" % (wrong[:5], [rows.get(n) for n in wrong[:5]]))
    check("tshark marks no frame of the capture Malformed or Error",
          not err and marked == [], err or "frames %s" % marked[:10])
    finish()


if __name__ == "__main__":
    main()
