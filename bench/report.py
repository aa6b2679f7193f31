#!/usr/bin/env python3
"""Turn one bench/run.sh run into bench/results/latest.{json,md,png}.

Input (--raw DIR, written by run.sh):
  run.env                     key=value run settings
  TARGET/target.env           status ok|unavailable|failed, reason, options, ...
  TARGET/WORKLOAD.env         fio exit, timestamps, zcfs-serve CPU ticks
  TARGET/WORKLOAD.fio.json    fio --output-format=json
  TARGET/meta.env, meta.jsonl metarate output, one JSON object per repeat
Round 1 of a workload has no tag (WORKLOAD.env), round R > 1 (BENCH_REPEAT)
the tag .rR (WORKLOAD.rR.env); native's second sample of a round, taken after
the zcfs targets, adds .2 (WORKLOAD.2.env, WORKLOAD.r3.2.env, meta.r3.2.jsonl).

Standard library only.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from datetime import datetime, timezone

TARGETS = ["native", "devfuse", "peer-devfuse", "uring-qd8", "uring-inline", "peer-uring", "uring-qd32",
           "uring-stock", "passthrough", "sized", "peer-passthrough", "bufpool", "zerocopy", "auto"]
# The peer (libfuse passthrough_hp) target each zcfs data path is compared with.
PEER_OF = {"devfuse": "peer-devfuse", "uring-qd8": "peer-uring", "uring-qd32": "peer-uring",
           "passthrough": "peer-passthrough"}
DATA_WORKLOADS = [
    "seqread-direct", "seqwrite-direct", "randread-direct", "randwrite-direct",
    "seqread-buffered", "seqwrite-buffered", "randread-buffered", "randwrite-buffered",
    "seqread-cold",
]
PASSTHROUGH_IDLE_S_PER_GIB = 0.1
META_WORKLOADS = ["meta-create", "meta-stat", "meta-unlink"]
WORKLOADS = DATA_WORKLOADS + META_WORKLOADS


def unit_of(wl):
    if wl.startswith("seq"):
        return "MB/s"
    if wl.startswith("rand"):
        return "IOPS"
    return "ops/s"


def metric_key(wl):
    return {"MB/s": "mb_s", "IOPS": "iops", "ops/s": "ops_per_s"}[unit_of(wl)]


def read_env(path):
    env = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line:
                    k, v = line.split("=", 1)
                    # A repeated key (e.g. several 'problem' lines) accumulates.
                    if k in env and k == "problem":
                        env[k] += "; " + v
                    else:
                        env[k] = v
    except FileNotFoundError:
        pass
    return env


def fnum(v, default=None):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def load_fio(path):
    with open(path) as f:
        text = f.read()
    # fio may print warnings before the JSON document.
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON in fio output")
    return json.loads(text[start:])


def parse_fio(wl, env, fio, clk_tck):
    job = fio["jobs"][0]
    side = "read" if "read" in wl.split("-")[0] else "write"
    st = job[side]
    runtime_s = st.get("runtime", 0) / 1000.0
    io_bytes = st.get("io_bytes", 0)
    gib = io_bytes / float(1 << 30)
    pct = st.get("clat_ns", {}).get("percentile", {}) or {}

    def pctl(p):
        for k, v in pct.items():
            if abs(float(k) - p) < 1e-6:
                return v / 1000.0
        return None

    # fio: usr_cpu/sys_cpu are percentages of job_runtime, which with
    # group_reporting is the sum of the jobs' measured runtimes (ms).
    job_runtime_s = job.get("job_runtime", st.get("runtime", 0)) / 1000.0
    fio_cpu = (job.get("usr_cpu", 0.0) + job.get("sys_cpu", 0.0)) / 100.0 * job_runtime_s

    # zcfs-serve: ticks from the end of the ramp until fio exited, pro-rated
    # to fio's measured runtime (the window also has fio's start-up/exit).
    server_cpu = None
    t1, t2 = fnum(env.get("server_ticks_ramp_end")), fnum(env.get("server_ticks_end"))
    if t1 is not None and t2 is not None:
        window = fnum(env.get("t_end"), 0) - fnum(env.get("t_ramp_end"), 0)
        server_cpu = (t2 - t1) / clk_tck
        if window > 0 and runtime_s > 0:
            server_cpu *= min(1.0, runtime_s / window)
    total_cpu = fio_cpu + (server_cpu or 0.0)
    r = {
        "status": "ok",
        "rw": side,
        "mb_s": st.get("bw_bytes", 0) / 1e6,
        "iops": st.get("iops", 0.0),
        "io_gib": gib,
        "runtime_s": runtime_s,
        "clat_p50_us": pctl(50.0),
        "clat_p99_us": pctl(99.0),
        "clat_mean_us": st.get("clat_ns", {}).get("mean", 0) / 1000.0,
        "fio_cpu_s": fio_cpu,
        "server_cpu_s": server_cpu,
        "cpu_s_per_gib": total_cpu / gib if gib > 0 else None,
        "fio_cpu_s_per_gib": fio_cpu / gib if gib > 0 else None,
        "server_cpu_s_per_gib": (server_cpu / gib) if (gib > 0 and server_cpu is not None) else None,
        "fio_errors": job.get("error", 0),
    }
    return r


def round_tag(n):
    """File tag of round n (1-based): none for the first, .rN after."""
    return "" if n == 1 else ".r%d" % n


def merge_samples(wl, a, b):
    """Mean of two samples of one workload; keeps both and their drift."""
    m = dict(a)
    for k in ("mb_s", "iops", "ops_per_s", "io_gib", "runtime_s", "clat_p50_us", "clat_p99_us",
              "clat_mean_us", "fio_cpu_s", "cpu_s_per_gib", "fio_cpu_s_per_gib"):
        if a.get(k) is not None and b.get(k) is not None:
            m[k] = (a[k] + b[k]) / 2.0
    k = metric_key(wl)
    m["samples"] = [a, b]
    if a.get(k):
        m["drift_pct"] = (b[k] / a[k] - 1.0) * 100.0
    return m


def parse_meta(tdir, tag, clk_tck):
    """The three metarate phases of one sample (meta[TAG].{env,jsonl}): the
    median of its BENCH_META_REPEAT runs."""
    env = read_env(os.path.join(tdir, "meta%s.env" % tag))
    runs = []
    try:
        with open(os.path.join(tdir, "meta%s.jsonl" % tag)) as f:
            for line in f:
                line = line.strip()
                if line:
                    runs.append(json.loads(line))
    except (OSError, ValueError):
        # (Raw output of an older run.sh has no meta.2.jsonl: it appended
        # native's second sample to meta.jsonl, whose median covers both.)
        runs = []
    out = {}
    ticks = fnum(env.get("server_ticks"))
    total_ops = sum(r[p]["ops"] for r in runs for p in ("create", "stat", "unlink"))
    for phase in ("create", "stat", "unlink"):
        rates = [r[phase]["ops_per_s"] for r in runs if phase in r]
        wl = "meta-" + phase
        if env.get("status") != "ok" or not rates:
            out[wl] = {"status": env.get("status") or "failed",
                       "reason": env.get("reason", "no metarate output")}
            if out[wl]["status"] == "ok":
                out[wl]["status"] = "failed"
            continue
        out[wl] = {
            "status": "ok",
            "ops_per_s": statistics.median(rates),
            "runs_ops_per_s": rates,
            "files": runs[0]["procs"] * runs[0]["files_per_proc"],
        }
        if ticks is not None and total_ops:
            # Server CPU over all three phases, per operation.
            out[wl]["server_cpu_us_per_op_all_phases"] = ticks / clk_tck / total_ops * 1e6
    return out


def parse_sample(tdir, wl, tag, clk_tck):
    """One fio sample (WORKLOAD[TAG].{env,fio.json})."""
    env = read_env(os.path.join(tdir, wl + tag + ".env"))
    if env.get("status") != "ok":
        return {"status": env.get("status", "failed"), "reason": env.get("reason", "not run")}
    try:
        return parse_fio(wl, env, load_fio(os.path.join(tdir, wl + tag + ".fio.json")), clk_tck)
    except (OSError, ValueError, KeyError, IndexError) as e:
        return {"status": "failed", "reason": "cannot parse fio output: %s" % e}


def with_second(wl, first, second):
    """A round's figure: the first sample, or the mean with native's second."""
    if first.get("status") == "ok" and second.get("status") == "ok":
        return merge_samples(wl, first, second)
    return first


def aggregate(wl, rounds):
    """One workload's record over its rounds (each already has its ratio).
    A single round is the record itself; otherwise every number is the
    median over the usable rounds (ratio: of the per-round ratios), with
    the ratios' range and every round kept under "rounds"."""
    if len(rounds) == 1:
        return rounds[0]
    per_round = [dict(r, round=i + 1) for i, r in enumerate(rounds)]
    ok = [r for r in rounds if r.get("status") == "ok"]
    if not ok:
        m = {k: v for k, v in rounds[0].items() if k in ("status", "reason")}
        m["rounds"] = per_round
        return m
    m = {}
    for k, v in ok[0].items():
        if k in ("samples", "drift_pct", "ratio"):
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            if not isinstance(v, (list, dict)):
                m[k] = v
            continue
        vals = [r[k] for r in ok if isinstance(r.get(k), (int, float))]
        m[k] = max(vals) if k == "fio_errors" else statistics.median(vals)
    ratios = [r["ratio"] for r in ok if r.get("ratio") is not None]
    if ratios:
        m["ratio"] = statistics.median(ratios)
        m["ratio_min"], m["ratio_max"] = min(ratios), max(ratios)
    drifts = [r["drift_pct"] for r in ok if r.get("drift_pct") is not None]
    if drifts:
        # Native's noise figure: the largest drift of any round.
        m["drift_pct"] = max(drifts, key=abs)
    m["rounds_ok"] = len(ok)
    m["rounds"] = per_round
    return m


