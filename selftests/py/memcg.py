# SPDX-License-Identifier: GPL-2.0
"""Memory that a process's verbs objects are built of is charged to the
process's memory cgroup. A process sizes its own CQ, QP and SRQ rings (up
to 4 MiB a CQ, 65536 CQs a device), and that memory is the kernel's, not
the process's pages, so without the charge a container's memory limit
does not hold and one unprivileged process can take all of the host's
memory. Over the limit the verb must fail with ENOMEM, and the OOM killer
must stay out of it.

Run as the only process of an otherwise empty memory cgroup CG.

usage: memcg.py DEV CG
"""

import os
import sys

from rxelib import (CQ, PD, QP, PyverbsRDMAError, QPCap, QPInitAttr, check,
                    e, errno, finish)
from pyverbs.device import Context
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

DEV, CG = sys.argv[1], sys.argv[2]
MiB = 1 << 20
# The least a slot can hold: a CQE is a 48-byte ib_uverbs_wc, and each
# SGE of a work request is 16 bytes.
CQE_BYTES = 48
SGE_BYTES = 16
BIG_CQ = 32767


def cg_read(name):
    with open(os.path.join(CG, name)) as f:
        return f.read()


def cg_write(name, value):
    with open(os.path.join(CG, name), "w") as f:
        f.write(value)


def current():
    return int(cg_read("memory.current"))


def oom_events():
    ev = dict(line.split() for line in cg_read("memory.events").splitlines())
    return int(ev["oom"]), int(ev["oom_kill"])


def charged(what, make, want):
    """make() creates objects that need at least want bytes of rings; the
    cgroup's usage must grow by that much, and fall back when they go."""
    base = current()
    objs = make()
    got = current() - base
    print("# %s: usage grew by %.1f MiB" % (what, got / MiB))
    check("%s: charged to the memory cgroup" % what, got >= want,
          "usage grew by %.1f MiB, the rings need %.1f MiB at least" %
          (got / MiB, want / MiB))
    for obj in reversed(objs):
        obj.close()
    left = current() - base
    check("%s: uncharged when destroyed" % what, left < 2 * MiB,
          "%.1f MiB still charged" % (left / MiB))


def big_qp(pd, cq):
    cap = QPCap(max_send_wr=8192, max_recv_wr=8192, max_send_sge=16,
                max_recv_sge=16)
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


def charges(ctx, pd):
    charged("8 CQs of %d entries" % BIG_CQ,
            lambda: [CQ(ctx, BIG_CQ) for _ in range(8)],
            8 * BIG_CQ * CQE_BYTES)

    cq = CQ(ctx, 16)
    # The send ring, the kernel's shadow of it, and the receive ring.
    charged("a QP of 8192 send and 8192 receive WRs of 16 SGEs",
            lambda: [big_qp(pd, cq)], 3 * 8192 * 16 * SGE_BYTES)
    charged("an SRQ of 8192 WRs of 16 SGEs",
            lambda: [SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8192, max_sge=16)))],
            8192 * 16 * SGE_BYTES)

    small = CQ(ctx, 16)
    charged("a CQ resized from 16 to %d entries" % BIG_CQ,
            lambda: [small.resize(BIG_CQ), small][1:],
            BIG_CQ * CQE_BYTES)
    cq.close()


def over_limit(ctx):
    """Under a limit 16 MiB above today's usage, ask for 96 MiB of CQs."""
    want = 24
    limit = current() + 16 * MiB
    cg_write("memory.max", str(limit))
    cqs, err = [], None
    try:
        while len(cqs) < want:
            cqs.append(CQ(ctx, BIG_CQ))
            print("# %d CQs: usage %.1f MiB of %.1f" %
                  (len(cqs), current() / MiB, limit / MiB))
    except PyverbsRDMAError as ex:
        err = ex.error_code
    peak = current()
    for cq in cqs:
        cq.close()
    cg_write("memory.max", "max")

    check("over the cgroup's limit, create_cq fails with ENOMEM",
          err == errno.ENOMEM,
          "%d of %d CQs of 4 MiB created under a limit of +16 MiB, errno %s"
          % (len(cqs), want, err))
    check("the limit held: %d CQs charged within it" % len(cqs),
          len(cqs) * BIG_CQ * CQE_BYTES <= limit and peak <= limit,
          "usage %d, limit %d" % (peak, limit))
    oom, kills = oom_events()
    check("no OOM event and no OOM kill in the cgroup",
          oom == 0 and kills == 0, "oom %d, oom_kill %d" % (oom, kills))
    try:
        CQ(ctx, BIG_CQ).close()
        ok = True
    except PyverbsRDMAError as ex:
        ok = ex
    check("with the limit lifted, a CQ of %d entries again" % BIG_CQ,
          ok is True, ok)


def main():
    with open("/proc/self/cgroup") as f:
        mine = f.read().strip().rsplit(":", 1)[-1]
    check("this process runs in %s" % CG, CG.endswith(mine) and mine != "/",
          "it runs in %s" % mine)
    ctx = Context(name=DEV)
    pd = PD(ctx)
    charges(ctx, pd)
    over_limit(ctx)
    pd.close()
    ctx.close()
    finish()


main()
