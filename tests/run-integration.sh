#!/usr/bin/env bash
# Runs every tests/integration/**/t_*.sh (found in any sub-folder, the
# folders are subjects; ordered by test name) once per data path (ZCFS_TRANSPORTS,
# default: every transport zcfs-serve supports on this kernel) and prints
# one closing line "N passed, N failed, N skipped".
# Each test: exit 0 = pass, 77 = skip (reason on stdout), else fail.
# ONLY="pattern ..." selects tests (a name containing any), SKIP_TESTS="t_a t_b" leaves tests out;
# TEST_TIMEOUT bounds each test (seconds).
# A kernel report (WARNING, BUG, Oops, hung task...) logged while a test
# ran fails that test, its trace appended to the test's log
# (tests/kmsg_window.py; ZCFS_KMSG_CHECK=0 turns this off).
# Whatever a test leaves under its own directories (make_tmpdir, listed
# in ZCFS_TEST_DIRS) fails that test and is cleaned up here: mounts
# (lazily unmounted, FUSE connections aborted) and processes.
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
# The fuse.zcfs mounts (mountinfo ids) that exist before this run are
# not its doing: on a shared machine, or after a run that was killed
# without its traps (SIGKILL), they would fail every later run.
zcfs_mount_ids() { awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "fuse.zcfs") print $1; break } }' /proc/self/mountinfo; }
preexisting=" $(zcfs_mount_ids | tr '\n' ' ')"
# Every test directory of this run: a mount under another run's test
# directory (/tmp/zcfs-test.*, a concurrent run on a shared machine) is
# that run's business, not a leftover of this one.
run_dirs=$(mktemp /tmp/zcfs-run-dirs.XXXXXX)
# sweep_test DIRS_FILE LOG: mounts and processes under the test's dirs.
sweep_test() {
	local d m p dev left=()
	while read -r d; do
		[ -n "$d" ] || continue
		# Killed by the test's own cleanup, a process may take a moment
		# to be gone.
		if pgrep -f -- "$d(/| |\$)" >/dev/null 2>&1; then sleep 1; fi
		for p in $(pgrep -f -- "$d(/| |\$)" 2>/dev/null); do
			left+=("process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)")
			kill -KILL "$p" 2>/dev/null
		done
		for m in $(awk -v d="$d" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
			left+=("mount $m")
			dev=$(awk -v m="$m" '$5 == m { for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) ~ /^fuse/) print $3; break } }' /proc/self/mountinfo | tail -n 1)
			umount -l "$m" 2>/dev/null
			[ -n "$dev" ] && echo 1 2>/dev/null >"/sys/fs/fuse/connections/${dev#*:}/abort"
		done
		[ -d "$d" ] && ! mountpoint -q "$d" && rm -rf --one-file-system "$d" 2>/dev/null
	done <"$1"
	cat "$1" >>"$run_dirs"
	rm -f "$1"
	[ ${#left[@]} -eq 0 ] && return 0
	{ echo "FAIL: the test left behind (now cleaned up by the runner):"; printf '  %s\n' "${left[@]}"; } >>"$2"
	return 1
}
# Every test, wherever it sits under tests/integration/, by name: a name
# is its log's and ONLY's key, so two tests of one name are an error.
mapfile -t tests < <(find "$here/integration" -name 't_*.sh' -type f -printf '%f %p\n' | sort | cut -d' ' -f2-)
dups=$(for t in "${tests[@]}"; do basename "$t"; done | sort | uniq -d)
if [ -n "$dups" ]; then echo "run-integration: two tests of one name: $dups"; exit 2; fi
for transport in $transports; do
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		if [ -n "${ONLY:-}" ]; then
			hit=0
			for p in $ONLY; do [[ $name == *"$p"* ]] && hit=1; done
			[ $hit = 1 ] || continue
		fi
		[[ " ${SKIP_TESTS:-} " == *" $name "* ]] && continue
		log="$logdir/$name.$transport.log"
		start=$(date +%s)
		kseq=$(kmsg_mark)
		dirs=$(mktemp /tmp/zcfs-test-dirs.XXXXXX)
		ZCFS_TEST_DIRS=$dirs ZCFS_TRANSPORT=$transport timeout -k 10 "$TEST_TIMEOUT" bash "$t" >"$log" 2>&1
		rc=$?
		sweep_test "$dirs" "$log" || rc=98
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
# Leftover mounts are a failure of whoever left them: here, mounts made
# outside the tests' own directories since the run started.
new_mounts=() old_mounts=0
for id in $(zcfs_mount_ids); do
	if [[ $preexisting == *" $id "* ]]; then old_mounts=$((old_mounts + 1)); continue; fi
	line=$(awk -v id="$id" '$1 == id' /proc/self/mountinfo)	# gone meanwhile: not left
	[ -n "$line" ] || continue
	mp=$(awk '{ print $5 }' <<<"$line") top=
	[[ $mp == /tmp/zcfs-test.* ]] && top=${mp#/tmp/} && top=/tmp/${top%%/*}
	[ -n "$top" ] && ! grep -qxF "$top" "$run_dirs" && continue
	new_mounts+=("$line")
done
rm -f "$run_dirs"
[ "$old_mounts" -gt 0 ] && echo "# $old_mounts fuse.zcfs mount(s) existed before this run: not counted"
if [ ${#new_mounts[@]} -gt 0 ]; then
	echo "FAIL: zcfs mounts left behind:"
	printf '%s\n' "${new_mounts[@]}"
	fail=$((fail + 1))
fi
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
