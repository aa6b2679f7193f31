#!/usr/bin/env bash
# make kernel-guest-test [KERNEL_TEST_SET=ci|full]: the project's own
# tests on the make-kernel kernel (Linux >= 7.3: buffer pools, zero-copy),
# in one guest (scripts/guest.sh: the host's root read-only through
# virtiofs, TCG). Inside (scripts/kernel-guest-test.sh --inside):
#   probe            zcfsctl kernel: every data path supported
#   t_zcfsd_zerocopy (uring): zcfsd tenants with and without zero_copy
#                    (zcfs-csi publish,
#                    capabilities and seccomp of every thread, the pool
#                    charged, fio crc32c verify, requests served zero-copy)
#   restart-zc:      t_zcfsd_restart_load on a zero-copy volume: kill -9
#                    under verifying writers, KERNEL_TEST_KILLS times (ci 4, full 20)
#   restart-pool:    the same on a pool volume
#   restart-holder:  the same on a ring-holder volume, which keeps an
#                    unregistered pool (bufpool=unregistered in every
#                    server, status and metrics; requests served from it)
#   full only:       t_zerocopy (a standalone zero-copy server, posix_check:
#                    5 minutes under TCG), t_posix, t_fio_verify,
#                    t_sandbox_rings, t_fsmodel on
#                    uring (pools by default on this kernel); planned
#                    restarts, zcfsctl upgrade, crash under fio on zcfsd
#                    pool and zero-copy volumes
# The guest's kernel log must hold no report (guest.sh). Prints one line
# per case and "kernel-guest-test: N passed, N failed"; exit 0 iff none
# failed, 77 when no kernel can be had (make kernel's reason).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
set_=${KERNEL_TEST_SET:-ci}
case $set_ in ci) kills=${KERNEL_TEST_KILLS:-4};; full) kills=${KERNEL_TEST_KILLS:-20};;
*) echo "kernel-guest-test: KERNEL_TEST_SET is ci or full" >&2; exit 2;; esac

# shellcheck source=guest-suite.sh
. "$here/scripts/guest-suite.sh"

if [ "${1:-}" = --inside ]; then
	out=$2
	k=$("$ZCFS_BIN/zcfsctl" kernel 2>&1)
	echo "$k" | sed 's/^/# /'
	n=$(echo "$k" | grep -cE '^(devfuse|io_uring|buffer_pool|zero_copy|passthrough) +supported')
	suite_res probe "$([ "$n" = 5 ] && echo 0 || echo 1)" "(zcfsctl kernel: $n of 5 data paths supported)"
	# itest NAME [VAR=VALUE...] -- TESTS: run-integration.sh on uring
	itest() {
		local name=$1 line rc; shift
		local envs=()
		while [ "$1" != -- ]; do envs+=("$1"); shift; done
		shift
		env "${envs[@]}" ONLY="$*" ZCFS_TRANSPORTS=uring ZCFS_TEST_LOGDIR="$out/logs/$name" \
			ZCFS_TEST_KEEP_LOGS="$out/keep/$name" "$here/tests/run-integration.sh" >"$out/$name.out" 2>&1
		rc=$?
		grep -E '^(PASS|FAIL|SKIP)' "$out/$name.out" | sed 's/^/# /'
		line=$(grep -E '^integration: ' "$out/$name.out" | tail -n 1)
		# a run that found no test proves nothing
		case $line in "integration: 0 passed, 0 failed"*) [ "$rc" = 0 ] && rc=1;; esac
		suite_res "$name" "$rc" "($line)"
		[ "$rc" = 0 ] || grep -hE '^not ok|^# .*(LOST|kill -9)' "$out/logs/$name"/*.log 2>/dev/null | sed 's/^/#   /'
	}
	# (t_zerocopy's posix_check alone takes 5 minutes under TCG: full only)
	itest zerocopy TEST_TIMEOUT=900 -- t_zcfsd_zerocopy
	itest restart-zc ZCFS_TEST_ZERO_COPY=true RESTART_KILLS="$kills" RESTART_VARIANTS=uring:t1 \
		TEST_TIMEOUT=$((kills * 30 + 300)) -- t_zcfsd_restart_load
	itest restart-pool ZCFS_TEST_ZERO_COPY=false RESTART_KILLS="$kills" RESTART_VARIANTS=uring:t1 \
		TEST_TIMEOUT=$((kills * 30 + 300)) -- t_zcfsd_restart_load
	itest restart-holder ZCFS_TEST_ZERO_COPY=false RESTART_KILLS="$kills" RESTART_VARIANTS=uring+holder:t1 \
		TEST_TIMEOUT=$((kills * 30 + 300)) -- t_zcfsd_restart_load
	if [ "$set_" = full ]; then
		# zcfs-serve alone (pools by default here), then zcfsd's planned
		# restarts, upgrade and hand-over on pool and zero-copy volumes
		itest serve-pool TEST_TIMEOUT=1500 -- t_zerocopy t_posix t_fio_verify t_sandbox_rings t_fsmodel
		itest zcfsd-pool ZCFS_TEST_ZERO_COPY=false TEST_TIMEOUT=1200 -- \
			t_zcfsd_restart t_zcfsd_volume_restart t_zcfsd_upgrade t_zcfsd_crash_fio
		itest zcfsd-zc ZCFS_TEST_ZERO_COPY=true TEST_TIMEOUT=1200 -- \
			t_zcfsd_restart t_zcfsd_volume_restart t_zcfsd_upgrade t_zcfsd_crash_fio
	fi
	suite_end kernel-guest-test
fi

export KERNEL_TEST_SET=$set_ KERNEL_TEST_KILLS=$kills
out=${KERNEL_TEST_OUT:-$here/build/kernel-guest-test}
guest_suite kernel-guest-test "$out" \
	"${KERNEL_TEST_TIMEOUT:-$([ "$set_" = full ] && echo 5400 || echo 1500)}" \
	--env KERNEL_TEST_SET --env KERNEL_TEST_KILLS -- "$here/scripts/kernel-guest-test.sh" --inside "$out"