def collect(raw):
    run = read_env(os.path.join(raw, "run.env"))
    clk_tck = fnum(run.get("clk_tck"), 100.0)
    repeat = max(1, int(fnum(run.get("repeat"), 1)))
    selected = run.get("targets", "").split()
    wsel = run.get("workloads", "").split()
    targets = {}
    rounds = {}     # target -> workload -> [per-round record]
    for t in selected:
        tdir = os.path.join(raw, t)
        tenv = read_env(os.path.join(tdir, "target.env"))
        info = {
            "status": tenv.get("status", "failed"),
            "options": tenv.get("options", ""),
        }
        for k in ("reason", "datapath", "mount_type", "server_exit", "problem", "pid"):
            if k in tenv:
                info[k] = tenv[k]
        wls = {}
        if info["status"] == "ok":
            for n in range(1, repeat + 1):
                tag = round_tag(n)
                for wl in DATA_WORKLOADS:
                    if wl not in wsel:
                        continue
                    # Native's second sample, taken after the zcfs targets.
                    r = with_second(wl, parse_sample(tdir, wl, tag, clk_tck),
                                    parse_sample(tdir, wl, tag + ".2", clk_tck))
                    wls.setdefault(wl, []).append(r)
                if "meta" in wsel:
                    first = parse_meta(tdir, tag, clk_tck)
                    second = parse_meta(tdir, tag + ".2", clk_tck)
                    for wl, r in first.items():
                        wls.setdefault(wl, []).append(with_second(wl, r, second[wl]))
        rounds[t] = wls
        info["workloads"] = {}
        targets[t] = info

    # Each round's ratio is taken against the native of the same round.
    native = rounds.get("native", {})
    for t, wls in rounds.items():
        for wl, rs in wls.items():
            k = metric_key(wl)
            for i, r in enumerate(rs):
                n = native.get(wl, [])[i] if i < len(native.get(wl, [])) else {}
                if r.get("status") == "ok" and n.get("status") == "ok" and n.get(k):
                    r["ratio"] = r[k] / n[k]
            targets[t]["workloads"][wl] = aggregate(wl, rs)
    for t, peer in PEER_OF.items():
        if t in rounds and peer in rounds:
            for wl, rs in rounds[t].items():
                vp = vs_peer(wl, rs, rounds[peer].get(wl, []))
                if vp:
                    vp["peer"] = peer
                    targets[t]["workloads"][wl]["vs_peer"] = vp
    return run, targets


