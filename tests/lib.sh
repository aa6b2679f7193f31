# shellcheck shell=bash
# Shared helpers for integration tests (sourced, bash).
# Every test: `. "$(dirname "$0")/../lib.sh"`, then use the helpers below.
# Everything created through them (tmpfs, mounts, processes) is torn down by
# an EXIT trap, also when the test fails.
# Result protocol: exit 0 pass, 77 skip (last line says why), other = fail.

set -u
: "${ZCFS_BIN:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin}"
: "${ZCFS_TESTBIN:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tests/integration}"
: "${ZCFS_TRANSPORT:=devfuse}"
export ZCFS_BIN ZCFS_TESTBIN ZCFS_TRANSPORT

_zcfs_pids=()
declare -A _zcfs_conn=()	# mount point -> its fuse connection (0:N)
_zcfs_mounts=()
_zcfs_dirs=()
# make_tmpdir runs in $(...) subshells: it registers what it made in this
# file, which the EXIT trap of the test's own shell reads back.
_zcfs_registry=$(mktemp /tmp/zcfs-test-registry.XXXXXX)
_zcfs_checks=0
_zcfs_failed=0

_zcfs_cleanup() {
	local rc=$? m p d
	for p in "${_zcfs_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	# Lazy unmounts never block on a hung server; aborting the connection
	# (fusectl) wakes anything still waiting on it.
	for m in "${_zcfs_mounts[@]}"; do
		local dev
		dev=$(awk -v m="$m" '$5 == m && $9 ~ /^fuse/ {print $3}' /proc/self/mountinfo | tail -n 1)
		umount -l "$m" 2>/dev/null
		[ -n "$dev" ] && echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort" 2>/dev/null
	done
	for p in "${_zcfs_pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	# Loop-device file systems (backing_fs.sh), once nothing uses them.
	declare -F _zcfs_backing_cleanup >/dev/null && _zcfs_backing_cleanup
	while read -r d; do _zcfs_dirs+=("$d"); done <"$_zcfs_registry"
	for d in "${_zcfs_dirs[@]}"; do
		mountpoint -q "$d" 2>/dev/null && umount -l "$d" 2>/dev/null
		rm -rf --one-file-system "$d" 2>/dev/null
	done
	rm -f "$_zcfs_registry"
	exit $rc
}
trap _zcfs_cleanup EXIT
trap 'exit 130' INT TERM

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
log()  { echo "# $*"; }

require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }
require_fuse() { [ -c /dev/fuse ] || skip "no /dev/fuse"; }
require_cmd()  { command -v "$1" >/dev/null 2>&1 || skip "command $1 not installed"; }
# A statically linked busybox (a container image's whole userland) into BUSYBOX.
require_static_busybox() {
	BUSYBOX=$(command -v busybox || true)
	[ -x /bin/busybox ] && BUSYBOX=/bin/busybox
	[ -n "$BUSYBOX" ] || skip "busybox-static not installed"
	ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
		skip "$BUSYBOX is not statically linked (install busybox-static)"
}

# check DESC CMD...: one counted assertion (prints ok/not ok, keeps going).
check() {
	local desc=$1; shift
	_zcfs_checks=$((_zcfs_checks + 1))
	if "$@"; then echo "ok - $desc"; else echo "not ok - $desc"; _zcfs_failed=$((_zcfs_failed + 1)); fi
}
# finish: closing line for a test that used check(); exit status from it.
finish() {
	echo "$((_zcfs_checks - _zcfs_failed)) passed, $_zcfs_failed failed"
	[ "$_zcfs_failed" -eq 0 ]
}

# make_tmpdir [tmpfs-size]: new empty directory (on its own tmpfs when a
# size is given, e.g. 2G); removed at exit. Prints the path.
make_tmpdir() {
	local d
	d=$(mktemp -d /tmp/zcfs-test.XXXXXX)
	chmod 755 "$d"
	echo "$d" >>"$_zcfs_registry"
	# The runner's list: what is left under d after the test fails it.
	[ -n "${ZCFS_TEST_DIRS:-}" ] && echo "$d" >>"$ZCFS_TEST_DIRS"
	if [ -n "${1:-}" ]; then mount -t tmpfs -o "size=$1,mode=755" tmpfs "$d" || fail "tmpfs mount"; fi
	echo "$d"
}

