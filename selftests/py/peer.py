# SPDX-License-Identifier: GPL-2.0
"""Verbs between two guests: a JSON-lines control channel over TCP, and
QPs of every transport connected to a peer across the wire, set up from
the peer's QP numbers and the guests' IP addresses (IPv4 or IPv6 GID)."""

import ipaddress
import json
import socket
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SGE, RecvWR, SendWR

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
QKEY = 0x11112222
TYPES = {"RC": e.IBV_QPT_RC, "UC": e.IBV_QPT_UC, "UD": e.IBV_QPT_UD}
CTL_PORT = 18600


class Ctl:
    """One JSON object per line, both ways."""

    def __init__(self, sock):
        self.sock = sock
        self.f = sock.makefile("rw")

    @classmethod
    def serve(cls, port=CTL_PORT, timeout=120):
        srv = socket.create_server(("", port), family=socket.AF_INET6,
                                   dualstack_ipv6=True)
        srv.settimeout(timeout)
        conn, _ = srv.accept()
        srv.close()
        conn.settimeout(timeout)
        return cls(conn)

    @classmethod
    def connect(cls, host, port=CTL_PORT, timeout=120):
        end = time.time() + timeout
        while True:
            try:
                s = socket.create_connection((host, port), timeout=5)
                s.settimeout(timeout)
                return cls(s)
            except OSError:
                if time.time() > end:
                    raise
                time.sleep(0.2)

    def send(self, **msg):
        self.f.write(json.dumps(msg) + "\n")
        self.f.flush()

    def recv(self):
        line = self.f.readline()
        if not line:
            raise EOFError("the peer closed the control channel")
        return json.loads(line)

    def expect(self, what):
        msg = self.recv()
        if msg.get("msg") != what:
            raise RuntimeError("control channel: got %r, want %r" % (msg, what))
        return msg


def gid_of(ip):
    """The RoCEv2 GID of an IP address, as pyverbs writes it."""
    a = ipaddress.ip_address(ip)
    if a.version == 4:
        a = ipaddress.IPv6Address("::ffff:" + ip)
    h = a.packed.hex()
    return ":".join(h[i:i + 4] for i in range(0, 32, 4))


def gid_index(ctx, ip, port=1):
    want = gid_of(ip)
    for i in range(ctx.query_port(port).gid_tbl_len):
        try:
            if str(ctx.query_gid(port, i)) == want:
                return i
        except Exception:   # pylint: disable=broad-except
            continue
    raise LookupError("no GID for %s" % ip)


class Endpoint:
    """A device context with one PD, one CQ and one MR."""

    def __init__(self, dev="rxe0", mr_size=1 << 16, cqe=512):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, cqe)
        self.mr = MR(self.pd, mr_size, ACCESS | e.IBV_ACCESS_MW_BIND)

    def qp(self, qtype, depth=64, sge=2, send_ops=0, sig_all=1):
        """A QP of type qtype; send_ops (IBV_QP_EX_WITH_* flags) makes it
        an extended QP (QPEx) that posts those operations with the wr_*
        calls. sig_all=0: only work requests that ask complete."""
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=sge,
                    max_recv_sge=sge)
        if send_ops:
            init = QPInitAttrEx(qp_type=TYPES[qtype], scq=self.cq,
                                rcq=self.cq, cap=cap, pd=self.pd,
                                send_ops_flags=send_ops,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
            return QPEx(self.ctx, init)
        init = QPInitAttr(qp_type=TYPES[qtype], scq=self.cq, rcq=self.cq,
                          cap=cap, sq_sig_all=sig_all)
        return QP(self.pd, init)

    def route(self, my_ip, peer_ip, tclass=0, flow=0):
        return GlobalRoute(dgid=GID(gid_of(peer_ip)),
                           sgid_index=gid_index(self.ctx, my_ip),
                           traffic_class=tclass, flow_label=flow,
                           hop_limit=64)

    def ah(self, my_ip, peer_ip, tclass=0, flow=0):
        attr = AHAttr(gr=self.route(my_ip, peer_ip, tclass, flow),
                      is_global=1, port_num=1)
        return AH(self.pd, attr=attr)

    @staticmethod
    def to_init(qp, qtype, access=ACCESS | e.IBV_ACCESS_MW_BIND):
        attr = QPAttr()
        attr.pkey_index = 0
        attr.port_num = 1
        if qtype == "UD":
            attr.qkey = QKEY
        else:
            attr.qp_access_flags = access
        qp.to_init(attr)

    def connect(self, qp, qtype, my_ip, peer_ip, dest_qpn, rq_psn, sq_psn,
                tclass=0, flow=0, min_rnr_timer=1, timeout=14, rts=True,
                access=ACCESS | e.IBV_ACCESS_MW_BIND):
        """RESET -> INIT -> RTR (-> RTS) towards a peer QP (UD: none)."""
        self.to_init(qp, qtype, access)
        attr = QPAttr()
        if qtype != "UD":
            attr.path_mtu = e.IBV_MTU_1024
            attr.dest_qp_num = dest_qpn
            attr.rq_psn = rq_psn
            attr.ah_attr = AHAttr(gr=self.route(my_ip, peer_ip, tclass, flow),
                                  is_global=1, port_num=1)
            if qtype == "RC":
                attr.max_dest_rd_atomic = 4
                attr.min_rnr_timer = min_rnr_timer
        qp.to_rtr(attr)
        if not rts:
            return
        attr = QPAttr()
        attr.sq_psn = sq_psn
        if qtype == "RC":
            attr.timeout = timeout
            attr.retry_cnt = 7
            attr.rnr_retry = 7
            attr.max_rd_atomic = 4
        qp.to_rts(attr)

    def sge(self, off, length):
        return SGE(self.mr.buf + off, length, self.mr.lkey)

    def post_recv(self, qp, off, length, wr_id=0):
        qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[self.sge(off, length)]))

    def send_wr(self, opcode, off=0, length=0, wr_id=0, imm=0,
                flags=e.IBV_SEND_SIGNALED):
        """A send work request over [off, off + length) of the MR (an
        atomic's 8-byte result buffer: length 8)."""
        return SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                      sg=[self.sge(off, length)], imm_data=imm,
                      send_flags=flags)

    def poll(self, n=1, timeout=20.0):
        """Up to n completions, waiting at most timeout seconds."""
        out, end = [], time.time() + timeout
        while len(out) < n and time.time() < end:
            got, wcs = self.cq.poll(n - len(out))
            if got:
                out.extend(wcs[:got])
            else:
                time.sleep(0.001)
        return out


def wc_status(wc):
    return "no completion" if wc is None else "status %d" % wc.status
