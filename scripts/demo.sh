#!/usr/bin/env bash
# The main job on a default setup: install what is needed, build, enable
# FUSE-over-io_uring, serve a demo volume with zcfs-serve, run a short fio
# smoke on it, and say how to stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (mounts, /dev/fuse)"; exit 1; }
scripts/install-deps.sh
make -s
[ -w /sys/module/fuse/parameters/enable_uring ] && echo Y > /sys/module/fuse/parameters/enable_uring

top=$PWD/demo
mkdir -p "$top/source" "$top/mnt"
if mountpoint -q "$top/mnt"; then
	echo "demo: $top/mnt is already mounted (stop it with: umount $top/mnt)"; exit 1
fi
bin/zcfs-serve --cache=exclusive "$top/source" "$top/mnt" 2>"$top/serve.log"
grep -o 'transport=[^ ]*.*' "$top/serve.log" || true
echo "demo: volume mounted at $top/mnt (backing directory $top/source)"
fio --name=smoke --directory="$top/mnt" --size=64M --bs=1M --rw=randrw --direct=1 \
	--ioengine=sync --numjobs=2 --runtime=5 --time_based --group_reporting \
	--verify=crc32c --verify_fatal=1 | grep -E 'READ:|WRITE:|err='
rm -f "$top"/mnt/smoke.*
sed -n 's/.*level=info serving/serving/p' "$top/serve.log" | head -n 1
echo "demo: stop it with: umount $top/mnt"
