#!/usr/bin/env bash
# Prints the path of a csi-sanity binary (kubernetes-csi csi-test v5.3.1),
# building it into build/csi-sanity once: $CSI_SANITY if set and
# executable, else ../shared/tools/build-csi-sanity.sh (found from the repo
# root: ../shared or ../../shared, or $ZCFS_SHARED), which builds offline
# with Debian's Go. Exit 77 with the reason when neither can be had.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${CSI_SANITY:-}" ] && [ -x "$CSI_SANITY" ]; then echo "$CSI_SANITY"; exit 0; fi
out=$top/build/csi-sanity
[ -x "$out/csi-sanity" ] && { echo "$out/csi-sanity"; exit 0; }
shared=
for d in "${ZCFS_SHARED:-}" "$top/../shared" "$top/../../shared"; do
	[ -n "$d" ] && [ -x "$d/tools/build-csi-sanity.sh" ] && { shared=$(cd "$d" && pwd); break; }
done
[ -n "$shared" ] || { echo "SKIP: no shared/tools/build-csi-sanity.sh next to the repo (../shared, ../../shared or \$ZCFS_SHARED)" >&2; exit 77; }
exec "$shared/tools/build-csi-sanity.sh" "$out"
