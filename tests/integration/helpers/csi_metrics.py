#!/usr/bin/python3
"""Calls of zcfs-csi serve whose result codes t_plugin_metrics.sh then
finds in the plugin's metrics: Probe twice (OK), NodePublishVolume and
NodeUnpublishVolume of a real volume (OK), NodePublishVolume without a
volume id (INVALID_ARGUMENT), a method zcfs-csi does not have
(UNIMPLEMENTED, counted as method "other").

usage: csi_metrics.py PROTO_DIR PROTO_INC ENDPOINT TARGET TENANT TRANSPORT"""
import sys
from csi_pyclient import Checks, compile_protos

proto_dir, proto_inc, endpoint, target, tenant, transport = sys.argv[1:7]
if not compile_protos(proto_dir, proto_inc, "csi.proto"):
    print("not ok - compiling the protos with grpc_tools"); print("0 passed, 1 failed"); sys.exit(1)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

check = Checks()
ch = grpc.insecure_channel(endpoint)
node, ident = cg.NodeStub(ch), cg.IdentityStub(ch)


def code(fn, req):
    try:
        fn(req, timeout=60)
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


cap = c.VolumeCapability(mount=c.VolumeCapability.MountVolume(),
                         access_mode=c.VolumeCapability.AccessMode(mode=c.VolumeCapability.AccessMode.SINGLE_NODE_MULTI_WRITER))
pub = c.NodePublishVolumeRequest(volume_id="mvol", target_path=target, volume_capability=cap,
                                 volume_context={"tenant": tenant, "transport": transport})
check("Probe OK", code(ident.Probe, c.ProbeRequest()) == grpc.StatusCode.OK)
check("Probe OK again", code(ident.Probe, c.ProbeRequest()) == grpc.StatusCode.OK)
check("NodePublishVolume OK", code(node.NodePublishVolume, pub) == grpc.StatusCode.OK)
check("NodeUnpublishVolume OK", code(node.NodeUnpublishVolume,
      c.NodeUnpublishVolumeRequest(volume_id="mvol", target_path=target)) == grpc.StatusCode.OK)
check("NodePublishVolume without a volume id: INVALID_ARGUMENT",
      code(node.NodePublishVolume, c.NodePublishVolumeRequest(target_path=target, volume_capability=cap))
      == grpc.StatusCode.INVALID_ARGUMENT)
nope = ch.unary_unary("/csi.v1.Node/NodeNoSuchMethod", request_serializer=lambda x: x,
                      response_deserializer=lambda x: x)
check("an unknown method: UNIMPLEMENTED", code(nope, b"") == grpc.StatusCode.UNIMPLEMENTED)
check.finish()
