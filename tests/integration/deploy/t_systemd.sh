#!/usr/bin/env bash
# The systemd units under a real systemd (~40 s per data path): a systemd-nspawn
# container boots this host's own /usr (--volatile=yes: empty /etc and
# /var on tmpfs) with the units deploy/install.sh installs, and
# tests/integration/helpers/systemd/driver.sh, run there as a service, checks:
# Type=notify start and the STATUS= line, OOMScoreAdjust=-900 for zcfsd
# only, every volume server in a transient scope of its own, a volume (an
# open file, a writer) across `systemctl restart zcfsd` with no systemd
# warning, Restart=always after a kill, reload, stop leaving the servers,
# re-adoption, and the hardened zcfs-volume-plugin unit serving Docker's
# API (Create, Mount, Get, Unmount, Remove) with zcfsd mounting; zcfsd's
# metrics socket (the installed policy's /run/zcfs/metrics.sock) and the
# plugin's (--metrics in its unit) answer /readyz, /healthz and /metrics.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd jq
require_cmd curl
require_cmd systemd-nspawn
require_cmd systemd-analyze
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -x /usr/lib/systemd/systemd ] || skip "no /usr/lib/systemd/systemd to boot in the container"
for p in zcfsd zcfs-serve zcfsctl zcfs-volume-plugin; do
	[ -x "$ZCFS_BIN/$p" ] || fail "$ZCFS_BIN/$p not built"
done
T=${ZCFS_TRANSPORT:-devfuse}
if [ "$T" = uring ]; then
	[ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ] ||
		skip "FUSE-over-io_uring disabled (enable_uring=N)"
	uring=true
else
	uring=false
fi
W=$(make_tmpdir)
R=$W/root
mkdir -p "$W/out" "$W/zt"
echo "$T" >"$W/out/transport"   # the driver's volumes use this data path
env DESTDIR="$R" "$top/deploy/install.sh" --prefix /opt/zcfs --from "$ZCFS_BIN" >"$W/install.log" ||
	fail "install.sh into $R"
U=$R/etc/systemd/system
cp "$top/tests/integration/helpers/systemd/driver.sh" "$W/zt/driver.sh"
cat >"$U/zt.target" <<-EOF
	[Unit]
	Description=t_systemd: boot only what the test needs
	Requires=basic.target zt-driver.service
	After=basic.target
EOF
cat >"$U/zt-driver.service" <<-EOF
	[Unit]
	Description=t_systemd driver
	After=basic.target
	[Service]
	Type=oneshot
	ExecStart=/zt/driver.sh
	TimeoutStartSec=200
EOF
ln -s /dev/null "$U/systemd-firstboot.service"
# the installed policy's metrics.listen kept (the unit's RuntimeDirectory)
cat >"$R/etc/zcfs/policy.d/default.json.new" <<-EOF
	{
	  "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "$T"},
	  "metrics": $(jq -c .metrics "$R/etc/zcfs/policy.d/default.json"),
	  "tenants": [
	    {"name": "zt", "uid": 2001, "gid": 2001, "memlock_budget": "64M", "max_volumes": 8,
	     "default_quota": "1G", "storage_root": "/var/lib/zcfs/volumes/zt",
	     "allowed_target_prefixes": ["/srv/zt", "/mnt/zcfs"],
	     "data_paths": {"io_uring": $uring, "zero_copy": false, "passthrough": false}}
	  ]
	}
EOF
mv "$R/etc/zcfs/policy.d/default.json.new" "$R/etc/zcfs/policy.d/default.json"
"$ZCFS_BIN/zcfsctl" policy check "$R/etc/zcfs/policy.d" >/dev/null || fail "test policy invalid"

log "booting systemd in a container (systemd-nspawn --volatile=yes -D /)"
machine=zcfs-t-$$
# --keep-unit --register=no: this host's PID 1 need not be systemd
timeout -k 10 220 systemd-nspawn --quiet --keep-unit --register=no -D / --volatile=yes \
	--machine="$machine" --bind=/dev/fuse \
	--system-call-filter="landlock_create_ruleset landlock_add_rule landlock_restrict_self pidfd_getfd io_uring_setup io_uring_enter io_uring_register" \
	--bind-ro="$U:/etc/systemd/system" --bind-ro="$R/etc/zcfs:/etc/zcfs" \
	--bind-ro="$R/opt/zcfs:/opt/zcfs" --bind-ro="$W/zt/driver.sh:/zt/driver.sh" \
	--bind="$W/out:/zt/out" \
	-b -- systemd.unit=zt.target systemd.firstboot=off </dev/null >"$W/boot.log" 2>&1 &
NS_PID=$!
_zcfs_pids+=("$NS_PID")
wait "$NS_PID"
rc=$?
if [ ! -s "$W/out/result" ]; then
	tail -n 40 "$W/boot.log"
	# the driver never ran: no systemd container here (no namespaces,
	# cgroups or privileges for it), which is not zcfs's failure
	[ ! -e "$W/out/driver.log" ] &&
		skip "systemd-nspawn could not boot systemd in a container here (rc $rc: $(grep -v '^$' "$W/boot.log" | tail -n 1))"
	fail "the driver started but wrote nothing (nspawn rc $rc)"
fi
check "the container powered off by itself (nspawn rc $rc)" test "$rc" = 0
while IFS= read -r line; do
	case $line in
	"ok - "*) check "${line#ok - }" true;;
	"not ok - "*) check "${line#not ok - }" false;;
	"# "*) echo "$line";;
	"done") ;;
	esac
done <"$W/out/result"
check "the driver ran to the end" grep -qx "done" "$W/out/result"
# T_SYSTEMD_KEEP=DIR keeps the driver's output (journal, logs) for a look
[ -n "${T_SYSTEMD_KEEP:-}" ] && cp -r "$W/out" "$T_SYSTEMD_KEEP"
if [ "${_zcfs_failed:-0}" -ne 0 ]; then
	echo "# driver log:"; tail -n 60 "$W/out/driver.log"
	for f in "$W"/out/server-logs/*.log; do
		[ -f "$f" ] && { echo "# server log $(basename "$f"):"; tail -n 20 "$f"; }
	done
	echo "# journal (warnings and zcfs):"
	grep -i 'warn\|zcfs\|fail' "$W/out/journal.txt" 2>/dev/null | tail -n 80
fi
finish
