# SPDX-License-Identifier: GPL-2.0
"""Memory windows from userspace, through rdma-core's unchanged rxe
provider (pyverbs), on two connected RC QPs of one device: QP A writes and
reads through the windows QP B binds over B's memory.

Type 1 (ibv_bind_mw): bind, access inside the window, and the rkey checks:
past its end, without the right, after an unbind. Type 2 (IBV_WR_BIND_MW):
bind, access, LOCAL_INV and remote invalidation (SEND with invalidate), each
followed by an access that must fail; a bind over an MR without MW_BIND.
A failed access ends with IBV_WC_REM_ACCESS_ERR at A, which moves its QP to
error, so each such case runs on a new pair.

usage: windows.py [DEV]
"""

import sys

from rxelib import (ACCESS, MR, SGE, Pair, SendWR, check, e, finish,
                    status_name)
from pyverbs.mr import MW, MWBind, MWBindInfo
from pyverbs.wr import RecvWR

DEV = sys.argv[1] if len(sys.argv) > 1 else "rxe0"
SIZE = 16384
WIN_OFF, WIN_LEN = 4096, 4096


class Windows(Pair):
    """A pair, with a source MR on A and a target MR on B that windows may
    be bound over (MW_BIND unless told otherwise)."""

    def __init__(self, mw_bind=True):
        super().__init__(dev=DEV)
        self.src = MR(self.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        self.dst = MR(self.pd, SIZE,
                      ACCESS | (e.IBV_ACCESS_MW_BIND if mw_bind else 0))
        self.win = self.dst.buf + WIN_OFF
        self.mws = []

    def mw(self, mw_type):
        """A new window of the pair's PD."""
        self.mws.append(MW(self.pd, mw_type))
        return self.mws[-1]

    def release(self):
        """Windows first: an MR with windows bound is busy."""
        for mw in self.mws:
            mw.close()
        self.ctx.close()

    def done(self, what, wr_id):
        """Wait for the completion of wr_id; check it succeeded."""
        wc = self.poll_one()
        ok = wc is not None and wc.wr_id == wr_id and \
            wc.status == e.IBV_WC_SUCCESS
        return check(what, ok, status_name(wc))

    def bind1(self, mw, access, length=WIN_LEN):
        """Bind a type 1 window over the window range of dst (ibv_bind_mw);
        length 0 unbinds it."""
        info = MWBindInfo(self.dst, self.win if length else 0, length,
                          access if length else 0)
        self.b.bind_mw(mw, MWBind(info, e.IBV_SEND_SIGNALED))
        return self.done("type 1: ibv_bind_mw(length %d) completes" % length,
                         0)

    def post_bind2(self, mw, access):
        """Bind a type 2 window with a work request: the completion and
        the rkey the window gets."""
        wr = SendWR(wr_id=0xB1, opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, MWBindInfo(self.dst, self.win, WIN_LEN, access))
        self.b.post_send(wr)
        return self.poll_one(), wr.rkey

    def bind2(self, mw, access):
        """Bind a type 2 window; its new rkey, or None."""
        wc, rkey = self.post_bind2(mw, access)
        ok = check("type 2: IBV_WR_BIND_MW completes",
                   wc is not None and wc.status == e.IBV_WC_SUCCESS,
                   status_name(wc))
        return rkey if ok else None

    def access(self, opcode, rkey, off, length, fill=0x5A):
        """A posts an RDMA WRITE or READ of length bytes at window offset
        off through rkey; the completion's status, or None."""
        self.src.write(bytes([fill]) * length, length, 0)
        wr = SendWR(wr_id=0xA1, opcode=opcode, num_sge=1,
                    sg=[SGE(self.src.buf, length, self.src.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(rkey, self.win + off)
        self.a.post_send(wr)
        wc = self.poll_one()
        return None if wc is None else wc.status

    def write_ok(self, what, rkey, off=100, length=64, fill=0x5A):
        """An RDMA WRITE through rkey succeeds and lands in dst."""
        status = self.access(e.IBV_WR_RDMA_WRITE, rkey, off, length, fill)
        got = self.dst.read(length, WIN_OFF + off)
        return check(what, status == e.IBV_WC_SUCCESS and
                     got == bytes([fill]) * length,
                     "status %s" % status)

    def denied(self, what, opcode, rkey, off=100, length=64):
        """The access through rkey fails with a remote access error, and
        the memory behind the window is not touched."""
        before = self.dst.read(SIZE, 0)
        status = self.access(opcode, rkey, off, length, fill=0xEE)
        return check(what, status == e.IBV_WC_REM_ACCESS_ERR and
                     self.dst.read(SIZE, 0) == before,
                     "status %s, want REM_ACCESS_ERR and no byte changed" %
                     status)


def type1():
    rw = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_1)
    if p.bind1(mw, rw):
        p.write_ok("type 1: RDMA WRITE inside the window", mw.rkey)
        status = p.access(e.IBV_WR_RDMA_READ, mw.rkey, 0, WIN_LEN)
        check("type 1: RDMA READ of the whole window",
              status == e.IBV_WC_SUCCESS, "status %s" % status)
        old = mw.rkey
        if p.bind1(mw, rw):
            check("type 1: binding again changes the rkey", mw.rkey != old,
                  "rkey 0x%x both times" % old)
            p.denied("type 1: the rkey of the previous binding is refused",
                     e.IBV_WR_RDMA_WRITE, old)
    p.release()

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_1)
    if p.bind1(mw, rw):
        p.denied("type 1: a WRITE running past the window's end is refused",
                 e.IBV_WR_RDMA_WRITE, mw.rkey, WIN_LEN - 32, 64)
    p.release()

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_1)
    if p.bind1(mw, e.IBV_ACCESS_REMOTE_READ):
        status = p.access(e.IBV_WR_RDMA_READ, mw.rkey, 0, 64)
        check("type 1, read-only window: RDMA READ works",
              status == e.IBV_WC_SUCCESS, "status %s" % status)
        p.denied("type 1, read-only window: RDMA WRITE is refused",
                 e.IBV_WR_RDMA_WRITE, mw.rkey)
    p.release()

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_1)
    if p.bind1(mw, rw):
        old = mw.rkey
        if p.bind1(mw, 0, length=0):
            p.denied("type 1: after an unbind the window is refused",
                     e.IBV_WR_RDMA_WRITE, old)
    p.release()