def vs_peer(wl, zrounds, prounds):
    """zcfs figure / peer figure of the same round, over the rounds both
    have: median, range and the peer's name; None when no round has both."""
    k = metric_key(wl)
    q = []
    for z, p in zip(zrounds, prounds):
        if z.get("status") == "ok" and p.get("status") == "ok" and z.get(k) and p.get(k):
            q.append(z[k] / p[k])
    if not q:
        return None
    vp = {"ratio": statistics.median(q), "rounds": q}
    if len(q) > 1:
        vp["ratio_min"], vp["ratio_max"] = min(q), max(q)
    return vp


def git_rev(root):
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")

    def git(*args):
        try:
            p = subprocess.run(["git", "-C", root] + list(args), capture_output=True,
                               text=True, env=env, timeout=20)
            return p.stdout.strip() if p.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            return None
    rev = git("rev-parse", "--short=12", "HEAD")
    if rev is None:
        return "no commits"
    if git("status", "--porcelain", "--untracked-files=no"):
        rev += "-dirty"
    return rev


def machine_info(run):
    model = "unknown"
    mem = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = round(int(line.split()[1]) / 1048576.0, 1)
    except OSError:
        pass
    return {
        "kernel": platform.release(),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": model,
        "mem_gib": mem,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_rev": git_rev(run.get("root", ".")),
        "fio": run.get("fio_version"),
        "zcfs_serve": run.get("zcfs_version"),
        "fuse_enable_uring": run.get("enable_uring"),
    }


