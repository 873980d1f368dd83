# SPDX-License-Identifier: GPL-2.0
"""IBA's Memory Placement Extensions from userspace, through rdma-core's
unchanged rxe provider (pyverbs): RDMA ATOMIC WRITE posted on extended QPs
(QPEx, ibv_wr_atomic_write) from QP A into an MR of QP B on one device,
and the FLUSH access flags of MRs and QPs.

With --expect yes (a kernel with the extensions, 6.2 and later):
  - the device advertises ATOMIC_WRITE and FLUSH_GLOBAL, not
    FLUSH_PERSISTENT;
  - 64 ATOMIC WRITEs of distinct values, each of 8 distinct bytes, to
    distinct aligned offsets complete as IBV_WC_ATOMIC_WRITE with byte_len
    8, and the target MR holds exactly those bytes there and nothing else
    changed (a wrong byte order or a store wider than 8 bytes shows);
  - an RDMA WRITE followed by an ATOMIC WRITE of a flag: once the flag's
    completion is in, both are in memory;
  - the errors, each on a new pair (a failed QP stays failed), with the
    target memory untouched: an unaligned address and a requester without
    max_rd_atomic fail locally (IBV_WC_LOC_QP_OP_ERR, the WR behind them
    flushed); a target MR without REMOTE_WRITE, a responder QP without
    REMOTE_WRITE and a bad rkey fail with IBV_WC_REM_ACCESS_ERR;
  - an MR with IBV_ACCESS_FLUSH_GLOBAL registers and a QP takes it in its
    access flags; an MR with IBV_ACCESS_FLUSH_PERSISTENT is refused
    (EOPNOTSUPP, ib_core's answer for an access the device does not offer).
With --expect no (a kernel without them): none of the capability bits; an
ATOMIC WRITE completes with IBV_WC_LOC_QP_OP_ERR, the WR behind it is
flushed and the target is untouched; an MR with FLUSH_GLOBAL access is
refused (EINVAL: the kernel does not know the bit).

usage: mpe.py [DEV] [--expect yes|no]
"""

import argparse

from rxelib import (ACCESS, MR, SGE, Context, Pair, PyverbsRDMAError,
                    QPAttr, check, e, errno, finish)

# ib_verbs.h / verbs.h values pyverbs 44 has no names for.
DEVICE_FLUSH_GLOBAL = 1 << 38
DEVICE_FLUSH_PERSISTENT = 1 << 39
DEVICE_ATOMIC_WRITE = 1 << 40
ACCESS_FLUSH_GLOBAL = 1 << 8
ACCESS_FLUSH_PERSISTENT = 1 << 9

SIZE = 65536
FILL = 0xEE             # what the target holds before each test
COUNT = 64              # ATOMIC WRITEs in the burst
STRIDE = 24             # their offsets: 8-byte aligned, with gaps between
SEND_OPS = e.IBV_QP_EX_WITH_ATOMIC_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE


def value(i):
    """The i-th 8-byte value: its bytes all differ from each other (so a
    reversed or shuffled store shows), its first byte is i (so values
    differ from each other)."""
    return bytes((i + 0x21 * k) & 0xFF for k in range(8))


