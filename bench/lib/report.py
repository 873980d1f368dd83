#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Make the benchmark's report from a results folder of bench/run.sh.

    report.py DIR

reads every run's raw output under DIR/r<round>-<topo>/ (see
lib/guest-bench.sh) and writes

    DIR/runs.csv     one line per run and metric: the number, or the failure
    DIR/results.md   medians, ours/theirs, goals, spread, CPU cost, failures
    DIR/results.png  ours/theirs per case (gnuplot), log scale

Only the standard library; gnuplot draws the plot.
"""

import csv
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys

IMPLS = ("ours", "theirs")
TOPO_NAME = {
    "loop": "One guest, over its own IP (loopback in the driver)",
    "two": "Two guests on one wire",
}
# kind -> [(metric, unit, better)]; better: "higher" or "lower"
METRICS = {
    "bw": [("bw", "Gb/s", "higher")],
    "msgrate": [("msgrate", "Mpps", "higher")],
    "lat": [("lat_typ", "µs", "lower"), ("lat_p99", "µs", "lower")],
    "loss": [("goodput", "Gb/s", "higher")],
    "iperf": [("bw", "Gb/s", "higher")],
    "nvme": [("write", "MB/s", "higher"), ("read", "MB/s", "higher")],
}
CPU_KINDS = ("bw", "msgrate", "loss", "iperf")


def read_kv(path):
    """key=value lines (or one line of space-separated key=value pairs)."""
    kv = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    for line in text.splitlines():
        if "=" not in line:
            continue
        if re.fullmatch(r"(\S+=\S*\s*)+", line.strip()) and " " in line.strip():
            for tok in line.split():
                k, _, v = tok.partition("=")
                kv[k] = v
        else:
            k, _, v = line.partition("=")
            kv[k.strip()] = v.strip()
    return kv


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def size_label(size):
    size = int(size)
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return "%d MiB" % (size >> 20)
    if size >= 1024 and size % 1024 == 0:
        return "%d KiB" % (size >> 10)
    return "%d B" % size


def loss_of(c):
    """A loss case's injector and percent: ('netem', 1.0), or ('nft', 1.0)
    for a LOSS of d1 (wire_drop)."""
    if c["loss"].startswith("d"):
        return "nft", float(c["loss"][1:])
    return "netem", float(c["loss"])


def case_label(c, metric):
    qps = int(c["qps"])
    q = ", %d QPs" % qps if qps > 1 else ""
    tool = c["tool"]
    if c["kind"] == "bw":
        return "%s %s%s" % (tool, size_label(c["size"]), q)
    if c["kind"] == "msgrate":
        return "%s %s message rate (-l 16 -Q 16)%s" % (tool, size_label(c["size"]), q)
    if c["kind"] == "lat":
        return "%s %s %s" % (tool, size_label(c["size"]),
                             "typical" if metric == "lat_typ" else "p99")
    if c["kind"] == "loss":
        how, pct = loss_of(c)
        if how == "nft":
            what = "random drop %s%% by nftables" % c["loss"][1:]
        elif pct == 0:
            what = "netem at 0% loss"
        else:
            what = "netem loss %s%%" % c["loss"]
        return "%s %s%s, %s (goodput)" % (tool, size_label(c["size"]), q, what)
    if c["kind"] == "iperf":
        return "iperf3 TCP, one stream"
    if c["kind"] == "nvme":
        what = ""
        if c["loss"] != "0":
            how, pct = loss_of(c)
            what = ", %s %g%% while the data moves" % (
                "random drop by nftables" if how == "nft" else "netem loss", pct)
        if c["qps"] != "1":
            return "NVMe-oF over RDMA, %s MiB fio 4 KiB random, %s in flight, %s%s" % (
                c["size"], c["qps"], metric, what)
        return "NVMe-oF over RDMA, %s MiB O_DIRECT %s%s" % (c["size"], metric, what)
    return c["id"]


def short_label(topo, c, metric):
    """For the plot's x axis."""
    cid = c["id"].replace("mtu", "").replace("/q1", "").replace("/", " ")
    if metric == "lat_p99":
        cid += " p99"
    elif metric == "lat_typ":
        cid += " typ"
    elif metric in ("write", "read"):
        cid += " " + metric
    return "%s %s" % ("1g" if topo == "loop" else "2g", cid)