def evaluate_goals(goals_path, targets):
    try:
        with open(goals_path) as f:
            goals = json.load(f).get("goals", [])
    except (OSError, ValueError) as e:
        print("report: cannot read goals %s: %s" % (goals_path, e), file=sys.stderr)
        return []
    out = []
    for g in goals:
        t, wl, want = g["target"], g["workload"], g["min_ratio"]
        res = dict(g)
        info = targets.get(t)
        r = (info or {}).get("workloads", {}).get(wl, {})
        if g.get("vs_peer"):
            # zcfs / peer of the same round, not zcfs / native.
            peer = targets.get(g["vs_peer"])
            if info is not None and peer is not None and peer["status"] != "ok" and info["status"] == "ok":
                res["result"] = "not available (peer: %s)" % peer.get("reason", peer["status"])
                out.append(res)
                continue
            r = {"status": r.get("status"), **r["vs_peer"]} if r.get("vs_peer") else {
                "status": r.get("status") if r.get("status") == "failed" else "not measured"}
        if info is None:
            res["result"] = "not measured (target not selected)"
        elif info["status"] != "ok":
            res["result"] = "not available" if info["status"] == "unavailable" else "failed"
        elif "ratio" not in r:
            res["result"] = "not measured" if r.get("status") != "failed" else "failed"
        else:
            res["ratio"] = r["ratio"]
            if "ratio_min" in r:
                res["ratio_min"], res["ratio_max"] = r["ratio_min"], r["ratio_max"]
            res["result"] = "met" if r["ratio"] >= want else "missed"
        out.append(res)
    return out


# ------------------------------------------------------------------ scale
# Goals of the scale section (many volumes through one zcfsd).
SCALE_PUBLISH_P99_MS = 100.0
SCALE_IDLE_RSS_MIB = 4.0    # per idle volume, on top of its pinned bytes


def collect_scale(raw):
    """bench/scale.sh output (raw/scale/scale.env), or None if not run."""
    env = read_env(os.path.join(raw, "scale", "scale.env"))
    if not env:
        return None
    sc = {"status": env.get("status", "failed")}
    for k, v in env.items():
        if k != "status":
            n = fnum(v)
            sc[k] = v if n is None else n
    if sc["status"] == "ok":
        p99 = sc.get("publish_mount_p99_us")
        if p99 is not None:
            sc["goal_publish_p99"] = "met" if p99 / 1000.0 < SCALE_PUBLISH_P99_MS else "missed"
        rss, pinned = sc.get("server_rss_kib_per_volume"), sc.get("pinned_bytes_per_volume", 0)
        if rss is not None:
            sc["goal_idle_rss"] = ("met" if rss * 1024 <= SCALE_IDLE_RSS_MIB * 1048576 + (pinned or 0)
                                   else "missed")
        for rw in ("read", "write"):
            a, b = sc.get("single_%s_mb_s" % rw), sc.get("all_%s_mb_s" % rw)
            if a and b is not None:
                sc["all_vs_single_%s" % rw] = b / a
    return sc


def scale_md(sc):
    L = ["## Scale (bench/scale.sh)", ""]
    if sc is None:
        return []
    if sc.get("status") != "ok":
        L += ["Failed: %s" % sc.get("reason", "no output"), ""]
        return L

    def ms(k):
        v = sc.get(k)
        return "—" if v is None else "%.1f ms" % (v / 1000.0)

    def num(k, fmt="%.0f"):
        v = sc.get(k)
        return "—" if v is None else fmt % v
    L.append("%d volumes of 4 tenants through one zcfsd, `%s`, published one at a time; fio: "
             "64 KiB direct sequential, %ss per run, one job per volume." % (
                 int(sc.get("volumes", 0)), sc.get("options", ""), num("runtime")))
    L.append("")
    L.append("| figure | measured | goal | result |")
    L.append("|---|---|---|---|")
    L.append("| publish → target mounted, p50 / p99 | %s / %s | p99 < %.0f ms | %s |" % (
        ms("publish_mount_p50_us"), ms("publish_mount_p99_us"), SCALE_PUBLISH_P99_MS,
        sc.get("goal_publish_p99", "—")))
    L.append("| publish → zcfsd's answer, p50 / p99 | %s / %s | | includes zcfsd's 200 ms wait "
             "for a server that dies at once |" % (ms("publish_answer_p50_us"), ms("publish_answer_p99_us")))
    L.append("| unpublish, p50 / p99 | %s / %s | | |" % (ms("unpublish_p50_us"), ms("unpublish_p99_us")))
    L.append("| server RSS per idle volume (max) | %s KiB (%s KiB) | ≤ %.0f MiB + pinned | %s |" % (
        num("server_rss_kib_per_volume"), num("server_rss_kib_max"), SCALE_IDLE_RSS_MIB,
        sc.get("goal_idle_rss", "—")))
    L.append("| server PSS per idle volume | %s KiB | | shared pages split |" % num("server_pss_kib_per_volume"))
    L.append("| pinned bytes per volume | %s | | charged to the tenant |" % num("pinned_bytes_per_volume"))
    L.append("| zcfsd RSS: start / %d published / end | %s / %s / %s KiB | | |" % (
        int(sc.get("volumes", 0)), num("zcfsd_rss_kib_start"), num("zcfsd_rss_kib_published"),
        num("zcfsd_rss_kib_end")))
    for rw in ("read", "write"):
        L.append("| %s MB/s: 1 volume / all at once | %s / %s | | all ÷ one = %s |" % (
            rw, num("single_%s_mb_s" % rw), num("all_%s_mb_s" % rw),
            num("all_vs_single_%s" % rw, "%.2f")))
    L.append("| server restarts during the run / mounts left | %s / %s | 0 / 0 | |" % (
        num("server_restarts"), num("mounts_left")))
    L.append("")
    return L


