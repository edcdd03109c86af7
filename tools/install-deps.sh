#!/bin/sh
# Install the Debian packages libgso needs to build and test, when missing.
# Run by `make check` and `make demo`; safe to run again.  On a machine
# without dpkg (not Debian or Ubuntu) it installs nothing: it checks that
# the commands and libraries are there, and says what is missing if not.
set -eu

PKGS="gcc g++ make clang llvm pkg-config libc6-dev linux-libc-dev
libcriterion-dev libpcap-dev libxdp-dev libbpf-dev libelf-dev zlib1g-dev
liburing-dev libclang-rt-14-dev iproute2 ethtool procps gnuplot-nox"
# The VM test-bed (tests/vm/): QEMU, its qboot firmware, the guest's shell;
# xz and objcopy unpack the guest kernel package and read its modules.
PKGS="$PKGS qemu-system-x86 qemu-system-data busybox-static xz-utils binutils"
# The HTTP tests and bench (tests/integration/test_httpd.c, bench/bench_httpd.sh):
# clients, and nginx as the reference server.
PKGS="$PKGS curl wget wrk nginx-light"
# gsoquicd (HTTP/3: ngtcp2, nghttp3, GnuTLS; the Makefile skips it without
# them) and the stock QUIC client and server its tests run against;
# openssl makes the tests' self-signed certificate.
PKGS="$PKGS libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libgnutls28-dev"
PKGS="$PKGS ngtcp2-client ngtcp2-server openssl"
PKGS="$PKGS ${GSO_EXTRA_PKGS:-}"

# Elsewhere: what the build and the tests run, and the libraries they link,
# by the names every distribution shares (commands, pkg-config modules).
# GSO_EXTRA_PKGS are Debian names of optional extras (make bench says when
# one is absent), so they are not looked for here.
if ! command -v dpkg-query >/dev/null 2>&1; then
	cmds="" mods=""
	# Not QEMU, busybox, xz or objcopy: only the VM test-bed uses them, and it
	# builds its guest from Debian packages, so it skips here anyway.
	for c in gcc g++ clang clang++ make pkg-config ip ethtool; do
		command -v "$c" >/dev/null 2>&1 || cmds="$cmds $c"
	done
	if command -v pkg-config >/dev/null 2>&1; then
		for m in libxdp libbpf liburing criterion libpcap libelf zlib; do
			pkg-config --exists "$m" || mods="$mods $m"
		done
	fi
	[ -z "$cmds$mods" ] && exit 0
	[ -n "$cmds" ] && echo "libgso: missing commands:$cmds" >&2
	[ -n "$mods" ] && echo "libgso: missing libraries (pkg-config modules):$mods" >&2
	echo "libgso: this script installs packages only on Debian/Ubuntu (apt);" \
		"install those with your system's package manager" >&2
	exit 1
fi

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

# Installing nginx starts its service, listening on the host's port 80.  A
# policy-rc.d that answers 101 ("action forbidden") stops invoke-rc.d from
# starting any service during the install; ours is temporary and made only
# when the machine has none of its own (a container's stays as it was).
# nginx processes that still appear (a service manager that ignores the
# policy) were started by this install and are stopped: by the PIDs seen
# after it that were not there before it, never by name.
policy=/usr/sbin/policy-rc.d
made_policy=""
nginx_pids() {
	for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = nginx ] && printf ' %s' "${d#/proc/}"
	done
	return 0
}
nginx_before=$(nginx_pids)
restore() {
	if [ -n "$made_policy" ]; then
		rm -f "$policy"
		made_policy=""
	fi
}
trap restore EXIT
trap 'restore; exit 130' INT TERM
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# libgso install-deps: no service starts during this install\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	made_policy=1
fi
# A fresh machine may have empty package lists.
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
restore
new=""
for p in $(nginx_pids); do
	case "$nginx_before " in
	*" $p "*) ;;
	*) new="$new $p" ;;
	esac
done
if [ -n "$new" ]; then
	echo "libgso: stopping the nginx the install started (PIDs$new)"
	# shellcheck disable=SC2086
	kill $new 2>/dev/null || true
	sleep 1
	# shellcheck disable=SC2086
	kill -9 $new 2>/dev/null || true
fi
