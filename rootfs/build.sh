#!/bin/sh
# rootfs/build.sh DEST — build cordon's default rootfs from Debian's busybox-static.
#
# The tree is assembled in DEST.tmp.<pid> next to DEST and only then swapped
# in, so a reader of DEST sees either the old rootfs or the new one, never a
# half-built one. Running it twice gives the same tree. Works as root or as a
# normal user; as root, /home/sandbox is owned by 1000:1000.
#
# Environment: CORDON_BUSYBOX overrides the busybox binary (default
# /bin/busybox, which must come from the busybox-static package).
set -eu

prog=${0##*/}
die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: $prog DEST"
dest=${1%/}
case $dest in
'' | / | . | ..) die "refusing to use '$1' as the rootfs destination" ;;
esac

busybox=${CORDON_BUSYBOX:-/bin/busybox}
if [ -z "${CORDON_BUSYBOX:-}" ]; then
	# Debian's dynamic "busybox" package installs /bin/busybox too; a rootfs
	# has no libc, so only the static build works.
	status=$(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null || true)
	case $status in
	*" installed") ;;
	*) die "package busybox-static is not installed (it provides the static /bin/busybox the rootfs needs); install it with: apt-get install busybox-static" ;;
	esac
fi
[ -x "$busybox" ] || die "$busybox is missing or not executable (install the Debian package busybox-static)"

# An existing DEST is replaced only when it is empty or one of ours: it has the
# marker file (which is also meson's stamp, so "ninja clean" removes it) or
# our os-release.
marker=.cordon-rootfs
ours() {
	[ -e "$1/$marker" ] || grep -qx 'ID=cordon-busybox' "$1/etc/os-release" 2>/dev/null ||
		[ -z "$(ls -A "$1")" ]
}
if [ -e "$dest" ] || [ -L "$dest" ]; then
	[ -d "$dest" ] && [ ! -L "$dest" ] || die "$dest exists and is not a directory; remove it first"
	ours "$dest" || die "$dest is not empty and was not built by $prog; refusing to replace it"
fi

parent=$(dirname "$dest")
mkdir -p "$parent"
# Absolute from here on: the script changes directory below.
dest=$(cd "$parent" && pwd -P)/${dest##*/}

# Leftovers of earlier runs that were killed: their pid is gone.
for old in "$dest".tmp.*; do
	[ -d "$old" ] || continue
	pid=${old##*.tmp.}
	case $pid in '' | *[!0-9]*) continue ;; esac
	[ -d "/proc/$pid" ] || rm -rf "$old"
done

tmp=$dest.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

umask 022
mkdir "$tmp"
chmod 0755 "$tmp"
cd "$tmp"

mkdir -p bin sbin usr/bin usr/sbin etc proc dev sys tmp run workspace root home/sandbox mnt
cp "$busybox" bin/busybox
chmod 0755 bin/busybox

# One relative link per applet: bin/sh -> busybox, usr/bin/env -> ../../bin/busybox.
# perl (Essential on Debian) makes all of them in one process; a fork per
# link would cost most of a second.
list=$("$busybox" --list-full) || die "$busybox --list-full failed"
[ -n "$list" ] || die "$busybox --list-full printed no applets"
if command -v perl >/dev/null 2>&1; then
	printf '%s\n' "$list" | perl -e '
		use strict;
		while (my $applet = <STDIN>) {
			chomp $applet;
			next if $applet eq "" || $applet eq "bin/busybox";
			die "unexpected applet path $applet\n" if $applet =~ m{^/|(^|/)\.\.(/|$)};
			my @dirs = split m{/}, $applet;
			pop @dirs;
			my $target = !@dirs ? "bin/busybox"
				: (@dirs == 1 && $dirs[0] eq "bin") ? "busybox"
				: ("../" x @dirs) . "bin/busybox";
			my $path = "";
			for my $d (@dirs) {
				$path .= "$d/";
				mkdir $path unless -d $path;
			}
			symlink($target, $applet) or die "symlink $applet: $!\n";
		}' || die "creating the applet links failed"
else
	set -f # applet names include "[" and "[["
	for applet in $list; do
		case $applet in
		/* | *..* | bin/busybox) continue ;;
		esac
		dir=${applet%/*}
		if [ "$dir" = "$applet" ]; then
			target=bin/busybox
		elif [ "$dir" = bin ]; then
			target=busybox
		else
			up=
			rest=$dir
			while :; do
				up=../$up
				case $rest in */*) rest=${rest#*/} ;; *) break ;; esac
			done
			target=${up}bin/busybox
			mkdir -p "$dir"
		fi
		ln -s "$target" "$applet"
	done
	set +f
fi

cat >etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >etc/group <<'EOF'
root:x:0:
tty:x:5:
sandbox:x:1000:
nogroup:x:65534:
EOF
cat >etc/hosts <<'EOF'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
EOF
: >etc/resolv.conf
version=$("$busybox" 2>/dev/null | sed -n '1s/^BusyBox v\([^ ]*\).*/\1/p' || true)
cat >etc/os-release <<EOF
NAME="cordon busybox rootfs"
PRETTY_NAME="cordon default rootfs (BusyBox ${version:-unknown})"
ID=cordon-busybox
VERSION_ID="${version:-unknown}"
EOF
ln -s ../proc/self/mounts etc/mtab
printf 'cordon default rootfs, built by rootfs/build.sh; safe to delete and rebuild\n' >"$marker"

find . -type d -exec chmod 0755 {} +
find . -type f ! -path ./bin/busybox -exec chmod 0644 {} +
chmod 1777 tmp
chmod 0700 root
if [ "$(id -u)" -eq 0 ]; then
	chown -R -h 0:0 .
	chown 1000:1000 home/sandbox
fi

cd /
# Swap in. mv -T fails instead of moving into a directory that another run
# re-created in between; then clear it and try once more.
rm -rf "$dest"
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	rm -rf "$dest"
	mv -T "$tmp" "$dest"
fi
trap - EXIT
