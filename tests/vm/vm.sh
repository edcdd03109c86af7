# Shell functions for the VM test-bed, sourced by the tests/vm/*.sh
# scenarios (POSIX sh).  One test-bed is one network namespace of ours
# holding a tap; QEMU runs inside that namespace, so the guest's NIC and
# everything the host side does (receiver, capture) live there and nothing
# outside it is touched.  The namespace is removed on exit, even on failure.
#
#   vm_init B          check QEMU, build/cache the guest (guest-build.sh)
#   vm_bed             create the namespace and its tap (VM_NS, VM_TAP)
#   vm_ns CMD...       run CMD in the namespace
#   vm_ns_bg CMD...    the same in the background, its PID in VM_BG_PID;
#                      still running at exit, it is stopped
#   vm_wait_files P... wait (10 s at most) until every P exists
#   vm_cap_start IF F  capture IF in the namespace into F (tests/progs/tapcap)
#   vm_cap_stop        stop it; tapcap's exit status (1: frames dropped)
#   vm_boot NIC RUN    boot the guest with NIC, run RUN/guest.sh inside,
#                      return its exit status (124: QEMU timed out)
#
# NIC: e1000 (QEMU's e1000, Linux's e1000 driver), e1000e, virtio (virtio-
# net, the tap with vnet_hdr) or virtio-novnet (virtio-net, tap without it).
# Guest address 10.77.0.2/24, host side 10.77.0.1/24 on the tap.
# Exit 77 from vm_init means QEMU cannot run here (the message says why).

VM_HOST_IP=10.77.0.1
VM_GUEST_IP=10.77.0.2
VM_TAP=vmtap0
VM_TIMEOUT=${VM_TIMEOUT:-120}
VM_MEM=${VM_MEM:-1024}

vm_say() { echo "vm: $*" >&2; }

vm_init() {
	VM_B=$(cd "$1" && pwd)
	VM_REPO=$(cd "${VM_REPO:-$(dirname "$0")/../..}" && pwd)
	VM_QEMU=$(command -v qemu-system-x86_64 || true)
	if [ -z "$VM_QEMU" ]; then
		vm_say "skip: qemu-system-x86_64 is not installed (make deps installs qemu-system-x86)"
		exit 77
	fi
	if [ "$(id -u)" != 0 ]; then
		vm_say "skip: the VM test-bed needs root (a namespace and a tap)"
		exit 77
	fi
	[ -r /dev/net/tun ] || { vm_say "skip: no /dev/net/tun"; exit 77; }
	if ! "$VM_QEMU" -accel help 2>/dev/null | grep -qx tcg; then
		vm_say "skip: $VM_QEMU does not run here or has no TCG accelerator: $("$VM_QEMU" -accel help 2>&1 | head -n 1)"
		exit 77
	fi
	VM_BIOS=/usr/share/qemu/qboot.rom
	[ -r "$VM_BIOS" ] || { vm_say "skip: $VM_BIOS is missing (qemu-system-data)"; exit 77; }
	# Tests run side by side: one builds the guest, the others wait for it.
	mkdir -p "$VM_B/vm"
	VM_GUEST=$(flock "$VM_B/vm/.guest.lock" sh "$VM_REPO/tests/vm/guest-build.sh" "$VM_B")
	case $? in 0) ;; 77) exit 77 ;; *) exit 1 ;; esac
	# KVM only where a stock kernel can run on it (kvm_intel/kvm_amd); the
	# nested PVM's /dev/kvm cannot boot one, so TCG otherwise.
	VM_ACCEL=tcg
	if [ -w /dev/kvm ] && [ -d /sys/module/kvm_intel -o -d /sys/module/kvm_amd ]; then
		VM_ACCEL=kvm
	fi
	VM_RUNS=$VM_B/vm/run
	mkdir -p "$VM_RUNS"
}

vm_cleanup() {
	for p in ${VM_QEMU_PID:-} ${VM_BG_PIDS:-}; do
		kill "$p" 2>/dev/null
	done
	[ -n "${VM_NS:-}" ] && ip netns del "$VM_NS" 2>/dev/null
	VM_NS= VM_BG_PIDS= VM_QEMU_PID=
	return 0
}

