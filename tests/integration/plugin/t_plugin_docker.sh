#!/usr/bin/env bash
# The Docker managed plugin against a real dockerd: the tree deploy/install.sh
# installs (PREFIX/lib/zcfs/docker-plugin, made by
# scripts/make-docker-plugin.sh as `make docker-plugin` makes it:
# deploy/docker/config.json and a rootfs of zcfs-volume-plugin and its
# libraries), with the command install.sh prints, through `docker plugin
# create`, `set` (zcfsd's socket directory, dockerd's data root) and
# `enable`; `docker volume create -d zcfs`; a `docker run` is refused by
# zcfsd (naming the host path) until the tenant's allowed_target_prefixes
# hold the plugin's DATA_ROOT/plugins/ID/propagated-mount (policy reload);
# then `docker run -u 1000 -v` writes to the volume, whose root the
# tenant's volume_root (policy) makes 1000:1000 2770; zcfsd mounted it
# where dockerd looks (DATA_ROOT/plugins/ID/propagated-mount/TENANT/NAME),
# not at the plugin's own /mnt/zcfs; the last
# container's exit unmounts it, `docker volume rm` removes it, the plugin
# is disabled and removed. dockerd runs with its own --data-root,
# --exec-root, --pidfile and -H socket under the test's directory, no
# bridge and no iptables (vfs storage), and is stopped with everything it
# mounted at exit. The image is `docker import` of a busybox-static root
# (no registry is reached). Exits 77 only where dockerd cannot run.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require dockerd containerd runc
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker) || skip "docker CLI not installed"
require_static_busybox
[ -x "$ZCFS_BIN/zcfs-volume-plugin" ] || fail "$ZCFS_BIN/zcfs-volume-plugin not built"

zcfsd_env 64M true
# zcfsd's socket in a directory of its own: the plugin gets that
# directory bind-mounted, not the whole test directory.
mkdir -p "$W/run"
SOCK=$W/run/zcfsd.sock
export ZCFS_SOCKET=$SOCK
DROOT=$W/docker
jq '.tenants[0].volume_root = {"uid": 1000, "gid": 1000, "mode": "0770", "setgid": true}' \
	"$POLICY" >"$W/p.json" && mv "$W/p.json" "$POLICY"
DOCKERD_PID=
export DOCKER_CONFIG=$W/docker-cli	# the CLI's config, not root's ~/.docker
dk() { "$DOCKER" -H "unix://$W/docker.sock" "$@"; }

# Everything dockerd and its containerd started carries W in its command
# line (sockets, state, shims): those pids, and only those.
docker_pids() { pgrep -f -- "$W/(docker|dexec)" 2>/dev/null; }

docker_cleanup() {
	local rc=$? p
	if [ -n "$DOCKERD_PID" ]; then
		# shellcheck disable=SC2046 # container ids, one per word
		dk rm -f $(dk ps -aq 2>/dev/null) >/dev/null 2>&1
		dk volume rm -f dvol >/dev/null 2>&1
		dk plugin disable -f zcfs >/dev/null 2>&1
		dk plugin rm -f zcfs >/dev/null 2>&1
		kill -TERM "$DOCKERD_PID" 2>/dev/null
		wait_for "dockerd to stop" 20 bash -c "! kill -0 $DOCKERD_PID 2>/dev/null"
		kill -KILL "$DOCKERD_PID" 2>/dev/null
		wait "$DOCKERD_PID" 2>/dev/null
		for p in $(docker_pids); do kill -KILL "$p" 2>/dev/null; done
	fi
	(exit $rc)
	zcfsd_cleanup	# stops zcfsd, its servers, unmounts all under W
}
trap docker_cleanup EXIT

zcfsd_start

echo '{}' >"$W/daemon.json"
mkdir -p "$DROOT" "$W/dexec"
dockerd --config-file "$W/daemon.json" --data-root "$DROOT" --exec-root "$W/dexec" \
	--pidfile "$W/docker.pid" -H "unix://$W/docker.sock" --storage-driver=vfs \
	--iptables=false --ip-masq=false --bridge=none >"$W/dockerd.log" 2>&1 &
