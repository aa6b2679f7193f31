#!/usr/bin/env bash
# make kernel-pjdfstest [PATHS="zerocopy bufpool"] [KERNEL=... KMODS=...]:
# pjdfstest whole (and fsx with SUITES="pjdfstest fsx") on the data paths
# of a buffer-pool kernel (Linux >= 7.3), in one guest (scripts/guest.sh,
# TCG): zcfs-serve on io_uring as root, allow_other, the suite switching
# uids (tests/conformance/pjdfstest.sh, mount_path.sh). PATHS, in this
# order: zerocopy (--zero-copy=on), bufpool (--buffer-pool=registered
# --zero-copy=off), uring-stock (--buffer-pool=off --zero-copy=off: the
# 6.18-style mount to compare a failure with), or any other path of
# mount_path.sh. Hours under TCG (about 2 per path here).
#   KPJD_CPUS (default 1: keeps a host CPU free; at host load 15-21 one vCPU
#   logged RCU stall reports, kernel/README.md), KPJD_PROVE_ARGS (default
#   none), KPJD_TIMEOUT (default 5 h), KPJD_OUT (default
#   build/kernel-pjdfstest): OUT/pjdfstest-PATH/{summary,prove.out,run.log}
#   (prove.out grows as the run goes), OUT/cmd.log, OUT/dmesg.
# Prints one line per case and "kernel-pjdfstest: N passed, N failed";
# exit 0 iff none failed (a guest kernel report fails the run, guest.sh),
# 77 when no kernel can be had or pjdfstest cannot be built.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cases=
for p in ${PATHS:-zerocopy bufpool}; do
	for s in ${SUITES:-pjdfstest}; do cases="$cases $s:$p"; done
done

# shellcheck source=guest-suite.sh
. "$here/scripts/guest-suite.sh"

if [ "${1:-}" = --inside ]; then
	out=$2
	for c in $KPJD_CASES; do
		suite_conformance "${c%%:*}" "${c#*:}" "$out" "${KPJD_PROVE_ARGS:-}"
	done
	suite_end kernel-pjdfstest
fi

suite_build_conformance "$cases" kernel-pjdfstest
out=${KPJD_OUT:-$here/build/kernel-pjdfstest}
export KPJD_CASES=$cases KPJD_PROVE_ARGS=${KPJD_PROVE_ARGS:-}
guest_suite kernel-pjdfstest "$out" "${KPJD_TIMEOUT:-18000}" --cpus "${KPJD_CPUS:-1}" \
	--env KPJD_CASES --env KPJD_PROVE_ARGS --env PJDFSTEST_DIR --env XFSTESTS_DIR -- \
	"$here/scripts/kernel-pjdfstest.sh" --inside "$out"
