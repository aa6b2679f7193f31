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
warnings() { journalctl --no-pager -q -p warning -o cat "$@" | grep -v 'Failed to configure loopback network device'; }
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
