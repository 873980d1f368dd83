# SPDX-License-Identifier: GPL-2.0
"""QPs whose peer never answers must not shrink the window of the QPs that
move data. The RC QPs of a device with packets outstanding share a window
of 256 PSNs, each keeping at least 8; a QP that waits on its peer for ever
(infinite RNR retries, or an infinite timeout towards a QP that does not
exist) would otherwise count as sharing for ever, and forty of them cut
every other QP of the device, NVMe-oF's and NFS's included, to 8.

Twenty QPs send to peers with no receive WQE and an RNR timer of 655 ms,
with RNR retries for ever; twenty send to a QPN that does not exist, with
an infinite timeout. Once they wait, a healthy pair's window (rdma -dd res
show qp: drv_window) must be at least 32 PSNs. With receive WQEs posted
at last, the RNR-stalled QPs complete their SENDs.

usage: share.py [DEV]
"""

import sys
import time

from rxelib import (CQ, MR, SGE, Pair, RecvWR, SendWR, check, connect_rc,
                    driver_state, e, finish, new_qp, qp_state)

DEV = sys.argv[1] if len(sys.argv) > 1 else "rxe0"
STALLED = 20


def main():
    pair = Pair(DEV)
    ctx, pd, gid = pair.ctx, pair.pd, pair.gid
    cq = CQ(ctx, 4 * (2 * STALLED + 1))
    mr = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    qps = []
    # An RNR NAK for every SEND, an RNR timer of 655.36 ms (code 0).
    for _ in range(STALLED):
        s, t = new_qp(pd, cq, e.IBV_QPT_RC), new_qp(pd, cq, e.IBV_QPT_RC)
        connect_rc(s, gid, t.qp_num, rnr_retry=7)
        connect_rc(t, gid, s.qp_num, min_rnr_timer=0)
        qps += [s, t]
    # No answer at all, and no end to waiting for one (timeout 0).
    for _ in range(STALLED):
        s = new_qp(pd, cq, e.IBV_QPT_RC)
        connect_rc(s, gid, 0xfffff0, timeout=0)
        qps.append(s)
    senders = qps[0:2 * STALLED:2] + qps[2 * STALLED:]
    for s in senders:
        s.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                           sg=[SGE(mr.buf, 64, mr.lkey)]))

    # Early retries back off from 20 ms: the sixth 1.26 s after the send.
    time.sleep(3)
    states = [driver_state(DEV, s.qp_num) for s in senders]
    rnr = sum(st.get("rnr_wait") == "1" for st in states[:STALLED])
    backed = sum(int(st.get("backoff", 0)) >= 6 for st in states[STALLED:])
    print("# %d of %d QPs in an RNR wait, %d of %d backed off 6 times" %
          (rnr, STALLED, backed, STALLED))
    check("the stalled QPs wait: RNR waits and early retries backed off",
          rnr >= STALLED - 2 and backed == STALLED,
          "%d in an RNR wait, %d backed off" % (rnr, backed))
    # A module without drv_busy counts them all.
    busy = sum(st.get("busy", "1") == "1" for st in states)
    check("the stalled QPs do not share the window (drv_busy)",
          busy <= 2, "%d of %d count as sharing" % (busy, len(states)))
    window = int(driver_state(DEV, pair.a.qp_num).get("window", 0))
    check("a healthy QP's window stays at least 32 PSNs", window >= 32,
          "window %d PSNs" % window)
    live = sum(qp_state(s) == e.IBV_QPS_RTS for s in senders)
    got, _ = cq.poll(1)
    check("the stalled QPs are still in RTS, nothing completed",
          live == len(senders) and not got,
          "%d of %d in RTS, %d completions" % (live, len(senders), got))

    # The peers take the SENDs at last: the next RNR retry succeeds.
    for t in qps[1:2 * STALLED:2]:
        t.post_recv(RecvWR(num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
    done, end = [], time.time() + 10
    while len(done) < 2 * STALLED and time.time() < end:
        got, wcs = cq.poll(2 * STALLED - len(done))
        done += wcs[:got]
        if not got:
            time.sleep(0.01)
    ok = sum(wc.status == e.IBV_WC_SUCCESS for wc in done)
    check("with receive WQEs posted, the RNR-stalled SENDs complete",
          ok == 2 * STALLED, "%d of %d completions, %d successful" %
          (len(done), 2 * STALLED, ok))

    for qp in qps:
        qp.close()
    cq.close()
    finish()


main()
