#!/usr/bin/env bash
# build-suites.sh OUTDIR [pjdfstest] [xfstests]: builds the external
# conformance suites from the tarballs in shared/vendor-src (found next to
# the repository: ../shared) into OUTDIR/pjdfstest and OUTDIR/xfstests,
# installing their Debian build dependencies and xfstests' users (fsgqa,
# fsgqa2, 123456-fsgqa) when missing. A tree already built is reused.
# Prints "NAME DIR" per suite. Exit 77 naming what is missing.
set -eu
out=${1:?usage: build-suites.sh OUTDIR [pjdfstest] [xfstests]}
shift
[ $# -gt 0 ] || set -- pjdfstest xfstests
top=$(cd "$(dirname "$0")/../.." && pwd)
shared=${ZCFS_SHARED:-$top/../shared}
src=$shared/vendor-src
skip() { echo "SKIP: $*"; exit 77; }
[ -d "$src" ] || skip "no $src (the shared vendor sources next to the repository; ZCFS_SHARED=DIR)"
mkdir -p "$out"; out=$(cd "$out" && pwd)
log=$out/build.log

apt_install() {
	local missing=() p
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || skip "needs Debian packages ${missing[*]} (root to install)"
	local lock=() ; command -v flock >/dev/null && lock=(flock /tmp/zcfs-apt.lock)
	# waits for another apt-get's dpkg lock (up to 5 min) instead of failing
	if [ ! -e /tmp/zcfs-apt-updated ]; then
		"${lock[@]}" apt-get -o DPkg::Lock::Timeout=300 update -q >>"$log" 2>&1 &&
			touch /tmp/zcfs-apt-updated
	fi
	DEBIAN_FRONTEND=noninteractive "${lock[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -q \
		"${missing[@]}" >>"$log" 2>&1 ||
		skip "cannot install ${missing[*]} (see $log)"
}

unpack() { # NAME TARBALL-GLOB -> OUTDIR/NAME
	local tb
	tb=$(find "$src" -maxdepth 1 -name "$2" | sort | head -n 1)
	[ -n "$tb" ] || skip "no $src/$2"
	rm -rf "${out:?}/$1" "${out:?}/$1.tmp"
	mkdir -p "$out/$1.tmp"
	tar -xzf "$tb" -C "$out/$1.tmp"
	mv "$out/$1.tmp"/* "$out/$1"
	rmdir "$out/$1.tmp"
}

for s in "$@"; do
	case $s in
	pjdfstest)
		if [ ! -x "$out/pjdfstest/pjdfstest" ]; then
			apt_install autoconf automake gcc make perl
			unpack pjdfstest 'pjdfstest-*.tar.gz'
			(cd "$out/pjdfstest" && autoreconf -ifs && ./configure && make pjdfstest) >>"$log" 2>&1 ||
				{ echo "pjdfstest build failed (see $log)" >&2; exit 1; }
		fi
		echo "pjdfstest $out/pjdfstest";;
	xfstests)
		apt_install xfsprogs xfslibs-dev uuid-dev libattr1-dev libacl1-dev libaio-dev liburing-dev \
			libgdbm-dev libtool-bin automake autoconf attr acl bc psmisc quota gawk gcc make
		for u in fsgqa fsgqa2 123456-fsgqa; do
			id "$u" >/dev/null 2>&1 && continue
			[ "$(id -u)" -eq 0 ] || skip "xfstests needs user $u (root to add it)"
			useradd -m "$u" 2>>"$log" || useradd --badname -m "$u" >>"$log" 2>&1 || skip "cannot add user $u"
		done
		if [ ! -x "$out/xfstests/ltp/fsstress" ]; then
			unpack xfstests 'xfstests-*.tar.gz'
			(cd "$out/xfstests" && make -j"$(nproc)") >>"$log" 2>&1 ||
				{ echo "xfstests build failed (see $log)" >&2; exit 1; }
		fi
		echo "xfstests $out/xfstests";;
	*) echo "build-suites.sh: unknown suite $s" >&2; exit 2;;
	esac
done
