# shellcheck shell=bash
# Helpers for the zcfsd tests (sourced after tests/lib.sh). Each test gets a
# private work dir W with its own policy, socket and state dir; a real
# zcfsd runs in the foreground in the background of the test shell.
#
#   zcfsd_require [cmd...]          root, /dev/fuse, jq, each cmd, transport
#   zcfsd_env [budget] [io_uring]   W, POLICY, SOCK, STATE, TGT (allowed
#                                   target prefix), STORE (storage_root)
#   policy_jq [opts] FILTER         $POLICY rewritten through jq
#   zcfsd_start / zcfsd_kill9       start (waits for the socket) / SIGKILL;
#                                   ZCFSD_SERVE: its --serve binary,
#                                   ZCFSD_BIN: the zcfsd binary
#   ctl ARGS... / ctlq ARGS...      zcfsctl on this socket / output dropped
#   create_publish ID TARGET        volume create + publish (or _or_fail)
#   code_of CMD...                  the error code of a zcfsctl call/raw
#   vol_json ID / vol_field ID JQ   volume.get result
#   snapshot                        files under W (state excluded) + mounts
#   plugin_snapshot DIR...          snapshot + the plugins' state dirs (CSI
#                                   records, volume plugin registry)
#   fill_tenant T / unfill_tenant   zcfsctl volumes up to T's max_volumes
# The EXIT trap stops zcfsd, every server it started (by pid from the
# state file and by command line under W) and lazily unmounts under W.
# zcfsd_quiet_cleanup is the same for tests whose log must end with their
# own last line (trap zcfsd_quiet_cleanup EXIT).

TENANT_UID=${TENANT_UID:-2001}
TENANT_UID2=${TENANT_UID2:-2002}
ZCFSD_PID=

# keep_server_log ID [FILE...]: with ZCFS_TEST_KEEP_LOGS, the volume's
# server log (and each FILE, as ID.NAME) is kept before the volume (and
# its log) goes.
keep_server_log() {
	[ -n "${ZCFS_TEST_KEEP_LOGS:-}" ] || return 0
	local keep f id=$1
	shift
	keep=$ZCFS_TEST_KEEP_LOGS/$(basename "$0" .sh).${ZCFS_TRANSPORT:-x}
	mkdir -p "$keep" && cp "$STATE"/logs/"$id".log* "$keep/" 2>/dev/null
	for f in "$@"; do cp "$f" "$keep/$id.$(basename "$f")" 2>/dev/null; done
	return 0
}

