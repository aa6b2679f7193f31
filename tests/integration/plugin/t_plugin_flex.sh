#!/usr/bin/env bash
# zcfs-csi as a Kubernetes FlexVolume driver, called exactly as kubelet
# calls it: installed as <plugindir>/zcfs.io~zcfs/zcfs, argv `init`,
# `mount <dir> <json>`, `unmount <dir>`, stdout+stderr parsed together as
# one JSON object. Per-pod volumes are created on mount and deleted on
# unmount; volumeID volumes persist; readwrite=ro mounts read-only (zcfsd
# makes the mount: the driver needs no capability); `size` is what df
# shows and writes past it get ENOSPC; zcfsd down (UNAVAILABLE), the
# tenant's max_volumes (RESOURCE_EXHAUSTED) and hostile options fail with
# "Failure" and change nothing (files, mounts, servers, the plugin's lock dir).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require setpriv
[ -x "$ZCFS_BIN/zcfs-flexvolume" ] || fail "$ZCFS_BIN/zcfs-flexvolume not built"

zcfsd_env 64M true
mkdir -p "$W/outside"
zcfsd_start
# The driver as kubelet finds it (the DaemonSet's init container copies it).
PLUGDIR=$W/exec
mkdir -p "$PLUGDIR/zcfs.io~zcfs"
cp "$ZCFS_BIN/zcfs-flexvolume" "$PLUGDIR/zcfs.io~zcfs/zcfs"
DRIVER=$PLUGDIR/zcfs.io~zcfs/zcfs
export ZCFS_SOCKET=$SOCK ZCFS_CSI_STATE_DIR=$W/state/flex

# flex ARGS...: OUT = stdout+stderr (as kubelet reads it), RC
flex() { OUT=$(cd / && "$DRIVER" "$@" 2>&1 </dev/null); RC=$?; }
status_is() { jq -e --arg s "$1" '.status == $s' <<<"$OUT" >/dev/null 2>&1; }
ok_flex() { flex "$@"; status_is Success && [ "$RC" -eq 0 ] || { echo "# $1: $OUT (rc $RC)"; return 1; }; }
fail_flex() { flex "$@"; status_is Failure && [ "$RC" -eq 1 ] || { echo "# $1: $OUT (rc $RC)"; return 1; }; }
nochange() {
	local before r
	before=$(plugin_snapshot "$ZCFS_CSI_STATE_DIR"); "$@"; r=$?
	[ "$(plugin_snapshot "$ZCFS_CSI_STATE_DIR")" = "$before" ] && return $r
	echo "# changed something"; return 1
}
# root without any capability: the driver must not need one
NOCAPS="setpriv --bounding-set -all --inh-caps -all --ambient-caps -all"
jqe() { jq -e "$@" >/dev/null; }
is_fuse_mount() { awk -v m="$1" '$2 == m && $3 ~ /^fuse/ {f=1} END {exit !f}' /proc/self/mounts; }
# opts UID NAME [extra JSON]: what kubelet passes for a pod's flexVolume
opts() {
	jq -nc --arg uid "$1" --arg name "$2" --argjson extra "${3:-{\}}" --arg tr "$ZCFS_TRANSPORT" \
		'{"kubernetes.io/fsType": "", "kubernetes.io/readwrite": "rw",
		  "kubernetes.io/pod.name": "web-0", "kubernetes.io/pod.namespace": "default",
		  "kubernetes.io/pod.uid": $uid, "kubernetes.io/pvOrVolumeName": $name,
		  "kubernetes.io/serviceAccount.name": "default",
		  "kubernetes.io/secret/token": "c2VjcmV0", tenant: "t1", transport: $tr} + $extra'
}
# the mount dir kubelet creates before calling mount
mdir() { local d="$TGT/pods/$1/volumes/zcfs.io~zcfs/$2"; mkdir -p "$d"; echo "$d"; }

UID1=6a8f0c2e-1111-4a6b-9d7e-0123456789ab
check "init" ok_flex init
check "init: attach false (kubelet defaults it to true)" jqe '.capabilities.attach == false' <<<"$OUT"
check "init: nothing but one JSON object on stdout+stderr" jqe 'type == "object"' <<<"$OUT"

D1=$(mdir $UID1 scratch)
check "mount a per-pod volume" ok_flex mount "$D1" "$(opts $UID1 scratch)"
check "mount dir is a FUSE mount" is_fuse_mount "$D1"
check "volume flex-UID-NAME exists" test "$(vol_field "flex-$UID1-scratch" tenant)" = t1
echo flexdata >"$D1/f"
check "data lands in the tenant's storage" grep -q flexdata "$STORE/t1/flex-$UID1-scratch/f"
check "mount again (idempotent)" nochange ok_flex mount "$D1" "$(opts $UID1 scratch)"
check "unmount" ok_flex unmount "$D1"
check "unmounted" bash -c "! grep -q ' $D1 ' /proc/self/mounts"
check "per-pod volume deleted" bash -c "! $ZCFS_BIN/zcfsctl --socket $SOCK volume get flex-$UID1-scratch >/dev/null 2>&1"
check "its storage removed" test ! -e "$STORE/t1/flex-$UID1-scratch"
check "kubelet's mount dir left for kubelet" test -d "$D1"
check "unmount again (idempotent)" nochange ok_flex unmount "$D1"
check "unmount of a dir never mounted" nochange ok_flex unmount "$TGT/pods/none/volumes/zcfs.io~zcfs/x"

