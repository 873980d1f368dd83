#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The traffic mix of the dissection test (40-wire-dissect): every opcode
family a RoCEv2 device sends, over IPv4 and IPv6, between two guests.

  wire_mix.py client PEER_IP PEER_IP6 MY_IP MY_IP6
  wire_mix.py server PEER_IP PEER_IP6 MY_IP MY_IP6 PLAN_JSON
  wire_mix.py analyze PLAN_JSON PCAP PDML [ours|theirs]

The client (requester) creates the QPs of PLAN, the server the matching
ones; they swap QP numbers and keys over TCP, the client runs the work
requests and checks its completions, the server checks its receive
completions and data and writes what the wire must show to PLAN_JSON.
`analyze` then judges a capture of it all, with our own parser (roce.py)
and with Wireshark's dissector (the PDML of `tshark -T pdml`).
"""

import os
import struct
import sys
import time
import xml.etree.ElementTree as ET
from os.path import dirname

sys.path.insert(0, dirname(__file__))

import roce  # noqa: E402
from tap import check, finish  # noqa: E402


# name, transport, IP version, traffic class, client's first send PSN.
# rc4 and uc4 start just below the 24-bit wrap so that their PSNs cross it.
PLAN = [
    ("rc4", "RC", 4, 0, 0xFFFFF8),
    ("rc6", "RC", 6, 0x68, 0x123456),
    ("rc4tc", "RC", 4, 0xB8, 100),
    ("rnr", "RC", 4, 0, 0),
    ("nak", "RC", 4, 0, 0),
    ("uc4", "UC", 4, 0, 0xFFFFFE),
    ("uc6", "UC", 6, 0x28, 7),
    ("ud4", "UD", 4, 0x20, 0),
    ("ud6", "UD", 6, 0x48, 0),
]
SERVER_PSN = 0x300000
# IPv6 flow labels of the address vectors.
FLOW = {"rc6": 0x12345, "uc6": 0xABCDE, "ud6": 0x54321}

# Server MR layout: receive buffers, READ source, WRITE target, atomics.
RECV_OFF, RECV_SLOT = 0, 4096
READ_OFF = 40 << 10
WRITE_OFF = 48 << 10
ATOMIC_OFF = 60 << 10
# Client MR layout: send source, READ target, atomic results.
SRC_OFF = 0
READ_DST = 16 << 10
ATOMIC_DST = 32 << 10


def pattern(seed, n):
    return bytes((i * 7 + seed) & 0xFF for i in range(n))


def wire_imm(imm):
    """The ImmDt field on the wire of an imm_data given to pyverbs, which
    stores it as is in the big-endian field of ibv_send_wr."""
    return int.from_bytes(imm.to_bytes(4, "little"), "big")


def ops_of(name):
    """The work requests of one QP: (kind, length, extra)."""
    if name == "rc4":
        return [("send", 0), ("send", 17), ("send", 1024), ("send", 2501),
                ("send_imm", 6), ("send_imm", 2049),
                ("send_inv", 20), ("send_inv", 1500),
                ("write", 13), ("write", 3000),
                ("write_imm", 8), ("write_imm", 2100),
                ("read", 100), ("read", 3000),
                ("cmp_swp", 8), ("fetch_add", 8)]
    if name == "rc6":
        return [("send", 2501), ("write", 2000), ("read", 2500),
                ("fetch_add", 8)]
    if name == "rc4tc":
        return [("send", 40)]
    if name == "rnr":
        return [("send", 10)]
    if name == "nak":
        return [("write_badkey", 16)]
    if name == "uc4":
        return [("send", 17), ("send", 2501), ("send_imm", 2049),
                ("send_imm", 4), ("write", 3000), ("write", 13),
                ("write_imm", 2100), ("write_imm", 8)]
    if name == "uc6":
        return [("send", 100), ("write", 2000)]
    if name == "ud4":
        return [("send", 100), ("send_imm", 1000)]
    if name == "ud6":
        return [("send", 50), ("send_imm", 51)]
    raise KeyError(name)


def receives_of(name):
    return sum(k in ("send", "send_imm", "send_inv", "write_imm")
               for k, _ in ops_of(name))


# --- client ------------------------------------------------------------------

def client(peer4, peer6, me4, me6):
    # pylint: disable=too-many-locals,too-many-branches,too-many-statements
    import peer as P
    e = P.e
    ep = P.Endpoint()
    ep.mr.write(pattern(1, 8192), 8192, SRC_OFF)
    qps = {name: ep.qp(t) for name, t, _, _, _ in PLAN}
    ctl = P.Ctl.connect(peer4)
    ctl.send(msg="hello", qps=[dict(name=n, type=t, ip=v, tclass=tc, psn=psn,
                                    flow=FLOW.get(n, 0), qpn=qps[n].qp_num)
                               for n, t, v, tc, psn in PLAN])
    srv = ctl.expect("hello")
    rq = {q["name"]: q for q in srv["qps"]}
    for name, t, v, tc, psn in PLAN:
        me, peer = (me4, peer4) if v == 4 else (me6, peer6)
        ep.connect(qps[name], t, me, peer, rq[name]["qpn"], SERVER_PSN, psn,
                   tclass=tc, flow=FLOW.get(name, 0))
    ahs = {name: ep.ah(*((me4, peer4) if v == 4 else (me6, peer6)), tclass=tc,
                       flow=FLOW.get(name, 0))
           for name, t, v, tc, _ in PLAN if t == "UD"}
    check("client: %d QPs connected to the server's" % len(PLAN), True)

    raddr, rkey = srv["addr"], srv["rkey"]
    mws = list(srv["mw_rkeys"])
    expect = {"reth": [], "imm": [], "ieth": [], "atomic": [], "orig": [],
              "deth": []}
    atomic_val = {"rc4": 5, "rc6": 0}
    wr_id = 0
    for name, t, v, tc, psn in PLAN:
        qp = qps[name]
        if name == "rnr":
            ctl.send(msg="rnr")     # the server posts its receive late
        for kind, length in ops_of(name):
            wr_id += 1
            imm = 0x1234ABCD + wr_id
            want_status = e.IBV_WC_SUCCESS
            if kind == "send":
                wr = ep.send_wr(e.IBV_WR_SEND, SRC_OFF, length, wr_id)
            elif kind == "send_imm":
                wr = ep.send_wr(e.IBV_WR_SEND_WITH_IMM, SRC_OFF, length,
                                wr_id, imm=imm)
                expect["imm"].append(wire_imm(imm))
            elif kind == "send_inv":
                inv = mws.pop(0)
                wr = ep.send_wr(e.IBV_WR_SEND_WITH_INV, SRC_OFF, length,
                                wr_id, imm=inv)
                expect["ieth"].append(inv)
            elif kind in ("write", "write_imm", "write_badkey"):
                op = (e.IBV_WR_RDMA_WRITE_WITH_IMM if kind == "write_imm"
                      else e.IBV_WR_RDMA_WRITE)
                wr = ep.send_wr(op, SRC_OFF, length, wr_id, imm=imm)
                key = rkey if kind != "write_badkey" else rkey ^ 0x5A5A5A00
                wr.set_wr_rdma(key, raddr + WRITE_OFF)
                expect["reth"].append([raddr + WRITE_OFF, key, length])
                if kind == "write_imm":
                    expect["imm"].append(wire_imm(imm))
                if kind == "write_badkey":
                    want_status = e.IBV_WC_REM_ACCESS_ERR
            elif kind == "read":
                wr = ep.send_wr(e.IBV_WR_RDMA_READ, READ_DST, length, wr_id)
                wr.set_wr_rdma(rkey, raddr + READ_OFF)
                expect["reth"].append([raddr + READ_OFF, rkey, length])
            else:
                off = ATOMIC_OFF + (0 if name == "rc4" else 8)
                wr = ep.send_wr(e.IBV_WR_ATOMIC_CMP_AND_SWP
                                if kind == "cmp_swp" else
                                e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                                ATOMIC_DST + 8 * wr_id, 8, wr_id)
                if kind == "cmp_swp":
                    wr.set_wr_atomic(rkey, raddr + off, atomic_val[name], 9)
                    expect["atomic"].append([0x13, raddr + off, rkey, 9,
                                             atomic_val[name]])
                    expect["orig"].append(atomic_val[name])
                    atomic_val[name] = 9
                else:
                    wr.set_wr_atomic(rkey, raddr + off, 3)
                    expect["atomic"].append([0x14, raddr + off, rkey, 3, 0])
                    expect["orig"].append(atomic_val[name])
                    atomic_val[name] += 3
            if t == "UD":
                wr.set_wr_ud(ahs[name], rq[name]["qpn"], P.QKEY)
                expect["deth"].append([P.QKEY, qp.qp_num])
            qp.post_send(wr)
            wc = (ep.poll(1, timeout=30) or [None])[0]
            ok = (wc is not None and wc.wr_id == wr_id and
                  wc.status == want_status)
            if not ok or want_status != e.IBV_WC_SUCCESS:
                check("client: %s %s of %d bytes completes with status %d" %
                      (name, kind, length, want_status), ok,
                      P.wc_status(wc))
            if kind == "read" and ok:
                got = ep.mr.read(length, READ_DST)
                check("client: %s READ of %d bytes returns the server's data" %
                      (name, length), got == pattern(3, length))
            if kind in ("cmp_swp", "fetch_add") and ok:
                got = struct.unpack("<Q", ep.mr.read(8, ATOMIC_DST + 8 * wr_id))[0]
                check("client: %s %s returns the original value %d" %
                      (name, kind, expect["orig"][-1]), got == expect["orig"][-1],
                      "got %d" % got)
    check("client: every work request completed as expected", True)
    ctl.send(msg="done", expect=expect)
    res = ctl.expect("result")
    check("server: receive completions, data and invalidations as expected",
          res["ok"], "; ".join(res["why"]))
    finish()


# --- server ------------------------------------------------------------------

def rnr_naks(dev="rxe0"):
    with open("/sys/class/infiniband/%s/ports/1/hw_counters/send_rnr_err" %
              dev) as f:
        return int(f.read())


def server(peer4, peer6, me4, me6, out):
    # pylint: disable=too-many-locals,too-many-branches,too-many-statements
    import json
    import peer as P
    from pyverbs.mr import MW, MWBindInfo
    from pyverbs.wr import SendWR
    e = P.e
    ep = P.Endpoint()
    ep.mr.write(pattern(3, 8192), 8192, READ_OFF)
    ep.mr.write(struct.pack("<QQ", 5, 0), 16, ATOMIC_OFF)
    ctl = P.Ctl.serve()
    hello = ctl.expect("hello")
    plan = {q["name"]: q for q in hello["qps"]}
    qps = {}
    for q in hello["qps"]:
        name, t = q["name"], q["type"]
        qp = qps[name] = ep.qp(t)
        me, peer = (me4, peer4) if q["ip"] == 4 else (me6, peer6)
        ep.connect(qp, t, me, peer, q["qpn"], q["psn"], SERVER_PSN,
                   tclass=q["tclass"], flow=q["flow"],
                   min_rnr_timer=24 if name == "rnr" else 1)
        if name != "rnr":
            for i in range(receives_of(name)):
                ep.post_recv(qp, RECV_OFF + RECV_SLOT * (i % 10), RECV_SLOT,
                             wr_id=(len(qps) << 8) | i)
    # Two type 2 windows bound to rc4, for SEND with invalidate.
    mws, mw_rkeys = [], []
    for i in range(2):
        mw = MW(ep.pd, e.IBV_MW_TYPE_2)
        wr = SendWR(wr_id=0xB00 + i, opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, MWBindInfo(ep.mr, ep.mr.buf, 4096,
                                      e.IBV_ACCESS_REMOTE_WRITE))
        qps["rc4"].post_send(wr)
        wc = (ep.poll(1) or [None])[0]
        if not check("server: bind type 2 window %d to rc4" % i,
                     wc is not None and wc.status == e.IBV_WC_SUCCESS,
                     P.wc_status(wc)):
            finish()
        mws.append(mw)
        mw_rkeys.append(wr.rkey)
    ctl.send(msg="hello", addr=ep.mr.buf, rkey=ep.mr.rkey, mw_rkeys=mw_rkeys,
             qps=[dict(name=n, qpn=qp.qp_num) for n, qp in qps.items()])

    msg = ctl.recv()
    if msg.get("msg") == "rnr":
        # The client's SEND must meet the empty queue at least once: wait
        # for our RNR NAK (send_rnr_err, a counter both rxes have).
        rnr0, end = rnr_naks(), time.time() + 20
        while rnr_naks() == rnr0 and time.time() < end:
            time.sleep(0.05)
        ep.post_recv(qps["rnr"], RECV_OFF, RECV_SLOT, wr_id=0xCC00)
        msg = ctl.recv()
    if msg.get("msg") != "done":
        raise RuntimeError("control channel: got %r" % msg)
    expect = msg["expect"]

    why = []
    want = sum(receives_of(n) for n in plan)
    wcs = ep.poll(want, timeout=10)
    by_qp = {}
    for wc in wcs:
        by_qp.setdefault(wc.qp_num, []).append(wc)
    for name, qp in qps.items():
        got = by_qp.get(qp.qp_num, [])
        if len(got) != receives_of(name):
            why.append("%s: %d receive completions, want %d" %
                       (name, len(got), receives_of(name)))
        bad = [wc.status for wc in got if wc.status != e.IBV_WC_SUCCESS]
        if bad:
            why.append("%s: receive completions with status %s" % (name, bad))
    imms = sorted(wc.imm_data for wc in wcs if wc.wc_flags & e.IBV_WC_WITH_IMM)
    want_imms = sorted(wire_imm(i) for i in expect["imm"])
    if imms != want_imms:
        why.append("immediate data %s, want %s" % (imms, want_imms))
    # Ours reports a remote invalidation as IBV_WC_WITH_INV (1 << 3). The
    # in-tree rxe copies the kernel's IB_WC_WITH_INVALIDATE (1 << 2) to
    # userspace as it is, where 1 << 2 reads IBV_WC_IP_CSUM_OK.
    inv_flags = e.IBV_WC_WITH_INV
    if os.environ.get("RXE_IMPL", "ours") != "ours":
        inv_flags |= 4
    invs = sorted(wc.imm_data for wc in wcs if wc.wc_flags & inv_flags and
                  wc.opcode == e.IBV_WC_RECV and
                  not wc.wc_flags & e.IBV_WC_WITH_IMM)
    if invs != sorted(expect["ieth"]):
        why.append("invalidated rkeys %s, want %s" % (invs, expect["ieth"]))
    got = ep.mr.read(3000, WRITE_OFF)
    if got != pattern(1, 3000):
        why.append("the WRITE target does not hold the client's data")
    val = struct.unpack("<QQ", ep.mr.read(16, ATOMIC_OFF))
    if val != (12, 3):
        why.append("atomic targets hold %s, want (12, 3)" % (val,))
    ctl.send(msg="result", ok=not why, why=why)

    with open(out, "w") as f:
        json.dump({"client": hello["qps"],
                   "server": {n: qp.qp_num for n, qp in qps.items()},
                   "client_ip": [peer4, peer6], "server_ip": [me4, me6],
                   "expect": expect}, f)
    check("server: receive side as expected", not why, "; ".join(why))
    finish()


# --- analysis ----------------------------------------------------------------

# Opcodes the mix must produce, over the whole capture.
EXPECTED = [
    "RC SEND_FIRST", "RC SEND_MIDDLE", "RC SEND_LAST", "RC SEND_ONLY",
    "RC SEND_LAST_WITH_IMMEDIATE", "RC SEND_ONLY_WITH_IMMEDIATE",
    "RC SEND_LAST_WITH_INVALIDATE", "RC SEND_ONLY_WITH_INVALIDATE",
    "RC RDMA_WRITE_FIRST", "RC RDMA_WRITE_MIDDLE", "RC RDMA_WRITE_LAST",
    "RC RDMA_WRITE_ONLY", "RC RDMA_WRITE_LAST_WITH_IMMEDIATE",
    "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RC RDMA_READ_REQUEST",
    "RC RDMA_READ_RESPONSE_FIRST", "RC RDMA_READ_RESPONSE_MIDDLE",
    "RC RDMA_READ_RESPONSE_LAST", "RC RDMA_READ_RESPONSE_ONLY",
    "RC ACKNOWLEDGE", "RC ATOMIC_ACKNOWLEDGE", "RC COMPARE_SWAP",
    "RC FETCH_ADD",
    "UC SEND_FIRST", "UC SEND_MIDDLE", "UC SEND_LAST", "UC SEND_ONLY",
    "UC SEND_LAST_WITH_IMMEDIATE", "UC SEND_ONLY_WITH_IMMEDIATE",
    "UC RDMA_WRITE_FIRST", "UC RDMA_WRITE_MIDDLE", "UC RDMA_WRITE_LAST",
    "UC RDMA_WRITE_ONLY", "UC RDMA_WRITE_LAST_WITH_IMMEDIATE",
    "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE",
    "UD SEND_ONLY", "UD SEND_ONLY_WITH_IMMEDIATE",
]


def pdml_packets(path):
    """Per frame: {field name: [(show, showname), ...]} and the names of
    the protocols, from tshark's PDML. A header that Wireshark shows as a
    field with a subfield of the same name (ImmDt, IETH) counts once."""
    out = []
    for _, el in ET.iterparse(path):
        if el.tag != "packet":
            continue
        fields, protos = {}, []
        for p in el.iter("proto"):
            protos.append(p.get("name"))
            if p.get("name") == "_ws.malformed":
                fields.setdefault("_ws.malformed", []).append(
                    ("", p.get("showname", "")))
        for f in el.iter("field"):
            name = f.get("name")
            if any(c.get("name") == name for c in f):
                continue
            fields.setdefault(name, []).append(
                (f.get("show", ""), f.get("showname", "")))
        out.append((fields, protos))
        el.clear()
    return out


def _ints(fields, name):
    """The values of a field as integers: numbers in any base, or bytes
    shown as aa:bb:cc:dd."""
    out = []
    for show, _ in fields.get(name, []):
        if ":" in show:
            out.append(int(show.replace(":", ""), 16))
            continue
        for base in (0, 10, 16):
            try:
                out.append(int(show, base))
                break
            except ValueError:
                pass
    return out


def analyze(plan_path, pcap, pdml, impl="ours"):
    # pylint: disable=too-many-locals,too-many-branches,too-many-statements
    import json
    with open(plan_path) as f:
        plan = json.load(f)
    frames = roce.read_pcap(pcap)
    pkts = roce.roce_frames(frames)
    check("the capture holds RoCEv2 packets (%d of %d frames)" %
          (len(pkts), len(frames)), len(pkts) >= 80 and
          len(pkts) == len(frames), "want every frame, and at least 80")

    # --- IP and UDP ---
    bad = [i for i, p in enumerate(pkts) if p.dport != roce.PORT]
    check("every packet goes to UDP port 4791", not bad,
          "frames %s" % bad[:10])
    v4 = [p for p in pkts if p.ipver == 4]
    v6 = [p for p in pkts if p.ipver == 6]
    check("both IPv4 (%d) and IPv6 (%d) packets were captured" %
          (len(v4), len(v6)), v4 and v6)
    bad = [i for i, p in enumerate(pkts) if p.ipver == 4 and
           (not p.df or p.mf or p.frag)]
    check("every IPv4 packet has DF set and is not a fragment", not bad,
          "frames %s" % bad[:10])
    bad = [i for i, p in enumerate(pkts) if p.ipver == 4 and not p.ip_ok]
    check("every IPv4 header checksum is right", not bad, "frames %s" % bad[:10])
    # RFC 8200 8.1: a UDP checksum of 0 is illegal over IPv6 (RFC 6936
    # tunnel exceptions aside). The in-tree rxe sends 0: known, reported.
    # Only packets from the peer are judged: ours may be captured before
    # the NIC's checksum offload filled the sum in.
    from_peer = [p for p in v6 if p.src == plan["client_ip"][1]]
    zero = [i for i, p in enumerate(pkts) if p.ipver == 6 and p.udp_csum == 0]
    check("IPv6 packets from the peer were captured (%d)" % len(from_peer),
          from_peer)
    bad = [i for i, p in enumerate(pkts) if p in from_peer and
           p.udp_csum and not p.udp6_ok]
    if impl == "theirs" and zero:
        print("# the in-tree rxe sends IPv6 UDP checksum 0 (%d packets): "
              "not judged" % len(zero))
    else:
        check("every IPv6 packet has a UDP checksum (not 0)", not zero,
              "frames %s" % zero[:10])
    check("IPv6 UDP checksums from the peer are right", not bad,
          "frames %s" % bad[:10])

    # --- BTH and the length rules ---
    bad = ["%d: %s %s" % (i, p.name, p.problems) for i, p in enumerate(pkts)
           if p.problems]
    check("every packet parses: known opcode, headers present, payload "
          "only where the opcode has one, payload + pad a multiple of 4",
          not bad, "; ".join(bad[:10]))
    bad = [i for i, p in enumerate(pkts) if p.tver != 0 or p.pkey != 0xFFFF]
    check("every BTH has header version 0 and the default P_Key", not bad,
          "frames %s" % bad[:10])
    bad = [i for i, p in enumerate(pkts) if p.resv6 or p.resv7 or p.fecn or
           p.becn]
    check("reserved BTH bits, FECN and BECN are 0 on what we send", not bad,
          "frames %s" % bad[:10])
    seen = {p.name for p in pkts}
    missing = [n for n in EXPECTED if n not in seen]
    check("every opcode of the mix was sent (%d kinds)" % len(EXPECTED),
          not missing, "missing " + ", ".join(missing))
    syn = [p.hdrs["AETH"]["syndrome"] for p in pkts if p.opcode == 0x11]
    check("ACKs (AETH ACK syndrome) were sent", any(s >> 5 == 0 for s in syn))
    check("an RNR NAK was sent (AETH syndrome 001xxxxx)",
          any(s >> 5 == 1 for s in syn), "syndromes %s" % sorted(set(syn)))
    check("a NAK remote access error was sent (AETH syndrome 0x62)",
          roce.NAK_ACC in syn, "syndromes %s" % sorted(set(syn)))

    # --- what the verbs asked for is what the headers say ---
    # A packet sent again says nothing new: the RNR retries of the mix,
    # or the retry timer's after an ACK a slow guest delayed. Against the
    # plan each counts once, by its flow (addresses, UDP source port),
    # QP, PSN and opcode; tshark reads every frame, below.
    once = list({(p.src, p.dst, p.sport, p.qpn, p.psn, p.opcode): p
                 for p in pkts}.values())
    print("# %d packets repeat the flow, QP, PSN and opcode of one before" %
          (len(pkts) - len(once)))

    def fields(hdr, keys, ps=pkts):
        return [[p.hdrs[hdr][k] for k in keys] for p in ps if hdr in p.hdrs]

    def one(hdr, key, ps=pkts):
        return [p.hdrs[hdr][key] for p in ps if hdr in p.hdrs]

    exp = plan["expect"]
    reths = fields("RETH", ("va", "rkey", "dmalen"))
    missing = [r for r in exp["reth"] if r not in reths]
    check("RETHs carry the VA, R_Key and length of each WRITE and READ",
          not missing, "missing %s" % missing)
    imms = one("ImmDt", "value")
    got = one("ImmDt", "value", once)
    check("ImmDt carries the immediate data of each work request",
          sorted(got) == sorted(exp["imm"]), "%s, want %s" % (got, exp["imm"]))
    got = one("IETH", "value", once)
    check("IETH carries the R_Key to invalidate",
          sorted(got) == sorted(exp["ieth"]), "%s, want %s" % (got, exp["ieth"]))
    got = [[p.opcode] + [p.hdrs["AtomicETH"][k] for k in
                         ("va", "rkey", "swap_add", "compare")]
           for p in once if "AtomicETH" in p.hdrs]
    check("AtomicETH carries VA, R_Key, swap/add and compare data",
          sorted(got) == sorted(exp["atomic"]),
          "%s, want %s" % (got, exp["atomic"]))
    got = one("AtomicAckETH", "orig", once)
    check("AtomicAckETH carries the original remote data",
          sorted(got) == sorted(exp["orig"]), "%s, want %s" % (got, exp["orig"]))
    got = fields("DETH", ("qkey", "srcqp"), once)
    check("DETH carries the Q_Key and the source QP",
          sorted(got) == sorted(exp["deth"]), "%s, want %s" % (got, exp["deth"]))

    # --- flows: source ports, traffic class, PSNs ---
    client = {q["name"]: q for q in plan["client"]}
    server = plan["server"]
    cip = dict(zip((4, 6), plan["client_ip"]))
    sip = dict(zip((4, 6), plan["server_ip"]))
    ports = {}
    for name, q in client.items():
        v = q["ip"]
        to_srv = [p for p in pkts if p.src == cip[v] and p.dst == sip[v] and
                  p.qpn == server[name]]
        to_cli = [p for p in pkts if p.src == sip[v] and p.dst == cip[v] and
                  p.qpn == q["qpn"]]
        if not check("%s: packets to the server's QP were captured" % name,
                     to_srv):
            continue
        sp = {p.sport for p in to_srv}
        check("%s: one UDP source port for the QP's packets (%s)" %
              (name, sorted(sp)), len(sp) == 1)
        check("%s: UDP source port in 0xc000-0xffff" % name,
              all(0xC000 <= s <= 0xFFFF for s in sp), "ports %s" % sorted(sp))
        if q["type"] != "UD":
            ports[name] = min(sp)
        tcs = {p.tos for p in to_srv}
        if q["type"] != "UD":
            tcs |= {p.tos for p in to_cli}
        check("%s: IPv%d traffic class 0x%02x from the address vector on "
              "every packet" % (name, v, q["tclass"]), tcs == {q["tclass"]},
              "saw %s" % sorted(hex(t) for t in tcs))
        if v == 6:
            flows = {p.flow for p in to_srv}
            if q["type"] != "UD":
                flows |= {p.flow for p in to_cli}
            # The in-tree rxe sends flow label 0 whatever the AV says.
            if impl == "theirs" and flows == {0}:
                print("# %s: the in-tree rxe sends flow label 0, not the AV's "
                      "0x%05x: not judged" % (name, q["flow"]))
            else:
                check("%s: IPv6 flow label 0x%05x from the address vector on "
                      "every packet" % (name, q["flow"]), flows == {q["flow"]},
                      "saw %s" % sorted(hex(x) for x in flows))
    dup = len(ports) - len(set(ports.values()))
    check("connected QPs use different UDP source ports (%s)" %
          ", ".join("%s=%d" % kv for kv in sorted(ports.items())), dup == 0)
    for name in ("rc4", "uc4"):
        psns = [p.psn for p in pkts if p.src == cip[4] and
                p.qpn == server[name] and (p.opcode & 0x1F) != 0x0C]
        wrapped = any(a == 0xFFFFFF and b == 0 for a, b in zip(psns, psns[1:]))
        check("%s: request PSNs count up across the 24-bit wrap "
              "(0xffffff then 0)" % name, wrapped,
              "PSNs %s" % [hex(x) for x in psns[:12]])

    # --- Wireshark ---
    dis = pdml_packets(pdml)
    check("tshark dissected every frame (%d)" % len(dis),
          len(dis) == len(frames), "%d of %d" % (len(dis), len(frames)))
    bad = [i + 1 for i, (f, protos) in enumerate(dis)
           if "infiniband" not in protos]
    check("tshark decodes every frame as InfiniBand (RoCEv2)", not bad,
          "frames %s" % bad[:10])
    known = "Illegal checksum value (0)" if impl == "theirs" else None
    bad = ["%d: %s" % (i + 1, s) for i, (f, _) in enumerate(dis)
           for s in ([n for _, n in f.get("_ws.malformed", [])] +
                     [n for _, n in f.get("_ws.expert", [])
                      if ("Error" in n or "Malformed" in n) and
                      not (known and known in n)])]
    check("tshark marks no frame Malformed and has no Expert Info (Error)",
          not bad, "; ".join(bad[:10]))
    bad = [i + 1 for i, (f, _) in enumerate(dis)
           if any("Unknown" in n for _, n in f.get("infiniband.bth.opcode", []))]
    check("tshark knows every opcode", not bad, "frames %s" % bad[:10])
    names = {}
    for (f, _), p in zip(dis, pkts):
        for _, n in f.get("infiniband.bth.opcode", []):
            names.setdefault(p.name, n)
    missing = [n for n in EXPECTED if n not in names]
    check("tshark shows every opcode of the mix", not missing,
          "missing " + ", ".join(missing))
    print("# opcodes as tshark names them:")
    for n in EXPECTED:
        print("#   %-36s %s" % (n, names.get(n, "-")))
    diff = []
    for i, ((f, _), p) in enumerate(zip(dis, pkts)):
        mine = (p.opcode, p.qpn, p.psn, p.pad)
        theirs = tuple(x[0] if x else None for x in (
            _ints(f, "infiniband.bth.opcode"), _ints(f, "infiniband.bth.destqp"),
            _ints(f, "infiniband.bth.psn"), _ints(f, "infiniband.bth.padcnt")))
        if mine != theirs:
            diff.append("%d: %s vs %s" % (i + 1, mine, theirs))
    check("tshark and roce.py read the same opcode, QPN, PSN and pad count",
          not diff, "; ".join(diff[:5]))
    t_reth = sorted([a, b, c] for f, _ in dis for a, b, c in zip(
        *(_ints(f, "infiniband.reth." + k) for k in ("va", "r_key", "dmalen"))))
    check("tshark reads the same RETHs", t_reth == sorted(reths),
          "%s vs %s" % (t_reth[:4], sorted(reths)[:4]))
    t_imm = sorted(x for f, _ in dis for x in _ints(f, "infiniband.immdt"))
    check("tshark reads the same immediate data", t_imm == sorted(imms),
          "%s vs %s" % (t_imm, sorted(imms)))
    ieths = one("IETH", "value")
    atoms = fields("AtomicETH", ("swap_add", "compare"))
    origs = one("AtomicAckETH", "orig")
    deths = fields("DETH", ("qkey", "srcqp"))
    t_ieth = sorted(x for f, _ in dis for x in _ints(f, "infiniband.ieth"))
    check("tshark reads the same IETH R_Keys", t_ieth == sorted(ieths),
          "%s vs %s" % (t_ieth, sorted(ieths)))
    t_atom = sorted(list(x) for f, _ in dis for x in zip(
        _ints(f, "infiniband.atomiceth.swapdt"),
        _ints(f, "infiniband.atomiceth.cmpdt")))
    check("tshark reads the same atomic swap/add and compare data",
          t_atom == sorted(atoms), "%s vs %s" % (t_atom, sorted(atoms)))
    t_orig = sorted(x for f, _ in dis
                    for x in _ints(f, "infiniband.atomicacketh.origremdt"))
    check("tshark reads the same original remote data", t_orig == sorted(origs),
          "%s vs %s" % (t_orig, sorted(origs)))
    t_deth = sorted(list(x) for f, _ in dis for x in zip(
        _ints(f, "infiniband.deth.q_key"), _ints(f, "infiniband.deth.srcqp")))
    check("tshark reads the same DETH Q_Keys and source QPs",
          t_deth == sorted(deths), "%s vs %s" % (t_deth, sorted(deths)))
    finish()


def main():
    role = sys.argv[1]
    if role == "client":
        client(*sys.argv[2:6])
    elif role == "server":
        server(*sys.argv[2:7])
    elif role == "analyze":
        analyze(*sys.argv[2:6])
    else:
        sys.exit("usage: see the top of " + sys.argv[0])


if __name__ == "__main__":
    main()
