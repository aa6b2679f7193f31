#!/usr/bin/env bash
# Logs journald and log shippers can sort (issue 27): with JOURNAL_STREAM
# naming its stderr (as systemd sets it), zcfsd starts every line with
# its syslog priority <N> (journald takes it: `journalctl -p err`; the
# unit under a real systemd is t_systemd's), matching the line's level;
# a server's log (its stderr is a pipe to zcfsd) has none; with
# JOURNAL_STREAM naming another file, no prefix. --log-format=json: every
# line of zcfsd, zcfs-csi and zcfs-volume-plugin is one JSON object
# {time, program, level, message} (jq parses each). zcfs-csi's global
# options also after the method or serve. Transport-independent: devfuse
# only. About 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require curl

levels='emerg alert crit error warning notice info debug'
# prefixed FILE: every line is <N>IDENT: level=NAME with NAME the Nth level
prefixed() {
	awk -v names="$levels" 'BEGIN { split(names, n, " ") }
		{ if (!match($0, /^<[0-7]>[a-z-]+: level=[a-z]+ /)) { print "no prefix: " $0; bad = 1; next }
		  p = substr($0, 2, 1) + 1; lv = $0; sub(/^[^=]*=/, "", lv); sub(/ .*/, "", lv)
		  if (n[p] != lv) { print "priority " p - 1 " for level " lv ": " $0; bad = 1 } }
		END { exit bad }' "$1"
}
json_lines() {	# FILE: each line one object with the four keys
	[ -s "$1" ] && jq -e -s 'all(.[]; (.time | test("^[0-9-]+T[0-9:.]+Z$")) and (.program | length > 0)
		and (.level | IN("emerg","alert","crit","error","warning","notice","info","debug"))
		and (.message | type == "string"))' "$1" >/dev/null
}

# 1. JOURNAL_STREAM names zcfsd's stderr
zcfsd_env 64M true
: >"$W/zcfsd.log"
JOURNAL_STREAM=$(stat -c "%d:%i" "$W/zcfsd.log")
export JOURNAL_STREAM
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
ctl volume publish nosuch "$TGT/b" >/dev/null 2>&1
kill -SYS "$(server_pid v1)"
wait_for "the seccomp-kill error line" 10 grep -q 'reason=seccomp-kill' "$W/zcfsd.log"
log "$(grep -c . "$W/zcfsd.log") lines, $(grep -c '^<3>' "$W/zcfsd.log") at <3>, e.g. $(grep -m1 '^<3>' "$W/zcfsd.log")"
check "every zcfsd line carries its priority <N> = its level" prefixed "$W/zcfsd.log"
check "the seccomp kill is at <3> (err)" grep -q '^<3>zcfsd: level=error event=server-exit volume=v1 .*reason=seccomp-kill' "$W/zcfsd.log"
check "info lines at <6>" grep -q '^<6>zcfsd: level=info event=publish volume=v1' "$W/zcfsd.log"
check "an err filter keeps only error lines" \
	bash -c "grep '^<[0-3]>' '$W/zcfsd.log' | grep -qv 'level=\(error\|crit\|alert\|emerg\) ' && exit 1 || exit 0"
check "the server's log (a pipe, not the journal) has no prefix" \
	bash -c "grep -q 'level=info' '$STATE/logs/v1.log' && ! grep -q '<[0-7]>' '$STATE/logs/v1.log'"
zcfsd_kill9
unset JOURNAL_STREAM

# 2. JOURNAL_STREAM of another file: no prefix
: >"$W/other"
JOURNAL_STREAM=$(stat -c "%d:%i" "$W/other")
export JOURNAL_STREAM
mv "$W/zcfsd.log" "$W/zcfsd.log.1"
zcfsd_start
check "JOURNAL_STREAM naming another file: no prefix" bash -c "grep -q 'level=info' '$W/zcfsd.log' && ! grep -q '^<' '$W/zcfsd.log'"
zcfsd_kill9
unset JOURNAL_STREAM

# 3. --log-format=json
mv "$W/zcfsd.log" "$W/zcfsd.log.2"
zcfsd_start --log-format=json
ctl volume publish nosuch "$TGT/b" >/dev/null 2>&1
ctl volume unpublish v1 "$TGT/a" >/dev/null 2>&1
check "zcfsd --log-format=json: every line is a JSON object ($(grep -c . "$W/zcfsd.log") lines)" json_lines "$W/zcfsd.log"
check "... whose message is the key=value text" \
	bash -c "jq -r 'select(.program == \"zcfsd\") | .message' '$W/zcfsd.log' | grep -q '^event=unpublish volume=v1'"
check "zcfsd --log-format=xml: refused, exit 2" bash -c "'$ZCFS_BIN/zcfsd' --policy '$POLICY' --log-format=xml 2>/dev/null; [ \$? = 2 ]"
"$ZCFS_BIN/zcfs-csi" --log-format=json --socket "$W/nosuch.sock" --state-dir "$W/csi" Probe \
	</dev/null >/dev/null 2>"$W/csi.log"
check "zcfs-csi --log-format=json: the error line is JSON" json_lines "$W/csi.log"
"$ZCFS_BIN/zcfs-csi" Probe --socket "$W/nosuch.sock" --log-format json --state-dir "$W/csi" \
	</dev/null >"$W/csi.out" 2>"$W/csi2.log"
check "zcfs-csi METHOD --socket S --log-format json (options after the method)" \
	bash -c "json_lines() { jq -e -s 'length > 0' \"\$1\" >/dev/null; }; json_lines '$W/csi2.log' && jq -e '.error.code == \"UNAVAILABLE\"' '$W/csi.out' >/dev/null"
"$ZCFS_BIN/zcfs-csi" serve --socket "$SOCK" --endpoint "unix://$W/csi.sock" --state-dir "$W/csi" \
	--log-format=json 2>"$W/csi3.log" &
CP=$!
_zcfs_pids+=("$CP")
wait_for "zcfs-csi serve" 10 grep -q 'event=serving' "$W/csi3.log"
kill "$CP"; wait "$CP" 2>/dev/null
check "zcfs-csi serve --socket ... --log-format=json (global options after serve)" json_lines "$W/csi3.log"
"$ZCFS_BIN/zcfs-volume-plugin" --log-format=json --socket "$SOCK" --listen "$W/vp.sock" \
	--state-dir "$W/vp" --mount-root "$TGT/vp" 2>"$W/vp.log" &
VPP=$!
_zcfs_pids+=("$VPP")
wait_for "the volume plugin" 10 test -S "$W/vp.sock"
curl -sf --unix-socket "$W/vp.sock" -X POST http://p/VolumeDriver.Get -d '{"Name":"nosuch"}' >/dev/null
kill "$VPP"; wait "$VPP" 2>/dev/null
check "zcfs-volume-plugin --log-format=json: every line is JSON ($(grep -c . "$W/vp.log") lines)" json_lines "$W/vp.log"
[ "$_zcfs_failed" -eq 0 ] || { show_zcfsd_log; tail -n 5 "$W"/csi*.log "$W/vp.log"; }
finish
