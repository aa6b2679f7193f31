#!/usr/bin/env bash
# make conformance: the external suites as zcfs's own checks.
#   pjdfstest (whole) and xfstests (`./check -fuse -g quick`) on every data
#   path this kernel has: devfuse, uring, passthrough, exclusive (uring
#   with the exclusive cache; zcfs-serve as root) and zcfsd (a volume published by a real zcfsd: sandboxed tenant server,
#   --ownership=xattr, exclusive cache); pjdfstest also on zcfsd-xfs and
#   zcfsd-ext4 (that volume with its storage root on XFS / ext4 on a loop device).
# Writes build/conformance.md (path x suite: passed / failed / not run and
# the failures) and fails when pjdfstest fails anything, or when xfstests'
# failures differ from tests/conformance/xfstests-expected.txt (each entry
# names its cause): an unexpected failure, or an expected one that passed.
# Builds the suites from ../shared/vendor-src into build/conformance/
# (PJDFSTEST_DIR / XFSTESTS_DIR use trees built elsewhere).
#   CONFORMANCE_PLAN="pjdfstest:zcfsd xfstests:uring"  run only these pairs
#   XFSTESTS_ARGS="generic/062 generic/099"             instead of -g quick
#   CONFORMANCE_REUSE=1  keep the results of pairs an earlier run in the
#                        same CONFORMANCE_BUILD finished; run the others
#                        (a long plan in parts, one report over all)
#   CONFORMANCE_PEER=1   also run the reference server, libfuse's
#                        passthrough_hp (../shared/tools/build-passthrough-hp.sh),
#                        as paths "peer" (--nopassthrough -o io_uring, beside
#                        devfuse and uring) and "peerpt" (its kernel
#                        passthrough, beside passthrough): reported, not
#                        judged, and each zcfs xfstests failure is listed
#                        with the peer's result for it
# Exit 0 all as expected, 1 otherwise, 77 (reason on the last line) when
# the suites cannot be built or nothing could run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${ZCFS_BIN:=$top/bin}"
build=${CONFORMANCE_BUILD:-$top/build/conformance}
report=${CONFORMANCE_REPORT:-$top/build/conformance.md}
expected=$here/xfstests-expected.txt
export ZCFS_BIN
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (mounts, uid-switching suites)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
for p in zcfs-serve zcfsd zcfsctl; do [ -x "$ZCFS_BIN/$p" ] || skip "$ZCFS_BIN/$p not built (make)"; done
mkdir -p "$build"

paths="devfuse uring passthrough exclusive zcfsd"
[ "${CONFORMANCE_PEER:-0}" = 1 ] && paths="$paths peer peerpt"
plan=${CONFORMANCE_PLAN:-}
if [ -z "$plan" ]; then
	for s in pjdfstest xfstests; do for p in $paths; do plan="$plan $s:$p"; done; done
	# a zcfsd volume whose storage root is XFS / ext4 on a loop device
	plan="$plan pjdfstest:zcfsd-xfs pjdfstest:zcfsd-ext4"
fi
suites=$(tr ' ' '\n' <<<"$plan" | sed -n 's/:.*//p' | sort -u)
for s in $suites; do
	case $s in
	pjdfstest) [ -n "${PJDFSTEST_DIR:-}" ] && continue;;
	xfstests) [ -n "${XFSTESTS_DIR:-}" ] && continue;;
	esac
	line=$("$here/build-suites.sh" "$build" "$s" | tail -n 1); rc=$?
	[ $rc = 0 ] || { echo "$line"; [ $rc = 77 ] && exit 77; exit 1; }
	case $s in
	pjdfstest) PJDFSTEST_DIR=${line#* };;
	xfstests) XFSTESTS_DIR=${line#* };;
	esac
done
export PJDFSTEST_DIR XFSTESTS_DIR
if tr ' ' '\n' <<<"$plan" | grep -qE ':peer(pt)?$'; then
	[ -x "${PEER_BIN:-}" ] ||
		PEER_BIN=$("$top/../shared/tools/build-passthrough-hp.sh" "$build/peer" 2>>"$build/peer.log" | tail -n 1) || PEER_BIN=
	export PEER_BIN
fi

uring_param=/sys/module/fuse/parameters/enable_uring
# why_not PATH SUITE: empty when PATH can run on this kernel, else the reason
why_not() {
	case $1:$2 in
	uring:*|exclusive:*|peer:*) [ -e $uring_param ] || { echo "kernel without FUSE-over-io_uring"; return; };;
	passthrough:*|peerpt:*)
		grep -qE '^passthrough +supported' <<<"$("$ZCFS_BIN/zcfsctl" kernel 2>/dev/null)" ||
			{ echo "kernel without FUSE passthrough"; return; };;
	esac
	case $1 in peer|peerpt) [ -n "${PEER_BIN:-}" ] || echo "passthrough_hp could not be built (see $build/peer.log)";; esac
}

