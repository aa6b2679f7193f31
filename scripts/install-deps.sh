#!/usr/bin/env bash
# Installs the Debian packages zcfs builds, tests and benchmarks with.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

PKGS=(build-essential pkg-config liburing-dev libfuse3-dev fuse3 libcap-ng-dev
      libjson-c-dev libseccomp-dev libmicrohttpd-dev libcmocka-dev fio
      gnuplot-nox attr clang stress-ng python3 util-linux e2fsprogs xfsprogs
      jq curl podman runc conmon busybox-static python3-yaml strace)
# zcfs-csi serve (gRPC C core, protobuf-c) and its kubelet-like test client
PKGS+=(libgrpc-dev libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev python3-grpcio python3-grpc-tools)
# sd_notify and the servers' scopes (libsystemd), systemd-analyze security
# (t_deploy) and systemd-nspawn (t_systemd boots systemd in a container)
PKGS+=(libsystemd-dev systemd systemd-container)
# make kernel / kernel-test / the 7.3 guest: qemu (TCG; its virtiofsd
# shares the host's root with the guest), depmod and modprobe (kmod)
PKGS+=(qemu-system-x86 kmod)
# t_plugin_docker: a real dockerd (its own data root, vfs, no bridge) and
# the managed plugin; Debian's docker.io brings containerd and runc
PKGS+=(docker.io)
# t_deploy renders deploy/kubernetes with kubectl's kustomize: Debian's
# kubectl 1.20 (8 MB), unless a kubectl is already there (Google's
# kubectl package owns the same /usr/bin/kubectl)
command -v kubectl >/dev/null 2>&1 || PKGS+=(kubernetes-client)
# t_acl (setfacl/getfacl), prove (t_posix's TAP runs)
PKGS+=(acl perl)
# make man (scdoc renders docs/man/*.scd), t_man (man --warnings, groff),
# make lint's shell checks (shellcheck: without it lint.sh skipped them)
PKGS+=(scdoc man-db groff-base shellcheck)
# make lint lists the sources with git ls-files (a tarball of the tree,
# or a minimal root that got the clone from elsewhere, has no git)
PKGS+=(git)
# make conformance(-ci): pjdfstest and xfstests build dependencies, so the
# suites install nothing while they run (tests/conformance/build-suites.sh)
PKGS+=(autoconf automake gcc make xfsprogs xfslibs-dev uuid-dev libattr1-dev libacl1-dev
       libaio-dev libgdbm-dev libtool-bin bc psmisc quota gawk)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]} (run as root to install)" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt-get or dpkg may run (unattended-upgrades, another checkout's
# make deps): wait up to 5 min for its lock instead of failing.
apt=(apt-get -o DPkg::Lock::Timeout=300)
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
