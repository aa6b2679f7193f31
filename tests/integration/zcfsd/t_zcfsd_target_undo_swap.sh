#!/usr/bin/env bash
# A failed first publish removes the target directory zcfsd made for it,
# resolved without symlinks (mounts/target.c zcfsd_target_remove_created):
# the tenant's server starts with the target made and mounted, and a
# tenant who can write a parent of the target swaps a component for a
# symlink to another directory before its server fails. zcfsd, as root,
# must not follow it: before, rmdir(target) removed the empty directory of
# the same name wherever the symlink led (here $W/victim/t, root's).
# The directory left at the real place is logged event=target-left.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
# The server runs as the tenant (uid $TENANT_UID): it swaps q, which its
# parent p (the tenant's) lets it, then fails its start.
cat >"$W/serve-swap" <<SH
#!/usr/bin/env bash
case " \$* " in *" --ready-fd="*) ;; *) exec "$ZCFS_BIN/zcfs-serve" "\$@" ;; esac
if [ -e "$W/swap" ]; then
	mv "$TGT/p/q" "$TGT/p/q.real" && ln -s "$W/victim" "$TGT/p/q"
	exit 3
fi
exec "$ZCFS_BIN/zcfs-serve" "\$@"
SH
chmod 755 "$W/serve-swap"
zcfsd_start --serve "$W/serve-swap"

mkdir -p "$TGT/p/q" "$W/victim/t"
chown "$TENANT_UID" "$TGT/p"
ctl volume create v1 --transport "$ZCFS_TRANSPORT" >/dev/null || fail "create v1"
touch "$W/swap"
out=$(ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$TGT/p/q/t\"}" 2>/dev/null)
check "the publish failed: its server exited ($(jq -c .error.code <<<"$out"))" \
	test "$(jq -r '.error.code' <<<"$out")" = INTERNAL
check "a component of the target was swapped for a symlink" test -L "$TGT/p/q"
check "the victim's directory of the same name is still there" test -d "$W/victim/t"
check "the directory zcfsd made stays where it was made, unmounted" \
	bash -c "[ -d '$TGT/p/q.real/t' ] && ! mountpoint -q '$TGT/p/q.real/t'"
check "zcfsd logged what it left" grep -q "event=target-left target=\"$TGT/p/q/t\" reason=\"a symlink on the way\"" "$W/zcfsd.log"
check "the volume is not published" test "$(vol_field v1 'targets | length')" = 0

# Without a swap the failed publish removes what it made.
rm -f "$W/swap" "$TGT/p/q"
mv "$TGT/p/q.real" "$TGT/p/q"
rmdir "$TGT/p/q/t"
cat >"$W/serve-swap" <<SH
#!/usr/bin/env bash
case " \$* " in *" --ready-fd="*) exit 3 ;; esac
exec "$ZCFS_BIN/zcfs-serve" "\$@"
SH
out=$(ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$TGT/p/q/t\"}" 2>/dev/null)
check "a publish whose server fails ($(jq -c .error.code <<<"$out"))" \
	test "$(jq -r '.error.code' <<<"$out")" = INTERNAL
check "... removes the target directory it made" test ! -e "$TGT/p/q/t"
finish
