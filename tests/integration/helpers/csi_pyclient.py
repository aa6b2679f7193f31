"""What the Python gRPC clients of zcfs-csi (csi_kubelet.py, csi_hostile.py)
share: the project's .proto files compiled at test time by grpc_tools,
and TAP-like checks ending in the "N passed, N failed" line CI reads."""
import sys, tempfile


def compile_protos(proto_dir, proto_inc, *protos):
    """Compiles PROTOS into a temporary directory put on sys.path (import
    their *_pb2 modules afterwards); False when protoc fails."""
    from grpc_tools import protoc
    gen = tempfile.mkdtemp(prefix="zcfs-csi-py.")
    if protoc.main(["protoc", "-I" + proto_dir, "-I" + proto_inc, "--python_out=" + gen,
                    "--grpc_python_out=" + gen] + list(protos)) != 0:
        return False
    sys.path.insert(0, gen)
    return True


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, desc, ok, detail=""):
        if ok:
            self.passed += 1
            print("ok - " + desc)
        else:
            self.failed += 1
            print("not ok - " + desc + (" (%s)" % detail if detail else ""))
        sys.stdout.flush()

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)
