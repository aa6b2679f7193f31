#!/usr/bin/env bash
# ci-lanes.sh ASAN_ONLY ASAN_TRANSPORTS [CONFORMANCE 1|0]: the plain suite (make check) and,
# side by side with it, CI's ASan+UBSan tier (make check-asan) followed by
# CI's conformance part (make conformance-ci: pjdfstest whole on a zcfsd
# volume); both trees are built beforehand. Most integration tests wait on
# the kernel, timers and child processes rather than burn CPU, so on 2 CPUs
# the two lanes together take about as long as the plain one alone (CI's
# 30 minute budget). The plain lane prints as it goes; the other lane's
# output (its cmocka and closing lines included) follows, whole, once both
# are done. Its test logs go to build/asan/test-logs, so the lanes never
# write the same file. Exit 1 if either lane failed.
set -u
cd "$(dirname "$0")/.." || exit 1
asan_only=$1 asan_transports=$2 conformance=${3:-1}
log=build/asan/ci-lane.log
mkdir -p build/asan/test-logs
second_lane() {
	local a c
	ZCFS_TEST_LOGDIR=$PWD/build/asan/test-logs make --no-print-directory check-asan \
		ASAN_ONLY="$asan_only" ASAN_TRANSPORTS="$asan_transports"
	a=$?
	c=0
	if [ "$conformance" = 1 ]; then
		echo "=== conformance-ci ==="
		make --no-print-directory conformance-ci
		c=$?
	fi
	echo "ci-lane: ASan+UBSan tier exit $a, conformance-ci exit $c"
	# conformance exits 77 when the suites cannot be built here: not a failure
	[ "$a" -eq 0 ] && { [ "$c" -eq 0 ] || [ "$c" -eq 77 ]; }
}
# The plain unit tests and fuzz corpora first, alone: once, run beside the
# ASan lane's start, fuzz_state's setup failed (mkdtemp in /dev/shm,
# cause not found); the integration tier then runs beside the ASan lane,
# which replays no fuzz corpus (check-asan: the same build/fuzz binaries).
make --no-print-directory check-unit fuzz-replay
pre_rc=$?
second_lane >"$log" 2>&1 &
asan_pid=$!
# a CI cancel (SIGTERM/SIGINT) stops the ASan lane's tests too
trap 'kill -TERM -- "$asan_pid" 2>/dev/null' EXIT
make --no-print-directory check-root
plain_rc=$?
[ "$pre_rc" -eq 0 ] || plain_rc=$pre_rc
wait "$asan_pid"
asan_rc=$?
trap - EXIT
echo "=== ASan+UBSan tier and conformance-ci (ran beside the plain suite; exit $asan_rc) ==="
cat "$log"
echo "ci: plain suite exit $plain_rc, ASan+UBSan tier + conformance-ci exit $asan_rc"
[ "$plain_rc" -eq 0 ] && [ "$asan_rc" -eq 0 ]
