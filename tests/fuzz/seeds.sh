#!/bin/sh
# Writes the seed inputs of fuzz_icmp_err, fuzz_tcp_rx and fuzz_rtnl into
# tests/fuzz/corpus/<target>/ from the hex below: a few small, valid
# inputs each, laid out as the target's opening comment says.  The
# checked-in files are its output; run it again after editing a seed.
# (The ICMP seeds carry zero sums: their first byte, 03, has the target
# make them right.)
set -eu
cd "$(dirname "$0")/corpus"

# seed TARGET NAME HEX...: the bytes, through printf's octal escapes.
seed() {
	t=$1 name=$2
	shift 2
	mkdir -p "$t"
	printf "$(echo "$*" | awk '{
		for (i = 1; i <= NF; i++)
			printf "\\%03o", (index("0123456789abcdef", substr($i, 1, 1)) - 1) * 16 + \
				index("0123456789abcdef", substr($i, 2, 1)) - 1
	}')" >"$t/$name"
}

ETH="02 00 00 00 00 01 02 00 00 00 00 02"
TAG="81 00 00 7b"
OUR6="fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01"
PEER6="20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 07"
RTR6="fd 00 00 00 00 00 00 09 00 00 00 00 00 00 00 fe"

# fuzz_icmp_err: sums-fix byte, then the frame.  A router (10.0.9.254,
# fd00::9:0:0:fe) reports MTU 1400 (or 0) about our 1500-byte packet from
# 10.0.0.1:40000 (fd00::1) to 192.0.2.7:443 (2001:db8::7).
Q4="45 00 05 dc 00 00 40 00 01"
seed fuzz_icmp_err v4_tcp 03 $ETH 08 00 \
	45 00 00 38 00 00 00 00 40 01 00 00 0a 00 09 fe 0a 00 00 01 \
	03 04 00 00 00 00 05 78 \
	$Q4 06 12 34 0a 00 00 01 c0 00 02 07  9c 40 01 bb 8b ad f0 0d
seed fuzz_icmp_err vlan_v4_udp_mtu0 03 $ETH $TAG 08 00 \
	45 00 00 38 00 00 00 00 40 01 00 00 0a 00 09 fe 0a 00 00 01 \
	03 04 00 00 00 00 00 00 \
	$Q4 11 12 34 0a 00 00 01 c0 00 02 07  9c 40 01 bb 05 c8 00 00
seed fuzz_icmp_err v6_udp 03 $ETH 86 dd \
	60 00 00 00 00 38 3a 40 $RTR6 $OUR6 \
	02 00 00 00 00 00 05 78 \
	60 00 00 00 05 b4 11 3f $OUR6 $PEER6  9c 40 01 bb 05 b4 00 00
seed fuzz_icmp_err vlan_v6_tcp 03 $ETH $TAG 86 dd \
	60 00 00 00 00 38 3a 40 $RTR6 $OUR6 \
	02 00 00 00 00 00 05 78 \
	60 00 00 00 05 b4 06 3f $OUR6 $PEER6  9c 40 01 bb 8b ad f0 0d

# fuzz_tcp_rx: mode 03 (rcv_nxt and snd_una at the segment's numbers:
# distance 0), then (P) rcv_wnd 65536, snd_una distance 0, 4096 in flight,
# max_wnd 65536, a start time of 1 s and steps of 0.5 s, 0.1 s, 10 ms, 0;
# then the frame.
P="00 00 01 00 00 00 00 00 00 10 00 00 00 00 01 00 00 ca 9a 3b 50 c3 10 27 e8 03 00 00"
seed fuzz_tcp_rx v4_syn_opts 03 00 00 00 00 $P $ETH 08 00 \
	45 00 00 3c 00 00 40 00 40 06 00 00 c0 00 02 07 0a 00 00 01 \
	01 bb 9c 40 00 00 10 00 00 00 00 00 a0 02 fa f0 00 00 00 00 \
	02 04 05 b4 04 02 08 0a 00 00 00 01 00 00 00 00 01 03 03 07
seed fuzz_tcp_rx vlan_v6_ts_sack_data 03 00 00 00 00 $P $ETH $TAG 86 dd \
	60 00 00 00 00 39 06 40 $PEER6 $OUR6 \
	01 bb 9c 40 00 00 20 00 00 00 30 00 d0 18 01 f5 00 00 00 00 \
	01 01 08 0a 00 00 00 05 00 00 00 01 01 01 05 12 \
	00 00 21 00 00 00 22 00 00 00 23 00 00 00 24 00 \
	68 65 6c 6c 6f
seed fuzz_tcp_rx v4_rst 03 00 00 00 00 $P $ETH 08 00 \
	45 00 00 28 00 00 40 00 40 06 00 00 c0 00 02 07 0a 00 00 01 \
	01 bb 9c 40 00 00 10 00 00 00 00 00 50 04 00 00 00 00 00 00

# fuzz_rtnl: address-length byte (00: IPv4, 01: IPv6), then netlink
# messages, little-endian.  A link with its MTU and a reachable IPv4
# neighbour in one buffer; an IPv6 neighbour deleted; route answers of
# both families (table, interface, gateway, source, MTU metric).
seed fuzz_rtnl link_and_neigh4 00 \
	28 00 00 00 10 00 00 00 00 00 00 00 00 00 00 00 \
	00 00 01 00 02 00 00 00 43 10 01 00 ff ff ff ff  08 00 04 00 dc 05 00 00 \
	30 00 00 00 1c 00 00 00 00 00 00 00 00 00 00 00 \
	02 00 00 00 02 00 00 00 02 00 00 01 \
	08 00 01 00 0a 00 00 02  0a 00 02 00 02 00 00 00 00 07 00 00
seed fuzz_rtnl neigh6_gone 01 \
	30 00 00 00 1d 00 00 00 00 00 00 00 00 00 00 00 \
	0a 00 00 00 02 00 00 00 20 00 00 01  14 00 01 00 $PEER6
seed fuzz_rtnl route4 00 \
	48 00 00 00 18 00 00 00 01 00 00 00 00 00 00 00 \
	02 20 00 00 fe 02 00 01 00 10 00 00 \
	08 00 0f 00 fe 00 00 00  08 00 04 00 02 00 00 00 \
	08 00 05 00 0a 00 00 fe  08 00 07 00 0a 00 00 01 \
	0c 00 08 00 08 00 02 00 dc 05 00 00
seed fuzz_rtnl route6 01 \
	4c 00 00 00 18 00 00 00 01 00 00 00 00 00 00 00 \
	0a 80 00 00 fe 02 00 01 00 10 00 00 \
	08 00 04 00 03 00 00 00 \
	14 00 05 00 fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 01 \
	14 00 07 00 $OUR6
