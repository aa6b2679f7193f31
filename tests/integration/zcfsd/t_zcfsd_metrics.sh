#!/usr/bin/env bash
# zcfsd's Prometheus endpoint (policy metrics.listen, a unix socket):
# curl --unix-socket gets text format 0.0.4 with per-volume state, server
# up, restarts and pinned bytes, and per-tenant pinned bytes, budget and
# volume count; the figures follow publish, a server kill (restart count)
# and unpublish; the socket is root/admin-group only (0660) and goes away
# when zcfsd exits; only /metrics answers (/ and other paths are 404),
# other methods 405; one prefix (zcfs_, besides the standard process_*
# families of zcfsd), zcfs_build_info, zcfs_daemon_start_time_seconds;
# `promtool check metrics` is clean (promtool from PATH or Debian's
# prometheus package via scripts/promtool.sh; not run without it);
# libmicrohttpd logs no warning at start.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require curl python3

zcfsd_env 64M true
MSOCK=$W/run/metrics.sock
policy_jq --arg s "$MSOCK" '. + {metrics: {listen: $s}}'
zcfsd_start
wait_for "the metrics socket" 5 test -S "$MSOCK" || { show_zcfsd_log; fail "no metrics socket"; }

scrape() { curl -sf --max-time 5 --unix-socket "$MSOCK" http://localhost/metrics; }
scrape_ok() { scrape >/dev/null; }
# value METRIC LABELS [FILE]: the sample's value ("" if absent), from a
# new scrape or from FILE, a scrape saved before (values to compare with
# each other come from one scrape: requests keep arriving between two)
value() { { if [ -n "${3:-}" ]; then cat "$3"; else scrape; fi; } | awk -v k="$1{$2}" '$1 == k { print $2 }'; }

check "socket is 0660 root-owned ($(stat -c '%a %U' "$MSOCK"))" test "$(stat -c '%a %u' "$MSOCK")" = "660 0"
check "GET /metrics answers 200" scrape_ok
hdr=$(curl -s -D - -o /dev/null --unix-socket "$MSOCK" http://localhost/metrics)
check "content type is the Prometheus text format" eval "grep -qi 'content-type: text/plain; version=0.0.4' <<<'$hdr'"
check "tenant t1's budget is 64M" test "$(value zcfs_tenant_memlock_budget_bytes 'tenant="t1"')" = $((64 << 20))
check "t1 has no volumes yet" test "$(value zcfs_tenant_volumes 'tenant="t1"')" = 0
check "HELP and TYPE lines precede the families" eval "scrape | grep -q '^# TYPE zcfs_volume_server_up gauge'"
check "one prefix: every family is zcfs_* or process_*" \
	bash -c "! curl -sf --unix-socket '$MSOCK' http://localhost/metrics | awk '/^# TYPE/ { print \$3 }' | grep -v '^zcfs_\|^process_'"
check "zcfs_build_info{version=$("$ZCFS_BIN/zcfsd" --version | awk '{print $2}')} 1" \
	test "$(scrape | sed -n 's/^zcfs_build_info{version="\([^"]*\)",fuse_protocol="7\.[0-9]*"} 1$/\1/p')" = \
	"$("$ZCFS_BIN/zcfsd" --version | awk '{print $2}')"
started=$(scrape | awk '$1 == "zcfs_daemon_start_time_seconds" { print $2 }')
check "zcfs_daemon_start_time_seconds is about now ($started)" \
	bash -c "[ -n '$started' ] && [ \$(( \$(date +%s) - $started )) -lt 60 ] && [ $started -le \$(date +%s) ]"
for m in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes \
	process_open_fds process_max_fds process_start_time_seconds; do
	check "zcfsd's $m" eval "scrape | grep -qE '^$m [0-9.e+-]+\$'"
done
pst=$(scrape | awk '$1 == "process_start_time_seconds" { printf "%d", $2 }')
# the exec comes first, zcfsd's own start time once it has set up (slow
# under ASan): a few seconds apart at most
check "process_start_time_seconds is zcfsd's exec, before its start time ($pst vs $started)" \
	bash -c "[ -n '$pst' ] && [ ${pst:-0} -le $(( ${started:-0} + 1 )) ] && [ ${pst:-0} -ge $(( ${started:-0} - 30 )) ]"
fds=$(scrape | awk '$1 == "process_open_fds" { print $2 }')
check "process_open_fds is zcfsd's ($fds, /proc says $(ls /proc/"$ZCFSD_PID"/fd | wc -l))" \
	bash -c "d=\$(( ${fds:-0} - \$(ls /proc/$ZCFSD_PID/fd | wc -l) )); [ \${d#-} -le 2 ]"
rc=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$MSOCK" http://localhost/)
check "/ is 404 ($rc), as docs/security.md says" test "$rc" = 404
check "libmicrohttpd logged no warning (option order)" bash -c "! grep -q 'event=metrics-http' '$W/zcfsd.log'"
if PROMTOOL=$("$(dirname "$0")/../../../scripts/promtool.sh" 2>"$W/promtool.err"); then
	scrape >"$W/scrape.txt"
	check "promtool check metrics: clean" bash -c "'$PROMTOOL' check metrics <'$W/scrape.txt' >'$W/promtool.out' 2>&1 && [ ! -s '$W/promtool.out' ]"
	[ -s "$W/promtool.out" ] && sed 's/^/# promtool: /' "$W/promtool.out"
else
	log "promtool not available ($(cat "$W/promtool.err")): promtool check metrics not run"
fi

create_publish m1 "$TGT/a" || { show_zcfsd_log; fail "publish m1"; }
ctl volume create m2 --transport "$ZCFS_TRANSPORT" >/dev/null || fail "create m2"
V1='volume="m1",tenant="t1"'
V2='volume="m2",tenant="t1"'
check "m1 is published" test "$(value zcfs_volume_state "$V1,state=\"published\"")" = 1
check "m1 is not 'created'" test "$(value zcfs_volume_state "$V1,state=\"created\"")" = 0
check "m2 is created" test "$(value zcfs_volume_state "$V2,state=\"created\"")" = 1
check "m1's server is up" test "$(value zcfs_volume_server_up "$V1")" = 1
check "m2 has no server" test "$(value zcfs_volume_server_up "$V2")" = 0
check "m1 has one target" test "$(value zcfs_volume_targets "$V1")" = 1
pinned=$(vol_field m1 pinned)
check "m1's pinned bytes = volume.get's ($pinned)" test "$(value zcfs_volume_pinned_bytes "$V1")" = "$pinned"
check "m1's stock layout = status's" test "$(value zcfs_volume_pinned_layout_bytes "$V1,layout=\"stock\"")" = \
	"$(vol_field m1 pinned_layouts.stock)"
