#!/usr/bin/python3
"""A kubelet-like client of `zcfs-csi serve` (python3-grpcio; the
project's csi.proto and pluginregistration.proto compiled here by
grpc_tools at test time): what kubelet does with a CSI node plugin.

usage: [ZCFSD_PID=pid] csi_kubelet.py PROTO_DIR PROTO_INC ENDPOINT REG_SOCK TARGET_DIR TENANT TRANSPORT
Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed"."""
import os, signal, subprocess, sys, threading, time

proto_dir, proto_inc, endpoint, reg_sock, tdir, tenant, transport = sys.argv[1:8]
zcfsd_pid = int(os.environ.get("ZCFSD_PID", "0") or 0)  # for the held race round
from csi_pyclient import Checks, compile_protos  # noqa: E402
if not compile_protos(proto_dir, proto_inc, "csi.proto", "pluginregistration.proto"):
    print("not ok - compiling the protos with grpc_tools"); print("0 passed, 1 failed"); sys.exit(1)
import grpc  # noqa: E402
import csi_pb2 as c, csi_pb2_grpc as cg  # noqa: E402
import pluginregistration_pb2 as r, pluginregistration_pb2_grpc as rg  # noqa: E402

check = Checks()

def code(fn, req):
    try:
        fn(req, timeout=60); return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()

def mounts_under(d):
    with open("/proc/self/mounts") as f:
        return [l.split()[1] for l in f if l.split()[1].startswith(d + "/")]

ch = grpc.insecure_channel(endpoint)
node, ident = cg.NodeStub(ch), cg.IdentityStub(ch)

# 1. plugin registration, as kubelet's plugin watcher does it
reg = rg.RegistrationStub(grpc.insecure_channel("unix://" + reg_sock))
info = reg.GetInfo(r.InfoRequest(), timeout=10)
check("registration GetInfo: type CSIPlugin, name csi.zcfs.io", info.type == "CSIPlugin" and info.name == "csi.zcfs.io", str(info))
check("registration GetInfo: endpoint is the CSI socket", info.endpoint == endpoint[len("unix://"):], info.endpoint)
check("registration GetInfo: supported_versions 1.x", any(v.startswith("1.") for v in info.supported_versions))
reg.NotifyRegistrationStatus(r.RegistrationStatus(plugin_registered=True), timeout=10)
check("registration NotifyRegistrationStatus answered", True)
check("registration socket does not serve CSI", code(cg.IdentityStub(grpc.insecure_channel("unix://" + reg_sock)).GetPluginInfo, c.GetPluginInfoRequest()) == grpc.StatusCode.UNIMPLEMENTED)

# 2. what kubelet asks once the driver is registered
ni = node.NodeGetInfo(c.NodeGetInfoRequest(), timeout=10)
check("NodeGetInfo node_id", ni.node_id == "kubelet-node", ni.node_id)
caps = {x.rpc.type for x in node.NodeGetCapabilities(c.NodeGetCapabilitiesRequest(), timeout=10).capabilities}
R = c.NodeServiceCapability.RPC
check("NodeGetCapabilities: GET_VOLUME_STATS, VOLUME_CONDITION, VOLUME_MOUNT_GROUP, no STAGE_UNSTAGE",
      {R.GET_VOLUME_STATS, R.VOLUME_CONDITION, R.VOLUME_MOUNT_GROUP} <= caps and R.STAGE_UNSTAGE_VOLUME not in caps, str(caps))
pc = ident.GetPluginCapabilities(c.GetPluginCapabilitiesRequest(), timeout=10)
check("GetPluginCapabilities: CONTROLLER_SERVICE and VOLUME_ACCESSIBILITY_CONSTRAINTS",
      {1, 2} <= {x.service.type for x in pc.capabilities if x.HasField("service")})
check("NodeGetInfo: topology of this node", dict(ni.accessible_topology.segments) == {"topology.csi.zcfs.io/node": "kubelet-node"}, str(ni))
check("Probe ready", ident.Probe(c.ProbeRequest(), timeout=30).ready.value)

def cap(group=""):
    return c.VolumeCapability(mount=c.VolumeCapability.MountVolume(volume_mount_group=group),
                              access_mode=c.VolumeCapability.AccessMode(mode=c.VolumeCapability.AccessMode.SINGLE_NODE_MULTI_WRITER))

