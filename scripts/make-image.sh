#!/usr/bin/env bash
# make-image.sh IMAGE: the zcfs node image the manifests run, built with
# Podman from this tree's bin/ without pulling a base image (this machine
# reaches no container registry): deploy/install.sh --prefix /usr/local
# into a root directory, the shared libraries the binaries load (ldd)
# copied beside them, busybox-static for the init container's sh/cp/mv,
# then `podman import` of that root with the labels and entrypoint
# deploy/Containerfile gives. With a registry in reach,
# `podman build -f deploy/Containerfile` makes the Debian-based image
# instead; both put the same binaries in /usr/local/bin.
# The root is built in $IMAGE_ROOT (kept) or a temporary directory (not
# under build/: its *.d directories would look like make's dependency
# files). Exit 77 when podman or busybox-static is missing.
set -euo pipefail
image=${1:?usage: make-image.sh IMAGE}
top=$(cd "$(dirname "$0")/.." && pwd)
command -v podman >/dev/null || { echo "SKIP: podman not installed" >&2; exit 77; }
bb=$(command -v busybox 2>/dev/null || true)
[ -n "$bb" ] && file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ [ -x /bin/busybox ] && bb=/bin/busybox; } || { echo "SKIP: busybox-static not installed" >&2; exit 77; }
if [ -n "${IMAGE_ROOT:-}" ]; then
	root=$IMAGE_ROOT
	rm -rf "$root"
else
	root=$(mktemp -d /tmp/zcfs-image.XXXXXX)
	trap 'rm -rf "$root"' EXIT
fi
mkdir -p "$root"/{bin,etc,tmp,run,var/lib}
DESTDIR=$root "$top/deploy/install.sh" --prefix /usr/local --from "$top/bin" --no-systemd --no-docker-plugin >/dev/null
# every library a binary loads, at the path the loader looks for it
for b in "$root"/usr/local/bin/*; do
	file -L "$b" | grep -q 'dynamically linked' || continue
	ldd "$b" | grep -oE '/[^ ]+' | while read -r so; do
		[ -e "$root$so" ] || cp -L --parents "$so" "$root"
	done
done
cp "$bb" "$root/bin/busybox"
for t in sh cp mv mkdir cat ls rm; do ln -sf busybox "$root/bin/$t"; done
version=$("$top/bin/zcfs-csi" --version | awk '{print $2}')
tar -C "$root" -c . | podman import \
	--change 'ENV PATH=/usr/local/bin:/bin' \
	--change "LABEL org.opencontainers.image.title=zcfs org.opencontainers.image.version=$version" \
	--change 'CMD ["/usr/local/bin/zcfsd", "--help"]' - "$image" >/dev/null
echo "$image"
