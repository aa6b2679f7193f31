#!/usr/bin/python3
"""NodePublishVolume latency through the gRPC front of `zcfs-csi serve`:
N persistent volumes published one after another, each timed from the
call to the target serving (the call returned and a statvfs through the
new mount answers), then unpublished and deleted. Prints key=value lines:
csi_publish_p50_ms, csi_publish_p99_ms, csi_publish_max_ms, csi_publish_n.

usage: csi_publish.py PROTO_DIR PROTO_INC ENDPOINT TARGET_DIR TENANT TRANSPORT N"""
import os, sys, tempfile, time

proto_dir, proto_inc, ep, tdir, tenant, transport, n = sys.argv[1:8]
n = int(n)
gen = tempfile.mkdtemp(prefix="zcfs-csi-py.")
from grpc_tools import protoc  # noqa: E402
assert protoc.main(["protoc", "-I" + proto_dir, "-I" + proto_inc, "--python_out=" + gen,
                    "--grpc_python_out=" + gen, "csi.proto"]) == 0
sys.path.insert(0, gen)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

ch = grpc.insecure_channel(ep)
node, ctl = cg.NodeStub(ch), cg.ControllerStub(ch)
cap = c.VolumeCapability(mount=c.VolumeCapability.MountVolume(volume_mount_group="2000"),
                         access_mode=c.VolumeCapability.AccessMode(mode=c.VolumeCapability.AccessMode.SINGLE_NODE_MULTI_WRITER))
node.NodeGetInfo(c.NodeGetInfoRequest(), timeout=10)   # connected before the clock starts
lat, tgts = [], []
for i in range(n):
    tgt = os.path.join(tdir, "pods", "bench-%d" % i, "volumes", "kubernetes.io~csi", "pv", "mount")
    os.makedirs(os.path.dirname(tgt), exist_ok=True)
    req = c.NodePublishVolumeRequest(volume_id="pv-bench-%d" % i, target_path=tgt, volume_capability=cap,
                                     volume_context={"tenant": tenant, "transport": transport})
    t0 = time.monotonic()
    node.NodePublishVolume(req, timeout=120)
    os.statvfs(tgt)             # the server answers through the mount
    lat.append((time.monotonic() - t0) * 1000)
    tgts.append(tgt)
for i, tgt in enumerate(tgts):
    node.NodeUnpublishVolume(c.NodeUnpublishVolumeRequest(volume_id="pv-bench-%d" % i, target_path=tgt), timeout=120)
    ctl.DeleteVolume(c.DeleteVolumeRequest(volume_id="pv-bench-%d" % i), timeout=120)
s = sorted(lat)
def pct(p):
    # nearest rank
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]
print("csi_publish_n=%d" % n)
print("csi_publish_p50_ms=%.1f" % pct(50))
print("csi_publish_p99_ms=%.1f" % pct(99))
print("csi_publish_max_ms=%.1f" % s[-1])
print("csi_publish_all_ms=%s" % ",".join("%.0f" % x for x in lat))
