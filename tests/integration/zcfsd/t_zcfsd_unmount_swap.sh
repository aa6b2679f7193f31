#!/usr/bin/env bash
# Unpublish unmounts what zcfsd mounted, found by mount id, never a path
# re-resolved later (docs/security.md "Unmounting"):
#  1. a parent directory of a published target renamed, then unpublish:
#     the mount (now at the new name) is gone and the volume unpublished
#     (before: "unmount-skipped", the mount left and forgotten);
#  2. a parent replaced by a symlink to a directory holding an unrelated
#     root tmpfs mount of the same leaf name: unpublish removes our mount
#     at its real place and leaves the tmpfs alone;
#  3. a loop swapping a component of the target's path for a symlink to
#     the victims' directory, beside publish/unpublish of volumes there:
#     none of the 5 victim tmpfs mounts is unmounted, and no zcfs mount is
#     left that zcfsd does not record.
# Runtime: about 15 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
zmounts() { awk -v w="$W/" '$3 == "fuse.zcfs" && index($2, w) == 1 { print $2 }' /proc/self/mounts | sort; }
recorded() { ctl status --json | jq -r '.volumes[].targets[]?' 2>/dev/null | sort; }
conn_of() { vol_field "$1" conn; }
conn_mounted() { awk -v c="0:$1" '$3 == c && $9 == "fuse.zcfs"' /proc/self/mountinfo | grep -q .; }

# 1. renamed parent
mkdir -p "$TGT/p"
create_publish_or_fail v1 "$TGT/p/a"
C1=$(conn_of v1)
mv "$TGT/p" "$TGT/q"
check "after the rename the mount sits at q/a" mountpoint -q "$TGT/q/a"
out=$(ctl volume unpublish v1 "$TGT/p/a" 2>&1)
check "unpublish after the rename succeeds ($out)" test "$(vol_field v1 'targets | length')" = 0
check "... and the moved mount is gone (conn $C1)" bash -c "! awk -v c='0:$C1' '\$3 == c' /proc/self/mountinfo | grep -q ."
check "... zcfsd logged where it found it" grep -q "event=unmount-moved volume=v1 target=$TGT/p/a found_at=$TGT/q/a" "$W/zcfsd.log"

# 2. a parent swapped for a symlink to a victim's directory
mkdir -p "$W/victim/m" "$TGT/d"
mount -t tmpfs -o size=1M tmpfs "$W/victim/m" || fail "victim tmpfs"
echo precious >"$W/victim/m/file"
create_publish_or_fail v2 "$TGT/d/m"
C2=$(conn_of v2)
mv "$TGT/d" "$TGT/d.real"
ln -s "$W/victim" "$TGT/d"
out=$(ctl volume unpublish v2 "$TGT/d/m" 2>&1)
check "unpublish through a swapped parent succeeds ($out)" test "$(vol_field v2 'targets | length')" = 0
check "... our mount at its real place is gone" bash -c "! awk -v c='0:$C2' '\$3 == c' /proc/self/mountinfo | grep -q ."
check "... the victim tmpfs is untouched" test "$(cat "$W/victim/m/file" 2>&1)" = precious
rm "$TGT/d"
mv "$TGT/d.real" "$TGT/d"

