#!/usr/bin/env bash
# Real Podman containers on zcfs volumes: `podman volume create --driver
# zcfs`, a container (runc, busybox-static image made with `podman
# import`, --network none, private containers.conf and --root/--runroot)
# writes to the volume; the data lands in the tenant's storage with the
# tenant's uid; Podman's Mount/Unmount pairs publish and unpublish through
# zcfsd (two containers share one mount); a write past the volume's size
# fails with ENOSPC inside the container; `podman volume rm` removes the
# server, the mount and the storage. Exits 77 with the reason when Podman
# cannot run containers here (t_plugin_volume.sh covers the volume
# commands without containers). Non-root containers: without a
# volume_root in the policy a `--user 1000` container cannot write the
# root (the tenant's, 0700); with volume_root {uid 1000, gid 1000, 0770,
# setgid} it writes, and its files get the root's group.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require curl podman runc setpriv
require_static_busybox
[ -x "$ZCFS_BIN/zcfs-volume-plugin" ] || fail "$ZCFS_BIN/zcfs-volume-plugin not built"

zcfsd_env 64M true
mkdir -p "$W/plugins" "$W/podman/tmp"
VPSOCK=$W/plugins/zcfs.sock
VP_PID=
PM_READY=
# podman import writes its blob cache to /var/lib/containers/cache (not
# under --root in 4.3): remove it afterwards if this test created it.
[ -e /var/lib/containers ] && had_varlib=yes || had_varlib=no

plugin_cleanup() {
	local rc=$?
	if [ -n "$PM_READY" ]; then
		pm rm -af -t 0 >/dev/null 2>&1
		pm volume rm -af >/dev/null 2>&1
	fi
	[ -n "$VP_PID" ] && kill -TERM "$VP_PID" 2>/dev/null && wait "$VP_PID" 2>/dev/null
	[ -n "$ZCFSD_PID" ] && kill -KILL "$ZCFSD_PID" 2>/dev/null && wait "$ZCFSD_PID" 2>/dev/null
	ZCFSD_PID=
	[ "$had_varlib" = no ] && rm -rf /var/lib/containers
	(exit $rc)
	zcfsd_cleanup
}
trap plugin_cleanup EXIT

zcfsd_start
# without any capability: zcfsd makes every mount
setpriv --bounding-set -all --inh-caps -all --ambient-caps -all \
	"$ZCFS_BIN/zcfs-volume-plugin" --listen "$VPSOCK" --socket "$SOCK" --state-dir "$W/state/vp" \
	--mount-root "$TGT" 2>>"$W/state/vp.log" &
VP_PID=$!
wait_for "plugin socket" 5 test -S "$VPSOCK" || fail "plugin did not start"

# The session's hard nofile limit is below Podman's default 1048576 and
# crun cannot run on this hybrid cgroup setup: runc + lowered ulimits.
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
podman_conf 'runtime = "runc"'
cat >>"$CONTAINERS_CONF" <<-EOF
	[containers]
	default_ulimits = ["nofile=$nofile:$nofile", "nproc=32768:32768"]
EOF

# A busybox image without pulling anything.
mkdir -p "$W/rootfs/bin" "$W/rootfs/data" "$W/rootfs/tmp"
cp "$BUSYBOX" "$W/rootfs/bin/busybox"
for c in sh ls cat echo mkdir sleep stat id true dd grep rm; do ln -s busybox "$W/rootfs/bin/$c"; done
tar -C "$W/rootfs" -cf "$W/bbx.tar" . || fail "tar rootfs"
pm import "$W/bbx.tar" localhost/zcfs-bbx:1 >/dev/null 2>"$W/import.err" ||
	skip "podman import failed: $(tail -n 1 "$W/import.err")"
if ! pm run --rm --network none localhost/zcfs-bbx:1 /bin/true >/dev/null 2>"$W/run.err"; then
	sed 's/^/# /' "$W/run.err"
	skip "podman cannot run containers here: $(grep -m1 -i error "$W/run.err" || tail -n 1 "$W/run.err")"
fi

T=$ZCFS_TRANSPORT
MP=$TGT/t1/pvol
mounted() { awk -v m="$MP" '$2 == m && $3 ~ /^fuse/ {f=1} END {exit !f}' /proc/self/mounts; }
check "podman volume create --driver zcfs -o tenant=t1 -o size=32M" pm volume create --driver zcfs -o tenant=t1 \
	-o size=32M -o transport="$T" pvol
