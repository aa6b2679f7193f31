#!/bin/sh
# kubelet-dir.sh DIR: rewrites kubelet's root directory in the manifests
# next to this script from /var/lib/kubelet to DIR (the one place it is
# named: hostPath paths, mount paths, the registration path and the
# policy's allowed target prefix). Run it once, on fresh copies.
set -eu
dir=${1:?usage: kubelet-dir.sh /path/to/kubelet/root}
case $dir in /*) ;; *) echo "kubelet-dir.sh: DIR must be absolute" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/daemonset.yaml "$here"/policy-configmap.yaml; do
	sed -i "s#/var/lib/kubelet#$dir#g" "$f"
done