results=()
for item in $plan; do
	s=${item%%:*} p=${item#*:}
	out=$build/$s-$p
	if [ "${CONFORMANCE_REUSE:-0}" = 1 ] && grep -qE '^(passed|notrun_reason) ' "$out/summary" 2>/dev/null; then
		echo "== $s on $p: results of an earlier run kept ($out)"
		results+=("$item")
		continue
	fi
	rm -rf "$out"; mkdir -p "$out"
	reason=$(why_not "$p" "$s")
	if [ -n "$reason" ]; then
		echo "notrun_reason $reason" >"$out/summary"
		echo "== $s on $p: not run ($reason)"
		continue
	fi
	echo "== $s on $p"
	case $s in
	pjdfstest) "$here/pjdfstest.sh" "$p" "$out" >"$out/run.log" 2>&1;;
	xfstests) read -ra xargs_ <<<"${XFSTESTS_ARGS:-}"
		"$here/xfstests.sh" "$p" "$out" "${xargs_[@]}" >"$out/run.log" 2>&1;;
	esac
	rc=$?
	[ $rc = 77 ] && echo "notrun_reason $(tail -n 1 "$out/run.log")" >>"$out/summary"
	[ $rc != 0 ] && [ $rc != 77 ] && ! grep -q '^failed' "$out/summary" 2>/dev/null &&
		echo "error exit $rc (see $out/run.log)" >>"$out/summary"
	grep -E '^(passed|failed|notrun|# )' "$out/summary" | sed 's/^/   /'
	results+=("$item")
done

# expected_for TEST PATH: the cause, when TEST is expected to fail on PATH
expected_for() {
	awk -v t="$1" -v p="$2" '!/^#/ && NF >= 3 && $1 == t {
		n = split($2, ps, ","); for (i = 1; i <= n; i++) if (ps[i] == "*" || ps[i] == p) {
			$1 = ""; $2 = ""; sub(/^  */, ""); print; exit } }' "$expected"
}