check "zcfsd has pvol" test "$(vol_field pvol state)" = created
check "container writes to the volume" pm run --rm --network none -v pvol:/data localhost/zcfs-bbx:1 \
	/bin/sh -c 'echo hello-from-a-container >/data/hello && mkdir /data/dir && echo x >/data/dir/y && stat -c %u /data/hello >/data/uid'
check "data landed in the tenant's storage" grep -qx hello-from-a-container "$STORE/t1/pvol/hello"
check "... tree too" test -f "$STORE/t1/pvol/dir/y"
check "... backing files belong to the tenant" test "$(stat -c %u "$STORE/t1/pvol/hello")" = "$TENANT_UID"
check "the container sees its file as root's (ownership record)" grep -qx 0 "$STORE/t1/pvol/uid"
check "after --rm: Unmount reached zcfsd (not mounted)" bash -c "! awk -v m='$MP' '\$2 == m' /proc/self/mounts | grep -q ."
check "zcfsd: created, no server" test "$(vol_field pvol state)" = created

check "in a container, a write past the volume's size fails with ENOSPC" pm run --rm --network none \
	-v pvol:/data localhost/zcfs-bbx:1 /bin/sh -c \
	'if dd if=/dev/zero of=/data/big bs=1M count=40 2>/tmp/err; then exit 1; fi; grep -q "No space left" /tmp/err && rm /data/big'
check "... and the volume is usable again after removing the file" test ! -e "$STORE/t1/pvol/big"

log "two containers, one mount"
check "a long-running container" pm run -d --name zcfs-long --network none -v pvol:/data \
	localhost/zcfs-bbx:1 /bin/sleep 120
check "mounted while it runs" mounted
check "a second container reads what the first wrote" bash -c \
	"podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs run --rm --network none -v pvol:/data localhost/zcfs-bbx:1 /bin/cat /data/hello | grep -qx hello-from-a-container"
check "still mounted for the first" mounted
check "one fuse mount, one server" test "$(awk -v m="$MP" '$2 == m' /proc/self/mounts | wc -l)" = 1
check "stop the long-running container" pm rm -f -t 0 zcfs-long
check "unmounted after the last container" bash -c "! awk -v m='$MP' '\$2 == m' /proc/self/mounts | grep -q ."

log "a non-root container (podman run --user 1000)"
check "without volume_root: the root is the tenant's 0700, uid 1000 cannot write it" pm run --rm \
	--network none --user 1000 -v pvol:/data localhost/zcfs-bbx:1 /bin/sh -c '! echo x 2>/dev/null >/data/nr'
jq '.tenants[0].volume_root = {"uid": 1000, "gid": 1000, "mode": "0770", "setgid": true}' "$POLICY" >"$W/p2.json" &&
	mv "$W/p2.json" "$POLICY"
check "policy with tenants[0].volume_root reloads" ctlq policy reload
check "podman volume create nrvol (no uid/gid/mode options)" pm volume create --driver zcfs -o tenant=t1 \
	-o transport="$T" nrvol
check "a uid-1000 container writes to the new volume's root" pm run --rm --network none --user 1000 \
	-v nrvol:/data localhost/zcfs-bbx:1 /bin/sh -c \
	'stat -c "%u:%g %a" /data >/data/root && echo hi >/data/f && stat -c %u:%g /data/f >/data/owner'
check "... the root it saw: 1000:1000, mode 2770" grep -qx '1000:1000 2770' "$STORE/t1/nrvol/root"
check "... its file: uid 1000, the root's group (setgid)" grep -qx 1000:1000 "$STORE/t1/nrvol/owner"
check "... on disk the tenant's uid" test "$(stat -c %u "$STORE/t1/nrvol/f")" = "$TENANT_UID"
check "pvol, created before, keeps its root (policy applies to new volumes)" pm run --rm --network none \
	--user 1000 -v pvol:/data localhost/zcfs-bbx:1 /bin/sh -c '! echo x 2>/dev/null >/data/nr'
check "podman volume rm nrvol" pm volume rm nrvol

log "remove"
check "podman volume rm pvol" pm volume rm pvol
check "gone from zcfsd" bash -c "! $ZCFS_BIN/zcfsctl --socket $SOCK volume get pvol >/dev/null 2>&1"
check "storage removed" test ! -e "$STORE/t1/pvol"
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$STORE/t1/pvol'"
check "no mount left" bash -c "! grep -q ' $W/' /proc/self/mounts"
pm rmi -f localhost/zcfs-bbx:1 >/dev/null 2>&1
finish
