#!/usr/bin/python3
"""One NodePublishVolume or NodeUnpublishVolume through `zcfs-csi serve`
(python3-grpcio; the project's csi.proto compiled by grpc_tools here), as
kubelet sends it for a persistent volume.

usage: csi_publish.py PROTO_DIR PROTO_INC ENDPOINT publish|unpublish VOLUME_ID TARGET [KEY=VALUE...]
KEY=VALUE: the volume context (tenant=t1, transport=uring). Exit 0 when
the call answered OK, else 1 with the gRPC status on stderr."""
import sys
from csi_pyclient import compile_protos

proto_dir, proto_inc, endpoint, what, vid, target = sys.argv[1:7]
context = dict(kv.split("=", 1) for kv in sys.argv[7:])
if not compile_protos(proto_dir, proto_inc, "csi.proto"):
    sys.exit("compiling csi.proto with grpc_tools failed")
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

node = cg.NodeStub(grpc.insecure_channel(endpoint))
try:
    if what == "publish":
        cap = c.VolumeCapability(mount=c.VolumeCapability.MountVolume(),
                                 access_mode=c.VolumeCapability.AccessMode(
                                     mode=c.VolumeCapability.AccessMode.SINGLE_NODE_MULTI_WRITER))
        node.NodePublishVolume(c.NodePublishVolumeRequest(volume_id=vid, target_path=target,
                                                          volume_capability=cap, volume_context=context),
                               timeout=120)
    else:
        node.NodeUnpublishVolume(c.NodeUnpublishVolumeRequest(volume_id=vid, target_path=target), timeout=120)
except grpc.RpcError as e:
    sys.exit("%s %s: %s %s" % (what, vid, e.code(), e.details()))