class Mpe(Pair):
    """An extended pair; A posts, B's MR dst (access dst_access) is the
    target, A's MR src the source of RDMA WRITEs."""

    def __init__(self, dev, dst_access=ACCESS, **kw):
        super().__init__(dev=dev, send_ops=SEND_OPS, **kw)
        self.src = MR(self.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        self.dst = MR(self.pd, SIZE, dst_access)
        self.dst.write(bytes([FILL]) * SIZE, SIZE, 0)

    def atomic_write(self, wr_id, off, val, rkey=None):
        """Queue one signaled ATOMIC WRITE of val at dst + off (between
        wr_start and wr_complete)."""
        self.a.wr_id = wr_id
        self.a.wr_flags = e.IBV_SEND_SIGNALED
        self.a.wr_atomic_write(self.dst.rkey if rkey is None else rkey,
                               self.dst.buf + off, val)

    def rdma_write(self, wr_id, off, length):
        """Queue one signaled RDMA WRITE of src[0:length] at dst + off."""
        self.a.wr_id = wr_id
        self.a.wr_flags = e.IBV_SEND_SIGNALED
        self.a.wr_rdma_write(self.dst.rkey, self.dst.buf + off)
        self.a.wr_set_sge(SGE(self.src.buf, length, self.src.lkey))

    def post(self, *wrs):
        """Post the queued work requests (callables) as one batch."""
        self.a.wr_start()
        for wr in wrs:
            wr()
        self.a.wr_complete()

    def untouched(self):
        """Where dst differs from its fill: None, or a description."""
        got = self.dst.read(SIZE, 0)
        bad = [i for i, b in enumerate(got) if b != FILL]
        if not bad:
            return None
        return "%d bytes of the target changed, first at offset %d" % (
            len(bad), bad[0])


def wc_name(status):
    """IBV_WC_... name of a status."""
    for name in dir(e):
        if name.startswith("IBV_WC_") and name.endswith("_ERR") or \
                name == "IBV_WC_SUCCESS":
            if getattr(e, name) == status:
                return "%s (%d)" % (name[7:], status)
    return str(status)


def wc_text(wc):
    if wc is None:
        return "no completion"
    return "status %s opcode %d byte_len %d wr_id 0x%x" % (
        wc_name(wc.status), wc.opcode, wc.byte_len, wc.wr_id)


def caps(dev, expect):
    ctx = Context(name=dev)
    flags = ctx.query_device_ex().device_cap_flags_ex
    ctx.close()
    have = {name: bool(flags & bit) for name, bit in (
        ("ATOMIC_WRITE", DEVICE_ATOMIC_WRITE),
        ("FLUSH_GLOBAL", DEVICE_FLUSH_GLOBAL),
        ("FLUSH_PERSISTENT", DEVICE_FLUSH_PERSISTENT))}
    for name, on in have.items():
        want = expect and name != "FLUSH_PERSISTENT"
        check("device_cap_flags_ex %s %s" % (
                  "has" if want else "lacks", name),
              on == want, "device_cap_flags_ex 0x%x" % flags)


def check_burst_wcs(wcs):
    """The completions of a burst of COUNT ATOMIC WRITEs: in order, with
    success, as IBV_WC_ATOMIC_WRITE of 8 bytes."""
    bad = [wc for i, wc in enumerate(wcs)
           if wc.wr_id != i or wc.status != e.IBV_WC_SUCCESS]
    check("every ATOMIC WRITE completes in order with success", not bad,
          "%d bad, first: %s" % (len(bad), wc_text(bad[0] if bad else None)))
    bad = [wc for wc in wcs if wc.opcode != e.IBV_WC_ATOMIC_WRITE or
           wc.byte_len != 8]
    check("every completion says IBV_WC_ATOMIC_WRITE (%d), byte_len 8" %
          e.IBV_WC_ATOMIC_WRITE, not bad,
          "%d bad, first: %s" % (len(bad), wc_text(bad[0] if bad else None)))


def burst_memory_why(got):
    """What is wrong with a target MR (its SIZE bytes, got) after a burst:
    a value not at its offset, or a byte outside them changed; "" when
    it holds exactly what it should."""
    want = bytearray([FILL]) * SIZE
    for i in range(COUNT):
        want[i * STRIDE:i * STRIDE + 8] = value(i)
    for i in range(COUNT):
        at = got[i * STRIDE:i * STRIDE + 8]
        if at != value(i):
            return "offset %d holds %s, want %s%s" % (
                i * STRIDE, at.hex(), value(i).hex(),
                " (byte-reversed)" if at == value(i)[::-1] else "")
    if got != want:
        off = next(k for k in range(SIZE) if got[k] != want[k])
        return "byte %d outside the targets changed to 0x%02x" % (
            off, got[off])
    return ""


def burst(dev):
    """COUNT ATOMIC WRITEs in one batch, each checked by its completion and
    by the bytes at its offset; the rest of the MR stays as it was."""
    p = Mpe(dev)
    p.post(*[lambda i=i: p.atomic_write(i, i * STRIDE, value(i))
             for i in range(COUNT)])
    wcs = p.poll(COUNT)
    check("%d ATOMIC WRITEs complete" % COUNT, len(wcs) == COUNT,
          "%d completions" % len(wcs))
    check_burst_wcs(wcs)

    got = p.dst.read(SIZE, 0)
    why = burst_memory_why(got)
    check("the target holds each value byte for byte at its offset, and "
          "nothing else changed", not why, why)
    p.ctx.close()


def ordering(dev, rounds=8, length=16384):
    """RDMA WRITE of a buffer, then ATOMIC WRITE of a flag behind it: when
    the flag's completion is in, the buffer and the flag are in memory."""
    p = Mpe(dev)
    flag_off = SIZE - 8
    why = ""
    for r in range(rounds):
        data = bytes([(r * 7 + 1) & 0xFF]) * length
        flag = value(0x80 + r)
        p.src.write(data, length, 0)
        p.post(lambda: p.rdma_write(0x100 + r, 0, length),
               lambda: p.atomic_write(0x200 + r, flag_off, flag))
        wcs = p.poll(2)
        flag_wc = wcs[-1] if len(wcs) == 2 else None
        if flag_wc is None or flag_wc.wr_id != 0x200 + r or \
                any(wc.status != e.IBV_WC_SUCCESS for wc in wcs):
            why = "round %d: %s" % (r, ", ".join(wc_text(wc) for wc in wcs)
                                    or "no completion")
            break
        got_data = p.dst.read(length, 0)
        got_flag = p.dst.read(8, flag_off)
        if got_data != data or got_flag != flag:
            bad = [k for k in range(length) if got_data[k] != data[k]]
            why = "round %d: at the flag's completion %d bytes of the " \
                  "buffer are wrong%s, the flag holds %s (want %s)" % (
                      r, len(bad), " from %d on" % bad[0] if bad else "",
                      got_flag.hex(), flag.hex())
            break
    check("RDMA WRITE then ATOMIC WRITE of a flag: at the flag's completion "
          "both are in memory (%d rounds of %d bytes)" % (rounds, length),
          not why, why)
    p.ctx.close()


def fails(dev, what, status, off=0, rkey_xor=0, **kw):
    """One ATOMIC WRITE on a new pair must complete with status; the WR
    behind it must be flushed (the QP is in error); the target must not
    change."""
    p = Mpe(dev, **kw)
    rkey = p.dst.rkey ^ rkey_xor
    p.post(lambda: p.atomic_write(0xE1, off, value(0xE1), rkey),
           lambda: p.atomic_write(0xE2, 64, value(0xE2)))
    wcs = p.poll(2)
    first = wcs[0] if wcs else None
    check("%s: completes with %s" % (what, wc_name(status)),
          first is not None and first.wr_id == 0xE1 and
          first.status == status, wc_text(first))
    second = wcs[1] if len(wcs) > 1 else None
    check("%s: the WR behind it is flushed (WR_FLUSH_ERR)" % what,
          second is not None and second.status == e.IBV_WC_WR_FLUSH_ERR,
          wc_text(second))
    why = p.untouched()
    check("%s: the target memory is untouched" % what, why is None, why)
    p.ctx.close()


def errors(dev):
    """Each failing ATOMIC WRITE on its own pair."""
    fails(dev, "ATOMIC WRITE to an unaligned address (dst + 4)",
          e.IBV_WC_LOC_QP_OP_ERR, off=4)
    fails(dev, "ATOMIC WRITE from a QP with max_rd_atomic 0",
          e.IBV_WC_LOC_QP_OP_ERR, a_args={"rd_atomic": 0})
    fails(dev, "ATOMIC WRITE to an MR without REMOTE_WRITE",
          e.IBV_WC_REM_ACCESS_ERR,
          dst_access=e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_ATOMIC)
    fails(dev, "ATOMIC WRITE to a QP without REMOTE_WRITE access",
          e.IBV_WC_REM_ACCESS_ERR,
          b_args={"access": e.IBV_ACCESS_REMOTE_READ |
                  e.IBV_ACCESS_REMOTE_ATOMIC})
    fails(dev, "ATOMIC WRITE through a bad rkey (key byte flipped)",
          e.IBV_WC_REM_ACCESS_ERR, rkey_xor=0xFF)


def reg_mr(pd, access):
    """Register an MR with access; None, or the errno it failed with."""
    try:
        MR(pd, 4096, access).close()
    except PyverbsRDMAError as ex:
        return ex.error_code
    return None


def access_flags(dev, expect):
    """The FLUSH access bits: of an MR (registration), and with the
    extensions of a QP (modify in RTS, and connecting with them)."""
    p = Pair(dev=dev)
    err = reg_mr(p.pd, e.IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_GLOBAL)
    if expect:
        check("an MR with FLUSH_GLOBAL access registers", err is None,
              "errno %s" % err)
        err = reg_mr(p.pd, e.IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT)
        check("an MR with FLUSH_PERSISTENT access is refused (EOPNOTSUPP)",
              err == errno.EOPNOTSUPP, "errno %s, want %d" % (
                  err, errno.EOPNOTSUPP))
    else:
        check("an MR with FLUSH_GLOBAL access is refused (EINVAL)",
              err == errno.EINVAL, "errno %s, want %d" % (err, errno.EINVAL))
    p.ctx.close()
    if not expect:
        return
    p = Pair(dev=dev)
    attr = QPAttr()
    attr.qp_access_flags = ACCESS | ACCESS_FLUSH_GLOBAL
    try:
        p.b.modify(attr, e.IBV_QP_ACCESS_FLAGS)
        got, _ = p.b.query(e.IBV_QP_ACCESS_FLAGS)
        check("a QP takes FLUSH_GLOBAL in its access flags (RTS to RTS)",
              got.qp_access_flags & ACCESS_FLUSH_GLOBAL,
              "qp_access_flags 0x%x after the modify" % got.qp_access_flags)
    except PyverbsRDMAError as ex:
        check("a QP takes FLUSH_GLOBAL in its access flags (RTS to RTS)",
              False, "modify failed: %s" % ex)
    p.ctx.close()

    try:
        p = Pair(dev=dev, a_args={"access": ACCESS | ACCESS_FLUSH_GLOBAL},
                 b_args={"access": ACCESS | ACCESS_FLUSH_GLOBAL})
        check("QPs connect with FLUSH_GLOBAL in their access flags "
              "(RESET to INIT)", True)
        p.ctx.close()
    except PyverbsRDMAError as ex:
        check("QPs connect with FLUSH_GLOBAL in their access flags "
              "(RESET to INIT)", False, str(ex))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dev", nargs="?", default="rxe0")
    ap.add_argument("--expect", choices=("yes", "no"), default="yes",
                    help="whether the kernel has the extensions")
    args = ap.parse_args()
    expect = args.expect == "yes"

    caps(args.dev, expect)
    if expect:
        burst(args.dev)
        ordering(args.dev)
        errors(args.dev)
    else:
        fails(args.dev, "ATOMIC WRITE on a kernel without the extensions",
              e.IBV_WC_LOC_QP_OP_ERR)
    access_flags(args.dev, expect)
    finish()


if __name__ == "__main__":
    main()
