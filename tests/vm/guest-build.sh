#!/bin/sh
# Build the test guest into $1/vm/guest (default build/vm/guest), from
# Debian packages only, without installing a kernel on this machine:
#   vmlinux    the kernel that linux-image-amd64 points at, its bzImage
#              payload decompressed to an ELF image that QEMU boots directly
#              (PVH entry; no firmware boot loader, no decompressor under TCG)
#   initrd.gz  busybox-static, the NIC and 9p modules with what they depend
#              on, and tests/vm/guest-init.sh as /init
#   version    "PACKAGE VERSION recipe N": the kernel package it was built
#              from and a checksum of this script and guest-init.sh
# Cached: nothing is done while the kernel package's candidate version and
# the recipe are the ones built.  With no package lists (offline) a cached guest is used.
# Prints the guest directory on stdout.  Exit 0; 1 with a message; 77 (no
# apt/dpkg here and no cached guest) when it cannot be built at all.
set -eu

B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
G=$B/vm/guest
mkdir -p "$G"
G=$(cd "$G" && pwd)

say() { echo "vm: $*" >&2; }
die() { say "$*"; exit 1; }

# Modules the guest needs; their dependencies are added from .modinfo (the
# host has no kmod to do it).
# tcp_bbr: the demo's kernel rows with DEMO_CC=bbr (TCP_CONGESTION).
MODS="e1000 e1000e virtio_net virtio_pci 9p 9pnet_virtio tcp_bbr"

candidate() {
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$pkg" ] || return 1
	ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
	[ -n "$ver" ] || return 1
	echo "$pkg $ver recipe $(cat "$here/guest-build.sh" "$here/guest-init.sh" | cksum | cut -d' ' -f1)"
}

if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
	if [ -s "$G/vmlinux" ] && [ -s "$G/initrd.gz" ]; then
		echo "$G"
		exit 0
	fi
	say "skip: the guest is built from Debian's packages (apt-get, dpkg-deb), which this machine lacks"
	exit 77
fi
want=$(candidate || true)
if [ -z "$want" ] && [ "$(id -u)" = 0 ]; then
	# A fresh machine may have empty package lists.
	apt-get update -q >/dev/null 2>&1 || true
	want=$(candidate || true)
fi
have=$(cat "$G/version" 2>/dev/null || true)
if [ -s "$G/vmlinux" ] && [ -s "$G/initrd.gz" ] && { [ -z "$want" ] || [ "$want" = "$have" ]; }; then
	echo "$G"
	exit 0
fi
[ -n "$want" ] || die "no package lists name linux-image-amd64 (run apt-get update) and no cached guest in $G"

set -- $want
pkg=$1 ver=$2
say "building the guest from $pkg $ver"
for t in busybox xz objcopy; do
	command -v "$t" >/dev/null || die "$t is missing (make deps installs it)"
done

work=$G/work
rm -rf "$work" && mkdir -p "$work/dl" "$work/pkg" "$work/root"
(cd "$work/dl" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
	die "apt-get download $pkg=$ver failed"
dpkg-deb -x "$work"/dl/*.deb "$work/pkg"

# vmlinux: the xz stream inside the bzImage (Debian builds CONFIG_KERNEL_XZ).
vmlinuz=$(ls "$work"/pkg/boot/vmlinuz-* | head -1)
off=$(LC_ALL=C grep -obUa "$(printf '\3757zXZ')" "$vmlinuz" | head -1 | cut -d: -f1)
[ -n "$off" ] || die "no xz payload in $vmlinuz"
# xz stops at the end of its stream and complains about what follows it.
tail -c +$((off + 1)) "$vmlinuz" | xz -dcq >"$work/vmlinux" 2>/dev/null || true
[ "$(head -c 4 "$work/vmlinux" | od -An -c | tr -d ' ')" = "177ELF" ] ||
	die "the payload of $vmlinuz did not decompress to an ELF kernel"
grep -q '^CONFIG_PVH=y' "$work"/pkg/boot/config-* || die "$pkg has no PVH entry (CONFIG_PVH)"

# Modules in load order, dependencies first.
kver=$(ls "$work/pkg/lib/modules")
mdir=$work/pkg/lib/modules/$kver
R=$work/root
mkdir -p "$R/bb" "$R/modules"
: >"$R/modules/order"
add_mod() {
	grep -qx "$1" "$R/modules/order" && return 0
	f=$(find "$mdir" -name "$1.ko" | head -1)
	[ -n "$f" ] || {
		grep -q "/$1.ko\$" "$mdir/modules.builtin" 2>/dev/null && return 0
		die "module $1 is not in $pkg"
	}
	deps=$(objcopy -O binary --only-section=.modinfo "$f" /dev/stdout | tr '\0' '\n' |
		sed -n 's/^depends=//p' | tr ',' ' ')
	for d in $deps; do add_mod "$d"; done
	# sh has no local variables: the recursion overwrote f.
	f=$(find "$mdir" -name "$1.ko" | head -1)
	cp "$f" "$R/modules/"
	echo "$1" >>"$R/modules/order"
}
for m in $MODS; do add_mod "$m"; done

cp "$(command -v busybox)" "$R/bb/busybox"
cp "$here/guest-init.sh" "$R/init"
chmod 755 "$R/init"
(cd "$R" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$work/initrd.gz")

mv "$work/vmlinux" "$G/vmlinux"
mv "$work/initrd.gz" "$G/initrd.gz"
echo "$kver" >"$G/kernel-release"
echo "$want" >"$G/version"
nmods=$(wc -l <"$R/modules/order")
rm -rf "$work"
say "guest ready: $kver, $nmods modules"
echo "$G"