DOCKERD_PID=$!
if ! wait_for "dockerd" 60 dk version >/dev/null 2>&1; then
	kill -0 "$DOCKERD_PID" 2>/dev/null || DOCKERD_PID=
	sed 's/^/# dockerd: /' "$W/dockerd.log" | tail -n 5
	skip "dockerd cannot run here: $(grep -m1 -iE 'level=(fatal|error)' "$W/dockerd.log" | cut -c1-200)"
fi

# A busybox image without pulling anything, and without /data: dockerd
# copies an image directory's owner and mode onto an empty volume mounted
# over it (unless -v NAME:/data:nocopy), which would make the root
# root's 0755 again.
mkdir -p "$W/rootfs/bin" "$W/rootfs/tmp"
cp "$BUSYBOX" "$W/rootfs/bin/busybox"
for c in sh ls cat echo mkdir sleep stat id true dd grep rm; do ln -s busybox "$W/rootfs/bin/$c"; done
tar -C "$W/rootfs" -cf "$W/bbx.tar" . || fail "tar rootfs"
dk import "$W/bbx.tar" zcfs-bbx:1 >/dev/null 2>"$W/import.err" ||
	skip "docker import failed: $(tail -n 1 "$W/import.err")"
if ! dk run --rm --network none zcfs-bbx:1 /bin/true >/dev/null 2>"$W/run.err"; then
	sed 's/^/# /' "$W/run.err"
	skip "dockerd cannot run containers here: $(tail -n 1 "$W/run.err")"
fi

log "the managed plugin"
DESTDIR=$W/inst "$(dirname "$0")/../../../deploy/install.sh" --prefix /usr/local --from "$ZCFS_BIN" \
	--no-systemd >"$W/install.log" || fail "install.sh"
pcmd=$(sed -n 's/^install: *docker plugin create zcfs \(\/[^ ]*\)$/\1/p' "$W/install.log")
check "install.sh installed the managed plugin and prints its docker plugin create ($pcmd)" \
	test "$pcmd" = /usr/local/lib/zcfs/docker-plugin -a -f "$W/inst$pcmd/config.json"
check "docker plugin create zcfs (install.sh's config.json + rootfs)" dk plugin create zcfs "$W/inst$pcmd"
check "docker plugin set: zcfsd's socket directory, dockerd's data root" dk plugin set zcfs \
	zcfsd.source="$W/run" ZCFS_DOCKER_DATA_ROOT="$DROOT"
check "docker plugin enable zcfs" dk plugin enable zcfs
ID=$(dk plugin inspect -f '{{.Id}}' zcfs 2>/dev/null)
check "the plugin is enabled" test "$(dk plugin inspect -f '{{.Enabled}}' zcfs 2>/dev/null)" = true
check "... without a network, with its propagated mount" test \
	"$(dk plugin inspect -f '{{.Config.Network.Type}} {{.Config.PropagatedMount}}' zcfs)" = "none /mnt/zcfs"

T=$ZCFS_TRANSPORT
HOSTMP=$DROOT/plugins/$ID/propagated-mount/t1/dvol
mounted() { awk -v m="$HOSTMP" '$2 == m && $3 ~ /^fuse/ {f=1} END {exit !f}' /proc/self/mounts; }
check "docker volume create -d zcfs -o tenant=t1 -o size=32M" dk volume create -d zcfs -o tenant=t1 \
	-o size=32M -o transport="$T" dvol
check "zcfsd has dvol" test "$(vol_field dvol state)" = created
check "docker volume ls lists it with driver zcfs" bash -c \
	"'$DOCKER' -H unix://$W/docker.sock volume ls --format '{{.Driver}} {{.Name}}' | grep -qx 'zcfs:latest dvol'"

log "docker run -u 1000 -v dvol:/data"
# dkrun ARGS...: docker run, its stderr shown when it fails
dkrun() { dk run "$@" 2>"$W/run.err" || { sed 's/^/# docker run: /' "$W/run.err"; return 1; }; }
check "before the policy allows the plugin's propagated mount: docker run fails" bash -c \
	"! '$DOCKER' -H unix://$W/docker.sock run --rm --network none -v dvol:/data zcfs-bbx:1 /bin/true 2>'$W/refused.err'"
check "... with zcfsd's reason, naming the host path" grep -q \
	"PERMISSION_DENIED: target '$HOSTMP' is not under any allowed_target_prefixes" "$W/refused.err"
