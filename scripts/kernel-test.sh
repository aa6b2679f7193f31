#!/usr/bin/env bash
# make kernel-test [KERNEL=/path/to/bzImage] [KMODS=dir] [KTEST_TIMEOUT=s]
#
# Boots KERNEL under qemu-system-x86_64 (TCG: -enable-kvm hangs on the VMs
# this project runs on) with a throwaway initramfs holding busybox-static,
# zcfs-serve, zcfsctl, posix_check and their shared libraries (found with
# ldd), plus fuse.ko from KMODS when the kernel builds FUSE as a module.
# Inside, /init runs what fits a bare initramfs:
#   probe       zcfsctl kernel --json (protocol, per-path verdicts)
#   devfuse     zcfs-serve --transport=devfuse smoke + posix_check
#   uring       the same on --transport=uring            (if io_uring supported)
#   bufpool     the same on --buffer-pool=on --zero-copy=off, requests served
#               through the pool > 0                     (if buffer pools supported)
#   bufpool1    the same with one pool buffer per queue of 4 entries and 8
#               requests in flight (pool exhaustion)
#   zerocopy    the same on --zero-copy=on, CapEff=0, requests served
#               zero-copy > 0                            (if zero-copy supported)
# A path the kernel lacks is reported SKIP with zcfsctl's reason, never PASS.
# Prints one line per test and "kernel-test: N passed, N failed, N skipped";
# exit 0 iff nothing failed. Needs: qemu-system-x86, busybox-static.
# Everything it makes lives in one temp directory, removed at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# No KERNEL=: the one make kernel fetched (build/kernel/current.env).
if [ -z "${KERNEL:-}" ] && [ -r "$here/build/kernel/current.env" ]; then
	# shellcheck source=/dev/null
	. "$here/build/kernel/current.env"
fi
: "${KERNEL:?KERNEL=/path/to/bzImage is required (or run make kernel first)}"
KMODS=${KMODS:-}
TIMEOUT=${KTEST_TIMEOUT:-900}
MEM=${KTEST_MEM:-1024}
BIN=${ZCFS_BIN:-$here/bin}
TESTBIN=${ZCFS_TESTBIN:-$here/build/tests/integration}

die() { echo "kernel-test: $*" >&2; exit 2; }
[ -r "$KERNEL" ] || die "cannot read KERNEL=$KERNEL"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && { ldd "$busybox" 2>&1 || true; } | grep -q 'not a dynamic' ||
	die "a static busybox is needed (apt-get install busybox-static)"
# cpio(1) if installed, else busybox's (it writes newc archives too).
cpio=(cpio)
command -v cpio >/dev/null || cpio=("$busybox" cpio)
for b in "$BIN/zcfs-serve" "$BIN/zcfsctl" "$TESTBIN/posix_check"; do
	[ -x "$b" ] || die "$b not built (run make)"
done

work=$(mktemp -d /tmp/zcfs-ktest.XXXXXX)
qemu_pid=
cleanup() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$work/root
mkdir -p "$root"/{bin,sbin,lib,lib64,usr/bin,proc,sys,dev,tmp,run,zcfs}

# Programs and every shared library they load, at the same paths.
copy_with_libs() {
	local f=$1 dest=$2 lib
	install -D -m 755 "$f" "$root$dest"
	for lib in $(ldd "$f" 2>/dev/null | awk '/=>/ {print $3} /^\t\// {print $1}'); do
		[ -e "$root$lib" ] || install -D -m 755 "$lib" "$root$lib"
	done
}
install -m 755 "$busybox" "$root/bin/busybox"
copy_with_libs "$BIN/zcfs-serve" /zcfs/zcfs-serve
copy_with_libs "$BIN/zcfsctl" /zcfs/zcfsctl
copy_with_libs "$TESTBIN/posix_check" /zcfs/posix_check

# fuse.ko (and what it depends on, none in Debian's build) when given.
kmod_note="fuse built in (no KMODS)"
if [ -n "$KMODS" ]; then
	ko=$(find "$KMODS" -name 'fuse.ko*' | head -n 1)
fi
if [ -n "${ko:-}" ]; then
	case $ko in
	*.xz) xz -dc "$ko" >"$root/zcfs/fuse.ko";;
	*.zst) zstd -qdc "$ko" >"$root/zcfs/fuse.ko";;
	*.gz) gzip -dc "$ko" >"$root/zcfs/fuse.ko";;
	*) cp "$ko" "$root/zcfs/fuse.ko";;
	esac
	kmod_note="fuse.ko from $ko"
