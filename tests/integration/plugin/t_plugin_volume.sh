#!/usr/bin/env bash
# zcfs-volume-plugin against a real zcfsd, driven by curl --unix-socket
# (every endpoint, mount reference counting per caller ID, a plugin
# restart keeping registry and mounts, errors as HTTP 500 + Err that
# change nothing, hostile bodies, unknown top-level fields ignored as
# Docker's helpers do, CreatedAt of Get/List from the registry, a mount
# root outside the tenant's prefixes, zcfsd down or stuck (UNAVAILABLE,
# answered before Podman's 5 s, or within --zcfsd-timeout),
# the tenant's max_volumes, a volume's size (ENOSPC past it), a damaged
# registry) and by Podman's volume commands (create,
# inspect, ls, reload, rm, through a private containers.conf). Containers
# are t_plugin_podman.sh's part.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require curl setpriv
[ -x "$ZCFS_BIN/zcfs-volume-plugin" ] || fail "$ZCFS_BIN/zcfs-volume-plugin not built"

zcfsd_env 64M true
mkdir -p "$W/outside" "$W/plugins"
VPSOCK=$W/plugins/zcfs.sock
VPSTATE=$W/state/volume-plugin   # under state/: snapshot() leaves it out
VP_PID=
PM_READY=

plugin_cleanup() {
	local rc=$?
	if [ -n "$PM_READY" ]; then
		pm volume rm -af >/dev/null 2>&1
	fi
	[ -n "$VP_PID" ] && kill -TERM "$VP_PID" 2>/dev/null && wait "$VP_PID" 2>/dev/null
	[ -n "$ZCFSD_PID" ] && kill -KILL "$ZCFSD_PID" 2>/dev/null && wait "$ZCFSD_PID" 2>/dev/null
	ZCFSD_PID=
	(exit $rc)
	zcfsd_cleanup
}
trap plugin_cleanup EXIT

# vp_start [ZCFSD_SOCKET [OPTION...]]: plugin on VPSOCK, waits until it
# answers. It runs without any capability (setpriv execs it: VP_PID is the
# plugin's): every mount is zcfsd's.
vp_start() {
	local zsock=${1:-$SOCK}; shift 2>/dev/null
	setpriv --bounding-set -all --inh-caps -all --ambient-caps -all \
		"$ZCFS_BIN/zcfs-volume-plugin" --listen "$VPSOCK" --socket "$zsock" --state-dir "$VPSTATE" \
		--mount-root "$TGT" "$@" 2>>"$W/state/vp.log" &
	VP_PID=$!
	wait_for "plugin socket" 5 curl -sf --unix-socket "$VPSOCK" -X POST http://plugin/Plugin.Activate -o /dev/null ||
		{ cat "$W/state/vp.log" >&2; fail "plugin did not start"; }
}
vp_stop() { kill -TERM "$VP_PID"; wait "$VP_PID"; local rc=$?; VP_PID=; return $rc; }

