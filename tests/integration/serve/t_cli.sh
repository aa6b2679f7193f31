#!/usr/bin/env bash
# The command lines operators type (no root, no daemon, ~2 s): --version
# on every binary (one line: NAME VERSION (FUSE protocol 7.N), the same
# version and protocol everywhere, the protocol zcfs-serve negotiates);
# zcfsctl's global options before or after the command (--socket really
# used: the unreachable socket's path is in the error, exit 3), unknown
# commands named first then the usage (exit 2), unknown options after a
# command refused, never ignored (exit 2), and values the CLI can check
# refused by the CLI (exit 2, not 3: zcfsd was never asked);
# zcfs-volume-plugin's --zcfsd-timeout checked.
. "$(dirname "$0")/../../lib.sh"
top=$(cd "$(dirname "$0")/../../.." && pwd)
for p in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-volume-plugin; do
	[ -x "$ZCFS_BIN/$p" ] || fail "$ZCFS_BIN/$p not built"
done
W=$(make_tmpdir)
minor=$(sed -n 's/^#define ZCFS_FUSE_MINOR \([0-9]*\)$/\1/p' "$top/kernel/zcfs_fuse_abi.h")
[ -n "$minor" ] || fail "ZCFS_FUSE_MINOR not found in kernel/zcfs_fuse_abi.h"

log "--version"
versions=()
for p in zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-flexvolume zcfs-volume-plugin; do
	[ -x "$ZCFS_BIN/$p" ] || continue   # zcfs-flexvolume: only where it is built
	out=$("$ZCFS_BIN/$p" --version 2>"$W/err"); rc=$?
	name=$p; case $p in zcfs-csi|zcfs-flexvolume) name=csi.zcfs.io;; esac   # the CSI driver name
	check "$p --version: exit 0 (got $rc)" test $rc = 0
	check "$p --version: one line '$out'" test "$(wc -l <<<"$out")" = 1 -a ! -s "$W/err"
	check "$p --version: NAME VERSION (FUSE protocol 7.$minor)" \
		grep -qxE "$name [0-9]+\.[0-9]+\.[0-9]+ \(FUSE protocol 7\.$minor\)" <<<"$out"
	versions+=("$(awk '{print $2}' <<<"$out")")
done
check "every binary has the same version (${versions[*]})" test "$(printf '%s\n' "${versions[@]}" | sort -u | wc -l)" = 1
check "zcfsctl --version after a command too" bash -c "'$ZCFS_BIN/zcfsctl' status --version | grep -q '^zcfsctl '"

C=$ZCFS_BIN/zcfsctl
export ZCFS_SOCKET=$W/default.sock   # nobody listens: a call exits 3 naming it
# ctl_case ARGS...: RC, ERR (stderr), FIRST (its first line)
ctl_case() {
	RC=0
	timeout 10 "$C" "$@" >"$W/out" 2>"$W/err" </dev/null || RC=$?
	ERR=$(cat "$W/err")
	FIRST=$(head -n 1 "$W/err")
}
# refused DESC WANT-FIRST-LINE-REGEX ARGS...: exit 2, the problem named
# on the first line, then the usage; the socket was never tried
refused() {
	local desc=$1 want=$2; shift 2
	ctl_case "$@"
	check "$desc: exit 2 (got $RC)" test "$RC" = 2
	check "$desc: first line names it ('$FIRST')" grep -qE "^zcfsctl: $want" <<<"$FIRST"
	check "$desc: then the usage" grep -q '^Usage: zcfsctl' <<<"$ERR"
	check "$desc: zcfsd was not asked" bash -c "! grep -q 'default.sock\|/x.sock' '$W/err'"
}

log "zcfsctl: options before and after the command"
for args in "--socket $W/x.sock status" "status --socket $W/x.sock" "--socket=$W/x.sock status" \
	"status --socket=$W/x.sock" "volume list --socket $W/x.sock" "volume --socket $W/x.sock get v1" \
	"status --json --socket $W/x.sock" "tenant list --socket=$W/x.sock"; do
	# shellcheck disable=SC2086
	ctl_case $args
	check "zcfsctl $args: the given socket is used (exit 3, it is named)" \
		bash -c "[ $RC = 3 ] && grep -q '$W/x.sock' '$W/err' && ! grep -q default.sock '$W/err'"
done
ctl_case status
check "zcfsctl status: \$ZCFS_SOCKET without --socket (exit 3, named)" bash -c "[ $RC = 3 ] && grep -q default.sock '$W/err'"
ctl_case -- status
check "zcfsctl -- status: '--' ends the global options" test "$RC" = 3
ctl_case --help
check "zcfsctl --help: exit 0" test "$RC" = 0
check "zcfsctl volume create --help: exit 0, usage on stdout" bash -c "'$C' volume create --help | grep -q '^Usage: zcfsctl'"