vm_bed() {
	# The tag that tests/run.sh sweeps up after a crash, and our PID.
	VM_NS=gsot${GSO_TEST_RUN_ID:-$$}-vm$$
	trap 'vm_cleanup' EXIT
	trap 'vm_cleanup; exit 130' INT TERM
	ip netns add "$VM_NS" || { vm_say "cannot create namespace $VM_NS"; VM_NS=; exit 1; }
	ip -n "$VM_NS" link set lo up
	ip -n "$VM_NS" tuntap add dev "$VM_TAP" mode tap || exit 1
	ip -n "$VM_NS" addr add "$VM_HOST_IP/24" dev "$VM_TAP"
	ip -n "$VM_NS" link set "$VM_TAP" up
}

vm_ns() { ip netns exec "$VM_NS" "$@"; }

# `ip netns exec` execs the command, so $! is the command's own PID.
vm_ns_bg() {
	ip netns exec "$VM_NS" "$@" &
	VM_BG_PID=$!
	VM_BG_PIDS="${VM_BG_PIDS:-} $VM_BG_PID"
}

vm_wait_files() {
	for _ in $(seq 100); do
		all=1
		for f in "$@"; do
			[ -e "$f" ] || all=0
		done
		[ "$all" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# Its statistics line and errors go to F.err; 1 if it did not start.
vm_cap_start() {
	rm -f "$2.ready"
	vm_ns_bg "$VM_B/tests/tapcap" --ready-file "$2.ready" -i "$1" -w "$2" 2>"$2.err"
	VM_CAP_PID=$VM_BG_PID
	vm_wait_files "$2.ready"
}

# A moment first, for the last frames in flight to reach the capture.
vm_cap_stop() {
	sleep 0.3
	kill "$VM_CAP_PID" 2>/dev/null
	wait "$VM_CAP_PID"
}

# A new run folder under the build folder (the guest sees it at the same
# path); of the older ones of the same name the newest two are kept.
vm_rundir() {
	ls -dt "$VM_RUNS/$1".* 2>/dev/null | tail -n +3 | while read -r old; do rm -rf "$old"; done
	d=$(mktemp -d "$VM_RUNS/$1.XXXXXX")
	chmod 755 "$d"
	echo "$d"
}

vm_boot() {
	nic=$1 run=$2
	case $nic in
	e1000) dev=e1000 vnet=off ;;
	e1000e) dev=e1000e vnet=off ;;
	virtio) dev=virtio-net-pci vnet=on ;;
	virtio-novnet) dev=virtio-net-pci vnet=off ;;
	*) vm_say "unknown NIC $nic"; return 2 ;;
	esac
	rm -f "$run/guest.rc"
	# romfile= : no option ROM to load (qboot does not run one anyway).
	ip netns exec "$VM_NS" timeout -k 5 "$VM_TIMEOUT" "$VM_QEMU" -accel "$VM_ACCEL" -M pc -cpu max -m "$VM_MEM" -smp 1 \
		-nodefaults -no-user-config -display none -no-reboot \
		-bios "$VM_BIOS" -kernel "$VM_GUEST/vmlinux" -initrd "$VM_GUEST/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 gsovm.run=$run gsovm.repo=$VM_REPO gsovm.build=$VM_B gsovm.addr=$VM_GUEST_IP/24 gsovm.peer=$VM_HOST_IP" \
		-serial "file:$run/console.log" \
		-netdev "tap,id=n0,ifname=$VM_TAP,script=no,downscript=no,vhost=off,vnet_hdr=$vnet" \
		-device "$dev,netdev=n0,romfile=,mac=52:54:00:77:00:02" \
		-virtfs "local,path=/usr,mount_tag=usr,security_model=none,readonly=on" \
		-virtfs "local,path=$VM_REPO,mount_tag=repo,security_model=none,readonly=on" \
		-virtfs "local,path=$VM_B,mount_tag=build,security_model=none" \
		</dev/null >"$run/qemu.log" 2>&1 &
	VM_QEMU_PID=$!
	wait "$VM_QEMU_PID"
	qrc=$?
	VM_QEMU_PID=
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		vm_say "QEMU ($nic) did not finish within $VM_TIMEOUT s; console:"
		tail -n 20 "$run/console.log" >&2
		return 124
	fi
	if [ ! -s "$run/guest.rc" ]; then
		vm_say "the guest ($nic) stopped without running guest.sh (QEMU exit $qrc); console and QEMU said:"
		tail -n 20 "$run/console.log" "$run/qemu.log" >&2
		return 125
	fi
	return "$(cat "$run/guest.rc")"
}