# post ENDPOINT [BODY] [curl options...]: OUT = body, HTTP = status
post() {
	local ep=$1 body=${2-} res; shift 2 2>/dev/null || shift
	res=$(curl -s --unix-socket "${PSOCK:-$VPSOCK}" -X POST "http://plugin/$ep" \
		-H 'Accept: application/vnd.docker.plugins.v1.2+json' --data-binary "$body" \
		-w '\n%{http_code}' "$@")
	HTTP=${res##*$'\n'}
	OUT=${res%$'\n'*}
}
jqe() { jq -e "$@" <<<"$OUT" >/dev/null; }
# ok ENDPOINT [BODY]: 200 with an empty or absent Err
ok() { post "$@"; [ "$HTTP" = 200 ] && jqe '(.Err // "") == ""' || { echo "# $1: $HTTP $OUT"; return 1; }; }
# err CODE ENDPOINT [BODY]: 500 with Err starting with CODE
err() {
	local want=$1; shift
	post "$@"
	[ "$HTTP" = 500 ] && jqe --arg c "$want" '(.Err | type == "string") and (.Err | startswith($c))' ||
		{ echo "# $1: want 500 $want, got $HTTP $OUT"; return 1; }
}
state_now() { plugin_snapshot "$VPSTATE"; }
# nochange CMD...: CMD succeeds and files, mounts, servers, registry are as before
nochange() {
	local before r; before=$(state_now)
	"$@"; r=$?
	[ "$(state_now)" = "$before" ] || { echo "# something changed"; return 1; }
	return $r
}
is_fuse_mount() { awk -v m="$1" '$2 == m && $3 ~ /^fuse/ {f=1} END {exit !f}' /proc/self/mounts; }
not_mounted() { ! grep -q " $1 " /proc/self/mounts; }
gone_in_zcfsd() { ! ctl volume get "$1" >/dev/null 2>&1; }
T=$ZCFS_TRANSPORT

zcfsd_start
vp_start

log "handshake"
check "Activate with an empty body" ok Plugin.Activate ''
check "Implements VolumeDriver" jqe '.Implements == ["VolumeDriver"]'
check "Capabilities: scope local" ok VolumeDriver.Capabilities '{}'
check "... Scope local" jqe '.Capabilities.Scope == "local"'
check "List, empty body (as Podman sends it)" ok VolumeDriver.List ''
check "... no volumes" jqe '.Volumes == []'

log "create, get, list"
T0=$(date +%s)
check "Create c1" ok VolumeDriver.Create "{\"Name\":\"c1\",\"Opts\":{\"tenant\":\"t1\",\"size\":\"1G\",\"transport\":\"$T\"}}"
check "zcfsd has c1 for t1" test "$(vol_field c1 tenant)" = t1
check "Create c1 again (same options)" nochange ok VolumeDriver.Create "{\"Name\":\"c1\",\"Opts\":{\"tenant\":\"t1\",\"size\":\"1G\",\"transport\":\"$T\"}}"
check "Create c1 with other options" nochange err ALREADY_EXISTS VolumeDriver.Create '{"Name":"c1","Opts":{"tenant":"t1","size":"2G"}}'
check "Create without Opts (single-tenant policy)" ok VolumeDriver.Create '{"Name":"c0"}'
check "... tenant implied by zcfsd" test "$(vol_field c0 tenant)" = t1
check "Get c1" ok VolumeDriver.Get '{"Name":"c1"}'
check "... Name, no Mountpoint yet, Status from zcfsd" \
	jqe '.Volume.Name == "c1" and .Volume.Mountpoint == "" and .Volume.Status.tenant == "t1" and .Volume.Status.size == "1G" and .Volume.Status.state == "created"'
check "... CreatedAt is the creation time, RFC 3339 UTC" jqe --argjson t0 "$T0" \
	'(.Volume.CreatedAt | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")) and (.Volume.CreatedAt | fromdateiso8601) >= $t0 and (.Volume.CreatedAt | fromdateiso8601) <= now'
C1_CREATED=$(jq -r .Volume.CreatedAt <<<"$OUT")
check "List" ok VolumeDriver.List '{}'
check "... has c0 and c1" jqe '[.Volumes[].Name] | sort == ["c0","c1"]'
check "... with c1's CreatedAt ($C1_CREATED)" jqe --arg c "$C1_CREATED" '.Volumes[] | select(.Name == "c1") | .CreatedAt == $c'
check "Create with fields zcfs does not know (Labels, a future one): ignored" \
	ok VolumeDriver.Create '{"Name":"c6","Labels":{"com.example":"x"},"FutureField":[1,{"a":2}]}'
check "... created in zcfsd" test "$(vol_field c6 tenant)" = t1
check "Get with an unknown field" ok VolumeDriver.Get '{"Name":"c6","Verbose":true}'
check "Remove c6 with an unknown field" ok VolumeDriver.Remove '{"Name":"c6","Force":true}'
check "c6 gone from zcfsd" gone_in_zcfsd c6
check "Remove c0" ok VolumeDriver.Remove '{"Name":"c0"}'
check "c0 gone from zcfsd" gone_in_zcfsd c0

log "zcfsd down: UNAVAILABLE, registry and files unchanged"
vp_stop
vp_start "$W/down.sock"
check "Create -> UNAVAILABLE" nochange err UNAVAILABLE VolumeDriver.Create '{"Name":"c3","Opts":{"tenant":"t1"}}'
check "Mount c1 -> UNAVAILABLE" nochange err UNAVAILABLE VolumeDriver.Mount '{"Name":"c1","ID":"A"}'
check "... MOUNT_ROOT/TENANT it made for the mount removed again" test ! -e "$TGT/t1"
check "Remove c1 -> UNAVAILABLE" nochange err UNAVAILABLE VolumeDriver.Remove '{"Name":"c1"}'
check "Get c1 still answers, saying why zcfsd was not asked" ok VolumeDriver.Get '{"Name":"c1"}'
check "... " jqe '.Volume.Status.zcfsd | test("not reachable")'
vp_stop
vp_start
check "c1 untouched in zcfsd" test "$(vol_field c1 state)" = created

log "zcfsd stuck: the plugin answers within Podman's 5 s"
before=$(state_now)
kill -STOP "$ZCFSD_PID"
t0=$(date +%s%N)
check "Create while zcfsd does not answer -> UNAVAILABLE" err UNAVAILABLE VolumeDriver.Create '{"Name":"c4"}' -m 30
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT "$ZCFSD_PID"
check "... answered in ${ms} ms (< 5000)" test "$ms" -lt 5000
check "... changed nothing" test "$(state_now)" = "$before"
check "zcfsd answers again" wait_for "zcfsd" 5 bash -c "$ZCFS_BIN/zcfsctl --socket $SOCK status >/dev/null"
vp_stop
vp_start "$SOCK" --zcfsd-timeout 1500ms
before=$(state_now)
kill -STOP "$ZCFSD_PID"
t0=$(date +%s%N)
check "--zcfsd-timeout 1500ms: Create while zcfsd does not answer -> UNAVAILABLE" \
	err UNAVAILABLE VolumeDriver.Create '{"Name":"c4"}' -m 30
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT "$ZCFSD_PID"
check "... answered after the 1500 ms budget, not the default 4 s (${ms} ms)" test "$ms" -ge 1400 -a "$ms" -lt 3500
check "... changed nothing" test "$(state_now)" = "$before"
check "zcfsd answers again" wait_for "zcfsd" 5 bash -c "$ZCFS_BIN/zcfsctl --socket $SOCK status >/dev/null"
vp_stop
vp_start

log "tenant at max_volumes: RESOURCE_EXHAUSTED"
check "fill t1 up to its max_volumes" fill_tenant t1
check "Create -> RESOURCE_EXHAUSTED" nochange err RESOURCE_EXHAUSTED VolumeDriver.Create '{"Name":"c5","Opts":{"tenant":"t1"}}'
check "remove the fillers" unfill_tenant

log "hostile requests: 500 + Err, nothing changed"
ctl volume create foreign >/dev/null || fail "zcfsctl create foreign"
check "malformed JSON" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name": '
check "a JSON array" nochange err INVALID_ARGUMENT VolumeDriver.Create '["c2"]'
check "binary garbage" nochange err INVALID_ARGUMENT VolumeDriver.Create $'\x01\xff\xfe'
check "a known field of the wrong type" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":["c2"]}'
check "Mount with ID not a string" nochange err INVALID_ARGUMENT VolumeDriver.Mount '{"Name":"c1","ID":7}'
check "missing Name" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Opts":{"tenant":"t1"}}'
check "Name ../etc" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"../etc"}'
check "Name a/b" nochange err INVALID_ARGUMENT VolumeDriver.Remove '{"Name":"a/b"}'
check "Name with a NUL" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2\u0000x"}'
check "a duplicate key" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Name":"c3"}'
two_lengths() {
	post VolumeDriver.Create '{"Name":"c2"}' -H 'Content-Length: 13' -H 'Content-Length: 13'
	[ "$HTTP" = 400 ] || { echo "# want 400, got $HTTP $OUT"; return 1; }
}
check "two Content-Length headers: HTTP 400" nochange two_lengths
check "Opts not an object" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Opts":["x"]}'
check "Opts value not a string" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Opts":{"size":1}}'
check "unknown option" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Opts":{"colour":"red"}}'
check "bad size" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Opts":{"size":"huge"}}'
check "bad transport" nochange err INVALID_ARGUMENT VolumeDriver.Create '{"Name":"c2","Opts":{"transport":"carrier-pigeon"}}'
check "unknown tenant" nochange err NOT_FOUND VolumeDriver.Create '{"Name":"c2","Opts":{"tenant":"nosuch"}}'
check "a zcfsd volume this plugin did not create" nochange err ALREADY_EXISTS VolumeDriver.Create '{"Name":"foreign"}'
check "foreign volume cannot be removed through the plugin" bash -c "curl -s --unix-socket $VPSOCK -X POST http://plugin/VolumeDriver.Remove -d '{\"Name\":\"foreign\"}' >/dev/null; $ZCFS_BIN/zcfsctl --socket $SOCK volume get foreign >/dev/null"
big=$(head -c 100000 /dev/zero | tr '\0' a)
check "100 KB body (Content-Length)" nochange err INVALID_ARGUMENT VolumeDriver.Create "{\"Name\":\"$big\"}"
check "100 KB body (chunked)" nochange err INVALID_ARGUMENT VolumeDriver.Create "{\"Name\":\"$big\"}" -H 'Transfer-Encoding: chunked'
check "deeply nested JSON" nochange err INVALID_ARGUMENT VolumeDriver.Create "$(printf '%.0s[' $(seq 100))"
check "unknown endpoint" nochange err UNIMPLEMENTED VolumeDriver.Format '{"Name":"c1"}'
check "path traversal in the URL" nochange err UNIMPLEMENTED ../../VolumeDriver.List '{}' --path-as-is
check "GET instead of POST" nochange err INVALID_ARGUMENT VolumeDriver.List '' -X GET
check "Mount an unknown volume" nochange err NOT_FOUND VolumeDriver.Mount '{"Name":"nosuch","ID":"a"}'
check "Mount without ID" nochange err INVALID_ARGUMENT VolumeDriver.Mount '{"Name":"c1"}'
check "Path of an unknown volume" nochange err NOT_FOUND VolumeDriver.Path '{"Name":"nosuch"}'
check "Get of an unknown volume" nochange err NOT_FOUND VolumeDriver.Get '{"Name":"nosuch"}'
check "the plugin still serves" ok Plugin.Activate ''
ctl volume delete foreign >/dev/null

