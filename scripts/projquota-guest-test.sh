#!/usr/bin/env bash
# make projquota-guest-test: sized zcfsd volumes whose size a project
# quota enforces, checked by the external suites, in the Linux 7.3 guest
# (scripts/guest.sh with the xfs, loop and quota_v2 modules: this host's
# 6.18 build has neither CONFIG_XFS_QUOTA nor CONFIG_QFMT_V2). Cases
# (PQ_CASES, default all, in this order):
#   projquota                 t_zcfsd_projquota (ENOSPC at the size on XFS and
#                             ext4, through passthrough and the server, ...)
#   fsx:PATH                  tests/conformance/fsx.sh (buffered + O_DIRECT)
#   pjdfstest:PATH            tests/conformance/pjdfstest.sh, whole
# PATH: zcfsd-xfs-pt, zcfsd-ext4-pt (a 1G volume of a passthrough tenant:
# project quota, passthrough on, io_uring) and zcfsd-xfs, zcfsd-ext4 (the
# same of a tenant without passthrough: data through the server, uring),
# each with ZCFS_REQUIRE_PROJQUOTA=1 (a volume not project-quota enforced,
# or a -pt one without passthrough, fails).
#   PQ_CASES="fsx:zcfsd-xfs-pt pjdfstest:zcfsd-ext4"   only these
#   PQ_PROVE_ARGS (default -j4): prove's; pjdfstest's test files use their
#                             own names, and many of them sleep (timestamps)
#   PQ_TIMEOUT (default 14400 s), PQ_OUT (default build/projquota-guest-test)
# PJDFSTEST_DIR / XFSTESTS_DIR: suites built elsewhere (else built here from
# ../shared/vendor-src, tests/conformance/build-suites.sh; ZCFS_SHARED=DIR).
# Results: PQ_OUT/SUITE-PATH/summary (pjdfstest / fsx), PQ_OUT/cmd.log.
# Prints one line per case and "projquota-guest-test: N passed, N failed";
# exit 0 iff none failed (a guest kernel report fails the run, guest.sh),
# 77 when no 7.3 kernel can be had (make kernel's reason).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
all="projquota"
for p in zcfsd-xfs-pt zcfsd-xfs zcfsd-ext4-pt zcfsd-ext4; do all="$all fsx:$p"; done
for p in zcfsd-xfs-pt zcfsd-xfs zcfsd-ext4-pt zcfsd-ext4; do all="$all pjdfstest:$p"; done
cases=${PQ_CASES:-$all}

# shellcheck source=guest-suite.sh
. "$here/scripts/guest-suite.sh"

if [ "${1:-}" = --inside ]; then
	out=$2
	export ZCFS_REQUIRE_PROJQUOTA=1
	for c in $cases; do
		s=${c%%:*} p=${c#*:} start=$(date +%s)
		case $s in
		projquota)
			ONLY=t_zcfsd_projquota ZCFS_TRANSPORTS=uring ZCFS_TEST_LOGDIR="$out/logs/projquota" \
				"$here/tests/run-integration.sh" >"$out/projquota.out" 2>&1
			rc=$?
			suite_res "$c" "$rc" "($(grep -E '^integration: ' "$out/projquota.out" | tail -n 1), $(( $(date +%s) - start ))s)";;
		fsx|pjdfstest) suite_conformance "$s" "$p" "$out" "${PQ_PROVE_ARGS--j4}";;
		*) suite_res "$c" 2 "(unknown case)";;
		esac
	done
	suite_end projquota-guest-test
fi

suite_build_conformance "$cases" projquota-guest-test
out=${PQ_OUT:-$here/build/projquota-guest-test}
export PQ_CASES=$cases PQ_PROVE_ARGS=${PQ_PROVE_ARGS--j4}
guest_suite projquota-guest-test "$out" "${PQ_TIMEOUT:-14400}" --modules xfs,loop,quota_v2 --mem 4096 \
	--env PQ_CASES --env PQ_PROVE_ARGS --env PJDFSTEST_DIR --env XFSTESTS_DIR -- \
	"$here/scripts/projquota-guest-test.sh" --inside "$out"