check "m1's unregistered-pool layout = status's" \
	test "$(value zcfs_volume_pinned_layout_bytes "$V1,layout=\"pool_unregistered\"")" = \
	"$(vol_field m1 pinned_layouts.pool_unregistered)"
if [ "$ZCFS_TRANSPORT" = uring ]; then
	bp=$(vol_field m1 pinned_layouts.server_bufpool)
	check "m1's server pinned = status's (bufpool=$bp)" \
		test "$(value zcfs_volume_server_pinned_bytes "$V1,bufpool=\"$bp\"")" = "$(vol_field m1 pinned_layouts.server)"
fi
check "t1's pinned bytes = the sum ($pinned)" test "$(value zcfs_tenant_pinned_bytes 'tenant="t1"')" = "$pinned"
check "t1 has 2 volumes" test "$(value zcfs_tenant_volumes 'tenant="t1"')" = 2
check "m1 restarts_total starts at 0" test "$(value zcfs_volume_restarts_total "$V1")" = 0

# Request counters the server shares with zcfsd: 3 MiB written with
# O_DIRECT (each write reaches the server), then read back.
req0=$(value zcfs_volume_requests_total "$V1")
dd if=/dev/urandom of="$TGT/a/blob" bs=1M count=3 oflag=direct status=none
dd if="$TGT/a/blob" of=/dev/null bs=1M iflag=direct status=none
cat "$TGT/a/does-not-exist" 2>/dev/null
written=$(value zcfs_volume_written_bytes_total "$V1")
readb=$(value zcfs_volume_read_bytes_total "$V1")
req=$(value zcfs_volume_requests_total "$V1")
check "requests_total grew with the I/O ($req0 -> $req)" test "${req:-0}" -gt "${req0:-0}"
check "written_bytes_total counts the 3 MiB ($written)" test "${written:-0}" -ge $((3 << 20))
check "read_bytes_total counts the 3 MiB ($readb)" test "${readb:-0}" -ge $((3 << 20))
check "errors_total counts the failed lookup" test "$(value zcfs_volume_errors_total "$V1")" -ge 1
scrape >"$W/scrape-hist.txt"
check "the latency histogram's +Inf bucket equals its count" \
	test "$(value zcfs_volume_request_duration_seconds_bucket "$V1,le=\"+Inf\"" "$W/scrape-hist.txt")" = \
	"$(value zcfs_volume_request_duration_seconds_count "$V1" "$W/scrape-hist.txt")"