log "mount reference counting"
MP=$TGT/t1/c1
check "Mount c1 by caller A" ok VolumeDriver.Mount '{"Name":"c1","ID":"A"}'
check "... Mountpoint MOUNT_ROOT/TENANT/NAME" jqe --arg m "$MP" '.Mountpoint == $m'
check "... a FUSE mount" is_fuse_mount "$MP"
echo "via docker api" >"$MP/hello"
check "data lands in the tenant's storage" grep -q "via docker api" "$STORE/t1/c1/hello"
check "the volume's size (Opts size=1G) is what df shows" test "$(df --output=size -k "$MP" | tail -n 1 | tr -d ' ')" = 1048576
check "Mount by A again (idempotent)" nochange ok VolumeDriver.Mount '{"Name":"c1","ID":"A"}'
check "Mount by caller B" ok VolumeDriver.Mount '{"Name":"c1","ID":"B"}'
check "Get: two mounts, published" ok VolumeDriver.Get '{"Name":"c1"}'
check "... " jqe --arg m "$MP" '.Volume.Mountpoint == $m and .Volume.Status.mounts == 2 and .Volume.Status.state == "published"'
check "Path" ok VolumeDriver.Path '{"Name":"c1"}'
check "... the mountpoint" jqe --arg m "$MP" '.Mountpoint == $m'
check "Unmount A" ok VolumeDriver.Unmount '{"Name":"c1","ID":"A"}'
check "B still has it mounted" is_fuse_mount "$MP"
check "Remove while mounted" nochange err FAILED_PRECONDITION VolumeDriver.Remove '{"Name":"c1"}'

