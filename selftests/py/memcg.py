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

from rxelib import CQ, PD, PyverbsRDMAError, check, e, errno, finish, new_qp
from pyverbs.device import Context
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

DEV, CG = sys.argv[1], sys.argv[2]
MiB = 1 << 20
BIG_CQ = 32767
PAGE = 4096
# The uABI's ring layout (docs/uabi.md): a 384-byte header, then a power
# of two of slots, at least one more than asked for; a CQE slot is 128
# bytes, and a work request slot a power of two that holds its 16-byte
# SGEs and a header, so 512 bytes at least for 16 SGEs.
CQE_SLOT = 128
WR16_SLOT = 512


def ring_bytes(entries, slot):
    """The least memory a ring of entries slots of slot bytes takes."""
    n = 1 << entries.bit_length()
    return (n * slot + 384 + PAGE - 1) // PAGE * PAGE


CQ_RING = ring_bytes(BIG_CQ, CQE_SLOT)


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
    """make() creates objects whose rings take at least want bytes; the
    cgroup's usage must grow by that much (less what the per-CPU charge
    caches held, 256 KiB a CPU), and fall back when they go."""
    base = current()
    objs = make()
    got = current() - base
    slack = 256 * 1024 * os.cpu_count()
    print("# %s: usage grew by %.2f MiB, the rings take %.2f MiB" %
          (what, got / MiB, want / MiB))
    check("%s: charged to the memory cgroup" % what, got >= want - slack,
          "usage grew by %.2f MiB, the rings take %.2f MiB" %
          (got / MiB, want / MiB))
    for obj in reversed(objs):
        obj.close()
    left = current() - base
    check("%s: uncharged when destroyed" % what, left < 2 * MiB,
          "%.1f MiB still charged" % (left / MiB))


def charges(ctx, pd):
    charged("8 CQs of %d entries" % BIG_CQ,
            lambda: [CQ(ctx, BIG_CQ) for _ in range(8)], 8 * CQ_RING)

    cq = CQ(ctx, 16)
    # The send and receive rings, and the kernel's shadow of the send
    # ring: as many slots, each holding the 16 SGEs at least.
    charged("a QP of 8192 send and 8192 receive WRs of 16 SGEs",
            lambda: [new_qp(pd, cq, e.IBV_QPT_RC, max_send_wr=8192,
                            max_recv_wr=8192, max_send_sge=16,
                            max_recv_sge=16)],
            2 * ring_bytes(8192, WR16_SLOT) + 16384 * 16 * 16)
    charged("an SRQ of 8192 WRs of 16 SGEs",
            lambda: [SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8192, max_sge=16)))],
            ring_bytes(8192, WR16_SLOT))

    small = CQ(ctx, 16)
    charged("a CQ resized from 16 to %d entries" % BIG_CQ,
            lambda: [small.resize(BIG_CQ), small][1:], CQ_RING)
    cq.close()


def over_limit(ctx):
    """Under a limit 16 MiB above today's usage, ask for 96 MiB of CQs:
    3 of them fit at least (more where reclaim frees page cache), and no
    more than the limit holds."""
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
    check("%d CQs created, as many as the limit holds" % len(cqs),
          16 * MiB // CQ_RING <= len(cqs) and len(cqs) * CQ_RING <= limit,
          "%d CQs of %d bytes, the limit %d bytes, usage at most %d" %
          (len(cqs), CQ_RING, limit, peak))
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
