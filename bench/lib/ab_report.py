#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The report of an A/B run of bench/ab.sh.

    ab_report.py DIR

reads DIR/ab.info, DIR/cases.txt and every run's raw output under
DIR/a/runs/ and DIR/b/runs/ (lib/guest-ab.sh; run r<round>.<side>.c<case>),
writes

    DIR/runs.csv   one line per run and metric (hw counters included): the
                   number, or the failure and why
    DIR/ab.md      per case: medians of A and B, B/A, the median of B/A within
                   each round, spreads, in how many rounds B did better, key
                   hw_counters; failed runs

and prints ab.md. A run is parsed by lib/report.py's parse_run, as the
bench's runs are: bandwidth = #iterations x size / perftest's measuring
window; latency = perftest's t_typical and 99% percentile.
"""

import csv
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report as R  # noqa: E402  (lib/report.py: the bench's parser)

SIDES = ("A", "B")
# kind -> [(metric, unit, better)]
METRICS = {
    "bw": [("mbps", "MB/s", "higher"), ("kmsgps", "kmsg/s", "higher"),
           ("cpu", "CPU s/GiB", "lower")],
    "lat": [("lat_typ", "t_typical µs", "lower"), ("lat_p99", "p99 µs", "lower")],
    "nvme": [("write_mbps", "write MB/s", "higher"), ("read_mbps", "read MB/s", "higher")],
}
# The hw_counters worth a line in the table (when they moved): packets,
# ACKs, sequence errors and NAKs, retries, RNR, duplicates, drops, errors.
KEY_COUNTER = re.compile(r"pkts$|ack|seq|retr|rnr|dup|drop|_err$|timeout")
FIRST_COUNTERS = ("sent_pkts", "rcvd_pkts")


def parse_case(text):
    """'[loss=P% | drop=P%] TOOL ARGS' -> dict(kind, text, tool, bs_kib);
    bs_kib: an nvme case's fio block size (-b KIB), None when not given
    (4 KiB)."""
    w = text.split()
    if w and w[0].startswith(("loss=", "drop=")):
        w = w[1:]
    tool = w[0] if w else "?"
    kind = "nvme" if tool == "nvme" else "lat" if tool.endswith("_lat") else "bw"
    bs = None
    if kind == "nvme" and "-b" in w[:-1]:
        bs = int(w[w.index("-b") + 1])
    return {"kind": kind, "text": text, "tool": tool, "bs_kib": bs}


def read_counters(path):
    kv = R.read_kv(path)
    if kv is None:
        return None
    out = {}
    for k, v in kv.items():
        try:
            out[k] = int(v)
        except ValueError:
            pass
    return out


def parse(d, info, cases):
    topo = info.get("topo", "two")
    client = "b" if topo == "two" else "a"
    guests = ("a", "b") if topo == "two" else ("a",)
    rounds = int(info.get("rounds", "1") or 1)
    why_end = ""
    if info.get("wire_lost"):
        why_end = "the wire stopped after %s" % info["wire_lost"]
    elif info.get("reason"):
        why_end = info["reason"]
    runs = []
    for r in range(1, rounds + 1):
        for side in SIDES:
            for k, c in enumerate(cases, 1):
                impl = "r%d.%s" % (r, side)
                base = os.path.join(d, client, "runs", "%s.c%d" % (impl, k))
                run = {"round": r, "side": side, "k": k, "case": c, "metrics": {},
                       "counters": {}, "made": os.path.exists(base + ".info")}
                res = R.parse_run({"dir": d, "reason": why_end}, topo,
                                  {"id": "c%d" % k, "kind": c["kind"]}, impl)
                run.update(status=res["status"], reason=res["reason"],
                           attempts=res["attempts"])
                text = R.read_text(base + ".client.log") or ""
                stext = R.read_text(os.path.join(d, "a", "runs", "%s.c%d.server.log" % (impl, k))) or ""
                if run["status"] == "ok" and "Failed status" in text + stext:
                    run["status"] = "fail"
                    run["reason"] = R.last_error_line(text if "Failed status" in text else stext)
                if run["status"] == "ok" and c["kind"] == "nvme":
                    # parse_run's: the host's exit status says the data came
                    # back identical; MB/s from dd's or fio's own seconds.
                    run["metrics"]["write_mbps"] = res["metrics"]["write"]
                    run["metrics"]["read_mbps"] = res["metrics"]["read"]
                elif run["status"] == "ok":
                    if c["kind"] == "bw":
                        run["metrics"]["mbps"] = res["metrics"]["bw"] * 1e9 / 8 / 1e6
                        run["metrics"]["kmsgps"] = res["msgs_per_s"] / 1e3
                        if res["cpu"] is not None:
                            run["metrics"]["cpu"] = res["cpu"]
                    else:
                        run["metrics"].update(res["metrics"])
                for g in guests:
                    cs = read_counters(os.path.join(d, g, "runs", "%s.c%d.counters" % (impl, k)))
                    if cs is not None:
                        run["counters"][g] = cs
                runs.append(run)
    return runs, guests


def side_counters(d, guests, side):
    """The hw_counters rxe0 had with this side loaded, per guest (None: unknown)."""
    have = {}
    for g in guests:
        names = None
        for f in sorted(os.listdir(os.path.join(d, g, "runs")) if os.path.isdir(
                os.path.join(d, g, "runs")) else []):
            if re.fullmatch(r"r\d+\.%s\.params" % side, f):
                kv = R.read_kv(os.path.join(d, g, "runs", f)) or {}
                if kv.get("counters"):
                    names = set(kv["counters"].split())
                    break
        have[g] = names
    return have


def side_params(d, guests, side):
    """What the guests read back: srcversion and the parameters, per round."""
    seen = []
    for g in guests:
        rdir = os.path.join(d, g, "runs")
        if not os.path.isdir(rdir):
            continue
        for f in sorted(os.listdir(rdir)):
            if re.fullmatch(r"r\d+\.%s\.params" % side, f):
                seen.append(R.read_kv(os.path.join(rdir, f)) or {})
    return seen


def median(xs):
    return statistics.median(xs) if xs else None


def ratio(b, a):
    if a is None or b is None or a == 0:
        return None
    return b / a


def cell(s):
    return str(s).replace("|", "\\|")


def main(d):
    info = R.read_kv(os.path.join(d, "ab.info")) or {}
    texts = [l for l in (R.read_text(os.path.join(d, "cases.txt")) or "").splitlines() if l.strip()]
    cases = [parse_case(t) for t in texts]
    runs, guests = parse(d, info, cases)
    la, lb = info.get("A_label", "A"), info.get("B_label", "B")
    label = {"A": la, "B": lb}

    def col(s):
        """A column's head: the label, and the side unless that is the label."""
        return cell(label[s]) if label[s] == s else "%s (%s)" % (cell(label[s]), s)

    # --- runs.csv
    with open(os.path.join(d, "runs.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["round", "side", "label", "case_no", "case", "metric", "unit", "value",
                    "status", "reason", "attempts"])
        for r in runs:
            if not r["made"]:
                continue
            common = [r["round"], r["side"], label[r["side"]], r["k"], r["case"]["text"]]
            tail = [r["status"], r["reason"], r["attempts"]]
            for metric, unit, _ in METRICS[r["case"]["kind"]]:
                v = r["metrics"].get(metric)
                w.writerow(common + [metric, unit, "" if v is None else "%.6g" % v] + tail)
            for g, cs in sorted(r["counters"].items()):
                for name, v in sorted(cs.items()):
                    w.writerow(common + ["%s:%s" % (g, name), "count", v] + tail)

    # --- ab.md
    md = []
    add = md.append
    add("# A/B: %s against %s" % (lb, la))
    add("")
    for s in SIDES:
        ko = info.get("%s_ko" % s, "?")
        desc = "the guest kernel's in-tree rdma_rxe" if ko == "theirs" else "`%s`" % ko
        params = info.get("%s_params" % s, "")
        srcv = info.get("%s_srcversion" % s, "")
        line = "- **%s = %s**: %s, sha256 %s…%s; parameters: %s" % (
            s, label[s], desc, info.get("%s_sha256" % s, "?") or "?",
            ", srcversion %s" % srcv if srcv else "", "`%s`" % params if params else "none")
        seen = side_params(d, guests, s)
        if seen:
            want = info.get("%s_srcversion" % s, "")
            got = sorted({x.get("srcversion", "") for x in seen})
            if want and got != [want]:
                line += "; **the guests loaded srcversion %s**" % ", ".join(got)
            for p in params.split():
                name = p.split("=")[0]
                vals = sorted({x.get("param." + name, "(not in sysfs)") for x in seen})
                line += "; %s reads %s in sysfs" % (name, "/".join(vals))
        add(line)
    topo = info.get("topo", "two")
    # A case with fio's block size (-b) changes the nvme note; without
    # one it reads as it always did.
    any_bs = any(c.get("bs_kib") is not None for c in cases)
    dur, mar = int(info.get("duration", 0) or 0), int(info.get("margin", 0) or 0)
    add("- **How**: one boot of %s (vCPUs per guest: %s), MTU %s (RoCE MTU %s); %s round(s), each "
        "side loaded in turn (A first in odd rounds, B first in even ones), every case once; "
        "bandwidth tools `-D %d -f %d` (measured over %d s)%s" % (
            "two guests, server on a, client on b" if topo == "two" else
            "one guest, server and client on its own IP",
            info.get("vm_smp", "?"), info.get("mtu", "?"),
            4096 if int(info.get("mtu", 1500) or 1500) >= 9000 else 1024,
            info.get("rounds", "?"), dur, mar, dur - 2 * mar,
            "; nvme: NVMe-oF over RDMA, nvmet-rdma on a (memory-backed null_blk), the host on "
            "b; MB/s = MiB x 2^20 / the seconds dd reports for the O_DIRECT write (with fsync) "
            "and the O_DIRECT read (`-q QD`: fio's seconds for 4 KiB blocks%s in random order, "
            "QD in flight, each block once; IOPS = MB/s x 10^6 / %s); a run whose data did "
            "not come back identical failed" % (
                " (`-b KIB`: KIB KiB)" if any_bs else "",
                "the block's bytes" if any_bs else "4096") if any(
                c["kind"] == "nvme" for c in cases) else ""))
    add("- **Where**: kernel %s, QEMU %s (%s), perftest %s, git %s; host %s CPUs, load %s at "
        "start, %s at end; took %s s" % (
            info.get("kernel", "?"), info.get("qemu", "?").replace("QEMU emulator version ", ""),
            info.get("accel", "?"), info.get("perftest", "?"), info.get("git", "?"),
            info.get("host_ncpu", "?"), info.get("host_loadavg_start", "?"),
            info.get("host_loadavg_end", "?"), info.get("elapsed", "?")))
    add("")
    add("Medians over the successful runs; B/A = median(B) / median(A). MB/s = 10^6 bytes/s, "
        "from perftest's #iterations x size / window. Paired B/A: the median over the rounds "
        "of B / A within the round, which the host's speed, drifting from minute to minute, "
        "moves less than it moves either median. Spread: min–max (successful runs / runs "
        "made). \"%s better\": the rounds where %s beat %s, of those where both have a number "
        "(higher is better for MB/s and kmsg/s, lower for latency and CPU s/GiB)." % (lb, lb, la))
    add("")
    add("| case | metric | %s | %s | B/A | paired B/A | A min–max (ok/runs) "
        "| B min–max (ok/runs) | %s better |" % (col("A"), col("B"), cell(lb)))
    add("|---|---|---:|---:|---:|---:|---|---|---|")
    for k, c in enumerate(cases, 1):
        first = True
        for metric, unit, better in METRICS[c["kind"]]:
            st = {}
            for s in SIDES:
                rs = [r for r in runs if r["k"] == k and r["side"] == s and r["made"]]
                vals = [r["metrics"][metric] for r in rs if metric in r["metrics"]]
                st[s] = R.Stat(vals, len(rs), [r for r in rs if r["status"] != "ok"])
            if metric == "cpu" and not st["A"].values and not st["B"].values:
                continue
            rt = ratio(st["B"].median, st["A"].median)
            wins = n = 0
            paired = []
            for rnd in sorted({r["round"] for r in runs}):
                v = {}
                for r in runs:
                    if r["k"] == k and r["round"] == rnd and metric in r["metrics"]:
                        v[r["side"]] = r["metrics"][metric]
                if len(v) == 2:
                    n += 1
                    if v["A"]:
                        paired.append(v["B"] / v["A"])
                    if (v["B"] > v["A"]) if better == "higher" else (v["B"] < v["A"]):
                        wins += 1
            pm = median(paired)
            add("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                "`%s`" % cell(c["text"]) if first else "", unit, R.fmt(st["A"].median),
                R.fmt(st["B"].median), R.fmt(rt) + ("x" if rt is not None else ""),
                R.fmt(pm) + ("x" if pm is not None else ""),
                st["A"].spread(), st["B"].spread(),
                "%d/%d rounds" % (wins, n) if n else "—"))
            first = False
    add("")

    # --- counters
    have = {s: side_counters(d, guests, s) for s in SIDES}
    crow = []
    for k, c in enumerate(cases, 1):
        ok = [r for r in runs if r["k"] == k and r["status"] == "ok"]
        for g in guests:
            names = set()
            for r in ok:
                names |= {n for n, v in r["counters"].get(g, {}).items()
                          if v and KEY_COUNTER.search(n)}
            for name in sorted(names, key=lambda n: (n not in FIRST_COUNTERS,
                                                     FIRST_COUNTERS.index(n) if n in FIRST_COUNTERS else 0, n)):
                med = {}
                for s in SIDES:
                    vals = [r["counters"][g].get(name, 0) for r in ok
                            if r["side"] == s and g in r["counters"]]
                    if have[s].get(g) is not None and name not in have[s][g]:
                        med[s] = None  # this driver has no such counter
                    else:
                        med[s] = median(vals)
                rt = ratio(med["B"], med["A"])
                crow.append((c["text"], g, name, med["A"], med["B"], rt))
    if crow:
        add("hw_counters that moved (rxe0; medians per run over the successful runs; guest a "
            "runs the server%s; — : the driver has no such counter, or no successful run):" % (
                ", b the client" if topo == "two" else " and the client"))
        add("")
        add("| case | guest | counter | %s | %s | B/A |" % (col("A"), col("B")))
        add("|---|---|---|---:|---:|---:|")
        last = None
        for text, g, name, a, b, rt in crow:
            add("| %s | %s | %s | %s | %s | %s |" % (
                "`%s`" % cell(text) if text != last else "", g, name, R.fmt(a), R.fmt(b),
                R.fmt(rt) + ("x" if rt is not None else "")))
            last = text
        add("")

    # --- what went wrong
    failed = [r for r in runs if r["made"] and r["status"] != "ok"]
    notmade = [r for r in runs if not r["made"]]
    if failed:
        add("Failed runs:")
        add("")
        for r in failed:
            add("- round %d, %s (%s), `%s`: %s" % (r["round"], r["side"], label[r["side"]],
                                                  r["case"]["text"], r["reason"]))
        add("")
    if notmade:
        add("Runs not made (%d of %d): the boot ended early: %s. Not made: %s." % (
            len(notmade), len(runs), info.get("reason") or
            ("the wire stopped after %s" % info["wire_lost"] if info.get("wire_lost") else "?"),
            ", ".join("r%d %s c%d" % (r["round"], r["side"], r["k"]) for r in notmade)))
        add("")
    retried = [r for r in runs if r["attempts"] > 1]
    if retried:
        add("Latency runs made again because perftest's clock calibration failed (the last "
            "attempt counts): %s." % ", ".join(
                "r%d %s c%d (%d attempts)" % (r["round"], r["side"], r["k"], r["attempts"])
                for r in retried))
        add("")
    notes = []
    if info.get("wire_lost"):
        notes.append("the wire stopped (no answer to ping, or NETDEV WATCHDOG) after %s; "
                     "the boot ended there" % info["wire_lost"])
    if int(info.get("boots", "1") or 1) > 1:
        notes.append("booted twice: the first boot failed before any run: %s" % (
            (R.read_text(os.path.join(d, "failed-boot", "reason")) or "?").strip()))
    for g in guests:
        gdir = os.path.join(d, g)
        if not os.path.isdir(gdir):
            continue
        for f in sorted(os.listdir(gdir)):
            m = re.fullmatch(r"dmesg-bad-r(\d+)-([AB])\.log", f)
            t = (R.read_text(os.path.join(gdir, f)) or "").strip()
            if m and t:
                lines = t.splitlines()
                notes.append("round %s, %s, guest %s: %d kernel log line(s) like `%s`" % (
                    m.group(1), m.group(2), g, len(lines), lines[0][:120]))
    if notes:
        add("Boot and kernel logs:")
        add("")
        for x in notes:
            add("- " + x)
        add("")

    with open(os.path.join(d, "ab.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ab_report.py DIR")
    main(sys.argv[1])