zcfsd_cleanup() {
	local rc=$? p m
	[ -n "$ZCFSD_PID" ] && kill -KILL "$ZCFSD_PID" 2>/dev/null
	if [ -n "${W:-}" ]; then
		for p in $(pgrep -f "[z]cfs-serve .*$W/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		# innermost (longest) mount points first
		for m in $(awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r); do
			umount -l "$m" 2>/dev/null
		done
	fi
	# ZCFS_TEST_KEEP_LOGS=DIR: zcfsd's and the servers' logs survive the
	# test (the 7.3 guest's runs keep them in its OUT share).
	if [ -n "${ZCFS_TEST_KEEP_LOGS:-}" ] && [ -n "${W:-}" ]; then
		local keep
		keep=$ZCFS_TEST_KEEP_LOGS/$(basename "$0" .sh).${ZCFS_TRANSPORT:-x}
		mkdir -p "$keep" && cp "$W/zcfsd.log" "${STATE:-$W/state}"/logs/*.log "$keep/" 2>/dev/null
	fi
	(exit $rc)
	_zcfs_cleanup
}
trap zcfsd_cleanup EXIT

# Stop zcfsd without bash's "Killed" notice becoming the log's last line.
zcfsd_quiet_cleanup() {
	local rc=$?
	[ -n "$ZCFSD_PID" ] && kill -KILL "$ZCFSD_PID" 2>/dev/null && wait "$ZCFSD_PID" 2>/dev/null
	ZCFSD_PID=
	(exit $rc)
	zcfsd_cleanup
}

# zcfsd_require [CMD...]: what every zcfsd test needs, and each CMD; skips
# with the reason otherwise.
zcfsd_require() {
	local c
	require_root
	require_fuse
	require_cmd jq
	for c in "$@"; do require_cmd "$c"; done
	require_uring_transport
}

# write_policy FILE BUDGET IO_URING [second tenant: yes|no]
# ZCFS_TEST_ZERO_COPY=true gives tenant t1 data_paths.zero_copy (the 7.3
# guest's zero-copy runs: scripts/kernel-guest-test.sh).
write_policy() {
	local f=$1 budget=$2 uring=$3 second=${4:-no}
	{
		cat <<-JSON
		{
		  "admin_group": "0",
		  "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "auto"},
		  "tenants": [
		    {"name": "t1", "uid": $TENANT_UID, "gid": $TENANT_UID, "memlock_budget": "$budget",
		     "max_volumes": 8, "default_quota": "1G", "storage_root": "$STORE/t1",
		     "allowed_target_prefixes": ["$TGT"],
		     "data_paths": {"io_uring": $uring, "zero_copy": ${ZCFS_TEST_ZERO_COPY:-false}, "passthrough": false}}
		JSON
		if [ "$second" = yes ]; then
			cat <<-JSON
			   ,{"name": "t2", "uid": $TENANT_UID2, "gid": $TENANT_UID2, "memlock_budget": "$budget",
			     "storage_root": "$STORE/t2", "allowed_target_prefixes": ["$TGT/t2"]}
			JSON
		fi
		echo '  ]'
		echo '}'
	} >"$f"
}

zcfsd_env() {
	W=$(make_tmpdir)
	POLICY=$W/policy.json
	SOCK=$W/zcfsd.sock
	STATE=$W/state
	TGT=$W/targets
	STORE=$W/storage
	mkdir -p "$TGT" "$STORE"
	write_policy "$POLICY" "${1:-64M}" "${2:-true}" "${3:-no}"
	export ZCFS_SOCKET=$SOCK
}

# policy_jq [jq options...] FILTER: $POLICY rewritten through jq (before
# zcfsd_start, or followed by a reload).
policy_jq() { jq "$@" "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"; }

zcfsd_start() {
	local i
	[ -x "${ZCFSD_BIN:-$ZCFS_BIN/zcfsd}" ] || fail "${ZCFSD_BIN:-$ZCFS_BIN/zcfsd} not built"
	rm -f "$SOCK"
	"${ZCFSD_BIN:-$ZCFS_BIN/zcfsd}" --policy "$POLICY" --state-dir "$STATE" --socket "$SOCK" \
		--serve "${ZCFSD_SERVE:-$ZCFS_BIN/zcfs-serve}" --foreground "$@" 2>>"$W/zcfsd.log" &
	ZCFSD_PID=$!
	for i in $(seq 100); do
		[ -S "$SOCK" ] && ctl status >/dev/null 2>&1 && return 0
		kill -0 "$ZCFSD_PID" 2>/dev/null || { cat "$W/zcfsd.log" >&2; fail "zcfsd exited"; }
		sleep 0.05
	done
	cat "$W/zcfsd.log" >&2
	fail "zcfsd did not come up"
}

zcfsd_kill9() {
	kill -KILL "$ZCFSD_PID" 2>/dev/null
	wait "$ZCFSD_PID" 2>/dev/null
	ZCFSD_PID=
}

ctl() { "$ZCFS_BIN/zcfsctl" --socket "$SOCK" "$@"; }
ctlq() { ctl "$@" >/dev/null; }

# code_of CMD...: runs a zcfsctl subcommand that prints a raw response
# (call/raw) and prints the error code, or OK.
code_of() {
	local out
	out=$("$@" 2>/dev/null)
	jq -r 'if .error then .error.code else "OK" end' <<<"$out" 2>/dev/null || echo "UNPARSEABLE:$out"
}

vol_json() { ctl volume get "$1" 2>/dev/null; }
vol_field() { vol_json "$1" | jq -r ".volume.$2"; }
server_pid() { vol_field "$1" pid; }

# snapshot: everything a failed request must leave alone
snapshot() {
	(cd "$W" && find . -path ./state -prune -o -path ./zcfsd.log -prune -o \
		-printf '%p %y %m %U:%G\n' | sort)
	grep " $W" /proc/self/mounts
	pgrep -f "[z]cfs-serve .*$W/" | sort
}

# plugin_snapshot DIR...: snapshot, plus each plugin state DIR (kept
# under state/, which snapshot leaves out): names, modes and contents, so
# a failed plugin call that rewrote a CSI record or the registry shows.
plugin_snapshot() {
	local d
	snapshot
	for d in "$@"; do
		echo "== $d"
		[ -d "$d" ] || continue
		(cd "$d" && find . -printf '%p %y %m\n' | sort && find . -type f -exec sha256sum {} + | sort -k2)
	done
}

# fill_tenant T: creates volumes fill-N of tenant T until it is at its
# max_volumes (the next volume.create is RESOURCE_EXHAUSTED);
# unfill_tenant deletes them again.
FILLED=()
fill_tenant() {
	local n i
	n=$(ctl call tenant.list | jq --arg t "$1" '.result.tenants[] | select(.name == $t) | .max_volumes - .volumes')
	[ "$n" -ge 0 ] 2>/dev/null || return 1
	for ((i = 0; i < n; i++)); do
		ctl volume create "fill-$i" --tenant "$1" >/dev/null || return 1
		FILLED+=("fill-$i")
	done
}
unfill_tenant() {
	local id
	for id in "${FILLED[@]}"; do ctl volume delete "$id" >/dev/null || return 1; done
	FILLED=()
}

# create_publish ID TARGET [create options...]
create_publish() {
	local id=$1 target=$2; shift 2
	ctl volume create "$id" --transport "${ZCFS_TRANSPORT:-devfuse}" "$@" >/dev/null &&
		ctl volume publish "$id" "$target" >/dev/null
}

# create_publish_or_fail ID TARGET [create options...]: the test cannot go
# on without it; zcfsd's log says why.
create_publish_or_fail() {
	create_publish "$@" || { show_zcfsd_log; fail "publish $1"; }
}

# zcfsd_start_with_v1 [zcfsd_start args...]: the common start: a 64M
# tenant budget (memlock on), zcfsd running, volume v1 created and
# published at TGT/a.
zcfsd_start_with_v1() {
	zcfsd_env 64M true
	zcfsd_start "$@"
	create_publish_or_fail v1 "$TGT/a"
}

# wait_for DESC SECS CMD...: polls CMD until it succeeds
wait_for() {
	local desc=$1 secs=$2 i; shift 2
	for i in $(seq $((secs * 10))); do "$@" && return 0; sleep 0.1; done
	echo "# timed out waiting for $desc" >&2
	return 1
}

show_zcfsd_log() {
	local f
	sed 's/^/# zcfsd: /' "$W/zcfsd.log" | tail -n 30
	for f in "$STATE"/logs/*.log; do
		[ -s "$f" ] && grep -v 'level=debug' "$f" | tail -n 15 | sed "s|^|# $(basename "$f" .log): |"
	done
	return 0
}

# refused_commits LOG: io_uring commits the kernel refused although the
# server had not taken the request over from a predecessor (that one may
# be refused: already committed). Any is a ring entry whose buffers the
# kernel and the server disagree about: a request in them is never seen.
refused_commits() { grep -c 'COMMIT_AND_FETCH: No such file or directory' "$1"; }

require_uring_transport() {
	if [ "${ZCFS_TRANSPORT:-devfuse}" = uring ]; then
		[ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ] ||
			skip "FUSE-over-io_uring disabled (enable_uring=N)"
	fi
}

# pm ARGS...: podman on the test's own root, runroot and vfs storage under W
pm() { podman --root "$W/podman/root" --runroot "$W/podman/run" --storage-driver vfs "$@"; }

# podman_conf [ENGINE_LINE...]: CONTAINERS_CONF = a private containers.conf
# (tmp_dir under W, no events, cgroupfs, ENGINE_LINEs, the volume plugin
# zcfs on VPSOCK); tables may be appended to it. Sets PM_READY=yes.
podman_conf() {
	mkdir -p "$W/podman/tmp"
	{
		printf '[engine]\ntmp_dir = "%s"\nevents_logger = "none"\ncgroup_manager = "cgroupfs"\n' \
			"$W/podman/tmp"
		[ $# -gt 0 ] && printf '%s\n' "$@"
		printf '[engine.volume_plugins]\nzcfs = "%s"\n' "$VPSOCK"
	} >"$W/podman/containers.conf"
	export CONTAINERS_CONF=$W/podman/containers.conf
	# shellcheck disable=SC2034 # the tests' cleanup reads it
	PM_READY=yes
}

# slowloris_start WHO ARGS...: tests/integration/helpers/slowloris.py ARGS... in the
# background as WHO (root, or that uid with gid 0 and no groups) under
# /usr/bin/python3 (a per-user python, pyenv shims, is not reachable by the
# uid); ATK_PID its pid, ATK_OUT its summary. slowloris_end waits for it (not
# in a $(...): wait needs this shell) and sets ATTACK_SUM.
slowloris_start() {
	local who=$1 py=(/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/slowloris.py"); shift
	ATK_OUT=$W/attack.$RANDOM.json
	if [ "$who" = root ]; then
		"${py[@]}" "$@" >"$ATK_OUT" 2>&1 &
	else
		setpriv --reuid="$who" --regid=0 --clear-groups -- "${py[@]}" "$@" >"$ATK_OUT" 2>&1 &
	fi
	ATK_PID=$!
}
slowloris_end() {
	wait "$ATK_PID"; ATK_PID=
	ATTACK_SUM=$(cat "$ATK_OUT")
	log "attacker: $ATTACK_SUM"
	[ -n "$ATTACK_SUM" ] || fail "the attacker printed no summary"
}

# zcfsd_status_poller: starts tests/integration/helpers/status_poller.py in the
# background (STATUS_LOOP its pid): zcfsd's answer time to `status` in
# W/status.ms, ms per line, a call every 50 ms on one connection;
# W/status.err says why it stopped, if it did.
zcfsd_status_poller() {
	/usr/bin/python3 -u "$(dirname "${BASH_SOURCE[0]}")/status_poller.py" "$SOCK" \
		>"$W/status.ms" 2>"$W/status.err" &
	STATUS_LOOP=$!
	_zcfs_pids+=("$STATUS_LOOP")
}

# run_variants V...: the test's run_variant for each V, side by side, each
# in a subshell with its own output, printed afterwards in order; the
# checks are counted here from what they printed.
run_variants() {
	local n=0 i v jobs=()
	for v in "$@"; do
		n=$((n + 1))
		( run_variant "$v" ) >"$W/variant-$n.out" 2>&1 &
		jobs+=($!)
	done
	for i in $(seq "$n"); do
		# not zcfsd, also a child of this shell; a variant that ended in
		# fail() (it exits non-zero) is a failed check too
		wait "${jobs[$((i - 1))]}" || echo "not ok - variant $i ended early (fail)" >>"$W/variant-$i.out"
	done
	for i in $(seq "$n"); do
		cat "$W/variant-$i.out"
		_zcfs_checks=$((_zcfs_checks + $(grep -cE '^(not )?ok - ' "$W/variant-$i.out")))
		_zcfs_failed=$((_zcfs_failed + $(grep -c '^not ok - ' "$W/variant-$i.out")))
	done
}

# restart_policy: $POLICY for the restart tests, tenants t1 (io_uring) and
# tp (io_uring and passthrough) with 128M memlock each; pt = the kernel's
# passthrough status (zcfsctl kernel)
restart_policy() {
	# shellcheck disable=SC2034 # read by the tests
	pt=$("$ZCFS_BIN/zcfsctl" kernel --json 2>/dev/null | jq -r '.paths.passthrough.status' 2>/dev/null)
	cat >"$POLICY" <<-JSON
	{
	  "admin_group": "0",
	  "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "auto"},
	  "tenants": [
	    $(restart_tenant t1 "$TENANT_UID" "{\"io_uring\": true, \"passthrough\": false, \"zero_copy\": ${ZCFS_TEST_ZERO_COPY:-false}}"),
	    $(restart_tenant tp "$TENANT_UID2" '{"io_uring": true, "passthrough": true}')
	  ]
	}
	JSON
}
restart_tenant() {	# NAME UID DATA_PATHS
	printf '{"name": "%s", "uid": %s, "gid": %s, "memlock_budget": "128M", "max_volumes": 4,
	  "storage_root": "%s", "allowed_target_prefixes": ["%s"], "data_paths": %s}' \
		"$1" "$2" "$2" "$STORE/$1" "$TGT" "$3"
}

# zcfsd_start_hostile: zcfsd started with a zcfs-serve wrapper that
# misbehaves around its ready byte as $W/mode says (good, garbage, exit3,
# sigsys, close, silent; good for --help and restarts): for the tests of
# zcfsd's publish wait. Starts in mode good.
zcfsd_start_hostile() {
	cat >"$W/serve-hostile" <<SH
#!/usr/bin/env bash
mode=\$(cat "$W/mode" 2>/dev/null || echo good)
case " \$* " in *" --ready-fd="*) ;; *) mode=good ;; esac   # --help, restarts
args=()
for a in "\$@"; do [ "\$a" = --ready-fd=10 ] || args+=("\$a"); done
case \$mode in
good)	exec "$ZCFS_BIN/zcfs-serve" "\$@" ;;
garbage) printf X >&10; exec "$ZCFS_BIN/zcfs-serve" "\$@" ;;
exit3)	exit 3 ;;
sigsys)	kill -SYS \$\$ ;;
close)	exec 10>&-; exec "$ZCFS_BIN/zcfs-serve" "\${args[@]}" ;;
silent)	exec 20>&10 10>&-; exec "$ZCFS_BIN/zcfs-serve" "\${args[@]}" ;;
esac
exit 99
SH
	chmod 755 "$W/serve-hostile"
	echo good >"$W/mode"
	chmod 644 "$W/mode"
	zcfsd_start --serve "$W/serve-hostile"
}
