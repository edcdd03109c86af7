#!/bin/sh
# The library on the guest's kernel (Debian 12: Linux 6.1) behind one
# emulated NIC: usage: tests/vm/modes.sh BUILD NIC [BYTES]
#
# Inside the guest: gsocaps on eth0 (text and JSON) beside ethtool -k, then
# bench/sender in every mode to bench/receiver on the host side of the tap.
# On the host, checked here and not by the sender:
#   - gsocaps tells the truth: the driver is the NIC's, every offload it
#     reports equals what ethtool -k says in the guest;
#   - every mode either transfers BYTES with every byte verified by the
#     receiver, or exits 77 with a message that names what is missing
#     ("needs Linux 6.6", "needs 2 queues", ...); any other outcome fails;
#   - auto transfers; the steering program attached (generic XDP on e1000);
#   - the tap capture of each transfer (tests/progs/streamcheck): every
#     frame within the MTU (or, for virtio with vnet_hdr, super-packets
#     with partial checksums), checksums right, the sequence space covered
#     once.
# Prints one line per mode: "mode MODE: transferred ..." or "exit 77: why".
# Exit 0 all held, 1 something did not, 77 QEMU cannot run here.
set -u
B=${1:?usage: modes.sh BUILD NIC [BYTES]}
NIC=${2:?usage: modes.sh BUILD NIC [BYTES]}
BYTES=${3:-4M}
. "$(dirname "$0")/vm.sh"
vm_init "$B"
vm_bed
B=$VM_B
run=$(vm_rundir "modes-$NIC")
status=0
bad() { echo "FAIL ($NIC): $*"; status=1; }

case $NIC in
e1000) driver=e1000 mtu_opt="--mtu 1500" ;;
e1000e) driver=e1000e mtu_opt="--mtu 1500" ;;
virtio) driver=virtio_net mtu_opt="--allow-gso --partial-csum-ok" ;;
virtio-novnet) driver=virtio_net mtu_opt="--mtu 1500" ;;
esac

vm_ns_bg "$B/bench/receiver" -j -R "$run/recv.ready" -t 30 >"$run/recv.json" 2>"$run/recv.err"
rpid=$VM_BG_PID
vm_cap_start "$VM_TAP" "$run/tap.pcap" || bad "the tap capture did not start: $(tail -n 2 "$run/tap.pcap.err")"
vm_wait_files "$run/recv.ready" || bad "the receiver did not start: $(tail -n 2 "$run/recv.err")"

cat >"$run/guest.sh" <<EOF
set -u
B=$B
uname -r >kernel.txt
readlink /sys/class/net/eth0/device/driver >driver.txt
ethtool -k eth0 >ethtool-k.txt
\$B/tools/gsocaps eth0 >gsocaps.txt 2>&1
\$B/tools/gsocaps --json eth0 >gsocaps.json 2>gsocaps.err
for m in \$(\$B/bench/sender --list-modes); do
	timeout 120 \$B/bench/sender --dev eth0 --dst $VM_HOST_IP --bytes $BYTES --mode \$m -q -j -l \$m \
		>sender-\$m.json 2>sender-\$m.err
	echo \$? >sender-\$m.rc
done
EOF
VM_TIMEOUT=${VM_TIMEOUT:-240} vm_boot "$NIC" "$run"
grc=$?
vm_cap_stop
crc=$?
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
[ "$grc" = 0 ] || { bad "the guest script failed ($grc)"; tail -n 20 "$run/guest.log"; exit 1; }
[ "$crc" = 0 ] || bad "the tap capture failed or dropped frames: $(tail -n 3 "$run/tap.pcap.err")"

# jget FILE KEY, the demo's reader of the programs' JSON lines (nothing else
# of bench/testbed/common/demobed.sh is used here: it makes no test-bed when sourced).
TAG=unused OUT=$run
# shellcheck source=bench/testbed/common/demobed.sh
. "$VM_REPO/bench/testbed/common/demobed.sh"

kern=$(cat "$run/kernel.txt")
echo "guest: Linux $kern, NIC $NIC, driver $(basename "$(cat "$run/driver.txt")")"
case $kern in 6.1.*) ;; *) bad "the guest runs $kern, not Debian 12's 6.1" ;; esac
[ "$(basename "$(cat "$run/driver.txt")")" = "$driver" ] || bad "eth0 is driven by $(cat "$run/driver.txt"), not $driver"

