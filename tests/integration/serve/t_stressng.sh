#!/usr/bin/env bash
# stress-ng file-system stressors against the mount, with --verify where the
# stressor supports it, once as root and once as uid 1001 in a directory
# it owns. Every run must exit 0 (no verify error, no failed stressor).
# The stressor list contains only stressors that pass on plain tmpfs, as
# root and as an unprivileged user (ZCFS_TEST_NATIVE=1 re-checks that).
# STRESS_SECS sets the seconds per group (default 4).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
is_native || require_fuse
need_serve
require_cmd stress-ng
SECS=${STRESS_SECS:-4}

new_tmpdir SRC 2G
new_tmpdir MNT
new_tmpdir LOGS
chmod 755 "$LOGS"

mount_or_native "$SRC" "$MNT"
mkdir "$MNT/root" "$MNT/user"
chown 1001:1001 "$MNT/user"

# Groups run concurrently within themselves (one instance per stressor).
GROUPS_DATA=(
	"--hdd 1 --hdd-bytes 32M --hdd-opts wr-rnd,rd-rnd --hdd 1 --hdd-bytes 32M --hdd-opts wr-seq,rd-seq,fsync"
	"--iomix 1 --iomix-bytes 32M --fallocate 1 --fallocate-bytes 32M --fpunch 1 --seek 1 --seek-size 32M --sync-file 1 --sync-file-bytes 32M --copy-file 1 --copy-file-bytes 128M --readahead 1 --readahead-bytes 32M --aiol 1"
)
GROUPS_META=(
	"--dir 1 --dentry 1 --link 1 --symlink 1 --rename 1 --filename 1 --dirdeep 1 --dirdeep-inodes 2000 --dirmany 1"
	"--xattr 1 --chmod 1 --chown 1 --fstat 1 --utime 1 --access 1 --lockf 1 --flock 1 --fcntl 1 --fsize 1"
)

# stress_rc_name RC: stress-ng's meaning of its exit status (man stress-ng)
stress_rc_name() {
	case $1 in
	0) ;; 1) echo ": harness error" ;; 2) echo ": a stressor failed" ;;
	3) echo ": a stressor lacked resources" ;; 4) echo ": not implemented" ;;
	5) echo ": killed by a signal" ;; 6) echo ": unexpected exit()" ;;
	137) echo ": killed at the time limit" ;; *) echo ": ?" ;;
	esac
}

# run_group WHO DIR NAME ARGS: one stress-ng run, checked
run_group() {
	local who=$1 dir=$2 name=$3 args=$4 rc=0 pre=()
	local log="$LOGS/$name.$who.log"
	[ "$who" = root ] || pre=(setpriv --reuid=1001 --regid=1001 --clear-groups --)
	# shellcheck disable=SC2086
	(cd "$dir" && timeout -s KILL $((SECS + 60)) "${pre[@]}" stress-ng $args --timeout "${SECS}s" \
		--verify --temp-path "$dir" --metrics-brief >"$log" 2>&1) || rc=$?
	# exit 7: a bogo-ops counter was caught mid-update when a stressor
	# stopped: stress-ng's own bookkeeping, not a file system result
	[ "$rc" -eq 7 ] && { echo "# stress-ng $name as $who: exit 7 (metrics untrustworthy) taken as 0"; rc=0; }
	check "stress-ng $name as $who exits 0 (rc=$rc$(stress_rc_name "$rc"))" [ "$rc" -eq 0 ]
	local bad
	bad=$(grep -E 'fail|error|verif.*(mismatch|fail)' "$log" | grep -v -E 'passed: |failed: 0|metrics' | head -n 5)
	if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
		# what says why, wherever it is in the log, then its end
		grep -i -E 'skip|warn|abort|untrust|no resource|fail|error' "$log" | grep -v 'metrc' |
			head -n 20 | sed 's/^/#   why: /'
		sed 's/^/#   /' "$log" | grep -v -E 'dispatching|stressor +bogo|\(secs\)' | tail -n 15
	fi
	check "stress-ng $name as $who: no failures reported" [ -z "$bad" ]
	check "stress-ng $name as $who: $dir left usable" test -w "$dir"
}

# run_groups KIND GROUP...: each group as root and as uid 1001, named KIND0, KIND1...
run_groups() {
	local kind=$1 i=0 g; shift
	for g in "$@"; do
		run_group root "$MNT/root" "$kind$i" "$g"
		run_group 1001 "$MNT/user" "$kind$i" "$g"
		i=$((i + 1))
	done
}
run_groups data "${GROUPS_DATA[@]}"
run_groups meta "${GROUPS_META[@]}"

# nothing of the stress-ng runs should be left behind, and the mount and its
# backing store agree
check "mount and backing store list the same entries" \
	diff <(cd "$MNT" && find . -printf '%P %y %s\n' | sort) <(cd "$SRC" && find . -printf '%P %y %s\n' | sort)

rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
[ "$_zcfs_failed" -eq 0 ] || show_log "$MNT"
finish