def pod_dir(pod, vol):
    # kubelet's layout: pods/POD/volumes/kubernetes.io~csi/VOL/mount
    d = os.path.join(tdir, "pods", pod, "volumes", "kubernetes.io~csi", vol)
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "mount")

def ctx(extra=None):
    d = {"tenant": tenant, "transport": transport, "csi.storage.k8s.io/pod.name": "p",
         "csi.storage.k8s.io/pod.namespace": "default", "csi.storage.k8s.io/pod.uid": "u"}
    d.update(extra or {})
    return d

def as_pod(cmd):
    # runAsUser 1000, fsGroup 2000 -> supplementary group 2000
    return subprocess.run(["setpriv", "--reuid", "1000", "--regid", "1000", "--groups", "2000", "sh", "-c", cmd],
                          capture_output=True, text=True)

# 3. a persistent volume and an ephemeral inline volume, fsGroup 2000
for kind, vid, extra in (("persistent", "pv-kubelet", {}), ("ephemeral", "csi-eph-kubelet", {"csi.storage.k8s.io/ephemeral": "true"})):
    tgt = pod_dir("pod-" + kind, vid)
    req = c.NodePublishVolumeRequest(volume_id=vid, target_path=tgt, volume_capability=cap("2000"), volume_context=ctx(extra))
    check(kind + ": NodePublishVolume with volume_mount_group 2000", code(node.NodePublishVolume, req) == grpc.StatusCode.OK)
    check(kind + ": publish again is idempotent", code(node.NodePublishVolume, req) == grpc.StatusCode.OK)
    req2 = c.NodePublishVolumeRequest(volume_id=vid, target_path=tgt, volume_capability=cap("3000"), volume_context=ctx(extra))
    check(kind + ": same target, another fsGroup -> ALREADY_EXISTS", code(node.NodePublishVolume, req2) == grpc.StatusCode.ALREADY_EXISTS)
    st = os.stat(tgt)
    check(kind + ": volume root group 2000, set-gid, group rwx", st.st_gid == 2000 and st.st_mode & 0o2070 == 0o2070, "%o %d" % (st.st_mode, st.st_gid))
    p = as_pod("echo data > '%s/f' && mkdir '%s/d' && echo more > '%s/d/g' && cat '%s/f' && stat -c %%u:%%g '%s/f' '%s/d' '%s/d/g'" % ((tgt,) * 7))
    out = p.stdout.split()
    check(kind + ": uid 1000 with group 2000 creates files and directories", p.returncode == 0, p.stderr.strip())
    check(kind + ": they belong to 1000:2000", out[1:] == ["1000:2000"] * 3, p.stdout)
    p = subprocess.run(["setpriv", "--reuid", "1001", "--regid", "1001", "--clear-groups", "sh", "-c", "echo x > '%s/h'" % tgt], capture_output=True, text=True)
    check(kind + ": a uid outside the group is refused", p.returncode != 0)
    stats = node.NodeGetVolumeStats(c.NodeGetVolumeStatsRequest(volume_id=vid, volume_path=tgt), timeout=30)
    u = {x.unit: x for x in stats.usage}
    check(kind + ": NodeGetVolumeStats BYTES and INODES", c.VolumeUsage.BYTES in u and c.VolumeUsage.INODES in u, str(stats))
    if c.VolumeUsage.INODES in u:
        # the root, f, d and d/g: the volume's own count, not the backing fs's
        check(kind + ": INODES used is the volume's own count (4)", u[c.VolumeUsage.INODES].used == 4, str(u[c.VolumeUsage.INODES]))
    check(kind + ": volume_condition healthy", not stats.volume_condition.abnormal, stats.volume_condition.message)
    ureq = c.NodeUnpublishVolumeRequest(volume_id=vid, target_path=tgt)
    check(kind + ": NodeUnpublishVolume", code(node.NodeUnpublishVolume, ureq) == grpc.StatusCode.OK)
    check(kind + ": unpublish again is idempotent", code(node.NodeUnpublishVolume, ureq) == grpc.StatusCode.OK)
    check(kind + ": target unmounted and removed", not os.path.exists(tgt) and not mounts_under(os.path.dirname(tgt)))