if [ -n "${PROMTOOL:-}" ]; then
	scrape >"$W/scrape2.txt"
	check "promtool check metrics with volumes, counters and histograms: clean" \
		bash -c "'$PROMTOOL' check metrics <'$W/scrape2.txt' >'$W/promtool2.out' 2>&1 && [ ! -s '$W/promtool2.out' ]"
	[ -s "$W/promtool2.out" ] && sed 's/^/# promtool: /' "$W/promtool2.out"
fi
check "the histogram count equals requests_total" \
	test "$(value zcfs_volume_request_duration_seconds_count "$V1" "$W/scrape-hist.txt")" = \
	"$(value zcfs_volume_requests_total "$V1" "$W/scrape-hist.txt")"

P=$(server_pid m1)
kill -KILL "$P"
wait_for "m1's server to be restarted" 10 \
	bash -c "[ \"\$(\"$ZCFS_BIN/zcfsctl\" --socket '$SOCK' volume get m1 | jq -r .volume.restarts)\" -ge 1 ]"
wait_for "m1 to be published again" 10 \
	bash -c "[ \"\$(\"$ZCFS_BIN/zcfsctl\" --socket '$SOCK' volume get m1 | jq -r .volume.state)\" = published ]"
check "after a kill, m1 restarts_total is 1" test "$(value zcfs_volume_restarts_total "$V1")" = 1
check "... and its server is up again" test "$(value zcfs_volume_server_up "$V1")" = 1
check "the counters survive the restart (written >= $written)" \
	test "$(value zcfs_volume_written_bytes_total "$V1")" -ge "${written:-1}"

rc=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$MSOCK" http://localhost/nope)
check "other paths are 404 ($rc)" test "$rc" = 404
rc=$(curl -s -o /dev/null -w '%{http_code}' -X POST --unix-socket "$MSOCK" http://localhost/metrics)
check "POST is 405 ($rc)" test "$rc" = 405

# a client that connects and says nothing must not stall the daemon
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b"GET /metr"); time.sleep(20)' "$MSOCK" &
_zcfs_pids+=("$!")
sleep 0.3
check "the control socket still answers with a stalled metrics client" eval "ctl status >/dev/null"
check "and so does the metrics endpoint" scrape_ok

ctl volume unpublish m1 "$TGT/a" >/dev/null
check "after unpublish m1 is created" test "$(value zcfs_volume_state "$V1,state=\"created\"")" = 1
check "t1's pinned bytes are 0 again" test "$(value zcfs_tenant_pinned_bytes 'tenant="t1"')" = 0

kill -TERM "$ZCFSD_PID"
wait "$ZCFSD_PID"
ZCFSD_PID=
check "the metrics socket is gone after zcfsd exits" test ! -e "$MSOCK"
[ "${_zcfs_failed:-0}" -eq 0 ] || show_zcfsd_log
finish