D2=$(mdir $UID1 shared)
flex_nocaps() { OUT=$(cd / && $NOCAPS "$DRIVER" "$@" 2>&1 </dev/null); RC=$?; status_is Success && [ "$RC" -eq 0 ] || { echo "# $1: $OUT (rc $RC)"; return 1; }; }
check "mount a persistent volume (volumeID) read-only, driver without capabilities" \
	flex_nocaps mount "$D2" "$(opts $UID1 shared '{"volumeID":"pv-shared","kubernetes.io/readwrite":"ro"}')"
check "mounted read-only (by zcfsd)" bash -c "grep ' $D2 ' /proc/self/mounts | grep -q ' ro,'"
check "write fails" bash -c "! echo x >'$D2/x' 2>/dev/null"
check "same dir, now read-write -> Failure" nochange fail_flex mount "$D2" "$(opts $UID1 shared '{"volumeID":"pv-shared"}')"
check "unmount the persistent volume" ok_flex unmount "$D2"
check "persistent volume kept" test "$(vol_field pv-shared state)" = created

D3=$(mdir $UID1 bad)
check "malformed options JSON" nochange fail_flex mount "$D3" '{"kubernetes.io/pod.uid": '
check "options not an object" nochange fail_flex mount "$D3" '"x"'
check "fsType ext4" nochange fail_flex mount "$D3" "$(opts $UID1 bad '{"kubernetes.io/fsType":"ext4"}')"
check "unknown option" nochange fail_flex mount "$D3" "$(opts $UID1 bad '{"colour":"red"}')"
check "volumeID ../etc" nochange fail_flex mount "$D3" "$(opts $UID1 bad '{"volumeID":"../etc"}')"
check "pod uid with a slash" nochange fail_flex mount "$D3" "$(opts "../$UID1" bad)"
check "no volumeID and no pod uid" nochange fail_flex mount "$D3" '{"tenant":"t1"}'
check "relative mount dir" nochange fail_flex mount "pods/x" "$(opts $UID1 bad)"
check "mount dir with .." nochange fail_flex mount "$TGT/pods/../../outside" "$(opts $UID1 bad)"
check "mount dir outside the tenant's prefixes" nochange fail_flex mount "$W/outside" "$(opts $UID1 bad)"
jq -r .message <<<"$OUT" | sed 's/^/# /'
check "... says PERMISSION_DENIED" jqe '.message | startswith("PERMISSION_DENIED")' <<<"$OUT"
check "unknown tenant" nochange fail_flex mount "$D3" "$(opts $UID1 bad '{"tenant":"nosuch"}')"
big=$(head -c 120000 /dev/zero | tr '\0' a)  # argv caps one argument at 128 KiB
check "large options" nochange fail_flex mount "$D3" "{\"x\":\"$big\"}"
check "mount without options -> Failure" nochange fail_flex mount "$D3"
for op in attach detach waitforattach isattached mountdevice unmountdevice getvolumename expandvolume; do
	flex $op a b c
	check "$op -> Not supported" status_is "Not supported"
done
ZCFS_SOCKET=$W/nosuch.sock check "zcfsd down: mount -> Failure" nochange fail_flex mount "$D3" "$(opts $UID1 bad)"
check "... UNAVAILABLE, still one JSON object" jqe '.status == "Failure" and (.message | startswith("UNAVAILABLE"))' <<<"$OUT"

log "size"
D4=$(mdir $UID1 sized)
check "mount a per-pod volume with size 16M" ok_flex mount "$D4" "$(opts $UID1 sized '{"size":"16M"}')"
check "zcfsd has the size" test "$(vol_field "flex-$UID1-sized" size)" = 16777216
check "df shows 16M" test "$(df --output=size -k "$D4" | tail -n 1 | tr -d ' ')" = 16384
check "writing past it fails with ENOSPC" bash -c "dd if=/dev/zero of='$D4/big' bs=1M count=20 2>&1 | grep -q 'No space left'"
check "what fits was written" test "$(stat -c %s "$D4/big")" -gt $((8 << 20))
check "unmount the sized volume" ok_flex unmount "$D4"
check "... deleted" bash -c "! $ZCFS_BIN/zcfsctl --socket $SOCK volume get flex-$UID1-sized >/dev/null 2>&1"

log "tenant at max_volumes"
check "fill t1 up to its max_volumes" fill_tenant t1
D5=$(mdir $UID1 full)
check "mount a per-pod volume -> Failure" nochange fail_flex mount "$D5" "$(opts $UID1 full)"
check "... RESOURCE_EXHAUSTED" jqe '.message | startswith("RESOURCE_EXHAUSTED")' <<<"$OUT"
check "remove the fillers" unfill_tenant

ctl volume delete pv-shared >/dev/null
check "no mount left" bash -c "! grep -q ' $W/' /proc/self/mounts"
finish