# 4. 16 pods at once, each with its own volume (/dev/fuse: 16 io_uring
# volumes would pass the tenant's memlock budget, RESOURCE_EXHAUSTED)
N = 16
res = [None] * N
def one(i):
    tgt = pod_dir("par-%d" % i, "pv-par-%d" % i)
    req = c.NodePublishVolumeRequest(volume_id="pv-par-%d" % i, target_path=tgt, volume_capability=cap("2000"), volume_context=ctx({"transport": "devfuse"}))
    t0 = time.monotonic()
    res[i] = (code(node.NodePublishVolume, req), time.monotonic() - t0, tgt)
t0 = time.monotonic()
th = [threading.Thread(target=one, args=(i,)) for i in range(N)]
[t.start() for t in th]; [t.join() for t in th]
wall = time.monotonic() - t0
check("16 parallel NodePublishVolume all OK", all(x[0] == grpc.StatusCode.OK for x in res), str([x[0] for x in res]))
check("16 parallel publishes were served concurrently (wall %.2f s < 0.8 x sum %.2f s)" % (wall, sum(x[1] for x in res)),
      wall < 0.8 * sum(x[1] for x in res))
check("16 targets mounted", all(os.path.ismount(x[2]) for x in res))
for i in range(N):
    code(node.NodeUnpublishVolume, c.NodeUnpublishVolumeRequest(volume_id="pv-par-%d" % i, target_path=res[i][2]))
check("16 targets unpublished", not any(os.path.exists(x[2]) for x in res))

# 5. a publish racing an unpublish of the same volume: the second is
# ABORTED. Round 0 makes the overlap certain: zcfsd is held (SIGSTOP), so
# the publish sits on its zcfsd call holding the volume's lock while the
# unpublish comes; rounds 1-4 race freely (either order is right).
aborted = 0
for rnd in range(5):
    vid, tgt = "csi-eph-race-%d" % rnd, pod_dir("race-%d" % rnd, "race")
    preq = c.NodePublishVolumeRequest(volume_id=vid, target_path=tgt, volume_capability=cap(), volume_context=ctx({"csi.storage.k8s.io/ephemeral": "true"}))
    ureq = c.NodeUnpublishVolumeRequest(volume_id=vid, target_path=tgt)
    out = {}
    held = rnd == 0 and zcfsd_pid > 0
    if held:
        os.kill(zcfsd_pid, signal.SIGSTOP)
    try:
        tp = threading.Thread(target=lambda: out.__setitem__("pub", code(node.NodePublishVolume, preq)))
        tp.start(); time.sleep(0.3 if held else 0.02)
        out["unpub"] = code(node.NodeUnpublishVolume, ureq)
    finally:
        if held:
            os.kill(zcfsd_pid, signal.SIGCONT)
    tp.join()
    codes = sorted([out["pub"].name, out["unpub"].name])
    ok = codes in (["ABORTED", "OK"], ["OK", "OK"])
    aborted += "ABORTED" in codes
    if held:
        check("race 0 (zcfsd held): publish %s, unpublish %s" % (out["pub"].name, out["unpub"].name),
              out["pub"] == grpc.StatusCode.OK and out["unpub"] == grpc.StatusCode.ABORTED)
    else:
        check("race %d: publish %s, unpublish %s (one ABORTED or both in order)" % (rnd, out["pub"].name, out["unpub"].name), ok)
    # kubelet retries until the unpublish succeeds
    for _ in range(50):
        if code(node.NodeUnpublishVolume, ureq) == grpc.StatusCode.OK:
            break
        time.sleep(0.1)
    check("race %d: nothing left behind" % rnd, not os.path.exists(tgt) and not mounts_under(os.path.dirname(tgt)))
print("# free races ABORTED in %d of 4 rounds" % (aborted - 1))

# 6. the persistent volumes go the way a CO deletes them
ctl = cg.ControllerStub(ch)
dels = [code(ctl.DeleteVolume, c.DeleteVolumeRequest(volume_id=v)) for v in ["pv-kubelet"] + ["pv-par-%d" % i for i in range(N)]]
check("DeleteVolume of the 17 persistent volumes", all(x == grpc.StatusCode.OK for x in dels), str(dels))

check.finish()