log "plugin restart keeps registry and mounts"
check "plugin stops on SIGTERM, exit 0" vp_stop
check "its socket is removed" test ! -e "$VPSOCK"
check "mount survives the plugin" is_fuse_mount "$MP"
vp_start
check "List after restart" ok VolumeDriver.List ''
check "... c1 with its mountpoint and the CreatedAt it had" \
	jqe --arg m "$MP" --arg c "$C1_CREATED" '.Volumes == [{"Name":"c1","Mountpoint":$m,"CreatedAt":$c}]'
check "a second plugin on the same socket refuses to start" bash -c \
	"! timeout 5 $ZCFS_BIN/zcfs-volume-plugin --listen $VPSOCK --socket $SOCK --state-dir $W/state/vp2 --mount-root $TGT 2>/dev/null"
check "... and left the live socket alone" ok Plugin.Activate ''
check "Unmount B (last)" ok VolumeDriver.Unmount '{"Name":"c1","ID":"B"}'
check "unmounted" not_mounted "$MP"
check "zcfsd: created, not published" test "$(vol_field c1 state)" = created
check "Path: no mountpoint" ok VolumeDriver.Path '{"Name":"c1"}'
check "... empty" jqe '.Mountpoint == ""'
check "Unmount B again (tolerated)" nochange ok VolumeDriver.Unmount '{"Name":"c1","ID":"B"}'
check "Unmount of an unknown volume (tolerated)" nochange ok VolumeDriver.Unmount '{"Name":"nosuch","ID":"B"}'
check "A twice + one Unmount = unmounted (IDs are a set)" bash -c '
	for i in 1 2; do curl -sf --unix-socket '"$VPSOCK"' -X POST http://plugin/VolumeDriver.Mount -d "{\"Name\":\"c1\",\"ID\":\"A\"}" >/dev/null || exit 1; done
	curl -sf --unix-socket '"$VPSOCK"' -X POST http://plugin/VolumeDriver.Unmount -d "{\"Name\":\"c1\",\"ID\":\"A\"}" >/dev/null &&
	! grep -q " '"$MP"' " /proc/self/mounts'

