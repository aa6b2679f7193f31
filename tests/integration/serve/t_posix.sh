#!/usr/bin/env bash
# POSIX conformance of zcfs-serve with posix_check (tests/integration/helpers/posix_check.c):
#  1. on a native tmpfs directory, without FUSE: proves the suite's own
#     expectations (Linux tmpfs is the reference);
#  2. through a default zcfs mount (allow_other, default_permissions,
#     native ownership), with the zcfs-only group hidden-xattr;
#  3. through an --ownership=xattr mount whose backing directory belongs to
#     the tenant uid 1500; then a file made by uid 1001 through the mount must
#     carry user.containers.override_stat "1001:1001:MODE:file" on the
#     backing file.
# POSIX_CHECK_ONLY=group,group limits posix_check to those groups.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd getfattr
require_cmd setpriv

PC="$ZCFS_TESTBIN/posix_check"
[ -x "$PC" ] || fail "$PC not built (run make)"
[ -x "$ZCFS_BIN/zcfs-serve" ] || fail "$ZCFS_BIN/zcfs-serve not built (run make)"
only=()
[ -n "${POSIX_CHECK_ONLY:-}" ] && only=(--only "$POSIX_CHECK_ONLY")
XATTR=user.containers.override_stat

# tmpdir VAR [size]: make_tmpdir in this shell, not in a $(...) subshell, so
# its tmpfs and directory are registered for lib.sh's cleanup at exit.
tmpdir() {
	local f
	f=$(mktemp /tmp/zcfs-test.name.XXXXXX) || fail "mktemp"
	make_tmpdir "${@:2}" >"$f"
	printf -v "$1" %s "$(cat "$f")"
	rm -f "$f"
	[ -d "${!1}" ] || fail "make_tmpdir"
}

# run_pc LABEL ARGS...: runs posix_check; its per-check lines go to stdout
# unchanged, its closing line becomes a comment; one check for the run.
run_pc() {
	local label=$1 out rc summary; shift
	log "posix_check $* ($label)"
	out=$(mktemp /tmp/zcfs-test.pc.XXXXXX)
	_zcfs_dirs+=("$out")
	timeout -k 5 150 "$PC" "${only[@]}" "$@" >"$out" 2>&1
	rc=$?
	summary=$(tail -n 1 "$out")
	sed '$s/^/# posix_check /' "$out"
	grep '^not ok' "$out" | sed "s/^/# [$label] /"
	check "posix_check on $label: $summary (rc=$rc)" [ "$rc" -eq 0 ]
}

# remount_check LABEL SRC MNT [opts]: MNT is mounted from SRC with opts and
# holds own/f made by uid 1001; add a device node, remount, and check that
# owners, modes, types and rdev survived the server restart.
remount_check() {
	local label=$1 src=$2 mnt=$3 rc; shift 3
	mknod "$mnt/own/cdev" c 1 3 && chown 1002:1003 "$mnt/own/cdev" && chmod 640 "$mnt/own/cdev"
	as_user 1001 mkdir "$mnt/own/sub"
	chmod 2750 "$mnt/own/sub"
	rc=0; zcfs_umount "$mnt" || rc=$?
	check "$label: server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || sed 's/^/# server: /' "$mnt.log" | tail -n 20
	zcfs_mount "$src" "$mnt" "$@"
	check "$label: after remount uid 1001's file is 1001:1001 0644 ($(stat -c '%u:%g %a' "$mnt/own/f" 2>&1))" \
		[ "$(stat -c '%u:%g %a' "$mnt/own/f" 2>&1)" = "1001:1001 644" ]
	check "$label: after remount the char device is 1002:1003 640 1:3 ($(stat -c '%u:%g %a %F %t:%T' "$mnt/own/cdev" 2>&1))" \
		[ "$(stat -c '%u:%g %a %F %t:%T' "$mnt/own/cdev" 2>&1)" = "1002:1003 640 character special file 1:3" ]
	check "$label: after remount the set-gid dir is 1001:1001 2750 ($(stat -c '%u:%g %a' "$mnt/own/sub" 2>&1))" \
		[ "$(stat -c '%u:%g %a' "$mnt/own/sub" 2>&1)" = "1001:1001 2750" ]
	check "$label: after remount the data is intact" [ "$(cat "$mnt/own/f" 2>&1)" = made-by-1001 ]
	rc=0; zcfs_umount "$mnt" || rc=$?
	check "$label: server exits 0 after the second umount (rc=$rc)" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || sed 's/^/# server: /' "$mnt.log" | tail -n 20
}

# 1. native tmpfs: the suite must pass on the reference file system
tmpdir NAT 6G
run_pc "native tmpfs" "$NAT"

# 2. default zcfs mount
tmpdir SRC 6G
tmpdir MNT
zcfs_mount "$SRC" "$MNT"
run_pc "zcfs (default options)" --zcfs "$MNT"
mkdir "$MNT/own" && chmod 1777 "$MNT/own"
as_user 1001 sh -c "echo made-by-1001 > '$MNT/own/f'"
check "default mount: uid 1001's file shows 1001:1001 through the mount" \
	[ "$(stat -c %u:%g "$MNT/own/f" 2>&1)" = 1001:1001 ]
check "default mount (native ownership as root): backing file owned by 1001:1001" \
	[ "$(stat -c %u:%g "$SRC/own/f" 2>&1)" = 1001:1001 ]
