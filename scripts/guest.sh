#!/usr/bin/env bash
# scripts/guest.sh [options] -- COMMAND [ARG...]
#
# Runs COMMAND as root inside a qemu guest (TCG: -enable-kvm hangs on the
# VMs this project runs on) booted from KERNEL whose root file system is
# this host's, shared read-only through virtiofs: the project's own
# binaries, tests, fio, python3 and prove run there as they are. The
# guest writes into a tmpfs overlay over that root (nothing reaches the
# host) except OUT, a host directory shared read-write at the same path.
# COMMAND runs in the current directory with the environment variables
# named by --env (and every ZCFS_*, ONLY, SKIP_TESTS, TEST_TIMEOUT,
# RESTART_* one) as they are here.
#
#   --kernel FILE    default: KERNEL of build/kernel/current.env (make kernel)
#   --kmods DIR      modules tree (.../lib/modules), default: KMODS of it;
#                    bound at /lib/modules in the guest, so modprobe works
#   --modules A,B    modprobe these before COMMAND (e.g. xfs,loop,quota_v2)
#   --mem MIB        guest memory (default 3072), --cpus N (default 2)
#   --timeout S      the whole run (default 1800); a guest still running
#                    then is dumped (blocked tasks) and killed: exit 124
#   --out DIR        where the guest's files land (default: a new
#                    build/guest/run.XXXXXX): console.log, cmd.log,
#                    dmesg, rc
#   --env NAME       pass NAME too (repeatable)
#   --quiet          do not stream COMMAND's output
#
# Exit: COMMAND's status; 1 when the guest's kernel logged a WARNING,
# BUG, Oops, hung task or RCU stall (printed; its log in OUT/dmesg) while
# COMMAND passed; 124 when the guest did not finish; 77 (with the reason)
# when no kernel is there or qemu/virtiofsd is missing; 2 on bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "guest: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

kernel='' kmods='' modules='' mem=3072 cpus=2 timeout=1800 out='' quiet=0
envs=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2;;
	--kmods) kmods=$2; shift 2;;
	--modules) modules=$2; shift 2;;
	--mem) mem=$2; shift 2;;
	--cpus) cpus=$2; shift 2;;
	--timeout) timeout=$2; shift 2;;
	--out) out=$2; shift 2;;
	--env) envs+=("$2"); shift 2;;
	--quiet) quiet=1; shift;;
	--) shift; break;;
	-h|--help) usage;;
	*) break;;
	esac
