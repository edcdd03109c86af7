#!/bin/sh
# One table, four implementations of TCP segmentation, byte for byte:
# usage: tests/vm/conformance.sh BUILD [RANDOM]
#
#   libgso        conftool expect: libgso's software GSO (IPv4 ID +1 per frame)
#   kernel        Linux's software GSO (this host's kernel): conftool send
#                 --backend kernel on a veth with tso off, captured on its peer
#   e1000-model   the project's e1000 model: conftool send --backend e1000 on
#                 the same veth, captured on the peer
#   guest-e1000   the guest (Linux 6.1) over QEMU's e1000: conftool send
#                 --backend vnet on its eth0, captured on the host side of the
#                 tap.  TCPv4 is segmented by QEMU's e1000 model, driven by
#                 Linux's e1000 driver (TSO); TCPv6 by Linux 6.1's own
#                 software GSO (e1000 has no TSO6), a second kernel beside
#                 this host's.
#
# TCPv6 through a device model is not to be had from Debian 12's QEMU
# (7.2): e1000e's driver offers TSO6, but QEMU 7.2's e1000e, with a peer
# that takes no virtio_net_hdr, cuts a TSO packet into IP fragments (DF
# set, MF on all but the last) instead of TCP segments; virtio-net
# segments nothing itself.
#
# The cases are the conformance test's boundary table and RANDOM (default
# 150) random ones from a seed that is printed (GSO_CONFORMANCE_SEED sets
# it), TCP only (e1000 does no UDP segmentation), those that fit MTU 4000
# (e1000 takes jumbo frames; the e1000 model at most 4078).  Everything runs in the test-bed's namespace:
# the veth is made there too.  Exit 0 when every row has zero mismatches,
# missing and extra frames (conftool compare --help: what it tolerates).
set -u
B=${1:?usage: conformance.sh BUILD [RANDOM]}
RANDOM_CASES=${2:-150}
. "$(dirname "$0")/vm.sh"
vm_init "$B"
vm_bed
B=$VM_B
T=$B/tests/conftool
run=$(vm_rundir conformance)
SEED=${GSO_CONFORMANCE_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
MTU=4000
CASES="--seed $SEED --random $RANDOM_CASES --mtu $MTU --proto tcp4,tcp6"
echo "conformance: seed $SEED (GSO_CONFORMANCE_SEED=$SEED repeats it), table + $RANDOM_CASES random cases, TCP, MTU $MTU"
status=0
bad() { echo "FAIL: $*"; status=1; }

# Capture IF into FILE while CMD... runs; CMD's exit status.
captured() {
	cif=$1 cfile=$2
	shift 2
	vm_cap_start "$cif" "$cfile" || bad "the capture on $cif did not start: $(tail -n 2 "$cfile.err")"
	"$@"
	crc=$?
	vm_cap_stop || bad "capture on $cif: $(tail -n 2 "$cfile.err")"
	return $crc
}

# The host's kernel and the e1000 model, on a veth inside the namespace.
vm_ns ip link add cfa mtu $MTU type veth peer name cfb mtu $MTU
vm_ns ip link set cfa up
vm_ns ip link set cfb up
vm_ns ip link set "$VM_TAP" mtu $MTU
vm_ns ethtool -K cfa tso off gso on tx off >/dev/null 2>&1
vm_ns ethtool -K cfb gro off >/dev/null 2>&1
for be in kernel e1000; do
	captured cfb "$run/$be.pcap" vm_ns "$T" send --backend "$be" --ifname cfa $CASES >"$run/send-$be.txt" 2>&1 ||
		bad "conftool send --backend $be: $(tail -n 3 "$run/send-$be.txt")"
done
"$T" expect $CASES "$run/expected.pcap" 2>"$run/expect.txt" || bad "conftool expect failed"

# The guest: the cases through Linux's driver and QEMU's device model.
cat >"$run/guest.sh" <<EOF
ip link set eth0 mtu $MTU
# e1000 resets itself for a new MTU and negotiates the link again: what is
# sent before the host answers would be lost.
for i in \$(seq 50); do ping -c 1 -W 1 $VM_HOST_IP >/dev/null 2>&1 && break; sleep 0.1; done
ethtool -k eth0 | grep -E 'tcp6?-segmentation:' >offloads.txt
ethtool -S eth0 > stats-before.txt
$T send --backend vnet --ifname eth0 $CASES >send-guest.txt 2>&1
ethtool -S eth0 > stats-after.txt
EOF
captured "$VM_TAP" "$run/guest-e1000.pcap" vm_boot e1000 "$run" ||
	bad "the guest failed: $(tail -n 3 "$run/send-guest.txt" "$run/guest.log" 2>/dev/null)"
# tx_tcp_seg_good rises when the driver handed TSO work to the device
# (a sign, not a count: QEMU's e1000 adds to it per frame of a TSO packet).
seg=$(awk '$1 == "tx_tcp_seg_good:" { print $2 }' "$run/stats-after.txt" 2>/dev/null)
seg0=$(awk '$1 == "tx_tcp_seg_good:" { print $2 }' "$run/stats-before.txt" 2>/dev/null)
echo "guest e1000: $(tr -s ' \t\n' ' ' <"$run/offloads.txt" 2>/dev/null); tx_tcp_seg_good +$((${seg:-0} - ${seg0:-0}))"
[ "${seg:-0}" -gt "${seg0:-0}" ] || bad "the guest's e1000 counted no TSO (tx_tcp_seg_good)"
grep -q 'tx-tcp-segmentation: on' "$run/offloads.txt" 2>/dev/null ||
	bad "the guest's e1000 does not offer TSO: the TCPv4 rows are not through the device"

"$T" compare "$run/expected.pcap" kernel="$run/kernel.pcap" e1000-model="$run/e1000.pcap" \
	guest-e1000="$run/guest-e1000.pcap" || bad "a difference in the table"
[ "$status" = 0 ] && echo "ok: four implementations agree (seed $SEED; $run)" || echo "failed (seed $SEED; $run)"
exit $status
