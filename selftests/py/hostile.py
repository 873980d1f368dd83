#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed and hostile packets against a live device (42-wire-hostile).

  hostile.py target   PEER_IP PEER_IP6 MY_IP MY_IP6
  hostile.py attacker PEER_IP PEER_IP6 MY_IP MY_IP6 PEER_MAC IMPL SEED NFUZZ

The target (guest b) holds QPs in every state that matters: a live RC
QP connected to the attacker's, a UD QP, a UC QP, RC QPs in RESET, INIT
and RTR, one RC QP for the fuzzer, victims for requests that must draw a
NAK, and one (vr) with no receive WQE, whose SENDs draw RNR NAKs. It also
has a VLAN device eth0.100 (the test script makes it), up and without an
address, through which tagged frames reach its IP layer.
Where the kernel has the Memory Placement Extensions (RDMA
FLUSH and ATOMIC WRITE, 6.2 on; both guests boot the same kernel) it
also holds an RC QP "pl" whose access takes FLUSH_GLOBAL, an MR "fl"
registered for it, and victims for the FLUSHes and ATOMIC WRITEs that
must draw a NAK. It answers the attacker's questions over TCP: its counters
(sysfs hw_counters, checked once against `rdma statistic`), the UDP
datagram counts of its stack, QP states, completions, memory.