def fmt(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    a = abs(x)
    if a >= 100:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    if a == 0:
        return "0"
    return "%.3g" % x


def fnum(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# --- parsing one run ------------------------------------------------------

BW_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)")
LAT_COLS = re.compile(r"#bytes|#iterations|t_\w+\[usec\]|99(?:\.9)?% percentile\[usec\]")


# enum ibv_wc_status
WC_STATUS = {1: "LOC_LEN_ERR", 2: "LOC_QP_OP_ERR", 4: "LOC_PROT_ERR", 5: "WR_FLUSH_ERR",
             8: "REM_INV_REQ_ERR", 9: "REM_ACCESS_ERR", 10: "REM_OP_ERR",
             12: "RETRY_EXC_ERR", 13: "RNR_RETRY_EXC_ERR", 21: "RESP_TIMEOUT_ERR"}


def last_error_line(text):
    """Why a tool failed, in one line: a QP error first, else the last error."""
    if not text:
        return ""
    m = re.search(r"Failed status (\d+)", text)
    if m:
        n = int(m.group(1))
        return "QP error: work completion status %d (IBV_WC_%s)" % (n, WC_STATUS.get(n, "?"))
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in reversed(lines):
        if re.search(r"fail|error|couldn't|unable|timed out|can't|refused|not ", l, re.I):
            return l[:160]
    return lines[-1][:160] if lines else ""


def first_io_failure(text):
    """An nvme run's first failed step ('write: ...' or 'read: ...' from
    nvme_run), which is what went wrong where later steps (the
    disconnect) failed only after it; else last_error_line()."""
    for l in (text or "").splitlines():
        if re.match(r"(write|read): ", l.strip()):
            return l.strip()[:160]
    return last_error_line(text)


def parse_bw(text):
    """perftest bw result row after the '#bytes' header: (size, iters, avg)."""
    if not text:
        return None
    seen_header = False
    row = None
    for line in text.splitlines():
        if "#bytes" in line:
            seen_header = True
            continue
        if seen_header:
            m = BW_ROW.match(line)
            if m:
                row = (int(m.group(1)), int(m.group(2)), fnum(m.group(4)))
    return row


def parse_lat(text):
    """perftest lat result: {column: value} of the row after the header."""
    if not text:
        return None
    cols = None
    res = None
    for line in text.splitlines():
        if "#bytes" in line and "t_typical" in line:
            cols = LAT_COLS.findall(line)
            continue
        if cols:
            toks = line.split()
            if len(toks) >= len(cols) and re.fullmatch(r"\d+", toks[0]):
                res = {c: toks[i] for i, c in enumerate(cols)}
                cols = None
    return res


def cpu_rate(path):
    """Busy CPU seconds per second in one guest over the probe's window."""
    kv = read_kv(path)
    if not kv:
        return None
    try:
        dt = float(kv["t1"]) - float(kv["t0"])
        busy = (int(kv["busy1"]) - int(kv["busy0"])) / int(kv["hz"])
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    if dt <= 0:
        return None
    return busy / dt


def parse_run(boot, topo, case, impl):
    """One planned run -> dict(status, reason, metrics{}, cpu, extra)."""
    slug = case["id"].replace("/", "_")
    client = "b" if topo == "two" else "a"
    base = os.path.join(boot["dir"], client, "runs", "%s.%s" % (impl, slug))
    srv = os.path.join(boot["dir"], "a", "runs", "%s.%s" % (impl, slug))
    r = {"status": "fail", "reason": "", "metrics": {}, "cpu": None, "attempts": 1,
         "qp_errors": None}
    info = read_kv(base + ".info")
    if info is None:
        why = boot.get("reason") or "the guest ended before it"
        r["reason"] = "not run (%s)" % why
        return r
    r["attempts"] = int(info.get("attempts", "1") or 1)

    # Counters that moved (both guests' rxe0), failed runs included.
    qp_err = 0
    have_counters = False
    for g in ("a", "b"):
        kv = read_kv(os.path.join(boot["dir"], g, "runs", "%s.%s.counters" % (impl, slug)))
        if kv is None:
            continue
        have_counters = True
        qp_err += int(kv.get("retry_exceeded_err", "0") or 0)
        qp_err += int(kv.get("retry_rnr_exceeded_err", "0") or 0)
    r["qp_errors"] = qp_err if have_counters else None
    rc = info.get("rc", "")
    text = read_text(base + ".client.log")
    if rc == "skipped":
        r["reason"] = "not run: " + info.get("reason", "?")
        return r
    if rc == "200":
        r["reason"] = "the other guest was gone"
        return r
    if rc == "124" or rc == "137":
        r["reason"] = "did not complete in its time (timeout)"
        return r
    if rc != "0":
        why = first_io_failure(text) if case["kind"] == "nvme" else last_error_line(text)
        r["reason"] = "client exit %s: %s" % (rc, why)
        return r
    src = (read_text(srv + ".server.rc") or "").strip()
    if src not in ("", "0"):
        stext = read_text(srv + ".server.log")
        r["reason"] = "server exit %s: %s" % (src, last_error_line(stext))
        return r

    kind = case["kind"]
    bytes_per_s = None
    if kind in ("bw", "msgrate", "loss"):
        row = parse_bw(text)
        if row is None:
            r["reason"] = "no result row in the client's output"
            return r
        size, iters, perftest_avg = row
        window = fnum(info.get("window"))
        if not window or window <= 0:
            r["reason"] = "no measurement window (perftest -D must exceed 2 x -f)"
            return r
        if iters == 0:
            r["reason"] = "no message completed in the measured window"
            return r
        bytes_per_s = iters * size / window
        r["msgs_per_s"] = iters / window
        if kind == "bw":
            r["metrics"]["bw"] = bytes_per_s * 8 / 1e9
        elif kind == "loss":
            r["metrics"]["goodput"] = bytes_per_s * 8 / 1e9
        else:
            r["metrics"]["msgrate"] = iters / window / 1e6
        r["perftest_gbps"] = perftest_avg
    elif kind == "lat":
        lat = parse_lat(text)
        if lat is None:
            r["reason"] = "no result row in the client's output"
            return r
        typ = fnum(lat.get("t_typical[usec]"))
        p99 = fnum(lat.get("99% percentile[usec]"))
        if typ is None or p99 is None:
            r["reason"] = "perftest's clock calibration failed (%d attempts)" % r["attempts"]
            return r
        r["metrics"]["lat_typ"] = typ
        r["metrics"]["lat_p99"] = p99
    elif kind == "nvme":
        # The client exited 0: the data came back identical. MB/s from
        # the seconds dd (or fio) reports for each copy.
        mib = fnum(info.get("nvme_mib"))
        for metric in ("write", "read"):
            secs = fnum(info.get(metric + "_s"))
            if not mib or not secs or secs <= 0:
                r["reason"] = "no dd or fio time for the %s in the run's .info" % metric
                return r
            r["metrics"][metric] = mib * 2**20 / secs / 1e6
    elif kind == "iperf":
        try:
            j = json.loads(text or "")
        except ValueError:
            r["reason"] = "iperf3 printed no JSON: " + last_error_line(text)
            return r
        if j.get("error"):
            r["reason"] = "iperf3: " + str(j["error"])[:160]
            return r
        try:
            bps = float(j["end"]["sum_received"]["bits_per_second"])
        except (KeyError, TypeError, ValueError):
            r["reason"] = "iperf3 JSON without end.sum_received"
            return r
        r["metrics"]["bw"] = bps / 1e9
        bytes_per_s = bps / 8

    if kind in CPU_KINDS and bytes_per_s:
        guests = ("a", "b") if topo == "two" else ("a",)
        rates = [cpu_rate(os.path.join(boot["dir"], g, "runs", "%s.%s.cpu" % (impl, slug)))
                 for g in guests]
        if all(x is not None for x in rates):
            r["cpu"] = sum(rates) / (bytes_per_s / 2**30)
    r["status"] = "ok"
    return r


# --- the folder ------------------------------------------------------------

def load(dirname):
    setup = read_kv(os.path.join(dirname, "setup.info")) or {}
    boots = []
    for d in sorted(glob.glob(os.path.join(dirname, "r*-*"))):
        m = re.fullmatch(r"r(\d+)-(\w+)", os.path.basename(d))
        if not m or not os.path.isdir(d):
            continue
        b = read_kv(os.path.join(d, "boot.info")) or {}
        b["dir"] = d
        b["round"] = int(m.group(1))
        b["topo"] = m.group(2)
        b["guest"] = read_kv(os.path.join(d, "a", "guest.info")) or {}
        plan = []
        for line in (read_text(os.path.join(d, "plan.txt")) or "").splitlines():
            f = line.split()
            if len(f) >= 7:
                plan.append(dict(zip(("id", "kind", "mtu", "tool", "size", "qps", "loss"), f)))
        b["plan"] = plan
        boots.append(b)
    boots.sort(key=lambda b: (b["round"], b["topo"]))
    return setup, boots


def collect(boots):
    """-> runs (list of dicts), cases {(topo, id): case} in plan order."""
    runs = []
    cases = {}
    for b in boots:
        for c in b["plan"]:
            cases.setdefault((b["topo"], c["id"]), c)
            impls = ("wire",) if c["kind"] == "iperf" else IMPLS
            for impl in impls:
                r = parse_run(b, b["topo"], c, impl)
                r.update(round=b["round"], topo=b["topo"], impl=impl, case=c)
                runs.append(r)
    return runs, cases


def write_csv(path, runs):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["round", "topo", "impl", "case", "kind", "metric", "unit", "value",
                    "status", "reason", "attempts", "qp_errors", "perftest_gbps"])
        for r in runs:
            c = r["case"]
            common = [r["round"], r["topo"], r["impl"], c["id"], c["kind"]]
            tail = [r["attempts"], "" if r["qp_errors"] is None else r["qp_errors"],
                    "" if r.get("perftest_gbps") is None else r["perftest_gbps"]]
            for metric, unit, _ in METRICS[c["kind"]]:
                v = r["metrics"].get(metric)
                w.writerow(common + [metric, unit, "" if v is None else "%.6g" % v,
                                     r["status"], r["reason"]] + tail)
            if c["kind"] in CPU_KINDS:
                v = r["cpu"]
                w.writerow(common + ["cpu", "CPU s/GiB", "" if v is None else "%.6g" % v,
                                     r["status"] if v is not None else "no-data",
                                     r["reason"]] + tail)