log "mount root outside the tenant's prefixes"
PSOCK=$W/plugins/outside.sock
"$ZCFS_BIN/zcfs-volume-plugin" --listen "$PSOCK" --socket "$SOCK" --state-dir "$W/state/vp-out" \
	--mount-root "$W/outside" 2>>"$W/state/vp-out.log" &
OUT_PID=$!
_zcfs_pids+=("$OUT_PID")
wait_for "second plugin" 5 test -S "$PSOCK"
check "Create o1" ok VolumeDriver.Create '{"Name":"o1","Opts":{"tenant":"t1"}}'
before=$(plugin_snapshot "$W/state/vp-out")
check "Mount o1 -> PERMISSION_DENIED from zcfsd" err PERMISSION_DENIED VolumeDriver.Mount '{"Name":"o1","ID":"A"}'
check "... nothing mounted" bash -c "! grep -q ' $W/outside' /proc/self/mounts"
check "... nothing changed (no MOUNT_ROOT/TENANT left behind, registry as it was)" \
	test "$(plugin_snapshot "$W/state/vp-out")" = "$before"
check "Get o1: not mounted" ok VolumeDriver.Get '{"Name":"o1"}'
check "... " jqe '.Volume.Status.mounts == 0'
check "Remove o1" ok VolumeDriver.Remove '{"Name":"o1"}'
kill -TERM "$OUT_PID"; wait "$OUT_PID" 2>/dev/null
unset PSOCK

log "damaged registry"
mkdir -p "$W/state/badreg"
echo '{"volumes": {"x": 3}}' >"$W/state/badreg/volumes.json"
check "plugin refuses to start on a damaged registry" bash -c \
	"! timeout 5 $ZCFS_BIN/zcfs-volume-plugin --listen $W/plugins/bad.sock --socket $SOCK --state-dir $W/state/badreg --mount-root $TGT 2>$W/state/bad.log"
check "... and says which entry" grep -q "entry 'x' is damaged" "$W/state/bad.log"
check "... the registry is left as it was" grep -q '"x": 3' "$W/state/badreg/volumes.json"

log "remove"
check "Remove c1" ok VolumeDriver.Remove '{"Name":"c1"}'
check "c1 gone from zcfsd" gone_in_zcfsd c1
check "c1's storage removed" test ! -e "$STORE/t1/c1"
check "c1's mountpoint dir removed" test ! -e "$MP"
check "Remove c1 again (tolerated)" nochange ok VolumeDriver.Remove '{"Name":"c1"}'

