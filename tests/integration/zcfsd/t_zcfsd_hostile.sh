#!/usr/bin/env bash
# Hostile requests: each is answered with the documented code and changes
# nothing, neither on disk under the work dir nor in the mount table nor
# in the process list: malformed JSON, a non-object, unknown top-level
# field, unknown method, unknown parameter, an oversized request (the
# daemon still serves afterwards), "../" and other bad ids, targets that
# are relative, not normalized, outside the tenant's prefixes, equal to the
# prefix, through a symlinked directory or a symlink themselves; and a
# peer that is neither root nor in the admin group.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
mkdir -p "$W/outside" "$TGT/real"
ln -s "$W/outside" "$TGT/link"          # symlinked directory inside the prefix
ln -s "$W/outside" "$TGT/leaflink"      # the target itself a symlink
zcfsd_start
ctl volume create v1 --transport "$ZCFS_TRANSPORT" >/dev/null || fail "create v1"
before=$(snapshot)

# expect CODE DESC CMD...: the call answers CODE and nothing changed
expect() {
	local want=$1 desc=$2 got; shift 2
	got=$(code_of "$@")
	check "$desc -> $want (got $got)" test "$got" = "$want"
	check "$desc changed nothing" test "$(snapshot)" = "$before"
}
raw() { printf '%s' "$1" | ctl raw; }
pub() { ctl call volume.publish "{\"id\":\"${2:-v1}\",\"target\":\"$1\"}"; }

expect INVALID_ARGUMENT "malformed JSON" raw '{"method": "status", '
# an empty line (also "\r\n") is answered at once, not left to the 15 s
# idle close (issue 27); the connection then still serves a request
empty_line() {
	/usr/bin/python3 - "$SOCK" "$1" <<-'PY'
	import json, socket, sys, time
	s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1])
	f = s.makefile("rwb")
	t0 = time.monotonic()
	f.write(sys.argv[2].encode().decode("unicode_escape").encode()); f.flush()
	a = json.loads(f.readline())
	ms = (time.monotonic() - t0) * 1000
	f.write(b'{"method": "status"}\n'); f.flush()
	b = json.loads(f.readline())
	print("%s %d %s" % (a["error"]["code"], ms, "result" in b))
	PY
}
for nl in '\n' '\r\n'; do
	out=$(empty_line "$nl" 2>&1)
	check "an empty line ($nl) is answered INVALID_ARGUMENT within 1 s, then status ($out)" \
		bash -c "[[ '$out' =~ ^INVALID_ARGUMENT\ ([0-9]+)\ True$ ]] && [ \${BASH_REMATCH[1]} -lt 1000 ]"