# ------------------------------------------------------------------ markdown
def fmt_abs(v, unit):
    if v is None:
        return "—"
    if unit == "MB/s":
        return "%.0f" % v
    if v >= 10000:
        return "%.0fk" % (v / 1000.0)
    return "%.0f" % v


def fmt_ratio(v):
    if v is None:
        return "—"
    return "%.2f" % v if v < 10 else "%.1f" % v


def fmt_ratio_range(r, fmt=fmt_ratio):
    """Ratio, with the range of the per-round ratios when there were rounds:
    '0.45 (0.41-0.52)'."""
    s = fmt(r.get("ratio"))
    if r.get("ratio_min") is not None:
        s += " (%s-%s)" % (fmt(r["ratio_min"]), fmt(r["ratio_max"]))
    return s


def cell(info, wl, fn):
    if info["status"] == "unavailable":
        return "n/a"
    if info["status"] != "ok":
        return "failed"
    r = info["workloads"].get(wl)
    if r is None:
        return "—"
    if r.get("status") != "ok":
        return r.get("status", "failed")
    return fn(r)


def pct_change(new, old):
    if new is None or old in (None, 0):
        return None
    return (new / old - 1.0) * 100.0


def vs_previous(wl, targets, prev):
    if not prev:
        return "no previous run"
    pt = prev.get("targets", {})
    parts = []
    for t, info in targets.items():
        r = info.get("workloads", {}).get(wl, {})
        p = pt.get(t, {}).get("workloads", {}).get(wl, {})
        if t == "native":
            k = metric_key(wl)
            ch = pct_change(r.get(k), p.get(k))
        else:
            ch = pct_change(r.get("ratio"), p.get("ratio"))
        if ch is not None:
            parts.append("%s %+.0f%%" % (t, ch))
    return ", ".join(parts) if parts else "—"