fi

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
# Runs inside the guest as PID 1. Every result is one serial line
# "ZCFS-KTEST <name> PASS|FAIL|SKIP <detail>"; "ZCFS-KTEST-END" closes.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/zcfs
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o size=512m tmpfs /tmp
[ -f /zcfs/fuse.ko ] && insmod /zcfs/fuse.ko
mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null
r() { echo "ZCFS-KTEST $*"; }
echo "ZCFS-KTEST-BEGIN $(uname -r)"

zcfsctl kernel >/tmp/probe.txt 2>&1
sed 's/^/# /' /tmp/probe.txt
# Turn FUSE-over-io_uring on where the kernel has the switch.
[ -w /sys/module/fuse/parameters/enable_uring ] && echo Y >/sys/module/fuse/parameters/enable_uring
zcfsctl kernel --json >/tmp/probe.json 2>&1
if grep -q '"fuse_protocol"' /tmp/probe.json; then
	r probe PASS "$(grep -o '"fuse_protocol":"[0-9.]*"' /tmp/probe.json)"
else
	r probe FAIL "zcfsctl kernel: $(head -n 3 /tmp/probe.json | tr '\n' ' ')"
fi
# verdict PATH: "supported" or the reason it is not
verdict() {
	line=$(zcfsctl kernel | grep "^$1 ")
	case $line in
	"$1 "*" supported") echo supported;;
	*) echo "$line" | sed "s/^$1 *//";;
	esac
}

