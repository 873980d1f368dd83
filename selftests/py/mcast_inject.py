#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Datagrams to an IPv4 multicast group in frames to one host's own MAC, as
a bridge or an access point that turns multicast into unicast delivers them
(28-multicast):

  mcast_inject.py NETDEV PEER_MAC SOURCE GROUP QKEY

Sends, in this order, each a UD SEND_ONLY from SOURCE to GROUP in a frame to
PEER_MAC, with a right ICRC:
  1. to the multicast QPN 0xFFFFFF with a Q_Key other than QKEY: the
     group's QPs must refuse it (drop_qkey_err);
  2. to QPN 0x000011 with QKEY: a datagram to a group is for the multicast
     QPN only (drop_addr_err);
  3. to the multicast QPN with QKEY: the group's QPs must take it.
Payloads are 32 bytes. The receiver judges; this only sends.
"""

import sys
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402

SRC_QPN = 0x11


def ud_send(qpn, qkey, text):
    return roce.ud_send(qpn, qkey, text.ljust(32, b"."), srcqp=SRC_QPN)


def main():
    netdev, peer_mac, source, group, qkey = sys.argv[1:6]
    qkey = int(qkey, 0)
    if len(bytes.fromhex(peer_mac.replace(":", ""))) != 6:
        sys.exit("mcast_inject.py: '%s' is no MAC address" % peer_mac)
    raw = roce.Raw(netdev)
    sends = [ud_send(roce.MCAST_QPN, qkey ^ 1, b"another Q_Key"),
             ud_send(SRC_QPN, qkey, b"to a unicast QPN"),
             ud_send(roce.MCAST_QPN, qkey, b"to the group, one host's frame")]
    for transport in sends:
        raw.send(roce.ether(peer_mac, raw.mac,
                            roce.roce(source, group, transport)))
    print("sent %d datagrams to %s in frames to %s" %
          (len(sends), group, peer_mac))


if __name__ == "__main__":
    main()