# zcfs_mount SRC MNT [zcfs-serve options...]: starts zcfs-serve in the
# foreground (background job) on the test's transport and waits until MNT
# is a live FUSE mount. Sets ZCFS_PID. Its stderr goes to MNT's log file
# "$MNT.log" (read it with `cat "$MNT.log"`).
# ZCFS_SERVE_NOFILE=N runs the server with RLIMIT_NOFILE N (soft and hard),
# ZCFS_SERVE_DEFAULT_SIGNALS=1 with every signal reset to its default action
# (background jobs of a non-interactive shell otherwise inherit SIGINT ignored).
zcfs_mount() {
	local src=$1 mnt=$2 wrap=(); shift 2
	[ -n "${ZCFS_SERVE_NOFILE:-}" ] && wrap=(prlimit --nofile="$ZCFS_SERVE_NOFILE:$ZCFS_SERVE_NOFILE")
	[ "${ZCFS_SERVE_DEFAULT_SIGNALS:-}" = 1 ] && wrap+=(env --default-signal)
	"${wrap[@]}" "$ZCFS_BIN/zcfs-serve" --foreground --transport="$ZCFS_TRANSPORT" "$@" "$src" "$mnt" \
		2>"$mnt.log" &
	ZCFS_PID=$!
	_zcfs_pids+=("$ZCFS_PID")
	_zcfs_mounts+=("$mnt")
	_zcfs_dirs+=("$mnt.log")

	for _ in $(seq 100); do
		if grep -q " $mnt fuse" /proc/self/mounts && stat "$mnt" >/dev/null 2>&1; then
			_zcfs_conn[$mnt]=$(mountpoint -d "$mnt" 2>/dev/null)
			return 0
		fi
		kill -0 "$ZCFS_PID" 2>/dev/null || { cat "$mnt.log" >&2; fail "zcfs-serve exited before mounting $mnt"; }
		sleep 0.05
	done
	cat "$mnt.log" >&2
	fail "zcfs-serve did not mount $mnt within 5s"
}

# zcfs_umount MNT: unmount and wait for the server to exit; returns its status.
# A server sees its connection end when the last mount of it goes, in any
# mount namespace: a namespace made while MNT was mounted (unshare,
# podman, systemd-nspawn, a test of someone else's) keeps a copy that the
# umount here does not remove (private propagation), and the server keeps
# serving it. That was t_mount_options' hang under load (the test waited
# for the server forever). So: wait 20 s, then name the holders and abort
# the connection (fusectl), and wait for the server's exit.
zcfs_umount() {
	local mnt=$1 rc conn=${_zcfs_conn[$1]:-}
	umount "$mnt" || umount -l "$mnt"
	for _ in $(seq 200); do kill -0 "$ZCFS_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$ZCFS_PID" 2>/dev/null && [ -n "$conn" ] && [ -e "/sys/fs/fuse/connections/${conn#0:}" ]; then
		echo "# zcfs_umount $mnt: server $ZCFS_PID still serving conn $conn 20 s after the umount;" \
			"copies in other mount namespaces: $(grep -l " $conn " /proc/[0-9]*/mountinfo 2>/dev/null |
			sed 's|/proc/\([0-9]*\)/mountinfo|\1|' | while read -r p; do
				printf '%s(%s) ' "$p" "$(cat /proc/"$p"/comm 2>/dev/null)"; done | cut -c1-300);" \
			"aborting it" >&2
		echo 1 >"/sys/fs/fuse/connections/${conn#0:}/abort" 2>/dev/null
	fi
	wait "$ZCFS_PID"; rc=$?
	unset "_zcfs_conn[$mnt]"
	return $rc
}

# as_user UID CMD...: run CMD with uid/gid UID (no supplementary groups).
as_user() {
	local uid=$1; shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
}
