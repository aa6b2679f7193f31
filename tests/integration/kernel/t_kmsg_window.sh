#!/usr/bin/env bash
# The kernel-log check of tests/run-integration.sh (tests/kmsg_window.py)
# must find a kernel report in its window and nothing outside it: fed
# records in /dev/kmsg's format, it fails on a WARNING with its trace, on
# a hung-task report and on a BUG, and passes on a window of ordinary
# messages, on reports before the window and on text user space wrote.
. "$(dirname "$0")/../../lib.sh"
require_cmd python3
KW=$(dirname "$0")/../../kmsg_window.py
d=$(make_tmpdir)

cat >"$d/warn" <<'K'
6,100,5000000,-;fuse: init (API version 7.45)
4,101,6000000,-;------------[ cut here ]------------
4,102,6000001,-;WARNING: fs/fuse/dev_uring.c:686 at fuse_uring_prepare_send+0x1a5/0x1c0, CPU#1: zcfs-serve/4242
4,103,6000002,-;Call Trace:
4,104,6000003,-; <TASK>
4,105,6000004,-; fuse_uring_send_in_task+0x2e/0x80
4,106,6000005,-; </TASK>
4,107,6000006,-;---[ end trace 0000000000000000 ]---
6,108,7000000,-;after the trace
K
cat >"$d/hung" <<'K'
3,200,1000000,-;INFO: task fio:777 blocked for more than 122 seconds.
3,201,1000001,-;"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
K
cat >"$d/bug" <<'K'
1,300,1000000,-;BUG: kernel NULL pointer dereference, address: 0000000000000008
1,301,1000001,-;Oops: Oops: 0000 [#1] SMP PTI
K
cat >"$d/clean" <<'K'
5,0,0,-;Linux version 6.18
4,1,0,-;Speculative Return Stack Overflow: WARNING: See https://kernel.org/doc/html/latest/admin-guide/hw-vuln/srso.html for mitigation options.
6,2,10,-;fuse: init (API version 7.45)
12,3,20,-;WARNING: written by a process, not the kernel
K

out=$(ZCFS_KMSG_FILE=$d/warn python3 "$KW" check 100); rc=$?
check "a WARNING in the window fails the check" test "$rc" -eq 1
check "its trace is printed" grep -q 'fuse_uring_send_in_task' <<<"$out"
check "records outside the report are not" bash -c '! grep -q "after the trace" <<<"$1"' _ "$out"
check "a WARNING before the window does not count" env ZCFS_KMSG_FILE="$d/warn" python3 "$KW" check 107
check "a hung-task report fails it" bash -c '! ZCFS_KMSG_FILE=$1 python3 "$2" check 0 >/dev/null' _ "$d/hung" "$KW"
check "a BUG fails it" bash -c '! ZCFS_KMSG_FILE=$1 python3 "$2" check 0 >/dev/null' _ "$d/bug" "$KW"
check "ordinary messages, boot notices and user-space text pass" env ZCFS_KMSG_FILE="$d/clean" python3 "$KW" check -1
check "mark prints the newest kernel record" test "$(ZCFS_KMSG_FILE=$d/clean python3 "$KW" mark)" = 2
if [ -r /dev/kmsg ] && [ "$(id -u)" -eq 0 ]; then
	check "the live kernel log can be read" python3 "$KW" mark
fi
finish
