#!/usr/bin/env bash
# Runs every cmocka unit test binary given as argument; cmocka prints its
# own per-suite summary. Exits non-zero when any binary fails.
set -u
rc=0
for t in "$@"; do
	"$t" || rc=1
done
exit $rc
