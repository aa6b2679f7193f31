#!/usr/bin/env bash
# t_mount_options [devfuse] hung to its 300 s timeout under load after its
# strictatime case (issue 27): looped under stress-ng, 1 run in 30 hung
# with the test in wait(2) for a zcfs-serve (-o cache=exclusive) idle in
# fuse_dev_do_read after a successful umount. A FUSE connection ends with
# the last mount of it in any mount namespace, and a namespace made while
# the mount existed (unshare, podman, systemd-nspawn: other tests on a
# shared machine) keeps a private copy the umount does not remove. This
# shows it with `unshare -m` (the server still serves the copy after the
# umount) and that zcfs_umount (tests/lib.sh) now ends such a server:
# after 20 s it names the holders and aborts the connection. About 25 s.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd unshare
S=$(make_tmpdir)
M=$(make_tmpdir)
echo data >"$S/f"
zcfs_mount "$S" "$M" -o cache=exclusive
unshare -m --propagation private -- sh -c "sleep 60 </dev/null >/dev/null 2>&1" &
U=$!
_zcfs_pids+=("$U")
sleep 0.5
check "the copy in the other namespace reads the file" bash -c "nsenter -t $U -m cat $M/f >/dev/null"
start=$SECONDS
zcfs_umount "$M" 2>"$S.err"; rc=$?
log "zcfs_umount: rc $rc after $((SECONDS - start)) s: $(cat "$S.err")"
check "zcfs_umount returned with the server's exit 0 (not a hang)" test "$rc" = 0
check "... within 60 s (20 s wait, then the holders are looked up)" test $((SECONDS - start)) -lt 60
check "... after naming the namespace that held the copy (pid $U)" grep -q "copies in other mount namespaces: .*$U(" "$S.err"
kill "$U" 2>/dev/null
finish
