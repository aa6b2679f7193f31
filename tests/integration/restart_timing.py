#!/usr/bin/env python3
"""restart_timing.py EVENTS STALLS ZCFSD_LOG SERVER_LOG VOLUME: where the
client stall of each server restart goes (docs/supervision.md, "Where a
restart's stall goes"), from the wall_us= stamps zcfsd and zcfs-serve
log (CLOCK_REALTIME microseconds, the clock of the probe's STALLS file).

EVENTS: one wall-clock microsecond stamp per restart the test caused
(the kill, or the `zcfsctl volume restart` call). Per restart the steps
are, where the logs have them:
  ask      event -> zcfsd signals the server (planned only)
  handover the old server's hand-over (planned only)
  exit     kill or end of hand-over -> zcfsd sees the exit (pidfd)
  fork     exit seen -> fork of the successor
  exec     fork -> exec done (the CLOEXEC error pipe closes)
  ld       exec -> main() (dynamic linking)
  source, tables, confine, transport, serving: zcfs-serve's start steps
  total    event -> successor serving
  stall    the probe's longest round around the event
Prints one line per step: p50/p99/max in ms over the restarts seen."""
import re
import sys


def stamps(path, pattern):
    out = []
    try:
        for line in open(path, errors="replace"):
            m = re.search(pattern, line)
            if m:
                out.append(m)
    except OSError:
        pass
    return out


def first_after(ms, t, key=lambda m: int(m.group(1))):
    for m in ms:
        if key(m) >= t:
            return m
    return None


def main():
    events_f, stalls_f, zlog, slog, vol = sys.argv[1:6]
    events = [int(l) for l in open(events_f) if l.strip()]
    stalls = [tuple(map(int, l.split())) for l in open(stalls_f) if l.strip()]
    v = re.escape(vol)
    handover = stamps(zlog, rf"event=server-handover volume={v} .*wall_us=(\d+)")
    exits = stamps(zlog, rf"event=server-exit volume={v} .*wall_us=(\d+)")
    starts = stamps(zlog, rf"event=server-start volume={v} .*fork_us=(\d+) exec_ms=([\d.]+)")
    hands = stamps(slog, r"hand-over to a successor: .*wall_us=(\d+) took_ms=([\d.]+)")
    serving = stamps(slog, r"serving .*resumed=yes main=(\d+) steps_ms=(\S+)")
    steps = {}

    def add(name, ms):
        if ms is not None and ms >= 0:
            steps.setdefault(name, []).append(ms)

    for i, k in enumerate(events):
        end = events[i + 1] if i + 1 < len(events) else float("inf")
        h = first_after(handover, k)
        h = h if h and int(h.group(1)) < end else None
        ho = first_after(hands, k) if h else None
        e = first_after(exits, k)
        if not e or int(e.group(1)) >= end:
            continue
        t_exit = int(e.group(1))
        if h:
            add("ask", (int(h.group(1)) - k) / 1000)
        gone_from = k
        if ho and int(ho.group(1)) < t_exit:
            add("handover", float(ho.group(2)))
            gone_from = int(ho.group(1)) + float(ho.group(2)) * 1000
        add("exit", (t_exit - gone_from) / 1000)
        s = first_after(starts, t_exit)
        if not s:
            continue
        fork = int(s.group(1))
        exec_done = fork + float(s.group(2)) * 1000
        add("fork", (fork - t_exit) / 1000)
        add("exec", float(s.group(2)))
        sv = first_after(serving, fork)
        if sv:
            main_us = int(sv.group(1))
            add("ld", (main_us - exec_done) / 1000)
            total = main_us
            for kv in sv.group(2).split(","):
                name, ms = kv.split(":")
                add(name, float(ms))
                total += float(ms) * 1000
            add("total", (total - k) / 1000)
        add("stall", max([d for st, d in stalls if k - 1000000 <= st < end and st + d > k] or [0]) / 1000)
    order = ["ask", "handover", "exit", "fork", "exec", "ld", "source", "tables", "confine",
             "transport", "serving", "total", "stall"]
    for name in order:
        xs = sorted(steps.get(name, []))
        if not xs:
            continue
        pct = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
        print(f"{name:9s} n={len(xs)} p50={pct(0.5):.1f}ms p99={pct(0.99):.1f}ms max={xs[-1]:.1f}ms")


if __name__ == "__main__":
    main()
