#!/usr/bin/env bash
# zcfsctl kernel: the JSON fields and verdicts on this kernel, the text
# form, and that the io_uring verdict follows enable_uring (flipped N then
# Y, and restored to what it was, also on failure). Runs once: the
# transport under test does not matter to a kernel probe.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
require_fuse
require_cmd python3
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "kernel probe is transport-independent (runs with devfuse only)"
CTL=$ZCFS_BIN/zcfsctl
[ -x "$CTL" ] || fail "$CTL not built"
param=/sys/module/fuse/parameters/enable_uring
new_tmpdir WORK

# field FILE EXPR: a value from the JSON in FILE (python expression on j)
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$CTL" kernel --json >"$WORK/k.json"; rc=$?
check "zcfsctl kernel --json exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
check "output is JSON with five paths" \
	[ "$(field "$WORK/k.json" "','.join(sorted(j['paths']))")" = "buffer_pool,devfuse,io_uring,passthrough,zero_copy" ]
proto=$(field "$WORK/k.json" "j['fuse_protocol']")
log "kernel offered FUSE protocol $proto"
check "FUSE protocol read from INIT ($proto)" eval '[[ $proto =~ ^7\.[0-9]+$ ]]'
check "devfuse supported" [ "$(field "$WORK/k.json" "j['paths']['devfuse']['status']")" = supported ]
for p in devfuse io_uring buffer_pool zero_copy passthrough; do
	st=$(field "$WORK/k.json" "j['paths']['$p']['status']")
	why=$(field "$WORK/k.json" "j['paths']['$p']['reason']")
	check "$p: a known status ($st)" eval '[[ $st =~ ^(supported|not\ supported|disabled)$ ]]'
	if [ "$st" != supported ]; then check "$p: says why it is $st" [ -n "$why" ]; fi
done
minor=${proto#7.}
if [ "$minor" -lt 46 ]; then
	check "buffer pools: patch series missing on 7.$minor" \
		grep -q "patch series missing" <(field "$WORK/k.json" "j['paths']['buffer_pool']['reason']")
	check "zero-copy not supported on 7.$minor" \
		[ "$(field "$WORK/k.json" "j['paths']['zero_copy']['status']")" != supported ]
fi
check "memlock figures present" [ "$(field "$WORK/k.json" "j['memlock']['default_pinned'] > 0")" = True ]

"$CTL" kernel >"$WORK/k.txt"; rc=$?
check "text form exits 0" [ "$rc" -eq 0 ]
check "text form names the protocol" grep -q "FUSE protocol $proto offered" "$WORK/k.txt"
for p in devfuse io_uring buffer_pool zero_copy passthrough; do
	check "text form has a $p line" grep -qE "^$p +(supported|not supported|disabled)" "$WORK/k.txt"
done
sed 's/^/# /' "$WORK/k.txt"

if [ -w "$param" ]; then
	orig=$(cat "$param")
	# Restored by the EXIT trap too: lib.sh's trap runs _zcfs_cleanup,
	# so chain ours in front of it.
	trap 'echo "$orig" >"$param" 2>/dev/null; _zcfs_cleanup' EXIT
	echo N >"$param"
	"$CTL" kernel --json >"$WORK/n.json"
	echo Y >"$param"
	"$CTL" kernel --json >"$WORK/y.json"
	echo "$orig" >"$param"
	n=$(field "$WORK/n.json" "j['paths']['io_uring']['status']")
	y=$(field "$WORK/y.json" "j['paths']['io_uring']['status']")
	log "io_uring verdict: enable_uring=N -> $n, Y -> $y"
	check "enable_uring=N: io_uring disabled" [ "$n" = disabled ]
	check "enable_uring=N: reason names the parameter" \
		grep -q "enable_uring=N" <(field "$WORK/n.json" "j['paths']['io_uring']['reason']")
	check "enable_uring=Y: io_uring verdict changes" [ "$n" != "$y" ]
	check "enable_uring=Y: io_uring supported" [ "$y" = supported ]
	check "enable_uring restored to $orig" [ "$(cat "$param")" = "$orig" ]
else
	log "no writable $param: flip test not run"
fi
check "no scratch mount left" eval '! grep -q zcfs-kprobe /proc/self/mounts'
check "no scratch directory left" eval '! compgen -G "/tmp/zcfs-kprobe.*" >/dev/null'
finish
