#!/usr/bin/env bash
# make kernel: fetch Debian's newest amd64 kernel with FUSE buffer pools
# (Linux >= 7.3, protocol 7.46) and its modules, cache them under
# build/kernel, print the image's path.
#
# Never touches the system's apt configuration: a private sources list
# (the Debian archive URI the system's own sources name, suites sid and
# experimental, [trusted=yes]) with apt-get's Dir::Etc::sourcelist,
# Dir::Etc::sourceparts=/dev/null, Dir::State::Lists and Dir::Cache set to
# directories under build/kernel/apt.
#
# Picks the highest version of linux-binary-X.Y-cloud-amd64 (or
# linux-image-X.Y-cloud-amd64-unsigned) with X.Y >= 7.3, downloads it and
# the matching linux-modules package, extracts both (dpkg-deb -x) into
# build/kernel/<package>_<version>/ and runs depmod there, so modprobe in
# the guest finds xfs, loop, quota_v2... Writes build/kernel/current.env:
#   KERNEL=.../vmlinuz  KMODS=.../usr/lib/modules  KVER=7.3-cloud-amd64
# and points build/kernel/current at the tree.
#
# Exit 0 with the image's path on stdout's last line; 77 naming why when
# the archive cannot be reached (or has no such kernel) and nothing is
# cached; 1 on other errors. A cached kernel is used when the archive is
# unreachable (said on stderr). ZCFS_KERNEL_MIN (default 7.3) and
# ZCFS_DEBIAN_URI override the minimum and the archive.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kdir=${ZCFS_KERNEL_DIR:-$here/build/kernel}
min=${ZCFS_KERNEL_MIN:-7.3}
say() { echo "fetch-kernel: $*" >&2; }

# The Debian archive the system's sources name (one-line and deb822 form),
# not the security archive.
system_uri() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f"
	done
}
uri=${ZCFS_DEBIAN_URI:-$(system_uri | grep -E '/debian/?$' | head -n 1 || true)}

use_cache() { # $1: why the archive is of no use
	if [ -r "$kdir/current.env" ]; then
		# shellcheck source=/dev/null
		. "$kdir/current.env"
		if [ -r "$KERNEL" ]; then
			say "$1; using the cached $KERNEL"
			echo "$KERNEL"
			exit 0
		fi
	fi
	say "$1 (no cached kernel): skipped"
	exit 77
}
[ -n "$uri" ] || use_cache "the system's apt sources name no Debian archive (set ZCFS_DEBIAN_URI)"

apt=$kdir/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$kdir/debs"
# current.env names the real place (build/kernel may be a symlink)
kdir=$(cd -P "$kdir" && pwd)
apt=$kdir/apt
printf 'deb [trusted=yes] %s sid main\ndeb [trusted=yes] %s experimental main\n' "$uri" "$uri" >"$apt/sources.list"
A=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
if ! timeout 300 apt-get -qq "${A[@]}" update >"$apt/update.log" 2>&1 ||
	grep -qE '^(E:|Err:|W: Failed to fetch)' "$apt/update.log"; then
	use_cache "cannot reach the Debian archive $uri ($(grep -m1 -E '^(E|Err|W):' "$apt/update.log" | cut -c1-200 || echo 'apt-get update failed'))"
fi

# Candidates: package names of the cloud flavour whose X.Y >= min.
ge_min() { # X.Y
	[ "$(printf '%s\n%s\n' "$min" "$1" | sort -V | head -n 1)" = "$min" ]
}
best_pkg='' best_ver=''
while read -r pkg; do
	xy=$(sed -E 's/^linux-(binary|image)-([0-9]+\.[0-9]+).*/\2/' <<<"$pkg")
	ge_min "$xy" || continue
	while read -r ver; do
		if [ -z "$best_ver" ] || dpkg --compare-versions "$ver" gt "$best_ver"; then
			best_pkg=$pkg best_ver=$ver
		fi
	done < <(apt-cache "${A[@]}" madison "$pkg" | awk -F'|' '{gsub(/ /, "", $2); print $2}')
done < <(apt-cache "${A[@]}" pkgnames linux- | grep -E '^linux-(binary-[0-9]+\.[0-9]+[^-]*-cloud-amd64|image-[0-9]+\.[0-9]+[^-]*-cloud-amd64-unsigned)$' | sort -u)
[ -n "$best_pkg" ] || use_cache "the archive $uri (sid, experimental) has no linux-binary-X.Y-cloud-amd64 with X.Y >= $min"

tree=$kdir/${best_pkg}_${best_ver//[~:]/_}
if [ ! -r "$tree/.complete" ]; then
	say "fetching $best_pkg $best_ver from $uri"
	mods=${best_pkg/#linux-binary-/linux-modules-}
	mods=${mods/#linux-image-/linux-modules-}
	mods=${mods%-unsigned}
	want=("$best_pkg=$best_ver")
	apt-cache "${A[@]}" madison "$mods" | grep -q " $best_ver " && want+=("$mods=$best_ver")
	(cd "$kdir/debs" && timeout 600 apt-get -qq "${A[@]}" download "${want[@]}") >"$apt/download.log" 2>&1 ||
		use_cache "apt-get download ${want[*]} failed: $(grep -m1 -E '^(E|Err):' "$apt/download.log" || true)"
	rm -rf "$tree"
	mkdir -p "$tree"
	for p in "${want[@]}"; do
		dpkg-deb -x "$kdir/debs/${p%%=*}_${best_ver//:/%3a}_amd64.deb" "$tree"
	done
	touch "$tree/.complete"
fi

vmlinuz=$(find "$tree" -name 'vmlinuz*' -type f | head -n 1)
[ -n "$vmlinuz" ] || { say "no vmlinuz in $best_pkg $best_ver"; exit 1; }
kmods=$(find "$tree" -path '*/lib/modules' -type d | head -n 1)
kver=$(basename "$(dirname "$vmlinuz")")
[ "$kver" = boot ] && kver=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')
if [ -n "$kmods" ] && [ -d "$kmods/$kver/kernel" ] && [ ! -e "$kmods/$kver/modules.dep" ]; then
	depmod -b "${kmods%/lib/modules}" "$kver" 2>/dev/null ||
		depmod -b "${kmods%/usr/lib/modules}" "$kver"
fi
ln -sfn "$(basename "$tree")" "$kdir/current"
cat >"$kdir/current.env" <<EOF
KERNEL=$vmlinuz
KMODS=$kmods
KVER=$kver
KPKG=$best_pkg
KPKG_VERSION=$best_ver
EOF
say "$best_pkg $best_ver: modules ${kmods:-none} ($kver); see $kdir/current.env"
echo "$vmlinuz"