# gsocaps against ethtool -k: every feature gsocaps names, on/off alike.
gdrv=$(sed -n 's/.*"driver":"\([^"]*\)".*/\1/p' "$run/gsocaps.json")
[ "$gdrv" = "$driver" ] || bad "gsocaps says the driver is '$gdrv', not $driver"
nfeat=0
for f in $(grep -o '"[a-z0-9-]*":{"active":\(true\|false\)' "$run/gsocaps.json" | sed 's/"\([^"]*\)":{"active":\(.*\)/\1=\2/'); do
	name=${f%=*} val=${f#*=}
	# ethtool -k prints four of them by their long names.
	case $name in
	tx-generic-segmentation) ename=generic-segmentation-offload ;;
	rx-gro) ename=generic-receive-offload ;;
	rx-lro) ename=large-receive-offload ;;
	rx-checksum) ename=rx-checksumming ;;
	*) ename=$name ;;
	esac
	eth=$(awk -v n="$ename:" '$1 == n { print $2 }' "$run/ethtool-k.txt")
	[ -n "$eth" ] || { bad "ethtool -k has no $name"; continue; }
	case "$val/$eth" in true/on | false/off) nfeat=$((nfeat + 1)) ;;
	*) bad "gsocaps says $name active=$val, ethtool -k says $eth" ;;
	esac
done
[ "$nfeat" -ge 16 ] || bad "only $nfeat features compared"
echo "gsocaps: driver $gdrv, $nfeat offloads equal to ethtool -k"

for rcf in "$run"/sender-*.rc; do
	m=$(basename "$rcf" .rc)
	m=${m#sender-}
	rc=$(cat "$rcf")
	js=$run/sender-$m.json
	case $rc in
	0)
		sport=$(jget "$js" sport)
		rl=$(grep "\"peer\": \"[^\"]*:$sport\"" "$run/recv.json")
		if [ -z "$rl" ]; then
			bad "mode $m: exit 0 but the receiver saw no connection from port $sport"
			continue
		fi
		echo "$rl" >"$run/recv-$m.json"
		[ "$(jget "$run/recv-$m.json" verified)" = true ] || bad "mode $m: receiver did not verify: $rl"
		# The tap capture of this connection, checked independently.
		if "$B/tests/streamcheck" --port "$sport" $mtu_opt "$run/tap.pcap" >"$run/check-$m.txt" 2>&1; then
			chk=$(tail -n 1 "$run/check-$m.txt" | tr ' ' '\n' | grep -E \
				'^(data_frames|ipv4_csum_errors|tcp_csum_errors|tcp_csum_partial|covered_bytes|retrans_bytes|gaps)=' |
				tr '\n' ' ')
		else
			bad "mode $m: the tap capture does not check: $(tail -n 5 "$run/check-$m.txt")"
			chk=failed
		fi
		echo "mode $m: transferred $(jget "$run/recv-$m.json" bytes_verified) bytes verified," \
			"device $(jget "$js" device), steering $(jget "$js" steer_xdp_mode) XDP; tap: $chk"
		;;
	77)
		why=$(sed -n 's/^sender: //p' "$run/sender-$m.err" | head -n 1)
		echo "mode $m: exit 77: $why"
		echo "$why" | grep -Eq 'needs (Linux [0-9]|[0-9]+ queues)' ||
			bad "mode $m: exit 77 without naming what is missing: $why"
		;;
	*)
		bad "mode $m: exit $rc: $(tail -n 3 "$run/sender-$m.err")"
		;;
	esac
done
[ "$(cat "$run/sender-auto.rc" 2>/dev/null)" = 0 ] || bad "auto did not pick a working path"
echo "tap capture: $(tail -n 1 "$run/tap.pcap.err" 2>/dev/null)"
sw=$run/sender-software.json
if [ "$driver" = e1000 ] && [ -s "$sw" ]; then
	[ "$(jget "$sw" steer_xdp_mode)" = generic ] || bad "steering on e1000 is not generic XDP"
fi
[ "$status" = 0 ] && echo "ok: $NIC ($run)" || echo "failed: $NIC ($run)"
exit $status
