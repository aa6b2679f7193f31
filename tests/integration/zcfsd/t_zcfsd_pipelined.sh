#!/usr/bin/env bash
# A client may write several requests in one go; zcfsd answers them in
# order, the next one as soon as the deferred answer before it is sent
# (protocol/control.c zcfsd_control_complete serves it right there). The
# next one may delete the very volume whose publish or unpublish just
# ended, from inside the loop over the volumes that ended it
# (lifecycle/publish_wait.c, lifecycle/unpublish.c). A publish whose
# server closes its ready pipe unwritten and stays alive fails at the
# deadline (a tick), then 'volume.delete' of that volume follows in the
# same write; and an unpublish of the last target followed by its
# delete. Before the fix the walk went on from the freed volume (ASan:
# heap-use-after-free in zcfsd_publish_wait_tick; make check-asan), and
# the delete after an unpublish was told UNAVAILABLE ("being
# unpublished") by the very operation it waited for. On io_uring the
# same for ring-holder volumes, whose holder outlives the unpublish's
# answer by a moment: no zombie is left.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start_hostile

# pipeline METHOD1 PARAMS1 METHOD2 PARAMS2: both lines in one write; prints
# each answer's error code (OK when none), one per line.
pipeline() {
	/usr/bin/python3 - "$SOCK" "$@" <<-'PY'
	import json, socket, sys
	s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
	a = sys.argv[2:]
	lines = [json.dumps({"method": a[i], "params": json.loads(a[i + 1])}) for i in (0, 2)]
	s.sendall(("\n".join(lines) + "\n").encode())
	f = s.makefile("rb")
	for _ in lines:
	    r = json.loads(f.readline())
	    print(r["error"]["code"] if "error" in r else "OK")
	PY
}

for v in v0 v1 v2; do
	ctl volume create "$v" --transport "$ZCFS_TRANSPORT" >/dev/null || fail "create $v"
done
# v0 once published: the tenant's storage root exists from then on
ctlq volume publish v0 "$TGT/v0" || fail "publish v0"

echo close >"$W/mode"
out=$(pipeline volume.publish "{\"id\":\"v1\",\"target\":\"$TGT/v1\"}" volume.delete '{"id":"v1"}' 2>&1)
check "a publish failed at its deadline, then the pipelined delete of its volume ($(echo $out))" \
	test "$(echo $out)" = "INTERNAL OK"
check "zcfsd answers after it" ctlq status
ids() { ctl call volume.list '{}' | jq -r '[.result.volumes[] | .id + ":" + (.targets | length | tostring)] | sort | join(",")'; }
check "v1 is gone, v0 (published) and v2 are there ($(ids))" test "$(ids)" = "v0:1,v2:0"

echo good >"$W/mode"
ctlq volume publish v2 "$TGT/v2" || fail "publish v2"
out=$(pipeline volume.unpublish "{\"id\":\"v2\",\"target\":\"$TGT/v2\"}" volume.delete '{"id":"v2"}' 2>&1)
check "an unpublish of the last target, then the pipelined delete of its volume ($(echo $out))" \
	test "$(echo $out)" = "OK OK"
check "zcfsd answers after it" ctlq status
check "v2 is gone, v0 still published ($(ids))" test "$(ids)" = "v0:1"
# On io_uring, ring-holder volumes: the unpublish kills the holder, whose
# exit may come after the answer; the pipelined delete then freed the
# volume with its watch of the holder's pidfd still on (before the fix: 3
# holders in 10 stayed zombies, and an exit in the same epoll batch would
# have gone to freed memory).
if [ "$ZCFS_TRANSPORT" = uring ]; then
	for i in $(seq 10); do
		{ ctlq volume create "h$i" --transport uring --ring-holder &&
			ctlq volume publish "h$i" "$TGT/h$i"; } || { show_zcfsd_log; fail "publish h$i"; }
		out=$(pipeline volume.unpublish "{\"id\":\"h$i\",\"target\":\"$TGT/h$i\"}" \
			volume.delete "{\"id\":\"h$i\"}" 2>&1)
		[ "$(echo $out)" = "OK OK" ] || break
	done
	check "ring-holder volumes: unpublish then delete pipelined, $i of 10 ($(echo $out))" \
		test "$i" = 10 -a "$(echo $out)" = "OK OK"
	sleep 1
	zombies() { ps -o stat= --ppid "$ZCFSD_PID" | grep -c '^Z'; }
	check "no zombie child of zcfsd after them ($(zombies))" test "$(zombies)" = 0
fi
check "zcfsd is alive (no crash)" kill -0 "$ZCFSD_PID"
ctlq volume unpublish v0 "$TGT/v0"
finish
