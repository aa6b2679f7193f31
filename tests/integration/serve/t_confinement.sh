#!/usr/bin/env bash
# Confinement: the (root) server must never touch anything outside SOURCE.
#
# Layout (all on one tmpfs OUT, so a server escaping SOURCE via ".." or a
# symlink lands in the sentinel tree):
#   OUT/secret/        root 0755: victim (root 0600, secret marker, user.keep
#                      xattr), public (0644), subdir/file
#   OUT/top            root 0644 file right next to SOURCE
#   OUT/vol            = SOURCE
#   MB/x/y/mnt         the mount point, under root-owned 0755 directories so a
#                      relative symlink resolved by the client lands on paths
#                      uid 1001 cannot write either
# The attackers run as uid 1001, which has no write access to OUT, MB or
# /etc natively: whatever the client kernel legitimately resolves through a
# symlink cannot change them, so any change there must come from the server.
# Checks: OUT and MB are byte-for-byte unchanged (listing with type, mode,
# owner, size, link count, mtime, ctime, sha256, xattrs), nothing named
# zcfs-escape-* appears outside SOURCE, the marker is never read, and the
# mount shows exactly the backing tree afterwards.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
is_native || require_fuse
need_serve
require_cmd getfattr
PROBE=$(need_testbin escape_probe)
RACE_SECS=${RACE_SECS:-4}

new_tmpdir OUT 256M
new_tmpdir MB
SRC=$OUT/vol
MNT=$MB/x/y/mnt
MARKER="zcfs-secret-marker-$RANDOM$RANDOM"
mkdir -p "$OUT/secret/subdir" "$SRC" "$MNT"
chmod 755 "$OUT" "$OUT/secret" "$OUT/secret/subdir" "$SRC" "$MB/x" "$MB/x/y" "$MNT"
echo "$MARKER" >"$OUT/secret/victim"; chmod 600 "$OUT/secret/victim"
setfattr -n user.keep -v "$MARKER" "$OUT/secret/victim"
echo public >"$OUT/secret/public"; chmod 644 "$OUT/secret/public"
setfattr -n user.keep -v public "$OUT/secret/public"
echo file >"$OUT/secret/subdir/file"
echo top >"$OUT/top"
setfattr -n user.keep -v top "$OUT/top"
# a file SOURCE-internal hard links could be confused with
echo inside >"$SRC/inside"

# snapshot DIR EXCLUDE...: stable description of everything under DIR
snapshot() {
	local dir=$1; shift
	local prune=() e
	for e in "$@"; do prune+=(-path "./$e" -prune -o); done
	(
		cd "$dir" || exit 1
		find . "${prune[@]}" -printf '%p %y %m %U:%G %s %n %T@ %C@ %l\n' | sort
		find . "${prune[@]}" -type f -print0 | sort -z | xargs -0 -r sha256sum
		find . "${prune[@]}" -print0 | sort -z | xargs -0 -r getfattr -h -d -m - --absolute-names 2>/dev/null
	)
}
etc_state() { stat -c '%n %a %u:%g %Y %Z' /etc /etc/passwd /etc/hostname; find /etc -maxdepth 1 -name 'zcfs-escape*'; true; }
take_snapshots() {
	snapshot "$OUT" vol >"$1.out"
	snapshot "$MB" x/y/mnt x/y/mnt.log >"$1.mb"
	etc_state >"$1.etc"
}
compare_snapshots() {
	local what=$1 ok=0 s
	for s in out mb etc; do
		if ! diff -u "$SNAP/before.$s" "$SNAP/now.$s" >"$SNAP/diff.$s"; then
			echo "# CHANGED OUTSIDE SOURCE ($what, $s):"; sed 's/^/#   /' "$SNAP/diff.$s" | head -n 40
			ok=1
		fi
	done
	return $ok
}
new_tmpdir SNAP

mount_or_native "$SRC" "$MNT"
take_snapshots "$SNAP/before"

# the attacker's own area, created through the mount
mkdir "$MNT/a" "$MNT/race"
chown 1001:1001 "$MNT/a" "$MNT/race"
A=$MNT/a
u() { setpriv --reuid=1001 --regid=1001 --clear-groups -- "$@"; }

# make_links: (re)create the symlinks the probes go through (as uid 1001,
# through the mount)
make_links() {
	u sh -c '
		cd "$1" || exit 1
		rm -rf -- l_* chain_* sub
		mkdir -p sub/deeper
		ln -s /etc l_etc
		ln -s "$2" l_outroot
		ln -s "$2/secret" l_secret
		ln -s "$2/secret/victim" l_victim
		ln -s "$2/top" l_top
		ln -s ../../secret l_rel_secret         # from the backing view: OUT/secret
		ln -s ../../top l_rel_top
		ln -s ../../../../../../../../../../.. l_rel_root
		ln -s ../../../../../../../../../..$2/secret l_rel_abs_secret
		ln -s l_secret chain_1
		ln -s chain_1 chain_2
		ln -s chain_2 chain_3
		ln -s ../l_rel_secret sub/up_rel
		ln -s ../../l_secret sub/deeper/up2
		ln -s /proc/self/root$2/secret l_proc_root
	' _ "$A" "$OUT"
}

