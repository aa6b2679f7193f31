#!/usr/bin/env bash
# ci-lanes.sh ASAN_ONLY ASAN_TRANSPORTS: the plain suite (make check) and
# CI's ASan+UBSan tier (make check-asan) side by side, both trees built
# beforehand. Most integration tests wait on the kernel, timers and child
# processes rather than burn CPU, so on 2 CPUs the two lanes together take
# about as long as the plain one alone (CI's 30 minute budget). The plain
# lane prints as it goes; the ASan lane's output (its cmocka and closing
# lines included) follows once both are done, whole. Its test logs go to
# build/asan/test-logs, so the lanes never write the same file. Exit 1 if
# either lane failed.
set -u
cd "$(dirname "$0")/.." || exit 1
asan_only=$1 asan_transports=$2
log=build/asan/ci-lane.log
mkdir -p build/asan/test-logs
ZCFS_TEST_LOGDIR=$PWD/build/asan/test-logs make --no-print-directory check-asan \
	ASAN_ONLY="$asan_only" ASAN_TRANSPORTS="$asan_transports" >"$log" 2>&1 &
asan_pid=$!
# a CI cancel (SIGTERM/SIGINT) stops the ASan lane's tests too
trap 'kill -TERM -- "$asan_pid" 2>/dev/null' EXIT
make --no-print-directory check
plain_rc=$?
wait "$asan_pid"
asan_rc=$?
trap - EXIT
echo "=== ASan+UBSan tier (ran beside the plain suite; exit $asan_rc) ==="
cat "$log"
echo "ci: plain suite exit $plain_rc, ASan+UBSan tier exit $asan_rc"
[ "$plain_rc" -eq 0 ] && [ "$asan_rc" -eq 0 ]
