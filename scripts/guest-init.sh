#!/bin/bash
# PID 1 of the guest that scripts/guest.sh boots: the host's root file
# system (virtiofs, read-only) under a tmpfs overlay, then OUT/cmd.sh.
# Parameters come from the kernel command line (init's environment):
# zcfs_out, zcfs_kmods, zcfs_modules, zcfs_timeout. Writes OUT/cmd.log
# (the command's output), OUT/rc, OUT/dmesg, OUT/uname; powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
out=${zcfs_out:?}
kmods=${zcfs_kmods:-none}
kver=$(uname -r)
log() { echo "guest-init: $*" >/dev/console; }
# Once the root is writable: the rest of a system (tmpfs, cgroups,
# modules, the OUT share, FUSE switches), then OUT/cmd.sh with its output
# in OUT/cmd.log, the kernel log, power off.
stage2() {
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mount -t tmpfs -o mode=1777 tmpfs /var/tmp
	mount -t tmpfs -o mode=755 tmpfs /run
	mkdir -p /dev/pts /dev/shm /dev/mqueue
	# what udev would add: bash's <(...) needs /dev/fd
	ln -sfn /proc/self/fd /dev/fd
	ln -sfn /proc/self/fd/0 /dev/stdin
	ln -sfn /proc/self/fd/1 /dev/stdout
	ln -sfn /proc/self/fd/2 /dev/stderr
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
	mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mkdir -p "$out"
	mount -t virtiofs zcfsout "$out" || log "cannot mount the OUT share at $out"
	uname -a >"$out/uname"
	if [ "$kmods" != none ]; then
		mkdir -p /lib/modules
		mount --bind "$kmods" /lib/modules
	fi
	if [ "${zcfs_modules:-none}" != none ]; then
		for m in ${zcfs_modules//,/ }; do
			modprobe "$m" 2>&1 | sed 's/^/modprobe: /' >>"$out/cmd.log"
		done
	fi
	echo Y >/sys/module/fuse/parameters/enable_uring 2>/dev/null
	# Hung tasks are reported sooner than the default 120 s (TCG is slow,
	# but a FUSE request 60 s old is a hang here).
	echo 60 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
	hostname zcfs-guest
	ip link set lo up 2>/dev/null
	# Before the run's time is up: what every blocked task waits for.
	(sleep "$((${zcfs_timeout:-1800} - 20))"; log "timeout near: blocked tasks follow";
		echo w >/proc/sysrq-trigger; dmesg >"$out/dmesg"
		find /tmp -name '*.log' -size -20M -print0 | tar -czf "$out/guest-tmp-logs.tgz" --null -T - 2>/dev/null
		sync) &
	watchdog=$!
	bash "$out/cmd.sh" >"$out/cmd.log.tmp" 2>&1 </dev/null &
	cmd=$!
	# cmd.log grows as the command writes (the host streams it)
	tail -n +1 -f "$out/cmd.log.tmp" --pid=$cmd >>"$out/cmd.log" 2>/dev/null &
	tailer=$!
	wait $cmd
	rc=$?
	wait $tailer
	kill $watchdog 2>/dev/null
	dmesg >"$out/dmesg"
	echo $rc >"$out/rc"
	rm -f "$out/cmd.log.tmp"
	sync
	umount "$out" 2>/dev/null
	echo o >/proc/sysrq-trigger
	sleep 10
}
[ "${1:-}" = stage2 ] && { stage2; exit 1; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=755 tmpfs /run

# Writable root: overlay over the read-only share (overlay is a module
# of Debian's kernels: loaded from the modules tree by path).
ov=/run/ov
mkdir -p $ov/upper $ov/work $ov/root
if [ "$kmods" != none ] && ! grep -qw overlay /proc/filesystems; then
	ko=$(find "$kmods/$kver" -name 'overlay.ko*' 2>/dev/null | head -n 1)
	[ -n "$ko" ] && insmod "$ko"
fi
if mount -t overlay overlay -o "lowerdir=/,upperdir=$ov/upper,workdir=$ov/work" $ov/root 2>/dev/console; then
	for m in proc sys dev run; do mkdir -p "$ov/root/$m"; done
	mount --move /proc $ov/root/proc
	mount --move /sys $ov/root/sys
	mount --move /dev $ov/root/dev
	mkdir -p $ov/root/oldroot
	cd $ov/root || exit 1
	pivot_root . oldroot
	exec chroot . /bin/bash -c 'umount -l /oldroot; rmdir /oldroot 2>/dev/null; exec "$0" stage2' "$0"
fi
log "no overlay: tmpfs over the usual writable places only"
for d in /var/lib /var/log /var/cache /root; do mount -t tmpfs tmpfs "$d"; done
exec "$0" stage2
