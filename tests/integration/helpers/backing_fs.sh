# shellcheck shell=bash
# Real backing file systems for tests and benchmarks (sourced after
# ../lib.sh): XFS or ext4 made on a loop device over an image file in the
# caller's temp dir, mounted with project quotas where the kernel has them,
# plain otherwise (and saying why). Everything made here is undone by the
# EXIT trap of lib.sh (umount, losetup -d), also when the test fails.
# Call these in the test's own shell, not in $(...): the cleanup list is a
# variable of that shell.
#
#   backing_fs_require TYPE          root, losetup, mkfs.TYPE, the kernel's TYPE
#   backing_fs_mount TYPE DIR SIZE [quota]
#                                    makes DIR.img (sparse, SIZE like 2G), a loop
#                                    device on it, TYPE on that, mounted at DIR;
#                                    with "quota" asks for project quotas:
#                                    BACKING_QUOTA=yes, or no with BACKING_QUOTA_WHY
#                                    naming the missing kernel option. Sets
#                                    BACKING_DEV (the loop device).
#   backing_quota_require            exit 77 unless the last mount has project quotas
#   backing_fs_umount DIR            unmounts DIR and detaches its loop device now

BACKING_QUOTA=no
BACKING_QUOTA_WHY=
export BACKING_DEV=
_zcfs_loops=()	# "DEV DIR" pairs, undone by _zcfs_backing_cleanup (lib.sh's trap)

backing_fs_require() {
	local type=$1
	require_root
	require_cmd losetup
	require_cmd "mkfs.$type"
	case $type in xfs|ext4) ;; *) fail "backing_fs: unknown type $type";; esac
	grep -qw "$type" /proc/filesystems || modprobe "$type" 2>/dev/null ||
		skip "kernel without $type (CONFIG_$(tr a-z A-Z <<<"$type")_FS)"
	[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || skip "no loop devices (CONFIG_BLK_DEV_LOOP)"
}

# The kernel option a refused prjquota mount lacks, from what it logged.
_backing_quota_missing() {
	case $1 in
	xfs) echo "CONFIG_XFS_QUOTA (XFS refused prjquota: quota support not available in this kernel)";;
	ext4) echo "CONFIG_QUOTA and CONFIG_QFMT_V2 (ext4 refused prjquota)";;
	esac
}

_backing_mkfs() {	# TYPE DEV QUOTA
	case $1 in
	xfs) mkfs.xfs -q -f "$2";;
	ext4) if [ "$3" = quota ]; then
		mkfs.ext4 -q -F -O quota,project -E quotatype=prjquota,lazy_itable_init=0 "$2"
	else
		mkfs.ext4 -q -F -E lazy_itable_init=0 "$2"
	fi;;
	esac
}

backing_fs_mount() {
	local type=$1 dir=$2 size=$3 quota=${4:-} dev
	BACKING_QUOTA=no BACKING_QUOTA_WHY="not asked for"
	mkdir -p "$dir"
	truncate -s "$size" "$dir.img" || fail "backing_fs: image $dir.img"
	dev=$(losetup --find --show "$dir.img") || fail "backing_fs: losetup $dir.img"
	_zcfs_loops+=("$dev $dir")
	BACKING_DEV=$dev
	_backing_mkfs "$type" "$dev" "$quota" >/dev/null || fail "backing_fs: mkfs.$type $dev"
	if [ "$quota" = quota ]; then
		if mount -t "$type" -o prjquota "$dev" "$dir" 2>"$dir.mount.err"; then
			BACKING_QUOTA=yes BACKING_QUOTA_WHY=
			return 0
		fi
		BACKING_QUOTA_WHY=$(_backing_quota_missing "$type")
		log "backing_fs: $type on $dev without project quotas: $BACKING_QUOTA_WHY"
		# ext4 with the quota feature does not mount read-write without QFMT_V2
		[ "$type" = ext4 ] && { _backing_mkfs ext4 "$dev" "" >/dev/null || fail "backing_fs: mkfs.ext4 $dev"; }
	fi
	mount -t "$type" "$dev" "$dir" || fail "backing_fs: mount $type $dev $dir"
}

backing_quota_require() {
	[ "$BACKING_QUOTA" = yes ] || skip "no project quotas on this kernel: $BACKING_QUOTA_WHY"
}

_backing_undo() {	# DEV DIR
	local i
	if mountpoint -q "$2" 2>/dev/null; then
		for i in 1 2 3 4 5; do umount "$2" 2>/dev/null && break; sleep 0.2; done
		mountpoint -q "$2" 2>/dev/null && umount -l "$2" 2>/dev/null
	fi
	# A device still held (a lazy unmount) is freed by the kernel when let go.
	losetup -d "$1" 2>/dev/null
	rm -f "$2.img" "$2.mount.err"
}

backing_fs_umount() {
	local i keep=()
	for i in "${_zcfs_loops[@]}"; do
		if [ "${i#* }" = "$1" ]; then _backing_undo "${i%% *}" "${i#* }"; else keep+=("$i"); fi
	done
	_zcfs_loops=("${keep[@]}")
}

_zcfs_backing_cleanup() {
	local i
	for i in "${_zcfs_loops[@]}"; do _backing_undo "${i%% *}" "${i#* }"; done
	_zcfs_loops=()
}
