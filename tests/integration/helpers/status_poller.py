#!/usr/bin/python3
"""status_poller.py SOCKET: zcfsd's answer time to `status`, in ms, one
line per call, a call every 50 ms over one connection (starting a process
per call takes 100+ ms on a loaded machine). A bad or missing answer is
printed on stderr and ends it (exit 1)."""
import json, socket, sys, time

s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rwb")
while True:
    t0 = time.monotonic()
    f.write(b'{"method": "status"}\n'); f.flush()
    line = f.readline()
    if not line or "result" not in json.loads(line):
        print("bad answer", line, file=sys.stderr); sys.exit(1)
    print(round((time.monotonic() - t0) * 1000))
    time.sleep(0.05)
