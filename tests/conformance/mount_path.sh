# shellcheck shell=bash
# conformance_mount PATH NAME: mounts one data path for an external suite
# (sourced by pjdfstest.sh and fsx.sh after ../lib.sh) and sets M, the
# mount point; everything is undone by lib.sh's EXIT trap.
# PATH: devfuse | uring | passthrough | exclusive (uring with
# --cache=exclusive) (zcfs-serve as root, native ownership) | zcfsd (a
# volume NAME published by a real zcfsd: sandboxed server as the tenant,
# --ownership=xattr, exclusive cache, io_uring when the kernel has it) |
# zcfsd-xfs, zcfsd-ext4 (the same with the storage root on XFS / ext4 on a
# loop device, project quotas where the kernel has them: a sized volume,
# data through the server) | zcfsd-xfs-pt, zcfsd-ext4-pt (the same volume
# of a tenant with data_paths.passthrough: with project quotas the sized
# volume keeps kernel passthrough) | peer (libfuse passthrough_hp
# --nopassthrough -o io_uring, PEER_BIN) | peerpt (passthrough_hp, kernel
# passthrough) | uring-stock, bufpool, zerocopy (zcfs-serve on io_uring
# with --buffer-pool=off --zero-copy=off, --buffer-pool=registered
# --zero-copy=off, --zero-copy=on: Linux >= 7.3). For zcfsd paths it sets vol: "size_enforcement=...
# passthrough=... data_path=..." from volume get.
# ZCFS_REQUIRE_PROJQUOTA=1: the zcfsd-xfs*/zcfsd-ext4* paths fail unless the
# volume's size is enforced by a project quota (and, for -pt, passthrough
# is on): the 7.3 guest's run (scripts/projquota-guest-test.sh).
conformance_mount() {
	local path=$1 name=$2 fs S
	vol=
	S=$(make_tmpdir 4G)
	M=$(make_tmpdir)
	case $path in
	devfuse) ZCFS_TRANSPORT=devfuse zcfs_mount "$S" "$M";;
	uring) uring_on || skip "kernel without FUSE-over-io_uring"; ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M";;
	exclusive) uring_on || skip "kernel without FUSE-over-io_uring"
		ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M" --cache=exclusive;;
	passthrough) ZCFS_TRANSPORT=devfuse zcfs_mount "$S" "$M" --passthrough;;
	# Linux >= 7.3 (buffer pools): stock entries, a registered pool
	# without zero-copy, zero-copy on every open
	uring-stock|bufpool|zerocopy)
		uring_on || skip "kernel without FUSE-over-io_uring"
		case $path in
		uring-stock) ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M" --buffer-pool=off --zero-copy=off;;
		bufpool) ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M" --buffer-pool=registered --zero-copy=off;;
		zerocopy) ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M" --zero-copy=on;;
		esac;;
	peer|peerpt)
		[ -x "${PEER_BIN:-}" ] || skip "no passthrough_hp (PEER_BIN)"
		peer_opts=(--nopassthrough -o io_uring)
		if [ "$path" = peerpt ]; then peer_opts=(); else uring_on || skip "kernel without FUSE-over-io_uring"; fi
		"$PEER_BIN" "${peer_opts[@]}" -o allow_other,default_permissions "$S" "$M" 2>"$M.log" &
		_zcfs_pids+=($!); _zcfs_mounts+=("$M")
		for _ in $(seq 100); do grep -q " $M fuse" /proc/self/mounts && break; sleep 0.05; done;;
	zcfsd|zcfsd-xfs|zcfsd-ext4|zcfsd-xfs-pt|zcfsd-ext4-pt)
		# shellcheck source=../integration/helpers/zcfsd_lib.sh
		. "$_conf_here/../integration/helpers/zcfsd_lib.sh"
		# shellcheck source=../integration/helpers/backing_fs.sh
		. "$_conf_here/../integration/helpers/backing_fs.sh"
		trap zcfsd_quiet_cleanup EXIT
		if uring_on; then ZCFS_TRANSPORT=uring; else ZCFS_TRANSPORT=devfuse; fi
		zcfsd_require
		zcfsd_env 64M "$([ $ZCFS_TRANSPORT = uring ] && echo true || echo false)"
		# zcfsd-xfs, zcfsd-ext4: the storage root on that file system (a loop
		# device), with project quotas where the kernel has them; the volume
		# then has a size (the tenant's default_quota, 1G).
		fs=${path#zcfsd}; fs=${fs#-}; fs=${fs%-pt}
		if [ -n "$fs" ]; then
			backing_fs_require "$fs"
			backing_fs_mount "$fs" "$STORE" 3G quota
			log "storage root on $fs, project quotas: $BACKING_QUOTA $BACKING_QUOTA_WHY"
			[ "${ZCFS_REQUIRE_PROJQUOTA:-0}" = 1 ] && [ "$BACKING_QUOTA" != yes ] &&
				fail "$path: no project quotas: $BACKING_QUOTA_WHY"
		fi
		# -pt: the tenant may use kernel passthrough (write_policy's is off)
		if [ "${path%-pt}" != "$path" ]; then
			jq '.tenants[0].data_paths.passthrough = true' "$POLICY" >"$POLICY.new" &&
				mv "$POLICY.new" "$POLICY" || fail "policy: passthrough"
		fi
		zcfsd_start
		M=$TGT/$name
		mkdir -p "$M"
		# The suite runs as root with its cwd in the volume root and switches
		# to uids such as 65534 that must search it (rename/21.t renames names
		# right in the cwd). A volume root is the tenant's, 0700, unless
		# volume.create says otherwise: make it root's 0755, like the
		# standalone paths' source directories and a freshly made fs.
		ctlq call volume.create "{\"id\": \"$name\", \"transport\": \"$ZCFS_TRANSPORT\", \"uid\": 0, \"gid\": 0, \"mode\": \"0755\"}" ||
			{ show_zcfsd_log; fail "volume.create $name"; }
		ctlq volume publish "$name" "$M" || { show_zcfsd_log; fail "publish $name"; }
		# what the volume runs as, for the summary (the server reports
		# passthrough once its INIT is done)
		for _ in $(seq 100); do
			[ "${path%-pt}" = "$path" ] && break
			[ "$(ctl volume get "$name" | jq -r .volume.passthrough.state)" = on ] && break
			sleep 0.1
		done
		vol=$(ctl volume get "$name" | jq -r '.volume | "size_enforcement=\(.size_enforcement) passthrough=\(.passthrough.state) data_path=\(.data_path_effective)"')
		log "volume $name: $vol"
		if [ "${ZCFS_REQUIRE_PROJQUOTA:-0}" = 1 ] && [ -n "$fs" ]; then
			case $vol in *size_enforcement=project-quota*) ;; *) fail "$path: not project-quota: $vol";; esac
			if [ "${path%-pt}" != "$path" ]; then
				case $vol in *passthrough=on*) ;; *) fail "$path: passthrough not on: $vol";; esac
			fi
		fi;;
	*) echo "conformance_mount: unknown path $path" >&2; exit 2;;
	esac
	grep -q " $M fuse" /proc/self/mounts || fail "$path: nothing mounted at $M"
}
uring_on() { [ -e /sys/module/fuse/parameters/enable_uring ] && echo Y >/sys/module/fuse/parameters/enable_uring; }
_conf_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