def write_md(path, run, machine, targets, goals, prev, png_ok, scale=None):
    tnames = list(targets)
    repeat = max(1, int(fnum(run.get("repeat"), 1)))
    rows = [w for w in WORKLOADS if any(w in targets[t]["workloads"] for t in tnames)]
    L = []
    L.append("# zcfs benchmark: latest run")
    L.append("")
    if run.get("label"):
        L.append("**%s**" % run["label"])
        L.append("")
    L.append("%s · Linux %s · %s CPUs (%s) · %s GiB · git %s · %s · zcfs-serve: %s" % (
        machine["date"], machine["kernel"], machine["nproc"], machine["cpu_model"],
        machine["mem_gib"], machine["git_rev"], machine["fio"], machine["zcfs_serve"]))
    L.append("")
    L.append("fio sync engine, %s jobs × %s files, %ss measured after %ss ramp per job; "
             "metadata: %s processes × %s files, median of %s runs. %s. zcfs cache option: %s. "
             "Shared, noisy machine: compare ratios, not absolute figures." % (
                 run.get("jobs"), run.get("size"), run.get("runtime"), run.get("ramp"),
                 run.get("jobs"), run.get("meta_files"), run.get("meta_repeat"),
                 "1 round per workload" if repeat == 1 else
                 "%d rounds per workload, figures are medians over the rounds" % repeat,
                 run.get("cache")))
    L.append("")
    L.append("## Targets")
    L.append("")
    L.append("| target | status | options | data path / reason |")
    L.append("|---|---|---|---|")
    for t in tnames:
        i = targets[t]
        status = {"ok": "ran", "unavailable": "not available"}.get(i["status"], i["status"])
        detail = i.get("reason") or i.get("datapath") or ""
        # The paths of SOURCE and MOUNTPOINT are noise here.
        detail = " ".join(w for w in detail.split()
                          if not w.startswith(("source=", "mountpoint=")))
        if t == "native":  # its options name the backing: tmpfs, xfs or ext4
            detail = i.get("options", "").strip() or "tmpfs"
        L.append("| %s | %s | `%s` | %s |" % (t, status, i.get("options", "").strip(),
                                              detail.replace("|", "/")))
    L.append("")

    L.append("## Ratios to native")
    L.append("")
    if repeat == 1:
        L.append("Native column: absolute figure. Other columns: target ÷ native (1.00 = as fast as "
                 "native). 'vs previous': change of each ratio (native: of its absolute figure) "
                 "against bench/results/previous.json.")
    else:
        L.append("Native column: absolute figure (median of the %d rounds). Other columns: median "
                 "of the %d per-round ratios target ÷ native of the same round (1.00 = as fast as "
                 "native), lowest-highest in brackets. 'vs previous': change of each ratio (native: "
                 "of its absolute figure) against bench/results/previous.json." % (repeat, repeat))
    L.append("")
    hdr = ["workload", "unit"] + tnames + ["vs previous"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "---|" * len(hdr))
    for wl in rows:
        unit = unit_of(wl)
        cells = [wl, unit]
        for t in tnames:
            if t == "native":
                cells.append(cell(targets[t], wl, lambda r: fmt_abs(r.get(metric_key(wl)), unit)))
            else:
                cells.append(cell(targets[t], wl, fmt_ratio_range))
        cells.append(vs_previous(wl, targets, prev))
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    nat = targets.get("native", {}).get("workloads", {})
    drifts = [(wl, nat[wl]["drift_pct"]) for wl in rows if nat.get(wl, {}).get("drift_pct") is not None]
    if drifts:
        worst = max(drifts, key=lambda d: abs(d[1]))
        if repeat == 1:
            L.append("Noise: native is measured before and after the zcfs targets of each workload and "
                     "averaged; between the two it moved by %s (largest: %s %+.0f%%). Ratios closer "
                     "than that are within noise." % (
                         ", ".join("%s %+.0f%%" % d for d in drifts), worst[0], worst[1]))
        else:
            L.append("Noise: native is measured before and after the zcfs targets of each workload in "
                     "each round and averaged; the largest move between the two in any of the %d "
                     "rounds: %s (largest: %s %+.0f%%). The ranges in brackets show how far a single "
                     "round's ratio can be off." % (
                         repeat, ", ".join("%s %+.0f%%" % d for d in drifts), worst[0], worst[1]))
        L.append("")
    if png_ok:
        L.append("![ratios to native](latest.png)")
        L.append("")

    pairs = [(t, PEER_OF[t]) for t in tnames if t in PEER_OF and PEER_OF[t] in targets]
    if pairs:
        L.append("## zcfs vs the peer (libfuse passthrough_hp)")
        L.append("")
        L.append("Each column: a zcfs data path's figure ÷ the peer's on the same kind of path in the "
                 "same round (> 1.00: zcfs ahead)%s. The peer targets run right after their zcfs "
                 "counterpart, in the same rounds on the same files." % (
                     "" if repeat == 1 else "; median of the per-round quotients, lowest-highest "
                     "in brackets"))
        L.append("")
        hdr = ["workload"] + ["%s vs %s" % p for p in pairs]
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|" + "---|" * len(hdr))
        for wl in rows:
            cells = [wl]
            for t, peer in pairs:
                pi = targets[peer]
                if pi["status"] != "ok":
                    cells.append("n/a" if pi["status"] == "unavailable" else "failed")
                    continue
                cells.append(cell(targets[t], wl, lambda r: fmt_ratio_range(r["vs_peer"])
                                  if r.get("vs_peer") else "—"))
            L.append("| " + " | ".join(cells) + " |")
        L.append("")

    L.extend(zero_copy_md(targets, rows))
    L.append("## Reference goals (bench/goals.json)")
    L.append("")
    if goals:
        met = sum(1 for g in goals if g["result"] == "met")
        missed = sum(1 for g in goals if g["result"] == "missed")
        L.append("%d met, %d missed, %d not measured/available." % (met, missed, len(goals) - met - missed))
        L.append("")
        L.append("Goals 'goal ≥ X × peer' compare with the peer's figure of the same round, the "
                 "others with native's.")
        L.append("")
        L.append("| target | workload | goal ≥ | measured | result | source |")
        L.append("|---|---|---|---|---|---|")
        for g in goals:
            res = g["result"]
            mark = {"met": "**met**", "missed": "**MISSED**"}.get(res, res)
            L.append("| %s | %s | %s | %s | %s | %s |" % (
                g["target"], g["workload"], "%.2f" % g["min_ratio"] +
                (" × %s" % g["vs_peer"] if g.get("vs_peer") else ""),
                "—" if g.get("ratio") is None else fmt_ratio_range(g, lambda v: "%.3f" % v), mark,
                g.get("source", "") + (" (cache=%s)" % g["cache"] if g.get("cache") else "")))
    else:
        L.append("No goals file.")
    L.append("")

    L.append("## Absolute figures")
    L.append("")
    L.append("| workload | unit | " + " | ".join(tnames) + " |")
    L.append("|" + "---|" * (len(tnames) + 2))
    for wl in rows:
        unit = unit_of(wl)
        L.append("| %s | %s | %s |" % (wl, unit, " | ".join(
            cell(targets[t], wl, lambda r: fmt_abs(r.get(metric_key(wl)), unit)) for t in tnames)))
    L.append("")

    drows = [w for w in rows if w in DATA_WORKLOADS]

    def data_table(title, fn):
        """A section: one row per data workload, one column per target."""
        L.append("## " + title)
        L.append("")
        L.append("| workload | " + " | ".join(tnames) + " |")
        L.append("|" + "---|" * (len(tnames) + 1))
        for wl in drows:
            L.append("| %s | %s |" % (wl, " | ".join(cell(targets[t], wl, fn) for t in tnames)))
        L.append("")

    def lat(r):
        a, b = r.get("clat_p50_us"), r.get("clat_p99_us")
        return "%s / %s" % ("—" if a is None else "%.1f" % a, "—" if b is None else "%.1f" % b)

    def cpu(r):
        tot, srv = r.get("cpu_s_per_gib"), r.get("server_cpu_s_per_gib")
        if tot is None:
            return "—"
        return "%.2f" % tot + ("" if srv is None else " (%.2f)" % srv)
    if drows:
        data_table("Completion latency, p50 / p99 (µs)", lat)
        data_table("CPU seconds per GiB moved (fio + zcfs-serve; server share in brackets)", cpu)

    problems = []
    for t in tnames:
        i = targets[t]
        if i["status"] == "failed":
            problems.append("%s: %s" % (t, i.get("reason", "failed")))
        if i.get("problem"):
            problems.append("%s: %s" % (t, i["problem"]))
        skipped = [wl for wl, r in i["workloads"].items() if r.get("status") == "skipped"]
        if skipped:
            problems.append("%s: skipped %s (the server was gone or the layout failed)" % (
                t, ", ".join(skipped)))
        for wl, r in i["workloads"].items():
            if r.get("status") == "skipped":
                continue
            if r.get("status") != "ok":
                problems.append("%s %s: %s" % (t, wl, r.get("reason", "failed")))
                continue
            if r.get("fio_errors"):
                problems.append("%s %s: fio reported error %s" % (t, wl, r["fio_errors"]))
            bad = [x for x in r.get("rounds", []) if x.get("status") != "ok"]
            if bad:
                problems.append("%s %s: %d of %d rounds not usable, figures from the others (%s)" % (
                    t, wl, len(bad), len(r["rounds"]), "; ".join(
                        "round %d: %s" % (x["round"], x.get("reason", x.get("status", "failed")))
                        for x in bad)))
    # Kernel passthrough leaves the server idle during reads and writes; if
    # it burns CPU per GiB like /dev/fuse does, the option did not take.
    pt = targets.get("passthrough")
    if pt and pt["status"] == "ok":
        for wl in DATA_WORKLOADS:
            r = pt["workloads"].get(wl, {})
            srv = r.get("server_cpu_s_per_gib")
            if srv is None or srv <= PASSTHROUGH_IDLE_S_PER_GIB:
                continue
            if "read" in wl:
                why = "passthrough looks inactive for reads"
            else:
                why = ("the server still gets a request per write() (e.g. GETXATTR "
                       "security.capability from the kernel's file_remove_privs when "
                       "FUSE_HANDLE_KILLPRIV_V2 is not negotiated)")
            problems.append("passthrough %s: zcfs-serve used %.2f CPU s/GiB although kernel "
                            "passthrough should leave it idle (< %.2f): %s" % (
                                wl, srv, PASSTHROUGH_IDLE_S_PER_GIB, why))
    L.extend(scale_md(scale))
    if scale and scale.get("status") == "ok" and scale.get("mounts_left"):
        problems.append("scale: %d mounts left after unpublishing" % scale["mounts_left"])
    L.append("## Problems")
    L.append("")
    if problems:
        L.extend("- " + p.replace("\n", " ") for p in problems)
    else:
        L.append("None.")
    L.append("")
    L.append("Raw fio/metarate output and server logs: bench/results/tmp/raw/ (not committed). "
             "Column meanings: bench/README.md.")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def round_figures(info, wl):
    """Per-round figures of one target and workload (a single round: [it])."""
    r = info.get("workloads", {}).get(wl)
    if not r or info.get("status") != "ok":
        return []
    rounds = r.get("rounds") or [r]
    return [x.get(metric_key(wl)) if x.get("status") == "ok" else None for x in rounds]


