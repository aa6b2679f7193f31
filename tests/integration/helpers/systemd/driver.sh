#!/bin/bash
# Runs inside the systemd-nspawn container of t_systemd.sh as
# zt-driver.service, with systemd as PID 1 and the units deploy/install.sh
# installed. Writes one "ok - ..." / "not ok - ..." line per check to
# /zt/out/result, "done" at the end, then powers the container off.
set -u
OUT=/zt/out/result
exec 2>>/zt/out/driver.log
: >"$OUT"
BIN=/opt/zcfs/bin
T=$(cat /zt/out/transport)
ctl() { "$BIN/zcfsctl" "$@"; }
res() { echo "$1" >>"$OUT"; }
check() {
	local desc=$1; shift
	if "$@" >>/zt/out/driver.log 2>&1; then res "ok - $desc"; else res "not ok - $desc"; return 1; fi
}
prop() { systemctl show -P "$2" "$1"; }
wait_for() { # wait_for SECONDS CMD...
	local n=$(($1 * 10)); shift
	while [ $n -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}
vol() { ctl volume get "$1" | jq -r ".volume.$2"; }
STORE=/var/lib/zcfs/volumes/zt/v1
# in_volume FILE: FILE of /srv/zt/v1 is on the mounted volume (its storage has it)
in_volume() { grep -q ' /srv/zt/v1 fuse' /proc/self/mounts && cmp -s "/srv/zt/v1/$1" "$STORE/$1"; }
srv_pid() { vol "$1" pid; }
# systemd's warning-or-worse journal lines about a unit (the daemons log
# to stderr at info). PrivateNetwork='s loopback setup needs CAP_NET_ADMIN,
# which systemd-nspawn does not give the container: not the unit's fault.
# The daemons' own lines carry their priority (<N>, common/log.c) and are
# checked by level where they matter, not here.
warnings() { journalctl --no-pager -q -p warning -o cat "$@" | grep -v 'Failed to configure loopback network device' |
	grep -v '^zcfs[a-z-]*: level='; }
finish() {
	journalctl --no-pager -o short-monotonic >/zt/out/journal.txt 2>&1
	cp -r /var/lib/zcfs/logs /zt/out/server-logs 2>/dev/null
	res "done"; sync; systemctl poweroff --no-block; exit 0
}
trap finish EXIT

check "zcfsd.service started (Type=notify: start returned after READY=1)" systemctl start zcfsd.service
check "zcfsd.service is active" test "$(prop zcfsd.service ActiveState)" = active
status=$(prop zcfsd.service StatusText)
res "# StatusText: $status"
check "systemctl status shows zcfsd's STATUS= line" grep -q 'volumes' <<<"$status"
# lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine's
# root (and so the container) may lack: then systemd cannot apply it
if (echo -1 >/proc/self/oom_score_adj) 2>/dev/null; then
	check "zcfsd runs with OOMScoreAdjust=-900" test "$(cat /proc/"$(prop zcfsd.service MainPID)"/oom_score_adj)" = -900
else
	res "# OOMScoreAdjust=-900 not checked: no CAP_SYS_RESOURCE here to lower oom_score_adj"
fi
check "the control socket answers" ctl status
# metrics.listen of the installed policy: the unit's RuntimeDirectory
MS=/run/zcfs/metrics.sock
mget() { curl -sf --max-time 10 --unix-socket "$1" "http://metrics$2"; }
check "zcfsd's metrics socket $MS: GET /readyz 200" mget "$MS" /readyz
check "... GET /healthz 200" mget "$MS" /healthz
check "... GET /metrics has zcfs_build_info" \
	bash -c "curl -sf --max-time 10 --unix-socket $MS http://metrics/metrics | grep -q '^zcfs_build_info{'"
check "... made 0660 (root and the admin group)" test "$(stat -c %a "$MS")" = 660
# a mount namespace of its own would hide the volumes from the host
check "zcfsd runs in the host's mount namespace" test "$(readlink /proc/"$(prop zcfsd.service MainPID)"/ns/mnt)" = "$(readlink /proc/1/ns/mnt)"
score=$(systemd-analyze security zcfsd.service 2>/dev/null | sed -n 's/.*Overall exposure level for zcfsd.service: \([0-9.]*\).*/\1/p')
res "# systemd-analyze security zcfsd.service (online): $score"

mkdir -p /srv/zt/v1
check "volume create v1 ($T)" ctl volume create v1 --transport "$T"
check "volume publish v1" ctl volume publish v1 /srv/zt/v1 || cat /var/lib/zcfs/logs/v1.log >>/zt/out/driver.log
check "the volume is mounted in the host's (container's) namespace" grep -q ' /srv/zt/v1 fuse' /proc/self/mounts
echo before >/srv/zt/v1/f
check "write through the volume" in_volume f
P1=$(srv_pid v1)
dp=$(vol v1 data_path_effective)
check "the volume's data path is $T ($dp)" test "${dp%%+*}" = "$T"
check "STATUS= follows: 1 volume published, its server up" wait_for 5 bash -c "systemctl show -P StatusText zcfsd.service | grep -q '^1 volumes, 1 published, 1 servers up'"
res "# server pid $P1, cgroup $(grep name=systemd /proc/"$P1"/cgroup 2>/dev/null || head -n 1 /proc/"$P1"/cgroup)"
check "the server runs in a scope of its own (zcfs-serve-$P1.scope)" grep -q "/system.slice/system-zcfs.slice/zcfs-serve-$P1.scope" /proc/"$P1"/cgroup
check "... which systemd knows as active" test "$(prop "zcfs-serve-$P1.scope" ActiveState)" = active
check "the server's oom_score_adj is 0 (only zcfsd is protected)" test "$(cat /proc/"$P1"/oom_score_adj)" = 0
# an open file and a writer across the restart
exec 7<>/srv/zt/v1/held
touch /zt/out/writing
( i=0; while [ -e /zt/out/writing ]; do echo "$i" >>/srv/zt/v1/log || { echo "write $i failed" >>/zt/out/writer.err; exit 1; }; i=$((i + 1)); sleep 0.02; done ) &
WRITER=$!
sleep 0.5

D1=$(prop zcfsd.service MainPID)
journal_mark=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
check "systemctl restart zcfsd" systemctl restart zcfsd.service
D2=$(prop zcfsd.service MainPID)
check "a new zcfsd ($D1 -> $D2)" test "$D2" != "$D1" -a "$D2" != 0
check "the server survived the restart (pid $P1)" kill -0 "$P1"
check "... and the new zcfsd re-adopted it" test "$(srv_pid v1)" = "$P1"
check "... still published" test "$(vol v1 state)" = published
check "the volume serves: read" bash -c 'grep -qx before /srv/zt/v1/f'
check "the volume serves: write" bash -c 'echo after >/srv/zt/v1/f2'
check "... into the volume" in_volume f2
check "the file held open across the restart still works" bash -c 'echo held >&7 && grep -qx held /srv/zt/v1/held'
sleep 0.5
rm -f /zt/out/writing
wait "$WRITER"
check "the writer never failed during the restart" test ! -s /zt/out/writer.err
check "... and wrote throughout ($(wc -l </srv/zt/v1/log) lines, in the volume)" bash -c '[ "$(wc -l </srv/zt/v1/log)" -gt 20 ] && cmp -s /srv/zt/v1/log '"$STORE"'/log'
w=$(warnings --since "$journal_mark" -u zcfsd.service)
res "# warnings of zcfsd.service during the restart: ${w:-none}"
check "no systemd warning on the restart (no left-over processes, no KillMode warning)" test -z "$w"

# a crash: Restart=always
kill -KILL "$D2"
check "zcfsd killed: Restart=always brings it back" wait_for 15 bash -c "[ \"\$(systemctl show -P MainPID zcfsd.service)\" != $D2 ] && [ \"\$(systemctl show -P ActiveState zcfsd.service)\" = active ]"
check "... the volume survived that too" in_volume f
check "... same server" test "$(srv_pid v1)" = "$P1"
check "systemctl reload zcfsd (SIGHUP: policy reload, RELOADING=1/READY=1)" systemctl reload zcfsd.service
check "... still active" test "$(prop zcfsd.service ActiveState)" = active
# stop: the servers keep serving (their scopes are not zcfsd's)
check "systemctl stop zcfsd" systemctl stop zcfsd.service
check "after stop the volume still serves" bash -c 'echo stopped >/srv/zt/v1/f3'
check "... into the volume" in_volume f3
check "systemctl start zcfsd again" systemctl start zcfsd.service
check "... re-adopted once more" test "$(srv_pid v1)" = "$P1"

# journald sorts zcfsd's lines by priority (the <N> prefix under
# JOURNAL_STREAM): a server killed by SIGSYS is an error line, a publish
# an info line; `journalctl -p err` shows the one and not the other
jmark=$(date '+%Y-%m-%d %H:%M:%S')
mkdir -p /srv/zt/v9
ctl volume create v9 --transport "$T" >/dev/null && ctl volume publish v9 /srv/zt/v9 >/dev/null
kill -SYS "$(srv_pid v9)"
wait_for 10 bash -c "journalctl -q --no-pager -u zcfsd.service --since '$jmark' -o cat | grep -q seccomp-kill"
errs=$(journalctl -q --no-pager -u zcfsd.service -p err --since "$jmark" -o cat | grep '^zcfsd: ')
res "# journalctl -u zcfsd -p err: $(head -n 3 <<<"$errs" | tr '\n' '|')"
check "journalctl -p err shows zcfsd's seccomp-kill line" grep -q 'level=error event=server-exit volume=v9 .*reason=seccomp-kill' <<<"$errs"
check "... and only zcfsd's error lines ($(grep -c . <<<"$errs"))" bash -c '! grep -v "level=\(error\|crit\|alert\|emerg\) " <<<"$1"' _ "$errs"
check "journalctl -p info has zcfsd's info lines" \
	bash -c "journalctl -q --no-pager -u zcfsd.service -p info --since '$jmark' -o cat | grep -q '^zcfsd: level=info event=publish volume=v9'"
ctl volume unpublish v9 /srv/zt/v9 >/dev/null; ctl volume delete v9 >/dev/null

# zcfsd as a Kubernetes pod (deploy/kubernetes/daemonset.yaml): no systemd
# service (INVOCATION_ID unset), --server-scopes=systemd through the
# host's /run/systemd. A transient unit stands for the pod: the "runtime"
# ends it by killing its cgroup whole (systemctl kill -s KILL). The
# servers live in scopes of their own, so the next pod's zcfsd re-adopts
# them; with --server-scopes=off a pod's server dies with it (the kill
# is real).
pod_start() { # pod_start UNIT SCOPES
	mkdir -p /run/zcfs
	systemd-run --quiet --unit="$1" --property=KillMode=control-group \
		/usr/bin/env -u INVOCATION_ID "$BIN/zcfsd" --policy /etc/zcfs/policy.d --state-dir /var/lib/zcfs \
		--socket /run/zcfs/zcfsd.sock --serve "$BIN/zcfs-serve" --foreground --server-scopes="$2" &&
		wait_for 10 ctl status
}
pod_kill() { systemctl kill -s KILL "$1.service" && wait_for 10 bash -c "! systemctl is-active -q $1.service"; }
in_pod_cgroup() { grep -q "/$2.service" /proc/"$1"/cgroup; }
check "systemctl stop zcfsd (pods take over)" systemctl stop zcfsd.service
check "pod 1 (--server-scopes=systemd) starts and answers" pod_start zt-pod1 systemd
check "... re-adopted v1 (pid $P1)" test "$(srv_pid v1)" = "$P1"
mkdir -p /srv/zt/v2
check "pod 1: volume create + publish v2" bash -c "'$BIN/zcfsctl' volume create v2 --transport '$T' && '$BIN/zcfsctl' volume publish v2 /srv/zt/v2"
P2=$(srv_pid v2)
check "v2's server (pid $P2) is in a scope of its own, not in the pod's cgroup" \
	bash -c "grep -q '/system-zcfs.slice/zcfs-serve-$P2.scope' /proc/$P2/cgroup && ! grep -q '/zt-pod1.service' /proc/$P2/cgroup"
touch /zt/out/writing2
( i=0; while [ -e /zt/out/writing2 ]; do echo "$i" >>/srv/zt/v2/log || { echo "write $i failed" >>/zt/out/writer2.err; exit 1; }; i=$((i + 1)); sleep 0.02; done ) &
WRITER2=$!
# and fio verifying what it wrote as it goes (a time_based job runs no
# final verify phase)
if command -v fio >/dev/null; then
	fio --name=podchange --filename=/srv/zt/v2/fio.dat --size=16M --rw=randwrite --bs=4k --direct=1 \
		--ioengine=psync --verify=crc32c --verify_backlog=64 --time_based --runtime=5 \
		--output-format=json --output=/zt/out/fio-pod.json >/zt/out/fio-pod.err 2>&1 &
	FIO=$!
fi
sleep 0.5
check "pod 1 killed whole (its cgroup, as a container runtime does)" pod_kill zt-pod1
check "... v1's and v2's servers lived on" kill -0 "$P1" "$P2"
check "... v2 serves with no zcfsd at all" bash -c 'echo nodaemon >/srv/zt/v2/g && grep -qx nodaemon /srv/zt/v2/g'
check "pod 2 (the next generation) starts and answers" pod_start zt-pod2 systemd
check "... re-adopted v1 and v2 (pids $P1 $P2)" test "$(srv_pid v1) $(srv_pid v2)" = "$P1 $P2"
check "... v2 published" test "$(vol v2 state)" = published
sleep 0.5
rm -f /zt/out/writing2
wait "$WRITER2"
check "v2's writer never failed across the pod change" test ! -s /zt/out/writer2.err
if [ -n "${FIO:-}" ]; then
	wait "$FIO"; frc=$?
	check "fio (4 KiB direct writes, crc32c verified during the run) across the pod change: exit $frc, no error" \
		bash -c "[ $frc = 0 ] && jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes > 0 and .jobs[0].read.io_bytes > 0' /zt/out/fio-pod.json"
else
	res "# fio not installed in the container's /usr: the pod change ran under the shell writer only"
fi
check "... and wrote throughout ($(wc -l </srv/zt/v2/log) lines, in the volume)" \
	bash -c '[ "$(wc -l </srv/zt/v2/log)" -gt 20 ] && cmp -s /srv/zt/v2/log /var/lib/zcfs/volumes/zt/v2/log'
check "pod 2 killed whole" pod_kill zt-pod2
check "pod 3 (--server-scopes=off) starts" pod_start zt-pod3 off
mkdir -p /srv/zt/v3
check "pod 3: volume create + publish v3" bash -c "'$BIN/zcfsctl' volume create v3 --transport '$T' && '$BIN/zcfsctl' volume publish v3 /srv/zt/v3"
P3=$(srv_pid v3)
check "v3's server (pid $P3) is in pod 3's cgroup" in_pod_cgroup "$P3" zt-pod3
check "pod 3 killed whole" pod_kill zt-pod3
check "... v3's server died with it (no scope), v1's and v2's did not" bash -c "! kill -0 $P3 2>/dev/null && kill -0 $P1 $P2"
check "zcfsd.service again: re-adopts v1 and v2" bash -c "systemctl start zcfsd.service && [ \"\$('$BIN/zcfsctl' volume get v1 | jq -r .volume.pid) \$('$BIN/zcfsctl' volume get v2 | jq -r .volume.pid)\" = '$P1 $P2' ]"
check "... and gives v3 back as created (its connection died with its server)" test "$(vol v3 state)" = created
check "v2 and v3 unpublished and deleted" bash -c "'$BIN/zcfsctl' volume unpublish v2 /srv/zt/v2 && '$BIN/zcfsctl' volume delete v2 && '$BIN/zcfsctl' volume delete v3"

# the volume plugin under its hardened unit
check "zcfs-volume-plugin.service started (Type=notify)" systemctl start zcfs-volume-plugin.service
check "zcfs-volume-plugin.service is active" test "$(prop zcfs-volume-plugin.service ActiveState)" = active
res "# plugin StatusText: $(prop zcfs-volume-plugin.service StatusText)"
S=/run/docker/plugins/zcfs.sock
post() { curl -sf --max-time 10 --unix-socket "$S" -X POST "http://plugin/$1" -d "$2"; }
check "Plugin.Activate on $S" bash -c "curl -sf --unix-socket $S -X POST http://plugin/Plugin.Activate | grep -q VolumeDriver"
check "VolumeDriver.Create p1" post VolumeDriver.Create '{"Name":"p1","Opts":{"transport":"'"$T"'"}}'
mp=$(post VolumeDriver.Mount '{"Name":"p1","ID":"c1"}' | jq -r .Mountpoint)
check "VolumeDriver.Mount p1 at $mp" test "$mp" = /mnt/zcfs/zt/p1
check "... mounted (zcfsd's mount, seen by the host)" grep -q " $mp fuse" /proc/self/mounts
check "... usable" bash -c "echo plugin >'$mp/x' && grep -qx plugin '$mp/x'"
check "VolumeDriver.Get has CreatedAt" bash -c "curl -sf --unix-socket $S -X POST http://plugin/VolumeDriver.Get -d '{\"Name\":\"p1\"}' | jq -e '.Volume.CreatedAt | test(\"Z$\")'"
check "VolumeDriver.Unmount p1" post VolumeDriver.Unmount '{"Name":"p1","ID":"c1"}'
check "VolumeDriver.Remove p1" post VolumeDriver.Remove '{"Name":"p1"}'
check "the plugin's registry is in its StateDirectory" test -f /var/lib/zcfs/volume-plugin/volumes.json
VM=/run/zcfs-volume-plugin/metrics.sock
check "the plugin's --metrics socket $VM: GET /readyz 200 while it serves" mget "$VM" /readyz
check "... GET /healthz 200" mget "$VM" /healthz
check "... /metrics counted the calls above (VolumeDriver.Create OK)" \
	bash -c "curl -sf --max-time 10 --unix-socket $VM http://metrics/metrics | grep -q '^zcfs_volume_plugin_requests_total{method=\"VolumeDriver.Create\",code=\"OK\"} [1-9]'"
pw=$(warnings -u zcfs-volume-plugin.service)
res "# warnings of zcfs-volume-plugin.service: ${pw:-none}"
check "no warning from the plugin's unit" test -z "$pw"
score=$(systemd-analyze security zcfs-volume-plugin.service 2>/dev/null | sed -n 's/.*Overall exposure level for zcfs-volume-plugin.service: \([0-9.]*\).*/\1/p')
res "# systemd-analyze security zcfs-volume-plugin.service (online): $score"
check "systemctl stop zcfs-volume-plugin" systemctl stop zcfs-volume-plugin.service

exec 7>&-
check "volume unpublish v1" ctl volume unpublish v1 /srv/zt/v1
cp /var/lib/zcfs/logs/v1.log /zt/out/v1.log 2>/dev/null
check "volume delete v1" ctl volume delete v1
check "the server's scope is gone with it" wait_for 10 bash -c "! systemctl is-active -q zcfs-serve-$P1.scope"
