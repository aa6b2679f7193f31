#!/usr/bin/env python3
"""restart_stall.py EVENTS STALLS ZCFSD_LOG VOLUME [BOUND_MS]: the client
stall per server restart, from the probe's STALLS file ("START_US
DURATION_US" per round of 20 ms or more, CLOCK_REALTIME) and the
restarts' EVENTS (one stamp per kill or `zcfsctl volume restart`).

Per restart, the longest probe round in flight at some moment from the
event until 50 ms after zcfsd's `event=server-restart ... wall_us=` (the
standby's go, or the successor's spawn + RESEND after a kill): p50, p99,
max. Also the same over the wide window (any round that began up to
1 s before the event and before the next one, and ended after the
event: the figure t_zcfsd_restart_load printed alone before), and the
slowest round that overlapped no restart window ("ambient": what the
same probe sees from the machine alone in the same run). The last word
is "ok" when the p99 is below BOUND_MS (default 100) plus that ambient
round, else "over"; then, after "per=", the narrow stall of every
restart, sorted."""
import re
import sys


def main():
    ev = [int(l) for l in open(sys.argv[1]) if l.strip()]
    st = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
    vol = re.escape(sys.argv[4])
    bound_ms = float(sys.argv[5]) if len(sys.argv) > 5 else 100.0
    done = []
    for line in open(sys.argv[3], errors="replace"):
        m = re.search(r"event=server-restart volume=%s .*wall_us=(\d+)" % vol, line)
        if m:
            done.append(int(m.group(1)))
    per, wide, windows = [], [], []
    for i, k in enumerate(ev):
        end = ev[i + 1] if i + 1 < len(ev) else float("inf")
        d = next((x for x in done if k <= x < end), end)
        windows.append((k, d + 50000))
        per.append(max([u for s, u in st if s < d + 50000 and s + u > k] or [0]) / 1000)
        wide.append(max([u for s, u in st if k - 1000000 <= s < end and s + u > k] or [0]) / 1000)
    ambient = max([u for s, u in st if ev and s >= ev[0] - 1000000 and
                   not any(s < b and s + u > a for a, b in windows)] or [0]) / 1000

    def pct(xs, p):
        return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] if xs else 0

    p99, bound = pct(per, 0.99), bound_ms + ambient
    print(f"n={len(per)} p50={pct(per, 0.5):.0f}ms p99={p99:.0f}ms max={max(per or [0]):.0f}ms "
          f"(up to the next restart: p50={pct(wide, 0.5):.0f}ms p99={pct(wide, 0.99):.0f}ms "
          f"max={max(wide or [0]):.0f}ms; slowest round away from restarts {ambient:.0f}ms, "
          f"bound {bound:.0f}ms) {'ok' if p99 < bound else 'over'} "
          f"per={[round(x) for x in sorted(per)]}")


if __name__ == "__main__":
    main()
