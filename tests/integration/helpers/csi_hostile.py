#!/usr/bin/python3
"""Hostile input on the gRPC socket of `zcfs-csi serve`: garbage bytes,
an HTTP/1.1 request, oversized and malformed protobuf, strings with NUL
bytes or invalid UTF-8, unknown methods, clients that go away mid-call,
200 concurrent connections. Each gets the right gRPC status or a closed
connection, and the plugin keeps serving (checked after each).

usage: csi_hostile.py PROTO_DIR PROTO_INC SOCKET_PATH TARGET_DIR TENANT
Prints "ok - ..." / "not ok - ..." and "N passed, N failed"."""
import os, socket, sys, threading, time

proto_dir, proto_inc, path, tdir, tenant = sys.argv[1:6]
from csi_pyclient import Checks, compile_protos  # noqa: E402
if not compile_protos(proto_dir, proto_inc, "csi.proto"):
    print("not ok - compiling the protos with grpc_tools"); print("0 passed, 1 failed"); sys.exit(1)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

ep = "unix://" + path
check = Checks()

def status(method, payload, timeout=20, ch=None):
    ch = ch or grpc.insecure_channel(ep)
    call = ch.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        call(payload, timeout=timeout); return "OK"
    except grpc.RpcError as e:
        return e.code().name

def serving():
    return status("/csi.v1.Identity/GetPluginInfo", b"") == "OK"

def raw(data, read=True):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    s.sendall(data)
    got = b""
    if read:
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += b
        except socket.timeout:
            got = None
    s.close()
    return got

check("serving before", serving())
# transport-level garbage: the server closes the connection
got = raw(os.urandom(4096))
check("random bytes: connection closed", got is not None, "no close within 10 s")
check("still serving after random bytes", serving())
got = raw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
check("HTTP/1.1 request: connection closed", got is not None)
check("still serving after HTTP/1.1", serving())
got = raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x10\x01\x04\x00\x00\x00\x01" + os.urandom(16))
check("HTTP/2 preface with a garbage HEADERS frame: connection closed", got is not None)
check("still serving after bad HPACK", serving())

# protobuf-level: statuses
N = c.NodeServiceCapability.RPC
pub = "/csi.v1.Node/NodePublishVolume"
check("malformed protobuf -> INVALID_ARGUMENT", status(pub, b"\x0a\xff\xff\xff\xff\x0f") == "INVALID_ARGUMENT")
check("truncated field -> INVALID_ARGUMENT", status(pub, b"\x0a\x10abc") == "INVALID_ARGUMENT")
check("wrong wire type for a message field -> INVALID_ARGUMENT", status(pub, b"\x2a\x05") in ("INVALID_ARGUMENT",))
tgt = os.path.join(tdir, "hostile")
def pubreq(vid, t):
    # ephemeral: the last unpublish deletes it, zcfsd ends as it began
    return c.NodePublishVolumeRequest(volume_id=vid, target_path=t,
        volume_context={"tenant": tenant, "csi.storage.k8s.io/ephemeral": "true"},
        volume_capability=c.VolumeCapability(mount=c.VolumeCapability.MountVolume(),
        access_mode=c.VolumeCapability.AccessMode(mode=1))).SerializeToString()
check("a NUL byte in target_path -> INVALID_ARGUMENT", status(pub, pubreq("hv1", tgt + "\0/../../etc")) == "INVALID_ARGUMENT")
# field 1 (volume_id) with invalid UTF-8, built by hand: protobuf refuses to
check("invalid UTF-8 in volume_id -> INVALID_ARGUMENT", status(pub, b"\x0a\x02\xff\xfe" + pubreq("", tgt)) == "INVALID_ARGUMENT")
big = c.NodePublishVolumeRequest(volume_id="hv1", target_path=tgt, secrets={"k": "x" * (300 * 1024)}).SerializeToString()
check("a %d KiB message (cap 256 KiB) -> RESOURCE_EXHAUSTED" % (len(big) // 1024), status(pub, big) == "RESOURCE_EXHAUSTED")
# many empty map entries: small on the wire, large unpacked
bomb = b"\x3a\x00" * (120 * 1024)
check("240 KiB of empty map entries -> an answer, not a crash", status(pub, bomb) in ("INVALID_ARGUMENT",))
check("unknown method -> UNIMPLEMENTED", status("/csi.v1.Node/NodeBogus", b"") == "UNIMPLEMENTED")
check("unknown service -> UNIMPLEMENTED", status("/x.y/Z", b"") == "UNIMPLEMENTED")
check("registration method on the CSI socket -> UNIMPLEMENTED", status("/pluginregistration.Registration/GetInfo", b"") == "UNIMPLEMENTED")
check("unknown fields are ignored (proto3): GetPluginInfo with field 99", status("/csi.v1.Identity/GetPluginInfo", b"\x98\x06\x01") == "OK")
check("still serving after bad messages", serving())

# clients that go away mid-call: a publish whose deadline passes, a socket closed after the headers
os.makedirs(tdir, exist_ok=True)
t1 = os.path.join(tdir, "gone")
# 1 ms: a publish forks, execs and mounts a server; since the ready byte
# no longer waits for the broker hello it can finish within 10 ms (CI)
r = status(pub, pubreq("csi-eph-gone", t1), timeout=0.001)
check("publish with a 1 ms deadline -> DEADLINE_EXCEEDED at the client", r == "DEADLINE_EXCEEDED", r)
time.sleep(2)
# the call ran to its end: kubelet's retry finds it done (or ABORTED while it runs)
for _ in range(30):
    r2 = status(pub, pubreq("csi-eph-gone", t1))
    if r2 != "ABORTED":
        break
    time.sleep(0.2)
check("the retried publish succeeds", r2 == "OK", r2)
unp = c.NodeUnpublishVolumeRequest(volume_id="csi-eph-gone", target_path=t1).SerializeToString()
check("and its unpublish", status("/csi.v1.Node/NodeUnpublishVolume", unp) == "OK")
ch = grpc.insecure_channel(ep)
fut = ch.unary_unary("/csi.v1.Identity/Probe", request_serializer=None, response_deserializer=None).future(b"", timeout=30)
fut.cancel(); ch.close()
check("still serving after a cancelled call", serving())

# 200 concurrent connections, each with a call in flight
res = []
def conn(i):
    chn = grpc.insecure_channel(ep, options=[("grpc.use_local_subchannel_pool", 1)])
    res.append(status("/csi.v1.Node/NodeGetInfo", b"", timeout=60, ch=chn))
    chn.close()
th = [threading.Thread(target=conn, args=(i,)) for i in range(200)]
[t.start() for t in th]; [t.join() for t in th]
okc = sum(1 for x in res if x == "OK")
check("200 concurrent connections: %d OK, the rest RESOURCE_EXHAUSTED" % okc,
      len(res) == 200 and all(x in ("OK", "RESOURCE_EXHAUSTED") for x in res) and okc >= 100, str(set(res)))
socks = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(200)]
for s in socks:
    s.connect(path)
check("200 idle raw connections held open: still serving", serving())
for s in socks:
    s.close()
check("still serving at the end", serving())
check.finish()
