# SPDX-License-Identifier: GPL-2.0
"""An RC QP whose packets the netdev keeps: its peer is a neighbour that
exists only in the ARP table, and a tbf qdisc at a few bytes a second holds
what the QP sends. The QP fills its share of the stack (64 skbs), must then
run out of retries on its own, as it would on a dead link (not wait for
the skbs for ever), complete its work request with IBV_WC_RETRY_EXC_ERR,
and be destroyed at once, with its skbs still in the qdisc.

usage: stuck.py DEV PEER_IPV4
"""

import sys
import time

from rxelib import (ACCESS, CQ, MR, PD, QP, QPCap, QPInitAttr, SGE, Context,
                    SendWR, check, connect_rc, driver_state, e, finish,
                    status_name)
from pyverbs.addr import GID

DEV, PEER = sys.argv[1], sys.argv[2]
SIZE = 1 << 20


ctx = Context(name=DEV)
pd = PD(ctx)
cq = CQ(ctx, 16)
mr = MR(pd, SIZE, ACCESS)
cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

quad = [int(x) for x in PEER.split(".")]
gid = GID("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(quad))
# timeout 12: 16.8 ms; few retries, so the QP fails soon.
connect_rc(qp, gid, 0x123, access=ACCESS, rd_atomic=1, timeout=12,
           retry_cnt=3, rnr_retry=0)

# One 1 MiB RDMA WRITE: 1024 packets, far more than the stack may hold.
wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
            sg=[SGE(mr.buf, SIZE, mr.lkey)])
wr.set_wr_rdma(0x1234, 0x10000)
qp.post_send(wr)

seen = 0
wc, end = None, time.time() + 30
while time.time() < end:
    state = driver_state(DEV, qp.qp_num)
    seen = max(seen, int(state.get("skb_inflight", 0)))
    got, wcs = cq.poll(1)
    if got:
        wc = wcs[0]
        break
    time.sleep(0.05)
check("the QP filled its share of the stack (64 skbs in flight)", seen >= 64,
      "at most %d seen" % seen)
check("the write completes with IBV_WC_RETRY_EXC_ERR within 30 s",
      wc is not None and wc.status == e.IBV_WC_RETRY_EXC_ERR,
      status_name(wc))
left = int(driver_state(DEV, qp.qp_num).get("skb_inflight", -1))
check("its skbs are still in the qdisc", left > 0, "skb_inflight %d" % left)

t0 = time.time()
qp.close()
took = time.time() - t0
check("destroy_qp returns at once with skbs in the stack", took < 2,
      "took %.1f s" % took)
mr.close()
cq.close()
pd.close()
ctx.close()
finish()
