# SPDX-License-Identifier: GPL-2.0
"""RDMA ATOMIC WRITE across the wire, between two guests whose drivers may
differ (ours and the kernel's in-tree rdma_rxe): the requester guest posts
on an extended RC QP (QPEx, ibv_wr_atomic_write) into an MR of the
responder guest, and reads the responder's memory back over the control
channel (peer.Ctl) to judge what landed there.

The requester checks:
  - 64 ATOMIC WRITEs of distinct values, each of 8 distinct bytes, to
    distinct aligned offsets, posted in one batch with the send PSN 32
    below the 24-bit wrap (the batch crosses it), complete in order with
    success, as IBV_WC_ATOMIC_WRITE with byte_len 8;
  - the responder's MR then holds each value byte for byte at its offset
    (a wrong byte order or a store wider than 8 bytes shows) and no other
    byte of it changed;
  - an RDMA WRITE of a block followed by an ATOMIC WRITE of a flag, 8
    rounds: once the flag's completion is in, the responder's memory holds
    both the block and the flag.
The responder checks that its QP is still in RTS at the end and that
nothing completed on its CQ (neither operation consumes a receive).

usage: mpe_peer.py requester|responder MY_IP PEER_IP [--port N] [--dev DEV]
The responder serves the control channel on --port; the requester
connects to it (and retries until it listens).
"""

import argparse
import base64

import peer as P
from mpe import (COUNT, FILL, SIZE, STRIDE, burst_memory_why,
                 check_burst_wcs, value, wc_text)
from rxelib import check, e, finish, qp_state

REQ_PSN = 0xFFFFE0      # the requester's first PSN: the burst crosses the wrap
RESP_PSN = 0x123456     # the responder's (ACKs and READ RESPONSEs carry ours)
SEND_OPS = e.IBV_QP_EX_WITH_ATOMIC_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE
PORT = 18610            # the control channel (peer.CTL_PORT is 18600)
ROUNDS = 8              # of RDMA WRITE + flag
BLOCK = 16384           # the RDMA WRITE's length: 16 packets at MTU 1024
FLAG_OFF = SIZE - 8     # where the flag goes in the responder's MR


# --- responder ---------------------------------------------------------------

def responder(dev, me, peer, port):
    """Serve the requester: connect a plain RC QP to its QP, expose the MR
    (filled with FILL), and answer its reads of the MR until it is done."""
    ep = P.Endpoint(dev, mr_size=SIZE)
    ep.mr.write(bytes([FILL]) * SIZE, SIZE, 0)
    qp = ep.qp("RC")
    ctl = P.Ctl.serve(port)
    hello = ctl.expect("hello")
    ep.connect(qp, "RC", me, peer, hello["qpn"], REQ_PSN, RESP_PSN)
    ctl.send(msg="hello", qpn=qp.qp_num, addr=ep.mr.buf, rkey=ep.mr.rkey)
    check("responder: RC QP %d connected to the requester's QP %d" % (
        qp.qp_num, hello["qpn"]), True)
    while True:
        msg = ctl.recv()
        if msg.get("msg") == "read":
            data = ep.mr.read(msg["len"], msg["off"])
            ctl.send(msg="mem", data=base64.b64encode(data).decode())
        elif msg.get("msg") == "done":
            break
        else:
            raise RuntimeError("control channel: got %r" % msg)
    state = qp_state(qp)
    check("responder: its QP is still in RTS after the requester's work",
          state == e.IBV_QPS_RTS, "state %d" % state)
    got, wcs = ep.cq.poll(4)
    check("responder: nothing completed on its CQ (ATOMIC WRITE and RDMA "
          "WRITE consume no receive)", got == 0,
          "; ".join(wc_text(wc) for wc in wcs[:got]))
    ctl.send(msg="bye")
    finish()


# --- requester ---------------------------------------------------------------

