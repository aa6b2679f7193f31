#!/usr/bin/env bash
# A tenant's FUSE mount on the way to a target must not stall zcfsd
# (issue 27, "the loop hole"). The tenant (uid 2001) mounts its own FUSE
# file system with fusermount3 (zcfs-serve --transport=devfuse run as the
# tenant, allow_other) on a directory it owns under its allowed prefix,
# then stops its server (SIGSTOP). zcfsd is asked to publish a target
# below that mount, and to unpublish a target the mount was put over:
# each answer comes within 5 s, FAILED_PRECONDITION naming the FUSE mount,
# status answers meanwhile, and nothing changed (the volume stays
# published until the mount is gone, then unpublishes). The same for a
# target below one of zcfsd's own volumes whose server the tenant stopped
# (it runs as the tenant's uid), for a FUSE mount without allow_other,
# and for publish and delete of a volume whose storage directory (the
# tenant's) the tenant mounted its stopped FUSE file system on.
# Before, every one of these made zcfsd's loop wait on the stopped server
# for good (status never answered). Targets through tmpfs and overlay
# (kubelet-like paths) and a second target of a volume still publish.
#
# This machine keeps /dev/fuse 0600 and user_allow_other off, so no
# tenant can use fusermount3 here; the test runs in a private mount
# namespace where /dev/fuse is a 0666 node and /etc/fuse.conf allows
# user_allow_other (a stock Debian /dev/fuse is 0666), and /etc/passwd
# names the tenant's uid. zcfsd runs in it too. About 15 s.
if [ -z "${ZCFS_FUSE_WALK_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: command unshare not installed"; exit 77; }
	ZCFS_FUSE_WALK_NS=1 exec unshare -m --propagation private -- bash "$0" "$@"
fi
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require fusermount3 setpriv
U=$TENANT_UID

zcfsd_env 64M true
mknod "$W/fuse" c 10 229 && chmod 666 "$W/fuse" && mount --bind "$W/fuse" /dev/fuse ||
	skip "cannot give the test namespace a 0666 /dev/fuse"
printf 'user_allow_other\n' >"$W/fuse.conf" && mount --bind "$W/fuse.conf" /etc/fuse.conf ||
	skip "cannot give the test namespace a fuse.conf"
# fusermount3 needs the caller's user name
if ! getent passwd "$U" >/dev/null; then
	{ cat /etc/passwd; echo "zcfs-tenant:x:$U:$U::/nonexistent:/usr/sbin/nologin"; } >"$W/passwd" &&
		mount --bind "$W/passwd" /etc/passwd || skip "cannot name uid $U for fusermount3"
fi
zcfsd_start

STUCK=()	# pids of the tenant's servers, stopped or not
stuck_cleanup() {
	local p
	for p in "${STUCK[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
}
trap 'rc=$?; stuck_cleanup; (exit $rc); zcfsd_cleanup' EXIT
# mounts_at DIR: mountinfo's lines of the mounts on DIR
mounts_at() { awk -v m="$1" '$5 == m' /proc/self/mountinfo; }

# tenant_fuse DIR [allow]: the tenant's own FUSE mount on DIR (owned by
# it), its server then stopped; STUCK gets its pid.
tenant_fuse() {
	local dir=$1 ao=--no-allow-other pid
	[ "${2:-}" = allow ] && ao=--allow-other
	mkdir -p "$W/src-${dir##*/}" "$dir"
	chown "$U:$U" "$W/src-${dir##*/}" "$dir"
	setpriv --reuid="$U" --regid="$U" --clear-groups -- "$ZCFS_BIN/zcfs-serve" --foreground \
		--transport=devfuse $ao "$W/src-${dir##*/}" "$dir" 2>"$W/serve-${dir##*/}.log" &
	pid=$!
	STUCK+=("$pid")
	wait_for "the tenant's FUSE mount on $dir" 5 bash -c "awk -v m='$dir' '\$5 == m' /proc/self/mountinfo | grep -q ' - fuse'" ||
		{ cat "$W/serve-${dir##*/}.log"; fail "the tenant could not mount FUSE on $dir"; }
	mounts_at "$dir" | grep -q " - fuse.*user_id=$U," ||
		fail "the mount on $dir is not the tenant's"
	kill -STOP "$pid"
	LAST_STUCK=$pid
}

