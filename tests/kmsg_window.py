#!/usr/bin/env python3
"""Kernel-log window of one integration test (tests/run-integration.sh).

  kmsg_window.py mark        print the sequence number of the newest record
  kmsg_window.py check SEQ   print every kernel report (WARNING, BUG, Oops,
                             hung task, lockup, RCU stall, KASAN/UBSAN) logged
                             after record SEQ, with its trace; exit 1 if any

Reads /dev/kmsg (every record carries a sequence number, so the window is
exact even when other processes log at the same time). Only the kernel's
own records count (facility 0): text a process writes to /dev/kmsg cannot
fake or hide a report. Records lost to a ring-buffer overrun (EPIPE) are
reported, not silently skipped. Exit 77 when /dev/kmsg cannot be read (not
root, no such device). ZCFS_KMSG_FILE=PATH reads records in /dev/kmsg's
format ("prio,seq,usec,flags;text", one a line) from PATH instead: the
self-test (tests/integration/kernel/t_kmsg_window.sh) feeds it known reports.
"""
import errno
import os
import re
import sys

# A report starts with one of these message lines (anchored: boot messages
# like "Speculative Return Stack Overflow: WARNING: ..." are not reports).
REPORT_START = re.compile(
    r"^(------------\[ cut here \]------------|WARNING:|BUG:|kernel BUG|Oops|"
    r"general protection fault|Unable to handle kernel|UBSAN:|KASAN:|KFENCE:|"
    r"INFO: task .* blocked (in I/O wait )?for more than|watchdog: BUG:|rcu: INFO: .*detected stall|"
    r"list_(add|del) corruption|refcount_t:)")
REPORT_END = re.compile(r"^---\[ end trace|^---\[ end Kernel panic")
MAX_REPORT_LINES = 80


def records():
    """(seq, usec, text) of every kernel record still in the ring buffer."""
    path = os.environ.get("ZCFS_KMSG_FILE")
    if path:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = parse(line)
                if r:
                    yield r
        return
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        print(f"kmsg_window: /dev/kmsg: {e.strerror}", file=sys.stderr)
        sys.exit(77)
    try:
        while True:
            try:
                raw = os.read(fd, 16384)
            except OSError as e:
                if e.errno == errno.EAGAIN:
                    return
                if e.errno == errno.EPIPE:  # overwritten before we read them
                    yield (None, 0, "kmsg_window: records lost to a ring-buffer overrun")
                    continue
                raise
            r = parse(raw.decode("utf-8", "replace"))
            if r:
                yield r
    finally:
        os.close(fd)


def parse(record):
    """(seq, usec, text) of a kernel record, None for anything else."""
    head, sep, body = record.partition(";")
    fields = head.split(",")
    if not sep or len(fields) < 3:
        return None
    try:
        prio, seq, usec = int(fields[0]), int(fields[1]), int(fields[2])
    except ValueError:
        return None
    if prio >> 3 != 0:  # facility: not the kernel's (user space wrote it)
        return None
    # continuation lines (" KEY=value") are dictionary metadata
    return (seq, usec, body.split("\n", 1)[0])


def mark():
    last = -1
    for seq, _, _ in records():
        if seq is not None:
            last = seq
    print(last)
    return 0


def check(since):
    window = [(s, u, t) for s, u, t in records() if s is None or s > since]
    reports, i = [], 0
    while i < len(window):
        seq, usec, text = window[i]
        if seq is not None and REPORT_START.search(text):
            lines, j = [], i
            while j < len(window) and len(lines) < MAX_REPORT_LINES:
                s, u, t = window[j]
                lines.append(f"[{u / 1e6:12.6f}] {t}")
                j += 1
                if REPORT_END.search(t):
                    break
                # a hung-task or one-line BUG report ends at the next report
                if j < len(window) and j > i + 1 and REPORT_START.search(window[j][2]) \
                        and not window[j][2].startswith("WARNING:"):
                    break
            reports.append(lines)
            i = j
        else:
            if seq is None:
                print(text)
            i += 1
    for lines in reports:
        print("\n".join(lines))
        print()
    print(f"kernel reports in this window: {len(reports)}")
    return 1 if reports else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "mark":
        return mark()
    if len(argv) == 3 and argv[1] == "check":
        return check(int(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
