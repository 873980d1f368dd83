# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 packets for the wire tests, independent of the driver: the
opcode table and header layouts of IBA vol 1 ch. 9, the ICRC of the RoCEv2
annex A17.3.3, building Ethernet/IP/UDP frames around them, parsing
captured frames, reading pcap files, and sending raw frames on a netdev.

Nothing here imports pyverbs or scapy: the tests use it to judge both.
"""

import ipaddress
import select
import socket
import struct
import time
import zlib

PORT = 4791
ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD

# Extension header sizes in bytes (IBA 9.3; FETH: the Memory Placement
# Extensions annex).
HDR_LEN = {"RETH": 16, "AETH": 4, "AtomicETH": 28, "AtomicAckETH": 8,
           "ImmDt": 4, "IETH": 4, "DETH": 8, "CNP": 16, "FETH": 4}

# opcode -> (name, extension headers in wire order, carries a payload):
# what every rxe knows.
OPCODES = {}
# RC FLUSH and ATOMIC WRITE of the Memory Placement Extensions annex
# (IBA vol 1 A19), known only where the kernel has their verbs (6.2 on):
# not in OPCODES, a caller that sends them opts in (opcodes(mpe=True)).
MPE_OPCODES = {}


def _op(base, transport, ops, table=OPCODES):
    for low, name, hdrs, payload in ops:
        table[base | low] = (transport + " " + name, tuple(hdrs), payload)


_SEND = [
    (0x00, "SEND_FIRST", [], True),
    (0x01, "SEND_MIDDLE", [], True),
    (0x02, "SEND_LAST", [], True),
    (0x03, "SEND_LAST_WITH_IMMEDIATE", ["ImmDt"], True),
    (0x04, "SEND_ONLY", [], True),
    (0x05, "SEND_ONLY_WITH_IMMEDIATE", ["ImmDt"], True),
]
_WRITE = [
    (0x06, "RDMA_WRITE_FIRST", ["RETH"], True),
    (0x07, "RDMA_WRITE_MIDDLE", [], True),
    (0x08, "RDMA_WRITE_LAST", [], True),
    (0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", ["ImmDt"], True),
    (0x0a, "RDMA_WRITE_ONLY", ["RETH"], True),
    (0x0b, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", ["RETH", "ImmDt"], True),
]
_RC_ONLY = [
    (0x0c, "RDMA_READ_REQUEST", ["RETH"], False),
    (0x0d, "RDMA_READ_RESPONSE_FIRST", ["AETH"], True),
    (0x0e, "RDMA_READ_RESPONSE_MIDDLE", [], True),
    (0x0f, "RDMA_READ_RESPONSE_LAST", ["AETH"], True),
    (0x10, "RDMA_READ_RESPONSE_ONLY", ["AETH"], True),
    (0x11, "ACKNOWLEDGE", ["AETH"], False),
    (0x12, "ATOMIC_ACKNOWLEDGE", ["AETH", "AtomicAckETH"], False),
    (0x13, "COMPARE_SWAP", ["AtomicETH"], False),
    (0x14, "FETCH_ADD", ["AtomicETH"], False),
    (0x16, "SEND_LAST_WITH_INVALIDATE", ["IETH"], True),
    (0x17, "SEND_ONLY_WITH_INVALIDATE", ["IETH"], True),
]
_op(0x00, "RC", _SEND + _WRITE + _RC_ONLY)
_op(0x20, "UC", _SEND + _WRITE)
_op(0x60, "UD", [(0x04, "SEND_ONLY", ["DETH"], True),
                 (0x05, "SEND_ONLY_WITH_IMMEDIATE", ["DETH", "ImmDt"], True)])
OPCODES[0x81] = ("CNP", ("CNP",), False)
_op(0x00, "RC", [(0x1c, "FLUSH", ["FETH", "RETH"], False),
                 (0x1d, "ATOMIC_WRITE", ["RETH"], True)], MPE_OPCODES)

# Every opcode this file can name and parse, the MPE ones too.
ALL_OPCODES = {**OPCODES, **MPE_OPCODES}
OP = {name: code for code, (name, _, _) in ALL_OPCODES.items()}


def opcodes(mpe=False):
    """The opcodes a driver knows: OPCODES, and with mpe (a kernel with
    FLUSH and ATOMIC WRITE) MPE_OPCODES too."""
    return ALL_OPCODES if mpe else OPCODES


def opname(code):
    return ALL_OPCODES[code][0] if code in ALL_OPCODES else \
        "opcode 0x%02x" % code


def hdrs_len(code):
    return 12 + sum(HDR_LEN[h] for h in ALL_OPCODES[code][1])


# --- headers ---------------------------------------------------------------

def bth(opcode, qpn, psn, pkey=0xFFFF, se=0, mig=0, pad=0, tver=0, ack=0,
        fecn=0, becn=0, resv6=0, resv7=0):
    return struct.pack(">BBHII", opcode,
                       (se << 7) | (mig << 6) | (pad << 4) | tver, pkey,
                       (fecn << 31) | (becn << 30) | (resv6 << 24) |
                       (qpn & 0xFFFFFF),
                       (ack << 31) | (resv7 << 24) | (psn & 0xFFFFFF))


def reth(va, rkey, dmalen):
    return struct.pack(">QII", va, rkey, dmalen)


def aeth(syndrome, msn):
    return struct.pack(">I", (syndrome << 24) | (msn & 0xFFFFFF))


def atomiceth(va, rkey, swap_add, compare=0):
    return struct.pack(">QIQQ", va, rkey, swap_add, compare)


def atomicacketh(orig):
    return struct.pack(">Q", orig)


# FETH placement types (bits 3..0) and selectivity levels (bits 5..4).
FLUSH_GLOBAL = 1         # global visibility
FLUSH_PERSISTENT = 2     # persistence
FLUSH_RANGE = 0          # the memory range of the RETH
FLUSH_MR = 1             # the whole memory region of the R_Key


def feth(placement, level=FLUSH_RANGE):
    return struct.pack(">I", ((level & 3) << 4) | (placement & 0xF))


def immdt(imm):
    return struct.pack(">I", imm)


def ieth(rkey):
    return struct.pack(">I", rkey)


def deth(qkey, srcqp):
    return struct.pack(">II", qkey, srcqp & 0xFFFFFF)


# The QPN a datagram to a multicast group is sent to (IBA 10.5.2).
MCAST_QPN = 0xFFFFFF


def ud_send(qpn, qkey, payload=b"datagram", srcqp=0x77, **kw):
    """The RoCEv2 bytes (BTH onwards, without ICRC) of a UD SEND_ONLY to
    qpn, its payload padded to a whole word; kw go to bth()."""
    pad = -len(payload) % 4
    return (bth(OP["UD SEND_ONLY"], qpn, 0, pad=pad, **kw) +
            deth(qkey, srcqp) + payload + b"\0" * pad)


# AETH syndromes (IBA 9.7.5.1.4 / table 42)
AETH_ACK = 0x1F          # ACK, credit count "invalid"
AETH_RNR = 0x20          # | timer code
NAK_SEQ = 0x60
NAK_INV = 0x61
NAK_ACC = 0x62
NAK_OP = 0x63


# --- ICRC ------------------------------------------------------------------

def icrc(ip):
    """The ICRC of a RoCEv2 packet given from its IP header on, as the 4
    bytes that end it on the wire. The last 4 bytes of ip (the ICRC slot)
    are not covered.

    IBA annex A17.3.3: CRC-32 (the Ethernet polynomial, reflected, seed and
    result inverted, sent least significant byte first) over 8 bytes of
    0xFF standing for the LRH, then the IP header with the fields routers
    change set to 1s (IPv4 TOS, TTL and header checksum; IPv6 traffic
    class, flow label and hop limit), the UDP header with its checksum set
    to 1s, the BTH with its FECN/BECN/reserved byte set to 1s, and the rest
    up to the ICRC."""
    ip = bytes(ip)
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 0x0F) * 4
        h = bytearray(ip[:ihl])
        h[1] = 0xFF                 # TOS (DSCP, ECN)
        h[8] = 0xFF                 # TTL
        h[10:12] = b"\xff\xff"      # header checksum
    else:
        ihl = 40
        h = bytearray(ip[:40])
        h[0] |= 0x0F                # traffic class, high nibble
        h[1:4] = b"\xff\xff\xff"    # traffic class low nibble, flow label
        h[7] = 0xFF                 # hop limit
    u = bytearray(ip[ihl:ihl + 8])
    u[6:8] = b"\xff\xff"            # UDP checksum
    b = bytearray(ip[ihl + 8:ihl + 20])
    if len(b) > 4:
        b[4] = 0xFF                 # FECN, BECN, resv6a
    crc = zlib.crc32(b"\xff" * 8)
    for part in (h, u, b, ip[ihl + 20:len(ip) - 4]):
        crc = zlib.crc32(part, crc)
    return struct.pack("<I", crc)


# --- IP, UDP, Ethernet -------------------------------------------------------

def _csum(data):
    if len(data) & 1:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip4(src, dst, payload, tos=0, ttl=64, df=True, ident=0, proto=17,
        opts=b""):
    """An IPv4 header (with options opts, a multiple of 4 bytes) and
    payload."""
    hlen = 20 + len(opts)
    hdr = struct.pack(">BBHHHBBH4s4s", 0x40 | hlen // 4, tos,
                      hlen + len(payload), ident, 0x4000 if df else 0, ttl,
                      proto, 0, ipaddress.IPv4Address(src).packed,
                      ipaddress.IPv4Address(dst).packed) + opts
    hdr = hdr[:10] + struct.pack(">H", _csum(hdr)) + hdr[12:]
    return hdr + payload


def ip6(src, dst, payload, tclass=0, flow=0, hlim=64, nxt=17):
    return struct.pack(">IHBB16s16s", (6 << 28) | (tclass << 20) | flow,
                       len(payload), nxt, hlim,
                       ipaddress.IPv6Address(src).packed,
                       ipaddress.IPv6Address(dst).packed) + payload


def udp(sport, dport, payload):
    """A UDP header and payload; the checksum is 0 (none) until
    fix_udp6_csum() fills it in for IPv6."""
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload


def fix_udp6_csum(pkt):
    """Fill in the UDP checksum of an IPv6 packet (mandatory there)."""
    pkt = bytearray(pkt)
    ulen = len(pkt) - 40
    pseudo = pkt[8:40] + struct.pack(">IxxxB", ulen, 17)
    pkt[46:48] = b"\0\0"
    c = _csum(bytes(pseudo + pkt[40:])) or 0xFFFF
    pkt[46:48] = struct.pack(">H", c)
    return bytes(pkt)


def roce(src, dst, transport, sport=0xC000, tos=0, ttl=64, good_icrc=True,
         ident=0, flow=0, raw=False, opts=b""):
    """An IP packet (v4 or v6 by the addresses) to UDP port 4791 carrying
    the RoCEv2 bytes `transport` (BTH onwards, without ICRC), with the
    ICRC appended (or its complement when good_icrc is False). raw: the
    bytes are the whole UDP payload, ICRC slot included or not, and are
    sent as they are."""
    body = udp(sport, PORT, transport if raw else transport + b"\0\0\0\0")
    if ":" in src:
        pkt = ip6(src, dst, body, tclass=tos, hlim=ttl, flow=flow)
    else:
        pkt = ip4(src, dst, body, tos=tos, ttl=ttl, ident=ident, opts=opts)
    if not raw:
        crc = icrc(pkt)
        if not good_icrc:
            crc = bytes(x ^ 0xFF for x in crc)
        pkt = pkt[:-4] + crc
    if ":" in src:
        pkt = fix_udp6_csum(pkt)
    return pkt


def ether(dst_mac, src_mac, ip_pkt):
    etype = ETH_P_IP if ip_pkt[0] >> 4 == 4 else ETH_P_IPV6
    return (bytes.fromhex(dst_mac.replace(":", "")) +
            bytes.fromhex(src_mac.replace(":", "")) +
            struct.pack(">H", etype) + ip_pkt)


def mac_of(netdev):
    with open("/sys/class/net/%s/address" % netdev) as f:
        return f.read().strip()


# --- parsing -----------------------------------------------------------------

class Pkt:
    """One captured RoCEv2 frame, parsed. Attributes: ipver, src, dst, tos
    (IPv4 TOS or IPv6 traffic class), flow, ttl, df, mf, frag, ip_ok (IPv4
    header checksum), sport, dport, ip (bytes from the IP header), roce
    (BTH to the end), udp_csum, udp6_ok (the IPv6 UDP checksum adds up), opcode, se, mig, pad, tver, pkey, fecn, becn, qpn,
    ack, psn, hdrs {name: fields}, paylen, icrc_ok, problems [str]."""

    def __init__(self, frame):
        self.problems = []
        self.hdrs = {}
        etype = struct.unpack(">H", frame[12:14])[0]
        off = 14
        if etype == 0x8100:
            etype = struct.unpack(">H", frame[16:18])[0]
            off = 18
        ip = frame[off:]
        self.ipver = ip[0] >> 4 if ip else 0
        self.frag = self.mf = 0
        self.df = False
        self.flow = 0
        if etype == ETH_P_IP and self.ipver == 4:
            ihl = (ip[0] & 0x0F) * 4
            tot = struct.unpack(">H", ip[2:4])[0]
            ip = ip[:tot]
            self.tos, self.ttl = ip[1], ip[8]
            ff = struct.unpack(">H", ip[6:8])[0]
            self.df = bool(ff & 0x4000)
            self.mf = (ff >> 13) & 1
            self.frag = ff & 0x1FFF
            self.proto = ip[9]
            self.ip_ok = _csum(bytes(ip[:ihl])) == 0
            self.src = str(ipaddress.IPv4Address(bytes(ip[12:16])))
            self.dst = str(ipaddress.IPv4Address(bytes(ip[16:20])))
        elif etype == ETH_P_IPV6 and self.ipver == 6:
            ihl = 40
            w = struct.unpack(">I", ip[:4])[0]
            self.tos = (w >> 20) & 0xFF
            self.flow = w & 0xFFFFF
            ip = ip[:40 + struct.unpack(">H", ip[4:6])[0]]
            self.proto, self.ttl = ip[6], ip[7]
            self.ip_ok = True
            self.src = str(ipaddress.IPv6Address(bytes(ip[8:24])))
            self.dst = str(ipaddress.IPv6Address(bytes(ip[24:40])))
        else:
            raise ValueError("not IPv4 or IPv6 (ethertype 0x%04x)" % etype)
        self.ip = bytes(ip)
        if self.proto != 17:
            raise ValueError("not UDP (protocol %d)" % self.proto)
        self.sport, self.dport, ulen, self.udp_csum = struct.unpack(
            ">HHHH", ip[ihl:ihl + 8])
        self.udp6_ok = (self.ipver == 6 and
                        _csum(bytes(ip[8:40]) + struct.pack(">IxxxB", ulen, 17) +
                              bytes(ip[40:40 + ulen])) == 0)
        self.roce = bytes(ip[ihl + 8:ihl + ulen])
        r = self.roce
        if len(r) < 16:
            self.problems.append("shorter than BTH + ICRC")
            self.opcode = None
            self.icrc_ok = False
            return
        (self.opcode, flags, self.pkey, q, a) = struct.unpack(">BBHII", r[:12])
        self.se, self.mig = flags >> 7, (flags >> 6) & 1
        self.pad, self.tver = (flags >> 4) & 3, flags & 15
        self.fecn, self.becn = q >> 31, (q >> 30) & 1
        self.resv6 = (q >> 24) & 0x3F
        self.qpn = q & 0xFFFFFF
        self.ack, self.resv7, self.psn = a >> 31, (a >> 24) & 0x7F, a & 0xFFFFFF
        self.icrc_ok = icrc(self.ip) == self.ip[-4:]
        if self.opcode not in ALL_OPCODES:
            self.problems.append("unknown opcode 0x%02x" % self.opcode)
            self.paylen = None
            return
        name, hdrs, payload = ALL_OPCODES[self.opcode]
        off = 12
        for h in hdrs:
            f = r[off:off + HDR_LEN[h]]
            if len(f) < HDR_LEN[h]:
                self.problems.append("truncated " + h)
                return
            if h == "RETH":
                self.hdrs[h] = dict(zip(("va", "rkey", "dmalen"),
                                        struct.unpack(">QII", f)))
            elif h == "AETH":
                v = struct.unpack(">I", f)[0]
                self.hdrs[h] = {"syndrome": v >> 24, "msn": v & 0xFFFFFF}
            elif h == "AtomicETH":
                self.hdrs[h] = dict(zip(("va", "rkey", "swap_add", "compare"),
                                        struct.unpack(">QIQQ", f)))
            elif h == "AtomicAckETH":
                self.hdrs[h] = {"orig": struct.unpack(">Q", f)[0]}
            elif h in ("ImmDt", "IETH"):
                self.hdrs[h] = {"value": struct.unpack(">I", f)[0]}
            elif h == "DETH":
                qk, sq = struct.unpack(">II", f)
                self.hdrs[h] = {"qkey": qk, "srcqp": sq & 0xFFFFFF}
            elif h == "FETH":
                v = struct.unpack(">I", f)[0]
                self.hdrs[h] = {"placement": v & 0xF, "level": (v >> 4) & 3}
            off += HDR_LEN[h]
        self.paylen = len(r) - off - self.pad - 4
        if self.paylen < 0:
            self.problems.append("pad and ICRC do not fit")
        elif self.paylen and not payload:
            self.problems.append("payload on an opcode without one")
        if (len(r) - off) % 4 and payload:
            self.problems.append("payload + pad not a multiple of 4")

    @property
    def name(self):
        return opname(self.opcode) if self.opcode is not None else "?"

    @property
    def payload(self):
        off = hdrs_len(self.opcode)
        return self.roce[off:off + self.paylen]


# --- pcap ----------------------------------------------------------------------

def read_pcap(path):
    """Frames of a libpcap file (Ethernet link type), as bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: no pcap header" % path)
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        raise ValueError("%s: not a libpcap file (magic 0x%08x)" % (path, magic))
    linktype = struct.unpack(e + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError("%s: link type %d, want Ethernet" % (path, linktype))
    frames, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def roce_frames(frames):
    """The frames that are UDP to or from port 4791, parsed."""
    out = []
    for fr in frames:
        try:
            p = Pkt(fr)
        except (ValueError, struct.error, IndexError):
            continue
        if PORT in (p.sport, p.dport):
            out.append(p)
    return out


# --- raw sockets ---------------------------------------------------------------

class Raw:
    """A packet socket on a netdev: send whole frames, and receive the
    RoCEv2 frames that pass it (both directions)."""

    def __init__(self, netdev):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(ETH_P_ALL))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.s.bind((netdev, 0))
        self.mac = mac_of(netdev)

    def send(self, frame):
        self.s.send(frame)

    def drain(self):
        """Forget what was received so far."""
        while select.select([self.s], [], [], 0)[0]:
            self.s.recv(65535)

    def recv(self, timeout, want=None, count=None):
        """RoCEv2 packets received within timeout seconds (all of them, or
        until count packets for which want(p) holds arrived)."""
        out, end = [], time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return out
            fr, addr = self.s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            try:
                p = Pkt(fr)
            except (ValueError, struct.error, IndexError):
                continue
            if PORT not in (p.sport, p.dport):
                continue
            if want is None or want(p):
                out.append(p)
                if count is not None and len(out) >= count:
                    return out
