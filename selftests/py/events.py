# SPDX-License-Identifier: GPL-2.0
"""Asynchronous QP events through rdma-core's unchanged rxe provider
(pyverbs), on two connected QPs of one device.

Communication established (IBA 11.6.3): a connected QP still in RTR that
takes its first packet raises IBV_EVENT_COMM_EST, once, so that a
consumer whose CM lost the RTU can move on. For RC and UC: QP A stays in
RTR while B, in RTS, sends to it twice; A then goes to RTS, takes a third
SEND and is drained to SQD. The events must come in order COMM_EST, then
SQ_DRAINED: nothing for the second packet in RTR, nor for the one in RTS.
Back to RTS and to SQD again, SQ_DRAINED comes again: one for each drain.
On RC, A may then change its ACK timeout (SQD to SQD), but not while a
SEND it sent still waits for its ACK: that modify fails with EBUSY until
the SQ has drained.

Last WQE Reached (IBA 11.6.3): an RC QP on an SRQ that has taken a WQE
from it raises IBV_EVENT_QP_LAST_WQE_REACHED once when it goes to the
error state: it takes no more. Not again when moved to error a second
time, and not for a QP with its own receive queue. Kernel consumers drain
such QPs by it: ib_drain_qp() (6.11 on) waits a minute for it.

A full CQ (IBA C9-218, C11-37): a completion that finds its CQ full is
lost, the CQ raises IBV_EVENT_CQ_ERR once, and the QP whose completion it
was goes to the error state and raises IBV_EVENT_QP_FATAL, once: for a
send CQ and for a receive CQ. A QP reset and connected again on the same
overflowed CQ raises QP_FATAL again with its first completion, and the CQ
nothing more.

usage: events.py [DEV]
"""

import errno
import os
import sys
import time

from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from rxelib import (CQ, MR, PD, QP, SGE, Context, Pair, QPAttr, QPCap,
                    QPInitAttr, RecvWR, SendWR, check, connect_rc, e,
                    events_until_quiet, finish, next_event, qp_state,
                    status_name, to_rts)

DEV = sys.argv[1] if len(sys.argv) > 1 else "rxe0"
NAMES = {e.IBV_EVENT_COMM_EST: "COMM_EST",
         e.IBV_EVENT_SQ_DRAINED: "SQ_DRAINED",
         e.IBV_EVENT_QP_LAST_WQE_REACHED: "QP_LAST_WQE_REACHED",
         e.IBV_EVENT_CQ_ERR: "CQ_ERR",
         e.IBV_EVENT_QP_FATAL: "QP_FATAL"}


def event_name(ev):
    return NAMES.get(ev, "event %s" % ev) if ev is not None else "no event"


class Events(Pair):
    """QP A (RTR, receiving) and QP B (RTS, sending) of one PD."""

    def __init__(self, qp_type):
        super().__init__(dev=DEV, qp_type=qp_type, a_rts=False)
        self.mr = MR(self.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)

    def send(self, n):
        """B sends one SEND to A; both completions must succeed."""
        self.a.post_recv(RecvWR(wr_id=100 + n, num_sge=1,
                                sg=[SGE(self.mr.buf + 2048, 64,
                                        self.mr.lkey)]))
        self.b.post_send(SendWR(wr_id=n, opcode=e.IBV_WR_SEND, num_sge=1,
                                sg=[SGE(self.mr.buf, 64, self.mr.lkey)]))
        wcs = self.poll(2)
        ok = len(wcs) == 2 and all(wc.status == e.IBV_WC_SUCCESS
                                   for wc in wcs)
        return check("SEND %d from B reaches A" % n, ok,
                     ", ".join(status_name(wc) for wc in wcs) or
                     "no completion")


def run(name, qp_type):
    t = Events(qp_type)
    t.send(1)
    ev = next_event(t.ctx)
    check("%s: a QP in RTR raises COMM_EST on its first packet" % name,
          ev == e.IBV_EVENT_COMM_EST, event_name(ev))
    t.send(2)
    to_rts(t.a)
    t.send(3)
    attr = QPAttr(qp_state=e.IBV_QPS_SQD)
    attr.en_sqd_async_notify = 1
    t.a.modify(attr, e.IBV_QP_STATE | e.IBV_QP_EN_SQD_ASYNC_NOTIFY)
    ev = next_event(t.ctx)
    check("%s: then SQ_DRAINED, no second COMM_EST (RTR or RTS)" % name,
          ev == e.IBV_EVENT_SQ_DRAINED, event_name(ev))
    t.a.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
    t.a.modify(attr, e.IBV_QP_STATE | e.IBV_QP_EN_SQD_ASYNC_NOTIFY)
    ev = next_event(t.ctx)
    check("%s: back to RTS and to SQD again: SQ_DRAINED again" % name,
          ev == e.IBV_EVENT_SQ_DRAINED, event_name(ev))
    if qp_type == e.IBV_QPT_RC:
        sqd_change(t, attr)
    t.ctx.close()


def modify_errno(qp, attr, mask):
    """0, or the errno with which modify_qp failed."""
    try:
        qp.modify(attr, mask)
    except PyverbsRDMAError as err:
        return err.error_code
    return 0


