# SPDX-License-Identifier: GPL-2.0
"""Helpers for the pyverbs tests: TAP-like checks, and loopback QPs on one
device connected to each other over the device's own GID."""

import errno
import os
import re
import select
import subprocess
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SGE, RecvWR, SendWR
from tap import check, finish

__all__ = ["e", "errno", "check", "expect_errno", "finish", "Pair", "ACCESS",
           "connect_rc", "to_rts", "MR", "PD", "CQ", "QP", "QPAttr", "QPCap",
           "QPInitAttr", "SGE", "SendWR", "RecvWR", "Context",
           "PyverbsRDMAError", "status_name", "next_event", "driver_state",
           "new_qp"]

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)



def expect_errno(name, err, fn):
    """fn() must fail with errno err."""
    try:
        fn()
    except PyverbsRDMAError as ex:
        return check(name, ex.error_code == err,
                     "errno %d, want %d" % (ex.error_code, err))
    return check(name, False, "the call succeeded")


def status_name(wc):
    return "status %d" % wc.status if wc else "no completion"


def connect_rc(qp, gid, dest_qpn, gid_index=1, mtu=e.IBV_MTU_1024,
               access=ACCESS | e.IBV_ACCESS_MW_BIND, rd_atomic=4,
               timeout=14, retry_cnt=7, rnr_retry=7, rts=True,
               min_rnr_timer=1):
    """Take a connected QP from RESET to RTS (rts=False: to RTR) towards
    QP dest_qpn at gid, both PSNs starting at 0."""
    attr = QPAttr()
    attr.qp_access_flags = access
    qp.to_init(attr)
    attr = QPAttr()
    attr.path_mtu = mtu
    attr.dest_qp_num = dest_qpn
    attr.rq_psn = 0
    attr.max_dest_rd_atomic = rd_atomic
    attr.min_rnr_timer = min_rnr_timer
    attr.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gid_index),
                          is_global=1, port_num=1)
    qp.to_rtr(attr)
    if rts:
        to_rts(qp, rd_atomic, timeout, retry_cnt, rnr_retry)


def to_rts(qp, rd_atomic=4, timeout=14, retry_cnt=7, rnr_retry=7):
    """Take a connected QP from RTR to RTS, its send PSN starting at 0."""
    attr = QPAttr()
    attr.sq_psn = 0
    attr.timeout = timeout
    attr.retry_cnt = retry_cnt
    attr.rnr_retry = rnr_retry
    attr.max_rd_atomic = rd_atomic
    qp.to_rts(attr)


def new_qp(pd, cq, qp_type, srq=None, **cap):
    """A QP of qp_type on one CQ, 16 WRs and 2 SGEs each way unless cap
    (QPCap's keywords) says otherwise."""
    caps = dict(max_send_wr=16, max_recv_wr=16, max_send_sge=2,
                max_recv_sge=2)
    caps.update(cap)
    init = QPInitAttr(qp_type=qp_type, scq=cq, rcq=cq, srq=srq,
                      cap=QPCap(**caps))
    return QP(pd, init)


def driver_state(dev, qpn):
    """The driver's attributes of one QP (rdma -dd res show qp), as
    strings by name, without their drv_ prefix."""
    out = subprocess.run(["rdma", "-d", "-d", "res", "show", "qp", "link",
                          dev + "/1", "lqpn", str(qpn)],
                         capture_output=True, text=True, check=False).stdout
    return dict(re.findall(r"drv_(\w+) (\d+)", out))


def qp_state(qp):
    """The QP's state as the device reports it (IBV_QPS_*)."""
    attr, _ = qp.query(e.IBV_QP_STATE)
    return attr.qp_state


class Pair:
    """Two QPs of one PD on one device, A and B, connected to each other
    over GID gid_index (the device's own IPv4 address by default). With
    a_rts=False, A stays in RTR: it receives, but cannot send.
    send_ops (IBV_QP_EX_WITH_* flags) makes them extended QPs (QPEx) that
    post those operations with the wr_* calls; a_args and b_args are more
    keyword arguments of connect_rc for A and B (access, rd_atomic...)."""

    def __init__(self, dev="rxe0", gid_index=1, qp_type=e.IBV_QPT_RC,
                 depth=64, sge=4, mtu=e.IBV_MTU_1024, a_rts=True,
                 send_ops=0, a_args=None, b_args=None):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 4 * depth)
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=sge,
                    max_recv_sge=sge)
        if send_ops:
            init = QPInitAttrEx(qp_type=qp_type, scq=self.cq, rcq=self.cq,
                                cap=cap, pd=self.pd, send_ops_flags=send_ops,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
            self.a = QPEx(self.ctx, init)
            self.b = QPEx(self.ctx, init)
        else:
            init = QPInitAttr(qp_type=qp_type, scq=self.cq, rcq=self.cq,
                              cap=cap)
            self.a = QP(self.pd, init)
            self.b = QP(self.pd, init)
        self.gid = self.ctx.query_gid(1, gid_index)
        connect_rc(self.a, self.gid, self.b.qp_num, gid_index=gid_index,
                   mtu=mtu, rts=a_rts, **(a_args or {}))
        connect_rc(self.b, self.gid, self.a.qp_num, gid_index=gid_index,
                   mtu=mtu, **(b_args or {}))

    def poll(self, n=1, timeout=10.0):
        """Up to n completions, waiting at most timeout seconds."""
        out, end = [], time.time() + timeout
        while len(out) < n and time.time() < end:
            got, wcs = self.cq.poll(n - len(out))
            if got:
                out.extend(wcs[:got])
            else:
                time.sleep(0.001)
        return out

    def poll_one(self, timeout=10.0):
        wcs = self.poll(1, timeout)
        return wcs[0] if wcs else None


def async_fds():
    """The uverbs event files this process has open: with no completion
    channel created, the async event file of each open device context."""
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + name).endswith(
                    "[infinibandevent]"):
                fds.append(int(name))
        except OSError:
            pass
    return fds


def next_event(ctx, timeout=10.0):
    """The next async event's type, or None when none comes in time.
    pyverbs blocks in ibv_get_async_event() holding the interpreter, and
    does not give out the fd: wait for the fd to be readable first."""
    ready, _, _ = select.select(async_fds(), [], [], timeout)
    if not ready:
        return None
    ev = ctx.get_async_event()
    kind = ev.event_type
    ev.ack()
    return kind


def events_until_quiet(ctx, first=10.0, quiet=1.0):
    """The async events' types, in order, from the first (waited for up to
    first seconds) until none has come for quiet seconds."""
    evs = []
    kind = next_event(ctx, first)
    while kind is not None:
        evs.append(kind)
        kind = next_event(ctx, quiet)
    return evs