bad=0 judged_ok=0 judged_bad=0
{
	echo "# zcfs conformance ($(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r))"
	echo
	echo "Produced by \`make conformance\` (tests/conformance/run.sh). xfstests failures are"
	echo "judged against tests/conformance/xfstests-expected.txt; pjdfstest must pass whole."
	echo
	echo "| suite | path | passed | failed | not run | verdict |"
	echo "|---|---|---|---|---|---|"
} >"$report"
details=$(mktemp)
for item in $plan; do
	s=${item%%:*} p=${item#*:}
	sum=$build/$s-$p/summary
	get() { awk -v k="$1" '$1 == k {print $2}' "$sum" 2>/dev/null; }
	reason=$(sed -n 's/^notrun_reason //p' "$sum" 2>/dev/null | head -n 1)
	if [ -n "$reason" ]; then
		echo "| $s | $p | | | all | not run: $reason |" >>"$report"
		continue
	fi
	passed=$(get passed) failed=$(get failed) notrun=$(get notrun)
	verdict=ok
	if grep -q '^error' "$sum"; then verdict="ERROR: $(sed -n 's/^error //p' "$sum")"; bad=1; fi
	case $s in
	pjdfstest)
		if [ "${failed:-0}" != 0 ]; then
			if [ "${p#peer}" != "$p" ]; then verdict="(reference)"; else verdict=FAILED; bad=1; fi
			{ echo "### pjdfstest on $p: failed"; sed -n 's/^fail /- /p' "$sum"; echo; } >>"$details"
		fi;;
	xfstests)
		unexpected=() now_pass=() known=()
		while read -r t; do
			c=$(expected_for "$t" "$p")
			if [ -n "$c" ]; then known+=("$t ($c)"); else unexpected+=("$t"); fi
		done < <(sed -n 's/^fail //p' "$sum")
		# expected failures of this path that ran and passed
		while read -r t; do
			[ -n "$(expected_for "$t" "$p")" ] || continue
			grep -qx "fail $t" "$sum" || grep -q "^foreign $t " "$sum" || now_pass+=("$t")
		done < <(sed -n 's/^ran_test //p' "$sum")
		if [ "${p#peer}" != "$p" ]; then
			verdict="(reference)"
		elif [ ${#unexpected[@]} -gt 0 ] || [ ${#now_pass[@]} -gt 0 ]; then
			verdict=FAILED; bad=1
		fi
		{
			echo "### xfstests on $p"
			[ ${#unexpected[@]} -gt 0 ] && echo "- unexpected failures: ${unexpected[*]}"
			[ ${#now_pass[@]} -gt 0 ] && echo "- expected to fail but passed (remove from the list): ${now_pass[*]}"
			for k in "${known[@]}"; do echo "- expected: $k"; done
			sed -n 's/^foreign \([^ ]*\) \(.*\)/- not judged: \1 failed only on a \2(another process on this machine)/p' "$sum"
			echo
		} >>"$details";;
	esac
	echo "| $s | $p | ${passed:-?} | ${failed:-?} | ${notrun:-0} | $verdict |" >>"$report"
	case $verdict in ok|"(reference)") judged_ok=$((judged_ok + 1));; *) judged_bad=$((judged_bad + 1));; esac
done
# Every xfstests failure of a zcfs path beside each xfstests path's
# result for it: pass, FAIL, not run (the test's _require said no), or
# empty (not in that run); the peer columns say what the reference
# server does with the same test in the same run.
xpaths=$(tr ' ' '\n' <<<"$plan" | sed -n 's/^xfstests://p')
xfails=$(for p in $xpaths; do [ "${p#peer}" = "$p" ] && sed -n 's/^fail //p' "$build/xfstests-$p/summary" 2>/dev/null; done | sort -u)
if [ -n "$xfails" ]; then
	{
		echo "### xfstests failures of zcfs beside every path of the run"
		echo
		printf '| test |'; for p in $xpaths; do printf ' %s |' "$p"; done; echo " cause (xfstests-expected.txt) |"
		printf '|---|'; for p in $xpaths; do printf -- '---|'; done; echo "---|"
		for t in $xfails; do
			printf '| %s |' "$t"
			cause='' unexp=''
			for p in $xpaths; do
				sum=$build/xfstests-$p/summary
				if grep -qx "fail $t" "$sum" 2>/dev/null; then r=FAIL
				elif grep -qx "ran_test $t" "$sum" 2>/dev/null; then r=pass
				elif grep -q "^foreign $t " "$sum" 2>/dev/null; then r="(foreign)"
				elif [ -e "$build/xfstests-$p/results/$t.notrun" ]; then r="not run"
				else r=; fi
				printf ' %s |' "$r"
				[ "${p#peer}" = "$p" ] || continue
				c=$(expected_for "$t" "$p")
				[ -z "$cause" ] && cause=$c
				# a failure with no entry for its path is unexpected there
				[ "$r" = FAIL ] && [ -z "$c" ] && unexp="$unexp $p"
			done
			[ -n "$unexp" ] && cause="**unexpected** on${unexp}${cause:+; elsewhere: $cause}"
			echo " ${cause:-**unexpected**} |"
		done
		echo
	} >>"$details"
fi
{ echo; cat "$details"; } >>"$report"
rm -f "$details"
echo
cat "$report"
[ ${#results[@]} -gt 0 ] || skip "nothing could run (see $report)"
# one closing line for CI: suite x path runs as expected / not
echo "$judged_ok passed, $judged_bad failed"
exit $bad
