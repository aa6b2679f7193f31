#!/usr/bin/env bash
# Command-line contract of zcfs-serve: every bad argument exits 2 with
# exactly one line on stderr and mounts nothing; --help and --version exit 0
# and print to stdout.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
serve_require
S=$ZCFS_BIN/zcfs-serve

new_tmpdir SRC
new_tmpdir MNT
new_tmpdir TMP
echo x >"$TMP/regular"
_zcfs_mounts+=("$MNT") # unmounted by the trap should a case mount anyway

# run_case ARGS...: runs the server (bounded), sets RC, OUT, ERR
run_case() {
	RC=0
	# --foreground: if an argument is wrongly accepted, the server stays in
	# the foreground and timeout ends it instead of a daemon lingering
	timeout -s KILL 5 "$S" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}
nlines() { awk 'END { print NR }' "$1"; }
no_mount() {
	if grep -q " $MNT " /proc/self/mounts; then
		umount -l "$MNT"
		return 1
	fi
	return 0
}

# bad DESC ARGS...
bad() {
	local desc=$1; shift
	run_case "$@"
	local n; n=$(nlines "$TMP/err")
	check "$desc: exit 2 (got $RC)" [ "$RC" -eq 2 ]
	check "$desc: exactly one line on stderr (got $n: ${ERR//$'\n'/ | })" [ "$n" -eq 1 -a -n "$ERR" ]
	check "$desc: nothing mounted" no_mount
}

F=--foreground
bad "no arguments"                  $F
bad "missing MOUNTPOINT"            $F "$SRC"
bad "extra argument"                $F "$SRC" "$MNT" extra
bad "unknown option"                $F --bogus-option "$SRC" "$MNT"
bad "unknown short option"          $F -Z "$SRC" "$MNT"
bad "--threads=0"                   $F --threads=0 "$SRC" "$MNT"
bad "--threads=abc"                 $F --threads=abc "$SRC" "$MNT"
bad "--threads=99999999999"         $F --threads=99999999999 "$SRC" "$MNT"
bad "--threads=-1"                  $F --threads=-1 "$SRC" "$MNT"
bad "--threads=4x"                  $F --threads=4x "$SRC" "$MNT"
bad "--threads= (empty)"            $F --threads= "$SRC" "$MNT"
bad "--transport=bogus"             $F --transport=bogus "$SRC" "$MNT"
bad "--transport= (empty)"          $F --transport= "$SRC" "$MNT"
bad "--ownership=bogus"             $F --ownership=bogus "$SRC" "$MNT"
bad "--read-only=yes (flag with a value)" $F --read-only=yes "$SRC" "$MNT"
bad "nonexistent SOURCE"            $F "$TMP/nonexistent" "$MNT"
bad "SOURCE is a regular file"      $F "$TMP/regular" "$MNT"
bad "nonexistent MOUNTPOINT"        $F "$SRC" "$TMP/nonexistent"
bad "MOUNTPOINT is a regular file"  $F "$SRC" "$TMP/regular"
bad "nonexistent SOURCE (no --foreground)" "$TMP/nonexistent" "$MNT"
bad "unknown option (no --foreground)" --bogus-option "$SRC" "$MNT"

for opt in --help --version; do
	run_case "$opt"
	check "$opt: exit 0 (got $RC)" [ "$RC" -eq 0 ]
	check "$opt: prints to stdout" [ -n "$OUT" ]
	check "$opt: nothing mounted" no_mount
done
check "--help mentions the options" eval '[[ "$(timeout 5 "$S" --help)" == *--transport* ]]'
finish