class Stat:
    """The runs of one (topo, case, impl) for one metric."""

    def __init__(self, values, n, failed):
        self.values = values
        self.n = n
        self.failed = failed

    @property
    def median(self):
        return statistics.median(self.values) if self.values else None

    def spread(self):
        if not self.n:
            return "—"
        if not self.values:
            return "FAILED (0/%d)" % self.n
        lo, hi = min(self.values), max(self.values)
        s = fmt(lo) if lo == hi else "%s–%s" % (fmt(lo), fmt(hi))
        return "%s (%d/%d)" % (s, len(self.values), self.n)


def stat(runs, topo, cid, impl, metric):
    rs = [r for r in runs if r["topo"] == topo and r["case"]["id"] == cid and r["impl"] == impl]
    if metric == "cpu":
        vals = [r["cpu"] for r in rs if r["status"] == "ok" and r["cpu"] is not None]
    else:
        vals = [r["metrics"][metric] for r in rs if r["status"] == "ok" and metric in r["metrics"]]
    return Stat(vals, len(rs), [r for r in rs if r["status"] != "ok"])


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# The goals, as ratios of ours to theirs on one table row.
def ratio_goal(topo, c, metric):
    kind, qps = c["kind"], int(c["qps"])
    if kind == "bw" and qps > 1:
        return (">=", 2.0, "8 QPs: ≥ 2x")
    if kind == "msgrate" and qps > 1:
        return (">=", 2.0, "8 QPs: ≥ 2x")
    if kind == "bw" and topo == "two" and c["tool"] == "ib_write_bw" and int(c["size"]) == 65536:
        return (">=", 2.0, "≥ 2x")
    if kind == "msgrate" and int(c["size"]) == 64:
        return (">=", 2.0, "≥ 2x")
    if kind == "lat" and c["tool"] == "ib_write_lat" and metric == "lat_typ":
        return ("<=", 0.6, "≤ 0.6x")
    return None