log "size"
check "Create s1 with size 16M" ok VolumeDriver.Create "{\"Name\":\"s1\",\"Opts\":{\"size\":\"16M\",\"transport\":\"$T\"}}"
check "zcfsd has the size" test "$(vol_field s1 size)" = 16777216
check "Mount s1" ok VolumeDriver.Mount '{"Name":"s1","ID":"A"}'
SMP=$TGT/t1/s1
check "df shows 16M" test "$(df --output=size -k "$SMP" | tail -n 1 | tr -d ' ')" = 16384
check "writing past the size fails with ENOSPC" bash -c "dd if=/dev/zero of='$SMP/big' bs=1M count=20 2>&1 | grep -q 'No space left'"
check "what fits was written" test "$(stat -c %s "$SMP/big")" -gt $((8 << 20))
check "Unmount s1" ok VolumeDriver.Unmount '{"Name":"s1","ID":"A"}'
check "Remove s1" ok VolumeDriver.Remove '{"Name":"s1"}'
check "s1's storage removed" test ! -e "$STORE/t1/s1"

log "transport auto: the data path that fits, and why"
check "Create a1 with transport=auto" ok VolumeDriver.Create '{"Name":"a1","Opts":{"transport":"auto"}}'
check "Mount a1 (auto never fails for io_uring's memory: it falls back)" ok VolumeDriver.Mount '{"Name":"a1","ID":"A"}'
check "Get a1: Status names the data path and why" ok VolumeDriver.Get '{"Name":"a1"}'
jq -r '.Volume.Status | "# a1: \(.data_path) because \(.data_path_reason)"' <<<"$OUT"
check "... data_path_reason given" jqe '.Volume.Status.data_path_reason | length > 0'
check "Unmount a1" ok VolumeDriver.Unmount '{"Name":"a1","ID":"A"}'
check "Remove a1" ok VolumeDriver.Remove '{"Name":"a1"}'

if ! command -v podman >/dev/null 2>&1; then
	log "podman not installed: the podman volume part is not run"
	finish
	exit
fi

log "podman volume commands"
podman_conf
pmls() { pm volume ls --format '{{.Name}}' 2>&1 | sort | tr '\n' ' '; }
check "podman volume create --driver zcfs -o tenant=t1 -o size=1G" pm volume create --driver zcfs \
	-o tenant=t1 -o size=1G -o transport="$T" pv1
check "... zcfsd has pv1 for t1" test "$(vol_field pv1 tenant)" = t1
check "podman volume inspect pv1" bash -c "podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume inspect pv1 >$W/inspect.json"
check "... driver zcfs, Status from the plugin" jq -e '.[0].Driver == "zcfs" and .[0].Status.tenant == "t1" and .[0].Status.size == "1G" and .[0].Options.tenant == "t1"' "$W/inspect.json"
check "podman volume ls" test "$(pmls)" = "pv1 "
check "create with an unknown tenant fails" bash -c "! podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume create --driver zcfs -o tenant=nosuch bad >/dev/null 2>&1"
check "... nothing in zcfsd" gone_in_zcfsd bad
check "... nothing in podman" test "$(pmls)" = "pv1 "
check "create with an unknown option fails" bash -c "! podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume create --driver zcfs -o colour=red bad >/dev/null 2>&1"
check "... nothing in zcfsd" gone_in_zcfsd bad
check "a volume created outside podman" ok VolumeDriver.Create '{"Name":"oob","Opts":{"tenant":"t1"}}'
check "podman volume reload adds it" bash -c "podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume reload 2>&1 | grep -qx oob"
check "... listed" test "$(pmls)" = "oob pv1 "
vp_stop
check "podman without the plugin: ls fails (plugin missing)" bash -c "! podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume ls >/dev/null 2>&1"
vp_start
check "plugin restarted: podman volume ls works again" test "$(pmls)" = "oob pv1 "
check "podman volume reload after the restart removes nothing" bash -c "! podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume reload 2>&1 | grep -q '^Removed'"
check "podman volume rm pv1" pm volume rm pv1
check "... gone from zcfsd" gone_in_zcfsd pv1
check "... storage removed" test ! -e "$STORE/t1/pv1"
check "Remove oob behind podman's back" ok VolumeDriver.Remove '{"Name":"oob"}'
check "podman volume reload removes it" bash -c "podman --root $W/podman/root --runroot $W/podman/run --storage-driver vfs volume reload 2>&1 | grep -qx oob"
check "... podman lists nothing" test "$(pmls)" = ""
check "no mount left" bash -c "! grep -q ' $W/' /proc/self/mounts"
finish