def zero_copy_md(targets, rows):
    """Buffer-pool kernels (bench/guest.sh): per round, zero-copy ÷ stock
    io_uring and the auto choice ÷ the better of pools and zero-copy,
    both taken in the same round (native cancels out)."""
    need = ("uring-stock", "bufpool", "zerocopy", "auto")
    if not all(t in targets for t in need):
        return []
    L = ["## Zero-copy and the auto choice, per round", "",
         "Quotients of two targets' figures in the same round (round 1, 2, ...). Goals: "
         "zerocopy ÷ uring-stock > 1 on 1 MiB direct reads and writes in every round; "
         "auto ÷ max(bufpool, zerocopy) ≥ 0.95 on every row.", "",
         "| workload | zerocopy ÷ uring-stock | bufpool ÷ uring-stock | auto ÷ max(bufpool, zerocopy) | goals |",
         "|---|---|---|---|---|"]

    def q(a, b):
        return a / b if a and b else None

    def fmt(vals):
        return ", ".join("—" if v is None else "%.2f" % v for v in vals) or "—"
    for wl in rows:
        if wl not in DATA_WORKLOADS:
            continue
        st, bp, zc, au = (round_figures(targets[t], wl) for t in need)
        n = min(len(st), len(bp), len(zc), len(au))
        zq = [q(zc[i], st[i]) for i in range(n)]
        bq = [q(bp[i], st[i]) for i in range(n)]
        aq = [q(au[i], max(bp[i] or 0, zc[i] or 0)) for i in range(n)]
        def verdict(vals, ok):
            if not vals or all(v is None for v in vals):
                return "not measured"
            return "met" if all(v is not None and ok(v) for v in vals) else "MISSED"
        res = []
        if wl.startswith("seq") and wl.endswith("-direct"):
            res.append("zc ahead: " + verdict(zq, lambda v: v > 1))
        res.append("auto: " + verdict(aq, lambda v: v >= 0.95))
        L.append("| %s | %s | %s | %s | %s |" % (wl, fmt(zq), fmt(bq), fmt(aq), "; ".join(res)))
    L.append("")
    return L