def met(op, target, value):
    if value is None:
        return "n/a"
    ok = value >= target if op == ">=" else value <= target
    return "yes" if ok else "**no**"


def find_case(cases, topo, pred):
    return [c for (t, _), c in cases.items() if t == topo and pred(c)]


def report(dirname):
    setup, boots = load(dirname)
    if not boots:
        sys.exit("report.py: no r<N>-<topo>/ folders in %s" % dirname)
    runs, cases = collect(boots)
    write_csv(os.path.join(dirname, "runs.csv"), runs)
    topos = [t for t in ("loop", "two") if any(k[0] == t for k in cases)]
    guest = next((b["guest"] for b in boots if b["guest"]), {})
    rounds = sorted({b["round"] for b in boots})

    md = []
    add = md.append
    add("# rdma_rxe benchmark: ours against the kernel's rdma_rxe")
    add("")
    add("- **Date:** %s" % setup.get("date", "?"))
    add("- **Guest kernel:** %s (both drivers, same boot)" % guest.get("kernel", setup.get("kernel", "?")))
    add("- **Ours:** `%s` (git %s, %s; sha256 %s…)" % (
        os.path.basename(setup.get("ko", "rdma_rxe.ko")), setup.get("git", "?"),
        setup.get("git_branch", "?"), setup.get("ko_sha256", "?")))
    add("- **Theirs:** the guest kernel's in-tree rdma_rxe (`%s`, sha256 %s…)" % (
        setup.get("theirs_ko", "?"), setup.get("theirs_sha256", "?")))
    add("- **Setup:** QEMU %s, accel %s; one guest: %s vCPUs, two guests: %s vCPU each, %s RAM; "
        "wire: virtio-net over a QEMU dgram (UDP) socket pair on the host" % (
            setup.get("qemu", "?").replace("QEMU emulator version ", ""),
            setup.get("accel", "?"), setup.get("vm_smp_loop", "?"),
            setup.get("vm_smp_two", "?"), setup.get("vm_mem", "?")))
    add("- **Host:** %s, %s CPUs, load average %s at start, %s at end" % (
        setup.get("host_cpu", "?"), setup.get("host_ncpu", "?"),
        setup.get("host_loadavg_start", "?"), setup.get("host_loadavg_end", "?")))
    add("- **Run:** %s mode, %d round(s), drivers alternating per round; perftest %s, "
        "`-D %s -f %s` (measured over %s s), latency `-n %s`%s; took %s s" % (
            setup.get("mode", "?"), len(rounds), setup.get("perftest", "?"),
            setup.get("duration", "?"), setup.get("margin", "?"),
            int(setup.get("duration", 0) or 0) - 2 * int(setup.get("margin", 0) or 0),
            setup.get("lat_iters", "?"),
            ", filter `%s`" % setup["filter"] if setup.get("filter") else "",
            setup.get("elapsed", "?")))
    add("")
    add("Medians over rounds; ratio = median(ours) / median(theirs) (for latency and CPU "
        "cost lower is better). Spread: min–max (successful runs / runs). Failed runs are "
        "not numbers: they are counted and listed at the end. How it is measured: "
        "`bench/README.md`.")
    add("")

    # --- goals
    goals = []  # (goal, where, value text, met)
    for topo in topos:
        for (t, cid), c in cases.items():
            if t != topo:
                continue
            for metric, _, _ in METRICS[c["kind"]]:
                g = ratio_goal(topo, c, metric)
                if not g:
                    continue
                o = stat(runs, topo, cid, "ours", metric).median
                th = stat(runs, topo, cid, "theirs", metric).median
                rt = ratio(o, th)
                goals.append(("%s: ours/theirs %s" % (case_label(c, metric), g[2].replace("8 QPs: ", "")),
                              "%s, MTU %s" % (topo, c["mtu"]),
                              "%sx" % fmt(rt) if rt is not None else "—", met(g[0], g[1], rt)))
        if topo == "two":
            for c in find_case(cases, topo, lambda c: c["kind"] == "iperf"):
                w = find_case(cases, topo, lambda x, c=c: x["kind"] == "bw" and x["tool"] == "ib_write_bw"
                              and x["size"] == "65536" and x["qps"] == "1" and x["mtu"] == c["mtu"])
                if not w:
                    continue
                o = stat(runs, topo, w[0]["id"], "ours", "bw").median
                ip = stat(runs, topo, c["id"], "wire", "bw").median
                rt = ratio(o, ip)
                goals.append(("ib_write_bw 64 KiB, 1 QP, ours / iperf3 TCP ≥ 100%",
                              "two, MTU %s" % c["mtu"],
                              "%s%% (%s vs %s Gb/s)" % (fmt(rt * 100) if rt is not None else "—",
                                                        fmt(o), fmt(ip)), met(">=", 1.0, rt)))
            base = {c["mtu"]: c for c in find_case(
                cases, topo, lambda x: x["kind"] == "bw" and x["tool"] == "ib_write_bw"
                and x["size"] == "65536" and x["qps"] == "1")}
            for c in find_case(cases, topo, lambda x: x["kind"] == "loss"):
                how, pct = loss_of(c)
                if pct == 1 and c["mtu"] in base:
                    # Against the lossless run, whichever the injector:
                    # netem at 0% loss is no baseline, its cost shrinks
                    # with the rate a loss leaves (bench/README.md).
                    o = stat(runs, topo, c["id"], "ours", "goodput").median
                    l0 = stat(runs, topo, base[c["mtu"]]["id"], "ours", "bw").median
                    rt = ratio(o, l0)
                    goals.append(("1%% loss (%s): ours goodput ≥ 50%% of ours lossless" %
                                  ("netem" if how == "netem" else "nftables drop"),
                                  "two, MTU %s" % c["mtu"],
                                  "%s%% (%s vs %s Gb/s)" % (fmt(rt * 100) if rt is not None else "—",
                                                            fmt(o), fmt(l0)), met(">=", 0.5, rt)))
                if how == "netem" and pct == 5:
                    rs = [r for r in runs if r["topo"] == topo and r["case"]["id"] == c["id"]
                          and r["impl"] == "ours"]
                    ok = [r for r in rs if r["status"] == "ok"]
                    qpe = [r for r in rs if "QP error" in r["reason"] or (r["qp_errors"] or 0) > 0]
                    good = bool(rs) and len(ok) == len(rs) and not qpe
                    goals.append(("5% loss: no QP error (ours)", "two, MTU %s" % c["mtu"],
                                  "%d/%d runs completed, %d with a QP error" % (len(ok), len(rs), len(qpe)),
                                  "yes" if good else ("n/a" if not rs else "**no**")))
    if goals:
        add("## Goals")
        add("")
        add("| goal | where | value | met |")
        add("|---|---|---|---|")
        for g in goals:
            add("| %s | %s | %s | %s |" % g)
        add("")

    # --- the table, per topology and MTU
    plot_rows = []
    for topo in topos:
        keys = [k for k in cases if k[0] == topo]
        for mtu in sorted({cases[k]["mtu"] for k in keys}, key=int):
            rows = [cases[k] for k in keys if cases[k]["mtu"] == mtu and cases[k]["kind"] != "iperf"]
            if not rows:
                continue
            add("## %s, MTU %s (RoCE MTU %s)" % (TOPO_NAME.get(topo, topo), mtu,
                                                 4096 if int(mtu) >= 9000 else 1024))
            add("")
            add("| case | unit | ours | theirs | ours/theirs | goal | met | ours min–max (ok/runs) "
                "| theirs min–max (ok/runs) |")
            add("|---|---|---:|---:|---:|---|---|---|---|")
            for c in rows:
                for metric, unit, better in METRICS[c["kind"]]:
                    so = stat(runs, topo, c["id"], "ours", metric)
                    st = stat(runs, topo, c["id"], "theirs", metric)
                    rt = ratio(so.median, st.median)
                    g = ratio_goal(topo, c, metric)
                    gtxt, gmet = ("", "")
                    if g:
                        gtxt, gmet = g[2], met(g[0], g[1], rt)
                    add("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        case_label(c, metric), unit, fmt(so.median), fmt(st.median),
                        fmt(rt) + ("x" if rt is not None else ""), gtxt, gmet,
                        so.spread(), st.spread()))
                    if rt is not None:
                        good = rt >= 1 if better == "higher" else rt <= 1
                        plot_rows.append((short_label(topo, c, metric), rt, good,
                                          g[1] if g else None))
                    elif so.n or st.n:
                        # No ratio: a driver has no successful run. A mark at 1.
                        who = "+".join(i for i, s_ in (("ours", so), ("theirs", st)) if not s_.values)
                        plot_rows.append((short_label(topo, c, metric) + " (%s FAILED)" % who,
                                          None, False, g[1] if g else None))
            add("")

    # --- the wire
    iperf = [(t, c) for (t, _), c in cases.items() if c["kind"] == "iperf"]
    if iperf:
        add("## The wire's ceiling: iperf3 TCP, one stream, between the same guests")
        add("")
        add("| MTU | iperf3 Gb/s (median) | min–max (ok/runs) | ours ib_write_bw 64 KiB / iperf3 "
            "| theirs ib_write_bw 64 KiB / iperf3 |")
        add("|---|---:|---|---:|---:|")
        for topo, c in iperf:
            s = stat(runs, topo, c["id"], "wire", "bw")
            w = find_case(cases, topo, lambda x, c=c: x["kind"] == "bw" and x["tool"] == "ib_write_bw"
                          and x["size"] == "65536" and x["qps"] == "1" and x["mtu"] == c["mtu"])
            ro = rth = None
            if w:
                ro = ratio(stat(runs, topo, w[0]["id"], "ours", "bw").median, s.median)
                rth = ratio(stat(runs, topo, w[0]["id"], "theirs", "bw").median, s.median)
            add("| %s | %s | %s | %s | %s |" % (
                c["mtu"], fmt(s.median), s.spread(),
                fmt(ro * 100) + "%" if ro is not None else "—",
                fmt(rth * 100) + "%" if rth is not None else "—"))
        add("")

    # --- CPU cost
    cpu_rows = []
    for (topo, cid), c in cases.items():
        if c["kind"] not in CPU_KINDS:
            continue
        impls = ("wire",) if c["kind"] == "iperf" else IMPLS
        ss = {i: stat(runs, topo, cid, i, "cpu") for i in impls}
        if not any(s.values for s in ss.values()):
            continue
        cpu_rows.append((topo, c, ss))
    if cpu_rows:
        add("## CPU cost: guest CPU seconds per GiB moved (lower is better)")
        add("")
        add("Busy time (all of /proc/stat's cpu line but idle and iowait) of every guest "
            "taking part, over a window of steady traffic, divided by the bytes moved in it.")
        add("")
        add("| where | case | ours | theirs | ours/theirs | ours min–max (ok/runs) "
            "| theirs min–max (ok/runs) |")
        add("|---|---|---:|---:|---:|---|---|")
        for topo, c, ss in cpu_rows:
            if c["kind"] == "iperf":
                s = ss["wire"]
                add("| %s, MTU %s | %s (kernel TCP, for scale) | %s | | | %s | |" % (
                    topo, c["mtu"], case_label(c, None), fmt(s.median), s.spread()))
                continue
            so, st = ss["ours"], ss["theirs"]
            rt = ratio(so.median, st.median)
            add("| %s, MTU %s | %s | %s | %s | %s | %s | %s |" % (
                topo, c["mtu"], case_label(c, None), fmt(so.median), fmt(st.median),
                fmt(rt) + ("x" if rt is not None else ""), so.spread(), st.spread()))
        add("")

    # --- what went wrong
    failed = [r for r in runs if r["status"] != "ok"]
    add("## Failed runs")
    add("")
    if not failed:
        add("None: every run completed and produced its numbers.")
    else:
        add("| round | where | driver | case | why |")
        add("|---|---|---|---|---|")
        # Runs that never started because their boot ended early: one line
        # per boot.
        notrun = {}
        for r in failed:
            if r["reason"].startswith("not run ("):
                notrun.setdefault((r["round"], r["topo"], r["reason"]), []).append(r)
                continue
            add("| %d | %s, MTU %s | %s | %s | %s |" % (
                r["round"], r["topo"], r["case"]["mtu"], r["impl"], r["case"]["id"],
                r["reason"].replace("|", "\\|")))
        for (rnd, topo, why), rs in notrun.items():
            add("| %d | %s | %s | %d runs: %s | %s |" % (
                rnd, topo, "/".join(sorted({r["impl"] for r in rs})), len(rs),
                ", ".join(sorted({r["case"]["id"] for r in rs}))[:300], why.replace("|", "\\|")))
    retried = [r for r in runs if r["attempts"] > 1]
    if retried:
        add("")
        add("Latency runs repeated because perftest's clock calibration failed "
            "(only the last attempt counts): %s." % ", ".join(
                "r%d %s %s %s (%d attempts)" % (r["round"], r["topo"], r["impl"], r["case"]["id"],
                                                r["attempts"]) for r in retried))
    bad = []
    for b in boots:
        stalls = int(b.get("wire_stalls", "0") or 0)
        for i in range(1, stalls + 1):
            bad.append("round %d %s: the wire stalled (a guest's virtio transmit queue, "
                       "NETDEV WATCHDOG) at %s; that run is set aside and the pair booted "
                       "again for the runs not yet made" % (
                           b["round"], b["topo"], b.get("wire_stall%d" % i, "?")))
        if int(b.get("boots", "1") or 1) > 1 + stalls:
            bad.append("round %d %s: booted again after the first boot failed before any run: %s" % (
                b["round"], b["topo"],
                (read_text(b["dir"] + ".failed-boot/reason") or "?").strip()))
        if b.get("rc", "0") != "0" and b.get("reason"):
            bad.append("round %d %s: %s" % (b["round"], b["topo"], b["reason"]))
        for g in ("a", "b"):
            for f in sorted(glob.glob(os.path.join(b["dir"], g, "*dmesg-bad-*.log"))):
                t = read_text(f)
                impl = os.path.basename(f)[:-4].replace("dmesg-bad-", "")
                if t and t.strip():
                    lines = t.strip().splitlines()
                    bad.append("round %d %s guest %s, %s: %d kernel log line(s) like `%s`" % (
                        b["round"], b["topo"], g, impl, len(lines), lines[0][:120]))
    if bad:
        add("")
        add("Boots and kernel logs:")
        add("")
        for x in bad:
            add("- " + x)
    add("")

    with open(os.path.join(dirname, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    plot(dirname, plot_rows, setup, guest)


def plot(dirname, rows, setup, guest):
    png = os.path.join(dirname, "results.png")
    if not rows:
        return
    dat = os.path.join(dirname, "ratios.dat")
    with open(dat, "w", encoding="utf-8") as f:
        f.write("# x ratio color label goal\n")
        for i, (label, rt, good, goal) in enumerate(rows):
            f.write('%d %s %d "%s" %s %s\n' % (
                i, "%.6g" % rt if rt is not None else "NaN", 0x2ca02c if good else 0xd62728,
                label, "%.6g" % goal if goal else "NaN", "NaN" if rt is not None else "1"))
    vals = [r[1] for r in rows if r[1] is not None] + [r[3] for r in rows if r[3]] + [1.0]
    lo = min(vals) / 1.5
    hi = max(vals) * 1.5
    width = max(900, 24 * len(rows) + 200)
    gp = """
set terminal pngcairo size %d,760 font "sans,9" noenhanced
set output '%s'
set title "ours / theirs (rdma_rxe), median of rounds; %s; green: ours better, red: worse, red x: no successful run; black: goal"
set logscale y 2
set yrange [%g:%g]
set xrange [-1:%d]
set ylabel "ours / theirs (log scale)"
set xtics rotate by 60 right nomirror
set grid ytics
set style fill solid 0.85 noborder
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 1.2 lc rgb "black"
unset key
plot '%s' using 1:2:($1-0.38):($1+0.38):(1):2:3:xtic(4) with boxxyerror lc rgb variable, \\
     '' using ($1-0.45):5:(0.9):(0) with vectors nohead lw 3 lc rgb "black", \\
     '' using 1:6 with points pt 2 ps 2.5 lw 2 lc rgb "#d62728"
""" % (width, png, "kernel " + guest.get("kernel", setup.get("kernel", "?")), lo, hi, len(rows),
       dat)
    try:
        p = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True, check=False)
    except OSError as e:
        print("report.py: no plot: %s" % e, file=sys.stderr)
        return
    if p.returncode != 0:
        print("report.py: gnuplot failed:\n%s" % p.stderr, file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py DIR")
    report(sys.argv[1])