remount_check "default mount" "$SRC" "$MNT"

# 3. --ownership=xattr mount of a backing dir owned by the tenant uid 1500
tmpdir SRC2 6G
tmpdir MNT2
chown 1500:1500 "$SRC2"
zcfs_mount "$SRC2" "$MNT2" --ownership=xattr
run_pc "zcfs --ownership=xattr" --zcfs "$MNT2"
mkdir "$MNT2/own" && chmod 1777 "$MNT2/own"
as_user 1001 sh -c "echo made-by-1001 > '$MNT2/own/f' && mkdir '$MNT2/own/d'"
check "xattr mount: uid 1001's file shows 1001:1001 through the mount" \
	[ "$(stat -c %u:%g "$MNT2/own/f" 2>&1)" = 1001:1001 ]
check "xattr mount: $XATTR hidden from getfattr through the mount" \
	eval "! getfattr -n $XATTR '$MNT2/own/f' >/dev/null 2>&1"
rec=$(getfattr --absolute-names --only-values -n "$XATTR" "$SRC2/own/f" 2>&1)
log "backing record of own/f: '$rec'; backing owner $(stat -c %u:%g "$SRC2/own/f")"
check "xattr mount: backing file's $XATTR starts with 1001: ('$rec')" [ "${rec#1001:}" != "$rec" ]
check "xattr mount: backing file's record is 1001:1001:MODE:file ('$rec')" \
	eval "[[ '$rec' =~ ^1001:1001:[0-7]+:file$ ]]"
rec=$(getfattr --absolute-names --only-values -n "$XATTR" "$SRC2/own/d" 2>&1)
check "xattr mount: backing directory's record is 1001:1001:MODE:dir ('$rec')" \
	eval "[[ '$rec' =~ ^1001:1001:[0-7]+:dir$ ]]"
remount_check "xattr mount" "$SRC2" "$MNT2" --ownership=xattr
rec=$(getfattr --absolute-names --only-values -n "$XATTR" "$SRC2/own/cdev" 2>&1)
check "xattr mount: device node's record is 1002:1003:MODE:char-1-3 ('$rec')" \
	eval "[[ '$rec' =~ ^1002:1003:[0-7]+:char-1-3$ ]]"
check "xattr mount: device node is not a real device on the backing store ($(stat -c %F "$SRC2/own/cdev" 2>&1))" \
	[ "$(stat -c %F "$SRC2/own/cdev" 2>&1)" != "character special file" ]

# 4. each cache mode and kernel passthrough: the whole suite per mode
for mode in "--cache=exclusive --no-writeback" "--cache=exclusive" "--cache=none" "--passthrough"; do
	tmpdir S 6G
	tmpdir M
	# shellcheck disable=SC2086
	zcfs_mount "$S" "$M" $mode
	run_pc "zcfs $mode" --zcfs "$M"
	rc=0; zcfs_umount "$M" || rc=$?
	check "zcfs $mode: server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
done

# 5. an unprivileged server, as zcfsd runs them: mounted by root, served
#    by uid 1500 with no capabilities and --ownership=xattr on fd 3.
tmpdir SRC3 6G
tmpdir MNT3
chown 1500:1500 "$SRC3"
"$ZCFS_TESTBIN/mountfd" "$SRC3" "$MNT3" setpriv --reuid=1500 --regid=1500 --clear-groups \
	--inh-caps=-all --bounding-set=-all --no-new-privs \
	"$ZCFS_BIN/zcfs-serve" --foreground --fd=3 --ownership=xattr --transport="$ZCFS_TRANSPORT" \
	"$SRC3" "$MNT3" 2>"$MNT3.log" &
ZCFS_PID=$!
_zcfs_pids+=("$ZCFS_PID")
_zcfs_mounts+=("$MNT3")
# Wait until mountfd has mounted and setpriv has exec'ed the server: only
# then is /proc/PID the server's.
for _ in $(seq 100); do
	grep -q " $MNT3 fuse" /proc/self/mounts &&
		[ "$(readlink "/proc/$ZCFS_PID/exe" 2>/dev/null)" = "$(readlink -f "$ZCFS_BIN/zcfs-serve")" ] && break
	sleep 0.05
done
capeff=$(awk '/^CapEff/ {print $2}' "/proc/$ZCFS_PID/status" 2>/dev/null)
check "unprivileged server: CapEff is 0 ($capeff)" [ "$capeff" = 0000000000000000 ]
check "unprivileged server runs as uid 1500" [ "$(stat -c %u "/proc/$ZCFS_PID")" = 1500 ]
run_pc "zcfs unprivileged --ownership=xattr" --zcfs "$MNT3"
chmod 1777 "$MNT3"
as_user 1001 sh -c "echo x > '$MNT3/by1001'"
check "unprivileged server: client 1001's file is 1001:1001 through the mount" \
	[ "$(stat -c %u:%g "$MNT3/by1001" 2>&1)" = 1001:1001 ]
check "unprivileged server: the backing file belongs to the tenant 1500" \
	[ "$(stat -c %u:%g "$SRC3/by1001" 2>&1)" = 1500:1500 ]
umount "$MNT3"
rc=0; wait "$ZCFS_PID" || rc=$?
check "unprivileged server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]

finish
