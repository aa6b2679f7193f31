#!/usr/bin/env bash
# zcfsd volumes on real disk file systems: the storage root on XFS and on
# ext4 on a loop device (backing_fs.sh), asked for project quotas. A sized
# volume's enforcement is what the storage root offers: project-quota
# where the kernel enforces project quotas (no --quota-bytes, statfs from
# the kernel), else server-count with the reason logged and in volume get
# (this host's kernel: CONFIG_XFS_QUOTA, CONFIG_QFMT_V2 missing). Either
# way writes stop at the size with ENOSPC, what was written before stays,
# df shows the size. A tenant whose policy says size_enforcement: kernel
# gets FAILED_PRECONDITION naming what the storage root lacks (where it
# lacks it) and nothing mounted; an unsized volume reports none; a
# tenant with size_enforcement: server is counted on any root.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
. "$(dirname "$0")/../helpers/backing_fs.sh"
zcfsd_require
# Volume bookkeeping, the same for every data path: once.
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
backing_fs_require xfs
backing_fs_require ext4
M=$((1024 * 1024))
size_kib() { df --output=size -k "$1" | tail -n 1 | tr -d ' '; }

policy() {	# ROOT
	local t
	{
		echo '{"admin_group": "0", "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "devfuse"}, "tenants": ['
		for t in auto:2001 kernel:2002 server:2003; do
			printf '{"name": "%s", "uid": %s, "gid": %s, "storage_root": "%s/%s", "allowed_target_prefixes": ["%s"], "default_quota": "1G", "size_enforcement": "%s"}' \
				"${t%%:*}" "${t#*:}" "${t#*:}" "$1" "${t%%:*}" "$TGT" "${t%%:*}"
			[ "$t" = server:2003 ] || echo ,
		done
		echo ']}'
	} >"$POLICY"
}

one_fs() {	# TYPE
	local type=$1 root=$W/root-$1 want why code
	backing_fs_mount "$type" "$root" 1G quota
	policy "$root"
	zcfsd_start
	if [ "$BACKING_QUOTA" = yes ]; then want=project-quota; else want=server-count; fi
	log "$type: project quotas $BACKING_QUOTA ($BACKING_QUOTA_WHY): expecting $want"

	check "$type: create v1 16M" ctlq volume create "v1$type" --tenant auto --size 16M
	check "$type: before its publish: server-count, not published yet" \
		test "$(vol_field "v1$type" size_enforcement)/$(vol_field "v1$type" size_enforcement_reason)" = "server-count/not published yet"
	check "$type: publish v1" ctlq volume publish "v1$type" "$TGT/v1$type"
	check "$type: volume get says $want" test "$(vol_field "v1$type" size_enforcement)" = $want
	check "$type: df shows the size" test "$(size_kib "$TGT/v1$type")" = $((16 * 1024))
	if [ $want = server-count ]; then
		why=$(vol_field "v1$type" size_enforcement_reason)
		check "$type: the reason names what the root lacks: $why" grep -q "without project quotas\|no quota support\|no project quotas" <<<"$why"
		check "$type: ... and the log says it" grep -q "event=size-enforcement volume=v1$type mode=server-count" "$W/zcfsd.log"
		check "$type: the server counts (--quota-bytes)" grep -q -- "--quota-bytes=$((16 * M))" "/proc/$(server_pid "v1$type")/cmdline"
		check "$type: no project id given" test "$(vol_field "v1$type" project_id)" = null
	else
		check "$type: the server does not count" bash -c "! tr '\\0' ' ' </proc/$(server_pid "v1$type")/cmdline | grep -q -- '--quota-bytes\|--count-inodes'"
		check "$type: a project id is given" test "$(vol_field "v1$type" project_id)" -gt 0
	fi
	dd if=/dev/urandom of="$TGT/v1$type/keep" bs=1M count=4 conv=fsync status=none
	sum=$(md5sum <"$TGT/v1$type/keep")
	dd if=/dev/zero of="$TGT/v1$type/fill" bs=1M count=20 conv=fsync 2>"$W/dd.err"
	check "$type: writing past 16M fails with ENOSPC or EDQUOT" grep -q "No space left on device\|quota exceeded" "$W/dd.err"
	check "$type: what was written before is intact" test "$(md5sum <"$TGT/v1$type/keep")" = "$sum"
	check "$type: the storage holds no more than the size" \
		test "$(du -s -k "$root/auto/v1$type" | cut -f1)" -le $((16 * 1024 + 64))
	check "$type: the backing file is on $type" grep -q "^$type\|^ext2/ext3" <<<"$(stat -f -c %T "$root/auto/v1$type/keep")"

	ctlq volume create "u$type" --tenant auto --size 0 && ctlq volume publish "u$type" "$TGT/u$type"
	check "$type: an unsized volume: none" test "$(vol_field "u$type" size_enforcement)" = none
	ctlq volume create "s$type" --tenant server --size 8M && ctlq volume publish "s$type" "$TGT/s$type"
	check "$type: size_enforcement server: server-count" test "$(vol_field "s$type" size_enforcement)" = server-count
	check "$type: ... the policy is the reason" grep -q "policy says size_enforcement: server" <<<"$(vol_field "s$type" size_enforcement_reason)"

	ctlq volume create "k$type" --tenant kernel --size 8M
	pub=(ctl call volume.publish "{\"id\": \"k$type\", \"target\": \"$TGT/k$type\"}")
	code=$(code_of "${pub[@]}")
	if [ $want = server-count ]; then
		check "$type: size_enforcement kernel: FAILED_PRECONDITION (got $code)" test "$code" = FAILED_PRECONDITION
		"${pub[@]}" 2>/dev/null | jq -r .error.message >"$W/k.out"
		check "$type: ... naming what the storage root lacks: $(cat "$W/k.out")" grep -q "requires kernel-enforced.*storage_root $root/kernel" "$W/k.out"
		check "$type: ... and nothing is mounted" bash -c "! grep -q ' $TGT/k$type ' /proc/self/mounts"
	else
		check "$type: size_enforcement kernel: published (got $code)" test "$code" = OK
	fi
	for v in "v1$type" "u$type" "s$type" "k$type"; do
		ctlq volume unpublish "$v" "$TGT/$v"
		ctlq volume delete "$v"
	done
	check "$type: every volume deleted" test -z "$(ctl call volume.list | jq -r '.result.volumes[].id')"
	zcfsd_kill9
	backing_fs_umount "$root"
}

zcfsd_env 64M false
one_fs xfs
one_fs ext4
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
