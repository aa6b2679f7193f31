#!/usr/bin/env bash
# File handles across server restarts: the kernel keeps naming files a
# dead server opened by that server's fh; a successor must never hand out
# the same fh for another file. Before the fix every server numbered its
# handles from the same start, so the first file opened after a restart
# got the fh of the first file its predecessor had opened, and writes to
# that older file landed in the new one (acknowledged, and lost: the fio
# crc32c verify failure of t_zcfsd_restart_load). Checked here: files A
# (opened before a kill) and B, C (opened after one and two kills) each
# keep their own writes, and closing A does not close B's handle.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
restarted() { local p; p=$(server_pid v1); [ "$p" != "$1" ] && [ "$p" != 0 ] && [ "$p" != null ] && kill -0 "$p" 2>/dev/null; }
kill_and_wait() {
	local p
	p=$(server_pid v1)
	kill -9 "$p"
	wait_for "restart of $p" 15 restarted "$p" || return 1
	# The successor serves (a stat of the root is answered).
	timeout 10 stat "$TGT/a" >/dev/null
}
export -f kill_and_wait restarted server_pid vol_field vol_json ctl wait_for
export SOCK ZCFS_BIN TGT

# One python process holds the files open across the kills (the kernel
# keeps their fh), writes through each fd with fsync, and prints what it
# did; the backing files are compared afterwards.
out=$(/usr/bin/python3 - "$TGT/a" <<-'PY' 2>&1
	import os, subprocess, sys
	d = sys.argv[1]
	def kill():
	    subprocess.run(["bash", "-c", "kill_and_wait"], check=True, timeout=60)
	def put(fd, tag):
	    os.pwrite(fd, tag.encode(), 0)
	    os.fsync(fd)
	a = os.open(d + "/A", os.O_RDWR | os.O_CREAT, 0o644)
	put(a, "A0")
	kill()
	b = os.open(d + "/B", os.O_RDWR | os.O_CREAT, 0o644)
	put(b, "B1")
	put(a, "A1")
	kill()
	c = os.open(d + "/C", os.O_RDWR | os.O_CREAT, 0o644)
	put(c, "C2")
	put(a, "A2")
	put(b, "B2")
	os.close(a)
	put(b, "B3")
	put(c, "C3")
	os.close(b)
	os.close(c)
	print("done")
	PY
)
echo "$out" | sed 's/^/# python: /'
check "the writer ran through both restarts" test "$(echo "$out" | tail -n 1)" = "done"
S=$STORE/t1/v1
check "A (opened before the first kill) holds its own last write: $(cat "$S/A" 2>&1)" test "$(cat "$S/A" 2>&1)" = A2
check "B (opened after it, still open when A closed) holds its last write: $(cat "$S/B" 2>&1)" test "$(cat "$S/B" 2>&1)" = B3
check "C (opened after the second kill) holds its last write: $(cat "$S/C" 2>&1)" test "$(cat "$S/C" 2>&1)" = C3
check "restarts == 2" test "$(vol_field v1 restarts)" = 2
ctlq volume unpublish v1 "$TGT/a"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
