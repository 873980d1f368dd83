# SPDX-License-Identifier: GPL-2.0
"""Tearing QPs and memory windows down.

exit DEV N TRACING_ON: a process that exits holding many QPs and memory
windows is gone in moments. ib_core frees a QP or a window as soon as its
destroy verb returns, while the driver's lookups of them run under RCU; a
destroy that waited for an RCU grace period so that no lookup could still
be using the memory (17 ms each in a test guest) made a process with 2000
of each take over a minute to exit, and one with 65536 windows twenty
minutes. This process creates N RC QPs and N memory windows, half of type
1 and half of type 2, prints the time, turns tracing on (TRACING_ON,
ftrace's switch, which the caller has set up to record grace-period
waits), and exits without destroying anything: closing the uverbs file
destroys it all. The caller times the exit and counts the waits.

race DEV ROUNDS: each round connects two loopback RC QPs, has A post 16
RDMA WRITEs of 64 KiB and 16 SENDs, and at once destroys one QP and then
the other, B first in even rounds and A first in odd ones, with packets
still on their way to both: some must arrive after their QP is gone
(drop_unknown_qpn), or the rounds raced nothing. The caller checks that
the kernel logged nothing and that the driver's audit finds nothing left
at unload.

usage: teardown.py exit DEV N TRACING_ON
       teardown.py race DEV ROUNDS
"""

import os
import re
import subprocess
import sys
import time

from rxelib import (ACCESS, CQ, MR, PD, Pair, RecvWR, SGE, SendWR, check, e,
                    finish, new_qp)
from pyverbs.device import Context
from pyverbs.mr import MW

KiB = 1 << 10


def exit_holding(dev, n, tracing_on):
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    qps = [new_qp(pd, cq, e.IBV_QPT_RC, max_send_wr=1, max_recv_wr=1,
                  max_send_sge=1, max_recv_sge=1) for _ in range(n)]
    mws = [MW(pd, e.IBV_MW_TYPE_1 if i % 2 else e.IBV_MW_TYPE_2)
           for i in range(n)]
    print(f"created {len(qps)} QPs and {len(mws)} MWs", flush=True)
    with open(tracing_on, "w", encoding="ascii") as f:
        f.write("1\n")
    print(f"exiting at {time.time():.3f}", flush=True)
    # No destructor runs: the kernel tears the objects down as the
    # process's files close.
    os._exit(0)


def counter(dev, name):
    """One of the port's counters (rdma statistic)."""
    out = subprocess.run(["rdma", "statistic", "show", "link", dev + "/1"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"\b" + name + r" (\d+)", out)
    return int(m.group(1)) if m else 0


def race(dev, rounds):
    posted = 0
    late0 = counter(dev, "drop_unknown_qpn")
    for r in range(rounds):
        p = Pair(dev, depth=64, sge=1)
        mr_a = MR(p.pd, 1024 * KiB, ACCESS)
        mr_b = MR(p.pd, 1024 * KiB, ACCESS)
        for i in range(16):
            p.b.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[
                SGE(mr_b.buf + i * 4 * KiB, 4 * KiB, mr_b.lkey)]))
        for i in range(16):
            w = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                       sg=[SGE(mr_a.buf, 1024 * KiB, mr_a.lkey)])
            w.set_wr_rdma(mr_b.rkey, mr_b.buf)
            p.a.post_send(w)
            p.a.post_send(SendWR(wr_id=100 + i, opcode=e.IBV_WR_SEND,
                                 num_sge=1, sg=[SGE(mr_a.buf, 4 * KiB,
                                                    mr_a.lkey)]))
            posted += 2
        first, second = (p.b, p.a) if r % 2 == 0 else (p.a, p.b)
        first.close()
        second.close()
        p.ctx.close()
    late = counter(dev, "drop_unknown_qpn") - late0
    check(f"{rounds} rounds, {posted} work requests posted: packets were "
          f"still coming when their QP went ({late} arrived after it)",
          late > 0)


if __name__ == "__main__":
    if sys.argv[1] == "exit":
        exit_holding(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        race(sys.argv[2], int(sys.argv[3]))
        finish()
