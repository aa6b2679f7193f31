#!/usr/bin/python3
"""16 kubelet-like NodePublishVolume calls at once with transport=auto
against `zcfs-csi serve`: every one must publish, and each volume must
name its data path and why (NodeGetVolumeStats' volume_condition, which
carries zcfsd's data_path_reason); then all are unpublished and deleted.

usage: csi_auto.py PROTO_DIR PROTO_INC ENDPOINT TARGET_DIR TENANT
Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed"."""
import os, sys, threading

proto_dir, proto_inc, endpoint, tdir, tenant = sys.argv[1:6]
from csi_pyclient import Checks, compile_protos  # noqa: E402
if not compile_protos(proto_dir, proto_inc, "csi.proto"):
    print("not ok - compiling the protos with grpc_tools"); print("0 passed, 1 failed"); sys.exit(1)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

check = Checks()
ch = grpc.insecure_channel(endpoint)
node, ctl = cg.NodeStub(ch), cg.ControllerStub(ch)
N = 16
cap = c.VolumeCapability(mount=c.VolumeCapability.MountVolume(),
                         access_mode=c.VolumeCapability.AccessMode(mode=c.VolumeCapability.AccessMode.SINGLE_NODE_WRITER))
res = [None] * N

def tgt(i):
    d = os.path.join(tdir, "pods", "auto-%d" % i, "volumes", "kubernetes.io~csi", "pv-auto-%d" % i)
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "mount")

def one(i):
    req = c.NodePublishVolumeRequest(volume_id="pv-auto-%d" % i, target_path=tgt(i), volume_capability=cap,
                                     volume_context={"tenant": tenant, "transport": "auto"})
    try:
        node.NodePublishVolume(req, timeout=60)
        res[i] = "OK"
    except grpc.RpcError as e:
        res[i] = "%s: %s" % (e.code().name, e.details())

th = [threading.Thread(target=one, args=(i,)) for i in range(N)]
[t.start() for t in th]; [t.join() for t in th]
check("16 parallel NodePublishVolume with transport=auto all OK", all(x == "OK" for x in res), str(res))
paths = {}
for i in range(N):
    try:
        st = node.NodeGetVolumeStats(c.NodeGetVolumeStatsRequest(volume_id="pv-auto-%d" % i, volume_path=tgt(i)), timeout=30)
        msg = st.volume_condition.message
    except grpc.RpcError as e:
        msg = "%s: %s" % (e.code().name, e.details())
    print("# pv-auto-%d: %s" % (i, msg))
    path = "uring" if "data path uring" in msg else "devfuse" if "data path devfuse" in msg else None
    paths[path] = paths.get(path, 0) + 1
    check("pv-auto-%d names its data path and why" % i, path is not None and " because " in msg, msg)
print("# data paths: %s" % ", ".join("%s %d" % (k, v) for k, v in sorted(paths.items(), key=str)))
for i in range(N):
    node.NodeUnpublishVolume(c.NodeUnpublishVolumeRequest(volume_id="pv-auto-%d" % i, target_path=tgt(i)), timeout=60)
    ctl.DeleteVolume(c.DeleteVolumeRequest(volume_id="pv-auto-%d" % i), timeout=60)
check("16 targets unpublished", not any(os.path.exists(tgt(i)) for i in range(N)))
check.finish()
