#!/usr/bin/env bash
# Installs zcfs on a plain node (no Kubernetes DaemonSet): binaries, the
# example policy (never over an existing one), systemd units, the Podman
# plugin declaration, the Docker plugin spec, mount(8)'s helper
# mount.fuse.zcfs (so `mount -t fuse.zcfs SRC DIR -o ...` and fstab lines
# work), the Docker managed plugin's tree (PREFIX/lib/zcfs/docker-plugin:
# config.json and rootfs, what `make docker-plugin` makes) and, with
# --flexvolume, the FlexVolume driver for a kubelet on this node.
#
#   deploy/install.sh [--prefix DIR] [--bindir DIR] [--from DIR] [--flexvolume]
#                     [--flexvolume-dir DIR] [--no-systemd] [--no-docker-plugin]
#                     [--sbindir DIR] [--man DIR]
#   DESTDIR=/tmp/root deploy/install.sh ...   stage into a root (packaging, tests)
#
# --prefix   install prefix (default /usr/local); binaries in PREFIX/bin
# --from     directory holding the built binaries (default: bin/ of this tree)
# --sbindir  where mount(8) finds mount.fuse.zcfs (default /sbin)
# --man      directory of the rendered man pages (make man; default build/man
#            of this tree): NAME.5 and NAME.8 go to PREFIX/share/man/man5, man8
# Idempotent: re-running replaces binaries and units, keeps the policy.
# Afterwards (not done here): systemctl daemon-reload && systemctl enable
# --now zcfsd zcfs-volume-plugin. The managed plugin is installed, not
# created: `docker plugin create` registers it in the running dockerd
# (nothing to stage under DESTDIR), its ID then belongs in the policy's
# allowed_target_prefixes before `docker plugin enable`, and it is an
# alternative to the zcfs.spec plugin (the same driver name, zcfs): the
# operator picks one. install.sh prints the commands.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
prefix=/usr/local
bindir=
from=$top/bin
flex=no
flexdir=/usr/libexec/kubernetes/kubelet-plugins/volume/exec
systemd=yes
dplugin=yes
sbindir=/sbin
mandir_from=$top/build/man
DESTDIR=${DESTDIR:-}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) prefix=$2; shift 2;;
	--prefix=*) prefix=${1#*=}; shift;;
	--bindir) bindir=$2; shift 2;;
	--bindir=*) bindir=${1#*=}; shift;;
	--from) from=$2; shift 2;;
	--from=*) from=${1#*=}; shift;;
	--flexvolume) flex=yes; shift;;
	--flexvolume-dir) flex=yes; flexdir=$2; shift 2;;
	--flexvolume-dir=*) flex=yes; flexdir=${1#*=}; shift;;
	--no-systemd) systemd=no; shift;;
	--no-docker-plugin) dplugin=no; shift;;
	--sbindir) sbindir=$2; shift 2;;
	--sbindir=*) sbindir=${1#*=}; shift;;
	--man) mandir_from=$2; shift 2;;
	--man=*) mandir_from=${1#*=}; shift;;
	-h|--help) usage; exit 0;;
	*) echo "install.sh: unknown argument $1" >&2; usage >&2; exit 2;;
	esac