class Requester:
    """An extended RC QP connected to the responder's, and what it needs to
    read the responder's memory."""

    def __init__(self, dev, me, peer, port):
        self.ep = P.Endpoint(dev, mr_size=SIZE, cqe=2 * COUNT)
        self.qp = self.ep.qp("RC", depth=2 * COUNT, send_ops=SEND_OPS)
        self.ctl = P.Ctl.connect(peer, port)
        self.ctl.send(msg="hello", qpn=self.qp.qp_num)
        srv = self.ctl.expect("hello")
        self.raddr, self.rkey = srv["addr"], srv["rkey"]
        self.ep.connect(self.qp, "RC", me, peer, srv["qpn"], RESP_PSN,
                        REQ_PSN)
        check("requester: extended RC QP %d connected to the responder's "
              "QP %d" % (self.qp.qp_num, srv["qpn"]), True)

    def remote(self, off, length):
        """length bytes of the responder's MR at off, as it holds them."""
        self.ctl.send(msg="read", off=off, len=length)
        return base64.b64decode(self.ctl.expect("mem")["data"])

    def atomic_write(self, wr_id, off, val):
        """Queue one signaled ATOMIC WRITE of val at the responder's MR +
        off (between wr_start and wr_complete)."""
        self.qp.wr_id = wr_id
        self.qp.wr_flags = e.IBV_SEND_SIGNALED
        self.qp.wr_atomic_write(self.rkey, self.raddr + off, val)

    def rdma_write(self, wr_id, off, length):
        """Queue one signaled RDMA WRITE of our MR[0:length] at the
        responder's MR + off."""
        self.qp.wr_id = wr_id
        self.qp.wr_flags = e.IBV_SEND_SIGNALED
        self.qp.wr_rdma_write(self.rkey, self.raddr + off)
        self.qp.wr_set_sge(self.ep.sge(0, length))

    def post(self, *wrs):
        """Post the queued work requests (callables) as one batch."""
        self.qp.wr_start()
        for wr in wrs:
            wr()
        self.qp.wr_complete()

    def close(self):
        self.ctl.send(msg="done")
        self.ctl.expect("bye")
        self.ep.ctx.close()


def burst(r):
    """COUNT ATOMIC WRITEs in one batch, each checked by its completion and
    by the bytes at its offset in the responder's MR; the rest of that MR
    stays as it was."""
    r.post(*[lambda i=i: r.atomic_write(i, i * STRIDE, value(i))
             for i in range(COUNT)])
    wcs = r.ep.poll(COUNT, timeout=60)
    check("%d ATOMIC WRITEs across the wire complete" % COUNT,
          len(wcs) == COUNT, "%d completions%s" % (
              len(wcs), ", last: " + wc_text(wcs[-1]) if wcs else ""))
    check_burst_wcs(wcs)

    got = r.remote(0, SIZE)
    why = burst_memory_why(got)
    check("the responder's MR holds each value byte for byte at its "
          "offset, and nothing else changed", not why, why)


def ordering(r):
    """RDMA WRITE of a block, then ATOMIC WRITE of a flag behind it: when
    the flag's completion is in, the responder holds the block and the
    flag."""
    why = ""
    for n in range(ROUNDS):
        data = bytes([(n * 7 + 1) & 0xFF]) * BLOCK
        flag = value(0x80 + n)
        r.ep.mr.write(data, BLOCK, 0)
        r.post(lambda n=n: r.rdma_write(0x100 + n, 0, BLOCK),
               lambda n=n: r.atomic_write(0x200 + n, FLAG_OFF, flag))
        wcs = r.ep.poll(2, timeout=60)
        flag_wc = wcs[-1] if len(wcs) == 2 else None
        if flag_wc is None or flag_wc.wr_id != 0x200 + n or \
                any(wc.status != e.IBV_WC_SUCCESS for wc in wcs):
            why = "round %d: %s" % (n, ", ".join(wc_text(wc) for wc in wcs)
                                    or "no completion")
            break
        got_data = r.remote(0, BLOCK)
        got_flag = r.remote(FLAG_OFF, 8)
        if got_data != data or got_flag != flag:
            bad = [k for k in range(BLOCK) if got_data[k] != data[k]]
            why = "round %d: at the flag's completion %d bytes of the " \
                  "block are wrong%s, the flag holds %s (want %s)" % (
                      n, len(bad), " from %d on" % bad[0] if bad else "",
                      got_flag.hex(), flag.hex())
            break
    check("RDMA WRITE then ATOMIC WRITE of a flag: at the flag's completion "
          "the responder holds both (%d rounds of %d bytes)" % (
              ROUNDS, BLOCK), not why, why)


def requester(dev, me, peer, port):
    r = Requester(dev, me, peer, port)
    burst(r)
    ordering(r)
    r.close()
    finish()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("role", choices=("requester", "responder"))
    ap.add_argument("me", help="this guest's IP address")
    ap.add_argument("peer", help="the other guest's IP address")
    ap.add_argument("--port", type=int, default=PORT,
                    help="TCP port of the control channel")
    ap.add_argument("--dev", default="rxe0")
    args = ap.parse_args()
    if args.role == "responder":
        responder(args.dev, args.me, args.peer, args.port)
    else:
        requester(args.dev, args.me, args.peer, args.port)


if __name__ == "__main__":
    main()
