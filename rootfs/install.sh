#!/bin/sh
# rootfs/install.sh DATADIR — meson install step: build the default rootfs at
# DESTDIR/PREFIX/DATADIR/cordon/rootfs (DATADIR may be absolute).
set -eu
datadir=${1:?usage: install.sh DATADIR}
case $datadir in
/*) dest=${DESTDIR:-}$datadir/cordon/rootfs ;;
*) dest=${MESON_INSTALL_DESTDIR_PREFIX:?not run by meson install}/$datadir/cordon/rootfs ;;
esac
if [ -n "${MESON_INSTALL_DRY_RUN:-}" ]; then
	echo "Would build the default rootfs in $dest"
	exit 0
fi
[ -n "${MESON_INSTALL_QUIET:-}" ] || echo "Building the default rootfs in $dest"
exec "$(dirname "$0")/build.sh" "$dest"
