#!/bin/sh
# bench/testbed/demo_vm.sh BUILD_DIR SECS CC OUT FIRST_INDEX -- the demo's
# optional rows over emulated NICs (make demo with DEMO_VM=1).
#
# For each NIC of DEMO_VM_NICS (default "e1000 virtio"): one QEMU guest
# (tests/vm/: Debian 12's Linux 6.1, Linux's own e1000 / virtio_net driver
# on QEMU's device model) runs the kernel TCP baseline (bench/kernel_sender)
# and bench/sender in every mode, SECS seconds each, to bench/receiver on
# the host side of the tap, which verifies every byte.  Rows are appended
# to the demo's TSV and JSON lines in OUT (bench/testbed/common/demobed.sh has the
# columns), numbered from FIRST_INDEX + 1, under a receiver heading that
# says "emulated".
#
# QEMU runs under TCG here: every guest instruction is emulated while
# QEMU's own segmentation (e1000 TSO) runs natively, so the throughput and
# CPU figures of these rows are emulation figures -- they compare modes on
# one emulated NIC, never with the rows of the veth test-bed, and say
# nothing about what TSO saves on real hardware.
set -u
B=$1 SECS=$2 CC=$3 OUT=$4 FIRST=$5
VM_REPO=$(cd "$(dirname "$0")/../.." && pwd)
export VM_REPO
# shellcheck source=tests/vm/vm.sh
. "$VM_REPO/tests/vm/vm.sh"
# say, jget and bed_row, and TSV and JSONL in OUT (no test-bed is made: TAG unused).
TAG=unused
# shellcheck source=bench/testbed/common/demobed.sh
. "$VM_REPO/bench/testbed/common/demobed.sh"
RUN=$FIRST
vm_init "$B"
B=$VM_B
SEED=20040601

modes=$("$B/bench/sender" --list-modes 2>/dev/null) || modes="software csum multibuf offload-e1000 offload-vnet auto"
[ -n "${DEMO_MODES:-}" ] && modes=$DEMO_MODES

for nic in ${DEMO_VM_NICS:-e1000 virtio}; do
	vm_bed
	run=$(vm_rundir "demo-$nic")
	rows="kernel $modes"
	i=0
	for r in $rows; do
		i=$((i + 1))
		vm_ns_bg "$B/bench/receiver" --once --json --port $((5400 + i)) --idle-timeout 30 \
			--accept-timeout $((SECS * 20 + 120)) --ready-file "$run/ready.$i" \
			--label "vm $nic: $r, $CC" >"$run/recv.$i.json" 2>"$run/recv.$i.err"
	done
	vm_wait_files $(seq -f "$run/ready.%g" "$i") || say "demo: a receiver for the $nic guest did not start" >&2
	{
		echo "set -u"
		echo "ethtool -k eth0 | awk '/^tcp-segmentation-offload/{t=\$2} /^generic-segmentation-offload/{g=\$2} END{printf \"tso %s, gso %s\", t, g}' >offload.txt"
		i=0
		for r in $rows; do
			i=$((i + 1))
			if [ "$r" = kernel ]; then
				prog="$B/bench/kernel_sender --dev eth0"
			else
				prog="$B/bench/sender --dev eth0 --mode $r"
			fi
			echo "timeout -k 5 $((SECS + 60)) $prog --dst $VM_HOST_IP --port $((5400 + i)) --time $SECS" \
				"--seed $SEED --cc $CC --json --label 'vm $nic: $r, $CC' >send.$i.json 2>send.$i.err; echo \$? >send.$i.rc"
		done
	} >"$run/guest.sh"
	say "demo: guest over $nic (QEMU TCG, Linux 6.1): kernel and $(echo "$modes" | wc -w) libgso modes, $SECS s each"
	VM_TIMEOUT=$(( (SECS + 20) * (i + 1) + 120 )) vm_boot "$nic" "$run"
	grc=$?
	[ "$grc" = 0 ] || say "demo: the $nic guest failed ($grc): $(tail -n 3 "$run/guest.log" "$run/console.log" 2>/dev/null)" >&2
	sleep 1
	vm_cleanup
	offl="$nic $(cat "$run/offload.txt" 2>/dev/null || echo "?")"
	rx="emulated: Linux 6.1 guest, QEMU $nic under TCG (emulation figures); bench/receiver on the tap's host side"
	i=0
	for r in $rows; do
		i=$((i + 1))
		RUN=$((RUN + 1))
		src_rc=$(cat "$run/send.$i.rc" 2>/dev/null || echo "-")
		# The set's header line names the NIC and says "emulation figures".
		if [ "$r" = kernel ]; then label="[vm] kernel"; else label="[vm] libgso $r"; fi
		bed_row "$label" "vm-$nic" "$offl" "$CC" "$rx" - "$run/send.$i.json" "$run/recv.$i.json" \
			"$run/send.$i.err" "$src_rc"
	done
done
