#!/usr/bin/env bash
# kubernetes-csi's conformance suite csi-sanity (v5.3.1) against
# `zcfs-csi serve` in front of a real zcfsd, whole: Identity, Controller
# and Node specs, no -ginkgo.skip. The test fails on any failed spec and
# reports the counts; the specs csi-sanity skips by itself are those of
# capabilities zcfs does not claim (snapshots, clones, ControllerPublish,
# NodeStage, ModifyVolume, GroupController), each listed with its reason.
# csi-sanity is built offline by scripts/csi-sanity.sh (exit 77 when Go
# cannot be had). About 60 s here.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
top=$(cd "$(dirname "$0")/../../.." && pwd)
sanity=$("$top/scripts/csi-sanity.sh") || { rc=$?; [ "$rc" -eq 77 ] && skip "csi-sanity cannot be built (no Go or no shared/ sources)"; fail "building csi-sanity"; }

zcfsd_env 64M true
sed -i 's/"max_volumes": 8/"max_volumes": 40/' "$POLICY"
zcfsd_start
EP=$W/csi.sock
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id sanity-node \
	serve --endpoint "unix://$EP" 2>"$W/csi.log" &
CSIPID=$!
_zcfs_pids+=("$CSIPID")
# serving = listening and started (the socket file appears at bind already)
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi serve did not start"; }

# what a volume needs in volume_context: the tenant and the data path
printf 'tenant: t1\ntransport: %s\n' "$ZCFS_TRANSPORT" >"$W/params.yaml"
mkdir -p "$TGT/sanity"
"$sanity" -csi.endpoint "unix://$EP" -csi.mountdir "$TGT/sanity/mnt" -csi.stagingdir "$TGT/sanity/stage" \
	-csi.testvolumeparameters "$W/params.yaml" -csi.testvolumesize 67108864 -csi.testvolumeexpandsize 134217728 -ginkgo.no-color \
	-ginkgo.timeout=10m -ginkgo.v >"$W/sanity.out" 2>&1
rc=$?
sed 's/^/# /' "$W/sanity.out" | grep -E '^# (Ran |FAIL|\[FAIL\]|.*Passed.*Failed)' | head -40
ran=$(sed -n 's/^Ran \([0-9]*\) of \([0-9]*\) Specs.*/\1 \2/p' "$W/sanity.out")
res=$(grep -Eo '[0-9]+ Passed \| [0-9]+ Failed \| [0-9]+ Pending \| [0-9]+ Skipped' "$W/sanity.out" | tail -n 1)
log "csi-sanity: ran ${ran:-?} specs; $res"
check "csi-sanity exits 0" test "$rc" -eq 0
check "csi-sanity reports 0 failed" grep -q ' 0 Failed ' <<<"$res"
check "csi-sanity ran its Identity, Controller and Node specs (43 of 92 here)" test "${ran%% *}" -ge 43
# what csi-sanity skipped by itself, and why: only capabilities zcfs does not
# claim (ControllerPublish, ModifyVolume, snapshots, clones, GroupController, NodeStage)
grep -oE '^ *\[SKIPPED\] [A-Z][^[]*' "$W/sanity.out" | sed 's/^ *//; s/ *$//' | sort | uniq -c >"$W/skips"
sed 's/^/# skipped: /' "$W/skips"
check "no spec of a claimed capability skipped (CreateVolume, ListVolumes, GetCapacity, expansion, node specs)" \
	bash -c "! grep -Eiq 'CreateVolume|DeleteVolume|ListVolumes|GetCapacity|Expand|GetVolumeStats|Controller Service not provided' '$W/skips'"
[ "$rc" -eq 0 ] || { grep -B4 -A16 '\[FAILED\]' "$W/sanity.out" | head -150 | sed 's/^/# /'; tail -n 20 "$W/csi.log" | sed 's/^/# csi: /'; }
check "zcfs-csi still serving" kill -0 "$CSIPID"
kill -TERM "$CSIPID"
for _ in $(seq 100); do kill -0 "$CSIPID" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM stops zcfs-csi serve" bash -c "! kill -0 $CSIPID 2>/dev/null"
check "the socket is gone after the stop" test ! -e "$EP"
check "no zcfs volume left behind" bash -c "[ \"\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume list | jq '.volumes | length')\" = 0 ]"
check "no mount left under the sanity dirs" bash -c "! grep -q ' $TGT/sanity' /proc/self/mounts"
finish