paths=(
	l_etc l_outroot l_secret l_victim l_top l_rel_secret l_rel_top l_rel_root
	l_rel_abs_secret chain_1 chain_3 sub/up_rel sub/deeper/up2 l_proc_root
	l_outroot/secret "l_rel_root$OUT/secret" chain_3/subdir
	../../.. ../.. ../vol ../secret sub/../../../secret
	"sub/deeper/../../../../../../../../../../..$OUT/secret"
)
log "static probes through symlinks and .. walks (uid 1001)"
leak=0
for p in "${paths[@]}"; do
	make_links
	safe=
	case $p in l_etc|l_rel_root) safe=1;; esac # never lchown /etc or / via a buggy server
	u env ${safe:+ESCAPE_PROBE_SAFE=1} "$PROBE" ops "$MARKER" "$A" "$A/$p" >>"$SNAP/probe.log" 2>&1 || leak=1
done
# the mount root itself and .. from it
u env ESCAPE_PROBE_SAFE=1 "$PROBE" ops "$MARKER" "$A" "$MNT/.." "$MNT/../.." "$MNT/../../../../.." >>"$SNAP/probe.log" 2>&1 || leak=1
grep -c ' -> ok$' "$SNAP/probe.log" | sed 's/^/# probe operations that succeeded: /'
check "no probe read the secret marker" [ "$leak" -eq 0 ]
[ "$leak" -eq 0 ] || grep LEAK "$SNAP/probe.log"
take_snapshots "$SNAP/now"
check "nothing outside SOURCE changed by the static probes" compare_snapshots static

# race WHERE SNAPSHOT SWAPDIR TARGET SECS: the probe's race as uid 1001 (the
# swapper in SWAPDIR, 3 workers in MNT/race, symlinks to TARGET), then
# nothing outside SOURCE may have changed (SNAPSHOT: the comparison's name)
race() {
	local where=$1 snap=$2 swapdir=$3 target=$4 secs=$5
	check "race $where: no leak" timeout $((secs + 60)) \
		setpriv --reuid=1001 --regid=1001 --clear-groups -- \
		"$PROBE" race "$MARKER" "$swapdir" "$MNT/race" "$target" "$secs" 3
	take_snapshots "$SNAP/now"
	check "nothing outside SOURCE changed by the race $where" compare_snapshots "$snap"
}

log "race: uid 1001 swaps a directory with a symlink to OUT/secret through the mount while 3 threads work inside it (${RACE_SECS}s)"
make_links
u mkdir "$MNT/race/d"
u sh -c 'echo mine >"$1/race/d/victim"' _ "$MNT"
u setfattr -n user.keep -v mine "$MNT/race/d/victim"
race "through the mount" race-client "$MNT/race" "$OUT/secret" "$RACE_SECS"

log "race: the directory is swapped on the backing store behind the server (${RACE_SECS}s)"
# The swapper works on SOURCE directly (as uid 1001 too, it owns race/);
# the workers go through the mount.
race "behind the server" race-backing "$SRC/race" "$OUT/secret" "$RACE_SECS"

log "race: swap with a relative symlink (../../secret from the backing view)"
race "behind the server, relative symlink" race-relative "$SRC/race" "../../secret" 2

# Everything visible through the mount is what SOURCE holds, and no
# escape-named entry exists anywhere we can cheaply look.
listing() { (cd "$1" && find . -printf '%P %y %s %l\n' | sort); }
listing "$MNT" >"$SNAP/mnt.list"
listing "$SRC" >"$SNAP/src.list"
check "mount listing equals SOURCE listing" diff -u "$SNAP/src.list" "$SNAP/mnt.list"
# (no deep walk of / or /tmp: other, possibly hung, FUSE mounts live there)
strays=$( { find "$OUT" "$MB" /etc -maxdepth 4 -xdev -path "$SRC" -prune -o -path "$MNT" -prune -o \
	-name 'zcfs-escape*' -print 2>/dev/null; find / /tmp -maxdepth 1 -name 'zcfs-escape*'; } | head)
check "no zcfs-escape* entries outside SOURCE ($strays)" [ -z "$strays" ]
check "escape-named files created via the mount exist under SOURCE" \
	eval '[ -n "$(find "$SRC" -name "zcfs-escape*" -print -quit)" ]'

rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
take_snapshots "$SNAP/now"
check "nothing outside SOURCE changed at the end" compare_snapshots final
[ "$_zcfs_failed" -eq 0 ] || { show_log "$MNT"; tail -n 30 "$SNAP/probe.log"; }
finish
