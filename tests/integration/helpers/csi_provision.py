#!/usr/bin/python3
"""Two zcfs "nodes" (a zcfsd and a `zcfs-csi serve` each) driven the way
a cluster drives them: external-provisioner with --node-deployment on
every node (it provisions only the PVCs whose selected node is its own,
with that node's topology as the requirement), kubelet on the node the
pod runs on, external-resizer once for the cluster.

usage: csi_provision.py PROTO_DIR PROTO_INC EP_A EP_B TARGET_DIR TENANT TRANSPORT
Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed"."""
import os, subprocess, sys, time, uuid

proto_dir, proto_inc, ep_a, ep_b, tdir, tenant, transport = sys.argv[1:8]
from csi_pyclient import Checks, compile_protos  # noqa: E402
if not compile_protos(proto_dir, proto_inc, "csi.proto"):
    print("not ok - compiling the protos with grpc_tools"); print("0 passed, 1 failed"); sys.exit(1)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402

check = Checks()
MI = 1 << 20
KEY = "topology.csi.zcfs.io/node"

class Node:
    def __init__(self, ep):
        ch = grpc.insecure_channel(ep)
        self.ident, self.ctl, self.node = cg.IdentityStub(ch), cg.ControllerStub(ch), cg.NodeStub(ch)
        self.info = self.node.NodeGetInfo(c.NodeGetInfoRequest(), timeout=30)
        self.id = self.info.node_id

def call(fn, req):
    """(code name, response or error message)"""
    try:
        return "OK", fn(req, timeout=60)
    except grpc.RpcError as e:
        return e.code().name, e.details()

A, B = Node(ep_a), Node(ep_b)
mode = c.VolumeCapability.AccessMode.SINGLE_NODE_WRITER
def cap(group=""):
    return c.VolumeCapability(mount=c.VolumeCapability.MountVolume(volume_mount_group=group),
                              access_mode=c.VolumeCapability.AccessMode(mode=mode))
params = {"tenant": tenant, "transport": transport}

# what external-provisioner and kubelet learn at start
for n in (A, B):
    check("%s: NodeGetInfo topology {%s: %s}" % (n.id, KEY, n.id), dict(n.info.accessible_topology.segments) == {KEY: n.id}, str(n.info))
    check("%s: max_volumes_per_node from the policy (%d)" % (n.id, n.info.max_volumes_per_node), n.info.max_volumes_per_node == 3)
pc = {(x.WhichOneof("type"), x.service.type if x.HasField("service") else x.volume_expansion.type)
      for x in A.ident.GetPluginCapabilities(c.GetPluginCapabilitiesRequest(), timeout=10).capabilities}
S, E = c.PluginCapability.Service, c.PluginCapability.VolumeExpansion
check("plugin capabilities: CONTROLLER_SERVICE, VOLUME_ACCESSIBILITY_CONSTRAINTS, online expansion",
      {("service", S.CONTROLLER_SERVICE), ("service", S.VOLUME_ACCESSIBILITY_CONSTRAINTS), ("volume_expansion", E.ONLINE)} <= pc, str(pc))
R = c.ControllerServiceCapability.RPC
cc = {x.rpc.type for x in A.ctl.ControllerGetCapabilities(c.ControllerGetCapabilitiesRequest(), timeout=10).capabilities}
check("controller capabilities: CREATE_DELETE_VOLUME, EXPAND_VOLUME, GET_CAPACITY, LIST_VOLUMES",
      {R.CREATE_DELETE_VOLUME, R.EXPAND_VOLUME, R.GET_CAPACITY, R.LIST_VOLUMES} <= cc, str(cc))

def capacity(n, topo_node=None):
    t = c.Topology(segments={KEY: topo_node or n.id})
    return n.ctl.GetCapacity(c.GetCapacityRequest(parameters=params, accessible_topology=t,
                                                  volume_capabilities=[cap()]), timeout=30).available_capacity

def create(n, name, size, node_for=None):
    topo = c.Topology(segments={KEY: node_for or n.id})
    req = c.CreateVolumeRequest(name=name, capacity_range=c.CapacityRange(required_bytes=size), parameters=params,
                                volume_capabilities=[cap()],
                                accessibility_requirements=c.TopologyRequirement(requisite=[topo], preferred=[topo]))
    return call(n.ctl.CreateVolume, req)

