#!/usr/bin/env python3
"""restart_timing.py EVENTS STALLS ZCFSD_LOG SERVER_LOG VOLUME: where the
client stall of each server restart goes (bench/notes/supervision.md,
"Where a restart's stall goes"), from the wall_us= stamps zcfsd and zcfs-serve
log (CLOCK_REALTIME microseconds, the clock of the probe's STALLS file).

EVENTS: one wall-clock microsecond stamp per restart the test caused
(the kill, or the `zcfsctl volume restart` call). Per restart the steps
are, where the logs have them:
  standby  event -> the successor started first says it is ready (planned,
           not seen by clients: the old server still serves)
  ask      event (or standby ready) -> zcfsd asks the old server to hand over
  handover the old server's hand-over
  exit     kill or end of hand-over -> zcfsd sees the exit (pidfd)
  go       exit seen -> zcfsd lets the standby go (planned, standby)
  wake     go written -> the standby runs (its "standby: go")
  fork     exit seen -> fork of the successor (no standby)
  exec     fork -> exec done (the CLOEXEC error pipe closes)
  ld       exec -> main() (dynamic linking)
  source, tables, confine, transport: zcfs-serve's start steps (before
           the go for a standby)
  serving  go (or transport) -> serving: quota count, INIT assumed, rings
           registered, kicks
  gap      hand-over asked (or kill) -> successor serving: no server reads
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


def first_in(ms, t, end, key=lambda m: int(m.group(1))):
    for m in ms:
        if t <= key(m) < end:
            return m
    return None


def main():
    events_f, stalls_f, zlog, slog, vol = sys.argv[1:6]
    events = [int(l) for l in open(events_f) if l.strip()]
    stalls = [tuple(map(int, l.split())) for l in open(stalls_f) if l.strip()]
    v = re.escape(vol)
    ready = stamps(zlog, rf"event=server-standby-ready volume={v} .*wall_us=(\d+)")
    handover = stamps(zlog, rf"event=server-handover volume={v} .*wall_us=(\d+)")
    exits = stamps(zlog, rf"event=server-exit volume={v} .*wall_us=(\d+)")
    starts = stamps(zlog, rf"event=server-start volume={v} .*fork_us=(\d+) exec_ms=([\d.]+)")
    promote = stamps(zlog, rf"event=server-restart volume={v} .*standby=yes wall_us=(\d+)")
    hands = stamps(slog, r"hand-over to a successor: .*wall_us=(\d+) took_ms=([\d.]+)")
    gos = stamps(slog, r"standby: go wall_us=(\d+)")
    serving = stamps(slog, r"serving .*resumed=yes main=(\d+) steps_ms=(\S+)")
    steps = {}

    def add(name, ms):
        if ms is not None and ms >= 0:
            steps.setdefault(name, []).append(ms)

    for i, k in enumerate(events):
        end = events[i + 1] if i + 1 < len(events) else float("inf")
        e = first_in(exits, k, end)
        if not e:
            continue
        t_exit = int(e.group(1))
        rd = first_in(ready, k, t_exit)
        h = first_in(handover, k, end)
        ho = first_in(hands, k, t_exit) if h else None
        asked = k
        if rd:
            add("standby", (int(rd.group(1)) - k) / 1000)
            asked = int(rd.group(1))
        if h:
            add("ask", (int(h.group(1)) - asked) / 1000)
        gone_from = k
        if ho:
            add("handover", float(ho.group(2)))
            gone_from = int(ho.group(1)) + float(ho.group(2)) * 1000
        add("exit", (t_exit - gone_from) / 1000)
        gap_from = int(h.group(1)) if h else k
        p = first_in(promote, t_exit, end)
        if p:
            add("go", (int(p.group(1)) - t_exit) / 1000)
            g = first_in(gos, int(p.group(1)), end)
            if g:
                add("wake", (int(g.group(1)) - int(p.group(1))) / 1000)
            sv = first_in(serving, k, end)
            if sv:
                done = int(sv.group(1)) + sum(float(kv.split(":")[1]) for kv in sv.group(2).split(",")) * 1000
                add("serving", float(dict(kv.split(":") for kv in sv.group(2).split(",")).get("serving", -1)))
                add("gap", (done - gap_from) / 1000)
        else:
            s = first_in(starts, t_exit, end)
            if s:
                fork = int(s.group(1))
                exec_done = fork + float(s.group(2)) * 1000
                add("fork", (fork - t_exit) / 1000)
                add("exec", float(s.group(2)))
                sv = first_in(serving, fork, end, key=lambda m: int(m.group(1)))
                if sv:
                    main_us = int(sv.group(1))
                    add("ld", (main_us - exec_done) / 1000)
                    total = main_us
                    for kv in sv.group(2).split(","):
                        name, ms = kv.split(":")
                        if name != "standby":
                            add(name, float(ms))
                        total += float(ms) * 1000
                    add("gap", (total - gap_from) / 1000)
        add("stall", max([d for st, d in stalls if k - 1000000 <= st < end and st + d > k] or [0]) / 1000)
    order = ["standby", "ask", "handover", "exit", "go", "wake", "fork", "exec", "ld", "source",
             "tables", "confine", "transport", "serving", "gap", "stall"]
    for name in order:
        xs = sorted(steps.get(name, []))
        if not xs:
            continue
        pct = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
        print(f"{name:9s} n={len(xs)} p50={pct(0.5):.1f}ms p99={pct(0.99):.1f}ms max={xs[-1]:.1f}ms")


if __name__ == "__main__":
    main()
