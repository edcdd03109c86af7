#!/bin/sh
# Install the Debian packages libgso needs to build and test, when missing.
# Run by `make check` and `make demo`; safe to run again.
set -eu

PKGS="gcc g++ make clang llvm pkg-config libc6-dev linux-libc-dev
libcriterion-dev libpcap-dev libxdp-dev libbpf-dev libelf-dev zlib1g-dev
liburing-dev libclang-rt-14-dev iproute2 ethtool procps gnuplot-nox"
# The VM test-bed (tests/vm/): QEMU, its qboot firmware, the guest's shell;
# xz and objcopy unpack the guest kernel package and read its modules.
PKGS="$PKGS qemu-system-x86 qemu-system-data busybox-static xz-utils binutils"
PKGS="$PKGS ${GSO_EXTRA_PKGS:-}"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "libgso: missing Debian packages:$missing" >&2
	echo "libgso: run 'make check' as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "libgso: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists.
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
