#!/usr/bin/env bash
# The main job on the default policy: install what is needed, build,
# enable FUSE-over-io_uring, start zcfsd on policy/examples/default.json
# with its state in ./demo/state, publish a demo volume at
# /mnt/zcfs/demo, run a short fio smoke on it, print `zcfsctl status`,
# and say how to stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (mounts, /dev/fuse)"; exit 1; }
scripts/install-deps.sh
make -s
[ -w /sys/module/fuse/parameters/enable_uring ] && echo Y >/sys/module/fuse/parameters/enable_uring

top=$PWD/demo
sock=$top/zcfsd.sock
ctl() { bin/zcfsctl --socket "$sock" "$@"; }
mkdir -p "$top/state" /mnt/zcfs/demo
if [ -S "$sock" ] && ctl status >/dev/null 2>&1; then
	echo "demo: zcfsd already runs on $sock"
else
	bin/zcfsd --policy policy/examples/default.json --state-dir "$top/state" \
		--socket "$sock" --foreground </dev/null >/dev/null 2>>"$top/zcfsd.log" &
	echo $! >"$top/zcfsd.pid"
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
fi
# The default tenant may use io_uring; this node's RLIMIT_MEMLOCK decides
# how deep the rings can be: ask for what fits, zcfsd checks the budget.
hard=$(ulimit -H -l)
depth=8
[ "$hard" != unlimited ] && [ "$hard" -lt 32768 ] && depth=2
ctl volume create demo --tenant default --queue-depth "$depth" >/dev/null
ctl volume publish demo /mnt/zcfs/demo >/dev/null
echo "demo: volume 'demo' published at /mnt/zcfs/demo"
fio --name=smoke --directory=/mnt/zcfs/demo --size=64M --bs=1M --rw=randrw --direct=1 \
	--ioengine=sync --numjobs=2 --runtime=5 --time_based --group_reporting \
	--verify=crc32c --verify_fatal=1 | grep -E 'READ:|WRITE:|err='
rm -f /mnt/zcfs/demo/smoke.*
ctl status
cat <<EOM
demo: stop it with:
  bin/zcfsctl --socket $sock volume unpublish demo /mnt/zcfs/demo
  bin/zcfsctl --socket $sock volume delete demo
  kill \$(cat $top/zcfsd.pid)
EOM