# ------------------------------------------------------------------ plot
def write_png(out_dir, targets, tmpdir):
    if not shutil.which("gnuplot"):
        return False
    tnames = [t for t in targets if t != "native" and targets[t]["status"] == "ok"]
    if not tnames:
        tnames = [t for t in targets if targets[t]["status"] == "ok"]
    if not tnames:
        return False
    rows = [w for w in WORKLOADS if any(targets[t]["workloads"].get(w, {}).get("ratio") is not None
                                        for t in tnames)]
    if not rows:
        return False
    dat = os.path.join(tmpdir, "latest.dat")
    with open(dat, "w") as f:
        f.write("workload " + " ".join(tnames) + "\n")
        for wl in rows:
            vals = []
            for t in tnames:
                v = targets[t]["workloads"].get(wl, {}).get("ratio")
                vals.append("-" if v is None else "%.4f" % v)
            f.write(wl + " " + " ".join(vals) + "\n")
    ymax = max([1.0] + [targets[t]["workloads"].get(w, {}).get("ratio") or 0 for t in tnames for w in rows])
    png = os.path.join(out_dir, "latest.png")
    gp = os.path.join(tmpdir, "latest.gp")
    with open(gp, "w") as f:
        f.write("""set terminal pngcairo size 1400,650 font 'sans,10'
set output '%s'
set title 'zcfs: throughput / IOPS / ops per second as a ratio to native (same run)'
set datafile missing '-'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right
set grid ytics
set yrange [0:%f]
set ylabel 'ratio to native'
set xtics rotate by 30 right nomirror
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 linecolor rgb '#555555'
plot for [i=2:%d] '%s' using i:xtic(1) title columnheader(i)
""" % (png, ymax * 1.12, len(tnames) + 1, dat))
    p = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if p.returncode != 0:
        print("report: gnuplot failed: %s" % p.stderr.strip(), file=sys.stderr)
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--goals")
    ap.add_argument("--previous")
    a = ap.parse_args()

    run, targets = collect(a.raw)
    scale = collect_scale(a.raw)
    machine = machine_info(run)
    goals = evaluate_goals(a.goals, targets) if a.goals else []
    prev = None
    if a.previous and os.path.exists(a.previous):
        try:
            with open(a.previous) as f:
                prev = json.load(f)
        except (OSError, ValueError) as e:
            print("report: ignoring unreadable %s: %s" % (a.previous, e), file=sys.stderr)

    os.makedirs(a.out, exist_ok=True)
    doc = {
        "schema": 1,
        "machine": machine,
        "config": {k: run.get(k) for k in ("started", "finished", "runtime", "ramp", "size", "jobs",
                                           "meta_files", "meta_repeat", "repeat", "cache",
                                           "targets", "workloads")},
        "units": {w: unit_of(w) for w in WORKLOADS},
        "targets": targets,
        "goals": goals,
        "scale": scale,
        "previous": {"date": prev.get("machine", {}).get("date"),
                     "git_rev": prev.get("machine", {}).get("git_rev")} if prev else None,
    }
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    png_ok = write_png(a.out, targets, a.raw)
    if not png_ok and os.path.exists(os.path.join(a.out, "latest.png")):
        os.unlink(os.path.join(a.out, "latest.png"))
    write_md(os.path.join(a.out, "latest.md"), run, machine, targets, goals, prev, png_ok,
             scale)
    with open(os.path.join(a.out, "latest.md")) as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
