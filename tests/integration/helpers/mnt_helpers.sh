# shellcheck shell=bash
# Extra helpers for the integration tests (sourced after tests/lib.sh).
#
# ZCFS_TEST_NATIVE=1 makes tests that support it run their body against a
# plain tmpfs directory instead of a zcfs mount, to prove the test itself
# (command lines, expectations) passes on a native file system first.

: "${ZCFS_TEST_NATIVE:=0}"

# new_tmpdir VAR [tmpfs-size]: like VAR=$(make_tmpdir SIZE), but registers
# the directory for cleanup in this shell (make_tmpdir inside $(...) runs in
# a subshell, so its registration, and thus the cleanup, would be lost).
new_tmpdir() {
	local __f
	__f=$(mktemp /tmp/zcfs-tmpname.XXXXXX)
	make_tmpdir "${2:-}" >"$__f" || { rm -f "$__f"; fail "make_tmpdir"; }
	printf -v "$1" '%s' "$(cat "$__f")"
	rm -f "$__f"
}

is_native() { [ "$ZCFS_TEST_NATIVE" = 1 ]; }

# need_testbin NAME: path of a C helper built from tests/integration/helpers/NAME.c
need_testbin() {
	local p="$ZCFS_TESTBIN/$1"
	[ -x "$p" ] || fail "$p not built (run make)"
	echo "$p"
}

# need_serve: zcfs-serve must exist unless running natively
need_serve() {
	is_native && return 0
	[ -x "$ZCFS_BIN/zcfs-serve" ] || fail "$ZCFS_BIN/zcfs-serve not built"
}

# The exit status of a process the seccomp filter killed (SIGSYS).
# shellcheck disable=SC2034 # the sandbox tests use it
SIGSYS_RC=$((128 + 31))

# asan_no_leak_check: LeakSanitizer stops the world with ptrace at exit,
# which the seccomp filter rightly kills: sandboxed processes of an ASan
# build skip it.
asan_no_leak_check() { export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; }

# serve_require: what a test of a zcfs-serve mount needs (root, /dev/fuse,
# the binary); skips or fails with the reason otherwise.
serve_require() {
	require_root
	require_fuse
	need_serve
}

# mount_or_native SRC MNT [opts]: zcfs_mount, or in native mode make MNT a
# bind mount of SRC (so the test body is identical). Sets ZCFS_PID ("" native).
mount_or_native() {
	local src=$1 mnt=$2; shift 2
	if is_native; then
		mount --bind "$src" "$mnt" || fail "bind mount"
		_zcfs_mounts+=("$mnt")
		ZCFS_PID=
		return 0
	fi
	zcfs_mount "$src" "$mnt" "$@"
}

# umount_wait MNT [SECS]: unmount MNT and wait (bounded) for the server to
# exit; returns the server's exit status (124 when it did not exit in time).
umount_wait() {
	local mnt=$1 secs=${2:-10}
	if [ -z "${ZCFS_PID:-}" ]; then
		umount "$mnt" 2>/dev/null || umount -l "$mnt"
		return 0
	fi
	umount "$mnt" 2>/dev/null || umount -l "$mnt"
	wait_pid_exit "$ZCFS_PID" "$secs"
}

# wait_pid_exit PID SECS: waits for a child of this shell; prints nothing,
# returns its exit status, or 124 if it is still running after SECS.
wait_pid_exit() {
	local pid=$1 secs=$2
	for _ in $(seq $((secs * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then return 124; fi
	wait "$pid"
}

# is_mounted MNT: MNT appears in the mount table
is_mounted() { grep -q " $1 " /proc/self/mounts; }

# show_log MNT: server log for diagnostics
show_log() { [ -f "$1.log" ] && sed 's/^/# server: /' "$1.log" | tail -n 20; }

# start_sandboxed SRC MNT LOG: a standalone zcfs-serve --sandbox on MNT,
# mounted by root (mountfd), served as uid 1500 without capabilities;
# SERVE_PID is its pid, registered for cleanup with the mount. Waits until
# it serves (fails the test otherwise).
start_sandboxed() {
	local src=$1 mnt=$2 log=$3
	[ -x "$ZCFS_TESTBIN/mountfd" ] || fail "$ZCFS_TESTBIN/mountfd not built (run make)"
	chown 1500:1500 "$src"
	"$ZCFS_TESTBIN/mountfd" "$src" "$mnt" setpriv --reuid=1500 --regid=1500 --clear-groups \
		--inh-caps=-all --bounding-set=-all --no-new-privs \
		"$ZCFS_BIN/zcfs-serve" --foreground --fd=3 --ownership=xattr --sandbox \
		--transport="$ZCFS_TRANSPORT" "$src" "$mnt" 2>"$log" &
	SERVE_PID=$!
	_zcfs_pids+=("$SERVE_PID")
	_zcfs_mounts+=("$mnt")
	wait_for "the sandboxed server on $mnt to serve" 5 grep -q "serving " "$log" ||
		{ sed 's/^/# server: /' "$log"; fail "sandboxed zcfs-serve did not start"; }
}
