#!/usr/bin/env bash
# make-docker-plugin.sh DIR: the Docker managed plugin zcfs in DIR, as
# `docker plugin create NAME DIR` takes it: DIR/config.json
# (deploy/docker/config.json) and DIR/rootfs, made from this tree's
# bin/zcfs-volume-plugin (or $ZCFS_BIN's) and the shared libraries it
# loads (ldd), without pulling a base image (this machine reaches no
# container registry). The rootfs holds nothing else: the plugin runs no
# shell and makes no privileged call (zcfsd makes every mount).
set -euo pipefail
out=${1:?usage: make-docker-plugin.sh DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${ZCFS_BIN:-$top/bin}
vp=$bin/zcfs-volume-plugin
[ -x "$vp" ] || { echo "make-docker-plugin: $vp not built (make)" >&2; exit 1; }
root=$out/rootfs
rm -rf "$root"
mkdir -p "$root"/{usr/local/bin,etc,tmp,dev,proc,sys,run/docker/plugins,run/zcfs,mnt/zcfs,var/lib/zcfs/volume-plugin}
chmod 1777 "$root/tmp"
: >"$root/etc/hosts"
: >"$root/etc/resolv.conf"
install -m 0755 "$vp" "$root/usr/local/bin/zcfs-volume-plugin"
# every library it loads, at the path the loader looks for it
ldd "$vp" | grep -oE '/[^ ]+' | while read -r so; do
	[ -e "$root$so" ] || cp -L --parents "$so" "$root"
done
install -m 0644 "$top/deploy/docker/config.json" "$out/config.json"
echo "$out"