done
expect INVALID_ARGUMENT "binary garbage" raw $'\x01\x02\xff\xfe'
expect INVALID_ARGUMENT "a JSON array" raw '["status"]'
expect INVALID_ARGUMENT "method not a string" raw '{"method": 7}'
expect INVALID_ARGUMENT "params not an object" raw '{"method": "status", "params": [1]}'
expect INVALID_ARGUMENT "unknown top-level field" raw '{"method": "status", "id": 1}'
expect UNIMPLEMENTED "unknown method" raw '{"method": "volume.format"}'
expect INVALID_ARGUMENT "unknown parameter" ctl call volume.get '{"id":"v1","force":true}'
big=$(head -c 100000 /dev/zero | tr '\0' a)
expect INVALID_ARGUMENT "oversized request (100000 bytes)" raw "{\"method\":\"status\",\"params\":{\"x\":\"$big\"}}"
check "the daemon still answers after the oversized request" ctl status
expect INVALID_ARGUMENT "id ../etc" ctl call volume.create '{"id":"../etc"}'
expect INVALID_ARGUMENT "id with a slash" ctl call volume.create '{"id":"a/b"}'
expect INVALID_ARGUMENT "id starting with a dot" ctl call volume.create '{"id":".hidden"}'
expect INVALID_ARGUMENT "empty id" ctl call volume.create '{"id":""}'
expect INVALID_ARGUMENT "id of 129 chars" ctl call volume.create "{\"id\":\"$(head -c 129 /dev/zero | tr '\0' a)\"}"
expect INVALID_ARGUMENT "publish with id ../v1" ctl call volume.publish "{\"id\":\"../v1\",\"target\":\"$TGT/x\"}"
expect NOT_FOUND "unknown tenant" ctl call volume.create '{"id":"v9","tenant":"nobody"}'
expect INVALID_ARGUMENT "relative target" pub "targets/x"
expect INVALID_ARGUMENT "target with .." pub "$TGT/../outside"
expect INVALID_ARGUMENT "target with //" pub "$TGT//x"
expect INVALID_ARGUMENT "target with trailing /" pub "$TGT/x/"
expect PERMISSION_DENIED "target outside the prefixes" pub "$W/outside/x"
expect PERMISSION_DENIED "target equal to the prefix" pub "$TGT"
expect PERMISSION_DENIED "target /etc" pub "/etc"
expect PERMISSION_DENIED "target sharing the prefix's name start" pub "${TGT}evil/x"
expect INVALID_ARGUMENT "target below a symlinked directory" pub "$TGT/link/x"
expect INVALID_ARGUMENT "target that is a symlink" pub "$TGT/leaflink"
expect INVALID_ARGUMENT "target missing" ctl call volume.publish '{"id":"v1"}'
# JSON that json-c alone would take to mean something else
expect INVALID_ARGUMENT "an id with \\u0000 (was created as 'a')" raw '{"method":"volume.create","params":{"id":"a\u0000b"}}'
expect INVALID_ARGUMENT "a target with \\u0000 (was mounted at 'x')" pub "$TGT/x\\u0000y"
expect INVALID_ARGUMENT "a duplicate key (last won)" raw '{"method":"volume.create","params":{"id":"d1","id":"d2"}}'
expect INVALID_ARGUMENT "a duplicate top-level key" raw '{"method":"volume.delete","method":"status"}'
expect INVALID_ARGUMENT "trailing garbage after the object" raw '{"method":"volume.create","params":{"id":"t9"}} x'
expect INVALID_ARGUMENT "a second object on the line" raw '{"method":"status"}{"method":"status"}'
expect INVALID_ARGUMENT "a newline in a target" pub "$TGT/x\\ny"
expect INVALID_ARGUMENT "a tab in a target" pub "$TGT/x\\ty"
expect INVALID_ARGUMENT "a 300-byte path component (was INTERNAL)" pub "$TGT/$(head -c 300 /dev/zero | tr '\0' a)"
expect NOT_FOUND "publish of an unknown volume" pub "$TGT/real" nosuch
check "nothing was created in the outside dir" test -z "$(ls -A "$W/outside")"
check "no storage dir for v1 yet" test ! -e "$STORE/t1/v1"

# A peer that is neither root nor in the admin group (gid 0 here).
chmod 0777 "$W"   # let it reach the socket; the socket mode is what keeps it out
out=$(setpriv --reuid=$TENANT_UID2 --regid=$TENANT_UID2 --clear-groups -- \
	"$ZCFS_BIN/zcfsctl" --socket "$SOCK" call status 2>&1)
check "an unprivileged peer gets no answer (socket 0660 root:admin)" \
	bash -c "! grep -q '\"result\"' <<<'$out'"
chmod 0666 "$SOCK"   # the peer check must hold even if the socket mode does not
out=$(setpriv --reuid=$TENANT_UID2 --regid=$TENANT_UID2 --clear-groups -- \
	"$ZCFS_BIN/zcfsctl" --socket "$SOCK" call status 2>&1)
check "with the socket opened up, SO_PEERCRED still refuses: PERMISSION_DENIED" \
	test "$(jq -r .error.code <<<"$out" 2>/dev/null)" = PERMISSION_DENIED
chmod 0755 "$W"
check "the daemon logged the refused peer" grep -q "event=peer-denied.*uid=$TENANT_UID2" "$W/zcfsd.log"
check "the daemon is still alive" kill -0 "$ZCFSD_PID"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