# 1. a PVC whose selected node is A: A's provisioner creates it
pvc = "pvc-" + str(uuid.uuid4())
cap0 = capacity(A)
code, res = create(A, pvc, 64 * MI)
check("A: CreateVolume %s (64Mi, WaitForFirstConsumer on A)" % pvc, code == "OK", str(res))
vid = res.volume.volume_id if code == "OK" else pvc + "@?"
check("volume id carries its node: %s" % vid, vid == pvc + "@" + A.id)
check("accessible_topology is node A", code == "OK" and [dict(t.segments) for t in res.volume.accessible_topology] == [{KEY: A.id}])
check("capacity_bytes 64Mi", code == "OK" and res.volume.capacity_bytes == 64 * MI)
code2, res2 = create(A, pvc, 64 * MI)
check("CreateVolume again (provisioner retry): same volume", code2 == "OK" and res2.volume.volume_id == vid)
check("GetCapacity on A fell by 64Mi (%d -> %d)" % (cap0, capacity(A)), cap0 - capacity(A) >= 64 * MI)
code, msg = create(B, pvc, 64 * MI, node_for=A.id)
check("B: CreateVolume with A's topology refused (RESOURCE_EXHAUSTED, names B)", code == "RESOURCE_EXHAUSTED" and B.id in msg, "%s: %s" % (code, msg))
check("B's GetCapacity for A's segment: 0", capacity(B, A.id) == 0)
lv = {e.volume.volume_id for e in A.ctl.ListVolumes(c.ListVolumesRequest(), timeout=30).entries}
check("A: ListVolumes has it", vid in lv, str(lv))

# 2. the pod on A: kubelet publishes with fsGroup 2000, the app runs as uid 1000
d = os.path.join(tdir, "pods", "pod-a", "volumes", "kubernetes.io~csi", pvc)
os.makedirs(d, exist_ok=True)
tgt = os.path.join(d, "mount")
preq = c.NodePublishVolumeRequest(volume_id=vid, target_path=tgt, volume_capability=cap("2000"),
                                  volume_context=dict(res.volume.volume_context) if code2 == "OK" else {})
code, msg = call(A.node.NodePublishVolume, preq)
check("A: NodePublishVolume", code == "OK", str(msg))
def as_pod(cmd):
    return subprocess.run(["setpriv", "--reuid", "1000", "--regid", "1000", "--groups", "2000", "sh", "-c", cmd],
                          capture_output=True, text=True)
p = as_pod("echo hello > '%s/hello' && stat -c %%u:%%g '%s/hello'" % (tgt, tgt))
check("uid 1000 with fsGroup 2000 writes; the file is 1000:2000", p.returncode == 0 and p.stdout.strip() == "1000:2000", p.stderr + p.stdout)

# 3. its publish on B (a pod wrongly placed) is refused, naming both nodes
bt = os.path.join(tdir, "pods", "pod-b", "mount")
os.makedirs(os.path.dirname(bt), exist_ok=True)
code, msg = call(B.node.NodePublishVolume, c.NodePublishVolumeRequest(volume_id=vid, target_path=bt, volume_capability=cap()))
check("B: NodePublishVolume of A's volume refused (FAILED_PRECONDITION)", code == "FAILED_PRECONDITION", "%s: %s" % (code, msg))
check("... the message names both nodes", A.id in str(msg) and B.id in str(msg), str(msg))
check("... nothing was created on B", not os.path.ismount(bt))

# 4. expanded online while the app writes: 96 x 1 MiB direct writes (past 64Mi)
loop = ("i=0; while [ $i -lt 96 ]; do head -c 1048576 /dev/zero | tr '\\0' \"\\\\$(printf %%03o $((i %% 90 + 33)))\" | "
        "dd of='%s/data' bs=1M seek=$i count=1 iflag=fullblock oflag=direct conv=notrunc status=none || exit 1; "
        "[ $i -lt 24 ] && sleep 0.05; i=$((i + 1)); done" % tgt)