# run NAME OPTS...: smoke + posix_check through a mount with OPTS
run() {
	name=$1; shift
	src=/tmp/src.$name mnt=/tmp/mnt.$name log=/tmp/log.$name
	mkdir -p "$src" "$mnt"
	zcfs-serve --foreground "$@" "$src" "$mnt" 2>"$log" &
	pid=$!
	i=0
	while ! grep -q " $mnt fuse" /proc/mounts; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
			r "$name" FAIL "server did not mount: $(tail -n 2 "$log" | tr '\n' ' ')"
			return
		fi
		sleep 0.1
	done
	sed 's/^/# server: /' "$log"
	ok=1
	echo hello >"$mnt/f" && [ "$(cat "$mnt/f")" = hello ] || ok=0
	dd if=/dev/urandom of=/tmp/rand bs=64k count=64 2>/dev/null
	cp /tmp/rand "$mnt/big" && cmp -s /tmp/rand "$mnt/big" || ok=0
	mkdir "$mnt/d" && mv "$mnt/f" "$mnt/d/g" && [ -f "$mnt/d/g" ] || ok=0
	rm -r "$mnt/d" "$mnt/big" || ok=0
	if [ -n "${PARALLEL:-}" ]; then
		# more requests in flight than pool buffers: 4 writers and 4
		# readers at once, payload-less requests (stat) among them
		# (waiting for these by pid: a bare wait would wait for the server)
		jobs=
		for i in 1 2 3 4; do cp /tmp/rand "$mnt/p$i" & jobs="$jobs $!"; done
		for i in 1 2 3 4; do ls -l "$mnt" >/dev/null & jobs="$jobs $!"; done
		for j in $jobs; do wait $j; done
		jobs=
		for i in 1 2 3 4; do cat "$mnt/p$i" >/tmp/back$i & jobs="$jobs $!"; done
		for i in 1 2 3 4; do stat "$mnt/p$i" >/dev/null & jobs="$jobs $!"; done
		for j in $jobs; do wait $j; done
		for i in 1 2 3 4; do cmp -s /tmp/rand /tmp/back$i && rm "$mnt/p$i" /tmp/back$i || ok=0; done
	fi
	[ $ok = 1 ] && r "$name-smoke" PASS "$(grep -o 'transport=[a-z]*' "$log" | tail -n 1)" ||
		r "$name-smoke" FAIL "file operations through $mnt"
	if [ -n "${CAPCHECK:-}" ]; then
		eff=$(awk '/^CapEff:/ {print $2}' /proc/$pid/status)
		[ $((0x$eff & (1 << 21))) -eq 0 ] && r "$name-caps" PASS "CapEff=$eff" ||
			r "$name-caps" FAIL "CAP_SYS_ADMIN still effective: CapEff=$eff"
	fi
	posix_check ${POSIX_SKIP:+--skip "$POSIX_SKIP"} "$mnt" >/tmp/pc.$name 2>&1 && rc=0 || rc=$?
	grep '^not ok' /tmp/pc.$name | sed 's/^/# /'
	[ $rc = 0 ] && r "$name-posix" PASS "$(tail -n 1 /tmp/pc.$name)${POSIX_SKIP:+ (groups the guest's own tmpfs fails skipped: $POSIX_SKIP)}" ||
		r "$name-posix" FAIL "$(tail -n 1 /tmp/pc.$name)"
	umount "$mnt" || umount -l "$mnt"
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 $pid 2>/dev/null && { kill -9 $pid; r "$name-exit" FAIL "server still running"; } ||
		{ wait $pid && r "$name-exit" PASS "status 0" || r "$name-exit" FAIL "status $?"; }
	# What the queues counted (logged as they stop): KIND=N, N > 0.
	if [ -n "${SERVED:-}" ]; then
		n=$(grep -o 'requests:.*' "$log" | grep -o " $SERVED=[0-9]*" | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
		[ "$n" -gt 0 ] && r "$name-served" PASS "requests served $SERVED: $n" ||
			r "$name-served" FAIL "no request served $SERVED: $(grep 'requests:' "$log" | tr '\n' ' ')"
	fi
}

# The reference: posix_check on the guest's own tmpfs (the backing file
# system). Groups that fail there are this kernel's tmpfs (6.1 has no
# user xattrs on tmpfs, older readdir offsets), not zcfs: skipped below.
mkdir -p /tmp/native
posix_check /tmp/native >/tmp/pc.native 2>&1
POSIX_SKIP=$(sed -n 's/^not ok - \([a-z_-]*\):.*/\1/p' /tmp/pc.native | sort -u | tr '\n' ',' | sed 's/,$//')
if [ -n "$POSIX_SKIP" ]; then r native-posix SKIP "guest tmpfs fails groups $POSIX_SKIP: $(tail -n 1 /tmp/pc.native)"
else r native-posix PASS "$(tail -n 1 /tmp/pc.native)"; fi
if [ -c /dev/fuse ]; then run devfuse --transport=devfuse; else r devfuse FAIL "no /dev/fuse"; fi
v=$(verdict io_uring)
if [ "$v" = supported ]; then run uring --transport=uring; else r uring SKIP "io_uring: $v"; fi
v=$(verdict buffer_pool)
if [ "$v" = supported ]; then SERVED=pool run bufpool --transport=uring --buffer-pool=on --zero-copy=off;
else r bufpool SKIP "buffer_pool: $v"; fi
# pool exhaustion: one buffer per queue for four entries
if [ "$v" = supported ]; then SERVED=pool PARALLEL=1 run bufpool1 --transport=uring --buffer-pool=on \
	--zero-copy=off --queue-depth=4 --pool-buffers=1;
else r bufpool1 SKIP "buffer_pool: $v"; fi
v=$(verdict zero_copy)
if [ "$v" = supported ]; then SERVED=zero_copy CAPCHECK=1 run zerocopy --transport=uring --zero-copy=on;
else r zerocopy SKIP "zero_copy: $v"; fi
echo ZCFS-KTEST-END
sync
poweroff -f
INIT
chmod 755 "$root/init"

(cd "$root" && find . | "${cpio[@]}" -o -H newc 2>/dev/null | gzip -1) >"$work/initramfs.gz"
echo "kernel-test: $KERNEL, $kmod_note, initramfs $(du -h "$work/initramfs.gz" | cut -f1)"

# TCG, two CPUs like the hosts; the console is the serial port.
qemu-system-x86_64 -m "$MEM" -smp 2 -nographic -no-reboot -display none \
	-kernel "$KERNEL" -initrd "$work/initramfs.gz" \
	-append "console=ttyS0 panic=-1 rdinit=/init quiet loglevel=3 no_timer_check" \
	</dev/null >"$work/console.log" 2>&1 &
qemu_pid=$!
start=$(date +%s)
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [ $(( $(date +%s) - start )) -gt "$TIMEOUT" ]; then
		echo "kernel-test: guest still running after ${TIMEOUT}s, killed"
		kill "$qemu_pid"
		break
	fi
	sleep 1
done
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
log=${KTEST_LOG:-$here/build/kernel-test.log}
mkdir -p "$(dirname "$log")"
tr -d '\r' <"$work/console.log" >"$log"

pass=0 fail=0 skip=0
while read -r _ name verdict detail; do
	echo "$verdict $name: $detail"
	case $verdict in
	PASS) pass=$((pass + 1));;
	SKIP) skip=$((skip + 1));;
	*) fail=$((fail + 1));;
	esac
done < <(grep '^ZCFS-KTEST ' "$log")
if ! grep -q '^ZCFS-KTEST-END' "$log"; then
	echo "FAIL guest: did not finish (last console lines below, full log $log)"
	tail -n 20 "$log" | sed 's/^/    /'
	fail=$((fail + 1))
fi
echo "kernel-test: $(grep -o 'ZCFS-KTEST-BEGIN .*' "$log" | cut -d' ' -f2): $pass passed, $fail failed, $skip skipped (console log $log)"
[ "$fail" -eq 0 ]
