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

usage: teardown.py exit DEV N TRACING_ON

QPs destroyed with packets on their way to them are 42-wire-hostile's
(hostile.py churn): here, on one guest, a loopback packet is delivered
before the post that sent it returns, so none would be.
"""

import os
import sys
import time

from rxelib import CQ, PD, e, new_qp
from pyverbs.device import Context
from pyverbs.mr import MW


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


if __name__ == "__main__":
    if sys.argv[1] != "exit":
        sys.exit("usage: see the top of " + sys.argv[0])
    exit_holding(sys.argv[2], int(sys.argv[3]), sys.argv[4])
