#!/usr/bin/env bash
# volume.delete removes the volume's storage tree (the tenant's: any
# size, any shape) in a child zcfsd watches by pidfd, and answers when it
# ends; zcfsd serves everyone meanwhile (issue 27). A volume with 40000
# files in its storage is deleted; its removal child is held (SIGSTOP) to
# stand for a tree that takes long: status answers, a second delete and a
# publish of the volume answer UNAVAILABLE, the volume is still listed;
# once the child goes on the first delete answers deleted=true and the
# storage is gone. Before, the removal ran in zcfsd's loop (no child:
# every tenant waited for it). A removal that fails (a mount inside the
# storage) answers FAILED_PRECONDITION and keeps the volume. About 20 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require python3

zcfsd_env 64M true
zcfsd_start
CHILD=
trap 'rc=$?; [ -n "$CHILD" ] && kill -CONT "$CHILD" 2>/dev/null; (exit $rc); zcfsd_cleanup' EXIT
status_answers() { test "$(timeout 5 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" status --json | jq -r '.daemon | type')" = object; }

create_publish_or_fail v1 "$TGT/v1"
ctlq volume unpublish v1 "$TGT/v1"
D=$STORE/t1/v1
[ -d "$D" ] || fail "no storage directory $D"
python3 - "$D" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(200):
    d = os.path.join(root, "d%03d" % i)
    os.mkdir(d)
    for j in range(200):
        open(os.path.join(d, "f%03d" % j), "w").close()
PY
log "$(find "$D" | wc -l) entries in v1's storage"

timeout 60 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" call volume.delete '{"id":"v1"}' >"$W/delete.out" 2>&1 &
DEL=$!
# the removal child: zcfsd's child running zcfsd's own image
for _ in $(seq 200); do
	CHILD=$(pgrep -P "$ZCFSD_PID" -x zcfsd | head -n 1)
	[ -n "$CHILD" ] && break
	sleep 0.01
done
check "the removal runs in a child of zcfsd" test -n "$CHILD"
[ -n "$CHILD" ] || { wait "$DEL"; cat "$W/delete.out"; fail "no removal child (removed in zcfsd's loop?)"; }
kill -STOP "$CHILD"
sleep 0.5
check "status answers while the removal is held" status_answers
check "a second delete answers UNAVAILABLE" test "$(code_of ctl call volume.delete '{"id":"v1"}')" = UNAVAILABLE
check "a publish of it answers UNAVAILABLE" \
	test "$(code_of ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$TGT/v1\"}")" = UNAVAILABLE
check "v1 is still listed" ctlq volume get v1
check "the first delete is not answered yet" kill -0 "$DEL"
kill -CONT "$CHILD"
wait "$DEL"
log "delete: $(cat "$W/delete.out")"
check "the delete answers deleted=true once the child ends" test "$(jq -r '.result.deleted' "$W/delete.out")" = true
check "v1's storage is gone" test ! -e "$D"
check "v1 is gone" test "$(code_of ctl call volume.get '{"id":"v1"}')" = NOT_FOUND
check "no removal child is left" bash -c "! pgrep -P $ZCFSD_PID -x zcfsd"

# a removal that fails keeps the volume
create_publish_or_fail v2 "$TGT/v2"
ctlq volume unpublish v2 "$TGT/v2"
mkdir "$STORE/t1/v2/m" && mount -t tmpfs -o size=1M tmpfs "$STORE/t1/v2/m"
check "a mount inside the storage: delete answers FAILED_PRECONDITION" \
	test "$(code_of ctl call volume.delete '{"id":"v2"}')" = FAILED_PRECONDITION
check "... v2 stays" ctlq volume get v2
umount "$STORE/t1/v2/m"
check "... and deletes once it is gone" test "$(code_of ctl call volume.delete '{"id":"v2"}')" = OK
check "status answers at the end" status_answers
finish