done
case $prefix in /*) ;; *) echo "install.sh: --prefix must be absolute" >&2; exit 2;; esac
bindir=${bindir:-$prefix/bin}
docdir=$prefix/share/doc/zcfs

progs=(zcfsd zcfs-serve zcfsctl zcfs-csi zcfs-flexvolume zcfs-volume-plugin)
for p in "${progs[@]}"; do
	[ -x "$from/$p" ] || { echo "install.sh: $from/$p missing: run make first" >&2; exit 1; }
done

say() { echo "install: $*"; }
inst() { install -D -m "$1" "$2" "$DESTDIR$3"; say "$3"; }
# unit templates: @BINDIR@ / @DOCDIR@ become the installed paths
inst_unit() {
	local src=$1 dst=$2
	install -d "$DESTDIR$(dirname "$dst")"
	sed -e "s|@BINDIR@|$bindir|g" -e "s|@DOCDIR@|$docdir|g" "$src" >"$DESTDIR$dst.tmp"
	chmod 0644 "$DESTDIR$dst.tmp"
	mv -f "$DESTDIR$dst.tmp" "$DESTDIR$dst"
	say "$dst"
}

for p in "${progs[@]}"; do
	inst 0755 "$from/$p" "$bindir/$p"
done

inst_unit "$here/mount.fuse.zcfs" "$sbindir/mount.fuse.zcfs"
chmod 0755 "$DESTDIR$sbindir/mount.fuse.zcfs"

install -d -m 0755 "$DESTDIR/etc/zcfs/policy.d"
if compgen -G "$DESTDIR/etc/zcfs/policy.d/*.json" >/dev/null; then
	say "/etc/zcfs/policy.d already has a policy: kept"
else
	# the example, with zcfsd's metrics on a unix socket of the unit's
	# RuntimeDirectory (docs/security.md, "Metrics endpoint")
	install -d "$DESTDIR/etc/zcfs/policy.d"
	sed 's|^  "defaults": .*|&\n  "metrics": {"listen": "/run/zcfs/metrics.sock"},|' \
		"$top/policy/examples/default.json" >"$DESTDIR/etc/zcfs/policy.d/.default.json.tmp"
	grep -q '"/run/zcfs/metrics.sock"' "$DESTDIR/etc/zcfs/policy.d/.default.json.tmp" ||
		{ echo "install.sh: policy/examples/default.json has no \"defaults\" line to add metrics after" >&2; exit 1; }
	chmod 0644 "$DESTDIR/etc/zcfs/policy.d/.default.json.tmp"
	mv -f "$DESTDIR/etc/zcfs/policy.d/.default.json.tmp" "$DESTDIR/etc/zcfs/policy.d/default.json"
	say /etc/zcfs/policy.d/default.json
fi
install -d -m 0711 "$DESTDIR/var/lib/zcfs"

if [ $systemd = yes ]; then
	inst_unit "$here/systemd/zcfsd.service" /etc/systemd/system/zcfsd.service
	inst_unit "$here/systemd/zcfs-volume-plugin.service" /etc/systemd/system/zcfs-volume-plugin.service
fi
inst 0644 "$here/podman/containers.conf" /etc/containers/containers.conf.d/zcfs.conf
inst 0644 "$here/docker/zcfs.spec" /etc/docker/plugins/zcfs.spec
for d in control-protocol.md orchestrators.md; do
	[ -f "$top/docs/$d" ] && inst 0644 "$top/docs/$d" "$docdir/$d"
done
inst 0644 "$top/policy/README.md" "$docdir/policy.md"
inst 0644 "$here/bash-completion/zcfsctl" "$prefix/share/bash-completion/completions/zcfsctl"
# man pages (make man renders them): every page docs/man has
for src in "$top"/docs/man/*.scd; do
	page=$(basename "$src" .scd)
	[ -f "$mandir_from/$page" ] || { echo "install.sh: $mandir_from/$page missing: run make man" >&2; exit 1; }
	inst 0644 "$mandir_from/$page" "$prefix/share/man/man${page##*.}/$page"
done
if [ $dplugin = yes ]; then
	# the tree `docker plugin create` takes (scripts/make-docker-plugin.sh)
	pdir=$prefix/lib/zcfs/docker-plugin
	ZCFS_BIN=$from "$top/scripts/make-docker-plugin.sh" "$DESTDIR$pdir" >/dev/null
	say "$pdir/config.json"
	say "$pdir/rootfs/usr/local/bin/zcfs-volume-plugin"
	say "Docker managed plugin (instead of the zcfs.spec one: remove /etc/docker/plugins/zcfs.spec):"
	say "  docker plugin create zcfs $pdir"
	say "  then add /var/lib/docker/plugins/\$(docker plugin inspect -f '{{.Id}}' zcfs)/propagated-mount to the"
	say "  tenant's allowed_target_prefixes, zcfsctl policy reload, docker plugin enable zcfs"
	say "  (docs/orchestrators.md, \"Docker managed plugin\")"
fi
if [ $flex = yes ]; then
	# kubelet watches this directory and calls `init` on the new driver
	# zcfs-flexvolume: statically linked, it runs with any host libc
	inst 0755 "$from/zcfs-flexvolume" "$flexdir/zcfs.io~zcfs/zcfs"
fi
say "done${DESTDIR:+ (into $DESTDIR)}"