def type2():
    rw = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_2)
    rkey = p.bind2(mw, rw)
    if rkey is not None:
        p.write_ok("type 2: RDMA WRITE inside the window", rkey)
        wc, _ = p.post_bind2(mw, rw)
        check("type 2: a bound window is not bound again (MW_BIND_ERR)",
              wc is not None and wc.status == e.IBV_WC_MW_BIND_ERR,
              status_name(wc))
    p.release()

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_2)
    rkey = p.bind2(mw, rw)
    if rkey is not None:
        wr = SendWR(wr_id=0xC1, opcode=e.IBV_WR_LOCAL_INV,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.imm_data = rkey      # the invalidate_rkey of the same union
        p.b.post_send(wr)
        if p.done("type 2: LOCAL_INV of the window completes", 0xC1):
            p.denied("type 2: after LOCAL_INV the window is refused",
                     e.IBV_WR_RDMA_WRITE, rkey)
    p.release()

    p = Windows()
    mw = p.mw(e.IBV_MW_TYPE_2)
    rkey = p.bind2(mw, rw)
    if rkey is not None:
        p.b.post_recv(RecvWR(wr_id=0xD1, num_sge=1,
                             sg=[SGE(p.dst.buf, 64, p.dst.lkey)]))
        wr = SendWR(wr_id=0xD2, opcode=e.IBV_WR_SEND_WITH_INV, num_sge=1,
                    sg=[SGE(p.src.buf, 16, p.src.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.imm_data = rkey
        p.a.post_send(wr)
        wcs = {wc.wr_id: wc for wc in p.poll(2)}
        recv, send = wcs.get(0xD1), wcs.get(0xD2)
        check("type 2: SEND with invalidate completes on both sides",
              recv is not None and send is not None and
              recv.status == e.IBV_WC_SUCCESS and
              send.status == e.IBV_WC_SUCCESS,
              "recv %s, send %s" % (status_name(recv), status_name(send)))
        if recv is not None:
            check("type 2: the receive reports the invalidation "
                  "(IBV_WC_WITH_INV, the rkey)",
                  recv.wc_flags & e.IBV_WC_WITH_INV and
                  recv.imm_data == rkey,
                  "wc_flags 0x%x, invalidated 0x%x, want 0x%x" %
                  (recv.wc_flags, recv.imm_data, rkey))
        p.denied("type 2: after a remote invalidation the window is refused",
                 e.IBV_WR_RDMA_WRITE, rkey)
    p.release()

    p = Windows(mw_bind=False)
    wc, _ = p.post_bind2(p.mw(e.IBV_MW_TYPE_2), rw)
    check("type 2: a bind over an MR without MW_BIND fails (MW_BIND_ERR)",
          wc is not None and wc.status == e.IBV_WC_MW_BIND_ERR,
          status_name(wc))


def main():
    type1()
    type2()
    finish()


if __name__ == "__main__":
    main()
