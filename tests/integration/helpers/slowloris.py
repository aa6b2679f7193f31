#!/usr/bin/env python3
"""A hostile client of a unix-socket server (zcfsd's control socket, or
HTTP: the volume plugin) that tries to hold the server's connections.

    slowloris.py [--http] SOCKET MODE N SECONDS

MODE:
  silent   N connections that send nothing
  trickle  N connections that send a request one byte per second
  noread   N connections that push pipelined requests and never read
Every connection the server closes is opened again at once (an attacker
keeps trying). At the end one JSON line: the most connections open at
once, how many the server closed, the first distinct messages it sent on
closing (its "clear errors"), and connect failures.
"""
import errno
import json
import selectors
import socket
import sys
import time

ZCFSD_REQ = b'{"method": "status"}\n'
HTTP_REQ = (b"POST /VolumeDriver.List HTTP/1.1\r\nHost: plugin\r\n"
            b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")


class Attack:
    def __init__(self, path, mode, n, http):
        self.path, self.mode, self.n = path, mode, n
        self.req = HTTP_REQ if http else ZCFSD_REQ
        self.sel = selectors.DefaultSelector()
        self.conns = {}  # socket -> bytes of the request sent so far
        self.max_open = 0
        self.closed = 0
        self.connect_failed = 0
        self.messages = []

    def open_one(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(self.path)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EINPROGRESS):
                self.connect_failed += 1
                s.close()
                return
        if self.mode == "noread":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        ev = selectors.EVENT_WRITE if self.mode == "noread" else selectors.EVENT_READ
        self.sel.register(s, ev)
        self.conns[s] = 0
        self.max_open = max(self.max_open, len(self.conns))

    def lost(self, s, data=b""):
        if data:
            line = data.split(b"\n")[0].decode(errors="replace")[:200]
            if line and line not in self.messages and len(self.messages) < 4:
                self.messages.append(line)
        self.closed += 1
        self.sel.unregister(s)
        del self.conns[s]
        s.close()

    def on_read(self, s):
        try:
            data = s.recv(65536)
        except OSError:
            data = None
        if not data:
            self.lost(s)
            return
        # a last word before closing (ours wait for EOF next)
        line = data.split(b"\n")[0].decode(errors="replace")[:200]
        if line not in self.messages and len(self.messages) < 4:
            self.messages.append(line)

    def push(self, s):
        try:
            while True:
                s.send(self.req * 64)
        except BlockingIOError:
            return
        except OSError:
            self.lost(s)

    def trickle(self):
        for s in list(self.conns):
            off = self.conns[s] % len(self.req)
            try:
                s.send(self.req[off:off + 1])
                self.conns[s] += 1
            except BlockingIOError:
                pass
            except OSError:
                self.lost(s)

    def run(self, seconds):
        end = time.monotonic() + seconds
        next_byte = window = time.monotonic()
        budget = 20
        while time.monotonic() < end:
            # at most 200 new connections a second: hostile enough, without
            # turning the test into a CPU burner on a shared machine
            now = time.monotonic()
            if now - window >= 0.1:
                window, budget = now, 20
            while budget > 0 and len(self.conns) < self.n:
                before = self.connect_failed
                budget -= 1
                self.open_one()
                if self.connect_failed > before:
                    break
            for key, _ in self.sel.select(timeout=0.02):
                if key.fileobj not in self.conns:
                    continue
                if self.mode == "noread":
                    self.push(key.fileobj)
                else:
                    self.on_read(key.fileobj)
            if self.mode == "trickle" and time.monotonic() >= next_byte:
                self.trickle()
                next_byte += 1.0
        print(json.dumps({"mode": self.mode, "max_open": self.max_open, "open_at_end": len(self.conns),
                          "closed_by_server": self.closed, "connect_failed": self.connect_failed,
                          "messages": self.messages}))
        sys.stdout.flush()


def main():
    args = sys.argv[1:]
    http = False
    if args and args[0] == "--http":
        http = True
        args = args[1:]
    if len(args) != 4 or args[1] not in ("silent", "trickle", "noread"):
        sys.stderr.write(__doc__)
        return 2
    Attack(args[0], args[1], int(args[2]), http).run(float(args[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
