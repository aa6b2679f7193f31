#!/usr/bin/env bash
# run-fuzz.sh SECONDS FUZZER...: fuzz each target for SECONDS (0: replay
# its corpus under tests/fuzz/corpus/NAME once). Prints executions and
# crashes per target and a closing "N passed, N failed" line.
set -u
secs=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
for f in "$@"; do
	name=$(basename "$f"); name=${name#fuzz_}
	corpus=$here/fuzz/corpus/$name
	work=$(mktemp -d /tmp/zcfs-fuzz-run.XXXXXX)
	if [ "$secs" -eq 0 ]; then
		"$f" -runs=0 "$corpus" >"$work/log" 2>&1
	else
		cp -r "$corpus" "$work/corpus"
		"$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$work/" "$work/corpus" "$corpus" >"$work/log" 2>&1
	fi
	rc=$?
	execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+|#[0-9]+' "$work/log" | tail -n 1 | grep -oE '[0-9]+$')
	crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
	if [ $rc -eq 0 ] && [ "$crashes" -eq 0 ]; then
		pass=$((pass + 1)); echo "fuzz $name: ok executions=${execs:-?} crashes=0"
	else
		fail=$((fail + 1)); echo "fuzz $name: FAILED rc=$rc executions=${execs:-?} crashes=$crashes (artifacts in $work)"
		tail -n 30 "$work/log" | sed 's/^/    /'
		continue
	fi
	rm -rf "$work"
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