check "... and nothing mounted" bash -c "! awk -v w='$W/' 'index(\$2, w) == 1 && \$3 ~ /^fuse/' /proc/self/mounts | grep -q ."
# The narrowest prefix: this plugin's propagated mount (its ID is known
# once it is created), not all of DATA_ROOT/plugins, where a tenant admin
# could mount over another plugin's files.
jq --arg p "$DROOT/plugins/$ID/propagated-mount" '.tenants[0].allowed_target_prefixes += [$p]' \
	"$POLICY" >"$W/p.json" && mv "$W/p.json" "$POLICY"
check "policy: allowed_target_prefixes += DATA_ROOT/plugins/ID/propagated-mount, reloaded" ctlq policy reload
check "a uid-1000 container writes to the volume" dkrun --rm --network none -u 1000 -v dvol:/data \
	zcfs-bbx:1 /bin/sh -c \
	'stat -c "%u:%g %a" /data >/data/root && echo hello-from-docker >/data/hello && stat -c %u:%g /data/hello >/data/owner'
check "... the root it saw: 1000:1000, mode 2770 (tenant volume_root)" grep -qx '1000:1000 2770' \
	"$STORE/t1/dvol/root"
check "... its file: uid 1000, the root's group" grep -qx 1000:1000 "$STORE/t1/dvol/owner"
check "data landed in the tenant's storage" grep -qx hello-from-docker "$STORE/t1/dvol/hello"
check "... backing files belong to the tenant" test "$(stat -c %u "$STORE/t1/dvol/hello")" = "$TENANT_UID"
check "after --rm: Unmount reached zcfsd (not mounted)" bash -c "! awk -v m='$HOSTMP' '\$2 == m' /proc/self/mounts | grep -q ."
check "zcfsd: created, no server" test "$(vol_field dvol state)" = created

log "a running container"
check "a long-running uid-1000 container" dk run -d --name zcfs-long --network none -u 1000 \
	-v dvol:/data zcfs-bbx:1 /bin/sleep 120
check "zcfsd mounted it where dockerd looks: DATA_ROOT/plugins/ID/propagated-mount/t1/dvol" mounted
check "... published there, not at the plugin's /mnt/zcfs/t1/dvol" bash -c \
	"$ZCFS_BIN/zcfsctl --socket $SOCK volume get dvol | grep -qF '$HOSTMP'"
check "a second container reads what the first wrote" bash -c \
	"'$DOCKER' -H unix://$W/docker.sock run --rm --network none -u 1000 -v dvol:/data zcfs-bbx:1 /bin/cat /data/hello | grep -qx hello-from-docker"
check "still mounted for the first" mounted
# dockerd's propagated-mount is a shared bind mount stacked on its data
# root: the one mount shows on both (same connection, same peer group).
check "one fuse connection at the host path" test \
	"$(awk -v m="$HOSTMP" '$5 == m && $9 ~ /^fuse/ {print $3}' /proc/self/mountinfo | sort -u | wc -l)" = 1
check "docker volume rm refuses while in use" bash -c "! '$DOCKER' -H unix://$W/docker.sock volume rm dvol 2>/dev/null"
check "stop the long-running container" dk rm -f zcfs-long
check "unmounted after the last container" bash -c "! awk -v m='$HOSTMP' '\$2 == m' /proc/self/mounts | grep -q ."

log "remove"
check "docker volume rm dvol" dk volume rm dvol
check "gone from zcfsd" bash -c "! $ZCFS_BIN/zcfsctl --socket $SOCK volume get dvol >/dev/null 2>&1"
check "storage removed" test ! -e "$STORE/t1/dvol"
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$STORE/t1/dvol'"
check "docker plugin disable zcfs" dk plugin disable zcfs
check "docker plugin rm zcfs" dk plugin rm zcfs
check "no fuse mount left" bash -c "! awk -v w='$W/' 'index(\$2, w) == 1 && \$3 ~ /^fuse/' /proc/self/mounts | grep -q ."
if [ "$_zcfs_failed" -gt 0 ]; then
	grep -E 'plugin=|level=(error|warning)' "$W/dockerd.log" | tail -n 20 | sed 's/^/# dockerd: /'
	show_zcfsd_log
fi
dk rmi -f zcfs-bbx:1 >/dev/null 2>&1
finish