# 3. the race, in a loop
ctl volume delete v1 >/dev/null && ctl volume delete v2 >/dev/null || fail "delete v1 v2"
for i in 1 2 3 4; do mkdir -p "$W/victim/v$i"; mount -t tmpfs -o size=1M tmpfs "$W/victim/v$i"; done
victims() { awk -v w="$W/victim/" '$3 == "tmpfs" && index($2, w) == 1' /proc/self/mounts | wc -l; }
check "5 victim tmpfs mounts to begin with" test "$(victims)" = 5
mkdir -p "$TGT/r"
(
	end=$((SECONDS + 8))
	while [ $SECONDS -lt $end ]; do
		mv -T "$TGT/r" "$TGT/r.real" 2>/dev/null && ln -s "$W/victim" "$TGT/r" 2>/dev/null
		sleep 0.0$((RANDOM % 3))
		rm -f "$TGT/r" 2>/dev/null; mv -T "$TGT/r.real" "$TGT/r" 2>/dev/null
		sleep 0.0$((RANDOM % 5))
	done
) &
SWAPPER=$!
_zcfs_pids+=("$SWAPPER")
# 16 rounds at least, more while the swapper runs until the loop has
# published and unpublished 6 times each (the swaps make many of them
# fail by design; a short run once got fewer than 6)
loop_count() { grep -c "event=$1 volume=r" "$W/zcfsd.log"; }
for i in $(seq 1 64); do
	if [ "$i" -gt 16 ]; then
		kill -0 "$SWAPPER" 2>/dev/null || break
		[ "$(loop_count publish)" -ge 6 ] && [ "$(loop_count unpublish)" -ge 6 ] && break
	fi
	id=r$i; leaf=v$(( (i % 4) + 1 ))
	ctl volume create "$id" --transport "$ZCFS_TRANSPORT" >/dev/null 2>&1
	ctl volume publish "$id" "$TGT/r/$leaf" >/dev/null 2>&1
	ctl volume publish "$id" "$TGT/r/m" >/dev/null 2>&1
	ctl volume unpublish "$id" "$TGT/r/m" >/dev/null 2>&1
	ctl volume unpublish "$id" "$TGT/r/$leaf" >/dev/null 2>&1
	# max_volumes is 8: a volume whose unpublish failed stays (and counts)
	ctl volume delete "$id" >/dev/null 2>&1
done
wait "$SWAPPER" 2>/dev/null
[ -L "$TGT/r" ] && rm -f "$TGT/r"
[ -d "$TGT/r.real" ] && mv -T "$TGT/r.real" "$TGT/r"
log "loop: $(grep -c 'event=publish volume=r' "$W/zcfsd.log") publishes, $(grep -c 'event=unpublish volume=r' "$W/zcfsd.log") unpublishes, $(grep -c 'event=unmount-moved volume=r' "$W/zcfsd.log") mounts found moved, $(grep -c 'event=unmount-failed volume=r' "$W/zcfsd.log") unmounts refused"
check "the loop published and unpublished (>= 6 each)" \
	test "$(grep -c 'event=publish volume=r' "$W/zcfsd.log")" -ge 6 -a "$(grep -c 'event=unpublish volume=r' "$W/zcfsd.log")" -ge 6
internal=$(grep 'event=request-failed.*method=volume\.\(un\)\?publish code=INTERNAL' "$W/zcfsd.log")
log "loop: requests failed by code: $(grep -o 'event=request-failed.*method=volume\.[a-z]* code=[A-Z_]*' "$W/zcfsd.log" | sed 's/.*method=//' | sort | uniq -c | tr -s ' \n' ' ')"
check "no publish or unpublish of the race answered INTERNAL ($(head -n 2 <<<"$internal" | sed 's/.*message=//'))" \
	test -z "$internal"
check "no victim tmpfs was unmounted ($(victims) of 5 left)" test "$(victims)" = 5
check "the victim's file is still there" test "$(cat "$W/victim/m/file" 2>&1)" = precious
# Every zcfs mount left is one zcfsd still records (a failed unpublish
# keeps its target); retrying unpublishes them all.
extra=$(comm -23 <(zmounts) <(recorded) | sed -n 's|^|unrecorded: |p' | head -n 5)
check "no zcfs mount zcfsd forgot ($extra)" test -z "$extra"
for id in $(ctl status --json | jq -r '.volumes[] | select((.targets | length) > 0) | .id'); do
	for t in $(vol_field "$id" 'targets[]'); do ctl volume unpublish "$id" "$t" >/dev/null 2>&1; done
done
check "after retries no zcfs mount is left under the work dir ($(zmounts | head -n 3 | tr '\n' ' '))" test -z "$(zmounts)"
for i in 1 2 3 4; do umount "$W/victim/v$i"; done
umount "$W/victim/m"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