log "zcfsctl: unknown commands and options"
refused "no command"                "missing command"
refused "zcfsctl bogus"             "unknown command 'bogus'$"        bogus
refused "zcfsctl volume bogus"      "unknown command 'volume bogus'$" volume bogus
refused "zcfsctl volume"            "volume: missing subcommand"      volume
refused "zcfsctl --bogus status"    "unknown option '--bogus'"        --bogus status
refused "zcfsctl -x status"         "unknown option '-x'"             -x status
refused "status --bogus"            "status: unknown option '--bogus'" status --bogus
refused "status extra"              "status: unexpected argument 'extra'" status extra
refused "volume list --json"        "volume list: unknown option '--json'" volume list --json
refused "volume get v1 --bogus"     "volume get: unknown option '--bogus'" volume get v1 --bogus
refused "volume delete v1 v2"       "volume delete: want ID"          volume delete v1 v2
refused "volume publish v1"         "volume publish: want ID TARGET"  volume publish v1
refused "volume publish --read-only=yes" "volume publish: option '--read-only=yes' takes no value" \
	volume publish v1 /t --read-only=yes
refused "volume unpublish --read-only" "volume unpublish: unknown option '--read-only'" \
	volume unpublish v1 /t --read-only
refused "volume create --bogus"     "volume create: unknown option '--bogus'" volume create v1 --bogus
refused "volume create without ID"  "volume create: want exactly one ID" volume create --tenant t1
refused "volume create --tenant (no value)" "volume create: option '--tenant' needs a value" volume create v1 --tenant
refused "tenant bogus"              "tenant: want 'tenant list'"      tenant bogus
refused "policy bogus"              "policy: want"                    policy bogus
refused "raw extra"                 "raw: takes no arguments"         raw extra
refused "call without METHOD"       "call: want METHOD"               call
refused "--socket without a path"   "option '--socket' needs a PATH"  status --socket
refused "--socket= (empty)"         "option '--socket' needs a PATH"  --socket= status
ctl_case kernel --bogus
check "kernel --bogus: exit 2 (got $RC)" test "$RC" = 2
check "kernel --bogus: named ($FIRST)" grep -q "^zcfsctl: kernel: unknown option '--bogus'" "$W/err"

log "zcfsctl: bad values refused by the CLI"
refused "--queue-depth 0"        "volume create: --queue-depth '0'"       volume create v1 --queue-depth 0
refused "--queue-depth 1025"     "volume create: --queue-depth '1025'"    volume create v1 --queue-depth 1025
refused "--queue-depth abc"      "volume create: --queue-depth 'abc'"     volume create v1 --queue-depth abc
refused "--queue-depth 8x"       "volume create: --queue-depth '8x'"      volume create v1 --queue-depth 8x
refused "--queue-depth -1"       "volume create: --queue-depth '-1'"      volume create v1 --queue-depth=-1
refused "--max-write 5000"       "volume create: --max-write '5000'"      volume create v1 --max-write 5000
refused "--max-write 32M"        "volume create: --max-write '32M'"       volume create v1 --max-write 32M
refused "--max-write 0"          "volume create: --max-write '0'"         volume create v1 --max-write 0
refused "--size huge"            "volume create: --size 'huge'"           volume create v1 --size huge
refused "--size -1"              "volume create: --size '-1'"             volume create v1 --size=-1
refused "--transport pigeon"     "volume create: --transport 'pigeon'"    volume create v1 --transport pigeon
refused "--tenant a/b"           "volume create: --tenant 'a/b'"          volume create v1 --tenant a/b
refused "volume create ../x"     "volume create: ID '../x'"               volume create ../x
refused "volume get a/b"         "volume get: ID 'a/b'"                   volume get a/b
ctl_case volume create v1 --queue-depth 1024 --max-write 16M --size 1G --transport uring --tenant t1 --read-only
check "good values pass the CLI to zcfsd (exit 3: not reachable)" test "$RC" = 3
ctl_case volume create --max-write 128K v1
check "options before the ID too" test "$RC" = 3

log "zcfs-volume-plugin: --zcfsd-timeout"
for bad in 0 50ms 3601 abc 4x -1 "" ms 1.5; do
	rc=0
	timeout 5 "$ZCFS_BIN/zcfs-volume-plugin" --zcfsd-timeout "$bad" --listen "$W/vp.sock" \
		--state-dir "$W/vp" --socket "$W/x.sock" >/dev/null 2>"$W/err" || rc=$?
	check "--zcfsd-timeout '$bad': exit 2 (got $rc), says why" \
		bash -c "[ $rc = 2 ] && grep -q 'zcfsd-timeout' '$W/err'"
	check "... it did not start (no socket)" test ! -e "$W/vp.sock"
done
rc=0
timeout 5 "$ZCFS_BIN/zcfs-volume-plugin" --listen "$W/vp.sock" extra >/dev/null 2>"$W/err" || rc=$?
check "zcfs-volume-plugin with an extra argument: exit 2, named" bash -c "[ $rc = 2 ] && grep -q \"unexpected argument 'extra'\" '$W/err'"
check "--zcfsd-timeout is in --help" bash -c "'$ZCFS_BIN/zcfs-volume-plugin' --help | grep -q -- '--zcfsd-timeout DURATION'"
finish