w = subprocess.Popen(["setpriv", "--reuid", "1000", "--regid", "1000", "--groups", "2000", "sh", "-c", loop],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
for _ in range(200):
    if os.path.exists(tgt + "/data") and os.stat(tgt + "/data").st_size >= 8 * MI:
        break
    time.sleep(0.02)
print("# expanding at %d bytes written" % os.stat(tgt + "/data").st_size)
code, r1 = call(B.ctl.ControllerExpandVolume, c.ControllerExpandVolumeRequest(volume_id=vid, capacity_range=c.CapacityRange(required_bytes=256 * MI)))
check("external-resizer reaching B's controller: OK, node expansion required (A grows it)",
      code == "OK" and r1.node_expansion_required and r1.capacity_bytes == 256 * MI, str(r1))
code, r2 = call(A.node.NodeExpandVolume, c.NodeExpandVolumeRequest(volume_id=vid, volume_path=tgt, capacity_range=c.CapacityRange(required_bytes=256 * MI)))
check("A: NodeExpandVolume to 256Mi", code == "OK" and r2.capacity_bytes == 256 * MI, str(r2))
code, r3 = call(A.ctl.ControllerExpandVolume, c.ControllerExpandVolumeRequest(volume_id=vid, capacity_range=c.CapacityRange(required_bytes=256 * MI)))
check("A: ControllerExpandVolume (already done): OK, no node step", code == "OK" and r3.capacity_bytes == 256 * MI and not r3.node_expansion_required, str(r3))
out, _ = w.communicate(timeout=300)
check("the writer wrote 96Mi past the old 64Mi without an error", w.returncode == 0 and os.stat(tgt + "/data").st_size == 96 * MI, out)
p = as_pod("i=0; bad=0; while [ $i -lt 96 ]; do n=$(dd if='%s/data' bs=1M skip=$i count=1 status=none | tr -d \"\\\\$(printf %%03o $((i %% 90 + 33)))\" | wc -c); [ $n -eq 0 ] || bad=$((bad+1)); i=$((i+1)); done; echo $bad" % tgt)
check("every 1 MiB chunk reads back as written (%s bad of 96)" % p.stdout.strip(), p.stdout.strip() == "0", p.stderr)
st = A.node.NodeGetVolumeStats(c.NodeGetVolumeStatsRequest(volume_id=vid, volume_path=tgt), timeout=30)
total = {u.unit: u.total for u in st.usage}.get(c.VolumeUsage.BYTES, 0)
check("NodeGetVolumeStats: 256Mi total (df)", total == 256 * MI, str(total))
code, msg = call(A.ctl.ControllerExpandVolume, c.ControllerExpandVolumeRequest(volume_id=vid, capacity_range=c.CapacityRange(required_bytes=1 << 60)))
check("expanding past the tenant's capacity: OUT_OF_RANGE", code == "OUT_OF_RANGE", "%s: %s" % (code, msg))

# 5. the pod goes, the PVC is deleted
code, msg = call(A.ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=vid))
check("DeleteVolume while published: FAILED_PRECONDITION", code == "FAILED_PRECONDITION", "%s: %s" % (code, msg))
code, msg = call(A.node.NodeUnpublishVolume, c.NodeUnpublishVolumeRequest(volume_id=vid, target_path=tgt))
check("A: NodeUnpublishVolume", code == "OK" and not os.path.exists(tgt), str(msg))
code, msg = call(B.ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=vid))
check("B: DeleteVolume of A's volume refused, naming both nodes", code == "FAILED_PRECONDITION" and A.id in str(msg), "%s: %s" % (code, msg))
code, msg = call(A.ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=vid))
check("A: DeleteVolume", code == "OK", str(msg))
code, msg = call(A.ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=vid))
check("A: DeleteVolume again (unknown id): OK", code == "OK", str(msg))
code, msg = call(A.node.NodePublishVolume, preq)
check("publish of the deleted volume: NOT_FOUND, nothing created empty", code == "NOT_FOUND", "%s: %s" % (code, msg))

# 6. capacity falls with every volume and is gone at the tenant's max_volumes (3)
caps, names = [capacity(A)], []
for i in range(3):
    names.append("pvc-cap-%d" % i)
    code, res = create(A, names[-1], 128 * MI)
    check("A: CreateVolume %s (128Mi)" % names[-1], code == "OK", str(res))
    caps.append(capacity(A))
print("# GetCapacity on A: %s" % " -> ".join(str(x) for x in caps))
check("GetCapacity fell with each volume", all(caps[i + 1] < caps[i] for i in range(2)))
check("GetCapacity is 0 at max_volumes", caps[-1] == 0)
code, msg = create(A, "pvc-cap-3", 128 * MI)
check("a 4th CreateVolume: RESOURCE_EXHAUSTED", code == "RESOURCE_EXHAUSTED", "%s: %s" % (code, msg))
check("B's capacity is untouched", capacity(B) > 0)
for n in names:
    call(A.ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=n + "@" + A.id))
check("after the deletes GetCapacity is back", capacity(A) > 0)
check.finish()
