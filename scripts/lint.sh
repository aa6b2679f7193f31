#!/usr/bin/env bash
# Mechanical bans (see docs/architecture.md "Conventions"): no sprintf,
# strtol/atoi, bare dup(), exit() in daemon code; the structure checks (no
# include cycle among modules, no call circle among the files of a folder,
# no function over 80 lines, no code written twice outside the tests, the architecture
# page names every source file); shellcheck if present.
set -u
cd "$(dirname "$0")/.." || exit 2
rc=0
ban() {
	local pattern=$1 why=$2; shift 2
	local hits
	hits=$(grep -nE "$pattern" "$@" 2>/dev/null | grep -v 'lint:allow')
	if [ -n "$hits" ]; then
		echo "lint: $why"; echo "$hits" | sed 's/^/    /'; rc=1
	fi
}
src=$(git ls-files 'common/*.c' 'common/*.h' 'daemon/*.c' 'daemon/*.h' 'plugin/*.c' 'plugin/*.h')
# shellcheck disable=SC2086
{
ban '\bv?sprintf\(' "use snprintf" $src
ban '\b(strtol|strtoul|strtoll|strtoull|atoi|atol)\(' "use parse_u64/parse_size" $src
ban '[^_a-z]dup\(' "use fcntl(F_DUPFD_CLOEXEC)" $src
# shellcheck disable=SC2046
ban '(^|[^_a-z])exit\(' "daemon code returns errors; only main may end the process" $(echo "$src" | grep -v '/main.c$')
}
for check in check-include-cycles check-call-cycles check-function-length check-architecture-doc check-duplicates; do
	python3 "scripts/$check.py" || rc=1
done
if command -v shellcheck >/dev/null; then
	# SC2154: tests use variables of the lib.sh they source at run time.
	# shellcheck disable=SC2046
	shellcheck -S warning -e SC2154 $(git ls-files '*.sh' .ci/run) || rc=1
else
	echo "lint: shellcheck not installed (make deps): the shell scripts were not checked"
fi
[ $rc -eq 0 ] && echo "lint: clean"
exit $rc
