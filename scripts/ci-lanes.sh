#!/usr/bin/env bash
# ci-lanes.sh ASAN_ONLY ASAN_TRANSPORTS [CONFORMANCE 1|0] [KERNEL_LANE 1|0]: the plain suite (make check) and,
# side by side with it, CI's ASan+UBSan tier (make check-asan) followed by
# CI's conformance part (make conformance-ci: pjdfstest whole on a zcfsd
# volume); both trees are built beforehand. Most integration tests wait on
# the kernel, timers and child processes rather than burn CPU, so on 2 CPUs
# the two lanes together take about as long as the plain one alone (CI's
# 30 minute budget). The plain lane prints as it goes; the other lane's
# output (its cmocka and closing lines included) follows, whole, once both
# are done. Its test logs go to build/asan/test-logs, so the lanes never
# write the same file. Then, alone, the kernel lane (make kernel-guest-test).
# Exit 1 if any lane failed.
set -u
cd "$(dirname "$0")/.." || exit 1
asan_only=$1 asan_transports=$2 conformance=${3:-1} kernel_lane=${4:-1}
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
# The kernel lane after both, alone (a TCG guest takes both CPUs): the
# project's tests on the newest Debian kernel with buffer pools and
# zero-copy (make kernel-guest-test, about 8 minutes); 77 = no kernel
# could be fetched (said why), not a failure.
kernel_rc=0
if [ "$kernel_lane" = 1 ]; then
	echo "=== kernel lane: the guest suite on the make-kernel kernel ==="
	make --no-print-directory kernel-guest-test
	kernel_rc=$?
	[ "$kernel_rc" -eq 77 ] && { echo "kernel lane: skipped (no kernel with buffer pools could be fetched): 0 passed, 0 failed"; kernel_rc=0; }
fi
echo "ci: plain suite exit $plain_rc, ASan+UBSan tier + conformance-ci exit $asan_rc, kernel lane exit $kernel_rc"
[ "$plain_rc" -eq 0 ] && [ "$asan_rc" -eq 0 ] && [ "$kernel_rc" -eq 0 ]