# timed_call NAME PARAMS: OUT = the raw answer (or "timeout"), MS = time
timed_call() {
	local t0 t1
	t0=$(date +%s%N)
	OUT=$(timeout 10 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" call "$1" "$2" 2>&1) || true
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
	[ -n "$OUT" ] || OUT=timeout
}
code() { jq -r 'if .error then .error.code else "OK" end' <<<"$OUT" 2>/dev/null || echo "UNPARSEABLE"; }
status_answers() { test "$(timeout 5 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" status --json | jq -r '.daemon | type')" = object; }

# refused DESC METHOD PARAMS: answered FAILED_PRECONDITION naming a FUSE
# mount within 5 s, status answered after it
refused() {
	local desc=$1
	timed_call "$2" "$3"
	log "$desc: $(code) after $MS ms: $(jq -r '.error.message // empty' <<<"$OUT" 2>/dev/null | cut -c1-240)"
	check "$desc: answered FAILED_PRECONDITION" test "$(code)" = FAILED_PRECONDITION
	check "$desc: answered within 5 s" test "$MS" -lt 5000
	check "$desc: the answer names the FUSE mount" grep -q "FUSE mount" <<<"$OUT"
	check "$desc: status answers" status_answers
	status_answers || { show_zcfsd_log; fail "zcfsd stopped answering"; }
}

pub() { printf '{"id":"%s","target":"%s"}' "$1" "$2"; }

# 1. A target below the tenant's stopped FUSE mount (allow_other).
tenant_fuse "$TGT/own" allow
ctlq volume create v1 --transport "$ZCFS_TRANSPORT"
# snapshot's find would look into the stopped mount: mounts and servers only
state() { grep " $W" /proc/self/mounts; pgrep -f "[z]cfs-serve .*$W/" | sort; ctl volume list; }
before=$(state)
refused "publish below the tenant's stopped FUSE mount" volume.publish "$(pub v1 "$TGT/own/t")"
check "publish below it: no mount, server or volume changed" test "$(state)" = "$before"
check "publish below it: v1 is not published" test "$(vol_field v1 'targets | length')" = 0
refused "publish of the mount's own subdirectory" volume.publish "$(pub v1 "$TGT/own/a/b")"

# 2. Without allow_other the kernel refuses root's lookups there anyway;
# zcfsd says why instead of INTERNAL "Permission denied".
tenant_fuse "$TGT/noao"
refused "publish below a FUSE mount without allow_other" volume.publish "$(pub v1 "$TGT/noao/t")"

# 3. Unpublish of a target the tenant put its stopped FUSE mount over.
mkdir -p "$TGT/own2" && chown "$U:$U" "$TGT/own2"
create_publish_or_fail v2 "$TGT/own2/t"
tenant_fuse "$TGT/own2" allow
refused "unpublish below the tenant's stopped FUSE mount" volume.unpublish "$(pub v2 "$TGT/own2/t")"
check "unpublish refused: v2 stays published there" test "$(vol_field v2 'targets[0]')" = "$TGT/own2/t"
check "unpublish refused: its mount is still there" bash -c "grep -q ' $TGT/own2/t .* - fuse.zcfs zcfs:v2 ' /proc/self/mountinfo"
check "zcfsd logged which mount" grep -q "event=unmount-refused volume=v2 target=$TGT/own2/t" "$W/zcfsd.log"
kill -CONT "$LAST_STUCK"; kill -KILL "$LAST_STUCK"; wait "$LAST_STUCK" 2>/dev/null
umount -l "$TGT/own2"
timed_call volume.unpublish "$(pub v2 "$TGT/own2/t")"
check "once the tenant's mount is gone, unpublish succeeds" test "$(code)" = OK
check "... and v2's mount is gone" bash -c "! grep -q ' $TGT/own2/t ' /proc/self/mountinfo"

# 4. A target below one of zcfsd's own volumes whose server the tenant
# stopped: its server runs as the tenant's uid, so the tenant may.
create_publish_or_fail v3 "$TGT/n"
P3=$(server_pid v3)
check "the tenant can stop its own volume's server" setpriv --reuid="$U" --regid="$U" --clear-groups -- kill -STOP "$P3"
refused "publish below a zcfs volume with a stopped server" volume.publish "$(pub v1 "$TGT/n/x")"
kill -CONT "$P3"
refused "publish below a zcfs volume with a live server" volume.publish "$(pub v1 "$TGT/n/x")"
check "a second target of v3 beside it publishes" ctlq volume publish v3 "$TGT/n2"
check "... and unpublishes" ctlq volume unpublish v3 "$TGT/n2"

# 5. Paths through tmpfs and overlay (kubelet's pod directories) work.
mkdir -p "$TGT/tmpfs" "$W/ovl/lower" "$W/ovl/upper" "$W/ovl/work" "$TGT/ovl"
mount -t tmpfs -o size=1M tmpfs "$TGT/tmpfs"
mount -t overlay overlay -o "lowerdir=$W/ovl/lower,upperdir=$W/ovl/upper,workdir=$W/ovl/work" "$TGT/ovl"
mkdir -p "$TGT/tmpfs/pods/p1/volumes" "$TGT/ovl/pods/p2"
check "publish through a tmpfs" ctlq volume publish v1 "$TGT/tmpfs/pods/p1/volumes/m"
check "a second target through an overlay" ctlq volume publish v1 "$TGT/ovl/pods/p2/m"
check "the volume answers at its second target" bash -c "echo hi >'$TGT/ovl/pods/p2/m/f' && test \"\$(cat '$TGT/tmpfs/pods/p1/volumes/m/f')\" = hi"
check "unpublish through the overlay" ctlq volume unpublish v1 "$TGT/ovl/pods/p2/m"
check "unpublish through the tmpfs" ctlq volume unpublish v1 "$TGT/tmpfs/pods/p1/volumes/m"
# 6. The tenant's stopped FUSE mount on its own storage directory (it owns
# it): publish and delete answer, refused, without asking that server.
create_publish_or_fail v6 "$TGT/v6"
ctlq volume unpublish v6 "$TGT/v6"
tenant_fuse "$STORE/t1/v6" allow
refused_any() {
	timed_call "$2" "$3"
	log "$1: $(code) after $MS ms: $(jq -r '.error.message // empty' <<<"$OUT" 2>/dev/null | cut -c1-200)"
	check "$1: refused" test "$(code)" != OK -a "$(code)" != UNPARSEABLE
	check "$1: answered within 5 s" test "$MS" -lt 5000
	check "$1: status answers" status_answers
	status_answers || { show_zcfsd_log; fail "zcfsd stopped answering"; }
}
refused_any "publish with a FUSE mount on the storage directory" volume.publish "$(pub v6 "$TGT/v6")"
refused_any "delete with a FUSE mount on the storage directory" volume.delete '{"id":"v6"}'
check "v6 is still there" ctlq volume get v6
kill -CONT "$LAST_STUCK"; kill -KILL "$LAST_STUCK"; wait "$LAST_STUCK" 2>/dev/null
umount -l "$STORE/t1/v6"
check "once it is gone, v6 deletes" ctlq volume delete v6
check "status answers at the end" status_answers
finish