done
[ $# -gt 0 ] || usage

if [ -z "$kernel" ] && [ -r "$here/build/kernel/current.env" ]; then
	# shellcheck source=/dev/null
	. "$here/build/kernel/current.env"
	kernel=${KERNEL:-}
	[ -n "$kmods" ] || kmods=${KMODS:-}
fi
[ -n "$kernel" ] || { say "no kernel: run make kernel, or give --kernel"; exit 77; }
[ -r "$kernel" ] || { say "cannot read kernel $kernel"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { say "qemu-system-x86_64 missing (make deps)"; exit 77; }
vfsd=$(command -v virtiofsd || true)
[ -n "$vfsd" ] || vfsd=/usr/lib/qemu/virtiofsd
[ -x "$vfsd" ] || { say "virtiofsd missing (qemu-system-x86's /usr/lib/qemu/virtiofsd, make deps)"; exit 77; }

[ -n "$out" ] || { mkdir -p "$here/build/guest"; out=$(mktemp -d "$here/build/guest/run.XXXXXX"); }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/rc" "$out/dmesg" "$out/cmd.log" "$out/console.log"
work=$(mktemp -d /tmp/zcfs-guest.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# What the guest runs: cd, the environment, the command (quoted here).
{
	echo "cd $(printf %q "$PWD")"
	for v in $(compgen -e | grep -E '^(ZCFS_|RESTART_|ONLY$|SKIP_TESTS$|TEST_TIMEOUT$)' || true) "${envs[@]}"; do
		[ -n "${!v+x}" ] && echo "export $v=$(printf %q "${!v}")"
	done
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$out/cmd.sh"

# The host's root file system alone (no submounts: no /proc, no other
# engineers' FUSE mounts), read-only, seen by virtiofsd from a private
# mount namespace; OUT read-write.
mkdir -p "$work/root"
unshare -m --propagation private sh -c '
	mount --bind / "$1" && mount -o remount,bind,ro "$1" &&
	exec "$2" --socket-path="$3" -o source="$1" -o cache=always -o sandbox=chroot \
		-o log_level=err' sh "$work/root" "$vfsd" "$work/root.sock" >"$work/vfs-root.log" 2>&1 &
pids+=($!)
"$vfsd" --socket-path="$work/out.sock" -o source="$out" -o cache=none -o log_level=err \
	>"$work/vfs-out.log" 2>&1 &
pids+=($!)
for s in root out; do
	i=0
	while [ ! -S "$work/$s.sock" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { say "virtiofsd ($s) did not start: $(cat "$work/vfs-$s.log")"; exit 1; }
		sleep 0.1
	done
done

# Kernel command line: unknown key=value words reach init's environment.
# no_timer_check: on a loaded host TCG's timer can miss the kernel's
# IO-APIC timer check, which then panics at boot ("IO-APIC + timer
# doesn't work!", seen with three guests on 2 CPUs).
append="console=ttyS0 root=hostroot rootfstype=virtiofs ro init=$here/scripts/guest-init.sh"
append+=" panic=-1 loglevel=4 hung_task_panic=0 net.ifnames=0 no_timer_check"
append+=" zcfs_out=$out zcfs_kmods=${kmods:-none} zcfs_modules=${modules:-none}"
append+=" zcfs_timeout=$timeout"
start=$(date +%s)
qemu-system-x86_64 -machine q35 -cpu max -smp "$cpus" -m "$mem" -nographic -no-reboot \
	-display none -monitor none -serial "file:$out/console.log" \
	-object memory-backend-memfd,id=mem,size="${mem}M",share=on -numa node,memdev=mem \
	-chardev socket,id=vroot,path="$work/root.sock" \
	-device vhost-user-fs-pci,chardev=vroot,tag=hostroot \
	-chardev socket,id=vout,path="$work/out.sock" \
	-device vhost-user-fs-pci,chardev=vout,tag=zcfsout \
	-kernel "$kernel" -append "$append" </dev/null >"$work/qemu.log" 2>&1 &
qemu=$!
pids+=("$qemu")
[ "$quiet" = 1 ] || { touch "$out/cmd.log"; tail -n +1 -F "$out/cmd.log" 2>/dev/null & pids+=($!); }
timed_out=0
while kill -0 "$qemu" 2>/dev/null; do
	if [ $(($(date +%s) - start)) -gt "$((timeout + 60))" ]; then
		timed_out=1
		kill "$qemu"
		break
	fi
	sleep 1
done
wait "$qemu" 2>/dev/null || true
sleep 0.3
tr -d '\r' <"$out/console.log" >"$out/console.txt" 2>/dev/null || true
el=$(($(date +%s) - start))
if [ ! -s "$out/rc" ]; then
	say "the guest did not finish (${el}s, timeout ${timeout}s: $([ "$timed_out" = 1 ] && echo hit || echo not hit)); last console lines:"
	tail -n 40 "$out/console.txt" | sed 's/^/    /' >&2
	[ -s "$work/qemu.log" ] && sed 's/^/    qemu: /' "$work/qemu.log" >&2
	exit 124
fi
rc=$(cat "$out/rc")
# The patterns of tests/kmsg_window.py, anchored at the message start.
reports=$(sed -E 's/^\[ *[0-9.]+\] //' "$out/dmesg" 2>/dev/null | grep -E \
	'^(------------\[ cut here \]|WARNING:|BUG:|kernel BUG|Oops|general protection fault|Unable to handle kernel|UBSAN:|KASAN:|INFO: task .* blocked (in I/O wait )?for more than|watchdog: BUG:|rcu: INFO: .*detected stall|list_(add|del) corruption|refcount_t:|Kernel panic)' || true)
if [ -n "$reports" ]; then
	say "the guest's kernel logged a report (full log $out/dmesg):"
	echo "$reports" | head -n 20 | sed 's/^/    /' >&2
	[ "$rc" = 0 ] && rc=1
fi
say "$(head -n 1 "$out/uname" 2>/dev/null || echo '?'): exit $rc after ${el}s (out $out)"
exit "$rc"