def sqd_change(t, sqd):
    """SQD to SQD may change the path's attributes, once the SQ has
    drained: before, -EBUSY. A's SEND to B waits on RNR NAKs (B has no
    receive posted; rnr_retry 7 retries for ever) while A drains."""
    attr = QPAttr()
    attr.timeout = 15
    err = modify_errno(t.a, attr, e.IBV_QP_TIMEOUT)
    check("RC: drained in SQD, the ACK timeout may change", err == 0,
          "errno %d" % err)
    t.a.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
    t.a.post_send(SendWR(wr_id=50, opcode=e.IBV_WR_SEND, num_sge=1,
                         sg=[SGE(t.mr.buf, 64, t.mr.lkey)]))
    time.sleep(0.5)
    t.a.modify(sqd, e.IBV_QP_STATE | e.IBV_QP_EN_SQD_ASYNC_NOTIFY)
    err = modify_errno(t.a, attr, e.IBV_QP_TIMEOUT)
    check("RC: in SQD with a SEND still waiting (RNR), a change of the ACK "
          "timeout fails with EBUSY", err == errno.EBUSY,
          "errno %d (%s)" % (err, os.strerror(err) if err else "it passed"))
    t.b.post_recv(RecvWR(wr_id=51, num_sge=1,
                         sg=[SGE(t.mr.buf + 2048, 64, t.mr.lkey)]))
    wcs = t.poll(2)
    check("RC: once B has a receive, A's SEND completes",
          sorted((wc.wr_id, wc.status) for wc in wcs) ==
          [(50, e.IBV_WC_SUCCESS), (51, e.IBV_WC_SUCCESS)],
          ", ".join(status_name(wc) for wc in wcs) or "no completion")
    ev = next_event(t.ctx)
    check("RC: and the drain ends with SQ_DRAINED",
          ev == e.IBV_EVENT_SQ_DRAINED, event_name(ev))
    err = modify_errno(t.a, attr, e.IBV_QP_TIMEOUT)
    check("RC: drained, the same change passes", err == 0, "errno %d" % err)


def to_err(qp):
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)


def last_wqe():
    """A on an SRQ, B on its own receive queue, connected; B sends to A,
    then both go to the error state, A twice."""
    ctx = Context(name=DEV)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                max_recv_sge=1)
    a = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq,
                          cap=cap))
    b = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    gid = ctx.query_gid(1, 1)
    connect_rc(a, gid, b.qp_num)
    connect_rc(b, gid, a.qp_num)
    srq.post_recv(RecvWR(wr_id=100, num_sge=1,
                         sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
    srq.post_recv(RecvWR(wr_id=101, num_sge=1,
                         sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
    b.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                       sg=[SGE(mr.buf, 64, mr.lkey)]))
    wcs = []
    for _ in range(10000):
        got, more = cq.poll(2 - len(wcs))
        wcs += more[:got]
        if len(wcs) == 2:
            break
    check("SRQ: a SEND from B lands in a WQE A took from the SRQ",
          sorted((wc.wr_id, wc.status) for wc in wcs) ==
          [(1, e.IBV_WC_SUCCESS), (100, e.IBV_WC_SUCCESS)],
          ", ".join(status_name(wc) for wc in wcs) or "no completion")
    to_err(a)
    ev = next_event(ctx)
    check("SRQ: A, to the error state, raises QP_LAST_WQE_REACHED",
          ev == e.IBV_EVENT_QP_LAST_WQE_REACHED, event_name(ev))
    to_err(a)
    to_err(b)
    ev = next_event(ctx, timeout=1.0)
    check("SRQ: nothing more (A to error again, B on its own receive "
          "queue)", ev is None, event_name(ev))
    got, _ = cq.poll(1)
    check("SRQ: the WQE A did not take stays in the SRQ (no flush "
          "completion for it)", got == 0, "%d completion(s)" % got)
    ctx.close()


def event_names(ctx):
    """The names of the async events until none comes for a second,
    sorted (the CQ's and the QP's come in either order)."""
    return sorted(event_name(ev) for ev in events_until_quiet(ctx))


def cq_full():
    """B sends to A. First B's send CQ has room for one completion, then
    (new QPs) A's receive CQ; each time four signaled SENDs go."""
    for side in ("send", "receive"):
        ctx = Context(name=DEV)
        pd = PD(ctx)
        small = CQ(ctx, 1)
        big = CQ(ctx, 64)
        mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1,
                    max_recv_sge=1)
        a = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=big,
                              rcq=small if side == "receive" else big,
                              cap=cap))
        b = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC,
                              scq=small if side == "send" else big,
                              rcq=big, cap=cap))
        full = b if side == "send" else a
        gid = ctx.query_gid(1, 1)

        def go(n):
            connect_rc(a, gid, b.qp_num)
            connect_rc(b, gid, a.qp_num)
            for i in range(n):
                a.post_recv(RecvWR(wr_id=100 + i, num_sge=1,
                                   sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
            for i in range(n):
                b.post_send(SendWR(wr_id=i, opcode=e.IBV_WR_SEND,
                                   num_sge=1, send_flags=e.IBV_SEND_SIGNALED,
                                   sg=[SGE(mr.buf, 64, mr.lkey)]))

        go(4)
        evs = event_names(ctx)
        check("CQ full (%s CQ): the CQ raises CQ_ERR, the QP QP_FATAL, "
              "once each" % side, evs == ["CQ_ERR", "QP_FATAL"],
              ", ".join(evs) or "no event")
        check("CQ full (%s CQ): the QP is in the error state" % side,
              qp_state(full) == e.IBV_QPS_ERR,
              "state %d" % qp_state(full))
        if side == "send":
            # Reset both and connect them again: the CQ stays overflowed,
            # so B's first completion raises QP_FATAL anew.
            for qp in (a, b):
                qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
            go(1)
            evs = event_names(ctx)
            check("CQ full (send CQ): after a reset, B's first completion "
                  "raises QP_FATAL again, the CQ nothing more",
                  evs == ["QP_FATAL"], ", ".join(evs) or "no event")
        ctx.close()


run("RC", e.IBV_QPT_RC)
run("UC", e.IBV_QPT_UC)
last_wqe()
cq_full()
finish()
