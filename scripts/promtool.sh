#!/usr/bin/env bash
# Prints the path of a promtool (Prometheus' checker): the one on PATH, or
# the one in Debian's prometheus package, unpacked (not installed: no
# service is started) and kept as build/tools/promtool on first use. Exit 1
# with the reason on stderr when neither is to be had.
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then command -v promtool; exit 0; fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/tools/promtool
if [ ! -x "$out" ]; then
	command -v apt-get >/dev/null 2>&1 || { echo "promtool.sh: no promtool and no apt-get" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1) ||
		{ echo "promtool.sh: apt-get download prometheus failed (package lists not updated?)" >&2; exit 1; }
	dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
	[ -x "$tmp/x/usr/bin/promtool" ] || { echo "promtool.sh: the prometheus package has no usr/bin/promtool" >&2; exit 1; }
	# only the binary: the Makefile includes every *.d under build/ (etc/init.d!)
	mkdir -p "$(dirname "$out")"
	install -m 0755 "$tmp/x/usr/bin/promtool" "$out"
fi
echo "$out"
