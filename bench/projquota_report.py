#!/usr/bin/env python3
"""projquota_report.py RAW.tsv VOLUMES.txt SETUP: the Markdown report of
bench/projquota-fio.sh. RAW rows: fs, round, rw, target, KiB/s, bytes the
volume's server moved during the run. Per fs and rw: native's median (and
range), then per target the per-round ratios to native (median, range,
rounds >= 0.90) and the server's bytes per run. The verdict on the goal
(pt >= 0.90 of native): met when every round reaches it, not met when none
does, else not decided (the rounds that reach it and the median said)."""
import statistics
import sys
from collections import defaultdict

GOAL = 0.90


def load(path):
    runs = defaultdict(dict)  # (fs, rw, round) -> target -> (kib, server bytes)
    with open(path) as f:
        for line in f:
            fs, rnd, rw, target, kib, sb = line.rstrip("\n").split("\t")
            runs[(fs, rw, int(rnd))][target] = (float(kib), int(sb))
    return runs


def ratios(runs, fs, rw, target):
    out = []
    for (f, w, _), t in sorted(runs.items()):
        if f == fs and w == rw and target in t and t.get("native", (0,))[0] > 0:
            out.append(t[target][0] / t["native"][0])
    return out


def verdict(rs):
    n = sum(r >= GOAL for r in rs)
    if n == len(rs):
        return "met (every round)"
    if n == 0:
        return "not met (no round)"
    # rounds on both sides: the noise decides, not the data path
    return "not decided: %d of %d rounds reach %.2f (median %.2f)" % (
        n, len(rs), GOAL, statistics.median(rs))


def row(runs, fs, rw):
    nat = [t["native"][0] / 1024 for (f, w, _), t in sorted(runs.items())
           if f == fs and w == rw and "native" in t]
    cells = ["%s %s" % (fs, rw),
             "%.0f (%.0f-%.0f)" % (statistics.median(nat), min(nat), max(nat))]
    for target in ("pt", "srv"):
        rs = ratios(runs, fs, rw, target)
        sb = [t[target][1] for (f, w, _), t in runs.items() if f == fs and w == rw and target in t]
        cells.append("%.2f (%.2f-%.2f)" % (statistics.median(rs), min(rs), max(rs)))
        cells.append("%.0f MiB (max %.0f)" % (statistics.median(sb) / 1048576, max(sb) / 1048576))
    pt, srv = ratios(runs, fs, rw, "pt"), ratios(runs, fs, rw, "srv")
    q = [a / b for a, b in zip(pt, srv) if b > 0]
    cells.append("%.2f (%.2f-%.2f)" % (statistics.median(q), min(q), max(q)))
    cells.append(verdict(pt))
    return "| " + " | ".join(cells) + " |"


def main():
    runs = load(sys.argv[1])
    print("# Project-quota volumes: fio direct 1 MiB, ratio to native\n")
    print("bench/projquota-fio.sh (%s). Per round, each target's figure over "
          "native's of the same round; median (range) over the rounds. "
          "\"server\": bytes the volume's server read + wrote per run, median "
          "(largest) (zcfsd's counters).\n" % sys.argv[3])
    with open(sys.argv[2]) as f:
        for line in f:
            print("- " + line.lstrip("# ").rstrip())
    print()
    print("| fs, workload | native MB/s | pt (project quota, passthrough) | pt server | "
          "srv (server-counted, through the server) | srv server | pt / srv | goal pt >= 0.90 |")
    print("|---|---|---|---|---|---|---|---|")
    for fs in sorted({k[0] for k in runs}, reverse=True):
        for rw in ("read", "write"):
            if any(k[0] == fs and k[1] == rw for k in runs):
                print(row(runs, fs, rw))
    print("\nPer round (pt / native, srv / native):\n")
    for (fs, rw, rnd), t in sorted(runs.items()):
        n = t.get("native", (0,))[0]
        if n > 0:
            print("- %s %s round %d: native %.0f MB/s, pt %.2f, srv %.2f" % (
                fs, rw, rnd, n / 1024, t.get("pt", (0,))[0] / n, t.get("srv", (0,))[0] / n))


if __name__ == "__main__":
    main()
