#!/usr/bin/env bash
# Runs tests/integration/t_*.sh once per data path (ZCFS_TRANSPORTS,
# default: every transport zcfs-serve supports on this kernel) and prints
# one closing line "N passed, N failed, N skipped".
# Each test: exit 0 = pass, 77 = skip (reason on stdout), else fail.
# ONLY=pattern selects tests; TEST_TIMEOUT bounds each test (seconds).
# A kernel report (WARNING, BUG, Oops, hung task...) logged while a test
# ran fails that test, its trace appended to the test's log
# (tests/kmsg_window.py; ZCFS_KMSG_CHECK=0 turns this off).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${ZCFS_BIN:?ZCFS_BIN must point at the bin/ directory}"
: "${TEST_TIMEOUT:=300}"
export ZCFS_BIN ZCFS_TESTBIN
logdir=${ZCFS_TEST_LOGDIR:-$here/../build/test-logs}
mkdir -p "$logdir"

# FUSE-over-io_uring is off until enabled; as root, turn it on for the run.
uring_param=/sys/module/fuse/parameters/enable_uring
if [ -e "$uring_param" ] && [ "$(id -u)" -eq 0 ]; then echo Y >"$uring_param" 2>/dev/null; fi
if [ -e "$uring_param" ]; then default_transports="devfuse uring"; else default_transports=devfuse; fi
transports=${ZCFS_TRANSPORTS:-$default_transports}
pass=0 fail=0 skip=0 failed=()
# Kernel reports are attributed by /dev/kmsg sequence numbers: on a shared
# machine one can come from someone else's test (the trace names the task).
kmsg_mark() {
	[ "${ZCFS_KMSG_CHECK:-1}" = 0 ] || python3 "$here/kmsg_window.py" mark 2>/dev/null
}
kmsg_check() {
	local out
	[ -n "$1" ] || return 0
	out=$(python3 "$here/kmsg_window.py" check "$1" 2>&1)
	[ $? -eq 1 ] || return 0
	{ echo "FAIL: the kernel logged a report while this test ran:"; echo "$out"; } >>"$2"
	return 1
}
for transport in $transports; do
	for t in "$here"/integration/t_*.sh; do
		name=$(basename "$t" .sh)
		[ -n "${ONLY:-}" ] && [[ $name != *$ONLY* ]] && continue
		log="$logdir/$name.$transport.log"
		start=$(date +%s)
		kseq=$(kmsg_mark)
		ZCFS_TRANSPORT=$transport timeout -k 10 "$TEST_TIMEOUT" bash "$t" >"$log" 2>&1
		rc=$?
		kmsg_check "$kseq" "$log" || rc=99
		secs=$(( $(date +%s) - start ))
		case $rc in
		0)  pass=$((pass + 1)); echo "PASS $name [$transport] (${secs}s)";;
		77) skip=$((skip + 1)); echo "SKIP $name [$transport]: $(tail -n 1 "$log")";;
		*)  fail=$((fail + 1)); failed+=("${name}[$transport]")
		    echo "FAIL $name [$transport] rc=$rc (${secs}s), last lines of $log:"
		    tail -n 25 "$log" | sed 's/^/    /';;
		esac
	done
done
# Leftover mounts are a failure of whoever left them.
if grep -q ' fuse\.zcfs' /proc/self/mounts; then
	echo "FAIL: zcfs mounts left behind:"; grep ' fuse\.zcfs' /proc/self/mounts
	fail=$((fail + 1))
fi
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