The attacker (guest a) injects frames on eth0 with a packet socket,
built by roce.py, and watches the answers on the same socket. For every
class of bad packet it knows the counter that must count it, from the
driver's documented order of checks (docs/architecture.md): BTH length,
opcode, version, header length, pad, ICRC at the door; QP, transport,
P_Key, Q_Key, state in the demultiplexer. FLUSH (0x1c) and ATOMIC WRITE
(0x1d) are opcodes a driver knows only on a kernel with their verbs:
elsewhere they are unknown opcodes. With IMPL=theirs (the in-tree rxe has
no drop counters) only what is visible on the wire and the QPs is judged.
"""

import itertools
import json
import os
import platform
import random
import select
import struct
import subprocess
import sys
import time
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402
from tap import check, finish  # noqa: E402


def aeths(pkts):
    """What a check that failed prints of ACK packets: PSN and syndrome."""
    return [(p.psn, hex(p.hdrs["AETH"]["syndrome"])) for p in pkts]


def info(text):
    print("# " + text)
    sys.stdout.flush()


DROPS = ["drop_icrc_err", "drop_malformed", "drop_bad_opcode",
         "drop_unknown_qpn", "drop_pkey_err", "drop_qkey_err",
         "drop_qp_state", "drop_nomem", "drop_no_recv_wqe", "drop_addr_err",
         "drop_uc_msg"]
GSI_QKEY = 0x80010000
DEAD_QPN = 0x7F0001         # a QPN nobody has on the attacker's side
LIVE_PSN = 0xFFFFFE         # the attacker's first PSN: crosses the wrap
TARGET_PSN = 0x7FFFF0       # the target's first PSN on the live QP
TARGET_VLAN = 100           # the target's eth0.100, up, with no address
VICTIM_PSN = 0x100
MR_SIZE = 1 << 16
# What the netdev keeps of the target's RoCE packets in the budget phase.
STICK_ROCE = ("tc qdisc replace dev eth0 root handle 1: prio && "
              "tc qdisc add dev eth0 parent 1:3 handle 30: tbf rate 1kbit "
              "burst 1600 limit 100000000 && "
              "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 "
              "match ip protocol 17 0xff match ip dport 4791 0xffff "
              "flowid 1:3")
RECV_OFF, UD_OFF, READ_OFF, WRITE_OFF, GAP_OFF, ATOM_OFF = 0, 16 << 10, \
    32 << 10, 40 << 10, 44 << 10, 60 << 10
STATE_NAMES = {0: "RESET", 1: "INIT", 2: "RTR", 3: "RTS", 4: "SQD",
               5: "SQE", 6: "ERR"}
ACCESS_FLUSH_GLOBAL = 1 << 8    # ib_verbs.h; pyverbs has no name for it
FL_SIZE = 1 << 14               # the MR "fl", for FLUSH and ATOMIC WRITE
AW_OFF = 256                    # where in it the ATOMIC WRITEs go
MPE_VICTIMS = ["v%d" % i for i in range(8, 14)]


def kernel_has_mpe():
    """Does this kernel have the verbs of the Memory Placement Extensions
    (RDMA FLUSH and ATOMIC WRITE: 6.2 on)? Then a driver knows their
    opcodes, ours and the in-tree one alike. lib/guest.sh's
    kernel_has_mpe decides for every test; the test passes its answer in
    RXE_KERNEL_MPE."""
    return os.environ["RXE_KERNEL_MPE"] == "yes"


def pattern(seed, n):
    return bytes((i * 11 + seed) & 0xFF for i in range(n))


# --- target ------------------------------------------------------------------

def hw_counters(dev="rxe0"):
    d = "/sys/class/infiniband/%s/ports/1/hw_counters" % dev
    out = {}
    for name in os.listdir(d):
        if name == "lifespan":
            continue
        try:
            with open(os.path.join(d, name)) as f:
                out[name] = int(f.read())
        except (OSError, ValueError):
            pass
    return out


def udp_in():
    """InDatagrams of UDP over IPv4 and IPv6: what the stack handed to
    the RoCE sockets (encap_rcv) or any other UDP socket."""
    v4 = v6 = 0
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    v4 = int(rows[1][rows[0].index("InDatagrams")])
    with open("/proc/net/snmp6") as f:
        for line in f:
            k, v = line.split()
            if k == "Udp6InDatagrams":
                v6 = int(v)
    return v4 + v6


def target(peer4, peer6, me4, me6):
    # pylint: disable=too-many-locals,too-many-branches,too-many-statements
    import peer as P
    from pyverbs.mr import MR
    from rxelib import driver_state, events_until_quiet, qp_state
    e = P.e
    ep = P.Endpoint(mr_size=MR_SIZE)
    ep.mr.write(pattern(5, 4096), 4096, READ_OFF)
    ep.mr.write(struct.pack("<Q", 10), 8, ATOM_OFF)
    ro = MR(ep.pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ)
    ro.write(pattern(1, 4096), 4096, 0)
    mpe = kernel_has_mpe()
    mrs = {"ro": ro}
    if mpe:
        # Remote write and global visibility, not atomics.
        mrs["fl"] = MR(ep.pd, FL_SIZE, e.IBV_ACCESS_LOCAL_WRITE |
                       e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
                       ACCESS_FLUSH_GLOBAL)
        mrs["fl"].write(pattern(3, FL_SIZE), FL_SIZE, 0)
    ctl = P.Ctl.serve()
    hello = ctl.expect("hello")

    names = (["live", "ud", "uc", "reset", "init", "rtr", "fz", "fz2",
              "fz3"] + ["v%d" % i for i in range(1, 8)] + ["vr"] +
             ["rd", "nf", "gn", "tl"])
    if mpe:
        names += ["pl"] + MPE_VICTIMS
    types = {"ud": "UD", "uc": "UC"}
    qps = {n: ep.qp(types.get(n, "RC"), sig_all=int(n != "tl"))
           for n in names}
    for n, qp in qps.items():
        t = types.get(n, "RC")
        if n == "reset":
            continue
        if n == "init":
            ep.to_init(qp, t)
            continue
        if n == "live":
            ep.connect(qp, t, me4, peer4, hello["live"], LIVE_PSN, TARGET_PSN)
        else:
            flush = n == "pl" or n in MPE_VICTIMS
            # tl: a local ACK timeout of 1 s, not 67 ms, so that the
            # early retry timer alone decides when it sends again.
            ep.connect(qp, t, me4, peer4, DEAD_QPN,
                       VICTIM_PSN if n.startswith("v") or flush else 0, 0x10,
                       timeout=18 if n == "tl" else 14,
                       rts=n != "rtr", access=P.ACCESS |
                       e.IBV_ACCESS_MW_BIND |
                       (ACCESS_FLUSH_GLOBAL if flush else 0))
    for i in range(16):
        ep.post_recv(qps["live"], RECV_OFF + 1024 * (i % 8), 1024, 0x100 + i)
        ep.post_recv(qps["ud"], UD_OFF + 2048 * (i % 8), 2048, 0x200 + i)
    for i in range(8):
        ep.post_recv(qps["uc"], RECV_OFF, 4096, 0x300 + i)
        for n in ("fz", "fz2", "fz3"):
            ep.post_recv(qps[n], RECV_OFF, 4096, 0x400 + i)
        ep.post_recv(qps["rtr"], RECV_OFF, 4096, 0x500 + i)
        ep.post_recv(qps["gn"], RECV_OFF, 4096, 0x600 + i)
    byqpn = {qp.qp_num: n for n, qp in qps.items()}

    # The counters the test reads through sysfs are `rdma statistic`'s.
    rdma = json.loads(subprocess.run(
        ["rdma", "-j", "statistic", "show", "link", "rxe0/1"],
        check=True, capture_output=True, text=True).stdout)[0]
    sysfs = hw_counters()
    same = all(rdma.get(k) == v for k, v in sysfs.items()
               if not k.startswith(("sent", "rcvd", "rdma", "ack")))
    ctl.send(msg="hello", qpn={n: qp.qp_num for n, qp in qps.items()},
             addr=ep.mr.buf, rkey=ep.mr.rkey, ro_addr=ro.buf, ro_rkey=ro.rkey,
             mpe=mpe, fl_addr=mpe and mrs["fl"].buf,
             fl_rkey=mpe and mrs["fl"].rkey,
             counters_match=same, counter_names=sorted(rdma))

    pending = []        # completions polled while waiting for another
    churn = []          # QPs to destroy under a flood
    budget = []         # QPs whose READ responses the netdev keeps
    while True:
        msg = ctl.recv()
        cmd = msg["msg"]
        if cmd == "counters":
            ctl.send(msg="counters", hw=hw_counters(), udp=udp_in())
        elif cmd == "events":
            # The asynchronous events since the last ask, by type.
            got = events_until_quiet(ep.ctx, msg.get("timeout", 0.5), 0.2)
            ctl.send(msg="events", events=got)
        elif cmd == "state":
            st = {}
            for n, qp in qps.items():
                state = qp_state(qp)
                st[n] = STATE_NAMES.get(state, str(state))
            ctl.send(msg="state", state=st)
        elif cmd == "poll":
            n = msg.get("n", 64)
            wcs, pending = pending[:n], pending[n:]
            wcs += ep.poll(n - len(wcs), timeout=msg.get("timeout", 0.5))
            ctl.send(msg="poll", wcs=[dict(qp=byqpn.get(w.qp_num, w.qp_num),
                                           status=w.status, opcode=w.opcode,
                                           len=w.byte_len, wr_id=w.wr_id,
                                           imm=w.imm_data, flags=w.wc_flags)
                                      for w in wcs])
        elif cmd == "read":
            mr = mrs.get(msg.get("mr"), ep.mr)
            ctl.send(msg="read", data=mr.read(msg["len"], msg["off"]).hex())
        elif cmd == "read_gap":
            # A READ from the attacker, who answers it as it likes.
            wr = ep.send_wr(e.IBV_WR_RDMA_READ, GAP_OFF, msg["len"], 0x980)
            wr.set_wr_rdma(msg["rkey"], msg["va"])
            qps["rd"].post_send(wr)
            ctl.send(msg="read_gap")
        elif cmd == "read_write":
            # A READ and a WRITE behind it, both to the attacker; with
            # "atomic", a FETCH_ADD between them, its result at GAP_OFF
            # past the READ's bytes.
            qp = qps[msg["qp"]]
            wr = ep.send_wr(e.IBV_WR_RDMA_READ, GAP_OFF, msg["len"], 0x981)
            wr.set_wr_rdma(msg["rkey"], msg["va"])
            qp.post_send(wr)
            if msg.get("atomic"):
                wr = ep.send_wr(e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                GAP_OFF + msg["len"], 8, 0x983)
                wr.set_wr_atomic(msg["rkey"], msg["wva"] + 4096, 1, 0)
                qp.post_send(wr)
            if msg.get("send"):
                wr = ep.send_wr(e.IBV_WR_SEND, READ_OFF, msg["wlen"], 0x982)
            else:
                wr = ep.send_wr(e.IBV_WR_RDMA_WRITE, READ_OFF, msg["wlen"],
                                0x982)
                wr.set_wr_rdma(msg["rkey"], msg["wva"])
            qp.post_send(wr)
            ctl.send(msg="read_write")
        elif cmd == "fence":
            # A READ, a SEND and a fenced READ, all to the attacker.
            qp = qps[msg["qp"]]
            wr = ep.send_wr(e.IBV_WR_RDMA_READ, GAP_OFF, 1024, 0x985)
            wr.set_wr_rdma(msg["rkey"], msg["va"])
            qp.post_send(wr)
            qp.post_send(ep.send_wr(e.IBV_WR_SEND, READ_OFF, 64, 0x986))
            wr = ep.send_wr(e.IBV_WR_RDMA_READ, GAP_OFF + 1024, 1024, 0x987,
                            flags=e.IBV_SEND_SIGNALED | e.IBV_SEND_FENCE)
            wr.set_wr_rdma(msg["rkey"], msg["va"] + 1024)
            qp.post_send(wr)
            ctl.send(msg="fence")
        elif cmd == "send_read":
            # A SEND and a READ behind it, to the attacker.
            qp = qps[msg["qp"]]
            qp.post_send(ep.send_wr(e.IBV_WR_SEND, READ_OFF, 64, 0x98A))
            wr = ep.send_wr(e.IBV_WR_RDMA_READ, GAP_OFF, 1024, 0x98B)
            wr.set_wr_rdma(msg["rkey"], msg["va"])
            qp.post_send(wr)
            ctl.send(msg="send_read")
        elif cmd == "tail":
            # Unsignaled WRITEs of 64 B to the attacker, one post each,
            # the work requests built first so that the posts follow
            # each other closely.
            qp = qps[msg["qp"]]
            wrs = []
            for i in range(msg["n"]):
                wr = ep.send_wr(e.IBV_WR_RDMA_WRITE, READ_OFF + 64 * i, 64,
                                0x990 + i, flags=0)
                wr.set_wr_rdma(msg["rkey"], msg["va"] + 64 * i)
                wrs.append(wr)
            for wr in wrs:
                qp.post_send(wr)
            ctl.send(msg="tail")
        elif cmd == "to":
            # Move a QP to SQD (the drain's event asked for) or RTS.
            attr = P.QPAttr(qp_state=e.IBV_QPS_SQD if msg["state"] == "SQD"
                            else e.IBV_QPS_RTS)
            attr.en_sqd_async_notify = 1
            qps[msg["qp"]].modify(attr, e.IBV_QP_STATE |
                                  (e.IBV_QP_EN_SQD_ASYNC_NOTIFY
                                   if msg["state"] == "SQD" else 0))
            ctl.send(msg="to")
        elif cmd == "send":
            wr = ep.send_wr(e.IBV_WR_SEND, READ_OFF, msg["len"], 0x900)
            qps["live"].post_send(wr)
            status, end = None, time.time() + 20
            while status is None and time.time() < end:
                for w in ep.poll(1, timeout=1):
                    if w.wr_id == 0x900:
                        status = w.status
                    else:
                        pending.append(w)
            ctl.send(msg="send", status=status)
        elif cmd == "churn":
            # RC QPs for the attacker to flood with SENDs while they are
            # destroyed, one every "gap" seconds: packets are taken in
            # while destroy runs, and after.
            churn = [ep.qp("RC") for _ in range(msg["n"])]
            for qp in churn:
                ep.connect(qp, "RC", me4, peer4, DEAD_QPN, VICTIM_PSN, 0x10)
            ctl.send(msg="churn", qpn=[qp.qp_num for qp in churn])
        elif cmd == "churn_destroy":
            for qp in churn:
                qp.close()
                time.sleep(msg["gap"])
            churn = []
            ctl.send(msg="churn_destroy")
        elif cmd == "budget":
            # RC QPs whose READ responses the netdev keeps: a 1 kbit/s
            # tbf on eth0 for RoCE only (the control channel is TCP), so
            # that requests queue behind the first READ of each.
            subprocess.run(["sh", "-c", STICK_ROCE], check=True)
            budget = [ep.qp("RC") for _ in range(msg["n"])]
            for qp in budget:
                ep.connect(qp, "RC", me4, peer4, DEAD_QPN, VICTIM_PSN, 0x10)
            ctl.send(msg="budget", qpn=[qp.qp_num for qp in budget])
        elif cmd == "budget_state":
            queued = [int(driver_state("rxe0", qp.qp_num).get("req_queue", 0))
                      for qp in budget]
            ctl.send(msg="budget_state", queued=queued)
        elif cmd == "budget_end":
            for qp in budget:
                qp.close()
            budget = []
            subprocess.run(["tc", "qdisc", "del", "dev", "eth0", "root"],
                           check=True)
            ctl.send(msg="budget_end")
        elif cmd == "bye":
            ctl.send(msg="bye")
            break


# --- attacker ------------------------------------------------------------------

class Attacker:
    # pylint: disable=too-many-instance-attributes

    def __init__(self, argv):
        import peer as P
        self.P = P
        self.e = P.e
        (self.peer4, self.peer6, self.me4, self.me6, self.peer_mac,
         self.impl) = argv[:6]
        self.seed = int(argv[6])
        self.nfuzz = int(argv[7])
        self.ours = self.impl == "ours"
        self.ep = P.Endpoint(mr_size=MR_SIZE)
        self.ep.mr.write(pattern(9, 4096), 4096, 0)
        self.live = self.ep.qp("RC")
        self.raw = roce.Raw("eth0")
        self.ctl = P.Ctl.connect(self.peer4)
        self.ctl.send(msg="hello", live=self.live.qp_num)
        h = self.ctl.expect("hello")
        self.qpn = h["qpn"]
        self.addr, self.rkey = h["addr"], h["rkey"]
        self.ro_addr, self.ro_rkey = h["ro_addr"], h["ro_rkey"]
        # Whether the driver knows FLUSH and ATOMIC WRITE.
        self.mpe = kernel_has_mpe()
        self.known = roce.opcodes(self.mpe)
        self.fl_addr, self.fl_rkey = h["fl_addr"], h["fl_rkey"]
        check("target and attacker agree whether the kernel (%s) has FLUSH "
              "and ATOMIC WRITE (%s)" % (platform.release(),
                                         "yes" if self.mpe else "no"),
              h["mpe"] == self.mpe, h["mpe"])
        self.ep.connect(self.live, "RC", self.me4, self.peer4,
                        self.qpn["live"], TARGET_PSN, LIVE_PSN)
        for i in range(8):
            self.ep.post_recv(self.live, 8192 + 1024 * i, 1024, 0x700 + i)
        if self.ours:
            check("target: sysfs hw_counters say what `rdma statistic` says",
                  h["counters_match"])
            missing = [c for c in DROPS + ["rcvd_pkts", "duplicate_request",
                                           "out_of_seq_request",
                                           "send_seq_err", "rcvd_cnp",
                                           "held_request", "held_expired"]
                       if c not in h["counter_names"]]
            check("target: `rdma statistic` has every counter the test reads",
                  not missing, "missing %s" % missing)
        self.next_psn = LIVE_PSN     # the target's expected PSN on live
        self.sent = 0

    # --- plumbing ---

    def ask(self, what, **kw):
        self.ctl.send(msg=what, **kw)
        return self.ctl.expect(what)

    def counters(self):
        c = self.ask("counters")
        return c["hw"], c["udp"]

    def frame(self, transport, v6=False, src=None, dst=None, mac=None,
              vlan=None, **kw):
        """An Ethernet frame to the target's MAC (or mac) carrying the
        RoCEv2 bytes transport, from our address to the target's, IPv4
        or v6 (or src to dst), tagged with VLAN ID vlan if given."""
        me, peer = (self.me6, self.peer6) if v6 else (self.me4, self.peer4)
        kw.setdefault("sport", 0xD000)
        fr = roce.ether(mac or self.peer_mac, self.raw.mac,
                        roce.roce(src or me, dst or peer, transport, **kw))
        if vlan is None:
            return fr
        return fr[:12] + struct.pack(">HH", 0x8100, vlan) + fr[12:]

    def inject(self, frames, pace=16):
        for i, fr in enumerate(frames):
            self.raw.send(fr)
            if pace and i % pace == pace - 1:
                time.sleep(0.01)
        self.sent += len(frames)

    def settle(self, base_udp, n, timeout=8.0):
        """Wait until the target's stack took n more datagrams (or stops
        taking more); return its counters then."""
        end, last, still = time.time() + timeout, None, 0
        while True:
            hw, udp = self.counters()
            if udp - base_udp >= n or time.time() > end:
                return hw, udp
            if udp == last:
                still += 1
                if still >= 10:
                    return hw, udp
            else:
                still, last = 0, udp
            time.sleep(0.1)

    def phase(self, name, frames, want, extra=None, wait=0.3):
        """Inject frames; for ours, the counters must move by exactly
        `want` (a dict), and every other drop counter not at all. extra:
        counters whose delta must be at least the given value."""
        self.raw.drain()
        hw0, udp0 = self.counters()
        if os.environ.get("RXE_HOSTILE_DEBUG"):
            # One frame at a time, to see which one moves what.
            for i, fr in enumerate(frames):
                a, u = self.counters()
                self.inject([fr])
                b, _ = self.settle(u, 1)
                time.sleep(wait)
                b, _ = self.counters()
                info("  frame %d (%s): %s" % (i, fr[-(len(fr) - 42):][:16].hex(),
                                             {k: b[k] - a.get(k, 0) for k in b
                                              if b[k] != a.get(k, 0)}))
        else:
            self.inject(frames)
        hw1, udp1 = self.settle(udp0, len(frames))
        if wait:
            time.sleep(wait)
            hw1, _ = self.counters()
        check("%s: the target's stack took all %d datagrams" %
              (name, len(frames)), udp1 - udp0 == len(frames),
              "took %d" % (udp1 - udp0))
        if not self.ours:
            return hw0, hw1
        delta = {k: hw1.get(k, 0) - hw0.get(k, 0) for k in hw1}
        wrong = {k: delta.get(k, 0) for k in set(DROPS) | set(want)
                 if delta.get(k, 0) != want.get(k, 0)}
        for k, v in (extra or {}).items():
            if delta.get(k, 0) < v:
                wrong[k] = delta.get(k, 0)
        check("%s: %s" % (name, ", ".join("%s +%d" % kv for kv in
                                          sorted(want.items())) or
                          "no drop counter moves"), not wrong,
              "moved: %s" % {k: v for k, v in delta.items() if v})
        return hw0, hw1

    def expired_since(self, base, want, timeout=5.0):
        """held_expired less base, once it reaches want or the timeout
        (100 ms is the hold; a slow guest may take longer to run the
        timer), and a moment more for any surplus to show."""
        end = time.time() + timeout
        n = self.counters()[0].get("held_expired", 0) - base
        while n < want and time.time() < end:
            time.sleep(0.1)
            n = self.counters()[0].get("held_expired", 0) - base
        time.sleep(0.3)
        return self.counters()[0].get("held_expired", 0) - base

    def replies(self, timeout=1.5, count=None, want=None):
        return self.raw.recv(timeout, want=lambda p: p.src == self.peer4 and
                             (want is None or want(p)), count=count)

    # --- packets ---

    def send_only(self, qpn, psn, payload=b"hostile!", **kw):
        pad = -len(payload) % 4
        return roce.bth(roce.OP["RC SEND_ONLY"], qpn, psn, pad=pad, ack=1,
                        **kw) + payload + b"\0" * pad

    def ack(self, qpn, psn, syn, msn=1):
        """An ACKNOWLEDGE to the target's QP qpn: an ACK, an RNR NAK or a
        NAK (syndrome)."""
        return self.frame(roce.bth(roce.OP["RC ACKNOWLEDGE"], qpn,
                                   psn & 0xFFFFFF) + roce.aeth(syn, msn))

    def read_rsp(self, qpn, psn, kind, payload):
        """A READ response of kind FIRST, MIDDLE, LAST or ONLY to the
        target's QP qpn, the ones that end a READ request with an AETH."""
        hdr = roce.bth(roce.OP["RC RDMA_READ_RESPONSE_" + kind], qpn,
                       psn & 0xFFFFFF)
        if kind != "MIDDLE":
            hdr += roce.aeth(0x1F, 1)
        return self.frame(hdr + payload)

    # --- phases ---

    def warm_up(self):
        """Live traffic both ways, so that the live QPs have history: a
        SEND, a READ and an atomic from us, a SEND from the target. The
        target then expects PSN 2 (the READ takes two, across the wrap)."""
        e, ep = self.e, self.ep
        ok = True
        wr = ep.send_wr(e.IBV_WR_SEND, 0, 100, 1)
        self.live.post_send(wr)
        wr = ep.send_wr(e.IBV_WR_RDMA_READ, 4096, 2000, 2)
        wr.set_wr_rdma(self.rkey, self.addr + READ_OFF)
        self.live.post_send(wr)
        wr = ep.send_wr(e.IBV_WR_ATOMIC_FETCH_AND_ADD, 12288, 8, 3)
        wr.set_wr_atomic(self.rkey, self.addr + ATOM_OFF, 1)
        self.live.post_send(wr)
        wcs = ep.poll(3, timeout=30)
        ok &= check("warm-up: SEND, READ, FETCH_ADD on the live QP complete",
                    len(wcs) == 3 and all(w.status == 0 for w in wcs),
                    [(w.wr_id, w.status) for w in wcs])
        ok &= check("warm-up: the READ brought the target's data",
                    ep.mr.read(2000, 4096) == pattern(5, 2000))
        ok &= check("warm-up: FETCH_ADD returned 10",
                    struct.unpack("<Q", ep.mr.read(8, 12288))[0] == 10)
        r = self.ask("send", len=50)
        ok &= check("warm-up: a SEND from the target completes",
                    r["status"] == 0, r)
        wcs = ep.poll(1, timeout=10)
        ok &= check("warm-up: ... and arrives", len(wcs) == 1 and
                    wcs[0].status == 0 and wcs[0].byte_len == 50)
        w = self.ask("poll", n=1, timeout=5)["wcs"]
        ok &= check("warm-up: the target received the SEND",
                    len(w) == 1 and w[0]["status"] == 0 and w[0]["len"] == 100,
                    w)
        self.next_psn = 2
        self.read_psn = 0xFFFFFF
        self.atomic_psn = 1
        return ok

    def door(self):
        """Packets the door must drop, each class to its counter."""
        live = self.qpn["live"]
        psn = self.next_psn
        good = self.send_only(live, psn)
        OP = roce.OP

        self.phase("bad ICRC, IPv4 (5 SENDs at the expected PSN)",
                   [self.frame(good, good_icrc=False) for _ in range(5)],
                   {"drop_icrc_err": 5})
        self.phase("bad ICRC, IPv6 (3)",
                   [self.frame(good, v6=True, good_icrc=False)
                    for _ in range(3)], {"drop_icrc_err": 3})
        # One covered byte changed after the ICRC was computed.
        fr = bytearray(self.frame(good))
        fr[14 + 4] ^= 0x01              # IPv4 identification
        fr[14 + 10:14 + 12] = b"\0\0"
        ipck = roce._csum(bytes(fr[14:34]))      # pylint: disable=protected-access
        fr[14 + 10:14 + 12] = struct.pack(">H", ipck)
        self.phase("a covered IP byte changed after the ICRC (IP id)",
                   [bytes(fr)], {"drop_icrc_err": 1})

        # FLUSH and ATOMIC WRITE (0x1c, 0x1d) are unknown only to a kernel
        # without their verbs; placement() has them where they are known.
        bad_ops = [0x15, 0x18, 0x1C, 0x1D, 0x1F, 0x2C, 0x40, 0x45, 0x63, 0x66,
                   0x80, 0xA0, 0xA4, 0xC0, 0xE0, 0xFF]
        bad_ops = [op for op in bad_ops if op not in self.known]
        self.phase("unknown opcodes (%d: reserved RC/UC/UD, RD, XRC, %sCNP "
                   "class, reserved transports)" %
                   (len(bad_ops), "" if self.mpe else "FLUSH, ATOMIC WRITE, "),
                   [self.frame(roce.bth(op, live, psn) + b"\0" * 32)
                    for op in bad_ops], {"drop_bad_opcode": len(bad_ops)})
        if not self.mpe:
            # Well-formed ones at the expected PSN: a driver that took them
            # would answer (or NAK) them and move the PSN on.
            me = self.live.qp_num
            mpe = [roce.bth(OP["RC FLUSH"], live, psn, ack=1) +
                   roce.feth(roce.FLUSH_GLOBAL) +
                   roce.reth(self.addr + WRITE_OFF, self.rkey, 64),
                   roce.bth(OP["RC ATOMIC_WRITE"], live, psn, ack=1) +
                   roce.reth(self.addr + WRITE_OFF, self.rkey, 8) +
                   b"\x01\x23\x45\x67\x89\xab\xcd\xef"]
            self.phase("FLUSH and ATOMIC WRITE at the live QP's expected PSN, "
                       "on a kernel without them (%s)" % platform.release(),
                       [self.frame(t) for t in mpe],
                       {"drop_bad_opcode": len(mpe)})
            ans = self.replies(timeout=1.0, want=lambda p: p.qpn == me)
            check("FLUSH and ATOMIC WRITE on a kernel without them: nothing "
                  "is answered", not ans, [(p.name, p.psn) for p in ans])

        short = [
            b"",                                        # no BTH at all
            b"\x04\x00\xff\xff",                        # 4 bytes
            roce.bth(OP["RC SEND_ONLY"], live, psn)[:11],
            roce.bth(OP["RC SEND_ONLY"], live, psn),    # no room for ICRC
            roce.bth(OP["RC RDMA_WRITE_FIRST"], live, psn) + b"\0" * 8,
            roce.bth(OP["RC COMPARE_SWAP"], live, psn) + b"\0" * 20,
            roce.bth(OP["RC ACKNOWLEDGE"], live, psn),
            roce.bth(OP["UD SEND_ONLY"], self.qpn["ud"], 0) + b"\0" * 4,
            roce.bth(OP["RC RDMA_WRITE_ONLY_WITH_IMMEDIATE"], live, psn) +
            b"\0" * 16,
            roce.bth(0x81, live, 0) + b"\0" * 8,        # CNP without its 16
        ]
        self.phase("truncated: shorter than BTH, BTH + ext headers, or ICRC "
                   "(%d)" % len(short),
                   [self.frame(t, raw=True) for t in short],
                   {"drop_malformed": len(short)})

        # The in-tree rxe takes payloads on opcodes without one and
        # lengths that are not whole words: it would execute these at the
        # live QP's expected PSN and lose the connection's PSN sync, so
        # there they go to a fuzz QP.
        to = live if self.ours else self.qpn["fz3"]
        padded = [
            # pad 3 with one payload byte: pad longer than the payload
            roce.bth(OP["RC SEND_ONLY"], to, psn, pad=3) + b"x",
            # an ACK with pad 1 and no byte for it
            roce.bth(OP["RC ACKNOWLEDGE"], to, psn, pad=1) +
            roce.aeth(0x1F, 0),
            # payload on opcodes without one
            roce.bth(OP["RC ACKNOWLEDGE"], to, psn) + roce.aeth(0x1F, 0) +
            b"data",
            roce.bth(OP["RC RDMA_READ_REQUEST"], to, psn) +
            roce.reth(self.addr, self.rkey, 8) + b"data",
            roce.bth(OP["RC FETCH_ADD"], to, psn) +
            roce.atomiceth(self.addr, self.rkey, 1) + b"data",
            # payload + pad not a multiple of 4
            roce.bth(OP["RC SEND_ONLY"], to, psn) + b"12345",
            roce.bth(OP["RC SEND_ONLY"], to, psn, pad=1) + b"12",
            roce.bth(OP["RC ACKNOWLEDGE"], to, psn, pad=2) +
            roce.aeth(0x1F, 0) + b"\0\0",
        ]
        self.phase("bad pad or payload (%d)" % len(padded),
                   [self.frame(t) for t in padded],
                   {"drop_malformed": len(padded)})

        self.phase("transport header version 1..15 (15)",
                   [self.frame(self.send_only(live, psn, tver=v))
                    for v in range(1, 16)], {"drop_malformed": 15})

    def demux(self):
        """Packets with good headers for no QP that may take them."""
        q = self.qpn
        psn = self.next_psn
        OP = roce.OP
        unknown = [0, max(q.values()) + 100, 0xFFFFFE, 0xFFFFFF, 0x123456]
        self.phase("unknown destination QPNs %s" % [hex(x) for x in unknown],
                   [self.frame(self.send_only(n, 0)) for n in unknown],
                   {"rcvd_pkts": len(unknown), "drop_unknown_qpn": len(unknown)})
        pkeys = [0x0000, 0x1234, 0x7FFE, 0xFFFE, 0x8001]
        self.phase("wrong P_Keys %s to the live QP" % [hex(k) for k in pkeys],
                   [self.frame(self.send_only(q["live"], psn, pkey=k))
                    for k in pkeys],
                   {"rcvd_pkts": len(pkeys), "drop_pkey_err": len(pkeys)})
        self.phase("wrong P_Key to the UD QP",
                   [self.frame(roce.ud_send(q["ud"], self.P.QKEY, pkey=0x1234))],
                   {"rcvd_pkts": 1, "drop_pkey_err": 1})
        qkeys = [self.P.QKEY ^ 1, 0, 0x80000000 | self.P.QKEY, GSI_QKEY]
        self.phase("wrong Q_Keys to the UD QP (4, the controlled bit too)",
                   [self.frame(roce.ud_send(q["ud"], k)) for k in qkeys],
                   {"rcvd_pkts": 4, "drop_qkey_err": 4})
        self.phase("wrong Q_Key to the GSI QP (QP1)",
                   [self.frame(roce.ud_send(1, self.P.QKEY))],
                   {"rcvd_pkts": 1, "drop_qkey_err": 1})
        st = [self.frame(self.send_only(q["reset"], 0)),
              self.frame(self.send_only(q["init"], 0)),
              self.frame(roce.ud_send(q["reset"], 0)),
              self.frame(roce.bth(OP["RC ACKNOWLEDGE"], q["rtr"], 0x10) +
                         roce.aeth(0x1F, 0)),
              self.frame(roce.bth(OP["RC RDMA_READ_RESPONSE_ONLY"], q["init"],
                                  0) + roce.aeth(0x1F, 0) + b"resp")]
        # A RESET QP has no transport yet: an RC QP in RESET still counts
        # as RC, so the UD packet to it is a transport mismatch.
        self.phase("QPs in RESET, INIT (requests) and RTR (responses)",
                   st, {"rcvd_pkts": 5, "drop_qp_state": 4,
                        "drop_bad_opcode": 1})
        mism = [self.frame(roce.bth(OP["UC SEND_ONLY"], q["live"], psn) +
                           b"uc!!"),
                self.frame(roce.ud_send(q["live"], 0)),
                self.frame(self.send_only(q["ud"], 0)),
                self.frame(self.send_only(q["uc"], 0)),
                self.frame(roce.bth(OP["RC RDMA_READ_REQUEST"], q["uc"], 0) +
                           roce.reth(self.addr, self.rkey, 8))]
        self.phase("opcodes of another transport than the QP's (5)", mism,
                   {"rcvd_pkts": 5, "drop_bad_opcode": 5})
        self.phase("a CNP to the live QP is counted, not processed",
                   [self.frame(roce.bth(0x81, q["live"], 0, becn=1) +
                               b"\0" * 16)],
                   {"rcvd_pkts": 1, "rcvd_cnp": 1})

    def addresses(self):
        """A connected QP takes packets from its peer's address to its own
        only; a datagram sent to a broadcast address, or to a multicast
        address no QP of the target attached to (here none is), reaches no
        QP. Without these checks any host could inject into a connection
        whose QPN and PSN it guessed."""
        q, OP = self.qpn, roce.OP
        live, nxt = q["live"], self.next_psn
        a, b, c, _ = self.peer4.split(".")
        spoof4 = "%s.%s.%s.%d" % (a, b, c, 200)
        bcast4 = "%s.%s.%s.255" % (a, b, c)
        off = WRITE_OFF + 3072
        before = self.ask("read", off=off, len=64)["data"]

        write = roce.bth(OP["RC RDMA_WRITE_ONLY"], live, nxt, ack=1) + \
            roce.reth(self.addr + off, self.rkey, 64) + b"spoofed!" * 8
        frames = [
            self.frame(self.send_only(live, nxt), src=spoof4),
            self.frame(write, src=spoof4),
            # The right host, the other family: not the path's address.
            self.frame(write, v6=True),
            self.frame(roce.bth(OP["RC ACKNOWLEDGE"], live, TARGET_PSN + 1) +
                       roce.aeth(roce.NAK_ACC, 5), src=spoof4),
            self.frame(roce.bth(OP["UC SEND_ONLY"], q["uc"], 0) + b"uc-spoof",
                       src=spoof4),
        ]
        what = ("requests and a NAK to the live and UC QPs from another IPv4 "
                "address, and a WRITE from the peer's IPv6 address")
        if self.ours:
            # The right addresses, through another netdev of the target:
            # VLAN TARGET_VLAN, whose device it has, without an address.
            # The in-tree driver checks addresses only, and would execute
            # it (and expect the PSN after it).
            frames.append(self.frame(write, vlan=TARGET_VLAN))
            what += ", and one from its IPv4 address tagged VLAN %d" % \
                TARGET_VLAN
        # The NAK is for no PSN in flight: only the counters judge it.
        self.phase(what, frames, {"rcvd_pkts": len(frames),
                                  "drop_addr_err": len(frames)})
        ud = roce.ud_send(q["ud"], self.P.QKEY, b"to-many!")
        # Each of the driver's tests in turn: the frame's type, then the
        # IP address (in frames to the target's own MAC).
        many = [
            self.frame(ud, mac="ff:ff:ff:ff:ff:ff"),
            self.frame(ud, dst="255.255.255.255", mac="ff:ff:ff:ff:ff:ff"),
            self.frame(ud, v6=True, dst="ff02::1", mac="33:33:00:00:00:01"),
            self.frame(ud, dst=bcast4),
            self.frame(ud, dst="224.0.0.1"),
            self.frame(ud, v6=True, dst="ff02::1"),
        ]
        self.phase("a datagram to the UD QP in broadcast and multicast "
                   "frames, and in frames to the target to %s, 224.0.0.1 "
                   "and ff02::1" % bcast4, many, {"drop_addr_err": 6})
        if not self.ours:
            return
        w = self.ask("poll", n=16, timeout=1)["wcs"]
        check("no QP completed a spoofed or broadcast packet", not w, w)
        check("the spoofed WRITEs did not land",
              self.ask("read", off=off, len=64)["data"] == before)

    def masked(self):
        """Fields routers rewrite are outside the ICRC: a datagram with
        odd TTL, DSCP/ECN, flow label, FECN/BECN must still arrive."""
        q = self.qpn
        body4 = roce.ud_send(q["ud"], self.P.QKEY, b"masked-v4", fecn=1,
                             becn=1, resv6=0x3F)
        body6 = roce.ud_send(q["ud"], self.P.QKEY, b"masked-v6!", fecn=1,
                             becn=1, resv6=0x3F)
        # An IPv4 header with options (a NOP and an end-of-list, padded):
        # the ICRC covers them, the GRH is the base header.
        body4o = roce.ud_send(q["ud"], self.P.QKEY, b"ip-options!!")
        frames = [self.frame(body4, ttl=3, tos=0x2B, ident=0x4242),
                  self.frame(body6, v6=True, ttl=2, tos=0xAB, flow=0x9ABCD),
                  self.frame(body4o, opts=b"\x01\x01\x01\x00")]
        self.phase("masked fields changed (TTL, DSCP/ECN, flow label, "
                   "FECN/BECN), and IPv4 options: accepted", frames,
                   {"rcvd_pkts": 3})
        w = self.ask("poll", n=16, timeout=2)["wcs"]
        lens = sorted(x["len"] for x in w if x["qp"] == "ud" and
                      x["status"] == 0)
        if not self.ours and lens == [49, 50]:
            # Its ICRC takes the first 28 bytes from the IP header for
            # IPv4 and UDP headers, options or not.
            info("the in-tree rxe drops IPv4 packets with options (ICRC): "
                 "not judged")
            lens.append(52)
        check("masked fields changed, IPv4 options: the three datagrams "
              "reach the UD QP (40-byte GRH + payload)", lens == [49, 50, 52],
              w)

    def live_hostile(self):
        """Well-formed but protocol-hostile requests to the live QP."""
        q = self.qpn
        live, OP = q["live"], roce.OP
        me = self.live.qp_num
        nxt = self.next_psn
        to_me = lambda op: lambda p: p.qpn == me and p.opcode == op  # noqa: E731

        self.phase("duplicate SEND (PSN 0xfffffe, 4 behind)",
                              [self.frame(self.send_only(live, LIVE_PSN))],
                              {"rcvd_pkts": 1, "duplicate_request": 1})
        acks = self.replies(count=1, want=to_me(OP["RC ACKNOWLEDGE"]))
        check("duplicate SEND: the target ACKs the last PSN it executed (%d)"
              % (nxt - 1), acks and acks[0].psn == nxt - 1 and
              acks[0].hdrs["AETH"]["syndrome"] >> 5 == 0,
              aeths(acks))

        self.phase("duplicate SEND far behind (PSN - 2^22)",
                   [self.frame(self.send_only(live, (nxt - (1 << 22)) &
                                              0xFFFFFF))],
                   {"rcvd_pkts": 1, "duplicate_request": 1})

        # The warm-up's READ asked for 2000 B, two responses across the
        # PSN wrap. A duplicate of it is answered again, and one that asks
        # for less (a requester that kept the responses past a gap asks
        # again for the gap only) is answered up to its own length.
        dups = (("duplicate READ", 2000,
                 "the responses are sent again, PSN 0xffffff then 0 "
                 "(first, last)", [(0x0D, 0xFFFFFF), (0x0F, 0)]),
                ("duplicate READ of 1024 B", 1024,
                 "one response, Only, PSN 0xffffff", [(0x10, 0xFFFFFF)]))
        for name, length, what, want in dups:
            rd = roce.bth(OP["RC RDMA_READ_REQUEST"], live, self.read_psn,
                          ack=1) + \
                roce.reth(self.addr + READ_OFF, self.rkey, length)
            self.phase("%s request (the warm-up's, PSN 0xffffff)" % name,
                       [self.frame(rd)],
                       {"rcvd_pkts": 1, "duplicate_request": 1})
            rsp = self.replies(count=2, want=lambda p: p.qpn == me and
                               p.opcode in (0x0D, 0x0E, 0x0F, 0x10))
            check("%s: %s" % (name, what),
                  [(p.opcode, p.psn) for p in rsp] == want,
                  [(p.name, hex(p.psn)) for p in rsp])
            check("%s: with the same data" % name,
                  b"".join(p.payload for p in rsp) ==
                  pattern(5, 2000)[:length])

        at = roce.bth(OP["RC FETCH_ADD"], live, self.atomic_psn, ack=1) + \
            roce.atomiceth(self.addr + ATOM_OFF, self.rkey, 1)
        self.phase("duplicate FETCH_ADD (the warm-up's, PSN 1)",
                   [self.frame(at)], {"rcvd_pkts": 1, "duplicate_request": 1})
        aa = self.replies(count=1, want=to_me(OP["RC ATOMIC_ACKNOWLEDGE"]))
        check("duplicate FETCH_ADD: the kept original value (10) is sent again",
              aa and aa[0].psn == 1 and aa[0].hdrs["AtomicAckETH"]["orig"] == 10,
              [(p.psn, p.hdrs.get("AtomicAckETH")) for p in aa])
        val = struct.unpack("<Q", bytes.fromhex(
            self.ask("read", off=ATOM_OFF, len=8)["data"]))[0]
        check("duplicate FETCH_ADD: not executed again (target holds 11)",
              val == 11, val)

        # Ours keeps a packet that arrives past a gap for when the gap
        # fills (held_request), but not for long: these expire unused,
        # 100 ms after they came, with no packet after them.
        self.expired0 = self.counters()[0].get("held_expired", 0)
        self.phase("out-of-sequence SEND (PSN expected + 5)",
                   [self.frame(self.send_only(live, nxt + 5))],
                   {"rcvd_pkts": 1, "out_of_seq_request": 1,
                    "send_seq_err": 1, "held_request": 1})
        naks = self.replies(count=1, want=to_me(OP["RC ACKNOWLEDGE"]))
        check("out-of-sequence SEND: NAK PSN sequence error for the expected "
              "PSN %d" % nxt, naks and naks[0].psn == nxt and
              naks[0].hdrs["AETH"]["syndrome"] == roce.NAK_SEQ,
              aeths(naks))
        self.phase("out-of-sequence again, same gap (PSN expected + 6)",
                   [self.frame(self.send_only(live, nxt + 6))],
                   {"rcvd_pkts": 1, "out_of_seq_request": 1,
                    "held_request": 1})
        naks = self.replies(timeout=1.0, want=to_me(OP["RC ACKNOWLEDGE"]))
        check("out-of-sequence again: no second NAK for the same gap "
              "(IBA 9.7.5.1.3)", not naks,
              aeths(naks))
        # A damaged packet in an open gap is a damaged packet: the ICRC is
        # checked before the sequence, whatever the PSN, and nothing in it
        # moves the responder (not even to NAK the PSN after the gap).
        self.phase("damaged, ahead in the same gap (PSN expected + 7, bad "
                   "ICRC)",
                   [self.frame(self.send_only(live, nxt + 7), good_icrc=False)],
                   {"drop_icrc_err": 1})
        self.phase("damaged, at the expected PSN in an open gap (bad ICRC)",
                   [self.frame(self.send_only(live, nxt), good_icrc=False)],
                   {"drop_icrc_err": 1})
        self.phase("damaged, expected + 1 after later ones (bad ICRC; a good "
                   "one would draw a second NAK)",
                   [self.frame(self.send_only(live, nxt + 1), good_icrc=False)],
                   {"drop_icrc_err": 1})
        naks = self.replies(timeout=1.0, want=to_me(OP["RC ACKNOWLEDGE"]))
        check("damaged packets in an open gap draw no NAK", not naks,
              aeths(naks))
        # The same packet undamaged: the requester visibly started over and
        # lost the expected PSN again, which is worth a second NAK to ours
        # (the kernel's driver waits for the requester's ACK timer).
        self.phase("expected + 1 after later ones, undamaged",
                   [self.frame(self.send_only(live, nxt + 1))],
                   {"rcvd_pkts": 1, "out_of_seq_request": 1,
                    "send_seq_err": 1, "held_request": 1})
        naks = self.replies(count=1, want=to_me(OP["RC ACKNOWLEDGE"]))
        if self.ours:
            check("expected + 1 after later ones: a second NAK PSN sequence "
                  "error for %d" % nxt, naks and naks[0].psn == nxt and
                  naks[0].hdrs["AETH"]["syndrome"] == roce.NAK_SEQ,
                  aeths(naks))
            # Kept packets expire on their own (RXE_HOLD_MAX_AGE_MS, 100
            # ms), not only when the next packet finds them.
            n = self.expired_since(self.expired0, 3)
            check("the 3 SENDs kept on the live QP expired unused with no "
                  "packet after them (held_expired +%d, want 3)" % n, n == 3)

        # The target's requester: responses it never asked for.
        tpsn = (TARGET_PSN + 1) & 0xFFFFFF     # its next PSN
        rsps = [roce.bth(OP["RC ACKNOWLEDGE"], live, tpsn + 1000) +
                roce.aeth(0x1F, 5),
                roce.bth(OP["RC ACKNOWLEDGE"], live, tpsn) +
                roce.aeth(roce.NAK_ACC, 5),
                roce.bth(OP["RC ACKNOWLEDGE"], live, tpsn + 3) +
                roce.aeth(roce.AETH_RNR | 1, 5),
                roce.bth(OP["RC RDMA_READ_RESPONSE_ONLY"], live, TARGET_PSN) +
                roce.aeth(0x1F, 5) + b"resp",
                roce.bth(OP["RC ATOMIC_ACKNOWLEDGE"], live, tpsn + 7) +
                roce.aeth(0x1F, 5) + roce.atomicacketh(0xDEAD),
                roce.bth(OP["RC ACKNOWLEDGE"], live, tpsn - 0x400000) +
                roce.aeth(roce.NAK_SEQ, 5)]
        self.phase("ACK, NAK, RNR NAK, READ response, atomic ACK the target's "
                   "requester never asked for (future and past PSNs)",
                   [self.frame(r) for r in rsps], {"rcvd_pkts": len(rsps)})
        st = self.ask("state")["state"]
        check("the live QP is still RTS on the target", st["live"] == "RTS", st)

    def victims(self):
        """Requests the responder must refuse with a NAK; IBA 9.9.3.1: an
        RC responder that NAKs an invalid request or a remote access error
        puts its QP in the error state."""
        q = self.qpn
        OP = roce.OP
        p = VICTIM_PSN
        bogus = self.rkey ^ 0x5A5A5A00
        cases = [
            ("v1", "WRITE with an R_Key that does not exist",
             roce.bth(OP["RC RDMA_WRITE_ONLY"], q["v1"], p, ack=1) +
             roce.reth(self.addr + WRITE_OFF, bogus, 16) + b"x" * 16,
             roce.NAK_ACC),
            ("v2", "WRITE past the end of the MR",
             roce.bth(OP["RC RDMA_WRITE_ONLY"], q["v2"], p, ack=1) +
             roce.reth(self.addr + MR_SIZE - 8, self.rkey, 16) + b"x" * 16,
             roce.NAK_ACC),
            ("v3", "WRITE to an MR without remote write access",
             roce.bth(OP["RC RDMA_WRITE_ONLY"], q["v3"], p, ack=1) +
             roce.reth(self.ro_addr, self.ro_rkey, 16) + b"x" * 16,
             roce.NAK_ACC),
            ("v4", "READ of 256 MiB from a 64 KiB MR",
             roce.bth(OP["RC RDMA_READ_REQUEST"], q["v4"], p, ack=1) +
             roce.reth(self.addr, self.rkey, 1 << 28), roce.NAK_ACC),
            ("v5", "CMP_SWP at a misaligned address",
             roce.bth(OP["RC COMPARE_SWAP"], q["v5"], p, ack=1) +
             roce.atomiceth(self.addr + ATOM_OFF + 4, self.rkey, 1, 10),
             roce.NAK_INV),
            ("v6", "SEND_MIDDLE with no SEND_FIRST before it",
             roce.bth(OP["RC SEND_MIDDLE"], q["v6"], p) + b"m" * 1024,
             roce.NAK_INV),
            ("v7", "WRITE carrying more than its RETH length",
             roce.bth(OP["RC RDMA_WRITE_ONLY"], q["v7"], p, ack=1) +
             roce.reth(self.addr + WRITE_OFF, self.rkey, 8) + b"x" * 16,
             roce.NAK_INV),
        ]
        before = self.ask("read", off=WRITE_OFF, len=64)["data"]
        self.ask("events", timeout=0)      # what earlier phases raised
        for name, what, pkt, syn in cases:
            self.phase("%s: %s" % (name, what), [self.frame(pkt)],
                       {"rcvd_pkts": 1})
            naks = self.replies(count=1, want=lambda x, n=name:
                                x.qpn == DEAD_QPN and x.opcode == 0x11)
            check("%s: answered with a NAK 0x%02x for PSN 0x%x" % (what, syn, p),
                  naks and naks[0].psn == p and
                  naks[0].hdrs["AETH"]["syndrome"] == syn,
                  [(hex(x.psn), hex(x.hdrs["AETH"]["syndrome"])) for x in naks])
        st = self.ask("state")["state"]
        bad = {n: st[n] for n, _, _, _ in cases if st[n] != "ERR"}
        check("every victim QP is in the error state after its NAK", not bad, bad)
        # IBA 11.6.3: each says why to its consumer. The in-tree driver
        # (6.1) raises none of these.
        if self.ours:
            got = sorted(self.ask("events")["events"])
            want = sorted([self.e.IBV_EVENT_QP_ACCESS_ERR] * 4 +
                          [self.e.IBV_EVENT_QP_REQ_ERR] * 3)
            check("every victim QP raised its affiliated error: 4 "
                  "QP_ACCESS_ERR (R_Key, bounds, access, READ length), 3 "
                  "QP_REQ_ERR (misaligned atomic, opcode sequence, length)",
                  got == want, "got %s, want %s" % (got, want))
        check("no victim wrote the target's memory",
              self.ask("read", off=WRITE_OFF, len=64)["data"] == before)
        val = struct.unpack("<Q", bytes.fromhex(
            self.ask("read", off=ATOM_OFF, len=8)["data"]))[0]
        check("the misaligned CMP_SWP changed nothing (target holds 11)",
              val == 11, val)

    def rnr_from_held(self):
        """A SEND kept past a gap draws an RNR NAK when its turn comes (QP
        vr has no receive WQE): that NAK names its PSN, and no NAK PSN
        sequence error for the same PSN may follow it, though a packet
        after it is still kept. One would send a requester that goes back
        on a sequence NAK at once, not after its RNR wait. The one still
        kept then expires with no packet after it."""
        q = self.qpn["vr"]
        OP = roce.OP
        p = VICTIM_PSN
        exp0 = self.counters()[0].get("held_expired", 0)
        frames = [self.frame(self.send_only(q, p + 1)),
                  self.frame(self.send_only(q, p + 2)),
                  # zero bytes: nothing to place, and no R_Key to check
                  self.frame(roce.bth(OP["RC RDMA_WRITE_ONLY"], q, p, ack=1) +
                             roce.reth(self.addr + WRITE_OFF, self.rkey, 0))]
        self.phase("vr: SENDs at +1 and +2, kept, then a WRITE at the PSN "
                   "awaited, with no receive WQE for the SENDs", frames,
                   {"rcvd_pkts": 3, "out_of_seq_request": 2,
                    "held_request": 2, "send_seq_err": 1})
        got = [(x.psn - p, x.hdrs["AETH"]["syndrome"] & 0xE0)
               for x in self.replies(timeout=1.0, want=lambda x:
                                     x.qpn == DEAD_QPN and x.opcode == 0x11)]
        if not self.ours:
            return
        # (PSN - p, AETH type): a NAK sequence error for p, the ACK for
        # the WRITE, an RNR NAK for the first SEND.
        check("vr: a NAK sequence error for +0, the WRITE's ACK, an RNR "
              "NAK for +1, and no NAK sequence error for +1",
              got == [(0, roce.NAK_SEQ), (0, 0), (1, roce.AETH_RNR)], got)
        n = self.expired_since(exp0, 1)
        check("vr: the SEND still kept (+2) expired with no packet after it "
              "(held_expired +%d, want 1)" % n, n == 1)

    def uc(self):
        """UC has no NAKs: bad requests are dropped and the QP lives on."""
        q = self.qpn
        OP = roce.OP
        frames = [
            self.frame(roce.bth(OP["UC SEND_MIDDLE"], q["uc"], 0) + b"m" * 1024),
            self.frame(roce.bth(OP["UC RDMA_WRITE_ONLY"], q["uc"], 1) +
                       roce.reth(self.addr, self.rkey ^ 0x5A5A5A00, 8) + b"w" * 8),
            self.frame(roce.bth(OP["UC SEND_LAST"], q["uc"], 2) + b"l" * 4),
            # a new message after a gap: a first packet resynchronises
            self.frame(roce.bth(OP["UC SEND_ONLY"], q["uc"], 7) + b"uc-ok!!!"),
        ]
        # Each refusal is counted, though UC answers none; the SEND after
        # the gap counts as out of sequence, and is delivered.
        self.phase("UC: MIDDLE and LAST without FIRST, WRITE with a bad "
                   "R_Key, then a SEND after a PSN gap", frames,
                   {"rcvd_pkts": 4, "drop_uc_msg": 3,
                    "out_of_seq_request": 1})
        rep = self.replies(timeout=1.0, want=lambda p: p.qpn == DEAD_QPN)
        check("UC: nothing is answered", not rep, [p.name for p in rep])
        w = [x for x in self.ask("poll", n=4, timeout=3)["wcs"] if x["qp"] == "uc"]
        check("UC: the SEND after the gap is delivered, alone",
              [(x["status"], x["len"]) for x in w] == [(0, 8)], w)
        st = self.ask("state")["state"]
        check("UC: the QP is still RTS", st["uc"] == "RTS", st)

        # A SEND that loses its middle leaves its receive WQE taken, for
        # the next message: here a WRITE with immediate, then a SEND,
        # each completing into the next WQE in the order posted. None may
        # go missing in between (IBA 9.8.3: the WQE is reused).
        frames = [
            self.frame(roce.bth(OP["UC SEND_FIRST"], q["uc"], 8) + b"f" * 1024),
            self.frame(roce.bth(OP["UC RDMA_WRITE_ONLY_WITH_IMMEDIATE"],
                                q["uc"], 10) +
                       roce.reth(self.addr + WRITE_OFF + 2048, self.rkey, 8) +
                       roce.immdt(0x1234ABCD) + b"uc-wimm!"),
            self.frame(roce.bth(OP["UC SEND_ONLY"], q["uc"], 11) + b"uc-after"),
        ]
        self.phase("UC: a SEND that lost its middle, then a WRITE with "
                   "immediate and a SEND", frames,
                   {"rcvd_pkts": 3, "out_of_seq_request": 1})
        w2 = [x for x in self.ask("poll", n=4, timeout=3)["wcs"]
              if x["qp"] == "uc"]
        first = w[0]["wr_id"] + 1 if len(w) == 1 else -1
        check("UC: the WRITE with immediate completes into the WQE the "
              "broken SEND took, the SEND into the next",
              [(x["status"], x["opcode"], x["wr_id"]) for x in w2] ==
              [(0, self.e.IBV_WC_RECV_RDMA_WITH_IMM, first),
               (0, self.e.IBV_WC_RECV, first + 1)], w2)
        check("UC: the WRITE with immediate placed its bytes",
              bytes.fromhex(self.ask("read", off=WRITE_OFF + 2048,
                                     len=8)["data"]) == b"uc-wimm!")

        # The rest of a message that lost a packet is dropped, and counted;
        # its first packet took a receive WQE, which the next message gets.
        frames = [
            self.frame(roce.bth(OP["UC SEND_FIRST"], q["uc"], 12) + b"f" * 1024),
            self.frame(roce.bth(OP["UC SEND_MIDDLE"], q["uc"], 14) + b"m" * 1024),
            self.frame(roce.bth(OP["UC SEND_LAST"], q["uc"], 15) + b"l" * 8),
        ]
        self.phase("UC: a SEND whose second packet is lost", frames,
                   {"rcvd_pkts": 3, "out_of_seq_request": 1,
                    "drop_uc_msg": 2})
        check("UC: nothing of the broken SEND completes",
              not [x for x in self.ask("poll", n=4, timeout=1)["wcs"]
                   if x["qp"] == "uc"])

    def placement(self):
        """RDMA FLUSH and ATOMIC WRITE (Memory Placement Extensions, IBA
        vol 1 annex A19), where the kernel has them, at the target's QP pl
        (its access takes REMOTE_WRITE and FLUSH_GLOBAL) and its MR fl
        (registered for remote write and FLUSH_GLOBAL). Each is answered
        with a READ RESPONSE ONLY of no bytes at its own PSN; a duplicate
        is answered again and not executed again. Then victims: requests
        that must draw a NAK and put their QP in ERR, the target's memory
        unchanged.

        The in-tree rxe (6.12) drops every FLUSH with a right ICRC: its
        opcode table gives FLUSH no payload offset, so its ICRC check
        reads the 32 header bytes a second time as payload (its requester
        makes the same ICRC, so it only talks FLUSH to itself). What a
        FLUSH draws is judged for ours only."""
        if not self.mpe:
            return
        q, OP = self.qpn, roce.OP
        pl, p = q["pl"], VICTIM_PSN
        fl, flk = self.fl_addr, self.fl_rkey
        val1 = bytes.fromhex("0123456789abcdef")
        val2 = bytes.fromhex("fedcba9876543210")
        expect = bytearray(pattern(3, 1024))       # what fl must hold

        def awrite(qpn, va, rkey, data, length=8):
            pad = -len(data) % 4
            return (roce.bth(OP["RC ATOMIC_WRITE"], qpn, p, pad=pad, ack=1) +
                    roce.reth(va, rkey, length) + data + b"\0" * pad)

        def flush(qpn, psn, va, rkey, length, placement=roce.FLUSH_GLOBAL,
                  level=roce.FLUSH_RANGE):
            return (roce.bth(OP["RC FLUSH"], qpn, psn, ack=1) +
                    roce.feth(placement, level) + roce.reth(va, rkey, length))

        def mem(mr, n):
            return bytes.fromhex(self.ask("read", mr=mr, off=0, len=n)["data"])

        def answered(what, psn, is_flush=False):
            if is_flush and not self.ours:
                return
            rsp = self.replies(timeout=1.0, count=2,
                               want=lambda x: x.qpn == DEAD_QPN)
            check("%s: answered once, with a READ RESPONSE ONLY of no bytes "
                  "(ACK) at its PSN 0x%x" % (what, psn),
                  [(x.opcode, x.psn, x.paylen,
                    x.hdrs.get("AETH", {}).get("syndrome", 0xFF) >> 5)
                   for x in rsp] == [(0x10, psn, 0, 0)],
                  [(x.name, hex(x.psn), x.paylen, x.hdrs) for x in rsp] or
                  "no answer")

        self.phase("ATOMIC WRITE of 8 bytes to pl at an aligned address "
                   "(PSN 0x%x)" % p,
                   [self.frame(awrite(pl, fl + AW_OFF, flk, val1))],
                   {"rcvd_pkts": 1})
        answered("ATOMIC WRITE", p)
        expect[AW_OFF:AW_OFF + 8] = val1
        got = mem("fl", len(expect))
        check("ATOMIC WRITE: the target holds its 8 bytes as sent, and "
              "nothing around them changed", got == expect,
              got[AW_OFF - 8:AW_OFF + 16].hex())

        self.phase("the ATOMIC WRITE again, same PSN, another value (a "
                   "duplicate)", [self.frame(awrite(pl, fl + AW_OFF, flk, val2))],
                   {"rcvd_pkts": 1, "duplicate_request": 1})
        answered("duplicate ATOMIC WRITE", p)
        got = mem("fl", len(expect))
        check("duplicate ATOMIC WRITE: not executed again (the first value "
              "stays)", got == expect, got[AW_OFF - 8:AW_OFF + 16].hex())

        fl_range = flush(pl, p + 1, fl, flk, 4096)
        self.phase("FLUSH global visibility, 4 KiB inside fl (PSN 0x%x)"
                   % (p + 1), [self.frame(fl_range)], {"rcvd_pkts": 1})
        if not self.ours:
            info("FLUSH: the in-tree rxe drops FLUSHes with a right ICRC "
                 "(it reads their headers twice): what they draw is not "
                 "judged")
        answered("FLUSH", p + 1, is_flush=True)
        self.phase("the FLUSH again (a duplicate)", [self.frame(fl_range)],
                   {"rcvd_pkts": 1, "duplicate_request": 1})
        answered("duplicate FLUSH", p + 1, is_flush=True)
        self.phase("FLUSH of the whole MR, its va and length outside it "
                   "(PSN 0x%x)" % (p + 2),
                   [self.frame(flush(pl, p + 2, fl + (1 << 40), flk, 1 << 30,
                                     level=roce.FLUSH_MR))], {"rcvd_pkts": 1})
        answered("FLUSH of the whole MR", p + 2, is_flush=True)
        st = self.ask("state")["state"]
        check("FLUSH and ATOMIC WRITE: QP pl is still RTS", st["pl"] == "RTS",
              st["pl"])

        ro = mem("ro", 64)
        cases = [
            ("v8", "ATOMIC WRITE at a misaligned address",
             awrite(q["v8"], fl + AW_OFF + 4, flk, val2), roce.NAK_INV),
            ("v9", "ATOMIC WRITE of 16 bytes (RETH length 16)",
             awrite(q["v9"], fl + AW_OFF + 16, flk, val2 + val1, 16),
             roce.NAK_INV),
            ("v10", "ATOMIC WRITE to an MR without remote write access",
             awrite(q["v10"], self.ro_addr, self.ro_rkey, val2), roce.NAK_ACC),
            ("v11", "FLUSH of an MR without flush access",
             flush(q["v11"], p, self.addr + WRITE_OFF, self.rkey, 64),
             roce.NAK_ACC),
            ("v12", "FLUSH for persistence (offered by no MR or QP)",
             flush(q["v12"], p, fl, flk, 64, placement=roce.FLUSH_PERSISTENT),
             roce.NAK_ACC),
            ("v13", "FLUSH at selectivity level 2 (reserved)",
             flush(q["v13"], p, fl, flk, 64, level=2), roce.NAK_INV),
        ]
        if not self.ours:
            # Its FLUSHes never reach a QP (above).
            cases = [c for c in cases if c[2][0] != OP["RC FLUSH"]]
        for name, what, pkt, syn in cases:
            self.phase("%s: %s" % (name, what), [self.frame(pkt)],
                       {"rcvd_pkts": 1})
            naks = self.replies(timeout=1.0, count=2,
                                want=lambda x: x.qpn == DEAD_QPN)
            check("%s: answered with a NAK 0x%02x for PSN 0x%x" % (what, syn, p),
                  [(x.opcode, x.psn, x.hdrs.get("AETH", {}).get("syndrome"))
                   for x in naks] == [(0x11, p, syn)],
                  [(x.name, hex(x.psn), x.hdrs) for x in naks] or "no answer")
        st = self.ask("state")["state"]
        bad = {n: st[n] for n, _, _, _ in cases if st[n] != "ERR"}
        check("every FLUSH / ATOMIC WRITE victim QP is in the error state "
              "after its NAK", not bad, bad)
        got = mem("fl", len(expect))
        check("no FLUSH / ATOMIC WRITE victim changed the MR fl", got == expect,
              got[AW_OFF - 8:AW_OFF + 40].hex())
        check("the ATOMIC WRITE to the read-only MR changed nothing",
              mem("ro", 64) == ro)

    # --- fuzz ---

    def predict_door(self, r, icrc_ok):
        """The counter that drops a packet at the door (rxe_net.c: BTH
        length, opcode, version, header length, pad and payload, ICRC),
        or None when it passes into rcvd_pkts. Known opcodes: those of
        the kernel (FLUSH and ATOMIC WRITE where it has them)."""
        if len(r) < 12:
            return "drop_malformed"
        op, flags = r[0], r[1]
        if op not in self.known:
            return "drop_bad_opcode"
        if flags & 15:
            return "drop_malformed"
        hl = 28 if op == 0x81 else roce.hdrs_len(op)
        pad = (flags >> 4) & 3
        if len(r) < hl + pad + 4:
            return "drop_malformed"
        if len(r) - hl - pad - 4 and not self.known[op][2]:
            return "drop_malformed"
        if len(r) % 4:
            return "drop_malformed"
        return None if icrc_ok else "drop_icrc_err"

    def predict_demux(self, r, states, v6):
        """The counter that drops a packet past the door (rxe_recv.c: CNP,
        QP, transport, P_Key, Q_Key, state, addresses), None when a QP
        takes it, "?" when that depends on the state of a QP the fuzzer
        may change, "addr?" when the state decides between drop_qp_state
        and drop_addr_err. Every connected QP's path is IPv4: v6 packets
        come from no peer of theirs."""
        op = r[0]
        if op == 0x81:
            return "rcvd_cnp"
        qpn = struct.unpack(">I", r[4:8])[0] & 0xFFFFFF
        if qpn not in states:
            return "drop_unknown_qpn"
        qtype, state = states[qpn]
        transport = {0x00: "RC", 0x20: "UC", 0x60: "UD"}[op & 0xE0]
        if transport != (qtype if qtype != "GSI" else "UD"):
            return "drop_bad_opcode"
        if struct.unpack(">H", r[2:4])[0] & 0x7FFF != 0x7FFF:
            return "drop_pkey_err"
        if transport == "UD":
            qkey = struct.unpack(">I", r[12:16])[0]
            if qkey != (GSI_QKEY if qtype == "GSI" else self.P.QKEY):
                return "drop_qkey_err"
        response = transport == "RC" and 0x0D <= op <= 0x12
        if state in ("RESET", "INIT", "ERR") or \
                (state == "RTR" and response):
            return "drop_qp_state"
        if v6 and transport != "UD":
            return "addr?" if state == "?" else "drop_addr_err"
        # A request a QP takes (FLUSH and ATOMIC WRITE too) may execute,
        # NAK or put it in ERR: its QP is one whose state is "?".
        return "?" if state == "?" else None

    def fuzz_one(self, rng, targets):
        """A random packet: its bytes from the BTH on without the ICRC,
        and whether the ICRC to append is right (None: send the bytes as
        the whole UDP payload, no ICRC). Mostly near-valid: real opcodes
        and header sizes, live QPNs, PSNs near the expected, then
        mangled. Real opcodes: those the kernel has (self.known)."""
        known = self.known
        name, qpn = rng.choice(targets)
        base = {"ud": 0x60, "gsi": 0x60, "uc": 0x20}.get(name, 0x00)
        r = rng.random()
        if r < 0.6:         # an opcode of the target QP's transport
            op = rng.choice([o for o in known if o & 0xE0 == base])
        elif r < 0.85:
            op = rng.choice(list(known))
        else:
            op = rng.randrange(256)
        has_payload = op in known and known[op][2]
        n = 0
        if has_payload or rng.random() < 0.05:
            n = rng.choice([0, 1, 2, 3, 4, 8, 16, 64, 256, 1024,
                            rng.randrange(1100)])
        payload = bytes(rng.randrange(256) for _ in range(n))
        pad = -len(payload) % 4 if rng.random() < 0.9 else rng.randrange(4)
        tver = 0 if rng.random() < 0.95 else rng.randrange(16)
        pkey = 0xFFFF if rng.random() < 0.9 else rng.randrange(1 << 16)
        # PSNs near where the fuzz QPs start, so that some execute.
        psn = rng.randrange(16) if rng.random() < 0.4 else \
            rng.randrange(1 << 24)
        b = roce.bth(op, qpn, psn, pkey=pkey, se=rng.randrange(2),
                     mig=rng.randrange(2), pad=pad, tver=tver,
                     ack=rng.randrange(2), fecn=rng.randrange(2),
                     becn=rng.randrange(2), resv6=rng.randrange(64),
                     resv7=rng.randrange(128))
        ext = b""
        for h in (known[op][1] if op in known else ()):
            if h == "DETH" and rng.random() < 0.8:
                ext += roce.deth(GSI_QKEY if name == "gsi" else self.P.QKEY,
                                 rng.randrange(1 << 24))
            elif h == "RETH" and rng.random() < 0.5:
                ext += roce.reth(self.addr + rng.randrange(MR_SIZE),
                                 self.rkey, rng.randrange(4096))
            else:
                ext += bytes(rng.randrange(256) for _ in range(roce.HDR_LEN[h]))
        data = b + ext + payload + b"\0" * pad
        if rng.random() < 0.05:
            data = data[:rng.randrange(len(data) + 1)]
        elif rng.random() < 0.05:
            data = b + bytes(rng.randrange(256) for _ in range(rng.randrange(64)))
        elif rng.random() < 0.02:
            return data[:rng.randrange(16)], None
        good = name != "live" and rng.random() < 0.8
        return data, good

    def fuzz(self):
        if self.nfuzz and not self.ours and \
                not os.environ.get("RXE_FUZZ_THEIRS"):
            # Its rxe_rcv() drops a datagram shorter than a BTH before
            # setting pkt->qp, then puts pkt->qp: over IPv6 that is what
            # the IPv6 layer left in skb->cb, and the kernel oopses
            # (general protection fault in __rxe_put from rxe_rcv).
            info("fuzz: skipped for the in-tree rxe, which the first short "
                 "IPv6 datagram crashes (RXE_FUZZ_THEIRS=1 to run it)")
            return
        q = self.qpn
        rng = random.Random(self.seed)
        st = self.ask("state")["state"]
        stable = {"reset", "init", "ud", "live"} | {n for n in q if
                                                   n.startswith("v")}
        states = {}
        for n, qpn in q.items():
            t = {"ud": "UD", "uc": "UC"}.get(n, "RC")
            states[qpn] = (t, st[n] if n in stable else "?")
        states[1] = ("GSI", "RTS")
        near = sorted(set(q.values()))
        unknown = [x for x in (max(near) + 1, max(near) + 7, min(near) - 1, 0,
                               0xFFFFFF) if x not in states and x != 1]
        targets = [(n, qpn) for n, qpn in q.items()] + \
            [("gsi", 1)] * 2 + [("unknown", x) for x in unknown]
        info("fuzz: seed %d, %d packets, targets %s" %
             (self.seed, self.nfuzz, sorted(targets, key=lambda t: t[1])))
        want, frames, ambiguous, door_op = {"rcvd_pkts": 0}, [], 0, 0
        either = 0      # drop_qp_state or drop_addr_err, by the state
        for i in range(self.nfuzz):
            data, good = self.fuzz_one(rng, targets)
            v6 = i % 4 == 3
            src, dst = (self.me6, self.peer6) if v6 else (self.me4, self.peer4)
            sport = 0xC000 + rng.randrange(0x4000)
            if good is None:
                # raw UDP payload, no ICRC slot of its own
                pkt = roce.roce(src, dst, data, sport=sport, raw=True)
                icrc_ok = False
            else:
                pkt = roce.roce(src, dst, data, sport=sport, good_icrc=good)
                data += pkt[-4:]
                icrc_ok = good
            frames.append(roce.ether(self.peer_mac, self.raw.mac, pkt))
            k = self.predict_door(data, icrc_ok)
            door_op += k == "drop_bad_opcode"
            if k is None:
                want["rcvd_pkts"] += 1
                k = self.predict_demux(data, states, v6)
            if k == "?":
                ambiguous += 1
            elif k == "addr?":
                either += 1
            elif k:
                want[k] = want.get(k, 0) + 1
        info("fuzz: predicted %s, %d to QPs whose state may change, %d "
             "more over IPv6 to them" % (sorted(want.items()), ambiguous,
                                          either))
        self.raw.drain()
        hw0, udp0 = self.counters()
        t0 = time.time()
        self.inject(frames, pace=8)
        hw1, udp1 = self.settle(udp0, len(frames), timeout=30)
        time.sleep(1)
        hw1, udp1 = self.counters()
        info("fuzz: injected in %.1f s" % (time.time() - t0))
        got = udp1 - udp0
        check("fuzz: the target's stack took all %d datagrams" % len(frames),
              got == len(frames), "took %d" % got)
        if not self.ours:
            return
        delta = {k: hw1.get(k, 0) - hw0.get(k, 0) for k in hw1}
        info("fuzz: counters moved %s" % sorted(
            (k, v) for k, v in delta.items() if v))
        door = sum(delta.get(k, 0) for k in ("drop_icrc_err", "drop_malformed"))
        check("fuzz: every datagram is counted once, at the door or in "
              "rcvd_pkts (icrc + malformed %d, unknown opcodes %d, rcvd %d; "
              "took %d)" % (door, door_op, delta.get("rcvd_pkts", 0), got),
              door + door_op + delta.get("rcvd_pkts", 0) == got)
        if got != len(frames):
            return
        exact = ["drop_icrc_err", "drop_malformed", "drop_bad_opcode",
                 "drop_unknown_qpn", "drop_pkey_err", "drop_qkey_err",
                 "rcvd_cnp", "rcvd_pkts"]
        wrong = {k: (delta.get(k, 0), want.get(k, 0)) for k in exact
                 if delta.get(k, 0) != want.get(k, 0)}
        check("fuzz: each counter moved as the checks predict", not wrong,
              "(got, want): %s" % wrong)
        lo = want.get("drop_addr_err", 0)
        ad = delta.get("drop_addr_err", 0)
        check("fuzz: drop_addr_err between %d and %d" % (lo, lo + either),
              lo <= ad <= lo + either, ad)
        lo = want.get("drop_qp_state", 0) + want.get("drop_addr_err", 0) + \
            either
        qs = delta.get("drop_qp_state", 0) + delta.get("drop_nomem", 0) + ad
        check("fuzz: drop_qp_state (+ drop_nomem) + drop_addr_err between %d "
              "and %d" % (lo, lo + ambiguous), lo <= qs <= lo + ambiguous, qs)

    def bad_icrc_flood(self):
        """Valid-looking packets with wrong ICRCs at the live QP: every
        one dropped at the door, none touches the connection."""
        rng = random.Random(self.seed + 1)
        live = self.qpn["live"]
        frames = []
        for i in range(200):
            op = rng.choice([0x00, 0x04, 0x06, 0x0A, 0x0C, 0x11, 0x13, 0x14])
            body = roce.bth(op, live, (self.next_psn + rng.randrange(-3, 3)) &
                            0xFFFFFF)
            for h in roce.OPCODES[op][1]:
                body += bytes(rng.randrange(256) for _ in range(roce.HDR_LEN[h]))
            if roce.OPCODES[op][2]:
                body += bytes(rng.randrange(256) for _ in range(
                    1024 if op in (0x00, 0x06) else 4 * rng.randrange(64)))
            frames.append(self.frame(body, v6=i % 2 == 1, good_icrc=False))
        self.phase("200 requests with bad ICRCs at the live QP's PSN",
                   frames, {"drop_icrc_err": 200})

    def churn(self):
        """QPs destroyed while packets for them keep coming: each arrives
        before its QP goes (it is queued, or draws a NAK), during the
        destroy, or after (an unknown QPN). Nothing may leak or warn,
        which the test script's checks at unload and of the kernel log
        judge; here the flood must have hit QPs both alive and gone."""
        n, gap = 32, 0.03
        qpns = self.ask("churn", n=n)["qpn"]
        frames = [self.frame(self.send_only(q, VICTIM_PSN + k))
                  for k in range(4) for q in qpns]
        hw0, _ = self.counters()
        sent = 0
        self.ctl.send(msg="churn_destroy", gap=gap)
        sock = self.ctl.sock
        end = time.time() + 30
        while time.time() < end:
            self.inject(frames, pace=0)
            sent += len(frames)
            if select.select([sock], [], [], 0)[0]:
                break
        self.ctl.expect("churn_destroy")
        # A last round, every QP gone; the target's stack must take it in.
        _, udp_last = self.counters()
        self.inject(frames, pace=0)
        sent += len(frames)
        info("churn: %d SENDs injected at %d QPs destroyed %d ms apart"
             % (sent, n, gap * 1000))
        if not self.ours:
            return
        hw1, _ = self.settle(udp_last, len(frames))
        late = hw1.get("drop_unknown_qpn", 0) - hw0.get("drop_unknown_qpn", 0)
        # What the QPs' responders took: an RNR NAK for the first SEND
        # (no receive is posted), kept or NAKed past it, or a duplicate.
        taken = sum(hw1.get(c, 0) - hw0.get(c, 0)
                    for c in ("send_rnr_err", "out_of_seq_request",
                              "duplicate_request", "held_request"))
        check("churn: SENDs reached the QPs alive (%d taken) and gone "
              "(drop_unknown_qpn +%d)" % (taken, late),
              taken > 0 and late >= len(frames))

    def budget(self):
        """Requests that queue behind READ responses the netdev keeps:
        the target's QPs may queue RXE_RECV_QUEUE_MAX each, and all of
        them together RXE_RECV_DEV_MAX; the rest is dropped and counted
        (drop_nomem). Without the device's budget, 9 QPs would pin
        36864 skbs, and a peer with more QPs to flood, any number."""
        if not self.ours:
            return
        n, per, dev_max = 9, 4600, 32768
        qpns = self.ask("budget", n=n)["qpn"]
        hw0, _ = self.counters()
        # The same READ again and again: the first of each QP starts the
        # responses that the netdev keeps, and the rest queue behind it
        # unread; the QPs go before anything reads them.
        frames = [self.frame(roce.bth(roce.OP["RC RDMA_READ_REQUEST"], q,
                                      VICTIM_PSN) +
                             roce.reth(self.addr, self.rkey, 65536))
                  for q in qpns] * per
        self.inject(frames, pace=0)
        last, end = None, time.time() + 20
        while time.time() < end:
            queued = self.ask("budget_state")["queued"]
            if queued == last:
                break
            last = queued
            time.sleep(0.5)
        hw1, _ = self.counters()
        self.ask("budget_end")
        total = sum(queued)
        dropped = hw1.get("drop_nomem", 0) - hw0.get("drop_nomem", 0)
        came = hw1.get("rcvd_pkts", 0) - hw0.get("rcvd_pkts", 0)
        info("budget: %d READ requests injected at %d QPs; queued %s"
             % (len(frames), n, queued))
        check("budget: requests queued behind kept READ responses: %d on "
              "%d QPs, at most %d for the device, and it was reached"
              % (total, n, dev_max),
              dev_max - n <= total <= dev_max,
              "each QP queues at most 4096: %s" % queued)
        # A QP takes its first READ, and a copy or two of it as a
        # duplicate, before its responses fill the netdev; every other
        # request that came through the door is queued or dropped for
        # room (16 packets of slack for stray traffic meanwhile).
        check("budget: of %d packets that came, %d queued, %d dropped and "
              "counted (drop_nomem), %d taken before the %d QPs stalled"
              % (came, total, dropped, came - total - dropped, n),
              0 <= came - total - dropped <= 3 * n + 16)

    def live_check(self):
        """The live connection still works both ways, data intact."""
        e, ep = self.e, self.ep
        self.ask("poll", n=64, timeout=0.2)
        while ep.poll(16, timeout=0.1):
            pass
        wr = ep.send_wr(e.IBV_WR_SEND, 0, 777, 11)
        self.live.post_send(wr)
        wr = ep.send_wr(e.IBV_WR_RDMA_WRITE, 0, 3000, 12)
        wr.set_wr_rdma(self.rkey, self.addr + WRITE_OFF)
        self.live.post_send(wr)
        wr = ep.send_wr(e.IBV_WR_RDMA_READ, 16384, 1500, 13)
        wr.set_wr_rdma(self.rkey, self.addr + READ_OFF)
        self.live.post_send(wr)
        wr = ep.send_wr(e.IBV_WR_ATOMIC_CMP_AND_SWP, 12288, 8, 14)
        wr.set_wr_atomic(self.rkey, self.addr + ATOM_OFF, 11, 42)
        self.live.post_send(wr)
        wcs = ep.poll(4, timeout=30)
        check("after it all: SEND, WRITE, READ, CMP_SWP on the live QP "
              "complete", [(w.wr_id, w.status) for w in wcs] ==
              [(11, 0), (12, 0), (13, 0), (14, 0)],
              [(w.wr_id, w.status) for w in wcs])
        check("after it all: the READ brings the target's data",
              ep.mr.read(1500, 16384) == pattern(5, 1500))
        check("after it all: CMP_SWP saw 11",
              struct.unpack("<Q", ep.mr.read(8, 12288))[0] == 11)
        w = [x for x in self.ask("poll", n=1, timeout=5)["wcs"]
             if x["qp"] == "live"]
        check("after it all: the target received the 777-byte SEND",
              [(x["status"], x["len"]) for x in w] == [(0, 777)], w)
        check("after it all: the WRITE landed",
              bytes.fromhex(self.ask("read", off=WRITE_OFF, len=3000)["data"])
              == pattern(9, 3000))
        r = self.ask("send", len=99)
        wcs = ep.poll(1, timeout=10)
        check("after it all: a SEND from the target completes and arrives",
              r["status"] == 0 and len(wcs) == 1 and wcs[0].status == 0 and
              wcs[0].byte_len == 99, (r, [(w.status, w.byte_len) for w in wcs]))
        st = self.ask("state")["state"]
        check("after it all: the live, UD and UC QPs are RTS",
              [st["live"], st["ud"], st["uc"]] == ["RTS"] * 3, st)

    def read_gap(self):
        """The target READs 12 KiB from us (QP rd, towards DEAD_QPN), and
        its second response is lost: the rest arrive one every 2.5 ms,
        as from a responder with a queue to send. Ours keeps them, and
        once three are past the gap asks again for that response alone.
        The responses still arriving were sent before that request, so
        they prove nothing about it: one request again, not one per three
        responses once a quiet moment has passed, and no retry timer while
        they come. Then the READ completes with every byte.

        Only while they come: a guest stalled for longer than the retry
        timeout between two of our packets makes the timer fire, rightly,
        and each time it asks again. Such a round proves nothing about the
        gap, so it goes again, up to three rounds; the READ must complete
        with every byte in each."""
        if not self.ours:
            return
        fired = []
        for rnd in range(3):
            late = self.read_gap_round(pattern(7 + rnd, 12 * 1024))
            if late is None:
                return
            fired.append(late)
            info("READ with a gap, round %d: the target's retry timer fired "
                 "%d times once the responses came, as it may when we "
                 "stall: again" % (rnd + 1, late))
        check("READ with a gap: one of three rounds with no retry timer "
              "once the responses came", False,
              "the timer fired %s times" % fired)

    def read_gap_round(self, data):
        """One round of read_gap(), the READ's bytes data: None when it was
        judged, or how often the target's retry timer fired once the
        responses came."""
        n, va, rkey = len(data) // 1024, 0x7E0000001000, 0x4D2
        rd = self.qpn["rd"]

        def is_read(p):
            return (p.qpn == DEAD_QPN and
                    p.opcode == roce.OP["RC RDMA_READ_REQUEST"])

        def rsp(i, kind):
            return self.read_rsp(rd, psn0 + i, kind,
                                 data[i * 1024:(i + 1) * 1024])

        self.raw.drain()
        hw0 = self.counters()[0]
        self.ask("read_gap", va=va, rkey=rkey, len=n * 1024)
        req = self.replies(count=1, want=is_read)
        got = [(p.hdrs["RETH"]["va"], p.hdrs["RETH"]["dmalen"]) for p in req]
        if not check("READ with a gap: the target asks for 12 KiB at the "
                     "address given", got == [(va, n * 1024)],
                     "asked %s; QP rd %s, completions %s" %
                     (got, self.ask("state")["state"]["rd"],
                      self.ask("poll", n=1, timeout=0.1)["wcs"])):
            return None
        psn0 = req[0].psn
        t0 = time.time()
        self.inject([rsp(0, "FIRST")], pace=0)
        for i in range(2, n):
            time.sleep(0.0025)
            self.inject([rsp(i, "LAST" if i == n - 1 else "MIDDLE")], pace=0)
        t1 = time.time()
        self.inject([rsp(1, "LAST")], pace=0)
        t2 = time.time()
        w = self.ask("poll", n=1, timeout=5)["wcs"]
        again = self.replies(timeout=0.5, want=is_read)
        hw1 = self.counters()[0]
        delta = {k: hw1.get(k, 0) - hw0.get(k, 0)
                 for k in ("read_rsp_kept", "read_refetch", "retry_early",
                           "retry_timeout") + tuple(DROPS)}
        # The READ request itself goes again each time the timer fires
        # before our first response, which on a slow guest comes after
        # the 20 ms a QP waits before it has timed a round trip. Each
        # time it fires later, it asks again for the responses missing.
        whole = sum(p.psn == psn0 for p in again)
        late = delta.pop("retry_early") + delta.pop("retry_timeout") - whole
        done = check("READ with a gap: the READ completes once the gap is "
                     "answered", [(x["qp"], x["status"], x["len"])
                                  for x in w] == [("rd", 0, n * 1024)], w)
        done &= check("READ with a gap: every byte in place",
                      bytes.fromhex(self.ask("read", off=GAP_OFF,
                                             len=n * 1024)["data"]) == data)
        if late > 0 and done:
            return late
        got = [(p.psn, p.hdrs["RETH"]["va"], p.hdrs["RETH"]["dmalen"])
               for p in again if p.psn != psn0]
        slow = ("; the READ request went %d more times, the retry timer "
                "fired %d times later; responses over %.1f ms, the gap "
                "answered %.1f ms after the last" %
                (whole, late, (t1 - t0) * 1e3, (t2 - t1) * 1e3))
        check("READ with a gap: the READ request went again only when the "
              "retry timer fired", late >= 0, slow)
        check("READ with a gap: asked again once, for the missing response "
              "alone (PSN +1, 1024 B)",
              got == [((psn0 + 1) & 0xFFFFFF, va + 1024, 1024)],
              str([(hex(a), hex(b), c) for a, b, c in got]) + slow)
        check("READ with a gap: the %d responses past it kept, one "
              "refetch, nothing dropped" % (n - 2),
              delta == dict({k: 0 for k in DROPS}, read_rsp_kept=n - 2,
                            read_refetch=1), delta)
        return None

    def nak_past_read(self):
        """The target READs 12 KiB from us and WRITEs 2 KiB behind it, and
        we answer the WRITE with a NAK while READ responses are missing.
        A NAK for a PSN past a READ says that the READ was executed and
        answered before it. On QP rd, a sequence NAK for the WRITE's first
        packet with response 1 missing: the responses missing were lost,
        so the target asks at once for them, and sends the WRITE again
        once they are in. On QP nf, a remote access NAK for the
        WRITE with response 1 missing, asked again for: once it comes the
        READ completes, and then the WRITE fails with the NAK's status,
        not with retries exceeded against a responder gone quiet. Then on
        rd an RNR NAK for a SEND behind a READ: once the READ is in, the
        target waits as asked and sends the SEND again. Last, twice on rd,
        an ACK for the WRITE with READ responses missing, first with one
        kept past the gap, then with none at all: the target asks for the
        missing responses alone, never sends the WRITE again, and both
        complete once the responses are in, with no ACK after them. Then
        a FETCH_ADD between the READ and the WRITE, whose answer no
        refetch asks for: once the READ is in, the target goes back to
        the atomic at once."""
        if not self.ours:
            return
        n, va, wva, rkey = 12, 0x7E0000002000, 0x7E0000100000, 0x4D3
        data = pattern(11, n * 1024)

        def ours(p):
            return p.qpn == DEAD_QPN and p.opcode in (
                roce.OP["RC RDMA_READ_REQUEST"], roce.OP["RC SEND_ONLY"],
                roce.OP["RC RDMA_WRITE_FIRST"], roce.OP["RC RDMA_WRITE_LAST"],
                roce.OP["RC FETCH_ADD"])

        def rsp(qpn, psn0, i, kind):
            return self.read_rsp(qpn, psn0 + i, kind,
                                 data[i * 1024:(i + 1) * 1024])

        def what(p):
            op = roce.opname(p.opcode)
            if "RETH" in p.hdrs:
                return (op, p.psn, p.hdrs["RETH"]["va"],
                        p.hdrs["RETH"]["dmalen"])
            return (op, p.psn)

        def start(name, send=False, atomic=False):
            self.raw.drain()
            self.ask("read_write", qp=name, va=va, rkey=rkey, len=n * 1024,
                     wva=wva, wlen=1024 if send else 2048, send=send,
                     atomic=atomic)
            ops = [roce.OP["RC RDMA_READ_REQUEST"]] + (
                [roce.OP["RC FETCH_ADD"]] if atomic else []) + (
                [roce.OP["RC SEND_ONLY"]] if send else
                [roce.OP["RC RDMA_WRITE_FIRST"], roce.OP["RC RDMA_WRITE_LAST"]])
            got = self.replies(count=len(ops), want=ours)
            if not check("NAK past a READ (QP %s): the target sends the "
                         "READ request%s and the %s" %
                         (name, ", a FETCH_ADD" if atomic else "",
                          "SEND" if send else "WRITE's two packets"),
                         [p.opcode for p in got] == ops,
                         [what(p) for p in got]):
                return None
            return got[0].psn

        def gap_then_nak(qpn, psn0, syn, name):
            """Every response but the second, then a NAK for the packet
            after the READ; the target must ask again for the second
            alone, which then comes."""
            self.inject([rsp(qpn, psn0, 0, "FIRST")] +
                        [rsp(qpn, psn0, i, "LAST" if i == n - 1 else "MIDDLE")
                         for i in range(2, n)] +
                        [self.ack(qpn, psn0 + n, syn)], pace=0)
            # On a QP with no round trip timed yet (nf), the retry timer
            # fires 20 ms after the READ, which this guest may not beat:
            # the READ and what follows it go again first. Only the next
            # READ request counts.
            whole = ("RC RDMA_READ_REQUEST", psn0 & 0xFFFFFF, va, n * 1024)
            got, end = [], time.time() + 3
            while len(got) < 24 and time.time() < end:
                p = self.replies(timeout=end - time.time(), count=1,
                                 want=ours)
                if not p:
                    break
                got.append(what(p[0]))
                if got[-1][0] == "RC RDMA_READ_REQUEST" and got[-1] != whole:
                    break
            want = ("RC RDMA_READ_REQUEST", (psn0 + 1) & 0xFFFFFF,
                    va + 1024, 1024)
            if len(got) > 1 and got[0] == whole:
                info("%s past a READ: the retry timer went back first: %s" %
                     (name, got[:-1]))
            if check("%s past a READ: the target asks again for the "
                     "missing response alone" % name,
                     got[-1:] == [want] and (len(got) == 1 or
                                             got[0] == whole),
                     "sent %s, want %s" % (got, [want])):
                self.inject([rsp(qpn, psn0, 1, "LAST")], pace=0)

        # Sequence NAK: the responses missing were lost. Ask for them now;
        # the WRITE goes again once the READ is complete.
        hw0 = self.counters()[0]
        qpn = self.qpn["rd"]
        psn0 = start("rd")
        if psn0 is None:
            return
        self.inject([rsp(qpn, psn0, 0, "FIRST"), rsp(qpn, psn0, 2, "MIDDLE"),
                     self.ack(qpn, psn0 + n, roce.NAK_SEQ)], pace=0)
        got = self.replies(count=1, want=ours)
        want = [("RC RDMA_READ_REQUEST", (psn0 + 1) & 0xFFFFFF, va + 1024,
                 (n - 1) * 1024)]
        check("sequence NAK past a READ: at once the target asks for every "
              "response missing before the NAKed PSN",
              [what(p) for p in got] == want,
              "sent %s, want %s" % ([what(p) for p in got], want))
        self.inject([rsp(qpn, psn0, i, "FIRST" if i == 1 else
                         "LAST" if i == n - 1 else "MIDDLE")
                     for i in range(1, n)], pace=0)
        got = self.replies(count=1, want=ours)
        want = [("RC RDMA_WRITE_FIRST", (psn0 + n) & 0xFFFFFF, wva, 2048)]
        check("sequence NAK past a READ: once the READ is in, the WRITE "
              "goes again from the NAKed packet", [what(p) for p in got] == want,
              "sent %s, want %s" % ([what(p) for p in got], want))
        self.inject([self.ack(qpn, psn0 + n + 1, 0x1F, msn=2)], pace=0)
        w = self.ask("poll", n=2, timeout=5)["wcs"]
        check("sequence NAK past a READ: the READ and the WRITE complete",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("rd", 0, 0x981), ("rd", 0, 0x982)], w)
        check("sequence NAK past a READ: every byte of the READ in place",
              bytes.fromhex(self.ask("read", off=GAP_OFF,
                                     len=n * 1024)["data"]) == data)
        hw1 = self.counters()[0]
        delta = {k: hw1.get(k, 0) - hw0.get(k, 0)
                 for k in ("nak_held", "completer_retry_err", "retry_early",
                           "retry_timeout")}
        # The retry timer may fire as well when this guest is slow; the
        # NAK's own resends are the completer's.
        check("sequence NAK past a READ: held (nak_held +1), and acted on "
              "twice, for the gap and for the NAKed packet "
              "(completer_retry_err +2)",
              delta["nak_held"] == 1 and delta["completer_retry_err"] == 2,
              delta)

        # Remote access NAK: it waits for the READ, then fails the WRITE.
        # New bytes, so that the check of them shows this READ's.
        data = pattern(12, n * 1024)
        qpn = self.qpn["nf"]
        psn0 = start("nf")
        if psn0 is None:
            return
        gap_then_nak(qpn, psn0, roce.NAK_ACC, "access NAK")
        w = self.ask("poll", n=2, timeout=5)["wcs"]
        check("access NAK past a READ: the READ completes, then the WRITE "
              "fails with the NAK's status (remote access error)",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("nf", 0, 0x981),
               ("nf", self.e.IBV_WC_REM_ACCESS_ERR, 0x982)], w)
        check("access NAK past a READ: every byte of the READ in place",
              bytes.fromhex(self.ask("read", off=GAP_OFF,
                                     len=n * 1024)["data"]) == data)
        hw2 = self.counters()[0]
        held = hw2.get("nak_held", 0) - hw1.get("nak_held", 0)
        check("access NAK past a READ: held for the READ (nak_held +%d, "
              "want 1)" % held, held == 1)

        # RNR NAK for a SEND: once the READ is in, the target waits as
        # asked (code 1: 10 us) and sends the SEND again.
        qpn = self.qpn["rd"]
        psn0 = start("rd", send=True)
        if psn0 is None:
            return
        gap_then_nak(qpn, psn0, 0x21, "RNR NAK")
        got = self.replies(count=1, want=ours)
        want = [("RC SEND_ONLY", (psn0 + n) & 0xFFFFFF)]
        check("RNR NAK past a READ: once the READ is in, the SEND goes again",
              [what(p) for p in got] == want,
              "sent %s, want %s" % ([what(p) for p in got], want))
        self.inject([self.ack(qpn, psn0 + n, 0x1F, msn=3)], pace=0)
        w = self.ask("poll", n=2, timeout=5)["wcs"]
        check("RNR NAK past a READ: the READ and the SEND complete",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("rd", 0, 0x981), ("rd", 0, 0x982)], w)
        hw3 = self.counters()[0]
        delta = {k: hw3.get(k, 0) - hw2.get(k, 0)
                 for k in ("nak_held", "rcvd_rnr_err")}
        check("RNR NAK past a READ: held, then waited out (nak_held +1, "
              "rcvd_rnr_err +1)", delta == {"nak_held": 1, "rcvd_rnr_err": 1},
              delta)

        # ACK for the WRITE: the READ's responses missing were lost, and
        # the WRITE is in. Only those responses are asked for again (the
        # retry timer may ask twice while this guest is slow), and the
        # ACK, held, completes the WRITE once the READ is in.
        for first in (1, 0):
            name = "ACK past a READ (%s)" % (
                "one response kept past the gap" if first else "none came")
            hw3 = self.counters()[0]
            data = pattern(13 + first, n * 1024)
            psn0 = start("rd")
            if psn0 is None:
                return
            self.inject(([rsp(qpn, psn0, 0, "FIRST"),
                          rsp(qpn, psn0, 2, "MIDDLE")] if first else []) +
                        [self.ack(qpn, psn0 + n + 1, 0x1F, msn=4)], pace=0)
            got = [what(p) for p in self.replies(timeout=0.4, want=ours)]
            want = ("RC RDMA_READ_REQUEST", (psn0 + first) & 0xFFFFFF,
                    va + first * 1024, (n - first) * 1024)
            check("%s: the target asks again for the missing responses "
                  "alone and does not send the WRITE again" % name,
                  got and set(got) == {want},
                  "sent %s, want %s" % (got, [want]))
            self.inject([rsp(qpn, psn0, i, "FIRST" if i == first else
                             "LAST" if i == n - 1 else "MIDDLE")
                         for i in range(first, n)], pace=0)
            w = self.ask("poll", n=2, timeout=5)["wcs"]
            check("%s: the READ and the WRITE complete, no ACK needed "
                  "after the READ" % name,
                  [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
                  [("rd", 0, 0x981), ("rd", 0, 0x982)], w)
            check("%s: every byte of the READ in place" % name,
                  bytes.fromhex(self.ask("read", off=GAP_OFF,
                                         len=n * 1024)["data"]) == data)
            hw4 = self.counters()[0]
            held = hw4.get("ack_held", 0) - hw3.get("ack_held", 0)
            check("%s: the ACK held (ack_held +%d, want 1)" % (name, held),
                  held == 1)

        # An atomic between the READ and the WRITE, and the ACK for the
        # WRITE: the atomic's answer was lost too, and no refetch asks for
        # it. The READ's responses are asked for first; once they are in,
        # the target goes back to the atomic at once (the completer, not
        # the retry timer), which sends the WRITE again behind it.
        name = "ACK past a READ and an atomic"
        data = pattern(16, n * 1024)
        hw5 = self.counters()[0]
        psn0 = start("rd", atomic=True)
        if psn0 is None:
            return
        self.inject([self.ack(qpn, psn0 + n + 2, 0x1F, msn=5)], pace=0)
        got = [what(p) for p in self.replies(timeout=0.4, want=ours)]
        want = ("RC RDMA_READ_REQUEST", psn0, va, n * 1024)
        check("%s: the target asks again for the READ's responses alone" %
              name, got and set(got) == {want},
              "sent %s, want %s" % (got, [want]))
        self.inject([rsp(qpn, psn0, i, "FIRST" if i == 0 else
                         "LAST" if i == n - 1 else "MIDDLE")
                     for i in range(n)], pace=0)
        # A READ request the retry timer sent just before the responses
        # went in may show up here: only what follows it counts.
        got = [what(p) for p in self.replies(timeout=0.4, want=ours)]
        after = list(itertools.dropwhile(
            lambda x: x[0] == "RC RDMA_READ_REQUEST", got))
        want = [("RC FETCH_ADD", (psn0 + n) & 0xFFFFFF),
                ("RC RDMA_WRITE_FIRST", (psn0 + n + 1) & 0xFFFFFF, wva,
                 2048),
                ("RC RDMA_WRITE_LAST", (psn0 + n + 2) & 0xFFFFFF)]
        check("%s: once the READ is in, the target sends the atomic again, "
              "and the WRITE behind it" % name, after[:3] == want and
              not any(x[0] == "RC RDMA_READ_REQUEST" for x in after),
              "sent %s, want %s first" % (got, want))
        self.inject([self.frame(roce.bth(roce.OP["RC ATOMIC_ACKNOWLEDGE"],
                                         qpn, (psn0 + n) & 0xFFFFFF) +
                                roce.aeth(0x1F, 6) +
                                roce.atomicacketh(0x5EED5EED)),
                     self.ack(qpn, psn0 + n + 2, 0x1F, msn=7)], pace=0)
        w = self.ask("poll", n=3, timeout=5)["wcs"]
        check("%s: the READ, the atomic and the WRITE complete" % name,
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("rd", 0, 0x981), ("rd", 0, 0x983), ("rd", 0, 0x982)], w)
        got = bytes.fromhex(self.ask("read", off=GAP_OFF,
                                     len=n * 1024 + 8)["data"])
        check("%s: the READ's bytes and the atomic's old value in place" %
              name, got == data + struct.pack("<Q", 0x5EED5EED),
              got[-8:].hex())
        hw6 = self.counters()[0]
        delta = {k: hw6.get(k, 0) - hw5.get(k, 0)
                 for k in ("ack_held", "completer_retry_err")}
        check("%s: the ACK held, and acted on twice, for the READ and for "
              "the atomic (ack_held +1, completer_retry_err +2)" % name,
              delta == {"ack_held": 1, "completer_retry_err": 2}, delta)

    @staticmethod
    def send_or_read(p):
        """A SEND or a READ request from the target to the peer it thinks
        it has."""
        return p.qpn == DEAD_QPN and p.opcode in (
            roce.OP["RC RDMA_READ_REQUEST"], roce.OP["RC SEND_ONLY"])

    def answer_resends(self, qpn, read_psn, data):
        """After a NAK, answer what the target sends again as a responder
        that dropped the rest would, for up to 8 s: each SEND with an ACK,
        the READ request at read_psn with its response (data). Return
        whether that READ request came, and what was sent."""
        OP, sent, end = roce.OP, [], time.time() + 8
        while time.time() < end:
            for p in self.replies(timeout=0.5, want=self.send_or_read):
                sent.append((roce.opname(p.opcode), p.psn))
                if p.opcode == OP["RC SEND_ONLY"]:
                    self.inject([self.ack(qpn, p.psn, 0x1F)], pace=0)
                elif p.psn == read_psn & 0xFFFFFF:
                    self.inject([self.read_rsp(qpn, p.psn, "ONLY", data)],
                                pace=0)
                    return True, sent
        return False, sent

    def sqd_rewind(self):
        """The target SENDs to us and READs behind it, and goes to SQD
        with both on the wire. We NAK the SEND as lost: the SEND goes
        again, and so must the READ, which the retry took back to not
        started. SQD starts no new request; these two were started
        before it. Answered, both complete, SQ_DRAINED comes, and the QP
        goes back to RTS."""
        va, rkey = 0x7E0000400000, 0x4D6
        data = pattern(23, 1024)
        qpn = self.qpn["rd"]
        OP = roce.OP

        self.raw.drain()
        self.ask("events", timeout=0)
        self.ask("send_read", qp="rd", va=va, rkey=rkey)
        got = self.replies(count=2, want=self.send_or_read)
        if not check("SQD after a rewind: the target sends the SEND and the "
                     "READ", [p.opcode for p in got] ==
                     [OP["RC SEND_ONLY"], OP["RC RDMA_READ_REQUEST"]],
                     [(roce.opname(p.opcode), p.psn) for p in got]):
            return
        psn0 = got[0].psn
        self.ask("to", qp="rd", state="SQD")
        self.inject([self.ack(qpn, psn0, roce.NAK_SEQ, 0)], pace=0)
        again, sent = self.answer_resends(qpn, psn0 + 1, data)
        check("SQD after a rewind: the READ goes again after the SEND",
              again, "the target sent %s" % sent)
        w = self.ask("poll", n=2, timeout=5)["wcs"]
        check("SQD after a rewind: the SEND and the READ complete",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("rd", 0, 0x98A), ("rd", 0, 0x98B)], w)
        evs = self.ask("events")["events"]
        check("SQD after a rewind: then SQ_DRAINED",
              evs == [self.e.IBV_EVENT_SQ_DRAINED], evs)
        self.ask("to", qp="rd", state="RTS")
        check("SQD after a rewind: QP rd back in RTS",
              self.ask("state")["state"]["rd"] == "RTS")

    def gap_nak_after_read(self):
        """Two gaps in what we send to QP gn: SEND 1, a READ at 2 and SEND
        4 arrive first (0 and 3 missing), then SEND 0. The target runs 0,
        then what it kept up to the second gap: SEND 1 and the READ. The
        READ's response (PSN 2) must go before the NAK for PSN 3, which
        acknowledges everything before it, the READ included (IBA 9.7.5.1.3:
        responses in PSN order)."""
        if not self.ours:
            return
        q, OP = self.qpn["gn"], roce.OP

        def mine(p):
            return p.qpn == DEAD_QPN and p.opcode in (
                OP["RC ACKNOWLEDGE"], OP["RC RDMA_READ_RESPONSE_ONLY"])

        def what(p):
            return (roce.opname(p.opcode), p.psn,
                    p.hdrs["AETH"]["syndrome"] if "AETH" in p.hdrs else None)

        rd = roce.bth(OP["RC RDMA_READ_REQUEST"], q, 2) + \
            roce.reth(self.addr + READ_OFF, self.rkey, 512)
        # In one burst: what is kept waits at most RXE_HOLD_MAX_AGE_MS.
        self.raw.drain()
        self.inject([self.frame(self.send_only(q, 1)), self.frame(rd),
                     self.frame(self.send_only(q, 4)),
                     self.frame(self.send_only(q, 0))], pace=0)
        # The first gap's NAK (PSN 0) and an ACK of the SENDs before the
        # READ (PSN 0 or 1) come first.
        sent = [what(p) for p in self.replies(timeout=1.5, want=mine)]
        got = [g for g in sent if g[0] != "RC ACKNOWLEDGE" or g[1] >= 2]
        check("gap NAK after a READ: once the first gap fills, the READ's "
              "response (PSN 2), then the NAK for the second gap (PSN 3)",
              len(got) == 2 and
              got[0][:2] == ("RC RDMA_READ_RESPONSE_ONLY", 2) and
              got[0][2] >> 5 == 0 and
              got[1] == ("RC ACKNOWLEDGE", 3, roce.NAK_SEQ),
              "sent %s" % sent)
        # SEND 4 again: the one kept may have expired by now.
        self.inject([self.frame(self.send_only(q, 3)),
                     self.frame(self.send_only(q, 4))], pace=0)
        w = self.ask("poll", n=4, timeout=5)["wcs"]
        check("gap NAK after a READ: the four SENDs complete, in PSN order",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("gn", 0, 0x600 + i) for i in range(4)], w)

    def fence_rewind(self):
        """The target READs 1 KiB from us, SENDs behind it, and READs
        1 KiB more with the fence. We answer the first READ, so the fenced
        one starts, and NAK the SEND as lost: the target goes back to the
        SEND, which takes the fenced READ back to not started. Started
        once, it passed its fence then; it must go again now, even though
        it holds a READ place itself. Every packet the target sends again
        is answered as a responder that dropped the rest would: the SEND
        with an ACK, the READ with its response."""
        va, rkey = 0x7E0000300000, 0x4D5
        data = pattern(21, 2048)
        qpn = self.qpn["rd"]
        OP, ours = roce.OP, self.send_or_read

        self.raw.drain()
        self.ask("fence", qp="rd", va=va, rkey=rkey)
        got = self.replies(count=2, want=ours)
        if not check("fence after a rewind: the target sends the READ and "
                     "the SEND, and holds the fenced READ back",
                     [p.opcode for p in got] ==
                     [OP["RC RDMA_READ_REQUEST"], OP["RC SEND_ONLY"]],
                     [(roce.opname(p.opcode), p.psn) for p in got]):
            return
        psn0 = got[0].psn
        self.inject([self.read_rsp(qpn, psn0, "ONLY", data[:1024])], pace=0)
        got = self.replies(count=1, want=ours)
        if not check("fence after a rewind: the first READ answered, the "
                     "fenced READ goes",
                     [(p.opcode, p.psn) for p in got] ==
                     [(OP["RC RDMA_READ_REQUEST"], (psn0 + 2) & 0xFFFFFF)],
                     [(roce.opname(p.opcode), p.psn) for p in got]):
            return
        self.inject([self.ack(qpn, psn0 + 1, roce.NAK_SEQ)], pace=0)
        again, sent = self.answer_resends(qpn, psn0 + 2, data[1024:])
        check("fence after a rewind: the fenced READ goes again after the "
              "SEND", again, "the target sent %s" % sent)
        w = self.ask("poll", n=3, timeout=5)["wcs"]
        check("fence after a rewind: the READ, the SEND and the fenced READ "
              "complete, in order",
              [(x["qp"], x["status"], x["wr_id"]) for x in w] ==
              [("rd", 0, 0x985), ("rd", 0, 0x986), ("rd", 0, 0x987)], w)
        check("fence after a rewind: both READs' bytes in place",
              bytes.fromhex(self.ask("read", off=GAP_OFF,
                                     len=2048)["data"]) == data)

    def quiet_tail(self):
        """The target WRITEs to us eight times, one post each, none
        signaled (QP tl). The first asks for an ACK; the seven sent while
        that ACK is on its way ask for none. Once we have them all, we
        ACK the first, and then stay quiet: a responder acknowledges only
        what asks, so nothing covers the seven unless one of them asks
        again. When the retry timer fires, the last WRITE must go again
        alone, asking (ack_solicited), not the tail from its start.

        A round in which the retry timer went back before our ACK came
        (a guest slower than the round trip timed by a first WRITE)
        shows no quiet tail, or the first WRITE again after it; it is
        ACKed and the next round tries again, up to four."""
        if not self.ours:
            return
        q, OP = self.qpn["tl"], roce.OP
        va, rkey = 0x7E0000500000, 0x4D8

        def write(p):
            return p.qpn == DEAD_QPN and p.opcode == OP["RC RDMA_WRITE_ONLY"]

        def acked_all(psn):
            """ACK psn, and whatever comes for half a second after it."""
            self.inject([self.ack(q, psn, 0x1F)], pace=0)
            late = [(p.psn, p.ack) for p in self.replies(timeout=0.5,
                                                         want=write)]
            if late:
                self.inject([self.ack(q, max(p for p, _ in late), 0x1F)],
                            pace=0)
            return late

        # One WRITE, ACKed: the target times a round trip with this
        # guest in it, and its retry timer starts from that, not from
        # 20 ms, which a slow host might not beat.
        self.raw.drain()
        self.ctl.send(msg="tail", qp="tl", n=1, va=va, rkey=rkey)
        got = [p.psn for p in self.replies(timeout=3, count=1, want=write)]
        self.ctl.expect("tail")
        if got:
            acked_all(got[0])

        seen = []
        for _ in range(4):
            self.raw.drain()
            sol0 = self.counters()[0].get("ack_solicited", 0)
            self.ctl.send(msg="tail", qp="tl", n=8, va=va, rkey=rkey)
            got = [(p.psn, p.ack) for p in self.replies(timeout=3, count=8,
                                                        want=write)]
            self.ctl.expect("tail")
            psn0 = got[0][0] if got else 0
            quiet = got == [((psn0 + i) & 0xFFFFFF, int(i == 0))
                            for i in range(8)]
            seen.append(got)
            if not quiet:
                info("quiet tail: not this round, the target sent (PSN, "
                     "AckReq) %s" % got)
                acked_all(max(p for p, _ in got) if got else psn0)
                continue
            self.inject([self.ack(q, psn0, 0x1F)], pace=0)
            nxt = [(p.psn, p.ack) for p in self.replies(timeout=3, count=1,
                                                        want=write)]
            last = (psn0 + 7) & 0xFFFFFF
            late = acked_all(last)
            if nxt and nxt[0][0] == psn0:
                info("quiet tail: not this round, the retry timer went "
                     "back before our ACK: %s" % (nxt + late))
                seen.append(nxt + late)
                continue
            sol = self.counters()[0].get("ack_solicited", 0) - sol0
            check("quiet tail: after the first WRITE's ACK, the retry timer "
                  "sends the last WRITE alone, asking (PSN %d)" % last,
                  nxt == [(last, 1)], "the target sent %s" % nxt)
            check("quiet tail: ack_solicited +1", sol == 1, "+%d" % sol)
            if late:
                info("quiet tail: after our ACK of the last WRITE the target "
                     "sent %s as well" % late)
            return
        check("quiet tail: in one of four rounds the first WRITE asked and "
              "the seven after it did not", False,
              "the target sent (PSN, AckReq) %s" % seen)

    def run(self):
        if not self.warm_up():
            self.ask("bye")
            finish()
        # On a second kernel (RXE_AGAIN=1, run.sh) only the phases the
        # kernel has a part in: the opcodes it has (door, placement), its
        # GID table and IP layer (addresses, masked), QP1 and the QPN
        # table (demux), destroy and queueing under ib_core (churn,
        # budget). The rest is the driver's protocol alone, the same on
        # every kernel, and ran on the first.
        protocol = os.environ.get("RXE_AGAIN") != "1"
        if protocol:
            self.read_gap()     # first: the fuzz aims at every QP, rd too
            self.nak_past_read()
            self.sqd_rewind()
            self.fence_rewind()
            self.gap_nak_after_read()
            self.quiet_tail()
        self.door()
        self.demux()
        self.addresses()
        self.masked()
        if protocol:
            self.live_hostile()
            self.victims()
            self.rnr_from_held()
            self.uc()
        self.placement()    # before the fuzz, which aims at its QPs too
        if protocol:
            self.fuzz()
            self.bad_icrc_flood()
        else:
            info("on this kernel only the phases the kernel has a part in; "
                 "the driver's protocol phases ran on the first")
        self.churn()
        self.budget()
        self.live_check()
        if self.ours and protocol:
            n = self.counters()[0].get("held_expired", 0) - self.expired0
            check("after it all: the 3 out-of-sequence SENDs kept on the live "
                  "QP expired unused (held_expired +%d, at least 3)" % n,
                  n >= 3)
        info("%d frames injected" % self.sent)
        self.ask("bye")
        finish()


def main():
    if sys.argv[1] == "target":
        target(*sys.argv[2:6])
    elif sys.argv[1] == "attacker":
        Attacker(sys.argv[2:]).run()
    else:
        sys.exit("usage: see the top of " + sys.argv[0])


if __name__ == "__main__":
    main()
