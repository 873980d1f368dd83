#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of a bench/prof/prof.sh run: each guest's instructions
between the plugin's two snapshots, by function, by module and in user
space, per packet on the wire.

    bench/prof/report.py [-n N] [--base DIR0] DIR

DIR holds a/ (and b/) with kallsyms.txt, tbprof-{begin,end}.txt and
counters-{begin,end}.txt. With --base, every row also shows the same
function in the profile DIR0 and the difference, per packet.
"""

import argparse
import bisect
import os
import sys

USER_TOP = 0xFFFF800000000000


def load_kallsyms(path):
    """Sorted text symbols: (addresses, names)."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            addr = int(parts[0], 16)
            if addr == 0:
                continue
            name = parts[2]
            if len(parts) > 3:
                name += " " + parts[3]
            syms.append((addr, name))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def load_counts(path):
    counts = {}
    with open(path) as f:
        for line in f:
            a, n = line.split()
            counts[int(a, 16)] = int(n)
    return counts


def load_threads(path):
    """(seconds, {tid: (comm, ticks)}, ticks per second) of a .threads file."""
    clock, hz, threads = 0.0, 100, {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "clock":
                clock, hz = float(parts[1]), int(parts[2])
            else:
                threads[parts[0]] = (parts[1], int(parts[2]) + int(parts[3]))
    return clock, threads, hz


def load_counters(path):
    vals = {}
    with open(path) as f:
        for line in f:
            k, v = line.split()
            vals[k] = int(v)
    return vals


class Guest:
    def __init__(self, d):
        self.dir = d
        self.ok = all(os.path.exists(os.path.join(d, f)) for f in
                      ("kallsyms.txt", "tbprof-begin.txt", "tbprof-end.txt",
                       "counters-begin.txt", "counters-end.txt"))
        if not self.ok:
            return
        addrs, names = load_kallsyms(os.path.join(d, "kallsyms.txt"))
        c0 = load_counts(os.path.join(d, "tbprof-begin.txt"))
        c1 = load_counts(os.path.join(d, "tbprof-end.txt"))
        k0 = load_counters(os.path.join(d, "counters-begin.txt"))
        k1 = load_counters(os.path.join(d, "counters-end.txt"))
        self.counters = {k: k1[k] - k0.get(k, 0) for k in k1}
        # The host's CPU time of each QEMU thread over the window, in %.
        self.threads = []
        t0, t1 = (os.path.join(d, "tbprof-%s.threads" % s) for s in ("begin", "end"))
        if os.path.exists(t0) and os.path.exists(t1):
            s0, th0, hz = load_threads(t0)
            s1, th1, _ = load_threads(t1)
            for tid, (comm, ticks) in th1.items():
                busy = (ticks - th0.get(tid, (comm, 0))[1]) / hz / max(s1 - s0, 1e-3)
                if busy >= 0.01:
                    self.threads.append((comm, 100.0 * busy))
            self.threads.sort(key=lambda t: -t[1])
        self.funcs = {}
        self.total = 0
        for a, n in c1.items():
            n -= c0.get(a, 0)
            if n <= 0:
                continue
            self.total += n
            if a < USER_TOP:
                name = "[user space]"
            else:
                i = bisect.bisect_right(addrs, a) - 1
                name = names[i] if i >= 0 else "[unknown kernel]"
            self.funcs[name] = self.funcs.get(name, 0) + n
        self.modules = {}
        for name, n in self.funcs.items():
            if name.startswith("[user"):
                mod = "user space"
            elif " [" in name:
                mod = name.split(" [", 1)[1].rstrip("]")
            else:
                mod = "kernel (vmlinux)"
            self.modules[mod] = self.modules.get(mod, 0) + n
        wire = self.counters.get("tx_packets", 0) + self.counters.get("rx_packets", 0)
        rxe = self.counters.get("sent_pkts", 0) + self.counters.get("rcvd_pkts", 0)
        # Over a wire each RoCE packet crosses eth0; looped back, none does.
        self.packets = wire if wire > rxe // 2 else rxe
        self.per = wire if wire > rxe // 2 else None


def fmt_count(n):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return "%.2f%s" % (n / div, unit)
    return str(n)


def report(name, g, base, top):
    print("guest %s: %s instructions in the window" % (name, fmt_count(g.total)))
    c = g.counters
    print("  packets: eth0 tx %d rx %d; rxe sent %d rcvd %d" % (
        c.get("tx_packets", 0), c.get("rx_packets", 0),
        c.get("sent_pkts", 0), c.get("rcvd_pkts", 0)))
    if g.threads:
        print("  host CPU of this QEMU's threads: " +
              ", ".join("%s %.0f%%" % t for t in g.threads))
    moved = ", ".join("%s %d" % (k, v) for k, v in sorted(c.items())
                      if v and k not in ("tx_packets", "rx_packets", "sent_pkts", "rcvd_pkts"))
    if moved:
        print("  counters: " + moved)
    pk = max(g.packets, 1)
    bpk = max(base.packets, 1) if base else 1
    print("  instructions per packet (%s): %.0f%s" % (
        "eth0 tx+rx" if g.per else "rxe sent+rcvd", g.total / pk,
        "  (base %.0f, %+.1f%%)" % (base.total / bpk, 100.0 * (g.total / pk) / (base.total / bpk) - 100)
        if base else ""))
    print()

    def table(title, rows, brows):
        print("  %s" % title)
        if base:
            print("  %10s %6s %10s %10s  %s" % ("per pkt", "%", "base", "diff", "name"))
        else:
            print("  %10s %6s  %s" % ("per pkt", "%", "name"))
        for key, n in rows:
            if base:
                b = brows.get(key, 0) / bpk
                print("  %10.1f %6.2f %10.1f %+10.1f  %s" % (n / pk, 100.0 * n / g.total, b, n / pk - b, key))
            else:
                print("  %10.1f %6.2f  %s" % (n / pk, 100.0 * n / g.total, key))
        print()

    mods = sorted(g.modules.items(), key=lambda kv: -kv[1])
    table("by module", mods, base.modules if base else {})
    funcs = sorted(g.funcs.items(), key=lambda kv: -kv[1])[:top]
    table("top %d functions" % top, funcs, base.funcs if base else {})
    if base:
        # What moved most, either way, per packet.
        keys = set(g.funcs) | set(base.funcs)
        delta = sorted(keys, key=lambda k: -abs(g.funcs.get(k, 0) / pk - base.funcs.get(k, 0) / bpk))
        print("  largest changes per packet")
        print("  %10s %10s %10s  %s" % ("now", "base", "diff", "name"))
        for k in delta[:top // 2]:
            a, b = g.funcs.get(k, 0) / pk, base.funcs.get(k, 0) / bpk
            print("  %10.1f %10.1f %+10.1f  %s" % (a, b, a - b, k))
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=40, help="functions to list")
    ap.add_argument("--base", help="another profile's DIR to compare with")
    ap.add_argument("dir")
    args = ap.parse_args()
    info = os.path.join(args.dir, "setup.info")
    if os.path.exists(info):
        with open(info) as f:
            sys.stdout.write("".join("# " + line for line in f))
        print()
    found = False
    for name in ("a", "b"):
        g = Guest(os.path.join(args.dir, name))
        if not g.ok:
            continue
        found = True
        base = None
        if args.base:
            base = Guest(os.path.join(args.base, name))
            if not base.ok:
                base = None
        report(name, g, base, args.n)
    if not found:
        print("no guest of %s has both snapshots" % args.dir, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
