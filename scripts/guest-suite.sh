# shellcheck shell=bash
# A suite of cases run in the make-kernel guest (sourced by
# kernel-guest-test.sh and projquota-guest-test.sh).
#   suite_res NAME RC DETAIL   inside: counts and prints one case (ok / skip
#                              for 77 / not ok) in suite_pass, suite_fail
#   suite_end NAME             inside: "NAME: N passed, N failed"; exit 0 iff none failed
#   guest_suite NAME OUT TIMEOUT [guest.sh options] -- COMMAND...
#                              outside: fetches the kernel (77 with make
#                              kernel's reason; with KERNEL= [KMODS=] given,
#                              that one, nothing fetched), runs COMMAND in the guest
#                              with OUT as its shared directory (emptied),
#                              and exits with its status; a run that died
#                              or whose guest kernel logged a report gets
#                              its "NAME: N passed, N failed" line said
suite_pass=0 suite_fail=0
suite_res() {
	if [ "$2" = 0 ]; then suite_pass=$((suite_pass + 1)); echo "ok - $1 $3"
	elif [ "$2" = 77 ]; then echo "skip - $1 $3"
	else suite_fail=$((suite_fail + 1)); echo "not ok - $1 $3"; fi
}
suite_end() {
	echo "$1: $suite_pass passed, $suite_fail failed"
	[ "$suite_fail" = 0 ]
	exit
}
guest_suite() {
	local name=$1 out=$2 timeout=$3 top kernel rc line given=()
	shift 3
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -n "${KERNEL:-}" ]; then
		# another worktree's copy (make KERNEL=... KMODS=...): no fetch
		[ -r "$KERNEL" ] || { echo "$name: cannot read KERNEL=$KERNEL" >&2; exit 2; }
		given=(--kernel "$KERNEL" ${KMODS:+--kmods "$KMODS"})
	else
		kernel=$("$top/scripts/fetch-kernel.sh")
		rc=$?
		[ "$rc" = 0 ] || exit "$rc"
		: "${kernel:?}"
	fi
	export ZCFS_BIN=${ZCFS_BIN:-$top/bin} ZCFS_TESTBIN=${ZCFS_TESTBIN:-$top/build/tests/integration}
	rm -rf "$out"
	mkdir -p "$out"
	"$top/scripts/guest.sh" "${given[@]}" --out "$out" --timeout "$timeout" "$@"
	rc=$?
	line=$(grep -E "^$name: [0-9]+ passed" "$out/cmd.log" | tail -n 1)
	if [ "$rc" != 0 ] && [ -z "$line" ]; then
		echo "$name: 0 passed, 1 failed (the guest: exit $rc, $out)"
	elif [ "$rc" != 0 ] && [ "${line#*passed, }" = "0 failed" ]; then
		# every case passed, and yet: the guest's kernel log had a report
		echo "$name: ${line#"$name": }; the guest's kernel logged a report: 1 failed ($out/dmesg)"
	fi
	exit "$rc"
}
# suite_conformance SUITE PATH OUT PROVE_ARGS: inside: one external suite
# (tests/conformance/SUITE.sh: fsx or pjdfstest, whole) on one data path of
# mount_path.sh; results in OUT/SUITE-PATH (summary, run.log, prove.out),
# counted by suite_res as "SUITE:PATH"
suite_conformance() {
	local s=$1 p=$2 d=$3/$1-$2 rc start top
	start=$(date +%s)
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	rm -rf "$d"; mkdir -p "$d"
	PROVE_ARGS=$4 "$top/tests/conformance/$s.sh" "$p" "$d" >"$d/run.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] && grep -q '^failed 0$' "$d/summary" 2>/dev/null || { [ "$rc" = 77 ] || rc=1; }
	grep -E '^(# volume|passed|failed|fail |error)' "$d/summary" 2>/dev/null | sed 's/^/# /'
	[ "$rc" = 0 ] || tail -n 5 "$d/run.log" | sed 's/^/#   /'
	suite_res "$s:$p" "$rc" "($(( $(date +%s) - start ))s)"
}
# suite_build_conformance CASES NAME: outside: builds the suites that CASES
# ("pjdfstest:PATH fsx:PATH ...") need on the host (the guest's root is
# read-only) unless PJDFSTEST_DIR / XFSTESTS_DIR name built ones, and
# exports those; exit 77 when one cannot be built
suite_build_conformance() {
	local s line top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	for s in pjdfstest xfstests; do
		# fsx is xfstests' (ltp/fsx)
		grep -qE "$([ $s = xfstests ] && echo '(^| )fsx:' || echo "(^| )$s:")" <<<"$1" || continue
		case $s in pjdfstest) [ -n "${PJDFSTEST_DIR:-}" ] && continue;; xfstests) [ -n "${XFSTESTS_DIR:-}" ] && continue;; esac
		line=$("$top/tests/conformance/build-suites.sh" "$top/build/conformance" "$s" | tail -n 1) || {
			echo "$2: cannot build $s: $line"; exit 77; }
		case $s in pjdfstest) export PJDFSTEST_DIR=${line#* };; xfstests) export XFSTESTS_DIR=${line#* };; esac
	done
}
